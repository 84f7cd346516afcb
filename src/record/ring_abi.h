/* ring_abi.h - the calling thread's ring as a back end in another shared object writes it
 * inline: the PyTorch shim records every op of a training step (and, with profile_memory,
 * every allocation and free) this way, where a call into libnnprof per op cost about as much
 * as the record itself (bench_torch_ir). C and C++.
 * It gives the gate bits every recording call tests, the producer's fields of nnp_tbuf_t
 * by offset (tbuf.c checks them against the struct), and the three functions libnnprof
 * exports for it. The protocol is tbuf.h's: read head (relaxed); if head + n > limit, take
 * nnp__ring_reserve_slow(); fill the n slots at (seq & mask) with raw_format.h's records;
 * publish them with one release store of head = seq + n. Only the owning thread writes. */
#ifndef NNP_RING_ABI_H
#define NNP_RING_ABI_H

#include <stdbool.h>
#include <stdint.h>

#include "nnprof/nnprof.h"

/* What the options let through, as bits of nnp__collecting (seed 000: each option gates one
 * kind of data). The session publishes NNP_GATE_ON plus its gates with one store when a
 * window opens and clears the word when it closes, so a recording call tests "collecting
 * and this kind wanted" with one relaxed load, and a later session's gates can never be
 * read half-written by a thread still recording for an earlier one. */
#define NNP_GATE_ON          (1 << 0) /* a window is open */
#define NNP_GATE_MSPROFTX    (1 << 1) /* user markers (msproftx) */
#define NNP_GATE_OPS         (1 << 2) /* ops and kernels (op_time) */
#define NNP_GATE_MEMORY      (1 << 3) /* tensor memory (profile_memory) */
#define NNP_GATE_COMM        (1 << 4) /* communication ops (profile_communication) */
#define NNP_GATE_PIPELINE    (1 << 5) /* pipeline ops and queues (data_process) */
#define NNP_GATE_HOST_RANGES (1 << 6) /* host ranges and instants (profile_framework all|time) */
#define NNP_GATE_HOST_MEMORY (1 << 7) /* host memory samples (profile_framework all|memory) */

/* Byte offsets of the producer's fields in a ring (struct nnp_tbuf). */
#define NNP_RING_OFF_HEAD  0   /* uint64_t, atomic: slots reserved so far, never wraps */
#define NNP_RING_OFF_LIMIT 8   /* uint64_t: head may grow to this without the slow path */
#define NNP_RING_OFF_SLOTS 128 /* nnp_rec_t *: cap slots, cap a power of two */
#define NNP_RING_OFF_MASK  144 /* uint64_t: cap - 1 */

#ifdef __cplusplus
extern "C" {
#endif

struct nnp_tbuf;

/* The calling thread's ring, created on its first use (the thread's first event); NULL
 * when it cannot be (out of memory: record through the public calls then, which count the
 * loss). Valid for as long as the thread lives. Not on the hot path: once per thread. */
NNP_API struct nnp_tbuf *nnp__ring_thread(void);

/* The word of NNP_GATE_* bits (nnp__collecting), to be read with a relaxed atomic load.
 * Its address never changes: a back end reads it once. */
NNP_API const int *nnp__ring_gate(void);

/* The slow path of a reservation of n slots (1..NNP_REC_MAX_SLOTS) of the calling thread's
 * ring b: kicks the writer, waits or drops by the full policy. Returns the first slot's
 * sequence number, or UINT64_MAX when the record is dropped (counted). */
NNP_API uint64_t nnp__ring_reserve_slow(struct nnp_tbuf *b, unsigned n);

/* Whether the recorder's ticks (nnp_now()) are the CPU's time-stamp counter, read with
 * rdtsc (an invariant TSC), else CLOCK_MONOTONIC ns. Decided once, when the first session
 * is created (before any window): a back end asks when its window opens and then reads
 * the counter inline. */
NNP_API bool nnp__ring_ticks_are_tsc(void);

/* Whether a device back end has installed correlation hooks (nnp_collector_set_correlation:
 * the CUDA one does), so that ops should push their correlation ids for the device work they
 * launch. A back end asks when its window opens, and again when told by its watcher. */
NNP_API bool nnp__correlation_active(void);

/* Registers the one function told when correlation hooks appear or go (the torch shim: a
 * window that opened before the program's first CUDA call, which loads the CUDA back end,
 * must switch its ops to the path that gives them ids). It runs on the thread that called
 * nnp_collector_set_correlation, after the change, with no lock of libnnprof held; it must
 * not call nnp_collector_set_correlation. NULL removes it. */
NNP_API void nnp__correlation_watch(void (*changed)(void));

#ifdef __cplusplus
}
#endif

#endif /* NNP_RING_ABI_H */
