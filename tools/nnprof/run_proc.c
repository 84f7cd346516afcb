/* run_proc.c - the command's process for `nnprof run`: fork + exec with the prepared
 * environment, signals sent to nnprof forwarded to it, and nnprof's own end made to look
 * like the command's (exit status, or death by the same signal), as `timeout` and `nsys`
 * do, so mpirun, torchrun and shells see the program's outcome.
 * Signals from the terminal (Ctrl-C) already reach the command, which shares nnprof's
 * process group; only those sent to nnprof's pid by another process are forwarded. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "run.h"

/* Shell conventions for a command that could not be started. */
#define EXIT_NOT_FOUND      127
#define EXIT_NOT_EXECUTABLE 126
/* Exit status for "killed by signal N" when the signal does not end nnprof itself. */
#define EXIT_SIGNAL_BASE 128

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM};
#define N_FORWARDED (sizeof(forwarded) / sizeof(forwarded[0]))

static volatile sig_atomic_t g_child;

static void forward(int sig, siginfo_t *info, void *ctx)
{
    (void)ctx;
    /* si_code <= 0: sent by a process (kill, sigqueue); the kernel's terminal signals went
     * to the whole foreground process group, the command included. */
    if (g_child > 0 && info && info->si_code <= 0)
        kill((pid_t)g_child, sig);
}

/* Installs the forwarder on the signals not ignored when nnprof started (an ignored
 * SIGINT, as under nohup, stays ignored for the command as well). */
static void install(struct sigaction *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < N_FORWARDED; i++) {
        sigaction(forwarded[i], NULL, &old[i]);
        if (old[i].sa_handler != SIG_IGN)
            sigaction(forwarded[i], &sa, NULL);
    }
}

static void restore(const struct sigaction *old)
{
    for (size_t i = 0; i < N_FORWARDED; i++)
        sigaction(forwarded[i], &old[i], NULL);
}

/* The child: default signal dispositions, die with nnprof, exec. Reports exec's errno
 * through the close-on-exec pipe. */
static _Noreturn void child(char **argv, char **env, int err_fd, pid_t parent,
                            const struct sigaction *old, const sigset_t *mask)
{
    int e;
    ssize_t w;
    restore(old);
    sigprocmask(SIG_SETMASK, mask, NULL);
    /* If nnprof is killed (mpirun's SIGKILL), the command must not run on unwatched. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(EXIT_SIGNAL_BASE + SIGKILL);
    execvpe(argv[0], argv, env);
    e = errno;
    w = write(err_fd, &e, sizeof(e));
    (void)w; /* the parent reports a missing errno as a plain failure */
    _exit(EXIT_NOT_FOUND);
}

int nnp_run_command(char **argv, char **env)
{
    struct sigaction old[N_FORWARDED];
    sigset_t block, prev;
    int pipefd[2], status = 0, exec_errno = 0;
    pid_t pid, parent = getpid();
    ssize_t n;

    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        nnp_cli_error("run", "pipe: %s", strerror(errno));
        return EXIT_NOT_EXECUTABLE << 8;
    }
    /* Signals wait until the child's pid is known (and the child resets them). */
    sigemptyset(&block);
    for (size_t i = 0; i < N_FORWARDED; i++)
        sigaddset(&block, forwarded[i]);
    sigprocmask(SIG_BLOCK, &block, &prev);
    install(old);
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        close(pipefd[0]);
        child(argv, env, pipefd[1], parent, old, &prev);
    }
    close(pipefd[1]);
    if (pid < 0) {
        nnp_cli_error("run", "fork: %s", strerror(errno));
        close(pipefd[0]);
        restore(old);
        sigprocmask(SIG_SETMASK, &prev, NULL);
        return EXIT_NOT_EXECUTABLE << 8;
    }
    g_child = pid;
    sigprocmask(SIG_SETMASK, &prev, NULL);
    do {
        n = read(pipefd[0], &exec_errno, sizeof(exec_errno));
    } while (n < 0 && errno == EINTR);
    close(pipefd[0]);
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            nnp_cli_error("run", "waitpid: %s", strerror(errno));
            status = 1 << 8;
            break;
        }
    }
    g_child = 0;
    restore(old);
    if (n == (ssize_t)sizeof(exec_errno) && exec_errno != 0) {
        nnp_cli_error(argv[0], "%s", strerror(exec_errno));
        return (exec_errno == ENOENT ? EXIT_NOT_FOUND : EXIT_NOT_EXECUTABLE) << 8;
    }
    return status;
}

_Noreturn void nnp_run_exit_like(int wait_status)
{
    if (WIFSIGNALED(wait_status)) {
        int sig = WTERMSIG(wait_status);
        struct rlimit no_core = {0, 0};
        sigset_t one;
        /* The command dumped its core already, if it was to. */
        setrlimit(RLIMIT_CORE, &no_core);
        signal(sig, SIG_DFL);
        sigemptyset(&one);
        sigaddset(&one, sig);
        sigprocmask(SIG_UNBLOCK, &one, NULL);
        fflush(NULL);
        raise(sig);
        exit(EXIT_SIGNAL_BASE + sig); /* a signal that does not end a process */
    }
    exit(WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : NNP_EXIT_FAIL);
}
