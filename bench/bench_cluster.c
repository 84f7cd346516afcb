/* bench_cluster.c - the cluster analysis at scale (issue 14): for 8, 64, 256 and 1,024
 * synthetic ranks (gen_cluster: 100 steps each, one slow rank, one slow link), the time and
 * peak memory of `nnprof cluster` on 1 and 2 threads and under `mpirun -np 1` and `-np 2`,
 * beside the baseline of the same run: `nnprof analyse`, which reads the same ranks and
 * writes each rank's own analysis (the work a user does without the cluster view). It then
 * says whether the injected slow rank and slow link were found. Times are min / median of
 * REPS runs, as wall clock around the whole process (start-up included); peak memory is the
 * largest of the processes' own peak RSS (--stats). Prints figures; exits 0 unless
 * something breaks (STYLE 7.10: no speed assertion).
 *
 * usage: bench_cluster [--ranks 8,64,256,1024] [--steps 100] [--reps 3] [--work DIR]
 *                      [--no-baseline] [--no-mpi] */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef NNP_BENCH_BUILD_DIR
#define NNP_BENCH_BUILD_DIR "."
#endif
#ifndef NNP_BENCH_MPIEXEC
#define NNP_BENCH_MPIEXEC ""
#endif

#define MAX_SIZES     8
#define MAX_REPS      15
#define DEFAULT_REPS  3
#define DEFAULT_STEPS 100
#define OUT_CAP       (1u << 20)
#define CMD_MAX       64

typedef struct result {
    double t[MAX_REPS];
    int n;
    long peak_kb;
    bool ok;
} result_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs argv; its stderr and stdout go to the file out (read back by the caller). Returns
 * the exit status, -1 when it could not run. */
static int run(char *const *argv, const char *out, double *wall)
{
    double t0 = now_s();
    int status;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
        }
        execvp(argv[0], argv);
        _exit(127);
    }
    if (waitpid(pid, &status, 0) < 0)
        return -1;
    *wall = now_s() - t0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    size_t n;
    if (!f)
        return NULL;
    buf = malloc(OUT_CAP + 1);
    n = buf ? fread(buf, 1, OUT_CAP, f) : 0;
    fclose(f);
    if (buf)
        buf[n] = '\0';
    return buf;
}

/* The largest peak_rss_kb of the --stats lines. */
static long peak_of(const char *text)
{
    long peak = 0;
    for (const char *p = text; p && (p = strstr(p, "\"peak_rss_kb\":")) != NULL; p++) {
        long v = strtol(p + strlen("\"peak_rss_kb\":"), NULL, 10);
        if (v > peak)
            peak = v;
    }
    return peak;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void stats(const result_t *r, double *mn, double *med)
{
    double v[MAX_REPS];
    memcpy(v, r->t, (size_t)r->n * sizeof(double));
    qsort(v, (size_t)r->n, sizeof(double), cmp_d);
    *mn = r->n ? v[0] : 0;
    *med = r->n ? v[r->n / 2] : 0;
}

static void rm_rf(const char *path)
{
    char *argv[] = {"rm", "-rf", (char *)path, NULL};
    double w;
    char log[4096 + 16];
    snprintf(log, sizeof(log), "%s.rmlog", path);
    (void)run(argv, log, &w);
    unlink(log);
}

/* Runs one configuration reps times. mpi_np 0: no mpirun. */
static void measure(const char *nnprof, const char *data, const char *work, int threads, int mpi_np,
                    int reps, result_t *r)
{
    char out[4096], log[4096], th[16], np[16];
    char *argv[CMD_MAX];
    memset(r, 0, sizeof(*r));
    r->ok = true;
    snprintf(th, sizeof(th), "%d", threads);
    snprintf(np, sizeof(np), "%d", mpi_np);
    for (int k = 0; k < reps && r->ok; k++) {
        int n = 0, rc;
        double wall = 0;
        char *text;
        snprintf(out, sizeof(out), "%s/out_t%d_np%d", work, threads, mpi_np);
        snprintf(log, sizeof(log), "%s/log_t%d_np%d", work, threads, mpi_np);
        rm_rf(out);
        if (mpi_np > 0) {
            argv[n++] = (char *)NNP_BENCH_MPIEXEC;
            if (geteuid() == 0)
                argv[n++] = "--allow-run-as-root";
            argv[n++] = "--oversubscribe";
            argv[n++] = "-np";
            argv[n++] = np;
        }
        argv[n++] = (char *)nnprof;
        argv[n++] = "cluster";
        argv[n++] = "--quiet";
        argv[n++] = "--stats";
        argv[n++] = "--threads";
        argv[n++] = th;
        argv[n++] = "-o";
        argv[n++] = out;
        argv[n++] = (char *)data;
        argv[n] = NULL;
        rc = run(argv, log, &wall);
        text = slurp(log);
        if (rc != 0) {
            fprintf(stderr, "bench_cluster: run failed (%d):\n%s\n", rc, text ? text : "");
            r->ok = false;
        } else {
            r->t[r->n++] = wall;
            if (peak_of(text) > r->peak_kb)
                r->peak_kb = peak_of(text);
        }
        free(text);
    }
}

/* Whether the advice names the injected slow rank and link (by every rule that can). */
static void check(const char *out, int slow_rank, int src, int dst, char *rank_found,
                  char *link_found, size_t cap)
{
    char path[4096 + 32], *text;
    cJSON *a, *v;
    int by_rank = 0, rank_rules = 0;
    bool link_ok = false;
    snprintf(path, sizeof(path), "%s/cluster_advice.json", out);
    text = slurp(path);
    a = text ? cJSON_Parse(text) : NULL;
    free(text);
    snprintf(rank_found, cap, "no advice");
    snprintf(link_found, cap, "no advice");
    if (!a)
        return;
    cJSON_ArrayForEach(v, cJSON_GetObjectItem(a, "verdicts"))
    {
        const char *id = cJSON_GetObjectItem(v, "id")->valuestring;
        cJSON *ev = cJSON_GetObjectItem(v, "evidence"), *r0;
        if (strcmp(id, "slow_rank.msprof_analyze") == 0) {
            rank_rules++;
            by_rank += cJSON_IsTrue(cJSON_GetObjectItem(v, "fired")) &&
                       cJSON_GetObjectItem(ev, "computing_max_rank")->valueint == slow_rank;
        } else if (strcmp(id, "slow_rank.msprof_wait_ratio") == 0 ||
                   strcmp(id, "slow_rank.mindinsight_flops") == 0) {
            rank_rules++;
            r0 = cJSON_GetArrayItem(cJSON_GetObjectItem(v, "ranks"), 0);
            by_rank +=
                cJSON_IsTrue(cJSON_GetObjectItem(v, "fired")) && r0 && r0->valueint == slow_rank;
        } else if (strcmp(id, "slow_link.mindinsight") == 0) {
            cJSON *l = cJSON_GetArrayItem(cJSON_GetObjectItem(ev, "slow_links"), 0);
            link_ok = cJSON_IsTrue(cJSON_GetObjectItem(v, "fired")) && l &&
                      cJSON_GetObjectItem(l, "src_rank")->valueint == src &&
                      cJSON_GetObjectItem(l, "des_rank")->valueint == dst &&
                      cJSON_GetArraySize(cJSON_GetObjectItem(ev, "slow_links")) == 1;
        }
    }
    snprintf(rank_found, cap, "%s (%d/%d rules)", by_rank == rank_rules ? "yes" : "NO", by_rank,
             rank_rules);
    snprintf(link_found, cap, "%s", link_ok ? "yes (only it)" : "NO");
    cJSON_Delete(a);
}

static double loadavg(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1;
        fclose(f);
    }
    return l;
}

int main(int argc, char **argv)
{
    int sizes[MAX_SIZES] = {8, 64, 256, 1024}, n_sizes = 4, steps = DEFAULT_STEPS;
    int reps = DEFAULT_REPS;
    bool baseline = true, mpi = NNP_BENCH_MPIEXEC[0] != '\0';
    char work[4096] = "/tmp/nnprof_bench_cluster", nnprof[4096], gen[4096], mpi_lib[4096];
    struct stat st;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--ranks") == 0 && i + 1 < argc) {
            char *p = argv[++i];
            n_sizes = 0;
            while (*p && n_sizes < MAX_SIZES) {
                sizes[n_sizes++] = (int)strtol(p, &p, 10);
                if (*p == ',')
                    p++;
            }
        } else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
            steps = (int)strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = (int)strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--work") == 0 && i + 1 < argc) {
            snprintf(work, sizeof(work), "%s", argv[++i]);
        } else if (strcmp(argv[i], "--no-baseline") == 0) {
            baseline = false;
        } else if (strcmp(argv[i], "--no-mpi") == 0) {
            mpi = false;
        } else {
            fprintf(stderr, "usage: bench_cluster [--ranks 8,64,256,1024] [--steps N] "
                            "[--reps N] [--work DIR] [--no-baseline] [--no-mpi]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > MAX_REPS)
        reps = DEFAULT_REPS;
    snprintf(nnprof, sizeof(nnprof), "%s/nnprof", NNP_BENCH_BUILD_DIR);
    snprintf(gen, sizeof(gen), "%s/bench/gen_cluster", NNP_BENCH_BUILD_DIR);
    snprintf(mpi_lib, sizeof(mpi_lib), "%s/libnnprof_cluster_mpi.so", NNP_BENCH_BUILD_DIR);
    if (mpi && stat(mpi_lib, &st) != 0)
        mpi = false;
    if (mkdir(work, 0700) != 0 && errno != EEXIST) {
        perror(work);
        return 1;
    }
    printf("bench_cluster: %ld CPUs, load average %.2f, %d steps per rank, %d repetitions "
           "(min / median s)%s\n",
           sysconf(_SC_NPROCESSORS_ONLN), loadavg(), steps, reps,
           mpi ? "" : "; mpirun rows skipped (no mpirun or no libnnprof_cluster_mpi.so)");
    printf("%6s %8s | %-22s | %-22s | %-22s | %-22s | %-15s | %-14s | %s\n", "ranks", "events",
           "1 thread", "2 threads", "mpirun -np 1", "mpirun -np 2", "analyse (base)", "slow rank",
           "slow link");
    for (int s = 0; s < n_sizes; s++) {
        char data[4096], log[4096], steps_s[16], n_s[16], *text, rank_found[64], link_found[64];
        char out[4096];
        char *gargv[] = {gen, data, n_s, steps_s, NULL};
        result_t r1, r2, m1, m2;
        double gen_s = 0, base_s = 0, mn, med;
        int slow_rank = -1, src = -1, dst = -1, ops = 0;
        snprintf(data, sizeof(data), "%s/ranks_%d", work, sizes[s]);
        snprintf(log, sizeof(log), "%s/gen_%d.log", work, sizes[s]);
        snprintf(n_s, sizeof(n_s), "%d", sizes[s]);
        snprintf(steps_s, sizeof(steps_s), "%d", steps);
        rm_rf(data);
        if (run(gargv, log, &gen_s) != 0) {
            text = slurp(log);
            fprintf(stderr, "bench_cluster: gen_cluster failed:\n%s\n", text ? text : "");
            free(text);
            return 1;
        }
        text = slurp(log);
        if (text) {
            const char *p = strstr(text, "slow_rank ");
            if (p)
                slow_rank = (int)strtol(p + 10, NULL, 10);
            p = strstr(text, "slow_link ");
            if (p && sscanf(p + 10, "%d %d", &src, &dst) != 2)
                src = dst = -1;
            p = strstr(text, "ops_per_step ");
            if (p)
                ops = (int)strtol(p + 13, NULL, 10);
        }
        free(text);
        measure(nnprof, data, work, 1, 0, reps, &r1);
        measure(nnprof, data, work, 2, 0, reps, &r2);
        if (mpi) {
            measure(nnprof, data, work, 1, 1, reps, &m1);
            measure(nnprof, data, work, 1, 2, reps, &m2);
        }
        snprintf(out, sizeof(out), "%s/out_t1_np0", work);
        check(out, slow_rank, src, dst, rank_found, link_found, sizeof(rank_found));
        if (baseline) {
            char *bargv[] = {nnprof, "analyse", "--quiet", "--jobs", "2", "-o", out, data, NULL};
            snprintf(out, sizeof(out), "%s/out_analyse", work);
            rm_rf(out);
            snprintf(log, sizeof(log), "%s/analyse.log", work);
            if (run(bargv, log, &base_s) != 0)
                base_s = -1;
            rm_rf(out);
        }
        printf("%6d %8lld |", sizes[s],
               (long long)sizes[s] * steps * (ops + 7)); /* ops + 2 marks, 3 comms, step b/e */
        stats(&r1, &mn, &med);
        printf(" %6.3f/%6.3f %7.1fMB |", mn, med, r1.peak_kb / 1024.0);
        stats(&r2, &mn, &med);
        printf(" %6.3f/%6.3f %7.1fMB |", mn, med, r2.peak_kb / 1024.0);
        if (mpi) {
            stats(&m1, &mn, &med);
            printf(" %6.3f/%6.3f %7.1fMB |", mn, med, m1.peak_kb / 1024.0);
            stats(&m2, &mn, &med);
            printf(" %6.3f/%6.3f %7.1fMB |", mn, med, m2.peak_kb / 1024.0);
        } else {
            printf(" %-22s | %-22s |", "-", "-");
        }
        if (baseline && base_s >= 0)
            printf(" %13.2fs |", base_s);
        else
            printf(" %-15s |", "-");
        printf(" %-14s | %s\n", rank_found, link_found);
        {
            double med1, med2, mm1 = 0, mm2 = 0;
            stats(&r1, &mn, &med1);
            stats(&r2, &mn, &med2);
            if (mpi) {
                stats(&m1, &mn, &mm1);
                stats(&m2, &mn, &mm2);
            }
            printf("       medians: 2 threads / 1 thread %.2f, np2 / np1 %.2f, cluster (1 thread) "
                   "/ analyse %.2f; data generated in %.1f s\n",
                   med1 > 0 ? med2 / med1 : 0.0, mm1 > 0 ? mm2 / mm1 : 0.0,
                   base_s > 0 ? med1 / base_s : 0.0, gen_s);
        }
        fflush(stdout);
        rm_rf(data);
    }
    return 0;
}
