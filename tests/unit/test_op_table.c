/* test_op_table.c - the key_averages() table (op_table.c) on ops laid out by hand: counts,
 * totals and self times as torch's EventList counts them (profiler_util.py:
 * _populate_cpu_children, _remove_dup_nodes, self_cpu_time_total), including the whole-us
 * truncation of torch's own traces, where a child can overhang its parent. */
#include <string.h>

#include "analyse/op_table.h"
#include "fixture_model.h"
#include "model/model.h"
#include "test_util.h"
#include "util/util.h"

typedef struct want {
    const char *name;
    uint64_t count;
    int64_t total, self;
} want_t;

static void expect_rows(const nnp_model_t *m, const want_t *w, size_t n)
{
    nnp_op_row_t *rows = NULL;
    size_t n_rows = 0;
    assert_int_equal(nnp__op_table(m, false, 0, 0, 0, &rows, &n_rows), NNP_OK);
    assert_int_equal(n_rows, n);
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < n_rows && strcmp(nnp__model_str(m, rows[k].name), w[i].name) != 0)
            k++;
        if (k == n_rows)
            fail_msg("no row %s", w[i].name);
        if (rows[k].count != w[i].count || rows[k].total_ns != w[i].total ||
            rows[k].self_ns != w[i].self)
            fail_msg("%s: count %llu total %lld self %lld, want %llu %lld %lld", w[i].name,
                     (unsigned long long)rows[k].count, (long long)rows[k].total_ns,
                     (long long)rows[k].self_ns, (unsigned long long)w[i].count,
                     (long long)w[i].total, (long long)w[i].self);
    }
    nnp__free(rows);
}

/* An op of thread 0 over [start, end), its name its type. */
typedef struct op_spec {
    int64_t start, end;
    const char *name;
} op_spec_t;

/* Adds ops to the fixture's model and checks the table against w. */
static void check(nnpt_afx_t *fx, const op_spec_t *ops, size_t n_ops, const want_t *w, size_t n)
{
    for (size_t i = 0; i < n_ops; i++)
        nnpt_add_op(&fx->m, ops[i].start, ops[i].end, ops[i].name, ops[i].name, NULL, NULL);
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    expect_rows(&fx->m, w, n);
}

/* A child that ends after its parent (times in whole us: the evaluate_function of
 * ReshapeAliasBackward0 [0,8), the node [0,7), its aten::reshape [2,8)) is not the node's
 * child but the evaluate_function's: the latter's self is 8 - 7 - 6 = -5, as torch's
 * key_averages gives (a negative self time, which torch shows). Plain nesting beside it:
 * Q [10,20) holding R [12,15): Q 7, R 3. */
static void test_overhanging_child_goes_up(void **state)
{
    static const op_spec_t ops[] = {
        {0, 8, "evaluate"}, {0, 7, "node"}, {2, 8, "reshape"}, {10, 20, "Q"}, {12, 15, "R"},
    };
    static const want_t w[] = {
        {"evaluate", 1, 8, -5}, {"node", 1, 7, 7}, {"reshape", 1, 6, 6},
        {"Q", 1, 10, 7},        {"R", 1, 3, 3},
    };
    check(*state, ops, 5, w, 5);
}

/* An op that starts at another's end is its sibling; an op whose only child has its name
 * is counted once (aten::sum calling aten::sum), the child's children becoming its own:
 * S [30,40) > S [31,39) > T [32,35): S once, total 10, self 10 - 3. */
static void test_siblings_and_same_name_child(void **state)
{
    static const op_spec_t ops[] = {
        {0, 5, "A"}, {5, 10, "A"}, {30, 40, "S"}, {31, 39, "S"}, {32, 35, "T"},
    };
    static const want_t w[] = {{"A", 2, 10, 10}, {"S", 1, 10, 7}, {"T", 1, 3, 3}};
    check(*state, ops, 5, w, 3);
}

/* Our own capture with the CUDA back end: the runtime and driver calls are rows and
 * children of the op that made them, as key_averages() counts a Kineto trace (addmm
 * [0,30) launching [10,18): self 22, launch 8; a driver call [20,23) inside it too: self
 * 19); the calls Kineto never records (cudaGetDevice [2,3)) are neither rows nor children,
 * and other calls (a synchronisation of another API) are not CPU events here. */
static void test_cuda_calls_of_our_captures(void **state)
{
    nnpt_afx_t *fx = *state;
    static const want_t w[] = {
        {"aten::addmm", 1, 30, 19}, {"cudaLaunchKernel", 1, 8, 8}, {"cuMemAlloc_v2", 1, 3, 3}};
    nnpt_add_op(&fx->m, 0, 30, "aten::addmm", "aten::addmm", NULL, NULL);
    nnpt_add_call(&fx->m, 2, 3, "cudaGetDevice", NNP_CALL_CUDA_RUNTIME, 0);
    nnpt_add_call(&fx->m, 10, 18, "cudaLaunchKernel", NNP_CALL_CUDA_RUNTIME, 0);
    nnpt_add_call(&fx->m, 20, 23, "cuMemAlloc_v2", NNP_CALL_CUDA_DRIVER, 0);
    nnpt_add_call(&fx->m, 24, 26, "HostToDevice", NNP_CALL_OTHER, 0);
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    expect_rows(&fx->m, w, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        NNPT_AFX_TEST(test_overhanging_child_goes_up),
        NNPT_AFX_TEST(test_siblings_and_same_name_child),
        NNPT_AFX_TEST(test_cuda_calls_of_our_captures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
