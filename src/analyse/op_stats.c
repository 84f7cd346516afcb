/* op_stats.c - operator statistics: per op type (msprof op_statistic) and per full op name
 * (op_detail) over host ops and device kernels, every kernel with its step and launching
 * op (kernel_details), the top-20 types for the UI, and nnp__op_query (op_stats.h).
 * Called by the analysis driver after the step trace, whose analysed steps bound what is
 * counted under --steps. Columns and rules: docs/OUTPUTS.md, "Operator statistics". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "analyse/op_stats.h"
#include "util/csv_writer.h"
#include "util/json_writer.h"

/* msprof writes us with 3 decimals (op_statistic "Total Time(us)"): every ns is kept. */
#define NS_PER_US      1000
#define US_DECIMALS    3
#define RATIO_DECIMALS 2
#define PERCENT        100.0
/* MindInsight's op type chart shows the 20 types with the most time (seed 001). */
#define TOP_N 20
/* Core types: MindSpore calls host CPU ops HOSTCPU (seed 001), msprof spells core types
 * in capitals with "_" (AI_CORE); device tasks without a type are plain kernels. */
#define CORE_HOST_NAME   "HOST_CPU"
#define CORE_KERNEL_NAME "KERNEL"
/* Core keys that are not model string ids (the model is read-only here). */
#define CORE_HOST   UINT32_MAX
#define CORE_KERNEL (UINT32_MAX - 1)
/* No core key yet (kernel_details' cache of the last one). */
#define CORE_NONE (UINT32_MAX - 2)
/* Room for a number: sign, 19 integer digits, point, decimals, NUL. */
#define NUM_BUF 48
/* MindSpore Profiler.op_analyse() text for an empty op_name (seed 000), kept verbatim. */
#define OP_QUERY_EMPTY_MSG                                                                         \
    "For 'Profiler.op_analyse()', the parameter op_name cannot be \"\", '' or []."

/* Host and device rows are ratioed separately: a host op and the kernel it launched are
 * the same work seen twice, so one denominator for both would halve every ratio. */
enum { SIDE_HOST, SIDE_DEVICE, SIDE_COUNT };

/* The analysed steps (lookup.c), plus whether --steps restricts what is counted. */
typedef struct spans {
    nnp_step_spans_t s;
    bool filter; /* --steps: count only what starts inside an analysed step */
} spans_t;

static int spans_init(const nnp_actx_t *c, const nnp_step_trace_t *st, spans_t *s)
{
    memset(s, 0, sizeof(*s));
    s->filter = c->has_steps;
    if (s->filter && !st)
        return nnp__fail(NNP_EINVAL, "op statistics with --steps need the step trace");
    return nnp__step_spans_init(st, &s->s);
}

/* The step an op starting at t belongs to, NULL when none. *hint: see
 * nnp__step_spans_find_near (rows are visited in time order). */
static const nnp_step_row_t *spans_find(const spans_t *s, int64_t t, size_t *hint)
{
    size_t k = nnp__step_spans_find_near(&s->s, t, hint);
    return k == SIZE_MAX ? NULL : &s->s.rows[k];
}

/* Whether an op starting at t is counted. */
static bool spans_keep(const spans_t *s, int64_t t, size_t *hint)
{
    return !s->filter || spans_find(s, t, hint) != NULL;
}

/* What every analysis of this file needs, built once. */
typedef struct ctx {
    const nnp_model_t *m;
    nnp_op_index_t corr;
    nnp_launch_index_t launches; /* a kernel's step is its launch's (nnp__kernel_step) */
    spans_t spans;
    uint32_t kernel_core;    /* core key of kernels without a type */
    nnp_csv_quotes_t quotes; /* of the model's strings, for kernel_details */
} ctx_t;

static int ctx_init(const nnp_actx_t *c, const nnp_step_trace_t *st, ctx_t *x)
{
    int rc;
    memset(x, 0, sizeof(*x));
    x->m = c->m;
    /* An importer may have interned "KERNEL" already: reuse its id so untyped kernels and
     * "KERNEL" ones form one group. */
    x->kernel_core = nnp__model_find(c->m, CORE_KERNEL_NAME);
    if (x->kernel_core == 0)
        x->kernel_core = CORE_KERNEL;
    rc = nnp__op_index_build(c->m, &x->corr);
    if (rc == NNP_OK)
        rc = nnp__launch_index_build(c->m, &x->launches);
    if (rc == NNP_OK)
        rc = spans_init(c, st, &x->spans);
    if (rc == NNP_OK)
        rc = nnp__csv_quotes_init(&x->quotes, c->m->n_strs);
    return rc;
}

/* The step row of kernel i (by its launch when known), NULL when none. */
static const nnp_step_row_t *kernel_step(const ctx_t *x, size_t i)
{
    size_t k = nnp__kernel_step(&x->spans.s, x->m, &x->launches, i);
    return k == SIZE_MAX ? NULL : &x->spans.s.rows[k];
}

static bool kernel_keep(const ctx_t *x, size_t i)
{
    return !x->spans.filter || kernel_step(x, i) != NULL;
}

static void ctx_fini(ctx_t *x)
{
    nnp__op_index_fini(&x->corr);
    nnp__launch_index_fini(&x->launches);
    nnp__step_spans_fini(&x->spans.s);
    nnp__csv_quotes_fini(&x->quotes);
}

/* The Core Type text of a core key. */
static const char *core_str(const nnp_model_t *m, uint32_t core)
{
    if (core == CORE_HOST)
        return CORE_HOST_NAME;
    if (core == CORE_KERNEL)
        return CORE_KERNEL_NAME;
    return nnp__model_str(m, core);
}

/* A host op's duration: 0 when its end precedes its start; unknown (false) while open. */
static bool op_dur(const nnp_ops_t *o, size_t i, int64_t *dur)
{
    if (o->end_ns[i] == NNP_OPEN_END)
        return false;
    *dur = o->end_ns[i] > o->start_ns[i] ? o->end_ns[i] - o->start_ns[i] : 0;
    return true;
}

/* Kernels always have an end; a reversed one (clock glitch) counts as 0, not negative. */
static int64_t kernel_dur(const nnp_kernels_t *k, size_t i)
{
    return k->end_ns[i] > k->start_ns[i] ? k->end_ns[i] - k->start_ns[i] : 0;
}

/* A kernel's op type: the one its tool gave it (torch_npu kernel_details), else its
 * launching op's type, else (no launcher known) its own name, so unattributed kernels
 * still get a row of their own. */
static uint32_t kernel_type(const ctx_t *x, size_t i, size_t *op)
{
    const nnp_model_t *m = x->m;
    *op = nnp__op_index_find(&x->corr, m->kernels.corr[i]);
    if (m->kernels.op_type[i])
        return m->kernels.op_type[i];
    if (*op != SIZE_MAX && m->ops.type[*op])
        return m->ops.type[*op];
    return m->kernels.name[i];
}

/* A kernel's Core Type key: its task type as the importer gave it, else KERNEL. */
static uint32_t kernel_core(const ctx_t *x, size_t i)
{
    return x->m->kernels.type[i] ? x->m->kernels.type[i] : x->kernel_core;
}

/* ---- aggregation ---- */

/* One counted op or kernel, reduced to its grouping keys (string ids) and duration. */
typedef struct item {
    uint32_t name, type, core;
    uint8_t side;
    int64_t dur_ns;
} item_t;

/* One output row: a (type, core) group, or a (name, type, core) one for op_detail. */
typedef struct group {
    uint32_t name, type, core;
    uint8_t side;
    const char *name_s, *type_s, *core_s; /* for sorting without the model */
    uint64_t count;
    int64_t total_ns, min_ns, max_ns;
    bool no_minmax; /* from a tool's totals: no per-execution times, Min/Max left empty */
    double pct;     /* the row's Ratio(%) when fixed in advance (totals), else NAN */
} group_t;

static int cmp_u32(uint32_t a, uint32_t b)
{
    return (a > b) - (a < b);
}

/* Output order: most total time first; ties by name (detail only), type, core type. */
static int cmp_group(const void *a, const void *b)
{
    const group_t *x = a, *y = b;
    int d;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    if ((d = strcmp(x->name_s, y->name_s)) != 0)
        return d;
    if ((d = strcmp(x->type_s, y->type_s)) != 0)
        return d;
    if ((d = strcmp(x->core_s, y->core_s)) != 0)
        return d;
    return cmp_u32(x->side, y->side);
}

/* Initial slots of the group hash; groups are few (op types, op names), items millions. */
#define GROUP_HASH_INITIAL 1024u

static bool same_group(const group_t *g, const item_t *it, bool by_name)
{
    return g->side == it->side && g->type == it->type && g->core == it->core &&
           (!by_name || g->name == it->name);
}

static uint32_t group_hash(const item_t *it, bool by_name)
{
    uint64_t h = ((uint64_t)it->type * 0x9E3779B97F4A7C15ull) ^
                 ((uint64_t)it->core * 0xC2B2AE3D27D4EB4Full) ^ it->side;
    if (by_name)
        h ^= (uint64_t)it->name * 0x165667B19E3779F9ull;
    return (uint32_t)(h ^ (h >> 29));
}

/* Rebuilds the hash index of the k groups into a table of cap slots (group index + 1). */
static int rehash_groups(const group_t *g, size_t k, bool by_name, uint32_t **tab, size_t cap)
{
    uint32_t *t = nnp__calloc(cap, sizeof(uint32_t));
    if (!t)
        return -1;
    for (size_t i = 0; i < k; i++) {
        item_t key = {g[i].name, g[i].type, g[i].core, g[i].side, 0};
        size_t j = group_hash(&key, by_name) & (cap - 1);
        while (t[j])
            j = (j + 1) & (cap - 1);
        t[j] = (uint32_t)i + 1;
    }
    nnp__free(*tab);
    *tab = t;
    return 0;
}

/* Groups items one at a time (by name too when by_name): a hash of the groups, so a run
 * costs O(items) and no per-item memory (issue 17: the item array was 75 MB at 3 M ops). */
typedef struct agg {
    bool by_name;
    group_t *g;
    uint32_t *tab; /* group index + 1, 0 = empty slot */
    size_t k, g_cap, tab_cap;
} agg_t;

static int agg_init(agg_t *a, bool by_name)
{
    memset(a, 0, sizeof(*a));
    a->by_name = by_name;
    a->tab_cap = GROUP_HASH_INITIAL;
    if (rehash_groups(NULL, 0, by_name, &a->tab, a->tab_cap) != 0)
        return nnp__fail(NNP_ENOMEM, "out of memory in op statistics");
    return NNP_OK;
}

static void agg_fini(agg_t *a)
{
    nnp__free(a->tab);
    nnp__free(a->g);
    memset(a, 0, sizeof(*a));
}

static int agg_add(agg_t *a, const nnp_model_t *m, const item_t *it)
{
    size_t j = group_hash(it, a->by_name) & (a->tab_cap - 1);
    group_t *cur = NULL;
    for (; a->tab[j]; j = (j + 1) & (a->tab_cap - 1)) {
        if (same_group(&a->g[a->tab[j] - 1], it, a->by_name)) {
            cur = &a->g[a->tab[j] - 1];
            break;
        }
    }
    if (!cur) {
        if (a->k == a->g_cap) {
            size_t nc = a->g_cap ? a->g_cap * 2 : 64;
            group_t *ng = nnp__realloc(a->g, nc * sizeof(group_t));
            if (!ng)
                return nnp__fail(NNP_ENOMEM, "out of memory in op statistics");
            a->g = ng;
            a->g_cap = nc;
        }
        cur = &a->g[a->k];
        cur->side = it->side;
        cur->type = it->type;
        cur->core = it->core;
        cur->name = a->by_name ? it->name : 0;
        cur->name_s = nnp__model_str(m, cur->name);
        cur->type_s = nnp__model_str(m, cur->type);
        cur->core_s = core_str(m, cur->core);
        cur->count = 0;
        cur->total_ns = 0;
        cur->min_ns = cur->max_ns = it->dur_ns;
        cur->no_minmax = false;
        cur->pct = NAN;
        a->tab[j] = (uint32_t)++a->k;
        if (a->k * 2 > a->tab_cap) {
            a->tab_cap *= 2;
            if (rehash_groups(a->g, a->k, a->by_name, &a->tab, a->tab_cap) != 0)
                return nnp__fail(NNP_ENOMEM, "out of memory in op statistics");
        }
    }
    cur->count++;
    cur->total_ns += it->dur_ns;
    cur->min_ns = it->dur_ns < cur->min_ns ? it->dur_ns : cur->min_ns;
    cur->max_ns = it->dur_ns > cur->max_ns ? it->dur_ns : cur->max_ns;
    return NNP_OK;
}

/* Hands the groups over in output order (*out NULL when there are none). */
static void agg_take(agg_t *a, group_t **out, size_t *n_out)
{
    if (a->k)
        qsort(a->g, a->k, sizeof(group_t), cmp_group);
    *out = a->k ? a->g : NULL;
    *n_out = a->k;
    if (!a->k)
        nnp__free(a->g);
    a->g = NULL;
    a->k = a->g_cap = 0;
}

/* Every host op and kernel that counts (inside an analysed step under --steps), grouped
 * by (type, core) into types and by (name, type, core) into names. */
static int collect(const ctx_t *x, agg_t *types, agg_t *names, int64_t side_total[SIDE_COUNT])
{
    const nnp_model_t *m = x->m;
    size_t hint = 0;
    int rc = NNP_OK;
    for (size_t i = 0; i < m->ops.t.n && rc == NNP_OK; i++) {
        int64_t dur;
        item_t it;
        if (!spans_keep(&x->spans, m->ops.start_ns[i], &hint) || !op_dur(&m->ops, i, &dur))
            continue;
        it = (item_t){m->ops.name[i], m->ops.type[i], CORE_HOST, SIDE_HOST, dur};
        side_total[SIDE_HOST] += dur;
        rc = agg_add(types, m, &it);
        if (rc == NNP_OK)
            rc = agg_add(names, m, &it);
    }
    for (size_t i = 0; i < m->kernels.t.n && rc == NNP_OK; i++) {
        size_t op;
        int64_t dur = kernel_dur(&m->kernels, i);
        item_t it;
        if (!kernel_keep(x, i))
            continue;
        it = (item_t){m->kernels.name[i], kernel_type(x, i, &op), kernel_core(x, i), SIDE_DEVICE,
                      dur};
        side_total[SIDE_DEVICE] += dur;
        rc = agg_add(types, m, &it);
        if (rc == NNP_OK)
            rc = agg_add(names, m, &it);
    }
    return rc;
}

/* ---- writing ---- */

/* ns as us with 3 decimals, from integers (nnp__fmt_fixed). */
static const char *fmt_us(char *b, size_t cap, int64_t ns)
{
    return nnp__fmt_ns_as_us(b, cap, ns);
}

/* Mean rounded half up to the ns, so Avg Time is exact in its 3 decimals. */
static int64_t avg_ns(int64_t total, uint64_t count)
{
    return count ? (int64_t)(((uint64_t)total + count / 2) / count) : 0;
}

/* Ratio(%) of a row: its total over its side's total, 2 decimals; 0.00 when the side
 * has no time at all (only zero-duration ops). */
static const char *fmt_ratio(char *b, size_t cap, int64_t part, int64_t total)
{
    snprintf(b, cap, "%.*f", RATIO_DECIMALS,
             total > 0 ? (double)part / (double)total * PERCENT : 0.0);
    return b;
}

/* A group's Ratio(%): fixed in advance (a tool's own percent), else its side's share. */
static const char *group_ratio(char *b, size_t cap, const group_t *g,
                               const int64_t side_total[SIDE_COUNT])
{
    if (!isnan(g->pct)) {
        snprintf(b, cap, "%.*f", RATIO_DECIMALS, g->pct);
        return b;
    }
    return fmt_ratio(b, cap, g->total_ns, side_total[g->side]);
}

/* Count, Total, Avg, Min, Max, Ratio of a group. */
static void csv_numbers(nnp_csv_t *w, const group_t *g, const int64_t side_total[SIDE_COUNT])
{
    char b[NUM_BUF];
    nnp__csv_uint(w, g->count);
    nnp__csv_str(w, fmt_us(b, sizeof(b), g->total_ns));
    nnp__csv_str(w, fmt_us(b, sizeof(b), avg_ns(g->total_ns, g->count)));
    if (g->no_minmax) {
        nnp__csv_empty(w);
        nnp__csv_empty(w);
    } else {
        nnp__csv_str(w, fmt_us(b, sizeof(b), g->min_ns));
        nnp__csv_str(w, fmt_us(b, sizeof(b), g->max_ns));
    }
    nnp__csv_str(w, group_ratio(b, sizeof(b), g, side_total));
}

/* Opens <prefix>_<rank>.csv in the output directory. */
static int csv_open(const nnp_actx_t *c, const char *prefix, nnp_outfile_t *f, nnp_csv_t *w)
{
    char name[NNP_PATH_MAX];
    int rc;
    snprintf(name, sizeof(name), "%s_%d.csv", prefix, c->rank);
    rc = nnp__out_open(f, c->out_dir, name);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__csv_init(w, f->fd);
    if (rc != NNP_OK) {
        nnp__csv_fini(w);
        return nnp__out_commit(f, rc);
    }
    return NNP_OK;
}

/* Flushes and renames the file into place, or removes it when a write failed. */
static int csv_close(nnp_outfile_t *f, nnp_csv_t *w)
{
    return nnp__out_commit(f, nnp__csv_fini(w));
}

static int write_statistic(const nnp_actx_t *c, const group_t *g, size_t n,
                           const int64_t side_total[SIDE_COUNT])
{
    /* msprof op_statistic columns without Device_id and Model Name (formats.md 3). */
    static const char *const header[] = {"OP Type",        "Core Type",    "Count",
                                         "Total Time(us)", "Avg Time(us)", "Min Time(us)",
                                         "Max Time(us)",   "Ratio(%)",     NULL};
    nnp_outfile_t f;
    nnp_csv_t w;
    int rc = csv_open(c, "op_statistic", &f, &w);
    if (rc != NNP_OK)
        return rc;
    nnp__csv_header(&w, header);
    for (size_t i = 0; i < n; i++) {
        nnp__csv_str(&w, g[i].type_s);
        nnp__csv_str(&w, g[i].core_s);
        csv_numbers(&w, &g[i], side_total);
        nnp__csv_end_row(&w);
    }
    return csv_close(&f, &w);
}

static int write_detail(const nnp_actx_t *c, const group_t *g, size_t n,
                        const int64_t side_total[SIDE_COUNT])
{
    static const char *const header[] = {
        "Op Name",      "OP Type",      "Core Type",    "Count",    "Total Time(us)",
        "Avg Time(us)", "Min Time(us)", "Max Time(us)", "Ratio(%)", NULL};
    nnp_outfile_t f;
    nnp_csv_t w;
    int rc = csv_open(c, "op_detail", &f, &w);
    if (rc != NNP_OK)
        return rc;
    nnp__csv_header(&w, header);
    for (size_t i = 0; i < n; i++) {
        nnp__csv_str(&w, g[i].name_s);
        nnp__csv_str(&w, g[i].type_s);
        nnp__csv_str(&w, g[i].core_s);
        csv_numbers(&w, &g[i], side_total);
        nnp__csv_end_row(&w);
    }
    return csv_close(&f, &w);
}

/* The Core Type text of the kernels' last core key (kernels come in runs of one type):
 * its length found once per change, not per row. */
typedef struct core_text {
    uint32_t core;
    const char *s;
    size_t n;
} core_text_t;

/* Writes n bytes of model string id (text s) at p as a field, then a comma; returns the end. */
static char *put_mstr(char *p, ctx_t *x, uint32_t id, const char *s, size_t n)
{
    p += nnp__csv_field_into_id(p, &x->quotes, id, s, n);
    *p++ = ',';
    return p;
}

/* Room for a kernel_details row's numbers (step, stream, start, duration) and commas. */
#define KERNEL_ROW_NUMS (5 * NNP_FMT_NUM_MAX)

/* The Step Id (empty without a step row r), Name and Type fields of a kernel_details row
 * at p, each followed by its comma; returns the end. */
static inline char *put_head(char *p, ctx_t *x, const nnp_step_row_t *r, uint32_t name,
                             size_t n_name, uint32_t type, size_t n_type)
{
    if (r)
        p += nnp__fmt_u64(p, r->step_id);
    *p++ = ',';
    p = put_mstr(p, x, name, nnp__model_str(x->m, name), n_name);
    return put_mstr(p, x, type, nnp__model_str(x->m, type), n_type);
}

/* The Stream ID, Start Time(us) and Duration(us) fields of a kernel_details row at p, each
 * followed by its comma; returns the end. */
static inline char *put_stream_times(char *p, uint32_t stream, int64_t start_ns, int64_t dur_ns)
{
    p += nnp__fmt_u64(p, stream);
    *p++ = ',';
    p += nnp__fmt_fixed(p, start_ns, NS_PER_US, US_DECIMALS);
    *p++ = ',';
    p += nnp__fmt_fixed(p, dur_ns, NS_PER_US, US_DECIMALS);
    *p++ = ',';
    return p;
}

/* One kernel_details row of kernel i (step row r, NULL when none), composed whole into
 * the CSV buffer: the file has a row per kernel. */
static void kernel_row(nnp_csv_t *w, ctx_t *x, core_text_t *core, size_t i, const nnp_step_row_t *r)
{
    const nnp_model_t *m = x->m;
    size_t op;
    uint32_t type = kernel_type(x, i, &op);
    uint32_t name = m->kernels.name[i], launch = op != SIZE_MAX ? m->ops.name[op] : 0;
    size_t n_name = nnp__model_strlen(m, name), n_type = nnp__model_strlen(m, type);
    size_t n_launch = nnp__model_strlen(m, launch);
    uint32_t key = kernel_core(x, i);
    int64_t t = m->kernels.start_ns[i];
    char *p;
    if (key != core->core) {
        core->core = key;
        core->s = core_str(m, key);
        core->n = strlen(core->s);
    }
    p = nnp__csv_row_room(w, KERNEL_ROW_NUMS + NNP_CSV_FIELD_MAX(n_name) +
                                 NNP_CSV_FIELD_MAX(n_type) + NNP_CSV_FIELD_MAX(core->n) +
                                 NNP_CSV_FIELD_MAX(n_launch));
    if (!p)
        return; /* the writer's error, reported when it is closed */
    p = put_head(p, x, r, name, n_name, type, n_type);
    p += nnp__csv_field_into(p, core->s, core->n);
    *p++ = ',';
    p = put_stream_times(p, m->kernels.stream_id[i], t, kernel_dur(&m->kernels, i));
    if (op != SIZE_MAX)
        p += nnp__csv_field_into_id(p, &x->quotes, launch, nnp__model_str(m, launch), n_launch);
    *p++ = '\n';
    nnp__csv_row_done(w, p);
}

/* One kernel_details row of host op i (duration dur, step row r), composed whole: a
 * CPU-only run has a row per op execution. */
static void host_op_row(nnp_csv_t *w, ctx_t *x, size_t i, int64_t dur, const nnp_step_row_t *r)
{
    const nnp_model_t *m = x->m;
    uint32_t name = m->ops.name[i], type = m->ops.type[i];
    size_t n_name = nnp__model_strlen(m, name), n_type = nnp__model_strlen(m, type);
    char *p = nnp__csv_row_room(w, KERNEL_ROW_NUMS + sizeof(CORE_HOST_NAME) +
                                       NNP_CSV_FIELD_MAX(n_name) + NNP_CSV_FIELD_MAX(n_type));
    if (!p)
        return; /* the writer's error, reported when it is closed */
    p = put_head(p, x, r, name, n_name, type, n_type);
    memcpy(p, CORE_HOST_NAME ",", sizeof(CORE_HOST_NAME));
    p += sizeof(CORE_HOST_NAME);
    p = put_stream_times(p, m->ops.stream_id[i], m->ops.start_ns[i], dur);
    /* Launching Op: empty. */
    *p++ = '\n';
    nnp__csv_row_done(w, p);
}

/* Every kernel in start order (every host op when the run has no kernels: a CPU-only
 * run's ops are its compute, analyse.h), like torch_npu's kernel_details.csv. */
static int write_kernel_details(const nnp_actx_t *c, ctx_t *x)
{
    static const char *const header[] = {"Step Id",      "Name",         "Type",
                                         "Core Type",    "Stream ID",    "Start Time(us)",
                                         "Duration(us)", "Launching Op", NULL};
    const nnp_model_t *m = x->m;
    nnp_outfile_t f;
    nnp_csv_t w;
    size_t hint = 0;
    core_text_t core = {CORE_NONE, "", 0};
    int rc = csv_open(c, "kernel_details", &f, &w);
    if (rc != NNP_OK)
        return rc;
    nnp__csv_header(&w, header);
    for (size_t i = 0; i < m->kernels.t.n; i++) {
        const nnp_step_row_t *r = x->spans.s.n ? kernel_step(x, i) : NULL;
        if (x->spans.filter && !r)
            continue;
        kernel_row(&w, x, &core, i, r);
    }
    for (size_t i = 0; m->kernels.t.n == 0 && i < m->ops.t.n; i++) {
        int64_t dur;
        const nnp_step_row_t *r;
        if (!op_dur(&m->ops, i, &dur))
            continue;
        r = x->spans.s.n ? spans_find(&x->spans, m->ops.start_ns[i], &hint) : NULL;
        if (x->spans.filter && !r)
            continue;
        host_op_row(&w, x, i, dur, r);
    }
    return csv_close(&f, &w);
}

/* The first TOP_N rows of op_statistic as JSON, numbers in the same units and decimals. */
static int write_top(const nnp_actx_t *c, const group_t *g, size_t n,
                     const int64_t side_total[SIDE_COUNT])
{
    nnp_outfile_t f;
    nnp_jw_t w;
    char name[NNP_PATH_MAX], b[NUM_BUF];
    int rc;
    snprintf(name, sizeof(name), "op_statistic_top20_%d.json", c->rank);
    rc = nnp__out_open(&f, c->out_dir, name);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__jw_init(&w, f.fd, c->pretty, 0);
    if (rc != NNP_OK) {
        nnp__jw_fini(&w);
        return nnp__out_commit(&f, rc);
    }
    nnp__jw_arr_begin(&w);
    for (size_t i = 0; i < n && i < TOP_N; i++) {
        nnp__jw_obj_begin(&w);
        nnp__jw_key(&w, "op_type");
        nnp__jw_str(&w, g[i].type_s);
        nnp__jw_key(&w, "core_type");
        nnp__jw_str(&w, g[i].core_s);
        nnp__jw_key(&w, "count");
        nnp__jw_uint(&w, g[i].count);
        nnp__jw_key(&w, "total_time_us");
        nnp__jw_raw(&w, fmt_us(b, sizeof(b), g[i].total_ns));
        nnp__jw_key(&w, "avg_time_us");
        nnp__jw_raw(&w, fmt_us(b, sizeof(b), avg_ns(g[i].total_ns, g[i].count)));
        nnp__jw_key(&w, "min_time_us");
        nnp__jw_raw(&w, g[i].no_minmax ? "null" : fmt_us(b, sizeof(b), g[i].min_ns));
        nnp__jw_key(&w, "max_time_us");
        nnp__jw_raw(&w, g[i].no_minmax ? "null" : fmt_us(b, sizeof(b), g[i].max_ns));
        nnp__jw_key(&w, "ratio_percent");
        nnp__jw_raw(&w, group_ratio(b, sizeof(b), &g[i], side_total));
        nnp__jw_obj_end(&w);
    }
    nnp__jw_arr_end(&w);
    nnp__jw_line_end(&w);
    rc = nnp__jw_flush(&w);
    nnp__jw_fini(&w);
    return nnp__out_commit(&f, rc);
}

/* Groups from a tool's own totals (model.h nnp_op_totals_t): its per-type rows (by_name
 * false) or per-op rows, in output order. A row's Ratio(%) is the tool's percent when it
 * gave one (what its operator page shows), else its share of the rows of its core type. */
static int totals_groups(const nnp_model_t *m, bool by_name, group_t **out, size_t *n_out)
{
    const nnp_op_totals_t *o = &m->op_totals;
    group_t *g = nnp__calloc(o->t.n + 1, sizeof(group_t));
    size_t k = 0;
    if (!g)
        return nnp__fail(NNP_ENOMEM, "out of memory in op statistics");
    for (size_t i = 0; i < o->t.n; i++) {
        if ((o->name[i] != 0) != by_name)
            continue;
        g[k] = (group_t){by_name ? o->name[i] : 0,
                         o->type[i],
                         o->core[i],
                         SIDE_DEVICE,
                         nnp__model_str(m, by_name ? o->name[i] : 0),
                         nnp__model_str(m, o->type[i]),
                         nnp__model_str(m, o->core[i]),
                         o->count[i],
                         o->total_ns[i],
                         0,
                         0,
                         true,
                         o->percent[i]};
        k++;
    }
    for (size_t i = 0; i < k; i++) {
        int64_t core_total = 0;
        if (!isnan(g[i].pct))
            continue;
        for (size_t j = 0; j < k; j++)
            core_total += g[j].core == g[i].core ? g[j].total_ns : 0;
        g[i].pct = core_total > 0 ? (double)g[i].total_ns / (double)core_total * PERCENT : 0.0;
    }
    qsort(g, k, sizeof(group_t), cmp_group);
    *out = g;
    *n_out = k;
    return NNP_OK;
}

/* Collects once, groups twice (by type, by name), writes the four files. An empty run
 * still gets every file, header only ("[]" for the top 20), so readers need no special
 * case. */
int nnp__op_stats_write_all(const nnp_actx_t *c, const nnp_step_trace_t *st)
{
    ctx_t x;
    agg_t by_type, by_name;
    group_t *types = NULL, *names = NULL;
    size_t n_types = 0, n_names = 0;
    int64_t side_total[SIDE_COUNT] = {0, 0};
    int rc = ctx_init(c, st, &x);
    memset(&by_type, 0, sizeof(by_type));
    memset(&by_name, 0, sizeof(by_name));
    if (rc == NNP_OK)
        rc = agg_init(&by_type, false);
    if (rc == NNP_OK)
        rc = agg_init(&by_name, true);
    if (rc == NNP_OK)
        rc = collect(&x, &by_type, &by_name, side_total);
    /* A tool's own per-type totals (MindSpore's intermediate files) are what its operator
     * page shows: they make the type and op tables, unless --steps asks for steps, which
     * totals cannot be cut by. */
    if (rc == NNP_OK && c->m->op_totals.t.n && !c->has_steps) {
        rc = totals_groups(c->m, false, &types, &n_types);
        if (rc == NNP_OK)
            rc = totals_groups(c->m, true, &names, &n_names);
    } else if (rc == NNP_OK) {
        agg_take(&by_type, &types, &n_types);
        agg_take(&by_name, &names, &n_names);
    }
    agg_fini(&by_type);
    agg_fini(&by_name);
    if (rc == NNP_OK)
        rc = write_statistic(c, types, n_types, side_total);
    if (rc == NNP_OK)
        rc = write_detail(c, names, n_names, side_total);
    if (rc == NNP_OK)
        rc = write_kernel_details(c, &x);
    if (rc == NNP_OK)
        rc = write_top(c, types, n_types, side_total);
    nnp__free(types);
    nnp__free(names);
    ctx_fini(&x);
    return rc;
}

/* ---- query ---- */

/* Adds one matching op's duration to a query row. */
static void query_add(nnp_op_query_row_t *r, int64_t dur)
{
    if (r->count == 0 || dur < r->min_ns)
        r->min_ns = dur;
    if (r->count == 0 || dur > r->max_ns)
        r->max_ns = dur;
    r->count++;
    r->total_ns += dur;
}

static void query_one(const ctx_t *x, nnp_op_query_row_t *r)
{
    const nnp_model_t *m = x->m;
    /* A name the model never interned matches nothing (id 0 is "", never a valid name). */
    uint32_t id = nnp__model_find(m, r->name);
    if (id == 0)
        return;
    if (m->kernels.t.n) {
        for (size_t i = 0; i < m->kernels.t.n; i++) {
            size_t op = nnp__op_index_find(&x->corr, m->kernels.corr[i]);
            bool hit = m->kernels.name[i] == id ||
                       (op != SIZE_MAX && (m->ops.name[op] == id || m->ops.type[op] == id));
            if (hit)
                query_add(r, kernel_dur(&m->kernels, i));
        }
    } else {
        for (size_t i = 0; i < m->ops.t.n; i++) {
            int64_t dur;
            if ((m->ops.name[i] == id || m->ops.type[i] == id) && op_dur(&m->ops, i, &dur))
                query_add(r, dur);
        }
    }
    r->avg_ns = avg_ns(r->total_ns, r->count);
}

int nnp__op_query(const nnp_model_t *m, const char *const *names, size_t n_names,
                  nnp_op_query_row_t **rows, size_t *n_rows)
{
    ctx_t x;
    nnp_op_query_row_t *v;
    int rc;
    if (!rows || !n_rows || !m)
        return nnp__fail(NNP_EINVAL, "nnp__op_query: NULL model or output");
    *rows = NULL;
    *n_rows = 0;
    /* MindSpore rejects "", '' and [] with one message; a NULL name counts as empty. */
    if (!names || n_names == 0)
        return nnp__fail(NNP_EINVAL, "%s", OP_QUERY_EMPTY_MSG);
    for (size_t i = 0; i < n_names; i++)
        if (!names[i] || !*names[i])
            return nnp__fail(NNP_EINVAL, "%s", OP_QUERY_EMPTY_MSG);
    memset(&x, 0, sizeof(x));
    x.m = m;
    rc = nnp__op_index_build(m, &x.corr);
    if (rc != NNP_OK)
        return rc;
    v = nnp__calloc(n_names, sizeof(*v));
    if (!v) {
        ctx_fini(&x);
        return nnp__fail(NNP_ENOMEM, "out of memory in op query");
    }
    for (size_t i = 0; i < n_names; i++) {
        v[i].name = names[i];
        query_one(&x, &v[i]);
    }
    ctx_fini(&x);
    *rows = v;
    *n_rows = n_names;
    return NNP_OK;
}
