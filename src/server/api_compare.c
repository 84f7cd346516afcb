/* api_compare.c - GET /api/compare?a=RUN&b=RUN[&rank_a=R&rank_b=R]: the Compare page (none
 * of MindInsight, msprof or the TensorBoard plugin has one). Op-type time deltas
 * (op_statistic), step-phase deltas (the step trace averages row and the overlap means),
 * ops found in only one run (op_detail), every list sorted by impact: the absolute change
 * of total time, largest first. Run a is the baseline, b the new run: delta = b - a. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/api.h"
#include "util/util.h"

/* Rows listed per section at most (sorted by impact, so the tail matters least). */
#define MAX_ROWS 500
#define KEY_SEP  '\x1f'

typedef struct keyed {
    char *key; /* name/type/core joined by KEY_SEP */
    size_t row;
} keyed_t;

typedef struct delta {
    const char *a_key, *b_key;
    size_t a_row, b_row; /* SIZE_MAX: absent on that side */
    double a, b, impact;
} delta_t;

static int cmp_key(const void *x, const void *y)
{
    return strcmp(((const keyed_t *)x)->key, ((const keyed_t *)y)->key);
}

static int cmp_impact(const void *x, const void *y)
{
    double a = ((const delta_t *)x)->impact, b = ((const delta_t *)y)->impact;
    return (a < b) - (a > b);
}

/* Keys of every row of t from cols joined, sorted. */
static keyed_t *keys(const nnp_svt_t *t, const char *const *cols, size_t n_cols)
{
    keyed_t *v = nnp__calloc(t->n_rows ? t->n_rows : 1, sizeof(keyed_t));
    if (!v)
        return NULL;
    for (size_t i = 0; i < t->n_rows; i++) {
        size_t len = 0, pos = 0;
        for (size_t c = 0; c < n_cols; c++)
            len += strlen(nnp__svt_cell(t, i, nnp__svt_col(t, cols[c]))) + 1;
        v[i].key = nnp__malloc(len + 1);
        v[i].row = i;
        if (!v[i].key) {
            for (size_t k = 0; k < i; k++)
                nnp__free(v[k].key);
            nnp__free(v);
            return NULL;
        }
        for (size_t c = 0; c < n_cols; c++) {
            const char *s = nnp__svt_cell(t, i, nnp__svt_col(t, cols[c]));
            size_t n = strlen(s);
            memcpy(v[i].key + pos, s, n);
            pos += n;
            v[i].key[pos++] = c + 1 < n_cols ? KEY_SEP : '\0';
        }
    }
    qsort(v, t->n_rows, sizeof(keyed_t), cmp_key);
    return v;
}

static void free_keys(keyed_t *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        nnp__free(v[i].key);
    nnp__free(v);
}

/* Merges the two sorted key lists into deltas of the value column. */
static size_t merge(const nnp_svt_t *ta, const keyed_t *ka, const nnp_svt_t *tb, const keyed_t *kb,
                    const char *val, delta_t *out)
{
    size_t i = 0, j = 0, n = 0;
    long ca = nnp__svt_col(ta, val), cb = nnp__svt_col(tb, val);
    while (i < ta->n_rows || j < tb->n_rows) {
        int c = i == ta->n_rows ? 1 : j == tb->n_rows ? -1 : strcmp(ka[i].key, kb[j].key);
        delta_t *d = &out[n++];
        memset(d, 0, sizeof(*d));
        d->a_row = d->b_row = SIZE_MAX;
        if (c <= 0) {
            d->a_key = ka[i].key;
            d->a_row = ka[i].row;
            d->a = nnp__svt_num(ta, ka[i].row, ca);
            i++;
        }
        if (c >= 0) {
            d->b_key = kb[j].key;
            d->b_row = kb[j].row;
            d->b = nnp__svt_num(tb, kb[j].row, cb);
            j++;
        }
        if (isnan(d->a))
            d->a = 0;
        if (isnan(d->b))
            d->b = 0;
        d->impact = fabs(d->b - d->a);
    }
    qsort(out, n, sizeof(delta_t), cmp_impact);
    return n;
}

static void write_delta_fields(nnp_jw_t *w, double a, double b, bool has_a, bool has_b)
{
    nnp__jw_key(w, "a");
    nnp__api_num(w, has_a ? a : NAN);
    nnp__jw_key(w, "b");
    nnp__api_num(w, has_b ? b : NAN);
    nnp__jw_key(w, "delta");
    nnp__jw_double(w, b - a);
    nnp__jw_key(w, "delta_pct");
    nnp__api_num(w, a != 0 ? (b - a) / a * 100.0 : NAN);
    nnp__jw_key(w, "status");
    nnp__jw_str(w, has_a && has_b ? "both" : has_b ? "new" : "removed");
}

static int section(nnp_jw_t *w, const char *key, const nnp_svt_t *ta, const nnp_svt_t *tb,
                   const char *const *cols, const char *const *names, size_t n_cols)
{
    keyed_t *ka = keys(ta, cols, n_cols), *kb = keys(tb, cols, n_cols);
    delta_t *d = nnp__calloc(ta->n_rows + tb->n_rows + 1, sizeof(delta_t));
    size_t n, listed = 0, total = 0;

    if (!ka || !kb || !d) {
        free_keys(ka, ta->n_rows);
        free_keys(kb, tb->n_rows);
        nnp__free(d);
        return nnp__fail(NNP_ENOMEM, "out of memory");
    }
    n = merge(ta, ka, tb, kb, "Total Time(us)", d);
    nnp__jw_key(w, key);
    nnp__jw_arr_begin(w);
    for (size_t i = 0; i < n; i++) {
        bool has_a = d[i].a_row != SIZE_MAX, has_b = d[i].b_row != SIZE_MAX;
        const nnp_svt_t *t = has_b ? tb : ta;
        size_t row = has_b ? d[i].b_row : d[i].a_row;
        total++;
        if (listed >= MAX_ROWS)
            continue;
        listed++;
        nnp__jw_obj_begin(w);
        for (size_t c = 0; c < n_cols; c++) {
            nnp__jw_key(w, names[c]);
            nnp__jw_str(w, nnp__svt_cell(t, row, nnp__svt_col(t, cols[c])));
        }
        write_delta_fields(w, d[i].a, d[i].b, has_a, has_b);
        nnp__jw_key(w, "a_count");
        nnp__api_num(w, has_a ? nnp__svt_num(ta, d[i].a_row, nnp__svt_col(ta, "Count")) : NAN);
        nnp__jw_key(w, "b_count");
        nnp__api_num(w, has_b ? nnp__svt_num(tb, d[i].b_row, nnp__svt_col(tb, "Count")) : NAN);
        nnp__jw_obj_end(w);
    }
    nnp__jw_arr_end(w);
    {
        char k[64];
        size_t n_new = 0, n_removed = 0;
        for (size_t i = 0; i < n; i++) {
            n_new += d[i].a_row == SIZE_MAX;
            n_removed += d[i].b_row == SIZE_MAX;
        }
        snprintf(k, sizeof(k), "%s_counts", key);
        nnp__jw_key(w, k);
        nnp__jw_obj_begin(w);
        nnp__jw_key(w, "total");
        nnp__jw_uint(w, total);
        nnp__jw_key(w, "listed");
        nnp__jw_uint(w, listed);
        nnp__jw_key(w, "new");
        nnp__jw_uint(w, n_new);
        nnp__jw_key(w, "removed");
        nnp__jw_uint(w, n_removed);
        nnp__jw_obj_end(w);
    }
    free_keys(ka, ta->n_rows);
    free_keys(kb, tb->n_rows);
    nnp__free(d);
    return NNP_OK;
}

static void phases(nnp_jw_t *w, const nnp_rank_data_t *a, const nnp_rank_data_t *b)
{
    size_t ra = nnp__api_avg_row(&a->steps), rb = nnp__api_avg_row(&b->steps);
    delta_t d[NNP_N_PHASES + NNP_N_OVERLAP];
    const char *unit[NNP_ARRAY_LEN(d)];
    size_t n = 0;

    for (size_t k = 0; k < NNP_N_PHASES; k++) {
        long ca = nnp__svt_col(&a->steps, nnp__phase_cols[k]),
             cb = nnp__svt_col(&b->steps, nnp__phase_cols[k]);
        if (ca < 0 && cb < 0)
            continue;
        memset(&d[n], 0, sizeof(d[n]));
        d[n].a_key = nnp__phase_cols[k];
        d[n].a = ra == SIZE_MAX ? NAN : nnp__svt_num(&a->steps, ra, ca);
        d[n].b = rb == SIZE_MAX ? NAN : nnp__svt_num(&b->steps, rb, cb);
        unit[n] = "ms";
        n++;
    }
    for (size_t k = 0; k < NNP_N_OVERLAP; k++) {
        memset(&d[n], 0, sizeof(d[n]));
        d[n].a_key = nnp__overlap_cols[k];
        d[n].a = a->overlap_avg[k] / 1000.0; /* us -> ms */
        d[n].b = b->overlap_avg[k] / 1000.0;
        unit[n] = "ms";
        n++;
    }
    for (size_t k = 0; k < n; k++) {
        d[k].impact = isnan(d[k].a) || isnan(d[k].b) ? -1 : fabs(d[k].b - d[k].a);
        d[k].b_key = unit[k];
    }
    qsort(d, n, sizeof(delta_t), cmp_impact);
    nnp__jw_key(w, "step_phases");
    nnp__jw_arr_begin(w);
    for (size_t k = 0; k < n; k++) {
        nnp__jw_obj_begin(w);
        nnp__jw_key(w, "phase");
        nnp__jw_str(w, d[k].a_key);
        nnp__jw_key(w, "unit");
        nnp__jw_str(w, d[k].b_key);
        nnp__jw_key(w, "a");
        nnp__api_num(w, d[k].a);
        nnp__jw_key(w, "b");
        nnp__api_num(w, d[k].b);
        nnp__jw_key(w, "delta");
        nnp__api_num(w, d[k].b - d[k].a);
        nnp__jw_key(w, "delta_pct");
        nnp__api_num(w, d[k].a != 0 ? (d[k].b - d[k].a) / d[k].a * 100.0 : NAN);
        nnp__jw_obj_end(w);
    }
    nnp__jw_arr_end(w);
}

static void side(nnp_jw_t *w, const char *key, const nnp_run_t *r, const nnp_rank_data_t *d)
{
    nnp__jw_key(w, key);
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "run");
    nnp__jw_str(w, r->id);
    nnp__jw_key(w, "rank");
    nnp__jw_int(w, d->rank);
    nnp__jw_key(w, "kind");
    nnp__jw_str(w, r->kind);
    nnp__jw_obj_end(w);
}

int nnp__api_compare(const nnp_api_ctx_t *c, nnp_jw_t *w)
{
    static const char *const type_cols[] = {"OP Type", "Core Type"};
    static const char *const type_names[] = {"type", "core"};
    static const char *const op_cols[] = {"Op Name", "OP Type", "Core Type"};
    static const char *const op_names[] = {"name", "type", "core"};
    nnp_run_t *rb = nnp__runs_find(c->rs, c->args->get(c->args->ctx, "b"));
    const nnp_rank_data_t *a, *b;
    long long rank_a, rank_b;
    int rc;

    if (!rb)
        return nnp__fail(NNP_ENOENT, "no such run b (GET /api/runs lists them)");
    rc = nnp__api_int_arg(c->args, "rank_a", -1, 0, INT32_MAX, &rank_a);
    if (rc == NNP_OK)
        rc = nnp__api_int_arg(c->args, "rank_b", -1, 0, INT32_MAX, &rank_b);
    if (rc != NNP_OK)
        return rc;
    if (nnp__runs_want(c->rs, rb) != NNP_RUN_READY)
        return nnp__fail(NNP_ESTATE, "run b ('%s') is being analysed; ask again", rb->id);
    a = nnp__run_rank(c->run, (int)rank_a);
    b = nnp__run_rank(rb, (int)rank_b);
    if (!a || !b)
        return nnp__fail(NNP_ENOENT, "no such rank in run %s", !a ? "a" : "b");
    nnp__jw_obj_begin(w);
    side(w, "a", c->run, a);
    side(w, "b", rb, b);
    rc = section(w, "op_types", &a->op_stat, &b->op_stat, type_cols, type_names,
                 NNP_ARRAY_LEN(type_cols));
    if (rc == NNP_OK)
        phases(w, a, b);
    if (rc == NNP_OK)
        rc = section(w, "ops", &a->op_detail, &b->op_detail, op_cols, op_names,
                     NNP_ARRAY_LEN(op_cols));
    nnp__jw_obj_end(w);
    return rc;
}
