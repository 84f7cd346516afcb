/* msprof_export.h - msprof-compatible `export timeline|summary` of one raw directory
 * (issue #6): files named and shaped as msprof's mindstudio_profiler_output/ (seed 002,
 * reference/formats.md section 3). Used by tools/nnprof/cmd_export.c; docs/EXPORT.md. */
#ifndef NNP_MSPROF_EXPORT_H
#define NNP_MSPROF_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Output sub-directory of a raw directory, as msprof names it (seed 002). */
#define NNP_MSPROF_OUT_DIR "mindstudio_profiler_output"
/* --model-id value that selects step mode (MSP GE_OP_MODEL_ID = UINT32_MAX). */
#define NNP_MSPROF_STEP_MODEL_ID 4294967295u
/* "YYYYMMDDhhmmss" plus NUL: the msprof file-name timestamp. */
#define NNP_MSPROF_TS_LEN 15
/* Most files one export writes (2 timeline + 8 summary kinds + README.txt), with room. */
#define NNP_MSPROF_MAX_FILES 16

typedef struct nnp_msprof_opts {
    bool is_timeline; /* export timeline, else export summary */
    bool is_json;     /* summary: --format json */
    bool has_iteration;
    uint64_t iteration_id;             /* >= 1 */
    uint32_t model_id;                 /* NNP_MSPROF_STEP_MODEL_ID = step mode */
    uint64_t iteration_count;          /* >= 1 (1 when not given) */
    bool clear;                        /* --clear on: nnp__msprof_clear after the export */
    char timestamp[NNP_MSPROF_TS_LEN]; /* "" = now, local time */
} nnp_msprof_opts_t;

typedef struct nnp_msprof_result {
    char files[NNP_MSPROF_MAX_FILES][64]; /* base names written, README.txt last */
    size_t n_files;
} nnp_msprof_result_t;

/* Exports raw_dir (one of our PROF_* directories) into raw_dir/mindstudio_profiler_output.
 * Every file is written under a temporary name and renamed; files of an earlier export
 * of the same kind (timeline or summary) are removed afterwards, so the directory holds
 * one consistent export. res (may be NULL) lists the files written. Returns NNP_OK,
 * NNP_ENOENT (not a raw directory, or the iteration asked for does not exist) or an
 * error with a message naming the file and the reason. */
int nnp__msprof_export(const char *raw_dir, const nnp_msprof_opts_t *o, nnp_msprof_result_t *res);

/* --clear on: removes the intermediate data of raw_dir that export does not need, i.e.
 * raw_dir/ASCEND_PROFILER_OUTPUT (the `nnprof analyse` outputs, rebuilt from the raw
 * files). Never touches info.json, meta.nnp, data_*.nnp or mindstudio_profiler_output.
 * Returns NNP_OK (also when there was nothing to remove) or an error. */
int nnp__msprof_clear(const char *raw_dir);

#endif /* NNP_MSPROF_EXPORT_H */
