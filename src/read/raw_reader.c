/* raw_reader.c - see raw_reader.h. Files are mapped read-only; a chunk is trusted only
 * after its header CRC (then its length) and its payload CRC check out. After a bad
 * header the reader scans forward for the next valid header, so one flipped byte costs
 * one chunk, not the rest of the file. Nothing here aborts on input. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "format/rec_pack.h"
#include "read/raw_reader.h"
#include "read/seq_set.h"
#include "util/util.h"

#define META_FILE   "meta.nnp"
#define DATA_PREFIX "data_"
#define DATA_SUFFIX ".nnp"
/* Upper bound of data files considered (the writer tracks at most 64 Ki at once). */
#define MAX_DATA_FILES (1u << 20)
#define NS_PER_SEC     1000000000.0

typedef struct thread_info {
    uint64_t tid;
    uint32_t name;
} thread_info_t;

struct nnp_raw {
    char dir[NNP_PATH_MAX];
    char **strings;     /* id -> NUL-terminated copy, NULL if absent */
    uint32_t n_strings; /* capacity of strings (max id + 1) */
    thread_info_t *threads;
    uint32_t n_threads, threads_cap;
    nnp_clock_point_t *clocks;
    uint32_t n_clocks, clocks_cap;
    uint32_t *data_seqs; /* sorted file numbers present on disk */
    uint32_t n_data;
    uint32_t *aged_seqs;
    uint32_t n_aged, aged_cap;
    void *dbuf; /* decompression buffer, grown to the largest chunk */
    size_t dbuf_cap;
    ZSTD_DCtx *zctx;         /* one decompression context for every chunk, made on first use */
    nnp_pack_state_t *pack;  /* the unpacker's state (24 KiB), made on the first packed chunk */
    nnp_seq_set_t meta_seen; /* chunks of meta.nnp (read once, at open) */
    nnp_seq_set_t data_seen; /* chunks of the data files, emptied at each nnp__raw_read */
    nnp_raw_report_t report;
};

static void damage(nnp_raw_t *r, const char *file, uint64_t off, int code, const char *fmt, ...)
    NNP_PRINTF(5, 6);

static void damage(nnp_raw_t *r, const char *file, uint64_t off, int code, const char *fmt, ...)
{
    nnp_raw_report_t *rep = &r->report;
    if (rep->n_damage < NNP_RAW_MAX_DAMAGE) {
        nnp_raw_damage_t *d = &rep->damage[rep->n_damage];
        va_list ap;
        nnp__strlcpy(d->file, file, sizeof(d->file));
        d->offset = off;
        d->code = code;
        va_start(ap, fmt);
        vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
        va_end(ap);
    }
    rep->n_damage++;
}

/* Grows an array to hold at least need elements (doubling), capped at max. */
static int grow(void **arr, uint32_t *cap, uint32_t need, size_t elem, uint32_t max)
{
    uint32_t ncap;
    void *p;
    if (need <= *cap)
        return 0;
    if (need > max)
        return -1;
    ncap = *cap ? *cap : 16;
    while (ncap < need)
        ncap = ncap > max / 2 ? max : ncap * 2;
    p = nnp__realloc(*arr, (size_t)ncap * elem);
    if (!p)
        return -1;
    *arr = p;
    *cap = ncap;
    return 0;
}

/* ---- chunk iteration over one mapped file ---- */

typedef int (*chunk_fn)(nnp_raw_t *r, const char *file, const nnp_chunk_header_t *h,
                        const void *payload, uint64_t off, void *user);

static bool header_ok(const nnp_chunk_header_t *h)
{
    return h->magic == NNP_CHUNK_MAGIC &&
           nnp__crc32c(0, h, offsetof(nnp_chunk_header_t, header_crc)) == h->header_crc;
}

/* Finds the next offset >= from holding a valid chunk header, or len. */
static uint64_t resync(const unsigned char *base, uint64_t from, uint64_t len)
{
    for (uint64_t off = from; off + sizeof(nnp_chunk_header_t) <= len; off++) {
        nnp_chunk_header_t h;
        if (base[off] != (NNP_CHUNK_MAGIC & 0xFFu))
            continue;
        memcpy(&h, base + off, sizeof(h));
        if (header_ok(&h))
            return off;
    }
    return len;
}

/* Grows the decompression buffer to hold n bytes (at most NNP_CHUNK_MAX_RAW_BYTES, which
 * the caller has checked). */
static int ensure_dbuf(nnp_raw_t *r, size_t n)
{
    void *p;
    if (n <= r->dbuf_cap && r->dbuf)
        return 0;
    p = nnp__realloc(r->dbuf, n ? n : 1);
    if (!p)
        return -1;
    r->dbuf = p;
    r->dbuf_cap = n;
    return 0;
}

/* Bytes of a mapped file walked past before their pages are dropped from this process. */
#define RELEASE_STEP_BYTES (8u << 20)

/* Drops the pages of the mapping below off (whole pages, RELEASE_STEP_BYTES at a time):
 * the walk never goes back, and a 1 GB data file would otherwise stay resident, counted
 * in the analysis's peak memory. The page cache keeps them; only this mapping lets go. */
static void release_walked(const unsigned char *base, uint64_t *released, uint64_t off)
{
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t upto = off / page * page;
    if (upto < *released + RELEASE_STEP_BYTES)
        return;
    (void)madvise((void *)(base + *released), (size_t)(upto - *released), MADV_DONTNEED);
    *released = upto;
}

/* True when a chunk with this sequence number was read already: meta chunks are checked
 * against meta.nnp, data chunks against both (they share one numbering). */
static bool seen_before(const nnp_raw_t *r, bool is_meta, uint64_t seq)
{
    return nnp__seq_has(&r->meta_seen, seq) || (!is_meta && nnp__seq_has(&r->data_seen, seq));
}

static int walk_chunks(nnp_raw_t *r, const char *file, bool is_meta, const unsigned char *base,
                       uint64_t len, chunk_fn fn, void *user)
{
    nnp_raw_report_t *rep = &r->report;
    uint64_t off = sizeof(nnp_raw_file_header_t), released = 0;

    while (off < len) {
        nnp_chunk_header_t h;
        const void *payload;
        uint64_t next;
        int rc;

        if (len - off < sizeof(h)) {
            rep->chunks_truncated++;
            rep->bytes_skipped += len - off;
            damage(r, file, off, NNP_ETRUNC, "file ends inside a chunk header (%llu of %zu bytes)",
                   (unsigned long long)(len - off), sizeof(h));
            break;
        }
        memcpy(&h, base + off, sizeof(h));
        if (!header_ok(&h)) {
            next = resync(base, off + 1, len);
            rep->chunks_corrupt++;
            rep->bytes_skipped += next - off;
            damage(r, file, off, NNP_ECORRUPT,
                   "bad chunk header (%s); skipped %llu bytes to the next valid chunk",
                   h.magic == NNP_CHUNK_MAGIC ? "header checksum mismatch" : "bad magic",
                   (unsigned long long)(next - off));
            off = next;
            continue;
        }
        if (h.payload_bytes > len - off - sizeof(h)) {
            rep->chunks_truncated++;
            rep->bytes_skipped += len - off;
            damage(r, file, off, NNP_ETRUNC,
                   "chunk #%llu truncated: %llu of %u payload bytes present",
                   (unsigned long long)h.seq, (unsigned long long)(len - off - sizeof(h)),
                   h.payload_bytes);
            break;
        }
        payload = base + off + sizeof(h);
        next = off + sizeof(h) + h.payload_bytes;
        if (nnp__crc32c(0, payload, h.payload_bytes) != h.payload_crc) {
            rep->chunks_corrupt++;
            rep->bytes_skipped += next - off;
            damage(r, file, off, NNP_ECORRUPT, "chunk #%llu payload checksum mismatch, skipped",
                   (unsigned long long)h.seq);
            off = next;
            continue;
        }
        if (h.raw_bytes > NNP_CHUNK_MAX_RAW_BYTES ||
            (h.codec == NNP_CODEC_NONE && h.raw_bytes != h.payload_bytes) ||
            h.codec >= NNP_CODEC_COUNT ||
            (h.codec == NNP_CODEC_PACK &&
             (h.type != NNP_CHUNK_RECORDS || h.raw_bytes % sizeof(nnp_rec_t) != 0))) {
            rep->chunks_corrupt++;
            rep->bytes_skipped += next - off;
            damage(r, file, off, NNP_ECORRUPT, "chunk #%llu has impossible sizes or codec %u",
                   (unsigned long long)h.seq, h.codec);
            off = next;
            continue;
        }
        if (seen_before(r, is_meta, h.seq)) {
            /* Only an intact chunk counts as the first copy, so a damaged one is replaced
             * by a later intact copy rather than hiding it. */
            rep->chunks_duplicate++;
            rep->bytes_skipped += next - off;
            damage(r, file, off, NNP_ECORRUPT,
                   "chunk #%llu was read already (same sequence number): duplicate skipped",
                   (unsigned long long)h.seq);
            off = next;
            continue;
        }
        if (ensure_dbuf(r, h.raw_bytes) != 0) {
            damage(r, file, off, NNP_ENOMEM, "out of memory for chunk #%llu (%u bytes)",
                   (unsigned long long)h.seq, h.raw_bytes);
            return NNP_ENOMEM;
        }
        if (h.codec == NNP_CODEC_ZSTD && !r->zctx && !(r->zctx = ZSTD_createDCtx())) {
            damage(r, file, off, NNP_ENOMEM, "out of memory for chunk #%llu",
                   (unsigned long long)h.seq);
            return NNP_ENOMEM;
        }
        if (h.codec == NNP_CODEC_ZSTD) {
            /* A kept context: ZSTD_decompress makes (and zeroes) one per call. */
            size_t got =
                ZSTD_decompressDCtx(r->zctx, r->dbuf, r->dbuf_cap, payload, h.payload_bytes);
            if (ZSTD_isError(got) || got != h.raw_bytes) {
                rep->chunks_corrupt++;
                rep->bytes_skipped += next - off;
                damage(r, file, off, NNP_ECORRUPT, "chunk #%llu does not decompress: %s",
                       (unsigned long long)h.seq,
                       ZSTD_isError(got) ? ZSTD_getErrorName(got) : "wrong size");
                off = next;
                continue;
            }
            payload = r->dbuf;
        }
        if (h.codec == NNP_CODEC_PACK) {
            if (!r->pack && !(r->pack = nnp__malloc(sizeof(*r->pack)))) {
                damage(r, file, off, NNP_ENOMEM, "out of memory for chunk #%llu",
                       (unsigned long long)h.seq);
                return NNP_ENOMEM;
            }
            /* Every chunk unpacks alone, from a fresh state (the writer packs it so). */
            nnp__pack_reset(r->pack);
            if (nnp__pack_decode(r->pack, payload, h.payload_bytes, r->dbuf,
                                 h.raw_bytes / sizeof(nnp_rec_t)) != 0) {
                rep->chunks_corrupt++;
                rep->bytes_skipped += next - off;
                damage(r, file, off, NNP_ECORRUPT,
                       "chunk #%llu does not unpack to its %u bytes of records, skipped",
                       (unsigned long long)h.seq, h.raw_bytes);
                off = next;
                continue;
            }
            payload = r->dbuf;
        }
        if (((uintptr_t)payload % _Alignof(nnp_rec_t)) != 0) {
            /* A chunk found by resync at an odd offset: records need 8-byte alignment. */
            memcpy(r->dbuf, payload, h.raw_bytes);
            payload = r->dbuf;
        }
        rep->chunks_ok++;
        rep->chunks_by_codec[h.codec]++;
        nnp__seq_add(is_meta ? &r->meta_seen : &r->data_seen, h.seq);
        rc = fn(r, file, &h, payload, off, user);
        if (rc != 0)
            return rc;
        off = next;
        release_walked(base, &released, off);
    }
    return 0;
}

/* Maps path and walks its chunks. Missing or bad file headers are reported. */
static int read_file(nnp_raw_t *r, const char *name, uint32_t want_kind, chunk_fn fn, void *user)
{
    char path[NNP_PATH_MAX];
    struct stat st;
    nnp_raw_file_header_t fh;
    unsigned char *base;
    int fd, rc;

    if (nnp__path_join(path, sizeof(path), r->dir, name) != NNP_OK)
        return NNP_ETOOLONG;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        damage(r, name, 0, NNP_EIO, "cannot open: %s", strerror(errno));
        return NNP_OK;
    }
    if (fstat(fd, &st) != 0) {
        damage(r, name, 0, NNP_EIO, "cannot stat: %s", strerror(errno));
        close(fd);
        return NNP_OK;
    }
    if ((uint64_t)st.st_size < sizeof(fh)) {
        close(fd);
        damage(r, name, 0, NNP_ETRUNC, "file shorter than its %zu-byte header", sizeof(fh));
        r->report.bytes_skipped += (uint64_t)st.st_size;
        return NNP_OK;
    }
    base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (base == MAP_FAILED) {
        damage(r, name, 0, NNP_EIO, "cannot map: %s", strerror(errno));
        return NNP_OK;
    }
    memcpy(&fh, base, sizeof(fh));
    if (memcmp(fh.magic, NNP_RAW_MAGIC, NNP_RAW_MAGIC_LEN) != 0) {
        damage(r, name, 0, NNP_ECORRUPT, "not an nnprof raw file (bad magic)");
        rc = NNP_OK;
    } else if (fh.version < NNP_RAW_VERSION_MIN || fh.version > NNP_RAW_VERSION ||
               fh.endian_mark != NNP_RAW_ENDIAN_MARK || fh.slot_bytes != sizeof(nnp_rec_t) ||
               fh.header_bytes != sizeof(fh)) {
        damage(r, name, 0, NNP_EVERSION,
               "unsupported raw format (version %u, slot %u bytes); this reader reads v%d to v%d",
               fh.version, fh.slot_bytes, NNP_RAW_VERSION_MIN, NNP_RAW_VERSION);
        rc = NNP_OK;
    } else if (fh.file_kind != want_kind) {
        damage(r, name, 0, NNP_ECORRUPT, "file kind %u where %u was expected", fh.file_kind,
               want_kind);
        rc = NNP_OK;
    } else {
        if (fh.version > r->report.format_version)
            r->report.format_version = fh.version;
        rc = walk_chunks(r, name, want_kind == NNP_FILE_META, base, (uint64_t)st.st_size, fn, user);
    }
    munmap(base, (size_t)st.st_size);
    return rc;
}

/* ---- meta file ---- */

static int add_string(nnp_raw_t *r, uint32_t id, const char *s, uint32_t len)
{
    char *copy;
    /* No id is above the recorder's cap: refusing one keeps a crafted id from making the
     * id-indexed array huge. (The size of meta.nnp is no bound: its chunks are compressed,
     * and a session after the first of a process re-emits every string of the process,
     * thousands of short ones in a few KiB.) */
    if (id == 0 || id > NNP_RAW_MAX_STRING_ID)
        return -1;
    if (id >= r->n_strings) {
        uint32_t cap = r->n_strings;
        char **p = (char **)r->strings;
        if (grow((void **)&p, &cap, id + 1, sizeof(char *), NNP_RAW_MAX_STRING_ID + 1) != 0)
            return -1;
        memset(p + r->n_strings, 0, (size_t)(cap - r->n_strings) * sizeof(char *));
        r->strings = p;
        r->n_strings = cap;
    }
    if (r->strings[id])
        return 0; /* a later session of the same process re-emits strings */
    copy = nnp__malloc((size_t)len + 1);
    if (!copy)
        return -1;
    memcpy(copy, s, len);
    copy[len] = '\0';
    r->strings[id] = copy;
    return 0;
}

static int meta_chunk(nnp_raw_t *r, const char *file, const nnp_chunk_header_t *h,
                      const void *payload, uint64_t off, void *user)
{
    const unsigned char *p = payload;
    size_t n = h->raw_bytes, pos = 0;
    (void)user;

    switch (h->type) {
    case NNP_CHUNK_STRINGS:
        while (pos + 8 <= n) {
            uint32_t hdr[2];
            memcpy(hdr, p + pos, sizeof(hdr));
            if (hdr[1] > n - pos - 8 || add_string(r, hdr[0], (const char *)p + pos + 8, hdr[1])) {
                damage(r, file, off, NNP_ECORRUPT, "bad string entry in chunk #%llu",
                       (unsigned long long)h->seq);
                break;
            }
            pos += 8 + (((size_t)hdr[1] + 3) & ~(size_t)3);
        }
        break;
    case NNP_CHUNK_THREADS:
        for (; pos + 16 <= n; pos += 16) {
            thread_info_t t;
            uint32_t i;
            memcpy(&t.tid, p + pos, 8);
            memcpy(&t.name, p + pos + 8, 4);
            for (i = 0; i < r->n_threads && r->threads[i].tid != t.tid; i++)
                ;
            if (i == r->n_threads) {
                if (grow((void **)&r->threads, &r->threads_cap, i + 1, sizeof(t), UINT32_MAX / 2))
                    return NNP_ENOMEM;
                r->n_threads++;
            }
            if (t.name != 0 || i == r->n_threads - 1)
                r->threads[i] = t;
        }
        break;
    case NNP_CHUNK_CLOCK:
        for (; pos + sizeof(nnp_clock_point_t) <= n; pos += sizeof(nnp_clock_point_t)) {
            if (grow((void **)&r->clocks, &r->clocks_cap, r->n_clocks + 1,
                     sizeof(nnp_clock_point_t), UINT32_MAX / 64))
                return NNP_ENOMEM;
            memcpy(&r->clocks[r->n_clocks++], p + pos, sizeof(nnp_clock_point_t));
        }
        break;
    case NNP_CHUNK_LOSS:
        for (; pos + 16 <= n; pos += 16) {
            uint64_t d;
            memcpy(&d, p + pos + 8, 8);
            r->report.events_lost += d;
        }
        break;
    case NNP_CHUNK_AGED:
        for (; pos + 16 <= n; pos += 16) {
            uint32_t seq;
            uint64_t bytes;
            memcpy(&seq, p + pos, 4);
            memcpy(&bytes, p + pos + 8, 8);
            if (grow((void **)&r->aged_seqs, &r->aged_cap, r->n_aged + 1, sizeof(uint32_t),
                     MAX_DATA_FILES))
                return NNP_ENOMEM;
            r->aged_seqs[r->n_aged++] = seq;
            r->report.data_files_aged++;
            r->report.bytes_aged += bytes;
        }
        break;
    default:
        damage(r, file, off, NNP_EVERSION, "unknown meta chunk type %u, skipped", h->type);
        break;
    }
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int list_data_files(nnp_raw_t *r)
{
    DIR *d = opendir(r->dir);
    struct dirent *e;
    uint32_t cap = 0;

    if (!d)
        return nnp__fail(nnp__from_errno(errno), "cannot list '%s': %s", r->dir, strerror(errno));
    while ((e = readdir(d)) != NULL) {
        char *end;
        unsigned long seq;
        if (strncmp(e->d_name, DATA_PREFIX, strlen(DATA_PREFIX)) != 0)
            continue;
        errno = 0;
        seq = strtoul(e->d_name + strlen(DATA_PREFIX), &end, 10);
        if (errno || strcmp(end, DATA_SUFFIX) != 0 || seq == 0 || seq > UINT32_MAX)
            continue;
        if (grow((void **)&r->data_seqs, &cap, r->n_data + 1, sizeof(uint32_t), MAX_DATA_FILES)) {
            closedir(d);
            return nnp__fail(NNP_ENOMEM, "too many data files in '%s'", r->dir);
        }
        r->data_seqs[r->n_data++] = (uint32_t)seq;
    }
    closedir(d);
    if (r->n_data > 1)
        qsort(r->data_seqs, r->n_data, sizeof(uint32_t), cmp_u32);
    return NNP_OK;
}

static bool was_aged(const nnp_raw_t *r, uint32_t seq)
{
    for (uint32_t i = 0; i < r->n_aged; i++) {
        if (r->aged_seqs[i] == seq)
            return true;
    }
    return false;
}

static bool is_file(const char *dir, const char *name)
{
    char path[NNP_PATH_MAX];
    struct stat st;
    return nnp__path_join(path, sizeof(path), dir, name) == NNP_OK && stat(path, &st) == 0 &&
           S_ISREG(st.st_mode);
}

/* True when dir holds at least one data_NNNNNN.nnp file. */
static bool has_data_file(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    bool found = false;
    if (!d)
        return false;
    while (!found && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        found = strncmp(e->d_name, DATA_PREFIX, strlen(DATA_PREFIX)) == 0 &&
                n > strlen(DATA_SUFFIX) &&
                strcmp(e->d_name + n - strlen(DATA_SUFFIX), DATA_SUFFIX) == 0;
    }
    closedir(d);
    return found;
}

bool nnp__raw_is_dir(const char *dir)
{
    /* meta.nnp, or data files whose meta file was lost (the records are still there). */
    return is_file(dir, META_FILE) || has_data_file(dir);
}

int nnp__raw_open(const char *dir, nnp_raw_t **out)
{
    nnp_raw_t *r;
    int rc;

    *out = NULL;
    if (!nnp__raw_is_dir(dir))
        return nnp__fail(NNP_ENOENT, "'%s' is not an nnprof raw directory (no %s, no data files)",
                         dir, META_FILE);
    r = nnp__calloc(1, sizeof(*r));
    if (!r)
        return nnp__fail(NNP_ENOMEM, "out of memory opening '%s'", dir);
    if (!nnp__strlcpy(r->dir, dir, sizeof(r->dir))) {
        nnp__free(r);
        return nnp__fail(NNP_ETOOLONG, "path too long: %s", dir);
    }
    if (is_file(dir, META_FILE)) {
        rc = read_file(r, META_FILE, NNP_FILE_META, meta_chunk, NULL);
    } else {
        /* Strings, thread names, clock points, losses and aging lived there. */
        r->report.meta_missing = true;
        damage(r, META_FILE, 0, NNP_ENOENT,
               "missing: strings, thread names, clock points and loss counts are lost");
        rc = NNP_OK;
    }
    if (rc == NNP_OK)
        rc = list_data_files(r);
    if (rc != NNP_OK) {
        nnp__raw_close(r);
        return rc;
    }
    /* Losses: the meta file's LOSS chunks, completed by the counters of info.json, which
     * the recorder rewrites from memory when the disk is too full for a LOSS chunk. */
    {
        nnp_raw_info_losses_t li;
        nnp_raw_report_t *rep = &r->report;
        nnp__raw_info_losses(dir, &li);
        rep->events_lost_buffer =
            rep->events_lost > li.events_dropped ? rep->events_lost : li.events_dropped;
        rep->events_lost_write = li.events_unwritten;
        rep->write_errors = li.write_errors;
        rep->disk_full = li.disk_full;
        rep->events_lost = rep->events_lost_buffer + rep->events_lost_write;
    }
    /* Gaps: files aged out are expected; others are reported as missing. */
    if (r->n_data > 0) {
        for (uint32_t seq = 1; seq < r->data_seqs[r->n_data - 1]; seq++) {
            bool present = bsearch(&seq, r->data_seqs, r->n_data, sizeof(uint32_t), cmp_u32);
            if (!present && !was_aged(r, seq)) {
                r->report.data_files_missing++;
                damage(r, META_FILE, 0, NNP_ENOENT, "data file %u is missing", seq);
            }
        }
    }
    *out = r;
    return NNP_OK;
}

int nnp__raw_add_clock(nnp_raw_t *r, const nnp_clock_point_t *p)
{
    if (grow((void **)&r->clocks, &r->clocks_cap, r->n_clocks + 1, sizeof(nnp_clock_point_t),
             UINT32_MAX / 64))
        return nnp__fail(NNP_ENOMEM, "out of memory");
    r->clocks[r->n_clocks++] = *p;
    return NNP_OK;
}

uint32_t nnp__raw_clock_count(const nnp_raw_t *r)
{
    return r->n_clocks;
}

void nnp__raw_close(nnp_raw_t *r)
{
    if (!r)
        return;
    for (uint32_t i = 0; i < r->n_strings; i++)
        nnp__free(r->strings[i]);
    nnp__free(r->strings);
    nnp__free(r->threads);
    nnp__free(r->clocks);
    nnp__free(r->data_seqs);
    nnp__free(r->aged_seqs);
    nnp__free(r->dbuf);
    ZSTD_freeDCtx(r->zctx);
    nnp__seq_clear(&r->meta_seen);
    nnp__seq_clear(&r->data_seen);
    nnp__free(r->pack);
    nnp__free(r);
}

/* ---- data files ---- */

/* double -> uint64_t without undefined behaviour: times before the clock's zero (a tick
 * value before the first clock point, or a corrupt one) clamp to 0, overflow to max. */
static uint64_t clamp_ns(double v)
{
    if (!(v > 0.0))
        return 0;
    if (v >= 18446744073709551616.0)
        return UINT64_MAX;
    return (uint64_t)v;
}

/* The segment of ticks: the last clock point with .ticks <= ticks, clamped to a valid
 * segment (0 .. n_clocks - 2); n_clocks >= 2. */
static uint32_t find_segment(const nnp_raw_t *r, uint64_t ticks)
{
    uint32_t lo = 0, hi = r->n_clocks - 1;
    while (lo + 1 < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (r->clocks[mid].ticks <= ticks)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* ticks converted on the line through clock points lo and lo + 1. */
static uint64_t segment_ns(const nnp_raw_t *r, uint32_t lo, uint64_t ticks)
{
    const nnp_clock_point_t *a = &r->clocks[lo], *b = &r->clocks[lo + 1];
    double slope;
    if (b->ticks == a->ticks)
        return a->mono_ns;
    slope = ((double)b->mono_ns - (double)a->mono_ns) / ((double)b->ticks - (double)a->ticks);
    return clamp_ns((double)a->mono_ns + ((double)ticks - (double)a->ticks) * slope);
}

uint64_t nnp__raw_ticks_to_ns(const nnp_raw_t *r, uint64_t ticks)
{
    const nnp_clock_point_t *a;
    double slope;

    if (r->n_clocks == 0)
        return ticks; /* no clock points: ticks are taken as ns */
    if (r->n_clocks == 1) {
        a = &r->clocks[0];
        slope = a->ticks_per_sec ? NS_PER_SEC / (double)a->ticks_per_sec : 1.0;
        return clamp_ns((double)a->mono_ns + ((double)ticks - (double)a->ticks) * slope);
    }
    return segment_ns(r, find_segment(r, ticks), ticks);
}

struct data_ctx {
    nnp_raw_cb cb;
    void *user;
    /* The segment of the last conversion, reused while ticks stay in it (records of a
     * chunk are in time order: a binary search per timestamp was most of the cost).
     * Only when the clock points are in tick order, where find_segment's answer is the
     * one segment whose bounds hold ticks; damaged points take the search every time. */
    bool seg_cache;
    uint32_t seg;
};

/* nnp__raw_ticks_to_ns, the same value, through the cached segment. */
static uint64_t ticks_to_ns_cached(const nnp_raw_t *r, struct data_ctx *c, uint64_t ticks)
{
    uint32_t s = c->seg;
    if (!c->seg_cache)
        return nnp__raw_ticks_to_ns(r, ticks);
    if (!((s == 0 || r->clocks[s].ticks <= ticks) &&
          (s + 2 == r->n_clocks || r->clocks[s + 1].ticks > ticks)))
        c->seg = s = find_segment(r, ticks);
    return segment_ns(r, s, ticks);
}

static unsigned expected_slots(const nnp_rec_t *rec)
{
    unsigned n = nnp__rec_kind_slots(rec->kind);
    if (rec->kind == NNP_REC_OP && (rec->flags & NNP_REC_F_FLOPS))
        n++;
    if (rec->kind == NNP_REC_KERNEL) {
        unsigned detail = rec->flags & (NNP_REC_F_LAUNCH | NNP_REC_F_COPY);
        if (detail == (NNP_REC_F_LAUNCH | NNP_REC_F_COPY))
            return 0; /* one detail slot at most: a record claiming both is damaged */
        if (detail)
            n++;
    }
    if (rec->kind == NNP_REC_COMM && (rec->flags & NNP_REC_F_COMM_DETAIL))
        n++;
    return n;
}

/* The 2-slot OP equal to an OP_BRIEF record (raw_format.h): readers see every op alike. */
static void brief_to_op(const nnp_rec_t *rec, nnp_rec_t op[2])
{
    nnp_rec_op_ext_t *x = (nnp_rec_op_ext_t *)&op[1];
    bool has_seq = (rec->flags & NNP_REC_F_SEQ) != 0;
    op[0] = *rec;
    op[0].kind = NNP_REC_OP;
    op[0].n_slots = 2;
    op[0].b = 0;
    memset(x, 0, sizeof(*x));
    x->type = rec->name;
    if (has_seq) {
        x->sequence_nr = (int64_t)(rec->b & NNP_REC_BRIEF_SEQ_MAX);
        x->seq_thread = (uint32_t)(rec->b >> NNP_REC_BRIEF_THREAD_SHIFT);
    }
}

static int data_chunk(nnp_raw_t *r, const char *file, const nnp_chunk_header_t *h,
                      const void *payload, uint64_t off, void *user)
{
    struct data_ctx *c = user;
    const nnp_rec_t *slots = payload;
    uint64_t n = h->raw_bytes / sizeof(nnp_rec_t), i = 0;

    if (h->type != NNP_CHUNK_RECORDS) {
        damage(r, file, off, NNP_EVERSION, "unknown data chunk type %u, skipped", h->type);
        return 0;
    }
    while (i < n) {
        const nnp_rec_t *rec = &slots[i];
        nnp_rec_t brief[2];
        nnp_raw_event_t ev;
        unsigned want = expected_slots(rec);
        int rc;

        if (want == 0 || rec->n_slots != want || i + want > n) {
            damage(r, file, off, NNP_ECORRUPT,
                   "chunk #%llu: record %llu has kind %u with %u slots; rest of chunk skipped",
                   (unsigned long long)h->seq, (unsigned long long)i, rec->kind, rec->n_slots);
            r->report.bytes_skipped += (n - i) * sizeof(nnp_rec_t);
            break;
        }
        ev.kind = rec->kind;
        ev.n_slots = want;
        ev.slots = rec;
        if (rec->kind == NNP_REC_OP_BRIEF) {
            brief_to_op(rec, brief);
            ev.kind = NNP_REC_OP;
            ev.n_slots = 2;
            ev.slots = brief;
        }
        ev.tid = h->tid;
        ev.ts_ns = (rec->flags & NNP_REC_F_TS_NS) ? rec->ts : ticks_to_ns_cached(r, c, rec->ts);
        ev.end_ns = ev.ts_ns;
        if (ev.kind == NNP_REC_OP || rec->kind == NNP_REC_KERNEL || rec->kind == NNP_REC_COMM ||
            rec->kind == NNP_REC_CALL)
            ev.end_ns = (rec->flags & NNP_REC_F_TS_NS) ? rec->a : ticks_to_ns_cached(r, c, rec->a);
        r->report.records++;
        rc = c->cb(c->user, &ev);
        if (rc != 0)
            return rc;
        i += want;
    }
    return 0;
}

int nnp__raw_read(nnp_raw_t *r, nnp_raw_cb cb, void *user)
{
    struct data_ctx c = {cb, user, r->n_clocks >= 2, 0};
    for (uint32_t i = 1; c.seg_cache && i < r->n_clocks; i++)
        c.seg_cache = r->clocks[i - 1].ticks <= r->clocks[i].ticks;
    nnp__seq_clear(&r->data_seen); /* a second read delivers the records again */
    for (uint32_t i = 0; i < r->n_data; i++) {
        char name[64];
        int rc;
        snprintf(name, sizeof(name), DATA_PREFIX "%06u" DATA_SUFFIX, r->data_seqs[i]);
        r->report.data_files++;
        rc = read_file(r, name, NNP_FILE_DATA, data_chunk, &c);
        if (rc != 0)
            return rc;
    }
    return NNP_OK;
}

const char *nnp__raw_str(const nnp_raw_t *r, uint32_t id)
{
    if (id == 0)
        return "";
    if (id >= r->n_strings)
        return NULL;
    return r->strings[id];
}

uint32_t nnp__raw_thread_name(const nnp_raw_t *r, uint64_t tid)
{
    for (uint32_t i = 0; i < r->n_threads; i++) {
        if (r->threads[i].tid == tid)
            return r->threads[i].name;
    }
    return 0;
}

uint32_t nnp__raw_thread_count(const nnp_raw_t *r)
{
    return r->n_threads;
}

uint64_t nnp__raw_thread_tid(const nnp_raw_t *r, uint32_t i)
{
    return i < r->n_threads ? r->threads[i].tid : 0;
}

const nnp_raw_report_t *nnp__raw_report(const nnp_raw_t *r)
{
    return &r->report;
}

const char *nnp__raw_dir(const nnp_raw_t *r)
{
    return r->dir;
}
