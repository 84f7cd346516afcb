/* api.h - the JSON behind each page, one builder per page (api_<page>.c), shared by the
 * HTTP server (/api/<page>?run=ID&rank=R...) and the HTML report (nnprof report). Every
 * builder reads the rank data a run loaded (rundata.h) and writes pre-aggregated JSON:
 * tables of ops and steps, curves of at most NNP_CURVE_MAX_POINTS points; never the
 * trace. Shapes are documented in docs/UI.md. */
#ifndef NNP_SERVER_API_H
#define NNP_SERVER_API_H

#include <cjson/cJSON.h>

#include "server/runs.h"
#include "util/json_writer.h"

/* Query arguments: get(ctx, key) returns the value or NULL (HTTP: the URL's query). */
typedef struct nnp_api_args {
    const char *(*get)(void *ctx, const char *key);
    void *ctx;
} nnp_api_args_t;

typedef struct nnp_api_ctx {
    nnp_runs_t *rs;
    nnp_run_t *run;           /* READY */
    const nnp_rank_data_t *d; /* the rank asked for (the lowest by default) */
    const nnp_api_args_t *args;
} nnp_api_ctx_t;

/* A page builder: NNP_OK, or NNP_EINVAL / NNP_ENOENT with the message set (400 / 404). */
typedef int (*nnp_api_fn)(const nnp_api_ctx_t *c, nnp_jw_t *w);

int nnp__api_overview(const nnp_api_ctx_t *c, nnp_jw_t *w);
int nnp__api_step_trace(const nnp_api_ctx_t *c, nnp_jw_t *w);
int nnp__api_operators(const nnp_api_ctx_t *c, nnp_jw_t *w);
int nnp__api_data_prep(const nnp_api_ctx_t *c, nnp_jw_t *w);
int nnp__api_timeline(const nnp_api_ctx_t *c, nnp_jw_t *w);
int nnp__api_dynamic_shape(const nnp_api_ctx_t *c, nnp_jw_t *w);
int nnp__api_resources(const nnp_api_ctx_t *c, nnp_jw_t *w);
int nnp__api_cluster(const nnp_api_ctx_t *c, nnp_jw_t *w);
int nnp__api_compare(const nnp_api_ctx_t *c, nnp_jw_t *w);

/* Answers GET /api/<page>: "runs", "status" or a page above. *status gets the HTTP
 * status: 200; 202 while the run is analysed or loaded (the body is its status, so the
 * page shows progress); 400/404 with {"error": "..."}; 500 when its analysis failed. */
void nnp__api_handle(nnp_runs_t *rs, const char *page, const nnp_api_args_t *a, nnp_jw_t *w,
                     int *status);

/* ---- helpers shared by the builders (api_util.c) ---- */

/* Writes key then a cJSON value as it is (null when j is NULL). */
void nnp__api_cjson(nnp_jw_t *w, const char *key, const cJSON *j);
/* A CSV cell as a JSON number written with the file's own digits (so the page shows the
 * CSV's exact value), or null when the cell is not a number. */
void nnp__api_cell_num(nnp_jw_t *w, const nnp_svt_t *t, size_t row, long col);
/* A double, or null when NaN. */
void nnp__api_num(nnp_jw_t *w, double v);
/* An integer argument; def when absent. NNP_EINVAL (message names the key) when bad. */
int nnp__api_int_arg(const nnp_api_args_t *a, const char *key, long long def, long long lo,
                     long long hi, long long *out);

/* Rows of step_trace_raw that are steps (the averages row, step_num "-", excluded). */
size_t nnp__api_step_rows(const nnp_svt_t *t, size_t *rows, size_t cap);
/* Row of the averages row, SIZE_MAX when none. */
size_t nnp__api_avg_row(const nnp_svt_t *t);
/* Writes key, then pre-built JSON text (null when json is NULL). */
void nnp__api_raw(nnp_jw_t *w, const char *key, const char *json);

#endif /* NNP_SERVER_API_H */
