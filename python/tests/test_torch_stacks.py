"""with_stack: the Python stack of every op, checked against torch.profiler's own
with_stack on the same steps of the same model, run from the same line: per op name and
stack, key_averages(group_by_stack_n) counts the calls torch's does (builtins' repr shows
an object's address, which differs between the runs: "at 0x..." is compared without it),
autograd nodes and what runs in them under their forward op's stack, by torch's rule
(EventList._set_backward_stacktraces). torch decides what runs in a node on whole
microseconds, which leaves some short ops out of theirs at random (they keep the
stack of the engine's call, run_backward): those differences alone are allowed, one way,
and few. Also the table's "Source Location" column, and export_stacks' flame graph lines
worked out by hand on a script of known stacks."""

import ast
import collections
import csv
import json
import os
import re
import subprocess
import textwrap
import threading
import unittest

from tests import support
from tests.torch_support import needs_torch, run_script, tiny_model, train_step

try:
    import torch
    import torch.profiler as tp
    import nnprof.torch as nt
    from nnprof import _torch_shim
    from nnprof import errors as nnprof_errors
except ImportError:
    torch = tp = nt = _torch_shim = nnprof_errors = None

STEPS = 2
ADDRESS = re.compile(r" at 0x[0-9a-f]+")
# Frames as deep as any stack of the model: every frame is compared.
ALL_FRAMES = 1000


def stack_counts(averages, names):
    """(name, stack without addresses) -> calls, of the rows whose name is in names."""
    counts = collections.Counter()
    for row in averages:
        if row.key in names:
            counts[(row.key, tuple(ADDRESS.sub(" at 0x", f) for f in row.stack))] += row.count
    return counts


def with_stack_available():
    """Whether this shim records stacks (built with Python's headers)."""
    return _torch_shim is not None and _torch_shim.has_stacks()


@needs_torch
@unittest.skipUnless(with_stack_available(), "the shim was built without Python's headers")
class StacksTest(support.NnprofTestCase):
    """Stacks against torch.profiler's on the same steps."""

    def setUp(self):
        super().setUp()
        self.model, self.opt, self.x = tiny_model()
        train_step(self.model, self.opt, self.x)  # first-call work happens before both

    def run_under(self, make_profiler):
        """STEPS training steps under the profiler make_profiler() gives; every profiler
        is entered on this one line, so the frames below it are the same for each."""
        with make_profiler() as prof:
            for _ in range(STEPS):
                train_step(self.model, self.opt, self.x)
        return prof

    def test_stacks_equal_torch_profiler(self):
        makers = (lambda: tp.profile(activities=[tp.ProfilerActivity.CPU], with_stack=True),
                  lambda: nt.profile(output_path=self.path("data"), with_stack=True))
        theirs, ours = [self.run_under(make) for make in makers]
        self.assertTrue(ours.with_stack)
        mine = ours.key_averages(group_by_stack_n=ALL_FRAMES)
        # Ops only: torch's record_function scopes (Optimizer.step#SGD.step) are host
        # ranges here, which carry no stack.
        names = {r.key for r in mine if r.kind == "op"}
        want = stack_counts(theirs.key_averages(group_by_stack_n=ALL_FRAMES), names)
        got = stack_counts(mine, names)
        # Where they differ, torch left an op of a node out of it (its stack then shows the
        # engine's call, run_backward), or, for the same reason, did not fold an op into
        # a same-name parent: every stack torch gives outside the engine is ours too, ours
        # has others only for names torch shows under the engine, and the counts that
        # differ are few.
        def engine(key):
            return any("run_backward" in f for f in key[1])
        theirs_engine_names = {k[0] for k in want if engine(k)}
        for key in set(want) - set(got):
            self.assertTrue(engine(key), key)
        for key in set(got) - set(want):
            self.assertIn(key[0], theirs_engine_names, key)
        # (about 7 % of the calls here, each once missing and once extra)
        moved = sum(abs(got[k] - want[k]) for k in set(got) | set(want)) // 2
        self.assertLessEqual(moved, sum(got.values()) // 5)
        # Nodes themselves are never left out of themselves: exact.
        nodes = {k for k in set(got) | set(want)
                 if k[0].endswith("Backward0") or k[0].endswith("AccumulateGrad")}
        self.assertGreater(len(nodes), 5)
        for key in nodes:
            self.assertEqual(got[key], want[key], key)
        # What the comparison covered: the model's forward ops under their module frames,
        # a backward op under its forward op's stack, the optimizer's ops.
        conv = [s for (n, s) in got if n == "aten::conv2d"]
        self.assertEqual(len(conv), 1)
        self.assertIn("nn.Module: Conv2d_0", conv[0])
        self.assertIn("nn.Module: Sequential_0", conv[0])
        self.assertTrue(conv[0][0].startswith("<built-in method conv2d"), conv[0])
        self.assertTrue(any(f.endswith("): train_step") for f in conv[0]))
        # AddmmBackward0 has the stack of the first op of its link: aten::linear's.
        linear = [s for (n, s) in got if n == "aten::linear"]
        self.assertEqual(len(linear), 1)
        self.assertEqual(linear[0][0], "<built-in function linear>")
        self.assertEqual([s for (n, s) in got if n == "AddmmBackward0"], linear)
        self.assertGreater(len([k for k in got if "): step" in "".join(k[1])]), 0)
        self.assertGreater(sum(got.values()), 100)

    def test_group_by_stack_n_and_table(self):
        prof = self.run_under(lambda: nt.profile(output_path=self.path("data"),
                                                 with_stack=True))
        full = [r for r in prof.key_averages(group_by_stack_n=ALL_FRAMES)
                if r.key == "aten::addmm"]
        self.assertEqual(len(full), 1)
        self.assertEqual(full[0].count, STEPS)
        top = prof.key_averages(group_by_stack_n=2)
        addmm = [r for r in top if r.key == "aten::addmm"]
        self.assertEqual([r.stack for r in addmm], [full[0].stack[:2]])
        self.assertEqual(addmm[0].stack[0], "<built-in function linear>")
        text = top.table(sort_by="count", row_limit=-1)
        lines = text.splitlines()
        self.assertIn("Source Location", lines[1])
        row = next(i for i, line in enumerate(lines) if line.lstrip().startswith("aten::addmm"))
        self.assertTrue(lines[row].rstrip().endswith("<built-in function linear>"))
        self.assertEqual(lines[row + 1].strip(), addmm[0].stack[1])
        self.assertEqual(lines[row + 2].strip(), "")
        # Without stacks asked for, the table has no such column.
        self.assertNotIn("Source Location", prof.key_averages().table())

    def test_export_stacks_by_hand(self):
        # A script whose stacks are known: f (line 5) calls g (line 2) which adds two
        # tensors 3 times and calls torch.relu once. Each line: the frames outermost
        # first, then the calls' self time in whole microseconds.
        code = textwrap.dedent("""\
            import torch, nnprof.torch as nt
            def g(a):
                for _ in range(3):
                    a = a + 1
                return torch.relu(a)
            def f(x):
                return g(x)
            x = torch.ones(512, 512)
            with nt.profile(output_path=OUT, with_stack=True) as p:
                f(x)
            p.export_stacks(OUT + "/stacks.txt")
            p.export_chrome_trace(OUT + "/trace.json")
            for r in p.key_averages(group_by_stack_n=3):
                print("ROW", r.key, r.count, r.self_cpu_time_total, r.stack)
            """).replace("OUT", repr(self.tmp))
        done = run_script(code, cwd=self.tmp)
        self.assertEqual(done.returncode, 0, done.stderr)
        rows, all_rows = {}, []
        for line in done.stdout.splitlines():
            if line.startswith("ROW "):
                name, count, self_us, stack = line[4:].split(" ", 3)
                all_rows.append((int(count), float(self_us), ast.literal_eval(stack)))
                self.assertNotIn(name, rows, done.stdout)
                rows[name] = all_rows[-1]
        relu_frame = next(f for f in rows["aten::relu"][2] if f.startswith("<built-in"))
        self.assertEqual(rows["aten::add"][:1], (3,))
        self.assertEqual(rows["aten::add"][2], ["<string>(2): g", "<string>(6): f",
                                                "<string>(9): <module>"])
        self.assertEqual(rows["aten::relu"][2], [relu_frame, "<string>(2): g",
                                                 "<string>(6): f"])
        self.assertRegex(relu_frame, r"^<built-in method relu of type object at 0x[0-9a-f]+>$")
        # The Kineto export: each call's "Call stack", innermost first, each frame followed
        # by ";" (what TensorBoard's plugin reads).
        with open(self.path("trace.json"), encoding="utf-8") as f:
            events = json.load(f)["traceEvents"]
        stacks = collections.Counter(e["args"].get("Call stack") for e in events
                                     if e.get("cat") == "cpu_op" and e["name"] == "aten::add")
        self.assertEqual(stacks, {"<string>(2): g;<string>(6): f;<string>(9): <module>;": 3})
        stacks = {e["args"].get("Call stack") for e in events
                  if e.get("cat") == "cpu_op" and e["name"] == "aten::relu"}
        self.assertEqual(stacks, {relu_frame + ";<string>(2): g;<string>(6): f;"
                                  "<string>(9): <module>;"})
        with open(self.path("stacks.txt"), encoding="utf-8") as f:
            lines = f.read().splitlines()
        by_stack = {}
        for line in lines:
            stack, value = line.rsplit(" ", 1)
            by_stack[stack] = by_stack.get(stack, 0) + int(value)
        add_stack = "<string>(9):_<module>;<string>(6):_f;<string>(2):_g"
        relu_stack = add_stack + ";" + relu_frame.replace(" ", "_")
        self.assertIn(add_stack, by_stack)
        self.assertIn(relu_stack, by_stack)
        # Each stack's value: the whole microseconds of each call's self time, summed, over
        # the ops of that stack (3 adds and what they call / relu and what it calls), so
        # at most their self time and less by under 1 us per call.
        for stack, frames in ((add_stack, rows["aten::add"][2]),
                              (relu_stack, rows["aten::relu"][2])):
            same = [r for r in all_rows if r[2] == frames]
            calls, self_us = sum(r[0] for r in same), sum(r[1] for r in same)
            self.assertLessEqual(by_stack[stack], self_us, (lines, done.stdout))
            self.assertGreater(by_stack[stack], self_us - calls, (lines, done.stdout))

    def test_thread_started_while_profiling(self):
        # A thread started inside the profiler joins through threading.setprofile: its
        # ops have its own frames (threading's run, then work), none of nnprof's hook.
        x = torch.ones(4)

        def work():
            return x * 2

        with nt.profile(output_path=self.path("data"), with_stack=True) as prof:
            thread = threading.Thread(target=work)
            thread.start()
            thread.join()
        mul = [r for r in prof.key_averages(group_by_stack_n=ALL_FRAMES) if r.key == "aten::mul"]
        self.assertEqual(len(mul), 1)
        self.assertEqual(mul[0].count, 1)
        stack = mul[0].stack
        self.assertRegex(stack[0], r"^tests/test_torch_stacks\.py\(\d+\): work$")
        self.assertRegex(stack[1], r"threading\.py\(\d+\): run$")
        self.assertFalse(any("_thread_hook" in f or "_torch_shim" in f for f in stack), stack)

    def test_analyse_writes_the_same_rows(self):
        # `nnprof analyse` of the capture: op_stacks_0.csv has key_averages'
        # (group_by_stack_n, every frame) op rows: per name and stack, the same calls.
        cli = support.cli_path()
        if cli is None:
            self.skipTest("the nnprof CLI is not available (set NNPROF_CLI)")
        prof = self.run_under(lambda: nt.profile(output_path=self.path("data"),
                                                 with_stack=True))
        want = collections.Counter()
        for r in prof.key_averages(group_by_stack_n=ALL_FRAMES):
            if r.kind == "op":
                want[(r.key, ";".join(r.stack))] += r.count
        done = subprocess.run([cli, "analyse", "--quiet", "-o", self.path("out"),
                               self.path("data")], capture_output=True, text=True,
                              timeout=120, check=False)
        self.assertEqual(done.returncode, 0, done.stderr)
        got = self.stack_rows(self.path("out", "op_stacks_0.csv"))
        self.assertEqual(got, want)
        self.assertTrue(any(src for _, src in got), got)
        # Its Kineto export read back: "Call stack", the forward ops' threads from the
        # fwdbwd flows, AccumulateGrad a backward function: every autograd node (and
        # AccumulateGrad) under the same stack as in the capture. (Ops nested in a node
        # less than 0.25 us from its edge may fall out of it: the export's wall-clock
        # microseconds with ns decimals have 19 digits, more than a double keeps.)
        os.makedirs(self.path("trace"))
        prof.export_chrome_trace(self.path("trace", "w.1.pt.trace.json"))
        done = subprocess.run([cli, "analyse", "--quiet", "-o", self.path("back"),
                               self.path("trace")], capture_output=True, text=True,
                              timeout=120, check=False)
        self.assertEqual(done.returncode, 0, done.stderr)
        back = self.stack_rows(self.path("back", "op_stacks_0.csv"))

        def nodes(rows):
            return {k: v for k, v in rows.items()
                    if k[0].endswith("Backward0") or k[0] == "torch::autograd::AccumulateGrad"}
        self.assertEqual(nodes(back), nodes(want))
        self.assertGreater(len(nodes(want)), 3, want)

    @staticmethod
    def stack_rows(path):
        """(name, source location) -> calls of an op_stacks CSV."""
        rows = collections.Counter()
        with open(path, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                rows[(row["Name"], row["Source Location"])] += int(row["Calls"])
        return rows

    def test_refused_second_profiler_keeps_the_first_ones_stacks(self):
        # A second profiler while one runs is refused (one session per process); its
        # start and stop must leave the first one's stacks running (they once ended them:
        # every later op of the first profiler had no stack).
        x = torch.ones(4)

        def before():
            return x * 2

        def after():
            return x + 2

        with nt.profile(output_path=self.path("outer"), with_stack=True) as prof:
            before()
            with self.assertRaisesRegex(nnprof_errors.NnprofError, "session already exists"):
                with nt.profile(output_path=self.path("inner"), with_stack=True):
                    pass
            after()
        rows = {r.key: r for r in prof.key_averages(group_by_stack_n=1)
                if r.key in ("aten::mul", "aten::add")}
        self.assertRegex(rows["aten::mul"].stack[0], r"test_torch_stacks\.py\(\d+\): before$")
        self.assertRegex(rows["aten::add"].stack[0], r"test_torch_stacks\.py\(\d+\): after$")

    def test_no_stacks_outside_the_profiler(self):
        prof = self.run_under(lambda: nt.profile(output_path=self.path("a"), with_stack=True))
        self.assertTrue(any(r.stack for r in prof.key_averages(group_by_stack_n=1)))
        plain = self.run_under(lambda: nt.profile(output_path=self.path("b")))
        ops = [r for r in support.dump(plain.raw_dir) if r["kind"] == "op"]
        self.assertGreater(len(ops), 0)
        self.assertFalse(any(r.get("stack") for r in ops))
        with self.assertWarnsRegex(UserWarning, "group_by_stack_n"):
            rows = plain.key_averages(group_by_stack_n=3)
        self.assertFalse(any(r.stack for r in rows))


if __name__ == "__main__":
    unittest.main()
