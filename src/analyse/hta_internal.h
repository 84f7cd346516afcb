/* hta_internal.h - what the HTA files share (hta_view.c builds a rank's view; hta.c runs the
 * analyses on it and owns their files; hta_breakdown.c the breakdowns; hta_stragglers.c the
 * cross-rank one). Internal to src/analyse/. */
#ifndef NNP_HTA_INTERNAL_H
#define NNP_HTA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyse/hta.h"
#include "analyse/kineto_names.h"
#include "model/model.h"
#include "util/csv_writer.h"
#include "util/util.h"

/* HTA's kernel types in the order its breakdown bit-masks them (_get_gpu_kernel_type_time:
 * COMPUTATION 1, COMMUNICATION 2, MEMORY 4). */
enum { HTA_COMPUTATION, HTA_COMMUNICATION, HTA_MEMORY, HTA_KTYPES };

typedef struct hta_step {
    uint64_t id;
    int64_t ts, end; /* HTA µs */
} hta_step_t;

typedef struct hta_launch {
    int64_t ts, end;
    int64_t iter; /* -1 none */
    bool kept;    /* before the last profiler step (or no filter) */
} hta_launch_t;

/* A GPU event (kernel, memcpy, memset; an NCCL kernel of our own captures, recorded as a
 * collective) of the filtered trace. */
typedef struct hta_kernel {
    int64_t ns; /* start, ns, and seq (the order added): the order of the view's events */
    size_t seq;
    int64_t ts, end;
    uint32_t stream;
    uint32_t name;    /* model string id, or a name of the view's own (HTA_OWN_NAME) */
    const char *text; /* its name as HTA reads it (Kineto's: kineto_names.h) */
    uint8_t type;     /* HTA_COMPUTATION ... */
    size_t launch;    /* model calls row, SIZE_MAX none */
    int64_t iter;     /* the launch's iteration, -1 none */
} hta_kernel_t;

typedef struct hta_view {
    const nnp_model_t *m;
    int rank;
    hta_step_t *steps; /* file order */
    size_t n_steps;
    hta_launch_t *launches; /* one per model calls row */
    size_t n_launches;
    hta_kernel_t *k; /* kept GPU events, by start (then model order) */
    size_t nk;
    /* Kineto's names of copies and sets our captures record under names of their own
     * ("Memcpy HtoD (Pageable -> Device)"), distinct; their ids count down from
     * HTA_OWN_NAME. */
    char (*names)[NNP_KINETO_NAME_MAX];
    size_t n_names;
    int64_t shift_us;   /* added to every time: 0, or our capture's wall - monotonic */
    bool filtered;      /* two or more profiler steps: the last one is left out */
    int64_t last_start; /* its start (INT64_MAX when not filtered) */
} hta_view_t;

/* The first id of the view's own names (UINT32_MAX, UINT32_MAX - 1, ...): above any model
 * string id. */
#define HTA_OWN_NAME UINT32_MAX
/* At most this many own names: every copy direction between every two memory kinds, and
 * the sets. */
#define HTA_OWN_MAX                                                                                \
    (NNP_COPY_KIND_COUNT * NNP_MEMORY_KIND_COUNT * NNP_MEMORY_KIND_COUNT + NNP_MEMORY_KIND_COUNT)

/* A rank's view: of a Kineto trace as HTA parses it; of our own capture as HTA parses its
 * Kineto export (nnprof export kineto), NCCL kernels (our collectives) included. */
int nnp__hta_view_build(const nnp_model_t *m, hta_view_t *v);
/* A model time (ns) as HTA reads it: the start of an event rounded up, its end rounded
 * down, to the µs (trace_parser.py), in the view's clock (shift_us). */
int64_t nnp__hta_up(const hta_view_t *v, int64_t ns);
int64_t nnp__hta_down(const hta_view_t *v, int64_t ns);
/* The iteration of an instant t (HTA µs): the last step, in file order, with ts <= t < end
 * (add_iteration keeps the last match); -1 when none. */
int64_t nnp__hta_iteration(const hta_view_t *v, int64_t t);
void nnp__hta_view_fini(hta_view_t *v);
/* HTA_COMPUTATION / HTA_COMMUNICATION / HTA_MEMORY of a GPU event name. */
int nnp__hta_ktype(const char *name);

/* An interval and its order among equal starts. */
typedef struct hta_iv {
    int64_t ts, end;
    size_t seq;
} hta_iv_t;

/* The view's GPU events of one type (all when type < 0): malloc'ed, *n set; NULL on OOM. */
hta_iv_t *nnp__hta_intervals(const hta_view_t *v, int type, size_t *n);
/* merge_kernel_intervals in place (sorted by start, ties in seq order); returns the number
 * of merged intervals. */
size_t nnp__hta_merge(hta_iv_t *iv, size_t n);
/* Sum of end - ts over merged intervals (HTA: merged.end.sum() - merged.ts.sum()). */
int64_t nnp__hta_run_time(const hta_iv_t *iv, size_t n);

/* numpy.round(x, decimals): rint(x * 10^d) / 10^d. */
double nnp__hta_round(double x, int decimals);

/* ---- stragglers (hta_stragglers.c) ---- */
typedef struct hta_straggle hta_straggle_t;
int nnp__hta_straggle_create(hta_straggle_t **out);
/* Keeps what get_potential_stragglers needs of one rank. */
int nnp__hta_straggle_add(hta_straggle_t *s, const hta_view_t *v);
struct nnp_csv;
/* Writes the per-rank result (straggler counts and verdicts) and the metric rows. */
int nnp__hta_straggle_write(hta_straggle_t *s, struct nnp_csv *result, struct nnp_csv *metric);
void nnp__hta_straggle_destroy(hta_straggle_t *s);

/* ---- the analyses' files and state (hta.c; the breakdowns in hta_breakdown.c) ---- */

#define HTA_PERCENT 100.0
/* HTA rounds percentages to 2 decimals. */
#define HTA_PCT_DECIMALS 2
/* Longest kernel-type label: the three names joined by " overlapping ". */
#define HTA_LABEL_MAX 96

enum {
    HTA_F_TEMPORAL,
    HTA_F_IDLE,
    HTA_F_KTYPE,
    HTA_F_KERNELS,
    HTA_F_OVERLAP,
    HTA_F_LAUNCH,
    HTA_F_LAUNCH_SUMMARY,
    HTA_F_QUEUE,
    HTA_F_STRAGGLERS,
    HTA_F_STRAGGLER_METRIC,
    HTA_F_COUNT
};

/* One row of the top-kernel table, kept until every rank is in (it is sorted across ranks). */
typedef struct top_row {
    char *name;
    double sum, max, min, std, mean;
    int ktype, rank;
} top_row_t;

/* A kernel-type label ("COMPUTATION overlapping COMMUNICATION") and its time summed over
 * the ranks. */
typedef struct label_sum {
    char label[HTA_LABEL_MAX];
    int64_t sum;
} label_sum_t;

struct nnp_hta {
    nnp_outfile_t f[HTA_F_COUNT];
    nnp_csv_t w[HTA_F_COUNT];
    bool open[HTA_F_COUNT];
    top_row_t *top;
    size_t n_top, cap_top;
    label_sum_t labels[1u << HTA_KTYPES];
    size_t n_labels;
    hta_straggle_t *straggle;
    int rc;
};

/* A value as pandas writes it: whole numbers as integers, NaN as an empty cell. */
void nnp__hta_csv_num(nnp_csv_t *w, double v);
/* Sample standard deviation (pandas std, ddof 1): 0 for fewer than two values. */
double nnp__hta_sample_std(const double *x, size_t n, double mean);
/* pandas Series.quantile(q), linear interpolation, of an ascending array. */
double nnp__hta_quantile(const double *x, size_t n, double q);

/* An edge of a sweep over merged intervals. */
typedef struct hta_edge {
    int64_t time;
    int value; /* +bit at a merged interval's start, -bit at its end */
    size_t seq;
} hta_edge_t;
/* By time, then seq (qsort). */
int nnp__hta_cmp_edge(const void *a, const void *b);

/* ---- the breakdowns (breakdown_analysis.py; hta_breakdown.c) ---- */
/* Per rank: a row of temporal_breakdown.csv, idle_time_breakdown.csv's rows, the kernel time
 * by type (summed over ranks), and the top kernels of a type (kept until the end). */
int nnp__hta_temporal(nnp_hta_t *h, const hta_view_t *v);
int nnp__hta_idle_breakdown(nnp_hta_t *h, const hta_view_t *v);
int nnp__hta_kernel_types(nnp_hta_t *h, const hta_view_t *v);
int nnp__hta_top_of_type(nnp_hta_t *h, const hta_view_t *v, int type);
/* At the end: kernel_type_breakdown.csv and kernel_breakdown.csv, across ranks. */
void nnp__hta_breakdown_write(nnp_hta_t *h);

#endif /* NNP_HTA_INTERNAL_H */
