/* chrome_trace.c - the timeline: trace_view.json (a Chrome trace event array) in the rank
 * directory and timeline_summary_{rank}.json in the output directory. Called by the
 * analyse driver after step_trace.c and overlap.c. Events are streamed through the JSON
 * writer step by step, never held as a document. Invariant: on every (pid, tid) the X
 * slices are properly nested (a slice that would overlap partially moves to an overflow
 * lane). Rules for users (processes, units, truncation): docs/OUTPUTS.md, "Timeline". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyse/analyse.h"
#include "util/json_writer.h"
#include "util/util.h"

#define TL_FILE "trace_view.json"
/* 1.x MindSpore name, kept by 2.x tooling (formats.md 1.4). */
#define TL_SUMMARY_FMT      "timeline_summary_%d.json"
#define TL_SUMMARY_NAME_BUF 64

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
#define OV_TRACKS 4
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

/* host_rows.kind values (model.h: the CSV's start_end column). */
enum { HOST_BEGIN = 0, HOST_END = 1, HOST_INSTANT = 2 };
/* host_rows.level of framework-developer rows, hidden unless is_developer (host_info). */
#define HOST_LEVEL_DEVELOPER 0

typedef struct proc {
    uint32_t pid;
    uint8_t kind;
    uint32_t device_id;
    bool used;
} proc_t;

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
    int fd;
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
    size_t c_ops, c_kernels, c_host, c_markers, c_comms, c_ov[OV_TRACKS];
    size_t c_counters, c_host_mem, c_rss, c_queues, c_cpu;
    int64_t window_lo; /* events starting before it are not written (--steps) */
    int64_t limit;     /* the current bucket ends here (exclusive) */

    uint64_t dropped; /* slices dropped because MAX_LANES lanes were full */
    /* timeline_summary */
    uint8_t *seen; /* per string id: name already counted */
    int64_t busy_ns;
    uint64_t n_exec, n_names;
    uint32_t max_scope;
} tl_t;

/* ---- small helpers ---- */

static int oom(tl_t *tl)
{
    if (tl->err == NNP_OK)
        tl->err = nnp__fail(NNP_ENOMEM, "timeline: out of memory");
    return tl->err;
}

/* Writes v / div with exactly `decimals` digits after the point, from integers: ts and dur
 * print the exact ns, and the CSV of overlap.c prints the same digits for the same ns. */
static size_t fmt_fixed(char *buf, int64_t v, uint64_t div, int decimals)
{
    char tmp[NUM_BUF];
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    uint64_t q = mag / div, r = mag % div;
    size_t n = 0, k = 0;
    if (v < 0)
        buf[n++] = '-';
    do {
        tmp[k++] = (char)('0' + q % 10);
        q /= 10;
    } while (q);
    while (k)
        buf[n++] = tmp[--k];
    buf[n++] = '.';
    for (int d = decimals - 1; d >= 0; d--) {
        tmp[d] = (char)('0' + r % 10);
        r /= 10;
    }
    memcpy(buf + n, tmp, (size_t)decimals);
    n += (size_t)decimals;
    buf[n] = '\0';
    return n;
}

static void key_us(tl_t *tl, const char *key, int64_t ns)
{
    char buf[NUM_BUF];
    fmt_fixed(buf, ns, NS_PER_US, US_DECIMALS);
    nnp__jw_key(&tl->w, key);
    nnp__jw_raw(&tl->w, buf);
}

static void key_str(tl_t *tl, const char *key, const char *s)
{
    nnp__jw_key(&tl->w, key);
    nnp__jw_str(&tl->w, s);
}

/* Decimal digits of v without snprintf: pids, tids and ids are in every event, and
 * printf's machinery was a tenth of the writing time. */
static void fmt_uint(char *buf, uint64_t v)
{
    char tmp[NUM_BUF];
    size_t k = 0, n = 0;
    do {
        tmp[k++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (k)
        buf[n++] = tmp[--k];
    buf[n] = '\0';
}

static void key_uint(tl_t *tl, const char *key, uint64_t v)
{
    char buf[NUM_BUF];
    fmt_uint(buf, v);
    nnp__jw_key(&tl->w, key);
    nnp__jw_raw(&tl->w, buf);
}

static void key_int(tl_t *tl, const char *key, int64_t v)
{
    char buf[NUM_BUF];
    if (v < 0) {
        buf[0] = '-';
        fmt_uint(buf + 1, (uint64_t)0 - (uint64_t)v);
    } else {
        fmt_uint(buf, (uint64_t)v);
    }
    nnp__jw_key(&tl->w, key);
    nnp__jw_raw(&tl->w, buf);
}

/* A percentage with two decimals: more digits only add bytes to every sample. */
static void key_pct(tl_t *tl, const char *key, double v)
{
    char buf[NUM_BUF];
    snprintf(buf, sizeof(buf), "%.2f", v);
    nnp__jw_key(&tl->w, key);
    nnp__jw_raw(&tl->w, buf);
}

static const char *str(const tl_t *tl, uint32_t id)
{
    return nnp__model_str(tl->m, id);
}

/* Bytes of trace_view.json so far: what reached the file plus what is buffered. */
static uint64_t bytes_written(const tl_t *tl)
{
    off_t pos = lseek(tl->fd, 0, SEEK_CUR);
    return (pos > 0 ? (uint64_t)pos : 0) + tl->w.len;
}

/* ---- the map ---- */

static uint64_t mix(uint64_t a, uint64_t b)
{
    /* splitmix64 finaliser over both keys: cheap and good enough for open addressing. */
    uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static size_t hmap_slot(const hmap_t *h, uint64_t a, uint64_t b)
{
    size_t i = (size_t)mix(a, b) & (h->cap - 1);
    while (h->val[i] != NONE && (h->ka[i] != a || h->kb[i] != b))
        i = (i + 1) & (h->cap - 1);
    return i;
}

static uint32_t hmap_get(const hmap_t *h, uint64_t a, uint64_t b)
{
    if (h->cap == 0)
        return NONE;
    return h->val[hmap_slot(h, a, b)];
}

static void hmap_fini(hmap_t *h)
{
    nnp__free(h->ka);
    nnp__free(h->kb);
    nnp__free(h->val);
    memset(h, 0, sizeof(*h));
}

/* Sets (a, b) -> v (v != NONE), growing at half full. */
static int hmap_set(hmap_t *h, uint64_t a, uint64_t b, uint32_t v)
{
    size_t i;
    if ((h->n + 1) * 2 > h->cap) {
        hmap_t g = {0};
        g.cap = h->cap ? h->cap * 2 : HMAP_INITIAL;
        g.ka = nnp__malloc(g.cap * sizeof(*g.ka));
        g.kb = nnp__malloc(g.cap * sizeof(*g.kb));
        g.val = nnp__malloc(g.cap * sizeof(*g.val));
        if (!g.ka || !g.kb || !g.val) {
            hmap_fini(&g);
            return NNP_ENOMEM;
        }
        memset(g.val, 0xff, g.cap * sizeof(*g.val)); /* every slot NONE */
        for (size_t k = 0; k < h->cap; k++) {
            if (h->val[k] == NONE)
                continue;
            size_t s = hmap_slot(&g, h->ka[k], h->kb[k]);
            g.ka[s] = h->ka[k];
            g.kb[s] = h->kb[k];
            g.val[s] = h->val[k];
            g.n++;
        }
        hmap_fini(h);
        *h = g;
    }
    i = hmap_slot(h, a, b);
    if (h->val[i] == NONE)
        h->n++;
    h->ka[i] = a;
    h->kb[i] = b;
    h->val[i] = v;
    return NNP_OK;
}

/* ---- processes and lanes ---- */

static uint32_t proc_new(tl_t *tl, uint8_t kind, uint32_t pid, uint32_t device_id)
{
    if (tl->n_procs == tl->cap_procs) {
        size_t ncap = tl->cap_procs ? tl->cap_procs * 2 : PROCS_INITIAL;
        proc_t *p = nnp__realloc(tl->procs, ncap * sizeof(*p));
        if (!p) {
            oom(tl);
            return NONE;
        }
        tl->procs = p;
        tl->cap_procs = ncap;
    }
    tl->procs[tl->n_procs] = (proc_t){.pid = pid, .kind = kind, .device_id = device_id};
    return (uint32_t)tl->n_procs++;
}

/* Key tag of "tid taken in this process" entries of the lanes map. */
#define KEY_TID_TAKEN UINT64_MAX

/* The tid for a new lane: `want` when it is a usable id not yet taken in the process
 * (two threads with one OS tid would merge their lanes), else a fresh synthetic tid. */
static uint32_t claim_tid(tl_t *tl, uint32_t proc, uint64_t want)
{
    uint64_t key;
    if (want < SYNTH_TID_BASE) {
        key = (uint64_t)proc << 32 | want;
        if (hmap_get(&tl->lanes, key, KEY_TID_TAKEN) == NONE) {
            if (hmap_set(&tl->lanes, key, KEY_TID_TAKEN, 1) != NNP_OK) {
                oom(tl);
                return NONE;
            }
            return (uint32_t)want;
        }
    }
    return tl->next_tid++;
}

/* A new lane. want_tid: the tid it should have (UINT64_MAX = any synthetic one). */
static uint32_t track_new(tl_t *tl, uint32_t proc, uint8_t kind, uint64_t num, uint32_t name,
                          int64_t sort, uint64_t want_tid, uint32_t level)
{
    track_t *t;
    uint32_t tid = claim_tid(tl, proc, want_tid);
    if (tid == NONE)
        return NONE;
    if (tl->n_tracks == tl->cap_tracks) {
        size_t ncap = tl->cap_tracks ? tl->cap_tracks * 2 : TRACKS_INITIAL;
        track_t *p = nnp__realloc(tl->tracks, ncap * sizeof(*p));
        if (!p) {
            oom(tl);
            return NONE;
        }
        tl->tracks = p;
        tl->cap_tracks = ncap;
    }
    t = &tl->tracks[tl->n_tracks];
    memset(t, 0, sizeof(*t));
    t->proc = proc;
    t->tid = tid;
    t->kind = kind;
    t->num = num;
    t->name = name;
    t->sort = sort;
    t->level = level;
    t->next = NONE;
    t->last_start = INT64_MIN;
    return (uint32_t)tl->n_tracks++;
}

/* Offers [s, e] to one lane: it is accepted when it starts no earlier than the lane's last
 * slice and, after closing the slices that ended by s, it fits inside the innermost open
 * one. Accepted slices therefore form a laminar family (each pair disjoint or nested),
 * whatever order later checks sort them in. Returns 1 accepted, 0 refused, <0 error. */
static int lane_offer(track_t *t, int64_t s, int64_t e)
{
    size_t d = t->depth;
    if (s < t->last_start)
        return 0;
    while (d > 0 && t->ends[d - 1] <= s)
        d--;
    if (d > 0 && e > t->ends[d - 1])
        return 0;
    if (d == t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : STACK_INITIAL;
        int64_t *p = nnp__realloc(t->ends, ncap * sizeof(*p));
        if (!p)
            return NNP_ENOMEM;
        t->ends = p;
        t->cap = ncap;
    }
    t->ends[d] = e;
    t->depth = d + 1;
    t->last_start = s;
    return 1;
}

/* The lane of base's chain that takes [s, e], creating overflow lanes on demand. NONE
 * when all MAX_LANES refuse (the slice is dropped and counted) or on error. */
static uint32_t place(tl_t *tl, uint32_t base, int64_t s, int64_t e)
{
    uint32_t t = base;
    for (uint32_t level = 0; t != NONE; level++) {
        int rc = lane_offer(&tl->tracks[t], s, e);
        if (rc < 0) {
            oom(tl);
            return NONE;
        }
        if (rc == 1)
            return t;
        if (tl->tracks[t].next == NONE) {
            const track_t *b = &tl->tracks[base];
            uint32_t n;
            if (level + 1 >= MAX_LANES) {
                tl->dropped++;
                return NONE;
            }
            n = track_new(tl, b->proc, b->kind, b->num, b->name, b->sort + level + 1, UINT64_MAX,
                          level + 1);
            if (n == NONE)
                return NONE;
            tl->tracks[t].next = n; /* re-index: track_new may have moved the array */
        }
        t = tl->tracks[t].next;
    }
    return NONE;
}

/* Base lane of a host thread (ti: index into the threads table) of one HOST_LANES kind. */
static uint32_t host_base(tl_t *tl, uint32_t ti, uint8_t kind)
{
    size_t slot;
    uint32_t t;
    uint64_t os_tid = 0;
    uint32_t name = 0;
    if (ti >= tl->n_host_threads)
        ti = (uint32_t)tl->n_host_threads; /* the "unknown thread" slot */
    slot = (size_t)ti * HOST_LANES + (size_t)(kind - LANE_OPS);
    if (tl->host_base[slot] != NONE)
        return tl->host_base[slot];
    if (ti < tl->n_host_threads) {
        os_tid = tl->m->threads.tid[ti];
        name = tl->m->threads.name[ti];
    }
    /* Lanes of one thread sort together, ops first; overflow lanes follow their base. */
    t = track_new(tl, tl->host_proc, kind, os_tid, name,
                  ((int64_t)ti * HOST_LANES + (kind - LANE_OPS)) * MAX_LANES,
                  kind == LANE_OPS && ti < tl->n_host_threads ? os_tid : UINT64_MAX, 0);
    tl->host_base[slot] = t;
    return t;
}

static uint32_t device_proc(tl_t *tl, uint32_t device_id)
{
    for (size_t i = 0; i < tl->n_procs; i++)
        if (tl->procs[i].kind == PROC_DEVICE && tl->procs[i].device_id == device_id)
            return (uint32_t)i;
    return proc_new(tl, PROC_DEVICE, SYNTH_PID_BASE + 1 + (uint32_t)tl->n_procs, device_id);
}

static uint32_t stream_base(tl_t *tl, uint32_t device_id, uint32_t stream_id)
{
    uint64_t key = (uint64_t)device_id << 32 | stream_id;
    uint32_t t = hmap_get(&tl->lanes, key, LANE_STREAM), p;
    if (t != NONE)
        return t;
    p = device_proc(tl, device_id);
    if (p == NONE)
        return NONE;
    t = track_new(tl, p, LANE_STREAM, stream_id, 0, (int64_t)stream_id * MAX_LANES, stream_id, 0);
    if (t != NONE && hmap_set(&tl->lanes, key, LANE_STREAM, t) != NNP_OK) {
        oom(tl);
        return NONE;
    }
    return t;
}

static uint32_t group_base(tl_t *tl, uint32_t group)
{
    uint32_t t = hmap_get(&tl->lanes, group, LANE_GROUP);
    if (t != NONE)
        return t;
    /* Groups sort in order of first use; overflow lanes sit right after their group. */
    t = track_new(tl, tl->comm_proc, LANE_GROUP, group, group, (int64_t)tl->n_tracks * MAX_LANES,
                  UINT64_MAX, 0);
    if (t != NONE && hmap_set(&tl->lanes, group, LANE_GROUP, t) != NNP_OK) {
        oom(tl);
        return NONE;
    }
    return t;
}

static void mark_used(tl_t *tl, uint32_t t)
{
    tl->tracks[t].used = true;
    tl->procs[tl->tracks[t].proc].used = true;
}

/* ---- event writing ---- */

/* Opens an event object with the keys every event has. */
static void ev_head(tl_t *tl, const char *name, const char *ph, uint32_t t, int64_t ts_ns)
{
    const track_t *k = &tl->tracks[t];
    mark_used(tl, t);
    nnp__jw_obj_begin(&tl->w);
    key_str(tl, "name", name);
    key_str(tl, "ph", ph);
    key_uint(tl, "pid", tl->procs[k->proc].pid);
    key_uint(tl, "tid", k->tid);
    key_us(tl, "ts", ts_ns);
}

/* A complete ("X") slice; the caller adds cat/args and closes the object. */
static void ev_slice(tl_t *tl, const char *name, uint32_t t, int64_t s, int64_t e)
{
    ev_head(tl, name, "X", t, s);
    key_us(tl, "dur", e - s);
}

/* The last '/'-separated component of a scope name: MindSpore's timeline shows
 * op_name.split('/')[-1] and keeps the full name in args (base_timeline_generator.py). */
static const char *short_name(const char *full)
{
    const char *slash = strrchr(full, '/');
    return slash && slash[1] ? slash + 1 : full;
}

/* timeline_summary counts one op or kernel execution. */
static void count_exec(tl_t *tl, uint32_t name, int64_t dur_ns, bool is_compute)
{
    tl->n_exec++;
    if (is_compute)
        tl->busy_ns += dur_ns;
    if (name < tl->m->n_strs && !tl->seen[name]) {
        const char *s = str(tl, name);
        uint32_t depth = 1;
        tl->seen[name] = 1;
        tl->n_names++;
        for (; *s; s++)
            depth += *s == '/';
        if (depth > tl->max_scope)
            tl->max_scope = depth;
    }
}

/* ---- sources, each written from its cursor up to tl->limit ---- */

static void emit_ops(tl_t *tl, bool emit)
{
    const nnp_ops_t *o = &tl->m->ops;
    bool compute = tl->m->kernels.t.n == 0; /* host ops are the compute of a CPU-only run */
    for (; tl->c_ops < o->t.n && o->start_ns[tl->c_ops] < tl->limit; tl->c_ops++) {
        size_t i = tl->c_ops;
        uint32_t t = tl->op_track[i];
        if (!emit || t == NONE || (tl->c->has_graph && o->graph_id[i] != tl->c->graph_id))
            continue;
        ev_slice(tl, short_name(str(tl, o->name[i])), t, o->start_ns[i], o->end_ns[i]);
        key_str(tl, "cat", "host_op");
        nnp__jw_key(&tl->w, "args");
        nnp__jw_obj_begin(&tl->w);
        key_str(tl, "type", str(tl, o->type[i]));
        key_str(tl, "full_name", str(tl, o->name[i]));
        key_uint(tl, "graph_id", o->graph_id[i]);
        key_uint(tl, "stream_id", o->stream_id[i]);
        if (o->shapes[i])
            key_str(tl, "shapes", str(tl, o->shapes[i]));
        if (o->dtypes[i])
            key_str(tl, "dtypes", str(tl, o->dtypes[i]));
        if (o->corr[i])
            key_uint(tl, "correlation_id", o->corr[i]);
        if (o->flops_matrix && (o->flops_matrix[i] || o->flops_vector[i])) {
            key_uint(tl, "flops_matrix", o->flops_matrix[i]);
            key_uint(tl, "flops_vector", o->flops_vector[i]);
        }
        nnp__jw_obj_end(&tl->w);
        nnp__jw_obj_end(&tl->w);
        count_exec(tl, o->name[i], o->end_ns[i] - o->start_ns[i], compute);
    }
}

/* "event::stage" as host_info names a range (stage omitted when empty). */
static void host_name(const tl_t *tl, size_t i, char *buf, size_t cap)
{
    const nnp_host_rows_t *h = &tl->m->host;
    const char *ev = str(tl, h->event[i]), *stage = str(tl, h->stage[i]);
    if (*stage)
        snprintf(buf, cap, "%s::%s", ev, stage);
    else
        snprintf(buf, cap, "%s", ev);
}

static bool host_row_wanted(const tl_t *tl, size_t i)
{
    return tl->c->is_developer || tl->m->host.level[i] != HOST_LEVEL_DEVELOPER;
}

static void host_args(tl_t *tl, size_t i)
{
    const nnp_host_rows_t *h = &tl->m->host;
    key_str(tl, "cat", str(tl, h->module[i]));
    nnp__jw_key(&tl->w, "args");
    nnp__jw_obj_begin(&tl->w);
    key_uint(tl, "level", h->level[i]);
    if (h->custom_info[i])
        key_str(tl, "custom_info", str(tl, h->custom_info[i]));
    if (h->memory_bytes[i])
        key_uint(tl, "memory_bytes", h->memory_bytes[i]);
    nnp__jw_obj_end(&tl->w);
}

static void emit_host(tl_t *tl, bool emit)
{
    const nnp_host_rows_t *h = &tl->m->host;
    char name[NAME_BUF];
    for (; tl->c_host < h->t.n && h->ts_ns[tl->c_host] < tl->limit; tl->c_host++) {
        size_t i = tl->c_host;
        uint32_t t;
        if (!emit || !host_row_wanted(tl, i) || h->kind[i] == HOST_END)
            continue; /* ends are written with their begin */
        host_name(tl, i, name, sizeof(name));
        if (h->kind[i] == HOST_INSTANT) {
            t = host_base(tl, h->thread[i], LANE_RANGES);
            if (t == NONE)
                return;
            ev_head(tl, name, "i", t, h->ts_ns[i]);
            key_str(tl, "s", "t");
        } else if (tl->host_end[i] != NONE) {
            int64_t e = h->ts_ns[tl->host_end[i]];
            t = host_base(tl, h->thread[i], LANE_RANGES);
            if (t == NONE || (t = place(tl, t, h->ts_ns[i], e)) == NONE)
                continue;
            ev_slice(tl, name, t, h->ts_ns[i], e);
        } else {
            /* A begin without an end: a "B" event, open to the end of the trace. All such
             * events of a thread share their own lane, where they nest by construction. */
            t = host_base(tl, h->thread[i], LANE_OPEN);
            if (t == NONE)
                return;
            ev_head(tl, name, "B", t, h->ts_ns[i]);
        }
        host_args(tl, i);
        nnp__jw_obj_end(&tl->w);
    }
}

static void emit_markers(tl_t *tl, bool emit)
{
    const nnp_markers_t *mk = &tl->m->markers;
    for (; tl->c_markers < mk->t.n && mk->start_ns[tl->c_markers] < tl->limit; tl->c_markers++) {
        size_t i = tl->c_markers;
        int64_t s = mk->start_ns[i], e = mk->end_ns[i];
        const char *msg = str(tl, mk->message[i]);
        uint32_t t;
        if (!emit)
            continue;
        if (e == NNP_OPEN_END) {
            if ((t = host_base(tl, mk->thread[i], LANE_OPEN)) == NONE)
                return;
            ev_head(tl, msg, "B", t, s);
        } else if (e == s) {
            if ((t = host_base(tl, mk->thread[i], LANE_MARKERS)) == NONE)
                return;
            ev_head(tl, msg, "i", t, s);
            key_str(tl, "s", "t");
        } else {
            if (e < s || (t = host_base(tl, mk->thread[i], LANE_MARKERS)) == NONE ||
                (t = place(tl, t, s, e)) == NONE)
                continue;
            ev_slice(tl, msg, t, s, e);
        }
        key_str(tl, "cat", "marker");
        nnp__jw_obj_end(&tl->w);
    }
}

static int cmp_corr(const void *a, const void *b)
{
    const corr_ent_t *x = a, *y = b;
    if (x->corr != y->corr)
        return x->corr < y->corr ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* The op row that launched correlation id corr (the first one if several), or NONE. */
static uint32_t corr_op(const tl_t *tl, uint64_t corr)
{
    size_t a = 0, b = tl->n_corr;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (tl->corr[mid].corr < corr)
            a = mid + 1;
        else
            b = mid;
    }
    return a < tl->n_corr && tl->corr[a].corr == corr ? tl->corr[a].row : NONE;
}

/* A flow arrow from the launching op to kernel row k (Chrome trace format: "s" binds to
 * the slice enclosing its ts, "f" with bp "e" to the enclosing slice at the kernel's
 * start). Each kernel has its own flow id (row + 1), so every "s" has exactly one "f".
 * Written only when the op is in the written part of the timeline. */
static void emit_flow(tl_t *tl, size_t k, uint32_t kt)
{
    const nnp_ops_t *o = &tl->m->ops;
    uint32_t r = corr_op(tl, tl->m->kernels.corr[k]);
    if (r == NONE || tl->op_track[r] == NONE || o->start_ns[r] < tl->window_lo ||
        o->start_ns[r] >= tl->limit)
        return;
    ev_head(tl, "launch", "s", tl->op_track[r], o->start_ns[r]);
    key_str(tl, "cat", "flow");
    key_uint(tl, "id", (uint64_t)k + 1);
    nnp__jw_obj_end(&tl->w);
    ev_head(tl, "launch", "f", kt, tl->m->kernels.start_ns[k]);
    key_str(tl, "cat", "flow");
    key_uint(tl, "id", (uint64_t)k + 1);
    key_str(tl, "bp", "e");
    nnp__jw_obj_end(&tl->w);
}

static void emit_kernels(tl_t *tl, bool emit)
{
    const nnp_kernels_t *k = &tl->m->kernels;
    for (; tl->c_kernels < k->t.n && k->start_ns[tl->c_kernels] < tl->limit; tl->c_kernels++) {
        size_t i = tl->c_kernels;
        const char *type = str(tl, k->type[i]);
        uint32_t t;
        if (!emit || k->end_ns[i] < k->start_ns[i])
            continue;
        t = stream_base(tl, k->device_id[i], k->stream_id[i]);
        if (t == NONE || (t = place(tl, t, k->start_ns[i], k->end_ns[i])) == NONE)
            continue;
        ev_slice(tl, str(tl, k->name[i]), t, k->start_ns[i], k->end_ns[i]);
        key_str(tl, "cat", *type ? type : "kernel");
        nnp__jw_key(&tl->w, "args");
        nnp__jw_obj_begin(&tl->w);
        key_str(tl, "type", type);
        key_uint(tl, "device_id", k->device_id[i]);
        key_uint(tl, "stream_id", k->stream_id[i]);
        if (k->corr[i])
            key_uint(tl, "correlation_id", k->corr[i]);
        nnp__jw_obj_end(&tl->w);
        nnp__jw_obj_end(&tl->w);
        count_exec(tl, k->name[i], k->end_ns[i] - k->start_ns[i], true);
        if (k->corr[i] && tl->n_corr > 0)
            emit_flow(tl, i, t);
    }
}

static void emit_comms(tl_t *tl, bool emit)
{
    const nnp_comms_t *cm = &tl->m->comms;
    for (; tl->c_comms < cm->t.n && cm->start_ns[tl->c_comms] < tl->limit; tl->c_comms++) {
        size_t i = tl->c_comms;
        const char *kind = nnp_comm_kind_name((nnp_comm_kind_t)cm->kind[i]);
        const char *name = str(tl, cm->name[i]);
        uint32_t t;
        if (!emit || cm->end_ns[i] < cm->start_ns[i])
            continue;
        t = group_base(tl, cm->group[i]);
        if (t == NONE || (t = place(tl, t, cm->start_ns[i], cm->end_ns[i])) == NONE)
            continue;
        ev_slice(tl, *name ? name : kind, t, cm->start_ns[i], cm->end_ns[i]);
        key_str(tl, "cat", "communication");
        nnp__jw_key(&tl->w, "args");
        nnp__jw_obj_begin(&tl->w);
        key_str(tl, "kind", kind);
        key_uint(tl, "bytes", cm->bytes[i]);
        key_int(tl, "peer", cm->peer[i]);
        key_str(tl, "group", *str(tl, cm->group[i]) ? str(tl, cm->group[i]) : "default");
        if (cm->count[i])
            key_uint(tl, "count", cm->count[i]);
        if (cm->datatype[i])
            key_str(tl, "datatype", str(tl, cm->datatype[i]));
        if (cm->has[i] & NNP_COMM_HAS_TAG)
            key_int(tl, "tag", cm->tag[i]);
        if (cm->has[i] & NNP_COMM_HAS_WAIT)
            key_uint(tl, "wait_ns", cm->wait_ns[i]);
        nnp__jw_obj_end(&tl->w);
        nnp__jw_obj_end(&tl->w);
    }
}

static const char *const ov_names[OV_TRACKS] = {"Computing", "Communication",
                                                "Communication(Not Overlapped)", "Free"};

static void emit_overlap(tl_t *tl, bool emit)
{
    const nnp_interval_list_t *lists[OV_TRACKS];
    if (!tl->ov)
        return;
    lists[0] = &tl->ov->computing;
    lists[1] = &tl->ov->communication;
    lists[2] = &tl->ov->comm_not_overlapped;
    lists[3] = &tl->ov->free;
    for (int k = 0; k < OV_TRACKS; k++) {
        const nnp_interval_list_t *l = lists[k];
        for (; tl->c_ov[k] < l->n && l->v[tl->c_ov[k]].start_ns < tl->limit; tl->c_ov[k]++) {
            const nnp_interval_t *iv = &l->v[tl->c_ov[k]];
            uint32_t t;
            /* Merged lists are disjoint: place() never needs an overflow lane here, but it
             * still guards the invariant. */
            if (!emit || (t = place(tl, tl->ov_tracks[k], iv->start_ns, iv->end_ns)) == NONE)
                continue;
            ev_slice(tl, ov_names[k], t, iv->start_ns, iv->end_ns);
            nnp__jw_obj_end(&tl->w);
        }
    }
}

/* A counter sample ("C"): Chrome draws one track per (pid, name), a series per arg. */
static void counter_head(tl_t *tl, const char *name, int64_t ts)
{
    tl->procs[tl->host_proc].used = true;
    nnp__jw_obj_begin(&tl->w);
    key_str(tl, "name", name);
    key_str(tl, "ph", "C");
    key_uint(tl, "pid", tl->procs[tl->host_proc].pid);
    key_us(tl, "ts", ts);
    nnp__jw_key(&tl->w, "args");
    nnp__jw_obj_begin(&tl->w);
}

static void counter_end(tl_t *tl)
{
    nnp__jw_obj_end(&tl->w);
    nnp__jw_obj_end(&tl->w);
}

static void emit_series(tl_t *tl, const nnp_series_t *s, size_t *cur, const char *fallback,
                        const char *arg, bool emit)
{
    for (; *cur < s->t.n && s->ts_ns[*cur] < tl->limit; (*cur)++) {
        size_t i = *cur;
        if (!emit)
            continue;
        counter_head(tl, s->name[i] ? str(tl, s->name[i]) : fallback, s->ts_ns[i]);
        nnp__jw_key(&tl->w, arg);
        nnp__jw_double(&tl->w, s->value[i]);
        counter_end(tl);
    }
}

static void emit_queues(tl_t *tl, bool emit)
{
    const nnp_queue_samples_t *q = &tl->m->queues;
    char name[NAME_BUF];
    for (; tl->c_queues < q->t.n && q->ts_ns[tl->c_queues] < tl->limit; tl->c_queues++) {
        size_t i = tl->c_queues;
        if (!emit)
            continue;
        if (q->op_id[i] < 0) /* model.h: op_id -1 is the device queue */
            snprintf(name, sizeof(name), "device queue");
        else
            snprintf(name, sizeof(name), "queue op %lld", (long long)q->op_id[i]);
        counter_head(tl, name, q->ts_ns[i]);
        key_uint(tl, "size", q->size[i]);
        key_uint(tl, "capacity", q->capacity[i]);
        counter_end(tl);
    }
}

/* CPU utilisation from consecutive cumulative /proc/stat samples: each share is its delta
 * over the delta of all jiffies (proc(5)), written at the later sample's time. */
static void emit_cpu(tl_t *tl, bool emit)
{
    const nnp_cpu_samples_t *c = &tl->m->sys_cpu;
    for (; tl->c_cpu < c->t.n && c->ts_ns[tl->c_cpu] < tl->limit; tl->c_cpu++) {
        size_t i = tl->c_cpu;
        uint64_t total;
        if (!emit || i == 0)
            continue;
        total = (c->user[i] + c->nice[i] + c->sys[i] + c->idle[i] + c->iowait[i] + c->irq[i] +
                 c->steal[i]) -
                (c->user[i - 1] + c->nice[i - 1] + c->sys[i - 1] + c->idle[i - 1] +
                 c->iowait[i - 1] + c->irq[i - 1] + c->steal[i - 1]);
        if (total == 0 || (int64_t)total < 0)
            continue; /* no time passed, or a counter went backwards (a reset) */
        counter_head(tl, "CPU utilisation (%)", c->ts_ns[i]);
        key_pct(tl, "user", PERCENT * (double)(c->user[i] - c->user[i - 1]) / (double)total);
        key_pct(tl, "sys", PERCENT * (double)(c->sys[i] - c->sys[i - 1]) / (double)total);
        key_pct(tl, "iowait", PERCENT * (double)(c->iowait[i] - c->iowait[i - 1]) / (double)total);
        counter_end(tl);
    }
}

/* Writes (emit) or skips every source's rows that start before limit. */
static void emit_until(tl_t *tl, int64_t limit, bool emit)
{
    /* kind=summary: only the Step Trace (emit_step) and Overlap Analysis processes; the
     * other sources still advance their cursors so steps stay aligned. */
    bool detail = emit && !tl->c->timeline_summary;
    tl->limit = limit;
    emit_ops(tl, detail);
    emit_host(tl, detail);
    emit_markers(tl, detail);
    emit_kernels(tl, detail);
    emit_comms(tl, detail);
    emit_overlap(tl, emit);
    emit_series(tl, &tl->m->counters, &tl->c_counters, "counter", "value", detail);
    emit_series(tl, &tl->m->host_mem, &tl->c_host_mem, "Host memory", "bytes", detail);
    emit_series(tl, &tl->m->proc_rss, &tl->c_rss, "Process RSS", "bytes", detail);
    emit_queues(tl, detail);
    emit_cpu(tl, detail);
}

/* True when some source still has rows (after the last step, before the "post" part). */
static bool rows_left(const tl_t *tl)
{
    const nnp_model_t *m = tl->m;
    bool ov_left = false;
    if (tl->ov)
        ov_left = tl->c_ov[0] < tl->ov->computing.n || tl->c_ov[1] < tl->ov->communication.n ||
                  tl->c_ov[2] < tl->ov->comm_not_overlapped.n || tl->c_ov[3] < tl->ov->free.n;
    return ov_left || tl->c_ops < m->ops.t.n || tl->c_host < m->host.t.n ||
           tl->c_markers < m->markers.t.n || tl->c_kernels < m->kernels.t.n ||
           tl->c_comms < m->comms.t.n || tl->c_counters < m->counters.t.n ||
           tl->c_host_mem < m->host_mem.t.n || tl->c_rss < m->proc_rss.t.n ||
           tl->c_queues < m->queues.t.n || tl->c_cpu < m->sys_cpu.t.n;
}

/* The slices of one step on the Step Trace process: the step over [start_point, end] and,
 * when known, fp_and_bp [fp, bp] and tail [bp, end] inside it. place() sends a phase that
 * would not nest (broken fp/bp data) to an overflow lane instead. */
static void emit_step(tl_t *tl, const nnp_step_row_t *r)
{
    char name[NAME_BUF];
    uint32_t t;
    if (r->end_ns < r->start_point_ns || (tl->c->has_graph && r->graph_id != tl->c->graph_id))
        return;
    snprintf(name, sizeof(name), "Step %llu", (unsigned long long)r->step_id);
    if ((t = place(tl, tl->steps_track, r->start_point_ns, r->end_ns)) != NONE) {
        ev_slice(tl, name, t, r->start_point_ns, r->end_ns);
        key_str(tl, "cat", "step");
        nnp__jw_key(&tl->w, "args");
        nnp__jw_obj_begin(&tl->w);
        key_uint(tl, "step_id", r->step_id);
        key_uint(tl, "graph_id", r->graph_id);
        nnp__jw_obj_end(&tl->w);
        nnp__jw_obj_end(&tl->w);
    }
    if (r->fp_ns >= 0 && r->bp_ns >= r->fp_ns &&
        (t = place(tl, tl->steps_track, r->fp_ns, r->bp_ns)) != NONE) {
        ev_slice(tl, "fp_and_bp", t, r->fp_ns, r->bp_ns);
        key_str(tl, "cat", "step");
        nnp__jw_obj_end(&tl->w);
    }
    if (r->bp_ns >= 0 && r->end_ns >= r->bp_ns &&
        (t = place(tl, tl->steps_track, r->bp_ns, r->end_ns)) != NONE) {
        ev_slice(tl, "tail", t, r->bp_ns, r->end_ns);
        key_str(tl, "cat", "step");
        nnp__jw_obj_end(&tl->w);
    }
}

/* ---- set-up: lanes of ops, host range matching, the correlation index ---- */

static int prepare_ops(tl_t *tl)
{
    const nnp_ops_t *o = &tl->m->ops;
    size_t n = 0;
    if (o->t.n == 0)
        return NNP_OK;
    tl->op_track = nnp__malloc(o->t.n * sizeof(*tl->op_track));
    if (!tl->op_track)
        return oom(tl);
    /* Ops are placed before streaming so a kernel's flow can name its op's lane. */
    for (size_t i = 0; i < o->t.n; i++) {
        uint32_t t = NONE;
        if (o->end_ns[i] >= o->start_ns[i]) {
            t = host_base(tl, o->thread[i], LANE_OPS);
            if (t != NONE)
                t = place(tl, t, o->start_ns[i], o->end_ns[i]);
        }
        if (tl->err != NNP_OK)
            return tl->err;
        tl->op_track[i] = t;
        n += o->corr[i] != 0;
    }
    if (n == 0 || tl->m->kernels.t.n == 0)
        return NNP_OK;
    tl->corr = nnp__malloc(n * sizeof(*tl->corr));
    if (!tl->corr)
        return oom(tl);
    for (size_t i = 0; i < o->t.n; i++)
        if (o->corr[i])
            tl->corr[tl->n_corr++] = (corr_ent_t){o->corr[i], (uint32_t)i};
    qsort(tl->corr, tl->n_corr, sizeof(*tl->corr), cmp_corr);
    return NNP_OK;
}

/* Matches host begin/end rows per (thread, event, stage) with a stack, as host_info does:
 * an end closes the most recent open begin of the same key. */
static int prepare_host(tl_t *tl)
{
    const nnp_host_rows_t *h = &tl->m->host;
    hmap_t tops = {0};
    uint32_t *prev;
    int rc = NNP_OK;
    if (h->t.n == 0)
        return NNP_OK;
    tl->host_end = nnp__malloc(h->t.n * sizeof(*tl->host_end));
    prev = nnp__malloc(h->t.n * sizeof(*prev));
    if (!tl->host_end || !prev) {
        nnp__free(prev);
        return oom(tl);
    }
    memset(tl->host_end, 0xff, h->t.n * sizeof(*tl->host_end));
    for (size_t i = 0; i < h->t.n && rc == NNP_OK; i++) {
        uint64_t a = (uint64_t)h->thread[i] << 32 | h->event[i], b = h->stage[i];
        uint32_t top;
        if (!host_row_wanted(tl, i) || h->kind[i] == HOST_INSTANT)
            continue;
        top = hmap_get(&tops, a, b);
        if (top >= h->t.n)
            top = NONE; /* no entry, or the "emptied stack" sentinel below */
        if (h->kind[i] == HOST_BEGIN) {
            prev[i] = top;
            rc = hmap_set(&tops, a, b, (uint32_t)i);
        } else if (top != NONE) {
            tl->host_end[top] = (uint32_t)i;
            /* An emptied stack keeps a NONE-valued entry: hmap_set refuses NONE, so the
             * slot stores a sentinel row past the table instead. */
            rc = hmap_set(&tops, a, b, prev[top] == NONE ? (uint32_t)h->t.n : prev[top]);
        }
    }
    hmap_fini(&tops);
    nnp__free(prev);
    if (rc != NNP_OK)
        return oom(tl);
    return NNP_OK;
}

static int tl_init(tl_t *tl, const nnp_actx_t *c, const nnp_step_trace_t *st,
                   const nnp_overlap_t *ov)
{
    const nnp_model_t *m = c->m;
    int64_t pid = m->info.pid;
    size_t slots;
    memset(tl, 0, sizeof(*tl));
    tl->c = c;
    tl->m = m;
    tl->st = st;
    tl->ov = ov;
    tl->fd = -1;
    tl->next_tid = SYNTH_TID_BASE;
    tl->window_lo = INT64_MIN;
    /* Host = the run's pid; the other processes are synthetic (SYNTH_PID_BASE). */
    tl->host_proc = proc_new(tl, PROC_HOST,
                             pid >= 0 && pid < SYNTH_PID_BASE ? (uint32_t)pid : SYNTH_PID_BASE, 0);
    tl->steps_proc = proc_new(tl, PROC_STEPS, SYNTH_PID_BASE + 1, 0);
    tl->overlap_proc = proc_new(tl, PROC_OVERLAP, SYNTH_PID_BASE + 2, 0);
    tl->comm_proc = proc_new(tl, PROC_COMM, SYNTH_PID_BASE + 3, 0);
    if (tl->err != NNP_OK)
        return tl->err;
    tl->procs[tl->host_proc].used = true; /* counters live there, even with no thread */
    tl->steps_track = track_new(tl, tl->steps_proc, LANE_STEPS, 0, 0, 0, 0, 0);
    for (int k = 0; k < OV_TRACKS; k++)
        tl->ov_tracks[k] = track_new(tl, tl->overlap_proc, LANE_OVERLAP, (uint64_t)k, 0,
                                     (int64_t)k * MAX_LANES, (uint64_t)k, 0);
    if (tl->err != NNP_OK)
        return tl->err;
    if (ov) /* CANN writes the four threads even when a list is empty */
        for (int k = 0; k < OV_TRACKS; k++)
            mark_used(tl, tl->ov_tracks[k]);

    tl->n_host_threads = m->threads.t.n;
    slots = (tl->n_host_threads + 1) * HOST_LANES;
    tl->host_base = nnp__malloc(slots * sizeof(*tl->host_base));
    tl->seen = nnp__calloc(m->n_strs ? m->n_strs : 1, 1);
    if (!tl->host_base || !tl->seen)
        return oom(tl);
    memset(tl->host_base, 0xff, slots * sizeof(*tl->host_base));
    if (prepare_ops(tl) != NNP_OK || prepare_host(tl) != NNP_OK)
        return tl->err;
    return NNP_OK;
}

static void tl_fini(tl_t *tl)
{
    for (size_t i = 0; i < tl->n_tracks; i++)
        nnp__free(tl->tracks[i].ends);
    nnp__free(tl->tracks);
    nnp__free(tl->procs);
    hmap_fini(&tl->lanes);
    nnp__free(tl->host_base);
    nnp__free(tl->op_track);
    nnp__free(tl->host_end);
    nnp__free(tl->corr);
    nnp__free(tl->seen);
}

/* ---- metadata ---- */

static void track_name(const tl_t *tl, const track_t *t, char *buf, size_t cap)
{
    char base[NAME_BUF - NUM_BUF]; /* room left for the " (overlap N)" suffix */
    const char *thread = t->name ? str(tl, t->name) : NULL;
    char unnamed[NUM_BUF + 8];
    snprintf(unnamed, sizeof(unnamed), "Thread %llu", (unsigned long long)t->num);
    if (!thread || !*thread)
        thread = unnamed;
    switch (t->kind) {
    case LANE_STEPS:
        snprintf(base, sizeof(base), "Steps");
        break;
    case LANE_OVERLAP:
        snprintf(base, sizeof(base), "%s", ov_names[t->num % OV_TRACKS]);
        break;
    case LANE_OPS:
        snprintf(base, sizeof(base), "%s", thread);
        break;
    case LANE_RANGES:
        snprintf(base, sizeof(base), "%s host ranges", thread);
        break;
    case LANE_MARKERS:
        snprintf(base, sizeof(base), "%s markers", thread);
        break;
    case LANE_OPEN:
        snprintf(base, sizeof(base), "%s unfinished ranges", thread);
        break;
    case LANE_STREAM:
        snprintf(base, sizeof(base), "Stream %llu", (unsigned long long)t->num);
        break;
    default: /* LANE_GROUP */
        snprintf(base, sizeof(base), "%s", t->name ? str(tl, t->name) : "default");
        break;
    }
    if (t->level == 0)
        snprintf(buf, cap, "%s", base);
    else if (t->level == 1)
        snprintf(buf, cap, "%s (overlap)", base);
    else
        snprintf(buf, cap, "%s (overlap %u)", base, t->level);
}

static void meta(tl_t *tl, const char *what, uint32_t pid, const uint32_t *tid, const char *key,
                 const char *sval, int64_t ival)
{
    nnp__jw_obj_begin(&tl->w);
    key_str(tl, "name", what);
    key_str(tl, "ph", "M");
    key_uint(tl, "pid", pid);
    if (tid)
        key_uint(tl, "tid", *tid);
    nnp__jw_key(&tl->w, "args");
    nnp__jw_obj_begin(&tl->w);
    if (sval)
        key_str(tl, key, sval);
    else
        key_int(tl, key, ival);
    nnp__jw_obj_end(&tl->w);
    nnp__jw_obj_end(&tl->w);
}

/* process_name / process_sort_index for every process with events, thread_name /
 * thread_sort_index for every lane with events. Order: Step Trace, Host, devices,
 * Communication, Overlap Analysis (CANN's order of msprof_*.json processes). */
static void write_metadata(tl_t *tl)
{
    char name[NAME_BUF];
    int64_t n_dev = 0;
    for (size_t i = 0; i < tl->n_procs; i++)
        n_dev += tl->procs[i].kind == PROC_DEVICE;
    for (size_t i = 0, dev = 0; i < tl->n_procs; i++) {
        const proc_t *p = &tl->procs[i];
        int64_t sort = 0;
        if (!p->used)
            continue;
        switch (p->kind) {
        case PROC_STEPS:
            snprintf(name, sizeof(name), "Step Trace");
            sort = 0;
            break;
        case PROC_HOST:
            snprintf(name, sizeof(name), "Host");
            sort = 1;
            break;
        case PROC_DEVICE:
            snprintf(name, sizeof(name), "Device %u", p->device_id);
            sort = 2 + (int64_t)dev++;
            break;
        case PROC_COMM:
            snprintf(name, sizeof(name), "Communication");
            sort = 2 + n_dev;
            break;
        default:
            snprintf(name, sizeof(name), "Overlap Analysis");
            sort = 3 + n_dev;
            break;
        }
        meta(tl, "process_name", p->pid, NULL, "name", name, 0);
        meta(tl, "process_sort_index", p->pid, NULL, "sort_index", NULL, sort);
    }
    for (size_t i = 0; i < tl->n_tracks; i++) {
        const track_t *t = &tl->tracks[i];
        uint32_t pid = tl->procs[t->proc].pid;
        if (!t->used)
            continue;
        track_name(tl, t, name, sizeof(name));
        meta(tl, "thread_name", pid, &t->tid, "name", name, 0);
        meta(tl, "thread_sort_index", pid, &t->tid, "sort_index", NULL, t->sort);
    }
}

/* The visible end of a truncated timeline: a global instant on the Step Trace process. */
static void write_truncation(tl_t *tl, const nnp_step_row_t *last, size_t omitted)
{
    char msg[NAME_BUF];
    double mb = (double)tl->c->timeline_limit_bytes / BYTES_PER_MB;
    /* omitted == 0: the cut falls after the last step, before events recorded later. */
    snprintf(msg, sizeof(msg), "nnprof: timeline truncated at step %llu (timeline_limit %g MB); %s",
             (unsigned long long)last->step_id, mb,
             omitted ? "later steps omitted" : "events after the last step omitted");
    NNP_LOG_W("%s (%zu steps omitted)", msg, omitted);
    ev_head(tl, msg, "i", tl->steps_track, last->end_ns);
    key_str(tl, "s", "g");
    key_str(tl, "cat", "nnprof");
    nnp__jw_key(&tl->w, "args");
    nnp__jw_obj_begin(&tl->w);
    key_uint(tl, "last_step", last->step_id);
    key_uint(tl, "omitted_steps", omitted);
    key_uint(tl, "timeline_limit_bytes", tl->c->timeline_limit_bytes);
    nnp__jw_obj_end(&tl->w);
    nnp__jw_obj_end(&tl->w);
}

/* Events in step order: before the first step, each step (its slices, then every event
 * starting inside it), after the last step. With --steps only the selected steps are
 * written. The limit is checked at each step boundary, so a step is never cut. */
static void write_events(tl_t *tl)
{
    const nnp_step_trace_t *st = tl->st;
    size_t n = st ? st->n : 0;
    uint64_t limit = tl->c->timeline_limit_bytes;
    int64_t bound;
    if (n == 0) {
        if (!tl->c->has_steps) /* --steps that matched nothing: nothing to write */
            emit_until(tl, INT64_MAX, true);
        if (limit && bytes_written(tl) > limit)
            NNP_LOG_W("timeline is over timeline_limit (%g MB) but the run has no steps to "
                      "cut at: written in full",
                      (double)limit / BYTES_PER_MB);
        return;
    }
    bound = st->rows[0].start_point_ns;
    if (tl->c->has_steps)
        tl->window_lo = bound;
    emit_until(tl, bound, !tl->c->has_steps);
    for (size_t k = 0; k < n; k++) {
        const nnp_step_row_t *r = &st->rows[k];
        /* Bucket k ends where step k+1 starts (its start_point, kept monotonic). */
        int64_t next = k + 1 < n ? st->rows[k + 1].start_point_ns : r->end_ns;
        bool more;
        if (next < bound)
            next = bound;
        bound = next;
        emit_step(tl, r);
        emit_until(tl, bound, true);
        if (!limit || bytes_written(tl) <= limit)
            continue;
        more = k + 1 < n || (!tl->c->has_steps && rows_left(tl));
        if (more) {
            write_truncation(tl, r, n - 1 - k);
            return;
        }
    }
    if (!tl->c->has_steps)
        emit_until(tl, INT64_MAX, true);
}

/* ---- timeline_summary_{rank}.json ---- */

static int write_summary(tl_t *tl)
{
    char name[TL_SUMMARY_NAME_BUF], num[NUM_BUF];
    nnp_outfile_t f;
    nnp_jw_t w;
    uint64_t streams = 0;
    bool by_stream = tl->m->kernels.t.n > 0;
    int rc;
    /* Streams: device streams with kernels; a CPU-only run counts its threads with ops. */
    for (size_t i = 0; i < tl->n_tracks; i++) {
        const track_t *t = &tl->tracks[i];
        streams += t->used && t->level == 0 && t->kind == (by_stream ? LANE_STREAM : LANE_OPS);
    }
    snprintf(name, sizeof(name), TL_SUMMARY_FMT, tl->c->rank);
    rc = nnp__out_open(&f, tl->c->out_dir, name);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__jw_init(&w, f.fd, tl->c->pretty, 0);
    if (rc == NNP_OK) {
        nnp__jw_obj_begin(&w);
        nnp__jw_key(&w, "total_time");
        fmt_fixed(num, tl->busy_ns, NS_PER_MS, MS_DECIMALS);
        nnp__jw_raw(&w, num);
        nnp__jw_key(&w, "num_of_streams");
        nnp__jw_uint(&w, streams);
        nnp__jw_key(&w, "num_of_ops");
        nnp__jw_uint(&w, tl->n_names);
        nnp__jw_key(&w, "op_exe_times");
        nnp__jw_uint(&w, tl->n_exec);
        nnp__jw_key(&w, "max_scope_name_num");
        nnp__jw_uint(&w, tl->max_scope);
        nnp__jw_obj_end(&w);
        nnp__jw_line_end(&w);
        rc = nnp__jw_flush(&w);
    }
    nnp__jw_fini(&w);
    return nnp__out_commit(&f, rc);
}

int nnp__timeline_write(const nnp_actx_t *c, const nnp_step_trace_t *st, const nnp_overlap_t *ov)
{
    nnp_outfile_t f;
    tl_t tl;
    int rc;
    if (!c->rank_dir || !c->out_dir)
        return nnp__fail(NNP_EINVAL, "timeline: no output directory");
    rc = tl_init(&tl, c, st, ov);
    if (rc != NNP_OK)
        goto out;
    rc = nnp__out_open(&f, c->rank_dir, TL_FILE);
    if (rc != NNP_OK)
        goto out;
    tl.fd = f.fd;
    rc = nnp__jw_init(&tl.w, f.fd, c->pretty, 0);
    if (rc == NNP_OK) {
        nnp__jw_arr_begin(&tl.w);
        write_events(&tl);
        write_metadata(&tl);
        nnp__jw_arr_end(&tl.w);
        nnp__jw_line_end(&tl.w);
        rc = tl.err != NNP_OK ? tl.err : nnp__jw_flush(&tl.w);
    }
    nnp__jw_fini(&tl.w);
    rc = nnp__out_commit(&f, rc);
    if (rc == NNP_OK && tl.dropped > 0)
        NNP_LOG_W("timeline: %llu slices dropped: more than %d overlapping lanes on one thread",
                  (unsigned long long)tl.dropped, MAX_LANES);
    if (rc == NNP_OK)
        rc = write_summary(&tl);
out:
    tl_fini(&tl);
    return rc;
}
