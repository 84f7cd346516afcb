/* cmd_report.c - `nnprof report DIR -o report.html`: one self-contained HTML file with
 * the overview, step trace, operators, data preparation, memory and advisor views of the
 * runs under DIR, analysed first when needed (docs/UI.md). */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "server/server.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: nnprof report [--run ID] [--rank N] [--cache DIR] DIR -o FILE.html\n\n"
            "Writes one HTML file (scripts and data inlined; opens from file:// with no\n"
            "network) with the overview, step trace, operators, data preparation, memory\n"
            "and advisor views of the runs under DIR. Runs not analysed yet are analysed\n"
            "first, into a .nnprof_ui folder in the run or under --cache DIR.\n\n"
            "  -o, --output FILE  the HTML file to write (replaced atomically)\n"
            "  --run ID           only this run (its path relative to DIR; '.' for DIR)\n"
            "  --rank N           only rank N (default: every rank, up to %d)\n"
            "  --cache DIR        keep analysis results under DIR\n\n"
            "exit: 0 written, 1 failed, 2 usage error\n",
            NNP_REPORT_MAX_RANKS);
}

int nnp_cmd_report(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'}, {"run", required_argument, NULL, 'R'},
        {"rank", required_argument, NULL, 'r'},   {"cache", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    const char *out = NULL, *run = NULL, *cache = NULL;
    char exe[PATH_MAX];
    struct stat st;
    ssize_t n;
    int rank = -1, opt, rc;

    optind = 1;
    while ((opt = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
        switch (opt) {
        case 'o':
            out = optarg;
            break;
        case 'R':
            run = optarg;
            break;
        case 'r': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 0 || v > INT_MAX) {
                nnp_cli_error("--rank", "'%s' is not a rank (an integer >= 0)", optarg);
                return NNP_EXIT_USAGE;
            }
            rank = (int)v;
            break;
        }
        case 'c':
            cache = optarg;
            break;
        case 'h':
            help(stdout);
            return NNP_EXIT_OK;
        default:
            help(stderr);
            return NNP_EXIT_USAGE;
        }
    }
    if (optind != argc - 1 || !out || !*out) {
        nnp_cli_error("report", "expected one DIR and -o FILE.html");
        help(stderr);
        return NNP_EXIT_USAGE;
    }
    if (stat(out, &st) == 0 && S_ISDIR(st.st_mode)) {
        nnp_cli_error(out, "is a directory; give the HTML file's path");
        return NNP_EXIT_USAGE;
    }
    n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n > 0)
        exe[n] = '\0';
    else
        snprintf(exe, sizeof(exe), "%s", argv[0]);
    rc = nnp_report_write(argv[optind], run, rank, cache, exe, out);
    if (rc != NNP_OK) {
        nnp_cli_error("report", "%s", nnp_last_error());
        return NNP_EXIT_FAIL;
    }
    if (stat(out, &st) == 0)
        printf("nnprof report: wrote %s (%lld bytes)\n", out, (long long)st.st_size);
    return NNP_EXIT_OK;
}
