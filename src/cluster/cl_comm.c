/* cl_comm.c - cluster_communication.json ({group: {step: {op@group: {rank: {Communication
 * Time Info, Communication Bandwidth Info}}, Total Op Info@group: ...}}}) with its tables in
 * cluster_analysis.db; the groups and their keys are cl_groups.c's, the totals
 * cl_comm_totals.c's. The spilled op records are re-sorted per rank and merged so that the
 * records of one op instance (group, step, op, index) arrive together: a collective's wait
 * is then derived on every rank from the latest entry into it (clocks aligned with
 * clock_sync, docs/MPI.md), and msprof's wait-ratio rule is evaluated on the instance
 * (formats.md 2.6, 2.7); msprof-analyze's slow-link inputs are summed on the way. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cl_comm.h"
#include "cluster/cl_driver.h"

#define COMM_FILE "cluster_communication.json"
/* msprof's ratios and bandwidths are rounded to 4 decimals (compute_ratio). */
#define RATIO_SCALE 1e4
/* msprof's SlowRankCalculator: a wait (or synchronisation) ratio above 0.2. */
#define WAIT_RATIO_THRESHOLD 0.2
/* Partial bandwidth sums buffered before they are sorted and spilled (records of 48 bytes:
 * 384 KiB, whatever the rank count). */
#define PARTS_BUFFER 8192

static double ratio4(double x)
{
    return nearbyint(x * RATIO_SCALE) / RATIO_SCALE;
}

double nnp__cl_safe_ratio(double a, double b)
{
    return fabs(b) < 1e-15 ? 0.0 : ratio4(a / b);
}

/* ---- sorting the op records ---- */

static void fix_comm(void *rec, void *ctx)
{
    const nnp_cl_data_t *d = ctx;
    nnp_cl_comm_rec_t h;
    memcpy(&h, rec, sizeof(h));
    h.group_key = nnp__cl_group_key(d, h.group, h.flags & NNP_CL_COMM_P2P);
    h.op_order = h.op < d->strs->n ? d->strs->order[h.op] : 0;
    memcpy(rec, &h, sizeof(h));
}

int nnp__cl_cmp_inst_key(const nnp_cl_strtab_t *s, nnp_cl_inst_key_t x, nnp_cl_inst_key_t y)
{
    if (x.group_key != y.group_key)
        return x.group_key < y.group_key ? -1 : 1;
    if (x.step_id != y.step_id)
        return x.step_id < y.step_id ? -1 : 1;
    if (x.op_order != y.op_order)
        return x.op_order < y.op_order ? -1 : 1;
    if (x.op_index != y.op_index)
        return x.op_index < y.op_index ? -1 : 1;
    /* Same op name in two groups of one key: the group name decides. */
    if (x.group != y.group)
        return s->order[x.group] < s->order[y.group] ? -1 : 1;
    return 0;
}

/* (group key, step, op, index, group name): one instance; then rank. */
static int cmp_inst(const nnp_cl_data_t *d, const nnp_cl_comm_rec_t *x, const nnp_cl_comm_rec_t *y)
{
    return nnp__cl_cmp_inst_key(d->strs, NNP_CL_INST_KEY(x), NNP_CL_INST_KEY(y));
}

static int cmp_comm(const void *a, const void *b, void *ctx)
{
    nnp_cl_comm_rec_t x, y;
    int c;
    memcpy(&x, a, sizeof(x));
    memcpy(&y, b, sizeof(y));
    c = cmp_inst(ctx, &x, &y);
    return c ? c : (x.rank > y.rank) - (x.rank < y.rank);
}

/* ---- one op instance ---- */

/* An op instance is a batch of the merge: its records on every rank (cmp_comm's order). */
static int same_inst(const void *a, const void *b, void *ctx)
{
    nnp_cl_comm_rec_t x, y;
    memcpy(&x, a, sizeof(x));
    memcpy(&y, b, sizeof(y));
    return cmp_inst(ctx, &x, &y);
}

static nnp_cl_comm_rec_t *inst_rec(const nnp_cl_batch_t *in, size_t i)
{
    return nnp__cl_batch_rec(in, i);
}

nnp_cl_bw_t *nnp__cl_comm_bw(nnp_cl_comm_rec_t *r)
{
    return (nnp_cl_bw_t *)(void *)((char *)r + sizeof(*r));
}

nnp_cl_pkt_t *nnp__cl_comm_dist(nnp_cl_comm_rec_t *r)
{
    return (nnp_cl_pkt_t *)(void *)((char *)r + sizeof(*r) + r->n_bw * sizeof(nnp_cl_bw_t));
}

/* A collective's wait on each rank: from its entry to the latest entry of any rank into the
 * same instance (the time it waited for the others), never more than its own duration. */
static void derive_waits(nnp_cl_batch_t *in)
{
    int64_t latest = INT64_MIN;
    for (size_t i = 0; i < in->n; i++) {
        const nnp_cl_comm_rec_t *r = inst_rec(in, i);
        if ((r->flags & NNP_CL_COMM_COLLECTIVE) && (r->flags & NNP_CL_COMM_HAS_START) &&
            r->start_ns > latest)
            latest = r->start_ns;
    }
    for (size_t i = 0; i < in->n; i++) {
        nnp_cl_comm_rec_t *r = inst_rec(in, i);
        if (!(r->flags & NNP_CL_COMM_COLLECTIVE))
            continue;
        r->wait_ns = 0;
        if ((r->flags & NNP_CL_COMM_HAS_START) && latest != INT64_MIN && in->n > 1)
            r->wait_ns = latest - r->start_ns;
        if (r->wait_ns > r->elapse_ns)
            r->wait_ns = r->elapse_ns;
        r->sync_ns = r->wait_ns;
        r->transit_ns = r->elapse_ns - r->wait_ns;
        r->idle_ns = 0;
        for (uint32_t b = 0; b < r->n_bw; b++)
            nnp__cl_comm_bw(r)[b].time_ns = r->transit_ns;
        for (uint32_t k = 0; k < r->n_dist; k++)
            nnp__cl_comm_dist(r)[k].time_ns = r->transit_ns;
    }
}

static double wait_ratio(const nnp_cl_comm_rec_t *r)
{
    return nnp__cl_safe_ratio((double)r->wait_ns, (double)(r->wait_ns + r->transit_ns));
}

static double sync_ratio(const nnp_cl_comm_rec_t *r)
{
    return nnp__cl_safe_ratio((double)r->sync_ns, (double)(r->sync_ns + r->transit_ns));
}

/* The index of rank r in d->ranks (sorted), -1 when absent. */
int nnp__cl_rank_index(const nnp_cl_data_t *d, int r)
{
    int lo = 0, hi = d->n_ranks;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (d->ranks[mid].rank < r)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < d->n_ranks && d->ranks[lo].rank == r ? lo : -1;
}

/* msprof's SlowRankCalculator on one collective instance (mscalculate/cluster). */
static void wait_rule(nnp_cl_data_t *d, const nnp_cl_batch_t *in, const char *op_key, uint64_t step)
{
    nnp_cl_wait_stats_t *ws = &d->vin.wait;
    const nnp_cl_comm_rec_t *mx = NULL, *mn = NULL;
    double max_r = 0, min_r = 0;
    if (in->n < 2 || (inst_rec(in, 0)->flags & NNP_CL_COMM_P2P))
        return;
    for (size_t i = 0; i < in->n; i++) {
        const nnp_cl_comm_rec_t *r = inst_rec(in, i);
        double w = wait_ratio(r);
        if (!mx || w > max_r) { /* the first of equals, as Python's max() */
            mx = r;
            max_r = w;
        }
        if (!mn || w < min_r) {
            mn = r;
            min_r = w;
        }
    }
    ws->instances++;
    if (max_r <= WAIT_RATIO_THRESHOLD)
        return;
    ws->waiting++;
    if (nnp__cl_rank_index(d, mx->rank) >= 0)
        ws->waited[nnp__cl_rank_index(d, mx->rank)]++;
    if (mx->flags & NNP_CL_COMM_NO_SYNC) {
        ws->no_sync++; /* the rule's second test needs a synchronisation time */
        return;
    }
    if (sync_ratio(mx) > WAIT_RATIO_THRESHOLD) {
        ws->slow_rank++;
        if (nnp__cl_rank_index(d, mn->rank) >= 0)
            ws->blamed[nnp__cl_rank_index(d, mn->rank)]++;
        if (max_r > ws->worst_wait_ratio || ws->worst_op[0] == '\0') {
            ws->worst_wait_ratio = max_r;
            ws->worst_sync_ratio = sync_ratio(mx);
            ws->worst_min_ratio = min_r;
            ws->worst_waiting = mx->rank;
            ws->worst_blamed = mn->rank;
            ws->worst_step = step;
            nnp__strlcpy(ws->worst_op, op_key, sizeof(ws->worst_op));
        }
    } else {
        ws->slow_link++;
    }
}

/* ---- writing ---- */

typedef struct writer {
    nnp_cl_data_t *d;
    nnp_jw_t w;
    totals_t tot;
    nnp_cl_buf_t parts; /* (step, rank, type) partial sums for msprof-analyze's slow link */
} writer_t;

typedef struct bw_part {
    uint64_t step;
    int32_t rank;
    uint32_t type_order, type;
    uint32_t pad;
    uint64_t bytes;
    int64_t time_ns;
} bw_part_t;

static int cmp_part(const void *a, const void *b, void *ctx)
{
    const bw_part_t *x = a, *y = b;
    (void)ctx;
    if (x->type_order != y->type_order)
        return x->type_order < y->type_order ? -1 : 1;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int flush_parts(writer_t *wr)
{
    int rc = wr->parts.err;
    if (rc == NNP_OK && wr->parts.len > 0)
        rc = nnp__cl_spill_add_sorted(&wr->d->vin.bw_parts, 0, wr->parts.p, wr->parts.len,
                                      sizeof(bw_part_t), cmp_part, NULL);
    wr->parts.len = 0;
    return rc;
}

#define US_DIGITS 3 /* ns -> us */

void nnp__cl_jw_ms(nnp_jw_t *w, int64_t ns)
{
    char b[NUM_BUF];
    nnp__jw_raw(w, nnp__cl_dec(b, sizeof(b), ns, MS_DIGITS));
}

static void op_key(const nnp_cl_data_t *d, const nnp_cl_comm_rec_t *r, char *buf, size_t cap)
{
    if (r->op_index == NNP_CL_NO_INDEX)
        snprintf(buf, cap, "%s@%s", nnp__cl_str(d->strs, r->op), nnp__cl_str(d->strs, r->group));
    else
        snprintf(buf, cap, "%s_%u@%s", nnp__cl_str(d->strs, r->op), r->op_index,
                 nnp__cl_str(d->strs, r->group));
}

static void num(char *buf, size_t cap, double v)
{
    /* The shortest text that reads back as v (the JSON writer's rule). */
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
}

static int write_op_rank(writer_t *wr, nnp_cl_comm_rec_t *r, const char *step_s, const char *op_s)
{
    nnp_cl_data_t *d = wr->d;
    nnp_jw_t *w = &wr->w;
    char rank_s[NUM_BUF], v[12][NUM_BUF];
    const char *row[12];
    int rc = NNP_OK;
    snprintf(rank_s, sizeof(rank_s), "%d", r->rank);
    nnp__jw_key(w, rank_s);
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "Communication Time Info");
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "Start Timestamp(us)");
    nnp__jw_raw(w, nnp__cl_dec(v[0], NUM_BUF, r->start_ns, US_DIGITS));
    nnp__jw_key(w, "Elapse Time(ms)");
    nnp__cl_jw_ms(w, r->elapse_ns);
    nnp__jw_key(w, "Transit Time(ms)");
    nnp__cl_jw_ms(w, r->transit_ns);
    nnp__jw_key(w, "Wait Time(ms)");
    nnp__cl_jw_ms(w, r->wait_ns);
    nnp__jw_key(w, "Synchronization Time(ms)");
    nnp__cl_jw_ms(w, r->sync_ns);
    nnp__jw_key(w, "Idle Time(ms)");
    nnp__cl_jw_ms(w, r->idle_ns);
    nnp__jw_key(w, "Wait Time Ratio");
    nnp__jw_double(w, wait_ratio(r));
    nnp__jw_key(w, "Synchronization Time Ratio");
    nnp__jw_double(w, sync_ratio(r));
    nnp__jw_obj_end(w);
    row[0] = step_s;
    row[1] = rank_s;
    row[2] = op_s;
    row[3] = nnp__cl_str(d->strs, r->group);
    nnp__cl_dec(v[0], NUM_BUF, r->start_ns, US_DIGITS);
    nnp__cl_dec(v[1], NUM_BUF, r->elapse_ns, MS_DIGITS);
    nnp__cl_dec(v[2], NUM_BUF, r->transit_ns, MS_DIGITS);
    nnp__cl_dec(v[3], NUM_BUF, r->wait_ns, MS_DIGITS);
    nnp__cl_dec(v[4], NUM_BUF, r->sync_ns, MS_DIGITS);
    nnp__cl_dec(v[5], NUM_BUF, r->idle_ns, MS_DIGITS);
    num(v[6], NUM_BUF, sync_ratio(r));
    num(v[7], NUM_BUF, wait_ratio(r));
    for (int i = 0; i < 8; i++)
        row[4 + i] = v[i];
    rc = nnp__cl_db_row(d, NNP_CL_T_COMM_TIME, row, 12);
    nnp__jw_key(w, "Communication Bandwidth Info");
    nnp__jw_obj_begin(w);
    for (uint32_t b = 0; rc == NNP_OK && b < r->n_bw; b++) {
        nnp_cl_bw_t *bw = &nnp__cl_comm_bw(r)[b];
        double mb = (double)bw->bytes / BYTES_PER_MB, ms = (double)bw->time_ns / NS_PER_MS;
        double large = bw->flags & NNP_CL_BW_HAS_RATIO
                           ? bw->large_ratio
                           : nnp__cl_safe_ratio((double)bw->large_packets, (double)bw->packets);
        bool any_dist = false;
        nnp__jw_key(w, nnp__cl_str(d->strs, bw->type));
        nnp__jw_obj_begin(w);
        nnp__jw_key(w, "Transit Size(MB)");
        nnp__jw_double(w, mb);
        nnp__jw_key(w, "Transit Time(ms)");
        nnp__jw_double(w, ms);
        nnp__jw_key(w, "Bandwidth(GB/s)");
        nnp__jw_double(w, nnp__cl_safe_ratio(mb, ms));
        nnp__jw_key(w, "Large Packet Ratio");
        nnp__jw_double(w, large);
        nnp__jw_key(w, "Size Distribution");
        nnp__jw_obj_begin(w);
        row[4] = nnp__cl_str(d->strs, bw->type);
        num(v[0], NUM_BUF, mb);
        num(v[1], NUM_BUF, ms);
        num(v[2], NUM_BUF, nnp__cl_safe_ratio(mb, ms));
        num(v[3], NUM_BUF, large);
        row[5] = v[0];
        row[6] = v[1];
        row[7] = v[2];
        row[8] = v[3];
        for (uint32_t k = 0; rc == NNP_OK && k < r->n_dist; k++) {
            nnp_cl_pkt_t *dd = &nnp__cl_comm_dist(r)[k];
            char size_s[NUM_BUF];
            if (dd->bw_index != b)
                continue;
            nnp__cl_dec(size_s, sizeof(size_s), (int64_t)dd->size_bytes, MB_DIGITS);
            nnp__jw_key(w, size_s);
            nnp__jw_arr_begin(w);
            nnp__jw_uint(w, dd->count);
            nnp__cl_jw_ms(w, dd->time_ns);
            nnp__jw_arr_end(w);
            snprintf(v[4], NUM_BUF, "%" PRIu64, dd->count);
            nnp__cl_dec(v[5], NUM_BUF, dd->time_ns, MS_DIGITS);
            row[9] = size_s;
            row[10] = v[4];
            row[11] = v[5];
            rc = nnp__cl_db_row(d, NNP_CL_T_COMM_BANDWIDTH, row, 12);
            any_dist = true;
        }
        if (rc == NNP_OK && !any_dist) {
            row[9] = row[10] = row[11] = NULL;
            rc = nnp__cl_db_row(d, NNP_CL_T_COMM_BANDWIDTH, row, 12);
        }
        nnp__jw_obj_end(w);
        nnp__jw_obj_end(w);
        if (rc == NNP_OK) {
            bw_part_t p;
            memset(&p, 0, sizeof(p));
            p.step = r->step_id;
            p.rank = r->rank;
            p.type = bw->type;
            p.type_order = bw->type < d->strs->n ? d->strs->order[bw->type] : 0;
            p.bytes = bw->bytes;
            p.time_ns = bw->time_ns;
            nnp__cl_buf_add(&wr->parts, &p, sizeof(p));
            if (wr->parts.len >= PARTS_BUFFER * sizeof(p))
                rc = flush_parts(wr);
        }
    }
    nnp__jw_obj_end(w);
    nnp__jw_obj_end(w);
    return rc;
}

static int write_instance(writer_t *wr, nnp_cl_batch_t *in, const char *step_s)
{
    nnp_cl_data_t *d = wr->d;
    nnp_cl_comm_rec_t *r0 = inst_rec(in, 0);
    char key[KEY_BUF];
    int rc = NNP_OK;
    derive_waits(in);
    op_key(d, r0, key, sizeof(key));
    wait_rule(d, in, key, r0->step_id);
    nnp__jw_key(&wr->w, key);
    nnp__jw_obj_begin(&wr->w);
    for (size_t i = 0; rc == NNP_OK && i < in->n; i++) {
        rc = write_op_rank(wr, inst_rec(in, i), step_s, key);
        if (rc == NNP_OK)
            rc = nnp__cl_totals_add(&wr->tot, inst_rec(in, i));
    }
    nnp__jw_obj_end(&wr->w);
    return rc;
}

static int write_comm_file(nnp_cl_data_t *d)
{
    writer_t wr;
    nnp_outfile_t f;
    nnp_cl_spill_t sorted;
    nnp_cl_merge_t *m = NULL;
    nnp_cl_batch_t in;
    nnp_cl_nest_t nest = {0};
    int rc;

    memset(&wr, 0, sizeof(wr));
    wr.d = d;
    rc = nnp__cl_sort_open(&d->comms, &sorted, 0, fix_comm, cmp_comm, d, d->tmp_dir, &m);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__cl_spill_init(&d->vin.bw_parts, d->tmp_dir);
    d->vin.has_bw_parts = rc == NNP_OK;
    if (rc == NNP_OK)
        rc = nnp__cl_out_open(d, &f, COMM_FILE);
    if (rc != NNP_OK) {
        nnp__cl_merge_close(m);
        nnp__cl_spill_fini(&sorted);
        return rc;
    }
    rc = nnp__jw_init(&wr.w, f.fd, d->o->pretty, 0);
    if (rc == NNP_OK)
        nnp__jw_obj_begin(&wr.w);
    nnp__cl_batch_init(&in, m, 0, same_inst, d);
    while (rc == NNP_OK && (rc = nnp__cl_batch_next(&in)) == NNP_OK) {
        bool end = in.n == 0;
        uint32_t key = end ? 0 : inst_rec(&in, 0)->group_key;
        uint64_t step = end ? 0 : inst_rec(&in, 0)->step_id;
        if (nnp__cl_nest_leaves_step(&nest, end, key, step)) {
            rc = nnp__cl_totals_write(&wr.tot, d, &wr.w);
            nnp__cl_nest_close_step(&nest, &wr.w);
        }
        nnp__cl_nest_enter(&nest, &wr.w, d, end, key, step);
        if (end || rc != NNP_OK)
            break;
        rc = write_instance(&wr, &in, nest.step_s);
    }
    if (rc == NNP_OK) {
        nnp__jw_obj_end(&wr.w);
        nnp__jw_line_end(&wr.w);
        rc = nnp__jw_flush(&wr.w);
    }
    nnp__jw_fini(&wr.w);
    if (rc == NNP_OK)
        rc = flush_parts(&wr);
    nnp__cl_buf_fini(&wr.parts);
    nnp__cl_totals_clear(&wr.tot);
    nnp__free(wr.tot.v);
    nnp__cl_batch_fini(&in);
    nnp__cl_merge_close(m);
    nnp__cl_spill_fini(&sorted);
    return nnp__out_commit(&f, rc);
}

/* msprof-analyze's SlowLinkAnalyzer inputs: bandwidth per (step, rank) and type, from the
 * merged partial sums, summarised per type. */
static int bw_stats(nnp_cl_data_t *d)
{
    nnp_cl_merge_t *m = NULL;
    nnp_cl_batch_t b;
    int rc =
        nnp__cl_merge_open(&d->vin.bw_parts, sizeof(bw_part_t), cmp_part, NULL, d->tmp_dir, &m);
    nnp__cl_batch_init(&b, m, sizeof(bw_part_t), cmp_part, NULL);
    /* One batch: the partial sums of one (type, step, rank). */
    while (rc == NNP_OK && (rc = nnp__cl_batch_next(&b)) == NNP_OK && b.n > 0) {
        bw_part_t cur = *(const bw_part_t *)nnp__cl_batch_rec(&b, 0);
        double mb, ms, bw;
        for (size_t k = 1; k < b.n; k++) {
            const bw_part_t *p = nnp__cl_batch_rec(&b, k);
            cur.bytes += p->bytes;
            cur.time_ns += p->time_ns;
        }
        mb = (double)cur.bytes / BYTES_PER_MB;
        ms = (double)cur.time_ns / NS_PER_MS;
        bw = nnp__cl_safe_ratio(mb, ms);
        for (int i = 0; i < NNP_CL_MAX_BW; i++) {
            if (d->vin.mpa_bw[i].type != 0 && d->vin.mpa_bw[i].type != cur.type)
                continue;
            if (d->vin.mpa_bw[i].type == 0) {
                d->vin.mpa_bw[i].type = cur.type;
                d->vin.mpa_bw[i].max = d->vin.mpa_bw[i].min = bw;
                d->vin.mpa_bw[i].max_rank = d->vin.mpa_bw[i].min_rank = cur.rank;
                d->vin.mpa_bw[i].max_step = d->vin.mpa_bw[i].min_step = cur.step;
            }
            d->vin.mpa_bw[i].n++;
            d->vin.mpa_bw[i].sum += bw;
            if (bw > d->vin.mpa_bw[i].max) {
                d->vin.mpa_bw[i].max = bw;
                d->vin.mpa_bw[i].max_rank = cur.rank;
                d->vin.mpa_bw[i].max_step = cur.step;
            }
            if (bw < d->vin.mpa_bw[i].min) {
                d->vin.mpa_bw[i].min = bw;
                d->vin.mpa_bw[i].min_rank = cur.rank;
                d->vin.mpa_bw[i].min_step = cur.step;
            }
            break;
        }
    }
    nnp__cl_batch_fini(&b);
    nnp__cl_merge_close(m);
    return rc;
}

int nnp__cl_write_comm(nnp_cl_data_t *d)
{
    int rc = NNP_OK;
    d->vin.wait.blamed = nnp__calloc((size_t)d->n_ranks + 1, sizeof(uint32_t));
    d->vin.wait.waited = nnp__calloc((size_t)d->n_ranks + 1, sizeof(uint32_t));
    if (!d->vin.wait.blamed || !d->vin.wait.waited)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    rc = nnp__cl_write_groups(d);
    if (rc == NNP_OK)
        rc = write_comm_file(d);
    if (rc == NNP_OK)
        rc = bw_stats(d);
    return rc;
}
