/* step_trace.h - what the step trace's two files share (internal to src/analyse/):
 * step_trace.c derives the steps' phases, step_trace_write.c writes the detail CSV, the
 * fp/bp point names and MindInsight's summary. */
#ifndef NNP_STEP_TRACE_H
#define NNP_STEP_TRACE_H

#include <stddef.h>
#include <stdint.h>

/* A run of table rows [lo, hi). */
typedef struct nnp_range {
    size_t lo, hi;
} nnp_range_t;

/* Rows of a start-sorted table that start in [begin, end): the step an op STARTS in owns
 * it (analyse.h), so ops crossing a boundary are never split. */
nnp_range_t nnp__step_in_span(const int64_t *start, size_t n, int64_t begin, int64_t end);

/* An interned name and its position, sorted by name then position (qsort comparator). */
typedef struct nnp_id_pos {
    uint32_t id;
    uint32_t pos;
} nnp_id_pos_t;

int nnp__step_cmp_id_pos(const void *a, const void *b);

#endif /* NNP_STEP_TRACE_H */
