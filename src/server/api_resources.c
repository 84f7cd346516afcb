/* api_resources.c - GET /api/resources: the Resources page. CPU utilisation (machine,
 * process, per data op: minddata_cpu_utilization_{rank}.json, downsampled), tensor memory
 * (capacity, peak, the usage line over execution order with the FP/BP marks of the steps,
 * memory_usage_*_{rank}.json; &at=T_US adds the live tensors at that time, from
 * operator_memory_{rank}.csv) and host memory (host_info/host_memory_{rank}.csv). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "server/api.h"
#include "server/downsample.h"
#include "util/util.h"

/* Live tensors listed at a point at most (the rest are summed up), and FP/BP marks. */
#define MAX_BREAKDOWN 200
#define MAX_MARKS     100
#define US_PER_MS     1000.0

static const char *const dev_keys[] = {"user_utilization",  "sys_utilization",
                                       "io_utilization",    "idle_utilization",
                                       "runable_processes", "context_switch_count"};
static const char *const proc_keys[] = {"user_utilization", "sys_utilization"};

static void arr_at(nnp_jw_t *w, const cJSON *arr, const size_t *keep, size_t k)
{
    nnp__jw_arr_begin(w);
    for (size_t i = 0; i < k; i++) {
        const cJSON *v = cJSON_GetArrayItem(arr, (int)keep[i]);
        nnp__api_num(w, cJSON_IsNumber(v) ? v->valuedouble : NAN);
    }
    nnp__jw_arr_end(w);
}

static void metric_obj(nnp_jw_t *w, const char *key, const cJSON *obj, const char *const *keys,
                       size_t n_keys, const size_t *keep, size_t k)
{
    nnp__jw_key(w, key);
    nnp__jw_obj_begin(w);
    for (size_t i = 0; i < n_keys; i++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, keys[i]);
        if (!cJSON_IsArray(a))
            continue;
        nnp__jw_key(w, keys[i]);
        arr_at(w, a, keep, k);
    }
    nnp__jw_obj_end(w);
}

static int cpu_json(nnp_jw_t *w, const cJSON *cpu)
{
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(cpu, "time_stamp");
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(cpu, "device_info");
    const cJSON *proc = cJSON_GetObjectItemCaseSensitive(cpu, "process_info");
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(cpu, "op_info"), *op;
    size_t n = (size_t)cJSON_GetArraySize(ts), k, used = 0;
    double *ys[NNP_ARRAY_LEN(dev_keys) + NNP_ARRAY_LEN(proc_keys)] = {0};
    size_t *keep = nnp__malloc((n ? n : 1) * sizeof(size_t));
    int rc = NNP_OK;

    if (!keep)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    for (size_t s = 0; s < NNP_ARRAY_LEN(ys); s++) {
        const cJSON *obj = s < NNP_ARRAY_LEN(dev_keys) ? dev : proc;
        const char *name =
            s < NNP_ARRAY_LEN(dev_keys) ? dev_keys[s] : proc_keys[s - NNP_ARRAY_LEN(dev_keys)];
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, name);
        if (!cJSON_IsArray(a))
            continue;
        ys[used] = nnp__malloc((n ? n : 1) * sizeof(double));
        if (!ys[used]) {
            rc = nnp__fail(NNP_ENOMEM, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < n; i++) {
            const cJSON *v = cJSON_GetArrayItem(a, (int)i);
            ys[used][i] = cJSON_IsNumber(v) ? v->valuedouble : NAN;
        }
        used++;
    }
    k = nnp__downsample_multi((const double *const *)ys, used, n, NNP_CURVE_MAX_POINTS, keep);
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "available");
    nnp__jw_bool(w, true);
    nnp__api_cjson(w, "sampling_interval",
                   cJSON_GetObjectItemCaseSensitive(cpu, "sampling_interval"));
    nnp__api_cjson(w, "cpu_processor_num",
                   cJSON_GetObjectItemCaseSensitive(cpu, "cpu_processor_num"));
    nnp__jw_key(w, "points");
    nnp__jw_uint(w, n);
    nnp__jw_key(w, "time_stamp");
    arr_at(w, ts, keep, k);
    metric_obj(w, "device_info", dev, dev_keys, NNP_ARRAY_LEN(dev_keys), keep, k);
    metric_obj(w, "process_info", proc, proc_keys, NNP_ARRAY_LEN(proc_keys), keep, k);
    nnp__jw_key(w, "op_info");
    nnp__jw_arr_begin(w);
    cJSON_ArrayForEach(op, ops)
    {
        nnp__jw_obj_begin(w);
        nnp__api_cjson(w, "op_id", cJSON_GetObjectItemCaseSensitive(op, "op_id"));
        metric_obj(w, "metrics", cJSON_GetObjectItemCaseSensitive(op, "metrics"), proc_keys,
                   NNP_ARRAY_LEN(proc_keys), keep, k);
        nnp__jw_obj_end(w);
    }
    nnp__jw_arr_end(w);
    nnp__api_cjson(w, "average", cJSON_GetObjectItemCaseSensitive(cpu, "average"));
    nnp__jw_obj_end(w);
out:
    for (size_t s = 0; s < used; s++)
        nnp__free(ys[s]);
    nnp__free(keep);
    return rc;
}

/* op_index of the last line point at or before t_us (0 before the first). */
static double index_at(const cJSON *lines, double t_us)
{
    int lo = 0, hi = cJSON_GetArraySize(lines);
    const cJSON *p, *oi;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(lines, mid), "t");
        if (cJSON_IsNumber(t) && t->valuedouble <= t_us)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return 0;
    p = cJSON_GetArrayItem(lines, lo - 1);
    oi = cJSON_GetObjectItemCaseSensitive(p, "op_index");
    return cJSON_IsNumber(oi) ? oi->valuedouble : 0;
}

/* FP and BP of each step (up to MAX_MARKS) as execution-order positions on the line. */
static void marks_json(nnp_jw_t *w, const nnp_rank_data_t *d, const cJSON *lines)
{
    const nnp_svt_t *t = &d->steps;
    long c_step = nnp__svt_col(t, "step_num"), c_fp = nnp__svt_col(t, "fp_point");
    long c_bp = nnp__svt_col(t, "bp_point");
    size_t n = 0;
    nnp__jw_key(w, "marks");
    nnp__jw_arr_begin(w);
    for (size_t i = 0; i < t->n_rows && n < MAX_MARKS; i++) {
        double fp = nnp__svt_num(t, i, c_fp), bp = nnp__svt_num(t, i, c_bp);
        if (strcmp(nnp__svt_cell(t, i, c_step), "-") == 0)
            continue;
        n++;
        nnp__jw_obj_begin(w);
        nnp__jw_key(w, "step");
        nnp__jw_str(w, nnp__svt_cell(t, i, c_step));
        nnp__jw_key(w, "fp");
        nnp__api_num(w, isnan(fp) ? NAN : index_at(lines, fp * US_PER_MS));
        nnp__jw_key(w, "bp");
        nnp__api_num(w, isnan(bp) ? NAN : index_at(lines, bp * US_PER_MS));
        nnp__jw_obj_end(w);
    }
    nnp__jw_arr_end(w);
}

static const nnp_mem_tensor_t *sort_base;

static int cmp_size_desc(const void *a, const void *b)
{
    double x = sort_base[*(const size_t *)a].size_kb, y = sort_base[*(const size_t *)b].size_kb;
    return (x < y) - (x > y);
}

static pthread_mutex_t sort_mu = PTHREAD_MUTEX_INITIALIZER;

/* Tensors live at t (allocated at or before it, freed after it), largest first. */
static int breakdown_json(nnp_jw_t *w, const nnp_rank_data_t *d, double t_us)
{
    int64_t t = (int64_t)llround(t_us * 1000.0);
    size_t *live = nnp__malloc((d->n_tensors ? d->n_tensors : 1) * sizeof(size_t));
    size_t n = 0;
    double total = 0, others = 0;
    if (!live)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    for (size_t i = 0; i < d->n_tensors; i++) {
        if (d->tensors[i].alloc_ns <= t && t < d->tensors[i].free_ns) {
            live[n++] = i;
            total += d->tensors[i].size_kb;
        }
    }
    pthread_mutex_lock(&sort_mu);
    sort_base = d->tensors;
    qsort(live, n, sizeof(size_t), cmp_size_desc);
    pthread_mutex_unlock(&sort_mu);
    nnp__jw_key(w, "breakdown");
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "t");
    nnp__jw_double(w, t_us);
    nnp__jw_key(w, "live_tensors");
    nnp__jw_uint(w, n);
    nnp__jw_key(w, "live_kb");
    nnp__jw_double(w, total);
    nnp__jw_key(w, "tensors");
    nnp__jw_arr_begin(w);
    for (size_t i = 0; i < n; i++) {
        const nnp_mem_tensor_t *x = &d->tensors[live[i]];
        if (i >= MAX_BREAKDOWN) {
            others += x->size_kb;
            continue;
        }
        nnp__jw_obj_begin(w);
        nnp__jw_key(w, "name");
        nnp__jw_str(w, x->name);
        nnp__jw_key(w, "size_kb");
        nnp__jw_double(w, x->size_kb);
        nnp__jw_key(w, "alloc_us");
        nnp__jw_double(w, (double)x->alloc_ns / 1000.0);
        nnp__jw_key(w, "free_us");
        nnp__api_num(w, x->free_ns == INT64_MAX ? NAN : (double)x->free_ns / 1000.0);
        nnp__jw_obj_end(w);
    }
    nnp__jw_arr_end(w);
    nnp__jw_key(w, "others_count");
    nnp__jw_uint(w, n > MAX_BREAKDOWN ? n - MAX_BREAKDOWN : 0);
    nnp__jw_key(w, "others_kb");
    nnp__jw_double(w, others);
    nnp__jw_obj_end(w);
    nnp__free(live);
    return NNP_OK;
}

static int host_memory_json(nnp_jw_t *w, const nnp_svt_t *t)
{
    long c_t = nnp__svt_col(t, "time_stamp(us)"), c_m = nnp__svt_col(t, "memory_usage(kB)");
    double *y = nnp__malloc((t->n_rows ? t->n_rows : 1) * sizeof(double));
    size_t *keep = nnp__malloc((t->n_rows ? t->n_rows : 1) * sizeof(size_t)), k;
    if (!y || !keep) {
        nnp__free(y);
        nnp__free(keep);
        return nnp__fail(NNP_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < t->n_rows; i++)
        y[i] = nnp__svt_num(t, i, c_m);
    k = nnp__downsample(y, t->n_rows, NNP_CURVE_MAX_POINTS, keep);
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "available");
    nnp__jw_bool(w, t->n_rows > 0);
    nnp__jw_key(w, "points");
    nnp__jw_uint(w, t->n_rows);
    nnp__jw_key(w, "time_us");
    nnp__jw_arr_begin(w);
    for (size_t i = 0; i < k; i++)
        nnp__api_cell_num(w, t, keep[i], c_t);
    nnp__jw_arr_end(w);
    nnp__jw_key(w, "kb");
    nnp__jw_arr_begin(w);
    for (size_t i = 0; i < k; i++)
        nnp__api_cell_num(w, t, keep[i], c_m);
    nnp__jw_arr_end(w);
    nnp__jw_obj_end(w);
    nnp__free(y);
    nnp__free(keep);
    return NNP_OK;
}

int nnp__api_resources(const nnp_api_ctx_t *c, nnp_jw_t *w)
{
    const nnp_rank_data_t *d = c->d;
    const char *at = c->args->get(c->args->ctx, "at");
    const cJSON *lines = cJSON_GetObjectItemCaseSensitive(d->mem_details, "lines");
    double at_us = NAN;
    int rc = NNP_OK;

    if (at) {
        char *end;
        at_us = strtod(at, &end);
        if (!*at || *end || !isfinite(at_us))
            return nnp__fail(NNP_EINVAL, "'%s' is not a time in us (at)", at);
    }
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "rank");
    nnp__jw_int(w, d->rank);
    nnp__jw_key(w, "cpu");
    if (d->cpu)
        rc = cpu_json(w, d->cpu);
    else
        nnp__jw_null(w);
    nnp__jw_key(w, "memory");
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "available");
    nnp__jw_bool(w, d->mem_summary != NULL);
    nnp__api_cjson(w, "summary", d->mem_summary);
    nnp__api_cjson(w, "lines", lines);
    nnp__api_cjson(w, "peak", cJSON_GetObjectItemCaseSensitive(d->mem_details, "peak"));
    if (lines)
        marks_json(w, d, lines);
    if (rc == NNP_OK && !isnan(at_us))
        rc = breakdown_json(w, d, at_us);
    nnp__jw_obj_end(w);
    nnp__jw_key(w, "host_memory");
    if (rc == NNP_OK)
        rc = host_memory_json(w, &d->host_mem);
    nnp__jw_obj_end(w);
    return rc;
}
