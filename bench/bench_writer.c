/* bench_writer.c - throughput of the writer thread: 8 threads record a known volume under
 * the block policy (nothing drops); the writer thread's CPU time gives raw MB and events it
 * drains per CPU-second. Baseline doing the same work in the same process (STYLE 7.10):
 * the record slots the writer encoded (read back from its chunks) packed again with the
 * same encoder (rec_pack) in the same chunk sizes, checksummed and written with write() to
 * a file in the same directory, on one thread (no fsync on either side). Beside it, the
 * candidate encodings of the same slots, CPU time alone: zstd level 1 on the slots (the
 * v2 writer's codec), packing, and packing then zstd at fast levels. Repetitions: min and
 * median. Also bytes on disk per event. Usage: bench_writer [REPS]. Never fails on a
 * figure. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include <nnprof/nnprof.h>

/* The on-disk format (a plain header of structs) and the packer: the baseline reads the
 * chunks back, unpacks them and packs them again (rec_pack.c is compiled in). */
#include "bench_load.h"
#include "format/raw_format.h"
#include "format/rec_pack.h"
#include "util/util.h" /* nnp__crc32c (crc32c.c is compiled in) */
#include "writer_thread.h"

#define N_THREADS         8
#define EVENTS_PER_THREAD 2000000u
/* Each loop iteration records EVENTS_PER_ITER events: range begin, counter, op (a 2-slot
 * record), range end - so 5 slots of 32 bytes per 4 events. */
#define EVENTS_PER_ITER 4u
/* Distinct names and streams cycled through, so the compressor sees realistic (not
 * constant) ids. */
#define N_NAMES   16u
#define N_STREAMS 4u
/* Timed repetitions (min and median shown); each is a fresh session in a fresh
 * directory. */
#define DEFAULT_REPS 5
#define MAX_REPS     50
/* zstd level of the v2 writer's RECORDS chunks (and of today's meta chunks). */
#define V2_ZSTD_LEVEL 1
/* Goal of issue 17: one writer core drains at least 50 M events/s. */
#define TARGET_EVENTS_PER_WRITER_CPU_S 50e6
#define DECIMAL                        10
#define NS_PER_SEC                     1e9
#define BYTES_PER_MB                   1e6
#define PER_MILLION                    1e6

static nnp_host_tag_t g_tags[N_NAMES];
static nnp_op_t g_ops[N_NAMES];
static nnp_str_t g_counters[N_NAMES];

static double now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / NS_PER_SEC;
}

static double cpu_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / NS_PER_SEC;
}

static void *record_main(void *arg)
{
    (void)arg;
    for (uint32_t i = 0; i < EVENTS_PER_THREAD / EVENTS_PER_ITER; i++) {
        uint32_t k = i % N_NAMES;
        uint64_t t0 = nnp_now();
        nnp_range_begin(&g_tags[k]);
        nnp_counter(g_counters[k], (double)i);
        nnp_op_since(&g_ops[k], t0);
        nnp_range_end(&g_tags[k]);
    }
    return NULL;
}

static void set_payload(void)
{
    char name[64];
    for (uint32_t k = 0; k < N_NAMES; k++) {
        snprintf(name, sizeof(name), "Event%u", k);
        g_tags[k].event = nnp_intern(name);
        g_tags[k].module = nnp_intern("Bench");
        g_tags[k].stage = nnp_intern("Run");
        g_tags[k].level = (uint8_t)(k & 1u);
        snprintf(name, sizeof(name), "counter%u", k);
        g_counters[k] = nnp_intern(name);
        snprintf(name, sizeof(name), "Default/network/Conv2D-op%u", k);
        g_ops[k].name = nnp_intern(name);
        g_ops[k].type = nnp_intern("Conv2D");
        g_ops[k].graph_id = 1;
        g_ops[k].stream_id = k % N_STREAMS;
        g_ops[k].correlation_id = k + 1;
    }
}

static uint64_t g_du_bytes;

static int du_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)path;
    (void)ftw;
    if (flag == FTW_F)
        g_du_bytes += (uint64_t)sb->st_size;
    return 0;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path) != 0 ? -1 : 0;
}

/* Encodings of the same record slots compared on one thread (CPU time of the encoding
 * alone, no write): what the v2 writer did, what the writer does now, and packing followed
 * by zstd at two fast levels (id, label, zstd level after packing or 0, packs). */
#define CODEC_MAP(XX)                                                                              \
    XX(ZSTD1, "zstd level 1 on the slots (v2)", V2_ZSTD_LEVEL, false)                              \
    XX(PACK, "pack (the writer's codec)", 0, true)                                                 \
    XX(PACK_ZSTD1, "pack + zstd level 1", 1, true)                                                 \
    XX(PACK_ZSTDM3, "pack + zstd level -3", -3, true)

enum {
#define CODEC_ENUM_(id, label, level, packs) C_##id,
    CODEC_MAP(CODEC_ENUM_)
#undef CODEC_ENUM_
        N_CODECS
};

static const struct codec_info {
    const char *label;
    int level;
    bool packs;
} g_codecs[N_CODECS] = {
#define CODEC_INFO_(id, label, level, packs) {label, level, packs},
    CODEC_MAP(CODEC_INFO_)
#undef CODEC_INFO_
};

typedef struct sample {
    double wall_s;     /* nnp_session_start .. nnp_session_stop returned */
    double cpu_s;      /* process CPU time over the same interval */
    double base_s;     /* baseline: pack + CRC + write() of the same record slots, wall */
    double base_cpu_s; /* ... and its thread's CPU time */
    uint64_t base_raw_bytes, base_bytes; /* slot bytes it packed, and their packed size */
    double codec_cpu_s[N_CODECS];        /* each candidate encoding's CPU time */
    uint64_t codec_bytes[N_CODECS];      /* ... and its output bytes */
    double writer_cpu_s;  /* the writer thread's CPU over the same interval, < 0 if unknown */
    uint64_t files_bytes; /* every file of the raw directory after stop */
    nnp_stats_t st;
} sample_t;

/* The record slots of every RECORDS chunk of a raw directory's data files, as the writer
 * handed them to its encoder (unpacked or decompressed again here). */
typedef struct pieces {
    unsigned char **p;
    size_t *n;
    size_t count, cap;
    uint64_t bytes;
} pieces_t;

static void pieces_free(pieces_t *ps)
{
    for (size_t i = 0; i < ps->count; i++)
        free(ps->p[i]);
    free(ps->p);
    free(ps->n);
    memset(ps, 0, sizeof(*ps));
}

static int pieces_add(pieces_t *ps, unsigned char *p, size_t n)
{
    if (ps->count == ps->cap) {
        size_t ncap = ps->cap ? ps->cap * 2 : 1024;
        unsigned char **np = realloc(ps->p, ncap * sizeof(*np));
        size_t *nn = np ? realloc(ps->n, ncap * sizeof(*nn)) : NULL;
        if (np)
            ps->p = np;
        if (!np || !nn)
            return -1;
        ps->n = nn;
        ps->cap = ncap;
    }
    ps->p[ps->count] = p;
    ps->n[ps->count++] = n;
    ps->bytes += n;
    return 0;
}

static nnp_pack_state_t g_pack;

/* The slots of one stored RECORDS payload into raw (h.raw_bytes); 0 or -1. */
static int decode_payload(const nnp_chunk_header_t *h, const unsigned char *in, unsigned char *raw)
{
    if (h->codec == NNP_CODEC_PACK) {
        nnp__pack_reset(&g_pack);
        return h->raw_bytes % sizeof(nnp_rec_t) == 0 &&
                       nnp__pack_decode(&g_pack, in, h->payload_bytes, (nnp_rec_t *)raw,
                                        h->raw_bytes / sizeof(nnp_rec_t)) == 0
                   ? 0
                   : -1;
    }
    if (h->codec == NNP_CODEC_ZSTD) {
        size_t z = ZSTD_decompress(raw, h->raw_bytes, in, h->payload_bytes);
        return ZSTD_isError(z) || z != h->raw_bytes ? -1 : 0;
    }
    if (h->codec == NNP_CODEC_NONE && h->payload_bytes == h->raw_bytes) {
        memcpy(raw, in, h->raw_bytes);
        return 0;
    }
    return -1;
}

/* Reads one data file and appends the raw payload of each of its RECORDS chunks. */
static int load_file(const char *path, pieces_t *ps)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf;
    long size;
    size_t off = sizeof(nnp_raw_file_header_t);
    int rc = 0;

    if (!f)
        return -1;
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
        !(buf = malloc((size_t)size + 1))) {
        fclose(f);
        return -1;
    }
    if (fread(buf, 1, (size_t)size, f) != (size_t)size)
        rc = -1;
    fclose(f);
    while (rc == 0 && off + sizeof(nnp_chunk_header_t) <= (size_t)size) {
        nnp_chunk_header_t h;
        unsigned char *raw;
        memcpy(&h, buf + off, sizeof(h));
        off += sizeof(h);
        if (h.magic != NNP_CHUNK_MAGIC || off + h.payload_bytes > (size_t)size) {
            rc = -1;
            break;
        }
        if (h.type == NNP_CHUNK_RECORDS) {
            raw = malloc(h.raw_bytes ? h.raw_bytes : 1);
            if (!raw || decode_payload(&h, buf + off, raw) != 0 ||
                pieces_add(ps, raw, h.raw_bytes) != 0) {
                free(raw);
                rc = -1;
                break;
            }
        }
        off += h.payload_bytes;
    }
    free(buf);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every data_*.nnp of raw_dir, in file order. */
static int load_pieces(const char *raw_dir, pieces_t *ps)
{
    char *names[4096];
    size_t n = 0;
    struct dirent *e;
    DIR *d = opendir(raw_dir);
    int rc = 0;
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL && n < sizeof(names) / sizeof(names[0]))
        if (strncmp(e->d_name, "data_", 5) == 0)
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, n, sizeof(names[0]), cmp_str);
    for (size_t i = 0; i < n; i++) {
        char path[NNP_PATH_MAX];
        snprintf(path, sizeof(path), "%s/%s", raw_dir, names[i]);
        if (rc == 0 && load_file(path, ps) != 0) {
            fprintf(stderr, "bench_writer: cannot read back %s\n", path);
            rc = -1;
        }
        free(names[i]);
    }
    return rc;
}

static double thread_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / NS_PER_SEC;
}

/* Largest piece, for the output buffers. */
static size_t largest_piece(const pieces_t *ps)
{
    size_t m = 1;
    for (size_t i = 0; i < ps->count; i++)
        if (ps->n[i] > m)
            m = ps->n[i];
    return m;
}

/* The baseline: packs each piece as the writer does (a fresh state per chunk), checksums
 * it and writes it with its chunk header to dir/baseline.bin, on this thread. Fills its
 * CPU and wall seconds and the bytes written; -1 on error. */
static int baseline_run(const char *dir, const pieces_t *ps, double *cpu_s, double *wall_s,
                        uint64_t *out_bytes)
{
    char path[NNP_PATH_MAX];
    size_t cap = largest_piece(ps) / sizeof(nnp_rec_t) * NNP_PACK_SLOT_MAX;
    unsigned char *pbuf = malloc(cap);
    double t0, c0;
    int fd, rc = 0;

    snprintf(path, sizeof(path), "%s/baseline.bin", dir);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (!pbuf || fd < 0) {
        rc = -1;
        goto out;
    }
    *out_bytes = 0;
    t0 = now_sec();
    c0 = thread_cpu_now();
    for (size_t i = 0; i < ps->count && rc == 0; i++) {
        nnp_chunk_header_t h;
        size_t n, used;
        uint32_t n_rec;
        nnp__pack_reset(&g_pack);
        n = nnp__pack_encode(&g_pack, (const nnp_rec_t *)ps->p[i], ps->n[i] / sizeof(nnp_rec_t),
                             pbuf, &used, &n_rec);
        memset(&h, 0, sizeof(h));
        h.magic = NNP_CHUNK_MAGIC;
        h.type = NNP_CHUNK_RECORDS;
        h.codec = NNP_CODEC_PACK;
        h.count = n_rec;
        h.payload_bytes = (uint32_t)n;
        h.raw_bytes = (uint32_t)ps->n[i];
        h.payload_crc = nnp__crc32c(0, pbuf, n);
        h.header_crc = nnp__crc32c(0, &h, offsetof(nnp_chunk_header_t, header_crc));
        if (used != ps->n[i] / sizeof(nnp_rec_t) ||
            write(fd, &h, sizeof(h)) != (ssize_t)sizeof(h) || write(fd, pbuf, n) != (ssize_t)n)
            rc = -1;
        *out_bytes += sizeof(h) + n;
    }
    *cpu_s = thread_cpu_now() - c0;
    *wall_s = now_sec() - t0;
out:
    if (fd >= 0) {
        close(fd);
        unlink(path);
    }
    free(pbuf);
    return rc;
}

/* One candidate encoding of every piece, on this thread, nothing written: CPU seconds and
 * output bytes. The zstd context is made before the clock starts, as the writer's is. */
static int codec_run(const pieces_t *ps, const struct codec_info *c, double *cpu_s,
                     uint64_t *out_bytes)
{
    size_t big = largest_piece(ps);
    size_t pcap = big / sizeof(nnp_rec_t) * NNP_PACK_SLOT_MAX;
    size_t zcap = ZSTD_compressBound(pcap > big ? pcap : big);
    unsigned char *pbuf = malloc(pcap), *zbuf = malloc(zcap);
    ZSTD_CCtx *z = ZSTD_createCCtx();
    double c0;
    int rc = 0;

    if (!pbuf || !zbuf || !z) {
        rc = -1;
        goto out;
    }
    *out_bytes = 0;
    c0 = thread_cpu_now();
    for (size_t i = 0; i < ps->count && rc == 0; i++) {
        const void *in = ps->p[i];
        size_t n = ps->n[i];
        if (c->packs) {
            size_t used;
            uint32_t n_rec;
            nnp__pack_reset(&g_pack);
            n = nnp__pack_encode(&g_pack, (const nnp_rec_t *)ps->p[i], ps->n[i] / sizeof(nnp_rec_t),
                                 pbuf, &used, &n_rec);
            in = pbuf;
        }
        if (c->level != 0) {
            size_t zn = ZSTD_compressCCtx(z, zbuf, zcap, in, n, c->level);
            if (ZSTD_isError(zn))
                rc = -1;
            else if (zn < n)
                n = zn; /* the writer keeps the smaller, as it does for zstd */
        }
        *out_bytes += n;
    }
    *cpu_s = thread_cpu_now() - c0;
out:
    ZSTD_freeCCtx(z);
    free(pbuf);
    free(zbuf);
    return rc;
}

static int one_rep(sample_t *out)
{
    char dir[] = "/tmp/nnp-bench-writer-XXXXXX";
    pthread_t th[N_THREADS];
    nnp_options_t o;
    nnp_session_t *s = NULL;
    double t0, c0, w0 = -1;
    long writer_tid;
    int rc;

    if (!mkdtemp(dir)) {
        fprintf(stderr, "bench_writer: mkdtemp: %s\n", strerror(errno));
        return -1;
    }
    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", dir);
    o.start_profile = false;
    o.full_policy = NNP_FULL_BLOCK;
    o.sample_interval_ms = 0;
    rc = nnp_session_create(&o, &s);
    if (rc != NNP_OK)
        goto fail;
    set_payload();
    writer_tid = nnp_bench_writer_tid();

    t0 = now_sec();
    c0 = cpu_sec();
    if (writer_tid != 0)
        w0 = nnp_bench_thread_cpu_sec(writer_tid);
    rc = nnp_session_start(s);
    if (rc != NNP_OK)
        goto fail;
    for (int i = 0; i < N_THREADS; i++) {
        if (pthread_create(&th[i], NULL, record_main, NULL) != 0) {
            fprintf(stderr, "bench_writer: cannot create thread %d\n", i);
            for (int j = 0; j < i; j++)
                pthread_join(th[j], NULL);
            rc = NNP_ENOMEM;
            goto fail;
        }
    }
    for (int i = 0; i < N_THREADS; i++)
        pthread_join(th[i], NULL);
    rc = nnp_session_stop(s);
    out->wall_s = now_sec() - t0;
    out->cpu_s = cpu_sec() - c0;
    out->writer_cpu_s = w0 >= 0 ? nnp_bench_thread_cpu_sec(writer_tid) - w0 : -1;
    if (rc != NNP_OK)
        goto fail;
    nnp_session_stats(s, &out->st);
    g_du_bytes = 0;
    nftw(nnp_session_raw_dir(s), du_entry, FOPEN_MAX, FTW_PHYS);
    out->files_bytes = g_du_bytes;
    {
        pieces_t ps = {0};
        if (load_pieces(nnp_session_raw_dir(s), &ps) != 0 ||
            baseline_run(dir, &ps, &out->base_cpu_s, &out->base_s, &out->base_bytes) != 0) {
            fprintf(stderr, "bench_writer: baseline in %s failed: %s\n", dir, strerror(errno));
            rc = NNP_EIO;
        }
        for (int c = 0; c < N_CODECS && rc == NNP_OK; c++) {
            if (codec_run(&ps, &g_codecs[c], &out->codec_cpu_s[c], &out->codec_bytes[c]) != 0) {
                fprintf(stderr, "bench_writer: encoding '%s' failed\n", g_codecs[c].label);
                rc = NNP_EIO;
            }
        }
        out->base_raw_bytes = ps.bytes;
        pieces_free(&ps);
    }
    nnp_session_destroy(s);
    nftw(dir, remove_entry, FOPEN_MAX, FTW_DEPTH | FTW_PHYS);
    return rc == NNP_OK ? 0 : -1;
fail:
    fprintf(stderr, "bench_writer: %s (%s)\n", nnp_strerror(rc), nnp_last_error());
    nnp_session_destroy(s);
    nftw(dir, remove_entry, FOPEN_MAX, FTW_DEPTH | FTW_PHYS);
    return -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v[0..n) and prints its minimum, median and maximum. */
static void print_spread(const char *what, double *v, int n, const char *unit)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    printf("  %-44s min %9.2f  median %9.2f  max %9.2f %s\n", what, v[0],
           n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[n - 1], unit);
}

/* The candidate encodings of the same slots: bytes per event, median and best speed. */
static void print_codecs(const sample_t *smp, int reps)
{
    printf("\nencodings of the same record slots, one thread, CPU time of the encoding alone "
           "(no write), over %d runs\n",
           reps);
    printf("  %-34s %11s %13s %13s %13s\n", "encoding", "bytes/event", "MB/CPU-s med",
           "Mev/CPU-s med", "Mev/CPU-s max");
    for (int c = 0; c < N_CODECS; c++) {
        static double ev[MAX_REPS];
        double mb_med, bytes, events = (double)smp[0].st.events_recorded;
        for (int i = 0; i < reps; i++)
            ev[i] = events / smp[i].codec_cpu_s[c] / PER_MILLION;
        qsort(ev, (size_t)reps, sizeof(ev[0]), cmp_double);
        mb_med = (reps % 2 ? ev[reps / 2] : (ev[reps / 2 - 1] + ev[reps / 2]) / 2) * PER_MILLION *
                 (double)smp[0].base_raw_bytes / events / BYTES_PER_MB;
        bytes = (double)smp[0].codec_bytes[c] / events;
        printf("  %-34s %11.2f %13.1f %13.2f %13.2f\n", g_codecs[c].label, bytes, mb_med,
               mb_med * BYTES_PER_MB / ((double)smp[0].base_raw_bytes / events) / PER_MILLION,
               ev[reps - 1]);
    }
}

int main(int argc, char **argv)
{
    static sample_t smp[MAX_REPS];
    static double wmb[MAX_REPS], wev[MAX_REPS], bmb[MAX_REPS], ratio[MAX_REPS], e2e[MAX_REPS];
    static double bwall[MAX_REPS], wall[MAX_REPS];
    uint64_t expected = (uint64_t)N_THREADS * EVENTS_PER_THREAD;
    int reps = DEFAULT_REPS, n_cpu = 0;

    if (argc > 1) {
        char *end;
        long v = strtol(argv[1], &end, DECIMAL);
        if (*end != '\0' || v < 1 || v > MAX_REPS) {
            fprintf(stderr, "usage: bench_writer [REPS]  (1..%d, default %d)\n", MAX_REPS,
                    DEFAULT_REPS);
            return 2;
        }
        reps = (int)v;
    }
    printf("bench_writer: writer throughput of libnnprof.so %s\n", nnp_version());
    printf("cpus online: %ld; %d threads x %u events (range begin, counter, 2-slot op, range "
           "end), block policy, default buffer and writer period; %d runs\n",
           sysconf(_SC_NPROCESSORS_ONLN), N_THREADS, EVENTS_PER_THREAD, reps);
    printf("baseline: the same record slots (read back from the chunks), packed in the same "
           "chunks + CRC-32C + write(), one thread, same process\n");
    nnp_bench_print_load("at start");
    fflush(stdout);
    printf("\n%4s %9s %9s %10s %11s %11s %11s %9s\n", "run", "wall s", "writer s", "MB/wrCPU-s",
           "Mev/wrCPU-s", "base CPU s", "base MB/s", "wr/base");
    for (int i = 0; i < reps; i++) {
        sample_t *r = &smp[i];
        double mb;
        if (one_rep(r) != 0)
            return 1;
        mb = (double)r->st.bytes_raw / BYTES_PER_MB;
        wall[i] = r->wall_s;
        e2e[i] = mb / r->wall_s;
        bmb[i] = (double)r->base_raw_bytes / BYTES_PER_MB / r->base_cpu_s;
        bwall[i] = r->base_s;
        if (r->writer_cpu_s > 0) {
            wmb[n_cpu] = mb / r->writer_cpu_s;
            wev[n_cpu] = (double)r->st.events_recorded / r->writer_cpu_s / PER_MILLION;
            ratio[n_cpu] = wmb[n_cpu] / bmb[i];
            n_cpu++;
        }
        printf("%4d %9.3f %9.2f %10.1f %11.2f %11.3f %11.1f %8.2fx\n", i + 1, r->wall_s,
               r->writer_cpu_s, r->writer_cpu_s > 0 ? mb / r->writer_cpu_s : 0.0,
               r->writer_cpu_s > 0 ? (double)r->st.events_recorded / r->writer_cpu_s / 1e6 : 0.0,
               r->base_cpu_s, bmb[i], r->writer_cpu_s > 0 ? ratio[n_cpu - 1] : 0.0);
        fflush(stdout);
    }
    nnp_bench_print_load("at end");
    {
        const sample_t *m = &smp[0];
        printf("\nevents recorded       %llu of %llu (dropped %llu)\n",
               (unsigned long long)m->st.events_recorded, (unsigned long long)expected,
               (unsigned long long)m->st.events_dropped);
        printf("raw bytes             %llu (%.1f bytes/event raw)\n",
               (unsigned long long)m->st.bytes_raw,
               (double)m->st.bytes_raw / (double)m->st.events_recorded);
        printf("chunk bytes written   %llu (%.2f bytes/event), compression %.2fx (baseline's "
               "chunks: %.2f bytes/event)\n",
               (unsigned long long)m->st.bytes_written,
               (double)m->st.bytes_written / (double)m->st.events_recorded,
               (double)m->st.bytes_raw / (double)m->st.bytes_written,
               (double)m->base_bytes / (double)m->st.events_recorded);
        printf("files on disk         %llu bytes (raw dir, meta and info.json included)\n",
               (unsigned long long)m->files_bytes);
    }
    printf("\nover %d runs:\n", reps);
    print_spread("record+write wall time (start .. stop)", wall, reps, "s");
    print_spread("record+write raw data per wall second", e2e, reps, "MB/s");
    print_spread("baseline (pack + write) wall time", bwall, reps, "s");
    print_spread("baseline raw data per CPU-second", bmb, reps, "MB/s");
    if (n_cpu > 0) {
        double med_ev;
        print_spread("writer: raw data per writer CPU-second", wmb, n_cpu, "MB/s");
        print_spread("writer / baseline, per CPU-second", ratio, n_cpu, "x");
        print_spread("writer: events drained per CPU-second", wev, n_cpu, "M/s");
        med_ev = wev[n_cpu / 2];
        printf("\ntarget: one writer core drains >= %.0f M events/s: median %.2f M/s %s\n",
               TARGET_EVENTS_PER_WRITER_CPU_S / PER_MILLION, med_ev,
               med_ev * PER_MILLION >= TARGET_EVENTS_PER_WRITER_CPU_S ? "PASS" : "MISS");
    } else {
        printf("writer thread CPU time unreadable (/proc): no per-CPU figures\n");
    }
    print_codecs(smp, reps);
    return 0;
}
