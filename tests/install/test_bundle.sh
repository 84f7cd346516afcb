#!/usr/bin/env bash
# test_bundle.sh - scripts/bundle: the copy runs with a bare environment (env.sh only), every
# library nnprof loads but the C and C++ runtimes comes from the bundle, the recording
# libraries' own needs (cJSON, CUPTI) are in min/, and a folder that is not empty is refused.
# Usage: tests/install/test_bundle.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/nnprof-bundle.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "test_bundle: $*" >&2; exit 1; }

"$here/scripts/bundle" "$work/b" "$build" >/dev/null
out=$(env -i PATH=/usr/bin:/bin bash -c ". '$work/b/env.sh' && nnprof --version")
[ "$out" = "$(sed -n 's/^project(nnprof VERSION \([0-9.]*\).*/nnprof \1/p' "$here/CMakeLists.txt")" ] ||
    fail "nnprof --version from the bundle said '$out'"
# Every library that is not a runtime resolves inside the bundle.
outside=$(env -i PATH=/usr/bin:/bin bash -c ". '$work/b/env.sh' && ldd '$work/b/nnprof'" |
    awk '$2 == "=>" { print $1, $3 }' |
    grep -v -E '^(libc|libm|libdl|librt|libpthread|libutil|libstdc\+\+|libgcc_s)\.so' |
    grep -v " $work/b/" || true)
[ -z "$outside" ] || fail "libraries from outside the bundle: $outside"
[ -e "$work/b/min/libcjson.so.1" ] || fail "min/ lacks libcjson.so.1"
if [ -e "$build/libnnprof_cuda.so" ]; then
    compgen -G "$work/b/min/libcupti*" >/dev/null || fail "min/ lacks CUPTI"
fi
# Never into a folder that holds something.
if "$here/scripts/bundle" "$work/b" "$build" 2>"$work/err"; then
    fail "a second bundle into the same folder was not refused"
fi
grep -q "not empty" "$work/err" || fail "the refusal does not say why: $(cat "$work/err")"
echo "test_bundle: ok ($(find "$work/b/lib" -type f | wc -l) libraries)"
