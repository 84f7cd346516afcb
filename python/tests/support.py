"""Helpers shared by the nnprof Python tests (stdlib only)."""

import csv
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import nnprof
from nnprof import _session

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
HEADER = os.path.join(REPO, "include", "nnprof", "nnprof.h")


def cli_path():
    """The nnprof CLI: NNPROF_CLI (set by CMake), else the source tree's build/nnprof."""
    path = os.environ.get("NNPROF_CLI") or os.path.join(REPO, "build", "nnprof")
    return path if os.access(path, os.X_OK) else None


def dump(raw_dir):
    """Records of ``nnprof dump raw_dir`` as dicts (the summary line left out)."""
    cli = cli_path()
    if cli is None:
        raise unittest.SkipTest("the nnprof CLI is not available (set NNPROF_CLI)")
    out = subprocess.run([cli, "dump", raw_dir], check=True, capture_output=True, text=True,
                         timeout=60).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    return [r for r in rows if r.get("kind") != "summary"]


def step_trace_steps(profiler_dir, rank=0):
    """Step ids of step_trace_raw_{rank}_detail_time.csv (the averages row left out)."""
    path = os.path.join(profiler_dir, f"step_trace_raw_{rank}_detail_time.csv")
    with open(path, newline="", encoding="utf-8") as f:
        return [int(r["step_num"]) for r in csv.DictReader(f) if r["step_num"] != "-"]


def step_trace_rows(profiler_dir, rank=0):
    """Rows of step_trace_raw_{rank}_detail_time.csv as dicts."""
    path = os.path.join(profiler_dir, f"step_trace_raw_{rank}_detail_time.csv")
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def host_timeline(profiler_dir, rank=0):
    """Events of host_info/timeline_{rank}.json."""
    path = os.path.join(profiler_dir, "host_info", f"timeline_{rank}.json")
    with open(path, encoding="utf-8") as f:
        return json.load(f)


class NnprofTestCase(unittest.TestCase):
    """Gives each test a fresh output directory and releases every session it left
    open (only one session may exist per process)."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="nnprof-py-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def tearDown(self):
        for session in list(_session._live):  # pylint: disable=protected-access
            session.destroy()
        nnprof.log.set_handler(None)

    def path(self, *parts):
        """A path under the test's temporary directory."""
        return os.path.join(self.tmp, *parts)
