/* api_cluster.c - GET /api/cluster: the Cluster page. The per-rank step trace table
 * (iteration interval, forward+backward, tail, total of every rank, the average by default
 * or one step with &step=ID) comes from each rank's step trace. The communication matrix
 * and the slow-rank / slow-link verdicts belong to the cluster analysis (issue 14): until
 * it writes them they are {"available": false, "reason": ...}; docs/UI.md fixes the shape
 * they will have, so the page needs no change when they arrive. */
#include <math.h>
#include <string.h>

#include "server/api.h"
#include "util/util.h"

#define CLUSTER_PENDING                                                                            \
    "cluster analysis not available for this run (the cluster analysis, issue 14, is not "         \
    "built yet)"

static void pending(nnp_jw_t *w, const char *key)
{
    nnp__jw_key(w, key);
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "available");
    nnp__jw_bool(w, false);
    nnp__jw_key(w, "reason");
    nnp__jw_str(w, CLUSTER_PENDING);
    nnp__jw_obj_end(w);
}

static void rank_row(nnp_jw_t *w, const nnp_rank_data_t *d, const char *step)
{
    const nnp_svt_t *t = &d->steps;
    long c_step = nnp__svt_col(t, "step_num");
    size_t row = SIZE_MAX, n = 0;

    for (size_t i = 0; i < t->n_rows; i++) {
        const char *id = nnp__svt_cell(t, i, c_step);
        n += strcmp(id, "-") != 0;
        if (strcmp(id, step ? step : "-") == 0)
            row = i;
    }
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "rank");
    nnp__jw_int(w, d->rank);
    nnp__jw_key(w, "n_steps");
    nnp__jw_uint(w, n);
    nnp__jw_key(w, "has_step");
    nnp__jw_bool(w, row != SIZE_MAX);
    for (size_t k = 0; k < NNP_N_PHASES; k++) {
        long c = nnp__svt_col(t, nnp__phase_cols[k]);
        if (c < 0)
            continue;
        nnp__jw_key(w, nnp__phase_cols[k]);
        if (row == SIZE_MAX)
            nnp__jw_null(w);
        else
            nnp__api_cell_num(w, t, row, c);
    }
    nnp__jw_obj_end(w);
}

int nnp__api_cluster(const nnp_api_ctx_t *c, nnp_jw_t *w)
{
    const nnp_run_t *r = c->run;
    const char *step = c->args->get(c->args->ctx, "step");
    const nnp_svt_t *t0 = &r->ranks[0]->steps;
    long c_step = nnp__svt_col(t0, "step_num");

    if (step && (!*step || strcmp(step, "average") == 0))
        step = NULL;
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "run");
    nnp__jw_str(w, r->id);
    nnp__jw_key(w, "n_ranks");
    nnp__jw_uint(w, r->n_ranks);
    nnp__jw_key(w, "selected");
    nnp__jw_str(w, step ? step : "average");
    nnp__jw_key(w, "step_ids"); /* the lowest rank's, for the selector */
    nnp__jw_arr_begin(w);
    for (size_t i = 0; i < t0->n_rows && i < 5000; i++) {
        const char *id = nnp__svt_cell(t0, i, c_step);
        if (strcmp(id, "-") != 0)
            nnp__jw_str(w, id);
    }
    nnp__jw_arr_end(w);
    nnp__jw_key(w, "step_trace");
    nnp__jw_arr_begin(w);
    for (size_t k = 0; k < r->n_ranks; k++)
        rank_row(w, r->ranks[k], step);
    nnp__jw_arr_end(w);
    pending(w, "communication_matrix");
    pending(w, "slow_rank");
    pending(w, "slow_link");
    nnp__jw_obj_end(w);
    return NNP_OK;
}
