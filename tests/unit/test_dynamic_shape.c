/* test_dynamic_shape.c - dynamic shape analysis (src/analyse/dynamic_shape.c) on hand-built
 * models with answers worked out in the comments: a shape change at step 3, per-step
 * averages per op and per op type, unrecorded shapes and ops outside the steps, --steps
 * that hide the change (no file, an earlier file removed), the cap on listed ops, and
 * allocation failures. Times: US(x) is x us. */
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
#define STEP_US         100
#define N_STEPS         4
/* One more dynamic op than the file lists (dynamic_shape.c MAX_LISTED_OPS). */
#define MAX_LISTED 100
#define N_MANY     (MAX_LISTED + 1)

typedef nnpt_afx_t fixture_t;

static void add_op(nnp_model_t *m, double start_us, double dur_us, const char *name,
                   const char *type, const char *shapes)
{
    nnpt_add_op(m, US(start_us), US(start_us + dur_us), name, type, shapes, NULL);
}

static void add_steps(nnp_model_t *m)
{
    for (uint64_t s = 1; s <= N_STEPS; s++) {
        size_t i = nnp__table_push(&m->steps.t);
        assert_true(i != SIZE_MAX);
        m->steps.id[i] = s;
        m->steps.start_ns[i] = US((double)(s - 1) * STEP_US);
        m->steps.end_ns[i] = US((double)s * STEP_US);
    }
}

/* Runs the step trace and the analysis. */
static int run(fixture_t *fx)
{
    nnp_step_trace_t st;
    int rc;
    assert_int_equal(nnp__step_trace_run(&fx->c, &st), NNP_OK);
    rc = nnp__dynamic_shape_write(&fx->c, &st, &fx->f);
    nnp__step_trace_fini(&st);
    return rc;
}

/* Steps 1-4 of 100 us each.
 *   MatMul-op1: "32,784;784,128" in steps 1 (10 us) and 2 (12 us); "16,784;784,128" from
 *     step 3 on: step 3 twice (6 + 4 us: avg 5), step 4 once (3 us). Dynamic.
 *   MatMul-op2: "32,128;128,10" 2 us every step: static, but its type is MatMul's.
 *   ReLU-op3: "32,128" 1 us every step, and "64,128" at 450 us, outside every step: static.
 *   Cast-op4: no shapes recorded in step 1, "32" after: static (no shape is not a shape).
 * MatMul per step: (10+2)/2 = 6, (12+2)/2 = 7, (6+4+2)/3 = 4, (3+2)/2 = 2.5. */
static void build_change_at_step_3(nnp_model_t *m)
{
    add_steps(m);
    for (int s = 0; s < N_STEPS; s++) {
        double t0 = s * STEP_US;
        add_op(m, t0 + 50, 2, "net/MatMul-op2", "MatMul", "32,128;128,10");
        add_op(m, t0 + 60, 1, "net/ReLU-op3", "ReLU", "32,128");
        add_op(m, t0 + 70, 1, "net/Cast-op4", "Cast", s == 0 ? "" : "32");
    }
    add_op(m, 10, 10, "net/MatMul-op1", "MatMul", "32,784;784,128");
    add_op(m, 110, 12, "net/MatMul-op1", "MatMul", "32,784;784,128");
    add_op(m, 210, 6, "net/MatMul-op1", "MatMul", "16,784;784,128");
    add_op(m, 230, 4, "net/MatMul-op1", "MatMul", "16,784;784,128");
    add_op(m, 310, 3, "net/MatMul-op1", "MatMul", "16,784;784,128");
    add_op(m, 450, 1, "net/ReLU-op3", "ReLU", "64,128");
    assert_int_equal(nnp__model_finish(m), NNP_OK);
}

#define CHANGE_AT_3_JSON                                                                           \
    "{\"n_dynamic_ops\":1,\"n_listed_ops\":1,\"dynamic_ops\":[{\"op_name\":\"net/MatMul-op1\","    \
    "\"op_type\":\"MatMul\",\"n_distinct_shapes\":2,\"shapes_by_step\":{"                          \
    "\"1\":\"32,784;784,128\",\"2\":\"32,784;784,128\",\"3\":\"16,784;784,128\","                  \
    "\"4\":\"16,784;784,128\"}}],"                                                                 \
    "\"op_avg_us_by_step\":{\"net/MatMul-op1\":{\"1\":10.000,\"2\":12.000,\"3\":5.000,"            \
    "\"4\":3.000}},"                                                                               \
    "\"op_type_avg_us_by_step\":{\"MatMul\":{\"1\":6.000,\"2\":7.000,\"3\":4.000,"                 \
    "\"4\":2.500}}}\n"

static void test_shape_change_at_step_3(void **state)
{
    fixture_t *fx = *state;
    build_change_at_step_3(&fx->m);
    fx->c.rank = 2;
    assert_int_equal(run(fx), NNP_OK);
    nnpt_afx_expect_file(fx, "dynamic_shape_info_2.json", CHANGE_AT_3_JSON);
    assert_int_equal(fx->f.n_dynamic_ops, 1);
}

/* --steps 1-2 leaves only the first shape: nothing is dynamic, no file, and the file of
 * the earlier full run is removed. */
static void test_steps_hide_the_change(void **state)
{
    fixture_t *fx = *state;
    build_change_at_step_3(&fx->m);
    assert_int_equal(run(fx), NNP_OK);
    assert_true(nnpt_afx_exists(fx, "dynamic_shape_info_0.json"));
    fx->c.has_steps = true;
    fx->c.step_first = 1;
    fx->c.step_last = 2;
    assert_int_equal(run(fx), NNP_OK);
    assert_false(nnpt_afx_exists(fx, "dynamic_shape_info_0.json"));
    assert_int_equal(fx->f.n_dynamic_ops, 0);
}

/* Every op keeps its shapes: no file. Without steps there is nothing to compare. */
static void test_static_model_no_file(void **state)
{
    fixture_t *fx = *state;
    add_steps(&fx->m);
    for (int s = 0; s < N_STEPS; s++)
        add_op(&fx->m, s * STEP_US + 5, 1, "net/Add-op1", "Add", "8,8;8,8");
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    fx->f.n_dynamic_ops = 7;
    assert_int_equal(run(fx), NNP_OK);
    assert_false(nnpt_afx_exists(fx, "dynamic_shape_info_0.json"));
    assert_int_equal(fx->f.n_dynamic_ops, 0);
    assert_int_equal(nnp__dynamic_shape_write(&fx->c, NULL, &fx->f), NNP_OK);
    assert_false(nnpt_afx_exists(fx, "dynamic_shape_info_0.json"));
}

/* 101 dynamic ops D000..D100 (D<k> takes k+1 us in step 1 and 1 us in step 2, with a new
 * shape): all are counted, the 100 with the most time are listed - D000 (2 us in all) is
 * left out - in name order. Each op has its own type, so 100 types are listed too. */
/* An eager framework runs one op name in several layers of a step (PyTorch's
 * aten::conv2d): layer 1 on 32x32 images, layer 2 on 16x16, the same in every step. Two
 * distinct shapes, but the k-th call of each step keeps its shape: not dynamic. When the
 * second call of step 4 changes, it is. */
static void test_eager_layers_are_not_dynamic(void **state)
{
    fixture_t *fx = *state;
    add_steps(&fx->m);
    for (int s = 0; s < N_STEPS; s++) {
        add_op(&fx->m, s * STEP_US + 5, 1, "aten::conv2d", "aten::conv2d", "8,3,32,32");
        add_op(&fx->m, s * STEP_US + 10, 1, "aten::conv2d", "aten::conv2d",
               s == N_STEPS - 1 ? "8,3,17,17" : "8,3,16,16");
    }
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    fx->c.has_steps = true;
    fx->c.step_first = 1;
    fx->c.step_last = N_STEPS - 1;
    assert_int_equal(run(fx), NNP_OK);
    assert_false(nnpt_afx_exists(fx, "dynamic_shape_info_0.json"));
    assert_int_equal(fx->f.n_dynamic_ops, 0);
    fx->c.has_steps = false;
    assert_int_equal(run(fx), NNP_OK);
    assert_true(nnpt_afx_exists(fx, "dynamic_shape_info_0.json"));
    assert_int_equal(fx->f.n_dynamic_ops, 1);
}

/* A step that runs an op more often took another code path: PyTorch's aten::to runs
 * [A, B] in steps 1 and 3, and [Z, A, B] in steps 2 and 4 (a call that only those steps
 * make comes first). Compared k-th with k-th across every step, step 2's Z, A, B would
 * meet step 1's A, B: a change. Steps are compared only with the first step that ran the
 * op as many times (2 with 4, 1 with 3): no change, no file. When step 4 runs [Z, A, C]
 * its third call differs from step 2's: dynamic, with 4 distinct shapes (Z, A, B, C), and
 * shapes_by_step gives each step's first call. */
static void build_code_paths(nnp_model_t *m, const char *step4_last)
{
    add_steps(m);
    for (int s = 0; s < N_STEPS; s++) {
        double t0 = s * STEP_US;
        bool longer = s % 2 == 1;
        if (longer)
            add_op(m, t0 + 5, 1, "aten::to", "aten::to", "0");
        add_op(m, t0 + 10, 1, "aten::to", "aten::to", "4,4");
        add_op(m, t0 + 20, 1, "aten::to", "aten::to", s == N_STEPS - 1 ? step4_last : "2,2");
    }
    assert_int_equal(nnp__model_finish(m), NNP_OK);
}

static void test_other_code_paths_are_not_dynamic(void **state)
{
    fixture_t *fx = *state;
    build_code_paths(&fx->m, "2,2");
    assert_int_equal(run(fx), NNP_OK);
    assert_false(nnpt_afx_exists(fx, "dynamic_shape_info_0.json"));
    assert_int_equal(fx->f.n_dynamic_ops, 0);
}

static void test_change_within_a_code_path(void **state)
{
    fixture_t *fx = *state;
    char *got;
    build_code_paths(&fx->m, "3,3");
    assert_int_equal(run(fx), NNP_OK);
    assert_int_equal(fx->f.n_dynamic_ops, 1);
    got = nnpt_afx_read(fx, "dynamic_shape_info_0.json");
    assert_non_null(strstr(got, "\"op_name\":\"aten::to\",\"op_type\":\"aten::to\","
                                "\"n_distinct_shapes\":4,\"shapes_by_step\":{\"1\":\"4,4\","
                                "\"2\":\"0\",\"3\":\"4,4\",\"4\":\"0\"}}"));
    free(got);
}

static void test_listed_ops_are_capped(void **state)
{
    fixture_t *fx = *state;
    char name[32], *got;
    add_steps(&fx->m);
    for (int k = 0; k < N_MANY; k++) {
        snprintf(name, sizeof(name), "D%03d", k);
        add_op(&fx->m, 1, k + 1, name, name, "1");
        add_op(&fx->m, 101, 1, name, name, "2");
    }
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    assert_int_equal(run(fx), NNP_OK);
    assert_int_equal(fx->f.n_dynamic_ops, N_MANY);
    got = nnpt_afx_read(fx, "dynamic_shape_info_0.json");
    assert_true(strncmp(got,
                        "{\"n_dynamic_ops\":101,\"n_listed_ops\":100,\"dynamic_ops\":[{"
                        "\"op_name\":\"D001\",",
                        strlen("{\"n_dynamic_ops\":101,\"n_listed_ops\":100,\"dynamic_ops\":[{"
                               "\"op_name\":\"D001\",")) == 0);
    assert_null(strstr(got, "\"D000\""));
    assert_non_null(strstr(got, "\"D100\":{\"1\":101.000,\"2\":1.000}}}\n"));
    free(got);
}

/* Failing each allocation in turn: an error every time, no leak or crash (ASan), and the
 * normal output once no failure hits. */
static void test_alloc_failures(void **state)
{
    fixture_t *fx = *state;
    nnp_step_trace_t st;
    int n;
    build_change_at_step_3(&fx->m);
    assert_int_equal(nnp__step_trace_run(&fx->c, &st), NNP_OK);
    for (n = 1; n < MAX_ALLOC_FAILS; n++) {
        int rc;
        nnp__alloc_fail_at((uint64_t)n);
        rc = nnp__dynamic_shape_write(&fx->c, &st, &fx->f);
        if (rc == NNP_OK) {
            assert_true(nnp__alloc_fail_pending());
            break;
        }
        assert_int_equal(rc, NNP_ENOMEM);
    }
    nnp__alloc_fail_at(0);
    nnp__step_trace_fini(&st);
    assert_true(n > 1 && n < MAX_ALLOC_FAILS);
    nnpt_afx_expect_file(fx, "dynamic_shape_info_0.json", CHANGE_AT_3_JSON);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        NNPT_AFX_TEST(test_shape_change_at_step_3),
        NNPT_AFX_TEST(test_steps_hide_the_change),
        NNPT_AFX_TEST(test_static_model_no_file),
        NNPT_AFX_TEST(test_eager_layers_are_not_dynamic),
        NNPT_AFX_TEST(test_other_code_paths_are_not_dynamic),
        NNPT_AFX_TEST(test_change_within_a_code_path),
        NNPT_AFX_TEST(test_listed_ops_are_capped),
        NNPT_AFX_TEST(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
