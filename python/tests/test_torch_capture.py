"""What the PyTorch shim records, checked against torch's own profiler on the same steps:
op counts per name, input shapes and dtypes, backward ops linked to their forward ops,
tensor memory, nothing outside windows, module paths, refused flags; the same counts
where ticks are CLOCK_MONOTONIC (NNPROF_CLOCK=monotonic: the shim's non-TSC path)."""

import collections
import ctypes
import json
import os
import subprocess
import sys
import textwrap
import unittest
import warnings

from tests import support
from tests.torch_support import (kineto_trace, needs_torch, raw_counts, tiny_model,
                                 torch_raw_counts, train_step)

try:
    import torch
    import torch.profiler as tp
    import nnprof.torch as nt
    from nnprof import _lib, _torch_shim
except ImportError:
    torch = tp = nt = _torch_shim = None

STEPS = 3


_PUSH_T = ctypes.CFUNCTYPE(None, ctypes.c_uint64, ctypes.c_void_p)
_POP_T = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _Hooks(ctypes.Structure):  # pylint: disable=too-few-public-methods
    """``nnp_correlation_hooks_t``."""
    _fields_ = [("push", _PUSH_T), ("pop", _POP_T), ("user", ctypes.c_void_p)]


class RecordingHooks:
    """Correlation hooks of a device back end, as the CUDA one installs them
    (nnp_collector_set_correlation), that note each push (its id) and pop (None) in events."""

    def __init__(self, events):
        self.hooks = _Hooks(_PUSH_T(lambda cid, user: events.append(cid)),
                            _POP_T(lambda user: events.append(None)), None)
        self.setter = _lib.lib.nnp_collector_set_correlation
        self.setter.argtypes = [ctypes.c_void_p]
        self.setter.restype = None

    def install(self):
        self.setter(ctypes.addressof(self.hooks))

    def remove(self):
        self.setter(None)


@needs_torch
class CaptureTest(support.NnprofTestCase):
    """The shim's records against torch.profiler's, for the same model and steps."""

    def setUp(self):
        super().setUp()
        self.model, self.opt, self.x = tiny_model()
        train_step(self.model, self.opt, self.x)  # first-call work happens before both

    def nnprof_run(self, steps=STEPS, **kwargs):
        with nt.profile(output_path=self.path("data"), **kwargs) as prof:
            for _ in range(steps):
                train_step(self.model, self.opt, self.x)
        return prof

    def torch_run(self, steps=STEPS, **kwargs):
        with tp.profile(activities=[tp.ProfilerActivity.CPU], **kwargs) as prof:
            for _ in range(steps):
                train_step(self.model, self.opt, self.x)
        return prof

    def test_counts_equal_torch_profiler(self):
        # What each profiler recorded on the same steps: every call, per name.
        theirs = torch_raw_counts(self.torch_run())
        prof = self.nnprof_run()
        ours = raw_counts(prof.raw_dir)
        self.assertEqual(dict(ours), dict(theirs))
        # key_averages merges an op into a same-name only parent, as torch's does.
        table = {r.key: r.count for r in prof.key_averages()}
        self.assertEqual(table["aten::sum"], ours["aten::sum"] - STEPS)
        self.assertEqual(sum(table.values()), sum(ours.values()) - STEPS)
        # The model's own ops are there, once per step (forward, backward, optimizer).
        self.assertEqual(ours["aten::conv2d"], STEPS)
        self.assertEqual(ours["aten::addmm"], STEPS)
        self.assertEqual(ours["AddmmBackward0"], STEPS)
        self.assertEqual(ours["Optimizer.step#SGD.step"], STEPS)

    def test_correlation_ids_for_a_device_back_end(self):
        # A device back end's correlation hooks, installed as the CUDA one installs them
        # (nnp_collector_set_correlation) before the window opens: every op pushes an id of
        # its own around its run, nested as the ops nest, and records it, so the kernels it
        # launches (which the back end tags with the pushed id) link to it, as Kineto links
        # them through CUPTI's external correlation. Without hooks, ops carry no id.
        events = []
        hooks = RecordingHooks(events)
        hooks.install()
        try:
            prof = self.nnprof_run()
        finally:
            hooks.remove()
        ops = [r for r in support.dump(prof.raw_dir) if r["kind"] == "op"]
        ids = [r["correlation_id"] for r in ops]
        pushed = [e for e in events if e is not None]
        self.assertTrue(ids and all(i >> 62 == 1 for i in ids), ids[:5])  # the shim's tag
        self.assertEqual(len(set(ids)), len(ids))
        self.assertEqual(sorted(ids), sorted(pushed))
        depth = 0
        for e in events:
            depth += 1 if e is not None else -1
            self.assertGreaterEqual(depth, 0)
        self.assertEqual(depth, 0)
        self.assertEqual(len(events), 2 * len(ids))

        # Every op is still recorded, once: the same calls per name as without hooks.
        with_ids = raw_counts(prof.raw_dir)
        events.clear()
        prof = self.nnprof_run()
        ops = [r for r in support.dump(prof.raw_dir) if r["kind"] == "op"]
        self.assertTrue(ops and all(r["correlation_id"] == 0 for r in ops))
        self.assertEqual(events, [])
        self.assertEqual(dict(with_ids), dict(raw_counts(prof.raw_dir)))

    def test_correlation_hooks_installed_mid_window(self):
        # The CUDA back end loads at the program's first CUDA call, often after the window
        # opened (`nnprof run` opens it as the program starts): from the moment its hooks
        # are installed, ops get ids (and from the moment they go, no more), without a new
        # window. Ops before carry none.
        events = []
        hooks = RecordingHooks(events)
        marks = []
        try:
            with nt.profile(output_path=self.path("data")) as prof:
                train_step(self.model, self.opt, self.x)
                marks.append(_lib.lib.nnp_clock_ns())
                hooks.install()
                train_step(self.model, self.opt, self.x)
                hooks.remove()
                marks.append(_lib.lib.nnp_clock_ns())
                train_step(self.model, self.opt, self.x)
        finally:
            hooks.remove()
        ops = [r for r in support.dump(prof.raw_dir) if r["kind"] == "op"]
        before = [r for r in ops if r["end_ns"] < marks[0]]
        during = [r for r in ops if marks[0] < r["ts_ns"] and r["end_ns"] < marks[1]]
        after = [r for r in ops if r["ts_ns"] > marks[1]]
        self.assertTrue(before and during and after)
        self.assertTrue(all(r.get("correlation_id", 0) == 0 for r in before + after))
        ids = [r["correlation_id"] for r in during]
        self.assertTrue(all(i >> 62 == 1 for i in ids), ids[:5])
        self.assertEqual(sorted(ids), sorted(e for e in events if e is not None))
        self.assertEqual(events.count(None), len(ids))
        # The step with ids recorded the same ops as the steps around it.
        names = collections.Counter(r["name"] for r in during)
        self.assertEqual(names, collections.Counter(r["name"] for r in before))

    def test_steps_as_torch_lists_them(self):
        """torch.profiler records its steps ("ProfilerStep#N") only with a schedule and
        key_averages() lists them as "ProfilerStep*"; so does ours, with each step's time
        less its top-level ops' and ranges' as self time."""
        def run(prof):
            with prof:
                for _ in range(4):
                    train_step(self.model, self.opt, self.x)
                    prof.step()
            return {r.key: r for r in prof.key_averages()}
        theirs = run(tp.profile(activities=[tp.ProfilerActivity.CPU],
                                schedule=tp.schedule(wait=1, warmup=1, active=2)))
        ours = run(nt.profile(output_path=self.path("sched"),
                              schedule=nt.schedule(wait=1, warmup=1, active=2)))
        self.assertEqual(ours["ProfilerStep*"].count, theirs["ProfilerStep*"].count)
        step = ours["ProfilerStep*"]
        self.assertEqual(step.count, 2)
        self.assertGreater(step.cpu_time_total, step.self_cpu_time_total)
        self.assertGreater(step.self_cpu_time_total, 0)
        # Its self time is what no top-level event of the step covers: with the steps'
        # events in, all self times add up to the steps' total time (nothing runs outside
        # a step here but the profiler's own bookkeeping between them).
        self.assertLessEqual(sum(r.self_cpu_time_total for r in ours.values()
                                 if r.kind != "comm"),
                             step.cpu_time_total + 1e-3)
        # Without a schedule neither lists steps.
        unscheduled = run(nt.profile(output_path=self.path("plain")))
        self.assertNotIn("ProfilerStep*", unscheduled)
        self.assertNotIn("ProfilerStep*",
                         run(tp.profile(activities=[tp.ProfilerActivity.CPU])))

    def test_shapes_and_dtypes(self):
        theirs = {}
        for e in self.torch_run(record_shapes=True).events():
            theirs.setdefault(e.name, [])
            theirs[e.name].append(e.input_shapes)
        prof = self.nnprof_run(record_shapes=True)
        trace = kineto_trace(prof.export_chrome_trace(self.path("t.json")))
        ours = {}
        types = {}
        for e in trace["traceEvents"]:
            if e.get("cat") == "cpu_op":
                ours.setdefault(e["name"], []).append(e["args"].get("Input Dims"))
                types.setdefault(e["name"], e["args"].get("Input type"))
        for name in ("aten::conv2d", "aten::addmm", "aten::relu", "aten::flatten"):
            self.assertEqual(ours[name], theirs[name], name)
        self.assertEqual(ours["aten::addmm"][0], [[5], [2, 144], [144, 5], [], []])
        self.assertEqual(types["aten::addmm"], ["float", "float", "float", "Scalar", "Scalar"])
        self.assertEqual(types["aten::conv2d"][:3], ["float", "float", "float"])
        # Without record_shapes nothing of the kind is recorded.
        rows = support.dump(self.nnprof_run().raw_dir)
        self.assertTrue(all("input_shapes" not in r or not r["input_shapes"]
                            for r in rows if r["kind"] == "op"))

    def test_shapes_through_the_smallest_ring(self):
        # record_shapes writes each op as a 2-slot record straight into the thread's ring.
        # The smallest ring (64 KiB: 2048 slots) wraps many times in 40 steps and fills
        # (the default policy waits for the writer); now and then a record's second slot
        # lands on the ring's first. Nothing lost or torn: counts and shapes equal torch's.
        steps = 40
        theirs_prof = self.torch_run(steps=steps, record_shapes=True)
        theirs = collections.defaultdict(list)
        for e in theirs_prof.events():
            theirs[e.name].append(e.input_shapes)
        prof = self.nnprof_run(steps=steps, record_shapes=True, buffer_size_kb=64)
        counts = raw_counts(prof.raw_dir)
        self.assertEqual(dict(counts), dict(torch_raw_counts(theirs_prof)))
        self.assertGreater(2 * sum(counts.values()), 2 * 2048)  # the ring wrapped
        ours = collections.defaultdict(list)
        trace = kineto_trace(prof.export_chrome_trace(self.path("ring.json")))
        for e in trace["traceEvents"]:
            if e.get("cat") == "cpu_op":
                ours[e["name"]].append(e["args"].get("Input Dims"))
        for name in ("aten::conv2d", "aten::addmm", "aten::relu", "aten::flatten",
                     "aten::convolution_backward", "aten::add_"):
            self.assertGreaterEqual(len(theirs[name]), steps, name)
            self.assertEqual(ours[name], theirs[name], name)

    def test_shapes_and_dtypes_change_between_calls(self):
        # The same op with other sizes, dtypes and kinds of input in turn, twice over: the
        # shim formats each distinct set of inputs once and reuses it; every call must
        # still carry its own texts.
        a32, b32 = torch.ones(2, 3), torch.ones(3, 2)
        a64, i32 = torch.ones(2, 3, dtype=torch.float64), torch.ones(4, dtype=torch.int32)

        def work():
            for _ in range(2):
                for x in (a32, b32, a64, i32):
                    torch.add(x, 1)
                torch.add(a32, a32)
                torch.cat([a32, a32])
                a32.view(3, 2)

        work()
        with tp.profile(activities=[tp.ProfilerActivity.CPU], record_shapes=True) as tprof:
            work()
        theirs = [e.input_shapes for e in tprof.events() if e.name == "aten::add"]
        with nt.profile(output_path=self.path("data"), record_shapes=True) as prof:
            work()
        trace = kineto_trace(prof.export_chrome_trace(self.path("t.json")))
        adds = sorted((e for e in trace["traceEvents"]
                       if e.get("cat") == "cpu_op" and e["name"] == "aten::add"),
                      key=lambda e: e["ts"])
        self.assertEqual([e["args"].get("Input Dims") for e in adds], theirs)
        self.assertEqual(theirs[:5], [[[2, 3], [], []], [[3, 2], [], []], [[2, 3], [], []],
                                      [[4], [], []], [[2, 3], [2, 3], []]])
        # A Python number is passed as a 0-dim int64 tensor ("long int"), alpha as a Scalar.
        self.assertEqual([e["args"].get("Input type") for e in adds],
                         [["float", "long int", "Scalar"], ["float", "long int", "Scalar"],
                          ["double", "long int", "Scalar"], ["int", "long int", "Scalar"],
                          ["float", "float", "Scalar"]] * 2)
        cats = [e for e in trace["traceEvents"]
                if e.get("cat") == "cpu_op" and e["name"] == "aten::cat"]
        self.assertEqual([e["args"].get("Input type")[0] for e in cats], ["TensorList"] * 2)
        # A list of ints (the view's sizes) is an "IntList" with no dims.
        views = [e for e in trace["traceEvents"]
                 if e.get("cat") == "cpu_op" and e["name"] == "aten::view"]
        self.assertEqual([(e["args"].get("Input Dims"), e["args"].get("Input type"))
                          for e in views], [([[2, 3], []], ["float", "IntList"])] * 2)

    def test_backward_ops_linked_to_forward(self):
        self.check_backward_links(self.nnprof_run(), "t.json")

    def test_backward_ops_linked_to_forward_with_shapes(self):
        # record_shapes writes each op as its 2-slot record, the link in the extension slot.
        with nt.profile(output_path=self.path("data_shapes"), record_shapes=True) as prof:
            for _ in range(STEPS):
                train_step(self.model, self.opt, self.x)
        self.check_backward_links(prof, "t_shapes.json")

    def check_backward_links(self, prof, trace_name):
        """Each backward node of the model, each step, points at the op that created it."""
        events = kineto_trace(prof.export_chrome_trace(self.path(trace_name)))["traceEvents"]
        ops = {(e["tid"], e["ts"]): e for e in events if e.get("cat") == "cpu_op"}
        starts = {e["id"]: e for e in events if e.get("ph") == "s" and e["cat"] == "fwdbwd"}
        links = collections.Counter()
        for f in (e for e in events if e.get("ph") == "f" and e["cat"] == "fwdbwd"):
            fwd = ops[(starts[f["id"]]["tid"], starts[f["id"]]["ts"])]
            bwd = ops[(f["tid"], f["ts"])]
            self.assertEqual(bwd["args"]["Sequence number"], fwd["args"]["Sequence number"])
            self.assertEqual(fwd["args"]["Fwd thread id"], 0)
            self.assertGreater(bwd["args"]["Fwd thread id"], 0)
            links[(fwd["name"], bwd["name"])] += 1
        self.assertEqual(links[("aten::addmm", "AddmmBackward0")], STEPS)
        self.assertEqual(links[("aten::convolution", "ConvolutionBackward0")], STEPS)
        self.assertEqual(links[("aten::relu", "ReluBackward0")], STEPS)
        self.assertEqual(links[("aten::sum", "SumBackward0")], STEPS)

    def test_memory_alloc_free_balance(self):
        nbytes = 4096 * 4
        with nt.profile(output_path=self.path("data"), profile_memory=True) as prof:
            for _ in range(STEPS):
                t = torch.empty(4096, dtype=torch.float32)
                t.fill_(1.0)
                del t
        rows = support.dump(prof.raw_dir)
        allocs = {r["address"]: r for r in rows if r["kind"] == "mem_alloc"}
        frees = [r for r in rows if r["kind"] == "mem_free"]
        ours = [a for a in allocs.values() if a["bytes"] == nbytes]
        self.assertGreaterEqual(len(ours), 1)
        self.assertTrue(all(a["owner_op"] == "aten::empty" for a in ours))
        # Every allocation made in the window is freed in it, byte for byte.
        freed = {f["address"]: f["bytes"] for f in frees}
        self.assertEqual(sum(a["bytes"] for a in allocs.values()),
                         sum(freed.get(addr, 0) for addr in allocs))
        self.assertEqual(sum(r["bytes"] for r in rows if r["kind"] == "mem_alloc"),
                         sum(r["bytes"] for r in frees))
        table = {r.key: r for r in prof.key_averages()}
        self.assertEqual(table["aten::empty"].self_cpu_memory_usage, STEPS * nbytes)

    def test_nothing_recorded_outside_windows(self):
        with nt.profile(output_path=self.path("data"),
                        schedule=nt.schedule(wait=1, warmup=0, active=1)) as prof:
            self.assertFalse(_torch_shim.is_active())
            torch.ones(3).mul_(7)  # step 0: wait
            prof.step()
            self.assertTrue(_torch_shim.is_active())
            torch.ones(3).add_(1)  # step 1: recorded
            prof.step()
            self.assertFalse(_torch_shim.is_active())
            torch.ones(3).sub_(1)  # after the cycle
        names = collections.Counter(r["name"] for r in support.dump(prof.raw_dir)
                                    if r["kind"] == "op")
        self.assertEqual(names["aten::add_"], 1)
        self.assertNotIn("aten::mul_", names)
        self.assertNotIn("aten::sub_", names)

    def test_flops_as_torch(self):
        theirs = {e.key: e.flops for e in self.torch_run(with_flops=True).key_averages()}
        ours = {r.key: r.flops for r in self.nnprof_run(with_flops=True).key_averages()}
        for name in ("aten::conv2d", "aten::addmm"):
            self.assertGreater(ours[name], 0)
            self.assertEqual(ours[name], theirs[name], name)
        # addmm [2,144] x [144,5]: 2 * 2 * 144 * 5 FLOPs per call.
        self.assertEqual(ours["aten::addmm"], STEPS * 2 * 2 * 144 * 5)

    def test_module_paths(self):
        prof = self.nnprof_run(steps=1, with_modules=True)
        names = {r["name"] for r in support.dump(prof.raw_dir) if r["kind"] == "op"}
        self.assertIn("Sequential/0/aten::conv2d", names)
        self.assertIn("Sequential/3/aten::linear", names)
        trace = kineto_trace(prof.export_chrome_trace(self.path("t.json")))
        conv = next(e for e in trace["traceEvents"] if e.get("name") == "aten::conv2d")
        self.assertEqual(conv["args"]["Module Hierarchy"], "Sequential/0")

    def test_unsupported_flags_are_refused_by_name(self):
        with self.assertWarnsRegex(UserWarning, "experimental_config"):
            nt.profile(output_path=self.path("data"), experimental_config=object())
        with self.assertWarnsRegex(UserWarning, "CUDA"):
            nt.profile(output_path=self.path("data"),
                       activities=[nt.ProfilerActivity.CPU, nt.ProfilerActivity.CUDA])
        # With nnprof's CUDA back end set to load (as `nnprof run` sets it), CUDA activity is
        # what it records: no warning.
        saved = os.environ.get("CUDA_INJECTION64_PATH")
        os.environ["CUDA_INJECTION64_PATH"] = "/opt/nnprof/lib/libnnprof_cuda.so"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                nt.profile(output_path=self.path("data"),
                           activities=[nt.ProfilerActivity.CPU, nt.ProfilerActivity.CUDA])
        finally:
            if saved is None:
                del os.environ["CUDA_INJECTION64_PATH"]
            else:
                os.environ["CUDA_INJECTION64_PATH"] = saved
        with self.assertWarnsRegex(UserWarning, "export_stacks"):
            self.nnprof_run(steps=1).export_stacks(self.path("stacks.txt"))


    def test_monotonic_ticks(self):
        # Where the TSC is not used (NNPROF_CLOCK=monotonic, read once per process: so a
        # fresh one), the shim records through nnp_op_since instead of writing the ring
        # itself: the same calls per name as torch.profiler, and sane times.
        script = textwrap.dedent(f"""
            import json, sys
            import torch.profiler as tp
            import nnprof.torch as nt
            from tests.torch_support import raw_counts, tiny_model, torch_raw_counts, train_step
            model, opt, x = tiny_model()
            train_step(model, opt, x)
            with tp.profile(activities=[tp.ProfilerActivity.CPU]) as theirs:
                for _ in range({STEPS}):
                    train_step(model, opt, x)
            with nt.profile(output_path=sys.argv[1]) as ours:
                for _ in range({STEPS}):
                    train_step(model, opt, x)
            print(json.dumps([raw_counts(ours.raw_dir), torch_raw_counts(theirs), ours.raw_dir]))
        """)
        env = dict(os.environ, NNPROF_CLOCK="monotonic")
        run = subprocess.run([sys.executable, "-c", script, self.path("data")], env=env,
                             capture_output=True, text=True, check=False, timeout=240)
        self.assertEqual(run.returncode, 0, run.stderr)
        ours, theirs, raw_dir = json.loads(run.stdout.splitlines()[-1])
        self.assertEqual(ours, theirs)
        self.assertEqual(ours["aten::conv2d"], STEPS)
        with open(os.path.join(raw_dir, "info.json"), encoding="utf-8") as f:
            self.assertEqual(json.load(f)["platform"]["tick_source"], "monotonic")
        ops = [r for r in support.dump(raw_dir) if r["kind"] == "op"]
        self.assertTrue(ops)
        for r in ops:
            self.assertLessEqual(r["ts_ns"], r["end_ns"], r)

if __name__ == "__main__":
    unittest.main()
