/* step_trace.c - step phases (MindSpore "step trace"): for every analysed step its start,
 * fp and bp points and the iteration_interval / fp_and_bp / tail / total split, from the
 * model's steps, fp/bp marks, host ops and communication ops. The analysis driver calls
 * run, then write; overlap.c and the timeline read the result. Rules and columns are in
 * docs/OUTPUTS.md, "Step trace"; the sources are formats.md sections 1.1, 1.2, 2.1 and 2.2. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "analyse/step_trace.h"
#include "model/host_pairs.h"

/* The data-fetch op MindSpore starts the forward pass after (seed 001: "the first op
 * connected after get_next"; formats.md 2.2 "first node that consumes a GetNext output"). */
#define DATA_FETCH_TAG "GetNext"
/* PyTorch's data fetch: the range torch.utils.data's DataLoader iterator opens around each
 * batch ("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"), a host range
 * (record_function) in our captures and Kineto's user annotations, an op in torch_npu's
 * timeline. The rule is the TensorBoard profiler plugin's for its "DataLoader" time. */
#define DATALOADER_PREFIX "enumerate(DataLoader)#"
#define DATALOADER_SUFFIX ".__next__"
/* PyTorch's autograd engine names its call of each backward node so (every node, also
 * those sequence numbers do not link, such as AccumulateGrad). */
#define AUTOGRAD_EVALUATE_PREFIX "autograd::engine::evaluate_function: "
/* Per string id flags (detect_t.str_flags). */
#define STR_FETCH      0x1u /* names a data fetch (is_fetch_name) */
#define STR_BACKWARD   0x2u /* names a backward op (AUTOGRAD_EVALUATE_PREFIX) */
#define STR_DATALOADER 0x4u /* names PyTorch's DataLoader fetch */
/* MindSpore puts every backward op under this top scope (formats.md 1.3 `subgraph`). */
#define BACKWARD_SCOPE "Gradients"
/* Phase values that depend on an unknown point (analyse.h: fp_ns/bp_ns are -1). */
#define UNKNOWN_NS (-1)

typedef nnp_range_t range_t;

typedef struct mark {
    uint64_t step_id;
    int64_t ts_ns;
} mark_t;

/* A data fetch that is a range (a host range or marker), not an op. */
typedef struct fetch_range {
    int64_t start_ns, end_ns;
    bool dataloader; /* PyTorch's DataLoader */
} fetch_range_t;

/* The data fetch the automatic fp follows in a step. */
typedef struct fetch {
    int64_t start_ns, end_ns; /* end_ns: where the forward pass may start */
    bool dataloader;
} fetch_t;

/* Everything the per-step detection needs, built once per run. */
typedef struct detect {
    const nnp_model_t *m;
    mark_t *fp, *bp;
    size_t n_fp, n_bp;
    uint32_t fp_id, bp_id;         /* override op names, 0 = absent from the model */
    bool has_fp_over, has_bp_over; /* an override was given */
    bool fp_missed, bp_missed;     /* some step lacked the override op */
    uint8_t *str_flags;            /* per string id: STR_* */
    fetch_range_t *fetch_ranges;   /* host ranges and markers that fetch data, by start */
    int64_t *fetch_starts;         /* their starts, for lower_bound */
    size_t n_fetch_ranges;
} detect_t;

/* First index i with v[i] >= x in a sorted array (n when none). */
static size_t lower_bound(const int64_t *v, size_t n, int64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

range_t nnp__step_in_span(const int64_t *start, size_t n, int64_t begin, int64_t end)
{
    range_t r;
    r.lo = lower_bound(start, n, begin);
    r.hi = lower_bound(start, n, end);
    if (r.hi < r.lo)
        r.hi = r.lo;
    return r;
}

static bool op_closed(const nnp_ops_t *ops, size_t i)
{
    return ops->end_ns[i] != NNP_OPEN_END && ops->end_ns[i] >= ops->start_ns[i];
}

static int cmp_mark(const void *a, const void *b)
{
    const mark_t *x = a, *y = b;
    if (x->step_id != y->step_id)
        return x->step_id < y->step_id ? -1 : 1;
    return (x->ts_ns > y->ts_ns) - (x->ts_ns < y->ts_ns);
}

/* The marks tables are not time-sorted by the model: copy and sort by (step, ts). */
static int marks_sorted(const nnp_marks_t *mk, mark_t **out, size_t *n)
{
    *out = NULL;
    *n = mk->t.n;
    if (*n == 0)
        return NNP_OK;
    *out = nnp__malloc(*n * sizeof(mark_t));
    if (!*out)
        return nnp__fail(NNP_ENOMEM, "out of memory sorting step marks");
    for (size_t i = 0; i < *n; i++) {
        (*out)[i].step_id = mk->step_id[i];
        (*out)[i].ts_ns = mk->ts_ns[i];
    }
    qsort(*out, *n, sizeof(mark_t), cmp_mark);
    return NNP_OK;
}

/* A step's mark: the earliest one (fp) or the latest one (bp) when several are recorded. */
static bool mark_lookup(const mark_t *v, size_t n, uint64_t step, bool latest, int64_t *ts)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].step_id < step)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == n || v[lo].step_id != step)
        return false;
    if (latest)
        while (lo + 1 < n && v[lo + 1].step_id == step)
            lo++;
    *ts = v[lo].ts_ns;
    return true;
}

/* PyTorch's DataLoader fetch's name. */
static bool is_dataloader_name(const char *s, size_t len)
{
    size_t pre = strlen(DATALOADER_PREFIX), suf = strlen(DATALOADER_SUFFIX);
    return len >= pre + suf && memcmp(s, DATALOADER_PREFIX, pre) == 0 &&
           memcmp(s + len - suf, DATALOADER_SUFFIX, suf) == 0;
}

/* Flags the strings that name a data fetch or a backward op, once per model: the fp and
 * bp searches test every op of every step, and a strstr per op name was a tenth of the
 * step trace. */
static uint8_t *flag_strings(const nnp_model_t *m)
{
    uint8_t *v = nnp__calloc(m->n_strs ? m->n_strs : 1, 1);
    size_t pre = strlen(AUTOGRAD_EVALUATE_PREFIX);
    for (size_t id = 0; v && id < m->n_strs; id++) {
        if (is_dataloader_name(m->strs[id], m->str_len[id]))
            v[id] = STR_FETCH | STR_DATALOADER;
        else if (strstr(m->strs[id], DATA_FETCH_TAG))
            v[id] = STR_FETCH;
        if (strncmp(m->strs[id], AUTOGRAD_EVALUATE_PREFIX, pre) == 0)
            v[id] |= STR_BACKWARD;
    }
    return v;
}

static bool is_fetch_str(const detect_t *d, uint32_t id)
{
    return id < d->m->n_strs && (d->str_flags[id] & STR_FETCH);
}

static bool is_dataloader_str(const detect_t *d, uint32_t id)
{
    return id < d->m->n_strs && (d->str_flags[id] & STR_DATALOADER);
}

/* PyTorch's backward op: one autograd's sequence number links to a forward op (the nodes),
 * or the engine's call of a node. */
static bool is_backward_op(const detect_t *d, size_t i)
{
    const nnp_ops_t *o = &d->m->ops;
    return (o->seq_kind && o->seq_kind[i] == NNP_SEQ_BACKWARD) ||
           (o->name[i] < d->m->n_strs && (d->str_flags[o->name[i]] & STR_BACKWARD));
}

static int cmp_span(const void *a, const void *b)
{
    const fetch_range_t *x = a, *y = b;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return (x->end_ns > y->end_ns) - (x->end_ns < y->end_ns);
}

/* The data fetches that are ranges, not ops, sorted by start: ended markers (Kineto's user
 * annotations) and host ranges (our record_function), whose begin and end rows pair per
 * thread, event, module and stage, the last opened first. A range never ended is left
 * out: the fp search then treats its step as one without a fetch range. */
/* Marker i is an ended data fetch of the rank's own process. */
static bool is_fetch_marker(const detect_t *d, size_t i)
{
    const nnp_markers_t *mk = &d->m->markers;
    return is_fetch_str(d, mk->message[i]) && mk->end_ns[i] != NNP_OPEN_END &&
           mk->end_ns[i] > mk->start_ns[i];
}

/* Host row i is a begin or end of a data fetch of the rank's own process. */
static bool is_fetch_row(const detect_t *d, size_t i)
{
    const nnp_host_rows_t *h = &d->m->host;
    return is_fetch_str(d, h->event[i]);
}

static int fetch_ranges(detect_t *d)
{
    const nnp_host_rows_t *h = &d->m->host;
    const nnp_markers_t *mk = &d->m->markers;
    size_t cap = 0, *begin_of = NULL;
    fetch_range_t *v;

    for (size_t i = 0; i < mk->t.n; i++)
        cap += is_fetch_marker(d, i);
    for (size_t i = 0; i < h->t.n; i++)
        cap += h->kind[i] == NNP_HOST_ROW_BEGIN && is_fetch_row(d, i);
    if (cap == 0)
        return NNP_OK;
    v = nnp__malloc(cap * sizeof(*v));
    if (!v || nnp__host_pairs(h, d->m->threads.t.n, &begin_of) != NNP_OK) {
        nnp__free(v);
        return nnp__fail(NNP_ENOMEM, "out of memory in step trace");
    }
    for (size_t i = 0; i < mk->t.n; i++)
        if (is_fetch_marker(d, i))
            v[d->n_fetch_ranges++] = (fetch_range_t){mk->start_ns[i], mk->end_ns[i],
                                                     is_dataloader_str(d, mk->message[i])};
    /* An end pairs with a begin of its own event (host_pairs.h), so a fetch end closes a
     * fetch begin. */
    for (size_t i = 0; i < h->t.n; i++) {
        size_t b = begin_of[i];
        if (b != NNP_HOST_NO_PAIR && is_fetch_row(d, i))
            v[d->n_fetch_ranges++] =
                (fetch_range_t){h->ts_ns[b], h->ts_ns[i], is_dataloader_str(d, h->event[i])};
    }
    nnp__free(begin_of);
    qsort(v, d->n_fetch_ranges, sizeof(*v), cmp_span);
    d->fetch_ranges = v;
    d->fetch_starts = nnp__malloc(cap * sizeof(*d->fetch_starts));
    if (!d->fetch_starts)
        return nnp__fail(NNP_ENOMEM, "out of memory in step trace");
    for (size_t i = 0; i < d->n_fetch_ranges; i++)
        d->fetch_starts[i] = v[i].start_ns;
    return NNP_OK;
}

static bool is_data_fetch(const detect_t *d, size_t i)
{
    return is_fetch_str(d, d->m->ops.type[i]) || is_fetch_str(d, d->m->ops.name[i]);
}

/* The first op of ops, SIZE_MAX when none. */
static size_t first_op(range_t ops)
{
    return ops.lo < ops.hi ? ops.lo : SIZE_MAX;
}

/* The first fetch range starting inside [begin, end), or NULL. */
static const fetch_range_t *first_fetch_range(const detect_t *d, int64_t begin, int64_t end)
{
    size_t i = lower_bound(d->fetch_starts, d->n_fetch_ranges, begin);
    return i < d->n_fetch_ranges && d->fetch_starts[i] < end ? &d->fetch_ranges[i] : NULL;
}

/* The step's first data fetch (an op, or a range: first_fetch_range): false when none. */
static bool step_fetch(const detect_t *d, range_t ops, int64_t begin, int64_t end, fetch_t *f,
                       size_t *first_op)
{
    const nnp_ops_t *o = &d->m->ops;
    const fetch_range_t *fr = first_fetch_range(d, begin, end);
    size_t g = SIZE_MAX;
    for (size_t i = ops.lo; i < ops.hi && g == SIZE_MAX; i++)
        if (is_data_fetch(d, i))
            g = i;
    if (g != SIZE_MAX && (!fr || o->start_ns[g] <= fr->start_ns)) {
        f->start_ns = o->start_ns[g];
        f->end_ns = op_closed(o, g) ? o->end_ns[g] : o->start_ns[g];
        f->dataloader = is_dataloader_str(d, o->name[g]) || is_dataloader_str(d, o->type[g]);
        *first_op = g + 1;
        return true;
    }
    if (!fr)
        return false;
    *f = (fetch_t){fr->start_ns, fr->end_ns, fr->dataloader};
    *first_op = ops.lo;
    return true;
}

/* Auto fp (formats.md 2.2): the first op starting once the step's first data fetch has
 * finished, not itself a fetch op (the fetch goes to the row); with no fetch, or nothing
 * after it, the first op. */
static size_t auto_fp(const detect_t *d, range_t ops, nnp_step_row_t *r)
{
    const nnp_ops_t *o = &d->m->ops;
    fetch_t f;
    size_t from;
    if (!step_fetch(d, ops, r->begin_ns, r->end_ns, &f, &from))
        return first_op(ops);
    r->fetch_ns = f.end_ns - f.start_ns;
    r->fetch_dataloader = f.dataloader;
    for (size_t i = from; i < ops.hi; i++)
        if (o->start_ns[i] >= f.end_ns && !is_data_fetch(d, i))
            return i;
    return first_op(ops);
}

/* Which ops last_ending considers. */
typedef struct end_filter {
    uint32_t name_id;   /* != 0: that name only */
    const char *prefix; /* != NULL: names starting with it only */
    int64_t end_max;    /* ends <= end_max only */
    bool backward;      /* PyTorch's backward ops only (is_backward_op) */
} end_filter_t;

/* The op of ops whose (closed) end is the latest among those the filter accepts. Ties go
 * to the later op in start order. SIZE_MAX when none. */
static size_t last_ending(const detect_t *d, range_t ops, end_filter_t f)
{
    const nnp_model_t *m = d->m;
    const nnp_ops_t *o = &m->ops;
    const char *prefix = f.prefix;
    size_t best = SIZE_MAX;
    for (size_t i = ops.lo; i < ops.hi; i++) {
        if (!op_closed(o, i) || o->end_ns[i] > f.end_max)
            continue;
        if (f.name_id && o->name[i] != f.name_id)
            continue;
        if (f.backward && !is_backward_op(d, i))
            continue;
        if (prefix && strncmp(nnp__model_str(m, o->name[i]), prefix, strlen(prefix)) != 0)
            continue;
        if (best == SIZE_MAX || o->end_ns[i] >= o->end_ns[best])
            best = i;
    }
    return best;
}

static void detect_fp(detect_t *d, range_t ops, nnp_step_row_t *r)
{
    const nnp_ops_t *o = &d->m->ops;
    size_t i = SIZE_MAX;
    int64_t ts;
    if (mark_lookup(d->fp, d->n_fp, r->step_id, false, &ts)) {
        r->fp_ns = ts;
        return;
    }
    if (d->has_fp_over) {
        for (size_t k = ops.lo; k < ops.hi && i == SIZE_MAX && d->fp_id; k++)
            if (o->name[k] == d->fp_id)
                i = k;
        d->fp_missed |= i == SIZE_MAX;
    }
    if (i == SIZE_MAX)
        i = auto_fp(d, ops, r);
    if (i != SIZE_MAX) {
        r->fp_ns = o->start_ns[i];
        r->fp_op = o->name[i];
    }
}

static void detect_bp(detect_t *d, range_t ops, range_t comms, nnp_step_row_t *r)
{
    const nnp_model_t *m = d->m;
    size_t i = SIZE_MAX;
    int64_t ts;
    if (mark_lookup(d->bp, d->n_bp, r->step_id, true, &ts)) {
        r->bp_ns = ts;
        return;
    }
    if (d->has_bp_over) {
        if (d->bp_id)
            i = last_ending(d, ops, (end_filter_t){d->bp_id, NULL, INT64_MAX, false});
        d->bp_missed |= i == SIZE_MAX;
    }
    /* Gradients are reduced after the backward pass: bp is the last op to finish before
     * the step's last communication op starts (seed 001, formats.md 2.2 bp rule). */
    if (i == SIZE_MAX && comms.lo < comms.hi)
        i = last_ending(d, ops, (end_filter_t){0, NULL, m->comms.start_ns[comms.hi - 1], false});
    /* Without communication (one device) the backward ops are those of MindSpore's
     * Gradients scope, or those PyTorch's autograd ran for a forward op; with none either,
     * this is a forward-only (inference) step. */
    if (i == SIZE_MAX)
        i = last_ending(d, ops, (end_filter_t){0, BACKWARD_SCOPE, INT64_MAX, false});
    if (i == SIZE_MAX)
        i = last_ending(d, ops, (end_filter_t){0, NULL, INT64_MAX, true});
    if (i != SIZE_MAX) {
        r->bp_ns = m->ops.end_ns[i];
        r->bp_op = m->ops.name[i];
    }
}

/* Phase lengths (formats.md 2.1); those that need an unknown point are UNKNOWN_NS. */
static void phases(nnp_step_row_t *r)
{
    bool fp = r->fp_ns >= 0, bp = r->bp_ns >= 0;
    r->total_ns = r->end_ns - r->start_point_ns;
    r->iteration_interval_ns = fp ? r->fp_ns - r->start_point_ns : UNKNOWN_NS;
    r->fp_and_bp_ns = fp && bp ? r->bp_ns - r->fp_ns : UNKNOWN_NS;
    r->tail_ns = bp ? r->end_ns - r->bp_ns : UNKNOWN_NS;
}

typedef nnp_id_pos_t id_pos_t;

int nnp__step_cmp_id_pos(const void *a, const void *b)
{
    const id_pos_t *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* The op name used most often at fp (or bp); ties go to the one seen first. 0 = none. */
static int most_common(const nnp_step_row_t *rows, size_t n, bool bp, uint32_t *out)
{
    id_pos_t *v;
    size_t k = 0, best_count = 0;
    uint32_t best_pos = UINT32_MAX;
    *out = 0;
    if (n == 0)
        return NNP_OK;
    v = nnp__malloc(n * sizeof(*v));
    if (!v)
        return nnp__fail(NNP_ENOMEM, "out of memory in step trace");
    for (size_t i = 0; i < n; i++) {
        uint32_t id = bp ? rows[i].bp_op : rows[i].fp_op;
        if (id)
            v[k++] = (id_pos_t){id, (uint32_t)i};
    }
    qsort(v, k, sizeof(*v), nnp__step_cmp_id_pos);
    for (size_t i = 0; i < k;) {
        size_t j = i;
        while (j < k && v[j].id == v[i].id)
            j++;
        if (j - i > best_count || (j - i == best_count && v[i].pos < best_pos)) {
            best_count = j - i;
            best_pos = v[i].pos;
            *out = v[i].id;
        }
        i = j;
    }
    nnp__free(v);
    return NNP_OK;
}

/* A step to analyse: its begin and id (the sort key) and its row in the steps table. */
typedef struct step_ref {
    int64_t begin_ns;
    uint64_t id;
    size_t idx;
} step_ref_t;

/* By begin time; equal begins (steps of several graphs) by id, then table row, so the
 * order, and with it every output, never depends on qsort's instability. */
static int cmp_step_ref(const void *a, const void *b)
{
    const step_ref_t *x = a, *y = b;
    if (x->begin_ns != y->begin_ns)
        return x->begin_ns < y->begin_ns ? -1 : 1;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Overrides come from options or PROFILING_FP_START/PROFILING_BP_END; NULL or "" = auto. */
static bool nonempty(const char *s)
{
    return s && *s;
}

int nnp__step_trace_run(const nnp_actx_t *c, nnp_step_trace_t *out)
{
    const nnp_model_t *m = c->m;
    const nnp_spans_t *sp = &m->steps;
    detect_t d;
    step_ref_t *order = NULL;
    size_t n_order = 0;
    int rc;

    memset(out, 0, sizeof(*out));
    memset(&d, 0, sizeof(d));
    d.m = m;
    d.has_fp_over = nonempty(m->info.fp_point);
    d.has_bp_over = nonempty(m->info.bp_point);
    d.fp_id = d.has_fp_over ? nnp__model_find(m, m->info.fp_point) : 0;
    d.bp_id = d.has_bp_over ? nnp__model_find(m, m->info.bp_point) : 0;
    rc = marks_sorted(&m->fp, &d.fp, &d.n_fp);
    if (rc == NNP_OK)
        rc = marks_sorted(&m->bp, &d.bp, &d.n_bp);
    if (rc == NNP_OK && !(d.str_flags = flag_strings(m)))
        rc = nnp__fail(NNP_ENOMEM, "out of memory in step trace");
    if (rc == NNP_OK)
        rc = fetch_ranges(&d);
    if (rc != NNP_OK)
        goto out;

    /* The steps table is kept in recorded order; analyse by begin time. A step whose end
     * was never recorded (crash) has no phases and is left out. */
    if (sp->t.n) {
        order = nnp__malloc(sp->t.n * sizeof(*order));
        out->rows = nnp__calloc(sp->t.n, sizeof(*out->rows));
        if (!order || !out->rows) {
            rc = nnp__fail(NNP_ENOMEM, "out of memory in step trace");
            goto out;
        }
    }
    for (size_t i = 0; i < sp->t.n; i++) {
        if (sp->end_ns[i] == NNP_OPEN_END || !nnp__actx_step_wanted(c, sp->id[i]))
            continue;
        order[n_order++] = (step_ref_t){sp->start_ns[i], sp->id[i], i};
    }
    if (n_order > 1) /* order is NULL when there are no steps: qsort must not see it */
        qsort(order, n_order, sizeof(*order), cmp_step_ref);

    for (size_t k = 0; k < n_order; k++) {
        size_t i = order[k].idx;
        nnp_step_row_t *r = &out->rows[out->n++];
        range_t ops, comms;
        r->step_id = sp->id[i];
        r->graph_id = sp->graph_id[i];
        r->begin_ns = sp->start_ns[i];
        r->end_ns = sp->end_ns[i];
        /* The gap before a step (data loading, host work) belongs to it: it starts where
         * the previous analysed step ended (formats.md 2.1, 2.x start_point). */
        r->start_point_ns = k ? out->rows[out->n - 2].end_ns : r->begin_ns;
        r->fp_ns = r->bp_ns = r->fetch_ns = UNKNOWN_NS;
        ops = nnp__step_in_span(m->ops.start_ns, m->ops.t.n, r->begin_ns, r->end_ns);
        comms = nnp__step_in_span(m->comms.start_ns, m->comms.t.n, r->begin_ns, r->end_ns);
        detect_fp(&d, ops, r);
        detect_bp(&d, ops, comms, r);
        phases(r);
    }

    out->inference = out->n > 0;
    for (size_t k = 0; k < out->n; k++)
        if (out->rows[k].bp_ns >= 0)
            out->inference = false;
    if (d.fp_missed)
        NNP_LOG_W("fp_point '%s' not found in every step: those steps use the automatic fp",
                  m->info.fp_point);
    if (d.bp_missed)
        NNP_LOG_W("bp_point '%s' not found in every step: those steps use the automatic bp",
                  m->info.bp_point);
    rc = most_common(out->rows, out->n, false, &out->fp_name);
    if (rc == NNP_OK)
        rc = most_common(out->rows, out->n, true, &out->bp_name);
out:
    nnp__free(order);
    nnp__free(d.fp);
    nnp__free(d.bp);
    nnp__free(d.str_flags);
    nnp__free(d.fetch_ranges);
    nnp__free(d.fetch_starts);
    if (rc != NNP_OK)
        nnp__step_trace_fini(out);
    return rc;
}

void nnp__step_trace_fini(nnp_step_trace_t *st)
{
    if (!st)
        return;
    nnp__free(st->rows);
    memset(st, 0, sizeof(*st));
}
