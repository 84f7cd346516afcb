/* bench_mpi.c - what libnnprof_mpi.so adds to an MPI call: each case times the bare call
 * (PMPI_*, which no interposition reaches) and the intercepted one (MPI_*: the wrapper, the
 * record, the call) in the same process, alternating blocks so drift hits both, and prints
 * min/median ns per call and the difference. A third column closes the collection window
 * (nnp_session_stop) to show what an interposed call costs while nothing is recorded. Run
 * on 2 ranks under nnprof run, the writer waking once a second and flushed between blocks,
 * so its compression never runs inside a timed block (its cost is bench_writer's):
 *   mpirun -np 2 build/nnprof run -o /tmp/b --option writer_period_ms=1000 -- \
 *       build/bench/bench_mpi
 * Prints the 1-minute load average: figures taken on a busy machine are pessimistic. Exits 0
 * whatever the figures; 1 only when it is not run as intended. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Calls per timed block, and blocks per variant: 21 blocks of 1000 calls each, so that a
 * descheduling (2 ranks busy-polling on 2 cores, with everything else) spoils few blocks
 * and moves neither the min nor the median. */
#define CALLS 1000
#define REPS  21
#define MSG   8 /* bytes: the latency-bound case, where a fixed cost shows most */
#define NS    1e9

typedef enum variant { BARE, OFF, ON, N_VARIANTS } variant_t;
static const char *const variant_names[N_VARIANTS] = {"bare (PMPI)", "window closed", "recorded"};

/* libnnprof's session calls, found at run time: the bench itself links only MPI. */
typedef void *(*current_fn)(void);
typedef int (*session_fn)(void *);
typedef bool (*collecting_fn)(void);
static current_fn p_current;
static session_fn p_start, p_stop, p_flush;
static collecting_fn p_collecting;

static int rank, peer;
static char sbuf[MSG], rbuf[MSG];

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * NS + (double)ts.tv_nsec;
}

/* One block of a case; returns ns per MPI call made by this rank. */
typedef double (*case_fn)(bool bare);

static double pingpong(bool bare)
{
    double t0 = now();
    for (int i = 0; i < CALLS; i++) {
        if (rank == 0) {
            if (bare) {
                PMPI_Send(sbuf, MSG, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                PMPI_Recv(rbuf, MSG, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Send(sbuf, MSG, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(rbuf, MSG, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        } else {
            if (bare) {
                PMPI_Recv(rbuf, MSG, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                PMPI_Send(sbuf, MSG, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            } else {
                MPI_Recv(rbuf, MSG, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(sbuf, MSG, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            }
        }
    }
    return (now() - t0) / (2.0 * CALLS);
}

static double isend_irecv(bool bare)
{
    MPI_Request req[2];
    double t0 = now();
    for (int i = 0; i < CALLS; i++) {
        if (bare) {
            PMPI_Irecv(rbuf, MSG, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &req[0]);
            PMPI_Isend(sbuf, MSG, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &req[1]);
            PMPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        } else {
            MPI_Irecv(rbuf, MSG, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &req[0]);
            MPI_Isend(sbuf, MSG, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &req[1]);
            MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        }
    }
    return (now() - t0) / (3.0 * CALLS);
}

static double allreduce(bool bare)
{
    double in = rank, out;
    double t0 = now();
    for (int i = 0; i < CALLS; i++) {
        if (bare)
            PMPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        else
            MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    return (now() - t0) / CALLS;
}

static double barrier(bool bare)
{
    double t0 = now();
    for (int i = 0; i < CALLS; i++) {
        if (bare)
            PMPI_Barrier(MPI_COMM_WORLD);
        else
            MPI_Barrier(MPI_COMM_WORLD);
    }
    return (now() - t0) / CALLS;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void window(bool open)
{
    void *s = p_current();
    if (open)
        p_start(s);
    else
        p_stop(s);
}

static void run_case(const char *name, case_fn fn)
{
    double t[N_VARIANTS][REPS], med[N_VARIANTS];
    fn(true); /* warm-up: connections, buffers */
    for (int r = 0; r < REPS; r++) {
        /* Rotate the order each block, so no variant always runs first. */
        for (int k = 0; k < N_VARIANTS; k++) {
            variant_t v = (variant_t)((k + r) % N_VARIANTS);
            /* The writer drains the last block now, not during the next one. */
            p_flush(p_current());
            PMPI_Barrier(MPI_COMM_WORLD);
            window(v == ON);
            PMPI_Barrier(MPI_COMM_WORLD);
            t[v][r] = fn(v == BARE);
        }
    }
    window(false);
    for (int v = 0; v < N_VARIANTS; v++) {
        qsort(t[v], REPS, sizeof(double), cmp_double);
        med[v] = t[v][REPS / 2];
    }
    if (rank == 0) {
        printf("%-18s", name);
        for (int v = 0; v < N_VARIANTS; v++)
            printf("  %8.0f %8.0f", t[v][0], med[v]);
        printf("  %+8.0f  %+6.1f%%   %+8.0f\n", med[ON] - med[BARE],
               100.0 * (med[ON] / med[BARE] - 1.0), med[OFF] - med[BARE]);
    }
}

/* dlsym's object pointer into a function pointer, the way POSIX allows (ISO C does not). */
static void sym(const char *name, void *fn, size_t size)
{
    void *p = dlsym(RTLD_DEFAULT, name);
    memcpy(fn, &p, size);
}

static double loadavg(void)
{
    double l = -1.0;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1.0;
        fclose(f);
    }
    return l;
}

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    sym("nnp_session_current", &p_current, sizeof(p_current));
    sym("nnp_session_start", &p_start, sizeof(p_start));
    sym("nnp_session_stop", &p_stop, sizeof(p_stop));
    sym("nnp_session_flush", &p_flush, sizeof(p_flush));
    sym("nnp_is_collecting", &p_collecting, sizeof(p_collecting));
    if (size != 2 || !p_current || !p_collecting || !p_flush || !p_current() || !p_collecting() ||
        !dlsym(RTLD_DEFAULT, "nnp__mpi_names")) {
        if (rank == 0)
            fprintf(stderr, "bench_mpi: run on 2 ranks under nnprof run, with the MPI library "
                            "(mpirun -np 2 nnprof run -o DIR -- bench_mpi)\n");
        MPI_Finalize();
        return 1;
    }
    peer = 1 - rank;
    if (rank == 0) {
        printf("bench_mpi: 2 ranks, %d calls x %d blocks per variant, %d-byte messages; "
               "load average %.2f\n",
               CALLS, REPS, MSG, loadavg());
        printf("ns per call:       %-17s  %-17s  %-17s  recorded-bare      closed-bare\n",
               variant_names[BARE], variant_names[OFF], variant_names[ON]);
        printf("%-18s  %8s %8s  %8s %8s  %8s %8s  %8s  %7s   %8s\n", "", "min", "median", "min",
               "median", "min", "median", "ns", "ratio", "ns");
    }
    run_case("Send+Recv", pingpong);
    run_case("Isend+Irecv+Wait", isend_irecv);
    run_case("Allreduce 8 B", allreduce);
    run_case("Barrier", barrier);
    if (rank == 0)
        printf("load average at the end %.2f\n", loadavg());
    window(true);
    MPI_Finalize();
    return 0;
}
