/* clock.h - the recorder's tick source and its pairing with the system clocks.
 * Hot paths call nnp__ticks(): RDTSC when the CPU has an invariant TSC (constant_tsc and
 * nonstop_tsc), else CLOCK_MONOTONIC in ns (vDSO, no syscall). Ticks are stored raw and
 * converted to ns offline from clock points (STYLE 7.5). */
#ifndef NNP_CLOCK_H
#define NNP_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "format/raw_format.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define NNP_HAVE_RDTSC 1
#else
#define NNP_HAVE_RDTSC 0
#endif

#define NNP_NS_PER_SEC 1000000000ull

/* Set once by nnp__clock_init() before any session exists; read-only afterwards. */
extern bool nnp__clock_use_tsc;

static inline uint64_t nnp__mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * NNP_NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

static inline uint64_t nnp__wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * NNP_NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

static inline uint64_t nnp__ticks(void)
{
#if NNP_HAVE_RDTSC
    if (nnp__clock_use_tsc)
        return __rdtsc();
#endif
    return nnp__mono_ns();
}

/* Chooses the tick source (idempotent, thread-safe) and measures its nominal rate. */
void nnp__clock_init(void);
/* Takes a clock point: ticks, CLOCK_MONOTONIC and CLOCK_REALTIME read as close together
 * as possible (the tick read is the midpoint of two reads around the system clock). */
void nnp__clock_point(nnp_clock_point_t *p);
/* Nominal ticks per second measured at init (1e9 when ticks are ns). */
uint64_t nnp__clock_rate(void);
/* "tsc" or "monotonic", for info.json. */
const char *nnp__clock_source(void);

#endif /* NNP_CLOCK_H */
