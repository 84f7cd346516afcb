/* bench_load.c - the machine's load around a measurement, for every bench program (the
 * guide's rule: print figures with the machine's load). Two readings: getloadavg(3), and
 * the busy share of all CPUs over BUSY_SAMPLE_MS from /proc/stat, taken while this process
 * sleeps, so that it counts other programs only. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_load.h"

/* Length of the /proc/stat sample. */
#define BUSY_SAMPLE_MS 500
#define NS_PER_MS      1000000L
/* Busy share of all CPUs over the sample above which the figures are called pessimistic:
 * a quiet machine shows a few percent (kernel threads, the shell). */
#define BUSY_WARN_PCT 15.0
#define PERCENT       100.0
/* Fields of the "cpu" line of /proc/stat: user nice system idle iowait irq softirq steal. */
#define STAT_FIELDS 8
#define STAT_IDLE   3
#define STAT_IOWAIT 4

/* Total and idle jiffies of all CPUs; 0 when /proc/stat cannot be read. */
static int read_cpu(unsigned long long *total, unsigned long long *idle)
{
    unsigned long long v[STAT_FIELDS] = {0};
    FILE *f = fopen("/proc/stat", "r");
    int n;
    if (!f)
        return 0;
    n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
               &v[5], &v[6], &v[7]);
    fclose(f);
    if (n != STAT_FIELDS)
        return 0;
    *total = 0;
    for (int i = 0; i < STAT_FIELDS; i++)
        *total += v[i];
    *idle = v[STAT_IDLE] + v[STAT_IOWAIT];
    return 1;
}

/* Busy share (percent) of all CPUs over the sample; negative when unknown. */
static double busy_now(void)
{
    unsigned long long t0, i0, t1, i1;
    struct timespec nap = {0, BUSY_SAMPLE_MS * NS_PER_MS};
    if (!read_cpu(&t0, &i0))
        return -1.0;
    nanosleep(&nap, NULL);
    if (!read_cpu(&t1, &i1) || t1 <= t0)
        return -1.0;
    return PERCENT * (double)((t1 - t0) - (i1 - i0)) / (double)(t1 - t0);
}

void nnp_bench_print_load(const char *when)
{
    double load[3] = {0, 0, 0};
    double busy = busy_now();
    bool have_load = getloadavg(load, 3) == 3;
    printf("load%s%s:", when ? " " : "", when ? when : "");
    if (have_load)
        printf(" load average (1/5/15 min) %.2f %.2f %.2f;", load[0], load[1], load[2]);
    if (busy >= 0)
        printf(" CPUs %.0f %% busy over the last %d ms%s\n", busy, BUSY_SAMPLE_MS,
               busy > BUSY_WARN_PCT ? " - other work is running: figures are pessimistic"
                                    : " (quiet)");
    else
        printf(" CPU share unknown (no /proc/stat)\n");
}
