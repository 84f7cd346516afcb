/* bench_ui.c - `nnprof ui` speed on a synthetic 10 M-event run (issue 11): per page, the
 * latency of its API call over a real loopback connection once the run is analysed
 * (goal: < 200 ms), beside a baseline measured in the same run: loading that rank's
 * analysis outputs from disk, the work a server without its loaded tables would do on
 * every call. Also: the longest curve sent (goal: <= 2,000 points), the time to analyse and
 * load the run on first visit, and the size of `nnprof report` (goal: < 5 MB).
 * Usage: bench_ui [EVENTS] [WORK_DIR] [REPS]. Prints figures; never fails on targets. */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "server/rundata.h"
#include "server/server.h"
#include "synth_run.h"

#define DEFAULT_EVENTS   10000000ull
#define DEFAULT_REPS     15
#define TARGET_MS        200.0
#define TARGET_POINTS    2000
#define TARGET_REPORT_MB 5.0
#define RESP_CAP         (256u << 20)
#define POLL_US          200000
#define MAX_REPS         1000

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One GET over a fresh loopback connection (as a browser's first request). Returns the
 * status; *body (malloc'ed) holds the body, *len its length. */
static int http_get(int port, const char *target, char **body, size_t *len)
{
    struct sockaddr_in a;
    char req[1024], *buf = malloc(RESP_CAP + 1), *p;
    size_t n = 0;
    int fd = socket(AF_INET, SOCK_STREAM, 0), status = 0, k;
    if (!buf || fd < 0) {
        free(buf);
        return 0;
    }
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    k = snprintf(req, sizeof(req),
                 "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n", target,
                 port);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        send(fd, req, (size_t)k, MSG_NOSIGNAL) == k) {
        ssize_t got;
        while (n < RESP_CAP && (got = recv(fd, buf + n, RESP_CAP - n, 0)) > 0)
            n += (size_t)got;
    }
    close(fd);
    buf[n] = '\0';
    if (n > 12)
        status = (int)strtol(buf + 9, NULL, 10);
    p = strstr(buf, "\r\n\r\n");
    *len = p ? n - (size_t)(p + 4 - buf) : 0;
    if (p)
        memmove(buf, p + 4, *len + 1);
    *body = buf;
    return status;
}

/* Longest array anywhere in the document except the tables (ops, op types, tensors,
 * step ids for the selector): the longest curve sent. */
static int longest_curve(const cJSON *j)
{
    static const char *const tables[] = {"ops", "types", "tensors", "step_ids", "findings"};
    int best = cJSON_IsArray(j) ? cJSON_GetArraySize(j) : 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, j)
    {
        int k;
        bool table = false;
        for (size_t t = 0; c->string && t < sizeof(tables) / sizeof(tables[0]); t++)
            table |= strcmp(c->string, tables[t]) == 0;
        if (table)
            continue;
        k = longest_curve(c);
        best = k > best ? k : best;
    }
    return best;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void load_avg(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    char b[128] = "";
    if (f) {
        if (!fgets(b, sizeof(b), f))
            b[0] = '\0';
        fclose(f);
    }
    printf("machine: %ld CPUs, load average %s", sysconf(_SC_NPROCESSORS_ONLN), b);
}

static int gen_child(const char *out, uint64_t n)
{
    pid_t pid = fork();
    int status;
    if (pid == 0)
        _exit(nnp_bench_synth_run(out, n));
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return 1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv)
{
    static const char *const pages[] = {
        "overview",
        "step_trace",
        "step_trace&step=STEP",
        "operators",
        "operators&type=OpType3",
        "data_prep",
        "data_prep&queue=2",
        "timeline",
        "dynamic_shape",
        "resources",
        "resources&at=5000000",
        "cluster",
        "compare&a=run&b=run",
    };
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : DEFAULT_EVENTS;
    const char *work = argc > 2 ? argv[2] : "/tmp/nnprof-bench-ui";
    int reps = argc > 3 ? (int)strtol(argv[3], NULL, 10) : DEFAULT_REPS;
    char run[1024], cache[1024], report[1024], cmd[2300], *body;
    double t0, times[MAX_REPS], base[MAX_REPS], base_med, worst = 0;
    nnp_server_config_t cfg;
    nnp_server_t *s;
    size_t len;
    int port, st, ranks[1], worst_points = 0;
    struct stat sb;

    if (reps < 3 || reps > MAX_REPS)
        reps = DEFAULT_REPS;
    nnp_log_set_level(NNP_LOG_ERROR);
    snprintf(run, sizeof(run), "%s/run", work);
    snprintf(cache, sizeof(cache), "%s/cache", work);
    snprintf(report, sizeof(report), "%s/report.html", work);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", work, work);
    if (system(cmd) != 0)
        return 1;
    load_avg();
    t0 = now_s();
    if (gen_child(run, n) != 0)
        return 1;
    printf("recorded %llu events in %.1f s into %s\n", (unsigned long long)n, now_s() - t0, run);

    nnp_server_config_init(&cfg);
    cfg.root = work;
    cfg.port = 0;
    cfg.cache_root = cache;
    cfg.analyse_exe = NNP_CLI_PATH;
    if (nnp_server_start(&cfg, &s) != NNP_OK) {
        fprintf(stderr, "bench_ui: %s\n", nnp_last_error());
        return 1;
    }
    port = nnp_server_port(s);
    t0 = now_s();
    while ((st = http_get(port, "/api/overview?run=run", &body, &len)) == 202) {
        free(body);
        usleep(POLL_US);
    }
    free(body);
    printf("first visit: analyse (nnprof analyse -o) + load the results: %.1f s (HTTP %d)\n",
           now_s() - t0, st);
    if (st != 200) {
        nnp_server_destroy(s);
        return 1;
    }

    /* Baseline: load rank 0's outputs from disk, what each call would cost uncached. */
    {
        char results[1300];
        FILE *ls;
        snprintf(cmd, sizeof(cmd), "ls -d '%s'/run-*", cache);
        ls = popen(cmd, "r");
        if (!ls || !fgets(results, sizeof(results), ls)) {
            fprintf(stderr, "bench_ui: no results folder\n");
            return 1;
        }
        pclose(ls);
        results[strcspn(results, "\n")] = '\0';
        if (nnp__results_ranks(results, ranks, 1) != 1)
            return 1;
        for (int i = 0; i < reps; i++) {
            nnp_rank_data_t *d;
            double t = now_s();
            if (nnp__rank_data_load(results, ranks[0], &d) != NNP_OK)
                return 1;
            base[i] = now_s() - t;
            nnp__rank_data_free(d);
        }
        qsort(base, (size_t)reps, sizeof(double), cmp_double);
        base_med = base[reps / 2];
        printf("baseline: load rank %d's outputs from disk: min %.1f ms, median %.1f ms\n\n",
               ranks[0], base[0] * 1e3, base_med * 1e3);
    }
    printf("%-26s %9s %9s %9s %10s %7s %7s\n", "page (GET /api/...)", "min ms", "median", "max",
           "bytes", "points", "/base");
    for (size_t p = 0; p < sizeof(pages) / sizeof(pages[0]); p++) {
        char target[256], page[128];
        const char *amp;
        char *at_step;
        int points = 0, ok = 1;
        /* The middle step of the run. */
        snprintf(page, sizeof(page), "%s", pages[p]);
        if ((at_step = strstr(page, "STEP")) != NULL)
            snprintf(at_step, 24, "%llu",
                     (unsigned long long)(n / nnp_bench_synth_events_per_step() / 2));
        amp = strchr(page, '&');
        if (amp)
            snprintf(target, sizeof(target), "/api/%.*s?run=run%s", (int)(amp - page), page, amp);
        else
            snprintf(target, sizeof(target), "/api/%s?run=run", page);
        for (int i = 0; i < reps; i++) {
            double t = now_s();
            st = http_get(port, target, &body, &len);
            times[i] = now_s() - t;
            if (i == 0) {
                cJSON *j = cJSON_Parse(body);
                points = longest_curve(j);
                cJSON_Delete(j);
            }
            free(body);
            if (st != 200) {
                printf("%-26s HTTP %d\n", page, st);
                ok = 0;
                break;
            }
        }
        if (!ok)
            continue;
        qsort(times, (size_t)reps, sizeof(double), cmp_double);
        printf("%-26s %9.2f %9.2f %9.2f %10zu %7d %7.3f\n", page, times[0] * 1e3,
               times[reps / 2] * 1e3, times[reps - 1] * 1e3, len, points,
               times[reps / 2] / base_med);
        worst = times[reps / 2] > worst ? times[reps / 2] : worst;
        worst_points = points > worst_points ? points : worst_points;
    }
    nnp_server_destroy(s);
    printf("\nslowest page median %.2f ms (goal < %.0f ms): %s\n", worst * 1e3, TARGET_MS,
           worst * 1e3 < TARGET_MS ? "met" : "MISSED");
    printf("longest curve %d points (goal <= %d): %s\n", worst_points, TARGET_POINTS,
           worst_points <= TARGET_POINTS ? "met" : "MISSED");

    t0 = now_s();
    if (nnp_report_write(work, "run", -1, cache, NNP_CLI_PATH, report) != NNP_OK) {
        fprintf(stderr, "bench_ui: report: %s\n", nnp_last_error());
        return 1;
    }
    stat(report, &sb);
    printf("nnprof report: %.2f MB in %.2f s (goal < %.0f MB): %s\n", (double)sb.st_size / 1e6,
           now_s() - t0, TARGET_REPORT_MB,
           (double)sb.st_size / 1e6 < TARGET_REPORT_MB ? "met" : "MISSED");
    load_avg();
    return 0;
}
