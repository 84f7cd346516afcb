"""Framework-author recording API: every call, the explicit-timestamp variants exactly,
interning, and recording outside a window."""

import json
import os
import subprocess
import sys
import threading
import time
import unittest

import nnprof
from nnprof import record

from .support import NnprofTestCase, dump, step_trace_rows


class TestBasics(NnprofTestCase):
    def test_intern_cache(self):
        a = record.intern("nnprof.test.string")
        self.assertGreater(a, 0)
        self.assertEqual(record.intern("nnprof.test.string"), a)
        self.assertEqual(record.intern(a), a)  # an id is passed through
        self.assertEqual(record.intern(None), 0)
        self.assertEqual(record.intern(""), 0)
        with self.assertRaises(TypeError):
            record.intern(1.5)

    def test_clocks(self):
        t0 = record.clock_ns()
        mono = time.monotonic_ns()
        self.assertLess(abs(mono - t0), 10**9)  # the same clock (CLOCK_MONOTONIC)
        self.assertGreater(record.now(), 0)

    def test_tick_source_from_the_environment(self):
        # NNPROF_CLOCK picks the tick source of a fresh process: "monotonic" is kept in
        # info.json and op times stay exact; a value that is no source is named in a warning.
        script = ("import sys, nnprof\n"
                  "from nnprof import record\n"
                  "prof = nnprof.Profiler(output_path=sys.argv[1])\n"
                  "t = record.now()\n"
                  "record.Op('net/op', 'Op').since(t)\n"
                  "record.Op('net/op2', 'Op').at(5, 6)\n"
                  "prof.close()\n"
                  "print(prof.raw_dir)\n")
        for value, source in (("monotonic", "monotonic"), ("rdtscp", None)):
            out = os.path.join(self.tmp, value)
            env = dict(os.environ, NNPROF_CLOCK=value, NNPROF_LOG_LEVEL="warn")
            run = subprocess.run([sys.executable, "-c", script, out], capture_output=True,
                                 text=True, check=False, timeout=60, env=env)
            self.assertEqual(run.returncode, 0, run.stderr)
            raw_dir = run.stdout.splitlines()[-1]
            with open(os.path.join(raw_dir, "info.json"), encoding="utf-8") as f:
                got = json.load(f)["platform"]["tick_source"]
            if source:
                self.assertEqual(got, source)
                self.assertNotIn("NNPROF_CLOCK", run.stderr)
            else:
                self.assertIn("NNPROF_CLOCK='rdtscp' is not a tick source: use 'tsc' or "
                              "'monotonic'", run.stderr)
            ops = [r for r in dump(raw_dir) if r["kind"] == "op"]
            self.assertEqual(len(ops), 2)
            self.assertLessEqual(ops[0]["ts_ns"], ops[0]["end_ns"])
            self.assertEqual((ops[1]["ts_ns"], ops[1]["end_ns"]), (5, 6))

    def test_not_collecting_records_nothing(self):
        op = record.Op("net/op", "Op")
        self.assertFalse(record.is_collecting())
        op.at(1, 2)
        record.step_begin(1)
        prof = nnprof.Profiler(output_path=self.tmp, start_profile=False)
        op.at(3, 4)
        prof.start()
        self.assertTrue(record.is_collecting())
        op.at(5, 6)
        prof.close()
        self.assertEqual([(r["ts_ns"], r["end_ns"]) for r in dump(prof.raw_dir)
                          if r["kind"] == "op"], [(5, 6)])

    def test_comm_kernel_launch(self):
        """A collective's device kernel keeps the id of the call that launched it."""
        prof = nnprof.Profiler(output_path=self.tmp, profile_communication=True)
        record.Comm("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "allreduce", size_bytes=64,
                    stream_id=9, launch_id=41).kernel_at(100, 200)
        record.Comm("gloo:all_reduce", "allreduce", size_bytes=64).at(300, 400)
        prof.close()
        comms = [r for r in dump(prof.raw_dir) if r["kind"] == "comm"]
        self.assertEqual([(r["ts_ns"], r["stream_id"], r.get("launch_id")) for r in comms],
                         [(100, 9, 41), (300, 0, None)])

    def test_comm_kinds(self):
        self.assertEqual(record.comm_kind_name(record.CommKind.ALLREDUCE), "allreduce")
        self.assertEqual(record.comm_kind_name(99), "other")
        with self.assertRaises(ValueError):
            record.Comm("x", "nosuchkind")

    def test_thread_register(self):
        prof = nnprof.Profiler(output_path=self.tmp)

        def worker():
            record.thread_register("MapOp(id=2) worker 0")
            record.counter("in_worker", 1.0)

        t = threading.Thread(target=worker)
        t.start()
        t.join()
        prof.close()
        tids = {r["tid"] for r in dump(prof.raw_dir) if r["kind"] == "counter"}
        self.assertEqual(len(tids), 1)


class TestCorrelation(NnprofTestCase):
    def test_correlation_reaches_the_back_end(self):
        """record.correlation() pushes and pops through the hooks a device back end sets."""
        import ctypes  # pylint: disable=import-outside-toplevel
        push_fn = ctypes.CFUNCTYPE(None, ctypes.c_uint64, ctypes.c_void_p)
        pop_fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

        class Hooks(ctypes.Structure):  # pylint: disable=too-few-public-methods
            _fields_ = [("push", push_fn), ("pop", pop_fn), ("user", ctypes.c_void_p)]

        seen = []
        push = push_fn(lambda i, _u: seen.append(("push", i)))
        pop = pop_fn(lambda _u: seen.append(("pop",)))
        hooks = Hooks(push, pop, None)
        with record.correlation(5):  # no back end: nothing to call, no error
            pass
        record._c.nnp_collector_set_correlation(ctypes.byref(hooks))  # pylint: disable=protected-access
        try:
            with record.correlation(7):
                with record.correlation(8):
                    pass
            with self.assertRaises(KeyError):
                with record.correlation(9):
                    raise KeyError("the pop still happens")
        finally:
            record._c.nnp_collector_set_correlation(None)  # pylint: disable=protected-access
        self.assertEqual(seen, [("push", 7), ("push", 8), ("pop",), ("pop",), ("push", 9),
                                ("pop",)])


class TestExplicitTimestamps(NnprofTestCase):
    """Every *_at() variant records exactly the given CLOCK_MONOTONIC nanoseconds."""

    def test_every_at_variant(self):
        prof = nnprof.Profiler(output_path=self.tmp, profile_memory=True, msproftx=True,
                               profile_communication=True)
        t = record.clock_ns() - 10**6
        tag = record.tag("Dataset", "GetNext", "Run", "batch 1", 0)
        tag.begin_at(t + 1)
        tag.end_at(t + 2)
        record.instant_at(tag, t + 3)
        record.range_begin_at(record.tag("Python", "r"), t + 4)
        record.range_end_at(record.tag("Python", "r"), t + 5)
        record.host_memory_at(4096, t + 6)
        op = record.Op("net/fc/MatMul-op1", "MatMul", graph_id=2, stream_id=3,
                       correlation_id=42, input_shapes=[(4, 2), (2, 8)],
                       input_dtypes="float32;float32", flops_matrix=128, flops_vector=16)
        record.op_at(op, t + 10, t + 20)
        record.kernel_at(record.Kernel("matmul_kernel", "KERNEL", device_id=1, stream_id=7,
                                       correlation_id=42), t + 11, t + 19)
        record.step_begin_at(5, 2, t + 30)
        record.step_end_at(5, 2, t + 31)
        record.epoch_begin_at(1, t + 32)
        record.epoch_end_at(1, t + 33)
        record.fp_start_at(5, t + 34)
        record.bp_end_at(5, t + 35)
        record.mem_alloc_at(record.Tensor(0xABC, 256, "w", "net/fc/MatMul-op1", 1), t + 40)
        record.mem_free_at(0xABC, 256, t + 41)
        record.comm_at(record.Comm("hcom_allReduce_1", record.CommKind.ALLREDUCE, "world",
                                   1024, -1, 9), t + 50, t + 60)
        record.queue_sample_at(3, 2, 8, t + 70)
        record.device_queue_sample_at(1, 4, t + 71)
        record.mark_at("hello", t + 80)
        record.counter_at("loss", 0.25, t + 90)
        prof.close()

        rows = dump(prof.raw_dir)

        def one(kind, **match):
            found = [r for r in rows if r["kind"] == kind
                     and all(r.get(k) == v for k, v in match.items())]
            self.assertEqual(len(found), 1, (kind, match, rows))
            return found[0]

        r = one("range_begin", event="GetNext")
        self.assertEqual((r["ts_ns"], r["module"], r["stage"], r["custom_info"], r["level"]),
                         (t + 1, "Dataset", "Run", "batch 1", 0))
        self.assertEqual(one("range_end", event="GetNext")["ts_ns"], t + 2)
        self.assertEqual(one("instant", event="GetNext")["ts_ns"], t + 3)
        self.assertEqual(one("range_begin", event="r")["ts_ns"], t + 4)
        self.assertEqual(one("range_end", event="r")["ts_ns"], t + 5)
        self.assertEqual((one("host_memory")["ts_ns"], one("host_memory")["bytes"]),
                         (t + 6, 4096))
        r = one("op")
        self.assertEqual((r["ts_ns"], r["end_ns"], r["name"], r["type"], r["graph_id"],
                          r["stream_id"], r["correlation_id"], r["input_shapes"],
                          r["input_dtypes"], r["flops_matrix"], r["flops_vector"]),
                         (t + 10, t + 20, "net/fc/MatMul-op1", "MatMul", 2, 3, 42, "4,2;2,8",
                          "float32;float32", 128, 16))
        r = one("kernel")
        self.assertEqual((r["ts_ns"], r["end_ns"], r["name"], r["type"], r["device_id"],
                          r["stream_id"], r["correlation_id"]),
                         (t + 11, t + 19, "matmul_kernel", "KERNEL", 1, 7, 42))
        r = one("step_begin")
        self.assertEqual((r["ts_ns"], r["step_id"], r["graph_id"]), (t + 30, 5, 2))
        self.assertEqual(one("step_end")["ts_ns"], t + 31)
        self.assertEqual((one("epoch_begin")["ts_ns"], one("epoch_begin")["epoch_id"]),
                         (t + 32, 1))
        self.assertEqual(one("epoch_end")["ts_ns"], t + 33)
        self.assertEqual((one("fp_start")["ts_ns"], one("fp_start")["step_id"]), (t + 34, 5))
        self.assertEqual(one("bp_end")["ts_ns"], t + 35)
        r = one("mem_alloc")
        self.assertEqual((r["ts_ns"], r["address"], r["bytes"], r["tensor"], r["owner_op"],
                          r["device_id"]), (t + 40, 0xABC, 256, "w", "net/fc/MatMul-op1", 1))
        r = one("mem_free")
        self.assertEqual((r["ts_ns"], r["address"], r["bytes"]), (t + 41, 0xABC, 256))
        r = one("comm")
        self.assertEqual((r["ts_ns"], r["end_ns"], r["name"], r["comm_kind"], r["group"],
                          r["bytes"], r["peer"], r["stream_id"]),
                         (t + 50, t + 60, "hcom_allReduce_1", "allreduce", "world", 1024, -1,
                          9))
        r = one("queue")
        self.assertEqual((r["ts_ns"], r["op_id"], r["size"], r["capacity"]), (t + 70, 3, 2, 8))
        r = one("device_queue")
        self.assertEqual((r["ts_ns"], r["size"], r["capacity"]), (t + 71, 1, 4))
        r = one("mark")
        self.assertEqual((r["ts_ns"], r["message"]), (t + 80, "hello"))
        r = one("counter")
        self.assertEqual((r["ts_ns"], r["name"], r["value"]), (t + 90, "loss", 0.25))

    def test_step_trace_from_explicit_times(self):
        prof = nnprof.Profiler(output_path=self.tmp)
        ms = 10**6
        t = record.clock_ns() - 100 * ms
        t -= t % ms  # whole milliseconds: exact values in the CSV
        record.step_begin_at(1, 0, t)
        record.fp_start_at(1, t + 1 * ms)
        record.op_at(record.Op("Default/fc/MatMul-op1", "MatMul"), t + 1 * ms, t + 3 * ms)
        record.bp_end_at(1, t + 3 * ms)
        record.step_end_at(1, 0, t + 4 * ms)
        prof.analyse()
        row = step_trace_rows(prof.profiler_dir)[0]
        self.assertEqual(row["step_num"], "1")
        self.assertEqual((row["total"], row["iteration_interval"], row["fp_and_bp"],
                          row["tail"]), ("4.000000", "1.000000", "2.000000", "1.000000"))
        self.assertEqual(row["start_point"], f"{t // ms}.000000")


class TestSinceVariants(NnprofTestCase):
    def test_since_and_context_managers(self):
        prof = nnprof.Profiler(output_path=self.tmp, profile_memory=True, msproftx=True,
                               profile_communication=True)
        t0 = record.now()
        op = record.Op("net/relu", "ReLU")
        record.op_since(op, t0)
        with op:
            with op:  # nested use of one Op
                pass
        with record.op_scope("net/scoped", "Add", input_shapes=[(2,)]) as scoped:
            self.assertIsInstance(scoped, record.Op)
        record.kernel_since(record.Kernel("k", "KERNEL"), t0)
        record.comm_since(record.Comm("send", "send", peer=1), t0)
        record.Tensor(1, 8).alloc()
        record.Tensor(1, 8).free()
        record.pipeline_op(1, "GeneratorOp", 2)
        record.queue_sample(1, 3, 8)
        record.device_queue_sample(1, 4)
        record.mark("m")
        rid = record.mark_range_start("range")
        self.assertNotEqual(rid, 0)
        record.mark_range_stop(rid)
        record.counter("c", 1.5)
        record.host_memory(100)
        with record.tag("Graph", "Compile", "Build"):
            pass
        record.instant(record.tag("Graph", "Ready"))
        record.step_begin(1)
        record.fp_start(1)
        record.bp_end(1)
        record.step_end(1)
        record.epoch_begin(1)
        record.epoch_end(1)
        prof.close()
        kinds = [r["kind"] for r in dump(prof.raw_dir)]
        for kind in ("op", "kernel", "comm", "mem_alloc", "mem_free", "pipeline_op", "queue",
                     "device_queue", "mark", "mark_start", "mark_stop", "counter",
                     "host_memory", "range_begin", "range_end", "instant", "step_begin",
                     "step_end", "fp_start", "bp_end", "epoch_begin", "epoch_end"):
            self.assertIn(kind, kinds)
        self.assertEqual(kinds.count("op"), 4)
        ops = [r for r in dump(prof.raw_dir) if r["kind"] == "op"]
        for r in ops:
            self.assertLessEqual(r["ts_ns"], r["end_ns"])

    def test_marks_need_msproftx(self):
        prof = nnprof.Profiler(output_path=self.tmp, sample_interval_ms=0)  # msproftx off
        record.mark("m")
        self.assertEqual(record.mark_range_start("r"), 0)
        prof.close()
        self.assertFalse(os.path.exists(prof.raw_dir))  # nothing recorded: nothing left


if __name__ == "__main__":
    unittest.main()
