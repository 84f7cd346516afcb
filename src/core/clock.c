/* clock.c - picks the tick source and measures its rate once per process. The rate is
 * only a nominal value for extrapolation; the reader converts ticks by interpolating
 * between clock points the writer records every second, so drift is bounded by that. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "util/util.h"

/* Calibration window at init: long enough for < 0.1 % rate error from clock_gettime
 * jitter (~100 ns), short enough to be unnoticed at start-up. */
#define CALIBRATE_NS (2u * 1000u * 1000u)
/* The tick source, when the user picks it: "monotonic" (CLOCK_MONOTONIC even where the TSC
 * is usable: a VM whose TSC is slow to read or jumps across migrations; also how the tests
 * reach the non-TSC paths), "tsc" or unset (the TSC where it is invariant). */
#define CLOCK_ENV "NNPROF_CLOCK"

bool nnp__clock_use_tsc;
static uint64_t tick_rate = NNP_NS_PER_SEC;
static pthread_once_t clock_once = PTHREAD_ONCE_INIT;

/* True when /proc/cpuinfo lists both flags that make the TSC a usable clock across
 * cores and power states. */
static bool cpu_has_invariant_tsc(void)
{
    char line[4096];
    bool constant = false, nonstop = false;
    FILE *f = fopen("/proc/cpuinfo", "re");
    if (!f)
        return false;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        constant = strstr(line, " constant_tsc") != NULL;
        nonstop = strstr(line, " nonstop_tsc") != NULL;
        break;
    }
    fclose(f);
    return constant && nonstop;
}

/* Whether the environment asks for CLOCK_MONOTONIC ticks; another value is named in a
 * warning and the TSC is used where it can be. */
static bool monotonic_asked(void)
{
    const char *s = getenv(CLOCK_ENV);
    if (!s || !*s || strcmp(s, "tsc") == 0)
        return false;
    if (strcmp(s, "monotonic") == 0)
        return true;
    NNP_LOG_W("%s='%s' is not a tick source: use 'tsc' or 'monotonic'; the TSC is used where "
              "it is invariant",
              CLOCK_ENV, s);
    return false;
}

static void clock_init_once(void)
{
    bool monotonic = monotonic_asked();
#if NNP_HAVE_RDTSC
    nnp__clock_use_tsc = !monotonic && cpu_has_invariant_tsc();
    if (nnp__clock_use_tsc) {
        nnp_clock_point_t a, b;
        nnp__clock_point(&a);
        do {
            nnp__clock_point(&b);
        } while (b.mono_ns - a.mono_ns < CALIBRATE_NS);
        tick_rate = (uint64_t)((double)(b.ticks - a.ticks) * (double)NNP_NS_PER_SEC /
                               (double)(b.mono_ns - a.mono_ns));
        if (tick_rate == 0) {
            nnp__clock_use_tsc = false;
            tick_rate = NNP_NS_PER_SEC;
        }
    }
#else
    (void)monotonic;
#endif
}

void nnp__clock_init(void)
{
    pthread_once(&clock_once, clock_init_once);
}

void nnp__clock_point(nnp_clock_point_t *p)
{
    uint64_t t0 = nnp__ticks();
    uint64_t mono = nnp__mono_ns();
    uint64_t t1 = nnp__ticks();
    p->ticks = t0 + (t1 - t0) / 2;
    p->mono_ns = mono;
    p->wall_ns = nnp__wall_ns();
    p->ticks_per_sec = tick_rate;
}

uint64_t nnp__clock_rate(void)
{
    return tick_rate;
}

const char *nnp__clock_source(void)
{
    return nnp__clock_use_tsc ? "tsc" : "monotonic";
}
