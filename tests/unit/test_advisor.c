/* test_advisor.c - findings and advice (src/analyse/advisor.c): nnp__findings_init, every
 * advisor rule once where it fires and once where it must not (at or just past its
 * threshold, or with its data missing), the order of findings and the readable text, the
 * empty case, nnp__findings_from_core on hand-built step trace, overlap and models, and
 * allocation failures. Expected files are exact bytes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "fixture_model.h"
#include "model/model.h"
#include "test_util.h"
#include "util/util.h"

#define NS_PER_MS 1000000
/* x ms in ns. */
#define MS(x)           ((int64_t)(x)*NS_PER_MS)
#define MAX_ALLOC_FAILS 200
#define EPSILON         1e-9

typedef nnpt_afx_t fixture_t;

/* Writes the advice and compares advice_0.json with want. */
static void expect_json(fixture_t *fx, const char *want)
{
    assert_int_equal(nnp__advisor_write(&fx->c, &fx->f), NNP_OK);
    nnpt_afx_expect_file(fx, "advice_0.json", want);
}

#define NO_FINDINGS "{\"findings\":[]}\n"
/* One finding as advisor.c writes it; evidence is the inside of its object. */
#define FINDING(id, sev, title, evidence, suggestion)                                              \
    "{\"id\":\"" id "\",\"severity\":\"" sev "\",\"title\":\"" title "\",\"evidence\":{" evidence  \
    "},\"suggestion\":\"" suggestion "\"}"
#define ONE(finding) "{\"findings\":[" finding "]}\n"

#define ITER_TITLE "Long iteration interval: the step waits before its forward pass"
#define ITER_SUGGESTION                                                                            \
    "The time from the end of one step to the forward pass of the next is usually data "           \
    "loading and preprocessing. Check the data pipeline findings, raise num_parallel_workers "     \
    "or prefetch of the slow dataset ops, or sink the dataset to the device."
#define ITER_DATALOADER_SUGGESTION                                                                 \
    "The time from the end of one step to the forward pass of the next is mostly the "             \
    "DataLoader's fetch of the batch (avg_data_fetch_ms). Raise its num_workers (and "             \
    "prefetch_factor), keep the workers alive between epochs (persistent_workers=True), make "     \
    "__getitem__ and collate_fn lighter, or prepare the data once before training."
#define QUEUE_TITLE "The device queue is often empty: the device waits for data"
#define QUEUE_SUGGESTION                                                                           \
    "The host data pipeline does not keep up with the device. Raise num_parallel_workers of "      \
    "its slowest op, prefetch more batches, or move heavy Python transforms out of map."
#define CPU_TITLE "The host CPUs are nearly saturated"
#define CPU_SUGGESTION                                                                             \
    "Data preprocessing and the framework compete for CPU. Lower the total number of dataset "     \
    "workers, move augmentation to the device, or give the job more cores."
#define BOTTLENECK_TITLE "A data pipeline op is the bottleneck"
#define TAIL_TITLE       "The step tail is dominated by communication no computation hides"
#define TAIL_SUGGESTION                                                                            \
    "Gradient communication after the backward pass is exposed. Overlap it with the backward "     \
    "pass (gradient bucketing or fusion), send fewer and larger messages, or check for a slow "    \
    "link or a slow rank."
#define TOP_TITLE "Op types with the most time"
#define TOP_SUGGESTION                                                                             \
    "Optimise these op types first (fusion, faster kernels, mixed precision); op_statistic and "   \
    "op_detail list every type and op."
#define MEM_TITLE "Peak device memory is close to the capacity"
#define MEM_SUGGESTION                                                                             \
    "A larger batch or input, or fragmentation, may run out of memory. Gain headroom with "        \
    "recomputation, mixed precision or a smaller batch."
#define FLOPS_TITLE "The ops with FLOPs run far under the device peak"
#define FLOPS_SUGGESTION(rank)                                                                     \
    "Small or memory-bound ops waste the device. Use larger batches, fused or mixed-precision "    \
    "kernels, and look at the ops with the lowest GFLOPS in flops_" rank ".txt."
#define DYN_TITLE "Op input shapes change between steps"
#define DYN_SUGGESTION(rank)                                                                       \
    "Each new shape may compile a new graph or pick new kernels. Pad inputs to a few fixed "       \
    "sizes (bucketing); dynamic_shape_info_" rank ".json lists the ops and their shapes per "      \
    "step."

/* ---- init and the empty case ---- */

static void test_init_means_no_data(void **state)
{
    fixture_t *fx = *state;
    nnp_findings_t f;
    memset(&f, 0x5a, sizeof(f));
    nnp__findings_init(&f);
    assert_int_equal(f.n_steps, 0);
    assert_int_equal(f.n_top_types, 0);
    assert_int_equal(f.n_dynamic_ops, 0);
    assert_true(isnan(f.avg_step_ms) && isnan(f.avg_iteration_interval_ms));
    assert_true(isnan(f.avg_fp_and_bp_ms) && isnan(f.avg_tail_ms));
    assert_true(isnan(f.avg_comm_not_overlapped_ms) && isnan(f.avg_communication_ms));
    for (int i = 0; i < NNP_FINDINGS_TOP_TYPES; i++) {
        assert_true(isnan(f.top_type_pct[i]));
        assert_string_equal(f.top_types[i], "");
    }
    assert_true(isnan(f.device_queue_empty_pct) && isnan(f.host_queue_empty_pct));
    assert_string_equal(f.bottleneck_op, "");
    assert_string_equal(f.bottleneck_reason, "");
    assert_string_equal(f.bottleneck_suggestion, "");
    assert_true(isnan(f.cpu_busy_pct) && isnan(f.cpu_iowait_pct) && isnan(f.process_cpu_pct));
    assert_true(isnan(f.mem_peak_bytes) && isnan(f.mem_capacity_bytes));
    assert_true(isnan(f.achieved_flops_per_s) && isnan(f.peak_flops_per_s));
    (void)fx;
}

/* Nothing known: no rule fires; both files still exist and say so. */
static void test_empty_findings(void **state)
{
    fixture_t *fx = *state;
    fx->c.rank = 4;
    assert_int_equal(nnp__advisor_write(&fx->c, &fx->f), NNP_OK);
    nnpt_afx_expect_file(fx, "advice_4.json", NO_FINDINGS);
    nnpt_afx_expect_file(
        fx, "advice_4.txt",
        "nnprof advice for rank 4: no findings (no rule fired, or the data its rules "
        "need was not recorded).\n");
}

/* ---- one pair per rule ---- */

static void test_iteration_interval_fires(void **state)
{
    fixture_t *fx = *state;
    fx->f.avg_iteration_interval_ms = 0.6;
    fx->f.avg_step_ms = 10.0;
    fx->f.n_steps = 3;
    expect_json(fx, ONE(FINDING("iteration_interval", "warning", ITER_TITLE,
                                "\"avg_iteration_interval_ms\":0.6000,\"threshold_ms\":0.5000,"
                                "\"avg_step_ms\":10.0000,\"n_steps\":3",
                                ITER_SUGGESTION)));
}

/* PyTorch: the fetch the forward pass waited for is the DataLoader's; its time is
 * evidence and the suggestion is the DataLoader's knobs, not MindSpore's dataset ops. */
static void test_iteration_interval_dataloader(void **state)
{
    fixture_t *fx = *state;
    fx->f.avg_iteration_interval_ms = 25.5;
    fx->f.avg_step_ms = 30.0;
    fx->f.n_steps = 4;
    fx->f.avg_data_fetch_ms = 24.25;
    fx->f.dataloader_fetch = true;
    expect_json(fx, ONE(FINDING("iteration_interval", "warning", ITER_TITLE,
                                "\"avg_iteration_interval_ms\":25.5000,\"threshold_ms\":0.5000,"
                                "\"avg_step_ms\":30.0000,\"n_steps\":4,"
                                "\"avg_data_fetch_ms\":24.2500",
                                ITER_DATALOADER_SUGGESTION)));
}

/* "> 0.5 ms": exactly 0.5 ms does not fire. */
static void test_iteration_interval_quiet(void **state)
{
    fixture_t *fx = *state;
    fx->f.avg_iteration_interval_ms = 0.5;
    fx->f.avg_step_ms = 10.0;
    expect_json(fx, NO_FINDINGS);
}

static void test_device_queue_empty_fires(void **state)
{
    fixture_t *fx = *state;
    fx->f.device_queue_empty_pct = 30.01;
    fx->f.host_queue_empty_pct = 2.5;
    expect_json(fx, ONE(FINDING("device_queue_empty", "warning", QUEUE_TITLE,
                                "\"device_queue_empty_pct\":30.01,\"threshold_pct\":30.00,"
                                "\"host_queue_empty_pct\":2.50",
                                QUEUE_SUGGESTION)));
}

/* "> 30 %": exactly 30 % does not fire. */
static void test_device_queue_empty_quiet(void **state)
{
    fixture_t *fx = *state;
    fx->f.device_queue_empty_pct = 30.0;
    expect_json(fx, NO_FINDINGS);
}

static void test_cpu_busy_fires(void **state)
{
    fixture_t *fx = *state;
    fx->f.cpu_busy_pct = 80.5;
    fx->f.cpu_iowait_pct = 3.0;
    expect_json(fx, ONE(FINDING("cpu_busy", "warning", CPU_TITLE,
                                "\"cpu_busy_pct\":80.50,\"threshold_pct\":80.00,"
                                "\"cpu_iowait_pct\":3.00",
                                CPU_SUGGESTION)));
}

/* "> 80 %": exactly 80 % does not fire. */
static void test_cpu_busy_quiet(void **state)
{
    fixture_t *fx = *state;
    fx->f.cpu_busy_pct = 80.0;
    fx->f.process_cpu_pct = 50.0;
    expect_json(fx, NO_FINDINGS);
}

/* pipeline.c's reason and suggestion are passed on; without its suggestion ours is used. */
static void test_pipeline_bottleneck_fires(void **state)
{
    fixture_t *fx = *state;
    nnp__strlcpy(fx->f.bottleneck_op, "MapOp(id=2)", NNP_NAME_MAX);
    nnp__strlcpy(fx->f.bottleneck_reason, "CPU per worker 90%", NNP_FINDINGS_TEXT);
    nnp__strlcpy(fx->f.bottleneck_suggestion, "Raise num_parallel_workers of MapOp(id=2).",
                 NNP_FINDINGS_TEXT);
    expect_json(fx, ONE(FINDING("pipeline_bottleneck", "warning", BOTTLENECK_TITLE,
                                "\"bottleneck_op\":\"MapOp(id=2)\","
                                "\"reason\":\"CPU per worker 90%\"",
                                "Raise num_parallel_workers of MapOp(id=2).")));
    fx->f.bottleneck_reason[0] = '\0';
    fx->f.bottleneck_suggestion[0] = '\0';
    expect_json(fx, ONE(FINDING("pipeline_bottleneck", "warning", BOTTLENECK_TITLE,
                                "\"bottleneck_op\":\"MapOp(id=2)\"",
                                "Raise num_parallel_workers of MapOp(id=2) or make its work "
                                "cheaper.")));
}

/* No bottleneck op named: a reason alone does not fire. */
static void test_pipeline_bottleneck_quiet(void **state)
{
    fixture_t *fx = *state;
    nnp__strlcpy(fx->f.bottleneck_reason, "CPU per worker 90%", NNP_FINDINGS_TEXT);
    expect_json(fx, NO_FINDINGS);
}

/* Exposed communication 3 of a 5 ms tail (60 % > 50 %), tail 5 of a 20 ms step (25 % >
 * 10 %). */
static void test_tail_communication_fires(void **state)
{
    fixture_t *fx = *state;
    fx->f.avg_comm_not_overlapped_ms = 3.0;
    fx->f.avg_tail_ms = 5.0;
    fx->f.avg_step_ms = 20.0;
    fx->f.avg_communication_ms = 8.0;
    expect_json(fx, ONE(FINDING("tail_communication", "warning", TAIL_TITLE,
                                "\"avg_comm_not_overlapped_ms\":3.0000,\"avg_tail_ms\":5.0000,"
                                "\"avg_step_ms\":20.0000,\"avg_communication_ms\":8.0000,"
                                "\"comm_not_overlapped_pct_of_tail\":60.00,"
                                "\"tail_pct_of_step\":25.00,\"threshold_pct_of_tail\":50.00,"
                                "\"threshold_pct_of_step\":10.00",
                                TAIL_SUGGESTION)));
}

/* Exactly 50 % of the tail; then a tail of exactly 10 % of the step; then no step time. */
static void test_tail_communication_quiet(void **state)
{
    fixture_t *fx = *state;
    fx->f.avg_comm_not_overlapped_ms = 2.5;
    fx->f.avg_tail_ms = 5.0;
    fx->f.avg_step_ms = 20.0;
    expect_json(fx, NO_FINDINGS);
    fx->f.avg_comm_not_overlapped_ms = 1.5;
    fx->f.avg_tail_ms = 2.0;
    expect_json(fx, NO_FINDINGS);
    fx->f.avg_tail_ms = 5.0;
    fx->f.avg_step_ms = NAN;
    expect_json(fx, NO_FINDINGS);
}

static void test_top_op_types_fires(void **state)
{
    fixture_t *fx = *state;
    fx->f.n_top_types = 2;
    nnp__strlcpy(fx->f.top_types[0], "MatMul", NNP_NAME_MAX);
    fx->f.top_type_pct[0] = 62.5;
    nnp__strlcpy(fx->f.top_types[1], "Conv2D", NNP_NAME_MAX);
    fx->f.top_type_pct[1] = 37.5;
    expect_json(fx, ONE(FINDING("top_op_types", "info", TOP_TITLE,
                                "\"op_type_1\":\"MatMul\",\"op_type_1_time_pct\":62.50,"
                                "\"op_type_2\":\"Conv2D\",\"op_type_2_time_pct\":37.50",
                                TOP_SUGGESTION)));
}

/* Ops nest (op_self.c filled the ops with the most self time): another title, and the
 * suggestion names the rank's op_self_time file. */
static void test_top_op_types_by_self_time(void **state)
{
    fixture_t *fx = *state;
    fx->f.n_top_types = 1;
    fx->f.top_types_by_self = true;
    nnp__strlcpy(fx->f.top_types[0], "aten::mm", NNP_NAME_MAX);
    fx->f.top_type_pct[0] = 100.0;
    expect_json(fx, ONE(FINDING("top_op_types", "info", "Ops with the most self time",
                                "\"op_type_1\":\"aten::mm\",\"op_type_1_time_pct\":100.00",
                                "Optimise these ops first (fusion, faster kernels, mixed "
                                "precision). Ops nest here, so the shares are of self time (the "
                                "ops inside left out); op_self_time_0.csv lists every op.")));
}

/* No ops, no types: nothing to say. */
static void test_top_op_types_quiet(void **state)
{
    fixture_t *fx = *state;
    fx->f.n_top_types = 0;
    expect_json(fx, NO_FINDINGS);
}

/* ">= 90 %": 90000 of 100000 bytes fires. */
static void test_memory_peak_fires(void **state)
{
    fixture_t *fx = *state;
    fx->f.mem_peak_bytes = 90000;
    fx->f.mem_capacity_bytes = 100000;
    expect_json(fx, ONE(FINDING("memory_peak", "warning", MEM_TITLE,
                                "\"mem_peak_bytes\":90000,\"mem_capacity_bytes\":100000,"
                                "\"peak_pct_of_capacity\":90.00,\"threshold_pct\":90.00",
                                MEM_SUGGESTION)));
}

/* One byte less (89.999 %) does not fire; an unknown capacity never does. */
static void test_memory_peak_quiet(void **state)
{
    fixture_t *fx = *state;
    fx->f.mem_peak_bytes = 89999;
    fx->f.mem_capacity_bytes = 100000;
    expect_json(fx, NO_FINDINGS);
    fx->f.mem_peak_bytes = 100000;
    fx->f.mem_capacity_bytes = NAN;
    expect_json(fx, NO_FINDINGS);
}

/* "< 30 %": 2.999e12 of a 1e13 peak (29.99 %) fires. */
static void test_flops_under_peak_fires(void **state)
{
    fixture_t *fx = *state;
    fx->c.rank = 1;
    fx->f.achieved_flops_per_s = 2.999e12;
    fx->f.peak_flops_per_s = 1e13;
    assert_int_equal(nnp__advisor_write(&fx->c, &fx->f), NNP_OK);
    nnpt_afx_expect_file(fx, "advice_1.json",
                         ONE(FINDING("flops_under_peak", "warning", FLOPS_TITLE,
                                     "\"achieved_flops_per_s\":2999000000000,"
                                     "\"peak_flops_per_s\":10000000000000,"
                                     "\"achieved_pct_of_peak\":29.99,\"threshold_pct\":30.00",
                                     FLOPS_SUGGESTION("1"))));
}

/* Exactly 30 % does not fire; nor does a run without a peak. */
static void test_flops_under_peak_quiet(void **state)
{
    fixture_t *fx = *state;
    fx->f.achieved_flops_per_s = 3e12;
    fx->f.peak_flops_per_s = 1e13;
    expect_json(fx, NO_FINDINGS);
    fx->f.achieved_flops_per_s = 1e9;
    fx->f.peak_flops_per_s = NAN;
    expect_json(fx, NO_FINDINGS);
}

static void test_dynamic_shape_fires(void **state)
{
    fixture_t *fx = *state;
    fx->f.n_dynamic_ops = 2;
    expect_json(fx, ONE(FINDING("dynamic_shape", "info", DYN_TITLE, "\"n_dynamic_ops\":2",
                                DYN_SUGGESTION("0"))));
}

static void test_dynamic_shape_quiet(void **state)
{
    fixture_t *fx = *state;
    fx->f.n_dynamic_ops = 0;
    expect_json(fx, NO_FINDINGS);
}

/* ---- order and text ---- */

#define ITER_125                                                                                   \
    FINDING("iteration_interval", "warning", ITER_TITLE,                                           \
            "\"avg_iteration_interval_ms\":1.2500,\"threshold_ms\":0.5000,\"n_steps\":2",          \
            ITER_SUGGESTION)
#define MEM_95                                                                                     \
    FINDING("memory_peak", "warning", MEM_TITLE,                                                   \
            "\"mem_peak_bytes\":95,\"mem_capacity_bytes\":100,\"peak_pct_of_capacity\":95.00,"     \
            "\"threshold_pct\":90.00",                                                             \
            MEM_SUGGESTION)
#define TOP_MATMUL                                                                                 \
    FINDING("top_op_types", "info", TOP_TITLE,                                                     \
            "\"op_type_1\":\"MatMul\",\"op_type_1_time_pct\":100.00", TOP_SUGGESTION)
#define DYN_1                                                                                      \
    FINDING("dynamic_shape", "info", DYN_TITLE, "\"n_dynamic_ops\":1", DYN_SUGGESTION("0"))

/* Four findings: warnings first, then infos, each in rule order (top_op_types comes
 * before memory_peak in the rules but is an info). */
static void test_order_and_text(void **state)
{
    fixture_t *fx = *state;
    fx->f.n_dynamic_ops = 1;
    fx->f.n_top_types = 1;
    nnp__strlcpy(fx->f.top_types[0], "MatMul", NNP_NAME_MAX);
    fx->f.top_type_pct[0] = 100.0;
    fx->f.mem_peak_bytes = 95;
    fx->f.mem_capacity_bytes = 100;
    fx->f.avg_iteration_interval_ms = 1.25;
    fx->f.n_steps = 2;
    expect_json(fx, "{\"findings\":[" ITER_125 "," MEM_95 "," TOP_MATMUL "," DYN_1 "]}\n");
    nnpt_afx_expect_file(fx, "advice_0.txt",
                         "nnprof advice for rank 0: 4 findings (2 warnings, 2 info).\n"
                         "\n"
                         "1. [warning] " ITER_TITLE " (iteration_interval)\n"
                         "   Evidence: avg_iteration_interval_ms = 1.2500, threshold_ms = 0.5000, "
                         "n_steps = 2.\n"
                         "   Suggestion: " ITER_SUGGESTION "\n"
                         "\n"
                         "2. [warning] " MEM_TITLE " (memory_peak)\n"
                         "   Evidence: mem_peak_bytes = 95, mem_capacity_bytes = 100, "
                         "peak_pct_of_capacity = 95.00, threshold_pct = 90.00.\n"
                         "   Suggestion: " MEM_SUGGESTION "\n"
                         "\n"
                         "3. [info] " TOP_TITLE " (top_op_types)\n"
                         "   Evidence: op_type_1 = \"MatMul\", op_type_1_time_pct = 100.00.\n"
                         "   Suggestion: " TOP_SUGGESTION "\n"
                         "\n"
                         "4. [info] " DYN_TITLE " (dynamic_shape)\n"
                         "   Evidence: n_dynamic_ops = 1.\n"
                         "   Suggestion: " DYN_SUGGESTION("0") "\n");
}

/* One finding: singular words in the heading. */
static void test_text_one_finding(void **state)
{
    fixture_t *fx = *state;
    fx->f.cpu_busy_pct = 99.0;
    assert_int_equal(nnp__advisor_write(&fx->c, &fx->f), NNP_OK);
    nnpt_afx_expect_file(fx, "advice_0.txt",
                         "nnprof advice for rank 0: 1 finding (1 warning, 0 info).\n"
                         "\n"
                         "1. [warning] " CPU_TITLE " (cpu_busy)\n"
                         "   Evidence: cpu_busy_pct = 99.00, threshold_pct = 80.00.\n"
                         "   Suggestion: " CPU_SUGGESTION "\n");
}

/* ---- findings from the core analyses ---- */

static void add_op(nnp_model_t *m, int64_t start, int64_t end, const char *type, uint64_t corr)
{
    /* The call may grow the table (and move its columns): index after it. */
    size_t i = nnpt_add_op(m, start, end, type, type, NULL, NULL);
    m->ops.corr[i] = corr;
}

static void add_kernel(nnp_model_t *m, int64_t start, int64_t end, const char *name, uint64_t corr)
{
    size_t i = nnp__table_push(&m->kernels.t);
    assert_true(i != SIZE_MAX);
    m->kernels.start_ns[i] = start;
    m->kernels.end_ns[i] = end;
    m->kernels.name[i] = nnp__model_intern_cstr(m, name);
    m->kernels.corr[i] = corr;
}

static nnp_step_row_t step_row(uint64_t id, int64_t begin, int64_t end, int64_t fp, int64_t bp)
{
    nnp_step_row_t r;
    memset(&r, 0, sizeof(r));
    r.step_id = id;
    r.begin_ns = r.start_point_ns = begin;
    r.end_ns = end;
    r.fp_ns = fp;
    r.bp_ns = bp;
    r.total_ns = end - begin;
    r.iteration_interval_ns = fp >= 0 ? fp - begin : -1;
    r.fp_and_bp_ns = fp >= 0 && bp >= 0 ? bp - fp : -1;
    r.tail_ns = bp >= 0 ? end - bp : -1;
    return r;
}

/* Steps (ms): 1 [0,10) fp 1 bp 7; 2 [10,22) fp 12 bp 19; 3 [22,30) no fp, no bp.
 *   step 10, 12, 8: avg 10; interval 1, 2: 1.5; fp_bp 6, 7: 6.5; tail 3, 3: 3.
 * Overlap rows: comm 4, 6, 2 (avg 4), not overlapped 2, 1, 0 (avg 1); the whole-run row
 * (comm 100) is not a step.
 * Kernels typed by their launching op: MatMul 5 (step 1) + 1 (step 2) = 6, "memcpy" (no
 * launcher: its name) 4, Add 2, ReLU 2 (tie: Add first); total 14. Conv2D launches none. */
static void build_core(fixture_t *fx, nnp_step_row_t *rows, nnp_overlap_row_t *ov_rows)
{
    nnp_model_t *m = &fx->m;
    rows[0] = step_row(1, MS(0), MS(10), MS(1), MS(7));
    rows[1] = step_row(2, MS(10), MS(22), MS(12), MS(19));
    rows[2] = step_row(3, MS(22), MS(30), -1, -1);
    ov_rows[0] = (nnp_overlap_row_t){1, MS(5), MS(4), MS(2), MS(2), 0, {0}};
    ov_rows[1] = (nnp_overlap_row_t){2, MS(5), MS(6), MS(1), MS(5), 0, {0}};
    ov_rows[2] = (nnp_overlap_row_t){3, MS(5), MS(2), MS(0), MS(2), 0, {0}};
    ov_rows[3] = (nnp_overlap_row_t){UINT64_MAX, MS(15), MS(100), MS(50), MS(50), 0, {0}};
    add_op(m, MS(1), MS(2), "MatMul", 1);
    add_op(m, MS(11), MS(12), "Add", 2);
    add_op(m, MS(23), MS(24), "ReLU", 3);
    add_op(m, MS(25), MS(26), "Conv2D", 0);
    add_kernel(m, MS(1), MS(6), "gemm", 1);
    add_kernel(m, MS(12), MS(13), "gemm", 1);
    add_kernel(m, MS(13), MS(15), "add_kernel", 2);
    add_kernel(m, MS(23), MS(25), "relu_kernel", 3);
    add_kernel(m, MS(26), MS(30), "memcpy", 99);
    assert_int_equal(nnp__model_finish(m), NNP_OK);
}

static void test_from_core(void **state)
{
    fixture_t *fx = *state;
    nnp_step_row_t rows[3];
    nnp_overlap_row_t ov_rows[4];
    nnp_step_trace_t st;
    nnp_overlap_t ov;
    build_core(fx, rows, ov_rows);
    memset(&st, 0, sizeof(st));
    memset(&ov, 0, sizeof(ov));
    st.rows = rows;
    st.n = 3;
    ov.rows = ov_rows;
    ov.n = 4;
    nnp__findings_from_core(&fx->f, &fx->c, &st, &ov);
    assert_int_equal(fx->f.n_steps, 3);
    assert_float_equal(fx->f.avg_step_ms, 10.0, EPSILON);
    assert_float_equal(fx->f.avg_iteration_interval_ms, 1.5, EPSILON);
    assert_float_equal(fx->f.avg_fp_and_bp_ms, 6.5, EPSILON);
    assert_float_equal(fx->f.avg_tail_ms, 3.0, EPSILON);
    assert_float_equal(fx->f.avg_communication_ms, 4.0, EPSILON);
    assert_float_equal(fx->f.avg_comm_not_overlapped_ms, 1.0, EPSILON);
    assert_int_equal(fx->f.n_top_types, 3);
    assert_string_equal(fx->f.top_types[0], "MatMul");
    assert_float_equal(fx->f.top_type_pct[0], 6.0 * 100.0 / 14.0, EPSILON);
    assert_string_equal(fx->f.top_types[1], "memcpy");
    assert_float_equal(fx->f.top_type_pct[1], 4.0 * 100.0 / 14.0, EPSILON);
    assert_string_equal(fx->f.top_types[2], "Add");
    assert_float_equal(fx->f.top_type_pct[2], 2.0 * 100.0 / 14.0, EPSILON);
    /* Fields of the other analyses are untouched. */
    assert_true(isnan(fx->f.cpu_busy_pct) && isnan(fx->f.achieved_flops_per_s));
}

/* --steps 2-2: the step trace holds step 2 only; the kernels starting in it are MatMul's
 * second (1 ms) and Add's (2 ms): Add 66.67 %, MatMul 33.33 %. */
static void test_from_core_steps_filter(void **state)
{
    fixture_t *fx = *state;
    nnp_step_row_t rows[3];
    nnp_overlap_row_t ov_rows[4];
    nnp_step_trace_t st;
    build_core(fx, rows, ov_rows);
    memset(&st, 0, sizeof(st));
    st.rows = &rows[1];
    st.n = 1;
    fx->c.has_steps = true;
    fx->c.step_first = fx->c.step_last = 2;
    nnp__findings_from_core(&fx->f, &fx->c, &st, NULL);
    assert_int_equal(fx->f.n_steps, 1);
    assert_float_equal(fx->f.avg_step_ms, 12.0, EPSILON);
    assert_true(isnan(fx->f.avg_communication_ms));
    assert_int_equal(fx->f.n_top_types, 2);
    assert_string_equal(fx->f.top_types[0], "Add");
    assert_float_equal(fx->f.top_type_pct[0], 200.0 / 3.0, EPSILON);
    assert_string_equal(fx->f.top_types[1], "MatMul");
    assert_float_equal(fx->f.top_type_pct[1], 100.0 / 3.0, EPSILON);
}

/* No kernels: host ops are the compute; an open op is not counted. No step trace and no
 * overlap: their averages stay unknown. Steps without fp/bp leave the phases unknown. */
static void test_from_core_host_ops_and_missing_data(void **state)
{
    fixture_t *fx = *state;
    nnp_step_row_t row = step_row(1, MS(0), MS(10), -1, -1);
    nnp_step_trace_t st;
    nnp_overlap_t ov;
    add_op(&fx->m, MS(0), MS(3), "TA", 0);
    add_op(&fx->m, MS(4), MS(5), "TB", 0);
    add_op(&fx->m, MS(6), NNP_OPEN_END, "TC", 0);
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    nnp__findings_from_core(&fx->f, &fx->c, NULL, NULL);
    assert_int_equal(fx->f.n_steps, 0);
    assert_true(isnan(fx->f.avg_step_ms) && isnan(fx->f.avg_tail_ms));
    assert_true(isnan(fx->f.avg_comm_not_overlapped_ms));
    assert_int_equal(fx->f.n_top_types, 2);
    assert_string_equal(fx->f.top_types[0], "TA");
    assert_float_equal(fx->f.top_type_pct[0], 75.0, EPSILON);
    assert_string_equal(fx->f.top_types[1], "TB");
    assert_float_equal(fx->f.top_type_pct[1], 25.0, EPSILON);

    nnp__findings_init(&fx->f);
    memset(&st, 0, sizeof(st));
    memset(&ov, 0, sizeof(ov));
    st.rows = &row;
    st.n = 1;
    nnp__findings_from_core(&fx->f, &fx->c, &st, &ov);
    assert_float_equal(fx->f.avg_step_ms, 10.0, EPSILON);
    assert_true(isnan(fx->f.avg_iteration_interval_ms) && isnan(fx->f.avg_fp_and_bp_ms));
    assert_true(isnan(fx->f.avg_tail_ms) && isnan(fx->f.avg_communication_ms));
}

#define ITER_075                                                                                   \
    FINDING("iteration_interval", "warning", ITER_TITLE,                                           \
            "\"avg_iteration_interval_ms\":0.7500,\"threshold_ms\":0.5000,\"n_steps\":0",          \
            ITER_SUGGESTION)

/* Failing each allocation in turn: an error every time, no leak or crash (ASan), and the
 * normal output once no failure hits. */
static void test_alloc_failures(void **state)
{
    fixture_t *fx = *state;
    int n;
    fx->f.avg_iteration_interval_ms = 0.75;
    fx->f.n_top_types = 1;
    nnp__strlcpy(fx->f.top_types[0], "MatMul", NNP_NAME_MAX);
    fx->f.top_type_pct[0] = 100.0;
    for (n = 1; n < MAX_ALLOC_FAILS; n++) {
        int rc;
        nnp__alloc_fail_at((uint64_t)n);
        rc = nnp__advisor_write(&fx->c, &fx->f);
        if (rc == NNP_OK) {
            assert_true(nnp__alloc_fail_pending());
            break;
        }
        assert_int_equal(rc, NNP_ENOMEM);
        assert_true(nnp_last_error()[0] != '\0');
    }
    nnp__alloc_fail_at(0);
    assert_true(n > 1 && n < MAX_ALLOC_FAILS);
    nnpt_afx_expect_file(fx, "advice_0.json", "{\"findings\":[" ITER_075 "," TOP_MATMUL "]}\n");
}

/* findings_from_core cannot report out-of-memory: it leaves the top types out, the rest
 * is filled. */
static void test_from_core_alloc_failure(void **state)
{
    fixture_t *fx = *state;
    nnp_step_row_t rows[3];
    nnp_overlap_row_t ov_rows[4];
    nnp_step_trace_t st;
    build_core(fx, rows, ov_rows);
    memset(&st, 0, sizeof(st));
    st.rows = rows;
    st.n = 3;
    nnpt_log_capture();
    for (int n = 1; n <= 2; n++) {
        nnp__findings_init(&fx->f);
        nnp__alloc_fail_at((uint64_t)n);
        nnp__findings_from_core(&fx->f, &fx->c, &st, NULL);
        nnp__alloc_fail_at(0);
        assert_int_equal(fx->f.n_top_types, 0);
        assert_float_equal(fx->f.avg_step_ms, 10.0, EPSILON);
    }
    assert_int_equal(nnpt_log_count(), 2);
    nnpt_log_release();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        NNPT_AFX_TEST(test_init_means_no_data),
        NNPT_AFX_TEST(test_empty_findings),
        NNPT_AFX_TEST(test_iteration_interval_fires),
        NNPT_AFX_TEST(test_iteration_interval_dataloader),
        NNPT_AFX_TEST(test_iteration_interval_quiet),
        NNPT_AFX_TEST(test_device_queue_empty_fires),
        NNPT_AFX_TEST(test_device_queue_empty_quiet),
        NNPT_AFX_TEST(test_cpu_busy_fires),
        NNPT_AFX_TEST(test_cpu_busy_quiet),
        NNPT_AFX_TEST(test_pipeline_bottleneck_fires),
        NNPT_AFX_TEST(test_pipeline_bottleneck_quiet),
        NNPT_AFX_TEST(test_tail_communication_fires),
        NNPT_AFX_TEST(test_tail_communication_quiet),
        NNPT_AFX_TEST(test_top_op_types_fires),
        NNPT_AFX_TEST(test_top_op_types_quiet),
        NNPT_AFX_TEST(test_top_op_types_by_self_time),
        NNPT_AFX_TEST(test_memory_peak_fires),
        NNPT_AFX_TEST(test_memory_peak_quiet),
        NNPT_AFX_TEST(test_flops_under_peak_fires),
        NNPT_AFX_TEST(test_flops_under_peak_quiet),
        NNPT_AFX_TEST(test_dynamic_shape_fires),
        NNPT_AFX_TEST(test_dynamic_shape_quiet),
        NNPT_AFX_TEST(test_order_and_text),
        NNPT_AFX_TEST(test_text_one_finding),
        NNPT_AFX_TEST(test_from_core),
        NNPT_AFX_TEST(test_from_core_steps_filter),
        NNPT_AFX_TEST(test_from_core_host_ops_and_missing_data),
        NNPT_AFX_TEST(test_alloc_failures),
        NNPT_AFX_TEST(test_from_core_alloc_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
