/* options_env.c - nnp_options_from_env(): MS_PROFILER_OPTIONS, PROFILING_MODE +
 * PROFILING_OPTIONS, MS_DIAGNOSTIC_DATA_PATH, PROFILING_FP_START/BP_END, RANK_ID, DEVICE_ID,
 * RANK_SIZE, NNPROF_FOLLOW_FORK/CHILDREN. A bad variable costs a warning naming it, never
 * the host program. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/options_common.h"

/* ---- the environment ---- */

/* RANK_ID, DEVICE_ID, RANK_SIZE: decimal digits only (seed 000 uses str.isdigit()). A bad
 * value keeps the current one. Unset is not warned about, unlike the seed: a single-process
 * program legitimately has none. */
static void env_int(const char *name, int *dst, int min)
{
    const char *s = getenv(name);
    char shown[VALUE_TEXT_CAP];
    uint64_t v;
    if (!s)
        return;
    if (nnp__opt_parse_u64(s, &v, NULL) && v >= (uint64_t)min && v <= INT_MAX) {
        *dst = (int)v;
        return;
    }
    /* seed 000 _get_devid_rankid_and_devtarget's sentence, plus the value. */
    NNP_LOG_W("For 'Profiler', fail to get %s from environment (\"%s\"), use %d instead.", name,
              nnp__opt_escaped(s, shown, sizeof(shown)), *dst);
}

/* PROFILING_FP_START / PROFILING_BP_END override the points (seed 000
 * _construct_profiling_options, seed 001). */
static void env_point(const char *name, char *dst)
{
    const char *s = getenv(name);
    char shown[VALUE_TEXT_CAP];
    if (!s)
        return;
    if (strlen(s) >= NNP_NAME_MAX) {
        NNP_LOG_W("%s (\"%s\") is longer than %d characters, it is ignored.", name,
                  nnp__opt_escaped(s, shown, sizeof(shown)), NNP_NAME_MAX - 1);
        return;
    }
    nnp__strlcpy(dst, s, NNP_NAME_MAX);
}

/* Merges one JSON variable; invalid JSON costs a warning, never the host program. */
static int env_json(const char *name, bool is_msprof, nnp_options_t *o, bool *start,
                    bool *path_given)
{
    const char *s = getenv(name);
    int rc;
    if (!s || s[0] == '\0')
        return NNP_OK;
    rc = is_msprof ? nnp__opt_msprof_merge(o, s, path_given)
                   : nnp__opt_ms_merge(o, s, start, path_given);
    if (rc == NNP_EINVAL) {
        NNP_LOG_W("%s is not a valid JSON object (%s), it is ignored.", name, nnp_last_error());
        nnp__clear_error();
        return NNP_OK;
    }
    return rc;
}

/* NNPROF_FOLLOW_FORK / NNPROF_FOLLOW_CHILDREN: 0 or 1 (CONTRACTS.md 2); they override the
 * JSON keys. Anything else is named in a warning and ignored. */
static void env_flag(const char *name, bool *dst)
{
    const char *s = getenv(name);
    char shown[VALUE_TEXT_CAP];
    if (!s)
        return;
    if (strcmp(s, "0") == 0 || strcmp(s, "1") == 0) {
        *dst = s[0] == '1';
        return;
    }
    NNP_LOG_W("%s is \"%s\": the accepted values are 0 and 1; it is ignored.", name,
              nnp__opt_escaped(s, shown, sizeof(shown)));
}

/* seed 004: PROFILING_MODE=true profiles with PROFILING_OPTIONS. "false" and "" say no;
 * any other value (True, 1, maybe) is a mistake the user should hear about, since it
 * silently profiles nothing. */
static bool env_profiling_mode(void)
{
    const char *mode = getenv("PROFILING_MODE");
    char shown[VALUE_TEXT_CAP];
    if (!mode || mode[0] == '\0' || strcmp(mode, "false") == 0)
        return false;
    if (strcmp(mode, "true") == 0)
        return true;
    NNP_LOG_W("PROFILING_MODE is \"%s\": the accepted values are \"true\" (profile with "
              "PROFILING_OPTIONS) and \"false\"; profiling is not enabled by it.",
              nnp__opt_escaped(mode, shown, sizeof(shown)));
    return false;
}

int nnp_options_from_env(nnp_options_t *o, bool *enabled)
{
    nnp_options_t tmp;
    bool env_enabled = false, start = false, path_given = false;
    const char *ms, *diag;
    bool mode;
    int rc;

    if (!o)
        return nnp__fail(NNP_EINVAL, "options: NULL options");
    tmp = *o;

    /* seed 001: MS_PROFILER_OPTIONS='{"start": true, ...}' profiles without code changes. */
    rc = env_json("MS_PROFILER_OPTIONS", false, &tmp, &start, &path_given);
    if (rc != NNP_OK)
        return rc;
    env_enabled = start;

    /* seed 004: PROFILING_OPTIONS is read only in PROFILING_MODE=true. */
    mode = env_profiling_mode();
    ms = getenv("MS_PROFILER_OPTIONS");
    if (mode && ms && ms[0] != '\0')
        NNP_LOG_W("Both MS_PROFILER_OPTIONS and PROFILING_MODE=true are set: one session "
                  "profiles with both, and PROFILING_OPTIONS wins where both set the same "
                  "thing (output over output_path, l2 over l2_cache), since it is read second.");
    if (mode) {
        env_enabled = true;
        rc = env_json("PROFILING_OPTIONS", true, &tmp, NULL, &path_given);
        if (rc != NNP_OK)
            return rc;
    } else if (getenv("PROFILING_OPTIONS")) {
        NNP_LOG_I("PROFILING_OPTIONS is ignored because PROFILING_MODE is not \"true\".");
    }

    /* seed 000 _get_output_path: MS_DIAGNOSTIC_DATA_PATH is used when no output path was
     * given; an explicit one wins, with the seed's warning. */
    diag = getenv("MS_DIAGNOSTIC_DATA_PATH");
    if (env_enabled && diag && diag[0] != '\0') {
        if (path_given) {
            NNP_LOG_W("Both parameter output_path and environment variable "
                      "MS_DIAGNOSTIC_DATA_PATH have values set, and the profiling data saving "
                      "path is the value set in parameter output_path");
        } else {
            rc = nnp__opt_check_output_path("MS_DIAGNOSTIC_DATA_PATH", diag);
            if (rc != NNP_OK)
                return rc;
            nnp__strlcpy(tmp.output_path, diag, sizeof(tmp.output_path));
        }
    }

    env_point("PROFILING_FP_START", tmp.fp_point);
    env_point("PROFILING_BP_END", tmp.bp_point);
    env_int("RANK_ID", &tmp.rank_id, 0);
    env_int("DEVICE_ID", &tmp.device_id, 0);
    env_int("RANK_SIZE", &tmp.rank_size, 1);
    env_flag("NNPROF_FOLLOW_FORK", &tmp.follow_fork);
    env_flag("NNPROF_FOLLOW_CHILDREN", &tmp.follow_children);

    *o = tmp;
    if (enabled)
        *enabled = env_enabled;
    return NNP_OK;
}
