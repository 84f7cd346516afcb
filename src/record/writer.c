/* writer.c - see writer.h. Threading: the writer thread owns the files and every field
 * below marked "writer"; other threads only touch the atomics (flush requests, stop,
 * counters) and the condition variable. Flush protocol: a requester takes a ticket from
 * flush_req and waits until flush_done reaches it; the writer reads flush_req *before*
 * draining, so whatever the requester committed before taking its ticket is drained.
 * Signals (SIGTERM/SIGINT handlers) use the same tickets with an eventfd wake-up. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "core/clock.h"
#include "record/strtab.h"
#include "record/tbuf.h"
#include "record/writer.h"

/* Largest batch of slots per RECORDS chunk (256 KiB raw): small enough that one damaged
 * chunk loses little, large enough for zstd to find repetition. */
#define CHUNK_MAX_SLOTS 8192u
/* zstd level 1: ~500 MB/s per core, ratio ~4-8x on records; higher levels cost the
 * writer CPU the host may need. */
#define ZSTD_LEVEL 1
/* A clock point every second bounds tick-to-ns interpolation error to TSC drift over 1 s. */
#define CLOCK_PERIOD_NS NNP_NS_PER_SEC
/* Free disk space is checked at most this often (statvfs is a syscall). */
#define DISK_CHECK_PERIOD_NS (NNP_NS_PER_SEC / 4)
/* Upper bound of data files tracked for aging; the oldest entries are the ones removed. */
#define MAX_TRACKED_FILES 65536u
#define SIGNAL_POLL_NS    1000000L
/* Bytes reserved in the scratch buffer for one STRINGS/THREADS/LOSS chunk at a time. */
#define META_BATCH_BYTES (1u << 20)
/* A raw directory that could not be created is tried again at most this often: the cause
 * (permissions, a full disk) rarely goes away within a drain period. */
#define OPEN_RETRY_NS NNP_NS_PER_SEC

struct nnp_writer {
    char dir[NNP_PATH_MAX];
    int period_ms;
    uint64_t raw_file_bytes;
    uint64_t limit_bytes;
    nnp_writer_open_dir_fn open_dir;
    void *open_dir_user;

    pthread_t thread;
    int wake_fd; /* eventfd: flush request or stop */
    _Atomic uint64_t flush_req;
    _Atomic uint64_t flush_done;
    _Atomic bool stop;
    _Atomic bool make_files; /* nnp__writer_flush_make(): create the files even if empty */
    pthread_mutex_t lock;
    pthread_cond_t done_cond;

    /* writer-owned */
    int meta_fd, data_fd;
    uint32_t data_seq;   /* current data file number, from 1 */
    uint64_t data_bytes; /* size of the current data file */
    uint64_t meta_bytes;
    uint64_t *file_bytes; /* sizes of data files oldest_seq..data_seq */
    uint32_t oldest_seq;
    uint64_t total_data_bytes; /* sum of live data files */
    uint64_t chunk_seq;
    uint32_t strings_emitted;
    uint64_t last_clock_ns, last_disk_ns;
    uint64_t orphan_reported;
    ZSTD_CCtx *zctx;
    nnp_rec_t *scratch; /* CHUNK_MAX_SLOTS + NNP_REC_MAX_SLOTS slots */
    void *zbuf;
    size_t zbuf_cap;
    unsigned char *meta_buf; /* META_BATCH_BYTES */
    bool io_failed_logged, disk_full_logged;
    bool busy;             /* last drain found a buffer over half full */
    bool files_open;       /* the raw directory and meta.nnp exist (created on first data) */
    bool aging;            /* inside enforce_storage(): a failed AGED write must not recurse */
    uint64_t next_open_ns; /* earliest retry of a failed directory or data file creation */
    nnp_clock_point_t start_clock; /* the first CLOCK point, written when files open */

    /* counters (written by the writer, read by anyone) */
    _Atomic uint64_t events_recorded, events_dropped, bytes_raw, bytes_written, chunks;
    _Atomic uint64_t events_unwritten, write_errors;
    _Atomic uint64_t files_aged, bytes_aged;
    _Atomic uint32_t threads;
    _Atomic bool disk_full, has_files;
    _Atomic int io_error; /* sticky first error */
};

/* Counts a failed write (err: its errno) and logs the first one; a full disk is logged once
 * on its own, since it is the failure a long run meets and the one the user can act on. */
static void set_io_error(nnp_writer_t *w, int code, const char *what, int err)
{
    int expected = NNP_OK;
    bool full = err == ENOSPC || err == EDQUOT;
    atomic_fetch_add_explicit(&w->write_errors, 1, memory_order_relaxed);
    if (full) {
        atomic_store(&w->disk_full, true);
        if (!w->disk_full_logged)
            NNP_LOG_E("raw data writer: the disk holding %s is full (%s): events are being "
                      "lost; info.json and `nnprof info` count them",
                      w->dir, strerror(err));
        w->disk_full_logged = true;
    }
    if (atomic_compare_exchange_strong(&w->io_error, &expected, code) || !w->io_failed_logged) {
        if (!full && err != 0)
            NNP_LOG_E("raw data writer: %s: %s (events are being lost)", what, strerror(err));
        else if (!full)
            NNP_LOG_E("raw data writer: %s (events are being lost)", what);
        w->io_failed_logged = true;
    }
}

/* write(2) of all n bytes; 0 or the errno that stopped it. */
static int put_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 ? errno : EIO;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static int open_raw_file(nnp_writer_t *w, const char *name, uint32_t kind, uint32_t seq,
                         int *fd_out)
{
    char path[NNP_PATH_MAX];
    nnp_raw_file_header_t h;
    int fd, rc;

    rc = nnp__path_join(path, sizeof(path), w->dir, name);
    if (rc != NNP_OK)
        return rc;
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) {
        int err = errno;
        rc = nnp__fail(nnp__from_errno(err), "cannot create '%s': %s", path, strerror(err));
        errno = err; /* for the caller's count of a full disk */
        return rc;
    }
    memset(&h, 0, sizeof(h));
    memcpy(h.magic, NNP_RAW_MAGIC, NNP_RAW_MAGIC_LEN);
    h.version = NNP_RAW_VERSION;
    h.header_bytes = sizeof(h);
    h.endian_mark = NNP_RAW_ENDIAN_MARK;
    h.slot_bytes = sizeof(nnp_rec_t);
    h.file_kind = kind;
    h.file_seq = seq;
    rc = put_all(fd, &h, sizeof(h));
    if (rc != 0) {
        int err = rc;
        close(fd);
        unlink(path);
        rc = nnp__fail(nnp__from_errno(err), "cannot write '%s': %s", path, strerror(err));
        errno = err;
        return rc;
    }
    *fd_out = fd;
    return NNP_OK;
}

static uint64_t enforce_storage(nnp_writer_t *w, bool check_disk);

/* Writes one chunk (compressing when it pays) to fd, whose size is size_before. Returns 0
 * or the errno of a failed write, after cutting the file back to size_before so a later
 * chunk follows the last whole one (the disk may fill in the middle of a chunk). */
static int write_chunk_once(nnp_writer_t *w, int fd, uint64_t size_before, uint16_t type,
                            const void *payload, uint32_t raw_bytes, uint32_t count, uint64_t tid,
                            uint64_t *wrote)
{
    nnp_chunk_header_t h;
    const void *out = payload;
    uint32_t out_bytes = raw_bytes;
    uint16_t codec = NNP_CODEC_NONE;
    int err;

    if (raw_bytes > 0) {
        size_t need = ZSTD_compressBound(raw_bytes);
        if (need <= w->zbuf_cap) {
            size_t z =
                ZSTD_compressCCtx(w->zctx, w->zbuf, w->zbuf_cap, payload, raw_bytes, ZSTD_LEVEL);
            if (!ZSTD_isError(z) && z < raw_bytes) {
                out = w->zbuf;
                out_bytes = (uint32_t)z;
                codec = NNP_CODEC_ZSTD;
            }
        }
    }
    memset(&h, 0, sizeof(h));
    h.magic = NNP_CHUNK_MAGIC;
    h.type = type;
    h.codec = codec;
    h.payload_bytes = out_bytes;
    h.raw_bytes = raw_bytes;
    h.payload_crc = nnp__crc32c(0, out, out_bytes);
    h.count = count;
    h.seq = ++w->chunk_seq;
    h.tid = tid;
    h.header_crc = nnp__crc32c(0, &h, offsetof(nnp_chunk_header_t, header_crc));
    err = put_all(fd, &h, sizeof(h));
    if (err == 0)
        err = put_all(fd, out, out_bytes);
    if (err != 0) {
        (void)!ftruncate(fd, (off_t)size_before);
        return err;
    }
    *wrote = sizeof(h) + out_bytes;
    return 0;
}

/* write_chunk_once(); when the disk is full, ages out old data as seed 004's 20 MB rule
 * allows and tries once more. Returns the bytes written, 0 when the chunk is lost. */
static uint64_t write_chunk(nnp_writer_t *w, int fd, uint64_t size_before, uint16_t type,
                            const void *payload, uint32_t raw_bytes, uint32_t count, uint64_t tid)
{
    uint64_t wrote = 0;
    int err = write_chunk_once(w, fd, size_before, type, payload, raw_bytes, count, tid, &wrote);
    if ((err == ENOSPC || err == EDQUOT) && !w->aging && enforce_storage(w, true) > 0)
        err = write_chunk_once(w, fd, size_before, type, payload, raw_bytes, count, tid, &wrote);
    if (err != 0) {
        set_io_error(w, NNP_EIO, "chunk write failed", err);
        return 0;
    }
    atomic_fetch_add_explicit(&w->bytes_written, wrote, memory_order_relaxed);
    atomic_fetch_add_explicit(&w->chunks, 1, memory_order_relaxed);
    return wrote;
}

static void write_meta(nnp_writer_t *w, uint16_t type, const void *p, uint32_t n, uint32_t count)
{
    if (w->meta_fd >= 0)
        w->meta_bytes += write_chunk(w, w->meta_fd, w->meta_bytes, type, p, n, count, 0);
}

/* ---- storage limit ---- */

static void record_aged(nnp_writer_t *w, uint32_t seq, uint64_t bytes)
{
    struct {
        uint32_t seq, zero;
        uint64_t bytes;
    } e = {seq, 0, bytes};
    write_meta(w, NNP_CHUNK_AGED, &e, sizeof(e), 1);
}

/* Free bytes on the file system of the raw directory; false when statvfs fails (an
 * unknown amount is not "0 bytes free"). */
static bool disk_free(const nnp_writer_t *w, uint64_t *out)
{
    struct statvfs sv;
    if (statvfs(w->dir, &sv) != 0)
        return false;
    *out = (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
    return true;
}

/* Seed 004's aging: deletes the oldest data files (never the current one) while the run's
 * raw data is over storage_limit, or (check_disk) while the disk has less than 20 MB free.
 * The second rule deletes no more than the shortfall, so a disk that other data filled
 * does not cost the run more of its history than keeping 20 MB free requires. Says what
 * it deleted and why. Returns the number of files deleted. */
static uint64_t enforce_storage(nnp_writer_t *w, bool check_disk)
{
    uint64_t free_bytes = 0, free_seen = 0;
    uint64_t n_limit = 0, b_limit = 0, n_disk = 0, b_disk = 0;
    bool know_free = check_disk && disk_free(w, &free_bytes);

    free_seen = free_bytes;
    w->aging = true;
    while (w->oldest_seq < w->data_seq) {
        uint64_t used = w->total_data_bytes + w->meta_bytes;
        bool over = used > w->limit_bytes;
        bool short_of_reserve = know_free && free_bytes < NNP_DISK_RESERVE_BYTES;
        char name[64], path[NNP_PATH_MAX];
        uint64_t sz;

        if (!over && !short_of_reserve)
            break;
        sz = w->file_bytes[(w->oldest_seq - 1) % MAX_TRACKED_FILES];
        snprintf(name, sizeof(name), NNP_RAW_DATA_FMT, w->oldest_seq);
        if (nnp__path_join(path, sizeof(path), w->dir, name) == NNP_OK)
            unlink(path);
        record_aged(w, w->oldest_seq, sz);
        w->total_data_bytes -= sz;
        if (know_free)
            free_bytes += sz;
        w->oldest_seq++;
        if (over) {
            n_limit++;
            b_limit += sz;
        } else {
            n_disk++;
            b_disk += sz;
        }
    }
    w->aging = false;
    if (n_limit + n_disk == 0)
        return 0;
    atomic_fetch_add(&w->files_aged, n_limit + n_disk);
    atomic_fetch_add(&w->bytes_aged, b_limit + b_disk);
    if (n_limit > 0)
        NNP_LOG_W("storage_limit: aged out %llu oldest raw data file(s), %.1f MB, to keep the "
                  "run's raw data under %.1f MB; %.1f MB aged out in total",
                  (unsigned long long)n_limit, (double)b_limit / 1e6, (double)w->limit_bytes / 1e6,
                  (double)atomic_load(&w->bytes_aged) / 1e6);
    if (n_disk > 0)
        NNP_LOG_W("storage_limit: the disk of %s had %.1f MB free, under the %llu MB to keep "
                  "free: aged out %llu oldest raw data file(s), %.1f MB, no more than that "
                  "shortfall needs%s; %.1f MB aged out in total",
                  w->dir, (double)free_seen / 1e6,
                  (unsigned long long)(NNP_DISK_RESERVE_BYTES >> 20), (unsigned long long)n_disk,
                  (double)b_disk / 1e6,
                  free_bytes < NNP_DISK_RESERVE_BYTES
                      ? " (still short: only the data file being written is left)"
                      : "",
                  (double)atomic_load(&w->bytes_aged) / 1e6);
    return n_limit + n_disk;
}

static int rotate_data_file(nnp_writer_t *w)
{
    char name[64];
    int rc;

    if (w->data_fd >= 0)
        close(w->data_fd);
    w->data_fd = -1;
    if (w->data_seq - w->oldest_seq + 1 >= MAX_TRACKED_FILES) {
        /* Keep the tracking ring bounded: age out the oldest regardless of size. */
        uint64_t lim = w->limit_bytes;
        w->limit_bytes = 0;
        enforce_storage(w, false);
        w->limit_bytes = lim;
    }
    w->data_seq++;
    snprintf(name, sizeof(name), NNP_RAW_DATA_FMT, w->data_seq);
    rc = open_raw_file(w, name, NNP_FILE_DATA, w->data_seq, &w->data_fd);
    if (rc != NNP_OK) {
        w->data_seq--; /* nothing of that number exists: the retry reuses it */
        return rc;
    }
    w->data_bytes = sizeof(nnp_raw_file_header_t);
    w->file_bytes[(w->data_seq - 1) % MAX_TRACKED_FILES] = w->data_bytes;
    w->total_data_bytes += w->data_bytes;
    return NNP_OK;
}

static void account_data(nnp_writer_t *w, uint64_t n)
{
    uint64_t now;
    w->data_bytes += n;
    w->file_bytes[(w->data_seq - 1) % MAX_TRACKED_FILES] += n;
    w->total_data_bytes += n;
    now = nnp__mono_ns();
    if (w->data_bytes >= w->raw_file_bytes) {
        if (rotate_data_file(w) != NNP_OK) {
            int err = errno;
            set_io_error(w, NNP_EIO, "cannot open the next data file", err);
            w->next_open_ns = now + OPEN_RETRY_NS;
        }
        enforce_storage(w, true);
        w->last_disk_ns = now;
    } else if (w->total_data_bytes + w->meta_bytes > w->limit_bytes ||
               now - w->last_disk_ns > DISK_CHECK_PERIOD_NS) {
        enforce_storage(w, true);
        w->last_disk_ns = now;
    }
}

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
            write_meta(w, NNP_CHUNK_STRINGS, w->meta_buf, (uint32_t)used, count);
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
        write_meta(w, NNP_CHUNK_STRINGS, w->meta_buf, (uint32_t)used, count);
}

static void emit_clock(nnp_writer_t *w)
{
    nnp_clock_point_t p;
    nnp__clock_point(&p);
    write_meta(w, NNP_CHUNK_CLOCK, &p, sizeof(p), 1);
    w->last_clock_ns = p.mono_ns;
}

/* Copies slots [from, to) of b into the scratch buffer, handling the ring's wrap. */
static void copy_slots(nnp_writer_t *w, const nnp_tbuf_t *b, uint64_t from, uint64_t to)
{
    uint64_t n = to - from, i0 = from & b->mask;
    uint64_t first = b->cap - i0 < n ? b->cap - i0 : n;
    memcpy(w->scratch, &b->slots[i0], first * sizeof(nnp_rec_t));
    if (first < n)
        memcpy(w->scratch + first, &b->slots[0], (n - first) * sizeof(nnp_rec_t));
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
        write_meta(w, NNP_CHUNK_THREADS, &t, sizeof(t), 1);
        atomic_fetch_add(&w->threads, 1);
    }
    if (head - tail > b->cap / 2)
        w->busy = true; /* drain again at once instead of sleeping a period */
    while (tail < head) {
        uint64_t end = tail;
        uint32_t n_rec = 0;
        /* Cut at a record boundary: whole records only, at most CHUNK_MAX_SLOTS. */
        while (end < head) {
            unsigned n = b->slots[end & b->mask].n_slots;
            if (n == 0 || n > NNP_REC_MAX_SLOTS)
                n = 1; /* cannot happen with our producers; never loop forever */
            if (end + n - tail > CHUNK_MAX_SLOTS)
                break;
            end += n;
            n_rec++;
        }
        copy_slots(w, b, tail, end);
        if (w->data_fd >= 0) {
            uint64_t wrote =
                write_chunk(w, w->data_fd, w->data_bytes, NNP_CHUNK_RECORDS, w->scratch,
                            (uint32_t)((end - tail) * sizeof(nnp_rec_t)), n_rec, b->tid);
            if (wrote > 0) {
                atomic_fetch_add_explicit(&w->events_recorded, n_rec, memory_order_relaxed);
                atomic_fetch_add_explicit(&w->bytes_raw, (end - tail) * sizeof(nnp_rec_t),
                                          memory_order_relaxed);
                account_data(w, wrote);
            } else {
                atomic_fetch_add_explicit(&w->events_unwritten, n_rec, memory_order_relaxed);
            }
        } else {
            /* No data file (its creation failed): the records are lost, and counted. */
            atomic_fetch_add_explicit(&w->events_unwritten, n_rec, memory_order_relaxed);
        }
        tail = end;
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
    if (c.count > 0) {
        write_meta(w, NNP_CHUNK_LOSS, w->meta_buf, c.count * 2 * sizeof(uint64_t), c.count);
        NNP_LOG_W("event buffers were full: %llu events dropped so far (raise buffer_size_kb "
                  "or use full_policy \"block\")",
                  (unsigned long long)atomic_load(&w->events_dropped));
    }
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
        rc = open_raw_file(w, NNP_RAW_META_FILE, NNP_FILE_META, 0, &w->meta_fd);
        if (rc == NNP_OK)
            w->meta_bytes = sizeof(nnp_raw_file_header_t);
    }
    if (rc == NNP_OK && w->data_fd < 0)
        rc = rotate_data_file(w);
    err = errno;
    if (rc != NNP_OK) {
        set_io_error(w, rc, nnp_last_error(), err);
        w->next_open_ns = now + OPEN_RETRY_NS;
        return;
    }
    w->files_open = true;
    atomic_store(&w->has_files, true);
    write_meta(w, NNP_CHUNK_CLOCK, &w->start_clock, sizeof(w->start_clock), 1);
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
        if (rotate_data_file(w) != NNP_OK)
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

static void *writer_main(void *arg)
{
    nnp_writer_t *w = arg;
    struct pollfd pfd = {.fd = w->wake_fd, .events = POLLIN};

    for (;;) {
        uint64_t ticket, v;
        bool stopping;
        if (poll(&pfd, 1, w->busy ? 0 : w->period_ms) > 0)
            (void)!read(w->wake_fd, &v, sizeof(v));
        w->busy = false;
        stopping = atomic_load(&w->stop);
        ticket = atomic_load(&w->flush_req);
        drain_all(w);
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
    ZSTD_freeCCtx(w->zctx);
    nnp__free(w->zbuf);
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
    w->zctx = ZSTD_createCCtx();
    w->zbuf = nnp__malloc(w->zbuf_cap);
    w->scratch = nnp__malloc((CHUNK_MAX_SLOTS + NNP_REC_MAX_SLOTS) * sizeof(nnp_rec_t));
    w->meta_buf = nnp__malloc(META_BATCH_BYTES);
    w->file_bytes = nnp__calloc(MAX_TRACKED_FILES, sizeof(uint64_t));
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->done_cond, NULL);
    if (!w->zctx || !w->zbuf || !w->scratch || !w->meta_buf || !w->file_bytes) {
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
        set_io_error(w, NNP_EIO, "fsync of the data file failed", errno);
    if (w->meta_fd >= 0 && fsync(w->meta_fd) != 0)
        set_io_error(w, NNP_EIO, "fsync of the meta file failed", errno);
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
