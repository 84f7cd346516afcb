/* test_summary.c - what a user reads after analysing (issue 10 small things and issue 12's
 * `query op` rank): `nnprof summary` in rank order, from an `analyse -o` folder, refusing
 * data never analysed, saying plainly when no event was recorded and when the step phases
 * are unknown; the host range table (host_ranges_{rank}.csv and its summary lines); `query
 * op` on the rank docs/CLI.md names, with numbers as precise as the data; the memory
 * warning naming which memory is missing. Real runs (test_util.h fixture), the real CLI. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

#define STEPS    20
#define PATH_CAP 4096
#define FULL_CAP (PATH_CAP + 512)
#define CMD_CAP  16384
#define OUT_CAP  65536

static void expect_in(const char *text, const char *needle)
{
    if (!strstr(text, needle))
        fail_msg("missing:\n%s\nin:\n%s", needle, text);
}

/* Ranks in order (rank 1 was printed first: it was recorded first), with the host range
 * table; a run with ranges but no op: the phases are said unknown, not "0 + 0". */
static void test_summary_ranks_in_order_with_host_ranges(void **state)
{
    char *out = nnpt_mkdtemp(), text[OUT_CAP], path[FULL_CAP];
    char *csv;
    nnpt_run_t r1 = {.rank = 1, .rank_size = 2, .steps = STEPS, .ops_per_step = -1, .ranges = true};
    nnpt_run_t r0 = {.rank = 0, .rank_size = 2, .steps = STEPS, .ranges = true};
    const char *p0, *p1;
    (void)state;
    nnpt_record_in_child(out, &r1, NULL, 0);
    nnpt_record_in_child(out, &r0, NULL, 0);
    assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet '%s' 2>/dev/null", out), 0);
    /* torch's key_averages: calls, total, self, avg, min, max. Self is minus the ranges and
     * ops directly inside, per step: forward [1,4] us holds the ops at 1-2 and 3-4 (self
     * 1 us), backward [5,8] the op at 5-6 (self 2), train_step [0,9] the two ranges (self
     * 3); over 20 steps 20, 40 and 60 us of 120: 16.67, 33.33 and 50.00 %. */
    snprintf(path, sizeof(path), "%s/profiler/host_ranges_0.csv", out);
    csv = nnpt_read_file(path);
    assert_non_null(csv);
    assert_string_equal(csv,
                        "Name,Calls,Total Time(us),Self Time(us),Avg Time(us),Min Time(us),Max "
                        "Time(us),Self Time(%)\n"
                        "train_step,20,180.000,60.000,9.000,9.000,9.000,50.00\n"
                        "backward,20,60.000,40.000,3.000,3.000,3.000,33.33\n"
                        "forward,20,60.000,20.000,3.000,3.000,3.000,16.67\n");
    free(csv);

    /* Its ops do not nest: no self-time table. */
    snprintf(path, sizeof(path), "%s/profiler/op_self_time_0.csv", out);
    assert_int_equal(access(path, F_OK), -1);

    assert_int_equal(nnpt_cli(text, sizeof(text), "summary '%s'", out), 0);
    p0 = strstr(text, "== rank 0");
    p1 = strstr(text, "== rank 1");
    assert_non_null(p0);
    assert_non_null(p1);
    assert_true(p0 < p1);
    expect_in(p0, "Top host ranges (host_ranges_0.csv; total includes nested ranges):\n"
                  "  train_step                     20 calls  total        180.000 us  self"
                  "         60.000 us (50.00%)\n"
                  "  backward                       20 calls  total         60.000 us  self"
                  "         40.000 us (33.33%)\n");
    expect_in(p0, "Step phases (average of 20 steps): 0.0100 ms =\n"
                  "  iteration interval 0.0010 ms (10.00%)  waiting for data / host work\n");
    expect_in(p0, "Top op types (share of op time):\n");
    expect_in(p0, "Per step (average, us): computing ");
    /* Rank 1 recorded ranges and steps but no op: nothing finds the forward start. */
    expect_in(p1, "Top op types: none (no op was recorded)\n");
    expect_in(p1, "Step phases (average of 20 steps): 0.0100 ms per step; the phases are "
                  "unknown: no op and no forward/backward mark was recorded inside the steps\n");
    nnpt_rm_rf(out);
    free(out);
}

/* summary reads an `analyse -o OUT` folder; data never analysed is an error that says so
 * (it pointed at files that did not exist, exit 0). */
static void test_summary_output_folder_and_unanalysed_data(void **state)
{
    char *out = nnpt_mkdtemp(), text[OUT_CAP], want[FULL_CAP * 4], data[FULL_CAP], res[FULL_CAP];
    nnpt_run_t r = {.rank = 0, .steps = STEPS};
    (void)state;
    snprintf(data, sizeof(data), "%s/data", out);
    snprintf(res, sizeof(res), "%s/results", out);
    nnpt_record_in_child(data, &r, NULL, 0);
    assert_int_equal(nnpt_cli(text, sizeof(text), "summary '%s'", data), 1);
    snprintf(want, sizeof(want),
             "nnprof: %s: holds profiling data that was never analysed: run 'nnprof analyse %s' "
             "first\n",
             data, data);
    assert_string_equal(text, want);
    assert_int_equal(
        nnpt_cli(text, sizeof(text), "analyse --quiet -o '%s' '%s' 2>/dev/null", res, data), 0);
    snprintf(want, sizeof(want),
             "nnprof: results of rank 0 in %s; read them with: nnprof summary %s\n", res, res);
    assert_string_equal(text, want);
    assert_int_equal(nnpt_cli(text, sizeof(text), "summary '%s'", res), 0);
    expect_in(text, "== rank 0");
    expect_in(text, "Step phases (average of 20 steps)");
    snprintf(want, sizeof(want), "Timeline: %s/rank_0/ASCEND_PROFILER_OUTPUT/trace_view.json\n",
             res);
    expect_in(text, want);
    assert_int_equal(nnpt_cli(text, sizeof(text), "summary '%s/none'", out), 1);
    /* Results cut short (a full disk): the file is named, not "read them with summary". */
    snprintf(want, sizeof(want), "%s/profiler_info_0.json", res);
    assert_int_equal(truncate(want, 40), 0);
    assert_int_equal(nnpt_cli(text, sizeof(text), "summary '%s'", res), 1);
    snprintf(want, sizeof(want),
             "nnprof: %s/profiler_info_0.json: not readable as JSON (damaged or cut short?): "
             "rank 0 left out; 'nnprof analyse' on the profiling data writes it again\n"
             "nnprof: %s: no readable analysed results: 1 damaged profiler_info file(s), named "
             "above\n",
             res, res);
    assert_string_equal(text, want);
    nnpt_rm_rf(out);
    free(out);
}

/* Per step (100 us apart): "outer" [1, 9) us holding "inner" [2, 7) us, then "flat"
 * [9.1, 9.6) us, on one thread. */
#define NEST_STEPS   4
#define NEST_STEP_NS 100000u
static void record_nested(const nnpt_run_t *r, void *arg)
{
    nnp_op_t outer = {0}, inner = {0}, flat = {0};
    (void)r;
    (void)arg;
    outer.name = outer.type = nnp_intern("outer");
    inner.name = inner.type = nnp_intern("inner");
    flat.name = flat.type = nnp_intern("flat");
    for (uint64_t k = 0; k < NEST_STEPS; k++) {
        uint64_t t = NNPT_T0 + k * NEST_STEP_NS;
        nnp_step_begin_at(k, 0, t);
        nnp_op_at(&inner, t + 2000, t + 7000);
        nnp_op_at(&outer, t + 1000, t + 9000);
        nnp_op_at(&flat, t + 9100, t + 9600);
        nnp_step_end_at(k, 0, t + NEST_STEP_NS);
    }
}

/* When ops nest (PyTorch), op_statistic counts inner's time again in outer: the summary
 * shows self times instead. Per step self: outer 8 - 5 = 3 us, inner 5, flat 0.5, of
 * 8.5 us: 35.29 %, 58.82 %, 5.88 %; over 4 steps 12, 20 and 2 us (totals 32, 20, 2).
 * Ops that do not nest keep op_statistic's table (the test above's rank 0). */
static void test_summary_self_time_when_ops_nest(void **state)
{
    char *out = nnpt_mkdtemp(), text[OUT_CAP], path[FULL_CAP];
    char *csv;
    nnpt_run_t r = {.rank = 0, .record = record_nested};
    (void)state;
    nnpt_record_in_child(out, &r, NULL, 0);
    assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet '%s' 2>/dev/null", out), 0);
    /* key_averages by self time: the mean, min and max per call; shares of all op self. */
    snprintf(path, sizeof(path), "%s/profiler/op_self_time_0.csv", out);
    csv = nnpt_read_file(path);
    assert_non_null(csv);
    assert_string_equal(csv,
                        "Name,Calls,Total Time(us),Self Time(us),Avg Time(us),Min Time(us),Max "
                        "Time(us),Self Time(%)\n"
                        "inner,4,20.000,20.000,5.000,5.000,5.000,58.82\n"
                        "outer,4,32.000,12.000,8.000,8.000,8.000,35.29\n"
                        "flat,4,2.000,2.000,0.500,0.500,0.500,5.88\n");
    free(csv);
    assert_int_equal(nnpt_cli(text, sizeof(text), "summary '%s'", out), 0);
    expect_in(text, "Top ops by self time (op_self_time_0.csv; ops nest: op_statistic's totals "
                    "include nested ops):\n"
                    "  inner                     58.82%         4 calls  self         20.000 us"
                    "  total         20.000 us\n"
                    "  outer                     35.29%         4 calls  self         12.000 us"
                    "  total         32.000 us\n"
                    "  flat                       5.88%         4 calls  self          2.000 us"
                    "  total          2.000 us\n"
                    "Step phases");
    assert_null(strstr(text, "Top op types"));
    /* The advisor names the same ops, by their share of all op self time. */
    snprintf(path, sizeof(path), "%s/profiler/advice_0.json", out);
    csv = nnpt_read_file(path);
    assert_non_null(csv);
    expect_in(csv, "\"title\":\"Ops with the most self time\",\"evidence\":{\"op_type_1\":"
                   "\"inner\",\"op_type_1_time_pct\":58.82,\"op_type_2\":\"outer\","
                   "\"op_type_2_time_pct\":35.29,\"op_type_3\":\"flat\","
                   "\"op_type_3_time_pct\":5.88}");
    free(csv);
    nnpt_rm_rf(out);
    free(out);
}

/* Per step (100 us apart): an op with a 40-character type [1, 3) us, then "mm" [4, 6) us. */
#define LONG_TYPE "aten::native_batch_norm_backward_variant"
/* Ops of type arg (LONG_TYPE when NULL) and "mm", 4 steps of one call each. */
static void record_long_name(const nnpt_run_t *r, void *arg)
{
    nnp_op_t a = {0}, b = {0};
    (void)r;
    a.name = a.type = nnp_intern(arg ? (const char *)arg : LONG_TYPE);
    b.name = b.type = nnp_intern("mm");
    for (uint64_t k = 0; k < NEST_STEPS; k++) {
        uint64_t t = NNPT_T0 + k * NEST_STEP_NS;
        nnp_step_begin_at(k, 0, t);
        nnp_op_at(&a, t + 1000, t + 3000);
        nnp_op_at(&b, t + 4000, t + 6000);
        nnp_step_end_at(k, 0, t + NEST_STEP_NS);
    }
}

/* A name longer than the 24-character column widens it for every row, so the numbers
 * line up: each type 4 calls of 2 us (8 us, half of all op time). */
static void test_summary_long_names_line_up(void **state)
{
    char *out = nnpt_mkdtemp(), text[OUT_CAP];
    nnpt_run_t r = {.rank = 0, .record = record_long_name};
    (void)state;
    assert_int_equal(strlen(LONG_TYPE), 40);
    nnpt_record_in_child(out, &r, NULL, 0);
    assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet '%s' 2>/dev/null", out), 0);
    assert_int_equal(nnpt_cli(text, sizeof(text), "summary '%s'", out), 0);
    expect_in(text, "Top op types (share of op time):\n"
                    "  " LONG_TYPE "  50.00%         4 calls           8.000 us\n"
                    "  mm                                        50.00%         4 calls"
                    "           8.000 us\n");
    nnpt_rm_rf(out);
    free(out);
}

/* A CUDA kernel's signature is shown without "void " and its parameter list (parentheses
 * inside the template arguments kept), as its type in op_statistic stays whole. */
#define KERNEL_SIG                                                                                 \
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "           \
    "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)"
#define KERNEL_SHORT                                                                               \
    "at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "                \
    "std::array<char*, 1ul> >"
static void test_summary_kernel_names_shortened(void **state)
{
    char *out = nnpt_mkdtemp(), text[OUT_CAP], stat[PATH_CAP];
    nnpt_run_t r = {.rank = 0, .record = record_long_name, .arg = (void *)KERNEL_SIG};
    FILE *f;
    size_t n;
    (void)state;
    nnpt_record_in_child(out, &r, NULL, 0);
    assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet '%s' 2>/dev/null", out), 0);
    assert_int_equal(nnpt_cli(text, sizeof(text), "summary '%s'", out), 0);
    /* KERNEL_SHORT is 101 characters: the column is NAME_WIDTH_MAX (96) wide, so "mm" pads
     * to 96 and the long name runs past it by 5. */
    assert_int_equal(strlen(KERNEL_SHORT), 101);
    expect_in(text, "  " KERNEL_SHORT "  50.00%         4 calls           8.000 us\n");
    assert_null(strstr(text, "void at::native"));
    assert_null(strstr(text, "(int, at::native"));
    /* The file keeps the whole signature (quoted: it holds commas). */
    snprintf(stat, sizeof(stat), "%s/profiler/op_statistic_0.csv", out);
    f = fopen(stat, "r");
    assert_non_null(f);
    n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    assert_non_null(strstr(text, "\"" KERNEL_SIG "\""));
    nnpt_rm_rf(out);
    free(out);
}

/* Two ops and no step: [1, 3) and [4, 6) us. */
static void record_no_steps(const nnpt_run_t *r, void *arg)
{
    nnp_op_t a = {0};
    (void)r;
    (void)arg;
    a.name = a.type = nnp_intern("mm");
    nnp_op_at(&a, NNPT_T0 + 1000, NNPT_T0 + 3000);
    nnp_op_at(&a, NNPT_T0 + 4000, NNPT_T0 + 6000);
}

/* Without steps the overlap line is the whole run's (step_trace_time.csv's one row with an
 * empty Step), not an average per step: 4 us of ops, the 1 us between them free. */
static void test_summary_whole_run_without_steps(void **state)
{
    char *out = nnpt_mkdtemp(), text[OUT_CAP];
    nnpt_run_t r = {.rank = 0, .record = record_no_steps};
    (void)state;
    nnpt_record_in_child(out, &r, NULL, 0);
    assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet '%s' 2>/dev/null", out), 0);
    assert_int_equal(nnpt_cli(text, sizeof(text), "summary '%s'", out), 0);
    expect_in(text, "Whole run (no steps, us): computing 4.000, communication 0.000 of which not "
                    "overlapped 0.000, free 1.000\n");
    assert_null(strstr(text, "Per step (average"));
    nnpt_rm_rf(out);
    free(out);
}

/* A program that recorded nothing but samples (a preloaded, uninstrumented one): analyse and
 * summary say so plainly and how to record events. */
static void test_no_events_said_plainly(void **state)
{
    char *out = nnpt_mkdtemp(), text[OUT_CAP], raw[PATH_CAP], want[FULL_CAP * 4];
    nnpt_run_t r = {.rank = 0, .sample_ms = 10};
    (void)state;
    nnpt_record_in_child(out, &r, raw, sizeof(raw));
    assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet '%s'", out), 0);
    snprintf(want, sizeof(want), "[nnprof] warn: rank 0 (%s): no events were recorded, only ", raw);
    expect_in(text, want);
    expect_in(text, " CPU/memory samples: the program made no recording call. Record ops, steps "
                    "and ranges with the API (nnp_op_*, nnp_step_begin/end, nnp_range_begin/end; "
                    "in Python nnprof.record_function and Profiler.step), docs/PYTHON.md\n");
    expect_in(text, "; 1 rank recorded no events; read them with:");
    assert_int_equal(nnpt_cli(text, sizeof(text), "summary '%s'", out), 0);
    expect_in(text, "No events were recorded, only ");
    expect_in(text, " CPU/memory samples: the program made no recording call.\n"
                    "  Record ops, steps and ranges with the API (nnp_op_*, "
                    "nnp_step_begin/end, nnp_range_begin/end;\n");
    nnpt_rm_rf(out);
    free(out);
}

/* query op: the lowest rank by default (docs/CLI.md; it answered whichever rank was listed
 * first), --device N for another, and times with the ns the data has
 * (118560.544, not 118560.54399999999). */
static void test_query_rank_and_precision(void **state)
{
    char *out = nnpt_mkdtemp(), text[OUT_CAP];
    (void)state;
    for (int k = 3; k >= 0; k--) {
        nnpt_run_t r = {.rank = k, .rank_size = 4, .steps = 16, .ops_per_step = k ? 2 : 1};
        /* 16 ops of 7410034 ns = 118560544 ns on rank 0. */
        r.op_ns = 7410034;
        nnpt_record_in_child(out, &r, NULL, 0);
    }
    assert_int_equal(nnpt_cli(text, sizeof(text), "query op MatMul -d '%s' --json", out), 0);
    assert_string_equal(text, "[{\"op_name\":\"MatMul\",\"count\":16,\"total_time_us\":118560.544,"
                              "\"avg_time_us\":7410.034,\"min_time_us\":7410.034,"
                              "\"max_time_us\":7410.034}]\n");
    assert_int_equal(nnpt_cli(text, sizeof(text), "query op MatMul -d '%s' --device 2 --json", out),
                     0);
    assert_string_equal(text, "[{\"op_name\":\"MatMul\",\"count\":32,\"total_time_us\":237121.088,"
                              "\"avg_time_us\":7410.034,\"min_time_us\":7410.034,"
                              "\"max_time_us\":7410.034}]\n");
    nnpt_rm_rf(out);
    free(out);
}

/* Tensor memory recorded, host memory not: the warning says which is missing (it said "No
 * memory_usage is recorded" whatever was recorded). */
static void test_memory_warning_names_the_memory(void **state)
{
    char *out = nnpt_mkdtemp(), text[OUT_CAP], raw[PATH_CAP], want[FULL_CAP * 4];
    nnpt_run_t r = {.rank = 0, .steps = STEPS, .ranges = true, .tensors = true};
    (void)state;
    nnpt_record_in_child(out, &r, raw, sizeof(raw));
    assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet '%s'", out), 0);
    snprintf(want, sizeof(want),
             "[nnprof] warn: No host memory (memory_usage) is recorded in %s, so host_info/"
             "host_memory_0.csv is not written (host memory comes from nnp_host_memory() or "
             "MindSpore's host_info); tensor memory was recorded: see "
             "memory_usage_summary_*.json\n",
             raw);
    expect_in(text, want);
    nnpt_rm_rf(out);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary_ranks_in_order_with_host_ranges),
        cmocka_unit_test(test_summary_output_folder_and_unanalysed_data),
        cmocka_unit_test(test_summary_self_time_when_ops_nest),
        cmocka_unit_test(test_summary_long_names_line_up),
        cmocka_unit_test(test_summary_kernel_names_shortened),
        cmocka_unit_test(test_summary_whole_run_without_steps),
        cmocka_unit_test(test_no_events_said_plainly),
        cmocka_unit_test(test_query_rank_and_precision),
        cmocka_unit_test(test_memory_warning_names_the_memory),
    };
    nnp_log_set_level(NNP_LOG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
