/* flops.c - FLOPs analysis (issue #4): per op full name MFLOPs and GFLOPS, matrix ("cube")
 * and vector apart, in MindSpore 2.x's flops_{rank}.txt, and per-step and whole-run totals
 * with the achieved fraction of a user-given peak in flops_summary_{rank}.json. Called by
 * the analysis driver after the step trace; fills the FLOPs part of the findings. Writes
 * nothing when no counted op has FLOPs. Rules: docs/OUTPUTS.md "FLOPs" (formats.md 1.7). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "util/csv_writer.h"
#include "util/json_writer.h"

/* MindSpore 2.x writes MFLOPs = FLOPs x 1e-6 (formats.md 1.7); 6 decimals keep every FLOP
 * of the integer count, so the column is exact. */
#define FLOPS_PER_MFLOP 1000000u
#define MFLOP_DECIMALS  6
/* GFLOPS = FLOPs / duration in ns (1 FLOP/ns is 1e9 FLOP/s): 3 decimals resolve 1 MFLOP/s,
 * finer than any op-level timing supports. */
#define GFLOPS_DECIMALS 3
/* Times in the summary: us with 3 decimals, every ns kept (as op_statistic, op_stats.c). */
#define NS_PER_US   1000
#define US_DECIMALS 3
#define NS_PER_S    1e9
/* Whole-run rates are written as whole FLOP/s; the fraction of the peak with 6 decimals
 * (0.0001 % resolution). */
#define RATE_DECIMALS     0
#define FRACTION_DECIMALS 6
/* Room for a number: sign, 20 integer digits, point, decimals, NUL. */
#define NUM_BUF 64
/* First room for per-name groups; names are few (a model's ops), executions millions. */
#define GROUPS_INITIAL 64

/* ---- the time of one op execution ---- */

/* ---- sums ---- */

/* FLOPs of one group (an op name, a step, the whole run). Counts saturate at UINT64_MAX
 * rather than wrap: 1.8e19 FLOPs is hours of an exaFLOP machine, but a wrapped total
 * would be silently wrong. */
typedef struct sums {
    uint64_t matrix, vector, n_ops;
    int64_t time_ns;
} sums_t;

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static void sums_add(sums_t *s, uint64_t matrix, uint64_t vector, int64_t dur)
{
    s->matrix = sat_add(s->matrix, matrix);
    s->vector = sat_add(s->vector, vector);
    s->n_ops++;
    s->time_ns += dur;
}

/* One flops_{rank}.txt row: an op full name over all its counted executions. */
typedef struct group {
    uint32_t name;
    const char *name_s;
    sums_t s;
} group_t;

/* Most FLOPs first (what is worth optimising), ties by name so the order is stable. */
static int cmp_group(const void *a, const void *b)
{
    const group_t *x = a, *y = b;
    uint64_t tx = sat_add(x->s.matrix, x->s.vector), ty = sat_add(y->s.matrix, y->s.vector);
    if (tx != ty)
        return tx > ty ? -1 : 1;
    return strcmp(x->name_s, y->name_s);
}

/* Everything the writers need. */
typedef struct result {
    size_t n_items;     /* counted executions */
    uint32_t *group_of; /* per string id: its group + 1, 0 = none yet */
    group_t *groups;
    size_t n_groups, groups_cap;
    sums_t total;
    sums_t *steps; /* parallel to the step trace rows */
    size_t n_steps;
    const nnp_step_row_t *step_rows;
} result_t;

static void result_fini(result_t *r)
{
    nnp__free(r->group_of);
    nnp__free(r->groups);
    nnp__free(r->steps);
}

/* Adds one execution to its op name's group (made on its first execution). */
static int add_to_group(const nnp_model_t *m, result_t *r, uint32_t name, uint64_t matrix,
                        uint64_t vector, int64_t dur)
{
    uint32_t g = name < m->n_strs ? r->group_of[name] : 0;
    if (g == 0) {
        if (r->n_groups == r->groups_cap) {
            size_t nc = r->groups_cap ? r->groups_cap * 2 : GROUPS_INITIAL;
            group_t *ng = nnp__realloc(r->groups, nc * sizeof(group_t));
            if (!ng)
                return nnp__fail(NNP_ENOMEM, "out of memory in FLOPs analysis");
            r->groups = ng;
            r->groups_cap = nc;
        }
        memset(&r->groups[r->n_groups], 0, sizeof(group_t));
        r->groups[r->n_groups].name = name;
        r->groups[r->n_groups].name_s = nnp__model_str(m, name);
        g = (uint32_t)++r->n_groups;
        if (name < m->n_strs)
            r->group_of[name] = g;
    }
    sums_add(&r->groups[g - 1].s, matrix, vector, dur);
    return NNP_OK;
}

/* Collects every counted op execution with FLOPs into r, grouped by op full name as it
 * goes (no list of executions: memory is per name): under --steps only those that start
 * in an analysed step (as op statistics count). */
static int collect(const nnp_actx_t *c, const nnp_step_trace_t *st, result_t *r)
{
    const nnp_model_t *m = c->m;
    const nnp_ops_t *o = &m->ops;
    nnp_kindex_t ki;
    nnp_step_spans_t sp;
    size_t hint = 0;
    int rc;
    memset(r, 0, sizeof(*r));
    if (!o->flops_matrix || o->t.n == 0)
        return NNP_OK;
    rc = nnp__kindex_build(m, &ki);
    if (rc == NNP_OK)
        rc = nnp__step_spans_init(st, &sp);
    else
        memset(&sp, 0, sizeof(sp));
    if (rc == NNP_OK && sp.n) {
        r->steps = nnp__calloc(sp.n, sizeof(sums_t));
        if (!r->steps)
            rc = nnp__fail(NNP_ENOMEM, "out of memory in FLOPs analysis");
        r->n_steps = sp.n;
        r->step_rows = sp.rows;
    }
    if (rc == NNP_OK) {
        r->group_of = nnp__calloc(m->n_strs ? m->n_strs : 1, sizeof(uint32_t));
        if (!r->group_of)
            rc = nnp__fail(NNP_ENOMEM, "out of memory in FLOPs analysis");
    }
    for (size_t i = 0; rc == NNP_OK && i < o->t.n; i++) {
        size_t k;
        int64_t dur;
        if (o->flops_matrix[i] == 0 && o->flops_vector[i] == 0)
            continue;
        k = nnp__step_spans_find_near(&sp, o->start_ns[i], &hint);
        if ((c->has_steps && k == SIZE_MAX) || !nnp__op_compute_time(m, &ki, i, &dur))
            continue;
        r->n_items++;
        rc = add_to_group(m, r, o->name[i], o->flops_matrix[i], o->flops_vector[i], dur);
        sums_add(&r->total, o->flops_matrix[i], o->flops_vector[i], dur);
        if (k != SIZE_MAX)
            sums_add(&r->steps[k], o->flops_matrix[i], o->flops_vector[i], dur);
    }
    nnp__kindex_fini(&ki);
    nnp__step_spans_fini(&sp);
    return rc;
}

/* Puts the groups in output order. */
static int group_by_name(const nnp_model_t *m, result_t *r)
{
    (void)m;
    if (r->n_groups > 1)
        qsort(r->groups, r->n_groups, sizeof(group_t), cmp_group);
    return NNP_OK;
}

/* ---- writing ---- */

/* An integer count v / unit with `decimals` digits (unit = 10^decimals): exact. */
static const char *fmt_scaled(char *b, size_t cap, uint64_t v, uint64_t unit, int decimals)
{
    /* unit is 10^decimals: the same digits from integers, without printf (a row per
     * step), for every count an int64 holds. */
    if (v <= INT64_MAX && cap >= NNP_FMT_NUM_MAX) {
        nnp__fmt_fixed(b, (int64_t)v, unit, decimals);
        return b;
    }
    snprintf(b, cap, "%llu.%0*llu", (unsigned long long)(v / unit), decimals,
             (unsigned long long)(v % unit));
    return b;
}

static const char *fmt_fixed(char *b, size_t cap, double v, int decimals)
{
    snprintf(b, cap, "%.*f", decimals, v);
    return b;
}

/* GFLOPS of one row: FLOPs / ns, 0 when the time is 0 (MindSpore 2.x's rule, 1.7). */
static double gflops(uint64_t flops, int64_t ns)
{
    return ns > 0 ? (double)flops / (double)ns : 0.0;
}

static int write_txt(const nnp_actx_t *c, const result_t *r)
{
    /* MindSpore 2.x's header, verbatim (formats.md 1.7, ascend_flops_generator.py). */
    static const char *const header[] = {"op_full_name",        "MFLOPs(10^6 cube)",
                                         "GFLOPS(10^9 cube)",   "MFLOPs(10^6 vector)",
                                         "GFLOPS(10^9 vector)", NULL};
    nnp_outfile_t f;
    nnp_csv_t w;
    char name[NNP_PATH_MAX], b[NUM_BUF];
    int rc;
    snprintf(name, sizeof(name), "flops_%d.txt", c->rank);
    rc = nnp__out_open(&f, c->out_dir, name);
    if (rc != NNP_OK)
        return rc;
    if (nnp__csv_init(&w, f.fd) == NNP_OK) {
        nnp__csv_header(&w, header);
        for (size_t i = 0; i < r->n_groups; i++) {
            const sums_t *s = &r->groups[i].s;
            nnp__csv_str(&w, r->groups[i].name_s);
            nnp__csv_str(&w, fmt_scaled(b, sizeof(b), s->matrix, FLOPS_PER_MFLOP, MFLOP_DECIMALS));
            nnp__csv_str(&w,
                         fmt_fixed(b, sizeof(b), gflops(s->matrix, s->time_ns), GFLOPS_DECIMALS));
            nnp__csv_str(&w, fmt_scaled(b, sizeof(b), s->vector, FLOPS_PER_MFLOP, MFLOP_DECIMALS));
            nnp__csv_str(&w,
                         fmt_fixed(b, sizeof(b), gflops(s->vector, s->time_ns), GFLOPS_DECIMALS));
            nnp__csv_end_row(&w);
        }
    }
    /* The writer keeps its first error, the failed init's included. */
    return nnp__out_commit(&f, nnp__csv_fini(&w));
}

/* FLOP/s of FLOPs over ns; NAN when no time was measured (nothing to divide by). */
static double rate(uint64_t flops, int64_t ns)
{
    return ns > 0 ? (double)flops * NS_PER_S / (double)ns : NAN;
}

/* Doubles below this are exact in their units: their fraction is v - floor(v), exactly. */
#define EXACT_WHOLE_LIMIT 9007199254740992.0 /* 2^53 */

/* A rate as whole FLOP/s, or null when unknown. Below 2^53 the digits come from integers
 * (a row per step), rounded as printf's "%.0f" rounds: to nearest, ties to even. */
static void jw_rate(nnp_jw_t *w, double v)
{
    char b[NUM_BUF];
    if (RATE_DECIMALS == 0 && v >= 0 && v < EXACT_WHOLE_LIMIT && !signbit(v)) {
        uint64_t k = (uint64_t)v;
        double frac = v - (double)k;
        if (frac > 0.5 || (frac == 0.5 && (k & 1)))
            k++;
        b[nnp__fmt_u64(b, k)] = '\0';
        nnp__jw_raw(w, b);
    } else if (isfinite(v)) {
        nnp__jw_raw(w, fmt_fixed(b, sizeof(b), v, RATE_DECIMALS));
    } else {
        nnp__jw_null(w);
    }
}

/* The FLOPs, time and achieved rate of a group, shared by the run and each step. */
static void jw_sums(nnp_jw_t *w, const sums_t *s)
{
    char b[NUM_BUF];
    nnp__jw_key(w, "n_ops");
    nnp__jw_uint(w, s->n_ops);
    nnp__jw_key(w, "matrix_flops");
    nnp__jw_uint(w, s->matrix);
    nnp__jw_key(w, "vector_flops");
    nnp__jw_uint(w, s->vector);
    nnp__jw_key(w, "total_flops");
    nnp__jw_uint(w, sat_add(s->matrix, s->vector));
    nnp__jw_key(w, "compute_time_us");
    nnp__jw_raw(w, fmt_scaled(b, sizeof(b), (uint64_t)s->time_ns, NS_PER_US, US_DECIMALS));
    nnp__jw_key(w, "achieved_flops_per_s");
    jw_rate(w, rate(sat_add(s->matrix, s->vector), s->time_ns));
}

static int write_summary(const nnp_actx_t *c, const result_t *r, double achieved, double peak)
{
    nnp_outfile_t f;
    nnp_jw_t w;
    char name[NNP_PATH_MAX], b[NUM_BUF];
    int rc;
    snprintf(name, sizeof(name), "flops_summary_%d.json", c->rank);
    rc = nnp__out_open(&f, c->out_dir, name);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__jw_init(&w, f.fd, c->pretty, 0);
    if (rc == NNP_OK) {
        nnp__jw_obj_begin(&w);
        jw_sums(&w, &r->total);
        nnp__jw_key(&w, "matrix_flops_per_s");
        jw_rate(&w, rate(r->total.matrix, r->total.time_ns));
        nnp__jw_key(&w, "vector_flops_per_s");
        jw_rate(&w, rate(r->total.vector, r->total.time_ns));
        nnp__jw_key(&w, "peak_flops_per_s");
        jw_rate(&w, peak);
        nnp__jw_key(&w, "achieved_fraction");
        if (isfinite(peak) && isfinite(achieved))
            nnp__jw_raw(&w, fmt_fixed(b, sizeof(b), achieved / peak, FRACTION_DECIMALS));
        else
            nnp__jw_null(&w);
        nnp__jw_key(&w, "steps");
        nnp__jw_arr_begin(&w);
        for (size_t k = 0; k < r->n_steps; k++) {
            nnp__jw_obj_begin(&w);
            nnp__jw_key(&w, "step_id");
            nnp__jw_uint(&w, r->step_rows[k].step_id);
            jw_sums(&w, &r->steps[k]);
            nnp__jw_obj_end(&w);
        }
        nnp__jw_arr_end(&w);
        nnp__jw_obj_end(&w);
        nnp__jw_line_end(&w);
        rc = nnp__jw_flush(&w);
    }
    nnp__jw_fini(&w);
    return nnp__out_commit(&f, rc);
}

/* A re-run that finds no FLOPs removes the files of an earlier run, so the directory never
 * shows FLOPs the current analysis did not produce. */
static void remove_stale(const nnp_actx_t *c)
{
    nnp__output_remove_stale(c, "flops_", ".txt");
    nnp__output_remove_stale(c, "flops_summary_", ".json");
}

int nnp__flops_write(const nnp_actx_t *c, const nnp_step_trace_t *st, nnp_findings_t *f)
{
    result_t r;
    double peak = c->peak_flops > 0 && isfinite(c->peak_flops) ? c->peak_flops : NAN;
    double achieved;
    int rc;
    f->peak_flops_per_s = peak;
    if (c->has_steps && !st)
        return nnp__fail(NNP_EINVAL, "FLOPs analysis with --steps needs the step trace");
    rc = collect(c, st, &r);
    if (rc == NNP_OK)
        rc = group_by_name(c->m, &r);
    if (rc == NNP_OK && r.n_items == 0)
        remove_stale(c);
    if (rc != NNP_OK || r.n_items == 0) {
        result_fini(&r);
        return rc;
    }
    /* The summary's rate is total FLOPs over the total time of the ops that did them:
     * FLOP/s, the duration-weighted mean of the per-op rates. MindSpore 2.x divides summed
     * per-op rates by summed time instead (formats.md 1.7), which is not a rate. */
    achieved = rate(sat_add(r.total.matrix, r.total.vector), r.total.time_ns);
    rc = write_txt(c, &r);
    if (rc == NNP_OK)
        rc = write_summary(c, &r, achieved, peak);
    if (rc == NNP_OK)
        f->achieved_flops_per_s = achieved;
    result_fini(&r);
    return rc;
}
