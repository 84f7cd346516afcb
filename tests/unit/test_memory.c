/* test_memory.c - tensor memory analysis (src/analyse/memory.c) on hand-built models with
 * the answers worked out in the comments: running totals, the peak in the middle and its
 * live tensors, a free without allocation (outside the window), tensors never freed,
 * static memory over ops and over steps, a lost free, down-sampling of > 2,000 events,
 * the breakdown cap, no memory events, and allocation failures. US(x) is x us in ns. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "fixture_model.h"
#include "model/model.h"
#include "test_util.h"
#include "util/util.h"

#define NS_PER_US 1000
#define US(x)     ((int64_t)(x)*NS_PER_US)
/* memory_record of the down-sampling test is ~200 KB. */
#define MAX_ALLOC_FAILS 200
#define GIB             (1024ull * 1024 * 1024)
/* Down-sampling test: alloc/free pairs (2 events each), the one with the big tensor. */
#define N_PAIRS    3000
#define PEAK_PAIR  1234
#define PEAK_BYTES 1000000u
#define MAX_POINTS 2000
/* Breakdown test: more live tensors at the peak than the 1,000 listed. */
#define N_LIVE      1100
#define BREAKDOWN_N 1000
/* Random test: events, addresses in the pool, largest tensor. */
#define N_RANDOM         20000
#define N_ADDRS          300
#define MAX_RANDOM_BYTES 5000

typedef nnpt_afx_t fixture_t;

static int setup(void **state)
{
    fixture_t *fx;
    if (nnpt_afx_setup(state) != 0)
        return -1;
    fx = *state;
    fx->f.mem_peak_bytes = -1;
    fx->f.mem_capacity_bytes = -1;
    return 0;
}

static void add_op(nnp_model_t *m, int64_t start, int64_t end, const char *name)
{
    size_t i = nnp__table_push(&m->ops.t);
    assert_true(i != SIZE_MAX);
    m->ops.start_ns[i] = start;
    m->ops.end_ns[i] = end;
    m->ops.name[i] = nnp__model_intern_cstr(m, name);
}

static void add_alloc(nnp_model_t *m, int64_t ts, uint64_t addr, uint64_t bytes, const char *name,
                      const char *owner, uint32_t dev)
{
    size_t i = nnp__table_push(&m->mem.t);
    assert_true(i != SIZE_MAX);
    m->mem.ts_ns[i] = ts;
    m->mem.is_alloc[i] = 1;
    m->mem.address[i] = addr;
    m->mem.bytes[i] = bytes;
    m->mem.name[i] = nnp__model_intern_cstr(m, name);
    m->mem.owner_op[i] = nnp__model_intern_cstr(m, owner);
    m->mem.device_id[i] = dev;
}

/* A free as the recorder stores it: address and size only. */
static void add_free(nnp_model_t *m, int64_t ts, uint64_t addr, uint64_t bytes)
{
    size_t i = nnp__table_push(&m->mem.t);
    assert_true(i != SIZE_MAX);
    m->mem.ts_ns[i] = ts;
    m->mem.is_alloc[i] = 0;
    m->mem.address[i] = addr;
    m->mem.bytes[i] = bytes;
}

/* Entries of the output directory (temporary files included). */
static int count_files(const fixture_t *fx)
{
    DIR *d = opendir(fx->dir);
    struct dirent *de;
    int n = 0;
    assert_non_null(d);
    while ((de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

static size_t count_str(const char *s, const char *part)
{
    size_t n = 0;
    for (const char *p = strstr(s, part); p; p = strstr(p + 1, part))
        n++;
    return n;
}

#define RECORD_HEADER                                                                              \
    "Device_id,Component,Timestamp(us),Total Allocated(KB),Total Reserved(KB),Device\n"
#define OPERATOR_HEADER                                                                            \
    "Device_id,Name,Size(KB),Allocation Time(us),Duration(us),Allocation Total Allocated(KB),"     \
    "Allocation Total Reserved(KB),Release Total Allocated(KB),Release Total Reserved(KB),"        \
    "Device\n"

/* Ops: Conv 10-20, ReLU 20-30, Add 30-40 us, so static memory must be live over 10..40.
 * Events (us, bytes, running total):
 *   5  alloc weight 4096 @0x1000                 4096   (before the first op)
 *   12 alloc conv_out 2048 @0x2000               6144
 *   15 free @0x9000 (1000 B, never allocated)    6144   (allocated outside the window)
 *   22 alloc unnamed 1024 @0x3000 by ReLU        7168   peak, while ReLU (op 1) runs
 *   25 free @0x2000 (conv_out)                   5120
 *   32 alloc add_out 512 @0x2000 on device 1     5632   (the address is reused)
 *   35 free @0x3000                              4608
 * weight and add_out are never freed; weight is static (allocated at 5 <= 10, live to
 * the end), add_out is not (allocated at 32 > 10): static 4096 B. */
static void build_basic(nnp_model_t *m)
{
    add_op(m, US(10), US(20), "Default/Conv-op1");
    add_op(m, US(20), US(30), "Default/ReLU-op2");
    add_op(m, US(30), US(40), "Default/Add-op3");
    add_alloc(m, US(5), 0x1000, 4096, "weight", "Default/Init-op0", 0);
    add_alloc(m, US(12), 0x2000, 2048, "conv_out", "Default/Conv-op1", 0);
    add_free(m, US(15), 0x9000, 1000);
    add_alloc(m, US(22), 0x3000, 1024, "", "Default/ReLU-op2", 0);
    add_free(m, US(25), 0x2000, 2048);
    add_alloc(m, US(32), 0x2000, 512, "add_out", "Default/Add-op3", 1);
    add_free(m, US(35), 0x3000, 1024);
    assert_int_equal(nnp__model_finish(m), NNP_OK);
}

#define BASIC_SUMMARY                                                                              \
    "{\"capacity\":null,\"allocations\":4,\"deallocations\":3,"                                    \
    "\"peak_mem\":6.67572021484375e-06,\"static_mem\":3.814697265625e-06,"                         \
    "\"capacity_bytes\":null,\"peak_bytes\":7168,\"static_bytes\":4096,"                           \
    "\"allocations_outside_window\":1,\"never_freed\":2}\n"

/* KB = bytes / 1024, 3 decimals half up: 1000 B = 0.977, 512 B = 0.500. operator_memory
 * lists tensors as their life ends (the outside free at 15, conv_out at 25, the unnamed
 * tensor - named after its owner op - at 35), then the never-freed ones in allocation
 * order with empty Duration and Release columns. GB = bytes / 1024^3. */
static void test_basic_files(void **state)
{
    fixture_t *fx = *state;
    build_basic(&fx->m);
    assert_int_equal(nnp__memory_write(&fx->c, NULL, &fx->f), NNP_OK);
    nnpt_afx_expect_file(fx, "memory_record_0.csv",
                         RECORD_HEADER "0,APP,5.000,4.000,4.000,CPU:0\n"
                                       "0,APP,12.000,6.000,6.000,CPU:0\n"
                                       "0,APP,15.000,6.000,6.000,CPU:0\n"
                                       "0,APP,22.000,7.000,7.000,CPU:0\n"
                                       "0,APP,25.000,5.000,5.000,CPU:0\n"
                                       "1,APP,32.000,5.500,5.500,CPU:1\n"
                                       "0,APP,35.000,4.500,4.500,CPU:0\n");
    nnpt_afx_expect_file(fx, "operator_memory_0.csv",
                         OPERATOR_HEADER
                         "0,,-0.977,,,,,6.000,6.000,CPU:0\n"
                         "0,conv_out,2.000,12.000,13.000,6.000,6.000,5.000,5.000,CPU:0\n"
                         "0,Default/ReLU-op2,1.000,22.000,13.000,7.000,7.000,4.500,4.500,CPU:0\n"
                         "0,weight,4.000,5.000,,4.000,4.000,,,CPU:0\n"
                         "1,add_out,0.500,32.000,,5.500,5.500,,,CPU:1\n");
    nnpt_afx_expect_file(fx, "memory_usage_summary_0.json", BASIC_SUMMARY);
    /* The peak at 22 us: ReLU (op 1) is the last op started. Live tensors, largest first:
     * weight (before any op: op indexes null), conv_out (Conv..ReLU), the unnamed one. */
    nnpt_afx_expect_file(
        fx, "memory_usage_details_0.json",
        "{\"capacity_bytes\":null,\"static_bytes\":4096,\"events\":7,"
        "\"peak\":{\"t\":22.000,\"op_index\":1,\"op\":\"Default/ReLU-op2\",\"allocated\":7168,"
        "\"live_tensors\":3,\"breakdown\":["
        "{\"name\":\"weight\",\"size\":4096,\"owner_op\":\"Default/Init-op0\",\"start\":5.000,"
        "\"end\":null,\"start_op_index\":null,\"end_op_index\":null,\"static\":true},"
        "{\"name\":\"conv_out\",\"size\":2048,\"owner_op\":\"Default/Conv-op1\","
        "\"start\":12.000,\"end\":25.000,\"start_op_index\":0,\"end_op_index\":1,"
        "\"static\":false},"
        "{\"name\":\"\",\"size\":1024,\"owner_op\":\"Default/ReLU-op2\",\"start\":22.000,"
        "\"end\":35.000,\"start_op_index\":1,\"end_op_index\":2,\"static\":false}],"
        "\"others_count\":0,\"others_bytes\":0},"
        "\"lines\":[{\"t\":5.000,\"op_index\":null,\"op\":\"\",\"allocated\":4096},"
        "{\"t\":12.000,\"op_index\":0,\"op\":\"Default/Conv-op1\",\"allocated\":6144},"
        "{\"t\":15.000,\"op_index\":0,\"op\":\"Default/Conv-op1\",\"allocated\":6144},"
        "{\"t\":22.000,\"op_index\":1,\"op\":\"Default/ReLU-op2\",\"allocated\":7168},"
        "{\"t\":25.000,\"op_index\":1,\"op\":\"Default/ReLU-op2\",\"allocated\":5120},"
        "{\"t\":32.000,\"op_index\":2,\"op\":\"Default/Add-op3\",\"allocated\":5632},"
        "{\"t\":35.000,\"op_index\":2,\"op\":\"Default/Add-op3\",\"allocated\":4608}]}\n");
    assert_true(fx->f.mem_peak_bytes == 7168.0);
    assert_true(isnan(fx->f.mem_capacity_bytes));
}

/* Steps 1 [100,200) and 2 [200,300) us: static memory must be live over 100..300.
 *   50  alloc p 1 MiB     1048576   freed at 350: static (alive across both steps)
 *   90  alloc r 2048      1050624   freed at 250: not static (freed inside step 2)
 *   100 alloc s 3000      1053624   never freed, allocated at the span start: static
 *   150 alloc q 4096      1057720   peak; freed at 260: dynamic, crosses the step boundary
 *   250 free r            1055672
 *   260 free q            1051576
 *   350 free p            3000
 * Static = 1048576 + 3000 = 1051576. 3000 B = 2.930 KB (952/1024 = 0.9297). */
static void build_steps(nnp_model_t *m, nnp_step_row_t rows[2])
{
    add_alloc(m, US(50), 0xA000, 1048576, "p", "", 0);
    add_alloc(m, US(90), 0xB000, 2048, "r", "", 0);
    add_alloc(m, US(100), 0xC000, 3000, "s", "", 0);
    add_alloc(m, US(150), 0xD000, 4096, "q", "", 0);
    add_free(m, US(250), 0xB000, 2048);
    add_free(m, US(260), 0xD000, 4096);
    add_free(m, US(350), 0xA000, 1048576);
    assert_int_equal(nnp__model_finish(m), NNP_OK);
    memset(rows, 0, 2 * sizeof(nnp_step_row_t));
    rows[0].step_id = 1;
    rows[0].begin_ns = US(100);
    rows[0].end_ns = US(200);
    rows[1].step_id = 2;
    rows[1].begin_ns = US(200);
    rows[1].end_ns = US(300);
}

static void test_static_over_steps(void **state)
{
    fixture_t *fx = *state;
    nnp_step_row_t rows[2];
    nnp_step_trace_t st = {rows, 2, false, 0, 0};
    build_steps(&fx->m, rows);
    fx->c.rank = 3;
    fx->c.memory_capacity_bytes = 16 * GIB;
    assert_int_equal(nnp__memory_write(&fx->c, &st, &fx->f), NNP_OK);
    nnpt_afx_expect_file(fx, "operator_memory_3.csv",
                         OPERATOR_HEADER
                         "0,r,2.000,90.000,160.000,1026.000,1026.000,1030.930,1030.930,CPU:0\n"
                         "0,q,4.000,150.000,110.000,1032.930,1032.930,1026.930,1026.930,CPU:0\n"
                         "0,p,1024.000,50.000,300.000,1024.000,1024.000,2.930,2.930,CPU:0\n"
                         "0,s,2.930,100.000,,1028.930,1028.930,,,CPU:0\n");
    nnpt_afx_expect_file(fx, "memory_usage_summary_3.json",
                         "{\"capacity\":16,\"allocations\":4,\"deallocations\":3,"
                         "\"peak_mem\":0.000985078513622284,\"static_mem\":0.0009793564677238464,"
                         "\"capacity_bytes\":17179869184,\"peak_bytes\":1057720,"
                         "\"static_bytes\":1051576,\"allocations_outside_window\":0,"
                         "\"never_freed\":1}\n");
    /* No ops: every op index is null. Largest first: p, q, s, r. */
    nnpt_afx_expect_contains(
        fx, "memory_usage_details_3.json",
        "\"peak\":{\"t\":150.000,\"op_index\":null,\"op\":\"\",\"allocated\":1057720,"
        "\"live_tensors\":4,\"breakdown\":["
        "{\"name\":\"p\",\"size\":1048576,\"owner_op\":\"\",\"start\":50.000,\"end\":350.000,"
        "\"start_op_index\":null,\"end_op_index\":null,\"static\":true},"
        "{\"name\":\"q\",\"size\":4096,\"owner_op\":\"\",\"start\":150.000,\"end\":260.000,"
        "\"start_op_index\":null,\"end_op_index\":null,\"static\":false},"
        "{\"name\":\"s\",\"size\":3000,\"owner_op\":\"\",\"start\":100.000,\"end\":null,"
        "\"start_op_index\":null,\"end_op_index\":null,\"static\":true},"
        "{\"name\":\"r\",\"size\":2048,\"owner_op\":\"\",\"start\":90.000,\"end\":250.000,"
        "\"start_op_index\":null,\"end_op_index\":null,\"static\":false}],"
        "\"others_count\":0,\"others_bytes\":0}");
    assert_true(fx->f.mem_peak_bytes == 1057720.0);
    assert_true(fx->f.mem_capacity_bytes == (double)(16 * GIB));

    /* A step still open at the end: the span never ends, so only never-freed tensors
     * allocated by its start are static - s, 3000 B; p (freed at 350) no longer is. */
    rows[1].end_ns = NNP_OPEN_END;
    assert_int_equal(nnp__memory_write(&fx->c, &st, &fx->f), NNP_OK);
    nnpt_afx_expect_contains(fx, "memory_usage_summary_3.json",
                             "\"static_mem\":2.7939677238464355e-06,");
    nnpt_afx_expect_contains(fx, "memory_usage_summary_3.json", "\"static_bytes\":3000,");
}

/* No ops, no steps: the span is the events' own, 1..3 us.
 *   1 alloc x1 100 @0x10, 2 alloc x2 200 @0x10 (x1's free was lost), 3 free @0x10.
 * The free releases the most recent allocation at the address (x2); x1 stays live to the
 * end and, allocated at the span start, is static. 100 B = 0.098 KB, 200 B = 0.195,
 * 300 B = 0.293. */
static void test_lost_free_keeps_both(void **state)
{
    fixture_t *fx = *state;
    add_alloc(&fx->m, US(1), 0x10, 100, "x1", "", 0);
    add_alloc(&fx->m, US(2), 0x10, 200, "x2", "", 0);
    add_free(&fx->m, US(3), 0x10, 200);
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    assert_int_equal(nnp__memory_write(&fx->c, NULL, &fx->f), NNP_OK);
    nnpt_afx_expect_file(fx, "memory_record_0.csv",
                         RECORD_HEADER "0,APP,1.000,0.098,0.098,CPU:0\n"
                                       "0,APP,2.000,0.293,0.293,CPU:0\n"
                                       "0,APP,3.000,0.098,0.098,CPU:0\n");
    nnpt_afx_expect_file(fx, "operator_memory_0.csv",
                         OPERATOR_HEADER "0,x2,0.195,2.000,1.000,0.293,0.293,0.098,0.098,CPU:0\n"
                                         "0,x1,0.098,1.000,,0.098,0.098,,,CPU:0\n");
    nnpt_afx_expect_contains(
        fx, "memory_usage_summary_0.json",
        "\"peak_bytes\":300,\"static_bytes\":100,\"allocations_outside_window\":0,"
        "\"never_freed\":1}");
}

/* N_PAIRS alloc/free pairs, pair i at 2i us (alloc) and 2i+1 us (free), i % 7 + 1 bytes
 * each except pair PEAK_PAIR with PEAK_BYTES: the peak is event 2 x PEAK_PAIR at 2468 us.
 * The line keeps at most 2,000 points, among them the exact peak, the first and last. */
static void test_downsampling_keeps_peak(void **state)
{
    fixture_t *fx = *state;
    char *details, *record;
    for (uint64_t i = 0; i < N_PAIRS; i++) {
        uint64_t bytes = i == PEAK_PAIR ? PEAK_BYTES : i % 7 + 1;
        add_alloc(&fx->m, US(2 * i), 0x100000 + 64 * i, bytes, "t", "", 0);
        add_free(&fx->m, US(2 * i + 1), 0x100000 + 64 * i, bytes);
    }
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    assert_int_equal(nnp__memory_write(&fx->c, NULL, &fx->f), NNP_OK);
    details = nnpt_afx_read(fx, "memory_usage_details_0.json");
    assert_non_null(strstr(details, "\"peak\":{\"t\":2468.000,\"op_index\":null,\"op\":\"\","
                                    "\"allocated\":1000000,\"live_tensors\":1,"));
    assert_non_null(
        strstr(details, "{\"t\":2468.000,\"op_index\":null,\"op\":\"\",\"allocated\":1000000}"));
    assert_non_null(
        strstr(details, "\"lines\":[{\"t\":0.000,\"op_index\":null,\"op\":\"\",\"allocated\":1}"));
    assert_non_null(
        strstr(details, "{\"t\":5999.000,\"op_index\":null,\"op\":\"\",\"allocated\":0}]}\n"));
    /* One "allocated" per point, plus the peak's. */
    assert_true(count_str(details, "\"allocated\":") - 1 <= MAX_POINTS);
    assert_true(count_str(details, "\"allocated\":") - 1 > MAX_POINTS / 2);
    free(details);
    record = nnpt_afx_read(fx, "memory_record_0.csv");
    assert_int_equal(count_str(record, "\n"), 2 * N_PAIRS + 1);
    free(record);
    assert_true(fx->f.mem_peak_bytes == (double)PEAK_BYTES);
}

/* N_LIVE tensors of 1..N_LIVE bytes, never freed: the peak is the last event with all
 * live; the breakdown lists the 1,000 largest, the other 100 (1..100 B) are summed:
 * 5050 B. */
static void test_breakdown_is_capped(void **state)
{
    fixture_t *fx = *state;
    char *details;
    for (uint64_t i = 1; i <= N_LIVE; i++)
        add_alloc(&fx->m, US(i), 0x1000 * i, i, "", "", 0);
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    assert_int_equal(nnp__memory_write(&fx->c, NULL, &fx->f), NNP_OK);
    details = nnpt_afx_read(fx, "memory_usage_details_0.json");
    assert_non_null(strstr(details, "\"live_tensors\":1100,\"breakdown\":[{\"name\":\"\","
                                    "\"size\":1100,"));
    assert_int_equal(count_str(details, "\"static\":"), BREAKDOWN_N);
    assert_non_null(strstr(details, "\"size\":101,"));
    assert_null(strstr(details, "\"size\":100,"));
    assert_non_null(strstr(details, "\"others_count\":100,\"others_bytes\":5050}"));
    free(details);
}

/* Random allocs and frees over a small pool of aligned addresses (many collisions and
 * deletions in the live-tensor hash), checked against a plain per-address simulation:
 * peak, tensors never freed, frees of never-allocated addresses, and the final total. */
static void test_random_matches_simulation(void **state)
{
    fixture_t *fx = *state;
    uint64_t live[N_ADDRS] = {0}, total = 0, peak = 0, outside = 0, never = 0, seed = 42;
    char want[256], *summary;
    for (uint64_t i = 0; i < N_RANDOM; i++) {
        uint64_t k, bytes;
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        k = (seed >> 33) % N_ADDRS;
        bytes = (seed >> 13) % MAX_RANDOM_BYTES + 1;
        if (live[k] == 0 && (seed & 1)) {
            live[k] = bytes;
            total += bytes;
            add_alloc(&fx->m, US(i), 0x1000 * (k + 1), bytes, "", "", 0);
        } else {
            outside += live[k] == 0;
            total -= live[k];
            live[k] = 0;
            add_free(&fx->m, US(i), 0x1000 * (k + 1), bytes);
        }
        peak = total > peak ? total : peak;
    }
    for (size_t k = 0; k < N_ADDRS; k++)
        never += live[k] != 0;
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    assert_int_equal(nnp__memory_write(&fx->c, NULL, &fx->f), NNP_OK);
    snprintf(want, sizeof(want),
             "\"peak_bytes\":%llu,\"static_bytes\":0,\"allocations_outside_window\":%llu,"
             "\"never_freed\":%llu}",
             (unsigned long long)peak, (unsigned long long)outside, (unsigned long long)never);
    summary = nnpt_afx_read(fx, "memory_usage_summary_0.json");
    if (!strstr(summary, want))
        fail_msg("summary %s lacks %s", summary, want);
    free(summary);
    snprintf(want, sizeof(want), "\"allocated\":%llu}]}\n", (unsigned long long)total);
    nnpt_afx_expect_contains(fx, "memory_usage_details_0.json", want);
}

/* No memory events (ops only): nothing written, OK, peak unknown, capacity passed on. */
static void test_no_events_no_files(void **state)
{
    fixture_t *fx = *state;
    add_op(&fx->m, US(1), US(2), "Default/Conv-op1");
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    fx->c.memory_capacity_bytes = 8 * GIB;
    assert_int_equal(nnp__memory_write(&fx->c, NULL, &fx->f), NNP_OK);
    assert_int_equal(count_files(fx), 0);
    assert_true(isnan(fx->f.mem_peak_bytes));
    assert_true(fx->f.mem_capacity_bytes == (double)(8 * GIB));
}

/* Pretty output is the same document, indented. */
static void test_pretty_summary(void **state)
{
    fixture_t *fx = *state;
    build_basic(&fx->m);
    fx->c.pretty = true;
    assert_int_equal(nnp__memory_write(&fx->c, NULL, &fx->f), NNP_OK);
    nnpt_afx_expect_contains(fx, "memory_usage_summary_0.json", "\n  \"peak_bytes\": 7168,\n");
}

/* Fails each allocation in turn on a model: every failure is NNP_ENOMEM and leaves no
 * file behind (ASan checks for leaks); the first run that succeeds with the failure
 * still pending has covered every allocation. */
static void run_failures(fixture_t *fx)
{
    int n;
    for (n = 1; n < MAX_ALLOC_FAILS; n++) {
        int rc;
        nnp__alloc_fail_at((uint64_t)n);
        rc = nnp__memory_write(&fx->c, NULL, &fx->f);
        if (rc == NNP_OK) {
            assert_true(nnp__alloc_fail_pending());
            break;
        }
        assert_int_equal(rc, NNP_ENOMEM);
        assert_int_equal(count_files(fx), 0);
    }
    nnp__alloc_fail_at(0);
    assert_true(n > 1 && n < MAX_ALLOC_FAILS);
    assert_int_equal(count_files(fx), 4);
}

static void test_alloc_failures(void **state)
{
    fixture_t *fx = *state;
    build_basic(&fx->m);
    run_failures(fx);
    nnpt_afx_expect_file(fx, "memory_usage_summary_0.json", BASIC_SUMMARY);
}

/* The same over > 2,000 events (bucket buffers, hash growth). */
static void test_alloc_failures_many(void **state)
{
    fixture_t *fx = *state;
    for (uint64_t i = 0; i < N_PAIRS; i++)
        add_alloc(&fx->m, US(i), 0x1000 * i, i + 1, "", "", 0);
    assert_int_equal(nnp__model_finish(&fx->m), NNP_OK);
    run_failures(fx);
    nnpt_afx_expect_contains(fx, "memory_usage_summary_0.json", "\"never_freed\":3000}");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_basic_files, setup, nnpt_afx_teardown),
        cmocka_unit_test_setup_teardown(test_static_over_steps, setup, nnpt_afx_teardown),
        cmocka_unit_test_setup_teardown(test_lost_free_keeps_both, setup, nnpt_afx_teardown),
        cmocka_unit_test_setup_teardown(test_downsampling_keeps_peak, setup, nnpt_afx_teardown),
        cmocka_unit_test_setup_teardown(test_breakdown_is_capped, setup, nnpt_afx_teardown),
        cmocka_unit_test_setup_teardown(test_random_matches_simulation, setup, nnpt_afx_teardown),
        cmocka_unit_test_setup_teardown(test_no_events_no_files, setup, nnpt_afx_teardown),
        cmocka_unit_test_setup_teardown(test_pretty_summary, setup, nnpt_afx_teardown),
        cmocka_unit_test_setup_teardown(test_alloc_failures, setup, nnpt_afx_teardown),
        cmocka_unit_test_setup_teardown(test_alloc_failures_many, setup, nnpt_afx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
