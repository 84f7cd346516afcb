#!/bin/sh
# run_browser_tests.sh BUILD_DIR SOURCE_DIR NODE - ctest's entry to web/tests/ui_test.mjs:
# trains the demo (2 ranks) into BUILD_DIR/ui-test/demo and records a run whose ops nest
# (nested_run.py), then drives chromium against `nnprof ui` on them and on the CANN corpus
# run (../shared/corpus beside the repository).
# Screenshots: BUILD_DIR/ui-screenshots/.
set -eu
build=$1
src=$2
node=$3
work=$build/ui-test
rm -rf "$work"
mkdir -p "$work/demo"
"$build/examples/demo_train" --output "$work/demo/data" --ranks 2 --epochs 2 >/dev/null
# A run whose ops nest (the Operators page's "By self time" tab), by the Python API. Not in
# sanitizer builds: Python cannot load an ASan-instrumented libnnprof without preloading
# the runtime (the Python tests are left out of those builds for the same reason).
nested=
if grep -q '^NNP_SANITIZE:[A-Z]*=.' "$build/CMakeCache.txt"; then
    echo "skip nested run: sanitizer build (Python cannot load this libnnprof)"
else
    NNPROF_LIBRARY="$build/libnnprof.so" PYTHONPATH="$src/python" python3 \
        "$src/tests/server/nested_run.py" "$work/nested/data"
    nested="$work/nested"
fi
corpus=${NNP_CORPUS:-$src/../shared/corpus}/mindinsight/profiler
exec "$node" "$src/web/tests/ui_test.mjs" --nnprof "$build/nnprof" --demo "$work/demo" \
    ${nested:+--nested "$nested"} --corpus "$corpus" --cache "$work/cache" --out "$build/ui-screenshots"
