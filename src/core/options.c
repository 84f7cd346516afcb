/* options.c - nnp_options_t as a whole: validation of options filled in code or parsed,
 * the JSON form written to info.json, and the options this platform cannot collect. The
 * dialects' parsers live in options_ms.c, options_msprof.c and options_env.c. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "core/options_common.h"
#include "core/options_internal.h"
#include "util/json_writer.h"

/* ---- validation ---- */

/* Resets an int field set in code outside [lo, hi] to its default, or clamps it to the
 * nearest bound, with the same warning JSON input gets. */
static void fix_range(nnp_options_t *o, const char *key, int64_t lo, int64_t hi, bool clamp)
{
    const nnp_ms_opt_t *d = nnp__opt_ms_find(key);
    char allowed[LIST_TEXT_CAP], got[DEFAULT_TEXT_CAP], set[DEFAULT_TEXT_CAP];
    int64_t v, nv;
    if (!d)
        return;
    v = nnp__opt_int_get(o, d);
    /* Unsigned fields beyond INT64_MAX read back negative; they are above any bound. */
    if (d->width != NNP_OPT_W_INT && v < 0)
        v = INT64_MAX;
    if (v >= lo && v <= hi)
        return;
    nv = !clamp ? nnp__opt_int_get(&nnp__opt_defaults, d) : v < lo ? lo : hi;
    if (d->width == NNP_OPT_W_INT)
        snprintf(got, sizeof(got), "%lld", (long long)v);
    else
        snprintf(got, sizeof(got), "%llu", (unsigned long long)nnp__opt_int_get(o, d));
    snprintf(set, sizeof(set), "%lld", (long long)nv);
    if (d->style == NNP_OPT_MSG_TIMELINE && v < lo)
        NNP_LOG_W("[Profiler]The 'timeline_limit' parameter must be greater than 0, it will be set "
                  "to %s.",
                  set);
    else
        nnp__opt_warn_range(
            CTX_MS, key,
            nnp__opt_range_text(lo, hi, d->style == NNP_OPT_MSG_LIST, allowed, sizeof(allowed)),
            got, set);
    nnp__opt_int_set(o, d, nv);
}

/* Enums and bit sets filled in code may hold anything; each falls back to its default. */
static void fix_enums(nnp_options_t *o)
{
    unsigned all_bits = NNP_HOST_SYS_CPU | NNP_HOST_SYS_MEM;
    if ((unsigned)o->profile_framework > (unsigned)NNP_FRAMEWORK_NONE) {
        NNP_LOG_W("For 'Profiler', the parameter profile_framework has the invalid value %d, it "
                  "will be set to 'all'.",
                  (int)o->profile_framework);
        o->profile_framework = nnp__opt_defaults.profile_framework;
    }
    if ((unsigned)o->profiler_level > (unsigned)NNP_LEVEL_2) {
        /* As the seed's invalid-value branch: Level0 without side effects. */
        NNP_LOG_W("For 'Profiler', the parameter profiler_level has the invalid value %d, it "
                  "will be set to ProfilerLevel.Level0.",
                  (int)o->profiler_level);
        o->profiler_level = NNP_LEVEL_0;
    }
    if ((unsigned)o->task_trace > (unsigned)NNP_TASK_TRACE_L1) {
        NNP_LOG_W("For 'PROFILING_OPTIONS', the parameter task_trace has the invalid value %d, "
                  "it will be set to \"on\".",
                  (int)o->task_trace);
        o->task_trace = nnp__opt_defaults.task_trace;
    }
    if ((unsigned)o->full_policy > (unsigned)NNP_FULL_WAIT) {
        NNP_LOG_W("For 'Profiler', the parameter full_policy has the invalid value %d, it will "
                  "be set to 'wait'.",
                  (int)o->full_policy);
        o->full_policy = nnp__opt_defaults.full_policy;
    }
    if ((o->host_sys | o->host_sys_usage) & ~all_bits) {
        NNP_LOG_W("For 'PROFILING_OPTIONS', host_sys/host_sys_usage have unknown bits (0x%x/0x%x), "
                  "they are ignored.",
                  o->host_sys, o->host_sys_usage);
        o->host_sys &= all_bits;
        o->host_sys_usage &= all_bits;
    }
}

int nnp_options_validate(nnp_options_t *o)
{
    int n, rc;

    if (!o)
        return nnp__fail(NNP_EINVAL, "options: NULL options");
    /* Fields filled in code may lack their terminator; nothing below may run past it. */
    if (!memchr(o->output_path, '\0', sizeof(o->output_path)))
        return nnp__fail(NNP_EPATH, "output_path is not terminated within %d bytes", NNP_PATH_MAX);
    if (!memchr(o->fp_point, '\0', sizeof(o->fp_point)) ||
        !memchr(o->bp_point, '\0', sizeof(o->bp_point)) ||
        !memchr(o->aic_metrics, '\0', sizeof(o->aic_metrics)))
        return nnp__fail(NNP_ETOOLONG,
                         "fp_point, bp_point or aic_metrics is not terminated "
                         "within %d bytes",
                         NNP_NAME_MAX);
    rc = nnp__opt_check_output_path("output_path", o->output_path);
    if (rc != NNP_OK)
        return rc;

    /* MindSpore and msprof fields set in code get the checks JSON input gets. */
    fix_range(o, "timeline_limit", 1, INT_MAX, false);
    fix_range(o, "aicore_metrics", AICORE_METRICS_NONE, AICORE_METRICS_MAX, false);
    fix_range(o, "rank_id", 0, INT_MAX, false);
    fix_range(o, "device_id", 0, INT_MAX, false);
    fix_range(o, "rank_size", 1, INT_MAX, false);
    fix_enums(o);
    if (o->storage_limit_mb != 0 && (o->storage_limit_mb < STORAGE_LIMIT_MIN_MB ||
                                     o->storage_limit_mb > STORAGE_LIMIT_MAX_MB)) {
        NNP_LOG_W("For 'PROFILING_OPTIONS', the parameter storage_limit must be in [%lluMB, "
                  "%lluMB], but got %lluMB, it will be set to \"\" (90%% of the free disk space).",
                  STORAGE_LIMIT_MIN_MB, STORAGE_LIMIT_MAX_MB,
                  (unsigned long long)o->storage_limit_mb);
        o->storage_limit_mb = 0;
    }
    if (o->host_sys_usage_freq < HOST_SYS_USAGE_MIN_HZ ||
        o->host_sys_usage_freq > HOST_SYS_USAGE_MAX_HZ) {
        char allowed[LIST_TEXT_CAP], got[DEFAULT_TEXT_CAP], def_text[DEFAULT_TEXT_CAP];
        snprintf(got, sizeof(got), "%d", o->host_sys_usage_freq);
        snprintf(def_text, sizeof(def_text), "%d", nnp__opt_defaults.host_sys_usage_freq);
        nnp__opt_warn_range(CTX_MSPROF, "host_sys_usage_freq",
                            nnp__opt_range_text(HOST_SYS_USAGE_MIN_HZ, HOST_SYS_USAGE_MAX_HZ, false,
                                                allowed, sizeof(allowed)),
                            got, def_text);
        o->host_sys_usage_freq = nnp__opt_defaults.host_sys_usage_freq;
    }
    if (!nnp__opt_aic_metrics_ok(o->aic_metrics)) {
        char shown[VALUE_TEXT_CAP], got[VALUE_TEXT_CAP];
        snprintf(got, sizeof(got), "\"%s\"",
                 nnp__opt_escaped(o->aic_metrics, shown, sizeof(shown)));
        nnp__opt_warn_aic_metrics(got);
        nnp__strlcpy(o->aic_metrics, DEFAULT_AIC_METRICS, sizeof(o->aic_metrics));
    }

    /* Recorder settings are clamped to the nearest usable value rather than reset: a
     * caller asking for a huge buffer still gets the largest one. */
    fix_range(o, "buffer_size_kb", BUFFER_SIZE_MIN_KB, BUFFER_SIZE_MAX_KB, true);
    fix_range(o, "writer_period_ms", WRITER_PERIOD_MIN_MS, WRITER_PERIOD_MAX_MS, true);
    fix_range(o, "sample_interval_ms", SAMPLE_INTERVAL_MIN_MS, SAMPLE_INTERVAL_MAX_MS, true);
    fix_range(o, "raw_file_bytes", (int64_t)RAW_FILE_MIN_BYTES, JSON_INT_EXACT_MAX_I64, true);
    fix_range(o, "storage_limit_bytes", 0, JSON_INT_EXACT_MAX_I64, true);

    /* seed 000 docstring: profile_memory and profile_communication need op_time; its
     * _construct_profiling_options then turns them off. */
    if (!o->op_time && o->profile_memory)
        nnp__opt_warn_needs_op_time("profile_memory");
    if (!o->op_time && o->profile_communication)
        nnp__opt_warn_needs_op_time("profile_communication");

    /* seed 004 host_sys_usage_freq drives the system sampler unless an explicit interval
     * was chosen. */
    if (o->host_sys_usage && o->sample_interval_ms == nnp__opt_defaults.sample_interval_ms)
        o->sample_interval_ms = MS_PER_S / o->host_sys_usage_freq;

    n = nnp_options_to_json(o, NULL, 0);
    if (n < 0)
        return n;
    if (n > OPTIONS_JSON_MAX_CHARS)
        return nnp__fail(NNP_ETOOLONG,
                         "For 'Profiler', the environment parameter length exceeds the limit "
                         "(%d), please input valid parameters.",
                         OPTIONS_JSON_MAX_CHARS);
    return NNP_OK;
}

/* ---- JSON form ---- */

/* A bounded field as JSON: a field filled in code may lack its terminator. */
static void jw_field(nnp_jw_t *w, const char *key, const char *s, size_t cap)
{
    nnp__jw_key(w, key);
    nnp__jw_strn(w, s, strnlen(s, cap));
}

/* An enum by name; an out-of-range value (filled in code) is written as null. */
static void jw_name(nnp_jw_t *w, const char *key, const char *const names[], size_t n, int v)
{
    nnp__jw_key(w, key);
    if (v >= 0 && (size_t)v < n && names[v])
        nnp__jw_str(w, names[v]);
    else
        nnp__jw_null(w);
}

static void jw_host_sys(nnp_jw_t *w, const char *key, unsigned bits)
{
    char buf[LIST_TEXT_CAP] = "";
    size_t n = 0;
    for (size_t i = 0; i < NNP_ARRAY_LEN(nnp__opt_host_sys_items); i++) {
        if (bits & nnp__opt_host_sys_items[i].bit)
            n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? "," : "",
                                  nnp__opt_host_sys_items[i].name);
    }
    nnp__jw_key(w, key);
    nnp__jw_str(w, buf);
}

static void write_options(nnp_jw_t *w, const nnp_options_t *o)
{
    char storage[LIST_TEXT_CAP] = "";

    nnp__jw_obj_begin(w);
    /* MindSpore options, with their Profiler() keyword names (seed 000). */
    for (size_t i = 0; i < NNP_OPT_MS_COUNT; i++) {
        const nnp_ms_opt_t *d = &nnp__opt_ms_opts[i];
        switch (d->kind) {
        case NNP_MS_BOOL:
            nnp__jw_key(w, d->key);
            nnp__jw_bool(w, nnp__opt_bool_get(o, d->off));
            break;
        case NNP_MS_INT:
            nnp__jw_key(w, d->key);
            if (d->width == NNP_OPT_W_INT)
                nnp__jw_int(w, nnp__opt_int_get(o, d));
            else
                nnp__jw_uint(w, (uint64_t)nnp__opt_int_get(o, d));
            break;
        case NNP_MS_PATH:
            jw_field(w, d->key, o->output_path, sizeof(o->output_path));
            break;
        case NNP_MS_FRAMEWORK:
            jw_name(w, d->key, nnp__opt_framework_names, NNP_ARRAY_LEN(nnp__opt_framework_names),
                    (int)o->profile_framework);
            break;
        case NNP_MS_LEVEL:
            jw_name(w, d->key, nnp__opt_level_names, NNP_ARRAY_LEN(nnp__opt_level_names),
                    (int)o->profiler_level);
            break;
        case NNP_MS_POLICY:
            jw_name(w, d->key, nnp__opt_policy_names, NNP_ARRAY_LEN(nnp__opt_policy_names),
                    (int)o->full_policy);
            break;
        case NNP_MS_START:
        default:
            break; /* "start" is not an option of the struct */
        }
    }
    /* msprof options, with their PROFILING_OPTIONS names (seed 004); l2 is written once, as
     * MindSpore's l2_cache above. */
    if (o->storage_limit_mb != 0)
        snprintf(storage, sizeof(storage), "%llu" STORAGE_LIMIT_UNIT,
                 (unsigned long long)o->storage_limit_mb);
    nnp__jw_key(w, "storage_limit");
    nnp__jw_str(w, storage);
    nnp__jw_key(w, "training_trace");
    nnp__jw_str(w, nnp__opt_on_off(o->training_trace));
    jw_name(w, "task_trace", nnp__opt_task_trace_names, NNP_ARRAY_LEN(nnp__opt_task_trace_names),
            (int)o->task_trace);
    nnp__jw_key(w, "hccl");
    nnp__jw_str(w, nnp__opt_on_off(o->hccl));
    nnp__jw_key(w, "aicpu");
    nnp__jw_str(w, nnp__opt_on_off(o->aicpu));
    jw_field(w, "fp_point", o->fp_point, sizeof(o->fp_point));
    jw_field(w, "bp_point", o->bp_point, sizeof(o->bp_point));
    jw_field(w, "aic_metrics", o->aic_metrics, sizeof(o->aic_metrics));
    nnp__jw_key(w, "msproftx");
    nnp__jw_str(w, nnp__opt_on_off(o->msproftx));
    nnp__jw_key(w, "runtime_api");
    nnp__jw_str(w, nnp__opt_on_off(o->runtime_api));
    jw_host_sys(w, "host_sys", o->host_sys);
    jw_host_sys(w, "host_sys_usage", o->host_sys_usage);
    nnp__jw_key(w, "host_sys_usage_freq");
    nnp__jw_int(w, o->host_sys_usage_freq);
    nnp__jw_obj_end(w);
}

int nnp_options_to_json(const nnp_options_t *o, char *buf, size_t cap)
{
    nnp_jw_t w;
    char *text;
    size_t len = 0;
    int rc;

    if (!o || (!buf && cap > 0))
        return nnp__fail(NNP_EINVAL, "options to JSON: NULL argument");
    rc = nnp__jw_init(&w, -1, false, TO_JSON_CAP);
    if (rc != NNP_OK)
        return rc;
    write_options(&w, o);
    text = nnp__jw_take(&w, &len);
    rc = w.err;
    nnp__jw_fini(&w);
    if (!text)
        return rc != NNP_OK ? rc : nnp__fail(NNP_ENOMEM, "options to JSON: out of memory");
    /* snprintf semantics: copy what fits, always terminate, return the full length. */
    if (cap > 0) {
        size_t n = len < cap - 1 ? len : cap - 1;
        memcpy(buf, text, n);
        buf[n] = '\0';
    }
    nnp__free(text);
    return (int)len; /* len <= TO_JSON_CAP, far below INT_MAX */
}

/* ---- what this platform cannot collect ---- */

size_t nnp__options_unsupported(const nnp_options_t *o, const char *names[], size_t cap)
{
    size_t n = 0;
#define ADD_IF(cond, name)                                                                         \
    do {                                                                                           \
        if (cond) {                                                                                \
            if (n < cap)                                                                           \
                names[n] = (name);                                                                 \
            n++;                                                                                   \
        }                                                                                          \
    } while (0)
    /* -1 asks for no AI Core data, which is exactly what we collect: not a loss. */
    ADD_IF(o->aicore_metrics > 0, "aicore_metrics");
    ADD_IF(o->l2_cache, "l2_cache");
    ADD_IF(o->hbm_ddr, "hbm_ddr");
    ADD_IF(o->pcie, "pcie");
    ADD_IF(o->aicpu, "aicpu");
    ADD_IF(o->runtime_api, "runtime_api");
    ADD_IF(strncmp(o->aic_metrics, DEFAULT_AIC_METRICS, sizeof(o->aic_metrics)) != 0,
           "aic_metrics");
#undef ADD_IF
    return n;
}
