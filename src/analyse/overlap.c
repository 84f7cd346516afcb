/* overlap.c - compute/communication overlap per step and for the analysed span (written
 * as step_trace_time.csv by overlap_write.c: the per-rank file of torch_npu /
 * msprof-analyze). Called by the
 * analyse driver after step_trace.c; its merged interval lists feed the timeline's
 * "Overlap Analysis" process. Every list here is sorted by start and disjoint once built;
 * all set operations are linear sweeps over such lists (intervals.c), so a run costs
 * O(n log n).
 * Rules and units for users: docs/OUTPUTS.md, "Compute/communication overlap". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "util/csv_writer.h"
#include "util/util.h"

/* ps per ns: the tick of inputs with sub-ns durations (ticks_t). */
#define PS_PER_NS 1000
_Static_assert(NNP_OV_COLS == NNP_OVERLAP_COLS, "overlap columns");

const char *const nnp__overlap_lane_names[NNP_OVERLAP_LANES] = {
    "Computing", "Communication", "Communication(Not Overlapped)", "Free"};

/* ---- the gaps as they are read (nnp_gap_iter_t) ---- */

void nnp__overlap_gaps_next(nnp_gap_iter_t *it)
{
    const nnp_overlap_t *ov = it->ov;
    if (ov->free_is_kept) {
        it->has = it->kept < ov->free_kept.n;
        if (it->has)
            it->gap = ov->free_kept.v[it->kept++];
    } else {
        it->has = ov->has_span && nnp__ivl_gaps_next(&it->made, &it->gap);
    }
}

void nnp__overlap_gaps_begin(const nnp_overlap_t *ov, nnp_gap_iter_t *it)
{
    memset(it, 0, sizeof(*it));
    it->ov = ov;
    nnp__ivl_gaps_begin(&it->made, &ov->computing, &ov->communication, ov->span_lo_ns,
                        ov->span_hi_ns);
    nnp__overlap_gaps_next(it);
}

/* ---- what counts as compute and as communication ---- */

/* Kernels and ops run by a communication library: NCCL kernels in CUPTI traces, HCCL tasks
 * in CANN ones. HTA classifies kernels with "nccl" in the name as communication, and MSP
 * section 2.3 puts HCCL tasks in Communication, never in Computing: counting them as
 * compute would hide every non-overlapped communication. */
static bool is_comm_name(const char *s)
{
    return nnp__contains_ci(s, "nccl") || nnp__contains_ci(s, "hccl") ||
           nnp__contains_ci(s, "hcom");
}

/* Memory copies and sets are neither compute nor communication (HTA's MEMORY kernels; MSP
 * lists only AI_CORE/AI_VECTOR/FFTS+/MIX/AI_CPU tasks as Computing). */
static bool is_memory_kernel(const char *type, const char *name)
{
    return strcmp(type, "MEMCPY") == 0 || strcmp(type, "MEMSET") == 0 ||
           strncmp(name, "Memcpy", strlen("Memcpy")) == 0 ||
           strncmp(name, "Memset", strlen("Memset")) == 0;
}

enum rec_class { CLASS_UNKNOWN = 0, CLASS_COMPUTE, CLASS_COMM, CLASS_OTHER };

/* Class of a record by its (name, type) string ids, cached per name id because a run has
 * millions of records but few distinct names. */
static int classify(const nnp_model_t *m, uint8_t *cache, uint32_t name, uint32_t type,
                    bool is_kernel)
{
    const char *n = nnp__model_str(m, name), *t = nnp__model_str(m, type);
    uint8_t cls;
    if (name < m->n_strs && cache[name] != CLASS_UNKNOWN)
        return cache[name];
    if (is_comm_name(n) || is_comm_name(t) || strcmp(t, "COMMUNICATION") == 0)
        cls = CLASS_COMM;
    else if (is_kernel && is_memory_kernel(t, n))
        cls = CLASS_OTHER;
    else
        cls = CLASS_COMPUTE;
    /* The cache is keyed by name alone: a name used with two types keeps its first class,
     * which only matters for pathological imports. */
    if (name < m->n_strs)
        cache[name] = cls;
    return cls;
}

/* ---- time in ticks: ns, or ps relative to a base when the input kept sub-ns times ---- */

/* Interval arithmetic runs in ticks. torch_npu's task durations keep sub-ns digits
 * (kernels.end_ps) and its totals sum them exactly, so such a model is measured in ps,
 * relative to the run's first instant (absolute ps would overflow int64). */
typedef struct ticks {
    int64_t scale; /* ticks per ns: 1, or PS_PER_NS */
    int64_t base;  /* ns at tick 0 (0 when scale is 1) */
} ticks_t;

static int64_t to_tick(const ticks_t *tk, int64_t ns)
{
    return tk->scale == 1 ? ns : (ns - tk->base) * tk->scale;
}

static int64_t end_tick(const ticks_t *tk, int64_t ns, const uint16_t *ps, size_t i)
{
    return to_tick(tk, ns) + (tk->scale > 1 && ps ? ps[i] : 0);
}

/* Ticks to ns (floor) plus the ps beyond it. */
static int64_t tick_ns(const ticks_t *tk, int64_t v, int16_t *ps)
{
    int64_t q = v / tk->scale, r = v % tk->scale;
    if (r < 0) {
        q--;
        r += tk->scale;
    }
    if (ps)
        *ps = (int16_t)r;
    return q + tk->base;
}

static void ticks_init(const nnp_model_t *m, ticks_t *tk)
{
    tk->scale = 1;
    tk->base = 0;
    if (!m->kernels.end_ps && !m->comms.end_ps)
        return;
    tk->scale = PS_PER_NS;
    tk->base = INT64_MAX;
    if (m->kernels.t.n)
        tk->base = m->kernels.start_ns[0];
    if (m->comms.t.n && m->comms.start_ns[0] < tk->base)
        tk->base = m->comms.start_ns[0];
    if (m->steps.t.n)
        for (size_t i = 0; i < m->steps.t.n; i++)
            tk->base = m->steps.start_ns[i] < tk->base ? m->steps.start_ns[i] : tk->base;
    if (tk->base == INT64_MAX)
        tk->base = 0;
}

/* Adds [s, e) to a list that nnp__ivl_normalise will merge: into its last interval at once
 * when it starts inside it (records come by start, and nested host ops, PyTorch's, start
 * inside their parent), so a list holds about one interval per outermost op, not one per
 * op. The union, and so the normalised list, is the same. */
static int push_merged(nnp_interval_list_t *l, int64_t s, int64_t e)
{
    if (l->n > 0) {
        nnp_interval_t *last = &l->v[l->n - 1];
        if (s >= last->start_ns && s <= last->end_ns) {
            if (e > last->end_ns)
                last->end_ns = e;
            return NNP_OK;
        }
    }
    return nnp__ivl_push(l, s, e);
}

/* Adds one record to the list its class names. Zero-length and inverted intervals carry
 * no time and are skipped (an inverted one is a broken record, not negative time). */
static int add_record(int cls, int64_t s, int64_t e, nnp_interval_list_t *compute,
                      nnp_interval_list_t *comm)
{
    if (e <= s)
        return NNP_OK;
    if (cls == CLASS_COMPUTE)
        return push_merged(compute, s, e);
    if (cls == CLASS_COMM)
        return push_merged(comm, s, e);
    return NNP_OK;
}

/* Compute = device kernels when the model has any, else host ops (a CPU-only run's ops are
 * its compute; analyse.h). Communication = the comms table plus communication kernels. */
static int gather(const nnp_model_t *m, const ticks_t *tk, nnp_interval_list_t *compute,
                  nnp_interval_list_t *comm)
{
    uint8_t *cache = nnp__calloc(m->n_strs ? m->n_strs : 1, 1);
    int rc = NNP_OK;
    if (!cache)
        return nnp__fail(NNP_ENOMEM, "overlap: out of memory");
    if (m->kernels.t.n > 0) {
        const nnp_kernels_t *k = &m->kernels;
        for (size_t i = 0; i < k->t.n && rc == NNP_OK; i++)
            rc = add_record(classify(m, cache, k->name[i], k->type[i], true),
                            to_tick(tk, k->start_ns[i]), end_tick(tk, k->end_ns[i], k->end_ps, i),
                            compute, comm);
    } else {
        const nnp_ops_t *o = &m->ops;
        for (size_t i = 0; i < o->t.n && rc == NNP_OK; i++)
            if (o->end_ns[i] != NNP_OPEN_END)
                rc = add_record(classify(m, cache, o->name[i], o->type[i], false),
                                to_tick(tk, o->start_ns[i]), to_tick(tk, o->end_ns[i]), compute,
                                comm);
    }
    for (size_t i = 0; i < m->comms.t.n && rc == NNP_OK; i++)
        if (m->comms.end_ns[i] != NNP_OPEN_END)
            rc = add_record(CLASS_COMM, to_tick(tk, m->comms.start_ns[i]),
                            end_tick(tk, m->comms.end_ns[i], m->comms.end_ps, i), compute, comm);
    nnp__free(cache);
    return rc;
}

/* ---- the analysis ---- */

/* The analysed span in ticks: first step start_point .. last step end, or, without steps,
 * the whole run (first busy instant .. last busy instant). False when there is nothing. */
static bool analysed_span(const nnp_actx_t *c, const nnp_step_trace_t *st, const ticks_t *tk,
                          const nnp_interval_list_t *compute, const nnp_interval_list_t *comm,
                          int64_t *lo, int64_t *hi)
{
    if (c->has_steps && (!st || st->n == 0))
        return false; /* --steps named no recorded step: there is nothing to analyse */
    if (st && st->n > 0) {
        *lo = INT64_MAX;
        *hi = INT64_MIN;
        for (size_t i = 0; i < st->n; i++) {
            if (to_tick(tk, st->rows[i].start_point_ns) < *lo)
                *lo = to_tick(tk, st->rows[i].start_point_ns);
            if (to_tick(tk, st->rows[i].end_ns) > *hi)
                *hi = to_tick(tk, st->rows[i].end_ns);
        }
        return *hi > *lo;
    }
    return nnp__ivl_busy_span(compute, comm, lo, hi);
}

/* The three lists measured per row: computing, communication, not overlapped. */
#define OV_LISTS 3
/* Prefix sums of the three lists, so that each row is three O(log n) measurements, and
 * the analysed span [span_lo, span_hi) in ticks (empty when there is none). */
typedef struct sums {
    int64_t *computing, *communication, *not_overlapped;
    nnp_ivl_hint_t hint[OV_LISTS]; /* where the searches of the previous row ended, per list */
    int64_t span_lo, span_hi;
} sums_t;

/* One row's five values in ticks (before the conversion to ns + ps). */
typedef struct tick_row {
    int64_t v[NNP_OV_COLS]; /* computing, communication, not overlapped, overlapped, free */
} tick_row_t;

static tick_row_t measure_row(const nnp_overlap_t *ov, sums_t *s, int64_t lo, int64_t hi)
{
    tick_row_t r;
    memset(&r, 0, sizeof(r));
    if (hi <= lo)
        return r; /* an empty or inverted step span measures nothing */
    r.v[NNP_OV_COMPUTING] = nnp__ivl_measure(&ov->computing, s->computing, lo, hi, &s->hint[0]);
    r.v[NNP_OV_COMMUNICATION] =
        nnp__ivl_measure(&ov->communication, s->communication, lo, hi, &s->hint[1]);
    r.v[NNP_OV_NOT_OVERLAPPED] =
        nnp__ivl_measure(&ov->comm_not_overlapped, s->not_overlapped, lo, hi, &s->hint[2]);
    /* The span is free, computing or exposed communication, each instant one of them (the
     * gaps are the span minus computing and communication, and communication outside
     * computing is the exposed part), so the free time in [lo, hi) is the span's time
     * there minus the other two: exactly the gaps' length, without the gaps. */
    lo = lo > s->span_lo ? lo : s->span_lo;
    hi = hi < s->span_hi ? hi : s->span_hi;
    if (hi > lo)
        r.v[NNP_OV_FREE] = hi - lo - r.v[NNP_OV_COMPUTING] - r.v[NNP_OV_NOT_OVERLAPPED];
    return r;
}

/* Ticks to the row's ns fields plus their sub-ns picoseconds. Overlapped = Communication -
 * Not Overlapped (MPA adapter), computed in ticks so that it stays exact. */
static nnp_overlap_row_t to_row(const ticks_t *tk, uint64_t step_id, tick_row_t r)
{
    nnp_overlap_row_t o;
    ticks_t rel = {tk->scale, 0}; /* durations: no base */
    memset(&o, 0, sizeof(o));
    o.step_id = step_id;
    r.v[NNP_OV_OVERLAPPED] = r.v[NNP_OV_COMMUNICATION] - r.v[NNP_OV_NOT_OVERLAPPED];
    o.computing_ns = tick_ns(&rel, r.v[NNP_OV_COMPUTING], &o.sub_ps[NNP_OV_COMPUTING]);
    o.communication_ns = tick_ns(&rel, r.v[NNP_OV_COMMUNICATION], &o.sub_ps[NNP_OV_COMMUNICATION]);
    o.comm_not_overlapped_ns =
        tick_ns(&rel, r.v[NNP_OV_NOT_OVERLAPPED], &o.sub_ps[NNP_OV_NOT_OVERLAPPED]);
    o.overlapped_ns = tick_ns(&rel, r.v[NNP_OV_OVERLAPPED], &o.sub_ps[NNP_OV_OVERLAPPED]);
    o.free_ns = tick_ns(&rel, r.v[NNP_OV_FREE], &o.sub_ps[NNP_OV_FREE]);
    return o;
}

/* ---- device steps (torch_npu, Kineto): each step measured over its device activity ---- */

/* The device window of each step row, in ticks: from the first to the last device task the
 * step launched, extended to the host step's end (torch_npu FwkCANNRelationParser
 * get_step_range: START = first kernel of the step's first launch, END = max(end of the
 * last launch's kernels, host end)). A kernel whose launch is known belongs to the step
 * whose host range holds the launch; one without (and every comm op) to the latest step
 * begun at or before its start, as device work follows its launch. A step with no device
 * task keeps its host range. */
static int device_windows(const nnp_model_t *m, const nnp_step_trace_t *st, const ticks_t *tk,
                          int64_t *lo, int64_t *hi)
{
    nnp_launch_index_t lx;
    nnp_step_spans_t sp;
    int rc = nnp__launch_index_build(m, &lx);
    if (rc == NNP_OK)
        rc = nnp__step_spans_init(st, &sp);
    if (rc != NNP_OK) {
        nnp__launch_index_fini(&lx);
        return rc;
    }
    for (size_t i = 0; i < st->n; i++) {
        lo[i] = INT64_MAX;
        hi[i] = INT64_MIN;
    }
    for (size_t i = 0; i < m->kernels.t.n + m->comms.t.n; i++) {
        bool is_k = i < m->kernels.t.n;
        size_t j = is_k ? i : i - m->kernels.t.n, row = SIZE_MAX, l;
        int64_t s = is_k ? m->kernels.start_ns[j] : m->comms.start_ns[j], e;
        l = is_k ? nnp__launch_index_find(&lx, m->kernels.launch[j]) : SIZE_MAX;
        if (l != SIZE_MAX) {
            int64_t h = m->calls.start_ns[l];
            for (size_t r = 0; r < st->n && row == SIZE_MAX; r++)
                if (st->rows[r].begin_ns <= h && h <= st->rows[r].end_ns)
                    row = r;
        } else {
            for (size_t r = st->n; r-- > 0 && row == SIZE_MAX;)
                if (st->rows[r].begin_ns <= s)
                    row = r;
        }
        if (row == SIZE_MAX)
            continue;
        e = is_k ? end_tick(tk, m->kernels.end_ns[j], m->kernels.end_ps, j)
                 : (m->comms.end_ns[j] == NNP_OPEN_END
                        ? to_tick(tk, s)
                        : end_tick(tk, m->comms.end_ns[j], m->comms.end_ps, j));
        lo[row] = to_tick(tk, s) < lo[row] ? to_tick(tk, s) : lo[row];
        hi[row] = e > hi[row] ? e : hi[row];
    }
    for (size_t i = 0; i < st->n; i++) {
        int64_t host_end = to_tick(tk, st->rows[i].end_ns);
        if (lo[i] == INT64_MAX) {
            lo[i] = to_tick(tk, st->rows[i].begin_ns);
            hi[i] = host_end;
        }
        hi[i] = host_end > hi[i] ? host_end : hi[i];
    }
    nnp__step_spans_fini(&sp);
    nnp__launch_index_fini(&lx);
    return NNP_OK;
}

/* Adds each interval of l whole to the first row (in row order) whose window [lo, hi)
 * holds its start, as torch_npu's TraceStepTimeParser.count_time adds each Overlap
 * Analysis event to the step holding its start; intervals in no window count for none. */
static int assign_whole(const nnp_interval_list_t *l, const int64_t *lo, const int64_t *hi,
                        size_t n_rows, tick_row_t *rows, int col)
{
    bool *done = nnp__calloc(l->n ? l->n : 1, sizeof(bool));
    if (!done)
        return nnp__fail(NNP_ENOMEM, "overlap: out of memory");
    for (size_t r = 0; r < n_rows; r++) {
        size_t a = 0, b = l->n;
        while (a < b) { /* the first interval starting at or after lo[r] */
            size_t mid = a + (b - a) / 2;
            if (l->v[mid].start_ns < lo[r])
                a = mid + 1;
            else
                b = mid;
        }
        for (size_t i = a; i < l->n && l->v[i].start_ns < hi[r]; i++) {
            if (done[i])
                continue;
            done[i] = true;
            rows[r].v[col] += l->v[i].end_ns - l->v[i].start_ns;
        }
    }
    nnp__free(done);
    return NNP_OK;
}

/* torch_npu's rule: the four lists over the whole device span (first to last busy instant,
 * as msprof's Overlap Analysis events), each interval counted whole in one step. */
static int device_rows(const nnp_actx_t *c, const nnp_step_trace_t *st, const ticks_t *tk,
                       nnp_overlap_t *out, tick_row_t *rows)
{
    int64_t *lo = nnp__malloc(st->n * sizeof(int64_t)), *hi = nnp__malloc(st->n * sizeof(int64_t));
    int rc = lo && hi ? NNP_OK : nnp__fail(NNP_ENOMEM, "overlap: out of memory");
    if (rc == NNP_OK)
        rc = device_windows(c->m, st, tk, lo, hi);
    if (rc == NNP_OK)
        rc = assign_whole(&out->computing, lo, hi, st->n, rows, NNP_OV_COMPUTING);
    if (rc == NNP_OK)
        rc = assign_whole(&out->communication, lo, hi, st->n, rows, NNP_OV_COMMUNICATION);
    if (rc == NNP_OK)
        rc = assign_whole(&out->comm_not_overlapped, lo, hi, st->n, rows, NNP_OV_NOT_OVERLAPPED);
    if (rc == NNP_OK)
        rc = assign_whole(&out->free_kept, lo, hi, st->n, rows, NNP_OV_FREE);
    if (rc == NNP_OK) {
        rows[st->n].v[NNP_OV_COMPUTING] = nnp__ivl_total(&out->computing);
        rows[st->n].v[NNP_OV_COMMUNICATION] = nnp__ivl_total(&out->communication);
        rows[st->n].v[NNP_OV_NOT_OVERLAPPED] = nnp__ivl_total(&out->comm_not_overlapped);
        rows[st->n].v[NNP_OV_FREE] = nnp__ivl_total(&out->free_kept);
    }
    nnp__free(lo);
    nnp__free(hi);
    return rc;
}

/* The timeline reads the lists in absolute ns: convert them back from ticks. */
static void lists_to_ns(const ticks_t *tk, nnp_overlap_t *ov)
{
    nnp_interval_list_t *ls[] = {&ov->computing, &ov->communication, &ov->comm_not_overlapped,
                                 &ov->free_kept};
    ov->span_lo_ns = tick_ns(tk, ov->span_lo_ns, NULL);
    ov->span_hi_ns = tick_ns(tk, ov->span_hi_ns, NULL);
    if (tk->scale == 1)
        return;
    for (size_t k = 0; k < NNP_ARRAY_LEN(ls); k++)
        for (size_t i = 0; i < ls[k]->n; i++) {
            ls[k]->v[i].start_ns = tick_ns(tk, ls[k]->v[i].start_ns, NULL);
            ls[k]->v[i].end_ns = tick_ns(tk, ls[k]->v[i].end_ns, NULL);
        }
}

int nnp__overlap_run(const nnp_actx_t *c, const nnp_step_trace_t *st, nnp_overlap_t *out)
{
    sums_t sums = {0};
    size_t n_steps = st ? st->n : 0;
    int64_t lo = 0, hi = 0;
    bool has_span, by_device = c->m->info.overlap_device_steps && n_steps > 0;
    tick_row_t *rows = NULL;
    ticks_t tk;
    int rc;

    memset(out, 0, sizeof(*out));
    ticks_init(c->m, &tk);
    rc = gather(c->m, &tk, &out->computing, &out->communication);
    if (rc != NNP_OK)
        goto out;
    nnp__ivl_normalise(&out->computing);
    nnp__ivl_normalise(&out->communication);
    /* The gaps are kept as a list where they are read by index (device steps) or could
     * not be made again from the lists in ns (ps ticks: two ticks may give one ns). */
    out->free_is_kept = by_device || tk.scale != 1;

    has_span = by_device
                   ? nnp__ivl_busy_span(&out->computing, &out->communication, &lo, &hi)
                   : analysed_span(c, st, &tk, &out->computing, &out->communication, &lo, &hi);
    if (has_span) {
        nnp__ivl_clip(&out->computing, lo, hi);
        nnp__ivl_clip(&out->communication, lo, hi);
        rc = nnp__ivl_subtract(&out->communication, &out->computing, &out->comm_not_overlapped);
        if (rc == NNP_OK && out->free_is_kept)
            rc = nnp__ivl_gaps(&out->computing, &out->communication, lo, hi, &out->free_kept);
        if (rc != NNP_OK)
            goto out;
        out->has_span = true;
        out->span_lo_ns = sums.span_lo = lo;
        out->span_hi_ns = sums.span_hi = hi;
    } else {
        out->computing.n = out->communication.n = 0;
    }

    nnp__ivl_shrink(&out->computing);
    nnp__ivl_shrink(&out->communication);
    nnp__ivl_shrink(&out->comm_not_overlapped);
    nnp__ivl_shrink(&out->free_kept);
    rows = nnp__calloc(n_steps + 1, sizeof(*rows));
    out->rows = nnp__calloc(n_steps + 1, sizeof(*out->rows));
    if (!rows || !out->rows) {
        rc = nnp__fail(NNP_ENOMEM, "overlap: out of memory");
        goto out;
    }
    if (by_device) {
        rc = device_rows(c, st, &tk, out, rows);
    } else {
        rc = nnp__ivl_prefix_sums(&out->computing, &sums.computing);
        if (rc == NNP_OK)
            rc = nnp__ivl_prefix_sums(&out->communication, &sums.communication);
        if (rc == NNP_OK)
            rc = nnp__ivl_prefix_sums(&out->comm_not_overlapped, &sums.not_overlapped);
        for (size_t i = 0; rc == NNP_OK && i < n_steps; i++)
            rows[i] = measure_row(out, &sums, to_tick(&tk, st->rows[i].start_point_ns),
                                  to_tick(&tk, st->rows[i].end_ns));
        if (rc == NNP_OK)
            rows[n_steps] = measure_row(out, &sums, lo, has_span ? hi : lo);
    }
    if (rc != NNP_OK)
        goto out;
    for (size_t i = 0; i < n_steps; i++)
        out->rows[i] = to_row(&tk, st->rows[i].step_id, rows[i]);
    out->rows[n_steps] = to_row(&tk, UINT64_MAX, rows[n_steps]);
    out->n = n_steps + 1;
    lists_to_ns(&tk, out);

out:
    nnp__free(rows);
    nnp__free(sums.computing);
    nnp__free(sums.communication);
    nnp__free(sums.not_overlapped);
    if (rc != NNP_OK)
        nnp__overlap_fini(out);
    return rc;
}

void nnp__overlap_fini(nnp_overlap_t *ov)
{
    if (!ov)
        return;
    nnp__free(ov->rows);
    nnp__ivl_fini(&ov->computing);
    nnp__ivl_fini(&ov->communication);
    nnp__ivl_fini(&ov->comm_not_overlapped);
    nnp__ivl_fini(&ov->free_kept);
    ov->rows = NULL;
    ov->n = 0;
}
