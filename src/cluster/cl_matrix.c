/* cl_matrix.c - cluster_communication_matrix.json, msprof-analyze's communication matrix
 * ({group: {step: {op@group: {"src-dst": {Transport Type, Transit Time(ms), Transit Size(MB),
 * Op Name, Bandwidth(GB/s)}}, Total Op Info@group: ...}}}), and its table in
 * cluster_analysis.db, from the spilled links. Links of one op instance reported by several
 * ranks are summed (its combine_link); ranks local to a group (HCCL's) are mapped to global
 * ranks through the links a rank reports to itself, as its merge_same_links does. Every link
 * is also summed over the whole run for the slow-link rules (cl_verdicts.c). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cl_driver.h"
#include "util/json_writer.h"

#define MATRIX_FILE  "cluster_communication_matrix.json"
#define NUM_BUF      48
#define KEY_BUF      (2 * NNP_NAME_MAX)
#define NS_PER_MS    1e6
#define BYTES_PER_MB 1e6
#define RATIO_SCALE  1e4
/* Large-packet thresholds by transport type (formats.md 2.7: RDMA 0.5 MB, HCCS/PCIE/SIO
 * 32 MB; SDMA totals those three). MPI's SHM/NET use RDMA's (cl_rank.c says why). */
#define LARGE_RDMA_BYTES 500000u
#define LARGE_SDMA_BYTES 32000000u
#define LINKS_MIN        256

static double ratio4(double a, double b)
{
    return fabs(b) < 1e-15 ? 0.0 : nearbyint(a / b * RATIO_SCALE) / RATIO_SCALE;
}

static void num(char *buf, size_t cap, double v)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
}

static uint64_t large_threshold(const char *type)
{
    if (strcmp(type, "HCCS") == 0 || strcmp(type, "PCIE") == 0 || strcmp(type, "SIO") == 0 ||
        strcmp(type, "SDMA") == 0)
        return LARGE_SDMA_BYTES;
    return LARGE_RDMA_BYTES;
}

/* ---- links over the whole run ---- */

static int total_add(nnp_cl_data_t *d, int32_t src, int32_t dst, uint32_t type, uint64_t bytes,
                     int64_t time_ns, uint64_t n_packets)
{
    nnp_cl_vin_t *v = &d->vin;
    size_t k;
    if ((v->n_links + 1) * 2 > v->links_cap) {
        size_t ncap = v->links_cap ? v->links_cap * 2 : LINKS_MIN;
        nnp_cl_link_total_t *nl = nnp__calloc(ncap, sizeof(*nl));
        if (!nl)
            return nnp__fail(NNP_ENOMEM, "out of memory");
        for (size_t i = 0; i < v->links_cap; i++) {
            const nnp_cl_link_total_t *t = &v->links[i];
            if (!t->used)
                continue;
            k = ((size_t)(uint32_t)t->src * 2654435761u ^ (size_t)(uint32_t)t->dst * 40503u ^
                 t->type) &
                (ncap - 1);
            while (nl[k].used)
                k = (k + 1) & (ncap - 1);
            nl[k] = *t;
        }
        nnp__free(v->links);
        v->links = nl;
        v->links_cap = ncap;
    }
    k = ((size_t)(uint32_t)src * 2654435761u ^ (size_t)(uint32_t)dst * 40503u ^ type) &
        (v->links_cap - 1);
    while (v->links[k].used &&
           !(v->links[k].src == src && v->links[k].dst == dst && v->links[k].type == type))
        k = (k + 1) & (v->links_cap - 1);
    if (!v->links[k].used) {
        v->links[k].used = 1;
        v->links[k].src = src;
        v->links[k].dst = dst;
        v->links[k].type = type;
        v->n_links++;
    }
    v->links[k].bytes += bytes;
    v->links[k].time_ns += time_ns;
    v->links[k].packets += n_packets;
    if (n_packets && bytes / n_packets > large_threshold(nnp__cl_str(d->strs, type)))
        v->links[k].large_packets += n_packets;
    return NNP_OK;
}

/* ---- sorting ---- */

static void fix_link(void *rec, void *ctx)
{
    const nnp_cl_data_t *d = ctx;
    nnp_cl_link_rec_t l;
    memcpy(&l, rec, sizeof(l));
    l.group_key = nnp__cl_group_key(d, l.group, nnp__cl_is_p2p_name(nnp__cl_str(d->strs, l.op)));
    l.op_order = l.op < d->strs->n ? d->strs->order[l.op] : 0;
    memcpy(rec, &l, sizeof(l));
}

static int cmp_inst(const nnp_cl_data_t *d, const nnp_cl_link_rec_t *x, const nnp_cl_link_rec_t *y)
{
    return nnp__cl_cmp_inst_key(d->strs, NNP_CL_INST_KEY(x), NNP_CL_INST_KEY(y));
}

static int cmp_link(const void *a, const void *b, void *ctx)
{
    nnp_cl_link_rec_t x, y;
    int c;
    memcpy(&x, a, sizeof(x));
    memcpy(&y, b, sizeof(y));
    c = cmp_inst(ctx, &x, &y);
    if (c)
        return c;
    if (x.rank != y.rank)
        return x.rank < y.rank ? -1 : 1;
    if (x.src != y.src)
        return x.src < y.src ? -1 : 1;
    return (x.dst > y.dst) - (x.dst < y.dst);
}

/* ---- one op instance ---- */

typedef struct links {
    nnp_cl_link_rec_t *v;
    size_t n, cap;
} links_t;

static int links_add(links_t *l, const nnp_cl_link_rec_t *r)
{
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 64;
        nnp_cl_link_rec_t *nv = nnp__realloc(l->v, ncap * sizeof(*nv));
        if (!nv)
            return nnp__fail(NNP_ENOMEM, "out of memory");
        l->v = nv;
        l->cap = ncap;
    }
    l->v[l->n++] = *r;
    return NNP_OK;
}

static int cmp_pair(const void *a, const void *b)
{
    const nnp_cl_link_rec_t *x = a, *y = b;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* Maps group-local ranks to global ones over a whole (group key, step) block, per group
 * name, as msprof-analyze's merge_same_links does: a rank's link to itself in any op of the
 * group in that step says its local rank (the first rank claiming one keeps it). */
static void map_local(nnp_cl_data_t *d, links_t *l)
{
    int32_t *map = NULL; /* local -> global + 1 */
    size_t out = 0, n_map = 0;
    uint32_t group = UINT32_MAX;
    bool any_local = false;
    for (size_t i = 0; i < l->n && !any_local; i++)
        any_local = (l->v[i].flags & NNP_CL_LINK_LOCAL) != 0;
    if (!any_local)
        return;
    for (size_t i = 0; i < l->n; i++) {
        nnp_cl_link_rec_t r = l->v[i];
        if (!(r.flags & NNP_CL_LINK_LOCAL)) {
            l->v[out++] = r;
            continue;
        }
        if (r.group != group) {
            /* The block is sorted by op, not group name: gather this name's map. */
            int32_t max_local = -1;
            group = r.group;
            for (size_t j = 0; j < l->n; j++)
                if ((l->v[j].flags & NNP_CL_LINK_LOCAL) && l->v[j].group == group) {
                    if (l->v[j].src > max_local)
                        max_local = l->v[j].src;
                    if (l->v[j].dst > max_local)
                        max_local = l->v[j].dst;
                }
            nnp__free(map);
            n_map = max_local >= 0 && max_local < NNP_CL_MAX_RANKS ? (size_t)max_local + 1 : 0;
            map = n_map ? nnp__calloc(n_map, sizeof(*map)) : NULL;
            for (size_t j = 0; map && j < l->n; j++) {
                const nnp_cl_link_rec_t *q = &l->v[j];
                if ((q->flags & NNP_CL_LINK_LOCAL) && q->group == group && q->src == q->dst &&
                    q->src >= 0 && !map[q->src])
                    map[q->src] = q->rank + 1;
            }
        }
        if (!map || r.src < 0 || r.dst < 0 || (size_t)r.src >= n_map || (size_t)r.dst >= n_map ||
            !map[r.src] || !map[r.dst]) {
            d->vin.links_unmapped++;
            continue;
        }
        r.src = map[r.src] - 1;
        r.dst = map[r.dst] - 1;
        r.flags &= ~NNP_CL_LINK_LOCAL;
        l->v[out++] = r;
    }
    l->n = out;
    nnp__free(map);
}

/* Sums equal (src, dst) pairs in place (sorted first); the transport type and op name are
 * the last report's, as msprof-analyze's combine_link keeps them. */
static void combine(links_t *l)
{
    size_t out = 0;
    qsort(l->v, l->n, sizeof(*l->v), cmp_pair);
    for (size_t i = 0; i < l->n; i++) {
        if (out > 0 && l->v[out - 1].src == l->v[i].src && l->v[out - 1].dst == l->v[i].dst) {
            l->v[out - 1].bytes += l->v[i].bytes;
            l->v[out - 1].time_ns += l->v[i].time_ns;
            l->v[out - 1].type = l->v[i].type;
            l->v[out - 1].op_label = l->v[i].op_label;
            continue;
        }
        l->v[out++] = l->v[i];
    }
    l->n = out;
}

typedef struct writer {
    nnp_cl_data_t *d;
    nnp_jw_t w;
    links_t step_links; /* the step's links of every op, for its totals */
} writer_t;

/* The "Op Name" of an entry: what the data stated, else the op's (combine_link keeps the
 * input's). */
static const char *label_of(const writer_t *wr, const nnp_cl_link_rec_t *r)
{
    return nnp__cl_str(wr->d->strs, r->op_label ? r->op_label : r->op);
}

static void link_obj(writer_t *wr, const nnp_cl_link_rec_t *r)
{
    nnp_jw_t *w = &wr->w;
    char key[NUM_BUF];
    double mb = (double)r->bytes / BYTES_PER_MB, ms = (double)r->time_ns / NS_PER_MS;
    snprintf(key, sizeof(key), "%d-%d", r->src, r->dst);
    nnp__jw_key(w, key);
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "Transport Type");
    nnp__jw_str(w, nnp__cl_str(wr->d->strs, r->type));
    nnp__jw_key(w, "Transit Time(ms)");
    nnp__jw_double(w, ms);
    nnp__jw_key(w, "Transit Size(MB)");
    nnp__jw_double(w, mb);
    nnp__jw_key(w, "Op Name");
    nnp__jw_str(w, label_of(wr, r));
    nnp__jw_key(w, "Bandwidth(GB/s)");
    nnp__jw_double(w, ratio4(mb, ms));
    nnp__jw_obj_end(w);
}

/* msprof-analyze's check_add_op: ops named top/middle/bottom (MindSpore's aggregates) are
 * not added into the totals; "total" ones are. */
static bool adds_to_total(const char *op)
{
    return !strstr(op, "middle") && !strstr(op, "top") && !strstr(op, "bottom");
}

/* One ClusterCommunicationMatrix row (msprof-analyze's transfer_matrix_from_json_to_db:
 * every op entry of the JSON, Total Op Info included). */
static int link_row(writer_t *wr, const nnp_cl_link_rec_t *r, const char *step_s, const char *key)
{
    char v[3][NUM_BUF], src_s[NUM_BUF], dst_s[NUM_BUF];
    const char *row[10];
    double mb = (double)r->bytes / BYTES_PER_MB, ms = (double)r->time_ns / NS_PER_MS;
    snprintf(src_s, sizeof(src_s), "%d", r->src);
    snprintf(dst_s, sizeof(dst_s), "%d", r->dst);
    num(v[0], NUM_BUF, mb);
    num(v[1], NUM_BUF, ms);
    num(v[2], NUM_BUF, ratio4(mb, ms));
    row[0] = step_s;
    row[1] = key;
    row[2] = nnp__cl_str(wr->d->strs, r->group);
    row[3] = src_s;
    row[4] = dst_s;
    row[5] = v[0];
    row[6] = v[1];
    row[7] = v[2];
    row[8] = nnp__cl_str(wr->d->strs, r->type);
    row[9] = label_of(wr, r);
    return nnp__cl_db_row(wr->d, NNP_CL_T_COMM_MATRIX, row, 10);
}

static int write_instance(writer_t *wr, links_t *l, const char *step_s)
{
    nnp_cl_data_t *d = wr->d;
    const nnp_cl_link_rec_t *r0;
    char key[KEY_BUF];
    const char *op_name;
    int rc = NNP_OK;
    if (l->n == 0)
        return NNP_OK;
    r0 = &l->v[0];
    op_name = nnp__cl_str(d->strs, r0->op);
    if (r0->op_index == NNP_CL_NO_INDEX)
        snprintf(key, sizeof(key), "%s@%s", op_name, nnp__cl_str(d->strs, r0->group));
    else
        snprintf(key, sizeof(key), "%s_%u@%s", op_name, r0->op_index,
                 nnp__cl_str(d->strs, r0->group));
    /* Run totals count every report (each is one transfer's packet); MindSpore's aggregates
     * (top1, middle, bottom) repeat ops already counted. */
    for (size_t i = 0; rc == NNP_OK && i < l->n && adds_to_total(op_name); i++)
        if (l->v[i].src != l->v[i].dst)
            rc = total_add(d, l->v[i].src, l->v[i].dst, l->v[i].type, l->v[i].bytes,
                           l->v[i].time_ns, 1);
    combine(l);
    nnp__jw_key(&wr->w, key);
    nnp__jw_obj_begin(&wr->w);
    for (size_t i = 0; rc == NNP_OK && i < l->n; i++) {
        link_obj(wr, &l->v[i]);
        rc = link_row(wr, &l->v[i], step_s, key);
        if (rc == NNP_OK)
            rc = links_add(&wr->step_links, &l->v[i]);
    }
    nnp__jw_obj_end(&wr->w);
    return rc;
}

static int cmp_total(const void *a, const void *b, void *ctx)
{
    const nnp_cl_link_rec_t *x = a, *y = b;
    const nnp_cl_strtab_t *s = ctx;
    if (x->group != y->group)
        return s->order[x->group] < s->order[y->group] ? -1 : 1;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    return (x->dst > y->dst) - (x->dst < y->dst);
}

static int write_totals(writer_t *wr, const char *step_s)
{
    links_t *l = &wr->step_links;
    char key[KEY_BUF] = "";
    size_t out = 0;
    int rc = NNP_OK;
    if (l->n == 0)
        return NNP_OK; /* every link of the step was left out (unmapped local ranks) */
    qsort_r(l->v, l->n, sizeof(*l->v), cmp_total, wr->d->strs);
    for (size_t i = 0; i < l->n; i++) {
        if (!adds_to_total(nnp__cl_str(wr->d->strs, l->v[i].op)))
            continue;
        if (out > 0 && l->v[out - 1].group == l->v[i].group && l->v[out - 1].src == l->v[i].src &&
            l->v[out - 1].dst == l->v[i].dst) {
            l->v[out - 1].bytes += l->v[i].bytes;
            l->v[out - 1].time_ns += l->v[i].time_ns;
            l->v[out - 1].op = l->v[i].op; /* the last op's name, as combine_link keeps */
            l->v[out - 1].op_label = l->v[i].op_label;
            l->v[out - 1].type = l->v[i].type;
            continue;
        }
        l->v[out++] = l->v[i];
    }
    for (size_t i = 0; rc == NNP_OK && i < out; i++) {
        if (i == 0 || l->v[i - 1].group != l->v[i].group) {
            if (i > 0)
                nnp__jw_obj_end(&wr->w);
            snprintf(key, sizeof(key), "Total Op Info@%s", nnp__cl_str(wr->d->strs, l->v[i].group));
            nnp__jw_key(&wr->w, key);
            nnp__jw_obj_begin(&wr->w);
        }
        link_obj(wr, &l->v[i]);
        rc = link_row(wr, &l->v[i], step_s, key);
    }
    if (out > 0)
        nnp__jw_obj_end(&wr->w);
    l->n = 0;
    return rc;
}

/* One (group key, step) block: local ranks mapped, then each op instance in turn. */
static int write_block(writer_t *wr, links_t *b, const char *step_s)
{
    size_t start = 0;
    int rc = NNP_OK;
    map_local(wr->d, b);
    for (size_t i = 1; rc == NNP_OK && i <= b->n; i++) {
        links_t one;
        if (i < b->n && cmp_inst(wr->d, &b->v[start], &b->v[i]) == 0)
            continue;
        one.v = b->v + start;
        one.n = one.cap = i - start;
        rc = write_instance(wr, &one, step_s);
        start = i;
    }
    return rc;
}

static int keep_mi_link(nnp_cl_data_t *d, const nnp_cl_link_rec_t *r)
{
    nnp_cl_vin_t *v = &d->vin;
    if (v->n_mi_links == v->cap_mi_links) {
        size_t ncap = v->cap_mi_links ? v->cap_mi_links * 2 : 64;
        nnp_cl_link_rec_t *nl = nnp__realloc(v->mi_links, ncap * sizeof(*nl));
        if (!nl)
            return nnp__fail(NNP_ENOMEM, "out of memory");
        v->mi_links = nl;
        v->cap_mi_links = ncap;
    }
    v->mi_links[v->n_mi_links++] = *r;
    return NNP_OK;
}

/* A (group key, step) block is a batch of the merge (cmp_link sorts by those first). */
static int same_block(const void *a, const void *b, void *ctx)
{
    nnp_cl_link_rec_t x, y;
    (void)ctx;
    memcpy(&x, a, sizeof(x));
    memcpy(&y, b, sizeof(y));
    return x.group_key != y.group_key || x.step_id != y.step_id;
}

/* The block's matrix links, moved to the front of the batch (b views them); its MindInsight
 * averages, which are the rule's input and not matrix entries, are kept aside in order. */
static int block_links(nnp_cl_data_t *d, nnp_cl_batch_t *batch, links_t *b)
{
    b->v = batch->n ? nnp__cl_batch_rec(batch, 0) : NULL;
    b->n = 0;
    b->cap = batch->n;
    for (size_t i = 0; i < batch->n; i++) {
        const nnp_cl_link_rec_t *r = nnp__cl_batch_rec(batch, i);
        if (r->flags & NNP_CL_LINK_MI_AVG) {
            int rc = keep_mi_link(d, r);
            if (rc != NNP_OK)
                return rc;
        } else {
            b->v[b->n++] = *r;
        }
    }
    return NNP_OK;
}

int nnp__cl_write_matrix(nnp_cl_data_t *d)
{
    writer_t wr;
    nnp_outfile_t f;
    nnp_cl_spill_t sorted;
    nnp_cl_merge_t *m = NULL;
    nnp_cl_batch_t batch;
    nnp_cl_nest_t nest = {0};
    int rc;

    memset(&wr, 0, sizeof(wr));
    wr.d = d;
    rc = nnp__cl_sort_open(&d->links, &sorted, sizeof(nnp_cl_link_rec_t), fix_link, cmp_link, d,
                           d->tmp_dir, &m);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__cl_out_open(d, &f, MATRIX_FILE);
    if (rc != NNP_OK) {
        nnp__cl_merge_close(m);
        nnp__cl_spill_fini(&sorted);
        return rc;
    }
    rc = nnp__jw_init(&wr.w, f.fd, d->o->pretty, 0);
    if (rc == NNP_OK)
        nnp__jw_obj_begin(&wr.w);
    nnp__cl_batch_init(&batch, m, sizeof(nnp_cl_link_rec_t), same_block, NULL);
    while (rc == NNP_OK && (rc = nnp__cl_batch_next(&batch)) == NNP_OK) {
        bool end = batch.n == 0;
        links_t in;
        uint32_t key;
        uint64_t step;
        rc = block_links(d, &batch, &in);
        if (rc != NNP_OK)
            break;
        if (!end && in.n == 0)
            continue; /* MindInsight's averages only: no matrix entry */
        key = end ? 0 : in.v[0].group_key;
        step = end ? 0 : in.v[0].step_id;
        if (nnp__cl_nest_leaves_step(&nest, end, key, step))
            nnp__cl_nest_close_step(&nest, &wr.w);
        nnp__cl_nest_enter(&nest, &wr.w, d, end, key, step);
        if (end)
            break;
        rc = write_block(&wr, &in, nest.step_s);
        if (rc == NNP_OK)
            rc = write_totals(&wr, nest.step_s);
    }
    if (rc == NNP_OK) {
        nnp__jw_obj_end(&wr.w);
        nnp__jw_line_end(&wr.w);
        rc = nnp__jw_flush(&wr.w);
    }
    nnp__jw_fini(&wr.w);
    if (d->vin.links_unmapped > 0)
        NNP_LOG_W("%llu group-local links could not be mapped to global ranks (no rank reported "
                  "its own local rank in that op) and are left out of the matrix",
                  (unsigned long long)d->vin.links_unmapped);
    nnp__cl_batch_fini(&batch);
    nnp__free(wr.step_links.v);
    nnp__cl_merge_close(m);
    nnp__cl_spill_fini(&sorted);
    return nnp__out_commit(&f, rc);
}
