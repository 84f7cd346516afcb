/* proc.c - fork() of nnprof's own helper processes. The analysis forks a worker per rank
 * (and one for an asynchronous analysis); those children must never behave like a forked
 * child of the profiled program (follow_fork opens a session there), so the fork is
 * marked for the fork handlers through a flag of the forking thread. */
#include <unistd.h>

#include "util.h"

static __thread bool tls_helper_fork __attribute__((tls_model("initial-exec")));

pid_t nnp__fork_helper(void)
{
    pid_t pid;
    tls_helper_fork = true;
    pid = fork();
    tls_helper_fork = false;
    return pid;
}

bool nnp__in_helper_fork(void)
{
    return tls_helper_fork;
}
