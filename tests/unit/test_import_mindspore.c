/* test_import_mindspore.c - the MindSpore importer (src/read/import_mindspore.c) on the
 * real 322-step step trace of the corpus, whose summary is checked against MindInsight's
 * rules applied by hand here (formats.md 1.1), on run_2, and on damaged files: each must
 * give a message naming the file and line or column, keep what is readable, never crash. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "model/model.h"
#include "read/importers.h"
#include "test_util.h"
#include "util/util.h"

#define CORPUS     NNP_SOURCE_DIR "/../shared/corpus"
#define RUN1_DIR   CORPUS "/mindinsight/run_1/normal_run/profiler"
#define RUN2_DIR   CORPUS "/mindinsight/run_2/normal_run/profiler"
#define RUN1_CSV   RUN1_DIR "/step_trace_raw_1_detail_time.csv"
#define RUN1_STEPS 322
/* MindInsight: 1e5 ticks of 10 ns per ms (util.py PER_MS_SYSCNT). */
#define TICKS_PER_MS   100000.0
#define LINE_MAX_BYTES 8192
#define MAX_COLS       64
#define MAX_JSON       (1 << 20)

static bool have_corpus(void)
{
    FILE *f = fopen(RUN1_CSV, "r");
    if (!f)
        return false;
    fclose(f);
    return true;
}

/* Splits a CSV line without quotes (the step trace has none) in place. */
static int split(char *line, char **f)
{
    int n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    f[n++] = line;
    for (char *p = line; *p && n < MAX_COLS; p++)
        if (*p == ',') {
            *p = '\0';
            f[n++] = p + 1;
        }
    return n;
}

static int col_of(char **h, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(h[i], name) == 0)
            return i;
    fail_msg("no column %s", name);
    return -1;
}

/* Python round(sum / n) for a mean of integers: half to even. */
static long long mean_half_even(long long sum, long long n)
{
    long long q = sum / n, r = sum % n;
    if (2 * r > n || (2 * r == n && (q & 1)))
        q++;
    return q;
}

/* MindInsight's to_millisecond: round(ticks / 1e5, 4), as the value Python prints. */
static double to_ms4(long long ticks)
{
    char b[64];
    snprintf(b, sizeof(b), "%.4f", (double)ticks / TICKS_PER_MS);
    return strtod(b, NULL);
}

static void percent(char *b, size_t cap, double part, double total)
{
    snprintf(b, cap, "%.2f%%", part / total * 100.0);
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *b = calloc(1, MAX_JSON);
    assert_non_null(f);
    assert_non_null(b);
    assert_true(fread(b, 1, MAX_JSON - 1, f) > 0);
    fclose(f);
    return b;
}

static void run_step_trace(nnp_model_t *m, const char *dir, int rank)
{
    nnp_actx_t c;
    nnp_step_trace_t st;
    memset(&c, 0, sizeof(c));
    c.m = m;
    c.out_dir = dir;
    c.rank = rank;
    assert_int_equal(nnp__model_finish(m), NNP_OK);
    assert_int_equal(nnp__step_trace_run(&c, &st), NNP_OK);
    assert_int_equal(nnp__step_trace_write(&c, &st), NNP_OK);
    nnp__step_trace_fini(&st);
}

static void test_run1_summary_exact(void **state)
{
    static const char *const phases[] = {"total", "iteration_interval", "fp_and_bp", "tail"};
    long long sum[4] = {0}, avg_row[4] = {0}, mean[4];
    double ms[4];
    char line[LINE_MAX_BYTES], hline[LINE_MAX_BYTES], *h[MAX_COLS], *f[MAX_COLS], b[64], path[512];
    int nh, idx[4], rows = 0;
    nnp_foreign_input_t in[4];
    nnp_model_t m;
    char *dir, *json;
    cJSON *root;
    FILE *fp;
    (void)state;
    if (!have_corpus()) {
        fprintf(stderr, "SKIP: %s\n", "corpus not found at " CORPUS);
        skip();
    }
    /* By hand: the CSV's step rows, step 1 left out, means rounded to a tick as 1.x
     * wrote its averages row, ms = ticks / 1e5 to 4 decimals, percents of the ms values. */
    fp = fopen(RUN1_CSV, "r");
    assert_non_null(fp);
    assert_non_null(fgets(hline, sizeof(hline), fp));
    nh = split(hline, h);
    for (int k = 0; k < 4; k++)
        idx[k] = col_of(h, nh, phases[k]);
    while (fgets(line, sizeof(line), fp)) {
        int n = split(line, f);
        assert_int_equal(n, nh);
        if (strcmp(f[0], "-") == 0) {
            for (int k = 0; k < 4; k++)
                avg_row[k] = strtoll(f[idx[k]], NULL, 10);
            continue;
        }
        rows++;
        assert_int_equal(strtoll(f[0], NULL, 10), rows);
        if (rows == 1)
            continue;
        for (int k = 0; k < 4; k++)
            sum[k] += strtoll(f[idx[k]], NULL, 10);
    }
    fclose(fp);
    assert_int_equal(rows, RUN1_STEPS);
    for (int k = 0; k < 4; k++) {
        mean[k] = mean_half_even(sum[k], rows - 1);
        /* The rule reproduces the file's own averages row exactly. */
        assert_int_equal(mean[k], avg_row[k]);
        ms[k] = to_ms4(mean[k]);
    }
    /* The values MindInsight shows (e.g. fp_and_bp 118.054: the exact mean would give
     * 118.0539; MindInsight reads the integer averages row). */
    assert_true(ms[0] == 205.3809);
    assert_true(ms[1] == 0.2038);
    assert_true(ms[2] == 118.054);
    assert_true(ms[3] == 87.1231);

    /* Ours. */
    assert_int_equal(nnp__importer_mindspore.find(RUN1_DIR, in, 4), 1);
    assert_int_equal(in[0].rank, 1);
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__importer_mindspore.import(in[0].path, &m), NNP_OK);
    assert_int_equal(m.steps.t.n, RUN1_STEPS);
    assert_int_equal(m.fp.t.n, RUN1_STEPS);
    assert_int_equal(m.bp.t.n, RUN1_STEPS);
    assert_int_equal(m.comms.t.n, RUN1_STEPS * 11);
    assert_true(m.info.step_avg_skip_first);
    assert_int_equal(m.info.rank_id, 1);
    assert_string_equal(m.info.source_format, "mindspore");
    assert_int_equal(m.kernels.t.n, 2817); /* output_timeline_data_1.txt rows */
    assert_int_equal(m.pipe_ops.t.n, 4);
    dir = nnpt_mkdtemp();
    run_step_trace(&m, dir, 1);
    snprintf(path, sizeof(path), "%s/step_trace_summary_1.json", dir);
    json = read_text(path);
    root = cJSON_Parse(json);
    assert_non_null(root);
    {
        static const char *const keys[] = {"total_time", "iteration_interval", "fp_and_bp", "tail"};
        for (int k = 0; k < 4; k++) {
            cJSON *v = cJSON_GetObjectItemCaseSensitive(root, keys[k]);
            assert_true(cJSON_IsNumber(v));
            if (v->valuedouble != ms[k])
                fail_msg("%s: ours %.6f, by hand %.6f", keys[k], v->valuedouble, ms[k]);
        }
        percent(b, sizeof(b), ms[1], ms[0]);
        assert_string_equal(
            cJSON_GetObjectItemCaseSensitive(root, "iteration_interval_percent")->valuestring, b);
        percent(b, sizeof(b), ms[2], ms[0]);
        assert_string_equal(
            cJSON_GetObjectItemCaseSensitive(root, "fp_and_bp_percent")->valuestring, b);
        percent(b, sizeof(b), ms[3], ms[0]);
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(root, "tail_percent")->valuestring, b);
        assert_int_equal(cJSON_GetObjectItemCaseSensitive(root, "total_steps")->valueint,
                         RUN1_STEPS);
    }
    cJSON_Delete(root);
    free(json);
    nnp__model_fini(&m);
    nnpt_rm_rf(dir);
    free(dir);
}

static void test_run2_imports(void **state)
{
    nnp_foreign_input_t in[4];
    nnp_model_t m;
    char *dir;
    (void)state;
    if (!have_corpus()) {
        fprintf(stderr, "SKIP: %s\n", "corpus not found at " CORPUS);
        skip();
    }
    assert_int_equal(nnp__importer_mindspore.find(RUN2_DIR, in, 4), 1);
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__importer_mindspore.import(in[0].path, &m), NNP_OK);
    /* One step; the hand-made all-zero last row is no step. No triples: not 1.x. */
    assert_int_equal(m.steps.t.n, 1);
    assert_int_equal(m.steps.start_ns[0], 15490789606875LL * 10);
    assert_int_equal(m.steps.end_ns[0], 15490791977780LL * 10);
    assert_false(m.info.step_avg_skip_first);
    assert_true(m.kernels.t.n > 0);
    dir = nnpt_mkdtemp();
    run_step_trace(&m, dir, 1);
    nnp__model_fini(&m);
    nnpt_rm_rf(dir);
    free(dir);
}

static void write_text(const char *dir, const char *name, const char *text)
{
    char path[512];
    FILE *f;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

#define HDR                                                                                        \
    "step_num,start_point,end_point,total,fp_point,bp_point,iteration_interval,fp_and_bp,tail\n"

static void test_truncated_csv(void **state)
{
    char *dir = nnpt_mkdtemp();
    nnp_model_t m;
    (void)state;
    write_text(dir, "step_trace_raw_0_detail_time.csv",
               HDR "1,100,200,100,110,190,0,80,10\n"
                   "2,200,300,100,210,290,10,80,10\n"
                   "3,300,40");
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    nnpt_log_capture();
    assert_int_equal(nnp__importer_mindspore.import(dir, &m), NNP_OK);
    assert_int_equal(m.steps.t.n, 2);
    assert_int_equal(m.steps.end_ns[1], 3000);
    assert_non_null(strstr(nnpt_log_text(), "step_trace_raw_0_detail_time.csv' line 4"));
    assert_non_null(strstr(nnpt_log_text(), "truncated"));
    nnpt_log_release();
    nnp__model_fini(&m);
    nnpt_rm_rf(dir);
    free(dir);
}

static void test_bad_cell_names_column(void **state)
{
    char *dir = nnpt_mkdtemp();
    nnp_model_t m;
    (void)state;
    write_text(dir, "step_trace_raw_0_detail_time.csv",
               HDR "1,100,200,100,110,190,0,80,10\n2,200,x3,100,210,290,10,80,10\n");
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    nnpt_log_capture();
    assert_int_equal(nnp__importer_mindspore.import(dir, &m), NNP_OK);
    assert_int_equal(m.steps.t.n, 1);
    assert_non_null(strstr(nnpt_log_text(), "line 3: column 'end_point': 'x3'"));
    nnpt_log_release();
    nnp__model_fini(&m);
    nnpt_rm_rf(dir);
    free(dir);
}

static void test_missing_column(void **state)
{
    char *dir = nnpt_mkdtemp();
    nnp_model_t m;
    (void)state;
    write_text(dir, "step_trace_raw_0_detail_time.csv", "step_num,start_point,total\n1,2,3\n");
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    nnpt_log_capture();
    assert_int_not_equal(nnp__importer_mindspore.import(dir, &m), NNP_OK);
    assert_non_null(strstr(nnpt_log_text(), "line 1: no column 'end_point'"));
    assert_int_equal(m.steps.t.n, 0);
    nnpt_log_release();
    nnp__model_fini(&m);
    nnpt_rm_rf(dir);
    free(dir);
}

/* A timeline whose header names a unit we cannot read is skipped with its column named;
 * the step trace of the same rank is still imported. The 2.x "us" header is read as ms. */
static void test_unit_mismatch(void **state)
{
    char *dir = nnpt_mkdtemp();
    nnp_model_t m;
    (void)state;
    write_text(dir, "step_trace_raw_0_detail_time.csv", HDR "1,100,200,100,110,190,0,80,10\n");
    write_text(dir, "output_timeline_data_0.txt",
               "op_name, stream_id, start_time(ns), duration(ms)\nA,1,2,3\n");
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    nnpt_log_capture();
    assert_int_equal(nnp__importer_mindspore.import(dir, &m), NNP_OK);
    assert_int_equal(m.steps.t.n, 1);
    assert_int_equal(m.kernels.t.n, 0);
    assert_non_null(strstr(nnpt_log_text(), "output_timeline_data_0.txt' line 1"));
    assert_non_null(strstr(nnpt_log_text(), "'start_time'"));
    nnpt_log_release();
    nnp__model_fini(&m);

    write_text(dir, "output_timeline_data_0.txt",
               "op_name, stream_id, start_time(us), duration(ms)\nA,1,438068.41592,0.00266\n");
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__importer_mindspore.import(dir, &m), NNP_OK);
    assert_int_equal(m.kernels.t.n, 1);
    assert_int_equal(m.kernels.start_ns[0], 438068415920LL);
    assert_int_equal(m.kernels.end_ns[0] - m.kernels.start_ns[0], 2660);
    nnp__model_fini(&m);
    nnpt_rm_rf(dir);
    free(dir);
}

static void test_empty_file(void **state)
{
    char *dir = nnpt_mkdtemp();
    nnp_model_t m;
    nnp_foreign_input_t in[2];
    (void)state;
    write_text(dir, "step_trace_raw_3_detail_time.csv", "");
    assert_int_equal(nnp__importer_mindspore.find(dir, in, 2), 1);
    assert_int_equal(in[0].rank, 3);
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    nnpt_log_capture();
    assert_int_not_equal(nnp__importer_mindspore.import(in[0].path, &m), NNP_OK);
    assert_non_null(strstr(nnpt_log_text(), "step_trace_raw_3_detail_time.csv' is empty"));
    nnpt_log_release();
    nnp__model_fini(&m);
    nnpt_rm_rf(dir);
    free(dir);
}

/* Synthetic 1.x-ordered triples: step 1 is left out of the averages. */
static void test_skip_first_synthetic(void **state)
{
    char *dir = nnpt_mkdtemp(), path[512], *json;
    nnp_model_t m;
    cJSON *root;
    (void)state;
    write_text(dir, "step_trace_raw_0_detail_time.csv",
               "step_num,start_point,end_point,total,fp_point,bp_point,iteration_interval,"
               "fp_and_bp,tail,s_1_a_start_point,s_1_a_end_point,s_1_a\n"
               "1,0,900000,900000,0,800000,0,800000,100000,810000,890000,80000\n"
               "2,900000,1000000,100000,910000,990000,10000,80000,10000,991000,999000,8000\n"
               "3,1000000,1100000,100000,1010000,1090000,10000,80000,10000,,,\n");
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__importer_mindspore.import(dir, &m), NNP_OK);
    assert_true(m.info.step_avg_skip_first);
    assert_int_equal(m.comms.t.n, 2);
    assert_int_equal(m.comms.stream_id[0], 1);
    run_step_trace(&m, dir, 0);
    snprintf(path, sizeof(path), "%s/step_trace_summary_0.json", dir);
    json = read_text(path);
    root = cJSON_Parse(json);
    /* Steps 2 and 3 only: total 1 ms, interval 0.1 ms, fp_and_bp 0.8 ms, tail 0.1 ms. */
    assert_true(cJSON_GetObjectItemCaseSensitive(root, "total_time")->valuedouble == 1.0);
    assert_true(cJSON_GetObjectItemCaseSensitive(root, "iteration_interval")->valuedouble == 0.1);
    assert_true(cJSON_GetObjectItemCaseSensitive(root, "fp_and_bp")->valuedouble == 0.8);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(root, "total_steps")->valueint, 3);
    cJSON_Delete(root);
    free(json);
    nnp__model_fini(&m);
    nnpt_rm_rf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run1_summary_exact), cmocka_unit_test(test_run2_imports),
        cmocka_unit_test(test_truncated_csv),      cmocka_unit_test(test_bad_cell_names_column),
        cmocka_unit_test(test_missing_column),     cmocka_unit_test(test_unit_mismatch),
        cmocka_unit_test(test_empty_file),         cmocka_unit_test(test_skip_first_synthetic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
