/* cl_groups.c - the communication groups of the cluster: each keyed, as msprof-analyze
 * keys them, by the tuple of ranks that used it ("(0, 1)"); communication_group.json and its
 * table in cluster_analysis.db; and the {group key: {step: ...}} nesting into which
 * cluster_communication.json (cl_comm.c) and the matrix (cl_matrix.c) stream their sorted
 * records. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cl_driver.h"
#include "util/json_writer.h"

#define GROUP_FILE "communication_group.json"

/* ---- group keys ---- */

typedef struct key_ranks {
    int *v;
    size_t n, cap;
} key_ranks_t;

static int cmp_tuple(const int *a, size_t na, const int *b, size_t nb)
{
    for (size_t i = 0; i < na && i < nb; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return (na > nb) - (na < nb);
}

typedef struct tuple_ref {
    key_ranks_t *k;
    size_t slot;
} tuple_ref_t;

static int cmp_ref(const void *a, const void *b)
{
    const tuple_ref_t *x = a, *y = b;
    int c = cmp_tuple(x->k->v, x->k->n, y->k->v, y->k->n);
    return c ? c : (x->slot > y->slot) - (x->slot < y->slot);
}

int nnp__cl_group_keys(nnp_cl_data_t *d)
{
    size_t n_slots = d->strs->n * 2;
    key_ranks_t *slots = nnp__calloc(n_slots ? n_slots : 1, sizeof(*slots));
    tuple_ref_t *refs = NULL;
    size_t n_refs = 0;
    int rc = NNP_OK;
    d->group_key_of = nnp__calloc(n_slots ? n_slots : 1, sizeof(uint32_t));
    d->group_key_of_cap = n_slots;
    if (!slots || !d->group_key_of) {
        nnp__free(slots);
        return nnp__fail(NNP_ENOMEM, "out of memory");
    }
    /* Ranks come in rank order: each list is sorted as it grows. */
    for (int i = 0; rc == NNP_OK && i < d->n_ranks; i++) {
        const nnp_cl_rank_t *s = &d->ranks[i];
        for (uint32_t g = 0; g < s->n_groups; g++) {
            size_t slot = (size_t)s->groups[g].name * 2 + (s->groups[g].is_p2p ? 1 : 0);
            key_ranks_t *k = &slots[slot];
            if (slot >= n_slots)
                continue;
            if (k->n && k->v[k->n - 1] == s->rank)
                continue;
            if (k->n == k->cap) {
                size_t ncap = k->cap ? k->cap * 2 : 8;
                int *nv = nnp__realloc(k->v, ncap * sizeof(int));
                if (!nv) {
                    rc = nnp__fail(NNP_ENOMEM, "out of memory");
                    break;
                }
                k->v = nv;
                k->cap = ncap;
            }
            k->v[k->n++] = s->rank;
        }
    }
    refs = nnp__calloc(n_slots ? n_slots : 1, sizeof(*refs));
    if (!refs && rc == NNP_OK)
        rc = nnp__fail(NNP_ENOMEM, "out of memory");
    for (size_t i = 0; rc == NNP_OK && i < n_slots; i++)
        if (slots[i].n)
            refs[n_refs++] = (tuple_ref_t){&slots[i], i};
    if (rc == NNP_OK)
        qsort(refs, n_refs, sizeof(*refs), cmp_ref);
    d->group_keys = nnp__calloc(n_refs ? n_refs : 1, sizeof(char *));
    if (!d->group_keys && rc == NNP_OK)
        rc = nnp__fail(NNP_ENOMEM, "out of memory");
    for (size_t i = 0; rc == NNP_OK && i < n_refs; i++) {
        bool same =
            i > 0 && cmp_tuple(refs[i].k->v, refs[i].k->n, refs[i - 1].k->v, refs[i - 1].k->n) == 0;
        if (!same) {
            rc = nnp__cl_tuple_text(refs[i].k->v, refs[i].k->n, &d->group_keys[d->n_group_keys]);
            if (rc != NNP_OK)
                break;
            d->n_group_keys++;
        }
        d->group_key_of[refs[i].slot] = (uint32_t)d->n_group_keys; /* index + 1 */
    }
    for (size_t i = 0; i < n_slots; i++)
        nnp__free(slots[i].v);
    nnp__free(slots);
    nnp__free(refs);
    return rc;
}

/* The group key (index + 1 into group_keys) of a group name used p2p or not. */
uint32_t nnp__cl_group_key(const nnp_cl_data_t *d, uint32_t group, bool p2p)
{
    size_t slot = (size_t)group * 2 + (p2p ? 1 : 0);
    if (slot < d->group_key_of_cap && d->group_key_of[slot])
        return d->group_key_of[slot];
    /* A group its rank did not list (too many groups): the other kind, else last. */
    slot ^= 1;
    return slot < d->group_key_of_cap && d->group_key_of[slot] ? d->group_key_of[slot]
                                                               : (uint32_t)d->n_group_keys + 1;
}

/* ---- communication_group.json ---- */

/* A "(0, 1)" tuple as the JSON array [0, 1] (msprof-analyze lists rank sets). */
static void jw_ranks(nnp_jw_t *w, const char *tuple)
{
    const char *p = tuple;
    nnp__jw_arr_begin(w);
    while (*p) {
        char *end;
        long v;
        if (*p < '0' || *p > '9') {
            p++;
            continue;
        }
        v = strtol(p, &end, 10);
        nnp__jw_int(w, v);
        p = end;
    }
    nnp__jw_arr_end(w);
}

int nnp__cl_write_groups(nnp_cl_data_t *d)
{
    nnp_outfile_t f;
    nnp_jw_t w;
    uint32_t *ids = NULL;
    size_t n_ids = 0;
    int rc = nnp__cl_out_open(d, &f, GROUP_FILE);
    if (rc != NNP_OK)
        return rc;
    ids = nnp__calloc(d->strs->n ? d->strs->n : 1, sizeof(*ids));
    if (!ids)
        return nnp__out_commit(&f, nnp__fail(NNP_ENOMEM, "out of memory"));
    /* Group names in text order (collation), each of its kinds. */
    for (size_t id = 1; id < d->strs->n; id++)
        if (d->group_key_of[id * 2] || d->group_key_of[id * 2 + 1])
            ids[n_ids++] = (uint32_t)id;
    for (size_t i = 1; i < n_ids; i++)
        for (size_t k = i; k > 0 && d->strs->order[ids[k - 1]] > d->strs->order[ids[k]]; k--) {
            uint32_t t = ids[k];
            ids[k] = ids[k - 1];
            ids[k - 1] = t;
        }
    rc = nnp__jw_init(&w, f.fd, d->o->pretty, 0);
    if (rc == NNP_OK) {
        static const char *const kinds[2] = {"collective", "p2p"};
        nnp__jw_obj_begin(&w);
        for (int p2p = 0; p2p < 2; p2p++) {
            nnp__jw_key(&w, kinds[p2p]);
            nnp__jw_arr_begin(&w);
            for (size_t i = 0; i < n_ids; i++) {
                uint32_t k = d->group_key_of[ids[i] * 2 + (size_t)p2p];
                if (k)
                    jw_ranks(&w, d->group_keys[k - 1]);
            }
            nnp__jw_arr_end(&w);
        }
        nnp__jw_key(&w, "comm_group_parallel_info");
        nnp__jw_arr_begin(&w);
        for (int p2p = 0; rc == NNP_OK && p2p < 2; p2p++) {
            for (size_t i = 0; rc == NNP_OK && i < n_ids; i++) {
                uint32_t k = d->group_key_of[ids[i] * 2 + (size_t)p2p];
                const char *row[5];
                if (!k)
                    continue;
                nnp__jw_obj_begin(&w);
                nnp__jw_key(&w, "type");
                nnp__jw_str(&w, kinds[p2p]);
                nnp__jw_key(&w, "rank_set");
                jw_ranks(&w, d->group_keys[k - 1]);
                nnp__jw_key(&w, "group_name");
                nnp__jw_str(&w, nnp__cl_str(d->strs, ids[i]));
                nnp__jw_key(&w, "group_id");
                nnp__jw_str(&w, "");
                nnp__jw_key(&w, "pg_name");
                nnp__jw_str(&w, "");
                nnp__jw_obj_end(&w);
                row[0] = kinds[p2p];
                row[1] = d->group_keys[k - 1];
                row[2] = nnp__cl_str(d->strs, ids[i]);
                row[3] = "";
                row[4] = "";
                rc = nnp__cl_db_row(d, NNP_CL_T_GROUPS, row, 5);
            }
        }
        nnp__jw_arr_end(&w);
        nnp__jw_obj_end(&w);
        nnp__jw_line_end(&w);
        if (rc == NNP_OK)
            rc = nnp__jw_flush(&w);
    }
    nnp__jw_fini(&w);
    nnp__free(ids);
    return nnp__out_commit(&f, rc);
}

/* ---- the {group key: {step: ...}} nesting of the per-group files ---- */

static void step_key(char *buf, size_t cap, uint64_t step)
{
    if (step == NNP_CL_NO_STEP)
        snprintf(buf, cap, "step");
    else
        snprintf(buf, cap, "step%" PRIu64, step);
}

bool nnp__cl_nest_leaves_step(const nnp_cl_nest_t *n, bool end, uint32_t key, uint64_t step)
{
    return n->in_step && (end || key != n->key || step != n->step);
}

void nnp__cl_nest_close_step(nnp_cl_nest_t *n, nnp_jw_t *w)
{
    nnp__jw_obj_end(w);
    n->in_step = false;
}

void nnp__cl_nest_enter(nnp_cl_nest_t *n, nnp_jw_t *w, const nnp_cl_data_t *d, bool end,
                        uint32_t key, uint64_t step)
{
    if (n->in_group && (end || key != n->key)) {
        nnp__jw_obj_end(w);
        n->in_group = false;
    }
    if (end)
        return;
    if (!n->in_group) {
        nnp__jw_key(w, key >= 1 && key <= d->n_group_keys ? d->group_keys[key - 1] : "()");
        nnp__jw_obj_begin(w);
        n->in_group = true;
        n->key = key;
    }
    if (!n->in_step) {
        step_key(n->step_s, sizeof(n->step_s), step);
        nnp__jw_key(w, n->step_s);
        nnp__jw_obj_begin(w);
        n->in_step = true;
        n->step = step;
    }
}
