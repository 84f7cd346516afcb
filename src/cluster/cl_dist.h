/* cl_dist.h - how the cluster analysis spreads over processes: a table of functions a
 * back end fills (curl's vtls). The driver (cl_driver.c) needs only this: without MPI it
 * runs one process (size 1, nothing is sent); under `mpirun -np K nnprof cluster`, the CLI
 * loads libnnprof_cluster_mpi.so (src/cluster/mpi/, built when Open MPI is found), whose
 * nnp_cluster_dist_open fills it with MPI calls. The back end knows nothing of nnprof, and
 * nnprof links no MPI: the CLI builds and runs without it. Self-contained: the back end
 * includes only this header. */
#ifndef NNP_CL_DIST_H
#define NNP_CL_DIST_H

#include <stddef.h>
#include <stdint.h>

/* Bumped when the table changes: a back end of another version is refused. */
#define NNP_CL_DIST_VERSION 1
/* The symbol the back end exports. */
#define NNP_CL_DIST_OPEN_SYMBOL "nnp_cluster_dist_open"

typedef struct nnp_cl_dist {
    int version;
    int rank, size; /* this process and the process count */
    void *ctx;
    const char *what; /* "Open MPI 4.1.4", for messages */
    /* Each returns 0, or non-zero after writing a message to err (errcap bytes). All
     * processes make the collective calls in the same order. */
    int (*bcast)(void *ctx, void *buf, size_t n, int root, char *err, size_t errcap);
    int (*send)(void *ctx, int dst, const void *buf, size_t n, char *err, size_t errcap);
    int (*recv)(void *ctx, int src, void *buf, size_t n, char *err, size_t errcap);
    /* Element-wise maximum of v[0..n) over all processes, the result on all. */
    int (*allreduce_max)(void *ctx, int64_t *v, size_t n, char *err, size_t errcap);
    /* Element-wise sum of v[0..n) onto root. */
    int (*reduce_sum)(void *ctx, int64_t *v, size_t n, int root, char *err, size_t errcap);
    void (*close)(void *ctx);
} nnp_cl_dist_t;

/* The back end's entry point: fills d (argc/argv for MPI_Init may be NULL). Returns 0, or
 * non-zero with a message in err. */
typedef int (*nnp_cl_dist_open_fn)(nnp_cl_dist_t *d, char *err, size_t errcap);

#endif /* NNP_CL_DIST_H */
