/* lookup.c - lookups several analyses share: the analysed step an instant belongs to
 * (analyse.h: an op belongs to the step it starts in; a kernel to the step of its launch),
 * the device time an op launched (summed kernel time per correlation id), the op that
 * launched a kernel and the launch of a kernel. Built once per analysis, O(log n) a query. */
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"

int nnp__step_spans_init(const nnp_step_trace_t *st, nnp_step_spans_t *s)
{
    memset(s, 0, sizeof(*s));
    if (!st || st->n == 0)
        return NNP_OK;
    s->max_end = nnp__malloc(st->n * sizeof(int64_t));
    if (!s->max_end)
        return nnp__fail(NNP_ENOMEM, "out of memory indexing steps");
    s->rows = st->rows;
    s->n = st->n;
    for (size_t k = 0; k < st->n; k++) {
        int64_t e = st->rows[k].end_ns;
        s->max_end[k] = k && s->max_end[k - 1] > e ? s->max_end[k - 1] : e;
    }
    return NNP_OK;
}

void nnp__step_spans_fini(nnp_step_spans_t *s)
{
    nnp__free(s->max_end);
    memset(s, 0, sizeof(*s));
}

/* The number of rows that begin at or before t, searched in rows [lo, hi). */
static size_t rows_begun(const nnp_step_spans_t *s, int64_t t, size_t lo, size_t hi)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->rows[mid].begin_ns <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The step holding t among the first `begun` rows (those that begin at or before t). */
static size_t holder(const nnp_step_spans_t *s, int64_t t, size_t begun)
{
    /* Rows are sorted by begin; max_end[k] is the latest end of rows 0..k, so the backward
     * scan stops early even when steps of several graphs overlap. */
    for (size_t k = begun; k-- > 0 && s->max_end[k] > t;) {
        if (s->rows[k].end_ns > t)
            return k;
    }
    return SIZE_MAX;
}

size_t nnp__step_spans_find(const nnp_step_spans_t *s, int64_t t)
{
    return holder(s, t, rows_begun(s, t, 0, s->n));
}

/* Rows a near search steps over one by one before it falls back to a binary search. */
#define NEAR_STEPS 4

size_t nnp__step_spans_find_near(const nnp_step_spans_t *s, int64_t t, size_t *hint)
{
    size_t lo = *hint;
    if (lo > s->n || (lo > 0 && s->rows[lo - 1].begin_ns > t)) {
        lo = rows_begun(s, t, 0, s->n); /* t went back in time */
    } else {
        size_t k = 0;
        while (lo < s->n && s->rows[lo].begin_ns <= t && k++ < NEAR_STEPS)
            lo++;
        if (lo < s->n && s->rows[lo].begin_ns <= t)
            lo = rows_begun(s, t, lo, s->n);
    }
    *hint = lo;
    return holder(s, t, lo);
}

static int cmp_ktime(const void *a, const void *b)
{
    const nnp_ktime_t *x = a, *y = b;
    return (x->corr > y->corr) - (x->corr < y->corr);
}

int nnp__kindex_build(const nnp_model_t *m, nnp_kindex_t *ki)
{
    const nnp_kernels_t *k = &m->kernels;
    size_t n = 0;
    memset(ki, 0, sizeof(*ki));
    if (k->t.n == 0)
        return NNP_OK;
    ki->v = nnp__malloc(k->t.n * sizeof(nnp_ktime_t));
    if (!ki->v)
        return nnp__fail(NNP_ENOMEM, "out of memory indexing kernels");
    for (size_t i = 0; i < k->t.n; i++) {
        /* A reversed kernel (clock glitch) counts as 0, as in op statistics. */
        int64_t d = k->end_ns[i] > k->start_ns[i] ? k->end_ns[i] - k->start_ns[i] : 0;
        if (k->corr[i])
            ki->v[n++] = (nnp_ktime_t){k->corr[i], d, k->start_ns[i], k->end_ns[i], 1};
    }
    qsort(ki->v, n, sizeof(nnp_ktime_t), cmp_ktime);
    /* Fold the kernels of one launch into one entry: one lookup gives the op's time. */
    for (size_t i = 0; i < n; i++) {
        nnp_ktime_t *d = ki->n ? &ki->v[ki->n - 1] : NULL;
        if (d && d->corr == ki->v[i].corr) {
            d->dur_ns += ki->v[i].dur_ns;
            d->first_ns = ki->v[i].first_ns < d->first_ns ? ki->v[i].first_ns : d->first_ns;
            d->last_ns = ki->v[i].last_ns > d->last_ns ? ki->v[i].last_ns : d->last_ns;
            d->n++;
        } else {
            ki->v[ki->n++] = ki->v[i];
        }
    }
    return NNP_OK;
}

void nnp__kindex_fini(nnp_kindex_t *ki)
{
    nnp__free(ki->v);
    memset(ki, 0, sizeof(*ki));
}

const nnp_ktime_t *nnp__kindex_entry(const nnp_kindex_t *ki, uint64_t corr)
{
    size_t lo = 0, hi = ki->n;
    if (corr == 0)
        return NULL;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ki->v[mid].corr < corr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ki->n && ki->v[lo].corr == corr ? &ki->v[lo] : NULL;
}

bool nnp__kindex_find(const nnp_kindex_t *ki, uint64_t corr, int64_t *dur)
{
    const nnp_ktime_t *e = nnp__kindex_entry(ki, corr);
    if (!e)
        return false;
    *dur = e->dur_ns;
    return true;
}

bool nnp__op_compute_time(const nnp_model_t *m, const nnp_kindex_t *ki, size_t i, int64_t *dur)
{
    const nnp_ops_t *o = &m->ops;
    if (o->end_ns[i] == NNP_OPEN_END)
        return false;
    if (nnp__kindex_find(ki, o->corr[i], dur))
        return true;
    *dur = o->end_ns[i] > o->start_ns[i] ? o->end_ns[i] - o->start_ns[i] : 0;
    return true;
}

static int cmp_op_ref(const void *a, const void *b)
{
    const nnp_op_ref_t *x = a, *y = b;
    if (x->corr != y->corr)
        return x->corr < y->corr ? -1 : 1;
    return (x->op > y->op) - (x->op < y->op); /* the first recorded op wins */
}

int nnp__op_index_build(const nnp_model_t *m, nnp_op_index_t *ix)
{
    const nnp_ops_t *o = &m->ops;
    memset(ix, 0, sizeof(*ix));
    if (o->t.n == 0 || m->kernels.t.n == 0)
        return NNP_OK;
    ix->v = nnp__malloc(o->t.n * sizeof(nnp_op_ref_t));
    if (!ix->v)
        return nnp__fail(NNP_ENOMEM, "out of memory indexing ops");
    for (size_t i = 0; i < o->t.n; i++) {
        if (o->corr[i])
            ix->v[ix->n++] = (nnp_op_ref_t){o->corr[i], i};
    }
    qsort(ix->v, ix->n, sizeof(nnp_op_ref_t), cmp_op_ref);
    return NNP_OK;
}

void nnp__op_index_fini(nnp_op_index_t *ix)
{
    nnp__free(ix->v);
    memset(ix, 0, sizeof(*ix));
}

size_t nnp__op_index_find(const nnp_op_index_t *ix, uint64_t corr)
{
    size_t lo = 0, hi = ix->n;
    if (corr == 0)
        return SIZE_MAX;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ix->v[mid].corr < corr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ix->n && ix->v[lo].corr == corr ? ix->v[lo].op : SIZE_MAX;
}

/* ---- launches: the host call that queued a kernel (kernels.launch == calls.launch) ---- */

static int cmp_launch_ref(const void *a, const void *b)
{
    const nnp_launch_ref_t *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row); /* the first recorded launch wins */
}

int nnp__launch_index_build(const nnp_model_t *m, nnp_launch_index_t *ix)
{
    const nnp_calls_t *l = &m->calls;
    memset(ix, 0, sizeof(*ix));
    if (l->t.n == 0)
        return NNP_OK;
    ix->v = nnp__malloc(l->t.n * sizeof(nnp_launch_ref_t));
    if (!ix->v)
        return nnp__fail(NNP_ENOMEM, "out of memory indexing launches");
    for (size_t i = 0; i < l->t.n; i++)
        if (l->launch[i])
            ix->v[ix->n++] = (nnp_launch_ref_t){l->launch[i], i};
    qsort(ix->v, ix->n, sizeof(nnp_launch_ref_t), cmp_launch_ref);
    return NNP_OK;
}

void nnp__launch_index_fini(nnp_launch_index_t *ix)
{
    nnp__free(ix->v);
    memset(ix, 0, sizeof(*ix));
}

size_t nnp__launch_index_find(const nnp_launch_index_t *ix, uint64_t id)
{
    size_t lo = 0, hi = ix->n;
    if (id == 0)
        return SIZE_MAX;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ix->v[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ix->n && ix->v[lo].id == id ? ix->v[lo].row : SIZE_MAX;
}

size_t nnp__kernel_step(const nnp_step_spans_t *s, const nnp_model_t *m,
                        const nnp_launch_index_t *ix, size_t k)
{
    size_t l = ix ? nnp__launch_index_find(ix, m->kernels.launch[k]) : SIZE_MAX;
    if (l != SIZE_MAX)
        return nnp__step_spans_find(s, m->calls.start_ns[l]);
    return nnp__step_spans_find(s, m->kernels.start_ns[k]);
}
