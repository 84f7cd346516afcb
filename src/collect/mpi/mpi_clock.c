/* mpi_clock.c - clock alignment of the ranks (Cristian's algorithm, "Probabilistic clock
 * synchronization", 1989): every rank r > 0 sends rank 0 its time t1, rank 0 answers with
 * its own time t2, r reads t3 when the answer arrives. Rank 0 read t2 between r's t1 and
 * t3, so the offset (rank 0's clock minus r's) lies within [t2 - t3, t2 - t1]: the estimate
 * t2 - (t1 + t3) / 2 is off by at most the round trip / 2, which is the uncertainty stored.
 * The round with the shortest round trip of ROUNDS is kept. Run at MPI_Init (the offset)
 * and at MPI_Finalize (the drift), on a private duplicate of MPI_COMM_WORLD so no message
 * can match the program's; rank 0 serves the ranks one after the other. Clocks are
 * CLOCK_MONOTONIC, the base of every timestamp in the raw data. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

/* Round trips per rank: the shortest of 16 is within a few microseconds of the true
 * minimum on a busy node, and 16 x ranks round trips take well under a second even for
 * thousands of ranks. */
#define ROUNDS   16
#define TAG_PING 1
#define TAG_PONG 2
#define NOTE_CAP NNP_CLOCK_SYNC_NOTE_MAX

static MPI_Comm g_comm = MPI_COMM_NULL;
static bool g_have_first;
static int64_t g_first_offset, g_first_unc;

#ifdef NNP_MPI_TEST_HOOKS
/* Test builds only (libnnprof_mpi_testhook.so): NNPROF_TEST_CLOCK_SKEW_NS shifts this
 * rank's clock by rank x skew, as if the ranks ran on hosts whose clocks disagree. */
static int64_t test_skew_ns(void)
{
    static int64_t skew = -1;
    if (skew < 0) {
        const char *v = getenv("NNPROF_TEST_CLOCK_SKEW_NS");
        int rank = 0;
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        skew = v ? strtoll(v, NULL, 10) * rank : 0;
        if (skew < 0)
            skew = 0;
    }
    return skew;
}
#define NOW_NS() ((int64_t)nnp_clock_ns() + test_skew_ns())
#else
#define NOW_NS() ((int64_t)nnp_clock_ns())
#endif

/* Rank 0: answers ROUNDS pings of every other rank, in rank order. */
static int serve(int size)
{
    for (int r = 1; r < size; r++) {
        for (int k = 0; k < ROUNDS; k++) {
            int64_t t1, t2;
            int rc = PMPI_Recv(&t1, 1, MPI_INT64_T, r, TAG_PING, g_comm, MPI_STATUS_IGNORE);
            t2 = NOW_NS();
            if (rc == MPI_SUCCESS)
                rc = PMPI_Send(&t2, 1, MPI_INT64_T, r, TAG_PONG, g_comm);
            if (rc != MPI_SUCCESS)
                return rc;
        }
    }
    return MPI_SUCCESS;
}

/* Rank > 0: ROUNDS round trips with rank 0; the best one's offset and half round trip. */
static int measure(int64_t *offset, int64_t *uncertainty)
{
    int64_t best = INT64_MAX;
    for (int k = 0; k < ROUNDS; k++) {
        int64_t t1 = NOW_NS(), t2 = 0, t3;
        int rc = PMPI_Send(&t1, 1, MPI_INT64_T, 0, TAG_PING, g_comm);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Recv(&t2, 1, MPI_INT64_T, 0, TAG_PONG, g_comm, MPI_STATUS_IGNORE);
        t3 = NOW_NS();
        if (rc != MPI_SUCCESS)
            return rc;
        if (t3 - t1 < best) {
            best = t3 - t1;
            *offset = t2 - t1 - best / 2;
            *uncertainty = (best + 1) / 2;
        }
    }
    return MPI_SUCCESS;
}

void nnp__mpi_clock_sync(bool at_end)
{
    nnp_clock_sync_t cs;
    char note[NOTE_CAP];
    int rank = 0, size = 1, rc;
    int64_t offset = 0, unc = 0;

    if (g_comm == MPI_COMM_NULL && PMPI_Comm_dup(MPI_COMM_WORLD, &g_comm) != MPI_SUCCESS) {
        g_comm = MPI_COMM_NULL;
        return;
    }
    PMPI_Comm_rank(g_comm, &rank);
    PMPI_Comm_size(g_comm, &size);
    rc = rank == 0 ? serve(size) : measure(&offset, &unc);
    if (at_end) {
        PMPI_Comm_free(&g_comm);
        g_comm = MPI_COMM_NULL;
    }
    if (rc != MPI_SUCCESS)
        return;
    memset(&cs, 0, sizeof(cs));
    cs.method = "mpi_pingpong";
    cs.reference_rank = 0;
    if (!at_end || !g_have_first) {
        g_have_first = true;
        g_first_offset = offset;
        g_first_unc = unc;
        cs.offset_ns = offset;
        cs.uncertainty_ns = unc;
    } else {
        cs.offset_ns = g_first_offset;
        cs.uncertainty_ns = g_first_unc;
        cs.has_drift = true;
        cs.drift_ns = offset - g_first_offset;
    }
    if (rank == 0)
        snprintf(note, sizeof(note), "reference rank (%d ranks in MPI_COMM_WORLD)", size);
    else if (!cs.has_drift)
        snprintf(note, sizeof(note), "best of %d round trips with rank 0 at MPI_Init", ROUNDS);
    else
        snprintf(note, sizeof(note),
                 "best of %d round trips with rank 0 at MPI_Init; again at MPI_Finalize for "
                 "the drift (uncertainty then %lld ns)",
                 ROUNDS, (long long)unc);
    cs.note = note;
    if (nnp_clock_sync_set(&cs) != NNP_OK)
        fprintf(stderr, "[nnprof] WARN: MPI: cannot write the clock alignment: %s\n",
                nnp_last_error());
}
