/* analyse.c - the analysis driver: takes the inputs found under a path (inputs.c), imports
 * each into a model, runs every analysis in order (step trace -> overlap -> op statistics
 * -> timeline -> host info -> ...) and writes profiler_info_{rank}.json (profiler_info.c). Ranks
 * run in parallel child processes (the seed's offline_analyse runs one Process per rank). One
 * failing analysis is logged and the others still write their files: results are never lost to one
 * bad step. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analyse/driver.h"
#include "read/host_info_csv.h"
#include "read/importers.h"
#include "read/raw_import.h"
#include "util/util.h"

#define PROFILER_DIR "profiler"
/* Exit status a child uses to say "analysis failed" (its message went to the log). */
#define CHILD_FAILED   1
#define PROGRESS_WIDTH 30
/* Stages of one rank's analysis, for the progress bar. */
#define STAGES 12

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

static int analyse_one(const nnp_input_t *in, const nnp_analyse_options_t *o)
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
    if (in->kind == NNP_INPUT_RAW) {
        rc = nnp__import_raw(in->path, &m);
    } else if (in->kind == NNP_INPUT_FOREIGN) {
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
    if (in->kind == NNP_INPUT_RAW && !o->output_dir[0]) {
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
    stage(&first, nnp__profiler_info_write(&c, t_start, time(NULL)), "profiler info", in->path);
    progress(o, "done", STAGES, STAGES);
    nnp__overlap_fini(&ov);
    nnp__step_trace_fini(&st);
    nnp__model_fini(&m);
    return first;
}

/* Analyses every input, at most jobs at a time, each in a child process (so one rank's
 * crash or memory cannot take the others down). */
static int run_inputs(const nnp_input_t *v, int n, const nnp_analyse_options_t *o)
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
            pid = fork();
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
    nnp_input_t *v = nnp__calloc(NNP_MAX_INPUTS, sizeof(nnp_input_t));
    int n = 0, rc;
    if (!v)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    rc = nnp__find_inputs(path, v, &n);
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
        !nnp__dir_exists(prof))
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
    } else {
        rc = nnp_session_flush(s);
        if (rc != NNP_OK)
            return rc;
    }
    raw = nnp_session_raw_dir(s);
    if (!o->async)
        return nnp__analyse_path(raw, o);
    if (async_child > 0)
        return nnp__fail(NNP_ESTATE, "an asynchronous analysis is still running; call "
                                     "nnp_analyse_wait() first");
    async_child = fork();
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
