/* test_import_torch_npu.c - the torch_npu importer (src/read/import_torch_npu.c) on the
 * corpus trace_view.json and kernel_details.csv (counts from MANIFEST section 2), exact ns
 * parsing of string timestamps, and a truncated trace (partial import plus a message). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_view_counts),
        cmocka_unit_test(test_kernel_details),
        cmocka_unit_test(test_truncated_json),
        cmocka_unit_test(test_cluster_outputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
