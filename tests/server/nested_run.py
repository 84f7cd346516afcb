"""nested_run.py OUT - records a run whose ops nest, for the browser test of the Operators
page's "By self time" tab (run_browser_tests.sh): 4 steps 100 us apart, each with an op of
type "Outer" over [1, 9) us holding one of type "Inner" over [2, 7) us. Per step: Outer
self 3 us, Inner 5 us. Needs NNPROF_LIBRARY (the libnnprof just built) and PYTHONPATH
holding python/."""

import sys

import nnprof
from nnprof import record

STEPS = 4
US = 1000


def main():
    prof = nnprof.Profiler(output_path=sys.argv[1])
    t = record.clock_ns() - STEPS * 100 * US
    outer = record.Op("net/Outer-op0", "Outer")
    inner = record.Op("net/Outer-op0/Inner-op1", "Inner")
    for step in range(STEPS):
        t0 = t + step * 100 * US
        record.step_begin_at(step, 0, t0)
        record.op_at(outer, t0 + 1 * US, t0 + 9 * US)
        record.op_at(inner, t0 + 2 * US, t0 + 7 * US)
        record.step_end_at(step, 0, t0 + 100 * US)
    prof.stop()


if __name__ == "__main__":
    main()
