/* test_hta_raw.c - HTA's analyses of our own GPU captures (src/analyse/hta_view.c): the
 * three-rank run of hta_expect.h recorded through the public API as the CUDA back end
 * records it (launch ids, copies with their details, the NCCL kernel as a collective) must
 * give, through `nnprof analyse`, exactly the tables HTA computes of the same run as Kineto
 * traces (worked out by hand in hta_expect.c); so must the run's Kineto export, analysed
 * in turn. A run without GPU events writes no HTA table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hta_expect.h"
#include "test_util.h"

#define RANKS        3
#define NS_PER_US    1000
#define NS_PER_MS    1000000
#define NCCL_BYTES   4096
#define STREAM       7
#define NCCL_STREAM  20
#define ORPHAN_CORR  99
#define MM_CORR      1
#define RAW_PATH_CAP 4096
#define SUMMARY_CAP  (64 * 1024)

/* ns of a time of hta_expect.h given in tenths of a µs (1020.5 µs = 10205) after base. */
static uint64_t at(uint64_t base, uint64_t tenths_us)
{
    return base + tenths_us * (NS_PER_US / 10);
}

static void call(uint64_t base, const char *name, uint64_t corr, uint64_t launch, uint64_t t0,
                 uint64_t t1)
{
    nnp_call_t c = {0};
    c.name = nnp_intern(name);
    c.kind = NNP_CALL_CUDA_RUNTIME;
    c.correlation_id = corr;
    c.launch_id = launch;
    nnp_call_at(&c, at(base, t0), at(base, t1));
}

static void kernel(uint64_t base, const char *name, uint64_t corr, uint64_t launch, uint64_t t0,
                   uint64_t t1)
{
    nnp_kernel_t k = {0};
    k.name = nnp_intern(name);
    k.type = nnp_intern("cuLaunchKernel");
    k.stream_id = STREAM;
    k.correlation_id = corr;
    k.launch_id = launch;
    nnp_kernel_at(&k, at(base, t0), at(base, t1));
}

/* Rank r of the run (hta_expect.h), times after base (a whole ms); its raw directory is
 * copied to raw. */
static void record_rank(const char *dir, int r, uint64_t base, char *raw)
{
    static const uint64_t nccl_ts[RANKS] = {10400, 10500, 10450};
    static const uint64_t nccl_dur[RANKS] = {400, 300, 350};
    nnp_options_t o;
    nnp_session_t *s;
    nnp_op_t mm = {0};
    nnp_kernel_t k = {0};
    nnp_copy_t cp = {0};
    nnp_comm_t comm = {0};
    nnp_options_init(&o);
    o.sample_interval_ms = 0;
    o.rank_id = r;
    o.rank_size = RANKS;
    snprintf(o.output_path, sizeof(o.output_path), "%s", dir);
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    snprintf(raw, RAW_PATH_CAP, "%s", nnp_session_raw_dir(s));
    for (uint64_t step = 1; step <= 3; step++) {
        nnp_step_begin_at(step, 0, at(base, 10000 + (step - 1) * 1000));
        nnp_step_end_at(step, 0, at(base, 10000 + step * 1000));
    }
    mm.name = mm.type = nnp_intern("aten::mm");
    mm.correlation_id = MM_CORR;
    nnp_op_at(&mm, at(base, 10090), at(base, 10290));
    call(base, "cudaLaunchKernel", MM_CORR, 1, 10102, 10147);
    call(base, "cudaLaunchKernel", 0, 2, 10150, 10180);
    call(base, "cudaMemcpyAsync", 0, 3, 10300, 10320);
    call(base, "cudaLaunchKernel", 0, 4, 11050, 11100);
    call(base, "cudaLaunchKernel", 0, 5, 11200, 11800);
    call(base, "cudaLaunchKernel", 0, 6, 12100, 12140);

    kernel(base, "gemm_a", MM_CORR, 1, 10205, 10507); /* 1020.5 + 30.25: 1050.75 */
    /* A copy as the CUDA back end records it: its own name, Kineto's from its details. */
    k.name = nnp_intern("MemcpyH2D");
    k.type = nnp_intern("cuMemcpy");
    k.stream_id = STREAM;
    k.launch_id = 3;
    cp.size_bytes = NCCL_BYTES;
    cp.kind = NNP_COPY_HTOD;
    cp.src_kind = NNP_MEMORY_PAGEABLE;
    cp.dst_kind = NNP_MEMORY_DEVICE;
    nnp_copy_at(&k, &cp, at(base, 10600), at(base, 10700));
    kernel(base, "gemm_a", 0, 4, 11114, 11117);
    kernel(base, "relu", 0, 5, 11900, 11950);
    kernel(base, "gemm_a", 0, 6, 12200, 12300);
    kernel(base, "orphan", 0, ORPHAN_CORR, 13000, 13050);

    comm.name = nnp_intern("ncclKernel_AllReduce_RING_LL_Sum_float");
    comm.kind = NNP_COMM_ALLREDUCE;
    comm.group = nnp_intern("0");
    comm.size_bytes = NCCL_BYTES;
    comm.peer = -1;
    comm.stream_id = NCCL_STREAM;
    comm.launch_id = 2;
    nnp_comm_kernel_at(&comm, at(base, nccl_ts[r]), at(base, nccl_ts[r] + nccl_dur[r]));
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
}

static void record_run(const char *dir, char raws[RANKS][RAW_PATH_CAP])
{
    /* A whole ms: HTA rounds each start up and each end down to the µs, as on the traces. */
    uint64_t base = nnp_clock_ns() / NS_PER_MS * NS_PER_MS;
    for (int r = 0; r < RANKS; r++)
        record_rank(dir, r, base, raws[r]);
}

/* The cross-rank tables: each session reads the wall clock against the monotonic one to
 * the µs (info.json's diff_time), and HTA lines ranks up by the wall clock (as a trace
 * holds it), so three sessions of one process may be a µs apart (ranks of a real job are,
 * by more): the normalised starts of straggler_metric.csv move by up to 0.01, not the
 * verdict (the NCCL kernels start 10 µs apart). */
static void check_stragglers(const char *out)
{
    char dir[1100], *t;
    snprintf(dir, sizeof(dir), "%s/hta", out);
    t = nnpt_read_in(dir, "stragglers.csv");
    assert_string_equal(t, "rank,straggler_count,potential_straggler\n1,1,Yes\n2,1,Yes\n0,0,No\n");
    free(t);
}

static void test_own_capture(void **state)
{
    char *dir = nnpt_mkdtemp(), out[1024], raws[RANKS][RAW_PATH_CAP], text[SUMMARY_CAP];
    (void)state;
    record_run(dir, raws);
    snprintf(out, sizeof(out), "%s/out", dir);
    assert_int_equal(nnpt_analyse_to(dir, out), NNP_OK);
    nnpt_check_hta_per_rank(out);
    check_stragglers(out);
    /* nnprof summary gives each rank's line of temporal_breakdown.csv (hta_expect.c). */
    assert_int_equal(nnpt_cli(text, sizeof(text), "summary '%s'", out), 0);
    if (!strstr(text, "GPU (HTA's temporal breakdown, hta/): 174 us from the first kernel to "
                      "the last: compute 18.97 %, other kernels (communication, memory) "
                      "17.24 %, idle 63.79 %"))
        fail_msg("%s", text);
    nnpt_rm_rf(dir);
    free(dir);
}

/* Each rank's Kineto export, analysed as PyTorch traces: the same tables (the NCCL kernel
 * keeps its launch through "correlation", without which HTA's filter drops it), and the
 * same files byte for byte as the capture's own analysis. */
static void test_own_export(void **state)
{
    static const char *const files[] = {
        "temporal_breakdown.csv",         "idle_time_breakdown.csv",
        "kernel_type_breakdown.csv",      "kernel_breakdown.csv",
        "comm_comp_overlap.csv",          "cuda_kernel_launch_stats.csv",
        "cuda_kernel_launch_summary.csv", "queue_length_summary.csv",
        "straggler_metric.csv",           "stragglers.csv"};
    char *dir = nnpt_mkdtemp(), traces[1024], out[1024], own[1024], path[1200];
    char raws[RANKS][RAW_PATH_CAP];
    (void)state;
    record_run(dir, raws);
    /* The capture itself first (the traces then go beside it). */
    snprintf(own, sizeof(own), "%s/own", dir);
    assert_int_equal(nnpt_analyse_to(dir, own), NNP_OK);
    snprintf(traces, sizeof(traces), "%s/traces", dir);
    assert_int_equal(mkdir(traces, 0700), 0);
    for (int r = 0; r < RANKS; r++) {
        snprintf(path, sizeof(path), "%s/rank%d.pt.trace.json", traces, r);
        assert_int_equal(nnp_export_kineto(raws[r], path, NULL, NULL), NNP_OK);
    }
    snprintf(out, sizeof(out), "%s/out", dir);
    assert_int_equal(nnpt_analyse_to(traces, out), NNP_OK);
    nnpt_check_hta_per_rank(out);
    check_stragglers(out);
    /* Every HTA file of the capture equal to the export's. */
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char a[1200], b[1200], *x, *y;
        snprintf(a, sizeof(a), "%s/hta", out);
        snprintf(b, sizeof(b), "%s/hta", own);
        x = nnpt_read_in(a, files[i]);
        y = nnpt_read_in(b, files[i]);
        assert_string_equal(x, y);
        free(x);
        free(y);
    }
    nnpt_rm_rf(dir);
    free(dir);
}

/* A run of host ops and device tasks recorded without CUDA calls (an Ascend-style run, or
 * the synthetic runs of bench_analyse): no HTA table, and its raw data is not read a second
 * time for it. */
static void test_cpu_run_has_no_hta(void **state)
{
    char *dir = nnpt_mkdtemp(), out[1024], hta[1100];
    nnp_options_t o;
    nnp_session_t *s;
    nnp_op_t op = {0};
    nnp_kernel_t k = {0};
    uint64_t t;
    struct stat st;
    (void)state;
    nnp_options_init(&o);
    o.sample_interval_ms = 0;
    snprintf(o.output_path, sizeof(o.output_path), "%s", dir);
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    op.name = op.type = nnp_intern("MatMul");
    t = nnp_clock_ns();
    nnp_op_at(&op, t, t + NS_PER_US);
    k.name = nnp_intern("MatMul_kernel");
    k.type = nnp_intern("AI_CORE");
    nnp_kernel_at(&k, t + NS_PER_US, t + 2 * NS_PER_US);
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    snprintf(out, sizeof(out), "%s/out", dir);
    assert_int_equal(nnpt_analyse_to(dir, out), NNP_OK);
    snprintf(hta, sizeof(hta), "%s/hta", out);
    assert_int_not_equal(stat(hta, &st), 0);
    nnpt_rm_rf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_own_capture),
        cmocka_unit_test(test_own_export),
        cmocka_unit_test(test_cpu_run_has_no_hta),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
