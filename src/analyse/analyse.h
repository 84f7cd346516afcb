/* analyse.h - what every analysis shares: the context (model, output places, filters),
 * atomic output files, and the results one analysis hands to the next (step trace ->
 * overlap -> timeline). Each analysis is a pure function of the model in its own file
 * (step_trace.c, overlap.c, op_stats.c, host_info.c, ...) plus a writer of its files.
 *
 * Rules every analysis follows (docs/OUTPUTS.md states them for users):
 * - Times in the model are CLOCK_MONOTONIC ns; output units are stated per file.
 * - An op, kernel or communication op belongs to the step in which it STARTS (ops that
 *   cross a step boundary are not split).
 * - Compute = device kernels when the run has any, else host ops (a CPU-only run's ops
 *   are its compute). Communication = communication ops. (overlap.c) */
#ifndef NNP_ANALYSE_H
#define NNP_ANALYSE_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"
#include "nnprof/nnprof.h"
#include "util/util.h"

/* Sub-directory of a raw (PROF_*) directory that holds the files msprof-analyze and
 * MindSpore 2.x users expect per rank: trace_view.json, step_trace_time.csv. */
#define NNP_RANK_OUTPUT_DIR "ASCEND_PROFILER_OUTPUT"

typedef struct nnp_actx {
    const nnp_model_t *m;
    const char *out_dir;  /* <output_path>/profiler: the *_{rank} files */
    const char *rank_dir; /* <raw dir>/ASCEND_PROFILER_OUTPUT (created by the driver) */
    int rank;
    bool pretty;    /* indent JSON outputs */
    bool has_steps; /* --steps A-B given */
    uint64_t step_first, step_last;
    bool is_developer; /* keep level-0 host rows (seed: is_develop_user) */
    uint64_t timeline_limit_bytes;
    bool timeline_summary; /* trace_view.json: Step Trace and Overlap Analysis only */
    bool has_graph;        /* timeline: only ops and steps of graph graph_id */
    uint32_t graph_id;
} nnp_actx_t;

/* True when step id passes the --steps filter. */
static inline bool nnp__actx_step_wanted(const nnp_actx_t *c, uint64_t step_id)
{
    return !c->has_steps || (step_id >= c->step_first && step_id <= c->step_last);
}

/* Output files are opened with nnp__out_open()/nnp__out_commit() (util/util.h). */

/* ---- step trace results (step_trace.c), used by overlap.c and the timeline ---- */
typedef struct nnp_step_row {
    uint64_t step_id;
    uint32_t graph_id;
    int64_t begin_ns, end_ns; /* the recorded step span */
    int64_t start_point_ns;   /* previous step's end (the step's own begin for the first) */
    int64_t fp_ns, bp_ns;     /* -1 when unknown */
    uint32_t fp_op, bp_op;    /* model string ids of the ops at fp/bp, 0 = from marks */
    int64_t iteration_interval_ns, fp_and_bp_ns, tail_ns, total_ns;
} nnp_step_row_t;

typedef struct nnp_step_trace {
    nnp_step_row_t *rows; /* steps that pass the filter, by begin time */
    size_t n;
    bool inference;            /* no backward pass found: single fp column */
    uint32_t fp_name, bp_name; /* op names used for fp/bp (0 = marks or none) */
} nnp_step_trace_t;

int nnp__step_trace_run(const nnp_actx_t *c, nnp_step_trace_t *out);
int nnp__step_trace_write(const nnp_actx_t *c, const nnp_step_trace_t *st);
void nnp__step_trace_fini(nnp_step_trace_t *st);

/* ---- overlap results (overlap.c), used by the timeline ---- */
typedef struct nnp_interval {
    int64_t start_ns, end_ns;
} nnp_interval_t;

typedef struct nnp_interval_list {
    nnp_interval_t *v;
    size_t n, cap;
} nnp_interval_list_t;

typedef struct nnp_overlap_row {
    uint64_t step_id; /* UINT64_MAX for the whole-run row */
    int64_t computing_ns, communication_ns, comm_not_overlapped_ns, overlapped_ns, free_ns;
} nnp_overlap_row_t;

typedef struct nnp_overlap {
    nnp_overlap_row_t *rows; /* one per step, then the whole run */
    size_t n;
    /* Merged intervals over the analysed span, for the "Overlap Analysis" timeline. */
    nnp_interval_list_t computing, communication, comm_not_overlapped, free;
} nnp_overlap_t;

int nnp__overlap_run(const nnp_actx_t *c, const nnp_step_trace_t *st, nnp_overlap_t *out);
int nnp__overlap_write(const nnp_actx_t *c, const nnp_overlap_t *ov);
void nnp__overlap_fini(nnp_overlap_t *ov);

/* ---- the driver (analyse.c) ---- */
/* Analyses every input found under path (a raw directory, a profiler/ directory, the
 * output_path above it, or a directory with MindSpore's host_info_{rank}.csv). */
int nnp__analyse_path(const char *path, const nnp_analyse_options_t *o);

/* ---- the other analyses: run + write in one call ---- */
int nnp__op_stats_write_all(const nnp_actx_t *c, const nnp_step_trace_t *st);
int nnp__timeline_write(const nnp_actx_t *c, const nnp_step_trace_t *st, const nnp_overlap_t *ov);
int nnp__host_info_write(const nnp_actx_t *c);

#endif /* NNP_ANALYSE_H */
