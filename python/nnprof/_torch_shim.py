"""Internal: loading of the PyTorch shim ``libnnprof_torch.so`` (src/collect/torch/) and
its C interface (``nnprof_torch.h``), for :mod:`nnprof.torch` and the ``NNPROF_TORCH=1``
start-up hook (:mod:`nnprof._boot`).

The shim is searched, in order: ``NNPROF_TORCH_LIBRARY``; beside the loaded libnnprof
(``build/`` of a source tree, or the library directory of an install);
``ctypes.util.find_library("nnprof_torch")``. It is loaded after ``torch`` (it links
libtorch_cpu and c10, which torch has loaded already) and registers itself as the
"torch" collector of libnnprof.
"""

import ctypes
import ctypes.util
import os
import threading
from ctypes import POINTER, Structure, c_bool, c_char_p, c_int, c_uint32, c_uint64

from . import _lib, errors


class Config(Structure):
    """``nnp_torch_config_t``."""

    _fields_ = [
        ("record_shapes", c_bool),
        ("profile_memory", c_bool),
        ("with_flops", c_bool),
        ("with_modules", c_bool),
        ("auto_steps", c_bool),
        ("comm_group", c_uint32),
    ]

    def as_dict(self):
        """The fields as a dict (for tests and messages)."""
        return {name: getattr(self, name) for name, _ in self._fields_}


class Stats(Structure):
    """``nnp_torch_stats_t``."""

    _fields_ = [
        ("windows", c_uint64),
        ("depth_overflow", c_uint64),
        ("unmatched_ends", c_uint64),
        ("flops_errors", c_uint64),
        ("hook_errors", c_uint64),
        ("memory_threads", c_uint64),
        ("stack_nodes_capped", c_uint64),
    ]


_PROTOTYPES = {
    "nnp_torch_config_init": (None, [POINTER(Config)]),
    "nnp_torch_init": (c_int, []),
    "nnp_torch_configure": (c_int, [POINTER(Config)]),
    "nnp_torch_get_config": (None, [POINTER(Config)]),
    "nnp_torch_scope_handle": (c_uint32, [c_char_p]),
    "nnp_torch_scope_push": (None, [c_uint32]),
    "nnp_torch_scope_pop": (None, []),
    "nnp_torch_get_stats": (None, [POINTER(Stats)]),
    "nnp_torch_is_active": (c_bool, []),
}

_lock = threading.Lock()
_shim = None
_path = None
# Profilers between stacks_start and stacks_stop (the tree is shared; _lock guards).
_stack_users = 0


def _candidates():
    env = os.environ.get("NNPROF_TORCH_LIBRARY")
    if env:
        yield env
        return  # an explicit choice must not fall back to another library
    lib_dir = os.path.dirname(os.path.realpath(_lib.path)) if os.sep in _lib.path else ""
    if lib_dir:
        yield os.path.join(lib_dir, "libnnprof_torch.so")
    found = ctypes.util.find_library("nnprof_torch")
    if found:
        yield found


def load():
    """Loads the shim (once) and registers it with libnnprof; returns the ``CDLL``.

    Raises ImportError naming every path tried when it cannot be loaded (libnnprof was
    built without libtorch-dev, or for another torch).
    """
    global _shim, _path  # pylint: disable=global-statement
    with _lock:
        if _shim is not None:
            return _shim
        import torch  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
        tried = []
        for path in _candidates():
            if os.sep in path and not os.path.exists(path):
                tried.append(f"{path}: no such file")
                continue
            try:
                shim = ctypes.CDLL(path)
            except OSError as err:
                tried.append(f"{path}: {err}")
                continue
            for name, (restype, argtypes) in _PROTOTYPES.items():
                fn = getattr(shim, name)
                fn.restype = restype
                fn.argtypes = argtypes
            errors.check(shim.nnp_torch_init(), "nnp_torch_init")
            _shim, _path = shim, path
            return shim
        raise ImportError("nnprof.torch: cannot load the PyTorch shim libnnprof_torch.so "
                          "(build nnprof with libtorch-dev installed, or set "
                          "NNPROF_TORCH_LIBRARY); tried: " + "; ".join(tried or ["nothing"]))


_py_shim = None  # the shim again, as a ctypes.PyDLL: its calls keep the GIL


def _py():
    """The shim's Python-facing calls (torch_stacks.cpp), which must hold the GIL: the
    library loaded again as a ``ctypes.PyDLL``. None when it was built without Python's
    headers (no stacks)."""
    global _py_shim  # pylint: disable=global-statement
    load()
    with _lock:
        if _py_shim is None:
            lib = ctypes.PyDLL(_path)
            if not hasattr(lib, "nnp_torch_stacks_start"):
                return None
            lib.nnp_torch_stacks_start.restype = c_int
            lib.nnp_torch_stacks_start.argtypes = [ctypes.py_object, ctypes.py_object]
            lib.nnp_torch_stacks_thread.restype = c_int
            lib.nnp_torch_stacks_thread.argtypes = []
            lib.nnp_torch_stacks_stop.restype = None
            lib.nnp_torch_stacks_stop.argtypes = []
            _py_shim = lib
        return _py_shim


def has_stacks():
    """Whether the shim can record Python stacks (``with_stack``); False also when the
    shim cannot be loaded (starting the profiler then says why)."""
    try:
        return _py() is not None
    except ImportError:
        return False


def _thread_hook(_frame, _event, _arg):
    """threading.setprofile's function: a thread started while stacks are kept hands
    itself to the shim (whose profile function then replaces this one)."""
    lib = _py()
    if lib is not None:
        lib.nnp_torch_stacks_thread()


def stacks_start():
    """Starts keeping the Python stack of every thread (``with_stack``): the shim's ops
    then carry it, framed as torch.profiler frames its own. Counted: profilers with stacks
    alive at once share the shim's one tree, which lives until the last of them stops."""
    global _stack_users  # pylint: disable=global-statement
    import torch  # pylint: disable=import-outside-toplevel
    from torch.profiler import python_tracer  # pylint: disable=import-outside-toplevel
    lib = _py()
    if lib is None:
        raise errors.NnprofError(errors.EINVAL, "the PyTorch shim was built without Python's "
                                 "headers: no stacks")
    with _lock:
        if _stack_users == 0:
            errors.check(lib.nnp_torch_stacks_start(torch.nn.Module.__call__.__code__,
                                                    list(python_tracer._prefix_regex())),
                         "nnp_torch_stacks_start")
            threading.setprofile(_thread_hook)
        _stack_users += 1


def stacks_stop():
    """Stops keeping stacks (every thread's profile function removed) once no profiler
    that started them is left (:func:`stacks_start`)."""
    global _stack_users  # pylint: disable=global-statement
    lib = _py()
    if lib is None:
        return
    with _lock:
        if _stack_users == 0:
            return
        _stack_users -= 1
        if _stack_users == 0:
            threading.setprofile(None)
            lib.nnp_torch_stacks_stop()


def path():
    """The path of the loaded shim (None before :func:`load`)."""
    return _path


def get_config():
    """The shim's configuration (a :class:`Config`)."""
    cfg = Config()
    load().nnp_torch_get_config(ctypes.byref(cfg))
    return cfg


def configure(cfg):
    """Replaces the shim's configuration; returns the previous one."""
    old = get_config()
    errors.check(load().nnp_torch_configure(ctypes.byref(cfg)), "nnp_torch_configure")
    return old


def stats():
    """The shim's anomaly counters as a dict."""
    st = Stats()
    load().nnp_torch_get_stats(ctypes.byref(st))
    return {name: getattr(st, name) for name, _ in Stats._fields_}


def is_active():
    """Whether the shim's callbacks are installed (a window is open)."""
    return bool(load().nnp_torch_is_active())


def format_ranks(ranks):
    """``[0, 1, 2, 5]`` -> ``"0-2,5"``: the rank text of a group descriptor."""
    out, ranks = [], sorted(set(int(r) for r in ranks))
    i = 0
    while i < len(ranks):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] == ranks[j] + 1:
            j += 1
        out.append(str(ranks[i]) if i == j else f"{ranks[i]}-{ranks[j]}")
        i = j + 1
    return ",".join(out)


def group_descriptor(name, ranks):
    """The group text collectives are recorded with: ``"default_pg(ranks=0-1)"``."""
    return f"{name}(ranks={format_ranks(ranks)})"
