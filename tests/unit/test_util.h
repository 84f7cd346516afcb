/* test_util.h - helpers shared by the unit tests: temporary directories and capture of
 * the library's log lines (so tests can assert on the exact warnings). */
#ifndef NNP_TEST_UTIL_H
#define NNP_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "nnprof/nnprof.h"

/* Creates a fresh directory under $TMPDIR (or /tmp); returns a static-lifetime copy the
 * caller frees with free(). Fails the test on error. */
char *nnpt_mkdtemp(void);
/* Removes a directory tree (like rm -rf). */
void nnpt_rm_rf(const char *path);

/* Writes text to dir/name (creating dir/name's missing parent folders is not done: dir
 * must exist); returns the path, malloc'ed. Fails the test on error. */
char *nnpt_write_file(const char *dir, const char *name, const char *text);
/* The whole file at path, NUL-terminated and malloc'ed; NULL when it cannot be read. */
char *nnpt_read_text(const char *path);
/* The file dir/name (nnpt_read_text), failing the test when it cannot be read. */
char *nnpt_read_in(const char *dir, const char *name);

/* Analyses in (a folder or file) into out as `nnprof analyse -o out in` does, one rank at a
 * time, quietly; returns nnp__analyse_path's code. */
int nnpt_analyse_to(const char *in, const char *out);

/* Starts capturing log lines at every level (the default sink is replaced). */
void nnpt_log_capture(void);
/* Everything captured since nnpt_log_capture(), one line per message, "LEVEL: msg\n". */
const char *nnpt_log_text(void);
/* Number of captured messages. */
int nnpt_log_count(void);
/* Stops capturing and restores the default sink and level. */
void nnpt_log_release(void);

#endif
