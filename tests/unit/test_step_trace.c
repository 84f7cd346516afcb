/* test_step_trace.c - step phases (src/analyse/step_trace.c) on hand-built models whose
 * answers are worked out by hand in the comments: marks, fp after GetNext (or PyTorch's
 * DataLoader fetch) and bp before the last allreduce, the Gradients rule, PyTorch's
 * autograd backward ops, DataLoader workers' ops left out, fp/bp overrides, inference, ops crossing
 * a step boundary, --steps filtering, unknown points, the empty model, and allocation failures.
 * Every output file is compared byte for byte. Times are written in ms: MS(x) is x ms. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "fixture_model.h"
#include "model/model.h"
#include "test_util.h"
#include "util/util.h"

#define NS_PER_MS 1000000.0
/* x ms in ns (x may have up to 6 decimals; rounded to the ns). */
#define MS(x) ((int64_t)((x)*NS_PER_MS + 0.5))
/* Largest output file a test reads back. */
/* Allocation failures tried one by one; run + write allocate far fewer than this. */
#define MAX_ALLOC_FAILS 200

typedef nnpt_afx_t fixture_t;

static void add_mark(nnp_marks_t *mk, uint64_t step, int64_t ts)
{
    size_t i = nnp__table_push(&mk->t);
    assert_true(i != SIZE_MAX);
    mk->step_id[i] = step;
    mk->ts_ns[i] = ts;
}

/* An op without shapes (test_util.h's builder). */
static void add_op(nnp_model_t *m, int64_t start, int64_t end, const char *name, const char *type)
{
    nnpt_add_op(m, start, end, name, type, NULL, NULL);
}

static void add_comm(nnp_model_t *m, int64_t start, int64_t end, const char *name)
{
    size_t i = nnp__table_push(&m->comms.t);
    assert_true(i != SIZE_MAX);
    m->comms.start_ns[i] = start;
    m->comms.end_ns[i] = end;
    m->comms.name[i] = nnp__model_intern_cstr(m, name);
    m->comms.kind[i] = NNP_COMM_ALLREDUCE;
}

/* Runs and writes the step trace; the result stays in *st for the caller to inspect. */
static void run_write(fixture_t *fx, nnp_step_trace_t *st)
{
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    assert_int_equal(nnp__step_trace_run(&fx->c, st), NNP_OK);
    assert_int_equal(nnp__step_trace_write(&fx->c, st), NNP_OK);
}

#define TRAIN_HEADER                                                                               \
    "step_num,start_point,end_point,total,fp_point,bp_point,iteration_interval,fp_and_bp,tail"

/* Marks win over every other rule. Steps are pushed out of order (the model does not sort
 * steps), a fourth step never ended and is left out, and ops that the automatic rules
 * would pick are present but ignored. Steps [10,20) [22,35) [35,50); marks fp 12/25/37,
 * bp 18/30/46:
 *   step 1: start 10 (own begin), total 10, ii 12-10=2, fp_and_bp 18-12=6, tail 20-18=2
 *   step 2: start 20 (step 1 end), total 15, ii 5, fp_and_bp 5, tail 5
 *   step 3: start 35, total 15, ii 2, fp_and_bp 9, tail 4
 *   averages: total 40/3, ii 9/3, fp_and_bp 20/3, tail 11/3.
 * Summary (ms to 4 decimals, percent of the rounded total): 13.3333, 3.0 (22.50%),
 * 6.6667 (50.00%), 3.6667 (27.50%). */
static void test_marks(void **state)
{
    fixture_t *fx = *state;
    nnp_step_trace_t st;
    nnpt_add_step(&fx->m, 3, MS(35), MS(50));
    nnpt_add_step(&fx->m, 1, MS(10), MS(20));
    nnpt_add_step(&fx->m, 4, MS(50), NNP_OPEN_END);
    nnpt_add_step(&fx->m, 2, MS(22), MS(35));
    add_mark(&fx->m.fp, 2, MS(25));
    add_mark(&fx->m.fp, 1, MS(12));
    add_mark(&fx->m.fp, 3, MS(37));
    add_mark(&fx->m.bp, 3, MS(46));
    add_mark(&fx->m.bp, 1, MS(18));
    add_mark(&fx->m.bp, 2, MS(30));
    add_op(&fx->m, MS(10.5), MS(11), "Default/GetNext-op1", "GetNext");
    add_op(&fx->m, MS(11), MS(19), "Gradients/Default/X-op2", "X");
    run_write(fx, &st);

    assert_int_equal(st.n, 3);
    assert_false(st.inference);
    assert_int_equal(st.fp_name, 0);
    assert_int_equal(st.rows[0].step_id, 1);
    assert_int_equal(st.rows[0].fp_op, 0);
    assert_int_equal(st.rows[1].start_point_ns, MS(20));
    assert_int_equal(st.rows[2].tail_ns, MS(4));
    nnpt_afx_expect_file(fx, "step_trace_raw_0_detail_time.csv",
                         TRAIN_HEADER
                         "\n"
                         "1,10.000000,20.000000,10.000000,12.000000,18.000000,2.000000,"
                         "6.000000,2.000000\n"
                         "2,20.000000,35.000000,15.000000,25.000000,30.000000,5.000000,"
                         "5.000000,5.000000\n"
                         "3,35.000000,50.000000,15.000000,37.000000,46.000000,2.000000,"
                         "9.000000,4.000000\n"
                         "-,,,13.333333,,,3.000000,6.666667,3.666667\n");
    nnpt_afx_expect_file(fx, "step_trace_point_info_0.json",
                         "{\"fp_start\":\"\",\"bp_end\":\"\"}\n");
    nnpt_afx_expect_file(
        fx, "step_trace_summary_0.json",
        "{\"total_time\":13.3333,\"iteration_interval\":3.0,"
        "\"iteration_interval_percent\":\"22.50%\",\"fp_and_bp\":6.6667,"
        "\"fp_and_bp_percent\":\"50.00%\",\"tail\":3.6667,\"tail_percent\":\"27.50%\","
        "\"total_steps\":3}\n");
    nnp__step_trace_fini(&st);
}

/* Automatic fp/bp with communication, and the communication columns.
 * Step 1 [100,110): GetNext 100.5-101.0; Conv2D 101.2-103.0 is the first op after it
 *   (fp 101.2); the last comm op starts at 106.5, the last op to end before it is the
 *   backward op ending at 106.0 (bp); the host AllReduce launch ends at 108, after.
 *   ii 1.2, fp_and_bp 4.8, tail 4.0.
 * Step 2 [110,120): Long-op9 starts at 109.5 in step 1 and runs into step 2, yet step 2's
 *   fp is its own first op (no GetNext), Conv2D at 110.3. Last comm starts at 117.0; ops
 *   ending before it: Conv2D 112, backward 115 (bp); the host launch ends at 117.1.
 *   ii 0.3, fp_and_bp 4.7, tail 5.0. Step 2 runs AllReduce-op4 twice: the second is
 *   column "AllReduce-op4#2". Step 1 lacks #2 and step 2 lacks op0: empty cells.
 * Averages: total 10, ii 0.75, fp_and_bp 4.75, tail 4.5; comm durations 0.5, 1.0, 0.2. */
static void test_auto_getnext_allreduce(void **state)
{
    fixture_t *fx = *state;
    nnp_step_trace_t st;
    nnp_model_t *m = &fx->m;
    nnpt_add_step(m, 1, MS(100), MS(110));
    nnpt_add_step(m, 2, MS(110), MS(120));
    add_op(m, MS(100.5), MS(101), "Default/GetNext-op1", "GetNext");
    add_op(m, MS(101.2), MS(103), "Default/Conv2D-op2", "Conv2D");
    add_op(m, MS(103), MS(106), "Gradients/Default/Conv2DBackprop-op3", "Conv2DBackpropFilter");
    add_op(m, MS(106.4), MS(108), "Default/AllReduce-op4", "AllReduce");
    add_op(m, MS(108.2), MS(109), "Default/Momentum-op5", "ApplyMomentum");
    add_op(m, MS(109.5), MS(111), "Default/Long-op9", "Long");
    add_op(m, MS(110.3), MS(112), "Default/Conv2D-op2", "Conv2D");
    add_op(m, MS(112), MS(115), "Gradients/Default/Conv2DBackprop-op3", "Conv2DBackpropFilter");
    add_op(m, MS(115.4), MS(117.1), "Default/AllReduce-op4", "AllReduce");
    add_comm(m, MS(104), MS(104.5), "AllReduce-op0");
    add_comm(m, MS(106.5), MS(107.5), "AllReduce-op4");
    add_comm(m, MS(115.5), MS(116.5), "AllReduce-op4");
    add_comm(m, MS(117), MS(117.2), "AllReduce-op4");
    run_write(fx, &st);

    assert_int_equal(st.n, 2);
    assert_int_equal(st.rows[1].fp_ns, MS(110.3));
    /* Step 1 waited for GetNext (0.5 ms), MindSpore's fetch; step 2 had none. */
    assert_int_equal(st.rows[0].fetch_ns, MS(0.5));
    assert_false(st.rows[0].fetch_dataloader);
    assert_int_equal(st.rows[1].fetch_ns, -1);
    assert_string_equal(nnp__model_str(m, st.rows[0].bp_op),
                        "Gradients/Default/Conv2DBackprop-op3");
    nnpt_afx_expect_file(fx, "step_trace_raw_0_detail_time.csv",
                         TRAIN_HEADER
                         ",AllReduce-op0,AllReduce-op0_start_point,AllReduce-op0_end_point,"
                         "AllReduce-op4,AllReduce-op4_start_point,AllReduce-op4_end_point,"
                         "AllReduce-op4#2,AllReduce-op4#2_start_point,"
                         "AllReduce-op4#2_end_point\n"
                         "1,100.000000,110.000000,10.000000,101.200000,106.000000,1.200000,"
                         "4.800000,4.000000,0.500000,104.000000,104.500000,1.000000,"
                         "106.500000,107.500000,,,\n"
                         "2,110.000000,120.000000,10.000000,110.300000,115.000000,0.300000,"
                         "4.700000,5.000000,,,,1.000000,115.500000,116.500000,0.200000,"
                         "117.000000,117.200000\n"
                         "-,,,10.000000,,,0.750000,4.750000,4.500000,0.500000,,,1.000000,"
                         ",,0.200000,,\n");
    nnpt_afx_expect_file(fx, "step_trace_point_info_0.json",
                         "{\"fp_start\":\"Default/Conv2D-op2\","
                         "\"bp_end\":\"Gradients/Default/Conv2DBackprop-op3\"}\n");
    nnpt_afx_expect_file(
        fx, "step_trace_summary_0.json",
        "{\"total_time\":10.0,\"iteration_interval\":0.75,"
        "\"iteration_interval_percent\":\"7.50%\",\"fp_and_bp\":4.75,"
        "\"fp_and_bp_percent\":\"47.50%\",\"tail\":4.5,\"tail_percent\":\"45.00%\","
        "\"total_steps\":2}\n");
    nnp__step_trace_fini(&st);
}

/* PyTorch's data fetch (the DataLoader iterator's range, named as torch.utils.data names it)
 * plays GetNext's part: fp is the first op starting once it has ended, so the ops inside it
 * (unpickling the batch) fall in the iteration interval. Three steps, one per form the
 * fetch takes; each has the same pattern after its fetch: conv, conv backward, an
 * allreduce (bp: the last op ending before the step's last communication starts), SGD.
 *   Step 1 [0,10): host rows (our record_function): a range "enumerate(DataLoader)#x"
 *     without the ".__next__" suffix 0.1-0.15 (not a fetch: if it were, fp would be
 *     aten::empty at 0.5), the fetch 0.2-2.0 with aten::empty 0.5-0.6 and aten::set_
 *     1.0-1.1 inside; conv 2.2-4, backward 4-7, allreduce 7.5-8.5, sgd 8.6-9.
 *     fp 2.2, bp 7: ii 2.2, fp_and_bp 4.8, tail 3.
 *   Step 2 [10,20): a marker (Kineto's user annotation) 10.2-12.0 around aten::empty
 *     10.5-10.6; conv at 12.0 (starts as the fetch ends: after it), backward 14-17,
 *     allreduce 17.5-18.5. fp 12, bp 17: ii 2, fp_and_bp 5, tail 3.
 *   Step 3 [20,30): an op (torch_npu's timeline) 20.2-21.0 around aten::stack 20.4-20.8;
 *     conv 21.1-23, backward 23-26, allreduce 26.5-27.5. fp 21.1, bp 26: ii 1.1,
 *     fp_and_bp 4.9, tail 4.
 * Without the rule fp would be aten::empty (0.5, 10.5) and aten::stack's fetch op (20.2). */
static void test_auto_dataloader_fetch(void **state)
{
    static const char next[] = "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__";
    static const char single[] = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";
    fixture_t *fx = *state;
    nnp_step_trace_t st;
    nnp_model_t *m = &fx->m;
    const double fetch_start[] = {0.2, 10.2, 20.2}, fetch_end[] = {2.0, 12.0, 21.0};
    const double fp[] = {2.2, 12.0, 21.1}, bp[] = {7, 17, 26};
    nnpt_add_step(m, 1, MS(0), MS(10));
    nnpt_add_step(m, 2, MS(10), MS(20));
    nnpt_add_step(m, 3, MS(20), MS(30));
    nnpt_add_host_row(m, MS(0.1), NNP_HOST_ROW_BEGIN, "torch", "enumerate(DataLoader)#x", "Run", 0);
    nnpt_add_host_row(m, MS(0.15), NNP_HOST_ROW_END, "torch", "enumerate(DataLoader)#x", "Run", 0);
    nnpt_add_host_row(m, MS(0.2), NNP_HOST_ROW_BEGIN, "torch", next, "Run", 0);
    nnpt_add_host_row(m, MS(2.0), NNP_HOST_ROW_END, "torch", next, "Run", 0);
    add_op(m, MS(0.5), MS(0.6), "aten::empty", "aten::empty");
    add_op(m, MS(1.0), MS(1.1), "aten::set_", "aten::set_");
    nnpt_add_marker(m, MS(10.2), MS(12.0), next, 0);
    add_op(m, MS(10.5), MS(10.6), "aten::empty", "aten::empty");
    add_op(m, MS(20.2), MS(21.0), single, single);
    add_op(m, MS(20.4), MS(20.8), "aten::stack", "aten::stack");
    for (int s = 0; s < 3; s++) {
        double f = fp[s], b = bp[s];
        add_op(m, MS(f), MS(f + 1.8), "aten::conv2d", "aten::conv2d");
        add_op(m, MS(b - 3), MS(b), "aten::convolution_backward", "aten::convolution_backward");
        add_comm(m, MS(b + 0.5), MS(b + 1.5), "gloo:all_reduce");
        add_op(m, MS(b + 1.6), MS(b + 2), "aten::add_", "aten::add_");
    }
    run_write(fx, &st);

    assert_int_equal(st.n, 3);
    for (int s = 0; s < 3; s++) {
        const nnp_step_row_t *r = &st.rows[s];
        assert_int_equal(r->fp_ns, MS(fp[s]));
        assert_true(r->fp_ns >= MS(fetch_end[s]));
        assert_string_equal(nnp__model_str(m, r->fp_op), "aten::conv2d");
        assert_int_equal(r->bp_ns, MS(bp[s]));
        assert_int_equal(r->iteration_interval_ns, MS(fp[s]) - MS(10.0 * s));
        assert_int_equal(r->fp_and_bp_ns, MS(bp[s]) - MS(fp[s]));
        assert_int_equal(r->tail_ns, MS(10.0 * (s + 1)) - MS(bp[s]));
        assert_true(r->fetch_dataloader);
        assert_int_equal(r->fetch_ns, MS(fetch_end[s]) - MS(fetch_start[s]));
    }
    nnpt_afx_expect_file(fx, "step_trace_point_info_0.json",
                         "{\"fp_start\":\"aten::conv2d\","
                         "\"bp_end\":\"aten::convolution_backward\"}\n");
    nnp__step_trace_fini(&st);
}

/* PyTorch without communication (one process): no Gradients scope, so the backward ops are
 * autograd's. Steps [0,10) and [10,20):
 *   step 1: aten::linear 1-2 (a forward op linked to its node), MmBackward0 3-4 (linked:
 *     a backward op), "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"
 *     4-5 (no link, but the engine's call of a node), the optimizer's aten::add_ 6-7.
 *     fp 1, bp 5 (AccumulateGrad's evaluation): fp_and_bp 4, tail 5.
 *   step 2: the same without the engine's calls (a Kineto trace with only the nodes'
 *     links): aten::linear 11-12, MmBackward0 13-14, aten::add_ 16-17: bp 14, tail 6.
 * Without rule 5 both steps would be forward-only (no bp). */
static void test_auto_autograd_backward(void **state)
{
    static const char accumulate[] =
        "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad";
    fixture_t *fx = *state;
    nnp_step_trace_t st;
    nnp_model_t *m = &fx->m;
    size_t fwd[2], bwd[2];
    nnpt_add_step(m, 1, MS(0), MS(10));
    nnpt_add_step(m, 2, MS(10), MS(20));
    for (int s = 0; s < 2; s++) {
        double o = 10.0 * s;
        fwd[s] = nnpt_add_op(m, MS(1 + o), MS(2 + o), "aten::linear", "aten::linear", NULL, NULL);
        bwd[s] = nnpt_add_op(m, MS(3 + o), MS(4 + o), "MmBackward0", "MmBackward0", NULL, NULL);
        if (s == 0)
            add_op(m, MS(4), MS(5), accumulate, accumulate);
        add_op(m, MS(6 + o), MS(7 + o), "aten::add_", "aten::add_");
    }
    assert_int_equal(nnp__model_ops_want_seq(m), NNP_OK);
    for (int s = 0; s < 2; s++) {
        m->ops.seq_nr[fwd[s]] = m->ops.seq_nr[bwd[s]] = 7;
        m->ops.seq_thread[fwd[s]] = m->ops.seq_thread[bwd[s]] = 1;
        m->ops.seq_kind[fwd[s]] = NNP_SEQ_FORWARD;
        m->ops.seq_kind[bwd[s]] = NNP_SEQ_BACKWARD;
    }
    run_write(fx, &st);
    assert_int_equal(st.n, 2);
    assert_false(st.inference);
    assert_int_equal(st.rows[0].fp_ns, MS(1));
    assert_int_equal(st.rows[0].bp_ns, MS(5));
    assert_string_equal(nnp__model_str(m, st.rows[0].bp_op), accumulate);
    assert_int_equal(st.rows[1].fp_ns, MS(11));
    assert_int_equal(st.rows[1].bp_ns, MS(14));
    assert_string_equal(nnp__model_str(m, st.rows[1].bp_op), "MmBackward0");
    assert_int_equal(st.rows[0].tail_ns, MS(5));
    assert_int_equal(st.rows[1].tail_ns, MS(6));
    nnp__step_trace_fini(&st);
}

/* A DataLoader worker's ops (a follow_fork child, another process joined to the rank) run
 * beside the steps and are never fp or bp: the driver gives the step trace the rank's view
 * (model_view.c), without them. The rank's process is pid 100 (thread 0), the worker pid
 * 200 (thread 1). Step [0,10): the fetch 0.2-2.0 (a host range of the rank);
 * the worker's aten::pow 2.05-2.1 starts after it, before the rank's conv at 2.2: fp 2.2;
 * the rank's backward ends at 7.0, the worker's next aten::pow 7.1-7.4 ends later but still
 * before the allreduce at 7.5: bp 7.0. Without the rule: fp 2.05, bp 7.4. */
static void test_auto_worker_ops_ignored(void **state)
{
    static const char next[] = "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__";
    fixture_t *fx = *state;
    nnp_step_trace_t st;
    nnp_model_t *m = &fx->m, view;
    uint32_t rank_th, worker_th;
    size_t i;
    m->info.pid = 100;
    m->info.worker_pids = nnp__calloc(1, sizeof(uint32_t));
    assert_non_null(m->info.worker_pids);
    m->info.worker_pids[m->info.n_worker_pids++] = 200;
    rank_th = nnpt_add_thread(m, 100, 100);
    worker_th = nnpt_add_thread(m, 201, 200);
    nnpt_add_step(m, 1, MS(0), MS(10));
    nnpt_add_host_row(m, MS(0.2), NNP_HOST_ROW_BEGIN, "torch", next, "Run", rank_th);
    nnpt_add_host_row(m, MS(2.0), NNP_HOST_ROW_END, "torch", next, "Run", rank_th);
    i = nnpt_add_op(m, MS(2.05), MS(2.1), "aten::pow", "aten::pow", NULL, NULL);
    m->ops.thread[i] = worker_th;
    i = nnpt_add_op(m, MS(2.2), MS(4), "aten::conv2d", "aten::conv2d", NULL, NULL);
    m->ops.thread[i] = rank_th;
    i = nnpt_add_op(m, MS(4), MS(7), "aten::convolution_backward", "aten::convolution_backward",
                    NULL, NULL);
    m->ops.thread[i] = rank_th;
    i = nnpt_add_op(m, MS(7.1), MS(7.4), "aten::pow", "aten::pow", NULL, NULL);
    m->ops.thread[i] = worker_th;
    add_comm(m, MS(7.5), MS(8.5), "gloo:all_reduce");
    assert_int_equal(nnp__model_finish(m), NNP_OK);
    assert_int_equal(nnp__model_rank_view(m, &view), NNP_OK);
    fx->c.m = &view; /* what the driver gives every analysis */
    assert_int_equal(nnp__step_trace_run(&fx->c, &st), NNP_OK);
    fx->c.m = m;
    nnp__model_view_fini(&view);
    assert_int_equal(st.n, 1);
    assert_int_equal(st.rows[0].fp_ns, MS(2.2));
    assert_int_equal(st.rows[0].bp_ns, MS(7));
    assert_string_equal(nnp__model_str(m, st.rows[0].fp_op), "aten::conv2d");
    assert_string_equal(nnp__model_str(m, st.rows[0].bp_op), "aten::convolution_backward");
    nnp__step_trace_fini(&st);
}

/* One step pattern per 10 ms, no communication: [10,20) and [20,30), ops (step 1; step 2
 * is the same +10): GetNext 10-10.5, Dense 10.6-12, ReLU 12-13, Gradients Dense-grad
 * 13-16, Gradients ReLU-grad 16-17, Momentum 17.5-18. */
static void add_dense_steps(nnp_model_t *m)
{
    for (int s = 0; s < 2; s++) {
        double o = 10.0 * s;
        nnpt_add_step(m, (uint64_t)s + 1, MS(10 + o), MS(20 + o));
        add_op(m, MS(10 + o), MS(10.5 + o), "Default/GetNext-op1", "GetNext");
        add_op(m, MS(10.6 + o), MS(12 + o), "Default/Dense-op2", "MatMul");
        add_op(m, MS(12 + o), MS(13 + o), "Default/ReLU-op3", "ReLU");
        add_op(m, MS(13 + o), MS(16 + o), "Gradients/Default/Dense-grad-op4", "MatMul");
        add_op(m, MS(16 + o), MS(17 + o), "Gradients/Default/ReLU-grad-op5", "ReluGrad");
        add_op(m, MS(17.5 + o), MS(18 + o), "Default/Momentum-op6", "ApplyMomentum");
    }
}

/* No communication: bp = end of the last Gradients op (17, 27); fp after GetNext (10.6,
 * 20.6). ii 0.6, fp_and_bp 6.4, tail 3 in both steps. */
static void test_auto_gradients_scope(void **state)
{
    fixture_t *fx = *state;
    nnp_step_trace_t st;
    add_dense_steps(&fx->m);
    run_write(fx, &st);
    nnpt_afx_expect_file(fx, "step_trace_raw_0_detail_time.csv",
                         TRAIN_HEADER
                         "\n"
                         "1,10.000000,20.000000,10.000000,10.600000,17.000000,0.600000,"
                         "6.400000,3.000000\n"
                         "2,20.000000,30.000000,10.000000,20.600000,27.000000,0.600000,"
                         "6.400000,3.000000\n"
                         "-,,,10.000000,,,0.600000,6.400000,3.000000\n");
    nnpt_afx_expect_file(fx, "step_trace_point_info_0.json",
                         "{\"fp_start\":\"Default/Dense-op2\","
                         "\"bp_end\":\"Gradients/Default/ReLU-grad-op5\"}\n");
    nnp__step_trace_fini(&st);
}

/* Overrides (fp_point / bp_point, i.e. PROFILING_FP_START / PROFILING_BP_END): fp = start
 * of ReLU-op3 (12, 22), bp = end of Dense-grad-op4 (16, 26): ii 2, fp_and_bp 4, tail 4. */
static void test_overrides(void **state)
{
    fixture_t *fx = *state;
    nnp_step_trace_t st;
    add_dense_steps(&fx->m);
    fx->m.info.fp_point = nnp__strdup("Default/ReLU-op3");
    fx->m.info.bp_point = nnp__strdup("Gradients/Default/Dense-grad-op4");
    run_write(fx, &st);
    nnpt_afx_expect_file(fx, "step_trace_raw_0_detail_time.csv",
                         TRAIN_HEADER
                         "\n"
                         "1,10.000000,20.000000,10.000000,12.000000,16.000000,2.000000,"
                         "4.000000,4.000000\n"
                         "2,20.000000,30.000000,10.000000,22.000000,26.000000,2.000000,"
                         "4.000000,4.000000\n"
                         "-,,,10.000000,,,2.000000,4.000000,4.000000\n");
    nnpt_afx_expect_file(fx, "step_trace_point_info_0.json",
                         "{\"fp_start\":\"Default/ReLU-op3\","
                         "\"bp_end\":\"Gradients/Default/Dense-grad-op4\"}\n");
    nnp__step_trace_fini(&st);
}

/* An override naming no op of the run falls back to the automatic rule, with a warning. */
static void test_override_missing_falls_back(void **state)
{
    fixture_t *fx = *state;
    nnp_step_trace_t st;
    add_dense_steps(&fx->m);
    fx->m.info.fp_point = nnp__strdup("Default/NoSuchOp");
    nnpt_log_capture();
    run_write(fx, &st);
    assert_non_null(strstr(nnpt_log_text(), "warn: fp_point 'Default/NoSuchOp' not found"));
    nnpt_log_release();
    assert_int_equal(st.rows[0].fp_ns, MS(10.6));
    assert_int_equal(st.rows[1].bp_ns, MS(27));
    nnp__step_trace_fini(&st);
}

/* Inference: no communication, no Gradients op, no bp mark: one fp column, no bp_point.
 * Steps [5,10) and [12,20); GetNext then Conv (fp 5.5 and 12.5) then Softmax.
 *   step 1: start 5, total 5, ii 0.5, fp 10-5.5 = 4.5
 *   step 2: start 10 (step 1 end), total 10, ii 2.5, fp 20-12.5 = 7.5
 *   averages 7.5, 1.5, 6.0; summary percents 20.00% and 80.00%. */
static void test_inference(void **state)
{
    fixture_t *fx = *state;
    nnp_step_trace_t st;
    nnp_model_t *m = &fx->m;
    nnpt_add_step(m, 1, MS(5), MS(10));
    nnpt_add_step(m, 2, MS(12), MS(20));
    add_op(m, MS(5), MS(5.5), "Default/GetNext-op1", "GetNext");
    add_op(m, MS(5.5), MS(8), "Default/Conv-op2", "Conv2D");
    add_op(m, MS(8), MS(9), "Default/Softmax-op3", "Softmax");
    add_op(m, MS(12), MS(12.5), "Default/GetNext-op1", "GetNext");
    add_op(m, MS(12.5), MS(15), "Default/Conv-op2", "Conv2D");
    add_op(m, MS(15), MS(16), "Default/Softmax-op3", "Softmax");
    run_write(fx, &st);

    assert_true(st.inference);
    assert_int_equal(st.rows[0].bp_ns, -1);
    assert_int_equal(st.rows[0].fp_and_bp_ns, -1);
    assert_int_equal(st.rows[0].tail_ns, -1);
    nnpt_afx_expect_file(fx, "step_trace_raw_0_detail_time.csv",
                         "step_num,start_point,end_point,total,fp_point,iteration_interval,fp\n"
                         "1,5.000000,10.000000,5.000000,5.500000,0.500000,4.500000\n"
                         "2,10.000000,20.000000,10.000000,12.500000,2.500000,7.500000\n"
                         "-,,,7.500000,,1.500000,6.000000\n");
    nnpt_afx_expect_file(fx, "step_trace_point_info_0.json",
                         "{\"fp_start\":\"Default/Conv-op2\",\"bp_end\":\"\"}\n");
    nnpt_afx_expect_file(
        fx, "step_trace_summary_0.json",
        "{\"total_time\":7.5,\"iteration_interval\":1.5,"
        "\"iteration_interval_percent\":\"20.00%\",\"fp\":6.0,\"fp_percent\":\"80.00%\","
        "\"total_steps\":2}\n");
    nnp__step_trace_fini(&st);
}

/* --steps 2-3 of four marked steps [0,10) [10,20) [21,30) [30,40):
 *   step 2: start 10 (its own begin: first analysed step), fp 12, bp 18: ii 2, 6, tail 2
 *   step 3: start 20 (step 2 end), fp 24, bp 28: ii 4, 4, tail 2
 *   averages over the two rows only: total 10, ii 3, fp_and_bp 5, tail 2. */
static void test_steps_filter(void **state)
{
    fixture_t *fx = *state;
    nnp_step_trace_t st;
    const int64_t begin[] = {0, 10, 21, 30}, end[] = {10, 20, 30, 40};
    const int64_t fp[] = {1, 12, 24, 31}, bp[] = {8, 18, 28, 38};
    for (int i = 0; i < 4; i++) {
        nnpt_add_step(&fx->m, (uint64_t)i + 1, MS(begin[i]), MS(end[i]));
        add_mark(&fx->m.fp, (uint64_t)i + 1, MS(fp[i]));
        add_mark(&fx->m.bp, (uint64_t)i + 1, MS(bp[i]));
    }
    fx->c.has_steps = true;
    fx->c.step_first = 2;
    fx->c.step_last = 3;
    fx->c.rank = 3;
    run_write(fx, &st);
    nnpt_afx_expect_file(fx, "step_trace_raw_3_detail_time.csv",
                         TRAIN_HEADER
                         "\n"
                         "2,10.000000,20.000000,10.000000,12.000000,18.000000,2.000000,"
                         "6.000000,2.000000\n"
                         "3,20.000000,30.000000,10.000000,24.000000,28.000000,4.000000,"
                         "4.000000,2.000000\n"
                         "-,,,10.000000,,,3.000000,5.000000,2.000000\n");
    nnpt_afx_expect_file(
        fx, "step_trace_summary_3.json",
        "{\"total_time\":10.0,\"iteration_interval\":3.0,"
        "\"iteration_interval_percent\":\"30.00%\",\"fp_and_bp\":5.0,"
        "\"fp_and_bp_percent\":\"50.00%\",\"tail\":2.0,\"tail_percent\":\"20.00%\","
        "\"total_steps\":2}\n");
    nnp__step_trace_fini(&st);
}

/* A step with a bp mark but no fp mark and no ops: fp unknown, so iteration_interval and
 * fp_and_bp are empty there and averaged over the rows that have them.
 *   step 1 [0,10): bp 8: tail 2.    step 2 [10,20): fp 11, bp 19: ii 1, 8, tail 1.
 *   averages: total 10, ii 1 (one row), fp_and_bp 8 (one row), tail 1.5. */
static void test_unknown_fp(void **state)
{
    fixture_t *fx = *state;
    nnp_step_trace_t st;
    nnpt_add_step(&fx->m, 1, MS(0), MS(10));
    nnpt_add_step(&fx->m, 2, MS(10), MS(20));
    add_mark(&fx->m.bp, 1, MS(8));
    add_mark(&fx->m.fp, 2, MS(11));
    add_mark(&fx->m.bp, 2, MS(19));
    run_write(fx, &st);
    assert_int_equal(st.rows[0].fp_ns, -1);
    assert_int_equal(st.rows[0].iteration_interval_ns, -1);
    nnpt_afx_expect_file(fx, "step_trace_raw_0_detail_time.csv",
                         TRAIN_HEADER
                         "\n"
                         "1,0.000000,10.000000,10.000000,,8.000000,,,2.000000\n"
                         "2,10.000000,20.000000,10.000000,11.000000,19.000000,1.000000,"
                         "8.000000,1.000000\n"
                         "-,,,10.000000,,,1.000000,8.000000,1.500000\n");
    nnp__step_trace_fini(&st);
}

/* No steps: header-only CSV (training header, no averages row), empty point names, a
 * summary of zeros; pretty JSON is indented by two spaces. */
static void test_empty_model(void **state)
{
    fixture_t *fx = *state;
    nnp_step_trace_t st;
    fx->c.pretty = true;
    run_write(fx, &st);
    assert_int_equal(st.n, 0);
    assert_false(st.inference);
    nnpt_afx_expect_file(fx, "step_trace_raw_0_detail_time.csv", TRAIN_HEADER "\n");
    nnpt_afx_expect_file(fx, "step_trace_point_info_0.json",
                         "{\n  \"fp_start\": \"\",\n  \"bp_end\": \"\"\n}\n");
    nnpt_afx_expect_file(fx, "step_trace_summary_0.json",
                         "{\n  \"total_time\": 0.0,\n  \"iteration_interval\": 0.0,\n"
                         "  \"iteration_interval_percent\": \"0.00%\",\n  \"fp_and_bp\": 0.0,\n"
                         "  \"fp_and_bp_percent\": \"0.00%\",\n  \"tail\": 0.0,\n"
                         "  \"tail_percent\": \"0.00%\",\n  \"total_steps\": 0\n}\n");
    nnp__step_trace_fini(&st);
    nnp__step_trace_fini(NULL);
}

/* Failing each allocation in turn never crashes or leaks (ASan), reports an error, and
 * once no failure hits, the output is the normal one. */
static void test_alloc_failures(void **state)
{
    fixture_t *fx = *state;
    nnp_model_t *m = &fx->m;
    int n;
    nnpt_add_step(m, 1, MS(100), MS(110));
    nnpt_add_step(m, 2, MS(110), MS(120));
    add_op(m, MS(100.5), MS(101), "Default/GetNext-op1", "GetNext");
    add_op(m, MS(101.2), MS(103), "Default/Conv2D-op2", "Conv2D");
    add_comm(m, MS(106.5), MS(107.5), "AllReduce-op4");
    add_comm(m, MS(115.5), MS(116.5), "AllReduce-op4");
    add_mark(&m->fp, 2, MS(111));
    assert_int_equal(nnp__model_finish(m), NNP_OK);
    for (n = 1; n < MAX_ALLOC_FAILS; n++) {
        nnp_step_trace_t st;
        int rc;
        nnp__alloc_fail_at((uint64_t)n);
        rc = nnp__step_trace_run(&fx->c, &st);
        if (rc == NNP_OK) {
            rc = nnp__step_trace_write(&fx->c, &st);
            nnp__step_trace_fini(&st);
        } else {
            assert_null(st.rows);
        }
        /* Success with the failure still pending: every allocation has been tried. A
         * success that used up the failure would mean an error was swallowed. */
        if (rc == NNP_OK) {
            assert_true(nnp__alloc_fail_pending());
            break;
        }
        assert_int_equal(rc, NNP_ENOMEM);
    }
    nnp__alloc_fail_at(0);
    assert_true(n > 1 && n < MAX_ALLOC_FAILS);
    nnpt_afx_expect_file(
        fx, "step_trace_point_info_0.json",
        "{\"fp_start\":\"Default/Conv2D-op2\",\"bp_end\":\"Default/Conv2D-op2\"}\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        NNPT_AFX_TEST(test_marks),
        NNPT_AFX_TEST(test_auto_getnext_allreduce),
        NNPT_AFX_TEST(test_auto_dataloader_fetch),
        NNPT_AFX_TEST(test_auto_autograd_backward),
        NNPT_AFX_TEST(test_auto_worker_ops_ignored),
        NNPT_AFX_TEST(test_auto_gradients_scope),
        NNPT_AFX_TEST(test_overrides),
        NNPT_AFX_TEST(test_override_missing_falls_back),
        NNPT_AFX_TEST(test_inference),
        NNPT_AFX_TEST(test_steps_filter),
        NNPT_AFX_TEST(test_unknown_fp),
        NNPT_AFX_TEST(test_empty_model),
        NNPT_AFX_TEST(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
