"""MPI capture end to end: ``mpirun -np 4 nnprof run -- mpi_calls`` records every MPI call of
mpi_calls.c with its bytes, count, datatype, peer, tag and group on every rank; the clocks
of ranks whose clock is shifted on purpose are measured within the stated uncertainty; a
build without the MPI library still runs MPI programs and says so once.

The expected records are written out here by hand from mpi_calls.c's plan and the rules of
docs/MPI.md, never taken from nnprof's output. Paths come from CMake (tests/mpi/CMakeLists).
"""

import collections
import glob
import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
import unittest

CLI = os.environ.get("NNPROF_CLI", "")
MPI_CALLS = os.environ.get("NNP_MPI_CALLS", "")
MPIEXEC = os.environ.get("NNP_MPIEXEC", "mpirun")
TESTHOOK = os.environ.get("NNP_MPI_TESTHOOK", "")
DEMO = os.environ.get("NNP_DEMO_TRAIN", "")
BUILD = os.environ.get("NNP_BINARY_DIR", "")

N = 4
# Seconds one mpirun may take: start-up is about a second; oversubscribed ranks are slow.
TIMEOUT = 240


def mpirun(np, args, env=None, timeout=TIMEOUT):
    """Runs ``mpirun -np np args`` (as root and on 2 cores: allowed and oversubscribed)."""
    cmd = [MPIEXEC, "--oversubscribe", "-np", str(np)]
    full_env = dict(os.environ)
    if os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")
        full_env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    # Small shared-memory segments: /dev/shm may be small in containers.
    full_env.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
    full_env.update(env or {})
    return subprocess.run(cmd + args, env=full_env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def infos(out):
    """info.json of every raw directory under out, by rank."""
    res = {}
    for path in glob.glob(os.path.join(out, "profiler", "PROF_*", "info.json")):
        with open(path, encoding="utf-8") as f:
            info = json.load(f)
        res[info["rank_id"]] = info
    return res


def expected_ops(r):
    """(name, kind, bytes, count, datatype, peer, tag) of every op rank r records."""
    right, left = (r + 1) % N, (r - 1) % N
    ops = []

    def add(times, *row):
        ops.extend([row] * times)

    # point to point (tags: None = no tag recorded)
    add(3, "MPI_Send", "send", 100 * 4, 100, "MPI_INT", right, 11)
    add(3, "MPI_Recv", "recv", 100 * 4, 100, "MPI_INT", left, 11)
    add(2, "MPI_Sendrecv", "send", 50 * 4, 50, "MPI_FLOAT", right, 33)
    add(2, "MPI_Sendrecv", "recv", 50 * 4, 50, "MPI_FLOAT", left, 33)
    for k in range(8):
        add(1, "MPI_Isend", "send", 200 * 8, 200, "MPI_DOUBLE", right, 20 + k)
        add(1, "MPI_Irecv", "recv", 200 * 8, 200, "MPI_DOUBLE", left, 20 + k)
    # blocking collectives: nccl-tests sizes (docs/MPI.md)
    add(3, "MPI_Allreduce", "allreduce", 1000 * 8, 1000, "MPI_DOUBLE", -1, None)
    add(2, "MPI_Bcast", "broadcast", 64, 64, "MPI_CHAR", 1, None)
    add(1, "MPI_Reduce", "reduce", 10 * 4, 10, "MPI_INT", 2, None)
    add(1, "MPI_Allgather", "allgather", 8 * N * 4, 8 * N, "MPI_INT", -1, None)
    add(1, "MPI_Allgatherv", "allgather", 10 * 4, 1 + 2 + 3 + 4, "MPI_INT", -1, None)
    add(1, "MPI_Alltoall", "alltoall", 4 * N * 8, 4 * N, "MPI_DOUBLE", -1, None)
    add(1, "MPI_Alltoallv", "alltoall", 10 * 4, 1 + 2 + 3 + 4, "MPI_INT", -1, None)
    add(1, "MPI_Reduce_scatter", "reducescatter", 2 * N * 4, 2 * N, "MPI_FLOAT", -1, None)
    add(1, "MPI_Reduce_scatter_block", "reducescatter", 3 * N * 4, 3 * N, "MPI_FLOAT", -1,
        None)
    add(1, "MPI_Gather", "gather", 5 * N * 4, 5 * N, "MPI_INT", 0, None)
    add(1, "MPI_Scatter", "scatter", 6 * N * 4, 6 * N, "MPI_INT", 3, None)
    add(2, "MPI_Barrier", "barrier", 0, 0, None, -1, None)
    # non-blocking collectives
    add(1, "MPI_Iallreduce", "allreduce", 500 * 4, 500, "MPI_FLOAT", -1, None)
    add(1, "MPI_Ibcast", "broadcast", 32, 32, "MPI_BYTE", 0, None)
    add(1, "MPI_Ireduce", "reduce", 7 * 4, 7, "MPI_INT", 1, None)
    add(1, "MPI_Iallgather", "allgather", 2 * N * 4, 2 * N, "MPI_INT", -1, None)
    add(1, "MPI_Ialltoall", "alltoall", 3 * N * 4, 3 * N, "MPI_INT", -1, None)
    add(1, "MPI_Ireduce_scatter_block", "reducescatter", 1 * N * 4, N, "MPI_INT", -1, None)
    add(1, "MPI_Ibarrier", "barrier", 0, 0, None, -1, None)
    # the even / odd sub-communicator: peers are MPI_COMM_WORLD ranks
    add(1, "MPI_Allreduce", "allreduce", 16 * 4, 16, "MPI_INT", -1, None)
    if r < 2:
        add(1, "MPI_Send", "send", 5 * 4, 5, "MPI_INT", r + 2, 44)
    else:
        add(1, "MPI_Recv", "recv", 5 * 4, 5, "MPI_INT", r - 2, 44)
    return ops


# Ops whose wait part is measured: completion of non-blocking ops, blocking receives.
WAITED = {"MPI_Isend", "MPI_Irecv", "MPI_Recv", "MPI_Iallreduce", "MPI_Ibcast", "MPI_Ireduce",
          "MPI_Iallgather", "MPI_Ialltoall", "MPI_Ireduce_scatter_block", "MPI_Ibarrier"}


@unittest.skipUnless(CLI and MPI_CALLS and shutil.which(MPIEXEC), "MPI test setup missing")
class TestMpiCapture(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="nnprof-mpi-")
        cls.out = os.path.join(cls.tmp, "out")
        cls.proc = mpirun(N, [CLI, "run", "-o", cls.out, "--", MPI_CALLS])
        cls.analyse = subprocess.run([CLI, "analyse", "--quiet", cls.out], capture_output=True,
                                     text=True, timeout=TIMEOUT, check=False)
        cls.db = os.path.join(cls.tmp, "run.db")
        cls.export = subprocess.run([CLI, "export", "sqlite", "-dir", cls.out, "-o", cls.db],
                                    capture_output=True, text=True, timeout=TIMEOUT,
                                    check=False)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stdout + self.proc.stderr)
        self.assertIn("all calls done on 4 ranks", self.proc.stdout)

    def test_one_raw_directory_per_rank(self):
        got = infos(self.out)
        self.assertEqual(sorted(got), list(range(N)))
        for rank, info in got.items():
            self.assertEqual(info["rank_size"], N)
            self.assertIn("mpi", info["collectors"])
            self.assertEqual(info["clock_sync"]["method"], "mpi_pingpong")
            if rank == 0:
                self.assertEqual(info["clock_sync"]["offset_ns"], 0)

    def test_every_call_with_bytes_peers_and_tags(self):
        self.assertEqual(self.analyse.returncode, 0, self.analyse.stderr)
        self.assertEqual(self.export.returncode, 0, self.export.stderr)
        con = sqlite3.connect(self.db)
        self.addCleanup(con.close)
        rows = con.execute(
            "SELECT c.rank, n.value, k.value, c.bytes, c.count, d.value, c.peer, c.tag, "
            "c.wait_ns, c.end_ns - c.start_ns, g.value FROM Comms c "
            "JOIN StringIds n ON n.id = c.name JOIN StringIds k ON k.id = c.kind "
            "LEFT JOIN StringIds d ON d.id = c.datatype LEFT JOIN StringIds g ON g.id = c.grp"
        ).fetchall()
        for r in range(N):
            got = [row[1:8] for row in rows if row[0] == r]
            self.assertEqual(collections.Counter(got), collections.Counter(expected_ops(r)),
                             f"rank {r}")
            for row in rows:
                if row[0] != r:
                    continue
                name, wait, dur, group = row[1], row[8], row[9], row[10]
                if name in WAITED:
                    self.assertIsNotNone(wait, row)
                    self.assertLessEqual(wait, dur, row)
                else:
                    self.assertIsNone(wait, row)
                self.assertTrue(group == "MPI_COMM_WORLD" or group.startswith("mpi_comm_2_"),
                                row)

    def test_groups_named_by_members(self):
        con = sqlite3.connect(self.db)
        self.addCleanup(con.close)
        rows = con.execute(
            "SELECT c.rank, n.value, m.value, c.size, c.my_index FROM CommGroups c "
            "JOIN StringIds n ON n.id = c.name JOIN StringIds m ON m.id = c.members").fetchall()
        for r in range(N):
            mine = sorted(row[1:] for row in rows if row[0] == r)
            sub = "0,2" if r % 2 == 0 else "1,3"
            self.assertEqual(len(mine), 2, mine)
            self.assertIn(("MPI_COMM_WORLD", "0-3", 4, r), mine)
            other = [g for g in mine if g[0] != "MPI_COMM_WORLD"][0]
            self.assertEqual(other[1:], (sub, 2, r // 2))
        # The same members give the same name on every rank.
        names = {row[2]: row[1] for row in rows if row[1] != "MPI_COMM_WORLD"}
        self.assertEqual(len(set(names.values())), 2)
        for r in (0, 2):
            self.assertIn((r, names["0,2"], "0,2", 2, r // 2), rows)

    def test_timeline_has_every_op(self):
        for path in glob.glob(os.path.join(self.out, "profiler", "PROF_*", "info.json")):
            with open(path, encoding="utf-8") as f:
                rank = json.load(f)["rank_id"]
            trace = os.path.join(os.path.dirname(path), "ASCEND_PROFILER_OUTPUT",
                                 "trace_view.json")
            with open(trace, encoding="utf-8") as f:
                events = json.load(f)
            comm = [e for e in events if e.get("cat") == "communication"]
            self.assertEqual(len(comm), len(expected_ops(rank)), f"rank {rank}")


@unittest.skipUnless(CLI and DEMO and shutil.which(MPIEXEC), "MPI test setup missing")
class TestDemoOverMpi(unittest.TestCase):
    """The README's multi-process run: demo_train --mpi under mpirun and nnprof run --analyse."""

    # The demo's MLP 64-128-64-10: weights and biases of its three layers, as float32.
    GRAD_BYTES = ((64 * 128 + 128) + (128 * 64 + 64) + (64 * 10 + 10)) * 4
    STEPS = 20

    def test_two_ranks_all_reduce_and_analyse(self):
        tmp = tempfile.mkdtemp(prefix="nnprof-demo-")
        self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
        out = os.path.join(tmp, "out")
        run = mpirun(2, [CLI, "run", "-o", out, "--analyse", "--", DEMO, "--mpi", "--steps",
                         str(self.STEPS)])
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        sums = [line.split("checksum")[1].split(",")[0] for line in run.stdout.splitlines()
                if "weights checksum" in line]
        self.assertEqual(len(sums), 2, run.stdout)
        self.assertEqual(sums[0], sums[1])  # the gradients were really averaged
        for rank in (0, 1):
            self.assertTrue(os.path.exists(os.path.join(out, "profiler",
                                                        f"op_statistic_{rank}.csv")))
        for raw in glob.glob(os.path.join(out, "profiler", "PROF_*")):
            dump = subprocess.run([CLI, "dump", raw], capture_output=True, text=True,
                                  timeout=TIMEOUT, check=True).stdout
            recs = [json.loads(line) for line in dump.splitlines()]
            allreduce = [r for r in recs if r.get("kind") == "comm"]
            self.assertEqual(len(allreduce), self.STEPS)
            for r in allreduce:
                self.assertEqual((r["name"], r["bytes"], r["datatype"], r["group"]),
                                 ("MPI_Allreduce", self.GRAD_BYTES, "MPI_FLOAT",
                                  "MPI_COMM_WORLD"))


@unittest.skipUnless(CLI and MPI_CALLS and TESTHOOK and shutil.which(MPIEXEC),
                     "MPI test setup missing")
class TestClockAlignment(unittest.TestCase):
    """Rank r's clock is shifted by r x SKEW (test build of the MPI library only)."""

    SKEW = 1_000_000_000  # 1 s: far beyond any round trip, and its sign is visible

    def test_measured_offset_within_uncertainty(self):
        tmp = tempfile.mkdtemp(prefix="nnprof-clock-")
        self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
        out = os.path.join(tmp, "out")
        run = mpirun(2, [CLI, "run", "-o", out, "--", MPI_CALLS],
                     env={"NNPROF_MPI_LIBRARY": TESTHOOK,
                          "NNPROF_TEST_CLOCK_SKEW_NS": str(self.SKEW)})
        # mpi_calls wants 4 ranks: on 2 it stops right after MPI_Init (exit 2), which is all
        # the clock alignment needs (MPI_Init and MPI_Finalize).
        self.assertEqual(run.returncode, 2, run.stdout + run.stderr)
        got = infos(out)
        self.assertEqual(sorted(got), [0, 1])
        ref, other = got[0]["clock_sync"], got[1]["clock_sync"]
        self.assertEqual((ref["offset_ns"], ref["uncertainty_ns"]), (0, 0))
        # Rank 1's clock reads SKEW ahead: adding -SKEW gives rank 0's time.
        err = abs(other["offset_ns"] - (-self.SKEW))
        unc = other["uncertainty_ns"]
        print(f"clock offset test: injected {-self.SKEW} ns, measured {other['offset_ns']} ns, "
              f"error {err} ns, uncertainty {unc} ns, drift {other['drift_ns']} ns")
        self.assertLessEqual(err, unc)
        self.assertGreater(unc, 0)
        self.assertLess(unc, self.SKEW // 10)  # a meaningful bound, not a vacuous one
        # Same host, constant shift: the drift is far below the shift.
        self.assertLess(abs(other["drift_ns"]), self.SKEW // 2)


@unittest.skipUnless(CLI and MPI_CALLS and BUILD and shutil.which(MPIEXEC),
                     "MPI test setup missing")
class TestWithoutMpiLibrary(unittest.TestCase):
    """An nnprof without libnnprof_mpi.so (built without Open MPI) still profiles MPI
    programs, and says once that their MPI calls are not recorded."""

    def test_runs_and_says_once(self):
        tmp = tempfile.mkdtemp(prefix="nnprof-nompi-")
        self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
        libdir = os.path.join(tmp, "lib")
        os.mkdir(libdir)
        shutil.copy(os.path.join(BUILD, "libnnprof.so"), libdir)
        out = os.path.join(tmp, "out")
        run = mpirun(N, [CLI, "run", "-o", out, "--", MPI_CALLS], env={"NNPROF_LIB_DIR": libdir})
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertEqual((run.stdout + run.stderr).count("MPI calls are not recorded"), 1,
                         run.stderr)
        got = infos(out)
        self.assertEqual(sorted(got), list(range(N)))
        for info in got.values():
            self.assertNotIn("mpi", info["collectors"])
            self.assertEqual(info["clock_sync"]["method"], "none")


if __name__ == "__main__":
    unittest.main()
