/* analyse.h - what every analysis shares: the context (model, output places, filters),
 * atomic output files, and the results one analysis hands to the next (step trace ->
 * overlap -> timeline). Each analysis is a pure function of the model in its own file
 * (step_trace.c, overlap.c, op_stats.c, host_info.c, ...) plus a writer of its files.
 *
 * Rules every analysis follows (docs/OUTPUTS.md states them for users):
 * - Times in the model are CLOCK_MONOTONIC ns; output units are stated per file.
 * - An op, kernel or communication op belongs to the step in which it STARTS (ops that
 *   cross a step boundary are not split); a kernel whose launch is known belongs to the
 *   step in which its launch started (nnp__kernel_step).
 * - Compute = device kernels when the run has any, else host ops (a CPU-only run's ops
 *   are its compute). Communication = communication ops. (overlap.c) */
#ifndef NNP_ANALYSE_H
#define NNP_ANALYSE_H

#include <stdbool.h>
#include <stdint.h>

#include "analyse/intervals.h"
#include "model/model.h"
#include "nnprof/nnprof.h"
#include "util/util.h"

/* Sub-directory of a raw (PROF_*) directory that holds the files msprof-analyze and
 * MindSpore 2.x users expect per rank: trace_view.json, step_trace_time.csv. */
#define NNP_RANK_OUTPUT_DIR "ASCEND_PROFILER_OUTPUT"

typedef struct nnp_actx {
    const nnp_model_t *m;   /* the rank's own processes (nnp__model_rank_view) */
    const nnp_model_t *all; /* with the processes that work for them: the timeline's; NULL:
                             * m is the whole model */
    const char *out_dir;    /* <output_path>/profiler: the *_{rank} files */
    const char *rank_dir;   /* <raw dir>/ASCEND_PROFILER_OUTPUT (created by the driver) */
    int rank;
    bool pretty;    /* indent JSON outputs */
    bool has_steps; /* --steps A-B given */
    uint64_t step_first, step_last;
    bool is_developer; /* keep level-0 host rows (seed: is_develop_user) */
    uint64_t timeline_limit_bytes;
    bool timeline_summary; /* trace_view.json: Step Trace and Overlap Analysis only */
    bool has_graph;        /* timeline: only ops and steps of graph graph_id */
    uint32_t graph_id;
    double peak_flops;              /* FLOP/s the user says the device peaks at, 0 = unknown */
    uint64_t memory_capacity_bytes; /* device memory capacity, 0 = unknown */
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
    int64_t fetch_ns;      /* the data fetch the automatic fp follows: its time, -1 none */
    bool fetch_dataloader; /* that fetch is PyTorch's DataLoader (else MindSpore's GetNext) */
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

/* Values of a row: computing, communication, not overlapped, overlapped, free. */
#define NNP_OVERLAP_COLS 5
/* Their indices in nnp_overlap_row_t.sub_ps (and in overlap.c's rows in ticks). */
enum {
    NNP_OV_COMPUTING,
    NNP_OV_COMMUNICATION,
    NNP_OV_NOT_OVERLAPPED,
    NNP_OV_OVERLAPPED,
    NNP_OV_FREE,
    NNP_OV_COLS
};

typedef struct nnp_overlap_row {
    uint64_t step_id; /* UINT64_MAX for the whole-run row */
    int64_t computing_ns, communication_ns, comm_not_overlapped_ns, overlapped_ns, free_ns;
    /* Picoseconds beyond each ns value (0..999), in the order above but with overlapped
     * fourth: non-zero only for inputs whose durations keep sub-ns digits (torch_npu). */
    int16_t sub_ps[NNP_OVERLAP_COLS];
} nnp_overlap_row_t;

typedef struct nnp_overlap {
    nnp_overlap_row_t *rows; /* one per step, then the whole run */
    size_t n;
    /* Merged intervals over the analysed span, for the "Overlap Analysis" timeline. */
    nnp_interval_list_t computing, communication, comm_not_overlapped;
    /* Free time: the gaps of the analysed span [span_lo_ns, span_hi_ns) left by computing
     * and communication. Read them through nnp_gap_iter_t: they are kept as a list
     * (free_kept) only for device steps and inputs measured in ps, and otherwise made as
     * they are read (a CPU run has one gap per op: 39 MB of list at 10 M events). */
    nnp_interval_list_t free_kept;
    bool free_is_kept;
    bool has_span;
    int64_t span_lo_ns, span_hi_ns;
} nnp_overlap_t;

/* The overlap's lanes as timelines name them (MindSpore's and msprof's "Overlap Analysis"
 * threads, formats.md 1.4), in the order computing, communication, communication not
 * overlapped, free: lane k is the timeline's thread k. */
#define NNP_OVERLAP_LANES 4
extern const char *const nnp__overlap_lane_names[NNP_OVERLAP_LANES];

int nnp__overlap_run(const nnp_actx_t *c, const nnp_step_trace_t *st, nnp_overlap_t *out);
int nnp__overlap_write(const nnp_actx_t *c, const nnp_overlap_t *ov);
void nnp__overlap_fini(nnp_overlap_t *ov);

/* The free intervals of an overlap analysis in time order, as nnp__ivl_gaps makes them:
 *   nnp_gap_iter_t it;
 *   for (nnp__overlap_gaps_begin(ov, &it); it.has; nnp__overlap_gaps_next(&it))
 *       use(it.gap);
 * it.has and it.gap are the current gap (read them, never write them); ov must outlive the
 * iterator and stay unchanged. No allocation, no failure. */
typedef struct nnp_gap_iter {
    const nnp_overlap_t *ov;
    nnp_ivl_gaps_t made; /* the gaps made from the lists (ov->free_is_kept false) */
    size_t kept;         /* the next row of ov->free_kept (ov->free_is_kept) */
    bool has;            /* gap is a gap */
    nnp_interval_t gap;
} nnp_gap_iter_t;

void nnp__overlap_gaps_begin(const nnp_overlap_t *ov, nnp_gap_iter_t *it);
void nnp__overlap_gaps_next(nnp_gap_iter_t *it);

/* ---- the driver (analyse.c) ---- */
/* Ranks one report lists (the inputs a call accepts). */
#define NNP_REPORT_MAX_RANKS 4096

/* What an analysis did, for the CLI's closing line. */
typedef struct nnp_analyse_report {
    char out_dir[NNP_PATH_MAX];      /* the folder of the *_{rank} files */
    bool is_foreign;                 /* other tools' data (results in a folder of ours) */
    int n_ranks;                     /* ranks analysed (some analyses may have failed) */
    int ranks[NNP_REPORT_MAX_RANKS]; /* sorted */
    int n_old;                       /* earlier result files kept as <name>.old */
    int n_empty;                     /* ranks with no event recorded, only samples */
} nnp_analyse_report_t;

/* Analyses every input found under path (a raw directory, a profiler/ directory, the
 * output_path above it, other tools' data, or a directory with MindSpore's
 * host_info_{rank}.csv) and fills rep (also on error: what was done). */
int nnp__analyse_path_report(const char *path, const nnp_analyse_options_t *o,
                             nnp_analyse_report_t *rep);
/* The same without a report. */
int nnp__analyse_path(const char *path, const nnp_analyse_options_t *o);

/* ---- shared lookups (lookup.c) ---- */

/* Which analysed step an instant falls in: [begin, end) of a step row, the latest-begun
 * when several do (steps of several graphs may overlap). */
typedef struct nnp_step_spans {
    const nnp_step_row_t *rows;
    size_t n;
    int64_t *max_end; /* max_end[k]: latest end of rows 0..k, bounds the backward scan */
} nnp_step_spans_t;

int nnp__step_spans_init(const nnp_step_trace_t *st, nnp_step_spans_t *s);
void nnp__step_spans_fini(nnp_step_spans_t *s);
/* Index of the step row holding t, or SIZE_MAX when none. */
size_t nnp__step_spans_find(const nnp_step_spans_t *s, int64_t t);
/* The same for instants that mostly come in time order (a table's rows): *hint (0 at
 * first) keeps where the last search ended, so the next one usually moves a row or two
 * instead of a binary search over every step. Any order of t stays correct. */
size_t nnp__step_spans_find_near(const nnp_step_spans_t *s, int64_t t, size_t *hint);

/* Summed kernel time per correlation id (one entry per id, sorted by id). */
typedef struct nnp_ktime {
    uint64_t corr;
    int64_t dur_ns;            /* summed durations */
    int64_t first_ns, last_ns; /* earliest start, latest end: the launch's device span */
    uint32_t n;                /* kernels under this id */
} nnp_ktime_t;

typedef struct nnp_kindex {
    nnp_ktime_t *v;
    size_t n;
} nnp_kindex_t;

int nnp__kindex_build(const nnp_model_t *m, nnp_kindex_t *ki);
void nnp__kindex_fini(nnp_kindex_t *ki);
/* The entry of corr, NULL when no kernel carries that id (or corr is 0). */
const nnp_ktime_t *nnp__kindex_entry(const nnp_kindex_t *ki, uint64_t corr);
/* Kernel time launched under corr; false when no kernel carries that id (or corr is 0). */
bool nnp__kindex_find(const nnp_kindex_t *ki, uint64_t corr, int64_t *dur);
/* Op i's compute time: the kernels it launched when it launched any (a GPU host op only
 * measures the launch), else its own span. False while its end is unknown. */
bool nnp__op_compute_time(const nnp_model_t *m, const nnp_kindex_t *ki, size_t i, int64_t *dur);

/* Ops by correlation id, to find the op that launched a kernel: the first op recorded with
 * an id wins when several share it. */
typedef struct nnp_op_ref {
    uint64_t corr;
    size_t op;
} nnp_op_ref_t;

typedef struct nnp_op_index {
    nnp_op_ref_t *v;
    size_t n;
} nnp_op_index_t;

/* Builds the index (empty when the model has no kernels: nothing to match). */
int nnp__op_index_build(const nnp_model_t *m, nnp_op_index_t *ix);
void nnp__op_index_fini(nnp_op_index_t *ix);
/* Row of the op launched under corr, SIZE_MAX when none (or corr is 0). */
size_t nnp__op_index_find(const nnp_op_index_t *ix, uint64_t corr);

/* Calls by launch id, to find the host call that queued a kernel (kernels.launch ==
 * calls.launch); calls without a launch id (the CUDA back end's, linked by corr) are left
 * out. */
typedef struct nnp_launch_ref {
    uint64_t id;
    size_t row;
} nnp_launch_ref_t;

typedef struct nnp_launch_index {
    nnp_launch_ref_t *v;
    size_t n;
} nnp_launch_index_t;

int nnp__launch_index_build(const nnp_model_t *m, nnp_launch_index_t *ix);
void nnp__launch_index_fini(nnp_launch_index_t *ix);
/* Calls row of the launch with that id, SIZE_MAX when none (or id is 0). */
size_t nnp__launch_index_find(const nnp_launch_index_t *ix, uint64_t id);
/* The step row of kernel k: the step whose host range holds the call that launched it (HTA's
 * rule: a kernel belongs to the step of its runtime event) when its launch is known, else
 * the step its own start falls in; SIZE_MAX when none. ix may be NULL. */
size_t nnp__kernel_step(const nnp_step_spans_t *s, const nnp_model_t *m,
                        const nnp_launch_index_t *ix, size_t k);

/* Per-op CPU of a data-pipeline op from its "(id=N)" worker threads, % of one CPU
 * (cpu.c; used by pipeline.c). *pct is -1 when there is no data. */
int nnp__cpu_op_pct(const nnp_model_t *m, int64_t op_id, double *pct);

/* ---- findings: what each analysis leaves for the advisor (advisor.c reads them last).
 * nnp__findings_init sets every number to "no data" (NAN, or 0 counts); each analysis
 * fills its own part. Units are in the names. ---- */
#define NNP_FINDINGS_TOP_TYPES 3
#define NNP_FINDINGS_TEXT      512

typedef struct nnp_findings {
    /* step trace + overlap (filled by nnp__findings_from_core) */
    size_t n_steps;
    double avg_step_ms, avg_iteration_interval_ms, avg_fp_and_bp_ms, avg_tail_ms;
    double avg_data_fetch_ms;          /* per step with a data fetch before its fp */
    bool dataloader_fetch;             /* some step's fetch is PyTorch's DataLoader */
    double avg_comm_not_overlapped_ms; /* per step */
    double avg_communication_ms;       /* per step */
    /* op statistics: the op types with the most total time, and their share (%); when host
     * ops nest and there are no kernels, the ops with the most self time and their share
     * of all op self time (op_self.c), top_types_by_self set */
    size_t n_top_types;
    char top_types[NNP_FINDINGS_TOP_TYPES][NNP_NAME_MAX];
    double top_type_pct[NNP_FINDINGS_TOP_TYPES];
    bool top_types_by_self;
    /* data pipeline (pipeline.c) */
    double device_queue_empty_pct;    /* % of device-queue samples with size 0 */
    double host_queue_empty_pct;      /* % of connector samples with size 0 */
    char bottleneck_op[NNP_NAME_MAX]; /* "" when none found, e.g. "MapOp(id=2)" */
    char bottleneck_reason[NNP_FINDINGS_TEXT];
    char bottleneck_suggestion[NNP_FINDINGS_TEXT];
    /* CPU (cpu.c) */
    double cpu_busy_pct; /* machine: 100 - idle - iowait, averaged */
    double cpu_iowait_pct;
    double process_cpu_pct; /* this process, % of one CPU x ncpu */
    /* memory (memory.c) */
    double mem_peak_bytes, mem_capacity_bytes; /* capacity NAN when unknown */
    /* FLOPs (flops.c) */
    double achieved_flops_per_s; /* total FLOPs / total compute time */
    double peak_flops_per_s;     /* from the options, NAN when unknown */
    /* dynamic shape (dynamic_shape.c) */
    size_t n_dynamic_ops; /* op instances whose input shapes changed */
    /* GPU (gpu.c): NAN / 0 when the run has no CUDA activity */
    double gpu_busy_pct;        /* device activity (merged) over its span */
    double gpu_launch_delay_us; /* mean start of a call's device work after the call began */
    double gpu_sync_pct;        /* host time in synchronization calls over that span */
    uint64_t gpu_pageable_copies, gpu_pageable_bytes; /* HtoD/DtoH through pageable memory */
    uint64_t gpu_dropped_records;                     /* activity records CUPTI dropped */
} nnp_findings_t;

void nnp__findings_init(nnp_findings_t *f);
/* Fills the step, overlap and top-op-type parts from the core analyses' results. */
void nnp__findings_from_core(nnp_findings_t *f, const nnp_actx_t *c, const nnp_step_trace_t *st,
                             const nnp_overlap_t *ov);

/* ---- the deeper analyses (issue #4), one file each; each writes its files and fills
 * its part of the findings ---- */
/* Column lists (NULL-terminated) of memory_record_{rank}.csv and operator_memory_{rank}.csv,
 * CANN's names (memory.c). */
extern const char *const nnp__memory_record_cols[];
extern const char *const nnp__operator_memory_cols[];
int nnp__memory_write(const nnp_actx_t *c, const nnp_step_trace_t *st, nnp_findings_t *f);
int nnp__pipeline_write(const nnp_actx_t *c, nnp_findings_t *f);
int nnp__cpu_write(const nnp_actx_t *c, nnp_findings_t *f);
int nnp__flops_write(const nnp_actx_t *c, const nnp_step_trace_t *st, nnp_findings_t *f);
int nnp__dynamic_shape_write(const nnp_actx_t *c, const nnp_step_trace_t *st, nnp_findings_t *f);
int nnp__advisor_write(const nnp_actx_t *c, const nnp_findings_t *f);
/* The advisor's findings for f without writing files (the cluster analysis aggregates them
 * over ranks): up to cap items, by severity then rule order; returns how many. The id,
 * title and severity strings are static. */
#define NNP_ADVICE_TEXT 512
typedef struct nnp_advice_item {
    const char *id, *title, *severity;
    bool is_warning;
    char evidence[NNP_ADVICE_TEXT]; /* "key = value, ..." as advice_{rank}.txt writes it */
    char suggestion[2 * NNP_ADVICE_TEXT];
} nnp_advice_item_t;
size_t nnp__advisor_eval(const nnp_findings_t *f, int rank, nnp_advice_item_t *out, size_t cap);
/* GPU (issue 16): true when the model holds CUDA activity of our CUDA back end (kernel
 * launch or copy details, or calls of a raw run); gpu.c writes MindSpore's GPU op files,
 * gpu_timeline.c its timeline. */
bool nnp__gpu_present(const nnp_model_t *m);
int nnp__gpu_write(const nnp_actx_t *c, const nnp_step_trace_t *st, nnp_findings_t *f);
int nnp__gpu_timeline_write(const nnp_actx_t *c);
/* Outputs the UI pages read (issue 11): queues per step (queue_steps.c) and each op's
 * input shapes and dtypes (op_shapes.c). */
int nnp__queue_steps_write(const nnp_actx_t *c, const nnp_step_trace_t *st);
int nnp__op_shapes_write(const nnp_actx_t *c);

/* ---- the other analyses: run + write in one call ---- */
int nnp__op_stats_write_all(const nnp_actx_t *c, const nnp_step_trace_t *st);
int nnp__timeline_write(const nnp_actx_t *c, const nnp_step_trace_t *st, const nnp_overlap_t *ov);
int nnp__host_info_write(const nnp_actx_t *c);
/* host_ranges_{rank}.csv: per host range name, count and total/self/avg/min/max time, as
 * torch's key_averages (host_ranges.c). Nothing written when the rank has no range. */
int nnp__host_ranges_write(const nnp_actx_t *c);

/* One row of a key_averages-style table: a name's calls (at least 1) and its total, self,
 * min and max time in ns. */
typedef struct nnp_time_row {
    uint32_t name; /* model string id */
    uint64_t calls;
    int64_t total_ns, self_ns, min_ns, max_ns;
} nnp_time_row_t;

/* Writes rows, in their order, as out_dir/file_name with the columns of
 * host_ranges_{rank}.csv (Name, Calls, Total/Self/Avg/Min/Max Time(us), Self Time(%) of all
 * rows' self time); with sources (one text per row), a "Source Location" column after the
 * name (time_rows.c). */
int nnp__time_rows_write(const nnp_actx_t *c, const char *file_name, const nnp_time_row_t *rows,
                         const char *const *sources, size_t n_rows);

/* op_self_time_{rank}.csv: per op name, calls and total/self/avg/min/max time, as torch's
 * key_averages sorted by self time (op_self.c). Written only when ops nest on a thread;
 * then, without kernels, f's top types become the ops with the most self time. */
int nnp__op_self_write(const nnp_actx_t *c, nnp_findings_t *f);
/* Removes <before><rank><after> from the output directory, an earlier analysis's file that
 * this one writes no new version of (no data for it now); a missing file is the normal
 * case (outputs.c). */
void nnp__output_remove_stale(const nnp_actx_t *c, const char *before, const char *after);
/* op_stacks_{rank}.csv: op_self_time's table by op name and source stack, as torch's
 * key_averages(group_by_stack_n) (op_stacks_write.c). Written only when some op has a
 * stack (with_stack); otherwise a stale file is removed. */
int nnp__op_stacks_write(const nnp_actx_t *c);

/* hccl_raw_{rank}.csv when the model has MindSpore's per-link communication costs. */
int nnp__hccl_raw_write(const nnp_actx_t *c);

#endif /* NNP_ANALYSE_H */
