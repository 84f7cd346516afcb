/* analyse.c - the analysis driver: takes the inputs found under a path (inputs.c), imports
 * each into a model, runs every analysis in order (step trace -> overlap -> op statistics
 * -> timeline -> host info -> ...) and writes profiler_info_{rank}.json (profiler_info.c). Ranks
 * run in parallel child processes (the seed's offline_analyse runs one Process per rank). One
 * failing analysis is logged and the others still write their files: results are never lost to one
 * bad step. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analyse/driver.h"
#include "analyse/hta.h"
#include "read/host_info_csv.h"
#include "read/importers.h"
#include "read/raw_import.h"
#include "util/util.h"

#define PROFILER_DIR "profiler"
/* Exit status a child uses to say "analysis failed" (its message went to the log). */
#define CHILD_FAILED 1
/* How often run_inputs looks whether a rank's child process ended (2 ms). */
#define CHILD_POLL_NS  2000000L
#define PROGRESS_WIDTH 30
#define NS_PER_S       1e9
#define KIB_PER_MIB    1024
/* Stages of one rank's analysis, for the progress bar. */
#define STAGES 14

/* Room for a list of ranks in one message. */
#define LIST_CAP 1024
/* The folders nnp__inputs_suggest names when nothing is found (a few paths). */
#define SUGGEST_CAP 1024

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

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / NS_PER_S;
}

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / NS_PER_S;
}

/* When a stage started: wall and this thread's CPU clock. */
typedef struct stage_clock {
    double wall_s, cpu_s;
} stage_clock_t;

static stage_clock_t stage_start(void)
{
    return (stage_clock_t){mono_s(), thread_cpu_s()};
}

/* Logs a stage's wall and CPU time at info level, in the form bench/bench_analyse.c
 * reads, with the process's peak RSS so far (where the memory goes). */
static void stage_time(int rank, const char *name, stage_clock_t t0)
{
    struct rusage ru;
    if (!nnp__log_enabled(NNP_LOG_INFO))
        return;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        ru.ru_maxrss = 0;
    NNP_LOG_I("analyse: rank %d: stage %s: %.3f s (CPU %.3f s, peak RSS so far %ld MiB)", rank,
              name, mono_s() - t0.wall_s, thread_cpu_s() - t0.cpu_s, ru.ru_maxrss / KIB_PER_MIB);
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

/* --steps that selects no step of the rank is an error naming the steps there are. */
static int check_steps(const nnp_model_t *m, const nnp_analyse_options_t *o)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    size_t n = 0;
    if (!o->has_steps)
        return NNP_OK;
    for (size_t i = 0; i < m->steps.t.n; i++) {
        uint64_t id = m->steps.id[i];
        if (id >= o->step_first && id <= o->step_last)
            return NNP_OK;
        lo = id < lo ? id : lo;
        hi = id > hi ? id : hi;
        n++;
    }
    if (n == 0)
        return nnp__fail(NNP_EINVAL,
                         "rank %d: --steps %llu-%llu selects no step: this rank recorded no step "
                         "(steps come from nnp_step_begin/nnp_step_end, or Profiler.step() in "
                         "Python); nothing was written",
                         m->info.rank_id, (unsigned long long)o->step_first,
                         (unsigned long long)o->step_last);
    return nnp__fail(
        NNP_EINVAL,
        "rank %d: --steps %llu-%llu selects no step: its %zu steps have ids %llu-%llu; "
        "nothing was written",
        m->info.rank_id, (unsigned long long)o->step_first, (unsigned long long)o->step_last, n,
        (unsigned long long)lo, (unsigned long long)hi);
}

/* What analyse_one tells the caller (through a pipe when it runs in a child process). */
typedef struct one_result {
    int rank;     /* the rank analysed, -1 when skipped (--rank) or failed early */
    int n_old;    /* earlier results kept as .old */
    int is_empty; /* no event recorded: only samples */
} one_result_t;

/* An error that stops this rank, prefixed with what (the message is copied first: it is
 * the thread's last-error buffer itself) and logged when no caller will print it (a child
 * process analysing one of several ranks). */
static int stop_rank(int rc, bool log, const char *what)
{
    char msg[NNP_PATH_MAX + NNP_NAME_MAX];
    nnp__strlcpy(msg, nnp_last_error(), sizeof(msg));
    rc = what ? nnp__fail(rc, "%s: %s", what, msg) : nnp__fail(rc, "%s", msg);
    if (log)
        NNP_LOG_E("%s", nnp_last_error());
    return rc;
}

/* The analyses that run on a second thread beside the others (issue 17: on 2 cores the
 * CLI's wall time is nearly halved): op statistics, FLOPs and the timeline, about half
 * of the writing of a large run. They start once the step trace is done, while the main
 * thread computes the overlap analysis, which only the timeline needs: it waits for
 * ov_ready. They only read the model and the step trace and overlap results, write their
 * own files and fill only their own findings (FLOPs), so nothing they touch is written by
 * the main thread meanwhile. */
typedef struct side_job {
    const nnp_actx_t *c;
    const nnp_step_trace_t *st;
    const nnp_overlap_t *ov; /* complete once ov_ready */
    nnp_findings_t *f;
    const char *path;
    int first; /* the first error, logged on this thread (its last-error text is its own) */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool ov_ready;
} side_job_t;

/* The main thread has finished *ov (side_main may draw it now). */
static void side_ov_ready(side_job_t *j)
{
    pthread_mutex_lock(&j->lock);
    j->ov_ready = true;
    pthread_cond_broadcast(&j->cond);
    pthread_mutex_unlock(&j->lock);
}

static void side_stage(side_job_t *j, int rc, const char *name, stage_clock_t t0)
{
    stage(&j->first, rc, name, j->path);
    stage_time(j->c->rank, name, t0);
}

static void *side_main(void *arg)
{
    side_job_t *j = arg;
    stage_clock_t t0 = stage_start();
    side_stage(j, nnp__op_stats_write_all(j->c, j->st), "operator statistics", t0);
    t0 = stage_start();
    side_stage(j, nnp__flops_write(j->c, j->st, j->f), "FLOPs", t0);
    pthread_mutex_lock(&j->lock);
    while (!j->ov_ready)
        pthread_cond_wait(&j->cond, &j->lock);
    pthread_mutex_unlock(&j->lock);
    t0 = stage_start();
    side_stage(j, nnp__timeline_write(j->c, j->st, j->ov), "timeline", t0);
    return NULL;
}

/* One analysis of analyse_one: runs call, keeps its first error, logs its time. */
#define RUN_STAGE(name, call)                                                                      \
    do {                                                                                           \
        stage_clock_t t_stage_ = stage_start();                                                    \
        stage(&first, (call), (name), in->path);                                                   \
        stage_time(c.rank, (name), t_stage_);                                                      \
    } while (0)

static int analyse_one(const nnp_inputs_t *ins, int idx, const char *out_dir,
                       const nnp_analyse_options_t *o, bool log, one_result_t *res)
{
    char what[NNP_PATH_MAX + 32];
    const nnp_input_t *in = &ins->v[idx];
    nnp_model_t m, view;
    nnp_actx_t c;
    nnp_step_trace_t st;
    nnp_overlap_t ov;
    nnp_findings_t findings;
    char rank_dir[NNP_PATH_MAX];
    time_t t_start = time(NULL);
    side_job_t side;
    pthread_t side_thread;
    bool has_side;
    stage_clock_t t0;
    int rc, first = NNP_OK;

    res->rank = -1;
    res->n_old = 0;
    res->is_empty = 0;
    memset(&st, 0, sizeof(st));
    memset(&ov, 0, sizeof(ov));
    rc = nnp__model_init(&m);
    if (rc != NNP_OK)
        return nnp__fail(rc, "out of memory");
    t0 = stage_start();
    rc = nnp__input_import(ins, idx, &m);
    if (rc != NNP_OK) {
        snprintf(what, sizeof(what), "%s: cannot import", in->path);
        nnp__model_fini(&m);
        return stop_rank(rc, log, what);
    }
    stage_time(m.info.rank_id, "import", t0);
    if (o->rank >= 0 && m.info.rank_id != o->rank) {
        nnp__model_fini(&m); /* --rank: not the rank asked for (known only after import) */
        return NNP_OK;
    }
    rc = check_steps(&m, o);
    if (rc != NNP_OK) {
        nnp__model_fini(&m);
        return stop_rank(rc, log, NULL);
    }
    if (nnp__model_events(&m) == 0) {
        res->is_empty = 1;
        NNP_LOG_W("rank %d (%s): no events were recorded, only %zu CPU/memory samples: the "
                  "program made no recording call. Record ops, steps and ranges with the API "
                  "(nnp_op_*, nnp_step_begin/end, nnp_range_begin/end; in Python "
                  "nnprof.record_function and Profiler.step), docs/PYTHON.md",
                  m.info.rank_id, in->path,
                  m.sys_cpu.t.n + m.task_cpu.t.n + m.proc_rss.t.n + m.host_mem.t.n);
    }
    rc = nnp__model_rank_view(&m, &view);
    if (rc != NNP_OK) {
        nnp__model_fini(&m);
        return stop_rank(rc, log, NULL);
    }
    memset(&c, 0, sizeof(c));
    c.m = &view;
    c.all = &m;
    c.timeline_summary = o->timeline_summary;
    c.has_graph = o->graph_id >= 0;
    c.graph_id = (uint32_t)o->graph_id;
    c.peak_flops = o->peak_flops;
    c.memory_capacity_bytes = o->memory_capacity_bytes;
    c.out_dir = out_dir;
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
        int k = snprintf(rank_dir, sizeof(rank_dir), "%s/rank_%d/%s", out_dir, c.rank,
                         NNP_RANK_OUTPUT_DIR);
        rc = k > 0 && (size_t)k < sizeof(rank_dir)
                 ? NNP_OK
                 : nnp__fail(NNP_ETOOLONG, "output path too long: %s", out_dir);
    }
    if (rc == NNP_OK)
        rc = nnp__mkdir_p(rank_dir, 0700);
    /* Earlier results of this rank move aside first: a failed or partial analysis then
     * leaves no earlier file beside new ones. */
    if (rc == NNP_OK)
        rc = nnp__outputs_set_aside(out_dir, rank_dir, c.rank, &res->n_old);
    if (rc != NNP_OK) {
        snprintf(what, sizeof(what), "rank %d", c.rank);
        nnp__model_view_fini(&view);
        nnp__model_fini(&m);
        return stop_rank(rc, log, what);
    }
    res->rank = c.rank;
    c.rank_dir = rank_dir;
    nnp__findings_init(&findings);
    progress(o, "step trace", 0, STAGES);
    t0 = stage_start();
    rc = nnp__step_trace_run(&c, &st);
    stage(&first, rc, "step trace", in->path);
    if (rc == NNP_OK)
        stage(&first, nnp__step_trace_write(&c, &st), "step trace output", in->path);
    stage_time(c.rank, "step trace", t0);
    side = (side_job_t){.c = &c, .st = &st, .ov = &ov, .f = &findings, .path = in->path};
    pthread_mutex_init(&side.lock, NULL);
    pthread_cond_init(&side.cond, NULL);
    has_side = pthread_create(&side_thread, NULL, side_main, &side) == 0;
    if (rc == NNP_OK) {
        progress(o, "overlap", 1, STAGES);
        t0 = stage_start();
        rc = nnp__overlap_run(&c, &st, &ov);
        stage(&first, rc, "overlap analysis", in->path);
        if (rc == NNP_OK)
            stage(&first, nnp__overlap_write(&c, &ov), "overlap output", in->path);
        stage_time(c.rank, "overlap", t0);
    }
    nnp__findings_from_core(&findings, &c, &st, &ov);
    side_ov_ready(&side);
    /* Without a second thread (pthread_create failed) the same analyses run here. */
    if (!has_side)
        side_main(&side);
    progress(o, "host info", 4, STAGES);
    RUN_STAGE("op shapes", nnp__op_shapes_write(&c));
    RUN_STAGE("host info", nnp__host_info_write(&c));
    RUN_STAGE("host ranges", nnp__host_ranges_write(&c));
    RUN_STAGE("op self time", nnp__op_self_write(&c, &findings));
    RUN_STAGE("op stacks", nnp__op_stacks_write(&c));
    RUN_STAGE("hccl_raw", nnp__hccl_raw_write(&c));
    progress(o, "memory", 5, STAGES);
    RUN_STAGE("memory", nnp__memory_write(&c, &st, &findings));
    progress(o, "data pipeline", 6, STAGES);
    RUN_STAGE("data pipeline", nnp__pipeline_write(&c, &findings));
    RUN_STAGE("data queues per step", nnp__queue_steps_write(&c, &st));
    progress(o, "CPU utilisation", 7, STAGES);
    RUN_STAGE("CPU utilisation", nnp__cpu_write(&c, &findings));
    progress(o, "dynamic shape", 9, STAGES);
    RUN_STAGE("dynamic shape", nnp__dynamic_shape_write(&c, &st, &findings));
    progress(o, "GPU operators", 10, STAGES);
    RUN_STAGE("GPU operators", nnp__gpu_write(&c, &st, &findings));
    progress(o, "GPU timeline", 11, STAGES);
    RUN_STAGE("GPU timeline", nnp__gpu_timeline_write(&c));
    progress(o, "operator statistics, timeline, FLOPs", 11, STAGES);
    if (has_side)
        pthread_join(side_thread, NULL);
    pthread_cond_destroy(&side.cond);
    pthread_mutex_destroy(&side.lock);
    if (first == NNP_OK)
        first = side.first;
    progress(o, "advisor", 12, STAGES);
    RUN_STAGE("advisor", nnp__advisor_write(&c, &findings));
    progress(o, "profiler info", 13, STAGES);
    RUN_STAGE("profiler info", nnp__profiler_info_write(&c, t_start, time(NULL)));
    progress(o, "done", STAGES, STAGES);
    nnp__overlap_fini(&ov);
    nnp__step_trace_fini(&st);
    nnp__model_view_fini(&view);
    nnp__model_fini(&m);
    if (first != NNP_OK)
        first = nnp__fail(first,
                          "rank %d: some analyses failed (see the log above); the others "
                          "wrote their files",
                          c.rank);
    return first;
}

/* Adds one rank's result to the report, keeping ranks sorted and distinct. */
static void report_add(nnp_analyse_report_t *rep, const one_result_t *r)
{
    int i;
    rep->n_old += r->n_old;
    rep->n_empty += r->is_empty;
    if (r->rank < 0 || rep->n_ranks >= NNP_REPORT_MAX_RANKS)
        return;
    for (i = rep->n_ranks; i > 0 && rep->ranks[i - 1] > r->rank; i--)
        rep->ranks[i] = rep->ranks[i - 1];
    if (i > 0 && rep->ranks[i - 1] == r->rank) {
        memmove(&rep->ranks[i], &rep->ranks[i + 1], (size_t)(rep->n_ranks - i) * sizeof(int));
        return;
    }
    rep->ranks[i] = r->rank;
    rep->n_ranks++;
}

/* Waits until one of the n children in kids ends and takes it out of kids: those only,
 * never wait() for any child, as a program that analyses in-process (nnp_analyse,
 * nnprof.torch) has children of its own (DataLoader workers, subprocesses) that it waits
 * for itself. Meanwhile it reads the results waiting in the pipe (fd, non-blocking):
 * a child writes its result before it ends, and with more results than the pipe holds
 * (5,461 of 12 bytes in 64 KiB) it would wait on a full pipe for ever. Returns the
 * child's wait status, or -1 when it cannot be waited for. */
static int wait_kid(pid_t *kids, int *n, int fd, nnp_analyse_report_t *rep)
{
    const struct timespec pause = {0, CHILD_POLL_NS};
    for (;;) {
        one_result_t res;
        while (read(fd, &res, sizeof(res)) == (ssize_t)sizeof(res))
            report_add(rep, &res);
        for (int i = 0; i < *n; i++) {
            int status = 0;
            pid_t r = waitpid(kids[i], &status, WNOHANG);
            if (r == 0 || (r < 0 && errno == EINTR))
                continue;
            kids[i] = kids[--*n];
            return r > 0 ? status : -1;
        }
        nanosleep(&pause, NULL);
    }
}

/* Analyses every input, at most jobs at a time, each in a child process (so one rank's
 * crash or memory cannot take the others down). Children tell their result through a
 * pipe (writes of one small record are atomic). */
static int run_inputs(const nnp_inputs_t *ins, const char *out_dir, const nnp_analyse_options_t *o,
                      nnp_analyse_report_t *rep)
{
    int jobs = o->jobs > 0 ? o->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
    int running = 0, next = 0, done = 0, failed = 0, fds[2];
    pid_t *kids;
    one_result_t r;

    if (jobs < 1)
        jobs = 1;
    if (jobs > ins->n)
        jobs = ins->n;
    if (ins->n == 1) {
        int rc = analyse_one(ins, 0, out_dir, o, false, &r);
        report_add(rep, &r);
        return rc;
    }
    kids = nnp__calloc((size_t)jobs, sizeof(pid_t));
    if (!kids)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    if (pipe(fds) != 0) {
        nnp__free(kids);
        return nnp__fail(NNP_EIO, "pipe: %s", strerror(errno));
    }
    if (fcntl(fds[0], F_SETFL, O_NONBLOCK) != 0) {
        int err = errno;
        close(fds[0]);
        close(fds[1]);
        nnp__free(kids);
        return nnp__fail(NNP_EIO, "pipe: %s", strerror(err));
    }
    while (done < ins->n) {
        int status;
        pid_t pid;
        while (running < jobs && next < ins->n) {
            pid = nnp__fork_helper();
            if (pid < 0) {
                int err = errno;
                close(fds[1]);
                while (running > 0) /* no zombie left behind */
                    (void)wait_kid(kids, &running, fds[0], rep);
                close(fds[0]);
                nnp__free(kids);
                return nnp__fail(NNP_EIO, "fork: %s", strerror(err));
            }
            if (pid == 0) {
                nnp_analyse_options_t child = *o;
                int rc;
                close(fds[0]);
                child.quiet = true;
                rc = analyse_one(ins, next, out_dir, &child, true, &r);
                if (write(fds[1], &r, sizeof(r)) != (ssize_t)sizeof(r))
                    rc = NNP_EIO;
                _exit(rc == NNP_OK ? 0 : CHILD_FAILED);
            }
            kids[running++] = pid;
            next++;
        }
        status = wait_kid(kids, &running, fds[0], rep);
        done++;
        if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            failed++;
        progress(o, "ranks analysed", done, ins->n);
    }
    nnp__free(kids);
    close(fds[1]);
    while (read(fds[0], &r, sizeof(r)) == (ssize_t)sizeof(r))
        report_add(rep, &r);
    close(fds[0]);
    if (failed)
        return nnp__fail(NNP_EIO, "%d of %d ranks failed to analyse (see the log above)", failed,
                         ins->n);
    return NNP_OK;
}

/* ---- Holistic Trace Analysis's analyses of PyTorch traces, across ranks (hta.h) ---- */

static const nnp_inputs_t *g_sort_inputs; /* qsort has no user pointer */

static int cmp_input_rank(const void *a, const void *b)
{
    int x = g_sort_inputs->v[*(const int *)a].rank, y = g_sort_inputs->v[*(const int *)b].rank;
    return (x > y) - (x < y);
}

/* After the per-rank analyses: the PyTorch (Kineto) inputs again, one model at a time in
 * rank order, through HTA's analyses (which compare ranks, so no rank's child can do them
 * alone). Its files go to <out_dir>/hta/. */
static int run_hta(const nnp_inputs_t *ins, const char *out_dir, const nnp_analyse_options_t *o)
{
    int *idx = nnp__calloc((size_t)ins->n + 1, sizeof(*idx));
    nnp_hta_t *h = NULL;
    int k = 0, rc = NNP_OK;
    if (!idx)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    for (int i = 0; i < ins->n; i++)
        if (ins->v[i].kind == NNP_INPUT_FOREIGN && ins->v[i].importer == &nnp__importer_kineto)
            idx[k++] = i;
    g_sort_inputs = ins;
    qsort(idx, (size_t)k, sizeof(*idx), cmp_input_rank);
    if (k > 0)
        rc = nnp__hta_create(out_dir, &h);
    for (int i = 0; rc == NNP_OK && i < k; i++) {
        nnp_model_t m;
        int irc = nnp__model_init(&m);
        if (irc == NNP_OK)
            irc = nnp__input_import(ins, idx[i], &m);
        if (irc == NNP_OK && (o->rank < 0 || m.info.rank_id == o->rank) && nnp__hta_applies(&m))
            rc = nnp__hta_add_rank(h, &m);
        else if (irc != NNP_OK)
            NNP_LOG_E("%s: HTA analyses: cannot import: %s", ins->v[idx[i]].path, nnp_last_error());
        nnp__model_fini(&m);
    }
    if (h && rc == NNP_OK)
        rc = nnp__hta_finish(h);
    nnp__hta_destroy(h);
    nnp__free(idx);
    if (rc != NNP_OK)
        NNP_LOG_E("HTA analyses failed: %s", nnp_last_error());
    return rc;
}

/* Resolves path (whose last parts may not exist yet) for comparisons. */
static void resolve(const char *path, char *out)
{
    if (!realpath(path, out))
        nnp__strlcpy(out, path, NNP_PATH_MAX);
}

static bool is_under(const char *dir, const char *top)
{
    size_t n = strlen(top);
    return strncmp(dir, top, n) == 0 && (dir[n] == '\0' || dir[n] == '/');
}

/* Other tools' files are never written: the output folder may be neither the folder named
 * nor a folder the importers read (nor above one where our subfolders would meet it). */
static int check_not_input(const nnp_inputs_t *ins, const char *out_dir)
{
    char ro[NNP_PATH_MAX], rd[NNP_PATH_MAX], rf[NNP_PATH_MAX], folder[NNP_PATH_MAX];
    if (!ins->is_foreign)
        return NNP_OK;
    resolve(out_dir, ro);
    resolve(ins->data_dir, rd);
    if (strcmp(ro, rd) == 0)
        return nnp__fail(NNP_EINVAL,
                         "output folder '%s' is the data folder: other tools' files are never "
                         "written, so results need a folder of their own (default: %s/%s)",
                         out_dir, ins->data_dir, NNP_FOREIGN_OUT_DIR);
    for (int i = 0; i < ins->n; i++) {
        char *slash;
        nnp__strlcpy(folder, ins->v[i].path, sizeof(folder));
        if (!nnp__dir_exists(folder) && (slash = strrchr(folder, '/')) != NULL)
            *slash = '\0';
        resolve(folder, rf);
        if (strcmp(rf, rd) != 0 && is_under(ro, rf))
            return nnp__fail(NNP_EINVAL,
                             "output folder '%s' is inside '%s', which holds data being read: "
                             "choose a folder outside it",
                             out_dir, folder);
        if (is_under(rf, ro) && strcmp(rf, ro) != 0) {
            const char *rest = rf + strlen(ro) + 1;
            if (strncmp(rest, "host_info", strlen("host_info")) == 0 ||
                strncmp(rest, "rank_", strlen("rank_")) == 0)
                return nnp__fail(NNP_EINVAL,
                                 "output folder '%s' would write into '%s', which holds data "
                                 "being read: choose another folder",
                                 out_dir, folder);
        }
    }
    return NNP_OK;
}

/* Keeps the inputs of --rank N; none is an error naming the ranks there are. */
static int filter_rank(nnp_inputs_t *ins, int want)
{
    char have[LIST_CAP] = "";
    int k = 0;
    if (want < 0)
        return NNP_OK;
    for (int i = 0; i < ins->n; i++) {
        size_t len = strlen(have);
        if (len < sizeof(have) && ins->v[i].rank >= 0)
            snprintf(have + len, sizeof(have) - len, "%s%d", len ? ", " : "", ins->v[i].rank);
        if (ins->v[i].rank == want || ins->v[i].rank < 0)
            ins->v[k++] = ins->v[i];
        else
            nnp__free(ins->v[i].path); /* dropped: its path is ours to free */
    }
    ins->n = k; /* the dropped inputs' paths are freed above */
    if (k == 0)
        return nnp__fail(NNP_ENOENT, "--rank %d: no such rank; the data holds rank%s %s", want,
                         strchr(have, ',') ? "s" : "", have);
    return NNP_OK;
}

int nnp__analyse_path_report(const char *path, const nnp_analyse_options_t *o,
                             nnp_analyse_report_t *rep)
{
    nnp_inputs_t ins;
    const char *out_dir;
    int rc, dirfd = -1;

    memset(rep, 0, sizeof(*rep));
    rc = nnp__inputs_find(path, &ins);
    if (rc == NNP_OK && ins.n == 0 && ins.n_unranked == 0) {
        char below[SUGGEST_CAP];
        int k = nnp__inputs_suggest(path, below, sizeof(below));
        if (k > 0)
            rc = nnp__fail(NNP_ENOENT,
                           "no profiling data found in '%s' itself, but below it in %s: "
                           "analyse %s",
                           path, below, k > 1 ? "one of them (each is one run)" : "that folder");
        else
            rc = nnp__fail(NNP_ENOENT,
                           "no profiling data found in '%s' (expected a PROF_* raw directory, "
                           "a profiler/ directory holding them, other tools' data "
                           "(docs/IMPORT.md) or host_info_{rank}.csv)",
                           path);
    }
    if (rc == NNP_OK)
        rc = filter_rank(&ins, o->rank);
    out_dir = o->output_dir[0] ? o->output_dir : ins.out_dir;
    if (rc == NNP_OK && !nnp__strlcpy(rep->out_dir, out_dir, sizeof(rep->out_dir)))
        rc = nnp__fail(NNP_ETOOLONG, "output path too long: %s", out_dir);
    rep->is_foreign = ins.is_foreign;
    if (rc == NNP_OK)
        rc = check_not_input(&ins, out_dir);
    if (rc == NNP_OK)
        rc = nnp__mkdir_p(out_dir, 0700);
    if (rc == NNP_OK)
        rc = nnp__outdir_open(out_dir, &dirfd);
    if (dirfd >= 0)
        close(dirfd);
    if (rc == NNP_OK && ins.n > 0)
        rc = run_inputs(&ins, out_dir, o, rep);
    if (rc == NNP_OK && ins.n > 0)
        rc = run_hta(&ins, out_dir, o);
    if (rc == NNP_OK && o->rank >= 0 && rep->n_ranks == 0)
        rc = nnp__fail(NNP_ENOENT, "--rank %d: no such rank in '%s'", o->rank, path);
    if (rc == NNP_OK && ins.n_unranked > 0)
        rc = nnp__fail(NNP_EINVAL,
                       "%d raw director%s left out: no rank could be given (see the log above)",
                       ins.n_unranked, ins.n_unranked == 1 ? "y was" : "ies were");
    nnp__inputs_fini(&ins);
    return rc;
}

int nnp__analyse_path(const char *path, const nnp_analyse_options_t *o)
{
    nnp_analyse_report_t *rep = nnp__malloc(sizeof(*rep));
    int rc;
    if (!rep)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    rc = nnp__analyse_path_report(path, o, rep);
    nnp__free(rep);
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
