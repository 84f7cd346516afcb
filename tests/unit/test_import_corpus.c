/* test_import_corpus.c - issue #7 "every corpus folder imports without error": runs the CLI
 * (`nnprof analyse -o TMP FOLDER`) on every data folder of /work/shared/corpus (MANIFEST.md)
 * and checks exit code 0 and that outputs were written. The loose mindinsight/profiler
 * files share their folder with two CANN collections (which win), so they are also run
 * alone from a copy. Skips, with a message, when the corpus is missing. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "test_util.h"

#define CORPUS   NNP_SOURCE_DIR "/../shared/corpus"
#define CLI      NNP_BINARY_DIR "/nnprof"
#define CMD_CAP  4096
#define PATH_CAP 1024
/* A folder's outputs: profiler_info + step trace + op statistics + timeline at least. */
#define MIN_OUTPUT_FILES 1

/* Every data folder of MANIFEST.md, relative to the corpus root. */
static const char *const folders[] = {
    "mindinsight/run_1/normal_run/profiler",
    "mindinsight/run_1/normal_run",
    "mindinsight/run_2/normal_run/profiler",
    "mindinsight/run_3/normal_run/profiler",
    "mindinsight/run_4/normal_run/profiler",
    "mindinsight/profiler",
    "mindinsight/profiler/PROF_000001_20230818142704322_COJGGGCANRMICFBC",
    "mindinsight/profiler/PROF_000001_20230818142704567_GQFAMHBKGODKJMLA",
    "mindinsight/cluster_propose",
    "msprof-analyze/test/resource",
    "msprof-analyze/test/resource/advisor/cluster_analysis_output",
    "msprof-analyze/test/ut/advisor/timeline_advice",
    "msprof-analyze/test/ut/advisor/advisor_backend/compute_advice",
    "msprof-analyze/test/ut/advisor/compute_advice/data",
};

/* Regular files under dir, recursively. */
static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL) {
        char p[PATH_CAP];
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        if (stat(p, &st) != 0)
            continue;
        n += S_ISDIR(st.st_mode) ? count_files(p) : S_ISREG(st.st_mode);
    }
    closedir(d);
    return n;
}

/* Runs the CLI on folder; returns its exit status and the number of files written. */
static int analyse(const char *folder, int *n_files)
{
    char cmd[CMD_CAP];
    char *out = nnpt_mkdtemp();
    int status;
    assert_non_null(out);
    snprintf(cmd, sizeof(cmd), "'%s' analyse -o '%s' '%s' >/dev/null 2>&1", CLI, out, folder);
    status = system(cmd);
    *n_files = count_files(out);
    nnpt_rm_rf(out);
    free(out);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_every_folder(void **state)
{
    (void)state;
    if (!nnpt_have_corpus())
        skip();
    for (size_t i = 0; i < sizeof(folders) / sizeof(folders[0]); i++) {
        char path[PATH_CAP];
        int n, rc;
        snprintf(path, sizeof(path), "%s/%s", CORPUS, folders[i]);
        rc = analyse(path, &n);
        if (rc != 0 || n < MIN_OUTPUT_FILES)
            fprintf(stderr, "FAIL: %s: exit %d, %d files written\n", folders[i], rc, n);
        assert_int_equal(rc, 0);
        assert_true(n >= MIN_OUTPUT_FILES);
    }
}

/* The loose MindSpore files of mindinsight/profiler (step_trace_raw_{0,10}, 21 columns)
 * alone: two ranks, each with a step trace. */
static void test_loose_mindinsight_files(void **state)
{
    char cmd[CMD_CAP], p[PATH_CAP];
    char *in;
    int n;
    struct stat st;
    (void)state;
    if (!nnpt_have_corpus())
        skip();
    in = nnpt_mkdtemp();
    assert_non_null(in);
    snprintf(cmd, sizeof(cmd),
             "find '%s/mindinsight/profiler' -maxdepth 1 -type f -exec cp {} '%s' ';'", CORPUS, in);
    assert_int_equal(system(cmd), 0);
    snprintf(p, sizeof(p), "%s/step_trace_raw_10_detail_time.csv", in);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(analyse(in, &n), 0);
    assert_true(n >= MIN_OUTPUT_FILES);
    nnpt_rm_rf(in);
    free(in);
}

/* A folder with nothing analysable: exit 1 and the "no profiling data found" message. */
static void test_empty_folder(void **state)
{
    char *in = nnpt_mkdtemp();
    int n;
    (void)state;
    assert_non_null(in);
    assert_int_equal(analyse(in, &n), 1);
    assert_int_equal(n, 0);
    nnpt_rm_rf(in);
    free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_folder),
        cmocka_unit_test(test_loose_mindinsight_files),
        cmocka_unit_test(test_empty_folder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
