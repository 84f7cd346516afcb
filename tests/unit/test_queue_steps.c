/* test_queue_steps.c - minddata_step_queue_{rank}.csv (src/analyse/queue_steps.c): the
 * device queue at each step's fetch, the host queue (the queue DeviceQueueOp sends from)
 * at that moment, the bottleneck verdict of each step, no file without device samples,
 * and a stale file removed by a re-run. Expected text is written out by hand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyse/analyse.h"
#include "fixture_model.h"
#include "model/model.h"
#include "test_util.h"
#include "util/util.h"

#define MS 1000000LL

typedef nnpt_afx_t fixture_t;

static void run(fixture_t *fx)
{
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    assert_int_equal(nnp__step_trace_run(&fx->c, &fx->st), NNP_OK);
    assert_int_equal(nnp__queue_steps_write(&fx->c, &fx->st), NNP_OK);
}

static char *read_out(const fixture_t *fx)
{
    char p[4096], *text = NULL;
    snprintf(p, sizeof(p), "%s/minddata_step_queue_0.csv", fx->dir);
    if (nnp__read_file(p, 1u << 20, &text, NULL) != NNP_OK)
        return NULL;
    return text;
}

/* DeviceQueue(0) <- Batch(1) <- Map(2). Steps 1..4 of 10 ms from 0. The device queue is
 * sampled at 1, 11, 21 ms (none in step 4); Batch's output (the host queue) at 0.5, 10.5,
 * 20.5 ms; Map's output at 5 ms (not the host queue).
 *   step 1: device 2, host 3 -> fed;
 *   step 2: device 0, host 0 -> data_process (the pipeline is slow);
 *   step 3: device 0, host 4 -> data_transfer (the host had batches);
 *   step 4: no device sample -> empty cells, no verdict. */
static void test_verdicts(void **state)
{
    fixture_t *fx = *state;
    char *text;
    nnpt_add_pipe_op(&fx->m, 0, -1, "DeviceQueueOp", 1);
    nnpt_add_pipe_op(&fx->m, 1, 0, "BatchOp", 1);
    nnpt_add_pipe_op(&fx->m, 2, 1, "MapOp", 4);
    for (int s = 0; s < 4; s++)
        nnpt_add_step(&fx->m, (uint64_t)s + 1, s * 10 * MS, (s + 1) * 10 * MS);
    nnpt_add_queue(&fx->m, 1 * MS, -1, 2, 8);
    nnpt_add_queue(&fx->m, 11 * MS, -1, 0, 8);
    nnpt_add_queue(&fx->m, 21 * MS, -1, 0, 8);
    nnpt_add_queue(&fx->m, MS / 2, 1, 3, 10);
    nnpt_add_queue(&fx->m, 10 * MS + MS / 2, 1, 0, 10);
    nnpt_add_queue(&fx->m, 20 * MS + MS / 2, 1, 4, 10);
    nnpt_add_queue(&fx->m, 5 * MS, 2, 7, 10);
    run(fx);
    text = read_out(fx);
    assert_non_null(text);
    assert_string_equal(text, "step_num,device_queue_size,device_queue_capacity,host_queue_size,"
                              "host_queue_capacity,bottleneck\n"
                              "1,2,8,3,10,\n"
                              "2,0,8,0,10,data_process\n"
                              "3,0,8,4,10,data_transfer\n"
                              "4,,,4,10,\n");
    nnp__free(text);
}

/* Without a pipeline op sampled as the host queue the verdict is "unknown". */
static void test_no_host_queue(void **state)
{
    fixture_t *fx = *state;
    char *text;
    nnpt_add_step(&fx->m, 7, 0, 10 * MS);
    nnpt_add_queue(&fx->m, 1 * MS, -1, 0, 4);
    run(fx);
    text = read_out(fx);
    assert_non_null(text);
    assert_string_equal(text, "step_num,device_queue_size,device_queue_capacity,host_queue_size,"
                              "host_queue_capacity,bottleneck\n"
                              "7,0,4,,,unknown\n");
    nnp__free(text);
}

/* No device-queue sample: no file, and a file left by an earlier analysis is removed. */
static void test_no_device_queue_removes_stale(void **state)
{
    fixture_t *fx = *state;
    char p[4096];
    FILE *f;
    snprintf(p, sizeof(p), "%s/minddata_step_queue_0.csv", fx->dir);
    f = fopen(p, "w");
    assert_non_null(f);
    fputs("stale\n", f);
    fclose(f);
    nnpt_add_step(&fx->m, 1, 0, 10 * MS);
    nnpt_add_queue(&fx->m, 1 * MS, 3, 1, 4);
    run(fx);
    assert_int_equal(access(p, F_OK), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        NNPT_AFX_TEST(test_verdicts),
        NNPT_AFX_TEST(test_no_host_queue),
        NNPT_AFX_TEST(test_no_device_queue_removes_stale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
