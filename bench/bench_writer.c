/* bench_writer.c - throughput of the writer thread: 8 threads record a known volume under
 * the block policy (nothing drops), and the time from nnp_session_start to the return of
 * nnp_session_stop (which flushes) gives raw MB/s, beside plain write() of the same number
 * of bytes to a file in the same directory, measured in the same run (STYLE 7.10). Also
 * bytes on disk per event and the compression ratio. Never fails on a figure. */
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
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <nnprof/nnprof.h>

#define N_THREADS         8
#define EVENTS_PER_THREAD 2000000u
/* Each loop iteration records EVENTS_PER_ITER events: range begin, counter, op (a 2-slot
 * record), range end - so 5 slots of 32 bytes per 4 events. */
#define EVENTS_PER_ITER 4u
/* Distinct names and streams cycled through, so the compressor sees realistic (not
 * constant) ids. */
#define N_NAMES   16u
#define N_STREAMS 4u
/* Timed repetitions (median shown); each is a fresh session in a fresh directory. */
#define REPS 3
/* The baseline writes in pieces of the writer's largest raw chunk (8192 slots x 32 B). */
#define BASELINE_CHUNK_BYTES (256u * 1024u)
/* A 1-minute load average above this many runnable tasks means other work competed. */
#define LOAD_WARN 0.5
/* /proc/<pid>/task/<tid>/stat: utime is field 14, stime 15 (proc(5)). */
#define STAT_UTIME_FIELD 14
#define DECIMAL          10
#define NS_PER_SEC       1e9
#define BYTES_PER_MB     1e6
#define PER_MILLION      1e6
/* Any odd step gives a byte pattern with no runs; the content does not matter to write(). */
#define PATTERN_STEP 131u

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

/* The writer is the only thread besides the main one while a session with sampling off
 * exists and no recording thread runs. Returns its thread id, or 0 if that is not so. */
static long find_writer_tid(void)
{
    long me = (long)syscall(SYS_gettid), found = 0;
    int others = 0;
    struct dirent *e;
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long tid = strtol(e->d_name, &end, DECIMAL);
        if (e->d_name[0] == '.' || *end != '\0' || tid == me)
            continue;
        found = tid;
        others++;
    }
    closedir(d);
    return others == 1 ? found : 0;
}

/* CPU seconds (user + system) of one thread of this process, from /proc (field 14 utime and
 * 15 stime, in clock ticks, after the parenthesised name); < 0 when unreadable. */
static double thread_cpu_sec(long tid)
{
    char path[64], buf[1024];
    unsigned long long ut, st;
    size_t n;
    char *p;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/self/task/%ld/stat", tid);
    f = fopen(path, "re");
    if (!f)
        return -1;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    p = strrchr(buf, ')');
    if (!p || p[1] == '\0')
        return -1;
    p += 2; /* field 3, the state */
    for (int field = 3; field < STAT_UTIME_FIELD; field++) {
        p = strchr(p, ' ');
        if (!p)
            return -1;
        p++;
    }
    ut = strtoull(p, &p, DECIMAL);
    st = strtoull(p, &p, DECIMAL);
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

typedef struct sample {
    double wall_s;        /* nnp_session_start .. nnp_session_stop returned */
    double cpu_s;         /* process CPU time over the same interval */
    double base_s;        /* plain write() of bytes_raw bytes */
    double writer_cpu_s;  /* the writer thread's CPU over the same interval, < 0 if unknown */
    uint64_t files_bytes; /* every file of the raw directory after stop */
    nnp_stats_t st;
} sample_t;

/* Writes `bytes` bytes with write() into dir/baseline.bin; returns seconds or < 0. */
static double baseline_write(const char *dir, uint64_t bytes)
{
    static unsigned char buf[BASELINE_CHUNK_BYTES];
    char path[NNP_PATH_MAX];
    double t0, t;
    int fd;

    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (unsigned char)(i * PATTERN_STEP);
    snprintf(path, sizeof(path), "%s/baseline.bin", dir);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    t0 = now_sec();
    while (bytes > 0) {
        size_t n = bytes < sizeof(buf) ? (size_t)bytes : sizeof(buf);
        ssize_t w = write(fd, buf, n);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        bytes -= (uint64_t)w;
    }
    t = now_sec() - t0;
    close(fd);
    unlink(path);
    return t;
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
    writer_tid = find_writer_tid();

    t0 = now_sec();
    c0 = cpu_sec();
    if (writer_tid != 0)
        w0 = thread_cpu_sec(writer_tid);
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
    out->writer_cpu_s = w0 >= 0 ? thread_cpu_sec(writer_tid) - w0 : -1;
    if (rc != NNP_OK)
        goto fail;
    nnp_session_stats(s, &out->st);
    g_du_bytes = 0;
    nftw(nnp_session_raw_dir(s), du_entry, FOPEN_MAX, FTW_PHYS);
    out->files_bytes = g_du_bytes;
    out->base_s = baseline_write(dir, out->st.bytes_raw);
    if (out->base_s < 0) {
        fprintf(stderr, "bench_writer: baseline write in %s: %s\n", dir, strerror(errno));
        rc = NNP_EIO;
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

static int cmp_wall(const void *a, const void *b)
{
    double x = ((const sample_t *)a)->wall_s, y = ((const sample_t *)b)->wall_s;
    return (x > y) - (x < y);
}

static int cmp_base(const void *a, const void *b)
{
    double x = ((const sample_t *)a)->base_s, y = ((const sample_t *)b)->base_s;
    return (x > y) - (x < y);
}

/* Other work on the machine inflates every figure: say how busy it was. */
static void print_load(void)
{
    double load[1];
    if (getloadavg(load, 1) == 1)
        printf("load average (1 min) at start: %.2f%s\n", load[0],
               load[0] > LOAD_WARN ? " - the machine is busy: figures are pessimistic" : "");
}

int main(void)
{
    sample_t smp[REPS];
    const sample_t *m;
    double base_s, raw_mbs, base_mbs;
    uint64_t expected = (uint64_t)N_THREADS * EVENTS_PER_THREAD;

    printf("bench_writer: writer throughput of libnnprof.so %s\n", nnp_version());
    printf("cpus online: %ld; %d threads x %u events (range begin, counter, 2-slot op, range "
           "end), block policy, default buffer and writer period; median of %d runs\n",
           sysconf(_SC_NPROCESSORS_ONLN), N_THREADS, EVENTS_PER_THREAD, REPS);
    print_load();
    fflush(stdout);
    for (int i = 0; i < REPS; i++) {
        if (one_rep(&smp[i]) != 0)
            return 1;
    }
    /* The run with the median wall time gives every nnprof figure; the baseline's median
     * is taken on its own. */
    qsort(smp, REPS, sizeof(smp[0]), cmp_base);
    base_s = smp[REPS / 2].base_s;
    qsort(smp, REPS, sizeof(smp[0]), cmp_wall);
    m = &smp[REPS / 2];
    raw_mbs = (double)m->st.bytes_raw / BYTES_PER_MB / m->wall_s;
    base_mbs = (double)m->st.bytes_raw / BYTES_PER_MB / base_s;

    printf("\nevents recorded       %llu of %llu (dropped %llu)\n",
           (unsigned long long)m->st.events_recorded, (unsigned long long)expected,
           (unsigned long long)m->st.events_dropped);
    printf("wall time             %.3f s (start .. stop returned; process CPU %.3f s)\n", m->wall_s,
           m->cpu_s);
    printf("raw bytes             %llu (%.1f bytes/event raw)\n",
           (unsigned long long)m->st.bytes_raw,
           (double)m->st.bytes_raw / (double)m->st.events_recorded);
    printf("chunk bytes written   %llu (%.2f bytes/event), compression %.2fx\n",
           (unsigned long long)m->st.bytes_written,
           (double)m->st.bytes_written / (double)m->st.events_recorded,
           (double)m->st.bytes_raw / (double)m->st.bytes_written);
    printf("files on disk         %llu bytes (raw dir, meta and info.json included)\n",
           (unsigned long long)m->files_bytes);
    printf("events/s              %.2f M\n",
           (double)m->st.events_recorded / m->wall_s / PER_MILLION);
    if (m->writer_cpu_s > 0)
        printf("writer thread CPU     %.2f s: %.1f MB of raw data per writer CPU-second\n",
               m->writer_cpu_s, (double)m->st.bytes_raw / BYTES_PER_MB / m->writer_cpu_s);
    printf("\n%-28s %10s\n", "throughput (raw data)", "MB/s");
    printf("%-28s %10.1f\n", "nnprof record+write", raw_mbs);
    printf("%-28s %10.1f\n", "plain write() baseline", base_mbs);
    printf("%-28s %10.2fx\n", "nnprof / baseline", raw_mbs / base_mbs);
    return 0;
}
