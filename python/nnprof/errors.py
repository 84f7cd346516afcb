"""Error mapping: a failing libnnprof call becomes :class:`NnprofError`.

Every C function returns ``NNP_OK`` (0) or a negative ``NNP_E*`` code and leaves a detail
message for the calling thread in ``nnp_last_error()``. :func:`check` turns such a code into
an :class:`NnprofError` that carries the code, its name and the C message, so
``str(err)`` is exactly the library's text (for example MindSpore's
"The profiler has already started. Do not turn on again in the open state.").
"""

from . import _lib

# NNP_ERRNO_MAP of nnprof.h: name -> number.
OK = 0
EINVAL = -1
ENOMEM = -2
EIO = -3
ESTATE = -4
EBUSY = -5
ECONFLICT = -6
ENOENT = -7
ECORRUPT = -8
ETRUNC = -9
ETOOLONG = -10
EPATH = -11
EVERSION = -12
ENOTSUP = -13
EPERM = -14

#: Code -> ``NNP_E*`` name, for messages and :attr:`NnprofError.errno_name`.
ERRNO_NAMES = {
    OK: "NNP_OK", EINVAL: "NNP_EINVAL", ENOMEM: "NNP_ENOMEM", EIO: "NNP_EIO",
    ESTATE: "NNP_ESTATE", EBUSY: "NNP_EBUSY", ECONFLICT: "NNP_ECONFLICT",
    ENOENT: "NNP_ENOENT", ECORRUPT: "NNP_ECORRUPT", ETRUNC: "NNP_ETRUNC",
    ETOOLONG: "NNP_ETOOLONG", EPATH: "NNP_EPATH", EVERSION: "NNP_EVERSION",
    ENOTSUP: "NNP_ENOTSUP", EPERM: "NNP_EPERM",
}


class NnprofError(RuntimeError):
    """A libnnprof call failed.

    Attributes:
        code: the negative ``NNP_E*`` code the C function returned.
        errno_name: its name, e.g. ``"NNP_EPATH"``.
        strerror: the code's description from ``nnp_strerror()``, e.g. ``"invalid path"``.
        message: the detail message from ``nnp_last_error()`` (``strerror`` when the
            library left none); ``str(err)`` is this message.
        function: the C function that failed, or ``None``.
    """

    def __init__(self, code, message=None, function=None):
        self.code = code
        self.errno_name = ERRNO_NAMES.get(code, f"NNP_E({code})")
        self.strerror = strerror(code)
        self.message = message or self.strerror
        self.function = function
        super().__init__(self.message)

    def __repr__(self):
        return f"NnprofError({self.errno_name}, {self.message!r})"


def strerror(code):
    """Returns ``nnp_strerror(code)``: the static description of an error code."""
    return _lib.text(_lib.lib.nnp_strerror(code))


def last_error():
    """Returns ``nnp_last_error()``: the detail of the calling thread's last failure."""
    return _lib.text(_lib.lib.nnp_last_error()) or ""


def check(rc, function=None):
    """Returns ``rc`` when it is not negative, else raises :class:`NnprofError`.

    Must be called right after the failing C call, on the same thread (the message is
    thread-local and the next nnprof call may replace it).
    """
    if rc >= 0:
        return rc
    raise NnprofError(rc, last_error(), function)
