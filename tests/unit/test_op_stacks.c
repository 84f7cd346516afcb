/* test_op_stacks.c - ops' source stacks (nnp_op_t.stack, with_stack) end to end through the
 * public API: recorded in the op's third slot, read back, and grouped by nnp_op_table_ex's
 * NNP_OP_TABLE_BY_STACK under torch.profiler's rule for backward ops (op_stacks.c): an
 * autograd node and what runs in it count under the stack of the first op, outside any
 * node, of its link; none when there is no such op (a node with no link, or a link whose
 * only forward op ran inside a node); and `nnprof analyse`'s op_stacks_{rank}.csv, which
 * leaves out the frames torch leaves out and sums the rows that then match. Times are exact
 * (the *_at calls); the expected rows are worked out beside the recording. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "util/util.h"

/* Stacks, innermost frame first. */
#define S1 "<built-in function linear>\nm.py(3): f\nm.py(30): <module>"
#define S2 "m.py(9): g\nm.py(31): <module>"
#define S3                                                                                         \
    "<built-in method run_backward of torch._C._EngineBase object at 0x10>\nm.py(32): <module>"

/* Two stacks of one call site, one with a frame torch drops from every stack. */
#define S4A "m.py(5): h\ntorch/autograd/__init__.py(197): backward\nm.py(33): <module>"
#define S4B "m.py(5): h\nm.py(33): <module>"

#define FWD_THREAD 1

typedef nnpt_raw_fx_t fixture_t;

static void at(const char *name, const char *stack, int64_t seq, bool backward, int64_t start,
               int64_t end)
{
    nnp_op_t o;
    memset(&o, 0, sizeof(o));
    o.name = o.type = nnp_intern(name);
    o.stack = stack ? nnp_intern(stack) : 0;
    o.is_backward = backward;
    if (seq >= 0) {
        o.has_sequence = true;
        o.sequence_nr = seq;
        o.seq_thread = FWD_THREAD;
    }
    nnp_op_at(&o, (uint64_t)(NNPT_T0 + start), (uint64_t)(NNPT_T0 + end));
}

/* The run (ns after NNPT_T0), one thread:
 *   aten::linear [1000, 5000] seq 7, S1          self 4000 - 2500 = 1500
 *     aten::addmm [1500, 4000] seq 7, S1         self 2500
 *   aten::mm [5000, 6000] S2                     self 1000
 *   AddmmBackward0 [11000, 14000] node of seq 7, S3 -> S1 (aten::linear: first of seq 7)
 *     aten::t [11500, 12000] S3 -> S1            self 500 (under 1 us: 0 whole us)
 *     aten::mm [12000, 13000] S3 -> S1           self 1000
 *   AccumulateGrad [14000, 16000] node with no link, S3 -> none
 *     aten::add_ [14500, 15500] S3 -> none
 *     aten::mul [15500, 15900] seq 10, S3 -> none (a forward op, but inside a node)
 *   aten::empty [18000, 18500] no stack
 *   MulBackward0 [19000, 19500] node of seq 10, S3 -> none (seq 10's only op is in a node)
 *   aten::zero_ [20000, 20500] S4A, aten::zero_ [21000, 21300] S4B: one row in the CSV */
static void record_run(const nnpt_run_t *r, void *arg)
{
    (void)r;
    (void)arg;
    at("aten::linear", S1, 7, false, 1000, 5000);
    at("aten::addmm", S1, 7, false, 1500, 4000);
    at("aten::mm", S2, -1, false, 5000, 6000);
    at("AddmmBackward0", S3, 7, true, 11000, 14000);
    at("aten::t", S3, -1, false, 11500, 12000);
    at("aten::mm", S3, -1, false, 12000, 13000);
    at("torch::autograd::AccumulateGrad", S3, -1, true, 14000, 16000);
    at("aten::add_", S3, -1, false, 14500, 15500);
    at("aten::mul", S3, 10, false, 15500, 15900);
    at("aten::empty", NULL, -1, false, 18000, 18500);
    at("MulBackward0", S3, 10, true, 19000, 19500);
    at("aten::zero_", S4A, -1, false, 20000, 20500);
    at("aten::zero_", S4B, -1, false, 21000, 21300);
}

static int setup(void **state)
{
    fixture_t *fx = calloc(1, sizeof(*fx));
    nnpt_run_t run;
    if (!fx)
        return -1;
    fx->dir = nnpt_mkdtemp();
    memset(&run, 0, sizeof(run));
    run.record = record_run;
    nnpt_record_in_child(fx->dir, &run, fx->raw, sizeof(fx->raw));
    *state = fx;
    return 0;
}

/* The row of name and stack, failing the test when there is none or more than one. */
static const cJSON *row(const cJSON *t, const char *name, const char *stack)
{
    const cJSON *found = NULL, *r;
    cJSON_ArrayForEach(r, t)
    {
        const char *n = cJSON_GetStringValue(cJSON_GetObjectItem(r, "name"));
        const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(r, "stack"));
        if (n && s && strcmp(n, name) == 0 && strcmp(s, stack) == 0) {
            if (found)
                fail_msg("two rows of %s", name);
            found = r;
        }
    }
    if (!found)
        fail_msg("no row of %s with stack \"%s\"", name, stack);
    return found;
}

static void expect(const cJSON *t, const char *name, const char *stack, int count, int self_ns,
                   int self_us_whole)
{
    const cJSON *r = row(t, name, stack);
    assert_int_equal(cJSON_GetObjectItem(r, "count")->valuedouble, count);
    assert_int_equal(cJSON_GetObjectItem(r, "self_ns")->valuedouble, self_ns);
    assert_int_equal(cJSON_GetObjectItem(r, "self_us_whole")->valuedouble, self_us_whole);
}

static void test_rows_by_stack(void **state)
{
    fixture_t *fx = *state;
    cJSON *t = nnpt_op_table(fx->raw, NULL, NNP_OP_TABLE_BY_STACK);
    assert_int_equal(cJSON_GetArraySize(t), 13);
    expect(t, "aten::linear", S1, 1, 1500, 1);
    expect(t, "aten::addmm", S1, 1, 2500, 2);
    expect(t, "aten::mm", S2, 1, 1000, 1);
    expect(t, "AddmmBackward0", S1, 1, 1500, 1);
    expect(t, "aten::t", S1, 1, 500, 0);
    expect(t, "aten::mm", S1, 1, 1000, 1);
    expect(t, "torch::autograd::AccumulateGrad", "", 1, 600, 0);
    expect(t, "aten::add_", "", 1, 1000, 1);
    expect(t, "aten::mul", "", 1, 400, 0);
    expect(t, "aten::empty", "", 1, 500, 0);
    expect(t, "MulBackward0", "", 1, 500, 0);
    expect(t, "aten::zero_", S4A, 1, 500, 0);
    expect(t, "aten::zero_", S4B, 1, 300, 0);
    cJSON_Delete(t);
}

/* Without the flag: one row per name (aten::mm's two stacks in one), no stack keys; an
 * unknown flag is refused. */
static void test_rows_without_stacks(void **state)
{
    fixture_t *fx = *state;
    char *json = NULL;
    cJSON *t = nnpt_op_table(fx->raw, NULL, 0), *r;
    int mm = 0;
    assert_int_equal(cJSON_GetArraySize(t), 11);
    cJSON_ArrayForEach(r, t)
    {
        assert_null(cJSON_GetObjectItem(r, "stack"));
        if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(r, "name")), "aten::mm") == 0)
            mm = (int)cJSON_GetObjectItem(r, "count")->valuedouble;
    }
    assert_int_equal(mm, 2);
    cJSON_Delete(t);
    assert_int_equal(nnp_op_table_ex(fx->raw, NULL, 0x8u, &json), NNP_EINVAL);
    assert_null(json);
}

/* op_stacks_0.csv, worked out from the run above: the rows of the table by stack, frames
 * joined by ';', zero_'s two stacks one row once torch's autograd frame is left out (2
 * calls, 800 ns), by self time then name and source; shares of the 11,800 ns of self time. */
static void test_analyse_csv(void **state)
{
    fixture_t *fx = *state;
    char *out = nnpt_mkdtemp(), *csv;
    static char text[1 << 16];
    assert_int_equal(nnpt_analyse_to(fx->raw, out), NNP_OK);
    csv = nnpt_read_in(out, "op_stacks_0.csv");
    assert_string_equal(
        csv, "Name,Source Location,Calls,Total Time(us),Self Time(us),Avg Time(us),Min Time(us),"
             "Max Time(us),Self Time(%)\n"
             "aten::addmm,<built-in function linear>;m.py(3): f;m.py(30): "
             "<module>,1,2.500,2.500,2.500,2.500,2.500,21.19\n"
             "AddmmBackward0,<built-in function linear>;m.py(3): f;m.py(30): "
             "<module>,1,3.000,1.500,3.000,3.000,3.000,12.71\n"
             "aten::linear,<built-in function linear>;m.py(3): f;m.py(30): "
             "<module>,1,4.000,1.500,4.000,4.000,4.000,12.71\n"
             "aten::add_,,1,1.000,1.000,1.000,1.000,1.000,8.47\n"
             "aten::mm,<built-in function linear>;m.py(3): f;m.py(30): "
             "<module>,1,1.000,1.000,1.000,1.000,1.000,8.47\n"
             "aten::mm,m.py(9): g;m.py(31): <module>,1,1.000,1.000,1.000,1.000,1.000,8.47\n"
             "aten::zero_,m.py(5): h;m.py(33): <module>,2,0.800,0.800,0.400,0.300,0.500,6.78\n"
             "torch::autograd::AccumulateGrad,,1,2.000,0.600,2.000,2.000,2.000,5.08\n"
             "MulBackward0,,1,0.500,0.500,0.500,0.500,0.500,4.24\n"
             "aten::empty,,1,0.500,0.500,0.500,0.500,0.500,4.24\n"
             "aten::t,<built-in function linear>;m.py(3): f;m.py(30): "
             "<module>,1,0.500,0.500,0.500,0.500,0.500,4.24\n"
             "aten::mul,,1,0.400,0.400,0.400,0.400,0.400,3.39\n");
    free(csv);
    /* `nnprof summary`: the 5 rows with a source location that have the most self time
     * (aten::add_ has none), each with its two innermost frames. */
    assert_int_equal(nnpt_cli(text, sizeof(text), "summary '%s'", out), 0);
    if (!strstr(text, "Top source locations by self time (op_stacks_0.csv, innermost frames "
                      "first):\n  aten::addmm ") ||
        !strstr(text, "      at <built-in function linear>\n      <- m.py(3): f\n") ||
        !strstr(text, "      at m.py(9): g\n      <- m.py(31): <module>\n") ||
        strstr(text, "  aten::zero_ ")) /* 6th by self time: 5 rows shown */
        fail_msg("summary:\n%s", text);
    nnpt_rm_rf(out);
    free(out);
}

/* `nnprof dump` shows an op's stack and a node with no link as a backward op. */
static void test_dump(void **state)
{
    fixture_t *fx = *state;
    static char out[1 << 16];
    const char *acc, *line_end;
    assert_int_equal(nnpt_cli(out, sizeof(out), "dump '%s'", fx->raw), 0);
    acc = strstr(out, "\"torch::autograd::AccumulateGrad\"");
    assert_non_null(acc);
    line_end = strchr(acc, '\n');
    assert_non_null(line_end);
    assert_non_null(strstr(acc, "\"is_backward\":1"));
    assert_true(strstr(acc, "\"is_backward\":1") < line_end);
    assert_non_null(strstr(out, "\"stack\":\"m.py(9): g\\nm.py(31): <module>\""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rows_by_stack, setup, nnpt_raw_fx_teardown),
        cmocka_unit_test_setup_teardown(test_rows_without_stacks, setup, nnpt_raw_fx_teardown),
        cmocka_unit_test_setup_teardown(test_dump, setup, nnpt_raw_fx_teardown),
        cmocka_unit_test_setup_teardown(test_analyse_csv, setup, nnpt_raw_fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
