"""Our Kineto export read back by nnprof's own Kineto importer (src/read/import_kineto.c)
gives the figures of the capture itself: per op type, the same count and total time in
op_statistic. The importer comes from another branch (issue 15); until it is in this
build, the round trip reports itself skipped."""

import csv
import os
import subprocess
import unittest

from tests import support
from tests.torch_support import needs_torch, tiny_model, train_step

try:
    import nnprof.torch as nt
except ImportError:
    nt = None


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


if __name__ == "__main__":
    unittest.main()
