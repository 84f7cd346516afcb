/* sampler.h - the sampling thread: machine CPU (/proc/stat), process CPU and memory
 * (/proc/self/stat, statm) and per-thread CPU of registered threads, every interval,
 * recorded as SYS_CPU / PROC_CPU / PROC_MEM / THREAD_CPU records while a window is open. */
#ifndef NNP_SAMPLER_H
#define NNP_SAMPLER_H

typedef struct nnp_sampler nnp_sampler_t;

int nnp__sampler_start(int interval_ms, nnp_sampler_t **out);
/* Stops and joins the thread; NULL is a no-op. */
void nnp__sampler_stop(nnp_sampler_t *s);
/* A window has just opened: take the first sample now rather than up to one period later,
 * so every window, however short, holds the machine and process state at its start.
 * NULL is a no-op. */
void nnp__sampler_kick(nnp_sampler_t *s);
/* In a forked child: frees the child's copy of a sampler whose thread stayed in the parent
 * (never joins or locks). NULL is a no-op. */
void nnp__sampler_forget(nnp_sampler_t *s);

#endif /* NNP_SAMPLER_H */
