/* api_util.c - the API dispatcher (run lookup, on-demand analysis, rank choice, status
 * codes) and helpers the page builders share. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "server/api.h"
#include "server/assets.h"
#include "util/util.h"

#define HTTP_OK          200
#define HTTP_ACCEPTED    202
#define HTTP_BAD_REQUEST 400
#define HTTP_NOT_FOUND   404
#define HTTP_ERROR       500
/* Largest page document (the operators table of a run with very many distinct ops). */
#define PAGE_MAX_BYTES (256u * 1024u * 1024u)

const nnp_asset_t *nnp__asset_find(const char *path)
{
    for (const nnp_asset_t *a = nnp__assets; a->path; a++) {
        if (strcmp(a->path, path) == 0)
            return a;
    }
    return NULL;
}

void nnp__api_cjson(nnp_jw_t *w, const char *key, const cJSON *j)
{
    char *text;
    if (key)
        nnp__jw_key(w, key);
    if (!j) {
        nnp__jw_null(w);
        return;
    }
    text = cJSON_PrintUnformatted(j);
    if (!text) {
        nnp__jw_null(w);
        return;
    }
    nnp__jw_raw(w, text);
    cJSON_free(text);
}

void nnp__api_cell_num(nnp_jw_t *w, const nnp_svt_t *t, size_t row, long col)
{
    nnp__svt_json_num(w, t, row, col);
}

void nnp__api_num(nnp_jw_t *w, double v)
{
    if (isnan(v) || isinf(v))
        nnp__jw_null(w);
    else
        nnp__jw_double(w, v);
}

int nnp__api_int_arg(const nnp_api_args_t *a, const char *key, long long def, long long lo,
                     long long hi, long long *out)
{
    const char *s = a->get(a->ctx, key);
    char *end;
    long long v;
    *out = def;
    if (!s || !*s)
        return NNP_OK;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return nnp__fail(NNP_EINVAL, "'%s' is not a valid %s (an integer in [%lld, %lld])", s, key,
                         lo, hi);
    *out = v;
    return NNP_OK;
}

size_t nnp__api_step_rows(const nnp_svt_t *t, size_t *rows, size_t cap)
{
    long c = nnp__svt_col(t, "step_num");
    size_t n = 0;
    for (size_t i = 0; i < t->n_rows && n < cap; i++) {
        if (strcmp(nnp__svt_cell(t, i, c), "-") != 0)
            rows[n++] = i;
    }
    return n;
}

size_t nnp__api_avg_row(const nnp_svt_t *t)
{
    long c = nnp__svt_col(t, "step_num");
    for (size_t i = t->n_rows; i-- > 0;) {
        if (strcmp(nnp__svt_cell(t, i, c), "-") == 0)
            return i;
    }
    return SIZE_MAX;
}

void nnp__api_raw(nnp_jw_t *w, const char *key, const char *json)
{
    nnp__jw_key(w, key);
    if (json)
        nnp__jw_raw(w, json);
    else
        nnp__jw_null(w);
}

/* ---- dispatch ---- */

typedef struct page {
    const char *name;
    nnp_api_fn fn;
} page_t;

static const page_t pages[] = {
    {"overview", nnp__api_overview},   {"step_trace", nnp__api_step_trace},
    {"operators", nnp__api_operators}, {"data_prep", nnp__api_data_prep},
    {"timeline", nnp__api_timeline},   {"dynamic_shape", nnp__api_dynamic_shape},
    {"resources", nnp__api_resources}, {"cluster", nnp__api_cluster},
    {"compare", nnp__api_compare},
};

static void error_json(nnp_jw_t *w, const char *msg)
{
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "error");
    nnp__jw_str(w, msg);
    nnp__jw_obj_end(w);
}

/* Makes run ready or reports its state (202/500 with the status as the body). */
static bool run_ready(nnp_runs_t *rs, nnp_run_t *r, nnp_jw_t *w, int *status)
{
    nnp_run_state_t st = nnp__runs_want(rs, r);
    if (st == NNP_RUN_READY)
        return true;
    nnp__run_status_json(rs, r, w);
    *status = st == NNP_RUN_FAILED ? HTTP_ERROR : HTTP_ACCEPTED;
    return false;
}

void nnp__api_handle(nnp_runs_t *rs, const char *page, const nnp_api_args_t *a, nnp_jw_t *w,
                     int *status)
{
    const page_t *pg = NULL;
    nnp_api_ctx_t c;
    nnp_run_t *run;
    nnp_jw_t pw;
    long long rank;
    int rc;

    *status = HTTP_OK;
    if (strcmp(page, "runs") == 0) {
        nnp__runs_list_json(rs, w);
        return;
    }
    for (size_t i = 0; i < NNP_ARRAY_LEN(pages); i++) {
        if (strcmp(pages[i].name, page) == 0)
            pg = &pages[i];
    }
    if (!pg && strcmp(page, "status") != 0) {
        *status = HTTP_NOT_FOUND;
        error_json(w, "no such API endpoint");
        return;
    }
    run = nnp__runs_find(rs, a->get(a->ctx, pg && pg->fn == nnp__api_compare ? "a" : "run"));
    if (!run) {
        *status = HTTP_NOT_FOUND;
        error_json(w, "no such run (GET /api/runs lists them)");
        return;
    }
    if (!pg) {
        nnp__runs_want(rs, run);
        nnp__run_status_json(rs, run, w);
        return;
    }
    if (!run_ready(rs, run, w, status))
        return;
    if (nnp__api_int_arg(a, "rank", -1, 0, INT32_MAX, &rank) != NNP_OK) {
        *status = HTTP_BAD_REQUEST;
        error_json(w, nnp_last_error());
        return;
    }
    memset(&c, 0, sizeof(c));
    c.rs = rs;
    c.run = run;
    c.args = a;
    c.d = nnp__run_rank(run, (int)rank);
    if (!c.d) {
        *status = HTTP_NOT_FOUND;
        error_json(w, "this run has no such rank");
        return;
    }
    /* The page writes into its own buffer so that an error met halfway leaves no half
     * document in the answer. */
    rc = nnp__jw_init(&pw, -1, false, PAGE_MAX_BYTES);
    if (rc == NNP_OK) {
        rc = pg->fn(&c, &pw);
        if (rc == NNP_OK)
            rc = pw.err;
        if (rc == NNP_OK) {
            char *text = nnp__jw_take(&pw, NULL);
            if (text)
                nnp__jw_raw(w, text);
            else
                rc = nnp__fail(NNP_ENOMEM, "out of memory");
            nnp__free(text);
        }
        nnp__jw_fini(&pw);
    }
    if (rc == NNP_ESTATE) {
        /* compare: the other run is still being analysed. */
        *status = HTTP_ACCEPTED;
        error_json(w, nnp_last_error());
        return;
    }
    if (rc != NNP_OK) {
        *status = rc == NNP_ENOENT   ? HTTP_NOT_FOUND
                  : rc == NNP_EINVAL ? HTTP_BAD_REQUEST
                                     : HTTP_ERROR;
        error_json(w, nnp_last_error());
    }
}
