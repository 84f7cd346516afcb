/* memory.c - tensor memory analysis (profile_memory): pairs every free with the live
 * allocation at its address in one pass over the time-sorted mem table, and writes
 * memory_record/operator_memory (msprof's columns) and memory_usage_summary/details
 * (MindSpore 1.x names, written by memory_json.c). Called by the analysis driver after
 * the step trace. Memory stays O(live tensors) plus fixed-size sampling buffers. Rules:
 * docs/OUTPUTS.md, "Memory". */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "analyse/memory_internal.h"
#include "util/csv_writer.h"

/* Times are µs with 3 decimals from integer ns, as every other nnprof output. */
#define NS_PER_US   1000
#define US_DECIMALS 3
/* CANN's (KB) columns count 1024-byte units (formats.md 1.6); we print 3 decimals,
 * rounded half up from the integer byte count. */
#define BYTES_PER_KB 1024u
#define KB_MILLI     1000u
/* Each bucket gives its minimum and maximum, plus the first and last event: 2 x 999 + 2. */
#define N_BUCKETS ((MAX_POINTS - 2) / 2)
/* Live tensors listed at the peak: a chart legend cannot show more; the rest are summed. */
#define BREAKDOWN_MAX 1000
/* First size of the live-tensor hash (a power of two); it doubles at half full. */
#define LIVE_INITIAL_CAP 64
/* msprof's Component and Device columns. We have one allocator view per process, so the
 * component is the application; tensors are host (CPU) memory. */
#define COMPONENT     "APP"
#define DEVICE_PREFIX "CPU:"
#define NO_SLOT       SIZE_MAX

/* ---- live tensors: address -> allocation row, open addressing ---- */

/* One live allocation. row is its mem-table row + 1, so 0 marks an empty slot. */
typedef struct live {
    uint64_t address;
    uint64_t total_bytes; /* running total right after the allocation */
    uint32_t row;
    uint32_t snap; /* peak breakdown slot + 1, 0 = not listed */
} live_t;

typedef struct live_map {
    live_t *v;
    size_t cap, n;
} live_map_t;

/* Addresses are aligned, so their low bits carry little: multiply (Fibonacci hashing) and
 * fold the high half down before masking. */
static size_t live_home(const live_map_t *h, uint64_t address)
{
    uint64_t x = address * 0x9E3779B97F4A7C15ull;
    return (size_t)(x ^ (x >> 32)) & (h->cap - 1);
}

static int live_grow(live_map_t *h)
{
    size_t cap = h->cap ? h->cap * 2 : LIVE_INITIAL_CAP;
    live_map_t g = {nnp__calloc(cap, sizeof(live_t)), cap, h->n};
    if (!g.v)
        return nnp__fail(NNP_ENOMEM, "out of memory in memory analysis");
    for (size_t i = 0; i < h->cap; i++) {
        size_t j;
        if (!h->v[i].row)
            continue;
        for (j = live_home(&g, h->v[i].address); g.v[j].row; j = (j + 1) & (cap - 1))
            ;
        g.v[j] = h->v[i];
    }
    nnp__free(h->v);
    *h = g;
    return NNP_OK;
}

/* Adds an allocation. An address may be live twice (its free was lost, e.g. dropped
 * events): both entries stay, and a free releases the most recent one (live_find). */
static int live_put(live_map_t *h, uint64_t address, size_t row, uint64_t total)
{
    size_t j;
    if ((h->n + 1) * 2 > h->cap) {
        int rc = live_grow(h);
        if (rc != NNP_OK)
            return rc;
    }
    for (j = live_home(h, address); h->v[j].row; j = (j + 1) & (h->cap - 1))
        ;
    h->v[j] = (live_t){address, total, (uint32_t)row + 1, 0};
    h->n++;
    return NNP_OK;
}

/* The slot of the most recent live allocation at address, NO_SLOT when none. */
static size_t live_find(const live_map_t *h, uint64_t address)
{
    size_t best = NO_SLOT;
    if (h->n == 0)
        return NO_SLOT;
    for (size_t j = live_home(h, address); h->v[j].row; j = (j + 1) & (h->cap - 1))
        if (h->v[j].address == address && (best == NO_SLOT || h->v[j].row > h->v[best].row))
            best = j;
    return best;
}

/* Removes slot i by shifting later members of its probe run back (Knuth's Algorithm R),
 * so lookups never meet tombstones. */
static void live_del(live_map_t *h, size_t i)
{
    size_t mask = h->cap - 1, j = i;
    h->v[i].row = 0;
    h->n--;
    for (;;) {
        size_t k;
        j = (j + 1) & mask;
        if (!h->v[j].row)
            return;
        k = live_home(h, h->v[j].address);
        /* The entry at j may move to i only if its home is not cyclically in (i, j]. */
        if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
            continue;
        h->v[i] = h->v[j];
        h->v[j].row = 0;
        i = j;
    }
}

/* ---- replay: the running total, one event at a time ---- */

typedef enum ev_kind { EV_ALLOC, EV_FREE, EV_FREE_OUTSIDE } ev_kind_t;

typedef struct replay {
    const nnp_mem_events_t *e;
    live_map_t live;
    uint64_t total; /* bytes of the live tensors whose allocation was recorded */
} replay_t;

/* Applies event i. A free releases the allocation's recorded size (the free's own size
 * is only used when its allocation was not recorded). A free with no live allocation at
 * its address belongs to a tensor allocated outside the profiling window: it leaves the
 * total alone, which counts only allocations we saw. EV_FREE fills *gone. */
static int replay_step(replay_t *r, size_t i, ev_kind_t *kind, live_t *gone)
{
    const nnp_mem_events_t *e = r->e;
    size_t s;
    if (e->is_alloc[i]) {
        *kind = EV_ALLOC;
        r->total += e->bytes[i];
        return live_put(&r->live, e->address[i], i, r->total);
    }
    s = live_find(&r->live, e->address[i]);
    if (s == NO_SLOT) {
        *kind = EV_FREE_OUTSIDE;
        return NNP_OK;
    }
    *kind = EV_FREE;
    *gone = r->live.v[s];
    live_del(&r->live, s);
    r->total -= e->bytes[gone->row - 1];
    return NNP_OK;
}

/* ---- the analysis state ---- */

/* The span static memory must cover: the analysed steps (from their first begin to their
 * last end), else the host ops, else the memory events themselves. */
static void static_span(mem_run_t *x, const nnp_step_trace_t *st)
{
    const nnp_ops_t *o = &x->m->ops;
    if (st && st->n > 0) {
        x->span_start_ns = st->rows[0].begin_ns;
        x->span_end_ns = INT64_MIN;
        for (size_t i = 0; i < st->n; i++) {
            int64_t end = st->rows[i].end_ns == NNP_OPEN_END ? INT64_MAX : st->rows[i].end_ns;
            x->span_start_ns =
                st->rows[i].begin_ns < x->span_start_ns ? st->rows[i].begin_ns : x->span_start_ns;
            x->span_end_ns = end > x->span_end_ns ? end : x->span_end_ns;
        }
    } else if (o->t.n > 0) {
        x->span_start_ns = o->start_ns[0];
        x->span_end_ns = INT64_MIN;
        for (size_t i = 0; i < o->t.n; i++) {
            int64_t end = o->end_ns[i] == NNP_OPEN_END ? INT64_MAX : o->end_ns[i];
            x->span_end_ns = end > x->span_end_ns ? end : x->span_end_ns;
        }
    } else {
        x->span_start_ns = x->e->ts_ns[0];
        x->span_end_ns = x->e->ts_ns[x->n - 1];
    }
}

/* Static: allocated no later than the span's start and freed (if ever) no earlier than
 * its end - MindSpore's LifeLongGraphAll, memory held for the whole graph (weights). */
bool nnp__mem_is_static(const mem_run_t *x, int64_t alloc_ns, int64_t free_ns)
{
    if (alloc_ns > x->span_start_ns)
        return false;
    return free_ns == NNP_OPEN_END || free_ns >= x->span_end_ns;
}

/* Records the total after event i for the chart line. */
static void sample(mem_run_t *x, size_t i, uint64_t total)
{
    size_t b;
    if (i == 0)
        x->first_total = total;
    if (!x->bmin) {
        x->pts[x->n_pts++] = (point_t){i, total};
        return;
    }
    b = (size_t)((uint64_t)i * N_BUCKETS / x->n);
    /* Strict comparisons keep the earliest extreme, so the first global peak is always
     * the maximum of its own bucket and survives down-sampling. */
    if (x->bmin[b].ev == SIZE_MAX || total < x->bmin[b].total)
        x->bmin[b] = (point_t){i, total};
    if (x->bmax[b].ev == SIZE_MAX || total > x->bmax[b].total)
        x->bmax[b] = (point_t){i, total};
}

static void add_point(mem_run_t *x, point_t p)
{
    if (p.ev != SIZE_MAX && (x->n_pts == 0 || x->pts[x->n_pts - 1].ev < p.ev))
        x->pts[x->n_pts++] = p;
}

/* Turns the buckets into points in event order: first, each bucket's extremes, last. */
static void finish_samples(mem_run_t *x, uint64_t last_total)
{
    if (!x->bmin)
        return;
    add_point(x, (point_t){0, x->first_total});
    for (size_t b = 0; b < N_BUCKETS; b++) {
        bool min_first = x->bmin[b].ev < x->bmax[b].ev;
        add_point(x, min_first ? x->bmin[b] : x->bmax[b]);
        add_point(x, min_first ? x->bmax[b] : x->bmin[b]);
    }
    add_point(x, (point_t){x->n - 1, last_total});
}

/* ---- formatting ---- */

/* ns as µs with exactly 3 decimals, from integers. */
const char *nnp__mem_fmt_us(char *b, size_t cap, int64_t ns)
{
    return nnp__fmt_ns_as_us(b, cap, ns);
}

/* bytes as KB with 3 decimals, rounded half up; negative when is_neg (a release whose
 * allocation fell outside the window, CANN's rule). b holds NNP_FMT_NUM_MAX bytes;
 * returns the length (no printf: two of these are in every row of two per-event files). */
static size_t fmt_kb_n(char *b, uint64_t bytes, bool is_neg)
{
    uint64_t whole = bytes / BYTES_PER_KB;
    /* The remainder is at most 1023 bytes = 0.99902 KB, so rounding never carries. */
    uint64_t milli = ((bytes % BYTES_PER_KB) * KB_MILLI + BYTES_PER_KB / 2) / BYTES_PER_KB;
    size_t n = 0;
    if (is_neg && bytes)
        b[n++] = '-';
    return n + nnp__fmt_dec3(b + n, whole, (uint32_t)milli);
}

/* The op executing at t in execution order: the last op (ops are sorted by start) that
 * started at or before t. SIZE_MAX before the first op. */
size_t nnp__mem_op_at(const nnp_model_t *m, int64_t t)
{
    size_t lo = 0, hi = m->ops.t.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->ops.start_ns[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == 0 ? SIZE_MAX : lo - 1;
}

/* ---- the CSV files (written during the first pass) ---- */

typedef struct csv_out {
    nnp_outfile_t f;
    nnp_csv_t w;
    bool is_open;
} csv_out_t;

static int csv_open(const nnp_actx_t *c, const char *prefix, csv_out_t *o,
                    const char *const *header)
{
    char name[NNP_PATH_MAX];
    int rc;
    snprintf(name, sizeof(name), "%s_%d.csv", prefix, c->rank);
    rc = nnp__out_open(&o->f, c->out_dir, name);
    if (rc != NNP_OK)
        return rc;
    o->is_open = true;
    rc = nnp__csv_init(&o->w, o->f.fd);
    if (rc == NNP_OK)
        nnp__csv_header(&o->w, header);
    return rc;
}

/* Rows are composed whole into the CSV buffer (nnp__csv_row_room): these files have a
 * row per memory event. Room for a row's numbers, commas and constant parts. */
#define ROW_NUMS_MAX (10 * NNP_FMT_NUM_MAX)
#define REC_MID      "," COMPONENT ","

/* "CPU:<dev>" (no character that needs quotes) at p; returns the end. */
static char *put_device(char *p, uint32_t dev)
{
    memcpy(p, DEVICE_PREFIX, sizeof(DEVICE_PREFIX) - 1);
    p += sizeof(DEVICE_PREFIX) - 1;
    return p + nnp__fmt_u64(p, dev);
}

/* A KB column written twice (Total Allocated, Total Reserved): "kb,kb" at p. */
static char *put_kb_twice(char *p, uint64_t bytes)
{
    size_t n = fmt_kb_n(p, bytes, false);
    p[n] = ',';
    nnp__copy_short(p + n + 1, p, n); /* the two copies do not overlap */
    return p + 2 * n + 1;
}

/* v / 1000 with 3 decimals and a comma after it. */
static char *put_us(char *p, int64_t ns)
{
    p += nnp__fmt_fixed(p, ns, NS_PER_US, US_DECIMALS);
    *p++ = ',';
    return p;
}

/* Ends a composed row at p. */
static void row_end(nnp_csv_t *w, char *p)
{
    *p++ = '\n';
    nnp__csv_row_done(w, p);
}

/* The Name column: the tensor's name, else the op that allocated it (quoted when it must
 * be), then a comma; NULL after an error of w (kept there, reported when it is closed). */
static char *row_with_label(nnp_csv_t *w, mem_run_t *x, size_t row)
{
    const nnp_model_t *m = x->m;
    uint32_t id = m->mem.name[row] ? m->mem.name[row] : m->mem.owner_op[row];
    size_t n = nnp__model_strlen(m, id);
    char *p = nnp__csv_row_room(w, ROW_NUMS_MAX + NNP_CSV_FIELD_MAX(n));
    if (!p)
        return NULL;
    p += nnp__fmt_u64(p, m->mem.device_id[row]);
    *p++ = ',';
    p += nnp__csv_field_into_id(p, &x->quotes, id, nnp__model_str(m, id), n);
    *p++ = ',';
    return p;
}

/* memory_record: one row per event with the running total after it. We know of no pool
 * reserving more than it hands out, so Total Reserved = Total Allocated. */
static void record_row(nnp_csv_t *w, int64_t ts, uint64_t total, uint32_t dev)
{
    char *p = nnp__csv_row_room(w, ROW_NUMS_MAX);
    if (!p)
        return; /* the writer's error, reported when it is closed */
    p += nnp__fmt_u64(p, dev);
    memcpy(p, REC_MID, sizeof(REC_MID) - 1);
    p = put_us(p + sizeof(REC_MID) - 1, ts);
    p = put_kb_twice(p, total);
    *p++ = ',';
    row_end(w, put_device(p, dev));
}

/* operator_memory: one row per tensor allocated in the window. free_ns NNP_OPEN_END:
 * never freed, Duration and Release columns empty (CANN's rule for a release outside
 * the window). */
static void tensor_row(nnp_csv_t *w, mem_run_t *x, const live_t *t, int64_t free_ns,
                       uint64_t release_total)
{
    const nnp_model_t *m = x->m;
    size_t row = t->row - 1;
    int64_t alloc_ns = m->mem.ts_ns[row];
    char *p = row_with_label(w, x, row);
    if (!p)
        return;
    p += fmt_kb_n(p, m->mem.bytes[row], false);
    *p++ = ',';
    p = put_us(p, alloc_ns);
    if (free_ns == NNP_OPEN_END)
        *p++ = ',';
    else
        p = put_us(p, free_ns - alloc_ns);
    p = put_kb_twice(p, t->total_bytes);
    *p++ = ',';
    if (free_ns == NNP_OPEN_END) {
        *p++ = ',';
        *p++ = ',';
    } else {
        p = put_kb_twice(p, release_total);
        *p++ = ',';
    }
    row_end(w, put_device(p, m->mem.device_id[row]));
}

/* operator_memory row of a free whose allocation fell outside the window: negative Size,
 * empty Allocation columns, the Release columns as usual (CANN's rule, formats.md 1.6). */
static void outside_row(nnp_csv_t *w, mem_run_t *x, size_t row, uint64_t total)
{
    const nnp_model_t *m = x->m;
    char *p = row_with_label(w, x, row);
    if (!p)
        return;
    p += fmt_kb_n(p, m->mem.bytes[row], true);
    /* Allocation Time, Duration, Allocation Total Allocated and Reserved: empty. */
    memcpy(p, ",,,,,", 5);
    p = put_kb_twice(p + 5, total);
    *p++ = ',';
    row_end(w, put_device(p, m->mem.device_id[row]));
}

static int cmp_live_row(const void *a, const void *b)
{
    const live_t *x = a, *y = b;
    return (x->row > y->row) - (x->row < y->row);
}

/* Tensors still live at the end, in allocation order: never-freed rows and static bytes. */
static int finish_live(mem_run_t *x, const live_map_t *h, nnp_csv_t *w)
{
    live_t *v;
    size_t k = 0;
    if (h->n == 0)
        return NNP_OK;
    v = nnp__malloc(h->n * sizeof(live_t));
    if (!v)
        return nnp__fail(NNP_ENOMEM, "out of memory in memory analysis");
    for (size_t i = 0; i < h->cap; i++)
        if (h->v[i].row)
            v[k++] = h->v[i];
    qsort(v, k, sizeof(live_t), cmp_live_row);
    for (size_t i = 0; i < k; i++) {
        size_t row = v[i].row - 1;
        tensor_row(w, x, &v[i], NNP_OPEN_END, 0);
        if (nnp__mem_is_static(x, x->e->ts_ns[row], NNP_OPEN_END))
            x->static_bytes += x->e->bytes[row];
    }
    x->n_never_freed = k;
    nnp__free(v);
    return NNP_OK;
}

/* Pass 1: counts, the peak, static memory and the samples; streams both CSV files. */
static int pass_counts(mem_run_t *x, nnp_csv_t *rec, nnp_csv_t *ops)
{
    replay_t r = {x->e, {NULL, 0, 0}, 0};
    int rc = NNP_OK;
    x->peak_ev = SIZE_MAX;
    for (size_t i = 0; i < x->n && rc == NNP_OK; i++) {
        ev_kind_t kind;
        live_t gone;
        uint32_t dev = x->e->device_id[i];
        rc = replay_step(&r, i, &kind, &gone);
        if (rc != NNP_OK)
            break;
        if (kind == EV_ALLOC) {
            x->n_alloc++;
        } else if (kind == EV_FREE) {
            size_t row = gone.row - 1;
            x->n_free++;
            dev = x->e->device_id[row];
            tensor_row(ops, x, &gone, x->e->ts_ns[i], r.total);
            if (nnp__mem_is_static(x, x->e->ts_ns[row], x->e->ts_ns[i]))
                x->static_bytes += x->e->bytes[row];
        } else {
            x->n_free++;
            x->n_outside++;
            outside_row(ops, x, i, r.total);
        }
        record_row(rec, x->e->ts_ns[i], r.total, dev);
        if (x->peak_ev == SIZE_MAX || r.total > x->peak_bytes) {
            x->peak_bytes = r.total;
            x->peak_ev = i;
        }
        sample(x, i, r.total);
    }
    if (rc == NNP_OK)
        rc = finish_live(x, &r.live, ops);
    if (rc == NNP_OK)
        finish_samples(x, r.total);
    nnp__free(r.live.v);
    return rc;
}

/* ---- pass 2: the live tensors at the peak ---- */

typedef struct ranked {
    size_t slot;
    uint64_t bytes;
    uint32_t row;
} ranked_t;

/* Largest first, then allocation order. */
static int cmp_ranked(const void *a, const void *b)
{
    const ranked_t *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* Lists the BREAKDOWN_MAX largest tensors live right after the peak event; marks them in
 * the map so the rest of the replay can find when each is freed. */
static int take_snapshot(mem_run_t *x, live_map_t *h)
{
    ranked_t *v;
    size_t k = 0;
    x->live_at_peak = h->n;
    if (h->n == 0)
        return NNP_OK;
    v = nnp__malloc(h->n * sizeof(ranked_t));
    if (!v)
        return nnp__fail(NNP_ENOMEM, "out of memory in memory analysis");
    for (size_t i = 0; i < h->cap; i++)
        if (h->v[i].row)
            v[k++] = (ranked_t){i, x->e->bytes[h->v[i].row - 1], h->v[i].row};
    qsort(v, k, sizeof(ranked_t), cmp_ranked);
    x->n_snap = k < BREAKDOWN_MAX ? k : BREAKDOWN_MAX;
    x->snap = nnp__malloc(x->n_snap * sizeof(snap_t));
    if (!x->snap) {
        nnp__free(v);
        return nnp__fail(NNP_ENOMEM, "out of memory in memory analysis");
    }
    for (size_t j = 0; j < k; j++) {
        if (j < x->n_snap) {
            x->snap[j] = (snap_t){v[j].row - 1u, NNP_OPEN_END};
            h->v[v[j].slot].snap = (uint32_t)j + 1;
        } else {
            x->others_bytes += v[j].bytes;
        }
    }
    nnp__free(v);
    return NNP_OK;
}

/* Pass 2: replays up to the peak, lists what is live, then replays on until each listed
 * tensor is freed (or the events end). */
static int pass_peak(mem_run_t *x)
{
    replay_t r = {x->e, {NULL, 0, 0}, 0};
    size_t left = 0;
    int rc = NNP_OK;
    for (size_t i = 0; i < x->n && rc == NNP_OK; i++) {
        ev_kind_t kind;
        live_t gone;
        rc = replay_step(&r, i, &kind, &gone);
        if (rc != NNP_OK)
            break;
        if (i == x->peak_ev) {
            rc = take_snapshot(x, &r.live);
            left = x->n_snap;
            if (left == 0)
                break;
        } else if (i > x->peak_ev && kind == EV_FREE && gone.snap) {
            x->snap[gone.snap - 1].end_ns = x->e->ts_ns[i];
            if (--left == 0)
                break;
        }
    }
    nnp__free(r.live.v);
    return rc;
}

/* Sampling buffers: MAX_POINTS points, plus the buckets when events outnumber them. */
static int alloc_samples(mem_run_t *x)
{
    x->pts = nnp__malloc(MAX_POINTS * sizeof(point_t));
    if (!x->pts)
        return nnp__fail(NNP_ENOMEM, "out of memory in memory analysis");
    if (x->n <= MAX_POINTS)
        return NNP_OK;
    x->bmin = nnp__malloc(2 * N_BUCKETS * sizeof(point_t));
    if (!x->bmin)
        return nnp__fail(NNP_ENOMEM, "out of memory in memory analysis");
    x->bmax = x->bmin + N_BUCKETS;
    for (size_t b = 0; b < 2 * N_BUCKETS; b++)
        x->bmin[b] = (point_t){SIZE_MAX, 0};
    return NNP_OK;
}

/* CANN's memory_record and operator_memory columns (formats.md 1.6); the msprof export
 * checks the files it re-reads against these same lists. */
const char *const nnp__memory_record_cols[] = {
    "Device_id", "Component", "Timestamp(us)", "Total Allocated(KB)", "Total Reserved(KB)",
    "Device",    NULL};
const char *const nnp__operator_memory_cols[] = {"Device_id",
                                                 "Name",
                                                 "Size(KB)",
                                                 "Allocation Time(us)",
                                                 "Duration(us)",
                                                 "Allocation Total Allocated(KB)",
                                                 "Allocation Total Reserved(KB)",
                                                 "Release Total Allocated(KB)",
                                                 "Release Total Reserved(KB)",
                                                 "Device",
                                                 NULL};

/* Every file stays open (under its temporary name) until all four are written, then all
 * are committed with the final verdict: an error leaves none of them behind. */
int nnp__memory_write(const nnp_actx_t *c, const nnp_step_trace_t *st, nnp_findings_t *f)
{
    mem_run_t x;
    csv_out_t rec, ops;
    nnp_outfile_t jf[2];
    bool j_open[2] = {false, false};
    int rc;
    f->mem_capacity_bytes = c->memory_capacity_bytes ? (double)c->memory_capacity_bytes : NAN;
    f->mem_peak_bytes = NAN;
    /* No memory events (profile_memory off, or nothing recorded): no files at all. */
    if (c->m->mem.t.n == 0)
        return NNP_OK;
    memset(&x, 0, sizeof(x));
    memset(&rec, 0, sizeof(rec));
    memset(&ops, 0, sizeof(ops));
    x.c = c;
    x.m = c->m;
    x.e = &c->m->mem;
    x.n = c->m->mem.t.n;
    static_span(&x, st);
    rc = nnp__csv_quotes_init(&x.quotes, c->m->n_strs);
    if (rc == NNP_OK)
        rc = alloc_samples(&x);
    if (rc == NNP_OK)
        rc = csv_open(c, "memory_record", &rec, nnp__memory_record_cols);
    if (rc == NNP_OK)
        rc = csv_open(c, "operator_memory", &ops, nnp__operator_memory_cols);
    if (rc == NNP_OK)
        rc = pass_counts(&x, &rec.w, &ops.w);
    if (rc == NNP_OK)
        rc = pass_peak(&x);
    if (rc == NNP_OK)
        rc = nnp__memory_json_write(&x, jf, j_open);
    /* Close everything with the final verdict; the first error wins. */
    if (rec.is_open) {
        int r2 = nnp__csv_fini(&rec.w);
        rc = rc == NNP_OK ? r2 : rc;
    }
    if (ops.is_open) {
        int r2 = nnp__csv_fini(&ops.w);
        rc = rc == NNP_OK ? r2 : rc;
    }
    if (rec.is_open)
        rc = nnp__out_commit(&rec.f, rc);
    if (ops.is_open)
        rc = nnp__out_commit(&ops.f, rc);
    for (int k = 0; k < 2; k++)
        if (j_open[k])
            rc = nnp__out_commit(&jf[k], rc);
    if (rc == NNP_OK)
        f->mem_peak_bytes = (double)x.peak_bytes;
    nnp__free(x.pts);
    nnp__free(x.bmin);
    nnp__free(x.snap);
    nnp__csv_quotes_fini(&x.quotes);
    return rc;
}
