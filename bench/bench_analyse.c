/* bench_analyse.c - `nnprof analyse` as the user runs it (issue 17): the CLI binary in a
 * child process on a synthetic run (default 10 M events: ops, steps, communication, host
 * ranges, tensor memory, pipeline queues), timed from exec to exit, with its CPU time and
 * peak RSS from wait4(2). Each repetition removes the previous results first, so every run
 * writes the same files. Runs: on both cores, and pinned to one core (the goal's "one
 * core"); at EVENTS/4 as well, to show whether the cost is linear in events. Baseline in
 * the same run: /bin/cp of the trace_view.json just written (no fsync on either side;
 * coreutils' cp copies inside the kernel with copy_file_range), and write() of the same
 * bytes from memory (the copy into the page cache every writer pays), beside the timeline
 * stage's own MB/s, which the CLI logs at info level
 * ("analyse: rank R: stage S: T s"). Usage: bench_analyse [EVENTS] [WORK_DIR] [REPS]
 * [BASELINE_CLI]. With BASELINE_CLI (another build's nnprof, e.g. main's), the big run is
 * also analysed by it and by ours in alternation, REPS pairs pinned to one core, and the
 * CPU and wall ratios are printed: the before/after of a change, in the same run.
 * Every timed run starts from the same page cache (settle, not timed: sync, the cache
 * dropped as root, the run's input read back), so that none pays for an earlier run's GB
 * of output. Prints figures (min and median of REPS); never fails on
 * targets. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nnprof/nnprof.h>

#include "bench_load.h"
#include "synth_run.h"

#ifndef NNP_CLI_PATH
#define NNP_CLI_PATH "nnprof"
#endif

#define DEFAULT_EVENTS 10000000ull
#define DEFAULT_REPS   3
#define MAX_REPS       20
/* The linearity check analyses a run this many times smaller as well. */
#define SMALL_DIVISOR  4
#define PATH_CAP       4096
#define LOG_CAP        (1u << 20)
#define MAX_STAGES     32
#define STAGE_NAME_CAP 64
#define NS_PER_SEC     1e9
#define BYTES_PER_MB   1e6
#define PER_MILLION    1e6
#define KB             1024.0
#define US_PER_SEC     1e6
/* write() size of the write baseline: the CLI's JSON writer flushes buffers of this order. */
#define WRITE_CHUNK (1u << 20)
/* Stages shorter than this are not listed (the GPU stages of a CPU run, ...). */
#define STAGE_PRINT_MIN_S 0.0005
/* Targets of issue 17. */
#define TARGET_EVENTS_PER_CPU_S 5e6
#define TARGET_SECONDS_10M      2.0
#define TEN_MILLION             1e7
#define TARGET_BYTES_PER_EVENT  64.0
#define TARGET_TIMELINE_VS_CP   0.8
/* Linear: the per-event cost at EVENTS within this factor of the cost at EVENTS/4. */
#define LINEAR_TOLERANCE 1.25

/* The machine's cost of new memory, measured before the runs: a mapping this large
 * touched page by page (a page cache page of the results costs the kernel alike). */
#define TOUCH_MB   512u
#define TOUCH_STEP 4096u
#define MS_PER_S   1e3
#define PER_100MB  100.0

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / NS_PER_SEC;
}

/* A struct timeval (rusage's times) in seconds. */
static double tv_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / US_PER_SEC;
}

static uint64_t events_per_step(void)
{
    return nnp_bench_synth_events_per_step();
}

static int run_generate(const char *out, uint64_t n)
{
    int status;
    pid_t p;
    fflush(stdout); /* or the child inherits and prints the parent's buffered text */
    p = fork();
    if (p == 0)
        _exit(nnp_bench_synth_run(out, n));
    if (p < 0 || waitpid(p, &status, 0) != p)
        return 1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* ---- files ---- */

static int rm_rf(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : -1;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        if (!d)
            return -1;
        while ((e = readdir(d)) != NULL) {
            char p[PATH_CAP];
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
            rm_rf(p);
        }
        closedir(d);
        return rmdir(path);
    }
    return unlink(path);
}

/* The one raw directory of out/profiler (PROF_*), into raw. */
static int find_raw(const char *out, char *raw, size_t cap)
{
    char prof[PATH_CAP];
    struct dirent *e;
    DIR *d;
    int found = -1;
    snprintf(prof, sizeof(prof), "%s/profiler", out);
    d = opendir(prof);
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "PROF_", 5) == 0) {
            int k = snprintf(raw, cap, "%s/%s", prof, e->d_name);
            found = k > 0 && (size_t)k < cap ? 0 : -1;
        }
    }
    closedir(d);
    return found;
}

/* Removes every analysis result (and .old copy) so the next run writes the same files. */
static void clean_results(const char *out, const char *raw)
{
    char prof[PATH_CAP], p[PATH_CAP + 256];
    struct dirent *e;
    DIR *d;
    snprintf(prof, sizeof(prof), "%s/profiler", out);
    d = opendir(prof);
    if (d) {
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.' || strncmp(e->d_name, "PROF_", 5) == 0)
                continue;
            snprintf(p, sizeof(p), "%s/%s", prof, e->d_name);
            rm_rf(p);
        }
        closedir(d);
    }
    snprintf(p, sizeof(p), "%s/ASCEND_PROFILER_OUTPUT", raw);
    rm_rf(p);
}

static uint64_t g_du;

/* Bytes of every file under path except the raw data (meta.nnp, data_*.nnp, info.json). */
static void du_results(const char *path, bool top)
{
    struct dirent *e;
    DIR *d = opendir(path);
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        char p[PATH_CAP];
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (!top && (strcmp(e->d_name, "meta.nnp") == 0 || strcmp(e->d_name, "info.json") == 0 ||
                     strncmp(e->d_name, "data_", 5) == 0))
            continue;
        snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
        if (lstat(p, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode))
            du_results(p, false);
        else
            g_du += (uint64_t)st.st_size;
    }
    closedir(d);
}

static double file_mb(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (double)st.st_size / BYTES_PER_MB : 0.0;
}

/* ---- running a program as a user does ---- */

typedef struct run {
    double wall_s, cpu_s; /* exec .. exit; user + system of the child */
    double maxrss_mb;
    int status;
} run_t;

/* Runs argv (stderr into log, when given) and waits for it. cpu: pin it to this CPU
 * (-1: any). */
static int run_prog(char *const argv[], int cpu, char *log, size_t log_cap, run_t *r)
{
    int fds[2] = {-1, -1};
    struct rusage ru;
    size_t len = 0;
    double t0;
    pid_t pid;

    if (log && pipe(fds) != 0)
        return -1;
    t0 = now_s();
    pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (cpu >= 0) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(cpu, &set);
            sched_setaffinity(0, sizeof(set), &set);
        }
        if (log) {
            int null = open("/dev/null", O_WRONLY);
            dup2(fds[1], STDERR_FILENO);
            if (null >= 0)
                dup2(null, STDOUT_FILENO); /* the CLI's "results in ..." line */
            close(fds[0]);
            close(fds[1]);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    if (log) {
        close(fds[1]);
        for (;;) {
            ssize_t n = read(fds[0], log + len, log_cap - 1 - len);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            len += (size_t)n;
            if (len + 1 >= log_cap)
                len = 0; /* keep the tail: the stage lines come last */
        }
        close(fds[0]);
        log[len] = '\0';
    }
    if (wait4(pid, &r->status, 0, &ru) != pid)
        return -1;
    r->wall_s = now_s() - t0;
    r->cpu_s = tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
    r->maxrss_mb = (double)ru.ru_maxrss * KB / BYTES_PER_MB;
    return WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0 ? 0 : -1;
}

/* Stage times the CLI logs at info level: "analyse: rank R: stage NAME: T s (CPU C s, ...".
 * Stages run on two threads, so wall times overlap; CPU times add up. */
typedef struct stages {
    char name[MAX_STAGES][STAGE_NAME_CAP];
    double s[MAX_STAGES][MAX_REPS];
    double cpu[MAX_STAGES][MAX_REPS];
    int n;
} stages_t;

static void parse_stages(const char *log, stages_t *st, int rep)
{
    const char *p = log;
    while ((p = strstr(p, "stage ")) != NULL) {
        char name[STAGE_NAME_CAP];
        double sec, cpu = 0;
        int k;
        const char *colon;
        p += strlen("stage ");
        colon = strstr(p, ": ");
        if (!colon || colon - p >= STAGE_NAME_CAP || strchr(p, '\n') < colon)
            continue;
        memcpy(name, p, (size_t)(colon - p));
        name[colon - p] = '\0';
        if (sscanf(colon + 2, "%lf s (CPU %lf s", &sec, &cpu) < 1)
            continue;
        for (k = 0; k < st->n && strcmp(st->name[k], name) != 0; k++)
            ;
        if (k == st->n) {
            if (st->n == MAX_STAGES)
                continue;
            snprintf(st->name[st->n++], STAGE_NAME_CAP, "%s", name);
        }
        st->s[k][rep] = sec;
        st->cpu[k][rep] = cpu;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v and returns the median; v[0] is then the minimum. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double sys_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return tv_s(ru.ru_stime);
}

/* A fact of the machine that the CLI's system time depends on: the kernel CPU-ms to
 * fault in 100 MB of new memory (every page of the model and of the results in the page
 * cache is new memory). Bare metal pays a page clear and a fault per 4 KiB (tens of ms);
 * a VM whose host backs guest memory lazily (and takes freed memory back) pays many
 * times that, for us and any baseline alike. */
static void print_new_memory_cost(void)
{
    size_t bytes = (size_t)TOUCH_MB << 20;
    double t0;
    char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return;
    t0 = sys_cpu_s();
    for (size_t i = 0; i < bytes; i += TOUCH_STEP)
        p[i] = 1;
    printf("new memory costs the kernel %.0f CPU-ms per 100 MB here (%u MB touched)\n",
           (sys_cpu_s() - t0) * MS_PER_S * PER_100MB / TOUCH_MB, TOUCH_MB);
    munmap(p, bytes);
}

/* Results of REPS runs of the CLI on one data set. */
typedef struct series {
    double wall[MAX_REPS], cpu[MAX_REPS], rss[MAX_REPS];
    double wall1[MAX_REPS], cpu1[MAX_REPS];              /* pinned to one core */
    double tl_mbps[MAX_REPS], cp_mbps[MAX_REPS];         /* per wall second */
    double tl_cpu_mbps[MAX_REPS], cp_cpu_mbps[MAX_REPS]; /* per CPU-second */
    double wr_mbps[MAX_REPS], wr_cpu_mbps[MAX_REPS];     /* write() from memory */
    double out_mb, tl_mb;
    stages_t st;
} series_t;

/* Where the page cache's clean pages are dropped (root only: settle). */
#define DROP_CACHES "/proc/sys/vm/drop_caches"

/* Whether settle() could drop the page cache (printed with the figures). */
static bool g_dropped;

/* Reads a file, or the regular files of a folder (not below it), into the page cache. */
static void warm(const char *path)
{
    static char buf[WRITE_CHUNK];
    struct stat sb;
    int fd;
    if (stat(path, &sb) != 0)
        return;
    if (S_ISDIR(sb.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        char p[PATH_CAP + 256];
        while (d && (e = readdir(d)) != NULL) {
            snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
            if (e->d_name[0] != '.' && stat(p, &sb) == 0 && S_ISREG(sb.st_mode))
                warm(p);
        }
        if (d)
            closedir(d);
        return;
    }
    fd = open(path, O_RDONLY);
    while (fd >= 0 && read(fd, buf, sizeof(buf)) > 0)
        continue;
    if (fd >= 0)
        close(fd);
}

/* Before every timed run (not timed): the same state of the page cache. Each run writes
 * ~1.4 GB; without this the next run, whichever it is, pays for writing back the last
 * one's dirty pages and, once memory is full of cached outputs, for reclaiming pages for
 * its own (seen: 0.4 to 2.7 s of system time for the same command back to back; cp of the
 * timeline at 400 to 3,700 MB/s). So: sync, drop the clean pages (as root), then read
 * what the run reads (input, a file or a raw folder) back into the cache. */
static void settle(const char *input)
{
    int fd;
    sync();
    fd = open(DROP_CACHES, O_WRONLY);
    g_dropped = fd >= 0 && write(fd, "1", 1) == 1;
    if (fd >= 0)
        close(fd);
    if (input)
        warm(input);
}

/* /bin/cp of the timeline to a sibling file, timed: MB per wall and per CPU-second (0 on
 * failure). */
static void cp_mbps(const char *tv, double *wall_mbps, double *cpu_mbps)
{
    char copy[2 * PATH_CAP];
    char *argv[] = {"/bin/cp", (char *)tv, copy, NULL};
    run_t r;
    double mb = file_mb(tv);
    int k = snprintf(copy, sizeof(copy), "%s.copy", tv);
    *wall_mbps = *cpu_mbps = 0;
    if (k < 0 || (size_t)k >= sizeof(copy) || mb <= 0)
        return;
    settle(tv);
    if (run_prog(argv, -1, NULL, 0, &r) != 0)
        return;
    unlink(copy);
    *wall_mbps = mb / r.wall_s;
    *cpu_mbps = r.cpu_s > 0 ? mb / r.cpu_s : 0;
}

static double self_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
}

/* The timeline's bytes, read into memory first (not timed), written with write() to a
 * sibling file in WRITE_CHUNK pieces, timed: MB per wall and per CPU-second (0 on
 * failure). The least any writer of these bytes pays: their copy into the page cache.
 * (coreutils' cp, >= 9.0, copies with copy_file_range(2) inside the kernel: no byte goes
 * through user space at all, so the cp ratio compares formatting + copy with a copy.) */
static void write_mbps(const char *tv, double *wall_mbps, double *cpu_mbps)
{
    char copy[2 * PATH_CAP];
    struct stat sb;
    char *buf = NULL;
    size_t size = 0, done = 0;
    int in = open(tv, O_RDONLY), out = -1;
    int k = snprintf(copy, sizeof(copy), "%s.write", tv);
    double t0, c0;
    *wall_mbps = *cpu_mbps = 0;
    if (in < 0 || k < 0 || (size_t)k >= sizeof(copy) || fstat(in, &sb) != 0 || sb.st_size <= 0)
        goto out;
    size = (size_t)sb.st_size;
    buf = malloc(size);
    while (buf && done < size) {
        ssize_t n = read(in, buf + done, size - done);
        if (n <= 0)
            goto out;
        done += (size_t)n;
    }
    out = open(copy, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (!buf || out < 0)
        goto out;
    settle(NULL);
    t0 = now_s();
    c0 = self_cpu_s();
    for (done = 0; done < size;) {
        size_t want = size - done < WRITE_CHUNK ? size - done : WRITE_CHUNK;
        ssize_t n = write(out, buf + done, want);
        if (n <= 0)
            goto out;
        done += (size_t)n;
    }
    close(out);
    out = -1;
    *wall_mbps = (double)size / BYTES_PER_MB / (now_s() - t0);
    c0 = self_cpu_s() - c0;
    *cpu_mbps = c0 > 0 ? (double)size / BYTES_PER_MB / c0 : 0;
out:
    if (out >= 0)
        close(out);
    if (in >= 0)
        close(in);
    unlink(copy);
    free(buf);
}

static int bench_cli(const char *out, int reps, bool pinned_too, series_t *se)
{
    static char log[LOG_CAP];
    char raw[PATH_CAP], tv[PATH_CAP + 64];
    char *argv[] = {NNP_CLI_PATH, "analyse", "--quiet", (char *)out, NULL};
    memset(se, 0, sizeof(*se));
    if (find_raw(out, raw, sizeof(raw)) != 0) {
        fprintf(stderr, "bench_analyse: no PROF_* directory under %s/profiler\n", out);
        return -1;
    }
    snprintf(tv, sizeof(tv), "%s/ASCEND_PROFILER_OUTPUT/trace_view.json", raw);
    setenv("NNPROF_LOG_LEVEL", "info", 1);
    for (int i = 0; i < reps; i++) {
        run_t r;
        double tl_s, tl_cpu;
        /* Interleaved: two cores, then one core, so drift hits both alike. */
        for (int pin = 0; pin <= (pinned_too ? 1 : 0); pin++) {
            clean_results(out, raw);
            settle(raw);
            if (run_prog(argv, pin ? 0 : -1, log, sizeof(log), &r) != 0) {
                fprintf(stderr, "bench_analyse: '%s analyse %s' failed (status %d):\n%s\n",
                        NNP_CLI_PATH, out, r.status, log);
                return -1;
            }
            if (pin) {
                se->wall1[i] = r.wall_s;
                se->cpu1[i] = r.cpu_s;
                continue;
            }
            se->wall[i] = r.wall_s;
            se->cpu[i] = r.cpu_s;
            se->rss[i] = r.maxrss_mb;
            parse_stages(log, &se->st, i);
            g_du = 0;
            du_results(out, true);
            se->out_mb = (double)g_du / BYTES_PER_MB;
            se->tl_mb = file_mb(tv);
            tl_s = tl_cpu = 0;
            for (int k = 0; k < se->st.n; k++) {
                if (strcmp(se->st.name[k], "timeline") == 0) {
                    tl_s = se->st.s[k][i];
                    tl_cpu = se->st.cpu[k][i];
                }
            }
            se->tl_mbps[i] = tl_s > 0 ? se->tl_mb / tl_s : 0;
            se->tl_cpu_mbps[i] = tl_cpu > 0 ? se->tl_mb / tl_cpu : 0;
            cp_mbps(tv, &se->cp_mbps[i], &se->cp_cpu_mbps[i]);
            write_mbps(tv, &se->wr_mbps[i], &se->wr_cpu_mbps[i]);
        }
    }
    unsetenv("NNPROF_LOG_LEVEL");
    return 0;
}

/* BASELINE_CLI against ours on one data set: REPS interleaved pairs, each pinned to CPU 0
 * (the goal's one core), CPU (user + system) and wall of each, min / median and ratios. */
static int compare_cli(const char *out, const char *baseline, int reps, uint64_t events)
{
    static char log[LOG_CAP]; /* its stderr; stdout (the "results in" line) is dropped */
    char raw[PATH_CAP];
    char *argv[2][5] = {{(char *)baseline, "analyse", "--quiet", (char *)out, NULL},
                        {NNP_CLI_PATH, "analyse", "--quiet", (char *)out, NULL}};
    double cpu[2][MAX_REPS], wall[2][MAX_REPS], m_cpu[2], m_wall[2];
    if (find_raw(out, raw, sizeof(raw)) != 0)
        return -1;
    for (int i = 0; i < reps; i++) {
        for (int k = 0; k < 2; k++) {
            run_t r;
            clean_results(out, raw);
            settle(raw);
            if (run_prog(argv[k], 0, log, sizeof(log), &r) != 0) {
                fprintf(stderr, "bench_analyse: '%s analyse %s' failed (status %d):\n%s\n",
                        argv[k][0], out, r.status, log);
                return -1;
            }
            cpu[k][i] = r.cpu_s;
            wall[k][i] = r.wall_s;
        }
    }
    printf("\n%llu events, pinned to one core, %d interleaved pairs:\n", (unsigned long long)events,
           reps);
    for (int k = 0; k < 2; k++) {
        m_cpu[k] = median(cpu[k], reps);
        m_wall[k] = median(wall[k], reps);
        printf("  %-8s CPU min %7.3f median %7.3f s (%.2f M events per CPU-second)  wall min "
               "%7.3f median %7.3f s  %s\n",
               k ? "ours" : "baseline", cpu[k][0], m_cpu[k],
               (double)events / m_cpu[k] / PER_MILLION, wall[k][0], m_wall[k], argv[k][0]);
    }
    printf("  ours / baseline: CPU %.3fx (min %.3fx), wall %.3fx (min %.3fx), medians\n",
           m_cpu[1] / m_cpu[0], cpu[1][0] / cpu[0][0], m_wall[1] / m_wall[0],
           wall[1][0] / wall[0][0]);
    return 0;
}

static void report(const series_t *se_in, uint64_t events, int reps, bool pinned_too)
{
    series_t se = *se_in; /* median() sorts */
    double m_wall = median(se.wall, reps), m_cpu = median(se.cpu, reps);
    double m_rss = median(se.rss, reps), m_tl = median(se.tl_mbps, reps);
    double m_cp = median(se.cp_mbps, reps), m_tl_cpu = median(se.tl_cpu_mbps, reps);
    double m_cp_cpu = median(se.cp_cpu_mbps, reps);
    double m_wr = median(se.wr_mbps, reps), m_wr_cpu = median(se.wr_cpu_mbps, reps);
    double bpe = m_rss * BYTES_PER_MB / (double)events;
    double ev_cpu = (double)events / m_cpu;

    printf("  %-40s min %8.3f  median %8.3f s\n", "wall, 2 cores", se.wall[0], m_wall);
    printf("  %-40s min %8.3f  median %8.3f s\n", "CPU time (user + system), 2 cores", se.cpu[0],
           m_cpu);
    if (pinned_too) {
        double m1 = median(se.wall1, reps);
        median(se.cpu1, reps);
        printf("  %-40s min %8.3f  median %8.3f s  (CPU %.3f s)\n", "wall, pinned to one core",
               se.wall1[0], m1, se.cpu1[reps / 2]);
    }
    printf("  %-40s %8.1f MB = %.1f B/event\n", "peak RSS (median)", m_rss, bpe);
    printf("  %-40s %8.1f MB (trace_view.json %.1f MB)\n", "results written", se.out_mb, se.tl_mb);
    printf("  stages (from the CLI's own info log; median of the runs; two threads, so wall "
           "times overlap):\n    %-36s %8s %8s\n",
           "", "wall s", "CPU s");
    for (int k = 0; k < se.st.n; k++) {
        double m = median(se.st.s[k], reps), c = median(se.st.cpu[k], reps);
        if (m >= STAGE_PRINT_MIN_S)
            printf("    %-36s %8.3f %8.3f\n", se.st.name[k], m, c);
    }
    printf("  %-40s %8.2f M/s  (events / CPU s)\n", "events per CPU-second", ev_cpu / PER_MILLION);
    printf("  %-40s %8.1f MB/s  beside cp of the same file: %.1f MB/s (ratio %.2f)\n",
           "timeline writing, per wall second", m_tl, m_cp, m_cp > 0 ? m_tl / m_cp : 0.0);
    printf("  %-40s %8.1f MB/s  beside cp of the same file: %.1f MB/s (ratio %.2f)\n",
           "timeline writing, per CPU-second", m_tl_cpu, m_cp_cpu,
           m_cp_cpu > 0 ? m_tl_cpu / m_cp_cpu : 0.0);
    printf("  %-40s %8.1f MB/s  beside write() of its bytes from memory: %.1f MB/s (ratio %.2f)\n",
           "timeline writing, per wall second", m_tl, m_wr, m_wr > 0 ? m_tl / m_wr : 0.0);
    printf("  %-40s %8.1f MB/s  beside write() of its bytes from memory: %.1f MB/s (ratio %.2f)\n",
           "timeline writing, per CPU-second", m_tl_cpu, m_wr_cpu,
           m_wr_cpu > 0 ? m_tl_cpu / m_wr_cpu : 0.0);
}

static const char *verdict(bool ok)
{
    return ok ? "PASS" : "MISS";
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : DEFAULT_EVENTS;
    int reps = argc > 3 ? (int)strtol(argv[3], NULL, 10) : DEFAULT_REPS;
    char tmpl[] = "/tmp/nnprof-bench-analyse-XXXXXX";
    const char *work = argc > 2 ? argv[2] : mkdtemp(tmpl);
    char big[PATH_CAP], small[PATH_CAP];
    uint64_t steps_big, steps_small, ev_big, ev_small;
    series_t sb, ss;
    struct stat st;
    double t0;

    if (!work || n < events_per_step() * SMALL_DIVISOR || reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "usage: bench_analyse [EVENTS] [WORK_DIR] [REPS 1..%d] [BASELINE_CLI]\n",
                MAX_REPS);
        return 2;
    }
    if (access(NNP_CLI_PATH, X_OK) != 0) {
        fprintf(stderr, "bench_analyse: %s not found (build nnprof_cli)\n", NNP_CLI_PATH);
        return 1;
    }
    steps_big = n / events_per_step();
    steps_small = steps_big / SMALL_DIVISOR;
    ev_big = steps_big * events_per_step();
    ev_small = steps_small * events_per_step();
    snprintf(big, sizeof(big), "%s/big", work);
    snprintf(small, sizeof(small), "%s/small", work);
    printf("bench_analyse: %s analyse on synthetic runs of %llu and %llu events in %s, %d "
           "repetitions\n",
           NNP_CLI_PATH, (unsigned long long)ev_big, (unsigned long long)ev_small, work, reps);
    printf("cpus online: %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
    t0 = now_s();
    if (mkdir(work, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "bench_analyse: cannot create %s: %s\n", work, strerror(errno));
        return 1;
    }
    /* A work directory given twice reuses its data (the generator is deterministic). */
    if ((stat(big, &st) != 0 && (mkdir(big, 0700) != 0 || run_generate(big, ev_big) != 0)) ||
        (stat(small, &st) != 0 &&
         (mkdir(small, 0700) != 0 || run_generate(small, ev_small) != 0))) {
        fprintf(stderr, "bench_analyse: generating the runs failed\n");
        return 1;
    }
    printf("generate (record + write)  %.3f s\n", now_s() - t0);
    nnp_bench_print_load("before the runs");
    print_new_memory_cost();
    fflush(stdout);
    if (bench_cli(small, reps, false, &ss) != 0 || bench_cli(big, reps, true, &sb) != 0)
        return 1;
    nnp_bench_print_load("after the runs");
    printf("page cache before each timed run: synced, %s, the run's input read back\n",
           g_dropped ? "clean pages dropped (" DROP_CACHES ")"
                     : "NOT dropped (not root): figures depend on what earlier runs left "
                       "cached");

    printf("\n%llu events:\n", (unsigned long long)ev_small);
    report(&ss, ev_small, reps, false);
    printf("\n%llu events:\n", (unsigned long long)ev_big);
    report(&sb, ev_big, reps, true);
    {
        series_t a = sb, b = ss;
        double cpu_big = median(a.cpu, reps), cpu_small = median(b.cpu, reps);
        double wall1 = median(a.wall1, reps), rss = median(a.rss, reps);
        double per_big = cpu_big / (double)ev_big, per_small = cpu_small / (double)ev_small;
        double ev_rate = (double)ev_big / cpu_big, bpe = rss * BYTES_PER_MB / (double)ev_big;
        double tl = median(a.tl_mbps, reps), cp = median(a.cp_mbps, reps);
        double tlc = median(a.tl_cpu_mbps, reps), cpc = median(a.cp_cpu_mbps, reps);
        double wr = median(a.wr_mbps, reps), wrc = median(a.wr_cpu_mbps, reps);
        printf("\ntargets (issue 17)\n");
        printf("  %-46s %8.2f M/s %s\n", ">= 5 M events per CPU-second", ev_rate / PER_MILLION,
               verdict(ev_rate >= TARGET_EVENTS_PER_CPU_S));
        printf("  %-46s %8.3f s  %s\n", "10 M events <= 2 s on one core (pinned, scaled)",
               wall1 * TEN_MILLION / (double)ev_big,
               verdict(wall1 * TEN_MILLION / (double)ev_big <= TARGET_SECONDS_10M));
        printf("  %-46s %8.1f B  %s\n", "peak RSS <= 64 B/event", bpe,
               verdict(bpe <= TARGET_BYTES_PER_EVENT));
        printf("  %-46s %8.2fx   %s  (CPU ns/event %.1f at %llu, %.1f at %llu)\n",
               "linear: ns/event at N / at N/4 <= 1.25", per_big / per_small,
               verdict(per_big / per_small <= LINEAR_TOLERANCE), per_small * NS_PER_SEC,
               (unsigned long long)ev_small, per_big * NS_PER_SEC, (unsigned long long)ev_big);
        printf("  %-46s %8.2fx   %s  (per CPU-second: %.2fx)\n", "timeline writing >= 0.8x cp",
               cp > 0 ? tl / cp : 0.0, verdict(cp > 0 && tl / cp >= TARGET_TIMELINE_VS_CP),
               cpc > 0 ? tlc / cpc : 0.0);
        printf("  %-46s %8.2fx   %s  (per CPU-second: %.2fx; cp copies in the kernel, "
               "write() is the copy alone)\n",
               "timeline writing >= 0.8x write() of its bytes", wr > 0 ? tl / wr : 0.0,
               verdict(wr > 0 && tl / wr >= TARGET_TIMELINE_VS_CP), wrc > 0 ? tlc / wrc : 0.0);
    }
    if (argc > 4) {
        if (access(argv[4], X_OK) != 0) {
            fprintf(stderr, "bench_analyse: baseline %s is not an executable\n", argv[4]);
            return 1;
        }
        if (compare_cli(big, argv[4], reps, ev_big) != 0)
            return 1;
        nnp_bench_print_load("after the comparison");
    }
    if (argc <= 2)
        rm_rf(work);
    return 0;
}
