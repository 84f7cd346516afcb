/* test_gpu.c - MindSpore's GPU files from a run with CUDA activity (recorded through the
 * public calls the CUDA back end uses), compared with values worked out by hand in the
 * comments: gpu_op_detail_info, gpu_op_type_info, gpu_activity_data, the timeline against
 * the keys of MindInsight's gpu_timeline_display_0.json (corpus), its summary, the
 * timeline_limit, the GPU advisor rules; and no GPU file for a run without CUDA. */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test_util.h"
#include "util/util.h"

#define CORPUS_TIMELINE                                                                            \
    NNP_SOURCE_DIR "/../shared/corpus/mindinsight/profiler/gpu_timeline_display_0.json"
#define TAG (1ull << 63)
#define MB  (1024u * 1024u)

static char *slurp(const char *dir, const char *name)
{
    char path[NNP_PATH_MAX];
    char *text = NULL;
    if (nnp__path_join(path, sizeof(path), dir, name) != NNP_OK ||
        nnp__read_file(path, 256u * MB, &text, NULL) != NNP_OK)
        return NULL;
    return text;
}

static nnp_session_t *make_sync(const char *out, int timeline_mb, bool sync_enable)
{
    nnp_options_t o;
    nnp_session_t *s = NULL;
    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", out);
    o.sample_interval_ms = 0;
    o.sync_enable = sync_enable;
    if (timeline_mb)
        o.timeline_limit_mb = timeline_mb;
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    return s;
}

static nnp_session_t *make(const char *out, int timeline_mb)
{
    return make_sync(out, timeline_mb, true);
}

static void op(const char *name, const char *type, uint64_t corr, uint64_t s, uint64_t e)
{
    nnp_op_t o = {0};
    o.name = nnp_intern(name);
    o.type = nnp_intern(type);
    o.correlation_id = corr;
    nnp_op_at(&o, s, e);
}

static void conv_kernel(uint64_t corr, uint64_t s, uint64_t e)
{
    nnp_kernel_t k = {0};
    nnp_kernel_launch_t l = {4, 2, 1, 128, 1, 1, 32, 0, 0};
    k.name = nnp_intern("conv_kernel");
    k.type = nnp_intern("cuLaunchKernel");
    k.stream_id = 7;
    k.correlation_id = corr;
    nnp_kernel_launch_at(&k, &l, s, e);
}

/* The run of the file comment (ns):
 *   Conv2D-op1 host 10000-12000 (corr 1): kernels 11000-15000, 15500-16500 -> span 5500,
 *              host 20000-21000 (corr 2): kernel  21000-24000             -> span 3000
 *   ReLU-op2   host 30000-30500 (corr 3): no kernel                        -> host 500
 *   cudaMemcpy call 4000-6100 (CUPTI id 9): MemcpyH2D 5000-6000, 4096 B pageable -> delay 1000
 *   cudaStreamSynchronize 25000-27000; NCCL all-reduce 26000-28000, 1024 B, stream 9. */
static void record_run(void)
{
    nnp_kernel_t k = {0};
    nnp_copy_t cp = {0};
    nnp_comm_t c = {0};
    nnp_call_t call = {0};

    op("Default/network/Conv2D-op1", "Conv2D", 1, 10000, 12000);
    conv_kernel(1, 11000, 15000);
    conv_kernel(1, 15500, 16500);
    op("Default/network/Conv2D-op1", "Conv2D", 2, 20000, 21000);
    conv_kernel(2, 21000, 24000);
    op("Default/network/ReLU-op2", "ReLU", 3, 30000, 30500);

    k.name = nnp_intern("MemcpyH2D");
    k.type = nnp_intern("cuMemcpy");
    k.stream_id = 7;
    k.correlation_id = TAG | 9;
    cp.size_bytes = 4096;
    cp.kind = NNP_COPY_HTOD;
    cp.src_kind = NNP_MEMORY_PAGEABLE;
    cp.dst_kind = NNP_MEMORY_DEVICE;
    nnp_copy_at(&k, &cp, 5000, 6000);
    call.name = nnp_intern("cudaMemcpy");
    call.kind = NNP_CALL_CUDA_RUNTIME;
    call.correlation_id = TAG | 9;
    call.thread_id = 42;
    nnp_call_at(&call, 4000, 6100);
    call.name = nnp_intern("cudaStreamSynchronize");
    call.kind = NNP_CALL_SYNC;
    call.correlation_id = TAG | 10;
    call.stream_id = 7;
    nnp_call_at(&call, 25000, 27000);

    c.name = nnp_intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    c.kind = NNP_COMM_ALLREDUCE;
    c.group = nnp_intern("nccl");
    c.size_bytes = 1024;
    c.peer = -1;
    c.stream_id = 9;
    nnp_comm_kernel_at(&c, 26000, 28000);
}

static void analyse(const char *out)
{
    nnp_analyse_options_t ao;
    nnp_analyse_options_init(&ao);
    ao.quiet = true;
    ao.jobs = 1;
    assert_int_equal(nnp_offline_analyse(out, &ao), NNP_OK);
}

static void test_op_and_activity_files(void **state)
{
    char *out = nnpt_mkdtemp(), prof[NNP_PATH_MAX];
    nnp_session_t *s = make(out, 0);
    char *text;
    (void)state;
    record_run();
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    analyse(out);
    snprintf(prof, sizeof(prof), "%s/profiler", out);

    /* sync_enable (default): an op's time is its kernels' span. Conv2D 5.5 + 3 = 8.5 us,
     * CUDA time 4 + 1 + 3 = 8 us in 3 kernels; ReLU has none: host 0.5 us. All 9 us. */
    text = slurp(prof, "gpu_op_detail_info_0.csv");
    assert_non_null(text);
    assert_string_equal(text,
                        "op_side,op_type,op_name,op_full_name,op_occurrences,op_total_time(us),"
                        "op_avg_time(us),total_proportion,cuda_activity_cost_time(us),"
                        "cuda_activity_call_count\n"
                        "Device,Conv2D,Conv2D-op1,Default/network/Conv2D-op1,2,8.500,4.250,"
                        "0.944444,8.000,3\n"
                        "Device,ReLU,ReLU-op2,Default/network/ReLU-op2,1,0.500,0.500,0.055556,"
                        "0.000,0\n");
    free(text);
    text = slurp(prof, "gpu_op_type_info_0.csv");
    assert_non_null(text);
    assert_string_equal(text, "op_type,type_occurrences,total_time(us),total_proportion,"
                              "avg_time(us)\n"
                              "Conv2D,2,8.500,0.944444,4.250\n"
                              "ReLU,1,0.500,0.055556,0.500\n");
    free(text);
    /* Per kernel name, op and stream, longest total first: conv 8 us (avg 8000/3 ns),
     * the NCCL kernel 2 us, the copy 1 us (no launch dimensions). */
    text = slurp(prof, "gpu_activity_data_0.csv");
    assert_non_null(text);
    assert_string_equal(text,
                        "name,type,op_full_name,stream_id,block_dim,grid_dim,occurrences,"
                        "total_duration(us),avg_duration(us),max_duration(us),min_duration(us)\n"
                        "conv_kernel,cuLaunchKernel,Default/network/Conv2D-op1,7,\"128,1,1\","
                        "\"4,2,1\",3,8.000,2.666,4.000,1.000\n"
                        "ncclDevKernel_AllReduce_Sum_f32_RING_LL,cuLaunchKernel,,9,,,1,2.000,"
                        "2.000,2.000,2.000\n"
                        "MemcpyH2D,cuMemcpy,,7,,,1,1.000,1.000,1.000,1.000\n");
    free(text);

    /* Device busy 11 us of 23 us (47.83 %): idle rule; sync 2/23 = 8.7 %: no rule;
     * one pageable copy of 4096 B; launch delay 1 us. */
    text = slurp(prof, "advice_0.json");
    assert_non_null(text);
    assert_non_null(strstr(text, "\"gpu_idle\""));
    assert_non_null(strstr(text, "47.83"));
    assert_non_null(strstr(text, "\"gpu_pageable_copies\""));
    assert_non_null(strstr(text, "4096"));
    assert_null(strstr(text, "\"gpu_sync\""));
    assert_null(strstr(text, "\"gpu_dropped_records\""));
    assert_non_null(strstr(text, "1.00")); /* avg_launch_delay_us */
    free(text);
    nnpt_rm_rf(out);
    free(out);
}

/* sync_enable false (MindSpore's asynchronous mode): an op's time is its host time, the
 * launch: Conv2D 2 + 1 = 3 us, ReLU 0.5 us, of 3.5 us; the CUDA columns do not change. */
static void test_async_mode_times_the_launch(void **state)
{
    char *out = nnpt_mkdtemp(), prof[NNP_PATH_MAX];
    nnp_session_t *s = make_sync(out, 0, false);
    char *text;
    (void)state;
    record_run();
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    analyse(out);
    assert_int_equal(nnp__path_join(prof, sizeof(prof), out, "profiler"), NNP_OK);
    text = slurp(prof, "gpu_op_detail_info_0.csv");
    assert_non_null(text);
    assert_non_null(strstr(text, "\nDevice,Conv2D,Conv2D-op1,Default/network/Conv2D-op1,2,3.000,"
                                 "1.500,0.857143,8.000,3\n"
                                 "Device,ReLU,ReLU-op2,Default/network/ReLU-op2,1,0.500,0.500,"
                                 "0.142857,0.000,0\n"));
    free(text);
    nnpt_rm_rf(out);
    free(out);
}

/* Keys of every X event's object and of its args. */
static void keys_of(const cJSON *ev, char *buf, size_t cap)
{
    const cJSON *it;
    buf[0] = '\0';
    cJSON_ArrayForEach(it, ev)
    {
        strncat(buf, it->string, cap - strlen(buf) - 2);
        strncat(buf, ",", cap - strlen(buf) - 1);
    }
}

static const cJSON *first_with(const cJSON *arr, const char *tid, bool with_args)
{
    const cJSON *ev;
    cJSON_ArrayForEach(ev, arr)
    {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(ev, "tid");
        bool has_args = cJSON_GetObjectItemCaseSensitive(ev, "args") != NULL;
        if (cJSON_IsString(t) &&
            (tid == NULL ? strcmp(t->valuestring, "Ops") != 0 : strcmp(t->valuestring, tid) == 0) &&
            has_args == with_args)
            return ev;
    }
    return NULL;
}

static void test_timeline_matches_mindinsight(void **state)
{
    char *out = nnpt_mkdtemp(), prof[NNP_PATH_MAX], ours_keys[512], ref_keys[512];
    nnp_session_t *s = make(out, 0);
    char *text, *ref_text;
    cJSON *ours, *ref, *sum;
    const cJSON *a, *b, *args;
    struct stat st;
    (void)state;
    record_run();
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    analyse(out);
    snprintf(prof, sizeof(prof), "%s/profiler", out);
    text = slurp(prof, "gpu_timeline_display_0.json");
    assert_non_null(text);
    ours = cJSON_Parse(text);
    free(text);
    assert_true(cJSON_IsArray(ours));
    /* 3 ops, 3 kernels, 1 copy, 1 NCCL kernel, 2 CUDA calls. */
    assert_int_equal(cJSON_GetArraySize(ours), 10);
    a = first_with(ours, "CUDA API 42", true);
    assert_non_null(a);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(a, "name")->valuestring, "cudaMemcpy");
    args = cJSON_GetObjectItemCaseSensitive(a, "args");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(args, "type")->valuestring,
                        "cuda_runtime");

    if (stat(CORPUS_TIMELINE, &st) != 0) {
        fprintf(stderr, "SKIP: corpus timeline not found at %s\n", CORPUS_TIMELINE);
    } else {
        assert_int_equal(nnp__read_file(CORPUS_TIMELINE, MB, &ref_text, NULL), NNP_OK);
        ref = cJSON_Parse(ref_text);
        free(ref_text);
        assert_true(cJSON_IsArray(ref));
        /* An op: the same keys in the same order; tid "Ops"; pid a number. */
        a = first_with(ours, "Ops", false);
        b = first_with(ref, "Ops", false);
        assert_non_null(a);
        assert_non_null(b);
        keys_of(a, ours_keys, sizeof(ours_keys));
        keys_of(b, ref_keys, sizeof(ref_keys));
        assert_string_equal(ours_keys, ref_keys);
        /* An activity: tid a stream number as text, MindInsight's keys and args keys
         * first (we add what we know after them). */
        a = first_with(ours, "7", true);
        b = first_with(ref, NULL, true);
        assert_non_null(a);
        assert_non_null(b);
        keys_of(a, ours_keys, sizeof(ours_keys));
        keys_of(b, ref_keys, sizeof(ref_keys));
        assert_string_equal(ours_keys, ref_keys);
        keys_of(cJSON_GetObjectItemCaseSensitive(a, "args"), ours_keys, sizeof(ours_keys));
        keys_of(cJSON_GetObjectItemCaseSensitive(b, "args"), ref_keys, sizeof(ref_keys));
        assert_memory_equal(ours_keys, ref_keys, strlen(ref_keys));
        assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(a, "pid")));
        cJSON_Delete(ref);
    }
    /* The first kernel (11000-15000 ns) in us, with its launch and its op. */
    a = first_with(ours, "7", true);
    a = a->next; /* the copy (5000 ns) comes first in time; the conv kernel after it */
    while (a && strcmp(cJSON_GetObjectItemCaseSensitive(a, "name")->valuestring, "conv_kernel"))
        a = a->next;
    assert_non_null(a);
    assert_true(cJSON_GetObjectItemCaseSensitive(a, "dur")->valuedouble == 4.0);
    args = cJSON_GetObjectItemCaseSensitive(a, "args");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(args, "type")->valuestring,
                        "cuLaunchKernel");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(args, "op_full_name")->valuestring,
                        "Default/network/Conv2D-op1");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(args, "block_dim")->valuestring,
                        "128,1,1");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(args, "grid_dim")->valuestring, "4,2,1");
    cJSON_Delete(ours);

    /* Ops 2 + 1 + 0.5 us = 0.0035 ms; streams 7 and 9; 2 ops, 3 executions; depth 2. */
    text = slurp(prof, "gpu_timeline_summary_0.json");
    assert_non_null(text);
    sum = cJSON_Parse(text);
    free(text);
    assert_true(cJSON_GetObjectItemCaseSensitive(sum, "total_time")->valuedouble == 0.0035);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(sum, "num_of_streams")->valueint, 2);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(sum, "num_of_ops")->valueint, 2);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(sum, "op_exe_times")->valueint, 3);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(sum, "max_scope_name_num")->valueint, 2);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(sum, "omitted_events")->valueint, 0);
    cJSON_Delete(sum);
    nnpt_rm_rf(out);
    free(out);
}

/* timeline_limit 1 MB: 20000 kernel events (~200 B each) do not fit; the file stops near
 * 1 MB, stays valid JSON, and the summary counts what was left out. */
static void test_timeline_limit(void **state)
{
    char *out = nnpt_mkdtemp(), prof[NNP_PATH_MAX];
    nnp_session_t *s = make(out, 1);
    char *text;
    cJSON *arr, *sum;
    int n, omitted;
    (void)state;
    for (uint64_t i = 0; i < 20000; i++)
        conv_kernel(0, 1000 + i * 100, 1050 + i * 100);
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    analyse(out);
    snprintf(prof, sizeof(prof), "%s/profiler", out);
    text = slurp(prof, "gpu_timeline_display_0.json");
    assert_non_null(text);
    assert_true(strlen(text) < MB + 4096);
    arr = cJSON_Parse(text);
    free(text);
    assert_true(cJSON_IsArray(arr));
    n = cJSON_GetArraySize(arr);
    cJSON_Delete(arr);
    text = slurp(prof, "gpu_timeline_summary_0.json");
    sum = cJSON_Parse(text);
    free(text);
    omitted = cJSON_GetObjectItemCaseSensitive(sum, "omitted_events")->valueint;
    cJSON_Delete(sum);
    assert_true(n > 1000 && omitted > 0);
    assert_int_equal(n + omitted, 20000);
    nnpt_rm_rf(out);
    free(out);
}

/* A run without CUDA activity gets none of the GPU files. */
/* Launch delay with launch ids (the CUDA back end gives each call and its device work
 * CUPTI's correlation id, beside the op's id): every launch of an op counts, from the call
 * to the first device work it queued. Op corr 5 [1000, 9000]:
 *   cudaLaunchKernel [1000, 1500] launch 31 -> kernels [4000, 4200] and [6000, 6100]: 3000
 *   cudaLaunchKernel [2000, 2500] launch 32 -> kernel  [7000, 7200]:                   5000
 * average 4 us, evidence of the idle rule (busy 500 of 3200 ns). Without launch ids only
 * calls of no op (tagged ids) counted: none here. */
#define LAUNCH_DELAY_4US "\"avg_launch_delay_us\":4.00"
static void test_launch_delay_with_launch_ids(void **state)
{
    char *out = nnpt_mkdtemp(), prof[NNP_PATH_MAX], *text, *key;
    nnp_session_t *s = make(out, 0);
    nnp_call_t call = {0};
    nnp_kernel_t k = {0};
    (void)state;
    op("Default/network/Conv2D-op1", "Conv2D", 5, 1000, 9000);
    call.name = nnp_intern("cudaLaunchKernel");
    call.kind = NNP_CALL_CUDA_RUNTIME;
    call.correlation_id = 5;
    call.launch_id = 31;
    nnp_call_at(&call, 1000, 1500);
    call.launch_id = 32;
    nnp_call_at(&call, 2000, 2500);
    k.name = nnp_intern("conv_kernel");
    k.type = nnp_intern("cuLaunchKernel");
    k.stream_id = 7;
    k.correlation_id = 5;
    k.launch_id = 31;
    nnp_kernel_at(&k, 4000, 4200);
    nnp_kernel_at(&k, 6000, 6100);
    k.launch_id = 32;
    nnp_kernel_at(&k, 7000, 7200);
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    analyse(out);
    snprintf(prof, sizeof(prof), "%s/profiler", out);
    text = slurp(prof, "advice_0.json");
    assert_non_null(text);
    key = strstr(text, "\"avg_launch_delay_us\"");
    assert_non_null(key);
    assert_int_equal(strncmp(key, LAUNCH_DELAY_4US, strlen(LAUNCH_DELAY_4US)), 0);
    assert_false(isdigit((unsigned char)key[strlen(LAUNCH_DELAY_4US)]));
    free(text);
    nnpt_rm_rf(out);
    free(out);
}

static void test_no_gpu_files_without_cuda(void **state)
{
    char *out = nnpt_mkdtemp(), path[NNP_PATH_MAX], prof[NNP_PATH_MAX];
    nnp_session_t *s = make(out, 0);
    struct stat st;
    nnp_kernel_t k = {0};
    (void)state;
    op("Default/MatMul-op1", "MatMul", 5, 1000, 2000);
    k.name = nnp_intern("aicore_task");
    k.correlation_id = 5;
    nnp_kernel_at(&k, 1100, 1900);
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    analyse(out);
    assert_int_equal(nnp__path_join(prof, sizeof(prof), out, "profiler"), NNP_OK);
    assert_int_equal(nnp__path_join(path, sizeof(path), prof, "gpu_op_detail_info_0.csv"), NNP_OK);
    assert_int_not_equal(stat(path, &st), 0);
    assert_int_equal(nnp__path_join(path, sizeof(path), prof, "gpu_timeline_display_0.json"),
                     NNP_OK);
    assert_int_not_equal(stat(path, &st), 0);
    assert_int_equal(nnp__path_join(path, sizeof(path), prof, "op_statistic_0.csv"), NNP_OK);
    assert_int_equal(stat(path, &st), 0);
    nnpt_rm_rf(out);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_op_and_activity_files),
        cmocka_unit_test(test_async_mode_times_the_launch),
        cmocka_unit_test(test_timeline_matches_mindinsight),
        cmocka_unit_test(test_timeline_limit),
        cmocka_unit_test(test_launch_delay_with_launch_ids),
        cmocka_unit_test(test_no_gpu_files_without_cuda),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
