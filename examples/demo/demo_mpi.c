/* demo_mpi.c - `demo_train --mpi`: the data-parallel gradient all-reduce over real MPI, one
 * process per rank started by mpirun. Built when CMake finds MPI (else demo_mpi_none.c).
 * The demo does not record these calls itself: under `nnprof run` the PMPI library records
 * MPI_Allreduce with its bytes, datatype and group. */
#include <mpi.h>
#include <stdio.h>

#include "demo.h"

bool demo_mpi_init(int *argc, char ***argv, int *rank, int *size)
{
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        fprintf(stderr, "demo_train: MPI_Init failed\n");
        return false;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return true;
}

void demo_mpi_allreduce_mean(float *v, size_t n)
{
    float scale;
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
        demo_fatal("MPI_Allreduce failed");
    scale = 1.0f / (float)size;
    for (size_t i = 0; i < n; i++)
        v[i] *= scale;
}

void demo_mpi_finalize(void)
{
    MPI_Finalize();
}
