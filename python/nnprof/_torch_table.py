"""Internal: the ``key_averages()`` table of :mod:`nnprof.torch`, from the C library's
operator table (``nnp_op_table``: per op name, count, inclusive and self time, FLOPs,
memory), printed the way torch.profiler prints its own (torch/autograd/profiler_util.py,
``_build_table``): the same columns, units and sort keys, so a user reads it the same.
"""

import ctypes
import json

from . import _lib, _session, errors

# torch's sort keys and the row field each one sorts by.
SORT_KEYS = {
    "self_cpu_time_total": "self_cpu_time_total",
    "cpu_time_total": "cpu_time_total",
    "cpu_time": "cpu_time",
    "count": "count",
    "cpu_memory_usage": "cpu_memory_usage",
    "self_cpu_memory_usage": "self_cpu_memory_usage",
    "flops": "flops",
}


class OpAverage:  # pylint: disable=too-many-instance-attributes,too-few-public-methods
    """One row: the averages of an op name, with torch's ``FunctionEventAvg`` field names.
    Times are in microseconds, memory in bytes."""

    def __init__(self, row):
        self.key = row["name"]
        self.kind = row["kind"]
        self.count = row["count"]
        self.cpu_time_total = row["total_ns"] / 1e3
        self.self_cpu_time_total = row["self_ns"] / 1e3
        self.cpu_time = self.cpu_time_total / self.count if self.count else 0.0
        self.self_cpu_time = self.self_cpu_time_total / self.count if self.count else 0.0
        self.cpu_time_min = row["min_ns"] / 1e3
        self.cpu_time_max = row["max_ns"] / 1e3
        self.flops = row["flops"]
        self.cpu_memory_usage = row["mem_bytes"]
        self.self_cpu_memory_usage = row["self_mem_bytes"]
        self.input_shapes = row.get("input_shapes", "")
        self.stack = filter_stack(row.get("stack", ""))
        self.self_us_whole = row.get("self_us_whole", 0)

    def add(self, other):
        """Adds other's calls, times, FLOPs and memory to this row's sums (not its
        minimum, maximum or averages)."""
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.flops += other.flops
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.self_us_whole += other.self_us_whole

    def __repr__(self):
        return (f"<OpAverage key={self.key!r} count={self.count} "
                f"self_cpu_time_total={self.self_cpu_time_total:.3f}us "
                f"cpu_time_total={self.cpu_time_total:.3f}us>")


# The frames torch.profiler leaves out of an event's stack (torch/autograd/profiler_util.py,
# _filter_stack_entry): (file part, function part) both in the frame's text.
_FILTERED_FRAMES = (
    ("autograd/__init__", "_make_grads"),
    ("autograd/__init__", "backward"),
    ("torch/tensor", "backward"),
    ("_internal/common_utils", "prof_callable"),
    ("_internal/common_utils", "prof_func_call"),
    ("_internal/common_utils", "prof_meth_call"),
)

# Stack lines torch's table prints per row, and its widest "Source Location" column.
MAX_STACK_ENTRY = 5
MAX_SRC_COLUMN_WIDTH = 75


def filter_stack(text):
    """Our stack text (frames innermost first, one per line) -> torch's event.stack: the
    list of frames, less the ones torch filters out."""
    if not text:
        return []
    return [f for f in text.split("\n")
            if all(not (a in f and b in f) for a, b in _FILTERED_FRAMES)]


def _trim_path(path, width):
    """torch's trim_path: the end of a long frame, "..." in front."""
    if len(path) > width:
        path = path[len(path) - width:]
        if len(path) > 3:
            path = "..." + path[3:]
    return path


def _merge(rows, n):
    """Rows of one name (and shapes) with the same first n frames, summed into one, as
    torch's key_averages(group_by_stack_n=n) groups its events."""
    out = {}
    for r in rows:
        key = (r.key, r.kind, r.input_shapes, tuple(r.stack[:n]))
        m = out.get(key)
        if m is None:
            r.stack = r.stack[:n]
            out[key] = r
            continue
        m.add(r)
        m.cpu_time_min = min(m.cpu_time_min, r.cpu_time_min)
        m.cpu_time_max = max(m.cpu_time_max, r.cpu_time_max)
    for m in out.values():
        m.cpu_time = m.cpu_time_total / m.count if m.count else 0.0
        m.self_cpu_time = m.self_cpu_time_total / m.count if m.count else 0.0
    return sorted(out.values(), key=lambda r: -r.self_cpu_time_total)


def _format_time(us):
    """torch's _format_time: us -> "1.234s" / "12.345ms" / "7.000us"."""
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _format_memory(nbytes):
    """torch's _format_memory: bytes -> "1.50 Mb" / "12 b"."""
    kb, mb, gb = 1024, 1024 * 1024, 1024 * 1024 * 1024
    if abs(nbytes) >= gb:
        return f"{nbytes / gb:.2f} Gb"
    if abs(nbytes) >= mb:
        return f"{nbytes / mb:.2f} Mb"
    if abs(nbytes) >= kb:
        return f"{nbytes / kb:.2f} Kb"
    return f"{nbytes} b"


def _shapes_text(shapes):
    """Our "32,784;784,128" -> torch's "[[32, 784], [784, 128]]"."""
    if not shapes:
        return "[]"
    return "[" + ", ".join("[" + ", ".join(f.split(",")) + "]" if f else "[]"
                           for f in shapes.split(";")) + "]"


class KeyAverages(list):
    """A list of :class:`OpAverage`, as torch's ``EventList`` of averages, with
    :meth:`table`."""

    def __init__(self, rows, by_shapes=False, with_memory=False, with_flops=False):
        super().__init__(rows)
        self.by_shapes = by_shapes
        self.with_memory = with_memory
        self.with_flops = with_flops

    def self_cpu_time_total(self):
        """Sum of the self times (us), torch's "Self CPU time total"."""
        return sum(r.self_cpu_time_total for r in self)

    def total_average(self):
        """One row summing every row (torch's EventList.total_average)."""
        total = OpAverage({"name": "Total", "kind": "op", "count": 0, "total_ns": 0,
                           "self_ns": 0, "min_ns": 0, "max_ns": 0, "flops": 0,
                           "mem_bytes": 0, "self_mem_bytes": 0})
        for r in self:
            total.add(r)
        total.cpu_time = total.cpu_time_total / total.count if total.count else 0.0
        return total

    def table(self, sort_by=None, row_limit=100, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        """The table torch.profiler prints: Name, Self CPU %, Self CPU, CPU total %, CPU
        total, CPU time avg, [CPU Mem, Self CPU Mem], # of Calls, [Input Shapes],
        [Total MFLOPs]. ``sort_by`` is one of torch's keys ("self_cpu_time_total",
        "cpu_time_total", "cpu_time", "count", "cpu_memory_usage",
        "self_cpu_memory_usage", "flops"); ``row_limit`` < 0 means every row."""
        del top_level_events_only  # every row here is an op name, as torch's averages
        rows = list(self)
        if sort_by is not None:
            if sort_by not in SORT_KEYS:
                raise ValueError(f"sort_by must be one of {sorted(SORT_KEYS)}, not {sort_by!r}")
            rows.sort(key=lambda r: getattr(r, SORT_KEYS[sort_by]), reverse=True)
        if row_limit is not None and row_limit >= 0:
            rows = rows[:row_limit]
        self_total = self.self_cpu_time_total() or 1.0
        name_w = min(max_name_column_width, max([len("Name")] + [len(r.key) for r in rows]))
        cols = [("Name", name_w)]
        cols += [(h, 12) for h in ("Self CPU %", "Self CPU", "CPU total %", "CPU total",
                                   "CPU time avg")]
        if self.with_memory:
            cols += [("CPU Mem", 12), ("Self CPU Mem", 12)]
        cols.append(("# of Calls", 12))
        if self.by_shapes:
            shapes_w = min(max_shapes_column_width,
                           max([len("Input Shapes")] +
                               [len(_shapes_text(r.input_shapes)) for r in rows]))
            cols.append(("Input Shapes", shapes_w))
        if self.with_flops:
            cols.append(("Total MFLOPs", 12))
        stacks = [r.stack for r in rows if r.stack]
        src_w = min(MAX_SRC_COLUMN_WIDTH, max(len(f) for st in stacks for f in st) + 4) \
            if stacks else 0
        if stacks:
            cols.append(("Source Location", src_w))
        line = "  ".join("-" * w for _, w in cols)
        out = []
        if header:
            out.append("=" * len(line))
            out.append(header)
        out.append(line)
        out.append("  ".join(h.rjust(w) for h, w in cols))
        out.append(line)
        for r in rows:
            name = r.key if len(r.key) <= name_w else r.key[:name_w - 3] + "..."
            cells = [name.rjust(name_w),
                     f"{100.0 * r.self_cpu_time_total / self_total:.2f}%",
                     _format_time(r.self_cpu_time_total),
                     f"{100.0 * r.cpu_time_total / self_total:.2f}%",
                     _format_time(r.cpu_time_total), _format_time(r.cpu_time)]
            if self.with_memory:
                cells += [_format_memory(r.cpu_memory_usage),
                          _format_memory(r.self_cpu_memory_usage)]
            cells.append(str(r.count))
            if self.by_shapes:
                text = _shapes_text(r.input_shapes)
                cells.append(text if len(text) <= shapes_w else text[:shapes_w - 3] + "...")
            if self.with_flops:
                cells.append(f"{r.flops / 1e6:.3f}" if r.flops else "--")
            if not stacks:
                out.append("  ".join(c.rjust(w) for c, (_, w) in zip(cells, cols)))
                continue
            # torch's table: the innermost frame in the row, up to 4 more below it, then an
            # empty line; the column left-aligned.
            cells.append(_trim_path(r.stack[0], src_w) if r.stack else "")
            out.append(self._stack_line(cells, cols))
            for frame in r.stack[1:MAX_STACK_ENTRY]:
                out.append(self._stack_line([""] * (len(cols) - 1) + [_trim_path(frame, src_w)],
                                            cols))
            out.append(self._stack_line([""] * len(cols), cols))
        out.append(line)
        out.append(f"Self CPU time total: {_format_time(self.self_cpu_time_total())}")
        return "\n".join(out) + "\n"

    @staticmethod
    def _stack_line(cells, cols):
        """A line of a table with a "Source Location" column (the last, left-aligned)."""
        return "  ".join(c.ljust(w) if i == len(cols) - 1 else c.rjust(w)
                         for i, (c, (_, w)) in enumerate(zip(cells, cols)))

    def __str__(self):
        return self.table()


# nnp_op_table_ex's flags (nnprof.h).
OP_TABLE_BY_SHAPES = 0x1
OP_TABLE_STEPS = 0x2
OP_TABLE_BY_STACK = 0x4


def op_table(raw_dir, step_list=None, by_shapes=False, with_steps=False, by_stack=False):
    """``nnp_op_table_ex`` of a raw directory: a list of row dicts (see nnprof.h). With
    ``with_steps`` each step is a range "ProfilerStep*", as torch.profiler lists its steps
    when it has a schedule; with ``by_stack`` a row per name and source stack."""
    aopts = _session.analyse_options(False, step_list, False)
    out = ctypes.c_void_p()
    flags = (OP_TABLE_BY_SHAPES if by_shapes else 0) | (OP_TABLE_STEPS if with_steps else 0) | \
        (OP_TABLE_BY_STACK if by_stack else 0)
    errors.check(_lib.lib.nnp_op_table_ex(_lib.encode(raw_dir), ctypes.byref(aopts), flags,
                                          ctypes.byref(out)), "nnp_op_table_ex")
    try:
        text = ctypes.string_at(out.value).decode("utf-8") if out.value else "[]"
    finally:
        _lib.lib.nnp_free(out)
    return json.loads(text)


def key_averages(raw_dir, step_list=None, group_by_input_shape=False, with_memory=False,
                 with_flops=False, with_steps=False, group_by_stack_n=0):
    """A :class:`KeyAverages` of the ops recorded in ``raw_dir`` (with ``with_steps``, the
    steps too, as "ProfilerStep*"); with ``group_by_stack_n`` > 0, a row per name and first
    n frames of the stack, which the table prints ("Source Location")."""
    rows = [OpAverage(r) for r in op_table(raw_dir, step_list, group_by_input_shape,
                                           with_steps, by_stack=group_by_stack_n > 0)]
    if group_by_stack_n > 0:
        rows = _merge(rows, group_by_stack_n)
    return KeyAverages(rows, by_shapes=group_by_input_shape, with_memory=with_memory,
                       with_flops=with_flops)


#: The metrics torch's export_stacks() takes; nnprof has CPU time only.
EXPORT_STACKS_METRICS = ("self_cpu_time_total", "self_cuda_time_total")


def export_stacks(raw_dir, path, metric, step_list=None):
    """torch's ``export_stacks(path, metric)``: a line per stack, outermost frame first,
    frames joined by ";" (spaces, ";", tabs and newlines in a frame made "_"), then the
    metric in whole microseconds: the flame graph format (flamegraph.pl). torch writes a
    line per call; here the calls of one op name and stack share a line (the same graph).
    Returns the number of lines."""
    if metric not in EXPORT_STACKS_METRICS:
        raise ValueError("metric should be one of: " + str(list(EXPORT_STACKS_METRICS)))
    rows = [OpAverage(r) for r in op_table(raw_dir, step_list, by_stack=True)]
    table = str.maketrans(" ;\t\n", "____")
    lines = 0
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            value = r.self_us_whole if metric == "self_cpu_time_total" else 0
            if r.stack and value > 0:
                f.write(";".join(e.translate(table) for e in reversed(r.stack)) +
                        f" {value}\n")
                lines += 1
    return lines
