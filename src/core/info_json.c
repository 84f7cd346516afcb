/* info_json.c - <raw dir>/info.json (docs/FORMAT.md): who ran, with which options, when,
 * the windows, the parent run of a child process, and the counters the writer keeps in
 * memory (recorded, dropped, unwritten, write errors, disk full, aged out). Rewritten when
 * the directory is made, at every stop and at destroy. A full disk is exactly when these
 * counters matter, so the rewrite falls back to overwriting the old file in place (its
 * blocks are already allocated) and is retried a few times before giving up. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "collect/collector.h"
#include "core/clock.h"
#include "core/clock_sync.h"
#include "core/options_internal.h"
#include "core/session_internal.h"
#include "util/json_writer.h"
#include "util/util.h"

/* info.json is small; the cap only guards against a runaway number of windows. */
#define INFO_JSON_CAP (16u * 1024u * 1024u)
/* Names of collector back ends listed in info.json (the registry holds at most 16). */
#define MAX_COLLECTOR_NAMES 16
/* Tries of a failed rewrite, and the pause between them: aging or another process may free
 * space meanwhile; 3 x 50 ms keeps a stop that cannot write short. */
#define WRITE_ATTEMPTS    3
#define RETRY_PAUSE_NS    (50L * 1000L * 1000L)
#define BYTES_PER_BLOCK   512 /* st_blocks unit (POSIX) */
#define NS_PER_US_DIVISOR 1000

static void write_stats(nnp_jw_t *w, const nnp_stats_t *st)
{
    nnp__jw_key(w, "stats");
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "events_recorded");
    nnp__jw_uint(w, st->events_recorded);
    nnp__jw_key(w, "events_dropped");
    nnp__jw_uint(w, st->events_dropped);
    nnp__jw_key(w, "events_unwritten");
    nnp__jw_uint(w, st->events_unwritten);
    nnp__jw_key(w, "write_errors");
    nnp__jw_uint(w, st->write_errors);
    nnp__jw_key(w, "disk_full");
    nnp__jw_bool(w, st->disk_full);
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

static void write_platform(nnp_jw_t *w)
{
    struct utsname un;
    if (uname(&un) != 0)
        memset(&un, 0, sizeof(un));
    nnp__jw_key(w, "platform");
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "os");
    nnp__jw_str(w, un.sysname);
    nnp__jw_key(w, "release");
    nnp__jw_str(w, un.release);
    nnp__jw_key(w, "machine");
    nnp__jw_str(w, un.machine);
    nnp__jw_key(w, "cpus");
    nnp__jw_int(w, sysconf(_SC_NPROCESSORS_ONLN));
    nnp__jw_key(w, "clock_ticks_per_sec");
    nnp__jw_int(w, sysconf(_SC_CLK_TCK));
    nnp__jw_key(w, "page_size");
    nnp__jw_int(w, sysconf(_SC_PAGESIZE));
    nnp__jw_key(w, "tick_source");
    nnp__jw_str(w, nnp__clock_source());
    nnp__jw_key(w, "tick_rate_hz");
    nnp__jw_uint(w, nnp__clock_rate());
    nnp__jw_key(w, "device_target");
    nnp__jw_str(w, "CPU");
    nnp__jw_obj_end(w);
}

static void write_windows(nnp_jw_t *w, const nnp_session_t *s)
{
    nnp__jw_key(w, "stop_time_us");
    if (s->n_windows > 0 && !s->started)
        nnp__jw_uint(w, s->windows[s->n_windows - 1].stop_wall_ns / NS_PER_US_DIVISOR);
    else
        nnp__jw_null(w);
    nnp__jw_key(w, "windows_total");
    nnp__jw_uint(w, s->windows_total);
    nnp__jw_key(w, "windows");
    nnp__jw_arr_begin(w);
    for (uint32_t i = 0; i < s->n_windows; i++) {
        const nnp_window_rec_t *win = &s->windows[i];
        bool open = s->started && i == s->n_windows - 1;
        nnp__jw_obj_begin(w);
        nnp__jw_key(w, "start_wall_ns");
        nnp__jw_uint(w, win->start_wall_ns);
        nnp__jw_key(w, "start_mono_ns");
        nnp__jw_uint(w, win->start_mono_ns);
        nnp__jw_key(w, "stop_wall_ns");
        if (open)
            nnp__jw_null(w);
        else
            nnp__jw_uint(w, win->stop_wall_ns);
        nnp__jw_key(w, "stop_mono_ns");
        if (open)
            nnp__jw_null(w);
        else
            nnp__jw_uint(w, win->stop_mono_ns);
        nnp__jw_obj_end(w);
    }
    nnp__jw_arr_end(w);
}

/* The whole document into *text (owned by the caller, nnp__free). */
static int build(const nnp_session_t *s, const char *state, const nnp_writer_t *wr, char **text,
                 size_t *len)
{
    nnp_jw_t w;
    nnp_stats_t st;
    const char *unsupported[NNP_OPTIONS_UNSUPPORTED_MAX];
    size_t n_uns;
    char *opts_json = NULL;
    int need, rc;

    need = nnp_options_to_json(&s->opts, NULL, 0);
    if (need < 0 || !(opts_json = nnp__malloc((size_t)need + 1)))
        return nnp__fail(NNP_ENOMEM, "out of memory writing info.json");
    if (nnp_options_to_json(&s->opts, opts_json, (size_t)need + 1) != need) {
        nnp__free(opts_json);
        return nnp__fail(NNP_ENOMEM, "out of memory writing info.json");
    }
    memset(&st, 0, sizeof(st));
    if (wr)
        nnp__writer_stats(wr, &st);
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
    nnp__jw_int(&w, s->pid);
    if (s->link.kind) {
        /* CONTRACTS.md 2: a child's run names its parent's; analyse groups them. */
        nnp__jw_key(&w, "parent_pid");
        nnp__jw_int(&w, s->link.parent_pid);
        nnp__jw_key(&w, "parent_raw_dir");
        nnp__jw_str(&w, s->link.parent_raw_dir);
        nnp__jw_key(&w, "child_kind");
        nnp__jw_str(&w, s->link.kind);
    }
    nnp__jw_key(&w, "enabled_by_environment");
    nnp__jw_bool(&w, s->from_env);
    write_platform(&w);
    /* Seed 000: start_time and monotonic_time in us, diff_time = their difference, which
     * maps monotonic timestamps to wall-clock time. */
    nnp__jw_key(&w, "start_time_us");
    nnp__jw_uint(&w, s->create_wall_ns / NS_PER_US_DIVISOR);
    nnp__jw_key(&w, "monotonic_time_us");
    nnp__jw_uint(&w, s->create_mono_ns / NS_PER_US_DIVISOR);
    nnp__jw_key(&w, "diff_time");
    nnp__jw_int(&w, (int64_t)(s->create_wall_ns / NS_PER_US_DIVISOR) -
                        (int64_t)(s->create_mono_ns / NS_PER_US_DIVISOR));
    write_windows(&w, s);
    nnp__jw_key(&w, "options");
    nnp__jw_raw(&w, opts_json);
    nnp__jw_key(&w, "not_collected_on_this_platform");
    nnp__jw_arr_begin(&w);
    n_uns = nnp__options_unsupported(&s->opts, unsupported, NNP_ARRAY_LEN(unsupported));
    for (size_t i = 0; i < n_uns && i < NNP_ARRAY_LEN(unsupported); i++)
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
    nnp__jw_key(&w, "clock_sync");
    nnp__clock_sync_write(&w);
    write_stats(&w, &st);
    nnp__jw_obj_end(&w);
    nnp__free(opts_json);
    *text = nnp__jw_take(&w, len);
    rc = w.err;
    nnp__jw_fini(&w);
    if (!*text)
        return rc != NNP_OK ? rc : nnp__fail(NNP_ENOMEM, "out of memory writing info.json");
    return NNP_OK;
}

/* Overwrites path with text without allocating: only when text fits in the blocks the old
 * file already holds (a full disk has none to give). Shorter text is cut to its length. */
static int overwrite_in_place(const char *path, const char *text, size_t len)
{
    struct stat st;
    int rc = NNP_OK;
    int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return nnp__fail(nnp__from_errno(errno), "cannot open '%s': %s", path, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        (len > (size_t)st.st_size && len > (size_t)st.st_blocks * BYTES_PER_BLOCK)) {
        close(fd);
        return nnp__fail(NNP_EIO, "'%s' has no room for the new text in place", path);
    }
    if (pwrite(fd, text, len, 0) != (ssize_t)len || ftruncate(fd, (off_t)len) != 0 ||
        fsync(fd) != 0)
        rc = nnp__fail(NNP_EIO, "cannot rewrite '%s' in place: %s", path, strerror(errno));
    close(fd);
    return rc;
}

int nnp__info_write(nnp_session_t *s, const char *state, const nnp_writer_t *w)
{
    char path[NNP_PATH_MAX] = "", *text = NULL;
    size_t len = 0;
    int err = 0, rc = build(s, state, w, &text, &len);

    if (rc == NNP_OK)
        rc = nnp__path_join(path, sizeof(path), s->raw_dir, NNP_INFO_FILE);
    for (int attempt = 0; rc == NNP_OK && attempt < WRITE_ATTEMPTS; attempt++) {
        struct timespec pause = {0, RETRY_PAUSE_NS};
        errno = 0;
        rc = nnp__write_file_atomic(path, text, len);
        if (rc == NNP_OK)
            break;
        err = errno; /* of the write that failed: ENOSPC is what the writer counts */
        if (access(path, F_OK) == 0 && overwrite_in_place(path, text, len) == NNP_OK) {
            rc = NNP_OK;
            break;
        }
        if (attempt + 1 == WRITE_ATTEMPTS)
            break;
        nanosleep(&pause, NULL);
        rc = NNP_OK;
    }
    if (rc != NNP_OK)
        NNP_LOG_E("could not write %s/%s: %s", s->raw_dir, NNP_INFO_FILE, nnp_last_error());
    else
        s->state = state;
    nnp__free(text);
    errno = rc == NNP_OK ? 0 : err;
    return rc;
}
