/* import_mindspore.c - importer of MindSpore profiler output files (issue #7): the step
 * trace CSV (steps, fp/bp marks, communication ops), output_timeline_data (device ops),
 * framework_raw (op types), minddata_pipeline_raw, profiler_info and host_info. One input
 * per rank; a bad file is logged (file, line, column, why) and the others still imported.
 * Formats: docs/IMPORT-mindspore.md, reference formats.md sections 1.1, 1.3, 1.5, 1.8, 1.9. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nnprof/nnprof.h"
#include "read/csv_reader.h"
#include "read/host_info_csv.h"
#include "read/importers.h"
#include "read/mindspore.h"
#include "util/checked.h"
#include "util/util.h"

#define FORMAT_NAME "mindspore"
/* Sub-directory MindSpore writes its files to under the output path. */
#define PROFILER_SUBDIR "profiler"

#define STEP_PREFIX     "step_trace_raw_"
#define STEP_SUFFIX     "_detail_time.csv"
#define TIMELINE_PREFIX "output_timeline_data_"
#define TIMELINE_SUFFIX ".txt"
#define SUF_START       "_start_point"
#define SUF_END         "_end_point"
/* The step_num of the averages row MindSpore appends (formats.md 1.1). */
#define AVERAGES_ROW "-"
/* 1.x rounds its averages to whole ticks: a row within half a tick of a mean is that mean. */
#define AVG_TOLERANCE_TICKS 0.5

/* ---- step_trace_raw_{rank}_detail_time.csv ---- */

/* Kind of a communication op from its name (MindSpore names ops after the HCCL primitive). */
static nnp_comm_kind_t comm_kind(const char *name)
{
    static const struct {
        const char *tag;
        nnp_comm_kind_t kind;
    } tags[] = {{"AllReduce", NNP_COMM_ALLREDUCE},
                {"AllGather", NNP_COMM_ALLGATHER},
                {"ReduceScatter", NNP_COMM_REDUCESCATTER},
                {"Broadcast", NNP_COMM_BROADCAST},
                {"AlltoAll", NNP_COMM_ALLTOALL},
                {"Send", NNP_COMM_SEND},
                {"Receive", NNP_COMM_RECV}};
    for (size_t i = 0; i < NNP_ARRAY_LEN(tags); i++)
        if (strstr(name, tags[i].tag))
            return tags[i].kind;
    return NNP_COMM_OTHER;
}

/* A communication column triple: the duration column and its two point columns. */
typedef struct triple {
    long dur, start, end;
    uint32_t name, stream;
    uint32_t kind;
} triple_t;

/* Finds the triples of the header; *v1x is set when the 1.x order (start, end, name) is
 * seen, cleared for the 2.x order (name, start, end) (formats.md 1.1). */
static int find_triples(csv_t *c, nnp_model_t *m, triple_t **out, size_t *n, int *layout)
{
    size_t cap = c->n / 3 + 1;
    *n = 0;
    *out = nnp__calloc(cap, sizeof(triple_t));
    if (!*out)
        return nnp__fail(NNP_ENOMEM, "out of memory reading '%s'", c->path);
    for (size_t i = 0; i < c->n; i++) {
        const char *h = nnp__ms_trim(c->f[i]);
        size_t len = strlen(h), sl = strlen(SUF_START);
        char base[512], endname[600];
        long d, e;
        triple_t *t;
        if (len <= sl || strcmp(h + len - sl, SUF_START) != 0 || len - sl >= sizeof(base))
            continue;
        memcpy(base, h, len - sl);
        base[len - sl] = '\0';
        snprintf(endname, sizeof(endname), "%s" SUF_END, base);
        d = nnp__csv_col(c, base);
        e = nnp__csv_col(c, endname);
        if (d < 0 || e < 0) {
            nnp__ms_row_warn(c, c->line, "column '%s' has no '%s' or '%s' column: ignored", h, base,
                             endname);
            continue;
        }
        t = &(*out)[(*n)++];
        t->dur = d;
        t->start = (long)i;
        t->end = e;
        t->name = nnp__model_intern_cstr(m, base);
        t->kind = (uint32_t)comm_kind(base);
        /* The stream id is the second '_' field: stream_520_parallel_0 (MI step trace). */
        {
            const char *u = strchr(base, '_');
            int64_t v = 0;
            char num[24];
            size_t k = 0;
            if (u)
                for (u++; *u >= '0' && *u <= '9' && k + 1 < sizeof(num); u++)
                    num[k++] = *u;
            num[k] = '\0';
            t->stream = k && nnp__ms_parse_i64(num, &v) && v <= UINT32_MAX ? (uint32_t)v : 0;
        }
        if (*layout == 0)
            *layout = d > (long)i ? 1 : 2;
    }
    return NNP_OK;
}

/* One cell as ticks; false (with a warning) when it is not an integer. */
static bool cell_ticks(csv_t *c, const char *const *hdr, long col, int64_t *out)
{
    if (nnp__ms_parse_i64(c->f[col], out))
        return true;
    nnp__ms_row_warn(c, c->line, "column '%s': '%s' is not an integer: row skipped", hdr[col],
                     c->f[col]);
    return false;
}

typedef struct step_cols {
    long step, start, end, fp, bp;
    long phase[NNP_STEP_AVERAGES]; /* total, iteration_interval, fp_and_bp (or fp), tail */
} step_cols_t;

/* The file's own averages row and what is needed to tell which rows it averages: per
 * phase column, the sum over the step rows, the first row's value and the count. */
typedef struct avg_check {
    bool has_row;
    double row[NNP_STEP_AVERAGES]; /* ticks */
    bool known[NNP_STEP_AVERAGES];
    double sum[NNP_STEP_AVERAGES], first[NNP_STEP_AVERAGES];
    size_t n[NNP_STEP_AVERAGES];
} avg_check_t;

/* A tick count that may have decimals (2.x np.mean) as a double; false when not a number. */
static bool parse_ticks(const char *s, double *out)
{
    char *end;
    s = nnp__ms_trim(s);
    if (!*s)
        return false;
    *out = strtod(s, &end);
    return end != s && !*nnp__ms_trim(end);
}

static void avg_note_row(avg_check_t *a, const csv_t *c, const step_cols_t *sc, bool is_avg)
{
    for (int p = 0; p < NNP_STEP_AVERAGES; p++) {
        double v;
        if (sc->phase[p] < 0 || (long)c->n <= sc->phase[p] || !parse_ticks(c->f[sc->phase[p]], &v))
            continue;
        if (is_avg) {
            a->row[p] = v;
            a->known[p] = true;
            continue;
        }
        if (a->n[p]++ == 0)
            a->first[p] = v;
        a->sum[p] += v;
    }
    a->has_row = a->has_row || is_avg;
}

/* MindSpore's averages row left step 1 out (1.x, and the hand-trimmed 2.x-layout corpus
 * files) or not (2.x np.mean): decided by which mean the row equals, to within its integer
 * rounding (half a tick). -1: it equals neither (or there is none), 0: all rows, 1: step 1
 * left out. */
static int avg_rule(const avg_check_t *a)
{
    bool all = true, excl = true, any = false;
    for (int p = 0; p < NNP_STEP_AVERAGES; p++) {
        double m_all, m_excl;
        if (!a->known[p] || a->n[p] < 2)
            continue;
        any = true;
        m_all = a->sum[p] / (double)a->n[p];
        m_excl = (a->sum[p] - a->first[p]) / (double)(a->n[p] - 1);
        all = all && fabs(a->row[p] - m_all) <= AVG_TOLERANCE_TICKS;
        excl = excl && fabs(a->row[p] - m_excl) <= AVG_TOLERANCE_TICKS;
    }
    if (!any || all == excl)
        return -1;
    return excl ? 1 : 0;
}

/* Ticks as ns in place; false when the ns do not fit an int64 (a damaged cell). */
static bool ticks_ns(int64_t *v)
{
    return nnp__i64_mul(*v, NS_PER_TICK, v);
}

static int import_step_row(csv_t *c, nnp_model_t *m, const char *const *hdr, size_t n_hdr,
                           const step_cols_t *sc, const triple_t *tr, size_t n_tr, size_t thread,
                           avg_check_t *avg)
{
    int64_t step, start, end, fp = 0, bp = 0;
    size_t i;
    if (c->n != n_hdr) {
        nnp__ms_row_warn(c, c->line,
                         "%zu fields where the header has %zu (truncated?): row skipped", c->n,
                         n_hdr);
        return NNP_OK;
    }
    if (strcmp(nnp__ms_trim(c->f[sc->step]), AVERAGES_ROW) == 0) {
        avg_note_row(avg, c, sc, true); /* MindSpore's averages row (formats.md 1.1) */
        return NNP_OK;
    }
    if (!cell_ticks(c, hdr, sc->step, &step) || !cell_ticks(c, hdr, sc->start, &start) ||
        !cell_ticks(c, hdr, sc->end, &end) || (sc->fp >= 0 && !cell_ticks(c, hdr, sc->fp, &fp)) ||
        (sc->bp >= 0 && !cell_ticks(c, hdr, sc->bp, &bp)))
        return NNP_OK;
    if (!ticks_ns(&start) || !ticks_ns(&end) || !ticks_ns(&fp) || !ticks_ns(&bp)) {
        nnp__ms_row_warn(c, c->line, "a time of step %lld is too large for ns: row skipped",
                         (long long)step);
        return NNP_OK;
    }
    /* Steps count from 1; MindInsight's run_2 ends with a hand-made all-zero row of step 0. */
    if (step <= 0 || end <= 0 || end < start) {
        NNP_LOG_I("mindspore import: '%s' line %llu: step %lld without a valid span: skipped",
                  c->path, (unsigned long long)c->line, (long long)step);
        return NNP_OK;
    }
    avg_note_row(avg, c, sc, false);
    if ((i = nnp__table_push(&m->steps.t)) == SIZE_MAX)
        return nnp__fail(NNP_ENOMEM, "out of memory importing '%s'", c->path);
    m->steps.id[i] = (uint64_t)step;
    m->steps.start_ns[i] = start;
    m->steps.end_ns[i] = end;
    if (fp > 0) {
        if ((i = nnp__table_push(&m->fp.t)) == SIZE_MAX)
            return nnp__fail(NNP_ENOMEM, "out of memory importing '%s'", c->path);
        m->fp.step_id[i] = (uint64_t)step;
        m->fp.ts_ns[i] = fp;
    }
    if (bp > 0) {
        if ((i = nnp__table_push(&m->bp.t)) == SIZE_MAX)
            return nnp__fail(NNP_ENOMEM, "out of memory importing '%s'", c->path);
        m->bp.step_id[i] = (uint64_t)step;
        m->bp.ts_ns[i] = bp;
    }
    for (size_t k = 0; k < n_tr; k++) {
        int64_t s, e;
        /* An op absent from a step is written as empty or 0 cells. */
        if (!nnp__ms_parse_i64(c->f[tr[k].start], &s) || !nnp__ms_parse_i64(c->f[tr[k].end], &e) ||
            s <= 0 || e < s || !ticks_ns(&s) || !ticks_ns(&e))
            continue;
        if ((i = nnp__table_push(&m->comms.t)) == SIZE_MAX)
            return nnp__fail(NNP_ENOMEM, "out of memory importing '%s'", c->path);
        m->comms.start_ns[i] = s;
        m->comms.end_ns[i] = e;
        m->comms.name[i] = tr[k].name;
        m->comms.kind[i] = tr[k].kind;
        m->comms.stream_id[i] = tr[k].stream;
        m->comms.thread[i] = (uint32_t)thread;
        m->comms.peer[i] = -1;
    }
    return NNP_OK;
}

/* The file's averages row: kept for the summary (MindInsight reads that row), and the
 * rule it shows (step 1 left out or not) decides ours, whatever the column order. */
static void apply_averages(nnp_model_t *m, const char *path, const avg_check_t *a)
{
    int rule = avg_rule(a);
    if (!a->has_row)
        return;
    for (int p = 0; p < NNP_STEP_AVERAGES; p++)
        if (a->known[p]) {
            m->info.step_averages_ns[p] = llround(a->row[p] * NS_PER_TICK);
            m->info.step_averages_known |= 1u << p;
        }
    if (rule >= 0)
        m->info.step_avg_skip_first = rule == 1;
    NNP_LOG_I("mindspore import: '%s': its averages row %s; the summary reports that row", path,
              rule == 1   ? "leaves step 1 out"
              : rule == 0 ? "averages every step"
                          : "matches neither the mean of all steps nor that without step 1");
}

/* Returns NNP_OK when the file was read (bad rows skipped), an error when not at all. */
static int import_step_trace(const char *path, nnp_model_t *m)
{
    static const char *const need[] = {"step_num", "start_point", "end_point"};
    csv_t c;
    step_cols_t sc;
    avg_check_t avg;
    triple_t *tr = NULL;
    size_t n_tr = 0, n_hdr, thread;
    char **hdr = NULL;
    int layout = 0, rc = nnp__ms_csv_open(&c, path);
    if (rc != NNP_OK)
        return rc;
    memset(&avg, 0, sizeof(avg));
    for (size_t k = 0; k < NNP_ARRAY_LEN(need); k++)
        if (nnp__csv_col(&c, need[k]) < 0) {
            rc =
                nnp__fail(NNP_ECORRUPT, "'%s' line 1: no column '%s': file skipped", path, need[k]);
            NNP_LOG_W("mindspore import: %s", nnp_last_error());
            goto out;
        }
    sc.step = nnp__csv_col(&c, "step_num");
    sc.start = nnp__csv_col(&c, "start_point");
    sc.end = nnp__csv_col(&c, "end_point");
    sc.fp = nnp__csv_col(&c, "fp_point");
    sc.bp = nnp__csv_col(&c, "bp_point"); /* absent in inference mode (formats.md 1.1) */
    sc.phase[0] = nnp__csv_col(&c, "total");
    sc.phase[1] = nnp__csv_col(&c, "iteration_interval");
    sc.phase[2] = nnp__csv_col(&c, "fp_and_bp");
    if (sc.phase[2] < 0)
        sc.phase[2] = nnp__csv_col(&c, "fp"); /* inference: one fp column */
    sc.phase[3] = nnp__csv_col(&c, "tail");
    rc = find_triples(&c, m, &tr, &n_tr, &layout);
    if (rc != NNP_OK)
        goto out;
    /* Only the 1.x layout is known to leave step 1 out of the averages (formats.md 1.1). */
    m->info.step_avg_skip_first = layout == 1;
    /* The header's cells are overwritten by the next record: keep copies of the names. */
    n_hdr = c.n;
    hdr = nnp__calloc(n_hdr, sizeof(char *));
    if (!hdr) {
        rc = nnp__fail(NNP_ENOMEM, "out of memory reading '%s'", path);
        goto out;
    }
    for (size_t k = 0; k < n_hdr; k++)
        if (!(hdr[k] = nnp__strdup(c.f[k]))) {
            rc = nnp__fail(NNP_ENOMEM, "out of memory reading '%s'", path);
            goto out;
        }
    thread = nnp__model_thread(m, 0, 0);
    if (thread == SIZE_MAX) {
        rc = nnp__fail(NNP_ENOMEM, "out of memory reading '%s'", path);
        goto out;
    }
    while ((rc = nnp__csv_next(&c)) > 0)
        if ((rc = import_step_row(&c, m, (const char *const *)hdr, n_hdr, &sc, tr, n_tr, thread,
                                  &avg)) != NNP_OK)
            goto out;
    nnp__ms_warn_summary(&c);
    apply_averages(m, path, &avg);
out:
    if (hdr)
        for (size_t k = 0; k < n_hdr; k++)
            nnp__free(hdr[k]);
    nnp__free(hdr);
    nnp__free(tr);
    nnp__csv_close(&c);
    return rc;
}

/* ---- output_timeline_data_{rank}.txt: device ops, ms on the step trace's clock ---- */

static int import_timeline(const char *path, nnp_model_t *m)
{
    csv_t c;
    long name, stream, start, dur;
    int rc = nnp__ms_csv_open(&c, path);
    if (rc != NNP_OK)
        return rc;
    name = nnp__csv_col(&c, "op_name");
    stream = nnp__csv_col(&c, "stream_id");
    dur = nnp__csv_col(&c, "duration(ms)");
    start = nnp__csv_col(&c, "start_time(ms)");
    /* 2.x writes start_time(us) over values in ms: a known unit bug (formats.md 1.3). */
    if (start < 0 && (start = nnp__csv_col(&c, "start_time(us)")) >= 0)
        NNP_LOG_I("mindspore import: '%s' line 1: header says start_time(us); the values are "
                  "ms (MindSpore 2.x), read as ms",
                  path);
    if (name < 0 || stream < 0 || start < 0 || dur < 0) {
        rc = nnp__fail(NNP_ECORRUPT,
                       "'%s' line 1: expected columns op_name, stream_id, start_time(ms), "
                       "duration(ms); missing or in another unit: '%s'",
                       path,
                       name < 0     ? "op_name"
                       : stream < 0 ? "stream_id"
                       : start < 0  ? "start_time"
                                    : "duration");
        NNP_LOG_W("mindspore import: %s", nnp_last_error());
        goto out;
    }
    while ((rc = nnp__csv_next(&c)) > 0) {
        int64_t s, d, e, st;
        size_t i;
        long need = name > stream ? name : stream;
        need = need > start ? need : start;
        need = need > dur ? need : dur;
        if ((long)c.n <= need) {
            nnp__ms_row_warn(&c, c.line,
                             "%zu fields, expected at least %ld (truncated?): row skipped", c.n,
                             need + 1);
            continue;
        }
        if (!nnp__ms_parse_ms_ns(c.f[start], &s) || !nnp__ms_parse_ms_ns(c.f[dur], &d) ||
            !nnp__ms_parse_i64(c.f[stream], &st) || d < 0 || st < 0 || st > UINT32_MAX ||
            !nnp__i64_add(s, d, &e)) {
            nnp__ms_row_warn(&c, c.line,
                             "start '%s', duration '%s' or stream '%s' is not a number or out "
                             "of range: row skipped",
                             c.f[start], c.f[dur], c.f[stream]);
            continue;
        }
        if ((i = nnp__table_push(&m->kernels.t)) == SIZE_MAX) {
            rc = nnp__fail(NNP_ENOMEM, "out of memory importing '%s'", path);
            goto out;
        }
        m->kernels.start_ns[i] = s;
        m->kernels.end_ns[i] = e;
        m->kernels.name[i] = nnp__model_intern_cstr(m, nnp__ms_trim(c.f[name]));
        m->kernels.stream_id[i] = (uint32_t)st;
    }
    nnp__ms_warn_summary(&c);
out:
    nnp__csv_close(&c);
    return rc;
}

/* ---- minddata_pipeline_raw_{rank}.csv (formats.md 1.5) ---- */

static int import_pipeline(const char *path, nnp_model_t *m)
{
    csv_t c;
    long id, type, workers, parent;
    int rc = nnp__ms_csv_open(&c, path);
    if (rc != NNP_OK)
        return rc;
    id = nnp__csv_col(&c, "op_id");
    type = nnp__csv_col(&c, "op_type");
    workers = nnp__csv_col(&c, "num_workers");
    parent = nnp__csv_col(&c, "parent_id");
    if (id < 0 || type < 0 || workers < 0 || parent < 0) {
        rc = nnp__fail(NNP_ECORRUPT,
                       "'%s' line 1: needs op_id, op_type, num_workers, parent_id: file skipped",
                       path);
        NNP_LOG_W("mindspore import: %s", nnp_last_error());
        goto out;
    }
    while ((rc = nnp__csv_next(&c)) > 0) {
        int64_t v_id, v_w, v_p = -1;
        size_t i;
        if ((long)c.n <= id || (long)c.n <= type || (long)c.n <= workers || (long)c.n <= parent ||
            !nnp__ms_parse_i64(c.f[id], &v_id) || !nnp__ms_parse_i64(c.f[workers], &v_w) ||
            v_w < 0 || v_w > UINT32_MAX ||
            (*nnp__ms_trim(c.f[parent]) && !nnp__ms_parse_i64(c.f[parent], &v_p))) {
            nnp__ms_row_warn(&c, c.line,
                             "missing or non-numeric op_id/num_workers/parent_id: skipped");
            continue;
        }
        if ((i = nnp__table_push(&m->pipe_ops.t)) == SIZE_MAX) {
            rc = nnp__fail(NNP_ENOMEM, "out of memory importing '%s'", path);
            goto out;
        }
        m->pipe_ops.op_id[i] = v_id;
        m->pipe_ops.parent_id[i] = v_p; /* the root has an empty parent_id: -1 */
        m->pipe_ops.op_type[i] = nnp__model_intern_cstr(m, nnp__ms_trim(c.f[type]));
        m->pipe_ops.num_workers[i] = (uint32_t)v_w;
    }
    nnp__ms_warn_summary(&c);
out:
    nnp__csv_close(&c);
    return rc;
}

/* ---- profiler_info_{rank}.json (formats.md 1.8): rank_id, rank_size ---- */

static int import_profiler_info(const char *path, nnp_model_t *m)
{
    char *text = NULL;
    size_t len;
    cJSON *root, *it;
    int rc = nnp__read_file(path, MAX_FILE_BYTES, &text, &len);
    if (rc != NNP_OK) {
        NNP_LOG_W("mindspore import: cannot read '%s': %s", path, nnp_last_error());
        return rc;
    }
    root = cJSON_ParseWithLength(text, len);
    nnp__free(text);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        rc = nnp__fail(NNP_ECORRUPT, "'%s' is not a JSON object: file skipped", path);
        NNP_LOG_W("mindspore import: %s", nnp_last_error());
        return rc;
    }
    it = cJSON_GetObjectItemCaseSensitive(root, "rank_id");
    if (cJSON_IsNumber(it) && it->valuedouble >= 0 && it->valuedouble <= INT_MAX)
        m->info.rank_id = (int)it->valuedouble;
    it = cJSON_GetObjectItemCaseSensitive(root, "rank_size");
    if (cJSON_IsNumber(it) && it->valuedouble >= 0 && it->valuedouble <= INT_MAX)
        m->info.rank_size = (int)it->valuedouble;
    cJSON_Delete(root);
    return NNP_OK;
}

/* ---- finding inputs ---- */

/* The rank in "<prefix><digits><suffix>", or -1. */
static int rank_in(const char *name, const char *prefix, const char *suffix)
{
    size_t pre = strlen(prefix), suf = strlen(suffix), n = strlen(name);
    int64_t v;
    char digits[16];
    if (n <= pre + suf || n - pre - suf >= sizeof(digits) || strncmp(name, prefix, pre) != 0 ||
        strcmp(name + n - suf, suffix) != 0)
        return -1;
    memcpy(digits, name + pre, n - pre - suf);
    digits[n - pre - suf] = '\0';
    if (digits[0] < '0' || digits[0] > '9' || !nnp__ms_parse_i64(digits, &v) || v > INT_MAX)
        return -1;
    return (int)v;
}

/* The rank of a step trace or timeline file name (the two files an input is named by). */
static int input_rank(const char *name)
{
    int r = rank_in(name, STEP_PREFIX, STEP_SUFFIX);
    return r >= 0 ? r : rank_in(name, TIMELINE_PREFIX, TIMELINE_SUFFIX);
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Adds one input per rank in dir: its step trace file, else its timeline file. */
static int find_in(const char *dir, nnp_foreign_input_t *out, int cap, int have)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = have;
    if (!d)
        return n;
    while ((e = readdir(d)) != NULL && n < cap) {
        int r = input_rank(e->d_name);
        char path[NNP_PATH_MAX];
        bool dup = false;
        if (r < 0 || nnp__path_join(path, sizeof(path), dir, e->d_name) != NNP_OK || !is_file(path))
            continue;
        for (int k = 0; k < n; k++)
            if (out[k].rank == r) {
                /* A rank with both files is named by its step trace file. */
                if (rank_in(e->d_name, STEP_PREFIX, STEP_SUFFIX) >= 0)
                    nnp__strlcpy(out[k].path, path, sizeof(out[k].path));
                dup = true;
            }
        if (dup)
            continue;
        nnp__strlcpy(out[n].path, path, sizeof(out[n].path));
        out[n].rank = r;
        n++;
    }
    closedir(d);
    return n;
}

static int find(const char *dir, nnp_foreign_input_t *out, int cap)
{
    const char *base = strrchr(dir, '/');
    char sub[NNP_PATH_MAX];
    int n = 0;
    base = base ? base + 1 : dir;
    if (cap <= 0)
        return 0;
    if (is_file(dir)) {
        if (input_rank(base) < 0)
            return 0;
        nnp__strlcpy(out[0].path, dir, sizeof(out[0].path));
        out[0].rank = input_rank(base);
        return 1;
    }
    n = find_in(dir, out, cap, 0);
    if (n == 0 && nnp__path_join(sub, sizeof(sub), dir, PROFILER_SUBDIR) == NNP_OK)
        n = find_in(sub, out, cap, 0);
    return n;
}

/* ---- import ---- */

/* Imports dir/<prefix><rank><suffix> with fn when it exists; counts what was read. */
static int try_file(const char *dir, const char *prefix, int rank, const char *suffix,
                    int (*fn)(const char *, nnp_model_t *), nnp_model_t *m, int *n_ok)
{
    char name[NNP_PATH_MAX], path[NNP_PATH_MAX];
    int rc;
    snprintf(name, sizeof(name), "%s%d%s", prefix, rank, suffix);
    if (nnp__path_join(path, sizeof(path), dir, name) != NNP_OK || !is_file(path))
        return NNP_OK;
    rc = fn(path, m);
    if (rc == NNP_OK)
        (*n_ok)++;
    /* Only running out of memory stops the import; a bad file was logged. */
    return rc == NNP_ENOMEM ? rc : NNP_OK;
}

/* The op files: framework_raw (types), the AI Core and AI CPU intermediate files (what
 * MindInsight's operator page shows), then every kernel typed. */
static int import_ops(const char *dir, int rank, nnp_model_t *m, int *n_ok)
{
    char name[NNP_PATH_MAX], path[NNP_PATH_MAX];
    nnp_flow_map_t types;
    int rc = NNP_OK;
    memset(&types, 0, sizeof(types));
    for (int k = 0; k < 4 && rc != NNP_ENOMEM; k++) {
        static const char *const prefix[] = {"framework_raw_", "aicore_intermediate_",
                                             "aicore_intermediate_", "aicpu_intermediate_"};
        static const char *const suffix[] = {".csv", "_type.csv", "_detail.csv", ".csv"};
        snprintf(name, sizeof(name), "%s%d%s", prefix[k], rank, suffix[k]);
        if (nnp__path_join(path, sizeof(path), dir, name) != NNP_OK || !is_file(path))
            continue;
        rc = k == 0   ? nnp__ms_import_framework(path, m, &types)
             : k == 1 ? nnp__ms_import_aicore_type(path, m)
             : k == 2 ? nnp__ms_import_aicore_detail(path, m, &types)
                      : nnp__ms_import_aicpu(path, m);
        *n_ok += rc == NNP_OK;
    }
    if (rc != NNP_ENOMEM)
        rc = nnp__ms_type_kernels(m, &types);
    nnp__flow_fini(&types);
    return rc == NNP_ENOMEM ? rc : NNP_OK;
}

/* hccl_raw_{rank}.csv, else the hccl_info traces it is made from. */
static int import_hccl(const char *dir, int rank, nnp_model_t *m, int *n_ok)
{
    char name[NNP_PATH_MAX], path[NNP_PATH_MAX];
    int rc;
    snprintf(name, sizeof(name), "hccl_raw_%d.csv", rank);
    if (nnp__path_join(path, sizeof(path), dir, name) == NNP_OK && is_file(path))
        rc = nnp__ms_import_hccl_raw(path, m);
    else if ((rc = nnp__ms_import_hccl_info(dir, m)) == NNP_ENOENT)
        return NNP_OK;
    *n_ok += rc == NNP_OK;
    return rc == NNP_ENOMEM ? rc : NNP_OK;
}

static int import(const char *input, nnp_model_t *m)
{
    char dir[NNP_PATH_MAX];
    nnp_foreign_input_t in;
    const char *slash;
    int rank, n_ok = 0, rc = NNP_OK;

    if (!is_file(input)) {
        /* A directory: its lowest-numbered rank. */
        if (find(input, &in, 1) != 1)
            return nnp__fail(NNP_ENOENT, "no MindSpore profiler files in '%s'", input);
        input = in.path;
    }
    if (!nnp__strlcpy(dir, input, sizeof(dir)))
        return nnp__fail(NNP_ETOOLONG, "path too long: '%s'", input);
    slash = strrchr(dir, '/');
    rank = input_rank(slash ? slash + 1 : dir);
    if (rank < 0)
        return nnp__fail(NNP_EINVAL, "'%s' is not a MindSpore step trace or timeline file", input);
    if (slash)
        dir[slash - dir] = '\0';
    else
        nnp__strlcpy(dir, ".", sizeof(dir));
    m->info.rank_id = rank;
    if (!m->info.source_format && !(m->info.source_format = nnp__strdup(FORMAT_NAME)))
        return nnp__fail(NNP_ENOMEM, "out of memory");
    if (!m->info.source && !(m->info.source = nnp__strdup(dir)))
        return nnp__fail(NNP_ENOMEM, "out of memory");
    /* Order matters: the op files type the ops read from the timeline; the HCCL traces
     * need the steps. */
    if (rc == NNP_OK)
        rc = try_file(dir, STEP_PREFIX, rank, STEP_SUFFIX, import_step_trace, m, &n_ok);
    if (rc == NNP_OK)
        rc = try_file(dir, TIMELINE_PREFIX, rank, TIMELINE_SUFFIX, import_timeline, m, &n_ok);
    if (rc == NNP_OK)
        rc = import_ops(dir, rank, m, &n_ok);
    if (rc == NNP_OK)
        rc = import_hccl(dir, rank, m, &n_ok);
    if (rc == NNP_OK)
        rc = try_file(dir, "minddata_pipeline_raw_", rank, ".csv", import_pipeline, m, &n_ok);
    if (rc == NNP_OK)
        rc = try_file(dir, "profiler_info_", rank, ".json", import_profiler_info, m, &n_ok);
    if (rc == NNP_OK)
        rc = try_file(dir, "host_info_", rank, ".csv", nnp__import_host_info_csv, m, &n_ok);
    if (rc != NNP_OK)
        return rc;
    if (n_ok == 0)
        return nnp__fail(NNP_ECORRUPT, "no MindSpore file of rank %d in '%s' could be read", rank,
                         dir);
    return NNP_OK;
}

const nnp_importer_t nnp__importer_mindspore = {"mindspore", find, import};
