/* cl_verdicts.c - cluster_advice.json and cluster_advice.txt: every cluster rule of the
 * reference tools, evaluated on the gathered data, each with the numbers that decided it
 * (formats.md 2.6): msprof-analyze's slow-rank rule (5 % max-min spread of Computing,
 * Communication(Not Overlapped), Free over the mean step) and its slow-link statistics;
 * MindInsight's ParallelProposer (20 % slow iteration interval, 20 % low FLOPS, links 20 %
 * below their type's mean, communication shares above 10 %, pipeline stages); msprof's
 * SlowRankCalculator (wait ratio above 0.2, then the synchronisation ratio names the rank
 * that makes the others wait) and SlowLinkCalculator (small packets); and the single-rank
 * advisor's findings counted over ranks. Rules whose data is absent are listed as not
 * checked, so "no finding" never hides "no data". docs/CLUSTER.md lists them all. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cl_driver.h"
#include "util/json_writer.h"

#define JSON_FILE "cluster_advice.json"
#define TXT_FILE  "cluster_advice.txt"

/* ---- thresholds, each from its source (formats.md 2.6) ---- */
/* msprof-analyze SlowRankAnalyzer / SlowLinkAnalyzer: RATIO_THRESHOLD = 0.05. */
#define MPA_RATIO_THRESHOLD 0.05
/* MindInsight ParallelProposer: _step_interval_threshold, _flops_per_second_threshold,
 * _rank_link_threshold, _flops_threshold = 0.2; communication thresholds 0.1. */
#define MI_INTERVAL_THRESHOLD 0.2
#define MI_FLOPS_THRESHOLD    0.2
#define MI_LINK_THRESHOLD     0.2
#define MI_COMM_THRESHOLD     0.1
#define MI_STAGE_FLOPS        0.2
/* msprof SlowRankCalculator: WAIT_TIME_THRESHOLD = 0.2 (cl_comm.c applies it). */
#define MSP_WAIT_RATIO_THRESHOLD 0.2
/* msprof SlowLinkCalculator: LARGE_MESSAGE_RATE = 0.8. */
#define MSP_LARGE_PACKET_RATE 0.8
/* MindInsight rounds values to 4 decimals and percents to 2. */
#define MI_VAL_SCALE 1e4
#define MI_PCT_SCALE 1e2
#define PERCENT      100.0
#define NS_PER_MS    1e6
#define NS_PER_US    1e3
#define MS_SCALE_3   1e3 /* msprof-analyze: round(x / 1000, 3) ms */

/* ---- a verdict with its evidence ---- */
#define EV_MAX    40
#define EV_KEY    64
#define EV_VAL    1024
#define TEXT_CAP  1024
#define RANKS_MAX 16
/* Slow links listed per verdict (the worst first). */
#define LINKS_LISTED 8

typedef enum ev_kind { EV_NUM, EV_STR, EV_RAW } ev_kind_t;

typedef struct ev {
    char key[EV_KEY];
    ev_kind_t kind;
    char val[EV_VAL];
} ev_t;

typedef struct verdict {
    const char *id, *kind, *source, *rule;
    bool checked, fired;
    int ranks[RANKS_MAX];
    int n_ranks;
    ev_t ev[EV_MAX];
    int n_ev;
    char summary[TEXT_CAP], suggestion[TEXT_CAP], why_unchecked[TEXT_CAP];
} verdict_t;

static void num_text(char *buf, size_t cap, double v)
{
    if (!isfinite(v)) {
        snprintf(buf, cap, "null");
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
}

static ev_t *ev_add(verdict_t *v, const char *key, ev_kind_t kind)
{
    ev_t *e;
    if (v->n_ev >= EV_MAX)
        return NULL;
    e = &v->ev[v->n_ev++];
    snprintf(e->key, sizeof(e->key), "%s", key);
    e->kind = kind;
    e->val[0] = '\0';
    return e;
}

static void ev_num(verdict_t *v, const char *key, double x)
{
    ev_t *e = ev_add(v, key, EV_NUM);
    if (e)
        num_text(e->val, sizeof(e->val), x);
}

static void ev_int(verdict_t *v, const char *key, int64_t x)
{
    ev_t *e = ev_add(v, key, EV_NUM);
    if (e)
        snprintf(e->val, sizeof(e->val), "%" PRId64, x);
}

static void ev_str(verdict_t *v, const char *key, const char *s)
{
    ev_t *e = ev_add(v, key, EV_STR);
    if (e)
        nnp__strlcpy(e->val, s, sizeof(e->val));
}

static ev_t *ev_raw(verdict_t *v, const char *key)
{
    return ev_add(v, key, EV_RAW);
}

static void raw_append(ev_t *e, const char *fmt, ...) NNP_PRINTF(2, 3);
static void raw_append(ev_t *e, const char *fmt, ...)
{
    size_t len;
    va_list ap;
    if (!e)
        return;
    len = strlen(e->val);
    if (len + 1 >= sizeof(e->val))
        return;
    va_start(ap, fmt);
    vsnprintf(e->val + len, sizeof(e->val) - len, fmt, ap);
    va_end(ap);
}

static void blame(verdict_t *v, int rank)
{
    for (int i = 0; i < v->n_ranks; i++)
        if (v->ranks[i] == rank)
            return;
    if (v->n_ranks < RANKS_MAX)
        v->ranks[v->n_ranks++] = rank;
}

static double round_to(double x, double scale)
{
    return nearbyint(x * scale) / scale;
}

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

static int mpa_slow_rank(const nnp_cl_data_t *d, verdict_t *v)
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
        ev_int(v, "entries", (int64_t)n);
        ev_num(v, "mean_total_us", mean / NS_PER_US);
        ev_num(v, "threshold", MPA_RATIO_THRESHOLD);
        for (int k = 0; k < 3; k++) {
            char key[EV_KEY];
            double ratio = mean == 0 ? 0 : (double)(mx[k].v - mn[k].v) / mean;
            bool fired = ratio > MPA_RATIO_THRESHOLD;
            snprintf(key, sizeof(key), "%s_ratio", keys[k]);
            ev_num(v, key, ratio);
            snprintf(key, sizeof(key), "%s_max_min_diff_ms", keys[k]);
            ev_num(v, key, round_to((double)(mx[k].v - mn[k].v) / NS_PER_MS, MS_SCALE_3));
            snprintf(key, sizeof(key), "%s_max_rank", keys[k]);
            ev_int(v, key, mx[k].rank);
            snprintf(key, sizeof(key), "%s_max_us", keys[k]);
            ev_num(v, key, (double)mx[k].v / NS_PER_US);
            snprintf(key, sizeof(key), "%s_min_rank", keys[k]);
            ev_int(v, key, mn[k].rank);
            snprintf(key, sizeof(key), "%s_min_us", keys[k]);
            ev_num(v, key, (double)mn[k].v / NS_PER_US);
            if (mx[k].step != NNP_CL_NO_STEP) {
                snprintf(key, sizeof(key), "%s_max_step", keys[k]);
                ev_int(v, key, (int64_t)mx[k].step);
                snprintf(key, sizeof(key), "%s_min_step", keys[k]);
                ev_int(v, key, (int64_t)mn[k].step);
            }
            if (!fired)
                continue;
            v->fired = true;
            /* The rank computing (or idling) longest is the slow one; the one with the
             * least exposed communication is the one the others wait for. */
            blame(v, k == 1 ? mn[k].rank : mx[k].rank);
            len += (size_t)snprintf(v->summary + len, sizeof(v->summary) - len,
                                    "%s%s has some issues in the cluster, because the max "
                                    "difference of %s time has reached %.3fms (rank %d: %.3f us, "
                                    "rank %d: %.3f us).",
                                    len ? " " : "", names[k], names[k],
                                    round_to((double)(mx[k].v - mn[k].v) / NS_PER_MS, MS_SCALE_3),
                                    mx[k].rank, (double)mx[k].v / NS_PER_US, mn[k].rank,
                                    (double)mn[k].v / NS_PER_US);
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

/* ---- MindInsight ParallelProposer ---- */

static double mi_val(double x)
{
    return round_to(x, MI_VAL_SCALE);
}

static double mi_pct(double x)
{
    return round_to(x * PERCENT, MI_PCT_SCALE);
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

static void mi_step_interval(const nnp_cl_data_t *d, verdict_t *v)
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
    ev_int(v, "ranks", n);
    ev_num(v, "mean_iteration_interval_ms", sum / n);
    ev_num(v, "threshold", MI_INTERVAL_THRESHOLD);
    if (rank < 0) {
        snprintf(v->summary, sizeof(v->summary),
                 "No rank's iteration interval is more than 20%% above the mean.");
        return;
    }
    v->fired = true;
    blame(v, rank);
    ev_int(v, "rank_id", rank);
    ev_num(v, "val", val);
    ev_num(v, "percent", mi_pct(best));
    snprintf(v->summary, sizeof(v->summary),
             "Rank %d's iteration interval (%.4f ms) is %.2f%% above the cluster mean: it waits "
             "longer for data than the others.",
             rank, val, mi_pct(best));
    snprintf(v->suggestion, sizeof(v->suggestion),
             "The iteration interval is host time before the forward pass (data loading and "
             "preprocessing): look at that rank's data pipeline and host CPU load.");
}

static void mi_flops(const nnp_cl_data_t *d, verdict_t *v)
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
    ev_int(v, "ranks", n);
    ev_num(v, "mean_flops", avg);
    ev_num(v, "threshold", MI_FLOPS_THRESHOLD);
    if (rank < 0) {
        snprintf(v->summary, sizeof(v->summary),
                 "No rank's FLOPS is more than 20%% below the cluster mean.");
        return;
    }
    v->fired = true;
    blame(v, rank);
    ev_int(v, "rank_id", rank);
    ev_num(v, "val", mi_val(val));
    ev_num(v, "percent", mi_pct(best));
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

static const char *link_cause(const char *type, double large_ratio)
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

static int mi_slow_link(const nnp_cl_data_t *d, verdict_t *v)
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
    ev_str(v, "bandwidth_unit", ms ? "as hccl_raw link_info states it" : "GB/s");
    ev_num(v, "threshold", MI_LINK_THRESHOLD);
    list = ev_raw(v, "slow_links");
    raw_append(list, "[");
    for (size_t a = 0; a < n;) {
        size_t b = a, listed = 0;
        double sum = 0, avg;
        const char *type = type_name(d, l[a].type);
        char key[EV_KEY];
        while (b < n && l[b].type == l[a].type)
            sum += l[b++].bw;
        avg = sum / (double)(b - a);
        snprintf(key, sizeof(key), "%s_mean_bandwidth", type);
        ev_num(v, key, avg);
        snprintf(key, sizeof(key), "%s_links", type);
        ev_int(v, key, (int64_t)(b - a));
        /* Sorted by bandwidth: the slowest first, the worst proportion first. */
        for (size_t i = a; i < b; i++) {
            double p = avg == 0 ? 0 : (avg - l[i].bw) / avg;
            if (!(p > MI_LINK_THRESHOLD))
                break;
            if (i == a) {
                v->fired = true;
                blame(v, l[i].src);
                blame(v, l[i].dst);
                len += (size_t)snprintf(
                    v->summary + len, sizeof(v->summary) - len,
                    "%s%s link %d-%d%s runs at %.4g, %.2f%% below the %s mean %.4g: %s.",
                    len ? " " : "", type, l[i].src, l[i].dst,
                    ms ? " (ranks local to the group)" : "", l[i].bw, mi_pct(p), type, avg,
                    link_cause(type, l[i].large_ratio));
                if (len >= sizeof(v->summary))
                    len = sizeof(v->summary) - 1;
            }
            if (listed++ < LINKS_LISTED) {
                raw_append(list, "%s{\"src_rank\":%d,\"des_rank\":%d,\"link_type\":\"%s\",",
                           strlen(list->val) > 1 ? "," : "", l[i].src, l[i].dst, type);
                if (l[i].reporter >= 0)
                    raw_append(list, "\"reported_by\":%d,", l[i].reporter);
                {
                    char x[48], y[48];
                    num_text(x, sizeof(x), mi_val(l[i].bw));
                    num_text(y, sizeof(y), l[i].large_ratio);
                    raw_append(list, "\"val\":%s,\"percent\":%.2f,\"large_packet_ratio\":%s}", x,
                               mi_pct(p), y);
                }
            }
        }
        a = b;
    }
    raw_append(list, "]");
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

static void mi_communication(const nnp_cl_data_t *d, const char *mode, verdict_t *v,
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
        double rate = comp > 0 && comm > 0 ? round_to(comm / (comp + comm), MI_VAL_SCALE) : 0;
        v->checked = true;
        ev_str(v, "parallel_mode", mode);
        ev_num(v, "computation_ms", comp);
        ev_num(v, "communication_alone_ms", comm);
        ev_num(v, "val", mi_pct(rate));
        ev_num(v, "threshold", MI_COMM_THRESHOLD * PERCENT);
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
        double rate =
            comp > 0 && comm > 0 && recv > 0 ? round_to(recv / (comp + comm), MI_VAL_SCALE) : 0;
        ev_num(between, "receive_alone_ms", recv);
        ev_num(between, "computation_ms", comp);
        ev_num(between, "communication_alone_ms", comm);
        ev_num(between, "val", mi_pct(rate));
        ev_num(between, "threshold", MI_COMM_THRESHOLD * PERCENT);
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
        ev_num(within, "threshold", MI_COMM_THRESHOLD * PERCENT);
        if (best_stage > 0) {
            within->fired = true;
            ev_int(within, "stage", best_stage);
            ev_num(within, "val", mi_pct(best));
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

static void mi_stage_flops(const nnp_cl_data_t *d, const char *mode, verdict_t *v)
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
    ev_num(v, "mean_stage_flops", mean);
    ev_num(v, "threshold", MI_STAGE_FLOPS);
    if (best_stage > 0) {
        v->fired = true;
        ev_int(v, "stage", best_stage);
        ev_num(v, "val", mi_val(val));
        ev_num(v, "percent", mi_pct(best));
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

static void msp_wait(const nnp_cl_data_t *d, verdict_t *v)
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
    ev_int(v, "collective_ops", (int64_t)w->instances);
    ev_int(v, "ops_with_waiting_rank", (int64_t)w->waiting);
    ev_int(v, "ops_slow_rank", (int64_t)w->slow_rank);
    ev_int(v, "ops_slow_link", (int64_t)w->slow_link);
    ev_int(v, "ops_cause_unknown", (int64_t)w->no_sync);
    ev_num(v, "threshold", MSP_WAIT_RATIO_THRESHOLD);
    e = ev_raw(v, "blamed_ranks");
    raw_append(e, "[");
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
            raw_append(e, "%s{\"rank\":%d,\"ops\":%u}", i ? "," : "", b[i].rank, b[i].ops);
            if (i == 0)
                blame(v, b[i].rank);
        }
        nnp__free(b);
    }
    raw_append(e, "]");
    if (w->slow_rank > 0) {
        v->fired = true;
        ev_str(v, "worst_op", w->worst_op);
        if (w->worst_step != NNP_CL_NO_STEP)
            ev_int(v, "worst_step", (int64_t)w->worst_step);
        ev_int(v, "worst_waiting_rank", w->worst_waiting);
        ev_num(v, "worst_wait_ratio", w->worst_wait_ratio);
        ev_num(v, "worst_sync_ratio", w->worst_sync_ratio);
        ev_int(v, "worst_slow_rank", w->worst_blamed);
        ev_num(v, "worst_slow_rank_wait_ratio", w->worst_min_ratio);
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

/* ---- msprof-analyze SlowLinkAnalyzer ---- */

static void mpa_slow_link(const nnp_cl_data_t *d, verdict_t *v)
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
        ev_num(v, key, round_to(mean, MS_SCALE_3));
        snprintf(key, sizeof(key), "%s_max_gb_s", type);
        ev_num(v, key, round_to(d->vin.mpa_bw[i].max, MS_SCALE_3));
        snprintf(key, sizeof(key), "%s_max_rank", type);
        ev_int(v, key, d->vin.mpa_bw[i].max_rank);
        snprintf(key, sizeof(key), "%s_min_gb_s", type);
        ev_num(v, key, round_to(d->vin.mpa_bw[i].min, MS_SCALE_3));
        snprintf(key, sizeof(key), "%s_min_rank", type);
        ev_int(v, key, d->vin.mpa_bw[i].min_rank);
        if (d->vin.mpa_bw[i].min_step != NNP_CL_NO_STEP) {
            snprintf(key, sizeof(key), "%s_min_step", type);
            ev_int(v, key, (int64_t)d->vin.mpa_bw[i].min_step);
        }
        snprintf(key, sizeof(key), "%s_difference_gb_s", type);
        ev_num(v, key, round_to(d->vin.mpa_bw[i].max - d->vin.mpa_bw[i].min, MS_SCALE_3));
        len +=
            (size_t)snprintf(v->summary + len, sizeof(v->summary) - len,
                             "%s%s: the average is %.3f, while the maximum is %.3fGB/s and the "
                             "minimum is %.3fGB/s, the difference is %.3fGB/s.",
                             len ? " " : "", type, round_to(mean, MS_SCALE_3), d->vin.mpa_bw[i].max,
                             d->vin.mpa_bw[i].min, d->vin.mpa_bw[i].max - d->vin.mpa_bw[i].min);
        if (len >= sizeof(v->summary))
            len = sizeof(v->summary) - 1;
        if (spread >= MPA_RATIO_THRESHOLD) {
            v->fired = true;
            blame(v, d->vin.mpa_bw[i].min_rank);
        }
    }
    if (!v->checked)
        snprintf(v->why_unchecked, sizeof(v->why_unchecked), "no bandwidth in the data");
    else if (v->fired)
        snprintf(v->suggestion, sizeof(v->suggestion),
                 "The ranks named with the minimum bandwidth move data slowest: compare their "
                 "links in the communication matrix.");
}

/* ---- the single-rank advisor over ranks ---- */

static int cmp_adv(const void *a, const void *b, void *ctx)
{
    const nnp_cl_adv_rec_t *x = a, *y = b;
    const nnp_cl_strtab_t *s = ctx;
    if (x->severity != y->severity)
        return x->severity < y->severity ? -1 : 1;
    if (x->id != y->id)
        return s->order[x->id] < s->order[y->id] ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* Ranks as "0-3,8" runs. */
static void runs_add(char *buf, size_t cap, int *last, int *first, int rank, bool flush)
{
    size_t len = strlen(buf);
    if (!flush && *last >= 0 && rank == *last + 1) {
        *last = rank;
        return;
    }
    if (*first >= 0 && len < cap) {
        if (*first == *last)
            snprintf(buf + len, cap - len, "%s%d", len ? "," : "", *first);
        else
            snprintf(buf + len, cap - len, "%s%d-%d", len ? "," : "", *first, *last);
    }
    *first = *last = flush ? -1 : rank;
}

typedef struct adv_group {
    nnp_cl_adv_rec_t first;
    uint64_t count;
    char ranks[EV_VAL];
    int run_first, run_last;
} adv_group_t;

/* ---- writing ---- */

typedef struct text {
    char *buf;
    size_t len, cap;
} text_t;

static void text_add(text_t *t, const char *fmt, ...) NNP_PRINTF(2, 3);
static void text_add(text_t *t, const char *fmt, ...)
{
    va_list ap;
    int n;
    if (t->len + TEXT_CAP * 4 > t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 65536;
        char *nb = nnp__realloc(t->buf, ncap);
        if (!nb)
            return;
        t->buf = nb;
        t->cap = ncap;
    }
    va_start(ap, fmt);
    n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->len += (size_t)n < t->cap - t->len ? (size_t)n : t->cap - t->len - 1;
}

static void write_verdict(nnp_jw_t *w, text_t *t, const verdict_t *v, int index)
{
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "id");
    nnp__jw_str(w, v->id);
    nnp__jw_key(w, "kind");
    nnp__jw_str(w, v->kind);
    nnp__jw_key(w, "source");
    nnp__jw_str(w, v->source);
    nnp__jw_key(w, "rule");
    nnp__jw_str(w, v->rule);
    nnp__jw_key(w, "checked");
    nnp__jw_bool(w, v->checked);
    nnp__jw_key(w, "fired");
    nnp__jw_bool(w, v->fired);
    nnp__jw_key(w, "ranks");
    nnp__jw_arr_begin(w);
    for (int i = 0; i < v->n_ranks; i++)
        nnp__jw_int(w, v->ranks[i]);
    nnp__jw_arr_end(w);
    nnp__jw_key(w, "evidence");
    nnp__jw_obj_begin(w);
    for (int i = 0; i < v->n_ev; i++) {
        nnp__jw_key(w, v->ev[i].key);
        if (v->ev[i].kind == EV_STR)
            nnp__jw_str(w, v->ev[i].val);
        else
            nnp__jw_raw(w, v->ev[i].val);
    }
    nnp__jw_obj_end(w);
    nnp__jw_key(w, "summary");
    nnp__jw_str(w, v->checked ? v->summary : "");
    nnp__jw_key(w, "suggestion");
    nnp__jw_str(w, v->suggestion);
    if (!v->checked) {
        nnp__jw_key(w, "not_checked_because");
        nnp__jw_str(w, v->why_unchecked);
    }
    nnp__jw_obj_end(w);

    text_add(t, "\n%d. [%s] %s\n   Source: %s\n   Rule: %s\n", index,
             !v->checked ? "not checked"
             : v->fired  ? "FOUND"
                         : "ok",
             v->id, v->source, v->rule);
    if (!v->checked) {
        text_add(t, "   Not checked: %s.\n", v->why_unchecked);
        return;
    }
    text_add(t, "   %s\n   Evidence: ", v->summary);
    for (int i = 0; i < v->n_ev; i++)
        text_add(t, v->ev[i].kind == EV_STR ? "%s%s = \"%s\"" : "%s%s = %s", i ? ", " : "",
                 v->ev[i].key, v->ev[i].val);
    text_add(t, ".\n");
    if (v->suggestion[0])
        text_add(t, "   Suggestion: %s\n", v->suggestion);
}

static int write_advisor(const nnp_cl_data_t *d, nnp_jw_t *w, text_t *t)
{
    nnp_cl_spill_t sorted;
    nnp_cl_merge_t *m = NULL;
    const nnp_cl_adv_rec_t *r;
    adv_group_t g;
    bool have = false;
    int rc = nnp__cl_sort_open(&d->advice, &sorted, sizeof(nnp_cl_adv_rec_t), NULL, cmp_adv,
                               d->strs, d->tmp_dir, &m),
        n_groups = 0;
    if (rc != NNP_OK)
        return rc;
    nnp__jw_key(w, "advisor");
    nnp__jw_arr_begin(w);
    text_add(t, "\nThe single-rank advisor, over ranks (nnprof analyse's rules):\n");
    memset(&g, 0, sizeof(g));
    for (;;) {
        bool end;
        if (rc != NNP_OK)
            break;
        r = nnp__cl_merge_next(m, &rc);
        if (rc != NNP_OK)
            break;
        end = r == NULL;
        if (have && (end || r->id != g.first.id)) {
            runs_add(g.ranks, sizeof(g.ranks), &g.run_last, &g.run_first, 0, true);
            nnp__jw_obj_begin(w);
            nnp__jw_key(w, "id");
            nnp__jw_str(w, nnp__cl_str(d->strs, g.first.id));
            nnp__jw_key(w, "severity");
            nnp__jw_str(w, g.first.severity == 0 ? "warning" : "info");
            nnp__jw_key(w, "title");
            nnp__jw_str(w, nnp__cl_str(d->strs, g.first.title));
            nnp__jw_key(w, "n_ranks");
            nnp__jw_uint(w, g.count);
            nnp__jw_key(w, "ranks");
            nnp__jw_str(w, g.ranks);
            nnp__jw_key(w, "example");
            nnp__jw_obj_begin(w);
            nnp__jw_key(w, "rank");
            nnp__jw_int(w, g.first.rank);
            nnp__jw_key(w, "evidence");
            nnp__jw_str(w, g.first.evidence);
            nnp__jw_key(w, "suggestion");
            nnp__jw_str(w, g.first.suggestion);
            nnp__jw_obj_end(w);
            nnp__jw_obj_end(w);
            text_add(t, "- [%s] %s (%s): %llu rank%s (%s). Rank %d: %s. %s\n",
                     g.first.severity == 0 ? "warning" : "info",
                     nnp__cl_str(d->strs, g.first.title), nnp__cl_str(d->strs, g.first.id),
                     (unsigned long long)g.count, g.count == 1 ? "" : "s", g.ranks, g.first.rank,
                     g.first.evidence, g.first.suggestion);
            have = false;
            n_groups++;
        }
        if (end)
            break;
        if (!have) {
            memset(&g, 0, sizeof(g));
            g.first = *r;
            g.run_first = g.run_last = -1;
            have = true;
        }
        g.count++;
        runs_add(g.ranks, sizeof(g.ranks), &g.run_last, &g.run_first, r->rank, false);
    }
    if (n_groups == 0)
        text_add(t, "- no finding on any rank.\n");
    nnp__jw_arr_end(w);
    nnp__cl_merge_close(m);
    nnp__cl_spill_fini(&sorted);
    return rc;
}

static void write_cluster(const nnp_cl_data_t *d, nnp_jw_t *w, text_t *t, const char *mode)
{
    int with_clock = 0;
    int64_t max_off = 0, max_unc = 0;
    uint64_t steps = 0;
    nnp__jw_key(w, "cluster");
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "layout");
    nnp__jw_str(w, d->in->layout);
    nnp__jw_key(w, "ranks_found");
    nnp__jw_int(w, d->n_ranks - d->n_failed);
    nnp__jw_key(w, "ranks_expected");
    nnp__jw_int(w, d->expected_ranks);
    nnp__jw_key(w, "missing_ranks");
    nnp__jw_arr_begin(w);
    for (int i = 0; i < d->n_missing; i++)
        nnp__jw_int(w, d->missing[i]);
    nnp__jw_arr_end(w);
    nnp__jw_key(w, "failed_ranks");
    nnp__jw_arr_begin(w);
    for (int i = 0; i < d->n_failed; i++)
        nnp__jw_int(w, d->failed[i]);
    nnp__jw_arr_end(w);
    nnp__jw_key(w, "parallel_mode");
    nnp__jw_str(w, mode);
    nnp__jw_key(w, "stages");
    nnp__jw_int(w, d->n_stages);
    nnp__jw_key(w, "ranks");
    nnp__jw_arr_begin(w);
    for (int i = 0; i < d->n_ranks; i++) {
        const nnp_cl_rank_t *s = &d->ranks[i];
        steps += s->n_steps;
        nnp__jw_obj_begin(w);
        nnp__jw_key(w, "rank");
        nnp__jw_int(w, s->rank);
        nnp__jw_key(w, "host");
        nnp__jw_str(w, s->host);
        nnp__jw_key(w, "device_id");
        if (s->flags & NNP_CL_RANK_HAS_DEV)
            nnp__jw_int(w, s->device_id);
        else
            nnp__jw_null(w);
        nnp__jw_key(w, "format");
        nnp__jw_str(w, s->format);
        nnp__jw_key(w, "source");
        nnp__jw_str(w, s->show);
        nnp__jw_key(w, "steps");
        nnp__jw_uint(w, s->n_steps);
        nnp__jw_key(w, "stage");
        nnp__jw_int(w, d->stage_of ? d->stage_of[i] : 0);
        nnp__jw_key(w, "read");
        nnp__jw_bool(w, !(s->flags & NNP_CL_RANK_FAILED));
        nnp__jw_key(w, "clock_offset_ns");
        if (s->flags & NNP_CL_RANK_CLOCK) {
            nnp__jw_int(w, s->clock_offset_ns);
            with_clock++;
            if (llabs(s->clock_offset_ns) > max_off)
                max_off = llabs(s->clock_offset_ns);
            if (s->clock_uncertainty_ns > max_unc)
                max_unc = s->clock_uncertainty_ns;
        } else {
            nnp__jw_null(w);
        }
        nnp__jw_key(w, "clock_uncertainty_ns");
        if (s->flags & NNP_CL_RANK_CLOCK)
            nnp__jw_int(w, s->clock_uncertainty_ns);
        else
            nnp__jw_null(w);
        nnp__jw_obj_end(w);
    }
    nnp__jw_arr_end(w);
    nnp__jw_obj_end(w);
    text_add(t, "nnprof cluster advice: %d rank%s read (%s), %d expected", d->n_ranks - d->n_failed,
             d->n_ranks - d->n_failed == 1 ? "" : "s", d->in->layout, d->expected_ranks);
    if (d->n_missing) {
        text_add(t, "; missing ranks:");
        for (int i = 0; i < d->n_missing; i++)
            text_add(t, "%s %d", i ? "," : "", d->missing[i]);
    }
    if (d->n_failed) {
        text_add(t, "; unreadable ranks:");
        for (int i = 0; i < d->n_failed; i++)
            text_add(t, "%s %d", i ? "," : "", d->failed[i]);
    }
    text_add(t, ".\n%llu step rows, %s, %d stage%s.", (unsigned long long)steps, mode, d->n_stages,
             d->n_stages == 1 ? "" : "s");
    if (with_clock)
        text_add(t,
                 " Clocks aligned on %d ranks (largest offset %lld ns, uncertainty up to %lld "
                 "ns).",
                 with_clock, (long long)max_off, (long long)max_unc);
    text_add(t, "\n");
}

int nnp__cl_write_advice(nnp_cl_data_t *d)
{
    verdict_t *v = nnp__calloc(10, sizeof(*v));
    nnp_outfile_t f;
    nnp_jw_t w;
    text_t t = {0};
    const char *mode = "data-parallel";
    int rc, n = 0, fired = 0, checked = 0;
    if (!v)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    if (d->in->parallel_mode[0])
        mode = d->in->parallel_mode;
    else {
        for (int i = 0; i < d->n_ranks; i++)
            if (d->ranks[i].parallel_mode[0]) {
                mode = d->ranks[i].parallel_mode;
                break;
            }
        if (strcmp(mode, "data-parallel") == 0 && d->n_stages > 1)
            mode = "pipeline-parallel";
    }
    rc = mpa_slow_rank(d, &v[n++]);
    mi_step_interval(d, &v[n++]);
    mi_flops(d, &v[n++]);
    msp_wait(d, &v[n++]);
    if (rc == NNP_OK)
        rc = mi_slow_link(d, &v[n++]);
    mpa_slow_link(d, &v[n++]);
    mi_communication(d, mode, &v[n], &v[n + 1], &v[n + 2]);
    n += 3;
    mi_stage_flops(d, mode, &v[n++]);
    if (rc == NNP_OK)
        rc = nnp__cl_out_open(d, &f, JSON_FILE);
    if (rc != NNP_OK) {
        nnp__free(v);
        return rc;
    }
    rc = nnp__jw_init(&w, f.fd, d->o->pretty, 0);
    if (rc == NNP_OK) {
        nnp__jw_obj_begin(&w);
        write_cluster(d, &w, &t, mode);
        for (int i = 0; i < n; i++) {
            fired += v[i].checked && v[i].fired;
            checked += v[i].checked;
        }
        nnp__jw_key(&w, "n_fired");
        nnp__jw_int(&w, fired);
        nnp__jw_key(&w, "verdicts");
        nnp__jw_arr_begin(&w);
        text_add(&t, "\n%d of %d cluster rules found something (%d checked):\n", fired, n, checked);
        for (int i = 0; i < n; i++)
            write_verdict(&w, &t, &v[i], i + 1);
        nnp__jw_arr_end(&w);
        rc = write_advisor(d, &w, &t);
        nnp__jw_obj_end(&w);
        nnp__jw_line_end(&w);
        if (rc == NNP_OK)
            rc = nnp__jw_flush(&w);
    }
    nnp__jw_fini(&w);
    rc = nnp__out_commit(&f, rc);
    if (rc == NNP_OK && t.buf) {
        rc = nnp__cl_out_open(d, &f, TXT_FILE);
        if (rc == NNP_OK)
            rc = nnp__out_commit(&f, nnp__write_all(f.fd, t.buf, t.len));
    }
    nnp__free(t.buf);
    nnp__free(v);
    return rc;
}
