/* msprof_export.c - `nnprof export timeline|summary` of one raw directory: imports it,
 * runs the step trace and overlap analyses, selects the iterations asked for (seed 002:
 * --model-id 4294967295 = step mode, other ids count executions of that graph) and writes
 * msprof-named files (reference/formats.md section 3) into mindstudio_profiler_output/.
 * Called by tools/nnprof/cmd_export.c. Values we cannot fill are "N/A", as msprof. */
#include "export/msprof_export.h"

#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analyse/analyse.h"
#include "read/raw_import.h"
#include "util/csv_writer.h"
#include "util/json_writer.h"

/* msprof writes "N/A" where a column does not apply (formats.md section 3). */
#define NA        "N/A"
#define NS_PER_US 1000
/* Decimals of the percentage/average columns (msprof writes 3). */
#define DEC 3
/* Open file descriptors nftw may use while removing a tree. */
#define NFTW_FDS 16
/* Chrome-trace pids of the msprof processes (any distinct small ints do). */
enum { PID_CANN = 1, PID_HW, PID_COMM, PID_OVERLAP, PID_STEP };
#define NAME_CAP 64

typedef struct ex {
    const nnp_model_t *m;
    const nnp_msprof_opts_t *o;
    char out_dir[NNP_PATH_MAX];
    char ts[NNP_MSPROF_TS_LEN];
    nnp_step_trace_t st;
    nnp_overlap_t ov;
    nnp_kindex_t ki;
    nnp_step_spans_t spans;
    uint64_t *iter_id; /* per step row: its iteration id (graph index or step id) */
    bool *row_sel;     /* per step row: selected */
    nnp_interval_t *win;
    size_t n_win;
    nnp_msprof_result_t *res;
    int64_t diff_ns; /* wall - monotonic */
} ex_t;

/* ---- selection ---- */

static bool in_window(const ex_t *x, int64_t t)
{
    if (!x->o->has_iteration)
        return true;
    for (size_t i = 0; i < x->n_win; i++)
        if (t >= x->win[i].start_ns && t < x->win[i].end_ns)
            return true;
    return false;
}

/* Iteration ids and the selected rows. Graph mode numbers the executions of each graph
 * 1, 2, ... in begin order (seed 002: "每个Graph执行一次,Iteration ID加1"); step mode uses
 * the framework step id (MindSpore >= 2.3 step mode). */
static int select_rows(ex_t *x)
{
    const nnp_step_trace_t *st = &x->st;
    bool step_mode = x->o->has_iteration && x->o->model_id == NNP_MSPROF_STEP_MODEL_ID;
    uint64_t last;
    size_t k = 0;
    x->iter_id = nnp__calloc(st->n + 1, sizeof(*x->iter_id));
    x->row_sel = nnp__calloc(st->n + 1, sizeof(*x->row_sel));
    x->win = nnp__calloc(st->n + 1, sizeof(*x->win));
    if (!x->iter_id || !x->row_sel || !x->win)
        return nnp__fail(NNP_ENOMEM, "export: out of memory");
    for (size_t i = 0; i < st->n; i++) {
        uint64_t n = 0;
        for (size_t j = 0; j < i; j++)
            n += st->rows[j].graph_id == st->rows[i].graph_id;
        x->iter_id[i] = step_mode ? st->rows[i].step_id : n + 1;
    }
    if (!x->o->has_iteration) {
        for (size_t i = 0; i < st->n; i++)
            x->row_sel[i] = true;
        return NNP_OK;
    }
    last = x->o->iteration_id + x->o->iteration_count - 1;
    if (last < x->o->iteration_id)
        last = UINT64_MAX;
    for (size_t i = 0; i < st->n; i++) {
        if (!step_mode && st->rows[i].graph_id != x->o->model_id)
            continue;
        if (x->iter_id[i] < x->o->iteration_id || x->iter_id[i] > last)
            continue;
        x->row_sel[i] = true;
        x->win[k++] = (nnp_interval_t){st->rows[i].begin_ns, st->rows[i].end_ns};
    }
    x->n_win = k;
    if (k == 0)
        return nnp__fail(NNP_ENOENT, "iteration %llu of model %lu not found",
                         (unsigned long long)x->o->iteration_id, (unsigned long)x->o->model_id);
    return NNP_OK;
}

/* ---- number cells ---- */

/* ns as microseconds with 3 decimals, exact (integer arithmetic). */
static void fmt_us(char *b, size_t cap, int64_t ns)
{
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    snprintf(b, cap, "%s%llu.%03llu", ns < 0 ? "-" : "", (unsigned long long)(a / NS_PER_US),
             (unsigned long long)(a % NS_PER_US));
}

/* ---- a summary table written as csv, or as a json array of objects keyed by the csv
 * column names; the file is created on the first row, so tables without data leave no
 * file (msprof) ---- */
typedef struct tab {
    ex_t *x;
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

static void tab_begin(tab_t *t, ex_t *x, const char *kind, const char *const *cols)
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
    fmt_us(b, sizeof(b), ns);
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

static int record_file(ex_t *x, const char *name)
{
    if (x->res && x->res->n_files < NNP_MSPROF_MAX_FILES)
        nnp__strlcpy(x->res->files[x->res->n_files++], name, sizeof(x->res->files[0]));
    return NNP_OK;
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
    return rc == NNP_OK ? record_file(t->x, t->name) : rc;
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
static int write_op_summary(ex_t *x)
{
    const nnp_ops_t *op = &x->m->ops;
    tab_t t;
    tab_begin(&t, x, "op_summary", OP_SUMMARY_COLS);
    for (size_t i = 0; i < op->t.n && t.err == NNP_OK; i++) {
        int64_t dur;
        size_t r;
        if (!in_window(x, op->start_ns[i]) || !nnp__op_compute_time(x->m, &x->ki, i, &dur))
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
static int write_stats(ex_t *x, int kind, sample_t *s, size_t n)
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

static int write_op_statistic(ex_t *x)
{
    const nnp_ops_t *op = &x->m->ops;
    sample_t *s = nnp__calloc(op->t.n + 1, sizeof(*s));
    size_t n = 0;
    int rc;
    if (!s)
        return nnp__fail(NNP_ENOMEM, "export: out of memory");
    for (size_t i = 0; i < op->t.n; i++) {
        int64_t dur;
        if (in_window(x, op->start_ns[i]) && nnp__op_compute_time(x->m, &x->ki, i, &dur))
            s[n++] = (sample_t){op->type[i], 0, dur};
    }
    rc = write_stats(x, 0, s, n);
    nnp__free(s);
    return rc;
}

static int write_comm_statistic(ex_t *x)
{
    const nnp_comms_t *c = &x->m->comms;
    sample_t *s = nnp__calloc(c->t.n + 1, sizeof(*s));
    size_t n = 0;
    int rc;
    if (!s)
        return nnp__fail(NNP_ENOMEM, "export: out of memory");
    for (size_t i = 0; i < c->t.n; i++)
        if (c->end_ns[i] != NNP_OPEN_END && in_window(x, c->start_ns[i]))
            s[n++] = (sample_t){c->kind[i], 0, c->end_ns[i] - c->start_ns[i]};
    rc = write_stats(x, 1, s, n);
    nnp__free(s);
    return rc;
}

/* Host ranges: a begin row is closed by the latest open begin of the same thread, module,
 * event and stage (host_info's pairing rule); Level = module, API Name = event. */
static int write_api_statistic(ex_t *x)
{
    const nnp_host_rows_t *h = &x->m->host;
    sample_t *s = nnp__calloc(h->t.n + 1, sizeof(*s));
    size_t *open = nnp__calloc(h->t.n + 1, sizeof(*open));
    size_t n = 0, n_open = 0;
    int rc;
    if (!s || !open) {
        nnp__free(s);
        nnp__free(open);
        return nnp__fail(NNP_ENOMEM, "export: out of memory");
    }
    for (size_t i = 0; i < h->t.n; i++) {
        if (h->kind[i] == 0) {
            open[n_open++] = i;
            continue;
        }
        if (h->kind[i] != 1)
            continue;
        for (size_t k = n_open; k-- > 0;) {
            size_t b = open[k];
            if (h->thread[b] != h->thread[i] || h->module[b] != h->module[i] ||
                h->event[b] != h->event[i] || h->stage[b] != h->stage[i])
                continue;
            if (in_window(x, h->ts_ns[b]))
                s[n++] = (sample_t){h->event[b], h->module[b], h->ts_ns[i] - h->ts_ns[b]};
            memmove(&open[k], &open[k + 1], (n_open - k - 1) * sizeof(*open));
            n_open--;
            break;
        }
    }
    rc = write_stats(x, 2, s, n);
    nnp__free(s);
    nnp__free(open);
    return rc;
}

static const char *const TASK_TIME_COLS[] = {"Device_id",      "kernel_name",   "kernel_type",
                                             "stream_id",      "task_id",       "task_time(us)",
                                             "task_start(us)", "task_stop(us)", NULL};

static int write_task_time(ex_t *x)
{
    const nnp_kernels_t *k = &x->m->kernels;
    tab_t t;
    tab_begin(&t, x, "task_time", TASK_TIME_COLS);
    for (size_t i = 0; i < k->t.n && t.err == NNP_OK; i++) {
        if (k->end_ns[i] == NNP_OPEN_END || !in_window(x, k->start_ns[i]))
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

static bool is_step_mode(const ex_t *x)
{
    return x->o->has_iteration && x->o->model_id == NNP_MSPROF_STEP_MODEL_ID;
}

/* Step trace rows: msprof's Iteration Refresh is our tail (bp end -> step end) and Data
 * Aug Bound our iteration interval (previous end -> fp start), as MindSpore maps them. */
static int write_step_trace_summary(ex_t *x)
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
        cell_u(&t, is_step_mode(x) ? NNP_MSPROF_STEP_MODEL_ID : r->graph_id);
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
static int convert_mem_table(ex_t *x, const char *src, const char *kind, const char *const *cols,
                             const char *types)
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
                keep = parse_us(r.buf + r.off[k], &ns) && in_window(x, ns);
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
                fmt_us(b, sizeof(b), ns + x->diff_ns);
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

static int rm_tree(const char *path);

/* memory_record and operator_memory, when the run recorded tensor memory. */
static int write_memory(ex_t *x)
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
    if (rm_tree(tmp) != NNP_OK && rc == NNP_OK)
        rc = nnp__fail(NNP_EIO, "export: cannot remove '%s'", tmp);
    return rc;
}

/* ---- timeline (Chrome trace JSON as msprof writes it: "X" slices in us, "M" names) ---- */
typedef struct tl {
    ex_t *x;
    const char *kind;
    nnp_outfile_t f;
    nnp_jw_t w;
    bool opened;
    int err;
    char name[NAME_CAP];
} tl_t;

static void tl_open(tl_t *t)
{
    if (t->opened || t->err != NNP_OK)
        return;
    snprintf(t->name, sizeof(t->name), "%s_%s.json", t->kind, t->x->ts);
    t->err = nnp__out_open(&t->f, t->x->out_dir, t->name);
    if (t->err != NNP_OK)
        return;
    t->opened = true;
    t->err = nnp__jw_init(&t->w, t->f.fd, false, 0);
    if (t->err == NNP_OK)
        nnp__jw_arr_begin(&t->w);
}

static void tl_num(tl_t *t, const char *key, int64_t ns)
{
    char b[48];
    fmt_us(b, sizeof(b), ns);
    nnp__jw_key(&t->w, key);
    nnp__jw_raw(&t->w, b);
}

static void tl_meta(tl_t *t, const char *what, int pid, uint64_t tid, const char *name)
{
    tl_open(t);
    if (t->err != NNP_OK)
        return;
    nnp__jw_obj_begin(&t->w);
    nnp__jw_key(&t->w, "name");
    nnp__jw_str(&t->w, what);
    nnp__jw_key(&t->w, "ph");
    nnp__jw_str(&t->w, "M");
    nnp__jw_key(&t->w, "pid");
    nnp__jw_int(&t->w, pid);
    nnp__jw_key(&t->w, "tid");
    nnp__jw_uint(&t->w, tid);
    nnp__jw_key(&t->w, "args");
    nnp__jw_obj_begin(&t->w);
    nnp__jw_key(&t->w, "name");
    nnp__jw_str(&t->w, name);
    nnp__jw_obj_end(&t->w);
    nnp__jw_obj_end(&t->w);
}

/* Opens an "X" slice; the caller may add keys (args) and must call nnp__jw_obj_end. */
static bool tl_slice(tl_t *t, const char *name, int pid, uint64_t tid, int64_t s, int64_t e)
{
    tl_open(t);
    if (t->err != NNP_OK)
        return false;
    nnp__jw_obj_begin(&t->w);
    nnp__jw_key(&t->w, "name");
    nnp__jw_str(&t->w, name && *name ? name : NA);
    nnp__jw_key(&t->w, "ph");
    nnp__jw_str(&t->w, "X");
    nnp__jw_key(&t->w, "pid");
    nnp__jw_int(&t->w, pid);
    nnp__jw_key(&t->w, "tid");
    nnp__jw_uint(&t->w, tid);
    tl_num(t, "ts", s + t->x->diff_ns);
    tl_num(t, "dur", e - s);
    return true;
}

static int tl_end(tl_t *t)
{
    int rc = t->err;
    if (!t->opened)
        return rc;
    nnp__jw_arr_end(&t->w);
    nnp__jw_line_end(&t->w);
    if (rc == NNP_OK)
        rc = nnp__jw_flush(&t->w);
    nnp__jw_fini(&t->w);
    rc = nnp__out_commit(&t->f, rc);
    return rc == NNP_OK ? record_file(t->x, t->name) : rc;
}

/* Overlap lanes, as msprof's "Overlap Analysis" process names its threads. */
static const char *const OVERLAP_LANES[] = {"Computing", "Communication",
                                            "Communication(Not Overlapped)", "Free"};

static void tl_overlap(tl_t *t)
{
    const nnp_interval_list_t *l[] = {&t->x->ov.computing, &t->x->ov.communication,
                                      &t->x->ov.comm_not_overlapped, &t->x->ov.free};
    bool any = false;
    for (size_t k = 0; k < NNP_ARRAY_LEN(l); k++) {
        bool lane = false;
        for (size_t i = 0; i < l[k]->n; i++) {
            if (!in_window(t->x, l[k]->v[i].start_ns))
                continue;
            if (!any)
                tl_meta(t, "process_name", PID_OVERLAP, 0, "Overlap Analysis");
            if (!lane)
                tl_meta(t, "thread_name", PID_OVERLAP, k, OVERLAP_LANES[k]);
            any = lane = true;
            if (tl_slice(t, OVERLAP_LANES[k], PID_OVERLAP, k, l[k]->v[i].start_ns,
                         l[k]->v[i].end_ns))
                nnp__jw_obj_end(&t->w);
        }
    }
}

/* msprof_{ts}.json: CANN (host ops per host thread), Ascend Hardware (kernels per
 * stream), Communication (one plane per group) and Overlap Analysis. Thread names are
 * written once per thread, before its first slice is closed. */
static int write_msprof_timeline(ex_t *x)
{
    const nnp_model_t *m = x->m;
    tl_t t = {.x = x, .kind = "msprof"};
    bool seen_p = false;
    char b[NAME_CAP];
    for (size_t i = 0; i < m->ops.t.n; i++) {
        uint32_t th = m->ops.thread[i];
        uint64_t tid = th < m->threads.t.n ? m->threads.tid[th] : 0;
        if (m->ops.end_ns[i] == NNP_OPEN_END || !in_window(x, m->ops.start_ns[i]))
            continue;
        if (!seen_p)
            tl_meta(&t, "process_name", PID_CANN, 0, "CANN");
        seen_p = true;
        snprintf(b, sizeof(b), "Thread %llu", (unsigned long long)tid);
        tl_meta(&t, "thread_name", PID_CANN, tid, b);
        if (tl_slice(&t, nnp__model_str(m, m->ops.name[i]), PID_CANN, tid, m->ops.start_ns[i],
                     m->ops.end_ns[i])) {
            nnp__jw_key(&t.w, "args");
            nnp__jw_obj_begin(&t.w);
            nnp__jw_key(&t.w, "OP Type");
            nnp__jw_str(&t.w, nnp__model_str(m, m->ops.type[i]));
            nnp__jw_key(&t.w, "Model ID");
            nnp__jw_uint(&t.w, m->ops.graph_id[i]);
            nnp__jw_obj_end(&t.w);
            nnp__jw_obj_end(&t.w);
        }
    }
    seen_p = false;
    for (size_t i = 0; i < m->kernels.t.n; i++) {
        if (m->kernels.end_ns[i] == NNP_OPEN_END || !in_window(x, m->kernels.start_ns[i]))
            continue;
        if (!seen_p)
            tl_meta(&t, "process_name", PID_HW, 0, "Ascend Hardware");
        seen_p = true;
        snprintf(b, sizeof(b), "Stream %u", (unsigned)m->kernels.stream_id[i]);
        tl_meta(&t, "thread_name", PID_HW, m->kernels.stream_id[i], b);
        if (tl_slice(&t, nnp__model_str(m, m->kernels.name[i]), PID_HW, m->kernels.stream_id[i],
                     m->kernels.start_ns[i], m->kernels.end_ns[i]))
            nnp__jw_obj_end(&t.w);
    }
    seen_p = false;
    for (size_t i = 0; i < m->comms.t.n; i++) {
        const char *g = nnp__model_str(m, m->comms.group[i]);
        if (m->comms.end_ns[i] == NNP_OPEN_END || !in_window(x, m->comms.start_ns[i]))
            continue;
        if (!seen_p)
            tl_meta(&t, "process_name", PID_COMM, 0, "Communication");
        seen_p = true;
        snprintf(b, sizeof(b), "Plane %s", *g ? g : "0");
        tl_meta(&t, "thread_name", PID_COMM, m->comms.group[i], b);
        if (tl_slice(&t, nnp__model_str(m, m->comms.name[i]), PID_COMM, m->comms.group[i],
                     m->comms.start_ns[i], m->comms.end_ns[i]))
            nnp__jw_obj_end(&t.w);
    }
    tl_overlap(&t);
    return tl_end(&t);
}

/* step_trace_{ts}.json: one "Step Trace" thread per model id, one slice per iteration. */
static int write_step_trace_timeline(ex_t *x)
{
    tl_t t = {.x = x, .kind = "step_trace"};
    char b[NAME_CAP];
    for (size_t i = 0; i < x->st.n; i++) {
        const nnp_step_row_t *r = &x->st.rows[i];
        uint64_t model = is_step_mode(x) ? NNP_MSPROF_STEP_MODEL_ID : r->graph_id;
        if (!x->row_sel[i])
            continue;
        if (!t.opened)
            tl_meta(&t, "process_name", PID_STEP, 0, "Step Trace");
        snprintf(b, sizeof(b), "Model ID:%llu", (unsigned long long)model);
        tl_meta(&t, "thread_name", PID_STEP, model, b);
        snprintf(b, sizeof(b), "Iteration %llu", (unsigned long long)x->iter_id[i]);
        if (tl_slice(&t, b, PID_STEP, model, r->begin_ns, r->end_ns)) {
            nnp__jw_key(&t.w, "args");
            nnp__jw_obj_begin(&t.w);
            nnp__jw_key(&t.w, "Iteration ID");
            nnp__jw_uint(&t.w, x->iter_id[i]);
            nnp__jw_key(&t.w, "Model ID");
            nnp__jw_uint(&t.w, model);
            tl_num(&t, "Iteration Time(us)", r->total_ns);
            tl_num(&t, "FP to BP Time(us)", r->fp_and_bp_ns);
            nnp__jw_obj_end(&t.w);
            nnp__jw_obj_end(&t.w);
        }
    }
    return tl_end(&t);
}

/* ---- file names, stale files and README.txt ---- */

/* What README.txt says of each file (msprof filename_introduction_config, shortened). */
static const struct {
    const char *prefix, *ext, *text;
} DESCRIPTIONS[] = {
    {"msprof", "json",
     "Timeline of host ops (CANN), device tasks per stream, communication "
     "planes and the Overlap Analysis lanes"},
    {"step_trace", "json", "Timeline of iterations per model id"},
    {"op_summary", NULL, "One row per op: model, stream, iteration, time and shapes"},
    {"op_statistic", NULL, "Time per op type: count, total, average, min, max and ratio"},
    {"task_time", NULL, "One row per device task: kernel, stream, start, stop and duration"},
    {"step_trace", "csv", "Per iteration: FP start, BP end, iteration time and phases"},
    {"step_trace_summary", "json", "Per iteration: FP start, BP end, iteration time and phases"},
    {"communication_statistic", NULL, "Time per communication op type"},
    {"api_statistic", NULL, "Time per host API range: count, average, min, max, variance"},
    {"memory_record", NULL, "Tensor memory: running total after every allocation and release"},
    {"operator_memory", NULL, "One row per tensor: size, allocation time, lifetime and totals"},
};

/* Splits "<prefix>_<14 digits>.<ext>"; false for any other name. */
static bool parse_name(const char *name, char *prefix, size_t cap, const char **ext)
{
    const char *dot = strrchr(name, '.'), *us;
    if (!dot || dot - name < NNP_MSPROF_TS_LEN + 1)
        return false;
    us = dot - (NNP_MSPROF_TS_LEN - 1) - 1;
    if (*us != '_' || (size_t)(us - name) >= cap)
        return false;
    for (const char *p = us + 1; p < dot; p++)
        if (*p < '0' || *p > '9')
            return false;
    memcpy(prefix, name, (size_t)(us - name));
    prefix[us - name] = '\0';
    *ext = dot + 1;
    return strcmp(*ext, "csv") == 0 || strcmp(*ext, "json") == 0;
}

/* Index in DESCRIPTIONS, or -1. */
static int describe(const char *prefix, const char *ext)
{
    for (size_t i = 0; i < NNP_ARRAY_LEN(DESCRIPTIONS); i++)
        if (strcmp(DESCRIPTIONS[i].prefix, prefix) == 0 &&
            (!DESCRIPTIONS[i].ext || strcmp(DESCRIPTIONS[i].ext, ext) == 0))
            return (int)i;
    return -1;
}

static bool is_timeline_file(const char *prefix, const char *ext)
{
    return strcmp(ext, "json") == 0 &&
           (strcmp(prefix, "msprof") == 0 || strcmp(prefix, "step_trace") == 0);
}

/* Removes files an earlier export of the same kind left, so the directory holds one
 * consistent export (a re-run replaces, as the atomic rename does for equal names). */
static int remove_stale(ex_t *x)
{
    DIR *d = opendir(x->out_dir);
    struct dirent *e;
    char prefix[NAME_CAP], path[NNP_PATH_MAX];
    const char *ext;
    if (!d)
        return nnp__fail(NNP_EIO, "cannot read '%s'", x->out_dir);
    while ((e = readdir(d)) != NULL) {
        bool mine = false;
        if (!parse_name(e->d_name, prefix, sizeof(prefix), &ext) || describe(prefix, ext) < 0)
            continue;
        if (is_timeline_file(prefix, ext) != x->o->is_timeline)
            continue;
        for (size_t i = 0; x->res && i < x->res->n_files; i++)
            mine |= strcmp(x->res->files[i], e->d_name) == 0;
        if (!mine && nnp__path_join(path, sizeof(path), x->out_dir, e->d_name) == NNP_OK)
            unlink(path);
    }
    closedir(d);
    return NNP_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* README.txt in msprof's format (formats.md section 3): every export file now in the
 * directory, timeline files first, each "N.<base name>.<ext>:<description>". */
static int write_readme(ex_t *x)
{
    DIR *d = opendir(x->out_dir);
    struct dirent *e;
    char *names[2][NNP_MSPROF_MAX_FILES * 2];
    size_t n[2] = {0, 0};
    char prefix[NAME_CAP], line[NNP_PATH_MAX];
    const char *ext;
    nnp_outfile_t f = {.fd = -1};
    int rc;
    if (!d)
        return nnp__fail(NNP_EIO, "cannot read '%s'", x->out_dir);
    while ((e = readdir(d)) != NULL) {
        int k;
        if (!parse_name(e->d_name, prefix, sizeof(prefix), &ext) || describe(prefix, ext) < 0)
            continue;
        k = is_timeline_file(prefix, ext) ? 0 : 1;
        if (n[k] < NNP_ARRAY_LEN(names[k]))
            names[k][n[k]++] = nnp__strdup(e->d_name);
    }
    closedir(d);
    rc = nnp__out_open(&f, x->out_dir, "README.txt");
    for (int k = 0; k < 2 && rc == NNP_OK; k++) {
        const char *head = k == 0 ? "Timeline file description:\n" : "Summary file description:\n";
        qsort(names[k], n[k], sizeof(char *), cmp_str);
        rc = nnp__write_all(f.fd, head, strlen(head));
        for (size_t i = 0; i < n[k] && rc == NNP_OK; i++) {
            int len;
            if (!names[k][i]) {
                rc = nnp__fail(NNP_ENOMEM, "export: out of memory");
                break;
            }
            parse_name(names[k][i], prefix, sizeof(prefix), &ext);
            len = snprintf(line, sizeof(line), "%zu.%s.%s:%s\n", i + 1, prefix, ext,
                           DESCRIPTIONS[describe(prefix, ext)].text);
            rc = nnp__write_all(f.fd, line, (size_t)len);
        }
    }
    if (f.fd >= 0)
        rc = nnp__out_commit(&f, rc);
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < n[k]; i++)
            nnp__free(names[k][i]);
    return rc == NNP_OK ? record_file(x, "README.txt") : rc;
}

/* ---- entry points ---- */

static int now_timestamp(char *ts)
{
    time_t now = time(NULL);
    struct tm tm;
    if (!localtime_r(&now, &tm) || strftime(ts, NNP_MSPROF_TS_LEN, "%Y%m%d%H%M%S", &tm) == 0)
        return nnp__fail(NNP_EIO, "export: cannot format the current time");
    return NNP_OK;
}

static int run_export(ex_t *x)
{
    int rc = NNP_OK;
    if (x->o->is_timeline) {
        rc = write_msprof_timeline(x);
        if (rc == NNP_OK)
            rc = write_step_trace_timeline(x);
        return rc;
    }
    int (*const writers[])(ex_t *) = {
        write_op_summary,     write_op_statistic,  write_task_time, write_step_trace_summary,
        write_comm_statistic, write_api_statistic, write_memory};
    for (size_t i = 0; i < NNP_ARRAY_LEN(writers) && rc == NNP_OK; i++)
        rc = writers[i](x);
    return rc;
}

int nnp__msprof_export(const char *raw_dir, const nnp_msprof_opts_t *o, nnp_msprof_result_t *res)
{
    nnp_model_t m;
    nnp_actx_t c;
    ex_t x;
    int rc;
    memset(&x, 0, sizeof(x));
    memset(&c, 0, sizeof(c));
    if (res)
        memset(res, 0, sizeof(*res));
    rc = nnp__model_init(&m);
    if (rc != NNP_OK)
        return rc;
    x.m = &m;
    x.o = o;
    x.res = res;
    c.m = &m;
    c.rank = 0;
    rc = nnp__import_raw(raw_dir, &m);
    if (rc == NNP_OK)
        rc = o->timestamp[0] ? (nnp__strlcpy(x.ts, o->timestamp, sizeof(x.ts)), NNP_OK)
                             : now_timestamp(x.ts);
    if (rc == NNP_OK)
        rc = nnp__path_join(x.out_dir, sizeof(x.out_dir), raw_dir, NNP_MSPROF_OUT_DIR);
    if (rc != NNP_OK)
        goto out;
    x.diff_ns = m.info.diff_time_us * NS_PER_US;
    rc = nnp__step_trace_run(&c, &x.st);
    if (rc == NNP_OK)
        rc = nnp__overlap_run(&c, &x.st, &x.ov);
    if (rc == NNP_OK)
        rc = nnp__kindex_build(&m, &x.ki);
    if (rc == NNP_OK)
        rc = nnp__step_spans_init(&x.st, &x.spans);
    if (rc == NNP_OK)
        rc = select_rows(&x);
    if (rc == NNP_OK)
        rc = nnp__mkdir_p(x.out_dir, 0700);
    if (rc == NNP_OK)
        rc = run_export(&x);
    if (rc == NNP_OK)
        rc = remove_stale(&x);
    if (rc == NNP_OK)
        rc = write_readme(&x);
    if (rc == NNP_OK && o->clear)
        rc = nnp__msprof_clear(raw_dir);
out:
    nnp__free(x.iter_id);
    nnp__free(x.row_sel);
    nnp__free(x.win);
    nnp__step_spans_fini(&x.spans);
    nnp__kindex_fini(&x.ki);
    nnp__overlap_fini(&x.ov);
    nnp__step_trace_fini(&x.st);
    nnp__model_fini(&m);
    return rc;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Removes path and everything below it; NNP_OK also when it does not exist. */
static int rm_tree(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return NNP_OK;
    if (nftw(path, rm_entry, NFTW_FDS, FTW_DEPTH | FTW_PHYS) != 0)
        return nnp__fail(NNP_EIO, "cannot remove '%s'", path);
    return NNP_OK;
}

int nnp__msprof_clear(const char *raw_dir)
{
    char path[NNP_PATH_MAX];
    struct stat sb;
    int rc = nnp__path_join(path, sizeof(path), raw_dir, NNP_RANK_OUTPUT_DIR);
    if (rc != NNP_OK || lstat(path, &sb) != 0)
        return rc;
    if (nftw(path, rm_entry, NFTW_FDS, FTW_DEPTH | FTW_PHYS) != 0)
        return nnp__fail(NNP_EIO, "--clear: cannot remove '%s'", path);
    return NNP_OK;
}
