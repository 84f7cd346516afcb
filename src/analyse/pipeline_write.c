/* pipeline_write.c - the data pipeline analysis's files, written from the state pipeline.c
 * built and judged: minddata_pipeline_raw_{rank}.csv (MindSpore's columns, one row per op)
 * and minddata_pipeline_summary_{rank}.json/.csv (MindSpore's keys, then nnprof's). Called
 * by nnp__pipeline_write. Rules and units: docs/OUTPUTS.md, "Data pipeline". */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/pipeline_internal.h"
#include "util/csv_writer.h"
#include "util/json_writer.h"

/* Times in ms with 3 decimals: minddata_analyzer.py rounds per_batch_time to 3. */
#define NS_PER_US   1000
#define US_PER_MS   1000
#define MS_DECIMALS 3
/* Hard cap of one output_queue_size cell (curl dynbuf "toobig"); a longer list ends with
 * "...]" so one queue sampled for days cannot exhaust memory. */
#define LIST_MAX_BYTES (64u << 20)
/* The raw CSV's queue columns: size list, average size, length, usage rate. */
#define RAW_QUEUE_COLS 4

/* ns as ms with 3 decimals (whole microseconds, truncated); -1 for none. */
static const char *fmt_ms(char *b, size_t cap, int64_t ns)
{
    if (ns < 0) {
        snprintf(b, cap, "%d", (int)NO_VALUE);
        return b;
    }
    snprintf(b, cap, "%" PRId64 ".%0*" PRId64, ns / NS_PER_US / US_PER_MS, MS_DECIMALS,
             ns / NS_PER_US % US_PER_MS);
    return b;
}

/* ---- a bounded growable text buffer ---- */
typedef struct dbuf {
    char *p;
    size_t len, cap;
    bool full; /* LIST_MAX_BYTES reached: further text dropped */
} dbuf_t;

/* Appends s. Unless forced, text that would pass LIST_MAX_BYTES is dropped and the buffer
 * marked full; forced text (a list's short closing) always goes in. */
static int dbuf_put(dbuf_t *d, const char *s, bool force)
{
    size_t n = strlen(s);
    if (!force && (d->full || d->len + n + 1 > LIST_MAX_BYTES)) {
        d->full = true;
        return NNP_OK;
    }
    if (d->len + n + 1 > d->cap) {
        size_t nc = d->cap ? d->cap : 256;
        char *np;
        while (nc < d->len + n + 1)
            nc *= 2;
        np = nnp__realloc(d->p, nc);
        if (!np)
            return nnp__pipe_oom();
        d->p = np;
        d->cap = nc;
    }
    memcpy(d->p + d->len, s, n + 1);
    d->len += n;
    return NNP_OK;
}

static void dbuf_reset(dbuf_t *d)
{
    d->len = 0;
    d->full = false;
}

/* ---- writing ---- */

/* "[a, b, c]" as Python prints a list (MindSpore writes its lists with csv.writer). */
static int list_children(const pipe_t *p, const pop_t *o, dbuf_t *d)
{
    char b[NUM_BUF];
    int rc;
    dbuf_reset(d);
    rc = dbuf_put(d, "[", true);
    for (size_t k = 0; k < o->n_kids && rc == NNP_OK; k++) {
        snprintf(b, sizeof(b), "%s%" PRId64, k ? ", " : "", p->ops[p->kids[o->kid0 + k]].id);
        rc = dbuf_put(d, b, false);
    }
    return rc == NNP_OK ? dbuf_put(d, d->full ? ", ...]" : "]", true) : rc;
}

/* The op's queue sizes in time order, "...]" closing a list cut at LIST_MAX_BYTES. */
static int list_sizes(const pipe_t *p, const pop_t *o, dbuf_t *d)
{
    char b[NUM_BUF];
    int rc;
    dbuf_reset(d);
    rc = dbuf_put(d, "[", true);
    for (size_t k = 0; k < o->qn && rc == NNP_OK && !d->full; k++) {
        snprintf(b, sizeof(b), "%s%" PRIu32, k ? ", " : "", p->m->queues.size[p->qrows[o->q0 + k]]);
        rc = dbuf_put(d, b, false);
    }
    return rc == NNP_OK ? dbuf_put(d, d->full ? ", ...]" : "]", true) : rc;
}

/* Opens <out_dir>/<prefix>_<rank>.<ext>. */
static int open_out(const nnp_actx_t *c, const char *prefix, const char *ext, nnp_outfile_t *f)
{
    char name[NNP_PATH_MAX];
    snprintf(name, sizeof(name), "%s_%d.%s", prefix, c->rank, ext);
    return nnp__out_open(f, c->out_dir, name);
}

/* minddata_pipeline_raw_{rank}.csv: MindSpore's columns (minddata_pipeline_parser.py),
 * one row per op; every op is kept, with empty queue cells when it has no queue. */
static int write_raw(const nnp_actx_t *c, const pipe_t *p)
{
    static const char *const header[] = {"op_id",
                                         "op_type",
                                         "num_workers",
                                         "output_queue_size",
                                         "output_queue_average_size",
                                         "output_queue_length",
                                         "output_queue_usage_rate",
                                         "sample_interval",
                                         "parent_id",
                                         "children_id",
                                         NULL};
    nnp_outfile_t f;
    nnp_csv_t w;
    dbuf_t d = {NULL, 0, 0, false};
    char b[NUM_BUF];
    int rc = open_out(c, "minddata_pipeline_raw", "csv", &f);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__csv_init(&w, f.fd);
    if (rc == NNP_OK)
        nnp__csv_header(&w, header);
    for (size_t r = 0; r < p->n && rc == NNP_OK; r++) {
        const pop_t *o = &p->ops[p->order[r]];
        double avg = o->qn ? (double)o->size_sum / (double)o->qn : 0;
        nnp__csv_int(&w, o->id);
        nnp__csv_str(&w, o->type);
        nnp__csv_uint(&w, o->workers);
        if (o->qn && (rc = list_sizes(p, o, &d)) == NNP_OK) {
            nnp__csv_str(&w, d.p);
            nnp__csv_double(&w, avg);
            nnp__csv_uint(&w, o->capacity);
            if (o->capacity)
                nnp__csv_double(&w, avg / o->capacity);
            else
                nnp__csv_empty(&w);
        } else {
            for (int k = 0; k < RAW_QUEUE_COLS; k++)
                nnp__csv_empty(&w);
        }
        if (o->interval_ns >= 0)
            nnp__csv_str(&w, fmt_ms(b, sizeof(b), o->interval_ns));
        else
            nnp__csv_empty(&w);
        if (o->parent == -1)
            nnp__csv_empty(&w);
        else
            nnp__csv_int(&w, o->parent);
        if (o->n_kids && rc == NNP_OK && (rc = list_children(p, o, &d)) == NNP_OK)
            nnp__csv_str(&w, d.p);
        else
            nnp__csv_empty(&w);
        nnp__csv_end_row(&w);
    }
    nnp__free(d.p);
    rc = rc == NNP_OK ? nnp__csv_fini(&w) : (nnp__csv_fini(&w), rc);
    return nnp__out_commit(&f, rc);
}

/* The summary as "key: [values]" (JSON) or rows "key,values..." (CSV), from one walk. */
typedef struct out {
    nnp_jw_t *jw;
    nnp_csv_t *csv;
} out_t;

static void out_key(out_t *o, const char *key)
{
    if (o->jw) {
        nnp__jw_key(o->jw, key);
        nnp__jw_arr_begin(o->jw);
    } else {
        nnp__csv_str(o->csv, key);
    }
}

static void out_end(out_t *o)
{
    if (o->jw)
        nnp__jw_arr_end(o->jw);
    else
        nnp__csv_end_row(o->csv);
}

static void out_int(out_t *o, int64_t v)
{
    if (o->jw)
        nnp__jw_int(o->jw, v);
    else
        nnp__csv_int(o->csv, v);
}

static void out_str(out_t *o, const char *s)
{
    if (o->jw)
        nnp__jw_str(o->jw, s);
    else
        nnp__csv_str(o->csv, s);
}

static void out_num(out_t *o, const char *num)
{
    if (o->jw)
        nnp__jw_raw(o->jw, num);
    else
        nnp__csv_str(o->csv, num);
}

/* One key with one value per op (field picked by which). A selector rather than a
 * function pointer per field keeps the six per-op number rows in one loop, and the JSON and
 * CSV forms cannot disagree on what a row holds. */
enum {
    F_AVG_SIZE,
    F_USAGE,
    F_EMPTY,
    F_FULL,
    F_CPU,
    F_CPU_WORKER,
};

static void out_ops_num(out_t *o, const pipe_t *p, const char *key, int which)
{
    char b[NUM_BUF];
    out_key(o, key);
    for (size_t i = 0; i < p->n; i++) {
        const pop_t *x = &p->ops[i];
        double v = which == F_AVG_SIZE ? x->avg_size
                   : which == F_USAGE  ? x->usage_pct
                   : which == F_EMPTY  ? x->empty_pct
                   : which == F_FULL   ? x->full_pct
                   : which == F_CPU    ? x->cpu_pct
                                       : x->cpu_per_worker;
        out_num(o, nnp__pipe_fmt_num(b, sizeof(b), v));
    }
    out_end(o);
}

/* A key with a single value: MindSpore writes run-wide figures as lists of one
 * (per_batch_time: [12.5]), so a reader can treat every key alike. */
static void out_one_num(out_t *o, const char *key, const char *num)
{
    out_key(o, key);
    out_num(o, num);
    out_end(o);
}

static void out_one_str(out_t *o, const char *key, const char *s)
{
    out_key(o, key);
    out_str(o, s);
    out_end(o);
}

/* children_ids: nested lists in JSON; in CSV each op's list is one "[1, 2]" cell, the
 * text Python's csv.writer gives a list. */
static int out_children(out_t *o, const pipe_t *p)
{
    dbuf_t d = {NULL, 0, 0, false};
    int rc = NNP_OK;
    out_key(o, "children_ids");
    for (size_t i = 0; i < p->n && rc == NNP_OK; i++) {
        const pop_t *x = &p->ops[i];
        if (o->jw) {
            nnp__jw_arr_begin(o->jw);
            for (size_t k = 0; k < x->n_kids; k++)
                nnp__jw_int(o->jw, p->ops[p->kids[x->kid0 + k]].id);
            nnp__jw_arr_end(o->jw);
            continue;
        }
        rc = list_children(p, x, &d);
        if (rc == NNP_OK)
            nnp__csv_str(o->csv, d.p);
    }
    out_end(o);
    nnp__free(d.p);
    return rc;
}

/* A frequency in percent (2 decimals), -1 when nothing was sampled. */
static double pct_of(size_t part, size_t whole)
{
    return whole ? nnp__pipe_round2(PERCENT * (double)part / (double)whole) : NO_VALUE;
}

/* MindSpore's summary keys in its order, then nnprof's additions (docs/OUTPUTS.md). */
static int write_summary(out_t *o, const pipe_t *p)
{
    char b[NUM_BUF];
    int rc;
    out_key(o, "pipeline_ops");
    for (size_t i = 0; i < p->n; i++)
        out_str(o, p->ops[i].label);
    out_end(o);
    out_key(o, "op_names");
    for (size_t i = 0; i < p->n; i++)
        out_str(o, p->ops[i].name);
    out_end(o);
    out_key(o, "op_ids");
    for (size_t i = 0; i < p->n; i++)
        out_int(o, p->ops[i].id);
    out_end(o);
    out_key(o, "num_workers");
    for (size_t i = 0; i < p->n; i++)
        out_int(o, p->ops[i].workers);
    out_end(o);
    out_ops_num(o, p, "queue_average_size", F_AVG_SIZE);
    out_ops_num(o, p, "queue_utilization_pct", F_USAGE);
    out_ops_num(o, p, "queue_empty_freq_pct", F_EMPTY);
    rc = out_children(o, p);
    out_key(o, "parent_id");
    for (size_t i = 0; i < p->n; i++)
        out_int(o, p->ops[i].parent);
    out_end(o);
    out_ops_num(o, p, "avg_cpu_pct", F_CPU);
    /* No per-batch pipeline or push times are recorded: MindSpore's -1. */
    out_one_num(o, "per_pipeline_time", fmt_ms(b, sizeof(b), -1));
    out_one_num(o, "per_push_queue_time", fmt_ms(b, sizeof(b), -1));
    out_one_num(
        o, "per_batch_time",
        fmt_ms(b, sizeof(b),
               p->dq_n > 1 ? (p->dq_last_ns - p->dq_first_ns) / (int64_t)(p->dq_n - 1) : -1));
    out_ops_num(o, p, "avg_cpu_pct_per_worker", F_CPU_WORKER);
    out_key(o, "cpu_analysis_details");
    for (size_t i = 0; i < p->n; i++)
        if (p->ops[i].cpu_msg[0])
            out_str(o, p->ops[i].cpu_msg);
    out_end(o);
    out_key(o, "queue_analysis_details");
    for (size_t i = 0; i < p->n; i++)
        if (p->ops[i].queue_msg[0])
            out_str(o, p->ops[i].queue_msg);
    if (p->mi_msg[0])
        out_str(o, p->mi_msg);
    out_end(o);
    if (p->bottleneck != SIZE_MAX) {
        char s[2 * TEXT_MAX];
        nnp__pipe_textf(s, sizeof(s), "%s %s", p->reason, p->advice);
        out_one_str(o, "bottleneck_warning", p->ops[p->bottleneck].label);
        out_one_str(o, "bottleneck_suggestion", s);
    } else {
        out_one_str(o, "bottleneck_warning", "");
        out_one_str(o, "bottleneck_suggestion", "");
    }
    /* nnprof additions */
    out_ops_num(o, p, "queue_full_freq_pct", F_FULL);
    snprintf(b, sizeof(b), "%zu", p->dq_n);
    out_one_num(o, "device_queue_batches", b);
    out_one_num(o, "device_queue_empty_freq_pct",
                nnp__pipe_fmt_num(b, sizeof(b), pct_of(p->dq_empty, p->dq_n)));
    out_one_num(o, "device_queue_full_freq_pct",
                nnp__pipe_fmt_num(b, sizeof(b), pct_of(p->dq_full, p->dq_n)));
    out_one_num(o, "host_queue_empty_freq_pct",
                nnp__pipe_fmt_num(b, sizeof(b), pct_of(p->host_empty, p->host_n)));
    out_one_str(o, "data_process_status", p->dq_n == 0 ? "" : p->mi_msg[0] ? "warning" : "normal");
    return rc;
}

/* minddata_pipeline_summary_{rank}.json: one object, compact unless --pretty. */
static int write_summary_json(const nnp_actx_t *c, const pipe_t *p)
{
    nnp_outfile_t f;
    nnp_jw_t w;
    out_t o = {&w, NULL};
    int rc = open_out(c, "minddata_pipeline_summary", "json", &f);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__jw_init(&w, f.fd, c->pretty, 0);
    if (rc == NNP_OK) {
        nnp__jw_obj_begin(&w);
        rc = write_summary(&o, p);
        nnp__jw_obj_end(&w);
        nnp__jw_line_end(&w);
    }
    if (rc == NNP_OK)
        rc = nnp__jw_flush(&w);
    nnp__jw_fini(&w);
    return nnp__out_commit(&f, rc);
}

/* The CSV form MindSpore writes next to the JSON (_save_as_csv_file): key, then values. */
static int write_summary_csv(const nnp_actx_t *c, const pipe_t *p)
{
    nnp_outfile_t f;
    nnp_csv_t w;
    out_t o = {NULL, &w};
    int rc = open_out(c, "minddata_pipeline_summary", "csv", &f);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__csv_init(&w, f.fd);
    if (rc == NNP_OK)
        rc = write_summary(&o, p);
    rc = rc == NNP_OK ? nnp__csv_fini(&w) : (nnp__csv_fini(&w), rc);
    return nnp__out_commit(&f, rc);
}
int nnp__pipe_write_files(const nnp_actx_t *c, const pipe_t *p)
{
    int rc = write_raw(c, p);
    if (rc == NNP_OK)
        rc = write_summary_json(c, p);
    if (rc == NNP_OK)
        rc = write_summary_csv(c, p);
    return rc;
}
