/* test_flops.c - FLOPs analysis (src/analyse/flops.c) on hand-built models with answers
 * worked out in the comments: matrix and vector FLOPs per op full name, zero-duration ops
 * (GFLOPS 0), open ops, op time from launched kernels, per-step totals and --steps, the
 * achieved fraction with and without a peak, no FLOPs (no files, stale files removed),
 * and allocation failures. Times: US(x) is x us. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyse/analyse.h"
#include "fixture_model.h"
#include "model/model.h"
#include "test_util.h"
#include "util/util.h"

#define NS_PER_US 1000.0
/* x us in ns (rounded to the ns). */
#define US(x)           ((int64_t)((x)*NS_PER_US + 0.5))
#define MAX_ALLOC_FAILS 200
#define RATE_EPSILON    1e-3

#define TXT_HEADER                                                                                 \
    "op_full_name,MFLOPs(10^6 cube),GFLOPS(10^9 cube),MFLOPs(10^6 vector),GFLOPS(10^9 vector)\n"

typedef nnpt_afx_t fixture_t;

static void add_op(nnp_model_t *m, int64_t start, int64_t end, const char *name, uint64_t corr,
                   uint64_t matrix, uint64_t vector)
{
    size_t i;
    assert_int_equal(nnp__model_ops_want_flops(m), NNP_OK);
    i = nnpt_add_op(m, start, end, name, "T", NULL, NULL);
    m->ops.corr[i] = corr;
    m->ops.flops_matrix[i] = matrix;
    m->ops.flops_vector[i] = vector;
}

static void add_kernel(nnp_model_t *m, int64_t start, int64_t end, uint64_t corr)
{
    size_t i = nnp__table_push(&m->kernels.t);
    assert_true(i != SIZE_MAX);
    m->kernels.start_ns[i] = start;
    m->kernels.end_ns[i] = end;
    m->kernels.name[i] = nnp__model_intern_cstr(m, "kernel");
    m->kernels.corr[i] = corr;
}

static void add_step(nnp_model_t *m, uint64_t id, int64_t begin, int64_t end)
{
    size_t i = nnp__table_push(&m->steps.t);
    assert_true(i != SIZE_MAX);
    m->steps.id[i] = id;
    m->steps.start_ns[i] = begin;
    m->steps.end_ns[i] = end;
}

/* No steps, no kernels: op time is the host op's span.
 *   MatMul-op1 10-12 (2 us) matrix 4e6; again 20-22 (2 us) matrix 4e6 + vector 1e6:
 *     8 MFLOPs cube, 1 MFLOPs vector over 4000 ns: 2000 and 250 GFLOPS.
 *   Add-op2 30-31 (1 us) vector 500: 0.000500 MFLOPs, 500 / 1000 ns = 0.5 GFLOPS.
 *   Zero-op3 40-40 (zero duration) matrix 3e6: GFLOPS 0 (MindSpore's rule).
 *   ReLU-op4 has no FLOPs (not listed); Open-op5 never ended (not counted).
 * Rows by total FLOPs: MatMul (9e6), Zero (3e6), Add (500). Totals: 11e6 + 1000500 =
 * 12000500 FLOPs over 5000 ns = 2400100000000 FLOP/s; cube 2.2e12, vector 2.001e11. */
static void build_host(nnp_model_t *m)
{
    add_op(m, US(10), US(12), "Default/MatMul-op1", 0, 4000000, 0);
    add_op(m, US(20), US(22), "Default/MatMul-op1", 0, 4000000, 1000000);
    add_op(m, US(30), US(31), "Default/Add-op2", 0, 0, 500);
    add_op(m, US(40), US(40), "Default/Zero-op3", 0, 3000000, 0);
    add_op(m, US(50), US(51), "Default/ReLU-op4", 0, 0, 0);
    add_op(m, US(60), NNP_OPEN_END, "Default/Open-op5", 0, 1000000, 0);
    assert_int_equal(nnp__model_finish(m), NNP_OK);
}

#define HOST_TXT                                                                                   \
    TXT_HEADER "Default/MatMul-op1,8.000000,2000.000,1.000000,250.000\n"                           \
               "Default/Zero-op3,3.000000,0.000,0.000000,0.000\n"                                  \
               "Default/Add-op2,0.000000,0.000,0.000500,0.500\n"
#define HOST_SUMMARY_HEAD                                                                          \
    "{\"n_ops\":4,\"matrix_flops\":11000000,\"vector_flops\":1000500,"                             \
    "\"total_flops\":12000500,\"compute_time_us\":5.000,"                                          \
    "\"achieved_flops_per_s\":2400100000000,\"matrix_flops_per_s\":2200000000000,"                 \
    "\"vector_flops_per_s\":200100000000,"

static void test_matrix_vector_zero_duration_no_peak(void **state)
{
    fixture_t *fx = *state;
    build_host(&fx->m);
    assert_int_equal(nnp__flops_write(&fx->c, NULL, &fx->f), NNP_OK);
    nnpt_afx_expect_file(fx, "flops_0.txt", HOST_TXT);
    nnpt_afx_expect_file(fx, "flops_summary_0.json",
                         HOST_SUMMARY_HEAD "\"peak_flops_per_s\":null,\"achieved_fraction\":null,"
                                           "\"steps\":[]}\n");
    assert_float_equal(fx->f.achieved_flops_per_s, 2400100000000.0, RATE_EPSILON);
    assert_true(isnan(fx->f.peak_flops_per_s));
}

/* The same run with a 1e13 FLOP/s peak: 2.4001e12 / 1e13 = 0.240010. */
static void test_achieved_fraction_with_peak(void **state)
{
    fixture_t *fx = *state;
    build_host(&fx->m);
    fx->c.peak_flops = 1e13;
    fx->c.rank = 3;
    assert_int_equal(nnp__flops_write(&fx->c, NULL, &fx->f), NNP_OK);
    nnpt_afx_expect_file(fx, "flops_3.txt", HOST_TXT);
    nnpt_afx_expect_file(fx, "flops_summary_3.json",
                         HOST_SUMMARY_HEAD "\"peak_flops_per_s\":10000000000000,"
                                           "\"achieved_fraction\":0.240010,\"steps\":[]}\n");
    assert_float_equal(fx->f.achieved_flops_per_s, 2400100000000.0, RATE_EPSILON);
    assert_float_equal(fx->f.peak_flops_per_s, 1e13, RATE_EPSILON);
}

/* Steps [0,100) [100,200) [200,300) us, kernels present:
 *   A 10-20 (step 1) matrix 1e6, corr 1: kernel 11-15 -> 4000 ns.
 *   A 110-120 (step 2) matrix 1e6, corr 2: kernels 111-112 and 113-114 -> 2000 ns.
 *   B 150-160 (step 2) vector 2e6, corr 0: no kernel, its own 10000 ns.
 *   C 310-320 (no step) matrix 5e6, corr 7 that no kernel has: its own 10000 ns.
 * Rows: C 5e6 / 10000 ns = 500; A 2e6 / 6000 = 333.333; B 2e6 / 10000 = 200 (A, B tie on
 * FLOPs: by name). Step 1: 1e6 / 4000 ns = 2.5e11; step 2: 3e6 / 12000 ns = 2.5e11; step 3
 * has nothing: rate null. Whole run (C included, no --steps): 9e6 / 26000 ns. */
static void build_steps(nnp_model_t *m)
{
    add_step(m, 1, US(0), US(100));
    add_step(m, 2, US(100), US(200));
    add_step(m, 3, US(200), US(300));
    add_op(m, US(10), US(20), "A", 1, 1000000, 0);
    add_op(m, US(110), US(120), "A", 2, 1000000, 0);
    add_op(m, US(150), US(160), "B", 0, 0, 2000000);
    add_op(m, US(310), US(320), "C", 7, 5000000, 0);
    add_kernel(m, US(11), US(15), 1);
    add_kernel(m, US(111), US(112), 2);
    add_kernel(m, US(113), US(114), 2);
    assert_int_equal(nnp__model_finish(m), NNP_OK);
}

#define STEP_3_EMPTY                                                                               \
    "{\"step_id\":3,\"n_ops\":0,\"matrix_flops\":0,\"vector_flops\":0,\"total_flops\":0,"          \
    "\"compute_time_us\":0.000,\"achieved_flops_per_s\":null}"
#define STEP_2                                                                                     \
    "{\"step_id\":2,\"n_ops\":2,\"matrix_flops\":1000000,\"vector_flops\":2000000,"                \
    "\"total_flops\":3000000,\"compute_time_us\":12.000,\"achieved_flops_per_s\":250000000000}"

static void test_per_step_totals_and_kernel_time(void **state)
{
    fixture_t *fx = *state;
    nnp_step_trace_t st;
    build_steps(&fx->m);
    assert_int_equal(nnp__step_trace_run(&fx->c, &st), NNP_OK);
    assert_int_equal(nnp__flops_write(&fx->c, &st, &fx->f), NNP_OK);
    nnp__step_trace_fini(&st);
    nnpt_afx_expect_file(fx, "flops_0.txt",
                         TXT_HEADER "C,5.000000,500.000,0.000000,0.000\n"
                                    "A,2.000000,333.333,0.000000,0.000\n"
                                    "B,0.000000,0.000,2.000000,200.000\n");
    nnpt_afx_expect_file(
        fx, "flops_summary_0.json",
        "{\"n_ops\":4,\"matrix_flops\":7000000,\"vector_flops\":2000000,"
        "\"total_flops\":9000000,\"compute_time_us\":26.000,"
        "\"achieved_flops_per_s\":346153846154,\"matrix_flops_per_s\":269230769231,"
        "\"vector_flops_per_s\":76923076923,\"peak_flops_per_s\":null,"
        "\"achieved_fraction\":null,\"steps\":["
        "{\"step_id\":1,\"n_ops\":1,\"matrix_flops\":1000000,\"vector_flops\":0,"
        "\"total_flops\":1000000,\"compute_time_us\":4.000,"
        "\"achieved_flops_per_s\":250000000000}," STEP_2 "," STEP_3_EMPTY "]}\n");
}

/* --steps 2-3: only the ops that start in step 2 count (A's second run, B); step 3 is
 * listed with zeros. B (2e6) now comes before A (1e6 over 2000 ns = 500 GFLOPS). */
static void test_steps_filter(void **state)
{
    fixture_t *fx = *state;
    nnp_step_trace_t st;
    build_steps(&fx->m);
    fx->c.has_steps = true;
    fx->c.step_first = 2;
    fx->c.step_last = 3;
    fx->c.peak_flops = 1e12;
    assert_int_equal(nnp__step_trace_run(&fx->c, &st), NNP_OK);
    assert_int_equal(nnp__flops_write(&fx->c, &st, &fx->f), NNP_OK);
    nnp__step_trace_fini(&st);
    nnpt_afx_expect_file(fx, "flops_0.txt",
                         TXT_HEADER "B,0.000000,0.000,2.000000,200.000\n"
                                    "A,1.000000,500.000,0.000000,0.000\n");
    nnpt_afx_expect_file(fx, "flops_summary_0.json",
                         "{\"n_ops\":2,\"matrix_flops\":1000000,\"vector_flops\":2000000,"
                         "\"total_flops\":3000000,\"compute_time_us\":12.000,"
                         "\"achieved_flops_per_s\":250000000000,\"matrix_flops_per_s\":83333333333,"
                         "\"vector_flops_per_s\":166666666667,\"peak_flops_per_s\":1000000000000,"
                         "\"achieved_fraction\":0.250000,\"steps\":[" STEP_2 "," STEP_3_EMPTY
                         "]}\n");
    assert_float_equal(fx->f.achieved_flops_per_s, 2.5e11, RATE_EPSILON);
    /* --steps without the step trace is a caller error. */
    assert_int_equal(nnp__flops_write(&fx->c, NULL, &fx->f), NNP_EINVAL);
}

/* Only zero-duration ops: the rows say 0 GFLOPS, the summary's rate is null (nothing
 * measured) and the findings keep NAN, so the advisor's rule cannot fire on it. */
static void test_zero_time_run(void **state)
{
    fixture_t *fx = *state;
    add_op(&fx->m, US(1), US(1), "Z", 0, 2000000, 0);
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    fx->c.peak_flops = 1e12;
    assert_int_equal(nnp__flops_write(&fx->c, NULL, &fx->f), NNP_OK);
    nnpt_afx_expect_file(fx, "flops_0.txt", TXT_HEADER "Z,2.000000,0.000,0.000000,0.000\n");
    nnpt_afx_expect_file(fx, "flops_summary_0.json",
                         "{\"n_ops\":1,\"matrix_flops\":2000000,\"vector_flops\":0,"
                         "\"total_flops\":2000000,\"compute_time_us\":0.000,"
                         "\"achieved_flops_per_s\":null,\"matrix_flops_per_s\":null,"
                         "\"vector_flops_per_s\":null,\"peak_flops_per_s\":1000000000000,"
                         "\"achieved_fraction\":null,\"steps\":[]}\n");
    assert_true(isnan(fx->f.achieved_flops_per_s));
}

/* No FLOPs: no columns at all, or columns with only zeros: no files, the findings keep
 * NAN (the peak is still recorded). Files of an earlier run with FLOPs are removed. */
static void test_no_flops_no_files(void **state)
{
    fixture_t *fx = *state;
    size_t i = nnp__table_push(&fx->m.ops.t);
    assert_true(i != SIZE_MAX);
    fx->m.ops.end_ns[i] = US(1);
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    fx->c.peak_flops = 1e12;
    assert_int_equal(nnp__flops_write(&fx->c, NULL, &fx->f), NNP_OK);
    assert_false(nnpt_afx_exists(fx, "flops_0.txt"));
    assert_false(nnpt_afx_exists(fx, "flops_summary_0.json"));
    assert_true(isnan(fx->f.achieved_flops_per_s));
    assert_float_equal(fx->f.peak_flops_per_s, 1e12, RATE_EPSILON);

    /* A run with FLOPs, then only zero FLOPs: the first run's files go away. */
    add_op(&fx->m, US(2), US(3), "X", 0, 1000, 0);
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    assert_int_equal(nnp__flops_write(&fx->c, NULL, &fx->f), NNP_OK);
    assert_true(nnpt_afx_exists(fx, "flops_0.txt"));
    assert_true(nnpt_afx_exists(fx, "flops_summary_0.json"));
    fx->m.ops.flops_matrix[1] = 0;
    nnp__findings_init(&fx->f);
    assert_int_equal(nnp__flops_write(&fx->c, NULL, &fx->f), NNP_OK);
    assert_false(nnpt_afx_exists(fx, "flops_0.txt"));
    assert_false(nnpt_afx_exists(fx, "flops_summary_0.json"));
    assert_true(isnan(fx->f.achieved_flops_per_s));
}

/* Failing each allocation in turn: an error every time, no leak or crash (ASan), and the
 * normal output once no failure hits. */
static void test_alloc_failures(void **state)
{
    fixture_t *fx = *state;
    nnp_step_trace_t st;
    int n;
    build_steps(&fx->m);
    assert_int_equal(nnp__step_trace_run(&fx->c, &st), NNP_OK);
    for (n = 1; n < MAX_ALLOC_FAILS; n++) {
        int rc;
        nnp__alloc_fail_at((uint64_t)n);
        rc = nnp__flops_write(&fx->c, &st, &fx->f);
        /* Success with the failure still pending: every allocation has been tried. */
        if (rc == NNP_OK) {
            assert_true(nnp__alloc_fail_pending());
            break;
        }
        assert_int_equal(rc, NNP_ENOMEM);
        assert_true(nnp_last_error()[0] != '\0');
    }
    nnp__alloc_fail_at(0);
    nnp__step_trace_fini(&st);
    assert_true(n > 1 && n < MAX_ALLOC_FAILS);
    nnpt_afx_expect_file(fx, "flops_0.txt",
                         TXT_HEADER "C,5.000000,500.000,0.000000,0.000\n"
                                    "A,2.000000,333.333,0.000000,0.000\n"
                                    "B,0.000000,0.000,2.000000,200.000\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        NNPT_AFX_TEST(test_matrix_vector_zero_duration_no_peak),
        NNPT_AFX_TEST(test_achieved_fraction_with_peak),
        NNPT_AFX_TEST(test_per_step_totals_and_kernel_time),
        NNPT_AFX_TEST(test_steps_filter),
        NNPT_AFX_TEST(test_zero_time_run),
        NNPT_AFX_TEST(test_no_flops_no_files),
        NNPT_AFX_TEST(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
