/* synth_run.h - a synthetic run for the benchmarks (synth_run.c). */
#ifndef NNP_BENCH_SYNTH_RUN_H
#define NNP_BENCH_SYNTH_RUN_H

#include <stdint.h>

/* Events one synthetic step records. */
uint64_t nnp_bench_synth_events_per_step(void);
/* Records about n_events events into output path out (a session of this process).
 * Returns 0, or 1 with a message on stderr. */
int nnp_bench_synth_run(const char *out, uint64_t n_events);

#endif /* NNP_BENCH_SYNTH_RUN_H */
