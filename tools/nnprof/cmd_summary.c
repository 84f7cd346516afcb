/* cmd_summary.c - `nnprof summary DIR`: a short human summary of analysed data, per rank in
 * rank order: the op types with the most time (the ops with the most self time when ops
 * nest), the host ranges, the step phases, compute/communication per step, the GPU's time
 * as HTA breaks it down (GPU runs), the advisor's findings, and where every output and the
 * timeline are. Reads the files `nnprof analyse`
 * wrote (docs/OUTPUTS.md) wherever they went: beside our raw data, in an `analyse -o OUT`
 * folder, or in the nnprof_output/ folder of other tools' data. It analyses nothing itself:
 * data never analysed is an error that says so. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/driver.h"
#include "analyse/hta.h"
#include "cli.h"
#include "nnprof/nnprof.h"
#include "read/importers.h"
#include "read/json_num.h"
#include "read/raw_reader.h"

/* Ranks one call summarises, and lines of each table shown. */
#define MAX_RANKS 4096
/* Rows of each top table (op types, self-time ops, host ranges). */
#define TOP_ROWS 5
/* Name column of those tables: at least this wide, wider up to NAME_WIDTH_MAX for the
 * longest name shown (torch's names are long), so that the numbers line up. */
#define NAME_WIDTH     24
#define NAME_WIDTH_MAX 96
#define MAX_FINDINGS   5
#define LINE_CAP       4096
#define FILE_CAP       (64u * 1024u * 1024u)
/* A directory path, and room for it plus a file name. */
#define DIR_CAP  4096
#define PATH_CAP (DIR_CAP + 256)
/* op_statistic columns used (0-based): OP Type, Count, Total Time(us), Ratio(%). */
#define COL_TYPE     0
#define COL_COUNT    2
#define COL_TOTAL    3
#define COL_RATIO    7
#define OP_STAT_COLS 8
/* host_ranges columns: Name, Calls, Total, Self, Avg, Min, Max, Self %. */
#define HR_COLS  8
#define HR_NAME  0
#define HR_CALLS 1
#define HR_TOTAL 2
#define HR_SELF  3
#define HR_PCT   7
/* op_stacks columns: Name, Source Location, Calls, Total, Self, Avg, Min, Max, Self %. */
#define OS_COLS   9
#define OS_NAME   0
#define OS_SOURCE 1
#define OS_CALLS  2
#define OS_SELF   4
#define OS_PCT    8
/* Frames of a source location the summary shows (innermost first). */
#define OS_FRAMES 2
/* Fields kept per row: the most of any table above. */
#define TABLE_COLS 8
/* step_trace_time columns: Step, Computing, Comm(Not Overlapped), Overlapped, Comm, Free. */
#define OV_COLS 6
/* hta/temporal_breakdown columns: rank, idle, compute, non-compute, kernel time (HTA's "ns",
 * which hold us), then their percentages. */
#define TB_COLS    8
#define TB_RANK    0
#define TB_KERNEL  4
#define TB_IDLE    5
#define TB_COMPUTE 6
#define TB_OTHER   7
/* step_trace_raw columns kept for the averages row. */
#define ST_COLS           64
#define PROFILER_DIR_NAME "profiler"
#define INFO_PREFIX       "profiler_info_"
#define INFO_SUFFIX       ".json"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || (unsigned long)n > FILE_CAP ||
        fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return NULL;
    }
    buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        buf[n] = '\0';
    fclose(f);
    return buf;
}

static cJSON *load_json(const char *path)
{
    char *text = slurp(path);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    free(text);
    return j;
}

/* Splits a CSV line of our own files into at most max fields (quotes honoured, in place).
 * Returns the number of fields. */
static int split_csv(char *line, char **fields, int max)
{
    int n = 0;
    char *p = line;
    line[strcspn(line, "\r\n")] = '\0';
    while (n < max) {
        char *out;
        fields[n++] = out = p;
        if (*p == '"') {
            fields[n - 1] = out = ++p;
            while (*p) {
                if (p[0] == '"' && p[1] == '"') {
                    *out++ = '"';
                    p += 2;
                } else if (*p == '"') {
                    p++;
                    break;
                } else {
                    *out++ = *p++;
                }
            }
            *out = '\0';
            while (*p && *p != ',')
                p++;
        } else {
            while (*p && *p != ',')
                p++;
        }
        if (*p != ',') {
            if (*p)
                *p = '\0';
            break;
        }
        *p++ = '\0';
    }
    return n;
}

/* A CUDA kernel's demangled signature shown without its return type and parameter list,
 * in place ("void at::native::k<float>(int, float*)" -> "at::native::k<float>"): those
 * make a GPU run's names 150 characters long, and the template arguments that stay tell
 * a kernel's instantiations apart. The CSV files keep whole names; other names are left
 * as they are. */
#define KERNEL_RETURN "void "
static void kernel_short_name(char *s)
{
    size_t pre = sizeof(KERNEL_RETURN) - 1, n = strlen(s);
    int depth = 0;
    if (n <= pre || strncmp(s, KERNEL_RETURN, pre) != 0 || s[n - 1] != ')')
        return;
    for (size_t i = n; i-- > pre;) {
        if (s[i] == ')') {
            depth++;
        } else if (s[i] == '(' && --depth == 0) {
            if (i == pre)
                return; /* nothing before the parameters: keep the name whole */
            s[i] = '\0';
            memmove(s, s + pre, i - pre + 1);
            return;
        }
    }
}

/* The first rows of one of our CSV files (its header skipped), split into fields. */
typedef struct top_rows {
    char lines[TOP_ROWS][LINE_CAP];
    char *f[TOP_ROWS][TABLE_COLS];
    int n;
    int name_width; /* of the name column: the longest name shown, at least NAME_WIDTH */
} top_rows_t;

/* Reads up to TOP_ROWS rows of at least cols fields of path (rows with fewer are
 * skipped); the name is field name_col. False when the file cannot be opened. */
static bool read_top(const char *path, int cols, int name_col, top_rows_t *t)
{
    char head[LINE_CAP];
    FILE *in = fopen(path, "r");
    t->n = 0;
    t->name_width = NAME_WIDTH;
    if (!in)
        return false;
    if (!fgets(head, sizeof(head), in))
        head[0] = '\0';
    while (t->n < TOP_ROWS && fgets(t->lines[t->n], LINE_CAP, in)) {
        int len;
        if (split_csv(t->lines[t->n], t->f[t->n], cols) < cols)
            continue;
        kernel_short_name(t->f[t->n][name_col]);
        len = (int)strlen(t->f[t->n][name_col]);
        if (len > t->name_width)
            t->name_width = len < NAME_WIDTH_MAX ? len : NAME_WIDTH_MAX;
        t->n++;
    }
    fclose(in);
    return true;
}

static void top_op_types(const char *dir, int rank)
{
    static top_rows_t t;
    char path[PATH_CAP];
    snprintf(path, sizeof(path), "%s/op_statistic_%d.csv", dir, rank);
    if (!read_top(path, OP_STAT_COLS, COL_TYPE, &t)) {
        printf("Top op types: none (no op statistics)\n");
        return;
    }
    if (t.n == 0) {
        printf("Top op types: none (no op was recorded)\n");
        return;
    }
    printf("Top op types (share of op time):\n");
    for (int i = 0; i < t.n; i++) {
        char **f = t.f[i];
        printf("  %-*s %6s%%  %8s calls  %14s us\n", t.name_width, f[COL_TYPE], f[COL_RATIO],
               f[COL_COUNT], f[COL_TOTAL]);
    }
}

static void top_host_ranges(const char *dir, int rank)
{
    static top_rows_t t;
    char path[PATH_CAP];
    snprintf(path, sizeof(path), "%s/host_ranges_%d.csv", dir, rank);
    if (!read_top(path, HR_COLS, HR_NAME, &t) || t.n == 0)
        return;
    printf("Top host ranges (host_ranges_%d.csv; total includes nested ranges):\n", rank);
    for (int i = 0; i < t.n; i++) {
        char **f = t.f[i];
        printf("  %-*s %8s calls  total %14s us  self %14s us (%s%%)\n", t.name_width, f[HR_NAME],
               f[HR_CALLS], f[HR_TOTAL], f[HR_SELF], f[HR_PCT]);
    }
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : 0.0;
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* When host ops nest (PyTorch: aten::conv2d inside aten::convolution inside an autograd
 * node), op_statistic's totals count a callee's time again in each caller, and its top
 * types repeat one piece of work. The analysis then wrote op_self_time_{rank}.csv (torch's
 * key_averages sorted by self time, the host_ranges columns), shown instead. Returns
 * whether it printed it. */
static bool top_self_ops(const char *dir, int rank, bool torch_trace)
{
    static top_rows_t t;
    char path[PATH_CAP];
    snprintf(path, sizeof(path), "%s/op_self_time_%d.csv", dir, rank);
    if (!read_top(path, HR_COLS, HR_NAME, &t) || t.n == 0)
        return false;
    if (torch_trace) /* its table counts what key_averages() counts, not only ops */
        printf("Top by self time, as torch's key_averages() counts (op_self_time_%d.csv: ops, "
               "record_function ranges, ProfilerStep*):\n",
               rank);
    else
        printf("Top ops by self time (op_self_time_%d.csv; ops nest: op_statistic's totals "
               "include nested ops):\n",
               rank);
    for (int i = 0; i < t.n; i++) {
        char **f = t.f[i];
        printf("  %-*s %6s%%  %8s calls  self %14s us  total %14s us\n", t.name_width, f[HR_NAME],
               f[HR_PCT], f[HR_CALLS], f[HR_SELF], f[HR_TOTAL]);
    }
    return true;
}

/* op_stacks_{rank}.csv (ops with Python stacks: with_stack, or a trace's): the rows with a
 * source location that take the most self time, each with its innermost frames. Its rows
 * can be longer than any fixed line (deep stacks): read with getline. */
static void top_stacks(const char *dir, int rank)
{
    char path[PATH_CAP], *line = NULL, *f[OS_COLS];
    size_t cap = 0;
    int shown = 0;
    FILE *in;
    snprintf(path, sizeof(path), "%s/op_stacks_%d.csv", dir, rank);
    in = fopen(path, "r");
    if (!in)
        return;
    if (getline(&line, &cap, in) < 0) { /* the header */
        free(line);
        fclose(in);
        return;
    }
    while (shown < TOP_ROWS && getline(&line, &cap, in) >= 0) {
        const char *src;
        if (split_csv(line, f, OS_COLS) < OS_COLS || !f[OS_SOURCE][0])
            continue;
        if (shown++ == 0)
            printf("Top source locations by self time (op_stacks_%d.csv, innermost frames "
                   "first):\n",
                   rank);
        printf("  %-*s %6s%%  %8s calls  self %14s us\n", NAME_WIDTH, f[OS_NAME], f[OS_PCT],
               f[OS_CALLS], f[OS_SELF]);
        src = f[OS_SOURCE];
        for (int k = 0; k < OS_FRAMES && *src; k++) {
            size_t len = strcspn(src, ";");
            printf("      %s %.*s\n", k ? "<-" : "at", (int)len, src);
            src += len + (src[len] == ';');
        }
    }
    free(line);
    fclose(in);
}

/* Steps of step_trace_raw_{rank}_detail_time.csv with a known iteration interval (a
 * forward start: an op or an fp mark inside the step), and all steps. */
static void phases_known(const char *dir, int rank, int *known, int *steps)
{
    char path[PATH_CAP], head[LINE_CAP], line[LINE_CAP], *h[ST_COLS], *f[ST_COLS];
    int nh, col = -1;
    FILE *in;
    *known = *steps = 0;
    snprintf(path, sizeof(path), "%s/step_trace_raw_%d_detail_time.csv", dir, rank);
    in = fopen(path, "r");
    if (!in)
        return;
    if (!fgets(head, sizeof(head), in)) {
        fclose(in);
        return;
    }
    nh = split_csv(head, h, ST_COLS);
    for (int i = 0; i < nh && col < 0; i++)
        col = strcmp(h[i], "iteration_interval") == 0 ? i : -1;
    while (col >= 0 && fgets(line, sizeof(line), in)) {
        int n = split_csv(line, f, ST_COLS);
        if (n <= col || strcmp(f[0], "-") == 0)
            continue;
        (*steps)++;
        *known += f[col][0] != '\0';
    }
    fclose(in);
}

static void step_phases(const char *dir, int rank)
{
    char path[PATH_CAP];
    int known, steps;
    cJSON *s;
    snprintf(path, sizeof(path), "%s/step_trace_summary_%d.json", dir, rank);
    s = load_json(path);
    if (!s || num(s, "total_steps") == 0) {
        printf("Step phases: no steps recorded\n");
        cJSON_Delete(s);
        return;
    }
    phases_known(dir, rank, &known, &steps);
    if (known == 0) {
        /* The summary file holds 0 for unknown phases (MindInsight's format); saying
         * "0 + 0" would not add up to the step. */
        printf("Step phases (average of %.0f steps): %.4f ms per step; the phases are unknown: "
               "no op and no forward/backward mark was recorded inside the steps\n",
               num(s, "total_steps"), num(s, "total_time"));
        cJSON_Delete(s);
        return;
    }
    printf("Step phases (average of %.0f steps): %.4f ms =\n", num(s, "total_steps"),
           num(s, "total_time"));
    printf("  iteration interval %.4f ms (%s)  waiting for data / host work\n",
           num(s, "iteration_interval"), str(s, "iteration_interval_percent"));
    if (cJSON_GetObjectItemCaseSensitive(s, "fp_and_bp")) {
        printf("  forward+backward   %.4f ms (%s)\n", num(s, "fp_and_bp"),
               str(s, "fp_and_bp_percent"));
        printf("  tail               %.4f ms (%s)  gradient communication and update\n",
               num(s, "tail"), str(s, "tail_percent"));
    } else {
        printf("  forward            %.4f ms (%s)\n", num(s, "fp"), str(s, "fp_percent"));
    }
    if (known < steps)
        printf("  (the phases are averages over the %d of %d steps whose forward start is "
               "known; the others have only a total)\n",
               known, steps);
    cJSON_Delete(s);
}

/* A CSV file opened for its rows: its header line read (into line, cap bytes). NULL when
 * it cannot be opened (the file is optional). */
static FILE *open_rows(const char *path, char *line, int cap)
{
    FILE *in = fopen(path, "r");
    if (in && !fgets(line, cap, in))
        line[0] = '\0';
    return in;
}

static void overlap(const char *rank_dir)
{
    char path[PATH_CAP], line[LINE_CAP], *f[OV_COLS];
    double sum[OV_COLS] = {0};
    int rows = 0;
    bool whole_run = false; /* the one row of a run without steps: an empty Step */
    FILE *in;
    snprintf(path, sizeof(path), "%s/step_trace_time.csv", rank_dir);
    if (!(in = open_rows(path, line, sizeof(line))))
        return;
    while (fgets(line, sizeof(line), in)) {
        if (split_csv(line, f, OV_COLS) < OV_COLS)
            continue;
        for (int k = 1; k < OV_COLS; k++)
            sum[k] += strtod(f[k], NULL);
        whole_run = f[0][0] == '\0';
        rows++;
    }
    fclose(in);
    if (rows == 0)
        return;
    printf("%s: computing %.3f, communication %.3f of which not overlapped %.3f, free %.3f\n",
           rows == 1 && whole_run ? "Whole run (no steps, us)" : "Per step (average, us)",
           sum[1] / rows, sum[4] / rows, sum[2] / rows, sum[5] / rows);
}

/* HTA's temporal breakdown of the rank's GPU time (PyTorch traces, the CUDA back end's
 * captures: dir/hta/), one line. */
static void gpu_time(const char *dir, int rank)
{
    char path[PATH_CAP], line[LINE_CAP], *f[TB_COLS];
    FILE *in;
    snprintf(path, sizeof(path), "%s/%s/temporal_breakdown.csv", dir, NNP_HTA_DIR);
    if (!(in = open_rows(path, line, sizeof(line))))
        return;
    while (fgets(line, sizeof(line), in)) {
        char *end;
        if (split_csv(line, f, TB_COLS) < TB_COLS || strtol(f[TB_RANK], &end, 10) != rank ||
            *end != '\0')
            continue;
        printf("GPU (HTA's temporal breakdown, %s/): %s us from the first kernel to the last: "
               "compute %s %%, other kernels (communication, memory) %s %%, idle %s %%\n",
               NNP_HTA_DIR, f[TB_KERNEL], f[TB_COMPUTE], f[TB_OTHER], f[TB_IDLE]);
        break;
    }
    fclose(in);
}

static void advice(const char *dir, int rank)
{
    char path[PATH_CAP];
    cJSON *a, *list, *it;
    int shown = 0;
    snprintf(path, sizeof(path), "%s/advice_%d.json", dir, rank);
    a = load_json(path);
    list = cJSON_GetObjectItemCaseSensitive(a, "findings");
    if (!cJSON_IsArray(list)) {
        cJSON_Delete(a);
        return;
    }
    printf("Advisor (%d finding%s, details in advice_%d.txt):\n", cJSON_GetArraySize(list),
           cJSON_GetArraySize(list) == 1 ? "" : "s", rank);
    cJSON_ArrayForEach(it, list)
    {
        if (shown++ == MAX_FINDINGS)
            break;
        printf("  [%s] %s\n      -> %s\n", str(it, "severity"), str(it, "title"),
               str(it, "suggestion"));
    }
    cJSON_Delete(a);
}

/* ---- finding analysed results ---- */

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

/* The rank in "profiler_info_<rank>.json", or -1. */
static int rank_of_name(const char *name)
{
    size_t lp = strlen(INFO_PREFIX), ls = strlen(INFO_SUFFIX), n = strlen(name);
    long v = 0;
    if (n <= lp + ls || strncmp(name, INFO_PREFIX, lp) != 0 ||
        strcmp(name + n - ls, INFO_SUFFIX) != 0)
        return -1;
    for (size_t i = lp; i < n - ls; i++) {
        if (name[i] < '0' || name[i] > '9' || v > INT32_MAX / 10)
            return -1;
        v = v * 10 + (name[i] - '0');
    }
    return (int)v;
}

/* profiler_info files found but not readable as JSON (find_ranks): named once each on
 * stderr, and not_analysed then says so instead of "nothing here". */
static int g_damaged;

/* Ranks analysed into dir: profiler_info_{rank}.json files nnprof wrote, sorted. */
static int find_ranks(const char *dir, int *ranks, int cap)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL && n < cap) {
        char path[PATH_CAP];
        int r = rank_of_name(e->d_name);
        cJSON *info;
        if (r < 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        info = load_json(path);
        if (!info) {
            /* A MindSpore profiler_info (no nnprof_version) is skipped quietly; a file that
             * is no JSON at all is a damaged result of ours or theirs: say which. */
            nnp_cli_error(path,
                          "not readable as JSON (damaged or cut short?): rank %d left out; "
                          "'nnprof analyse' on the profiling data writes it again",
                          r);
            g_damaged++;
        }
        if (cJSON_GetObjectItemCaseSensitive(info, "nnprof_version"))
            ranks[n++] = r;
        cJSON_Delete(info);
    }
    closedir(d);
    qsort(ranks, (size_t)n, sizeof(int), cmp_int);
    return n;
}

/* The folder holding results for what the user named: DIR itself (a profiler/ folder or
 * an `analyse -o` folder), DIR/profiler, DIR/nnprof_output, or the folder above a raw
 * directory. */
static int find_results(const char *dir, char *out, int *ranks, int cap)
{
    static const char *const subs[] = {"", PROFILER_DIR_NAME, NNP_FOREIGN_OUT_DIR,
                                       PROFILER_DIR_NAME "/" NNP_FOREIGN_OUT_DIR, ".."};
    for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
        int n;
        if (strcmp(subs[i], "..") == 0 && !nnp__raw_is_dir(dir))
            continue;
        if (snprintf(out, DIR_CAP, "%s%s%s", dir, subs[i][0] ? "/" : "", subs[i]) >= DIR_CAP)
            continue;
        n = find_ranks(out, ranks, cap);
        if (n > 0)
            return n;
    }
    return 0;
}

static void one_rank(const char *dir, int rank)
{
    char path[PATH_CAP], rank_dir[DIR_CAP];
    cJSON *info;
    int64_t events = -1, samples = 0, workers = 0, worker_ops = 0;
    snprintf(path, sizeof(path), "%s/profiler_info_%d.json", dir, rank);
    info = load_json(path);
    nnp__json_int(info, "events_recorded", NULL, 0, INT64_MAX, path, &events);
    nnp__json_int(info, "samples_recorded", NULL, 0, INT64_MAX, path, &samples);
    if (cJSON_GetObjectItemCaseSensitive(info, "worker_processes")) {
        nnp__json_int(info, "worker_processes", NULL, 0, INT64_MAX, path, &workers);
        nnp__json_int(info, "worker_ops", NULL, 0, INT64_MAX, path, &worker_ops);
    }
    snprintf(rank_dir, sizeof(rank_dir), "%s", str(info, "rank_output_dir"));
    printf("== rank %d  (%s)\n", rank, str(info, "source"));
    if (events == 0)
        printf("No events were recorded, only %lld CPU/memory samples: the program made no "
               "recording call.\n  Record ops, steps and ranges with the API (nnp_op_*, "
               "nnp_step_begin/end, nnp_range_begin/end;\n  in Python nnprof.record_function and "
               "Profiler.step), see docs/PYTHON.md and README.md.\n",
               (long long)samples);
    if (workers > 0)
        printf("Worker processes: %lld (DataLoader workers, forked children) recorded %lld ops: "
               "they are in the timeline, not in the tables below (docs/OUTPUTS.md)\n",
               (long long)workers, (long long)worker_ops);
    if (!top_self_ops(dir, rank, strcmp(str(info, "mode"), NNP_KINETO_SOURCE_FORMAT) == 0))
        top_op_types(dir, rank);
    top_stacks(dir, rank);
    top_host_ranges(dir, rank);
    step_phases(dir, rank);
    if (rank_dir[0])
        overlap(rank_dir);
    gpu_time(dir, rank);
    advice(dir, rank);
    printf("Outputs: %s/*_%d.* (docs/OUTPUTS.md)\n", dir, rank);
    if (rank_dir[0])
        printf("Timeline: %s/trace_view.json\n"
               "  open it at https://ui.perfetto.dev (Open trace file) or chrome://tracing\n",
               rank_dir);
    printf("\n");
    cJSON_Delete(info);
}

static void help(FILE *f)
{
    fprintf(f, "usage: nnprof summary DIR\n\n"
               "Prints a short summary of analysed data (run 'nnprof analyse DIR' first): per\n"
               "rank, the op types and host ranges with the most time, the step phases,\n"
               "compute/communication per step, the advisor's findings, and where the outputs\n"
               "and the timeline are. DIR is what was analysed, or the folder the results\n"
               "went to (the profiler/ folder, an 'analyse -o OUT' folder, nnprof_output/).\n\n"
               "exit: 0 ok, 1 no analysed data found (or data never analysed), 2 usage error\n");
}

/* Nothing analysed under dir: says whether there is data to analyse. */
static int not_analysed(const char *dir)
{
    nnp_inputs_t in;
    int rc, n;
    if (g_damaged > 0) {
        nnp_cli_error(dir,
                      "no readable analysed results: %d damaged profiler_info file(s), named "
                      "above",
                      g_damaged);
        return NNP_EXIT_FAIL;
    }
    rc = nnp__inputs_find(dir, &in);
    n = in.n + in.n_unranked;
    nnp__inputs_fini(&in);
    if (rc != NNP_OK)
        nnp_cli_error(dir, "no analysed results found: %s", nnp_last_error());
    else if (n > 0)
        nnp_cli_error(dir,
                      "holds profiling data that was never analysed: run 'nnprof analyse %s' "
                      "first",
                      dir);
    else
        nnp_cli_error(dir, "no nnprof results or profiling data found");
    return NNP_EXIT_FAIL;
}

int nnp_cmd_summary(int argc, char **argv)
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    char dir[DIR_CAP];
    int *ranks, opt, n;

    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (opt == 'h') {
            help(stdout);
            return NNP_EXIT_OK;
        }
        help(stderr);
        return NNP_EXIT_USAGE;
    }
    if (optind != argc - 1) {
        nnp_cli_error("summary", "expected exactly one DIR argument");
        return NNP_EXIT_USAGE;
    }
    ranks = calloc(MAX_RANKS, sizeof(int));
    if (!ranks)
        return NNP_EXIT_FAIL;
    n = find_results(argv[optind], dir, ranks, MAX_RANKS);
    if (n == 0) {
        free(ranks);
        return not_analysed(argv[optind]);
    }
    for (int i = 0; i < n; i++)
        one_rank(dir, ranks[i]);
    free(ranks);
    return NNP_EXIT_OK;
}
