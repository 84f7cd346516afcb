#!/usr/bin/env python3
"""gen_msprof_timeline.py - writes a synthetic CANN msprof collection for bench_import
(issue #7): OUT/PROF_000001_bench/device_0/timeline/msprof_0_1_1.json of about SIZE_MB
megabytes (Ascend Hardware AI_CORE/AI_CPU tasks, HCCL op-level events, Step Trace
Iteration events, in the older-CANN layout of docs/IMPORT.md) plus device_0/info.json.0.
Standard library only. Usage: gen_msprof_timeline.py OUT [SIZE_MB] (default 100)."""
import json
import os
import sys

DEFAULT_SIZE_MB = 100
BYTES_PER_MB = 1000 * 1000
# Shape of one synthetic iteration: tasks per step, one AllReduce per step (AlexNet-like,
# MANIFEST 1.4: about 140 compute tasks and one AllReduce per iteration).
TASKS_PER_STEP = 140
TASK_DUR_US = 12.345
GAP_US = 1.5
ALLREDUCE_US = 800.0
STREAMS = (2, 3, 4)
PID_HW, PID_HCCL = 3, 5


def meta(pid, tid, kind, name):
    return {"name": kind, "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}}


def main():
    if len(sys.argv) < 2:
        sys.stderr.write(__doc__ + "\n")
        return 2
    out = sys.argv[1]
    size_bytes = int(float(sys.argv[2]) * BYTES_PER_MB) if len(sys.argv) > 2 else DEFAULT_SIZE_MB * BYTES_PER_MB
    dev = os.path.join(out, "PROF_000001_bench", "device_0")
    os.makedirs(os.path.join(dev, "timeline"), exist_ok=True)
    with open(os.path.join(dev, "info.json.0"), "w") as f:
        json.dump({"rank_id": 0, "devices": "0", "platform_version": "synthetic"}, f)
    path = os.path.join(dev, "timeline", "msprof_0_1_1.json")
    events = 0
    with open(path, "w") as f:
        head = [meta(PID_HW, 0, "process_name", "Ascend Hardware"),
                meta(PID_HCCL, 0, "process_name", "HCCL")]
        head += [meta(PID_HW, s, "thread_name", "Stream %d" % s) for s in STREAMS]
        head += [meta(PID_HW, 1000, "thread_name", "Step Trace(Model ID:1)"),
                 meta(PID_HCCL, 1, "thread_name", "Communication Kernel")]
        f.write("[\n" + ",\n".join(json.dumps(e) for e in head))
        written, ts, step = f.tell(), 1000000.0, 0
        while written < size_bytes:
            step += 1
            start = ts
            parts = []
            for k in range(TASKS_PER_STEP):
                s = STREAMS[k % len(STREAMS)]
                kind = "AI_CPU" if k % 70 == 69 else "AI_CORE"
                parts.append(json.dumps({
                    "name": "Default/network-Net/Conv2D-op%d" % k, "pid": PID_HW, "tid": s,
                    "ts": "%.3f" % ts, "dur": TASK_DUR_US, "ph": "X",
                    "args": {"Model Id": 1, "Task Type": kind, "Stream Id": s, "Task Id": k,
                             "Batch Id": 0, "Subtask Id": 4294967295}}))
                ts += TASK_DUR_US + GAP_US
            parts.append(json.dumps({
                "name": "hcom_allReduce__%d" % step, "pid": PID_HCCL, "tid": 1,
                "ts": "%.3f" % ts, "dur": ALLREDUCE_US, "ph": "X",
                "args": {"connection_id": step, "model id": 1, "data_type": "FP32",
                         "alg_type": "RING-RING", "count": 1048576}}))
            ts += ALLREDUCE_US
            parts.append(json.dumps({
                "name": "Iteration %d" % step, "pid": PID_HW, "tid": 1000,
                "ts": "%.3f" % start, "dur": round(ts - start, 3), "ph": "X",
                "cat": "Iteration Time",
                "args": {"Iteration ID": step, "FP Start": "%.3f" % start,
                         "BP End": "%.3f" % (ts - ALLREDUCE_US), "Iteration End": "%.3f" % ts}}))
            ts += GAP_US
            chunk = ",\n" + ",\n".join(parts)
            f.write(chunk)
            written += len(chunk)
            events += len(parts)
        f.write("\n]\n")
    sys.stdout.write("%s: %d bytes, %d events, %d steps\n" % (path, os.path.getsize(path), events, step))
    return 0


if __name__ == "__main__":
    sys.exit(main())
