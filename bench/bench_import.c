/* bench_import.c - import speed of foreign profiling data (issues 7 and 17): MB/s of JSON
 * and events/s, with the peak RSS beside the file size to show that memory stays bounded
 * (the importers stream: they never hold the whole JSON document). Inputs: the largest
 * corpus inputs (CANN rank 0: 10 msprof JSON; torch_npu trace_view.json) and a synthetic
 * msprof timeline written by bench/gen_msprof_timeline.py (SIZE_MB, default 100). On the
 * same files in the same run: our JSON streamer alone (split + parse, no model), the
 * importer, `nnprof info` as a user runs it, and two peers: Python's json.load (timed
 * inside the interpreter, start-up excluded) and jq (`jq empty`, the whole process). Each
 * measurement runs in its own process (its peak RSS is its own), REPS times, interleaved;
 * min and median are printed, wall and CPU time ("per core" figures use CPU time, which
 * other work on a shared machine inflates less), and ratios against each peer.
 * Usage: bench_import [SIZE_MB] [WORK_DIR] [REPS]. Prints figures; never fails on targets. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_load.h"
#include "model/model.h"
#include "nnprof/nnprof.h"
#include "read/importers.h"
#include "read/json_stream.h"
#ifdef NNP_BENCH_HAVE_SIMDJSON
#include "json_simdjson.h"
#endif

#define DEFAULT_SIZE_MB 100
#define DEFAULT_REPS    3
#define MAX_REPS        20
#define BYTES_PER_MB    1e6
#define KB              1024.0
#define PATH_CAP        4096
#define MAX_FILES       64
#define OUT_CAP         4096
/* The work directory is shorter, so the paths built under it always fit. */
#define WORK_CAP 1024
#define CMD_CAP  (3 * PATH_CAP)
#define CORPUS   NNP_SOURCE_DIR "/../shared/corpus"
#define CANN_RANK0                                                                                 \
    CORPUS "/mindinsight/profiler/PROF_000001_20230818142704322_COJGGGCANRMICFBC/device_0"
#define TORCH_DIR CORPUS "/msprof-analyze/test/ut/advisor/timeline_advice"
#define GEN_DIR   "PROF_000001_bench/device_0"
/* Goal of issue 17: a 500 MB msprof JSON imported at >= 200 MB/s per core. */
#define TARGET_IMPORT_MBPS 200.0

/* json.load of every file named on the command line; prints the wall and CPU seconds it
 * took (interpreter start-up excluded). */
static const char PY_LOAD[] = "import json, sys, time\n"
                              "t = time.perf_counter()\n"
                              "c = time.process_time()\n"
                              "for p in sys.argv[1:]:\n"
                              "    with open(p, 'rb') as f:\n"
                              "        json.load(f)\n"
                              "print(time.perf_counter() - t, time.process_time() - c)\n";

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One input: a directory (for the importer) and the JSON files under it it reads. */
typedef struct input {
    const char *label;
    const nnp_importer_t *imp;
    char dir[PATH_CAP];     /* what the importer is given */
    char cli_dir[PATH_CAP]; /* what `nnprof info` is given (the PROF_* above a device_N) */
    char *files[MAX_FILES];
    int n_files;
    double bytes;
} input_t;

/* Adds the files of dir whose names start with prefix and end in .json. */
static void add_files(input_t *in, const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    if (!d)
        return;
    while ((e = readdir(d)) != NULL && in->n_files < MAX_FILES) {
        char p[PATH_CAP];
        struct stat st;
        size_t n = strlen(e->d_name);
        int k;
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 || n < 5 ||
            strcmp(e->d_name + n - 5, ".json") != 0)
            continue;
        k = snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        if (k < 0 || (size_t)k >= sizeof(p) || stat(p, &st) != 0)
            continue;
        in->files[in->n_files++] = strdup(p);
        in->bytes += (double)st.st_size;
    }
    closedir(d);
}

static int count_cb(void *user, const cJSON *elem, uint64_t index)
{
    (void)elem;
    (void)index;
    (*(uint64_t *)user)++;
    return 0;
}

/* What one measurement tells the parent. */
typedef struct result {
    double s;        /* seconds of the measured work (wall) */
    double cpu_s;    /* its CPU seconds (user + system) */
    double rss_mb;   /* peak RSS of the process */
    uint64_t events; /* events streamed or imported (0 for the peers) */
    int ok;
} result_t;

typedef enum method {
    M_STREAM,    /* our JSON streamer alone */
    M_FIELDS,    /* ... reading every event's fields (the front-end comparison) */
    M_SIMD_ELEM, /* simdjson on-demand, one cut event at a time (streaming) */
    M_SIMD_DOC,  /* simdjson on-demand, the whole document in memory */
    M_IMPORT,    /* the importer into a model */
    M_CLI,       /* nnprof info DIR */
    M_PYTHON,    /* json.load */
    M_JQ,        /* jq empty */
    M_COUNT
} method_t;

static const char *const method_names[M_COUNT] = {"json_stream alone (split + parse)",
                                                  "json_stream + every field read",
                                                  "simdjson per event + every field",
                                                  "simdjson whole doc + every field",
                                                  "nnprof import (in-process)",
                                                  "nnprof info (CLI)",
                                                  "python3 json.load",
                                                  "jq empty"};

/* ---- the front-end comparison: the same fields read by each parser ---- */

static void fold(uint64_t *sum, const char *s)
{
    for (; *s; s++)
        *sum = *sum * 31 + (unsigned char)*s;
}

/* Every member of an object, as json_simdjson.cpp's scan_object reads them. */
static void fields(const cJSON *o, uint64_t *sum)
{
    const cJSON *v;
    cJSON_ArrayForEach(v, o)
    {
        fold(sum, v->string ? v->string : "");
        if (cJSON_IsString(v))
            fold(sum, v->valuestring);
        else if (cJSON_IsNumber(v))
            *sum += (uint64_t)v->valuedouble;
        else if (cJSON_IsObject(v))
            fields(v, sum);
        else
            fold(sum, cJSON_IsArray(v) ? "array" : "literal");
    }
}

static int fields_cb(void *user, const cJSON *elem, uint64_t index)
{
    (void)index;
    fields(elem, user);
    return 0;
}

static double cpu_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void child_stream(const input_t *in, result_t *r)
{
    double t0 = now_s(), c0 = cpu_now_s();
    for (int i = 0; i < in->n_files; i++) {
        nnp_json_stream_report_t rep;
        if (nnp__json_stream_array(in->files[i], count_cb, &r->events, &rep) != NNP_OK)
            return;
    }
    r->s = now_s() - t0;
    r->cpu_s = cpu_now_s() - c0;
    r->ok = 1;
}

static void child_fields(const input_t *in, result_t *r)
{
    double t0 = now_s(), c0 = cpu_now_s();
    uint64_t sum = 0;
    for (int i = 0; i < in->n_files; i++) {
        nnp_json_stream_report_t rep;
        if (nnp__json_stream_array(in->files[i], fields_cb, &sum, &rep) != NNP_OK)
            return;
        r->events += rep.elements;
    }
    r->s = now_s() - t0;
    r->cpu_s = cpu_now_s() - c0;
    r->ok = sum != 1; /* uses sum */
}

#ifdef NNP_BENCH_HAVE_SIMDJSON
static void child_simd_doc(const input_t *in, result_t *r)
{
    double t0 = now_s(), c0 = cpu_now_s();
    uint64_t sum = 0;
    for (int i = 0; i < in->n_files; i++) {
        uint64_t n, s1;
        if (json_bench_simdjson_doc(in->files[i], &n, &s1) != 0)
            return;
        r->events += n;
        sum += s1;
    }
    r->s = now_s() - t0;
    r->cpu_s = cpu_now_s() - c0;
    r->ok = sum != 1;
}

/* Cuts the events of a top-level array (string/escape state and bracket depth, the text
 * read in blocks) and hands each to simdjson: what a streaming importer built on simdjson
 * would do. */
static void child_simd_elem(const input_t *in, result_t *r)
{
    double t0 = now_s(), c0 = cpu_now_s();
    json_bench_parser_t *p = json_bench_parser_new();
    static char blk[1 << 20];
    char *ev = malloc(NNP_JSON_STREAM_MAX_ELEM);
    uint64_t sum = 0;
    if (!p || !ev)
        return;
    for (int i = 0; i < in->n_files; i++) {
        FILE *f = fopen(in->files[i], "rb");
        size_t n, len = 0;
        int depth = 0;
        bool in_str = false, esc = false;
        if (!f)
            return;
        bool collecting = false;
        while ((n = fread(blk, 1, sizeof(blk), f)) > 0) {
            for (size_t k = 0; k < n; k++) {
                char c = blk[k];
                if (!collecting && depth == 1 && c == '{') {
                    collecting = true;
                    len = 0;
                }
                if (collecting && len < NNP_JSON_STREAM_MAX_ELEM)
                    ev[len++] = c;
                if (in_str) {
                    if (esc)
                        esc = false;
                    else if (c == '\\')
                        esc = true;
                    else if (c == '"')
                        in_str = false;
                    continue;
                }
                if (c == '"') {
                    in_str = true;
                } else if (c == '{' || c == '[') {
                    depth++;
                } else if ((c == '}' || c == ']') && --depth == 1 && collecting) {
                    if (json_bench_element(p, ev, len, &sum) == 0)
                        r->events++;
                    collecting = false;
                }
            }
        }
        fclose(f);
    }
    free(ev);
    json_bench_parser_free(p);
    r->s = now_s() - t0;
    r->cpu_s = cpu_now_s() - c0;
    r->ok = sum != 1;
}
#endif

static void child_import(const input_t *in, result_t *r)
{
    nnp_model_t m;
    double t0 = now_s(), c0 = cpu_now_s();
    if (nnp__model_init(&m) != NNP_OK || in->imp->import(in->dir, &m) != NNP_OK) {
        fprintf(stderr, "bench_import: %s: %s\n", in->dir, nnp_last_error());
        return;
    }
    r->s = now_s() - t0;
    r->cpu_s = cpu_now_s() - c0;
    r->events = m.kernels.t.n + m.comms.t.n + m.steps.t.n + m.ops.t.n;
    r->ok = 1;
    nnp__model_fini(&m);
}

/* Runs argv with stdout into out (when given) and stderr to /dev/null; wall seconds and
 * the child's peak RSS into r. */
static void run_prog(char *const argv[], char *out, size_t cap, result_t *r)
{
    int fds[2];
    struct rusage ru;
    size_t len = 0;
    int status;
    double t0;
    pid_t pid;
    if (pipe(fds) != 0)
        return;
    t0 = now_s();
    pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(fds[1], STDOUT_FILENO);
        if (null >= 0)
            dup2(null, STDERR_FILENO);
        close(fds[0]);
        close(fds[1]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    for (;;) {
        char sink[OUT_CAP];
        char *dst = out && len + 1 < cap ? out + len : sink;
        size_t room = out && len + 1 < cap ? cap - 1 - len : sizeof(sink);
        ssize_t n = read(fds[0], dst, room);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (dst != sink)
            len += (size_t)n;
    }
    close(fds[0]);
    if (out)
        out[len] = '\0';
    if (pid < 0 || wait4(pid, &status, 0, &ru) != pid)
        return;
    r->s = now_s() - t0;
    r->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
               (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    r->rss_mb = (double)ru.ru_maxrss * KB / BYTES_PER_MB;
    r->ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void measure_peer(method_t m, const input_t *in, result_t *r)
{
    char *argv[MAX_FILES + 4];
    char out[OUT_CAP];
    int n = 0;
    memset(r, 0, sizeof(*r));
    if (m == M_CLI) {
        argv[n++] = NNP_CLI_PATH;
        argv[n++] = "info";
        argv[n++] = (char *)in->cli_dir;
    } else if (m == M_PYTHON) {
        argv[n++] = "python3";
        argv[n++] = "-c";
        argv[n++] = (char *)PY_LOAD;
    } else {
        argv[n++] = "jq";
        argv[n++] = "empty";
    }
    if (m != M_CLI)
        for (int i = 0; i < in->n_files; i++)
            argv[n++] = in->files[i];
    argv[n] = NULL;
    run_prog(argv, out, sizeof(out), r);
    if (m == M_PYTHON && r->ok && sscanf(out, "%lf %lf", &r->s, &r->cpu_s) != 2)
        r->ok = 0;
}

/* One measurement in its own process (in-process methods) or as a program (peers). */
static void measure(method_t m, const input_t *in, result_t *r)
{
    int fds[2], status;
    struct rusage ru;
    pid_t pid;

    memset(r, 0, sizeof(*r));
    if (m == M_CLI || m == M_PYTHON || m == M_JQ) {
        measure_peer(m, in, r);
        return;
    }
    if (pipe(fds) != 0)
        return;
    fflush(stdout); /* else the child prints the parent's buffer again */
    pid = fork();
    if (pid == 0) {
        result_t c = {0};
        close(fds[0]);
        if (m == M_STREAM)
            child_stream(in, &c);
        else if (m == M_FIELDS)
            child_fields(in, &c);
#ifdef NNP_BENCH_HAVE_SIMDJSON
        else if (m == M_SIMD_DOC)
            child_simd_doc(in, &c);
        else if (m == M_SIMD_ELEM)
            child_simd_elem(in, &c);
#endif
        else
            child_import(in, &c);
        _exit(write(fds[1], &c, sizeof(c)) == (ssize_t)sizeof(c) ? 0 : 1);
    }
    close(fds[1]);
    if (pid < 0 || read(fds[0], r, sizeof(*r)) != (ssize_t)sizeof(*r))
        r->ok = 0;
    close(fds[0]);
    if (pid > 0 && wait4(pid, &status, 0, &ru) == pid)
        r->rss_mb = (double)ru.ru_maxrss * KB / BYTES_PER_MB;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static bool have_prog(const char *name)
{
    char cmd[PATH_CAP];
    snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", name);
    return system(cmd) == 0;
}

/* Every method on one input, reps times interleaved; prints a table. Returns the median
 * import MB/s. */
static double bench_input(const input_t *in, int reps, const bool *avail)
{
    double s[M_COUNT][MAX_REPS], cpu[M_COUNT][MAX_REPS], rss[M_COUNT] = {0};
    double med[M_COUNT] = {0}, med_cpu[M_COUNT] = {0};
    uint64_t events[M_COUNT] = {0};
    int ok[M_COUNT] = {0};

    for (int r = 0; r < reps; r++) {
        for (int m = 0; m < M_COUNT; m++) {
            result_t res;
            if (!avail[m])
                continue;
            measure((method_t)m, in, &res);
            if (!res.ok)
                continue;
            cpu[m][ok[m]] = res.cpu_s;
            s[m][ok[m]++] = res.s;
            if (res.rss_mb > rss[m])
                rss[m] = res.rss_mb;
            events[m] = res.events;
        }
    }
    printf("\n%s: %d file(s), %.1f MB\n", in->label, in->n_files, in->bytes / BYTES_PER_MB);
    printf("  %-36s %8s %8s %9s %8s %10s %11s %9s\n", "method", "min s", "med s", "MB/s wall",
           "CPU s", "MB/CPU-s", "events/s", "RSS MB");
    for (int m = 0; m < M_COUNT; m++) {
        if (!avail[m])
            continue;
        if (ok[m] == 0) {
            printf("  %-36s (failed)\n", method_names[m]);
            continue;
        }
        med[m] = median(s[m], ok[m]);
        med_cpu[m] = median(cpu[m], ok[m]);
        printf("  %-36s %8.3f %8.3f %9.1f %8.3f %10.1f %11.0f %9.1f\n", method_names[m], s[m][0],
               med[m], in->bytes / BYTES_PER_MB / med[m], med_cpu[m],
               in->bytes / BYTES_PER_MB / med_cpu[m],
               events[m] ? (double)events[m] / med_cpu[m] : 0.0, rss[m]);
    }
    if (ok[M_IMPORT]) {
        printf("  ratios (median CPU times): import is");
        for (int m = M_CLI; m < M_COUNT; m++)
            if (ok[m])
                printf(" %.2fx %s%s", med_cpu[m] / med_cpu[M_IMPORT], method_names[m],
                       m + 1 < M_COUNT ? "," : "");
        if (ok[M_STREAM])
            printf("; %.2fx our streamer alone", med_cpu[M_STREAM] / med_cpu[M_IMPORT]);
        printf(" (>1: faster)\n");
        if (ok[M_FIELDS] && (ok[M_SIMD_ELEM] || ok[M_SIMD_DOC]))
            printf("  front ends, same fields (median CPU): json_stream %.1f MB/CPU-s, "
                   "simdjson per event %.1f, simdjson whole doc %.1f\n",
                   in->bytes / BYTES_PER_MB / med_cpu[M_FIELDS],
                   ok[M_SIMD_ELEM] ? in->bytes / BYTES_PER_MB / med_cpu[M_SIMD_ELEM] : 0.0,
                   ok[M_SIMD_DOC] ? in->bytes / BYTES_PER_MB / med_cpu[M_SIMD_DOC] : 0.0);
        return in->bytes / BYTES_PER_MB / med_cpu[M_IMPORT];
    }
    return 0;
}

/* Gzip input: json_stream on the gzip-compressed file beside `gzip -dc` of it (the
 * decompression alone), CPU time, same run. */
static void bench_gzip(const char *json, double bytes, int reps)
{
    char gz[PATH_CAP + 8], cmd[CMD_CAP];
    double ours[MAX_REPS], zcat[MAX_REPS];
    int n_ok = 0;
    input_t in;
    snprintf(gz, sizeof(gz), "%s.gz", json);
    snprintf(cmd, sizeof(cmd), "gzip -1 -c '%s' > '%s'", json, gz);
    if (system(cmd) != 0) {
        printf("\ngzip input: cannot compress %s: skipped\n", json);
        return;
    }
    snprintf(cmd, sizeof(cmd), "gzip -dc '%s' > /dev/null", gz);
    memset(&in, 0, sizeof(in));
    in.files[in.n_files++] = gz;
    for (int r = 0; r < reps; r++) {
        char *argv[] = {"sh", "-c", cmd, NULL};
        result_t a, b;
        measure(M_STREAM, &in, &a);
        memset(&b, 0, sizeof(b));
        run_prog(argv, NULL, 0, &b);
        if (a.ok && b.ok) {
            ours[n_ok] = a.cpu_s;
            zcat[n_ok++] = b.cpu_s;
        }
    }
    unlink(gz);
    if (n_ok == 0) {
        printf("\ngzip input: failed\n");
        return;
    }
    {
        double mo = median(ours, n_ok), mz = median(zcat, n_ok);
        printf("\ngzip input (%s, gzip -1): json_stream %.3f CPU s = %.1f MB/CPU-s of JSON; "
               "gzip -dc alone %.3f CPU s = %.1f MB/CPU-s; json_stream / decompression = %.2fx "
               "the time\n",
               gz, mo, bytes / BYTES_PER_MB / mo, mz, bytes / BYTES_PER_MB / mz, mo / mz);
    }
}

/* The folder above path (the PROF_* collection of a device_N folder). */
static void parent_of(char *out, size_t cap, const char *path)
{
    char *slash;
    snprintf(out, cap, "%s", path);
    slash = strrchr(out, '/');
    if (slash && slash != out)
        *slash = '\0';
}

static void input_free(input_t *in)
{
    for (int i = 0; i < in->n_files; i++)
        free(in->files[i]);
    in->n_files = 0;
}

int main(int argc, char **argv)
{
    double size_mb = argc > 1 ? strtod(argv[1], NULL) : DEFAULT_SIZE_MB;
    int reps = argc > 3 ? (int)strtol(argv[3], NULL, 10) : DEFAULT_REPS;
    char work[WORK_CAP], cmd[CMD_CAP];
    bool avail[M_COUNT];
    struct stat st;
    double synth_mbps;
    input_t in;

    if (size_mb <= 0)
        size_mb = DEFAULT_SIZE_MB;
    if (reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "usage: bench_import [SIZE_MB] [WORK_DIR] [REPS 1..%d]\n", MAX_REPS);
        return 2;
    }
    if (argc > 2) {
        snprintf(work, sizeof(work), "%s", argv[2]);
    } else {
        snprintf(work, sizeof(work), "/tmp/nnprof_bench_import_XXXXXX");
        if (!mkdtemp(work)) {
            perror("bench_import: mkdtemp");
            return 1;
        }
    }
    for (int m = 0; m < M_COUNT; m++)
        avail[m] = true;
    avail[M_CLI] = access(NNP_CLI_PATH, X_OK) == 0;
#ifndef NNP_BENCH_HAVE_SIMDJSON
    avail[M_SIMD_DOC] = avail[M_SIMD_ELEM] = false;
#endif
    avail[M_PYTHON] = have_prog("python3");
    avail[M_JQ] = have_prog("jq");
    printf("bench_import: import speed and peak RSS (each measurement its own process), %d "
           "repetitions interleaved%s%s\n",
           reps, avail[M_PYTHON] ? "" : "; python3 not found", avail[M_JQ] ? "" : "; jq not found");
    nnp_bench_print_load("at start");
#ifdef NNP_BENCH_HAVE_SIMDJSON
    printf("simdjson %s on-demand kernel (a benchmark peer, not part of nnprof)\n",
           json_bench_simdjson_kernel());
#endif
    if (stat(CANN_RANK0, &st) == 0) {
        memset(&in, 0, sizeof(in));
        in.label = "corpus: CANN rank 0 (cann importer)";
        in.imp = &nnp__importer_cann;
        snprintf(in.dir, sizeof(in.dir), "%s", CANN_RANK0);
        parent_of(in.cli_dir, sizeof(in.cli_dir), CANN_RANK0);
        add_files(&in, CANN_RANK0 "/timeline", "msprof_");
        bench_input(&in, reps, avail);
        input_free(&in);
        memset(&in, 0, sizeof(in));
        in.label = "corpus: torch_npu trace_view.json (torch_npu importer)";
        in.imp = &nnp__importer_torch_npu;
        snprintf(in.dir, sizeof(in.dir), "%s", TORCH_DIR);
        snprintf(in.cli_dir, sizeof(in.cli_dir), "%s", TORCH_DIR);
        add_files(&in, TORCH_DIR, "trace_view");
        bench_input(&in, reps, avail);
        input_free(&in);
    } else {
        printf("corpus not found at %s: skipped\n", CORPUS);
    }
    snprintf(cmd, sizeof(cmd), "python3 '%s' '%s' %g", NNP_GEN_SCRIPT, work, size_mb);
    printf("\nsynthetic msprof timeline (%g MB): %s\n", size_mb, cmd);
    fflush(stdout);
    if (system(cmd) != 0) {
        fprintf(stderr, "bench_import: the generator failed\n");
        return 1;
    }
    memset(&in, 0, sizeof(in));
    in.label = "synthetic msprof timeline (cann importer)";
    in.imp = &nnp__importer_cann;
    snprintf(in.dir, sizeof(in.dir), "%s/%s", work, GEN_DIR);
    parent_of(in.cli_dir, sizeof(in.cli_dir), in.dir);
    {
        char tl[PATH_CAP + 16];
        snprintf(tl, sizeof(tl), "%s/timeline", in.dir);
        add_files(&in, tl, "msprof_");
    }
    synth_mbps = bench_input(&in, reps, avail);
    if (in.n_files == 1)
        bench_gzip(in.files[0], in.bytes, reps);
    input_free(&in);
    nnp_bench_print_load("at end");
    printf("\ntarget (issue 17): msprof JSON import >= %.0f MB per CPU-second (on a 500 MB "
           "file: bench_import 500): %.1f MB/CPU-s on %g MB %s\n",
           TARGET_IMPORT_MBPS, synth_mbps, size_mb,
           synth_mbps >= TARGET_IMPORT_MBPS ? "PASS" : "MISS");
    if (argc <= 2) {
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", work);
        if (system(cmd) != 0)
            fprintf(stderr, "bench_import: could not remove %s\n", work);
    }
    return 0;
}
