/* cluster_ring.c - the MPI program of tests/cluster/test_cluster_mpi.py: on every rank r of
 * N, REPS times, MPI_Sendrecv of (r + 1) * BLOCK doubles to rank r + 1 (receiving rank
 * r - 1's), then one MPI_Allreduce of AR_COUNT doubles. The bytes between each pair of
 * ranks are thus known (rank r sends (r + 1) * BLOCK * 8 bytes to r + 1), and the test
 * checks the cluster analysis's communication matrix against them. Exits 1 on wrong data. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define REPS     3
#define BLOCK    1000
#define AR_COUNT 1000
#define TAG      7

int main(int argc, char **argv)
{
    int rank, size, bad = 0;
    double *out, *in, ar[AR_COUNT], sum[AR_COUNT];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    out = calloc((size_t)size * BLOCK, sizeof(double));
    in = calloc((size_t)size * BLOCK, sizeof(double));
    if (!out || !in)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int i = 0; i < (rank + 1) * BLOCK; i++)
        out[i] = rank;
    for (int k = 0; k < REPS; k++) {
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        MPI_Sendrecv(out, (rank + 1) * BLOCK, MPI_DOUBLE, right, TAG, in, (left + 1) * BLOCK,
                     MPI_DOUBLE, left, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        bad |= in[0] != left || in[(left + 1) * BLOCK - 1] != left;
    }
    for (int i = 0; i < AR_COUNT; i++)
        ar[i] = rank;
    MPI_Allreduce(ar, sum, AR_COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    bad |= sum[0] != size * (size - 1) / 2.0;
    if (bad)
        fprintf(stderr, "cluster_ring: rank %d: wrong data\n", rank);
    free(out);
    free(in);
    MPI_Finalize();
    return bad;
}
