"""Our Kineto export read back by nnprof's own Kineto importer (src/read/import_kineto.c)
gives the figures of the capture itself: per op type, the same count and total time in
op_statistic. The importer comes from another branch (issue 15); until it is in this
build, the round trip reports itself skipped. And torch.profiler's own trace of a training
loop, analysed by nnprof, gives torch's key_averages(): per name the same count, total and
self time, to the microsecond."""

import csv
import os
import subprocess
import threading
import unittest

from tests import support
from tests.torch_support import needs_torch, tiny_model, train_step

try:
    import nnprof.torch as nt
except ImportError:
    nt = None

try:
    import torch
    import torch.profiler as tp
except ImportError:
    torch = tp = None


def op_statistic(path):
    """op_statistic CSV rows by op type: (count, total time in us as text)."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return {r["OP Type"]: (int(r["Count"]), float(r["Total Time(us)"])) for r in rows}


@needs_torch
class KinetoRoundTripTest(support.NnprofTestCase):
    """export_chrome_trace -> `nnprof analyse` of the trace -> same op statistics."""

    def test_export_reads_back_to_the_same_figures(self):
        cli = support.cli_path()
        if cli is None:
            self.skipTest("the nnprof CLI is not available (set NNPROF_CLI)")
        model, opt, x = tiny_model()
        with nt.profile(output_path=self.path("data"), record_shapes=True) as prof:
            for _ in range(3):
                train_step(model, opt, x)
                prof.step()
        os.makedirs(self.path("trace"))
        prof.export_chrome_trace(self.path("trace", "w.1.pt.trace.json"))
        ours = subprocess.run([cli, "analyse", "--quiet", "-o", self.path("ours"),
                               self.path("data")], capture_output=True, text=True,
                              timeout=120, check=False)
        self.assertEqual(ours.returncode, 0, ours.stderr)
        back = subprocess.run([cli, "analyse", "--quiet", "-o", self.path("back"),
                               self.path("trace")], capture_output=True, text=True,
                              timeout=120, check=False)
        if back.returncode != 0 and "no profiling data found" in back.stderr:
            why = ("this nnprof has no Kineto importer yet (issue 15, branch import): "
                   + back.stderr.strip().splitlines()[-1])
            print(f"SKIPPED: PyTorch tests: {why}")  # ctest: skipped (one test here)
            self.skipTest(why)
        self.assertEqual(back.returncode, 0, back.stderr)
        mine = op_statistic(self.path("ours", "op_statistic_0.csv"))
        theirs = op_statistic(self.path("back", "op_statistic_0.csv"))
        self.assertEqual(sorted(theirs), sorted(mine))
        for op_type, (count, total_us) in mine.items():
            self.assertEqual(theirs[op_type][0], count, op_type)
            self.assertAlmostEqual(theirs[op_type][1], total_us, places=3, msg=op_type)


def self_times(path):
    """op_self_time CSV rows by name: (calls, total us, self us)."""
    with open(path, newline="", encoding="utf-8") as f:
        return {r["Name"]: (int(r["Calls"]), float(r["Total Time(us)"]),
                            float(r["Self Time(us)"])) for r in csv.DictReader(f)}


@needs_torch
class TorchProfilerTraceTest(support.NnprofTestCase):
    """torch.profiler's own trace -> `nnprof analyse` -> its key_averages() figures."""

    def test_self_times_equal_key_averages(self):
        cli = support.cli_path()
        if cli is None:
            self.skipTest("the nnprof CLI is not available (set NNPROF_CLI)")
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8),
                                    torch.nn.ReLU(), torch.nn.Flatten(),
                                    torch.nn.Linear(8 * 14 * 14, 10))
        opt = torch.optim.Adam(model.parameters(), lr=0.01)

        def side():  # ops on a second thread, nested per thread
            for _ in range(10):
                a = torch.randn(32, 32)
                (a @ a).sum()

        with tp.profile(activities=[tp.ProfilerActivity.CPU], record_shapes=True) as prof:
            for _ in range(4):
                th = threading.Thread(target=side)
                th.start()
                with tp.record_function("forward"):
                    out = model(torch.randn(8, 3, 16, 16))
                    loss = torch.nn.functional.cross_entropy(out, torch.randint(0, 10, (8,)))
                with tp.record_function("backward"):
                    loss.backward()
                opt.step()
                opt.zero_grad()
                th.join()
                prof.step()
        self.check_same_table(cli, prof, 30)

    def test_steps_of_a_schedule(self):
        """With a schedule torch records each step as a range "ProfilerStep#N", which
        key_averages() lists as one name, "ProfilerStep*"; the old CLI left it out."""
        cli = support.cli_path()
        if cli is None:
            self.skipTest("the nnprof CLI is not available (set NNPROF_CLI)")
        model, opt, x = tiny_model()
        with tp.profile(activities=[tp.ProfilerActivity.CPU],
                        schedule=tp.schedule(wait=0, warmup=1, active=3, repeat=1)) as prof:
            for _ in range(5):
                with tp.record_function("fwd"):
                    train_step(model, opt, x)
                prof.step()
        self.assertIn("ProfilerStep*", {e.key for e in prof.key_averages()})
        self.check_same_table(cli, prof, 10)

    def check_same_table(self, cli, prof, at_least):
        """The trace of prof analysed by nnprof: op_self_time has key_averages()' names,
        and per name its count, total and self time to the microsecond."""
        os.makedirs(self.path("trace"))
        prof.export_chrome_trace(self.path("trace", "w.1.pt.trace.json"))
        theirs = {e.key: (e.count, e.cpu_time_total, e.self_cpu_time_total)
                  for e in prof.key_averages() if e.key != "[memory]"}
        res = subprocess.run([cli, "analyse", "--quiet", "-o", self.path("out"),
                              self.path("trace")], capture_output=True, text=True,
                             timeout=120, check=False)
        self.assertEqual(res.returncode, 0, res.stderr)
        ours = self_times(self.path("out", "op_self_time_0.csv"))
        self.assertGreater(len(theirs), at_least)
        self.assertEqual(sorted(ours), sorted(theirs))
        for name, (count, total, self_us) in theirs.items():
            self.assertEqual(ours[name][0], count, name)
            self.assertAlmostEqual(ours[name][1], total, places=3, msg=name)
            self.assertAlmostEqual(ours[name][2], self_us, places=3, msg=name)


if __name__ == "__main__":
    unittest.main()
