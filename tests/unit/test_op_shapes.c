/* test_op_shapes.c - op_shapes_{rank}.csv (src/analyse/op_shapes.c): one row per distinct
 * (op name, shapes, dtypes) with its count, sorted by name then count; ops without shapes
 * left out; quoting of shapes holding commas; no file (and a stale one removed) when no op
 * recorded shapes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyse/analyse.h"
#include "fixture_model.h"
#include "model/model.h"
#include "test_util.h"
#include "util/util.h"

typedef nnpt_afx_t fixture_t;

static int setup(void **state)
{
    fixture_t *fx;
    if (nnpt_afx_setup(state) != 0)
        return -1;
    fx = *state;
    fx->c.rank = 3;
    return 0;
}

static void test_variants(void **state)
{
    fixture_t *fx = *state;
    char p[4096], *text = NULL;
    /* MatMul: 32x784 twice, 16x784 once; Add: one variant; ReLU: no shapes recorded. */
    nnpt_add_op(&fx->m, 0, 10, "net/MatMul-op1", "MatMul", "16,784;784,128", "float32;float32");
    nnpt_add_op(&fx->m, 10, 20, "net/MatMul-op1", "MatMul", "32,784;784,128", "float32;float32");
    nnpt_add_op(&fx->m, 20, 30, "net/MatMul-op1", "MatMul", "32,784;784,128", "float32;float32");
    nnpt_add_op(&fx->m, 30, 40, "net/Add-op2", "Add", "8;8", NULL);
    nnpt_add_op(&fx->m, 40, 50, "net/ReLU-op3", "ReLU", NULL, NULL);
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    assert_int_equal(nnp__op_shapes_write(&fx->c), NNP_OK);
    snprintf(p, sizeof(p), "%s/op_shapes_3.csv", fx->dir);
    assert_int_equal(nnp__read_file(p, 1u << 20, &text, NULL), NNP_OK);
    assert_string_equal(text, "Op Name,OP Type,Input Shapes,Input Data Types,Count\n"
                              "net/Add-op2,Add,8;8,,1\n"
                              "net/MatMul-op1,MatMul,\"32,784;784,128\",float32;float32,2\n"
                              "net/MatMul-op1,MatMul,\"16,784;784,128\",float32;float32,1\n");
    nnp__free(text);
}

static void test_none_removes_stale(void **state)
{
    fixture_t *fx = *state;
    char p[4096];
    FILE *f;
    snprintf(p, sizeof(p), "%s/op_shapes_3.csv", fx->dir);
    f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
    nnpt_add_op(&fx->m, 0, 10, "net/ReLU-op3", "ReLU", NULL, NULL);
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    assert_int_equal(nnp__op_shapes_write(&fx->c), NNP_OK);
    assert_int_equal(access(p, F_OK), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_variants, setup, nnpt_afx_teardown),
        cmocka_unit_test_setup_teardown(test_none_removes_stale, setup, nnpt_afx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
