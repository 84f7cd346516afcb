/* cmd_export.c - `nnprof export timeline|summary|sqlite|kineto` (issue #6). timeline and
 * summary take msprof's flags and rules (seed 002) and write each raw directory's
 * mindstudio_profiler_output/ (docs/EXPORT.md); sqlite hands over to nnp__export_sqlite;
 * kineto writes PyTorch profiler traces (nnp_export_kineto, docs/TORCH.md). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "export/msprof_export.h"
#include "export/sqlite.h"
#include "util/util.h"

/* Raw directories exported in one call (a parent holding more is an error). */
#define MAX_RAW_DIRS 4096

static void help(FILE *f)
{
    fprintf(f, "usage: nnprof export timeline -dir DIR [--iteration-id N --model-id M]\n"
               "                              [--iteration-count K] [--clear on|off]\n"
               "       nnprof export summary -dir DIR [--iteration-id N --model-id M]\n"
               "                             [--iteration-count K] [--format csv|json]\n"
               "                             [--clear on|off]\n"
               "       nnprof export sqlite -dir DIR [-o FILE.db]\n"
               "       nnprof export --export=on --output=DIR [--type=text|db]\n"
               "                     [--model-id=M --iteration-id=N] [--summary-format=csv|json]\n"
               "                     [--clear=on|off]      (msprof's own flags)\n\n"
               "       nnprof export kineto -dir DIR [-o FILE|DIR] [--steps A-B] [--cuda-sync]\n\n"
               "msprof-compatible export (docs/EXPORT.md). DIR is a raw directory (PROF_*) or its\n"
               "parent; each PROF_* gets its own mindstudio_profiler_output/.\n\n"
               "  -dir, --collection-dir DIR  the run directory or its parent\n"
               "  --iteration-id N     first iteration to export (>= 1; needs --model-id)\n"
               "  --model-id M         graph id M: iterations count executions of graph M;\n"
               "                       4294967295: step mode, iteration = framework step id\n"
               "  --iteration-count K  iterations to export from N (default 1)\n"
               "  --format csv|json    summary file format (default csv)\n"
               "  --clear on|off       on: remove DIR/ASCEND_PROFILER_OUTPUT after export\n"
               "  -o, --output FILE    sqlite: database path (default DIR/nnprof.db)\n"
               "                       kineto: the trace file (one raw directory, a name ending\n"
               "                       in .json) or a directory for <host>_<pid>.pt.trace.json\n"
               "                       files (default: each raw directory's\n"
               "                       ASCEND_PROFILER_OUTPUT/)\n"
               "  --steps A-B          kineto: only events within steps A..B (MindSpore's\n"
               "                       step_list: \"5\", \"3-7\", \"3,4,5\")\n"
               "  --cuda-sync          kineto: CUDA synchronizations as \"cuda_sync\" events too\n"
               "                       (Kineto's enable_cuda_sync_events; off by default, as\n"
               "                       Kineto's: HTA counts them as GPU work)\n\n"
               "exit: 0 ok, 1 export failed, 2 usage error\n");
}

/* Parses a decimal integer in [lo, hi]; false on anything else. */
static bool parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *v)
{
    char *end;
    unsigned long long n;
    if (!s || *s < '0' || *s > '9')
        return false;
    n = strtoull(s, &end, 10);
    if (*end != '\0' || n < lo || n > hi)
        return false;
    *v = n;
    return true;
}

static int usage(const char *what, const char *why, const char *arg)
{
    if (arg)
        nnp_cli_error(what, "'%s' %s", arg, why);
    else
        nnp_cli_error(what, "%s", why);
    return NNP_EXIT_USAGE;
}

static int do_sqlite(const char *dir, const char *db)
{
    char path[NNP_PATH_MAX];
    uint64_t rows = 0;
    if (!db) {
        if (nnp__path_join(path, sizeof(path), dir, NNP_SQLITE_DEFAULT_NAME) != NNP_OK)
            return usage("-dir", "is too long", dir);
        db = path;
    }
    if (nnp__export_sqlite(dir, db, &rows) != NNP_OK) {
        nnp_cli_error(dir, "%s", nnp_last_error());
        return NNP_EXIT_FAIL;
    }
    printf("%s: %llu rows\n", db, (unsigned long long)rows);
    return NNP_EXIT_OK;
}

/* The raw directories at or below dir, into *raws (MAX_RAW_DIRS entries, each and the
 * array freed by the caller; NULL when out of memory). Returns how many, <= 0 after
 * saying why there is none. */
static int find_raws(const char *dir, char ***raws)
{
    int n;
    *raws = calloc(MAX_RAW_DIRS, sizeof(**raws));
    if (!*raws) {
        nnp_cli_error("export", "out of memory");
        return -1;
    }
    n = nnp_cli_find_raw_dirs(dir, *raws, MAX_RAW_DIRS);
    if (n == 0)
        nnp_cli_error(dir, "no PROF_* raw directory here or below");
    return n;
}

/* "PROF_<time>_<host>_<pid>" -> "<host>_<pid>": torch's worker name ("<host>_<pid>"). */
static const char *worker_of(const char *raw)
{
    const char *base = strrchr(raw, '/'), *p;
    base = base ? base + 1 : raw;
    p = strncmp(base, "PROF_", 5) == 0 ? strchr(base + 5, '_') : NULL;
    return p ? p + 1 : base;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Exports one raw directory to out (a .json file, a directory, or NULL: the raw
 * directory's ASCEND_PROFILER_OUTPUT/). Returns an exit code. */
static int kineto_one(const char *raw, const char *out, const nnp_analyse_options_t *ao)
{
    char path[NNP_PATH_MAX], dirbuf[NNP_PATH_MAX];
    const char *target = out, *d = out;
    if (!out || !ends_with(out, ".json")) {
        if (!d) {
            if (nnp__path_join(dirbuf, sizeof(dirbuf), raw, "ASCEND_PROFILER_OUTPUT") != NNP_OK)
                return usage("-dir", "is too long", raw);
            d = dirbuf;
        }
        if (snprintf(path, sizeof(path), "%s/%s.pt.trace.json", d, worker_of(raw)) >=
            (int)sizeof(path))
            return usage("-o", "is too long", d);
        if (nnp__mkdir_p(d, 0700) != NNP_OK) {
            nnp_cli_error(d, "%s", nnp_last_error());
            return NNP_EXIT_FAIL;
        }
        target = path;
    }
    if (nnp_export_kineto(raw, target, ao, NULL) != NNP_OK) {
        nnp_cli_error(raw, "%s", nnp_last_error());
        return NNP_EXIT_FAIL;
    }
    printf("%s\n", target);
    return NNP_EXIT_OK;
}

static int do_kineto(const char *dir, const char *out, const nnp_analyse_options_t *ao)
{
    char **raws;
    int n = find_raws(dir, &raws), rc = n > 0 ? NNP_EXIT_OK : NNP_EXIT_FAIL;
    bool refused = false;
    if (!raws)
        return NNP_EXIT_FAIL;
    if (out && ends_with(out, ".gz")) {
        nnp_cli_error(out, "gzip output is written by nnprof.torch's export_chrome_trace; "
                           "write .json here and compress it with gzip");
        refused = true;
    } else if (n > 1 && out && ends_with(out, ".json")) {
        nnp_cli_error(out, "names one file but %s holds %d raw directories: give a directory", dir,
                      n);
        refused = true;
    }
    if (refused)
        rc = NNP_EXIT_USAGE;
    for (int i = 0; i < n; i++) {
        if (!refused) {
            int one = kineto_one(raws[i], out, ao);
            if (one != NNP_EXIT_OK)
                rc = one;
        }
        free(raws[i]);
    }
    free(raws);
    return rc;
}

static int do_msprof(const char *dir, const nnp_msprof_opts_t *o)
{
    char **raws;
    int n = find_raws(dir, &raws), rc = n > 0 ? NNP_EXIT_OK : NNP_EXIT_FAIL;
    if (!raws)
        return NNP_EXIT_FAIL;
    for (int i = 0; i < n; i++) {
        nnp_msprof_result_t res;
        if (nnp__msprof_export(raws[i], o, &res) != NNP_OK) {
            nnp_cli_error(raws[i], "%s", nnp_last_error());
            rc = NNP_EXIT_FAIL;
        } else {
            for (size_t k = 0; k < res.n_files; k++)
                printf("%s/%s/%s\n", raws[i], NNP_MSPROF_OUT_DIR, res.files[k]);
        }
        free(raws[i]);
    }
    free(raws);
    return rc;
}

/* msprof's own command line, `msprof --export=on --output=PROF_DIR [--type=text|db]
 * [--model-id=M --iteration-id=N] [--summary-format=csv|json] [--clear=on]` (formats.md 3):
 * --type=text (default) is `export timeline` then `export summary`, --type=db is
 * `export sqlite`. Flags are translated and handed to the subcommand forms. */
static int msprof_form(int argc, char **argv)
{
    enum { MAX_ARGS = 16 };
    const char *out = NULL, *type = "text", *fmt = NULL, *model = NULL, *iter = NULL;
    const char *clear = NULL;
    bool on = false;
    char *args[MAX_ARGS];
    int n, rc;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *eq = strchr(a, '=');
        const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[i + 1] : NULL);
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        const char **slot = NULL;
        if (strncmp(a, "--export", len) == 0 && len == 8) {
            if (!v || (strcmp(v, "on") != 0 && strcmp(v, "off") != 0))
                return usage("--export", "is not one of: on, off", v ? v : "");
            on = strcmp(v, "on") == 0;
        } else if (len == 8 && strncmp(a, "--output", len) == 0) {
            slot = &out;
        } else if (len == 6 && strncmp(a, "--type", len) == 0) {
            slot = &type;
        } else if (len == 16 && strncmp(a, "--summary-format", len) == 0) {
            slot = &fmt;
        } else if (len == 10 && strncmp(a, "--model-id", len) == 0) {
            slot = &model;
        } else if (len == 14 && strncmp(a, "--iteration-id", len) == 0) {
            slot = &iter;
        } else if (len == 7 && strncmp(a, "--clear", len) == 0) {
            slot = &clear;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            help(stdout);
            return NNP_EXIT_OK;
        } else {
            return usage(a, "is not a flag of msprof's export form (see 'nnprof export --help')",
                         NULL);
        }
        if (!v)
            return usage(a, "needs a value", NULL);
        if (slot)
            *slot = v;
        if (!eq)
            i++;
    }
    if (!on)
        return usage("--export", "must be on (msprof: --export=on)", NULL);
    if (!out || !*out)
        return usage("--output", "is required (the PROF_* directory)", NULL);
    if (strcmp(type, "db") == 0) {
        if (fmt || model || iter || clear)
            return usage("--type=db", "takes only --output", NULL);
        return do_sqlite(out, NULL);
    }
    if (strcmp(type, "text") != 0)
        return usage("--type", "is not one of: text, db", type);
    /* timeline, then summary: the two halves of msprof's text export. */
    for (int pass = 0; pass < 2; pass++) {
        n = 0;
        args[n++] = "export";
        args[n++] = pass == 0 ? "timeline" : "summary";
        args[n++] = "-dir";
        args[n++] = (char *)out;
        if (model) {
            args[n++] = "--model-id";
            args[n++] = (char *)model;
        }
        if (iter) {
            args[n++] = "--iteration-id";
            args[n++] = (char *)iter;
        }
        if (fmt && pass == 1) {
            args[n++] = "--format";
            args[n++] = (char *)fmt;
        }
        /* --clear removes the ASCEND_PROFILER_OUTPUT both passes read: after the last. */
        if (clear && pass == 1) {
            args[n++] = "--clear";
            args[n++] = (char *)clear;
        }
        args[n] = NULL;
        rc = nnp_cmd_export(n, args);
        if (rc != NNP_EXIT_OK)
            return rc;
    }
    return NNP_EXIT_OK;
}

int nnp_cmd_export(int argc, char **argv)
{
    /* getopt_long_only: msprof spells the directory flag "-dir" with one dash. */
    static const struct option longopts[] = {{"dir", required_argument, NULL, 'd'},
                                             {"collection-dir", required_argument, NULL, 'd'},
                                             {"iteration-id", required_argument, NULL, 'i'},
                                             {"model-id", required_argument, NULL, 'm'},
                                             {"iteration-count", required_argument, NULL, 'c'},
                                             {"format", required_argument, NULL, 'f'},
                                             {"clear", optional_argument, NULL, 'C'},
                                             {"output", required_argument, NULL, 'o'},
                                             {"steps", required_argument, NULL, 's'},
                                             {"cuda-sync", no_argument, NULL, 'S'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    nnp_msprof_opts_t o;
    nnp_analyse_options_t ao;
    const char *dir = NULL, *db = NULL, *sub, *steps = NULL;
    bool has_iter = false, has_model = false, has_count = false, has_format = false;
    bool has_clear = false, cuda_sync = false;
    uint64_t v;
    int opt;

    memset(&o, 0, sizeof(o));
    o.iteration_count = 1;
    if (argc >= 2 && strncmp(argv[1], "--export", strlen("--export")) == 0)
        return msprof_form(argc, argv);
    if (argc < 2 || argv[1][0] == '-') {
        if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
            help(stdout);
            return NNP_EXIT_OK;
        }
        help(stderr);
        return usage("export", "expected timeline, summary, sqlite or kineto", NULL);
    }
    sub = argv[1];
    if (strcmp(sub, "timeline") != 0 && strcmp(sub, "summary") != 0 && strcmp(sub, "sqlite") != 0 &&
        strcmp(sub, "kineto") != 0)
        return usage("export", "is not one of: timeline, summary, sqlite, kineto", sub);
    o.is_timeline = strcmp(sub, "timeline") == 0;
    optind = 2;
    opterr = 1;
    while ((opt = getopt_long_only(argc, argv, "ho:", longopts, NULL)) != -1) {
        switch (opt) {
        case 'd':
            dir = optarg;
            break;
        case 'i':
            if (!parse_u64(optarg, 1, UINT64_MAX, &v))
                return usage("--iteration-id", "is not a positive integer", optarg);
            o.iteration_id = v;
            has_iter = true;
            break;
        case 'm':
            /* 0 is accepted: our graph ids start at 0 (msprof's start at 1). */
            if (!parse_u64(optarg, 0, NNP_MSPROF_STEP_MODEL_ID, &v))
                return usage("--model-id", "is not an integer in [0, 4294967295]", optarg);
            o.model_id = (uint32_t)v;
            has_model = true;
            break;
        case 'c':
            if (!parse_u64(optarg, 1, UINT64_MAX, &v))
                return usage("--iteration-count", "is not a positive integer", optarg);
            o.iteration_count = v;
            has_count = true;
            break;
        case 'f':
            if (strcmp(optarg, "csv") != 0 && strcmp(optarg, "json") != 0)
                return usage("--format", "is not one of: csv, json", optarg);
            o.is_json = strcmp(optarg, "json") == 0;
            has_format = true;
            break;
        case 'C': {
            /* "--clear" alone means on; "--clear on|off" and "--clear=on|off" also work. */
            const char *a = optarg;
            if (!a && optind < argc && argv[optind][0] != '-')
                a = argv[optind++]; /* export takes no positional argument */
            if (a && strcmp(a, "on") != 0 && strcmp(a, "off") != 0)
                return usage("--clear", "is not one of: on, off", a);
            o.clear = !a || strcmp(a, "on") == 0;
            has_clear = true;
            break;
        }
        case 'o':
            db = optarg;
            break;
        case 's':
            steps = optarg;
            break;
        case 'S':
            cuda_sync = true;
            break;
        case 'h':
            help(stdout);
            return NNP_EXIT_OK;
        default:
            help(stderr);
            return NNP_EXIT_USAGE;
        }
    }
    if (optind != argc)
        return usage("export", "unexpected argument", argv[optind]);
    if (!dir || !*dir)
        return usage("-dir", "is required (a PROF_* directory or its parent)", NULL);
    if (strcmp(sub, "kineto") == 0) {
        if (has_iter || has_model || has_count || has_format || has_clear)
            return usage("kineto", "takes only -dir, -o, --steps and --cuda-sync", NULL);
        nnp_analyse_options_init(&ao);
        ao.kineto_cuda_sync = cuda_sync;
        if (steps && nnp_parse_step_list(steps, &ao) != NNP_OK)
            return usage("--steps", nnp_last_error(), steps);
        return do_kineto(dir, db, &ao);
    }
    if (steps)
        return usage("--steps", "only applies to export kineto", NULL);
    if (cuda_sync)
        return usage("--cuda-sync", "only applies to export kineto", NULL);
    if (strcmp(sub, "sqlite") == 0) {
        if (has_iter || has_model || has_count || has_format || has_clear)
            return usage("sqlite", "takes only -dir and -o", NULL);
        return do_sqlite(dir, db);
    }
    if (db)
        return usage("-o", "only applies to export sqlite", NULL);
    if (has_iter != has_model)
        return usage(has_iter ? "--iteration-id" : "--model-id",
                     "must be given together with --iteration-id and --model-id", NULL);
    if (has_count && !has_iter)
        return usage("--iteration-count", "needs --iteration-id and --model-id", NULL);
    if (has_format && o.is_timeline)
        return usage("--format", "only applies to export summary", NULL);
    o.has_iteration = has_iter;
    return do_msprof(dir, &o);
}
