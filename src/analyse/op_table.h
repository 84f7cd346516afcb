/* op_table.h - per-name operator table with self time and memory (op_table.c), the data of
 * torch.profiler's key_averages() table, behind nnp_op_table() and nnprof.torch. Reads the
 * model only. */
#ifndef NNP_OP_TABLE_H
#define NNP_OP_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

typedef enum nnp_op_row_kind { NNP_ROW_OP, NNP_ROW_RANGE, NNP_ROW_COMM } nnp_op_row_kind_t;

/* One group: a name (op type, range event or collective name), and its input shapes and
 * source stack when grouped by them. Times in ns; memory in bytes (allocated minus freed). */
typedef struct nnp_op_row {
    nnp_op_row_kind_t kind;
    uint32_t name;   /* model string id */
    uint32_t shapes; /* model string id, 0 when not grouped by shapes */
    uint32_t stack;  /* model string id (nnp__op_stacks), 0 when none or not grouped by it */
    uint64_t count;
    int64_t total_ns, self_ns, min_ns, max_ns;
    uint64_t flops;
    int64_t mem_bytes, self_mem_bytes;
    /* torch's export_stacks() value of the group: the sum over its calls of each call's self
     * time in whole microseconds (truncated), calls under 1 us left out. */
    uint64_t self_us_whole;
} nnp_op_row_t;

/* The time span [*lo, *hi] of steps first..last of the model (the union of their spans);
 * false when none of them is in the model. */
bool nnp__step_range_bounds(const nnp_model_t *m, uint64_t first, uint64_t last, int64_t *lo,
                            int64_t *hi);

/* Builds the table. With has_steps, only what starts within the span of steps
 * first..last counts. flags: NNP_OP_TABLE_* (nnprof.h); with NNP_OP_TABLE_STEPS the model
 * must hold the string NNP_TORCH_STEP_KEY (read/importers.h), else its steps are left out.
 * *rows (released with nnp__free) is sorted by self time, largest first, ties by name.
 * Returns NNP_OK or NNP_ENOMEM. */
int nnp__op_table(const nnp_model_t *m, bool has_steps, uint64_t first, uint64_t last,
                  unsigned flags, nnp_op_row_t **rows, size_t *n_rows);

/* The source stack each op of m counts under (op_stacks.c): *stacks[i] for op i, a model
 * string id (0 = none); NULL when no op has a stack. Released with nnp__free. Returns NNP_OK
 * or NNP_ENOMEM. */
int nnp__op_stacks(const nnp_model_t *m, uint32_t **stacks);

#endif /* NNP_OP_TABLE_H */
