/* step_window.c - opens and closes the environment session's collection window at step
 * boundaries, for `nnprof run --steps A-B` (NNPROF_STEPS): the recorder calls the hook on
 * every nnp_step_begin/end (record.h) while it is armed. Steps are reported by the thread
 * that runs the training loop, which also owns the session here, so the window calls are
 * never concurrent. After the range the hook removes itself (zero cost again). */
#include <errno.h>
#include <stdlib.h>

#include "collect/step_window.h"
#include "record/record.h"
#include "util/util.h"

static nnp_session_t *g_session;
static uint64_t g_first, g_last;
static bool g_open;

int nnp__step_window_parse(const char *text, uint64_t *first, uint64_t *last)
{
    char *end;
    if (!text || *text < '0' || *text > '9')
        return NNP_EINVAL;
    errno = 0;
    *first = strtoull(text, &end, 10);
    if (errno)
        return NNP_EINVAL;
    if (*end == '\0') {
        *last = *first;
        return NNP_OK;
    }
    if (*end != '-' || end[1] < '0' || end[1] > '9')
        return NNP_EINVAL;
    *last = strtoull(end + 1, &end, 10);
    return errno || *end != '\0' || *last < *first ? NNP_EINVAL : NNP_OK;
}

static void on_step(uint64_t step, bool is_begin)
{
    if (is_begin && !g_open && step >= g_first && step <= g_last) {
        if (nnp_session_start(g_session) == NNP_OK)
            g_open = true;
        else
            NNP_LOG_W("--steps: cannot open the window at step %llu: %s", (unsigned long long)step,
                      nnp_last_error());
    } else if (!is_begin && g_open && step >= g_last) {
        atomic_store_explicit(&nnp__rec_step_hook, NULL, memory_order_relaxed);
        g_open = false;
        if (nnp_session_stop(g_session) != NNP_OK)
            NNP_LOG_W("--steps: cannot close the window after step %llu: %s",
                      (unsigned long long)step, nnp_last_error());
    }
}

void nnp__step_window_arm(nnp_session_t *s, uint64_t first, uint64_t last)
{
    g_session = s;
    g_first = first;
    g_last = last;
    g_open = false;
    atomic_store_explicit(&nnp__rec_step_hook, on_step, memory_order_release);
}
