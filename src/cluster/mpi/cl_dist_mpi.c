/* cl_dist_mpi.c - libnnprof_cluster_mpi.so: the MPI back end of the cluster analysis's
 * distribution table (cl_dist.h). `mpirun -np K nnprof cluster DIR` loads it (dlopen, from
 * cmd_cluster.c); it initialises MPI, works on a private duplicate of MPI_COMM_WORLD with
 * errors returned (never MPI's default abort), splits messages larger than an int count
 * into pieces, and finalises MPI at close. It uses nothing of nnprof but the header. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_dist.h"

/* Bytes per MPI call: MPI counts are ints; 1 GiB pieces stay far from the limit. */
#define PIECE ((size_t)1 << 30)
/* The tag of the driver's point-to-point messages (any fixed value: one stream). */
#define TAG 14

typedef struct ctx {
    MPI_Comm comm;
    int we_initialised;
} ctx_t;

static ctx_t the_ctx;

static int fail(int rc, const char *what, char *err, size_t cap)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof(msg), "error %d", rc);
    snprintf(err, cap, "%s: %s", what, msg);
    return 1;
}

static int d_bcast(void *c, void *buf, size_t n, int root, char *err, size_t cap)
{
    ctx_t *x = c;
    for (size_t off = 0; off < n; off += PIECE) {
        size_t k = n - off < PIECE ? n - off : PIECE;
        int rc = MPI_Bcast((char *)buf + off, (int)k, MPI_BYTE, root, x->comm);
        if (rc != MPI_SUCCESS)
            return fail(rc, "MPI_Bcast", err, cap);
    }
    return 0;
}

static int d_send(void *c, int dst, const void *buf, size_t n, char *err, size_t cap)
{
    ctx_t *x = c;
    for (size_t off = 0; off < n; off += PIECE) {
        size_t k = n - off < PIECE ? n - off : PIECE;
        int rc = MPI_Send((const char *)buf + off, (int)k, MPI_BYTE, dst, TAG, x->comm);
        if (rc != MPI_SUCCESS)
            return fail(rc, "MPI_Send", err, cap);
    }
    return 0;
}

static int d_recv(void *c, int src, void *buf, size_t n, char *err, size_t cap)
{
    ctx_t *x = c;
    for (size_t off = 0; off < n; off += PIECE) {
        size_t k = n - off < PIECE ? n - off : PIECE;
        int rc =
            MPI_Recv((char *)buf + off, (int)k, MPI_BYTE, src, TAG, x->comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return fail(rc, "MPI_Recv", err, cap);
    }
    return 0;
}

static int d_allreduce_max(void *c, int64_t *v, size_t n, char *err, size_t cap)
{
    ctx_t *x = c;
    int rc;
    if (n > INT_MAX) {
        snprintf(err, cap, "MPI_Allreduce: %zu values", n);
        return 1;
    }
    rc = MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_INT64_T, MPI_MAX, x->comm);
    return rc == MPI_SUCCESS ? 0 : fail(rc, "MPI_Allreduce", err, cap);
}

static int d_reduce_sum(void *c, int64_t *v, size_t n, int root, char *err, size_t cap)
{
    ctx_t *x = c;
    int rank, rc;
    if (n > INT_MAX) {
        snprintf(err, cap, "MPI_Reduce: %zu values", n);
        return 1;
    }
    MPI_Comm_rank(x->comm, &rank);
    rc =
        MPI_Reduce(rank == root ? MPI_IN_PLACE : v, v, (int)n, MPI_INT64_T, MPI_SUM, root, x->comm);
    return rc == MPI_SUCCESS ? 0 : fail(rc, "MPI_Reduce", err, cap);
}

static void d_close(void *c)
{
    ctx_t *x = c;
    int finalized = 0;
    MPI_Comm_free(&x->comm);
    MPI_Finalized(&finalized);
    if (x->we_initialised && !finalized)
        MPI_Finalize();
}

__attribute__((visibility("default"))) int nnp_cluster_dist_open(nnp_cl_dist_t *d, char *err,
                                                                 size_t cap);

int nnp_cluster_dist_open(nnp_cl_dist_t *d, char *err, size_t cap)
{
    static char what[MPI_MAX_LIBRARY_VERSION_STRING + 16];
    int initialised = 0, rc, len = 0;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    ctx_t *x = &the_ctx;
    MPI_Initialized(&initialised);
    if (!initialised) {
        rc = MPI_Init(NULL, NULL);
        if (rc != MPI_SUCCESS)
            return fail(rc, "MPI_Init", err, cap);
        x->we_initialised = 1;
    }
    rc = MPI_Comm_dup(MPI_COMM_WORLD, &x->comm);
    if (rc != MPI_SUCCESS)
        return fail(rc, "MPI_Comm_dup", err, cap);
    MPI_Comm_set_errhandler(x->comm, MPI_ERRORS_RETURN);
    memset(d, 0, sizeof(*d));
    d->version = NNP_CL_DIST_VERSION;
    MPI_Comm_rank(x->comm, &d->rank);
    MPI_Comm_size(x->comm, &d->size);
    if (MPI_Get_library_version(version, &len) == MPI_SUCCESS) {
        char *nl = strchr(version, ',');
        if (nl)
            *nl = '\0';
        snprintf(what, sizeof(what), "%s", version);
    }
    d->what = what;
    d->ctx = x;
    d->bcast = d_bcast;
    d->send = d_send;
    d->recv = d_recv;
    d->allreduce_max = d_allreduce_max;
    d->reduce_sum = d_reduce_sum;
    d->close = d_close;
    return 0;
}
