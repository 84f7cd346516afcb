/* test_inputs.c - what `nnprof analyse` analyses and never loses (issue 10, analyse side):
 * other tools' files are never written and their results go to nnprof_output/; two runs
 * of one rank are refused by name; a filter that matches nothing is an error naming what
 * exists; child processes' raw directories join their parent's rank; a raw directory that
 * lost meta.nnp or info.json is recovered with a warning saying what was inferred; numbers
 * of info.json are validated. Real recorded runs (test_util.h fixture), the real CLI, and
 * exact expected texts. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analyse/driver.h"
#include "model/model.h"
#include "read/raw_import.h"
#include "test_util.h"

/* The exit status of the user's own child in test_users_children_left_alone. */
#define USER_CHILD_EXIT 7
#define CLI             NNP_BINARY_DIR "/nnprof"
#define STEPS           20
#define PATH_CAP        4096
/* A path built from another plus a file name. */
#define FULL_CAP (PATH_CAP + 512)
#define CMD_CAP  16384
#define OUT_CAP  65536

/* ---- helpers ---- */

static const char *base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static cJSON *load_json(const char *path)
{
    char *text = nnpt_read_file(path);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    free(text);
    return j;
}

static void save_json(const char *path, const cJSON *j)
{
    char *text = cJSON_PrintUnformatted(j);
    FILE *f = fopen(path, "w");
    assert_non_null(text);
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    cJSON_free(text);
}

static void set_number(cJSON *obj, const char *key, double v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
    cJSON_AddNumberToObject(obj, key, v);
}

/* Makes raw's info.json that of a child process of parent (CONTRACTS.md section 2). */
static void make_child(const char *raw, const char *parent_name, int parent_pid, const char *kind)
{
    char path[FULL_CAP];
    cJSON *j;
    snprintf(path, sizeof(path), "%s/info.json", raw);
    j = load_json(path);
    assert_non_null(j);
    set_number(j, "parent_pid", parent_pid);
    cJSON_AddStringToObject(j, "parent_raw_dir", parent_name);
    cJSON_AddStringToObject(j, "child_kind", kind);
    save_json(path, j);
    cJSON_Delete(j);
}

static int info_pid(const char *raw)
{
    char path[FULL_CAP];
    cJSON *j;
    int pid;
    snprintf(path, sizeof(path), "%s/info.json", raw);
    j = load_json(path);
    assert_non_null(j);
    pid = cJSON_GetObjectItem(j, "pid")->valueint;
    cJSON_Delete(j);
    return pid;
}

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* Line of op_statistic_{rank}.csv for type, e.g. "MatMul,HOST_CPU,60,60.000,...". */
static void op_stat_line(const char *dir, int rank, const char *type, char *line, size_t cap)
{
    char path[FULL_CAP];
    FILE *f;
    snprintf(path, sizeof(path), "%s/op_statistic_%d.csv", dir, rank);
    f = fopen(path, "r");
    line[0] = '\0';
    if (!f)
        return;
    while (fgets(line, (int)cap, f)) {
        if (strncmp(line, type, strlen(type)) == 0 && line[strlen(type)] == ',')
            break;
        line[0] = '\0';
    }
    fclose(f);
    line[strcspn(line, "\n")] = '\0';
}

/* ---- other tools' data is never written ---- */

/* Fingerprint of every file under dir except nnprof_output/: "path size crc" lines. */
static void fingerprint(const char *dir, char *out, size_t cap)
{
    char cmd[CMD_CAP];
    snprintf(cmd, sizeof(cmd),
             "cd '%s' && find . -path ./nnprof_output -prune -o -type f -print | LC_ALL=C sort | "
             "xargs cksum",
             dir);
    assert_int_equal(nnpt_run_cmd(cmd, out, cap), 0);
}

/* issue 10: analysing a copy of mindinsight/profiler overwrote its MindSpore
 * step_trace_raw_0_detail_time.csv with ours, and a second analyse read ours as input. */
static void test_foreign_data_never_written(void **state)
{
    char *tmp, in[FULL_CAP], cmd[CMD_CAP], before[OUT_CAP], after[OUT_CAP], out[OUT_CAP],
        want[CMD_CAP], p1[FULL_CAP + 512];
    char *first, *second;
    (void)state;
    if (!nnpt_have_corpus())
        skip();
    tmp = nnpt_mkdtemp();
    snprintf(in, sizeof(in), "%s/mi", tmp);
    snprintf(cmd, sizeof(cmd), "cp -r '%s/mindinsight/profiler' '%s' && chmod -R u+w '%s'",
             NNPT_CORPUS, in, in);
    assert_int_equal(system(cmd), 0);
    fingerprint(in, before, sizeof(before));
    assert_non_null(strstr(before, "./step_trace_raw_0_detail_time.csv"));

    assert_int_equal(nnpt_cli(out, sizeof(out), "analyse --quiet '%s' 2>/dev/null", in), 0);
    /* The closing line says where the results are. */
    snprintf(want, sizeof(want),
             "nnprof: results of ranks 0, 1 in %s/nnprof_output; read them with: nnprof summary "
             "%s/nnprof_output\n",
             in, in);
    assert_string_equal(out, want);
    fingerprint(in, after, sizeof(after));
    assert_string_equal(before, after);
    snprintf(p1, sizeof(p1), "%s/nnprof_output/op_statistic_0.csv", in);
    first = nnpt_read_file(p1);
    assert_non_null(first);

    /* Again: the same inputs (not our results) give the same results; the first run's are
     * kept as .old. */
    assert_int_equal(nnpt_cli(out, sizeof(out), "analyse --quiet '%s' 2>/dev/null", in), 0);
    fingerprint(in, after, sizeof(after));
    assert_string_equal(before, after);
    second = nnpt_read_file(p1);
    assert_non_null(second);
    assert_string_equal(first, second);
    free(first);
    free(second);
    snprintf(p1, sizeof(p1), "%s/nnprof_output/op_statistic_0.csv.old", in);
    assert_true(exists(p1));

    /* Our results given as data, and the data folder given as output: refused. */
    assert_int_equal(nnpt_cli(out, sizeof(out), "analyse '%s/nnprof_output'", in), 1);
    snprintf(want, sizeof(want),
             "nnprof: %s/nnprof_output: '%s/nnprof_output' holds nnprof's analysis results "
             "(profiler_info_*.json), not profiling data: read them with 'nnprof summary "
             "%s/nnprof_output', or analyse the folder the data is in\n",
             in, in, in);
    assert_string_equal(out, want);
    assert_int_equal(nnpt_cli(out, sizeof(out), "analyse -o '%s' '%s'", in, in), 1);
    snprintf(want, sizeof(want),
             "nnprof: %s: output folder '%s' is the data folder: other tools' files are never "
             "written, so results need a folder of their own (default: %s/nnprof_output)\n",
             in, in, in);
    assert_string_equal(out, want);
    fingerprint(in, after, sizeof(after));
    assert_string_equal(before, after);
    /* summary reads the default folder when given the data folder. */
    assert_int_equal(nnpt_cli(out, sizeof(out), "summary '%s'", in), 0);
    assert_non_null(strstr(out, "== rank 0"));
    nnpt_rm_rf(tmp);
    free(tmp);
}

/* ---- two runs, one rank ---- */

static void test_two_runs_of_one_rank_refused(void **state)
{
    char *out = nnpt_mkdtemp(), a[PATH_CAP], b[PATH_CAP], text[OUT_CAP], want[CMD_CAP],
         path[FULL_CAP];
    nnpt_run_t r = {.rank = 0, .steps = STEPS};
    (void)state;
    nnpt_record_in_child(out, &r, a, sizeof(a));
    nnpt_record_in_child(out, &r, b, sizeof(b));
    if (strcmp(base(a), base(b)) > 0) {
        char t[PATH_CAP];
        memcpy(t, a, sizeof(t));
        memcpy(a, b, sizeof(t));
        memcpy(b, t, sizeof(t));
    }
    assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet '%s'", out), 1);
    snprintf(want, sizeof(want),
             "nnprof: %s: rank 0 was recorded by 2 runs in one folder: %s (pid %d), %s (pid %d); "
             "results of different runs never share files, so nothing was analysed: analyse one "
             "run at a time (nnprof analyse -o OUT DIR/PROF_...) or move the other runs' "
             "directories out of the folder\n",
             out, base(a), info_pid(a), base(b), info_pid(b));
    assert_string_equal(text, want);
    snprintf(path, sizeof(path), "%s/profiler/profiler_info_0.json", out);
    assert_false(exists(path));
    /* One run named directly is analysed. */
    assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet '%s' >/dev/null", a), 0);
    assert_true(exists(path));
    nnpt_rm_rf(out);
    free(out);
}

/* ---- the program's own children ---- */

/* A program analysing in-process (nnp_offline_analyse; nnprof.torch at the end of a
 * profile) has children of its own, DataLoader workers. Analysing 2 ranks in child
 * processes must wait for those only: a user's child that ended meanwhile stays the
 * user's to wait for (exit 7), and both ranks are analysed. The analysis once called
 * wait(), reaped the user's child and stopped one rank early. */
static void test_users_children_left_alone(void **state)
{
    char *out = nnpt_mkdtemp(), path[FULL_CAP];
    nnpt_run_t r0 = {.rank = 0, .rank_size = 2, .steps = STEPS};
    nnpt_run_t r1 = {.rank = 1, .rank_size = 2, .steps = STEPS};
    nnp_analyse_options_t o;
    int status = 0;
    pid_t user;
    (void)state;
    nnpt_record_in_child(out, &r0, NULL, 0);
    nnpt_record_in_child(out, &r1, NULL, 0);
    fflush(NULL);
    user = fork();
    if (user == 0)
        _exit(USER_CHILD_EXIT); /* a zombie until its parent waits for it */
    assert_true(user > 0);
    nnp_analyse_options_init(&o);
    o.quiet = true;
    o.jobs = 2;
    assert_int_equal(nnp_offline_analyse(out, &o), NNP_OK);
    assert_int_equal(waitpid(user, &status, 0), user);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), USER_CHILD_EXIT);
    for (int rank = 0; rank < 2; rank++) {
        snprintf(path, sizeof(path), "%s/profiler/profiler_info_%d.json", out, rank);
        assert_true(exists(path));
    }
    nnpt_rm_rf(out);
    free(out);
}

/* ---- filters that match nothing ---- */

static void test_filters_that_match_nothing(void **state)
{
    char *out = nnpt_mkdtemp(), text[OUT_CAP], want[CMD_CAP], path[FULL_CAP];
    char *before, *after;
    nnpt_run_t r0 = {.rank = 0, .rank_size = 2, .steps = STEPS};
    nnpt_run_t r1 = {.rank = 1, .rank_size = 2, .steps = STEPS};
    (void)state;
    nnpt_record_in_child(out, &r0, NULL, 0);
    nnpt_record_in_child(out, &r1, NULL, 0);
    assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet '%s' >/dev/null", out), 0);
    snprintf(path, sizeof(path), "%s/profiler/step_trace_raw_0_detail_time.csv", out);
    before = nnpt_read_file(path);
    assert_non_null(before);

    /* --steps beyond the run: an error naming the steps there are; results untouched. */
    assert_int_equal(
        nnpt_cli(text, sizeof(text), "analyse --quiet --jobs 1 --steps 600-700 '%s'", out), 1);
    snprintf(want, sizeof(want),
             "[nnprof] error: rank 0: --steps 600-700 selects no step: its 20 steps have ids "
             "0-19; nothing was written\n"
             "[nnprof] error: rank 1: --steps 600-700 selects no step: its 20 steps have ids "
             "0-19; nothing was written\n"
             "nnprof: %s: 2 of 2 ranks failed to analyse (see the log above)\n",
             out);
    assert_string_equal(text, want);
    after = nnpt_read_file(path);
    assert_non_null(after);
    assert_string_equal(before, after);
    free(after);
    snprintf(path, sizeof(path), "%s/profiler/step_trace_raw_0_detail_time.csv.old", out);
    assert_false(exists(path));

    /* --rank that is not there. */
    assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet --rank 7 '%s'", out), 1);
    snprintf(want, sizeof(want), "nnprof: %s: --rank 7: no such rank; the data holds ranks 0, 1\n",
             out);
    assert_string_equal(text, want);
    /* A filter that matches: only that rank, and the closing line says so. */
    assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet --rank 1 '%s' 2>/dev/null", out),
                     0);
    snprintf(want, sizeof(want),
             "nnprof: results of rank 1 in %s/profiler (earlier results kept as *.old); read "
             "them with: nnprof summary %s/profiler\n",
             out, out);
    assert_string_equal(text, want);
    free(before);
    nnpt_rm_rf(out);
    free(out);
}

/* ---- child processes ---- */

/* A forked child's raw directory (hand-made: info.json names the parent) joins the
 * parent's rank with its own pid. As the parent recorded work, the child works for it (a
 * DataLoader worker, model_view.c): its ops are in the rank's model and timeline, not in
 * the rank's op statistics. */
static void test_child_dirs_join_their_parent(void **state)
{
    char *out = nnpt_mkdtemp(), parent[PATH_CAP], child[PATH_CAP], text[OUT_CAP], line[512],
         prof[FULL_CAP];
    nnpt_run_t pr = {.rank = 0, .steps = STEPS};
    nnpt_run_t cr = {.rank = 0, .steps = 5, .ops_per_step = 1, .no_step_marks = true};
    const char *dirs[2];
    nnp_model_t m;
    int pids = 0;
    (void)state;
    nnpt_record_in_child(out, &pr, parent, sizeof(parent));
    nnpt_record_in_child(out, &cr, child, sizeof(child));
    /* Without the link they are two runs of rank 0: refused (checked above). */
    assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet '%s'", out), 1);
    make_child(child, base(parent), info_pid(parent), "fork");
    assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet '%s' 2>/dev/null", out), 0);
    snprintf(prof, sizeof(prof), "%s/profiler", out);
    /* 20 steps x 3 parent ops, 1000 ns each; the child's 5 left out. */
    op_stat_line(prof, 0, "MatMul", line, sizeof(line));
    assert_string_equal(line, "MatMul,HOST_CPU,60,60.000,1.000,1.000,1.000,100.00");

    /* In the model the child's thread keeps its own pid, and the child is a worker. */
    dirs[0] = parent;
    dirs[1] = child;
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__import_raw_group(dirs, 2, &m), NNP_OK);
    assert_int_equal(m.ops.t.n, 65);
    for (size_t i = 0; i < m.threads.t.n; i++)
        pids += m.threads.pid[i] == (uint32_t)info_pid(child);
    assert_int_equal(pids, 1);
    assert_int_equal(m.info.n_worker_pids, 1);
    assert_int_equal(m.info.worker_pids[0], (uint32_t)info_pid(child));
    nnp__model_fini(&m);

    /* The parent's directory gone: the children form the rank on their own. */
    nnpt_rm_rf(parent);
    assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet '%s' 2>/dev/null", out), 0);
    op_stat_line(prof, 0, "MatMul", line, sizeof(line));
    assert_string_equal(line, "MatMul,HOST_CPU,5,5.000,1.000,1.000,1.000,100.00");
    nnpt_rm_rf(out);
    free(out);
}

/* ---- damaged raw directories ---- */

/* meta.nnp lost: the data files are read (they were skipped without a word), with a
 * warning naming what is lost. The fixture's times are ns: exact. */
static void test_missing_meta_recovered(void **state)
{
    char *out = nnpt_mkdtemp(), raw[PATH_CAP], path[FULL_CAP + 512], text[OUT_CAP], want[CMD_CAP],
         line[512], prof[FULL_CAP];
    nnpt_run_t r = {.rank = 0, .steps = STEPS};
    (void)state;
    nnpt_record_in_child(out, &r, raw, sizeof(raw));
    snprintf(path, sizeof(path), "%s/meta.nnp", raw);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet '%s' >/dev/null", out), 0);
    snprintf(want, sizeof(want),
             "[nnprof] warn: %s: meta.nnp is missing: the records of the data files are read; op, "
             "kernel and range names (shown as <string #id>), thread names and the loss counts "
             "are lost; the clock points are lost: ticks are converted at info.json's tick rate (",
             raw);
    assert_non_null(strstr(text, want));
    snprintf(prof, sizeof(prof), "%s/profiler", out);
    /* The op type's name is lost with the strings; count and times are not. */
    op_stat_line(prof, 0, "<string #1>", line, sizeof(line));
    if (!line[0])
        op_stat_line(prof, 0, "<string #2>", line, sizeof(line));
    assert_non_null(strstr(line, ",HOST_CPU,60,60.000,1.000,1.000,1.000,100.00"));
    snprintf(path, sizeof(path), "%s/step_trace_summary_0.json", prof);
    {
        cJSON *j = load_json(path);
        assert_non_null(j);
        assert_int_equal(cJSON_GetObjectItem(j, "total_steps")->valueint, STEPS);
        cJSON_Delete(j);
    }
    nnpt_rm_rf(out);
    free(out);
}

/* info.json lost: the rank is the one the others leave free, said in a warning (it was
 * analysed as rank 0 over rank 0's results). Two lost: not guessed. */
static void test_missing_info_inferred(void **state)
{
    char *out = nnpt_mkdtemp(), raw[3][PATH_CAP], path[FULL_CAP], text[OUT_CAP], want[CMD_CAP];
    (void)state;
    for (int k = 0; k < 3; k++) {
        nnpt_run_t r = {.rank = k, .rank_size = 3, .steps = STEPS};
        nnpt_record_in_child(out, &r, raw[k], sizeof(raw[k]));
    }
    snprintf(path, sizeof(path), "%s/info.json", raw[1]);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet --jobs 1 '%s'", out), 0);
    snprintf(want, sizeof(want),
             "[nnprof] warn: %s: no info.json (cannot open '%s/info.json': No such file or "
             "directory): analysed as rank 1, the only rank of 0..2 no other raw directory has; "
             "its device id and options are unknown\n",
             raw[1], raw[1]);
    assert_non_null(strstr(text, want));
    for (int k = 0; k < 3; k++) {
        cJSON *j;
        snprintf(path, sizeof(path), "%s/profiler/profiler_info_%d.json", out, k);
        j = load_json(path);
        assert_non_null(j);
        assert_int_equal(cJSON_GetObjectItem(j, "rank_id")->valueint, k);
        assert_string_equal(cJSON_GetObjectItem(j, "source")->valuestring, raw[k]);
        cJSON_Delete(j);
    }
    /* A second one lost: two directories, two free ranks: neither is guessed. */
    snprintf(path, sizeof(path), "%s/info.json", raw[2]);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(
        nnpt_cli(text, sizeof(text), "analyse --quiet --jobs 1 '%s' 2>&1 >/dev/null", out), 1);
    snprintf(want, sizeof(want),
             "[nnprof] error: %s: no info.json and its rank cannot be inferred (2 raw directories "
             "without a rank, 2 free ranks in 0..2): not analysed; restore its info.json, or "
             "analyse it alone (nnprof analyse -o OUT %s)\n",
             raw[1], raw[1]);
    assert_non_null(strstr(text, want));
    snprintf(want, sizeof(want),
             "nnprof: %s: 2 raw directories were left out: no rank could be given (see the log "
             "above)\n",
             out);
    assert_non_null(strstr(text, want));
    nnpt_rm_rf(out);
    free(out);
}

/* Out-of-range numbers in info.json (UB when converted, under UBSan a crash): refused with
 * file, key and value; the rank is then inferred. */
static void test_info_json_numbers_validated(void **state)
{
    char *out = nnpt_mkdtemp(), raw[PATH_CAP], path[FULL_CAP], text[OUT_CAP], want[CMD_CAP];
    nnpt_run_t r = {.rank = 0, .steps = STEPS};
    cJSON *j, *plat, *opts, *win;
    (void)state;
    nnpt_record_in_child(out, &r, raw, sizeof(raw));
    snprintf(path, sizeof(path), "%s/info.json", raw);
    j = load_json(path);
    assert_non_null(j);
    set_number(j, "rank_id", 1e300);
    set_number(j, "rank_size", -3);
    cJSON_DeleteItemFromObjectCaseSensitive(j, "pid");
    cJSON_AddStringToObject(j, "pid", "many");
    plat = cJSON_GetObjectItem(j, "platform");
    set_number(plat, "cpus", 0.5);
    opts = cJSON_GetObjectItem(j, "options");
    set_number(opts, "timeline_limit", 1e30);
    win = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "windows"), 0);
    set_number(win, "start_mono_ns", -1e300);
    save_json(path, j);
    cJSON_Delete(j);
    assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet '%s' 2>&1 >/dev/null", out), 0);
    {
        static const char *const expect[] = {
            "key 'rank_id' is 1e+300, not an integer in [0, 2147483647]: "
            "ignored",
            "key 'rank_size' is -3, not an integer in [1, 2147483647]: ignored",
            "key 'pid' is the string \"many\", not an integer in [1, 2147483647]: ignored",
            "key 'platform.cpus' is 0.5, not an integer in [1, 1048576]: ignored",
            "key 'options.timeline_limit' is 1e+30, not an integer in [1, "
            "16777216]: ignored",
            "key 'windows[].start_mono_ns' is -1e+300, not an integer in [0, "
            "4611686018427387904]: ignored",
        };
        for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
            snprintf(want, sizeof(want), "[nnprof] warn: %s: %s\n", path, expect[i]);
            if (!strstr(text, want))
                fail_msg("missing: %s\nlog:\n%s", want, text);
        }
    }
    snprintf(path, sizeof(path), "%s/profiler/profiler_info_0.json", out);
    j = load_json(path);
    assert_non_null(j);
    assert_int_equal(cJSON_GetObjectItem(j, "rank_id")->valueint, 0);
    cJSON_Delete(j);
    nnpt_rm_rf(out);
    free(out);
}

/* An unreadable folder says so (it said "no profiling data found"). Root reads any
 * folder, so as root the CLI runs as nobody (setpriv). */
static void test_unreadable_folder(void **state)
{
    char *out = nnpt_mkdtemp(), dir[PATH_CAP], cmd[CMD_CAP], text[OUT_CAP], want[CMD_CAP];
    (void)state;
    snprintf(dir, sizeof(dir), "%s/locked", out);
    assert_int_equal(mkdir(dir, 0), 0);
    assert_int_equal(chmod(out, 0755), 0);
    snprintf(cmd, sizeof(cmd), "%s'%s' analyse '%s'",
             geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "", CLI, dir);
    assert_int_equal(nnpt_run_cmd(cmd, text, sizeof(text)), 1);
    snprintf(want, sizeof(want), "nnprof: %s: cannot read '%s': Permission denied\n", dir, dir);
    assert_string_equal(text, want);
    nnpt_rm_rf(out);
    free(out);
}

/* A folder above the data (a MindInsight summary folder holding train jobs, a folder of
 * captures): the message names the folders below it that hold data, nearest first, and
 * not an earlier analysis's output folder (it said only "no profiling data found"). BASE:
 * job2/traces/ (a PyTorch trace: job2 is read as a folder of traces, depth 1),
 * job1/profiler/PROF_* (our run: its profiler/ folder is named, depth 2), results/ (job1
 * analysed: left out). */
static void test_data_below_is_named(void **state)
{
    char *out = nnpt_mkdtemp(), base[PATH_CAP / 2], p[FULL_CAP], text[OUT_CAP], want[CMD_CAP];
    nnpt_run_t run = {.rank = 0, .steps = 2};
    (void)state;
    snprintf(base, sizeof(base), "%s/base", out);
    snprintf(p, sizeof(p), "%s/job1", base);
    nnpt_record_in_child(p, &run, NULL, 0);
    snprintf(p, sizeof(p), "%s/job2", base);
    assert_int_equal(mkdir(p, 0700), 0);
    snprintf(p, sizeof(p), "%s/job2/traces", base);
    assert_int_equal(mkdir(p, 0700), 0);
    free(nnpt_write_file(p, "w.pt.trace.json",
                         "{\"traceEvents\": [{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":"
                         "\"aten::add\",\"pid\":5,\"tid\":5,\"ts\":10,\"dur\":3}]}\n"));
    assert_int_equal(
        nnpt_cli(text, sizeof(text), "analyse --quiet -o '%s/results' '%s/job1'", base, base), 0);
    assert_int_equal(nnpt_cli(text, sizeof(text), "analyse '%s'", base), 1);
    snprintf(want, sizeof(want),
             "nnprof: %s: no profiling data found in '%s' itself, but below it in '%s/job2', "
             "'%s/job1/profiler': analyse one of them (each is one run)\n",
             base, base, base, base);
    assert_string_equal(text, want);
    assert_int_equal(nnpt_cli(text, sizeof(text), "info '%s'", base), 1);
    snprintf(want, sizeof(want),
             "nnprof: %s: no profiling data found here, but below it in '%s/job2', "
             "'%s/job1/profiler': name one of them\n",
             base, base, base);
    assert_string_equal(text, want);
    /* What it names is analysable. */
    assert_int_equal(
        nnpt_cli(text, sizeof(text), "analyse --quiet -o '%s/r2' '%s/job1/profiler'", out, base),
        0);
    nnpt_rm_rf(out);
    free(out);
}

/* More raw directories than the finder's first array holds (it grows while they are
 * read, and sorting them once read names from freed memory before the fix: a crash with
 * 64 ranks, reported by ASan here): every rank is found, each with its own directory. */
static void test_many_raw_dirs(void **state)
{
    enum { MANY = 40 };
    char *out = nnpt_mkdtemp();
    nnp_inputs_t in;
    (void)state;
    for (int r = 0; r < MANY; r++) {
        nnpt_run_t run = {.rank = r, .rank_size = MANY, .steps = 1};
        nnpt_record_in_child(out, &run, NULL, 0);
    }
    assert_int_equal(nnp__inputs_find(out, &in), NNP_OK);
    assert_int_equal(in.n, MANY);
    for (int i = 0; i < MANY; i++) {
        bool found = false;
        for (int k = 0; k < in.n && !found; k++)
            found = in.v[k].rank == i;
        assert_true(found);
        for (int k = 0; k < i; k++)
            assert_string_not_equal(in.v[k].path, in.v[i].path);
    }
    nnp__inputs_fini(&in);
    nnpt_rm_rf(out);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_foreign_data_never_written),
        cmocka_unit_test(test_two_runs_of_one_rank_refused),
        cmocka_unit_test(test_filters_that_match_nothing),
        cmocka_unit_test(test_users_children_left_alone),
        cmocka_unit_test(test_child_dirs_join_their_parent),
        cmocka_unit_test(test_missing_meta_recovered),
        cmocka_unit_test(test_missing_info_inferred),
        cmocka_unit_test(test_info_json_numbers_validated),
        cmocka_unit_test(test_unreadable_folder),
        cmocka_unit_test(test_data_below_is_named),
        cmocka_unit_test(test_many_raw_dirs),
    };
    nnp_log_set_level(NNP_LOG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
