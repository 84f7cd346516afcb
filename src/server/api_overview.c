/* api_overview.c - GET /api/overview: the Overview page (MindInsight's "performance
 * overview"): the step-trace chart, the op-type pie (top 20), the number of steps whose
 * data preparation was the bottleneck, the timeline summary (streams, ops, executions) and
 * the advisor's findings for the "Helper" panel (the page links each to its evidence). */
#include <math.h>
#include <string.h>

#include "server/api.h"
#include "util/util.h"

/* Steps whose batch waited on data (minddata_step_queue_{rank}.csv, bottleneck column):
 * "data_process" when the host queue was empty too (the pipeline is slow), "data_transfer"
 * when the host had batches but the device queue was empty (sending is slow). */
static void data_prep(nnp_jw_t *w, const nnp_rank_data_t *d)
{
    const nnp_svt_t *q = &d->queue_steps;
    long c_b = nnp__svt_col(q, "bottleneck");
    size_t process = 0, transfer = 0, unknown = 0;
    const cJSON *ps = d->pipe_summary;

    nnp__jw_key(w, "data_prep");
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "available");
    nnp__jw_bool(w, q->n_rows > 0 || ps != NULL);
    for (size_t i = 0; i < q->n_rows; i++) {
        const char *b = nnp__svt_cell(q, i, c_b);
        process += strcmp(b, "data_process") == 0;
        transfer += strcmp(b, "data_transfer") == 0;
        unknown += strcmp(b, "unknown") == 0;
    }
    nnp__jw_key(w, "steps");
    nnp__jw_uint(w, q->n_rows);
    nnp__jw_key(w, "bottleneck_steps");
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "data_process");
    nnp__jw_uint(w, process);
    nnp__jw_key(w, "data_transfer");
    nnp__jw_uint(w, transfer);
    nnp__jw_key(w, "unknown"); /* device queue empty, no host sample */
    nnp__jw_uint(w, unknown);
    nnp__jw_key(w, "total");
    nnp__jw_uint(w, process + transfer + unknown);
    nnp__jw_obj_end(w);
    nnp__api_cjson(w, "bottleneck_op",
                   ps ? cJSON_GetObjectItemCaseSensitive(ps, "bottleneck_warning") : NULL);
    nnp__api_cjson(w, "status",
                   ps ? cJSON_GetObjectItemCaseSensitive(ps, "data_process_status") : NULL);
    nnp__jw_obj_end(w);
}

int nnp__api_overview(const nnp_api_ctx_t *c, nnp_jw_t *w)
{
    const nnp_rank_data_t *d = c->d;
    const nnp_svt_t *t = &d->steps;
    const cJSON *findings = cJSON_GetObjectItemCaseSensitive(d->advice, "findings");

    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "run");
    nnp__jw_str(w, c->run->id);
    nnp__jw_key(w, "kind");
    nnp__jw_str(w, c->run->kind);
    nnp__jw_key(w, "rank");
    nnp__jw_int(w, d->rank);
    nnp__jw_key(w, "ranks");
    nnp__jw_arr_begin(w);
    for (size_t i = 0; i < c->run->n_ranks; i++)
        nnp__jw_int(w, c->run->ranks[i]->rank);
    nnp__jw_arr_end(w);
    nnp__api_cjson(w, "profiler_info", d->profiler_info);
    nnp__jw_key(w, "inference");
    nnp__jw_bool(w, nnp__svt_col(t, "fp") >= 0);
    nnp__api_raw(w, "step_trace", d->step_curves);
    nnp__api_cjson(w, "step_summary", d->step_summary);
    nnp__api_cjson(w, "op_types", d->top20);
    data_prep(w, d);
    nnp__api_cjson(w, "timeline", d->timeline_summary);
    nnp__api_cjson(w, "findings", findings);
    nnp__jw_obj_end(w);
    return NNP_OK;
}
