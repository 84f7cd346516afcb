"""PyTorch-shaped API: schedule, profile (windows of exactly the active steps,
on_trace_ready, gating) and record_function (context manager, decorator, nesting)."""

import json
import os
import unittest

import nnprof
from nnprof import ProfilerAction as A
from nnprof import record

from .support import NnprofTestCase, dump, host_timeline, step_trace_steps


def run(prof, n, op=None, tensor=None):
    """n training steps, each a record_function("work<step>") and an optional op."""
    for _ in range(n):
        with nnprof.record_function(f"work{prof.step_num}"):
            if op is not None:
                with op:
                    pass
            if tensor is not None:
                tensor.alloc()
        prof.step()


class TestSchedule(unittest.TestCase):
    def test_torch_semantics(self):
        fn = nnprof.schedule(wait=1, warmup=1, active=2, repeat=1, skip_first=1)
        self.assertEqual([fn(i) for i in range(7)],
                         [A.NONE, A.NONE, A.WARMUP, A.RECORD, A.RECORD_AND_SAVE, A.NONE,
                          A.NONE])

    def test_repeat_zero_cycles_forever(self):
        fn = nnprof.schedule(wait=0, warmup=0, active=1)
        self.assertEqual({fn(i) for i in range(100)}, {A.RECORD_AND_SAVE})
        fn = nnprof.schedule(wait=2, warmup=0, active=1)
        self.assertEqual([fn(i) for i in range(6)],
                         [A.NONE, A.NONE, A.RECORD_AND_SAVE] * 2)

    def test_arguments(self):
        with self.assertRaises(ValueError):
            nnprof.schedule(wait=0, warmup=0, active=0)
        with self.assertRaises(ValueError):
            nnprof.schedule(wait=-1, warmup=0, active=1)
        with self.assertRaises(TypeError):
            nnprof.schedule(wait=1.5, warmup=0, active=1)
        with self.assertRaises(TypeError):
            nnprof.schedule(1, 1, 1)  # keyword-only, as torch
        with self.assertRaises(ValueError):
            nnprof.schedule(wait=0, warmup=0, active=1)(-1)


class TestProfile(NnprofTestCase):
    def test_exactly_the_active_steps_are_recorded(self):
        cycles = []
        sched = nnprof.schedule(wait=1, warmup=1, active=2, repeat=2, skip_first=1)
        with nnprof.profile(schedule=sched, output_path=self.tmp, analyse_on_exit=True,
                            on_trace_ready=lambda p: cycles.append(list(p.cycle_steps))
                            ) as prof:
            run(prof, 12, record.Op("net/Dense", "MatMul"))
        self.assertEqual(cycles, [[3, 4], [7, 8]])
        self.assertEqual(prof.recorded_steps, [3, 4, 7, 8])
        self.assertEqual(step_trace_steps(prof.profiler_dir), [3, 4, 7, 8])
        names = sorted(e["name"] for e in host_timeline(prof.profiler_dir))
        self.assertEqual(names, ["work3::Run", "work4::Run", "work7::Run", "work8::Run"])
        windows = [r["kind"] for r in dump(prof.raw_dir) if r["kind"].startswith("step_")]
        self.assertEqual(windows, ["step_begin", "step_end"] * 4)

    def test_trace_handler_analyses_each_cycle(self):
        seen = []
        handler = nnprof.analyse_trace_handler()

        def on_ready(prof):
            handler(prof)
            seen.append(step_trace_steps(prof.profiler_dir))

        sched = nnprof.schedule(wait=1, warmup=0, active=2, repeat=3)
        with nnprof.profile(schedule=sched, on_trace_ready=on_ready,
                            output_path=self.tmp) as prof:
            run(prof, 9)
        self.assertEqual(seen, [[1, 2], [4, 5], [7, 8]])
        self.assertEqual(prof.cycle, 3)

    def test_without_schedule_records_everything(self):
        ready = []
        with nnprof.profile(output_path=self.tmp, analyse_on_exit=True,
                            on_trace_ready=ready.append) as prof:
            run(prof, 3)
        # As torch: the step entered by the last step() is recorded until exit.
        self.assertEqual(prof.recorded_steps, [0, 1, 2, 3])
        self.assertEqual(ready, [prof])
        self.assertEqual(step_trace_steps(prof.profiler_dir), [0, 1, 2, 3])

    def test_analyse_on_exit_default(self):
        with nnprof.profile(output_path=self.tmp) as prof:
            run(prof, 2)
        self.assertTrue(os.path.exists(os.path.join(prof.profiler_dir,
                                                    "step_trace_raw_0_detail_time.csv")))
        tmp2 = self.path("second")
        with nnprof.profile(output_path=tmp2, on_trace_ready=lambda p: None) as prof:
            run(prof, 2)
        self.assertFalse(os.path.exists(os.path.join(tmp2, "profiler",
                                                     "step_trace_raw_0_detail_time.csv")))

    def test_exit_inside_active_cycle_saves(self):
        ready = []
        sched = nnprof.schedule(wait=1, warmup=0, active=5)
        with nnprof.profile(schedule=sched, on_trace_ready=lambda p: ready.append(
                list(p.cycle_steps)), output_path=self.tmp) as prof:
            run(prof, 3)
        self.assertEqual(ready, [[1, 2, 3]])

    def test_custom_schedule_record_then_none(self):
        ready = []

        def sched(step):
            return A.RECORD if step < 2 else A.NONE

        with self.assertLogs("nnprof", "WARNING") as cm:
            with nnprof.profile(schedule=sched, on_trace_ready=ready.append,
                                output_path=self.tmp) as prof:
                run(prof, 4)
        self.assertIn("Incorrect schedule: RECORD followed by NONE", cm.output[0])
        self.assertEqual(prof.recorded_steps, [0, 1])
        self.assertEqual(ready, [])  # as torch: no trace_ready without RECORD_AND_SAVE

    def test_session_released_and_errors(self):
        prof = nnprof.profile(output_path=self.tmp)
        with self.assertRaises(RuntimeError):
            prof.step()
        with self.assertRaises(RuntimeError):
            prof.stop()
        prof.start()
        with self.assertRaises(RuntimeError):
            prof.start()
        with self.assertRaises(nnprof.NnprofError):
            nnprof.Profiler(output_path=self.tmp)  # one session per process
        prof.stop()
        self.assertFalse(record.is_collecting())
        nnprof.Profiler(output_path=self.tmp).close()
        with self.assertRaises(TypeError):
            nnprof.profile(start_profile=True)

    def test_gating(self):
        op = record.Op("net/fc/MatMul", "MatMul", input_shapes=[(4, 2), (2, 8)],
                       input_dtypes=["float32", "float32"], flops_matrix=128)
        tensor = record.Tensor(0x100, 64, "w")
        with nnprof.profile(output_path=self.tmp, analyse_on_exit=False) as prof:
            self.assertFalse(record.settings.record_shapes)
            run(prof, 1, op, tensor)
        rows = dump(prof.raw_dir)
        ops = [r for r in rows if r["kind"] == "op"]
        self.assertEqual((ops[0]["input_shapes"], ops[0]["input_dtypes"],
                          ops[0].get("flops_matrix", 0)), ("", "", 0))
        self.assertFalse([r for r in rows if r["kind"] == "mem_alloc"])
        self.assertTrue(record.settings.record_shapes)  # restored

        tmp2 = self.path("all")
        with nnprof.profile(output_path=tmp2, record_shapes=True, with_flops=True,
                            profile_memory=True, analyse_on_exit=False) as prof:
            run(prof, 1, op, tensor)
        rows = dump(prof.raw_dir)
        ops = [r for r in rows if r["kind"] == "op"]
        self.assertEqual((ops[0]["input_shapes"], ops[0]["input_dtypes"],
                          ops[0]["flops_matrix"]), ("4,2;2,8", "float32;float32", 128))
        self.assertEqual(len([r for r in rows if r["kind"] == "mem_alloc"]), 1)

    def test_export_chrome_trace(self):
        out = self.path("trace.json")
        with nnprof.profile(output_path=self.tmp, analyse_on_exit=False) as prof:
            run(prof, 2)
            prof.export_chrome_trace(out)
        with open(out, encoding="utf-8") as f:
            trace = json.load(f)
        events = trace["traceEvents"] if isinstance(trace, dict) else trace
        self.assertIn("work0::Run", {e.get("name") for e in events})


class TestRecordFunction(NnprofTestCase):
    def test_nesting_in_raw_data(self):
        @nnprof.record_function("decorated")
        def leaf(x):
            return x + 1

        with nnprof.Profiler(output_path=self.tmp) as prof:
            with nnprof.record_function("outer", args="batch=4"):
                with nnprof.record_function("inner"):
                    self.assertEqual(leaf(1), 2)
        rows = [(r["kind"], r["event"]) for r in dump(prof.raw_dir)
                if r["kind"].startswith("range_")]
        self.assertEqual(rows, [("range_begin", "outer"), ("range_begin", "inner"),
                                ("range_begin", "decorated"), ("range_end", "decorated"),
                                ("range_end", "inner"), ("range_end", "outer")])
        begin = [r for r in dump(prof.raw_dir) if r["kind"] == "range_begin"][0]
        self.assertEqual((begin["module"], begin["stage"], begin["level"],
                          begin["custom_info"]), ("Python", "Run", 1, "batch=4"))

    def test_nesting_in_host_timeline(self):
        prof = nnprof.Profiler(output_path=self.tmp)
        with nnprof.record_function("outer"):
            with nnprof.record_function("inner"):
                sum(range(1000))
        prof.analyse()
        ev = {e["name"]: e for e in host_timeline(prof.profiler_dir)}
        outer, inner = ev["outer::Run"], ev["inner::Run"]
        self.assertEqual(outer["cat"], "Python")
        self.assertLessEqual(outer["ts"], inner["ts"])
        self.assertGreaterEqual(outer["ts"] + outer["dur"], inner["ts"] + inner["dur"])

    def test_recursion_and_exceptions(self):
        @nnprof.record_function("fact")
        def fact(n):
            return 1 if n <= 1 else n * fact(n - 1)

        @nnprof.record_function("fails")
        def fails():
            raise KeyError("x")

        with nnprof.Profiler(output_path=self.tmp) as prof:
            self.assertEqual(fact(4), 24)
            self.assertEqual(fact.__name__, "fact")
            with self.assertRaises(KeyError):
                fails()
        kinds = [r["kind"] for r in dump(prof.raw_dir) if r.get("event") == "fact"]
        self.assertEqual(kinds, ["range_begin"] * 4 + ["range_end"] * 4)
        kinds = [r["kind"] for r in dump(prof.raw_dir) if r.get("event") == "fails"]
        self.assertEqual(kinds, ["range_begin", "range_end"])


if __name__ == "__main__":
    unittest.main()
