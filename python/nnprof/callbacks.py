"""Step and epoch window helpers, after the seed's StopAtStep / StopAtEpoch callbacks.

They own a :class:`~nnprof.Profiler` created with ``start_profile=False``, open the
window at the first step (epoch) and close it after the last one, record the step
(epoch) boundaries inside the window, and analyse at the end. Their methods have
MindSpore's Callback names and accept either a step number or a MindSpore
``run_context`` (``run_context.original_args().cur_step_num``); without an argument
they count steps themselves from 1::

    cb = nnprof.StopAtStep(start_step=3, stop_step=5, output_path="./data_step")
    for step in range(1, 11):
        cb.on_train_step_begin(step)
        train_one_step()
        cb.on_train_step_end(step)
    cb.on_train_end()
"""

from . import record
from .profiler import Profiler


def _number(arg, attr, counter):
    """The step/epoch number from an int, a MindSpore run_context, or the counter."""
    if arg is None:
        return counter
    if isinstance(arg, int) and not isinstance(arg, bool):
        return arg
    if hasattr(arg, "original_args"):
        return getattr(arg.original_args(), attr)
    return getattr(arg, attr)


def _check_window(cls, first, last, what):
    for name, value in ((f"start_{what}", first), (f"stop_{what}", last)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"For '{cls}', the parameter {name} must be int, but got type "
                            f"{type(value)}")
    if first > last:
        raise ValueError(f"For '{cls}', start_{what} ({first}) must not be greater than "
                         f"stop_{what} ({last}).")


class _Window:
    """Shared logic of StopAtStep and StopAtEpoch."""

    _attr = ""
    _what = ""

    def __init__(self, first, last, analyse=True, record_boundaries=True, **profiler_options):
        _check_window(type(self).__name__, first, last, self._what)
        self.first = first
        self.last = last
        self.analyse = analyse
        self.record_boundaries = record_boundaries
        self.profiler = Profiler(start_profile=False, **profiler_options)
        self._count = 0
        self._done = False

    def _begin(self, arg):
        self._count += 1
        n = _number(arg, self._attr, self._count)
        self._count = n
        if self._done:
            return
        if n == self.first:
            self.profiler.start()
        if self.record_boundaries and self.first <= n <= self.last:
            self._record_begin(n)

    def _end(self, arg):
        n = _number(arg, self._attr, self._count)
        if self._done:
            return
        if self.record_boundaries and self.first <= n <= self.last:
            self._record_end(n)
        if n == self.last:
            self._finish()

    def _finish(self):
        self._done = True
        if self.profiler.started:
            self.profiler.stop()
        if self.analyse:
            self.profiler.analyse()
        else:
            self.profiler.close()

    def on_train_end(self, run_context=None):
        """End of training: closes the window if still open and analyses (once)."""
        del run_context
        if not self._done:
            self._finish()

    end = on_train_end

    def _record_begin(self, n):
        raise NotImplementedError

    def _record_end(self, n):
        raise NotImplementedError


class StopAtStep(_Window):
    """Profiles steps ``start_step`` .. ``stop_step`` (inclusive).

    Args:
        start_step, stop_step (int): the window, in the training's step numbers.
        analyse (bool): analyse when the window closes (default ``True``; else the
            session is just released and :meth:`Profiler.offline_analyse` can run later).
        record_boundaries (bool): record each step's begin and end
            (``nnp_step_begin``/``nnp_step_end``) for the step trace (default ``True``).
        **profiler_options: options of :class:`~nnprof.Profiler`.
    """

    _attr = "cur_step_num"
    _what = "step"

    def __init__(self, start_step, stop_step, analyse=True, record_boundaries=True,
                 **profiler_options):
        super().__init__(start_step, stop_step, analyse, record_boundaries,
                         **profiler_options)

    def on_train_step_begin(self, run_context=None):
        """Start of a step: opens the window at ``start_step``."""
        self._begin(run_context)

    def on_train_step_end(self, run_context=None):
        """End of a step: closes the window (and analyses) after ``stop_step``."""
        self._end(run_context)

    step_begin = on_train_step_begin
    step_end = on_train_step_end

    def _record_begin(self, n):
        record.step_begin(n)

    def _record_end(self, n):
        record.step_end(n)


class StopAtEpoch(_Window):
    """Profiles epochs ``start_epoch`` .. ``stop_epoch`` (inclusive); as
    :class:`StopAtStep`, recording epoch boundaries (``nnp_epoch_begin``/``_end``)."""

    _attr = "cur_epoch_num"
    _what = "epoch"

    def __init__(self, start_epoch, stop_epoch, analyse=True, record_boundaries=True,
                 **profiler_options):
        super().__init__(start_epoch, stop_epoch, analyse, record_boundaries,
                         **profiler_options)

    def on_train_epoch_begin(self, run_context=None):
        """Start of an epoch: opens the window at ``start_epoch``."""
        self._begin(run_context)

    def on_train_epoch_end(self, run_context=None):
        """End of an epoch: closes the window (and analyses) after ``stop_epoch``."""
        self._end(run_context)

    epoch_begin = on_train_epoch_begin
    epoch_end = on_train_epoch_end

    def _record_begin(self, n):
        record.epoch_begin(n)

    def _record_end(self, n):
        record.epoch_end(n)
