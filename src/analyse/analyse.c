/* analyse.c - the analysis driver: finds the inputs under a path (our raw directories, or
 * MindSpore's host_info CSVs), imports each into a model, runs every analysis in order
 * (step trace -> overlap -> op statistics -> timeline -> host info) and writes
 * profiler_info_{rank}.json. Ranks run in parallel child processes (the seed's
 * offline_analyse runs one Process per rank). One failing analysis is logged and the
 * others still write their files: results are never lost to one bad step. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analyse/analyse.h"
#include "analyse/op_stats.h"
#include "read/host_info_csv.h"
#include "read/importers.h"
#include "read/raw_import.h"
#include "read/raw_reader.h"
#include "util/json_writer.h"
#include "util/util.h"

/* Inputs one call accepts: far above any single host's rank count. */
#define MAX_INPUTS    4096
#define PROFILER_DIR  "profiler"
#define TIME_TEXT_CAP 32
/* Exit status a child uses to say "analysis failed" (its message went to the log). */
#define CHILD_FAILED   1
#define PROGRESS_WIDTH 30
/* Stages of one rank's analysis, for the progress bar. */
#define STAGES 12
/* Cap of the JSON text nnp_op_analyse returns (one small object per name). */
#define JSON_MEM_CAP (64u * 1024u * 1024u)

typedef enum input_kind { INPUT_RAW, INPUT_HOST_INFO_CSV, INPUT_FOREIGN } input_kind_t;

typedef struct input {
    input_kind_t kind;
    char path[NNP_PATH_MAX];        /* raw dir or CSV file */
    char out_dir[NNP_PATH_MAX];     /* where the *_{rank} files go */
    int rank;                       /* from the CSV name; raw dirs read it from info.json */
    const nnp_importer_t *importer; /* INPUT_FOREIGN */
} input_t;

static pid_t async_child = -1;

int nnp_analyse_options_init(nnp_analyse_options_t *o)
{
    if (!o)
        return NNP_EINVAL;
    memset(o, 0, sizeof(*o));
    o->is_developer = true;
    o->rank = -1;
    o->graph_id = -1;
    return NNP_OK;
}

/* ---- step list (seed 000 Profiler.analyse) ---- */

#define STEP_LIST_INTEGERS   "The elements of the parameter step_list must be integers."
#define STEP_LIST_CONTINUOUS "The elements of the parameter step_list must be continuous integers."
#define STEP_LIST_MAX_ITEMS  1000000

static int parse_u64(const char *s, const char *end, uint64_t *out)
{
    uint64_t v = 0;
    if (s == end)
        return -1;
    for (; s < end; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

int nnp_parse_step_list(const char *text, nnp_analyse_options_t *o)
{
    const char *dash, *p;
    uint64_t lo = UINT64_MAX, hi = 0, count = 0;

    if (!text || !o || !*text)
        return nnp__fail(NNP_EINVAL, STEP_LIST_INTEGERS);
    dash = strchr(text, '-');
    if (dash && !strchr(text, ',')) {
        if (parse_u64(text, dash, &lo) || parse_u64(dash + 1, text + strlen(text), &hi))
            return nnp__fail(NNP_EINVAL, STEP_LIST_INTEGERS);
        if (hi < lo)
            return nnp__fail(NNP_EINVAL, STEP_LIST_CONTINUOUS);
    } else {
        /* A list: continuous once sorted means max - min == count - 1 with no repeats;
         * the seed only checks max - min == len - 1 (repeats would then leave a gap). */
        for (p = text;; p++) {
            const char *end = strchr(p, ',');
            uint64_t v;
            if (!end)
                end = p + strlen(p);
            if (parse_u64(p, end, &v))
                return nnp__fail(NNP_EINVAL, STEP_LIST_INTEGERS);
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
            if (++count > STEP_LIST_MAX_ITEMS)
                return nnp__fail(NNP_EINVAL, STEP_LIST_CONTINUOUS);
            p = end;
            if (!*p)
                break;
        }
        if (hi - lo != count - 1)
            return nnp__fail(NNP_EINVAL, STEP_LIST_CONTINUOUS);
    }
    o->has_steps = true;
    o->step_first = lo;
    o->step_last = hi;
    return NNP_OK;
}

/* ---- profiler_info_{rank}.json ---- */

static void time_text(time_t t, char *buf)
{
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(buf, TIME_TEXT_CAP, "%Y-%m-%d %H:%M:%S", &tm);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Distinct graph ids of the steps and ops, sorted. Returns a count; *out is allocated. */
static size_t graph_ids(const nnp_model_t *m, uint32_t **out)
{
    size_t n = m->steps.t.n + m->ops.t.n, k = 0;
    uint32_t *v = n ? nnp__malloc(n * sizeof(uint32_t)) : NULL;
    *out = v;
    if (!v)
        return 0;
    for (size_t i = 0; i < m->steps.t.n; i++)
        v[k++] = m->steps.graph_id[i];
    for (size_t i = 0; i < m->ops.t.n; i++)
        v[k++] = m->ops.graph_id[i];
    qsort(v, k, sizeof(uint32_t), cmp_u32);
    n = 0;
    for (size_t i = 0; i < k; i++) {
        if (n == 0 || v[n - 1] != v[i])
            v[n++] = v[i];
    }
    return n;
}

static int write_profiler_info(const nnp_actx_t *c, time_t analyse_start, time_t analyse_end)
{
    const nnp_model_t *m = c->m;
    const nnp_run_info_t *in = &m->info;
    char name[64], t0[TIME_TEXT_CAP], t1[TIME_TEXT_CAP];
    nnp_outfile_t f;
    nnp_jw_t w;
    uint32_t *ids;
    size_t n_ids;
    int rc;

    snprintf(name, sizeof(name), "profiler_info_%d.json", c->rank);
    rc = nnp__out_open(&f, c->out_dir, name);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__jw_init(&w, f.fd, c->pretty, 0);
    nnp__jw_obj_begin(&w);
    nnp__jw_key(&w, "context_mode");
    nnp__jw_str(&w, "native");
    nnp__jw_key(&w, "rank_id");
    nnp__jw_int(&w, in->rank_id);
    nnp__jw_key(&w, "rank_size");
    nnp__jw_int(&w, in->rank_size);
    nnp__jw_key(&w, "device_id");
    nnp__jw_int(&w, in->device_id);
    nnp__jw_key(&w, "nnprof_version");
    nnp__jw_str(&w, NNP_VERSION_STRING);
    nnp__jw_key(&w, "mode");
    nnp__jw_str(&w, in->source_format ? in->source_format : "");
    nnp__jw_key(&w, "parallel_mode");
    nnp__jw_str(&w, in->rank_size > 1 ? "data_parallel" : "stand_alone");
    nnp__jw_key(&w, "stage_num");
    nnp__jw_int(&w, 1);
    time_text((time_t)(in->start_wall_us / 1000000), t0);
    nnp__jw_key(&w, "profiling_start_time");
    nnp__jw_str(&w, in->start_wall_us ? t0 : "");
    nnp__jw_key(&w, "profiling_stop_time");
    if (in->n_windows && in->windows[in->n_windows - 1].stop_ns != NNP_OPEN_END) {
        int64_t stop_us = in->windows[in->n_windows - 1].stop_ns / 1000 + in->diff_time_us;
        time_text((time_t)(stop_us / 1000000), t1);
        nnp__jw_str(&w, t1);
    } else {
        nnp__jw_str(&w, "");
    }
    time_text(analyse_start, t0);
    time_text(analyse_end, t1);
    nnp__jw_key(&w, "analyse_start_time");
    nnp__jw_str(&w, t0);
    nnp__jw_key(&w, "analyse_end_time");
    nnp__jw_str(&w, t1);
    nnp__jw_key(&w, "graph_ids");
    nnp__jw_arr_begin(&w);
    n_ids = graph_ids(m, &ids);
    for (size_t i = 0; i < n_ids; i++)
        nnp__jw_uint(&w, ids[i]);
    nnp__free(ids);
    nnp__jw_arr_end(&w);
    nnp__jw_key(&w, "is_heterogeneous");
    nnp__jw_bool(&w, false);
    nnp__jw_key(&w, "diff_time");
    nnp__jw_int(&w, in->diff_time_us);
    nnp__jw_key(&w, "run_state");
    nnp__jw_str(&w, in->state ? in->state : "unknown");
    nnp__jw_key(&w, "events_lost");
    nnp__jw_uint(&w, in->events_lost);
    nnp__jw_key(&w, "chunks_corrupt");
    nnp__jw_uint(&w, in->chunks_corrupt);
    nnp__jw_key(&w, "chunks_truncated");
    nnp__jw_uint(&w, in->chunks_truncated);
    nnp__jw_key(&w, "profiling_options");
    nnp__jw_raw(&w, in->options_json ? in->options_json : "{}");
    nnp__jw_obj_end(&w);
    nnp__jw_line_end(&w);
    if (rc == NNP_OK)
        rc = nnp__jw_flush(&w);
    nnp__jw_fini(&w);
    return nnp__out_commit(&f, rc);
}

/* ---- one input ---- */

static void progress(const nnp_analyse_options_t *o, const char *what, int done, int total)
{
    int fill;
    if (o->quiet || !isatty(STDERR_FILENO) || total <= 0)
        return;
    fill = done * PROGRESS_WIDTH / total;
    fprintf(stderr, "\r[%.*s%*s] %d/%d %-40.40s", fill, "##############################",
            PROGRESS_WIDTH - fill, "", done, total, what);
    if (done == total)
        fputc('\n', stderr);
    fflush(stderr);
}

/* Runs one stage; logs (and keeps) its first error so later stages still run. */
static void stage(int *first_rc, int rc, const char *name, const char *src)
{
    if (rc == NNP_OK)
        return;
    NNP_LOG_E("%s: %s failed: %s (%s)", src, name, nnp_last_error(), nnp_strerror(rc));
    if (*first_rc == NNP_OK)
        *first_rc = rc;
}

static int analyse_one(const input_t *in, const nnp_analyse_options_t *o)
{
    nnp_model_t m;
    nnp_actx_t c;
    nnp_step_trace_t st;
    nnp_overlap_t ov;
    nnp_findings_t findings;
    char rank_dir[NNP_PATH_MAX];
    time_t t_start = time(NULL);
    int rc, first = NNP_OK;

    memset(&st, 0, sizeof(st));
    memset(&ov, 0, sizeof(ov));
    rc = nnp__model_init(&m);
    if (rc != NNP_OK)
        return nnp__fail(rc, "out of memory");
    if (in->kind == INPUT_RAW) {
        rc = nnp__import_raw(in->path, &m);
    } else if (in->kind == INPUT_FOREIGN) {
        rc = in->importer->import(in->path, &m);
        if (rc == NNP_OK && m.info.rank_id == 0 && in->rank > 0)
            m.info.rank_id = in->rank;
        if (rc == NNP_OK)
            rc = nnp__model_finish(&m);
    } else {
        rc = nnp__import_host_info_csv(in->path, &m);
        if (rc == NNP_OK) {
            m.info.rank_id = in->rank;
            rc = nnp__model_finish(&m);
        }
    }
    if (rc != NNP_OK) {
        NNP_LOG_E("%s: cannot import: %s", in->path, nnp_last_error());
        nnp__model_fini(&m);
        return rc;
    }
    if (o->rank >= 0 && m.info.rank_id != o->rank) {
        nnp__model_fini(&m); /* --rank: not the rank asked for */
        return NNP_OK;
    }
    memset(&c, 0, sizeof(c));
    c.m = &m;
    c.timeline_summary = o->timeline_summary;
    c.has_graph = o->graph_id >= 0;
    c.graph_id = (uint32_t)o->graph_id;
    c.peak_flops = o->peak_flops;
    c.memory_capacity_bytes = o->memory_capacity_bytes;
    c.out_dir = in->out_dir;
    c.rank = m.info.rank_id;
    c.pretty = o->pretty;
    c.has_steps = o->has_steps;
    c.step_first = o->step_first;
    c.step_last = o->step_last;
    c.is_developer = o->is_developer;
    c.timeline_limit_bytes = m.info.timeline_limit_bytes;
    /* Per-rank directory: inside our raw directory (unless outputs go elsewhere), else
     * <out_dir>/rank_<r>/ (foreign data, --output). */
    if (in->kind == INPUT_RAW && !o->output_dir[0]) {
        rc = nnp__path_join(rank_dir, sizeof(rank_dir), in->path, NNP_RANK_OUTPUT_DIR);
    } else {
        int k = snprintf(rank_dir, sizeof(rank_dir), "%s/rank_%d/%s", in->out_dir, c.rank,
                         NNP_RANK_OUTPUT_DIR);
        rc = k > 0 && (size_t)k < sizeof(rank_dir)
                 ? NNP_OK
                 : nnp__fail(NNP_ETOOLONG, "output path too long: %s", in->out_dir);
    }
    if (rc == NNP_OK)
        rc = nnp__mkdir_p(in->out_dir, 0700);
    if (rc == NNP_OK)
        rc = nnp__mkdir_p(rank_dir, 0700);
    if (rc != NNP_OK) {
        nnp__model_fini(&m);
        return rc;
    }
    c.rank_dir = rank_dir;
    nnp__findings_init(&findings);
    progress(o, "step trace", 0, STAGES);
    rc = nnp__step_trace_run(&c, &st);
    stage(&first, rc, "step trace", in->path);
    if (rc == NNP_OK) {
        stage(&first, nnp__step_trace_write(&c, &st), "step trace output", in->path);
        progress(o, "overlap", 1, STAGES);
        rc = nnp__overlap_run(&c, &st, &ov);
        stage(&first, rc, "overlap analysis", in->path);
        if (rc == NNP_OK)
            stage(&first, nnp__overlap_write(&c, &ov), "overlap output", in->path);
    }
    progress(o, "operator statistics", 2, STAGES);
    stage(&first, nnp__op_stats_write_all(&c, &st), "operator statistics", in->path);
    nnp__findings_from_core(&findings, &c, &st, &ov);
    progress(o, "timeline", 3, STAGES);
    stage(&first, nnp__timeline_write(&c, &st, &ov), "timeline", in->path);
    progress(o, "host info", 4, STAGES);
    stage(&first, nnp__host_info_write(&c), "host info", in->path);
    progress(o, "memory", 5, STAGES);
    stage(&first, nnp__memory_write(&c, &st, &findings), "memory", in->path);
    progress(o, "data pipeline", 6, STAGES);
    stage(&first, nnp__pipeline_write(&c, &findings), "data pipeline", in->path);
    progress(o, "CPU utilisation", 7, STAGES);
    stage(&first, nnp__cpu_write(&c, &findings), "CPU utilisation", in->path);
    progress(o, "FLOPs", 8, STAGES);
    stage(&first, nnp__flops_write(&c, &st, &findings), "FLOPs", in->path);
    progress(o, "dynamic shape", 9, STAGES);
    stage(&first, nnp__dynamic_shape_write(&c, &st, &findings), "dynamic shape", in->path);
    progress(o, "advisor", 10, STAGES);
    stage(&first, nnp__advisor_write(&c, &findings), "advisor", in->path);
    progress(o, "profiler info", 11, STAGES);
    stage(&first, write_profiler_info(&c, t_start, time(NULL)), "profiler info", in->path);
    progress(o, "done", STAGES, STAGES);
    nnp__overlap_fini(&ov);
    nnp__step_trace_fini(&st);
    nnp__model_fini(&m);
    return first;
}

/* ---- finding inputs ---- */

static bool dir_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int add_input(input_t *v, int *n, input_kind_t kind, const char *path, const char *out,
                     int rank)
{
    if (*n >= MAX_INPUTS)
        return nnp__fail(NNP_EINVAL, "more than %d inputs", MAX_INPUTS);
    v[*n].kind = kind;
    v[*n].rank = rank;
    if (!nnp__strlcpy(v[*n].path, path, NNP_PATH_MAX) ||
        !nnp__strlcpy(v[*n].out_dir, out, NNP_PATH_MAX))
        return nnp__fail(NNP_ETOOLONG, "path too long: %s", path);
    (*n)++;
    return NNP_OK;
}

/* Adds every raw directory directly under dir (outputs go to dir). */
static int scan_raw_dirs(const char *dir, input_t *v, int *n)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int rc = NNP_OK;
    if (!d)
        return NNP_OK;
    while (rc == NNP_OK && (e = readdir(d)) != NULL) {
        char p[NNP_PATH_MAX];
        if (strncmp(e->d_name, "PROF_", 5) != 0)
            continue;
        if (nnp__path_join(p, sizeof(p), dir, e->d_name) == NNP_OK && nnp__raw_is_dir(p))
            rc = add_input(v, n, INPUT_RAW, p, dir, 0);
    }
    closedir(d);
    return rc;
}

static int find_inputs(const char *path, input_t *v, int *n)
{
    char prof[NNP_PATH_MAX], csv[NNP_PATH_MAX], out[NNP_PATH_MAX];
    int rank, rc;

    *n = 0;
    if (nnp__raw_is_dir(path)) {
        /* A raw directory: its outputs go to the profiler directory above it. */
        const char *slash;
        nnp__strlcpy(out, path, sizeof(out));
        while (strlen(out) > 1 && out[strlen(out) - 1] == '/')
            out[strlen(out) - 1] = '\0';
        slash = strrchr(out, '/');
        if (slash)
            out[slash == out ? 1 : slash - out] = '\0';
        else
            nnp__strlcpy(out, ".", sizeof(out));
        return add_input(v, n, INPUT_RAW, path, out, 0);
    }
    rc = nnp__path_join(prof, sizeof(prof), path, PROFILER_DIR);
    if (rc != NNP_OK)
        return rc;
    if (dir_exists(prof))
        rc = scan_raw_dirs(prof, v, n);
    if (rc == NNP_OK && *n == 0)
        rc = scan_raw_dirs(path, v, n);
    for (const nnp_importer_t *const *imp = nnp__importers; rc == NNP_OK && *n == 0 && *imp;
         imp++) {
        nnp_foreign_input_t *found = nnp__calloc(MAX_INPUTS, sizeof(*found));
        int k;
        if (!found)
            return nnp__fail(NNP_ENOMEM, "out of memory");
        k = (*imp)->find(path, found, MAX_INPUTS);
        for (int i = 0; rc == NNP_OK && i < k; i++) {
            rc = add_input(v, n, INPUT_FOREIGN, found[i].path, path, found[i].rank);
            if (rc == NNP_OK)
                v[*n - 1].importer = *imp;
        }
        nnp__free(found);
    }
    if (rc == NNP_OK && *n == 0 && nnp__host_info_csv_find(path, &rank, csv, sizeof(csv))) {
        /* MindSpore's layout: <dir>/profiler/host_info/host_info_{rank}.csv -> outputs in
         * <dir>/profiler/host_info/; a CSV directly in <dir> -> outputs in <dir>/host_info. */
        char *slash;
        nnp__strlcpy(out, csv, sizeof(out));
        slash = strrchr(out, '/');
        if (slash)
            *slash = '\0';
        if (strlen(out) >= strlen("host_info") &&
            strcmp(out + strlen(out) - strlen("host_info"), "host_info") == 0 &&
            (slash = strrchr(out, '/')) != NULL)
            *slash = '\0';
        else if (!slash)
            nnp__strlcpy(out, ".", sizeof(out));
        rc = add_input(v, n, INPUT_HOST_INFO_CSV, csv, out, rank);
    }
    return rc;
}

/* Analyses every input, at most jobs at a time, each in a child process (so one rank's
 * crash or memory cannot take the others down). */
static int run_inputs(const input_t *v, int n, const nnp_analyse_options_t *o)
{
    int jobs = o->jobs > 0 ? o->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
    int running = 0, next = 0, done = 0, failed = 0;

    if (jobs < 1)
        jobs = 1;
    if (n == 1)
        return analyse_one(&v[0], o);
    while (done < n) {
        int status;
        pid_t pid;
        while (running < jobs && next < n) {
            pid = nnp__fork_helper();
            if (pid < 0)
                return nnp__fail(NNP_EIO, "fork: %s", strerror(errno));
            if (pid == 0) {
                nnp_analyse_options_t child = *o;
                child.quiet = true;
                _exit(analyse_one(&v[next], &child) == NNP_OK ? 0 : CHILD_FAILED);
            }
            running++;
            next++;
        }
        pid = wait(&status);
        if (pid < 0)
            break;
        running--;
        done++;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            failed++;
        progress(o, "ranks analysed", done, n);
    }
    if (failed)
        return nnp__fail(NNP_EIO, "%d of %d inputs failed to analyse (see the log above)", failed,
                         n);
    return NNP_OK;
}

int nnp__analyse_path(const char *path, const nnp_analyse_options_t *o)
{
    input_t *v = nnp__calloc(MAX_INPUTS, sizeof(input_t));
    int n = 0, rc;
    if (!v)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    rc = find_inputs(path, v, &n);
    for (int i = 0; rc == NNP_OK && o->output_dir[0] && i < n; i++) {
        if (!nnp__strlcpy(v[i].out_dir, o->output_dir, sizeof(v[i].out_dir)))
            rc = nnp__fail(NNP_ETOOLONG, "output path too long: %s", o->output_dir);
    }
    if (rc == NNP_OK && n == 0)
        rc = nnp__fail(NNP_ENOENT,
                       "no profiling data found in '%s' (expected a PROF_* raw directory, a "
                       "profiler/ directory holding them, or host_info_{rank}.csv)",
                       path);
    if (rc == NNP_OK)
        rc = run_inputs(v, n, o);
    nnp__free(v);
    return rc;
}

int nnp_offline_analyse(const char *path, const nnp_analyse_options_t *o)
{
    nnp_analyse_options_t d;
    char prof[NNP_PATH_MAX];
    if (!o) {
        nnp_analyse_options_init(&d);
        o = &d;
    }
    if (!path || nnp__path_join(prof, sizeof(prof), path, PROFILER_DIR) != NNP_OK ||
        !dir_exists(prof))
        return nnp__fail(NNP_ENOENT, "There must be a profiler folder in the data path: %s.",
                         path ? path : "(null)");
    return nnp__analyse_path(path, o);
}

int nnp_analyse(nnp_session_t *s, const nnp_analyse_options_t *o)
{
    nnp_analyse_options_t d;
    const char *raw;
    int rc;
    if (!s)
        return nnp__fail(NNP_EINVAL, "session is NULL");
    if (!o) {
        nnp_analyse_options_init(&d);
        o = &d;
    }
    if (nnp_is_collecting()) {
        rc = nnp_session_stop(s);
        if (rc != NNP_OK)
            return rc;
    }
    /* Also makes the raw directory of a session that recorded nothing: an empty run. */
    rc = nnp_session_flush(s);
    if (rc != NNP_OK)
        return rc;
    raw = nnp_session_raw_dir(s);
    if (!o->async)
        return nnp__analyse_path(raw, o);
    if (async_child > 0)
        return nnp__fail(NNP_ESTATE, "an asynchronous analysis is still running; call "
                                     "nnp_analyse_wait() first");
    async_child = nnp__fork_helper();
    if (async_child < 0) {
        async_child = -1;
        return nnp__fail(NNP_EIO, "fork: %s", strerror(errno));
    }
    if (async_child == 0) {
        nnp_analyse_options_t child = *o;
        child.quiet = true;
        _exit(nnp__analyse_path(raw, &child) == NNP_OK ? 0 : CHILD_FAILED);
    }
    return NNP_OK;
}

int nnp_analyse_wait(void)
{
    int status;
    pid_t pid = async_child;
    if (pid <= 0)
        return NNP_OK;
    async_child = -1;
    if (waitpid(pid, &status, 0) < 0)
        return nnp__fail(NNP_EIO, "waitpid: %s", strerror(errno));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return nnp__fail(NNP_EIO, "the asynchronous analysis failed (see the log)");
    return NNP_OK;
}

/* ---- operator query (the seed's op_analyse) ---- */

void nnp_free(void *p)
{
    nnp__free(p);
}

/* The raw directory of device_id under path (-1: the first one found). */
static int pick_raw_dir(const char *path, int device_id, char *out, size_t cap)
{
    input_t *v = nnp__calloc(MAX_INPUTS, sizeof(input_t));
    int n = 0, rc;
    if (!v)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    rc = find_inputs(path, v, &n);
    for (int i = 0; rc == NNP_OK && i < n; i++) {
        if (v[i].kind != INPUT_RAW)
            continue;
        if (device_id >= 0) {
            /* Only info.json is needed: import nothing else. */
            int dev = -1;
            char info[NNP_PATH_MAX], *text = NULL;
            if (nnp__path_join(info, sizeof(info), v[i].path, "info.json") == NNP_OK &&
                nnp__read_file(info, 1u << 20, &text, NULL) == NNP_OK) {
                const char *k = strstr(text, "\"device_id\":");
                if (k)
                    dev = (int)strtol(k + strlen("\"device_id\":"), NULL, 10);
                nnp__free(text);
            }
            if (dev != device_id)
                continue;
        }
        nnp__strlcpy(out, v[i].path, cap);
        nnp__free(v);
        return NNP_OK;
    }
    nnp__free(v);
    if (rc != NNP_OK)
        return rc;
    return nnp__fail(NNP_ENOENT, "no profiling data%s in '%s'",
                     device_id >= 0 ? " for that device_id" : "", path);
}

int nnp_op_analyse(const char *path, const char *const *names, size_t n_names, int device_id,
                   char **json)
{
    char raw[NNP_PATH_MAX];
    nnp_model_t m;
    nnp_op_query_row_t *rows = NULL;
    size_t n_rows = 0;
    nnp_jw_t w;
    int rc;

    if (!json || !path)
        return nnp__fail(NNP_EINVAL, "nnp_op_analyse: NULL argument");
    *json = NULL;
    if (!names || n_names == 0)
        return nnp__fail(NNP_EINVAL, "For 'Profiler.op_analyse()', the parameter op_name "
                                     "cannot be \"\", '' or [].");
    rc = pick_raw_dir(path, device_id, raw, sizeof(raw));
    if (rc != NNP_OK)
        return rc;
    rc = nnp__model_init(&m);
    if (rc == NNP_OK)
        rc = nnp__import_raw(raw, &m);
    if (rc == NNP_OK)
        rc = nnp__op_query(&m, names, n_names, &rows, &n_rows);
    if (rc == NNP_OK)
        rc = nnp__jw_init(&w, -1, false, JSON_MEM_CAP);
    if (rc == NNP_OK) {
        nnp__jw_arr_begin(&w);
        for (size_t i = 0; i < n_rows; i++) {
            nnp__jw_obj_begin(&w);
            nnp__jw_key(&w, "op_name");
            nnp__jw_str(&w, rows[i].name);
            nnp__jw_key(&w, "count");
            nnp__jw_uint(&w, rows[i].count);
            nnp__jw_key(&w, "total_time_us");
            nnp__jw_double(&w, (double)rows[i].total_ns / 1e3);
            nnp__jw_key(&w, "avg_time_us");
            nnp__jw_double(&w, (double)rows[i].avg_ns / 1e3);
            nnp__jw_key(&w, "min_time_us");
            nnp__jw_double(&w, (double)rows[i].min_ns / 1e3);
            nnp__jw_key(&w, "max_time_us");
            nnp__jw_double(&w, (double)rows[i].max_ns / 1e3);
            nnp__jw_obj_end(&w);
        }
        nnp__jw_arr_end(&w);
        rc = w.err;
        *json = nnp__jw_take(&w, NULL);
        nnp__jw_fini(&w);
        if (rc == NNP_OK && !*json)
            rc = nnp__fail(NNP_ENOMEM, "out of memory");
    }
    nnp__free(rows);
    nnp__model_fini(&m);
    return rc;
}
