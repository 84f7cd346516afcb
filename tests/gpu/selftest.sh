#!/usr/bin/env bash
# selftest.sh - tests scripts/gpu-check's checker without a GPU: a profile recorded as the
# CUDA back end would (fake_profile.py) must pass check_profile.py, and the same profile
# against wrong expectations (one launch more, one byte more) must fail.
# Usage: tests/gpu/selftest.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/nnprof-gpu-selftest.XXXXXX")
trap 'rm -rf "$work"' EXIT
python3 "$here/fake_profile.py" "$work/data" "$build/libnnprof.so" "$work/expect.json"
"$build/nnprof" analyse "$work/data" >/dev/null
raw=$(find "$work/data/profiler" -maxdepth 1 -type d -name 'PROF_*' | head -n 1)
"$build/nnprof" dump "$raw" >"$work/dump.jsonl"
"$build/nnprof" export kineto -dir "$raw" -o "$work/kineto.json" >/dev/null
python3 "$here/check_profile.py" "$work/expect.json" "$work/dump.jsonl" "$raw/info.json" \
    "$work/data/profiler" "$work/kineto.json"
for change in 'e["kernels"]["fill"]["count"] += 1' 'e["copies"]["DtoH"]["bytes"] += 1'; do
    python3 -c "import json,sys; e=json.load(open(sys.argv[1])); $change; json.dump(e, open(sys.argv[2], 'w'))" \
        "$work/expect.json" "$work/wrong.json"
    if python3 "$here/check_profile.py" "$work/wrong.json" "$work/dump.jsonl" "$raw/info.json" \
        "$work/data/profiler" >"$work/wrong.log"; then
        echo "selftest: the checker passed a wrong expectation ($change)" >&2
        exit 1
    fi
    echo "selftest: a wrong expectation fails as it should ($change)"
done
