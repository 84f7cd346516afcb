/* hta_internal.h - what the HTA files share (hta_view.c builds a rank's view; hta.c runs the
 * analyses on it; hta_stragglers.c the cross-rank one). Internal to src/analyse/. */
#ifndef NNP_HTA_INTERNAL_H
#define NNP_HTA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

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

/* A GPU event (kernel, memcpy, memset) of the filtered trace. */
typedef struct hta_kernel {
    size_t row; /* model kernels row */
    int64_t ts, end;
    uint32_t stream, name; /* name: model string id */
    uint8_t type;          /* HTA_COMPUTATION ... */
    size_t launch;         /* launches row, SIZE_MAX none */
    int64_t iter;          /* the launch's iteration, -1 none */
} hta_kernel_t;

typedef struct hta_view {
    const nnp_model_t *m;
    int rank;
    hta_step_t *steps; /* file order */
    size_t n_steps;
    hta_launch_t *launches; /* one per model launches row */
    size_t n_launches;
    hta_kernel_t *k; /* kept GPU events, in model order (start, then file order) */
    size_t nk;
    bool filtered;      /* two or more profiler steps: the last one is left out */
    int64_t last_start; /* its start (INT64_MAX when not filtered) */
} hta_view_t;

int nnp__hta_view_build(const nnp_model_t *m, hta_view_t *v);
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

#endif /* NNP_HTA_INTERNAL_H */
