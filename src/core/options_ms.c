/* options_ms.c - MindSpore options: the Profiler keyword table (seed 000 Profiler.__init__,
 * _parser_kwargs; seed 001 MS_PROFILER_OPTIONS), its parser, nnp_options_init() and
 * nnp_options_from_json(). A bad value costs a warning and falls back to its default. */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "core/options_common.h"

/* Every key nnp_options_from_json() knows, in to_json order. nnprof's own keys (recorder,
 * identity) never depend on op_time. */
const nnp_ms_opt_t nnp__opt_ms_opts[] = {
    {"start", NNP_MS_START, 0, NNP_OPT_W_INT, 0, 0, false, NNP_OPT_MSG_PLAIN},
    {"output_path", NNP_MS_PATH, NNP_OPT_FLD(output_path), NNP_OPT_W_INT, 0, 0, false,
     NNP_OPT_MSG_PLAIN},
    {"start_profile", NNP_MS_BOOL, NNP_OPT_FLD(start_profile), NNP_OPT_W_INT, 0, 0, false,
     NNP_OPT_MSG_PLAIN},
    {"op_time", NNP_MS_BOOL, NNP_OPT_FLD(op_time), NNP_OPT_W_INT, 0, 0, false, NNP_OPT_MSG_PLAIN},
    {"profile_memory", NNP_MS_BOOL, NNP_OPT_FLD(profile_memory), NNP_OPT_W_INT, 0, 0, true,
     NNP_OPT_MSG_PLAIN},
    {"profile_communication", NNP_MS_BOOL, NNP_OPT_FLD(profile_communication), NNP_OPT_W_INT, 0, 0,
     true, NNP_OPT_MSG_PLAIN},
    {"parallel_strategy", NNP_MS_BOOL, NNP_OPT_FLD(parallel_strategy), NNP_OPT_W_INT, 0, 0, false,
     NNP_OPT_MSG_PLAIN},
    {"data_process", NNP_MS_BOOL, NNP_OPT_FLD(data_process), NNP_OPT_W_INT, 0, 0, false,
     NNP_OPT_MSG_PLAIN},
    {"timeline_limit", NNP_MS_INT, NNP_OPT_FLD(timeline_limit_mb), NNP_OPT_W_INT, 1, INT_MAX, true,
     NNP_OPT_MSG_TIMELINE},
    {"profile_framework", NNP_MS_FRAMEWORK, NNP_OPT_FLD(profile_framework), NNP_OPT_W_INT, 0, 0,
     false, NNP_OPT_MSG_PLAIN},
    {"profiler_level", NNP_MS_LEVEL, NNP_OPT_FLD(profiler_level), NNP_OPT_W_INT, 0, 0, false,
     NNP_OPT_MSG_PLAIN},
    {"aicore_metrics", NNP_MS_INT, NNP_OPT_FLD(aicore_metrics), NNP_OPT_W_INT, AICORE_METRICS_NONE,
     AICORE_METRICS_MAX, true, NNP_OPT_MSG_LIST},
    {"l2_cache", NNP_MS_BOOL, NNP_OPT_FLD(l2_cache), NNP_OPT_W_INT, 0, 0, false, NNP_OPT_MSG_PLAIN},
    {"hbm_ddr", NNP_MS_BOOL, NNP_OPT_FLD(hbm_ddr), NNP_OPT_W_INT, 0, 0, false, NNP_OPT_MSG_PLAIN},
    {"pcie", NNP_MS_BOOL, NNP_OPT_FLD(pcie), NNP_OPT_W_INT, 0, 0, false, NNP_OPT_MSG_PLAIN},
    {"sync_enable", NNP_MS_BOOL, NNP_OPT_FLD(sync_enable), NNP_OPT_W_INT, 0, 0, true,
     NNP_OPT_MSG_INVALID},
    {"data_simplification", NNP_MS_BOOL, NNP_OPT_FLD(data_simplification), NNP_OPT_W_INT, 0, 0,
     true, NNP_OPT_MSG_PLAIN},
    {"host_stack", NNP_MS_BOOL, NNP_OPT_FLD(host_stack), NNP_OPT_W_INT, 0, 0, true,
     NNP_OPT_MSG_PLAIN},
    {"rank_id", NNP_MS_INT, NNP_OPT_FLD(rank_id), NNP_OPT_W_INT, 0, INT_MAX, false,
     NNP_OPT_MSG_PLAIN},
    {"device_id", NNP_MS_INT, NNP_OPT_FLD(device_id), NNP_OPT_W_INT, 0, INT_MAX, false,
     NNP_OPT_MSG_PLAIN},
    {"rank_size", NNP_MS_INT, NNP_OPT_FLD(rank_size), NNP_OPT_W_INT, 1, INT_MAX, false,
     NNP_OPT_MSG_PLAIN},
    {"buffer_size_kb", NNP_MS_INT, NNP_OPT_FLD(buffer_size_kb), NNP_OPT_W_SIZE, BUFFER_SIZE_MIN_KB,
     BUFFER_SIZE_MAX_KB, false, NNP_OPT_MSG_PLAIN},
    {"full_policy", NNP_MS_POLICY, NNP_OPT_FLD(full_policy), NNP_OPT_W_INT, 0, 0, false,
     NNP_OPT_MSG_PLAIN},
    {"writer_period_ms", NNP_MS_INT, NNP_OPT_FLD(writer_period_ms), NNP_OPT_W_INT,
     WRITER_PERIOD_MIN_MS, WRITER_PERIOD_MAX_MS, false, NNP_OPT_MSG_PLAIN},
    {"sample_interval_ms", NNP_MS_INT, NNP_OPT_FLD(sample_interval_ms), NNP_OPT_W_INT,
     SAMPLE_INTERVAL_MIN_MS, SAMPLE_INTERVAL_MAX_MS, false, NNP_OPT_MSG_PLAIN},
    {"raw_file_bytes", NNP_MS_INT, NNP_OPT_FLD(raw_file_bytes), NNP_OPT_W_U64,
     (int64_t)RAW_FILE_MIN_BYTES, JSON_INT_EXACT_MAX_I64, false, NNP_OPT_MSG_PLAIN},
    {"storage_limit_bytes", NNP_MS_INT, NNP_OPT_FLD(storage_limit_bytes), NNP_OPT_W_U64, 0,
     JSON_INT_EXACT_MAX_I64, false, NNP_OPT_MSG_PLAIN},
    {"follow_fork", NNP_MS_BOOL, NNP_OPT_FLD(follow_fork), NNP_OPT_W_INT, 0, 0, false,
     NNP_OPT_MSG_PLAIN},
    {"follow_children", NNP_MS_BOOL, NNP_OPT_FLD(follow_children), NNP_OPT_W_INT, 0, 0, false,
     NNP_OPT_MSG_PLAIN},
};

const nnp_ms_opt_t *nnp__opt_ms_find(const char *key)
{
    for (size_t i = 0; i < NNP_OPT_MS_COUNT; i++) {
        if (strcmp(nnp__opt_ms_opts[i].key, key) == 0)
            return &nnp__opt_ms_opts[i];
    }
    return NULL;
}

static void ms_apply_bool(nnp_options_t *o, const nnp_ms_opt_t *d, const cJSON *v)
{
    bool def = nnp__opt_bool_get(&nnp__opt_defaults, d->off);
    char got[VALUE_TEXT_CAP];
    /* isinstance(x, bool): JSON true/false only; 1 and "true" are not bools. */
    if (cJSON_IsBool(v)) {
        nnp__opt_bool_set(o, d->off, cJSON_IsTrue(v));
        return;
    }
    if (d->style == NNP_OPT_MSG_INVALID)
        NNP_LOG_W("The parameter %s is an invalid value (%s), it will be set to %s.", d->key,
                  nnp__opt_value_text(v, got, sizeof(got)), def ? "True" : "False");
    else
        nnp__opt_warn_type(CTX_MS, d->key, "bool", v, def ? "True" : "False");
    nnp__opt_bool_set(o, d->off, def);
}

static void ms_apply_int(nnp_options_t *o, const nnp_ms_opt_t *d, const cJSON *v)
{
    int64_t def = nnp__opt_int_get(&nnp__opt_defaults, d);
    char def_text[DEFAULT_TEXT_CAP], got[VALUE_TEXT_CAP], allowed[LIST_TEXT_CAP];
    int64_t x;
    snprintf(def_text, sizeof(def_text), "%lld", (long long)def);
    /* Booleans are rejected too: the seed does so explicitly for timeline_limit
     * (isinstance(timeline_limit, bool)) and a flag is never a count. */
    if (!nnp__opt_json_is_int(v)) {
        nnp__opt_warn_type(CTX_MS, d->key, "int", v, def_text);
        nnp__opt_int_set(o, d, def);
        return;
    }
    x = nnp__opt_number_to_i64(v->valuedouble);
    if (x >= d->min && x <= d->max) {
        nnp__opt_int_set(o, d, x);
        return;
    }
    if (d->style == NNP_OPT_MSG_TIMELINE && x < d->min)
        NNP_LOG_W("[Profiler]The 'timeline_limit' parameter must be greater than 0, it will be set "
                  "to %lld.",
                  (long long)def);
    else
        nnp__opt_warn_range(CTX_MS, d->key,
                            nnp__opt_range_text(d->min, d->max, d->style == NNP_OPT_MSG_LIST,
                                                allowed, sizeof(allowed)),
                            nnp__opt_value_text(v, got, sizeof(got)), def_text);
    nnp__opt_int_set(o, d, def);
}

/* profile_framework: "all" | "time" | "memory" | null (seed 000 _parser_kwargs). */
static void ms_apply_framework(nnp_options_t *o, const cJSON *v)
{
    char got[VALUE_TEXT_CAP];
    int i = -1;
    if (cJSON_IsNull(v)) {
        o->profile_framework = NNP_FRAMEWORK_NONE;
        return;
    }
    if (cJSON_IsString(v))
        i = nnp__opt_lookup(nnp__opt_framework_names, NNP_ARRAY_LEN(nnp__opt_framework_names),
                            v->valuestring);
    if (i >= 0) {
        o->profile_framework = (nnp_framework_mode_t)i;
        return;
    }
    nnp__opt_warn_choice(CTX_MS, "profile_framework", "['memory', 'time', 'all', None]",
                         nnp__opt_value_text(v, got, sizeof(got)), "'all'");
    o->profile_framework = nnp__opt_defaults.profile_framework;
}

/* profiler_level (seed 000 _parse_parameter_for_ascend). An invalid value becomes Level0
 * WITHOUT Level0's side effects: the seed's if/elif chain skips them in that branch. */
static void ms_apply_level(nnp_options_t *o, const cJSON *v)
{
    int i = -1;
    if (cJSON_IsNull(v)) {
        o->profiler_level = NNP_LEVEL_UNSET;
        return;
    }
    if (cJSON_IsString(v))
        i = nnp__opt_lookup(nnp__opt_level_names, NNP_ARRAY_LEN(nnp__opt_level_names),
                            v->valuestring);
    if (i < 0) {
        nnp__opt_warn_type(
            CTX_MS, "profiler_level",
            "one of [ProfilerLevel.Level0, ProfilerLevel.Level1, ProfilerLevel.Level2]", v,
            "ProfilerLevel.Level0");
        o->profiler_level = NNP_LEVEL_0;
        return;
    }
    o->profiler_level = (nnp_profiler_level_t)i;
    if (o->profiler_level == NNP_LEVEL_0) {
        o->data_process = false;
        o->aicore_metrics = AICORE_METRICS_NONE;
        NNP_LOG_W("For 'Profiler', when profiler_level set Level0, data_process will be set to "
                  "False and aicore_metrics set to -1.");
    } else if (o->profiler_level == NNP_LEVEL_1) {
        o->data_process = false;
        NNP_LOG_W("For 'Profiler', when profiler_level set Level1, data_process will be set to "
                  "False.");
    }
}

static void ms_apply_policy(nnp_options_t *o, const cJSON *v)
{
    char got[VALUE_TEXT_CAP];
    int i = -1;
    if (cJSON_IsString(v))
        i = nnp__opt_lookup(nnp__opt_policy_names, NNP_ARRAY_LEN(nnp__opt_policy_names),
                            v->valuestring);
    if (i >= 0) {
        o->full_policy = (nnp_full_policy_t)i;
        return;
    }
    nnp__opt_warn_choice(CTX_MS, "full_policy", "['drop', 'block', 'wait']",
                         nnp__opt_value_text(v, got, sizeof(got)), "'wait'");
    o->full_policy = nnp__opt_defaults.full_policy;
}

static int ms_apply(nnp_options_t *o, const nnp_ms_opt_t *d, const cJSON *v, bool *start,
                    bool *path_given)
{
    switch (d->kind) {
    case NNP_MS_START:
        /* seed 001: "start" (bool, default false) switches env-enabled profiling on. */
        if (cJSON_IsBool(v)) {
            *start = cJSON_IsTrue(v);
        } else {
            nnp__opt_warn_type(CTX_MS, d->key, "bool", v, "False");
            *start = false;
        }
        return NNP_OK;
    case NNP_MS_BOOL:
        ms_apply_bool(o, d, v);
        return NNP_OK;
    case NNP_MS_INT:
        ms_apply_int(o, d, v);
        return NNP_OK;
    case NNP_MS_PATH:
        return nnp__opt_apply_path(o->output_path, CTX_MS, d->key, v, path_given);
    case NNP_MS_FRAMEWORK:
        ms_apply_framework(o, v);
        return NNP_OK;
    case NNP_MS_POLICY:
        ms_apply_policy(o, v);
        return NNP_OK;
    case NNP_MS_LEVEL:
    default:
        return NNP_OK; /* profiler_level: see nnp__opt_ms_merge() */
    }
}

/* The body of nnp_options_from_json(); path_given reports a non-null output_path, which
 * nnp_options_from_env() needs for MS_DIAGNOSTIC_DATA_PATH. Like *o, *start and
 * *path_given are written only on success. */
int nnp__opt_ms_merge(nnp_options_t *o, const char *json, bool *start, bool *path_given)
{
    cJSON *root, *it, *op;
    nnp_options_t tmp;
    bool op_time, start_val = start ? *start : false, given = false;
    int rc;

    if (!o)
        return nnp__fail(NNP_EINVAL, "options: NULL options");
    rc = nnp__opt_parse_object(json, "options", &root);
    if (rc != NNP_OK)
        return rc;
    tmp = *o; /* parse into a copy, commit only on success */

    /* Pass 1 (seed 000 _parser_kwargs loop): unknown keys, and keys that need op_time when
     * this document (or earlier settings) turn op_time off. A non-bool op_time will be
     * reset to True, so it disables nothing. */
    op = cJSON_GetObjectItemCaseSensitive(root, "op_time");
    op_time = op ? (!cJSON_IsBool(op) || cJSON_IsTrue(op)) : tmp.op_time;
    cJSON_ArrayForEach(it, root)
    {
        const nnp_ms_opt_t *d = it->string ? nnp__opt_ms_find(it->string) : NULL;
        if (!d)
            nnp__opt_warn_unknown_key(it->string ? it->string : "");
        else if (!op_time && d->needs_op_time)
            nnp__opt_warn_needs_op_time(d->key);
    }

    /* Pass 2: values, in document order (a repeated key: the last one wins). */
    cJSON_ArrayForEach(it, root)
    {
        const nnp_ms_opt_t *d = it->string ? nnp__opt_ms_find(it->string) : NULL;
        if (!d)
            continue;
        rc = ms_apply(&tmp, d, it, &start_val, &given);
        if (rc != NNP_OK)
            goto out;
    }

    /* Pass 3: profiler_level last, since its side effects override data_process and
     * aicore_metrics whatever their position in the document (seed 000 parses it after). */
    cJSON_ArrayForEach(it, root)
    {
        if (it->string && strcmp(it->string, "profiler_level") == 0)
            ms_apply_level(&tmp, it);
    }
    *o = tmp;
    if (start)
        *start = start_val;
    if (path_given && given)
        *path_given = true;
out:
    cJSON_Delete(root);
    return rc;
}

int nnp_options_init(nnp_options_t *o)
{
    if (!o)
        return nnp__fail(NNP_EINVAL, "options: NULL options");
    memcpy(o, &nnp__opt_defaults, sizeof(*o));
    return NNP_OK;
}

int nnp_options_from_json(nnp_options_t *o, const char *json, bool *start)
{
    return nnp__opt_ms_merge(o, json, start, NULL);
}
