#!/usr/bin/env bash
# bench/run.sh - builds the benchmarks if needed, opens an LTTng-UST session that enables
# bench_record's tracepoints (so its LTTng row is an active tracepoint), runs bench_record
# and bench_writer, then tears the LTTng session down (and the session daemon, if this
# script started it). Usage: bench/run.sh   Knobs: NNP_BUILD_DIR (default build),
# NNP_JOBS (build parallelism, default 2), NNP_BENCH_LTTNG=0 (skip the LTTng set-up).
set -euo pipefail

cd "$(dirname "$0")/.."

build=${NNP_BUILD_DIR:-build}
jobs=${NNP_JOBS:-2}
session="nnpbench-$$"
# Per-CPU ring buffers of 8 x 8 MiB hold a whole bench_record repetition (2 M events of
# ~24 bytes per thread), so LTTng discards nothing while the consumer catches up.
subbuf_size=8M
num_subbuf=8
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nnp-bench-lttng.XXXXXX")
sessiond_pid=""
lttng_active=false

# Idempotent: called after bench_record (so LTTng's consumer is idle during bench_writer)
# and again on exit.
stop_lttng() {
    if $lttng_active; then
        lttng_active=false
        echo
        echo "---- LTTng session $session ----"
        # 'lttng stop' warns about events LTTng discarded (full ring buffers), if any.
        lttng stop "$session" 2>&1 || true
        lttng destroy "$session" >/dev/null 2>&1 || true
    fi
    if [ -n "$sessiond_pid" ]; then
        kill "$sessiond_pid" 2>/dev/null || true
        sessiond_pid=""
    fi
}

teardown() {
    stop_lttng
    rm -rf "$tmp"
}
trap teardown EXIT

setup_lttng() {
    if ! command -v lttng >/dev/null 2>&1 || ! command -v lttng-sessiond >/dev/null 2>&1; then
        echo "run.sh: lttng-tools not installed: bench_record will measure a disabled tracepoint"
        return 0
    fi
    if ! pgrep -u "$(id -u)" -x lttng-sessiond >/dev/null; then
        local rundir
        if [ "$(id -u)" -eq 0 ]; then rundir=/var/run/lttng; else rundir="$HOME/.lttng"; fi
        lttng-sessiond --daemonize --quiet || {
            echo "run.sh: cannot start lttng-sessiond: bench_record will measure a disabled" \
                "tracepoint"
            return 0
        }
        sessiond_pid=$(cat "$rundir/lttng-sessiond.pid" 2>/dev/null || true)
    fi
    if lttng create "$session" --output="$tmp/trace" >/dev/null &&
        lttng enable-channel -u -s "$session" --subbuf-size="$subbuf_size" \
            --num-subbuf="$num_subbuf" nnpchan >/dev/null &&
        lttng enable-event -u -s "$session" -c nnpchan 'nnprof_bench:*' >/dev/null &&
        lttng start "$session" >/dev/null; then
        lttng_active=true
        echo "run.sh: LTTng session $session active (channel nnpchan, $num_subbuf x" \
            "$subbuf_size per CPU, events nnprof_bench:*)"
    else
        lttng destroy "$session" >/dev/null 2>&1 || true
        echo "run.sh: cannot enable the LTTng session: bench_record will measure a disabled" \
            "tracepoint"
    fi
}

if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S . -B "$build"
fi
cmake --build "$build" -j"$jobs" --target bench_record bench_writer

if [ "${NNP_BENCH_LTTNG:-1}" != 0 ]; then
    setup_lttng
fi

echo
echo "==== bench_record ($(date -u +%Y-%m-%dT%H:%MZ), $(uname -n)) ===="
"$build/bench/bench_record"
stop_lttng
echo
echo "==== bench_writer ===="
"$build/bench/bench_writer"
