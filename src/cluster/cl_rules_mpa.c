/* cl_rules_mpa.c - msprof-analyze's cluster rules (formats.md 2.6), for cl_verdicts.c:
 * SlowRankAnalyzer (5 % max-min spread of Computing, Communication(Not Overlapped), Free over
 * the mean step) and SlowLinkAnalyzer (bandwidth per transport type over every (step, rank),
 * from cl_comm.c's sums). Each fills a verdict with the numbers that decided it. */
#include <stdio.h>
#include <string.h>

#include "cluster/cl_verdicts.h"

/* msprof-analyze SlowRankAnalyzer / SlowLinkAnalyzer: RATIO_THRESHOLD = 0.05. */
#define MPA_RATIO_THRESHOLD 0.05
#define MS_SCALE_3          1e3 /* msprof-analyze: round(x / 1000, 3) ms */

/* ---- msprof-analyze SlowRankAnalyzer ---- */

typedef struct ext {
    int64_t v;
    int32_t rank;
    uint64_t step;
    bool set;
} ext_t;

/* Smaller (step, rank) wins a tie: msprof-analyze takes the first of its sorted list. */
static void ext_update(ext_t *e, int64_t v, int32_t rank, uint64_t step, bool want_max)
{
    bool better = !e->set || (want_max ? v > e->v : v < e->v) ||
                  (v == e->v && (step < e->step || (step == e->step && rank < e->rank)));
    if (better) {
        e->v = v;
        e->rank = rank;
        e->step = step;
        e->set = true;
    }
}

int nnp__cl_mpa_slow_rank(const nnp_cl_data_t *d, verdict_t *v)
{
    static const int cols[3] = {NNP_CL_COMPUTING, NNP_CL_COMM_NOT_OVERLAPPED, NNP_CL_FREE};
    static const char *const names[3] = {"Computing", "Communication", "Free"};
    static const char *const keys[3] = {"computing", "communication_not_overlapped", "free"};
    ext_t mx[3], mn[3];
    double total = 0;
    uint64_t n = 0;
    int rc = NNP_OK;
    memset(mx, 0, sizeof(mx));
    memset(mn, 0, sizeof(mn));
    v->id = "slow_rank.msprof_analyze";
    v->kind = "slow_rank";
    v->source = "msprof-analyze SlowRankAnalyzer (advisor/analyzer/cluster/slow_rank_analyzer.py)";
    v->rule = "for Computing, Communication(Not Overlapped) and Free over every (step, rank) "
              "of cluster_step_trace_time.csv: (max - min) / mean(Computing + Communication(Not "
              "Overlapped) + Free) > 0.05";
    for (int i = 0; rc == NNP_OK && i < d->n_ranks; i++) {
        nnp_cl_cursor_t c;
        const nnp_cl_step_rec_t *r;
        if (d->ranks[i].flags & NNP_CL_RANK_FAILED)
            continue;
        rc = nnp__cl_cursor_open(&c, &d->steps, nnp__cl_spill_find(&d->steps, d->ranks[i].rank),
                                 sizeof(*r));
        while (rc == NNP_OK && (r = nnp__cl_cursor_next(&c, &rc)) != NULL) {
            int64_t t = 0;
            for (int k = 0; k < 3; k++) {
                t += r->v[cols[k]];
                ext_update(&mx[k], r->v[cols[k]], r->rank, r->step_id, true);
                ext_update(&mn[k], r->v[cols[k]], r->rank, r->step_id, false);
            }
            total += (double)t;
            n++;
        }
        nnp__cl_cursor_close(&c);
    }
    if (rc != NNP_OK)
        return rc;
    if (n == 0) {
        snprintf(v->why_unchecked, sizeof(v->why_unchecked), "no step rows");
        return NNP_OK;
    }
    v->checked = true;
    {
        double mean = total / (double)n;
        size_t len = 0;
        nnp__cl_ev_int(v, "entries", (int64_t)n);
        nnp__cl_ev_num(v, "mean_total_us", mean / NS_PER_US);
        nnp__cl_ev_num(v, "threshold", MPA_RATIO_THRESHOLD);
        for (int k = 0; k < 3; k++) {
            char key[EV_KEY];
            double ratio = mean == 0 ? 0 : (double)(mx[k].v - mn[k].v) / mean;
            bool fired = ratio > MPA_RATIO_THRESHOLD;
            snprintf(key, sizeof(key), "%s_ratio", keys[k]);
            nnp__cl_ev_num(v, key, ratio);
            snprintf(key, sizeof(key), "%s_max_min_diff_ms", keys[k]);
            nnp__cl_ev_num(v, key,
                           nnp__cl_round_to((double)(mx[k].v - mn[k].v) / NS_PER_MS, MS_SCALE_3));
            snprintf(key, sizeof(key), "%s_max_rank", keys[k]);
            nnp__cl_ev_int(v, key, mx[k].rank);
            snprintf(key, sizeof(key), "%s_max_us", keys[k]);
            nnp__cl_ev_num(v, key, (double)mx[k].v / NS_PER_US);
            snprintf(key, sizeof(key), "%s_min_rank", keys[k]);
            nnp__cl_ev_int(v, key, mn[k].rank);
            snprintf(key, sizeof(key), "%s_min_us", keys[k]);
            nnp__cl_ev_num(v, key, (double)mn[k].v / NS_PER_US);
            if (mx[k].step != NNP_CL_NO_STEP) {
                snprintf(key, sizeof(key), "%s_max_step", keys[k]);
                nnp__cl_ev_int(v, key, (int64_t)mx[k].step);
                snprintf(key, sizeof(key), "%s_min_step", keys[k]);
                nnp__cl_ev_int(v, key, (int64_t)mn[k].step);
            }
            if (!fired)
                continue;
            v->fired = true;
            /* The rank computing (or idling) longest is the slow one; the one with the
             * least exposed communication is the one the others wait for. */
            nnp__cl_blame(v, k == 1 ? mn[k].rank : mx[k].rank);
            len += (size_t)snprintf(
                v->summary + len, sizeof(v->summary) - len,
                "%s%s has some issues in the cluster, because the max "
                "difference of %s time has reached %.3fms (rank %d: %.3f us, "
                "rank %d: %.3f us).",
                len ? " " : "", names[k], names[k],
                nnp__cl_round_to((double)(mx[k].v - mn[k].v) / NS_PER_MS, MS_SCALE_3), mx[k].rank,
                (double)mx[k].v / NS_PER_US, mn[k].rank, (double)mn[k].v / NS_PER_US);
            if (len >= sizeof(v->summary))
                len = sizeof(v->summary) - 1;
        }
    }
    if (!v->fired)
        snprintf(v->summary, sizeof(v->summary), "There is no slow rank issues");
    else
        snprintf(v->suggestion, sizeof(v->suggestion),
                 "Compare the named ranks' timelines (nnprof cluster --timeline-ranks): longer "
                 "Computing points at a slower device or more work on that rank, longer Free at "
                 "its host (data loading, launch), and the rank with the least exposed "
                 "communication is the one the others wait for.");
    return NNP_OK;
}

/* ---- msprof-analyze SlowLinkAnalyzer ---- */

void nnp__cl_mpa_slow_link(const nnp_cl_data_t *d, verdict_t *v)
{
    size_t len = 0;
    v->id = "slow_link.msprof_analyze";
    v->kind = "slow_link";
    v->source = "msprof-analyze SlowLinkAnalyzer (advisor/analyzer/cluster/slow_link_analyzer.py)";
    v->rule = "per transport type, the bandwidth of every (step, rank): average, maximum, "
              "minimum and their difference; (max - min) / mean >= 0.05 names the extremes";
    for (int i = 0; i < NNP_CL_MAX_BW; i++) {
        const char *type;
        char key[EV_KEY];
        double mean, spread;
        if (d->vin.mpa_bw[i].type == 0 || d->vin.mpa_bw[i].n == 0)
            continue;
        v->checked = true;
        type = nnp__cl_str(d->strs, d->vin.mpa_bw[i].type);
        mean = d->vin.mpa_bw[i].sum / (double)d->vin.mpa_bw[i].n;
        spread = mean == 0 ? 0 : (d->vin.mpa_bw[i].max - d->vin.mpa_bw[i].min) / mean;
        snprintf(key, sizeof(key), "%s_average_gb_s", type);
        nnp__cl_ev_num(v, key, nnp__cl_round_to(mean, MS_SCALE_3));
        snprintf(key, sizeof(key), "%s_max_gb_s", type);
        nnp__cl_ev_num(v, key, nnp__cl_round_to(d->vin.mpa_bw[i].max, MS_SCALE_3));
        snprintf(key, sizeof(key), "%s_max_rank", type);
        nnp__cl_ev_int(v, key, d->vin.mpa_bw[i].max_rank);
        snprintf(key, sizeof(key), "%s_min_gb_s", type);
        nnp__cl_ev_num(v, key, nnp__cl_round_to(d->vin.mpa_bw[i].min, MS_SCALE_3));
        snprintf(key, sizeof(key), "%s_min_rank", type);
        nnp__cl_ev_int(v, key, d->vin.mpa_bw[i].min_rank);
        if (d->vin.mpa_bw[i].min_step != NNP_CL_NO_STEP) {
            snprintf(key, sizeof(key), "%s_min_step", type);
            nnp__cl_ev_int(v, key, (int64_t)d->vin.mpa_bw[i].min_step);
        }
        snprintf(key, sizeof(key), "%s_difference_gb_s", type);
        nnp__cl_ev_num(v, key,
                       nnp__cl_round_to(d->vin.mpa_bw[i].max - d->vin.mpa_bw[i].min, MS_SCALE_3));
        len += (size_t)snprintf(v->summary + len, sizeof(v->summary) - len,
                                "%s%s: the average is %.3f, while the maximum is %.3fGB/s and the "
                                "minimum is %.3fGB/s, the difference is %.3fGB/s.",
                                len ? " " : "", type, nnp__cl_round_to(mean, MS_SCALE_3),
                                d->vin.mpa_bw[i].max, d->vin.mpa_bw[i].min,
                                d->vin.mpa_bw[i].max - d->vin.mpa_bw[i].min);
        if (len >= sizeof(v->summary))
            len = sizeof(v->summary) - 1;
        if (spread >= MPA_RATIO_THRESHOLD) {
            v->fired = true;
            nnp__cl_blame(v, d->vin.mpa_bw[i].min_rank);
        }
    }
    if (!v->checked)
        snprintf(v->why_unchecked, sizeof(v->why_unchecked), "no bandwidth in the data");
    else if (v->fired)
        snprintf(v->suggestion, sizeof(v->suggestion),
                 "The ranks named with the minimum bandwidth move data slowest: compare their "
                 "links in the communication matrix.");
}
