"""nnprof: a neural-network profiler for Python, over the C library libnnprof (ctypes,
no third-party packages).

Two shapes of the same profiler:

* MindSpore: :class:`Profiler` (``start``, ``stop``, ``analyse``, ``offline_analyse``,
  ``op_analyse``) and the :class:`StopAtStep` / :class:`StopAtEpoch` window helpers;
* PyTorch: :func:`schedule`, :class:`profile` and :class:`record_function`.

Framework authors record ops, kernels, memory, communication and queues with
:mod:`nnprof.record`. A failing C call raises :class:`NnprofError` (a RuntimeError) with
the library's message. See docs/PYTHON.md.
"""

from . import _lib, log, record
from ._session import ProfilerLevel
from .callbacks import StopAtEpoch, StopAtStep
from .errors import NnprofError, last_error, strerror
from .profiler import Profiler
from .torch_like import (ProfilerAction, analyse_trace_handler, profile, record_function,
                         schedule)

#: Version of the loaded libnnprof (``nnp_version()``).
__version__ = _lib.text(_lib.lib.nnp_version())

#: Path of the loaded libnnprof.
library_path = _lib.path


def version():
    """``nnp_version()``: the version of the library actually loaded."""
    return __version__


__all__ = [
    "NnprofError", "Profiler", "ProfilerAction", "ProfilerLevel", "StopAtEpoch",
    "StopAtStep", "analyse_trace_handler", "last_error", "library_path", "log", "profile",
    "record", "record_function", "schedule", "strerror", "version",
]
