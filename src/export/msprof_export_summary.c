/* msprof_export_summary.c - the summary tables of `nnprof export summary` (reference/
 * formats.md section 3): op_summary, op_statistic, task_time, step_trace,
 * communication_statistic, api_statistic, and memory_record/operator_memory re-emitted from
 * memory.c's CSVs; csv or json, rows outside --iteration-id left out. Called by the driver,
 * msprof_export.c, through nnp__msprof_write_summary. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/msprof_export_internal.h"
#include "model/host_pairs.h"
#include "util/csv_writer.h"
#include "util/json_writer.h"

/* Decimals of the percentage/average columns (msprof writes 3). */
#define DEC 3

/* ---- a summary table written as csv, or as a json array of objects keyed by the csv
 * column names; the file is created on the first row, so tables without data leave no
 * file (msprof) ---- */
typedef struct tab {
    msprof_ex_t *x;
    const char *const *cols;
    size_t n_cols, col;
    const char *kind;
    bool opened;
    nnp_outfile_t f;
    nnp_csv_t csv;
    nnp_jw_t jw;
    int err;
    char name[NAME_CAP];
} tab_t;

static void tab_begin(tab_t *t, msprof_ex_t *x, const char *kind, const char *const *cols)
{
    memset(t, 0, sizeof(*t));
    t->x = x;
    t->kind = kind;
    t->cols = cols;
    while (cols[t->n_cols])
        t->n_cols++;
}

static void tab_open(tab_t *t)
{
    bool js = t->x->o->is_json;
    snprintf(t->name, sizeof(t->name), "%s_%s.%s", t->kind, t->x->ts, js ? "json" : "csv");
    t->err = nnp__out_open(&t->f, t->x->out_dir, t->name);
    if (t->err != NNP_OK)
        return;
    t->opened = true;
    t->err = js ? nnp__jw_init(&t->jw, t->f.fd, false, 0) : nnp__csv_init(&t->csv, t->f.fd);
    if (t->err != NNP_OK)
        return;
    if (js)
        nnp__jw_arr_begin(&t->jw);
    else
        nnp__csv_header(&t->csv, t->cols);
}

static void cell(tab_t *t, const char *text, bool is_num)
{
    bool js = t->x->o->is_json;
    if (t->col == 0 && !t->opened && t->err == NNP_OK)
        tab_open(t);
    if (t->err != NNP_OK)
        return;
    if (js) {
        if (t->col == 0)
            nnp__jw_obj_begin(&t->jw);
        nnp__jw_key(&t->jw, t->cols[t->col]);
        if (is_num)
            nnp__jw_raw(&t->jw, text);
        else
            nnp__jw_str(&t->jw, text);
    } else {
        nnp__csv_str(&t->csv, text);
    }
    if (++t->col == t->n_cols) {
        t->col = 0;
        if (js)
            nnp__jw_obj_end(&t->jw);
        else
            nnp__csv_end_row(&t->csv);
    }
}

static void cell_s(tab_t *t, const char *s)
{
    cell(t, s && *s ? s : NA, false);
}
static void cell_na(tab_t *t)
{
    cell(t, NA, false);
}
static void cell_u(tab_t *t, uint64_t v)
{
    char b[32];
    snprintf(b, sizeof(b), "%llu", (unsigned long long)v);
    cell(t, b, true);
}
static void cell_dur(tab_t *t, int64_t ns)
{
    char b[48];
    nnp__msprof_fmt_us(b, sizeof(b), ns);
    cell(t, b, true);
}
/* A monotonic instant as wall-clock microseconds, msprof's time base. */
static void cell_ts(tab_t *t, int64_t ns)
{
    if (ns < 0 || ns == NNP_OPEN_END)
        cell_na(t);
    else
        cell_dur(t, ns + t->x->diff_ns);
}
static void cell_f(tab_t *t, double v)
{
    char b[64];
    snprintf(b, sizeof(b), "%.*f", DEC, v);
    cell(t, b, true);
}

static int tab_end(tab_t *t)
{
    int rc = t->err;
    if (!t->opened)
        return rc;
    if (t->x->o->is_json) {
        nnp__jw_arr_end(&t->jw);
        nnp__jw_line_end(&t->jw);
        if (rc == NNP_OK)
            rc = nnp__jw_flush(&t->jw);
        nnp__jw_fini(&t->jw);
    } else {
        int rc2 = nnp__csv_fini(&t->csv);
        if (rc == NNP_OK)
            rc = rc2;
    }
    rc = nnp__out_commit(&t->f, rc);
    return rc == NNP_OK ? nnp__msprof_record_file(t->x, t->name) : rc;
}

/* ---- grouped statistics (op_statistic, communication_statistic, api_statistic) ---- */
typedef struct sample {
    uint32_t key, key2;
    int64_t dur_ns;
} sample_t;

typedef struct group {
    uint32_t key, key2;
    uint64_t count;
    int64_t total_ns, min_ns, max_ns;
    double sumsq_us2;
} group_t;

static int cmp_sample(const void *a, const void *b)
{
    const sample_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->key2 > y->key2) - (x->key2 < y->key2);
}

/* msprof lists the most expensive group first; ties by key for a stable output. */
static int cmp_group(const void *a, const void *b)
{
    const group_t *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    return cmp_sample(&(sample_t){x->key, x->key2, 0}, &(sample_t){y->key, y->key2, 0});
}

/* Sorts samples and folds them into groups (allocated in *out). */
static int group_samples(sample_t *s, size_t n, group_t **out, size_t *n_out, int64_t *all_ns)
{
    group_t *g = nnp__calloc(n + 1, sizeof(*g));
    size_t k = 0;
    *all_ns = 0;
    if (!g)
        return nnp__fail(NNP_ENOMEM, "export: out of memory");
    qsort(s, n, sizeof(*s), cmp_sample);
    for (size_t i = 0; i < n; i++) {
        double us = (double)s[i].dur_ns / NS_PER_US;
        if (k == 0 || g[k - 1].key != s[i].key || g[k - 1].key2 != s[i].key2)
            g[k++] = (group_t){s[i].key, s[i].key2, 0, 0, INT64_MAX, INT64_MIN, 0.0};
        g[k - 1].count++;
        g[k - 1].total_ns += s[i].dur_ns;
        g[k - 1].min_ns = s[i].dur_ns < g[k - 1].min_ns ? s[i].dur_ns : g[k - 1].min_ns;
        g[k - 1].max_ns = s[i].dur_ns > g[k - 1].max_ns ? s[i].dur_ns : g[k - 1].max_ns;
        g[k - 1].sumsq_us2 += us * us;
        *all_ns += s[i].dur_ns;
    }
    qsort(g, k, sizeof(*g), cmp_group);
    *out = g;
    *n_out = k;
    return NNP_OK;
}

/* ---- summary tables ---- */

static const char *const OP_SUMMARY_COLS[] = {"Device_id",
                                              "Model Name",
                                              "Model ID",
                                              "Task ID",
                                              "Stream ID",
                                              "Infer ID",
                                              "Op Name",
                                              "OP Type",
                                              "OP State",
                                              "Task Type",
                                              "Task Start Time(us)",
                                              "Task Duration(us)",
                                              "Task Wait Time(us)",
                                              "Block Num",
                                              "HF32 Eligible",
                                              "Mix Block Num",
                                              "Input Shapes",
                                              "Input Data Types",
                                              "Input Formats",
                                              "Output Shapes",
                                              "Output Data Types",
                                              "Output Formats",
                                              "Context ID",
                                              "aiv_time(us)",
                                              "aicore_time(us)",
                                              "total_cycles",
                                              NULL};

/* One row per framework op: our ops are what msprof's op_summary rows describe (a graph
 * node and its device time); the duration is the op's kernels when it launched any. */
static int write_op_summary(msprof_ex_t *x)
{
    const nnp_ops_t *op = &x->m->ops;
    tab_t t;
    tab_begin(&t, x, "op_summary", OP_SUMMARY_COLS);
    for (size_t i = 0; i < op->t.n && t.err == NNP_OK; i++) {
        int64_t dur;
        size_t r;
        if (!nnp__msprof_in_window(x, op->start_ns[i]) ||
            !nnp__op_compute_time(x->m, &x->ki, i, &dur))
            continue;
        r = nnp__step_spans_find(&x->spans, op->start_ns[i]);
        cell_u(&t, (uint64_t)x->m->info.device_id);
        cell_na(&t);
        cell_u(&t, op->graph_id[i]);
        cell_na(&t);
        cell_u(&t, op->stream_id[i]);
        if (r == SIZE_MAX)
            cell_na(&t);
        else
            cell_u(&t, x->iter_id[&x->spans.rows[r] - x->st.rows]);
        cell_s(&t, nnp__model_str(x->m, op->name[i]));
        cell_s(&t, nnp__model_str(x->m, op->type[i]));
        cell_na(&t);
        cell_na(&t);
        cell_ts(&t, op->start_ns[i]);
        cell_dur(&t, dur);
        for (int c = 0; c < 3; c++) /* wait time, block num, HF32 */
            cell_na(&t);
        cell_na(&t);
        cell_s(&t, nnp__model_str(x->m, op->shapes[i]));
        cell_s(&t, nnp__model_str(x->m, op->dtypes[i]));
        for (int c = 0; c < 8; c++) /* formats, outputs, context, pmu */
            cell_na(&t);
    }
    return tab_end(&t);
}

static const char *const OP_STAT_COLS[] = {
    "Device_id",    "Model Name",   "OP Type",      "Core Type", "Count", "Total Time(us)",
    "Avg Time(us)", "Min Time(us)", "Max Time(us)", "Ratio(%)",  NULL};
static const char *const COMM_STAT_COLS[] = {"Device_id",      "OP Type",      "Count",
                                             "Total Time(us)", "Min Time(us)", "Avg Time(us)",
                                             "Max Time(us)",   "Ratio(%)",     NULL};
static const char *const API_STAT_COLS[] = {"Device_id", "Level",   "API Name", "Time(us)", "Count",
                                            "Avg(us)",   "Min(us)", "Max(us)",  "Variance", NULL};

/* kind 0 op_statistic, 1 communication_statistic, 2 api_statistic. */
static int write_stats(msprof_ex_t *x, int kind, sample_t *s, size_t n)
{
    static const char *const names[] = {"op_statistic", "communication_statistic", "api_statistic"};
    static const char *const *const cols[] = {OP_STAT_COLS, COMM_STAT_COLS, API_STAT_COLS};
    group_t *g = NULL;
    size_t ng = 0;
    int64_t all;
    tab_t t;
    int rc = group_samples(s, n, &g, &ng, &all);
    if (rc != NNP_OK)
        return rc;
    tab_begin(&t, x, names[kind], cols[kind]);
    for (size_t i = 0; i < ng && t.err == NNP_OK; i++) {
        double avg = (double)g[i].total_ns / NS_PER_US / (double)g[i].count;
        double ratio = all > 0 ? 100.0 * (double)g[i].total_ns / (double)all : 0.0;
        const char *key = kind == 1 ? nnp_comm_kind_name((nnp_comm_kind_t)g[i].key)
                                    : nnp__model_str(x->m, g[i].key);
        cell_u(&t, (uint64_t)x->m->info.device_id);
        if (kind == 0) {
            cell_na(&t);
            cell_s(&t, key);
            cell_na(&t);
            cell_u(&t, g[i].count);
            cell_dur(&t, g[i].total_ns);
            cell_f(&t, avg);
            cell_dur(&t, g[i].min_ns);
            cell_dur(&t, g[i].max_ns);
            cell_f(&t, ratio);
        } else if (kind == 1) {
            cell_s(&t, key);
            cell_u(&t, g[i].count);
            cell_dur(&t, g[i].total_ns);
            cell_dur(&t, g[i].min_ns);
            cell_f(&t, avg);
            cell_dur(&t, g[i].max_ns);
            cell_f(&t, ratio);
        } else {
            double var = g[i].sumsq_us2 / (double)g[i].count - avg * avg;
            cell_s(&t, nnp__model_str(x->m, g[i].key2));
            cell_s(&t, key);
            cell_dur(&t, g[i].total_ns);
            cell_u(&t, g[i].count);
            cell_f(&t, avg);
            cell_dur(&t, g[i].min_ns);
            cell_dur(&t, g[i].max_ns);
            cell_f(&t, var < 0 ? 0.0 : var);
        }
    }
    nnp__free(g);
    return tab_end(&t);
}

static int write_op_statistic(msprof_ex_t *x)
{
    const nnp_ops_t *op = &x->m->ops;
    sample_t *s = nnp__calloc(op->t.n + 1, sizeof(*s));
    size_t n = 0;
    int rc;
    if (!s)
        return nnp__fail(NNP_ENOMEM, "export: out of memory");
    for (size_t i = 0; i < op->t.n; i++) {
        int64_t dur;
        if (nnp__msprof_in_window(x, op->start_ns[i]) &&
            nnp__op_compute_time(x->m, &x->ki, i, &dur))
            s[n++] = (sample_t){op->type[i], 0, dur};
    }
    rc = write_stats(x, 0, s, n);
    nnp__free(s);
    return rc;
}

static int write_comm_statistic(msprof_ex_t *x)
{
    const nnp_comms_t *c = &x->m->comms;
    sample_t *s = nnp__calloc(c->t.n + 1, sizeof(*s));
    size_t n = 0;
    int rc;
    if (!s)
        return nnp__fail(NNP_ENOMEM, "export: out of memory");
    for (size_t i = 0; i < c->t.n; i++)
        if (c->end_ns[i] != NNP_OPEN_END && nnp__msprof_in_window(x, c->start_ns[i]))
            s[n++] = (sample_t){c->kind[i], 0, c->end_ns[i] - c->start_ns[i]};
    rc = write_stats(x, 1, s, n);
    nnp__free(s);
    return rc;
}

/* Host ranges, paired by host_info's rule (host_pairs.h: an end closes the latest open
 * begin of the same thread, module, event and stage); Level = module, API Name = event. */
static int write_api_statistic(msprof_ex_t *x)
{
    const nnp_host_rows_t *h = &x->m->host;
    sample_t *s = nnp__calloc(h->t.n + 1, sizeof(*s));
    size_t n = 0, *begin_of = NULL;
    int rc;
    if (!s || nnp__host_pairs(h, x->m->threads.t.n, &begin_of) != NNP_OK) {
        nnp__free(s);
        return nnp__fail(NNP_ENOMEM, "export: out of memory");
    }
    for (size_t i = 0; i < h->t.n; i++) {
        size_t b = begin_of[i];
        if (b != NNP_HOST_NO_PAIR && nnp__msprof_in_window(x, h->ts_ns[b]))
            s[n++] = (sample_t){h->event[b], h->module[b], h->ts_ns[i] - h->ts_ns[b]};
    }
    rc = write_stats(x, 2, s, n);
    nnp__free(s);
    nnp__free(begin_of);
    return rc;
}

static const char *const TASK_TIME_COLS[] = {"Device_id",      "kernel_name",   "kernel_type",
                                             "stream_id",      "task_id",       "task_time(us)",
                                             "task_start(us)", "task_stop(us)", NULL};

static int write_task_time(msprof_ex_t *x)
{
    const nnp_kernels_t *k = &x->m->kernels;
    tab_t t;
    tab_begin(&t, x, "task_time", TASK_TIME_COLS);
    for (size_t i = 0; i < k->t.n && t.err == NNP_OK; i++) {
        if (k->end_ns[i] == NNP_OPEN_END || !nnp__msprof_in_window(x, k->start_ns[i]))
            continue;
        cell_u(&t, k->device_id[i]);
        cell_s(&t, nnp__model_str(x->m, k->name[i]));
        cell_s(&t, nnp__model_str(x->m, k->type[i]));
        cell_u(&t, k->stream_id[i]);
        cell_na(&t);
        cell_dur(&t, k->end_ns[i] - k->start_ns[i]);
        cell_ts(&t, k->start_ns[i]);
        cell_ts(&t, k->end_ns[i]);
    }
    return tab_end(&t);
}

static const char *const STEP_COLS[] = {"Device_id",
                                        "Iteration ID",
                                        "FP Start(us)",
                                        "BP End(us)",
                                        "Iteration End(us)",
                                        "Iteration Time(us)",
                                        "FP to BP Time(us)",
                                        "Iteration Refresh(us)",
                                        "Data Aug Bound(us)",
                                        "Model ID",
                                        "Reduce Start(us)",
                                        "Reduce Duration(us)",
                                        NULL};

/* Step trace rows: msprof's Iteration Refresh is our tail (bp end -> step end) and Data
 * Aug Bound our iteration interval (previous end -> fp start), as MindSpore maps them. */
static int write_step_trace_summary(msprof_ex_t *x)
{
    tab_t t;
    /* A json summary would collide with the timeline's step_trace_{ts}.json. */
    tab_begin(&t, x, x->o->is_json ? "step_trace_summary" : "step_trace", STEP_COLS);
    for (size_t i = 0; i < x->st.n && t.err == NNP_OK; i++) {
        const nnp_step_row_t *r = &x->st.rows[i];
        if (!x->row_sel[i])
            continue;
        cell_u(&t, (uint64_t)x->m->info.device_id);
        cell_u(&t, x->iter_id[i]);
        cell_ts(&t, r->fp_ns);
        cell_ts(&t, r->bp_ns);
        cell_ts(&t, r->end_ns);
        cell_dur(&t, r->total_ns);
        cell_dur(&t, r->fp_and_bp_ns);
        cell_dur(&t, r->tail_ns);
        cell_dur(&t, r->iteration_interval_ns);
        cell_u(&t, nnp__msprof_is_step_mode(x) ? NNP_MSPROF_STEP_MODEL_ID : r->graph_id);
        cell_na(&t);
        cell_na(&t);
    }
    return tab_end(&t);
}

/* ---- memory_record / operator_memory: memory.c's two CSVs (the profile_memory analysis,
 * docs/OUTPUTS.md "Memory") are written into a temporary directory inside the output
 * directory, then read back row by row and re-emitted as export tables: times moved to
 * the wall clock, empty cells as N/A, csv or json, rows outside --iteration-id dropped.
 * Running totals stay those of the whole run (memory.c replays every event). ---- */

/* Temporary directory for memory.c's files; the leading dot hides it from README.txt. */
#define MEM_TMP_DIR "." NNP_MSPROF_OUT_DIR "_memXXXXXX"
/* Most columns of a memory table (operator_memory has 10). */
#define MEM_MAX_COLS 16
/* A CSV record longer than this is not one of memory.c's (names are bounded by the model's
 * string table); it is reported as an error rather than grown without limit. */
#define MEM_ROW_MAX_BYTES (1u << 20)
#define MEM_ROW_INITIAL   256
/* Digits an int64 microsecond integer part may have without overflow in ns. */
#define US_MAX_DIGITS 15

/* One CSV record: NUL-separated fields in buf, field k at buf + off[k]. */
typedef struct csv_rec {
    char *buf;
    size_t len, cap;
    size_t off[MEM_MAX_COLS];
    size_t n;
} csv_rec_t;

static int rec_put(csv_rec_t *r, char ch)
{
    if (r->len == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : MEM_ROW_INITIAL;
        char *b;
        if (cap > MEM_ROW_MAX_BYTES)
            return nnp__fail(NNP_EIO, "export: memory table row over %u bytes", MEM_ROW_MAX_BYTES);
        b = nnp__realloc(r->buf, cap);
        if (!b)
            return nnp__fail(NNP_ENOMEM, "export: out of memory");
        r->buf = b;
        r->cap = cap;
    }
    r->buf[r->len++] = ch;
    return NNP_OK;
}

/* Reads one RFC 4180 record (the quoting csv_writer.c writes). *got is false at the end
 * of the file. */
static int rec_read(FILE *f, csv_rec_t *r, bool *got)
{
    bool in_quotes = false;
    int ch, rc = NNP_OK;
    r->len = 0;
    r->n = 1;
    r->off[0] = 0;
    *got = false;
    while (rc == NNP_OK && (ch = getc(f)) != EOF) {
        *got = true;
        if (in_quotes) {
            if (ch != '"') {
                rc = rec_put(r, (char)ch);
                continue;
            }
            ch = getc(f);
            if (ch == '"') {
                rc = rec_put(r, '"');
                continue;
            }
            in_quotes = false;
            if (ch == EOF)
                break;
        }
        if (ch == '"') {
            in_quotes = true;
        } else if (ch == ',') {
            if (r->n == MEM_MAX_COLS)
                return nnp__fail(NNP_EIO, "export: memory table row over %d columns", MEM_MAX_COLS);
            rc = rec_put(r, '\0');
            r->off[r->n++] = r->len;
        } else if (ch == '\n') {
            break;
        } else if (ch != '\r') {
            rc = rec_put(r, (char)ch);
        }
    }
    if (rc == NNP_OK && *got)
        rc = rec_put(r, '\0');
    if (rc == NNP_OK && ferror(f))
        rc = nnp__fail(NNP_EIO, "export: cannot read a memory table");
    return rc;
}

/* Parses memory.c's "[-]<digits>.<3 digits>" microseconds back into exact ns. */
static bool parse_us(const char *s, int64_t *ns)
{
    bool neg = *s == '-';
    int64_t whole = 0, frac = 0;
    int digits = 0;
    s += neg;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (++digits > US_MAX_DIGITS)
            return false;
        whole = whole * 10 + (*s - '0');
    }
    if (digits == 0 || *s++ != '.')
        return false;
    for (digits = 0; *s >= '0' && *s <= '9'; s++, digits++)
        frac = frac * 10 + (*s - '0');
    if (digits != 3 || *s)
        return false;
    *ns = (whole * NS_PER_US + frac) * (neg ? -1 : 1);
    return true;
}

/* Copies memory.c's CSV src into the table kind. types has one letter per column: 'n'
 * number, 's' text, 't' monotonic instant in us (moved to the wall clock; the first one
 * decides whether the row is in the --iteration-id window, and a row without it is not). */
static int convert_mem_table(msprof_ex_t *x, const char *src, const char *kind,
                             const char *const *cols, const char *types)
{
    FILE *f = fopen(src, "r");
    csv_rec_t r = {0};
    bool got, is_header = true;
    tab_t t;
    int rc = NNP_OK;
    if (!f)
        return nnp__fail(NNP_EIO, "export: cannot open '%s'", src);
    tab_begin(&t, x, kind, cols);
    while (rc == NNP_OK && t.err == NNP_OK && (rc = rec_read(f, &r, &got)) == NNP_OK && got) {
        int64_t ns = 0;
        bool keep = !x->o->has_iteration, seen_t = false;
        if (r.n != t.n_cols) {
            rc = nnp__fail(NNP_EIO, "export: '%s': %zu columns, expected %zu", src, r.n, t.n_cols);
            break;
        }
        if (is_header) {
            for (size_t k = 0; k < r.n && rc == NNP_OK; k++)
                if (strcmp(r.buf + r.off[k], cols[k]) != 0)
                    rc = nnp__fail(NNP_EIO, "export: '%s': unexpected column '%s'", src,
                                   r.buf + r.off[k]);
            is_header = false;
            continue;
        }
        for (size_t k = 0; k < r.n && !keep; k++)
            if (types[k] == 't' && !seen_t) {
                seen_t = true;
                keep = parse_us(r.buf + r.off[k], &ns) && nnp__msprof_in_window(x, ns);
            }
        for (size_t k = 0; k < r.n && keep; k++) {
            const char *v = r.buf + r.off[k];
            char b[48];
            if (!*v) {
                cell_na(&t);
            } else if (types[k] == 's') {
                cell_s(&t, v);
            } else if (types[k] == 't') {
                if (!parse_us(v, &ns)) {
                    rc = nnp__fail(NNP_EIO, "export: '%s': bad time '%s'", src, v);
                    break;
                }
                nnp__msprof_fmt_us(b, sizeof(b), ns + x->diff_ns);
                cell(&t, b, true);
            } else {
                cell(&t, v, true);
            }
        }
    }
    fclose(f);
    nnp__free(r.buf);
    if (rc != NNP_OK && t.err == NNP_OK)
        t.err = rc;
    return tab_end(&t);
}

/* memory_record and operator_memory, when the run recorded tensor memory. */
static int write_memory(msprof_ex_t *x)
{
    static const struct {
        const char *src, *kind;
        const char *const *cols;
        const char *types;
    } tables[] = {
        {"memory_record_0.csv", "memory_record", nnp__memory_record_cols, "nstnns"},
        {"operator_memory_0.csv", "operator_memory", nnp__operator_memory_cols, "nsntnnnnns"},
    };
    char tmp[NNP_PATH_MAX], src[NNP_PATH_MAX];
    nnp_actx_t c;
    nnp_findings_t fnd;
    int rc;
    if (x->m->mem.t.n == 0)
        return NNP_OK;
    rc = nnp__path_join(tmp, sizeof(tmp), x->out_dir, MEM_TMP_DIR);
    if (rc != NNP_OK)
        return rc;
    if (!mkdtemp(tmp))
        return nnp__fail(NNP_EIO, "export: cannot create a directory in '%s'", x->out_dir);
    memset(&c, 0, sizeof(c));
    c.m = x->m;
    c.out_dir = tmp;
    c.rank = 0; /* the file names below */
    nnp__findings_init(&fnd);
    rc = nnp__memory_write(&c, &x->st, &fnd);
    for (size_t i = 0; i < NNP_ARRAY_LEN(tables) && rc == NNP_OK; i++) {
        rc = nnp__path_join(src, sizeof(src), tmp, tables[i].src);
        if (rc == NNP_OK)
            rc = convert_mem_table(x, src, tables[i].kind, tables[i].cols, tables[i].types);
    }
    if (nnp__msprof_rm_tree(tmp) != NNP_OK && rc == NNP_OK)
        rc = nnp__fail(NNP_EIO, "export: cannot remove '%s'", tmp);
    return rc;
}

int nnp__msprof_write_summary(msprof_ex_t *x)
{
    int rc = NNP_OK;
    int (*const writers[])(msprof_ex_t *) = {
        write_op_summary,     write_op_statistic,  write_task_time, write_step_trace_summary,
        write_comm_statistic, write_api_statistic, write_memory};
    for (size_t i = 0; i < NNP_ARRAY_LEN(writers) && rc == NNP_OK; i++)
        rc = writers[i](x);
    return rc;
}
