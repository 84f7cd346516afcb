/* writer.c - see writer.h: the thread (draining, strings, losses, the lazy first open of
 * the files) and its flush/start/stop; the files themselves are writer_files.c. Threading:
 * the writer thread owns the files and the fields writer_internal.h marks "writer"; other
 * threads only touch the atomics (flush requests, stop, counters) and the condition variable. Flush
 * protocol: a requester takes a ticket from flush_req and waits until flush_done reaches it; the
 * writer reads flush_req *before* draining, so whatever the requester committed before taking its
 * ticket is drained. Signals (SIGTERM/SIGINT handlers) use the same tickets with an eventfd
 * wake-up. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "record/strtab.h"
#include "record/tbuf.h"
#include "record/writer_internal.h"

/* ---- draining ---- */

static void emit_strings(nnp_writer_t *w)
{
    uint32_t total = nnp__strtab_count();
    size_t used = 0;
    uint32_t count = 0;

    while (w->strings_emitted < total) {
        uint32_t id = w->strings_emitted + 1;
        const char *s;
        size_t len, need;
        if (nnp__strtab_get(id, &s, &len) != 0)
            break;
        need = 8 + ((len + 3) & ~(size_t)3);
        if (need > META_BATCH_BYTES) {
            len = META_BATCH_BYTES - 16;
            need = 8 + ((len + 3) & ~(size_t)3);
        }
        if (used + need > META_BATCH_BYTES) {
            nnp__wr_meta(w, NNP_CHUNK_STRINGS, w->meta_buf, (uint32_t)used, count);
            used = 0;
            count = 0;
        }
        {
            uint32_t hdr[2] = {id, (uint32_t)len};
            memcpy(w->meta_buf + used, hdr, sizeof(hdr));
            memcpy(w->meta_buf + used + 8, s, len);
            memset(w->meta_buf + used + 8 + len, 0, need - 8 - len);
        }
        used += need;
        count++;
        w->strings_emitted = id;
    }
    if (count > 0)
        nnp__wr_meta(w, NNP_CHUNK_STRINGS, w->meta_buf, (uint32_t)used, count);
}

static void emit_clock(nnp_writer_t *w)
{
    nnp_clock_point_t p;
    nnp__clock_point(&p);
    nnp__wr_meta(w, NNP_CHUNK_CLOCK, &p, sizeof(p), 1);
    w->last_clock_ns = p.mono_ns;
}

/* Points w->slots_in at slots [from, to) of b: the ring itself, or, when they wrap around
 * its end (once per lap), a copy of them in the scratch buffer. */
static void take_slots(nnp_writer_t *w, const nnp_tbuf_t *b, uint64_t from, uint64_t to)
{
    uint64_t n = to - from, i0 = from & b->mask;
    uint64_t first = b->cap - i0 < n ? b->cap - i0 : n;
    if (first == n) {
        w->slots_in = &b->slots[i0];
        return;
    }
    memcpy(w->scratch, &b->slots[i0], first * sizeof(nnp_rec_t));
    memcpy(w->scratch + first, &b->slots[0], (n - first) * sizeof(nnp_rec_t));
    w->slots_in = w->scratch;
}

static void drain_one(nnp_tbuf_t *b, void *user)
{
    nnp_writer_t *w = user;
    uint64_t head = atomic_load_explicit(&b->head, memory_order_acquire);
    uint64_t tail = atomic_load_explicit(&b->tail, memory_order_relaxed);

    if (head != tail && w->meta_fd >= 0 && !atomic_load(&b->thread_reported)) {
        struct {
            uint64_t tid;
            uint32_t name, pid;
        } t = {b->tid, atomic_load(&b->name), (uint32_t)getpid()};
        atomic_store(&b->thread_reported, true);
        nnp__wr_meta(w, NNP_CHUNK_THREADS, &t, sizeof(t), 1);
        atomic_fetch_add(&w->threads, 1);
    }
    if (head - tail > b->cap / 2)
        w->busy = true; /* drain again at once instead of sleeping a period */
    if (head - tail > 0) {
        uint32_t fill = (uint32_t)((head - tail) * FILL_SCALE / b->cap);
        if (fill > w->fill_max)
            w->fill_max = fill;
    }
    while (tail < head) {
        uint64_t n = head - tail < CHUNK_MAX_SLOTS ? head - tail : CHUNK_MAX_SLOTS;
        size_t used;
        uint32_t n_rec, packed;
        /* The packer cuts the chunk at a record boundary: no pass of our own over the slots,
         * whose first read (they were written on another core) is the costly one. */
        take_slots(w, b, tail, tail + n);
        packed = nnp__wr_pack(w, n, &used, &n_rec);
        if (w->data_fd >= 0) {
            uint64_t wrote = nnp__wr_records(w, packed, used, n_rec, b->tid);
            if (wrote > 0) {
                atomic_fetch_add_explicit(&w->events_recorded, n_rec, memory_order_relaxed);
                atomic_fetch_add_explicit(&w->bytes_raw, used * sizeof(nnp_rec_t),
                                          memory_order_relaxed);
                nnp__wr_account(w, wrote);
            } else {
                atomic_fetch_add_explicit(&w->events_unwritten, n_rec, memory_order_relaxed);
            }
        } else {
            /* No data file (its creation failed): the records are lost, and counted. */
            atomic_fetch_add_explicit(&w->events_unwritten, n_rec, memory_order_relaxed);
        }
        tail += used;
        atomic_store_explicit(&b->tail, tail, memory_order_release);
    }
}

/* Collects per-thread drop counts into one LOSS chunk. */
struct loss_ctx {
    nnp_writer_t *w;
    uint32_t count;
};

static void loss_one(nnp_tbuf_t *b, void *user)
{
    struct loss_ctx *c = user;
    uint64_t d = atomic_load_explicit(&b->dropped, memory_order_relaxed);
    uint64_t e[2];
    if (d == b->dropped_reported || (c->count + 1) * sizeof(e) > META_BATCH_BYTES)
        return;
    e[0] = b->tid;
    e[1] = d - b->dropped_reported;
    b->dropped_reported = d;
    memcpy(c->w->meta_buf + c->count * sizeof(e), e, sizeof(e));
    c->count++;
    atomic_fetch_add(&c->w->events_dropped, e[1]);
}

static void emit_losses(nnp_writer_t *w)
{
    struct loss_ctx c = {w, 0};
    uint64_t orphans = atomic_load(&nnp__orphan_drops);
    nnp__tbuf_for_each_writer(loss_one, &c);
    if (orphans != w->orphan_reported) {
        uint64_t e[2] = {0, orphans - w->orphan_reported};
        memcpy(w->meta_buf + c.count * sizeof(e), e, sizeof(e));
        c.count++;
        atomic_fetch_add(&w->events_dropped, e[1]);
        w->orphan_reported = orphans;
    }
    if (c.count > 0)
        nnp__wr_meta(w, NNP_CHUNK_LOSS, w->meta_buf, c.count * 2 * sizeof(uint64_t), c.count);
}

/* Logs the drop total when it grew, at most once per LOSS_LOG_PERIOD_NS unless final (the
 * writer's last drain): a thread dropping for seconds gives a line a second, not thousands. */
static void log_losses(nnp_writer_t *w, bool final)
{
    uint64_t total = atomic_load(&w->events_dropped), now = nnp__mono_ns();
    if (total == w->loss_logged ||
        (!final && w->loss_logged_ns != 0 && now - w->loss_logged_ns < LOSS_LOG_PERIOD_NS))
        return;
    NNP_LOG_W("event buffers were full: %llu events dropped so far (raise buffer_size_kb "
              "or use full_policy \"block\")",
              (unsigned long long)total);
    w->loss_logged = total;
    w->loss_logged_ns = now;
}

/* True when a buffer holds records or unreported losses: what makes a raw directory. */
struct pending_ctx {
    bool any;
};

static void pending_one(nnp_tbuf_t *b, void *user)
{
    struct pending_ctx *c = user;
    if (atomic_load_explicit(&b->head, memory_order_acquire) !=
            atomic_load_explicit(&b->tail, memory_order_relaxed) ||
        atomic_load_explicit(&b->dropped, memory_order_relaxed) != b->dropped_reported)
        c->any = true;
}

static bool has_pending(nnp_writer_t *w)
{
    struct pending_ctx c = {false};
    nnp__tbuf_for_each_writer(pending_one, &c);
    return c.any || atomic_load(&nnp__orphan_drops) != w->orphan_reported;
}

/* Creates the raw directory (the session's callback) and opens meta.nnp and the first data
 * file, on the first drain that has something to write: a session that records nothing
 * leaves nothing on disk. A failure is logged and retried at most every OPEN_RETRY_NS;
 * until then drained records are counted as unwritten. */
static void open_files(nnp_writer_t *w)
{
    uint64_t now = nnp__mono_ns();
    int rc, err;

    if (now < w->next_open_ns)
        return;
    errno = 0;
    rc = w->open_dir ? w->open_dir(w->open_dir_user, w) : NNP_OK;
    if (rc == NNP_OK && w->meta_fd < 0) {
        rc = nnp__wr_open_file(w, NNP_RAW_META_FILE, NNP_FILE_META, 0, &w->meta_fd);
        if (rc == NNP_OK)
            w->meta_bytes = sizeof(nnp_raw_file_header_t);
    }
    if (rc == NNP_OK && w->data_fd < 0)
        rc = nnp__wr_rotate(w);
    err = errno;
    if (rc != NNP_OK) {
        nnp__wr_io_error(w, rc, nnp_last_error(), err);
        w->next_open_ns = now + OPEN_RETRY_NS;
        return;
    }
    w->files_open = true;
    atomic_store(&w->has_files, true);
    nnp__wr_meta(w, NNP_CHUNK_CLOCK, &w->start_clock, sizeof(w->start_clock), 1);
    w->last_clock_ns = w->start_clock.mono_ns;
    w->last_disk_ns = now;
}

static void drain_all(nnp_writer_t *w)
{
    if (!w->files_open) {
        if (!has_pending(w) && !atomic_load(&w->make_files))
            return;
        open_files(w);
    } else if (w->data_fd < 0 && nnp__mono_ns() >= w->next_open_ns) {
        /* The next data file could not be created (a full disk): try again. */
        if (nnp__wr_rotate(w) != NNP_OK)
            w->next_open_ns = nnp__mono_ns() + OPEN_RETRY_NS;
    }
    if (!w->files_open) {
        /* Nothing to write to: drain and count, so buffers do not fill up behind it. */
        nnp__tbuf_for_each_writer(drain_one, w);
        emit_losses(w);
        nnp__tbuf_reap();
        return;
    }
    emit_strings(w);
    nnp__tbuf_for_each_writer(drain_one, w);
    emit_strings(w); /* strings interned while draining, referenced by drained records */
    emit_losses(w);
    nnp__tbuf_reap();
    if (nnp__mono_ns() - w->last_clock_ns >= CLOCK_PERIOD_NS)
        emit_clock(w);
}

static void complete_flushes(nnp_writer_t *w, uint64_t ticket)
{
    pthread_mutex_lock(&w->lock);
    atomic_store(&w->flush_done, ticket);
    pthread_cond_broadcast(&w->done_cond);
    pthread_mutex_unlock(&w->lock);
}

/* How long to sleep before the next drain: the period, or less when a buffer filled fast
 * (interval_ns: from the start of the previous drain to the start of the last one). A
 * thread's buffer is then drained before it fills, whatever its rate, as long as the
 * writer keeps up; a quiet run still wakes once a period. */
static int sleep_ms(const nnp_writer_t *w, uint64_t interval_ns)
{
    uint64_t ms;
    if (w->busy)
        return 0;
    if (w->fill_max == 0)
        return w->period_ms;
    ms = interval_ns * FILL_WAKE / w->fill_max / NS_PER_MS;
    return ms < (uint64_t)w->period_ms ? (int)ms : w->period_ms;
}

static void *writer_main(void *arg)
{
    nnp_writer_t *w = arg;
    struct pollfd pfd = {.fd = w->wake_fd, .events = POLLIN};
    uint64_t last_ns = nnp__mono_ns(), interval_ns = 0;

    /* Seen in top, ps and perf (15 characters at most). */
    pthread_setname_np(pthread_self(), "nnprof-writer");
    for (;;) {
        uint64_t ticket, v, now;
        bool stopping;
        if (poll(&pfd, 1, sleep_ms(w, interval_ns)) > 0)
            (void)!read(w->wake_fd, &v, sizeof(v));
        now = nnp__mono_ns();
        interval_ns = now - last_ns;
        last_ns = now;
        w->busy = false;
        w->fill_max = 0;
        stopping = atomic_load(&w->stop);
        ticket = atomic_load(&w->flush_req);
        drain_all(w);
        log_losses(w, stopping);
        complete_flushes(w, ticket);
        if (stopping)
            break;
    }
    if (w->files_open)
        emit_clock(w);
    return NULL;
}

static void wake(nnp_writer_t *w)
{
    uint64_t one = 1;
    (void)!write(w->wake_fd, &one, sizeof(one));
}

/* Closes w's descriptors and frees it. In a forked child (!own_sync) the lock and condition
 * variable are left alone: the parent's writer thread may have held them at the fork. */
static void release(nnp_writer_t *w, bool own_sync)
{
    if (w->data_fd >= 0)
        close(w->data_fd);
    if (w->meta_fd >= 0)
        close(w->meta_fd);
    if (w->wake_fd >= 0)
        close(w->wake_fd);
    nnp__free(w->zwork); /* the static context lives in it */
    nnp__free(w->zbuf);
    nnp__free(w->pack);
    nnp__free(w->pbuf);
    nnp__free(w->scratch);
    nnp__free(w->meta_buf);
    nnp__free(w->file_bytes);
    if (own_sync) {
        pthread_mutex_destroy(&w->lock);
        pthread_cond_destroy(&w->done_cond);
    }
    nnp__free(w);
}

int nnp__writer_start(const nnp_writer_config_t *cfg, nnp_writer_t **out)
{
    nnp_writer_t *w = nnp__calloc(1, sizeof(*w));
    sigset_t all, old;
    int rc = NNP_ENOMEM;

    if (!w)
        return nnp__fail(NNP_ENOMEM, "out of memory creating the writer");
    w->meta_fd = w->data_fd = w->wake_fd = -1;
    if (!nnp__strlcpy(w->dir, cfg->raw_dir, sizeof(w->dir))) {
        nnp__free(w);
        return nnp__fail(NNP_ETOOLONG, "raw directory path too long");
    }
    w->period_ms = cfg->period_ms;
    w->raw_file_bytes = cfg->raw_file_bytes;
    w->limit_bytes = cfg->storage_limit_bytes;
    w->open_dir = cfg->open_dir;
    w->open_dir_user = cfg->open_dir_user;
    w->oldest_seq = 1;
    w->zbuf_cap = ZSTD_compressBound((CHUNK_MAX_SLOTS + NNP_REC_MAX_SLOTS) * sizeof(nnp_rec_t));
    {
        /* Enough to compress input of any size at ZSTD_LEVEL in one call (zstd's promise). */
        size_t zsize = ZSTD_estimateCCtxSize(ZSTD_LEVEL);
        w->zwork = nnp__malloc(zsize);
        w->zctx = w->zwork ? ZSTD_initStaticCCtx(w->zwork, zsize) : NULL;
    }
    w->zbuf = nnp__malloc(w->zbuf_cap);
    /* The packer's state and output, once per writer: its thread never allocates. */
    w->pack = nnp__malloc(sizeof(*w->pack));
    w->pbuf = nnp__malloc(PBUF_BYTES);
    w->scratch = nnp__malloc((CHUNK_MAX_SLOTS + NNP_REC_MAX_SLOTS) * sizeof(nnp_rec_t));
    w->meta_buf = nnp__malloc(META_BATCH_BYTES);
    w->file_bytes = nnp__calloc(MAX_TRACKED_FILES, sizeof(uint64_t));
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->done_cond, NULL);
    if (!w->zctx || !w->zbuf || !w->pack || !w->pbuf || !w->scratch || !w->meta_buf ||
        !w->file_bytes) {
        rc = nnp__fail(NNP_ENOMEM, "out of memory creating the writer");
        goto fail;
    }
    w->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (w->wake_fd < 0) {
        rc = nnp__fail(nnp__from_errno(errno), "eventfd: %s", strerror(errno));
        goto fail;
    }
    /* Files are created by the first drain with something to write (open_files). */
    nnp__tbuf_session_reset();
    w->orphan_reported = atomic_load(&nnp__orphan_drops);
    nnp__clock_point(&w->start_clock);
    w->last_disk_ns = nnp__mono_ns();
    /* The writer must never take the host's SIGINT/SIGTERM: the handler flushes through it. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&w->thread, NULL, writer_main, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0)
        atomic_store(&nnp__writer_wake_fd, w->wake_fd);
    if (rc != 0) {
        rc = nnp__fail(NNP_ENOMEM, "cannot start the writer thread: %s", strerror(rc));
        goto fail;
    }
    *out = w;
    return NNP_OK;
fail:
    release(w, true);
    return rc;
}

int nnp__writer_flush(nnp_writer_t *w)
{
    uint64_t ticket = atomic_fetch_add(&w->flush_req, 1) + 1;
    wake(w);
    pthread_mutex_lock(&w->lock);
    while (atomic_load(&w->flush_done) < ticket)
        pthread_cond_wait(&w->done_cond, &w->lock);
    pthread_mutex_unlock(&w->lock);
    return atomic_load(&w->io_error);
}

int nnp__writer_flush_make(nnp_writer_t *w)
{
    atomic_store(&w->make_files, true);
    return nnp__writer_flush(w);
}

int nnp__writer_flush_from_signal(nnp_writer_t *w, int timeout_ms)
{
    uint64_t ticket = atomic_fetch_add(&w->flush_req, 1) + 1;
    struct timespec ts = {0, SIGNAL_POLL_NS};
    long waited_ns = 0;
    wake(w);
    while (atomic_load(&w->flush_done) < ticket) {
        if (waited_ns >= (long)timeout_ms * 1000000L)
            return -1;
        nanosleep(&ts, NULL);
        waited_ns += SIGNAL_POLL_NS;
    }
    return 0;
}

int nnp__writer_stop(nnp_writer_t *w)
{
    int rc;
    if (!w)
        return NNP_OK;
    atomic_store(&nnp__writer_wake_fd, -1);
    atomic_store(&w->stop, true);
    wake(w);
    pthread_join(w->thread, NULL);
    if (w->data_fd >= 0 && fsync(w->data_fd) != 0)
        nnp__wr_io_error(w, NNP_EIO, "fsync of the data file failed", errno);
    if (w->meta_fd >= 0 && fsync(w->meta_fd) != 0)
        nnp__wr_io_error(w, NNP_EIO, "fsync of the meta file failed", errno);
    rc = atomic_load(&w->io_error);
    release(w, true);
    return rc;
}

void nnp__writer_forget(nnp_writer_t *w)
{
    if (!w)
        return;
    /* The parent's thread does not exist here and its lock may be held: only what the child
     * owns outright (its copies of the descriptors, the heap) is released. */
    release(w, false);
}

bool nnp__writer_has_files(const nnp_writer_t *w)
{
    return w && atomic_load(&((nnp_writer_t *)w)->has_files);
}

void nnp__writer_stats(const nnp_writer_t *w, nnp_stats_t *out)
{
    nnp_writer_t *m = (nnp_writer_t *)w; /* atomics are read-only here */
    out->events_recorded = atomic_load(&m->events_recorded);
    out->events_dropped = atomic_load(&m->events_dropped);
    out->bytes_raw = atomic_load(&m->bytes_raw);
    out->bytes_written = atomic_load(&m->bytes_written);
    out->chunks_written = atomic_load(&m->chunks);
    out->files_aged_out = atomic_load(&m->files_aged);
    out->bytes_aged_out = atomic_load(&m->bytes_aged);
    out->threads = atomic_load(&m->threads);
    out->events_unwritten = atomic_load(&m->events_unwritten);
    out->write_errors = atomic_load(&m->write_errors);
    out->disk_full = atomic_load(&m->disk_full);
}
