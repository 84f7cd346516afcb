/* test_host_ranges.c - host begin/end rows paired into ranges (model/host_pairs.c, the one
 * rule of every reader: host_info's) and host_ranges_{rank}.csv (analyse/host_ranges.c,
 * torch's key_averages() columns) over rows laid out by hand, including ranges that do
 * not nest (a range opened inside another and closed after it). */
#include <string.h>

#include "analyse/analyse.h"
#include "fixture_model.h"
#include "model/host_pairs.h"
#include "model/model.h"
#include "test_util.h"
#include "util/util.h"

#define US 1000

/* Thread 0, in time order (us):
 *   0 P begins    10 A begins    20 B begins (inside A)    40 A ends    50-55 an op
 *   60 B ends     70 C begins (never ends)    75 X begins (module "other")
 *   78 X ends (module "torch": closes nothing)    80 D ends (no begin)    100 P ends */
enum { P_B, A_B, B_B, A_E, B_E, C_B, X_B, X_E, D_E, P_E, N_ROWS };

static void add_rows(nnp_model_t *m)
{
    uint32_t th = nnpt_add_thread(m, 100, 100);
    nnpt_add_host_row(m, 0 * US, NNP_HOST_ROW_BEGIN, "torch", "P", "Run", th);
    nnpt_add_host_row(m, 10 * US, NNP_HOST_ROW_BEGIN, "torch", "A", "Run", th);
    nnpt_add_host_row(m, 20 * US, NNP_HOST_ROW_BEGIN, "torch", "B", "Run", th);
    nnpt_add_host_row(m, 40 * US, NNP_HOST_ROW_END, "torch", "A", "Run", th);
    nnpt_add_op(m, 50 * US, 55 * US, "op", "op", NULL, NULL);
    nnpt_add_host_row(m, 60 * US, NNP_HOST_ROW_END, "torch", "B", "Run", th);
    nnpt_add_host_row(m, 70 * US, NNP_HOST_ROW_BEGIN, "torch", "C", "Run", th);
    nnpt_add_host_row(m, 75 * US, NNP_HOST_ROW_BEGIN, "other", "X", "Run", th);
    nnpt_add_host_row(m, 78 * US, NNP_HOST_ROW_END, "torch", "X", "Run", th);
    nnpt_add_host_row(m, 80 * US, NNP_HOST_ROW_END, "torch", "D", "Run", th);
    nnpt_add_host_row(m, 100 * US, NNP_HOST_ROW_END, "torch", "P", "Run", th);
    assert_int_equal(nnp__model_finish(m), NNP_OK);
    assert_int_equal(m->host.t.n, N_ROWS);
}

/* Each end closes the innermost open range of its event, module and stage; B, opened
 * inside A and open when A ends, stays open and is closed by its own end; an end whose
 * module differs (X) or that has no begin (D) closes nothing. */
static void test_pairs(void **state)
{
    nnpt_afx_t *fx = *state;
    size_t *begin_of = NULL;
    add_rows(&fx->m);
    assert_int_equal(nnp__host_pairs(&fx->m.host, fx->m.threads.t.n, &begin_of), NNP_OK);
    assert_non_null(begin_of);
    for (size_t i = 0; i < N_ROWS; i++) {
        size_t want = i == A_E ? A_B : i == B_E ? B_B : i == P_E ? P_B : NNP_HOST_NO_PAIR;
        if (begin_of[i] != want)
            fail_msg("row %zu: begin %zu, want %zu", i, begin_of[i], want);
    }
    nnp__free(begin_of);
}

/* Self time = time minus the ranges and ops directly inside, charged when they end to the
 * range below them on the thread's stack: A [10,40] 30 us, nothing inside closed while it
 * was open: self 30. B [20,60] 40 us: the op at 50-55 started while B was the innermost
 * open range (A had ended): self 35. P [0,100] 100 us: A and B ended inside it (30 + 40):
 * self 30 (they overlap: the rule charges each to its parent, as torch charges each child).
 * Self total 95: P 31.58 %, B 36.84 %, A 31.58 %. Rows by total time. C and X's begin
 * (never ended), X's end and D (no begin) are left out and counted in the log. Before ranges shared
 * host_pairs' rule, A's end dropped B, whose end then closed nothing, and P's self was 65. */
static void test_self_times_of_ranges_that_do_not_nest(void **state)
{
    nnpt_afx_t *fx = *state;
    add_rows(&fx->m);
    nnpt_log_capture();
    assert_int_equal(nnp__host_ranges_write(&fx->c), NNP_OK);
    if (!strstr(nnpt_log_text(), "host ranges: 2 never ended and 2 ends without a begin"))
        fail_msg("log: %s", nnpt_log_text());
    nnpt_log_release();
    nnpt_afx_expect_file(fx, "host_ranges_0.csv",
                         "Name,Calls,Total Time(us),Self Time(us),Avg Time(us),Min Time(us),"
                         "Max Time(us),Self Time(%)\n"
                         "P,1,100.000,30.000,100.000,100.000,100.000,31.58\n"
                         "B,1,40.000,35.000,40.000,40.000,40.000,36.84\n"
                         "A,1,30.000,30.000,30.000,30.000,30.000,31.58\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        NNPT_AFX_TEST(test_pairs),
        NNPT_AFX_TEST(test_self_times_of_ranges_that_do_not_nest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
