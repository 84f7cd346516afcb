"""Real processes: a 2-rank torch.distributed (gloo) all-reduce recorded on both ranks
with its bytes and group, a DataLoader with 2 worker processes (which must not hang;
with follow_fork, once libnnprof has it, the workers' own ops are recorded too), and a
slow DataLoader whose fetch time the step trace counts as the iteration interval."""

import csv
import json
import os
import socket
import subprocess
import sys
import textwrap
import unittest

from tests import support
from tests.torch_support import kineto_trace, needs_torch

NUMEL = 1000  # float32 elements all-reduced: 4000 bytes

RANK_SCRIPT = textwrap.dedent("""
    import os, sys, torch, torch.distributed as dist
    import nnprof.torch as nt
    rank, port, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=2)
    t = torch.full((%d,), float(rank + 1))
    with nt.profile(output_path=out) as prof:
        dist.all_reduce(t)
        dist.barrier()
    assert float(t[0]) == 3.0, float(t[0])
    prof.export_chrome_trace(os.path.join(out, f"rank{rank}.pt.trace.json"))
    print(prof.raw_dir)
    dist.destroy_process_group()
""" % NUMEL)

LOADER_SCRIPT = textwrap.dedent("""
    import sys, torch
    import nnprof.torch as nt

    class Squares(torch.utils.data.Dataset):
        def __len__(self):
            return 16
        def __getitem__(self, i):
            return torch.arange(4.0).mul(i).pow(2)

    loader = torch.utils.data.DataLoader(Squares(), batch_size=4, num_workers=2)
    with nt.profile(output_path=sys.argv[1]) as prof:
        total = 0.0
        for batch in loader:
            total += float(batch.sum())
            prof.step()
    print(prof.raw_dir)
    print(total)
""")

# Persistent workers forked in a schedule's wait step, before any window opens. Each step
# lasts STEP_S, as a training step would: a child follows its parent's window within a
# writer period (10 ms), so a window shorter than that (steps of a bare loop, ~1 ms) can
# open and close before a worker sees it.
STEP_S = 0.1
SCHEDULED_LOADER_SCRIPT = textwrap.dedent("""
    import sys, time, torch
    import nnprof.torch as nt

    class Squares(torch.utils.data.Dataset):
        def __len__(self):
            return 64
        def __getitem__(self, i):
            return torch.arange(4.0).mul(i).pow(2)

    loader = torch.utils.data.DataLoader(Squares(), batch_size=4, num_workers=2,
                                         persistent_workers=True)
    sched = nt.schedule(wait=1, warmup=1, active=4, repeat=1)
    with nt.profile(output_path=sys.argv[1], schedule=sched) as prof:
        for batch in loader:
            time.sleep(%r)
            prof.step()
    print(prof.raw_dir)
""" % STEP_S)

# A DataLoader slow by construction: each item makes its tensor (an op, at the start of
# the fetch), then sleeps; a batch of FETCH_ITEMS items takes at least their sleeps.
FETCH_ITEMS = 2
FETCH_SLEEP_S = 0.015
SLOW_LOADER_SCRIPT = textwrap.dedent("""
    import sys, time, torch
    import nnprof.torch as nt

    class Slow(torch.utils.data.Dataset):
        def __len__(self):
            return 8
        def __getitem__(self, i):
            t = torch.full((4,), float(i))
            time.sleep(%r)
            return t

    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    loader = torch.utils.data.DataLoader(Slow(), batch_size=%d, num_workers=0)
    with nt.profile(output_path=sys.argv[1]) as prof:
        for batch in loader:
            model(batch).sum().backward()
            prof.step()
    print(prof.raw_dir)
""" % (FETCH_SLEEP_S, FETCH_ITEMS))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@needs_torch
class DistributedTest(support.NnprofTestCase):
    """Two ranks in two processes."""

    def test_gloo_allreduce_on_both_ranks(self):
        script = self.path("rank.py")
        with open(script, "w", encoding="utf-8") as f:
            f.write(RANK_SCRIPT)
        port = str(free_port())
        out = self.path("data")
        procs = [subprocess.Popen([sys.executable, script, str(r), port, out],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for r in (0, 1)]
        results = [p.communicate(timeout=120) for p in procs]
        for p, (stdout, stderr) in zip(procs, results):
            self.assertEqual(p.returncode, 0, stderr)
        for rank, (stdout, _) in enumerate(results):
            raw_dir = stdout.strip().splitlines()[-1]
            comms = [r for r in support.dump(raw_dir) if r["kind"] == "comm"]
            allreduce = [c for c in comms if c["name"] == "gloo:all_reduce"]
            self.assertEqual(len(allreduce), 1, comms)
            self.assertEqual(allreduce[0]["comm_kind"], "allreduce")
            self.assertEqual(allreduce[0]["bytes"], NUMEL * 4)
            self.assertEqual(allreduce[0]["group"], "default_pg(ranks=0-1)")
            self.assertTrue(any(c["comm_kind"] == "barrier" for c in comms), comms)
            trace = kineto_trace(os.path.join(out, f"rank{rank}.pt.trace.json"))
            self.assertEqual(trace["distributedInfo"],
                             {"backend": "gloo", "rank": rank, "world_size": 2})
            ev = next(e for e in trace["traceEvents"] if e["name"] == "gloo:all_reduce")
            self.assertEqual(ev["args"]["Bytes"], NUMEL * 4)
            self.assertEqual(ev["args"]["Process Group Ranks"], [0, 1])


@needs_torch
class DataLoaderTest(support.NnprofTestCase):
    """A DataLoader with 2 worker processes under the profiler."""

    def run_loader(self, env):
        script = self.path("loader.py")
        with open(script, "w", encoding="utf-8") as f:
            f.write(LOADER_SCRIPT)
        full = dict(os.environ, **env)
        p = subprocess.run([sys.executable, script, self.path("data")], env=full,
                           capture_output=True, text=True, timeout=120, check=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        raw_dir, total = p.stdout.strip().splitlines()[-2:]
        # sum over i of i^2 * (0 + 1 + 4 + 9)
        self.assertEqual(float(total), 14.0 * sum(i * i for i in range(16)))
        return raw_dir

    def test_two_workers_without_follow_fork(self):
        raw_dir = self.run_loader({"NNPROF_FOLLOW_FORK": "0"})
        ranges = [r for r in support.dump(raw_dir) if r["kind"] == "range_begin"]
        self.assertTrue(any(r["event"].startswith("enumerate(DataLoader)") for r in ranges))
        # Workers are other processes: their ops are not in the parent's data.
        ops = {r["name"] for r in support.dump(raw_dir) if r["kind"] == "op"}
        self.assertNotIn("aten::pow", ops)

    def test_two_workers_with_follow_fork(self):
        raw_dir = self.run_loader({"NNPROF_FOLLOW_FORK": "1"})
        prof_dir = os.path.dirname(raw_dir)
        children = [os.path.join(prof_dir, d) for d in os.listdir(prof_dir)
                    if d.startswith("PROF_") and os.path.join(prof_dir, d) != raw_dir]
        # One raw directory per DataLoader worker (2 workers), each linked to this run.
        self.assertEqual(len(children), 2, children)
        worker_ops = set()
        for child in children:
            worker_ops |= {r["name"] for r in support.dump(child) if r["kind"] == "op"}
        self.assertIn("aten::pow", worker_ops)
        # Analysed, the workers' ops are in the rank's timeline, not in its op statistics
        # (torch.profiler does not count them either); profiler_info counts them.
        a = subprocess.run([support.cli_path(), "analyse", "--quiet", "-o", self.path("out"),
                            prof_dir], capture_output=True, text=True, timeout=120,
                           check=False)
        self.assertEqual(a.returncode, 0, a.stderr)
        with open(self.path("out", "op_statistic_0.csv"), newline="", encoding="utf-8") as f:
            op_types = {r["OP Type"] for r in csv.DictReader(f)}
        self.assertNotIn("aten::pow", op_types)
        self.assertIn("aten::sum", op_types)  # the training loop's own batch.sum()
        with open(self.path("out", "profiler_info_0.json"), encoding="utf-8") as f:
            info = json.load(f)
        self.assertEqual(info["worker_processes"], 2)
        self.assertGreater(info["worker_ops"], 0)
        with open(os.path.join(info["rank_output_dir"], "trace_view.json"),
                  encoding="utf-8") as f:
            names = {e.get("name") for e in json.load(f)}
        self.assertIn("aten::pow", names)

    def test_persistent_workers_follow_a_scheduled_window(self):
        # The workers are forked at the loop's start, in the schedule's wait step: no
        # window is open then. Each follows its parent's window when it opens, so each
        # worker's own raw directory holds its dataset work (aten::pow).
        script = self.path("scheduled.py")
        with open(script, "w", encoding="utf-8") as f:
            f.write(SCHEDULED_LOADER_SCRIPT)
        env = dict(os.environ, NNPROF_FOLLOW_FORK="1")
        p = subprocess.run([sys.executable, script, self.path("data")], env=env,
                           capture_output=True, text=True, timeout=120, check=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        raw_dir = p.stdout.strip().splitlines()[-1]
        prof_dir = os.path.dirname(raw_dir)
        children = [os.path.join(prof_dir, d) for d in os.listdir(prof_dir)
                    if d.startswith("PROF_") and os.path.join(prof_dir, d) != raw_dir]
        self.assertEqual(len(children), 2, children)
        for child in children:
            ops = [r["name"] for r in support.dump(child) if r["kind"] == "op"]
            self.assertIn("aten::pow", ops, child)

    def test_fetch_time_is_the_iteration_interval(self):
        # The step trace starts the forward pass after the DataLoader's fetch (as after
        # MindSpore's GetNext), so every step's iteration interval holds the fetch's sleeps
        # (at least FETCH_ITEMS x FETCH_SLEEP_S), though its first op (aten::full) starts
        # at the fetch's start.
        cli = support.cli_path()
        if cli is None:
            self.skipTest("the nnprof CLI is not available (set NNPROF_CLI)")
        script = self.path("slow.py")
        with open(script, "w", encoding="utf-8") as f:
            f.write(SLOW_LOADER_SCRIPT)
        p = subprocess.run([sys.executable, script, self.path("data")], capture_output=True,
                           text=True, timeout=120, check=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        a = subprocess.run([cli, "analyse", "--quiet", "-o", self.path("out"),
                            self.path("data")], capture_output=True, text=True, timeout=120,
                           check=False)
        self.assertEqual(a.returncode, 0, a.stderr)
        with open(self.path("out", "step_trace_raw_0_detail_time.csv"), newline="",
                  encoding="utf-8") as f:
            rows = [r for r in csv.DictReader(f) if r["step_num"] != "-"]
        # 8 items in batches of 2: 4 steps with a batch each (a fifth, after the last
        # step(), only finds the loader empty).
        trained = [r for r in rows if r["fp_and_bp"]]
        self.assertEqual(len(trained), 4, rows)
        least_ms = FETCH_ITEMS * FETCH_SLEEP_S * 1000
        for r in trained:
            self.assertGreaterEqual(float(r["iteration_interval"]), least_ms, r)
            self.assertGreater(float(r["fp_point"]), float(r["start_point"]) + least_ms, r)
        with open(self.path("out", "step_trace_point_info_0.json"), encoding="utf-8") as f:
            self.assertNotEqual(json.load(f)["fp_start"], "aten::full")
        # The advisor blames the DataLoader, with its PyTorch knobs: 4 fetches of at least
        # least_ms and the fifth's short one average more than 4/5 of least_ms.
        with open(self.path("out", "advice_0.json"), encoding="utf-8") as f:
            found = {x["id"]: x for x in json.load(f)["findings"]}
        interval = found["iteration_interval"]
        self.assertGreater(interval["evidence"]["avg_data_fetch_ms"], least_ms * 4 / 5)
        self.assertIn("num_workers", interval["suggestion"])


if __name__ == "__main__":
    unittest.main()
