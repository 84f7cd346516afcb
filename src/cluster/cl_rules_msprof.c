/* cl_rules_msprof.c - msprof's cluster rules (formats.md 2.6), for cl_verdicts.c:
 * SlowRankCalculator (wait ratio above 0.2, then the synchronisation ratio names the rank
 * that makes the others wait; cl_comm.c counts the op instances) and SlowLinkCalculator's
 * cause of a slow link (small packets), which the slow-link verdict names. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cl_verdicts.h"

/* msprof SlowRankCalculator: WAIT_TIME_THRESHOLD = 0.2 (cl_comm.c applies it). */
#define MSP_WAIT_RATIO_THRESHOLD 0.2
/* msprof SlowLinkCalculator: LARGE_MESSAGE_RATE = 0.8. */
#define MSP_LARGE_PACKET_RATE 0.8

const char *nnp__cl_msp_link_cause(const char *type, double large_ratio)
{
    if (isfinite(large_ratio) && large_ratio < MSP_LARGE_PACKET_RATE)
        return "too many small packets: the large-packet ratio is under 0.8 (msprof "
               "SlowLinkCalculator); fuse small messages (bucket gradients)";
    if (strcmp(type, "RDMA") == 0 || strcmp(type, "NET") == 0)
        return "the network link itself: check the NICs, cables and switch configuration";
    if (strcmp(type, "HCCS") == 0)
        return "check the HCCS configuration";
    if (strcmp(type, "PCIE") == 0)
        return "PCIe bandwidth contention between the devices";
    if (strcmp(type, "SHM") == 0)
        return "shared-memory copies on that host: check CPU binding, NUMA placement and "
               "memory bandwidth";
    return "the link itself";
}

/* ---- msprof SlowRankCalculator (wait ratios) ---- */

typedef struct blame_count {
    int rank;
    uint32_t ops;
} blame_t;

static int cmp_blame(const void *a, const void *b)
{
    const blame_t *x = a, *y = b;
    if (x->ops != y->ops)
        return x->ops > y->ops ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

void nnp__cl_msp_wait(const nnp_cl_data_t *d, verdict_t *v)
{
    const nnp_cl_wait_stats_t *w = &d->vin.wait;
    ev_t *e;
    v->id = "slow_rank.msprof_wait_ratio";
    v->kind = "slow_rank";
    v->source = "msprof SlowRankCalculator (mscalculate/cluster/slow_rank_calculator.py)";
    v->rule = "per collective op: the rank with the largest Wait Time Ratio waits if it is "
              "> 0.2; when its Synchronization Time Ratio is > 0.2 too, the rank with the "
              "smallest wait ratio is the slow rank (it makes the others wait), else the links "
              "are inconsistent";
    if (w->instances == 0) {
        snprintf(v->why_unchecked, sizeof(v->why_unchecked),
                 "no collective op seen on two or more ranks");
        return;
    }
    v->checked = true;
    nnp__cl_ev_int(v, "collective_ops", (int64_t)w->instances);
    nnp__cl_ev_int(v, "ops_with_waiting_rank", (int64_t)w->waiting);
    nnp__cl_ev_int(v, "ops_slow_rank", (int64_t)w->slow_rank);
    nnp__cl_ev_int(v, "ops_slow_link", (int64_t)w->slow_link);
    nnp__cl_ev_int(v, "ops_cause_unknown", (int64_t)w->no_sync);
    nnp__cl_ev_num(v, "threshold", MSP_WAIT_RATIO_THRESHOLD);
    e = nnp__cl_ev_raw(v, "blamed_ranks");
    nnp__cl_ev_append(e, "[");
    {
        /* The ranks that made the others wait, most often first (ties: the lower rank). */
        blame_t *b = nnp__calloc((size_t)d->n_ranks + 1, sizeof(*b));
        int nb = 0;
        for (int i = 0; b && i < d->n_ranks; i++)
            if (w->blamed[i] > 0)
                b[nb++] = (blame_t){d->ranks[i].rank, w->blamed[i]};
        if (b)
            qsort(b, (size_t)nb, sizeof(*b), cmp_blame);
        for (int i = 0; i < nb && i < RANKS_MAX; i++) {
            nnp__cl_ev_append(e, "%s{\"rank\":%d,\"ops\":%u}", i ? "," : "", b[i].rank, b[i].ops);
            if (i == 0)
                nnp__cl_blame(v, b[i].rank);
        }
        nnp__free(b);
    }
    nnp__cl_ev_append(e, "]");
    if (w->slow_rank > 0) {
        v->fired = true;
        nnp__cl_ev_str(v, "worst_op", w->worst_op);
        if (w->worst_step != NNP_CL_NO_STEP)
            nnp__cl_ev_int(v, "worst_step", (int64_t)w->worst_step);
        nnp__cl_ev_int(v, "worst_waiting_rank", w->worst_waiting);
        nnp__cl_ev_num(v, "worst_wait_ratio", w->worst_wait_ratio);
        nnp__cl_ev_num(v, "worst_sync_ratio", w->worst_sync_ratio);
        nnp__cl_ev_int(v, "worst_slow_rank", w->worst_blamed);
        nnp__cl_ev_num(v, "worst_slow_rank_wait_ratio", w->worst_min_ratio);
        snprintf(v->summary, sizeof(v->summary),
                 "In %llu of %llu collective ops a rank waits most of the op (wait ratio > 0.2) "
                 "before any data moves: the ranks are not synchronised. Rank %d makes the "
                 "others wait most often (worst: %s, rank %d waits %.4f of the op, rank %d "
                 "%.4f).",
                 (unsigned long long)w->slow_rank, (unsigned long long)w->instances,
                 v->n_ranks ? v->ranks[0] : -1, w->worst_op, w->worst_waiting, w->worst_wait_ratio,
                 w->worst_blamed, w->worst_min_ratio);
        snprintf(v->suggestion, sizeof(v->suggestion),
                 "Rank %d reaches the collectives last: find what it does before them (longer "
                 "compute, data loading, a slower device) in its timeline.",
                 v->n_ranks ? v->ranks[0] : -1);
    } else if (w->slow_link > 0) {
        v->fired = true;
        snprintf(v->summary, sizeof(v->summary),
                 "In %llu collective ops a rank waits most of the op although the ranks arrive "
                 "together: the communication bandwidths between ranks are inconsistent.",
                 (unsigned long long)w->slow_link);
        snprintf(v->suggestion, sizeof(v->suggestion),
                 "See the slow-link verdicts and the communication matrix.");
    } else if (w->no_sync > 0) {
        v->fired = true;
        snprintf(v->summary, sizeof(v->summary),
                 "In %llu collective ops a rank waits most of the op (wait ratio > 0.2); the data "
                 "has no synchronisation time, so whether a slow rank or the links cause it is "
                 "not known.",
                 (unsigned long long)w->no_sync);
        snprintf(v->suggestion, sizeof(v->suggestion),
                 "See the slow-rank and slow-link verdicts of the other rules.");
    } else {
        snprintf(v->summary, sizeof(v->summary),
                 "There is no slow rank in the current cluster communication.");
    }
}
