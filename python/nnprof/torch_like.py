"""PyTorch-shaped profiler: ``schedule``, ``profile`` and ``record_function``
(torch.profiler), over libnnprof.

Differences from torch.profiler, by design:

* Only ACTIVE steps are recorded: the collection window opens at the first active step
  of a cycle and closes after its last one. WARMUP steps are "prepared but not
  recorded": nnprof needs no warm-up (opening a window costs the same at any time), so a
  warmup step costs exactly what a wait step costs.
* Each active step is recorded as a step (``nnp_step_begin``/``nnp_step_end`` with the
  profiler's step number), so the step trace and the per-step files list exactly the
  active steps.
* ``on_trace_ready(prof)`` is called at the end of each cycle after the window closed and
  its events were flushed; :func:`analyse_trace_handler` makes a handler that analyses
  that cycle's steps. Without ``on_trace_ready``, everything recorded is analysed once
  when the profiler stops (MindSpore style); ``analyse_on_exit`` overrides that.
* ``record_shapes``, ``with_flops`` and ``profile_memory`` gate what ops and tensors
  record through :mod:`nnprof.record` (input shapes/dtypes, FLOPs, tensor allocations);
  ``profile_memory`` is also the session's ``profile_memory`` option. ``activities``,
  ``with_stack`` and ``with_modules`` are accepted and ignored (host data only).
"""

import enum
import functools
import os
import shutil

from . import _session, log, record


class ProfilerAction(enum.Enum):
    """What the profiler does at a step (torch.profiler.ProfilerAction)."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


def schedule(*, wait, warmup, active, repeat=0, skip_first=0):
    """torch.profiler.schedule: skip ``skip_first`` steps, then cycles of ``wait`` idle
    steps, ``warmup`` warm-up steps and ``active`` recorded steps; ``repeat`` cycles
    (0 = as long as the job runs). Returns ``fn(step) -> ProfilerAction``.
    """
    for name, value in (("wait", wait), ("warmup", warmup), ("active", active),
                        ("repeat", repeat), ("skip_first", skip_first)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"schedule: {name} must be int, but got type {type(value)}")
        if value < 0:
            raise ValueError(f"schedule: {name} must be >= 0, but got {value}")
    if active <= 0:
        raise ValueError(f"schedule: active must be > 0, but got {active}")

    def schedule_fn(step):
        if step < 0:
            raise ValueError(f"step must be >= 0, but got {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        num_steps = wait + warmup + active
        if repeat > 0 and step // num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        if mod_step < num_steps - 1:
            return ProfilerAction.RECORD
        return ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _always_record(_step):
    """The schedule without a schedule: every step is recorded, saved at the end."""
    return ProfilerAction.RECORD


def analyse_trace_handler(pretty=False, **analyse_options):
    """An ``on_trace_ready`` handler that analyses the cycle just recorded (its steps
    only). Each analysis rewrites the same result files (docs/OUTPUTS.md); copy them in
    your own handler to keep every cycle's.
    """

    def handler(prof):
        prof.analyse(pretty=pretty, step_list=list(prof.cycle_steps) or None,
                     **analyse_options)

    return handler


class profile:  # pylint: disable=invalid-name,too-many-instance-attributes
    """Profiles a block, torch.profiler style::

        with nnprof.profile(schedule=nnprof.schedule(wait=1, warmup=1, active=2),
                            on_trace_ready=nnprof.analyse_trace_handler()) as prof:
            for batch in data:
                train_step(batch)
                prof.step()

    Args:
        activities: accepted for compatibility, ignored.
        schedule: a :func:`schedule` (or any ``fn(step) -> ProfilerAction``); default:
            every step is recorded.
        on_trace_ready: ``fn(prof)`` called after each cycle's window closed.
        record_shapes, profile_memory, with_flops: what ops and tensors record.
        with_stack, with_modules: accepted, ignored.
        record_steps: record each active step as an nnprof step (default True).
        analyse_on_exit: analyse everything when the profiler stops; default: when no
            ``on_trace_ready`` is given.
        output_path and **options: options of the session, as for
            :class:`~nnprof.Profiler` (``start_profile`` is managed here).
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, record_steps=True,
                 analyse_on_exit=None, output_path=None, **options):
        # pylint: disable=redefined-outer-name,too-many-arguments,too-many-locals
        del activities, with_stack, with_modules
        if "start_profile" in options:
            raise TypeError("profile() manages start_profile itself; use a schedule")
        self.schedule = schedule or _always_record
        # torch.profiler records its steps ("ProfilerStep#N") only with a schedule.
        self._has_schedule = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.record_shapes = bool(record_shapes)
        self.profile_memory = bool(profile_memory)
        self.with_flops = bool(with_flops)
        self.record_steps = bool(record_steps)
        self.analyse_on_exit = (on_trace_ready is None if analyse_on_exit is None
                                else bool(analyse_on_exit))
        self._options = dict(options, output_path=output_path,
                             profile_memory=self.profile_memory)
        self._session = None
        self._raw_dir = self._output_path = None
        self.step_num = 0
        self.current_action = None
        self.cycle = 0
        self.cycle_steps = []
        self.recorded_steps = []
        self._recorded_any = False

    # ---- properties ----

    @property
    def raw_dir(self):
        """The raw directory of the session (None before :meth:`start`)."""
        return self._raw_dir

    @property
    def output_path(self):
        """Absolute output path; results are in ``<output_path>/profiler``."""
        return self._output_path

    @property
    def profiler_dir(self):
        """``<output_path>/profiler`` (None before :meth:`start`)."""
        return os.path.join(self._output_path, "profiler") if self._output_path else None

    def stats(self):
        """Recorder counters of the session (``nnp_session_stats``)."""
        if self._session is None:
            raise RuntimeError("The profiler is not running.")
        return self._session.stats()

    # ---- lifecycle ----

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        """Creates the session (not collecting) and enters step 0 of the schedule."""
        if self._session is not None:
            raise RuntimeError("The profiler has already started. Do not turn on again in "
                               "the open state.")
        opts = _session.build_options(dict(self._options, start_profile=False))
        self._session = _session.Session(opts, memory_setting=self.profile_memory,
                                         shapes=self.record_shapes, flops=self.with_flops)
        self._raw_dir = self._session.raw_dir
        self._output_path = self._session.output_path
        self.step_num = 0
        self.cycle = 0
        self.cycle_steps = []
        self.recorded_steps = []
        self._recorded_any = False
        self.current_action = self.schedule(self.step_num)
        self._transit(ProfilerAction.NONE, self.current_action, None, self.step_num)

    def step(self):
        """Signals the end of a step: moves the schedule to the next step."""
        if self._session is None:
            raise RuntimeError("The profiler has not started, so can not step. Please call "
                               "start() (or enter the with block) first.")
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(prev, self.current_action, self.step_num - 1, self.step_num)

    def stop(self):
        """Closes an open window (calling ``on_trace_ready``), analyses when
        ``analyse_on_exit``, and releases the session."""
        if self._session is None:
            raise RuntimeError("The profiler has not started, so can not stop. Please call "
                               "the start() method before calling the stop() method.")
        try:
            self._transit(self.current_action, None, self.step_num, None)
            if self.analyse_on_exit and self._recorded_any:
                self.analyse()
        finally:
            session, self._session = self._session, None
            session.destroy()
            self.current_action = None

    # ---- schedule transitions (torch.profiler.profile._transit_action) ----

    def _transit(self, prev, cur, prev_step, cur_step):
        """Moves from action ``prev`` (of step ``prev_step``) to ``cur`` (``None``: the
        profiler stops)."""
        prev_rec = prev in _RECORDING
        cur_rec = cur in _RECORDING
        if prev_rec and prev_step is not None and self.record_steps:
            record.step_end(prev_step)
        if prev_rec and (prev is ProfilerAction.RECORD_AND_SAVE or cur is None):
            self._close_window(trace_ready=True)
        elif prev_rec and not cur_rec:
            log.logger.warning("Incorrect schedule: RECORD followed by %s",
                               cur.name if cur else "stop")
            self._close_window(trace_ready=False)
        if cur_rec and cur_step is not None:
            if not self._session.started:
                self._session.start()
                self._recorded_any = True
            if self.record_steps:
                record.step_begin(cur_step)
            self.cycle_steps.append(cur_step)
            self.recorded_steps.append(cur_step)

    def _close_window(self, trace_ready):
        if self._session.started:
            self._session.stop()
        if trace_ready and self.on_trace_ready is not None:
            self.on_trace_ready(self)
        self.cycle += 1
        self.cycle_steps = []

    # ---- results ----

    def analyse(self, pretty=False, step_list=None, **analyse_options):
        """Analyses the data recorded so far (sync), optionally only ``step_list``;
        results go to ``<output_path>/profiler`` (docs/OUTPUTS.md)."""
        if self._session is None:
            raise RuntimeError("The profiler is not running; use "
                               "nnprof.Profiler.offline_analyse(output_path) after stop().")
        aopts = _session.analyse_options(pretty, step_list, False, **analyse_options)
        self._session.analyse(aopts)

    def export_chrome_trace(self, path):
        """Analyses the data recorded so far and copies the timeline
        (``trace_view.json``, Chrome trace format) to ``path``."""
        self.analyse()
        src = os.path.join(self.raw_dir, "ASCEND_PROFILER_OUTPUT", "trace_view.json")
        shutil.copyfile(src, path)


class record_function:  # pylint: disable=invalid-name
    """Records a block or a function as a host range: module ``"Python"``, event
    ``name``, stage ``"Run"``, level 1 (``nnp_range_begin``/``nnp_range_end``); ``args``
    becomes the range's custom info. Use as a context manager or a decorator; ranges
    nest::

        with nnprof.record_function("forward"):
            ...

        @nnprof.record_function("loss")
        def loss_fn(y, t): ...
    """

    __slots__ = ("name", "args", "_tag")

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._tag = record.tag("Python", name, "Run", args, 1)

    def __enter__(self):
        self._tag.begin()
        return self

    def __exit__(self, *exc):
        self._tag.end()
        return False

    def __call__(self, fn):
        tag = self._tag

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            tag.begin()
            try:
                return fn(*args, **kwargs)
            finally:
                tag.end()

        return wrapper
