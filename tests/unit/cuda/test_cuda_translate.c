/* test_cuda_translate.c - the CUDA back end's translation layer without CUDA: hand-built
 * activity records of every kind, with every field set, go through the translator into a
 * real session; the raw directory is read back and the model compared exactly. Also: bad
 * and unknown records, CUPTI's dropped count, synchronizations before and without their
 * API record, NVTX pairs, the name cache, and correlation slots reused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/cuda/translate.h"
#include "model/model.h"
#include "read/raw_import.h"
#include "test_util.h"

/* CUPTI timestamps in these tests are small; the offset moves them into our clock. */
#define OFFSET 1000000
#define TAG    NNP_CU_CORR_TAG

static int demangle_calls;

static char *fake_demangle(const char *name)
{
    demangle_calls++;
    if (strcmp(name, "_Z4gemmPf") == 0)
        return strdup("gemm(float*)");
    return NULL;
}

static bool fake_nccl(uint64_t id, nnp_cu_nccl_call_t *out)
{
    if (id != 77)
        return false;
    out->comm_kind = NNP_COMM_ALLREDUCE;
    out->bytes = 65536;
    out->peer = -1;
    out->comm = 0xabc;
    return true;
}

typedef struct fixture {
    char *out;
    nnp_session_t *s;
    nnp_cu_xlate_t *x;
    nnp_model_t m;
    char raw[NNP_PATH_MAX];
} fixture_t;

static void begin(fixture_t *f, bool memory)
{
    nnp_options_t o;
    nnp_cu_xlate_config_t cfg = {fake_demangle, fake_nccl};
    memset(f, 0, sizeof(*f));
    f->out = nnpt_mkdtemp();
    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", f->out);
    o.sample_interval_ms = 0;
    o.profile_memory = memory;
    assert_int_equal(nnp_session_create(&o, &f->s), NNP_OK);
    assert_int_equal(nnp__cu_xlate_create(&cfg, &f->x), NNP_OK);
    nnp__cu_xlate_set_clock(f->x, OFFSET);
    demangle_calls = 0;
}

/* Finishes the translator's window, closes the session and reads the run back. */
static void end(fixture_t *f)
{
    nnp__cu_xlate_finish(f->x);
    /* The raw directory is made with the first event; a run that recorded nothing must
     * still be readable here, so make it (an empty run) now. */
    assert_int_equal(nnp_session_flush(f->s), NNP_OK);
    snprintf(f->raw, sizeof(f->raw), "%s", nnp_session_raw_dir(f->s));
    assert_int_equal(nnp_session_destroy(f->s), NNP_OK);
    assert_int_equal(nnp__model_init(&f->m), NNP_OK);
    assert_int_equal(nnp__import_raw(f->raw, &f->m), NNP_OK);
}

static void cleanup(fixture_t *f)
{
    nnp__cu_xlate_destroy(f->x);
    nnp__model_fini(&f->m);
    nnpt_rm_rf(f->out);
    free(f->out);
}

static void feed(fixture_t *f, nnp_cu_activity_t *a)
{
    nnp__cu_xlate_record(f->x, a);
    memset(a, 0, sizeof(*a));
}

static const char *s(const fixture_t *f, uint32_t id)
{
    return nnp__model_str(&f->m, id);
}

static size_t find_kernel(const fixture_t *f, const char *name)
{
    for (size_t i = 0; i < f->m.kernels.t.n; i++) {
        if (strcmp(s(f, f->m.kernels.name[i]), name) == 0)
            return i;
    }
    fail_msg("no kernel named %s", name);
    return 0;
}

static double counter(const fixture_t *f, const char *name)
{
    double v = -1;
    for (size_t i = 0; i < f->m.counters.t.n; i++) {
        if (strcmp(s(f, f->m.counters.name[i]), name) == 0)
            v = f->m.counters.value[i];
    }
    return v;
}

static void feed_device_work(fixture_t *f)
{
    nnp_cu_activity_t a;
    memset(&a, 0, sizeof(a));

    /* Correlation 10 belongs to host op 500, 12 to NCCL call 77, 11 to nothing. */
    a.kind = NNP_CU_EXTCORR;
    a.u.extcorr = (nnp_cu_extcorr_t){NNP_CU_EXT_OPS, 500, 10};
    feed(f, &a);
    a.kind = NNP_CU_EXTCORR;
    a.u.extcorr = (nnp_cu_extcorr_t){NNP_CU_EXT_NCCL, 77, 12};
    feed(f, &a);
    a.kind = NNP_CU_EXTCORR; /* a kind that is not ours (OpenACC): ignored */
    a.u.extcorr = (nnp_cu_extcorr_t){2, 999, 11};
    feed(f, &a);

    a.kind = NNP_CU_API;
    a.u.api.name = "cudaLaunchKernel";
    a.u.api.cbid = 211;
    a.u.api.start = 1000;
    a.u.api.end = 1500;
    a.u.api.process_id = 1;
    a.u.api.thread_id = 1234;
    a.u.api.correlation_id = 10;
    feed(f, &a);
    a.kind = NNP_CU_API;
    a.u.api.is_driver = true;
    a.u.api.cbid = 307;
    a.u.api.start = 1600;
    a.u.api.end = 1700;
    a.u.api.thread_id = 1234;
    a.u.api.correlation_id = 11;
    a.u.api.return_value = 2;
    feed(f, &a);

    a.kind = NNP_CU_KERNEL;
    a.u.kernel = (nnp_cu_kernel_t){"_Z4gemmPf", 2000,      5000,        0,  1,    7,
                                   10,          {4, 2, 1}, {128, 1, 1}, 32, 1024, 256};
    feed(f, &a);
    a.kind = NNP_CU_KERNEL;
    a.u.kernel =
        (nnp_cu_kernel_t){"relu_kernel", 5100, 5200, 0, 1, 7, 11, {1, 1, 1}, {-1, 1, 1}, 8, -4, 0};
    feed(f, &a);

    a.kind = NNP_CU_MEMCPY;
    a.u.memcpy.bytes = 4096;
    a.u.memcpy.start = 600;
    a.u.memcpy.end = 900;
    a.u.memcpy.device_id = 0;
    a.u.memcpy.stream_id = 7;
    a.u.memcpy.correlation_id = 11;
    a.u.memcpy.copy_kind = NNP_COPY_HTOD;
    a.u.memcpy.src_kind = NNP_MEMORY_PAGEABLE;
    a.u.memcpy.dst_kind = NNP_MEMORY_DEVICE;
    feed(f, &a);
    a.kind = NNP_CU_MEMCPY; /* MEMCPY2: a peer copy from device 0 to device 1 */
    a.u.memcpy.bytes = 8192;
    a.u.memcpy.start = 6000;
    a.u.memcpy.end = 6500;
    a.u.memcpy.device_id = 0;
    a.u.memcpy.stream_id = 8;
    a.u.memcpy.src_device = 0;
    a.u.memcpy.dst_device = 1;
    a.u.memcpy.copy_kind = NNP_COPY_PTOP;
    a.u.memcpy.src_kind = NNP_MEMORY_DEVICE;
    a.u.memcpy.dst_kind = NNP_MEMORY_DEVICE;
    a.u.memcpy.is_peer = true;
    feed(f, &a);
    a.kind = NNP_CU_MEMSET;
    a.u.memset = (nnp_cu_memset_t){256, 7000, 7100, 0, 1, 7, 13, 7, NNP_MEMORY_DEVICE};
    feed(f, &a);

    a.kind = NNP_CU_KERNEL;
    a.u.kernel.name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long)";
    a.u.kernel.start = 8000;
    a.u.kernel.end = 9000;
    a.u.kernel.stream_id = 9;
    a.u.kernel.correlation_id = 12;
    feed(f, &a);
    a.kind = NNP_CU_KERNEL; /* NCCL without its call (statically linked NCCL) */
    a.u.kernel.name = "ncclKernel_Broadcast_RING_LL_Sum_int8_t";
    a.u.kernel.start = 9500;
    a.u.kernel.end = 9600;
    a.u.kernel.stream_id = 9;
    a.u.kernel.correlation_id = 14;
    feed(f, &a);
}

static void test_every_kind_translates_exactly(void **state)
{
    fixture_t f;
    const nnp_kernels_t *k;
    size_t i;
    (void)state;
    begin(&f, true);
    feed_device_work(&f);
    end(&f);
    k = &f.m.kernels;

    assert_int_equal(k->t.n, 5); /* gemm, relu, 2 copies, memset; NCCL are comms */
    i = find_kernel(&f, "gemm(float*)");
    assert_string_equal(s(&f, k->type[i]), "cuLaunchKernel");
    assert_int_equal(k->start_ns[i], 2000 + OFFSET);
    assert_int_equal(k->end_ns[i], 5000 + OFFSET);
    assert_int_equal(k->stream_id[i], 7);
    assert_int_equal(k->device_id[i], 0);
    assert_int_equal(k->corr[i], 500);  /* the host op's id, through external correlation */
    assert_int_equal(k->launch[i], 10); /* and CUPTI's own: its API call's */
    assert_int_equal(k->detail[i].has, NNP_KDETAIL_LAUNCH);
    assert_int_equal(k->detail[i].grid[0], 4);
    assert_int_equal(k->detail[i].grid[1], 2);
    assert_int_equal(k->detail[i].grid[2], 1);
    assert_int_equal(k->detail[i].block[0], 128);
    assert_int_equal(k->detail[i].registers, 32);
    assert_int_equal(k->detail[i].static_shared, 1024);
    assert_int_equal(k->detail[i].dynamic_shared, 256);

    i = find_kernel(&f, "relu_kernel");
    assert_int_equal(k->corr[i], TAG | 11); /* no op: CUPTI's id, tagged */
    assert_int_equal(k->launch[i], 11);
    assert_int_equal(k->detail[i].block[0], 0); /* negative = damage: unknown */
    assert_int_equal(k->detail[i].static_shared, 0);

    i = find_kernel(&f, "MemcpyH2D");
    assert_string_equal(s(&f, k->type[i]), "cuMemcpy");
    assert_int_equal(k->start_ns[i], 600 + OFFSET);
    assert_int_equal(k->detail[i].has, NNP_KDETAIL_COPY);
    assert_int_equal(k->detail[i].bytes, 4096);
    assert_int_equal(k->detail[i].copy_kind, NNP_COPY_HTOD);
    assert_int_equal(k->detail[i].src_kind, NNP_MEMORY_PAGEABLE);
    assert_int_equal(k->detail[i].dst_kind, NNP_MEMORY_DEVICE);
    assert_int_equal(k->corr[i], TAG | 11);
    assert_int_equal(k->launch[i], 11);

    i = find_kernel(&f, "MemcpyP2P");
    assert_int_equal(k->detail[i].copy_kind, NNP_COPY_PTOP);
    assert_int_equal(k->detail[i].src_device, 0);
    assert_int_equal(k->detail[i].dst_device, 1);
    assert_int_equal(k->detail[i].bytes, 8192);
    assert_int_equal(k->stream_id[i], 8);

    i = find_kernel(&f, "MemorySet");
    assert_string_equal(s(&f, k->type[i]), "cuMemset");
    assert_int_equal(k->detail[i].copy_kind, NNP_COPY_MEMSET);
    assert_int_equal(k->detail[i].bytes, 256);
    assert_int_equal(k->detail[i].value, 7);
    assert_int_equal(k->launch[i], 13);
    assert_int_equal(k->detail[i].dst_kind, NNP_MEMORY_DEVICE);

    /* NCCL: communication on its stream, size from the wrapper's call when known. */
    assert_int_equal(f.m.comms.t.n, 2);
    assert_string_equal(s(&f, f.m.comms.name[0]), "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    assert_int_equal(f.m.comms.kind[0], NNP_COMM_ALLREDUCE);
    assert_int_equal(f.m.comms.bytes[0], 65536);
    assert_string_equal(s(&f, f.m.comms.group[0]), "nccl_comm_abc");
    assert_int_equal(f.m.comms.stream_id[0], 9);
    assert_int_equal(f.m.comms.start_ns[0], 8000 + OFFSET);
    assert_int_equal(f.m.comms.end_ns[0], 9000 + OFFSET);
    assert_int_equal(f.m.comms.launch[0], 12); /* CUPTI's id of the launch, as kernels */
    assert_string_equal(s(&f, f.m.comms.name[1]), "ncclKernel_Broadcast_RING_LL_Sum_int8_t");
    assert_int_equal(f.m.comms.kind[1], NNP_COMM_BROADCAST);
    assert_int_equal(f.m.comms.bytes[1], 0);
    assert_string_equal(s(&f, f.m.comms.group[1]), "nccl");
    assert_int_equal(f.m.comms.peer[1], -1);
    assert_int_equal(f.m.comms.launch[1], 14);

    /* API calls on their own thread, with the same link id as their kernels. */
    assert_int_equal(f.m.calls.t.n, 2);
    assert_string_equal(s(&f, f.m.calls.name[0]), "cudaLaunchKernel");
    assert_int_equal(f.m.calls.kind[0], NNP_CALL_CUDA_RUNTIME);
    assert_int_equal(f.m.calls.corr[0], 500);
    assert_int_equal(f.m.calls.launch[0], 10); /* = gemm's launch: Kineto's "correlation" */
    assert_int_equal(f.m.calls.start_ns[0], 1000 + OFFSET);
    assert_int_equal(f.m.calls.end_ns[0], 1500 + OFFSET);
    assert_int_equal(f.m.threads.tid[f.m.calls.thread[0]], 1234);
    assert_string_equal(s(&f, f.m.calls.name[1]), "cu_cbid_307");
    assert_int_equal(f.m.calls.kind[1], NNP_CALL_CUDA_DRIVER);
    assert_int_equal(f.m.calls.status[1], 2);
    assert_int_equal(f.m.calls.corr[1], TAG | 11);
    assert_int_equal(f.m.calls.launch[1], 11);

    {
        const nnp_cu_counts_t *c = nnp__cu_xlate_counts(f.x);
        assert_int_equal(c->translated[NNP_CU_KERNEL], 4);
        assert_int_equal(c->translated[NNP_CU_MEMCPY], 2);
        assert_int_equal(c->translated[NNP_CU_EXTCORR], 3);
        assert_int_equal(c->nccl_kernels, 2);
        assert_int_equal(c->bad, 0);
    }
    cleanup(&f);
}

static void test_sync_memory_and_markers(void **state)
{
    fixture_t f;
    nnp_cu_activity_t a;
    const nnp_cu_counts_t *c;
    (void)state;
    memset(&a, 0, sizeof(a));
    begin(&f, true);

    /* A synchronization before its API record waits for the caller's thread. */
    a.kind = NNP_CU_SYNC;
    a.u.sync = (nnp_cu_sync_t){NNP_CU_SYNC_STREAM, 3000, 4000, 20, 1, 7, 0};
    feed(&f, &a);
    a.kind = NNP_CU_API;
    a.u.api.name = "cudaStreamSynchronize";
    a.u.api.start = 2990;
    a.u.api.end = 4010;
    a.u.api.thread_id = 99;
    a.u.api.correlation_id = 20;
    feed(&f, &a);
    /* After its API record: named at once. */
    a.kind = NNP_CU_API;
    a.u.api.name = "cudaDeviceSynchronize";
    a.u.api.start = 4500;
    a.u.api.end = 4800;
    a.u.api.thread_id = 98;
    a.u.api.correlation_id = 22;
    feed(&f, &a);
    a.kind = NNP_CU_SYNC;
    a.u.sync = (nnp_cu_sync_t){NNP_CU_SYNC_CONTEXT, 4510, 4790, 22, 1, 0, 0};
    feed(&f, &a);
    /* One whose API record never comes: recorded at finish, thread unknown. */
    a.kind = NNP_CU_SYNC;
    a.u.sync = (nnp_cu_sync_t){NNP_CU_SYNC_EVENT, 5000, 5100, 21, 1, 3, 4};
    feed(&f, &a);

    /* Device memory: an allocation and its release; pinned host memory is not device. */
    a.kind = NNP_CU_MEMORY;
    a.u.memory = (nnp_cu_memory_t){
        NNP_CU_MEM_ALLOC, NNP_MEMORY_DEVICE, 30, 0x7000, 1u << 20, 6000, 1, 0, 1, 0};
    feed(&f, &a);
    a.kind = NNP_CU_MEMORY;
    a.u.memory = (nnp_cu_memory_t){
        NNP_CU_MEM_RELEASE, NNP_MEMORY_DEVICE, 31, 0x7000, 1u << 20, 6500, 1, 0, 1, 0};
    feed(&f, &a);
    a.kind = NNP_CU_MEMORY;
    a.u.memory =
        (nnp_cu_memory_t){NNP_CU_MEM_ALLOC, NNP_MEMORY_PINNED, 32, 0x9000, 64, 6600, 1, 0, 1, 0};
    feed(&f, &a);

    /* NVTX: nested ranges, an instant, an end without a start. */
    a.kind = NNP_CU_MARKER;
    a.u.marker = (nnp_cu_marker_t){NNP_CU_MARKER_START, 100, 1, 55, "step", NULL};
    feed(&f, &a);
    a.kind = NNP_CU_MARKER;
    a.u.marker = (nnp_cu_marker_t){NNP_CU_MARKER_START, 200, 2, 55, "fwd", "PyTorch"};
    feed(&f, &a);
    a.kind = NNP_CU_MARKER;
    a.u.marker = (nnp_cu_marker_t){NNP_CU_MARKER_END, 300, 2, 0, NULL, NULL};
    feed(&f, &a);
    a.kind = NNP_CU_MARKER;
    a.u.marker = (nnp_cu_marker_t){NNP_CU_MARKER_INSTANT, 400, 9, 55, "mark", NULL};
    feed(&f, &a);
    a.kind = NNP_CU_MARKER;
    a.u.marker = (nnp_cu_marker_t){NNP_CU_MARKER_END, 900, 1, 0, NULL, NULL};
    feed(&f, &a);
    a.kind = NNP_CU_MARKER;
    a.u.marker = (nnp_cu_marker_t){NNP_CU_MARKER_END, 950, 3, 0, NULL, NULL};
    feed(&f, &a);
    end(&f);

    /* Calls: the two APIs and three synchronizations, by start time. */
    assert_int_equal(f.m.calls.t.n, 5);
    {
        const char *names[] = {"cudaStreamSynchronize", "cudaStreamSynchronize",
                               "cudaDeviceSynchronize", "cudaDeviceSynchronize",
                               "cudaEventSynchronize"};
        const int kinds[] = {NNP_CALL_CUDA_RUNTIME, NNP_CALL_SYNC, NNP_CALL_CUDA_RUNTIME,
                             NNP_CALL_SYNC, NNP_CALL_SYNC};
        const int64_t starts[] = {2990, 3000, 4500, 4510, 5000};
        const uint32_t streams[] = {0, 7, 0, 0, 3};
        const uint64_t tids[] = {99, 99, 98, 98, 0};
        for (size_t i = 0; i < 5; i++) {
            uint64_t tid = f.m.threads.tid[f.m.calls.thread[i]];
            assert_string_equal(s(&f, f.m.calls.name[i]), names[i]);
            assert_int_equal(f.m.calls.kind[i], kinds[i]);
            assert_int_equal(f.m.calls.start_ns[i], starts[i] + OFFSET);
            assert_int_equal(f.m.calls.stream_id[i], streams[i]);
            /* CUPTI's id of the call (a synchronization: of the call that waited). */
            assert_true(f.m.calls.launch[i] != 0);
            if (kinds[i] == NNP_CALL_SYNC && i > 0 && kinds[i - 1] == NNP_CALL_CUDA_RUNTIME)
                assert_int_equal(f.m.calls.launch[i], f.m.calls.launch[i - 1]);
            if (tids[i])
                assert_int_equal(tid, tids[i]);
            else
                assert_true(tid != 99 && tid != 98); /* the recording thread */
        }
    }
    assert_int_equal(f.m.mem.t.n, 2);
    assert_int_equal(f.m.mem.is_alloc[0], 1);
    assert_int_equal(f.m.mem.address[0], 0x7000);
    assert_int_equal(f.m.mem.bytes[0], 1u << 20);
    assert_int_equal(f.m.mem.ts_ns[0], 6000 + OFFSET);
    assert_int_equal(f.m.mem.is_alloc[1], 0);
    assert_int_equal(f.m.mem.ts_ns[1], 6500 + OFFSET);

    /* Host rows: step[ fwd[ ] mark[] ]. */
    assert_int_equal(f.m.host.t.n, 6);
    {
        const char *ev[] = {"step", "fwd", "fwd", "mark", "mark", "step"};
        const char *mod[] = {"NVTX", "PyTorch", "PyTorch", "NVTX", "NVTX", "NVTX"};
        const int64_t ts[] = {100, 200, 300, 400, 400, 900};
        for (size_t i = 0; i < 6; i++) {
            assert_string_equal(s(&f, f.m.host.event[i]), ev[i]);
            assert_string_equal(s(&f, f.m.host.module[i]), mod[i]);
            assert_int_equal(f.m.host.ts_ns[i], ts[i] + OFFSET);
            assert_int_equal(f.m.threads.tid[f.m.host.thread[i]], 55);
        }
    }
    c = nnp__cu_xlate_counts(f.x);
    assert_int_equal(c->sync_without_api, 1);
    assert_int_equal(c->memory_skipped, 1);
    assert_int_equal(c->marker_unmatched, 1);
    cleanup(&f);
}

/* Wrong fields, unknown kinds and CUPTI's drops: counted, reported, never silent. */
static void test_bad_unknown_and_dropped_are_counted(void **state)
{
    fixture_t f;
    nnp_cu_activity_t a;
    const nnp_cu_counts_t *c;
    (void)state;
    memset(&a, 0, sizeof(a));
    begin(&f, false);
    a.kind = NNP_CU_KERNEL; /* ends before it starts */
    a.u.kernel.name = "k";
    a.u.kernel.start = 5000;
    a.u.kernel.end = 4000;
    feed(&f, &a);
    a.kind = NNP_CU_KERNEL; /* no start */
    a.u.kernel.name = NULL;
    a.u.kernel.end = 4000;
    feed(&f, &a);
    a.kind = NNP_CU_MEMCPY;
    a.u.memcpy.start = 10;
    a.u.memcpy.end = 20;
    a.u.memcpy.copy_kind = 200; /* a copy kind from the future: unknown */
    a.u.memcpy.src_kind = 99;
    feed(&f, &a);
    a.kind = NNP_CU_KERNEL; /* a nameless kernel is kept, named as such */
    a.u.kernel.start = 30;
    a.u.kernel.end = 40;
    feed(&f, &a);
    a.kind = NNP_CU_UNKNOWN;
    a.cupti_kind = 17; /* OVERHEAD */
    feed(&f, &a);
    a.kind = (nnp_cu_kind_t)42; /* garbage kind */
    a.cupti_kind = 99;
    feed(&f, &a);
    nnp__cu_xlate_dropped(f.x, 5);
    nnpt_log_capture();
    nnp_log_set_level(NNP_LOG_WARN);
    nnp__cu_xlate_finish(f.x); /* logs now; end() finishes again with nothing new */
    assert_non_null(strstr(nnpt_log_text(), "CUPTI dropped 5 activity records"));
    assert_non_null(strstr(nnpt_log_text(), "2 CUPTI records had impossible times"));
    nnpt_log_release();
    end(&f);

    c = nnp__cu_xlate_counts(f.x);
    assert_int_equal(c->bad, 2);
    assert_int_equal(c->translated[NNP_CU_UNKNOWN], 2);
    assert_int_equal(c->last_unknown_kind, 99);
    assert_int_equal(c->cupti_dropped, 5);
    assert_int_equal(f.m.kernels.t.n, 2);
    assert_string_equal(s(&f, f.m.kernels.name[0]), "MemcpyUnknown");
    assert_int_equal(f.m.kernels.detail[0].copy_kind, NNP_COPY_UNKNOWN);
    assert_int_equal(f.m.kernels.detail[0].src_kind, NNP_MEMORY_UNKNOWN);
    assert_string_equal(s(&f, f.m.kernels.name[1]), "<unnamed kernel>");
    /* The counts reach the raw data as counters (latest value wins). */
    assert_true(counter(&f, "cupti_dropped_records") == 5.0);
    assert_true(counter(&f, "cupti_unknown_records") == 2.0);
    assert_true(counter(&f, "cupti_bad_records") == 2.0);
    cleanup(&f);
}

static void test_names_demangled_once_and_slots_reused(void **state)
{
    fixture_t f;
    nnp_cu_activity_t a;
    (void)state;
    memset(&a, 0, sizeof(a));
    begin(&f, false);
    for (int i = 0; i < 3; i++) {
        a.kind = NNP_CU_KERNEL;
        a.u.kernel.name = "_Z4gemmPf";
        a.u.kernel.start = 100 + (uint64_t)i * 10;
        a.u.kernel.end = 105 + (uint64_t)i * 10;
        a.u.kernel.correlation_id = (uint32_t)(5 + i * 32768); /* same slot each time */
        if (i == 0) {
            nnp_cu_activity_t e = {0};
            e.kind = NNP_CU_EXTCORR;
            e.u.extcorr = (nnp_cu_extcorr_t){NNP_CU_EXT_OPS, 321, 5};
            nnp__cu_xlate_record(f.x, &e);
        }
        feed(&f, &a);
    }
    end(&f);
    assert_int_equal(demangle_calls, 1);
    assert_int_equal(f.m.kernels.t.n, 3);
    assert_int_equal(f.m.kernels.corr[0], 321);
    /* Later ids in the same slot do not inherit the op of the first. */
    assert_int_equal(f.m.kernels.corr[1], TAG | (5 + 32768));
    assert_int_equal(f.m.kernels.corr[2], TAG | (5 + 2 * 32768));
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(s(&f, f.m.kernels.name[i]), "gemm(float*)");
    cleanup(&f);
}

static void test_nccl_kinds_from_names(void **state)
{
    (void)state;
    assert_int_equal(nnp__cu_nccl_kind("ncclKernel_AllReduce_RING_LL_Sum_float"),
                     NNP_COMM_ALLREDUCE);
    assert_int_equal(nnp__cu_nccl_kind("_Z39ncclDevKernel_ReduceScatter_Sum_f32_RING_LLP11"),
                     NNP_COMM_REDUCESCATTER);
    assert_int_equal(nnp__cu_nccl_kind("ncclDevKernel_AllGather_RING_LL"), NNP_COMM_ALLGATHER);
    assert_int_equal(nnp__cu_nccl_kind("ncclDevKernel_Reduce_Sum_f32_RING_LL"), NNP_COMM_REDUCE);
    assert_int_equal(nnp__cu_nccl_kind("ncclDevKernel_Broadcast_RING_LL"), NNP_COMM_BROADCAST);
    assert_int_equal(nnp__cu_nccl_kind("ncclDevKernel_SendRecv"), NNP_COMM_OTHER);
    assert_int_equal(nnp__cu_nccl_kind("ncclDevKernel_Generic"), NNP_COMM_OTHER);
    assert_int_equal(nnp__cu_nccl_kind("gemm_nccl_like"), -1);
    assert_int_equal(nnp__cu_nccl_kind("_Z4gemmPf"), -1);
    assert_int_equal(nnp__cu_nccl_kind(NULL), -1);
}

/* Outside a window nothing is recorded, and the translator still counts. */
static void test_outside_window_records_nothing(void **state)
{
    fixture_t f;
    nnp_cu_activity_t a;
    (void)state;
    memset(&a, 0, sizeof(a));
    begin(&f, false);
    assert_int_equal(nnp_session_stop(f.s), NNP_OK);
    a.kind = NNP_CU_KERNEL;
    a.u.kernel.name = "late";
    a.u.kernel.start = 1;
    a.u.kernel.end = 2;
    feed(&f, &a);
    end(&f);
    assert_int_equal(f.m.kernels.t.n, 0);
    assert_int_equal(nnp__cu_xlate_counts(f.x)->translated[NNP_CU_KERNEL], 1);
    cleanup(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kind_translates_exactly),
        cmocka_unit_test(test_sync_memory_and_markers),
        cmocka_unit_test(test_bad_unknown_and_dropped_are_counted),
        cmocka_unit_test(test_names_demangled_once_and_slots_reused),
        cmocka_unit_test(test_nccl_kinds_from_names),
        cmocka_unit_test(test_outside_window_records_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
