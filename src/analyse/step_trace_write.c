/* step_trace_write.c - the step trace's files (step_trace.h): step_trace_raw_{rank}_
 * detail_time.csv with its averages row, step_trace_point_info_{rank}.json and MindInsight's
 * step_trace_summary_{rank}.json, from the rows step_trace.c derived. Rules and columns:
 * docs/OUTPUTS.md, "Step trace"; sources formats.md sections 1.1 and 1.2. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "analyse/step_trace.h"
#include "util/csv_writer.h"
#include "util/json_writer.h"

#define NS_PER_MS 1000000
/* The CSV keeps every ns: ms with 6 decimals (our choice; MindSpore writes 10 ns ticks). */
#define CSV_MS_DECIMALS 6
/* MindInsight's summary rounds ms to 4 decimals and percents to 2 (MI util.py
 * to_millisecond(limit=4), calculate_percent round(.., 2)). */
#define SUMMARY_MS_DECIMALS 4
#define PERCENT_DECIMALS    2
#define PERCENT             100.0
/* MindSpore 1.x step trace unit: one 10 ns system-counter tick (formats.md 1.1). */
#define MS1X_TICK_NS 10
/* Separator of the occurrence number of a communication op name repeated in one step. */
#define DUP_SEP "#"
/* Room for a CSV number: sign, 19 integer digits, point, decimals, NUL. */
#define NUM_BUF 48
/* Comm column hash: starts at this many slots, doubled at half load. */
#define HASH_INITIAL 64

typedef nnp_range_t range_t;
typedef nnp_id_pos_t id_pos_t;

/* A time or duration cell in ms; an unknown one is an empty cell (MindSpore writes
 * nothing either when a point is missing). */
static void csv_ms(nnp_csv_t *w, int64_t ns)
{
    nnp__csv_fixed_int(w, ns, NS_PER_MS, CSV_MS_DECIMALS);
}

static void csv_ms_opt(nnp_csv_t *w, int64_t ns, bool known)
{
    if (known)
        csv_ms(w, ns);
    else
        nnp__csv_empty(w);
}

/* Mean of the known values of a column, for the averages row. tick_ns > 0: the mean is
 * rounded to a whole tick of that many ns (half to even, Python's round), as MindSpore
 * 1.x wrote its averages row in integer 10 ns ticks and MindInsight's summary reads that
 * row (formats.md 1.1); 0 keeps the exact mean (2.x np.mean). */
typedef struct mean {
    int64_t sum;
    size_t n;
    int64_t tick_ns;
} mean_t;

static void mean_add(mean_t *a, int64_t v, bool known)
{
    if (known) {
        a->sum += v;
        a->n++;
    }
}

static double mean_ms(const mean_t *a)
{
    if (a->n && a->tick_ns > 0) {
        int64_t d = (int64_t)a->n * a->tick_ns, q = a->sum / d, r = a->sum % d;
        if (r < 0) { /* floor division, so the remainder is in [0, d) */
            q--;
            r += d;
        }
        if (2 * r > d || (2 * r == d && (q & 1)))
            q++;
        return (double)(q * a->tick_ns) / NS_PER_MS;
    }
    return a->n ? (double)a->sum / (double)a->n / NS_PER_MS : 0.0;
}

/* The imported file's own averages row replaces phase p's mean (MindInsight reads that
 * row): unless --steps analyses a subset, which the file's row does not describe. */
static bool given_mean(const nnp_actx_t *c, int p, int64_t *ns)
{
    if (c->has_steps || !(c->m->info.step_averages_known & (1u << p)))
        return false;
    *ns = c->m->info.step_averages_ns[p];
    return true;
}

static void csv_mean(nnp_csv_t *w, const mean_t *a)
{
    if (a->n)
        nnp__csv_fixed(w, mean_ms(a), CSV_MS_DECIMALS);
    else
        nnp__csv_empty(w);
}

/* Communication columns: one per (op name, occurrence in the step), in first-seen order
 * over the steps. A small open-addressing hash maps the key to its column. */
typedef struct comm_cols {
    uint64_t *slot_key;
    uint32_t *slot_col;
    size_t slots;
    size_t n, cap;
    size_t *first;      /* comms row of the column's first op (its name and kind) */
    uint32_t *occ;      /* occurrence number in the step, 1 = first */
    id_pos_t *scratch;  /* per step (name key, position), sized for all comms */
    uint32_t *step_col; /* per step: column of each comm op (UINT32_MAX = none) */
} comm_cols_t;

static uint32_t comm_name_key(const nnp_comms_t *cm, size_t i)
{
    /* Unnamed ops are keyed by their kind, placed above every plausible string id. */
    return cm->name[i] ? cm->name[i] : UINT32_MAX - cm->kind[i];
}

static uint64_t mix64(uint64_t x)
{
    /* splitmix64 finaliser: spreads consecutive ids over the table. */
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* The column of key, or SIZE_MAX when it has none yet. */
static size_t cols_find(const comm_cols_t *cc, uint64_t key)
{
    size_t mask = cc->slots - 1;
    if (cc->slots == 0)
        return SIZE_MAX;
    for (size_t h = mix64(key) & mask;; h = (h + 1) & mask) {
        if (cc->slot_key[h] == key)
            return cc->slot_col[h];
        if (cc->slot_key[h] == 0)
            return SIZE_MAX;
    }
}

/* Doubles the hash and the per-column arrays together: the hash stays at most half full,
 * so the column arrays (as long as the hash) always have room for the next column. */
static int cols_grow(comm_cols_t *cc)
{
    size_t nslots = cc->slots ? cc->slots * 2 : HASH_INITIAL;
    uint64_t *keys = nnp__calloc(nslots, sizeof(uint64_t));
    uint32_t *vals = nnp__calloc(nslots, sizeof(uint32_t));
    size_t ncap = nslots;
    size_t *first = nnp__realloc(cc->first, ncap * sizeof(size_t));
    uint32_t *occ;
    if (first)
        cc->first = first;
    occ = nnp__realloc(cc->occ, ncap * sizeof(uint32_t));
    if (occ)
        cc->occ = occ;
    if (!keys || !vals || !first || !occ) {
        nnp__free(keys);
        nnp__free(vals);
        return nnp__fail(NNP_ENOMEM, "out of memory in step trace");
    }
    cc->cap = ncap;
    for (size_t s = 0; s < cc->slots; s++) {
        size_t h;
        if (cc->slot_key[s] == 0)
            continue;
        for (h = mix64(cc->slot_key[s]) & (nslots - 1); keys[h]; h = (h + 1) & (nslots - 1))
            ;
        keys[h] = cc->slot_key[s];
        vals[h] = cc->slot_col[s];
    }
    nnp__free(cc->slot_key);
    nnp__free(cc->slot_col);
    cc->slot_key = keys;
    cc->slot_col = vals;
    cc->slots = nslots;
    return NNP_OK;
}

static int cols_add(comm_cols_t *cc, uint64_t key, size_t first, uint32_t occ)
{
    size_t h;
    if ((cc->n + 1) * 2 > cc->slots) {
        int rc = cols_grow(cc);
        if (rc != NNP_OK)
            return rc;
    }
    for (h = mix64(key) & (cc->slots - 1); cc->slot_key[h]; h = (h + 1) & (cc->slots - 1))
        ;
    cc->slot_key[h] = key;
    cc->slot_col[h] = (uint32_t)cc->n;
    cc->first[cc->n] = first;
    cc->occ[cc->n] = occ;
    cc->n++;
    return NNP_OK;
}

/* Fills cc->step_col for the comm ops of one step; with add, new keys become columns. */
static int cols_step(comm_cols_t *cc, const nnp_comms_t *cm, range_t r, bool add)
{
    size_t n = r.hi - r.lo;
    for (size_t p = 0; p < n; p++)
        cc->scratch[p] = (id_pos_t){comm_name_key(cm, r.lo + p), (uint32_t)p};
    /* Sorting by (name, position) numbers the repeats of a name in time order. */
    qsort(cc->scratch, n, sizeof(id_pos_t), nnp__step_cmp_id_pos);
    for (size_t p = 0, occ = 0; p < n; p++) {
        uint64_t key;
        size_t col;
        occ = p && cc->scratch[p - 1].id == cc->scratch[p].id ? occ + 1 : 1;
        key = ((uint64_t)cc->scratch[p].id << 32) | occ;
        col = cols_find(cc, key);
        if (col == SIZE_MAX && add) {
            int rc = cols_add(cc, key, r.lo + cc->scratch[p].pos, (uint32_t)occ);
            if (rc != NNP_OK)
                return rc;
            col = cc->n - 1;
        }
        cc->step_col[cc->scratch[p].pos] = col == SIZE_MAX ? UINT32_MAX : (uint32_t)col;
    }
    return NNP_OK;
}

static void cols_fini(comm_cols_t *cc)
{
    nnp__free(cc->slot_key);
    nnp__free(cc->slot_col);
    nnp__free(cc->first);
    nnp__free(cc->occ);
    nnp__free(cc->scratch);
    nnp__free(cc->step_col);
    memset(cc, 0, sizeof(*cc));
}

/* The comm ops of a step: those starting inside its recorded span. */
static range_t row_comms(const nnp_model_t *m, const nnp_step_row_t *r)
{
    return nnp__step_in_span(m->comms.start_ns, m->comms.t.n, r->begin_ns, r->end_ns);
}

/* First pass over the rows: the union of comm columns in first-seen order. The scratch
 * arrays are sized for all comm ops, so no step can overflow them. */
static int cols_build(const nnp_model_t *m, const nnp_step_trace_t *st, comm_cols_t *cc)
{
    memset(cc, 0, sizeof(*cc));
    if (m->comms.t.n == 0)
        return NNP_OK;
    cc->scratch = nnp__malloc(m->comms.t.n * sizeof(id_pos_t));
    cc->step_col = nnp__malloc(m->comms.t.n * sizeof(uint32_t));
    if (!cc->scratch || !cc->step_col)
        return nnp__fail(NNP_ENOMEM, "out of memory in step trace");
    for (size_t k = 0; k < st->n; k++) {
        int rc = cols_step(cc, &m->comms, row_comms(m, &st->rows[k]), true);
        if (rc != NNP_OK)
            return rc;
    }
    return NNP_OK;
}

/* A column's display name: the op name (its kind when unnamed), "#k" for the k-th
 * occurrence (k >= 2) of that name in a step, then the suffix. */
static void col_name(const nnp_model_t *m, const comm_cols_t *cc, size_t col, const char *suffix,
                     char *b, size_t cap)
{
    size_t i = cc->first[col];
    const char *name = m->comms.name[i] ? nnp__model_str(m, m->comms.name[i])
                                        : nnp_comm_kind_name((nnp_comm_kind_t)m->comms.kind[i]);
    if (cc->occ[col] > 1)
        snprintf(b, cap, "%s" DUP_SEP "%u%s", name, (unsigned)cc->occ[col], suffix);
    else
        snprintf(b, cap, "%s%s", name, suffix);
}

static int write_header(nnp_csv_t *w, const nnp_model_t *m, const nnp_step_trace_t *st,
                        const comm_cols_t *cc)
{
    static const char *const train[] = {
        "step_num", "start_point",        "end_point", "total", "fp_point",
        "bp_point", "iteration_interval", "fp_and_bp", "tail",  NULL};
    /* Inference: fp_and_bp + tail become one fp column, bp_point goes (formats.md 1.1). */
    static const char *const infer[] = {"step_num", "start_point",        "end_point", "total",
                                        "fp_point", "iteration_interval", "fp",        NULL};
    static const char *const suffix[] = {"", "_start_point", "_end_point"};
    const char *const *base = st->inference ? infer : train;
    size_t longest = 0;
    char *b;
    for (; *base; base++)
        nnp__csv_str(w, *base);
    for (size_t col = 0; col < cc->n; col++) {
        size_t len = strlen(nnp__model_str(m, m->comms.name[cc->first[col]]));
        longest = len > longest ? len : longest;
    }
    b = nnp__malloc(longest + NUM_BUF);
    if (!b)
        return nnp__fail(NNP_ENOMEM, "out of memory in step trace");
    for (size_t col = 0; col < cc->n; col++)
        for (size_t s = 0; s < NNP_ARRAY_LEN(suffix); s++) {
            col_name(m, cc, col, suffix[s], b, longest + NUM_BUF);
            nnp__csv_str(w, b);
        }
    nnp__free(b);
    nnp__csv_end_row(w);
    return NNP_OK;
}

/* The phase columns averaged in the last row and the summary. PH_FP_BP holds fp_and_bp,
 * or the single fp column (step end - fp) of an inference run. */
enum { PH_TOTAL, PH_INTERVAL, PH_FP_BP, PH_TAIL, PH_COUNT };
_Static_assert(PH_COUNT == NNP_STEP_AVERAGES, "the model's averages are the phases");

/* What writing the rows accumulates. row_op: per comm column, the comms row of the
 * current step in it (SIZE_MAX when the step lacks it); col_mean: per comm column. */
typedef struct detail_state {
    size_t *row_op;
    mean_t *col_mean;
    mean_t phase[PH_COUNT];
    bool counted; /* the current row enters the means (not so step 1 of 1.x data) */
} detail_state_t;

/* Phase p of the averages row: the imported file's own value, else our mean. */
static void phase_mean(const nnp_actx_t *c, nnp_csv_t *w, const detail_state_t *ds, int p)
{
    int64_t ns;
    if (given_mean(c, p, &ns))
        csv_ms(w, ns);
    else
        csv_mean(w, &ds->phase[p]);
}

static double phase_ms(const nnp_actx_t *c, const detail_state_t *ds, int p)
{
    int64_t ns;
    return given_mean(c, p, &ns) ? (double)ns / NS_PER_MS : mean_ms(&ds->phase[p]);
}

static void write_row(nnp_csv_t *w, const nnp_model_t *m, const nnp_step_trace_t *st,
                      comm_cols_t *cc, detail_state_t *ds, const nnp_step_row_t *r)
{
    const nnp_comms_t *cm = &m->comms;
    bool fp = r->fp_ns >= 0, bp = r->bp_ns >= 0;
    range_t cr = row_comms(m, r);
    nnp__csv_uint(w, r->step_id);
    csv_ms(w, r->start_point_ns);
    csv_ms(w, r->end_ns);
    csv_ms(w, r->total_ns);
    csv_ms_opt(w, r->fp_ns, fp);
    mean_add(&ds->phase[PH_TOTAL], r->total_ns, ds->counted);
    mean_add(&ds->phase[PH_INTERVAL], r->iteration_interval_ns, fp && ds->counted);
    if (st->inference) {
        csv_ms_opt(w, r->iteration_interval_ns, fp);
        csv_ms_opt(w, r->end_ns - r->fp_ns, fp);
        mean_add(&ds->phase[PH_FP_BP], r->end_ns - r->fp_ns, fp && ds->counted);
    } else {
        csv_ms_opt(w, r->bp_ns, bp);
        csv_ms_opt(w, r->iteration_interval_ns, fp);
        csv_ms_opt(w, r->fp_and_bp_ns, fp && bp);
        csv_ms_opt(w, r->tail_ns, bp);
        mean_add(&ds->phase[PH_FP_BP], r->fp_and_bp_ns, fp && bp && ds->counted);
        mean_add(&ds->phase[PH_TAIL], r->tail_ns, bp && ds->counted);
    }
    for (size_t col = 0; col < cc->n; col++)
        ds->row_op[col] = SIZE_MAX;
    if (cr.hi > cr.lo) {
        /* Columns were all created in the first pass, so lookups cannot fail here. */
        (void)cols_step(cc, cm, cr, false);
        for (size_t p = 0; p < cr.hi - cr.lo; p++)
            if (cc->step_col[p] < cc->n)
                ds->row_op[cc->step_col[p]] = cr.lo + p;
    }
    for (size_t col = 0; col < cc->n; col++) {
        size_t i = ds->row_op[col];
        bool has = i != SIZE_MAX;
        int64_t dur = has ? cm->end_ns[i] - cm->start_ns[i] : 0;
        /* 2.x order: duration first, then the start and end points (formats.md 1.1). */
        csv_ms_opt(w, dur, has);
        csv_ms_opt(w, has ? cm->start_ns[i] : 0, has);
        csv_ms_opt(w, has ? cm->end_ns[i] : 0, has);
        mean_add(&ds->col_mean[col], dur, has && ds->counted);
    }
    nnp__csv_end_row(w);
}

/* The averages row (step_num "-"): means over the analysed rows, as MindSpore 2.x's
 * np.mean over all rows (1.x left step 1 out). Absolute points have no meaningful mean
 * and stay empty; a column's mean counts only the rows where it is known. */
static void write_averages(const nnp_actx_t *c, nnp_csv_t *w, const nnp_step_trace_t *st,
                           const comm_cols_t *cc, const detail_state_t *ds)
{
    nnp__csv_str(w, "-");
    nnp__csv_empty(w);
    nnp__csv_empty(w);
    phase_mean(c, w, ds, PH_TOTAL);
    nnp__csv_empty(w);
    if (!st->inference)
        nnp__csv_empty(w);
    phase_mean(c, w, ds, PH_INTERVAL);
    phase_mean(c, w, ds, PH_FP_BP);
    if (!st->inference)
        phase_mean(c, w, ds, PH_TAIL);
    for (size_t col = 0; col < cc->n; col++) {
        csv_mean(w, &ds->col_mean[col]);
        nnp__csv_empty(w);
        nnp__csv_empty(w);
    }
    nnp__csv_end_row(w);
}

static int write_detail(const nnp_actx_t *c, const nnp_step_trace_t *st, detail_state_t *ds)
{
    const nnp_model_t *m = c->m;
    comm_cols_t cc;
    nnp_outfile_t f;
    nnp_csv_t w;
    char name[NNP_PATH_MAX];
    int rc = cols_build(m, st, &cc);
    if (rc != NNP_OK)
        goto out;
    ds->row_op = nnp__malloc((cc.n + 1) * sizeof(size_t));
    ds->col_mean = nnp__calloc(cc.n + 1, sizeof(mean_t));
    if (!ds->row_op || !ds->col_mean) {
        rc = nnp__fail(NNP_ENOMEM, "out of memory in step trace");
        goto out;
    }
    snprintf(name, sizeof(name), "step_trace_raw_%d_detail_time.csv", c->rank);
    rc = nnp__out_open(&f, c->out_dir, name);
    if (rc != NNP_OK)
        goto out;
    /* MindSpore 1.x data (set by the importer): step 1 stays out of the averages and the
     * means are whole 10 ns ticks (formats.md 1.1). */
    for (size_t p = 0; p < PH_COUNT && m->info.step_avg_skip_first; p++)
        ds->phase[p].tick_ns = MS1X_TICK_NS;
    for (size_t col = 0; col < cc.n && m->info.step_avg_skip_first; col++)
        ds->col_mean[col].tick_ns = MS1X_TICK_NS;
    rc = nnp__csv_init(&w, f.fd);
    if (rc == NNP_OK)
        rc = write_header(&w, m, st, &cc);
    if (rc == NNP_OK) {
        for (size_t k = 0; k < st->n; k++) {
            ds->counted = !(m->info.step_avg_skip_first && k == 0 && st->n > 1);
            write_row(&w, m, st, &cc, ds, &st->rows[k]);
        }
        if (st->n)
            write_averages(c, &w, st, &cc, ds);
    }
    {
        int wrc = nnp__csv_fini(&w);
        rc = rc != NNP_OK ? rc : wrc;
    }
    rc = nnp__out_commit(&f, rc);
out:
    cols_fini(&cc);
    nnp__free(ds->row_op);
    nnp__free(ds->col_mean);
    ds->row_op = NULL;
    ds->col_mean = NULL;
    return rc;
}

/* Opens <prefix>_<rank>.json in the output directory. */
static int open_json(const nnp_actx_t *c, const char *prefix, nnp_outfile_t *f, nnp_jw_t *w)
{
    char name[NNP_PATH_MAX];
    int rc;
    snprintf(name, sizeof(name), "%s_%d.json", prefix, c->rank);
    rc = nnp__out_open(f, c->out_dir, name);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__jw_init(w, f->fd, c->pretty, 0);
    if (rc != NNP_OK)
        return nnp__out_commit(f, rc);
    return NNP_OK;
}

/* Ends the document with a newline, flushes, and renames the file into place (or removes
 * it when anything failed). */
static int close_json(nnp_outfile_t *f, nnp_jw_t *w)
{
    int rc;
    nnp__jw_line_end(w);
    rc = nnp__jw_flush(w);
    nnp__jw_fini(w);
    return nnp__out_commit(f, rc);
}

/* The names of the ops at fp/bp; "" when they came from marks or are unknown. */
static int write_point_info(const nnp_actx_t *c, const nnp_step_trace_t *st)
{
    nnp_outfile_t f;
    nnp_jw_t w;
    int rc = open_json(c, "step_trace_point_info", &f, &w);
    if (rc != NNP_OK)
        return rc;
    nnp__jw_obj_begin(&w);
    nnp__jw_key(&w, "fp_start");
    nnp__jw_str(&w, nnp__model_str(c->m, st->fp_name));
    nnp__jw_key(&w, "bp_end");
    nnp__jw_str(&w, nnp__model_str(c->m, st->bp_name));
    nnp__jw_obj_end(&w);
    return close_json(&f, &w);
}

/* A ms value as Python prints round(x, 4): at most 4 decimals, trailing zeros dropped
 * but one kept ("12.0"), as MindInsight's summary shows it. Returns the rounded value. */
static double json_ms4(nnp_jw_t *w, double ms)
{
    char b[NUM_BUF];
    size_t n;
    snprintf(b, sizeof(b), "%.*f", SUMMARY_MS_DECIMALS, ms);
    n = strlen(b);
    while (n > 2 && b[n - 1] == '0' && b[n - 2] != '.')
        b[--n] = '\0';
    nnp__jw_raw(w, b);
    return strtod(b, NULL);
}

/* "57.48%": MindInsight's calculate_percent, but always with 2 decimals (MI prints
 * Python's shortest form, "50.0%"); "0.00%" when the total is 0 (MI: "0%"). */
static void json_percent(nnp_jw_t *w, double part, double total)
{
    char b[NUM_BUF];
    snprintf(b, sizeof(b), "%.*f%%", PERCENT_DECIMALS, total != 0.0 ? part / total * PERCENT : 0);
    nnp__jw_str(w, b);
}

/* MindInsight's step trace summary (get_summary_for_step_trace), from the averages. */
static int write_summary(const nnp_actx_t *c, const nnp_step_trace_t *st, const detail_state_t *ds)
{
    nnp_outfile_t f;
    nnp_jw_t w;
    double total, part;
    int rc = open_json(c, "step_trace_summary", &f, &w);
    if (rc != NNP_OK)
        return rc;
    nnp__jw_obj_begin(&w);
    nnp__jw_key(&w, "total_time");
    total = json_ms4(&w, phase_ms(c, ds, PH_TOTAL));
    nnp__jw_key(&w, "iteration_interval");
    part = json_ms4(&w, phase_ms(c, ds, PH_INTERVAL));
    nnp__jw_key(&w, "iteration_interval_percent");
    json_percent(&w, part, total);
    nnp__jw_key(&w, st->inference ? "fp" : "fp_and_bp");
    part = json_ms4(&w, phase_ms(c, ds, PH_FP_BP));
    nnp__jw_key(&w, st->inference ? "fp_percent" : "fp_and_bp_percent");
    json_percent(&w, part, total);
    if (!st->inference) {
        nnp__jw_key(&w, "tail");
        part = json_ms4(&w, phase_ms(c, ds, PH_TAIL));
        nnp__jw_key(&w, "tail_percent");
        json_percent(&w, part, total);
    }
    nnp__jw_key(&w, "total_steps");
    nnp__jw_uint(&w, st->n);
    nnp__jw_obj_end(&w);
    return close_json(&f, &w);
}

/* Writes the three files in order; the summary reuses the means of the detail file so
 * the two always agree. An empty run still gets all three (header-only CSV). */
int nnp__step_trace_write(const nnp_actx_t *c, const nnp_step_trace_t *st)
{
    detail_state_t ds;
    int rc;
    memset(&ds, 0, sizeof(ds));
    rc = write_detail(c, st, &ds);
    if (rc == NNP_OK)
        rc = write_point_info(c, st);
    if (rc == NNP_OK)
        rc = write_summary(c, st, &ds);
    return rc;
}
