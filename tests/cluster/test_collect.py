"""``nnprof collect`` for real: the test starts an sshd of its own on a free port of two
loopback addresses (127.0.0.2 and 127.0.0.3, the two "hosts"), with a host key and a user
key it generates, and collects each host's profiling folder over ssh/rsync into the seed's
cluster layout (cluster_profiler/<id>/profiler/, host_ips_mapping.txt, hccl.json). It
checks passwords are refused, unknown host keys are refused unless accepted on purpose,
an interrupted collection resumes, and what was collected analyses as a cluster. Nothing
ever connects to a non-loopback address.
"""

import filecmp
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import unittest

CLI = os.environ.get("NNPROF_CLI", "")
SSHD = "/usr/sbin/sshd"
HOSTS = ["127.0.0.2", "127.0.0.3"]
TIMEOUT = 120

# MindSpore 1.x per-rank files (docs/CLUSTER.md "MindSpore data"), written here so the test
# needs no corpus: a step trace of two steps and its average row, the HCCL costs with one
# SDMA link, the FLOPs summary.
STEP_TRACE = (
    "step_num,start_point,end_point,total,fp_point,bp_point,iteration_interval,fp_and_bp,tail,"
    "stream_1_0_AllReduce-op1,stream_1_0_AllReduce-op1_start_point,"
    "stream_1_0_AllReduce-op1_end_point\n"
    "1,100000,200000,100000,101000,190000,1000,89000,10000,5000,185000,190000\n"
    "2,200000,300000,100000,201000,290000,1000,89000,10000,5000,285000,290000\n"
    "-,150000,250000,100000,151000,240000,1000,89000,10000,5000,235000,240000\n")
HCCL_RAW = (
    "step_num,communication_cost,wait_cost,link_info,communication_operator_cost\n" +
    "".join('%s,0.05,0.01,"{""0-1"": {""SDMA"": [0.02, 1024.0, 51200000.0]}}",'
            '"{""stream_1_0_AllReduce-op1"": [""%s"", 0.05, 0.01, {""0-1"": {""SDMA"": '
            '[0.02, 1024.0, 51200000.0]}}]}"\n' % (s, s) for s in ("1", "2", "-")))
FLOPS = '{"FLOPs": 100.5, "FLOPS": 20.1, "FLOPS_Utilization": 0.2}'


def write_rank_files(folder, rank):
    """Rank's MindSpore files into folder; returns their names."""
    files = {"step_trace_raw_%d_detail_time.csv" % rank: STEP_TRACE,
             "hccl_raw_%d.csv" % rank: HCCL_RAW, "flops_summary_%d.json" % rank: FLOPS}
    for name, text in files.items():
        write(os.path.join(folder, name), text)
    return sorted(files)


def free_port():
    with socket.socket() as s:
        s.bind((HOSTS[0], 0))
        return s.getsockname()[1]


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT, check=False, **kw)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


class Collect(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        for tool in (SSHD, shutil.which("ssh"), shutil.which("rsync"), shutil.which("ssh-keygen")):
            if not tool or not os.path.exists(tool):
                raise AssertionError("openssh-server, openssh-client and rsync are needed "
                                     "(scripts/bootstrap installs them)")
        cls.tmp = tempfile.mkdtemp(prefix="nnprof_collect_")
        t = cls.tmp
        cls.user = os.environ.get("USER") or subprocess.check_output(["id", "-un"], text=True).strip()
        for key in ("host_key", "user_key"):
            subprocess.check_call(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                                   os.path.join(t, key)])
        shutil.copy(os.path.join(t, "user_key.pub"), os.path.join(t, "authorized_keys"))
        os.chmod(os.path.join(t, "authorized_keys"), 0o600)
        cls.port = free_port()
        config = os.path.join(t, "sshd_config")
        write(config, "\n".join([
            "Port %d" % cls.port,
            "ListenAddress %s" % HOSTS[0],
            "ListenAddress %s" % HOSTS[1],
            "HostKey %s" % os.path.join(t, "host_key"),
            "AuthorizedKeysFile %s" % os.path.join(t, "authorized_keys"),
            "PidFile %s" % os.path.join(t, "sshd.pid"),
            "UsePAM no", "StrictModes no", "PasswordAuthentication no",
            "KbdInteractiveAuthentication no", "PermitRootLogin prohibit-password",
            "LogLevel ERROR", ""]))
        if os.geteuid() == 0:
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation
        cls.sshd = subprocess.Popen([SSHD, "-D", "-e", "-f", config],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # Wait until both addresses accept connections.
        deadline = time.time() + 30
        for host in HOSTS:
            while True:
                try:
                    socket.create_connection((host, cls.port), timeout=1).close()
                    break
                except OSError:
                    if time.time() > deadline or cls.sshd.poll() is not None:
                        raise AssertionError("sshd did not start: %s" %
                                             cls.sshd.stderr.read().decode(errors="replace"))
                    time.sleep(0.1)
        with open(os.path.join(t, "host_key.pub"), encoding="utf-8") as f:
            pub = f.read().split()
        cls.known = os.path.join(t, "known_hosts")
        write(cls.known, "".join("[%s]:%d %s %s\n" % (h, cls.port, pub[0], pub[1]) for h in HOSTS))
        # Each "host" has its own data folder: MindSpore files of two ranks each.
        cls.src = {}
        cls.files = os.path.join(t, "files")  # every rank's files, to compare copies with
        os.makedirs(cls.files)
        for i, host in enumerate(HOSTS):
            root = os.path.join(t, "host%d" % i)
            for dev, rank in enumerate((2 * i, 2 * i + 1)):
                prof = os.path.join(root, "device%d" % dev, "data_r%d" % rank, "profiler")
                os.makedirs(prof)
                write_rank_files(prof, rank)
                write_rank_files(cls.files, rank)
            cls.src[host] = root
        cls.hccl = os.path.join(t, "hccl.json")
        write(cls.hccl, json.dumps({"version": "1.0", "server_count": "2", "server_list": [
            {"server_id": h, "device": [{"device_id": str(d), "device_ip": "192.0.2.%d" % d,
                                         "rank_id": str(2 * i + d)} for d in range(2)]}
            for i, h in enumerate(HOSTS)], "status": "completed"}))

    @classmethod
    def tearDownClass(cls):
        cls.sshd.terminate()
        cls.sshd.wait(timeout=10)
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def hosts_json(self, name, **extra):
        cluster = {h: {"user": self.user, "port": self.port,
                       "src": self.src[h] + "/device[0-9]*/data*/profiler*/"} for h in HOSTS}
        for h in HOSTS:
            cluster[h].update(extra)
        path = os.path.join(self.tmp, name)
        write(path, json.dumps({"rank_size": 4, "cluster": cluster}))
        return path

    def collect(self, out, hosts, *flags):
        return run([CLI, "collect", "--quiet", "-o", out, "-i", os.path.join(self.tmp, "user_key"),
                    "--known-hosts", self.known] + list(flags) + [hosts])

    def test_seed_layout_and_cluster(self):
        out = os.path.join(self.tmp, "run1")
        r = self.collect(out, self.hosts_json("hosts1.json"), "--hccl", self.hccl, "-j", "2")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("collected 2 hosts", r.stdout)
        with open(os.path.join(out, "host_ips_mapping.txt"), encoding="utf-8") as f:
            self.assertEqual(f.read(), "127.0.0.2 1\n127.0.0.3 2\n")
        self.assertTrue(filecmp.cmp(self.hccl, os.path.join(out, "hccl.json"), shallow=False))
        # Host i's two device folders, flattened into its profiler folder, byte for byte.
        for i, host in enumerate(HOSTS):
            prof = os.path.join(out, "cluster_profiler", str(i + 1), "profiler")
            for rank in (2 * i, 2 * i + 1):
                name = "step_trace_raw_%d_detail_time.csv" % rank
                self.assertTrue(filecmp.cmp(os.path.join(self.files, name), os.path.join(prof, name),
                                            shallow=False))
            self.assertFalse(os.path.exists(os.path.join(prof, "step_trace_raw_%d_detail_time.csv"
                                                         % (2 * (1 - i)))))
        # The collected folder is a cluster: ranks from the data, hosts from the mapping.
        r = run([CLI, "cluster", "--quiet", out])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(os.path.join(out, "cluster_analysis_output", "cluster_advice.json"),
                  encoding="utf-8") as f:
            a = json.load(f)
        self.assertEqual([x["rank"] for x in a["cluster"]["ranks"]], [0, 1, 2, 3])
        self.assertEqual([x["host"] for x in a["cluster"]["ranks"]], [HOSTS[0]] * 2 + [HOSTS[1]] * 2)
        self.assertEqual([x["device_id"] for x in a["cluster"]["ranks"]], [0, 1, 0, 1])

    def test_train_dir_and_plain_host_file(self):
        out = os.path.join(self.tmp, "run2")
        hosts = os.path.join(self.tmp, "hosts.txt")
        write(hosts, "# the seed's hosts\n%s@%s:%d\n%s@%s:%d  # second\n" %
              (self.user, HOSTS[0], self.port, self.user, HOSTS[1], self.port))
        # Both "hosts" are this machine: the seed's layout of host 0's folder on each.
        r = self.collect(out, hosts, "--train-dir", self.src[HOSTS[0]], "--output", "data")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        for hid in ("1", "2"):
            prof = os.path.join(out, "cluster_profiler", hid, "profiler")
            self.assertEqual(sorted(n for n in os.listdir(prof) if n.startswith("step_trace")),
                             ["step_trace_raw_0_detail_time.csv", "step_trace_raw_1_detail_time.csv"])

    def test_passwd_refused(self):
        out = os.path.join(self.tmp, "run3")
        r = self.collect(out, self.hosts_json("hosts3.json", passwd="secret"))
        self.assertEqual(r.returncode, 2)
        self.assertIn('has a "passwd" field', r.stderr)
        self.assertIn("ssh-copy-id", r.stderr)
        self.assertNotIn("secret", r.stdout + r.stderr)
        self.assertFalse(os.path.exists(out))

    def test_unknown_host_key_refused_then_accepted(self):
        out = os.path.join(self.tmp, "run4")
        known = os.path.join(self.tmp, "known_empty")
        write(known, "")
        args = [CLI, "collect", "--quiet", "-o", out, "-i", os.path.join(self.tmp, "user_key"),
                "--known-hosts", known, self.hosts_json("hosts4.json")]
        r = run(args)
        self.assertEqual(r.returncode, 1)
        self.assertIn("host 127.0.0.2 (id 1)", r.stderr)
        self.assertIn("not in known_hosts", r.stderr)
        r = run(args[:-1] + ["--accept-new-host-keys", args[-1]])
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(known, encoding="utf-8") as f:
            self.assertEqual(len(f.read().splitlines()), 2)  # both keys remembered

    def test_resume(self):
        out = os.path.join(self.tmp, "run5")
        hosts = self.hosts_json("hosts5.json")
        self.assertEqual(self.collect(out, hosts).returncode, 0)
        prof = os.path.join(out, "cluster_profiler", "1", "profiler")
        gone = os.path.join(prof, "hccl_raw_0.csv")
        cut = os.path.join(prof, "step_trace_raw_1_detail_time.csv")
        kept = os.path.join(prof, "flops_summary_0.json")
        os.remove(gone)
        with open(cut, "r+b") as f:  # an interrupted copy
            f.truncate(100)
        os.utime(cut, (0, 0))
        inode = os.stat(kept).st_ino
        # The host list in another order: ids come from host_ips_mapping.txt.
        with open(hosts, encoding="utf-8") as f:
            cluster = json.load(f)["cluster"]
        rev = os.path.join(self.tmp, "hosts5r.json")
        write(rev, "{\"cluster\": {%s}}" % ", ".join(
            "%s: %s" % (json.dumps(h), json.dumps(cluster[h])) for h in reversed(HOSTS)))
        r = self.collect(out, rev)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "host_ips_mapping.txt"), encoding="utf-8") as f:
            self.assertEqual(sorted(f.read().splitlines()), ["127.0.0.2 1", "127.0.0.3 2"])
        for name in ("hccl_raw_0.csv", "step_trace_raw_1_detail_time.csv"):
            self.assertTrue(filecmp.cmp(os.path.join(self.files, name), os.path.join(prof, name),
                                        shallow=False))
        self.assertEqual(os.stat(kept).st_ino, inode)  # unchanged files are not copied again

    def test_unsafe_names_and_missing_source(self):
        out = os.path.join(self.tmp, "run6")
        bad = os.path.join(self.tmp, "bad.txt")
        write(bad, "-oProxyCommand=touch%20x\n")
        r = self.collect(out, bad, "--src", "/tmp")
        self.assertEqual(r.returncode, 2)
        self.assertIn("is not a host name", r.stderr)
        r = self.collect(out, self.hosts_json("hosts6.json"), "--src", "/x;rm")
        self.assertEqual(r.returncode, 2)
        # A folder that is not on the host: named, with rsync's reason.
        hosts = os.path.join(self.tmp, "one.txt")
        write(hosts, "%s@%s:%d /nonexistent/profiler/\n" % (self.user, HOSTS[0], self.port))
        r = self.collect(out, hosts)
        self.assertEqual(r.returncode, 1)
        self.assertIn("host 127.0.0.2 (id 1)", r.stderr)
        self.assertIn("does not exist on that host", r.stderr)

    def test_progress_bar_on_a_terminal(self):
        if not shutil.which("script"):
            self.skipTest("script(1) not installed")
        out = os.path.join(self.tmp, "run7")
        cmd = " ".join("'%s'" % a for a in [
            CLI, "collect", "-o", out, "-i", os.path.join(self.tmp, "user_key"), "--known-hosts",
            self.known, self.hosts_json("hosts7.json")])
        r = run(["script", "-qec", cmd, "/dev/null"])
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("2/2 hosts", r.stdout)
        self.assertIn("MB copied", r.stdout)


if __name__ == "__main__":
    unittest.main()
