/* cli.h - shared declarations of the nnprof CLI: exit codes, subcommand entry points and
 * error printing ("nnprof: <what>: <why>" on stderr, STYLE 4). */
#ifndef NNP_CLI_H
#define NNP_CLI_H

/* Exit codes, documented in `nnprof --help` and docs/CLI.md. */
#define NNP_EXIT_OK    0
#define NNP_EXIT_FAIL  1
#define NNP_EXIT_USAGE 2

/* Prints "nnprof: <what>: <why>" to stderr. */
void nnp_cli_error(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Finds the raw directories under path: path itself if it is one, else its PROF_* children,
 * else <path>/profiler/PROF_*. Returns the number found (<= cap) in out (malloc'ed strings
 * the caller frees), or -1 on error (message printed). */
int nnp_cli_find_raw_dirs(const char *path, char **out, int cap);

int nnp_cmd_dump(int argc, char **argv);
int nnp_cmd_analyse(int argc, char **argv);
int nnp_cmd_query(int argc, char **argv);
int nnp_cmd_summary(int argc, char **argv);
int nnp_cmd_export(int argc, char **argv);
int nnp_cmd_info(int argc, char **argv);
int nnp_cmd_run(int argc, char **argv);
int nnp_cmd_ui(int argc, char **argv);
int nnp_cmd_report(int argc, char **argv);

#endif /* NNP_CLI_H */
