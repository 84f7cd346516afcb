/* op_stats.h - the operator query behind nnp_op_analyse() and `nnprof query op NAME...`
 * (op_stats.c, which also writes the op statistics files of nnp__op_stats_write_all in
 * analyse.h). Reads the model only; no output files. */
#ifndef NNP_OP_STATS_H
#define NNP_OP_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

/* One answer per requested name. Times in ns; all zero when count is 0 (not found). */
typedef struct nnp_op_query_row {
    const char *name; /* the requested name: borrowed from names[], valid as long as it */
    uint64_t count;
    int64_t total_ns, avg_ns, min_ns, max_ns; /* avg rounded half up to the ns */
} nnp_op_query_row_t;

/* Statistics of the ops matching each name, over the whole model (no step filter).
 * The compute rows are searched (analyse.h): device kernels when the model has any, each
 * matching by its own name or by its launching op's (correlation id) full name or type;
 * else host ops, matching by full name or op type.
 *   m        [in]  the model
 *   names    [in]  n_names names (full op names or op types); none may be NULL or ""
 *   rows     [out] n_names rows in the order of names, released with nnp__free()
 *   n_rows   [out] n_names
 * Returns NNP_OK, NNP_EINVAL (no names, or an empty one: the message is MindSpore's
 * op_analyse text) or NNP_ENOMEM; *rows is NULL and *n_rows 0 on error. Thread-safe
 * for concurrent readers of one model. */
int nnp__op_query(const nnp_model_t *m, const char *const *names, size_t n_names,
                  nnp_op_query_row_t **rows, size_t *n_rows);

#endif /* NNP_OP_STATS_H */
