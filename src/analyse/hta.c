/* hta.c - Holistic Trace Analysis's analyses (hta.h), each with HTA's definition (source:
 * facebookresearch/HolisticTraceAnalysis, hta/analyzers, cited per function) on the
 * view of hta_view.c: the output files, the driver's calls, the helpers the analyses share,
 * and the communication-computation overlap, kernel launch statistics and queue length (the
 * breakdowns are hta_breakdown.c's, the stragglers hta_stragglers.c's). Per-rank tables are
 * written as ranks arrive; the kernel-type table, the top kernels (sorted across ranks) and
 * the stragglers are written at the end. Column names are HTA's DataFrame columns. Rules for
 * users: docs/OUTPUTS.md, "HTA analyses". */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "analyse/hta.h"
#include "analyse/hta_internal.h"
#include "read/importers.h"
#include "util/csv_writer.h"
#include "util/util.h"

static const char *const file_names[HTA_F_COUNT] = {"temporal_breakdown.csv",
                                                    "idle_time_breakdown.csv",
                                                    "kernel_type_breakdown.csv",
                                                    "kernel_breakdown.csv",
                                                    "comm_comp_overlap.csv",
                                                    "cuda_kernel_launch_stats.csv",
                                                    "cuda_kernel_launch_summary.csv",
                                                    "queue_length_summary.csv",
                                                    "stragglers.csv",
                                                    "straggler_metric.csv"};

static const char *const *const headers[HTA_F_COUNT] = {
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

/* ---- what the analyses share (hta_internal.h) ---- */

double nnp__hta_round(double x, int decimals)
{
    double p = pow(10.0, decimals);
    return rint(x * p) / p;
}

void nnp__hta_csv_num(nnp_csv_t *w, double v)
{
    if (isfinite(v) && v == rint(v) && fabs(v) < 1e15)
        nnp__csv_int(w, (int64_t)v);
    else
        nnp__csv_double(w, v); /* NaN: an empty cell, as pandas writes it */
}

int nnp__hta_cmp_edge(const void *a, const void *b)
{
    const hta_edge_t *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Sample standard deviation (pandas std, ddof 1): NaN for one value, which HTA fills 0. */
double nnp__hta_sample_std(const double *x, size_t n, double mean)
{
    double s = 0;
    if (n < 2)
        return 0;
    for (size_t i = 0; i < n; i++)
        s += (x[i] - mean) * (x[i] - mean);
    return sqrt(s / (double)(n - 1));
}

/* pandas Series.quantile(q), linear interpolation, of an ascending array. */
double nnp__hta_quantile(const double *x, size_t n, double q)
{
    double pos = q * (double)(n - 1), lo = floor(pos);
    size_t i = (size_t)lo;
    return i + 1 < n ? x[i] + (x[i + 1] - x[i]) * (pos - lo) : x[i];
}

bool nnp__hta_applies(const nnp_model_t *m)
{
    if (nnp__is_kineto_model(m))
        return m->kernels.t.n > 0;
    /* Our captures: those of the CUDA back end (its runtime and driver calls launch the
     * device work HTA joins them with). Device tasks recorded through the API without such
     * calls (an Ascend-style run) have nothing HTA would keep past its launch filter, and
     * such a run is not read a second time for it. */
    for (size_t i = 0; i < m->calls.t.n; i++)
        if (m->calls.kind[i] == NNP_CALL_CUDA_RUNTIME || m->calls.kind[i] == NNP_CALL_CUDA_DRIVER)
            return true;
    return false;
}

int nnp__hta_create(const char *out_dir, nnp_hta_t **out)
{
    char dir[NNP_PATH_MAX];
    nnp_hta_t *h;
    int rc;
    *out = NULL;
    rc = nnp__path_join(dir, sizeof(dir), out_dir, NNP_HTA_DIR);
    if (rc == NNP_OK)
        rc = nnp__mkdir_p(dir, 0700);
    if (rc != NNP_OK)
        return rc;
    h = nnp__calloc(1, sizeof(*h));
    if (!h)
        return nnp__fail(NNP_ENOMEM, "HTA: out of memory");
    rc = nnp__hta_straggle_create(&h->straggle);
    for (int i = 0; rc == NNP_OK && i < HTA_F_COUNT; i++) {
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

/* ---- communication-computation overlap (communication_analysis.py) ---- */

static int comm_overlap(nnp_hta_t *h, const hta_view_t *v)
{
    nnp_csv_t *w = &h->w[HTA_F_OVERLAP];
    size_t nc, nm, n = 0;
    hta_iv_t *comp = nnp__hta_intervals(v, HTA_COMPUTATION, &nc);
    hta_iv_t *comm = nnp__hta_intervals(v, HTA_COMMUNICATION, &nm);
    hta_edge_t *e = nnp__malloc((2 * v->nk + 1) * sizeof(hta_edge_t));
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
        e[n] = (hta_edge_t){comm[i].ts, 1, n};
        e[n + 1] = (hta_edge_t){comm[i].end, -1, n + 1};
    }
    for (size_t i = 0; i < nc; i++, n += 2) {
        e[n] = (hta_edge_t){comp[i].ts, 2, n};
        e[n + 1] = (hta_edge_t){comp[i].end, -2, n + 1};
    }
    qsort(e, n, sizeof(hta_edge_t), nnp__hta_cmp_edge);
    for (size_t i = 0; i + 1 < n; i++) {
        running += e[i].value;
        if (running == 3)
            overlap += e[i + 1].time - e[i].time;
    }
    nnp__csv_int(w, v->rank);
    /* Overlap over the merged communication time; no communication: 0/0, NaN (empty). */
    nnp__hta_csv_num(
        w, nnp__hta_round(HTA_PERCENT * ((double)overlap / (double)nnp__hta_run_time(comm, nm)),
                          HTA_PCT_DECIMALS));
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
        if (l != SIZE_MAX && v->launches[l].kept && keep(nnp__model_str(v->m, v->m->calls.name[l])))
            p[(*n)++] = (pair_t){l, i};
    }
    qsort(p, *n, sizeof(pair_t), cmp_pair);
    return p;
}

static int launch_stats(nnp_hta_t *h, const hta_view_t *v)
{
    nnp_csv_t *w = &h->w[HTA_F_LAUNCH], *ws = &h->w[HTA_F_LAUNCH_SUMMARY];
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
        nnp__csv_uint(w, v->m->calls.launch[p[i].launch]);
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
    nnp__hta_csv_num(w, mean);
    nnp__hta_csv_num(w, n > 1 ? nnp__hta_sample_std(q, n, mean) : NAN);
    qsort(q, n, sizeof(double), cmp_double);
    nnp__hta_csv_num(w, q[0]);
    nnp__hta_csv_num(w, nnp__hta_quantile(q, n, 0.25));
    nnp__hta_csv_num(w, nnp__hta_quantile(q, n, 0.5));
    nnp__hta_csv_num(w, nnp__hta_quantile(q, n, 0.75));
    nnp__hta_csv_num(w, q[n - 1]);
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
            describe_row(&h->w[HTA_F_QUEUE], v->rank, e[i].stream, q, i + 1 - first);
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
    rc = nnp__hta_temporal(h, &v);
    if (rc == NNP_OK)
        rc = nnp__hta_idle_breakdown(h, &v);
    if (rc == NNP_OK)
        rc = nnp__hta_kernel_types(h, &v);
    for (int t = 0; rc == NNP_OK && t < HTA_KTYPES; t++)
        rc = nnp__hta_top_of_type(h, &v, t);
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

int nnp__hta_finish(nnp_hta_t *h)
{
    int rc = h->rc;
    nnp__hta_breakdown_write(h);
    if (rc == NNP_OK)
        rc = nnp__hta_straggle_write(h->straggle, &h->w[HTA_F_STRAGGLERS],
                                     &h->w[HTA_F_STRAGGLER_METRIC]);
    for (int i = 0; i < HTA_F_COUNT; i++) {
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
    for (int i = 0; i < HTA_F_COUNT; i++)
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
