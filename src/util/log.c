/* log.c - leveled logging to stderr or a user sink. Level from NNPROF_LOG_LEVEL
 * (error|warn|info|debug). Never called from recording hot paths (STYLE 7.2): the
 * recorder counts problems and the writer thread logs them. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util.h"

/* One log line; longer messages are truncated rather than allocated. */
#define LOG_LINE_CAP 2048
/* How much of a bad NNPROF_LOG_LEVEL value the warning shows. */
#define LEVEL_TEXT_CAP 64
/* -1: not yet read from the environment. */
static _Atomic int log_level = -1;
static nnp_log_fn log_sink;
static void *log_sink_user;

static const char *const level_names[] = {"error", "warn", "info", "debug"};

/* NNPROF_LOG_LEVEL, or warn; *bad is set for a value that is none of the names. */
static int level_from_env(bool *bad)
{
    const char *s = getenv("NNPROF_LOG_LEVEL");
    *bad = false;
    if (s && s[0] != '\0') {
        for (size_t i = 0; i < NNP_ARRAY_LEN(level_names); i++) {
            if (strcasecmp(s, level_names[i]) == 0)
                return (int)i;
        }
        if (strcasecmp(s, "warning") == 0)
            return NNP_LOG_WARN;
        *bad = true;
    }
    return NNP_LOG_WARN;
}

void nnp_log_set_level(nnp_log_level_t level)
{
    atomic_store(&log_level, (int)level);
}

void nnp_log_set_handler(nnp_log_fn fn, void *user)
{
    log_sink = fn;
    log_sink_user = user;
}

bool nnp__log_enabled(nnp_log_level_t level)
{
    int cur = atomic_load_explicit(&log_level, memory_order_relaxed);
    if (cur < 0) {
        bool bad;
        int expected = -1;
        cur = level_from_env(&bad);
        /* Only the thread that sets the level says the value was bad (once per process);
         * the level is set first, so this message's own check does not come back here. */
        if (atomic_compare_exchange_strong(&log_level, &expected, cur) && bad) {
            char shown[LEVEL_TEXT_CAP];
            snprintf(shown, sizeof(shown), "%s", getenv("NNPROF_LOG_LEVEL"));
            for (char *p = shown; *p; p++)
                if ((unsigned char)*p < 0x20 || *p == 0x7f)
                    *p = '?'; /* one log line */
            nnp__log(NNP_LOG_WARN,
                     "NNPROF_LOG_LEVEL is \"%s\": the accepted values are error, warn, info and "
                     "debug; using warn.",
                     shown);
        }
        cur = atomic_load(&log_level);
    }
    return (int)level <= cur;
}

void nnp__log(nnp_log_level_t level, const char *fmt, ...)
{
    char line[LOG_LINE_CAP];
    va_list ap;

    if (!nnp__log_enabled(level))
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (log_sink) {
        log_sink(level, line, log_sink_user);
        return;
    }
    fprintf(stderr, "[nnprof] %s: %s\n", level_names[level], line);
}
