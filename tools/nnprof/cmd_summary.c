/* cmd_summary.c - `nnprof summary DIR`: a short human summary of analysed data, per rank:
 * the op types with the most time, the step phases, compute/communication per step, the
 * advisor's findings, and where every output and the timeline are. Reads the files
 * `nnprof analyse` wrote (docs/OUTPUTS.md); it analyses nothing itself. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "nnprof/nnprof.h"

/* Raw directories (ranks) one call summarises, and lines of each table shown. */
#define MAX_DIRS     4096
#define TOP_TYPES    5
#define MAX_FINDINGS 5
#define LINE_CAP     4096
#define FILE_CAP     (64u * 1024u * 1024u)
/* A directory path, and room for it plus a file name. */
#define DIR_CAP  4096
#define PATH_CAP (DIR_CAP + 256)
/* op_statistic columns used (0-based): OP Type, Count, Total Time(us), Ratio(%). */
#define COL_TYPE     0
#define COL_COUNT    2
#define COL_TOTAL    3
#define COL_RATIO    7
#define OP_STAT_COLS 8
/* step_trace_time columns: Step, Computing, Comm(Not Overlapped), Overlapped, Comm, Free. */
#define OV_COLS 6

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

static void top_op_types(const char *prof, int rank)
{
    char path[PATH_CAP], line[LINE_CAP], *f[OP_STAT_COLS];
    FILE *in;
    int shown = 0;
    snprintf(path, sizeof(path), "%s/op_statistic_%d.csv", prof, rank);
    in = fopen(path, "r");
    if (!in) {
        printf("  (no op statistics)\n");
        return;
    }
    printf("Top op types (share of op time):\n");
    if (!fgets(line, sizeof(line), in)) /* header */
        line[0] = '\0';
    while (shown < TOP_TYPES && fgets(line, sizeof(line), in)) {
        if (split_csv(line, f, OP_STAT_COLS) < OP_STAT_COLS)
            continue;
        printf("  %-24s %6s%%  %8s calls  %14s us\n", f[COL_TYPE], f[COL_RATIO], f[COL_COUNT],
               f[COL_TOTAL]);
        shown++;
    }
    fclose(in);
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

static void step_phases(const char *prof, int rank)
{
    char path[PATH_CAP];
    cJSON *s;
    snprintf(path, sizeof(path), "%s/step_trace_summary_%d.json", prof, rank);
    s = load_json(path);
    if (!s || num(s, "total_steps") == 0) {
        printf("Step phases: no steps recorded\n");
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
    cJSON_Delete(s);
}

static void overlap(const char *raw)
{
    char path[PATH_CAP], line[LINE_CAP], *f[OV_COLS];
    double sum[OV_COLS] = {0};
    int rows = 0;
    FILE *in;
    snprintf(path, sizeof(path), "%s/ASCEND_PROFILER_OUTPUT/step_trace_time.csv", raw);
    in = fopen(path, "r");
    if (!in)
        return;
    if (!fgets(line, sizeof(line), in))
        line[0] = '\0';
    while (fgets(line, sizeof(line), in)) {
        if (split_csv(line, f, OV_COLS) < OV_COLS)
            continue;
        for (int k = 1; k < OV_COLS; k++)
            sum[k] += strtod(f[k], NULL);
        rows++;
    }
    fclose(in);
    if (rows == 0)
        return;
    printf("Per step (average, us): computing %.3f, communication %.3f of which not "
           "overlapped %.3f, free %.3f\n",
           sum[1] / rows, sum[4] / rows, sum[2] / rows, sum[5] / rows);
}

static void advice(const char *prof, int rank)
{
    char path[PATH_CAP];
    cJSON *a, *list, *it;
    int shown = 0;
    snprintf(path, sizeof(path), "%s/advice_%d.json", prof, rank);
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

/* Rank of a raw directory, from its info.json (0 when unreadable). */
static int rank_of(const char *raw)
{
    char path[PATH_CAP];
    cJSON *info;
    int rank;
    snprintf(path, sizeof(path), "%s/info.json", raw);
    info = load_json(path);
    rank = (int)num(info, "rank_id");
    cJSON_Delete(info);
    return rank;
}

static void help(FILE *f)
{
    fprintf(f, "usage: nnprof summary DIR\n\n"
               "Prints a short summary of analysed data under DIR (run 'nnprof analyse DIR'\n"
               "first): per rank, the op types with the most time, the step phases,\n"
               "compute/communication per step, the advisor's findings, and where the\n"
               "outputs and the timeline are.\n\n"
               "exit: 0 ok, 1 no analysed data found, 2 usage error\n");
}

int nnp_cmd_summary(int argc, char **argv)
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    char **dirs;
    int opt, n, status = NNP_EXIT_OK;

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
    dirs = calloc(MAX_DIRS, sizeof(char *));
    if (!dirs)
        return NNP_EXIT_FAIL;
    n = nnp_cli_find_raw_dirs(argv[optind], dirs, MAX_DIRS);
    if (n <= 0) {
        nnp_cli_error(argv[optind], "no nnprof data found");
        status = NNP_EXIT_FAIL;
    }
    for (int i = 0; i < n; i++) {
        char prof[DIR_CAP], *slash;
        int rank = rank_of(dirs[i]);
        snprintf(prof, sizeof(prof), "%s", dirs[i]);
        slash = strrchr(prof, '/');
        if (slash)
            *slash = '\0';
        else
            snprintf(prof, sizeof(prof), ".");
        printf("== rank %d  (%s)\n", rank, dirs[i]);
        top_op_types(prof, rank);
        step_phases(prof, rank);
        overlap(dirs[i]);
        advice(prof, rank);
        printf("Outputs: %s/*_%d.* (docs/OUTPUTS.md)\n", prof, rank);
        printf("Timeline: %s/ASCEND_PROFILER_OUTPUT/trace_view.json\n"
               "  open it at https://ui.perfetto.dev (Open trace file) or chrome://tracing\n\n",
               dirs[i]);
        free(dirs[i]);
    }
    free(dirs);
    return status;
}
