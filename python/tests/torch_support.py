"""Helpers of the PyTorch tests (test_torch_*.py): the skip rule, a tiny model trained
the same way under torch.profiler and nnprof.torch, and readers of our outputs.

The tests run real torch (Debian's python3-torch, which belongs to /usr/bin/python3).
Without torch or without the shim (libnnprof built without libtorch-dev) every test is
skipped, and the runner prints "SKIPPED: PyTorch tests: <why>", which ctest reports as
skipped (python/CMakeLists.txt, SKIP_REGULAR_EXPRESSION).
"""

import collections
import decimal
import json
import os
import subprocess
import sys
import unittest

from tests import support

try:
    import torch  # noqa: F401  pylint: disable=unused-import
    from torch import nn
    import nnprof.torch as nt
    from nnprof import _torch_shim
    _torch_shim.load()
    SKIP_REASON = None
except ImportError as err:  # torch or the shim is missing
    SKIP_REASON = str(err)
    nn = nt = _torch_shim = None

#: Decorator for every PyTorch test class.
needs_torch = unittest.skipIf(SKIP_REASON is not None, f"PyTorch tests: {SKIP_REASON}")

if SKIP_REASON is not None:
    # One line ctest matches to report the test as skipped (and why).
    print(f"SKIPPED: PyTorch tests: {SKIP_REASON}", file=sys.stderr)


def tiny_model():
    """A conv + linear network, its optimizer and a fixed batch (seeded)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 5))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x = torch.randn(2, 3, 8, 8)
    return model, opt, x


def train_step(model, opt, x):
    """One training step: zero_grad, forward, backward, optimizer step."""
    opt.zero_grad()
    loss = model(x).sum()
    loss.backward()
    opt.step()
    return float(loss)


def kineto_trace(path):
    """The JSON of a Kineto trace (gzip-aware). Numbers with a fraction are read as
    Decimal: timestamps are microseconds with ns decimals, kept exact (a float holds our
    16-digit ones, relative to baseTimeNanoseconds, but not torch's 19-digit epoch ones)."""
    if path.endswith(".gz"):
        import gzip  # pylint: disable=import-outside-toplevel
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return json.load(f, parse_float=decimal.Decimal)
    with open(path, encoding="utf-8") as f:
        return json.load(f, parse_float=decimal.Decimal)


def raw_counts(raw_dir):
    """Calls per name as recorded (before any merging): op types, host ranges (user
    annotations) and collectives of a raw directory."""
    counts = collections.Counter()
    for r in support.dump(raw_dir):
        if r["kind"] == "op":
            counts[r["type"]] += 1
        elif r["kind"] == "range_begin":
            counts[r["event"]] += 1
        elif r["kind"] == "comm":
            counts[r["name"]] += 1
    return counts


def torch_raw_counts(prof):
    """Calls per name torch's profiler recorded, before its EventList merges an op into a
    same-name parent (which it decides on microsecond timestamps, so the merged counts
    vary from run to run): the events of its result, less the ones its parser drops."""
    from torch.autograd.profiler_util import _filter_name  # pylint: disable=import-outside-toplevel
    events = prof.profiler.kineto_results.events()
    return collections.Counter(e.name() for e in events if not _filter_name(e.name()))


def kinds(raw_dir):
    """Record kinds of a raw directory with their counts."""
    return collections.Counter(r["kind"] for r in support.dump(raw_dir))


def torch_python():
    """The interpreter running the tests (it has torch)."""
    return sys.executable


def run_script(code, env=None, timeout=180, cwd=None):
    """Runs Python code in a fresh interpreter with the test environment; returns the
    CompletedProcess (stdout/stderr text)."""
    full = dict(os.environ)
    full.update(env or {})
    return subprocess.run([torch_python(), "-c", code], env=full, capture_output=True,
                          text=True, timeout=timeout, cwd=cwd, check=False)
