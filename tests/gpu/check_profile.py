#!/usr/bin/env python3
"""check_profile.py - compares what nnprof recorded of tests/gpu/gpu_check.cu with what the
program says it did (its expectations JSON). Called by scripts/gpu-check; stdlib only.

Usage: check_profile.py EXPECTATIONS.json DUMP.jsonl INFO.json PROFILER_DIR [KINETO.json]

Checks: kernel launch counts and configurations, copy counts and bytes per direction,
pageable copies, the memory set, the three device allocations, NVTX ranges, the host op's
kernels linked by correlation id (raw data and gpu_op_detail_info), every kernel's times
inside the profiling window and inside its launch's window (after its launch call began,
done before the end of the synchronization that followed), no record dropped, the GPU
files present, and (with KINETO.json, `nnprof export kineto` of the run) the device work in
the Kineto trace, linked to its calls and op as HTA and TensorBoard join them. Prints one line per check; exits 1 if any fails."""
import csv
import json
import os
import re
import sys

TAG = 1 << 63
failures = []


def check(ok, what, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {what}{(': ' + detail) if detail else ''}")
    if not ok:
        failures.append(what)


def base_name(name):
    """'void fill(float*, float, int)' or 'fill(float*, ...)' -> 'fill'."""
    m = re.match(r"^(?:void\s+)?([A-Za-z_][A-Za-z0-9_]*)", name or "")
    return m.group(1) if m else name


def check_kineto(path, exp, kernels, copies, sets):
    """The Kineto export of the run: every kernel, copy and set as a GPU event whose
    "correlation" names exactly one runtime/driver event that began before it, an ac2g flow
    each, and the op's kernels carrying the op's External id."""
    trace = json.load(open(path))
    ev = trace.get("traceEvents", [])
    check(trace.get("baseTimeNanoseconds", 0) > 0, "kineto: baseTimeNanoseconds")
    by_cat = {}
    for e in ev:
        if e.get("ph") == "X":
            by_cat.setdefault(e.get("cat"), []).append(e)
    gk, gc, gs = (by_cat.get(c, []) for c in ("kernel", "gpu_memcpy", "gpu_memset"))
    check((len(gk), len(gc), len(gs)) == (len(kernels), len(copies), len(sets)),
          "kineto: one GPU event per kernel, copy and set",
          f"{len(gk)}/{len(gc)}/{len(gs)} for {len(kernels)}/{len(copies)}/{len(sets)}")
    calls = {}
    for e in by_cat.get("cuda_runtime", []) + by_cat.get("cuda_driver", []):
        c = e.get("args", {}).get("correlation")
        if c is not None:
            calls.setdefault(c, []).append(e)
    bad = [e for e in gk + gc + gs
           if not calls.get(e.get("args", {}).get("correlation"))
           or min(c["ts"] for c in calls[e["args"]["correlation"]]) > e["ts"]]
    check(not bad, "kineto: each GPU event's correlation names an earlier launch call",
          f"{len(bad)} do not" if bad else "")
    flows = [e for e in ev if e.get("cat") == "ac2g" and e.get("ph") == "f"]
    check(len(flows) == len(gk) + len(gc) + len(gs), "kineto: an ac2g flow per GPU event",
          f"{len(flows)}")
    # Kineto names an op by its type: "Default/net/Saxpy-op1" is a "Saxpy".
    op_type = re.sub(r"-op\d+$", "", exp["op"]["name"].rsplit("/", 1)[-1])
    ops = [e for e in by_cat.get("cpu_op", []) if e.get("name") == op_type]
    ext = {e.get("args", {}).get("External id") for e in ops}
    linked = [e for e in gk if e.get("args", {}).get("External id") in ext]
    check(len(ops) == exp["op"]["count"] and len(linked) == exp["op"]["kernels"],
          "kineto: the op's kernels carry its External id", f"{len(ops)} ops, {len(linked)} kernels")


def main():
    exp_path, dump_path, info_path, prof_dir = sys.argv[1:5]
    exp = json.load(open(exp_path))
    recs = [json.loads(line) for line in open(dump_path) if line.strip()]
    info = json.load(open(info_path))
    check(exp.get("profiled") is True, "the program found libnnprof (nnp_* symbols)")

    kernels = [r for r in recs if r.get("kind") == "kernel" and r.get("type") == "cuLaunchKernel"]
    copies = [r for r in recs if r.get("kind") == "kernel" and r.get("type") == "cuMemcpy"]
    sets = [r for r in recs if r.get("kind") == "kernel" and r.get("type") == "cuMemset"]
    calls = [r for r in recs if r.get("kind") == "call"]
    allocs = [r for r in recs if r.get("kind") == "mem_alloc"]
    frees = [r for r in recs if r.get("kind") == "mem_free"]
    ops = [r for r in recs if r.get("kind") == "op"]

    # Kernels: counts and launch configurations.
    for name, want in exp["kernels"].items():
        got = [k for k in kernels if base_name(k.get("name")) == name]
        check(len(got) == want["count"], f"kernel {name}: launches",
              f"{len(got)} recorded, {want['count']} launched")
        bad = [k for k in got
               if [k.get("grid_x"), k.get("grid_y"), k.get("grid_z")] != want["grid"]
               or [k.get("block_x"), k.get("block_y"), k.get("block_z")] != want["block"]
               or k.get("dynamic_shared_bytes") != want["dynamic_shared"]]
        check(not bad, f"kernel {name}: grid {want['grid']} block {want['block']} "
              f"dynamic shared {want['dynamic_shared']}",
              f"{len(bad)} records differ" if bad else "")

    # Copies and the memory set.
    for kind, want in exp["copies"].items():
        got = [c for c in copies if c.get("copy_kind") == kind]
        check(len(got) == want["count"], f"{kind} copies: count", f"{len(got)} vs {want['count']}")
        total = sum(c.get("bytes", 0) for c in got)
        check(total == want["bytes"], f"{kind} copies: bytes", f"{total} vs {want['bytes']}")
        if "pageable" in want:
            pg = [c for c in got if c.get("src_kind") == "pageable"]
            check(len(pg) == want["pageable"], f"{kind} copies from pageable memory",
                  f"{len(pg)} vs {want['pageable']}")
    total = sum(s.get("bytes", 0) for s in sets)
    check(len(sets) == exp["memset"]["count"] and total == exp["memset"]["bytes"],
          "memory set: count and bytes", f"{len(sets)} sets, {total} bytes")

    # Device allocations (profile_memory): ours by size, each freed.
    sizes = sorted(a.get("bytes") for a in allocs)
    for b in exp["device_allocs"]:
        check(b in sizes, f"device allocation of {b} bytes recorded", f"seen {sizes}")
        if b in sizes:
            sizes.remove(b)
    freed = {f.get("address") for f in frees}
    ours = [a for a in allocs if a.get("bytes") in exp["device_allocs"]]
    check(all(a.get("address") in freed for a in ours), "our device allocations freed")
    if sizes:
        print(f"info other device allocations (CUDA's own): {sizes}")

    # CUDA API calls on the thread that made them: CUPTI's threadId is the OS thread id that
    # our recorder gives the program's own records (gpu_check launches and records its
    # host ops from its main thread).
    op_tids = {o.get("tid") for o in ops}
    for kinds, what in ((("cuda_runtime", "cuda_driver"), "CUDA API calls"),
                        (("nvtx",), "NVTX ranges")):
        tids = {c.get("thread_id") for c in calls if c.get("call_kind") in kinds}
        check(bool(tids) and tids <= op_tids,
              f"{what} on the program's own thread (CUPTI threadId = OS thread id)",
              f"on {sorted(tids)}, host ops on {sorted(op_tids)}")

    # NVTX ranges, on the program's thread.
    nvtx = [c.get("name") for c in calls if c.get("call_kind") == "nvtx"]
    check(sorted(nvtx) == sorted(exp["nvtx"]), "NVTX ranges", f"{nvtx}")

    # The host op and its kernels, linked through nnp_correlation_push.
    first = exp["op"]["first_correlation_id"]
    op_ids = {o.get("correlation_id") for o in ops if o.get("name") == exp["op"]["name"]}
    check(len(op_ids) == exp["op"]["count"], "host ops recorded", f"{len(op_ids)}")
    linked = [k for k in kernels if k.get("correlation_id") in op_ids]
    check(len(linked) == exp["op"]["kernels"], "kernels linked to their host op",
          f"{len(linked)} of {exp['op']['kernels']}")
    check(all(base_name(k.get("name")) == "saxpy" for k in linked), "the linked kernels are saxpy")
    check(min(op_ids or {0}) == first, "op correlation ids as pushed")

    # Times: inside the window, and inside the launch's window.
    wins = [(w["start_mono_ns"], w["stop_mono_ns"]) for w in info.get("windows", [])]
    dev = kernels + copies + sets
    outside = [k for k in dev
               if not any(s <= k["ts_ns"] and (e is None or k["end_ns"] <= e) for s, e in wins)]
    check(not outside, "device activity inside the profiling window",
          f"{len(outside)} outside" if outside else "")
    launches = {}
    for c in calls:
        if c.get("call_kind") in ("cuda_runtime", "cuda_driver"):
            launches.setdefault(c.get("correlation_id"), []).append(c)
    syncs = sorted((c for c in calls if "Synchronize" in (c.get("name") or "")),
                   key=lambda c: c["ts_ns"])
    unmatched, early, late = 0, 0, 0
    for k in kernels:
        cands = launches.get(k.get("correlation_id"), [])
        if not cands:
            unmatched += 1
            continue
        launch = min(cands, key=lambda c: c["ts_ns"])
        if k["ts_ns"] < launch["ts_ns"]:
            early += 1
        after = [s for s in syncs if s["ts_ns"] >= launch["ts_ns"]
                 and s.get("thread_id") == launch.get("thread_id")]
        if after and k["end_ns"] > after[0]["end_ns"]:
            late += 1
    check(unmatched == 0, "every kernel has its launch call", f"{unmatched} without")
    # Launch ids: CUPTI's correlation id on each runtime/driver call and on what it queued,
    # one call per id (the Kineto export's "correlation" and ac2g flows).
    by_launch = {}
    for c in calls:
        if c.get("call_kind") in ("cuda_runtime", "cuda_driver") and c.get("launch_id"):
            by_launch.setdefault(c["launch_id"], []).append(c)
    # (A runtime call and the driver call it makes may share CUPTI's id: at least one.)
    no_call = [k for k in dev if not by_launch.get(k.get("launch_id"))]
    check(not no_call, "every kernel, copy and set names its launch call by launch id",
          f"{len(no_call)} do not" if no_call else "")
    check(all(k["ts_ns"] >= min(c["ts_ns"] for c in by_launch[k["launch_id"]]) for k in dev
              if k not in no_call), "device work starts after the call its launch id names")
    check(early == 0, "no kernel starts before its launch call", f"{early} do")
    check(late == 0, "every kernel ends before the synchronization after its launch returns",
          f"{late} do not")

    # Nothing lost.
    summary = [r for r in recs if r.get("kind") == "summary"]
    lost = sum(s.get("events_lost", 0) for s in summary)
    check(lost == 0, "recorder lost no event", f"{lost}")
    dropped = [r.get("value") for r in recs
               if r.get("kind") == "counter" and r.get("name") == "cupti_dropped_records"]
    check(bool(dropped) and dropped[-1] == 0, "CUPTI dropped no record", f"{dropped[-1:]}")

    # The GPU files of the analysis.
    rank = info.get("rank_id", 0)
    for f in (f"gpu_op_detail_info_{rank}.csv", f"gpu_op_type_info_{rank}.csv",
              f"gpu_activity_data_{rank}.csv", f"gpu_timeline_display_{rank}.json",
              f"gpu_timeline_summary_{rank}.json"):
        check(os.path.exists(os.path.join(prof_dir, f)), f"{f} written")
    path = os.path.join(prof_dir, f"gpu_op_detail_info_{rank}.csv")
    if os.path.exists(path):
        rows = [r for r in csv.DictReader(open(path)) if r["op_full_name"] == exp["op"]["name"]]
        check(len(rows) == 1 and int(rows[0]["op_occurrences"]) == exp["op"]["count"]
              and int(rows[0]["cuda_activity_call_count"]) == exp["op"]["kernels"],
              "gpu_op_detail_info: the op, its occurrences and its kernels", f"{rows}")
    path = os.path.join(prof_dir, f"gpu_activity_data_{rank}.csv")
    if os.path.exists(path):
        counts = {}
        for r in csv.DictReader(open(path)):
            if r["type"] == "cuLaunchKernel":
                counts[base_name(r["name"])] = counts.get(base_name(r["name"]), 0) + int(r["occurrences"])
        for name, want in exp["kernels"].items():
            check(counts.get(name) == want["count"], f"gpu_activity_data: {name} occurrences",
                  f"{counts.get(name)}")

    # HTA's tables of the capture itself (as HTA reads its Kineto export): the kernels by
    # name, each launch in the launch statistics.
    path = os.path.join(prof_dir, "hta", "kernel_breakdown.csv")
    check(os.path.exists(path), "hta/kernel_breakdown.csv written (HTA's tables of a GPU run)")
    if os.path.exists(path):
        names = {base_name(r["name"]) for r in csv.DictReader(open(path))
                 if r["kernel_type"] == "COMPUTATION" and int(r["rank"]) == rank}
        missing = [n for n in exp["kernels"] if n not in names]
        check(not missing or "others" in names, "hta/kernel_breakdown: every kernel by name",
              f"missing {missing}, seen {sorted(names)}")
    path = os.path.join(prof_dir, "hta", "cuda_kernel_launch_stats.csv")
    if os.path.exists(path):
        n = sum(1 for r in csv.DictReader(open(path)) if int(r["rank"]) == rank)
        check(n >= len(kernels), "hta/cuda_kernel_launch_stats: a row per kernel launch at least",
              f"{n} rows, {len(kernels)} kernels")

    if len(sys.argv) > 5:
        check_kineto(sys.argv[5], exp, kernels, copies, sets)

    print(f"kernels {len(kernels)}, copies {len(copies)}, sets {len(sets)}, calls {len(calls)}, "
          f"device allocations {len(allocs)}")
    if failures:
        print(f"gpu-check: {len(failures)} check(s) failed")
        return 1
    print("gpu-check: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
