/* test_util.h - helpers shared by the unit tests: temporary directories and capture of
 * the library's log lines (so tests can assert on the exact warnings). */
#ifndef NNP_TEST_UTIL_H
#define NNP_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cmocka.h>

#include "nnprof/nnprof.h"

/* Creates a fresh directory under $TMPDIR (or /tmp); returns a static-lifetime copy the
 * caller frees with free(). Fails the test on error. */
char *nnpt_mkdtemp(void);
/* Removes a directory tree (like rm -rf). */
void nnpt_rm_rf(const char *path);

/* Runs the program argv[0] (a path) with the environment plus env ("NAME=value" sets,
 * "NAME" alone unsets; NULL-terminated, may be NULL), and waits for it at most limit_s
 * seconds, then kills it. Returns its wait status, or -1 when it had to be killed (a hang)
 * or could not start. */
int nnpt_run(const char *const argv[], const char *const env[], int limit_s);
/* Waits for pid at most limit_s seconds, then SIGKILLs it. Returns the wait status, or -1
 * when it had to be killed. */
int nnpt_wait_bounded(pid_t pid, int limit_s);
/* The PROF_* directories under out/profiler, sorted by name (full paths, malloc'ed; release
 * with nnpt_free_list). *n receives their number (0 when profiler/ does not exist). */
char **nnpt_raw_dirs(const char *out, int *n);
void nnpt_free_list(char **v, int n);
/* dir/name parsed as JSON, or NULL when missing or invalid (release with cJSON_Delete). */
struct cJSON *nnpt_load_json(const char *dir, const char *name);

/* Starts capturing log lines at every level (the default sink is replaced). */
void nnpt_log_capture(void);
/* Everything captured since nnpt_log_capture(), one line per message, "LEVEL: msg\n". */
const char *nnpt_log_text(void);
/* Number of captured messages. */
int nnpt_log_count(void);
/* Stops capturing and restores the default sink and level. */
void nnpt_log_release(void);

#endif
