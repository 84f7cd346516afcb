/* msprof_export_internal.h - what the msprof export's three files share: msprof_export.c
 * (the driver: import, analyses, iteration selection, stale files, README.txt, --clear)
 * fills the export state; msprof_export_summary.c (the summary tables) and
 * msprof_export_timeline.c (msprof_{ts}.json, step_trace_{ts}.json) read it and write their
 * files. Internal to src/export/msprof_export*.c. */
#ifndef NNP_MSPROF_EXPORT_INTERNAL_H
#define NNP_MSPROF_EXPORT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyse/analyse.h"
#include "export/msprof_export.h"

/* msprof writes "N/A" where a column does not apply (formats.md section 3). */
#define NA        "N/A"
#define NS_PER_US 1000
#define NAME_CAP  64

/* One export: filled by the driver (import, analyses, selection), read by the writers. */
typedef struct msprof_ex {
    const nnp_model_t *m;
    const nnp_msprof_opts_t *o;
    char out_dir[NNP_PATH_MAX];
    char ts[NNP_MSPROF_TS_LEN];
    nnp_step_trace_t st;
    nnp_overlap_t ov;
    nnp_kindex_t ki;
    nnp_step_spans_t spans;
    uint64_t *iter_id; /* per step row: its iteration id (graph index or step id) */
    bool *row_sel;     /* per step row: selected */
    nnp_interval_t *win;
    size_t n_win;
    nnp_msprof_result_t *res;
    int64_t diff_ns; /* wall - monotonic */
} msprof_ex_t;

/* The driver's helpers (msprof_export.c), used by both writers. */
/* True when the instant t lies in a selected iteration (always without --iteration-id). */
bool nnp__msprof_in_window(const msprof_ex_t *x, int64_t t);
/* True in step mode (--model-id 4294967295), where every row's model id is that value. */
bool nnp__msprof_is_step_mode(const msprof_ex_t *x);
/* ns as microseconds with 3 decimals ("[-]<us>.<3 digits>"), exact. */
void nnp__msprof_fmt_us(char *b, size_t cap, int64_t ns);
/* Adds name to the list of files written (x->res); returns NNP_OK. */
int nnp__msprof_record_file(msprof_ex_t *x, const char *name);
/* Removes path and everything below it; NNP_OK also when it does not exist. */
int nnp__msprof_rm_tree(const char *path);

/* `export summary`: op_summary, op_statistic, task_time, step_trace, communication_statistic,
 * api_statistic, memory_record and operator_memory (msprof_export_summary.c). */
int nnp__msprof_write_summary(msprof_ex_t *x);
/* `export timeline`: msprof_{ts}.json and step_trace_{ts}.json (msprof_export_timeline.c). */
int nnp__msprof_write_timeline(msprof_ex_t *x);

#endif
