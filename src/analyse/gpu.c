/* gpu.c - the GPU operator files MindSpore's GPU profiler writes, for runs with device
 * activity from the CUDA back end (gpu_data_saver.cc / data_saver.cc of MindSpore, columns
 * in formats.md 1.3), and the GPU findings for the advisor:
 *   gpu_op_detail_info_{rank}.csv  per host op: occurrences, time, device (CUDA) time
 *   gpu_op_type_info_{rank}.csv    the same per op type
 *   gpu_activity_data_{rank}.csv   per kernel / copy / NCCL kernel: launch, durations
 * Kernels link to their op by correlation id (the CUDA back end gives a kernel its op's id
 * through CUPTI's external correlation). docs/OUTPUTS.md "GPU" states every rule. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "read/raw_import.h"
#include "util/csv_writer.h"

#define NS_PER_US  1000.0
#define US_DECS    3 /* us with 3 decimals: every ns shows */
#define FRAC_DECS  6 /* total_proportion: a 0-1 fraction, as MindSpore writes it */
#define PERCENT    100.0
#define DIM_TEXT   48 /* "4294967295,4294967295,4294967295" */
#define NAME_CHARS 512

static const char *const detail_cols[] = {"op_side",
                                          "op_type",
                                          "op_name",
                                          "op_full_name",
                                          "op_occurrences",
                                          "op_total_time(us)",
                                          "op_avg_time(us)",
                                          "total_proportion",
                                          "cuda_activity_cost_time(us)",
                                          "cuda_activity_call_count",
                                          NULL};
static const char *const type_cols[] = {"op_type",          "type_occurrences", "total_time(us)",
                                        "total_proportion", "avg_time(us)",     NULL};
static const char *const activity_cols[] = {"name",
                                            "type",
                                            "op_full_name",
                                            "stream_id",
                                            "block_dim",
                                            "grid_dim",
                                            "occurrences",
                                            "total_duration(us)",
                                            "avg_duration(us)",
                                            "max_duration(us)",
                                            "min_duration(us)",
                                            NULL};

bool nnp__gpu_present(const nnp_model_t *m)
{
    /* Calls count only in our own runs, where the CUDA back end records them: the calls
     * of imported traces (Kineto, torch_npu launches) feed their tools' analyses (HTA). */
    if (m->calls.t.n > 0 && m->info.source_format &&
        strcmp(m->info.source_format, NNP_RAW_SOURCE_FORMAT) == 0)
        return true;
    for (size_t i = 0; m->kernels.detail && i < m->kernels.t.n; i++) {
        if (m->kernels.detail[i].has)
            return true;
    }
    return false;
}

/* sync_enable of the run (default true, as MindSpore's). */
static bool sync_enabled(const nnp_model_t *m)
{
    cJSON *j = cJSON_Parse(m->info.options_json ? m->info.options_json : "{}");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "sync_enable");
    bool on = !cJSON_IsBool(v) || cJSON_IsTrue(v);
    cJSON_Delete(j);
    return on;
}

/* ---- gpu_op_detail_info / gpu_op_type_info ---- */

typedef struct op_row {
    uint32_t name, type;
    uint64_t count, kernels;
    int64_t total_ns, cuda_ns;
} op_row_t;

static int cmp_op_row(const void *a, const void *b)
{
    const op_row_t *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns < y->total_ns ? 1 : -1;
    return (x->name > y->name) - (x->name < y->name);
}

/* MindSpore's op type and short name from a full name 'scope/.../{type}-op{id}'. */
static void split_name(const char *full, char *type, char *name, size_t cap)
{
    const char *slash = strrchr(full, '/'), *base = slash ? slash + 1 : full;
    const char *dash = strrchr(base, '-');
    size_t n = dash ? (size_t)(dash - base) : strlen(base);
    nnp__strlcpy(name, base, cap);
    if (n >= cap)
        n = cap - 1;
    memcpy(type, base, n);
    type[n] = '\0';
}

static void us(nnp_csv_t *w, int64_t ns)
{
    nnp__csv_fixed(w, (double)ns / NS_PER_US, US_DECS);
}

static bool op_wanted(const nnp_actx_t *c, const nnp_step_spans_t *sp, int64_t start)
{
    size_t k;
    if (!c->has_steps)
        return true;
    k = nnp__step_spans_find(sp, start);
    return k != SIZE_MAX;
}

/* Aggregates the ops by full name; *rows sorted by total time, longest first. */
static int op_rows(const nnp_actx_t *c, const nnp_kindex_t *ix, const nnp_step_spans_t *sp,
                   op_row_t **rows, size_t *n_rows)
{
    const nnp_model_t *m = c->m;
    const nnp_ops_t *o = &m->ops;
    bool sync = sync_enabled(m);
    uint32_t *row_of = nnp__calloc(m->n_strs ? m->n_strs : 1, sizeof(uint32_t));
    op_row_t *v = nnp__calloc(o->t.n ? o->t.n : 1, sizeof(op_row_t));
    size_t n = 0;

    if (!row_of || !v) {
        nnp__free(row_of);
        nnp__free(v);
        return nnp__fail(NNP_ENOMEM, "out of memory for GPU op statistics");
    }
    for (size_t i = 0; i < o->t.n; i++) {
        const nnp_ktime_t *a = nnp__kindex_entry(ix, o->corr[i]);
        op_row_t *r;
        if (o->end_ns[i] == NNP_OPEN_END || !op_wanted(c, sp, o->start_ns[i]))
            continue;
        if (!row_of[o->name[i]]) {
            v[n].name = o->name[i];
            v[n].type = o->type[i];
            row_of[o->name[i]] = (uint32_t)++n;
        }
        r = &v[row_of[o->name[i]] - 1];
        r->count++;
        /* sync_enable: the op's time is its device span, as MindSpore's CUDA events around
         * the op measure it; otherwise (or with no kernel) the host time of the launch. */
        if (sync && a)
            r->total_ns += a->last_ns - a->first_ns;
        else
            r->total_ns += o->end_ns[i] - o->start_ns[i];
        if (a) {
            r->cuda_ns += a->dur_ns;
            r->kernels += a->n;
        }
    }
    nnp__free(row_of);
    qsort(v, n, sizeof(op_row_t), cmp_op_row);
    *rows = v;
    *n_rows = n;
    return NNP_OK;
}

typedef struct type_row {
    char *text; /* the op type (our copy) */
    uint64_t count;
    int64_t total_ns;
} type_row_t;

/* The op type of row r: the recorded type, else the one in the full name (MindSpore). */
static void row_type(const nnp_model_t *m, const op_row_t *r, char *type, char *shortname)
{
    split_name(nnp__model_str(m, r->name), type, shortname, NAME_CHARS);
    if (r->type)
        nnp__strlcpy(type, nnp__model_str(m, r->type), NAME_CHARS);
}

/* Per type, in first-appearance order of the time-sorted op rows. */
static int type_rows(const nnp_model_t *m, const op_row_t *v, size_t n, type_row_t **out,
                     size_t *n_out)
{
    char type[NAME_CHARS], shortname[NAME_CHARS];
    type_row_t *t = nnp__calloc(n ? n : 1, sizeof(type_row_t));
    size_t nt = 0;
    if (!t)
        return nnp__fail(NNP_ENOMEM, "out of memory for GPU op types");
    for (size_t i = 0; i < n; i++) {
        size_t k;
        row_type(m, &v[i], type, shortname);
        for (k = 0; k < nt && strcmp(t[k].text, type) != 0; k++)
            ;
        if (k == nt) {
            t[nt].text = nnp__strdup(type);
            if (!t[nt].text) {
                *out = t;
                *n_out = nt;
                return nnp__fail(NNP_ENOMEM, "out of memory for GPU op types");
            }
            nt++;
        }
        t[k].count += v[i].count;
        t[k].total_ns += v[i].total_ns;
    }
    *out = t;
    *n_out = nt;
    return NNP_OK;
}

static int write_op_files(const nnp_actx_t *c, const op_row_t *v, size_t n)
{
    const nnp_model_t *m = c->m;
    char name[64], type[NAME_CHARS], shortname[NAME_CHARS];
    int64_t all = 0;
    type_row_t *types = NULL;
    size_t n_types = 0;
    nnp_outfile_t f;
    nnp_csv_t w;
    int rc;

    for (size_t i = 0; i < n; i++)
        all += v[i].total_ns;
    snprintf(name, sizeof(name), "gpu_op_detail_info_%d.csv", c->rank);
    rc = nnp__out_open(&f, c->out_dir, name);
    if (rc == NNP_OK)
        rc = nnp__csv_init(&w, f.fd);
    if (rc == NNP_OK) {
        nnp__csv_header(&w, detail_cols);
        for (size_t i = 0; i < n; i++) {
            row_type(m, &v[i], type, shortname);
            nnp__csv_str(&w, "Device");
            nnp__csv_str(&w, type);
            nnp__csv_str(&w, shortname);
            nnp__csv_str(&w, nnp__model_str(m, v[i].name));
            nnp__csv_uint(&w, v[i].count);
            us(&w, v[i].total_ns);
            us(&w, v[i].total_ns / (int64_t)v[i].count);
            nnp__csv_fixed(&w, all ? (double)v[i].total_ns / (double)all : 0.0, FRAC_DECS);
            us(&w, v[i].cuda_ns);
            nnp__csv_uint(&w, v[i].kernels);
            nnp__csv_end_row(&w);
        }
        rc = nnp__csv_fini(&w);
    }
    rc = nnp__out_commit(&f, rc);
    if (rc == NNP_OK)
        rc = type_rows(m, v, n, &types, &n_types);

    snprintf(name, sizeof(name), "gpu_op_type_info_%d.csv", c->rank);
    if (rc == NNP_OK && (rc = nnp__out_open(&f, c->out_dir, name)) == NNP_OK) {
        rc = nnp__csv_init(&w, f.fd);
        if (rc == NNP_OK) {
            nnp__csv_header(&w, type_cols);
            for (size_t t = 0; t < n_types; t++) {
                nnp__csv_str(&w, types[t].text);
                nnp__csv_uint(&w, types[t].count);
                us(&w, types[t].total_ns);
                nnp__csv_fixed(&w, all ? (double)types[t].total_ns / (double)all : 0.0, FRAC_DECS);
                us(&w, types[t].total_ns / (int64_t)types[t].count);
                nnp__csv_end_row(&w);
            }
            rc = nnp__csv_fini(&w);
        }
        rc = nnp__out_commit(&f, rc);
    }
    for (size_t t = 0; t < n_types; t++)
        nnp__free(types[t].text);
    nnp__free(types);
    return rc;
}

/* ---- gpu_activity_data ---- */

typedef struct act_row {
    uint32_t name, type, op, stream;
    bool is_comm, has_launch;
    uint32_t grid[3], block[3];
    uint64_t count;
    int64_t total_ns, max_ns, min_ns;
} act_row_t;

typedef struct act_map {
    act_row_t *v;
    uint32_t *slots; /* open addressing: row index + 1 */
    size_t n, cap;
} act_map_t;

static uint64_t act_hash(uint32_t name, uint32_t op, uint32_t stream, bool comm)
{
    uint64_t h = (uint64_t)name * 0x9E3779B97F4A7C15ull;
    h ^= ((uint64_t)op << 32 | stream) * 0xC2B2AE3D27D4EB4Full;
    return h ^ (comm ? 0x165667B19E3779F9ull : 0) ^ (h >> 29);
}

/* Adds one execution to its (name, op, stream) row. */
static void act_add(act_map_t *am, uint32_t name, uint32_t type, uint32_t op, uint32_t stream,
                    bool comm, const nnp_kernel_detail_t *d, int64_t dur)
{
    size_t i = act_hash(name, op, stream, comm) & (am->cap - 1);
    act_row_t *r;
    for (; am->slots[i]; i = (i + 1) & (am->cap - 1)) {
        r = &am->v[am->slots[i] - 1];
        if (r->name == name && r->op == op && r->stream == stream && r->is_comm == comm)
            break;
    }
    if (!am->slots[i]) {
        r = &am->v[am->n];
        memset(r, 0, sizeof(*r));
        r->name = name;
        r->type = type;
        r->op = op;
        r->stream = stream;
        r->is_comm = comm;
        r->min_ns = dur;
        if (d && (d->has & NNP_KDETAIL_LAUNCH)) {
            r->has_launch = true;
            memcpy(r->grid, d->grid, sizeof(r->grid));
            memcpy(r->block, d->block, sizeof(r->block));
        }
        am->slots[i] = (uint32_t)++am->n;
    }
    r = &am->v[am->slots[i] - 1];
    r->count++;
    r->total_ns += dur;
    r->max_ns = dur > r->max_ns ? dur : r->max_ns;
    r->min_ns = dur < r->min_ns ? dur : r->min_ns;
}

static int cmp_act(const void *a, const void *b)
{
    const act_row_t *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns < y->total_ns ? 1 : -1;
    if (x->name != y->name)
        return (x->name > y->name) - (x->name < y->name);
    return (x->stream > y->stream) - (x->stream < y->stream);
}

static void dims(char *buf, const uint32_t *d)
{
    snprintf(buf, DIM_TEXT, "%u,%u,%u", d[0], d[1], d[2]);
}

static int write_activity(const nnp_actx_t *c, const nnp_op_index_t *oi, const nnp_step_spans_t *sp)
{
    const nnp_model_t *m = c->m;
    const nnp_kernels_t *k = &m->kernels;
    const nnp_comms_t *cm = &m->comms;
    size_t need = k->t.n + cm->t.n, cap = 16;
    uint32_t launch_type = nnp__model_find(m, "cuLaunchKernel");
    act_map_t am = {0};
    char name[64], buf[DIM_TEXT];
    nnp_outfile_t f;
    nnp_csv_t w;
    int rc;

    while (cap < need * 2)
        cap *= 2;
    am.cap = cap;
    am.v = nnp__malloc((need ? need : 1) * sizeof(act_row_t));
    am.slots = nnp__calloc(cap, sizeof(uint32_t));
    if (!am.v || !am.slots) {
        rc = nnp__fail(NNP_ENOMEM, "out of memory for GPU activities");
        goto out;
    }
    for (size_t i = 0; i < k->t.n; i++) {
        size_t op = nnp__op_index_find(oi, k->corr[i]);
        if (!op_wanted(c, sp, k->start_ns[i]))
            continue;
        act_add(&am, k->name[i], k->type[i], op == SIZE_MAX ? 0 : m->ops.name[op], k->stream_id[i],
                false, k->detail ? &k->detail[i] : NULL, k->end_ns[i] - k->start_ns[i]);
    }
    /* NCCL kernels are communication in the model; MindSpore lists them with the kernels. */
    for (size_t i = 0; i < cm->t.n; i++) {
        if (cm->end_ns[i] == NNP_OPEN_END || !op_wanted(c, sp, cm->start_ns[i]))
            continue;
        act_add(&am, cm->name[i], launch_type, 0, cm->stream_id[i], true, NULL,
                cm->end_ns[i] - cm->start_ns[i]);
    }
    qsort(am.v, am.n, sizeof(act_row_t), cmp_act);

    snprintf(name, sizeof(name), "gpu_activity_data_%d.csv", c->rank);
    rc = nnp__out_open(&f, c->out_dir, name);
    if (rc != NNP_OK)
        goto out;
    rc = nnp__csv_init(&w, f.fd);
    if (rc == NNP_OK) {
        nnp__csv_header(&w, activity_cols);
        for (size_t i = 0; i < am.n; i++) {
            const act_row_t *r = &am.v[i];
            nnp__csv_str(&w, nnp__model_str(m, r->name));
            nnp__csv_str(&w, r->type ? nnp__model_str(m, r->type) : "cuLaunchKernel");
            nnp__csv_str(&w, nnp__model_str(m, r->op));
            nnp__csv_uint(&w, r->stream);
            /* Launch dimensions for kernels, empty for copies (as MindSpore). */
            dims(buf, r->block);
            nnp__csv_str(&w, r->has_launch ? buf : "");
            dims(buf, r->grid);
            nnp__csv_str(&w, r->has_launch ? buf : "");
            nnp__csv_uint(&w, r->count);
            us(&w, r->total_ns);
            us(&w, r->total_ns / (int64_t)r->count);
            us(&w, r->max_ns);
            us(&w, r->min_ns);
            nnp__csv_end_row(&w);
        }
        rc = nnp__csv_fini(&w);
    }
    rc = nnp__out_commit(&f, rc);
out:
    nnp__free(am.v);
    nnp__free(am.slots);
    return rc;
}

/* ---- findings ---- */

static int cmp_interval(const void *a, const void *b)
{
    const nnp_interval_t *x = a, *y = b;
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

/* Device activity (kernels, copies, NCCL) merged: busy time and the span it covers. */
static int device_busy(const nnp_model_t *m, int64_t *busy, int64_t *span)
{
    size_t n = 0, total = m->kernels.t.n + m->comms.t.n;
    nnp_interval_t *v = nnp__malloc((total ? total : 1) * sizeof(nnp_interval_t));
    int64_t cur_s = 0, cur_e = 0;

    *busy = *span = 0;
    if (!v)
        return nnp__fail(NNP_ENOMEM, "out of memory merging device activity");
    for (size_t i = 0; i < m->kernels.t.n; i++)
        v[n++] = (nnp_interval_t){m->kernels.start_ns[i], m->kernels.end_ns[i]};
    for (size_t i = 0; i < m->comms.t.n; i++) {
        if (m->comms.end_ns[i] != NNP_OPEN_END)
            v[n++] = (nnp_interval_t){m->comms.start_ns[i], m->comms.end_ns[i]};
    }
    qsort(v, n, sizeof(*v), cmp_interval);
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || v[i].start_ns > cur_e) {
            *busy += cur_e - cur_s;
            cur_s = v[i].start_ns;
            cur_e = v[i].end_ns;
        } else if (v[i].end_ns > cur_e) {
            cur_e = v[i].end_ns;
        }
        if (v[i].end_ns - v[0].start_ns > *span)
            *span = v[i].end_ns - v[0].start_ns;
    }
    if (n)
        *busy += cur_e - cur_s;
    nnp__free(v);
    return NNP_OK;
}

/* The start of the first device work each call queued (kernels.launch == calls.launch),
 * INT64_MAX for a call with none; an owned array of calls.t.n, NULL when out of memory. */
static int64_t *first_work_of_calls(const nnp_model_t *m)
{
    const nnp_kernels_t *k = &m->kernels;
    nnp_launch_index_t lx;
    int64_t *first = nnp__malloc((m->calls.t.n ? m->calls.t.n : 1) * sizeof(int64_t));
    if (!first || nnp__launch_index_build(m, &lx) != NNP_OK) {
        nnp__free(first);
        return NULL;
    }
    for (size_t i = 0; i < m->calls.t.n; i++)
        first[i] = INT64_MAX;
    for (size_t i = 0; i < k->t.n; i++) {
        size_t l = nnp__launch_index_find(&lx, k->launch[i]);
        if (l != SIZE_MAX && k->start_ns[i] < first[l])
            first[l] = k->start_ns[i];
    }
    nnp__launch_index_fini(&lx);
    return first;
}

static void gpu_findings(const nnp_model_t *m, const nnp_kindex_t *ix, nnp_findings_t *f)
{
    const nnp_calls_t *cl = &m->calls;
    const nnp_kernels_t *k = &m->kernels;
    int64_t busy, span, sync_ns = 0, delay_ns = 0, *first = first_work_of_calls(m);
    uint64_t n_delay = 0;

    if (device_busy(m, &busy, &span) == NNP_OK && span > 0)
        f->gpu_busy_pct = (double)busy * PERCENT / (double)span;
    for (size_t i = 0; i < cl->t.n; i++) {
        const nnp_ktime_t *a;
        if (cl->kind[i] == NNP_CALL_SYNC) {
            sync_ns += cl->end_ns[i] - cl->start_ns[i];
            continue;
        }
        /* Launch delay: a call and the first device work it queued. With launch ids (the
         * call's own CUPTI correlation id on both, model.h) every launch counts, in an op
         * or not; a call without one (raw files before them) counts when its corr is its
         * own CUPTI id (the tag: one call per id, not an op's shared by many). */
        if (cl->launch[i]) {
            if (!first || first[i] == INT64_MAX)
                continue;
            delay_ns += first[i] - cl->start_ns[i];
            n_delay++;
            continue;
        }
        if (!(cl->corr[i] >> 63) || !(a = nnp__kindex_entry(ix, cl->corr[i])))
            continue;
        delay_ns += a->first_ns - cl->start_ns[i];
        n_delay++;
    }
    nnp__free(first);
    if (n_delay)
        f->gpu_launch_delay_us = (double)delay_ns / (double)n_delay / NS_PER_US;
    if (span > 0)
        f->gpu_sync_pct = (double)sync_ns * PERCENT / (double)span;
    for (size_t i = 0; k->detail && i < k->t.n; i++) {
        const nnp_kernel_detail_t *d = &k->detail[i];
        if (!(d->has & NNP_KDETAIL_COPY))
            continue;
        if ((d->copy_kind == NNP_COPY_HTOD && d->src_kind == NNP_MEMORY_PAGEABLE) ||
            (d->copy_kind == NNP_COPY_DTOH && d->dst_kind == NNP_MEMORY_PAGEABLE)) {
            f->gpu_pageable_copies++;
            f->gpu_pageable_bytes += d->bytes;
        }
    }
    for (size_t i = 0; i < m->counters.t.n; i++) {
        if (strcmp(nnp__model_str(m, m->counters.name[i]), "cupti_dropped_records") == 0)
            f->gpu_dropped_records = (uint64_t)m->counters.value[i];
    }
}

int nnp__gpu_write(const nnp_actx_t *c, const nnp_step_trace_t *st, nnp_findings_t *f)
{
    nnp_kindex_t ix = {0};
    nnp_op_index_t oi = {0};
    nnp_step_spans_t sp;
    op_row_t *rows = NULL;
    size_t n_rows = 0;
    int rc;

    if (!nnp__gpu_present(c->m))
        return NNP_OK;
    rc = nnp__step_spans_init(st, &sp);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__kindex_build(c->m, &ix);
    if (rc == NNP_OK)
        rc = nnp__op_index_build(c->m, &oi);
    if (rc == NNP_OK)
        rc = op_rows(c, &ix, &sp, &rows, &n_rows);
    if (rc == NNP_OK)
        rc = write_op_files(c, rows, n_rows);
    if (rc == NNP_OK)
        rc = write_activity(c, &oi, &sp);
    if (rc == NNP_OK)
        gpu_findings(c->m, &ix, f);
    if (rc == NNP_OK && f->gpu_dropped_records)
        NNP_LOG_W("rank %d: CUPTI dropped %llu activity records during the run: the GPU "
                  "files undercount",
                  c->rank, (unsigned long long)f->gpu_dropped_records);
    nnp__free(rows);
    nnp__kindex_fini(&ix);
    nnp__op_index_fini(&oi);
    nnp__step_spans_fini(&sp);
    return rc;
}
