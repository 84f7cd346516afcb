"""bench_torch_ir.py - instructions per PyTorch op (RecordFunction) of nnprof.torch and of
torch.profiler, counted by callgrind on the training thread: the load-independent side of
bench_torch.py (bench/README.md, "bench_torch").

Each configuration runs in its own process under
`valgrind --tool=callgrind --separate-threads=yes --instr-atstart=no`; the process warms
the model up (3 steps without profiler, 3 with it, so caches of names are filled), then
brackets N steps of bench_torch.py's small-op model (--model demo: the demo model) with
CALLGRIND_START_INSTRUMENTATION / CALLGRIND_DUMP_STATS (a small helper library built on
first use under build/). Work done after the steps (torch.profiler parses its events when
it stops) is not counted.

  none            no profiler
  noop            a global RecordFunction callback that does nothing: torch's own
                  machinery for an active callback, which any profiler pays
  noop+inputs     the same asking for the ops' inputs (torch boxes them for every op):
                  the baseline of the record_shapes configurations
  noop+memory     "noop" and a memory reporter that does nothing (c10's allocator reports
                  every allocation to it): the baseline of the profile_memory configurations
  torch           torch.profiler, CPU activity (legacy profiler: Debian's torch has no Kineto)
  nnprof          nnprof.torch.profile
  (+shapes)       both with record_shapes=True
  (+memory)       both with profile_memory=True

Printed per configuration: Ir per op on the training thread and the part above "noop"
(above "noop+inputs" for record_shapes, "noop+memory" for profile_memory): the profiler's
own work; and the goal "nnprof's own <= 1/5 of torch.profiler's own"; with "none", each
configuration's added instructions per step. nnprof's writer thread is not counted here (see bench_writer). With --annotate,
the inclusive Ir per op of the shim's and libnnprof's functions in the nnprof run.

On AMD CPUs the valgrind runs load a patched copy of libhwy (valgrind_env below).

    PYTHONPATH=python /usr/bin/python3 bench/bench_torch_ir.py [--steps 20] [--annotate]
        [--model small|demo] [--configs none,noop,nnprof,torch+memory,nnprof+memory]
"""

import argparse
import ctypes
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, os.pardir))
RATIO_GOAL = 5.0  # torch.profiler's own Ir per op / nnprof's, at least (issue 13)
RDTSCP = b"\x0f\x01\xf9"
RDTSC_NOP = b"\x0f\x31\x90"  # as long as RDTSCP: offsets in the library do not move

HELPER_SRC = r"""
// Helper of bench_torch_ir.py: callgrind client requests and a no-op global callback.
#include <ATen/record_function.h>
#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <valgrind/callgrind.h>
#include <atomic>
#include <memory>
static std::atomic<unsigned long long> g_calls{0};
static at::CallbackHandle g_handle = at::INVALID_CALLBACK_HANDLE;
static std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction &)
{
    g_calls.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
}
static void on_end(const at::RecordFunction &, at::ObserverContext *) {}
extern "C" void cg_start(void) { CALLGRIND_START_INSTRUMENTATION; }
extern "C" void cg_stop(void) { CALLGRIND_DUMP_STATS; CALLGRIND_STOP_INSTRUMENTATION; }
extern "C" void noop_install(int inputs)
{
    g_handle = at::addGlobalCallback(
        at::RecordFunctionCallback(on_start, on_end).needsInputs(inputs != 0));
}
extern "C" void noop_remove(void) { at::removeCallback(g_handle); }
// A memory reporter that does nothing, where a profiler puts its own (the thread's
// PROFILER_STATE): c10's allocator then reports every allocation and free to it.
struct NoopReporter final : c10::MemoryReportingInfoBase {
    void reportMemoryUsage(void *, int64_t, int64_t, int64_t, c10::Device) override {}
    bool memoryProfilingEnabled() const override { return true; }
};
extern "C" void noop_memory_install(void)
{
    c10::ThreadLocalDebugInfo::_push(c10::DebugInfoKind::PROFILER_STATE,
                                     std::make_shared<NoopReporter>());
}
extern "C" unsigned long long noop_calls(void) { return g_calls.load(); }
"""


def helper_path(build_dir):
    """Builds the helper library once (torch headers: libtorch-dev); returns its path."""
    out_dir = os.path.join(build_dir, "bench_torch_ir")
    lib = os.path.join(out_dir, "libcg_helper.so")
    src = os.path.join(out_dir, "cg_helper.cpp")
    if os.path.exists(lib) and os.path.exists(src) and open(src).read() == HELPER_SRC:
        return lib
    os.makedirs(out_dir, exist_ok=True)
    with open(src, "w") as f:
        f.write(HELPER_SRC)
    # Debian's libtorch-dev puts the headers under /usr/include (as the shim's build finds).
    subprocess.run(["c++", "-std=c++17", "-O2", "-fPIC", "-shared", "-D_GLIBCXX_USE_CXX11_ABI=1",
                    src, "-o", lib, "-ltorch_cpu", "-lc10"], check=True)
    return lib


def child(args):
    """One configuration, in the process valgrind runs."""
    import torch  # pylint: disable=import-outside-toplevel
    import torch.profiler as tp  # pylint: disable=import-outside-toplevel
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    sys.path.insert(0, HERE)
    import bench_torch  # pylint: disable=import-outside-toplevel
    import nnprof.torch as nt  # pylint: disable=import-outside-toplevel

    torch.set_num_threads(1)
    helper = ctypes.CDLL(args.helper)
    model = bench_torch.mlp() if args.model == "small" else bench_torch.resnet(args.batch)
    trainer = bench_torch.Trainer(*model)
    for _ in range(3):
        trainer.step()
    kind, _, extra = args.child.partition("+")
    kwargs = {"shapes": {"record_shapes": True},
              "memory": {"profile_memory": True}}.get(extra, {})
    out_dir = tempfile.mkdtemp(prefix="nnp-bench-ir-")
    prof = None
    if kind == "noop":
        helper.noop_install(1 if extra == "inputs" else 0)
        if extra == "memory":
            helper.noop_memory_install()
    elif kind == "torch":
        prof = tp.profile(activities=[tp.ProfilerActivity.CPU], **kwargs)
    elif kind == "nnprof":
        prof = nt.profile(output_path=out_dir, **kwargs)
    if prof is not None:
        prof.start()
    for _ in range(3):
        trainer.step()
    helper.cg_start()
    for _ in range(args.steps):
        trainer.step()
    helper.cg_stop()
    if prof is not None:
        prof.stop()
    if kind == "noop":
        helper.noop_remove()
        print(f"calls {helper.noop_calls()}")
    shutil.rmtree(out_dir, ignore_errors=True)


def valgrind_env(build_dir):
    """Environment of the valgrind runs. Valgrind 3.19 stops with SIGILL on AMD CPUs when
    torch loads libhwy, whose constructor runs rdtscp (which these CPUs run but do not
    announce to valgrind). There a copy of libhwy with each rdtscp (0f 01 f9) replaced by
    rdtsc; nop (0f 31 90) is made under the build folder and put first on LD_LIBRARY_PATH:
    only that constructor's timing code differs, nothing a profiler runs."""
    env = dict(os.environ)
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            amd = "AuthenticAMD" in f.read()
        ldconfig = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True,
                                  check=False).stdout
    except OSError:
        return env
    m = re.search(r"\slibhwy\.so\.1 .*=> (\S+)", ldconfig)
    if not amd or not m:
        return env
    with open(m.group(1), "rb") as f:
        data = f.read()
    if RDTSCP not in data:
        return env
    out_dir = os.path.join(build_dir, "bench_torch_ir", "hwy")
    os.makedirs(out_dir, exist_ok=True)
    patched = os.path.join(out_dir, "libhwy.so.1")
    with open(patched + ".tmp", "wb") as f:
        f.write(data.replace(RDTSCP, RDTSC_NOP))
    os.replace(patched + ".tmp", patched)
    env["LD_LIBRARY_PATH"] = out_dir + (":" + env["LD_LIBRARY_PATH"]
                                        if env.get("LD_LIBRARY_PATH") else "")
    print(f"bench_torch_ir: AMD CPU: valgrind runs load {patched} ({data.count(RDTSCP)} "
          "rdtscp replaced by rdtsc; nop)")
    return env


def totals(path):
    """Ir of a callgrind output file (its "summary:" or "totals:" line)."""
    with open(path) as f:
        for line in f:
            m = re.match(r"(?:summary|totals):\s+(\d+)", line)
            if m:
                return int(m.group(1))
    return 0


def measure(config, model_args, helper, work, env):
    """(main thread Ir, main thread file) of one configuration."""
    prefix = os.path.join(work, f"cg.{config.replace('+', '_')}")
    cmd = ["valgrind", "--tool=callgrind", "--separate-threads=yes", "--instr-atstart=no",
           f"--callgrind-out-file={prefix}.%p", sys.executable, os.path.abspath(__file__),
           "--child", config, "--helper", helper] + model_args
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   timeout=3600, env=env)
    # Dumps are <prefix>.<pid>.<dump number>-<thread number>: thread 01 is the main thread.
    main_files = glob.glob(prefix + ".*.1-01")
    if len(main_files) != 1:
        raise RuntimeError(f"{config}: expected one main-thread dump, found {main_files}")
    return totals(main_files[0]), main_files[0]


def ops_per_step(steps, model_args, helper):
    """RecordFunctions per step (the no-op callback counts them), outside valgrind."""
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", "noop",
                          "--helper", helper] + model_args,
                         check=True, capture_output=True, text=True).stdout
    calls = int(re.search(r"calls (\d+)", out).group(1))
    return calls / (steps + 3)  # the 3 warm-up steps run with the callback too


def annotate(path, n_calls):
    """Inclusive Ir per op of the shim's and libnnprof's functions (callgrind_annotate)."""
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--auto=no",
                          "--threshold=100", path],
                         check=True, capture_output=True, text=True).stdout
    # Function lines name their object in brackets: the shim's and libnnprof's.
    lines = []
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*?)\s*\[(.*)\]$", line)
        if m and "libnnprof" in m.group(3):
            func = m.group(2).split(":", 1)[-1]  # "file:function" -> function
            lines.append(f"{int(m.group(1).replace(',', '')) / n_calls:10.1f}  {func}")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--model", choices=("small", "demo"), default="small",
                        help="bench_torch's small-op model or the demo model (SmallResNet)")
    parser.add_argument("--batch", type=int, default=32, help="demo model's batch")
    parser.add_argument("--annotate", action="store_true",
                        help="print the inclusive profile of nnprof's functions")
    parser.add_argument("--configs", default="none,noop,torch,nnprof,noop+inputs,torch+shapes,"
                        "nnprof+shapes")
    parser.add_argument("--keep", help="keep callgrind files in this folder")
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--helper", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    if not shutil.which("valgrind"):
        print("bench_torch_ir: valgrind not found (apt-get install valgrind)")
        return
    helper = helper_path(args.build_dir)
    env = valgrind_env(args.build_dir)
    work = args.keep or tempfile.mkdtemp(prefix="nnp-bench-ir-")
    os.makedirs(work, exist_ok=True)
    try:
        model_args = ["--steps", str(args.steps), "--model", args.model, "--batch",
                      str(args.batch)]
        n_ops = ops_per_step(args.steps, model_args, helper)
        label = "small-op model (bench_torch.mlp)" if args.model == "small" else \
            f"demo model (SmallResNet, batch {args.batch})"
        print(f"{label}: {n_ops:.0f} RecordFunctions per step, "
              f"{args.steps} steps counted; load average {os.getloadavg()[0]:.2f} "
              "(Ir do not depend on it)")
        results = {}
        for config in args.configs.split(","):
            main_ir, path = measure(config, model_args, helper, work, env)
            results[config] = (main_ir / (n_ops * args.steps), path)

        def baseline(config):
            """The no-op callback run a configuration's own work is counted above."""
            if config.endswith("+shapes"):
                return "noop+inputs"
            return "noop+memory" if config.endswith("+memory") else "noop"

        none = results["none"][0] if "none" in results else 0.0
        print(f"{'config':<16}{'Ir/op':>10}{'above none':>12}{'own (above its noop)':>22}")
        for config, (ir, _) in results.items():
            own = f"{ir - results[baseline(config)][0]:22.0f}" \
                if baseline(config) in results and not config.startswith("no") else ""
            print(f"{config:<16}{ir:>10.0f}{ir - none:>12.0f}{own}")
        if "none" in results:
            for config, (ir, _) in results.items():
                if config != "none":
                    print(f"{config}: {ir / none - 1:+.3%} instructions per step on the training "
                          "thread")
        for extra in ("", "+shapes", "+memory"):
            t, n = results.get("torch" + extra), results.get("nnprof" + extra)
            base = results.get(baseline(extra))
            if t and n and base:
                t_own, n_own = t[0] - base[0], n[0] - base[0]
                ratio = t_own / n_own if n_own > 0 else float("inf")
                print(f"own work per op{extra}: torch.profiler {t_own:.0f} Ir, nnprof "
                      f"{n_own:.0f} Ir, ratio {ratio:.1f} (goal >= {RATIO_GOAL:.0f}): "
                      f"{'PASS' if ratio >= RATIO_GOAL else 'MISS'}")
        for config in (c for c in results if args.annotate and c.startswith("nnprof")):
            print(f"\ninclusive Ir of nnprof's functions, {config} run, main thread "
                  f"({args.steps} steps x {n_ops:.0f} ops):")
            print("\n".join(annotate(results[config][1], n_ops * args.steps)))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
