/* cl_comm_totals.c - the "Total Op Info@<group>" entries of cluster_communication.json: per
 * step, each rank's sums over the ops of a group (msprof-analyze's compute_total_info), with
 * ratios and bandwidths from the sums. cl_comm.c adds every op record as it writes it and
 * has the totals written when the step ends (cl_comm.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cl_comm.h"

/* First size of the totals table (power of two). */
#define TOTALS_MIN 64

typedef struct tot_dist {
    uint64_t size, count;
    int64_t time;
} tot_dist_t;

typedef struct tot_bw {
    uint32_t type;
    uint64_t bytes;
    int64_t time;
    tot_dist_t *dist;
    size_t n_dist, cap_dist;
} tot_bw_t;

struct tot {
    uint32_t group;
    int32_t rank;
    bool used;
    int64_t elapse, transit, wait, sync, idle;
    tot_bw_t bw[NNP_CL_MAX_BW];
    uint32_t n_bw;
};

void nnp__cl_totals_clear(totals_t *t)
{
    for (size_t i = 0; i < t->cap; i++) {
        for (uint32_t b = 0; b < t->v[i].n_bw; b++)
            nnp__free(t->v[i].bw[b].dist);
        memset(&t->v[i], 0, sizeof(t->v[i]));
    }
    t->n = 0;
}

static tot_t *totals_get(totals_t *t, uint32_t group, int32_t rank)
{
    size_t k;
    if ((t->n + 1) * 2 > t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : TOTALS_MIN;
        tot_t *nv = nnp__calloc(ncap, sizeof(*nv));
        if (!nv)
            return NULL;
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->v[i].used)
                continue;
            k = ((size_t)t->v[i].group * 31u + (size_t)t->v[i].rank) & (ncap - 1);
            while (nv[k].used)
                k = (k + 1) & (ncap - 1);
            nv[k] = t->v[i];
        }
        nnp__free(t->v);
        t->v = nv;
        t->cap = ncap;
    }
    k = ((size_t)group * 31u + (size_t)rank) & (t->cap - 1);
    while (t->v[k].used) {
        if (t->v[k].group == group && t->v[k].rank == rank)
            return &t->v[k];
        k = (k + 1) & (t->cap - 1);
    }
    t->v[k].used = true;
    t->v[k].group = group;
    t->v[k].rank = rank;
    t->n++;
    return &t->v[k];
}

int nnp__cl_totals_add(totals_t *t, nnp_cl_comm_rec_t *r)
{
    tot_t *x = totals_get(t, r->group, r->rank);
    if (!x)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    x->elapse += r->elapse_ns;
    x->transit += r->transit_ns;
    x->wait += r->wait_ns;
    x->sync += r->sync_ns;
    x->idle += r->idle_ns;
    for (uint32_t b = 0; b < r->n_bw; b++) {
        nnp_cl_bw_t *bw = &nnp__cl_comm_bw(r)[b];
        tot_bw_t *tb = NULL;
        for (uint32_t i = 0; i < x->n_bw; i++)
            if (x->bw[i].type == bw->type)
                tb = &x->bw[i];
        if (!tb) {
            if (x->n_bw == NNP_CL_MAX_BW)
                continue;
            tb = &x->bw[x->n_bw++];
            tb->type = bw->type;
        }
        tb->bytes += bw->bytes;
        tb->time += bw->time_ns;
        for (uint32_t k = 0; k < r->n_dist; k++) {
            nnp_cl_pkt_t *dd = &nnp__cl_comm_dist(r)[k];
            tot_dist_t *td = NULL;
            if (dd->bw_index != b)
                continue;
            for (size_t i = 0; i < tb->n_dist; i++)
                if (tb->dist[i].size == dd->size_bytes)
                    td = &tb->dist[i];
            if (!td) {
                if (tb->n_dist == tb->cap_dist) {
                    size_t ncap = tb->cap_dist ? tb->cap_dist * 2 : 8;
                    tot_dist_t *nd;
                    if (ncap > NNP_CL_MAX_DIST * 4)
                        continue;
                    nd = nnp__realloc(tb->dist, ncap * sizeof(*nd));
                    if (!nd)
                        return nnp__fail(NNP_ENOMEM, "out of memory");
                    tb->dist = nd;
                    tb->cap_dist = ncap;
                }
                td = &tb->dist[tb->n_dist++];
                memset(td, 0, sizeof(*td));
                td->size = dd->size_bytes;
            }
            td->count += dd->count;
            td->time += dd->time_ns;
        }
    }
    return NNP_OK;
}

static int cmp_tot(const void *a, const void *b, void *ctx)
{
    const tot_t *x = *(tot_t *const *)a, *y = *(tot_t *const *)b;
    const nnp_cl_strtab_t *s = ctx;
    if (x->group != y->group)
        return s->order[x->group] < s->order[y->group] ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* "Total Op Info@<group>": per rank the sums of the step's ops (msprof-analyze's
 * compute_total_info), ratios and bandwidths from the sums. */
int nnp__cl_totals_write(totals_t *tot, const nnp_cl_data_t *d, nnp_jw_t *w)
{
    tot_t **v = nnp__malloc((tot->n ? tot->n : 1) * sizeof(*v));
    size_t n = 0;
    if (!v)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    for (size_t i = 0; i < tot->cap; i++)
        if (tot->v[i].used)
            v[n++] = &tot->v[i];
    qsort_r(v, n, sizeof(*v), cmp_tot, d->strs);
    for (size_t i = 0; i < n; i++) {
        const tot_t *t = v[i];
        char rank_s[NUM_BUF], key[KEY_BUF];
        if (i == 0 || v[i - 1]->group != t->group) {
            if (i > 0)
                nnp__jw_obj_end(w);
            snprintf(key, sizeof(key), "Total Op Info@%s", nnp__cl_str(d->strs, t->group));
            nnp__jw_key(w, key);
            nnp__jw_obj_begin(w);
        }
        snprintf(rank_s, sizeof(rank_s), "%d", t->rank);
        nnp__jw_key(w, rank_s);
        nnp__jw_obj_begin(w);
        nnp__jw_key(w, "Communication Time Info");
        nnp__jw_obj_begin(w);
        nnp__jw_key(w, "Elapse Time(ms)");
        nnp__cl_jw_ms(w, t->elapse);
        nnp__jw_key(w, "Transit Time(ms)");
        nnp__cl_jw_ms(w, t->transit);
        nnp__jw_key(w, "Wait Time(ms)");
        nnp__cl_jw_ms(w, t->wait);
        nnp__jw_key(w, "Synchronization Time(ms)");
        nnp__cl_jw_ms(w, t->sync);
        nnp__jw_key(w, "Idle Time(ms)");
        nnp__cl_jw_ms(w, t->idle);
        nnp__jw_key(w, "Wait Time Ratio");
        nnp__jw_double(w, nnp__cl_safe_ratio((double)t->wait, (double)(t->wait + t->transit)));
        nnp__jw_key(w, "Synchronization Time Ratio");
        nnp__jw_double(w, nnp__cl_safe_ratio((double)t->sync, (double)(t->sync + t->transit)));
        nnp__jw_obj_end(w);
        nnp__jw_key(w, "Communication Bandwidth Info");
        nnp__jw_obj_begin(w);
        for (uint32_t b = 0; b < t->n_bw; b++) {
            const tot_bw_t *tb = &t->bw[b];
            double mb = (double)tb->bytes / BYTES_PER_MB, ms = (double)tb->time / NS_PER_MS;
            nnp__jw_key(w, nnp__cl_str(d->strs, tb->type));
            nnp__jw_obj_begin(w);
            nnp__jw_key(w, "Transit Time(ms)");
            nnp__jw_double(w, ms);
            nnp__jw_key(w, "Transit Size(MB)");
            nnp__jw_double(w, mb);
            nnp__jw_key(w, "Size Distribution");
            nnp__jw_obj_begin(w);
            for (size_t k = 0; k < tb->n_dist; k++) {
                char size_s[NUM_BUF];
                nnp__cl_dec(size_s, sizeof(size_s), (int64_t)tb->dist[k].size, MB_DIGITS);
                nnp__jw_key(w, size_s);
                nnp__jw_arr_begin(w);
                nnp__jw_uint(w, tb->dist[k].count);
                nnp__cl_jw_ms(w, tb->dist[k].time);
                nnp__jw_arr_end(w);
            }
            nnp__jw_obj_end(w);
            nnp__jw_key(w, "Bandwidth(GB/s)");
            nnp__jw_double(w, nnp__cl_safe_ratio(mb, ms));
            nnp__jw_obj_end(w);
        }
        nnp__jw_obj_end(w);
        nnp__jw_obj_end(w);
    }
    if (n > 0)
        nnp__jw_obj_end(w);
    nnp__free(v);
    nnp__cl_totals_clear(tot);
    return NNP_OK;
}
