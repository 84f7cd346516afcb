/* gen_cluster.c - a synthetic cluster for bench_cluster (issue 14): N ranks of S steps,
 * recorded through the public API exactly as `mpirun -np N nnprof run` would leave them
 * (one raw directory per rank under OUT/profiler, with info.json's rank, host and
 * clock_sync). Each step: an iteration interval, OPS compute ops with FLOPs, an all-reduce
 * over all ranks (everyone leaves when the last one has arrived, plus the transfer), and a
 * ring exchange (each rank receives BYTES from the rank before it). Realistic skew: every
 * duration jitters by a few percent, each rank's clock is off by up to +-50 ms (measured
 * back, as the MPI library does, into clock_sync), and ranks run 8 per host (shared memory
 * inside a host, network between hosts). Injected: one slow rank (compute x SLOW_FACTOR)
 * and one slow link (half the bandwidth of the other links of its kind).
 *
 * usage: gen_cluster OUT N_RANKS [STEPS] [OPS_PER_STEP] [JOBS]
 * prints: "slow_rank R" and "slow_link A B" (what bench_cluster must find). */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nnprof/nnprof.h"

#define RANKS_PER_HOST      8
#define STEP_NS             20000000LL /* every step spans 20 ms on the reference clock */
#define FIRST_STEP_NS       1000000000LL
#define INTERVAL_NS         200000LL /* data loading before the forward pass */
#define OP_NS               250000LL /* one compute op */
#define OP_FLOPS            2000000000ULL
#define SLOW_FACTOR         1.4 /* the slow rank's compute */
#define AR_BYTES            67108864ULL
#define AR_XFER_NS          1000000LL /* all-reduce transfer after the last rank arrives */
#define P2P_BYTES           4000000ULL
#define P2P_GAP_NS          100000LL
#define SHM_GBPS            10.0 /* bytes per ns */
#define NET_GBPS            5.0
#define SLOW_LINK           0.5        /* the slow link's share of its kind's bandwidth */
#define JITTER              0.03       /* +-3 % on every duration */
#define SKEW_NS             50000000LL /* clocks off by up to +-50 ms */
#define SYNC_UNCERTAINTY_NS 2000
#define DEFAULT_STEPS       100
#define DEFAULT_OPS         32
#define MAX_RANKS           4096

typedef struct plan {
    int n, steps, ops, slow_rank, slow_src, slow_dst;
    const char *out;
} plan_t;

/* splitmix64: a reproducible stream per (rank, step, what). */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* A factor in [1 - JITTER, 1 + JITTER] for (rank, step, what). */
static double jitter(int rank, int step, int what)
{
    uint64_t h = mix(((uint64_t)rank << 40) ^ ((uint64_t)step << 16) ^ (uint64_t)what);
    return 1.0 + JITTER * (2.0 * (double)(h >> 11) / 9007199254740992.0 - 1.0);
}

static int64_t op_ns(const plan_t *p, int rank, int step, int op)
{
    double f = rank == p->slow_rank ? SLOW_FACTOR : 1.0;
    return (int64_t)(OP_NS * f * jitter(rank, step, 100 + op));
}

/* When rank enters the step's all-reduce (after its interval and ops), from the step start. */
static int64_t entry_ns(const plan_t *p, int rank, int step)
{
    int64_t t = (int64_t)(INTERVAL_NS * jitter(rank, step, 1));
    for (int k = 0; k < p->ops; k++)
        t += op_ns(p, rank, step, k);
    return t;
}

static bool same_host(int a, int b)
{
    return a / RANKS_PER_HOST == b / RANKS_PER_HOST;
}

/* The receive of link src -> dst in a step: its duration. */
static int64_t link_ns(const plan_t *p, int src, int dst, int step)
{
    double bw = same_host(src, dst) ? SHM_GBPS : NET_GBPS;
    if (src == p->slow_src && dst == p->slow_dst)
        bw *= SLOW_LINK;
    return (int64_t)((double)P2P_BYTES / bw * jitter(dst, step, 2));
}

static int64_t clock_offset(int rank)
{
    return (int64_t)(mix((uint64_t)rank * 7919u) % (2 * SKEW_NS)) - SKEW_NS;
}

/* info.json: the host this rank ran on (the recorder writes the machine's name). */
static int set_host(const char *raw, int rank)
{
    char path[4096 + 16], host[64];
    FILE *f;
    char *text, *out;
    long len;
    cJSON *j;
    snprintf(path, sizeof(path), "%s/info.json", raw);
    f = fopen(path, "rb");
    if (!f)
        return 1;
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    rewind(f);
    text = malloc((size_t)len + 1);
    if (!text || fread(text, 1, (size_t)len, f) != (size_t)len) {
        fclose(f);
        free(text);
        return 1;
    }
    fclose(f);
    text[len] = '\0';
    j = cJSON_Parse(text);
    free(text);
    if (!j)
        return 1;
    snprintf(host, sizeof(host), "node%03d", rank / RANKS_PER_HOST);
    cJSON_ReplaceItemInObject(j, "host", cJSON_CreateString(host));
    out = cJSON_Print(j);
    cJSON_Delete(j);
    f = out ? fopen(path, "wb") : NULL;
    if (!f || fputs(out, f) < 0) {
        free(out);
        if (f)
            fclose(f);
        return 1;
    }
    fclose(f);
    free(out);
    return 0;
}

static int record_rank(const plan_t *p, int r)
{
    nnp_options_t o;
    nnp_session_t *s;
    nnp_op_t op = {0};
    nnp_comm_t ar = {0}, send = {0}, recv = {0};
    int32_t *members;
    int64_t off = clock_offset(r);
    nnp_clock_sync_t cs = {"mpi_pingpong", 0, off, SYNC_UNCERTAINTY_NS, false, 0, "gen_cluster"};
    char raw[4096];
    int left = (r + p->n - 1) % p->n, right = (r + 1) % p->n;

    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", p->out);
    o.rank_id = r;
    o.device_id = r % RANKS_PER_HOST;
    o.rank_size = p->n;
    o.profile_communication = true;
    o.sample_interval_ms = 0;
    if (nnp_session_create(&o, &s) != NNP_OK) {
        fprintf(stderr, "gen_cluster: rank %d: %s\n", r, nnp_last_error());
        return 1;
    }
    snprintf(raw, sizeof(raw), "%s", nnp_session_raw_dir(s));
    members = malloc((size_t)p->n * sizeof(*members));
    if (!members)
        return 1;
    for (int i = 0; i < p->n; i++)
        members[i] = i;
    nnp_comm_group(nnp_intern("world"), members, (uint32_t)p->n, r);
    free(members);
    op.name = nnp_intern("Default/network/MatMul-op1");
    op.type = nnp_intern("MatMul");
    op.flops_matrix = OP_FLOPS;
    ar.name = nnp_intern("MPI_Allreduce");
    ar.kind = NNP_COMM_ALLREDUCE;
    ar.group = nnp_intern("world");
    ar.size_bytes = AR_BYTES;
    ar.peer = -1;
    send.name = nnp_intern("MPI_Send");
    send.kind = NNP_COMM_SEND;
    send.group = ar.group;
    send.size_bytes = P2P_BYTES;
    send.peer = right;
    recv.name = nnp_intern("MPI_Recv");
    recv.kind = NNP_COMM_RECV;
    recv.group = ar.group;
    recv.size_bytes = P2P_BYTES;
    recv.peer = left;
    recv.has_wait = true;
    for (int st = 0; st < p->steps; st++) {
        /* Aligned times, recorded on this rank's clock (minus its offset). */
        int64_t s0 = FIRST_STEP_NS + st * STEP_NS - off;
        int64_t t = s0 + (int64_t)(INTERVAL_NS * jitter(r, st, 1));
        int64_t last = entry_ns(p, p->slow_rank, st); /* the slow rank arrives last */
        int64_t ar_end = s0 + last + (int64_t)(AR_XFER_NS * jitter(0, st, 3));
        int64_t rv = ar_end + P2P_GAP_NS, wait = (int64_t)(P2P_GAP_NS * jitter(r, st, 4) / 4);
        nnp_step_begin_at((uint64_t)st + 1, 0, (uint64_t)s0);
        nnp_fp_start_at((uint64_t)st + 1, (uint64_t)t);
        for (int k = 0; k < p->ops; k++) {
            int64_t d = op_ns(p, r, st, k);
            nnp_op_at(&op, (uint64_t)t, (uint64_t)(t + d));
            t += d;
        }
        nnp_bp_end_at((uint64_t)st + 1, (uint64_t)t);
        nnp_comm_at(&ar, (uint64_t)t, (uint64_t)ar_end);
        nnp_comm_at(&send, (uint64_t)(ar_end + P2P_GAP_NS / 2), (uint64_t)(ar_end + P2P_GAP_NS));
        recv.wait_ns = (uint64_t)wait;
        nnp_comm_at(&recv, (uint64_t)rv, (uint64_t)(rv + wait + link_ns(p, left, r, st)));
        nnp_step_end_at((uint64_t)st + 1, 0, (uint64_t)(s0 + STEP_NS));
    }
    if (nnp_clock_sync_set(&cs) != NNP_OK || nnp_session_destroy(s) != NNP_OK) {
        fprintf(stderr, "gen_cluster: rank %d: %s\n", r, nnp_last_error());
        return 1;
    }
    return set_host(raw, r);
}

int main(int argc, char **argv)
{
    plan_t p;
    int jobs, running = 0, failed = 0, next = 0;
    if (argc < 3) {
        fprintf(stderr, "usage: gen_cluster OUT N_RANKS [STEPS] [OPS_PER_STEP] [JOBS]\n");
        return 2;
    }
    memset(&p, 0, sizeof(p));
    p.out = argv[1];
    p.n = (int)strtol(argv[2], NULL, 10);
    p.steps = argc > 3 ? (int)strtol(argv[3], NULL, 10) : DEFAULT_STEPS;
    p.ops = argc > 4 ? (int)strtol(argv[4], NULL, 10) : DEFAULT_OPS;
    jobs = argc > 5 ? (int)strtol(argv[5], NULL, 10) : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (p.n < 4 || p.n > MAX_RANKS || p.steps < 1 || p.ops < 1 || jobs < 1) {
        fprintf(stderr, "gen_cluster: N_RANKS in [4, %d], STEPS, OPS_PER_STEP, JOBS >= 1\n",
                MAX_RANKS);
        return 2;
    }
    /* The slow rank in the second half; the slow link inside a host, away from it. */
    p.slow_rank = p.n - 3;
    p.slow_src = (p.n / 2 / RANKS_PER_HOST) * RANKS_PER_HOST + 2;
    if (p.slow_src + 1 >= p.n || p.slow_src == p.slow_rank || p.slow_src + 1 == p.slow_rank)
        p.slow_src = 1;
    p.slow_dst = p.slow_src + 1;
    nnp_log_set_level(NNP_LOG_ERROR);
    while (next < p.n || running > 0) {
        int status;
        while (running < jobs && next < p.n) {
            pid_t pid = fork();
            if (pid < 0) {
                perror("gen_cluster: fork");
                return 1;
            }
            if (pid == 0)
                _exit(record_rank(&p, next));
            running++;
            next++;
        }
        if (wait(&status) > 0) {
            running--;
            failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
        }
    }
    if (failed) {
        fprintf(stderr, "gen_cluster: %d ranks failed\n", failed);
        return 1;
    }
    printf("slow_rank %d\nslow_link %d %d\nranks %d\nsteps %d\nops_per_step %d\n", p.slow_rank,
           p.slow_src, p.slow_dst, p.n, p.steps, p.ops);
    return 0;
}
