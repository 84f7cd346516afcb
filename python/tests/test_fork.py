"""Forked children of a profiled Python program (issue 10): ``nnprof.Profiler()`` then
``os.fork()``, and a ``multiprocessing.Pool(4)``, in real processes with a time bound. The
parent's events are all on disk and no child leaves anything, unless ``follow_fork`` is on:
then every worker's events are in its own raw directory, linked to the parent's run."""

import json
import os
import subprocess
import sys
import textwrap
import unittest

from .support import NnprofTestCase, cli_path, dump

# Generous: a hang shows as minutes; the machine may be shared.
LIMIT_S = 180
PARENT_STEPS = 500
TASKS = 100
CHILD_BASE = 1000000


def run_script(source, out, extra_env=None):
    """Runs source in a fresh interpreter (so the child exits the way programs do) and
    fails the test if it does not end within LIMIT_S."""
    env = dict(os.environ)
    env["NNPROF_TEST_OUT"] = out
    for name in ("MS_PROFILER_OPTIONS", "NNPROF_FOLLOW_FORK", "NNPROF_ROOT_PID"):
        env.pop(name, None)
    env.update(extra_env or {})
    return subprocess.run([sys.executable, "-c", textwrap.dedent(source)], env=env,
                          capture_output=True, text=True, timeout=LIMIT_S, check=False)


def raw_dirs(out):
    """Every PROF_* directory under out/profiler."""
    prof = os.path.join(out, "profiler")
    if not os.path.isdir(prof):
        return []
    return sorted(os.path.join(prof, d) for d in os.listdir(prof) if d.startswith("PROF_"))


def info(raw_dir):
    """The raw directory's info.json."""
    with open(os.path.join(raw_dir, "info.json"), encoding="utf-8") as f:
        return json.load(f)


def step_ids(raw_dir):
    """Step ids recorded in raw_dir, read back with `nnprof dump`."""
    return sorted(r["step_id"] for r in dump(raw_dir) if r["kind"] == "step_begin")


FORK_SCRIPT = """
    import os
    import nnprof
    from nnprof import record
    prof = nnprof.Profiler(output_path=os.environ["NNPROF_TEST_OUT"], sample_interval_ms=0)
    for i in range({n}):
        record.step_begin(i)
    pid = os.fork()
    if pid == 0:
        for i in range({n}):
            record.step_begin({base} + i)
        # falls off the end: the interpreter's and the C library's exit hooks run here
    else:
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, status
        for i in range({n}, 2 * {n}):
            record.step_begin(i)
        prof.close()
"""

POOL_SCRIPT = """
    import multiprocessing
    import os
    import nnprof
    from nnprof import record

    def work(i):
        record.step_begin({base} + i)
        return i * i

    if __name__ == "__main__":
        multiprocessing.set_start_method("fork")
        prof = nnprof.Profiler(output_path=os.environ["NNPROF_TEST_OUT"],
                               sample_interval_ms=0, follow_fork={follow})
        for i in range({n}):
            record.step_begin(i)
        pool = multiprocessing.Pool(4)
        assert pool.map(work, range({tasks})) == [i * i for i in range({tasks})]
        pool.close()
        pool.join()
        for i in range({n}, 2 * {n}):
            record.step_begin(i)
        prof.close()
"""


@unittest.skipIf(cli_path() is None, "the nnprof CLI is not available (set NNPROF_CLI)")
class TestFork(NnprofTestCase):
    def test_profiler_then_os_fork(self):
        """The issue's reproduction: the child used to hang at exit."""
        proc = run_script(FORK_SCRIPT.format(n=PARENT_STEPS, base=CHILD_BASE), self.tmp)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        dirs = raw_dirs(self.tmp)
        self.assertEqual(len(dirs), 1, dirs)
        self.assertEqual(step_ids(dirs[0]), list(range(2 * PARENT_STEPS)))

    def test_pool_of_4(self):
        proc = run_script(POOL_SCRIPT.format(n=PARENT_STEPS, base=CHILD_BASE, tasks=TASKS,
                                             follow=False), self.tmp)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        dirs = raw_dirs(self.tmp)
        self.assertEqual(len(dirs), 1, dirs)  # the workers recorded nowhere
        self.assertEqual(step_ids(dirs[0]), list(range(2 * PARENT_STEPS)))

    def test_pool_of_4_follow_fork(self):
        proc = run_script(POOL_SCRIPT.format(n=PARENT_STEPS, base=CHILD_BASE, tasks=TASKS,
                                             follow=True), self.tmp)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        runs = {d: info(d) for d in raw_dirs(self.tmp)}
        parents = [d for d, i in runs.items() if "child_kind" not in i]
        self.assertEqual(len(parents), 1, runs.keys())
        parent = parents[0]
        self.assertEqual(step_ids(parent), list(range(2 * PARENT_STEPS)))
        workers = [d for d in runs if d != parent]
        self.assertTrue(1 <= len(workers) <= 4, workers)
        got = []
        for d in workers:
            self.assertEqual(runs[d]["child_kind"], "fork")
            self.assertEqual(runs[d]["parent_pid"], runs[parent]["pid"])
            self.assertEqual(runs[d]["parent_raw_dir"], os.path.basename(parent))
            self.assertEqual(runs[d]["state"], "finalized")
            got += step_ids(d)
        # Every task's event, each in exactly one worker's run.
        self.assertEqual(sorted(got), [CHILD_BASE + i for i in range(TASKS)])


if __name__ == "__main__":
    unittest.main()
