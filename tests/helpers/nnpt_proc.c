/* nnpt_proc.c - a small program shaped like a training job that starts worker processes,
 * for the fork/exec tests (tests/unit/test_fork.c). It is linked to libnnprof.so and does
 * not create a session itself: profiling comes from the environment (MS_PROFILER_OPTIONS,
 * NNPROF_FOLLOW_*), as for an unmodified program. Each process records step_begin events
 * whose ids say who recorded them, so the test can count every process's events exactly.
 *   nnpt_proc fork-exit N        N steps, a forked child records N steps (ids CHILD_BASE+i)
 *                                and exit()s, the parent waits, then N more steps
 *   nnpt_proc fork-exec N PROG   the same, but the child execs "PROG leaf N" (with RANK_ID
 *                                set to $NNPT_CHILD_RANK when that is set, as a launcher)
 *   nnpt_proc fork-loop K N      K times: a child records N steps (LOOP_BASE + k*LOOP_STRIDE
 *                                + i) and exit()s; the parent records step k and waits
 *   nnpt_proc leaf N             N steps (ids LEAF_BASE+i), then exits
 * Exit status: 0, 2 usage, 3 a child failed or could not be started. */
#define _POSIX_C_SOURCE 200809L /* setenv; the library's own build defines _GNU_SOURCE */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nnprof/nnprof.h>

#include "nnpt_proc.h"

/* Under TSan: no 1 s pause at each process's exit (atexit_sleep_ms), which would make the
 * 200 children of the fork loop take minutes. */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
    return "atexit_sleep_ms=0";
}

static void steps(uint64_t first, long n)
{
    for (long i = 0; i < n; i++)
        nnp_step_begin(first + (uint64_t)i, 0);
}

static int wait_ok(pid_t pid)
{
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return 0;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int main(int argc, char **argv)
{
    long n = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
    pid_t pid;

    if (argc < 3 || n < 0)
        return 2;
    if (strcmp(argv[1], "leaf") == 0) {
        steps(NNPT_LEAF_BASE, n);
        return 0;
    }
    if (strcmp(argv[1], "fork-exit") == 0 || strcmp(argv[1], "fork-exec") == 0) {
        bool exec = strcmp(argv[1], "fork-exec") == 0;
        if (exec && argc < 4)
            return 2;
        steps(0, n);
        fflush(NULL);
        pid = fork();
        if (pid == 0) {
            if (exec) {
                /* As a launcher does for its workers: another rank. */
                const char *rank = getenv("NNPT_CHILD_RANK");
                if (rank)
                    setenv("RANK_ID", rank, 1);
                execl(argv[3], argv[3], "leaf", argv[2], (char *)NULL);
                _exit(127);
            }
            steps(NNPT_CHILD_BASE, n);
            exit(0); /* atexit handlers run: they must not wait for the parent's writer */
        }
        if (!wait_ok(pid))
            return 3;
        steps((uint64_t)n, n);
        return 0;
    }
    if (strcmp(argv[1], "fork-loop") == 0 && argc >= 4) {
        long k = n, per = strtol(argv[3], NULL, 10);
        for (long i = 0; i < k; i++) {
            nnp_step_begin((uint64_t)i, 0);
            fflush(NULL);
            pid = fork();
            if (pid == 0) {
                steps(NNPT_LOOP_BASE + (uint64_t)i * NNPT_LOOP_STRIDE, per);
                exit(0);
            }
            if (!wait_ok(pid))
                return 3;
        }
        return 0;
    }
    return 2;
}
