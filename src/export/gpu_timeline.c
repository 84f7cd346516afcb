/* gpu_timeline.c - MindSpore's GPU timeline for runs with CUDA activity:
 * gpu_timeline_display_{rank}.json, a Chrome-trace array as MindSpore's GpuTimelineGenerator
 * writes it (checked against MindInsight's gpu_timeline_display_0.json): host ops on tid
 * "Ops", device activity on a tid per stream ("7"), pid the device id, ts/dur in us, ts on
 * the wall clock; activities carry args {type, op_full_name, block_dim, grid_dim} (and what
 * we know beyond: bytes and copy kinds, NCCL kind and size); CUDA calls and
 * synchronizations on a track per calling thread ("CUDA API <tid>"). Writing stops at
 * timeline_limit (MB) and says so. gpu_timeline_summary_{rank}.json sums it up. The full
 * nnprof timeline (trace_view.json, a track per stream, flows) is chrome_trace.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "util/json_writer.h"

#define NS_PER_US 1000
#define NS_PER_MS 1000000.0
#define NUM_TEXT  32
#define DIM_TEXT  48

typedef struct gtl {
    const nnp_actx_t *c;
    const nnp_model_t *m;
    nnp_jw_t w;
    int64_t wall_ns; /* added to monotonic ns for the wall clock */
    uint64_t written, omitted;
    nnp_op_index_t oi;
} gtl_t;

/* ns as us with three decimals, from integers (every ns kept, no rounding). */
static void key_us(gtl_t *g, const char *key, int64_t ns)
{
    char buf[NUM_TEXT];
    int64_t a = ns < 0 ? -ns : ns;
    snprintf(buf, sizeof(buf), "%s%lld.%03lld", ns < 0 ? "-" : "", (long long)(a / NS_PER_US),
             (long long)(a % NS_PER_US));
    nnp__jw_key(&g->w, key);
    nnp__jw_raw(&g->w, buf);
}

static void key_str(gtl_t *g, const char *key, const char *s)
{
    nnp__jw_key(&g->w, key);
    nnp__jw_str(&g->w, s);
}

static void key_uint(gtl_t *g, const char *key, uint64_t v)
{
    nnp__jw_key(&g->w, key);
    nnp__jw_uint(&g->w, v);
}

/* True while the file stays under timeline_limit; past it events are only counted. */
static bool room(gtl_t *g)
{
    g->written = nnp__jw_bytes(&g->w);
    if (g->c->timeline_limit_bytes && g->written >= g->c->timeline_limit_bytes) {
        g->omitted++;
        return false;
    }
    return true;
}

static void head(gtl_t *g, const char *name, const char *tid, uint32_t pid, int64_t s, int64_t e)
{
    nnp__jw_obj_begin(&g->w);
    key_str(g, "name", name);
    key_str(g, "ph", "X");
    key_str(g, "tid", tid);
    key_us(g, "ts", s + g->wall_ns);
    key_us(g, "dur", e - s);
    nnp__jw_key(&g->w, "pid");
    nnp__jw_uint(&g->w, pid);
}

static void emit_op(gtl_t *g, size_t i)
{
    const nnp_ops_t *o = &g->m->ops;
    if (o->end_ns[i] == NNP_OPEN_END || !room(g))
        return;
    head(g, nnp__model_str(g->m, o->name[i]), "Ops", (uint32_t)g->m->info.device_id, o->start_ns[i],
         o->end_ns[i]);
    nnp__jw_obj_end(&g->w);
}

static void emit_kernel(gtl_t *g, size_t i)
{
    const nnp_kernels_t *k = &g->m->kernels;
    const nnp_kernel_detail_t *d = k->detail ? &k->detail[i] : NULL;
    size_t op = nnp__op_index_find(&g->oi, k->corr[i]);
    char tid[NUM_TEXT], dim[DIM_TEXT];

    if (!room(g))
        return;
    snprintf(tid, sizeof(tid), "%u", k->stream_id[i]);
    head(g, nnp__model_str(g->m, k->name[i]), tid, k->device_id[i], k->start_ns[i], k->end_ns[i]);
    nnp__jw_key(&g->w, "args");
    nnp__jw_obj_begin(&g->w);
    key_str(g, "type", nnp__model_str(g->m, k->type[i]));
    key_str(g, "op_full_name", op == SIZE_MAX ? "" : nnp__model_str(g->m, g->m->ops.name[op]));
    if (d && (d->has & NNP_KDETAIL_LAUNCH)) {
        snprintf(dim, sizeof(dim), "%u,%u,%u", d->block[0], d->block[1], d->block[2]);
        key_str(g, "block_dim", dim);
        snprintf(dim, sizeof(dim), "%u,%u,%u", d->grid[0], d->grid[1], d->grid[2]);
        key_str(g, "grid_dim", dim);
        key_uint(g, "registers_per_thread", d->registers);
        key_uint(g, "shared_memory_bytes", (uint64_t)d->static_shared + d->dynamic_shared);
    } else {
        key_str(g, "block_dim", "");
        key_str(g, "grid_dim", "");
    }
    if (d && (d->has & NNP_KDETAIL_COPY)) {
        key_uint(g, "bytes", d->bytes);
        key_str(g, "copy_kind", nnp_copy_kind_name((nnp_copy_kind_t)d->copy_kind));
        key_str(g, "src_kind", nnp_memory_kind_name((nnp_memory_kind_t)d->src_kind));
        key_str(g, "dst_kind", nnp_memory_kind_name((nnp_memory_kind_t)d->dst_kind));
    }
    nnp__jw_obj_end(&g->w);
    nnp__jw_obj_end(&g->w);
}

static void emit_comm(gtl_t *g, size_t i)
{
    const nnp_comms_t *cm = &g->m->comms;
    char tid[NUM_TEXT];
    if (cm->end_ns[i] == NNP_OPEN_END || !room(g))
        return;
    snprintf(tid, sizeof(tid), "%u", cm->stream_id[i]);
    head(g, nnp__model_str(g->m, cm->name[i]), tid, (uint32_t)g->m->info.device_id, cm->start_ns[i],
         cm->end_ns[i]);
    nnp__jw_key(&g->w, "args");
    nnp__jw_obj_begin(&g->w);
    key_str(g, "type", "cuLaunchKernel");
    key_str(g, "op_full_name", "");
    key_str(g, "block_dim", "");
    key_str(g, "grid_dim", "");
    key_str(g, "comm_kind", nnp_comm_kind_name((nnp_comm_kind_t)cm->kind[i]));
    key_uint(g, "bytes", cm->bytes[i]);
    key_str(g, "group", nnp__model_str(g->m, cm->group[i]));
    nnp__jw_obj_end(&g->w);
    nnp__jw_obj_end(&g->w);
}

/* A CUDA call or synchronization, on a track per calling thread ("CUDA API <tid>"), after
 * MindSpore's keys: what the host did while the device ran (launches, blocking waits). */
static void emit_call(gtl_t *g, size_t i)
{
    const nnp_calls_t *cl = &g->m->calls;
    char tid[NUM_TEXT];
    if (!room(g))
        return;
    snprintf(tid, sizeof(tid), "CUDA API %llu",
             (unsigned long long)g->m->threads.tid[cl->thread[i]]);
    head(g, nnp__model_str(g->m, cl->name[i]), tid, (uint32_t)g->m->info.device_id, cl->start_ns[i],
         cl->end_ns[i]);
    nnp__jw_key(&g->w, "args");
    nnp__jw_obj_begin(&g->w);
    key_str(g, "type", nnp_call_kind_name((nnp_call_kind_t)cl->kind[i]));
    if (cl->kind[i] == NNP_CALL_SYNC)
        key_uint(g, "stream_id", cl->stream_id[i]);
    nnp__jw_obj_end(&g->w);
    nnp__jw_obj_end(&g->w);
}

/* Ops, kernels, communication and calls are each sorted by start: one merge, in time. */
static void emit_all(gtl_t *g)
{
    const nnp_model_t *m = g->m;
    size_t io = 0, ik = 0, ic = 0, ia = 0;
    for (;;) {
        int64_t to = io < m->ops.t.n ? m->ops.start_ns[io] : INT64_MAX;
        int64_t tk = ik < m->kernels.t.n ? m->kernels.start_ns[ik] : INT64_MAX;
        int64_t tc = ic < m->comms.t.n ? m->comms.start_ns[ic] : INT64_MAX;
        int64_t ta = ia < m->calls.t.n ? m->calls.start_ns[ia] : INT64_MAX;
        if (to == INT64_MAX && tk == INT64_MAX && tc == INT64_MAX && ta == INT64_MAX)
            break;
        if (to <= tk && to <= tc && to <= ta)
            emit_op(g, io++);
        else if (tk <= tc && tk <= ta)
            emit_kernel(g, ik++);
        else if (tc <= ta)
            emit_comm(g, ic++);
        else
            emit_call(g, ia++);
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Distinct (device, stream) pairs with device activity. */
static uint64_t count_streams(const nnp_model_t *m)
{
    size_t n = 0, total = m->kernels.t.n + m->comms.t.n;
    uint64_t *v = nnp__malloc((total ? total : 1) * sizeof(uint64_t)), distinct = 0;
    if (!v)
        return 0;
    for (size_t i = 0; i < m->kernels.t.n; i++)
        v[n++] = (uint64_t)m->kernels.device_id[i] << 32 | m->kernels.stream_id[i];
    for (size_t i = 0; i < m->comms.t.n; i++)
        v[n++] = (uint64_t)(uint32_t)m->info.device_id << 32 | m->comms.stream_id[i];
    qsort(v, n, sizeof(uint64_t), cmp_u64);
    for (size_t i = 0; i < n; i++)
        distinct += i == 0 || v[i] != v[i - 1];
    nnp__free(v);
    return distinct;
}

static int write_summary(const gtl_t *g)
{
    const nnp_model_t *m = g->m;
    char name[64];
    int64_t total_ns = 0;
    uint64_t max_scope = 0, n_ops = 0;
    uint8_t *seen = nnp__calloc(m->n_strs ? m->n_strs : 1, 1);
    nnp_outfile_t f;
    nnp_jw_t w;
    int rc;

    if (!seen)
        return nnp__fail(NNP_ENOMEM, "out of memory for the GPU timeline summary");
    for (size_t i = 0; i < m->ops.t.n; i++) {
        const char *s = nnp__model_str(m, m->ops.name[i]);
        uint64_t depth = 0;
        if (m->ops.end_ns[i] != NNP_OPEN_END)
            total_ns += m->ops.end_ns[i] - m->ops.start_ns[i];
        if (seen[m->ops.name[i]])
            continue;
        seen[m->ops.name[i]] = 1;
        n_ops++;
        for (; *s; s++)
            depth += *s == '/';
        max_scope = depth > max_scope ? depth : max_scope;
    }
    nnp__free(seen);
    snprintf(name, sizeof(name), "gpu_timeline_summary_%d.json", g->c->rank);
    rc = nnp__out_open(&f, g->c->out_dir, name);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__jw_init(&w, f.fd, g->c->pretty, 0);
    nnp__jw_obj_begin(&w);
    nnp__jw_key(&w, "total_time");
    nnp__jw_double(&w, (double)total_ns / NS_PER_MS);
    nnp__jw_key(&w, "num_of_streams");
    nnp__jw_uint(&w, count_streams(m));
    nnp__jw_key(&w, "num_of_ops");
    nnp__jw_uint(&w, n_ops);
    nnp__jw_key(&w, "op_exe_times");
    nnp__jw_uint(&w, m->ops.t.n);
    nnp__jw_key(&w, "max_scope_name_num");
    nnp__jw_uint(&w, max_scope);
    nnp__jw_key(&w, "omitted_events");
    nnp__jw_uint(&w, g->omitted);
    nnp__jw_obj_end(&w);
    nnp__jw_line_end(&w);
    if (rc == NNP_OK)
        rc = nnp__jw_flush(&w);
    nnp__jw_fini(&w);
    return nnp__out_commit(&f, rc);
}

int nnp__gpu_timeline_write(const nnp_actx_t *c)
{
    gtl_t g;
    nnp_outfile_t f;
    char name[64];
    int rc;

    if (!nnp__gpu_present(c->m))
        return NNP_OK;
    memset(&g, 0, sizeof(g));
    g.c = c;
    g.m = c->m;
    g.wall_ns = c->m->info.diff_time_us * NS_PER_US;
    rc = nnp__op_index_build(c->m, &g.oi);
    if (rc != NNP_OK)
        return rc;
    snprintf(name, sizeof(name), "gpu_timeline_display_%d.json", c->rank);
    rc = nnp__out_open(&f, c->out_dir, name);
    if (rc == NNP_OK) {
        rc = nnp__jw_init(&g.w, f.fd, c->pretty, 0);
        nnp__jw_arr_begin(&g.w);
        emit_all(&g);
        nnp__jw_arr_end(&g.w);
        nnp__jw_line_end(&g.w);
        if (rc == NNP_OK)
            rc = nnp__jw_flush(&g.w);
        nnp__jw_fini(&g.w);
        rc = nnp__out_commit(&f, rc);
    }
    if (g.omitted)
        NNP_LOG_W("%s: timeline_limit (%llu MB) reached: %llu events left out", name,
                  (unsigned long long)(c->timeline_limit_bytes >> 20),
                  (unsigned long long)g.omitted);
    if (rc == NNP_OK)
        rc = write_summary(&g);
    nnp__op_index_fini(&g.oi);
    return rc;
}
