/* test_export.c - `nnprof export timeline|summary` (issue #6, seed 002): flag validation,
 * step vs graph mode on a run with two graphs per step, iteration windows, csv == json,
 * README.txt == the files written, --clear, and atomic re-export. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "export/msprof_export.h"
#include "test_util.h"
#include "util/util.h"

#define STEPS     4
#define CMD_CAP   9000
#define PATH_CAP  8192
#define TEXT_CAP  65536
#define MAX_ROWS  64
#define MAX_COLS  32
#define FIELD_CAP 256

typedef struct run {
    char *out;
    char raw[PATH_CAP];
} run_t;

/* Steps 1..4; each runs graph 1 (a MatMul) then graph 2 (an Add), like a script compiled
 * into two graphs: graph mode counts each graph's executions, step mode the steps. */
static void record(run_t *r)
{
    nnp_options_t o;
    nnp_session_t *s;
    nnp_op_t op = {0};
    r->out = nnpt_mkdtemp();
    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", r->out);
    o.sample_interval_ms = 0;
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    for (uint64_t k = 1; k <= STEPS; k++) {
        uint64_t t = 100000 + k * 10000;
        op.graph_id = 1;
        op.name = nnp_intern("Default/MatMul-op1");
        op.type = nnp_intern("MatMul");
        nnp_step_begin_at(k, 1, t);
        nnp_op_at(&op, t + 1000, t + 3000);
        nnp_step_end_at(k, 1, t + 4000);
        op.graph_id = 2;
        op.name = nnp_intern("Default/Add-op2");
        op.type = nnp_intern("Add");
        nnp_step_begin_at(k, 2, t + 5000);
        nnp_op_at(&op, t + 6000, t + 6500);
        nnp_step_end_at(k, 2, t + 9000);
    }
    snprintf(r->raw, sizeof(r->raw), "%s", nnp_session_raw_dir(s));
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
}

static void run_done(run_t *r)
{
    nnpt_rm_rf(r->out);
    free(r->out);
}

/* Runs `nnprof export <args>` and returns its exit status; stderr+stdout in text. */
static int cli(char *text, const char *fmt, ...)
{
    char args[CMD_CAP], cmd[CMD_CAP + 64];
    va_list ap;
    FILE *p;
    size_t n;
    va_start(ap, fmt);
    vsnprintf(args, sizeof(args), fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof(cmd), "%s/nnprof export %s 2>&1", NNP_BINARY_DIR, args);
    p = popen(cmd, "r");
    assert_non_null(p);
    n = fread(text, 1, TEXT_CAP - 1, p);
    text[n] = '\0';
    return WEXITSTATUS(pclose(p));
}

/* The file in dir/mindstudio_profiler_output whose name starts with prefix and ends with
 * ext ("op_summary_" + 14 digits + ".csv"); false when absent. */
static bool find_out(const char *raw, const char *prefix, const char *ext, char *path)
{
    char dir[PATH_CAP];
    DIR *d;
    struct dirent *e;
    bool found = false;
    snprintf(dir, sizeof(dir), "%s/%s", raw, NNP_MSPROF_OUT_DIR);
    d = opendir(dir);
    if (!d)
        return false;
    while ((e = readdir(d)) != NULL) {
        size_t lp = strlen(prefix), le = strlen(ext), ln = strlen(e->d_name);
        if (ln == lp + NNP_MSPROF_TS_LEN - 1 + le && strncmp(e->d_name, prefix, lp) == 0 &&
            strcmp(e->d_name + ln - le, ext) == 0) {
            assert_int_equal(nnp__path_join(path, PATH_CAP, dir, e->d_name), NNP_OK);
            found = true;
        }
    }
    closedir(d);
    return found;
}

typedef struct csv {
    int n_rows, n_cols;
    char cell[MAX_ROWS][MAX_COLS][FIELD_CAP];
} csv_t;

/* Our test data has no quoted fields, so a plain split is exact. Row 0 is the header. */
static void load_csv(const char *path, csv_t *c)
{
    FILE *f = fopen(path, "r");
    char line[TEXT_CAP];
    assert_non_null(f);
    memset(c, 0, sizeof(*c));
    while (fgets(line, sizeof(line), f) && c->n_rows < MAX_ROWS) {
        char *p = line, *comma;
        int k = 0;
        line[strcspn(line, "\r\n")] = '\0';
        do {
            comma = strchr(p, ',');
            if (comma)
                *comma = '\0';
            nnp__strlcpy(c->cell[c->n_rows][k++], p, FIELD_CAP);
            p = comma + 1;
        } while (comma && k < MAX_COLS);
        c->n_cols = k;
        c->n_rows++;
    }
    fclose(f);
}

static int col(const csv_t *c, const char *name)
{
    for (int k = 0; k < c->n_cols; k++)
        if (strcmp(c->cell[0][k], name) == 0)
            return k;
    fail_msg("no column %s", name);
    return -1;
}

static cJSON *load_json(const char *path)
{
    FILE *f = fopen(path, "r");
    static char text[1 << 20];
    size_t n;
    if (!f)
        return NULL;
    n = fread(text, 1, sizeof(text) - 1, f);
    text[n] = '\0';
    fclose(f);
    return cJSON_Parse(text);
}

static int summary_rows(const char *raw, const char *prefix, csv_t *c)
{
    char path[PATH_CAP];
    if (!find_out(raw, prefix, ".csv", path))
        return 0;
    load_csv(path, c);
    return c->n_rows - 1;
}

static csv_t g_csv;

/* Every bad flag combination: exit 2 and a message naming the flag. */
static void test_flag_validation(void **state)
{
    static const struct {
        const char *args, *flag;
    } bad[] = {
        {"", "export"},
        {"bogus -dir /x", "export"},
        {"summary", "-dir"},
        {"summary -dir %s --iteration-id 1", "--iteration-id"},
        {"summary -dir %s --model-id 1", "--model-id"},
        {"summary -dir %s --iteration-id 0 --model-id 1", "--iteration-id"},
        {"summary -dir %s --iteration-id -3 --model-id 1", "--iteration-id"},
        {"summary -dir %s --iteration-id x --model-id 1", "--iteration-id"},
        {"summary -dir %s --iteration-id 1 --model-id 4294967296", "--model-id"},
        {"summary -dir %s --iteration-count 2", "--iteration-count"},
        {"summary -dir %s --iteration-id 1 --model-id 1 --iteration-count 0", "--iteration-count"},
        {"summary -dir %s --format xml", "--format"},
        {"timeline -dir %s --format json", "--format"},
        {"summary -dir %s --clear maybe", "--clear"},
        {"summary -dir %s extra", "export: 'extra'"},
        {"sqlite -dir %s --iteration-id 1 --model-id 1", "sqlite"},
        {"timeline -dir %s -o x.db", "-o"},
        {"sqlite -dir %s --cuda-sync", "--cuda-sync"},
        {"kineto -dir %s --format json", "kineto"},
    };
    run_t r;
    char text[TEXT_CAP], args[CMD_CAP];
    (void)state;
    record(&r);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char want[FIELD_CAP];
        const char *at = strstr(bad[i].args, "%s");
        /* Substitutes the run directory for "%s" (no printf: the pattern varies). */
        if (at)
            snprintf(args, sizeof(args), "%.*s%s%s", (int)(at - bad[i].args), bad[i].args, r.raw,
                     at + 2);
        else
            snprintf(args, sizeof(args), "%s", bad[i].args);
        assert_int_equal(cli(text, "%s", args), 2);
        snprintf(want, sizeof(want), "nnprof: %s", bad[i].flag);
        if (!strstr(text, want))
            fail_msg("'%s': no '%s' in: %s", args, want, text);
    }
    /* Not a usage error: the data is missing. */
    assert_int_equal(cli(text, "summary -dir %s/none", r.out), 1);
    assert_int_equal(cli(text, "summary -dir %s --iteration-id 9 --model-id 1", r.raw), 1);
    assert_non_null(strstr(text, "iteration 9 of model 1 not found"));
    assert_int_equal(cli(text, "--help"), 0);
    run_done(&r);
}

/* Without ids: everything, in graph numbering. Step mode: both graphs of step 2. Graph
 * mode: the third execution of graph 2 only. */
static void test_step_and_graph_mode(void **state)
{
    run_t r;
    char text[TEXT_CAP];
    csv_t *c = &g_csv;
    (void)state;
    record(&r);
    /* -dir may be the parent of the PROF_* directory. */
    assert_int_equal(cli(text, "summary --collection-dir %s", r.out), 0);
    assert_int_equal(summary_rows(r.raw, "op_summary_", c), 2 * STEPS);
    assert_int_equal(summary_rows(r.raw, "step_trace_", c), 2 * STEPS);
    assert_string_equal(c->cell[1][col(c, "Model ID")], "1");
    assert_string_equal(c->cell[1][col(c, "Iteration ID")], "1");
    assert_string_equal(c->cell[2][col(c, "Model ID")], "2");
    assert_string_equal(c->cell[2][col(c, "Iteration ID")], "1");
    assert_string_equal(c->cell[1][col(c, "Iteration Time(us)")], "4.000");
    assert_string_equal(c->cell[1][col(c, "Reduce Start(us)")], "N/A");
    assert_int_equal(summary_rows(r.raw, "op_statistic_", c), 2);
    /* Most expensive type first: MatMul 4 x 2 us, Add 4 x 0.5 us. */
    assert_string_equal(c->cell[1][col(c, "OP Type")], "MatMul");
    assert_string_equal(c->cell[1][col(c, "Count")], "4");
    assert_string_equal(c->cell[1][col(c, "Total Time(us)")], "8.000");
    assert_string_equal(c->cell[1][col(c, "Ratio(%)")], "80.000");
    assert_string_equal(c->cell[2][col(c, "Avg Time(us)")], "0.500");
    /* No kernels, no communication, no host ranges: those files are not written. */
    assert_int_equal(summary_rows(r.raw, "task_time_", c), 0);
    assert_int_equal(summary_rows(r.raw, "communication_statistic_", c), 0);
    assert_int_equal(summary_rows(r.raw, "api_statistic_", c), 0);

    assert_int_equal(cli(text, "summary -dir %s --model-id 4294967295 --iteration-id 2", r.raw), 0);
    assert_int_equal(summary_rows(r.raw, "step_trace_", c), 2);
    for (int i = 1; i <= 2; i++) {
        assert_string_equal(c->cell[i][col(c, "Iteration ID")], "2");
        assert_string_equal(c->cell[i][col(c, "Model ID")], "4294967295");
    }
    assert_int_equal(summary_rows(r.raw, "op_summary_", c), 2);
    assert_string_equal(c->cell[1][col(c, "Op Name")], "Default/MatMul-op1");
    assert_string_equal(c->cell[2][col(c, "Op Name")], "Default/Add-op2");
    assert_string_equal(c->cell[2][col(c, "Infer ID")], "2");
    assert_string_equal(c->cell[2][col(c, "Task Duration(us)")], "0.500");

    assert_int_equal(cli(text, "summary -dir %s --model-id 2 --iteration-id 3", r.raw), 0);
    assert_int_equal(summary_rows(r.raw, "step_trace_", c), 1);
    assert_string_equal(c->cell[1][col(c, "Iteration ID")], "3");
    assert_string_equal(c->cell[1][col(c, "Model ID")], "2");
    assert_int_equal(summary_rows(r.raw, "op_summary_", c), 1);
    assert_string_equal(c->cell[1][col(c, "OP Type")], "Add");
    assert_string_equal(c->cell[1][col(c, "Infer ID")], "3");
    assert_string_equal(c->cell[1][col(c, "Model ID")], "2");
    assert_int_equal(summary_rows(r.raw, "op_statistic_", c), 1);
    run_done(&r);
}

/* --iteration-count: [N, N+K-1], cut at the last iteration that exists. */
static void test_iteration_count(void **state)
{
    run_t r;
    char text[TEXT_CAP];
    csv_t *c = &g_csv;
    (void)state;
    record(&r);
    assert_int_equal(
        cli(text, "summary -dir %s --model-id 1 --iteration-id 2 --iteration-count 2", r.raw), 0);
    assert_int_equal(summary_rows(r.raw, "step_trace_", c), 2);
    assert_string_equal(c->cell[1][col(c, "Iteration ID")], "2");
    assert_string_equal(c->cell[2][col(c, "Iteration ID")], "3");
    assert_int_equal(summary_rows(r.raw, "op_summary_", c), 2);
    assert_int_equal(
        cli(text, "summary -dir %s --model-id 1 --iteration-id 2 --iteration-count 99", r.raw), 0);
    assert_int_equal(summary_rows(r.raw, "step_trace_", c), 3);
    assert_int_equal(cli(text,
                         "summary -dir %s --model-id 4294967295 --iteration-id 3 "
                         "--iteration-count 2",
                         r.raw),
                     0);
    assert_int_equal(summary_rows(r.raw, "step_trace_", c), 4);
    assert_int_equal(summary_rows(r.raw, "op_summary_", c), 4);
    run_done(&r);
}

/* csv and json hold the same table: json objects keyed by the csv header. */
static void test_csv_json_equal(void **state)
{
    static const char *const kinds[] = {"op_summary_", "op_statistic_", "step_trace_"};
    run_t r;
    char text[TEXT_CAP], path[PATH_CAP];
    csv_t *c = &g_csv;
    (void)state;
    record(&r);
    cJSON *arrs[3];
    /* A summary export replaces the previous one whatever its format, so the json tables
     * are read before the csv export. */
    assert_int_equal(cli(text, "summary -dir %s --format json", r.raw), 0);
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        const char *jp = strcmp(kinds[k], "step_trace_") == 0 ? "step_trace_summary_" : kinds[k];
        assert_true(find_out(r.raw, jp, ".json", path));
        arrs[k] = load_json(path);
        assert_non_null(arrs[k]);
    }
    assert_int_equal(cli(text, "summary -dir %s --format csv", r.raw), 0);
    assert_false(find_out(r.raw, "op_summary_", ".json", path));
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        cJSON *arr = arrs[k], *obj;
        int row = 1;
        assert_true(summary_rows(r.raw, kinds[k], c) > 0);
        assert_int_equal(cJSON_GetArraySize(arr), c->n_rows - 1);
        cJSON_ArrayForEach(obj, arr)
        {
            assert_int_equal(cJSON_GetArraySize(obj), c->n_cols);
            for (int i = 0; i < c->n_cols; i++) {
                cJSON *v = cJSON_GetObjectItem(obj, c->cell[0][i]);
                assert_non_null(v);
                if (cJSON_IsString(v))
                    assert_string_equal(v->valuestring, c->cell[row][i]);
                else
                    assert_true(v->valuedouble == strtod(c->cell[row][i], NULL));
            }
            row++;
        }
        cJSON_Delete(arr);
    }
    run_done(&r);
}

/* README.txt: one numbered line per export file in the directory, and nothing else. */
static void check_readme(const char *raw)
{
    char dir[PATH_CAP], path[PATH_CAP], line[TEXT_CAP];
    char listed[MAX_ROWS][FIELD_CAP];
    int n_listed = 0, n_files = 0, section = -1, num = 0;
    DIR *d;
    struct dirent *e;
    FILE *f;
    snprintf(dir, sizeof(dir), "%s/%s", raw, NNP_MSPROF_OUT_DIR);
    assert_int_equal(nnp__path_join(path, sizeof(path), dir, "README.txt"), NNP_OK);
    f = fopen(path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof(line), f)) {
        char *dot, *colon;
        line[strcspn(line, "\n")] = '\0';
        if (strcmp(line, "Timeline file description:") == 0 ||
            strcmp(line, "Summary file description:") == 0) {
            assert_int_equal(section, line[0] == 'T' ? -1 : 0);
            section = line[0] == 'T' ? 0 : 1;
            num = 0;
            continue;
        }
        dot = strchr(line, '.');
        colon = strchr(line, ':');
        assert_non_null(dot);
        assert_non_null(colon);
        assert_int_equal(atol(line), ++num);
        assert_true(colon[1] != '\0');
        *colon = '\0';
        snprintf(listed[n_listed++], FIELD_CAP, "%s", dot + 1);
    }
    fclose(f);
    assert_int_equal(section, 1);
    d = opendir(dir);
    while ((e = readdir(d)) != NULL) {
        char base[FIELD_CAP];
        const char *ext;
        bool found = false;
        size_t ln = strlen(e->d_name);
        if (e->d_name[0] == '.' || strcmp(e->d_name, "README.txt") == 0)
            continue;
        /* A file left under a temporary name would be a failed atomic write. */
        assert_null(strstr(e->d_name, ".tmp"));
        ext = strrchr(e->d_name, '.');
        assert_true(ln < sizeof(base));
        memcpy(base, e->d_name, ln - strlen(ext) - NNP_MSPROF_TS_LEN);
        nnp__strlcpy(base + ln - strlen(ext) - NNP_MSPROF_TS_LEN, ext, sizeof(base) / 2);
        for (int i = 0; i < n_listed; i++)
            found |= strcmp(listed[i], base) == 0;
        if (!found)
            fail_msg("%s not in README.txt", e->d_name);
        n_files++;
    }
    closedir(d);
    assert_int_equal(n_files, n_listed);
}

/* Timeline files, README.txt, and a re-export that replaces the earlier files. */
static void test_timeline_readme_rewrite(void **state)
{
    run_t r;
    char text[TEXT_CAP], path[PATH_CAP], old[PATH_CAP];
    nnp_msprof_opts_t o;
    nnp_msprof_result_t res;
    cJSON *arr, *ev;
    int slices = 0, named = 0;
    (void)state;
    record(&r);
    assert_int_equal(cli(text, "timeline -dir %s", r.raw), 0);
    assert_true(find_out(r.raw, "msprof_", ".json", path));
    arr = load_json(path);
    assert_non_null(arr);
    cJSON_ArrayForEach(ev, arr)
    {
        cJSON *args = cJSON_GetObjectItem(ev, "args");
        const char *ph = cJSON_GetObjectItem(ev, "ph")->valuestring;
        if (strcmp(ph, "X") == 0 && cJSON_GetObjectItem(ev, "pid")->valueint == 1)
            slices++;
        if (strcmp(ph, "M") == 0 &&
            (strcmp(cJSON_GetObjectItem(args, "name")->valuestring, "CANN") == 0 ||
             strcmp(cJSON_GetObjectItem(args, "name")->valuestring, "Overlap Analysis") == 0 ||
             strcmp(cJSON_GetObjectItem(args, "name")->valuestring, "Computing") == 0 ||
             strcmp(cJSON_GetObjectItem(args, "name")->valuestring, "Free") == 0))
            named++;
    }
    cJSON_Delete(arr);
    assert_int_equal(slices, 2 * STEPS);
    assert_true(named >= 4);
    assert_true(find_out(r.raw, "step_trace_", ".json", path));
    check_readme(r.raw);
    assert_int_equal(cli(text, "summary -dir %s", r.raw), 0);
    check_readme(r.raw);

    /* Re-export with a later timestamp: the earlier summary files are replaced. */
    memset(&o, 0, sizeof(o));
    o.iteration_count = 1;
    snprintf(o.timestamp, sizeof(o.timestamp), "%s", "20300101000000");
    assert_int_equal(nnp__msprof_export(r.raw, &o, &res), NNP_OK);
    assert_true(find_out(r.raw, "op_summary_", ".csv", old));
    assert_non_null(strstr(old, "op_summary_20300101000000.csv"));
    assert_string_equal(res.files[res.n_files - 1], "README.txt");
    snprintf(o.timestamp, sizeof(o.timestamp), "%s", "20300101000001");
    assert_int_equal(nnp__msprof_export(r.raw, &o, &res), NNP_OK);
    assert_true(access(old, F_OK) != 0);
    assert_true(find_out(r.raw, "op_summary_", ".csv", path));
    assert_non_null(strstr(path, "op_summary_20300101000001.csv"));
    /* The timeline files of the other kind stay. */
    assert_true(find_out(r.raw, "msprof_", ".json", path));
    check_readme(r.raw);
    run_done(&r);
}

/* --clear on removes exactly ASCEND_PROFILER_OUTPUT; the raw files stay. */
static void test_clear(void **state)
{
    run_t r;
    char text[TEXT_CAP], cmd[CMD_CAP], before[TEXT_CAP], after[TEXT_CAP];
    FILE *p;
    size_t n;
    (void)state;
    record(&r);
    snprintf(cmd, sizeof(cmd), "%s/nnprof analyse --quiet %s >/dev/null 2>&1", NNP_BINARY_DIR,
             r.out);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof(cmd), "%s/ASCEND_PROFILER_OUTPUT", r.raw);
    assert_int_equal(access(cmd, F_OK), 0);
    snprintf(cmd, sizeof(cmd),
             "cd %s && find . | grep -v '^./ASCEND_PROFILER_OUTPUT' | "
             "grep -v '^./mindstudio_profiler_output' | sort",
             r.raw);
    p = popen(cmd, "r");
    n = fread(before, 1, sizeof(before) - 1, p);
    before[n] = '\0';
    pclose(p);
    assert_non_null(strstr(before, "./meta.nnp"));
    assert_non_null(strstr(before, "./info.json"));

    assert_int_equal(cli(text, "summary -dir %s --clear off", r.raw), 0);
    snprintf(cmd, sizeof(cmd), "%s/ASCEND_PROFILER_OUTPUT", r.raw);
    assert_int_equal(access(cmd, F_OK), 0);
    assert_int_equal(cli(text, "summary -dir %s --clear on", r.raw), 0);
    assert_int_not_equal(access(cmd, F_OK), 0);
    snprintf(cmd, sizeof(cmd), "cd %s && find . | grep -v '^./mindstudio_profiler_output' | sort",
             r.raw);
    p = popen(cmd, "r");
    n = fread(after, 1, sizeof(after) - 1, p);
    after[n] = '\0';
    pclose(p);
    assert_string_equal(before, after);
    /* The export itself is intact and can be redone from the raw data. */
    assert_int_equal(cli(text, "timeline -dir %s --clear", r.raw), 0);
    check_readme(r.raw);
    run_done(&r);
}

/* ---- a run with device kernels, communication, host ranges and tensor memory ---- */

/* Step 1 = [T, T+100 us), step 2 = [T+200 us, T+300 us), both graph 1. */
#define T0 1000000u
#define US 1000u

static int64_t g_diff_ns; /* the run's wall - monotonic (info.json diff_time) */

static void rich_tensor(uint64_t address, uint64_t size, const char *name, uint64_t ts)
{
    nnp_tensor_t t = {address, size, nnp_intern(name), nnp_intern("Default/MatMul-op1"), 0};
    nnp_mem_alloc_at(&t, ts);
}

static void rich_range(const char *module, const char *event, uint64_t b, uint64_t e)
{
    nnp_host_tag_t tag = {nnp_intern(module), nnp_intern(event), nnp_intern("Run"), 0, 1};
    nnp_range_begin_at(&tag, b);
    nnp_range_end_at(&tag, e);
}

static void record_rich(run_t *r)
{
    nnp_options_t o;
    nnp_session_t *s;
    nnp_op_t op = {0};
    nnp_kernel_t k = {0};
    nnp_comm_t cm = {0};
    char path[PATH_CAP];
    cJSON *info;
    r->out = nnpt_mkdtemp();
    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", r->out);
    o.sample_interval_ms = 0;
    o.profile_memory = true;
    o.profile_communication = true;
    o.profile_framework = NNP_FRAMEWORK_TIME;
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    nnp_step_begin_at(1, 1, T0);
    rich_range("Dataset", "GetNext", T0 + 1 * US, T0 + 4 * US);
    rich_range("Graph", "Compile", T0 + 5 * US, T0 + 10 * US);
    op.graph_id = 1;
    op.name = nnp_intern("Default/MatMul-op1");
    op.type = nnp_intern("MatMul");
    op.correlation_id = 1;
    nnp_op_at(&op, T0 + 10 * US, T0 + 20 * US);
    rich_tensor(0x1000, 2048, "weight", T0 + 11 * US);
    k.name = nnp_intern("MatMulKernel");
    k.type = nnp_intern("KERNEL");
    k.stream_id = 3;
    k.correlation_id = 1;
    nnp_kernel_at(&k, T0 + 12 * US, T0 + 18 * US);
    rich_tensor(0x2000, 1536, "act", T0 + 15 * US);
    nnp_mem_free_at(0x2000, 1536, T0 + 19 * US);
    cm.name = nnp_intern("hcom_allReduce_1");
    cm.kind = NNP_COMM_ALLREDUCE;
    cm.group = nnp_intern("world");
    cm.peer = -1;
    nnp_comm_at(&cm, T0 + 30 * US, T0 + 40 * US);
    cm.name = nnp_intern("hcom_broadcast_1");
    cm.kind = NNP_COMM_BROADCAST;
    nnp_comm_at(&cm, T0 + 50 * US, T0 + 51 * US);
    nnp_step_end_at(1, 1, T0 + 100 * US);

    nnp_step_begin_at(2, 1, T0 + 200 * US);
    rich_range("Dataset", "GetNext", T0 + 201 * US, T0 + 202 * US);
    op.name = nnp_intern("Default/Add-op2");
    op.type = nnp_intern("Add");
    op.correlation_id = 2;
    nnp_op_at(&op, T0 + 210 * US, T0 + 215 * US);
    rich_tensor(0x3000, 512, "grad", T0 + 211 * US);
    k.name = nnp_intern("AddKernel");
    k.correlation_id = 2;
    nnp_kernel_at(&k, T0 + 211 * US, T0 + 213 * US + US / 2);
    k.name = nnp_intern("MemcpyD2H");
    k.type = nnp_intern("MEMCPY");
    k.stream_id = 5;
    nnp_kernel_at(&k, T0 + 214 * US, T0 + 214 * US + US / 2);
    cm.name = nnp_intern("hcom_allReduce_2");
    cm.kind = NNP_COMM_ALLREDUCE;
    nnp_comm_at(&cm, T0 + 230 * US, T0 + 234 * US);
    nnp_mem_free_at(0x1000, 2048, T0 + 250 * US);
    nnp_step_end_at(2, 1, T0 + 300 * US);
    snprintf(r->raw, sizeof(r->raw), "%s", nnp_session_raw_dir(s));
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    assert_int_equal(nnp__path_join(path, sizeof(path), r->raw, "info.json"), NNP_OK);
    info = load_json(path);
    assert_non_null(info);
    assert_true(cJSON_IsNumber(cJSON_GetObjectItem(info, "diff_time")));
    g_diff_ns = (int64_t)cJSON_GetObjectItem(info, "diff_time")->valuedouble * US;
    cJSON_Delete(info);
}

/* A monotonic instant T0 + us_from_t0 as the export's wall-clock "us.nnn" text. */
static const char *wall(char *b, size_t cap, double us_from_t0)
{
    int64_t ns = (int64_t)T0 + (int64_t)(us_from_t0 * US) + g_diff_ns;
    snprintf(b, cap, "%lld.%03lld", (long long)(ns / US), (long long)(ns % US));
    return b;
}

/* One expected row: cells in column order, NULL = the wall time of the next number. */
static void expect_row(const csv_t *c, int row, const char *const *cells, const double *times)
{
    char b[FIELD_CAP];
    int t = 0;
    for (int k = 0; k < c->n_cols; k++) {
        const char *want = cells[k] ? cells[k] : wall(b, sizeof(b), times[t++]);
        if (strcmp(c->cell[row][k], want) != 0)
            fail_msg("row %d column %s: '%s', expected '%s'", row, c->cell[0][k], c->cell[row][k],
                     want);
    }
}

/* The json table equals the csv one: same rows, objects keyed by the csv header. */
static void check_json_equals_csv(cJSON *arr, const csv_t *c)
{
    cJSON *obj;
    int row = 1;
    assert_int_equal(cJSON_GetArraySize(arr), c->n_rows - 1);
    cJSON_ArrayForEach(obj, arr)
    {
        assert_int_equal(cJSON_GetArraySize(obj), c->n_cols);
        for (int i = 0; i < c->n_cols; i++) {
            cJSON *v = cJSON_GetObjectItem(obj, c->cell[0][i]);
            assert_non_null(v);
            if (cJSON_IsString(v))
                assert_string_equal(v->valuestring, c->cell[row][i]);
            else
                assert_true(v->valuedouble == strtod(c->cell[row][i], NULL));
        }
        row++;
    }
}

/* task_time, communication_statistic, api_statistic, memory_record and operator_memory:
 * exact rows, csv == json, README.txt, and the --iteration-id window. */
static void test_rich_summary(void **state)
{
    static const char *const kinds[] = {"task_time_", "communication_statistic_", "api_statistic_",
                                        "memory_record_", "operator_memory_"};
    const char *X = NULL; /* a wall-clock time cell */
    run_t r;
    char text[TEXT_CAP], path[PATH_CAP];
    csv_t *c = &g_csv;
    cJSON *arrs[sizeof(kinds) / sizeof(kinds[0])];
    (void)state;
    record_rich(&r);
    assert_int_equal(cli(text, "summary -dir %s", r.raw), 0);
    check_readme(r.raw);

    assert_int_equal(summary_rows(r.raw, "task_time_", c), 3);
    expect_row(c, 1,
               (const char *const[]){"0", "MatMulKernel", "KERNEL", "3", "N/A", "6.000", X, X},
               (const double[]){12, 18});
    expect_row(c, 2, (const char *const[]){"0", "AddKernel", "KERNEL", "3", "N/A", "2.500", X, X},
               (const double[]){211, 213.5});
    expect_row(c, 3, (const char *const[]){"0", "MemcpyD2H", "MEMCPY", "5", "N/A", "0.500", X, X},
               (const double[]){214, 214.5});

    /* allreduce 10 + 4 us, broadcast 1 us: most total time first. */
    assert_int_equal(summary_rows(r.raw, "communication_statistic_", c), 2);
    expect_row(c, 1,
               (const char *const[]){"0", "allreduce", "2", "14.000", "4.000", "7.000", "10.000",
                                     "93.333"},
               NULL);
    expect_row(
        c, 2,
        (const char *const[]){"0", "broadcast", "1", "1.000", "1.000", "1.000", "1.000", "6.667"},
        NULL);

    /* Graph/Compile 5 us; Dataset/GetNext 3 + 1 us: variance (9 + 1) / 2 - 2^2 = 1. */
    assert_int_equal(summary_rows(r.raw, "api_statistic_", c), 2);
    expect_row(c, 1,
               (const char *const[]){"0", "Graph", "Compile", "5.000", "1", "5.000", "5.000",
                                     "5.000", "0.000"},
               NULL);
    expect_row(c, 2,
               (const char *const[]){"0", "Dataset", "GetNext", "4.000", "2", "2.000", "1.000",
                                     "3.000", "1.000"},
               NULL);

    /* The running total after each event, in KB (2048 + 1536 - 1536 + 512 - 2048 bytes). */
    assert_int_equal(summary_rows(r.raw, "memory_record_", c), 5);
    assert_string_equal(c->cell[0][2], "Timestamp(us)");
    expect_row(c, 1, (const char *const[]){"0", "APP", X, "2.000", "2.000", "CPU:0"},
               (const double[]){11});
    expect_row(c, 2, (const char *const[]){"0", "APP", X, "3.500", "3.500", "CPU:0"},
               (const double[]){15});
    expect_row(c, 3, (const char *const[]){"0", "APP", X, "2.000", "2.000", "CPU:0"},
               (const double[]){19});
    expect_row(c, 4, (const char *const[]){"0", "APP", X, "2.500", "2.500", "CPU:0"},
               (const double[]){211});
    expect_row(c, 5, (const char *const[]){"0", "APP", X, "0.500", "0.500", "CPU:0"},
               (const double[]){250});

    /* Freed tensors in release order, then the never-freed one (release columns N/A). */
    assert_int_equal(summary_rows(r.raw, "operator_memory_", c), 3);
    assert_string_equal(c->cell[0][8], "Release Total Reserved(KB)");
    expect_row(c, 1,
               (const char *const[]){"0", "act", "1.500", X, "4.000", "3.500", "3.500", "2.000",
                                     "2.000", "CPU:0"},
               (const double[]){15});
    expect_row(c, 2,
               (const char *const[]){"0", "weight", "2.000", X, "239.000", "2.000", "2.000",
                                     "0.500", "0.500", "CPU:0"},
               (const double[]){11});
    expect_row(c, 3,
               (const char *const[]){"0", "grad", "0.500", X, "N/A", "2.500", "2.500", "N/A", "N/A",
                                     "CPU:0"},
               (const double[]){211});

    /* json holds the same tables. */
    assert_int_equal(cli(text, "summary -dir %s --format json", r.raw), 0);
    check_readme(r.raw);
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        assert_true(find_out(r.raw, kinds[k], ".json", path));
        arrs[k] = load_json(path);
        assert_non_null(arrs[k]);
    }
    assert_int_equal(cli(text, "summary -dir %s", r.raw), 0);
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        assert_true(summary_rows(r.raw, kinds[k], c) > 0);
        check_json_equals_csv(arrs[k], c);
        cJSON_Delete(arrs[k]);
    }

    /* Iteration 2 of graph 1: what starts in [T+200, T+300) us. Totals stay the run's. */
    assert_int_equal(cli(text, "summary -dir %s --model-id 1 --iteration-id 2", r.raw), 0);
    check_readme(r.raw);
    assert_int_equal(summary_rows(r.raw, "task_time_", c), 2);
    assert_string_equal(c->cell[1][col(c, "kernel_name")], "AddKernel");
    assert_int_equal(summary_rows(r.raw, "communication_statistic_", c), 1);
    assert_string_equal(c->cell[1][col(c, "Total Time(us)")], "4.000");
    assert_string_equal(c->cell[1][col(c, "Ratio(%)")], "100.000");
    assert_int_equal(summary_rows(r.raw, "api_statistic_", c), 1);
    assert_string_equal(c->cell[1][col(c, "Time(us)")], "1.000");
    assert_int_equal(summary_rows(r.raw, "memory_record_", c), 2);
    assert_string_equal(c->cell[1][col(c, "Total Allocated(KB)")], "2.500");
    assert_string_equal(c->cell[2][col(c, "Total Allocated(KB)")], "0.500");
    assert_int_equal(summary_rows(r.raw, "operator_memory_", c), 1);
    assert_string_equal(c->cell[1][col(c, "Name")], "grad");
    run_done(&r);
}

/* The msprof timeline's processes and threads: CANN, Ascend Hardware (a thread per
 * stream), Communication (a plane per group) and Overlap Analysis. */
static void test_rich_timeline(void **state)
{
    static const char *const procs[] = {"CANN", "Ascend Hardware", "Communication",
                                        "Overlap Analysis"};
    run_t r;
    char text[TEXT_CAP], path[PATH_CAP];
    cJSON *arr, *ev;
    int pid[4] = {-1, -1, -1, -1}, hw_slices = 0, comm_slices = 0;
    bool stream3 = false, stream5 = false, plane = false;
    (void)state;
    record_rich(&r);
    assert_int_equal(cli(text, "timeline -dir %s", r.raw), 0);
    check_readme(r.raw);
    assert_true(find_out(r.raw, "msprof_", ".json", path));
    arr = load_json(path);
    assert_non_null(arr);
    cJSON_ArrayForEach(ev, arr)
    {
        const char *ph = cJSON_GetObjectItem(ev, "ph")->valuestring;
        const char *nm = cJSON_GetObjectItem(ev, "name")->valuestring;
        cJSON *args = cJSON_GetObjectItem(ev, "args");
        if (strcmp(ph, "M") == 0 && strcmp(nm, "process_name") == 0)
            for (int k = 0; k < 4; k++)
                if (strcmp(cJSON_GetObjectItem(args, "name")->valuestring, procs[k]) == 0) {
                    assert_int_equal(pid[k], -1); /* named once */
                    pid[k] = cJSON_GetObjectItem(ev, "pid")->valueint;
                }
    }
    for (int k = 0; k < 4; k++)
        if (pid[k] < 0)
            fail_msg("no process %s", procs[k]);
    cJSON_ArrayForEach(ev, arr)
    {
        const char *ph = cJSON_GetObjectItem(ev, "ph")->valuestring;
        const char *nm = cJSON_GetObjectItem(ev, "name")->valuestring;
        int p = cJSON_GetObjectItem(ev, "pid")->valueint;
        int tid = cJSON_GetObjectItem(ev, "tid")->valueint;
        cJSON *args = cJSON_GetObjectItem(ev, "args");
        if (strcmp(ph, "M") == 0 && strcmp(nm, "thread_name") == 0) {
            const char *tn = cJSON_GetObjectItem(args, "name")->valuestring;
            stream3 |= p == pid[1] && tid == 3 && strcmp(tn, "Stream 3") == 0;
            stream5 |= p == pid[1] && tid == 5 && strcmp(tn, "Stream 5") == 0;
            plane |= p == pid[2] && strcmp(tn, "Plane world") == 0;
        } else if (strcmp(ph, "X") == 0 && p == pid[1]) {
            double dur = cJSON_GetObjectItem(ev, "dur")->valuedouble;
            hw_slices++;
            if (strcmp(nm, "MatMulKernel") == 0) {
                assert_int_equal(tid, 3);
                assert_true(dur == 6.0);
            } else if (strcmp(nm, "MemcpyD2H") == 0) {
                assert_int_equal(tid, 5);
                assert_true(dur == 0.5);
            } else {
                assert_string_equal(nm, "AddKernel");
            }
        } else if (strcmp(ph, "X") == 0 && p == pid[2]) {
            comm_slices++;
            assert_non_null(strstr(nm, "hcom_"));
        }
    }
    cJSON_Delete(arr);
    assert_true(stream3 && stream5 && plane);
    assert_int_equal(hw_slices, 3);
    assert_int_equal(comm_slices, 3);
    run_done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flag_validation),
        cmocka_unit_test(test_step_and_graph_mode),
        cmocka_unit_test(test_iteration_count),
        cmocka_unit_test(test_csv_json_equal),
        cmocka_unit_test(test_timeline_readme_rewrite),
        cmocka_unit_test(test_clear),
        cmocka_unit_test(test_rich_summary),
        cmocka_unit_test(test_rich_timeline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
