/* test_cpu.c - CPU utilisation (src/analyse/cpu.c) on hand-built models with the answers
 * worked out in the comments: machine, process and per-op utilisation from three sampling
 * rounds (exact bytes), the thread-name link "(id=N)", per-op CPU over the union of its
 * workers' sampled time, counters going back, threads without machine samples, no data, and
 * allocation failures. 100 clock ticks per second and 4 CPUs: one tick per second is 1% of
 * one CPU and 0.25% of the machine. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "fixture_model.h"
#include "model/model.h"
#include "test_util.h"
#include "util/util.h"

#define MAX_ALLOC_FAILS 400
#define SEC             1000000000ll
#define MS              1000000ll
#define TICKS_PER_SEC   100
#define N_CPU           4
#define EPS             1e-9
#define OUT_NAME        "minddata_cpu_utilization_0.json"

typedef nnpt_afx_t fixture_t;

static int setup(void **state)
{
    fixture_t *fx;
    if (nnpt_afx_setup(state) != 0)
        return -1;
    fx = *state;
    fx->m.info.clock_ticks_per_sec = TICKS_PER_SEC;
    fx->m.info.ncpu = N_CPU;
    return 0;
}

/* One /proc/stat sample: nice 0 and irq/steal folded into `other` (half each). */
static void add_sys(nnp_model_t *m, int64_t ts, uint64_t user, uint64_t sys, uint64_t idle,
                    uint64_t iowait, uint64_t other, uint64_t ctxt, uint32_t running)
{
    size_t i = nnp__table_push(&m->sys_cpu.t);
    assert_true(i != SIZE_MAX);
    m->sys_cpu.ts_ns[i] = ts;
    m->sys_cpu.user[i] = user;
    m->sys_cpu.sys[i] = sys;
    m->sys_cpu.idle[i] = idle;
    m->sys_cpu.iowait[i] = iowait;
    m->sys_cpu.irq[i] = other / 2;
    m->sys_cpu.steal[i] = other - other / 2;
    m->sys_cpu.ctxt[i] = ctxt;
    m->sys_cpu.running[i] = running;
    m->sys_cpu.blocked[i] = 1;
}

static void run(fixture_t *fx)
{
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    assert_int_equal(nnp__cpu_write(&fx->c, &fx->f), NNP_OK);
}

/* Three rounds at 1, 2, 3 s.
 * Machine (total = user + sys + idle + iowait + irq/steal):
 *   1 s: 1000 500  8000 300 200 = 10000, ctxt 5000
 *   2 s: 1200 600  8600 350 250 = 11000 (+1000): user 20%, sys 10%, io 5%, idle 60%;
 *        ctxt +1500, 4 running
 *   3 s: 1300 650 10400 350 300 = 13000 (+2000): user 5%, sys 2.5%, io 0%, idle 90%;
 *        ctxt +500, 2 running
 *   averages over the summed deltas: user 300/3000 = 10%, sys 5%, io 50/3000 = 1.67%,
 *   idle 80%; runnable (4+2)/2 = 3; context switches (1500+500)/2 = 1000.
 * Process (tid 0), per second of 4 CPUs x 100 ticks = 400: utime 100, 180, 220 -> 20%,
 *   10% (average 120/800 = 15%); stime 50, 70, 90 -> 5%, 5%.
 * Ops (threads named "...(id=N)..."):
 *   Map(2): worker 0 (+80 u, +10 s each second), worker 1 (+60 u, then +80 u):
 *     user 140/400 = 35%, 160/400 = 40% (average 300/800 = 37.5%); sys 2.5%, 2.5%;
 *   Generator(3): its thread starts at 2 s (a baseline) and gains 10: 0%, 2.5%;
 *   Batch(1): one thread sampled at 1 s and 3 s only (it missed the 2 s round): 80 ticks
 *     over its own 2 s = 10% of the machine, counted at the round its pair ends in;
 *   Shuffle(5): no linked thread ("ShuffleOp(id=5" lacks the ")"): zeros, average -1.
 *   A thread "main" has no "(id=" and belongs to no op. */
static void build_three_rounds(nnp_model_t *m)
{
    add_sys(m, 1 * SEC, 1000, 500, 8000, 300, 200, 5000, 3);
    add_sys(m, 2 * SEC, 1200, 600, 8600, 350, 250, 6500, 4);
    add_sys(m, 3 * SEC, 1300, 650, 10400, 350, 300, 7000, 2);
    nnpt_add_task_cpu(m, 1 * SEC, 0, NULL, 100, 50);
    nnpt_add_task_cpu(m, 2 * SEC, 0, NULL, 180, 70);
    nnpt_add_task_cpu(m, 3 * SEC, 0, NULL, 220, 90);
    nnpt_add_task_cpu(m, 1 * SEC, 101, "MapOp(id=2) worker 0", 10, 0);
    nnpt_add_task_cpu(m, 2 * SEC, 101, "MapOp(id=2) worker 0", 90, 10);
    nnpt_add_task_cpu(m, 3 * SEC, 101, "MapOp(id=2) worker 0", 170, 20);
    nnpt_add_task_cpu(m, 1 * SEC, 102, "MapOp(id=2) worker 1", 0, 0);
    nnpt_add_task_cpu(m, 2 * SEC, 102, "MapOp(id=2) worker 1", 60, 0);
    nnpt_add_task_cpu(m, 3 * SEC, 102, "MapOp(id=2) worker 1", 140, 0);
    nnpt_add_task_cpu(m, 2 * SEC, 103, "GeneratorOp(id=3) worker 0", 50, 0);
    nnpt_add_task_cpu(m, 3 * SEC, 103, "GeneratorOp(id=3) worker 0", 60, 0);
    nnpt_add_task_cpu(m, 1 * SEC, 104, "BatchOp(id=1)", 0, 0);
    nnpt_add_task_cpu(m, 3 * SEC, 104, "BatchOp(id=1)", 80, 0);
    nnpt_add_task_cpu(m, 1 * SEC, 105, "ShuffleOp(id=5", 0, 0);
    nnpt_add_task_cpu(m, 3 * SEC, 105, "ShuffleOp(id=5", 90, 0);
    nnpt_add_task_cpu(m, 1 * SEC, 100, "main", 0, 0);
    nnpt_add_task_cpu(m, 3 * SEC, 100, "main", 100, 0);
    nnpt_add_pipe_op(m, 5, 1, "ShuffleOp", 1);
    nnpt_add_pipe_op(m, 2, 3, "MapOp", 2);
    nnpt_add_pipe_op(m, 1, -1, "BatchOp", 1);
    nnpt_add_pipe_op(m, 3, 2, "GeneratorOp", 1);
    nnpt_add_pipe_op(m, 2, 3, "MapOp", 2); /* registered twice: one entry */
}

static void test_three_rounds(void **state)
{
    fixture_t *fx = *state;
    build_three_rounds(&fx->m);
    run(fx);
    nnpt_afx_expect_file(
        fx, OUT_NAME,
        "{\"sampling_interval\":1000.000,\"cpu_processor_num\":4,"
        "\"time_stamp\":[2000.000,3000.000],"
        "\"device_info\":{\"user_utilization\":[20.00,5.00],\"sys_utilization\":[10.00,2.50],"
        "\"io_utilization\":[5.00,0.00],\"idle_utilization\":[60.00,90.00],"
        "\"runable_processes\":[4,2],\"context_switch_count\":[1500,500]},"
        "\"process_info\":{\"user_utilization\":[20.00,10.00],\"sys_utilization\":[5.00,5.00]},"
        "\"op_info\":["
        "{\"op_id\":1,\"metrics\":{\"user_utilization\":[0.00,10.00],"
        "\"sys_utilization\":[0.00,0.00]}},"
        "{\"op_id\":2,\"metrics\":{\"user_utilization\":[35.00,40.00],"
        "\"sys_utilization\":[2.50,2.50]}},"
        "{\"op_id\":3,\"metrics\":{\"user_utilization\":[0.00,2.50],"
        "\"sys_utilization\":[0.00,0.00]}},"
        "{\"op_id\":5,\"metrics\":{\"user_utilization\":[0.00,0.00],"
        "\"sys_utilization\":[0.00,0.00]}}],"
        "\"average\":{\"device_info\":{\"user_utilization\":10.00,\"sys_utilization\":5.00,"
        "\"io_utilization\":1.67,\"idle_utilization\":80.00,\"runable_processes\":3.00,"
        "\"context_switch_count\":1000.00},"
        "\"process_info\":{\"user_utilization\":15.00,\"sys_utilization\":5.00},"
        "\"op_info\":["
        "{\"op_id\":1,\"metrics\":{\"user_utilization\":10.00,\"sys_utilization\":0.00}},"
        "{\"op_id\":2,\"metrics\":{\"user_utilization\":37.50,\"sys_utilization\":2.50}},"
        "{\"op_id\":3,\"metrics\":{\"user_utilization\":2.50,\"sys_utilization\":0.00}},"
        "{\"op_id\":5,\"metrics\":{\"user_utilization\":-1,\"sys_utilization\":-1}}]}}\n");
    /* busy = 100 - idle 80 - iowait 5/3; the process used 160 of 800 ticks. */
    assert_true(fabs(fx->f.cpu_iowait_pct - 5.0 / 3.0) < EPS);
    assert_true(fabs(fx->f.cpu_busy_pct - (20.0 - 5.0 / 3.0)) < EPS);
    assert_true(fabs(fx->f.process_cpu_pct - 20.0) < EPS);
}

/* Per-op CPU for pipeline.c is in percent of ONE CPU: Map(2) used 320 ticks over 2 s =
 * 160%; Batch(1) 80 over 2 s = 40%; Generator(3) 10 over 1 s = 10%; Shuffle(5) none. */
static void test_op_pct_of_one_cpu(void **state)
{
    fixture_t *fx = *state;
    double pct;
    build_three_rounds(&fx->m);
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    assert_int_equal(nnp__cpu_op_pct(&fx->m, 2, &pct), NNP_OK);
    assert_true(fabs(pct - 160.0) < EPS);
    assert_int_equal(nnp__cpu_op_pct(&fx->m, 1, &pct), NNP_OK);
    assert_true(fabs(pct - 40.0) < EPS);
    assert_int_equal(nnp__cpu_op_pct(&fx->m, 3, &pct), NNP_OK);
    assert_true(fabs(pct - 10.0) < EPS);
    assert_int_equal(nnp__cpu_op_pct(&fx->m, 5, &pct), NNP_OK);
    assert_true(pct == -1.0);
}

/* The "(id=N)" link: the first well-formed tag of a name counts (negative ids too); "(id=)",
 * "(id=3" and "(id=4x)" link nothing. Each thread gains 10 ticks in 1 s = 10%. */
static void test_thread_name_link(void **state)
{
    static const char *const names[] = {"a(id=12)",       "(id=-1) x",   "(id=)",
                                        "(id=3",          "(id=4x)",     "p(id=7 q(id=7)",
                                        "b(id=8)c(id=9)", "MapOp(id=13)"};
    static const struct {
        int64_t id;
        double pct;
    } want[] = {{12, 10}, {-1, 10}, {3, -1}, {4, -1}, {7, 10}, {8, 10}, {9, -1}, {13, 20}};
    fixture_t *fx = *state;
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
        nnpt_add_task_cpu(&fx->m, 0, 200 + k, names[k], 5, 5);
        nnpt_add_task_cpu(&fx->m, 1 * SEC, 200 + k, names[k], 10, 10);
    }
    /* 13 has a second worker: 10 + 10 ticks over the same second = 20%. */
    nnpt_add_task_cpu(&fx->m, 0, 300, "MapOp(id=13) worker 1", 0, 0);
    nnpt_add_task_cpu(&fx->m, 1 * SEC, 300, "MapOp(id=13) worker 1", 10, 0);
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
        double pct;
        assert_int_equal(nnp__cpu_op_pct(&fx->m, want[k].id, &pct), NNP_OK);
        if (fabs(pct - want[k].pct) > EPS)
            fail_msg("op %d: %f%%, want %f%%", (int)want[k].id, pct, want[k].pct);
    }
}

/* Wall time is the union of the workers' sampled spans: [0, 2] and [1, 3] s make 3 s, not
 * 4, so 200 ticks are 66.67% of one CPU. A reused tid whose counters go back only resets
 * its baseline: +50 in [0, 1], back at 2 s (skipped), +20 in [2, 3]: 70 ticks over 2 s. */
static void test_union_and_counter_reset(void **state)
{
    fixture_t *fx = *state;
    double pct;
    nnpt_add_task_cpu(&fx->m, 0, 60, "MapOp(id=30) worker 0", 0, 0);
    nnpt_add_task_cpu(&fx->m, 2 * SEC, 60, "MapOp(id=30) worker 0", 100, 0);
    nnpt_add_task_cpu(&fx->m, 1 * SEC, 61, "MapOp(id=30) worker 1", 0, 0);
    nnpt_add_task_cpu(&fx->m, 3 * SEC, 61, "MapOp(id=30) worker 1", 0, 100);
    nnpt_add_task_cpu(&fx->m, 0, 50, "MapOp(id=20)", 100, 0);
    nnpt_add_task_cpu(&fx->m, 1 * SEC, 50, "MapOp(id=20)", 150, 0);
    nnpt_add_task_cpu(&fx->m, 2 * SEC, 50, "MapOp(id=20)", 10, 0);
    nnpt_add_task_cpu(&fx->m, 3 * SEC, 50, "MapOp(id=20)", 30, 0);
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    assert_int_equal(nnp__cpu_op_pct(&fx->m, 30, &pct), NNP_OK);
    assert_true(fabs(pct - 200.0 / 3.0) < EPS);
    assert_int_equal(nnp__cpu_op_pct(&fx->m, 20, &pct), NNP_OK);
    assert_true(fabs(pct - 35.0) < EPS);
}

/* Only thread samples, at 0, 1, 1.5 and 2.5 s: the sampling interval is the median gap
 * (1000, 500, 1000 -> 1000 ms); the machine and process series are zeros with averages -1
 * and their findings stay unknown. The op's thread gains 40 ticks per round: 40/(1 x 400)
 * = 10%, 40/(0.5 x 400) = 20%, 10%; average 120/(2.5 x 400) = 12%. A machine sample whose
 * idle counter goes back is skipped (value 0, not in the average). */
static void test_threads_only_and_backwards(void **state)
{
    fixture_t *fx = *state;
    static const int64_t ts[] = {0, 1000 * MS, 1500 * MS, 2500 * MS};
    for (int k = 0; k < 4; k++)
        nnpt_add_task_cpu(&fx->m, ts[k], 7, "MapOp(id=0) worker 0", 40 * (uint64_t)k, 0);
    nnpt_add_pipe_op(&fx->m, 0, -1, "MapOp", 1);
    run(fx);
    nnpt_afx_expect_contains(fx, OUT_NAME, "\"sampling_interval\":1000.000,");
    nnpt_afx_expect_contains(fx, OUT_NAME, "\"time_stamp\":[1000.000,1500.000,2500.000],");
    nnpt_afx_expect_contains(fx, OUT_NAME,
                             "\"device_info\":{\"user_utilization\":[0.00,0.00,0.00],");
    nnpt_afx_expect_contains(fx, OUT_NAME,
                             "\"op_info\":[{\"op_id\":0,\"metrics\":{\"user_utilization\":"
                             "[10.00,20.00,10.00],");
    nnpt_afx_expect_contains(fx, OUT_NAME,
                             "\"average\":{\"device_info\":{\"user_utilization\":-1,");
    nnpt_afx_expect_contains(fx, OUT_NAME,
                             "\"process_info\":{\"user_utilization\":-1,\"sys_utilization\":-1}");
    nnpt_afx_expect_contains(fx, OUT_NAME, "{\"op_id\":0,\"metrics\":{\"user_utilization\":12.00,");
    assert_true(isnan(fx->f.cpu_busy_pct));
    assert_true(isnan(fx->f.process_cpu_pct));

    /* Machine samples at the same rounds; the third's idle went back. */
    add_sys(&fx->m, ts[0], 100, 100, 700, 50, 50, 0, 1);
    add_sys(&fx->m, ts[1], 200, 100, 1600, 50, 50, 0, 1); /* +1000: user 10%, idle 90% */
    add_sys(&fx->m, ts[2], 300, 100, 1500, 50, 50, 0, 1); /* idle back: skipped */
    add_sys(&fx->m, ts[3], 400, 200, 2300, 50, 50, 0, 1); /* +1000: user 10%, sys 10% */
    run(fx);
    nnpt_afx_expect_contains(fx, OUT_NAME,
                             "\"device_info\":{\"user_utilization\":[10.00,0.00,10.00],"
                             "\"sys_utilization\":[0.00,0.00,10.00],");
    nnpt_afx_expect_contains(fx, OUT_NAME,
                             "\"average\":{\"device_info\":{\"user_utilization\":10.00,"
                             "\"sys_utilization\":5.00,\"io_utilization\":0.00,"
                             "\"idle_utilization\":85.00,");
    assert_true(fabs(fx->f.cpu_busy_pct - 15.0) < EPS);
}

/* No samples, or one round only: nothing to compute, no file, findings untouched. */
static void test_no_data_no_file(void **state)
{
    fixture_t *fx = *state;
    run(fx);
    assert_false(nnpt_afx_exists(fx, OUT_NAME));
    add_sys(&fx->m, 1 * SEC, 1, 1, 1, 1, 1, 1, 1);
    nnpt_add_task_cpu(&fx->m, 1 * SEC, 0, NULL, 1, 1);
    nnpt_add_pipe_op(&fx->m, 0, -1, "MapOp", 1);
    run(fx);
    assert_false(nnpt_afx_exists(fx, OUT_NAME));
    assert_true(isnan(fx->f.cpu_busy_pct));
    assert_true(isnan(fx->f.process_cpu_pct));
}

/* Failing each allocation in turn: an error every time, no leak or crash (ASan), and the
 * normal output once no failure hits. */
static void test_alloc_failures(void **state)
{
    fixture_t *fx = *state;
    int n;
    build_three_rounds(&fx->m);
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    for (n = 1; n < MAX_ALLOC_FAILS; n++) {
        int rc;
        nnp__alloc_fail_at((uint64_t)n);
        rc = nnp__cpu_write(&fx->c, &fx->f);
        if (rc == NNP_OK) {
            assert_true(nnp__alloc_fail_pending());
            break;
        }
        assert_int_equal(rc, NNP_ENOMEM);
    }
    nnp__alloc_fail_at(0);
    assert_true(n > 1 && n < MAX_ALLOC_FAILS);
    nnpt_afx_expect_contains(fx, OUT_NAME, "{\"op_id\":2,\"metrics\":{\"user_utilization\":37.50,");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_three_rounds, setup, nnpt_afx_teardown),
        cmocka_unit_test_setup_teardown(test_op_pct_of_one_cpu, setup, nnpt_afx_teardown),
        cmocka_unit_test_setup_teardown(test_thread_name_link, setup, nnpt_afx_teardown),
        cmocka_unit_test_setup_teardown(test_union_and_counter_reset, setup, nnpt_afx_teardown),
        cmocka_unit_test_setup_teardown(test_threads_only_and_backwards, setup, nnpt_afx_teardown),
        cmocka_unit_test_setup_teardown(test_no_data_no_file, setup, nnpt_afx_teardown),
        cmocka_unit_test_setup_teardown(test_alloc_failures, setup, nnpt_afx_teardown),
    };
    nnp_log_set_level(NNP_LOG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
