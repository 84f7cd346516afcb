/* launcher.c - the rank of a process from its launcher's environment (launcher.h), so that
 * `mpirun -np 4 nnprof run -- ./train` or a torchrun worker writes the raw directory of its
 * own rank without the user setting RANK_ID. Read once at start-up, never on a hot path. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "collect/launcher.h"

typedef struct var_pair {
    const char *rank, *size;
    bool is_mpi;
} var_pair_t;

/* The order of nnp__launcher_read's doc comment. */
static const var_pair_t pairs[] = {
    {"RANK_ID", "RANK_SIZE", false},         {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", true},
    {"PMI_RANK", "PMI_SIZE", true},          {"RANK", "WORLD_SIZE", false},
    {"SLURM_PROCID", "SLURM_NTASKS", false},
};

/* Rank on this host, in the same spirit. */
static const char *const local_vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                         "LOCAL_RANK", "SLURM_LOCALID"};

/* A whole number in [lo, INT_MAX] from the environment, or -1. */
static int env_num(const char *name, int lo)
{
    const char *s = getenv(name);
    char *end;
    long v;
    if (!s || !*s)
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > INT_MAX)
        return -1;
    return (int)v;
}

void nnp__launcher_read(nnp_launcher_t *out)
{
    memset(out, 0, sizeof(*out));
    out->rank = out->size = out->local_rank = -1;
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        int r = env_num(pairs[i].rank, 0);
        if (r < 0)
            continue;
        out->rank = r;
        out->size = env_num(pairs[i].size, 1);
        out->from = pairs[i].rank;
        break;
    }
    out->is_mpi = getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("PMI_SIZE") != NULL;
    for (size_t i = 0; i < sizeof(local_vars) / sizeof(local_vars[0]); i++) {
        int l = env_num(local_vars[i], 0);
        if (l >= 0) {
            out->local_rank = l;
            break;
        }
    }
}

void nnp__launcher_apply(nnp_options_t *o, const char *ms_json)
{
    nnp_launcher_t l;
    cJSON *j = ms_json ? cJSON_Parse(ms_json) : NULL;
    bool obj = cJSON_IsObject(j);

    nnp__launcher_read(&l);
    if (l.rank >= 0 && !getenv("RANK_ID") &&
        !(obj && cJSON_GetObjectItemCaseSensitive(j, "rank_id")))
        o->rank_id = l.rank;
    if (l.rank >= 0 && l.size > l.rank && !getenv("RANK_SIZE") &&
        !(obj && cJSON_GetObjectItemCaseSensitive(j, "rank_size")))
        o->rank_size = l.size;
    if (l.local_rank >= 0 && !getenv("DEVICE_ID") &&
        !(obj && cJSON_GetObjectItemCaseSensitive(j, "device_id")))
        o->device_id = l.local_rank;
    cJSON_Delete(j);
}
