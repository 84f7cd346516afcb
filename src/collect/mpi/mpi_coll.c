/* mpi_coll.c - collective wrappers, blocking and non-blocking (whose op ends when its
 * MPI_Wait/MPI_Test completes it, mpi_p2p.c). What `count` (and so bytes = count x type size)
 * means follows nccl-tests' "size", the figure bandwidths are computed from, and is the same
 * on every rank of a balanced call:
 *   allreduce, reduce, bcast: the buffer (count); allgather(v): the gathered result;
 *   reduce_scatter(_block): the whole input; alltoall(v): everything this rank sends;
 *   gather/scatter: block x ranks (gatherv/scatterv: the root's whole buffer, another rank's
 *   own block); barrier: 0. The root of rooted collectives is the op's peer.
 * docs/MPI.md has the table. */
#include "mpi_internal.h"

static inline nnp_mpi_rec_t coll(nnp_mpi_op_t op, nnp_comm_kind_t kind, MPI_Comm comm,
                                 MPI_Datatype type, uint64_t count, int root)
{
    nnp_mpi_rec_t r = {op, kind, comm, type, count, root, 0, false};
    return r;
}

/* n x c as the uint64 count (negative counts are erroneous MPI: counted as 0). */
static inline uint64_t times(int c, int n)
{
    return c > 0 && n > 0 ? (uint64_t)c * (uint64_t)n : 0;
}

/* The body of a blocking wrapper: `call` is the MPI_* call expression (PMPI_* is made by
 * pasting P in front), `make` the nnp_mpi_rec_t to record once it succeeded. */
#define BLOCKING(call, make)                                                                       \
    do {                                                                                           \
        uint64_t t0_;                                                                              \
        int rc_;                                                                                   \
        nnp_mpi_rec_t r_;                                                                          \
        if (!nnp__mpi_active())                                                                    \
            return P##call;                                                                        \
        t0_ = nnp_now();                                                                           \
        nnp__mpi_depth++;                                                                          \
        rc_ = P##call;                                                                             \
        nnp__mpi_depth--;                                                                          \
        if (rc_ == MPI_SUCCESS) {                                                                  \
            r_ = make;                                                                             \
            nnp__mpi_record_since(&r_, t0_);                                                       \
        }                                                                                          \
        return rc_;                                                                                \
    } while (0)

/* The body of a non-blocking wrapper: the op is tracked until *req completes. */
#define NONBLOCKING(call, req, make)                                                               \
    do {                                                                                           \
        uint64_t t0_;                                                                              \
        int rc_;                                                                                   \
        nnp_mpi_rec_t r_;                                                                          \
        if (!nnp__mpi_active())                                                                    \
            return P##call;                                                                        \
        t0_ = nnp_clock_ns();                                                                      \
        nnp__mpi_depth++;                                                                          \
        rc_ = P##call;                                                                             \
        nnp__mpi_depth--;                                                                          \
        r_ = make;                                                                                 \
        nnp__mpi_started(rc_, req, &r_, t0_);                                                      \
        return rc_;                                                                                \
    } while (0)

/* ---- the counted part of each collective ---- */

static nnp_mpi_rec_t allgather_rec(nnp_mpi_op_t op, MPI_Comm comm, int recvcount,
                                   MPI_Datatype recvtype)
{
    return coll(op, NNP_COMM_ALLGATHER, comm, recvtype, times(recvcount, nnp__mpi_peers(comm)), -1);
}

static nnp_mpi_rec_t alltoall_rec(nnp_mpi_op_t op, MPI_Comm comm, const void *sendbuf,
                                  int sendcount, MPI_Datatype sendtype, int recvcount,
                                  MPI_Datatype recvtype)
{
    int n = nnp__mpi_peers(comm);
    if (sendbuf == MPI_IN_PLACE)
        return coll(op, NNP_COMM_ALLTOALL, comm, recvtype, times(recvcount, n), -1);
    return coll(op, NNP_COMM_ALLTOALL, comm, sendtype, times(sendcount, n), -1);
}

static nnp_mpi_rec_t alltoallv_rec(nnp_mpi_op_t op, MPI_Comm comm, const void *sendbuf,
                                   const int *sendcounts, MPI_Datatype sendtype,
                                   const int *recvcounts, MPI_Datatype recvtype)
{
    int n = nnp__mpi_peers(comm);
    if (sendbuf == MPI_IN_PLACE)
        return coll(op, NNP_COMM_ALLTOALL, comm, recvtype, nnp__mpi_sum(recvcounts, n), -1);
    return coll(op, NNP_COMM_ALLTOALL, comm, sendtype, nnp__mpi_sum(sendcounts, n), -1);
}

static nnp_mpi_rec_t gather_rec(nnp_mpi_op_t op, MPI_Comm comm, const void *sendbuf, int sendcount,
                                MPI_Datatype sendtype, int recvcount, MPI_Datatype recvtype,
                                int root)
{
    int n = nnp__mpi_peers(comm);
    if (sendbuf == MPI_IN_PLACE || root == MPI_ROOT)
        return coll(op, NNP_COMM_GATHER, comm, recvtype, times(recvcount, n), root);
    return coll(op, NNP_COMM_GATHER, comm, sendtype, times(sendcount, n), root);
}

static nnp_mpi_rec_t gatherv_rec(nnp_mpi_op_t op, MPI_Comm comm, int sendcount,
                                 MPI_Datatype sendtype, const int *recvcounts,
                                 MPI_Datatype recvtype, int root)
{
    if (nnp__mpi_is_root(comm, root))
        return coll(op, NNP_COMM_GATHER, comm, recvtype,
                    nnp__mpi_sum(recvcounts, nnp__mpi_peers(comm)), root);
    return coll(op, NNP_COMM_GATHER, comm, sendtype, times(sendcount, 1), root);
}

static nnp_mpi_rec_t scatter_rec(nnp_mpi_op_t op, MPI_Comm comm, int sendcount,
                                 MPI_Datatype sendtype, const void *recvbuf, int recvcount,
                                 MPI_Datatype recvtype, int root)
{
    int n = nnp__mpi_peers(comm);
    if (recvbuf == MPI_IN_PLACE || root == MPI_ROOT)
        return coll(op, NNP_COMM_SCATTER, comm, sendtype, times(sendcount, n), root);
    return coll(op, NNP_COMM_SCATTER, comm, recvtype, times(recvcount, n), root);
}

static nnp_mpi_rec_t scatterv_rec(nnp_mpi_op_t op, MPI_Comm comm, const int *sendcounts,
                                  MPI_Datatype sendtype, int recvcount, MPI_Datatype recvtype,
                                  int root)
{
    if (nnp__mpi_is_root(comm, root))
        return coll(op, NNP_COMM_SCATTER, comm, sendtype,
                    nnp__mpi_sum(sendcounts, nnp__mpi_peers(comm)), root);
    return coll(op, NNP_COMM_SCATTER, comm, recvtype, times(recvcount, 1), root);
}

/* ---- blocking ---- */

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                  MPI_Comm comm)
{
    BLOCKING(MPI_Allreduce(sendbuf, recvbuf, count, dt, op, comm),
             coll(NNP_MPI_OP_ALLREDUCE, NNP_COMM_ALLREDUCE, comm, dt, times(count, 1), -1));
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
               MPI_Comm comm)
{
    BLOCKING(MPI_Reduce(sendbuf, recvbuf, count, dt, op, root, comm),
             coll(NNP_MPI_OP_REDUCE, NNP_COMM_REDUCE, comm, dt, times(count, 1), root));
}

int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    BLOCKING(MPI_Bcast(buf, count, dt, root, comm),
             coll(NNP_MPI_OP_BCAST, NNP_COMM_BROADCAST, comm, dt, times(count, 1), root));
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    BLOCKING(MPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
             allgather_rec(NNP_MPI_OP_ALLGATHER, comm, recvcount, recvtype));
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    BLOCKING(
        MPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm),
        coll(NNP_MPI_OP_ALLGATHERV, NNP_COMM_ALLGATHER, comm, recvtype,
             nnp__mpi_sum(recvcounts, nnp__mpi_peers(comm)), -1));
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    BLOCKING(
        MPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
        alltoall_rec(NNP_MPI_OP_ALLTOALL, comm, sendbuf, sendcount, sendtype, recvcount, recvtype));
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm)
{
    BLOCKING(MPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                           recvtype, comm),
             alltoallv_rec(NNP_MPI_OP_ALLTOALLV, comm, sendbuf, sendcounts, sendtype, recvcounts,
                           recvtype));
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype dt,
                       MPI_Op op, MPI_Comm comm)
{
    BLOCKING(MPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, dt, op, comm),
             coll(NNP_MPI_OP_REDUCE_SCATTER, NNP_COMM_REDUCESCATTER, comm, dt,
                  nnp__mpi_sum(recvcounts, nnp__mpi_peers(comm)), -1));
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype dt,
                             MPI_Op op, MPI_Comm comm)
{
    BLOCKING(MPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, dt, op, comm),
             coll(NNP_MPI_OP_REDUCE_SCATTER_BLOCK, NNP_COMM_REDUCESCATTER, comm, dt,
                  times(recvcount, nnp__mpi_peers(comm)), -1));
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    BLOCKING(MPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
             gather_rec(NNP_MPI_OP_GATHER, comm, sendbuf, sendcount, sendtype, recvcount, recvtype,
                        root));
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
    BLOCKING(
        MPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                    comm),
        gatherv_rec(NNP_MPI_OP_GATHERV, comm, sendcount, sendtype, recvcounts, recvtype, root));
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    BLOCKING(MPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
             scatter_rec(NNP_MPI_OP_SCATTER, comm, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, root));
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm)
{
    BLOCKING(
        MPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                     comm),
        scatterv_rec(NNP_MPI_OP_SCATTERV, comm, sendcounts, sendtype, recvcount, recvtype, root));
}

int MPI_Barrier(MPI_Comm comm)
{
    BLOCKING(MPI_Barrier(comm),
             coll(NNP_MPI_OP_BARRIER, NNP_COMM_BARRIER, comm, MPI_DATATYPE_NULL, 0, -1));
}

/* ---- non-blocking ---- */

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                   MPI_Comm comm, MPI_Request *req)
{
    NONBLOCKING(MPI_Iallreduce(sendbuf, recvbuf, count, dt, op, comm, req), req,
                coll(NNP_MPI_OP_IALLREDUCE, NNP_COMM_ALLREDUCE, comm, dt, times(count, 1), -1));
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                MPI_Comm comm, MPI_Request *req)
{
    NONBLOCKING(MPI_Ireduce(sendbuf, recvbuf, count, dt, op, root, comm, req), req,
                coll(NNP_MPI_OP_IREDUCE, NNP_COMM_REDUCE, comm, dt, times(count, 1), root));
}

int MPI_Ibcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request *req)
{
    NONBLOCKING(MPI_Ibcast(buf, count, dt, root, comm, req), req,
                coll(NNP_MPI_OP_IBCAST, NNP_COMM_BROADCAST, comm, dt, times(count, 1), root));
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req)
{
    NONBLOCKING(
        MPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, req), req,
        allgather_rec(NNP_MPI_OP_IALLGATHER, comm, recvcount, recvtype));
}

int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *req)
{
    NONBLOCKING(MPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                                comm, req),
                req,
                coll(NNP_MPI_OP_IALLGATHERV, NNP_COMM_ALLGATHER, comm, recvtype,
                     nnp__mpi_sum(recvcounts, nnp__mpi_peers(comm)), -1));
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req)
{
    NONBLOCKING(
        MPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, req), req,
        alltoall_rec(NNP_MPI_OP_IALLTOALL, comm, sendbuf, sendcount, sendtype, recvcount,
                     recvtype));
}

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req)
{
    NONBLOCKING(MPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                               recvtype, comm, req),
                req,
                alltoallv_rec(NNP_MPI_OP_IALLTOALLV, comm, sendbuf, sendcounts, sendtype,
                              recvcounts, recvtype));
}

int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype dt,
                        MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    NONBLOCKING(MPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, dt, op, comm, req), req,
                coll(NNP_MPI_OP_IREDUCE_SCATTER, NNP_COMM_REDUCESCATTER, comm, dt,
                     nnp__mpi_sum(recvcounts, nnp__mpi_peers(comm)), -1));
}

int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype dt,
                              MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    NONBLOCKING(MPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, dt, op, comm, req), req,
                coll(NNP_MPI_OP_IREDUCE_SCATTER_BLOCK, NNP_COMM_REDUCESCATTER, comm, dt,
                     times(recvcount, nnp__mpi_peers(comm)), -1));
}

int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *req)
{
    NONBLOCKING(
        MPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, req),
        req,
        gather_rec(NNP_MPI_OP_IGATHER, comm, sendbuf, sendcount, sendtype, recvcount, recvtype,
                   root));
}

int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request *req)
{
    NONBLOCKING(
        MPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                     comm, req),
        req,
        gatherv_rec(NNP_MPI_OP_IGATHERV, comm, sendcount, sendtype, recvcounts, recvtype, root));
}

int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *req)
{
    NONBLOCKING(
        MPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, req),
        req,
        scatter_rec(NNP_MPI_OP_ISCATTER, comm, sendcount, sendtype, recvbuf, recvcount, recvtype,
                    root));
}

int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request *req)
{
    NONBLOCKING(
        MPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                      comm, req),
        req,
        scatterv_rec(NNP_MPI_OP_ISCATTERV, comm, sendcounts, sendtype, recvcount, recvtype, root));
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
    NONBLOCKING(MPI_Ibarrier(comm, req), req,
                coll(NNP_MPI_OP_IBARRIER, NNP_COMM_BARRIER, comm, MPI_DATATYPE_NULL, 0, -1));
}
