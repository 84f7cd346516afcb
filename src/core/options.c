/* options.c - nnp_options_t: its defaults, the MindSpore (Profiler kwargs, MS_PROFILER_OPTIONS)
 * and msprof (PROFILING_OPTIONS) JSON parsers, the environment, validation and the JSON form.
 * The profiler must not hurt the host: a bad value costs one warning in the seed's wording
 * and falls back to its default (seed 000 _parser_kwargs); only an unusable output path or
 * a non-object document is an error, and then the caller's options are left unchanged. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/options_internal.h"
#include "util/json_writer.h"
#include "util/util.h"

/* ---- defaults and limits; the seed behind each is named ---- */

#define DEFAULT_OUTPUT_PATH       "./data"          /* seed 000 Profiler docstring */
#define DEFAULT_TIMELINE_LIMIT_MB 500               /* seed 000 _parser_kwargs */
#define DEFAULT_AIC_METRICS       "PipeUtilization" /* seed 004 aic_metrics: 该项为默认值 */
#define DEFAULT_HOST_SYS_USAGE_HZ 50                /* seed 004 host_sys_usage_freq */
/* 4 MiB per thread holds ~130k 32-byte records: 1.3 s of a 100k events/s thread. */
#define DEFAULT_BUFFER_SIZE_KB 4096
/* 10 ms drains a default buffer long before a busy thread can fill it. */
#define DEFAULT_WRITER_PERIOD_MS 10
/* One sample a second, as msprof's host_sys does by default. */
#define DEFAULT_SAMPLE_INTERVAL_MS 1000
/* 64 MiB files keep storage_limit ageing fine-grained without many small files. */
#define DEFAULT_RAW_FILE_BYTES (64ull * 1024 * 1024)

/* seed 000 AICORE_METRICS_DICT: -1 "None" (collect nothing) to 6 "L2Cache". */
#define AICORE_METRICS_NONE (-1)
#define AICORE_METRICS_MAX  6
/* seed 004 storage_limit: "取值范围为[200, 4294967295],单位为MB". */
#define STORAGE_LIMIT_MIN_MB 200ull
#define STORAGE_LIMIT_MAX_MB 4294967295ull
#define STORAGE_LIMIT_UNIT   "MB"
/* seed 004 host_sys_usage_freq: "取值范围为[1,50]" Hz. */
#define HOST_SYS_USAGE_MIN_HZ 1
#define HOST_SYS_USAGE_MAX_HZ 50
/* seed 004 aic_metrics Custom: registers in [0x1, 0x6E], at most 8 of them. */
#define CUSTOM_PREFIX        "Custom:"
#define CUSTOM_REG_MIN       0x1
#define CUSTOM_REG_MAX       0x6E
#define CUSTOM_REG_MAX_COUNT 8
#define HEX_BASE             16
#define DEC_BASE             10

/* Recorder limits. 64 KiB is the smallest buffer that still holds a full raw chunk; 1 GiB
 * per thread is already absurd and guards size arithmetic. */
#define BUFFER_SIZE_MIN_KB 64
#define BUFFER_SIZE_MAX_KB 1048576
/* Draining more often than every 1 ms costs CPU for nothing; waiting longer than 1 s lets
 * buffers fill on busy threads. */
#define WRITER_PERIOD_MIN_MS 1
#define WRITER_PERIOD_MAX_MS 1000
/* 0 turns the samplers off; one sample an hour is the slowest that still says anything. */
#define SAMPLE_INTERVAL_MIN_MS 0
#define SAMPLE_INTERVAL_MAX_MS 3600000
/* A data file smaller than one maximal chunk (64 KiB) could not hold it. */
#define RAW_FILE_MIN_BYTES 65536ull
/* The largest integer a JSON number (a double in cJSON) carries exactly: 2^53. */
#define JSON_INT_EXACT_MAX     9007199254740992.0
#define JSON_INT_EXACT_MAX_I64 ((int64_t)1 << 53)
#define MS_PER_S               1000

/* seed 000 _ascend_profiler_init: longer option strings are silently cut by the runtime. */
#define OPTIONS_JSON_MAX_CHARS 2048
/* to_json's worst case is every byte of output_path and the three names escaped as
 * \u00XX (6 bytes each): about 31 KiB, so 64 KiB always fits. */
#define TO_JSON_CAP (64 * 1024)
/* How much of a bad value or path a message shows; the rest becomes "...". */
#define VALUE_TEXT_CAP      96
#define PATH_TEXT_CAP       512
#define DEFAULT_TEXT_CAP    48
#define LIST_TEXT_CAP       64
#define ERROR_SNIPPET_CHARS 16

/* The names messages use for the two option dialects. */
#define CTX_MS     "Profiler"          /* MindSpore: "For 'Profiler', ..." (seed 000) */
#define CTX_MSPROF "PROFILING_OPTIONS" /* msprof (seed 004) */

/* Every default in one place; nnp_options_init() copies it, and a bad value falls back to
 * the matching field here, so the two cannot drift. */
static const nnp_options_t defaults = {
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
    .full_policy = NNP_FULL_DROP,
    .writer_period_ms = DEFAULT_WRITER_PERIOD_MS,
    .sample_interval_ms = DEFAULT_SAMPLE_INTERVAL_MS,
    .raw_file_bytes = DEFAULT_RAW_FILE_BYTES,
    .storage_limit_bytes = 0,
};

/* String spellings of the enums, indexed by value. */
static const char *const framework_names[] = {"all", "time", "memory", NULL};
static const char *const level_names[] = {NULL, "Level0", "Level1", "Level2"};
static const char *const task_trace_names[] = {"on", "off", "l0", "l1"};
static const char *const policy_names[] = {"drop", "block"};
/* seed 004 aic_metrics values (Custom:... is checked separately). */
static const char *const aic_metrics_names[] = {
    "ArithmeticUtilization", "PipeUtilization", "Memory", "MemoryL0", "MemoryUB",
    "ResourceConflictRatio", "L2Cache"};

static const struct {
    unsigned bit;
    const char *name;
} host_sys_items[] = {{NNP_HOST_SYS_CPU, "cpu"}, {NNP_HOST_SYS_MEM, "mem"}};

/* ---- small helpers ---- */

/* Copies s into buf with control characters written as C escapes, so a key or path with a
 * newline still logs as one line (the log sink's contract); cut with "..." past cap. */
static const char *escaped(const char *s, char *buf, size_t cap)
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
static const char *value_text(const cJSON *v, char *buf, size_t cap)
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

static int64_t number_to_i64(double d)
{
    /* (double)INT64_MAX rounds up to 2^63, so >= catches everything that would overflow. */
    if (d >= (double)INT64_MAX)
        return INT64_MAX;
    if (d <= (double)INT64_MIN)
        return INT64_MIN;
    return (int64_t)d;
}

static bool json_is_int(const cJSON *v)
{
    return cJSON_IsNumber(v) && number_is_int(v->valuedouble);
}

/* The Python type the seed's message would name for a JSON value (json.loads mapping). */
static const char *py_type(const cJSON *v)
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
static bool parse_u64(const char *s, uint64_t *out, const char **end)
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

static int lookup(const char *const names[], size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++) {
        if (names[i] && strcmp(names[i], s) == 0)
            return (int)i;
    }
    return -1;
}

static const char *on_off(bool b)
{
    return b ? "on" : "off";
}

/* ---- the warnings, in the seed's sentence shapes ---- */

/* seed 000 _parser_kwargs: "For 'Profiler', the parameter op_time must be bool, but got type
 * <type>, it will be set to True."; we add the value itself, as JSON text. */
static void warn_type(const char *ctx, const char *key, const char *want, const cJSON *v,
                      const char *def)
{
    char got[VALUE_TEXT_CAP];
    NNP_LOG_W("For '%s', the parameter %s must be %s, but got type %s (%s), it will be set to %s.",
              ctx, key, want, py_type(v), value_text(v, got, sizeof(got)), def);
}

/* seed 000 aicore_metrics: "must be in [-1, 0, ..., 6], but got 7, it will be set to 0." */
static void warn_range(const char *ctx, const char *key, const char *allowed, const char *got,
                       const char *def)
{
    NNP_LOG_W("For '%s', the parameter %s must be in %s, but got %s, it will be set to %s.", ctx,
              key, allowed, got, def);
}

/* seed 000 profile_framework: "must be one of ['memory', 'time', 'all', None], but got x,
 * it will be set to 'all'." */
static void warn_choice(const char *ctx, const char *key, const char *allowed, const char *got,
                        const char *def)
{
    NNP_LOG_W("For '%s', the parameter %s must be one of %s, but got %s, it will be set to %s.",
              ctx, key, allowed, got, def);
}

/* seed 000 _parser_kwargs: a parameter that needs op_time while op_time is False. */
static void warn_needs_op_time(const char *key)
{
    NNP_LOG_W("When op_time is set to False, the parameter '%s' setting is invalid.", key);
}

/* seed 000 _parser_kwargs: a key the device does not support. */
static void warn_unknown_key(const char *key)
{
    char shown[VALUE_TEXT_CAP];
    NNP_LOG_W("%s is an invalid param which doesn't work.", escaped(key, shown, sizeof(shown)));
}

/* "[lo, hi]" for range messages; "[-1, 0, 1, ..., 6]" when every value is listed, as the
 * seed writes the aicore_metrics range. */
static const char *range_text(int64_t lo, int64_t hi, bool list_all, char *buf, size_t cap)
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
static int check_output_path(const char *what, const char *s)
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
                         what, escaped(s, shown, sizeof(shown)));
    return NNP_OK;
}

/* output_path / output: null means "not given" (seed 000 _get_output_path), a string must
 * pass check_output_path(), anything else falls back to the default. */
static int apply_path(char *dst, const char *ctx, const char *key, const cJSON *v, bool *given)
{
    int rc;
    if (cJSON_IsNull(v))
        return NNP_OK;
    if (given)
        *given = true;
    if (!cJSON_IsString(v)) {
        warn_type(ctx, key, "str", v, "\"" DEFAULT_OUTPUT_PATH "\"");
        nnp__strlcpy(dst, DEFAULT_OUTPUT_PATH, NNP_PATH_MAX);
        return NNP_OK;
    }
    rc = check_output_path(key, v->valuestring);
    if (rc != NNP_OK)
        return rc;
    nnp__strlcpy(dst, v->valuestring, NNP_PATH_MAX);
    return NNP_OK;
}

/* Parses json into a new tree; NNP_EINVAL (with where it broke) unless it is an object. */
static int parse_object(const char *json, const char *what, cJSON **out)
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
                         escaped(near, shown, sizeof(shown)));
    }
    if (!cJSON_IsObject(root)) {
        const char *type = py_type(root);
        cJSON_Delete(root);
        return nnp__fail(NNP_EINVAL, "%s: a JSON object is required, got %s", what, type);
    }
    *out = root;
    return NNP_OK;
}

/* ---- MindSpore options (seed 000 Profiler.__init__, _parser_kwargs,
 *      _parse_parameter_for_ascend; seed 001 MS_PROFILER_OPTIONS) ---- */

typedef enum ms_kind {
    MS_START, /* "start": goes to *start, not to the struct (seed 001) */
    MS_BOOL,
    MS_INT,
    MS_PATH,
    MS_FRAMEWORK,
    MS_LEVEL, /* applied after every other key: it overrides them (seed 000) */
    MS_POLICY
} ms_kind_t;

/* Storage of an integer field. */
typedef enum width { W_INT, W_SIZE, W_U64 } width_t;

/* Sentence shape of an option's bad-value warning. */
typedef enum msg_style {
    MSG_PLAIN,    /* warn_type / warn_range */
    MSG_INVALID,  /* sync_enable: "The parameter sync_enable is an invalid value" (seed 000 GPU) */
    MSG_TIMELINE, /* timeline_limit <= 0: the fixed sentence of _parser_kwargs */
    MSG_LIST      /* aicore_metrics: range written as the full list */
} msg_style_t;

typedef struct ms_opt {
    const char *key;
    ms_kind_t kind;
    size_t off;
    width_t width;
    int64_t min, max;
    bool needs_op_time; /* not in seed 000 ALWAYS_VALID_PARAM */
    msg_style_t style;
} ms_opt_t;

#define FLD(f) offsetof(nnp_options_t, f)

/* Every key nnp_options_from_json() knows, in to_json order. nnprof's own keys (recorder,
 * identity) never depend on op_time. */
static const ms_opt_t ms_opts[] = {
    {"start", MS_START, 0, W_INT, 0, 0, false, MSG_PLAIN},
    {"output_path", MS_PATH, FLD(output_path), W_INT, 0, 0, false, MSG_PLAIN},
    {"start_profile", MS_BOOL, FLD(start_profile), W_INT, 0, 0, false, MSG_PLAIN},
    {"op_time", MS_BOOL, FLD(op_time), W_INT, 0, 0, false, MSG_PLAIN},
    {"profile_memory", MS_BOOL, FLD(profile_memory), W_INT, 0, 0, true, MSG_PLAIN},
    {"profile_communication", MS_BOOL, FLD(profile_communication), W_INT, 0, 0, true, MSG_PLAIN},
    {"parallel_strategy", MS_BOOL, FLD(parallel_strategy), W_INT, 0, 0, false, MSG_PLAIN},
    {"data_process", MS_BOOL, FLD(data_process), W_INT, 0, 0, false, MSG_PLAIN},
    {"timeline_limit", MS_INT, FLD(timeline_limit_mb), W_INT, 1, INT_MAX, true, MSG_TIMELINE},
    {"profile_framework", MS_FRAMEWORK, FLD(profile_framework), W_INT, 0, 0, false, MSG_PLAIN},
    {"profiler_level", MS_LEVEL, FLD(profiler_level), W_INT, 0, 0, false, MSG_PLAIN},
    {"aicore_metrics", MS_INT, FLD(aicore_metrics), W_INT, AICORE_METRICS_NONE, AICORE_METRICS_MAX,
     true, MSG_LIST},
    {"l2_cache", MS_BOOL, FLD(l2_cache), W_INT, 0, 0, false, MSG_PLAIN},
    {"hbm_ddr", MS_BOOL, FLD(hbm_ddr), W_INT, 0, 0, false, MSG_PLAIN},
    {"pcie", MS_BOOL, FLD(pcie), W_INT, 0, 0, false, MSG_PLAIN},
    {"sync_enable", MS_BOOL, FLD(sync_enable), W_INT, 0, 0, true, MSG_INVALID},
    {"data_simplification", MS_BOOL, FLD(data_simplification), W_INT, 0, 0, true, MSG_PLAIN},
    {"host_stack", MS_BOOL, FLD(host_stack), W_INT, 0, 0, true, MSG_PLAIN},
    {"rank_id", MS_INT, FLD(rank_id), W_INT, 0, INT_MAX, false, MSG_PLAIN},
    {"device_id", MS_INT, FLD(device_id), W_INT, 0, INT_MAX, false, MSG_PLAIN},
    {"rank_size", MS_INT, FLD(rank_size), W_INT, 1, INT_MAX, false, MSG_PLAIN},
    {"buffer_size_kb", MS_INT, FLD(buffer_size_kb), W_SIZE, BUFFER_SIZE_MIN_KB, BUFFER_SIZE_MAX_KB,
     false, MSG_PLAIN},
    {"full_policy", MS_POLICY, FLD(full_policy), W_INT, 0, 0, false, MSG_PLAIN},
    {"writer_period_ms", MS_INT, FLD(writer_period_ms), W_INT, WRITER_PERIOD_MIN_MS,
     WRITER_PERIOD_MAX_MS, false, MSG_PLAIN},
    {"sample_interval_ms", MS_INT, FLD(sample_interval_ms), W_INT, SAMPLE_INTERVAL_MIN_MS,
     SAMPLE_INTERVAL_MAX_MS, false, MSG_PLAIN},
    {"raw_file_bytes", MS_INT, FLD(raw_file_bytes), W_U64, (int64_t)RAW_FILE_MIN_BYTES,
     JSON_INT_EXACT_MAX_I64, false, MSG_PLAIN},
    {"storage_limit_bytes", MS_INT, FLD(storage_limit_bytes), W_U64, 0, JSON_INT_EXACT_MAX_I64,
     false, MSG_PLAIN},
};

static const ms_opt_t *ms_find(const char *key)
{
    for (size_t i = 0; i < NNP_ARRAY_LEN(ms_opts); i++) {
        if (strcmp(ms_opts[i].key, key) == 0)
            return &ms_opts[i];
    }
    return NULL;
}

/* Fields are reached by offset so one table drives parsing; memcpy keeps it alias-safe. */
static bool bool_get(const nnp_options_t *o, size_t off)
{
    bool b;
    memcpy(&b, (const char *)o + off, sizeof(b));
    return b;
}

static void bool_set(nnp_options_t *o, size_t off, bool b)
{
    memcpy((char *)o + off, &b, sizeof(b));
}

static int64_t int_get(const nnp_options_t *o, const ms_opt_t *d)
{
    const char *p = (const char *)o + d->off;
    int i;
    size_t z;
    uint64_t u;
    switch (d->width) {
    case W_INT:
        memcpy(&i, p, sizeof(i));
        return i;
    case W_SIZE:
        memcpy(&z, p, sizeof(z));
        return (int64_t)z;
    case W_U64:
    default:
        memcpy(&u, p, sizeof(u));
        return (int64_t)u;
    }
}

static void int_set(nnp_options_t *o, const ms_opt_t *d, int64_t v)
{
    char *p = (char *)o + d->off;
    int i = (int)v;
    size_t z = (size_t)v;
    uint64_t u = (uint64_t)v;
    switch (d->width) {
    case W_INT:
        memcpy(p, &i, sizeof(i));
        break;
    case W_SIZE:
        memcpy(p, &z, sizeof(z));
        break;
    case W_U64:
    default:
        memcpy(p, &u, sizeof(u));
        break;
    }
}

static void ms_apply_bool(nnp_options_t *o, const ms_opt_t *d, const cJSON *v)
{
    bool def = bool_get(&defaults, d->off);
    char got[VALUE_TEXT_CAP];
    /* isinstance(x, bool): JSON true/false only; 1 and "true" are not bools. */
    if (cJSON_IsBool(v)) {
        bool_set(o, d->off, cJSON_IsTrue(v));
        return;
    }
    if (d->style == MSG_INVALID)
        NNP_LOG_W("The parameter %s is an invalid value (%s), it will be set to %s.", d->key,
                  value_text(v, got, sizeof(got)), def ? "True" : "False");
    else
        warn_type(CTX_MS, d->key, "bool", v, def ? "True" : "False");
    bool_set(o, d->off, def);
}

static void ms_apply_int(nnp_options_t *o, const ms_opt_t *d, const cJSON *v)
{
    int64_t def = int_get(&defaults, d);
    char def_text[DEFAULT_TEXT_CAP], got[VALUE_TEXT_CAP], allowed[LIST_TEXT_CAP];
    int64_t x;
    snprintf(def_text, sizeof(def_text), "%lld", (long long)def);
    /* Booleans are rejected too: the seed does so explicitly for timeline_limit
     * (isinstance(timeline_limit, bool)) and a flag is never a count. */
    if (!json_is_int(v)) {
        warn_type(CTX_MS, d->key, "int", v, def_text);
        int_set(o, d, def);
        return;
    }
    x = number_to_i64(v->valuedouble);
    if (x >= d->min && x <= d->max) {
        int_set(o, d, x);
        return;
    }
    if (d->style == MSG_TIMELINE && x < d->min)
        NNP_LOG_W("[Profiler]The 'timeline_limit' parameter must be greater than 0, it will be set "
                  "to %lld.",
                  (long long)def);
    else
        warn_range(CTX_MS, d->key,
                   range_text(d->min, d->max, d->style == MSG_LIST, allowed, sizeof(allowed)),
                   value_text(v, got, sizeof(got)), def_text);
    int_set(o, d, def);
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
        i = lookup(framework_names, NNP_ARRAY_LEN(framework_names), v->valuestring);
    if (i >= 0) {
        o->profile_framework = (nnp_framework_mode_t)i;
        return;
    }
    warn_choice(CTX_MS, "profile_framework", "['memory', 'time', 'all', None]",
                value_text(v, got, sizeof(got)), "'all'");
    o->profile_framework = defaults.profile_framework;
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
        i = lookup(level_names, NNP_ARRAY_LEN(level_names), v->valuestring);
    if (i < 0) {
        warn_type(CTX_MS, "profiler_level",
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
        i = lookup(policy_names, NNP_ARRAY_LEN(policy_names), v->valuestring);
    if (i >= 0) {
        o->full_policy = (nnp_full_policy_t)i;
        return;
    }
    warn_choice(CTX_MS, "full_policy", "['drop', 'block']", value_text(v, got, sizeof(got)),
                "'drop'");
    o->full_policy = defaults.full_policy;
}

static int ms_apply(nnp_options_t *o, const ms_opt_t *d, const cJSON *v, bool *start,
                    bool *path_given)
{
    switch (d->kind) {
    case MS_START:
        /* seed 001: "start" (bool, default false) switches env-enabled profiling on. */
        if (cJSON_IsBool(v)) {
            *start = cJSON_IsTrue(v);
        } else {
            warn_type(CTX_MS, d->key, "bool", v, "False");
            *start = false;
        }
        return NNP_OK;
    case MS_BOOL:
        ms_apply_bool(o, d, v);
        return NNP_OK;
    case MS_INT:
        ms_apply_int(o, d, v);
        return NNP_OK;
    case MS_PATH:
        return apply_path(o->output_path, CTX_MS, d->key, v, path_given);
    case MS_FRAMEWORK:
        ms_apply_framework(o, v);
        return NNP_OK;
    case MS_POLICY:
        ms_apply_policy(o, v);
        return NNP_OK;
    case MS_LEVEL:
    default:
        return NNP_OK; /* profiler_level: see ms_merge() */
    }
}

/* The body of nnp_options_from_json(); path_given reports a non-null output_path, which
 * nnp_options_from_env() needs for MS_DIAGNOSTIC_DATA_PATH. Like *o, *start and
 * *path_given are written only on success. */
static int ms_merge(nnp_options_t *o, const char *json, bool *start, bool *path_given)
{
    cJSON *root, *it, *op;
    nnp_options_t tmp;
    bool op_time, start_val = start ? *start : false, given = false;
    int rc;

    if (!o)
        return nnp__fail(NNP_EINVAL, "options: NULL options");
    rc = parse_object(json, "options", &root);
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
        const ms_opt_t *d = it->string ? ms_find(it->string) : NULL;
        if (!d)
            warn_unknown_key(it->string ? it->string : "");
        else if (!op_time && d->needs_op_time)
            warn_needs_op_time(d->key);
    }

    /* Pass 2: values, in document order (a repeated key: the last one wins). */
    cJSON_ArrayForEach(it, root)
    {
        const ms_opt_t *d = it->string ? ms_find(it->string) : NULL;
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
    memcpy(o, &defaults, sizeof(*o));
    return NNP_OK;
}

int nnp_options_from_json(nnp_options_t *o, const char *json, bool *start)
{
    return ms_merge(o, json, start, NULL);
}

/* ---- msprof PROFILING_OPTIONS (seed 004) ---- */

typedef enum mp_kind {
    MP_OUTPUT,
    MP_STORAGE,
    MP_ONOFF,
    MP_AICPU,
    MP_TASK,
    MP_NAME,
    MP_AIC,
    MP_HOSTSYS,
    MP_FREQ,
    MP_HARDWARE /* needs Ascend hardware: accepted, not collected */
} mp_kind_t;

typedef struct mp_opt {
    const char *key;
    mp_kind_t kind;
    size_t off;
} mp_opt_t;

static const mp_opt_t mp_opts[] = {
    {"output", MP_OUTPUT, FLD(output_path)},
    {"storage_limit", MP_STORAGE, FLD(storage_limit_mb)},
    {"training_trace", MP_ONOFF, FLD(training_trace)},
    {"task_trace", MP_TASK, FLD(task_trace)},
    {"task_time", MP_TASK, FLD(task_trace)},
    {"hccl", MP_ONOFF, FLD(hccl)},
    {"aicpu", MP_AICPU, FLD(aicpu)},
    {"fp_point", MP_NAME, FLD(fp_point)},
    {"bp_point", MP_NAME, FLD(bp_point)},
    {"aic_metrics", MP_AIC, FLD(aic_metrics)},
    {"l2", MP_ONOFF, FLD(l2_cache)},
    {"msproftx", MP_ONOFF, FLD(msproftx)},
    {"runtime_api", MP_ONOFF, FLD(runtime_api)},
    {"host_sys", MP_HOSTSYS, FLD(host_sys)},
    {"host_sys_usage", MP_HOSTSYS, FLD(host_sys_usage)},
    {"host_sys_usage_freq", MP_FREQ, FLD(host_sys_usage_freq)},
    {"sys_hardware_mem_freq", MP_HARDWARE, 0},
    {"llc_profiling", MP_HARDWARE, 0},
    {"sys_io_sampling_freq", MP_HARDWARE, 0},
    {"sys_interconnection_freq", MP_HARDWARE, 0},
    {"dvpp_freq", MP_HARDWARE, 0},
    {"instr_profiling_freq", MP_HARDWARE, 0},
};

/* "on"/"off" switches. aicpu is the one whose seed text says any other value means off;
 * we warn as well, since a typo silently disabling data is worth a line. */
static void mp_apply_onoff(nnp_options_t *o, const mp_opt_t *d, const cJSON *v)
{
    bool def = d->kind == MP_AICPU ? false : bool_get(&defaults, d->off);
    char got[VALUE_TEXT_CAP], def_text[DEFAULT_TEXT_CAP];
    if (cJSON_IsString(v) &&
        (strcmp(v->valuestring, "on") == 0 || strcmp(v->valuestring, "off") == 0)) {
        bool_set(o, d->off, strcmp(v->valuestring, "on") == 0);
        return;
    }
    snprintf(def_text, sizeof(def_text), "\"%s\"", on_off(def));
    warn_choice(CTX_MSPROF, d->key, "[\"on\", \"off\"]", value_text(v, got, sizeof(got)), def_text);
    bool_set(o, d->off, def);
}

/* task_trace / task_time: on | off | l0 | l1, on being the default (seed 004). */
static void mp_apply_task(nnp_options_t *o, const mp_opt_t *d, const cJSON *v)
{
    char got[VALUE_TEXT_CAP];
    int i = -1;
    if (cJSON_IsString(v))
        i = lookup(task_trace_names, NNP_ARRAY_LEN(task_trace_names), v->valuestring);
    if (i >= 0) {
        o->task_trace = (nnp_task_trace_t)i;
        return;
    }
    warn_choice(CTX_MSPROF, d->key, "[\"on\", \"off\", \"l0\", \"l1\"]",
                value_text(v, got, sizeof(got)), "\"on\"");
    o->task_trace = defaults.task_trace;
}

/* storage_limit: "<n>MB" with n in [200, 4294967295]; "" means not configured (90 % of
 * the free space, seed 004), which is also how to_json writes that default. */
static void mp_apply_storage(nnp_options_t *o, const cJSON *v)
{
    char got[VALUE_TEXT_CAP], allowed[LIST_TEXT_CAP];
    const char *end;
    uint64_t mb;
    if (cJSON_IsString(v)) {
        const char *s = v->valuestring;
        if (s[0] == '\0') {
            o->storage_limit_mb = 0;
            return;
        }
        if (parse_u64(s, &mb, &end) && strcmp(end, STORAGE_LIMIT_UNIT) == 0 &&
            mb >= STORAGE_LIMIT_MIN_MB && mb <= STORAGE_LIMIT_MAX_MB) {
            o->storage_limit_mb = mb;
            return;
        }
    }
    snprintf(allowed, sizeof(allowed), "[%lluMB, %lluMB]", STORAGE_LIMIT_MIN_MB,
             STORAGE_LIMIT_MAX_MB);
    warn_range(CTX_MSPROF, "storage_limit", allowed, value_text(v, got, sizeof(got)),
               "\"\" (90% of the free disk space)");
    o->storage_limit_mb = defaults.storage_limit_mb;
}

/* fp_point / bp_point: an op name, "" = detect automatically (seed 004). */
static void mp_apply_name(nnp_options_t *o, const mp_opt_t *d, const cJSON *v)
{
    char *dst = (char *)o + d->off;
    char got[VALUE_TEXT_CAP], want[LIST_TEXT_CAP];
    if (cJSON_IsString(v) && strlen(v->valuestring) < NNP_NAME_MAX) {
        nnp__strlcpy(dst, v->valuestring, NNP_NAME_MAX);
        return;
    }
    snprintf(want, sizeof(want), "a str of at most %d characters", NNP_NAME_MAX - 1);
    NNP_LOG_W("For '%s', the parameter %s must be %s, but got %s, it will be set to \"\" "
              "(detected automatically).",
              CTX_MSPROF, d->key, want, value_text(v, got, sizeof(got)));
    dst[0] = '\0';
}

static bool is_digit_of(char c, int base)
{
    if (c >= '0' && c <= '9')
        return true;
    return base == HEX_BASE && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'));
}

/* "Custom:0x49,0x8,..." (seed 004): 1 to 8 registers, each hex (0x..) or decimal, in
 * [0x1, 0x6E]. */
static bool custom_metrics_ok(const char *s)
{
    int count = 0;
    s += strlen(CUSTOM_PREFIX);
    for (;;) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        char tok[LIST_TEXT_CAP];
        const char *digits = tok;
        char *stop;
        int base = DEC_BASE;
        long reg;
        if (len == 0 || len >= sizeof(tok) || ++count > CUSTOM_REG_MAX_COUNT)
            return false;
        memcpy(tok, s, len);
        tok[len] = '\0';
        if (tok[0] == '0' && (tok[1] == 'x' || tok[1] == 'X')) {
            digits = tok + 2;
            base = HEX_BASE;
        }
        /* strtol would accept blanks and signs; registers have neither. */
        if (!is_digit_of(digits[0], base))
            return false;
        errno = 0;
        reg = strtol(digits, &stop, base);
        if (errno != 0 || *stop != '\0' || reg < CUSTOM_REG_MIN || reg > CUSTOM_REG_MAX)
            return false;
        if (!comma)
            return true;
        s = comma + 1;
    }
}

static bool aic_metrics_ok(const char *s)
{
    if (strlen(s) >= NNP_NAME_MAX)
        return false;
    if (lookup(aic_metrics_names, NNP_ARRAY_LEN(aic_metrics_names), s) >= 0)
        return true;
    return strncmp(s, CUSTOM_PREFIX, strlen(CUSTOM_PREFIX)) == 0 && custom_metrics_ok(s);
}

static void warn_aic_metrics(const char *got)
{
    warn_choice(CTX_MSPROF, "aic_metrics",
                "[ArithmeticUtilization, PipeUtilization, Memory, MemoryL0, MemoryUB, "
                "ResourceConflictRatio, L2Cache, Custom:<1 to 8 registers in [0x1, 0x6E]>]",
                got, "\"" DEFAULT_AIC_METRICS "\"");
}

static void mp_apply_aic(nnp_options_t *o, const cJSON *v)
{
    char got[VALUE_TEXT_CAP];
    if (cJSON_IsString(v) && aic_metrics_ok(v->valuestring)) {
        nnp__strlcpy(o->aic_metrics, v->valuestring, sizeof(o->aic_metrics));
        return;
    }
    warn_aic_metrics(value_text(v, got, sizeof(got)));
    nnp__strlcpy(o->aic_metrics, DEFAULT_AIC_METRICS, sizeof(o->aic_metrics));
}

/* host_sys / host_sys_usage: "cpu,mem", one or more items (seed 004). An unknown item is
 * dropped with a warning; the known ones still count. Blanks around items are tolerated. */
static void mp_apply_hostsys(nnp_options_t *o, const mp_opt_t *d, const cJSON *v)
{
    char got[VALUE_TEXT_CAP], item[VALUE_TEXT_CAP], shown[VALUE_TEXT_CAP];
    unsigned bits = 0;
    const char *s;
    if (!cJSON_IsString(v)) {
        warn_type(CTX_MSPROF, d->key, "a str of comma-separated cpu, mem", v, "\"\"");
        memcpy((char *)o + d->off, &bits, sizeof(bits));
        return;
    }
    /* "" selects nothing; otherwise every comma-separated item counts, empty ones too. */
    for (s = v->valuestring; *v->valuestring;) {
        const char *comma = strchr(s, ',');
        const char *b = s, *e = comma ? comma : s + strlen(s);
        bool found = false;
        size_t n;
        while (b < e && *b == ' ')
            b++;
        while (e > b && e[-1] == ' ')
            e--;
        n = (size_t)(e - b);
        for (size_t i = 0; i < NNP_ARRAY_LEN(host_sys_items); i++) {
            if (n == strlen(host_sys_items[i].name) && memcmp(b, host_sys_items[i].name, n) == 0) {
                bits |= host_sys_items[i].bit;
                found = true;
            }
        }
        if (!found) {
            n = n < sizeof(item) ? n : sizeof(item) - 1;
            memcpy(item, b, n);
            item[n] = '\0';
            NNP_LOG_W("For '%s', the parameter %s has an invalid item \"%s\" in %s, it is "
                      "ignored; valid items are cpu, mem.",
                      CTX_MSPROF, d->key, escaped(item, shown, sizeof(shown)),
                      value_text(v, got, sizeof(got)));
        }
        if (!comma)
            break;
        s = comma + 1;
    }
    memcpy((char *)o + d->off, &bits, sizeof(bits));
}

/* host_sys_usage_freq: Hz in [1, 50], default 50 (seed 004). msprof values are strings, so
 * "10" is read like 10. */
static void mp_apply_freq(nnp_options_t *o, const cJSON *v)
{
    char got[VALUE_TEXT_CAP], allowed[LIST_TEXT_CAP], def_text[DEFAULT_TEXT_CAP];
    int64_t hz = -1;
    uint64_t u;
    if (json_is_int(v))
        hz = number_to_i64(v->valuedouble);
    else if (cJSON_IsString(v) && parse_u64(v->valuestring, &u, NULL))
        hz = u > INT_MAX ? INT_MAX : (int64_t)u;
    if (hz >= HOST_SYS_USAGE_MIN_HZ && hz <= HOST_SYS_USAGE_MAX_HZ) {
        o->host_sys_usage_freq = (int)hz;
        return;
    }
    snprintf(def_text, sizeof(def_text), "%d", defaults.host_sys_usage_freq);
    warn_range(
        CTX_MSPROF, "host_sys_usage_freq",
        range_text(HOST_SYS_USAGE_MIN_HZ, HOST_SYS_USAGE_MAX_HZ, false, allowed, sizeof(allowed)),
        value_text(v, got, sizeof(got)), def_text);
    o->host_sys_usage_freq = defaults.host_sys_usage_freq;
}

static int mp_apply(nnp_options_t *o, const mp_opt_t *d, const cJSON *v, bool *path_given)
{
    switch (d->kind) {
    case MP_OUTPUT:
        return apply_path(o->output_path, CTX_MSPROF, d->key, v, path_given);
    case MP_STORAGE:
        mp_apply_storage(o, v);
        break;
    case MP_ONOFF:
    case MP_AICPU:
        mp_apply_onoff(o, d, v);
        break;
    case MP_TASK:
        mp_apply_task(o, d, v);
        break;
    case MP_NAME:
        mp_apply_name(o, d, v);
        break;
    case MP_AIC:
        mp_apply_aic(o, v);
        break;
    case MP_HOSTSYS:
        mp_apply_hostsys(o, d, v);
        break;
    case MP_FREQ:
        mp_apply_freq(o, v);
        break;
    case MP_HARDWARE:
    default:
        NNP_LOG_I("For '%s', the parameter %s is accepted but not collected on this platform.",
                  CTX_MSPROF, d->key);
        break;
    }
    return NNP_OK;
}

static int msprof_merge(nnp_options_t *o, const char *json, bool *path_given)
{
    cJSON *root, *it;
    nnp_options_t tmp;
    bool given = false;
    int rc;

    if (!o)
        return nnp__fail(NNP_EINVAL, "PROFILING_OPTIONS: NULL options");
    rc = parse_object(json, "PROFILING_OPTIONS", &root);
    if (rc != NNP_OK)
        return rc;
    tmp = *o;
    cJSON_ArrayForEach(it, root)
    {
        const mp_opt_t *d = NULL;
        for (size_t i = 0; it->string && i < NNP_ARRAY_LEN(mp_opts); i++) {
            if (strcmp(mp_opts[i].key, it->string) == 0)
                d = &mp_opts[i];
        }
        if (!d) {
            warn_unknown_key(it->string ? it->string : "");
            continue;
        }
        rc = mp_apply(&tmp, d, it, &given);
        if (rc != NNP_OK)
            goto out;
    }
    *o = tmp;
    if (path_given && given)
        *path_given = true;
out:
    cJSON_Delete(root);
    return rc;
}

int nnp_options_from_msprof_json(nnp_options_t *o, const char *json)
{
    return msprof_merge(o, json, NULL);
}

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
    if (parse_u64(s, &v, NULL) && v >= (uint64_t)min && v <= INT_MAX) {
        *dst = (int)v;
        return;
    }
    /* seed 000 _get_devid_rankid_and_devtarget's sentence, plus the value. */
    NNP_LOG_W("For 'Profiler', fail to get %s from environment (\"%s\"), use %d instead.", name,
              escaped(s, shown, sizeof(shown)), *dst);
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
                  escaped(s, shown, sizeof(shown)), NNP_NAME_MAX - 1);
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
    rc = is_msprof ? msprof_merge(o, s, path_given) : ms_merge(o, s, start, path_given);
    if (rc == NNP_EINVAL) {
        NNP_LOG_W("%s is not a valid JSON object (%s), it is ignored.", name, nnp_last_error());
        nnp__clear_error();
        return NNP_OK;
    }
    return rc;
}

int nnp_options_from_env(nnp_options_t *o, bool *enabled)
{
    nnp_options_t tmp;
    bool env_enabled = false, start = false, path_given = false;
    const char *mode, *diag;
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
    mode = getenv("PROFILING_MODE");
    if (mode && strcmp(mode, "true") == 0) {
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
            rc = check_output_path("MS_DIAGNOSTIC_DATA_PATH", diag);
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

    *o = tmp;
    if (enabled)
        *enabled = env_enabled;
    return NNP_OK;
}

/* ---- validation ---- */

/* Resets an int field set in code outside [lo, hi] to its default, or clamps it to the
 * nearest bound, with the same warning JSON input gets. */
static void fix_range(nnp_options_t *o, const char *key, int64_t lo, int64_t hi, bool clamp)
{
    const ms_opt_t *d = ms_find(key);
    char allowed[LIST_TEXT_CAP], got[DEFAULT_TEXT_CAP], set[DEFAULT_TEXT_CAP];
    int64_t v, nv;
    if (!d)
        return;
    v = int_get(o, d);
    /* Unsigned fields beyond INT64_MAX read back negative; they are above any bound. */
    if (d->width != W_INT && v < 0)
        v = INT64_MAX;
    if (v >= lo && v <= hi)
        return;
    nv = !clamp ? int_get(&defaults, d) : v < lo ? lo : hi;
    if (d->width == W_INT)
        snprintf(got, sizeof(got), "%lld", (long long)v);
    else
        snprintf(got, sizeof(got), "%llu", (unsigned long long)int_get(o, d));
    snprintf(set, sizeof(set), "%lld", (long long)nv);
    if (d->style == MSG_TIMELINE && v < lo)
        NNP_LOG_W("[Profiler]The 'timeline_limit' parameter must be greater than 0, it will be set "
                  "to %s.",
                  set);
    else
        warn_range(CTX_MS, key, range_text(lo, hi, d->style == MSG_LIST, allowed, sizeof(allowed)),
                   got, set);
    int_set(o, d, nv);
}

/* Enums and bit sets filled in code may hold anything; each falls back to its default. */
static void fix_enums(nnp_options_t *o)
{
    unsigned all_bits = NNP_HOST_SYS_CPU | NNP_HOST_SYS_MEM;
    if ((unsigned)o->profile_framework > (unsigned)NNP_FRAMEWORK_NONE) {
        NNP_LOG_W("For 'Profiler', the parameter profile_framework has the invalid value %d, it "
                  "will be set to 'all'.",
                  (int)o->profile_framework);
        o->profile_framework = defaults.profile_framework;
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
        o->task_trace = defaults.task_trace;
    }
    if ((unsigned)o->full_policy > (unsigned)NNP_FULL_BLOCK) {
        NNP_LOG_W("For 'Profiler', the parameter full_policy has the invalid value %d, it will "
                  "be set to 'drop'.",
                  (int)o->full_policy);
        o->full_policy = defaults.full_policy;
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
    rc = check_output_path("output_path", o->output_path);
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
        snprintf(def_text, sizeof(def_text), "%d", defaults.host_sys_usage_freq);
        warn_range(CTX_MSPROF, "host_sys_usage_freq",
                   range_text(HOST_SYS_USAGE_MIN_HZ, HOST_SYS_USAGE_MAX_HZ, false, allowed,
                              sizeof(allowed)),
                   got, def_text);
        o->host_sys_usage_freq = defaults.host_sys_usage_freq;
    }
    if (!aic_metrics_ok(o->aic_metrics)) {
        char shown[VALUE_TEXT_CAP], got[VALUE_TEXT_CAP];
        snprintf(got, sizeof(got), "\"%s\"", escaped(o->aic_metrics, shown, sizeof(shown)));
        warn_aic_metrics(got);
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
        warn_needs_op_time("profile_memory");
    if (!o->op_time && o->profile_communication)
        warn_needs_op_time("profile_communication");

    /* seed 004 host_sys_usage_freq drives the system sampler unless an explicit interval
     * was chosen. */
    if (o->host_sys_usage && o->sample_interval_ms == defaults.sample_interval_ms)
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
    for (size_t i = 0; i < NNP_ARRAY_LEN(host_sys_items); i++) {
        if (bits & host_sys_items[i].bit)
            n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? "," : "",
                                  host_sys_items[i].name);
    }
    nnp__jw_key(w, key);
    nnp__jw_str(w, buf);
}

static void write_options(nnp_jw_t *w, const nnp_options_t *o)
{
    char storage[LIST_TEXT_CAP] = "";

    nnp__jw_obj_begin(w);
    /* MindSpore options, with their Profiler() keyword names (seed 000). */
    for (size_t i = 0; i < NNP_ARRAY_LEN(ms_opts); i++) {
        const ms_opt_t *d = &ms_opts[i];
        switch (d->kind) {
        case MS_BOOL:
            nnp__jw_key(w, d->key);
            nnp__jw_bool(w, bool_get(o, d->off));
            break;
        case MS_INT:
            nnp__jw_key(w, d->key);
            if (d->width == W_INT)
                nnp__jw_int(w, int_get(o, d));
            else
                nnp__jw_uint(w, (uint64_t)int_get(o, d));
            break;
        case MS_PATH:
            jw_field(w, d->key, o->output_path, sizeof(o->output_path));
            break;
        case MS_FRAMEWORK:
            jw_name(w, d->key, framework_names, NNP_ARRAY_LEN(framework_names),
                    (int)o->profile_framework);
            break;
        case MS_LEVEL:
            jw_name(w, d->key, level_names, NNP_ARRAY_LEN(level_names), (int)o->profiler_level);
            break;
        case MS_POLICY:
            jw_name(w, d->key, policy_names, NNP_ARRAY_LEN(policy_names), (int)o->full_policy);
            break;
        case MS_START:
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
    nnp__jw_str(w, on_off(o->training_trace));
    jw_name(w, "task_trace", task_trace_names, NNP_ARRAY_LEN(task_trace_names), (int)o->task_trace);
    nnp__jw_key(w, "hccl");
    nnp__jw_str(w, on_off(o->hccl));
    nnp__jw_key(w, "aicpu");
    nnp__jw_str(w, on_off(o->aicpu));
    jw_field(w, "fp_point", o->fp_point, sizeof(o->fp_point));
    jw_field(w, "bp_point", o->bp_point, sizeof(o->bp_point));
    jw_field(w, "aic_metrics", o->aic_metrics, sizeof(o->aic_metrics));
    nnp__jw_key(w, "msproftx");
    nnp__jw_str(w, on_off(o->msproftx));
    nnp__jw_key(w, "runtime_api");
    nnp__jw_str(w, on_off(o->runtime_api));
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
