"""nnprof.torch: automatic capture of PyTorch programs, in torch.profiler's shape and in
MindSpore's.

Every op PyTorch runs is recorded by a C++ shim (``libnnprof_torch.so``, a global
``at::RecordFunction`` callback installed only while a collection window is open): its
name, thread, autograd sequence number and forward/backward link, input shapes and
dtypes (``record_shapes``), FLOPs (``with_flops``), module path (``with_modules``);
tensor allocations and frees through c10's memory reporting (``profile_memory``);
``torch.distributed`` collectives as communication ops with their bytes and group. Users
change one import::

    import nnprof.torch as profiler          # instead of torch.profiler
    with profiler.profile(output_path="./data",
                          schedule=profiler.schedule(wait=1, warmup=1, active=3),
                          on_trace_ready=profiler.tensorboard_trace_handler("./tb"),
                          record_shapes=True, profile_memory=True) as p:
        for batch in loader:
            train_step(batch)
            p.step()
    print(p.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))

:class:`Profiler` offers MindSpore's shape on the same capture: ``Profiler(start_profile=
False)`` with ``start``/``stop``/``analyse``, and MindSpore 2.4's ``Profiler(schedule=...,
on_trace_ready=...)`` with ``step()``, :func:`analyse` and the
``<host>_<pid>_<timestamp>_ascend_ms/ASCEND_PROFILER_OUTPUT/`` layout. docs/TORCH.md
says what each flag records and how nnprof differs from torch.profiler.
"""

import datetime
import gzip
import json
import os
import shutil
import socket
import threading
import time
import warnings
import weakref

import torch
import torch.profiler

from . import _session, _torch_shim, _torch_table, log, torch_like
from .profiler import Profiler as _MsProfiler
from .torch_like import ProfilerAction, schedule

ProfilerActivity = torch.profiler.ProfilerActivity

__all__ = [
    "Profiler", "ProfilerAction", "ProfilerActivity", "analyse", "profile",
    "record_function", "schedule", "tensor_board_trace_handler",
    "tensorboard_trace_handler",
]

#: torch's own ``record_function``: a USER_SCOPE RecordFunction, which the shim records
#: as a host range (user annotation); it shows in torch.profiler too.
record_function = torch.profiler.record_function


def _refuse(what):
    """A flag nnprof cannot honour: a warning naming it (never silently ignored)."""
    msg = f"nnprof.torch: {what}"
    warnings.warn(msg, UserWarning, stacklevel=3)
    log.logger.warning("%s", msg)


def _cuda_back_end_set():
    """Whether nnprof's CUDA back end records this process's device work: the driver loads it
    at the first CUDA call from CUDA_INJECTION64_PATH (set by `nnprof run`, by hand, or by
    the back end itself when preloaded)."""
    path = os.environ.get("CUDA_INJECTION64_PATH", "")
    return os.path.basename(path).startswith("libnnprof_cuda")


def _check_flags(activities, with_stack, experimental_config, use_cuda):
    acts = set(activities or [ProfilerActivity.CPU])
    for act in acts - {ProfilerActivity.CPU}:
        if act == ProfilerActivity.CUDA and _cuda_back_end_set():
            continue  # kernels, copies, NCCL: the CUDA back end records them
        _refuse(f"activities: {act} is not recorded by the PyTorch shim (CPU ops only; "
                "device kernels come from nnprof's CUDA back end: run under `nnprof run` or "
                "set CUDA_INJECTION64_PATH to libnnprof_cuda.so before the first CUDA call); "
                "ignored")
    if with_stack and not _torch_shim.has_stacks():
        _refuse("with_stack=True: this PyTorch shim was built without Python's headers "
                "(python3-dev), so no stacks are recorded; ignored, and export_stacks() "
                "writes nothing")
    if experimental_config is not None:
        _refuse("experimental_config is not supported; ignored")
    if use_cuda:
        _refuse("use_cuda=True is not supported (CPU ops only); ignored")


def _dist_state():
    """(rank, world_size, backend) when torch.distributed is initialised, else None."""
    dist = torch.distributed
    if not dist.is_available() or not dist.is_initialized():
        return None
    return dist.get_rank(), dist.get_world_size(), str(dist.get_backend())


class _Capture:
    """The shim's configuration for one profiler's life, and the module scope hooks of
    ``with_modules``."""

    def __init__(self, record_shapes, profile_memory, with_flops, with_modules,
                 auto_steps=False, with_stack=False):
        self.cfg = _torch_shim.Config(bool(record_shapes), bool(profile_memory),
                                      bool(with_flops), bool(with_modules), bool(auto_steps), 0)
        self.with_stack = bool(with_stack)
        self._saved = None
        self._scopes = None
        self._stacks = False

    def begin(self):
        """Loads the shim and applies the configuration (before the session starts)."""
        _torch_shim.load()
        self.refresh_group()
        self._saved = _torch_shim.configure(self.cfg)
        if self.cfg.with_modules:
            self._scopes = _ModuleScopes()
            self._scopes.install()
        if self.with_stack and _torch_shim.has_stacks():
            _torch_shim.stacks_start()
            self._stacks = True

    def refresh_group(self):
        """Collectives are recorded with the default group's descriptor; it is known once
        torch.distributed is initialised (possibly after the profiler started)."""
        state = _dist_state()
        group = 0
        if state is not None:
            from . import record  # pylint: disable=import-outside-toplevel
            group = record.intern(_torch_shim.group_descriptor("default_pg", range(state[1])))
        if group != self.cfg.comm_group:
            self.cfg.comm_group = group
            if self._saved is not None:
                _torch_shim.configure(self.cfg)

    def reset_scopes(self):
        """Drops module scopes left open by a forward that raised."""
        if self._scopes is not None:
            self._scopes.reset()

    def end(self):
        """Restores the shim's previous configuration and removes the hooks."""
        if self._stacks:
            _torch_shim.stacks_stop()
            self._stacks = False
        if self._scopes is not None:
            self._scopes.remove()
            self._scopes = None
        if self._saved is not None:
            _torch_shim.configure(self._saved)
            self._saved = None


class _ModuleScopes:
    """Module paths for ``with_modules``: global forward pre/post hooks push the path of
    each module ("Net/layer1/0/conv1": the root's class name, then attribute names) to
    the shim, which names the ops run meanwhile "<path>/<op>". Costs a few microseconds
    per module call, like torch's own module tracking."""

    def __init__(self):
        self._shim = _torch_shim.load()
        self._local = threading.local()
        self._handles = {}
        self._child_names = weakref.WeakKeyDictionary()
        self._hooks = []

    def install(self):
        from torch.nn.modules import module as nn_module  # pylint: disable=import-outside-toplevel
        self._hooks = [nn_module.register_module_forward_pre_hook(self._pre),
                       nn_module.register_module_forward_hook(self._post)]

    def remove(self):
        for h in self._hooks:
            h.remove()
        self._hooks = []
        self.reset()

    def _stack(self):
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def reset(self):
        stack = self._stack()
        while stack:
            stack.pop()
            self._shim.nnp_torch_scope_pop()

    def _name_in(self, parent, child):
        names = self._child_names.get(parent)
        if names is None:
            names = self._child_names[parent] = {}
        name = names.get(id(child))
        if name is None:
            name = next((k for k, v in parent._modules.items() if v is child),  # pylint: disable=protected-access
                        type(child).__name__)
            names[id(child)] = name
        return name

    def _pre(self, module, _inputs):
        stack = self._stack()
        if stack:
            parent, parent_path = stack[-1]
            path = f"{parent_path}/{self._name_in(parent, module)}"
        else:
            path = type(module).__name__
        handle = self._handles.get(path)
        if handle is None:
            handle = self._handles[path] = self._shim.nnp_torch_scope_handle(path.encode())
        stack.append((module, path))
        self._shim.nnp_torch_scope_push(handle)

    def _post(self, module, _inputs, _output):
        stack = self._stack()
        if stack and stack[-1][0] is module:
            stack.pop()
            self._shim.nnp_torch_scope_pop()


def _worker_name():
    """torch's default worker name: "<host>_<pid>"."""
    return f"{socket.gethostname()}_{os.getpid()}"


def _write_gzip(src, dst):
    with open(src, "rb") as fin, gzip.open(dst, "wb") as fout:
        shutil.copyfileobj(fin, fout)


def export_kineto(raw_dir, path, step_list=None, metadata=None):
    """Writes the raw directory's data as a PyTorch profiler trace (Kineto JSON) at
    ``path``; gzip-compressed when ``path`` ends in ".gz" (``nnp_export_kineto``)."""
    from . import _lib, errors  # pylint: disable=import-outside-toplevel
    import ctypes  # pylint: disable=import-outside-toplevel
    path = os.fspath(path)
    aopts = _session.analyse_options(False, step_list, False)
    meta = json.dumps(metadata) if metadata else None
    target = path[:-3] + f".tmp{os.getpid()}" if path.endswith(".gz") else path
    errors.check(_lib.lib.nnp_export_kineto(_lib.encode(raw_dir), _lib.encode(target),
                                            ctypes.byref(aopts), _lib.encode(meta)),
                 "nnp_export_kineto")
    if target != path:
        try:
            _write_gzip(target, path)
        finally:
            os.unlink(target)
    return path


class profile(torch_like.profile):  # pylint: disable=invalid-name,too-many-instance-attributes
    """torch.profiler.profile over nnprof: the same arguments and methods, every op
    recorded by the shim.

    Args:
        activities: ``[ProfilerActivity.CPU]`` (default); other activities are refused
            with a warning (CPU ops only).
        schedule, on_trace_ready: as torch; only ACTIVE steps are recorded (a WARMUP step
            costs what a wait step costs). ``on_trace_ready(prof)`` runs after each cycle;
            :meth:`export_chrome_trace` and :meth:`key_averages` called from it cover
            that cycle's steps.
        record_shapes: input shapes and dtypes of every op.
        profile_memory: c10 allocations and frees (tensor memory), per op.
        with_flops: FLOPs of the ops torch computes them for (conv2d, mm, addmm, bmm,
            baddbmm, add, mul).
        with_modules: op names carry their module path ("Net/layer1/conv1/aten::conv2d").
        with_stack: the Python stack of every op, framed as torch.profiler frames its
            own ("file.py(12): forward", "nn.Module: Linear_0", builtins' repr); a
            backward op has its forward op's (:meth:`key_averages` with
            ``group_by_stack_n``, :meth:`export_stacks`). Costs a profile function call
            per Python call while the profiler lives, as torch's Python tracer does.
        experimental_config, use_cuda: refused with a warning.
        output_path: where raw data goes (``<output_path>/profiler``, default "./data").
        **options: nnprof session options (``buffer_size_kb``, ``rank_id``, ...);
            ``profile_communication`` defaults to True here (collectives are recorded as
            torch.profiler records them); ``analyse_on_exit`` (default False) runs the
            MindSpore-style analysis when the profiler stops.
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, use_cuda=None, output_path=None,
                 **options):
        # pylint: disable=redefined-outer-name,too-many-arguments,too-many-locals
        _check_flags(activities, with_stack, experimental_config, use_cuda)
        options.setdefault("profile_communication", True)
        options.setdefault("analyse_on_exit", False)
        super().__init__(schedule=schedule, on_trace_ready=on_trace_ready,
                         record_shapes=record_shapes, profile_memory=profile_memory,
                         with_flops=with_flops, output_path=output_path, **options)
        self.activities = set(activities or [ProfilerActivity.CPU])
        self.with_modules = bool(with_modules)
        self.with_stack = bool(with_stack) and _torch_shim.has_stacks()
        self._capture = _Capture(record_shapes, profile_memory, with_flops, with_modules,
                                 with_stack=self.with_stack)
        self._metadata = {}
        self._cycle_view = None  # steps of the cycle on_trace_ready is called for
        self._last_raw_dir = None

    # ---- lifecycle ----

    def start(self):
        """Loads the shim, configures it, creates the session and enters step 0."""
        self._capture.begin()
        state = _dist_state()
        if state is not None and "RANK_ID" not in os.environ:
            self._options.setdefault("rank_id", state[0])
            self._options.setdefault("rank_size", state[1])
        try:
            super().start()
        except BaseException:
            self._capture.end()
            raise
        self._last_raw_dir = self.raw_dir

    def step(self):
        """Signals the end of a step (as torch.profiler's ``step``)."""
        self._capture.reset_scopes()
        self._capture.refresh_group()
        super().step()

    def stop(self):
        """Closes an open window (calling ``on_trace_ready``) and releases the session;
        the data stays readable (:meth:`key_averages`, :meth:`export_chrome_trace`)."""
        try:
            super().stop()
        finally:
            self._capture.end()

    def _close_window(self, trace_ready):
        self._cycle_view = list(self.cycle_steps) or None
        try:
            super()._close_window(trace_ready)
        finally:
            self._cycle_view = None

    # ---- results ----

    def _flush(self):
        if self._session is not None and self._session.alive:
            self._session.flush()
        if not self._last_raw_dir:
            raise RuntimeError("The profiler has not recorded anything yet (call start() or "
                               "enter the with block).")
        return self._last_raw_dir

    def _steps(self):
        """The steps results cover: the cycle inside on_trace_ready, else every step."""
        steps = self._cycle_view
        return [min(steps), max(steps)] if steps else None

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """The averages per op name (:class:`~nnprof._torch_table.KeyAverages`, printed
        with ``.table(sort_by=..., row_limit=...)`` as torch prints its own), from the C
        library's op table: count, self and total time, memory, FLOPs."""
        if group_by_stack_n and not self.with_stack:
            _refuse("key_averages(group_by_stack_n=...) needs stacks (with_stack=True), "
                    "which were not recorded; grouping by name only")
            group_by_stack_n = 0
        raw = self._flush()
        steps = self._steps()
        # torch.profiler lists its steps ("ProfilerStep*") only when it has a schedule.
        return _torch_table.key_averages(raw, list(range(steps[0], steps[1] + 1))
                                         if steps else None, group_by_input_shape,
                                         with_memory=self.profile_memory,
                                         with_flops=self.with_flops,
                                         with_steps=self._has_schedule and self.record_steps,
                                         group_by_stack_n=group_by_stack_n)

    def export_chrome_trace(self, path):
        """Writes the recorded data as a PyTorch profiler trace (Kineto's format:
        traceEvents, distributedInfo, deviceProperties, ProfilerStep#N), real gzip when
        ``path`` ends in ".gz". Works during and after the ``with`` block."""
        raw = self._flush()
        steps = self._steps()
        return export_kineto(raw, path, list(range(steps[0], steps[1] + 1)) if steps else None,
                             self._metadata)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Writes the ops' stacks with their self time in the flame graph format, as
        torch's ``export_stacks`` (``metric`` "self_cpu_time_total"; nnprof records no
        device time, so "self_cuda_time_total" writes an empty file). Needs
        ``with_stack=True``."""
        if not self.with_stack:
            _refuse("export_stacks(): no stacks were recorded (with_stack=True was not "
                    "given); nothing written")
            return
        raw = self._flush()
        steps = self._steps()
        _torch_table.export_stacks(raw, path, metric,
                                   list(range(steps[0], steps[1] + 1)) if steps else None)

    def add_metadata(self, key, value):
        """Adds a string to the top level of exported traces (torch's add_metadata)."""
        self._metadata[str(key)] = str(value)

    def add_metadata_json(self, key, value):
        """Adds a JSON value to the top level of exported traces."""
        self._metadata[str(key)] = json.loads(value)


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """torch's handler: each cycle writes ``<dir_name>/<worker_name>.<ms>.pt.trace.json``
    (``.gz`` with ``use_gzip``), where TensorBoard's profiler plugin and HTA look; the
    worker name defaults to "<host>_<pid>". One file per cycle, never overwritten."""
    dir_name = os.fspath(dir_name)

    def handler_fn(prof):
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or _worker_name()
        ms = int(time.time() * 1000)
        suffix = ".pt.trace.json.gz" if use_gzip else ".pt.trace.json"
        while os.path.exists(os.path.join(dir_name, f"{worker}.{ms}{suffix}")):
            ms += 1  # two cycles in one millisecond: torch would overwrite, we do not
        prof.export_chrome_trace(os.path.join(dir_name, f"{worker}.{ms}{suffix}"))

    return handler_fn


# ---- MindSpore's shape ------------------------------------------------------------------

# Result files renamed to MindSpore >= 2.4's names in ASCEND_PROFILER_OUTPUT/ (its
# per-rank suffix dropped): what its documentation lists for that folder.
_ASCEND_MS_NAMES = ("op_statistic", "kernel_details", "memory_record", "operator_memory",
                    "step_trace_time", "dataset")


def _ascend_ms_dir(base, worker=None):
    stamp = datetime.datetime.now().strftime("%Y%m%d%H%M%S%f")[:-3]
    return os.path.join(base, f"{worker or _worker_name()}_{stamp}_ascend_ms")


def _lay_out_ascend_ms(dest, rank):
    """Moves an analysis written with output_dir=<dest>/ASCEND_PROFILER_OUTPUT into
    MindSpore 2.4's layout: rank_<r>/ASCEND_PROFILER_OUTPUT/* up one level, per-rank
    suffixes dropped from its file names, profiler_info_<r>.json beside the folder."""
    out = os.path.join(dest, "ASCEND_PROFILER_OUTPUT")
    rank_out = os.path.join(out, f"rank_{rank}", "ASCEND_PROFILER_OUTPUT")
    if os.path.isdir(rank_out):
        for name in os.listdir(rank_out):
            os.replace(os.path.join(rank_out, name), os.path.join(out, name))
        shutil.rmtree(os.path.join(out, f"rank_{rank}"), ignore_errors=True)
    for name in os.listdir(out):
        stem, ext = os.path.splitext(name)
        if stem.endswith(f"_{rank}") and stem[:-len(f"_{rank}")] in _ASCEND_MS_NAMES:
            os.replace(os.path.join(out, name), os.path.join(out, stem[:-len(f"_{rank}")] + ext))
    info = os.path.join(out, f"profiler_info_{rank}.json")
    if os.path.exists(info):
        os.replace(info, os.path.join(dest, f"profiler_info_{rank}.json"))
    return dest


def _analyse_into(session, dest, pretty, step_list, rank):
    """Analyses a live session's data into ``dest`` in MindSpore 2.4's layout."""
    aopts = _session.analyse_options(pretty, step_list, False, quiet=True)
    aopts.output_dir = os.path.join(dest, "ASCEND_PROFILER_OUTPUT").encode()
    session.analyse(aopts)
    return _lay_out_ascend_ms(dest, rank)


def tensor_board_trace_handler(dir_name=None, worker_name=None, analyse_flag=True):
    """MindSpore 2.4's handler: each cycle is analysed into
    ``<dir_name>/<worker>_<timestamp>_ascend_ms/ASCEND_PROFILER_OUTPUT/`` (trace_view.json,
    op_statistic.csv, kernel_details.csv, step_trace_time.csv, ...). ``dir_name`` defaults
    to "./data"; with ``analyse_flag=False`` the cycle is only flushed (analyse later with
    :func:`analyse`)."""
    base = os.fspath(dir_name) if dir_name else "./data"

    def handler_fn(outer):
        prof = getattr(outer, "_prof", outer)  # a Profiler hands over its profile
        if analyse_flag:
            dest = _ascend_ms_dir(base, worker_name)
            os.makedirs(dest, exist_ok=True)
            steps = prof.cycle_steps
            _analyse_into(prof._session, dest, False,  # pylint: disable=protected-access
                          [min(steps), max(steps)] if steps else None,
                          int(prof._session.options.rank_id))  # pylint: disable=protected-access
            outer.last_output = dest
        else:
            prof._session.flush()  # pylint: disable=protected-access

    return handler_fn


class Profiler:  # pylint: disable=too-many-instance-attributes
    """MindSpore's Profiler over the PyTorch capture, in both of its shapes.

    * Classic (MindSpore < 2.4): ``Profiler(output_path="./data", start_profile=True,
      profile_memory=False, ...)``; :meth:`start`, :meth:`stop`, :meth:`analyse`
      (``offline_path``, ``pretty``, ``step_list``, ``mode``) as :class:`nnprof.Profiler`.
    * MindSpore >= 2.4, chosen when ``activities``, ``schedule`` or ``on_trace_ready`` is
      given: :meth:`step` moves the schedule (as torch's), ``on_trace_ready`` (e.g.
      :func:`tensor_board_trace_handler`) runs after each cycle; :func:`analyse` analyses
      offline.

    ``record_shapes``, ``with_stack``, ``with_flops`` and ``with_modules`` are as
    :class:`profile`. ``output_layout="ascend_ms"`` makes
    :meth:`analyse` write ``<output_path>/<host>_<pid>_<timestamp>_ascend_ms/
    ASCEND_PROFILER_OUTPUT/`` with MindSpore 2.4's file names (default: nnprof's layout,
    ``<output_path>/profiler``). ``data_simplification`` is accepted: nnprof writes no
    intermediate files to remove (the raw data is kept: it is the source of every
    analysis). Other keywords are session options, as :class:`nnprof.Profiler`.
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 start_profile=True, output_path=None, profile_memory=False,
                 record_shapes=False, with_stack=False, with_flops=False, with_modules=False,
                 data_simplification=True, output_layout=None, **options):
        # pylint: disable=redefined-outer-name,too-many-arguments,too-many-locals
        if not isinstance(start_profile, bool):
            raise TypeError(f"For 'Profiler', the parameter start_profile must be bool, but "
                            f"got type {type(start_profile)}")
        if output_layout not in (None, "ascend_ms"):
            raise ValueError(f"output_layout must be None or 'ascend_ms', not {output_layout!r}")
        del data_simplification  # nothing intermediate to remove (see the class docs)
        self.output_layout = output_layout
        self.last_output = None
        self._base = os.fspath(output_path) if output_path else None
        self._scheduled = (activities is not None or schedule is not None or
                           on_trace_ready is not None)
        options.setdefault("profile_communication", True)
        if self._scheduled:
            self._ms = None
            self._prof = profile(activities=activities, schedule=schedule,
                                 on_trace_ready=self._trace_ready if on_trace_ready else None,
                                 record_shapes=record_shapes, profile_memory=profile_memory,
                                 with_stack=with_stack, with_flops=with_flops,
                                 with_modules=with_modules, output_path=output_path, **options)
            self._user_trace_ready = on_trace_ready
            if start_profile:
                self._prof.start()
            return
        _check_flags(activities, with_stack, None, None)
        self._prof = None
        self._capture = _Capture(record_shapes, profile_memory, with_flops, with_modules,
                                 with_stack=bool(with_stack) and _torch_shim.has_stacks())
        self._capture.begin()
        state = _dist_state()
        if state is not None and "RANK_ID" not in os.environ:
            options.setdefault("rank_id", state[0])
            options.setdefault("rank_size", state[1])
        try:
            self._ms = _MsProfiler(output_path=output_path, start_profile=start_profile,
                                   profile_memory=profile_memory, **options)
        except BaseException:
            self._capture.end()
            raise

    def _trace_ready(self, prof):
        del prof
        self._user_trace_ready(self)

    # ---- MindSpore >= 2.4 ----

    @property
    def cycle_steps(self):
        """Steps of the cycle just recorded (inside ``on_trace_ready``)."""
        return self._prof.cycle_steps if self._prof else []

    @property
    def _session(self):
        return self._prof._session if self._prof else self._ms._session  # pylint: disable=protected-access

    def step(self):
        """The end of a training step: moves the schedule (MindSpore >= 2.4)."""
        if self._prof is None:
            raise RuntimeError("Profiler.step() needs a schedule (MindSpore >= 2.4's shape: "
                               "Profiler(schedule=..., on_trace_ready=...)).")
        self._prof.step()

    # ---- both shapes ----

    @property
    def raw_dir(self):
        """This process's raw directory."""
        return self._prof.raw_dir if self._prof else self._ms.raw_dir

    @property
    def output_path(self):
        """The output path (raw data in ``<output_path>/profiler``)."""
        return self._prof.output_path if self._prof else self._ms.output_path

    def start(self):
        """Starts collecting (classic: a new window; 2.4: starts the schedule)."""
        if self._prof is not None:
            self._prof.start()
        else:
            self._ms.start()

    def stop(self):
        """Stops collecting (classic: closes the window; 2.4: ends the schedule, calling
        ``on_trace_ready`` for an open cycle, and releases the session)."""
        if self._prof is not None:
            self._prof.stop()
        else:
            self._ms.stop()

    def key_averages(self, group_by_input_shape=False):
        """The per-op table (see :meth:`profile.key_averages`)."""
        if self._prof is not None:
            return self._prof.key_averages(group_by_input_shape)
        if not self._ms.closed:
            self._ms.flush()
        return _torch_table.key_averages(self._ms.raw_dir, None, group_by_input_shape)

    def export_chrome_trace(self, path):
        """The capture as a PyTorch profiler trace (Kineto JSON; gzip for ".gz")."""
        if self._prof is not None:
            return self._prof.export_chrome_trace(path)
        if not self._ms.closed:
            self._ms.flush()
        return export_kineto(self._ms.raw_dir, path)

    def analyse(self, offline_path=None, pretty=False, step_list=None, mode="sync"):
        """Stops collecting and analyses (MindSpore's analyse), then releases the session.
        With ``output_layout="ascend_ms"`` the results go to
        ``<output_path>/<host>_<pid>_<timestamp>_ascend_ms/`` (returned)."""
        try:
            if offline_path is not None:
                return _MsProfiler.offline_analyse(offline_path, pretty, step_list)
            if self._prof is not None:
                session = self._prof._session  # pylint: disable=protected-access
                if session is None:
                    return analyse(self._prof.output_path, pretty=pretty, step_list=step_list)
            else:
                session = self._ms._live_session()  # pylint: disable=protected-access
            rank = int(session.options.rank_id)
            if self.output_layout == "ascend_ms":
                dest = _ascend_ms_dir(self._base or session.output_path)
                os.makedirs(dest, exist_ok=True)
                self.last_output = _analyse_into(session, dest, pretty, step_list, rank)
                return self.last_output
            if self._prof is not None:
                self._prof.analyse(pretty=pretty, step_list=step_list)
            else:
                self._ms.analyse(pretty=pretty, step_list=step_list, mode=mode)
            self.last_output = session.output_path
            return self.last_output
        finally:
            self.close()

    def close(self):
        """Releases the session without analysing; restores the shim. Idempotent."""
        try:
            if self._prof is not None:
                if self._prof._session is not None:  # pylint: disable=protected-access
                    self._prof.stop()
            elif self._ms is not None:
                self._ms.close()
        finally:
            if self._prof is None:
                self._capture.end()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def analyse(profiler_path, max_process_number=None, pretty=False, step_list=None,
            data_simplification=True):
    """MindSpore >= 2.4's offline ``analyse``: analyses every run under ``profiler_path``
    (an output path holding ``profiler/``, an ``*_ascend_ms`` folder, or a folder of
    them), ``max_process_number`` ranks at a time (default: half the CPUs).
    ``data_simplification`` is accepted (nothing intermediate to remove)."""
    del data_simplification
    path = os.fspath(profiler_path)
    jobs = max_process_number if max_process_number else max(1, (os.cpu_count() or 2) // 2)
    if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1:
        raise TypeError(f"max_process_number must be a positive int, not {jobs!r}")
    runs = [path] if os.path.isdir(os.path.join(path, "profiler")) else sorted(
        os.path.join(path, d) for d in os.listdir(path)
        if d.endswith("_ascend_ms") and os.path.isdir(os.path.join(path, d, "profiler")))
    if not runs:
        raise FileNotFoundError(f"There must be a profiler folder in the data path: {path}.")
    for run in runs:
        _MsProfiler.offline_analyse(run, pretty, step_list, jobs=jobs, quiet=True)
    return runs
