/* mpi_requests.c - non-blocking calls between their start (MPI_Isend, MPI_Iallreduce, ...)
 * and their completion (MPI_Wait*, MPI_Test*): a fixed table, allocated once at MPI_Init,
 * keyed by the MPI_Request handle. Lock-free: a slot is claimed with a compare-and-swap of
 * its key (EMPTY or FREED -> BUSY), filled, then published with a release store of the
 * handle; completion reads it and releases the slot (FREED). A full table drops the op and
 * counts it (STYLE 7.6), it never blocks or allocates. Open addressing with linear probing
 * over at most MAX_PROBE slots. */
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

/* Requests pending at once that are tracked: far more than real programs keep in flight
 * (a halo exchange has tens, a pipeline hundreds); 16384 slots of 64 bytes = 1 MiB of
 * address space, touched only where used. */
#define TABLE_SLOTS 16384u
/* Probing stops here: a lookup costs at most this many cache lines. */
#define MAX_PROBE 64u
/* Key values that are never MPI_Request handles (Open MPI's are pointers). */
#define KEY_EMPTY ((uintptr_t)0)
#define KEY_BUSY  ((uintptr_t)1)
#define KEY_FREED ((uintptr_t)2)
/* Fibonacci hashing (Knuth, TAOCP 6.4): spreads aligned pointers over the table. */
#define HASH_MULT 0x9E3779B97F4A7C15ull

typedef struct pending {
    _Atomic uintptr_t key;
    uint64_t start_ns;
    nnp_mpi_rec_t rec;
} __attribute__((aligned(64))) pending_t;

static pending_t *g_table;
static atomic_ullong g_overflows;
/* Requests tracked now: completion wrappers skip every lookup while it is zero. */
atomic_uint nnp__mpi_pending_live;

bool nnp__mpi_requests_init(void)
{
    if (!g_table)
        g_table = calloc(TABLE_SLOTS, sizeof(pending_t));
    return g_table != NULL;
}

void nnp__mpi_requests_fini(void)
{
    /* Kept: a thread may still be in a completion call racing MPI_Finalize's caller, and a
     * megabyte of mostly untouched pages is not worth that risk. */
}

static inline unsigned home(uintptr_t key)
{
    return (unsigned)(((uint64_t)key * HASH_MULT) >> 32) % TABLE_SLOTS;
}

void nnp__mpi_pending_add(MPI_Request req, const nnp_mpi_rec_t *r, uint64_t start_ns)
{
    uintptr_t key = (uintptr_t)req;
    unsigned h;
    if (!g_table || req == MPI_REQUEST_NULL || key <= KEY_FREED)
        return;
    h = home(key);
    for (unsigned i = 0; i < MAX_PROBE; i++) {
        pending_t *p = &g_table[(h + i) % TABLE_SLOTS];
        uintptr_t k = atomic_load_explicit(&p->key, memory_order_relaxed);
        if ((k == KEY_EMPTY || k == KEY_FREED) &&
            atomic_compare_exchange_strong_explicit(&p->key, &k, KEY_BUSY, memory_order_acquire,
                                                    memory_order_relaxed)) {
            p->start_ns = start_ns;
            p->rec = *r;
            atomic_fetch_add_explicit(&nnp__mpi_pending_live, 1, memory_order_relaxed);
            atomic_store_explicit(&p->key, key, memory_order_release);
            return;
        }
    }
    atomic_fetch_add_explicit(&g_overflows, 1, memory_order_relaxed);
}

int nnp__mpi_pending_find(MPI_Request req)
{
    uintptr_t key = (uintptr_t)req;
    unsigned h;
    if (!g_table || req == MPI_REQUEST_NULL || key <= KEY_FREED)
        return -1;
    h = home(key);
    for (unsigned i = 0; i < MAX_PROBE; i++) {
        unsigned slot = (h + i) % TABLE_SLOTS;
        uintptr_t k = atomic_load_explicit(&g_table[slot].key, memory_order_acquire);
        if (k == key)
            return (int)slot;
        if (k == KEY_EMPTY)
            return -1;
    }
    return -1;
}

void nnp__mpi_pending_drop(int slot)
{
    if (!g_table || slot < 0)
        return;
    atomic_store_explicit(&g_table[slot].key, KEY_FREED, memory_order_release);
    atomic_fetch_sub_explicit(&nnp__mpi_pending_live, 1, memory_order_relaxed);
}

void nnp__mpi_pending_done(int slot, const MPI_Status *status, uint64_t end_ns, uint64_t wait_ns)
{
    pending_t *p;
    nnp_mpi_rec_t r;
    uint64_t start;
    if (!g_table || slot < 0)
        return;
    p = &g_table[slot];
    r = p->rec;
    start = p->start_ns;
    nnp__mpi_pending_drop(slot);
    /* A receive learns its source, tag and size only now. */
    if (status && r.kind == NNP_COMM_RECV) {
        int bytes = 0, size = 0;
        nnp_str_t name;
        r.peer = status->MPI_SOURCE;
        r.tag = status->MPI_TAG;
        nnp__mpi_type(r.type, &name, &size);
        if (size > 0 && PMPI_Get_count(status, MPI_BYTE, &bytes) == MPI_SUCCESS &&
            bytes != MPI_UNDEFINED)
            r.count = (uint64_t)bytes / (uint64_t)size;
    }
    if (wait_ns > end_ns - start)
        wait_ns = end_ns - start;
    nnp__mpi_record_at(&r, start, end_ns, true, wait_ns);
}

uint64_t nnp__mpi_pending_overflows(void)
{
    return atomic_load_explicit(&g_overflows, memory_order_relaxed);
}
