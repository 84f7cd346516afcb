/* timeline_export.h - the Timeline page's download with MindInsight's choices: logical
 * ranks (merged into one file), one graph id or all, summary (Step Trace and Overlap
 * Analysis only) or detail, and whether the sub-graphs' steps share one lane. Streams each
 * rank's trace_view.json (json_stream.h) and writes a new Chrome-trace array; memory stays
 * bounded by one event. */
#ifndef NNP_SERVER_TIMELINE_EXPORT_H
#define NNP_SERVER_TIMELINE_EXPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "server/runs.h"

typedef struct nnp_tl_choice {
    const nnp_rank_data_t *ranks[64]; /* ranks merged, in order */
    size_t n_ranks;
    bool summary;      /* Step Trace and Overlap Analysis only (MindInsight's default) */
    long long graph;   /* only this graph's ops and steps; -1 = all */
    bool merge_graphs; /* false: each graph's steps on its own "Graph N" lane */
} nnp_tl_choice_t;

/* Pids of rank k are moved by k * this, so merged ranks never share a process. */
#define NNP_TL_RANK_PID_STRIDE (1LL << 24)

/* True when the choice is exactly one rank's trace_view.json as written. */
bool nnp__tl_is_plain(const nnp_tl_choice_t *ch);

/* Writes the chosen timeline to fd. Returns NNP_OK, or an error reading a trace or
 * writing fd (message set). */
int nnp__timeline_export(const nnp_run_t *r, const nnp_tl_choice_t *ch, int fd);

#endif /* NNP_SERVER_TIMELINE_EXPORT_H */
