/* raw_info.c - see raw_info.h. info.json is a few KiB written by the session
 * (src/core/session.c); every number is checked for type and range before it becomes an
 * integer (a hand-edited "rank_id": 1e300 is refused with its file, key and value, never
 * converted). */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "read/json_num.h"
#include "read/raw_info.h"
#include "util/util.h"

/* info.json is a few KiB; the cap only guards against a hostile file. */
#define INFO_JSON_MAX (16u * 1024u * 1024u)
#define MB            (1024ull * 1024ull)
#define META_FILE     "meta.nnp"
/* Ranges of the numbers read (docs/FORMAT.md). pids fit pid_t; CPU and tick counts are
 * far above any machine's; times are CLOCK_MONOTONIC / wall ns or us (< 2^62). */
#define MAX_ID               INT32_MAX
#define MAX_CPUS             (1 << 20)
#define MAX_CLOCK_TICKS      1000000000
#define MAX_TICK_RATE_HZ     1000000000000LL
#define MAX_TIME             (INT64_C(1) << 62)
#define DEFAULT_CLOCK_TICKS  100
#define DEFAULT_TIMELINE_MB  500
#define MAX_TIMELINE_MB      (1 << 24)
#define PROF_NAME_PREFIX     "PROF_"
#define PROF_NAME_PREFIX_LEN 5

static char *dup_str(const cJSON *o, const char *key, const char *dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return nnp__strdup(cJSON_IsString(v) ? v->valuestring : dflt);
}

static void copy_str(const cJSON *o, const char *key, char *dst, size_t cap)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    nnp__strlcpy(dst, cJSON_IsString(v) ? v->valuestring : "", cap);
}

/* Reads path as a JSON object; NULL (and why) when missing, unreadable or not an object. */
static cJSON *load(const char *path, char *why, size_t cap)
{
    char *text = NULL;
    cJSON *j;
    if (nnp__read_file(path, INFO_JSON_MAX, &text, NULL) != NNP_OK) {
        nnp__strlcpy(why, nnp_last_error(), cap);
        return NULL;
    }
    j = cJSON_Parse(text);
    nnp__free(text);
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        nnp__strlcpy(why, "not a JSON object", cap);
        return NULL;
    }
    return j;
}

/* The pid ending a raw directory's name PROF_<time>_<host>_<pid>, or -1. */
static int64_t pid_from_name(const char *name)
{
    const char *us = strrchr(name, '_');
    int64_t v = 0;
    if (strncmp(name, PROF_NAME_PREFIX, PROF_NAME_PREFIX_LEN) != 0 || !us || !us[1])
        return -1;
    for (const char *p = us + 1; *p; p++) {
        if (*p < '0' || *p > '9' || v > MAX_ID / 10)
            return -1;
        v = v * 10 + (*p - '0');
    }
    return v > 0 ? v : -1;
}

int nnp__raw_desc_read(const char *dir, nnp_raw_desc_t *d)
{
    char path[NNP_PATH_MAX];
    struct stat st;
    const char *slash;
    cJSON *j;
    int64_t v;
    size_t len;

    memset(d, 0, sizeof(*d));
    if (strlen(dir) >= NNP_PATH_MAX)
        return nnp__fail(NNP_ETOOLONG, "path too long: %s", dir);
    d->path = nnp__strdup(dir);
    if (!d->path)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    len = strlen(d->path);
    while (len > 1 && d->path[len - 1] == '/')
        d->path[--len] = '\0';
    slash = strrchr(d->path, '/');
    d->name = slash ? slash + 1 : d->path;
    d->rank_id = d->device_id = -1;
    d->pid = d->parent_pid = -1;
    d->has_meta = nnp__path_join(path, sizeof(path), d->path, META_FILE) == NNP_OK &&
                  stat(path, &st) == 0 && S_ISREG(st.st_mode);
    if (nnp__path_join(path, sizeof(path), d->path, NNP_RAW_INFO_FILE) != NNP_OK)
        return nnp__fail(NNP_ETOOLONG, "path too long: %s", d->path);
    j = load(path, d->why_no_info, sizeof(d->why_no_info));
    d->pid = pid_from_name(d->name);
    if (!j)
        return NNP_OK;
    d->has_info = true;
    /* Quiet (file NULL): the importer names bad values when it reads the same file. */
    if (nnp__json_int(j, "rank_id", NULL, 0, MAX_ID, NULL, &v) == NNP_JSON_NUM_OK)
        d->rank_id = (int)v;
    if (nnp__json_int(j, "device_id", NULL, 0, MAX_ID, NULL, &v) == NNP_JSON_NUM_OK)
        d->device_id = (int)v;
    if (nnp__json_int(j, "rank_size", NULL, 1, MAX_ID, NULL, &v) == NNP_JSON_NUM_OK)
        d->rank_size = (int)v;
    if (nnp__json_int(j, "pid", NULL, 1, MAX_ID, NULL, &v) == NNP_JSON_NUM_OK)
        d->pid = v;
    if (nnp__json_int(j, "parent_pid", NULL, 1, MAX_ID, NULL, &v) == NNP_JSON_NUM_OK)
        d->parent_pid = v;
    copy_str(j, "parent_raw_dir", d->parent_raw_dir, sizeof(d->parent_raw_dir));
    copy_str(j, "child_kind", d->child_kind, sizeof(d->child_kind));
    /* A basename only: a path in it would let a child point outside its folder. */
    if (strchr(d->parent_raw_dir, '/') || strcmp(d->parent_raw_dir, ".") == 0 ||
        strcmp(d->parent_raw_dir, "..") == 0)
        d->parent_raw_dir[0] = '\0';
    cJSON_Delete(j);
    return NNP_OK;
}

void nnp__raw_desc_fini(nnp_raw_desc_t *d)
{
    nnp__free(d->path);
    d->path = NULL;
    d->name = NULL;
}

static int64_t get(const cJSON *o, const char *key, const char *label, int64_t lo, int64_t hi,
                   int64_t dflt, const char *file)
{
    int64_t v;
    return nnp__json_int(o, key, label, lo, hi, file, &v) == NNP_JSON_NUM_OK ? v : dflt;
}

static int read_windows(const cJSON *wins, nnp_run_info_t *info, const char *file)
{
    const cJSON *w;
    int n = cJSON_GetArraySize(wins);
    if (n <= 0)
        return NNP_OK;
    info->windows = nnp__calloc((size_t)n, sizeof(nnp_window_t));
    if (!info->windows)
        return NNP_ENOMEM;
    cJSON_ArrayForEach(w, wins)
    {
        nnp_window_t *dst = &info->windows[info->n_windows++];
        dst->start_ns = get(w, "start_mono_ns", "windows[].start_mono_ns", 0, MAX_TIME, 0, file);
        dst->stop_ns =
            get(w, "stop_mono_ns", "windows[].stop_mono_ns", 0, MAX_TIME, NNP_OPEN_END, file);
    }
    return NNP_OK;
}

/* A clock offset is a whole number of ns within +-2^53 (exact in a double, and a quarter of
 * a year past any real offset). */
#define CLOCK_SYNC_MAX_NS (INT64_C(1) << 53)

/* clock_sync (docs/MPI.md), when a back end measured it (method other than "none"). */
static void read_clock_sync(const cJSON *j, nnp_run_info_t *info, const char *file)
{
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(j, "clock_sync");
    const cJSON *method = cJSON_GetObjectItemCaseSensitive(cs, "method");
    int64_t off, unc;
    info->has_clock_sync =
        cJSON_IsString(method) && strcmp(method->valuestring, "none") != 0 &&
        nnp__json_int(cs, "offset_ns", "clock_sync.offset_ns", -CLOCK_SYNC_MAX_NS,
                      CLOCK_SYNC_MAX_NS, file, &off) == NNP_JSON_NUM_OK &&
        nnp__json_int(cs, "uncertainty_ns", "clock_sync.uncertainty_ns", 0, CLOCK_SYNC_MAX_NS, file,
                      &unc) == NNP_JSON_NUM_OK;
    info->clock_offset_ns = info->has_clock_sync ? off : 0;
    info->clock_uncertainty_ns = info->has_clock_sync ? unc : 0;
}

static int defaults(nnp_run_info_t *info)
{
    info->options_json = nnp__strdup("{}");
    info->state = nnp__strdup("unknown");
    info->host = nnp__strdup("");
    info->fp_point = nnp__strdup("");
    info->bp_point = nnp__strdup("");
    info->rank_size = 1;
    info->clock_ticks_per_sec = DEFAULT_CLOCK_TICKS;
    info->ncpu = 1;
    info->timeline_limit_bytes = DEFAULT_TIMELINE_MB * MB;
    return info->options_json && info->state && info->host && info->fp_point && info->bp_point
               ? NNP_OK
               : NNP_ENOMEM;
}

int nnp__raw_info_read(const char *raw_dir, nnp_run_info_t *info, nnp_raw_clock_info_t *clk)
{
    char path[NNP_PATH_MAX], why[NNP_NAME_MAX];
    const cJSON *opts, *plat, *src;
    cJSON *j;
    int rc;

    memset(clk, 0, sizeof(*clk));
    clk->first_window_ns = -1;
    rc = nnp__path_join(path, sizeof(path), raw_dir, NNP_RAW_INFO_FILE);
    if (rc != NNP_OK)
        return rc;
    j = load(path, why, sizeof(why));
    if (!j) {
        NNP_LOG_W("%s: %s; rank, device and options unknown", path, why);
        return defaults(info);
    }
    info->rank_id = (int)get(j, "rank_id", NULL, 0, MAX_ID, 0, path);
    info->device_id = (int)get(j, "device_id", NULL, 0, MAX_ID, 0, path);
    info->rank_size = (int)get(j, "rank_size", NULL, 1, MAX_ID, 1, path);
    info->pid = get(j, "pid", NULL, 1, MAX_ID, 0, path);
    info->parent_pid = get(j, "parent_pid", NULL, 1, MAX_ID, 0, path);
    info->start_wall_us = get(j, "start_time_us", NULL, 0, MAX_TIME, 0, path);
    info->diff_time_us = get(j, "diff_time", NULL, -MAX_TIME, MAX_TIME, 0, path);
    info->host = dup_str(j, "host", "");
    info->state = dup_str(j, "state", "unknown");
    read_clock_sync(j, info, path);
    plat = cJSON_GetObjectItemCaseSensitive(j, "platform");
    info->clock_ticks_per_sec = get(plat, "clock_ticks_per_sec", "platform.clock_ticks_per_sec", 1,
                                    MAX_CLOCK_TICKS, DEFAULT_CLOCK_TICKS, path);
    info->ncpu = (int)get(plat, "cpus", "platform.cpus", 1, MAX_CPUS, 1, path);
    clk->tick_rate_hz =
        get(plat, "tick_rate_hz", "platform.tick_rate_hz", 1, MAX_TICK_RATE_HZ, 0, path);
    src = cJSON_GetObjectItemCaseSensitive(plat, "tick_source");
    clk->ticks_are_ns = cJSON_IsString(src) && strcmp(src->valuestring, "monotonic") == 0;
    opts = cJSON_GetObjectItemCaseSensitive(j, "options");
    info->options_json = cJSON_IsObject(opts) ? cJSON_PrintUnformatted(opts) : NULL;
    if (info->options_json) {
        /* cJSON allocates with malloc: move it to our allocator. */
        char *copy = nnp__strdup(info->options_json);
        cJSON_free(info->options_json);
        info->options_json = copy;
    } else {
        info->options_json = nnp__strdup("{}");
    }
    info->fp_point = dup_str(opts, "fp_point", "");
    info->bp_point = dup_str(opts, "bp_point", "");
    info->timeline_limit_bytes = (uint64_t)get(opts, "timeline_limit", "options.timeline_limit", 1,
                                               MAX_TIMELINE_MB, DEFAULT_TIMELINE_MB, path) *
                                 MB;
    rc = cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, "windows"))
             ? read_windows(cJSON_GetObjectItemCaseSensitive(j, "windows"), info, path)
             : NNP_OK;
    if (info->n_windows)
        clk->first_window_ns = info->windows[0].start_ns;
    cJSON_Delete(j);
    if (rc != NNP_OK || !info->host || !info->state || !info->options_json || !info->fp_point ||
        !info->bp_point)
        return nnp__fail(NNP_ENOMEM, "out of memory reading %s", path);
    return NNP_OK;
}
