"""MindSpore-shaped Profiler: lifecycle, options, analyse, offline_analyse, op_analyse,
and the StopAtStep / StopAtEpoch helpers."""

import os
import unittest

import nnprof
from nnprof import errors, record

from .support import NnprofTestCase, dump, host_timeline, step_trace_steps

ALREADY_STARTED = "The profiler has already started. Do not turn on again in the open state."
NOT_STARTED = ("The profiler has not started, so can not stop. Please call the start() "
               "method before calling the stop() method.")


def run_steps(first, last, op=None):
    """Records steps first..last, each with one op and one Python range."""
    for step in range(first, last + 1):
        record.step_begin(step)
        with nnprof.record_function(f"work{step}"):
            if op is not None:
                with op:
                    pass
        record.step_end(step)


class TestLifecycle(NnprofTestCase):
    def test_start_profile_default_starts(self):
        prof = nnprof.Profiler(output_path=self.tmp, sample_interval_ms=0)  # no samples
        self.assertTrue(prof.started)
        self.assertTrue(record.is_collecting())
        # The raw directory is made for the first event (or a flush), not before.
        self.assertFalse(os.path.exists(prof.raw_dir))
        prof.flush()
        self.assertTrue(os.path.isdir(prof.raw_dir))
        self.assertEqual(os.path.dirname(prof.raw_dir), prof.profiler_dir)
        self.assertEqual(prof.output_path, os.path.abspath(self.tmp))
        prof.stop()
        self.assertFalse(prof.started)
        self.assertFalse(record.is_collecting())

    def test_start_twice_raises_c_message(self):
        prof = nnprof.Profiler(output_path=self.tmp)
        with self.assertRaises(RuntimeError) as cm:
            prof.start()
        self.assertIsInstance(cm.exception, nnprof.NnprofError)
        self.assertEqual(str(cm.exception), ALREADY_STARTED)
        self.assertEqual(cm.exception.code, errors.ESTATE)

    def test_stop_without_start_raises_seed_text(self):
        prof = nnprof.Profiler(output_path=self.tmp, start_profile=False)
        self.assertFalse(prof.started)
        with self.assertRaises(RuntimeError) as cm:
            prof.stop()
        self.assertEqual(str(cm.exception), NOT_STARTED)

    def test_windows(self):
        prof = nnprof.Profiler(output_path=self.tmp, start_profile=False)
        run_steps(1, 2)  # not collecting: nothing recorded
        prof.start()
        run_steps(3, 4)
        prof.stop()
        run_steps(5, 6)
        prof.start()
        run_steps(7, 7)
        prof.stop()
        prof.analyse()
        self.assertEqual(step_trace_steps(prof.profiler_dir), [3, 4, 7])

    def test_start_profile_type_error(self):
        with self.assertRaises(TypeError) as cm:
            nnprof.Profiler(output_path=self.tmp, start_profile="yes")
        self.assertEqual(str(cm.exception), "For 'Profiler', the parameter start_profile must "
                                            "be bool, but got type <class 'str'>")

    def test_one_session_per_process(self):
        prof = nnprof.Profiler(output_path=self.tmp)
        with self.assertRaises(nnprof.NnprofError) as cm:
            nnprof.Profiler(output_path=self.tmp)
        self.assertEqual(cm.exception.code, errors.EBUSY)
        self.assertIn("already exists", str(cm.exception))
        prof.close()
        nnprof.Profiler(output_path=self.tmp).close()

    def test_closed_profiler(self):
        prof = nnprof.Profiler(output_path=self.tmp)
        prof.analyse()
        self.assertTrue(prof.closed)
        with self.assertRaisesRegex(RuntimeError, "analysed or closed"):
            prof.start()
        prof.close()  # idempotent

    def test_context_manager_closes(self):
        with nnprof.Profiler(output_path=self.tmp) as prof:
            run_steps(1, 1)
        self.assertTrue(prof.closed)
        self.assertFalse(record.is_collecting())
        with open(os.path.join(prof.raw_dir, "info.json"), encoding="utf-8") as f:
            self.assertIn("finalized", f.read())

    def test_stats(self):
        prof = nnprof.Profiler(output_path=self.tmp)
        run_steps(1, 3)
        prof.flush()
        st = prof.stats()
        self.assertGreaterEqual(st["events_recorded"], 12)
        self.assertEqual(st["events_dropped"], 0)


class TestOptions(NnprofTestCase):
    def test_bad_output_path_raises_c_message(self):
        with self.assertRaises(nnprof.NnprofError) as cm:
            nnprof.Profiler(output_path="bad\npath")
        self.assertEqual(cm.exception.code, errors.EPATH)
        self.assertIn("forbidden character", str(cm.exception))

    def test_output_path_is_a_file(self):
        path = self.path("file")
        with open(path, "w", encoding="utf-8") as f:
            f.write("x")
        with self.assertRaises(nnprof.NnprofError) as cm:
            nnprof.Profiler(output_path=path)
        self.assertIn(path, str(cm.exception))

    def test_profiling_mode_conflict(self):
        os.environ["PROFILING_MODE"] = "true"
        self.addCleanup(os.environ.pop, "PROFILING_MODE", None)
        with self.assertRaises(nnprof.NnprofError) as cm:
            nnprof.Profiler(output_path=self.tmp)
        self.assertEqual(cm.exception.code, errors.ECONFLICT)
        self.assertEqual(str(cm.exception), "Profiling is already enabled by PROFILING_MODE env.")

    def test_wrong_types_warn_and_default(self):
        with nnprof.log.capture() as lines:
            prof = nnprof.Profiler(output_path=self.tmp, op_time="yes", timeline_limit=0,
                                   aicore_metrics=9, no_such_key=1)
        text = "\n".join(msg for _, msg in lines)
        self.assertIn("For 'Profiler', the parameter op_time must be bool, but got type str",
                      text)
        self.assertIn("[Profiler]The 'timeline_limit' parameter must be greater than 0, it "
                      "will be set to 500.", text)
        self.assertIn("aicore_metrics must be in", text)
        self.assertIn("no_such_key is an invalid param which doesn't work.", text)
        opts = prof.options()
        self.assertTrue(opts["op_time"])
        self.assertEqual(opts["timeline_limit"], 500)
        self.assertEqual(opts["aicore_metrics"], 0)

    def test_options_reach_the_session(self):
        prof = nnprof.Profiler(output_path=self.tmp, profile_memory=True, msproftx=True,
                               host_sys=["cpu", "mem"], storage_limit=500,
                               profiler_level=nnprof.Profiler.Level1, rank_id=2,
                               sample_interval_ms=0)
        opts = prof.options()
        self.assertTrue(opts["profile_memory"])
        self.assertEqual(opts["msproftx"], "on")
        self.assertEqual(opts["host_sys"], "cpu,mem")
        self.assertEqual(opts["storage_limit"], "500MB")
        self.assertEqual(opts["profiler_level"], "Level1")
        self.assertFalse(opts["data_process"])  # Level1's side effect (seed)
        self.assertEqual(prof.rank_id, 2)
        prof.analyse()
        self.assertTrue(os.path.exists(os.path.join(prof.profiler_dir,
                                                    "profiler_info_2.json")))

    def test_profile_memory_gates_tensor_records(self):
        tensor = record.Tensor(0x10, 64, "w")
        # profile_memory False (default); no samples, so nothing at all is recorded
        prof = nnprof.Profiler(output_path=self.tmp, sample_interval_ms=0)
        tensor.alloc()
        prof.close()
        self.assertFalse(os.path.exists(prof.raw_dir))  # nothing recorded: nothing left
        prof = nnprof.Profiler(output_path=self.tmp, profile_memory=True)
        tensor.alloc()
        prof.close()
        self.assertEqual(len([r for r in dump(prof.raw_dir) if r["kind"] == "mem_alloc"]), 1)


class TestAnalyse(NnprofTestCase):
    def test_analyse_writes_results(self):
        prof = nnprof.Profiler(output_path=self.tmp)
        run_steps(1, 3, record.Op("net/Dense-op1", "MatMul"))
        prof.analyse(pretty=True)
        for name in ("op_statistic_0.csv", "step_trace_raw_0_detail_time.csv",
                     "profiler_info_0.json", "op_statistic_top20_0.json"):
            self.assertTrue(os.path.exists(os.path.join(prof.profiler_dir, name)), name)
        self.assertTrue(os.path.exists(os.path.join(prof.raw_dir, "ASCEND_PROFILER_OUTPUT",
                                                    "trace_view.json")))
        self.assertEqual(step_trace_steps(prof.profiler_dir), [1, 2, 3])
        with open(os.path.join(prof.profiler_dir, "profiler_info_0.json"),
                  encoding="utf-8") as f:
            self.assertTrue(f.read().startswith("{\n"))  # pretty

    def test_step_list_errors(self):
        prof = nnprof.Profiler(output_path=self.tmp)
        with self.assertRaises(TypeError) as cm:
            prof.analyse(step_list="1-3")
        self.assertEqual(str(cm.exception), "Parameter step_list must be a list.")
        with self.assertRaises(TypeError) as cm:
            prof.analyse(step_list=[1, "2"])
        self.assertEqual(str(cm.exception),
                         "The elements of the parameter step_list must be integers.")
        with self.assertRaises(ValueError) as cm:
            prof.analyse(step_list=[1, 3])
        self.assertEqual(str(cm.exception),
                         "The elements of the parameter step_list must be continuous integers.")
        with self.assertRaises(TypeError):
            prof.analyse(offline_path=5)
        self.assertFalse(prof.closed)  # argument errors leave the profiler usable
        self.assertTrue(prof.started)

    def test_step_list_selects_steps(self):
        prof = nnprof.Profiler(output_path=self.tmp)
        run_steps(1, 6)
        prof.analyse(step_list=[4, 2, 3])
        self.assertEqual(step_trace_steps(prof.profiler_dir), [2, 3, 4])

    def test_bad_mode_warns_and_runs_sync(self):
        prof = nnprof.Profiler(output_path=self.tmp)
        run_steps(1, 2)
        with self.assertLogs("nnprof", "WARNING") as cm:
            prof.analyse(mode="later")
        self.assertIn("the parameter mode must be one of ['sync', 'async']", cm.output[0])
        self.assertEqual(step_trace_steps(prof.profiler_dir), [1, 2])

    def test_async_mode(self):
        prof = nnprof.Profiler(output_path=self.tmp)
        run_steps(1, 4)
        prof.analyse(mode="async")
        self.assertTrue(prof.closed)
        prof.wait()
        self.assertEqual(step_trace_steps(prof.profiler_dir), [1, 2, 3, 4])
        prof.wait()  # nothing pending: no error

    def test_async_mode_keeps_log_handler(self):
        lines = []
        nnprof.log.set_handler(lambda level, msg: lines.append(msg))
        prof = nnprof.Profiler(output_path=self.tmp)
        run_steps(1, 2)
        prof.analyse(mode="async")
        self.assertIsNotNone(nnprof.log.get_handler())
        prof.wait()
        self.assertEqual(step_trace_steps(prof.profiler_dir), [1, 2])

    def test_analyse_without_any_window(self):
        prof = nnprof.Profiler(output_path=self.tmp, start_profile=False)
        prof.analyse()
        self.assertEqual(step_trace_steps(prof.profiler_dir), [])

    def test_offline_analyse_after_destroy(self):
        prof = nnprof.Profiler(output_path=self.tmp)
        run_steps(1, 5)
        prof.close()
        self.assertFalse(os.path.exists(os.path.join(prof.profiler_dir,
                                                     "step_trace_raw_0_detail_time.csv")))
        nnprof.Profiler.offline_analyse(self.tmp, pretty=False, step_list=[2, 3])
        self.assertEqual(step_trace_steps(prof.profiler_dir), [2, 3])
        nnprof.Profiler.offline_analyse(self.tmp)
        self.assertEqual(step_trace_steps(prof.profiler_dir), [1, 2, 3, 4, 5])

    def test_offline_analyse_errors(self):
        with self.assertRaises(nnprof.NnprofError) as cm:
            nnprof.Profiler.offline_analyse(self.tmp)
        self.assertEqual(cm.exception.code, errors.ENOENT)
        self.assertEqual(str(cm.exception),
                         f"There must be a profiler folder in the data path: {self.tmp}.")
        with self.assertRaises(TypeError):
            nnprof.Profiler.offline_analyse(self.tmp, step_list=(1, 2))

    def test_analyse_offline_path(self):
        prof = nnprof.Profiler(output_path=self.tmp)
        run_steps(1, 2)
        prof.close()
        prof.analyse(offline_path=self.tmp)
        self.assertEqual(step_trace_steps(prof.profiler_dir), [1, 2])


class TestOpAnalyse(NnprofTestCase):
    def setUp(self):
        super().setUp()
        self.prof = nnprof.Profiler(output_path=self.tmp)
        t = record.clock_ns()
        matmul = record.Op("net/fc1/MatMul-op1", "MatMul")
        for i, dur in enumerate((100, 200, 300)):
            matmul.at(t + i * 1000, t + i * 1000 + dur)
        record.Op("net/relu/ReLU-op2", "ReLU").at(t, t + 50)

    def test_results(self):
        rows = self.prof.op_analyse(["MatMul", "net/relu/ReLU-op2", "Conv2D"])
        self.assertEqual([r["op_name"] for r in rows], ["MatMul", "net/relu/ReLU-op2",
                                                       "Conv2D"])
        mm = rows[0]
        self.assertEqual(mm["count"], 3)
        self.assertAlmostEqual(mm["total_time_us"], 0.6)
        self.assertAlmostEqual(mm["avg_time_us"], 0.2)
        self.assertAlmostEqual(mm["min_time_us"], 0.1)
        self.assertAlmostEqual(mm["max_time_us"], 0.3)
        self.assertEqual(rows[1]["count"], 1)
        self.assertEqual(rows[2]["count"], 0)
        self.assertEqual(self.prof.op_analyse("MatMul, ReLU")[1]["count"], 1)
        self.assertEqual(self.prof.op_analyse("MatMul", device_id=0)[0]["count"], 3)

    def test_after_analyse(self):
        self.prof.analyse()
        self.assertEqual(self.prof.op_analyse("MatMul")[0]["count"], 3)

    def test_type_errors(self):
        with self.assertRaises(TypeError) as cm:
            self.prof.op_analyse("MatMul", device_id="0")
        self.assertEqual(str(cm.exception), "For 'Profiler.op_analyse()', the parameter "
                                            "device_id must be int, but got type <class 'str'>")
        with self.assertRaises(TypeError) as cm:
            self.prof.op_analyse(5)
        self.assertEqual(str(cm.exception), "For 'Profiler.op_analyse()', the parameter "
                                            "op_name must be str or list, but got type "
                                            "<class 'int'>")
        for empty in ("", []):
            with self.assertRaises(TypeError) as cm:
                self.prof.op_analyse(empty)
            self.assertEqual(str(cm.exception), "For 'Profiler.op_analyse()', the parameter "
                                                "op_name cannot be \"\", '' or [].")
        with self.assertRaises(TypeError):
            self.prof.op_analyse(["MatMul", 3])

    def test_c_errors(self):
        with self.assertRaises(nnprof.NnprofError) as cm:
            self.prof.op_analyse(["MatMul", ""])
        self.assertEqual(cm.exception.code, errors.EINVAL)
        with self.assertRaises(nnprof.NnprofError) as cm:
            self.prof.op_analyse("MatMul", device_id=7)
        self.assertEqual(cm.exception.code, errors.ENOENT)


class _RunContext:  # pylint: disable=too-few-public-methods
    """A MindSpore run_context lookalike."""

    class _Args:  # pylint: disable=too-few-public-methods
        cur_step_num = 0
        cur_epoch_num = 0

    def __init__(self):
        self.args = self._Args()

    def original_args(self):
        return self.args


class TestCallbacks(NnprofTestCase):
    def test_stop_at_step(self):
        cb = nnprof.StopAtStep(3, 5, output_path=self.tmp)
        ctx = _RunContext()
        for step in range(1, 9):
            ctx.args.cur_step_num = step
            cb.on_train_step_begin(ctx)
            with nnprof.record_function(f"work{step}"):
                pass
            cb.on_train_step_end(ctx)
        cb.on_train_end(ctx)
        self.assertTrue(cb.profiler.closed)
        self.assertEqual(step_trace_steps(cb.profiler.profiler_dir), [3, 4, 5])
        names = sorted(e["name"] for e in host_timeline(cb.profiler.profiler_dir))
        self.assertEqual(names, ["work3::Run", "work4::Run", "work5::Run"])

    def test_stop_at_step_counting_itself(self):
        cb = nnprof.StopAtStep(2, 3, output_path=self.tmp)
        for _ in range(5):
            cb.step_begin()
            cb.step_end()
        self.assertEqual(step_trace_steps(cb.profiler.profiler_dir), [2, 3])

    def test_training_shorter_than_window(self):
        cb = nnprof.StopAtStep(2, 10, output_path=self.tmp)
        for step in range(1, 4):
            cb.on_train_step_begin(step)
            cb.on_train_step_end(step)
        cb.on_train_end()
        self.assertEqual(step_trace_steps(cb.profiler.profiler_dir), [2, 3])

    def test_stop_at_epoch(self):
        cb = nnprof.StopAtEpoch(2, 2, output_path=self.tmp, analyse=False)
        for epoch in range(1, 4):
            cb.on_train_epoch_begin(epoch)
            run_steps(epoch * 10, epoch * 10 + 1)
            cb.on_train_epoch_end(epoch)
        cb.on_train_end()
        self.assertTrue(cb.profiler.closed)
        kinds = [(r["kind"], r.get("epoch_id", r.get("step_id")))
                 for r in dump(cb.profiler.raw_dir)
                 if r["kind"] in ("epoch_begin", "epoch_end", "step_begin")]
        self.assertEqual(kinds, [("epoch_begin", 2), ("step_begin", 20), ("step_begin", 21),
                                 ("epoch_end", 2)])

    def test_window_arguments(self):
        with self.assertRaises(ValueError):
            nnprof.StopAtStep(5, 3, output_path=self.tmp)
        with self.assertRaises(TypeError):
            nnprof.StopAtStep("1", 3, output_path=self.tmp)


if __name__ == "__main__":
    unittest.main()
