/* timeline.h - internal to the timeline writer, shared by its three files: chrome_trace.c
 * (the driver: set-up, metadata, truncation, timeline_summary), timeline_lanes.c (processes,
 * lanes and where each slice goes) and timeline_events.c (the events of every source).
 * The writer's state tl_t lives here. Invariant: on every (pid, tid) the X slices are
 * properly nested (a slice that would overlap partially moves to an overflow lane). */
#ifndef NNP_TIMELINE_H
#define NNP_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analyse/analyse.h"
#include "util/json_writer.h"
#include "util/util.h"

/* Synthetic pids start above Linux PID_MAX_LIMIT (2^22, include/linux/threads.h), so they
 * can never be a real process; synthetic tids start at 2^30, far above any OS tid and still
 * inside uint32 (Perfetto's JSON importer reads pid/tid as 32-bit). */
#define SYNTH_PID_BASE (1u << 22)
#define SYNTH_TID_BASE (1u << 30)
/* Overflow lanes per base lane. Real traces need a handful; past this a slice is dropped,
 * counted and reported rather than breaking the nesting invariant. */
#define MAX_LANES 1024
#define NONE      UINT32_MAX

#define NS_PER_US    1000
#define NS_PER_MS    1000000
#define US_DECIMALS  3 /* ns precision: us with 3 decimals is exact */
#define MS_DECIMALS  6
#define BYTES_PER_MB (1024.0 * 1024.0)
#define PERCENT      100.0
/* Text buffers: a formatted number, and a composed event or thread name (longer names are
 * cut: they only label a slice). */
#define NUM_BUF  40
#define NAME_BUF 512

#define STACK_INITIAL  16
#define TRACKS_INITIAL 64
#define PROCS_INITIAL  8
#define HMAP_INITIAL   64
/* The four "Overlap Analysis" threads, tids as CANN writes them (formats.md 1.4). */
#define OV_TRACKS NNP_OVERLAP_LANES
/* Host threads get four lanes each: ops, host ranges, user markers, unfinished ranges. */
#define HOST_LANES 4

enum proc_kind { PROC_HOST, PROC_STEPS, PROC_OVERLAP, PROC_COMM, PROC_DEVICE };

enum lane_kind {
    LANE_STEPS,
    LANE_OVERLAP,
    LANE_OPS, /* the first of the HOST_LANES, in this order */
    LANE_RANGES,
    LANE_MARKERS,
    LANE_OPEN,
    LANE_STREAM,
    LANE_GROUP,
};

/* host_rows.level of framework-developer rows, hidden unless is_developer (host_info). */
#define HOST_LEVEL_DEVELOPER 0

typedef struct proc {
    uint32_t pid;
    uint8_t kind;
    uint32_t device_id;
    bool used;
} proc_t;

/* ",\"pid\":P,\"tid\":T,\"ts\":" of a lane: 27 bytes of keys, two 10-digit numbers. */
#define TRACK_HEAD_BUF 48

/* One lane: a (pid, tid) with the stack of slice ends that are still open on it. */
typedef struct track {
    uint32_t proc, tid;
    uint8_t kind;
    uint32_t level; /* 0 = base lane; n = the nth overflow lane */
    uint64_t num;   /* OS tid, stream id or Overlap index, for the name */
    uint32_t name;  /* model string id of the thread or group name, 0 = none */
    int64_t sort;   /* thread_sort_index */
    uint32_t next;  /* next overflow lane, NONE until needed */
    int64_t last_start;
    int64_t *ends;
    size_t depth, cap;
    bool used;
    /* The text every event of the lane has after its "ph": pid, tid and the "ts" key,
     * formatted once when the lane is made (the timeline writes millions of events). */
    uint8_t head_len;
    char head[TRACK_HEAD_BUF];
} track_t;

/* Open addressing map from a pair of 64-bit keys to a uint32 (lanes, host-range stacks). */
typedef struct hmap {
    uint64_t *ka, *kb;
    uint32_t *val;
    size_t cap, n;
} hmap_t;

typedef struct corr_ent {
    uint64_t corr;
    uint32_t row;
} corr_ent_t;

typedef struct tl {
    const nnp_actx_t *c;
    const nnp_model_t *m;
    const nnp_step_trace_t *st;
    const nnp_overlap_t *ov;
    nnp_jw_t w;
    int err; /* first error besides the writer's own */

    proc_t *procs;
    size_t n_procs, cap_procs;
    track_t *tracks;
    size_t n_tracks, cap_tracks;
    hmap_t lanes; /* stream and group base lanes, and tids taken per process */
    uint32_t next_tid;
    uint32_t host_proc, steps_proc, overlap_proc, comm_proc;
    uint32_t steps_track, ov_tracks[OV_TRACKS];
    uint32_t *host_base; /* (threads.n + 1) * HOST_LANES base lanes; the extra thread holds
                            rows whose thread index is out of range */
    size_t n_host_threads;

    uint32_t *op_track; /* lane of each op (placed before streaming, for flows) */
    uint32_t *host_end; /* matched end row of each host begin row, NONE if unmatched */
    corr_ent_t *corr;   /* ops by correlation id */
    size_t n_corr;

    /* Cursors: the next row of each source, all sources being sorted by time. */
    size_t c_ops, c_kernels, c_host, c_markers, c_comms, c_ov[OV_TRACKS - 1];
    nnp_gap_iter_t free_gaps; /* the last overlap track's (Free) cursor */
    size_t c_counters, c_host_mem, c_rss, c_queues, c_cpu;
    int64_t window_lo; /* events starting before it are not written (--steps) */
    int64_t limit;     /* the current bucket ends here (exclusive) */

    uint64_t dropped; /* slices dropped because MAX_LANES lanes were full */
    /* timeline_summary */
    uint8_t *seen; /* per string id: name already counted */
    /* Per string id, filled on first use: whether it needs JSON escaping (STR_*), and
     * where the name shown for an op starts (after its last '/'). */
    uint8_t *str_kind;
    uint32_t *short_at;
    int64_t busy_ns;
    uint64_t n_exec, n_names;
    uint32_t max_scope;
} tl_t;

/* tl_t.str_kind values. */
enum { STR_UNKNOWN = 0, STR_CLEAN = 1, STR_ESCAPE = 2 };
/* tl_t.short_at before it is computed. */
#define SHORT_UNKNOWN UINT32_MAX

/* ---- small helpers of the writing files ---- */

static inline void key_us(tl_t *tl, const char *key, int64_t ns)
{
    char buf[NUM_BUF];
    nnp__fmt_fixed(buf, ns, NS_PER_US, US_DECIMALS);
    nnp__jw_key(&tl->w, key);
    nnp__jw_raw(&tl->w, buf);
}

static inline void key_str(tl_t *tl, const char *key, const char *s)
{
    nnp__jw_key(&tl->w, key);
    nnp__jw_str(&tl->w, s);
}

/* Integers without snprintf: pids, tids and ids are in every event, and printf's machinery
 * was a tenth of the writing time. */
static inline void key_uint(tl_t *tl, const char *key, uint64_t v)
{
    char buf[NUM_BUF];
    buf[nnp__fmt_u64(buf, v)] = '\0';
    nnp__jw_key(&tl->w, key);
    nnp__jw_raw(&tl->w, buf);
}

static inline void key_int(tl_t *tl, const char *key, int64_t v)
{
    char buf[NUM_BUF];
    buf[nnp__fmt_i64(buf, v)] = '\0';
    nnp__jw_key(&tl->w, key);
    nnp__jw_raw(&tl->w, buf);
}

/* A percentage with two decimals: more digits only add bytes to every sample. */
static inline void key_pct(tl_t *tl, const char *key, double v)
{
    char buf[NUM_BUF];
    snprintf(buf, sizeof(buf), "%.2f", v);
    nnp__jw_key(&tl->w, key);
    nnp__jw_raw(&tl->w, buf);
}

static inline const char *str(const tl_t *tl, uint32_t id)
{
    return nnp__model_str(tl->m, id);
}

/* ---- timeline_lanes.c: processes, lanes, slice placement, set-up indexes ---- */

/* Records an out-of-memory error (once) and returns it. */
int nnp__tl_oom(tl_t *tl);
/* A new process of kind with that pid; NONE on error. */
uint32_t nnp__tl_proc_new(tl_t *tl, uint8_t kind, uint32_t pid, uint32_t device_id);
/* A new lane. want_tid: the tid it should have (UINT64_MAX = any synthetic one). */
uint32_t nnp__tl_track_new(tl_t *tl, uint32_t proc, uint8_t kind, uint64_t num, uint32_t name,
                           int64_t sort, uint64_t want_tid, uint32_t level);
/* The lane of base's chain that takes [s, e] (overflow lanes made on demand), NONE when
 * every lane refuses (the slice is dropped and counted) or on error. */
uint32_t nnp__tl_place(tl_t *tl, uint32_t base, int64_t s, int64_t e);
/* Base lane of a host thread (ti: index into the threads table) of one HOST_LANES kind. */
uint32_t nnp__tl_host_base(tl_t *tl, uint32_t ti, uint8_t kind);
/* Base lane of a device stream, of a communication group. */
uint32_t nnp__tl_stream_base(tl_t *tl, uint32_t device_id, uint32_t stream_id);
uint32_t nnp__tl_group_base(tl_t *tl, uint32_t group);
/* A lane (and its process) has events: its metadata is written. */
void nnp__tl_mark_used(tl_t *tl, uint32_t t);
/* Lanes of every op (placed before streaming, for flows) and the correlation index. */
int nnp__tl_prepare_ops(tl_t *tl);
/* The end row matched to each host begin row (per thread, event and stage). */
int nnp__tl_prepare_host(tl_t *tl);
/* The op row that launched correlation id corr (the first one if several), or NONE. */
uint32_t nnp__tl_corr_op(const tl_t *tl, uint64_t corr);
void nnp__tl_hmap_fini(hmap_t *h);

/* ---- timeline_events.c: the events of every source ---- */

/* Starts an event value with the keys every event has, from fragments (json_writer.h):
 * {"name":name,"ph":"<ph>","pid":..,"tid":..,"ts":ts. The caller appends its other keys
 * as fragments and closes the object with "}". */
void nnp__tl_ev_head(tl_t *tl, const char *name, const char *ph, uint32_t t, int64_t ts_ns);
/* Whether host row i is written (developer rows only for developers). */
bool nnp__tl_host_row_wanted(const tl_t *tl, size_t i);
/* Writes (emit) or skips every source's rows that start before limit. */
void nnp__tl_emit_until(tl_t *tl, int64_t limit, bool emit);
/* True when some source still has rows. */
bool nnp__tl_rows_left(const tl_t *tl);
/* The slices of one step on the Step Trace process. */
void nnp__tl_emit_step(tl_t *tl, const nnp_step_row_t *r);

#endif /* NNP_TIMELINE_H */
