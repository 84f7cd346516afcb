/* test_kineto_gpu.c - device activity in the Kineto export (kineto_gpu.c): a run with
 * kernels, a copy, a memory set and the CUDA calls that queued them, recorded through the
 * public calls the CUDA back end uses, exported, and checked event by event against the
 * recording (the expected values are worked out beside it); then read back by our Kineto
 * importer, whose links (the kernel's launch call, the call's op) are the ones HTA and
 * TensorBoard join on. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "read/importers.h"
#include "test_util.h"
#include "util/util.h"

#define MAX_FILE (4u << 20)
#define TAG      (1ull << 63) /* the CUDA back end's tag on an id that is no op's */

typedef nnpt_raw_fx_t fixture_t;

/* The run (times after T, ns; device 0):
 *   step 1 [0, 100000]
 *   aten::conv2d [1000, 9000], correlation 7, on the recording thread:
 *     cudaLaunchKernel     [2000, 2500]  launch 101 -> implicit_gemm stream 7 [5000, 7000]
 *                                         grid 4x2x1, block 128x1x1, 32 registers,
 *                                         1024 + 256 B shared memory
 *     cudaMemcpyAsync      [3000, 3400]  launch 102 -> HtoD pageable -> device, 4096 B,
 *                                         stream 7 [7100, 7500]: 4096 B / 400 ns = 10.24 GB/s
 *     cudaStreamSynchronize [4000, 8000] a wait on stream 7 (its API call's id 103)
 *   no op: cuLaunchKernel (driver) [10000, 10300] launch 200 (id TAG|200)
 *                                      -> relu stream 8 [11000, 11500]
 *   a memory set with no call: stream 7 [12000, 12100], 256 B of device memory
 *   c10d::allreduce_ [12500, 13500], correlation 9:
 *     cudaLaunchKernel     [12600, 12800] launch 104 -> an NCCL all-reduce kernel, 4096 B,
 *                                         group nccl_comm_1, stream 9 [13000, 15000]
 *   host collectives: the torch shim's "nccl:all_reduce" [16000, 17000], 128 B, and a gloo
 *   all-reduce [20000, 21000], 64 B */
static int setup(void **state)
{
    fixture_t *fx = calloc(1, sizeof(*fx));
    nnp_options_t o;
    nnp_session_t *s;
    nnp_op_t conv = {0};
    nnp_kernel_t k = {0};
    nnp_kernel_launch_t l = {4, 2, 1, 128, 1, 1, 32, 1024, 256};
    nnp_copy_t cp = {0};
    nnp_call_t c = {0};
    nnp_comm_t comm = {0};
    uint64_t T;
    if (!fx)
        return -1;
    nnp_options_init(&o);
    o.sample_interval_ms = 0;
    o.profile_communication = true;
    if (nnpt_raw_fx_session(fx, &o, &s) != NNP_OK)
        return -1;
    T = nnp_clock_ns();
    nnp_step_begin_at(1, 0, T);
    nnp_step_end_at(1, 0, T + 100000);

    conv.name = conv.type = nnp_intern("aten::conv2d");
    conv.correlation_id = 7;
    nnp_op_at(&conv, T + 1000, T + 9000);
    c.name = nnp_intern("cudaLaunchKernel");
    c.kind = NNP_CALL_CUDA_RUNTIME;
    c.correlation_id = 7;
    c.launch_id = 101;
    nnp_call_at(&c, T + 2000, T + 2500);
    c.name = nnp_intern("cudaMemcpyAsync");
    c.launch_id = 102;
    nnp_call_at(&c, T + 3000, T + 3400);
    c.name = nnp_intern("cudaStreamSynchronize");
    c.kind = NNP_CALL_SYNC;
    c.launch_id = 103; /* the id of the API call that waited */
    c.stream_id = 7;
    nnp_call_at(&c, T + 4000, T + 8000);

    k.name = nnp_intern("implicit_gemm");
    k.type = nnp_intern("cuLaunchKernel");
    k.stream_id = 7;
    k.correlation_id = 7;
    k.launch_id = 101;
    nnp_kernel_launch_at(&k, &l, T + 5000, T + 7000);
    k.name = nnp_intern("MemcpyH2D");
    k.type = nnp_intern("cuMemcpy");
    k.launch_id = 102;
    cp.size_bytes = 4096;
    cp.kind = NNP_COPY_HTOD;
    cp.src_kind = NNP_MEMORY_PAGEABLE;
    cp.dst_kind = NNP_MEMORY_DEVICE;
    nnp_copy_at(&k, &cp, T + 7100, T + 7500);

    memset(&c, 0, sizeof(c));
    c.name = nnp_intern("cuLaunchKernel");
    c.kind = NNP_CALL_CUDA_DRIVER;
    c.correlation_id = TAG | 200;
    c.launch_id = 200;
    nnp_call_at(&c, T + 10000, T + 10300);
    k.name = nnp_intern("relu");
    k.type = nnp_intern("cuLaunchKernel");
    k.stream_id = 8;
    k.correlation_id = TAG | 200;
    k.launch_id = 200;
    nnp_kernel_at(&k, T + 11000, T + 11500);

    k.name = nnp_intern("MemorySet");
    k.type = nnp_intern("cuMemset");
    k.stream_id = 7;
    k.correlation_id = 0;
    k.launch_id = 0;
    memset(&cp, 0, sizeof(cp));
    cp.size_bytes = 256;
    cp.kind = NNP_COPY_MEMSET;
    cp.dst_kind = NNP_MEMORY_DEVICE;
    nnp_copy_at(&k, &cp, T + 12000, T + 12100);

    conv.name = conv.type = nnp_intern("c10d::allreduce_");
    conv.correlation_id = 9;
    nnp_op_at(&conv, T + 12500, T + 13500);
    memset(&c, 0, sizeof(c));
    c.name = nnp_intern("cudaLaunchKernel");
    c.kind = NNP_CALL_CUDA_RUNTIME;
    c.correlation_id = 9;
    c.launch_id = 104;
    nnp_call_at(&c, T + 12600, T + 12800);
    comm.name = nnp_intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    comm.launch_id = 104;
    comm.kind = NNP_COMM_ALLREDUCE;
    comm.group = nnp_intern("nccl_comm_1");
    comm.size_bytes = 4096;
    comm.peer = -1;
    comm.stream_id = 9;
    nnp_comm_kernel_at(&comm, T + 13000, T + 15000);
    comm.launch_id = 0;
    comm.name = nnp_intern("nccl:all_reduce"); /* the torch shim's host span: not a kernel */
    comm.size_bytes = 128;
    nnp_comm_at(&comm, T + 16000, T + 17000);
    comm.name = nnp_intern("gloo:all_reduce");
    comm.group = nnp_intern("default_pg(ranks=0-1)");
    comm.size_bytes = 64;
    comm.stream_id = 0;
    nnp_comm_at(&comm, T + 20000, T + 21000);
    if (nnp_session_destroy(s) != NNP_OK)
        return -1;
    *state = fx;
    return 0;
}

static const cJSON *get(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

static const cJSON *arg(const cJSON *e, const char *key)
{
    return get(get(e, "args"), key);
}

/* The n-th event (from 0) with this ph, cat and name (any name when NULL). */
static const cJSON *event(const cJSON *events, const char *ph, const char *cat, const char *name,
                          int nth)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, events)
    {
        const cJSON *p = get(e, "ph"), *c = get(e, "cat"), *n = get(e, "name");
        if (cJSON_IsString(p) && strcmp(p->valuestring, ph) == 0 && cJSON_IsString(c) &&
            strcmp(c->valuestring, cat) == 0 && cJSON_IsString(n) &&
            (!name || strcmp(n->valuestring, name) == 0) && nth-- == 0)
            return e;
    }
    return NULL;
}

/* The "name" arg of metadata event `what` on (pid, tid), "" when there is none. */
static const char *meta_name(const cJSON *events, const char *what, int pid, int tid)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, events)
    {
        const cJSON *p = get(e, "ph"), *n = get(e, "name"), *v = arg(e, "name");
        if (cJSON_IsString(p) && strcmp(p->valuestring, "M") == 0 && cJSON_IsString(n) &&
            strcmp(n->valuestring, what) == 0 && get(e, "pid")->valueint == pid &&
            get(e, "tid")->valueint == tid && cJSON_IsString(v))
            return v->valuestring;
    }
    return "";
}

static int count(const cJSON *events, const char *ph, const char *cat)
{
    int n = 0;
    while (event(events, ph, cat, NULL, n))
        n++;
    return n;
}

/* Whole ns between two events' "ts" (their text: exact). */
static int64_t ts_ns(const cJSON *e)
{
    return llround(get(e, "ts")->valuedouble * 1000.0);
}

static int64_t uint_arg(const cJSON *e, const char *key)
{
    const cJSON *v = arg(e, key);
    assert_non_null(v);
    return (int64_t)v->valuedouble;
}

/* The export of the fixture's run into path; cuda_sync: with its synchronizations as
 * "cuda_sync" events (kineto_cuda_sync). */
static void export_file(const fixture_t *fx, char *path, size_t cap, bool cuda_sync)
{
    nnp_analyse_options_t o;
    nnp_analyse_options_init(&o);
    o.kineto_cuda_sync = cuda_sync;
    snprintf(path, cap, "%s/w.pt.trace.json", fx->dir);
    assert_int_equal(nnp_export_kineto(fx->raw, path, &o, NULL), NNP_OK);
}

/* By default the waits are left out, as Kineto leaves them out unless
 * enable_cuda_sync_events: HTA would count a wait on a stream as GPU work. The runtime
 * call that waited is there as any other. */
static void test_no_sync_by_default(void **state)
{
    fixture_t *fx = *state;
    char path[NNP_PATH_MAX], *text = NULL;
    cJSON *root;
    const cJSON *ev;
    export_file(fx, path, sizeof(path), false);
    assert_int_equal(nnp__read_file(path, MAX_FILE, &text, NULL), NNP_OK);
    root = cJSON_Parse(text);
    assert_non_null(root);
    ev = get(root, "traceEvents");
    assert_int_equal(count(ev, "X", "cuda_sync"), 0);
    assert_non_null(event(ev, "X", "kernel", "implicit_gemm", 0));
    assert_int_equal(count(ev, "X", "cuda_runtime"), 3);
    cJSON_Delete(root);
    free(text);
}

static void test_device_events(void **state)
{
    fixture_t *fx = *state;
    char path[NNP_PATH_MAX], *text = NULL;
    cJSON *root;
    const cJSON *ev, *conv, *gemm, *copy, *set, *relu, *launch, *drv, *sync, *props, *f, *nccl;
    int64_t ext;
    export_file(fx, path, sizeof(path), true);
    assert_int_equal(nnp__read_file(path, MAX_FILE, &text, NULL), NNP_OK);
    root = cJSON_Parse(text);
    assert_non_null(root);
    ev = get(root, "traceEvents");

    /* One device, known by its id only. */
    props = get(root, "deviceProperties");
    assert_int_equal(cJSON_GetArraySize(props), 1);
    assert_int_equal(get(cJSON_GetArrayItem(props, 0), "id")->valueint, 0);

    conv = event(ev, "X", "cpu_op", "aten::conv2d", 0);
    assert_non_null(conv);
    ext = uint_arg(conv, "External id");

    /* The kernel: on pid device 0, tid stream 7, its launch as "correlation", its op's
     * External id, its launch configuration. */
    gemm = event(ev, "X", "kernel", "implicit_gemm", 0);
    assert_non_null(gemm);
    assert_int_equal(get(gemm, "pid")->valueint, 0);
    assert_int_equal(get(gemm, "tid")->valueint, 7);
    assert_int_equal(ts_ns(gemm) - ts_ns(conv), 4000);
    assert_true(get(gemm, "dur")->valuedouble == 2.0);
    assert_int_equal(uint_arg(gemm, "correlation"), 101);
    assert_int_equal(uint_arg(gemm, "External id"), ext);
    assert_int_equal(uint_arg(gemm, "device"), 0);
    assert_int_equal(uint_arg(gemm, "stream"), 7);
    assert_int_equal(uint_arg(gemm, "registers per thread"), 32);
    assert_int_equal(uint_arg(gemm, "shared memory"), 1280);
    assert_int_equal(cJSON_GetArrayItem(arg(gemm, "grid"), 0)->valueint, 4);
    assert_int_equal(cJSON_GetArrayItem(arg(gemm, "grid"), 1)->valueint, 2);
    assert_int_equal(cJSON_GetArrayItem(arg(gemm, "block"), 0)->valueint, 128);

    /* The copy and the set under Kineto's names (HTA's kernel types read them). */
    copy = event(ev, "X", "gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 0);
    assert_non_null(copy);
    assert_int_equal(uint_arg(copy, "bytes"), 4096);
    assert_true(arg(copy, "memory bandwidth (GB/s)")->valuedouble == 10.24);
    assert_int_equal(uint_arg(copy, "correlation"), 102);
    assert_int_equal(uint_arg(copy, "External id"), ext);
    set = event(ev, "X", "gpu_memset", "Memset (Device)", 0);
    assert_non_null(set);
    assert_int_equal(uint_arg(set, "bytes"), 256);
    assert_null(arg(set, "correlation")); /* queued by no call we saw */
    assert_null(arg(set, "External id"));

    /* A kernel of no op: its launch, no External id, on its stream. */
    relu = event(ev, "X", "kernel", "relu", 0);
    assert_non_null(relu);
    assert_int_equal(get(relu, "tid")->valueint, 8);
    assert_int_equal(uint_arg(relu, "correlation"), 200);
    assert_null(arg(relu, "External id"));

    /* The calls on the host thread: runtime and driver with their launch ids, the wait as
     * cuda_sync with its stream. */
    launch = event(ev, "X", "cuda_runtime", "cudaLaunchKernel", 0);
    assert_non_null(launch);
    assert_int_equal(get(launch, "tid")->valueint, get(conv, "tid")->valueint);
    assert_int_equal(uint_arg(launch, "correlation"), 101);
    assert_int_equal(uint_arg(launch, "External id"), ext);
    assert_int_equal(ts_ns(launch) - ts_ns(conv), 1000);
    assert_int_equal(uint_arg(event(ev, "X", "cuda_runtime", "cudaMemcpyAsync", 0), "correlation"),
                     102);
    drv = event(ev, "X", "cuda_driver", "cuLaunchKernel", 0);
    assert_non_null(drv);
    assert_int_equal(uint_arg(drv, "correlation"), 200);
    assert_null(arg(drv, "External id"));
    /* The wait as Kineto writes CUPTI's synchronization: on the (one) device and the
     * stream waited for, named by its kind. */
    sync = event(ev, "X", "cuda_sync", "Stream Sync", 0);
    assert_non_null(sync);
    assert_int_equal(get(sync, "pid")->valueint, 0);
    assert_int_equal(get(sync, "tid")->valueint, 7);
    assert_string_equal(arg(sync, "cuda_sync_kind")->valuestring, "Stream Sync");
    assert_int_equal(uint_arg(sync, "stream"), 7);
    assert_int_equal(uint_arg(sync, "correlation"), 103);
    assert_int_equal(ts_ns(sync) - ts_ns(conv), 3000);
    assert_int_equal(count(ev, "X", "cuda_runtime"), 3);

    /* One ac2g flow per launched activity: "s" at the call, "f" at the device work (the
     * NCCL kernel's too). */
    assert_int_equal(count(ev, "s", "ac2g"), 4);
    assert_int_equal(count(ev, "f", "ac2g"), 4);
    f = event(ev, "f", "ac2g", "ac2g", 0);
    assert_int_equal(get(f, "id")->valueint, 101);
    assert_int_equal(ts_ns(f), ts_ns(gemm));
    assert_int_equal(get(f, "tid")->valueint, 7);
    assert_string_equal(get(f, "bp")->valuestring, "e");
    assert_int_equal(ts_ns(event(ev, "s", "ac2g", "ac2g", 0)), ts_ns(launch));

    /* The NCCL kernel on its stream as Kineto writes one (HTA counts it communication by
     * its name); the gloo collective stays a host span. */
    nccl = event(ev, "X", "kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 0);
    assert_non_null(nccl);
    assert_int_equal(get(nccl, "pid")->valueint, 0);
    assert_int_equal(get(nccl, "tid")->valueint, 9);
    assert_string_equal(arg(nccl, "Collective name")->valuestring, "allreduce");
    assert_int_equal(uint_arg(nccl, "In msg nelems"), 4096);
    assert_string_equal(arg(nccl, "dtype")->valuestring, "Byte");
    assert_string_equal(arg(nccl, "Process Group Name")->valuestring, "nccl_comm_1");
    /* Linked as any kernel: its launch call's id and flow, the collective op's External id
     * (HTA drops GPU events without a launch once a trace has two steps). */
    assert_int_equal(uint_arg(nccl, "correlation"), 104);
    assert_int_equal(uint_arg(nccl, "External id"),
                     uint_arg(event(ev, "X", "cpu_op", "c10d::allreduce_", 0), "External id"));
    assert_true(uint_arg(nccl, "External id") != ext);
    f = event(ev, "f", "ac2g", "ac2g", 3);
    assert_int_equal(get(f, "id")->valueint, 104);
    assert_int_equal(ts_ns(f), ts_ns(nccl));
    assert_int_equal(get(f, "tid")->valueint, 9);
    f = event(ev, "s", "ac2g", "ac2g", 3);
    assert_int_equal(get(f, "id")->valueint, 104);
    assert_int_equal(ts_ns(f) - ts_ns(conv), 11600);
    assert_null(event(ev, "X", "user_annotation", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 0));
    assert_non_null(event(ev, "X", "user_annotation", "gloo:all_reduce", 0));
    assert_non_null(event(ev, "X", "user_annotation", "nccl:all_reduce", 0));
    assert_null(event(ev, "X", "kernel", "nccl:all_reduce", 0));
    assert_null(event(ev, "X", "kernel", "gloo:all_reduce", 0));

    /* The device's process and its three streams are named. */
    assert_string_equal(meta_name(ev, "process_name", 0, 0), "GPU 0");
    assert_string_equal(meta_name(ev, "thread_name", 0, 7), "stream 7");
    assert_string_equal(meta_name(ev, "thread_name", 0, 8), "stream 8");
    assert_string_equal(meta_name(ev, "thread_name", 0, 9), "stream 9");
    cJSON_Delete(root);
    free(text);
}

/* Our Kineto importer reads the export back with the links HTA uses: each kernel's launch
 * call (kernels.launch == calls.launch), each call's op ("External id" = ops.corr), the
 * times to the ns (the importer does not model cuda_sync events: 4 calls). */
static void test_read_back(void **state)
{
    fixture_t *fx = *state;
    char path[NNP_PATH_MAX];
    nnp_model_t m;
    size_t gemm = SIZE_MAX, conv = SIZE_MAX, call = SIZE_MAX;
    export_file(fx, path, sizeof(path), true);
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__importer_kineto.import(path, &m), NNP_OK);
    assert_int_equal(nnp__model_finish(&m), NNP_OK);
    /* The NCCL kernel reads back as a kernel and its collective, with its bytes (the gloo
     * span is a user annotation: a marker). */
    assert_int_equal(m.kernels.t.n, 5);
    assert_int_equal(m.calls.t.n, 4);
    assert_int_equal(m.comms.t.n, 1);
    for (size_t i = 0; i < m.kernels.t.n; i++)
        if (m.kernels.stream_id[i] == 9)
            assert_int_equal(m.kernels.launch[i], 104);
    for (size_t i = 0; i < m.comms.t.n; i++)
        if (m.comms.stream_id[i] == 9) {
            assert_int_equal(m.comms.launch[i], 104);
            assert_int_equal(m.comms.kind[i], NNP_COMM_ALLREDUCE);
            assert_int_equal(m.comms.bytes[i], 4096);
            assert_string_equal(nnp__model_str(&m, m.comms.group[i]), "nccl_comm_1");
            assert_int_equal(m.comms.end_ns[i] - m.comms.start_ns[i], 2000);
        }
    for (size_t i = 0; i < m.kernels.t.n; i++)
        if (strcmp(nnp__model_str(&m, m.kernels.name[i]), "implicit_gemm") == 0)
            gemm = i;
    for (size_t i = 0; i < m.ops.t.n; i++)
        if (strcmp(nnp__model_str(&m, m.ops.name[i]), "aten::conv2d") == 0)
            conv = i;
    for (size_t i = 0; i < m.calls.t.n; i++)
        if (m.calls.launch[i] == 101)
            call = i;
    assert_true(gemm != SIZE_MAX && conv != SIZE_MAX && call != SIZE_MAX);
    assert_int_equal(m.kernels.launch[gemm], 101);
    assert_int_equal(m.kernels.stream_id[gemm], 7);
    assert_string_equal(nnp__model_str(&m, m.calls.name[call]), "cudaLaunchKernel");
    assert_int_equal(m.calls.corr[call], m.ops.corr[conv]);
    assert_int_equal(m.kernels.corr[gemm], m.ops.corr[conv]);
    assert_int_equal(m.kernels.start_ns[gemm] - m.calls.start_ns[call], 3000);
    assert_int_equal(m.kernels.end_ns[gemm] - m.kernels.start_ns[gemm], 2000);
    nnp__model_fini(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_no_sync_by_default, setup, nnpt_raw_fx_teardown),
        cmocka_unit_test_setup_teardown(test_device_events, setup, nnpt_raw_fx_teardown),
        cmocka_unit_test_setup_teardown(test_read_back, setup, nnpt_raw_fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
