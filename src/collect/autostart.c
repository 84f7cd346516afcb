/* autostart.c - profiling an unmodified program: when the environment enables profiling
 * (MS_PROFILER_OPTIONS {"start": true} or PROFILING_MODE=true), a constructor creates and
 * starts the session at load time (LD_PRELOAD or link); the session's exit hook and SIGTERM
 * / SIGINT stop it and flush. Signal handlers are installed only where the program left the
 * default disposition, so a program's own handlers (Python's SIGINT) keep working and reach
 * the exit path instead.
 * Children inherit LD_PRELOAD and the variables, so every `sh -c`, launcher and compiler the
 * program runs would profile too. The first process to autostart sets NNPROF_ROOT_PID to its
 * pid; a process that finds another pid there is a descendant and starts a session only with
 * follow_children (CONTRACTS.md 2), linked to its nearest profiled ancestor's run. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/launcher.h"
#include "collect/step_window.h"
#include "core/session.h"
#include "util/util.h"

/* How long a fatal-signal handler waits for the writer's last drain. */
#define SIGNAL_FLUSH_TIMEOUT_MS 2000
/* Room for a pid in decimal. */
#define PID_TEXT_CAP 24
#define DEC_BASE     10

static void on_fatal_signal(int sig)
{
    nnp__session_emergency_flush(nnp_session_current(), SIGNAL_FLUSH_TIMEOUT_MS);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_if_default(int sig)
{
    struct sigaction old, sa;
    if (sigaction(sig, NULL, &old) != 0 || old.sa_handler != SIG_DFL)
        return;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

/* A whole number in [0, INT_MAX] from the environment, or -1 when unset or not one. */
static long env_count(const char *name)
{
    const char *s = getenv(name);
    char *end;
    long v;
    if (!s || s[0] < '0' || s[0] > '9')
        return -1;
    errno = 0;
    v = strtol(s, &end, DEC_BASE);
    if (errno != 0 || *end != '\0' || v > INT_MAX)
        return -1;
    return v;
}

/* A positive pid from the environment, or 0 when unset or not a pid. */
static pid_t env_pid(const char *name)
{
    long v = env_count(name);
    return v > 0 ? (pid_t)v : 0;
}

static void set_env_num(const char *name, long v)
{
    char text[PID_TEXT_CAP];
    snprintf(text, sizeof(text), "%ld", v);
    setenv(name, text, 1);
}

__attribute__((constructor)) static void nnp_autostart(void)
{
    nnp_options_t o;
    nnp_session_t *s;
    nnp_session_link_t link, *plink = NULL;
    bool enabled = false, by_steps = false;
    const char *steps = getenv("NNPROF_STEPS");
    uint64_t first = 0, last = 0;
    pid_t root, me = getpid();
    int rc;

    nnp_options_init(&o);
    if (nnp_options_from_env(&o, &enabled) != NNP_OK || !enabled)
        return;
    root = env_pid(NNP_ENV_ROOT_PID);
    if (root != 0 && root != me) {
        const char *parent_dir = getenv(NNP_ENV_PARENT_RAW_DIR);
        if (!o.follow_children) {
            NNP_LOG_I("not profiling process %ld: a descendant of profiled process %ld "
                      "(set NNPROF_FOLLOW_CHILDREN=1 or \"follow_children\": true to profile "
                      "child processes too)",
                      (long)me, (long)root);
            return;
        }
        memset(&link, 0, sizeof(link));
        link.parent_pid = env_pid(NNP_ENV_PARENT_PID);
        if (link.parent_pid == 0)
            link.parent_pid = root;
        if (parent_dir)
            nnp__strlcpy(link.parent_raw_dir, parent_dir, sizeof(link.parent_raw_dir));
        link.kind = "exec";
        plink = &link;
    } else if (root == 0) {
        set_env_num(NNP_ENV_ROOT_PID, (long)me);
    }
    /* Under mpirun, srun or torchrun each process writes its own rank's directory. */
    nnp__launcher_apply(&o, getenv("MS_PROFILER_OPTIONS"));
    /* A child the launcher made another rank (mpirun's, torchrun's workers) is not part of
     * its parent's rank: it is a rank of its own, not linked, so the analysis does not
     * fold every rank into the launcher's. */
    if (plink && env_count(NNP_ENV_PARENT_RANK) >= 0 && env_count(NNP_ENV_PARENT_RANK) != o.rank_id)
        plink = NULL;
    /* `nnprof run --steps A-B`: the window waits for step A. */
    if (steps && *steps) {
        by_steps = nnp__step_window_parse(steps, &first, &last) == NNP_OK;
        if (!by_steps)
            NNP_LOG_W("NNPROF_STEPS '%s' is not A-B or N; profiling every step", steps);
    }
    o.start_profile = !by_steps;
    rc = nnp__session_create_from_env(&o, plink, &s);
    if (rc != NNP_OK) {
        NNP_LOG_E("profiling requested by the environment could not start: %s (%s)",
                  nnp_last_error(), nnp_strerror(rc));
        return;
    }
    /* This process's exec'd children link to its run. */
    {
        const char *raw = nnp_session_raw_dir(s);
        const char *slash = strrchr(raw, '/');
        set_env_num(NNP_ENV_PARENT_PID, (long)me);
        setenv(NNP_ENV_PARENT_RAW_DIR, slash ? slash + 1 : raw, 1);
        set_env_num(NNP_ENV_PARENT_RANK, o.rank_id);
    }
    if (by_steps)
        nnp__step_window_arm(s, first, last);
    install_if_default(SIGTERM);
    install_if_default(SIGINT);
}
