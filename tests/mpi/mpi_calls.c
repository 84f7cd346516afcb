/* mpi_calls.c - the MPI test program of tests/mpi/test_mpi.py: every call libnnprof_mpi.so
 * intercepts, a known number of times with known sizes, on 4 ranks (the test holds the same
 * plan and the expected records, computed by hand). The program checks the data it receives
 * and exits 1 on a wrong value, so a wrapper that broke an MPI call fails the test too. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RANKS         4
#define SEND_REPS     3
#define SEND_COUNT    100
#define SEND_TAG      11
#define SR_REPS       2
#define SR_COUNT      50
#define SR_TAG        33
#define NB_PAIRS      8
#define NB_COUNT      200
#define NB_TAG_BASE   20
#define AR_REPS       3
#define AR_COUNT      1000
#define BC_REPS       2
#define BC_COUNT      64
#define BC_ROOT       1
#define RED_COUNT     10
#define RED_ROOT      2
#define AG_COUNT      8
#define A2A_COUNT     4
#define RS_COUNT      2
#define RSB_COUNT     3
#define GATHER_COUNT  5
#define GATHER_ROOT   0
#define SCATTER_COUNT 6
#define SCATTER_ROOT  3
#define BARRIERS      2
#define IAR_COUNT     500
#define IBC_COUNT     32
#define IRED_COUNT    7
#define IRED_ROOT     1
#define IAG_COUNT     2
#define IA2A_COUNT    3
#define IRSB_COUNT    1
#define SUB_AR_COUNT  16
#define SUB_COUNT     5
#define SUB_TAG       44

static int rank, size, failures;

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "mpi_calls: rank %d: wrong data after %s\n", rank, what);
        failures++;
    }
}

static void point_to_point(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int ibuf[SEND_COUNT], ibuf_in[SEND_COUNT];
    float fbuf[SR_COUNT], fbuf_in[SR_COUNT];
    static double dout[NB_PAIRS][NB_COUNT], din[NB_PAIRS][NB_COUNT];

    for (int i = 0; i < SEND_COUNT; i++)
        ibuf[i] = rank * 1000 + i;
    /* Even ranks send first, odd ranks receive first: a ring without deadlock. */
    for (int r = 0; r < SEND_REPS; r++) {
        if (rank % 2 == 0) {
            MPI_Send(ibuf, SEND_COUNT, MPI_INT, right, SEND_TAG, MPI_COMM_WORLD);
            MPI_Recv(ibuf_in, SEND_COUNT, MPI_INT, left, SEND_TAG, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(ibuf_in, SEND_COUNT, MPI_INT, left, SEND_TAG, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            MPI_Send(ibuf, SEND_COUNT, MPI_INT, right, SEND_TAG, MPI_COMM_WORLD);
        }
        check(ibuf_in[7] == left * 1000 + 7, "MPI_Recv");
    }
    for (int i = 0; i < SR_COUNT; i++)
        fbuf[i] = (float)(rank + i);
    for (int r = 0; r < SR_REPS; r++) {
        MPI_Sendrecv(fbuf, SR_COUNT, MPI_FLOAT, right, SR_TAG, fbuf_in, SR_COUNT, MPI_FLOAT, left,
                     SR_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check(fbuf_in[3] == (float)(left + 3), "MPI_Sendrecv");
    }
    /* Isend/Irecv pairs, each completed by another call. */
    for (int k = 0; k < NB_PAIRS; k++) {
        MPI_Request req[2];
        MPI_Status st[2];
        int flag = 0, done = 0, idx, out, ids[2];
        for (int i = 0; i < NB_COUNT; i++)
            dout[k][i] = rank * 10.0 + k;
        MPI_Irecv(din[k], NB_COUNT, MPI_DOUBLE, left, NB_TAG_BASE + k, MPI_COMM_WORLD, &req[0]);
        MPI_Isend(dout[k], NB_COUNT, MPI_DOUBLE, right, NB_TAG_BASE + k, MPI_COMM_WORLD, &req[1]);
        switch (k) {
        case 0:
            MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
            break;
        case 1:
            MPI_Wait(&req[0], MPI_STATUS_IGNORE);
            MPI_Wait(&req[1], &st[1]);
            break;
        case 2:
            for (int i = 0; i < 2; i++) {
                flag = 0;
                while (!flag)
                    MPI_Test(&req[i], &flag, MPI_STATUS_IGNORE);
            }
            break;
        case 3:
            MPI_Waitany(2, req, &idx, MPI_STATUS_IGNORE);
            MPI_Waitany(2, req, &idx, &st[0]);
            break;
        case 4:
            while (done < 2) {
                MPI_Waitsome(2, req, &out, ids, st);
                done += out == MPI_UNDEFINED ? 2 : out;
            }
            break;
        case 5:
            while (!flag)
                MPI_Testall(2, req, &flag, st);
            break;
        case 6:
            while (done < 2) {
                MPI_Testany(2, req, &idx, &flag, MPI_STATUS_IGNORE);
                if (flag && idx != MPI_UNDEFINED)
                    done++;
                else if (flag)
                    done = 2;
            }
            break;
        default:
            while (done < 2) {
                MPI_Testsome(2, req, &out, ids, MPI_STATUSES_IGNORE);
                done += out == MPI_UNDEFINED ? 2 : out;
            }
            break;
        }
        check(din[k][5] == left * 10.0 + k, "Isend/Irecv");
    }
}

static void collectives(void)
{
    static double d[AR_COUNT], d_out[AR_COUNT];
    static int buf[64], out[64];
    int counts[RANKS], displs[RANKS], rcounts[RANKS], rdispls[RANKS];
    char c[BC_COUNT];
    float f[RANKS * RSB_COUNT], g[RSB_COUNT];

    for (int i = 0; i < AR_COUNT; i++)
        d[i] = rank + 1;
    for (int r = 0; r < AR_REPS; r++) {
        MPI_Allreduce(d, d_out, AR_COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        check(d_out[9] == size * (size + 1) / 2, "MPI_Allreduce");
    }
    for (int r = 0; r < BC_REPS; r++) {
        memset(c, rank == BC_ROOT ? 'x' : 0, sizeof(c));
        MPI_Bcast(c, BC_COUNT, MPI_CHAR, BC_ROOT, MPI_COMM_WORLD);
        check(c[BC_COUNT - 1] == 'x', "MPI_Bcast");
    }
    for (int i = 0; i < 64; i++)
        buf[i] = rank;
    MPI_Reduce(buf, out, RED_COUNT, MPI_INT, MPI_SUM, RED_ROOT, MPI_COMM_WORLD);
    check(rank != RED_ROOT || out[0] == size * (size - 1) / 2, "MPI_Reduce");
    MPI_Allgather(buf, AG_COUNT, MPI_INT, out, AG_COUNT, MPI_INT, MPI_COMM_WORLD);
    check(out[AG_COUNT * (size - 1)] == size - 1, "MPI_Allgather");
    for (int i = 0, off = 0; i < size; i++) {
        counts[i] = i + 1;
        displs[i] = off;
        off += i + 1;
    }
    MPI_Allgatherv(buf, rank + 1, MPI_INT, out, counts, displs, MPI_INT, MPI_COMM_WORLD);
    check(out[displs[size - 1]] == size - 1, "MPI_Allgatherv");
    {
        double a[RANKS * A2A_COUNT], b[RANKS * A2A_COUNT];
        for (int i = 0; i < size * A2A_COUNT; i++)
            a[i] = rank;
        MPI_Alltoall(a, A2A_COUNT, MPI_DOUBLE, b, A2A_COUNT, MPI_DOUBLE, MPI_COMM_WORLD);
        check(b[A2A_COUNT * (size - 1)] == size - 1, "MPI_Alltoall");
    }
    /* Alltoallv: rank j gets j + 1 elements from everyone. */
    for (int j = 0, so = 0, ro = 0; j < size; j++) {
        counts[j] = j + 1;
        displs[j] = so;
        so += j + 1;
        rcounts[j] = rank + 1;
        rdispls[j] = ro;
        ro += rank + 1;
    }
    MPI_Alltoallv(buf, counts, displs, MPI_INT, out, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD);
    check(out[rdispls[size - 1]] == size - 1, "MPI_Alltoallv");
    for (int i = 0; i < size; i++)
        rcounts[i] = RS_COUNT;
    for (int i = 0; i < RANKS * RSB_COUNT; i++)
        f[i] = 1.0f;
    MPI_Reduce_scatter(f, g, rcounts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    check(g[0] == (float)size, "MPI_Reduce_scatter");
    MPI_Reduce_scatter_block(f, g, RSB_COUNT, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    check(g[RSB_COUNT - 1] == (float)size, "MPI_Reduce_scatter_block");
    MPI_Gather(buf, GATHER_COUNT, MPI_INT, out, GATHER_COUNT, MPI_INT, GATHER_ROOT, MPI_COMM_WORLD);
    check(rank != GATHER_ROOT || out[GATHER_COUNT * (size - 1)] == size - 1, "MPI_Gather");
    for (int i = 0; i < 64; i++)
        buf[i] = i / SCATTER_COUNT;
    MPI_Scatter(buf, SCATTER_COUNT, MPI_INT, out, SCATTER_COUNT, MPI_INT, SCATTER_ROOT,
                MPI_COMM_WORLD);
    check(out[0] == rank, "MPI_Scatter");
    for (int r = 0; r < BARRIERS; r++)
        MPI_Barrier(MPI_COMM_WORLD);
}

static void nonblocking_collectives(void)
{
    static float f[IAR_COUNT], f_out[IAR_COUNT];
    int buf[64], out[64];
    char c[IBC_COUNT];
    MPI_Request req;

    for (int i = 0; i < IAR_COUNT; i++)
        f[i] = 1.0f;
    for (int i = 0; i < 64; i++)
        buf[i] = rank;
    MPI_Iallreduce(f, f_out, IAR_COUNT, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check(f_out[0] == (float)size, "MPI_Iallreduce");
    memset(c, rank == 0 ? 'y' : 0, sizeof(c));
    MPI_Ibcast(c, IBC_COUNT, MPI_BYTE, 0, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check(c[1] == 'y', "MPI_Ibcast");
    MPI_Ireduce(buf, out, IRED_COUNT, MPI_INT, MPI_SUM, IRED_ROOT, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check(rank != IRED_ROOT || out[0] == size * (size - 1) / 2, "MPI_Ireduce");
    MPI_Iallgather(buf, IAG_COUNT, MPI_INT, out, IAG_COUNT, MPI_INT, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check(out[IAG_COUNT * (size - 1)] == size - 1, "MPI_Iallgather");
    MPI_Ialltoall(buf, IA2A_COUNT, MPI_INT, out, IA2A_COUNT, MPI_INT, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check(out[IA2A_COUNT] == 1, "MPI_Ialltoall");
    MPI_Ireduce_scatter_block(buf, out, IRSB_COUNT, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check(out[0] == size * (size - 1) / 2, "MPI_Ireduce_scatter_block");
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
}

/* A communicator of the even and one of the odd ranks: its group is named by its members
 * and its peers are reported as MPI_COMM_WORLD ranks. */
static void sub_communicator(void)
{
    MPI_Comm sub;
    int sub_rank, in[SUB_AR_COUNT], out[SUB_AR_COUNT];
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &sub);
    MPI_Comm_rank(sub, &sub_rank);
    for (int i = 0; i < SUB_AR_COUNT; i++)
        in[i] = rank;
    MPI_Allreduce(in, out, SUB_AR_COUNT, MPI_INT, MPI_SUM, sub);
    check(out[0] == (rank % 2 == 0 ? 2 : 4), "sub-communicator MPI_Allreduce");
    if (sub_rank == 0)
        MPI_Send(in, SUB_COUNT, MPI_INT, 1, SUB_TAG, sub);
    else if (sub_rank == 1)
        MPI_Recv(out, SUB_COUNT, MPI_INT, 0, SUB_TAG, sub, MPI_STATUS_IGNORE);
    MPI_Comm_free(&sub);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != RANKS) {
        if (rank == 0)
            fprintf(stderr, "mpi_calls: run me on %d ranks, not %d\n", RANKS, size);
        MPI_Finalize();
        return 2;
    }
    point_to_point();
    collectives();
    nonblocking_collectives();
    sub_communicator();
    MPI_Finalize();
    if (rank == 0 && failures == 0)
        printf("mpi_calls: all calls done on %d ranks\n", size);
    return failures ? 1 : 0;
}
