/* fuzz_raw.c - libFuzzer harness for the raw reader (src/read/raw_reader.c). The first input
 * byte picks the mode: whether the rest becomes a data file (next to a valid meta.nnp) or
 * meta.nnp (next to a valid data file), and whether a file header is prepended and the chunk
 * checksums repaired first, so mutations get past the CRCs into decompression, unpacking
 * (codec pack, format v3) and record parsing. The valid files come from a small run recorded
 * once in LLVMFuzzerInitialize (packed, as the writer writes them); the corpus adds a packed
 * data file of demo_train (ops, memory, pipeline, CPU samples: 1- to 3-slot records). The
 * seed run also writes op_brief records (format v4) the way the PyTorch shim does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/raw_format.h"
#include "harness.h"
#include "nnprof/nnprof.h"
#include "read/raw_reader.h"
#include "record/ring_abi.h"
#include "util/util.h"

/* Mode bits of the first input byte. */
#define MODE_META       0x01u /* the input is meta.nnp (else data_000001.nnp) */
#define MODE_ADD_HEADER 0x02u /* prepend a valid 32-byte file header to the input */
#define MODE_FIX_CRC    0x04u /* recompute the CRCs of every chunk header found */
#define MODE_STOP_EARLY 0x08u /* the callback stops the read at the first record */

#define DATA_NAME "data_000001.nnp"
#define META_NAME "meta.nnp"
#define PATH_BUF  4096
/* In the harness's directory: the seed run, and the raw dir the reader opens per input. */
#define RUN_DIR  "run"
#define WORK_DIR "work"
/* Events of each kind recorded for the valid run: a few chunks' worth, files of a few KB. */
#define SEED_EVENTS 16
/* Graph id and sizes of the seed run's records; any values would do. */
#define SEED_GRAPH_ID 3u
#define SEED_BYTES    4096u

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char work_dir[PATH_BUF]; /* WORK_DIR's path */
static char *valid_meta, *valid_data;
/* Every value read from the records is folded in here, so no read is optimised away. */
static volatile uint64_t sink;
static size_t valid_meta_len, valid_data_len;

static void free_seed(void)
{
    free(valid_meta);
    free(valid_data);
}

static int load(const char *dir, const char *name, char **out, size_t *len)
{
    char path[PATH_BUF];
    if (nnp__path_join(path, sizeof(path), dir, name) != NNP_OK)
        return -1;
    /* A generous bound: the seed run's files are a few KB. */
    return nnp__read_file(path, 1u << 24, out, len) == NNP_OK ? 0 : -1;
}

/* An op_brief record (format v4), written into the ring as the PyTorch shim writes it
 * (record/ring_abi.h); every other one with an autograd link. */
static void put_op_brief(uint32_t name, uint64_t i)
{
    struct nnp_tbuf *b = nnp__ring_thread();
    unsigned char *p = (unsigned char *)b;
    uint64_t h, limit, mask;
    nnp_rec_t *slots, *r;

    if (!b || !(__atomic_load_n(nnp__ring_gate(), __ATOMIC_RELAXED) & NNP_GATE_OPS))
        return;
    h = __atomic_load_n((uint64_t *)(p + NNP_RING_OFF_HEAD), __ATOMIC_RELAXED);
    memcpy(&limit, p + NNP_RING_OFF_LIMIT, sizeof(limit));
    if (h + 1 > limit && (h = nnp__ring_reserve_slow(b, 1)) == UINT64_MAX)
        return;
    memcpy(&slots, p + NNP_RING_OFF_SLOTS, sizeof(slots));
    memcpy(&mask, p + NNP_RING_OFF_MASK, sizeof(mask));
    r = &slots[h & mask];
    r->kind = NNP_REC_OP_BRIEF;
    r->n_slots = 1;
    r->flags = i % 2 ? NNP_REC_F_SEQ | NNP_REC_F_BACKWARD : 0;
    r->name = name;
    r->ts = nnp_now();
    r->a = r->ts + 1;
    r->b = i % 2 ? i | (uint64_t)1 << NNP_REC_BRIEF_THREAD_SHIFT : 0;
    __atomic_store_n((uint64_t *)(p + NNP_RING_OFF_HEAD), h + 1, __ATOMIC_RELEASE);
}

/* Records one event of most kinds per iteration, some with raw ticks (so the reader's
 * tick-to-ns conversion runs) and some in ns. */
static void record_seed_run(void)
{
    nnp_op_t op = {0};
    nnp_kernel_t k = {0};
    nnp_comm_t c = {0};
    nnp_tensor_t t = {0};
    nnp_host_tag_t tag = {0};
    nnp_pipeline_op_t p = {0};
    nnp_str_t dtype = nnp_intern("MPI_FLOAT");

    op.name = nnp_intern("Default/network/Conv2D-op1");
    op.type = nnp_intern("Conv2D");
    op.flops_matrix = SEED_BYTES;
    k.name = nnp_intern("conv_kernel");
    c.name = nnp_intern("hcom_allReduce_1");
    c.kind = NNP_COMM_ALLREDUCE;
    c.group = nnp_intern("world");
    c.peer = -1;
    t.name = nnp_intern("weight");
    tag.module = nnp_intern("Dataset");
    tag.event = nnp_intern("GetNext");
    p.op_type = nnp_intern("MapOp");
    p.parent_id = -1;
    for (uint64_t i = 0; i < SEED_EVENTS; i++) {
        uint64_t t0 = nnp_now();
        nnp_step_begin(i, SEED_GRAPH_ID);
        nnp_range_begin(&tag);
        nnp_op_since(&op, t0);
        put_op_brief(op.type, i);
        nnp_kernel_at(&k, nnp_clock_ns(), nnp_clock_ns() + 1);
        /* Every other comm record carries the format-2 detail slot. */
        c.count = i % 2 ? 0 : i + 1;
        c.has_wait = i % 2 == 0;
        c.wait_ns = i;
        c.has_tag = i % 2 == 0;
        c.datatype = i % 2 ? 0 : dtype;
        nnp_comm_at(&c, nnp_clock_ns(), nnp_clock_ns() + 1);
        if (i == 0) {
            static const int32_t members[] = {0, 1, 2, 5};
            nnp_comm_group(c.group, members, 4, 1);
        }
        t.address = SEED_BYTES * (i + 1);
        t.size_bytes = SEED_BYTES;
        nnp_mem_alloc(&t);
        nnp_mem_free(t.address, t.size_bytes);
        p.op_id = (int64_t)i;
        nnp_pipeline_op(&p);
        nnp_queue_sample((int64_t)i, (uint32_t)i, SEED_EVENTS);
        nnp_counter(op.name, (double)i / 3.0);
        nnp_range_end(&tag);
        nnp_step_end(i, SEED_GRAPH_ID);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    static const char *const dirs[] = {WORK_DIR, NULL};
    nnp_options_t o;
    nnp_session_t *s = NULL;
    char raw_dir[PATH_BUF];
    (void)argc;
    (void)argv;

    if (nnp_fuzz_init("raw", dirs) != 0)
        return -1;
    atexit(free_seed);
    nnp_options_init(&o);
    if (!nnp_fuzz_path(o.output_path, sizeof(o.output_path), RUN_DIR) ||
        !nnp_fuzz_path(work_dir, sizeof(work_dir), WORK_DIR))
        return -1;
    o.sample_interval_ms = 0;
    o.profile_memory = true; /* keep tensor and communication records in the seed run */
    o.profile_communication = true;
    if (nnp_session_create(&o, &s) != NNP_OK) {
        fprintf(stderr, "fuzz_raw: cannot record the seed run: %s\n", nnp_last_error());
        return -1;
    }
    record_seed_run();
    snprintf(raw_dir, sizeof(raw_dir), "%s", nnp_session_raw_dir(s));
    if (nnp_session_destroy(s) != NNP_OK ||
        load(raw_dir, META_NAME, &valid_meta, &valid_meta_len) != 0 ||
        load(raw_dir, DATA_NAME, &valid_data, &valid_data_len) != 0) {
        fprintf(stderr, "fuzz_raw: cannot load the seed run from %s\n", raw_dir);
        return -1;
    }
    return 0;
}

/* Recomputes both CRCs of every chunk header found, walking the way the reader does: a
 * header whose payload fits is followed by that payload; elsewhere scan byte by byte. */
static void fix_checksums(unsigned char *buf, size_t len)
{
    size_t off = sizeof(nnp_raw_file_header_t);
    while (off + sizeof(nnp_chunk_header_t) <= len) {
        nnp_chunk_header_t h;
        size_t room = len - off - sizeof(h);
        memcpy(&h, buf + off, sizeof(h));
        if (h.magic != NNP_CHUNK_MAGIC) {
            off++;
            continue;
        }
        if (h.payload_bytes <= room)
            h.payload_crc = nnp__crc32c(0, buf + off + sizeof(h), h.payload_bytes);
        h.header_crc = nnp__crc32c(0, &h, offsetof(nnp_chunk_header_t, header_crc));
        memcpy(buf + off, &h, sizeof(h));
        off += sizeof(h) + (h.payload_bytes <= room ? h.payload_bytes : 0);
    }
}

typedef struct visit {
    const nnp_raw_t *raw;
    uint64_t sum; /* every field read, folded together (ends in sink) */
    bool stop_early;
} visit_t;

/* Touches everything the reader hands out, as a consumer (nnprof dump) would. */
static int on_record(void *user, const nnp_raw_event_t *ev)
{
    visit_t *v = user;
    for (unsigned i = 0; i < ev->n_slots; i++) {
        const nnp_rec_t *r = &ev->slots[i];
        const char *s = nnp__raw_str(v->raw, r->name);
        v->sum += r->kind + r->n_slots + r->flags + r->ts + r->a + r->b + (s ? strlen(s) : 0);
    }
    v->sum += ev->kind + ev->tid + ev->ts_ns + ev->end_ns + nnp__raw_thread_name(v->raw, ev->tid);
    return v->stop_early ? 1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const size_t hdr = sizeof(nnp_raw_file_header_t);
    unsigned mode;
    unsigned char *buf;
    size_t len;
    nnp_raw_t *raw = NULL;
    visit_t v = {0};

    if (size < 1 || !valid_meta || !valid_data)
        return 0;
    mode = data[0];
    data++;
    size--;
    buf = malloc(size + hdr + 1);
    if (!buf)
        return 0;
    len = 0;
    if (mode & MODE_ADD_HEADER) {
        nnp_raw_file_header_t fh;
        memset(&fh, 0, sizeof(fh));
        memcpy(fh.magic, NNP_RAW_MAGIC, NNP_RAW_MAGIC_LEN);
        fh.version = NNP_RAW_VERSION;
        fh.header_bytes = (uint32_t)sizeof(fh);
        fh.endian_mark = NNP_RAW_ENDIAN_MARK;
        fh.slot_bytes = (uint32_t)sizeof(nnp_rec_t);
        fh.file_kind = (mode & MODE_META) ? NNP_FILE_META : NNP_FILE_DATA;
        fh.file_seq = (mode & MODE_META) ? 0 : 1;
        memcpy(buf, &fh, sizeof(fh));
        len = sizeof(fh);
    }
    if (size > 0)
        memcpy(buf + len, data, size);
    len += size;
    if (mode & MODE_FIX_CRC)
        fix_checksums(buf, len);

    if (nnp_fuzz_write(WORK_DIR "/" META_NAME,
                       (mode & MODE_META) ? buf : (unsigned char *)valid_meta,
                       (mode & MODE_META) ? len : valid_meta_len) != 0 ||
        nnp_fuzz_write(WORK_DIR "/" DATA_NAME,
                       (mode & MODE_META) ? (unsigned char *)valid_data : buf,
                       (mode & MODE_META) ? valid_data_len : len) != 0) {
        free(buf);
        return 0;
    }
    free(buf);

    if (nnp__raw_open(work_dir, &raw) != NNP_OK)
        return 0;
    v.raw = raw;
    v.stop_early = (mode & MODE_STOP_EARLY) != 0;
    (void)nnp__raw_read(raw, on_record, &v);
    {
        const nnp_raw_report_t *rep = nnp__raw_report(raw);
        for (uint32_t i = 0; i < rep->n_damage && i < NNP_RAW_MAX_DAMAGE; i++)
            v.sum += strlen(rep->damage[i].file) + strlen(rep->damage[i].msg);
        for (uint32_t i = 0; i < nnp__raw_thread_count(raw); i++)
            v.sum += nnp__raw_thread_tid(raw, i);
    }
    nnp__raw_close(raw);
    sink += v.sum;
    return 0;
}
