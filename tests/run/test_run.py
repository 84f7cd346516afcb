"""``nnprof run`` end to end, without MPI: a shell script (the program it starts is followed),
a Python script (found the nnprof package without PYTHONPATH), exit statuses and signals
forwarded with the data kept, --analyse, ranks from launcher variables, usage errors, and a
build without libnnprof_mpi.so. Every expectation is written here by hand.
Paths come from CMake (tests/run/CMakeLists.txt)."""

import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

CLI = os.environ.get("NNPROF_CLI", "")
SIMPLE_TRAIN = os.environ.get("NNP_SIMPLE_TRAIN", "")
BUILD = os.environ.get("NNP_BINARY_DIR", "")
# The seconds a profiled command may take on a loaded 2-core machine.
TIMEOUT = 120

# A Python program that records steps through the nnprof package; argv[1] says how to end.
PY_PROGRAM = textwrap.dedent("""\
    import os, signal, sys, time
    import nnprof
    from nnprof import record
    for step in range(1, 6):
        record.step_begin(step)
        time.sleep(0.001)
        record.step_end(step)
    how = sys.argv[1]
    if how == "exit3":
        sys.exit(3)
    if how == "wait":
        print("ready", flush=True)
        time.sleep(60)
    print("python done:", nnprof.library_path)
    """)


def steps_in(out):
    """Step ids recorded under out (every raw directory), via ``nnprof dump``."""
    ids = []
    for raw in sorted(glob.glob(os.path.join(out, "profiler", "PROF_*"))):
        dump = subprocess.run([CLI, "dump", raw], capture_output=True, text=True,
                              timeout=TIMEOUT, check=False)
        for line in dump.stdout.splitlines():
            rec = json.loads(line)
            if rec.get("kind") == "step_begin":
                ids.append(rec["step_id"])
    return ids


def infos(out):
    res = []
    for path in sorted(glob.glob(os.path.join(out, "profiler", "PROF_*", "info.json"))):
        with open(path, encoding="utf-8") as f:
            res.append(json.load(f))
    return res


def clean_env(**extra):
    """The test's environment without anything that would profile or place the run."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MS_PROFILER", "PROFILING_", "NNPROF_", "OMPI_", "PMI_",
                                "SLURM_"))
           and k not in ("RANK", "WORLD_SIZE", "RANK_ID", "RANK_SIZE", "DEVICE_ID",
                         "LOCAL_RANK", "LD_PRELOAD", "PYTHONPATH")}
    env["NNPROF_LOG_LEVEL"] = "error"
    env.update(extra)
    return env


@unittest.skipUnless(CLI and SIMPLE_TRAIN, "set NNPROF_CLI and NNP_SIMPLE_TRAIN")
class TestRun(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="nnprof-run-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.out = os.path.join(self.tmp, "out")
        self.py = os.path.join(self.tmp, "prog.py")
        with open(self.py, "w", encoding="utf-8") as f:
            f.write(PY_PROGRAM)

    def run_cli(self, args, env=None, **kw):
        # In the test's folder: a run that should not have started writes nothing elsewhere.
        kw.setdefault("cwd", self.tmp)
        return subprocess.run([CLI, "run"] + args, capture_output=True, text=True,
                              timeout=TIMEOUT, env=env or clean_env(), check=False, **kw)

    def test_shell_script_profiles_the_program_it_starts(self):
        script = os.path.join(self.tmp, "train.sh")
        with open(script, "w", encoding="utf-8") as f:
            f.write(f"#!/bin/sh\necho starting\n{SIMPLE_TRAIN} --steps 20\necho finished\n")
        os.chmod(script, 0o755)
        p = self.run_cli(["-o", self.out, "--", "sh", script])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("finished", p.stdout)
        # simple_train records steps 0..19 (followed through sh's exec of it).
        self.assertEqual(sorted(steps_in(self.out)), list(range(20)))

    def test_relative_output_is_where_nnprof_ran(self):
        os.mkdir(os.path.join(self.tmp, "sub"))
        p = self.run_cli(["-o", "rel", "--", "sh", "-c", f"cd sub && {SIMPLE_TRAIN} --steps 3"],
                         cwd=self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sorted(steps_in(os.path.join(self.tmp, "rel"))), [0, 1, 2])
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "sub", "rel")))

    def test_follow_children_off_leaves_the_script_child_alone(self):
        script = os.path.join(self.tmp, "train.sh")
        with open(script, "w", encoding="utf-8") as f:
            f.write(f"#!/bin/sh\n{SIMPLE_TRAIN} --steps 5\n")
        p = self.run_cli(["-o", self.out, "--follow-children=off", "--", "sh", script])
        self.assertEqual(p.returncode, 0, p.stderr)
        env_of_child = subprocess.run(
            [CLI, "run", "-o", self.out, "--follow-children=off", "--", "sh", "-c",
             "echo $NNPROF_FOLLOW_CHILDREN"], capture_output=True, text=True,
            timeout=TIMEOUT, env=clean_env(), check=False)
        self.assertEqual(env_of_child.stdout.strip(), "0")

    def test_python_script_finds_the_package_and_records(self):
        p = self.run_cli(["-o", self.out, "--", sys.executable, self.py, "normal"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("python done:", p.stdout)
        self.assertEqual(sorted(steps_in(self.out)), [1, 2, 3, 4, 5])
        opts = infos(self.out)[0]["options"]
        self.assertTrue(opts["profile_communication"])

    def test_exit_status_forwarded_and_data_kept(self):
        p = self.run_cli(["-o", self.out, "--", sys.executable, self.py, "exit3"])
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual(sorted(steps_in(self.out)), [1, 2, 3, 4, 5])

    def test_signal_forwarded_and_data_kept(self):
        proc = subprocess.Popen([CLI, "run", "-o", self.out, "--", sys.executable, self.py,
                                 "wait"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=clean_env())
        self.assertEqual(proc.stdout.readline().strip(), "ready")
        time.sleep(0.2)  # the writer drains every 10 ms
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=TIMEOUT)
        # nnprof ends as the command did: killed by SIGTERM (Python keeps the default).
        self.assertEqual(proc.returncode, -signal.SIGTERM, err)
        self.assertEqual(sorted(steps_in(self.out)), [1, 2, 3, 4, 5])

    def test_killed_program_gives_the_same_signal(self):
        p = self.run_cli(["-o", self.out, "--", "sh", "-c", "kill -KILL $$"])
        self.assertEqual(p.returncode, -signal.SIGKILL, p.stderr)

    def test_command_not_found_or_not_executable(self):
        p = self.run_cli(["-o", self.out, "--", os.path.join(self.tmp, "missing")])
        self.assertEqual(p.returncode, 127)
        self.assertIn("No such file", p.stderr)
        p = self.run_cli(["-o", self.out, "--", self.py])  # not executable
        self.assertEqual(p.returncode, 126)

    def test_analyse_when_the_command_ends(self):
        p = self.run_cli(["-o", self.out, "--analyse", "--", SIMPLE_TRAIN, "--steps", "30"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(os.path.exists(os.path.join(self.out, "profiler",
                                                    "op_statistic_0.csv")), p.stderr)
        self.assertIn("analysed", p.stderr)

    def test_steps_range_collects_only_those_steps(self):
        p = self.run_cli(["-o", self.out, "--steps", "5-9", "--", SIMPLE_TRAIN, "--steps", "20"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sorted(steps_in(self.out)), [5, 6, 7, 8, 9])
        self.assertEqual(len(infos(self.out)[0]["windows"]), 1)

    def test_rank_and_size_from_the_launcher(self):
        for env, rank, size, dev in ((dict(RANK="3", WORLD_SIZE="4", LOCAL_RANK="1"), 3, 4, 1),
                                     (dict(SLURM_PROCID="5", SLURM_NTASKS="8"), 5, 8, 0),
                                     # RANK_ID, MindSpore's own, wins over the launcher's
                                     (dict(RANK_ID="2", RANK_SIZE="8", RANK="6",
                                           WORLD_SIZE="8"), 2, 8, 0)):
            out = os.path.join(self.tmp, f"out{rank}")
            p = self.run_cli(["-o", out, "--", SIMPLE_TRAIN, "--steps", "3"],
                             env=clean_env(**env))
            self.assertEqual(p.returncode, 0, p.stderr)
            info = infos(out)[0]
            self.assertEqual((info["rank_id"], info["rank_size"], info["device_id"]),
                             (rank, size, dev), env)

    def test_flags_become_options(self):
        p = self.run_cli(["-o", self.out, "--memory", "--level", "1", "--sample-hz", "20",
                          "--profile-framework=time", "--option", "timeline_limit=123",
                          "--communication=off", "--", SIMPLE_TRAIN, "--steps", "3"])
        self.assertEqual(p.returncode, 0, p.stderr)
        opts = infos(self.out)[0]["options"]
        self.assertEqual((opts["profile_memory"], opts["profiler_level"],
                          opts["sample_interval_ms"], opts["profile_framework"],
                          opts["timeline_limit"], opts["profile_communication"]),
                         (True, "Level1", 50, "time", 123, False))

    def test_usage_errors_run_nothing(self):
        marker = os.path.join(self.tmp, "ran")
        for args in (["--bogus-option=1"], ["--level", "Level9"], ["--steps", "5-2"],
                     ["--sample-hz", "0"], ["--op-time=yes"], ["--timeline-limit=-1"],
                     ["--mpi=maybe"],
                     ["--options", "[1]"]):
            p = self.run_cli(args + ["--", "touch", marker])
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertTrue(p.stderr.startswith("nnprof: "), p.stderr)
            self.assertFalse(os.path.exists(marker), args)
        p = self.run_cli([])
        self.assertEqual(p.returncode, 2)
        self.assertIn("no command", p.stderr)

    def test_bad_options_in_the_environment(self):
        p = self.run_cli(["--", "true"], env=clean_env(MS_PROFILER_OPTIONS="[not json"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("MS_PROFILER_OPTIONS", p.stderr)

    @unittest.skipUnless(BUILD, "set NNP_BINARY_DIR")
    def test_without_the_mpi_library_a_plain_program_runs_silently(self):
        libdir = os.path.join(self.tmp, "lib")
        os.mkdir(libdir)
        shutil.copy(os.path.join(BUILD, "libnnprof.so"), libdir)
        p = self.run_cli(["-o", self.out, "--", SIMPLE_TRAIN, "--steps", "4"],
                         env=clean_env(NNPROF_LIB_DIR=libdir))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("MPI", p.stderr)
        self.assertEqual(sorted(steps_in(self.out)), [0, 1, 2, 3])
        self.assertEqual(infos(self.out)[0]["clock_sync"]["method"], "none")
        p = self.run_cli(["--", "true"], env=clean_env(NNPROF_LIB_DIR=self.tmp))
        self.assertEqual(p.returncode, 1)
        self.assertIn("libnnprof.so not found", p.stderr)


@unittest.skipUnless(CLI and SIMPLE_TRAIN, "set NNPROF_CLI and NNP_SIMPLE_TRAIN")
class TestCliHabits(unittest.TestCase):
    """--version and -V, listed in --help; msprof's own export flags."""

    def test_version_flags(self):
        help_text = subprocess.run([CLI, "--help"], capture_output=True, text=True,
                                   timeout=TIMEOUT, check=False).stdout
        self.assertIn("-V, --version", help_text)
        self.assertIn("run", help_text)
        for flag in ("-V", "--version"):
            p = subprocess.run([CLI, flag], capture_output=True, text=True, timeout=TIMEOUT,
                               check=False)
            self.assertEqual(p.returncode, 0)
            self.assertRegex(p.stdout, r"^nnprof \d+\.\d+\.\d+\n$")

    def test_msprof_export_form_equals_the_subcommands(self):
        tmp = tempfile.mkdtemp(prefix="nnprof-export-")
        self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
        out = os.path.join(tmp, "a")
        p = subprocess.run([CLI, "run", "-o", out, "--", SIMPLE_TRAIN, "--steps", "10"],
                           capture_output=True, text=True, timeout=TIMEOUT, env=clean_env(),
                           check=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        shutil.copytree(out, os.path.join(tmp, "b"))
        raw_a = glob.glob(os.path.join(tmp, "a", "profiler", "PROF_*"))[0]
        raw_b = glob.glob(os.path.join(tmp, "b", "profiler", "PROF_*"))[0]

        def cli(*args):
            res = subprocess.run([CLI] + list(args), capture_output=True, text=True,
                                 timeout=TIMEOUT, check=False)
            self.assertEqual(res.returncode, 0, (args, res.stderr))

        cli("export", "--export=on", f"--output={raw_a}", "--summary-format=json")
        cli("export", "timeline", "-dir", raw_b)
        cli("export", "summary", "-dir", raw_b, "--format", "json")

        def outputs(raw):
            res = {}
            for path in glob.glob(os.path.join(raw, "mindstudio_profiler_output", "*")):
                name = re.sub(r"_\d{14}", "", os.path.basename(path))
                with open(path, encoding="utf-8") as f:
                    res[name] = f.read() if name.startswith(("op_statistic", "step_trace"))\
                        else None
            return res

        got, want = outputs(raw_a), outputs(raw_b)
        self.assertIn("op_statistic.json", want)
        self.assertIn("msprof.json", want)
        self.assertEqual(got, want)
        cli("export", "--export=on", "--output", raw_a, "--type=db")
        self.assertTrue(os.path.exists(os.path.join(raw_a, "nnprof.db")))
        for bad in (["--export=off", f"--output={raw_a}"], ["--export=on"],
                    ["--export=on", f"--output={raw_a}", "--type=pdf"],
                    ["--export=on", f"--output={raw_a}", "--reports=x.json"]):
            res = subprocess.run([CLI, "export"] + bad, capture_output=True, text=True,
                                 timeout=TIMEOUT, check=False)
            self.assertEqual(res.returncode, 2, (bad, res.stderr))


if __name__ == "__main__":
    unittest.main()
