/* test_pipeline.c - data pipeline analysis (src/analyse/pipeline.c) on hand-built models with
 * the answers worked out in the comments: a chain with its bottleneck in the middle (exact
 * bytes of all three files), a queue that is always empty, each MindSpore BottleneckAnalyzer
 * rule firing and not firing at its threshold, MindInsight's 30% device-queue rule, the
 * graph of a branching pipeline, no data, and allocation failures. CPU: 100 ticks per
 * second, so a worker thread gaining X ticks in one second uses X% of one CPU. */
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
#define MS              1000000ll /* ns per ms */
#define SEC             1000000000ll
#define TICKS_PER_SEC   100
#define N_CPU           8

typedef nnpt_afx_t fixture_t;

static void findings_unset(nnp_findings_t *f)
{
    memset(f, 0, sizeof(*f));
    f->device_queue_empty_pct = f->host_queue_empty_pct = NAN;
}

static int setup(void **state)
{
    fixture_t *fx;
    if (nnpt_afx_setup(state) != 0)
        return -1;
    fx = *state;
    fx->m.info.clock_ticks_per_sec = TICKS_PER_SEC;
    fx->m.info.ncpu = N_CPU;
    findings_unset(&fx->f);
    return 0;
}

/* n worker threads of op id "<type>(id=<id>) worker k" (tids id*100+k) that each use pct%
 * of one CPU over the second [1 s, 2 s], all in user time. */
static void add_workers(nnp_model_t *m, const char *type, int64_t id, int n, uint64_t pct)
{
    for (int k = 0; k < n; k++) {
        char name[64];
        uint64_t tid = (uint64_t)(id * 100 + k + 1);
        snprintf(name, sizeof(name), "%s(id=%d) worker %d", type, (int)id, k);
        nnpt_add_task_cpu(m, 1 * SEC, tid, name, 7, 3);
        nnpt_add_task_cpu(m, 2 * SEC, tid, name, 7 + pct, 3);
    }
}

/* The JSON value of one summary key (an array), e.g. "[\"x\"]", as a new string. */
static char *summary_value(const fixture_t *fx, const char *key)
{
    char *all = nnpt_afx_read(fx, "minddata_pipeline_summary_0.json"), pat[128], *s, *e, *v;
    int depth = 0;
    snprintf(pat, sizeof(pat), "\"%s\":", key);
    s = strstr(all, pat);
    s = s ? s + strlen(pat) : all + strlen(all);
    for (e = s; *e; e++) {
        if (*e == '"') { /* skip strings: our messages hold no escaped quotes */
            char *q = strchr(e + 1, '"');
            if (!q)
                break;
            e = q;
        } else if (*e == '[') {
            depth++;
        } else if (*e == ']' && --depth == 0) {
            break;
        }
    }
    if (*e != ']')
        fail_msg("no array value for key %s in:\n%s", key, all);
    v = calloc(1, (size_t)(e - s) + 2);
    assert_non_null(v);
    memcpy(v, s, (size_t)(e - s) + 1);
    free(all);
    return v;
}

static void expect_key(const fixture_t *fx, const char *key, const char *want)
{
    char *got = summary_value(fx, key);
    assert_string_equal(got, want);
    free(got);
}

static void run(fixture_t *fx)
{
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    assert_int_equal(nnp__pipeline_write(&fx->c, &fx->f), NNP_OK);
}

/* Generator(3) -> Map(2) -> Batch(1) -> DeviceQueue(0), each op the child of the next.
 * Queues (samples at 10, 20, 30, 40 ms: interval 10 ms):
 *   Generator: 16, 16, 12, 16 of 16: average 15, usage 93.75%, never empty, full 3/4;
 *   Map:        0,  1,  0,  1 of 20: average 0.5, usage 2.50%, empty 2/4;
 *   Batch:      0,  0,  0,  1 of 10: average 0.25, usage 2.50%, empty 3/4.
 * Device queue at 100..500 ms: 0, 0, 1, 0, 2 of 2: empty 3/5 = 60% (> 30%: MindInsight's
 * data_process warning), full 1/5, one batch per 100 ms.
 * CPU (% of one CPU): Map 2 workers x 90 = 180, per worker 90 (> 75); Generator 1 x 50;
 * Batch 1 x 30; DeviceQueue no thread (-1). A thread "main" without "(id=" is ignored.
 * Rules: CPU: Map above 75%. Queues: DeviceQueue's input (Batch) empty 75% > 60%; Map's
 * input 93.75% - output 2.50% = 91.25 > 50; Generator is a leaf at 93.75% (>= 50: fine);
 * Batch is not judged by queues. Bottleneck: lowest id matching: Batch 30% is neither
 * above 75 nor below 20, Map 90% is: Map(id=2). Host queues: 5 empty of 12 = 41.67%. */
static void build_chain(nnp_model_t *m)
{
    static const uint32_t gen[] = {16, 16, 12, 16}, map[] = {0, 1, 0, 1}, bat[] = {0, 0, 0, 1};
    static const uint32_t dq[] = {0, 0, 1, 0, 2};
    nnpt_add_pipe_op(m, 3, 2, "GeneratorOp", 1);
    nnpt_add_pipe_op(m, 0, -1, "DeviceQueueOp", 1);
    nnpt_add_pipe_op(m, 2, 1, "MapOp", 2);
    nnpt_add_pipe_op(m, 1, 0, "BatchOp", 1);
    for (int k = 0; k < 4; k++) {
        nnpt_add_queue(m, (10 + 10 * k) * MS, 3, gen[k], 16);
        nnpt_add_queue(m, (10 + 10 * k) * MS, 2, map[k], 20);
        nnpt_add_queue(m, (10 + 10 * k) * MS, 1, bat[k], 10);
    }
    for (int k = 0; k < 5; k++)
        nnpt_add_queue(m, (100 + 100 * k) * MS, -1, dq[k], 2);
    add_workers(m, "MapOp", 2, 2, 90);
    add_workers(m, "GeneratorOp", 3, 1, 50);
    add_workers(m, "BatchOp", 1, 1, 30);
    nnpt_add_task_cpu(m, 1 * SEC, 1, "main", 0, 0);
    nnpt_add_task_cpu(m, 2 * SEC, 1, "main", 100, 0);
}

#define RAW_HEADER                                                                                 \
    "op_id,op_type,num_workers,output_queue_size,output_queue_average_size,"                       \
    "output_queue_length,output_queue_usage_rate,sample_interval,parent_id,children_id\n"

#define CHAIN_CPU_MSG                                                                              \
    "Map(id=2) uses 90.00% CPU per worker (above 75%): setting num_parallel_workers above 2 "      \
    "may bring extra performance."
#define CHAIN_DQ_MSG                                                                               \
    "The input queue of DeviceQueue(id=0) is empty 75.00% of the time (above 60%): the host "      \
    "pipeline cannot keep up with the device, which waits whenever that queue is empty."
#define CHAIN_GAP_MSG                                                                              \
    "The input queue of Map(id=2) is 93.75% used but its output queue only 2.50% (a gap above "    \
    "50 points): its child Generator(id=3) produces faster than Map(id=2) consumes; if "           \
    "Map(id=2) has low CPU usage, try a larger prefetch_size or more workers."
#define CHAIN_MI_MSG                                                                               \
    "The device queue was empty in 60.00% of batches (3 of 5, above 30%): data processing on "     \
    "the host is slower than the device (MindInsight data_process warning)."
#define CHAIN_REASON "Map(id=2) has a high CPU usage per worker of 90.00% (above 75%)."
#define MAP_ADVICE                                                                                 \
    "Increase num_parallel_workers of the MapOp; if it maps a Python function, optimise that "     \
    "script."

static void test_bottleneck_in_the_middle(void **state)
{
    fixture_t *fx = *state;
    build_chain(&fx->m);
    run(fx);
    nnpt_afx_expect_file(fx, "minddata_pipeline_raw_0.csv",
                         RAW_HEADER
                         "0,DeviceQueueOp,1,,,,,,,[1]\n"
                         "1,BatchOp,1,\"[0, 0, 0, 1]\",0.25,10,0.025,10.000,0,[2]\n"
                         "2,MapOp,2,\"[0, 1, 0, 1]\",0.5,20,0.025,10.000,1,[3]\n"
                         "3,GeneratorOp,1,\"[16, 16, 12, 16]\",15,16,0.9375,10.000,2,\n");
    nnpt_afx_expect_file(
        fx, "minddata_pipeline_summary_0.json",
        "{\"pipeline_ops\":[\"DeviceQueue(id=0)\",\"Batch(id=1)\",\"Map(id=2)\","
        "\"Generator(id=3)\"],\"op_names\":[\"DeviceQueue\",\"Batch\",\"Map\",\"Generator\"],"
        "\"op_ids\":[0,1,2,3],\"num_workers\":[1,1,2,1],"
        "\"queue_average_size\":[-1,0.25,0.50,15.00],"
        "\"queue_utilization_pct\":[-1,2.50,2.50,93.75],"
        "\"queue_empty_freq_pct\":[-1,75.00,50.00,0.00],"
        "\"children_ids\":[[1],[2],[3],[]],\"parent_id\":[-1,0,1,2],"
        "\"avg_cpu_pct\":[-1,30.00,180.00,50.00],\"per_pipeline_time\":[-1],"
        "\"per_push_queue_time\":[-1],\"per_batch_time\":[100.000],"
        "\"avg_cpu_pct_per_worker\":[-1,30.00,90.00,50.00],"
        "\"cpu_analysis_details\":[\"" CHAIN_CPU_MSG "\"],"
        "\"queue_analysis_details\":[\"" CHAIN_DQ_MSG "\",\"" CHAIN_GAP_MSG "\",\"" CHAIN_MI_MSG
        "\"],\"bottleneck_warning\":[\"Map(id=2)\"],"
        "\"bottleneck_suggestion\":[\"" CHAIN_REASON " " MAP_ADVICE "\"],"
        "\"queue_full_freq_pct\":[-1,0.00,0.00,75.00],\"device_queue_batches\":[5],"
        "\"device_queue_empty_freq_pct\":[60.00],\"device_queue_full_freq_pct\":[20.00],"
        "\"host_queue_empty_freq_pct\":[41.67],\"data_process_status\":[\"warning\"]}\n");
    nnpt_afx_expect_file(fx, "minddata_pipeline_summary_0.csv",
                         "pipeline_ops,DeviceQueue(id=0),Batch(id=1),Map(id=2),Generator(id=3)\n"
                         "op_names,DeviceQueue,Batch,Map,Generator\n"
                         "op_ids,0,1,2,3\n"
                         "num_workers,1,1,2,1\n"
                         "queue_average_size,-1,0.25,0.50,15.00\n"
                         "queue_utilization_pct,-1,2.50,2.50,93.75\n"
                         "queue_empty_freq_pct,-1,75.00,50.00,0.00\n"
                         "children_ids,[1],[2],[3],[]\n"
                         "parent_id,-1,0,1,2\n"
                         "avg_cpu_pct,-1,30.00,180.00,50.00\n"
                         "per_pipeline_time,-1\n"
                         "per_push_queue_time,-1\n"
                         "per_batch_time,100.000\n"
                         "avg_cpu_pct_per_worker,-1,30.00,90.00,50.00\n"
                         "cpu_analysis_details," CHAIN_CPU_MSG "\n"
                         "queue_analysis_details,\"" CHAIN_DQ_MSG "\",\"" CHAIN_GAP_MSG
                         "\",\"" CHAIN_MI_MSG "\"\n"
                         "bottleneck_warning,Map(id=2)\n"
                         "bottleneck_suggestion,\"" CHAIN_REASON " " MAP_ADVICE "\"\n"
                         "queue_full_freq_pct,-1,0.00,0.00,75.00\n"
                         "device_queue_batches,5\n"
                         "device_queue_empty_freq_pct,60.00\n"
                         "device_queue_full_freq_pct,20.00\n"
                         "host_queue_empty_freq_pct,41.67\n"
                         "data_process_status,warning\n");
    assert_string_equal(fx->f.bottleneck_op, "MapOp(id=2)");
    assert_string_equal(fx->f.bottleneck_reason, CHAIN_REASON);
    assert_string_equal(fx->f.bottleneck_suggestion, MAP_ADVICE);
    assert_true(fabs(fx->f.device_queue_empty_pct - 60.0) < 1e-9);
    assert_true(fabs(fx->f.host_queue_empty_pct - 500.0 / 12.0) < 1e-9);
}

/* TFRecord(1) -> DeviceQueue(0): the leaf's queue of 8 is always empty (average 0, usage
 * 0% < 50: I/O bound; DeviceQueue's input empty 100% > 60), its 4 workers use 10% each
 * (< 20% with > 1 worker). No bottleneck: the low-CPU verdict needs an input queue, and a
 * leaf has none. No device queue samples: its statistics are -1 and the status "". */
static void test_queue_always_empty(void **state)
{
    fixture_t *fx = *state;
    nnpt_add_pipe_op(&fx->m, 0, -1, "DeviceQueueOp", 1);
    nnpt_add_pipe_op(&fx->m, 1, 0, "TFRecordOp", 4);
    for (int k = 0; k < 3; k++)
        nnpt_add_queue(&fx->m, (1 + k) * MS, 1, 0, 8);
    add_workers(&fx->m, "TFRecordOp", 1, 4, 10);
    run(fx);
    nnpt_afx_expect_file(fx, "minddata_pipeline_raw_0.csv",
                         RAW_HEADER "0,DeviceQueueOp,1,,,,,,,[1]\n"
                                    "1,TFRecordOp,4,\"[0, 0, 0]\",0,8,0,1.000,0,\n");
    expect_key(fx, "queue_utilization_pct", "[-1,0.00]");
    expect_key(fx, "queue_empty_freq_pct", "[-1,100.00]");
    expect_key(fx, "avg_cpu_pct", "[-1,40.00]");
    expect_key(fx, "avg_cpu_pct_per_worker", "[-1,10.00]");
    expect_key(fx, "cpu_analysis_details",
               "[\"TFRecord(id=1) uses 10.00% CPU per worker (below 20%): "
               "num_parallel_workers=4 may not help much at this CPU usage per worker.\"]");
    expect_key(fx, "queue_analysis_details",
               "[\"The input queue of DeviceQueue(id=0) is empty 100.00% of the time (above "
               "60%): the host pipeline cannot keep up with the device, which waits whenever "
               "that queue is empty.\",\"Leaf op TFRecord(id=1) uses 0.00% of its output queue "
               "(below 50%): setting num_parallel_workers above 4 may speed up its I/O.\"]");
    expect_key(fx, "bottleneck_warning", "[\"\"]");
    expect_key(fx, "bottleneck_suggestion", "[\"\"]");
    expect_key(fx, "per_batch_time", "[-1]");
    expect_key(fx, "device_queue_batches", "[0]");
    expect_key(fx, "device_queue_empty_freq_pct", "[-1]");
    expect_key(fx, "host_queue_empty_freq_pct", "[100.00]");
    expect_key(fx, "data_process_status", "[\"\"]");
    assert_string_equal(fx->f.bottleneck_op, "");
    assert_true(isnan(fx->f.device_queue_empty_pct));
    assert_true(fabs(fx->f.host_queue_empty_pct - 100.0) < 1e-9);
}

/* One op id's queue samples: `empty` samples of size 0, then one of `size` (capacity 100,
 * so usage = size / (empty + 1) %). */
static void queue_of(nnp_model_t *m, int64_t id, int empty, uint32_t size)
{
    for (int k = 0; k < empty; k++)
        nnpt_add_queue(m, (1 + k) * MS, id, 0, 100);
    nnpt_add_queue(m, (1 + empty) * MS, id, size, 100);
}

/* CPU rules at their thresholds: above 75% fires, 75% does not; below 20% fires with more
 * than one worker, not with one, not at 20%; a single-threaded op (Shuffle) and an op
 * without CPU data get no verdict. Ops are unlinked roots with no queue. */
static void test_cpu_rules_at_thresholds(void **state)
{
    fixture_t *fx = *state;
    nnpt_add_pipe_op(&fx->m, 0, -1, "MapOp", 2);
    add_workers(&fx->m, "MapOp", 0, 2, 76);
    nnpt_add_pipe_op(&fx->m, 1, -1, "MapOp", 2);
    add_workers(&fx->m, "MapOp", 1, 2, 75);
    nnpt_add_pipe_op(&fx->m, 2, -1, "MapOp", 3);
    add_workers(&fx->m, "MapOp", 2, 3, 19);
    nnpt_add_pipe_op(&fx->m, 3, -1, "MapOp", 1);
    add_workers(&fx->m, "MapOp", 3, 1, 19);
    nnpt_add_pipe_op(&fx->m, 4, -1, "MapOp", 2);
    add_workers(&fx->m, "MapOp", 4, 2, 20);
    nnpt_add_pipe_op(&fx->m, 5, -1, "ShuffleOp", 1);
    add_workers(&fx->m, "ShuffleOp", 5, 1, 99);
    nnpt_add_pipe_op(&fx->m, 6, -1, "MapOp", 4); /* no worker thread sampled */
    run(fx);
    expect_key(fx, "avg_cpu_pct_per_worker", "[76.00,75.00,19.00,19.00,20.00,99.00,-1]");
    expect_key(fx, "cpu_analysis_details",
               "[\"Map(id=0) uses 76.00% CPU per worker (above 75%): setting "
               "num_parallel_workers above 2 may bring extra performance.\",\"Map(id=2) uses "
               "19.00% CPU per worker (below 20%): num_parallel_workers=3 may not help much at "
               "this CPU usage per worker.\"]");
    /* Bottleneck: Map(id=0), the lowest id above 75%; low-CPU ops have no input queue. */
    expect_key(fx, "bottleneck_warning", "[\"Map(id=0)\"]");
}

/* Queue rules at their thresholds (chain parent <- child):
 *   leaf  usage 49% fires, 50% does not;
 *   DeviceQueue input empty 4/5 = 80% fires, 3/5 = 60% does not;
 *   gap   input 90% - output 39% = 51 fires, 90 - 40 = 50 does not;
 *   Batch with a 90 - 10 gap is not judged by queues. */
static void test_queue_rules_at_thresholds(void **state)
{
    fixture_t *fx = *state;
    nnp_model_t *m = &fx->m;
    nnpt_add_pipe_op(m, 0, -1, "TFRecordOp", 1);
    queue_of(m, 0, 0, 49);
    nnpt_add_pipe_op(m, 1, -1, "TFRecordOp", 1);
    queue_of(m, 1, 0, 50);
    nnpt_add_pipe_op(m, 10, -1, "DeviceQueueOp", 1);
    nnpt_add_pipe_op(m, 11, 10, "MapOp", 1);
    queue_of(m, 11, 4, 100); /* 4 of 5 empty, usage 20%: its own leaf rule fires too */
    nnpt_add_pipe_op(m, 20, -1, "DataQueueOp", 1);
    nnpt_add_pipe_op(m, 21, 20, "MapOp", 1);
    for (int k = 0; k < 5; k++) /* 0, 0, 0, 150, 150 of 100: 3 of 5 empty, usage 60% */
        nnpt_add_queue(m, (1 + k) * MS, 21, k < 3 ? 0 : 150, 100);
    nnpt_add_pipe_op(m, 30, -1, "MapOp", 1);
    queue_of(m, 30, 0, 39);
    nnpt_add_pipe_op(m, 31, 30, "MapOp", 1);
    queue_of(m, 31, 0, 90);
    nnpt_add_pipe_op(m, 40, -1, "MapOp", 1);
    queue_of(m, 40, 0, 40);
    nnpt_add_pipe_op(m, 41, 40, "MapOp", 1);
    queue_of(m, 41, 0, 90);
    nnpt_add_pipe_op(m, 50, -1, "BatchOp", 1);
    queue_of(m, 50, 0, 10);
    nnpt_add_pipe_op(m, 51, 50, "MapOp", 1);
    queue_of(m, 51, 0, 90);
    run(fx);
    expect_key(fx, "queue_analysis_details",
               "[\"Leaf op TFRecord(id=0) uses 49.00% of its output queue (below 50%): setting "
               "num_parallel_workers above 1 may speed up its I/O.\","
               "\"The input queue of DeviceQueue(id=10) is empty 80.00% of the time (above "
               "60%): the host pipeline cannot keep up with the device, which waits whenever "
               "that queue is empty.\","
               "\"Leaf op Map(id=11) uses 20.00% of its output queue (below 50%): setting "
               "num_parallel_workers above 1 may speed up its I/O.\","
               "\"The input queue of Map(id=30) is 90.00% used but its output queue only "
               "39.00% (a gap above 50 points): its child Map(id=31) produces faster than "
               "Map(id=30) consumes; if Map(id=30) has low CPU usage, try a larger "
               "prefetch_size or more workers.\"]");
    expect_key(fx, "cpu_analysis_details", "[]");
    expect_key(fx, "bottleneck_warning", "[\"\"]");
}

/* The low-CPU bottleneck (per worker < 20% with an input queue below 10%, or output usage
 * more than 50 points above the input's); ops chained 0 <- 1 <- 2 <- 3 <- 4:
 *   op 2 (Batch, 19%): input (op 3) at 5% < 10: fires;
 *   op 1 (Shuffle): single-threaded, never the bottleneck (its queue still counts);
 *   op 0 (Map, 19%): input (op 1) at 10%, not below 10, but output 61 - 10 = 51 > 50:
 *   fires too, and wins as the lowest id (MindSpore keeps the last match of a scan from
 *   the highest id). At the exact thresholds nothing fires (test below). */
static void test_low_cpu_bottleneck(void **state)
{
    fixture_t *fx = *state;
    nnp_model_t *m = &fx->m;
    nnpt_add_pipe_op(m, 0, -1, "MapOp", 2);
    queue_of(m, 0, 0, 61);
    add_workers(m, "MapOp", 0, 2, 19);
    nnpt_add_pipe_op(m, 1, 0, "ShuffleOp", 1); /* single-threaded: skipped, but its queue counts */
    queue_of(m, 1, 0, 10);
    add_workers(m, "ShuffleOp", 1, 1, 1);
    nnpt_add_pipe_op(m, 2, 1, "BatchOp", 1);
    queue_of(m, 2, 0, 9);
    add_workers(m, "BatchOp", 2, 1, 19);
    nnpt_add_pipe_op(m, 3, 2, "TFRecordOp", 1);
    queue_of(m, 3, 0, 5);
    add_workers(m, "TFRecordOp", 3, 1, 50);
    run(fx);
    expect_key(fx, "bottleneck_warning", "[\"Map(id=0)\"]");
    expect_key(fx, "bottleneck_suggestion",
               "[\"Map(id=0) has a low CPU usage per worker of 19.00% (below 20%) and abnormal "
               "queue usage (input 10.00%, output 61.00%). " MAP_ADVICE "\"]");
    assert_string_equal(fx->f.bottleneck_op, "MapOp(id=0)");
}

static void test_low_cpu_bottleneck_not_firing(void **state)
{
    fixture_t *fx = *state;
    nnp_model_t *m = &fx->m;
    nnpt_add_pipe_op(m, 0, -1, "MapOp", 2);
    queue_of(m, 0, 0, 60); /* 60 - 10 = 50: not above 50 */
    add_workers(m, "MapOp", 0, 2, 19);
    nnpt_add_pipe_op(m, 1, 0, "BatchOp", 1);
    queue_of(m, 1, 0, 10); /* input at 10%: not below 10 */
    add_workers(m, "BatchOp", 1, 1, 19);
    nnpt_add_pipe_op(m, 2, 1, "GeneratorOp", 1);
    queue_of(m, 2, 0, 30); /* Batch: 10 - 30 < 50, input 30 >= 10 */
    add_workers(m, "GeneratorOp", 2, 1, 75);
    run(fx);
    expect_key(fx, "bottleneck_warning", "[\"\"]");
    assert_string_equal(fx->f.bottleneck_op, "");
    assert_string_equal(fx->f.bottleneck_reason, "");
}

/* The tutorial's advice by op type: Generator, Batch, a dataset load op (leaf), and any
 * other op (MindSpore's own advice). Each case is a fresh pipeline of one high-CPU op. */
static void test_advice_by_op_type(void **state)
{
    static const struct {
        const char *type, *advice;
        bool leaf;
    } cases[] = {
        {"GeneratorOp",
         "Increase num_parallel_workers of the GeneratorOp, and try replacing it with "
         "MindRecordDataset.",
         true},
        {"BatchOp", "Adjust prefetch_size.", false},
        {"ImageFolderOp", "Increase num_parallel_workers of the dataset load op.", true},
        {"ZipLikeOp", "Increase num_parallel_workers above 1.", false},
    };
    fixture_t *fx = *state;
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        nnp__model_fini(&fx->m);
        assert_int_equal(nnp__model_init(&fx->m), NNP_OK);
        fx->m.info.clock_ticks_per_sec = TICKS_PER_SEC;
        nnpt_add_pipe_op(&fx->m, 1, -1, cases[k].type, 1);
        add_workers(&fx->m, cases[k].type, 1, 1, 80);
        if (!cases[k].leaf)
            nnpt_add_pipe_op(&fx->m, 2, 1, "TFRecordOp", 1);
        run(fx);
        assert_string_equal(fx->f.bottleneck_suggestion, cases[k].advice);
    }
}

/* MindInsight: the device queue empty in more than 30% of batches. 3 of 10 is not more. */
static void test_device_queue_30_percent(void **state)
{
    fixture_t *fx = *state;
    for (int k = 0; k < 10; k++)
        nnpt_add_queue(&fx->m, (1 + k) * MS, -1, k < 3 ? 0 : 5, 5);
    run(fx);
    expect_key(fx, "data_process_status", "[\"normal\"]");
    expect_key(fx, "queue_analysis_details", "[]");
    expect_key(fx, "device_queue_empty_freq_pct", "[30.00]");
    expect_key(fx, "device_queue_full_freq_pct", "[70.00]");
    expect_key(fx, "per_batch_time", "[1.000]");
    expect_key(fx, "pipeline_ops", "[]");
    nnpt_afx_expect_file(fx, "minddata_pipeline_raw_0.csv", RAW_HEADER);
    assert_true(fabs(fx->f.device_queue_empty_pct - 30.0) < 1e-9);
    assert_true(isnan(fx->f.host_queue_empty_pct));

    /* 4 of 10 is. */
    fx->m.queues.size[3] = 0;
    assert_int_equal(nnp__pipeline_write(&fx->c, &fx->f), NNP_OK);
    expect_key(fx, "data_process_status", "[\"warning\"]");
    expect_key(fx, "queue_analysis_details",
               "[\"The device queue was empty in 40.00% of batches (4 of 10, above 30%): data "
               "processing on the host is slower than the device (MindInsight data_process "
               "warning).\"]");
}

/* A branching graph: Zip(1) with children 3 and 2 registered out of order, a re-registered
 * op (the last registration wins), an op whose parent was never registered (a root of its
 * own), and two ops that are each other's parent (listed after the reachable ones). Queue
 * samples of an unregistered op count only in the host-queue total. */
static void test_graph_shape(void **state)
{
    fixture_t *fx = *state;
    nnp_model_t *m = &fx->m;
    nnpt_add_pipe_op(m, 3, 1, "MapOp", 1);
    nnpt_add_pipe_op(m, 1, 0, "ZipOp", 1);
    nnpt_add_pipe_op(m, 0, -1, "EpochCtrlOp", 1);
    nnpt_add_pipe_op(m, 2, 1, "MapOp", 1);
    nnpt_add_pipe_op(m, 2, 1, "MapOp", 6); /* re-registered with 6 workers */
    nnpt_add_pipe_op(m, 7, 42, "TakeOp", 1);
    nnpt_add_pipe_op(m, 8, 9, "SkipOp", 1);
    nnpt_add_pipe_op(m, 9, 8, "SkipOp", 1);
    nnpt_add_queue(m, 1 * MS, 99, 0, 4);
    nnpt_add_queue(m, 2 * MS, 3, 2, 4);
    run(fx);
    nnpt_afx_expect_file(fx, "minddata_pipeline_raw_0.csv",
                         RAW_HEADER "0,EpochCtrlOp,1,,,,,,,[1]\n"
                                    "1,ZipOp,1,,,,,,0,\"[2, 3]\"\n"
                                    "2,MapOp,6,,,,,,1,\n"
                                    "3,MapOp,1,[2],2,4,0.5,,1,\n"
                                    "7,TakeOp,1,,,,,,42,\n"
                                    "8,SkipOp,1,,,,,,9,[9]\n"
                                    "9,SkipOp,1,,,,,,8,[8]\n");
    expect_key(fx, "children_ids", "[[1],[2,3],[],[],[],[9],[8]]");
    expect_key(fx, "num_workers", "[1,1,6,1,1,1,1]");
    expect_key(fx, "parent_id", "[-1,0,1,1,42,9,8]");
    expect_key(fx, "host_queue_empty_freq_pct", "[50.00]");
}

/* Nothing recorded: no file, findings untouched. */
static void test_no_data_no_files(void **state)
{
    fixture_t *fx = *state;
    run(fx);
    assert_false(nnpt_afx_exists(fx, "minddata_pipeline_raw_0.csv"));
    assert_false(nnpt_afx_exists(fx, "minddata_pipeline_summary_0.json"));
    assert_false(nnpt_afx_exists(fx, "minddata_pipeline_summary_0.csv"));
    assert_true(isnan(fx->f.device_queue_empty_pct));
    assert_string_equal(fx->f.bottleneck_op, "");
}

/* Failing each allocation in turn: an error every time, no leak or crash (ASan), and the
 * normal output once no failure hits. */
static void test_alloc_failures(void **state)
{
    fixture_t *fx = *state;
    int n;
    build_chain(&fx->m);
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    for (n = 1; n < MAX_ALLOC_FAILS; n++) {
        int rc;
        nnp__alloc_fail_at((uint64_t)n);
        rc = nnp__pipeline_write(&fx->c, &fx->f);
        if (rc == NNP_OK) {
            assert_true(nnp__alloc_fail_pending());
            break;
        }
        assert_int_equal(rc, NNP_ENOMEM);
    }
    nnp__alloc_fail_at(0);
    assert_true(n > 1 && n < MAX_ALLOC_FAILS);
    expect_key(fx, "bottleneck_warning", "[\"Map(id=2)\"]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_bottleneck_in_the_middle, setup, nnpt_afx_teardown),
        cmocka_unit_test_setup_teardown(test_queue_always_empty, setup, nnpt_afx_teardown),
        cmocka_unit_test_setup_teardown(test_cpu_rules_at_thresholds, setup, nnpt_afx_teardown),
        cmocka_unit_test_setup_teardown(test_queue_rules_at_thresholds, setup, nnpt_afx_teardown),
        cmocka_unit_test_setup_teardown(test_low_cpu_bottleneck, setup, nnpt_afx_teardown),
        cmocka_unit_test_setup_teardown(test_low_cpu_bottleneck_not_firing, setup,
                                        nnpt_afx_teardown),
        cmocka_unit_test_setup_teardown(test_advice_by_op_type, setup, nnpt_afx_teardown),
        cmocka_unit_test_setup_teardown(test_device_queue_30_percent, setup, nnpt_afx_teardown),
        cmocka_unit_test_setup_teardown(test_graph_shape, setup, nnpt_afx_teardown),
        cmocka_unit_test_setup_teardown(test_no_data_no_files, setup, nnpt_afx_teardown),
        cmocka_unit_test_setup_teardown(test_alloc_failures, setup, nnpt_afx_teardown),
    };
    nnp_log_set_level(NNP_LOG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
