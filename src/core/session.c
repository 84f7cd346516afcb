/* session.c - the session lifecycle: create (options, writer, sampler; the raw directory is
 * only named here and made by the writer on the first event, raw_dir.c) -> start/stop
 * windows -> destroy. One session per process (MindSpore's Profiler is a singleton too);
 * recording calls reach it through the global nnp__collecting word, so they never need
 * the handle. A session the library created itself (environment, follow_fork) is "owned":
 * nnp_session_current() returns it and an exit hook destroys it. Error texts follow the
 * seed (000 Profiler.start/stop). */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/collector.h"
#include "core/clock.h"
#include "core/clock_sync.h"
#include "core/options_internal.h"
#include "core/session_internal.h"
#include "record/tbuf.h"
#include "util/util.h"

/* Storage default when neither storage_limit option is set: 90 % of the free space of
 * the output disk (seed 004). */
#define DEFAULT_STORAGE_PERCENT 90
#define MB                      (1024ull * 1024ull)
#define KB                      1024ull
/* Windows kept for info.json; later ones are counted but not listed. */
#define MAX_WINDOWS 100000u
/* Capacity of the first window list; it doubles as needed. */
#define FIRST_WINDOWS 8u

/* Serialises create/start/stop/destroy with each other and with fork() (fork.c takes it in
 * its prepare handler), so a child never sees a session half made or half torn down. */
static pthread_mutex_t life_lock = PTHREAD_MUTEX_INITIALIZER;
/* Written under life_lock; read without it by nnp_collect_options(). */
static _Atomic(nnp_session_t *) g_session;
/* The session the library owns; written under life_lock, read without it (a fatal-signal
 * handler asks for it through nnp_session_current()). */
static _Atomic(nnp_session_t *) g_owned;
static pthread_once_t exit_hook_once = PTHREAD_ONCE_INIT;

static uint64_t storage_limit(const nnp_session_t *s)
{
    if (s->opts.storage_limit_bytes)
        return s->opts.storage_limit_bytes;
    if (s->opts.storage_limit_mb)
        return s->opts.storage_limit_mb * MB;
    return nnp__raw_dir_free_bytes(s) / 100 * DEFAULT_STORAGE_PERCENT;
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

static void exit_hook(void)
{
    nnp__session_destroy_owned();
}

static void install_exit_hook(void)
{
    atexit(exit_hook);
}

static void session_free(nnp_session_t *s)
{
    nnp__follow_page_free(s->follow_page);
    pthread_mutex_destroy(&s->lock);
    nnp__free(s->windows);
    nnp__free(s);
}

static int start_locked(nnp_session_t *s);
static int stop_locked(nnp_session_t *s);

/* The body of every create; caller holds life_lock. */
static int create_locked(const nnp_options_t *o, bool from_env, bool quiet,
                         const nnp_session_link_t *link, nnp_session_t **out)
{
    nnp_session_t *s;
    nnp_writer_config_t wc;
    int rc;

    if (!from_env && getenv("PROFILING_MODE") && *getenv("PROFILING_MODE"))
        return nnp__fail(NNP_ECONFLICT, "Profiling is already enabled by PROFILING_MODE env.");
    if (g_session)
        return nnp__fail(NNP_EBUSY, "a profiling session already exists in this process; "
                                    "destroy it before creating another");
    s = nnp__calloc(1, sizeof(*s));
    if (!s)
        return nnp__fail(NNP_ENOMEM, "out of memory creating the session");
    pthread_mutex_init(&s->lock, NULL);
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
    s->quiet = quiet;
    s->pid = getpid();
    if (link)
        s->link = *link;
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
    rc = nnp__raw_dir_plan(s);
    if (rc != NNP_OK)
        goto fail;
    if (s->opts.follow_fork)
        s->follow_page = nnp__follow_page_new();
    s->gates = apply_recorder_config(&s->opts);
    memset(&wc, 0, sizeof(wc));
    wc.raw_dir = s->raw_dir;
    wc.period_ms = s->opts.writer_period_ms;
    wc.raw_file_bytes = s->opts.raw_file_bytes;
    wc.storage_limit_bytes = storage_limit(s);
    wc.open_dir = nnp__raw_dir_make;
    wc.open_dir_user = s;
    rc = nnp__writer_start(&wc, &s->writer);
    if (rc != NNP_OK)
        goto fail;
    if (s->opts.sample_interval_ms > 0) {
        rc = nnp__sampler_start(s->opts.sample_interval_ms, &s->sampler);
        if (rc != NNP_OK)
            goto fail;
    }
    if (!quiet) {
        const char *uns[NNP_OPTIONS_UNSUPPORTED_MAX];
        size_t n = nnp__options_unsupported(&s->opts, uns, NNP_ARRAY_LEN(uns));
        for (size_t i = 0; i < n && i < NNP_ARRAY_LEN(uns); i++)
            NNP_LOG_W("option '%s' is accepted but not collected on this platform", uns[i]);
    }
    g_session = s;
    if (s->opts.start_profile) {
        rc = start_locked(s);
        if (rc != NNP_OK) {
            g_session = NULL;
            goto fail;
        }
    }
    *out = s;
    return NNP_OK;
fail:
    nnp__sampler_stop(s->sampler);
    nnp__writer_stop(s->writer);
    session_free(s);
    return rc;
}

static int session_create(const nnp_options_t *o, bool from_env, bool quiet, bool owned,
                          const nnp_session_link_t *link, nnp_session_t **out)
{
    int rc;
    nnp__clear_error();
    if (!out)
        return nnp__fail(NNP_EINVAL, "nnp_session_create: out is NULL");
    *out = NULL;
    nnp__fork_install();
    pthread_mutex_lock(&life_lock);
    rc = create_locked(o, from_env, quiet, link, out);
    if (rc == NNP_OK && owned)
        atomic_store(&g_owned, *out);
    pthread_mutex_unlock(&life_lock);
    if (rc == NNP_OK && owned)
        pthread_once(&exit_hook_once, install_exit_hook);
    return rc;
}

int nnp_session_create(const nnp_options_t *o, nnp_session_t **out)
{
    return session_create(o, false, false, false, NULL, out);
}

int nnp__session_create_from_env(const nnp_options_t *o, const nnp_session_link_t *link,
                                 nnp_session_t **out)
{
    return session_create(o, true, false, true, link, out);
}

int nnp__session_create_owned(const nnp_options_t *o, bool from_env, bool quiet,
                              const nnp_session_link_t *link, nnp_session_t **out)
{
    /* Called from fork.c's child handler, where life_lock is already reinitialised and
     * free: the same path as any create. */
    return session_create(o, from_env, quiet, true, link, out);
}

nnp_session_t *nnp_session_current(void)
{
    return atomic_load(&g_owned);
}

int nnp_collect_options(nnp_options_t *out)
{
    /* Lock-free: back ends call it from their window hooks, which run under life_lock. The
     * options of a session do not change after create. */
    nnp_session_t *s = atomic_load(&g_session);
    if (!out)
        return nnp__fail(NNP_EINVAL, "nnp_collect_options: out is NULL");
    if (!s)
        return nnp__fail(NNP_ESTATE, "no profiling session in this process");
    *out = s->opts;
    return NNP_OK;
}

/* The seed's "already started" / "not started" errors, and the error for a session a
 * forked child holds: its writer lives in the parent. */
static int check_usable(const nnp_session_t *s)
{
    if (!s)
        return nnp__fail(NNP_EINVAL, "session is NULL");
    if (nnp__session_is_foreign(s))
        return nnp__fail(NNP_ESTATE,
                         "this session belongs to process %ld: a forked child does not record "
                         "into its parent's session (set follow_fork to give each child its "
                         "own)",
                         (long)s->pid);
    return NNP_OK;
}

static int start_locked(nnp_session_t *s)
{
    nnp_window_rec_t *win;
    pthread_mutex_lock(&s->lock);
    if (s->started) {
        pthread_mutex_unlock(&s->lock);
        return nnp__fail(NNP_ESTATE, "The profiler has already started. Do not turn on again "
                                     "in the open state.");
    }
    if (s->n_windows == s->windows_cap && s->windows_cap < MAX_WINDOWS) {
        uint32_t ncap = s->windows_cap ? s->windows_cap * 2 : FIRST_WINDOWS;
        nnp_window_rec_t *nw = nnp__realloc(s->windows, ncap * sizeof(*nw));
        if (!nw) {
            pthread_mutex_unlock(&s->lock);
            return nnp__fail(NNP_ENOMEM, "out of memory starting a window");
        }
        s->windows = nw;
        s->windows_cap = ncap;
    }
    if (s->n_windows < s->windows_cap)
        win = &s->windows[s->n_windows++];
    else
        win = &s->windows[s->n_windows - 1]; /* over the cap: reuse the last entry */
    memset(win, 0, sizeof(*win));
    win->start_wall_ns = nnp__wall_ns();
    win->start_mono_ns = nnp__mono_ns();
    s->windows_total++;
    s->started = true;
    pthread_mutex_unlock(&s->lock);
    nnp__follow_page_set(s->follow_page, true);
    atomic_store_explicit(&nnp__collecting, NNP_GATE_ON | s->gates, memory_order_release);
    nnp__sampler_kick(s->sampler);
    nnp__collectors_window_start();
    NNP_LOG_I("profiling started, raw data in %s", s->raw_dir);
    return NNP_OK;
}

int nnp_session_start(nnp_session_t *s)
{
    int rc = check_usable(s);
    if (rc != NNP_OK)
        return rc;
    pthread_mutex_lock(&life_lock);
    rc = start_locked(s);
    pthread_mutex_unlock(&life_lock);
    return rc;
}

/* The error of a failed write made on the writer thread, restated on the caller's (the
 * last-error text is per thread). */
static int writer_error(const nnp_session_t *s, int rc)
{
    if (rc == NNP_OK)
        return rc;
    return nnp__fail(rc, "writing the raw data in %s failed: %s (the log has the first error)",
                     s->raw_dir, nnp_strerror(rc));
}

/* info.json, when the writer has made the raw directory: a session that recorded nothing
 * leaves nothing behind. */
static int write_info_if_made(nnp_session_t *s, const char *state)
{
    int rc = NNP_OK;
    pthread_mutex_lock(&s->lock);
    if (s->dir_made)
        rc = nnp__info_write(s, state, s->writer);
    pthread_mutex_unlock(&s->lock);
    return rc;
}

static int stop_locked(nnp_session_t *s)
{
    nnp_window_rec_t *win;
    int rc;
    pthread_mutex_lock(&s->lock);
    if (!s->started) {
        pthread_mutex_unlock(&s->lock);
        return nnp__fail(NNP_ESTATE, "The profiler has not started, so can not stop. Please "
                                     "call the start() method before calling the stop() "
                                     "method.");
    }
    pthread_mutex_unlock(&s->lock);
    /* Back ends drain what their sources buffered while recording is still enabled. */
    nnp__collectors_window_stop();
    atomic_store_explicit(&nnp__collecting, 0, memory_order_release);
    pthread_mutex_lock(&s->lock);
    win = &s->windows[s->n_windows - 1];
    win->stop_wall_ns = nnp__wall_ns();
    win->stop_mono_ns = nnp__mono_ns();
    s->started = false;
    pthread_mutex_unlock(&s->lock);
    nnp__follow_page_set(s->follow_page, false);
    rc = nnp__writer_flush(s->writer);
    /* The counters go to info.json even when writing failed: they say what was lost. A
     * failed write is the error to report, stated after info.json's attempts (a full disk
     * fails its first try, then the in-place rewrite succeeds). */
    {
        int rc2 = write_info_if_made(s, "stopped");
        rc = rc != NNP_OK ? writer_error(s, rc) : rc2;
    }
    return rc;
}

void nnp__session_follow(nnp_session_t *s, bool open)
{
    bool started;
    int rc = NNP_OK;
    if (pthread_mutex_trylock(&life_lock) != 0)
        return;
    pthread_mutex_lock(&s->lock);
    started = s->started;
    pthread_mutex_unlock(&s->lock);
    if (open && !started)
        rc = start_locked(s);
    else if (!open && started)
        rc = stop_locked(s);
    pthread_mutex_unlock(&life_lock);
    if (rc != NNP_OK)
        NNP_LOG_W("follow_fork: process %ld could not %s its window with its parent's: %s",
                  (long)getpid(), open ? "open" : "close", nnp_last_error());
}

int nnp_session_stop(nnp_session_t *s)
{
    int rc = check_usable(s);
    if (rc != NNP_OK)
        return rc;
    pthread_mutex_lock(&life_lock);
    rc = stop_locked(s);
    pthread_mutex_unlock(&life_lock);
    return rc;
}

int nnp_session_flush(nnp_session_t *s)
{
    int rc = check_usable(s);
    if (rc != NNP_OK)
        return rc;
    return writer_error(s, nnp__writer_flush_make(s->writer));
}

static int destroy_locked(nnp_session_t *s)
{
    nnp_writer_t *w;
    int rc = NNP_OK, rc2;
    bool started;
    /* The follower never waits for life_lock (held here): it stops at once. */
    nnp__follower_stop(s->follower);
    s->follower = NULL;
    pthread_mutex_lock(&s->lock);
    started = s->started;
    pthread_mutex_unlock(&s->lock);
    if (started)
        rc = stop_locked(s);
    nnp__collectors_session_end();
    nnp__sampler_stop(s->sampler);
    s->sampler = NULL;
    rc2 = writer_error(s, nnp__writer_flush(s->writer));
    if (rc == NNP_OK)
        rc = rc2;
    rc2 = write_info_if_made(s, "finalized");
    if (rc == NNP_OK)
        rc = rc2;
    /* info.json is final: a late nnp__session_info_refresh() (under this lock) must neither
     * rewrite it nor reach the writer being stopped. */
    pthread_mutex_lock(&s->lock);
    w = s->writer;
    s->writer = NULL;
    s->state = NULL;
    pthread_mutex_unlock(&s->lock);
    rc2 = writer_error(s, nnp__writer_stop(w));
    if (rc == NNP_OK)
        rc = rc2;
    if (atomic_load(&g_owned) == s)
        atomic_store(&g_owned, NULL);
    if (g_session == s)
        g_session = NULL;
    session_free(s);
    return rc;
}

int nnp_session_destroy(nnp_session_t *s)
{
    int rc;
    if (!s)
        return NNP_OK;
    if (nnp__session_is_foreign(s)) {
        /* A forked child's copy of its parent's session: nothing of it is the child's to
         * write; only the child's memory is released. */
        nnp__fork_release(s);
        return NNP_OK;
    }
    pthread_mutex_lock(&life_lock);
    rc = destroy_locked(s);
    pthread_mutex_unlock(&life_lock);
    return rc;
}

void nnp__session_destroy_owned(void)
{
    nnp_session_t *s;
    pthread_mutex_lock(&life_lock);
    s = atomic_load(&g_owned);
    if (s)
        (void)destroy_locked(s);
    pthread_mutex_unlock(&life_lock);
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
    if (!nnp__session_is_foreign(s))
        nnp__writer_stats(s->writer, out);
    return NNP_OK;
}

void nnp__session_emergency_flush(nnp_session_t *s, int timeout_ms)
{
    atomic_store_explicit(&nnp__collecting, 0, memory_order_release);
    if (s && s->writer && !nnp__session_is_foreign(s))
        (void)nnp__writer_flush_from_signal(s->writer, timeout_ms);
}

int nnp__session_info_refresh(void)
{
    /* Lock-free lookup and the session's own lock only: a back end may report from its
     * hooks, which run under life_lock. A clock report is data of the run (the cluster
     * analysis aligns ranks with it), so a rank that recorded nothing yet gets its raw
     * directory now, with the report in its first info.json. */
    nnp_session_t *s = atomic_load(&g_session);
    nnp_writer_t *w;
    bool made;
    int rc = NNP_OK;
    if (!s || nnp__session_is_foreign(s))
        return NNP_OK;
    pthread_mutex_lock(&s->lock);
    made = s->dir_made;
    w = s->writer;
    if (made && s->state)
        rc = nnp__info_write(s, s->state, w);
    pthread_mutex_unlock(&s->lock);
    if (!made && w)
        rc = writer_error(s, nnp__writer_flush_make(w));
    return rc;
}

/* ---- fork support (fork.c) ---- */

void nnp__session_lock_all(void)
{
    pthread_mutex_lock(&life_lock);
    if (g_session)
        pthread_mutex_lock(&g_session->lock);
}

void nnp__session_unlock_all(void)
{
    if (g_session)
        pthread_mutex_unlock(&g_session->lock);
    pthread_mutex_unlock(&life_lock);
}

nnp_session_t *nnp__session_get(void)
{
    return g_session;
}

nnp_session_t *nnp__session_child_reset(void)
{
    nnp_session_t *s = g_session;
    /* The child is single-threaded here, and both locks were taken by this very thread in
     * the prepare handler: released, they are consistent for the child. */
    g_session = NULL;
    atomic_store(&g_owned, NULL);
    if (s)
        pthread_mutex_unlock(&s->lock);
    pthread_mutex_unlock(&life_lock);
    if (s) {
        nnp__writer_forget(s->writer);
        s->writer = NULL;
        nnp__sampler_forget(s->sampler);
        s->sampler = NULL;
        s->follower = NULL; /* its thread is the parent's (a follower's few bytes stay) */
    }
    return s;
}

const char *nnp_version(void)
{
    return NNP_VERSION_STRING;
}
