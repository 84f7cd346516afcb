/* mpi_internal.h - shared parts of libnnprof_mpi.so, the PMPI interposition library: the
 * MPI_* wrappers (mpi_coll.c, mpi_p2p.c) record each call as a communication op through the
 * public API of libnnprof; mpi_comm.c names communicators and datatypes, mpi_requests.c
 * tracks non-blocking calls until their completion, mpi_clock.c aligns the ranks' clocks,
 * mpi_collector.c ties them to MPI_Init/MPI_Finalize and the collection windows.
 * Only PMPI_* calls are made from here, so nothing the library does is recorded. */
#ifndef NNP_MPI_INTERNAL_H
#define NNP_MPI_INTERNAL_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "nnprof/nnprof.h"

#define NNP_MPI_LIKELY(x)   __builtin_expect(!!(x), 1)
#define NNP_MPI_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Every intercepted call: its id and the op name recorded (X-macro, so the enum and the
 * name table cannot drift apart). */
#define NNP_MPI_OP_MAP(XX)                                                                         \
    XX(SEND, "MPI_Send")                                                                           \
    XX(SSEND, "MPI_Ssend")                                                                         \
    XX(BSEND, "MPI_Bsend")                                                                         \
    XX(RSEND, "MPI_Rsend")                                                                         \
    XX(RECV, "MPI_Recv")                                                                           \
    XX(SENDRECV, "MPI_Sendrecv")                                                                   \
    XX(SENDRECV_REPLACE, "MPI_Sendrecv_replace")                                                   \
    XX(ISEND, "MPI_Isend")                                                                         \
    XX(ISSEND, "MPI_Issend")                                                                       \
    XX(IBSEND, "MPI_Ibsend")                                                                       \
    XX(IRSEND, "MPI_Irsend")                                                                       \
    XX(IRECV, "MPI_Irecv")                                                                         \
    XX(ALLREDUCE, "MPI_Allreduce")                                                                 \
    XX(REDUCE, "MPI_Reduce")                                                                       \
    XX(BCAST, "MPI_Bcast")                                                                         \
    XX(ALLGATHER, "MPI_Allgather")                                                                 \
    XX(ALLGATHERV, "MPI_Allgatherv")                                                               \
    XX(ALLTOALL, "MPI_Alltoall")                                                                   \
    XX(ALLTOALLV, "MPI_Alltoallv")                                                                 \
    XX(REDUCE_SCATTER, "MPI_Reduce_scatter")                                                       \
    XX(REDUCE_SCATTER_BLOCK, "MPI_Reduce_scatter_block")                                           \
    XX(GATHER, "MPI_Gather")                                                                       \
    XX(GATHERV, "MPI_Gatherv")                                                                     \
    XX(SCATTER, "MPI_Scatter")                                                                     \
    XX(SCATTERV, "MPI_Scatterv")                                                                   \
    XX(BARRIER, "MPI_Barrier")                                                                     \
    XX(IALLREDUCE, "MPI_Iallreduce")                                                               \
    XX(IREDUCE, "MPI_Ireduce")                                                                     \
    XX(IBCAST, "MPI_Ibcast")                                                                       \
    XX(IALLGATHER, "MPI_Iallgather")                                                               \
    XX(IALLGATHERV, "MPI_Iallgatherv")                                                             \
    XX(IALLTOALL, "MPI_Ialltoall")                                                                 \
    XX(IALLTOALLV, "MPI_Ialltoallv")                                                               \
    XX(IREDUCE_SCATTER, "MPI_Ireduce_scatter")                                                     \
    XX(IREDUCE_SCATTER_BLOCK, "MPI_Ireduce_scatter_block")                                         \
    XX(IGATHER, "MPI_Igather")                                                                     \
    XX(IGATHERV, "MPI_Igatherv")                                                                   \
    XX(ISCATTER, "MPI_Iscatter")                                                                   \
    XX(ISCATTERV, "MPI_Iscatterv")                                                                 \
    XX(IBARRIER, "MPI_Ibarrier")

typedef enum nnp_mpi_op {
#define NNP_MPI_OP_ENUM_(id, text) NNP_MPI_OP_##id,
    NNP_MPI_OP_MAP(NNP_MPI_OP_ENUM_)
#undef NNP_MPI_OP_ENUM_
        NNP_MPI_OP_COUNT
} nnp_mpi_op_t;

/* ---- state (mpi_collector.c) ---- */

/* Interned op names, filled at MPI_Init (before any wrapper records). */
extern nnp_str_t nnp__mpi_names[NNP_MPI_OP_COUNT];
/* Bumped at every window start: a communicator is described (nnp_comm_group) once per
 * window, when its first op of the window is recorded. */
extern atomic_uint nnp__mpi_window_gen;
/* True between our MPI_Init wrapper and MPI_Finalize. */
extern atomic_bool nnp__mpi_ready;
/* Nesting depth of wrappers on this thread (STYLE 7.7): calls MPI makes from inside a
 * wrapped call are not recorded. */
extern __thread unsigned nnp__mpi_depth __attribute__((tls_model("initial-exec")));

/* Whether this call is to be recorded: a window is open, MPI is initialised through us, and
 * this is not a call nested in another wrapper. */
static inline bool nnp__mpi_active(void)
{
    return NNP_MPI_UNLIKELY(nnp_is_collecting()) && nnp__mpi_depth == 0 &&
           atomic_load_explicit(&nnp__mpi_ready, memory_order_relaxed);
}

/* ---- communicators and datatypes (mpi_comm.c) ---- */

typedef struct nnp_mpi_comm {
    nnp_str_t group;      /* "MPI_COMM_WORLD", "MPI_COMM_SELF" or "mpi_comm_<n>_<hash>" */
    int size;             /* members (of the remote group for an intercommunicator's peers) */
    int my_index;         /* this process's rank in the communicator */
    int32_t *world_ranks; /* MPI_COMM_WORLD rank of each peer rank; NULL: identity (world) */
    int32_t *members;     /* MPI_COMM_WORLD ranks of the (local) group, in order */
    int n_members;
    bool is_inter;
    atomic_uint described_gen; /* window generation the group was last described in */
} nnp_mpi_comm_t;

/* Creates the keyvals and the world/self entries (after PMPI_Init). Returns MPI_SUCCESS or
 * an MPI error code. */
int nnp__mpi_comm_init(void);
void nnp__mpi_comm_fini(void);
/* The cached description of comm (created on first use), or NULL when MPI refuses. */
nnp_mpi_comm_t *nnp__mpi_comm(MPI_Comm comm);
/* Global (MPI_COMM_WORLD) rank of peer rank `local` of comm; -1 for MPI_PROC_NULL,
 * MPI_ANY_SOURCE, MPI_ROOT and out-of-range ranks. */
int32_t nnp__mpi_global(const nnp_mpi_comm_t *c, int local);
/* Describes c's group in the current window if not done yet. */
void nnp__mpi_describe(nnp_mpi_comm_t *c);
/* The name (interned) and size in bytes of a datatype; 0 and 0 when MPI refuses. */
void nnp__mpi_type(MPI_Datatype dt, nnp_str_t *name, int *size_bytes);

/* ---- recording helpers (mpi_p2p.c) ---- */

/* What one op moved; the wrappers fill it and nnp__mpi_record() sends it to libnnprof. */
typedef struct nnp_mpi_rec {
    nnp_mpi_op_t op;
    nnp_comm_kind_t kind;
    MPI_Comm comm;
    MPI_Datatype type; /* the type `count` counts (MPI_DATATYPE_NULL: none) */
    uint64_t count;
    int peer; /* rank in comm (root of rooted collectives), or -1 */
    int tag;
    bool has_tag;
} nnp_mpi_rec_t;

/* Records r as one op from start_ticks (nnp_now()) until now. */
void nnp__mpi_record_since(const nnp_mpi_rec_t *r, uint64_t start_ticks);
/* Records r from start_ns to end_ns (CLOCK_MONOTONIC), with the wait part when
 * has_wait. */
void nnp__mpi_record_at(const nnp_mpi_rec_t *r, uint64_t start_ns, uint64_t end_ns, bool has_wait,
                        uint64_t wait_ns);
/* Starts tracking a non-blocking call that returned rc and *req (nothing when rc failed). */
void nnp__mpi_started(int rc, const MPI_Request *req, const nnp_mpi_rec_t *r, uint64_t start_ns);
/* Sum of counts[0..n) (0 for NULL or n <= 0). */
uint64_t nnp__mpi_sum(const int *counts, int n);
/* Number of peers a collective on comm exchanges blocks with (remote size of an
 * intercommunicator), at least 1. */
int nnp__mpi_peers(MPI_Comm comm);
/* Whether this process is the root of a rooted collective on comm. */
bool nnp__mpi_is_root(MPI_Comm comm, int root);

/* ---- pending non-blocking calls (mpi_requests.c) ---- */

/* Creates the table (at MPI_Init). Returns false when out of memory (nothing pending is
 * tracked then, and that is said once). */
bool nnp__mpi_requests_init(void);
void nnp__mpi_requests_fini(void);
/* Remembers r (started at start_ns) until *req completes. */
void nnp__mpi_pending_add(MPI_Request req, const nnp_mpi_rec_t *r, uint64_t start_ns);
/* Slot of a tracked request, or -1. */
int nnp__mpi_pending_find(MPI_Request req);
/* Records the op of slot (completed at end_ns after wait_ns in the completion call; status
 * may be NULL) and frees the slot. */
void nnp__mpi_pending_done(int slot, const MPI_Status *status, uint64_t end_ns, uint64_t wait_ns);
/* Frees the slot without recording (MPI_Request_free, a failed completion). */
void nnp__mpi_pending_drop(int slot);
/* Requests tracked now (completion wrappers look nothing up while it is 0). */
extern atomic_uint nnp__mpi_pending_live;
/* Requests not tracked because the table was full. */
uint64_t nnp__mpi_pending_overflows(void);

/* ---- clock alignment (mpi_clock.c) ---- */

/* Ping-pong of every rank with rank 0 over a private duplicate of MPI_COMM_WORLD; at_end
 * is the second measurement (MPI_Finalize) that gives the drift. Collective: every rank
 * that loaded this library calls it. Reports through nnp_clock_sync_set(). */
void nnp__mpi_clock_sync(bool at_end);

#endif /* NNP_MPI_INTERNAL_H */
