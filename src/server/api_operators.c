/* api_operators.c - GET /api/operators: the Operators page. Every op type
 * (op_statistic_{rank}.csv), the ops by self time when ops nest (op_self_time_{rank}.csv),
 * and every op (op_detail_{rank}.csv, most time first, the first MAX_OPS; &type=T lists one
 * type's ops), each op with its input shapes and dtypes (op_shapes_{rank}.csv) and FLOPs
 * (flops_{rank}.txt), and the model's FLOPs summary. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "server/api.h"
#include "util/util.h"

/* Ops sent at most (the page searches and sorts what it has; the count says how many
 * more there are). A run has this many distinct op names only with generated names. */
#define MAX_OPS 20000
/* Shape variants listed per op at most (dynamic-shape ops can have thousands). */
#define MAX_SHAPES_PER_OP 16

static const char *const stat_cols[] = {"Count",        "Total Time(us)", "Avg Time(us)",
                                        "Min Time(us)", "Max Time(us)",   "Ratio(%)"};
static const char *const stat_keys[] = {"count",  "total_us", "avg_us",
                                        "min_us", "max_us",   "ratio_pct"};
/* op_self_time_{rank}.csv's columns and their keys. */
static const char *const self_cols[] = {"Calls",        "Total Time(us)", "Self Time(us)",
                                        "Avg Time(us)", "Min Time(us)",   "Max Time(us)",
                                        "Self Time(%)"};
static const char *const self_keys[] = {"count",  "total_us", "self_us", "avg_us",
                                        "min_us", "max_us",   "self_pct"};
static const char *const flops_cols[] = {"MFLOPs(10^6 cube)", "GFLOPS(10^9 cube)",
                                         "MFLOPs(10^6 vector)", "GFLOPS(10^9 vector)"};
static const char *const flops_keys[] = {"mflops_cube", "gflops_cube", "mflops_vector",
                                         "gflops_vector"};

typedef struct sorted {
    const nnp_svt_t *t;
    long col;
    size_t *idx; /* rows sorted by the column's text */
    size_t n;
} sorted_t;

static const nnp_svt_t *sort_table; /* qsort has no context argument (C11) */
static long sort_col;

static int cmp_rows(const void *a, const void *b)
{
    return strcmp(nnp__svt_cell(sort_table, *(const size_t *)a, sort_col),
                  nnp__svt_cell(sort_table, *(const size_t *)b, sort_col));
}

/* The rows of t sorted by the text of col, for lookups by name. Not thread-safe through
 * the qsort statics, so callers hold sort_mu. */
static pthread_mutex_t sort_mu = PTHREAD_MUTEX_INITIALIZER;

static int sorted_init(sorted_t *s, const nnp_svt_t *t, const char *col)
{
    memset(s, 0, sizeof(*s));
    s->t = t;
    s->col = nnp__svt_col(t, col);
    if (s->col < 0 || !t->n_rows)
        return NNP_OK;
    s->idx = nnp__malloc(t->n_rows * sizeof(size_t));
    if (!s->idx)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    for (size_t i = 0; i < t->n_rows; i++)
        s->idx[i] = i;
    s->n = t->n_rows;
    pthread_mutex_lock(&sort_mu);
    sort_table = t;
    sort_col = s->col;
    qsort(s->idx, s->n, sizeof(size_t), cmp_rows);
    pthread_mutex_unlock(&sort_mu);
    return NNP_OK;
}

/* First sorted position whose text is >= key. */
static size_t sorted_lower(const sorted_t *s, const char *key)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(nnp__svt_cell(s->t, s->idx[mid], s->col), key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The numbers of row of t: key keys[k] for column cols[k], n of them. */
static void write_nums(nnp_jw_t *w, const nnp_svt_t *t, size_t row, const char *const *cols,
                       const char *const *keys, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        nnp__jw_key(w, keys[k]);
        nnp__api_cell_num(w, t, row, nnp__svt_col(t, cols[k]));
    }
}

static void write_stats(nnp_jw_t *w, const nnp_svt_t *t, size_t row)
{
    write_nums(w, t, row, stat_cols, stat_keys, NNP_ARRAY_LEN(stat_cols));
}

static void write_types(nnp_jw_t *w, const nnp_svt_t *t)
{
    long c_type = nnp__svt_col(t, "OP Type"), c_core = nnp__svt_col(t, "Core Type");
    nnp__jw_key(w, "types");
    nnp__jw_arr_begin(w);
    for (size_t i = 0; i < t->n_rows; i++) {
        nnp__jw_obj_begin(w);
        nnp__jw_key(w, "type");
        nnp__jw_str(w, nnp__svt_cell(t, i, c_type));
        nnp__jw_key(w, "core");
        nnp__jw_str(w, nnp__svt_cell(t, i, c_core));
        write_stats(w, t, i);
        nnp__jw_obj_end(w);
    }
    nnp__jw_arr_end(w);
}

/* The ops with their self time (op_self_time_{rank}.csv, in its order: most self time
 * first), null when the run has none: its ops do not nest, so op types' totals hold no
 * time twice. */
static void write_self_times(nnp_jw_t *w, const nnp_svt_t *t)
{
    long c_name = nnp__svt_col(t, "Name");
    nnp__jw_key(w, "self_times");
    if (!t->present) {
        nnp__jw_null(w);
        return;
    }
    nnp__jw_arr_begin(w);
    for (size_t i = 0; i < t->n_rows && i < MAX_OPS; i++) {
        nnp__jw_obj_begin(w);
        nnp__jw_key(w, "name");
        nnp__jw_str(w, nnp__svt_cell(t, i, c_name));
        write_nums(w, t, i, self_cols, self_keys, NNP_ARRAY_LEN(self_cols));
        nnp__jw_obj_end(w);
    }
    nnp__jw_arr_end(w);
}

static void write_op_extras(nnp_jw_t *w, const char *name, const sorted_t *shapes,
                            const sorted_t *flops)
{
    size_t p = sorted_lower(shapes, name);
    const nnp_svt_t *st = shapes->t;
    long c_sh = nnp__svt_col(st, "Input Shapes"), c_dt = nnp__svt_col(st, "Input Data Types");
    long c_n = nnp__svt_col(st, "Count");

    nnp__jw_key(w, "shapes");
    nnp__jw_arr_begin(w);
    for (size_t k = 0; p < shapes->n && k < MAX_SHAPES_PER_OP &&
                       strcmp(nnp__svt_cell(st, shapes->idx[p], shapes->col), name) == 0;
         p++, k++) {
        nnp__jw_obj_begin(w);
        nnp__jw_key(w, "shapes");
        nnp__jw_str(w, nnp__svt_cell(st, shapes->idx[p], c_sh));
        nnp__jw_key(w, "dtypes");
        nnp__jw_str(w, nnp__svt_cell(st, shapes->idx[p], c_dt));
        nnp__jw_key(w, "count");
        nnp__api_cell_num(w, st, shapes->idx[p], c_n);
        nnp__jw_obj_end(w);
    }
    nnp__jw_arr_end(w);
    p = sorted_lower(flops, name);
    nnp__jw_key(w, "flops");
    if (p < flops->n && strcmp(nnp__svt_cell(flops->t, flops->idx[p], flops->col), name) == 0) {
        nnp__jw_obj_begin(w);
        write_nums(w, flops->t, flops->idx[p], flops_cols, flops_keys, NNP_ARRAY_LEN(flops_cols));
        nnp__jw_obj_end(w);
    } else {
        nnp__jw_null(w);
    }
}

int nnp__api_operators(const nnp_api_ctx_t *c, nnp_jw_t *w)
{
    const nnp_rank_data_t *d = c->d;
    const nnp_svt_t *t = &d->op_detail;
    const char *type = c->args->get(c->args->ctx, "type");
    long c_name = nnp__svt_col(t, "Op Name"), c_type = nnp__svt_col(t, "OP Type");
    long c_core = nnp__svt_col(t, "Core Type");
    sorted_t shapes, flops;
    size_t listed = 0, matching = 0;
    int rc;

    rc = sorted_init(&shapes, &d->op_shapes, "Op Name");
    if (rc == NNP_OK)
        rc = sorted_init(&flops, &d->flops, "op_full_name");
    if (rc != NNP_OK) {
        nnp__free(shapes.idx);
        return rc;
    }
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "rank");
    nnp__jw_int(w, d->rank);
    write_types(w, &d->op_stat);
    write_self_times(w, &d->op_self);
    nnp__api_cjson(w, "top20", d->top20);
    nnp__jw_key(w, "type_filter");
    if (type)
        nnp__jw_str(w, type);
    else
        nnp__jw_null(w);
    nnp__jw_key(w, "ops");
    nnp__jw_arr_begin(w);
    for (size_t i = 0; i < t->n_rows; i++) {
        if (type && strcmp(nnp__svt_cell(t, i, c_type), type) != 0)
            continue;
        matching++;
        if (listed >= MAX_OPS)
            continue;
        listed++;
        nnp__jw_obj_begin(w);
        nnp__jw_key(w, "name");
        nnp__jw_str(w, nnp__svt_cell(t, i, c_name));
        nnp__jw_key(w, "type");
        nnp__jw_str(w, nnp__svt_cell(t, i, c_type));
        nnp__jw_key(w, "core");
        nnp__jw_str(w, nnp__svt_cell(t, i, c_core));
        write_stats(w, t, i);
        write_op_extras(w, nnp__svt_cell(t, i, c_name), &shapes, &flops);
        nnp__jw_obj_end(w);
    }
    nnp__jw_arr_end(w);
    nnp__jw_key(w, "ops_total");
    nnp__jw_uint(w, matching);
    nnp__jw_key(w, "ops_truncated");
    nnp__jw_bool(w, matching > listed);
    nnp__jw_key(w, "shapes_available");
    nnp__jw_bool(w, d->op_shapes.present);
    /* The model's FLOPs without the per-step list (one entry per step: unbounded). */
    nnp__jw_key(w, "flops_summary");
    if (d->flops_summary) {
        const cJSON *k;
        nnp__jw_obj_begin(w);
        cJSON_ArrayForEach(k, d->flops_summary)
        {
            if (k->string && strcmp(k->string, "steps") != 0)
                nnp__api_cjson(w, k->string, k);
        }
        nnp__jw_obj_end(w);
    } else {
        nnp__jw_null(w);
    }
    nnp__jw_obj_end(w);
    nnp__free(shapes.idx);
    nnp__free(flops.idx);
    return NNP_OK;
}
