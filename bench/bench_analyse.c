/* bench_analyse.c - analyser performance on a synthetic run (issues #3 and #4).
 * Phase 1 (child process) records N events (default 10 M: ops, steps, communication, host
 * ranges, tensor memory, pipeline queues) with known timestamps through the public API.
 * Phase 2 (another child, so its peak RSS is the analyser's alone) imports the raw data
 * into the model and runs step trace and overlap, then every other analysis in a forked
 * child of its own, printing per analysis its wall time and the peak RSS it added above
 * the model's. Also: events/s per core, model bytes per event, and timeline JSON MB/s
 * beside a plain copy (read/write, like cp) of the same bytes measured in the same run.
 * Usage: bench_analyse [EVENTS] [WORK_DIR]. Prints figures; never fails on targets. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analyse/analyse.h"
#include "model/model.h"
#include "read/raw_import.h"
#include "synth_run.h"

#define DEFAULT_EVENTS 10000000ull
#define COPY_BLOCK     (1u << 20)
/* Targets from issue #3. */
#define TARGET_EVENTS_PER_SEC_CORE 10e6
#define TARGET_JSON_MBPS           500.0
#define TARGET_BYTES_PER_EVENT     64.0

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double file_mb(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (double)st.st_size / 1e6 : 0.0;
}

/* Copies src to dst with read/write blocks (what cp does) and returns MB/s. */
static double copy_mbps(const char *src, const char *dst)
{
    char *buf = malloc(COPY_BLOCK);
    int in = open(src, O_RDONLY), out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    double t0 = now_s(), mb = 0;
    ssize_t r;
    if (!buf || in < 0 || out < 0)
        return 0;
    while ((r = read(in, buf, COPY_BLOCK)) > 0) {
        if (write(out, buf, (size_t)r) != r)
            break;
        mb += (double)r / 1e6;
    }
    fsync(out);
    close(in);
    close(out);
    free(buf);
    unlink(dst);
    return mb / (now_s() - t0);
}

/* Resident set size now, from /proc/self/statm (ru_maxrss only ever grows). */
static double rss_mb(void)
{
    long pages_total = 0, pages_rss = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return 0;
    if (fscanf(f, "%ld %ld", &pages_total, &pages_rss) != 2)
        pages_rss = 0;
    fclose(f);
    return (double)pages_rss * (double)sysconf(_SC_PAGESIZE) / 1e6;
}

typedef struct bench_ctx {
    nnp_actx_t c;
    nnp_step_trace_t st;
    nnp_overlap_t ov;
    nnp_findings_t f;
} bench_ctx_t;

typedef int (*stage_fn)(bench_ctx_t *b);

static int st_ops(bench_ctx_t *b)
{
    return nnp__op_stats_write_all(&b->c, &b->st);
}
static int st_timeline(bench_ctx_t *b)
{
    return nnp__timeline_write(&b->c, &b->st, &b->ov);
}
static int st_host(bench_ctx_t *b)
{
    return nnp__host_info_write(&b->c);
}
static int st_memory(bench_ctx_t *b)
{
    return nnp__memory_write(&b->c, &b->st, &b->f);
}
static int st_pipeline(bench_ctx_t *b)
{
    return nnp__pipeline_write(&b->c, &b->f);
}
static int st_cpu(bench_ctx_t *b)
{
    return nnp__cpu_write(&b->c, &b->f);
}
static int st_flops(bench_ctx_t *b)
{
    return nnp__flops_write(&b->c, &b->st, &b->f);
}
static int st_shape(bench_ctx_t *b)
{
    return nnp__dynamic_shape_write(&b->c, &b->st, &b->f);
}
static int st_advisor(bench_ctx_t *b)
{
    return nnp__advisor_write(&b->c, &b->f);
}

static const struct {
    const char *name;
    stage_fn fn;
} stages[] = {
    {"op statistics", st_ops}, {"timeline", st_timeline},      {"host info", st_host},
    {"memory", st_memory},     {"data pipeline", st_pipeline}, {"CPU utilisation", st_cpu},
    {"FLOPs", st_flops},       {"dynamic shape", st_shape},    {"advisor", st_advisor},
};

/* Runs one analysis in a forked child (its memory is its own) and returns its seconds
 * and the peak RSS it added above the parent's at fork time. */
static int run_stage(bench_ctx_t *b, size_t k, double *secs, double *extra_mb)
{
    int fds[2], status;
    double res[2] = {0, 0}, base = rss_mb();
    pid_t p;
    if (pipe(fds) != 0)
        return -1;
    fflush(stdout);
    p = fork();
    if (p == 0) {
        struct rusage ru;
        double t0 = now_s();
        int rc = stages[k].fn(b);
        res[0] = now_s() - t0;
        getrusage(RUSAGE_SELF, &ru);
        res[1] = (double)ru.ru_maxrss / 1024.0 * 1.048576 - base;
        if (write(fds[1], res, sizeof(res)) != (ssize_t)sizeof(res))
            rc = 1;
        _exit(rc == NNP_OK ? 0 : 1);
    }
    close(fds[1]);
    if (read(fds[0], res, sizeof(res)) != (ssize_t)sizeof(res))
        res[0] = res[1] = -1;
    close(fds[0]);
    waitpid(p, &status, 0);
    *secs = res[0];
    *extra_mb = res[1] > 0 ? res[1] : 0;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int analyse(const char *out)
{
    char prof[4096], raw[4200], rank_dir[4400], tv[4600], cmd[4300];
    nnp_model_t m;
    bench_ctx_t b;
    struct rusage ru;
    double t0, t_import, t_st, t_ov, t_ops = 0, t_tl = 0, model_mb;
    uint64_t events;
    FILE *p;

    snprintf(prof, sizeof(prof), "%s/profiler", out);
    snprintf(cmd, sizeof(cmd), "ls -d %s/PROF_* | head -1", prof);
    p = popen(cmd, "r");
    if (!p || !fgets(raw, sizeof(raw), p))
        return 1;
    pclose(p);
    raw[strcspn(raw, "\n")] = '\0';
    snprintf(rank_dir, sizeof(rank_dir), "%s/%s", raw, NNP_RANK_OUTPUT_DIR);
    mkdir(rank_dir, 0700);

    memset(&b, 0, sizeof(b));
    nnp__model_init(&m);
    t0 = now_s();
    if (nnp__import_raw(raw, &m) != NNP_OK) {
        fprintf(stderr, "import failed: %s\n", nnp_last_error());
        return 1;
    }
    t_import = now_s() - t0;
    model_mb = rss_mb();
    events = nnp__model_rows(&m) + m.steps.t.n; /* a step row came from 2 records */
    b.c.m = &m;
    b.c.out_dir = prof;
    b.c.rank_dir = rank_dir;
    b.c.is_developer = true;
    b.c.timeline_limit_bytes = m.info.timeline_limit_bytes;
    b.c.peak_flops = 1e12;
    b.c.memory_capacity_bytes = 16ull << 30;
    nnp__findings_init(&b.f);

    t0 = now_s();
    nnp__step_trace_run(&b.c, &b.st);
    nnp__step_trace_write(&b.c, &b.st);
    t_st = now_s() - t0;
    t0 = now_s();
    nnp__overlap_run(&b.c, &b.st, &b.ov);
    nnp__overlap_write(&b.c, &b.ov);
    t_ov = now_s() - t0;
    nnp__findings_from_core(&b.f, &b.c, &b.st, &b.ov);

    printf("events in the model        %12llu (%zu steps, %zu ops, %zu memory events)\n",
           (unsigned long long)events, m.steps.t.n, m.ops.t.n, m.mem.t.n);
    printf("%-26s %12s %14s\n", "analysis", "seconds", "extra peak MB");
    printf("%-26s %12.3f %14.1f  (RSS with the model: %.1f MB)\n", "import (read+model)", t_import,
           model_mb, model_mb);
    printf("%-26s %12.3f\n", "step trace", t_st);
    printf("%-26s %12.3f\n", "overlap", t_ov);
    for (size_t k = 0; k < sizeof(stages) / sizeof(stages[0]); k++) {
        double secs = 0, extra = 0;
        int rc = run_stage(&b, k, &secs, &extra);
        printf("%-26s %12.3f %14.1f%s\n", stages[k].name, secs, extra, rc ? "  (failed)" : "");
        if (k == 0)
            t_ops = secs;
        if (k == 1)
            t_tl = secs;
    }
    getrusage(RUSAGE_SELF, &ru);

    snprintf(tv, sizeof(tv), "%s/trace_view.json", rank_dir);
    {
        double tl_mb = file_mb(tv), tl_mbps = t_tl > 0 ? tl_mb / t_tl : 0;
        char copy[4700];
        double cp_mbps;
        double rd_rate = (double)events / t_import;
        double ev_rate = (double)events / (t_import + t_ops);
        double model_bpe = (double)nnp__model_bytes(&m) / (double)events;
        double rss_bpe = (double)ru.ru_maxrss * 1024.0 / (double)events;
        snprintf(copy, sizeof(copy), "%s.copy", tv);
        cp_mbps = copy_mbps(tv, copy);
        printf("read (import) rate         %12.2f M events/s/core  (target >= %.0f M)  %s\n",
               rd_rate / 1e6, TARGET_EVENTS_PER_SEC_CORE / 1e6,
               rd_rate >= TARGET_EVENTS_PER_SEC_CORE ? "PASS" : "MISS");
        printf("read+statistics rate       %12.2f M events/s/core  (op statistics include "
               "writing kernel_details)  %s\n",
               ev_rate / 1e6, ev_rate >= TARGET_EVENTS_PER_SEC_CORE ? "PASS" : "MISS");
        printf("model bytes per event      %12.1f B  (target <= %.0f)  %s\n", model_bpe,
               TARGET_BYTES_PER_EVENT, model_bpe <= TARGET_BYTES_PER_EVENT ? "PASS" : "MISS");
        printf("peak RSS (import+core)     %12.1f MB = %.1f B/event  (target <= %.0f)  %s\n",
               (double)ru.ru_maxrss / 1024.0, rss_bpe, TARGET_BYTES_PER_EVENT,
               rss_bpe <= TARGET_BYTES_PER_EVENT ? "PASS" : "MISS");
        printf("timeline JSON writing      %12.1f MB/s (%.1f MB)  (target >= %.0f)  %s\n", tl_mbps,
               tl_mb, TARGET_JSON_MBPS, tl_mbps >= TARGET_JSON_MBPS ? "PASS" : "MISS");
        printf("cp of the same bytes       %12.1f MB/s  (timeline / cp = %.2f)\n", cp_mbps,
               cp_mbps > 0 ? tl_mbps / cp_mbps : 0.0);
    }
    nnp__overlap_fini(&b.ov);
    nnp__step_trace_fini(&b.st);
    nnp__model_fini(&m);
    return 0;
}

static int run_child(int (*fn)(const char *, uint64_t), const char *out, uint64_t n)
{
    int status;
    pid_t p;
    fflush(stdout); /* or the child inherits and prints the parent's buffered text */
    p = fork();
    if (p == 0) {
        int rc = fn(out, n);
        fflush(stdout);
        _exit(rc);
    }
    waitpid(p, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int analyse_fn(const char *out, uint64_t n)
{
    (void)n;
    return analyse(out);
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : DEFAULT_EVENTS;
    char tmpl[] = "/tmp/nnprof-bench-analyse-XXXXXX";
    const char *out = argc > 2 ? argv[2] : mkdtemp(tmpl);
    double t0 = now_s();
    char cmd[4200];

    nnp_log_set_level(NNP_LOG_ERROR);
    if (!out || n == 0) {
        fprintf(stderr, "usage: bench_analyse [EVENTS] [WORK_DIR]\n");
        return 2;
    }
    printf("bench_analyse: %llu synthetic events in %s\n", (unsigned long long)n, out);
    if (run_child(nnp_bench_synth_run, out, n) != 0)
        return 1;
    printf("generate (record + write)  %12.3f s\n", now_s() - t0);
    if (run_child(analyse_fn, out, n) != 0)
        return 1;
    if (argc <= 2) {
        snprintf(cmd, sizeof(cmd), "rm -rf %s", out);
        if (system(cmd) != 0)
            return 1;
    }
    return 0;
}
