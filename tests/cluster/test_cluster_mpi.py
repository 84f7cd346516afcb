"""``nnprof cluster`` on a real MPI capture: ``mpirun -np 4 nnprof run -- cluster_ring``
records every rank's MPI calls; the cluster analysis of that run must show the bytes
cluster_ring.c moves between each pair of ranks (worked out here from its plan, never
taken from nnprof's output), every rank's group, and the same output bytes whether it runs
in one process or spread by ``mpirun -np 1`` and ``-np 2`` (docs/CLUSTER.md, "Scale").
Paths come from CMake (tests/cluster/CMakeLists.txt).
"""

import filecmp
import json
import os
import shutil
import subprocess
import tempfile
import unittest

CLI = os.environ.get("NNPROF_CLI", "")
RING = os.environ.get("NNP_CLUSTER_RING", "")
MPIEXEC = os.environ.get("NNP_MPIEXEC", "mpirun")

N = 4
REPS = 3  # cluster_ring.c
BLOCK = 1000  # doubles per (rank + 1)
DOUBLE = 8
AR_COUNT = 1000
TIMEOUT = 240
OUTPUTS = [
    "cluster_step_trace_time.csv",
    "cluster_communication.json",
    "cluster_communication_matrix.json",
    "communication_group.json",
    "cluster_analysis.db",
    "cluster_step_trace.json",
    "cluster_advice.json",
    "cluster_advice.txt",
    "cluster_timeline.json",
] + ["ascend_cluster_analyse_data-parallel_1_%d_%d.csv" % (N, r) for r in range(N)]


def mpirun(np, args):
    cmd = [MPIEXEC, "--oversubscribe", "-np", str(np)]
    env = dict(os.environ)
    if os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
    return subprocess.run(cmd + args, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT, check=False)


class ClusterMpi(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="nnprof_cluster_mpi_")
        cls.data = os.path.join(cls.tmp, "data")
        r = mpirun(N, [CLI, "run", "-o", cls.data, "--", RING])
        if r.returncode != 0:
            raise AssertionError("capture failed: " + r.stdout + r.stderr)
        cls.one = os.path.join(cls.tmp, "one")
        r = subprocess.run([CLI, "cluster", "--quiet", "--timeline", "-o", cls.one, cls.data],
                           capture_output=True, text=True, timeout=TIMEOUT, check=False)
        if r.returncode != 0:
            raise AssertionError("nnprof cluster failed: " + r.stdout + r.stderr)
        cls.one_out = r.stdout

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def load(self, name, folder=None):
        with open(os.path.join(folder or self.one, name), encoding="utf-8") as f:
            return json.load(f)

    def test_matrix_bytes_between_known_pairs(self):
        m = self.load("cluster_communication_matrix.json")
        world = m["(0, 1, 2, 3)"]["step"]
        # Rank r sends (r + 1) * 1000 doubles to r + 1, REPS times; the receiver reports
        # each transfer (its half of MPI_Sendrecv). Every call is one op of the matrix.
        recv_ops = sorted(k for k in world if k.startswith("MPI_Sendrecv_"))
        self.assertEqual(len(recv_ops), REPS)
        for op in recv_ops:
            links = world[op]
            self.assertEqual(sorted(links), sorted("%d-%d" % (r, (r + 1) % N) for r in range(N)))
            for r in range(N):
                link = links["%d-%d" % (r, (r + 1) % N)]
                self.assertEqual(link["Transit Size(MB)"], (r + 1) * BLOCK * DOUBLE / 1e6)
                self.assertEqual(link["Op Name"], "MPI_Sendrecv")
                self.assertEqual(link["Transport Type"], "SHM")  # one host
                # msprof-analyze's bandwidth: MB / ms to 4 decimals. Not "> 0": a transfer
                # that waits ~160 ms for a descheduled partner (a loaded machine) rounds to 0.
                self.assertGreater(link["Transit Time(ms)"], 0)
                self.assertAlmostEqual(link["Bandwidth(GB/s)"],
                                       link["Transit Size(MB)"] / link["Transit Time(ms)"],
                                       delta=0.00005 + 1e-12)
        total = world["Total Op Info@MPI_COMM_WORLD"]
        for r in range(N):
            self.assertAlmostEqual(total["%d-%d" % (r, (r + 1) % N)]["Transit Size(MB)"],
                                   REPS * (r + 1) * BLOCK * DOUBLE / 1e6, places=12)

    def test_communication_per_rank(self):
        c = self.load("cluster_communication.json")["(0, 1, 2, 3)"]["step"]
        ar = c["MPI_Allreduce_0@MPI_COMM_WORLD"]
        self.assertEqual(sorted(ar), [str(r) for r in range(N)])
        for r in range(N):
            info = ar[str(r)]
            bw = info["Communication Bandwidth Info"]["SHM"]
            self.assertEqual(bw["Transit Size(MB)"], AR_COUNT * DOUBLE / 1e6)
            t = info["Communication Time Info"]
            # The wait is derived from the ranks' aligned entries: within the op.
            self.assertLessEqual(t["Wait Time(ms)"], t["Elapse Time(ms)"])
            self.assertAlmostEqual(t["Wait Time(ms)"] + t["Transit Time(ms)"],
                                   t["Elapse Time(ms)"], places=9)
        # Every rank's send half: (r + 1) * 8000 bytes.
        for r in range(N):
            sizes = [info["Communication Bandwidth Info"]["SHM"]["Transit Size(MB)"]
                     for key, op in c.items() if key.startswith("MPI_Sendrecv_")
                     for rank, info in op.items() if rank == str(r)]
            self.assertIn((r + 1) * BLOCK * DOUBLE / 1e6, sizes)
            self.assertIn(((r - 1) % N + 1) * BLOCK * DOUBLE / 1e6, sizes)
        groups = self.load("communication_group.json")
        self.assertEqual(groups["collective"], [[0, 1, 2, 3]])
        self.assertEqual(groups["p2p"], [[0, 1, 2, 3]])

    def test_ranks_and_clocks(self):
        a = self.load("cluster_advice.json")
        self.assertEqual(a["cluster"]["ranks_found"], N)
        self.assertEqual(a["cluster"]["missing_ranks"], [])
        for r, info in enumerate(a["cluster"]["ranks"]):
            self.assertEqual(info["rank"], r)
            self.assertEqual(info["format"], "nnprof-raw")
            self.assertIsNotNone(info["clock_offset_ns"])  # measured at MPI_Init
        self.assertIn("cluster of 4 ranks analysed", self.one_out)
        t = self.load("cluster_timeline.json")
        names = sorted({e["args"]["name"] for e in t if e.get("name") == "process_name"})
        self.assertIn("Communication Rank3", names)

    def test_mpirun_np1_and_np2_same_bytes(self):
        for np in (1, 2):
            out = os.path.join(self.tmp, "np%d" % np)
            r = mpirun(np, [CLI, "cluster", "--quiet", "--timeline", "-o", out, self.data])
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            for name in OUTPUTS:
                self.assertTrue(filecmp.cmp(os.path.join(self.one, name),
                                            os.path.join(out, name), shallow=False),
                                "%s differs under mpirun -np %d" % (name, np))

    def test_stats_per_process(self):
        r = mpirun(2, [CLI, "cluster", "--quiet", "--stats", "-o",
                       os.path.join(self.tmp, "stats"), self.data])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        stats = [json.loads(line)["nnprof_cluster_stats"] for line in r.stderr.splitlines()
                 if line.startswith('{"nnprof_cluster_stats"')]
        self.assertEqual(sorted(s["process"] for s in stats), [0, 1])
        self.assertEqual(sum(s["inputs_read"] for s in stats), N)
        for s in stats:
            self.assertEqual(s["processes"], 2)
            self.assertGreater(s["peak_rss_kb"], 0)


if __name__ == "__main__":
    unittest.main()
