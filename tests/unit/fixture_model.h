/* fixture_model.h - the shared state of the analysis tests: a temporary output folder, an
 * empty model and an analysis context over them. Tests of one analysis (op statistics, step
 * trace, memory, pipeline, ...) take it as their cmocka state instead of each defining the
 * same struct, setup and teardown, and read the files an analysis wrote through the same
 * helpers. Needs the library's internal headers, so only tests that
 * link the internal objects include it (test_util.h stays public-API only). */
#ifndef NNPT_FIXTURE_MODEL_H
#define NNPT_FIXTURE_MODEL_H

#include <stdbool.h>

#include "analyse/analyse.h"
#include "model/model.h"

typedef struct nnpt_afx {
    char *dir;           /* owned: removed with its contents by nnpt_afx_teardown */
    nnp_model_t m;       /* initialised, empty */
    nnp_actx_t c;        /* c.m = &m, c.out_dir = dir, rank 0 */
    nnp_findings_t f;    /* nnp__findings_init: every figure "not measured" */
    nnp_step_trace_t st; /* zeroed; finalised by nnpt_afx_teardown */
} nnpt_afx_t;

/* cmocka setup: *state = a new nnpt_afx_t. Returns 0, or -1 when out of memory. */
int nnpt_afx_setup(void **state);
/* cmocka teardown of nnpt_afx_setup's state. Returns 0. */
int nnpt_afx_teardown(void **state);

/* The text of output file name in fx->dir, NUL-terminated, owned by the caller (free());
 * fails the test when the file is missing. */
char *nnpt_afx_read(const nnpt_afx_t *fx, const char *name);
/* Whether output file name exists in fx->dir. */
bool nnpt_afx_exists(const nnpt_afx_t *fx, const char *name);
/* Fails the test unless output file name holds exactly want. */
void nnpt_afx_expect_file(const nnpt_afx_t *fx, const char *name, const char *want);
/* Fails the test unless output file name contains part (the file is shown on failure). */
void nnpt_afx_expect_contains(const nnpt_afx_t *fx, const char *name, const char *part);

/* A cmocka test entry with the shared fixture as its state. */
#define NNPT_AFX_TEST(f) cmocka_unit_test_setup_teardown(f, nnpt_afx_setup, nnpt_afx_teardown)

#endif
