/* options_common.h - internal to the option files (options*.c): the nnp__opt_defaults and limits
 * with the seed behind each, the enum spellings, the MindSpore key table, and the helpers and
 * warnings every dialect shares. Nothing outside src/core/options*.c includes it; the rest
 * of the library uses the public nnp_options_* API and options_internal.h. */
#ifndef NNP_OPTIONS_COMMON_H
#define NNP_OPTIONS_COMMON_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nnprof/nnprof.h"
#include "util/util.h"

/* ---- nnp__opt_defaults and limits; the seed behind each is named ---- */

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
/* to_json's worst case is every byte of output_path and the three names nnp__opt_escaped as
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
extern const nnp_options_t nnp__opt_defaults;

/* String spellings of the enums, indexed by value (NULL: no spelling). */
#define NNP_OPT_FRAMEWORK_NAMES   4
#define NNP_OPT_LEVEL_NAMES       4
#define NNP_OPT_TASK_TRACE_NAMES  4
#define NNP_OPT_POLICY_NAMES      3
#define NNP_OPT_AIC_METRICS_NAMES 7
#define NNP_OPT_HOST_SYS_ITEMS    2
extern const char *const nnp__opt_framework_names[NNP_OPT_FRAMEWORK_NAMES];
extern const char *const nnp__opt_level_names[NNP_OPT_LEVEL_NAMES];
extern const char *const nnp__opt_task_trace_names[NNP_OPT_TASK_TRACE_NAMES];
extern const char *const nnp__opt_policy_names[NNP_OPT_POLICY_NAMES];
extern const char *const nnp__opt_aic_metrics_names[NNP_OPT_AIC_METRICS_NAMES];
typedef struct nnp_opt_host_sys_item {
    unsigned bit;
    const char *name;
} nnp_opt_host_sys_item_t;
extern const nnp_opt_host_sys_item_t nnp__opt_host_sys_items[NNP_OPT_HOST_SYS_ITEMS];

/* ---- the MindSpore key table (options_ms.c), read by validation and the JSON form ---- */

typedef enum nnp_ms_kind {
    NNP_MS_START, /* "start": goes to *start, not to the struct (seed 001) */
    NNP_MS_BOOL,
    NNP_MS_INT,
    NNP_MS_PATH,
    NNP_MS_FRAMEWORK,
    NNP_MS_LEVEL, /* applied after every other key: it overrides them (seed 000) */
    NNP_MS_POLICY
} nnp_ms_kind_t;

/* Storage of an integer field. */
typedef enum nnp_opt_width { NNP_OPT_W_INT, NNP_OPT_W_SIZE, NNP_OPT_W_U64 } nnp_opt_width_t;

/* Sentence shape of an option's bad-value warning. */
typedef enum nnp_opt_msg {
    NNP_OPT_MSG_PLAIN,    /* nnp__opt_warn_type / nnp__opt_warn_range */
    NNP_OPT_MSG_INVALID,  /* sync_enable: "The parameter sync_enable is an invalid value" (seed 000
                             GPU) */
    NNP_OPT_MSG_TIMELINE, /* timeline_limit <= 0: the fixed sentence of _parser_kwargs */
    NNP_OPT_MSG_LIST      /* aicore_metrics: range written as the full list */
} nnp_opt_msg_t;

typedef struct nnp_ms_opt {
    const char *key;
    nnp_ms_kind_t kind;
    size_t off;
    nnp_opt_width_t width;
    int64_t min, max;
    bool needs_op_time; /* not in seed 000 ALWAYS_VALID_PARAM */
    nnp_opt_msg_t style;
} nnp_ms_opt_t;

#define NNP_OPT_FLD(f) offsetof(nnp_options_t, f)

/* Every key nnp_options_from_json() knows, in to_json order. */
#define NNP_OPT_MS_COUNT 29
extern const nnp_ms_opt_t nnp__opt_ms_opts[NNP_OPT_MS_COUNT];
/* The table entry of a MindSpore key, or NULL. */
const nnp_ms_opt_t *nnp__opt_ms_find(const char *key);

/* ---- helpers (options_common.c) ---- */

/* Copies s into buf with control characters written as C escapes, so a key or path with a
 * newline still logs as one line; cut with "..." past cap. Returns buf. */
const char *nnp__opt_escaped(const char *s, char *buf, size_t cap);
/* A JSON value as JSON text for messages, e.g. "yes" with its quotes, cut with "...". */
const char *nnp__opt_value_text(const cJSON *v, char *buf, size_t cap);
/* True for a JSON number that is an integer (as Python's json reads it). */
bool nnp__opt_json_is_int(const cJSON *v);
/* d saturated to the int64_t range. */
int64_t nnp__opt_number_to_i64(double d);
/* The Python type the seed's message would name for a JSON value (json.loads mapping). */
const char *nnp__opt_py_type(const cJSON *v);
/* Strict unsigned decimal: digits only, no overflow. *end receives where the digits stop;
 * with end == NULL the whole string must be digits. */
bool nnp__opt_parse_u64(const char *s, uint64_t *out, const char **end);
/* Index of s in names[0..n), or -1. */
int nnp__opt_lookup(const char *const names[], size_t n, const char *s);
const char *nnp__opt_on_off(bool b);

/* ---- the warnings, in the seeds' sentence shapes (options_common.c) ---- */
void nnp__opt_warn_type(const char *ctx, const char *key, const char *want, const cJSON *v,
                        const char *def);
void nnp__opt_warn_range(const char *ctx, const char *key, const char *allowed, const char *got,
                         const char *def);
void nnp__opt_warn_choice(const char *ctx, const char *key, const char *allowed, const char *got,
                          const char *def);
void nnp__opt_warn_needs_op_time(const char *key);
void nnp__opt_warn_unknown_key(const char *key);
/* "[lo, hi]" for range messages; "[-1, 0, 1, ..., 6]" when list_all. Returns buf. */
const char *nnp__opt_range_text(int64_t lo, int64_t hi, bool list_all, char *buf, size_t cap);

/* The one check every output path goes through; what names its option or variable. */
int nnp__opt_check_output_path(const char *what, const char *s);
/* output_path / output from JSON: null = not given; *given set for any other value. */
int nnp__opt_apply_path(char *dst, const char *ctx, const char *key, const cJSON *v, bool *given);
/* Parses json into a new tree; NNP_EINVAL (with where it broke) unless it is an object. */
int nnp__opt_parse_object(const char *json, const char *what, cJSON **out);

/* Fields reached by table offset; memcpy keeps it alias-safe. */
bool nnp__opt_bool_get(const nnp_options_t *o, size_t off);
void nnp__opt_bool_set(nnp_options_t *o, size_t off, bool b);
int64_t nnp__opt_int_get(const nnp_options_t *o, const nnp_ms_opt_t *d);
void nnp__opt_int_set(nnp_options_t *o, const nnp_ms_opt_t *d, int64_t v);

/* ---- the dialects' parsers, for the environment (options_env.c) ---- */

/* nnp_options_from_json() that also reports a non-null output_path in *path_given (for
 * MS_DIAGNOSTIC_DATA_PATH). *o, *start and *path_given are written only on success. */
int nnp__opt_ms_merge(nnp_options_t *o, const char *json, bool *start, bool *path_given);
/* nnp_options_from_msprof_json() with the same *path_given report. */
int nnp__opt_msprof_merge(nnp_options_t *o, const char *json, bool *path_given);
/* aic_metrics: a seed 004 name or "Custom:<registers>" (options_msprof.c). */
bool nnp__opt_aic_metrics_ok(const char *s);
void nnp__opt_warn_aic_metrics(const char *got);

#endif /* NNP_OPTIONS_COMMON_H */
