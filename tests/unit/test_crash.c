/* test_crash.c - crash safety: a child process records continuously and is killed with
 * SIGKILL (no handler, no atexit); every event it had flushed before the kill must be
 * recovered from the raw directory, in order, and whatever it wrote after is either
 * recovered whole or reported as a truncated chunk. Also the SIGTERM path of a program
 * profiled from the environment (autostart), which flushes in its signal handler. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "read/raw_reader.h"
#include "test_util.h"

/* Events between two flushes the child confirms to the parent. */
#define BATCH 1000u
/* The parent kills the child after this many confirmed events. */
#define CONFIRMED_BEFORE_KILL 50000u

/* Child: record forever in batches, confirming each flushed batch on fd. */
static void child_main(const char *out_dir, int fd)
{
    nnp_options_t o;
    nnp_session_t *s;
    char dir[4096];
    uint64_t i = 0;

    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", out_dir);
    o.writer_period_ms = 5;
    o.sample_interval_ms = 0;
    o.full_policy = NNP_FULL_BLOCK;
    if (nnp_session_create(&o, &s) != NNP_OK)
        _exit(3);
    snprintf(dir, sizeof(dir), "%s", nnp_session_raw_dir(s));
    if (write(fd, dir, sizeof(dir)) != (ssize_t)sizeof(dir))
        _exit(4);
    for (;;) {
        for (uint32_t k = 0; k < BATCH; k++, i++)
            nnp_step_begin_at(i, 3, i);
        if (nnp_session_flush(s) != NNP_OK)
            _exit(5);
        if (write(fd, &i, sizeof(i)) != (ssize_t)sizeof(i))
            _exit(6);
    }
}

typedef struct seq_check {
    uint64_t n;
    bool contiguous;
} seq_check_t;

static int check_seq(void *user, const nnp_raw_event_t *ev)
{
    seq_check_t *c = user;
    if (ev->kind != NNP_REC_STEP_BEGIN)
        return 0;
    if (ev->slots->a != c->n || ev->ts_ns != c->n || ev->slots->b != 3)
        c->contiguous = false;
    c->n++;
    return 0;
}

static void test_sigkill_recovers_flushed_events(void **state)
{
    char *out = nnpt_mkdtemp();
    char dir[4096];
    int fds[2], status;
    uint64_t confirmed = 0;
    pid_t pid;
    nnp_raw_t *raw;
    seq_check_t c = {0, true};
    const nnp_raw_report_t *rep;
    (void)state;

    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        child_main(out, fds[1]);
    }
    close(fds[1]);
    assert_int_equal(read(fds[0], dir, sizeof(dir)), (ssize_t)sizeof(dir));
    while (confirmed < CONFIRMED_BEFORE_KILL)
        assert_int_equal(read(fds[0], &confirmed, sizeof(confirmed)), sizeof(confirmed));
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    close(fds[0]);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    assert_int_equal(nnp__raw_open(dir, &raw), NNP_OK);
    assert_int_equal(nnp__raw_read(raw, check_seq, &c), NNP_OK);
    rep = nnp__raw_report(raw);
    /* Everything confirmed is back, in order, with its payload; nothing is corrupt. */
    assert_true(c.n >= confirmed);
    assert_true(c.contiguous);
    assert_int_equal(rep->chunks_corrupt, 0);
    assert_true(rep->chunks_truncated <= 1);
    nnp__raw_close(raw);
    nnpt_rm_rf(out);
    free(out);
}

/* A program profiled only through MS_PROFILER_OPTIONS, stopped by SIGTERM mid-run: the
 * autostart handler flushes, the process dies of SIGTERM, the events are on disk. */
static void test_sigterm_flushes_autostarted_session(void **state)
{
    char *out = nnpt_mkdtemp();
    char env[4200], found[4096];
    int status, n;
    pid_t pid;
    nnp_raw_t *raw;
    seq_check_t c = {0, true};
    char *dirs_cmd;
    FILE *p;
    (void)state;

    snprintf(env, sizeof(env), "{\"start\": true, \"output_path\": \"%s\"}", out);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("MS_PROFILER_OPTIONS", env, 1);
        setenv("NNPROF_LOG_LEVEL", "error", 1);
        execl(NNP_BINARY_DIR "/examples/simple_train", "simple_train", "--forever", (char *)NULL);
        _exit(127);
    }
    {
        /* Give it time to start and record (it flushes every 10 ms by default). */
        struct timespec ts = {0, 400 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGTERM);
    waitpid(pid, &status, 0);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGTERM);

    n = snprintf(NULL, 0, "ls -d %s/profiler/PROF_*", out);
    dirs_cmd = malloc((size_t)n + 1);
    snprintf(dirs_cmd, (size_t)n + 1, "ls -d %s/profiler/PROF_*", out);
    p = popen(dirs_cmd, "r");
    assert_non_null(p);
    assert_non_null(fgets(found, sizeof(found), p));
    pclose(p);
    free(dirs_cmd);
    found[strcspn(found, "\n")] = '\0';
    assert_int_equal(nnp__raw_open(found, &raw), NNP_OK);
    assert_int_equal(nnp__raw_read(raw, check_seq, &c), NNP_OK);
    (void)c;
    /* simple_train records steps 0,1,2,... with a step_begin each: some must be there. */
    assert_true(nnp__raw_report(raw)->records > 0);
    assert_int_equal(nnp__raw_report(raw)->chunks_corrupt, 0);
    nnp__raw_close(raw);
    nnpt_rm_rf(out);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sigkill_recovers_flushed_events),
        cmocka_unit_test(test_sigterm_flushes_autostarted_session),
    };
    nnp_log_set_level(NNP_LOG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
