/* op_analyse.c - nnp_op_analyse(), the seed's op_analyse and `nnprof query op`: the
 * statistics of named operators in one rank's data, as JSON text. */
#include <stdlib.h>
#include <string.h>

#include "analyse/driver.h"
#include "analyse/op_stats.h"
#include "read/raw_import.h"
#include "util/json_writer.h"
#include "util/util.h"

/* Cap of the JSON text nnp_op_analyse returns (one small object per name). */
#define JSON_MEM_CAP (64u * 1024u * 1024u)

void nnp_free(void *p)
{
    nnp__free(p);
}

/* The raw directory of device_id under path (-1: the first one found). */
static int pick_raw_dir(const char *path, int device_id, char *out, size_t cap)
{
    nnp_input_t *v = nnp__calloc(NNP_MAX_INPUTS, sizeof(nnp_input_t));
    int n = 0, rc;
    if (!v)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    rc = nnp__find_inputs(path, v, &n);
    for (int i = 0; rc == NNP_OK && i < n; i++) {
        if (v[i].kind != NNP_INPUT_RAW)
            continue;
        if (device_id >= 0) {
            /* Only info.json is needed: import nothing else. */
            int dev = -1;
            char info[NNP_PATH_MAX], *text = NULL;
            if (nnp__path_join(info, sizeof(info), v[i].path, "info.json") == NNP_OK &&
                nnp__read_file(info, 1u << 20, &text, NULL) == NNP_OK) {
                const char *k = strstr(text, "\"device_id\":");
                if (k)
                    dev = (int)strtol(k + strlen("\"device_id\":"), NULL, 10);
                nnp__free(text);
            }
            if (dev != device_id)
                continue;
        }
        nnp__strlcpy(out, v[i].path, cap);
        nnp__free(v);
        return NNP_OK;
    }
    nnp__free(v);
    if (rc != NNP_OK)
        return rc;
    return nnp__fail(NNP_ENOENT, "no profiling data%s in '%s'",
                     device_id >= 0 ? " for that device_id" : "", path);
}

int nnp_op_analyse(const char *path, const char *const *names, size_t n_names, int device_id,
                   char **json)
{
    char raw[NNP_PATH_MAX];
    nnp_model_t m;
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
    rc = pick_raw_dir(path, device_id, raw, sizeof(raw));
    if (rc != NNP_OK)
        return rc;
    rc = nnp__model_init(&m);
    if (rc == NNP_OK)
        rc = nnp__import_raw(raw, &m);
    if (rc == NNP_OK)
        rc = nnp__op_query(&m, names, n_names, &rows, &n_rows);
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
            nnp__jw_double(&w, (double)rows[i].total_ns / 1e3);
            nnp__jw_key(&w, "avg_time_us");
            nnp__jw_double(&w, (double)rows[i].avg_ns / 1e3);
            nnp__jw_key(&w, "min_time_us");
            nnp__jw_double(&w, (double)rows[i].min_ns / 1e3);
            nnp__jw_key(&w, "max_time_us");
            nnp__jw_double(&w, (double)rows[i].max_ns / 1e3);
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
    nnp__model_fini(&m);
    return rc;
}
