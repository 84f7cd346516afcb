/* host_pairs.h - begin and end host rows paired into ranges (nnp_range_begin/end, Python
 * record_function, MindSpore host_info begin/end rows), the one pairing rule of the
 * analyses and exports that read ranges: an end row closes the innermost range still open
 * on its thread with the same event, module and stage (host_info's rule); ranges opened
 * inside it and not closed yet stay open. Read by op_table.c, step_trace.c, host_ranges.c,
 * kineto_trace.c, msprof_export_summary.c and timeline_lanes.c. */
#ifndef NNP_HOST_PAIRS_H
#define NNP_HOST_PAIRS_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

/* begin_of[i] of a row that is no end, or an end that closes nothing. */
#define NNP_HOST_NO_PAIR SIZE_MAX

/* *begin_of (h->t.n entries, NULL when there are no rows; released with nnp__free): for
 * each end row the begin row it closes, else NNP_HOST_NO_PAIR. Rows are taken in table
 * order (time order, each thread's rows in recorded order); threads at or past n_threads
 * share one stack. NNP_OK, or NNP_ENOMEM (error text set). */
int nnp__host_pairs(const nnp_host_rows_t *h, size_t n_threads, size_t **begin_of);

#endif /* NNP_HOST_PAIRS_H */
