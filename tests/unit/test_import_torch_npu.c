/* test_import_torch_npu.c - the torch_npu importer (src/read/import_torch_npu.c) on the
 * corpus trace_view.json and kernel_details.csv (counts from MANIFEST section 2), exact ns
 * parsing of string timestamps, and a truncated trace (partial import plus a message). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "analyse/analyse.h"
#include "model/model.h"
#include "read/importers.h"
#include "test_util.h"
#include "util/util.h"

#define CORPUS  NNP_SOURCE_DIR "/../shared/corpus/msprof-analyze/test/ut/advisor"
#define TV_DIR  CORPUS "/timeline_advice"
#define TV_FILE TV_DIR "/trace_view.json"
#define KD_DIR  CORPUS "/advisor_backend/compute_advice"
/* MANIFEST section 2: 711 cpu_op events of which one is ProfilerStep#1; 276 tasks. */
#define TV_OPS     710
#define TV_STEPS   1
#define TV_KERNELS 276
/* MANIFEST section 2: 591 rows = 520 AI_VECTOR_CORE + 25 MIX_AIV + 13 AI_CORE + 7 AI_CPU
 * (compute: kernels) + 19 HCCL (communication ops) + 7 DSA_SQE (neither: skipped). */
#define KD_KERNELS (520 + 25 + 13 + 7)
#define KD_COMMS   19
#define BUF_BYTES  (1 << 20)
#define CLUSTER_DIR                                                                                \
    NNP_SOURCE_DIR "/../shared/corpus/msprof-analyze/test/resource/advisor/"                       \
                   "cluster_analysis_output"
#define CLUSTER_RANKS     8
#define CLUSTER_RANK0_OPS 2

static bool have(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    fclose(f);
    return true;
}

static void test_trace_view_counts(void **state)
{
    nnp_foreign_input_t in[2];
    nnp_model_t m;
    (void)state;
    if (!have(TV_FILE)) {
        fprintf(stderr, "SKIP: %s\n", "corpus not found at " CORPUS);
        skip();
    }
    assert_int_equal(nnp__importer_torch_npu.find(TV_DIR, in, 2), 1);
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__importer_torch_npu.import(in[0].path, &m), NNP_OK);
    assert_int_equal(m.ops.t.n, TV_OPS);
    assert_int_equal(m.steps.t.n, TV_STEPS);
    assert_int_equal(m.steps.id[0], 1);
    /* "ts": "1704161511420289.011", "dur": 14091.97 (us): exact ns. */
    assert_int_equal(m.steps.start_ns[0], 1704161511420289011LL);
    assert_int_equal(m.steps.end_ns[0], 1704161511420289011LL + 14091970);
    assert_int_equal(m.kernels.t.n, TV_KERNELS);
    assert_int_equal(m.comms.t.n, 0);
    assert_string_equal(m.info.source_format, "torch-npu");
    assert_int_equal(nnp__model_finish(&m), NNP_OK);
    nnp__model_fini(&m);
}

static void test_kernel_details(void **state)
{
    nnp_model_t m;
    (void)state;
    if (!have(KD_DIR "/kernel_details.csv")) {
        fprintf(stderr, "SKIP: %s\n", "corpus not found at " CORPUS);
        skip();
    }
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__importer_torch_npu.import(KD_DIR, &m), NNP_OK);
    assert_int_equal(m.kernels.t.n, KD_KERNELS);
    assert_int_equal(m.comms.t.n, KD_COMMS);
    /* First row: ZerosLike46, ZerosLike, AI_VECTOR_CORE, start 1699529622790614.8 us,
     * 607.98 us. */
    assert_string_equal(nnp__model_str(&m, m.kernels.name[0]), "ZerosLike46");
    assert_string_equal(nnp__model_str(&m, m.kernels.type[0]), "AI_VECTOR_CORE");
    assert_string_equal(nnp__model_str(&m, m.kernels.op_type[0]), "ZerosLike");
    /* Second row: hcom_broadcast__445_0, HCCL, 1699529622793969.5 us, 308926.68 us. */
    assert_string_equal(nnp__model_str(&m, m.comms.name[0]), "hcom_broadcast__445_0");
    assert_int_equal(m.comms.kind[0], NNP_COMM_BROADCAST);
    assert_int_equal(m.comms.start_ns[0], 1699529622793969500LL);
    assert_int_equal(m.comms.end_ns[0] - m.comms.start_ns[0], 308926680);
    assert_int_equal(m.kernels.start_ns[0], 1699529622790614800LL);
    assert_int_equal(m.kernels.end_ns[0] - m.kernels.start_ns[0], 607980);
    assert_int_equal(m.kernels.stream_id[0], 16);
    nnp__model_fini(&m);
}

/* The first 3/4 of the corpus trace: the events before the cut are imported, and the
 * message names the file and says it is truncated. */
static void test_truncated_json(void **state)
{
    char *dir, path[512], *buf;
    FILE *f;
    size_t n;
    nnp_model_t m;
    (void)state;
    if (!have(TV_FILE)) {
        fprintf(stderr, "SKIP: %s\n", "corpus not found at " CORPUS);
        skip();
    }
    buf = malloc(BUF_BYTES);
    assert_non_null(buf);
    f = fopen(TV_FILE, "rb");
    assert_non_null(f);
    n = fread(buf, 1, BUF_BYTES, f);
    fclose(f);
    dir = nnpt_mkdtemp();
    snprintf(path, sizeof(path), "%s/trace_view.json", dir);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, n * 3 / 4, f), n * 3 / 4);
    fclose(f);
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    nnpt_log_capture();
    assert_int_equal(nnp__importer_torch_npu.import(dir, &m), NNP_OK);
    /* The cpu_op events lead the file, the process names and tasks follow. */
    assert_true(m.ops.t.n + m.kernels.t.n > 0);
    assert_true(m.ops.t.n + m.kernels.t.n < TV_OPS + TV_KERNELS);
    assert_non_null(strstr(nnpt_log_text(), "trace_view.json' is truncated"));
    nnpt_log_release();
    nnp__model_fini(&m);

    /* Not JSON at all: an error, a message, no crash. */
    f = fopen(path, "wb");
    assert_non_null(f);
    fputs("garbage", f);
    fclose(f);
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    nnpt_log_capture();
    assert_int_not_equal(nnp__importer_torch_npu.import(dir, &m), NNP_OK);
    assert_non_null(strstr(nnpt_log_text(), "trace_view.json"));
    nnpt_log_release();
    nnp__model_fini(&m);
    nnpt_rm_rf(dir);
    free(dir);
    free(buf);
}

/* msprof-analyze cluster outputs: 8 rank rows -> rank_size 8; the 2 broadcast ops of the
 * lowest rank of cluster_communication.json -> comms (start + Elapse Time). */
static void test_cluster_outputs(void **state)
{
    nnp_foreign_input_t in[2];
    nnp_model_t m;
    (void)state;
    if (!have(CLUSTER_DIR "/cluster_step_trace_time.csv")) {
        fprintf(stderr, "SKIP: %s\n", "corpus not found at " CLUSTER_DIR);
        skip();
    }
    /* Found from two levels above too (msprof-analyze/test/resource). */
    assert_int_equal(nnp__importer_torch_npu.find(CLUSTER_DIR "/../..", in, 2), 1);
    assert_non_null(strstr(in[0].path, "cluster_analysis_output"));
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__importer_torch_npu.import(CLUSTER_DIR, &m), NNP_OK);
    assert_int_equal(m.info.rank_size, CLUSTER_RANKS);
    assert_int_equal(m.info.rank_id, 0);
    assert_int_equal(m.comms.t.n, CLUSTER_RANK0_OPS);
    assert_string_equal(nnp__model_str(&m, m.comms.name[0]), "hcom_broadcast__501_0");
    assert_int_equal(m.comms.kind[0], NNP_COMM_BROADCAST);
    /* "Start Timestamp(us)": 1695054582608213.0, "Elapse Time(ms)": 121.73694384375. */
    assert_int_equal(m.comms.start_ns[0], 1695054582608213000LL);
    assert_int_equal(m.comms.end_ns[0] - m.comms.start_ns[0], 121736944);
    assert_int_equal(nnp__model_finish(&m), NNP_OK);
    nnp__model_fini(&m);
}

/* ---- a small torch_npu capture, every value worked out by hand ---- */

/* Steps (host): ProfilerStep#1 [1000,1100), #2 [1100,1200) µs. HostToDevice flows: 11
 * launched at 1002 -> MatMul (AI_CORE) 1010 + 10.0005; 12 at 1004 -> Add (AI_VECTOR_CORE)
 * 1060 + 5.0004; 13 at 1105 -> Cast (AI_CPU) 1120 + 10. Not compute: a NOTIFY_WAIT task
 * 1030 + 20 and an EVENT_RECORD. HCCL: an allreduce 1025 + 40 on the "Group 7 Communication"
 * thread (count 1024 x FP16) and a plane task with a notify_id. */
static const char npu_trace[] =
    "[{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":0,\"args\":{\"name\":\"Python\"}},"
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":2,\"tid\":0,\"args\":{\"name\":\"CANN\"}},"
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":800,\"tid\":0,"
    "\"args\":{\"name\":\"Ascend Hardware\"}},"
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":900,\"tid\":0,\"args\":{\"name\":\"HCCL\"}},"
    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":900,\"tid\":5,"
    "\"args\":{\"name\":\"Group 7 Communication\"}},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,"
    "\"ts\":\"1000.000\",\"dur\":100},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,"
    "\"ts\":\"1001.000\",\"dur\":5},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"ProfilerStep#2\",\"pid\":1,\"tid\":1,"
    "\"ts\":\"1100.000\",\"dur\":100},"
    "{\"ph\":\"s\",\"cat\":\"HostToDevice\",\"id\":\"11\",\"pid\":2,\"tid\":1,\"ts\":\"1002.000\"},"
    "{\"ph\":\"s\",\"cat\":\"HostToDevice\",\"id\":\"12\",\"pid\":2,\"tid\":1,\"ts\":\"1004.000\"},"
    "{\"ph\":\"s\",\"cat\":\"HostToDevice\",\"id\":\"13\",\"pid\":2,\"tid\":1,\"ts\":\"1105.000\"},"
    "{\"ph\":\"X\",\"name\":\"MatMul_1\",\"pid\":800,\"tid\":3,\"ts\":\"1010.000\",\"dur\":10.0005,"
    "\"args\":{\"Task Type\":\"AI_CORE\",\"Stream Id\":3}},"
    "{\"ph\":\"f\",\"cat\":\"HostToDevice\",\"id\":\"11\",\"pid\":800,\"tid\":3,\"ts\":\"1010."
    "000\","
    "\"bp\":\"e\"},"
    "{\"ph\":\"X\",\"name\":\"Notify_Wait\",\"pid\":800,\"tid\":3,\"ts\":\"1030.000\",\"dur\":20,"
    "\"args\":{\"Task Type\":\"NOTIFY_WAIT\",\"Stream Id\":3}},"
    "{\"ph\":\"X\",\"name\":\"Add_2\",\"pid\":800,\"tid\":3,\"ts\":\"1060.000\",\"dur\":5.0004,"
    "\"args\":{\"Task Type\":\"AI_VECTOR_CORE\",\"Stream Id\":3}},"
    "{\"ph\":\"f\",\"cat\":\"HostToDevice\",\"id\":\"12\",\"pid\":800,\"tid\":3,\"ts\":\"1060."
    "000\","
    "\"bp\":\"e\"},"
    "{\"ph\":\"X\",\"name\":\"EVENT_RECORD\",\"pid\":800,\"tid\":3,\"ts\":\"1070.000\",\"dur\":1,"
    "\"args\":{\"Task Type\":\"EVENT_RECORD\",\"Stream Id\":3}},"
    "{\"ph\":\"X\",\"name\":\"Cast_3\",\"pid\":800,\"tid\":3,\"ts\":\"1120.000\",\"dur\":10,"
    "\"args\":{\"Task Type\":\"AI_CPU\",\"Stream Id\":3}},"
    "{\"ph\":\"f\",\"cat\":\"HostToDevice\",\"id\":\"13\",\"pid\":800,\"tid\":3,\"ts\":\"1120."
    "000\","
    "\"bp\":\"e\"},"
    "{\"ph\":\"X\",\"name\":\"hcom_allReduce__1_0\",\"pid\":900,\"tid\":5,\"ts\":\"1025.000\","
    "\"dur\":40,\"args\":{\"count\":1024,\"data_type\":\"FP16\"}},"
    "{\"ph\":\"X\",\"name\":\"Memcpy\",\"pid\":900,\"tid\":6,\"ts\":\"1026.000\",\"dur\":3,"
    "\"args\":{\"notify_id\":5}}]";

/* kernel_details.csv of the same tasks: op types, durations rounded to the ns. */
static const char npu_kernel_details[] =
    "Step Id,Model ID,Task ID,Stream ID,Name,Type,Accelerator Core,Start Time(us),Duration(us)\n"
    "1,4294967295,1,3,MatMul_1,MatMulV2,AI_CORE,1010.000,10.001\n"
    "1,4294967295,N/A,N/A,hcom_allReduce__1_0,hcom_allReduce_,HCCL,1025.000,40.000\n"
    "1,4294967295,2,3,Add_2,Add,AI_VECTOR_CORE,1060.000,5.000\n"
    "2,4294967295,3,3,Cast_3,Cast,AI_CPU,1120.000,10.000\n";

/* Writes <root>/<name>_ascend_pt with ASCEND_PROFILER_OUTPUT/trace_view.json (and
 * kernel_details.csv when kd) and profiler_info_<rank>.json; returns the capture folder. */
static char *write_capture(const char *root, const char *name, int rank, bool kd)
{
    char cap[1024], out[1100], info[64];
    snprintf(cap, sizeof(cap), "%s/%s_ascend_pt", root, name);
    snprintf(out, sizeof(out), "%s/ASCEND_PROFILER_OUTPUT", cap);
    assert_int_equal(mkdir(cap, 0700), 0);
    assert_int_equal(mkdir(out, 0700), 0);
    free(nnpt_write_file(out, "trace_view.json", npu_trace));
    if (kd)
        free(nnpt_write_file(out, "kernel_details.csv", npu_kernel_details));
    snprintf(info, sizeof(info), "profiler_info_%d.json", rank);
    free(nnpt_write_file(cap, info, "{\"config\": {}}"));
    return strdup(cap);
}

/* Tasks by type, sub-ns ends, HCCL group and size, launches, rank from profiler_info. */
static void test_capture_import(void **state)
{
    char *root = nnpt_mkdtemp(), *cap = write_capture(root, "w1", 3, false);
    nnp_model_t m;
    (void)state;
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__importer_torch_npu.import(cap, &m), NNP_OK);
    assert_int_equal(nnp__model_finish(&m), NNP_OK);
    assert_int_equal(m.info.rank_id, 3);
    assert_int_equal(m.kernels.t.n, 3); /* NOTIFY_WAIT and EVENT_RECORD are not kernels */
    assert_string_equal(nnp__model_str(&m, m.kernels.type[1]), "AI_VECTOR_CORE");
    /* 1060 + 5.0004 µs: end 1065000 ns and 400 ps. */
    assert_int_equal(m.kernels.end_ns[1], 1065000);
    assert_non_null(m.kernels.end_ps);
    assert_int_equal(m.kernels.end_ps[1], 400);
    assert_int_equal(m.kernels.launch[1], 12);
    /* The HostToDevice flow starts are the calls: instants on (pid 2, tid 1), linked to
     * their tasks by the flow id; no API name or op link given. */
    nnpt_check_calls(&m,
                     (const nnpt_call_t[]){
                         {"HostToDevice", NNP_CALL_OTHER, 1002000, 1002000, 11, 0, 1, 0, 0},
                         {"HostToDevice", NNP_CALL_OTHER, 1004000, 1004000, 12, 0, 1, 0, 0},
                         {"HostToDevice", NNP_CALL_OTHER, 1105000, 1105000, 13, 0, 1, 0, 0},
                     },
                     3);
    assert_int_equal(m.comms.t.n, 1);
    assert_string_equal(nnp__model_str(&m, m.comms.group[0]), "7");
    assert_int_equal(m.comms.bytes[0], 1024 * 2);
    assert_int_equal(m.comms.kind[0], NNP_COMM_ALLREDUCE);
    nnp__model_fini(&m);
    free(cap);
    nnpt_rm_rf(root);
    free(root);
}

/* step_trace_time.csv over each step's device activity (torch_npu's rule). Step 1: tasks
 * launched in it (MatMul, Add; the allreduce joins the step begun before it): window
 * [1010, max(1065.0004, 1100)). Step 2: Cast, [1120, 1200). Computing [1010,1020.0005]
 * [1060,1065.0004] [1120,1130]; communication [1025,1065]; not overlapped [1025,1060] = 35;
 * free [1020.0005,1025] + [1065.0004,1120] = 4.9995 + 54.9996. Computing of step 1 =
 * 10.0005 + 5.0004 = 15.0009. The same with kernel_details.csv beside (times from the
 * trace, op types from the CSV). */
static void check_step_time(const char *out, int rank)
{
    char dir[1200], *t;
    snprintf(dir, sizeof(dir), "%s/rank_%d/ASCEND_PROFILER_OUTPUT", out, rank);
    t = nnpt_read_in(dir, "step_trace_time.csv");
    assert_string_equal(t, "Step,Computing,Communication(Not Overlapped),Overlapped,"
                           "Communication,Free\n"
                           "1,15.0009,35.000,5.000,40.000,59.9991\n"
                           "2,10.000,0.000,0.000,0.000,0.000\n");
    free(t);
}

static void test_capture_overlap(void **state)
{
    char *root = nnpt_mkdtemp(), *cap, out[1024], *t;
    (void)state;
    cap = write_capture(root, "w1", 3, false);
    snprintf(out, sizeof(out), "%s/out_tv", root);
    assert_int_equal(nnpt_analyse_to(cap, out), NNP_OK);
    check_step_time(out, 3);
    free(cap);
    nnpt_rm_rf(root);
    free(root);
    root = nnpt_mkdtemp();
    cap = write_capture(root, "w1", 3, true);
    snprintf(out, sizeof(out), "%s/out_full", root);
    assert_int_equal(nnpt_analyse_to(cap, out), NNP_OK);
    check_step_time(out, 3);
    /* The op types come from kernel_details.csv. */
    t = nnpt_read_in(out, "op_statistic_3.csv");
    assert_non_null(strstr(t, "\nMatMulV2,AI_CORE,1,10.000,"));
    assert_non_null(strstr(t, "\nCast,AI_CPU,1,10.000,"));
    free(t);
    free(cap);
    nnpt_rm_rf(root);
    free(root);
}

/* A parent folder of two captures is one two-rank run. */
static void test_parent_of_captures(void **state)
{
    char *root = nnpt_mkdtemp(), job[1024], out[1100];
    nnp_foreign_input_t in[4];
    (void)state;
    snprintf(job, sizeof(job), "%s/job", root);
    assert_int_equal(mkdir(job, 0700), 0);
    free(write_capture(job, "a", 0, false));
    free(write_capture(job, "b", 1, false));
    assert_int_equal(nnp__importer_torch_npu.find(job, in, 4), 2);
    assert_int_equal(in[0].rank, 0);
    assert_int_equal(in[1].rank, 1);
    snprintf(out, sizeof(out), "%s/out", root);
    assert_int_equal(nnpt_analyse_to(job, out), NNP_OK);
    check_step_time(out, 0);
    check_step_time(out, 1);
    nnpt_rm_rf(root);
    free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_view_counts),  cmocka_unit_test(test_kernel_details),
        cmocka_unit_test(test_truncated_json),     cmocka_unit_test(test_cluster_outputs),
        cmocka_unit_test(test_capture_import),     cmocka_unit_test(test_capture_overlap),
        cmocka_unit_test(test_parent_of_captures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
