/* test_analyse.c - the analysis driver and its entry points: step_list parsing with the
 * seed's errors, offline analysis of a run killed with SIGKILL (every rank, results from
 * what was flushed), nnp_analyse sync and async on a live session, a directory holding
 * only MindSpore's host_info CSV, the op query, and the CLI's exit codes. */
#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

#define STEPS 20

typedef struct step_case {
    const char *text;
    int rc;
    uint64_t first, last;
    const char *msg;
} step_case_t;

static void test_step_list_parsing(void **state)
{
    static const step_case_t cases[] = {
        {"5", NNP_OK, 5, 5, NULL},
        {"3-7", NNP_OK, 3, 7, NULL},
        {"7,5,6", NNP_OK, 5, 7, NULL},
        {"0-0", NNP_OK, 0, 0, NULL},
        {"1,3", NNP_EINVAL, 0, 0,
         "The elements of the parameter step_list must be continuous integers."},
        {"1,1,2", NNP_EINVAL, 0, 0,
         "The elements of the parameter step_list must be continuous integers."},
        {"7-3", NNP_EINVAL, 0, 0,
         "The elements of the parameter step_list must be continuous integers."},
        {"a-3", NNP_EINVAL, 0, 0, "The elements of the parameter step_list must be integers."},
        {"1.5", NNP_EINVAL, 0, 0, "The elements of the parameter step_list must be integers."},
        {"", NNP_EINVAL, 0, 0, "The elements of the parameter step_list must be integers."},
        {"-3", NNP_EINVAL, 0, 0, "The elements of the parameter step_list must be integers."},
        {"2,", NNP_EINVAL, 0, 0, "The elements of the parameter step_list must be integers."},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        nnp_analyse_options_t o;
        nnp_analyse_options_init(&o);
        assert_int_equal(nnp_parse_step_list(cases[i].text, &o), cases[i].rc);
        if (cases[i].rc == NNP_OK) {
            assert_true(o.has_steps);
            assert_int_equal(o.step_first, cases[i].first);
            assert_int_equal(o.step_last, cases[i].last);
        } else {
            assert_false(o.has_steps);
            assert_string_equal(nnp_last_error(), cases[i].msg);
        }
    }
}

/* Records STEPS steps of 3 ops each with known times, on rank `rank` (the shared fixture,
 * test_util.h). */
static void record_run(const char *out, int rank, bool flush_only, int pipe_fd)
{
    nnpt_run_t r = {.rank = rank, .rank_size = 2, .steps = STEPS};
    r.flushed_fd = flush_only ? pipe_fd : 0;
    nnpt_record(out, &r, NULL, 0);
}

static cJSON *load_json(const char *path)
{
    FILE *f = fopen(path, "r");
    char *text;
    long n;
    cJSON *j;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    text = calloc(1, (size_t)n + 1);
    if (fread(text, 1, (size_t)n, f) != (size_t)n)
        n = 0;
    fclose(f);
    j = cJSON_Parse(text);
    free(text);
    return j;
}

static int count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    int n = 0, c;
    if (!f)
        return -1;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

/* Two ranks: rank 0 exits normally, rank 1 is killed with SIGKILL after a flush. Offline
 * analysis of the output path analyses both, each from its own raw directory. */
static void test_offline_analyse_after_sigkill(void **state)
{
    char *out = nnpt_mkdtemp();
    char path[8192];
    int fds[2], status;
    char ok;
    pid_t p0, p1;
    nnp_analyse_options_t o;
    cJSON *sum;
    (void)state;

    assert_int_equal(pipe(fds), 0);
    p0 = fork();
    if (p0 == 0) {
        record_run(out, 0, false, -1);
        _exit(0);
    }
    waitpid(p0, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    p1 = fork();
    if (p1 == 0) {
        close(fds[0]);
        record_run(out, 1, true, fds[1]);
        _exit(0);
    }
    close(fds[1]);
    assert_int_equal(read(fds[0], &ok, 1), 1);
    kill(p1, SIGKILL);
    waitpid(p1, &status, 0);
    close(fds[0]);
    assert_true(WIFSIGNALED(status));

    nnp_analyse_options_init(&o);
    o.quiet = true;
    o.jobs = 2;
    assert_int_equal(nnp_offline_analyse(out, &o), NNP_OK);
    for (int rank = 0; rank < 2; rank++) {
        snprintf(path, sizeof(path), "%s/profiler/step_trace_summary_%d.json", out, rank);
        sum = load_json(path);
        assert_non_null(sum);
        assert_int_equal(cJSON_GetObjectItem(sum, "total_steps")->valueint, STEPS);
        cJSON_Delete(sum);
        /* Header + one row per op type. */
        snprintf(path, sizeof(path), "%s/profiler/op_statistic_%d.csv", out, rank);
        assert_int_equal(count_lines(path), 2);
        snprintf(path, sizeof(path), "%s/profiler/profiler_info_%d.json", out, rank);
        sum = load_json(path);
        assert_non_null(sum);
        assert_int_equal(cJSON_GetObjectItem(sum, "rank_id")->valueint, rank);
        /* The killed rank never finalized its info.json. */
        assert_string_equal(cJSON_GetObjectItem(sum, "run_state")->valuestring,
                            rank == 0 ? "finalized" : "created");
        cJSON_Delete(sum);
    }
    nnpt_rm_rf(out);
    free(out);
}

static void test_offline_analyse_needs_profiler_dir(void **state)
{
    char *dir = nnpt_mkdtemp();
    char want[8192];
    (void)state;
    assert_int_equal(nnp_offline_analyse(dir, NULL), NNP_ENOENT);
    snprintf(want, sizeof(want), "There must be a profiler folder in the data path: %s.", dir);
    assert_string_equal(nnp_last_error(), want);
    nnpt_rm_rf(dir);
    free(dir);
}

/* nnp_analyse on a live session: stops it, analyses; async runs in a child. --steps
 * restricts the step trace to the requested steps. */
static void test_analyse_session_sync_and_async(void **state)
{
    char *out = nnpt_mkdtemp();
    char path[8192];
    nnp_options_t o;
    nnp_session_t *s;
    nnp_analyse_options_t ao;
    nnp_op_t op = {0};
    (void)state;

    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", out);
    o.sample_interval_ms = 0;
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    op.name = nnp_intern("Default/ReLU-op1");
    op.type = nnp_intern("ReLU");
    for (uint64_t k = 0; k < 10; k++) {
        nnp_step_begin_at(k, 0, 1000 + k * 100);
        nnp_op_at(&op, 1010 + k * 100, 1050 + k * 100);
        nnp_step_end_at(k, 0, 1100 + k * 100);
    }
    nnp_analyse_options_init(&ao);
    ao.quiet = true;
    assert_int_equal(nnp_parse_step_list("3-5", &ao), NNP_OK);
    assert_int_equal(nnp_analyse(s, &ao), NNP_OK);
    assert_false(nnp_is_collecting());
    snprintf(path, sizeof(path), "%s/profiler/step_trace_raw_0_detail_time.csv", out);
    /* Header + steps 3, 4, 5 + the averages row. */
    assert_int_equal(count_lines(path), 5);

    ao.has_steps = false;
    ao.async = true;
    unlink(path);
    assert_int_equal(nnp_analyse(s, &ao), NNP_OK);
    assert_int_equal(nnp_analyse_wait(), NNP_OK);
    assert_int_equal(count_lines(path), 12);
    assert_int_equal(nnp_analyse_wait(), NNP_OK); /* nothing pending */
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    nnpt_rm_rf(out);
    free(out);
}

/* `nnprof analyse` on a directory holding only MindSpore's host_info_0.csv. */
static void test_host_info_csv_only_directory(void **state)
{
    char *dir = nnpt_mkdtemp();
    char path[8192], cmd[9000];
    FILE *f;
    (void)state;

    snprintf(path, sizeof(path), "%s/host_info_0.csv", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("tid,pid,parent_pid,module_name,event,stage,level,start_end,custom_info,"
          "memory_usage(kB),time_stamp(us)\n"
          "7,100,1,Dataset,GetNext,Run,1,0,,0,1000\n"
          "7,100,1,Dataset,GetNext,Run,1,1,,2048,1250\n",
          f);
    fclose(f);
    snprintf(cmd, sizeof(cmd), "%s/nnprof analyse --quiet %s >/dev/null 2>&1", NNP_BINARY_DIR, dir);
    assert_int_equal(system(cmd), 0);
    /* MindSpore's CSV is other tools' data: results go to DIR/nnprof_output, never beside
     * (or over) the user's files. */
    snprintf(path, sizeof(path), "%s/nnprof_output/host_info/dataset_0.csv", dir);
    assert_int_equal(count_lines(path), 2);
    snprintf(path, sizeof(path), "%s/host_info/dataset_0.csv", dir);
    assert_int_equal(count_lines(path), -1);
    snprintf(path, sizeof(path), "%s/nnprof_output/host_info/timeline_0.json", dir);
    {
        cJSON *j = load_json(path);
        assert_non_null(j);
        assert_int_equal(cJSON_GetArraySize(j), 1);
        assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(j, 0), "dur")->valueint, 250);
        cJSON_Delete(j);
    }
    nnpt_rm_rf(dir);
    free(dir);
}

static void test_op_query_and_cli_exit_codes(void **state)
{
    char *out = nnpt_mkdtemp();
    char cmd[9000];
    const char *names[] = {"MatMul", "Default/MatMul-op1", "Absent"};
    const char *empty[] = {""};
    char *json = NULL;
    cJSON *arr;
    pid_t p;
    int status;
    (void)state;

    p = fork();
    if (p == 0) {
        record_run(out, 0, false, -1);
        _exit(0);
    }
    waitpid(p, &status, 0);
    assert_int_equal(nnp_op_analyse(out, names, 3, -1, &json), NNP_OK);
    arr = cJSON_Parse(json);
    nnp_free(json);
    assert_int_equal(cJSON_GetArraySize(arr), 3);
    /* 20 steps x 3 MatMul ops of 1000 ns each; op1 once per step. */
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(arr, 0), "count")->valueint, 60);
    assert_true(cJSON_GetObjectItem(cJSON_GetArrayItem(arr, 0), "total_time_us")->valuedouble ==
                60.0);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(arr, 1), "count")->valueint, 20);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(arr, 2), "count")->valueint, 0);
    cJSON_Delete(arr);
    assert_int_equal(nnp_op_analyse(out, empty, 1, -1, &json), NNP_EINVAL);
    assert_null(json);
    assert_int_equal(nnp_op_analyse(out, names, 1, 7, &json), NNP_ENOENT);

    snprintf(cmd, sizeof(cmd), "%s/nnprof analyse --quiet %s >/dev/null 2>&1", NNP_BINARY_DIR, out);
    assert_int_equal(WEXITSTATUS(system(cmd)), 0);
    snprintf(cmd, sizeof(cmd), "%s/nnprof analyse --steps 4,2 %s >/dev/null 2>&1", NNP_BINARY_DIR,
             out);
    assert_int_equal(WEXITSTATUS(system(cmd)), 2);
    snprintf(cmd, sizeof(cmd), "%s/nnprof analyse --jobs 0 %s >/dev/null 2>&1", NNP_BINARY_DIR,
             out);
    assert_int_equal(WEXITSTATUS(system(cmd)), 2);
    snprintf(cmd, sizeof(cmd), "%s/nnprof analyse %s/nonexistent >/dev/null 2>&1", NNP_BINARY_DIR,
             out);
    assert_int_equal(WEXITSTATUS(system(cmd)), 1);
    snprintf(cmd, sizeof(cmd), "%s/nnprof query op -d %s MatMul >/dev/null 2>&1", NNP_BINARY_DIR,
             out);
    assert_int_equal(WEXITSTATUS(system(cmd)), 0);
    snprintf(cmd, sizeof(cmd), "%s/nnprof query op -d %s '' >/dev/null 2>&1", NNP_BINARY_DIR, out);
    assert_int_equal(WEXITSTATUS(system(cmd)), 2);
    nnpt_rm_rf(out);
    free(out);
}

/* Counts trace_view.json events with the given "cat" (and, when graph >= 0, that graph). */
static int count_cat(const char *trace, const char *cat, int graph)
{
    cJSON *arr = load_json(trace), *ev;
    int n = 0;
    assert_non_null(arr);
    cJSON_ArrayForEach(ev, arr)
    {
        cJSON *c = cJSON_GetObjectItem(ev, "cat"), *args = cJSON_GetObjectItem(ev, "args");
        if (!cJSON_IsString(c) || strcmp(c->valuestring, cat) != 0)
            continue;
        if (graph >= 0 && cJSON_GetObjectItem(args, "graph_id")->valueint != graph)
            continue;
        n++;
    }
    cJSON_Delete(arr);
    return n;
}

/* Timeline kind=summary, --graph-id and --rank filters. */
static void test_timeline_kind_and_filters(void **state)
{
    char *out = nnpt_mkdtemp();
    char cmd[9000], trace[8192], found[4096];
    nnp_options_t o;
    nnp_session_t *s;
    nnp_op_t op = {0};
    FILE *p;
    (void)state;

    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", out);
    o.sample_interval_ms = 0;
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    op.name = nnp_intern("Default/Add-op1");
    op.type = nnp_intern("Add");
    /* Steps alternate between graph 0 and graph 1, with one op of the same graph each. */
    for (uint64_t k = 0; k < 6; k++) {
        op.graph_id = (uint32_t)(k % 2);
        nnp_step_begin_at(k, (uint32_t)(k % 2), 1000 + k * 100);
        nnp_op_at(&op, 1010 + k * 100, 1050 + k * 100);
        nnp_step_end_at(k, (uint32_t)(k % 2), 1100 + k * 100);
    }
    snprintf(found, sizeof(found), "%s", nnp_session_raw_dir(s));
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    snprintf(trace, sizeof(trace), "%s/ASCEND_PROFILER_OUTPUT/trace_view.json", found);

    snprintf(cmd, sizeof(cmd), "%s/nnprof analyse --quiet %s", NNP_BINARY_DIR, out);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(count_cat(trace, "host_op", -1), 6);
    assert_int_equal(count_cat(trace, "step", -1) >= 6, 1);

    snprintf(cmd, sizeof(cmd), "%s/nnprof analyse --quiet --kind summary %s", NNP_BINARY_DIR, out);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(count_cat(trace, "host_op", -1), 0);
    assert_true(count_cat(trace, "step", -1) >= 6);

    snprintf(cmd, sizeof(cmd), "%s/nnprof analyse --quiet --graph-id 1 %s", NNP_BINARY_DIR, out);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(count_cat(trace, "host_op", -1), 3);
    assert_int_equal(count_cat(trace, "host_op", 1), 3);

    /* --rank 5: this run is rank 0: an error naming the ranks there are, nothing written
     * (issue 10: a filter that matches nothing never passes quietly). */
    unlink(trace);
    {
        char text[4096], want[8192];
        snprintf(cmd, sizeof(cmd), "%s/nnprof analyse --quiet --rank 5 %s", NNP_BINARY_DIR, out);
        assert_int_equal(nnpt_run_cmd(cmd, text, sizeof(text)), 1);
        snprintf(want, sizeof(want), "nnprof: %s: --rank 5: no such rank; the data holds rank 0\n",
                 out);
        assert_string_equal(text, want);
    }
    p = fopen(trace, "r");
    assert_null(p);
    snprintf(cmd, sizeof(cmd), "%s/nnprof analyse --kind full %s 2>/dev/null", NNP_BINARY_DIR, out);
    assert_int_equal(WEXITSTATUS(system(cmd)), 2);
    nnpt_rm_rf(out);
    free(out);
}

/* nnprof summary prints each section from the analysed files, and its exit codes. */
static void test_summary_command(void **state)
{
    char *out = nnpt_mkdtemp();
    char cmd[9000], text[16384];
    size_t len;
    pid_t p;
    int status;
    FILE *f;
    (void)state;

    p = fork();
    if (p == 0) {
        record_run(out, 0, false, -1);
        _exit(0);
    }
    waitpid(p, &status, 0);
    snprintf(cmd, sizeof(cmd), "%s/nnprof analyse --quiet %s 2>/dev/null", NNP_BINARY_DIR, out);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof(cmd), "%s/nnprof summary %s", NNP_BINARY_DIR, out);
    f = popen(cmd, "r");
    assert_non_null(f);
    len = fread(text, 1, sizeof(text) - 1, f);
    text[len] = '\0';
    assert_int_equal(WEXITSTATUS(pclose(f)), 0);
    assert_non_null(strstr(text, "== rank 0"));
    /* 20 steps x 3 MatMul ops: the only type, all of the op time. */
    assert_non_null(strstr(text, "MatMul"));
    assert_non_null(strstr(text, "100.00%"));
    assert_non_null(strstr(text, "Step phases (average of 20 steps)"));
    assert_non_null(strstr(text, "Advisor ("));
    assert_non_null(strstr(text, "trace_view.json"));
    snprintf(cmd, sizeof(cmd), "%s/nnprof summary %s/nothing-here 2>/dev/null", NNP_BINARY_DIR,
             out);
    assert_int_equal(WEXITSTATUS(system(cmd)), 1);
    snprintf(cmd, sizeof(cmd), "%s/nnprof summary 2>/dev/null", NNP_BINARY_DIR);
    assert_int_equal(WEXITSTATUS(system(cmd)), 2);
    nnpt_rm_rf(out);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step_list_parsing),
        cmocka_unit_test(test_offline_analyse_after_sigkill),
        cmocka_unit_test(test_offline_analyse_needs_profiler_dir),
        cmocka_unit_test(test_analyse_session_sync_and_async),
        cmocka_unit_test(test_host_info_csv_only_directory),
        cmocka_unit_test(test_op_query_and_cli_exit_codes),
        cmocka_unit_test(test_timeline_kind_and_filters),
        cmocka_unit_test(test_summary_command),
    };
    nnp_log_set_level(NNP_LOG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
