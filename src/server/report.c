/* report.c - `nnprof report`: one self-contained HTML file for mailing or attaching to a
 * bug. The UI's own script and style (embedded assets) are inlined with every page's data
 * as the API would answer it (api.h), so the report shows the same pages, offline, from
 * file://. Pages: overview (with the advisor's findings), step trace, operators, data
 * preparation and resources (memory); the other pages need the server. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server/api.h"
#include "server/assets.h"
#include "server/server.h"
#include "util/util.h"

/* Runs one report holds at most, and the largest data document. */
#define REPORT_MAX_RUNS 16
#define DATA_MAX_BYTES  (1024u * 1024u * 1024u)

static const char *const report_pages[] = {"overview", "step_trace", "operators", "data_prep",
                                           "resources"};

typedef struct kv {
    const char *run, *rank;
} kv_t;

static const char *kv_get(void *ctx, const char *key)
{
    const kv_t *k = ctx;
    if (strcmp(key, "run") == 0)
        return k->run;
    if (strcmp(key, "rank") == 0)
        return k->rank;
    return NULL;
}

/* Writes text with every "</" as "<\/": the data cannot close its <script> element (in
 * JSON "</" only occurs inside strings, where "\/" reads back as "/"). */
static int write_escaped(int fd, const char *s, size_t n)
{
    size_t from = 0;
    int rc = NNP_OK;
    for (size_t i = 0; rc == NNP_OK && i + 1 < n; i++) {
        if (s[i] == '<' && s[i + 1] == '/') {
            rc = nnp__write_all(fd, s + from, i + 1 - from);
            if (rc == NNP_OK)
                rc = nnp__write_all(fd, "\\", 1);
            from = i + 1;
        }
    }
    if (rc == NNP_OK)
        rc = nnp__write_all(fd, s + from, n - from);
    return rc;
}

static int put(int fd, const char *s)
{
    return nnp__write_all(fd, s, strlen(s));
}

/* The data document: {"generated", "runs": [...], "pages": {"page|run|rank": {...}}}. */
static int build_data(nnp_runs_t *rs, nnp_run_t **runs, size_t n_runs, int rank, nnp_jw_t *w)
{
    char when[64];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "generated");
    nnp__jw_str(w, when);
    nnp__jw_key(w, "nnprof_version");
    nnp__jw_str(w, nnp_version());
    nnp__jw_key(w, "root");
    nnp__jw_str(w, rs->root);
    nnp__jw_key(w, "runs");
    nnp__jw_arr_begin(w);
    for (size_t i = 0; i < n_runs; i++) {
        nnp__jw_obj_begin(w);
        nnp__jw_key(w, "id");
        nnp__jw_str(w, runs[i]->id);
        nnp__jw_key(w, "kind");
        nnp__jw_str(w, runs[i]->kind);
        nnp__jw_key(w, "state");
        nnp__jw_str(w, "ready");
        nnp__jw_key(w, "path");
        nnp__jw_str(w, runs[i]->path);
        nnp__jw_key(w, "cluster");
        nnp__jw_bool(w, runs[i]->n_ranks > 1);
        nnp__jw_key(w, "ranks");
        nnp__jw_arr_begin(w);
        for (size_t k = 0; k < runs[i]->n_ranks; k++) {
            int r = runs[i]->ranks[k]->rank;
            if ((rank < 0 && k < NNP_REPORT_MAX_RANKS) || r == rank)
                nnp__jw_int(w, r);
        }
        nnp__jw_arr_end(w);
        nnp__jw_obj_end(w);
    }
    nnp__jw_arr_end(w);
    nnp__jw_key(w, "pages");
    nnp__jw_obj_begin(w);
    for (size_t i = 0; i < n_runs; i++) {
        for (size_t k = 0; k < runs[i]->n_ranks; k++) {
            char rank_text[16], key[NNP_PATH_MAX + 64];
            int r = runs[i]->ranks[k]->rank;
            kv_t kv;
            nnp_api_args_t a = {kv_get, &kv};
            if (!((rank < 0 && k < NNP_REPORT_MAX_RANKS) || r == rank))
                continue;
            snprintf(rank_text, sizeof(rank_text), "%d", r);
            kv.run = runs[i]->id;
            kv.rank = rank_text;
            for (size_t p = 0; p < NNP_ARRAY_LEN(report_pages); p++) {
                int status = 0;
                snprintf(key, sizeof(key), "%s|%s|%d", report_pages[p], runs[i]->id, r);
                nnp__jw_key(w, key);
                nnp__api_handle(rs, report_pages[p], &a, w, &status);
                if (status != 200)
                    return nnp__fail(NNP_EIO, "report: %s of run %s rank %d: HTTP %d",
                                     report_pages[p], runs[i]->id, r, status);
            }
        }
    }
    nnp__jw_obj_end(w);
    nnp__jw_obj_end(w);
    return w->err;
}

static int write_html(const char *out_path, const char *data, size_t data_len)
{
    const nnp_asset_t *js = nnp__asset_find("/app.js"), *css = nnp__asset_find("/app.css");
    char tmp[NNP_PATH_MAX];
    int fd, rc;

    if (snprintf(tmp, sizeof(tmp), "%s.tmpXXXXXX", out_path) >= (int)sizeof(tmp))
        return nnp__fail(NNP_ETOOLONG, "path too long: %s", out_path);
    fd = mkstemp(tmp);
    if (fd < 0)
        return nnp__fail(NNP_EIO, "%s: cannot create: %s", out_path, strerror(errno));
    rc = put(fd, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                 "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                 "<title>nnprof report</title>\n<style>\n");
    if (rc == NNP_OK)
        rc = write_escaped(fd, (const char *)css->data, css->len);
    if (rc == NNP_OK)
        rc = put(fd, "</style></head>\n<body><div id=\"app\"></div>\n<script>window.NNP_REPORT = ");
    if (rc == NNP_OK)
        rc = write_escaped(fd, data, data_len);
    if (rc == NNP_OK)
        rc = put(fd, ";</script>\n<script>");
    if (rc == NNP_OK)
        rc = write_escaped(fd, (const char *)js->data, js->len);
    if (rc == NNP_OK)
        rc = put(fd, "</script>\n</body></html>\n");
    if (rc == NNP_OK && fsync(fd) != 0)
        rc = nnp__fail(NNP_EIO, "%s: %s", out_path, strerror(errno));
    close(fd);
    if (rc == NNP_OK && rename(tmp, out_path) != 0)
        rc = nnp__fail(NNP_EIO, "%s: cannot rename into place: %s", out_path, strerror(errno));
    if (rc != NNP_OK)
        unlink(tmp);
    return rc;
}

int nnp_report_write(const char *dir, const char *run_id, int rank, const char *cache_root,
                     const char *analyse_exe, const char *out_path)
{
    nnp_runs_t rs;
    nnp_runs_config_t cfg;
    nnp_run_t *runs[REPORT_MAX_RUNS];
    size_t n_runs = 0;
    nnp_jw_t w;
    char *data = NULL;
    size_t len = 0;
    int rc;

    if (!nnp_server_has_assets())
        return nnp__fail(NNP_ENOTSUP, "nnprof was built without the web pages (node was not "
                                      "found at build time: run scripts/bootstrap and rebuild)");
    memset(&cfg, 0, sizeof(cfg));
    cfg.root = dir;
    cfg.cache_root = cache_root;
    cfg.analyse_exe = analyse_exe;
    rc = nnp__runs_init(&rs, &cfg);
    if (rc != NNP_OK)
        return rc;
    for (size_t i = 0; i < rs.n && n_runs < REPORT_MAX_RUNS; i++) {
        if (!run_id || strcmp(rs.v[i].id, run_id) == 0)
            runs[n_runs++] = &rs.v[i];
    }
    if (n_runs == 0) {
        rc = run_id ? nnp__fail(NNP_ENOENT, "no run '%s' under %s", run_id, dir)
                    : nnp__fail(NNP_ENOENT, "no profiling data found under %s", dir);
        goto out;
    }
    if (!run_id && rs.n > REPORT_MAX_RUNS)
        NNP_LOG_W("report: %zu runs found; the report holds the first %d (use --run)", rs.n,
                  REPORT_MAX_RUNS);
    for (size_t i = 0; rc == NNP_OK && i < n_runs; i++)
        rc = nnp__runs_prepare_sync(&rs, runs[i]);
    for (size_t i = 0; rc == NNP_OK && rank >= 0 && i < n_runs; i++) {
        if (!nnp__run_rank(runs[i], rank))
            rc = nnp__fail(NNP_ENOENT, "run '%s' has no rank %d", runs[i]->id, rank);
    }
    if (rc != NNP_OK)
        goto out;
    rc = nnp__jw_init(&w, -1, false, DATA_MAX_BYTES);
    if (rc == NNP_OK) {
        rc = build_data(&rs, runs, n_runs, rank, &w);
        if (rc == NNP_OK) {
            data = nnp__jw_take(&w, &len);
            if (!data)
                rc = nnp__fail(NNP_ENOMEM, "out of memory");
        }
        nnp__jw_fini(&w);
    }
    if (rc == NNP_OK)
        rc = write_html(out_path, data, len);
out:
    nnp__free(data);
    nnp__runs_fini(&rs);
    return rc;
}
