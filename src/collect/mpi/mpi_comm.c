/* mpi_comm.c - what the wrappers need to know about communicators and datatypes, cached so
 * a recorded call costs no MPI query beyond PMPI_Type_size on a first-seen type:
 * - communicators: a group name equal on every member ("MPI_COMM_WORLD", or one derived from
 *   the members' world ranks, so ranks can match groups as HCCL/NCCL groups are matched),
 *   the world rank of every peer rank, and the member list for nnp_comm_group(). Cached as an
 *   MPI attribute (freed by MPI when the communicator is), created under a mutex on a miss;
 *   MPI_COMM_WORLD and MPI_COMM_SELF are static entries.
 * - datatypes: name and size, from a small per-thread cache of predefined types (never
 *   freed, so a handle cannot be reused for another type) or an attribute on derived ones. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

/* FNV-1a (Fowler, Noll, Vo) 64-bit: a stable hash of the member list for group names. */
#define FNV64_OFFSET 0xcbf29ce484222325ull
#define FNV64_PRIME  0x100000001b3ull
/* Per-thread cache of predefined datatypes: programs use a handful; direct-mapped by
 * handle bits, a miss costs a few MPI queries. */
#define TYPE_CACHE_SLOTS 16
#define TYPE_NAME_CAP    (MPI_MAX_OBJECT_NAME + 32)
#define GROUP_NAME_CAP   64

static int g_comm_keyval = MPI_KEYVAL_INVALID;
static int g_type_keyval = MPI_KEYVAL_INVALID;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static nnp_mpi_comm_t g_world, g_self;

typedef struct type_slot {
    MPI_Datatype type;
    nnp_str_t name;
    int size;
} type_slot_t;
static __thread type_slot_t tls_types[TYPE_CACHE_SLOTS] __attribute__((tls_model("initial-exec")));

static void comm_free(nnp_mpi_comm_t *c)
{
    free(c->world_ranks);
    free(c->members);
}

static int comm_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    comm_free(value);
    free(value);
    return MPI_SUCCESS;
}

/* World ranks of the members of group g (n of them), malloc'ed; NULL on failure. */
static int32_t *world_ranks_of(MPI_Group g, int n)
{
    MPI_Group world;
    int *in = malloc((size_t)n * sizeof(int)), *out = malloc((size_t)n * sizeof(int));
    int32_t *res = NULL;
    if (in && out && PMPI_Comm_group(MPI_COMM_WORLD, &world) == MPI_SUCCESS) {
        for (int i = 0; i < n; i++)
            in[i] = i;
        if (PMPI_Group_translate_ranks(g, n, in, world, out) == MPI_SUCCESS &&
            (res = malloc((size_t)n * sizeof(int32_t))) != NULL) {
            for (int i = 0; i < n; i++)
                res[i] = out[i] == MPI_UNDEFINED ? -1 : out[i];
        }
        PMPI_Group_free(&world);
    }
    free(in);
    free(out);
    return res;
}

/* Fills c for comm: members, peers' world ranks, and the group name. */
static int describe_comm(MPI_Comm comm, nnp_mpi_comm_t *c)
{
    MPI_Group local, remote;
    int inter = 0;
    uint64_t h = FNV64_OFFSET;
    char name[GROUP_NAME_CAP];

    memset(c, 0, sizeof(*c));
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS ||
        PMPI_Comm_rank(comm, &c->my_index) != MPI_SUCCESS ||
        PMPI_Comm_size(comm, &c->n_members) != MPI_SUCCESS ||
        PMPI_Comm_group(comm, &local) != MPI_SUCCESS)
        return MPI_ERR_OTHER;
    c->members = world_ranks_of(local, c->n_members);
    PMPI_Group_free(&local);
    if (!c->members)
        return MPI_ERR_NO_MEM;
    /* Peers of an intercommunicator are ranks of the remote group. */
    c->is_inter = inter != 0;
    if (inter) {
        if (PMPI_Comm_remote_size(comm, &c->size) != MPI_SUCCESS ||
            PMPI_Comm_remote_group(comm, &remote) != MPI_SUCCESS)
            return MPI_ERR_OTHER;
        c->world_ranks = world_ranks_of(remote, c->size);
        PMPI_Group_free(&remote);
    } else {
        c->size = c->n_members;
        c->world_ranks = malloc((size_t)c->size * sizeof(int32_t));
        if (c->world_ranks)
            memcpy(c->world_ranks, c->members, (size_t)c->size * sizeof(int32_t));
    }
    if (!c->world_ranks)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < c->n_members; i++) {
        uint32_t v = (uint32_t)c->members[i];
        for (int b = 0; b < 4; b++) {
            h ^= (v >> (8 * b)) & 0xffu;
            h *= FNV64_PRIME;
        }
    }
    snprintf(name, sizeof(name), "mpi_comm_%d_%016llx%s", c->n_members, (unsigned long long)h,
             inter ? "_inter" : "");
    c->group = nnp_intern(name);
    return MPI_SUCCESS;
}

int nnp__mpi_comm_init(void)
{
    int rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_delete, &g_comm_keyval, NULL);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &g_type_keyval,
                                     NULL);
    if (rc == MPI_SUCCESS)
        rc = describe_comm(MPI_COMM_WORLD, &g_world);
    if (rc == MPI_SUCCESS)
        rc = describe_comm(MPI_COMM_SELF, &g_self);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Peers in MPI_COMM_WORLD are world ranks already. */
    free(g_world.world_ranks);
    g_world.world_ranks = NULL;
    g_world.group = nnp_intern("MPI_COMM_WORLD");
    g_self.group = nnp_intern("MPI_COMM_SELF");
    return MPI_SUCCESS;
}

void nnp__mpi_comm_fini(void)
{
    if (g_comm_keyval != MPI_KEYVAL_INVALID)
        PMPI_Comm_free_keyval(&g_comm_keyval);
    if (g_type_keyval != MPI_KEYVAL_INVALID)
        PMPI_Type_free_keyval(&g_type_keyval);
    comm_free(&g_world);
    comm_free(&g_self);
    memset(&g_world, 0, sizeof(g_world));
    memset(&g_self, 0, sizeof(g_self));
}

nnp_mpi_comm_t *nnp__mpi_comm(MPI_Comm comm)
{
    nnp_mpi_comm_t *c = NULL;
    int found = 0;

    if (comm == MPI_COMM_WORLD)
        return &g_world;
    if (comm == MPI_COMM_SELF)
        return &g_self;
    if (comm == MPI_COMM_NULL || PMPI_Comm_get_attr(comm, g_comm_keyval, &c, &found) != MPI_SUCCESS)
        return NULL;
    if (found)
        return c;
    /* First op on this communicator: two threads may get here at once, one creates. */
    pthread_mutex_lock(&g_lock);
    if (PMPI_Comm_get_attr(comm, g_comm_keyval, &c, &found) == MPI_SUCCESS && !found) {
        c = malloc(sizeof(*c));
        if (c && describe_comm(comm, c) != MPI_SUCCESS) {
            comm_free(c);
            free(c);
            c = NULL;
        }
        if (c && PMPI_Comm_set_attr(comm, g_comm_keyval, c) != MPI_SUCCESS) {
            comm_free(c);
            free(c);
            c = NULL;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return c;
}

int32_t nnp__mpi_global(const nnp_mpi_comm_t *c, int local)
{
    if (!c || local < 0 || local >= c->size)
        return -1;
    return c->world_ranks ? c->world_ranks[local] : local;
}

void nnp__mpi_describe(nnp_mpi_comm_t *c)
{
    unsigned gen = atomic_load_explicit(&nnp__mpi_window_gen, memory_order_relaxed);
    /* A plain load first: the exchange (a locked instruction) runs once per window. */
    if (atomic_load_explicit(&c->described_gen, memory_order_relaxed) != gen &&
        atomic_exchange_explicit(&c->described_gen, gen, memory_order_relaxed) != gen)
        nnp_comm_group(c->group, c->members, (uint32_t)c->n_members, c->my_index);
}

/* Name and size of a datatype the caches missed. */
static void type_lookup(MPI_Datatype dt, bool *is_named, nnp_str_t *name, int *size)
{
    int ni = 0, na = 0, nd = 0, combiner = MPI_COMBINER_NAMED, len = 0;
    char text[TYPE_NAME_CAP];

    *name = 0;
    if (PMPI_Type_size(dt, size) != MPI_SUCCESS)
        *size = 0;
    if (PMPI_Type_get_envelope(dt, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
        combiner = MPI_COMBINER_NAMED;
    *is_named = combiner == MPI_COMBINER_NAMED;
    if (PMPI_Type_get_name(dt, text, &len) != MPI_SUCCESS || len <= 0)
        snprintf(text, sizeof(text), "%s", *is_named ? "MPI_(unnamed)" : "derived");
    *name = nnp_intern(text);
}

void nnp__mpi_type(MPI_Datatype dt, nnp_str_t *name, int *size_bytes)
{
    type_slot_t *s = &tls_types[((uintptr_t)dt >> 4) % TYPE_CACHE_SLOTS];
    intptr_t attr = 0;
    int found = 0;
    bool is_named;

    *name = 0;
    *size_bytes = 0;
    if (dt == MPI_DATATYPE_NULL)
        return;
    if (NNP_MPI_LIKELY(s->type == dt && s->name)) {
        *name = s->name;
        *size_bytes = s->size;
        return;
    }
    /* A derived type keeps its name id in an attribute (its handle may be reused after
     * MPI_Type_free, so it never enters the per-thread cache). */
    if (g_type_keyval != MPI_KEYVAL_INVALID &&
        PMPI_Type_get_attr(dt, g_type_keyval, &attr, &found) == MPI_SUCCESS && found) {
        *name = (nnp_str_t)attr;
        if (PMPI_Type_size(dt, size_bytes) != MPI_SUCCESS)
            *size_bytes = 0;
        return;
    }
    type_lookup(dt, &is_named, name, size_bytes);
    if (is_named) {
        s->type = dt;
        s->name = *name;
        s->size = *size_bytes;
    } else if (g_type_keyval != MPI_KEYVAL_INVALID) {
        PMPI_Type_set_attr(dt, g_type_keyval, (void *)(intptr_t)*name);
    }
}
