/* hta.h - Holistic Trace Analysis's analyses of PyTorch traces (issue #15), with HTA's
 * definitions and column names: temporal breakdown, idle-time breakdown, kernel breakdown
 * by type and top kernels, communication-computation overlap, CUDA kernel launch
 * statistics, queue length, and stragglers across ranks (docs/OUTPUTS.md, "HTA analyses").
 * The driver feeds one rank's model at a time (memory: one model), then writes the files
 * under <out_dir>/hta/. Internal to src/analyse/. */
#ifndef NNP_HTA_H
#define NNP_HTA_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"

/* HTA's defaults (hta/trace_analysis.py). Times are in HTA's units: the trace's µs, whole
 * (HTA rounds each event's start up and its end down to the µs), although HTA's column
 * names say "(ns)". */
#define NNP_HTA_CONSECUTIVE_KERNEL_DELAY 30 /* get_idle_time_breakdown */
#define NNP_HTA_RUNTIME_CUTOFF           50 /* get_cuda_kernel_launch_stats, µs */
#define NNP_HTA_LAUNCH_DELAY_CUTOFF      100
#define NNP_HTA_NUM_KERNELS              10 /* get_gpu_kernel_breakdown */
#define NNP_HTA_DURATION_RATIO           0.8
#define NNP_HTA_NUM_CANDIDATES           2    /* get_potential_stragglers */
#define NNP_HTA_MIN_NORMALIZED_DURATION  0.01 /* straggler comm kernels */

typedef struct nnp_hta nnp_hta_t;

/* Opens the output files under out_dir/hta/ (created 0700). Returns NNP_OK or an error
 * naming the file; *out is then owned by the caller (nnp__hta_destroy). */
int nnp__hta_create(const char *out_dir, nnp_hta_t **out);
/* Runs the per-rank analyses on m (finished: nnp__model_finish) and keeps what the
 * cross-rank ones need. Call in rank order. m may be freed after the call. */
int nnp__hta_add_rank(nnp_hta_t *h, const nnp_model_t *m);
/* Writes the cross-rank tables and commits every file (rc of the first failure). */
int nnp__hta_finish(nnp_hta_t *h);
/* Frees h; files not finished are removed. NULL is a no-op. */
void nnp__hta_destroy(nnp_hta_t *h);

/* The folder of HTA's tables under the analysis's output folder. */
#define NNP_HTA_DIR "hta"

/* Whether a model holds what HTA analyses: a PyTorch trace with GPU events, or our own
 * capture of the CUDA back end (CUDA runtime or driver calls and the device work they
 * launched: kernels, copies, sets, NCCL kernels recorded as collectives). */
bool nnp__hta_applies(const nnp_model_t *m);

#endif /* NNP_HTA_H */
