/* options_common.c - what every option dialect shares: the defaults, the enum spellings,
 * the helpers that turn JSON values into message text, the warnings in the seeds' sentence
 * shapes, the output-path check and the table-driven field access (options_common.h). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/options_common.h"

/* Every default in one place; nnp_options_init() copies it, and a bad value falls back to
 * the matching field here, so the two cannot drift. */
const nnp_options_t nnp__opt_defaults = {
    .output_path = DEFAULT_OUTPUT_PATH,
    .start_profile = true,
    .op_time = true,
    .profile_memory = false,
    .profile_communication = false,
    .parallel_strategy = true,
    .data_process = true,
    .timeline_limit_mb = DEFAULT_TIMELINE_LIMIT_MB,
    .profile_framework = NNP_FRAMEWORK_ALL,
    .profiler_level = NNP_LEVEL_UNSET,
    .aicore_metrics = 0,
    .sync_enable = true,
    .data_simplification = true,
    .host_stack = true,
    .storage_limit_mb = 0,
    .training_trace = true,
    .task_trace = NNP_TASK_TRACE_ON,
    .aic_metrics = DEFAULT_AIC_METRICS,
    .host_sys_usage_freq = DEFAULT_HOST_SYS_USAGE_HZ,
    .rank_id = 0,
    .device_id = 0,
    .rank_size = 1,
    .buffer_size_kb = DEFAULT_BUFFER_SIZE_KB,
    .full_policy = NNP_FULL_WAIT,
    .writer_period_ms = DEFAULT_WRITER_PERIOD_MS,
    .sample_interval_ms = DEFAULT_SAMPLE_INTERVAL_MS,
    .raw_file_bytes = DEFAULT_RAW_FILE_BYTES,
    .storage_limit_bytes = 0,
};

/* String spellings of the enums, indexed by value. */
const char *const nnp__opt_framework_names[] = {"all", "time", "memory", NULL};
const char *const nnp__opt_level_names[] = {NULL, "Level0", "Level1", "Level2"};
const char *const nnp__opt_task_trace_names[] = {"on", "off", "l0", "l1"};
const char *const nnp__opt_policy_names[] = {"drop", "block", "wait"};
/* seed 004 aic_metrics values (Custom:... is checked separately). */
const char *const nnp__opt_aic_metrics_names[] = {
    "ArithmeticUtilization", "PipeUtilization", "Memory", "MemoryL0", "MemoryUB",
    "ResourceConflictRatio", "L2Cache"};

const nnp_opt_host_sys_item_t nnp__opt_host_sys_items[] = {{NNP_HOST_SYS_CPU, "cpu"},
                                                           {NNP_HOST_SYS_MEM, "mem"}};

/* ---- small helpers ---- */

/* Copies s into buf with control characters written as C escapes, so a key or path with a
 * newline still logs as one line (the log sink's contract); cut with "..." past cap. */
const char *nnp__opt_escaped(const char *s, char *buf, size_t cap)
{
    static const char ellipsis[] = "...";
    size_t n = 0;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char piece[8];
        size_t k;
        if (c < 0x20 || c == 0x7f) {
            const char *named = c == '\n'   ? "\\n"
                                : c == '\t' ? "\\t"
                                : c == '\r' ? "\\r"
                                : c == '\f' ? "\\f"
                                : c == '\b' ? "\\b"
                                : c == '\v' ? "\\v"
                                            : NULL;
            if (named)
                k = (size_t)snprintf(piece, sizeof(piece), "%s", named);
            else
                k = (size_t)snprintf(piece, sizeof(piece), "\\x%02x", c);
        } else {
            piece[0] = (char)c;
            k = 1;
        }
        if (n + k + sizeof(ellipsis) > cap) {
            memcpy(buf + n, ellipsis, sizeof(ellipsis));
            return buf;
        }
        memcpy(buf + n, piece, k);
        n += k;
    }
    buf[n] = '\0';
    return buf;
}

/* A JSON value as JSON text for messages, e.g. "yes" with its quotes, cut with "...". */
const char *nnp__opt_value_text(const cJSON *v, char *buf, size_t cap)
{
    static const char ellipsis[] = "...";
    char *p = cJSON_PrintUnformatted(v);
    if (!p) {
        nnp__strlcpy(buf, "?", cap);
        return buf;
    }
    if (!nnp__strlcpy(buf, p, cap))
        memcpy(buf + cap - sizeof(ellipsis), ellipsis, sizeof(ellipsis));
    cJSON_free(p);
    return buf;
}

/* cJSON keeps every number as a double. An integral one is a JSON integer, as Python's json
 * reads "5" as int and "5.5" as float; only "5.0" reads differently (cJSON drops spelling). */
static bool number_is_int(double d)
{
    if (!isfinite(d))
        return false;
    if (d >= JSON_INT_EXACT_MAX || d <= -JSON_INT_EXACT_MAX)
        return true; /* every double this large is integral */
    return (double)(int64_t)d == d;
}

int64_t nnp__opt_number_to_i64(double d)
{
    /* (double)INT64_MAX rounds up to 2^63, so >= catches everything that would overflow. */
    if (d >= (double)INT64_MAX)
        return INT64_MAX;
    if (d <= (double)INT64_MIN)
        return INT64_MIN;
    return (int64_t)d;
}

bool nnp__opt_json_is_int(const cJSON *v)
{
    return cJSON_IsNumber(v) && number_is_int(v->valuedouble);
}

/* The Python type the seed's message would name for a JSON value (json.loads mapping). */
const char *nnp__opt_py_type(const cJSON *v)
{
    if (cJSON_IsBool(v))
        return "bool";
    if (cJSON_IsNull(v))
        return "NoneType";
    if (cJSON_IsString(v))
        return "str";
    if (cJSON_IsNumber(v))
        return number_is_int(v->valuedouble) ? "int" : "float";
    if (cJSON_IsArray(v))
        return "list";
    if (cJSON_IsObject(v))
        return "dict";
    return "unknown";
}

/* Strict unsigned decimal: digits only (no sign, no blanks, like Python's str.isdigit() the
 * seed uses for RANK_ID), no overflow. *end receives where the digits stop; with end ==
 * NULL the whole string must be digits. */
bool nnp__opt_parse_u64(const char *s, uint64_t *out, const char **end)
{
    char *stop;
    unsigned long long v;
    if (*s < '0' || *s > '9')
        return false;
    errno = 0;
    v = strtoull(s, &stop, DEC_BASE);
    if (errno != 0)
        return false;
    if (end)
        *end = stop;
    else if (*stop != '\0')
        return false;
    *out = v;
    return true;
}

int nnp__opt_lookup(const char *const names[], size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++) {
        if (names[i] && strcmp(names[i], s) == 0)
            return (int)i;
    }
    return -1;
}

const char *nnp__opt_on_off(bool b)
{
    return b ? "on" : "off";
}

/* ---- the warnings, in the seed's sentence shapes ---- */

/* seed 000 _parser_kwargs: "For 'Profiler', the parameter op_time must be bool, but got type
 * <type>, it will be set to True."; we add the value itself, as JSON text. */
void nnp__opt_warn_type(const char *ctx, const char *key, const char *want, const cJSON *v,
                        const char *def)
{
    char got[VALUE_TEXT_CAP];
    NNP_LOG_W("For '%s', the parameter %s must be %s, but got type %s (%s), it will be set to %s.",
              ctx, key, want, nnp__opt_py_type(v), nnp__opt_value_text(v, got, sizeof(got)), def);
}

/* seed 000 aicore_metrics: "must be in [-1, 0, ..., 6], but got 7, it will be set to 0." */
void nnp__opt_warn_range(const char *ctx, const char *key, const char *allowed, const char *got,
                         const char *def)
{
    NNP_LOG_W("For '%s', the parameter %s must be in %s, but got %s, it will be set to %s.", ctx,
              key, allowed, got, def);
}

/* seed 000 profile_framework: "must be one of ['memory', 'time', 'all', None], but got x,
 * it will be set to 'all'." */
void nnp__opt_warn_choice(const char *ctx, const char *key, const char *allowed, const char *got,
                          const char *def)
{
    NNP_LOG_W("For '%s', the parameter %s must be one of %s, but got %s, it will be set to %s.",
              ctx, key, allowed, got, def);
}

/* seed 000 _parser_kwargs: a parameter that needs op_time while op_time is False. */
void nnp__opt_warn_needs_op_time(const char *key)
{
    NNP_LOG_W("When op_time is set to False, the parameter '%s' setting is invalid.", key);
}

/* seed 000 _parser_kwargs: a key the device does not support. */
void nnp__opt_warn_unknown_key(const char *key)
{
    char shown[VALUE_TEXT_CAP];
    NNP_LOG_W("%s is an invalid param which doesn't work.",
              nnp__opt_escaped(key, shown, sizeof(shown)));
}

/* "[lo, hi]" for range messages; "[-1, 0, 1, ..., 6]" when every value is listed, as the
 * seed writes the aicore_metrics range. */
const char *nnp__opt_range_text(int64_t lo, int64_t hi, bool list_all, char *buf, size_t cap)
{
    size_t n;
    if (!list_all) {
        snprintf(buf, cap, "[%lld, %lld]", (long long)lo, (long long)hi);
        return buf;
    }
    n = (size_t)snprintf(buf, cap, "[");
    for (int64_t v = lo; v <= hi && n < cap; v++)
        n += (size_t)snprintf(buf + n, cap - n, v == lo ? "%lld" : ", %lld", (long long)v);
    if (n < cap)
        snprintf(buf + n, cap - n, "]");
    return buf;
}

/* The one check every output path goes through (seed 004 "output": no \n \f \r \b \t \v
 * \u007F). what names the option or variable the path came from. */
int nnp__opt_check_output_path(const char *what, const char *s)
{
    char shown[PATH_TEXT_CAP];
    if (s[0] == '\0')
        return nnp__fail(NNP_EPATH, "%s is empty", what);
    if (strlen(s) >= NNP_PATH_MAX)
        return nnp__fail(NNP_EPATH, "%s is longer than %d characters", what, NNP_PATH_MAX - 1);
    if (nnp__path_has_forbidden_char(s))
        return nnp__fail(NNP_EPATH,
                         "%s '%s' contains a forbidden character (one of \\n \\f \\r \\b \\t \\v "
                         "\\x7f)",
                         what, nnp__opt_escaped(s, shown, sizeof(shown)));
    return NNP_OK;
}

/* output_path / output: null means "not given" (seed 000 _get_output_path), a string must
 * pass nnp__opt_check_output_path(), anything else falls back to the default. */
int nnp__opt_apply_path(char *dst, const char *ctx, const char *key, const cJSON *v, bool *given)
{
    int rc;
    if (cJSON_IsNull(v))
        return NNP_OK;
    if (given)
        *given = true;
    if (!cJSON_IsString(v)) {
        nnp__opt_warn_type(ctx, key, "str", v, "\"" DEFAULT_OUTPUT_PATH "\"");
        nnp__strlcpy(dst, DEFAULT_OUTPUT_PATH, NNP_PATH_MAX);
        return NNP_OK;
    }
    rc = nnp__opt_check_output_path(key, v->valuestring);
    if (rc != NNP_OK)
        return rc;
    nnp__strlcpy(dst, v->valuestring, NNP_PATH_MAX);
    return NNP_OK;
}

/* Parses json into a new tree; NNP_EINVAL (with where it broke) unless it is an object. */
int nnp__opt_parse_object(const char *json, const char *what, cJSON **out)
{
    const char *end = NULL;
    char near[ERROR_SNIPPET_CHARS + 1] = "", shown[VALUE_TEXT_CAP];
    cJSON *root;
    *out = NULL;
    if (!json)
        return nnp__fail(NNP_EINVAL, "%s: no JSON text", what);
    /* The parse-end pointer is cJSON_GetErrorPtr()'s position without its global state. */
    root = cJSON_ParseWithOpts(json, &end, true);
    if (!root) {
        size_t off = end ? (size_t)(end - json) : 0;
        if (end)
            nnp__strlcpy(near, end, sizeof(near));
        return nnp__fail(NNP_EINVAL, "%s: invalid JSON at offset %zu near '%s'", what, off,
                         nnp__opt_escaped(near, shown, sizeof(shown)));
    }
    if (!cJSON_IsObject(root)) {
        const char *type = nnp__opt_py_type(root);
        cJSON_Delete(root);
        return nnp__fail(NNP_EINVAL, "%s: a JSON object is required, got %s", what, type);
    }
    *out = root;
    return NNP_OK;
}

/* Fields are reached by offset so one table drives parsing; memcpy keeps it alias-safe. */
bool nnp__opt_bool_get(const nnp_options_t *o, size_t off)
{
    bool b;
    memcpy(&b, (const char *)o + off, sizeof(b));
    return b;
}

void nnp__opt_bool_set(nnp_options_t *o, size_t off, bool b)
{
    memcpy((char *)o + off, &b, sizeof(b));
}

int64_t nnp__opt_int_get(const nnp_options_t *o, const nnp_ms_opt_t *d)
{
    const char *p = (const char *)o + d->off;
    int i;
    size_t z;
    uint64_t u;
    switch (d->width) {
    case NNP_OPT_W_INT:
        memcpy(&i, p, sizeof(i));
        return i;
    case NNP_OPT_W_SIZE:
        memcpy(&z, p, sizeof(z));
        return (int64_t)z;
    case NNP_OPT_W_U64:
    default:
        memcpy(&u, p, sizeof(u));
        return (int64_t)u;
    }
}

void nnp__opt_int_set(nnp_options_t *o, const nnp_ms_opt_t *d, int64_t v)
{
    char *p = (char *)o + d->off;
    int i = (int)v;
    size_t z = (size_t)v;
    uint64_t u = (uint64_t)v;
    switch (d->width) {
    case NNP_OPT_W_INT:
        memcpy(p, &i, sizeof(i));
        break;
    case NNP_OPT_W_SIZE:
        memcpy(p, &z, sizeof(z));
        break;
    case NNP_OPT_W_U64:
    default:
        memcpy(p, &u, sizeof(u));
        break;
    }
}
