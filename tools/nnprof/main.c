/* main.c - the nnprof command line: dispatches to one file per subcommand. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "nnprof/nnprof.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command_t;

static const command_t commands[] = {
    {"dump", nnp_cmd_dump, "print every raw record of a run as JSON lines"},
    {"analyse", nnp_cmd_analyse, "analyse a run: op statistics, step trace, overlap, timeline"},
    {"query", nnp_cmd_query, "query analysed data: 'nnprof query op NAME... -d DIR'"},
    {"summary", nnp_cmd_summary, "a short human summary of analysed data, per rank"},
    {"export", nnp_cmd_export, "msprof-compatible 'export timeline|summary', 'export sqlite'"},
    {"info", nnp_cmd_info, "what a run holds: ranks, steps, time span, records, options"},
    {"run", nnp_cmd_run, "profile a command: 'nnprof run [options] -- cmd args...'"},
    {"ui", nnp_cmd_ui, "serve the profiling pages for the runs under DIR (local web UI)"},
    {"report", nnp_cmd_report, "one self-contained HTML report: 'nnprof report DIR -o F.html'"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: nnprof <command> [options] [args]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\noptions:\n"
               "  -h, --help     this help\n"
               "  -V, --version  print the version and exit\n");
    fprintf(f, "\n'nnprof <command> --help' describes a command.\n"
               "\nexit codes:\n"
               "  0  success\n"
               "  1  failure (unreadable input, I/O error)\n"
               "  2  usage error (unknown command or option, bad argument)\n");
}

void nnp_cli_error(const char *what, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "nnprof: %s: ", what);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return NNP_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return NNP_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
        printf("nnprof %s\n", nnp_version());
        return NNP_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    }
    nnp_cli_error(argv[1], "unknown command (see 'nnprof --help')");
    return NNP_EXIT_USAGE;
}
