/* nccl_wrap.c - NCCL collectives seen from the host, for the sizes CUPTI cannot give: an
 * NCCL kernel's activity record names the collective but not its bytes. When
 * libnnprof_cuda.so is preloaded (LD_PRELOAD) these definitions interpose NCCL's; each
 * notes the call (kind, count x element size, peer, communicator) in a lock-free ring under
 * a fresh id, pushes that id to CUPTI as an external correlation (CUSTOM1) around the real
 * call, so the kernel it launches carries the id and translate.c finds the size. Calls
 * inside ncclGroupStart/End are summed and noted at the outermost ncclGroupEnd, where NCCL
 * launches the group's kernel. A program that links NCCL statically (PyTorch wheels) is
 * not interposed: its NCCL kernels are still communication, without sizes.
 *
 * NCCL's declarations are repeated here (its ABI is stable C) so no nccl.h is needed. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>

#include "collect/cuda/nccl_wrap.h"
#include "nnprof/nnprof.h"

#define NNP_EXPORT __attribute__((visibility("default")))

typedef int nccl_result_t;
typedef struct nccl_comm *nccl_comm_t;
typedef struct cuda_stream *cuda_stream_t;
/* ncclInternalError: returned when the real NCCL cannot be found. */
#define NCCL_INTERNAL_ERROR 3
/* Calls remembered: far more than are in flight between a call and its kernel's record. */
#define RING_SLOTS 16384u

typedef struct ring_slot {
    _Atomic uint64_t id; /* 0 while being written */
    _Atomic uint32_t kind;
    _Atomic int32_t peer;
    _Atomic uint64_t bytes, comm;
} ring_slot_t;

static ring_slot_t g_ring[RING_SLOTS];
static _Atomic uint64_t g_next_id = 1;
static _Atomic(const nnp_cu_ext_fns_t *) g_ext;

/* The calls of an open group, per thread (NCCL groups are per thread). */
static __thread int tls_depth;
static __thread nnp_cu_nccl_call_t tls_group;
static __thread bool tls_group_used;

void nnp__cu_nccl_set_ext(const nnp_cu_ext_fns_t *fns)
{
    atomic_store_explicit(&g_ext, fns, memory_order_release);
}

uint64_t nnp__cu_nccl_note(const nnp_cu_nccl_call_t *call)
{
    uint64_t id = atomic_fetch_add_explicit(&g_next_id, 1, memory_order_relaxed);
    ring_slot_t *s = &g_ring[id % RING_SLOTS];
    /* id 0 first so a reader never pairs the new fields with the old id. */
    atomic_store_explicit(&s->id, 0, memory_order_release);
    atomic_store_explicit(&s->kind, call->comm_kind, memory_order_relaxed);
    atomic_store_explicit(&s->peer, call->peer, memory_order_relaxed);
    atomic_store_explicit(&s->bytes, call->bytes, memory_order_relaxed);
    atomic_store_explicit(&s->comm, call->comm, memory_order_relaxed);
    atomic_store_explicit(&s->id, id, memory_order_release);
    return id;
}

bool nnp__cu_nccl_lookup(uint64_t id, nnp_cu_nccl_call_t *out)
{
    ring_slot_t *s = &g_ring[id % RING_SLOTS];
    if (id == 0 || atomic_load_explicit(&s->id, memory_order_acquire) != id)
        return false;
    out->comm_kind = atomic_load_explicit(&s->kind, memory_order_relaxed);
    out->peer = atomic_load_explicit(&s->peer, memory_order_relaxed);
    out->bytes = atomic_load_explicit(&s->bytes, memory_order_relaxed);
    out->comm = atomic_load_explicit(&s->comm, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&s->id, memory_order_relaxed) == id;
}

unsigned nnp__cu_nccl_type_size(int datatype)
{
    /* ncclInt8, Uint8, Int32, Uint32, Int64, Uint64, Float16, Float32, Float64, Bfloat16,
     * then NCCL 2.19+'s Float8e4m3, Float8e5m2. */
    static const unsigned sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
    return datatype >= 0 && (size_t)datatype < sizeof(sizes) / sizeof(sizes[0]) ? sizes[datatype]
                                                                                : 0;
}

/* Resolves NCCL's own function once; dlsym locks only on that first call. */
#define REAL(var, name)                                                                            \
    do {                                                                                           \
        if (!atomic_load_explicit(&var, memory_order_acquire))                                     \
            atomic_store_explicit(&var, dlsym(RTLD_NEXT, name), memory_order_release);             \
    } while (0)

/* Notes a call (or adds it to the thread's open group). Returns the id to push, 0 when
 * nothing is pushed (inside a group, or not profiling). */
static uint64_t begin_call(nnp_comm_kind_t kind, size_t count, int datatype, int peer,
                           nccl_comm_t comm)
{
    nnp_cu_nccl_call_t c;
    const nnp_cu_ext_fns_t *ext = atomic_load_explicit(&g_ext, memory_order_acquire);
    uint64_t id;

    if (!ext)
        return 0;
    c.comm_kind = (uint32_t)kind;
    c.bytes = (uint64_t)count * nnp__cu_nccl_type_size(datatype);
    c.peer = peer;
    c.comm = (uint64_t)(uintptr_t)comm;
    if (tls_depth > 0) {
        if (!tls_group_used) {
            tls_group = c;
            tls_group_used = true;
        } else {
            /* A group of different collectives (send+recv pairs) is "other". */
            if (tls_group.comm_kind != c.comm_kind)
                tls_group.comm_kind = NNP_COMM_OTHER;
            if (tls_group.peer != c.peer)
                tls_group.peer = -1;
            tls_group.bytes += c.bytes;
        }
        return 0;
    }
    id = nnp__cu_nccl_note(&c);
    ext->push(NNP_CU_EXT_NCCL, id);
    return id;
}

static void end_call(uint64_t id)
{
    const nnp_cu_ext_fns_t *ext = atomic_load_explicit(&g_ext, memory_order_acquire);
    if (id && ext)
        ext->pop(NNP_CU_EXT_NCCL);
}

/* NCCL's signatures (nccl.h), declared here for the definitions below. */
NNP_EXPORT nccl_result_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                                       int datatype, int op, nccl_comm_t comm,
                                       cuda_stream_t stream);
NNP_EXPORT nccl_result_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                                       int datatype, int root, nccl_comm_t comm,
                                       cuda_stream_t stream);
NNP_EXPORT nccl_result_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count,
                                    int datatype, int op, int root, nccl_comm_t comm,
                                    cuda_stream_t stream);
NNP_EXPORT nccl_result_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                                       int datatype, nccl_comm_t comm, cuda_stream_t stream);
NNP_EXPORT nccl_result_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                                           int datatype, int op, nccl_comm_t comm,
                                           cuda_stream_t stream);
NNP_EXPORT nccl_result_t ncclSend(const void *sendbuff, size_t count, int datatype, int peer,
                                  nccl_comm_t comm, cuda_stream_t stream);
NNP_EXPORT nccl_result_t ncclRecv(void *recvbuff, size_t count, int datatype, int peer,
                                  nccl_comm_t comm, cuda_stream_t stream);
NNP_EXPORT nccl_result_t ncclGroupStart(void);
NNP_EXPORT nccl_result_t ncclGroupEnd(void);

typedef nccl_result_t (*all_reduce_fn)(const void *, void *, size_t, int, int, nccl_comm_t,
                                       cuda_stream_t);
typedef nccl_result_t (*broadcast_fn)(const void *, void *, size_t, int, int, nccl_comm_t,
                                      cuda_stream_t);
typedef nccl_result_t (*reduce_fn)(const void *, void *, size_t, int, int, int, nccl_comm_t,
                                   cuda_stream_t);
typedef nccl_result_t (*all_gather_fn)(const void *, void *, size_t, int, nccl_comm_t,
                                       cuda_stream_t);
typedef nccl_result_t (*send_fn)(const void *, size_t, int, int, nccl_comm_t, cuda_stream_t);
typedef nccl_result_t (*recv_fn)(void *, size_t, int, int, nccl_comm_t, cuda_stream_t);
typedef nccl_result_t (*group_fn)(void);

static _Atomic(all_reduce_fn) real_all_reduce;
static _Atomic(broadcast_fn) real_broadcast;
static _Atomic(reduce_fn) real_reduce;
static _Atomic(all_gather_fn) real_all_gather;
static _Atomic(all_reduce_fn) real_reduce_scatter;
static _Atomic(send_fn) real_send;
static _Atomic(recv_fn) real_recv;
static _Atomic(group_fn) real_group_start, real_group_end;

NNP_EXPORT nccl_result_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                                       int datatype, int op, nccl_comm_t comm, cuda_stream_t stream)
{
    uint64_t id;
    nccl_result_t r;
    REAL(real_all_reduce, "ncclAllReduce");
    if (!real_all_reduce)
        return NCCL_INTERNAL_ERROR;
    id = begin_call(NNP_COMM_ALLREDUCE, count, datatype, -1, comm);
    r = real_all_reduce(sendbuff, recvbuff, count, datatype, op, comm, stream);
    end_call(id);
    return r;
}

NNP_EXPORT nccl_result_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                                       int datatype, int root, nccl_comm_t comm,
                                       cuda_stream_t stream)
{
    uint64_t id;
    nccl_result_t r;
    REAL(real_broadcast, "ncclBroadcast");
    if (!real_broadcast)
        return NCCL_INTERNAL_ERROR;
    id = begin_call(NNP_COMM_BROADCAST, count, datatype, root, comm);
    r = real_broadcast(sendbuff, recvbuff, count, datatype, root, comm, stream);
    end_call(id);
    return r;
}

NNP_EXPORT nccl_result_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count,
                                    int datatype, int op, int root, nccl_comm_t comm,
                                    cuda_stream_t stream)
{
    uint64_t id;
    nccl_result_t r;
    REAL(real_reduce, "ncclReduce");
    if (!real_reduce)
        return NCCL_INTERNAL_ERROR;
    id = begin_call(NNP_COMM_REDUCE, count, datatype, root, comm);
    r = real_reduce(sendbuff, recvbuff, count, datatype, op, root, comm, stream);
    end_call(id);
    return r;
}

NNP_EXPORT nccl_result_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                                       int datatype, nccl_comm_t comm, cuda_stream_t stream)
{
    uint64_t id;
    nccl_result_t r;
    REAL(real_all_gather, "ncclAllGather");
    if (!real_all_gather)
        return NCCL_INTERNAL_ERROR;
    id = begin_call(NNP_COMM_ALLGATHER, sendcount, datatype, -1, comm);
    r = real_all_gather(sendbuff, recvbuff, sendcount, datatype, comm, stream);
    end_call(id);
    return r;
}

NNP_EXPORT nccl_result_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                                           int datatype, int op, nccl_comm_t comm,
                                           cuda_stream_t stream)
{
    uint64_t id;
    nccl_result_t r;
    REAL(real_reduce_scatter, "ncclReduceScatter");
    if (!real_reduce_scatter)
        return NCCL_INTERNAL_ERROR;
    id = begin_call(NNP_COMM_REDUCESCATTER, recvcount, datatype, -1, comm);
    r = real_reduce_scatter(sendbuff, recvbuff, recvcount, datatype, op, comm, stream);
    end_call(id);
    return r;
}

NNP_EXPORT nccl_result_t ncclSend(const void *sendbuff, size_t count, int datatype, int peer,
                                  nccl_comm_t comm, cuda_stream_t stream)
{
    uint64_t id;
    nccl_result_t r;
    REAL(real_send, "ncclSend");
    if (!real_send)
        return NCCL_INTERNAL_ERROR;
    id = begin_call(NNP_COMM_SEND, count, datatype, peer, comm);
    r = real_send(sendbuff, count, datatype, peer, comm, stream);
    end_call(id);
    return r;
}

NNP_EXPORT nccl_result_t ncclRecv(void *recvbuff, size_t count, int datatype, int peer,
                                  nccl_comm_t comm, cuda_stream_t stream)
{
    uint64_t id;
    nccl_result_t r;
    REAL(real_recv, "ncclRecv");
    if (!real_recv)
        return NCCL_INTERNAL_ERROR;
    id = begin_call(NNP_COMM_RECV, count, datatype, peer, comm);
    r = real_recv(recvbuff, count, datatype, peer, comm, stream);
    end_call(id);
    return r;
}

NNP_EXPORT nccl_result_t ncclGroupStart(void)
{
    REAL(real_group_start, "ncclGroupStart");
    if (!real_group_start)
        return NCCL_INTERNAL_ERROR;
    if (tls_depth++ == 0)
        tls_group_used = false;
    return real_group_start();
}

NNP_EXPORT nccl_result_t ncclGroupEnd(void)
{
    const nnp_cu_ext_fns_t *ext = atomic_load_explicit(&g_ext, memory_order_acquire);
    uint64_t id = 0;
    nccl_result_t r;
    REAL(real_group_end, "ncclGroupEnd");
    if (!real_group_end)
        return NCCL_INTERNAL_ERROR;
    if (tls_depth > 0 && --tls_depth == 0 && tls_group_used && ext) {
        /* The outermost end launches the group's kernel: its size is the group's sum. */
        id = nnp__cu_nccl_note(&tls_group);
        ext->push(NNP_CU_EXT_NCCL, id);
    }
    r = real_group_end();
    end_call(id);
    return r;
}
