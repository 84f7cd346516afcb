/* test_session.c - the session lifecycle and what it leaves on disk: the seed's errors for
 * start-while-started and stop-while-not-started, one session per process, the
 * PROFILING_MODE conflict, directory and file permissions, the "old data" warning,
 * info.json contents, and profiling an unmodified program from the environment. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"
#include "util/util.h"

static nnp_session_t *make(const char *out, bool start)
{
    nnp_options_t o;
    nnp_session_t *s = NULL;
    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", out);
    o.start_profile = start;
    o.sample_interval_ms = 0;
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    return s;
}

static cJSON *load_info(const char *raw_dir)
{
    char path[8192], *text;
    FILE *f;
    long n;
    cJSON *j;
    snprintf(path, sizeof(path), "%s/info.json", raw_dir);
    f = fopen(path, "r");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    text = calloc(1, (size_t)n + 1);
    assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    j = cJSON_Parse(text);
    free(text);
    assert_non_null(j);
    return j;
}

static void test_start_stop_errors_follow_the_seed(void **state)
{
    char *out = nnpt_mkdtemp();
    nnp_session_t *s = make(out, false);
    (void)state;

    assert_false(nnp_is_collecting());
    assert_int_equal(nnp_session_stop(s), NNP_ESTATE);
    assert_string_equal(nnp_last_error(),
                        "The profiler has not started, so can not stop. Please call the start() "
                        "method before calling the stop() method.");
    assert_int_equal(nnp_session_start(s), NNP_OK);
    assert_true(nnp_is_collecting());
    assert_int_equal(nnp_session_start(s), NNP_ESTATE);
    assert_string_equal(nnp_last_error(),
                        "The profiler has already started. Do not turn on again in the open "
                        "state.");
    assert_int_equal(nnp_session_stop(s), NNP_OK);
    assert_false(nnp_is_collecting());
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    assert_int_equal(nnp_session_destroy(NULL), NNP_OK);
    nnpt_rm_rf(out);
    free(out);
}

static void test_one_session_per_process(void **state)
{
    char *out = nnpt_mkdtemp();
    nnp_session_t *s = make(out, true), *t = NULL;
    nnp_options_t o;
    (void)state;

    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", out);
    assert_int_equal(nnp_session_create(&o, &t), NNP_EBUSY);
    assert_null(t);
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    /* After destroy a new session may be created. */
    s = make(out, true);
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    nnpt_rm_rf(out);
    free(out);
}

static void test_profiling_mode_conflict(void **state)
{
    char *out = nnpt_mkdtemp();
    nnp_options_t o;
    nnp_session_t *s = NULL;
    (void)state;

    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", out);
    setenv("PROFILING_MODE", "true", 1);
    assert_int_equal(nnp_session_create(&o, &s), NNP_ECONFLICT);
    assert_string_equal(nnp_last_error(), "Profiling is already enabled by PROFILING_MODE env.");
    unsetenv("PROFILING_MODE");
    assert_null(s);
    nnpt_rm_rf(out);
    free(out);
}

static void test_forbidden_output_path_is_an_error(void **state)
{
    nnp_options_t o;
    nnp_session_t *s = NULL;
    (void)state;
    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "/tmp/bad\npath");
    assert_int_equal(nnp_session_create(&o, &s), NNP_EPATH);
    assert_null(s);
}

/* Number of entries of dir (0 when it does not exist). */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* An output path that cannot be used fails at create, naming the path and why, and leaves
 * nothing behind: a file where a directory must go; a read-only file system (root only:
 * root writes through permission bits, not through a read-only mount). */
static void test_unusable_output_path_fails_at_create(void **state)
{
    char *out = nnpt_mkdtemp();
    char file[4200], want[8600];
    nnp_options_t o;
    nnp_session_t *s = NULL;
    FILE *f;
    (void)state;

    snprintf(file, sizeof(file), "%s/a-file", out);
    f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s/a-file/sub", out);
    assert_int_equal(nnp_session_create(&o, &s), NNP_EPATH);
    assert_null(s);
    snprintf(want, sizeof(want),
             "cannot create '%s/sub/profiler': '%s' exists and is not a "
             "directory",
             file, file);
    assert_string_equal(nnp_last_error(), want);
    assert_int_equal(entries(out), 1); /* the file only */

    if (mount("nnprof-test", out, "tmpfs", MS_RDONLY, "size=65536") == 0) {
        snprintf(o.output_path, sizeof(o.output_path), "%s/new/deeper", out);
        assert_int_equal(nnp_session_create(&o, &s), NNP_EPERM);
        snprintf(want, sizeof(want),
                 "cannot create '%s/new/deeper/profiler': '%s' is not "
                 "writable: Read-only file system",
                 out, out);
        assert_string_equal(nnp_last_error(), want);
        assert_int_equal(entries(out), 0);
        assert_int_equal(umount(out), 0);
    }
    nnpt_rm_rf(out);
    free(out);
}

static void test_directories_files_and_info(void **state)
{
    char *out = nnpt_mkdtemp();
    char prof[4200], raw[4096], path[8192];
    nnp_options_t o;
    nnp_session_t *s;
    struct stat st;
    DIR *d;
    struct dirent *e;
    cJSON *info, *opts, *uns, *win;
    (void)state;

    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", out);
    o.sample_interval_ms = 0;
    o.rank_id = 3;
    o.device_id = 5;
    o.rank_size = 8;
    o.l2_cache = true;
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    nnp_step_begin(1, 0);
    assert_int_equal(nnp_session_stop(s), NNP_OK);
    assert_int_equal(nnp_session_start(s), NNP_OK);
    snprintf(raw, sizeof(raw), "%s", nnp_session_raw_dir(s));
    assert_int_equal(nnp_session_destroy(s), NNP_OK);

    snprintf(prof, sizeof(prof), "%s/profiler", out);
    assert_int_equal(stat(prof, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(strncmp(raw, prof, strlen(prof)), 0);
    assert_non_null(strstr(raw, "/PROF_"));
    assert_int_equal(stat(raw, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    d = opendir(raw);
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", raw, e->d_name);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
    }
    closedir(d);

    info = load_info(raw);
    assert_string_equal(cJSON_GetObjectItem(info, "state")->valuestring, "finalized");
    assert_int_equal(cJSON_GetObjectItem(info, "rank_id")->valueint, 3);
    assert_int_equal(cJSON_GetObjectItem(info, "device_id")->valueint, 5);
    assert_int_equal(cJSON_GetObjectItem(info, "rank_size")->valueint, 8);
    assert_int_equal(cJSON_GetObjectItem(info, "pid")->valueint, getpid());
    assert_int_equal(cJSON_GetObjectItem(info, "windows_total")->valueint, 2);
    win = cJSON_GetObjectItem(info, "windows");
    assert_int_equal(cJSON_GetArraySize(win), 2);
    assert_true(cJSON_IsNumber(cJSON_GetObjectItem(cJSON_GetArrayItem(win, 1), "stop_mono_ns")));
    /* diff_time is start_time - monotonic_time, in us (seed 000). */
    assert_true(cJSON_GetObjectItem(info, "diff_time")->valuedouble ==
                cJSON_GetObjectItem(info, "start_time_us")->valuedouble -
                    cJSON_GetObjectItem(info, "monotonic_time_us")->valuedouble);
    opts = cJSON_GetObjectItem(info, "options");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(opts, "l2_cache")));
    uns = cJSON_GetObjectItem(info, "not_collected_on_this_platform");
    assert_int_equal(cJSON_GetArraySize(uns), 1);
    assert_string_equal(cJSON_GetArrayItem(uns, 0)->valuestring, "l2_cache");
    assert_int_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(info, "stats"), "events_recorded")->valueint, 1);
    cJSON_Delete(info);

    /* A second session in the same output path warns that old data may be rewritten. */
    nnpt_log_capture();
    s = make(out, false);
    assert_non_null(strstr(nnpt_log_text(), "The target dir already exists. There may be some "
                                            "old profiling data, and they will be rewritten in "
                                            "the end."));
    nnpt_log_release();
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    nnpt_rm_rf(out);
    free(out);
}

/* An unmodified program, profiled only through MS_PROFILER_OPTIONS, leaves a finalized
 * raw directory with its events when it exits normally. */
static void test_environment_profiles_unmodified_program(void **state)
{
    char *out = nnpt_mkdtemp();
    char env[4300], cmd[8400], line[4096];
    pid_t pid;
    int status;
    FILE *p;
    cJSON *info;
    (void)state;

    snprintf(env, sizeof(env),
             "{\"start\": true, \"output_path\": \"%s\", \"op_time\": true, "
             "\"sample_interval_ms\": 0}",
             out);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("MS_PROFILER_OPTIONS", env, 1);
        setenv("RANK_ID", "2", 1);
        setenv("NNPROF_LOG_LEVEL", "error", 1);
        execl(NNP_BINARY_DIR "/examples/simple_train", "simple_train", "--steps", "20",
              (char *)NULL);
        _exit(127);
    }
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    snprintf(cmd, sizeof(cmd), "ls -d %s/profiler/PROF_*", out);
    p = popen(cmd, "r");
    assert_non_null(fgets(line, sizeof(line), p));
    pclose(p);
    line[strcspn(line, "\n")] = '\0';
    info = load_info(line);
    assert_string_equal(cJSON_GetObjectItem(info, "state")->valuestring, "finalized");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(info, "enabled_by_environment")));
    assert_int_equal(cJSON_GetObjectItem(info, "rank_id")->valueint, 2);
    /* 20 steps x (step begin/end, range begin/end, fp, 5 ops, bp, counter) plus epoch
     * begin = 20 * 12 + 1: no sampler (sample_interval_ms 0), and the tensor alloc/free
     * calls are not recorded because profile_memory defaults to false (seed 000). */
    assert_int_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(info, "stats"), "events_recorded")->valueint,
        20 * 12 + 1);
    cJSON_Delete(info);
    nnpt_rm_rf(out);
    free(out);
}

/* A program profiled from the environment hears about values it set wrong, in the log,
 * before anything else (issue 10: PROFILING_MODE=maybe, NNPROF_LOG_LEVEL=loud were ignored
 * silently). Run as a separate process: the log level is read once per process. */
static void test_environment_names_bad_values(void **state)
{
    char *out = nnpt_mkdtemp();
    char cmd[8400], text[8192];
    (void)state;
    snprintf(cmd, sizeof(cmd),
             "cd '%s' && env -u MS_PROFILER_OPTIONS -u PROFILING_OPTIONS PROFILING_MODE=maybe "
             "NNPROF_LOG_LEVEL=loud %s/examples/simple_train --steps 2",
             out, NNP_BINARY_DIR);
    assert_int_equal(nnpt_run_cmd(cmd, text, sizeof(text)), 0);
    assert_non_null(strstr(text, "[nnprof] warn: NNPROF_LOG_LEVEL is \"loud\": the accepted "
                                 "values are error, warn, info and debug; using warn."));
    assert_non_null(strstr(text, "[nnprof] warn: PROFILING_MODE is \"maybe\": the accepted "
                                 "values are \"true\""));
    assert_int_equal(entries(out), 0); /* "maybe" did not profile */
    nnpt_rm_rf(out);
    free(out);
}

/* Fault injection (curl torture): fail the Nth allocation of a whole create / record /
 * destroy cycle, for every N until a cycle completes without reaching the failure. Each
 * must fail cleanly - an error code with a message, no crash, no leak under ASan - and a
 * failed destroy still releases the session (the next create must not get NNP_EBUSY). */
static void test_every_allocation_failure_is_handled(void **state)
{
    char *out = nnpt_mkdtemp();
    int n;
    (void)state;

    for (n = 1; n < 1000; n++) {
        nnp_options_t o;
        nnp_session_t *s = NULL;
        int rc;
        nnp_options_init(&o);
        snprintf(o.output_path, sizeof(o.output_path), "%s", out);
        o.sample_interval_ms = 0;
        nnp__alloc_fail_at((uint64_t)n);
        rc = nnp_session_create(&o, &s);
        if (rc == NNP_OK) {
            nnp_step_begin(1, 0);
            nnp_counter(nnp_intern("fault-injection"), 1.0);
            rc = nnp_session_destroy(s);
        } else {
            assert_null(s);
        }
        assert_true(rc == NNP_OK || (rc < 0 && nnp_last_error()[0] != '\0'));
        if (nnp__alloc_fail_pending())
            break; /* this cycle never reached allocation n: all were covered */
    }
    nnp__alloc_fail_at(0);
    assert_true(n > 1 && n < 1000);
    /* Whatever failed, no raw directory was left half made: each has its info.json. */
    {
        int k = 0;
        char **dirs = nnpt_raw_dirs(out, &k);
        assert_true(k > 0);
        for (int i = 0; i < k; i++) {
            cJSON *info = nnpt_load_json(dirs[i], "info.json");
            if (!info)
                fail_msg("%s has no info.json", dirs[i]);
            cJSON_Delete(info);
        }
        nnpt_free_list(dirs, k);
    }
    nnpt_rm_rf(out);
    free(out);
}

/* Ranks of one job share an output path: a rank must not warn about "old data" because
 * another rank started a moment earlier, but must once that run is over. */
static void test_no_old_data_warning_for_concurrent_ranks(void **state)
{
    char *out = nnpt_mkdtemp();
    int up[2], down[2], status; /* child -> parent, parent -> child */
    char ok;
    pid_t p;
    nnp_session_t *s;
    (void)state;

    assert_int_equal(pipe(up), 0);
    assert_int_equal(pipe(down), 0);
    p = fork();
    if (p == 0) {
        nnp_session_t *other = make(out, true);
        nnp_step_begin(1, 0); /* the raw directory is made for the first event */
        if (nnp_session_flush(other) != NNP_OK)
            _exit(5);
        ok = 1;
        if (write(up[1], &ok, 1) != 1 || read(down[0], &ok, 1) != 1)
            _exit(3);
        _exit(nnp_session_destroy(other) == NNP_OK ? 0 : 4);
    }
    assert_int_equal(read(up[0], &ok, 1), 1);
    nnpt_log_capture();
    s = make(out, true);
    assert_null(strstr(nnpt_log_text(), "old profiling data"));
    nnpt_log_release();
    nnp_step_begin(1, 0);
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    ok = 1;
    assert_int_equal(write(down[1], &ok, 1), 1);
    waitpid(p, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* Both runs are finalized now: a third session is rewriting old data. */
    nnpt_log_capture();
    s = make(out, true);
    assert_non_null(strstr(nnpt_log_text(), "old profiling data"));
    nnpt_log_release();
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    close(up[0]);
    close(up[1]);
    close(down[0]);
    close(down[1]);
    nnpt_rm_rf(out);
    free(out);
}

/* A rank that has made its raw directory but not yet written info.json in it is running,
 * not old data (the demo's first run warned, issue 10); the same directory an hour old is
 * old data. */
static void test_raw_dir_without_info_yet_is_a_running_rank(void **state)
{
    char *out = nnpt_mkdtemp();
    char dir[4200];
    struct timespec old[2];
    nnp_session_t *s;
    (void)state;

    snprintf(dir, sizeof(dir), "%s/profiler", out);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(dir, sizeof(dir), "%s/profiler/PROF_20260101000000000_otherhost_4242", out);
    assert_int_equal(mkdir(dir, 0700), 0);
    nnpt_log_capture();
    s = make(out, false);
    assert_null(strstr(nnpt_log_text(), "old profiling data"));
    nnpt_log_release();
    assert_int_equal(nnp_session_destroy(s), NNP_OK);

    clock_gettime(CLOCK_REALTIME, &old[0]);
    old[0].tv_sec -= 3600;
    old[1] = old[0];
    assert_int_equal(utimensat(AT_FDCWD, dir, old, 0), 0);
    nnpt_log_capture();
    s = make(out, false);
    assert_non_null(strstr(nnpt_log_text(), "old profiling data"));
    nnpt_log_release();
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    nnpt_rm_rf(out);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_start_stop_errors_follow_the_seed),
        cmocka_unit_test(test_one_session_per_process),
        cmocka_unit_test(test_profiling_mode_conflict),
        cmocka_unit_test(test_forbidden_output_path_is_an_error),
        cmocka_unit_test(test_unusable_output_path_fails_at_create),
        cmocka_unit_test(test_directories_files_and_info),
        cmocka_unit_test(test_environment_profiles_unmodified_program),
        cmocka_unit_test(test_environment_names_bad_values),
        cmocka_unit_test(test_every_allocation_failure_is_handled),
        cmocka_unit_test(test_no_old_data_warning_for_concurrent_ranks),
        cmocka_unit_test(test_raw_dir_without_info_yet_is_a_running_rank),
    };
    nnp_log_set_level(NNP_LOG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
