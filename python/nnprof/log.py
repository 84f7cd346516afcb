"""libnnprof's log: level and sink, and a bridge to Python's :mod:`logging`.

The C library prints ``[nnprof] LEVEL: message`` on stderr by default; its option
warnings (MindSpore's "For 'Profiler', the parameter ... must be bool, ...") go there.
:func:`set_handler` replaces that sink by a Python callable, :func:`to_logging` forwards
every line to the ``"nnprof"`` :mod:`logging` logger, and :func:`capture` collects lines
in a list (tests).

The sink may be called from the library's writer thread and, during an asynchronous
analysis, from the forked analysis process; it must not call nnprof itself.
"""

import contextlib
import logging
import os
import threading

from . import _lib

ERROR = 0
WARN = 1
INFO = 2
DEBUG = 3

_LEVEL_NAMES = {"error": ERROR, "warn": WARN, "warning": WARN, "info": INFO, "debug": DEBUG}
_TO_LOGGING = {ERROR: logging.ERROR, WARN: logging.WARNING, INFO: logging.INFO,
               DEBUG: logging.DEBUG}

#: The Python logger used by this package and by :func:`to_logging`.
logger = logging.getLogger("nnprof")

_lock = threading.Lock()
_state = {"handler": None, "c_handler": None, "level": None}


def _level_from_env():
    """The C library's initial level: NNPROF_LOG_LEVEL, default warn (log.c)."""
    return _LEVEL_NAMES.get(os.environ.get("NNPROF_LOG_LEVEL", "").lower(), WARN)


def _as_level(level):
    if isinstance(level, str):
        try:
            return _LEVEL_NAMES[level.lower()]
        except KeyError:
            raise ValueError(f"unknown log level {level!r}; one of error, warn, info, "
                             "debug") from None
    if isinstance(level, bool) or not isinstance(level, int) or not ERROR <= level <= DEBUG:
        raise ValueError(f"unknown log level {level!r}; one of 0 (error) .. 3 (debug)")
    return level


def set_level(level):
    """``nnp_log_set_level``: ``"error"``, ``"warn"``, ``"info"``, ``"debug"`` or 0..3."""
    level = _as_level(level)
    with _lock:
        _lib.lib.nnp_log_set_level(level)
        _state["level"] = level


def get_level():
    """The level in force (the C library has no getter: the one set here, or the
    environment's NNPROF_LOG_LEVEL)."""
    level = _state["level"]
    return _level_from_env() if level is None else level


def get_handler():
    """The Python callable installed by :func:`set_handler`, or ``None``."""
    return _state["handler"]


def set_handler(handler):
    """``nnp_log_set_handler``: ``handler(level: int, message: str)`` receives every
    line at or above the level; ``None`` restores the default stderr sink.

    The ctypes callback object is kept alive here for as long as it is installed.
    """
    with _lock:
        if handler is None:
            _lib.lib.nnp_log_set_handler(_lib.LOG_FN(), None)
            _state["handler"] = _state["c_handler"] = None
            return

        def trampoline(level, msg, _user):
            try:
                handler(level, _lib.text(msg) or "")
            except Exception:  # pylint: disable=broad-except
                # An exception cannot cross the C frame; report it like logging does.
                logger.exception("nnprof log handler failed")

        c_handler = _lib.LOG_FN(trampoline)
        _lib.lib.nnp_log_set_handler(c_handler, None)
        _state["handler"] = handler
        _state["c_handler"] = c_handler  # keep the CFUNCTYPE alive: C holds its address


def to_logging(target=None):
    """Forwards the library's log lines to ``target`` (default: the ``"nnprof"``
    logger) at the matching :mod:`logging` level."""
    target = target or logger

    def forward(level, message):
        target.log(_TO_LOGGING.get(level, logging.WARNING), "%s", message)

    set_handler(forward)


@contextlib.contextmanager
def capture(level=WARN):
    """Context manager collecting the library's log lines as ``(level, message)`` pairs.

    Sets the level for its duration (NNPROF_LOG_LEVEL may hide warnings otherwise) and
    restores the previous level and handler on exit::

        with nnprof.log.capture() as lines:
            nnprof.Profiler(op_time="yes")
        assert any("op_time" in m for _, m in lines)
    """
    lines = []
    old_handler, old_level = get_handler(), get_level()
    set_level(level)
    set_handler(lambda lvl, msg: lines.append((lvl, msg)))
    try:
        yield lines
    finally:
        set_handler(old_handler)
        set_level(old_level)
