/* test_cluster.c - the cluster analysis (src/cluster/, docs/CLUSTER.md) on clusters whose
 * every figure is known: four ranks recorded here with exact times (one slow rank, one slow
 * link, clocks shifted by whole seconds and aligned back through clock_sync), and the two
 * corpus clusters (MindInsight's 4-rank pipeline-parallel cluster_propose and
 * msprof-analyze's 8-rank cluster_step_trace_time.csv), whose expected verdicts are computed
 * here from the rules of formats.md 2.6 and the files' own numbers, never from our output.
 * Also: torch_npu rank folders (hand-made, with local ranks and MindSpore's aggregates) and
 * the corpus's CANN collections, ranks taken from the data against folder order; missing,
 * duplicate and damaged ranks, thread counts giving the same bytes, the
 * merged timeline, and the spill/merge machinery with more runs than one merge takes. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cluster/cl_driver.h"
#include "test_util.h"

#define N_RANKS 4
#define N_STEPS 2
/* The synthetic cluster (all ns, on the reference clock): step s begins at T0 + (s-1)*STEP. */
#define T0        5000000000LL
#define STEP      1000000LL
#define FP_AT     10000LL  /* forward starts 10 us into the step: the iteration interval */
#define COMPUTE   400000LL /* compute of ranks 0, 1, 3 */
#define SLOW      600000LL /* compute of rank 2, the slow rank */
#define AR_BYTES  8000000ULL
#define AR_XFER   100000LL /* all-reduce transfer after the last rank arrives */
#define SEND_AT   715000LL
#define SEND_NS   1000LL
#define RECV_AT   720000LL
#define P2P_BYTES 1000000ULL
#define LINK_NS   100000LL /* a normal link: 1 MB in 100 us = 10 GB/s */
#define SLOW_NS   200000LL /* link 1 -> 2: 5 GB/s */
#define SLOW_SRC  1
#define SLOW_DST  2
/* Rank r's clock runs r seconds behind the reference: clock_sync says +r s. */
#define OFFSET_NS    1000000000LL
#define FLOPS_PER_OP 1000000000ULL

static int64_t compute_of(int r)
{
    return r == 2 ? SLOW : COMPUTE;
}

static int64_t link_of(int dst)
{
    return dst == SLOW_DST ? SLOW_NS : LINK_NS;
}

/* ---- recording the synthetic cluster ---- */

static void record_rank(const nnpt_run_t *run, void *arg)
{
    int r = run->rank;
    int64_t off = OFFSET_NS * r;
    int32_t members[N_RANKS] = {0, 1, 2, 3};
    nnp_op_t op = {0};
    nnp_comm_t ar = {0}, send = {0}, recv = {0};
    nnp_clock_sync_t cs = {"test", 0, off, 100, false, 0, "synthetic"};
    (void)arg;
    nnp_comm_group(nnp_intern("world"), members, N_RANKS, r);
    op.name = nnp_intern("Default/MatMul-op1");
    op.type = nnp_intern("MatMul");
    op.flops_matrix = FLOPS_PER_OP;
    ar.name = nnp_intern("MPI_Allreduce");
    ar.kind = NNP_COMM_ALLREDUCE;
    ar.group = nnp_intern("world");
    ar.size_bytes = AR_BYTES;
    ar.peer = -1;
    send.name = nnp_intern("MPI_Send");
    send.kind = NNP_COMM_SEND;
    send.group = ar.group;
    send.size_bytes = P2P_BYTES;
    send.peer = (r + 1) % N_RANKS;
    recv.name = nnp_intern("MPI_Recv");
    recv.kind = NNP_COMM_RECV;
    recv.group = ar.group;
    recv.size_bytes = P2P_BYTES;
    recv.peer = (r + N_RANKS - 1) % N_RANKS;
    recv.has_wait = true;
    recv.wait_ns = 0;
    for (int s = 0; s < N_STEPS; s++) {
        /* Times on the reference clock, recorded on this rank's clock (minus its offset). */
        int64_t st = T0 + s * STEP - off, c = compute_of(r);
        int64_t ar_end = st + FP_AT + SLOW + AR_XFER; /* everyone leaves when rank 2 is done */
        nnp_step_begin_at((uint64_t)s + 1, 0, (uint64_t)st);
        nnp_fp_start_at((uint64_t)s + 1, (uint64_t)(st + FP_AT));
        nnp_op_at(&op, (uint64_t)(st + FP_AT), (uint64_t)(st + FP_AT + c));
        nnp_bp_end_at((uint64_t)s + 1, (uint64_t)(st + FP_AT + c));
        nnp_comm_at(&ar, (uint64_t)(st + FP_AT + c), (uint64_t)ar_end);
        nnp_comm_at(&send, (uint64_t)(st + SEND_AT), (uint64_t)(st + SEND_AT + SEND_NS));
        nnp_comm_at(&recv, (uint64_t)(st + RECV_AT), (uint64_t)(st + RECV_AT + link_of(r)));
        nnp_step_end_at((uint64_t)s + 1, 0, (uint64_t)(st + STEP));
    }
    if (nnp_clock_sync_set(&cs) != NNP_OK)
        _exit(6);
}

/* Records ranks (mask of which) with rank_size N_RANKS under out. */
static void record_cluster(const char *out, unsigned mask)
{
    for (int r = 0; r < N_RANKS; r++) {
        nnpt_run_t run;
        if (!(mask & (1u << r)))
            continue;
        memset(&run, 0, sizeof(run));
        run.rank = r;
        run.rank_size = N_RANKS;
        run.communication = true;
        run.record = record_rank;
        nnpt_record_in_child(out, &run, NULL, 0);
    }
}

/* ---- helpers ---- */

static char *out_file(const char *dir, const char *name)
{
    char p[8192];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    return nnpt_read_file(p);
}

static cJSON *out_json(const char *dir, const char *name)
{
    char *t = out_file(dir, name);
    cJSON *j;
    assert_non_null(t);
    j = cJSON_Parse(t);
    free(t);
    assert_non_null(j);
    return j;
}

static int run_cluster(const char *data, const char *out, int threads, bool timeline)
{
    nnp_cl_opts_t o;
    nnp_cl_report_t rep;
    nnp_cl_dist_t d;
    uint8_t sel[NNP_CL_MAX_RANKS];
    memset(&o, 0, sizeof(o));
    memset(sel, 0, sizeof(sel));
    snprintf(o.out_dir, sizeof(o.out_dir), "%s", out);
    o.threads = threads;
    o.quiet = true;
    o.timeline = timeline;
    o.timeline_all = timeline;
    o.timeline_ranks = sel;
    nnp__cl_dist_local(&d);
    return nnp__cluster_run(data, &o, &d, &rep);
}

static const cJSON *verdict(const cJSON *advice, const char *id)
{
    const cJSON *v;
    cJSON_ArrayForEach(v, cJSON_GetObjectItem(advice, "verdicts"))
    {
        if (strcmp(cJSON_GetObjectItem(v, "id")->valuestring, id) == 0)
            return v;
    }
    fail_msg("verdict %s missing", id);
    return NULL;
}

static double ev(const cJSON *v, const char *key)
{
    const cJSON *e = cJSON_GetObjectItem(cJSON_GetObjectItem(v, "evidence"), key);
    if (!cJSON_IsNumber(e))
        fail_msg("evidence %s missing", key);
    return e->valuedouble;
}

static bool fired(const cJSON *v)
{
    return cJSON_IsTrue(cJSON_GetObjectItem(v, "fired"));
}

static bool blames(const cJSON *v, int rank)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(v, "ranks"))
    {
        if (r->valueint == rank)
            return true;
    }
    return false;
}

/* The CSV row of a rank and step, "" when absent. */
static bool csv_has(const char *csv, const char *row)
{
    return strstr(csv, row) != NULL;
}

/* Skips the test when the corpus is not there, removing and freeing its folder first. */
static void need_corpus(char *dir)
{
    if (nnpt_have_corpus())
        return;
    nnpt_rm_rf(dir);
    free(dir);
    skip();
}

/* ---- the synthetic cluster ---- */

static void test_synthetic_step_rows(void **state)
{
    char *dir = nnpt_mkdtemp(), out[4096], *csv, row[512];
    (void)state;
    record_cluster(dir, 0xFu);
    snprintf(out, sizeof(out), "%s/out", dir);
    assert_int_equal(run_cluster(dir, out, 2, false), NNP_OK);
    csv = out_file(out, "cluster_step_trace_time.csv");
    assert_non_null(csv);
    assert_true(csv_has(csv, "Step,Type,Index,Computing,Communication(Not Overlapped),Overlapped,"
                             "Communication,Free,Stage,Bubble,Communication(Not Overlapped and "
                             "Exclude Receive),Preparing\n"));
    for (int r = 0; r < N_RANKS; r++) {
        for (int s = 1; s <= N_STEPS; s++) {
            /* Computing = the op; communication = all-reduce (from the end of the rank's
             * compute to the slow rank's end + transfer) + the send + the receive, none
             * overlapped; Free = the rest of the 1 ms step; Bubble = the receive; Stage =
             * Free + Computing + Communication(Not Overlapped) - Bubble; Preparing = the
             * 10 us before the first op. */
            int64_t c = compute_of(r), link = link_of(r);
            int64_t comm = (FP_AT + SLOW + AR_XFER) - (FP_AT + c) + SEND_NS + link;
            int64_t freet = STEP - c - comm;
            snprintf(row, sizeof(row), "%d,rank,%d,%.3f,%.3f,0.000,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n",
                     s, r, c / 1e3, comm / 1e3, comm / 1e3, freet / 1e3,
                     (freet + c + comm - link) / 1e3, link / 1e3, (comm - link) / 1e3, FP_AT / 1e3);
            if (!csv_has(csv, row))
                fail_msg("row missing: %s in\n%s", row, csv);
        }
    }
    /* One stage (all ranks): per step the column-wise maximum. */
    snprintf(row, sizeof(row),
             "1,stage,\"(0, 1, 2, 3)\",%.3f,%.3f,0.000,%.3f,%.3f,%.3f,%.3f,%.3f,"
             "%.3f\n",
             SLOW / 1e3, 401.0, 401.0, 199.0, 900.0, 200.0, 301.0, 10.0);
    assert_true(csv_has(csv, row));
    free(csv);
    nnpt_rm_rf(dir);
    free(dir);
}

static void test_synthetic_verdicts(void **state)
{
    char *dir = nnpt_mkdtemp(), out[4096];
    cJSON *a;
    const cJSON *v;
    double total;
    (void)state;
    record_cluster(dir, 0xFu);
    snprintf(out, sizeof(out), "%s/out", dir);
    assert_int_equal(run_cluster(dir, out, 1, false), NNP_OK);
    a = out_json(out, "cluster_advice.json");

    /* msprof-analyze: every (step, rank) has Computing + Communication(Not Overlapped) +
     * Free = the 1 ms step, so the mean is 1 ms; Computing spreads 600 - 400 us = 0.2 of it
     * (> 0.05: rank 2 computes longest), exposed communication 401 - 301 us = 0.1 (rank 2
     * has the least: the others wait for it), Free 199 - 99 us = 0.1. */
    v = verdict(a, "slow_rank.msprof_analyze");
    assert_true(fired(v));
    total = STEP / 1e3;
    assert_true(fabs(ev(v, "mean_total_us") - total) < 1e-9);
    assert_true(fabs(ev(v, "computing_ratio") - (SLOW - COMPUTE) / (double)STEP) < 1e-12);
    assert_true(fabs(ev(v, "computing_max_min_diff_ms") - 0.2) < 1e-12);
    assert_int_equal((int)ev(v, "computing_max_rank"), 2);
    assert_true(fabs(ev(v, "communication_not_overlapped_ratio") - 0.1) < 1e-12);
    assert_int_equal((int)ev(v, "communication_not_overlapped_min_rank"), 2);
    assert_true(blames(v, 2));

    /* msprof's wait ratio: in each all-reduce, ranks 0, 1, 3 enter at 410 us and wait
     * 200 us for rank 2 (entering at 610 us) of a 300 us op: 0.6667 > 0.2, synchronisation
     * too; rank 2 waits 0: it makes the others wait, in both steps. Without the clock
     * offsets rank 3's entry would be 3 s early. */
    v = verdict(a, "slow_rank.msprof_wait_ratio");
    assert_true(fired(v));
    assert_int_equal((int)ev(v, "collective_ops"), N_STEPS);
    assert_int_equal((int)ev(v, "ops_slow_rank"), N_STEPS);
    assert_int_equal((int)ev(v, "worst_slow_rank"), 2);
    assert_true(fabs(ev(v, "worst_wait_ratio") - 0.6667) < 1e-12);
    assert_true(blames(v, 2));

    /* MindInsight FLOPS: 1 GFLOP per op, 400 us on ranks 0, 1, 3 (2.5 TFLOP/s), 600 us on
     * rank 2 (1.6667 TFLOP/s); the mean 2.2917: rank 2 is 27.27 % below (> 20 %). */
    v = verdict(a, "slow_rank.mindinsight_flops");
    assert_true(fired(v));
    assert_int_equal((int)ev(v, "rank_id"), 2);
    {
        double f0 = FLOPS_PER_OP / (COMPUTE / 1e9), f2 = FLOPS_PER_OP / (SLOW / 1e9);
        double mean = (3 * f0 + f2) / 4, pct = round((mean - f2) / mean * 1e4) / 1e2;
        assert_true(fabs(ev(v, "percent") - pct) < 1e-9);
    }
    /* MindInsight's iteration interval: 10 us everywhere, nothing 20 % above. */
    assert_false(fired(verdict(a, "slow_rank.mindinsight_step_interval")));

    /* Slow link: SHM links 10, 5 (1 -> 2), 10, 10 GB/s; mean 8.75; 1 -> 2 is 42.86 % below,
     * with large packets (1 MB > 0.5 MB): the link itself. */
    v = verdict(a, "slow_link.mindinsight");
    assert_true(fired(v));
    assert_true(fabs(ev(v, "SHM_mean_bandwidth") - 8.75) < 1e-12);
    {
        const cJSON *l = cJSON_GetArrayItem(
            cJSON_GetObjectItem(cJSON_GetObjectItem(v, "evidence"), "slow_links"), 0);
        assert_non_null(l);
        assert_int_equal(cJSON_GetObjectItem(l, "src_rank")->valueint, SLOW_SRC);
        assert_int_equal(cJSON_GetObjectItem(l, "des_rank")->valueint, SLOW_DST);
        assert_true(fabs(cJSON_GetObjectItem(l, "val")->valuedouble - 5.0) < 1e-12);
        assert_true(fabs(cJSON_GetObjectItem(l, "percent")->valuedouble - 42.86) < 1e-12);
        assert_true(fabs(cJSON_GetObjectItem(l, "large_packet_ratio")->valuedouble - 1.0) < 1e-12);
        assert_non_null(strstr(cJSON_GetObjectItem(v, "summary")->valuestring, "shared-memory"));
    }
    /* The text names the same. */
    {
        char *txt = out_file(out, "cluster_advice.txt");
        assert_non_null(strstr(txt, "[FOUND] slow_link.mindinsight"));
        assert_non_null(strstr(txt, "SHM link 1-2"));
        free(txt);
    }
    cJSON_Delete(a);
    nnpt_rm_rf(dir);
    free(dir);
}

static void test_synthetic_matrix_and_comm(void **state)
{
    char *dir = nnpt_mkdtemp(), out[4096];
    cJSON *m, *c, *g;
    const cJSON *op, *rank, *ti;
    (void)state;
    record_cluster(dir, 0xFu);
    snprintf(out, sizeof(out), "%s/out", dir);
    assert_int_equal(run_cluster(dir, out, 2, false), NNP_OK);

    /* The receivers report the ring's links: 1 MB each, 100 us (1 -> 2: 200 us). */
    m = out_json(out, "cluster_communication_matrix.json");
    for (int s = 1; s <= N_STEPS; s++) {
        char step[16];
        snprintf(step, sizeof(step), "step%d", s);
        op = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "(0, 1, 2, 3)"), step),
                                 "MPI_Recv_0@world");
        assert_non_null(op);
        assert_int_equal(cJSON_GetArraySize(op), N_RANKS);
        for (int r = 0; r < N_RANKS; r++) {
            char key[16];
            const cJSON *l;
            int dst = (r + 1) % N_RANKS;
            snprintf(key, sizeof(key), "%d-%d", r, dst);
            l = cJSON_GetObjectItem(op, key);
            assert_non_null(l);
            assert_string_equal(cJSON_GetObjectItem(l, "Transport Type")->valuestring, "SHM");
            assert_true(cJSON_GetObjectItem(l, "Transit Size(MB)")->valuedouble == 1.0);
            assert_true(cJSON_GetObjectItem(l, "Transit Time(ms)")->valuedouble ==
                        link_of(dst) / 1e6);
            assert_true(cJSON_GetObjectItem(l, "Bandwidth(GB/s)")->valuedouble ==
                        (double)P2P_BYTES / (double)link_of(dst));
        }
    }
    cJSON_Delete(m);

    /* Communication time info: the all-reduce of rank 0 in step 1 (reference clock). */
    c = out_json(out, "cluster_communication.json");
    op = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(c, "(0, 1, 2, 3)"), "step1"),
                             "MPI_Allreduce_0@world");
    assert_non_null(op);
    rank = cJSON_GetObjectItem(op, "0");
    ti = cJSON_GetObjectItem(rank, "Communication Time Info");
    assert_true(cJSON_GetObjectItem(ti, "Start Timestamp(us)")->valuedouble ==
                (T0 + FP_AT + COMPUTE) / 1e3);
    assert_true(cJSON_GetObjectItem(ti, "Elapse Time(ms)")->valuedouble == 0.3);
    assert_true(cJSON_GetObjectItem(ti, "Wait Time(ms)")->valuedouble == 0.2);
    assert_true(cJSON_GetObjectItem(ti, "Transit Time(ms)")->valuedouble == 0.1);
    assert_true(cJSON_GetObjectItem(ti, "Wait Time Ratio")->valuedouble == 0.6667);
    /* Rank 2 arrives last: no wait, 80 GB/s over its 100 us. */
    ti = cJSON_GetObjectItem(cJSON_GetObjectItem(op, "2"), "Communication Time Info");
    assert_true(cJSON_GetObjectItem(ti, "Wait Time(ms)")->valuedouble == 0.0);
    {
        const cJSON *bw =
            cJSON_GetObjectItem(cJSON_GetObjectItem(op, "2"), "Communication Bandwidth Info");
        const cJSON *shm = cJSON_GetObjectItem(bw, "SHM");
        assert_true(cJSON_GetObjectItem(shm, "Bandwidth(GB/s)")->valuedouble == 80.0);
    }
    cJSON_Delete(c);

    g = out_json(out, "communication_group.json");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(g, "collective")), 1);
    assert_int_equal(
        cJSON_GetArraySize(cJSON_GetArrayItem(cJSON_GetObjectItem(g, "collective"), 0)), N_RANKS);
    cJSON_Delete(g);
    nnpt_rm_rf(dir);
    free(dir);
}

static void test_synthetic_mindinsight_views(void **state)
{
    char *dir = nnpt_mkdtemp(), out[4096], *csv;
    cJSON *mi;
    const cJSON *step, *info;
    (void)state;
    record_cluster(dir, 0xFu);
    snprintf(out, sizeof(out), "%s/out", dir);
    assert_int_equal(run_cluster(dir, out, 2, false), NNP_OK);
    /* MindInsight's step trace: [interval, fp+bp, tail, total] in ms; step 0 = average. */
    mi = out_json(out, "cluster_step_trace.json");
    assert_string_equal(cJSON_GetObjectItem(mi, "parallel-mode")->valuestring, "data-parallel");
    assert_int_equal(cJSON_GetObjectItem(mi, "total_step_num")->valueint, N_STEPS);
    step = cJSON_GetArrayItem(cJSON_GetObjectItem(mi, "steps"), 1);
    assert_int_equal(cJSON_GetObjectItem(step, "step_id")->valueint, 1);
    info = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(step, "info"), 2),
                               "step_trace_info");
    assert_true(cJSON_GetArrayItem(info, 0)->valuedouble == 0.01);
    assert_true(cJSON_GetArrayItem(info, 1)->valuedouble == 0.6);
    assert_true(cJSON_GetArrayItem(info, 2)->valuedouble == 0.39);
    assert_true(cJSON_GetArrayItem(info, 3)->valuedouble == 1.0);
    cJSON_Delete(mi);
    /* MindSpore's file per rank: computation and exposed communication in ms, then the
     * average row. */
    csv = out_file(out, "ascend_cluster_analyse_data-parallel_1_4_2.csv");
    assert_non_null(csv);
    assert_string_equal(csv, "computation_time,communication_alone_time\n0.6000,0.3010\n"
                             "0.6000,0.3010\n0.6000,0.3010\n");
    free(csv);
    nnpt_rm_rf(dir);
    free(dir);
}

/* Every output file of two runs is the same bytes (threads 1 and 2). */
static void assert_same_outputs(const char *a, const char *b)
{
    static const char *const files[] = {"cluster_step_trace_time.csv",
                                        "cluster_communication.json",
                                        "cluster_communication_matrix.json",
                                        "communication_group.json",
                                        "cluster_analysis.db",
                                        "cluster_step_trace.json",
                                        "cluster_advice.json",
                                        "cluster_advice.txt",
                                        NULL};
    for (int i = 0; files[i]; i++) {
        char pa[8192], pb[8192];
        FILE *fa, *fb;
        int ca, cb;
        snprintf(pa, sizeof(pa), "%s/%s", a, files[i]);
        snprintf(pb, sizeof(pb), "%s/%s", b, files[i]);
        fa = fopen(pa, "rb");
        fb = fopen(pb, "rb");
        assert_non_null(fa);
        assert_non_null(fb);
        do {
            ca = fgetc(fa);
            cb = fgetc(fb);
            if (ca != cb)
                fail_msg("%s differs", files[i]);
        } while (ca != EOF);
        fclose(fa);
        fclose(fb);
    }
}

static void test_threads_same_bytes(void **state)
{
    char *dir = nnpt_mkdtemp(), o1[4096], o2[4096];
    (void)state;
    record_cluster(dir, 0xFu);
    snprintf(o1, sizeof(o1), "%s/t1", dir);
    snprintf(o2, sizeof(o2), "%s/t4", dir);
    assert_int_equal(run_cluster(dir, o1, 1, false), NNP_OK);
    assert_int_equal(run_cluster(dir, o2, 4, false), NNP_OK);
    assert_same_outputs(o1, o2);
    nnpt_rm_rf(dir);
    free(dir);
}

static void test_timeline_merged(void **state)
{
    char *dir = nnpt_mkdtemp(), out[4096];
    cJSON *t;
    const cJSON *e;
    int names = 0, ar3 = 0;
    (void)state;
    record_cluster(dir, 0xFu);
    snprintf(out, sizeof(out), "%s/out", dir);
    assert_int_equal(run_cluster(dir, out, 2, true), NNP_OK);
    t = out_json(out, NNP_CL_TIMELINE_FILE);
    cJSON_ArrayForEach(e, t)
    {
        const char *n = cJSON_GetObjectItem(e, "name")->valuestring;
        int pid = cJSON_GetObjectItem(e, "pid")->valueint;
        if (strcmp(n, "process_name") == 0) {
            const char *pn =
                cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), "name")->valuestring;
            /* "<name> Rank{r}", pid = int(f"{kind}{rank}") */
            if (strcmp(pn, "Communication Rank3") == 0)
                assert_int_equal(pid, 53);
            if (strcmp(pn, "Host Rank1") == 0)
                assert_int_equal(pid, 21);
            names++;
        }
        if (strcmp(n, "MPI_Allreduce") == 0 && pid == 53) {
            /* Rank 3 recorded 3 s behind: on the reference clock its first all-reduce
             * starts at T0 + 10 us + 400 us. */
            double ts = cJSON_GetObjectItem(e, "ts")->valuedouble;
            if (ar3++ == 0)
                assert_true(fabs(ts - (T0 + FP_AT + COMPUTE) / 1e3) < 1e-6);
        }
    }
    assert_true(names >= 3 * N_RANKS);
    assert_int_equal(ar3, N_STEPS);
    cJSON_Delete(t);
    nnpt_rm_rf(dir);
    free(dir);
}

/* ---- torch_npu rank folders and CANN PROF_* collections ---- */

/* msprof-analyze's double_hash of "tp" and "pp" (primes 29 and 131 over the characters),
 * worked out apart from our code: the group names in torch_npu's op keys. */
#define TP_HASH "14929306336204"
#define PP_HASH "14431090129344"

/* Per rank (us): Computing, Communication(Not Overlapped), Free of both steps. */
static const int npu_steps[3][3] = {{1000, 200, 100}, {1500, 100, 100}, {1000, 200, 300}};

static void npu_file(const char *dir, const char *name, const char *text)
{
    free(nnpt_write_file(dir, name, text));
}

/* One communication.json op: time info and one HCCS bandwidth entry. */
static size_t npu_op(char *buf, size_t cap, const char *key, double start, double elapse,
                     double transit, double wait, double sync, double mb, double ms)
{
    return (size_t)snprintf(
        buf, cap,
        "\"%s\": {\"Communication Time Info\": {\"Start Timestamp(us)\": %.3f, "
        "\"Elapse Time(ms)\": %g, \"Transit Time(ms)\": %g, \"Wait Time(ms)\": %g, "
        "\"Synchronization Time(ms)\": %g, \"Idle Time(ms)\": 0}, "
        "\"Communication Bandwidth Info\": {\"HCCS\": {\"Transit Size(MB)\": %g, "
        "\"Transit Time(ms)\": %g, \"Large Packet Ratio\": 1.0, "
        "\"Size Distribution\": {\"%g\": [1, %g]}}}}",
        key, start, elapse, transit, wait, sync, mb, ms, mb, ms);
}

/* Three *_ascend_pt folders whose names sort against their ranks (a = 2, b = 1, c = 0):
 * rank 0 and 1 all-reduce in group tp (1 -> 0 takes 0.4 ms in step 2: 5 GB/s), rank 0
 * sends 1 MB to rank 2 in group pp (local ranks 0 -> 1; profiler_metadata.json says pp is
 * ranks [2, 0]). Rank 1 also has MindSpore's aggregate "allreduce-top1", which repeats the
 * op and must not count twice. */
static void write_npu_cluster(const char *root)
{
    static const char *const folder[3] = {"c", "b", "a"};
    for (int r = 0; r < 3; r++) {
        char d[1024], o[1100], name[64], comm[4096], mat[4096];
        size_t nc = 0, nm = 0;
        snprintf(d, sizeof(d), "%s/%s_ascend_pt", root, folder[r]);
        snprintf(o, sizeof(o), "%s/ASCEND_PROFILER_OUTPUT", d);
        assert_int_equal(mkdir(d, 0700), 0);
        assert_int_equal(mkdir(o, 0700), 0);
        snprintf(name, sizeof(name), "profiler_info_%d.json", r);
        npu_file(d, name, "{\"config\": {}}");
        npu_file(d, "profiler_metadata.json",
                 "{\"parallel_group_info\": {\"pp\": {\"group_rank\": 0, "
                 "\"global_ranks\": [2, 0]}}}");
        {
            char csv[1024];
            int c = npu_steps[r][0], n = npu_steps[r][1], f = npu_steps[r][2];
            snprintf(csv, sizeof(csv),
                     "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,"
                     "Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive),"
                     "Preparing\n"
                     "1,%d.000,%d.000,50.000,%d.000,%d.000,0.000,0.000,%d.000,0.000\n"
                     "2,%d.000,%d.000,50.000,%d.000,%d.000,0.000,0.000,%d.000,0.000\n",
                     c, n, n + 50, f, n, c, n, n + 50, f, n);
            npu_file(o, "step_trace_time.csv", csv);
        }
        nc += (size_t)snprintf(comm + nc, sizeof(comm) - nc, "{");
        nm += (size_t)snprintf(mat + nm, sizeof(mat) - nm, "{");
        for (int s = 1; s <= 2; s++) {
            double t0 = 1000.0 * s, t1 = s == 1 ? 0.1 : 0.4;
            nc += (size_t)snprintf(comm + nc, sizeof(comm) - nc, "%s\"step%d\": {\"collective\": {",
                                   s > 1 ? ", " : "", s);
            nm += (size_t)snprintf(mat + nm, sizeof(mat) - nm, "%s\"step%d\": {\"collective\": {",
                                   s > 1 ? ", " : "", s);
            if (r == 0) {
                nc += npu_op(comm + nc, sizeof(comm) - nc, "hcom_allReduce__1_0@" TP_HASH, t0, 0.3,
                             0.1, 0.2, 0.1, 2.0, 0.1);
                nc += (size_t)snprintf(comm + nc, sizeof(comm) - nc, "}, \"p2p\": {");
                nc += npu_op(comm + nc, sizeof(comm) - nc, "hcom_send__5_0@" PP_HASH, t0 + 1, 0.05,
                             0.05, 0, 0, 1.0, 0.05);
                nm += (size_t)snprintf(
                    mat + nm, sizeof(mat) - nm,
                    "\"hcom_allReduce__1_0@" TP_HASH "\": {"
                    "\"0-0\": {\"Transport Type\": \"LOCAL\", \"Transit Size(MB)\": 0.5, "
                    "\"Transit Time(ms)\": 0.01, \"Op Name\": \"hcom_allReduce__1_0\"}, "
                    "\"0-1\": {\"Transport Type\": \"HCCS\", \"Transit Size(MB)\": 2.0, "
                    "\"Transit Time(ms)\": 0.1, \"Op Name\": \"hcom_allReduce__1_0\"}}}, "
                    "\"p2p\": {\"hcom_send__5_0@" PP_HASH "\": {\"0-1\": {\"Transport Type\": "
                    "\"HCCS\", \"Transit Size(MB)\": 1.0, \"Transit Time(ms)\": 0.05, "
                    "\"Op Name\": \"hcom_send__5_0\"}}}}");
            } else if (r == 1) {
                nc += npu_op(comm + nc, sizeof(comm) - nc, "hcom_allReduce__1_0@" TP_HASH, t0 + 0.2,
                             0.1, 0.1, 0, 0, 2.0, t1);
                nc += (size_t)snprintf(comm + nc, sizeof(comm) - nc, "}, \"p2p\": {");
                nm += (size_t)snprintf(
                    mat + nm, sizeof(mat) - nm,
                    "\"hcom_allReduce__1_0@" TP_HASH "\": {"
                    "\"1-1\": {\"Transport Type\": \"LOCAL\", \"Transit Size(MB)\": 0.5, "
                    "\"Transit Time(ms)\": 0.01, \"Op Name\": \"hcom_allReduce__1_0\"}, "
                    "\"1-0\": {\"Transport Type\": \"HCCS\", \"Transit Size(MB)\": 2.0, "
                    "\"Transit Time(ms)\": %g, \"Op Name\": \"hcom_allReduce__1_0\"}}, "
                    "\"allreduce-top1@" TP_HASH "\": {\"1-0\": {\"Transport Type\": \"HCCS\", "
                    "\"Transit Size(MB)\": 2.0, \"Transit Time(ms)\": %g, "
                    "\"Op Name\": \"hcom_allReduce__1_0\"}}}, \"p2p\": {}}",
                    t1, t1);
            } else {
                nc += (size_t)snprintf(comm + nc, sizeof(comm) - nc, "}, \"p2p\": {");
                nc += npu_op(comm + nc, sizeof(comm) - nc, "hcom_receive__5_0@" PP_HASH, t0 + 1,
                             0.05, 0.05, 0, 0, 1.0, 0.05);
                nm += (size_t)snprintf(
                    mat + nm, sizeof(mat) - nm,
                    "}, \"p2p\": {\"hcom_receive__5_0@" PP_HASH "\": {\"0-1\": {"
                    "\"Transport Type\": \"HCCS\", \"Transit Size(MB)\": 1.0, "
                    "\"Transit Time(ms)\": 0.05, \"Op Name\": \"hcom_receive__5_0\"}}}}");
            }
            nc += (size_t)snprintf(comm + nc, sizeof(comm) - nc, "}}");
        }
        assert_true(nc + 2 < sizeof(comm) && nm + 2 < sizeof(mat));
        snprintf(comm + nc, sizeof(comm) - nc, "}");
        snprintf(mat + nm, sizeof(mat) - nm, "}");
        npu_file(o, "communication.json", comm);
        npu_file(o, "communication_matrix.json", mat);
    }
}

static const cJSON *jpath(const cJSON *j, const char *a, const char *b, const char *c,
                          const char *d)
{
    const char *k[4] = {a, b, c, d};
    for (int i = 0; i < 4 && j && k[i]; i++)
        j = cJSON_GetObjectItem(j, k[i]);
    return j;
}

static double jnum(const cJSON *j, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(j, key);
    assert_non_null(v);
    return v->valuedouble;
}

static void test_torch_npu_folders(void **state)
{
    char *dir = nnpt_mkdtemp(), out[4096], *csv;
    cJSON *a, *m;
    const cJSON *v, *op, *l;
    (void)state;
    write_npu_cluster(dir);
    snprintf(out, sizeof(out), "%s/out", dir);
    assert_int_equal(run_cluster(dir, out, 2, false), NNP_OK);

    /* Ranks from profiler_info_{rank}.json, whatever the folder order. */
    a = out_json(out, "cluster_advice.json");
    v = cJSON_GetObjectItem(cJSON_GetObjectItem(a, "cluster"), "ranks");
    assert_int_equal(cJSON_GetArraySize(v), 3);
    for (int r = 0; r < 3; r++) {
        const cJSON *x = cJSON_GetArrayItem(v, r);
        assert_int_equal(cJSON_GetObjectItem(x, "rank")->valueint, r);
        assert_non_null(
            strstr(cJSON_GetObjectItem(x, "source")->valuestring, r == 0   ? "/c_ascend_pt"
                                                                  : r == 1 ? "/b_ascend_pt"
                                                                           : "/a_ascend_pt"));
    }

    /* The rank rows as the files give them, and the stage row of the maxima. */
    csv = out_file(out, "cluster_step_trace_time.csv");
    assert_true(csv_has(csv, "1,rank,1,1500.000,100.000,50.000,150.000,100.000,0.000,0.000,"
                             "100.000,0.000"));
    assert_true(csv_has(csv, "2,rank,2,1000.000,200.000,50.000,250.000,300.000,0.000,0.000,"
                             "200.000,0.000"));
    assert_true(csv_has(csv, "1,stage,\"(0, 1, 2)\",1500.000,200.000,50.000,250.000,300.000,"
                             "0.000,0.000,200.000,0.000"));
    free(csv);

    /* msprof-analyze's 5 % rule over the 6 (step, rank) entries: the totals are 1300, 1700
     * and 1500 us, mean 1500; Computing spreads 1500 - 1000 = 500 (0.3333, rank 1 the
     * highest), Communication(Not Overlapped) 200 - 100 = 100 (0.0667, rank 1 the lowest),
     * Free 300 - 100 = 200 (0.1333, rank 2 the highest). */
    v = verdict(a, "slow_rank.msprof_analyze");
    assert_true(fired(v));
    assert_true(ev(v, "mean_total_us") == 1500.0);
    assert_true(fabs(ev(v, "computing_ratio") - 500.0 / 1500.0) < 1e-12);
    assert_int_equal((int)ev(v, "computing_max_rank"), 1);
    assert_true(fabs(ev(v, "communication_not_overlapped_ratio") - 100.0 / 1500.0) < 1e-12);
    assert_int_equal((int)ev(v, "communication_not_overlapped_min_rank"), 1);
    assert_true(fabs(ev(v, "free_ratio") - 200.0 / 1500.0) < 1e-12);
    assert_int_equal((int)ev(v, "free_max_rank"), 2);
    assert_true(blames(v, 1));

    /* msprof's wait ratio: rank 0 waits 0.2 of 0.3 ms (0.2 / (0.2 + 0.1) = 0.6667 > 0.2)
     * in both all-reduces; rank 1 waits 0: rank 1 makes it wait. */
    v = verdict(a, "slow_rank.msprof_wait_ratio");
    assert_true(fired(v));
    assert_int_equal((int)ev(v, "collective_ops"), 2);
    assert_int_equal((int)ev(v, "worst_slow_rank"), 1);
    assert_int_equal((int)ev(v, "worst_waiting_rank"), 0);
    assert_true(fabs(ev(v, "worst_wait_ratio") - 0.6667) < 1e-12);

    /* msprof-analyze's SlowLinkAnalyzer, HCCS per (step, rank): rank 0 3 MB / 0.15 ms = 20
     * both steps, rank 1 2 MB / 0.1 ms = 20 then 2 MB / 0.4 ms = 5, rank 2 1 MB / 0.05 ms =
     * 20; mean 105 / 6 = 17.5, spread 15 / 17.5 >= 0.05: rank 1, step 2. */
    v = verdict(a, "slow_link.msprof_analyze");
    assert_true(fired(v));
    assert_true(ev(v, "HCCS_average_gb_s") == 17.5);
    assert_true(ev(v, "HCCS_min_gb_s") == 5.0);
    assert_int_equal((int)ev(v, "HCCS_min_rank"), 1);
    assert_int_equal((int)ev(v, "HCCS_min_step"), 2);
    assert_true(ev(v, "HCCS_difference_gb_s") == 15.0);

    /* MindInsight's links over the run (self links and the top1 aggregate left out): 0 -> 1
     * 4 MB / 0.2 ms = 20, 1 -> 0 4 MB / 0.5 ms = 8, 0 -> 2 (sender and receiver both report
     * it) 4 MB / 0.2 ms = 20; mean 16: 1 -> 0 is 50 % below. */
    v = verdict(a, "slow_link.mindinsight");
    assert_true(fired(v));
    assert_true(ev(v, "HCCS_mean_bandwidth") == 16.0);
    assert_int_equal((int)ev(v, "HCCS_links"), 3);
    l = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(v, "evidence"), "slow_links"),
                           0);
    assert_int_equal(cJSON_GetObjectItem(l, "src_rank")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItem(l, "des_rank")->valueint, 0);
    assert_true(jnum(l, "val") == 8.0);
    assert_true(jnum(l, "percent") == 50.0);
    cJSON_Delete(a);

    /* The matrix: local ranks of tp mapped through the ranks' links to themselves, those of
     * pp through profiler_metadata.json (local 0 -> 1 is global 0 -> 2); the step's totals
     * leave the top1 aggregate out (2 MB, not 4, in 0.4 ms). */
    m = out_json(out, "cluster_communication_matrix.json");
    op = jpath(m, "(0, 1)", "step2", "hcom_allReduce__1_0@" TP_HASH, NULL);
    assert_int_equal(cJSON_GetArraySize(op), 4);
    l = cJSON_GetObjectItem(op, "1-0");
    assert_true(jnum(l, "Transit Size(MB)") == 2.0);
    assert_true(jnum(l, "Bandwidth(GB/s)") == 5.0);
    assert_string_equal(cJSON_GetObjectItem(l, "Transport Type")->valuestring, "HCCS");
    l = jpath(m, "(0, 1)", "step2", "Total Op Info@" TP_HASH, "1-0");
    assert_true(jnum(l, "Transit Size(MB)") == 2.0);
    assert_true(jnum(l, "Transit Time(ms)") == 0.4);
    l = jpath(m, "(0, 1)", "step2", "allreduce-top1@" TP_HASH, "1-0");
    assert_string_equal(cJSON_GetObjectItem(l, "Op Name")->valuestring, "hcom_allReduce__1_0");
    l = jpath(m, "(0, 2)", "step1", "hcom_send__5_0@" PP_HASH, "0-2");
    assert_true(jnum(l, "Bandwidth(GB/s)") == 20.0);
    l = jpath(m, "(0, 2)", "step1", "Total Op Info@" PP_HASH, "0-2");
    assert_true(jnum(l, "Transit Size(MB)") == 2.0);
    assert_null(jpath(m, "(0, 2)", "step1", "hcom_send__5_0@" PP_HASH, "0-1"));
    cJSON_Delete(m);

    /* The database's matrix table has the totals too: over both steps 1 -> 0 is 4 MB in
     * 0.5 ms (the aggregate left out), 0 -> 2 4 MB in 0.2 ms. */
    {
        char db[4200];
        sqlite3 *h = NULL;
        sqlite3_stmt *st = NULL;
        static const double want[3][4] = {{0, 1, 4, 0.2}, {0, 2, 4, 0.2}, {1, 0, 4, 0.5}};
        int n = 0;
        snprintf(db, sizeof(db), "%s/cluster_analysis.db", out);
        assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_prepare_v2(h,
                                            "SELECT src_rank, dst_rank, SUM(transit_size), "
                                            "SUM(transit_time) FROM ClusterCommunicationMatrix "
                                            "WHERE hccl_op_name LIKE 'Total Op Info@%' AND "
                                            "src_rank <> dst_rank GROUP BY src_rank, dst_rank "
                                            "ORDER BY src_rank, dst_rank",
                                            -1, &st, NULL),
                         SQLITE_OK);
        while (sqlite3_step(st) == SQLITE_ROW) {
            assert_true(n < 3);
            for (int k = 0; k < 4; k++)
                assert_true(fabs(sqlite3_column_double(st, k) - want[n][k]) < 1e-12);
            n++;
        }
        assert_int_equal(n, 3);
        sqlite3_finalize(st);
        sqlite3_close(h);
    }
    nnpt_rm_rf(dir);
    free(dir);
}

/* The corpus's two CANN collections (info.json.0 rank 0, info.json.1 rank 1), behind
 * folder names that sort the other way. */
static void test_corpus_cann_prof(void **state)
{
    char *dir = nnpt_mkdtemp(), cmd[8192], out[4096], *csv;
    cJSON *a, *c;
    const cJSON *ranks;
    (void)state;
    need_corpus(dir);
    snprintf(cmd, sizeof(cmd),
             "ln -s '%s'/mindinsight/profiler/PROF_000001_20230818142704322_COJGGGCANRMICFBC "
             "'%s/PROF_b' && ln -s "
             "'%s'/mindinsight/profiler/PROF_000001_20230818142704567_GQFAMHBKGODKJMLA "
             "'%s/PROF_a'",
             NNPT_CORPUS, dir, NNPT_CORPUS, dir);
    assert_int_equal(nnpt_run_cmd(cmd, NULL, 0), 0);
    snprintf(out, sizeof(out), "%s/out", dir);
    assert_int_equal(run_cluster(dir, out, 2, false), NNP_OK);
    a = out_json(out, "cluster_advice.json");
    ranks = cJSON_GetObjectItem(cJSON_GetObjectItem(a, "cluster"), "ranks");
    assert_int_equal(cJSON_GetArraySize(ranks), 2);
    for (int r = 0; r < 2; r++) {
        const cJSON *x = cJSON_GetArrayItem(ranks, r);
        assert_int_equal(cJSON_GetObjectItem(x, "rank")->valueint, r);
        assert_int_equal(cJSON_GetObjectItem(x, "device_id")->valueint, r);
        assert_string_equal(cJSON_GetObjectItem(x, "format")->valuestring, "cann-msprof");
        /* MANIFEST: 10 iteration files per rank. */
        assert_int_equal(cJSON_GetObjectItem(x, "steps")->valueint, 10);
        assert_non_null(
            strstr(cJSON_GetObjectItem(x, "source")->valuestring, r == 0 ? "/PROF_b" : "/PROF_a"));
    }
    cJSON_Delete(a);
    csv = out_file(out, "cluster_step_trace_time.csv");
    assert_non_null(strstr(csv, "\n10,rank,0,"));
    assert_non_null(strstr(csv, "\n10,rank,1,"));
    free(csv);
    /* The one AllReduce per iteration of both ranks is one group of the two ranks. */
    c = out_json(out, "cluster_communication.json");
    assert_non_null(cJSON_GetObjectItem(c, "(0, 1)"));
    assert_int_equal(cJSON_GetArraySize(c), 1);
    cJSON_Delete(c);
    nnpt_rm_rf(dir);
    free(dir);
}

/* ---- bad inputs ---- */

static void test_missing_rank_named(void **state)
{
    char *dir = nnpt_mkdtemp(), out[8192];
    int rc;
    cJSON *a;
    (void)state;
    record_cluster(dir, 0xBu); /* ranks 0, 1, 3 of 4 */
    rc = nnpt_cli(out, sizeof(out), "cluster -q -o '%s/out' '%s'", dir, dir);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "the data names 4 ranks, but 1 is missing: 2"));
    assert_non_null(strstr(out, "cluster of 3 ranks analysed (1 of the 4 the data names is "
                                "missing)"));
    snprintf(out, sizeof(out), "%s/out", dir);
    a = out_json(out, "cluster_advice.json");
    assert_int_equal(
        cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(a, "cluster"), "missing_ranks")),
        1);
    assert_int_equal(cJSON_GetArrayItem(
                         cJSON_GetObjectItem(cJSON_GetObjectItem(a, "cluster"), "missing_ranks"), 0)
                         ->valueint,
                     2);
    cJSON_Delete(a);
    nnpt_rm_rf(dir);
    free(dir);
}

static void test_duplicate_rank_refused(void **state)
{
    char *dir = nnpt_mkdtemp(), out[8192];
    (void)state;
    record_cluster(dir, 0x3u);
    record_cluster(dir, 0x2u); /* rank 1 again, in the same folder */
    assert_int_equal(nnpt_cli(out, sizeof(out), "cluster -q '%s'", dir), 1);
    assert_non_null(strstr(out, "rank 1 was recorded by 2 runs in one folder"));
    nnpt_rm_rf(dir);
    free(dir);
}

/* MindSpore files of one rank twice, in two host folders: refused by rank and paths. */
static void test_duplicate_mindspore_rank(void **state)
{
    char *dir = nnpt_mkdtemp(), cmd[8192], out[8192];
    (void)state;
    need_corpus(dir);
    snprintf(cmd, sizeof(cmd),
             "mkdir -p '%s/a' '%s/b' && cp '%s'/mindinsight/cluster_propose/*_1* '%s/a/' && "
             "cp '%s'/mindinsight/cluster_propose/*_1* '%s/b/'",
             dir, dir, NNPT_CORPUS, dir, NNPT_CORPUS, dir);
    assert_int_equal(nnpt_run_cmd(cmd, NULL, 0), 0);
    assert_int_equal(nnpt_cli(out, sizeof(out), "cluster -q -o '%s/o' '%s'", dir, dir), 1);
    assert_non_null(strstr(out, "rank 1 is in the data twice"));
    assert_non_null(strstr(out, "/a'"));
    assert_non_null(strstr(out, "/b'"));
    nnpt_rm_rf(dir);
    free(dir);
}

/* A damaged rank is named and left out; the others are written; exit 1. */
static void test_damaged_rank_named(void **state)
{
    char *dir = nnpt_mkdtemp(), cmd[8192], out[8192];
    cJSON *a;
    (void)state;
    need_corpus(dir);
    snprintf(cmd, sizeof(cmd),
             "cp '%s'/mindinsight/cluster_propose/* '%s/' && chmod u+w '%s'/* && "
             ": > '%s/step_trace_raw_3_detail_time.csv' && "
             "printf 'step_num,communication_cost,wait_cost,link_info,communication_operator_cost"
             "\\n1,1,1,{broken,{\\n' > '%s/hccl_raw_2.csv'",
             NNPT_CORPUS, dir, dir, dir, dir);
    assert_int_equal(nnpt_run_cmd(cmd, NULL, 0), 0);
    assert_int_equal(nnpt_cli(out, sizeof(out), "cluster -q -o '%s/o' '%s'", dir, dir), 1);
    assert_non_null(strstr(out, "step_trace_raw_3_detail_time.csv: empty file"));
    assert_non_null(strstr(out, "hccl_raw_2.csv:2: communication_operator_cost is not JSON"));
    assert_non_null(strstr(out, "1 rank could not be read"));
    snprintf(out, sizeof(out), "%s/o", dir);
    a = out_json(out, "cluster_advice.json");
    assert_int_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(a, "cluster"), "ranks_found")->valueint, 3);
    assert_int_equal(cJSON_GetArrayItem(
                         cJSON_GetObjectItem(cJSON_GetObjectItem(a, "cluster"), "failed_ranks"), 0)
                         ->valueint,
                     3);
    cJSON_Delete(a);
    nnpt_rm_rf(dir);
    free(dir);
}

static void test_no_data_and_bad_args(void **state)
{
    char *dir = nnpt_mkdtemp(), out[8192];
    (void)state;
    assert_int_equal(nnpt_cli(out, sizeof(out), "cluster -q '%s'", dir), 1);
    assert_non_null(strstr(out, "no cluster data found in"));
    assert_int_equal(nnpt_cli(out, sizeof(out), "cluster --threads 0 '%s'", dir), 2);
    assert_non_null(strstr(out, "--threads: '0' is not a number of threads"));
    assert_int_equal(nnpt_cli(out, sizeof(out), "cluster --timeline-ranks 3-1 '%s'", dir), 2);
    assert_int_equal(nnpt_cli(out, sizeof(out), "cluster --parallel tp=2 '%s'", dir), 2);
    nnpt_rm_rf(dir);
    free(dir);
}

/* ---- the corpus ---- */

/* cluster_propose: MindInsight's rules on its own files (formats.md 2.6), by hand. */
static void test_corpus_cluster_propose(void **state)
{
    char *dir = nnpt_mkdtemp(), out[4096], *csv;
    cJSON *a, *mi;
    const cJSON *v;
    /* The '-' rows of step_trace_raw_{r}: iteration_interval in 10 ns ticks. */
    static const double interval_ticks[4] = {157225, 155882, 243180, 239538};
    /* flops_summary_{r}.json: FLOPs and FLOPS. */
    static const double flops[4] = {107146.763, 107145.034, 329608.369, 329612.4};
    static const double flops_s[4] = {5385.552, 5386.261, 4859.39, 4897.642};
    /* hccl_raw_{r}.csv '-' rows: the SDMA link between two ranks and its bandwidth. */
    static const double link_bw[4] = {188040273.54802418, 107910491.88737924, 656740006.8032151,
                                      724225040.2054026};
    /* ascend_cluster_analyse_*_{r}.csv last rows (ms). */
    static const double comp[4] = {14.6986, 14.7254, 123.1813, 122.3056};
    static const double comm[4] = {164.2464, 164.9033, 96.4268, 101.758};
    static const double recv[4] = {56.4488, 56.4863, 44.8792, 49.3181};
    double mean = 0, best = 0, pct, sum = 0, st[2], st_mean, c = 0, m = 0, rcv = 0;
    int best_rank = -1;
    (void)state;
    need_corpus(dir);
    snprintf(out, sizeof(out), "%s/out", dir);
    assert_int_equal(run_cluster(NNPT_CORPUS "/mindinsight/cluster_propose", out, 2, false),
                     NNP_OK);
    a = out_json(out, "cluster_advice.json");

    /* Step interval: round(ticks / 1e5, 4) ms; proportion = v / mean - 1 > 0.2. */
    for (int r = 0; r < 4; r++)
        mean += round(interval_ticks[r] / 1e5 * 1e4) / 1e4 / 4;
    for (int r = 0; r < 4; r++) {
        double p = round(interval_ticks[r] / 1e5 * 1e4) / 1e4 / mean - 1;
        if (p > 0.2 && p > best) {
            best = p;
            best_rank = r;
        }
    }
    v = verdict(a, "slow_rank.mindinsight_step_interval");
    assert_int_equal(best_rank, 2);
    assert_true(fired(v));
    assert_int_equal((int)ev(v, "rank_id"), best_rank);
    pct = round(best * 100 * 100) / 100;
    assert_true(fabs(ev(v, "percent") - pct) < 1e-9);
    assert_true(fabs(ev(v, "val") - 2.4318) < 1e-12);

    /* FLOPS: no rank 20 % below the mean (rank 2 is (mean - 4859.39) / mean = 5.3 %). */
    for (int r = 0; r < 4; r++)
        sum += flops_s[r] / 4;
    assert_true((sum - flops_s[2]) / sum < 0.2);
    assert_false(fired(verdict(a, "slow_rank.mindinsight_flops")));

    /* Stage FLOPs: stage = rank // (4 / 2) + 1; per stage the FLOPs / 2 summed. */
    st[0] = flops[0] / 2 + flops[1] / 2;
    st[1] = flops[2] / 2 + flops[3] / 2;
    st_mean = (st[0] + st[1]) / 2;
    v = verdict(a, "pipeline.mindinsight_stage_flops");
    assert_true(fired(v));
    assert_int_equal((int)ev(v, "stage"), 2);
    assert_true(fabs(ev(v, "percent") - round((st[1] / st_mean - 1) * 1e4) / 1e2) < 1e-9);

    /* Slow link, SDMA: (mean - bw) / mean > 0.2, the largest: rank 1's link 0-1. */
    {
        double lm = (link_bw[0] + link_bw[1] + link_bw[2] + link_bw[3]) / 4;
        const cJSON *l;
        v = verdict(a, "slow_link.mindinsight");
        assert_true(fired(v));
        l = cJSON_GetArrayItem(
            cJSON_GetObjectItem(cJSON_GetObjectItem(v, "evidence"), "slow_links"), 0);
        assert_int_equal(cJSON_GetObjectItem(l, "src_rank")->valueint, 0);
        assert_int_equal(cJSON_GetObjectItem(l, "des_rank")->valueint, 1);
        assert_int_equal(cJSON_GetObjectItem(l, "reported_by")->valueint, 1);
        assert_true(fabs(cJSON_GetObjectItem(l, "percent")->valuedouble -
                         round((lm - link_bw[1]) / lm * 1e4) / 1e2) < 1e-9);
    }

    /* Between stages: sum(receive) / (sum(computation) + sum(communication alone)). */
    for (int r = 0; r < 4; r++) {
        c += comp[r];
        m += comm[r];
        rcv += recv[r];
    }
    v = verdict(a, "pipeline.mindinsight_between_stage");
    assert_true(fired(v));
    assert_true(fabs(ev(v, "val") - round(round(rcv / (c + m) * 1e4) / 1e4 * 1e4) / 1e2) < 1e-9);
    cJSON_Delete(a);

    /* MindInsight's cluster step trace: the average entry is the files' last rows. */
    mi = out_json(out, "cluster_step_trace.json");
    assert_string_equal(cJSON_GetObjectItem(mi, "parallel-mode")->valuestring, "pipeline-parallel");
    assert_int_equal(cJSON_GetObjectItem(mi, "stage_num")->valueint, 2);
    v = cJSON_GetObjectItem(
        cJSON_GetArrayItem(
            cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(mi, "steps"), 0), "info"),
            3),
        "step_bottleneck_info");
    assert_true(cJSON_GetArrayItem(v, 0)->valuedouble == 2.3954); /* 239538 ticks */
    assert_true(cJSON_GetArrayItem(v, 1)->valuedouble == 122.3056);
    assert_true(cJSON_GetArrayItem(v, 2)->valuedouble == 101.758);
    cJSON_Delete(mi);

    /* msprof-analyze's rows from MindSpore's split, stage rows the maximum of (0, 1). */
    csv = out_file(out, "cluster_step_trace_time.csv");
    assert_non_null(strstr(csv, "1,rank,0,13820.200,164476.000,"));
    assert_non_null(strstr(csv, "1,stage,\"(0, 1)\",13954.200,196523.500,"));
    assert_non_null(strstr(csv, "1,stage,\"(2, 3)\",122752.900,2254331.700,"));
    free(csv);
    nnpt_rm_rf(dir);
    free(dir);
}

/* msprof-analyze's 8-rank cluster_step_trace_time.csv: its SlowRankAnalyzer, by hand. */
static void test_corpus_msprof_analyze(void **state)
{
    char *dir = nnpt_mkdtemp(), out[4096];
    cJSON *a;
    const cJSON *v;
    /* The file's rank rows (us): Computing, Communication(Not Overlapped), Free. */
    static const double rows[8][3] = {{80309.68717187493, 683731.2897031249, 990605.1042031233},
                                      {80435.74650000008, 133385.97745312497, 1488610.0587500026},
                                      {80335.81743750002, 530279.2325156251, 1110332.1177812554},
                                      {80077.26998437475, 265574.66, 1366552.5200156313},
                                      {81662.19999999994, 478477.3900000001, 1130793.2500000068},
                                      {81367.62001562494, 756374.86, 892836.8999843737},
                                      {81359.02999999997, 244123.84000000003, 1390633.03},
                                      {81416.40999999992, 539037.92, 1061577.0900000043}};
    static const char *const keys[3] = {"computing", "communication_not_overlapped", "free"};
    double mean = 0;
    (void)state;
    need_corpus(dir);
    snprintf(out, sizeof(out), "%s/out", dir);
    assert_int_equal(run_cluster(NNPT_CORPUS "/msprof-analyze/test/resource/advisor/"
                                             "cluster_analysis_output",
                                 out, 1, false),
                     NNP_OK);
    a = out_json(out, "cluster_advice.json");
    v = verdict(a, "slow_rank.msprof_analyze");
    for (int r = 0; r < 8; r++)
        mean += (rows[r][0] + rows[r][1] + rows[r][2]) / 8;
    assert_true(fabs(ev(v, "mean_total_us") - mean) < 1e-3); /* the file's us, read to the ns */
    for (int k = 0; k < 3; k++) {
        double mx = rows[0][k], mn = rows[0][k], ratio;
        int imx = 0, imn = 0;
        char key[96];
        for (int r = 1; r < 8; r++) {
            if (rows[r][k] > mx) {
                mx = rows[r][k];
                imx = r;
            }
            if (rows[r][k] < mn) {
                mn = rows[r][k];
                imn = r;
            }
        }
        ratio = (mx - mn) / mean;
        snprintf(key, sizeof(key), "%s_ratio", keys[k]);
        assert_true(fabs(ev(v, key) - ratio) < 1e-8);
        snprintf(key, sizeof(key), "%s_max_min_diff_ms", keys[k]);
        /* round(max_ratio * mean / 1000, 3) ms, the advisor's text */
        assert_true(fabs(ev(v, key) - round((mx - mn) / 1000 * 1000) / 1000) < 1e-9);
        snprintf(key, sizeof(key), "%s_max_rank", keys[k]);
        assert_int_equal((int)ev(v, key), imx);
        snprintf(key, sizeof(key), "%s_min_rank", keys[k]);
        assert_int_equal((int)ev(v, key), imn);
        /* Computing spreads 0.09 % (no issue); Communication 36 % and Free 35 %: issues. */
        if (k == 0)
            assert_true(ratio < 0.05);
        else
            assert_true(ratio > 0.05);
    }
    assert_true(fired(v));
    assert_non_null(strstr(cJSON_GetObjectItem(v, "summary")->valuestring,
                           "Communication has some issues in the cluster, because the max "
                           "difference of Communication time has reached 622.989ms"));
    assert_non_null(strstr(cJSON_GetObjectItem(v, "summary")->valuestring,
                           "Free has some issues in the cluster, because the max difference of "
                           "Free time has reached 595.773ms"));
    assert_null(strstr(cJSON_GetObjectItem(v, "summary")->valuestring, "Computing has"));
    cJSON_Delete(a);
    nnpt_rm_rf(dir);
    free(dir);
}

/* ---- machinery ---- */

typedef struct rec {
    int32_t key, run;
} rec_t;

static int cmp_rec(const void *a, const void *b, void *ctx)
{
    const rec_t *x = a, *y = b;
    (void)ctx;
    return (x->key > y->key) - (x->key < y->key);
}

/* 200 runs (more than one merge takes: two rounds) of sorted keys merge in order, ties by
 * run. */
static void test_spill_merge_rounds(void **state)
{
    char *dir = nnpt_mkdtemp();
    nnp_cl_spill_t s;
    nnp_cl_merge_t *m = NULL;
    const rec_t *r;
    int rc, n = 0, prev_key = -1, prev_run = -1;
    (void)state;
    assert_int_equal(nnp__cl_spill_init(&s, dir), NNP_OK);
    for (int run = 0; run < 200; run++) {
        rec_t v[50];
        for (int i = 0; i < 50; i++)
            v[i] = (rec_t){(i * 7 + run) % 97, run};
        assert_int_equal(
            nnp__cl_spill_add_sorted(&s, run, (char *)v, sizeof(v), sizeof(rec_t), cmp_rec, NULL),
            NNP_OK);
    }
    nnp__cl_spill_sort_runs(&s);
    assert_int_equal(nnp__cl_merge_open(&s, sizeof(rec_t), cmp_rec, NULL, dir, &m), NNP_OK);
    while ((r = nnp__cl_merge_next(m, &rc)) != NULL) {
        assert_true(r->key > prev_key || (r->key == prev_key && r->run >= prev_run));
        prev_key = r->key;
        prev_run = r->run;
        n++;
    }
    assert_int_equal(rc, NNP_OK);
    assert_int_equal(n, 200 * 50);
    nnp__cl_merge_close(m);
    nnp__cl_spill_fini(&s);
    nnpt_rm_rf(dir);
    free(dir);
}

/* Batches of equal keys over a two-round merge: every record once, in merge order, each
 * batch one key (keys rising), with as many records as the runs hold of that key. */
static void test_spill_batches(void **state)
{
    char *dir = nnpt_mkdtemp();
    nnp_cl_spill_t s;
    nnp_cl_merge_t *m = NULL;
    nnp_cl_batch_t b;
    int per_key[97] = {0}, n_batches = 0, n_recs = 0, prev_key = -1;
    (void)state;
    assert_int_equal(nnp__cl_spill_init(&s, dir), NNP_OK);
    for (int run = 0; run < 200; run++) {
        rec_t v[50];
        for (int i = 0; i < 50; i++) {
            v[i] = (rec_t){(i * 7 + run) % 97, run};
            per_key[v[i].key]++;
        }
        assert_int_equal(
            nnp__cl_spill_add_sorted(&s, run, (char *)v, sizeof(v), sizeof(rec_t), cmp_rec, NULL),
            NNP_OK);
    }
    nnp__cl_spill_sort_runs(&s);
    assert_int_equal(nnp__cl_merge_open(&s, sizeof(rec_t), cmp_rec, NULL, dir, &m), NNP_OK);
    nnp__cl_batch_init(&b, m, sizeof(rec_t), cmp_rec, NULL);
    while (nnp__cl_batch_next(&b) == NNP_OK && b.n > 0) {
        const rec_t *first = nnp__cl_batch_rec(&b, 0);
        assert_true(first->key > prev_key);
        assert_int_equal((int)b.n, per_key[first->key]);
        for (size_t i = 1; i < b.n; i++) {
            const rec_t *r = nnp__cl_batch_rec(&b, i), *q = nnp__cl_batch_rec(&b, i - 1);
            assert_int_equal(r->key, first->key);
            assert_true(r->run >= q->run);
        }
        prev_key = first->key;
        n_recs += (int)b.n;
        n_batches++;
    }
    assert_int_equal(b.n, 0);
    assert_int_equal(n_batches, 97);
    assert_int_equal(n_recs, 200 * 50);
    nnp__cl_batch_fini(&b);
    nnp__cl_merge_close(m);
    nnp__cl_spill_fini(&s);
    nnpt_rm_rf(dir);
    free(dir);
}

/* Variable-length records: {length, key, key repeated}, 8 to 24 bytes by key. */
static int cmp_var(const void *a, const void *b, void *ctx)
{
    int32_t x, y;
    (void)ctx;
    memcpy(&x, (const char *)a + 4, sizeof(x));
    memcpy(&y, (const char *)b + 4, sizeof(y));
    return (x > y) - (x < y);
}

/* Batches of variable-length records: the record read past a batch starts the next one
 * whole, whatever its length. */
static void test_spill_batches_var(void **state)
{
    char *dir = nnpt_mkdtemp();
    nnp_cl_spill_t s;
    nnp_cl_merge_t *m = NULL;
    nnp_cl_batch_t b;
    int key = 0;
    (void)state;
    assert_int_equal(nnp__cl_spill_init(&s, dir), NNP_OK);
    for (int run = 0; run < 3; run++) {
        int32_t v[10 * 6];
        size_t n = 0;
        for (int32_t k = 0; k < 10; k++) {
            uint32_t len = 8 + 8 * (uint32_t)(k % 3);
            memcpy(&v[n], &len, sizeof(len));
            for (size_t j = 1; j < len / 4; j++)
                v[n + j] = k;
            n += len / 4;
        }
        assert_int_equal(nnp__cl_spill_add_sorted(&s, run, (char *)v, n * 4, 0, cmp_var, NULL),
                         NNP_OK);
    }
    nnp__cl_spill_sort_runs(&s);
    assert_int_equal(nnp__cl_merge_open(&s, 0, cmp_var, NULL, dir, &m), NNP_OK);
    nnp__cl_batch_init(&b, m, 0, cmp_var, NULL);
    while (nnp__cl_batch_next(&b) == NNP_OK && b.n > 0) {
        assert_int_equal(b.n, 3);
        for (size_t i = 0; i < b.n; i++) {
            const char *r = nnp__cl_batch_rec(&b, i);
            uint32_t len;
            int32_t x;
            memcpy(&len, r, sizeof(len));
            assert_int_equal(len, 8 + 8 * (key % 3));
            for (size_t j = 1; j < len / 4; j++) {
                memcpy(&x, r + 4 * j, sizeof(x));
                assert_int_equal(x, key);
            }
        }
        key++;
    }
    assert_int_equal(key, 10);
    nnp__cl_batch_fini(&b);
    nnp__cl_merge_close(m);
    nnp__cl_spill_fini(&s);
    nnpt_rm_rf(dir);
    free(dir);
}

static void test_natcmp_and_tuples(void **state)
{
    char *t = NULL;
    int one[1] = {3}, three[3] = {0, 1, 2};
    (void)state;
    assert_true(nnp__cl_natcmp("op_2", "op_10") < 0);
    assert_true(nnp__cl_natcmp("op_10", "op_2") > 0);
    assert_true(nnp__cl_natcmp("a", "a") == 0);
    assert_true(nnp__cl_natcmp("a1", "a1b") < 0);
    assert_int_equal(nnp__cl_tuple_text(one, 1, &t), NNP_OK);
    assert_string_equal(t, "(3,)"); /* Python's one-element tuple */
    nnp__free(t);
    assert_int_equal(nnp__cl_tuple_text(three, 3, &t), NNP_OK);
    assert_string_equal(t, "(0, 1, 2)");
    nnp__free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_synthetic_step_rows),
        cmocka_unit_test(test_synthetic_verdicts),
        cmocka_unit_test(test_synthetic_matrix_and_comm),
        cmocka_unit_test(test_synthetic_mindinsight_views),
        cmocka_unit_test(test_threads_same_bytes),
        cmocka_unit_test(test_timeline_merged),
        cmocka_unit_test(test_torch_npu_folders),
        cmocka_unit_test(test_corpus_cann_prof),
        cmocka_unit_test(test_missing_rank_named),
        cmocka_unit_test(test_duplicate_rank_refused),
        cmocka_unit_test(test_duplicate_mindspore_rank),
        cmocka_unit_test(test_damaged_rank_named),
        cmocka_unit_test(test_no_data_and_bad_args),
        cmocka_unit_test(test_corpus_cluster_propose),
        cmocka_unit_test(test_corpus_msprof_analyze),
        cmocka_unit_test(test_spill_merge_rounds),
        cmocka_unit_test(test_spill_batches),
        cmocka_unit_test(test_spill_batches_var),
        cmocka_unit_test(test_natcmp_and_tuples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
