/* test_cuda_decode.c - decode.c against CUPTI's own record structs (built only where the
 * CUDA SDK headers are): every field of every kind we read lands in the plain record,
 * unknown kinds stay unknown with their number, API names come from CUPTI without their
 * version suffix, and one decoded kernel goes through the translator into the model. No
 * GPU is needed: the records are built in memory as CUPTI would write them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/cuda/decode.h"
#include "collect/cuda/translate.h"
#include "model/model.h"
#include "read/raw_import.h"
#include "test_util.h"

static void test_kernel(void **state)
{
    CUpti_ActivityKernel8 k;
    nnp_cu_activity_t a;
    (void)state;
    memset(&k, 0, sizeof(k));
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.registersPerThread = 40;
    k.start = 111;
    k.end = 222;
    k.deviceId = 3;
    k.contextId = 4;
    k.streamId = 13;
    k.gridX = 10;
    k.gridY = 20;
    k.gridZ = 30;
    k.blockX = 64;
    k.blockY = 2;
    k.blockZ = 1;
    k.staticSharedMemory = 48;
    k.dynamicSharedMemory = 96;
    k.correlationId = 77;
    k.name = "_Z6kernelv";
    nnp__cu_decode((const CUpti_Activity *)&k, &a);
    assert_int_equal(a.kind, NNP_CU_KERNEL);
    assert_int_equal(a.cupti_kind, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    assert_string_equal(a.u.kernel.name, "_Z6kernelv");
    assert_int_equal(a.u.kernel.start, 111);
    assert_int_equal(a.u.kernel.end, 222);
    assert_int_equal(a.u.kernel.device_id, 3);
    assert_int_equal(a.u.kernel.context_id, 4);
    assert_int_equal(a.u.kernel.stream_id, 13);
    assert_int_equal(a.u.kernel.correlation_id, 77);
    assert_int_equal(a.u.kernel.grid[0], 10);
    assert_int_equal(a.u.kernel.grid[1], 20);
    assert_int_equal(a.u.kernel.grid[2], 30);
    assert_int_equal(a.u.kernel.block[0], 64);
    assert_int_equal(a.u.kernel.block[1], 2);
    assert_int_equal(a.u.kernel.block[2], 1);
    assert_int_equal(a.u.kernel.registers, 40);
    assert_int_equal(a.u.kernel.static_shared, 48);
    assert_int_equal(a.u.kernel.dynamic_shared, 96);
}

static void test_copies_and_sets(void **state)
{
    CUpti_ActivityMemcpy5 m;
    CUpti_ActivityMemcpyPtoP4 p;
    CUpti_ActivityMemset4 s;
    nnp_cu_activity_t a;
    (void)state;
    memset(&m, 0, sizeof(m));
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    m.bytes = 123456;
    m.start = 10;
    m.end = 20;
    m.deviceId = 1;
    m.contextId = 2;
    m.streamId = 3;
    m.correlationId = 4;
    nnp__cu_decode((const CUpti_Activity *)&m, &a);
    assert_int_equal(a.kind, NNP_CU_MEMCPY);
    assert_int_equal(a.u.memcpy.copy_kind, NNP_COPY_DTOH);
    assert_int_equal(a.u.memcpy.src_kind, NNP_MEMORY_DEVICE);
    assert_int_equal(a.u.memcpy.dst_kind, NNP_MEMORY_PINNED);
    assert_int_equal(a.u.memcpy.bytes, 123456);
    assert_int_equal(a.u.memcpy.start, 10);
    assert_int_equal(a.u.memcpy.end, 20);
    assert_int_equal(a.u.memcpy.device_id, 1);
    assert_int_equal(a.u.memcpy.stream_id, 3);
    assert_int_equal(a.u.memcpy.correlation_id, 4);
    assert_int_equal(a.u.memcpy.src_device, 1);
    assert_int_equal(a.u.memcpy.dst_device, 1);
    assert_false(a.u.memcpy.is_peer);

    memset(&p, 0, sizeof(p));
    p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
    p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    p.bytes = 99;
    p.start = 30;
    p.end = 40;
    p.deviceId = 0;
    p.streamId = 5;
    p.srcDeviceId = 0;
    p.dstDeviceId = 2;
    p.correlationId = 6;
    nnp__cu_decode((const CUpti_Activity *)&p, &a);
    assert_int_equal(a.kind, NNP_CU_MEMCPY);
    assert_true(a.u.memcpy.is_peer);
    assert_int_equal(a.u.memcpy.dst_device, 2);
    assert_int_equal(a.u.memcpy.bytes, 99);
    assert_int_equal(a.u.memcpy.correlation_id, 6);

    memset(&s, 0, sizeof(s));
    s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    s.value = 0x5a;
    s.bytes = 4096;
    s.start = 50;
    s.end = 60;
    s.deviceId = 1;
    s.streamId = 7;
    s.correlationId = 8;
    s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
    nnp__cu_decode((const CUpti_Activity *)&s, &a);
    assert_int_equal(a.kind, NNP_CU_MEMSET);
    assert_int_equal(a.u.memset.value, 0x5a);
    assert_int_equal(a.u.memset.bytes, 4096);
    assert_int_equal(a.u.memset.memory_kind, NNP_MEMORY_MANAGED);
    assert_int_equal(a.u.memset.correlation_id, 8);
}

static void test_api_sync_memory_extcorr_marker(void **state)
{
    CUpti_ActivityAPI api;
    CUpti_ActivitySynchronization sy;
    CUpti_ActivityMemory3 mem;
    CUpti_ActivityExternalCorrelation ext;
    CUpti_ActivityMarker2 mk;
    CUpti_ActivityOverhead ov;
    nnp_cu_activity_t a;
    (void)state;

    memset(&api, 0, sizeof(api));
    api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    api.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    api.start = 1;
    api.end = 2;
    api.processId = 3;
    api.threadId = 4;
    api.correlationId = 5;
    api.returnValue = 6;
    nnp__cu_decode((const CUpti_Activity *)&api, &a);
    assert_int_equal(a.kind, NNP_CU_API);
    assert_false(a.u.api.is_driver);
    assert_non_null(a.u.api.name);
    assert_string_equal(a.u.api.name, "cudaLaunchKernel"); /* "_v7000" removed */
    assert_int_equal(a.u.api.thread_id, 4);
    assert_int_equal(a.u.api.correlation_id, 5);
    assert_int_equal(a.u.api.return_value, 6);
    api.kind = CUPTI_ACTIVITY_KIND_DRIVER;
    api.cbid = CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2;
    nnp__cu_decode((const CUpti_Activity *)&api, &a);
    assert_true(a.u.api.is_driver);
    assert_string_equal(a.u.api.name, "cuMemAlloc_v2"); /* the driver's real symbol */
    assert_null(nnp__cu_api_name(false, 100000));

    memset(&sy, 0, sizeof(sy));
    sy.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    sy.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    sy.start = 7;
    sy.end = 8;
    sy.correlationId = 9;
    sy.contextId = 10;
    sy.streamId = 11;
    sy.cudaEventId = 12;
    nnp__cu_decode((const CUpti_Activity *)&sy, &a);
    assert_int_equal(a.kind, NNP_CU_SYNC);
    assert_int_equal(a.u.sync.type, NNP_CU_SYNC_STREAM);
    assert_int_equal(a.u.sync.stream_id, 11);
    assert_int_equal(a.u.sync.event_id, 12);
    assert_int_equal(a.u.sync.correlation_id, 9);

    memset(&mem, 0, sizeof(mem));
    mem.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    mem.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
    mem.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    mem.correlationId = 13;
    mem.address = 0xdead0000;
    mem.bytes = 1 << 20;
    mem.timestamp = 14;
    mem.deviceId = 2;
    mem.streamId = 15;
    nnp__cu_decode((const CUpti_Activity *)&mem, &a);
    assert_int_equal(a.kind, NNP_CU_MEMORY);
    assert_int_equal(a.u.memory.operation, NNP_CU_MEM_RELEASE);
    assert_int_equal(a.u.memory.memory_kind, NNP_MEMORY_DEVICE);
    assert_int_equal(a.u.memory.address, 0xdead0000);
    assert_int_equal(a.u.memory.bytes, 1 << 20);
    assert_int_equal(a.u.memory.timestamp, 14);
    assert_int_equal(a.u.memory.device_id, 2);

    memset(&ext, 0, sizeof(ext));
    ext.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    ext.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
    ext.externalId = 0x1234567890ull;
    ext.correlationId = 16;
    nnp__cu_decode((const CUpti_Activity *)&ext, &a);
    assert_int_equal(a.kind, NNP_CU_EXTCORR);
    assert_int_equal(a.u.extcorr.external_kind, NNP_CU_EXT_OPS);
    assert_int_equal(a.u.extcorr.external_id, 0x1234567890ull);
    assert_int_equal(a.u.extcorr.correlation_id, 16);

    memset(&mk, 0, sizeof(mk));
    mk.kind = CUPTI_ACTIVITY_KIND_MARKER;
    mk.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
    mk.timestamp = 17;
    mk.id = 18;
    mk.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    mk.objectId.pt.processId = 19;
    mk.objectId.pt.threadId = 20;
    mk.name = "range";
    mk.domain = "dom";
    nnp__cu_decode((const CUpti_Activity *)&mk, &a);
    assert_int_equal(a.kind, NNP_CU_MARKER);
    assert_int_equal(a.u.marker.flags, NNP_CU_MARKER_START);
    assert_int_equal(a.u.marker.id, 18);
    assert_int_equal(a.u.marker.thread_id, 20);
    assert_string_equal(a.u.marker.name, "range");
    assert_string_equal(a.u.marker.domain, "dom");
    mk.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
    mk.objectKind = CUPTI_ACTIVITY_OBJECT_DEVICE;
    nnp__cu_decode((const CUpti_Activity *)&mk, &a);
    assert_int_equal(a.u.marker.flags, NNP_CU_MARKER_END);
    assert_int_equal(a.u.marker.thread_id, 0);

    memset(&ov, 0, sizeof(ov));
    ov.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
    nnp__cu_decode((const CUpti_Activity *)&ov, &a);
    assert_int_equal(a.kind, NNP_CU_UNKNOWN);
    assert_int_equal(a.cupti_kind, CUPTI_ACTIVITY_KIND_OVERHEAD);
}

/* A CUPTI kernel record through decode and translate lands in the model exactly. */
static void test_decoded_kernel_reaches_the_model(void **state)
{
    char *out = nnpt_mkdtemp();
    char raw[NNP_PATH_MAX];
    nnp_options_t o;
    nnp_session_t *s;
    nnp_cu_xlate_t *x;
    nnp_model_t m;
    CUpti_ActivityKernel8 k;
    nnp_cu_activity_t a;
    (void)state;
    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", out);
    o.sample_interval_ms = 0;
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    assert_int_equal(nnp__cu_xlate_create(NULL, &x), NNP_OK);
    memset(&k, 0, sizeof(k));
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = 5000;
    k.end = 7000;
    k.streamId = 21;
    k.gridX = k.gridY = k.gridZ = 2;
    k.blockX = 32;
    k.blockY = k.blockZ = 1;
    k.correlationId = 9;
    k.name = "vector_add";
    nnp__cu_decode((const CUpti_Activity *)&k, &a);
    nnp__cu_xlate_record(x, &a);
    snprintf(raw, sizeof(raw), "%s", nnp_session_raw_dir(s));
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__import_raw(raw, &m), NNP_OK);
    assert_int_equal(m.kernels.t.n, 1);
    assert_string_equal(nnp__model_str(&m, m.kernels.name[0]), "vector_add");
    assert_int_equal(m.kernels.start_ns[0], 5000);
    assert_int_equal(m.kernels.end_ns[0], 7000);
    assert_int_equal(m.kernels.stream_id[0], 21);
    assert_int_equal(m.kernels.corr[0], NNP_CU_CORR_TAG | 9);
    assert_int_equal(m.kernels.detail[0].grid[2], 2);
    assert_int_equal(m.kernels.detail[0].block[0], 32);
    nnp__cu_xlate_destroy(x);
    nnp__model_fini(&m);
    nnpt_rm_rf(out);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel),
        cmocka_unit_test(test_copies_and_sets),
        cmocka_unit_test(test_api_sync_memory_extcorr_marker),
        cmocka_unit_test(test_decoded_kernel_reaches_the_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
