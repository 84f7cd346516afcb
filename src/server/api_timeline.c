/* api_timeline.c - GET /api/timeline: the Timeline page. What can be downloaded (each
 * rank's trace_view.json and its size, the graph ids, each rank's timeline summary); the
 * download itself is GET /api/timeline_download (http.c, timeline_export.c). */
#include <sys/stat.h>
#include <unistd.h>

#include "server/api.h"
#include "server/safe_open.h"
#include "util/util.h"

static void graph_ids(nnp_jw_t *w, const nnp_run_t *r)
{
    /* The union of every rank's graph ids (profiler_info_{rank}.json), small lists. */
    long long seen[256];
    size_t n = 0;
    nnp__jw_key(w, "graph_ids");
    nnp__jw_arr_begin(w);
    for (size_t k = 0; k < r->n_ranks; k++) {
        const cJSON *ids =
            cJSON_GetObjectItemCaseSensitive(r->ranks[k]->profiler_info, "graph_ids");
        const cJSON *id;
        cJSON_ArrayForEach(id, ids)
        {
            bool dup = false;
            if (!cJSON_IsNumber(id))
                continue;
            for (size_t i = 0; i < n; i++)
                dup |= seen[i] == (long long)id->valuedouble;
            if (dup || n >= NNP_ARRAY_LEN(seen))
                continue;
            seen[n++] = (long long)id->valuedouble;
            nnp__jw_int(w, seen[n - 1]);
        }
    }
    nnp__jw_arr_end(w);
}

int nnp__api_timeline(const nnp_api_ctx_t *c, nnp_jw_t *w)
{
    const nnp_run_t *r = c->run;
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "ranks");
    nnp__jw_arr_begin(w);
    for (size_t k = 0; k < r->n_ranks; k++) {
        const nnp_rank_data_t *d = r->ranks[k];
        struct stat st;
        int fd = d->trace_rel[0] ? nnp__safe_open(r->results, d->trace_rel, false) : -1;
        nnp__jw_obj_begin(w);
        nnp__jw_key(w, "rank");
        nnp__jw_int(w, d->rank);
        nnp__jw_key(w, "trace_bytes");
        if (fd >= 0 && fstat(fd, &st) == 0)
            nnp__jw_int(w, st.st_size);
        else
            nnp__jw_null(w);
        if (fd >= 0)
            close(fd);
        nnp__api_cjson(w, "summary", d->timeline_summary);
        nnp__jw_obj_end(w);
    }
    nnp__jw_arr_end(w);
    graph_ids(w, r);
    nnp__jw_key(w, "download");
    nnp__jw_str(w, "/api/timeline_download");
    nnp__jw_obj_end(w);
    return NNP_OK;
}
