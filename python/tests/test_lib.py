"""Library loading, prototypes, struct layouts and error mapping basics."""

import ctypes
import os
import re
import subprocess
import sys
import unittest

import nnprof
from nnprof import _lib, _options, _session, errors

from .support import HEADER, NnprofTestCase


class TestLoading(unittest.TestCase):
    def test_version_and_path(self):
        self.assertRegex(nnprof.version(), r"^\d+\.\d+\.\d+")
        self.assertTrue(os.path.exists(nnprof.library_path))

    def test_every_header_function_has_a_prototype(self):
        if not os.path.exists(HEADER):
            self.skipTest("nnprof.h not found")
        with open(HEADER, encoding="utf-8") as f:
            text = f.read()
        names = set(re.findall(r"NNP_API\s+(?:NNP_NODISCARD\s+)?[\w\s\*]*?\b(nnp_\w+)\s*\(",
                               text))
        self.assertGreater(len(names), 60)
        self.assertEqual(sorted(names - set(_lib.PROTOTYPES)), [])
        self.assertEqual(sorted(set(_lib.PROTOTYPES) - names), [])
        for name in names:
            fn = getattr(_lib.lib, name)
            self.assertIsNotNone(fn.argtypes, name)

    def test_plain_dlopen_without_tunables(self):
        """The library must load with a plain dlopen (no LD_PRELOAD, no GLIBC_TUNABLES)."""
        env = {k: v for k, v in os.environ.items() if k not in ("GLIBC_TUNABLES",
                                                                "LD_PRELOAD")}
        proc = subprocess.run([sys.executable, "-c", "import ctypes, sys; "
                               "ctypes.CDLL(sys.argv[1])", nnprof.library_path],
                              env=env, capture_output=True, text=True, timeout=60)
        # Regression: a 4.6 KiB thread-local buffer once made this fail with "cannot
        # allocate memory in static TLS block" (the library is STATIC_TLS).
        self.assertEqual(proc.returncode, 0, proc.stderr)


class TestLayout(unittest.TestCase):
    def test_struct_sizes(self):
        # Sizes the C compiler gives on LP64 (checked against offsetof when written).
        self.assertEqual(ctypes.sizeof(_options.Options), 4992)
        self.assertEqual(ctypes.sizeof(_options.AnalyseOptions), 4160)
        self.assertEqual(_options.AnalyseOptions.kineto_cuda_sync.offset, 36)
        self.assertEqual(ctypes.sizeof(_options.Stats), 88)
        self.assertEqual(ctypes.sizeof(_options.HostTag), 20)
        self.assertEqual(ctypes.sizeof(_options.OpStruct), 72)
        self.assertEqual(_options.OpStruct.stack.offset, 64)
        self.assertEqual(ctypes.sizeof(_options.KernelStruct), 32)
        self.assertEqual(_options.KernelStruct.launch_id.offset, 24)
        self.assertEqual(ctypes.sizeof(_options.TensorStruct), 32)
        self.assertEqual(ctypes.sizeof(_options.CommStruct), 72)
        self.assertEqual(_options.CommStruct.launch_id.offset, 64)
        self.assertEqual(ctypes.sizeof(_options.PipelineOpStruct), 24)

    def test_defaults_from_init(self):
        o = _options.Options()
        self.assertEqual(_lib.lib.nnp_options_init(ctypes.byref(o)), 0)
        self.assertEqual(o.output_path, b"./data")
        self.assertTrue(o.start_profile and o.op_time and o.parallel_strategy)
        self.assertFalse(o.profile_memory)
        self.assertEqual(o.timeline_limit_mb, 500)
        self.assertEqual(o.aic_metrics, b"PipeUtilization")
        self.assertEqual((o.rank_id, o.device_id, o.rank_size), (0, 0, 1))
        self.assertEqual(o.buffer_size_kb, 4096)
        self.assertEqual(o.writer_period_ms, 10)
        self.assertEqual(o.sample_interval_ms, 1000)
        self.assertEqual(o.raw_file_bytes, 64 << 20)
        self.assertEqual(o.host_sys_usage_freq, 50)

    def test_every_field_reaches_c(self):
        """Fields written from Python are read back by nnp_options_to_json (C)."""
        o = _options.Options()
        _lib.lib.nnp_options_init(ctypes.byref(o))
        o.output_path = b"/tmp/x"
        o.start_profile = False
        o.op_time = True
        o.profile_memory = True
        o.profile_communication = True
        o.parallel_strategy = False
        o.data_process = False
        o.timeline_limit_mb = 77
        o.profile_framework = _options.FRAMEWORK_TIME
        o.profiler_level = _options.LEVEL_2
        o.aicore_metrics = 5
        o.l2_cache = o.hbm_ddr = o.pcie = True
        o.sync_enable = o.data_simplification = o.host_stack = False
        o.storage_limit_mb = 300
        o.training_trace = False
        o.task_trace = _options.TASK_TRACE_L0
        o.hccl = o.aicpu = True
        o.fp_point = b"fp_op"
        o.bp_point = b"bp_op"
        o.aic_metrics = b"Memory"
        o.msproftx = o.runtime_api = True
        o.host_sys = _options.HOST_SYS_CPU
        o.host_sys_usage = _options.HOST_SYS_CPU | _options.HOST_SYS_MEM
        o.host_sys_usage_freq = 7
        o.rank_id, o.device_id, o.rank_size = 3, 4, 8
        o.buffer_size_kb = 1234
        o.full_policy = _options.FULL_BLOCK
        o.writer_period_ms = 23
        o.sample_interval_ms = 456
        o.raw_file_bytes = 9 << 20
        o.storage_limit_bytes = 10 << 20
        d = _session.options_to_dict(o)
        expected = {
            "output_path": "/tmp/x", "start_profile": False, "op_time": True,
            "profile_memory": True, "profile_communication": True,
            "parallel_strategy": False, "data_process": False, "timeline_limit": 77,
            "profile_framework": "time", "profiler_level": "Level2", "aicore_metrics": 5,
            "l2_cache": True, "hbm_ddr": True, "pcie": True, "sync_enable": False,
            "data_simplification": False, "host_stack": False, "storage_limit": "300MB",
            "training_trace": "off", "task_trace": "l0", "hccl": "on", "aicpu": "on",
            "fp_point": "fp_op", "bp_point": "bp_op", "aic_metrics": "Memory",
            "msproftx": "on", "runtime_api": "on", "host_sys": "cpu",
            "host_sys_usage": "cpu,mem", "host_sys_usage_freq": 7, "rank_id": 3,
            "device_id": 4, "rank_size": 8, "buffer_size_kb": 1234, "full_policy": "block",
            "writer_period_ms": 23, "sample_interval_ms": 456, "raw_file_bytes": 9 << 20,
            "storage_limit_bytes": 10 << 20,
        }
        for key, value in expected.items():
            self.assertEqual(d[key], value, key)

    def test_analyse_options_defaults(self):
        a = _session.analyse_options()
        self.assertFalse(a.pretty or a.has_steps or a.async_)
        self.assertTrue(a.is_developer)
        self.assertEqual((a.rank, a.graph_id), (-1, -1))
        a = _session.analyse_options(True, [5, 3, 4], True, jobs=2, rank=1)
        self.assertTrue(a.pretty and a.async_ and a.has_steps)
        self.assertEqual((a.step_first, a.step_last, a.jobs, a.rank), (3, 5, 2, 1))
        with self.assertRaises(TypeError):
            _session.analyse_options(bogus=1)
        with self.assertRaises(TypeError):
            _session.analyse_options(jobs="2")


class TestErrors(NnprofTestCase):
    def test_strerror(self):
        self.assertEqual(nnprof.strerror(errors.EPATH), "invalid path")
        self.assertEqual(nnprof.strerror(0), "success")
        self.assertEqual(nnprof.strerror(-999), "unknown error")

    def test_check_maps_code_and_message(self):
        a = _options.AnalyseOptions()
        rc = _lib.lib.nnp_parse_step_list(b"1,3", ctypes.byref(a))
        with self.assertRaises(nnprof.NnprofError) as cm:
            errors.check(rc, "nnp_parse_step_list")
        err = cm.exception
        self.assertIsInstance(err, RuntimeError)
        self.assertEqual(err.code, errors.EINVAL)
        self.assertEqual(err.errno_name, "NNP_EINVAL")
        self.assertEqual(err.strerror, "invalid argument")
        self.assertEqual(str(err), "The elements of the parameter step_list must be "
                                   "continuous integers.")
        self.assertEqual(err.function, "nnp_parse_step_list")
        self.assertEqual(errors.check(5), 5)

    def test_options_json_error(self):
        o = _options.Options()
        _lib.lib.nnp_options_init(ctypes.byref(o))
        rc = _lib.lib.nnp_options_from_json(ctypes.byref(o), b"[1]", None)
        with self.assertRaises(nnprof.NnprofError) as cm:
            errors.check(rc)
        self.assertEqual(cm.exception.code, errors.EINVAL)
        self.assertIn("a JSON object is required", str(cm.exception))


class TestLog(NnprofTestCase):
    def test_capture_and_restore(self):
        before = nnprof.log.get_level()
        with nnprof.log.capture() as lines:
            _session.build_options({"op_time": "yes"})
        self.assertEqual(nnprof.log.get_level(), before)
        self.assertIsNone(nnprof.log.get_handler())
        self.assertTrue(any(level == nnprof.log.WARN and "op_time" in msg
                            for level, msg in lines), lines)

    def test_to_logging(self):
        nnprof.log.set_level("warn")
        self.addCleanup(nnprof.log.set_level, nnprof.log.ERROR)
        nnprof.log.to_logging()
        with self.assertLogs("nnprof", "WARNING") as cm:
            _session.build_options({"no_such_option": 1})
        self.assertIn("no_such_option is an invalid param which doesn't work.",
                      "\n".join(cm.output))

    def test_bad_level(self):
        with self.assertRaises(ValueError):
            nnprof.log.set_level("loud")
        with self.assertRaises(ValueError):
            nnprof.log.set_level(9)

    def test_handler_exception_does_not_escape(self):
        def broken(level, msg):
            raise ValueError("boom")

        nnprof.log.set_level("warn")
        self.addCleanup(nnprof.log.set_level, nnprof.log.ERROR)
        nnprof.log.set_handler(broken)
        with self.assertLogs("nnprof", "ERROR"):
            _session.build_options({"op_time": 3})


if __name__ == "__main__":
    unittest.main()
