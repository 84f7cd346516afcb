/* memory_internal.h - what the memory analysis's two files share: memory.c pairs the
 * events, samples the line, finds the peak and writes the CSV files; memory_json.c writes
 * memory_usage_summary/details from that state. Internal to src/analyse/. */
#ifndef NNP_MEMORY_INTERNAL_H
#define NNP_MEMORY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyse/analyse.h"
#include "util/csv_writer.h"

/* MindSpore down-samples the chart line to 2,000 nodes (formats.md 1.6). */
#define MAX_POINTS 2000
/* Room for a number: sign, 20 digits, point, decimals, NUL. */
#define NUM_BUF 48

/* One point of the chart line: the total right after event ev. */
typedef struct point {
    size_t ev;
    uint64_t total;
} point_t;

/* A tensor listed at the peak, with the end of its life (NNP_OPEN_END: never freed). */
typedef struct snap {
    size_t row;
    int64_t end_ns;
} snap_t;

typedef struct mem_run {
    const nnp_actx_t *c;
    const nnp_model_t *m;
    const nnp_mem_events_t *e;
    size_t n; /* events */
    /* Static memory is what stays live over [span_start, span_end] (INT64_MAX: open). */
    int64_t span_start_ns, span_end_ns;
    uint64_t n_alloc, n_free, n_outside, n_never_freed;
    uint64_t peak_bytes, static_bytes, first_total;
    size_t peak_ev;
    /* Down-sampling: every event when there are at most MAX_POINTS, else the minimum
     * and maximum of N_BUCKETS equal runs of events. */
    point_t *pts, *bmin, *bmax;
    size_t n_pts;
    /* The peak breakdown. */
    snap_t *snap;
    size_t n_snap;
    uint64_t live_at_peak, others_bytes;
    nnp_csv_quotes_t quotes; /* of the model's strings (tensor and op names) */
} mem_run_t;

/* Static: allocated no later than the span's start and freed (if ever) no earlier than
 * its end. */
bool nnp__mem_is_static(const mem_run_t *x, int64_t alloc_ns, int64_t free_ns);
/* ns as us with exactly 3 decimals, from integers (into b, returned). */
const char *nnp__mem_fmt_us(char *b, size_t cap, int64_t ns);
/* The op executing at t: the last op started at or before t; SIZE_MAX before the first. */
size_t nnp__mem_op_at(const nnp_model_t *m, int64_t t);
/* Writes memory_usage_summary (jf[0]) and memory_usage_details (jf[1]); each file opened
 * sets its is_open flag and is committed by the caller with the final verdict. */
int nnp__memory_json_write(const mem_run_t *x, nnp_outfile_t jf[2], bool is_open[2]);

#endif /* NNP_MEMORY_INTERNAL_H */
