/* api_dynamic_shape.c - GET /api/dynamic_shape: the Dynamic shape page, from
 * dynamic_shape_info_{rank}.json: per-op and per-type average time per step as curves
 * (downsampled, extremes kept) and, with &step=ID, every listed op's input shapes at that
 * step (the page asks when a point is clicked). */
#include <stdlib.h>
#include <string.h>

#include "server/api.h"
#include "server/downsample.h"
#include "util/util.h"

/* Writes key: {name: {"x": [step ids], "y": [us]}} for each member of obj (step -> us). */
static int curves(nnp_jw_t *w, const char *key, const cJSON *obj)
{
    const cJSON *series;
    nnp__jw_key(w, key);
    nnp__jw_obj_begin(w);
    cJSON_ArrayForEach(series, obj)
    {
        size_t n = (size_t)cJSON_GetArraySize(series), i = 0, k;
        double *x = nnp__malloc((n ? n : 1) * sizeof(double));
        double *y = nnp__malloc((n ? n : 1) * sizeof(double));
        size_t *keep = nnp__malloc((n ? n : 1) * sizeof(size_t));
        const cJSON *p;
        if (!x || !y || !keep) {
            nnp__free(x);
            nnp__free(y);
            nnp__free(keep);
            return nnp__fail(NNP_ENOMEM, "out of memory");
        }
        cJSON_ArrayForEach(p, series)
        {
            x[i] = strtod(p->string ? p->string : "", NULL);
            y[i] = cJSON_IsNumber(p) ? p->valuedouble : 0.0;
            i++;
        }
        k = nnp__downsample(y, i, NNP_CURVE_MAX_POINTS, keep);
        nnp__jw_key(w, series->string ? series->string : "");
        nnp__jw_obj_begin(w);
        nnp__jw_key(w, "x");
        nnp__jw_arr_begin(w);
        for (size_t j = 0; j < k; j++)
            nnp__jw_double(w, x[keep[j]]);
        nnp__jw_arr_end(w);
        nnp__jw_key(w, "y");
        nnp__jw_arr_begin(w);
        for (size_t j = 0; j < k; j++)
            nnp__jw_double(w, y[keep[j]]);
        nnp__jw_arr_end(w);
        nnp__jw_obj_end(w);
        nnp__free(x);
        nnp__free(y);
        nnp__free(keep);
    }
    nnp__jw_obj_end(w);
    return NNP_OK;
}

int nnp__api_dynamic_shape(const nnp_api_ctx_t *c, nnp_jw_t *w)
{
    const cJSON *info = c->d->dyn_shape;
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(info, "dynamic_ops"), *op;
    const char *step = c->args->get(c->args->ctx, "step");
    int rc = NNP_OK;

    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "rank");
    nnp__jw_int(w, c->d->rank);
    nnp__jw_key(w, "available");
    nnp__jw_bool(w, info != NULL);
    nnp__api_cjson(w, "n_dynamic_ops", cJSON_GetObjectItemCaseSensitive(info, "n_dynamic_ops"));
    nnp__jw_key(w, "ops");
    nnp__jw_arr_begin(w);
    cJSON_ArrayForEach(op, ops)
    {
        const cJSON *by_step = cJSON_GetObjectItemCaseSensitive(op, "shapes_by_step");
        nnp__jw_obj_begin(w);
        nnp__api_cjson(w, "op_name", cJSON_GetObjectItemCaseSensitive(op, "op_name"));
        nnp__api_cjson(w, "op_type", cJSON_GetObjectItemCaseSensitive(op, "op_type"));
        nnp__api_cjson(w, "n_distinct_shapes",
                       cJSON_GetObjectItemCaseSensitive(op, "n_distinct_shapes"));
        if (step)
            nnp__api_cjson(w, "shapes_at_step", cJSON_GetObjectItemCaseSensitive(by_step, step));
        nnp__jw_obj_end(w);
    }
    nnp__jw_arr_end(w);
    nnp__jw_key(w, "step");
    if (step)
        nnp__jw_str(w, step);
    else
        nnp__jw_null(w);
    if (info) {
        rc = curves(w, "op_curves", cJSON_GetObjectItemCaseSensitive(info, "op_avg_us_by_step"));
        if (rc == NNP_OK)
            rc = curves(w, "type_curves",
                        cJSON_GetObjectItemCaseSensitive(info, "op_type_avg_us_by_step"));
    }
    nnp__jw_obj_end(w);
    return rc;
}
