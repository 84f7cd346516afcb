/* msprof_export.c - `nnprof export timeline|summary` of one raw directory: imports it,
 * runs the step trace and overlap analyses, selects the iterations asked for (seed 002:
 * --model-id 4294967295 = step mode, other ids count executions of that graph) and writes
 * msprof-named files (reference/formats.md section 3) into mindstudio_profiler_output/.
 * Called by tools/nnprof/cmd_export.c. Values we cannot fill are "N/A", as msprof. The
 * tables are written by msprof_export_summary.c, the timeline files by
 * msprof_export_timeline.c; this file is the driver and owns the README.txt and --clear. */
#include "export/msprof_export_internal.h"

#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "read/raw_import.h"

/* Open file descriptors nftw may use while removing a tree. */
#define NFTW_FDS 16

/* ---- selection ---- */

bool nnp__msprof_in_window(const msprof_ex_t *x, int64_t t)
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
static int select_rows(msprof_ex_t *x)
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

bool nnp__msprof_is_step_mode(const msprof_ex_t *x)
{
    return x->o->has_iteration && x->o->model_id == NNP_MSPROF_STEP_MODEL_ID;
}

/* ---- number cells ---- */

/* ns as microseconds with 3 decimals, exact (integer arithmetic). */
void nnp__msprof_fmt_us(char *b, size_t cap, int64_t ns)
{
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    snprintf(b, cap, "%s%llu.%03llu", ns < 0 ? "-" : "", (unsigned long long)(a / NS_PER_US),
             (unsigned long long)(a % NS_PER_US));
}

int nnp__msprof_record_file(msprof_ex_t *x, const char *name)
{
    if (x->res && x->res->n_files < NNP_MSPROF_MAX_FILES)
        nnp__strlcpy(x->res->files[x->res->n_files++], name, sizeof(x->res->files[0]));
    return NNP_OK;
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
static int remove_stale(msprof_ex_t *x)
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
static int write_readme(msprof_ex_t *x)
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
    return rc == NNP_OK ? nnp__msprof_record_file(x, "README.txt") : rc;
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

static int run_export(msprof_ex_t *x)
{
    return x->o->is_timeline ? nnp__msprof_write_timeline(x) : nnp__msprof_write_summary(x);
}

int nnp__msprof_export(const char *raw_dir, const nnp_msprof_opts_t *o, nnp_msprof_result_t *res)
{
    nnp_model_t m;
    nnp_actx_t c;
    msprof_ex_t x;
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
int nnp__msprof_rm_tree(const char *path)
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
