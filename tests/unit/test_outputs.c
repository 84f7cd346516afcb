/* test_outputs.c - how analyse writes (issue 10, "Files"): every output is created with
 * O_CREAT|O_EXCL|O_NOFOLLOW under a random temporary name and renamed, so links planted by
 * another user are never written through (tested with two users: root and an unused uid
 * through setpriv); an output folder owned by another user, or writable by all without the
 * sticky bit, is refused; earlier results are kept as <name>.old so earlier and new files
 * never mix, also when an analysis fails. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

#define CLI      NNP_BINARY_DIR "/nnprof"
#define DEMO     NNP_BINARY_DIR "/examples/demo_train"
#define STEPS    20
#define PATH_CAP 4096
#define FULL_CAP (PATH_CAP + 512)
#define CMD_CAP  65536
#define OUT_CAP  65536
/* A uid no account uses: the "other user" of these tests. */
#define OTHER_UID 54321
#define VICTIM    "precious: must never change\n"
#define N_OF(a)   (sizeof(a) / sizeof((a)[0]))

/* Every output name of rank 0 (docs/OUTPUTS.md "Where files go"), as the test knows them. */
static const char *const out_names[] = {
    "op_statistic_0.csv",
    "op_detail_0.csv",
    "kernel_details_0.csv",
    "op_statistic_top20_0.json",
    "step_trace_raw_0_detail_time.csv",
    "step_trace_point_info_0.json",
    "step_trace_summary_0.json",
    "timeline_summary_0.json",
    "host_ranges_0.csv",
    "memory_usage_summary_0.json",
    "memory_usage_details_0.json",
    "memory_record_0.csv",
    "operator_memory_0.csv",
    "advice_0.json",
    "advice_0.txt",
    "profiler_info_0.json",
};
static const char *const host_names[] = {"timeline_0.json", "host_memory_0.csv", "dataset_0.csv"};
static const char *const rank_names[] = {"trace_view.json", "step_trace_time.csv"};

static bool is_root(void)
{
    if (geteuid() == 0)
        return true;
    fprintf(stderr, "SKIP: needs root (chown, setpriv as another user)\n");
    return false;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Checks every regular file of dir: mode 0600, no temporary file left ("." names). Returns
 * the number of regular files. */
static int check_files(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        char p[FULL_CAP];
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (e->d_name[0] == '.')
            fail_msg("temporary file left: %s/%s", dir, e->d_name);
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        assert_int_equal(lstat(p, &st), 0);
        if (!S_ISREG(st.st_mode))
            continue;
        if ((st.st_mode & 0777) != 0600)
            fail_msg("%s has mode %o, not 0600", p, st.st_mode & 0777);
        n++;
    }
    closedir(d);
    return n;
}

/* Every output of one analysis is 0600, and no temporary file is left behind. */
static void test_outputs_private(void **state)
{
    char *out = nnpt_mkdtemp(), raw[PATH_CAP], dir[FULL_CAP], text[OUT_CAP];
    nnpt_run_t r = {.rank = 0, .steps = STEPS, .ranges = true, .tensors = true};
    mode_t old;
    (void)state;
    nnpt_record_in_child(out, &r, raw, sizeof(raw));
    old = umask(0);
    assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet '%s'", out), 0);
    umask(old);
    snprintf(dir, sizeof(dir), "%s/profiler", out);
    assert_int_equal(check_files(dir), 16);
    snprintf(dir, sizeof(dir), "%s/profiler/host_info", out);
    assert_int_equal(check_files(dir), 2); /* timeline, dataset: no host memory recorded */
    snprintf(dir, sizeof(dir), "%s/ASCEND_PROFILER_OUTPUT", raw);
    assert_int_equal(check_files(dir), 2);
    nnpt_rm_rf(out);
    free(out);
}

/* Earlier results move aside as <name>.old: a run without tensor memory no longer leaves
 * the earlier run's memory files beside its results (they looked like its own). */
static void test_earlier_results_kept_as_old(void **state)
{
    char *out = nnpt_mkdtemp(), path[FULL_CAP], text[OUT_CAP], want[FULL_CAP * 4];
    char *old;
    nnpt_run_t r = {.rank = 0, .steps = STEPS};
    (void)state;
    nnpt_record_in_child(out, &r, NULL, 0);
    snprintf(path, sizeof(path), "%s/profiler/memory_record_0.csv", out);
    write_text(path, "an earlier run's tensor memory\n");
    assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet '%s'", out), 0);
    snprintf(want, sizeof(want),
             "nnprof: results of rank 0 in %s/profiler (earlier results kept as *.old); read "
             "them with: nnprof summary %s/profiler\n",
             out, out);
    assert_string_equal(text, want);
    assert_int_equal(access(path, F_OK), -1);
    snprintf(path, sizeof(path), "%s/profiler/memory_record_0.csv.old", out);
    old = nnpt_read_file(path);
    assert_non_null(old);
    assert_string_equal(old, "an earlier run's tensor memory\n");
    free(old);
    nnpt_rm_rf(out);
    free(out);
}

/* Pairs every file of dir with its .old twin (both ways); returns the pairs. */
static int count_pairs(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        char p[FULL_CAP], twin[FULL_CAP + 8];
        struct stat st;
        size_t len = strlen(e->d_name);
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        if (lstat(p, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (len > 4 && strcmp(e->d_name + len - 4, ".old") == 0) {
            snprintf(twin, sizeof(twin), "%.*s", (int)(strlen(p) - 4), p);
        } else {
            snprintf(twin, sizeof(twin), "%s.old", p);
            n++;
        }
        if (access(twin, F_OK) != 0)
            fail_msg("%s has no twin %s: an output missing from analyse/outputs.c", p, twin);
    }
    closedir(d);
    return n;
}

/* The demo (memory, pipeline, FLOPs, host info, two ranks) analysed twice: every file of
 * the first analysis is kept as .old, so the list of outputs (analyse/outputs.c) is whole. */
static void test_every_output_is_set_aside(void **state)
{
    char *out = nnpt_mkdtemp(), cmd[FULL_CAP * 2], dir[FULL_CAP], text[OUT_CAP];
    int n;
    DIR *d;
    struct dirent *e;
    (void)state;
    snprintf(cmd, sizeof(cmd),
             "'%s' --epochs 1 --samples 256 --batch 16 --ranks 2 --output '%s' >/dev/null", DEMO,
             out);
    assert_int_equal(nnpt_run_cmd(cmd, NULL, 0), 0);
    for (int k = 0; k < 2; k++)
        assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet '%s'", out), 0);
    snprintf(dir, sizeof(dir), "%s/profiler", out);
    n = count_pairs(dir);
    assert_true(n >= 2 * 18);
    snprintf(dir, sizeof(dir), "%s/profiler/host_info", out);
    assert_int_equal(count_pairs(dir), 2 * 3);
    snprintf(dir, sizeof(dir), "%s/profiler", out);
    d = opendir(dir);
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        char rank_dir[FULL_CAP * 2];
        if (strncmp(e->d_name, "PROF_", 5) != 0)
            continue;
        snprintf(rank_dir, sizeof(rank_dir), "%s/%s/ASCEND_PROFILER_OUTPUT", dir, e->d_name);
        assert_int_equal(count_pairs(rank_dir), 2);
    }
    closedir(d);
    nnpt_rm_rf(out);
    free(out);
}

/* An earlier result that cannot be set aside: nothing is analysed and the earlier set
 * stays whole (never half moved). A stage that fails later leaves the new files with the
 * earlier ones all in .old: stale and new never mix silently. */
static void test_failed_analysis_never_mixes(void **state)
{
    char *out = nnpt_mkdtemp(), path[FULL_CAP], text[OUT_CAP], want[FULL_CAP * 4];
    nnpt_run_t r = {.rank = 0, .steps = STEPS};
    struct stat st;
    (void)state;
    nnpt_record_in_child(out, &r, NULL, 0);
    assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet '%s'", out), 0);
    /* timeline_summary_0.json.old is a non-empty directory: the file cannot move there. */
    snprintf(path, sizeof(path), "%s/profiler/timeline_summary_0.json.old", out);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/profiler/timeline_summary_0.json.old/x", out);
    assert_int_equal(mkdir(path, 0700), 0);
    assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet '%s'", out), 1);
    snprintf(want, sizeof(want),
             "nnprof: %s: rank 0: cannot keep the earlier result '%s/profiler/"
             "timeline_summary_0.json' as 'timeline_summary_0.json.old' (Is a directory): this "
             "rank is not analysed, so earlier and new results do not mix\n",
             out, out);
    assert_string_equal(text, want);
    /* The files before it in the list were put back. */
    snprintf(path, sizeof(path), "%s/profiler/op_statistic_0.csv", out);
    assert_int_equal(stat(path, &st), 0);
    snprintf(path, sizeof(path), "%s/profiler/op_statistic_0.csv.old", out);
    assert_int_equal(stat(path, &st), -1);
    snprintf(path, sizeof(path), "%s/profiler/timeline_summary_0.json.old", out);
    nnpt_rm_rf(path);

    /* A directory at an output name: that analysis fails, the others write, and every
     * earlier file is in .old. */
    snprintf(path, sizeof(path), "%s/profiler/advice_0.json", out);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkdir(path, 0700), 0);
    assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet '%s'", out), 1);
    snprintf(path, sizeof(path), "%s/profiler/op_statistic_0.csv.old", out);
    assert_int_equal(stat(path, &st), 0);
    snprintf(path, sizeof(path), "%s/profiler/op_statistic_0.csv", out);
    assert_int_equal(stat(path, &st), 0);
    snprintf(path, sizeof(path), "%s/profiler/advice_0.txt.old", out);
    assert_int_equal(stat(path, &st), 0);
    nnpt_rm_rf(out);
    free(out);
}

/* Output folders: another user's is refused, as is one every user may write without the
 * sticky bit; a sticky one (like /tmp) is accepted. */
static void test_output_folder_checks(void **state)
{
    char *base = nnpt_mkdtemp(), data[FULL_CAP], o[FULL_CAP], text[OUT_CAP], want[FULL_CAP * 4];
    nnpt_run_t r = {.rank = 0, .steps = STEPS};
    (void)state;
    snprintf(data, sizeof(data), "%s/data", base);
    nnpt_record_in_child(data, &r, NULL, 0);
    snprintf(o, sizeof(o), "%s/open", base);
    assert_int_equal(mkdir(o, 0700), 0);
    assert_int_equal(chmod(o, 0777), 0);
    assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet -o '%s' '%s'", o, data), 1);
    snprintf(want, sizeof(want),
             "nnprof: %s: output folder '%s' is writable by every user without the sticky bit "
             "(mode 0777): refusing to write there, as any user could replace the files; chmod "
             "o-w or +t it, or choose another folder with -o\n",
             data, o);
    assert_string_equal(text, want);
    assert_int_equal(chmod(o, 01777), 0);
    assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet -o '%s' '%s'", o, data), 0);
    if (is_root()) {
        snprintf(o, sizeof(o), "%s/theirs", base);
        assert_int_equal(mkdir(o, 0755), 0);
        assert_int_equal(chown(o, OTHER_UID, OTHER_UID), 0);
        assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet -o '%s' '%s'", o, data), 1);
        snprintf(want, sizeof(want),
                 "nnprof: %s: output folder '%s' belongs to another user (uid %d; this process "
                 "runs as uid 0): refusing to write there, as a link planted by its owner could "
                 "redirect the files; choose a folder of your own with -o\n",
                 data, o, OTHER_UID);
        assert_string_equal(text, want);
    }
    /* A file given as the output folder says so. */
    snprintf(o, sizeof(o), "%s/afile", base);
    write_text(o, "x");
    assert_int_equal(nnpt_cli(text, sizeof(text), "analyse --quiet -o '%s' '%s'", o, data), 1);
    snprintf(want, sizeof(want), "nnprof: %s: '%s' exists and is not a directory\n", data, o);
    assert_string_equal(text, want);
    nnpt_rm_rf(base);
    free(base);
}

/* Appends to a shell script: as the other user, link every name (+suffix) under dir to
 * victim. */
static void plant(char *sh, size_t cap, const char *dir, const char *const *names, size_t n,
                  const char *suffix, const char *victim)
{
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(sh);
        snprintf(sh + len, cap - len, "ln -s '%s' '%s/%s%s'; ", victim, dir, names[i], suffix);
    }
}

/* Root analyses into a sticky folder (like /tmp) where another user planted links at every
 * temporary name the old code used (<name>.tmp<pid>) and at the final names, and made the
 * host_info/ and rank folders. Nothing is written through a link: the victim file is
 * unchanged, final names are our regular files, the other user's folders are refused. */
static void test_planted_links_never_followed(void **state)
{
    char *base, data[FULL_CAP], o[FULL_CAP], victim[FULL_CAP], sh[CMD_CAP], cmd[CMD_CAP + 128],
        suffix[64], path[FULL_CAP * 2], host[FULL_CAP * 2], rank[FULL_CAP * 2], text[OUT_CAP];
    char *content;
    nnpt_run_t r = {.rank = 0, .steps = STEPS, .ranges = true, .tensors = true};
    int go[2], status;
    pid_t child;
    struct stat st;
    (void)state;
    if (!is_root())
        skip();
    base = nnpt_mkdtemp();
    assert_int_equal(chmod(base, 0755), 0);
    snprintf(data, sizeof(data), "%s/data", base);
    nnpt_record_in_child(data, &r, NULL, 0);
    snprintf(o, sizeof(o), "%s/shared", base);
    assert_int_equal(mkdir(o, 0700), 0);
    assert_int_equal(chmod(o, 01777), 0);
    snprintf(victim, sizeof(victim), "%s/victim", base);
    write_text(victim, VICTIM);
    assert_int_equal(chmod(victim, 0644), 0);

    assert_int_equal(pipe(go), 0);
    child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        char c;
        close(go[1]);
        if (read(go[0], &c, 1) != 1)
            _exit(99);
        execl(CLI, CLI, "analyse", "--quiet", "-o", o, data, (char *)NULL);
        _exit(98);
    }
    close(go[0]);
    /* The other user knows the pid the analysis will write with. */
    snprintf(suffix, sizeof(suffix), ".tmp%d", (int)child);
    snprintf(host, sizeof(host), "%s/host_info", o);
    snprintf(rank, sizeof(rank), "%s/rank_0/ASCEND_PROFILER_OUTPUT", o);
    snprintf(sh, sizeof(sh), "mkdir -p '%s' '%s'; ", host, rank);
    plant(sh, sizeof(sh), o, out_names, N_OF(out_names), suffix, victim);
    plant(sh, sizeof(sh), o, out_names, N_OF(out_names), "", victim);
    plant(sh, sizeof(sh), host, host_names, N_OF(host_names), suffix, victim);
    plant(sh, sizeof(sh), rank, rank_names, N_OF(rank_names), suffix, victim);
    snprintf(cmd, sizeof(cmd), "setpriv --reuid=%d --regid=%d --clear-groups sh -c \"%s\"",
             OTHER_UID, OTHER_UID, sh);
    assert_int_equal(nnpt_run_cmd(cmd, text, sizeof(text)), 0);
    snprintf(path, sizeof(path), "%s/op_statistic_0.csv%s", o, suffix);
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(st.st_uid, OTHER_UID);

    assert_int_equal(write(go[1], "g", 1), 1);
    close(go[1]);
    assert_int_equal(waitpid(child, &status, 0), child);
    content = nnpt_read_file(victim);
    assert_non_null(content);
    assert_string_equal(content, VICTIM);
    free(content);
    /* host_info/ and the rank folder belong to the other user: refused, so exit 1. */
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 1);
    for (size_t i = 0; i < N_OF(out_names); i++) {
        snprintf(path, sizeof(path), "%s/%s", o, out_names[i]);
        assert_int_equal(lstat(path, &st), 0);
        if (S_ISLNK(st.st_mode))
            continue; /* a stage that did not write this name left the link alone */
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(st.st_uid, 0);
        assert_int_equal(st.st_mode & 0777, 0600);
    }
    snprintf(path, sizeof(path), "%s/op_statistic_0.csv", o);
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    nnpt_rm_rf(base);
    free(base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_outputs_private),
        cmocka_unit_test(test_earlier_results_kept_as_old),
        cmocka_unit_test(test_every_output_is_set_aside),
        cmocka_unit_test(test_failed_analysis_never_mixes),
        cmocka_unit_test(test_output_folder_checks),
        cmocka_unit_test(test_planted_links_never_followed),
    };
    nnp_log_set_level(NNP_LOG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
