/* api_data_prep.c - GET /api/data_prep: the Data preparation page. The iteration-gap tab
 * (device and host queue size per step, empty and full counts: minddata_step_queue_{rank}
 * .csv and the pipeline summary) and the pipeline tab (the op graph with each queue's
 * average usage and the bottleneck: minddata_pipeline_summary_{rank}.json, queue lengths
 * from minddata_pipeline_raw_{rank}.csv); &queue=OP_ID adds that op's queue size over its
 * samples, downsampled. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/api.h"
#include "server/downsample.h"
#include "util/util.h"

/* The sizes list of output_queue_size ("[0, 1, 0]", possibly ending ", ...]"). */
static size_t parse_sizes(const char *s, double **out)
{
    size_t n = 0, cap = 0;
    double *v = NULL;
    if (*s == '[')
        s++;
    for (;;) {
        char *end;
        long long x;
        while (*s == ' ' || *s == ',')
            s++;
        errno = 0;
        x = strtoll(s, &end, 10);
        if (end == s || errno)
            break;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 256;
            double *p = nnp__realloc(v, ncap * sizeof(double));
            if (!p)
                break;
            v = p;
            cap = ncap;
        }
        v[n++] = (double)x;
        s = end;
    }
    *out = v;
    return n;
}

static int queue_json(nnp_jw_t *w, const nnp_rank_data_t *d, long long op_id)
{
    const nnp_svt_t *t = &d->pipe_raw;
    long c_id = nnp__svt_col(t, "op_id"), c_sizes = nnp__svt_col(t, "output_queue_size");
    char id[32];
    double *v = NULL;
    size_t *keep, n = 0, k;

    snprintf(id, sizeof(id), "%lld", op_id);
    for (size_t i = 0; i < t->n_rows; i++) {
        if (strcmp(nnp__svt_cell(t, i, c_id), id) != 0)
            continue;
        n = parse_sizes(nnp__svt_cell(t, i, c_sizes), &v);
        nnp__jw_key(w, "queue");
        nnp__jw_obj_begin(w);
        nnp__jw_key(w, "op_id");
        nnp__jw_int(w, op_id);
        nnp__jw_key(w, "samples");
        nnp__jw_uint(w, n);
        nnp__jw_key(w, "length");
        nnp__api_cell_num(w, t, i, nnp__svt_col(t, "output_queue_length"));
        nnp__jw_key(w, "sample_interval_ms");
        nnp__api_cell_num(w, t, i, nnp__svt_col(t, "sample_interval"));
        keep = nnp__malloc((n ? n : 1) * sizeof(size_t));
        if (!keep) {
            nnp__free(v);
            return nnp__fail(NNP_ENOMEM, "out of memory");
        }
        k = nnp__downsample(v, n, NNP_CURVE_MAX_POINTS, keep);
        nnp__jw_key(w, "downsampled");
        nnp__jw_bool(w, k < n);
        nnp__jw_key(w, "x");
        nnp__jw_arr_begin(w);
        for (size_t j = 0; j < k; j++)
            nnp__jw_uint(w, keep[j]);
        nnp__jw_arr_end(w);
        nnp__jw_key(w, "size");
        nnp__jw_arr_begin(w);
        for (size_t j = 0; j < k; j++)
            nnp__jw_double(w, v[keep[j]]);
        nnp__jw_arr_end(w);
        nnp__jw_obj_end(w);
        nnp__free(keep);
        nnp__free(v);
        return NNP_OK;
    }
    return nnp__fail(NNP_ENOENT, "no pipeline op %lld in this run", op_id);
}

static void queue_counts(nnp_jw_t *w, const nnp_svt_t *q, const char *size_col, const char *cap_col)
{
    long c_s = nnp__svt_col(q, size_col), c_c = nnp__svt_col(q, cap_col);
    size_t samples = 0, empty = 0, full = 0;
    for (size_t i = 0; i < q->n_rows; i++) {
        double s = nnp__svt_num(q, i, c_s), cap = nnp__svt_num(q, i, c_c);
        if (s != s)
            continue;
        samples++;
        empty += s == 0;
        full += cap > 0 && s >= cap;
    }
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "steps");
    nnp__jw_uint(w, samples);
    nnp__jw_key(w, "empty");
    nnp__jw_uint(w, empty);
    nnp__jw_key(w, "full");
    nnp__jw_uint(w, full);
    nnp__jw_obj_end(w);
}

int nnp__api_data_prep(const nnp_api_ctx_t *c, nnp_jw_t *w)
{
    const nnp_rank_data_t *d = c->d;
    const nnp_svt_t *q = &d->queue_steps, *raw = &d->pipe_raw;
    long long queue;
    int rc = nnp__api_int_arg(c->args, "queue", INT64_MIN, INT64_MIN + 1, INT64_MAX, &queue);

    if (rc != NNP_OK)
        return rc;
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "rank");
    nnp__jw_int(w, d->rank);
    nnp__jw_key(w, "available");
    nnp__jw_bool(w, d->pipe_summary != NULL || q->n_rows > 0);
    nnp__jw_key(w, "iteration_gap");
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "available");
    nnp__jw_bool(w, q->n_rows > 0);
    nnp__api_raw(w, "per_step", d->queue_curves);
    nnp__jw_key(w, "device_queue");
    queue_counts(w, q, "device_queue_size", "device_queue_capacity");
    nnp__jw_key(w, "host_queue");
    queue_counts(w, q, "host_queue_size", "host_queue_capacity");
    nnp__jw_obj_end(w);
    nnp__api_cjson(w, "pipeline", d->pipe_summary);
    nnp__jw_key(w, "queue_lengths");
    nnp__jw_obj_begin(w);
    for (size_t i = 0; i < raw->n_rows; i++) {
        nnp__jw_key(w, nnp__svt_cell(raw, i, nnp__svt_col(raw, "op_id")));
        nnp__api_cell_num(w, raw, i, nnp__svt_col(raw, "output_queue_length"));
    }
    nnp__jw_obj_end(w);
    if (rc == NNP_OK && queue != INT64_MIN)
        rc = queue_json(w, d, queue);
    nnp__jw_obj_end(w);
    return rc;
}
