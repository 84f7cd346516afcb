/* test_import_kineto.c - the PyTorch profiler importer (src/read/import_kineto.c) and HTA's
 * analyses (src/analyse/hta*.c) on small Kineto traces written here, every expected value
 * worked out by hand in the comments; gzip input and a gzip file cut mid-stream; the legacy
 * profiler's format; and a real torch.profiler trace from Debian's python3-torch (skipped
 * when torch is absent), whose event counts must equal torch's own key_averages(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "analyse/analyse.h"
#include "hta_expect.h"
#include "model/model.h"
#include "read/importers.h"
#include "test_util.h"

#define TRACE_CAP (16 * 1024)

/* One rank's trace (µs): the run of hta_expect.h, a [memory] instant at 1011 (512 B at
 * 4096 on device 0) and an ac2g flow start for launch 1. */
/* The trace's "baseTimeNanoseconds" (Kineto >= PyTorch 2.1): every ts counts from it, and
 * the model's times are base + ts. It follows the events, as Kineto writes it. */
#define TRACE_BASE_NS 1700000000000000000LL

static void make_trace(char *buf, size_t cap, int rank, const char *nccl_ts, const char *nccl_dur)
{
    snprintf(
        buf, cap,
        "{\"schemaVersion\": 1,\n"
        " \"deviceProperties\": [{\"id\": 0, \"name\": \"Test GPU\", \"totalGlobalMem\": 1000}],\n"
        " \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, \"world_size\": 3},\n"
        " \"traceEvents\": [\n"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":9,\"tid\":9,"
        "\"ts\":1000,\"dur\":100},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":9,\"tid\":9,\"ts\":1009,"
        "\"dur\":20,\"args\":{\"External id\":1,\"Input Dims\":[[2,3],[3,4]]}},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":9,\"tid\":9,"
        "\"ts\":1010.2,\"dur\":4.5,\"args\":{\"External id\":1,\"correlation\":1}},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":9,\"tid\":9,"
        "\"ts\":1015,\"dur\":3,\"args\":{\"correlation\":2}},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaMemcpyAsync\",\"pid\":9,\"tid\":9,"
        "\"ts\":1030,\"dur\":2,\"args\":{\"correlation\":3}},\n"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#2\",\"pid\":9,\"tid\":9,"
        "\"ts\":1100,\"dur\":100},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":9,\"tid\":9,"
        "\"ts\":1105,\"dur\":5,\"args\":{\"correlation\":4}},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":9,\"tid\":9,"
        "\"ts\":1120,\"dur\":60,\"args\":{\"correlation\":5}},\n"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#3\",\"pid\":9,\"tid\":9,"
        "\"ts\":1200,\"dur\":100},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":9,\"tid\":9,"
        "\"ts\":1210,\"dur\":4,\"args\":{\"correlation\":6}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm_a\",\"pid\":0,\"tid\":7,\"ts\":1020.5,"
        "\"dur\":30.25,\"args\":{\"External id\":1,\"stream\":7,\"device\":0,\"correlation\":1}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclKernel_AllReduce_RING_LL_Sum_float\","
        "\"pid\":0,\"tid\":20,\"ts\":%s,\"dur\":%s,\"args\":{\"stream\":20,\"device\":0,"
        "\"correlation\":2,\"Collective name\":\"allreduce\",\"In msg nelems\":1024,"
        "\"dtype\":\"Float\",\"Process Group Name\":\"0\"}},\n"
        "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pageable -> Device)\","
        "\"pid\":0,\"tid\":7,\"ts\":1060,\"dur\":10,\"args\":{\"stream\":7,\"correlation\":3}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm_a\",\"pid\":0,\"tid\":7,\"ts\":1111.4,"
        "\"dur\":0.3,\"args\":{\"stream\":7,\"correlation\":4}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"relu\",\"pid\":0,\"tid\":7,\"ts\":1190,"
        "\"dur\":5,\"args\":{\"stream\":7,\"correlation\":5}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm_a\",\"pid\":0,\"tid\":7,\"ts\":1220,"
        "\"dur\":10,\"args\":{\"stream\":7,\"correlation\":6}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"orphan\",\"pid\":0,\"tid\":7,\"ts\":1300,"
        "\"dur\":5,\"args\":{\"stream\":7,\"correlation\":99}},\n"
        "{\"ph\":\"s\",\"id\":1,\"pid\":9,\"tid\":9,\"ts\":1010.2,\"cat\":\"ac2g\",\"name\":"
        "\"ac2g\"},\n"
        "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":9,\"tid\":9,"
        "\"ts\":1011,\"args\":{\"Addr\":4096,\"Bytes\":512,\"Device Id\":0}},\n"
        "{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":9,\"tid\":0,\"args\":"
        "{\"name\":\"python\"}}\n"
        "],\n \"traceName\": \"t\", \"baseTimeNanoseconds\": %lld}\n",
        rank, nccl_ts, nccl_dur, (long long)TRACE_BASE_NS);
}

static void test_import_counts(void **state)
{
    const int64_t B = TRACE_BASE_NS;
    char *dir = nnpt_mkdtemp(), trace[TRACE_CAP], *path;
    nnp_foreign_input_t in[4];
    nnp_model_t m;
    (void)state;
    make_trace(trace, sizeof(trace), 2, "1040", "40");
    path = nnpt_write_file(dir, "host_1.pt.trace.json", trace);
    assert_int_equal(nnp__importer_kineto.find(dir, in, 4), 1);
    assert_int_equal(in[0].rank, 2); /* distributedInfo, read from the file's head */
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__importer_kineto.import(path, &m), NNP_OK);
    assert_int_equal(nnp__model_finish(&m), NNP_OK);
    assert_int_equal(m.info.rank_id, 2);
    assert_int_equal(m.info.rank_size, 3);
    assert_string_equal(m.info.device_name, "Test GPU");
    assert_int_equal(m.info.device_memory_bytes, 1000);
    assert_int_equal(m.steps.t.n, 3);
    assert_int_equal(m.ops.t.n, 1);
    /* The six launches: their kernels by correlation (calls.launch), launch 1 its op by
     * External id (calls.corr); every time is the trace's base + its ts. */
    nnpt_check_calls(
        &m,
        (const nnpt_call_t[]){
            {"cudaLaunchKernel", NNP_CALL_CUDA_RUNTIME, B + 1010200, B + 1014700, 1, 1, 9, 0, 0},
            {"cudaLaunchKernel", NNP_CALL_CUDA_RUNTIME, B + 1015000, B + 1018000, 2, 0, 9, 0, 0},
            {"cudaMemcpyAsync", NNP_CALL_CUDA_RUNTIME, B + 1030000, B + 1032000, 3, 0, 9, 0, 0},
            {"cudaLaunchKernel", NNP_CALL_CUDA_RUNTIME, B + 1105000, B + 1110000, 4, 0, 9, 0, 0},
            {"cudaLaunchKernel", NNP_CALL_CUDA_RUNTIME, B + 1120000, B + 1180000, 5, 0, 9, 0, 0},
            {"cudaLaunchKernel", NNP_CALL_CUDA_RUNTIME, B + 1210000, B + 1214000, 6, 0, 9, 0, 0},
        },
        6);
    assert_int_equal(m.kernels.t.n, 7); /* 6 kernels/copies + the orphan */
    assert_int_equal(m.comms.t.n, 1);
    assert_int_equal(m.mem.t.n, 1);
    /* gemm_a: exact ns from the µs decimals; its op link and launch link. */
    assert_int_equal(m.kernels.start_ns[0], B + 1020500);
    assert_int_equal(m.kernels.end_ns[0], B + 1050750);
    assert_int_equal(m.steps.start_ns[0], B + 1000000);
    assert_int_equal(m.steps.end_ns[2], B + 1300000);
    assert_int_equal(m.ops.start_ns[0], B + 1009000);
    assert_int_equal(m.ops.end_ns[0], B + 1029000);
    assert_int_equal(m.mem.ts_ns[0], B + 1011000);
    assert_int_equal(m.comms.start_ns[0], B + 1040000);
    assert_int_equal(m.comms.end_ns[0], B + 1080000);
    assert_string_equal(nnp__model_str(&m, m.kernels.type[0]), "KERNEL");
    assert_int_equal(m.kernels.corr[0], 1);
    assert_int_equal(m.kernels.launch[0], 1);
    assert_int_equal(m.kernels.stream_id[0], 7);
    assert_int_equal(m.ops.corr[0], 1);
    assert_string_equal(nnp__model_str(&m, m.ops.shapes[0]), "[[2,3],[3,4]]");
    /* The NCCL kernel's communication op: allreduce, 1024 floats = 4096 bytes, group "0". */
    assert_int_equal(m.comms.kind[0], NNP_COMM_ALLREDUCE);
    assert_int_equal(m.comms.bytes[0], 4096);
    assert_string_equal(nnp__model_str(&m, m.comms.group[0]), "0");
    assert_string_equal(nnp__model_str(&m, m.kernels.type[2]), "MEMCPY");
    nnp__model_fini(&m);
    free(path);
    nnpt_rm_rf(dir);
    free(dir);
}

/* Imports the Kineto trace text into m (initialised and finished here); the caller
 * finishes with nnp__model_fini. */
static void import_text(const char *trace, nnp_model_t *m)
{
    char *dir = nnpt_mkdtemp(), *path = nnpt_write_file(dir, "w.pt.trace.json", trace);
    assert_int_equal(nnp__model_init(m), NNP_OK);
    assert_int_equal(nnp__importer_kineto.import(path, m), NNP_OK);
    assert_int_equal(nnp__model_finish(m), NNP_OK);
    free(path);
    nnpt_rm_rf(dir);
    free(dir);
}

/* A cuda_driver call is a call of the driver kind; a runtime call without a correlation
 * (cudaDeviceSynchronize in some versions) launches nothing and is not modelled. */
static void test_import_driver_call(void **state)
{
    static const char trace[] =
        "{\"traceEvents\": [\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_driver\",\"name\":\"cuLaunchKernel\",\"pid\":5,\"tid\":6,"
        "\"ts\":100,\"dur\":2.5,\"args\":{\"External id\":3,\"correlation\":7}},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaDeviceSynchronize\",\"pid\":5,"
        "\"tid\":6,\"ts\":110,\"dur\":40,\"args\":{}}\n"
        "]}\n";
    nnp_model_t m;
    (void)state;
    import_text(trace, &m);
    nnpt_check_calls(&m,
                     (const nnpt_call_t[]){
                         {"cuLaunchKernel", NNP_CALL_CUDA_DRIVER, 100000, 102500, 7, 3, 6, 0, 0}},
                     1);
    /* An imported trace's calls are not a CUDA back-end run: no MindSpore GPU files. */
    assert_false(nnp__gpu_present(&m));
    nnp__model_fini(&m);
}

/* Autograd's links: "Sequence number" >= 0 links an op to its node; "Fwd thread id" > 0
 * makes it a backward op (the node, run for the forward op of that thread); -1 and an
 * absent number link nothing. */
static void test_import_autograd_links(void **state)
{
    static const char trace[] =
        "{\"traceEvents\": [\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":5,\"tid\":5,"
        "\"ts\":100,\"dur\":10,\"args\":{\"Sequence number\":41,\"Fwd thread id\":0}},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"MmBackward0\",\"pid\":5,\"tid\":6,"
        "\"ts\":200,\"dur\":10,\"args\":{\"Sequence number\":41,\"Fwd thread id\":1}},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add_\",\"pid\":5,\"tid\":5,"
        "\"ts\":300,\"dur\":10,\"args\":{\"Sequence number\":-1,\"Fwd thread id\":0}},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::zero_\",\"pid\":5,\"tid\":5,"
        "\"ts\":400,\"dur\":10,\"args\":{}}\n"
        "]}\n";
    static const uint8_t kind[] = {NNP_SEQ_FORWARD, NNP_SEQ_BACKWARD, NNP_SEQ_NONE, NNP_SEQ_NONE};
    static const int64_t nr[] = {41, 41, 0, 0};
    static const uint32_t fwd_thread[] = {0, 1, 0, 0};
    nnp_model_t m;
    (void)state;
    import_text(trace, &m);
    assert_int_equal(m.ops.t.n, 4);
    assert_non_null(m.ops.seq_kind);
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(m.ops.seq_kind[i], kind[i]);
        assert_int_equal(m.ops.seq_nr[i], nr[i]);
        assert_int_equal(m.ops.seq_thread[i], fwd_thread[i]);
    }
    nnp__model_fini(&m);
}

/* A forward op's event has its OS thread and "Fwd thread id" 0; a fwdbwd flow from it to
 * its backward op (whose "Fwd thread id" is 1) makes 1 the thread of every forward op of
 * that OS thread (tid 5: aten::mm and aten::add), not of another thread's (tid 8);
 * AccumulateGrad, which a trace writes with no link, is a backward op with none. */
static void test_import_fwdbwd_threads(void **state)
{
    static const char trace[] =
        "{\"traceEvents\": [\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":5,\"tid\":5,"
        "\"ts\":100,\"dur\":10,\"args\":{\"Sequence number\":41,\"Fwd thread id\":0}},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":5,\"tid\":5,"
        "\"ts\":120,\"dur\":10,\"args\":{\"Sequence number\":42,\"Fwd thread id\":0}},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mul\",\"pid\":5,\"tid\":8,"
        "\"ts\":130,\"dur\":10,\"args\":{\"Sequence number\":3,\"Fwd thread id\":0}},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"MmBackward0\",\"pid\":5,\"tid\":6,"
        "\"ts\":200,\"dur\":10,\"args\":{\"Sequence number\":41,\"Fwd thread id\":1}},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"torch::autograd::AccumulateGrad\","
        "\"pid\":5,\"tid\":6,\"ts\":220,\"dur\":10},\n"
        "{\"ph\":\"s\",\"id\":1,\"pid\":5,\"tid\":5,\"ts\":100,\"cat\":\"fwdbwd\","
        "\"name\":\"fwdbwd\"},\n"
        "{\"ph\":\"f\",\"id\":1,\"pid\":5,\"tid\":6,\"ts\":200,\"cat\":\"fwdbwd\","
        "\"name\":\"fwdbwd\",\"bp\":\"e\"}\n"
        "]}\n";
    static const uint8_t kind[] = {NNP_SEQ_FORWARD, NNP_SEQ_FORWARD, NNP_SEQ_FORWARD,
                                   NNP_SEQ_BACKWARD, NNP_SEQ_BACKWARD};
    static const int64_t nr[] = {41, 42, 3, 41, -1};
    static const uint32_t fwd_thread[] = {1, 1, 0, 1, 0};
    nnp_model_t m;
    (void)state;
    import_text(trace, &m);
    assert_int_equal(m.ops.t.n, 5);
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(m.ops.seq_kind[i], kind[i]);
        assert_int_equal(m.ops.seq_nr[i], nr[i]);
        assert_int_equal(m.ops.seq_thread[i], fwd_thread[i]);
    }
    nnp__model_fini(&m);
}

/* "Call stack" (with_stack: frames innermost first, each followed by ';') becomes the op's
 * stack, '\n' between frames; an op without one has none. */
static void test_import_call_stack(void **state)
{
    static const char trace[] =
        "{\"traceEvents\": [\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":5,\"tid\":5,"
        "\"ts\":100,\"dur\":10,\"args\":{\"Call stack\":\"model.py(12): forward;train.py(30): "
        "step;\"}},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add_\",\"pid\":5,\"tid\":5,"
        "\"ts\":300,\"dur\":10,\"args\":{\"Call stack\":\"train.py(31): step\"}},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::zero_\",\"pid\":5,\"tid\":5,"
        "\"ts\":400,\"dur\":10,\"args\":{}}\n"
        "]}\n";
    nnp_model_t m;
    (void)state;
    import_text(trace, &m);
    assert_int_equal(m.ops.t.n, 3);
    assert_non_null(m.ops.stack);
    assert_string_equal(nnp__model_str(&m, m.ops.stack[0]),
                        "model.py(12): forward\ntrain.py(30): step");
    assert_string_equal(nnp__model_str(&m, m.ops.stack[1]), "train.py(31): step");
    assert_int_equal(m.ops.stack[2], 0);
    nnp__model_fini(&m);
}

/* python_function events (PyTorch >= 1.13 with with_stack): an op's stack is the names of
 * the Python events around it on its thread, innermost first, whatever their order in the
 * file. Thread 5, times in us:
 *   <module> [0, 1000]
 *     step [50, 800]
 *       nn.Module: Linear_0 [80, 300]
 *         aten::linear [100, 200]  -> Linear_0, step, <module>
 *           aten::addmm [110, 190] -> the same (ops do not change the Python stack)
 *       aten::add_ [400, 450]      -> step, <module>
 *       <built-in method relu> [500, 600]
 *         aten::relu [510, 590]    -> relu, step, <module>
 *       aten::t [600, 650]         -> step, <module> (relu's call ended at 600)
 *     aten::zero_ [900, 950]       -> <module>
 *   thread 6: aten::mul [100, 200] -> none (no Python event on its thread)
 *   aten::mm [300, 310] with "Call stack" inside Linear_0's end: its own stack kept */
static void test_import_python_functions(void **state)
{
#define PY(name, ts, dur)                                                                          \
    "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"" name "\",\"pid\":5,\"tid\":5,"         \
    "\"ts\":" #ts ",\"dur\":" #dur ",\"args\":{\"Python id\":1}}"
#define OP(name, tid, ts, dur)                                                                     \
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" name "\",\"pid\":5,\"tid\":" #tid               \
    ",\"ts\":" #ts ",\"dur\":" #dur "}"
    /* The ops first, the Python events after them (Kineto writes them in no set order). */
    static const char *const events[] = {
        OP("aten::linear", 5, 100, 100),
        OP("aten::addmm", 5, 110, 80),
        OP("aten::add_", 5, 400, 50),
        OP("aten::relu", 5, 510, 80),
        OP("aten::t", 5, 600, 50),
        OP("aten::zero_", 5, 900, 50),
        OP("aten::mul", 6, 100, 100),
        PY("train.py(20): <module>", 0, 1000),
        PY("train.py(10): step", 50, 750),
        PY("nn.Module: Linear_0", 80, 220),
        PY("<built-in method relu of type object at 0x7f>", 500, 100),
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":5,\"tid\":5,\"ts\":290,"
        "\"dur\":5,\"args\":{\"Call stack\":\"x.py(1): f;\"}}",
    };
#undef PY
#undef OP
    char trace[TRACE_CAP];
    size_t len = (size_t)snprintf(trace, sizeof(trace), "{\"traceEvents\": [\n");
    for (size_t k = 0; k < NNP_ARRAY_LEN(events); k++)
        len += (size_t)snprintf(trace + len, sizeof(trace) - len, "%s%s\n", events[k],
                                k + 1 < NNP_ARRAY_LEN(events) ? "," : "");
    snprintf(trace + len, sizeof(trace) - len, "]}\n");
    static const char *const want[][2] = {
        {"aten::linear", "nn.Module: Linear_0\ntrain.py(10): step\ntrain.py(20): <module>"},
        {"aten::addmm", "nn.Module: Linear_0\ntrain.py(10): step\ntrain.py(20): <module>"},
        {"aten::add_", "train.py(10): step\ntrain.py(20): <module>"},
        {"aten::relu", "<built-in method relu of type object at 0x7f>\ntrain.py(10): "
                       "step\ntrain.py(20): <module>"},
        {"aten::t", "train.py(10): step\ntrain.py(20): <module>"},
        {"aten::zero_", "train.py(20): <module>"},
        {"aten::mul", ""},
        {"aten::mm", "x.py(1): f"},
    };
    nnp_model_t m;
    char *dir, out[1024], *csv;
    (void)state;
    import_text(trace, &m);
    assert_int_equal(m.ops.t.n, NNP_ARRAY_LEN(want));
    assert_non_null(m.ops.stack);
    for (size_t k = 0; k < NNP_ARRAY_LEN(want); k++) {
        size_t i = 0;
        while (i < m.ops.t.n && strcmp(nnp__model_str(&m, m.ops.name[i]), want[k][0]) != 0)
            i++;
        assert_true(i < m.ops.t.n);
        assert_string_equal(nnp__model_str(&m, m.ops.stack[i]), want[k][1]);
    }
    nnp__model_fini(&m);
    /* `nnprof analyse` of the trace: op_stacks_0.csv has them (';' between frames); relu
     * holds no op, so its self time is its 80 us. */
    dir = nnpt_mkdtemp();
    free(nnpt_write_file(dir, "w.pt.trace.json", trace));
    snprintf(out, sizeof(out), "%s/out", dir);
    assert_int_equal(nnpt_analyse_to(dir, out), NNP_OK);
    csv = nnpt_read_in(out, "op_stacks_0.csv");
    if (!strstr(csv, "\naten::relu,<built-in method relu of type object at 0x7f>;train.py(10): "
                     "step;train.py(20): <module>,1,80.000,80.000,80.000,80.000,80.000,") ||
        !strstr(csv, "\naten::mul,,1,100.000,100.000,"))
        fail_msg("op_stacks_0.csv:\n%s", csv);
    free(csv);
    nnpt_rm_rf(dir);
    free(dir);
}

/* Writes the three ranks (NCCL kernel of rank 0 at 1040+40, rank 1 1050+30, rank 2
 * 1045+35) into dir, plain or gzip-compressed. */
static void write_ranks(const char *dir, bool gz)
{
    static const char *const ts[] = {"1040", "1050", "1045"}, *const dur[] = {"40", "30", "35"};
    char trace[TRACE_CAP], name[64], path[4200];
    for (int r = 0; r < 3; r++) {
        make_trace(trace, sizeof(trace), r, ts[r], dur[r]);
        snprintf(name, sizeof(name), "rank%d.pt.trace.json%s", r, gz ? ".gz" : "");
        if (gz) {
            gzFile z;
            snprintf(path, sizeof(path), "%s/%s", dir, name);
            z = gzopen(path, "wb");
            assert_non_null(z);
            assert_int_equal(gzputs(z, trace), (int)strlen(trace));
            assert_int_equal(gzclose(z), Z_OK);
        } else {
            free(nnpt_write_file(dir, name, trace));
        }
    }
}

/* Our own analyses on the same data: rank 0's step_trace_time.csv measures each step over
 * its device activity. Windows: step 1 [1020.5, max(1080, 1100)), step 2 [1111.4, 1200),
 * step 3 [1220, 1305) (the launch-less orphan joins the latest step begun before it).
 * Computing [1020.5,1050.75] [1111.4,1111.7] [1190,1195] [1220,1230] [1300,1305];
 * communication [1040,1080]; not overlapped [1050.75,1080]; free [1080,1111.4]
 * [1111.7,1190] [1195,1220] [1230,1300]; each counted whole in the step holding its start. */
static void check_ours(const char *out)
{
    char dir[4200], *t;
    snprintf(dir, sizeof(dir), "%s/rank_0/ASCEND_PROFILER_OUTPUT", out);
    t = nnpt_read_in(dir, "step_trace_time.csv");
    assert_string_equal(t, "Step,Computing,Communication(Not Overlapped),Overlapped,"
                           "Communication,Free\n"
                           "1,30.250,29.250,10.750,40.000,31.400\n"
                           "2,5.300,0.000,0.000,0.000,103.300\n"
                           "3,15.000,0.000,0.000,0.000,70.000\n");
    free(t);
    /* gemm_a's kernels take the type of the op that launched them (External id 1). */
    t = nnpt_read_in(out, "op_statistic_0.csv");
    if (!strstr(t, "aten::mm,KERNEL,1,30.250,30.250,30.250,30.250,"))
        fail_msg("%s", t);
    free(t);
}

static void test_hta_three_ranks(void **state)
{
    char *dir = nnpt_mkdtemp(), out[1024];
    (void)state;
    write_ranks(dir, false);
    snprintf(out, sizeof(out), "%s/out", dir);
    assert_int_equal(nnpt_analyse_to(dir, out), NNP_OK);
    nnpt_check_hta_three_ranks(out);
    check_ours(out);
    nnpt_rm_rf(dir);
    free(dir);
}

/* The same traces gzip-compressed: the same results. */
static void test_gzip_same_results(void **state)
{
    char *dir = nnpt_mkdtemp(), out[1024];
    (void)state;
    write_ranks(dir, true);
    snprintf(out, sizeof(out), "%s/out", dir);
    assert_int_equal(nnpt_analyse_to(dir, out), NNP_OK);
    nnpt_check_hta_three_ranks(out);
    check_ours(out);
    nnpt_rm_rf(dir);
    free(dir);
}

/* A .gz cut in the middle of its stream: the events before the cut, and a message naming
 * the file and zlib's reason. */
static void test_cut_gzip(void **state)
{
    char *dir = nnpt_mkdtemp(), trace[TRACE_CAP], path[4200], *big;
    size_t len = 0;
    nnp_model_t m;
    gzFile z;
    struct stat st;
    (void)state;
    /* A long trace, so that the cut falls among the events. */
    big = malloc(1 << 20);
    assert_non_null(big);
    len = (size_t)snprintf(big, 1 << 20, "{\"traceEvents\": [");
    for (int i = 0; i < 4000; i++)
        len += (size_t)snprintf(big + len, (1 << 20) - len,
                                "%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::op%d\","
                                "\"pid\":1,\"tid\":1,\"ts\":%d.%03d,\"dur\":1}",
                                i ? "," : "", i % 97, 1000 + i, (i * 7) % 1000);
    snprintf(big + len, (1 << 20) - len, "]}");
    snprintf(path, sizeof(path), "%s/cut.pt.trace.json.gz", dir);
    z = gzopen(path, "wb");
    assert_non_null(z);
    assert_int_equal(gzputs(z, big), (int)strlen(big));
    assert_int_equal(gzclose(z), Z_OK);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(truncate(path, st.st_size / 2), 0);
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    nnpt_log_capture();
    assert_int_equal(nnp__importer_kineto.import(path, &m), NNP_OK);
    assert_true(m.ops.t.n > 0 && m.ops.t.n < 4000);
    assert_non_null(strstr(nnpt_log_text(), "cut.pt.trace.json.gz': gzip stream ends early "
                                            "(unexpected end of file)"));
    nnpt_log_release();
    nnp__model_fini(&m);
    (void)trace;
    free(big);
    nnpt_rm_rf(dir);
    free(dir);
}

/* Bad events are logged (index, name, key) and skipped; the rest is imported. A plain
 * file cut inside the array keeps the events before. Not JSON: an error, no crash. */
static void test_bad_events(void **state)
{
    char *dir = nnpt_mkdtemp(), *path;
    nnp_model_t m;
    (void)state;
    path = nnpt_write_file(dir, "b.pt.trace.json",
                           "{\"traceEvents\": [{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"ok\","
                           "\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2},"
                           "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"nots\",\"pid\":1,"
                           "\"tid\":1,\"ts\":\"x\",\"dur\":2},"
                           "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,"
                           "\"tid\":7,\"ts\":5,\"dur\":-1},"
                           "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"cut\"");
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    nnpt_log_capture();
    assert_int_equal(nnp__importer_kineto.import(path, &m), NNP_OK);
    assert_int_equal(m.ops.t.n, 1);
    assert_int_equal(m.kernels.t.n, 0);
    assert_non_null(strstr(nnpt_log_text(), "event #1 ('nots'): key 'ts' missing or not a time"));
    assert_non_null(strstr(nnpt_log_text(), "event #2 ('k'): key 'dur' missing, negative"));
    assert_non_null(
        strstr(nnpt_log_text(), "is truncated: it ends inside the event array after 3"));
    nnpt_log_release();
    nnp__model_fini(&m);
    free(path);
    path = nnpt_write_file(dir, "c.pt.trace.json", "not json");
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_not_equal(nnp__importer_kineto.import(path, &m), NNP_OK);
    nnp__model_fini(&m);
    free(path);
    nnpt_rm_rf(dir);
    free(dir);
}

/* key_averages() of a Kineto trace (torch/autograd/profiler.py _parse_kineto_results,
 * profiler_util.py): every CPU event is counted, record_function ranges (user_annotation)
 * and each ProfilerStep#N (as "ProfilerStep*") and the CUDA runtime calls included, the
 * latter children of the op that made them; record_function's entry op and aten::is_leaf
 * are left out altogether (_filter_name), so their parents keep that time as self time.
 * One thread (µs):
 *   ProfilerStep#1 [1000, 1100]                   self 100 - forward 60          = 40
 *     forward [1005, 1065]                        self 60 - linear 40 - relu 10  = 10
 *       profiler::_record_function_enter_new [1005.5, 1006.5]   (left out)
 *       aten::linear [1010, 1050]                 self 40 - addmm 30             = 10
 *         aten::addmm [1012, 1042]                self 30 - launch 8.5           = 21.5
 *           cudaLaunchKernel [1020, 1028.5]       self                           = 8.5
 *         aten::is_leaf [1045, 1047]              (left out)
 *       aten::relu [1052, 1062]                   self                           = 10
 *   ProfilerStep#2 [1100, 1150]                   self 50 - add_ 5.25            = 44.75
 *     aten::add_ [1110, 1115.25]                  self                           = 5.25
 * ProfilerStep*: 2 calls, total 150, self 84.75 (avg 75, min 50, max 100). All self time:
 * 150 (the two steps), so ProfilerStep* has 56.50 %, addmm 14.33 %, the 10 us rows 6.67 %,
 * the launch 5.67 %, add_ 3.50 %. The kernel (device time) is no row. */
static void test_key_averages_of_kineto_trace(void **state)
{
    static const char trace[] =
        "{\"traceEvents\": [\n"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":5,"
        "\"tid\":5,\"ts\":1000,\"dur\":100},\n"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"forward\",\"pid\":5,\"tid\":5,"
        "\"ts\":1005,\"dur\":60},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"profiler::_record_function_enter_new\","
        "\"pid\":5,\"tid\":5,\"ts\":1005.5,\"dur\":1},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":5,\"tid\":5,"
        "\"ts\":1010,\"dur\":40,\"args\":{\"External id\":1}},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":5,\"tid\":5,"
        "\"ts\":1012,\"dur\":30,\"args\":{\"External id\":2}},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":5,"
        "\"tid\":5,\"ts\":1020,\"dur\":8.5,\"args\":{\"External id\":2,\"correlation\":9}},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::is_leaf\",\"pid\":5,\"tid\":5,"
        "\"ts\":1045,\"dur\":2},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::relu\",\"pid\":5,\"tid\":5,"
        "\"ts\":1052,\"dur\":10},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":1030,"
        "\"dur\":20,\"args\":{\"correlation\":9,\"stream\":7,\"device\":0}},\n"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#2\",\"pid\":5,"
        "\"tid\":5,\"ts\":1100,\"dur\":50},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add_\",\"pid\":5,\"tid\":5,"
        "\"ts\":1110,\"dur\":5.25}\n"
        "]}\n";
    char *dir = nnpt_mkdtemp(), out[1024], *t, text[8192];
    (void)state;
    free(nnpt_write_file(dir, "w.pt.trace.json", trace));
    snprintf(out, sizeof(out), "%s/out", dir);
    assert_int_equal(nnpt_analyse_to(dir, out), NNP_OK);
    t = nnpt_read_in(out, "op_self_time_0.csv");
    assert_string_equal(t, "Name,Calls,Total Time(us),Self Time(us),Avg Time(us),Min Time(us),"
                           "Max Time(us),Self Time(%)\n"
                           "ProfilerStep*,2,150.000,84.750,75.000,50.000,100.000,56.50\n"
                           "aten::addmm,1,30.000,21.500,30.000,30.000,30.000,14.33\n"
                           "aten::linear,1,40.000,10.000,40.000,40.000,40.000,6.67\n"
                           "aten::relu,1,10.000,10.000,10.000,10.000,10.000,6.67\n"
                           "forward,1,60.000,10.000,60.000,60.000,60.000,6.67\n"
                           "cudaLaunchKernel,1,8.500,8.500,8.500,8.500,8.500,5.67\n"
                           "aten::add_,1,5.250,5.250,5.250,5.250,5.250,3.50\n");
    free(t);
    /* The summary's heading says the table is torch's, ranges and steps included. */
    assert_int_equal(nnpt_cli(text, sizeof(text), "summary '%s'", out), 0);
    if (!strstr(text, "Top by self time, as torch's key_averages() counts (op_self_time_0.csv: "
                      "ops, record_function ranges, ProfilerStep*):\n"
                      "  ProfilerStep*  "))
        fail_msg("summary:\n%s", text);
    nnpt_rm_rf(dir);
    free(dir);
}

/* Kineto >= PyTorch 2.1: ts relative to "baseTimeNanoseconds" (the wall clock floored to
 * 7,889,238 s), 16 significant digits that a double holds to the ns. The model's times are
 * base + ts exactly (base 1,767,189,312,000,000,000 = 224 intervals, written first here
 * as our export does; other tests have it after the events, as Kineto does). The python
 * stack is found on the file's own times. A base that is no whole number of ns is named and
 * the times are read as written. */
static void test_import_time_base(void **state)
{
    static const char trace[] =
        "{\"baseTimeNanoseconds\": 1767189312000000000, \"traceEvents\": [\n"
        "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"train.py(3): step\",\"pid\":5,"
        "\"tid\":5,\"ts\":7889237123400.001,\"dur\":100,\"args\":{\"Python id\":1}},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":5,\"tid\":5,"
        "\"ts\":7889237123456.789,\"dur\":0.013}\n"
        "]}";
    static const char bad[] = "{\"traceEvents\": [\n"
                              "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":5,"
                              "\"tid\":5,\"ts\":12.5,\"dur\":1}\n"
                              "], \"baseTimeNanoseconds\": 1500.5}";
    const int64_t base = 1767189312000000000LL;
    nnp_model_t m;
    (void)state;
    assert_int_equal(base % (7889238LL * 1000000000LL), 0);
    import_text(trace, &m);
    assert_int_equal(m.ops.t.n, 1);
    assert_int_equal(m.ops.start_ns[0], base + 7889237123456789LL);
    assert_int_equal(m.ops.end_ns[0], base + 7889237123456802LL);
    assert_non_null(m.ops.stack);
    assert_string_equal(nnp__model_str(&m, m.ops.stack[0]), "train.py(3): step");
    nnp__model_fini(&m);

    nnpt_log_capture();
    import_text(bad, &m);
    assert_non_null(strstr(nnpt_log_text(), "'baseTimeNanoseconds' is not a whole number of ns"));
    nnpt_log_release();
    assert_int_equal(m.ops.start_ns[0], 12500);
    nnp__model_fini(&m);
}

/* The legacy autograd profiler's array ("CPU functions"), as PyTorch without Kineto
 * (Debian's 1.13) exports it: ops and ProfilerStep#N steps. */
static void test_legacy_format(void **state)
{
    char *dir = nnpt_mkdtemp(), *path;
    nnp_foreign_input_t in[2];
    nnp_model_t m;
    (void)state;
    path = nnpt_write_file(
        dir, "legacy.json",
        "[{\"name\": \"ProfilerStep#4\", \"ph\": \"X\", \"ts\": 100, \"dur\": 50, \"tid\": 1, "
        "\"pid\": \"CPU functions\", \"args\": {}}, {\"name\": \"aten::add\", \"ph\": \"X\", "
        "\"ts\": 110, \"dur\": 3, \"tid\": 1, \"pid\": \"CPU functions\", \"args\": {}}]");
    assert_int_equal(nnp__importer_kineto.find(path, in, 2), 1);
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__importer_kineto.import(path, &m), NNP_OK);
    assert_int_equal(m.steps.t.n, 1);
    assert_int_equal(m.steps.id[0], 4);
    assert_int_equal(m.ops.t.n, 1);
    assert_int_equal(m.ops.end_ns[0] - m.ops.start_ns[0], 3000);
    nnp__model_fini(&m);
    free(path);
    nnpt_rm_rf(dir);
    free(dir);
}

/* ---- a real trace from torch.profiler (Debian's python3-torch, /usr/bin/python3) ---- */

#define TORCH_PY "/usr/bin/python3"
/* Writes the trace and, per event name, torch's own key_averages() count. */
static const char torch_script[] =
    "import sys, torch, torch.nn as nn\n"
    "from torch.profiler import profile, ProfilerActivity, record_function\n"
    "torch.manual_seed(0)\n"
    "model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))\n"
    "x = torch.randn(8, 16)\n"
    "with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as p:\n"
    "    for i in range(3):\n"
    "        with record_function('ProfilerStep#%d' % (i + 1)):\n"
    "            model(x).sum().backward()\n"
    "p.export_chrome_trace(sys.argv[1])\n"
    "with open(sys.argv[2], 'w') as f:\n"
    "    for e in p.key_averages():\n"
    "        f.write('%s\\t%d\\n' % (e.key, e.count))\n";

static void test_real_torch_trace(void **state)
{
    char *dir = nnpt_mkdtemp(), cmd[4096], trace[1024], counts[1024], *script, *text, *line;
    char *next;
    nnp_model_t m;
    size_t keys = 0;
    (void)state;
    if (access(TORCH_PY, X_OK) != 0 || system(TORCH_PY " -c 'import torch' >/dev/null 2>&1") != 0) {
        fprintf(stderr,
                "SKIP: PyTorch is not installed for %s (apt-get install "
                "python3-torch)\n",
                TORCH_PY);
        nnpt_rm_rf(dir);
        free(dir);
        skip();
    }
    script = nnpt_write_file(dir, "gen.py", torch_script);
    snprintf(trace, sizeof(trace), "%s/torch.pt.trace.json", dir);
    snprintf(counts, sizeof(counts), "%s/counts.tsv", dir);
    snprintf(cmd, sizeof(cmd), TORCH_PY " %s %s %s", script, trace, counts);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__importer_kineto.import(trace, &m), NNP_OK);
    /* Every name torch counts appears as often among our ops, steps and annotations. */
    text = nnpt_read_text(counts);
    assert_non_null(text);
    for (line = text; line && *line; line = next) {
        char *tab = strchr(line, '\t'), *nl = strchr(line, '\n');
        next = nl ? nl + 1 : NULL;
        if (nl)
            *nl = '\0';
        long want, got = 0;
        assert_non_null(tab);
        *tab = '\0';
        want = strtol(tab + 1, NULL, 10);
        for (size_t i = 0; i < m.ops.t.n; i++)
            got += strcmp(nnp__model_str(&m, m.ops.name[i]), line) == 0;
        for (size_t i = 0; i < m.markers.t.n; i++)
            got += strcmp(nnp__model_str(&m, m.markers.message[i]), line) == 0;
        /* torch's key_averages groups every ProfilerStep#N under "ProfilerStep*". */
        if (strcmp(line, "ProfilerStep*") == 0)
            got += (long)m.steps.t.n;
        if (got != want)
            fail_msg("'%s': torch counts %ld, the import %ld", line, want, got);
        keys++;
    }
    assert_true(keys > 10);
    assert_int_equal(m.steps.t.n, 3);
    free(text);
    free(script);
    nnp__model_fini(&m);
    nnpt_rm_rf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_import_counts),
        cmocka_unit_test(test_import_driver_call),
        cmocka_unit_test(test_import_autograd_links),
        cmocka_unit_test(test_import_fwdbwd_threads),
        cmocka_unit_test(test_import_call_stack),
        cmocka_unit_test(test_import_python_functions),
        cmocka_unit_test(test_hta_three_ranks),
        cmocka_unit_test(test_gzip_same_results),
        cmocka_unit_test(test_cut_gzip),
        cmocka_unit_test(test_bad_events),
        cmocka_unit_test(test_key_averages_of_kineto_trace),
        cmocka_unit_test(test_import_time_base),
        cmocka_unit_test(test_legacy_format),
        cmocka_unit_test(test_real_torch_trace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
