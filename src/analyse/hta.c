/* hta.c - Holistic Trace Analysis's analyses (hta.h), each with HTA's definition (source:
 * facebookresearch/HolisticTraceAnalysis, hta/analyzers, cited per function) on the
 * view of hta_view.c. Per-rank tables are written as ranks arrive; the kernel-type table,
 * the top kernels (sorted across ranks) and the stragglers are written at the end. Column
 * names are HTA's DataFrame columns. Rules for users: docs/OUTPUTS.md, "HTA analyses". */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "analyse/hta.h"
#include "analyse/hta_internal.h"
#include "util/csv_writer.h"
#include "util/util.h"

#define HTA_DIR "hta"
#define PERCENT 100.0
/* HTA rounds percentages to 2 decimals, the kernel-type share to 1. */
#define PCT_DECIMALS      2
#define TYPE_PCT_DECIMALS 1
#define RATIO_DECIMALS    2
/* Label of a group of kernels past the top ones (_aggr_gpu_kernel_time). */
#define OTHERS "others"
/* Longest kernel-type label: the three names joined by " overlapping ". */
#define LABEL_MAX 96

enum {
    F_TEMPORAL,
    F_IDLE,
    F_KTYPE,
    F_KERNELS,
    F_OVERLAP,
    F_LAUNCH,
    F_LAUNCH_SUMMARY,
    F_QUEUE,
    F_STRAGGLERS,
    F_STRAGGLER_METRIC,
    F_COUNT
};

static const char *const file_names[F_COUNT] = {"temporal_breakdown.csv",
                                                "idle_time_breakdown.csv",
                                                "kernel_type_breakdown.csv",
                                                "kernel_breakdown.csv",
                                                "comm_comp_overlap.csv",
                                                "cuda_kernel_launch_stats.csv",
                                                "cuda_kernel_launch_summary.csv",
                                                "queue_length_summary.csv",
                                                "stragglers.csv",
                                                "straggler_metric.csv"};

static const char *const *const headers[F_COUNT] = {
    (const char *const[]){"rank", "idle_time(ns)", "compute_time(ns)", "non_compute_time(ns)",
                          "kernel_time(ns)", "idle_time_pctg", "compute_time_pctg",
                          "non_compute_time_pctg", NULL},
    (const char *const[]){"rank", "stream", "idle_category", "idle_time", "idle_time_ratio", NULL},
    (const char *const[]){"kernel_type", "sum", "percentage", NULL},
    (const char *const[]){"name", "sum (ns)", "max (ns)", "min (ns)", "stddev", "mean (ns)",
                          "kernel_type", "rank", NULL},
    (const char *const[]){"rank", "comp_comm_overlap_pctg", NULL},
    (const char *const[]){"rank", "correlation", "cpu_duration", "gpu_duration", "launch_delay",
                          NULL},
    (const char *const[]){"rank", "launches", "short_gpu_kernels", "runtime_outliers",
                          "launch_delay_outliers", NULL},
    (const char *const[]){"rank", "stream", "count", "mean", "std", "min", "25%", "50%", "75%",
                          "max", NULL},
    (const char *const[]){"rank", "straggler_count", "potential_straggler", NULL},
    (const char *const[]){"rank", "iteration", "stream", "name", "normalized_start_time",
                          "is_straggler", NULL},
};

static const char *const ktype_names[HTA_KTYPES] = {"COMPUTATION", "COMMUNICATION", "MEMORY"};

/* One row of the top-kernel table, kept until every rank is in (it is sorted across ranks). */
typedef struct top_row {
    char *name;
    double sum, max, min, std, mean;
    int ktype, rank;
} top_row_t;

/* A kernel-type label ("COMPUTATION overlapping COMMUNICATION") and its time summed over
 * the ranks. */
typedef struct label_sum {
    char label[LABEL_MAX];
    int64_t sum;
} label_sum_t;

struct nnp_hta {
    nnp_outfile_t f[F_COUNT];
    nnp_csv_t w[F_COUNT];
    bool open[F_COUNT];
    top_row_t *top;
    size_t n_top, cap_top;
    label_sum_t labels[1u << HTA_KTYPES];
    size_t n_labels;
    hta_straggle_t *straggle;
    int rc;
};

double nnp__hta_round(double x, int decimals)
{
    double p = pow(10.0, decimals);
    return rint(x * p) / p;
}

static void csv_num(nnp_csv_t *w, double v)
{
    if (isfinite(v) && v == rint(v) && fabs(v) < 1e15)
        nnp__csv_int(w, (int64_t)v);
    else
        nnp__csv_double(w, v); /* NaN: an empty cell, as pandas writes it */
}

bool nnp__hta_applies(const nnp_model_t *m)
{
    return m->kernels.t.n > 0 && m->info.source_format &&
           strcmp(m->info.source_format, "pytorch-kineto") == 0;
}

int nnp__hta_create(const char *out_dir, nnp_hta_t **out)
{
    char dir[NNP_PATH_MAX];
    nnp_hta_t *h;
    int rc;
    *out = NULL;
    rc = nnp__path_join(dir, sizeof(dir), out_dir, HTA_DIR);
    if (rc == NNP_OK)
        rc = nnp__mkdir_p(dir, 0700);
    if (rc != NNP_OK)
        return rc;
    h = nnp__calloc(1, sizeof(*h));
    if (!h)
        return nnp__fail(NNP_ENOMEM, "HTA: out of memory");
    rc = nnp__hta_straggle_create(&h->straggle);
    for (int i = 0; rc == NNP_OK && i < F_COUNT; i++) {
        rc = nnp__out_open(&h->f[i], dir, file_names[i]);
        if (rc != NNP_OK)
            break;
        h->open[i] = true;
        rc = nnp__csv_init(&h->w[i], h->f[i].fd);
        if (rc == NNP_OK)
            nnp__csv_header(&h->w[i], headers[i]);
    }
    if (rc != NNP_OK) {
        nnp__hta_destroy(h);
        return rc;
    }
    *out = h;
    return NNP_OK;
}

/* ---- temporal breakdown (breakdown_analysis.py get_temporal_breakdown) ---- */

static int temporal(nnp_hta_t *h, const hta_view_t *v)
{
    nnp_csv_t *w = &h->w[F_TEMPORAL];
    size_t n, nc;
    hta_iv_t *all = nnp__hta_intervals(v, -1, &n), *comp;
    int64_t kernel_time, idle, compute, non_compute;
    if (!all)
        return nnp__fail(NNP_ENOMEM, "HTA: out of memory");
    if (n == 0) {
        nnp__free(all);
        return NNP_OK; /* HTA fails on a rank without GPU events: no row */
    }
    n = nnp__hta_merge(all, n);
    /* kernel time = end of the last merged interval - start of the first. */
    kernel_time = all[n - 1].end - all[0].ts;
    idle = kernel_time - nnp__hta_run_time(all, n);
    nnp__free(all);
    comp = nnp__hta_intervals(v, HTA_COMPUTATION, &nc);
    if (!comp)
        return nnp__fail(NNP_ENOMEM, "HTA: out of memory");
    nc = nnp__hta_merge(comp, nc);
    compute = nnp__hta_run_time(comp, nc);
    nnp__free(comp);
    non_compute = kernel_time - compute - idle;
    nnp__csv_int(w, v->rank);
    nnp__csv_int(w, idle);
    nnp__csv_int(w, compute);
    nnp__csv_int(w, non_compute);
    nnp__csv_int(w, kernel_time);
    csv_num(w, nnp__hta_round(PERCENT * ((double)idle / (double)kernel_time), PCT_DECIMALS));
    csv_num(w, nnp__hta_round(PERCENT * ((double)compute / (double)kernel_time), PCT_DECIMALS));
    csv_num(w, nnp__hta_round(PERCENT * ((double)non_compute / (double)kernel_time), PCT_DECIMALS));
    nnp__csv_end_row(w);
    return NNP_OK;
}

/* ---- idle time breakdown (breakdown_analysis.py _analyze_idle_time_for_stream) ---- */

typedef struct by_stream {
    uint32_t stream;
    size_t first; /* first appearance in the view, for the stream order */
} by_stream_t;

static int cmp_first(const void *a, const void *b)
{
    const by_stream_t *x = a, *y = b;
    return (x->first > y->first) - (x->first < y->first);
}

/* The view's streams in order of their first GPU event (gpu_kernels.stream.unique()). */
static by_stream_t *streams_of(const hta_view_t *v, size_t *n)
{
    by_stream_t *s = nnp__malloc((v->nk + 1) * sizeof(by_stream_t));
    *n = 0;
    if (!s)
        return NULL;
    for (size_t i = 0; i < v->nk; i++) {
        size_t j;
        for (j = 0; j < *n && s[j].stream != v->k[i].stream; j++)
            ;
        if (j == *n)
            s[(*n)++] = (by_stream_t){v->k[i].stream, i};
    }
    qsort(s, *n, sizeof(by_stream_t), cmp_first);
    return s;
}

static int idle_breakdown(nnp_hta_t *h, const hta_view_t *v)
{
    static const char *const cats[] = {"host_wait", "kernel_wait", "other"};
    enum { HOST_WAIT, KERNEL_WAIT, OTHER };
    nnp_csv_t *w = &h->w[F_IDLE];
    size_t n_streams, n;
    by_stream_t *ss = streams_of(v, &n_streams);
    hta_iv_t *iv;
    if (!ss)
        return nnp__fail(NNP_ENOMEM, "HTA: out of memory");
    for (size_t s = 0; s < n_streams; s++) {
        int64_t sum[3] = {0, 0, 0}, total = 0;
        bool seen[3] = {false, false, false};
        iv = nnp__malloc((v->nk + 1) * sizeof(hta_iv_t));
        if (!iv) {
            nnp__free(ss);
            return nnp__fail(NNP_ENOMEM, "HTA: out of memory");
        }
        n = 0;
        for (size_t i = 0; i < v->nk; i++)
            if (v->k[i].stream == ss[s].stream)
                iv[n++] = (hta_iv_t){v->k[i].ts, v->k[i].end, i};
        /* sort_values(by="ts"): the view is in start order already (ties in model order). */
        for (size_t i = 0; i < n; i++) {
            const hta_kernel_t *k = &v->k[iv[i].seq];
            int cat = OTHER;
            int64_t gap;
            if (i == 0) { /* no previous kernel: "other", with no interval (NaN) */
                seen[OTHER] = true;
                continue;
            }
            gap = iv[i].ts - iv[i - 1].end;
            /* Host wait: the runtime call came after the previous kernel had ended. */
            if (k->launch != SIZE_MAX && v->launches[k->launch].ts > iv[i - 1].end)
                cat = HOST_WAIT;
            else if (gap < NNP_HTA_CONSECUTIVE_KERNEL_DELAY)
                cat = KERNEL_WAIT;
            seen[cat] = true;
            sum[cat] += gap;
            total += gap;
        }
        nnp__free(iv);
        for (int c = 0; c < 3; c++) {
            if (!seen[c])
                continue;
            nnp__csv_int(w, v->rank);
            nnp__csv_uint(w, ss[s].stream);
            nnp__csv_str(w, cats[c]);
            nnp__csv_int(w, sum[c]);
            csv_num(w, nnp__hta_round((double)sum[c] / (double)total, RATIO_DECIMALS));
            nnp__csv_end_row(w);
        }
    }
    nnp__free(ss);
    return NNP_OK;
}

/* ---- kernel type breakdown (breakdown_analysis.py _get_gpu_kernel_type_time) ---- */

typedef struct edge {
    int64_t time;
    int value; /* +bit at a merged interval's start, -bit at its end */
    size_t seq;
} edge_t;

static int cmp_edge(const void *a, const void *b)
{
    const edge_t *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The label of a running bit mask, types joined in mapping order (Python's & on the
 * running sum, as HTA does it, even when a sum is not a clean mask). */
static void label_of(int running, char *out, size_t cap)
{
    out[0] = '\0';
    for (int t = 0; t < HTA_KTYPES; t++) {
        if (!(running & (1 << t)))
            continue;
        if (out[0])
            strncat(out, " overlapping ", cap - strlen(out) - 1);
        strncat(out, ktype_names[t], cap - strlen(out) - 1);
    }
}

static int label_add(nnp_hta_t *h, const char *label, int64_t d)
{
    for (size_t i = 0; i < h->n_labels; i++)
        if (strcmp(h->labels[i].label, label) == 0) {
            h->labels[i].sum += d;
            return NNP_OK;
        }
    if (h->n_labels == NNP_ARRAY_LEN(h->labels))
        return NNP_OK; /* cannot happen: at most 2^3 - 1 non-empty masks */
    nnp__strlcpy(h->labels[h->n_labels].label, label, LABEL_MAX);
    h->labels[h->n_labels++].sum = d;
    return NNP_OK;
}

/* Merged intervals of each type become +bit/-bit edges (melted ts rows, then end rows, type
 * by type: ties keep that order); a sweep sums each segment's length under its label.
 * Zero-length segments add nothing and make no label. */
static int kernel_types(nnp_hta_t *h, const hta_view_t *v)
{
    edge_t *e = nnp__malloc((2 * v->nk + 1) * sizeof(edge_t));
    size_t n = 0;
    int running = 0;
    if (!e)
        return nnp__fail(NNP_ENOMEM, "HTA: out of memory");
    for (int t = 0; t < HTA_KTYPES; t++) {
        size_t k;
        hta_iv_t *iv = nnp__hta_intervals(v, t, &k);
        if (!iv) {
            nnp__free(e);
            return nnp__fail(NNP_ENOMEM, "HTA: out of memory");
        }
        k = nnp__hta_merge(iv, k);
        for (size_t i = 0; i < k; i++)
            e[n + i] = (edge_t){iv[i].ts, 1 << t, n + i};
        for (size_t i = 0; i < k; i++)
            e[n + k + i] = (edge_t){iv[i].end, -(1 << t), n + k + i};
        n += 2 * k;
        nnp__free(iv);
    }
    qsort(e, n, sizeof(edge_t), cmp_edge);
    for (size_t i = 0; i + 1 < n; i++) {
        char label[LABEL_MAX];
        running += e[i].value;
        if (running <= 0 || e[i + 1].time == e[i].time)
            continue;
        label_of(running, label, sizeof(label));
        if (label[0])
            label_add(h, label, e[i + 1].time - e[i].time);
    }
    nnp__free(e);
    return NNP_OK;
}

/* ---- top kernels (breakdown_analysis.py _aggr_gpu_kernel_time) ---- */

typedef struct kstat {
    uint32_t name;
    const char *s;
    int64_t sum, max, min;
    double mean, std;
    size_t count;
} kstat_t;

static int cmp_sum_desc(const void *a, const void *b)
{
    const kstat_t *x = a, *y = b;
    if (x->sum != y->sum)
        return x->sum > y->sum ? -1 : 1;
    return strcmp(x->s, y->s); /* HTA's sort is not stable: ties by name here */
}

static int push_top(nnp_hta_t *h, const char *name, double sum, double max, double min, double std,
                    double mean, int ktype, int rank)
{
    if (h->n_top == h->cap_top) {
        size_t nc = h->cap_top ? h->cap_top * 2 : 64;
        top_row_t *nt = nnp__realloc(h->top, nc * sizeof(top_row_t));
        if (!nt)
            return nnp__fail(NNP_ENOMEM, "HTA: out of memory");
        h->top = nt;
        h->cap_top = nc;
    }
    h->top[h->n_top] = (top_row_t){nnp__strdup(name), sum, max, min, std, mean, ktype, rank};
    if (!h->top[h->n_top].name)
        return nnp__fail(NNP_ENOMEM, "HTA: out of memory");
    h->n_top++;
    return NNP_OK;
}

/* Sample standard deviation (pandas std, ddof 1): NaN for one value, which HTA fills 0. */
static double sample_std(const double *x, size_t n, double mean)
{
    double s = 0;
    if (n < 2)
        return 0;
    for (size_t i = 0; i < n; i++)
        s += (x[i] - mean) * (x[i] - mean);
    return sqrt(s / (double)(n - 1));
}

/* pandas Series.quantile(q), linear interpolation, of an ascending array. */
static double quantile(const double *x, size_t n, double q)
{
    double pos = q * (double)(n - 1), lo = floor(pos);
    size_t i = (size_t)lo;
    return i + 1 < n ? x[i] + (x[i + 1] - x[i]) * (pos - lo) : x[i];
}

static int top_of_type(nnp_hta_t *h, const hta_view_t *v, int type)
{
    kstat_t *st = nnp__calloc(v->nk + 1, sizeof(kstat_t));
    double *vals = nnp__malloc((v->nk + 1) * sizeof(double));
    size_t n = 0;
    int rc = NNP_OK;
    if (!st || !vals) {
        rc = nnp__fail(NNP_ENOMEM, "HTA: out of memory");
        goto out;
    }
    for (size_t i = 0; i < v->nk; i++) { /* groupby(name): sum, max, min, mean */
        const hta_kernel_t *k = &v->k[i];
        int64_t d = k->end - k->ts;
        size_t j;
        if (k->type != type)
            continue;
        for (j = 0; j < n && st[j].name != k->name; j++)
            ;
        if (j == n)
            st[n++] = (kstat_t){k->name, nnp__model_str(v->m, k->name), 0, d, d, 0, 0, 0};
        st[j].sum += d;
        st[j].max = d > st[j].max ? d : st[j].max;
        st[j].min = d < st[j].min ? d : st[j].min;
        st[j].count++;
    }
    for (size_t j = 0; j < n; j++) { /* std per name: a second pass over its kernels */
        size_t c = 0;
        st[j].mean = (double)st[j].sum / (double)st[j].count;
        for (size_t i = 0; i < v->nk; i++)
            if (v->k[i].type == type && v->k[i].name == st[j].name)
                vals[c++] = (double)(v->k[i].end - v->k[i].ts);
        st[j].std = sample_std(vals, c, st[j].mean);
    }
    qsort(st, n, sizeof(kstat_t), cmp_sum_desc);
    if (n <= NNP_HTA_NUM_KERNELS) {
        for (size_t j = 0; rc == NNP_OK && j < n; j++)
            rc = push_top(h, st[j].s, (double)st[j].sum, (double)st[j].max, (double)st[j].min,
                          st[j].std, st[j].mean, type, v->rank);
    } else {
        /* More than num_kernels: names whose cumulative sum passes the duration_ratio
         * quantile of the cumulative sums, and all past the first num_kernels, become
         * "others"; then every row is regrouped by name over its SUM alone, so a kept
         * kernel's max, min and mean all equal its sum and its stddev is 0. */
        double *cum = vals, q, o_sum = 0, o_max = -INFINITY, o_min = INFINITY, o_mean, o_std;
        size_t n_others = 0, c = 0;
        double *osums = nnp__malloc(n * sizeof(double));
        if (!osums) {
            rc = nnp__fail(NNP_ENOMEM, "HTA: out of memory");
            goto out;
        }
        for (size_t j = 0; j < n; j++)
            cum[j] = (j ? cum[j - 1] : 0) + (double)st[j].sum;
        q = quantile(cum, n, NNP_HTA_DURATION_RATIO);
        for (size_t j = 0; j < n; j++) {
            if (cum[j] > q || j >= NNP_HTA_NUM_KERNELS) {
                double s = (double)st[j].sum;
                osums[n_others++] = s;
                o_sum += s;
                o_max = s > o_max ? s : o_max;
                o_min = s < o_min ? s : o_min;
                continue;
            }
            rc = push_top(h, st[j].s, (double)st[j].sum, (double)st[j].sum, (double)st[j].sum, 0,
                          (double)st[j].sum, type, v->rank);
            if (rc != NNP_OK)
                break;
            c++;
        }
        if (rc == NNP_OK && n_others) {
            o_mean = o_sum / (double)n_others;
            o_std = sample_std(osums, n_others, o_mean);
            rc = push_top(h, OTHERS, o_sum, o_max, o_min, o_std, o_mean, type, v->rank);
        }
        nnp__free(osums);
        (void)c;
    }
out:
    nnp__free(st);
    nnp__free(vals);
    return rc;
}

/* ---- communication-computation overlap (communication_analysis.py) ---- */

static int comm_overlap(nnp_hta_t *h, const hta_view_t *v)
{
    nnp_csv_t *w = &h->w[F_OVERLAP];
    size_t nc, nm, n = 0;
    hta_iv_t *comp = nnp__hta_intervals(v, HTA_COMPUTATION, &nc);
    hta_iv_t *comm = nnp__hta_intervals(v, HTA_COMMUNICATION, &nm);
    edge_t *e = nnp__malloc((2 * v->nk + 1) * sizeof(edge_t));
    int64_t overlap = 0;
    int running = 0;
    if (!comp || !comm || !e) {
        nnp__free(comp);
        nnp__free(comm);
        nnp__free(e);
        return nnp__fail(NNP_ENOMEM, "HTA: out of memory");
    }
    nc = nnp__hta_merge(comp, nc);
    nm = nnp__hta_merge(comm, nm);
    /* Communication changes the status by 1, computation by 2: 3 is both at once. */
    for (size_t i = 0; i < nm; i++, n += 2) {
        e[n] = (edge_t){comm[i].ts, 1, n};
        e[n + 1] = (edge_t){comm[i].end, -1, n + 1};
    }
    for (size_t i = 0; i < nc; i++, n += 2) {
        e[n] = (edge_t){comp[i].ts, 2, n};
        e[n + 1] = (edge_t){comp[i].end, -2, n + 1};
    }
    qsort(e, n, sizeof(edge_t), cmp_edge);
    for (size_t i = 0; i + 1 < n; i++) {
        running += e[i].value;
        if (running == 3)
            overlap += e[i + 1].time - e[i].time;
    }
    nnp__csv_int(w, v->rank);
    /* Overlap over the merged communication time; no communication: 0/0, NaN (empty). */
    csv_num(w, nnp__hta_round(PERCENT * ((double)overlap / (double)nnp__hta_run_time(comm, nm)),
                              PCT_DECIMALS));
    nnp__csv_end_row(w);
    nnp__free(comp);
    nnp__free(comm);
    nnp__free(e);
    return NNP_OK;
}

/* ---- CUDA kernel launch statistics (cuda_kernel_analysis.py cuda_kernel_launch_stats) ---- */

/* The runtime calls HTA joins with their GPU events (include_memory_events = True). */
static bool is_stats_launch(const char *name)
{
    return strcmp(name, "cudaLaunchKernel") == 0 || strcmp(name, "cudaMemcpyAsync") == 0 ||
           strcmp(name, "cudaMemsetAsync") == 0;
}

/* The calls that enqueue work on a stream (trace_symbol_table.py
 * get_runtime_launch_events_mask, CUDA and ROCm names). */
static bool is_queue_launch(const char *name)
{
    static const char *const names[] = {
        "cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel",     "cuLaunchKernelEx",
        "cudaMemcpyAsync",  "cudaMemsetAsync",     "hipLaunchKernel",    "hipExtModuleLaunchKernel",
        "hipMemsetAsync",   "hipMemcpyAsync",      "hipMemcpyWithStream"};
    for (size_t i = 0; i < NNP_ARRAY_LEN(names); i++)
        if (strcmp(name, names[i]) == 0)
            return true;
    return false;
}

typedef struct pair {
    size_t launch, k; /* launches row, view kernel */
} pair_t;

static int cmp_pair(const void *a, const void *b)
{
    const pair_t *x = a, *y = b;
    if (x->launch != y->launch)
        return x->launch < y->launch ? -1 : 1;
    return (x->k > y->k) - (x->k < y->k);
}

/* (launch, GPU event) pairs of the view whose launch passes keep(), in launch order (an
 * inner merge keeps the CPU rows' order). */
static pair_t *pairs_of(const hta_view_t *v, bool (*keep)(const char *), size_t *n)
{
    pair_t *p = nnp__malloc((v->nk + 1) * sizeof(pair_t));
    *n = 0;
    if (!p)
        return NULL;
    for (size_t i = 0; i < v->nk; i++) {
        size_t l = v->k[i].launch;
        if (l != SIZE_MAX && v->launches[l].kept &&
            keep(nnp__model_str(v->m, v->m->launches.name[l])))
            p[(*n)++] = (pair_t){l, i};
    }
    qsort(p, *n, sizeof(pair_t), cmp_pair);
    return p;
}

static int launch_stats(nnp_hta_t *h, const hta_view_t *v)
{
    nnp_csv_t *w = &h->w[F_LAUNCH], *ws = &h->w[F_LAUNCH_SUMMARY];
    size_t n;
    pair_t *p = pairs_of(v, is_stats_launch, &n);
    uint64_t n_short = 0, n_runtime = 0, n_delay = 0;
    if (!p)
        return nnp__fail(NNP_ENOMEM, "HTA: out of memory");
    for (size_t i = 0; i < n; i++) {
        const hta_launch_t *l = &v->launches[p[i].launch];
        const hta_kernel_t *k = &v->k[p[i].k];
        int64_t cpu = l->end - l->ts, gpu = k->end - k->ts;
        /* HTA's code: gpu start - cpu start + cpu duration (its docstring says "gpu kernel
         * starting and cpu op ending"); we follow the code, whose numbers users see. */
        int64_t delay = k->ts - l->ts + cpu;
        nnp__csv_int(w, v->rank);
        nnp__csv_uint(w, v->m->launches.id[p[i].launch]);
        nnp__csv_int(w, cpu);
        nnp__csv_int(w, gpu);
        nnp__csv_int(w, delay);
        nnp__csv_end_row(w);
        /* The three views HTA plots (visualize_cuda_kernel_launch_stats). */
        n_short += cpu <= NNP_HTA_RUNTIME_CUTOFF && gpu < cpu;
        n_runtime += cpu > NNP_HTA_RUNTIME_CUTOFF;
        n_delay += delay > NNP_HTA_LAUNCH_DELAY_CUTOFF;
    }
    nnp__csv_int(ws, v->rank);
    nnp__csv_uint(ws, n);
    nnp__csv_uint(ws, n_short);
    nnp__csv_uint(ws, n_runtime);
    nnp__csv_uint(ws, n_delay);
    nnp__csv_end_row(ws);
    nnp__free(p);
    return NNP_OK;
}

/* ---- queue length (trace_counters.py _get_queue_length_time_series_for_rank) ---- */

typedef struct qev {
    int64_t ts;
    uint32_t stream;
    int delta; /* +1 a runtime call enqueues, -1 its GPU event starts */
    size_t seq;
} qev_t;

static int cmp_qev(const void *a, const void *b)
{
    const qev_t *x = a, *y = b;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* describe() of one stream's queue lengths: count, mean, std, min, quartiles, max. */
static void describe_row(nnp_csv_t *w, int rank, uint32_t stream, double *q, size_t n)
{
    double sum = 0, mean;
    for (size_t i = 0; i < n; i++)
        sum += q[i];
    mean = sum / (double)n;
    nnp__csv_int(w, rank);
    nnp__csv_uint(w, stream);
    nnp__csv_uint(w, n);
    csv_num(w, mean);
    csv_num(w, n > 1 ? sample_std(q, n, mean) : NAN);
    qsort(q, n, sizeof(double), cmp_double);
    csv_num(w, q[0]);
    csv_num(w, quantile(q, n, 0.25));
    csv_num(w, quantile(q, n, 0.5));
    csv_num(w, quantile(q, n, 0.75));
    csv_num(w, q[n - 1]);
    nnp__csv_end_row(w);
}

static int queue_length(nnp_hta_t *h, const hta_view_t *v)
{
    size_t n, m = 0;
    pair_t *p = pairs_of(v, is_queue_launch, &n);
    qev_t *e = p ? nnp__malloc((2 * n + 1) * sizeof(qev_t)) : NULL;
    double *q = e ? nnp__malloc((2 * n + 1) * sizeof(double)) : NULL;
    int rc = NNP_OK;
    if (!q) {
        rc = nnp__fail(NNP_ENOMEM, "HTA: out of memory");
        goto out;
    }
    /* The runtime rows (on the stream of their GPU event) come before the GPU rows in the
     * concatenation, which a stable sort by time keeps at equal times. */
    for (size_t i = 0; i < n; i++)
        e[m++] = (qev_t){v->launches[p[i].launch].ts, v->k[p[i].k].stream, 1, i};
    for (size_t i = 0; i < n; i++)
        e[m++] = (qev_t){v->k[p[i].k].ts, v->k[p[i].k].stream, -1, n + i};
    qsort(e, m, sizeof(qev_t), cmp_qev);
    for (size_t i = 0, first = 0; i < m; i++) {
        q[i - first] = (double)((i > first ? (int64_t)q[i - first - 1] : 0) + e[i].delta);
        if (i + 1 == m || e[i + 1].stream != e[i].stream) {
            describe_row(&h->w[F_QUEUE], v->rank, e[i].stream, q, i + 1 - first);
            first = i + 1;
        }
    }
out:
    nnp__free(p);
    nnp__free(e);
    nnp__free(q);
    return rc;
}

/* ---- the driver's calls ---- */

int nnp__hta_add_rank(nnp_hta_t *h, const nnp_model_t *m)
{
    hta_view_t v;
    int rc = nnp__hta_view_build(m, &v);
    if (rc != NNP_OK)
        return rc;
    if (v.nk == 0)
        NNP_LOG_W("HTA: rank %d has no GPU event to analyse%s", v.rank,
                  v.filtered ? " before its last profiler step" : "");
    rc = temporal(h, &v);
    if (rc == NNP_OK)
        rc = idle_breakdown(h, &v);
    if (rc == NNP_OK)
        rc = kernel_types(h, &v);
    for (int t = 0; rc == NNP_OK && t < HTA_KTYPES; t++)
        rc = top_of_type(h, &v, t);
    if (rc == NNP_OK && v.nk)
        rc = comm_overlap(h, &v);
    if (rc == NNP_OK)
        rc = launch_stats(h, &v);
    if (rc == NNP_OK)
        rc = queue_length(h, &v);
    if (rc == NNP_OK)
        rc = nnp__hta_straggle_add(h->straggle, &v);
    nnp__hta_view_fini(&v);
    if (rc != NNP_OK && h->rc == NNP_OK)
        h->rc = rc;
    return rc;
}

static int cmp_label(const void *a, const void *b)
{
    const label_sum_t *x = a, *y = b;
    if (x->sum != y->sum)
        return x->sum > y->sum ? -1 : 1;
    return strcmp(x->label, y->label);
}

/* all_kernel_df.sort_values(by=["kernel_type", "name", "rank"]). */
static int cmp_top(const void *a, const void *b)
{
    const top_row_t *x = a, *y = b;
    int d = strcmp(ktype_names[x->ktype], ktype_names[y->ktype]);
    if (d)
        return d;
    if ((d = strcmp(x->name, y->name)) != 0)
        return d;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

int nnp__hta_finish(nnp_hta_t *h)
{
    int64_t total = 0;
    int rc = h->rc;
    /* Kernel type shares over all ranks, most time first, to one decimal. */
    qsort(h->labels, h->n_labels, sizeof(label_sum_t), cmp_label);
    for (size_t i = 0; i < h->n_labels; i++)
        total += h->labels[i].sum;
    for (size_t i = 0; i < h->n_labels; i++) {
        nnp_csv_t *w = &h->w[F_KTYPE];
        nnp__csv_str(w, h->labels[i].label);
        nnp__csv_int(w, h->labels[i].sum);
        csv_num(w, nnp__hta_round(((double)h->labels[i].sum / (double)total) * PERCENT,
                                  TYPE_PCT_DECIMALS));
        nnp__csv_end_row(w);
    }
    if (h->n_top)
        qsort(h->top, h->n_top, sizeof(top_row_t), cmp_top);
    for (size_t i = 0; i < h->n_top; i++) {
        nnp_csv_t *w = &h->w[F_KERNELS];
        const top_row_t *r = &h->top[i];
        nnp__csv_str(w, r->name);
        csv_num(w, r->sum);
        csv_num(w, r->max);
        csv_num(w, r->min);
        csv_num(w, r->std);
        csv_num(w, r->mean);
        nnp__csv_str(w, ktype_names[r->ktype]);
        nnp__csv_int(w, r->rank);
        nnp__csv_end_row(w);
    }
    if (rc == NNP_OK)
        rc = nnp__hta_straggle_write(h->straggle, &h->w[F_STRAGGLERS], &h->w[F_STRAGGLER_METRIC]);
    for (int i = 0; i < F_COUNT; i++) {
        int wrc = nnp__csv_fini(&h->w[i]);
        int crc = nnp__out_commit(&h->f[i], rc != NNP_OK ? rc : wrc);
        h->open[i] = false;
        rc = rc != NNP_OK ? rc : crc;
    }
    return rc;
}

void nnp__hta_destroy(nnp_hta_t *h)
{
    if (!h)
        return;
    for (int i = 0; i < F_COUNT; i++)
        if (h->open[i]) {
            nnp__csv_fini(&h->w[i]);
            nnp__out_commit(&h->f[i], NNP_ESTATE);
        }
    for (size_t i = 0; i < h->n_top; i++)
        nnp__free(h->top[i].name);
    nnp__free(h->top);
    nnp__hta_straggle_destroy(h->straggle);
    nnp__free(h);
}
