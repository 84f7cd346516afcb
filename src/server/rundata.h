/* rundata.h - one rank's analysis outputs (docs/OUTPUTS.md) loaded once into memory, so
 * every page's data is built from tables already parsed (a call on a 10 M-event run stays
 * far below 200 ms). Read-only after loading: the HTTP threads share it without locks.
 * Files are opened with nnp__safe_open under the run's results directory. */
#ifndef NNP_SERVER_RUNDATA_H
#define NNP_SERVER_RUNDATA_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nnprof/nnprof.h"
#include "util/json_writer.h"

/* A CSV output read whole: cells cut in place in the file's text. */
typedef struct nnp_svt {
    char *buf;    /* the file text (owned) */
    char **names; /* n_cols header names (point into buf) */
    char **cells; /* n_rows * n_cols (point into buf; "" for missing cells) */
    size_t n_rows, n_cols;
    bool present; /* the file existed */
} nnp_svt_t;

/* Column index of name, -1 when absent. */
long nnp__svt_col(const nnp_svt_t *t, const char *name);
/* Cell text ("" when col < 0 or the row is short). */
const char *nnp__svt_cell(const nnp_svt_t *t, size_t row, long col);
/* Cell as a number; NAN when empty or not a number. */
double nnp__svt_num(const nnp_svt_t *t, size_t row, long col);
/* Parses text (taken over) as a CSV table. NNP_OK or NNP_ENOMEM. */
int nnp__svt_parse(nnp_svt_t *t, char *text, size_t len, const char *name);
void nnp__svt_fini(nnp_svt_t *t);

/* One tensor of operator_memory_{rank}.csv, for the live-tensor breakdown at a point. */
typedef struct nnp_mem_tensor {
    const char *name; /* points into the table's text */
    double size_kb;
    int64_t alloc_ns, free_ns; /* free_ns INT64_MAX when never freed */
} nnp_mem_tensor_t;

typedef struct nnp_rank_data {
    int rank;
    nnp_svt_t op_stat, op_detail, steps, overlap, pipe_raw, flops, host_mem, op_mem, queue_steps,
        op_shapes, op_self; /* op_self: op_self_time_{rank}.csv, written when ops nest */
    cJSON *top20, *step_summary, *point_info, *timeline_summary, *advice, *profiler_info,
        *mem_summary, *mem_details, *pipe_summary, *cpu, *flops_summary, *dyn_shape;
    nnp_mem_tensor_t *tensors;
    size_t n_tensors;
    /* trace_view.json of this rank, relative to the results directory ("" if none). */
    char trace_rel[NNP_PATH_MAX];
    char overlap_rel[NNP_PATH_MAX];
    /* Derived at load, so no call passes over every step (rundata.c "derive"). */
    size_t n_steps;        /* step rows (the averages row excluded) */
    char *step_curves;     /* phase curves over the steps, downsampled JSON */
    char *queue_curves;    /* device/host queue per step, downsampled JSON */
    double *comm_offset;   /* per steps column: mean offset (ms) of that comm op, else NAN */
    double overlap_avg[5]; /* means of nnp__overlap_cols, us (NAN: no value) */
} nnp_rank_data_t;

/* Step-phase columns of step_trace_raw and the overlap columns of step_trace_time. */
#define NNP_N_PHASES  5
#define NNP_N_OVERLAP 5
extern const char *const nnp__phase_cols[NNP_N_PHASES];
extern const char *const nnp__overlap_cols[NNP_N_OVERLAP];

/* Writes a cell as a JSON number with the file's own digits (so a page shows the CSV's
 * exact value), or null when it is not a number. */
void nnp__svt_json_num(nnp_jw_t *w, const nnp_svt_t *t, size_t row, long col);

/* Loads rank's files from dir (absolute, trusted). A missing file leaves its table empty
 * (present false) or its JSON NULL: analyses without data write nothing. Returns NNP_OK,
 * or an error when profiler_info_{rank}.json (written last by the analysis) is unreadable. */
int nnp__rank_data_load(const char *dir, int rank, nnp_rank_data_t **out);
void nnp__rank_data_free(nnp_rank_data_t *d);

/* Ranks that have profiler_info_{rank}.json in dir, ascending, into ranks (at most cap).
 * Returns the count, or a negative NNP_E* code. */
int nnp__results_ranks(const char *dir, int *ranks, int cap);

#endif /* NNP_SERVER_RUNDATA_H */
