"""Internal: options from Python keyword arguments, and the session handle that the
MindSpore-shaped :class:`~nnprof.Profiler` and the PyTorch-shaped
:class:`~nnprof.profile` share.
"""

import atexit
import ctypes
import enum
import json
import math
import os
import sys
import weakref

from . import _lib, errors, log, record
from ._options import AnalyseOptions, Options, Stats

# Keys nnp_options_from_json() reads (MindSpore Profiler.__init__ / MS_PROFILER_OPTIONS and
# nnprof's recorder settings). Any other key that is not an msprof key below goes to
# nnp_options_from_json as well, which warns that it is unknown and ignores it.
MS_KEYS = frozenset((
    "start", "output_path", "start_profile", "op_time", "profile_memory",
    "profile_communication", "parallel_strategy", "data_process", "timeline_limit",
    "profile_framework", "profiler_level", "aicore_metrics", "l2_cache", "hbm_ddr", "pcie",
    "sync_enable", "data_simplification", "host_stack", "rank_id", "device_id", "rank_size",
    "buffer_size_kb", "full_policy", "writer_period_ms", "sample_interval_ms",
    "raw_file_bytes", "storage_limit_bytes", "follow_fork", "follow_children",
))

# Keys only nnp_options_from_msprof_json() reads (msprof PROFILING_OPTIONS).
MSPROF_KEYS = frozenset((
    "storage_limit", "training_trace", "task_trace", "task_time", "hccl", "aicpu", "fp_point",
    "bp_point", "aic_metrics", "l2", "msproftx", "runtime_api", "host_sys", "host_sys_usage",
    "host_sys_usage_freq", "sys_hardware_mem_freq", "llc_profiling", "sys_io_sampling_freq",
    "sys_interconnection_freq", "dvpp_freq", "instr_profiling_freq",
))

# msprof "on"/"off" switches: a Python bool is written as "on"/"off" for them.
_ON_OFF_KEYS = frozenset(("training_trace", "task_trace", "task_time", "hccl", "aicpu", "l2",
                          "msproftx", "runtime_api"))


class ProfilerLevel(enum.Enum):
    """MindSpore's ``profiler_level`` values (``Profiler.Level0`` ...)."""

    Level0 = "Level0"
    Level1 = "Level1"
    Level2 = "Level2"


def _jsonable(value):
    """Converts a keyword value to what json.dumps writes as the same Python type would
    be reported by the C warnings (enums as their value, non-finite floats as text)."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return str(value)


def _msprof_value(key, value):
    """Python conveniences for msprof keys: bools as "on"/"off", a storage limit in MB as
    an int, host_sys items as a list."""
    if key in _ON_OFF_KEYS and isinstance(value, bool):
        return "on" if value else "off"
    if key == "storage_limit" and isinstance(value, int) and not isinstance(value, bool):
        return f"{value}MB"
    if key in ("host_sys", "host_sys_usage") and isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return _jsonable(value)


def build_options(kwargs, from_env=True):
    """Builds an :class:`Options` from MindSpore-style keyword arguments.

    Defaults (``nnp_options_init``), then the environment (``nnp_options_from_env``:
    RANK_ID, DEVICE_ID, MS_DIAGNOSTIC_DATA_PATH, ...), then the MindSpore keys through
    ``nnp_options_from_json`` and the msprof keys through ``nnp_options_from_msprof_json``,
    so the C library checks every value and logs the seed's warnings.
    Raises :class:`~nnprof.NnprofError` for an invalid output path.
    """
    opts = Options()
    errors.check(_lib.lib.nnp_options_init(ctypes.byref(opts)), "nnp_options_init")
    if from_env:
        enabled = ctypes.c_bool(False)
        errors.check(_lib.lib.nnp_options_from_env(ctypes.byref(opts), ctypes.byref(enabled)),
                     "nnp_options_from_env")
        if os.environ.get("MS_DIAGNOSTIC_DATA_PATH") and kwargs.get("output_path") is not None:
            log.logger.warning("Both parameter output_path and environment variable "
                               "MS_DIAGNOSTIC_DATA_PATH have values set, and the profiling "
                               "data saving path is the value set in parameter output_path")
    ms = {k: _jsonable(v) for k, v in kwargs.items() if k not in MSPROF_KEYS}
    msprof = {k: _msprof_value(k, v) for k, v in kwargs.items() if k in MSPROF_KEYS}
    if ms:
        start = ctypes.c_bool(False)
        errors.check(_lib.lib.nnp_options_from_json(ctypes.byref(opts), _lib.encode(
            json.dumps(ms)), ctypes.byref(start)), "nnp_options_from_json")
    if msprof:
        errors.check(_lib.lib.nnp_options_from_msprof_json(ctypes.byref(opts), _lib.encode(
            json.dumps(msprof))), "nnp_options_from_msprof_json")
    return opts


def options_to_dict(opts):
    """``nnp_options_to_json`` of ``opts``, parsed: every option as the C side resolved it."""
    need = errors.check(_lib.lib.nnp_options_to_json(ctypes.byref(opts), None, 0),
                        "nnp_options_to_json")
    buf = ctypes.create_string_buffer(need + 1)
    errors.check(_lib.lib.nnp_options_to_json(ctypes.byref(opts), buf, need + 1),
                 "nnp_options_to_json")
    return json.loads(buf.value.decode("utf-8"))


def step_list_options(aopts, step_list):
    """Checks ``step_list`` as MindSpore's Profiler.analyse does and stores it in
    ``aopts`` (``nnp_parse_step_list``). ``None`` or ``[]`` means every step.

    Raises TypeError("Parameter step_list must be a list.") for a non-list,
    TypeError("The elements of the parameter step_list must be integers.") for non-int
    elements, and ValueError with the C library's text for a list that is not
    continuous (or holds negative step ids).
    """
    if step_list is None:
        return
    if not isinstance(step_list, list):
        raise TypeError("Parameter step_list must be a list.")
    if not step_list:
        return
    if not all(isinstance(s, int) and not isinstance(s, bool) for s in step_list):
        raise TypeError("The elements of the parameter step_list must be integers.")
    text = ",".join(str(s) for s in sorted(step_list))
    rc = _lib.lib.nnp_parse_step_list(_lib.encode(text), ctypes.byref(aopts))
    if rc < 0:
        raise ValueError(errors.last_error() or errors.strerror(rc))


_ANALYSE_FIELDS = {
    "jobs": int, "is_developer": bool, "quiet": bool, "timeline_summary": bool, "rank": int,
    "graph_id": int, "peak_flops": float, "memory_capacity_bytes": int,
}


def analyse_options(pretty=False, step_list=None, asynchronous=False, **extra):
    """An :class:`AnalyseOptions` from ``nnp_analyse_options_init`` and the arguments.

    ``extra`` may set the other fields of ``nnp_analyse_options_t``: jobs, is_developer,
    quiet, timeline_summary, rank, graph_id, peak_flops, memory_capacity_bytes.
    """
    aopts = AnalyseOptions()
    errors.check(_lib.lib.nnp_analyse_options_init(ctypes.byref(aopts)),
                 "nnp_analyse_options_init")
    aopts.pretty = bool(pretty)
    aopts.async_ = bool(asynchronous)
    for key, value in extra.items():
        kind = _ANALYSE_FIELDS.get(key)
        if kind is None:
            raise TypeError(f"analyse() got an unexpected keyword argument '{key}'")
        if kind is bool and not isinstance(value, bool):
            raise TypeError(f"For analyse, the parameter {key} must be bool, but got type "
                            f"{type(value)}")
        if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            raise TypeError(f"For analyse, the parameter {key} must be int, but got type "
                            f"{type(value)}")
        if kind is float and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise TypeError(f"For analyse, the parameter {key} must be float, but got type "
                            f"{type(value)}")
        setattr(aopts, key, value)
    step_list_options(aopts, step_list)
    return aopts


def offline_analyse(path, aopts):
    """``nnp_offline_analyse``: analyses every raw directory under ``path``/profiler."""
    errors.check(_lib.lib.nnp_offline_analyse(_lib.encode(path), ctypes.byref(aopts)),
                 "nnp_offline_analyse")


def analyse_wait():
    """``nnp_analyse_wait``: waits for the asynchronous analysis of this process."""
    errors.check(_lib.lib.nnp_analyse_wait(), "nnp_analyse_wait")


def op_analyse(path, names, device_id=-1):
    """``nnp_op_analyse``: statistics of the named ops in the data under ``path``.

    Returns the list of dicts the C library writes (one per name, in order).
    """
    arr = (ctypes.c_char_p * len(names))(*[_lib.encode(n) for n in names])
    out = ctypes.c_void_p()
    errors.check(_lib.lib.nnp_op_analyse(_lib.encode(path), arr, len(names), device_id,
                                         ctypes.byref(out)), "nnp_op_analyse")
    try:
        text = ctypes.string_at(out.value).decode("utf-8") if out.value else "[]"
    finally:
        _lib.lib.nnp_free(out)
    return json.loads(text)


_live = weakref.WeakSet()


class Session:
    """An ``nnp_session_t``: created from :class:`Options`, released by :meth:`destroy`
    (also at garbage collection and at interpreter exit, so info.json is finalised)."""

    def __init__(self, opts, memory_setting=None, shapes=True, flops=True):
        """Creates the session (``nnp_session_create``; it starts collecting when
        ``opts.start_profile``). The recording settings of :mod:`nnprof.record` are
        set for the session's life: tensor memory is recorded when ``memory_setting``
        (default: ``opts.profile_memory``), shapes when ``shapes``, FLOPs when ``flops``.
        """
        handle = ctypes.c_void_p()
        errors.check(_lib.lib.nnp_session_create(ctypes.byref(opts), ctypes.byref(handle)),
                     "nnp_session_create")
        self._handle = handle
        self.options = opts
        self.raw_dir = _lib.text(_lib.lib.nnp_session_raw_dir(handle))
        self.output_path = os.path.abspath(_lib.text(opts.output_path))
        self.started = bool(opts.start_profile)
        self.windows = 1 if self.started else 0
        memory = bool(opts.profile_memory) if memory_setting is None else bool(memory_setting)
        self._saved_settings = record.configure(record_shapes=shapes, with_flops=flops,
                                                profile_memory=memory)
        _live.add(self)

    @property
    def alive(self):
        """Whether the session has not been destroyed."""
        return self._handle is not None

    def _require(self):
        if self._handle is None:
            raise RuntimeError("The profiling session has been closed (the profiler was "
                               "analysed or closed); create a new profiler to profile again.")
        return self._handle

    def start(self):
        """``nnp_session_start``: opens a collection window."""
        errors.check(_lib.lib.nnp_session_start(self._require()), "nnp_session_start")
        self.started = True
        self.windows += 1

    def stop(self):
        """``nnp_session_stop``: closes the window and flushes its events."""
        errors.check(_lib.lib.nnp_session_stop(self._require()), "nnp_session_stop")
        self.started = False

    def flush(self):
        """``nnp_session_flush``: writes every event recorded so far to disk."""
        errors.check(_lib.lib.nnp_session_flush(self._require()), "nnp_session_flush")

    def stats(self):
        """``nnp_session_stats`` as a dict."""
        st = Stats()
        errors.check(_lib.lib.nnp_session_stats(self._require(), ctypes.byref(st)),
                     "nnp_session_stats")
        return st.to_dict()

    def analyse(self, aopts):
        """``nnp_analyse``: stops, flushes and analyses (or forks the analysis when
        ``aopts.async_``)."""
        handle = self._require()
        handler = log.get_handler() if aopts.async_ else None
        if handler is not None:
            # The forked analysis would call the Python log handler in a child process
            # whose interpreter state was copied mid-flight: let it log to stderr.
            log.set_handler(None)
        try:
            rc = _lib.lib.nnp_analyse(handle, ctypes.byref(aopts))
        finally:
            if handler is not None:
                log.set_handler(handler)
        self.started = False  # nnp_analyse stops a started session even when it fails
        errors.check(rc, "nnp_analyse")

    def destroy(self):
        """``nnp_session_destroy``: stops, flushes, finalises info.json and releases the
        session; a no-op the second time."""
        handle, self._handle = self._handle, None
        if handle is None:
            return
        self.started = False
        _live.discard(self)
        try:
            errors.check(_lib.lib.nnp_session_destroy(handle), "nnp_session_destroy")
        finally:
            record.restore(self._saved_settings)

    def __del__(self):
        try:
            self.destroy()
        except Exception:  # pylint: disable=broad-except
            pass  # nothing to report to at garbage collection


@atexit.register
def _destroy_live_sessions():
    """Finalises the sessions still open when the interpreter exits."""
    for session in list(_live):
        try:
            session.destroy()
        except Exception:  # pylint: disable=broad-except
            pass


class _ForkToken:  # pylint: disable=too-few-public-methods
    """A live, weak-referenceable object for multiprocessing's after-fork registry."""


_FORK_TOKEN = _ForkToken()


def _destroy_current_session():
    """Finalises the session the library opened in this (forked) process, if any."""
    handle = _lib.lib.nnp_session_current()
    if handle:
        _lib.lib.nnp_session_destroy(handle)


def _finalize_at_worker_exit(_token):
    """multiprocessing after-fork hook: the worker ends with os._exit(), which skips the C
    exit hook, but runs multiprocessing's finalizers first."""
    from multiprocessing import util  # pylint: disable=import-outside-toplevel
    util.Finalize(None, _destroy_current_session, exitpriority=0)


def _after_fork_in_child():
    """With follow_fork a forked child has its own session (C fork handler). A
    multiprocessing worker (Pool, DataLoader) leaves through os._exit(): have its
    finalizers destroy that session, so the worker's last events reach the disk."""
    if not _lib.lib.nnp_session_current():
        return
    mp_util = sys.modules.get("multiprocessing.util")
    if mp_util is not None:
        # Process._bootstrap clears the finalizers the fork copied, then runs these.
        mp_util.register_after_fork(_FORK_TOKEN, _finalize_at_worker_exit)


os.register_at_fork(after_in_child=_after_fork_in_child)
