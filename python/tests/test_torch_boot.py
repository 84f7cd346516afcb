"""A PyTorch script captured unchanged: NNPROF_TORCH=1 with python/nnprof/_boot first on
PYTHONPATH, libnnprof preloaded and started from MS_PROFILER_OPTIONS (what `nnprof run`
sets up, CONTRACTS.md section 4). The script never mentions nnprof."""

import collections
import json
import os
import unittest

import nnprof
from tests import support
from tests.torch_support import needs_torch, run_script

SCRIPT = """
import torch
model = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    opt.zero_grad()
    model(torch.randn(4, 16)).sum().backward()
    opt.step()
print("trained")
"""

BOOT = os.path.join(support.REPO, "python", "nnprof", "_boot")
PYTHON_DIR = os.path.join(support.REPO, "python")


@needs_torch
class BootTest(support.NnprofTestCase):
    """sitecustomize.py of nnprof._boot."""

    def run_captured(self, extra_env=None, enable=True):
        marker_dir = self.path("other_site")
        os.makedirs(marker_dir)
        # Another sitecustomize later on the path must still run (Debian ships one).
        with open(os.path.join(marker_dir, "sitecustomize.py"), "w", encoding="utf-8") as f:
            f.write(f"open({self.path('chained')!r}, 'w').close()\n")
        env = {
            "PYTHONPATH": os.pathsep.join([BOOT, PYTHON_DIR, marker_dir]),
            "LD_PRELOAD": nnprof.library_path,
            "MS_PROFILER_OPTIONS": json.dumps({"start": True, "output_path": self.path("data"),
                                               "profile_memory": True}),
            "NNPROF_TORCH": "1" if enable else "0",
        }
        env.update(extra_env or {})
        p = run_script(SCRIPT, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("trained", p.stdout)
        self.assertTrue(os.path.exists(self.path("chained")), "next sitecustomize not run")
        prof_dir = self.path("data", "profiler")
        raws = [os.path.join(prof_dir, d) for d in os.listdir(prof_dir)
                if d.startswith("PROF_")] if os.path.isdir(prof_dir) else []
        self.assertLessEqual(len(raws), 1, raws)
        return support.dump(raws[0]) if raws else []

    def test_unchanged_script_is_captured(self):
        rows = self.run_captured({"NNPROF_TORCH_RECORD_SHAPES": "1"})
        ops = collections.Counter(r["type"] for r in rows if r["kind"] == "op")
        self.assertEqual(ops["aten::addmm"], 2 * 5)
        self.assertEqual(ops["AddmmBackward0"], 2 * 5)
        self.assertTrue(all(r["input_dtypes"] for r in rows
                            if r["kind"] == "op" and r["type"] == "aten::addmm"))
        # Steps: the intervals between the 5 optimizer steps.
        steps = [r["step_id"] for r in rows if r["kind"] == "step_end"]
        self.assertEqual(steps, [1, 2, 3, 4])
        self.assertTrue(any(r["kind"] == "mem_alloc" for r in rows))

    def test_stacks(self):
        rows = self.run_captured({"NNPROF_TORCH_WITH_STACK": "1"})
        addmm = [r["stack"].split("\n") for r in rows
                 if r["kind"] == "op" and r["type"] == "aten::addmm"]
        self.assertEqual(len(addmm), 2 * 5)
        for stack in addmm:
            # The script's frame (line 2 imported torch: capture began there), the model,
            # the layer (the first or the second Linear), F.linear.
            self.assertEqual(stack[0], "<built-in function linear>")
            self.assertRegex(stack[1], r"^torch/nn/modules/linear\.py\(\d+\): forward$")
            self.assertIn(stack[2], ("nn.Module: Linear_0", "nn.Module: Linear_1"))
            self.assertEqual(stack[-2:], ["nn.Module: Sequential_0", "<string>(2): <module>"])
        self.assertEqual({s[2] for s in addmm}, {"nn.Module: Linear_0", "nn.Module: Linear_1"})

    def test_off_without_nnprof_torch(self):
        rows = self.run_captured(enable=False)
        self.assertFalse([r for r in rows if r["kind"] == "op"])


if __name__ == "__main__":
    unittest.main()
