/* test_gpu_records.c - the device-activity recording calls (raw format v2): kernels with
 * their launch configuration, copies and memory sets, NCCL kernels as communication gated
 * by op_time, host calls on the caller's thread, NVTX ranges read back as host rows, the
 * option gates, the correlation hooks, and raw files of format v1 still read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "format/raw_format.h"
#include "model/model.h"
#include "read/raw_import.h"
#include "test_util.h"

/* A session with every option the records need, sampler off. */
static nnp_session_t *make(const char *out, bool op_time, bool comm)
{
    nnp_options_t o;
    nnp_session_t *s = NULL;
    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", out);
    o.sample_interval_ms = 0;
    o.op_time = op_time;
    o.profile_communication = comm;
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    return s;
}

static void import(nnp_session_t *s, nnp_model_t *m)
{
    char dir[NNP_PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", nnp_session_raw_dir(s));
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    assert_int_equal(nnp__model_init(m), NNP_OK);
    assert_int_equal(nnp__import_raw(dir, m), NNP_OK);
}

static const char *str(const nnp_model_t *m, uint32_t id)
{
    return nnp__model_str(m, id);
}

static void record_device_work(void)
{
    nnp_kernel_t k = {0};
    nnp_kernel_launch_t l = {0};
    nnp_copy_t cp = {0};
    nnp_comm_t c = {0};

    k.name = nnp_intern("void gemm<float>(float*)");
    k.type = nnp_intern("cuLaunchKernel");
    k.device_id = 1;
    k.stream_id = 7;
    k.correlation_id = 41;
    l.grid_x = 128;
    l.grid_y = 2;
    l.grid_z = 1;
    l.block_x = 256;
    l.block_y = 1;
    l.block_z = 1;
    l.registers_per_thread = 40;
    l.static_shared_bytes = 4096;
    l.dynamic_shared_bytes = 512;
    nnp_kernel_launch_at(&k, &l, 1000, 3000);

    k.name = nnp_intern("MemcpyHtoD");
    k.type = nnp_intern("cuMemcpy");
    k.correlation_id = 42;
    cp.size_bytes = 1u << 20;
    cp.kind = NNP_COPY_HTOD;
    cp.src_kind = NNP_MEMORY_PAGEABLE;
    cp.dst_kind = NNP_MEMORY_DEVICE;
    cp.src_device = 1;
    cp.dst_device = 1;
    nnp_copy_at(&k, &cp, 500, 900);

    k.name = nnp_intern("MemorySet");
    k.type = nnp_intern("cuMemset");
    k.correlation_id = 43;
    memset(&cp, 0, sizeof(cp));
    cp.size_bytes = 4096;
    cp.kind = NNP_COPY_MEMSET;
    cp.dst_kind = NNP_MEMORY_DEVICE;
    cp.value = 0xab;
    nnp_copy_at(&k, &cp, 3500, 3600);

    /* A plain kernel through the new call without launch data: same as nnp_kernel_at. */
    k.name = nnp_intern("plain");
    k.type = nnp_intern("cuLaunchKernel");
    k.correlation_id = 44;
    nnp_kernel_launch_at(&k, NULL, 4000, 4100);

    c.name = nnp_intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    c.kind = NNP_COMM_ALLREDUCE;
    c.group = nnp_intern("nccl");
    c.size_bytes = 8192;
    c.peer = -1;
    c.stream_id = 9;
    nnp_comm_kernel_at(&c, 5000, 7000);
}

static void record_calls(void)
{
    nnp_call_t c = {0};
    c.name = nnp_intern("cudaLaunchKernel");
    c.kind = NNP_CALL_CUDA_RUNTIME;
    c.correlation_id = 41;
    c.thread_id = 4242;
    nnp_call_at(&c, 800, 950);

    memset(&c, 0, sizeof(c));
    c.name = nnp_intern("cudaStreamSynchronize");
    c.kind = NNP_CALL_SYNC;
    c.stream_id = 7;
    c.thread_id = 4242;
    c.status = 3;
    nnp_call_at(&c, 3100, 3400);

    /* NVTX: one with a domain, one without, nested, on another thread. */
    memset(&c, 0, sizeof(c));
    c.kind = NNP_CALL_NVTX;
    c.name = nnp_intern("forward");
    c.domain = nnp_intern("PyTorch");
    c.thread_id = 777;
    nnp_call_at(&c, 100, 6000);
    c.name = nnp_intern("layer1");
    c.domain = 0;
    nnp_call_at(&c, 200, 300);
}

static void test_device_records_round_trip(void **state)
{
    char *out = nnpt_mkdtemp();
    nnp_session_t *s = make(out, true, false);
    nnp_model_t m;
    const nnp_kernels_t *k;
    const nnp_kernel_detail_t *d;
    (void)state;

    record_device_work();
    record_calls();
    import(s, &m);
    k = &m.kernels;
    assert_int_equal(k->t.n, 4);
    assert_non_null(k->detail);
    /* Sorted by start: memcpy (500), kernel (1000), memset (3500), plain (4000). */
    assert_string_equal(str(&m, k->name[0]), "MemcpyHtoD");
    assert_string_equal(str(&m, k->type[0]), "cuMemcpy");
    assert_int_equal(k->start_ns[0], 500);
    assert_int_equal(k->end_ns[0], 900);
    d = &k->detail[0];
    assert_int_equal(d->has, NNP_KDETAIL_COPY);
    assert_int_equal(d->bytes, 1u << 20);
    assert_int_equal(d->copy_kind, NNP_COPY_HTOD);
    assert_int_equal(d->src_kind, NNP_MEMORY_PAGEABLE);
    assert_int_equal(d->dst_kind, NNP_MEMORY_DEVICE);
    assert_int_equal(d->src_device, 1);
    assert_int_equal(d->dst_device, 1);
    assert_int_equal(k->corr[0], 42);

    assert_string_equal(str(&m, k->name[1]), "void gemm<float>(float*)");
    assert_int_equal(k->device_id[1], 1);
    assert_int_equal(k->stream_id[1], 7);
    assert_int_equal(k->corr[1], 41);
    d = &k->detail[1];
    assert_int_equal(d->has, NNP_KDETAIL_LAUNCH);
    assert_int_equal(d->grid[0], 128);
    assert_int_equal(d->grid[1], 2);
    assert_int_equal(d->grid[2], 1);
    assert_int_equal(d->block[0], 256);
    assert_int_equal(d->block[1], 1);
    assert_int_equal(d->block[2], 1);
    assert_int_equal(d->registers, 40);
    assert_int_equal(d->static_shared, 4096);
    assert_int_equal(d->dynamic_shared, 512);
    assert_int_equal(d->bytes, 0);

    d = &k->detail[2];
    assert_int_equal(d->has, NNP_KDETAIL_COPY);
    assert_int_equal(d->copy_kind, NNP_COPY_MEMSET);
    assert_int_equal(d->src_kind, NNP_MEMORY_UNKNOWN);
    assert_int_equal(d->bytes, 4096);
    assert_int_equal(d->value, 0xab);
    assert_int_equal(k->detail[3].has, 0);

    /* The NCCL kernel is communication, recorded although profile_communication is off. */
    assert_int_equal(m.comms.t.n, 1);
    assert_string_equal(str(&m, m.comms.name[0]), "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    assert_int_equal(m.comms.kind[0], NNP_COMM_ALLREDUCE);
    assert_int_equal(m.comms.bytes[0], 8192);
    assert_int_equal(m.comms.stream_id[0], 9);
    assert_int_equal(m.comms.start_ns[0], 5000);
    assert_int_equal(m.comms.end_ns[0], 7000);

    /* Calls: on the caller's thread, not the recording one; the record's one correlation
     * id goes to corr, and launch (the importers' link) stays 0. */
    nnpt_check_calls(&m,
                     (const nnpt_call_t[]){
                         {"cudaLaunchKernel", NNP_CALL_CUDA_RUNTIME, 800, 950, 0, 41, 4242, 0, 0},
                         {"cudaStreamSynchronize", NNP_CALL_SYNC, 3100, 3400, 0, 0, 4242, 7, 3},
                     },
                     2);

    /* NVTX ranges as host rows, nested in time order, level 1, module = domain or NVTX. */
    assert_int_equal(m.host.t.n, 4);
    {
        const char *events[] = {"forward", "layer1", "layer1", "forward"};
        const char *modules[] = {"PyTorch", "NVTX", "NVTX", "PyTorch"};
        const int kinds[] = {0, 0, 1, 1};
        const int64_t ts[] = {100, 200, 300, 6000};
        for (int i = 0; i < 4; i++) {
            assert_string_equal(str(&m, m.host.event[i]), events[i]);
            assert_string_equal(str(&m, m.host.module[i]), modules[i]);
            assert_int_equal(m.host.kind[i], kinds[i]);
            assert_int_equal(m.host.ts_ns[i], ts[i]);
            assert_int_equal(m.host.level[i], 1);
            assert_int_equal(m.threads.tid[m.host.thread[i]], 777);
        }
    }
    nnp__model_fini(&m);
    nnpt_rm_rf(out);
    free(out);
}

/* op_time off: no kernel, copy, comm kernel or CUDA call; NVTX still (a host range). */
static void test_op_time_off_gates_device_activity(void **state)
{
    char *out = nnpt_mkdtemp();
    nnp_session_t *s = make(out, false, true);
    nnp_model_t m;
    (void)state;
    record_device_work();
    record_calls();
    import(s, &m);
    assert_int_equal(m.kernels.t.n, 0);
    assert_int_equal(m.comms.t.n, 0);
    assert_int_equal(m.calls.t.n, 0);
    assert_int_equal(m.host.t.n, 4);
    nnp__model_fini(&m);
    nnpt_rm_rf(out);
    free(out);
}

static void test_kind_names(void **state)
{
    (void)state;
    assert_string_equal(nnp_copy_kind_name(NNP_COPY_DTOH), "DtoH");
    assert_string_equal(nnp_copy_kind_name(NNP_COPY_MEMSET), "Memset");
    assert_string_equal(nnp_copy_kind_name((nnp_copy_kind_t)99), "unknown");
    assert_string_equal(nnp_memory_kind_name(NNP_MEMORY_PINNED), "pinned");
    assert_string_equal(nnp_memory_kind_name((nnp_memory_kind_t)-1), "unknown");
    assert_string_equal(nnp_call_kind_name(NNP_CALL_SYNC), "synchronization");
    assert_string_equal(nnp_call_kind_name((nnp_call_kind_t)50), "other");
}

typedef struct corr_log {
    uint64_t pushed[4];
    int n_push, n_pop;
} corr_log_t;

static void on_push(uint64_t id, void *user)
{
    corr_log_t *l = user;
    if (l->n_push < 4)
        l->pushed[l->n_push] = id;
    l->n_push++;
}

static void on_pop(void *user)
{
    ((corr_log_t *)user)->n_pop++;
}

static void test_correlation_hooks_forward_and_clear(void **state)
{
    corr_log_t log = {{0}, 0, 0};
    nnp_correlation_hooks_t h = {on_push, on_pop, &log};
    (void)state;
    nnp_correlation_push(1); /* no back end: nothing happens */
    nnp_correlation_pop();
    nnp_collector_set_correlation(&h);
    nnp_correlation_push(17);
    nnp_correlation_push(18);
    nnp_correlation_pop();
    nnp_correlation_pop();
    nnp_collector_set_correlation(NULL);
    nnp_correlation_push(19);
    assert_int_equal(log.n_push, 2);
    assert_int_equal(log.n_pop, 2);
    assert_int_equal(log.pushed[0], 17);
    assert_int_equal(log.pushed[1], 18);
}

static void test_collect_options(void **state)
{
    char *out = nnpt_mkdtemp();
    nnp_options_t got;
    nnp_session_t *s;
    (void)state;
    assert_int_equal(nnp_collect_options(NULL), NNP_EINVAL);
    assert_int_equal(nnp_collect_options(&got), NNP_ESTATE);
    s = make(out, false, true);
    assert_int_equal(nnp_collect_options(&got), NNP_OK);
    assert_false(got.op_time);
    assert_true(got.profile_communication);
    assert_string_equal(got.output_path, out);
    nnp_session_destroy(s);
    assert_int_equal(nnp_collect_options(&got), NNP_ESTATE);
    nnpt_rm_rf(out);
    free(out);
}

/* Rewrites the version field of every raw file in dir. */
static void set_version(const char *dir, uint32_t version)
{
    const char *names[] = {"meta.nnp", "data_000001.nnp"};
    for (size_t i = 0; i < 2; i++) {
        char path[NNP_PATH_MAX];
        FILE *f;
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        f = fopen(path, "r+b");
        assert_non_null(f);
        assert_int_equal(fseek(f, 8, SEEK_SET), 0); /* version follows the 8-byte magic */
        assert_int_equal(fwrite(&version, sizeof(version), 1, f), 1);
        fclose(f);
    }
}

/* v2 only added kinds and flags: a v1 file (no new record in it) reads exactly as before,
 * and a file claiming a version newer than the reader is refused, never misread. */
static void test_format_v1_still_reads(void **state)
{
    char *out = nnpt_mkdtemp();
    nnp_session_t *s = make(out, true, false);
    char dir[NNP_PATH_MAX], newer[32];
    nnp_kernel_t k = {0};
    nnp_model_t m;
    (void)state;
    k.name = nnp_intern("old_kernel");
    k.stream_id = 3;
    nnp_kernel_at(&k, 10, 20);
    snprintf(dir, sizeof(dir), "%s", nnp_session_raw_dir(s));
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    set_version(dir, 1);
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__import_raw(dir, &m), NNP_OK);
    assert_int_equal(m.kernels.t.n, 1);
    assert_null(m.kernels.detail);
    assert_string_equal(str(&m, m.kernels.name[0]), "old_kernel");
    assert_int_equal(m.kernels.stream_id[0], 3);
    assert_int_equal(m.info.chunks_corrupt, 0);
    nnp__model_fini(&m);

    /* A version newer than the reader's (v3 added the pack codec, which this file's
     * records use: the v1 label above only tests how kinds are read). */
    set_version(dir, NNP_RAW_VERSION + 1);
    snprintf(newer, sizeof(newer), "version %u", NNP_RAW_VERSION + 1);
    nnpt_log_capture();
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__import_raw(dir, &m), NNP_OK);
    assert_int_equal(m.kernels.t.n, 0);
    assert_non_null(strstr(nnpt_log_text(), newer));
    nnpt_log_release();
    nnp__model_fini(&m);
    nnpt_rm_rf(out);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_records_round_trip),
        cmocka_unit_test(test_op_time_off_gates_device_activity),
        cmocka_unit_test(test_kind_names),
        cmocka_unit_test(test_correlation_hooks_forward_and_clear),
        cmocka_unit_test(test_collect_options),
        cmocka_unit_test(test_format_v1_still_reads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
