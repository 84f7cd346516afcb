/* analyse_rank.c - the analysis of one rank (nnp__analyse_rank): import, the step trace,
 * then the analyses on two threads (op statistics, FLOPs and the timeline on a second one,
 * beside the overlap analysis and the rest), each stage's wall and CPU time logged at info
 * level, the first failure kept while the others still write; and the progress bar. Called
 * by the driver (analyse.c) in-process or in a child process per rank. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "analyse/driver.h"
#include "analyse/hta.h"
#include "util/util.h"

#define PROGRESS_WIDTH 30
#define NS_PER_S       1e9
#define KIB_PER_MIB    1024
/* Stages of one rank's analysis, for the progress bar. */
#define STAGES 14

void nnp__analyse_progress(const nnp_analyse_options_t *o, const char *what, int done, int total)
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

int nnp__analyse_rank(const nnp_inputs_t *ins, int idx, const char *out_dir,
                      const nnp_analyse_options_t *o, bool log, nnp_rank_result_t *res)
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
    res->input = idx;
    res->has_gpu = 0;
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
    res->has_gpu = nnp__hta_applies(&m);
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
    nnp__analyse_progress(o, "step trace", 0, STAGES);
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
        nnp__analyse_progress(o, "overlap", 1, STAGES);
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
    nnp__analyse_progress(o, "host info", 4, STAGES);
    RUN_STAGE("op shapes", nnp__op_shapes_write(&c));
    RUN_STAGE("host info", nnp__host_info_write(&c));
    RUN_STAGE("host ranges", nnp__host_ranges_write(&c));
    RUN_STAGE("op self time", nnp__op_self_write(&c, &findings));
    RUN_STAGE("op stacks", nnp__op_stacks_write(&c));
    RUN_STAGE("hccl_raw", nnp__hccl_raw_write(&c));
    nnp__analyse_progress(o, "memory", 5, STAGES);
    RUN_STAGE("memory", nnp__memory_write(&c, &st, &findings));
    nnp__analyse_progress(o, "data pipeline", 6, STAGES);
    RUN_STAGE("data pipeline", nnp__pipeline_write(&c, &findings));
    RUN_STAGE("data queues per step", nnp__queue_steps_write(&c, &st));
    nnp__analyse_progress(o, "CPU utilisation", 7, STAGES);
    RUN_STAGE("CPU utilisation", nnp__cpu_write(&c, &findings));
    nnp__analyse_progress(o, "dynamic shape", 9, STAGES);
    RUN_STAGE("dynamic shape", nnp__dynamic_shape_write(&c, &st, &findings));
    nnp__analyse_progress(o, "GPU operators", 10, STAGES);
    RUN_STAGE("GPU operators", nnp__gpu_write(&c, &st, &findings));
    nnp__analyse_progress(o, "GPU timeline", 11, STAGES);
    RUN_STAGE("GPU timeline", nnp__gpu_timeline_write(&c));
    nnp__analyse_progress(o, "operator statistics, timeline, FLOPs", 11, STAGES);
    if (has_side)
        pthread_join(side_thread, NULL);
    pthread_cond_destroy(&side.cond);
    pthread_mutex_destroy(&side.lock);
    if (first == NNP_OK)
        first = side.first;
    nnp__analyse_progress(o, "advisor", 12, STAGES);
    RUN_STAGE("advisor", nnp__advisor_write(&c, &findings));
    nnp__analyse_progress(o, "profiler info", 13, STAGES);
    RUN_STAGE("profiler info", nnp__profiler_info_write(&c, t_start, time(NULL)));
    nnp__analyse_progress(o, "done", STAGES, STAGES);
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
