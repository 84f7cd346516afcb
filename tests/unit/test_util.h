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

/* Starts capturing log lines at every level (the default sink is replaced). */
void nnpt_log_capture(void);
/* Everything captured since nnpt_log_capture(), one line per message, "LEVEL: msg\n". */
const char *nnpt_log_text(void);
/* Number of captured messages. */
int nnpt_log_count(void);
/* Stops capturing and restores the default sink and level. */
void nnpt_log_release(void);

/* ---- model builders (grow these instead of copying them into each test) ---- */
struct nnp_model;
/* A step of graph 1 over [begin, end). */
void nnpt_add_step(struct nnp_model *m, uint64_t id, int64_t begin, int64_t end);
/* A host op; shapes/dtypes may be NULL (not recorded). Returns its row. */
size_t nnpt_add_op(struct nnp_model *m, int64_t start, int64_t end, const char *name,
                   const char *type, const char *shapes, const char *dtypes);
/* A data-pipeline op registration. */
void nnpt_add_pipe_op(struct nnp_model *m, int64_t id, int64_t parent, const char *type,
                      uint32_t workers);
/* A queue sample (op_id -1: the device queue). */
void nnpt_add_queue(struct nnp_model *m, int64_t ts, int64_t op_id, uint32_t size, uint32_t cap);

#endif
