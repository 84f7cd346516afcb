/* api_step_trace.c - GET /api/step_trace: the Step trace page. Per-step phases
 * (iteration interval, forward+backward, tail, each communication op of the step) from
 * step_trace_raw_{rank}_detail_time.csv, the average by default or one step (&step=ID),
 * phase curves over the steps, the FP-start/BP-end ops and how they were chosen, and the
 * compute/communication overlap of step_trace_time.csv. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "server/api.h"
#include "util/util.h"

/* Step ids listed for the page's step selector at most (beyond: the page asks a number). */
#define MAX_LISTED_STEPS 5000

static const char *const point_cols[] = {"start_point", "end_point", "fp_point", "bp_point"};

/* Is column c the duration column of a communication op (has _start/_end siblings)? */
static bool is_comm_col(const nnp_svt_t *t, size_t c)
{
    char name[NNP_NAME_MAX + 32];
    const char *base = t->names[c];
    snprintf(name, sizeof(name), "%s_start_point", base);
    if (nnp__svt_col(t, name) < 0)
        return false;
    snprintf(name, sizeof(name), "%s_end_point", base);
    return nnp__svt_col(t, name) >= 0;
}

/* The phases of one row (a step, or the averages row), and its communication ops. */
static void write_row(nnp_jw_t *w, const nnp_rank_data_t *d, size_t row, bool is_avg)
{
    const nnp_svt_t *t = &d->steps;
    long c_start = nnp__svt_col(t, "start_point");
    double start = nnp__svt_num(t, row, c_start);

    nnp__jw_key(w, "phases");
    nnp__jw_obj_begin(w);
    for (size_t i = 0; i < NNP_N_PHASES; i++) {
        long c = nnp__svt_col(t, nnp__phase_cols[i]);
        if (c < 0)
            continue;
        nnp__jw_key(w, nnp__phase_cols[i]);
        nnp__api_cell_num(w, t, row, c);
    }
    nnp__jw_obj_end(w);
    nnp__jw_key(w, "points");
    nnp__jw_obj_begin(w);
    for (size_t i = 0; !is_avg && i < NNP_ARRAY_LEN(point_cols); i++) {
        long c = nnp__svt_col(t, point_cols[i]);
        if (c < 0)
            continue;
        nnp__jw_key(w, point_cols[i]);
        nnp__api_cell_num(w, t, row, c);
    }
    nnp__jw_obj_end(w);
    nnp__jw_key(w, "comm");
    nnp__jw_arr_begin(w);
    for (size_t c = 0; c < t->n_cols; c++) {
        char name[NNP_NAME_MAX + 32];
        if (!is_comm_col(t, c) || !*nnp__svt_cell(t, row, (long)c))
            continue;
        nnp__jw_obj_begin(w);
        nnp__jw_key(w, "name");
        nnp__jw_str(w, t->names[c]);
        nnp__jw_key(w, "duration_ms");
        nnp__api_cell_num(w, t, row, (long)c);
        snprintf(name, sizeof(name), "%s_start_point", t->names[c]);
        nnp__jw_key(w, "offset_ms"); /* from the step's start point; average: mean offset */
        nnp__api_num(w, is_avg ? d->comm_offset[c]
                               : nnp__svt_num(t, row, nnp__svt_col(t, name)) - start);
        nnp__jw_obj_end(w);
    }
    nnp__jw_arr_end(w);
}

/* How fp/bp were chosen (docs/OUTPUTS.md "Points"), from the point info and options. */
static void how_chosen(nnp_jw_t *w, const nnp_rank_data_t *d, const char *which,
                       const char *info_key, const char *opt_key)
{
    const cJSON *opts = cJSON_GetObjectItemCaseSensitive(d->profiler_info, "profiling_options");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(d->point_info, info_key);
    const cJSON *opt = cJSON_GetObjectItemCaseSensitive(opts, opt_key);
    const char *n = cJSON_IsString(name) ? name->valuestring : "";
    const char *o = cJSON_IsString(opt) ? opt->valuestring : "";

    nnp__jw_key(w, which);
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "op");
    nnp__jw_str(w, n);
    nnp__jw_key(w, "rule");
    if (*o && strcmp(o, n) == 0)
        nnp__jw_str(w, "override");
    else if (*n)
        nnp__jw_str(w, "automatic");
    else
        nnp__jw_str(w, "marks");
    nnp__jw_key(w, "override");
    nnp__jw_str(w, o);
    nnp__jw_obj_end(w);
}

static void overlap_json(nnp_jw_t *w, const nnp_rank_data_t *d, const char *step)
{
    const nnp_svt_t *t = &d->overlap;
    long c_step = nnp__svt_col(t, "Step");
    nnp__jw_key(w, "overlap");
    if (!t->n_rows) {
        nnp__jw_null(w);
        return;
    }
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "unit");
    nnp__jw_str(w, "us");
    nnp__jw_key(w, "average");
    nnp__jw_obj_begin(w);
    for (size_t k = 0; k < NNP_N_OVERLAP; k++) {
        nnp__jw_key(w, nnp__overlap_cols[k]);
        nnp__api_num(w, d->overlap_avg[k]);
    }
    nnp__jw_obj_end(w);
    if (step) {
        for (size_t i = 0; i < t->n_rows; i++) {
            if (strcmp(nnp__svt_cell(t, i, c_step), step) != 0)
                continue;
            nnp__jw_key(w, "step");
            nnp__jw_obj_begin(w);
            for (size_t k = 0; k < NNP_N_OVERLAP; k++) {
                nnp__jw_key(w, nnp__overlap_cols[k]);
                nnp__api_cell_num(w, t, i, nnp__svt_col(t, nnp__overlap_cols[k]));
            }
            nnp__jw_obj_end(w);
            break;
        }
    }
    nnp__jw_obj_end(w);
}

int nnp__api_step_trace(const nnp_api_ctx_t *c, nnp_jw_t *w)
{
    const nnp_svt_t *t = &c->d->steps;
    const char *step = c->args->get(c->args->ctx, "step");
    long c_step = nnp__svt_col(t, "step_num");
    size_t *rows = nnp__malloc((t->n_rows ? t->n_rows : 1) * sizeof(size_t));
    size_t n, sel = SIZE_MAX, avg = nnp__api_avg_row(t);

    if (!rows)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    n = nnp__api_step_rows(t, rows, t->n_rows);
    if (step && *step && strcmp(step, "average") != 0) {
        for (size_t i = 0; i < n && sel == SIZE_MAX; i++) {
            if (strcmp(nnp__svt_cell(t, rows[i], c_step), step) == 0)
                sel = rows[i];
        }
        if (sel == SIZE_MAX) {
            nnp__free(rows);
            return nnp__fail(NNP_ENOENT, "step '%s' is not in this run's step trace", step);
        }
    }
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "rank");
    nnp__jw_int(w, c->d->rank);
    nnp__jw_key(w, "inference");
    nnp__jw_bool(w, nnp__svt_col(t, "fp") >= 0);
    nnp__jw_key(w, "n_steps");
    nnp__jw_uint(w, n);
    nnp__jw_key(w, "step_ids");
    if (n <= MAX_LISTED_STEPS) {
        nnp__jw_arr_begin(w);
        for (size_t i = 0; i < n; i++)
            nnp__jw_str(w, nnp__svt_cell(t, rows[i], c_step));
        nnp__jw_arr_end(w);
    } else {
        nnp__jw_null(w);
    }
    nnp__jw_key(w, "first_step");
    nnp__jw_str(w, n ? nnp__svt_cell(t, rows[0], c_step) : "");
    nnp__jw_key(w, "last_step");
    nnp__jw_str(w, n ? nnp__svt_cell(t, rows[n - 1], c_step) : "");
    nnp__jw_key(w, "selected");
    nnp__jw_str(w, sel == SIZE_MAX ? "average" : nnp__svt_cell(t, sel, c_step));
    if (sel != SIZE_MAX)
        write_row(w, c->d, sel, false);
    else if (avg != SIZE_MAX)
        write_row(w, c->d, avg, true);
    nnp__api_cjson(w, "summary", c->d->step_summary);
    nnp__api_raw(w, "curves", c->d->step_curves);
    nnp__jw_key(w, "points_chosen");
    nnp__jw_obj_begin(w);
    how_chosen(w, c->d, "fp", "fp_start", "fp_point");
    how_chosen(w, c->d, "bp", "bp_end", "bp_point");
    nnp__jw_obj_end(w);
    overlap_json(w, c->d, sel == SIZE_MAX ? NULL : nnp__svt_cell(t, sel, c_step));
    nnp__jw_obj_end(w);
    nnp__free(rows);
    return NNP_OK;
}
