/* mindspore.h - what the MindSpore importer's files share (internal to src/read/):
 * import_mindspore.c finds the inputs and reads the step trace, timeline, pipeline and
 * profiler_info; mindspore_ops.c the op files (framework_raw, aicore/aicpu intermediate);
 * mindspore_hccl.c the communication files (hccl_raw, hccl_info traces); mindspore_util.c
 * the helpers below. Formats: formats.md sections 1.1, 1.3, 1.10, 2.7. */
#ifndef NNP_MINDSPORE_H
#define NNP_MINDSPORE_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"
#include "nnprof/nnprof.h"
#include "read/csv_reader.h"
#include "read/foreign.h"
#include "util/util.h"

/* Step trace values are 10 ns system-counter ticks (formats.md 1.1: MindInsight's
 * PER_MS_SYSCNT = 100000, "10ns to 1ms"). */
#define NS_PER_TICK 10
#define NS_PER_MS   1000000
/* Decimal digits of a ms value that still name whole ns. */
#define MS_NS_DIGITS 6
/* Largest file read whole (the biggest corpus CSV is 372 KB; real runs stay well below). */
#define MAX_FILE_BYTES (512u * 1024u * 1024u)
/* Per-file malformed-row warnings logged before they are only counted (as host_info_csv). */
#define MAX_ROW_WARNINGS 20

typedef nnp_csv_reader_t csv_t;

/* Reads path and its header record into c; logs and releases c on failure. */
int nnp__ms_csv_open(csv_t *c, const char *path);
void NNP_PRINTF(3, 4) nnp__ms_row_warn(csv_t *c, uint64_t line, const char *fmt, ...);
void nnp__ms_warn_summary(const csv_t *c);
const char *nnp__ms_trim(const char *s);
/* A plain decimal integer with optional blanks around it. */
bool nnp__ms_parse_i64(const char *s, int64_t *out);
/* A decimal "123.456789" ms as exact ns. */
bool nnp__ms_parse_ms_ns(const char *s, int64_t *out);

/* mindspore_ops.c: each returns NNP_OK when the file was read (bad rows logged), an error
 * when it could not be read at all, NNP_ENOMEM out of memory. */
/* types maps a full op name's string id to its op type's (framework_raw). */
int nnp__ms_import_framework(const char *path, nnp_model_t *m, nnp_flow_map_t *types);
int nnp__ms_import_aicore_type(const char *path, nnp_model_t *m);
int nnp__ms_import_aicore_detail(const char *path, nnp_model_t *m, const nnp_flow_map_t *types);
int nnp__ms_import_aicpu(const char *path, nnp_model_t *m);
/* After the op files: every kernel's op type (framework_raw, else from its name) and core
 * type (AI_CORE / AI_CPU when the intermediate files name it). */
int nnp__ms_type_kernels(nnp_model_t *m, const nnp_flow_map_t *types);

/* mindspore_hccl.c */
int nnp__ms_import_hccl_raw(const char *path, nnp_model_t *m);
/* dir/hccl_info/<op>/<iter>.trace (the raw traces hccl_raw is made from), by MindSpore's
 * rules (formats.md 2.7); steps from the model's steps. Returns NNP_ENOENT when dir has no
 * hccl_info folder. */
int nnp__ms_import_hccl_info(const char *dir, nnp_model_t *m);

#endif /* NNP_MINDSPORE_H */
