#!/usr/bin/env python3
"""Profiles a pure-Python training loop with nnprof (no numpy, no framework).

A tiny MLP (2 -> hidden -> 1, tanh then sigmoid) learns to tell points inside a circle
from points outside it, with mini-batch SGD on binary cross-entropy. The loop is
instrumented the way a framework would be:

* ``nnprof.record_function`` ranges around forward, backward and the optimizer step;
* ``nnprof.record`` ops (MatMul, BiasAdd, Tanh, Sigmoid, ... with input shapes and
  FLOPs), tensor allocations and host memory, fp/bp points, steps and epochs, the data
  queue, and a loss counter;

and profiled with the MindSpore-shaped ``nnprof.Profiler``, then analysed. Run::

    python3 examples/train_mlp.py --epochs 30 --output ./data

Exit status 1 when the loss did not decrease.
"""

import argparse
import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

import nnprof  # noqa: E402  pylint: disable=wrong-import-position
from nnprof import record  # noqa: E402  pylint: disable=wrong-import-position

FLOAT_BYTES = 8


def make_data(n, rng):
    """n points in [-1, 1]^2, label 1 inside the circle of radius 0.6."""
    data = []
    for _ in range(n):
        x, y = rng.uniform(-1, 1), rng.uniform(-1, 1)
        data.append(([x, y], 1.0 if x * x + y * y < 0.36 else 0.0))
    return data


def matmul(a, b):
    """(n x k) @ (k x m) on lists of lists."""
    bt = list(zip(*b))
    return [[sum(x * y for x, y in zip(row, col)) for col in bt] for row in a]


def transpose(a):
    """Transpose of a list of lists."""
    return [list(col) for col in zip(*a)]


class MLP:
    """2 -> hidden -> 1 with tanh and sigmoid; every layer records its ops."""

    def __init__(self, hidden, batch, rng):
        scale1, scale2 = 1.0 / math.sqrt(2), 1.0 / math.sqrt(hidden)
        self.w1 = [[rng.gauss(0, scale1) for _ in range(hidden)] for _ in range(2)]
        self.b1 = [0.0] * hidden
        self.w2 = [[rng.gauss(0, scale2)] for _ in range(hidden)]
        self.b2 = [0.0]
        h, b = hidden, batch
        # Ops are built once (string interning happens here) and recorded every step.
        net = "Default/network"
        grad = "Gradients/Default/network"
        self.ops = {
            "fc1": record.Op(f"{net}/fc1/MatMul-op0", "MatMul", input_shapes=[(b, 2), (2, h)],
                             input_dtypes="float64;float64", flops_matrix=2 * b * 2 * h),
            "bias1": record.Op(f"{net}/fc1/BiasAdd-op1", "BiasAdd",
                               input_shapes=[(b, h), (h,)], flops_vector=b * h),
            "tanh": record.Op(f"{net}/Tanh-op2", "Tanh", input_shapes=[(b, h)],
                              flops_vector=b * h),
            "fc2": record.Op(f"{net}/fc2/MatMul-op3", "MatMul", input_shapes=[(b, h), (h, 1)],
                             input_dtypes="float64;float64", flops_matrix=2 * b * h),
            "sigmoid": record.Op(f"{net}/Sigmoid-op4", "Sigmoid", input_shapes=[(b, 1)],
                                 flops_vector=4 * b),
            "loss": record.Op(f"{net}/BinaryCrossEntropy-op5", "BinaryCrossEntropy",
                              input_shapes=[(b, 1), (b, 1)], flops_vector=6 * b),
            "dfc2": record.Op(f"{grad}/fc2/gradMatMul-op6", "MatMul",
                              input_shapes=[(h, b), (b, 1)], flops_matrix=2 * b * h),
            "dtanh": record.Op(f"{grad}/gradTanh-op7", "TanhGrad", input_shapes=[(b, h)],
                               flops_vector=3 * b * h),
            "dfc1": record.Op(f"{grad}/fc1/gradMatMul-op8", "MatMul",
                              input_shapes=[(2, b), (b, h)], flops_matrix=2 * b * 2 * h),
            "sgd": record.Op("Default/optimizer/SGD-op9", "SGD", flops_vector=4 * h + 2),
        }

    def forward(self, xs):
        """Returns (hidden activations, outputs)."""
        ops = self.ops
        with ops["fc1"]:
            z1 = matmul(xs, self.w1)
        alloc(z1, "z1", ops["fc1"])
        with ops["bias1"]:
            z1 = [[v + b for v, b in zip(row, self.b1)] for row in z1]
        with ops["tanh"]:
            a1 = [[math.tanh(v) for v in row] for row in z1]
        alloc(a1, "a1", ops["tanh"])
        with ops["fc2"]:
            z2 = matmul(a1, self.w2)
        with ops["sigmoid"]:
            out = [[1.0 / (1.0 + math.exp(-(row[0] + self.b2[0])))] for row in z2]
        alloc(out, "out", ops["sigmoid"])
        return a1, out

    def loss(self, out, ys):
        """Mean binary cross-entropy."""
        with self.ops["loss"]:
            eps = 1e-12
            return -sum(y * math.log(o[0] + eps) + (1 - y) * math.log(1 - o[0] + eps)
                        for o, y in zip(out, ys)) / len(ys)

    def backward(self, xs, ys, a1, out):
        """Gradients of the mean BCE with respect to every parameter."""
        n = len(ys)
        ops = self.ops
        d2 = [[(o[0] - y) / n] for o, y in zip(out, ys)]  # dL/dz2 for sigmoid + BCE
        with ops["dfc2"]:
            gw2 = matmul(transpose(a1), d2)
        gb2 = [sum(r[0] for r in d2)]
        with ops["dtanh"]:
            d1 = [[d[0] * w[0] * (1 - a * a) for w, a in zip(self.w2, arow)]
                  for d, arow in zip(d2, a1)]
        alloc(d1, "d1", ops["dtanh"])
        with ops["dfc1"]:
            gw1 = matmul(transpose(xs), d1)
        gb1 = [sum(col) for col in zip(*d1)]
        return gw1, gb1, gw2, gb2

    def sgd(self, grads, lr):
        """Plain SGD update."""
        gw1, gb1, gw2, gb2 = grads
        with self.ops["sgd"]:
            for w_row, g_row in zip(self.w1, gw1):
                for j, g in enumerate(g_row):
                    w_row[j] -= lr * g
            self.b1 = [b - lr * g for b, g in zip(self.b1, gb1)]
            for w_row, g_row in zip(self.w2, gw2):
                w_row[0] -= lr * g_row[0]
            self.b2 = [self.b2[0] - lr * gb2[0]]


_live_tensors = []


def alloc(matrix, name, op):
    """Records a tensor allocation for a result matrix (freed at the end of the step)."""
    size = sum(len(r) for r in matrix) * FLOAT_BYTES
    record.mem_alloc(record.Tensor(id(matrix), size, name, op.struct.name))
    _live_tensors.append((id(matrix), size, matrix))
    record.host_memory(sum(t[1] for t in _live_tensors))


def free_step_tensors():
    """Frees the tensors of the step."""
    for address, size, _ in _live_tensors:
        record.mem_free(address, size)
    _live_tensors.clear()
    record.host_memory(0)


def batches(data, batch, rng):
    """Shuffled mini-batches, recording the data queue and a GetNext op."""
    order = list(range(len(data)))
    rng.shuffle(order)
    getnext = record.Op("Default/GetNext-op10", "GetNext")
    n_batches = len(order) // batch
    for k in range(n_batches):
        record.queue_sample(0, n_batches - k, n_batches)
        with getnext:
            idx = order[k * batch:(k + 1) * batch]
            xs = [data[i][0] for i in idx]
            ys = [data[i][1] for i in idx]
        yield xs, ys


def train(args):
    """Trains under the profiler; returns (first epoch loss, last epoch loss, profiler)."""
    rng = random.Random(args.seed)
    data = make_data(args.samples, rng)
    prof = nnprof.Profiler(output_path=args.output, profile_memory=True,
                           sample_interval_ms=100)
    model = MLP(args.hidden, args.batch, rng)
    record.pipeline_op(0, "GeneratorOp", 1)
    losses = []
    step = 0
    for epoch in range(1, args.epochs + 1):
        record.epoch_begin(epoch)
        total = 0.0
        count = 0
        for xs, ys in batches(data, args.batch, rng):
            step += 1
            record.step_begin(step)
            record.fp_start(step)
            with nnprof.record_function("forward"):
                a1, out = model.forward(xs)
                loss = model.loss(out, ys)
            with nnprof.record_function("backward"):
                grads = model.backward(xs, ys, a1, out)
            record.bp_end(step)
            with nnprof.record_function("optimizer"):
                model.sgd(grads, args.lr)
            free_step_tensors()
            record.counter("loss", loss)
            record.step_end(step)
            total += loss
            count += 1
        record.epoch_end(epoch)
        losses.append(total / count)
        print(f"epoch {epoch:3d}  loss {losses[-1]:.4f}")
    return losses, prof


def main(argv=None):
    """Parses arguments, trains, analyses and prints where the results are."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--samples", type=int, default=256)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--hidden", type=int, default=16)
    parser.add_argument("--lr", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", default="./data", help="profiler output_path")
    args = parser.parse_args(argv)

    losses, prof = train(args)
    stats = prof.stats()
    prof.analyse()
    matmul_stats = prof.op_analyse(["MatMul", "Tanh"])

    print(f"\nrecorded {stats['events_recorded']} events "
          f"({stats['events_dropped']} dropped)")
    print(f"results:  {prof.profiler_dir}")
    print(f"  step trace:    step_trace_raw_{prof.rank_id}_detail_time.csv")
    print(f"  op statistics: op_statistic_{prof.rank_id}.csv")
    print(f"  host ranges:   host_info/timeline_{prof.rank_id}.json")
    print(f"  timeline:      {os.path.join(prof.raw_dir, 'ASCEND_PROFILER_OUTPUT')}"
          "/trace_view.json (chrome://tracing, Perfetto)")
    for row in matmul_stats:
        print(f"  {row['op_name']:8s} count {row['count']:5d}  "
              f"avg {row['avg_time_us']:.3f} us  total {row['total_time_us']:.1f} us")
    if len(losses) > 1 and not losses[-1] < losses[0]:
        print(f"loss did not decrease: {losses[0]:.4f} -> {losses[-1]:.4f}", file=sys.stderr)
        return 1
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
