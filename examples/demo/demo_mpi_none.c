/* demo_mpi_none.c - `demo_train --mpi` in a build that found no MPI: says so. */
#include <stdio.h>

#include "demo.h"

bool demo_mpi_init(int *argc, char ***argv, int *rank, int *size)
{
    (void)argc, (void)argv, (void)rank, (void)size;
    fprintf(stderr, "demo_train: --mpi: this demo was built without MPI (scripts/bootstrap "
                    "installs libopenmpi-dev; then rebuild)\n");
    return false;
}

void demo_mpi_allreduce_mean(float *v, size_t n)
{
    (void)v, (void)n;
}

void demo_mpi_finalize(void)
{
}
