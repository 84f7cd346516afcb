/* test_info.c - `nnprof info` (issue #6): exact counts in its --json output for a run
 * recorded with known records, the corrupt chunk of a damaged data file counted (exit 0),
 * and the exit codes for a missing directory (1) and usage errors (2). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "test_util.h"

#define STEPS        8
#define OPS_PER_STEP 4
#define FIRST_STEP   5
#define STEP_NS      50000
#define T0_NS        2000000
#define OUT_CAP      (1u << 20)

static void record_run(const char *out)
{
    nnp_options_t o;
    nnp_session_t *s;
    nnp_op_t op = {0};
    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", out);
    o.sample_interval_ms = 0;
    o.rank_id = 3;
    o.device_id = 1;
    o.msproftx = true; /* marks are recorded only with msproftx */
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    op.type = nnp_intern("Conv2D");
    op.name = nnp_intern("Default/Conv2D-op1");
    for (uint64_t k = 0; k < STEPS; k++) {
        uint64_t t = T0_NS + k * STEP_NS;
        nnp_step_begin_at(FIRST_STEP + k, 0, t);
        for (uint64_t j = 0; j < OPS_PER_STEP; j++)
            nnp_op_at(&op, t + 100 + j * 1000, t + 600 + j * 1000);
        nnp_step_end_at(FIRST_STEP + k, 0, t + STEP_NS - 1);
    }
    nnp_mark_at(nnp_intern("done"), T0_NS + 10);
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
}

/* Runs `nnprof info ARGS`, returns its exit status and its stdout in buf. */
static int run_info(const char *args, char *buf, size_t cap)
{
    char cmd[8192];
    FILE *p;
    size_t n;
    snprintf(cmd, sizeof(cmd), "%s/nnprof info %s 2>/dev/null", NNP_BINARY_DIR, args);
    p = popen(cmd, "r");
    assert_non_null(p);
    n = fread(buf, 1, cap - 1, p);
    buf[n] = '\0';
    return WEXITSTATUS(pclose(p));
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

static const cJSON *only_rank(const cJSON *doc)
{
    const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(doc, "ranks");
    assert_true(cJSON_IsArray(ranks));
    assert_int_equal(cJSON_GetArraySize(ranks), 1);
    return cJSON_GetArrayItem(ranks, 0);
}

static void test_info_run(void **state)
{
    char *out = nnpt_mkdtemp();
    char *buf = malloc(OUT_CAP);
    const cJSON *r, *kinds, *opts;
    cJSON *doc;
    (void)state;
    record_run(out);
    assert_int_equal(run_info(out, buf, OUT_CAP), 0);
    assert_non_null(strstr(buf, "steps: 8 (ids 5..12)"));
    assert_int_equal(run_info(out, buf, OUT_CAP), 0);
    {
        char args[4200];
        snprintf(args, sizeof(args), "--json %s", out);
        assert_int_equal(run_info(args, buf, OUT_CAP), 0);
    }
    doc = cJSON_Parse(buf);
    assert_non_null(doc);
    r = only_rank(doc);
    assert_int_equal(num(r, "rank"), 3);
    assert_int_equal(num(r, "device"), 1);
    assert_int_equal(num(r, "steps"), STEPS);
    assert_int_equal(num(r, "first_step"), FIRST_STEP);
    assert_int_equal(num(r, "last_step"), FIRST_STEP + STEPS - 1);
    assert_int_equal(num(r, "first_ns"), T0_NS);
    assert_int_equal(num(r, "last_ns"), T0_NS + STEPS * STEP_NS - 1);
    assert_int_equal(num(r, "records"), STEPS * (2 + OPS_PER_STEP) + 1);
    kinds = cJSON_GetObjectItemCaseSensitive(r, "records_per_kind");
    assert_int_equal(num(kinds, "op"), STEPS * OPS_PER_STEP);
    assert_int_equal(num(kinds, "step_begin"), STEPS);
    assert_int_equal(num(kinds, "step_end"), STEPS);
    assert_int_equal(num(kinds, "mark"), 1);
    assert_null(cJSON_GetObjectItemCaseSensitive(kinds, "kernel"));
    assert_int_equal(num(r, "chunks_corrupt"), 0);
    assert_int_equal(num(r, "chunks_truncated"), 0);
    assert_int_equal(num(r, "events_lost"), 0);
    assert_int_equal(num(r, "files_aged_out"), 0);
    assert_true(num(r, "windows") >= 1);
    opts = cJSON_GetObjectItemCaseSensitive(r, "options");
    assert_true(cJSON_IsObject(opts));
    assert_non_null(cJSON_GetObjectItemCaseSensitive(opts, "output_path"));
    cJSON_Delete(doc);
    free(buf);
    nnpt_rm_rf(out);
    free(out);
}

/* A byte flipped inside the data file's chunk: the chunk is counted corrupt, exit 0. */
static void test_info_damaged(void **state)
{
    char *out = nnpt_mkdtemp();
    char *buf = malloc(OUT_CAP), cmd[8192], data[4200];
    FILE *p, *f;
    long size;
    int c;
    cJSON *doc;
    const cJSON *r;
    (void)state;
    record_run(out);
    snprintf(cmd, sizeof(cmd), "ls %s/profiler/PROF_*/data_000001.nnp", out);
    p = popen(cmd, "r");
    assert_non_null(fgets(data, sizeof(data), p));
    pclose(p);
    data[strcspn(data, "\n")] = '\0';
    f = fopen(data, "r+b");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fseek(f, size / 2, SEEK_SET);
    c = fgetc(f);
    fseek(f, size / 2, SEEK_SET);
    fputc(c ^ 0xFF, f);
    fclose(f);
    snprintf(cmd, sizeof(cmd), "--json %s", out);
    assert_int_equal(run_info(cmd, buf, OUT_CAP), 0);
    doc = cJSON_Parse(buf);
    assert_non_null(doc);
    r = only_rank(doc);
    assert_int_equal(num(r, "chunks_corrupt"), 1);
    assert_true(num(r, "records") < STEPS * (2 + OPS_PER_STEP) + 1);
    cJSON_Delete(doc);
    free(buf);
    nnpt_rm_rf(out);
    free(out);
}

static void test_info_exit_codes(void **state)
{
    char *out = nnpt_mkdtemp();
    char *buf = malloc(OUT_CAP), args[4200];
    (void)state;
    snprintf(args, sizeof(args), "%s/nonexistent", out);
    assert_int_equal(run_info(args, buf, OUT_CAP), 1);
    assert_int_equal(run_info(out, buf, OUT_CAP), 1); /* exists, holds no raw data */
    assert_int_equal(run_info("", buf, OUT_CAP), 2);
    assert_int_equal(run_info("--bogus x", buf, OUT_CAP), 2);
    free(buf);
    nnpt_rm_rf(out);
    free(out);
}

/* Other tools' data: nnprof info says what the importers found (CANN corpus, 2 ranks). */
static void test_info_foreign_data(void **state)
{
    char dir[4096], args[4200], out[65536];
    cJSON *doc;
    const cJSON *ranks;
    FILE *probe;
    (void)state;
    snprintf(dir, sizeof(dir), "%s/../shared/corpus/mindinsight/profiler", NNP_SOURCE_DIR);
    probe = fopen(dir, "r");
    if (!probe) {
        printf("SKIP: corpus not found at %s\n", dir);
        skip();
    }
    fclose(probe);
    snprintf(args, sizeof(args), "--json %s", dir);
    assert_int_equal(run_info(args, out, sizeof(out)), 0);
    doc = cJSON_Parse(out);
    assert_non_null(doc);
    ranks = cJSON_GetObjectItemCaseSensitive(doc, "ranks");
    assert_int_equal(cJSON_GetArraySize(ranks), 2);
    for (int r = 0; r < 2; r++) {
        const cJSON *o = cJSON_GetArrayItem(ranks, r);
        assert_string_equal(cJSON_GetObjectItem(o, "format")->valuestring, "cann-msprof");
        assert_int_equal((int)num(o, "rank"), r);
        assert_int_equal((int)num(o, "steps"), 10);
        /* MANIFEST 1.4: 1,370 AI_CORE + 20 AI_CPU tasks per rank; one AllReduce per step. */
        assert_int_equal((int)num(o, "kernels"), 1390);
        assert_int_equal((int)num(o, "communication_ops"), 10);
    }
    cJSON_Delete(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_info_run),
        cmocka_unit_test(test_info_damaged),
        cmocka_unit_test(test_info_exit_codes),
        cmocka_unit_test(test_info_foreign_data),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
