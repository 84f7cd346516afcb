/* autostart.c - profiling an unmodified program: when the environment enables profiling
 * (MS_PROFILER_OPTIONS {"start": true} or PROFILING_MODE=true), a constructor creates and
 * starts the session at load time (LD_PRELOAD or link), and atexit / SIGTERM / SIGINT stop
 * it and flush. Signal handlers are installed only where the program left the default
 * disposition, so a program's own handlers (Python's SIGINT) keep working and reach the
 * atexit path instead. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "collect/launcher.h"
#include "collect/step_window.h"
#include "core/session.h"
#include "util/util.h"

/* How long a fatal-signal handler waits for the writer's last drain. */
#define SIGNAL_FLUSH_TIMEOUT_MS 2000

static void on_exit_flush(void)
{
    nnp_session_t *s = nnp_session_current();
    if (s)
        nnp_session_destroy(s);
}

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

__attribute__((constructor)) static void nnp_autostart(void)
{
    nnp_options_t o;
    nnp_session_t *s;
    bool enabled = false, by_steps = false;
    const char *steps = getenv("NNPROF_STEPS");
    uint64_t first = 0, last = 0;
    int rc;

    nnp_options_init(&o);
    if (nnp_options_from_env(&o, &enabled) != NNP_OK || !enabled)
        return;
    /* Under mpirun, srun or torchrun each process writes its own rank's directory. */
    nnp__launcher_apply(&o, getenv("MS_PROFILER_OPTIONS"));
    /* `nnprof run --steps A-B`: the window waits for step A. */
    if (steps && *steps) {
        by_steps = nnp__step_window_parse(steps, &first, &last) == NNP_OK;
        if (!by_steps)
            NNP_LOG_W("NNPROF_STEPS '%s' is not A-B or N; profiling every step", steps);
    }
    o.start_profile = !by_steps;
    rc = nnp__session_create_from_env(&o, &s);
    if (rc != NNP_OK) {
        NNP_LOG_E("profiling requested by the environment could not start: %s (%s)",
                  nnp_last_error(), nnp_strerror(rc));
        return;
    }
    if (by_steps)
        nnp__step_window_arm(s, first, last);
    atexit(on_exit_flush);
    install_if_default(SIGTERM);
    install_if_default(SIGINT);
}
