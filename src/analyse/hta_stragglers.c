/* hta_stragglers.c - HTA's get_potential_stragglers across ranks (hta_internal.h), with
 * its default metric (hta/analyzers/straggler.py): the normalised start time of the last
 * long NCCL kernel of the (stream, kernel) whose duration varies most across ranks; the
 * num_candidates latest starters of each iteration are counted as potential stragglers.
 * Each rank leaves only its per-iteration extent and its NCCL kernels here. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/hta.h"
#include "analyse/hta_internal.h"
#include "util/csv_writer.h"
#include "util/util.h"

/* The kernels the default metric looks at: NCCL's ("ncclKernel..." names). */
#define NCCL_PREFIX "ncclKernel"
#define INITIAL_CAP 64

/* Extent of one rank's rows of one iteration. */
typedef struct iter_span {
    int rank;
    int64_t iter, ts_min, end_max;
} iter_span_t;

/* An NCCL kernel of a profiler step (iteration > 0, stream > 0). */
typedef struct comm_k {
    int rank;
    int64_t iter, ts, dur;
    uint32_t stream;
    char *name;
    size_t seq; /* order within the rank, for "last" */
} comm_k_t;

struct hta_straggle {
    iter_span_t *spans;
    size_t n_spans, cap_spans;
    comm_k_t *k;
    size_t nk, cap_k;
    int64_t *steps; /* ProfilerStep ids of every rank (the available profiler steps) */
    size_t n_steps, cap_steps;
    int *ranks;
    size_t n_ranks, cap_ranks;
};

static int grow(void **p, size_t *cap, size_t n, size_t width)
{
    void *np;
    size_t nc;
    if (n < *cap)
        return NNP_OK;
    nc = *cap ? *cap * 2 : INITIAL_CAP;
    np = nnp__realloc(*p, nc * width);
    if (!np)
        return nnp__fail(NNP_ENOMEM, "HTA: out of memory");
    *p = np;
    *cap = nc;
    return NNP_OK;
}

int nnp__hta_straggle_create(hta_straggle_t **out)
{
    *out = nnp__calloc(1, sizeof(hta_straggle_t));
    return *out ? NNP_OK : nnp__fail(NNP_ENOMEM, "HTA: out of memory");
}

void nnp__hta_straggle_destroy(hta_straggle_t *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nk; i++)
        nnp__free(s->k[i].name);
    nnp__free(s->k);
    nnp__free(s->spans);
    nnp__free(s->steps);
    nnp__free(s->ranks);
    nnp__free(s);
}

static int span_add(hta_straggle_t *s, int rank, int64_t iter, int64_t ts, int64_t end)
{
    size_t i;
    if (iter < 0)
        return NNP_OK;
    for (i = s->n_spans; i-- > 0 && (s->spans[i].rank == rank);)
        if (s->spans[i].iter == iter) {
            s->spans[i].ts_min = ts < s->spans[i].ts_min ? ts : s->spans[i].ts_min;
            s->spans[i].end_max = end > s->spans[i].end_max ? end : s->spans[i].end_max;
            return NNP_OK;
        }
    if (grow((void **)&s->spans, &s->cap_spans, s->n_spans, sizeof(iter_span_t)) != NNP_OK)
        return NNP_ENOMEM;
    s->spans[s->n_spans++] = (iter_span_t){rank, iter, ts, end};
    return NNP_OK;
}

/* A CPU row of the filtered trace (start before the last profiler step, when filtered). */
static int cpu_row(hta_straggle_t *s, const hta_view_t *v, int64_t start_ns, int64_t end_ns)
{
    int64_t ts = nnp__hta_up(v, start_ns),
            end = end_ns == NNP_OPEN_END ? ts : nnp__hta_down(v, end_ns);
    if (v->filtered && ts >= v->last_start)
        return NNP_OK;
    return span_add(s, v->rank, nnp__hta_iteration(v, ts), ts, end);
}

int nnp__hta_straggle_add(hta_straggle_t *s, const hta_view_t *v)
{
    const nnp_model_t *m = v->m;
    int rc = grow((void **)&s->ranks, &s->cap_ranks, s->n_ranks, sizeof(int));
    if (rc != NNP_OK)
        return rc;
    s->ranks[s->n_ranks++] = v->rank;
    for (size_t i = 0; i < v->n_steps; i++) { /* the profiler steps this rank keeps */
        if (v->filtered && v->steps[i].ts >= v->last_start)
            continue;
        if (grow((void **)&s->steps, &s->cap_steps, s->n_steps, sizeof(int64_t)) != NNP_OK)
            return NNP_ENOMEM;
        s->steps[s->n_steps++] = (int64_t)v->steps[i].id;
    }
    for (size_t i = 0; rc == NNP_OK && i < m->steps.t.n; i++)
        rc = cpu_row(s, v, m->steps.start_ns[i], m->steps.end_ns[i]);
    for (size_t i = 0; rc == NNP_OK && i < m->ops.t.n; i++)
        rc = cpu_row(s, v, m->ops.start_ns[i], m->ops.end_ns[i]);
    for (size_t i = 0; rc == NNP_OK && i < m->markers.t.n; i++)
        rc = cpu_row(s, v, m->markers.start_ns[i], m->markers.end_ns[i]);
    for (size_t i = 0; rc == NNP_OK && i < m->calls.t.n; i++)
        rc = cpu_row(s, v, m->calls.start_ns[i], m->calls.end_ns[i]);
    for (size_t i = 0; rc == NNP_OK && i < v->nk; i++) {
        const hta_kernel_t *k = &v->k[i];
        const char *name = k->text;
        rc = span_add(s, v->rank, k->iter, k->ts, k->end);
        if (rc != NNP_OK || k->iter <= 0 || k->stream == 0 ||
            strncmp(name, NCCL_PREFIX, strlen(NCCL_PREFIX)) != 0)
            continue;
        if (grow((void **)&s->k, &s->cap_k, s->nk, sizeof(comm_k_t)) != NNP_OK)
            return NNP_ENOMEM;
        s->k[s->nk] =
            (comm_k_t){v->rank, k->iter, k->ts, k->end - k->ts, k->stream, nnp__strdup(name), i};
        if (!s->k[s->nk].name)
            return nnp__fail(NNP_ENOMEM, "HTA: out of memory");
        s->nk++;
    }
    return rc;
}

/* ---- the cross-rank metric ---- */

static bool is_step(const hta_straggle_t *s, int64_t iter)
{
    for (size_t i = 0; i < s->n_steps; i++)
        if (s->steps[i] == iter)
            return true;
    return false;
}

/* Order of (stream, name) keys, then iteration, then rank: pandas groupby's sorted keys. */
static int cmp_key(const void *a, const void *b)
{
    const comm_k_t *x = a, *y = b;
    int d;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    if ((d = strcmp(x->name, y->name)) != 0)
        return d;
    if (x->iter != y->iter)
        return x->iter < y->iter ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static bool same(const comm_k_t *x, const comm_k_t *y, bool with_iter, bool with_rank)
{
    return x->stream == y->stream && strcmp(x->name, y->name) == 0 &&
           (!with_iter || x->iter == y->iter) && (!with_rank || x->rank == y->rank);
}

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

typedef struct count {
    int rank;
    int64_t n;
    bool in_series; /* the rank has a metric row (HTA's Series holds it) */
    bool chosen;
} count_t;

static int cmp_count(const void *a, const void *b)
{
    const count_t *x = a, *y = b;
    if (x->in_series != y->in_series)
        return x->in_series ? -1 : 1;
    if (x->n != y->n)
        return x->n > y->n ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank); /* ties: lower rank first */
}

/* Marks the rows at or above the k-th largest metric of rows [a, b) (one iteration). */
static void top_k(const double *metric, bool *hit, size_t a, size_t b)
{
    double *v = nnp__malloc((b - a) * sizeof(double)), thr;
    if (!v)
        return;
    memcpy(v, metric + a, (b - a) * sizeof(double));
    qsort(v, b - a, sizeof(double), cmp_desc);
    /* HTA indexes the sorted list at num_candidates - 1 (an error when shorter): the
     * smallest value here. */
    thr = v[(b - a) >= NNP_HTA_NUM_CANDIDATES ? NNP_HTA_NUM_CANDIDATES - 1 : b - a - 1];
    for (size_t i = a; i < b; i++)
        hit[i] = metric[i] >= thr;
    nnp__free(v);
}

int nnp__hta_straggle_write(hta_straggle_t *s, struct nnp_csv *result, struct nnp_csv *metric)
{
    int64_t t_min = INT64_MAX, end_max = INT64_MIN, *iters = NULL;
    size_t n_iters = 0, n_last = 0, best = SIZE_MAX, n_rows = 0;
    double mean_iter, best_mean = -INFINITY, *met = NULL;
    comm_k_t *last = NULL, *rows = NULL;
    bool *hit = NULL;
    count_t *counts = NULL;
    int rc = NNP_OK;

    /* Extent and number of the selected iterations, over every rank. */
    iters = nnp__malloc((s->n_spans + 1) * sizeof(int64_t));
    if (!iters)
        return nnp__fail(NNP_ENOMEM, "HTA: out of memory");
    for (size_t i = 0; i < s->n_spans; i++) {
        const iter_span_t *p = &s->spans[i];
        size_t j;
        if (!is_step(s, p->iter))
            continue;
        t_min = p->ts_min < t_min ? p->ts_min : t_min;
        end_max = p->end_max > end_max ? p->end_max : end_max;
        for (j = 0; j < n_iters && iters[j] != p->iter; j++)
            ;
        if (j == n_iters)
            iters[n_iters++] = p->iter;
    }
    nnp__free(iters);
    if (n_iters == 0 || s->n_ranks < 2) {
        NNP_LOG_I("HTA: stragglers need profiler steps on two or more ranks (%zu ranks, %zu "
                  "steps): none reported",
                  s->n_ranks, n_iters);
        goto write;
    }
    mean_iter = (double)(end_max - t_min) / (double)n_iters;
    /* Long NCCL kernels of the selected iterations; the last of each (rank, stream,
     * iteration, name) group. */
    last = nnp__malloc((s->nk + 1) * sizeof(comm_k_t));
    if (!last) {
        rc = nnp__fail(NNP_ENOMEM, "HTA: out of memory");
        goto out;
    }
    if (s->nk)
        qsort(s->k, s->nk, sizeof(comm_k_t), cmp_key);
    for (size_t i = 0; i < s->nk; i++) {
        const comm_k_t *k = &s->k[i];
        if (!is_step(s, k->iter) || (double)k->dur < mean_iter * NNP_HTA_MIN_NORMALIZED_DURATION)
            continue;
        if (n_last && same(&last[n_last - 1], k, true, true))
            last[n_last - 1] = *k; /* sorted by start: a later row replaces */
        else
            last[n_last++] = *k;
    }
    /* The (stream, name) whose duration's std across ranks, averaged over iterations, is
     * largest (idxmax: the first such key in sorted order). */
    for (size_t a = 0; a < n_last;) {
        size_t b = a;
        double sum_std = 0;
        size_t n_std = 0;
        while (b < n_last && same(&last[b], &last[a], false, false))
            b++;
        for (size_t i = a; i < b;) { /* one iteration: std over its ranks */
            size_t j = i;
            double mean = 0, var = 0;
            while (j < b && last[j].iter == last[i].iter)
                j++;
            if (j - i >= 2) {
                for (size_t q = i; q < j; q++)
                    mean += (double)last[q].dur / mean_iter;
                mean /= (double)(j - i);
                for (size_t q = i; q < j; q++)
                    var += ((double)last[q].dur / mean_iter - mean) *
                           ((double)last[q].dur / mean_iter - mean);
                sum_std += sqrt(var / (double)(j - i - 1));
                n_std++;
            }
            i = j;
        }
        if (n_std && sum_std / (double)n_std > best_mean) {
            best_mean = sum_std / (double)n_std;
            best = a;
        }
        a = b;
    }
    if (best == SIZE_MAX) {
        NNP_LOG_I("HTA: no long NCCL kernel ran on two or more ranks: no stragglers reported");
        goto write;
    }
    rows = nnp__malloc(n_last * sizeof(comm_k_t));
    met = nnp__malloc(n_last * sizeof(double));
    hit = nnp__calloc(n_last, sizeof(bool));
    if (!rows || !met || !hit) {
        rc = nnp__fail(NNP_ENOMEM, "HTA: out of memory");
        goto out;
    }
    for (size_t i = best; i < n_last && same(&last[i], &last[best], false, false); i++) {
        rows[n_rows] = last[i];
        met[n_rows++] = (double)(last[i].ts - t_min) / mean_iter;
    }
    for (size_t i = 0; i < n_rows;) { /* the top num_candidates of each iteration */
        size_t j = i;
        while (j < n_rows && rows[j].iter == rows[i].iter)
            j++;
        top_k(met, hit, i, j);
        i = j;
    }
write:
    counts = nnp__calloc(s->n_ranks + 1, sizeof(count_t));
    if (!counts) {
        rc = nnp__fail(NNP_ENOMEM, "HTA: out of memory");
        goto out;
    }
    for (size_t r = 0; r < s->n_ranks; r++) {
        counts[r].rank = s->ranks[r];
        for (size_t i = 0; i < n_rows; i++)
            if (rows[i].rank == s->ranks[r]) {
                counts[r].in_series = true;
                counts[r].n += hit[i];
            }
    }
    qsort(counts, s->n_ranks, sizeof(count_t), cmp_count);
    for (size_t r = 0; r < s->n_ranks && r < NNP_HTA_NUM_CANDIDATES; r++)
        counts[r].chosen = counts[r].in_series;
    for (size_t r = 0; r < s->n_ranks; r++) {
        nnp__csv_int(result, counts[r].rank);
        nnp__csv_int(result, counts[r].n);
        nnp__csv_str(result, counts[r].chosen ? "Yes" : "No");
        nnp__csv_end_row(result);
    }
    for (size_t i = 0; i < n_rows; i++) {
        nnp__csv_int(metric, rows[i].rank);
        nnp__csv_int(metric, rows[i].iter);
        nnp__csv_uint(metric, rows[i].stream);
        nnp__csv_str(metric, rows[i].name);
        nnp__csv_double(metric, met[i]);
        nnp__csv_str(metric, hit[i] ? "Yes" : "No");
        nnp__csv_end_row(metric);
    }
out:
    nnp__free(last);
    nnp__free(rows);
    nnp__free(met);
    nnp__free(hit);
    nnp__free(counts);
    return rc;
}
