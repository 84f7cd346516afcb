/* dynamic_shape.c - dynamic shape analysis (issue #4): finds the ops (by full name) whose
 * recorded input shapes differ across the analysed steps and writes, for them, the shapes
 * at each step and per-step average times per op and per op type, into
 * dynamic_shape_info_{rank}.json. Called by the analysis driver after the step trace;
 * writes nothing when no op changed shape. Format: docs/OUTPUTS.md "Dynamic shape". */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "util/json_writer.h"

/* Op instances listed in the file, the ones with the most time: the file grows with
 * listed ops x steps, and a chart of more than ~100 lines per step is unreadable anyway.
 * n_dynamic_ops still counts them all. */
#define MAX_LISTED_OPS 100
/* Times in us with 3 decimals, every ns kept (as op_statistic, op_stats.c). */
#define NS_PER_US   1000u
#define US_DECIMALS 3
/* Room for a number: 20 digits, point, decimals, NUL. */
#define NUM_BUF 48

/* ---- collection ---- */

/* One op execution inside an analysed step. seq (the op's row, rows being in start order)
 * tells which execution of a step came first. */
typedef struct item {
    uint32_t name, type, shapes;
    uint64_t step_id;
    int64_t dur_ns;
    size_t seq;
} item_t;

/* An op whose shapes changed: its executions are items[first .. first + count). */
typedef struct dyn_op {
    uint32_t name, type;
    const char *name_s;
    size_t n_distinct;
    int64_t total_ns;
    size_t first, count;
} dyn_op_t;

/* The executions of one op in one step: items[start, start + count). */
typedef struct run_ref {
    size_t start, count;
} run_ref_t;

typedef struct ctx {
    const nnp_model_t *m;
    item_t *items;
    size_t n_items;
    dyn_op_t *ops;
    size_t n_ops, n_listed;
    uint32_t *scratch; /* shapes ids of one op, for counting the distinct ones */
    run_ref_t *refs;   /* one op's reference steps, one per execution count */
} ctx_t;

static void ctx_fini(ctx_t *x)
{
    nnp__free(x->items);
    nnp__free(x->ops);
    nnp__free(x->scratch);
    nnp__free(x->refs);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_u64(uint64_t a, uint64_t b)
{
    return (a > b) - (a < b);
}

/* Name, then step, then execution order: each op is one run, each step one sub-run. */
static int cmp_item_name(const void *a, const void *b)
{
    const item_t *x = a, *y = b;
    int d = cmp_u64(x->name, y->name);
    if (d == 0)
        d = cmp_u64(x->step_id, y->step_id);
    return d ? d : cmp_u64(x->seq, y->seq);
}

/* Type, then step: each (type, step) is one run. */
static int cmp_item_type(const void *a, const void *b)
{
    const item_t *x = a, *y = b;
    int d = cmp_u64(x->type, y->type);
    if (d == 0)
        d = cmp_u64(x->step_id, y->step_id);
    return d ? d : cmp_u64(x->seq, y->seq);
}

/* Most time first, ties by name: which ops are listed when there are too many. */
static int cmp_dyn_time(const void *a, const void *b)
{
    const dyn_op_t *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    return strcmp(x->name_s, y->name_s);
}

static int cmp_dyn_name(const void *a, const void *b)
{
    return strcmp(((const dyn_op_t *)a)->name_s, ((const dyn_op_t *)b)->name_s);
}

/* Whether op row i counts: it starts in an analysed step (*r) and has a known time. */
static bool counted(const nnp_actx_t *c, const nnp_kindex_t *ki, const nnp_step_spans_t *sp,
                    size_t i, size_t *hint, const nnp_step_row_t **r, int64_t *dur)
{
    size_t k = nnp__step_spans_find_near(sp, c->m->ops.start_ns[i], hint);
    *r = k == SIZE_MAX ? NULL : &sp->rows[k];
    return *r && nnp__op_compute_time(c->m, ki, i, dur);
}

/* dyn[] flags per string id. */
enum { DYN_NAME = 1, DYN_TYPE = 2 };

/* Pass 1: marks in dyn (one byte per string id) the op names with two distinct recorded
 * shapes among their counted executions (DYN_NAME). Ops without shapes cost one test each, so a run
 * that records no shapes (most) costs no step lookup and no memory per op. Returns how
 * many names it marked. */
static size_t mark_dynamic(const nnp_actx_t *c, const nnp_kindex_t *ki, const nnp_step_spans_t *sp,
                           uint32_t *first, uint8_t *dyn)
{
    const nnp_ops_t *o = &c->m->ops;
    size_t n = 0, hint = 0;
    for (size_t i = 0; i < o->t.n; i++) {
        const nnp_step_row_t *r;
        uint32_t name = o->name[i];
        int64_t dur;
        if (!o->shapes[i] || name >= c->m->n_strs || (dyn[name] & DYN_NAME) ||
            (first[name] == o->shapes[i]) || !counted(c, ki, sp, i, &hint, &r, &dur))
            continue;
        if (first[name] == 0) {
            first[name] = o->shapes[i];
        } else {
            dyn[name] |= DYN_NAME;
            n++;
        }
    }
    return n;
}

/* Marks the types of the dynamic ops (DYN_TYPE): their per-type averages take every op of
 * the type. Returns whether op row i is needed (its name or its type is marked). */
static bool wanted(const nnp_model_t *m, const uint8_t *dyn, size_t i)
{
    uint32_t name = m->ops.name[i], type = m->ops.type[i];
    return (name < m->n_strs && (dyn[name] & DYN_NAME)) ||
           (type < m->n_strs && (dyn[type] & DYN_TYPE));
}

/* Every execution of a dynamic op (pass 1), or of an op of a dynamic op's type, that
 * starts in an analysed step and has a known time. */
static int collect(const nnp_actx_t *c, const nnp_step_trace_t *st, ctx_t *x)
{
    const nnp_ops_t *o = &c->m->ops;
    size_t n_strs = c->m->n_strs ? c->m->n_strs : 1, n_items = 0, hint = 0;
    uint32_t *first = nnp__calloc(n_strs, sizeof(uint32_t));
    uint8_t *dyn = nnp__calloc(n_strs, 1);
    nnp_kindex_t ki;
    nnp_step_spans_t sp;
    int rc = first && dyn ? nnp__kindex_build(c->m, &ki)
                          : nnp__fail(NNP_ENOMEM, "out of memory in dynamic shape analysis");
    if (rc != NNP_OK) {
        nnp__free(first);
        nnp__free(dyn);
        return rc;
    }
    rc = nnp__step_spans_init(st, &sp);
    if (rc != NNP_OK)
        memset(&sp, 0, sizeof(sp));
    if (rc == NNP_OK && mark_dynamic(c, &ki, &sp, first, dyn) > 0) {
        for (size_t i = 0; i < o->t.n; i++)
            if (o->name[i] < c->m->n_strs && (dyn[o->name[i]] & DYN_NAME) &&
                o->type[i] < c->m->n_strs)
                dyn[o->type[i]] |= DYN_TYPE;
        for (size_t i = 0; i < o->t.n; i++)
            n_items += wanted(c->m, dyn, i);
        x->items = nnp__malloc(n_items * sizeof(item_t));
        x->scratch = nnp__malloc(n_items * sizeof(uint32_t));
        x->refs = nnp__malloc(n_items * sizeof(run_ref_t));
        if (!x->items || !x->scratch || !x->refs)
            rc = nnp__fail(NNP_ENOMEM, "out of memory in dynamic shape analysis");
        for (size_t i = 0; rc == NNP_OK && i < o->t.n; i++) {
            const nnp_step_row_t *r;
            int64_t dur;
            if (wanted(c->m, dyn, i) && counted(c, &ki, &sp, i, &hint, &r, &dur))
                x->items[x->n_items++] =
                    (item_t){o->name[i], o->type[i], o->shapes[i], r->step_id, dur, i};
        }
    }
    nnp__kindex_fini(&ki);
    nnp__step_spans_fini(&sp);
    nnp__free(first);
    nnp__free(dyn);
    return rc;
}

/* Whether two steps' runs of one op's executions, of the same length, differ in shape at
 * some position. Shapes 0 (not recorded) compare with nothing. */
static bool runs_differ(const item_t *v, run_ref_t a, run_ref_t b)
{
    for (size_t k = 0; k < a.count; k++) {
        uint32_t x = v[a.start + k].shapes, y = v[b.start + k].shapes;
        if (x && y && x != y)
            return true;
    }
    return false;
}

/* Whether the executions of one op, items[i, j) sorted by step then order, change shape
 * from step to step. An op name runs once per step in a graph (MindSpore), but several
 * times in eager frameworks (PyTorch's "aten::conv2d" in every layer): different shapes
 * within a step are layers, not dynamic shapes. So the k-th execution of a step is
 * compared with the k-th of the first step that ran the op as many times; steps that ran
 * it a different number of times took another code path (a logging step, a first
 * iteration), whose calls do not line up, and are not compared with each other.
 * refs: room for one entry per step. */
static bool changes_between_steps(const item_t *v, size_t i, size_t j, run_ref_t *refs)
{
    size_t n_refs = 0;
    for (size_t a = i, b; a < j; a = b) {
        size_t r = 0;
        for (b = a; b < j && v[b].step_id == v[a].step_id; b++)
            ;
        run_ref_t run = {a, b - a};
        while (r < n_refs && refs[r].count != run.count)
            r++;
        if (r == n_refs)
            refs[n_refs++] = run;
        else if (runs_differ(v, refs[r], run))
            return true;
    }
    return false;
}

/* Finds the ops whose recorded shapes change between steps; keeps (and orders by name)
 * the MAX_LISTED_OPS of them with the most time. Shapes 0 (not recorded) are no shape: an
 * op recorded in some steps only is not dynamic for that. */
static int find_dynamic(ctx_t *x)
{
    qsort(x->items, x->n_items, sizeof(item_t), cmp_item_name);
    for (size_t i = 0, j; i < x->n_items; i = j) {
        size_t n_shapes = 0, n_distinct = 0;
        int64_t total = 0;
        for (j = i; j < x->n_items && x->items[j].name == x->items[i].name; j++) {
            total += x->items[j].dur_ns;
            if (x->items[j].shapes)
                x->scratch[n_shapes++] = x->items[j].shapes;
        }
        qsort(x->scratch, n_shapes, sizeof(uint32_t), cmp_u32);
        for (size_t k = 0; k < n_shapes; k++)
            n_distinct += k == 0 || x->scratch[k] != x->scratch[k - 1];
        if (n_distinct < 2 || !changes_between_steps(x->items, i, j, x->refs))
            continue;
        if (!x->ops) {
            /* At most one entry per op name, so n_items entries always suffice. */
            x->ops = nnp__malloc(x->n_items * sizeof(dyn_op_t));
            if (!x->ops)
                return nnp__fail(NNP_ENOMEM, "out of memory in dynamic shape analysis");
        }
        x->ops[x->n_ops++] = (dyn_op_t){x->items[i].name,
                                        x->items[i].type,
                                        nnp__model_str(x->m, x->items[i].name),
                                        n_distinct,
                                        total,
                                        i,
                                        j - i};
    }
    x->n_listed = x->n_ops;
    if (x->n_ops == 0)
        return NNP_OK; /* x->ops is NULL: qsort must not see it */
    if (x->n_listed > MAX_LISTED_OPS) {
        qsort(x->ops, x->n_ops, sizeof(dyn_op_t), cmp_dyn_time);
        x->n_listed = MAX_LISTED_OPS;
    }
    qsort(x->ops, x->n_listed, sizeof(dyn_op_t), cmp_dyn_name);
    return NNP_OK;
}

/* ---- writing ---- */

static void jw_step_key(nnp_jw_t *w, uint64_t step_id)
{
    char b[NUM_BUF];
    snprintf(b, sizeof(b), "%" PRIu64, step_id);
    nnp__jw_key(w, b);
}

/* Mean time in us, rounded half up to the ns (op statistics' Avg rule). */
static void jw_avg_us(nnp_jw_t *w, int64_t total_ns, uint64_t count)
{
    char b[NUM_BUF];
    uint64_t avg = count ? ((uint64_t)total_ns + count / 2) / count : 0;
    snprintf(b, sizeof(b), "%" PRIu64 ".%0*" PRIu64, avg / NS_PER_US, US_DECIMALS, avg % NS_PER_US);
    nnp__jw_raw(w, b);
}

/* {step: average time} over items[lo, hi), which are sorted by step. */
static void jw_avg_by_step(nnp_jw_t *w, const item_t *v, size_t lo, size_t hi)
{
    nnp__jw_obj_begin(w);
    for (size_t i = lo, j; i < hi; i = j) {
        int64_t total = 0;
        for (j = i; j < hi && v[j].step_id == v[i].step_id; j++)
            total += v[j].dur_ns;
        jw_step_key(w, v[i].step_id);
        jw_avg_us(w, total, j - i);
    }
    nnp__jw_obj_end(w);
}

/* {step: shapes of the step's first execution with recorded shapes}. */
static void jw_shapes_by_step(nnp_jw_t *w, const ctx_t *x, const dyn_op_t *d)
{
    uint64_t last = 0;
    bool any = false;
    nnp__jw_obj_begin(w);
    for (size_t i = d->first; i < d->first + d->count; i++) {
        const item_t *it = &x->items[i];
        if (!it->shapes || (any && it->step_id == last))
            continue;
        jw_step_key(w, it->step_id);
        nnp__jw_str(w, nnp__model_str(x->m, it->shapes));
        last = it->step_id;
        any = true;
    }
    nnp__jw_obj_end(w);
}

static void write_ops(nnp_jw_t *w, const ctx_t *x)
{
    nnp__jw_key(w, "dynamic_ops");
    nnp__jw_arr_begin(w);
    for (size_t k = 0; k < x->n_listed; k++) {
        const dyn_op_t *d = &x->ops[k];
        nnp__jw_obj_begin(w);
        nnp__jw_key(w, "op_name");
        nnp__jw_str(w, d->name_s);
        nnp__jw_key(w, "op_type");
        nnp__jw_str(w, nnp__model_str(x->m, d->type));
        nnp__jw_key(w, "n_distinct_shapes");
        nnp__jw_uint(w, d->n_distinct);
        nnp__jw_key(w, "shapes_by_step");
        jw_shapes_by_step(w, x, d);
        nnp__jw_obj_end(w);
    }
    nnp__jw_arr_end(w);
    nnp__jw_key(w, "op_avg_us_by_step");
    nnp__jw_obj_begin(w);
    for (size_t k = 0; k < x->n_listed; k++) {
        nnp__jw_key(w, x->ops[k].name_s);
        jw_avg_by_step(w, x->items, x->ops[k].first, x->ops[k].first + x->ops[k].count);
    }
    nnp__jw_obj_end(w);
}

/* Types of the listed ops, each once (ordered by id; write_types orders them by name). */
static size_t listed_types(const ctx_t *x, uint32_t *types)
{
    size_t u = 0;
    for (size_t k = 0; k < x->n_listed; k++)
        types[k] = x->ops[k].type;
    qsort(types, x->n_listed, sizeof(uint32_t), cmp_u32);
    for (size_t k = 0; k < x->n_listed; k++)
        if (u == 0 || types[u - 1] != types[k])
            types[u++] = types[k];
    return u;
}

/* {type: {step: avg}} for the types of the listed ops, over every execution of the type
 * (not only the dynamic instances): the cost of the type in each step. Re-sorts items. */
static void write_types(nnp_jw_t *w, ctx_t *x)
{
    uint32_t types[MAX_LISTED_OPS] = {0};
    size_t n_types = listed_types(x, types);
    /* Order the keys by type name: a small insertion sort over at most MAX_LISTED_OPS. */
    for (size_t i = 1; i < n_types; i++) {
        uint32_t t = types[i];
        size_t j = i;
        for (; j > 0 && strcmp(nnp__model_str(x->m, types[j - 1]), nnp__model_str(x->m, t)) > 0;
             j--)
            types[j] = types[j - 1];
        types[j] = t;
    }
    qsort(x->items, x->n_items, sizeof(item_t), cmp_item_type);
    nnp__jw_key(w, "op_type_avg_us_by_step");
    nnp__jw_obj_begin(w);
    for (size_t k = 0; k < n_types; k++) {
        size_t lo = 0, hi = x->n_items, end;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (x->items[mid].type < types[k])
                lo = mid + 1;
            else
                hi = mid;
        }
        for (end = lo; end < x->n_items && x->items[end].type == types[k]; end++)
            ;
        nnp__jw_key(w, nnp__model_str(x->m, types[k]));
        jw_avg_by_step(w, x->items, lo, end);
    }
    nnp__jw_obj_end(w);
}

static int write_file(const nnp_actx_t *c, ctx_t *x)
{
    nnp_outfile_t f;
    nnp_jw_t w;
    char name[NNP_PATH_MAX];
    int rc;
    snprintf(name, sizeof(name), "dynamic_shape_info_%d.json", c->rank);
    rc = nnp__out_open(&f, c->out_dir, name);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__jw_init(&w, f.fd, c->pretty, 0);
    if (rc == NNP_OK) {
        nnp__jw_obj_begin(&w);
        nnp__jw_key(&w, "n_dynamic_ops");
        nnp__jw_uint(&w, x->n_ops);
        nnp__jw_key(&w, "n_listed_ops");
        nnp__jw_uint(&w, x->n_listed);
        write_ops(&w, x);
        write_types(&w, x);
        nnp__jw_obj_end(&w);
        nnp__jw_line_end(&w);
        rc = nnp__jw_flush(&w);
    }
    nnp__jw_fini(&w);
    return nnp__out_commit(&f, rc);
}

int nnp__dynamic_shape_write(const nnp_actx_t *c, const nnp_step_trace_t *st, nnp_findings_t *f)
{
    ctx_t x;
    int rc = NNP_OK;
    memset(&x, 0, sizeof(x));
    x.m = c->m;
    f->n_dynamic_ops = 0;
    /* Shapes can only change "between steps" when there are steps and ops. */
    if (st && st->n && c->m->ops.t.n) {
        rc = collect(c, st, &x);
        if (rc == NNP_OK && x.n_items)
            rc = find_dynamic(&x);
    }
    /* A re-run without dynamic ops removes an earlier run's file. */
    if (rc == NNP_OK && x.n_ops == 0)
        nnp__output_remove_stale(c, "dynamic_shape_info_", ".json");
    if (rc == NNP_OK && x.n_ops)
        rc = write_file(c, &x);
    if (rc == NNP_OK)
        f->n_dynamic_ops = x.n_ops;
    ctx_fini(&x);
    return rc;
}
