/* op_analyse.c - nnp_op_analyse(), the seed's op_analyse and `nnprof query op`: the
 * statistics of named operators in one rank's data, as JSON text. */
#include <stdlib.h>
#include <string.h>

#include "analyse/driver.h"
#include "analyse/op_stats.h"
#include "util/json_writer.h"
#include "util/util.h"

/* Cap of the JSON text nnp_op_analyse returns (one small object per name). */
#define JSON_MEM_CAP (64u * 1024u * 1024u)

void nnp_free(void *p)
{
    nnp__free(p);
}

/* Imports the rank of device_id under path into m (-1: the lowest rank, as docs/CLI.md
 * says; the inputs come sorted by name, not by rank). */
static int import_rank(const char *path, int device_id, nnp_model_t *m)
{
    nnp_inputs_t in;
    int rc = nnp__inputs_find(path, &in), pick = -1;
    for (int i = 0; rc == NNP_OK && i < in.n; i++) {
        if (device_id >= 0 && in.v[i].device_id != device_id)
            continue;
        if (pick < 0 || in.v[i].rank < in.v[pick].rank)
            pick = i;
    }
    if (rc == NNP_OK && pick < 0)
        rc = nnp__fail(NNP_ENOENT, "no profiling data%s in '%s'",
                       device_id >= 0 ? " for that device_id" : "", path);
    if (rc == NNP_OK)
        rc = nnp__input_import(&in, pick, m);
    nnp__inputs_fini(&in);
    return rc;
}

/* A time in us with the ns the data has ("118560.544", never 118560.54399999999). */
static void jw_us(nnp_jw_t *w, int64_t ns)
{
    char b[32];
    nnp__jw_raw(w, nnp__fmt_ns_as_us(b, sizeof(b), ns));
}

int nnp_op_analyse(const char *path, const char *const *names, size_t n_names, int device_id,
                   char **json)
{
    nnp_model_t m, view;
    nnp_op_query_row_t *rows = NULL;
    size_t n_rows = 0;
    nnp_jw_t w;
    int rc;

    if (!json || !path)
        return nnp__fail(NNP_EINVAL, "nnp_op_analyse: NULL argument");
    *json = NULL;
    if (!names || n_names == 0)
        return nnp__fail(NNP_EINVAL, "For 'Profiler.op_analyse()', the parameter op_name "
                                     "cannot be \"\", '' or [].");
    memset(&view, 0, sizeof(view));
    rc = nnp__model_init(&m);
    if (rc == NNP_OK)
        rc = import_rank(path, device_id, &m);
    if (rc == NNP_OK) /* the rank's own ops, as its op statistics count them */
        rc = nnp__model_rank_view(&m, &view);
    if (rc == NNP_OK)
        rc = nnp__op_query(&view, names, n_names, &rows, &n_rows);
    if (rc == NNP_OK)
        rc = nnp__jw_init(&w, -1, false, JSON_MEM_CAP);
    if (rc == NNP_OK) {
        nnp__jw_arr_begin(&w);
        for (size_t i = 0; i < n_rows; i++) {
            nnp__jw_obj_begin(&w);
            nnp__jw_key(&w, "op_name");
            nnp__jw_str(&w, rows[i].name);
            nnp__jw_key(&w, "count");
            nnp__jw_uint(&w, rows[i].count);
            nnp__jw_key(&w, "total_time_us");
            jw_us(&w, rows[i].total_ns);
            nnp__jw_key(&w, "avg_time_us");
            jw_us(&w, rows[i].avg_ns);
            nnp__jw_key(&w, "min_time_us");
            jw_us(&w, rows[i].min_ns);
            nnp__jw_key(&w, "max_time_us");
            jw_us(&w, rows[i].max_ns);
            nnp__jw_obj_end(&w);
        }
        nnp__jw_arr_end(&w);
        rc = w.err;
        *json = nnp__jw_take(&w, NULL);
        nnp__jw_fini(&w);
        if (rc == NNP_OK && !*json)
            rc = nnp__fail(NNP_ENOMEM, "out of memory");
    }
    nnp__free(rows);
    nnp__model_view_fini(&view);
    nnp__model_fini(&m);
    return rc;
}
