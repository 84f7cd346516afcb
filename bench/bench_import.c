/* bench_import.c - import speed of foreign profiling data (issue #7): MB/s of JSON and
 * events/s, with the peak RSS beside the file size to show that memory stays bounded (the
 * importers stream: they never hold the whole JSON document). Inputs: the largest corpus
 * inputs (CANN rank 0: 10 msprof JSON; torch_npu trace_view.json) and a synthetic msprof
 * timeline written by bench/gen_msprof_timeline.py (SIZE_MB, default 100). Baseline in the
 * same run: json_stream alone (split + cJSON parse, no model). Each measurement runs in a
 * child process so its peak RSS is its own. Usage: bench_import [SIZE_MB] [WORK_DIR].
 * Prints figures; never fails on targets. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "model/model.h"
#include "nnprof/nnprof.h"
#include "read/importers.h"
#include "read/json_stream.h"

#define DEFAULT_SIZE_MB 100
#define BYTES_PER_MB    1e6
#define KB_PER_MB       1024.0
#define PATH_CAP        4096
/* The work directory is shorter, so the paths built under it always fit. */
#define WORK_CAP 1024
#define CMD_CAP  (3 * PATH_CAP)
#define CORPUS   NNP_SOURCE_DIR "/../shared/corpus"
#define CANN_RANK0                                                                                 \
    CORPUS "/mindinsight/profiler/PROF_000001_20230818142704322_COJGGGCANRMICFBC/device_0"
#define TORCH_DIR CORPUS "/msprof-analyze/test/ut/advisor/timeline_advice"
#define GEN_DIR   "PROF_000001_bench/device_0"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Total bytes of the files in dir whose names start with prefix and end in .json. */
static double json_bytes(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    double total = 0;
    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL) {
        char p[PATH_CAP];
        struct stat st;
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 || n < 5 ||
            strcmp(e->d_name + n - 5, ".json") != 0)
            continue;
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        if (stat(p, &st) == 0)
            total += (double)st.st_size;
    }
    closedir(d);
    return total;
}

static int count_cb(void *user, const cJSON *elem, uint64_t index)
{
    (void)elem;
    (void)index;
    (*(uint64_t *)user)++;
    return 0;
}

static void report(const char *what, double bytes, uint64_t events, double s)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("  %-44s %8.1f MB  %9.1f MB/s  %10.0f events/s  %9llu events  peak RSS %7.1f MB\n", what,
           bytes / BYTES_PER_MB, bytes / BYTES_PER_MB / s, (double)events / s,
           (unsigned long long)events, (double)ru.ru_maxrss / KB_PER_MB);
    fflush(stdout);
}

/* Child: streams file (or every msprof_*.json of dir) without building a model. */
static int run_baseline(const char *dir, const char *prefix, const char *what)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    uint64_t n = 0;
    double t0 = now_s();
    if (!d)
        return 1;
    while ((e = readdir(d)) != NULL) {
        char p[PATH_CAP];
        nnp_json_stream_report_t rep;
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        if (nnp__json_stream_array(p, count_cb, &n, &rep) != NNP_OK)
            fprintf(stderr, "bench_import: cannot stream %s\n", p);
    }
    closedir(d);
    report(what, json_bytes(dir, prefix), n, now_s() - t0);
    return 0;
}

/* Child: imports input through imp; events = model rows imported. */
static int run_import(const nnp_importer_t *imp, const char *input, double bytes, const char *what)
{
    nnp_model_t m;
    double t0 = now_s();
    uint64_t events;
    if (nnp__model_init(&m) != NNP_OK || imp->import(input, &m) != NNP_OK) {
        fprintf(stderr, "bench_import: %s: %s\n", input, nnp_last_error());
        return 1;
    }
    events = m.kernels.t.n + m.comms.t.n + m.steps.t.n + m.ops.t.n;
    report(what, bytes, events, now_s() - t0);
    nnp__model_fini(&m);
    return 0;
}

/* Runs one measurement in a child (its own peak RSS). */
static void measure(int kind, const nnp_importer_t *imp, const char *dir, const char *prefix,
                    const char *what)
{
    pid_t pid;
    fflush(stdout); /* else the child prints the parent's buffer again */
    pid = fork();
    int status;
    if (pid == 0) {
        char input[PATH_CAP];
        int rc;
        if (kind == 0) {
            rc = run_baseline(dir, prefix, what);
        } else {
            char tdir[PATH_CAP];
            snprintf(tdir, sizeof(tdir), "%s/timeline", dir);
            snprintf(input, sizeof(input), "%s", dir);
            rc = run_import(imp, input, json_bytes(imp == &nnp__importer_cann ? tdir : dir, prefix),
                            what);
        }
        _exit(rc);
    }
    if (pid > 0)
        waitpid(pid, &status, 0);
}

int main(int argc, char **argv)
{
    double size_mb = argc > 1 ? strtod(argv[1], NULL) : DEFAULT_SIZE_MB;
    char work[WORK_CAP], cmd[CMD_CAP], dev[PATH_CAP], tl[PATH_CAP];
    struct stat st;
    char cann_tl[PATH_CAP];

    if (size_mb <= 0)
        size_mb = DEFAULT_SIZE_MB;
    if (argc > 2) {
        snprintf(work, sizeof(work), "%s", argv[2]);
    } else {
        snprintf(work, sizeof(work), "/tmp/nnprof_bench_import_XXXXXX");
        if (!mkdtemp(work)) {
            perror("bench_import: mkdtemp");
            return 1;
        }
    }
    printf("bench_import: import speed and peak RSS (each line its own process)\n");
    if (stat(CANN_RANK0, &st) == 0) {
        printf("corpus (largest inputs):\n");
        snprintf(cann_tl, sizeof(cann_tl), "%s/timeline", CANN_RANK0);
        measure(0, NULL, cann_tl, "msprof_", "baseline: json_stream, CANN rank 0");
        measure(1, &nnp__importer_cann, CANN_RANK0, "msprof_", "cann import, rank 0 (10 files)");
        measure(0, NULL, TORCH_DIR, "trace_view", "baseline: json_stream, trace_view.json");
        measure(1, &nnp__importer_torch_npu, TORCH_DIR, "trace_view",
                "torch_npu import, trace_view.json");
    } else {
        printf("corpus not found at %s: skipped\n", CORPUS);
    }
    snprintf(cmd, sizeof(cmd), "python3 '%s' '%s' %g", NNP_GEN_SCRIPT, work, size_mb);
    printf("synthetic msprof timeline (%g MB): %s\n", size_mb, cmd);
    fflush(stdout);
    if (system(cmd) != 0) {
        fprintf(stderr, "bench_import: the generator failed\n");
        return 1;
    }
    snprintf(dev, sizeof(dev), "%s/%s", work, GEN_DIR);
    snprintf(tl, sizeof(tl), "%s/%s/timeline", work, GEN_DIR);
    measure(0, NULL, tl, "msprof_", "baseline: json_stream, synthetic");
    measure(1, &nnp__importer_cann, dev, "msprof_", "cann import, synthetic");
    if (argc <= 2) {
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", work);
        if (system(cmd) != 0)
            fprintf(stderr, "bench_import: could not remove %s\n", work);
    }
    return 0;
}
