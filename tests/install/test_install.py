"""``cmake --install`` into a temporary prefix, then use it the way users do: build an
example against it with pkg-config and with find_package(nnprof), run the installed CLI
(which must find the installed library), read the man page, complete with the installed
bash completion, and ``pip install ./python`` into the same prefix (the package must find
the installed library). Paths come from CMake (tests/install/CMakeLists.txt)."""

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

BUILD = os.environ.get("NNP_BINARY_DIR", "")
SOURCE = os.environ.get("NNP_SOURCE_DIR", "")
CMAKE = os.environ.get("NNP_CMAKE", "cmake")
CC = os.environ.get("NNP_CC", "cc")
HAVE_MPI = os.environ.get("NNP_HAVE_MPI", "0") == "1"
HAVE_MAN = os.environ.get("NNP_HAVE_MAN", "0") == "1"
TIMEOUT = 300


def run(cmd, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", TIMEOUT)
    return subprocess.run(cmd, check=False, **kw)


def plain_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NNPROF_", "MS_PROFILER", "PROFILING_"))
           and k not in ("LD_PRELOAD", "LD_LIBRARY_PATH", "PYTHONPATH", "PKG_CONFIG_PATH")}
    env.update(extra)
    return env


@unittest.skipUnless(BUILD and SOURCE, "set NNP_BINARY_DIR and NNP_SOURCE_DIR")
class TestInstall(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="nnprof-install-")
        cls.prefix = os.path.join(cls.tmp, "prefix")
        cls.install = run([CMAKE, "--install", BUILD, "--prefix", cls.prefix])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.assertEqual(self.install.returncode, 0, self.install.stderr)

    def p(self, *parts):
        return os.path.join(self.prefix, *parts)

    def libdir(self):
        return os.path.dirname(glob.glob(self.p("lib*", "**", "libnnprof.so.0"),
                                         recursive=True)[0])

    def test_files_in_place(self):
        libdir = self.libdir()
        for rel in ("bin/nnprof", "include/nnprof/nnprof.h", "include/nnprof/nnprof_version.h",
                    "share/bash-completion/completions/nnprof"):
            self.assertTrue(os.path.exists(self.p(rel)), rel)
        for name in ("libnnprof.so", "libnnprof.so.0", "pkgconfig/nnprof.pc",
                     "cmake/nnprof/nnprofConfig.cmake", "cmake/nnprof/nnprofConfigVersion.cmake"):
            self.assertTrue(os.path.exists(os.path.join(libdir, name)), name)
        self.assertEqual(os.path.exists(os.path.join(libdir, "libnnprof_mpi.so")), HAVE_MPI)
        # Tests and test-only libraries stay in the build tree.
        self.assertEqual(glob.glob(self.p("**", "*testhook*"), recursive=True), [])

    def test_build_against_it_with_pkg_config(self):
        env = plain_env(PKG_CONFIG_PATH=os.path.join(self.libdir(), "pkgconfig"))
        flags = run(["pkg-config", "--cflags", "--libs", "nnprof"], env=env)
        self.assertEqual(flags.returncode, 0, flags.stderr)
        self.assertIn(f"-I{self.p('include')}", flags.stdout)
        version = run(["pkg-config", "--modversion", "nnprof"], env=env).stdout.strip()
        exe = os.path.join(self.tmp, "simple_train_pc")
        cc = run([CC, os.path.join(SOURCE, "examples", "simple_train.c"), "-o", exe]
                 + flags.stdout.split() + ["-lm"], env=env)
        self.assertEqual(cc.returncode, 0, cc.stderr)
        out = os.path.join(self.tmp, "pc_out")
        ran = run([exe, "--output", out, "--steps", "5"],
                  env=plain_env(LD_LIBRARY_PATH=self.libdir()))
        self.assertEqual(ran.returncode, 0, ran.stderr)
        infos = glob.glob(os.path.join(out, "profiler", "PROF_*", "info.json"))
        self.assertEqual(len(infos), 1)
        with open(infos[0], encoding="utf-8") as f:
            self.assertEqual(json.load(f)["nnprof_version"], version)

    def test_build_against_it_with_find_package(self):
        proj = os.path.join(self.tmp, "consumer")
        os.makedirs(proj)
        with open(os.path.join(proj, "CMakeLists.txt"), "w", encoding="utf-8") as f:
            f.write(textwrap.dedent("""\
                cmake_minimum_required(VERSION 3.18)
                project(consumer C)
                find_package(nnprof 0.1 REQUIRED)
                add_executable(consumer main.c)
                target_link_libraries(consumer PRIVATE nnprof::nnprof)
                """))
        with open(os.path.join(proj, "main.c"), "w", encoding="utf-8") as f:
            f.write('#include <nnprof/nnprof.h>\n#include <stdio.h>\n'
                    'int main(void) { printf("%s\\n", nnp_version()); return 0; }\n')
        b = os.path.join(proj, "build")
        conf = run([CMAKE, "-S", proj, "-B", b, f"-DCMAKE_PREFIX_PATH={self.prefix}"],
                   env=plain_env())
        self.assertEqual(conf.returncode, 0, conf.stdout + conf.stderr)
        self.assertEqual(run([CMAKE, "--build", b], env=plain_env()).returncode, 0)
        ran = run([os.path.join(b, "consumer")], env=plain_env(LD_LIBRARY_PATH=self.libdir()))
        self.assertEqual(ran.stdout.strip(), "0.1.0")

    def test_installed_cli_finds_the_installed_library(self):
        cli = self.p("bin", "nnprof")
        version = run([cli, "-V"], env=plain_env())
        self.assertRegex(version.stdout, r"^nnprof \d+\.\d+\.\d+")
        env = plain_env()
        probe = run([cli, "run", "--", "sh", "-c", "echo $LD_PRELOAD"], env=env,
                    cwd=self.tmp)
        self.assertEqual(probe.returncode, 0, probe.stderr)
        preload = probe.stdout.strip().split(":")
        self.assertEqual(os.path.realpath(preload[0]),
                         os.path.realpath(os.path.join(self.libdir(), "libnnprof.so")))

    @unittest.skipUnless(HAVE_MAN and shutil.which("man"), "man page not built, or no man")
    def test_man_page(self):
        page = glob.glob(self.p("share", "man", "man1", "nnprof.1"))
        self.assertEqual(len(page), 1)
        shown = run(["man", "-l", page[0]], env=plain_env(MANWIDTH="100", MAN_KEEP_FORMATTING=""))
        self.assertEqual(shown.returncode, 0, shown.stderr)
        for text in ("NAME", "nnprof - performance profiler", "SYNOPSIS", "nnprof run",
                     "nnprof analyse", "nnprof export"):
            self.assertIn(text, shown.stdout)
        found = run(["man", "-w", "nnprof"],
                    env=plain_env(MANPATH=self.p("share", "man")))
        self.assertEqual(os.path.realpath(found.stdout.strip()), os.path.realpath(page[0]))

    def test_bash_completion(self):
        script = self.p("share", "bash-completion", "completions", "nnprof")

        def complete(*words):
            words = list(words)
            cmd = (f"source {script}; COMP_WORDS=({' '.join(repr(w) for w in words)}); "
                   f"COMP_CWORD={len(words) - 1}; _nnprof; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
            res = run(["bash", "-c", cmd], env=plain_env())
            self.assertEqual(res.returncode, 0, res.stderr)
            return res.stdout.split()

        self.assertEqual(complete("nnprof", "ru"), ["run"])
        self.assertIn("--version", complete("nnprof", "--"))
        self.assertEqual(complete("nnprof", "run", "--lev"), ["--level"])
        self.assertEqual(complete("nnprof", "run", "--level", "Level"),
                         ["Level0", "Level1", "Level2"])
        self.assertEqual(sorted(complete("nnprof", "run", "--mpi=o")), ["off", "on"])
        self.assertIn("sh", complete("nnprof", "run", "-o", "x", "--", "sh"))
        self.assertEqual(complete("nnprof", "export", "sq"), ["sqlite"])

    def test_pip_install_finds_the_installed_library(self):
        # This interpreter, or Debian's (scripts/bootstrap installs python3-pip,
        # python3-setuptools and python3-wheel): building without network needs all three.
        python = None
        for cand in (sys.executable, "/usr/bin/python3"):
            if os.path.exists(cand) and run([cand, "-c", "import setuptools, wheel; import pip"],
                                            env=plain_env()).returncode == 0:
                python = cand
                break
        if python is None:
            self.skipTest("no python3 with pip, setuptools and wheel")
        # From a copy: setuptools builds in the source folder (build/, *.egg-info), and a
        # test must not write into the repository.
        src = os.path.join(self.tmp, "python-src")
        shutil.copytree(os.path.join(SOURCE, "python"), src,
                        ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
        pip = run([python, "-m", "pip", "install", "--no-build-isolation", "--no-deps",
                   "--no-index", "--prefix", self.prefix, src],
                  env=plain_env(PIP_DISABLE_PIP_VERSION_CHECK="1"))
        self.assertEqual(pip.returncode, 0, pip.stdout + pip.stderr)
        inits = glob.glob(self.p("**", "nnprof", "__init__.py"), recursive=True)
        self.assertEqual(len(inits), 1, inits)
        site = os.path.dirname(os.path.dirname(inits[0]))
        code = ("import importlib.metadata, nnprof; "
                "print(nnprof.library_path); print(nnprof.version()); "
                "print(importlib.metadata.version('nnprof'))")
        # From another folder, without the source tree on the path and no NNPROF_LIBRARY.
        res = run([python, "-c", code], cwd=self.tmp,
                  env=plain_env(PYTHONPATH=site, PYTHONDONTWRITEBYTECODE="1",
                                PATH="/usr/bin:/bin"))
        self.assertEqual(res.returncode, 0, res.stderr)
        path, lib_version, pkg_version = res.stdout.split()
        self.assertEqual(os.path.realpath(path),
                         os.path.realpath(os.path.join(self.libdir(), "libnnprof.so.0")))
        self.assertEqual(lib_version, pkg_version)


if __name__ == "__main__":
    unittest.main()
