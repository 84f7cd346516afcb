/* test_op_stats.c - operator statistics (src/analyse/op_stats.c) on hand-built models with
 * answers worked out in the comments: grouping by type and by name over host ops and
 * kernels, sort order and ties, per-side ratios, zero-duration ops, launching ops by
 * correlation id, --steps restriction with ops crossing a step boundary, the top-20 file,
 * the empty model, nnp__op_query, and allocation failures. Times: US(x) is x us. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "analyse/op_stats.h"
#include "fixture_model.h"
#include "model/model.h"
#include "test_util.h"
#include "util/util.h"

#define NS_PER_US 1000.0
/* x us in ns (rounded to the ns). */
#define US(x)           ((int64_t)((x)*NS_PER_US + 0.5))
#define MAX_ALLOC_FAILS 200
/* More op types than the top-20 file keeps. */
#define N_MANY_TYPES 25

typedef nnpt_afx_t fixture_t;

static void add_op(nnp_model_t *m, int64_t start, int64_t end, const char *name, const char *type,
                   uint64_t corr)
{
    /* The call may grow the table (and move its columns): index after it. */
    size_t i = nnpt_add_op(m, start, end, name, type, NULL, NULL);
    m->ops.corr[i] = corr;
}

static void add_kernel(nnp_model_t *m, int64_t start, int64_t end, const char *name,
                       const char *type, uint32_t stream, uint64_t corr)
{
    size_t i = nnp__table_push(&m->kernels.t);
    assert_true(i != SIZE_MAX);
    m->kernels.start_ns[i] = start;
    m->kernels.end_ns[i] = end;
    m->kernels.name[i] = nnp__model_intern_cstr(m, name);
    m->kernels.type[i] = nnp__model_intern_cstr(m, type);
    m->kernels.stream_id[i] = stream;
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

#define STAT_HEADER                                                                                \
    "OP Type,Core Type,Count,Total Time(us),Avg Time(us),Min Time(us),Max Time(us),Ratio(%)\n"
#define DETAIL_HEADER                                                                              \
    "Op Name,OP Type,Core Type,Count,Total Time(us),Avg Time(us),Min Time(us),Max Time(us),"       \
    "Ratio(%)\n"
#define KERNEL_HEADER                                                                              \
    "Step Id,Name,Type,Core Type,Stream ID,Start Time(us),Duration(us),Launching Op\n"

/* kernel_details_0.csv of build_mixed(): every kernel in time order, its launching op. */
#define MIXED_KERNEL_DETAILS                                                                       \
    KERNEL_HEADER ",memcpy_h2d,memcpy_h2d,MEMCPY,8,5.000,1.000,\n"                                 \
                  ",volta_sgemm,MatMul,KERNEL,7,11.000,1.500,Default/MatMul-op1\n"                 \
                  ",volta_sgemm,MatMul,KERNEL,7,21.000,0.500,Default/MatMul-op2\n"                 \
                  ",relu_kernel,ReLU,KERNEL,7,31.000,2.000,Default/ReLU-op3\n"                     \
                  ",nameless,nameless,KERNEL,7,80.000,0.000,\n"

/* Host ops (HOST_CPU side, total 8.001 us):
 *   MatMul-op1 10-13 (3, corr 1), MatMul-op2 20-21 (1, corr 2), ReLU-op3 30-34 (4, corr 3),
 *   Add-op4 40-40 (zero duration), Add-op6 70-70.001 (1 ns).
 * Kernels (device side, total 5 us):
 *   memcpy_h2d MEMCPY 5-6 (1, no launcher: type = its name), volta_sgemm 11-12.5 (1.5,
 *   corr 1: MatMul) and 21-21.5 (0.5, corr 2: MatMul), relu_kernel 31-33 (2, corr 3: ReLU),
 *   "nameless" 80-80 with no type (core KERNEL) and a corr no op has. */
static void build_mixed(nnp_model_t *m)
{
    add_op(m, US(10), US(13), "Default/MatMul-op1", "MatMul", 1);
    add_op(m, US(20), US(21), "Default/MatMul-op2", "MatMul", 2);
    add_op(m, US(30), US(34), "Default/ReLU-op3", "ReLU", 3);
    add_op(m, US(40), US(40), "Default/Add-op4", "Add", 0);
    add_op(m, US(70), US(70.001), "Default/Add-op6", "Add", 0);
    add_kernel(m, US(11), US(12.5), "volta_sgemm", "KERNEL", 7, 1);
    add_kernel(m, US(21), US(21.5), "volta_sgemm", "KERNEL", 7, 2);
    add_kernel(m, US(31), US(33), "relu_kernel", "KERNEL", 7, 3);
    add_kernel(m, US(5), US(6), "memcpy_h2d", "MEMCPY", 8, 0);
    add_kernel(m, US(80), US(80), "nameless", "", 7, 99);
    assert_int_equal(nnp__model_finish(m), NNP_OK);
}

/* By type: host MatMul 4 and ReLU 4 tie (type name breaks it), each 4/8.001 = 49.99%;
 * Add 0.001/8.001 = 0.01%, avg (0+1)/2 ns rounded half up = 1 ns. Device ratios are of 5:
 * MatMul 2 (40%), ReLU 2 (40%), memcpy 1 (20%), nameless 0. By name: ReLU-op3 4, MatMul-op1
 * 3 (37.50%), then the 2 us tie relu_kernel < volta_sgemm, the 1 us tie
 * "Default/MatMul-op2" (12.50%) < "memcpy_h2d", Add-op6, and the zero tie Add-op4 <
 * nameless. kernel_details lists kernels by start with their launching op. */
static void test_mixed_sorting_and_ratios(void **state)
{
    fixture_t *fx = *state;
    build_mixed(&fx->m);
    assert_int_equal(nnp__op_stats_write_all(&fx->c, NULL), NNP_OK);
    nnpt_afx_expect_file(fx, "op_statistic_0.csv",
                         STAT_HEADER "MatMul,HOST_CPU,2,4.000,2.000,1.000,3.000,49.99\n"
                                     "ReLU,HOST_CPU,1,4.000,4.000,4.000,4.000,49.99\n"
                                     "MatMul,KERNEL,2,2.000,1.000,0.500,1.500,40.00\n"
                                     "ReLU,KERNEL,1,2.000,2.000,2.000,2.000,40.00\n"
                                     "memcpy_h2d,MEMCPY,1,1.000,1.000,1.000,1.000,20.00\n"
                                     "Add,HOST_CPU,2,0.001,0.001,0.000,0.001,0.01\n"
                                     "nameless,KERNEL,1,0.000,0.000,0.000,0.000,0.00\n");
    nnpt_afx_expect_file(fx, "op_detail_0.csv",
                         DETAIL_HEADER
                         "Default/ReLU-op3,ReLU,HOST_CPU,1,4.000,4.000,4.000,4.000,49.99\n"
                         "Default/MatMul-op1,MatMul,HOST_CPU,1,3.000,3.000,3.000,3.000,37.50\n"
                         "relu_kernel,ReLU,KERNEL,1,2.000,2.000,2.000,2.000,40.00\n"
                         "volta_sgemm,MatMul,KERNEL,2,2.000,1.000,0.500,1.500,40.00\n"
                         "Default/MatMul-op2,MatMul,HOST_CPU,1,1.000,1.000,1.000,1.000,12.50\n"
                         "memcpy_h2d,memcpy_h2d,MEMCPY,1,1.000,1.000,1.000,1.000,20.00\n"
                         "Default/Add-op6,Add,HOST_CPU,1,0.001,0.001,0.001,0.001,0.01\n"
                         "Default/Add-op4,Add,HOST_CPU,1,0.000,0.000,0.000,0.000,0.00\n"
                         "nameless,nameless,KERNEL,1,0.000,0.000,0.000,0.000,0.00\n");
    nnpt_afx_expect_file(fx, "kernel_details_0.csv", MIXED_KERNEL_DETAILS);
    nnpt_afx_expect_file(
        fx, "op_statistic_top20_0.json",
        "[{\"op_type\":\"MatMul\",\"core_type\":\"HOST_CPU\",\"count\":2,\"total_time_us\":4.000,"
        "\"avg_time_us\":2.000,\"min_time_us\":1.000,\"max_time_us\":3.000,"
        "\"ratio_percent\":49.99},"
        "{\"op_type\":\"ReLU\",\"core_type\":\"HOST_CPU\",\"count\":1,\"total_time_us\":4.000,"
        "\"avg_time_us\":4.000,\"min_time_us\":4.000,\"max_time_us\":4.000,"
        "\"ratio_percent\":49.99},"
        "{\"op_type\":\"MatMul\",\"core_type\":\"KERNEL\",\"count\":2,\"total_time_us\":2.000,"
        "\"avg_time_us\":1.000,\"min_time_us\":0.500,\"max_time_us\":1.500,"
        "\"ratio_percent\":40.00},"
        "{\"op_type\":\"ReLU\",\"core_type\":\"KERNEL\",\"count\":1,\"total_time_us\":2.000,"
        "\"avg_time_us\":2.000,\"min_time_us\":2.000,\"max_time_us\":2.000,"
        "\"ratio_percent\":40.00},"
        "{\"op_type\":\"memcpy_h2d\",\"core_type\":\"MEMCPY\",\"count\":1,"
        "\"total_time_us\":1.000,\"avg_time_us\":1.000,\"min_time_us\":1.000,"
        "\"max_time_us\":1.000,\"ratio_percent\":20.00},"
        "{\"op_type\":\"Add\",\"core_type\":\"HOST_CPU\",\"count\":2,\"total_time_us\":0.001,"
        "\"avg_time_us\":0.001,\"min_time_us\":0.000,\"max_time_us\":0.001,"
        "\"ratio_percent\":0.01},"
        "{\"op_type\":\"nameless\",\"core_type\":\"KERNEL\",\"count\":1,"
        "\"total_time_us\":0.000,\"avg_time_us\":0.000,\"min_time_us\":0.000,"
        "\"max_time_us\":0.000,\"ratio_percent\":0.00}]\n");
}

/* Host-only run, steps [0,100) [100,200) [200,300) us. Ops: A 50-150 (type TA; starts in
 * step 1, crosses into 2), B 150-250 (TB; step 2, crosses into 3), C 210-220 (TA; step 3),
 * E 250-250 (TC; zero duration, step 3), D 300-310 (TB; starts at step 3's end: no step).
 * With --steps 2-3 only B, C, E count: total 110; TB 100 (90.91%), TA 10 (9.09%), TC 0.
 * Without --steps every op counts; D has no step id. No kernels: kernel_details lists the
 * host ops. */
static void build_host_steps(nnp_model_t *m)
{
    add_step(m, 1, US(0), US(100));
    add_step(m, 2, US(100), US(200));
    add_step(m, 3, US(200), US(300));
    add_op(m, US(50), US(150), "A", "TA", 0);
    add_op(m, US(150), US(250), "B", "TB", 0);
    add_op(m, US(210), US(220), "C", "TA", 0);
    add_op(m, US(250), US(250), "E", "TC", 0);
    add_op(m, US(300), US(310), "D", "TB", 0);
    assert_int_equal(nnp__model_finish(m), NNP_OK);
}

static void test_steps_and_boundaries(void **state)
{
    fixture_t *fx = *state;
    nnp_step_trace_t st;
    build_host_steps(&fx->m);
    fx->c.has_steps = true;
    fx->c.step_first = 2;
    fx->c.step_last = 3;
    fx->c.rank = 5;
    assert_int_equal(nnp__step_trace_run(&fx->c, &st), NNP_OK);
    assert_int_equal(nnp__op_stats_write_all(&fx->c, &st), NNP_OK);
    nnp__step_trace_fini(&st);
    nnpt_afx_expect_file(fx, "op_statistic_5.csv",
                         STAT_HEADER "TB,HOST_CPU,1,100.000,100.000,100.000,100.000,90.91\n"
                                     "TA,HOST_CPU,1,10.000,10.000,10.000,10.000,9.09\n"
                                     "TC,HOST_CPU,1,0.000,0.000,0.000,0.000,0.00\n");
    nnpt_afx_expect_file(fx, "kernel_details_5.csv",
                         KERNEL_HEADER "2,B,TB,HOST_CPU,0,150.000,100.000,\n"
                                       "3,C,TA,HOST_CPU,0,210.000,10.000,\n"
                                       "3,E,TC,HOST_CPU,0,250.000,0.000,\n");

    /* All steps: TB = B + D = 110, TA = A + C = 110 (tie: TA first), total 220. */
    fx->c.has_steps = false;
    assert_int_equal(nnp__step_trace_run(&fx->c, &st), NNP_OK);
    assert_int_equal(nnp__op_stats_write_all(&fx->c, &st), NNP_OK);
    nnp__step_trace_fini(&st);
    nnpt_afx_expect_file(fx, "op_statistic_5.csv",
                         STAT_HEADER "TA,HOST_CPU,2,110.000,55.000,10.000,100.000,50.00\n"
                                     "TB,HOST_CPU,2,110.000,55.000,10.000,100.000,50.00\n"
                                     "TC,HOST_CPU,1,0.000,0.000,0.000,0.000,0.00\n");
    nnpt_afx_expect_file(fx, "kernel_details_5.csv",
                         KERNEL_HEADER "1,A,TA,HOST_CPU,0,50.000,100.000,\n"
                                       "2,B,TB,HOST_CPU,0,150.000,100.000,\n"
                                       "3,C,TA,HOST_CPU,0,210.000,10.000,\n"
                                       "3,E,TC,HOST_CPU,0,250.000,0.000,\n"
                                       ",D,TB,HOST_CPU,0,300.000,10.000,\n");
}

/* --steps without a step trace is a caller error, reported, not a crash. */
static void test_steps_need_step_trace(void **state)
{
    fixture_t *fx = *state;
    build_host_steps(&fx->m);
    fx->c.has_steps = true;
    assert_int_equal(nnp__op_stats_write_all(&fx->c, NULL), NNP_EINVAL);
}

/* No ops at all: every file is written with its header only; the top-20 is "[]". */
static void test_empty_model(void **state)
{
    fixture_t *fx = *state;
    nnp_step_trace_t st;
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    assert_int_equal(nnp__step_trace_run(&fx->c, &st), NNP_OK);
    fx->c.pretty = true;
    assert_int_equal(nnp__op_stats_write_all(&fx->c, &st), NNP_OK);
    nnp__step_trace_fini(&st);
    nnpt_afx_expect_file(fx, "op_statistic_0.csv", STAT_HEADER);
    nnpt_afx_expect_file(fx, "op_detail_0.csv", DETAIL_HEADER);
    nnpt_afx_expect_file(fx, "kernel_details_0.csv", KERNEL_HEADER);
    nnpt_afx_expect_file(fx, "op_statistic_top20_0.json", "[]\n");
}

/* 25 types with durations 1..25 us: op_statistic has all 25 (largest first), the top-20
 * file the first 20 (25 down to 6). */
static void test_top20_keeps_twenty(void **state)
{
    fixture_t *fx = *state;
    char name[32], *got, *p;
    int n = 0;
    for (int i = 1; i <= N_MANY_TYPES; i++) {
        snprintf(name, sizeof(name), "T%02d", i);
        add_op(&fx->m, US(100 * i), US(100 * i + i), name, name, 0);
    }
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    assert_int_equal(nnp__op_stats_write_all(&fx->c, NULL), NNP_OK);
    got = nnpt_afx_read(fx, "op_statistic_top20_0.json");
    for (p = got; (p = strstr(p, "\"op_type\"")) != NULL; p++)
        n++;
    assert_int_equal(n, 20);
    assert_non_null(strstr(got, "\"T06\""));
    assert_null(strstr(got, "\"T05\""));
    assert_true(strncmp(got, "[{\"op_type\":\"T25\"", strlen("[{\"op_type\":\"T25\"")) == 0);
    free(got);
    got = nnpt_afx_read(fx, "op_statistic_0.csv");
    for (n = 0, p = got; (p = strchr(p, '\n')) != NULL; p++)
        n++;
    assert_int_equal(n, N_MANY_TYPES + 1);
    free(got);
}

/* Kernels present: a name matches kernels by their own name or their launching op's full
 * name or type (MatMul: the two volta_sgemm kernels, 1.5 + 0.5 us). */
static void test_query_kernels(void **state)
{
    fixture_t *fx = *state;
    const char *names[] = {"MatMul", "volta_sgemm", "Default/ReLU-op3", "memcpy_h2d", "Unknown"};
    nnp_op_query_row_t *rows;
    size_t n;
    build_mixed(&fx->m);
    assert_int_equal(nnp__op_query(&fx->m, names, 5, &rows, &n), NNP_OK);
    assert_int_equal(n, 5);
    assert_ptr_equal(rows[0].name, names[0]);
    assert_int_equal(rows[0].count, 2);
    assert_int_equal(rows[0].total_ns, US(2));
    assert_int_equal(rows[0].avg_ns, US(1));
    assert_int_equal(rows[0].min_ns, US(0.5));
    assert_int_equal(rows[0].max_ns, US(1.5));
    assert_int_equal(rows[1].count, 2);
    assert_int_equal(rows[1].total_ns, US(2));
    assert_int_equal(rows[2].count, 1);
    assert_int_equal(rows[2].total_ns, US(2));
    assert_int_equal(rows[3].count, 1);
    assert_int_equal(rows[3].max_ns, US(1));
    assert_int_equal(rows[4].count, 0);
    assert_int_equal(rows[4].total_ns, 0);
    assert_int_equal(rows[4].min_ns, 0);
    nnp__free(rows);
}

/* No kernels: host ops match by full name or type, over the whole run (no step filter):
 * TA = A (100) + C (10): avg 55, min 10, max 100. E has zero duration and counts. */
static void test_query_host_ops(void **state)
{
    fixture_t *fx = *state;
    const char *names[] = {"TA", "E", "B"};
    nnp_op_query_row_t *rows;
    size_t n;
    build_host_steps(&fx->m);
    assert_int_equal(nnp__op_query(&fx->m, names, 3, &rows, &n), NNP_OK);
    assert_int_equal(rows[0].count, 2);
    assert_int_equal(rows[0].total_ns, US(110));
    assert_int_equal(rows[0].avg_ns, US(55));
    assert_int_equal(rows[0].min_ns, US(10));
    assert_int_equal(rows[0].max_ns, US(100));
    assert_int_equal(rows[1].count, 1);
    assert_int_equal(rows[1].total_ns, 0);
    assert_int_equal(rows[2].count, 1);
    assert_int_equal(rows[2].total_ns, US(100));
    nnp__free(rows);
}

/* Empty names, no names and NULL names are rejected with MindSpore's op_analyse text. */
static void test_query_empty_name(void **state)
{
    fixture_t *fx = *state;
    const char *bad[] = {"MatMul", ""};
    const char *null_name[] = {NULL};
    const char *want = "For 'Profiler.op_analyse()', the parameter op_name cannot be \"\", '' "
                       "or [].";
    nnp_op_query_row_t *rows = (nnp_op_query_row_t *)&rows;
    size_t n = 7;
    build_mixed(&fx->m);
    assert_int_equal(nnp__op_query(&fx->m, bad, 2, &rows, &n), NNP_EINVAL);
    assert_string_equal(nnp_last_error(), want);
    assert_null(rows);
    assert_int_equal(n, 0);
    assert_int_equal(nnp__op_query(&fx->m, bad, 0, &rows, &n), NNP_EINVAL);
    assert_string_equal(nnp_last_error(), want);
    assert_int_equal(nnp__op_query(&fx->m, null_name, 1, &rows, &n), NNP_EINVAL);
    assert_int_equal(nnp__op_query(&fx->m, NULL, 1, &rows, &n), NNP_EINVAL);
    assert_int_equal(nnp__op_query(&fx->m, bad, 1, NULL, &n), NNP_EINVAL);
}

/* Failing each allocation in turn: an error every time, no leak or crash (ASan), and the
 * normal output once no failure hits. */
static void test_alloc_failures(void **state)
{
    fixture_t *fx = *state;
    const char *names[] = {"MatMul"};
    int n;
    build_mixed(&fx->m);
    for (n = 1; n < MAX_ALLOC_FAILS; n++) {
        nnp_op_query_row_t *rows = NULL;
        size_t n_rows;
        int rc;
        nnp__alloc_fail_at((uint64_t)n);
        rc = nnp__op_stats_write_all(&fx->c, NULL);
        if (rc == NNP_OK)
            rc = nnp__op_query(&fx->m, names, 1, &rows, &n_rows);
        nnp__free(rows);
        /* Success with the failure still pending: every allocation has been tried. */
        if (rc == NNP_OK) {
            assert_true(nnp__alloc_fail_pending());
            break;
        }
        assert_int_equal(rc, NNP_ENOMEM);
    }
    nnp__alloc_fail_at(0);
    assert_true(n > 1 && n < MAX_ALLOC_FAILS);
    nnpt_afx_expect_file(fx, "kernel_details_0.csv", MIXED_KERNEL_DETAILS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        NNPT_AFX_TEST(test_mixed_sorting_and_ratios), NNPT_AFX_TEST(test_steps_and_boundaries),
        NNPT_AFX_TEST(test_steps_need_step_trace),    NNPT_AFX_TEST(test_empty_model),
        NNPT_AFX_TEST(test_top20_keeps_twenty),       NNPT_AFX_TEST(test_query_kernels),
        NNPT_AFX_TEST(test_query_host_ops),           NNPT_AFX_TEST(test_query_empty_name),
        NNPT_AFX_TEST(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
