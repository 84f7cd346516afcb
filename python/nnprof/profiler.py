"""MindSpore-shaped profiler: ``Profiler(**options)``, ``start()``, ``stop()``,
``analyse()``, ``Profiler.offline_analyse()`` and ``op_analyse()`` (seed 000,
mindspore.Profiler), over libnnprof.
"""

import os

from . import _session, log
from ._session import ProfilerLevel

ANALYSIS_SYNC_MODE = "sync"
ANALYSIS_ASYNC_MODE = "async"


class Profiler:
    """Profiles the process, MindSpore style.

    Args:
        output_path (str): where results go (``<output_path>/profiler``). Default
            ``"./data"``, or the environment's ``MS_DIAGNOSTIC_DATA_PATH``.
        start_profile (bool): start collecting at once (default ``True``); with
            ``False``, call :meth:`start` and :meth:`stop` around the steps to profile.
        **options: the other options of MindSpore's Profiler (``op_time``,
            ``profile_memory``, ``profile_communication``, ``timeline_limit``,
            ``profile_framework``, ``profiler_level``, ``aicore_metrics``, ...), msprof's
            (``msproftx``, ``fp_point``, ``bp_point``, ``host_sys``, ``storage_limit``,
            ...) and nnprof's recorder settings (``buffer_size_kb``, ``full_policy``,
            ``writer_period_ms``, ``sample_interval_ms``, ...). The C library checks
            them: a wrong type or value is logged as a warning (MindSpore's text) and
            replaced by the default; an unknown key is logged and ignored.

    Raises:
        TypeError: ``start_profile`` is not a bool.
        NnprofError: the C library refused the options or the session (invalid output
            path, another session in this process, PROFILING_MODE set, ...).

    Only one profiler (of either shape) may be alive per process. :meth:`analyse`
    finishes it; :meth:`close` (or leaving a ``with`` block) releases it without
    analysing.
    """

    Level0 = ProfilerLevel.Level0
    Level1 = ProfilerLevel.Level1
    Level2 = ProfilerLevel.Level2

    def __init__(self, *, output_path=None, start_profile=True, **options):
        if not isinstance(start_profile, bool):
            raise TypeError(f"For '{self.__class__.__name__}', the parameter start_profile "
                            f"must be bool, but got type {type(start_profile)}")
        self._session = None
        self._async_pending = False
        kwargs = dict(options)
        kwargs["output_path"] = output_path
        kwargs["start_profile"] = start_profile
        opts = _session.build_options(kwargs)
        self._session = _session.Session(opts)
        self._options = opts
        self._raw_dir = self._session.raw_dir
        self._output_path = self._session.output_path

    # ---- properties ----

    @property
    def output_path(self):
        """Absolute output path; results are in ``<output_path>/profiler``."""
        return self._output_path

    @property
    def profiler_dir(self):
        """``<output_path>/profiler``: the ``*_{rank}`` result files and raw directories."""
        return os.path.join(self._output_path, "profiler")

    @property
    def raw_dir(self):
        """This process's raw directory ``<output_path>/profiler/PROF_<time>_<host>_<pid>``.

        It is made when the first event is written (``flush()`` makes it at once)."""
        return self._raw_dir

    @property
    def device_id(self):
        """The device id of this process (option ``device_id`` or DEVICE_ID)."""
        return self._options.device_id

    @property
    def rank_id(self):
        """The rank id of this process (option ``rank_id`` or RANK_ID)."""
        return self._options.rank_id

    @property
    def started(self):
        """Whether a collection window is open."""
        return bool(self._session and self._session.started)

    @property
    def closed(self):
        """Whether the session was released (by :meth:`analyse` or :meth:`close`)."""
        return self._session is None or not self._session.alive

    def options(self):
        """Every option as the C library resolved it (``nnp_options_to_json``)."""
        return _session.options_to_dict(self._options)

    def stats(self):
        """Recorder counters (``nnp_session_stats``): events recorded and dropped, bytes."""
        return self._live_session().stats()

    # ---- lifecycle ----

    def _live_session(self):
        if self._session is None or not self._session.alive:
            raise RuntimeError("The profiler has been analysed or closed; create a new "
                               "Profiler to profile again.")
        return self._session

    def start(self):
        """Starts collecting (a new window; any number may follow each other).

        Raises:
            RuntimeError: the profiler has already started (NnprofError with
                "The profiler has already started. Do not turn on again in the open
                state."), or it was analysed or closed.
        """
        self._live_session().start()

    def stop(self):
        """Stops collecting and flushes the window's events to disk.

        Raises:
            RuntimeError: the profiler has not started (NnprofError with "The profiler
                has not started, so can not stop. Please call the start() method before
                calling the stop() method."), or it was analysed or closed.
        """
        self._live_session().stop()

    def flush(self):
        """Writes every event recorded so far to disk (``nnp_session_flush``)."""
        self._live_session().flush()

    def close(self):
        """Stops, flushes, finalises info.json and releases the session without
        analysing (waits for a pending asynchronous analysis first). Idempotent."""
        try:
            if self._async_pending:
                self.wait()
        finally:
            if self._session is not None:
                self._session.destroy()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            if self._session is not None:
                self._session.destroy()
        except Exception:  # pylint: disable=broad-except
            pass

    # ---- analysis ----

    def analyse(self, offline_path=None, pretty=False, step_list=None, mode="sync",
                **analyse_options):
        """Stops collecting and analyses the data (the seed's Profiler.analyse).

        Args:
            offline_path (str, optional): analyse the data under this path offline
                instead (:meth:`offline_analyse`); the session is left as it is.
            pretty (bool): indent JSON outputs. A non-bool is ignored with a warning.
            step_list (list, optional): continuous step ids to analyse; default all.
            mode (str): ``"sync"`` analyses here; ``"async"`` in a child process
                (call :meth:`wait` for the result). Any other value: a warning, then
                ``"sync"``.
            **analyse_options: other fields of ``nnp_analyse_options_t``: ``jobs``,
                ``rank``, ``graph_id``, ``timeline_summary``, ``is_developer``,
                ``quiet``, ``peak_flops``, ``memory_capacity_bytes``.

        Online analysis finishes the profiler: the session is released afterwards
        (MindSpore's analyse ends profiling), so a new Profiler may be created.

        Raises:
            TypeError: step_list is not a list ("Parameter step_list must be a list."),
                holds non-integers ("The elements of the parameter step_list must be
                integers."), or offline_path is not a str.
            ValueError: step_list is not continuous ("The elements of the parameter
                step_list must be continuous integers.").
            NnprofError: the analysis failed (results of the analyses that succeeded
                are still written).
        """
        if not isinstance(pretty, bool):
            log.logger.warning("For analyse, the parameter pretty must be bool, but got type "
                               "%s, it will be set to False.", type(pretty))
            pretty = False
        if mode not in (ANALYSIS_SYNC_MODE, ANALYSIS_ASYNC_MODE):
            log.logger.warning("For analyse, the parameter mode must be one of ['sync', "
                               "'async'], it will be set to 'sync'.")
            mode = ANALYSIS_SYNC_MODE
        if offline_path is not None and not isinstance(offline_path, (str, os.PathLike)):
            raise TypeError("For analyse, the type of parameter offline_path must be str.")
        aopts = _session.analyse_options(pretty, step_list, mode == ANALYSIS_ASYNC_MODE,
                                         **analyse_options)
        if offline_path is not None:
            aopts.async_ = False
            _session.offline_analyse(os.fspath(offline_path), aopts)
            return
        session = self._live_session()
        try:
            session.analyse(aopts)
            self._async_pending = bool(aopts.async_)
        finally:
            # The forked analysis has its own copy of the data written so far: the
            # session can be finalised at once in both modes.
            session.destroy()

    def wait(self):
        """Waits for an ``analyse(mode="async")`` to finish (``nnp_analyse_wait``).

        Raises:
            NnprofError: the asynchronous analysis failed.
        """
        self._async_pending = False
        _session.analyse_wait()

    @classmethod
    def offline_analyse(cls, path, pretty=False, step_list=None, **analyse_options):
        """Analyses the data left under ``path`` by a run, crashed or not: ``path`` must
        hold a ``profiler`` directory; every raw directory in it (one per rank) is
        analysed, ``jobs`` at a time (``nnp_offline_analyse``).

        Raises:
            TypeError / ValueError: as :meth:`analyse` for step_list.
            NnprofError: "There must be a profiler folder in the data path: <path>."
                (NNP_ENOENT) or the first analysis error.
        """
        del cls
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError("For offline_analyse, the type of parameter path must be str.")
        aopts = _session.analyse_options(bool(pretty) if isinstance(pretty, bool) else False,
                                         step_list, False, **analyse_options)
        _session.offline_analyse(os.fspath(path), aopts)

    def op_analyse(self, op_name, device_id=None):
        """Count and total/avg/min/max time (µs) of operators (the seed's op_analyse).

        Args:
            op_name (str or list): op full names or op types; a str may list several
                separated by commas.
            device_id (int, optional): the device whose data to query; default this
                profiler's data.

        Returns:
            list of dict: one per name, in order: ``op_name``, ``count``,
            ``total_time_us``, ``avg_time_us``, ``min_time_us``, ``max_time_us``
            (count 0 when the op was not found).

        Raises:
            TypeError: device_id is not an int, op_name is not a str or a list of str,
                or it is empty.
            NnprofError: no profiling data was found.
        """
        if device_id and not isinstance(device_id, int) or isinstance(device_id, bool):
            raise TypeError(f"For 'Profiler.op_analyse()', the parameter device_id must be "
                            f"int, but got type {type(device_id)}")
        if not isinstance(op_name, (str, list)):
            raise TypeError(f"For 'Profiler.op_analyse()', the parameter op_name must be str "
                            f"or list, but got type {type(op_name)}")
        if not op_name:
            raise TypeError("For 'Profiler.op_analyse()', the parameter op_name cannot be "
                            "\"\", '' or [].")
        if isinstance(op_name, str):
            names = [n.strip() for n in op_name.split(",")]
        else:
            if not all(isinstance(n, str) for n in op_name):
                raise TypeError("For 'Profiler.op_analyse()', the elements of the parameter "
                                "op_name must be str.")
            names = list(op_name)
        if self._session is not None and self._session.alive:
            self._session.flush()
        if device_id is None or device_id == self.device_id:
            return _session.op_analyse(self._raw_dir, names, -1)
        return _session.op_analyse(self._output_path, names, device_id)
