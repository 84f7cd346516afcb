"""Recording API for framework authors: the ``nnp_*`` recording calls of nnprof.h.

Strings are referenced by id: :func:`intern` turns a string into an id once and caches
it (``nnp_intern`` takes a lock and may allocate), and every function below that takes a
name accepts either a ``str`` (interned through the cache) or an ``int`` id.

Times: calls without a time read the clock themselves; ``*_since(..., start_ticks)``
take a start from :func:`now` (raw ticks); ``*_at(...)`` take CLOCK_MONOTONIC
nanoseconds (:func:`clock_ns`, the same clock as :func:`time.monotonic_ns`) for events
measured elsewhere or replayed. The ``ts_ns`` argument is last, as in C.

Every recording call is a no-op outside a collection window.

Recording settings (:func:`configure`): a profiler sets, for its life, whether op input
shapes and dtypes (``record_shapes``), op FLOPs (``with_flops``) and tensor allocations
(``profile_memory``) are recorded. Outside any profiler everything is recorded.
"""

import contextlib
import ctypes
import enum
import threading

from . import _lib, errors
from ._options import (CommStruct, HostTag, KernelStruct, OpStruct, PipelineOpStruct,
                       TensorStruct)

_c = _lib.lib
_ids = {}
_ids_lock = threading.Lock()


# ---- strings, clocks, threads ---------------------------------------------------------

def intern(s):
    """``nnp_intern``: the id of string ``s`` (cached); 0 for ``None``/``""``.

    An ``int`` is taken as an id already and returned as is.
    """
    if s is None:
        return 0
    if isinstance(s, int) and not isinstance(s, bool):
        return s
    sid = _ids.get(s)
    if sid is None:
        if not isinstance(s, str):
            raise TypeError(f"a string or a string id is required, but got type {type(s)}")
        if s == "":
            return 0
        with _ids_lock:
            sid = _ids.get(s)
            if sid is None:
                sid = _c.nnp_intern(s.encode("utf-8"))
                if sid == 0:
                    raise MemoryError(f"nnp_intern failed for {s!r}")
                _ids[s] = sid
    return sid


def now():
    """``nnp_now``: the recorder's raw tick counter, for the ``*_since()`` calls."""
    return _c.nnp_now()


def clock_ns():
    """``nnp_clock_ns``: CLOCK_MONOTONIC in nanoseconds, the time base of ``*_at()``."""
    return _c.nnp_clock_ns()


def is_collecting():
    """``nnp_is_collecting``: whether a collection window is open."""
    return bool(_c.nnp_is_collecting())


def thread_register(name):
    """``nnp_thread_register``: names the calling thread in the timeline."""
    errors.check(_c.nnp_thread_register(_lib.encode(name)), "nnp_thread_register")


# ---- recording settings ----------------------------------------------------------------

class _Settings:  # pylint: disable=too-few-public-methods
    __slots__ = ("record_shapes", "with_flops", "profile_memory")

    def __init__(self):
        self.record_shapes = True
        self.with_flops = True
        self.profile_memory = True


settings = _Settings()


def configure(record_shapes=None, with_flops=None, profile_memory=None):
    """Sets the recording settings (``None`` leaves one unchanged); returns the previous
    ones for :func:`restore`."""
    old = (settings.record_shapes, settings.with_flops, settings.profile_memory)
    if record_shapes is not None:
        settings.record_shapes = bool(record_shapes)
    if with_flops is not None:
        settings.with_flops = bool(with_flops)
    if profile_memory is not None:
        settings.profile_memory = bool(profile_memory)
    return old


def restore(saved):
    """Restores settings returned by :func:`configure`."""
    settings.record_shapes, settings.with_flops, settings.profile_memory = saved


# ---- host ranges and instants ----------------------------------------------------------

class Tag:
    """``nnp_host_tag_t``: a host range or instant in MindSpore's host_info terms.

    Args:
        module: e.g. ``"Dataset"``, ``"Graph"``, ``"Python"``.
        event: e.g. ``"GetNext"``.
        stage: e.g. ``"Compile"``, ``"Run"``.
        custom_info: free text, or ``None``.
        level: 0 = framework developer, 1 = user.

    A tag is also a context manager recording one range.
    """

    __slots__ = ("struct", "_ref")

    def __init__(self, module, event, stage=None, custom_info=None, level=1):
        self.struct = HostTag(intern(module), intern(event), intern(stage), intern(custom_info),
                              int(level))
        self._ref = ctypes.byref(self.struct)

    def begin(self):
        """``nnp_range_begin``."""
        _c.nnp_range_begin(self._ref)

    def end(self):
        """``nnp_range_end``."""
        _c.nnp_range_end(self._ref)

    def instant(self):
        """``nnp_instant``."""
        _c.nnp_instant(self._ref)

    def begin_at(self, ts_ns):
        """``nnp_range_begin_at``."""
        _c.nnp_range_begin_at(self._ref, ts_ns)

    def end_at(self, ts_ns):
        """``nnp_range_end_at``."""
        _c.nnp_range_end_at(self._ref, ts_ns)

    def instant_at(self, ts_ns):
        """``nnp_instant_at``."""
        _c.nnp_instant_at(self._ref, ts_ns)

    def __enter__(self):
        _c.nnp_range_begin(self._ref)
        return self

    def __exit__(self, *exc):
        _c.nnp_range_end(self._ref)
        return False


_tags = {}


def tag(module, event, stage=None, custom_info=None, level=1):
    """A cached :class:`Tag` for these values (one ``nnp_intern`` per new string)."""
    key = (module, event, stage, custom_info, level)
    t = _tags.get(key)
    if t is None:
        t = _tags[key] = Tag(module, event, stage, custom_info, level)
    return t


def range_begin(t):
    """``nnp_range_begin(tag)``."""
    t.begin()


def range_end(t):
    """``nnp_range_end(tag)``."""
    t.end()


def instant(t):
    """``nnp_instant(tag)``."""
    t.instant()


def range_begin_at(t, ts_ns):
    """``nnp_range_begin_at(tag, ts_ns)``."""
    t.begin_at(ts_ns)


def range_end_at(t, ts_ns):
    """``nnp_range_end_at(tag, ts_ns)``."""
    t.end_at(ts_ns)


def instant_at(t, ts_ns):
    """``nnp_instant_at(tag, ts_ns)``."""
    t.instant_at(ts_ns)


def host_memory(nbytes):
    """``nnp_host_memory``: host memory in use by the framework, in bytes."""
    _c.nnp_host_memory(nbytes)


def host_memory_at(nbytes, ts_ns):
    """``nnp_host_memory_at``."""
    _c.nnp_host_memory_at(nbytes, ts_ns)


# ---- operators -------------------------------------------------------------------------

def format_shapes(shapes):
    """``[(32, 784), (784, 128)]`` -> ``"32,784;784,128"``; a string is kept as is."""
    if shapes is None or isinstance(shapes, str):
        return shapes
    return ";".join(",".join(str(d) for d in shape) for shape in shapes)


def format_dtypes(dtypes):
    """``["float32", "float32"]`` -> ``"float32;float32"``; a string is kept as is."""
    if dtypes is None or isinstance(dtypes, str):
        return dtypes
    return ";".join(str(d) for d in dtypes)


class Op:
    """``nnp_op_t``: a framework operator, built once and recorded many times.

    Args:
        name: full scope name, e.g. ``"Default/network/Conv2D-op1"``.
        type: op type, e.g. ``"Conv2D"`` (default: ``name``).
        graph_id, stream_id, correlation_id: as in C (correlation links device kernels).
        input_shapes: ``"32,784;784,128"`` or a list of shapes (recorded only while
            ``record_shapes`` is on), likewise ``input_dtypes``.
        flops_matrix, flops_vector: FLOPs (recorded only while ``with_flops`` is on).

    ``with op:`` times the block and records it (:meth:`since`).
    """

    __slots__ = ("struct", "_variants", "_starts")

    def __init__(self, name, type=None, graph_id=0, stream_id=0, correlation_id=0,
                 input_shapes=None, input_dtypes=None, flops_matrix=0, flops_vector=0):
        # pylint: disable=redefined-builtin,too-many-arguments
        self.struct = OpStruct(intern(name), intern(type if type is not None else name),
                               graph_id, stream_id, correlation_id,
                               intern(format_shapes(input_shapes)),
                               intern(format_dtypes(input_dtypes)), flops_matrix, flops_vector)
        self._variants = {}
        self._starts = threading.local()

    def _ref(self):
        s = self.struct
        shapes = settings.record_shapes or not (s.input_shapes or s.input_dtypes)
        flops = settings.with_flops or not (s.flops_matrix or s.flops_vector)
        if shapes and flops:
            return ctypes.byref(s)
        key = (shapes, flops)
        v = self._variants.get(key)
        if v is None:
            v = OpStruct.from_buffer_copy(s)
            if not shapes:
                v.input_shapes = v.input_dtypes = 0
            if not flops:
                v.flops_matrix = v.flops_vector = 0
            self._variants[key] = v
        return ctypes.byref(v)

    def since(self, start_ticks):
        """``nnp_op_since``: the op ran from ``start_ticks`` (:func:`now`) until now."""
        _c.nnp_op_since(self._ref(), start_ticks)

    def at(self, start_ns, end_ns):
        """``nnp_op_at``: the op ran from ``start_ns`` to ``end_ns`` (CLOCK_MONOTONIC)."""
        _c.nnp_op_at(self._ref(), start_ns, end_ns)

    def __enter__(self):
        stack = getattr(self._starts, "stack", None)
        if stack is None:
            stack = self._starts.stack = []
        stack.append(_c.nnp_now())
        return self

    def __exit__(self, *exc):
        self.since(self._starts.stack.pop())
        return False


def op_since(op, start_ticks):
    """``nnp_op_since(op, start_ticks)``."""
    op.since(start_ticks)


def op_at(op, start_ns, end_ns):
    """``nnp_op_at(op, start_ns, end_ns)``."""
    op.at(start_ns, end_ns)


_ops = {}


@contextlib.contextmanager
def op_scope(name, type=None, **fields):
    """Times the block as one op; the :class:`Op` is cached per (name, type, fields)::

        with record.op_scope("net/fc1/MatMul", "MatMul", input_shapes=[(4, 2), (2, 8)]):
            y = matmul(x, w)
    """
    # pylint: disable=redefined-builtin
    key = (name, type, tuple(sorted((k, format_shapes(v) if k == "input_shapes" else
                                     format_dtypes(v) if k == "input_dtypes" else v)
                                    for k, v in fields.items())))
    op = _ops.get(key)
    if op is None:
        op = _ops[key] = Op(name, type, **fields)
    start = _c.nnp_now()
    try:
        yield op
    finally:
        op.since(start)


# ---- device kernels --------------------------------------------------------------------

class Kernel:
    """``nnp_kernel_t``: a device kernel or task (type e.g. ``"KERNEL"``, ``"MEMCPY"``).
    ``launch_id``: the id of the host call that queued it (as in C), 0 when unknown."""

    __slots__ = ("struct", "_ref")

    def __init__(self, name, type=None, device_id=0, stream_id=0, correlation_id=0,
                 launch_id=0):
        # pylint: disable=redefined-builtin,too-many-arguments
        self.struct = KernelStruct(intern(name), intern(type), device_id, stream_id,
                                   correlation_id, launch_id)
        self._ref = ctypes.byref(self.struct)

    def since(self, start_ticks):
        """``nnp_kernel_since``."""
        _c.nnp_kernel_since(self._ref, start_ticks)

    def at(self, start_ns, end_ns):
        """``nnp_kernel_at``."""
        _c.nnp_kernel_at(self._ref, start_ns, end_ns)


def kernel_since(kernel, start_ticks):
    """``nnp_kernel_since(kernel, start_ticks)``."""
    kernel.since(start_ticks)


def kernel_at(kernel, start_ns, end_ns):
    """``nnp_kernel_at(kernel, start_ns, end_ns)``."""
    kernel.at(start_ns, end_ns)


@contextlib.contextmanager
def correlation(correlation_id):
    """Links the device work launched in the block to the op of ``correlation_id``
    (``nnp_correlation_push`` / ``nnp_correlation_pop``; the CUDA back end gives each kernel
    that id, so op statistics hold the op's device time)::

        op = record.Op("Default/net/MatMul-op1", "MatMul", correlation_id=7)
        with record.correlation(7), op:
            y = x @ w                  # kernels launched here carry id 7
    """
    _c.nnp_correlation_push(correlation_id)
    try:
        yield
    finally:
        _c.nnp_correlation_pop()


# ---- steps, epochs, fp/bp points -------------------------------------------------------

def step_begin(step_id, graph_id=0):
    """``nnp_step_begin``."""
    _c.nnp_step_begin(step_id, graph_id)


def step_end(step_id, graph_id=0):
    """``nnp_step_end``."""
    _c.nnp_step_end(step_id, graph_id)


def step_begin_at(step_id, graph_id, ts_ns):
    """``nnp_step_begin_at``."""
    _c.nnp_step_begin_at(step_id, graph_id, ts_ns)


def step_end_at(step_id, graph_id, ts_ns):
    """``nnp_step_end_at``."""
    _c.nnp_step_end_at(step_id, graph_id, ts_ns)


def epoch_begin(epoch_id):
    """``nnp_epoch_begin``."""
    _c.nnp_epoch_begin(epoch_id)


def epoch_end(epoch_id):
    """``nnp_epoch_end``."""
    _c.nnp_epoch_end(epoch_id)


def epoch_begin_at(epoch_id, ts_ns):
    """``nnp_epoch_begin_at``."""
    _c.nnp_epoch_begin_at(epoch_id, ts_ns)


def epoch_end_at(epoch_id, ts_ns):
    """``nnp_epoch_end_at``."""
    _c.nnp_epoch_end_at(epoch_id, ts_ns)


def fp_start(step_id):
    """``nnp_fp_start``: the forward pass of ``step_id`` starts now."""
    _c.nnp_fp_start(step_id)


def bp_end(step_id):
    """``nnp_bp_end``: the backward pass of ``step_id`` ends now."""
    _c.nnp_bp_end(step_id)


def fp_start_at(step_id, ts_ns):
    """``nnp_fp_start_at``."""
    _c.nnp_fp_start_at(step_id, ts_ns)


def bp_end_at(step_id, ts_ns):
    """``nnp_bp_end_at``."""
    _c.nnp_bp_end_at(step_id, ts_ns)


# ---- tensor memory ---------------------------------------------------------------------

class Tensor:
    """``nnp_tensor_t``: one allocation (recorded only while ``profile_memory`` is on)."""

    __slots__ = ("struct",)

    def __init__(self, address, size_bytes, name=None, owner_op=None, device_id=0):
        # pylint: disable=too-many-arguments
        self.struct = TensorStruct(address, size_bytes, intern(name), intern(owner_op),
                                   device_id)

    def alloc(self):
        """``nnp_mem_alloc`` of this tensor."""
        mem_alloc(self)

    def free(self):
        """``nnp_mem_free`` of this tensor."""
        mem_free(self.struct.address, self.struct.size_bytes)


def mem_alloc(tensor):
    """``nnp_mem_alloc(tensor)``."""
    if settings.profile_memory:
        _c.nnp_mem_alloc(ctypes.byref(tensor.struct))


def mem_free(address, size_bytes=0):
    """``nnp_mem_free(address, size_bytes)`` (size 0 = unknown)."""
    if settings.profile_memory:
        _c.nnp_mem_free(address, size_bytes)


def mem_alloc_at(tensor, ts_ns):
    """``nnp_mem_alloc_at(tensor, ts_ns)``."""
    if settings.profile_memory:
        _c.nnp_mem_alloc_at(ctypes.byref(tensor.struct), ts_ns)


def mem_free_at(address, size_bytes, ts_ns):
    """``nnp_mem_free_at(address, size_bytes, ts_ns)``."""
    if settings.profile_memory:
        _c.nnp_mem_free_at(address, size_bytes, ts_ns)


# ---- communication ---------------------------------------------------------------------

class CommKind(enum.IntEnum):
    """``nnp_comm_kind_t``."""

    OTHER = 0
    ALLREDUCE = 1
    ALLGATHER = 2
    REDUCESCATTER = 3
    BROADCAST = 4
    REDUCE = 5
    ALLTOALL = 6
    SEND = 7
    RECV = 8
    BARRIER = 9
    GATHER = 10
    SCATTER = 11


def comm_kind_name(kind):
    """``nnp_comm_kind_name``: ``"allreduce"`` for ``CommKind.ALLREDUCE``."""
    return _lib.text(_c.nnp_comm_kind_name(int(kind)))


def _comm_kind(kind):
    if isinstance(kind, str):
        try:
            return CommKind[kind.upper()]
        except KeyError:
            raise ValueError(f"unknown communication kind {kind!r}; one of "
                             f"{[k.name.lower() for k in CommKind]}") from None
    return CommKind(kind)


class Comm:
    """``nnp_comm_t``: one communication op.

    Args:
        name: op name, e.g. ``"hcom_allReduce_1"``.
        kind: a :class:`CommKind`, its value or its name (``"allreduce"``).
        group: communicator group, e.g. ``"world"`` (describe it with :func:`comm_group`).
        size_bytes: bytes moved; peer: peer or root rank (-1 none); stream_id.
        count: elements (0 = not recorded); datatype: element type, e.g. ``"float32"``.
        tag: message tag (``None`` = not recorded); wait_ns: the part spent blocked before
            data moved (``None`` = not measured).
        launch_id: a collective's device kernel (:meth:`kernel_at`): the id of the host call
            that queued it, as :class:`Kernel`'s (0 = unknown).
    """

    __slots__ = ("struct", "_ref")

    def __init__(self, name, kind=CommKind.OTHER, group=None, size_bytes=0, peer=-1,
                 stream_id=0, count=0, datatype=None, tag=None, wait_ns=None, launch_id=0):
        # pylint: disable=too-many-arguments
        self.struct = CommStruct(intern(name), int(_comm_kind(kind)), intern(group),
                                 size_bytes, peer, stream_id, count, intern(datatype),
                                 0 if tag is None else tag, tag is not None,
                                 wait_ns is not None, 0 if wait_ns is None else wait_ns,
                                 launch_id)
        self._ref = ctypes.byref(self.struct)

    def since(self, start_ticks):
        """``nnp_comm_since``."""
        _c.nnp_comm_since(self._ref, start_ticks)

    def at(self, start_ns, end_ns):
        """``nnp_comm_at``."""
        _c.nnp_comm_at(self._ref, start_ns, end_ns)

    def kernel_at(self, start_ns, end_ns):
        """``nnp_comm_kernel_at``: the collective's kernel as a device ran it (NCCL)."""
        _c.nnp_comm_kernel_at(self._ref, start_ns, end_ns)


def comm_since(comm, start_ticks):
    """``nnp_comm_since(comm, start_ticks)``."""
    comm.since(start_ticks)


def comm_at(comm, start_ns, end_ns):
    """``nnp_comm_at(comm, start_ns, end_ns)``."""
    comm.at(start_ns, end_ns)


def comm_group(group, ranks, my_index=-1):
    """``nnp_comm_group``: the group named ``group`` has the members ``ranks`` (global ranks,
    in group order); this process is member ``my_index`` (-1 unknown). Once per group and
    collection window; not for hot paths."""
    ranks = [int(r) for r in ranks]
    arr = (ctypes.c_int32 * len(ranks))(*ranks)
    _c.nnp_comm_group(intern(group), arr, len(ranks), my_index)


# ---- data pipeline ---------------------------------------------------------------------

def pipeline_op(op_id, op_type, num_workers=1, parent_id=-1):
    """``nnp_pipeline_op``: registers a pipeline op (``"GeneratorOp"``, ``"MapOp"``, ...);
    ``parent_id`` -1 for the root."""
    st = PipelineOpStruct(op_id, intern(op_type), num_workers, parent_id)
    _c.nnp_pipeline_op(ctypes.byref(st))


def queue_sample(op_id, size, capacity):
    """``nnp_queue_sample``: the output queue of ``op_id`` holds ``size`` of ``capacity``."""
    _c.nnp_queue_sample(op_id, size, capacity)


def device_queue_sample(size, capacity):
    """``nnp_device_queue_sample``: the device queue when a batch is fetched."""
    _c.nnp_device_queue_sample(size, capacity)


def queue_sample_at(op_id, size, capacity, ts_ns):
    """``nnp_queue_sample_at``."""
    _c.nnp_queue_sample_at(op_id, size, capacity, ts_ns)


def device_queue_sample_at(size, capacity, ts_ns):
    """``nnp_device_queue_sample_at``."""
    _c.nnp_device_queue_sample_at(size, capacity, ts_ns)


# ---- user markers (recorded only with the msproftx option on) --------------------------

def mark(message):
    """``nnp_mark``."""
    _c.nnp_mark(intern(message))


def mark_range_start(message):
    """``nnp_mark_range_start``: returns the range id (0 when markers are off)."""
    return _c.nnp_mark_range_start(intern(message))


def mark_range_stop(range_id):
    """``nnp_mark_range_stop``."""
    _c.nnp_mark_range_stop(range_id)


def mark_at(message, ts_ns):
    """``nnp_mark_at``."""
    _c.nnp_mark_at(intern(message), ts_ns)


# ---- counters --------------------------------------------------------------------------

def counter(name, value):
    """``nnp_counter``: a named numeric value at this time."""
    _c.nnp_counter(intern(name), value)


def counter_at(name, value, ts_ns):
    """``nnp_counter_at``."""
    _c.nnp_counter_at(intern(name), value, ts_ns)
