"""nnprof.torch's shapes: torch.profiler's (schedule, step, ProfilerStep#N, handlers, gzip,
export after the with block, key_averages) and MindSpore's (classic and >= 2.4), and the
validity of the Kineto export."""

import gzip
import json
import os
import re
import unittest

from tests import support
from tests.torch_support import kineto_trace, needs_torch, tiny_model, train_step

try:
    import nnprof.torch as nt
except ImportError:
    nt = None

# Kineto's trace: an object with these members; every complete event has these keys.
TOP_KEYS = ("schemaVersion", "deviceProperties", "traceEvents")
EVENT_KEYS = ("ph", "name", "pid", "tid", "ts")


@needs_torch
class TorchShapeTest(support.NnprofTestCase):
    """torch.profiler's shape."""

    def setUp(self):
        super().setUp()
        self.model, self.opt, self.x = tiny_model()

    def check_kineto(self, trace):
        for key in TOP_KEYS:
            self.assertIn(key, trace)
        for e in trace["traceEvents"]:
            for key in EVENT_KEYS[:3] if e["ph"] == "M" else EVENT_KEYS:
                self.assertIn(key, e, e)
            if e["ph"] == "X":
                self.assertGreaterEqual(e["dur"], 0)
                self.assertIn("External id", e["args"])

    def steps_of(self, trace):
        return sorted(int(e["name"].split("#")[1]) for e in trace["traceEvents"]
                      if e["name"].startswith("ProfilerStep#"))

    def test_schedule_cycles_one_trace_file_each(self):
        tb = self.path("tb")
        with nt.profile(output_path=self.path("data"),
                        schedule=nt.schedule(wait=1, warmup=1, active=2, repeat=2),
                        on_trace_ready=nt.tensorboard_trace_handler(tb, worker_name="w0"),
                        record_shapes=True) as prof:
            for _ in range(10):
                train_step(self.model, self.opt, self.x)
                prof.step()
        files = sorted(os.listdir(tb))
        self.assertEqual(len(files), 2, files)
        for f in files:
            self.assertRegex(f, r"^w0\.\d+\.pt\.trace\.json$")
        traces = [kineto_trace(os.path.join(tb, f)) for f in files]
        for t in traces:
            self.check_kineto(t)
        # Cycle 1 records steps 2-3, cycle 2 steps 6-7; each file holds its cycle only.
        self.assertEqual([self.steps_of(t) for t in traces], [[2, 3], [6, 7]])
        for t in traces:
            addmm = [e for e in t["traceEvents"] if e["name"] == "aten::addmm"]
            self.assertEqual(len(addmm), 2)
        self.assertEqual(prof.recorded_steps, [2, 3, 6, 7])

    def test_export_after_with_block_and_gzip(self):
        with nt.profile(output_path=self.path("data")) as prof:
            for _ in range(2):
                train_step(self.model, self.opt, self.x)
                prof.step()
        prof.add_metadata("run", "unit-test")
        path = prof.export_chrome_trace(self.path("trace.json.gz"))
        with open(path, "rb") as f:
            self.assertEqual(f.read(2), b"\x1f\x8b")  # a real gzip stream
        with gzip.open(path, "rt", encoding="utf-8") as f:
            trace = json.load(f)
        self.check_kineto(trace)
        self.assertEqual(trace["run"], "unit-test")
        # As torch: the step entered by the last step() is recorded until the block exits.
        self.assertEqual(self.steps_of(trace), [0, 1, 2])
        plain = kineto_trace(prof.export_chrome_trace(self.path("trace.json")))
        self.assertEqual(len(plain["traceEvents"]), len(trace["traceEvents"]))
        handler = nt.tensorboard_trace_handler(self.path("tbz"), use_gzip=True)
        handler(prof)
        (name,) = os.listdir(self.path("tbz"))
        self.assertTrue(name.endswith(".pt.trace.json.gz"), name)

    def test_key_averages_table(self):
        with nt.profile(output_path=self.path("data"), profile_memory=True,
                        with_flops=True) as prof:
            for _ in range(2):
                train_step(self.model, self.opt, self.x)
        table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=5)
        lines = table.splitlines()
        self.assertIn("Self CPU %", lines[1])
        self.assertIn("CPU Mem", lines[1])
        self.assertIn("Total MFLOPs", lines[1])
        self.assertEqual(len(lines), 3 + 5 + 2)
        self.assertTrue(lines[-1].startswith("Self CPU time total: "))
        rows = prof.key_averages()
        totals = [r.cpu_time_total for r in rows]
        self.assertTrue(all(r.self_cpu_time_total <= r.cpu_time_total + 1e-6 for r in rows))
        self.assertGreater(sum(totals), 0)
        by_shape = prof.key_averages(group_by_input_shape=True)
        self.assertEqual(sum(r.count for r in by_shape), sum(r.count for r in rows))
        with self.assertRaises(ValueError):
            rows.table(sort_by="no_such_key")

    def test_record_function_and_step_annotations(self):
        with nt.profile(output_path=self.path("data")) as prof:
            with nt.record_function("my_block"):
                train_step(self.model, self.opt, self.x)
            prof.step()
        trace = kineto_trace(prof.export_chrome_trace(self.path("t.json")))
        block = [e for e in trace["traceEvents"] if e["name"] == "my_block"]
        self.assertEqual(len(block), 1)
        self.assertEqual(block[0]["cat"], "user_annotation")
        inside = [e for e in trace["traceEvents"] if e["name"] == "aten::conv2d"]
        self.assertTrue(block[0]["ts"] <= inside[0]["ts"] <= block[0]["ts"] + block[0]["dur"])


@needs_torch
class MindSporeShapeTest(support.NnprofTestCase):
    """MindSpore's shapes over the same capture."""

    def setUp(self):
        super().setUp()
        self.model, self.opt, self.x = tiny_model()

    def test_classic_start_stop_analyse(self):
        prof = nt.Profiler(output_path=self.path("data"), start_profile=False)
        train_step(self.model, self.opt, self.x)  # not recorded
        prof.start()
        for _ in range(2):
            train_step(self.model, self.opt, self.x)
        prof.stop()
        out = prof.analyse()
        with open(os.path.join(out, "profiler", "op_statistic_0.csv"), encoding="utf-8") as f:
            text = f.read()
        self.assertIn("aten::addmm", text)
        rows = {r["name"]: r for r in support.dump(prof.raw_dir) if r["kind"] == "op"}
        self.assertIn("aten::conv2d", rows)

    def test_mindspore_24_schedule_and_ascend_ms_layout(self):
        out = self.path("ms")
        prof = nt.Profiler(schedule=nt.schedule(wait=0, warmup=0, active=2, repeat=1),
                           on_trace_ready=nt.tensor_board_trace_handler(out, worker_name="h_1"),
                           output_path=self.path("data"))
        for _ in range(4):
            train_step(self.model, self.opt, self.x)
            prof.step()
        prof.stop()
        (run,) = os.listdir(out)
        self.assertRegex(run, r"^h_1_\d{17}_ascend_ms$")
        asc = os.path.join(out, run, "ASCEND_PROFILER_OUTPUT")
        for name in ("trace_view.json", "op_statistic.csv", "kernel_details.csv",
                     "step_trace_time.csv"):
            self.assertTrue(os.path.isfile(os.path.join(asc, name)), name)
        self.assertTrue(os.path.isfile(os.path.join(out, run, "profiler_info_0.json")))
        with open(os.path.join(asc, "op_statistic.csv"), encoding="utf-8") as f:
            self.assertIn("aten::conv2d", f.read())
        self.assertEqual(prof.last_output, os.path.join(out, run))

    def test_classic_ascend_ms_output_layout_and_offline_analyse(self):
        prof = nt.Profiler(output_path=self.path("data"), output_layout="ascend_ms")
        train_step(self.model, self.opt, self.x)
        dest = prof.analyse()
        self.assertTrue(re.search(r"_\d+_\d{17}_ascend_ms$", dest), dest)
        self.assertTrue(os.path.isfile(os.path.join(dest, "ASCEND_PROFILER_OUTPUT",
                                                    "trace_view.json")))
        runs = nt.analyse(self.path("data"), max_process_number=1)
        self.assertEqual(runs, [self.path("data")])
        self.assertTrue(os.path.isfile(self.path("data", "profiler", "op_statistic_0.csv")))
        with self.assertRaises(TypeError):
            nt.analyse(self.path("data"), max_process_number="2")

    def test_step_needs_a_schedule(self):
        prof = nt.Profiler(output_path=self.path("data"))
        with self.assertRaises(RuntimeError):
            prof.step()
        prof.close()


if __name__ == "__main__":
    unittest.main()
