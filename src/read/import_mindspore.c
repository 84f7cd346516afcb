/* import_mindspore.c - importer of MindSpore profiler output files (issue #7): the step
 * trace CSV (steps, fp/bp marks, communication ops), output_timeline_data (device ops),
 * framework_raw (op types), minddata_pipeline_raw, profiler_info and host_info. One input
 * per rank; a bad file is logged (file, line, column, why) and the others still imported.
 * Formats: docs/IMPORT-mindspore.md, reference formats.md sections 1.1, 1.3, 1.5, 1.8, 1.9. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nnprof/nnprof.h"
#include "read/csv_reader.h"
#include "read/host_info_csv.h"
#include "read/importers.h"
#include "util/util.h"

#define FORMAT_NAME "mindspore"
/* Step trace values are 10 ns system-counter ticks (formats.md 1.1: MindInsight's
 * PER_MS_SYSCNT = 100000, "10ns to 1ms"). */
#define NS_PER_TICK 10
#define NS_PER_MS   1000000
/* Decimal digits of a ms value that still name whole ns. */
#define MS_NS_DIGITS 6
/* Largest file read whole (the biggest corpus CSV is 372 KB; real runs stay well below). */
#define MAX_FILE_BYTES (512u * 1024u * 1024u)
/* Per-file malformed-row warnings logged before they are only counted (as host_info_csv). */
#define MAX_ROW_WARNINGS 20
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

/* ---- CSV files (read/csv_reader.h) ---- */

typedef nnp_csv_reader_t csv_t;

/* Reads path and its header record into c; logs and releases c on failure. */
static int csv_open(csv_t *c, const char *path)
{
    int rc = nnp__csv_open(c, path, MAX_FILE_BYTES);
    if (rc != NNP_OK) {
        NNP_LOG_W("mindspore import: cannot read '%s': %s", path, nnp_last_error());
        return rc;
    }
    if ((rc = nnp__csv_next(c)) > 0)
        return NNP_OK;
    if (rc == 0)
        rc = nnp__fail(NNP_ECORRUPT, "'%s' is empty: no header line", path);
    NNP_LOG_W("mindspore import: %s", nnp_last_error());
    nnp__csv_close(c);
    return rc;
}

static void NNP_PRINTF(3, 4) row_warn(csv_t *c, uint64_t line, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    if (++c->warnings > MAX_ROW_WARNINGS)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    NNP_LOG_W("mindspore import: '%s' line %llu: %s", c->path, (unsigned long long)line, msg);
}

static void warn_summary(const csv_t *c)
{
    if (c->warnings > MAX_ROW_WARNINGS)
        NNP_LOG_W("mindspore import: '%s': %llu more bad rows not logged", c->path,
                  (unsigned long long)(c->warnings - MAX_ROW_WARNINGS));
}

/* ---- numbers ---- */

static const char *trim(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* A plain decimal integer with optional blanks around it. */
static bool parse_i64(const char *s, int64_t *out)
{
    char *end;
    long long v;
    s = trim(s);
    if (!*s)
        return false;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || end == s || *trim(end))
        return false;
    *out = v;
    return true;
}

/* A decimal "123.456789" ms (at most 6 decimals are kept, more are truncated) as exact ns,
 * without the rounding a double would bring to 16-digit timestamps. */
static bool parse_ms_ns(const char *s, int64_t *out)
{
    return nnp__parse_decimal_ns(s, MS_NS_DIGITS, out);
}

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
        const char *h = trim(c->f[i]);
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
            row_warn(c, c->line, "column '%s' has no '%s' or '%s' column: ignored", h, base,
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
            t->stream = k && parse_i64(num, &v) && v <= UINT32_MAX ? (uint32_t)v : 0;
        }
        if (*layout == 0)
            *layout = d > (long)i ? 1 : 2;
    }
    return NNP_OK;
}

/* One cell as ticks; false (with a warning) when it is not an integer. */
static bool cell_ticks(csv_t *c, const char *const *hdr, long col, int64_t *out)
{
    if (parse_i64(c->f[col], out))
        return true;
    row_warn(c, c->line, "column '%s': '%s' is not an integer: row skipped", hdr[col], c->f[col]);
    return false;
}

typedef struct step_cols {
    long step, start, end, fp, bp;
} step_cols_t;

static int import_step_row(csv_t *c, nnp_model_t *m, const char *const *hdr, size_t n_hdr,
                           const step_cols_t *sc, const triple_t *tr, size_t n_tr, size_t thread)
{
    int64_t step, start, end, fp = 0, bp = 0;
    size_t i;
    if (c->n != n_hdr) {
        row_warn(c, c->line, "%zu fields where the header has %zu (truncated?): row skipped", c->n,
                 n_hdr);
        return NNP_OK;
    }
    if (strcmp(trim(c->f[sc->step]), AVERAGES_ROW) == 0)
        return NNP_OK; /* MindSpore's averages row, not a step (formats.md 1.1) */
    if (!cell_ticks(c, hdr, sc->step, &step) || !cell_ticks(c, hdr, sc->start, &start) ||
        !cell_ticks(c, hdr, sc->end, &end) || (sc->fp >= 0 && !cell_ticks(c, hdr, sc->fp, &fp)) ||
        (sc->bp >= 0 && !cell_ticks(c, hdr, sc->bp, &bp)))
        return NNP_OK;
    /* Steps count from 1; MindInsight's run_2 ends with a hand-made all-zero row of step 0. */
    if (step <= 0 || end <= 0 || end < start) {
        NNP_LOG_I("mindspore import: '%s' line %llu: step %lld without a valid span: skipped",
                  c->path, (unsigned long long)c->line, (long long)step);
        return NNP_OK;
    }
    if ((i = nnp__table_push(&m->steps.t)) == SIZE_MAX)
        return nnp__fail(NNP_ENOMEM, "out of memory importing '%s'", c->path);
    m->steps.id[i] = (uint64_t)step;
    m->steps.start_ns[i] = start * NS_PER_TICK;
    m->steps.end_ns[i] = end * NS_PER_TICK;
    if (fp > 0) {
        if ((i = nnp__table_push(&m->fp.t)) == SIZE_MAX)
            return nnp__fail(NNP_ENOMEM, "out of memory importing '%s'", c->path);
        m->fp.step_id[i] = (uint64_t)step;
        m->fp.ts_ns[i] = fp * NS_PER_TICK;
    }
    if (bp > 0) {
        if ((i = nnp__table_push(&m->bp.t)) == SIZE_MAX)
            return nnp__fail(NNP_ENOMEM, "out of memory importing '%s'", c->path);
        m->bp.step_id[i] = (uint64_t)step;
        m->bp.ts_ns[i] = bp * NS_PER_TICK;
    }
    for (size_t k = 0; k < n_tr; k++) {
        int64_t s, e;
        /* An op absent from a step is written as empty or 0 cells. */
        if (!parse_i64(c->f[tr[k].start], &s) || !parse_i64(c->f[tr[k].end], &e) || s <= 0 || e < s)
            continue;
        if ((i = nnp__table_push(&m->comms.t)) == SIZE_MAX)
            return nnp__fail(NNP_ENOMEM, "out of memory importing '%s'", c->path);
        m->comms.start_ns[i] = s * NS_PER_TICK;
        m->comms.end_ns[i] = e * NS_PER_TICK;
        m->comms.name[i] = tr[k].name;
        m->comms.kind[i] = tr[k].kind;
        m->comms.stream_id[i] = tr[k].stream;
        m->comms.thread[i] = (uint32_t)thread;
        m->comms.peer[i] = -1;
    }
    return NNP_OK;
}

/* Returns NNP_OK when the file was read (bad rows skipped), an error when not at all. */
static int import_step_trace(const char *path, nnp_model_t *m)
{
    static const char *const need[] = {"step_num", "start_point", "end_point"};
    csv_t c;
    step_cols_t sc;
    triple_t *tr = NULL;
    size_t n_tr = 0, n_hdr, thread;
    char **hdr = NULL;
    int layout = 0, rc = csv_open(&c, path);
    if (rc != NNP_OK)
        return rc;
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
        if ((rc = import_step_row(&c, m, (const char *const *)hdr, n_hdr, &sc, tr, n_tr, thread)) !=
            NNP_OK)
            goto out;
    warn_summary(&c);
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
    int rc = csv_open(&c, path);
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
        int64_t s, d, st;
        size_t i;
        long need = name > stream ? name : stream;
        need = need > start ? need : start;
        need = need > dur ? need : dur;
        if ((long)c.n <= need) {
            row_warn(&c, c.line, "%zu fields, expected at least %ld (truncated?): row skipped", c.n,
                     need + 1);
            continue;
        }
        if (!parse_ms_ns(c.f[start], &s) || !parse_ms_ns(c.f[dur], &d) ||
            !parse_i64(c.f[stream], &st) || d < 0 || st < 0 || st > UINT32_MAX) {
            row_warn(&c, c.line,
                     "start '%s', duration '%s' or stream '%s' is not a number: "
                     "row skipped",
                     c.f[start], c.f[dur], c.f[stream]);
            continue;
        }
        if ((i = nnp__table_push(&m->kernels.t)) == SIZE_MAX) {
            rc = nnp__fail(NNP_ENOMEM, "out of memory importing '%s'", path);
            goto out;
        }
        m->kernels.start_ns[i] = s;
        m->kernels.end_ns[i] = s + d;
        m->kernels.name[i] = nnp__model_intern_cstr(m, trim(c.f[name]));
        m->kernels.stream_id[i] = (uint32_t)st;
    }
    warn_summary(&c);
out:
    nnp__csv_close(&c);
    return rc;
}

/* ---- framework_raw_{rank}.csv: the op type of each full op name, given to kernels ---- */

static int import_framework(const char *path, nnp_model_t *m)
{
    csv_t c;
    long full, type;
    uint32_t *type_of = NULL;
    size_t n_ids = m->n_strs + 1;
    int rc = csv_open(&c, path);
    if (rc != NNP_OK)
        return rc;
    /* 2.x names (full_op_name, op_type), then 1.x (full_kernel_name, kernel_type). */
    full = nnp__csv_col(&c, "full_op_name");
    if (full < 0)
        full = nnp__csv_col(&c, "full_kernel_name");
    type = nnp__csv_col(&c, "op_type");
    if (type < 0)
        type = nnp__csv_col(&c, "kernel_type");
    if (full < 0 || type < 0) {
        rc = nnp__fail(NNP_ECORRUPT, "'%s' line 1: no column '%s': file skipped", path,
                       full < 0 ? "full_op_name" : "op_type");
        NNP_LOG_W("mindspore import: %s", nnp_last_error());
        goto out;
    }
    type_of = nnp__calloc(n_ids, sizeof(uint32_t));
    if (!type_of) {
        rc = nnp__fail(NNP_ENOMEM, "out of memory importing '%s'", path);
        goto out;
    }
    while ((rc = nnp__csv_next(&c)) > 0) {
        uint32_t id;
        if ((long)c.n <= (full > type ? full : type)) {
            row_warn(&c, c.line, "%zu fields (truncated?): row skipped", c.n);
            continue;
        }
        id = nnp__model_find(m, trim(c.f[full]));
        if (id && id < n_ids)
            type_of[id] = nnp__model_intern_cstr(m, trim(c.f[type]));
    }
    for (size_t k = 0; k < m->kernels.t.n; k++)
        if (m->kernels.name[k] < n_ids && type_of[m->kernels.name[k]])
            m->kernels.type[k] = type_of[m->kernels.name[k]];
    warn_summary(&c);
out:
    nnp__free(type_of);
    nnp__csv_close(&c);
    return rc;
}

/* ---- minddata_pipeline_raw_{rank}.csv (formats.md 1.5) ---- */

static int import_pipeline(const char *path, nnp_model_t *m)
{
    csv_t c;
    long id, type, workers, parent;
    int rc = csv_open(&c, path);
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
            !parse_i64(c.f[id], &v_id) || !parse_i64(c.f[workers], &v_w) || v_w < 0 ||
            v_w > UINT32_MAX || (*trim(c.f[parent]) && !parse_i64(c.f[parent], &v_p))) {
            row_warn(&c, c.line, "missing or non-numeric op_id/num_workers/parent_id: skipped");
            continue;
        }
        if ((i = nnp__table_push(&m->pipe_ops.t)) == SIZE_MAX) {
            rc = nnp__fail(NNP_ENOMEM, "out of memory importing '%s'", path);
            goto out;
        }
        m->pipe_ops.op_id[i] = v_id;
        m->pipe_ops.parent_id[i] = v_p; /* the root has an empty parent_id: -1 */
        m->pipe_ops.op_type[i] = nnp__model_intern_cstr(m, trim(c.f[type]));
        m->pipe_ops.num_workers[i] = (uint32_t)v_w;
    }
    warn_summary(&c);
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
    if (digits[0] < '0' || digits[0] > '9' || !parse_i64(digits, &v) || v > INT_MAX)
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
    /* Order matters: framework_raw types the ops read from the timeline. */
    if (rc == NNP_OK)
        rc = try_file(dir, STEP_PREFIX, rank, STEP_SUFFIX, import_step_trace, m, &n_ok);
    if (rc == NNP_OK)
        rc = try_file(dir, TIMELINE_PREFIX, rank, TIMELINE_SUFFIX, import_timeline, m, &n_ok);
    if (rc == NNP_OK)
        rc = try_file(dir, "framework_raw_", rank, ".csv", import_framework, m, &n_ok);
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
