#!/usr/bin/env bash
# cuda_launch.sh - overhead of nnprof's CUDA back end per kernel launch, against the same
# program unprofiled in the same run (needs a GPU; scripts/gpu-check --bench runs it).
# Builds bench/cuda_launch.cu with nvcc, runs it REPS times unprofiled and REPS times
# profiled (LD_PRELOAD=libnnprof.so, CUDA_INJECTION64_PATH=libnnprof_cuda.so, a window
# open for the whole run), alternating so drift hits both, and prints min and median of the
# per-launch host cost of each and their ratio, with the machine's load.
# Usage: bench/cuda_launch.sh [BUILD_DIR] (default build); REPS=5, NVCC=nvcc, BIN=prebuilt.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$here/build}" && pwd)
reps=${REPS:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/nnprof-cuda-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

bin=${BIN:-}
if [ -z "$bin" ]; then
    bin=$work/cuda_launch
    # shellcheck disable=SC2086
    "${NVCC:-nvcc}" ${NVCC_FLAGS:-} -O2 -o "$bin" "$here/bench/cuda_launch.cu" \
        --generate-code 'arch=compute_75,code=[compute_75,sm_75]' \
        --generate-code arch=compute_90,code=sm_90
fi
for lib in libnnprof.so libnnprof_cuda.so; do
    [ -f "$build/$lib" ] || { echo "cuda_launch.sh: $build/$lib not built" >&2; exit 2; }
done

run_plain() { "$bin" >>"$work/plain.jsonl"; }
run_profiled() {
    NNPROF_CUDA=1 LD_PRELOAD="$build/libnnprof.so" \
        CUDA_INJECTION64_PATH="$build/libnnprof_cuda.so" \
        MS_PROFILER_OPTIONS="{\"start\": true, \"output_path\": \"$work/data\"}" \
        "$bin" >>"$work/prof.jsonl"
}
for _ in $(seq "$reps"); do
    run_plain
    run_profiled
done
python3 - "$work" "$reps" <<'PY'
import json, statistics, sys
work, reps = sys.argv[1], int(sys.argv[2])
def load(name):
    rows = [json.loads(l) for l in open(f"{work}/{name}")]
    return ([r["launch_ns_per_launch"] for r in rows], [r["total_ns_per_launch"] for r in rows])
pl, pt = load("plain.jsonl")
ql, qt = load("prof.jsonl")
load1 = open("/proc/loadavg").read().split()[0]
print(f"cuda_launch: {reps} runs x {len(pl)//reps} rounds x {json.loads(open(f'{work}/plain.jsonl').readline())['launches']} empty kernels; load average {load1}")
for what, a, b in (("launch loop (host)", pl, ql), ("launch + device drain", pt, qt)):
    print(f"  {what:22s} unprofiled min {min(a):8.1f} ns  median {statistics.median(a):8.1f} ns"
          f" | profiled min {min(b):8.1f} ns  median {statistics.median(b):8.1f} ns"
          f" | ratio (median) {statistics.median(b)/statistics.median(a):5.2f}x"
          f"  overhead {statistics.median(b)-statistics.median(a):7.1f} ns/launch")
PY
