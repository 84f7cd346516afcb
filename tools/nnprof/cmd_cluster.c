/* cmd_cluster.c - `nnprof cluster DIR`: the cluster analysis of src/cluster/ (docs/
 * CLUSTER.md). Under `mpirun -np K`, the ranks are spread over the K processes through
 * libnnprof_cluster_mpi.so, loaded here with dlopen only when the launcher's environment
 * says so: nnprof itself never links MPI, so it builds and runs where MPI is absent. */
#include <dlfcn.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cluster/cl_driver.h"
#include "run.h"

#define MPI_BACKEND "libnnprof_cluster_mpi.so"
/* Upper bound of --threads. */
#define MAX_THREADS 256
#define ERR_CAP     1024

static void help(FILE *f)
{
    fprintf(f,
            "usage: nnprof cluster [-o OUT] [--threads N] [--timeline] [--timeline-ranks LIST]\n"
            "                      [--parallel tp=T,pp=P,dp=D] [--pretty] [--quiet] [--stats]\n"
            "                      DIR\n"
            "       mpirun -np K nnprof cluster [options] DIR\n\n"
            "Analyses a cluster: every rank under DIR - our run folder (one raw directory per\n"
            "rank, e.g. from 'mpirun -np 8 nnprof run'), MindInsight's collected layout\n"
            "(cluster_profiler/<id>/profiler/, from 'nnprof collect'), CANN PROF_* or torch_npu\n"
            "*_ascend_pt rank folders, MindSpore's per-rank files, or msprof-analyze's\n"
            "cluster_analysis_output. Ranks come from the data; missing ranks are named.\n"
            "Writes into OUT (default DIR/cluster_analysis_output): cluster_step_trace_time.csv,\n"
            "cluster_communication.json, cluster_communication_matrix.json,\n"
            "communication_group.json, cluster_analysis.db, cluster_step_trace.json,\n"
            "ascend_cluster_analyse_*.csv, and the verdicts (slow rank, slow link, ...) with\n"
            "their evidence in cluster_advice.json / cluster_advice.txt (docs/CLUSTER.md).\n\n"
            "  -o, --output OUT     the output folder (never a folder of the data)\n"
            "  -j, --threads N      ranks read at once per process (default: all CPUs)\n"
            "  --timeline           also write cluster_timeline.json: every rank's timeline,\n"
            "                       one process per rank and kind (\"<name> Rank{r}\"), clocks\n"
            "                       aligned to rank 0's (info.json clock_sync)\n"
            "  --timeline-ranks L   only these ranks in it: 0-3,8 (implies --timeline)\n"
            "  --parallel SPEC      the parallel layout, tp=T,pp=P,dp=D (Megatron's rank order):\n"
            "                       adds DP/PP/TP Index columns and the pipeline stages\n"
            "  --pretty             indent JSON outputs\n"
            "  -q, --quiet          no progress bar\n"
            "  --stats              print time and peak memory of each process (stderr, JSON)\n\n"
            "Under mpirun every process reads a share of the ranks (DIR must be visible to all:\n"
            "a shared file system) and process 0 writes: the outputs are the same bytes as one\n"
            "process writes.\n\n"
            "exit: 0 ok, 1 failure (no data, duplicate ranks, unreadable ranks: the others\n"
            "      are analysed), 2 usage error\n");
}

/* "0-3,8" into sel[]. */
static bool parse_ranks(const char *s, uint8_t *sel)
{
    const char *p = s;
    if (!*p)
        return false;
    while (*p) {
        char *end;
        long a = strtol(p, &end, 10), b;
        if (end == p || a < 0 || a >= NNP_CL_MAX_RANKS)
            return false;
        b = a;
        p = end;
        if (*p == '-') {
            b = strtol(p + 1, &end, 10);
            if (end == p + 1 || b < a || b >= NNP_CL_MAX_RANKS)
                return false;
            p = end;
        }
        for (long r = a; r <= b; r++)
            sel[r] = 1;
        if (*p == ',')
            p++;
        else if (*p)
            return false;
    }
    return true;
}

static bool parse_parallel(const char *s, nnp_cl_opts_t *o)
{
    char buf[128], *save = NULL, *tok;
    if (strlen(s) >= sizeof(buf))
        return false;
    snprintf(buf, sizeof(buf), "%s", s);
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '='), *end;
        long v;
        if (!eq)
            return false;
        *eq = '\0';
        v = strtol(eq + 1, &end, 10);
        if (*end || v < 1 || v > NNP_CL_MAX_RANKS)
            return false;
        if (strcmp(tok, "tp") == 0)
            o->tp = (int)v;
        else if (strcmp(tok, "pp") == 0)
            o->pp = (int)v;
        else if (strcmp(tok, "dp") == 0)
            o->dp = (int)v;
        else
            return false;
    }
    return o->tp > 0 && o->pp > 0 && o->dp > 0;
}

/* Under Open MPI's (or a PMI) launcher: the MPI back end, else one process. */
static int open_dist(nnp_cl_dist_t *d, void **handle)
{
    const char *size = getenv("OMPI_COMM_WORLD_SIZE");
    nnp_run_paths_t paths;
    char why[ERR_CAP], lib[NNP_PATH_MAX + 64], err[ERR_CAP];
    nnp_cl_dist_open_fn open_fn;
    *handle = NULL;
    if (!size || !*size) {
        nnp__cl_dist_local(d);
        return NNP_EXIT_OK;
    }
    if (nnp_run_find_paths(NULL, &paths, why, sizeof(why)) != 0) {
        nnp_cli_error("cluster", "started by mpirun, but %s", why);
        return NNP_EXIT_FAIL;
    }
    snprintf(lib, sizeof(lib), "%s/%s", paths.lib_dir, MPI_BACKEND);
    *handle = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
    if (!*handle) {
        nnp_cli_error("cluster",
                      "started by mpirun (%s processes), but the MPI back end cannot be loaded: "
                      "%s; it is built when Open MPI is found (scripts/bootstrap installs it), or "
                      "run nnprof cluster without mpirun",
                      size, dlerror());
        return NNP_EXIT_FAIL;
    }
    *(void **)&open_fn = dlsym(*handle, NNP_CL_DIST_OPEN_SYMBOL);
    if (!open_fn) {
        nnp_cli_error("cluster", "%s has no %s", lib, NNP_CL_DIST_OPEN_SYMBOL);
        return NNP_EXIT_FAIL;
    }
    memset(d, 0, sizeof(*d));
    if (open_fn(d, err, sizeof(err)) != 0) {
        nnp_cli_error("cluster", "MPI: %s", err);
        return NNP_EXIT_FAIL;
    }
    if (d->version != NNP_CL_DIST_VERSION) {
        nnp_cli_error("cluster", "%s is of another nnprof version", lib);
        return NNP_EXIT_FAIL;
    }
    return NNP_EXIT_OK;
}

int nnp_cmd_cluster(int argc, char **argv)
{
    static const struct option longopts[] = {{"output", required_argument, NULL, 'o'},
                                             {"threads", required_argument, NULL, 'j'},
                                             {"timeline", no_argument, NULL, 't'},
                                             {"timeline-ranks", required_argument, NULL, 'T'},
                                             {"parallel", required_argument, NULL, 'P'},
                                             {"pretty", no_argument, NULL, 'p'},
                                             {"quiet", no_argument, NULL, 'q'},
                                             {"stats", no_argument, NULL, 's'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    nnp_cl_opts_t o;
    nnp_cl_report_t rep;
    nnp_cl_dist_t d;
    void *handle = NULL;
    bool stats = false;
    int opt, rc, exit_code;

    memset(&o, 0, sizeof(o));
    o.timeline_ranks = calloc(NNP_CL_MAX_RANKS, 1);
    if (!o.timeline_ranks) {
        nnp_cli_error("cluster", "out of memory");
        return NNP_EXIT_FAIL;
    }
    optind = 1;
    exit_code = -1;
    while (exit_code < 0 && (opt = getopt_long(argc, argv, "hqo:j:", longopts, NULL)) != -1) {
        switch (opt) {
        case 'o':
            if (!*optarg || strlen(optarg) >= sizeof(o.out_dir)) {
                nnp_cli_error("--output", "'%s' is not a usable folder path", optarg);
                exit_code = NNP_EXIT_USAGE;
                break;
            }
            snprintf(o.out_dir, sizeof(o.out_dir), "%s", optarg);
            break;
        case 'j': {
            char *end;
            long n = strtol(optarg, &end, 10);
            if (!*optarg || *end || n < 1 || n > MAX_THREADS) {
                nnp_cli_error("--threads", "'%s' is not a number of threads in [1, %d]", optarg,
                              MAX_THREADS);
                exit_code = NNP_EXIT_USAGE;
            }
            o.threads = (int)n;
            break;
        }
        case 't':
            o.timeline = true;
            o.timeline_all = true;
            break;
        case 'T':
            if (!parse_ranks(optarg, o.timeline_ranks)) {
                nnp_cli_error("--timeline-ranks", "'%s' is not a rank list like 0-3,8", optarg);
                exit_code = NNP_EXIT_USAGE;
            }
            o.timeline = true;
            break;
        case 'P':
            if (!parse_parallel(optarg, &o)) {
                nnp_cli_error("--parallel", "'%s' is not tp=T,pp=P,dp=D (each at least 1)", optarg);
                exit_code = NNP_EXIT_USAGE;
            }
            break;
        case 'p':
            o.pretty = true;
            break;
        case 'q':
            o.quiet = true;
            break;
        case 's':
            stats = true;
            break;
        case 'h':
            help(stdout);
            exit_code = NNP_EXIT_OK;
            break;
        default:
            help(stderr);
            exit_code = NNP_EXIT_USAGE;
        }
    }
    if (exit_code < 0 && optind != argc - 1) {
        nnp_cli_error("cluster", "expected exactly one DIR argument");
        help(stderr);
        exit_code = NNP_EXIT_USAGE;
    }
    /* A rank list replaces "all ranks" of a --timeline given before it. */
    for (int r = 0; r < NNP_CL_MAX_RANKS && o.timeline_all; r++)
        if (o.timeline_ranks[r])
            o.timeline_all = false;
    if (exit_code >= 0) {
        free(o.timeline_ranks);
        return exit_code;
    }
    exit_code = open_dist(&d, &handle);
    if (exit_code != NNP_EXIT_OK) {
        free(o.timeline_ranks);
        return exit_code;
    }
    rc = nnp__cluster_run(argv[optind], &o, &d, &rep);
    if (rc != NNP_OK) {
        if (d.size > 1)
            fprintf(stderr, "nnprof: %s: process %d of %d: %s\n", argv[optind], d.rank, d.size,
                    nnp_last_error());
        else
            nnp_cli_error(argv[optind], "%s", nnp_last_error());
    }
    if (stats)
        fprintf(stderr,
                "{\"nnprof_cluster_stats\":{\"process\":%d,\"processes\":%d,\"threads\":%d,"
                "\"inputs_read\":%d,\"wall_s\":%.3f,\"peak_rss_kb\":%ld}}\n",
                rep.process, rep.processes, rep.threads, rep.ranks_here, rep.wall_s,
                rep.peak_rss_kb);
    if (d.rank == 0 && rep.n_ranks > 0) {
        printf("nnprof: cluster of %d rank%s analysed", rep.n_ranks, rep.n_ranks == 1 ? "" : "s");
        if (rep.n_missing)
            printf(" (%d of the %d the data names %s missing)", rep.n_missing, rep.expected_ranks,
                   rep.n_missing == 1 ? "is" : "are");
        printf("; results in %s; read cluster_advice.txt first\n", o.out_dir);
    }
    fflush(stdout);
    if (d.close)
        d.close(d.ctx);
    /* The back end stays loaded: MPI's libraries may have registered atexit handlers. */
    (void)handle;
    free(o.timeline_ranks);
    return rc == NNP_OK ? NNP_EXIT_OK : NNP_EXIT_FAIL;
}
