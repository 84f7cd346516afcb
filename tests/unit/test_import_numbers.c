/* test_import_numbers.c - the importers of other tools' files on numbers no real capture
 * holds, as found by the fuzz targets (fuzz/fuzz_{cann,mindspore,torch_npu,kineto}.c): a JSON pid
 * of 1e300, a start time plus duration past int64 ns, ticks whose ns overflow, an elapse
 * time of 2^63 ns. Each was undefined behaviour (UBSan stops on it in the ASan+UBSan build)
 * or a span ending before its start; now the value is refused, the event or row skipped
 * with a warning, and the rest of the file imported exactly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/model.h"
#include "read/importers.h"
#include "test_util.h"
#include "util/util.h"

#define PATH_BUF 4096

/* A ts and a dur (us, as text) whose sum in ns is past INT64_MAX (9.22e18). */
#define HUGE_US "9000000000000000.000"

typedef struct fixture {
    char *root;
    nnp_model_t m;
} fixture_t;

static int setup(void **state)
{
    fixture_t *fx = calloc(1, sizeof(*fx));
    assert_non_null(fx);
    fx->root = nnpt_mkdtemp();
    assert_int_equal(nnp__model_init(&fx->m), NNP_OK);
    nnpt_log_capture();
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *fx = *state;
    nnpt_log_release();
    nnp__model_fini(&fx->m);
    nnpt_rm_rf(fx->root);
    free(fx->root);
    free(fx);
    return 0;
}

/* Writes text to root/rel (its directory made first); returns the directory's path. */
static void put(const fixture_t *fx, const char *rel, const char *text, char *dir_out)
{
    char path[PATH_BUF];
    char *slash;
    FILE *f;
    snprintf(path, sizeof(path), "%s/%s", fx->root, rel);
    slash = strrchr(path, '/');
    *slash = '\0';
    assert_int_equal(nnp__mkdir_p(path, 0700), NNP_OK);
    if (dir_out)
        snprintf(dir_out, PATH_BUF, "%s", path);
    *slash = '/';
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

static void assert_logged(const char *text)
{
    if (!strstr(nnpt_log_text(), text))
        fail_msg("no log line contains \"%s\"; log:\n%s", text, nnpt_log_text());
}

/* ---- torch_npu ---- */

/* trace_view.json: a process whose pid no int64 holds, one whose pid is past 32 bits, an
 * op with a tid past 64 bits, and an op whose end overflows. */
static void test_torch_npu_trace_numbers(void **state)
{
    fixture_t *fx = *state;
    char dir[PATH_BUF];
    nnp_model_t *m = &fx->m;
    put(fx, "tv/trace_view.json",
        "[{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1e300,\"args\":{\"name\":\"Python\"}},\n"
        "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":5000000000,\"args\":{\"name\":\"Python\"}}"
        ",\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"lost\",\"pid\":1e300,\"tid\":1,\"ts\":\"10\","
        "\"dur\":1},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"ProfilerStep#1\",\"pid\":5000000000,\"tid\":7,"
        "\"ts\":\"100.5\",\"dur\":50},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":5000000000,\"tid\":1e30,"
        "\"ts\":\"101.25\",\"dur\":2.5},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":5000000000,\"tid\":7,"
        "\"ts\":\"" HUGE_US "\",\"dur\":\"" HUGE_US "\"}]\n",
        dir);
    assert_int_equal(nnp__importer_torch_npu.import(dir, m), NNP_OK);
    assert_int_equal(m->steps.t.n, 1);
    assert_int_equal(m->steps.start_ns[0], 100500);
    assert_int_equal(m->steps.end_ns[0], 150500);
    assert_int_equal(m->ops.t.n, 1);
    assert_string_equal(nnp__model_str(m, m->ops.name[0]), "aten::mm");
    assert_int_equal(m->ops.start_ns[0], 101250);
    assert_int_equal(m->ops.end_ns[0], 103750);
    /* tid 1e30 is no OS thread id, pid 5e9 no 32-bit pid: both unknown (0). */
    assert_int_equal(m->threads.tid[m->ops.thread[0]], 0);
    assert_int_equal(m->threads.pid[m->ops.thread[0]], 0);
    assert_logged("bad 'ts' or 'dur'");
}

/* kernel_details.csv: a row whose end overflows is skipped, the next one kept. */
static void test_torch_npu_kernel_details_overflow(void **state)
{
    fixture_t *fx = *state;
    char dir[PATH_BUF];
    nnp_model_t *m = &fx->m;
    put(fx, "kd/kernel_details.csv",
        "Name,Type,Start Time(us),Duration(us)\n"
        "Huge,MatMul," HUGE_US "," HUGE_US "\n"
        "Add1,Add,1699529622790614.8,607.98\n",
        dir);
    assert_int_equal(nnp__importer_torch_npu.import(dir, m), NNP_OK);
    assert_int_equal(m->kernels.t.n, 1);
    assert_string_equal(nnp__model_str(m, m->kernels.name[0]), "Add1");
    assert_int_equal(m->kernels.start_ns[0], 1699529622790614800LL);
    assert_int_equal(m->kernels.end_ns[0], 1699529622790614800LL + 607980);
    assert_logged("line 2: missing or non-numeric");
}

/* communication.json: an elapse of 9223372036854.775807 ms is 2^63 ns once rounded (the
 * old bound let it through to an undefined conversion); a start plus elapse past int64. */
static void test_torch_npu_communication_elapse(void **state)
{
    fixture_t *fx = *state;
    char dir[PATH_BUF];
    nnp_model_t *m = &fx->m;
    put(fx, "comm/communication.json",
        "{\"step1\":{\"collective\":{"
        "\"hcom_allReduce_1@g\":{\"Communication Time Info\":{\"Start Timestamp(us)\":10,"
        "\"Elapse Time(ms)\":9223372036854.775807}},"
        "\"hcom_allReduce_2@g\":{\"Communication Time Info\":{\"Start Timestamp(us)\":\"" HUGE_US
        "\",\"Elapse Time(ms)\":9000000000000}},"
        "\"hcom_broadcast_3@g\":{\"Communication Time Info\":{\"Start Timestamp(us)\":20,"
        "\"Elapse Time(ms)\":0.5}}}}}\n",
        dir);
    assert_int_equal(nnp__importer_torch_npu.import(dir, m), NNP_OK);
    assert_int_equal(m->comms.t.n, 1);
    assert_string_equal(nnp__model_str(m, m->comms.name[0]), "hcom_broadcast_3");
    assert_int_equal(m->comms.start_ns[0], 20000);
    assert_int_equal(m->comms.end_ns[0], 520000);
    assert_logged("missing or out of range");
}

/* step_trace_time.csv: Computing totals whose sum passes int64 ns are only summed for a
 * log line; that sum must not overflow (it is a double now). */
static void test_torch_npu_step_trace_time_sum(void **state)
{
    fixture_t *fx = *state;
    char dir[PATH_BUF];
    put(fx, "stt/step_trace_time.csv",
        "Step,Computing\n1," HUGE_US "\n2," HUGE_US "\n3," HUGE_US "\n", dir);
    assert_int_equal(nnp__importer_torch_npu.import(dir, &fx->m), NNP_OK);
    assert_logged("3 step rows (0 bad), Computing 27000000000000000.000 us in all");
}

/* ---- MindSpore ---- */

/* step_trace_raw: ticks whose ns (x10) overflow int64 skip the row (or the comm op), the
 * other rows are kept exactly. */
static void test_mindspore_step_ticks_overflow(void **state)
{
    fixture_t *fx = *state;
    char dir[PATH_BUF];
    nnp_model_t *m = &fx->m;
    put(fx, "ms/step_trace_raw_0_detail_time.csv",
        "step_num,start_point,end_point,total,fp_point,bp_point,stream_5_AllReduce_start_point,"
        "stream_5_AllReduce_end_point,stream_5_AllReduce\n"
        "1,100,200,100,110,190,150,922337203685477581,5\n"
        "2,922337203685477581,922337203685477582,1,0,0,0,0,0\n"
        "3,300,400,100,310,390,350,360,10\n",
        dir);
    assert_int_equal(nnp__importer_mindspore.import(dir, m), NNP_OK);
    assert_int_equal(m->steps.t.n, 2);
    assert_int_equal(m->steps.id[0], 1);
    assert_int_equal(m->steps.start_ns[0], 1000);
    assert_int_equal(m->steps.end_ns[0], 2000);
    assert_int_equal(m->steps.id[1], 3);
    assert_int_equal(m->steps.start_ns[1], 3000);
    /* Step 1's AllReduce ends past int64 ns: dropped; step 3's kept. */
    assert_int_equal(m->comms.t.n, 1);
    assert_int_equal(m->comms.start_ns[0], 3500);
    assert_int_equal(m->comms.end_ns[0], 3600);
    assert_logged("a time of step 2 is too large for ns");
}

/* output_timeline_data: a start plus duration past int64 ns skips the row. */
static void test_mindspore_timeline_overflow(void **state)
{
    fixture_t *fx = *state;
    char dir[PATH_BUF];
    nnp_model_t *m = &fx->m;
    put(fx, "tl/output_timeline_data_0.txt",
        "op_name, stream_id, start_time(ms), duration(ms)\n"
        "Default/Huge-op1,5,9000000000000.5,9000000000000\n"
        "Default/Add-op2,5,154907895.95956,0.0031\n",
        dir);
    assert_int_equal(nnp__importer_mindspore.import(dir, m), NNP_OK);
    assert_int_equal(m->kernels.t.n, 1);
    assert_string_equal(nnp__model_str(m, m->kernels.name[0]), "Default/Add-op2");
    assert_int_equal(m->kernels.start_ns[0], 154907895959560LL);
    assert_int_equal(m->kernels.end_ns[0], 154907895959560LL + 3100);
    assert_logged("line 2: start '9000000000000.5'");
}

/* ---- CANN ---- */

/* A task whose end overflows is a bad event; a start_info whose offset overflows is
 * refused (no offset) instead of wrapping. */
static void test_cann_overflow(void **state)
{
    fixture_t *fx = *state;
    char dir[PATH_BUF];
    nnp_model_t *m = &fx->m;
    put(fx, "PROF_1/device_0/timeline/msprof_0_1_1.json",
        "[{\"name\":\"process_name\",\"pid\":3,\"args\":{\"name\":\"Ascend "
        "Hardware\"},\"ph\":\"M\"},"
        "{\"name\":\"Huge\",\"pid\":3,\"tid\":2,\"ts\":\"" HUGE_US "\",\"dur\":\"" HUGE_US "\","
        "\"args\":{\"Task Type\":\"AI_CORE\",\"Stream Id\":2},\"ph\":\"X\"},"
        "{\"name\":\"Cast\",\"pid\":3,\"tid\":2,\"ts\":\"1.5\",\"dur\":\"2.25\","
        "\"args\":{\"Task Type\":\"AI_CORE\",\"Stream Id\":2},\"ph\":\"X\"}]\n",
        NULL);
    put(fx, "PROF_1/device_0/start_info.0",
        "{\"collectionTimeBegin\":\"9223372036854775807\","
        "\"clockMonotonicRaw\":\"-9223372036854775808\"}\n",
        dir);
    assert_int_equal(nnp__importer_cann.import(dir, m), NNP_OK);
    assert_int_equal(m->kernels.t.n, 1);
    assert_string_equal(nnp__model_str(m, m->kernels.name[0]), "Cast");
    assert_int_equal(m->kernels.start_ns[0], 1500);
    assert_int_equal(m->kernels.end_ns[0], 3750);
    assert_int_equal(m->info.diff_time_us, 0);
    assert_logged("event #1 ('Huge'): key 'dur' missing, negative, too large");
    assert_logged("collectionTimeBegin or clockMonotonicRaw missing or out of range");
}

/* ---- PyTorch profiler (Kineto) ---- */

/* An op whose end passes int64 ns is a bad event; the next one is kept exactly. */
static void test_kineto_end_overflow(void **state)
{
    fixture_t *fx = *state;
    char path[PATH_BUF];
    nnp_model_t *m = &fx->m;
    put(fx, "kin/w.pt.trace.json",
        "[{\"name\": \"aten::huge\", \"ph\": \"X\", \"ts\": \"" HUGE_US "\", \"dur\": \"" HUGE_US
        "\", \"tid\": 1, \"pid\": \"CPU functions\", \"args\": {}},\n"
        "{\"name\": \"aten::add\", \"ph\": \"X\", \"ts\": 110.5, \"dur\": 3, \"tid\": 1, "
        "\"pid\": \"CPU functions\", \"args\": {}}]\n",
        NULL);
    snprintf(path, sizeof(path), "%s/kin/w.pt.trace.json", fx->root);
    assert_int_equal(nnp__importer_kineto.import(path, m), NNP_OK);
    assert_int_equal(m->ops.t.n, 1);
    assert_string_equal(nnp__model_str(m, m->ops.name[0]), "aten::add");
    assert_int_equal(m->ops.start_ns[0], 110500);
    assert_int_equal(m->ops.end_ns[0], 113500);
    assert_logged("key 'dur' missing, negative, too large");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_torch_npu_trace_numbers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torch_npu_kernel_details_overflow, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torch_npu_communication_elapse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torch_npu_step_trace_time_sum, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mindspore_step_ticks_overflow, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mindspore_timeline_overflow, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cann_overflow, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kineto_end_overflow, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
