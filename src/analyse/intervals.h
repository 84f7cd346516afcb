/* intervals.h - time intervals and sorted interval lists (intervals.c): the sets the
 * overlap analysis computes with, and the lists its results hand to the timeline. A list
 * owns its array; "normalised" means sorted by start, disjoint and not touching. */
#ifndef NNP_ANALYSE_INTERVALS_H
#define NNP_ANALYSE_INTERVALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct nnp_interval {
    int64_t start_ns, end_ns;
} nnp_interval_t;

typedef struct nnp_interval_list {
    nnp_interval_t *v;
    size_t n, cap;
} nnp_interval_list_t;

/* Where nnp__ivl_measure starts its two searches in one list: the answers of the previous
 * call. Windows measured in time order move each search a few intervals from there. */
typedef struct nnp_ivl_hint {
    size_t first, last;
} nnp_ivl_hint_t;

/* Appends [start_ns, end_ns); NNP_ENOMEM (the list unchanged) when it cannot grow. */
int nnp__ivl_push(nnp_interval_list_t *l, int64_t start_ns, int64_t end_ns);
/* Frees the array and empties the list. */
void nnp__ivl_fini(nnp_interval_list_t *l);
/* Sorts by start and merges overlapping or touching intervals: [0,10] + [10,20] is one. */
void nnp__ivl_normalise(nnp_interval_list_t *l);
/* Keeps the parts of a normalised list inside [lo, hi]; empty parts are dropped. */
void nnp__ivl_clip(nnp_interval_list_t *l, int64_t lo, int64_t hi);
/* Appends a minus b (both normalised) to out, in O(|a| + |b|). */
int nnp__ivl_subtract(const nnp_interval_list_t *a, const nnp_interval_list_t *b,
                      nnp_interval_list_t *out);
/* The gaps of [lo, hi] minus (a union b), a and b normalised and clipped to [lo, hi], one
 * at a time in time order, head and tail included (MSP section_calculator: Free has head
 * and tail): one merge of the two lists, the union never built. a and b must outlive the
 * iteration and stay unchanged; no allocation.
 *   nnp_ivl_gaps_t g; nnp_interval_t gap;
 *   for (nnp__ivl_gaps_begin(&g, a, b, lo, hi); nnp__ivl_gaps_next(&g, &gap);) use(gap); */
typedef struct nnp_ivl_gaps {
    const nnp_interval_list_t *a, *b;
    size_t i, j;    /* next interval of a and of b */
    int64_t cur;    /* the busy time so far ends here */
    int64_t hi;     /* the end of the span */
    bool tail_done; /* the gap up to hi was considered */
} nnp_ivl_gaps_t;

void nnp__ivl_gaps_begin(nnp_ivl_gaps_t *g, const nnp_interval_list_t *a,
                         const nnp_interval_list_t *b, int64_t lo, int64_t hi);
/* The next gap in *gap; false when there is none left. */
bool nnp__ivl_gaps_next(nnp_ivl_gaps_t *g, nnp_interval_t *gap);
/* Appends every gap of nnp__ivl_gaps_begin's iteration to out; NNP_ENOMEM. */
int nnp__ivl_gaps(const nnp_interval_list_t *a, const nnp_interval_list_t *b, int64_t lo,
                  int64_t hi, nnp_interval_list_t *out);
/* Gives back the list's spare capacity (best effort). */
void nnp__ivl_shrink(nnp_interval_list_t *l);
/* Prefix sums of a list's lengths for nnp__ivl_measure, in *out (the caller frees it with
 * nnp__free); NNP_ENOMEM. */
int nnp__ivl_prefix_sums(const nnp_interval_list_t *l, int64_t **out);
/* Length of the normalised list inside [lo, hi], in O(log distance from the hint). */
int64_t nnp__ivl_measure(const nnp_interval_list_t *l, const int64_t *cum, int64_t lo, int64_t hi,
                         nnp_ivl_hint_t *h);
/* First to last instant of two normalised lists in *lo, *hi; false when both are empty or
 * the span is empty. */
bool nnp__ivl_busy_span(const nnp_interval_list_t *a, const nnp_interval_list_t *b, int64_t *lo,
                        int64_t *hi);
/* Total length of a list's intervals. */
int64_t nnp__ivl_total(const nnp_interval_list_t *l);

#endif
