/* bench_analyse.c - analyser performance on a synthetic run (issue #3 benchmark).
 * Phase 1 (child process) records N events (default 10 M) with known timestamps through
 * the public API; phase 2 (another child, so its peak RSS is the analyser's alone) imports
 * the raw data into the model and runs each analysis, printing wall time, events/s per
 * core, model bytes per event, peak RSS per event, and timeline JSON MB/s beside a plain
 * copy (read/write, like cp) of the same bytes measured in the same run.
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

#define DEFAULT_EVENTS 10000000ull
/* One step = 1 step pair + OPS_PER_STEP ops + 1 allreduce + 2 host rows + 1 counter. */
#define OPS_PER_STEP 40
#define OP_TYPES     16
#define OP_NS        2000
#define COPY_BLOCK   (1u << 20)
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

static uint64_t events_per_step(void)
{
    return 2 + OPS_PER_STEP + 1 + 2 + 1;
}

static int generate(const char *out, uint64_t n_events)
{
    nnp_options_t o;
    nnp_session_t *s;
    nnp_str_t types[OP_TYPES], names[OPS_PER_STEP], loss;
    nnp_host_tag_t tag = {0};
    nnp_comm_t comm = {0};
    uint64_t steps = n_events / events_per_step(), t = 1000000;

    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", out);
    o.sample_interval_ms = 0;
    o.full_policy = NNP_FULL_BLOCK;
    o.buffer_size_kb = 65536;
    o.raw_file_bytes = 1ull << 30;
    if (nnp_session_create(&o, &s) != NNP_OK) {
        fprintf(stderr, "bench_analyse: %s\n", nnp_last_error());
        return 1;
    }
    for (int i = 0; i < OP_TYPES; i++) {
        char b[32];
        snprintf(b, sizeof(b), "OpType%d", i);
        types[i] = nnp_intern(b);
    }
    for (int i = 0; i < OPS_PER_STEP; i++) {
        char b[96];
        snprintf(b, sizeof(b), "%sDefault/network/layer%d/OpType%d-op%d",
                 i >= 30 ? "Gradients/" : "", i, i % OP_TYPES, i);
        names[i] = nnp_intern(b);
    }
    loss = nnp_intern("loss");
    tag.module = nnp_intern("Dataset");
    tag.event = nnp_intern("GetNext");
    tag.stage = nnp_intern("Run");
    tag.level = 1;
    comm.name = nnp_intern("allreduce-grad");
    comm.kind = NNP_COMM_ALLREDUCE;
    comm.group = nnp_intern("world");
    comm.size_bytes = 1 << 20;
    comm.peer = -1;
    for (uint64_t k = 0; k < steps; k++) {
        nnp_op_t op = {0};
        nnp_step_begin_at(k, 0, t);
        nnp_range_begin_at(&tag, t + 10);
        nnp_range_end_at(&tag, t + 500);
        t += 1000;
        for (int i = 0; i < OPS_PER_STEP; i++) {
            op.name = names[i];
            op.type = types[i % OP_TYPES];
            op.correlation_id = k * OPS_PER_STEP + (uint64_t)i + 1;
            op.flops_matrix = (i % 4 == 0) ? 1000000 : 0;
            nnp_op_at(&op, t, t + OP_NS);
            t += OP_NS + 100;
        }
        nnp_comm_at(&comm, t - 20000, t + 5000);
        t += 6000;
        nnp_counter_at(loss, 1.0 / (double)(k + 1), t);
        nnp_step_end_at(k, 0, t);
        t += 500;
    }
    return nnp_session_destroy(s) == NNP_OK ? 0 : 1;
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

static int analyse(const char *out)
{
    char prof[4096], raw[4200], rank_dir[4400], tv[4600], cmd[4300];
    nnp_model_t m;
    nnp_actx_t c;
    nnp_step_trace_t st;
    nnp_overlap_t ov;
    struct rusage ru;
    double t0, t_import, t_st, t_ov, t_ops, t_tl, t_host;
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

    memset(&st, 0, sizeof(st));
    memset(&ov, 0, sizeof(ov));
    nnp__model_init(&m);
    t0 = now_s();
    if (nnp__import_raw(raw, &m) != NNP_OK) {
        fprintf(stderr, "import failed: %s\n", nnp_last_error());
        return 1;
    }
    t_import = now_s() - t0;
    events = nnp__model_rows(&m) + m.steps.t.n; /* a step row came from 2 records */
    memset(&c, 0, sizeof(c));
    c.m = &m;
    c.out_dir = prof;
    c.rank_dir = rank_dir;
    c.is_developer = true;
    c.timeline_limit_bytes = m.info.timeline_limit_bytes;

    t0 = now_s();
    nnp__step_trace_run(&c, &st);
    nnp__step_trace_write(&c, &st);
    t_st = now_s() - t0;
    t0 = now_s();
    nnp__overlap_run(&c, &st, &ov);
    nnp__overlap_write(&c, &ov);
    t_ov = now_s() - t0;
    t0 = now_s();
    nnp__op_stats_write_all(&c, &st);
    t_ops = now_s() - t0;
    t0 = now_s();
    nnp__timeline_write(&c, &st, &ov);
    t_tl = now_s() - t0;
    t0 = now_s();
    nnp__host_info_write(&c);
    t_host = now_s() - t0;
    getrusage(RUSAGE_SELF, &ru);

    snprintf(tv, sizeof(tv), "%s/trace_view.json", rank_dir);
    {
        double tl_mb = file_mb(tv), tl_mbps = tl_mb / t_tl;
        char copy[4700];
        double cp_mbps;
        double ev_rate = (double)events / (t_import + t_ops);
        double model_bpe = (double)nnp__model_bytes(&m) / (double)events;
        double rss_bpe = (double)ru.ru_maxrss * 1024.0 / (double)events;
        snprintf(copy, sizeof(copy), "%s.copy", tv);
        cp_mbps = copy_mbps(tv, copy);
        printf("events in the model        %12llu (%zu steps, %zu ops)\n",
               (unsigned long long)events, m.steps.t.n, m.ops.t.n);
        printf("import (read+decode+model) %12.3f s\n", t_import);
        printf("step trace                 %12.3f s\n", t_st);
        printf("overlap                    %12.3f s\n", t_ov);
        printf("op statistics              %12.3f s\n", t_ops);
        printf("timeline                   %12.3f s  (%.1f MB written)\n", t_tl, tl_mb);
        printf("host info                  %12.3f s\n", t_host);
        printf("total analyse              %12.3f s\n",
               t_import + t_st + t_ov + t_ops + t_tl + t_host);
        printf("read+statistics rate       %12.2f M events/s/core  (target >= %.0f M)  %s\n",
               ev_rate / 1e6, TARGET_EVENTS_PER_SEC_CORE / 1e6,
               ev_rate >= TARGET_EVENTS_PER_SEC_CORE ? "PASS" : "MISS");
        printf("model bytes per event      %12.1f B  (target <= %.0f)  %s\n", model_bpe,
               TARGET_BYTES_PER_EVENT, model_bpe <= TARGET_BYTES_PER_EVENT ? "PASS" : "MISS");
        printf("peak RSS                   %12.1f MB = %.1f B/event  (target <= %.0f)  %s\n",
               (double)ru.ru_maxrss / 1024.0, rss_bpe, TARGET_BYTES_PER_EVENT,
               rss_bpe <= TARGET_BYTES_PER_EVENT ? "PASS" : "MISS");
        printf("timeline JSON writing      %12.1f MB/s  (target >= %.0f)  %s\n", tl_mbps,
               TARGET_JSON_MBPS, tl_mbps >= TARGET_JSON_MBPS ? "PASS" : "MISS");
        printf("cp of the same bytes       %12.1f MB/s  (timeline / cp = %.2f)\n", cp_mbps,
               cp_mbps > 0 ? tl_mbps / cp_mbps : 0.0);
    }
    nnp__overlap_fini(&ov);
    nnp__step_trace_fini(&st);
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
    if (run_child(generate, out, n) != 0)
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
