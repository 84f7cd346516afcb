/* session.c - the session lifecycle: create (directories, writer, sampler) -> start/stop
 * windows -> destroy, and info.json. One session per process (MindSpore's Profiler is a
 * singleton too); recording calls reach it through the global nnp__collecting flag, so
 * they never need the handle. Error texts follow the seed (000 Profiler.start/stop). */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "collect/collector.h"
#include "collect/sampler.h"
#include "core/clock.h"
#include "core/options_internal.h"
#include "core/session.h"
#include "record/tbuf.h"
#include "record/writer.h"
#include "util/json_writer.h"
#include "util/util.h"

/* Storage default when neither storage_limit option is set: 90 % of the free space of
 * the output disk (seed 004). */
#define DEFAULT_STORAGE_PERCENT 90
#define MB                      (1024ull * 1024ull)
#define KB                      1024ull
/* info.json is small; the cap only guards against a runaway number of windows. */
#define INFO_JSON_CAP (16u * 1024u * 1024u)
/* Windows kept for info.json; later ones are counted but not listed. */
#define MAX_WINDOWS   100000u
#define HOST_NAME_CAP 256
/* Names of collector back ends listed in info.json (the registry holds at most 16). */
#define MAX_COLLECTOR_NAMES 16
/* A "created" raw directory this recent belongs to a rank started with us, not to an old
 * run: ranks of one job start within seconds; ten minutes leaves room for slow launches. */
#define CONCURRENT_START_US (10ull * 60ull * 1000000ull)

typedef struct window {
    uint64_t start_wall_ns, start_mono_ns;
    uint64_t stop_wall_ns, stop_mono_ns;
} window_t;

struct nnp_session {
    nnp_options_t opts;
    char profiler_dir[NNP_PATH_MAX];
    char raw_dir[NNP_PATH_MAX];
    char host[HOST_NAME_CAP];
    nnp_writer_t *writer;
    nnp_sampler_t *sampler;
    bool started;
    bool from_env;
    int gates; /* NNP_GATE_* bits of the options, published when a window opens */
    uint64_t create_wall_ns, create_mono_ns;
    window_t *windows;
    uint32_t n_windows, windows_cap;
    uint64_t windows_total;
};

static _Atomic(nnp_session_t *) g_session;
static nnp_session_t *env_session;

static uint64_t storage_limit(const nnp_options_t *o, const char *dir)
{
    if (o->storage_limit_bytes)
        return o->storage_limit_bytes;
    if (o->storage_limit_mb)
        return o->storage_limit_mb * MB;
    return nnp__fs_free_bytes(dir) / 100 * DEFAULT_STORAGE_PERCENT;
}

/* A PROF_* directory of a session running now (another rank started with us): its
 * info.json says "created" and it started less than CONCURRENT_START_US ago. */
static bool is_concurrent_run(const char *profiler_dir, const char *name, uint64_t now_us)
{
    char path[NNP_PATH_MAX], *text = NULL;
    cJSON *j;
    bool running = false;
    if (snprintf(path, sizeof(path), "%s/%s/%s", profiler_dir, name, NNP_INFO_FILE) >=
            (int)sizeof(path) ||
        nnp__read_file(path, INFO_JSON_CAP, &text, NULL) != NNP_OK)
        return false;
    j = cJSON_Parse(text);
    nnp__free(text);
    if (cJSON_IsObject(j)) {
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "state");
        const cJSON *t0 = cJSON_GetObjectItemCaseSensitive(j, "start_time_us");
        running = cJSON_IsString(st) && strcmp(st->valuestring, "created") == 0 &&
                  cJSON_IsNumber(t0) && t0->valuedouble + CONCURRENT_START_US >= (double)now_us;
    }
    cJSON_Delete(j);
    return running;
}

/* True when the profiler directory holds data of an earlier run (the seed's "old data may
 * be rewritten" case): anything but the raw directories of ranks running right now. */
static bool has_old_data(const char *profiler_dir, uint64_t now_us)
{
    DIR *d = opendir(profiler_dir);
    struct dirent *e;
    bool old = false;
    if (!d)
        return false;
    while (!old && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        old = strncmp(e->d_name, NNP_RAW_DIR_PREFIX, strlen(NNP_RAW_DIR_PREFIX)) != 0 ||
              !is_concurrent_run(profiler_dir, e->d_name, now_us);
    }
    closedir(d);
    return old;
}

/* Creates <output>/profiler (0700) and this process's PROF_<time>_<host>_<pid>/. */
static int make_dirs(nnp_session_t *s)
{
    struct stat st;
    char name[NNP_PATH_MAX];
    struct tm tm;
    time_t secs = (time_t)(s->create_wall_ns / NNP_NS_PER_SEC);
    unsigned ms = (unsigned)(s->create_wall_ns / 1000000u % 1000u);
    int rc;

    rc = nnp__path_join(s->profiler_dir, sizeof(s->profiler_dir), s->opts.output_path, "profiler");
    if (rc != NNP_OK)
        return rc;
    if (stat(s->profiler_dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return nnp__fail(NNP_EPATH, "'%s' exists and is not a directory", s->profiler_dir);
        if (has_old_data(s->profiler_dir, s->create_wall_ns / 1000))
            NNP_LOG_W("The target dir already exists. There may be some old profiling data, and "
                      "they will be rewritten in the end. (%s)",
                      s->profiler_dir);
    } else {
        rc = nnp__mkdir_p(s->profiler_dir, 0700);
        if (rc != NNP_OK)
            return rc;
        chmod(s->profiler_dir, 0700);
    }
    localtime_r(&secs, &tm);
    for (int attempt = 0;; attempt++) {
        int n = snprintf(name, sizeof(name), "%s%04d%02d%02d%02d%02d%02d%03u_%s_%ld%s%.0d",
                         NNP_RAW_DIR_PREFIX, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                         tm.tm_hour, tm.tm_min, tm.tm_sec, ms, s->host, (long)getpid(),
                         attempt ? "_" : "", attempt);
        if (n < 0 || (size_t)n >= sizeof(name))
            return nnp__fail(NNP_ETOOLONG, "raw directory name too long");
        rc = nnp__path_join(s->raw_dir, sizeof(s->raw_dir), s->profiler_dir, name);
        if (rc != NNP_OK)
            return rc;
        if (mkdir(s->raw_dir, 0700) == 0)
            return NNP_OK;
        if (errno != EEXIST || attempt > 100)
            return nnp__fail(nnp__from_errno(errno), "cannot create '%s': %s", s->raw_dir,
                             strerror(errno));
    }
}

static void write_stats(nnp_jw_t *w, const nnp_stats_t *st)
{
    nnp__jw_key(w, "stats");
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "events_recorded");
    nnp__jw_uint(w, st->events_recorded);
    nnp__jw_key(w, "events_dropped");
    nnp__jw_uint(w, st->events_dropped);
    nnp__jw_key(w, "bytes_raw");
    nnp__jw_uint(w, st->bytes_raw);
    nnp__jw_key(w, "bytes_written");
    nnp__jw_uint(w, st->bytes_written);
    nnp__jw_key(w, "chunks_written");
    nnp__jw_uint(w, st->chunks_written);
    nnp__jw_key(w, "files_aged_out");
    nnp__jw_uint(w, st->files_aged_out);
    nnp__jw_key(w, "bytes_aged_out");
    nnp__jw_uint(w, st->bytes_aged_out);
    nnp__jw_key(w, "threads");
    nnp__jw_uint(w, st->threads);
    nnp__jw_obj_end(w);
}

/* Rewrites <raw_dir>/info.json atomically: who ran, with which options, and when. */
static int write_info(nnp_session_t *s, const char *state)
{
    nnp_jw_t w;
    struct utsname un;
    nnp_stats_t st;
    const char *unsupported[32];
    size_t n_uns, len;
    char *opts_json = NULL, *text;
    int need, rc;

    need = nnp_options_to_json(&s->opts, NULL, 0);
    if (need < 0 || !(opts_json = nnp__malloc((size_t)need + 1)))
        return nnp__fail(NNP_ENOMEM, "out of memory writing info.json");
    if (nnp_options_to_json(&s->opts, opts_json, (size_t)need + 1) != need) {
        nnp__free(opts_json);
        return nnp__fail(NNP_ENOMEM, "out of memory writing info.json");
    }
    nnp_session_stats(s, &st);
    if (uname(&un) != 0)
        memset(&un, 0, sizeof(un));

    rc = nnp__jw_init(&w, -1, true, INFO_JSON_CAP);
    if (rc != NNP_OK) {
        nnp__free(opts_json);
        return rc;
    }
    nnp__jw_obj_begin(&w);
    nnp__jw_key(&w, "nnprof_version");
    nnp__jw_str(&w, NNP_VERSION_STRING);
    nnp__jw_key(&w, "raw_format_version");
    nnp__jw_int(&w, NNP_RAW_VERSION);
    nnp__jw_key(&w, "state");
    nnp__jw_str(&w, state);
    nnp__jw_key(&w, "rank_id");
    nnp__jw_int(&w, s->opts.rank_id);
    nnp__jw_key(&w, "device_id");
    nnp__jw_int(&w, s->opts.device_id);
    nnp__jw_key(&w, "rank_size");
    nnp__jw_int(&w, s->opts.rank_size);
    nnp__jw_key(&w, "host");
    nnp__jw_str(&w, s->host);
    nnp__jw_key(&w, "pid");
    nnp__jw_int(&w, getpid());
    nnp__jw_key(&w, "enabled_by_environment");
    nnp__jw_bool(&w, s->from_env);
    nnp__jw_key(&w, "platform");
    nnp__jw_obj_begin(&w);
    nnp__jw_key(&w, "os");
    nnp__jw_str(&w, un.sysname);
    nnp__jw_key(&w, "release");
    nnp__jw_str(&w, un.release);
    nnp__jw_key(&w, "machine");
    nnp__jw_str(&w, un.machine);
    nnp__jw_key(&w, "cpus");
    nnp__jw_int(&w, sysconf(_SC_NPROCESSORS_ONLN));
    nnp__jw_key(&w, "clock_ticks_per_sec");
    nnp__jw_int(&w, sysconf(_SC_CLK_TCK));
    nnp__jw_key(&w, "page_size");
    nnp__jw_int(&w, sysconf(_SC_PAGESIZE));
    nnp__jw_key(&w, "tick_source");
    nnp__jw_str(&w, nnp__clock_source());
    nnp__jw_key(&w, "tick_rate_hz");
    nnp__jw_uint(&w, nnp__clock_rate());
    nnp__jw_key(&w, "device_target");
    nnp__jw_str(&w, "CPU");
    nnp__jw_obj_end(&w);
    /* Seed 000: start_time and monotonic_time in us, diff_time = their difference, which
     * maps monotonic timestamps to wall-clock time. */
    nnp__jw_key(&w, "start_time_us");
    nnp__jw_uint(&w, s->create_wall_ns / 1000);
    nnp__jw_key(&w, "monotonic_time_us");
    nnp__jw_uint(&w, s->create_mono_ns / 1000);
    nnp__jw_key(&w, "diff_time");
    nnp__jw_int(&w, (int64_t)(s->create_wall_ns / 1000) - (int64_t)(s->create_mono_ns / 1000));
    nnp__jw_key(&w, "stop_time_us");
    if (s->n_windows > 0 && !s->started)
        nnp__jw_uint(&w, s->windows[s->n_windows - 1].stop_wall_ns / 1000);
    else
        nnp__jw_null(&w);
    nnp__jw_key(&w, "windows_total");
    nnp__jw_uint(&w, s->windows_total);
    nnp__jw_key(&w, "windows");
    nnp__jw_arr_begin(&w);
    for (uint32_t i = 0; i < s->n_windows; i++) {
        const window_t *win = &s->windows[i];
        bool open = s->started && i == s->n_windows - 1;
        nnp__jw_obj_begin(&w);
        nnp__jw_key(&w, "start_wall_ns");
        nnp__jw_uint(&w, win->start_wall_ns);
        nnp__jw_key(&w, "start_mono_ns");
        nnp__jw_uint(&w, win->start_mono_ns);
        nnp__jw_key(&w, "stop_wall_ns");
        if (open)
            nnp__jw_null(&w);
        else
            nnp__jw_uint(&w, win->stop_wall_ns);
        nnp__jw_key(&w, "stop_mono_ns");
        if (open)
            nnp__jw_null(&w);
        else
            nnp__jw_uint(&w, win->stop_mono_ns);
        nnp__jw_obj_end(&w);
    }
    nnp__jw_arr_end(&w);
    nnp__jw_key(&w, "options");
    nnp__jw_raw(&w, opts_json);
    nnp__jw_key(&w, "not_collected_on_this_platform");
    nnp__jw_arr_begin(&w);
    n_uns = nnp__options_unsupported(&s->opts, unsupported, NNP_ARRAY_LEN(unsupported));
    for (size_t i = 0; i < n_uns; i++)
        nnp__jw_str(&w, unsupported[i]);
    nnp__jw_arr_end(&w);
    nnp__jw_key(&w, "collectors");
    nnp__jw_arr_begin(&w);
    {
        const char *names[MAX_COLLECTOR_NAMES];
        size_t n = nnp__collectors_names(names, NNP_ARRAY_LEN(names));
        for (size_t i = 0; i < n && i < NNP_ARRAY_LEN(names); i++)
            nnp__jw_str(&w, names[i]);
    }
    nnp__jw_arr_end(&w);
    write_stats(&w, &st);
    nnp__jw_obj_end(&w);
    nnp__free(opts_json);
    text = nnp__jw_take(&w, &len);
    rc = w.err;
    nnp__jw_fini(&w);
    if (!text)
        return rc != NNP_OK ? rc : nnp__fail(NNP_ENOMEM, "out of memory writing info.json");
    {
        char path[NNP_PATH_MAX];
        rc = nnp__path_join(path, sizeof(path), s->raw_dir, NNP_INFO_FILE);
        if (rc == NNP_OK)
            rc = nnp__write_file_atomic(path, text, len);
    }
    nnp__free(text);
    return rc;
}

/* The recorder settings of this session: buffer size and full policy now (threads of an
 * earlier session may be reading them: they are atomics), and the gates, which reach the
 * recording calls only with the window-open store of nnp_session_start(). */
static int apply_recorder_config(const nnp_options_t *o)
{
    int gates = 0;
    atomic_store_explicit(&nnp__rec_config.buffer_slots,
                          (uint64_t)o->buffer_size_kb * KB / sizeof(nnp_rec_t),
                          memory_order_relaxed);
    atomic_store_explicit(&nnp__rec_config.full_policy, (int)o->full_policy, memory_order_relaxed);
    if (o->msproftx)
        gates |= NNP_GATE_MSPROFTX;
    if (o->op_time)
        gates |= NNP_GATE_OPS;
    if (o->profile_memory)
        gates |= NNP_GATE_MEMORY;
    if (o->profile_communication)
        gates |= NNP_GATE_COMM;
    if (o->data_process)
        gates |= NNP_GATE_PIPELINE;
    if (o->profile_framework == NNP_FRAMEWORK_ALL || o->profile_framework == NNP_FRAMEWORK_TIME)
        gates |= NNP_GATE_HOST_RANGES;
    if (o->profile_framework == NNP_FRAMEWORK_ALL || o->profile_framework == NNP_FRAMEWORK_MEMORY)
        gates |= NNP_GATE_HOST_MEMORY;
    return gates;
}

static int session_create(const nnp_options_t *o, bool from_env, nnp_session_t **out)
{
    nnp_session_t *s, *expected = NULL;
    nnp_writer_config_t wc;
    int rc;

    nnp__clear_error();
    if (!out)
        return nnp__fail(NNP_EINVAL, "nnp_session_create: out is NULL");
    *out = NULL;
    if (!from_env && getenv("PROFILING_MODE") && *getenv("PROFILING_MODE"))
        return nnp__fail(NNP_ECONFLICT, "Profiling is already enabled by PROFILING_MODE env.");
    s = nnp__calloc(1, sizeof(*s));
    if (!s)
        return nnp__fail(NNP_ENOMEM, "out of memory creating the session");
    if (!atomic_compare_exchange_strong(&g_session, &expected, s)) {
        nnp__free(s);
        return nnp__fail(NNP_EBUSY, "a profiling session already exists in this process; "
                                    "destroy it before creating another");
    }
    if (o) {
        s->opts = *o;
    } else {
        nnp_options_init(&s->opts);
        rc = nnp_options_from_env(&s->opts, NULL);
        if (rc != NNP_OK)
            goto fail;
    }
    rc = nnp_options_validate(&s->opts);
    if (rc != NNP_OK)
        goto fail;
    s->from_env = from_env;
    nnp__clock_init();
    s->create_wall_ns = nnp__wall_ns();
    s->create_mono_ns = nnp__mono_ns();
    if (gethostname(s->host, sizeof(s->host)) != 0 || !s->host[0])
        nnp__strlcpy(s->host, "localhost", sizeof(s->host));
    s->host[sizeof(s->host) - 1] = '\0';
    for (char *p = s->host; *p; p++) {
        if (*p == '/' || *p == '_')
            *p = '-'; /* keep PROF_<time>_<host>_<pid> splittable on '_' */
    }
    rc = make_dirs(s);
    if (rc != NNP_OK)
        goto fail;
    s->gates = apply_recorder_config(&s->opts);
    wc.raw_dir = s->raw_dir;
    wc.period_ms = s->opts.writer_period_ms;
    wc.raw_file_bytes = s->opts.raw_file_bytes;
    wc.storage_limit_bytes = storage_limit(&s->opts, s->profiler_dir);
    rc = nnp__writer_start(&wc, &s->writer);
    if (rc != NNP_OK)
        goto fail;
    if (s->opts.sample_interval_ms > 0) {
        rc = nnp__sampler_start(s->opts.sample_interval_ms, &s->sampler);
        if (rc != NNP_OK)
            goto fail;
    }
    {
        const char *uns[32];
        size_t n = nnp__options_unsupported(&s->opts, uns, NNP_ARRAY_LEN(uns));
        for (size_t i = 0; i < n; i++)
            NNP_LOG_W("option '%s' is accepted but not collected on this platform", uns[i]);
    }
    rc = write_info(s, "created");
    if (rc != NNP_OK)
        goto fail;
    if (s->opts.start_profile) {
        rc = nnp_session_start(s);
        if (rc != NNP_OK)
            goto fail;
    }
    *out = s;
    return NNP_OK;
fail:
    nnp__sampler_stop(s->sampler);
    nnp__writer_stop(s->writer);
    nnp__free(s->windows);
    nnp__free(s);
    atomic_store(&g_session, NULL);
    return rc;
}

int nnp_session_create(const nnp_options_t *o, nnp_session_t **out)
{
    return session_create(o, false, out);
}

int nnp__session_create_from_env(const nnp_options_t *o, nnp_session_t **out)
{
    int rc = session_create(o, true, out);
    if (rc == NNP_OK)
        env_session = *out;
    return rc;
}

nnp_session_t *nnp_session_current(void)
{
    return env_session;
}

int nnp_session_start(nnp_session_t *s)
{
    window_t *win;
    if (!s)
        return nnp__fail(NNP_EINVAL, "session is NULL");
    if (s->started)
        return nnp__fail(NNP_ESTATE, "The profiler has already started. Do not turn on again "
                                     "in the open state.");
    if (s->n_windows == s->windows_cap && s->windows_cap < MAX_WINDOWS) {
        uint32_t ncap = s->windows_cap ? s->windows_cap * 2 : 8;
        window_t *nw = nnp__realloc(s->windows, ncap * sizeof(*nw));
        if (!nw)
            return nnp__fail(NNP_ENOMEM, "out of memory starting a window");
        s->windows = nw;
        s->windows_cap = ncap;
    }
    if (s->n_windows < s->windows_cap) {
        win = &s->windows[s->n_windows++];
    } else {
        win = &s->windows[s->n_windows - 1]; /* over the cap: reuse the last entry */
    }
    memset(win, 0, sizeof(*win));
    win->start_wall_ns = nnp__wall_ns();
    win->start_mono_ns = nnp__mono_ns();
    s->windows_total++;
    s->started = true;
    atomic_store_explicit(&nnp__collecting, NNP_GATE_ON | s->gates, memory_order_release);
    nnp__collectors_window_start();
    NNP_LOG_I("profiling started, raw data in %s", s->raw_dir);
    return NNP_OK;
}

int nnp_session_stop(nnp_session_t *s)
{
    window_t *win;
    int rc;
    if (!s)
        return nnp__fail(NNP_EINVAL, "session is NULL");
    if (!s->started)
        return nnp__fail(NNP_ESTATE, "The profiler has not started, so can not stop. Please "
                                     "call the start() method before calling the stop() "
                                     "method.");
    /* Back ends drain what their sources buffered while recording is still enabled. */
    nnp__collectors_window_stop();
    atomic_store_explicit(&nnp__collecting, 0, memory_order_release);
    win = &s->windows[s->n_windows - 1];
    win->stop_wall_ns = nnp__wall_ns();
    win->stop_mono_ns = nnp__mono_ns();
    s->started = false;
    rc = nnp__writer_flush(s->writer);
    if (rc == NNP_OK)
        rc = write_info(s, "stopped");
    return rc;
}

int nnp_session_flush(nnp_session_t *s)
{
    if (!s)
        return nnp__fail(NNP_EINVAL, "session is NULL");
    return nnp__writer_flush(s->writer);
}

int nnp_session_destroy(nnp_session_t *s)
{
    int rc = NNP_OK, rc2;
    if (!s)
        return NNP_OK;
    if (s->started)
        rc = nnp_session_stop(s);
    nnp__collectors_session_end();
    nnp__sampler_stop(s->sampler);
    rc2 = nnp__writer_flush(s->writer);
    if (rc == NNP_OK)
        rc = rc2;
    rc2 = write_info(s, "finalized");
    if (rc == NNP_OK)
        rc = rc2;
    rc2 = nnp__writer_stop(s->writer);
    if (rc == NNP_OK)
        rc = rc2;
    if (env_session == s)
        env_session = NULL;
    nnp__free(s->windows);
    nnp__free(s);
    atomic_store(&g_session, NULL);
    return rc;
}

const char *nnp_session_raw_dir(const nnp_session_t *s)
{
    return s ? s->raw_dir : NULL;
}

int nnp_session_stats(const nnp_session_t *s, nnp_stats_t *out)
{
    if (!s || !out)
        return nnp__fail(NNP_EINVAL, "nnp_session_stats: NULL argument");
    memset(out, 0, sizeof(*out));
    nnp__writer_stats(s->writer, out);
    return NNP_OK;
}

void nnp__session_emergency_flush(nnp_session_t *s, int timeout_ms)
{
    atomic_store_explicit(&nnp__collecting, 0, memory_order_release);
    if (s && s->writer)
        (void)nnp__writer_flush_from_signal(s->writer, timeout_ms);
}

const char *nnp_version(void)
{
    return NNP_VERSION_STRING;
}
