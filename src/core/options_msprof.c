/* options_msprof.c - msprof PROFILING_OPTIONS (seed 004): the key table, one parser per
 * value shape (on/off, task_trace, storage_limit, aic_metrics, host_sys, ...) and
 * nnp_options_from_msprof_json(). A bad value costs a warning and falls back to its default. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/options_common.h"

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
    {"output", MP_OUTPUT, NNP_OPT_FLD(output_path)},
    {"storage_limit", MP_STORAGE, NNP_OPT_FLD(storage_limit_mb)},
    {"training_trace", MP_ONOFF, NNP_OPT_FLD(training_trace)},
    {"task_trace", MP_TASK, NNP_OPT_FLD(task_trace)},
    {"task_time", MP_TASK, NNP_OPT_FLD(task_trace)},
    {"hccl", MP_ONOFF, NNP_OPT_FLD(hccl)},
    {"aicpu", MP_AICPU, NNP_OPT_FLD(aicpu)},
    {"fp_point", MP_NAME, NNP_OPT_FLD(fp_point)},
    {"bp_point", MP_NAME, NNP_OPT_FLD(bp_point)},
    {"aic_metrics", MP_AIC, NNP_OPT_FLD(aic_metrics)},
    {"l2", MP_ONOFF, NNP_OPT_FLD(l2_cache)},
    {"msproftx", MP_ONOFF, NNP_OPT_FLD(msproftx)},
    {"runtime_api", MP_ONOFF, NNP_OPT_FLD(runtime_api)},
    {"host_sys", MP_HOSTSYS, NNP_OPT_FLD(host_sys)},
    {"host_sys_usage", MP_HOSTSYS, NNP_OPT_FLD(host_sys_usage)},
    {"host_sys_usage_freq", MP_FREQ, NNP_OPT_FLD(host_sys_usage_freq)},
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
    bool def = d->kind == MP_AICPU ? false : nnp__opt_bool_get(&nnp__opt_defaults, d->off);
    char got[VALUE_TEXT_CAP], def_text[DEFAULT_TEXT_CAP];
    if (cJSON_IsString(v) &&
        (strcmp(v->valuestring, "on") == 0 || strcmp(v->valuestring, "off") == 0)) {
        nnp__opt_bool_set(o, d->off, strcmp(v->valuestring, "on") == 0);
        return;
    }
    snprintf(def_text, sizeof(def_text), "\"%s\"", nnp__opt_on_off(def));
    nnp__opt_warn_choice(CTX_MSPROF, d->key, "[\"on\", \"off\"]",
                         nnp__opt_value_text(v, got, sizeof(got)), def_text);
    nnp__opt_bool_set(o, d->off, def);
}

/* task_trace / task_time: on | off | l0 | l1, on being the default (seed 004). */
static void mp_apply_task(nnp_options_t *o, const mp_opt_t *d, const cJSON *v)
{
    char got[VALUE_TEXT_CAP];
    int i = -1;
    if (cJSON_IsString(v))
        i = nnp__opt_lookup(nnp__opt_task_trace_names, NNP_ARRAY_LEN(nnp__opt_task_trace_names),
                            v->valuestring);
    if (i >= 0) {
        o->task_trace = (nnp_task_trace_t)i;
        return;
    }
    nnp__opt_warn_choice(CTX_MSPROF, d->key, "[\"on\", \"off\", \"l0\", \"l1\"]",
                         nnp__opt_value_text(v, got, sizeof(got)), "\"on\"");
    o->task_trace = nnp__opt_defaults.task_trace;
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
        if (nnp__opt_parse_u64(s, &mb, &end) && strcmp(end, STORAGE_LIMIT_UNIT) == 0 &&
            mb >= STORAGE_LIMIT_MIN_MB && mb <= STORAGE_LIMIT_MAX_MB) {
            o->storage_limit_mb = mb;
            return;
        }
    }
    snprintf(allowed, sizeof(allowed), "[%lluMB, %lluMB]", STORAGE_LIMIT_MIN_MB,
             STORAGE_LIMIT_MAX_MB);
    nnp__opt_warn_range(CTX_MSPROF, "storage_limit", allowed,
                        nnp__opt_value_text(v, got, sizeof(got)),
                        "\"\" (90% of the free disk space)");
    o->storage_limit_mb = nnp__opt_defaults.storage_limit_mb;
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
              CTX_MSPROF, d->key, want, nnp__opt_value_text(v, got, sizeof(got)));
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

bool nnp__opt_aic_metrics_ok(const char *s)
{
    if (strlen(s) >= NNP_NAME_MAX)
        return false;
    if (nnp__opt_lookup(nnp__opt_aic_metrics_names, NNP_ARRAY_LEN(nnp__opt_aic_metrics_names), s) >=
        0)
        return true;
    return strncmp(s, CUSTOM_PREFIX, strlen(CUSTOM_PREFIX)) == 0 && custom_metrics_ok(s);
}

void nnp__opt_warn_aic_metrics(const char *got)
{
    nnp__opt_warn_choice(
        CTX_MSPROF, "aic_metrics",
        "[ArithmeticUtilization, PipeUtilization, Memory, MemoryL0, MemoryUB, "
        "ResourceConflictRatio, L2Cache, Custom:<1 to 8 registers in [0x1, 0x6E]>]",
        got, "\"" DEFAULT_AIC_METRICS "\"");
}

static void mp_apply_aic(nnp_options_t *o, const cJSON *v)
{
    char got[VALUE_TEXT_CAP];
    if (cJSON_IsString(v) && nnp__opt_aic_metrics_ok(v->valuestring)) {
        nnp__strlcpy(o->aic_metrics, v->valuestring, sizeof(o->aic_metrics));
        return;
    }
    nnp__opt_warn_aic_metrics(nnp__opt_value_text(v, got, sizeof(got)));
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
        nnp__opt_warn_type(CTX_MSPROF, d->key, "a str of comma-separated cpu, mem", v, "\"\"");
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
        for (size_t i = 0; i < NNP_ARRAY_LEN(nnp__opt_host_sys_items); i++) {
            if (n == strlen(nnp__opt_host_sys_items[i].name) &&
                memcmp(b, nnp__opt_host_sys_items[i].name, n) == 0) {
                bits |= nnp__opt_host_sys_items[i].bit;
                found = true;
            }
        }
        if (!found) {
            n = n < sizeof(item) ? n : sizeof(item) - 1;
            memcpy(item, b, n);
            item[n] = '\0';
            NNP_LOG_W("For '%s', the parameter %s has an invalid item \"%s\" in %s, it is "
                      "ignored; valid items are cpu, mem.",
                      CTX_MSPROF, d->key, nnp__opt_escaped(item, shown, sizeof(shown)),
                      nnp__opt_value_text(v, got, sizeof(got)));
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
    if (nnp__opt_json_is_int(v))
        hz = nnp__opt_number_to_i64(v->valuedouble);
    else if (cJSON_IsString(v) && nnp__opt_parse_u64(v->valuestring, &u, NULL))
        hz = u > INT_MAX ? INT_MAX : (int64_t)u;
    if (hz >= HOST_SYS_USAGE_MIN_HZ && hz <= HOST_SYS_USAGE_MAX_HZ) {
        o->host_sys_usage_freq = (int)hz;
        return;
    }
    snprintf(def_text, sizeof(def_text), "%d", nnp__opt_defaults.host_sys_usage_freq);
    nnp__opt_warn_range(CTX_MSPROF, "host_sys_usage_freq",
                        nnp__opt_range_text(HOST_SYS_USAGE_MIN_HZ, HOST_SYS_USAGE_MAX_HZ, false,
                                            allowed, sizeof(allowed)),
                        nnp__opt_value_text(v, got, sizeof(got)), def_text);
    o->host_sys_usage_freq = nnp__opt_defaults.host_sys_usage_freq;
}

static int mp_apply(nnp_options_t *o, const mp_opt_t *d, const cJSON *v, bool *path_given)
{
    switch (d->kind) {
    case MP_OUTPUT:
        return nnp__opt_apply_path(o->output_path, CTX_MSPROF, d->key, v, path_given);
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

int nnp__opt_msprof_merge(nnp_options_t *o, const char *json, bool *path_given)
{
    cJSON *root, *it;
    nnp_options_t tmp;
    bool given = false;
    int rc;

    if (!o)
        return nnp__fail(NNP_EINVAL, "PROFILING_OPTIONS: NULL options");
    rc = nnp__opt_parse_object(json, "PROFILING_OPTIONS", &root);
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
            nnp__opt_warn_unknown_key(it->string ? it->string : "");
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
    return nnp__opt_msprof_merge(o, json, NULL);
}
