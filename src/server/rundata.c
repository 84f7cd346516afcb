/* rundata.c - loads one rank's analysis outputs (see rundata.h). Each file is optional
 * except profiler_info_{rank}.json; sizes are capped so a corrupt or hostile file cannot
 * exhaust memory (the caps are far above what a 10 M-event run writes). */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "read/csv_reader.h"
#include "server/downsample.h"
#include "server/rundata.h"
#include "server/safe_open.h"
#include "util/json_writer.h"
#include "util/util.h"

/* Largest CSV / JSON output loaded. kernel_details is never loaded (it has a row per
 * execution); the others grow with distinct ops, steps or tensors. */
#define CSV_MAX_BYTES  (2048u * 1024u * 1024u)
#define JSON_MAX_BYTES (512u * 1024u * 1024u)
#define NAME_CAP       256
/* operator_memory columns used for the breakdown. */
#define KB 1024.0

long nnp__svt_col(const nnp_svt_t *t, const char *name)
{
    for (size_t i = 0; i < t->n_cols; i++) {
        if (strcmp(t->names[i], name) == 0)
            return (long)i;
    }
    return -1;
}

const char *nnp__svt_cell(const nnp_svt_t *t, size_t row, long col)
{
    if (col < 0 || (size_t)col >= t->n_cols || row >= t->n_rows)
        return "";
    return t->cells[row * t->n_cols + (size_t)col];
}

double nnp__svt_num(const nnp_svt_t *t, size_t row, long col)
{
    const char *s = nnp__svt_cell(t, row, col);
    char *end;
    double v;
    if (!*s)
        return NAN;
    v = strtod(s, &end);
    while (*end == ' ')
        end++;
    return *end ? NAN : v;
}

void nnp__svt_fini(nnp_svt_t *t)
{
    nnp__free(t->buf);
    nnp__free(t->names);
    nnp__free(t->cells);
    memset(t, 0, sizeof(*t));
}

int nnp__svt_parse(nnp_svt_t *t, char *text, size_t len, const char *name)
{
    nnp_csv_reader_t r;
    size_t cap = 0;
    int rc;

    memset(t, 0, sizeof(*t));
    memset(&r, 0, sizeof(r));
    r.path = name;
    r.next_line = 1;
    r.buf = text;
    r.len = len;
    t->buf = text;
    t->present = true;
    rc = nnp__csv_next(&r);
    if (rc <= 0) {
        nnp__free(r.f);
        return rc < 0 ? rc : NNP_OK;
    }
    t->n_cols = r.n;
    t->names = nnp__malloc(r.n * sizeof(char *));
    if (!t->names) {
        nnp__free(r.f);
        return nnp__fail(NNP_ENOMEM, "out of memory reading %s", name);
    }
    memcpy(t->names, r.f, r.n * sizeof(char *));
    while ((rc = nnp__csv_next(&r)) > 0) {
        if (t->n_rows == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            char **p = nnp__realloc(t->cells, ncap * t->n_cols * sizeof(char *));
            if (!p) {
                rc = nnp__fail(NNP_ENOMEM, "out of memory reading %s", name);
                break;
            }
            t->cells = p;
            cap = ncap;
        }
        for (size_t c = 0; c < t->n_cols; c++)
            t->cells[t->n_rows * t->n_cols + c] = c < r.n ? r.f[c] : (char *)"";
        t->n_rows++;
    }
    nnp__free(r.f);
    return rc < 0 ? rc : NNP_OK;
}

/* A JSON number: -?digits[.digits][e[+-]digits], no leading zeros beyond one. */
static bool is_json_number(const char *s)
{
    const char *p = s;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return false;
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (*p < '0' || *p > '9')
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return *p == '\0';
}

void nnp__svt_json_num(nnp_jw_t *w, const nnp_svt_t *t, size_t row, long col)
{
    const char *s = nnp__svt_cell(t, row, col);
    double v;
    if (is_json_number(s)) {
        nnp__jw_raw(w, s);
        return;
    }
    v = nnp__svt_num(t, row, col);
    if (isnan(v) || isinf(v))
        nnp__jw_null(w);
    else
        nnp__jw_double(w, v);
}

/* Loads dir/name into t; a missing file is not an error (t stays empty). */
static int load_csv(const char *dir, const char *name, nnp_svt_t *t)
{
    char *text;
    size_t len;
    int rc = nnp__safe_read(dir, name, CSV_MAX_BYTES, &text, &len);
    memset(t, 0, sizeof(*t));
    if (rc == NNP_ENOENT)
        return NNP_OK;
    if (rc != NNP_OK) {
        NNP_LOG_W("%s/%s: %s", dir, name, nnp_last_error());
        return NNP_OK;
    }
    return nnp__svt_parse(t, text, len, name);
}

static cJSON *load_json(const char *dir, const char *name)
{
    char *text;
    cJSON *j;
    int rc = nnp__safe_read(dir, name, JSON_MAX_BYTES, &text, NULL);
    if (rc != NNP_OK) {
        if (rc != NNP_ENOENT)
            NNP_LOG_W("%s/%s: %s", dir, name, nnp_last_error());
        return NULL;
    }
    j = cJSON_Parse(text);
    if (!j)
        NNP_LOG_W("%s/%s: not valid JSON: ignored", dir, name);
    nnp__free(text);
    return j;
}

/* pattern with its one "%d" replaced by the rank (the patterns are ours, from tables:
 * no format string reaches printf). */
static void csv_name(char *buf, const char *pattern, int rank)
{
    const char *at = strstr(pattern, "%d");
    size_t pre = at ? (size_t)(at - pattern) : strlen(pattern);
    int k;
    if (pre >= NAME_CAP)
        pre = NAME_CAP - 1;
    memcpy(buf, pattern, pre);
    buf[pre] = '\0';
    if (at) {
        k = snprintf(buf + pre, NAME_CAP - pre, "%d%s", rank, at + 2);
        if (k < 0 || (size_t)k >= NAME_CAP - pre)
            buf[pre] = '\0';
    }
}

/* The tensors of operator_memory_{rank}.csv with a known allocation (outside-window
 * frees carry no allocation time and are never live at a point of the chart). */
static int load_tensors(nnp_rank_data_t *d)
{
    const nnp_svt_t *t = &d->op_mem;
    long c_name = nnp__svt_col(t, "Name"), c_size = nnp__svt_col(t, "Size(KB)");
    long c_at = nnp__svt_col(t, "Allocation Time(us)"), c_dur = nnp__svt_col(t, "Duration(us)");
    size_t k = 0;

    if (!t->n_rows || c_size < 0 || c_at < 0)
        return NNP_OK;
    d->tensors = nnp__calloc(t->n_rows, sizeof(nnp_mem_tensor_t));
    if (!d->tensors)
        return nnp__fail(NNP_ENOMEM, "out of memory loading operator memory");
    for (size_t i = 0; i < t->n_rows; i++) {
        int64_t at, dur;
        double size = nnp__svt_num(t, i, c_size);
        if (!nnp__parse_decimal_ns(nnp__svt_cell(t, i, c_at), 3, &at) || !(size > 0))
            continue;
        d->tensors[k].name = nnp__svt_cell(t, i, c_name);
        d->tensors[k].size_kb = size;
        d->tensors[k].alloc_ns = at;
        d->tensors[k].free_ns =
            nnp__parse_decimal_ns(nnp__svt_cell(t, i, c_dur), 3, &dur) ? at + dur : INT64_MAX;
        k++;
    }
    d->n_tensors = k;
    return NNP_OK;
}

/* rank_id of a PROF_* directory's info.json, -1 when unknown. */
static int prof_rank(const char *dir, const char *prof)
{
    char rel[NNP_PATH_MAX], *text;
    cJSON *j, *r;
    int rank = -1;
    snprintf(rel, sizeof(rel), "%s/info.json", prof);
    if (nnp__safe_read(dir, rel, JSON_MAX_BYTES, &text, NULL) != NNP_OK)
        return -1;
    j = cJSON_Parse(text);
    r = cJSON_GetObjectItemCaseSensitive(j, "rank_id");
    if (cJSON_IsNumber(r))
        rank = (int)r->valuedouble;
    cJSON_Delete(j);
    nnp__free(text);
    return rank;
}

/* Finds the rank's ASCEND_PROFILER_OUTPUT: rank_<r>/ (analysed with -o) or the PROF_*
 * directory whose info.json names the rank (analysed in place). */
static void find_rank_dir(const char *dir, int rank, nnp_rank_data_t *d)
{
    char rel[NNP_PATH_MAX];
    int fd;
    DIR *dp;
    struct dirent *e;

    snprintf(rel, sizeof(rel), "rank_%d/ASCEND_PROFILER_OUTPUT", rank);
    fd = nnp__safe_open(dir, rel, true);
    if (fd >= 0) {
        close(fd);
        if (nnp__path_join(d->trace_rel, sizeof(d->trace_rel), rel, "trace_view.json") != NNP_OK ||
            nnp__path_join(d->overlap_rel, sizeof(d->overlap_rel), rel, "step_trace_time.csv") !=
                NNP_OK)
            d->trace_rel[0] = d->overlap_rel[0] = '\0';
        return;
    }
    dp = opendir(dir);
    if (!dp)
        return;
    while ((e = readdir(dp)) != NULL) {
        if (strncmp(e->d_name, "PROF_", 5) != 0 || prof_rank(dir, e->d_name) != rank)
            continue;
        if (snprintf(d->trace_rel, sizeof(d->trace_rel),
                     "%s/ASCEND_PROFILER_OUTPUT/trace_view.json",
                     e->d_name) >= (int)sizeof(d->trace_rel) ||
            snprintf(d->overlap_rel, sizeof(d->overlap_rel),
                     "%s/ASCEND_PROFILER_OUTPUT/step_trace_time.csv",
                     e->d_name) >= (int)sizeof(d->overlap_rel))
            d->trace_rel[0] = d->overlap_rel[0] = '\0';
        break;
    }
    closedir(dp);
}

/* ---- what the pages need of the big tables, computed once at load (a call on a
 * 10 M-event run then costs no pass over 100 k steps) ---- */

const char *const nnp__phase_cols[NNP_N_PHASES] = {"iteration_interval", "fp_and_bp", "tail", "fp",
                                                   "total"};
const char *const nnp__overlap_cols[NNP_N_OVERLAP] = {"Computing", "Communication(Not Overlapped)",
                                                      "Overlapped", "Communication", "Free"};
static const char *const queue_cols[] = {"device_queue_size", "host_queue_size"};

/* {"points": N, "downsampled": b, "x": [...], "<col>": [...], ...}: cols of t over rows,
 * downsampled to NNP_CURVE_MAX_POINTS keeping every series' extremes, with the file's
 * own digits. Returns the text (nnp__free) in *out. */
static int curves_json(const nnp_svt_t *t, const size_t *rows, size_t n, long x_col,
                       const char *const *cols, size_t n_cols, char **out)
{
    double **ys = nnp__calloc(n_cols ? n_cols : 1, sizeof(double *));
    long *ci = nnp__calloc(n_cols ? n_cols : 1, sizeof(long));
    size_t *keep = nnp__malloc((n ? n : 1) * sizeof(size_t));
    size_t k = 0, used = 0;
    nnp_jw_t w;
    int rc = NNP_OK;

    *out = NULL;
    if (!ys || !ci || !keep) {
        rc = nnp__fail(NNP_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t s = 0; s < n_cols; s++) {
        ci[s] = nnp__svt_col(t, cols[s]);
        if (ci[s] < 0)
            continue;
        ys[used] = nnp__malloc((n ? n : 1) * sizeof(double));
        if (!ys[used]) {
            rc = nnp__fail(NNP_ENOMEM, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < n; i++)
            ys[used][i] = nnp__svt_num(t, rows[i], ci[s]);
        used++;
    }
    k = nnp__downsample_multi((const double *const *)ys, used, n, NNP_CURVE_MAX_POINTS, keep);
    rc = nnp__jw_init(&w, -1, false, CSV_MAX_BYTES);
    if (rc != NNP_OK)
        goto out;
    nnp__jw_obj_begin(&w);
    nnp__jw_key(&w, "points");
    nnp__jw_uint(&w, n);
    nnp__jw_key(&w, "downsampled");
    nnp__jw_bool(&w, k < n);
    nnp__jw_key(&w, "x");
    nnp__jw_arr_begin(&w);
    for (size_t i = 0; i < k; i++)
        nnp__svt_json_num(&w, t, rows[keep[i]], x_col);
    nnp__jw_arr_end(&w);
    for (size_t s = 0; s < n_cols; s++) {
        if (ci[s] < 0)
            continue;
        nnp__jw_key(&w, cols[s]);
        nnp__jw_arr_begin(&w);
        for (size_t i = 0; i < k; i++)
            nnp__svt_json_num(&w, t, rows[keep[i]], ci[s]);
        nnp__jw_arr_end(&w);
    }
    nnp__jw_obj_end(&w);
    rc = w.err;
    if (rc == NNP_OK && !(*out = nnp__jw_take(&w, NULL)))
        rc = nnp__fail(NNP_ENOMEM, "out of memory");
    nnp__jw_fini(&w);
out:
    for (size_t s = 0; ys && s < used; s++)
        nnp__free(ys[s]);
    nnp__free(ys);
    nnp__free(ci);
    nnp__free(keep);
    return rc;
}

/* Rows of the step trace that are steps (not the "-" averages row). */
static size_t step_rows(const nnp_svt_t *t, size_t *rows)
{
    long c = nnp__svt_col(t, "step_num");
    size_t n = 0;
    for (size_t i = 0; i < t->n_rows; i++) {
        if (strcmp(nnp__svt_cell(t, i, c), "-") != 0)
            rows[n++] = i;
    }
    return n;
}

/* Means over the rows that have a value; NAN for a column with none. */
static void column_means(const nnp_svt_t *t, const char *const *cols, size_t n_cols, double *out)
{
    for (size_t k = 0; k < n_cols; k++) {
        long c = nnp__svt_col(t, cols[k]);
        double sum = 0;
        size_t n = 0;
        for (size_t i = 0; c >= 0 && i < t->n_rows; i++) {
            double v = nnp__svt_num(t, i, c);
            if (!isnan(v)) {
                sum += v;
                n++;
            }
        }
        out[k] = n ? sum / (double)n : NAN;
    }
}

/* Mean start of each communication op after its step's start point (the averages row has
 * no points), per duration column; NAN for other columns. */
static int comm_offsets(nnp_rank_data_t *d)
{
    const nnp_svt_t *t = &d->steps;
    long c_start = nnp__svt_col(t, "start_point");
    d->comm_offset = nnp__malloc((t->n_cols ? t->n_cols : 1) * sizeof(double));
    if (!d->comm_offset)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    for (size_t c = 0; c < t->n_cols; c++) {
        char name[NAME_CAP + 32];
        long c_op;
        double sum = 0;
        size_t n = 0;
        d->comm_offset[c] = NAN;
        if (snprintf(name, sizeof(name), "%s_start_point", t->names[c]) >= (int)sizeof(name) ||
            (c_op = nnp__svt_col(t, name)) < 0)
            continue;
        for (size_t i = 0; i < t->n_rows; i++) {
            double a = nnp__svt_num(t, i, c_op), b = nnp__svt_num(t, i, c_start);
            if (!isnan(a) && !isnan(b)) {
                sum += a - b;
                n++;
            }
        }
        d->comm_offset[c] = n ? sum / (double)n : NAN;
    }
    return NNP_OK;
}

static int derive(nnp_rank_data_t *d)
{
    size_t cap = d->steps.n_rows > d->queue_steps.n_rows ? d->steps.n_rows : d->queue_steps.n_rows;
    size_t *rows = nnp__malloc((cap ? cap : 1) * sizeof(size_t)), n;
    int rc;
    if (!rows)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    n = step_rows(&d->steps, rows);
    d->n_steps = n;
    rc = curves_json(&d->steps, rows, n, nnp__svt_col(&d->steps, "step_num"), nnp__phase_cols,
                     NNP_N_PHASES, &d->step_curves);
    for (size_t i = 0; i < d->queue_steps.n_rows; i++)
        rows[i] = i;
    if (rc == NNP_OK)
        rc = curves_json(&d->queue_steps, rows, d->queue_steps.n_rows,
                         nnp__svt_col(&d->queue_steps, "step_num"), queue_cols,
                         NNP_ARRAY_LEN(queue_cols), &d->queue_curves);
    if (rc == NNP_OK)
        rc = comm_offsets(d);
    column_means(&d->overlap, nnp__overlap_cols, NNP_N_OVERLAP, d->overlap_avg);
    nnp__free(rows);
    return rc;
}

int nnp__rank_data_load(const char *dir, int rank, nnp_rank_data_t **out)
{
    static const struct {
        const char *fmt;
        size_t off;
    } csvs[] = {
        {"op_statistic_%d.csv", offsetof(nnp_rank_data_t, op_stat)},
        {"op_detail_%d.csv", offsetof(nnp_rank_data_t, op_detail)},
        {"step_trace_raw_%d_detail_time.csv", offsetof(nnp_rank_data_t, steps)},
        {"minddata_pipeline_raw_%d.csv", offsetof(nnp_rank_data_t, pipe_raw)},
        {"flops_%d.txt", offsetof(nnp_rank_data_t, flops)},
        {"host_info/host_memory_%d.csv", offsetof(nnp_rank_data_t, host_mem)},
        {"operator_memory_%d.csv", offsetof(nnp_rank_data_t, op_mem)},
        {"minddata_step_queue_%d.csv", offsetof(nnp_rank_data_t, queue_steps)},
        {"op_shapes_%d.csv", offsetof(nnp_rank_data_t, op_shapes)},
        {"op_self_time_%d.csv", offsetof(nnp_rank_data_t, op_self)},
    };
    static const struct {
        const char *fmt;
        size_t off;
    } jsons[] = {
        {"op_statistic_top20_%d.json", offsetof(nnp_rank_data_t, top20)},
        {"step_trace_summary_%d.json", offsetof(nnp_rank_data_t, step_summary)},
        {"step_trace_point_info_%d.json", offsetof(nnp_rank_data_t, point_info)},
        {"timeline_summary_%d.json", offsetof(nnp_rank_data_t, timeline_summary)},
        {"advice_%d.json", offsetof(nnp_rank_data_t, advice)},
        {"memory_usage_summary_%d.json", offsetof(nnp_rank_data_t, mem_summary)},
        {"memory_usage_details_%d.json", offsetof(nnp_rank_data_t, mem_details)},
        {"minddata_pipeline_summary_%d.json", offsetof(nnp_rank_data_t, pipe_summary)},
        {"minddata_cpu_utilization_%d.json", offsetof(nnp_rank_data_t, cpu)},
        {"flops_summary_%d.json", offsetof(nnp_rank_data_t, flops_summary)},
        {"dynamic_shape_info_%d.json", offsetof(nnp_rank_data_t, dyn_shape)},
    };
    char name[NAME_CAP];
    nnp_rank_data_t *d = nnp__calloc(1, sizeof(*d));
    int rc = NNP_OK;

    *out = NULL;
    if (!d)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    d->rank = rank;
    csv_name(name, "profiler_info_%d.json", rank);
    d->profiler_info = load_json(dir, name);
    if (!d->profiler_info) {
        nnp__free(d);
        return nnp__fail(NNP_ENOENT, "%s/%s: missing or unreadable", dir, name);
    }
    for (size_t i = 0; rc == NNP_OK && i < NNP_ARRAY_LEN(csvs); i++) {
        csv_name(name, csvs[i].fmt, rank);
        rc = load_csv(dir, name, (nnp_svt_t *)((char *)d + csvs[i].off));
    }
    for (size_t i = 0; i < NNP_ARRAY_LEN(jsons); i++) {
        csv_name(name, jsons[i].fmt, rank);
        *(cJSON **)((char *)d + jsons[i].off) = load_json(dir, name);
    }
    find_rank_dir(dir, rank, d);
    if (rc == NNP_OK && d->overlap_rel[0])
        rc = load_csv(dir, d->overlap_rel, &d->overlap);
    if (rc == NNP_OK)
        rc = load_tensors(d);
    if (rc == NNP_OK)
        rc = derive(d);
    if (rc != NNP_OK) {
        nnp__rank_data_free(d);
        return rc;
    }
    *out = d;
    return NNP_OK;
}

void nnp__rank_data_free(nnp_rank_data_t *d)
{
    if (!d)
        return;
    nnp__svt_fini(&d->op_stat);
    nnp__svt_fini(&d->op_detail);
    nnp__svt_fini(&d->steps);
    nnp__svt_fini(&d->overlap);
    nnp__svt_fini(&d->pipe_raw);
    nnp__svt_fini(&d->flops);
    nnp__svt_fini(&d->host_mem);
    nnp__svt_fini(&d->op_mem);
    nnp__svt_fini(&d->queue_steps);
    nnp__svt_fini(&d->op_shapes);
    nnp__svt_fini(&d->op_self);
    cJSON_Delete(d->top20);
    cJSON_Delete(d->step_summary);
    cJSON_Delete(d->point_info);
    cJSON_Delete(d->timeline_summary);
    cJSON_Delete(d->advice);
    cJSON_Delete(d->profiler_info);
    cJSON_Delete(d->mem_summary);
    cJSON_Delete(d->mem_details);
    cJSON_Delete(d->pipe_summary);
    cJSON_Delete(d->cpu);
    cJSON_Delete(d->flops_summary);
    cJSON_Delete(d->dyn_shape);
    nnp__free(d->tensors);
    nnp__free(d->step_curves);
    nnp__free(d->queue_curves);
    nnp__free(d->comm_offset);
    nnp__free(d);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int nnp__results_ranks(const char *dir, int *ranks, int cap)
{
    static const char prefix[] = "profiler_info_";
    DIR *dp = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!dp)
        return nnp__fail(nnp__from_errno(errno), "%s: %s", dir, strerror(errno));
    while ((e = readdir(dp)) != NULL && n < cap) {
        char *end;
        long r;
        if (strncmp(e->d_name, prefix, sizeof(prefix) - 1) != 0)
            continue;
        r = strtol(e->d_name + sizeof(prefix) - 1, &end, 10);
        if (end == e->d_name + sizeof(prefix) - 1 || strcmp(end, ".json") != 0 || r < 0 ||
            r > INT32_MAX)
            continue;
        ranks[n++] = (int)r;
    }
    closedir(dp);
    qsort(ranks, (size_t)n, sizeof(int), cmp_int);
    return n;
}
