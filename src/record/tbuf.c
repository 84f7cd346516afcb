/* tbuf.c - creation, registry and slow paths of the per-thread buffers (tbuf.h).
 * The fast path (reserve/commit) is inline in the header. Creation happens on a thread's
 * first event: the only allocation a recording call ever makes. */
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "record/tbuf.h"

/* Default 4 MiB per thread = 128 Ki slots (options.c DEFAULT_BUFFER_SIZE_KB): at a 10 ms
 * writer period a thread may record ~13 M events/s before the drop policy applies. The
 * session sets the real value before any window opens. */
#define DEFAULT_BUFFER_SLOTS 131072u
/* A producer kicks the writer when its buffer passes 1/TBUF_KICK_PARTS full: half, so the
 * writer has the other half's time to wake and drain before anything is dropped. */
#define TBUF_KICK_PARTS 2u
/* ... and again every 1/TBUF_KICK_STEPS of the buffer while it stays past half. */
#define TBUF_KICK_STEPS 16u
/* NNP_FULL_WAIT: the longest a thread waits for room in its full buffer before dropping.
 * Not the writer's period: a writer that is alive but off the CPU (a 2-vCPU VM delays it by
 * 10-25 ms now and then; a fork() holds the registry lock while the page tables are copied;
 * the kernel throttles writes of dirty pages up to 200 ms) must not lose events. Only a
 * writer stalled this long counts as stuck, and that costs each thread one such wait. */
#define FULL_WAIT_NS 1000000000u
/* A waiting thread yields (and kicks the writer) for this long, then sleeps in naps: it must
 * not take the CPU from the writer it waits for on a machine with one CPU to spare. */
#define FULL_SPIN_NS 1000000u
#define FULL_NAP_NS  50000u

/* Read by every recording call: the flag and the config sit on their own cache line, away
 * from the registry lock and counters the writer writes every period (STYLE 7.8). */
_Alignas(NNP_CACHE_LINE) _Atomic int nnp__collecting;
/* Until a session sets its own. */
nnp_rec_config_t nnp__rec_config = {DEFAULT_BUFFER_SLOTS, NNP_FULL_DROP};
_Alignas(NNP_CACHE_LINE) _Atomic uint64_t nnp__orphan_drops;
_Atomic int nnp__writer_wake_fd = -1;

__thread nnp_tbuf_t *nnp__tls_buf __attribute__((tls_model("initial-exec")));
__thread uint32_t nnp__tls_pending_name __attribute__((tls_model("initial-exec")));
/* Recursion guard: creation allocates; an allocator hook that records must not recurse. */
static __thread bool tls_creating __attribute__((tls_model("initial-exec")));

static _Alignas(NNP_CACHE_LINE) pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static nnp_tbuf_t *registry;
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void on_thread_exit(void *p)
{
    nnp_tbuf_t *b = p;
    atomic_store_explicit(&b->orphaned, true, memory_order_release);
}

static void key_init(void)
{
    pthread_key_create(&exit_key, on_thread_exit);
}

static uint64_t round_pow2(uint64_t v)
{
    uint64_t p = 1;
    while (p < v)
        p <<= 1;
    return p;
}

/* Allocates and registers the calling thread's buffer. The registry lock is held from the
 * allocation on: a fork() from another thread (whose prepare handler takes this lock) then
 * finds the buffer either not allocated or in the registry, never in between, where the
 * child could neither use nor free it. A thread's first event only: cold. */
static nnp_tbuf_t *tbuf_create(void)
{
    nnp_tbuf_t *b;
    uint64_t cap =
        round_pow2(atomic_load_explicit(&nnp__rec_config.buffer_slots, memory_order_relaxed));

    pthread_once(&key_once, key_init);
    pthread_mutex_lock(&registry_lock);
    b = nnp__aligned_alloc(NNP_CACHE_LINE, sizeof(*b));
    if (!b)
        goto out;
    memset(b, 0, sizeof(*b));
    b->slots = nnp__malloc(cap * sizeof(nnp_rec_t));
    if (!b->slots) {
        nnp__free(b);
        b = NULL;
        goto out;
    }
    b->cap = cap;
    b->mask = cap - 1;
    b->limit = cap / TBUF_KICK_PARTS;
    b->tid = (uint64_t)syscall(SYS_gettid);
    if (nnp__tls_pending_name) {
        atomic_store(&b->name, nnp__tls_pending_name);
        atomic_store(&b->sample_cpu, true);
    }
    pthread_setspecific(exit_key, b);
    b->next = registry;
    registry = b;
out:
    pthread_mutex_unlock(&registry_lock);
    return b;
}

nnp_tbuf_t *nnp__tbuf_get_slow(void)
{
    nnp_tbuf_t *b;
    if (tls_creating)
        return NULL;
    tls_creating = true;
    b = tbuf_create();
    tls_creating = false;
    if (!b) {
        atomic_fetch_add_explicit(&nnp__orphan_drops, 1, memory_order_relaxed);
        return NULL;
    }
    nnp__tls_buf = b;
    return b;
}

/* Wakes the writer (its eventfd), when one runs: one syscall, never blocking. */
static void kick_writer(void)
{
    int fd = atomic_load_explicit(&nnp__writer_wake_fd, memory_order_relaxed);
    uint64_t one = 1;
    if (fd >= 0)
        (void)!write(fd, &one, sizeof(one));
}

/* What a thread whose buffer is full does under policy: NNP_FULL_DROP drops at once;
 * NNP_FULL_WAIT waits for room up to FULL_WAIT_NS (deadline 0: not started yet), and once a
 * wait has run out (the writer made no progress in that time: stalled) drops
 * (b->wait_spent) until the writer has moved tail again; NNP_FULL_BLOCK waits for as long
 * as the window is open. tail: the one just read. Returns true to drop. */
static bool full_drops(nnp_tbuf_t *b, int policy, uint64_t tail, uint64_t *deadline)
{
    uint64_t now;
    if (!atomic_load_explicit(&nnp__collecting, memory_order_relaxed) || policy == NNP_FULL_DROP)
        return true;
    if (policy != NNP_FULL_WAIT)
        return false;
    if (b->wait_spent && tail == b->spent_tail)
        return true;
    b->wait_spent = false;
    now = nnp__mono_ns();
    if (*deadline == 0) {
        *deadline = now + FULL_WAIT_NS;
    } else if (now >= *deadline) {
        b->wait_spent = true;
        b->spent_tail = tail;
    }
    return b->wait_spent;
}

/* One pass of a thread waiting for room: kick the writer and yield to it for the first
 * FULL_SPIN_NS, then nap (a kick each nap: cheap next to it). `since`: when the wait began
 * (0: this is its first pass). */
static void full_wait_pass(uint64_t *since)
{
    uint64_t now = nnp__mono_ns();
    kick_writer();
    if (*since == 0)
        *since = now;
    if (now - *since < FULL_SPIN_NS) {
        sched_yield();
    } else {
        struct timespec nap = {0, FULL_NAP_NS};
        nanosleep(&nap, NULL);
    }
}

/* The producer reserves freely up to b->limit. Below half full the limit is the half mark;
 * past it the producer comes back here every cap/TBUF_KICK_STEPS slots and kicks the
 * writer each time (a fast thread would otherwise fill its buffer while the writer sleeps
 * out its period): a few syscalls per buffer, only for a thread the writer is not keeping
 * below half. Every limit is at most the tail read here plus cap, and tail only grows: a
 * stale limit only sends the producer here early. */
/* The layout ring_abi.h gives back ends that write their records inline. */
_Static_assert(offsetof(nnp_tbuf_t, head) == NNP_RING_OFF_HEAD, "ring_abi.h: head");
_Static_assert(offsetof(nnp_tbuf_t, limit) == NNP_RING_OFF_LIMIT, "ring_abi.h: limit");
_Static_assert(offsetof(nnp_tbuf_t, slots) == NNP_RING_OFF_SLOTS, "ring_abi.h: slots");
_Static_assert(offsetof(nnp_tbuf_t, mask) == NNP_RING_OFF_MASK, "ring_abi.h: mask");
_Static_assert(sizeof(_Atomic uint64_t) == sizeof(uint64_t) && sizeof(_Atomic int) == sizeof(int),
               "ring_abi.h: atomics are plain words");

struct nnp_tbuf *nnp__ring_thread(void)
{
    return nnp__tbuf_get();
}

const int *nnp__ring_gate(void)
{
    return (const int *)&nnp__collecting;
}

bool nnp__ring_ticks_are_tsc(void)
{
    nnp__clock_init();
    return NNP_HAVE_RDTSC && nnp__clock_use_tsc;
}

uint64_t nnp__ring_reserve_slow(struct nnp_tbuf *b, unsigned n)
{
    if (!b || n == 0 || n > NNP_REC_MAX_SLOTS)
        return UINT64_MAX;
    return nnp__tbuf_reserve(b, n);
}

uint64_t nnp__tbuf_reserve_slow(nnp_tbuf_t *b, unsigned n)
{
    uint64_t h = atomic_load_explicit(&b->head, memory_order_relaxed);
    uint64_t deadline = 0, since = 0;
    for (;;) {
        uint64_t tail = atomic_load_explicit(&b->tail, memory_order_acquire);
        uint64_t step = h + b->cap / TBUF_KICK_STEPS;
        if (h + n <= tail + b->cap / TBUF_KICK_PARTS) {
            b->limit = tail + b->cap / TBUF_KICK_PARTS;
            return h;
        }
        if (h + n <= tail + b->cap) {
            if (deadline == 0)
                kick_writer();
            b->limit = step < tail + b->cap && step >= h + n ? step : tail + b->cap;
            return h;
        }
        if (full_drops(b, atomic_load_explicit(&nnp__rec_config.full_policy, memory_order_relaxed),
                       tail, &deadline)) {
            /* Single producer: a plain load+store is enough, the writer only reads. */
            uint64_t d = atomic_load_explicit(&b->dropped, memory_order_relaxed);
            atomic_store_explicit(&b->dropped, d + 1, memory_order_relaxed);
            if (d % (b->cap / TBUF_KICK_STEPS) == 0)
                kick_writer();
            return UINT64_MAX;
        }
        /* Waiting: syscalls, but only a thread that outran the writer gets here; without the
         * kick the writer could sleep out its period. */
        full_wait_pass(&since);
    }
}

void nnp__tbuf_for_each(nnp_tbuf_visit_fn fn, void *user)
{
    pthread_mutex_lock(&registry_lock);
    for (nnp_tbuf_t *b = registry; b; b = b->next)
        fn(b, user);
    pthread_mutex_unlock(&registry_lock);
}

void nnp__tbuf_for_each_writer(nnp_tbuf_visit_fn fn, void *user)
{
    nnp_tbuf_t *b;
    pthread_mutex_lock(&registry_lock);
    b = registry;
    pthread_mutex_unlock(&registry_lock);
    for (; b; b = b->next)
        fn(b, user);
}

void nnp__tbuf_reap(void)
{
    pthread_mutex_lock(&registry_lock);
    for (nnp_tbuf_t **pp = &registry; *pp;) {
        nnp_tbuf_t *b = *pp;
        bool empty = atomic_load_explicit(&b->head, memory_order_acquire) ==
                     atomic_load_explicit(&b->tail, memory_order_relaxed);
        bool lost_reported =
            atomic_load_explicit(&b->dropped, memory_order_relaxed) == b->dropped_reported;
        if (atomic_load_explicit(&b->orphaned, memory_order_acquire) && empty && lost_reported) {
            *pp = b->next;
            nnp__free(b->slots);
            nnp__free(b);
            continue;
        }
        pp = &b->next;
    }
    pthread_mutex_unlock(&registry_lock);
}

void nnp__tbuf_fork_prepare(void)
{
    pthread_mutex_lock(&registry_lock);
}

void nnp__tbuf_fork_parent(void)
{
    pthread_mutex_unlock(&registry_lock);
}

void nnp__tbuf_fork_child(void)
{
    nnp_tbuf_t *mine = nnp__tls_buf;
    /* Locked by this very thread in the prepare handler (it is the child's only one). */
    pthread_mutex_unlock(&registry_lock);
    for (nnp_tbuf_t **pp = &registry; *pp;) {
        nnp_tbuf_t *b = *pp;
        if (b != mine) {
            /* Its thread stayed in the parent. */
            *pp = b->next;
            nnp__free(b->slots);
            nnp__free(b);
            continue;
        }
        b->tid = (uint64_t)syscall(SYS_gettid);
        atomic_store(&b->tail, atomic_load(&b->head));
        atomic_store(&b->dropped, 0);
        b->dropped_reported = 0;
        atomic_store(&b->thread_reported, false);
        atomic_store(&b->orphaned, false);
        pp = &b->next;
    }
    atomic_store(&nnp__orphan_drops, 0);
}

void nnp__tbuf_session_reset(void)
{
    pthread_mutex_lock(&registry_lock);
    for (nnp_tbuf_t *b = registry; b; b = b->next) {
        atomic_store(&b->thread_reported, false);
        b->dropped_reported = atomic_load_explicit(&b->dropped, memory_order_relaxed);
        /* The writer is the consumer, and none runs now: moving tail is ours to do. */
        atomic_store_explicit(&b->tail, atomic_load_explicit(&b->head, memory_order_acquire),
                              memory_order_release);
    }
    pthread_mutex_unlock(&registry_lock);
}
