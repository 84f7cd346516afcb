/* test_mindspore_ops.c - MindSpore's operator and communication files (src/read/
 * mindspore_ops.c, mindspore_hccl.c, src/analyse/hccl_raw.c) and the averages-row rule of
 * the step trace, on the corpus (values read off the files by hand, in the comments) and on
 * small hccl_info traces whose costs are worked out here by MindSpore's formulas. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyse/analyse.h"
#include "model/model.h"
#include "read/importers.h"
#include "test_util.h"

#define CORPUS   NNP_SOURCE_DIR "/../shared/corpus/mindinsight"
#define RUN1_DIR CORPUS "/run_1/normal_run/profiler"
#define RUN2_DIR CORPUS "/run_2/normal_run/profiler"
#define LOOSE    CORPUS "/profiler"
#define CLUSTER  CORPUS "/cluster_propose"

static bool have(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Skips the test when the corpus is not there, removing and freeing its folder first. */
static void need_corpus(char *dir)
{
    if (!have(RUN1_DIR)) {
        fprintf(stderr, "SKIP: corpus not found at %s\n", CORPUS);
        nnpt_rm_rf(dir);
        free(dir);
        skip();
    }
}

/* run_1 (MindSpore 1.x): the timeline's ops get their type from their names (the corpus'
 * framework_raw_1.csv is of another network), core AI_CORE when the AI Core files list the
 * type; the op-type table is aicore_intermediate_1_type.csv as MindInsight shows it. */
static void test_run1_op_types(void **state)
{
    char *out = nnpt_mkdtemp(), *t;
    (void)state;
    need_corpus(out);
    assert_int_equal(nnpt_analyse_to(RUN1_DIR, out), NNP_OK);
    t = nnpt_read_in(out, "op_statistic_1.csv");
    /* MatMul,2.807820000000000064 ms,25,57.60: 2807.820 us, mean 112312.8 -> 112.313 us;
     * Cast,0.1043199999999999939,27,2.14: 104.320 us, 3863.7 -> 3.864 us. */
    assert_non_null(strstr(t, "OP Type,Core Type,Count,Total Time(us),Avg Time(us),Min Time(us),"
                              "Max Time(us),Ratio(%)\n"
                              "MatMul,AI_CORE,25,2807.820,112.313,,,57.60\n"
                              "Cast,AI_CORE,27,104.320,3.864,,,2.14\n"));
    free(t);
    /* The detail file's times as Python wrote them: "Default/GetNext-op6,5e-05,3" is a mean
     * of 0.05 us over 3 executions, 0.150 us; "Default/StreamSend-op199,1e-05,3" 0.030 us
     * (these rows were refused as "not a number" before). */
    t = nnpt_read_in(out, "op_detail_1.csv");
    assert_non_null(strstr(t, "\nDefault/GetNext-op6,GetNext,AI_CORE,3,0.150,0.050,,,"));
    assert_non_null(strstr(t, "\nDefault/StreamSend-op199,StreamSend,AI_CORE,3,0.030,0.010,,,"));
    free(t);
    /* Detail (1.x: mean ms x frequency): Default/AtomicAddrClean... */
    t = nnpt_read_in(out, "kernel_details_1.csv");
    /* The first timeline op, Default/AssignAdd-op414, 0.00266 ms: type AssignAdd. */
    assert_non_null(strstr(t, ",Default/AssignAdd-op414,AssignAdd,AI_CORE,519,"));
    free(t);
    nnpt_rm_rf(out);
    free(out);
}

/* run_2 (older 2.x headers): framework_raw's full_op_name/op_type types the ops; the detail
 * file (full_op_name,execution_time: one execution each) and the AI CPU file (per
 * execution, summed per type: InitData 7.906 ms; GetNext 0.888 + 0.293 = 1.181;
 * EndOfSequence 0.282 + 0.325 = 0.607; shares of 9.694: 81.56, 12.18, 6.26). */
static void test_run2_ops(void **state)
{
    char *out = nnpt_mkdtemp(), *t;
    (void)state;
    need_corpus(out);
    assert_int_equal(nnpt_analyse_to(RUN2_DIR, out), NNP_OK);
    t = nnpt_read_in(out, "op_statistic_1.csv");
    assert_non_null(strstr(t, "\nMatMul,AI_CORE,9,20657.740,2295.304,,,89.47\n"));
    assert_non_null(strstr(t, "\nInitData,AI_CPU,1,7906.000,7906.000,,,81.56\n"));
    assert_non_null(strstr(t, "\nGetNext,AI_CPU,2,1181.000,590.500,,,12.18\n"));
    assert_non_null(strstr(t, "\nEndOfSequence,AI_CPU,2,607.000,303.500,,,6.26\n"));
    free(t);
    t = nnpt_read_in(out, "op_detail_1.csv");
    /* Default/TransData-op118,0.047035 ms of TransData's 0.193765 total (the type file). */
    assert_non_null(strstr(t, "\nDefault/TransData-op118,TransData,AI_CORE,1,47.035,47.035,,,"));
    free(t);
    nnpt_rm_rf(out);
    free(out);
}

/* A step trace whose averages row leaves step 1 out although it has no 1.x triples (the
 * 21-column corpus file: its "-" row total 13045611 is the mean of steps 2..20, 13045611.05,
 * not of all 20, 12593482.85): that rule is kept, and the summary is that row, as
 * MindInsight reads it: 13045611 ticks = 130.45611 ms -> 130.4561; interval 9035360 ->
 * 90.3536; fp_and_bp 1709449 -> 17.0945; tail 2300802 -> 23.008. */
static void test_averages_row_rule(void **state)
{
    char *dir = nnpt_mkdtemp(), *t, src[512], *text;
    nnp_model_t m;
    (void)state;
    need_corpus(dir);
    text = nnpt_read_text(LOOSE "/step_trace_raw_0_detail_time.csv");
    assert_non_null(text);
    free(nnpt_write_file(dir, "step_trace_raw_0_detail_time.csv", text));
    free(text);
    snprintf(src, sizeof(src), "%s/step_trace_raw_0_detail_time.csv", dir);
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__importer_mindspore.import(src, &m), NNP_OK);
    assert_true(m.info.step_avg_skip_first);
    assert_int_equal(m.info.step_averages_ns[0], 130456110);
    nnp__model_fini(&m);
    snprintf(src, sizeof(src), "%s/nnprof_output", dir); /* inputs are never written */
    assert_int_equal(nnpt_analyse_to(dir, src), NNP_OK);
    t = nnpt_read_in(src, "step_trace_summary_0.json");
    assert_non_null(strstr(t, "\"total_time\":130.4561,\"iteration_interval\":90.3536,"));
    assert_non_null(strstr(t, "\"fp_and_bp\":17.0945,"));
    assert_non_null(strstr(t, "\"tail\":23.008,"));
    free(t);
    nnpt_rm_rf(dir);
    free(dir);
}

/* cluster_propose: the averages rows equal neither mean (rank 0 total 18030115 against
 * 17916840.6 of all steps and 17941385.75 without step 1): the summary still reports the
 * row, as MindInsight does (it reads the last row): round(18030115 / 1e5, 4). Each rank's
 * hccl_raw_{rank}.csv written back is byte for byte MindSpore's file: the step rows as
 * given, the "-" row recomputed by MindSpore's rules (means of the steps; every op's
 * means over its steps; links averaged element-wise). */
static void test_cluster_propose(void **state)
{
    char *out = nnpt_mkdtemp(), *t, want[64];
    (void)state;
    need_corpus(out);
    assert_int_equal(nnpt_analyse_to(CLUSTER, out), NNP_OK);
    t = nnpt_read_in(out, "step_trace_summary_0.json");
    snprintf(want, sizeof(want), "\"total_time\":%.4f,", 18030115 / 1e5);
    assert_non_null(strstr(t, want));
    free(t);
    for (int r = 0; r < 4; r++) {
        char name[64], theirs[512], *ours, *ms;
        snprintf(name, sizeof(name), "hccl_raw_%d.csv", r);
        snprintf(theirs, sizeof(theirs), CLUSTER "/%s", name);
        ours = nnpt_read_in(out, name);
        ms = nnpt_read_text(theirs);
        assert_non_null(ms);
        assert_string_equal(ours, ms);
        free(ours);
        free(ms);
    }
    nnpt_rm_rf(out);
    free(out);
}

/* ---- hccl_info traces: MindSpore 1.x's rules (hccl_parser.py, formats.md 2.7) ---- */

static const char step_trace[] =
    "step_num,start_point,end_point,total,fp_point,bp_point,iteration_interval,fp_and_bp,tail,"
    "stream_5_1_AllReduce-op3,stream_5_1_AllReduce-op3_start_point,"
    "stream_5_1_AllReduce-op3_end_point\n"
    "1,100000,200000,100000,100100,150000,100,49900,50000,1000,110000,111000\n"
    "2,200000,300000,100000,200100,250000,100,49900,50000,1000,210000,211000\n";

/* One execution of the op (ts in µs; the first task's ts places it in a step): an SDMA
 * Memcpy 0->1 of memcpy_dur µs and 0x400 bytes, its Notify Record (not data), a LOCAL
 * Notify Wait of 6 µs from 0xffffffff to 0 (the peer rank stands in: key 0-0, which has no
 * RDMA, so it makes no link), then on thread 1 an RDMA triple 0->2: RDMASend 20 µs 0x800 B,
 * RDMASend 5 µs 512 B, Notify Wait 8 µs. */
static void write_iter(const char *dir, const char *name, int ts0, int memcpy_dur)
{
    char text[4096];
    snprintf(
        text, sizeof(text),
        "{\"traceEvents\": ["
        "{\"ts\": %d, \"dur\": %d, \"tid\": 2, \"args\": {\"task type\": \"Memcpy\", "
        "\"transport type\": \"SDMA\", \"src rank\": 0, \"dst rank\": 1, \"size\": \"0x400\"}},"
        "{\"ts\": %d, \"dur\": 4, \"tid\": 2, \"args\": {\"task type\": \"Notify Record\", "
        "\"transport type\": \"SDMA\", \"src rank\": 0, \"dst rank\": 1}},"
        "{\"ts\": %d, \"dur\": 6, \"tid\": 2, \"args\": {\"task type\": \"Notify Wait\", "
        "\"transport type\": \"LOCAL\", \"src rank\": 4294967295, \"dst rank\": 0}},"
        "{\"ts\": %d, \"dur\": 20, \"tid\": 1, \"args\": {\"task type\": \"RDMASend\", "
        "\"transport type\": \"RDMA\", \"src rank\": 0, \"dst rank\": 2, \"size\": \"0x800\"}},"
        "{\"ts\": %d, \"dur\": 5, \"tid\": 1, \"args\": {\"task type\": \"RDMASend\", "
        "\"transport type\": \"RDMA\", \"src rank\": 0, \"dst rank\": 2, \"size\": 512}},"
        "{\"ts\": %d, \"dur\": 8, \"tid\": 1, \"args\": {\"task type\": \"Notify Wait\", "
        "\"transport type\": \"RDMA\", \"src rank\": 0, \"dst rank\": 2}}]}",
        ts0, memcpy_dur, ts0 + 11, ts0 + 16, ts0 + 23, ts0 + 44, ts0 + 50);
    free(nnpt_write_file(dir, name, text));
}

static void test_hccl_info_traces(void **state)
{
    char *dir = nnpt_mkdtemp(), sub[1024], op[1100], src[1100], *t;
    nnp_model_t m;
    const nnp_comm_links_t *l;
    double rdma_t = (20.0 + 5 + 8) / 1e3, rdma_s = (2048.0 + 512) / 1e3;
    (void)state;
    free(nnpt_write_file(dir, "step_trace_raw_0_detail_time.csv", step_trace));
    snprintf(sub, sizeof(sub), "%s/hccl_info", dir);
    snprintf(op, sizeof(op), "%s/allReduce_1", sub);
    assert_int_equal(mkdir(sub, 0700), 0);
    assert_int_equal(mkdir(op, 0700), 0);
    write_iter(op, "iter_1.trace", 1100, 10); /* 1100 us: step 1 [1000, 2000) */
    write_iter(op, "iter_2.trace", 2100, 20); /* step 2 */
    snprintf(src, sizeof(src), "%s/step_trace_raw_0_detail_time.csv", dir);
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__importer_mindspore.import(src, &m), NNP_OK);
    /* Per step: the step's row and the op's (named as the step trace names it). */
    assert_int_equal(m.comm_costs.t.n, 4);
    assert_int_equal(m.comm_costs.op[0], 0);
    assert_string_equal(nnp__model_str(&m, m.comm_costs.op[1]), "stream_5_1_AllReduce-op3");
    /* Main stream = thread 2 (the largest id): cost = its SDMA time 10 us = 0.01 ms; wait =
     * its Notify Wait 6 us less the RDMA wait it has none of = 0.006 ms. */
    assert_true(m.comm_costs.cost_ms[1] == 10.0 / 1e3);
    assert_true(m.comm_costs.wait_ms[1] == 6.0 / 1e3);
    assert_true(m.comm_costs.cost_ms[3] == 20.0 / 1e3);
    /* Links of step 1's op, from every stream: 0-1 SDMA [0.01 ms, 1.024 KB, KB/s] and 0-2
     * RDMA [33 us, 2.56 KB, KB/s, wait 8 us]. */
    l = &m.comm_links;
    assert_int_equal(l->t.n, 8);
    assert_string_equal(nnp__model_str(&m, l->link[2]), "0-1");
    assert_string_equal(nnp__model_str(&m, l->transport[2]), "SDMA");
    assert_true(l->time_ms[2] == 10.0 / 1e3);
    assert_true(l->size_kb[2] == 1024.0 / 1e3);
    assert_true(l->bandwidth[2] == (1024.0 / 1e3) / ((10.0 / 1e3) / 1e3));
    assert_true(isnan(l->wait_ms[2]));
    assert_string_equal(nnp__model_str(&m, l->link[3]), "0-2");
    assert_true(l->time_ms[3] == rdma_t);
    assert_true(l->size_kb[3] == rdma_s);
    assert_true(l->bandwidth[3] == rdma_s / (rdma_t / 1e3));
    assert_true(l->wait_ms[3] == 8.0 / 1e3);
    nnp__model_fini(&m);
    /* Written out: the averages row means the two steps: (0.01 + 0.02) / 2. */
    snprintf(src, sizeof(src), "%s/nnprof_output", dir); /* inputs are never written */
    assert_int_equal(nnpt_analyse_to(dir, src), NNP_OK);
    t = nnpt_read_in(src, "hccl_raw_0.csv");
    assert_non_null(strstr(t, "step_num,communication_cost,wait_cost,link_info,"
                              "communication_operator_cost\n1,0.01,0.006,"));
    {
        char want[64];
        snprintf(want, sizeof(want), "\n-,%.17g,", (10.0 / 1e3 + 20.0 / 1e3) / 2);
        /* repr of 0.015 is the shortest text that reads back: the same double. */
        assert_true(strtod(strstr(t, "\n-,") + 3, NULL) == strtod(want + 3, NULL));
    }
    free(t);
    nnpt_rm_rf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run1_op_types),     cmocka_unit_test(test_run2_ops),
        cmocka_unit_test(test_averages_row_rule), cmocka_unit_test(test_cluster_propose),
        cmocka_unit_test(test_hccl_info_traces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
