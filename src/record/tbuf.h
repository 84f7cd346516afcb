/* tbuf.h - per-thread single-producer/single-consumer ring buffers of record slots.
 * The owning thread is the only producer (hot path: no lock, no allocation, no syscall;
 * past half full, the slow path kicks the writer with an eventfd write every 1/16 buffer);
 * the writer thread is the only consumer. head and tail count slots since creation and
 * never wrap (2^64 slots); the ring index is count & mask. A record's slots are published
 * together by one release store of head, so the consumer never sees half a record.
 * Buffers live in a global registry for the life of the process (sessions come and go,
 * threads keep their buffer); a buffer whose thread exited is drained and then freed. */
#ifndef NNP_TBUF_H
#define NNP_TBUF_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "format/raw_format.h"
#include "record/ring_abi.h"
#include "util/util.h"

typedef struct nnp_tbuf {
    /* Producer-owned line. */
    _Alignas(NNP_CACHE_LINE) _Atomic uint64_t head;
    uint64_t limit;           /* head may grow to this without a look at tail (see reserve_slow) */
    bool wait_spent;          /* NNP_FULL_WAIT: a wait ran out; drop while tail is spent_tail */
    uint64_t spent_tail;      /* tail when that wait ran out */
    _Atomic uint64_t dropped; /* records lost to a full buffer (producer increments) */
    /* Consumer-owned line. */
    _Alignas(NNP_CACHE_LINE) _Atomic uint64_t tail;
    uint64_t dropped_reported;    /* writer: part of dropped already in a LOSS chunk */
    _Atomic bool thread_reported; /* THREADS entry written for this session */
    /* Set once at creation, read by both. */
    _Alignas(NNP_CACHE_LINE) nnp_rec_t *slots;
    uint64_t cap; /* slots, a power of two */
    uint64_t mask;
    uint64_t tid;            /* OS thread id (gettid) */
    _Atomic uint32_t name;   /* thread name string id, 0 = none */
    _Atomic bool orphaned;   /* owning thread exited: drain, then free */
    _Atomic bool sample_cpu; /* registered for per-thread CPU sampling */
    struct nnp_tbuf *next;   /* registry list, guarded by the registry lock */
} nnp_tbuf_t;

/* NNP_GATE_*, the bits of nnp__collecting: ring_abi.h. */

/* Recorder-wide settings a session writes when it is created, while threads of an earlier
 * session may still be creating buffers or meeting a full one: atomics, read relaxed on
 * those cold paths (a thread may see the old or the new value, never a torn one). */
typedef struct nnp_rec_config {
    _Atomic uint64_t buffer_slots; /* capacity of buffers created from now on */
    _Atomic int full_policy;       /* nnp_full_policy_t */
} nnp_rec_config_t;

extern nnp_rec_config_t nnp__rec_config;
/* NNP_GATE_* bits; 0 while no window is open: the one check of a disabled probe. */
extern _Atomic int nnp__collecting;
/* Records that could not get a buffer (allocation failed on a thread's first event). */
extern _Atomic uint64_t nnp__orphan_drops;

/* The calling thread's buffer; initial-exec TLS: one TLS load with no __tls_get_addr call
 * (LTTng). The pointer is tiny, so it fits the static TLS surplus glibc keeps for
 * dlopen'ed libraries (Python ctypes). */
extern __thread nnp_tbuf_t *nnp__tls_buf __attribute__((tls_model("initial-exec")));
/* Creates and registers the calling thread's buffer (its first event), or returns NULL
 * when it cannot (the event is then counted in nnp__orphan_drops). Out of line: cold. */
nnp_tbuf_t *nnp__tbuf_get_slow(void);
/* A name given by nnp_thread_register() before the thread had a buffer: applied when the
 * buffer is created on the thread's first recorded event. */
extern __thread uint32_t nnp__tls_pending_name __attribute__((tls_model("initial-exec")));
/* eventfd the writer polls, or -1: block-policy producers kick the writer through it. */
extern _Atomic int nnp__writer_wake_fd;

/* Returns the calling thread's buffer, creating it on first use; NULL when impossible. */
static inline nnp_tbuf_t *nnp__tbuf_get(void)
{
    nnp_tbuf_t *b = nnp__tls_buf;
    if (NNP_LIKELY(b != NULL))
        return b;
    return nnp__tbuf_get_slow();
}

/* Reserves n contiguous slots (n <= NNP_REC_MAX_SLOTS) in b; returns the first slot's
 * sequence number, or UINT64_MAX when the buffer is full under the drop policy. */
static inline uint64_t nnp__tbuf_reserve(nnp_tbuf_t *b, unsigned n);
uint64_t nnp__tbuf_reserve_slow(nnp_tbuf_t *b, unsigned n);

static inline nnp_rec_t *nnp__tbuf_slot(nnp_tbuf_t *b, uint64_t seq)
{
    return &b->slots[seq & b->mask];
}

static inline uint64_t nnp__tbuf_reserve(nnp_tbuf_t *b, unsigned n)
{
    uint64_t h = atomic_load_explicit(&b->head, memory_order_relaxed);
    if (NNP_LIKELY(h + n <= b->limit))
        return h;
    return nnp__tbuf_reserve_slow(b, n);
}

/* Publishes the n slots reserved at seq. */
static inline void nnp__tbuf_commit(nnp_tbuf_t *b, uint64_t seq, unsigned n)
{
    atomic_store_explicit(&b->head, seq + n, memory_order_release);
}

/* Calls fn for each live buffer under the registry lock (any thread but the writer). */
typedef void (*nnp_tbuf_visit_fn)(nnp_tbuf_t *b, void *user);
void nnp__tbuf_for_each(nnp_tbuf_visit_fn fn, void *user);
/* The writer's walk: takes the lock only to read the list head. Safe because buffers are
 * only ever pushed at the head and only the writer (nnp__tbuf_reap) unlinks them, so the
 * writer's slow I/O never blocks a thread creating its buffer. */
void nnp__tbuf_for_each_writer(nnp_tbuf_visit_fn fn, void *user);
/* Frees orphaned buffers that are empty. Called by the writer after a drain. */
void nnp__tbuf_reap(void);
/* Prepares every buffer for a new session's writer (no writer may be running): marks its
 * THREADS entry and loss counter as not yet reported and discards records still in it,
 * which a thread committed for an earlier session after that session's last drain. */
void nnp__tbuf_session_reset(void);

/* fork() support (core/fork.c): prepare takes the registry lock, parent releases it. In
 * the child, where only the forking thread exists, child() keeps that thread's buffer
 * (emptied: what it held is the parent's to write) and frees every other. */
void nnp__tbuf_fork_prepare(void);
void nnp__tbuf_fork_parent(void);
void nnp__tbuf_fork_child(void);

#endif /* NNP_TBUF_H */
