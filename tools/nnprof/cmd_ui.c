/* cmd_ui.c - `nnprof ui [DIR]`: serves the UI pages for the runs under DIR (like
 * `mindinsight start --summary-base-dir DIR`) until Ctrl-C. Loopback only unless --host
 * says otherwise, and then it warns that the data becomes visible on the network. */
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "server/server.h"

static void help(FILE *f)
{
    fprintf(f, "usage: nnprof ui [--host ADDR] [--port N] [--cache DIR] [--reanalyse] [DIR]\n\n"
               "Serves MindInsight's profiling pages for every run under DIR (default: the\n"
               "current directory) at http://127.0.0.1:8080/. Runs are analysed on demand\n"
               "(`nnprof analyse -o CACHE`), never over your files: the results go to a\n"
               ".nnprof_ui folder in each run, or under --cache DIR (use it for read-only\n"
               "data). Read-only: GET only. Ctrl-C stops it. See docs/UI.md.\n\n"
               "  --host ADDR   address to listen on (default 127.0.0.1; another address\n"
               "                makes your profiling data visible on the network)\n"
               "  --port N      port (default 8080; 0 picks a free one)\n"
               "  --cache DIR   keep the analysis results of every run under DIR\n"
               "  --reanalyse   ignore earlier results and analyse again\n\n"
               "exit: 0 stopped by a signal, 1 cannot serve, 2 usage error\n");
}

/* The running nnprof binary, to run `nnprof analyse` in child processes. */
static void self_exe(char *buf, size_t cap, const char *argv0)
{
    ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
    if (n > 0) {
        buf[n] = '\0';
        return;
    }
    snprintf(buf, cap, "%s", argv0);
}

int nnp_cmd_ui(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"host", required_argument, NULL, 'H'},  {"port", required_argument, NULL, 'p'},
        {"cache", required_argument, NULL, 'c'}, {"reanalyse", no_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0}};
    nnp_server_config_t cfg;
    nnp_server_t *s;
    char exe[PATH_MAX];
    const char *dir = ".";
    sigset_t set;
    int opt, sig, rc;

    nnp_server_config_init(&cfg);
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'H':
            cfg.host = optarg;
            break;
        case 'p': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 0 || v > 65535) {
                nnp_cli_error("--port", "'%s' is not a port in [0, 65535]", optarg);
                return NNP_EXIT_USAGE;
            }
            cfg.port = (int)v;
            break;
        }
        case 'c':
            cfg.cache_root = optarg;
            break;
        case 'r':
            cfg.reanalyse = true;
            break;
        case 'h':
            help(stdout);
            return NNP_EXIT_OK;
        default:
            help(stderr);
            return NNP_EXIT_USAGE;
        }
    }
    if (optind < argc - 1) {
        nnp_cli_error("ui", "expected at most one DIR argument");
        return NNP_EXIT_USAGE;
    }
    if (optind == argc - 1)
        dir = argv[optind];
    self_exe(exe, sizeof(exe), argv[0]);
    cfg.root = dir;
    cfg.analyse_exe = exe;
    /* Block the stop signals before any thread starts, so only sigwait below sees them. */
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    rc = nnp_server_start(&cfg, &s);
    if (rc != NNP_OK) {
        nnp_cli_error("ui", "%s", nnp_last_error());
        return rc == NNP_EINVAL ? NNP_EXIT_USAGE : NNP_EXIT_FAIL;
    }
    if (strcmp(cfg.host, "127.0.0.1") != 0 && strcmp(cfg.host, "localhost") != 0 &&
        strcmp(cfg.host, "::1") != 0)
        fprintf(stderr,
                "nnprof: ui: warning: listening on %s: anyone who can reach this "
                "address can read your profiling data\n",
                cfg.host);
    if (!nnp_server_has_assets())
        fprintf(stderr, "nnprof: ui: warning: built without the web pages (node was not found "
                        "at build time); only the JSON API under /api/ answers\n");
    printf("nnprof ui: %u run(s) under %s\n", nnp_server_runs(s), dir);
    printf("nnprof ui: serving http://%s%s%s:%d/ (Ctrl-C stops)\n",
           strchr(cfg.host, ':') ? "[" : "", cfg.host, strchr(cfg.host, ':') ? "]" : "",
           nnp_server_port(s));
    fflush(stdout);
    while (sigwait(&set, &sig) != 0)
        ;
    printf("nnprof ui: stopping (signal %d)\n", sig);
    nnp_server_destroy(s);
    return NNP_EXIT_OK;
}
