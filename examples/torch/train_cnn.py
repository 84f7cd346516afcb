"""The main demo (README, scripts/demo): a small ResNet-style CNN trained with PyTorch
on generated images, a DataLoader with worker processes, and data-parallel ranks
exchanging gradients through torch.distributed (gloo, DistributedDataParallel), profiled
with nnprof.torch exactly as one would with torch.profiler:

    PYTHONPATH=python /usr/bin/python3 examples/torch/train_cnn.py --output ./data

Each rank records its ops (shapes, FLOPs, memory), the gradient all-reduces and the
steps of the schedule into <output>/profiler/, writes a PyTorch trace per cycle to
<output>/tb/ (TensorBoard, HTA), and rank 0 prints torch's key_averages table. Exits 1
when the loss did not decrease (the training must really learn).
"""

import argparse
import os
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn

import nnprof.torch as profiler

CLASSES = 10
IMAGE = 32  # pixels per side


class Patterns(torch.utils.data.Dataset):
    """Generated images: each class is a fixed random pattern plus noise, so a network
    can learn it in a few steps (deterministic per index)."""

    def __init__(self, n):
        self.n = n
        g = torch.Generator().manual_seed(1234)
        self.patterns = torch.randn(CLASSES, 3, IMAGE, IMAGE, generator=g)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        label = i % CLASSES
        g = torch.Generator().manual_seed(i)
        noise = torch.randn(3, IMAGE, IMAGE, generator=g)
        return self.patterns[label] + 0.8 * noise, label


class Block(nn.Module):
    """A residual block: conv-bn-relu-conv-bn plus the (projected) input."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.proj = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                   nn.BatchNorm2d(cout)) if stride != 1 or cin != cout
                     else nn.Identity())

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + self.proj(x))


class SmallResNet(nn.Module):
    """stem, three residual stages (16, 32, 64 channels), global pooling, classifier."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16),
                                  nn.ReLU())
        self.layer1 = Block(16, 16, 1)
        self.layer2 = Block(16, 32, 2)
        self.layer3 = Block(32, 64, 2)
        self.fc = nn.Linear(64, CLASSES)

    def forward(self, x):
        x = self.layer3(self.layer2(self.layer1(self.stem(x))))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


def train(rank, args, port):
    """One rank: gloo process group, DDP model, DataLoader, profiled training."""
    torch.set_num_threads(1)  # ranks and loader workers share the machine's cores
    torch.manual_seed(0)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=args.ranks)
    data = Patterns(args.batch * args.steps * args.ranks)
    sampler = torch.utils.data.distributed.DistributedSampler(data, shuffle=False)
    # Workers are forked, as a DataLoader's are by default on Linux (a process started by
    # mp.spawn would spawn them): NNPROF_FOLLOW_FORK then profiles each in the ranks' windows.
    loader = torch.utils.data.DataLoader(data, batch_size=args.batch, sampler=sampler,
                                         num_workers=args.workers,
                                         persistent_workers=args.workers > 0,
                                         multiprocessing_context="fork" if args.workers else None)
    model = nn.parallel.DistributedDataParallel(SmallResNet())
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    # Steps 0-1 wait and warm up (the first iteration pays lazy initialisation), then
    # every other step is recorded: the analysis sees steady-state training.
    active = max(1, args.steps - 2)
    losses = []
    with profiler.profile(output_path=args.output,
                          schedule=profiler.schedule(wait=1, warmup=1, active=active),
                          on_trace_ready=profiler.tensorboard_trace_handler(
                              os.path.join(args.output, "tb")),
                          record_shapes=True, profile_memory=True, with_flops=True) as prof:
        for images, labels in loader:
            with profiler.record_function("forward_backward"):
                opt.zero_grad()
                loss = loss_fn(model(images), labels)
                loss.backward()
            opt.step()
            losses.append(float(loss))
            prof.step()
    if rank == 0:
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
        print(f"rank 0 raw data: {prof.raw_dir}")
    dist.barrier()
    dist.destroy_process_group()
    # One write per line: the ranks print at the same time into one pipe, and print()
    # writes the text and its newline apart ("...1.794rank 0: ..." in the demo's output).
    sys.stdout.write(f"rank {rank}: {len(losses)} steps, loss {losses[0]:.3f} -> "
                     f"{losses[-1]:.3f}\n")
    sys.stdout.flush()
    if not losses[-1] < losses[0]:
        sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", default="./data", help="nnprof output_path")
    parser.add_argument("--ranks", type=int, default=2, help="data-parallel ranks (gloo)")
    parser.add_argument("--steps", type=int, default=12, help="training steps per rank")
    parser.add_argument("--batch", type=int, default=32, help="images per step and rank")
    parser.add_argument("--workers", type=int, default=2, help="DataLoader worker processes")
    args = parser.parse_args()
    if args.ranks < 1 or args.steps < 3 or args.batch < 1 or args.workers < 0:
        parser.error("need --ranks >= 1, --steps >= 3, --batch >= 1, --workers >= 0")
    start = time.time()
    mp.spawn(train, args=(args, free_port()), nprocs=args.ranks, join=True)
    print(f"trained {args.ranks} rank(s) x {args.steps} steps in {time.time() - start:.1f} s")


if __name__ == "__main__":
    main()
