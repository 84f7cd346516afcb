/* torch_npu.h - what the torch_npu / msprof-analyze importer's files share (internal to
 * src/read/): file names, helpers, and one reader per file.
 * import_torch_npu.c finds the inputs (one per *_ascend_pt folder) and the rank;
 * torch_npu_trace.c reads trace_view.json; torch_npu_tables.c the
 * CSV files (kernel_details, step_trace_time, cluster_step_trace_time); torch_npu_comm.c
 * communication.json and cluster_communication.json. */
#ifndef NNP_TORCH_NPU_H
#define NNP_TORCH_NPU_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"
#include "nnprof/nnprof.h"
#include "read/csv_reader.h"
#include "read/foreign.h"

#define FORMAT_NAME     "torch-npu"
#define TRACE_VIEW      "trace_view.json"
#define KERNEL_DETAILS  "kernel_details.csv"
#define PROFILER_OUTPUT "ASCEND_PROFILER_OUTPUT"
#define STEP_TRACE_TIME "step_trace_time.csv"
#define COMMUNICATION   "communication.json"
/* msprof-analyze's cluster outputs (formats.md 1.10), in their own folder. */
#define CLUSTER_DIR           "cluster_analysis_output"
#define CLUSTER_STEP_TRACE    "cluster_step_trace_time.csv"
#define CLUSTER_COMMUNICATION "cluster_communication.json"
/* communication.json: the key of the per-op (or per-rank) timing object. */
#define COMM_TIME_INFO "Communication Time Info"
#define COMM_START_US  "Start Timestamp(us)"
#define COMM_ELAPSE_MS "Elapse Time(ms)"
#define NS_PER_MS      1000000.0
#define MAX_JSON_DEPTH 8
/* Chrome-trace times are µs; torch_npu writes ts as a string with ns decimals. */
#define NS_PER_US 1000
/* Process names torch_npu gives (MANIFEST §2, formats.md 1.4). */
#define PROC_PYTHON   "Python"
#define PROC_HARDWARE "Ascend Hardware"
#define PROC_HCCL     "HCCL"
#define CAT_CPU_OP    "cpu_op"
#define STEP_PREFIX   "ProfilerStep#"
/* Processes remembered from the metadata (a trace has a handful). */
#define MAX_PROCS        64
#define MAX_FILE_BYTES   (512u * 1024u * 1024u)
#define MAX_ROW_WARNINGS 20

/* kernel_details.csv's core type of HCCL ops (communication at op level). */
#define HCCL_CORE "HCCL"

/* Skips leading blanks and tabs (torch_npu pads some CSV values with a tab). */
const char *nnp__tnpu_trim(const char *s);

/* Reads path's header into c; col[k] = the index of need[k]. Logs and fails on a miss. */
int nnp__tnpu_csv_open(nnp_csv_reader_t *c, const char *path, const char *const *need, long *col,
                       size_t n);

/* One reader per file; each logs what it skips and returns NNP_OK, an error when the file
 * cannot be read at all, or NNP_ENOMEM. */
/* trace_view.json: kd (may be NULL) maps (stream, start) to kernel_details' op type. */
int nnp__tnpu_import_trace_view(const char *path, nnp_model_t *m, const nnp_flow_map_t *kd);
/* kernel_details.csv: rows into m (compute -> kernels, HCCL -> comms), or, when types is
 * set (trace_view.json supplies the tasks), only each row's op type into types, keyed by
 * nnp__flow_key(0, stream, start_ns), the string id in the high 32 bits. */
int nnp__tnpu_import_kernel_details(const char *path, nnp_model_t *m, nnp_flow_map_t *types);
int nnp__tnpu_import_step_trace_time(const char *path, const nnp_model_t *m);
int nnp__tnpu_import_cluster_step_trace(const char *path, nnp_model_t *m);
/* Its ops become comms only when add is set (the trace had none). */
int nnp__tnpu_import_communication(const char *path, nnp_model_t *m, bool add);

#endif /* NNP_TORCH_NPU_H */
