/* mpi_collector.c - start and end of MPI capture: the MPI_Init / MPI_Init_thread wrappers
 * set up the name table, the communicator cache, the request table and the clock
 * alignment, and register the "mpi" collector back end (nnp_collector_t) whose window_start
 * hook makes every communicator describe its group again in each window (it stays
 * registered after MPI_Finalize, so info.json lists it). MPI_Finalize measures the clocks
 * again (drift) while MPI still works. Loaded by `nnprof run`
 * (LD_PRELOAD) or linked before libmpi. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

nnp_str_t nnp__mpi_names[NNP_MPI_OP_COUNT];
atomic_uint nnp__mpi_window_gen;
atomic_bool nnp__mpi_ready;
__thread unsigned nnp__mpi_depth __attribute__((tls_model("initial-exec")));

static const char *const op_names[NNP_MPI_OP_COUNT] = {
#define NNP_MPI_OP_NAME_(id, text) text,
    NNP_MPI_OP_MAP(NNP_MPI_OP_NAME_)
#undef NNP_MPI_OP_NAME_
};

static int window_start(void *user)
{
    (void)user;
    atomic_fetch_add_explicit(&nnp__mpi_window_gen, 1, memory_order_relaxed);
    return NNP_OK;
}

static const nnp_collector_t collector = {"mpi", NULL, window_start, NULL, NULL};

/* Everything after a successful PMPI_Init: names, caches, clocks, then recording. */
static void after_init(void)
{
    static bool done; /* MPI_Init runs once per process */
    if (done)
        return;
    done = true;
    for (int i = 0; i < NNP_MPI_OP_COUNT; i++)
        nnp__mpi_names[i] = nnp_intern(op_names[i]);
    if (nnp__mpi_comm_init() != MPI_SUCCESS) {
        fprintf(stderr, "[nnprof] WARN: MPI: cannot describe MPI_COMM_WORLD; MPI calls are not "
                        "recorded\n");
        return;
    }
    if (!nnp__mpi_requests_init())
        fprintf(stderr, "[nnprof] WARN: MPI: out of memory for the request table; non-blocking "
                        "calls are not recorded\n");
    nnp__mpi_clock_sync(false);
    if (nnp_collector_register(&collector) != NNP_OK)
        fprintf(stderr, "[nnprof] WARN: MPI: cannot register the collector: %s\n",
                nnp_last_error());
    atomic_store(&nnp__mpi_ready, true);
}

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        after_init();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        after_init();
    return rc;
}

int MPI_Finalize(void)
{
    if (atomic_exchange(&nnp__mpi_ready, false)) {
        nnp__mpi_clock_sync(true);
        if (nnp__mpi_pending_overflows() > 0)
            fprintf(stderr,
                    "[nnprof] WARN: MPI: %llu non-blocking calls were not recorded (more "
                    "pending at once than the request table holds)\n",
                    (unsigned long long)nnp__mpi_pending_overflows());
        nnp__mpi_requests_fini();
        nnp__mpi_comm_fini();
    }
    return PMPI_Finalize();
}
