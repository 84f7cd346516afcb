/* bench_load.h - how busy the machine is around a measurement, printed the same way by every
 * bench program (bench_load.c). */
#ifndef NNP_BENCH_LOAD_H
#define NNP_BENCH_LOAD_H

/* Prints one line: the load averages and the share of the machine's CPU time spent busy
 * over a short sample taken now (this process sleeping meanwhile), with a warning when
 * that share says other work is running. `when` names the moment ("at start"); NULL
 * prints none. The load average alone also counts the benchmark's own earlier runs (its
 * one-minute figure decays over minutes); the sample says whether something runs now. */
void nnp_bench_print_load(const char *when);

#endif
