"""Loading of libnnprof and the ctypes prototype of every function of its public API.

The library is searched, in order:

1. the path in the environment variable ``NNPROF_LIBRARY`` (only there);
2. the libnnprof already loaded into the process (``nnprof run``, ``LD_PRELOAD``), so that
   Python records into the session the preloaded copy started;
3. ``build/libnnprof.so`` of the source tree this package sits in
   (``<repo>/python/nnprof`` -> ``<repo>/build``);
4. the library directory of the prefix the package was installed under (``pip install
   --prefix P`` puts it in ``P/lib/pythonX.Y/site-packages``, or on Debian
   ``P/local/lib/pythonX.Y/dist-packages``; ``cmake --install`` with the same prefix puts
   the library in ``P/lib``);
5. the library directory beside the ``nnprof`` command found on ``PATH`` (``bin/../lib``);
6. ``ctypes.util.find_library("nnprof")`` (the system's library path).

Every function of ``include/nnprof/nnprof.h`` gets its ``argtypes`` and ``restype`` here;
``tests/test_lib.py`` checks that none is missing.
"""

import ctypes
import ctypes.util
import os
import shutil
from ctypes import (POINTER, c_bool, c_char_p, c_double, c_int, c_int64, c_size_t, c_uint,
                    c_uint32, c_uint64, c_void_p)

from ._options import (AnalyseOptions, ClockSync, CommStruct, HostTag, KernelStruct, OpStruct,
                       Options, PipelineOpStruct, Stats, TensorStruct)

#: ``nnp_log_fn``: ``void (*)(nnp_log_level_t level, const char *msg, void *user)``.
LOG_FN = ctypes.CFUNCTYPE(None, c_int, c_char_p, c_void_p)

# name: (restype, argtypes). One line per function of nnprof.h, in the header's order.
PROTOTYPES = {
    # errors, version, logging
    "nnp_strerror": (c_char_p, [c_int]),
    "nnp_last_error": (c_char_p, []),
    "nnp_version": (c_char_p, []),
    "nnp_log_set_level": (None, [c_int]),
    "nnp_log_set_handler": (None, [LOG_FN, c_void_p]),
    # options
    "nnp_options_init": (c_int, [POINTER(Options)]),
    "nnp_options_from_json": (c_int, [POINTER(Options), c_char_p, POINTER(c_bool)]),
    "nnp_options_from_msprof_json": (c_int, [POINTER(Options), c_char_p]),
    "nnp_options_from_env": (c_int, [POINTER(Options), POINTER(c_bool)]),
    "nnp_options_validate": (c_int, [POINTER(Options)]),
    "nnp_options_to_json": (c_int, [POINTER(Options), c_char_p, c_size_t]),
    # session lifecycle
    "nnp_session_create": (c_int, [POINTER(Options), POINTER(c_void_p)]),
    "nnp_session_start": (c_int, [c_void_p]),
    "nnp_session_stop": (c_int, [c_void_p]),
    "nnp_session_flush": (c_int, [c_void_p]),
    "nnp_session_destroy": (c_int, [c_void_p]),
    "nnp_session_raw_dir": (c_char_p, [c_void_p]),
    "nnp_session_current": (c_void_p, []),
    "nnp_session_stats": (c_int, [c_void_p, POINTER(Stats)]),
    # analysis
    "nnp_analyse_options_init": (c_int, [POINTER(AnalyseOptions)]),
    "nnp_parse_step_list": (c_int, [c_char_p, POINTER(AnalyseOptions)]),
    "nnp_analyse": (c_int, [c_void_p, POINTER(AnalyseOptions)]),
    "nnp_analyse_wait": (c_int, []),
    "nnp_offline_analyse": (c_int, [c_char_p, POINTER(AnalyseOptions)]),
    # char **json is received as a void pointer so that it can be handed to nnp_free.
    "nnp_op_analyse": (c_int, [c_char_p, POINTER(c_char_p), c_size_t, c_int,
                               POINTER(c_void_p)]),
    "nnp_export_kineto": (c_int, [c_char_p, c_char_p, POINTER(AnalyseOptions), c_char_p]),
    # char **json is received as a void pointer so that it can be handed to nnp_free.
    "nnp_op_table": (c_int, [c_char_p, POINTER(AnalyseOptions), c_bool, POINTER(c_void_p)]),
    "nnp_op_table_ex": (c_int, [c_char_p, POINTER(AnalyseOptions), c_uint, POINTER(c_void_p)]),
    "nnp_free": (None, [c_void_p]),
    # recording: strings, clocks, threads
    "nnp_intern": (c_uint32, [c_char_p]),
    "nnp_now": (c_uint64, []),
    "nnp_clock_ns": (c_uint64, []),
    "nnp_is_collecting": (c_bool, []),
    "nnp_thread_register": (c_int, [c_char_p]),
    # host ranges and instants
    "nnp_range_begin": (None, [POINTER(HostTag)]),
    "nnp_range_end": (None, [POINTER(HostTag)]),
    "nnp_instant": (None, [POINTER(HostTag)]),
    "nnp_range_begin_at": (None, [POINTER(HostTag), c_uint64]),
    "nnp_range_end_at": (None, [POINTER(HostTag), c_uint64]),
    "nnp_instant_at": (None, [POINTER(HostTag), c_uint64]),
    "nnp_host_memory": (None, [c_uint64]),
    "nnp_host_memory_at": (None, [c_uint64, c_uint64]),
    # operators and kernels
    "nnp_op_since": (None, [POINTER(OpStruct), c_uint64]),
    "nnp_op_at": (None, [POINTER(OpStruct), c_uint64, c_uint64]),
    "nnp_kernel_since": (None, [POINTER(KernelStruct), c_uint64]),
    "nnp_kernel_at": (None, [POINTER(KernelStruct), c_uint64, c_uint64]),
    # steps, epochs, fp/bp points
    "nnp_step_begin": (None, [c_uint64, c_uint32]),
    "nnp_step_end": (None, [c_uint64, c_uint32]),
    "nnp_step_begin_at": (None, [c_uint64, c_uint32, c_uint64]),
    "nnp_step_end_at": (None, [c_uint64, c_uint32, c_uint64]),
    "nnp_epoch_begin": (None, [c_uint64]),
    "nnp_epoch_end": (None, [c_uint64]),
    "nnp_epoch_begin_at": (None, [c_uint64, c_uint64]),
    "nnp_epoch_end_at": (None, [c_uint64, c_uint64]),
    "nnp_fp_start": (None, [c_uint64]),
    "nnp_bp_end": (None, [c_uint64]),
    "nnp_fp_start_at": (None, [c_uint64, c_uint64]),
    "nnp_bp_end_at": (None, [c_uint64, c_uint64]),
    # tensor memory
    "nnp_mem_alloc": (None, [POINTER(TensorStruct)]),
    "nnp_mem_free": (None, [c_uint64, c_uint64]),
    "nnp_mem_alloc_at": (None, [POINTER(TensorStruct), c_uint64]),
    "nnp_mem_free_at": (None, [c_uint64, c_uint64, c_uint64]),
    # communication
    "nnp_comm_kind_name": (c_char_p, [c_int]),
    "nnp_comm_since": (None, [POINTER(CommStruct), c_uint64]),
    "nnp_comm_at": (None, [POINTER(CommStruct), c_uint64, c_uint64]),
    # GPU device activity (the CUDA back end fills these; structs passed as opaque pointers)
    "nnp_copy_kind_name": (c_char_p, [c_int]),
    "nnp_memory_kind_name": (c_char_p, [c_int]),
    "nnp_call_kind_name": (c_char_p, [c_int]),
    "nnp_kernel_launch_at": (None, [POINTER(KernelStruct), c_void_p, c_uint64, c_uint64]),
    "nnp_copy_at": (None, [POINTER(KernelStruct), c_void_p, c_uint64, c_uint64]),
    "nnp_comm_kernel_at": (None, [POINTER(CommStruct), c_uint64, c_uint64]),
    "nnp_call_at": (None, [c_void_p, c_uint64, c_uint64]),
    "nnp_correlation_push": (None, [c_uint64]),
    "nnp_correlation_pop": (None, []),
    "nnp_comm_group": (None, [c_uint32, POINTER(ctypes.c_int32), c_uint32, ctypes.c_int32]),
    # data pipeline
    "nnp_pipeline_op": (None, [POINTER(PipelineOpStruct)]),
    "nnp_queue_sample": (None, [c_int64, c_uint32, c_uint32]),
    "nnp_device_queue_sample": (None, [c_uint32, c_uint32]),
    "nnp_queue_sample_at": (None, [c_int64, c_uint32, c_uint32, c_uint64]),
    "nnp_device_queue_sample_at": (None, [c_uint32, c_uint32, c_uint64]),
    # user markers
    "nnp_mark": (None, [c_uint32]),
    "nnp_mark_range_start": (c_uint64, [c_uint32]),
    "nnp_mark_range_stop": (None, [c_uint64]),
    "nnp_mark_at": (None, [c_uint32, c_uint64]),
    # counters
    "nnp_counter": (None, [c_uint32, c_double]),
    "nnp_counter_at": (None, [c_uint32, c_double, c_uint64]),
    # collector back ends (C shims register these; Python passes an opaque pointer)
    "nnp_collector_register": (c_int, [c_void_p]),
    "nnp_collector_unregister": (None, [c_void_p]),
    "nnp_collector_set_correlation": (None, [c_void_p]),
    "nnp_collect_options": (c_int, [POINTER(Options)]),
    # clock alignment across processes
    "nnp_clock_sync_set": (c_int, [POINTER(ClockSync)]),
}


#: File names of the library, the versioned one (what an install has) first.
_NAMES = ("libnnprof.so.0", "libnnprof.so")
#: Directories above the package searched for an installed library: site-packages ->
#: pythonX.Y -> lib -> prefix, one more for Debian's ``pip --prefix P``, which installs
#: into ``P/local/lib/pythonX.Y/dist-packages``.
_PREFIX_LEVELS = 5


def _loaded():
    """Path of a libnnprof already mapped into this process, or None."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                path = line.split(None, 5)[-1].strip() if line.count(" ") >= 5 else ""
                if os.path.basename(path).startswith("libnnprof.so"):
                    return path
    except OSError:
        pass
    return None


def _in_dirs(dirs):
    for d in dirs:
        for name in _NAMES:
            path = os.path.join(d, name)
            if os.path.exists(path):
                yield path


def _candidates():
    """Yields the paths to try, in order of preference."""
    env = os.environ.get("NNPROF_LIBRARY")
    if env:
        yield env
        return  # an explicit choice must not silently fall back to another library
    loaded = _loaded()
    if loaded:
        yield loaded
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, os.pardir, os.pardir, "build", "libnnprof.so")
    up, dirs = here, []
    for _ in range(_PREFIX_LEVELS):
        up = os.path.dirname(up)
        dirs += [up, os.path.join(up, "lib")]
    yield from _in_dirs(dirs)
    cli = shutil.which("nnprof")
    if cli:
        bindir = os.path.dirname(os.path.realpath(cli))
        yield from _in_dirs([os.path.join(bindir, os.pardir, "lib"), bindir])
    found = ctypes.util.find_library("nnprof")
    if found:
        yield found


def _load():
    """Loads libnnprof and sets the prototype of every public function."""
    errors = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            errors.append(f"{path}: no such file")
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as err:
            hint = ""
            if "static TLS" in str(err):
                hint = (" (start Python with GLIBC_TUNABLES=glibc.rtld.optional_static_tls="
                        "16384 or LD_PRELOAD=<libnnprof.so>)")
            errors.append(f"{path}: {err}{hint}")
            continue
        for name, (restype, argtypes) in PROTOTYPES.items():
            fn = getattr(lib, name)  # AttributeError names a function the library lacks
            fn.restype = restype
            fn.argtypes = argtypes
        return lib, os.path.realpath(path) if os.sep in path else path
    raise ImportError("nnprof: cannot load libnnprof (set NNPROF_LIBRARY to its path); tried: "
                      + "; ".join(errors or ["nothing found"]))


#: The loaded library (``ctypes.CDLL``) with every prototype set.
lib, path = _load()


def text(raw):
    """Decodes a ``const char *`` result (``None`` for NULL)."""
    if raw is None:
        return None
    return raw.decode("utf-8", errors="replace")


def encode(value):
    """Encodes a Python string for a ``const char *`` argument (``None`` stays NULL)."""
    if value is None:
        return None
    if isinstance(value, bytes):
        return value
    return os.fsencode(value) if isinstance(value, os.PathLike) else value.encode("utf-8")
