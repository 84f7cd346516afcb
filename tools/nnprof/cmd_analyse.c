/* cmd_analyse.c - `nnprof analyse DIR`: runs every analysis on the profiling data under
 * DIR and writes the result files (docs/OUTPUTS.md). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "cli.h"

/* --jobs upper bound: more processes than this only thrash a machine. */
#define MAX_JOBS 1024
#define TERA     1e12
#define GIB      (1024.0 * 1024.0 * 1024.0)
/* Upper bound of --peak-tflops / --memory-capacity-gb: keeps the products finite. */
#define MAX_QUANTITY 1e9

static void help(FILE *f)
{
    fprintf(f, "usage: nnprof analyse [--pretty] [--steps A-B] [--jobs N] [--quiet]\n"
               "                      [--kind summary|detail] [--rank N] [--graph-id N]\n"
               "                      [--peak-tflops X] [--memory-capacity-gb X] [-o OUT] DIR\n\n"
               "Analyses the profiling data under DIR: a raw directory (PROF_*), the\n"
               "profiler/ directory holding them, the output_path above it, other tools' data\n"
               "(CANN, MindSpore, torch_npu: docs/IMPORT.md) or MindSpore's host_info_{rank}.csv.\n"
               "One analysis per rank, in parallel. Writes *_{rank} files in the profiler/\n"
               "directory and trace_view.json, step_trace_time.csv in each\n"
               "PROF_*/ASCEND_PROFILER_OUTPUT/ (docs/OUTPUTS.md). Other tools' files are never\n"
               "written: their results go to DIR/nnprof_output/ unless -o is given. Earlier\n"
               "results of a rank are kept as <name>.old. The last line says where the\n"
               "results are.\n\n"
               "  --pretty        indent JSON outputs\n"
               "  --steps LIST    analyse only these steps: A-B, or A,B,C (continuous)\n"
               "  --jobs N        ranks analysed at once (default: number of CPUs)\n"
               "  --quiet         no progress bar\n"
               "  --kind K        timeline: 'detail' (default, everything) or 'summary'\n"
               "                  (Step Trace and Overlap Analysis only)\n"
               "  --rank N        analyse only rank N (default: every rank)\n"
               "  --graph-id N    timeline: only the ops and steps of graph N\n"
               "  --peak-tflops X        device peak, for the achieved FLOPS fraction\n"
               "  --memory-capacity-gb X device memory, for the memory advice\n"
               "  -o, --output DIR       write every output under DIR (read-only data,\n"
               "                         other tools' data); each rank's timeline in\n"
               "                         DIR/rank_<r>/ASCEND_PROFILER_OUTPUT/\n\n"
               "exit: 0 ok, 1 analysis failed or refused (two runs of one rank, a filter\n"
               "      matching nothing, an unsafe output folder; partial results may exist),\n"
               "      2 usage error\n");
}

/* The closing line: where the results are (also after a partial failure). */
static void results_line(const nnp_analyse_report_t *rep)
{
    if (rep->n_ranks == 0)
        return;
    printf("nnprof: results of rank%s ", rep->n_ranks > 1 ? "s" : "");
    for (int i = 0; i < rep->n_ranks; i++)
        printf("%s%d", i ? ", " : "", rep->ranks[i]);
    printf(" in %s", rep->out_dir);
    if (rep->n_old)
        printf(" (earlier results kept as *.old)");
    if (rep->n_empty)
        printf("; %d rank%s recorded no events", rep->n_empty, rep->n_empty > 1 ? "s" : "");
    printf("; read them with: nnprof summary %s\n", rep->out_dir);
}

int nnp_cmd_analyse(int argc, char **argv)
{
    static const struct option longopts[] = {{"pretty", no_argument, NULL, 'p'},
                                             {"steps", required_argument, NULL, 's'},
                                             {"jobs", required_argument, NULL, 'j'},
                                             {"quiet", no_argument, NULL, 'q'},
                                             {"kind", required_argument, NULL, 'k'},
                                             {"rank", required_argument, NULL, 'r'},
                                             {"graph-id", required_argument, NULL, 'g'},
                                             {"help", no_argument, NULL, 'h'},
                                             {"peak-tflops", required_argument, NULL, 'P'},
                                             {"output", required_argument, NULL, 'o'},
                                             {"memory-capacity-gb", required_argument, NULL, 'M'},
                                             {NULL, 0, NULL, 0}};
    nnp_analyse_options_t o;
    nnp_analyse_report_t *rep;
    int opt, rc;

    nnp_analyse_options_init(&o);
    optind = 1;
    while ((opt = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
        switch (opt) {
        case 'p':
            o.pretty = true;
            break;
        case 's':
            if (nnp_parse_step_list(optarg, &o) != NNP_OK) {
                nnp_cli_error("--steps", "'%s': %s", optarg, nnp_last_error());
                return NNP_EXIT_USAGE;
            }
            break;
        case 'j': {
            char *end;
            long n = strtol(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0' || n < 1 || n > MAX_JOBS) {
                nnp_cli_error("--jobs", "'%s' is not a number of jobs in [1, %d]", optarg,
                              MAX_JOBS);
                return NNP_EXIT_USAGE;
            }
            o.jobs = (int)n;
            break;
        }
        case 'q':
            o.quiet = true;
            break;
        case 'k':
            if (strcmp(optarg, "summary") != 0 && strcmp(optarg, "detail") != 0) {
                nnp_cli_error("--kind", "'%s' is not one of: summary, detail", optarg);
                return NNP_EXIT_USAGE;
            }
            o.timeline_summary = strcmp(optarg, "summary") == 0;
            break;
        case 'r':
        case 'g': {
            char *end;
            long long v = strtoll(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0' || v < 0 || v > INT32_MAX) {
                nnp_cli_error(opt == 'r' ? "--rank" : "--graph-id",
                              "'%s' is not an integer in [0, %d]", optarg, INT32_MAX);
                return NNP_EXIT_USAGE;
            }
            if (opt == 'r')
                o.rank = (int)v;
            else
                o.graph_id = v;
            break;
        }
        case 'P':
        case 'M': {
            char *end;
            double v = strtod(optarg, &end);
            if (*optarg == '\0' || *end != '\0' || !(v > 0.0) || v > MAX_QUANTITY) {
                nnp_cli_error(opt == 'P' ? "--peak-tflops" : "--memory-capacity-gb",
                              "'%s' is not a positive number", optarg);
                return NNP_EXIT_USAGE;
            }
            if (opt == 'P')
                o.peak_flops = v * TERA;
            else
                o.memory_capacity_bytes = (uint64_t)(v * GIB);
            break;
        }
        case 'o':
            if (!*optarg || strlen(optarg) >= sizeof(o.output_dir)) {
                nnp_cli_error("--output", "'%s' is not a usable directory path", optarg);
                return NNP_EXIT_USAGE;
            }
            snprintf(o.output_dir, sizeof(o.output_dir), "%s", optarg);
            break;
        case 'h':
            help(stdout);
            return NNP_EXIT_OK;
        default:
            help(stderr);
            return NNP_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        nnp_cli_error("analyse", "expected exactly one DIR argument");
        help(stderr);
        return NNP_EXIT_USAGE;
    }
    rep = malloc(sizeof(*rep));
    if (!rep) {
        nnp_cli_error("analyse", "out of memory");
        return NNP_EXIT_FAIL;
    }
    rc = nnp__analyse_path_report(argv[optind], &o, rep);
    if (rc != NNP_OK)
        nnp_cli_error(argv[optind], "%s", nnp_last_error());
    results_line(rep);
    free(rep);
    return rc == NNP_OK ? NNP_EXIT_OK : NNP_EXIT_FAIL;
}
