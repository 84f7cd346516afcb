/* cl_comm.h - what cl_comm.c (cluster_communication.json, one op instance at a time)
 * shares with cl_comm_totals.c (the "Total Op Info@<group>" entries of each step): text
 * buffer sizes and units, a spilled op record's trailing entries, msprof's ratio, and the
 * table of totals. Internal to src/cluster/. */
#ifndef NNP_CL_COMM_H
#define NNP_CL_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "cluster/cluster.h"
#include "util/json_writer.h"

#define NUM_BUF      48
#define KEY_BUF      (2 * NNP_NAME_MAX)
#define NS_PER_MS    1e6
#define BYTES_PER_MB 1e6
#define MS_DIGITS    6 /* ns -> ms */
#define MB_DIGITS    6 /* bytes -> MB */

/* The bandwidth entries (r->n_bw) and the size distribution (r->n_dist) that follow a
 * spilled op record. */
nnp_cl_bw_t *nnp__cl_comm_bw(nnp_cl_comm_rec_t *r);
nnp_cl_pkt_t *nnp__cl_comm_dist(nnp_cl_comm_rec_t *r);
/* a / b rounded as msprof's compute_ratio (4 decimals); 0 when b is 0. */
double nnp__cl_safe_ratio(double a, double b);
/* ns written as a JSON number of ms (MS_DIGITS decimals, exact). */
void nnp__cl_jw_ms(nnp_jw_t *w, int64_t ns);

/* ---- the totals of one step per (group, rank) (cl_comm_totals.c) ---- */

typedef struct tot tot_t;
/* An open-addressing table keyed by (group, rank); all zero is empty. The caller owns v
 * (nnp__free). */
typedef struct totals {
    tot_t *v;
    size_t cap, n;
} totals_t;

/* Adds an op record (its waits derived) to the sums of its (group, rank). */
int nnp__cl_totals_add(totals_t *t, nnp_cl_comm_rec_t *r);
/* Writes "Total Op Info@<group>" for every group of the step (groups in text order, ranks in
 * order), then empties tot. */
int nnp__cl_totals_write(totals_t *tot, const nnp_cl_data_t *d, nnp_jw_t *w);
/* Empties t, keeping its table. */
void nnp__cl_totals_clear(totals_t *t);

#endif /* NNP_CL_COMM_H */
