/* test_reader.c - the raw reader against damaged data. Each test records a known run
 * (N_EVENTS step records, a flush every FLUSH_EVERY, so ~40 RECORDS chunks), learns the
 * chunk layout by parsing the files itself (not through the reader), then cuts, flips and
 * pads copies of the files and checks that the reader delivers exactly the records the
 * layout predicts and names the damage, and that chunks found twice (same sequence number)
 * are read once. The run is written packed (format v3); the same damage is checked on a copy
 * made as a version 2 writer made it (zstd-compressed records), and on packed chunks whose
 * checksums agree but whose bytes do not unpack. Also `nnprof dump` / `nnprof info` on
 * damaged data and dump's exit codes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <zstd.h>

#include "format/raw_format.h"
#include "format/rec_pack.h"
#include "read/raw_reader.h"
#include "test_util.h"
#include "util/util.h"

/* 40 flushes of 1,000 records: enough chunks that "every chunk boundary" means something,
 * small enough (~1.3 MB raw) that hundreds of damaged copies are read in seconds. */
#define N_EVENTS    40000u
#define FLUSH_EVERY 1000u
#define MIN_CHUNKS  (N_EVENTS / FLUSH_EVERY)
/* Graph id stored in every record's b field, to tell our records from anything else. */
#define GRAPH_ID 7u
/* A long writer period, so chunks are cut by our flushes rather than by the timer (the
 * expectations come from the parsed layout either way). */
#define WRITER_PERIOD_MS 1000
/* Strings interned before recording; they land in meta.nnp's STRINGS chunk(s). */
#define N_STRINGS 64u
/* Upper bounds of the layout arrays; the fixture fails if the run needs more. */
#define MAX_CHUNKS      4096u
#define MAX_META_CHUNKS 256u

/* Fixed seeds: a failure names the case, and rerunning reproduces it. */
#define SEED_CUTS      0x7265616465722d31ull
#define SEED_FLIPS     0x7265616465722d32ull
#define SEED_GARBAGE   0x7265616465722d33ull
#define N_RANDOM_CUTS  200u
#define N_RANDOM_FLIPS 400u

/* The single data file of the run, and the name the reader uses in damage entries. */
#define DATA_NAME   "data_000001.nnp"
#define DATA_NAME_2 "data_000002.nnp"
#define META_NAME   "meta.nnp"

#define FILE_HDR  sizeof(nnp_raw_file_header_t)
#define CHUNK_HDR sizeof(nnp_chunk_header_t)
#define PATH_BUF  4096
/* Room for one case description in failure messages. */
#define CTX_BUF 192
/* Nanoseconds per second, for the hand-made clock points. */
#define NS_PER_SEC 1000000000ull
/* Bytes kept of a string's text ("reader-test/string-NNNN" and its terminator fit). */
#define STR_TEXT_CAP 48
/* XOR masks of the byte flips: the smallest change, the top bit, every bit, and a mix. */
#define FLIP_LOW_BIT  0x01u
#define FLIP_TOP_BIT  0x80u
#define FLIP_ALL_BITS 0xFFu
#define FLIP_MIXED    0x5Au
/* Most junk bytes placed before a hand-made raw chunk. */
#define MAX_PAD 16u
/* Captured stderr of a CLI run read back at most this much. */
#define STDERR_CAP (1u << 20)

/* Fails the test with the case description, so a loop over hundreds of cases says which. */
#define EXPECT(ctx, cond)                                                                          \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fail_msg("%s: expected %s (line %d)", (ctx), #cond, __LINE__);                         \
    } while (0)

/* One chunk as found by parsing the file directly. */
typedef struct chunk_info {
    uint64_t off;   /* offset of the chunk header */
    uint64_t size;  /* header + payload bytes */
    uint32_t count; /* records (RECORDS) or entries (meta chunks) */
    uint64_t first; /* index of the chunk's first record in the run (data chunks) */
    uint16_t type;
    uint16_t codec;
    uint64_t seq; /* the chunk's sequence number */
} chunk_info_t;

typedef struct fixture {
    char *root;              /* this test's temp dir */
    char src_dir[PATH_BUF];  /* the intact raw dir the session wrote */
    char work_dir[PATH_BUF]; /* where damaged copies are written and read */
    unsigned char *data;     /* intact data_000001.nnp */
    size_t data_len;
    unsigned char *meta; /* intact meta.nnp */
    size_t meta_len;
    chunk_info_t chunks[MAX_CHUNKS];
    uint32_t n_chunks;
    chunk_info_t meta_chunks[MAX_META_CHUNKS];
    uint32_t n_meta_chunks;
    nnp_str_t str_ids[N_STRINGS];
    char str_text[N_STRINGS][STR_TEXT_CAP];
    int str_chunk[N_STRINGS]; /* meta chunk that holds string i, -1 if none */
    uint64_t max_seq;         /* highest chunk sequence number of the run (meta and data) */
    uint16_t codec;           /* of every data chunk: PACK as written, ZSTD in the v2 copy */
    uint32_t version;         /* of the data file */
} fixture_t;

/* What one read of a damaged copy produced. */
typedef struct readback {
    nnp_raw_t *raw; /* open until readback_done(), for nnp__raw_str() checks */
    uint64_t *a;    /* step ids delivered, in order */
    uint64_t n;
    uint64_t bad; /* records that are not ours or arrive past N_EVENTS */
    int open_rc, read_rc;
    nnp_raw_report_t rep; /* copy of the report after the read */
} readback_t;

/* splitmix64 (Steele, Lea, Flood 2014; constants from its reference code): tiny, seedable,
 * good enough to spread offsets over a file. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t rng_below(uint64_t *s, uint64_t n)
{
    return n ? rng_next(s) % n : 0;
}

/* ---- files ---- */

static void write_bytes(const char *dir, const char *name, const void *buf, size_t n)
{
    char path[PATH_BUF];
    FILE *f;
    assert_int_equal(nnp__path_join(path, sizeof(path), dir, name), NNP_OK);
    f = fopen(path, "wb");
    if (!f)
        fail_msg("cannot create %s: %s", path, strerror(errno));
    if (n > 0 && fwrite(buf, 1, n, f) != n)
        fail_msg("short write to %s", path);
    assert_int_equal(fclose(f), 0);
}

static unsigned char *load_file(const char *dir, const char *name, size_t *len)
{
    char path[PATH_BUF];
    char *buf = NULL;
    assert_int_equal(nnp__path_join(path, sizeof(path), dir, name), NNP_OK);
    assert_int_equal(nnp__read_file(path, SIZE_MAX / 2, &buf, len), NNP_OK);
    return (unsigned char *)buf;
}

static bool file_exists(const char *dir, const char *name)
{
    char path[PATH_BUF];
    struct stat st;
    return nnp__path_join(path, sizeof(path), dir, name) == NNP_OK && stat(path, &st) == 0;
}

static void remove_file(const char *dir, const char *name)
{
    char path[PATH_BUF];
    assert_int_equal(nnp__path_join(path, sizeof(path), dir, name), NNP_OK);
    unlink(path);
}

/* ---- ground truth: the layout, parsed without the reader ---- */

/* Walks the chunk headers of an intact file; every header must check out and the last
 * chunk must end exactly at the end of the file. */
static uint32_t parse_chunks(const unsigned char *buf, size_t len, chunk_info_t *out, uint32_t max)
{
    uint64_t off = FILE_HDR, first = 0;
    uint32_t n = 0;
    nnp_raw_file_header_t fh;

    assert_true(len >= FILE_HDR);
    memcpy(&fh, buf, sizeof(fh));
    assert_memory_equal(fh.magic, NNP_RAW_MAGIC, NNP_RAW_MAGIC_LEN);
    while (off < len) {
        nnp_chunk_header_t h;
        assert_true(len - off >= CHUNK_HDR);
        memcpy(&h, buf + off, sizeof(h));
        assert_int_equal(h.magic, NNP_CHUNK_MAGIC);
        assert_int_equal(h.header_crc,
                         nnp__crc32c(0, &h, offsetof(nnp_chunk_header_t, header_crc)));
        assert_true(h.payload_bytes <= len - off - CHUNK_HDR);
        assert_int_equal(h.payload_crc, nnp__crc32c(0, buf + off + CHUNK_HDR, h.payload_bytes));
        assert_true(n < max);
        out[n].off = off;
        out[n].size = CHUNK_HDR + h.payload_bytes;
        out[n].count = h.count;
        out[n].first = first;
        out[n].type = h.type;
        out[n].codec = h.codec;
        out[n].seq = h.seq;
        first += h.count;
        off += out[n].size;
        n++;
    }
    assert_int_equal(off, len);
    return n;
}

/* Finds which STRINGS chunk of meta.nnp holds each of our strings. */
static void map_strings(fixture_t *fx)
{
    for (uint32_t i = 0; i < N_STRINGS; i++)
        fx->str_chunk[i] = -1;
    for (uint32_t c = 0; c < fx->n_meta_chunks; c++) {
        const chunk_info_t *ci = &fx->meta_chunks[c];
        nnp_chunk_header_t h;
        unsigned char *raw;
        size_t pos = 0;

        if (ci->type != NNP_CHUNK_STRINGS)
            continue;
        memcpy(&h, fx->meta + ci->off, sizeof(h));
        raw = malloc(h.raw_bytes ? h.raw_bytes : 1);
        assert_non_null(raw);
        if (h.codec == NNP_CODEC_ZSTD)
            assert_int_equal(
                ZSTD_decompress(raw, h.raw_bytes, fx->meta + ci->off + CHUNK_HDR, h.payload_bytes),
                h.raw_bytes);
        else
            memcpy(raw, fx->meta + ci->off + CHUNK_HDR, h.raw_bytes);
        /* Entries: {u32 id, u32 len, len bytes, padded to 4} (raw_format.h). */
        while (pos + 2 * sizeof(uint32_t) <= h.raw_bytes) {
            uint32_t e[2];
            memcpy(e, raw + pos, sizeof(e));
            for (uint32_t i = 0; i < N_STRINGS; i++) {
                if (e[0] == fx->str_ids[i] && fx->str_chunk[i] < 0)
                    fx->str_chunk[i] = (int)c;
            }
            pos += sizeof(e) + (((size_t)e[1] + 3) & ~(size_t)3);
        }
        free(raw);
    }
    for (uint32_t i = 0; i < N_STRINGS; i++)
        assert_true(fx->str_chunk[i] >= 0);
}

/* Records the known run and learns its layout. Runs before every test. */
static int setup(void **state)
{
    fixture_t *fx = calloc(1, sizeof(*fx));
    nnp_options_t o;
    nnp_session_t *s = NULL;
    nnp_stats_t st;
    uint64_t total = 0;

    assert_non_null(fx);
    fx->root = nnpt_mkdtemp();
    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s/run", fx->root);
    o.sample_interval_ms = 0; /* no sampler records: every record is one of ours */
    o.writer_period_ms = WRITER_PERIOD_MS;
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    for (uint32_t i = 0; i < N_STRINGS; i++) {
        snprintf(fx->str_text[i], sizeof(fx->str_text[i]), "reader-test/string-%04u", i);
        fx->str_ids[i] = nnp_intern(fx->str_text[i]);
        assert_true(fx->str_ids[i] != 0);
    }
    /* Record i has a = i and ts = i ns, so a read-back proves order and completeness. */
    for (uint32_t i = 0; i < N_EVENTS; i++) {
        nnp_step_begin_at(i, GRAPH_ID, i);
        if ((i + 1) % FLUSH_EVERY == 0)
            assert_int_equal(nnp_session_flush(s), NNP_OK);
    }
    assert_int_equal(nnp_session_stats(s, &st), NNP_OK);
    snprintf(fx->src_dir, sizeof(fx->src_dir), "%s", nnp_session_raw_dir(s));
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    assert_int_equal(st.events_recorded, N_EVENTS);
    assert_int_equal(st.events_dropped, 0);

    assert_false(file_exists(fx->src_dir, DATA_NAME_2)); /* one data file: no rotation */
    fx->data = load_file(fx->src_dir, DATA_NAME, &fx->data_len);
    fx->meta = load_file(fx->src_dir, META_NAME, &fx->meta_len);
    fx->n_chunks = parse_chunks(fx->data, fx->data_len, fx->chunks, MAX_CHUNKS);
    fx->n_meta_chunks = parse_chunks(fx->meta, fx->meta_len, fx->meta_chunks, MAX_META_CHUNKS);
    assert_true(fx->n_chunks >= MIN_CHUNKS);
    for (uint32_t c = 0; c < fx->n_chunks; c++) {
        assert_int_equal(fx->chunks[c].type, NNP_CHUNK_RECORDS);
        /* The writer packs records (format v3): the damage tests below hit packed chunks. */
        assert_int_equal(fx->chunks[c].codec, NNP_CODEC_PACK);
        total += fx->chunks[c].count;
    }
    fx->codec = NNP_CODEC_PACK;
    fx->version = NNP_RAW_VERSION;
    assert_int_equal(total, N_EVENTS);
    map_strings(fx);
    for (uint32_t c = 0; c < fx->n_chunks; c++)
        fx->max_seq = fx->chunks[c].seq > fx->max_seq ? fx->chunks[c].seq : fx->max_seq;
    for (uint32_t c = 0; c < fx->n_meta_chunks; c++)
        fx->max_seq = fx->meta_chunks[c].seq > fx->max_seq ? fx->meta_chunks[c].seq : fx->max_seq;

    snprintf(fx->work_dir, sizeof(fx->work_dir), "%s/work", fx->root);
    assert_int_equal(mkdir(fx->work_dir, 0700), 0);
    write_bytes(fx->work_dir, META_NAME, fx->meta, fx->meta_len);
    write_bytes(fx->work_dir, DATA_NAME, fx->data, fx->data_len);
    *state = fx;
    return 0;
}

/* Rewrites the fixture's data file as a version 2 writer wrote it: the file header says
 * version 2 and every RECORDS chunk holds its slots zstd-compressed (level 1), headers and
 * checksums made anew, sequence numbers, counts and thread ids kept; meta.nnp's header says
 * version 2 too. The reader must read such files as before (older versions are still read),
 * and lose only a damaged chunk. */
static void make_v2_zstd(fixture_t *fx)
{
    size_t cap = fx->data_len * 8 + FILE_HDR, len = FILE_HDR;
    unsigned char *out = malloc(cap);
    nnp_pack_state_t *st = malloc(sizeof(*st));
    nnp_raw_file_header_t fh;

    assert_non_null(out);
    assert_non_null(st);
    memcpy(&fh, fx->data, sizeof(fh));
    fh.version = 2;
    memcpy(out, &fh, sizeof(fh));
    for (uint32_t c = 0; c < fx->n_chunks; c++) {
        nnp_chunk_header_t h;
        nnp_rec_t *slots;
        size_t z;
        memcpy(&h, fx->data + fx->chunks[c].off, sizeof(h));
        slots = malloc(h.raw_bytes);
        assert_non_null(slots);
        nnp__pack_reset(st);
        assert_int_equal(nnp__pack_decode(st, fx->data + fx->chunks[c].off + CHUNK_HDR,
                                          h.payload_bytes, slots, h.raw_bytes / sizeof(*slots)),
                         0);
        assert_true(len + CHUNK_HDR + ZSTD_compressBound(h.raw_bytes) <= cap);
        z = ZSTD_compress(out + len + CHUNK_HDR, cap - len - CHUNK_HDR, slots, h.raw_bytes, 1);
        assert_false(ZSTD_isError(z));
        h.codec = NNP_CODEC_ZSTD;
        h.payload_bytes = (uint32_t)z;
        h.payload_crc = nnp__crc32c(0, out + len + CHUNK_HDR, z);
        h.header_crc = nnp__crc32c(0, &h, offsetof(nnp_chunk_header_t, header_crc));
        memcpy(out + len, &h, sizeof(h));
        len += CHUNK_HDR + z;
        free(slots);
    }
    free(st);
    free(fx->data);
    fx->data = out;
    fx->data_len = len;
    fx->n_chunks = parse_chunks(fx->data, fx->data_len, fx->chunks, MAX_CHUNKS);
    for (uint32_t c = 0; c < fx->n_chunks; c++)
        assert_int_equal(fx->chunks[c].codec, NNP_CODEC_ZSTD);
    fx->codec = NNP_CODEC_ZSTD;
    fx->version = 2;
    write_bytes(fx->work_dir, DATA_NAME, fx->data, fx->data_len);
    /* meta.nnp holds no records: only its header's version differs. */
    memcpy(&fh, fx->meta, sizeof(fh));
    fh.version = 2;
    memcpy(fx->meta, &fh, sizeof(fh));
    write_bytes(fx->work_dir, META_NAME, fx->meta, fx->meta_len);
}

/* The known run, its data file turned into what a version 2 writer made. */
static int setup_v2(void **state)
{
    setup(state);
    make_v2_zstd(*state);
    return 0;
}

static int teardown(void **state)
{
    fixture_t *fx = *state;
    nnpt_rm_rf(fx->root);
    free(fx->root);
    free(fx->data);
    free(fx->meta);
    free(fx);
    return 0;
}

/* ---- reading a copy ---- */

static int on_record(void *user, const nnp_raw_event_t *ev)
{
    readback_t *rb = user;
    const nnp_rec_t *r = ev->slots;
    if (ev->kind != NNP_REC_STEP_BEGIN || ev->n_slots != 1 || r->b != GRAPH_ID ||
        ev->ts_ns != r->a || rb->n >= N_EVENTS) {
        rb->bad++;
        return 0;
    }
    rb->a[rb->n++] = r->a;
    return 0;
}

/* Opens and reads fx->work_dir; the raw handle stays open until readback_done(). */
static void readback_run(const fixture_t *fx, readback_t *rb)
{
    memset(rb, 0, sizeof(*rb));
    rb->a = malloc(N_EVENTS * sizeof(uint64_t));
    assert_non_null(rb->a);
    rb->open_rc = nnp__raw_open(fx->work_dir, &rb->raw);
    if (rb->open_rc != NNP_OK)
        return;
    rb->read_rc = nnp__raw_read(rb->raw, on_record, rb);
    rb->rep = *nnp__raw_report(rb->raw);
}

static void readback_done(readback_t *rb)
{
    nnp__raw_close(rb->raw);
    free(rb->a);
    rb->raw = NULL;
    rb->a = NULL;
}

/* True when the records delivered are exactly 0..lo-1 then hi..N_EVENTS-1, in order. */
static bool delivered_all_but(const readback_t *rb, uint64_t lo, uint64_t hi)
{
    uint64_t k = 0;
    if (rb->bad != 0 || rb->n != N_EVENTS - (hi - lo))
        return false;
    for (uint64_t i = 0; i < N_EVENTS; i++) {
        if (i >= lo && i < hi)
            continue;
        if (rb->a[k++] != i)
            return false;
    }
    return true;
}

static bool delivered_all(const readback_t *rb)
{
    return delivered_all_but(rb, N_EVENTS, N_EVENTS);
}

static uint64_t chunk_end(const chunk_info_t *c)
{
    return c->off + c->size;
}

/* Meta chunks the reader counts as ok in the intact meta file. */
static uint64_t meta_ok(const fixture_t *fx)
{
    return fx->n_meta_chunks;
}

/* True when damage entry i names file at offset with a message containing text. */
static bool damage_is(const readback_t *rb, uint32_t i, const char *file, uint64_t offset, int code,
                      const char *text)
{
    const nnp_raw_damage_t *d = &rb->rep.damage[i];
    return i < rb->rep.n_damage && strcmp(d->file, file) == 0 && d->offset == offset &&
           d->code == code && strstr(d->msg, text) != NULL;
}

/* ---- tests ---- */

/* The intact copy reads back completely and cleanly: the ground truth agrees with the reader. */
static void test_intact_run_reads_back_exactly(void **state)
{
    fixture_t *fx = *state;
    readback_t rb;
    const char *ctx = "intact copy";

    readback_run(fx, &rb);
    EXPECT(ctx, rb.open_rc == NNP_OK && rb.read_rc == NNP_OK);
    EXPECT(ctx, delivered_all(&rb));
    EXPECT(ctx, rb.rep.records == N_EVENTS);
    EXPECT(ctx, rb.rep.data_files == 1);
    EXPECT(ctx, rb.rep.chunks_ok == meta_ok(fx) + fx->n_chunks);
    EXPECT(ctx, rb.rep.chunks_corrupt == 0 && rb.rep.chunks_truncated == 0);
    EXPECT(ctx, rb.rep.bytes_skipped == 0 && rb.rep.n_damage == 0);
    EXPECT(ctx, rb.rep.events_lost == 0 && rb.rep.data_files_missing == 0);
    {
        uint32_t meta_same = 0;
        for (uint32_t c = 0; c < fx->n_meta_chunks; c++)
            meta_same += fx->meta_chunks[c].codec == fx->codec;
        EXPECT(ctx, rb.rep.chunks_by_codec[fx->codec] == fx->n_chunks + meta_same);
    }
    EXPECT(ctx, rb.rep.format_version == fx->version);
    for (uint32_t i = 0; i < N_STRINGS; i++) {
        const char *s = nnp__raw_str(rb.raw, fx->str_ids[i]);
        EXPECT(ctx, s != NULL && strcmp(s, fx->str_text[i]) == 0);
    }
    EXPECT(ctx, nnp__raw_thread_count(rb.raw) == 1);
    readback_done(&rb);
}

/* Checks one cut of the data file at offset cut against the layout. */
static void check_cut(const fixture_t *fx, uint64_t cut)
{
    readback_t rb;
    char ctx[CTX_BUF];
    uint32_t k = 0;
    uint64_t boundary = FILE_HDR, kept;

    snprintf(ctx, sizeof(ctx), "data file cut at %llu of %zu (seed %#llx)", (unsigned long long)cut,
             fx->data_len, (unsigned long long)SEED_CUTS);
    write_bytes(fx->work_dir, DATA_NAME, fx->data, cut);
    readback_run(fx, &rb);
    EXPECT(ctx, rb.open_rc == NNP_OK && rb.read_rc == NNP_OK);
    EXPECT(ctx, rb.rep.chunks_corrupt == 0);
    if (cut < FILE_HDR) {
        /* Not even a file header: the file is named, nothing is delivered. */
        EXPECT(ctx, rb.n == 0 && rb.bad == 0);
        EXPECT(ctx, rb.rep.chunks_ok == meta_ok(fx) && rb.rep.chunks_truncated == 0);
        EXPECT(ctx, rb.rep.n_damage == 1);
        EXPECT(ctx, damage_is(&rb, 0, DATA_NAME, 0, NNP_ETRUNC, "shorter than"));
        EXPECT(ctx, rb.rep.bytes_skipped == cut);
        readback_done(&rb);
        return;
    }
    while (k < fx->n_chunks && chunk_end(&fx->chunks[k]) <= cut)
        boundary = chunk_end(&fx->chunks[k++]);
    kept = k < fx->n_chunks ? fx->chunks[k].first : N_EVENTS;
    EXPECT(ctx, delivered_all_but(&rb, kept, N_EVENTS));
    EXPECT(ctx, rb.rep.records == kept);
    EXPECT(ctx, rb.rep.chunks_ok == meta_ok(fx) + k);
    EXPECT(ctx, rb.rep.bytes_skipped == cut - boundary);
    if (cut == boundary) {
        EXPECT(ctx, rb.rep.chunks_truncated == 0 && rb.rep.n_damage == 0);
    } else {
        EXPECT(ctx, rb.rep.chunks_truncated == 1 && rb.rep.n_damage == 1);
        EXPECT(ctx, damage_is(&rb, 0, DATA_NAME, boundary, NNP_ETRUNC, "truncated") ||
                        damage_is(&rb, 0, DATA_NAME, boundary, NNP_ETRUNC, "ends inside"));
    }
    readback_done(&rb);
}

/* A cut anywhere (a crash, a full disk) keeps exactly the chunks that end before it. */
static void test_truncation_keeps_whole_chunks(void **state)
{
    fixture_t *fx = *state;
    uint64_t rng = SEED_CUTS;
    const uint64_t fixed[] = {0, 1, FILE_HDR - 1, FILE_HDR, FILE_HDR + 1};

    for (size_t i = 0; i < NNP_ARRAY_LEN(fixed); i++)
        check_cut(fx, fixed[i]);
    /* Every boundary, one byte either side, and the edges of each header. */
    for (uint32_t c = 0; c < fx->n_chunks; c++) {
        const chunk_info_t *ci = &fx->chunks[c];
        check_cut(fx, ci->off + 1);
        check_cut(fx, ci->off + CHUNK_HDR - 1);
        check_cut(fx, ci->off + CHUNK_HDR);
        check_cut(fx, ci->off + CHUNK_HDR + 1);
        check_cut(fx, chunk_end(ci) - 1);
        check_cut(fx, chunk_end(ci));
    }
    for (uint32_t i = 0; i < N_RANDOM_CUTS; i++)
        check_cut(fx, rng_below(&rng, fx->data_len + 1));
}

/* Where a byte of the data file lies: the file header, or chunk j's header or payload. */
typedef enum where { IN_FILE_HEADER, IN_CHUNK_HEADER, IN_PAYLOAD } where_t;

static where_t locate(const fixture_t *fx, uint64_t pos, uint32_t *chunk)
{
    if (pos < FILE_HDR)
        return IN_FILE_HEADER;
    for (uint32_t c = 0; c < fx->n_chunks; c++) {
        if (pos < chunk_end(&fx->chunks[c])) {
            *chunk = c;
            return pos < fx->chunks[c].off + CHUNK_HDR ? IN_CHUNK_HEADER : IN_PAYLOAD;
        }
    }
    fail_msg("offset %llu is past the end of the data file", (unsigned long long)pos);
    return IN_FILE_HEADER;
}

/* Flips byte pos of the data file (XOR with a non-zero mask) and checks the consequence. */
static void check_flip(const fixture_t *fx, uint64_t pos, unsigned char mask)
{
    unsigned char *copy = malloc(fx->data_len);
    readback_t rb;
    char ctx[CTX_BUF];
    uint32_t j = 0;
    where_t w = locate(fx, pos, &j);

    assert_non_null(copy);
    assert_true(mask != 0);
    memcpy(copy, fx->data, fx->data_len);
    copy[pos] ^= mask;
    write_bytes(fx->work_dir, DATA_NAME, copy, fx->data_len);
    free(copy);
    snprintf(ctx, sizeof(ctx), "byte %llu ^= %#x (%s, chunk %u; seed %#llx)",
             (unsigned long long)pos, mask,
             w == IN_FILE_HEADER    ? "file header"
             : w == IN_CHUNK_HEADER ? "chunk header"
                                    : "payload",
             j, (unsigned long long)SEED_FLIPS);
    readback_run(fx, &rb);
    EXPECT(ctx, rb.open_rc == NNP_OK && rb.read_rc == NNP_OK);
    EXPECT(ctx, rb.rep.chunks_truncated == 0);
    if (w == IN_FILE_HEADER) {
        if (pos >= offsetof(nnp_raw_file_header_t, file_seq)) {
            /* file_seq is informational: the reader numbers files by name and the file
             * header has no checksum, so this flip goes unnoticed and costs nothing. */
            EXPECT(ctx, delivered_all(&rb) && rb.rep.n_damage == 0);
        } else {
            const char *why = pos < offsetof(nnp_raw_file_header_t, version) ? "bad magic"
                              : pos < offsetof(nnp_raw_file_header_t, file_kind)
                                  ? "unsupported raw format"
                                  : "file kind";
            int code = pos >= offsetof(nnp_raw_file_header_t, version) &&
                               pos < offsetof(nnp_raw_file_header_t, file_kind)
                           ? NNP_EVERSION
                           : NNP_ECORRUPT;
            EXPECT(ctx, rb.n == 0 && rb.bad == 0 && rb.rep.records == 0);
            EXPECT(ctx, rb.rep.chunks_ok == meta_ok(fx) && rb.rep.chunks_corrupt == 0);
            EXPECT(ctx, rb.rep.n_damage == 1);
            EXPECT(ctx, damage_is(&rb, 0, DATA_NAME, 0, code, why));
        }
    } else {
        const chunk_info_t *ci = &fx->chunks[j];
        /* A bad header is found by its CRC and skipped by resync; a bad payload by its CRC.
         * Either way exactly chunk j is lost. */
        EXPECT(ctx, delivered_all_but(&rb, ci->first, ci->first + ci->count));
        EXPECT(ctx, rb.rep.chunks_corrupt == 1);
        EXPECT(ctx, rb.rep.chunks_ok == meta_ok(fx) + fx->n_chunks - 1);
        EXPECT(ctx, rb.rep.bytes_skipped == ci->size);
        EXPECT(ctx, rb.rep.n_damage == 1);
        EXPECT(ctx, damage_is(&rb, 0, DATA_NAME, ci->off, NNP_ECORRUPT,
                              w == IN_CHUNK_HEADER ? "bad chunk header" : "payload checksum"));
    }
    readback_done(&rb);
}

/* Single flipped bytes: every file-header byte, every header byte of three chunks, the
 * first and last payload byte of every chunk, and random positions. */
static void test_byte_flip_costs_one_chunk(void **state)
{
    fixture_t *fx = *state;
    uint64_t rng = SEED_FLIPS;
    const uint32_t some[] = {0, fx->n_chunks / 2, fx->n_chunks - 1};

    for (uint64_t p = 0; p < FILE_HDR; p++)
        check_flip(fx, p, (unsigned char)(1 + rng_below(&rng, UINT8_MAX)));
    for (size_t i = 0; i < NNP_ARRAY_LEN(some); i++) {
        for (uint64_t p = 0; p < CHUNK_HDR; p++)
            check_flip(fx, fx->chunks[some[i]].off + p, FLIP_LOW_BIT);
    }
    for (uint32_t c = 0; c < fx->n_chunks; c++) {
        check_flip(fx, fx->chunks[c].off + CHUNK_HDR, FLIP_TOP_BIT);
        check_flip(fx, chunk_end(&fx->chunks[c]) - 1, FLIP_ALL_BITS);
    }
    for (uint32_t i = 0; i < N_RANDOM_FLIPS; i++) {
        uint64_t p = rng_below(&rng, fx->data_len);
        check_flip(fx, p, (unsigned char)(1 + rng_below(&rng, UINT8_MAX)));
    }
}

/* Chunk j of the data file changed as `how` says, with both checksums made anew, so only
 * the unpacking can find the damage: 0 claims one slot more than was packed, 1 drops the
 * last packed byte. Exactly chunk j is lost, named as not unpacking. */
static void check_bad_packing(const fixture_t *fx, uint32_t j, int how)
{
    const chunk_info_t *ci = &fx->chunks[j];
    unsigned char *copy = malloc(fx->data_len);
    nnp_chunk_header_t h;
    size_t len = 0, payload;
    readback_t rb;
    char ctx[CTX_BUF];

    assert_non_null(copy);
    memcpy(&h, fx->data + ci->off, sizeof(h));
    payload = h.payload_bytes;
    if (how == 0) {
        h.raw_bytes += sizeof(nnp_rec_t);
    } else {
        payload--;
        h.payload_bytes--;
    }
    h.payload_crc = nnp__crc32c(0, fx->data + ci->off + CHUNK_HDR, payload);
    h.header_crc = nnp__crc32c(0, &h, offsetof(nnp_chunk_header_t, header_crc));
    memcpy(copy, fx->data, ci->off);
    len = ci->off;
    memcpy(copy + len, &h, sizeof(h));
    memcpy(copy + len + CHUNK_HDR, fx->data + ci->off + CHUNK_HDR, payload);
    len += CHUNK_HDR + payload;
    memcpy(copy + len, fx->data + chunk_end(ci), fx->data_len - chunk_end(ci));
    len += fx->data_len - chunk_end(ci);
    write_bytes(fx->work_dir, DATA_NAME, copy, len);
    free(copy);
    snprintf(ctx, sizeof(ctx), "chunk %u %s", j,
             how == 0 ? "claims one slot more" : "lost its last packed byte");
    readback_run(fx, &rb);
    EXPECT(ctx, rb.open_rc == NNP_OK && rb.read_rc == NNP_OK);
    EXPECT(ctx, delivered_all_but(&rb, ci->first, ci->first + ci->count));
    EXPECT(ctx, rb.rep.chunks_corrupt == 1 && rb.rep.chunks_truncated == 0);
    EXPECT(ctx, rb.rep.chunks_ok == meta_ok(fx) + fx->n_chunks - 1);
    EXPECT(ctx, rb.rep.bytes_skipped == CHUNK_HDR + payload);
    EXPECT(ctx, rb.rep.n_damage == 1);
    EXPECT(ctx, damage_is(&rb, 0, DATA_NAME, ci->off, NNP_ECORRUPT, "does not unpack"));
    readback_done(&rb);
}

/* Packed bytes that are not a packing of the slots the header claims (a writer bug, or
 * damage that the checksum missed) cost that chunk alone: first, middle and last. */
static void test_bad_packing_costs_one_chunk(void **state)
{
    fixture_t *fx = *state;
    const uint32_t some[] = {0, fx->n_chunks / 2, fx->n_chunks - 1};
    for (size_t i = 0; i < NNP_ARRAY_LEN(some); i++) {
        check_bad_packing(fx, some[i], 0);
        check_bad_packing(fx, some[i], 1);
    }
}

/* Fills buf with junk that includes chunk magics with wrong CRCs, so resync has to reject
 * false candidates rather than just skip non-magic bytes. */
static void fill_garbage(unsigned char *buf, size_t n, uint64_t *rng)
{
    const uint32_t magic = NNP_CHUNK_MAGIC;
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)rng_next(rng);
    for (size_t i = 0; i + CHUNK_HDR <= n; i += CHUNK_HDR)
        memcpy(buf + i, &magic, sizeof(magic));
}

/* Junk inserted between chunks (a torn or interleaved write) costs no record: the reader
 * resyncs on the next valid header and skips exactly the junk. */
static void test_garbage_between_chunks_is_skipped(void **state)
{
    fixture_t *fx = *state;
    uint64_t rng = SEED_GARBAGE;
    /* 1 byte, a non-multiple of 8, more than a header, several headers. */
    const size_t sizes[] = {1, 13, CHUNK_HDR + 5, 5 * CHUNK_HDR};
    const uint32_t where[] = {0, 1, fx->n_chunks / 2, fx->n_chunks - 1};

    for (size_t si = 0; si < NNP_ARRAY_LEN(sizes); si++) {
        for (size_t wi = 0; wi < NNP_ARRAY_LEN(where); wi++) {
            size_t g = sizes[si];
            uint64_t at = fx->chunks[where[wi]].off; /* inserted before this chunk */
            unsigned char *copy = malloc(fx->data_len + g);
            readback_t rb;
            char ctx[CTX_BUF];

            assert_non_null(copy);
            memcpy(copy, fx->data, at);
            fill_garbage(copy + at, g, &rng);
            memcpy(copy + at + g, fx->data + at, fx->data_len - at);
            write_bytes(fx->work_dir, DATA_NAME, copy, fx->data_len + g);
            free(copy);
            snprintf(ctx, sizeof(ctx), "%zu junk bytes at %llu (seed %#llx)", g,
                     (unsigned long long)at, (unsigned long long)SEED_GARBAGE);
            readback_run(fx, &rb);
            EXPECT(ctx, rb.open_rc == NNP_OK && rb.read_rc == NNP_OK);
            EXPECT(ctx, delivered_all(&rb));
            EXPECT(ctx, rb.rep.chunks_ok == meta_ok(fx) + fx->n_chunks);
            EXPECT(ctx, rb.rep.chunks_corrupt == 1 && rb.rep.chunks_truncated == 0);
            EXPECT(ctx, rb.rep.bytes_skipped == g);
            EXPECT(ctx, damage_is(&rb, 0, DATA_NAME, at, NNP_ECORRUPT, "bad chunk header"));
            readback_done(&rb);
        }
    }
}

/* Checks a damaged meta.nnp: every record is still delivered (timestamps are ns here, so
 * no clock point is needed); strings of lost STRINGS chunks are NULL, the others intact. */
static void check_meta_damage(const fixture_t *fx, const unsigned char *meta, size_t len,
                              const bool *chunk_lost, bool has_damage, const char *ctx)
{
    readback_t rb;

    write_bytes(fx->work_dir, META_NAME, meta, len);
    readback_run(fx, &rb);
    EXPECT(ctx, rb.open_rc == NNP_OK && rb.read_rc == NNP_OK);
    EXPECT(ctx, delivered_all(&rb));
    if (has_damage)
        EXPECT(ctx, rb.rep.n_damage >= 1 && strcmp(rb.rep.damage[0].file, META_NAME) == 0);
    else
        EXPECT(ctx, rb.rep.n_damage == 0);
    for (uint32_t i = 0; i < N_STRINGS; i++) {
        const char *s = nnp__raw_str(rb.raw, fx->str_ids[i]);
        if (chunk_lost[fx->str_chunk[i]])
            EXPECT(ctx, s == NULL);
        else
            EXPECT(ctx, s != NULL && strcmp(s, fx->str_text[i]) == 0);
    }
    EXPECT(ctx, nnp__raw_str(rb.raw, 0) != NULL); /* id 0 is always "" */
    readback_done(&rb);
}

/* Index of the STRINGS chunk holding our first string. */
static uint32_t strings_chunk(const fixture_t *fx)
{
    return (uint32_t)fx->str_chunk[0];
}

/* meta.nnp cut to half, and cut inside its STRINGS chunk. */
static void test_meta_truncated(void **state)
{
    fixture_t *fx = *state;
    bool lost[MAX_META_CHUNKS];
    const chunk_info_t *sc = &fx->meta_chunks[strings_chunk(fx)];
    const uint64_t cuts[] = {fx->meta_len / 2, sc->off + CHUNK_HDR + (sc->size - CHUNK_HDR) / 2,
                             sc->off + CHUNK_HDR / 2};

    for (size_t i = 0; i < NNP_ARRAY_LEN(cuts); i++) {
        char ctx[CTX_BUF];
        readback_t rb;
        uint32_t kept = 0;
        bool on_boundary = cuts[i] == FILE_HDR;

        for (uint32_t c = 0; c < fx->n_meta_chunks; c++) {
            lost[c] = chunk_end(&fx->meta_chunks[c]) > cuts[i];
            kept += !lost[c];
            on_boundary = on_boundary || chunk_end(&fx->meta_chunks[c]) == cuts[i];
        }
        snprintf(ctx, sizeof(ctx), "meta.nnp cut at %llu of %zu", (unsigned long long)cuts[i],
                 fx->meta_len);
        /* The last two cuts fall inside the STRINGS chunk; the half cut depends on layout. */
        EXPECT(ctx, lost[strings_chunk(fx)] || i == 0);
        check_meta_damage(fx, fx->meta, cuts[i], lost, !on_boundary, ctx);
        readback_run(fx, &rb);
        EXPECT(ctx, rb.rep.chunks_ok == kept + fx->n_chunks);
        EXPECT(ctx, rb.rep.chunks_truncated == (on_boundary ? 0u : 1u));
        readback_done(&rb);
    }
    write_bytes(fx->work_dir, META_NAME, fx->meta, fx->meta_len);
}

/* A flipped byte in the STRINGS chunk (payload, then header) loses exactly its strings. */
static void test_meta_strings_flipped(void **state)
{
    fixture_t *fx = *state;
    bool lost[MAX_META_CHUNKS] = {false};
    const uint32_t sc = strings_chunk(fx);
    const uint64_t pos[] = {fx->meta_chunks[sc].off + CHUNK_HDR + 1,
                            chunk_end(&fx->meta_chunks[sc]) - 1,
                            fx->meta_chunks[sc].off + offsetof(nnp_chunk_header_t, count)};
    unsigned char *copy = malloc(fx->meta_len);

    assert_non_null(copy);
    lost[sc] = true;
    for (size_t i = 0; i < NNP_ARRAY_LEN(pos); i++) {
        char ctx[CTX_BUF];
        readback_t rb;
        memcpy(copy, fx->meta, fx->meta_len);
        copy[pos[i]] ^= FLIP_MIXED;
        snprintf(ctx, sizeof(ctx), "meta.nnp byte %llu flipped", (unsigned long long)pos[i]);
        check_meta_damage(fx, copy, fx->meta_len, lost, true, ctx);
        readback_run(fx, &rb);
        EXPECT(ctx, rb.rep.chunks_corrupt == 1 && rb.rep.chunks_truncated == 0);
        EXPECT(ctx, rb.rep.chunks_ok == fx->n_meta_chunks - 1 + fx->n_chunks);
        EXPECT(ctx, damage_is(&rb, 0, META_NAME, fx->meta_chunks[sc].off, NNP_ECORRUPT, ""));
        readback_done(&rb);
    }
    /* A meta file that is not one at all: records still come, every string is gone. */
    memcpy(copy, fx->meta, fx->meta_len);
    copy[0] ^= FLIP_ALL_BITS;
    for (uint32_t c = 0; c < fx->n_meta_chunks; c++)
        lost[c] = true;
    check_meta_damage(fx, copy, fx->meta_len, lost, true, "meta.nnp with a bad magic");
    free(copy);
    write_bytes(fx->work_dir, META_NAME, fx->meta, fx->meta_len);
}

/* A directory without meta.nnp is not a raw directory, and the error names it. */
static void test_not_a_raw_dir(void **state)
{
    fixture_t *fx = *state;
    char empty[PATH_BUF], missing[PATH_BUF];
    nnp_raw_t *raw = (nnp_raw_t *)fx; /* must be reset to NULL */

    snprintf(empty, sizeof(empty), "%s/empty", fx->root);
    snprintf(missing, sizeof(missing), "%s/does-not-exist", fx->root);
    assert_int_equal(mkdir(empty, 0700), 0);
    assert_false(nnp__raw_is_dir(empty));
    assert_int_equal(nnp__raw_open(empty, &raw), NNP_ENOENT);
    assert_null(raw);
    assert_non_null(strstr(nnp_last_error(), empty));
    assert_int_equal(nnp__raw_open(missing, &raw), NNP_ENOENT);
    assert_non_null(strstr(nnp_last_error(), missing));
    assert_true(nnp__raw_is_dir(fx->work_dir));
}

/* Reads the work dir whose data file is buf[0..n) and checks: no record, one damage
 * entry on the data file with code and text. */
static void check_bad_data_file(const fixture_t *fx, const void *buf, size_t n, int code,
                                const char *text, const char *ctx)
{
    readback_t rb;
    write_bytes(fx->work_dir, DATA_NAME, buf, n);
    readback_run(fx, &rb);
    EXPECT(ctx, rb.open_rc == NNP_OK && rb.read_rc == NNP_OK);
    EXPECT(ctx, rb.n == 0 && rb.bad == 0 && rb.rep.data_files == 1);
    EXPECT(ctx, rb.rep.chunks_ok == meta_ok(fx) && rb.rep.chunks_corrupt == 0);
    if (text) {
        EXPECT(ctx, rb.rep.n_damage == 1);
        EXPECT(ctx, damage_is(&rb, 0, DATA_NAME, 0, code, text));
    } else {
        EXPECT(ctx, rb.rep.n_damage == 0);
    }
    readback_done(&rb);
}

/* Data files too short for a header, header-only, or of another format version. */
static void test_short_and_foreign_data_files(void **state)
{
    fixture_t *fx = *state;
    enum { TEN_BYTES = 10 };
    unsigned char *copy = malloc(fx->data_len);
    nnp_raw_file_header_t fh;
    char want[CTX_BUF];

    assert_non_null(copy);
    check_bad_data_file(fx, fx->data, 0, NNP_ETRUNC, "shorter than", "0-byte data file");
    check_bad_data_file(fx, fx->data, TEN_BYTES, NNP_ETRUNC, "shorter than", "10-byte data file");
    check_bad_data_file(fx, fx->data, FILE_HDR, 0, NULL, "header-only data file");

    memcpy(copy, fx->data, fx->data_len);
    memcpy(&fh, copy, sizeof(fh));
    fh.version = NNP_RAW_VERSION + 1;
    memcpy(copy, &fh, sizeof(fh));
    snprintf(want, sizeof(want), "version %u", NNP_RAW_VERSION + 1);
    check_bad_data_file(fx, copy, fx->data_len, NNP_EVERSION, want, "data file of a later version");

    /* Files of version 1 (before COMM details and COMM_GROUP) are still read whole. */
    {
        readback_t rb;
        memcpy(copy, fx->data, fx->data_len);
        memcpy(&fh, copy, sizeof(fh));
        fh.version = 1;
        memcpy(copy, &fh, sizeof(fh));
        write_bytes(fx->work_dir, DATA_NAME, copy, fx->data_len);
        readback_run(fx, &rb);
        EXPECT("version 1 data file", rb.open_rc == NNP_OK && delivered_all(&rb));
        EXPECT("version 1 data file", rb.rep.n_damage == 0);
        readback_done(&rb);
        write_bytes(fx->work_dir, DATA_NAME, fx->data, fx->data_len);
    }
    memcpy(&fh, fx->data, sizeof(fh));
    fh.version = 0;
    memcpy(copy, &fh, sizeof(fh));
    check_bad_data_file(fx, copy, fx->data_len, NNP_EVERSION, "version 0",
                        "data file of version 0");

    memcpy(&fh, fx->data, sizeof(fh));
    fh.endian_mark = __builtin_bswap32(NNP_RAW_ENDIAN_MARK);
    memcpy(copy, &fh, sizeof(fh));
    check_bad_data_file(fx, copy, fx->data_len, NNP_EVERSION, "unsupported raw format",
                        "big-endian data file");

    memcpy(&fh, fx->data, sizeof(fh));
    fh.file_kind = NNP_FILE_META;
    memcpy(copy, &fh, sizeof(fh));
    check_bad_data_file(fx, copy, fx->data_len, NNP_ECORRUPT, "file kind",
                        "meta file named as a data file");

    /* An empty meta.nnp: the directory still opens and every record is delivered. */
    {
        readback_t rb;
        write_bytes(fx->work_dir, META_NAME, fx->meta, 0);
        write_bytes(fx->work_dir, DATA_NAME, fx->data, fx->data_len);
        readback_run(fx, &rb);
        EXPECT("0-byte meta.nnp", rb.open_rc == NNP_OK && delivered_all(&rb));
        EXPECT("0-byte meta.nnp", damage_is(&rb, 0, META_NAME, 0, NNP_ETRUNC, "shorter than"));
        EXPECT("0-byte meta.nnp", nnp__raw_str(rb.raw, fx->str_ids[0]) == NULL);
        readback_done(&rb);
        write_bytes(fx->work_dir, META_NAME, fx->meta, fx->meta_len);
    }
    free(copy);
}

/* A gap in the data file sequence not explained by aging is reported as missing. */
static void test_missing_data_file_is_reported(void **state)
{
    fixture_t *fx = *state;
    readback_t rb;
    const char *ctx = "data_000001.nnp missing, data_000002.nnp present";

    remove_file(fx->work_dir, DATA_NAME);
    write_bytes(fx->work_dir, DATA_NAME_2, fx->data, fx->data_len);
    readback_run(fx, &rb);
    EXPECT(ctx, rb.open_rc == NNP_OK && rb.read_rc == NNP_OK);
    EXPECT(ctx, delivered_all(&rb));
    EXPECT(ctx, rb.rep.data_files == 1 && rb.rep.data_files_missing == 1);
    EXPECT(ctx, damage_is(&rb, 0, META_NAME, 0, NNP_ENOENT, "data file 1 is missing"));
    readback_done(&rb);
}

/* Builds a data file by hand: the file header, then chunk 0 of the run (a packed chunk whose
 * size is whatever packing made it), then `pad` junk bytes, then one uncompressed (codec NONE)
 * RECORDS chunk of n_recs step records numbered from first. The reader reads codec NONE
 * payloads straight from the mapping, so this places records at an unaligned address
 * whenever the bytes before them are not a multiple of 8. */
static size_t build_uncompressed(const fixture_t *fx, unsigned char *out, size_t pad,
                                 uint64_t first, uint32_t n_recs)
{
    nnp_rec_t recs[4];
    nnp_chunk_header_t h;
    size_t len = FILE_HDR + fx->chunks[0].size;

    assert_true(n_recs <= NNP_ARRAY_LEN(recs) && pad <= MAX_PAD);
    memcpy(out, fx->data, len);
    memset(out + len, 0, pad);
    len += pad;
    memset(recs, 0, sizeof(recs));
    for (uint32_t i = 0; i < n_recs; i++) {
        recs[i].kind = NNP_REC_STEP_BEGIN;
        recs[i].n_slots = 1;
        recs[i].flags = NNP_REC_F_TS_NS;
        recs[i].ts = first + i;
        recs[i].a = first + i;
        recs[i].b = GRAPH_ID;
    }
    memset(&h, 0, sizeof(h));
    h.magic = NNP_CHUNK_MAGIC;
    h.type = NNP_CHUNK_RECORDS;
    h.codec = NNP_CODEC_NONE;
    h.payload_bytes = h.raw_bytes = n_recs * (uint32_t)sizeof(nnp_rec_t);
    h.payload_crc = nnp__crc32c(0, recs, h.payload_bytes);
    h.count = n_recs;
    h.seq = fx->max_seq + 1; /* a chunk of its own, not a copy of one of the run's */
    h.header_crc = nnp__crc32c(0, &h, offsetof(nnp_chunk_header_t, header_crc));
    memcpy(out + len, &h, sizeof(h));
    memcpy(out + len + sizeof(h), recs, h.payload_bytes);
    return len + sizeof(h) + h.payload_bytes;
}

/* Uncompressed chunks (the writer stores a batch raw when zstd does not shrink it, e.g. a
 * flush of one record right after a zstd chunk of odd size) read back at any alignment.
 * Regression: the reader once used such payloads in place from the mapping, a misaligned
 * nnp_rec_t access that the ASan+UBSan build stops on. */
static void test_uncompressed_chunk_any_alignment(void **state)
{
    fixture_t *fx = *state;
    enum { N_RECS = 3 };
    /* 0 keeps the zstd chunk's own (here unaligned) end; 1..8 shift the raw chunk further. */
    const size_t pads[] = {0, 1, 4, 8};
    unsigned char *buf =
        malloc(FILE_HDR + fx->chunks[0].size + MAX_PAD + CHUNK_HDR + N_RECS * sizeof(nnp_rec_t));
    const uint64_t first = fx->chunks[0].count;

    assert_non_null(buf);
    for (size_t i = 0; i < NNP_ARRAY_LEN(pads); i++) {
        char ctx[CTX_BUF];
        readback_t rb;
        size_t len = build_uncompressed(fx, buf, pads[i], first, N_RECS);

        snprintf(ctx, sizeof(ctx), "raw chunk after %zu junk bytes, payload at offset %zu", pads[i],
                 len - N_RECS * sizeof(nnp_rec_t));
        write_bytes(fx->work_dir, DATA_NAME, buf, len);
        readback_run(fx, &rb);
        EXPECT(ctx, rb.open_rc == NNP_OK && rb.read_rc == NNP_OK);
        EXPECT(ctx, delivered_all_but(&rb, first + N_RECS, N_EVENTS));
        EXPECT(ctx, rb.rep.chunks_corrupt == (pads[i] ? 1u : 0u));
        readback_done(&rb);
    }
    free(buf);
}

/* Writes a raw dir by hand: meta.nnp with one CLOCK chunk of two points, and a data file with
 * one uncompressed RECORDS chunk of step records whose ts are raw ticks. */
static void write_tick_run(const fixture_t *fx, const nnp_clock_point_t *pts, uint32_t n_pts,
                           const uint64_t *ticks, uint32_t n_ticks)
{
    enum { MAX_TICKS = 8 };
    unsigned char buf[FILE_HDR + CHUNK_HDR + MAX_TICKS * sizeof(nnp_rec_t)];
    nnp_rec_t recs[MAX_TICKS];
    nnp_raw_file_header_t fh;
    nnp_chunk_header_t h;
    const void *payload[2] = {pts, recs};
    const uint32_t bytes[2] = {n_pts * (uint32_t)sizeof(*pts), n_ticks * (uint32_t)sizeof(*recs)};

    assert_true(n_ticks <= MAX_TICKS && bytes[0] <= sizeof(buf) - FILE_HDR - CHUNK_HDR);
    memset(recs, 0, sizeof(recs));
    for (uint32_t i = 0; i < n_ticks; i++) {
        recs[i].kind = NNP_REC_STEP_BEGIN;
        recs[i].n_slots = 1;
        recs[i].ts = ticks[i]; /* no NNP_REC_F_TS_NS: converted with the clock points */
        recs[i].a = i;
        recs[i].b = GRAPH_ID;
    }
    for (int f = 0; f < 2; f++) {
        memcpy(&fh, fx->data, sizeof(fh));
        fh.file_kind = f == 0 ? NNP_FILE_META : NNP_FILE_DATA;
        fh.file_seq = (uint32_t)f;
        memset(&h, 0, sizeof(h));
        h.magic = NNP_CHUNK_MAGIC;
        h.type = f == 0 ? NNP_CHUNK_CLOCK : NNP_CHUNK_RECORDS;
        h.payload_bytes = h.raw_bytes = bytes[f];
        h.payload_crc = nnp__crc32c(0, payload[f], bytes[f]);
        h.count = f == 0 ? n_pts : n_ticks;
        h.seq = (uint64_t)f + 1;
        h.header_crc = nnp__crc32c(0, &h, offsetof(nnp_chunk_header_t, header_crc));
        memcpy(buf, &fh, sizeof(fh));
        memcpy(buf + FILE_HDR, &h, sizeof(h));
        memcpy(buf + FILE_HDR + CHUNK_HDR, payload[f], bytes[f]);
        write_bytes(fx->work_dir, f == 0 ? META_NAME : DATA_NAME, buf,
                    FILE_HDR + CHUNK_HDR + bytes[f]);
    }
}

typedef struct tick_times {
    uint64_t ts[8];
    uint32_t n;
} tick_times_t;

static int on_tick_record(void *user, const nnp_raw_event_t *ev)
{
    tick_times_t *t = user;
    if (t->n < NNP_ARRAY_LEN(t->ts))
        t->ts[t->n++] = ev->ts_ns;
    return 0;
}

/* Tick-to-ns conversion interpolates between clock points and extrapolates outside them;
 * it must stay monotonic and never wrap, even for ticks far before the first point or far
 * after the last (a bogus nnp_op_since() start, or a damaged record whose CRC still holds). */
static void test_ticks_convert_monotonically(void **state)
{
    fixture_t *fx = *state;
    /* 2 ns per tick, first point at 1 us: tick 0 lies 2 s before the start of the clock. */
    enum { TICKS_A = 1000000000, MONO_A = 1000, NS_PER_TICK = 2 };
    const nnp_clock_point_t pts[2] = {{TICKS_A, MONO_A, MONO_A, NS_PER_SEC / NS_PER_TICK},
                                      {2ull * TICKS_A, MONO_A + (uint64_t)NS_PER_TICK * TICKS_A,
                                       MONO_A, NS_PER_SEC / NS_PER_TICK}};
    const uint64_t ticks[] = {0, TICKS_A, TICKS_A + TICKS_A / 2, 2ull * TICKS_A, UINT64_MAX};
    const uint64_t exact[] = {0, MONO_A, MONO_A + TICKS_A, MONO_A + 2ull * TICKS_A, 0};
    tick_times_t t = {{0}, 0};
    nnp_raw_t *raw;

    write_tick_run(fx, pts, 2, ticks, NNP_ARRAY_LEN(ticks));
    assert_int_equal(nnp__raw_open(fx->work_dir, &raw), NNP_OK);
    assert_int_equal(nnp__raw_read(raw, on_tick_record, &t), NNP_OK);
    nnp__raw_close(raw);
    assert_int_equal(t.n, NNP_ARRAY_LEN(ticks));
    for (uint32_t i = 1; i + 1 < NNP_ARRAY_LEN(ticks); i++)
        assert_int_equal(t.ts[i], exact[i]); /* inside the points: exact interpolation */
    /* Regression (found by this test): the double result used to be cast to uint64_t
     * unclamped - undefined below 0 or at/above 2^64 (clang UBSan: "outside the range of
     * representable values"); on x86-64 tick 0 came out near 2^64. It now clamps to
     * [0, UINT64_MAX], so times stay monotonic outside the clock points. */
    if (t.ts[0] > t.ts[1])
        fail_msg("tick 0 (before the first clock point) converts to %llu ns, "
                 "after the first point's %llu ns",
                 (unsigned long long)t.ts[0], (unsigned long long)t.ts[1]);
    if (t.ts[4] < t.ts[3])
        fail_msg("tick UINT64_MAX converts to %llu ns, before the last point's "
                 "%llu ns",
                 (unsigned long long)t.ts[4], (unsigned long long)t.ts[3]);
}

/* Every allocation of open and read may fail: the result is NNP_ENOMEM or a partial but
 * consistent read, never a crash or a leak (ASan's leak check covers the latter). */
static void test_alloc_failure_anywhere(void **state)
{
    fixture_t *fx = *state;
    /* Far more allocations than open + read make (~N_STRINGS + a dozen); a bound, not a goal. */
    enum { MAX_NTH = 4096 };
    int nth;

    for (nth = 1; nth < MAX_NTH; nth++) {
        readback_t rb;
        char ctx[CTX_BUF];
        bool pending;

        snprintf(ctx, sizeof(ctx), "allocation #%d fails", nth);
        memset(&rb, 0, sizeof(rb));
        rb.a = malloc(N_EVENTS * sizeof(uint64_t));
        assert_non_null(rb.a);
        nnp__alloc_fail_at((uint64_t)nth);
        rb.open_rc = nnp__raw_open(fx->work_dir, &rb.raw);
        if (rb.open_rc == NNP_OK) {
            rb.read_rc = nnp__raw_read(rb.raw, on_record, &rb);
            /* The decompression buffer grows on first use: reading may run out too. */
            EXPECT(ctx, rb.read_rc == NNP_OK ? delivered_all(&rb) : rb.read_rc == NNP_ENOMEM);
        } else {
            EXPECT(ctx, rb.open_rc == NNP_ENOMEM && rb.raw == NULL);
        }
        pending = nnp__alloc_fail_pending();
        nnp__alloc_fail_at(0);
        readback_done(&rb);
        if (pending)
            break; /* the failure was never reached: every allocation has been covered */
    }
    assert_true(nth > 1 && nth < MAX_NTH);
}

/* ---- duplicate chunks: the same sequence number twice ---- */

/* The data file with chunk k's bytes inserted again at offset at (a chunk boundary or the
 * end). Returns the new length; *buf is malloc'd. */
static size_t data_with_copy(const fixture_t *fx, uint32_t k, uint64_t at, unsigned char **buf)
{
    const chunk_info_t *ci = &fx->chunks[k];
    size_t len = fx->data_len + ci->size;
    unsigned char *b = malloc(len);
    assert_non_null(b);
    memcpy(b, fx->data, at);
    memcpy(b + at, fx->data + ci->off, ci->size);
    memcpy(b + at + ci->size, fx->data + at, fx->data_len - at);
    *buf = b;
    return len;
}

/* True when every record 0..N_EVENTS-1 was delivered exactly once, in any order. */
static bool delivered_each_once(const readback_t *rb)
{
    unsigned char *hit = calloc(N_EVENTS, 1);
    bool ok = hit != NULL && rb->bad == 0 && rb->n == N_EVENTS;
    for (uint64_t i = 0; ok && i < rb->n; i++) {
        ok = rb->a[i] < N_EVENTS && !hit[rb->a[i]];
        if (ok)
            hit[rb->a[i]] = 1;
    }
    free(hit);
    return ok;
}

/* Checks a copy whose only damage is dups duplicate chunks of dup_bytes in all, the first
 * at (file, first_off): every record once, in order, and the duplicates counted and named. */
static void check_duplicates(const fixture_t *fx, const char *ctx, uint64_t dups,
                             uint64_t dup_bytes, const char *file, uint64_t first_off)
{
    readback_t rb;
    readback_run(fx, &rb);
    EXPECT(ctx, rb.open_rc == NNP_OK && rb.read_rc == NNP_OK);
    EXPECT(ctx, delivered_all(&rb));
    EXPECT(ctx, rb.rep.records == N_EVENTS);
    EXPECT(ctx, rb.rep.chunks_ok == meta_ok(fx) + fx->n_chunks);
    EXPECT(ctx, rb.rep.chunks_duplicate == dups);
    EXPECT(ctx, rb.rep.chunks_corrupt == 0 && rb.rep.chunks_truncated == 0);
    EXPECT(ctx, rb.rep.bytes_skipped == dup_bytes);
    EXPECT(ctx, rb.rep.n_damage == dups);
    EXPECT(ctx, damage_is(&rb, 0, file, first_off, NNP_ECORRUPT, "read already"));
    readback_done(&rb);
}

/* A RECORDS chunk written twice (right after itself, or at the end of the file) is read
 * once: before the fix its records were delivered, and counted, twice. */
static void test_duplicate_data_chunk_read_once(void **state)
{
    fixture_t *fx = *state;
    const uint32_t picks[] = {0, fx->n_chunks / 2, fx->n_chunks - 1};

    for (size_t i = 0; i < NNP_ARRAY_LEN(picks); i++) {
        const chunk_info_t *ci = &fx->chunks[picks[i]];
        const uint64_t places[] = {chunk_end(ci), fx->data_len};
        for (size_t p = 0; p < NNP_ARRAY_LEN(places); p++) {
            char ctx[CTX_BUF];
            unsigned char *buf;
            size_t len = data_with_copy(fx, picks[i], places[p], &buf);
            snprintf(ctx, sizeof(ctx), "chunk %u (seq %llu) copied to offset %llu", picks[i],
                     (unsigned long long)ci->seq, (unsigned long long)places[p]);
            write_bytes(fx->work_dir, DATA_NAME, buf, len);
            free(buf);
            check_duplicates(fx, ctx, 1, ci->size, DATA_NAME, places[p]);
        }
    }
}

/* A data file restored beside its original under the next number (a copy with its file
 * number changed): all its chunks are duplicates, and nothing is counted twice. */
static void test_duplicate_data_file_read_once(void **state)
{
    fixture_t *fx = *state;
    unsigned char *copy = malloc(fx->data_len);
    nnp_raw_file_header_t fh;

    assert_non_null(copy);
    memcpy(copy, fx->data, fx->data_len);
    memcpy(&fh, copy, sizeof(fh));
    fh.file_seq = 2;
    memcpy(copy, &fh, sizeof(fh));
    write_bytes(fx->work_dir, DATA_NAME_2, copy, fx->data_len);
    free(copy);
    check_duplicates(fx, "data_000002.nnp a copy of data_000001.nnp", fx->n_chunks,
                     fx->data_len - FILE_HDR, DATA_NAME_2, FILE_HDR);
}

/* Appends a LOSS chunk {tid 0, dropped} with sequence number seq to buf at *len. */
static void append_loss_chunk(unsigned char *buf, size_t *len, uint64_t seq, uint64_t dropped)
{
    uint64_t payload[2] = {0, dropped};
    nnp_chunk_header_t h;
    memset(&h, 0, sizeof(h));
    h.magic = NNP_CHUNK_MAGIC;
    h.type = NNP_CHUNK_LOSS;
    h.codec = NNP_CODEC_NONE;
    h.payload_bytes = h.raw_bytes = (uint32_t)sizeof(payload);
    h.payload_crc = nnp__crc32c(0, payload, sizeof(payload));
    h.count = 1;
    h.seq = seq;
    h.header_crc = nnp__crc32c(0, &h, offsetof(nnp_chunk_header_t, header_crc));
    memcpy(buf + *len, &h, sizeof(h));
    memcpy(buf + *len + sizeof(h), payload, sizeof(payload));
    *len += sizeof(h) + sizeof(payload);
}

/* Duplicates in meta.nnp: a LOSS chunk twice counts its dropped events once, a STRINGS
 * chunk twice leaves the strings as they were; the data chunks are all read. */
static void test_duplicate_meta_chunks(void **state)
{
    fixture_t *fx = *state;
    enum { DROPPED = 5 };
    const chunk_info_t *strs = &fx->meta_chunks[fx->str_chunk[0]];
    const size_t loss_bytes = CHUNK_HDR + 2 * sizeof(uint64_t);
    unsigned char *meta = malloc(fx->meta_len + 2 * loss_bytes + strs->size);
    size_t len = fx->meta_len;
    uint64_t second_loss;
    readback_t rb;
    const char *ctx = "meta.nnp with a LOSS chunk twice and a STRINGS chunk twice";

    assert_non_null(meta);
    memcpy(meta, fx->meta, fx->meta_len);
    append_loss_chunk(meta, &len, fx->max_seq + 1, DROPPED);
    second_loss = len;
    append_loss_chunk(meta, &len, fx->max_seq + 1, DROPPED);
    memcpy(meta + len, fx->meta + strs->off, strs->size);
    len += strs->size;
    write_bytes(fx->work_dir, META_NAME, meta, len);
    free(meta);

    readback_run(fx, &rb);
    EXPECT(ctx, rb.open_rc == NNP_OK && rb.read_rc == NNP_OK);
    EXPECT(ctx, delivered_all(&rb));
    EXPECT(ctx, rb.rep.events_lost == DROPPED);
    EXPECT(ctx, rb.rep.chunks_duplicate == 2);
    EXPECT(ctx, rb.rep.chunks_ok == meta_ok(fx) + 1 + fx->n_chunks);
    EXPECT(ctx, rb.rep.bytes_skipped == loss_bytes + strs->size);
    EXPECT(ctx, rb.rep.n_damage == 2);
    EXPECT(ctx, damage_is(&rb, 0, META_NAME, second_loss, NNP_ECORRUPT, "read already"));
    EXPECT(ctx,
           damage_is(&rb, 1, META_NAME, second_loss + loss_bytes, NNP_ECORRUPT, "read already"));
    for (uint32_t i = 0; i < N_STRINGS; i++) {
        const char *str = nnp__raw_str(rb.raw, fx->str_ids[i]);
        EXPECT(ctx, str != NULL && strcmp(str, fx->str_text[i]) == 0);
    }
    readback_done(&rb);
}

/* Only an intact chunk counts as read: a damaged first copy does not hide a later intact
 * one (its records arrive, once, where the copy is), and a damaged later copy is corrupt,
 * not a duplicate. */
static void test_duplicate_of_damaged_chunk(void **state)
{
    fixture_t *fx = *state;
    const uint32_t k = fx->n_chunks / 2;
    const chunk_info_t *ci = &fx->chunks[k];
    const uint64_t payload_mid = CHUNK_HDR + (ci->size - CHUNK_HDR) / 2;
    unsigned char *buf;
    size_t len = data_with_copy(fx, k, fx->data_len, &buf);
    readback_t rb;
    const char *ctx = "first copy damaged, intact copy at the end";

    buf[ci->off + payload_mid] ^= FLIP_MIXED;
    write_bytes(fx->work_dir, DATA_NAME, buf, len);
    readback_run(fx, &rb);
    EXPECT(ctx, rb.open_rc == NNP_OK && rb.read_rc == NNP_OK);
    EXPECT(ctx, delivered_each_once(&rb));
    EXPECT(ctx, rb.rep.chunks_corrupt == 1 && rb.rep.chunks_duplicate == 0);
    EXPECT(ctx, rb.rep.chunks_ok == meta_ok(fx) + fx->n_chunks);
    readback_done(&rb);

    ctx = "intact first copy, damaged copy at the end";
    buf[ci->off + payload_mid] ^= FLIP_MIXED;
    buf[fx->data_len + payload_mid] ^= FLIP_MIXED;
    write_bytes(fx->work_dir, DATA_NAME, buf, len);
    free(buf);
    readback_run(fx, &rb);
    EXPECT(ctx, rb.open_rc == NNP_OK && rb.read_rc == NNP_OK);
    EXPECT(ctx, delivered_all(&rb));
    EXPECT(ctx, rb.rep.chunks_corrupt == 1 && rb.rep.chunks_duplicate == 0);
    readback_done(&rb);
}

/* Reading the same handle twice delivers every record twice, once per read: the chunks of
 * the first read are not duplicates of the second. */
static void test_second_read_is_not_duplicate(void **state)
{
    fixture_t *fx = *state;
    readback_t rb;
    const char *ctx = "second nnp__raw_read of one handle";

    readback_run(fx, &rb);
    EXPECT(ctx, rb.open_rc == NNP_OK && rb.read_rc == NNP_OK && delivered_all(&rb));
    rb.n = 0;
    EXPECT(ctx, nnp__raw_read(rb.raw, on_record, &rb) == NNP_OK);
    EXPECT(ctx, delivered_all(&rb));
    EXPECT(ctx, nnp__raw_report(rb.raw)->chunks_duplicate == 0);
    EXPECT(ctx, nnp__raw_report(rb.raw)->records == 2 * (uint64_t)N_EVENTS);
    readback_done(&rb);
}

/* ---- the CLI ---- */

/* Runs a shell command; returns its exit code, or -1 when it did not exit normally.
 * stdout lines are counted and the last one kept in last (cap bytes). */
static int run_cli(const char *cmd, uint64_t *lines, char *last, size_t cap)
{
    FILE *p = popen(cmd, "r");
    char *line = NULL;
    size_t line_cap = 0;
    ssize_t got;
    int status;

    assert_non_null(p);
    *lines = 0;
    if (cap > 0)
        last[0] = '\0';
    while ((got = getline(&line, &line_cap, p)) >= 0) {
        (*lines)++;
        if (cap > 0)
            snprintf(last, cap, "%s", line);
    }
    free(line);
    status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static const char *err_text(const fixture_t *fx, char **buf)
{
    char path[PATH_BUF];
    size_t len;
    snprintf(path, sizeof(path), "%s/stderr.txt", fx->root);
    assert_int_equal(nnp__read_file(path, STDERR_CAP, buf, &len), NNP_OK);
    return *buf;
}

static double json_num(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsNumber(v))
        fail_msg("summary has no number \"%s\"", key);
    return v->valuedouble;
}

/* `nnprof dump` on a directory with one corrupted chunk: exit 0, every surviving record on
 * stdout, a summary line that counts the damage, and stderr naming file and offset. */
static void test_cli_dump_damaged_dir(void **state)
{
    fixture_t *fx = *state;
    /* The summary line holds up to NNP_RAW_MAX_DAMAGE messages; 64 KiB is ample. */
    enum { LAST_LINE_CAP = 1 << 16 };
    const chunk_info_t *ci = &fx->chunks[fx->n_chunks / 2];
    unsigned char *copy = malloc(fx->data_len);
    char *last = malloc(LAST_LINE_CAP), *err = NULL;
    char cmd[3 * PATH_BUF], want[CTX_BUF];
    const cJSON *damage, *d0;
    cJSON *sum;
    uint64_t lines;

    assert_non_null(copy);
    assert_non_null(last);
    memcpy(copy, fx->data, fx->data_len);
    copy[ci->off + CHUNK_HDR + (ci->size - CHUNK_HDR) / 2] ^= FLIP_MIXED;
    write_bytes(fx->work_dir, DATA_NAME, copy, fx->data_len);
    free(copy);

    snprintf(cmd, sizeof(cmd), "'%s/nnprof' dump '%s' 2>'%s/stderr.txt'", NNP_BINARY_DIR,
             fx->work_dir, fx->root);
    assert_int_equal(run_cli(cmd, &lines, last, LAST_LINE_CAP), 0);
    assert_int_equal(lines, N_EVENTS - ci->count + 1);
    sum = cJSON_Parse(last);
    if (!sum)
        fail_msg("last stdout line is not JSON: %.200s", last);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(sum, "kind")),
                        "summary");
    assert_true(json_num(sum, "chunks_corrupt") == 1);
    assert_true(json_num(sum, "chunks_truncated") == 0);
    assert_true(json_num(sum, "records") == N_EVENTS - ci->count);
    assert_true(json_num(sum, "chunks_ok") == meta_ok(fx) + fx->n_chunks - 1);
    assert_true(json_num(sum, "bytes_skipped") == ci->size);
    assert_true(json_num(sum, "format_version") == fx->version);
    /* The codecs of the chunks read: the data chunks' one (one chunk lost), plus what the
     * meta chunks used. */
    {
        const cJSON *codecs = cJSON_GetObjectItemCaseSensitive(sum, "codecs");
        uint32_t meta_same = 0;
        for (uint32_t c = 0; c < fx->n_meta_chunks; c++)
            meta_same += fx->meta_chunks[c].codec == fx->codec;
        assert_true(json_num(codecs, nnp__codec_name(fx->codec)) == fx->n_chunks - 1 + meta_same);
    }
    damage = cJSON_GetObjectItemCaseSensitive(sum, "damage");
    assert_true(cJSON_IsArray(damage));
    assert_int_equal(cJSON_GetArraySize(damage), 1);
    d0 = cJSON_GetArrayItem(damage, 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d0, "file")),
                        DATA_NAME);
    assert_true(json_num(d0, "offset") == ci->off);
    cJSON_Delete(sum);

    snprintf(want, sizeof(want), DATA_NAME " at offset %llu", (unsigned long long)ci->off);
    err_text(fx, &err);
    if (!strstr(err, want) || !strstr(err, "payload checksum mismatch"))
        fail_msg("stderr does not name the damage (\"%s\"): %.300s", want, err);
    free(err);

    /* --summary-only: the summary line alone. */
    snprintf(cmd, sizeof(cmd), "'%s/nnprof' dump --summary-only '%s' 2>'%s/stderr.txt'",
             NNP_BINARY_DIR, fx->work_dir, fx->root);
    assert_int_equal(run_cli(cmd, &lines, last, LAST_LINE_CAP), 0);
    assert_int_equal(lines, 1);
    assert_non_null(strstr(last, "\"chunks_corrupt\":1"));
    free(last);
}

/* Exit codes documented in `nnprof --help`: 1 nothing readable, 2 usage error. */
static void test_cli_dump_exit_codes(void **state)
{
    fixture_t *fx = *state;
    char cmd[3 * PATH_BUF], *err = NULL;
    uint64_t lines;

    snprintf(cmd, sizeof(cmd), "'%s/nnprof' dump '%s/nonexistent' 2>'%s/stderr.txt'",
             NNP_BINARY_DIR, fx->root, fx->root);
    assert_int_equal(run_cli(cmd, &lines, NULL, 0), 1);
    assert_int_equal(lines, 0);
    err_text(fx, &err);
    assert_non_null(strstr(err, "nonexistent"));
    free(err);

    snprintf(cmd, sizeof(cmd), "'%s/nnprof' dump 2>'%s/stderr.txt'", NNP_BINARY_DIR, fx->root);
    assert_int_equal(run_cli(cmd, &lines, NULL, 0), 2);
    assert_int_equal(lines, 0);
}

/* `nnprof dump`, `info` and `analyse` report a duplicated chunk: the summary's and info's
 * chunks_duplicate, a line on dump's stderr naming it, analyse's warning; every record is
 * printed once. */
static void test_cli_reports_duplicates(void **state)
{
    fixture_t *fx = *state;
    enum { LAST_LINE_CAP = 1 << 16 };
    const uint32_t k = fx->n_chunks / 2;
    unsigned char *buf;
    size_t len = data_with_copy(fx, k, fx->data_len, &buf);
    char *last = malloc(LAST_LINE_CAP), *err = NULL;
    char cmd[3 * PATH_BUF], want[CTX_BUF];
    const cJSON *ranks, *r0;
    cJSON *doc;
    uint64_t lines;
    unsigned char *info;
    size_t info_len;

    assert_non_null(last);
    write_bytes(fx->work_dir, DATA_NAME, buf, len);
    free(buf);

    snprintf(cmd, sizeof(cmd), "'%s/nnprof' dump '%s' 2>'%s/stderr.txt'", NNP_BINARY_DIR,
             fx->work_dir, fx->root);
    assert_int_equal(run_cli(cmd, &lines, last, LAST_LINE_CAP), 0);
    assert_int_equal(lines, N_EVENTS + 1);
    doc = cJSON_Parse(last);
    if (!doc)
        fail_msg("last stdout line is not JSON: %.200s", last);
    assert_true(json_num(doc, "chunks_duplicate") == 1);
    assert_true(json_num(doc, "records") == N_EVENTS);
    assert_true(json_num(doc, "bytes_skipped") == fx->chunks[k].size);
    cJSON_Delete(doc);
    snprintf(want, sizeof(want), DATA_NAME " at offset %zu", fx->data_len);
    err_text(fx, &err);
    if (!strstr(err, want) || !strstr(err, "read already"))
        fail_msg("stderr does not name the duplicate (\"%s\"): %.300s", want, err);
    free(err);

    snprintf(cmd, sizeof(cmd), "'%s/nnprof' info --json '%s' 2>'%s/stderr.txt'", NNP_BINARY_DIR,
             fx->work_dir, fx->root);
    assert_int_equal(run_cli(cmd, &lines, last, LAST_LINE_CAP), 0);
    doc = cJSON_Parse(last);
    if (!doc)
        fail_msg("nnprof info --json printed no JSON: %.200s", last);
    ranks = cJSON_GetObjectItemCaseSensitive(doc, "ranks");
    assert_int_equal(cJSON_GetArraySize(ranks), 1);
    r0 = cJSON_GetArrayItem(ranks, 0);
    assert_true(json_num(r0, "chunks_duplicate") == 1);
    assert_true(json_num(r0, "records") == N_EVENTS);
    cJSON_Delete(doc);
    free(last);

    /* analyse warns (the tests run with NNPROF_LOG_LEVEL=error: raise it). */
    info = load_file(fx->src_dir, "info.json", &info_len);
    write_bytes(fx->work_dir, "info.json", info, info_len);
    free(info);
    snprintf(cmd, sizeof(cmd),
             "NNPROF_LOG_LEVEL=warn '%s/nnprof' analyse --quiet -o '%s/out' '%s' "
             "2>'%s/stderr.txt'",
             NNP_BINARY_DIR, fx->root, fx->work_dir, fx->root);
    assert_int_equal(run_cli(cmd, &lines, NULL, 0), 0);
    err_text(fx, &err);
    if (!strstr(err, "skipped 1 duplicate chunk(s)"))
        fail_msg("analyse does not warn of the duplicate: %.300s", err);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_intact_run_reads_back_exactly, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncation_keeps_whole_chunks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_byte_flip_costs_one_chunk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_garbage_between_chunks_is_skipped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_meta_truncated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_meta_strings_flipped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_a_raw_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_short_and_foreign_data_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_data_file_is_reported, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cli_dump_damaged_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cli_dump_exit_codes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_uncompressed_chunk_any_alignment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alloc_failure_anywhere, setup, teardown),
        /* Ticks outside the clock points must clamp, not wrap (see the test). */
        cmocka_unit_test_setup_teardown(test_ticks_convert_monotonically, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_data_chunk_read_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_data_file_read_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_meta_chunks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_of_damaged_chunk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_second_read_is_not_duplicate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cli_reports_duplicates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_packing_costs_one_chunk, setup, teardown),
        /* The same damage on a version 2 file (zstd-compressed records): still read. */
        cmocka_unit_test_setup_teardown(test_intact_run_reads_back_exactly, setup_v2, teardown),
        cmocka_unit_test_setup_teardown(test_truncation_keeps_whole_chunks, setup_v2, teardown),
        cmocka_unit_test_setup_teardown(test_byte_flip_costs_one_chunk, setup_v2, teardown),
        cmocka_unit_test_setup_teardown(test_garbage_between_chunks_is_skipped, setup_v2, teardown),
        cmocka_unit_test_setup_teardown(test_cli_dump_damaged_dir, setup_v2, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
