/* cl_rules_mindinsight.c - MindInsight's ParallelProposer rules (formats.md 2.6), for
 * cl_verdicts.c: 20 % slow iteration interval, 20 % low FLOPS, links 20 % below their
 * type's mean (the cause from cl_rules_msprof.c), communication shares above 10 %, and the
 * pipeline stages' communication and FLOPs. Values are rounded as MindInsight rounds them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cl_verdicts.h"

/* MindInsight ParallelProposer: _step_interval_threshold, _flops_per_second_threshold,
 * _rank_link_threshold, _flops_threshold = 0.2; communication thresholds 0.1. */
#define MI_INTERVAL_THRESHOLD 0.2
#define MI_FLOPS_THRESHOLD    0.2
#define MI_LINK_THRESHOLD     0.2
#define MI_COMM_THRESHOLD     0.1
#define MI_STAGE_FLOPS        0.2
/* MindInsight rounds values to 4 decimals and percents to 2. */
#define MI_VAL_SCALE 1e4
#define MI_PCT_SCALE 1e2
#define PERCENT      100.0
/* Slow links listed per verdict (the worst first). */
#define LINKS_LISTED 8

static double mi_val(double x)
{
    return nnp__cl_round_to(x, MI_VAL_SCALE);
}

static double mi_pct(double x)
{
    return nnp__cl_round_to(x * PERCENT, MI_PCT_SCALE);
}

/* A rank's average of a column (ms): the data's own average row when it has one. */
static bool rank_avg_ms(const nnp_cl_rank_t *s, int col, double *ms)
{
    if (col == NNP_CL_ITER_INTERVAL && (s->flags & NNP_CL_RANK_MI_AVG)) {
        *ms = (double)s->mi_avg_ns[0] / NS_PER_MS;
        return true;
    }
    if (col >= NNP_CL_MS_COMPUTATION && (s->flags & NNP_CL_RANK_MS_AVG)) {
        *ms = (double)s->ms_avg_ns[col - NNP_CL_MS_COMPUTATION] / NS_PER_MS;
        return true;
    }
    if (s->n_steps == 0 || !(s->tot_known & NNP_CL_BIT(col)))
        return false;
    *ms = (double)s->tot_ns[col] / (double)s->n_steps / NS_PER_MS;
    return true;
}

/* MindInsight's "computation" / "communication alone" ... columns, or ours. */
static bool rank_mi_ms(const nnp_cl_rank_t *s, int ms_col, int mpa_col, double *ms)
{
    return rank_avg_ms(s, ms_col, ms) || rank_avg_ms(s, mpa_col, ms);
}

void nnp__cl_mi_step_interval(const nnp_cl_data_t *d, verdict_t *v)
{
    double sum = 0, best = 0, val = 0;
    int n = 0, rank = -1;
    v->id = "slow_rank.mindinsight_step_interval";
    v->kind = "slow_rank";
    v->source = "MindInsight ParallelProposer._step_interval_analyze";
    v->rule = "average iteration interval of a rank / mean over ranks - 1 > 0.2 (the largest)";
    for (int i = 0; i < d->n_ranks; i++) {
        double ms;
        if (!(d->ranks[i].flags & NNP_CL_RANK_FAILED) &&
            rank_avg_ms(&d->ranks[i], NNP_CL_ITER_INTERVAL, &ms)) {
            sum += mi_val(ms);
            n++;
        }
    }
    if (n == 0) {
        snprintf(v->why_unchecked, sizeof(v->why_unchecked),
                 "no iteration interval (the data has no forward-start points)");
        return;
    }
    v->checked = true;
    for (int i = 0; i < d->n_ranks; i++) {
        double ms, p;
        if ((d->ranks[i].flags & NNP_CL_RANK_FAILED) ||
            !rank_avg_ms(&d->ranks[i], NNP_CL_ITER_INTERVAL, &ms))
            continue;
        p = sum == 0 ? 0 : mi_val(ms) / (sum / n) - 1;
        if (p > MI_INTERVAL_THRESHOLD && p > best) {
            best = p;
            rank = d->ranks[i].rank;
            val = mi_val(ms);
        }
    }
    nnp__cl_ev_int(v, "ranks", n);
    nnp__cl_ev_num(v, "mean_iteration_interval_ms", sum / n);
    nnp__cl_ev_num(v, "threshold", MI_INTERVAL_THRESHOLD);
    if (rank < 0) {
        snprintf(v->summary, sizeof(v->summary),
                 "No rank's iteration interval is more than 20%% above the mean.");
        return;
    }
    v->fired = true;
    nnp__cl_blame(v, rank);
    nnp__cl_ev_int(v, "rank_id", rank);
    nnp__cl_ev_num(v, "val", val);
    nnp__cl_ev_num(v, "percent", mi_pct(best));
    snprintf(v->summary, sizeof(v->summary),
             "Rank %d's iteration interval (%.4f ms) is %.2f%% above the cluster mean: it waits "
             "longer for data than the others.",
             rank, val, mi_pct(best));
    snprintf(v->suggestion, sizeof(v->suggestion),
             "The iteration interval is host time before the forward pass (data loading and "
             "preprocessing): look at that rank's data pipeline and host CPU load.");
}

void nnp__cl_mi_flops(const nnp_cl_data_t *d, verdict_t *v)
{
    double sum = 0, best = 0, val = 0, avg;
    int n = 0, rank = -1;
    v->id = "slow_rank.mindinsight_flops";
    v->kind = "slow_rank";
    v->source = "MindInsight ParallelProposer._flops_per_second_analyze";
    v->rule = "(mean FLOPS - FLOPS of a rank) / mean FLOPS > 0.2 (the largest)";
    for (int i = 0; i < d->n_ranks; i++)
        if (d->ranks[i].flags & NNP_CL_RANK_FLOPS) {
            sum += d->ranks[i].flops_per_s;
            n++;
        }
    if (n == 0) {
        snprintf(v->why_unchecked, sizeof(v->why_unchecked),
                 "no FLOPs in the data (flops_summary_{rank}.json, or ops recorded with FLOPs)");
        return;
    }
    v->checked = true;
    avg = sum / n;
    for (int i = 0; i < d->n_ranks; i++) {
        double p;
        if (!(d->ranks[i].flags & NNP_CL_RANK_FLOPS) || avg == 0)
            continue;
        p = (avg - d->ranks[i].flops_per_s) / avg;
        if (p > MI_FLOPS_THRESHOLD && p > best) {
            best = p;
            rank = d->ranks[i].rank;
            val = d->ranks[i].flops_per_s;
        }
    }
    nnp__cl_ev_int(v, "ranks", n);
    nnp__cl_ev_num(v, "mean_flops", avg);
    nnp__cl_ev_num(v, "threshold", MI_FLOPS_THRESHOLD);
    if (rank < 0) {
        snprintf(v->summary, sizeof(v->summary),
                 "No rank's FLOPS is more than 20%% below the cluster mean.");
        return;
    }
    v->fired = true;
    nnp__cl_blame(v, rank);
    nnp__cl_ev_int(v, "rank_id", rank);
    nnp__cl_ev_num(v, "val", mi_val(val));
    nnp__cl_ev_num(v, "percent", mi_pct(best));
    snprintf(v->summary, sizeof(v->summary),
             "Rank %d computes at %.4g FLOPS, %.2f%% below the cluster mean %.4g: a slow device "
             "(clock, thermal throttling, a noisy neighbour).",
             rank, val, mi_pct(best), avg);
    snprintf(v->suggestion, sizeof(v->suggestion),
             "Check that device's clocks and temperature, and what else runs on it.");
}

/* One link for the slow-link rules. */
typedef struct link_bw {
    int32_t src, dst, reporter;
    uint32_t type;
    double bw;
    double large_ratio; /* NAN when unknown */
} link_bw_t;

static int cmp_link_bw(const void *a, const void *b)
{
    const link_bw_t *x = a, *y = b;
    if (x->type != y->type)
        return x->type < y->type ? -1 : 1;
    if (x->bw != y->bw)
        return x->bw < y->bw ? -1 : 1;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    return (x->reporter > y->reporter) - (x->reporter < y->reporter);
}

/* The links the rules read: MindSpore's average rows when the data has them (its units,
 * local ranks, one entry per reporting rank), else ours summed over the run (GB/s). */
static int gather_links(const nnp_cl_data_t *d, link_bw_t **out, size_t *n_out, bool *from_ms)
{
    size_t n = 0, cap = d->vin.n_mi_links ? d->vin.n_mi_links : d->vin.n_links;
    link_bw_t *v = nnp__calloc(cap ? cap : 1, sizeof(*v));
    if (!v)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    *from_ms = d->vin.n_mi_links > 0;
    if (*from_ms) {
        for (size_t i = 0; i < d->vin.n_mi_links; i++) {
            const nnp_cl_link_rec_t *l = &d->vin.mi_links[i];
            if (l->src == l->dst || !isfinite(l->bw_given))
                continue;
            v[n++] =
                (link_bw_t){l->src, l->dst, l->rank, d->strs->order[l->type], l->bw_given, NAN};
        }
    } else {
        for (size_t i = 0; i < d->vin.links_cap; i++) {
            const nnp_cl_link_total_t *t = &d->vin.links[i];
            if (!t->used || t->src == t->dst || t->time_ns <= 0)
                continue;
            v[n++] = (link_bw_t){t->src,
                                 t->dst,
                                 -1,
                                 d->strs->order[t->type],
                                 (double)t->bytes / (double)t->time_ns, /* B/ns = GB/s */
                                 t->packets ? (double)t->large_packets / (double)t->packets : NAN};
        }
    }
    /* Sorted by type, then bandwidth: sums below run in one order whatever the hash did. */
    qsort(v, n, sizeof(*v), cmp_link_bw);
    *out = v;
    *n_out = n;
    return NNP_OK;
}

/* The type's name from its collation order. */
static const char *type_name(const nnp_cl_data_t *d, uint32_t order)
{
    for (size_t id = 1; id < d->strs->n; id++)
        if (d->strs->order[id] == order)
            return d->strs->s[id];
    return "";
}

int nnp__cl_mi_slow_link(const nnp_cl_data_t *d, verdict_t *v)
{
    link_bw_t *l = NULL;
    size_t n = 0;
    bool ms;
    ev_t *list = NULL;
    size_t len = 0;
    int rc;
    v->id = "slow_link.mindinsight";
    v->kind = "slow_link";
    v->source = "MindInsight ParallelProposer._rank_link_analyze, msprof SlowLinkCalculator "
                "(the cause)";
    v->rule = "per transport type: (mean bandwidth - bandwidth of a link) / mean > 0.2, src != "
              "dst (the largest per type); the cause is small packets when the large-packet "
              "ratio is under 0.8";
    rc = gather_links(d, &l, &n, &ms);
    if (rc != NNP_OK)
        return rc;
    if (n == 0) {
        snprintf(v->why_unchecked, sizeof(v->why_unchecked),
                 "no point-to-point links in the data (link_info, communication_matrix.json, "
                 "or MPI receives)");
        nnp__free(l);
        return NNP_OK;
    }
    v->checked = true;
    nnp__cl_ev_str(v, "bandwidth_unit", ms ? "as hccl_raw link_info states it" : "GB/s");
    nnp__cl_ev_num(v, "threshold", MI_LINK_THRESHOLD);
    list = nnp__cl_ev_raw(v, "slow_links");
    nnp__cl_ev_append(list, "[");
    for (size_t a = 0; a < n;) {
        size_t b = a, listed = 0;
        double sum = 0, avg;
        const char *type = type_name(d, l[a].type);
        char key[EV_KEY];
        while (b < n && l[b].type == l[a].type)
            sum += l[b++].bw;
        avg = sum / (double)(b - a);
        snprintf(key, sizeof(key), "%s_mean_bandwidth", type);
        nnp__cl_ev_num(v, key, avg);
        snprintf(key, sizeof(key), "%s_links", type);
        nnp__cl_ev_int(v, key, (int64_t)(b - a));
        /* Sorted by bandwidth: the slowest first, the worst proportion first. */
        for (size_t i = a; i < b; i++) {
            double p = avg == 0 ? 0 : (avg - l[i].bw) / avg;
            if (!(p > MI_LINK_THRESHOLD))
                break;
            if (i == a) {
                v->fired = true;
                nnp__cl_blame(v, l[i].src);
                nnp__cl_blame(v, l[i].dst);
                len += (size_t)snprintf(
                    v->summary + len, sizeof(v->summary) - len,
                    "%s%s link %d-%d%s runs at %.4g, %.2f%% below the %s mean %.4g: %s.",
                    len ? " " : "", type, l[i].src, l[i].dst,
                    ms ? " (ranks local to the group)" : "", l[i].bw, mi_pct(p), type, avg,
                    nnp__cl_msp_link_cause(type, l[i].large_ratio));
                if (len >= sizeof(v->summary))
                    len = sizeof(v->summary) - 1;
            }
            if (listed++ < LINKS_LISTED) {
                nnp__cl_ev_append(list, "%s{\"src_rank\":%d,\"des_rank\":%d,\"link_type\":\"%s\",",
                                  strlen(list->val) > 1 ? "," : "", l[i].src, l[i].dst, type);
                if (l[i].reporter >= 0)
                    nnp__cl_ev_append(list, "\"reported_by\":%d,", l[i].reporter);
                {
                    char x[48], y[48];
                    nnp__cl_num_text(x, sizeof(x), mi_val(l[i].bw));
                    nnp__cl_num_text(y, sizeof(y), l[i].large_ratio);
                    nnp__cl_ev_append(list,
                                      "\"val\":%s,\"percent\":%.2f,\"large_packet_ratio\":%s}", x,
                                      mi_pct(p), y);
                }
            }
        }
        a = b;
    }
    nnp__cl_ev_append(list, "]");
    if (!v->fired)
        snprintf(v->summary, sizeof(v->summary),
                 "No link is more than 20%% slower than the mean of its transport type.");
    else
        snprintf(v->suggestion, sizeof(v->suggestion),
                 "Test the named link alone (a point-to-point bandwidth test between the two "
                 "ranks); compare with the links of the same type in the matrix "
                 "(cluster_communication_matrix.json).");
    nnp__free(l);
    return NNP_OK;
}

void nnp__cl_mi_communication(const nnp_cl_data_t *d, const char *mode, verdict_t *v,
                              verdict_t *between, verdict_t *within)
{
    double comp = 0, comm = 0, recv = 0;
    int n = 0;
    bool pipeline = strcmp(mode, "pipeline-parallel") == 0;
    v->id = "communication.mindinsight_share";
    v->kind = "communication";
    v->source = "MindInsight ParallelProposer._communication_analyze";
    v->rule = "sum of communication alone / (computation + communication alone) over ranks > "
              "0.1 (data and model parallel)";
    between->id = "pipeline.mindinsight_between_stage";
    between->kind = "pipeline";
    between->source = "MindInsight ParallelProposer._between_stage_communication_analyze";
    between->rule = "sum of receive alone / (computation + communication alone) > 0.1";
    within->id = "pipeline.mindinsight_within_stage";
    within->kind = "pipeline";
    within->source = "MindInsight ParallelProposer._within_stage_communication_analyze";
    within->rule = "per stage: collective communication alone / (computation + communication "
                   "alone) > 0.1 (the largest)";
    for (int i = 0; i < d->n_ranks; i++) {
        const nnp_cl_rank_t *s = &d->ranks[i];
        double a, b, c;
        if ((s->flags & NNP_CL_RANK_FAILED) ||
            !rank_mi_ms(s, NNP_CL_MS_COMPUTATION, NNP_CL_COMPUTING, &a) ||
            !rank_mi_ms(s, NNP_CL_MS_COMM_ALONE, NNP_CL_COMM_NOT_OVERLAPPED, &b))
            continue;
        comp += mi_val(a);
        comm += mi_val(b);
        if (rank_mi_ms(s, NNP_CL_MS_RECEIVE_ALONE, NNP_CL_BUBBLE, &c))
            recv += mi_val(c);
        n++;
    }
    if (n == 0) {
        static const char why[] = "no computation/communication split";
        nnp__strlcpy(v->why_unchecked, why, sizeof(v->why_unchecked));
        nnp__strlcpy(between->why_unchecked, why, sizeof(between->why_unchecked));
        nnp__strlcpy(within->why_unchecked, why, sizeof(within->why_unchecked));
        return;
    }
    if (!pipeline) {
        double rate =
            comp > 0 && comm > 0 ? nnp__cl_round_to(comm / (comp + comm), MI_VAL_SCALE) : 0;
        v->checked = true;
        nnp__cl_ev_str(v, "parallel_mode", mode);
        nnp__cl_ev_num(v, "computation_ms", comp);
        nnp__cl_ev_num(v, "communication_alone_ms", comm);
        nnp__cl_ev_num(v, "val", mi_pct(rate));
        nnp__cl_ev_num(v, "threshold", MI_COMM_THRESHOLD * PERCENT);
        v->fired = rate > MI_COMM_THRESHOLD;
        snprintf(v->summary, sizeof(v->summary),
                 v->fired ? "Exposed communication is %.2f%% of computation plus communication "
                            "(above 10%%): communication is not hidden behind compute."
                          : "Exposed communication is %.2f%% of computation plus communication.",
                 mi_pct(rate));
        if (v->fired)
            snprintf(v->suggestion, sizeof(v->suggestion),
                     "Overlap gradient communication with the backward pass (bucketed "
                     "all-reduce), or communicate less (larger batches per step, gradient "
                     "compression).");
        snprintf(between->why_unchecked, sizeof(between->why_unchecked), "not pipeline parallel");
        snprintf(within->why_unchecked, sizeof(within->why_unchecked), "not pipeline parallel");
        return;
    }
    snprintf(v->why_unchecked, sizeof(v->why_unchecked),
             "pipeline parallel: the stage rules below apply");
    between->checked = true;
    {
        double rate = comp > 0 && comm > 0 && recv > 0
                          ? nnp__cl_round_to(recv / (comp + comm), MI_VAL_SCALE)
                          : 0;
        nnp__cl_ev_num(between, "receive_alone_ms", recv);
        nnp__cl_ev_num(between, "computation_ms", comp);
        nnp__cl_ev_num(between, "communication_alone_ms", comm);
        nnp__cl_ev_num(between, "val", mi_pct(rate));
        nnp__cl_ev_num(between, "threshold", MI_COMM_THRESHOLD * PERCENT);
        between->fired = rate > MI_COMM_THRESHOLD;
        snprintf(between->summary, sizeof(between->summary),
                 "Waiting for the previous stage (receive) is %.2f%% of computation plus "
                 "communication%s.",
                 mi_pct(rate), between->fired ? " (above 10%): the pipeline has bubbles" : "");
        if (between->fired)
            snprintf(between->suggestion, sizeof(between->suggestion),
                     "Balance the stages (move layers from the slowest stage) or use more "
                     "micro-batches to fill the pipeline.");
    }
    /* Within each stage (MindInsight's stage of a rank: rank // (size / stages) + 1). */
    within->checked = true;
    {
        double best = 0;
        int best_stage = -1;
        for (int s = 0; s < d->n_stages; s++) {
            double coll = 0, base = 0;
            for (int i = 0; i < d->n_ranks; i++) {
                const nnp_cl_rank_t *r = &d->ranks[i];
                double a, b, c;
                if (d->stage_of[i] != s || (r->flags & NNP_CL_RANK_FAILED) ||
                    !rank_mi_ms(r, NNP_CL_MS_COMPUTATION, NNP_CL_COMPUTING, &a) ||
                    !rank_mi_ms(r, NNP_CL_MS_COMM_ALONE, NNP_CL_COMM_NOT_OVERLAPPED, &b))
                    continue;
                if (rank_mi_ms(r, NNP_CL_MS_COLLECTIVE_ALONE, NNP_CL_COMM_NO_EXCL_RECV, &c))
                    coll += mi_val(c);
                base += mi_val(a) + mi_val(b);
            }
            if (base > 0 && coll / base > MI_COMM_THRESHOLD && coll / base > best) {
                best = coll / base;
                best_stage = s + 1;
            }
        }
        nnp__cl_ev_num(within, "threshold", MI_COMM_THRESHOLD * PERCENT);
        if (best_stage > 0) {
            within->fired = true;
            nnp__cl_ev_int(within, "stage", best_stage);
            nnp__cl_ev_num(within, "val", mi_pct(best));
            snprintf(within->summary, sizeof(within->summary),
                     "In stage %d, collective communication not hidden by compute is %.2f%% of "
                     "computation plus communication (above 10%%).",
                     best_stage, mi_pct(best));
            snprintf(within->suggestion, sizeof(within->suggestion),
                     "Reduce the data- or model-parallel communication of that stage, or overlap "
                     "it with its compute.");
        } else {
            snprintf(within->summary, sizeof(within->summary),
                     "No stage's collective communication exceeds 10%% of its time.");
        }
    }
}

void nnp__cl_mi_stage_flops(const nnp_cl_data_t *d, const char *mode, verdict_t *v)
{
    double *stage = NULL, mean = 0, best = 0, val = 0;
    int per, n_used = 0, best_stage = -1;
    v->id = "pipeline.mindinsight_stage_flops";
    v->kind = "pipeline";
    v->source = "MindInsight ParallelProposer._flops_analyze";
    v->rule = "per stage: FLOPs per rank / mean over stages - 1 > 0.2 (the largest)";
    if (strcmp(mode, "pipeline-parallel") != 0 || d->n_stages < 2) {
        snprintf(v->why_unchecked, sizeof(v->why_unchecked), "not pipeline parallel");
        return;
    }
    stage = nnp__calloc((size_t)d->n_stages, sizeof(double));
    if (!stage)
        return;
    per = d->expected_ranks / d->n_stages;
    for (int i = 0; i < d->n_ranks; i++)
        if ((d->ranks[i].flags & NNP_CL_RANK_FLOPS) && per > 0)
            stage[d->stage_of[i]] += d->ranks[i].flops / per;
    for (int s = 0; s < d->n_stages; s++)
        if (stage[s] > 0) {
            mean += stage[s];
            n_used++;
        }
    if (n_used == 0) {
        snprintf(v->why_unchecked, sizeof(v->why_unchecked), "no FLOPs in the data");
        nnp__free(stage);
        return;
    }
    v->checked = true;
    mean /= n_used;
    for (int s = 0; s < d->n_stages; s++) {
        double p = stage[s] / mean - 1;
        if (stage[s] > 0 && p > MI_STAGE_FLOPS && p > best) {
            best = p;
            best_stage = s + 1;
            val = stage[s];
        }
    }
    nnp__cl_ev_num(v, "mean_stage_flops", mean);
    nnp__cl_ev_num(v, "threshold", MI_STAGE_FLOPS);
    if (best_stage > 0) {
        v->fired = true;
        nnp__cl_ev_int(v, "stage", best_stage);
        nnp__cl_ev_num(v, "val", mi_val(val));
        nnp__cl_ev_num(v, "percent", mi_pct(best));
        snprintf(v->summary, sizeof(v->summary),
                 "Stage %d does %.2f%% more FLOPs per rank than the mean of the stages: the "
                 "pipeline waits for it.",
                 best_stage, mi_pct(best));
        snprintf(v->suggestion, sizeof(v->suggestion),
                 "Move layers from stage %d to the others so each stage does similar work.",
                 best_stage);
    } else {
        snprintf(v->summary, sizeof(v->summary), "The stages do similar FLOPs per rank.");
    }
    nnp__free(stage);
}
