/* test_fork.c - child processes of a profiled program (issue 10), with real processes: a
 * forked child that exits must not hang nor touch the parent's files, exec'd children do
 * not profile unless asked (follow_children), a session that recorded nothing leaves no
 * directory, a fork loop of 200, and with follow_fork every child's events in its own raw
 * directory linked to the parent's run, in the parent's later windows too. Each run is bounded in
 * time (a hang fails the test instead of blocking it) and every process's events are counted with
 * the raw reader. Runs under TSan in .ci/run (label recorder). */
#include <cjson/cJSON.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../helpers/nnpt_proc.h"
#include "model/model.h"
#include "read/raw_import.h"
#include "read/raw_reader.h"
#include "test_util.h"

#define PROC NNP_BINARY_DIR "/tests/nnpt_proc"
#define LIB  NNP_BINARY_DIR "/libnnprof.so"
/* Generous bounds: a hang shows as minutes, the machine may be shared and sanitized. */
#define LIMIT_S 180
#define STEPS   1000
/* Fork loop: children, and steps each records. */
#define LOOP_CHILDREN 200
#define LOOP_STEPS    50
/* How long a followed child may take to see its parent's window open or close (it looks
 * every writer period, 10 ms). */
#define FOLLOW_WAIT_S 30

/* TSan does not support threads started in the forked child of a threaded process (its
 * thread registry still holds the parent's threads: "dup thread with used id"), and
 * follow_fork starts the child's writer there. Under TSan those cases are left to the
 * ASan and plain runs; the rest of this file (children without threads, exec'd ones) runs. */
#if defined(__SANITIZE_THREAD__)
#define FOLLOW_FORK_TESTABLE false
#else
#define FOLLOW_FORK_TESTABLE true
#endif

/* Under TSan: no 1 s pause at each process's exit (atexit_sleep_ms), which would make the
 * 200 children of the fork loop take minutes. */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
    return "atexit_sleep_ms=0";
}

/* What one raw directory holds: its info.json identity and its step ids. */
typedef struct run {
    char dir[4096];
    long pid, parent_pid;
    char parent_raw_dir[512], child_kind[16], state[16];
    long rank;
    uint64_t steps, min_id, max_id, bad; /* bad: ids outside [want_lo, want_hi] */
    uint64_t want_lo, want_hi;
} run_t;

static int on_step(void *user, const nnp_raw_event_t *ev)
{
    run_t *r = user;
    uint64_t id;
    if (ev->kind != NNP_REC_STEP_BEGIN)
        return 0;
    id = ev->slots->a;
    if (r->steps == 0 || id < r->min_id)
        r->min_id = id;
    if (r->steps == 0 || id > r->max_id)
        r->max_id = id;
    r->steps++;
    return 0;
}

static long num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? (long)v->valuedouble : -1;
}

static void str(const cJSON *o, const char *key, char *dst, size_t cap)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    snprintf(dst, cap, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

/* Reads every raw directory under out; returns how many (at most cap). */
static int read_runs(const char *out, run_t *runs, int cap)
{
    int n = 0;
    char **dirs = nnpt_raw_dirs(out, &n);
    assert_true(n <= cap);
    for (int i = 0; i < n; i++) {
        run_t *r = &runs[i];
        nnp_raw_t *raw;
        cJSON *info = nnpt_load_json(dirs[i], "info.json");
        memset(r, 0, sizeof(*r));
        snprintf(r->dir, sizeof(r->dir), "%s", dirs[i]);
        assert_non_null(info);
        r->pid = num(info, "pid");
        r->parent_pid = num(info, "parent_pid");
        r->rank = num(info, "rank_id");
        str(info, "parent_raw_dir", r->parent_raw_dir, sizeof(r->parent_raw_dir));
        str(info, "child_kind", r->child_kind, sizeof(r->child_kind));
        str(info, "state", r->state, sizeof(r->state));
        cJSON_Delete(info);
        assert_int_equal(nnp__raw_open(dirs[i], &raw), NNP_OK);
        assert_int_equal(nnp__raw_read(raw, on_step, r), NNP_OK);
        assert_int_equal(nnp__raw_report(raw)->events_lost, 0);
        nnp__raw_close(raw);
    }
    nnpt_free_list(dirs, n);
    return n;
}

/* Of two runs, the parent's (no child_kind) and the child's. */
static void split_runs(const run_t runs[2], const run_t **parent, const run_t **child)
{
    *parent = runs[0].child_kind[0] ? &runs[1] : &runs[0];
    *child = *parent == &runs[0] ? &runs[1] : &runs[0];
}

static const char *base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Runs nnpt_proc with profiling from the environment; returns its exit code (fails the
 * test when it hung or crashed). extra: more "NAME=value" entries (NULL-ended), or NULL. */
static int run_proc(const char *out, const char *const argv[], const char *extra1,
                    const char *extra2)
{
    char opts[4400];
    /* ASan builds: the helper's forked children run without LeakSanitizer's exit check.
     * GCC 12's sanitizer allocator is not fork-safe (google/sanitizers#836; LLVM 17 added
     * at-fork locks): in a child forked while another thread held one of its locks, LSan's
     * exit check waits for it for ever. Memory errors are still caught; leaks are checked
     * in this process and in the in-process tests below. */
    const char *env[] = {opts,
                         "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1",
                         "NNPROF_LOG_LEVEL=error",
                         "NNPROF_ROOT_PID",
                         "NNPROF_PARENT_PID",
                         "NNPROF_PARENT_RAW_DIR",
                         "NNPROF_PARENT_RANK",
                         "NNPROF_FOLLOW_FORK",
                         "NNPROF_FOLLOW_CHILDREN",
                         NULL,
                         NULL,
                         NULL};
    size_t n = 0;
    int st;
    snprintf(opts, sizeof(opts),
             "MS_PROFILER_OPTIONS={\"start\": true, \"output_path\": \"%s\", "
             "\"sample_interval_ms\": 0}",
             out);
    while (env[n])
        n++;
    env[n] = extra1; /* NULL ends the list when there is no extra */
    env[n + 1] = extra1 ? extra2 : NULL;
    st = nnpt_spawn(argv, env, LIMIT_S);
    assert_true(st != -1); /* -1: it hung and was killed */
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

/* The parent's run: exactly steps 0 .. n-1, nothing of a child. */
static void assert_parent(const run_t *r, uint64_t n)
{
    assert_int_equal(r->steps, n);
    assert_int_equal(r->min_id, 0);
    assert_int_equal(r->max_id, n - 1);
    assert_string_equal(r->child_kind, "");
    assert_string_equal(r->state, "finalized");
}

/* A child's run: its own steps only, linked to the parent's run. */
static void assert_child(const run_t *c, const run_t *parent, const char *kind, uint64_t first,
                         uint64_t n)
{
    assert_int_equal(c->steps, n);
    assert_int_equal(c->min_id, first);
    assert_int_equal(c->max_id, first + n - 1);
    assert_string_equal(c->child_kind, kind);
    assert_int_equal(c->parent_pid, parent->pid);
    assert_string_equal(c->parent_raw_dir, base(parent->dir));
    assert_int_equal(c->rank, parent->rank);
    assert_string_equal(c->state, "finalized");
}

/* The reproduction: a profiled program forks a child that exit()s. The child's
 * exit must not wait for the parent's writer (it hung for ever), and it adds nothing. */
static void test_fork_exit_does_not_hang(void **state)
{
    char *out = nnpt_mkdtemp();
    char n_text[16];
    const char *argv[] = {PROC, "fork-exit", n_text, NULL};
    run_t runs[4];
    (void)state;
    snprintf(n_text, sizeof(n_text), "%d", STEPS);
    assert_int_equal(run_proc(out, argv, NULL, NULL), 0);
    assert_int_equal(read_runs(out, runs, 4), 1);
    assert_parent(&runs[0], 2 * STEPS);
    nnpt_rm_rf(out);
    free(out);
}

/* follow_fork: the child records into its own raw directory, every event of it found. */
static void test_follow_fork_child_has_its_own_run(void **state)
{
    char *out;
    char n_text[16];
    const char *argv[] = {PROC, "fork-exit", n_text, NULL};
    run_t runs[4];
    const run_t *parent, *child;
    (void)state;
    if (!FOLLOW_FORK_TESTABLE)
        skip();
    out = nnpt_mkdtemp();
    snprintf(n_text, sizeof(n_text), "%d", STEPS);
    assert_int_equal(run_proc(out, argv, "NNPROF_FOLLOW_FORK=1", "RANK_ID=3"), 0);
    assert_int_equal(read_runs(out, runs, 4), 2);
    split_runs(runs, &parent, &child);
    assert_parent(parent, 2 * STEPS);
    assert_int_equal(parent->rank, 3);
    assert_child(child, parent, "fork", NNPT_CHILD_BASE, STEPS);
    assert_true(child->pid != parent->pid);
    nnpt_rm_rf(out);
    free(out);
}

/* fork + exec: the exec'd program profiles only with follow_children. */
static void test_fork_exec_follows_only_when_asked(void **state)
{
    char *out = nnpt_mkdtemp();
    char n_text[16];
    const char *argv[] = {PROC, "fork-exec", n_text, PROC, NULL};
    run_t runs[4];
    const run_t *parent, *child;
    (void)state;
    snprintf(n_text, sizeof(n_text), "%d", STEPS);
    assert_int_equal(run_proc(out, argv, NULL, NULL), 0);
    assert_int_equal(read_runs(out, runs, 4), 1);
    assert_parent(&runs[0], 2 * STEPS);
    nnpt_rm_rf(out);

    assert_int_equal(run_proc(out, argv, "NNPROF_FOLLOW_CHILDREN=1", NULL), 0);
    assert_int_equal(read_runs(out, runs, 4), 2);
    split_runs(runs, &parent, &child);
    assert_parent(parent, 2 * STEPS);
    assert_child(child, parent, "exec", NNPT_LEAF_BASE, STEPS);
    nnpt_rm_rf(out);

    /* A child the launcher made another rank is a rank of its own: not linked. */
    assert_int_equal(run_proc(out, argv, "NNPROF_FOLLOW_CHILDREN=1", "NNPT_CHILD_RANK=1"), 0);
    assert_int_equal(read_runs(out, runs, 4), 2);
    for (int i = 0; i < 2; i++) {
        assert_string_equal(runs[i].child_kind, "");
        assert_int_equal(runs[i].parent_pid, -1);
    }
    assert_int_equal(runs[0].rank + runs[1].rank, 1); /* ranks 0 and 1 */
    assert_int_equal(runs[runs[0].rank == 1 ? 0 : 1].steps, STEPS);
    nnpt_rm_rf(out);
    free(out);
}

/* `sh -c` under LD_PRELOAD: neither the shell (it records nothing) nor the programs it
 * runs (descendants) leave a raw directory; before, each left a half-made PROF_*. */
static void test_preloaded_shell_leaves_nothing(void **state)
{
    char *out;
    char opts[4400], prof[4200];
    const char *argv[] = {"/bin/sh", "-c", "/bin/true; /bin/true; /bin/true", NULL};
    const char *env[] = {opts,
                         "LD_PRELOAD=" LIB,
                         "NNPROF_LOG_LEVEL=error",
                         "NNPROF_ROOT_PID",
                         "NNPROF_FOLLOW_CHILDREN",
                         NULL};
    struct stat st;
    int status;
    (void)state;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    /* A sanitized libnnprof.so cannot be preloaded into an uninstrumented /bin/sh; the
     * fork-exec test covers the same start-up rule with an instrumented program. */
    skip();
#endif
    out = nnpt_mkdtemp();
    snprintf(opts, sizeof(opts),
             "MS_PROFILER_OPTIONS={\"start\": true, \"output_path\": \"%s\", "
             "\"sample_interval_ms\": 0}",
             out);
    status = nnpt_spawn(argv, env, LIMIT_S);
    assert_true(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    snprintf(prof, sizeof(prof), "%s/profiler", out);
    assert_int_equal(stat(prof, &st), -1); /* not even profiler/ */
    nnpt_rm_rf(out);
    free(out);
}

/* 200 forks in a row: the parent's data is complete, and with follow_fork each child's. */
static void test_fork_loop_of_200(void **state)
{
    char *out = nnpt_mkdtemp();
    char k_text[16], n_text[16];
    const char *argv[] = {PROC, "fork-loop", k_text, n_text, NULL};
    run_t *runs = calloc(LOOP_CHILDREN + 4, sizeof(run_t));
    const run_t *parent = NULL;
    int n;
    (void)state;
    assert_non_null(runs);
    snprintf(k_text, sizeof(k_text), "%d", LOOP_CHILDREN);
    snprintf(n_text, sizeof(n_text), "%d", LOOP_STEPS);
    assert_int_equal(run_proc(out, argv, NULL, NULL), 0);
    assert_int_equal(read_runs(out, runs, LOOP_CHILDREN + 4), 1);
    assert_parent(&runs[0], LOOP_CHILDREN);
    nnpt_rm_rf(out);
    if (!FOLLOW_FORK_TESTABLE) {
        free(runs);
        free(out);
        return;
    }

    assert_int_equal(run_proc(out, argv, "NNPROF_FOLLOW_FORK=1", NULL), 0);
    n = read_runs(out, runs, LOOP_CHILDREN + 4);
    assert_int_equal(n, LOOP_CHILDREN + 1);
    for (int i = 0; i < n; i++)
        if (!runs[i].child_kind[0])
            parent = &runs[i];
    assert_non_null(parent);
    assert_parent(parent, LOOP_CHILDREN);
    for (int i = 0; i < n; i++) {
        uint64_t k;
        if (&runs[i] == parent)
            continue;
        k = (runs[i].min_id - NNPT_LOOP_BASE) / NNPT_LOOP_STRIDE;
        assert_true(k < LOOP_CHILDREN);
        assert_child(&runs[i], parent, "fork", NNPT_LOOP_BASE + k * NNPT_LOOP_STRIDE, LOOP_STEPS);
    }
    free(runs);
    nnpt_rm_rf(out);
    free(out);
}

/* ---- a session made in code, in this process ---- */

typedef struct busy {
    pthread_t th;
    _Atomic bool stop;
    _Atomic uint64_t n;
} busy_t;

/* Records and interns new strings without pause, so fork() meets the string table's lock
 * and the buffer registry in use. */
static void *busy_thread(void *arg)
{
    busy_t *b = arg;
    char name[64];
    while (!atomic_load(&b->stop)) {
        uint64_t i = atomic_fetch_add(&b->n, 1);
        snprintf(name, sizeof(name), "busy-%llu", (unsigned long long)(i % 4096));
        nnp_counter(nnp_intern(name), (double)i);
    }
    return NULL;
}

/* A child of a program that made its session in code: it has no session (its copy of the
 * handle says so), interns and records without deadlock, and destroying its copy is a
 * no-op for the parent's files. 50 forks while another thread records and interns. */
static void test_code_session_child(void **state)
{
    char *out = nnpt_mkdtemp();
    nnp_options_t o;
    nnp_session_t *s;
    busy_t b;
    run_t runs[4];
    (void)state;

    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", out);
    o.sample_interval_ms = 0;
    o.full_policy = NNP_FULL_BLOCK; /* the busy thread outruns the writer: no drops */
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    atomic_init(&b.stop, false);
    atomic_init(&b.n, 0);
    assert_int_equal(pthread_create(&b.th, NULL, busy_thread, &b), 0);
    for (int i = 0; i < 50; i++) {
        pid_t pid;
        nnp_step_begin((uint64_t)i, 0);
        fflush(NULL);
        pid = fork();
        if (pid == 0) {
            int code = 0;
            nnp_stats_t st;
            if (nnp_session_current() != NULL || nnp_is_collecting())
                code = 10;
            if (nnp_session_start(s) != NNP_ESTATE || nnp_session_stop(s) != NNP_ESTATE)
                code = 11;
            if (nnp_session_stats(s, &st) != NNP_OK || st.events_recorded != 0)
                code = 12;
            if (nnp_intern("child-string") == 0)
                code = 13;
            nnp_step_begin(NNPT_CHILD_BASE + (uint64_t)i, 0); /* goes nowhere */
            if (nnp_session_destroy(s) != NNP_OK) /* the child's copy: released, nothing else */
                code = 14;
            /* _exit: the exit path of a forked child is nnpt_proc's (run_proc tests), where
             * LeakSanitizer's own exit check can be left out (see run_proc). */
            _exit(code);
        }
        {
            int st = nnpt_wait_bounded(pid, LIMIT_S);
            assert_true(st != -1);
            assert_true(WIFEXITED(st));
            assert_int_equal(WEXITSTATUS(st), 0);
        }
    }
    atomic_store(&b.stop, true);
    pthread_join(b.th, NULL);
    nnp_step_begin(50, 0);
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    assert_int_equal(read_runs(out, runs, 4), 1);
    assert_int_equal(runs[0].pid, getpid());
    assert_parent(&runs[0], 51);
    nnpt_rm_rf(out);
    free(out);
}

/* A session made in code with follow_fork, writing under out: rank 5, its sampler every
 * sample_ms (0: none), its window open from the start or not. */
static nnp_session_t *follow_session(const char *out, bool start, int sample_ms)
{
    nnp_options_t o;
    nnp_session_t *s;
    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", out);
    o.sample_interval_ms = sample_ms;
    o.follow_fork = true;
    o.rank_id = 5;
    o.start_profile = start;
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    return s;
}

/* follow_fork with a session made in code: the child's run starts with the parent's window
 * open, holds the child's events only, and its pid. */
static void test_code_session_follow_fork(void **state)
{
    char *out;
    nnp_session_t *s;
    run_t runs[4];
    const run_t *parent, *child;
    pid_t pid;
    int st;
    (void)state;

    if (!FOLLOW_FORK_TESTABLE)
        skip();
    out = nnpt_mkdtemp();
    s = follow_session(out, true, 0);
    for (uint64_t i = 0; i < STEPS; i++)
        nnp_step_begin(i, 0);
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        int code = nnp_session_current() && nnp_is_collecting() ? 0 : 20;
        for (uint64_t i = 0; i < STEPS; i++)
            nnp_step_begin(NNPT_CHILD_BASE + i, 0);
        /* The exit hook would do this (nnpt_proc's follow_fork children show it); done by
         * hand and left with _exit, away from LeakSanitizer's exit check (see run_proc). */
        if (nnp_session_destroy(nnp_session_current()) != NNP_OK)
            code = 21;
        _exit(code);
    }
    st = nnpt_wait_bounded(pid, LIMIT_S);
    assert_true(st != -1 && WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    for (uint64_t i = STEPS; i < 2 * STEPS; i++)
        nnp_step_begin(i, 0);
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    assert_int_equal(read_runs(out, runs, 4), 2);
    split_runs(runs, &parent, &child);
    assert_int_equal(parent->pid, getpid());
    assert_parent(parent, 2 * STEPS);
    assert_child(child, parent, "fork", NNPT_CHILD_BASE, STEPS);
    assert_int_equal(child->pid, pid);
    assert_int_equal(child->rank, 5);
    nnpt_rm_rf(out);
    free(out);
}

/* Waits (bounded) until this process's collecting state is want; false on time out. */
static bool wait_collecting(bool want)
{
    for (int i = 0; i < FOLLOW_WAIT_S * 1000; i++) {
        if (nnp_is_collecting() == want)
            return true;
        usleep(1000);
    }
    return false;
}

static void send_byte(int fd)
{
    char b = 1;
    assert_int_equal(write(fd, &b, 1), 1);
}

static bool recv_byte(int fd)
{
    char b;
    return read(fd, &b, 1) == 1;
}

/* Ops each process records in test_worker_kept_out_of_the_rank, and how long each runs
 * (a few samples at SAMPLE_MS). */
#define PARENT_OPS 3
#define WORKER_OPS 5
#define SAMPLE_MS  10
#define RUN_US     80000
#define SETTLE_US  100000

static void record_ops(const char *name, int n)
{
    nnp_op_t op = {0};
    op.name = nnp_intern(name);
    op.type = op.name;
    for (int i = 0; i < n; i++) {
        uint64_t t0 = nnp_now();
        usleep(1000);
        nnp_op_since(&op, t0);
    }
    usleep(RUN_US);
}

/* Rows of a model table made from raw directory dir alone. */
static size_t rss_rows_of(const char *dir)
{
    nnp_model_t m;
    size_t n;
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__import_raw(dir, &m), NNP_OK);
    n = m.proc_rss.t.n;
    nnp__model_fini(&m);
    return n;
}

/* follow_fork, as a DataLoader's worker: the child's ops are in the rank's timeline, not in
 * its op statistics (as torch.profiler counts only the training process), and the rank's
 * CPU and memory samples are the parent's only (a series of two processes' samples mixed
 * their counters: 3150 % process CPU). */
static void test_worker_kept_out_of_the_rank(void **state)
{
    static const char *const names[] = {"parent_op", "worker_op"};
    char *out, *json, path[8192];
    char *text;
    nnp_session_t *s;
    nnp_analyse_options_t ao;
    nnp_model_t m;
    run_t runs[4];
    const run_t *parent, *child;
    const char *dirs[2];
    pid_t pid;
    int st;
    (void)state;

    if (!FOLLOW_FORK_TESTABLE)
        skip();
    out = nnpt_mkdtemp();
    s = follow_session(out, false, SAMPLE_MS);
    /* Forked before the window opens, as persistent workers are, once the session's
     * threads have started: under ASan a thread still starting at fork() can hold ASan's
     * allocator lock, which then stays locked in the child (glibc's malloc is fork-safe). */
    usleep(SETTLE_US);
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        if (!wait_collecting(true))
            _exit(20);
        record_ops("worker_op", WORKER_OPS);
        _exit(nnp_session_destroy(nnp_session_current()) == NNP_OK ? 0 : 21);
    }
    assert_int_equal(nnp_session_start(s), NNP_OK);
    record_ops("parent_op", PARENT_OPS);
    st = nnpt_wait_bounded(pid, LIMIT_S);
    assert_true(st != -1 && WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    assert_int_equal(read_runs(out, runs, 4), 2);
    split_runs(runs, &parent, &child);

    /* The model: every row, the worker's pid named, the samples the parent's. */
    dirs[0] = parent->dir;
    dirs[1] = child->dir;
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__import_raw_group(dirs, 2, &m), NNP_OK);
    assert_int_equal(m.ops.t.n, PARENT_OPS + WORKER_OPS);
    assert_int_equal(m.info.n_worker_pids, 1);
    assert_int_equal(m.info.worker_pids[0], child->pid);
    assert_int_equal(m.info.pid, getpid());
    assert_true(rss_rows_of(parent->dir) > 0);
    assert_true(rss_rows_of(child->dir) > 0);
    assert_int_equal(m.proc_rss.t.n, rss_rows_of(parent->dir));
    nnp__model_fini(&m);

    /* The rank's op statistics and query: the parent's ops only. */
    assert_int_equal(nnp_op_analyse(out, names, 2, -1, &json), NNP_OK);
    assert_non_null(strstr(json, "\"op_name\":\"parent_op\",\"count\":3,"));
    assert_non_null(strstr(json, "\"op_name\":\"worker_op\",\"count\":0,"));
    nnp_free(json);
    nnp_analyse_options_init(&ao);
    ao.quiet = true;
    assert_int_equal(nnp_offline_analyse(out, &ao), NNP_OK);
    snprintf(path, sizeof(path), "%s/profiler/op_statistic_5.csv", out);
    text = nnpt_read_file(path);
    assert_non_null(text);
    assert_non_null(strstr(text, "\nparent_op,HOST_CPU,3,"));
    assert_null(strstr(text, "worker_op"));
    free(text);
    /* The timeline: both, the worker's in its own process. */
    snprintf(path, sizeof(path), "%s/ASCEND_PROFILER_OUTPUT/trace_view.json", parent->dir);
    text = nnpt_read_file(path);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"parent_op\""));
    assert_non_null(strstr(text, "\"worker_op\""));
    free(text);
    nnpt_rm_rf(out);
    free(out);
}

/* follow_fork: a child forked before the parent's window opens (a DataLoader's persistent
 * workers, forked in a schedule's wait steps) records in the parent's later window and
 * stops with it. The child's steps while the parent's window is open are all there, those
 * after it closed none. */
static void test_follow_fork_child_follows_later_windows(void **state)
{
    char *out;
    nnp_session_t *s;
    run_t runs[4];
    const run_t *parent, *child;
    int to_child[2], to_parent[2], st;
    pid_t pid;
    (void)state;

    if (!FOLLOW_FORK_TESTABLE)
        skip();
    out = nnpt_mkdtemp();
    s = follow_session(out, false, 0);
    assert_int_equal(pipe(to_child), 0);
    assert_int_equal(pipe(to_parent), 0);
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        int code = nnp_is_collecting() ? 20 : 0; /* forked before any window */
        send_byte(to_parent[1]);                 /* looked before the window opens */
        if (!recv_byte(to_child[0]) || !wait_collecting(true))
            code = 21;
        for (uint64_t i = 0; i < STEPS; i++)
            nnp_step_begin(NNPT_CHILD_BASE + i, 0);
        send_byte(to_parent[1]);
        if (!recv_byte(to_child[0]) || !wait_collecting(false))
            code = 22;
        for (uint64_t i = STEPS; i < 2 * STEPS; i++)
            nnp_step_begin(NNPT_CHILD_BASE + i, 0); /* no window: not recorded */
        if (nnp_session_destroy(nnp_session_current()) != NNP_OK)
            code = 23;
        _exit(code);
    }
    assert_true(recv_byte(to_parent[0]));
    assert_int_equal(nnp_session_start(s), NNP_OK);
    for (uint64_t i = 0; i < STEPS; i++)
        nnp_step_begin(i, 0);
    send_byte(to_child[1]);
    assert_true(recv_byte(to_parent[0]));
    assert_int_equal(nnp_session_stop(s), NNP_OK);
    send_byte(to_child[1]);
    st = nnpt_wait_bounded(pid, LIMIT_S);
    assert_true(st != -1 && WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    close(to_child[0]);
    close(to_child[1]);
    close(to_parent[0]);
    close(to_parent[1]);
    assert_int_equal(read_runs(out, runs, 4), 2);
    split_runs(runs, &parent, &child);
    assert_parent(parent, STEPS);
    assert_child(child, parent, "fork", NNPT_CHILD_BASE, STEPS);
    assert_int_equal(child->pid, pid);
    nnpt_rm_rf(out);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fork_exit_does_not_hang),
        cmocka_unit_test(test_follow_fork_child_has_its_own_run),
        cmocka_unit_test(test_fork_exec_follows_only_when_asked),
        cmocka_unit_test(test_preloaded_shell_leaves_nothing),
        cmocka_unit_test(test_fork_loop_of_200),
        cmocka_unit_test(test_code_session_child),
        cmocka_unit_test(test_code_session_follow_fork),
        cmocka_unit_test(test_follow_fork_child_follows_later_windows),
        cmocka_unit_test(test_worker_kept_out_of_the_rank),
    };
    nnp_log_set_level(NNP_LOG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
