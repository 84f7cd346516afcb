/* op_shapes.c - the input shapes and dtypes of each op (the Operators page's op detail,
 * MindInsight's "operator info"): one row per distinct (op name, shapes, dtypes) with its
 * execution count, written as op_shapes_{rank}.csv (docs/OUTPUTS.md "Op shapes") when at
 * least one host op recorded shapes or dtypes; otherwise no file (a re-run removes one).
 * Rows are sorted by op name, then by count (most first), so readers can search by name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "util/csv_writer.h"

static const char *const header[] = {"Op Name",          "OP Type", "Input Shapes",
                                     "Input Data Types", "Count",   NULL};

typedef struct variant {
    uint32_t name, type, shapes, dtypes;
    uint64_t count;
} variant_t;

static const nnp_model_t *sort_model; /* qsort has no context (C11); one analysis per process */

static int cmp_exec(const void *a, const void *b)
{
    const nnp_ops_t *o = &sort_model->ops;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    int c = strcmp(nnp__model_str(sort_model, o->name[x]), nnp__model_str(sort_model, o->name[y]));
    if (c)
        return c;
    if (o->shapes[x] != o->shapes[y])
        return o->shapes[x] < o->shapes[y] ? -1 : 1;
    if (o->dtypes[x] != o->dtypes[y])
        return o->dtypes[x] < o->dtypes[y] ? -1 : 1;
    return (x > y) - (x < y);
}

static int cmp_variant(const void *a, const void *b)
{
    const variant_t *x = a, *y = b;
    int c = strcmp(nnp__model_str(sort_model, x->name), nnp__model_str(sort_model, y->name));
    if (c)
        return c;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    c = strcmp(nnp__model_str(sort_model, x->shapes), nnp__model_str(sort_model, y->shapes));
    return c ? c
             : strcmp(nnp__model_str(sort_model, x->dtypes), nnp__model_str(sort_model, y->dtypes));
}

int nnp__op_shapes_write(const nnp_actx_t *c)
{
    const nnp_model_t *m = c->m;
    const nnp_ops_t *o = &m->ops;
    size_t *idx, n = 0, nv = 0;
    variant_t *v;
    char name[64];
    nnp_outfile_t f;
    nnp_csv_t w;
    int rc;

    for (size_t i = 0; i < o->t.n; i++)
        n += o->shapes[i] != NNP_NONE || o->dtypes[i] != NNP_NONE;
    if (!n) {
        nnp__output_remove_stale(c, "op_shapes_", ".csv");
        return NNP_OK;
    }
    idx = nnp__malloc(n * sizeof(size_t));
    v = nnp__malloc(n * sizeof(variant_t));
    if (!idx || !v) {
        nnp__free(idx);
        nnp__free(v);
        return nnp__fail(NNP_ENOMEM, "out of memory (op shapes)");
    }
    n = 0;
    for (size_t i = 0; i < o->t.n; i++) {
        if (o->shapes[i] != NNP_NONE || o->dtypes[i] != NNP_NONE)
            idx[n++] = i;
    }
    sort_model = m;
    qsort(idx, n, sizeof(size_t), cmp_exec);
    for (size_t k = 0; k < n; k++) {
        size_t i = idx[k];
        if (nv && v[nv - 1].name == o->name[i] && v[nv - 1].shapes == o->shapes[i] &&
            v[nv - 1].dtypes == o->dtypes[i]) {
            v[nv - 1].count++;
            continue;
        }
        v[nv].name = o->name[i];
        v[nv].type = o->type[i];
        v[nv].shapes = o->shapes[i];
        v[nv].dtypes = o->dtypes[i];
        v[nv].count = 1;
        nv++;
    }
    qsort(v, nv, sizeof(variant_t), cmp_variant);
    nnp__free(idx);
    snprintf(name, sizeof(name), "op_shapes_%d.csv", c->rank);
    rc = nnp__out_open(&f, c->out_dir, name);
    if (rc == NNP_OK) {
        rc = nnp__csv_init(&w, f.fd);
        if (rc == NNP_OK) {
            nnp__csv_header(&w, header);
            for (size_t k = 0; k < nv; k++) {
                nnp__csv_str(&w, nnp__model_str(m, v[k].name));
                nnp__csv_str(&w, nnp__model_str(m, v[k].type));
                nnp__csv_str(&w, nnp__model_str(m, v[k].shapes));
                nnp__csv_str(&w, nnp__model_str(m, v[k].dtypes));
                nnp__csv_uint(&w, v[k].count);
                nnp__csv_end_row(&w);
            }
        }
        rc = nnp__out_commit(&f, nnp__csv_fini(&w) != NNP_OK ? NNP_EIO : rc);
    }
    nnp__free(v);
    return rc;
}
