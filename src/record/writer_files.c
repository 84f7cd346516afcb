/* writer_files.c - the writer's files (writer_internal.h): raw file headers, checksummed
 * chunks (records packed, meta chunks zstd-compressed), data file rotation, seed 004's
 * aging under storage_limit and the 20 MB free-space rule, and what a failed write leaves:
 * the file cut back to its last whole chunk, a counted loss, one log line. Runs on the
 * writer thread only. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "record/writer_internal.h"

/* Counts a failed write (err: its errno) and logs the first one; a full disk is logged once
 * on its own, since it is the failure a long run meets and the one the user can act on. */
void nnp__wr_io_error(nnp_writer_t *w, int code, const char *what, int err)
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

int nnp__wr_open_file(nnp_writer_t *w, const char *name, uint32_t kind, uint32_t seq, int *fd_out)
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

/* A chunk's payload as it goes to disk. */
typedef struct encoded {
    const void *p;
    uint32_t n;
    uint16_t codec;
} encoded_t;

/* Compresses a meta chunk's payload with zstd when that makes it smaller, in the writer's
 * workspace made at start (nothing is allocated). */
static encoded_t encode_meta(nnp_writer_t *w, const void *payload, uint32_t raw_bytes)
{
    encoded_t e = {payload, raw_bytes, NNP_CODEC_NONE};
    if (raw_bytes > 0 && ZSTD_compressBound(raw_bytes) <= w->zbuf_cap) {
        size_t z = ZSTD_compressCCtx(w->zctx, w->zbuf, w->zbuf_cap, payload, raw_bytes, ZSTD_LEVEL);
        if (!ZSTD_isError(z) && z < raw_bytes) {
            e.p = w->zbuf;
            e.n = (uint32_t)z;
            e.codec = NNP_CODEC_ZSTD;
        }
    }
    return e;
}

/* Writes one encoded chunk to fd, whose size is size_before. Returns 0 or the errno of a
 * failed write, after cutting the file back to size_before so a later chunk follows the
 * last whole one (the disk may fill in the middle of a chunk). */
static int write_chunk_once(nnp_writer_t *w, int fd, uint64_t size_before, uint16_t type,
                            const encoded_t *e, uint32_t raw_bytes, uint32_t count, uint64_t tid,
                            uint64_t *wrote)
{
    nnp_chunk_header_t h;
    int err;

    memset(&h, 0, sizeof(h));
    h.magic = NNP_CHUNK_MAGIC;
    h.type = type;
    h.codec = e->codec;
    h.payload_bytes = e->n;
    h.raw_bytes = raw_bytes;
    h.payload_crc = nnp__crc32c(0, e->p, e->n);
    h.count = count;
    h.seq = ++w->chunk_seq;
    h.tid = tid;
    h.header_crc = nnp__crc32c(0, &h, offsetof(nnp_chunk_header_t, header_crc));
    err = put_all(fd, &h, sizeof(h));
    if (err == 0)
        err = put_all(fd, e->p, e->n);
    if (err != 0) {
        (void)!ftruncate(fd, (off_t)size_before);
        return err;
    }
    *wrote = sizeof(h) + e->n;
    return 0;
}

/* Counts a written chunk, or the error that lost it. Returns the bytes written or 0. */
static uint64_t chunk_done(nnp_writer_t *w, int err, uint64_t wrote)
{
    if (err != 0) {
        nnp__wr_io_error(w, NNP_EIO, "chunk write failed", err);
        return 0;
    }
    atomic_fetch_add_explicit(&w->bytes_written, wrote, memory_order_relaxed);
    atomic_fetch_add_explicit(&w->chunks, 1, memory_order_relaxed);
    return wrote;
}

/* True when a failed write may succeed once seed 004's 20 MB rule has aged out old data;
 * ages it out. */
static bool age_for_retry(nnp_writer_t *w, int err)
{
    return (err == ENOSPC || err == EDQUOT) && !w->aging && nnp__wr_enforce_storage(w, true) > 0;
}

/* Writes a meta chunk; when the disk is full, ages out old data and tries once more. */
uint64_t nnp__wr_chunk(nnp_writer_t *w, int fd, uint64_t size_before, uint16_t type,
                       const void *payload, uint32_t raw_bytes, uint32_t count, uint64_t tid)
{
    uint64_t wrote = 0;
    encoded_t e = encode_meta(w, payload, raw_bytes);
    int err = write_chunk_once(w, fd, size_before, type, &e, raw_bytes, count, tid, &wrote);
    if (age_for_retry(w, err)) {
        /* Compressed again: the AGED chunks just written went through the same buffer. */
        e = encode_meta(w, payload, raw_bytes);
        err = write_chunk_once(w, fd, size_before, type, &e, raw_bytes, count, tid, &wrote);
    }
    return chunk_done(w, err, wrote);
}

uint32_t nnp__wr_pack(nnp_writer_t *w, size_t n_slots, size_t *n_used, uint32_t *n_records)
{
    size_t n;
    nnp__pack_reset(w->pack); /* a chunk unpacks alone: a damaged one loses only itself */
    n = nnp__pack_encode(w->pack, w->slots_in, n_slots, w->pbuf, n_used, n_records);
    if (*n_used == 0) {
        /* Cannot happen (producers publish whole records, of at most NNP_REC_MAX_SLOTS
         * slots): the slots go unpacked, as they are, so the writer never stalls on them. */
        *n_used = n_slots;
        *n_records = 1;
        return (uint32_t)(n_slots * sizeof(nnp_rec_t));
    }
    return (uint32_t)n;
}

uint64_t nnp__wr_records(nnp_writer_t *w, uint32_t packed_bytes, size_t n_slots, uint32_t count,
                         uint64_t tid)
{
    uint32_t raw_bytes = (uint32_t)(n_slots * sizeof(nnp_rec_t));
    encoded_t e = {w->pbuf, packed_bytes, NNP_CODEC_PACK};
    uint64_t wrote = 0;
    int err;

    if (packed_bytes >= raw_bytes) /* slots that are no records: kept as they are */
        e = (encoded_t){w->slots_in, raw_bytes, NNP_CODEC_NONE};
    err = write_chunk_once(w, w->data_fd, w->data_bytes, NNP_CHUNK_RECORDS, &e, raw_bytes, count,
                           tid, &wrote);
    /* The packed bytes are the writer's own buffer, which aging does not touch. */
    if (age_for_retry(w, err))
        err = write_chunk_once(w, w->data_fd, w->data_bytes, NNP_CHUNK_RECORDS, &e, raw_bytes,
                               count, tid, &wrote);
    return chunk_done(w, err, wrote);
}

void nnp__wr_meta(nnp_writer_t *w, uint16_t type, const void *p, uint32_t n, uint32_t count)
{
    if (w->meta_fd >= 0)
        w->meta_bytes += nnp__wr_chunk(w, w->meta_fd, w->meta_bytes, type, p, n, count, 0);
}

/* ---- storage limit ---- */

static void record_aged(nnp_writer_t *w, uint32_t seq, uint64_t bytes)
{
    struct {
        uint32_t seq, zero;
        uint64_t bytes;
    } e = {seq, 0, bytes};
    nnp__wr_meta(w, NNP_CHUNK_AGED, &e, sizeof(e), 1);
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
uint64_t nnp__wr_enforce_storage(nnp_writer_t *w, bool check_disk)
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

int nnp__wr_rotate(nnp_writer_t *w)
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
        nnp__wr_enforce_storage(w, false);
        w->limit_bytes = lim;
    }
    w->data_seq++;
    snprintf(name, sizeof(name), NNP_RAW_DATA_FMT, w->data_seq);
    rc = nnp__wr_open_file(w, name, NNP_FILE_DATA, w->data_seq, &w->data_fd);
    if (rc != NNP_OK) {
        w->data_seq--; /* nothing of that number exists: the retry reuses it */
        return rc;
    }
    w->data_bytes = sizeof(nnp_raw_file_header_t);
    w->file_bytes[(w->data_seq - 1) % MAX_TRACKED_FILES] = w->data_bytes;
    w->total_data_bytes += w->data_bytes;
    return NNP_OK;
}

void nnp__wr_account(nnp_writer_t *w, uint64_t n)
{
    uint64_t now;
    w->data_bytes += n;
    w->file_bytes[(w->data_seq - 1) % MAX_TRACKED_FILES] += n;
    w->total_data_bytes += n;
    now = nnp__mono_ns();
    if (w->data_bytes >= w->raw_file_bytes) {
        if (nnp__wr_rotate(w) != NNP_OK) {
            int err = errno;
            nnp__wr_io_error(w, NNP_EIO, "cannot open the next data file", err);
            w->next_open_ns = now + OPEN_RETRY_NS;
        }
        nnp__wr_enforce_storage(w, true);
        w->last_disk_ns = now;
    } else if (w->total_data_bytes + w->meta_bytes > w->limit_bytes ||
               now - w->last_disk_ns > DISK_CHECK_PERIOD_NS) {
        nnp__wr_enforce_storage(w, true);
        w->last_disk_ns = now;
    }
}
