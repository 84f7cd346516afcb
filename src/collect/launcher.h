/* launcher.h - rank, world size and local rank of this process as its launcher set them in
 * the environment (mpirun, srun, torchrun, msrun). Used by the environment start-up
 * (autostart.c) and by `nnprof run`, so both agree on one order. */
#ifndef NNP_LAUNCHER_H
#define NNP_LAUNCHER_H

#include <stdbool.h>

#include "nnprof/nnprof.h"

typedef struct nnp_launcher {
    int rank, size;   /* -1 when no launcher variable gave them */
    int local_rank;   /* rank on this host, -1 unknown */
    const char *from; /* the variable the rank came from ("OMPI_COMM_WORLD_RANK"), or NULL */
    bool is_mpi;      /* started by an MPI launcher (Open MPI, or a PMI one) */
} nnp_launcher_t;

/* Reads the launcher's variables, first found wins: RANK_ID/RANK_SIZE (MindSpore's, also
 * what nnp_options_from_env reads), OMPI_COMM_WORLD_RANK/SIZE (Open MPI), PMI_RANK/SIZE
 * (MPICH, Intel MPI, srun --mpi=pmi2), RANK/WORLD_SIZE (torchrun), SLURM_PROCID/NTASKS
 * (srun; last because inside an allocation it may describe the batch step, not the worker).
 * Values that are not whole numbers in range are ignored. */
void nnp__launcher_read(nnp_launcher_t *out);

/* Applies the launcher's rank, size and local rank (as device id) to o where the
 * environment's RANK_ID / RANK_SIZE / DEVICE_ID and the options JSON (keys "rank_id",
 * "rank_size", "device_id" in ms_json, may be NULL) did not set them. */
void nnp__launcher_apply(nnp_options_t *o, const char *ms_json);

#endif /* NNP_LAUNCHER_H */
