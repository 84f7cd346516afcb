/* raw_import.c - fills the trace model from one of our raw directories: info.json for the
 * run (rank, clocks, options, windows), then every record through the raw reader. Raw
 * string ids are mapped to model ids on first use. Begin/end pairs (steps, epochs,
 * marker ranges) are matched here; host ranges stay as rows (model.h). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "read/raw_import.h"
#include "read/raw_info.h"
#include "read/raw_reader.h"
#include "util/util.h"

#define NS_PER_SEC 1000000000ull
/* The sentence about lost events (nnp__raw_loss_text) is well under this. */
#define LOSS_TEXT_CAP 512
/* Open steps/epochs/markers kept while matching; more open at once is not a real run. */
#define MAX_OPEN 4096

typedef struct open_span {
    uint64_t id;
    uint32_t graph;
    int64_t start_ns;
    uint32_t thread;
} open_span_t;

typedef struct import_ctx {
    nnp_model_t *m;
    nnp_raw_t *raw;
    uint32_t *str_map; /* raw id -> model id + 1 (0 = not mapped yet) */
    size_t str_map_cap;
    open_span_t open_steps[MAX_OPEN], open_epochs[MAX_OPEN], open_marks[MAX_OPEN];
    size_t n_steps, n_epochs, n_marks;
    uint32_t pid;
    /* The last thread looked up: records come in chunks of one thread, and the model's
     * thread lookup is a scan (threads are only appended, so the answer never changes). */
    uint64_t last_tid;
    uint32_t last_thread;
    bool has_last;
    int err;
} import_ctx_t;

/* map_str's slow path: a raw id met for the first time (or 0 before the map exists). */
static uint32_t map_str_new(import_ctx_t *c, uint32_t raw_id)
{
    const char *s;
    uint32_t id;
    if (raw_id == 0)
        return 0;
    if (raw_id >= c->str_map_cap) {
        size_t ncap = c->str_map_cap ? c->str_map_cap : 1024;
        uint32_t *nm;
        while (ncap <= raw_id)
            ncap *= 2;
        nm = nnp__realloc(c->str_map, ncap * sizeof(uint32_t));
        if (!nm) {
            c->err = NNP_ENOMEM;
            return 0;
        }
        memset(nm + c->str_map_cap, 0, (ncap - c->str_map_cap) * sizeof(uint32_t));
        nm[0] = 1; /* raw id 0 is model id 0 (""): mapped from the start, for map_str */
        c->str_map = nm;
        c->str_map_cap = ncap;
    }
    s = nnp__raw_str(c->raw, raw_id);
    if (!s) {
        /* The meta file lost this string (damage): keep the record, name it by id. */
        char buf[32];
        snprintf(buf, sizeof(buf), "<string #%u>", raw_id);
        id = nnp__model_intern_cstr(c->m, buf);
    } else {
        id = nnp__model_intern_cstr(c->m, s);
    }
    c->str_map[raw_id] = id + 1;
    return id;
}

/* Model id of a raw string id: a lookup inline (several per record), the first use of an
 * id out of line. */
static inline uint32_t map_str(import_ctx_t *c, uint32_t raw_id)
{
    if (NNP_LIKELY(raw_id < c->str_map_cap && c->str_map[raw_id]))
        return c->str_map[raw_id] - 1;
    return map_str_new(c, raw_id);
}

static uint32_t thread_of(import_ctx_t *c, uint64_t tid)
{
    size_t i;
    if (c->has_last && c->last_tid == tid)
        return c->last_thread;
    i = nnp__model_thread(c->m, tid, c->pid);
    if (i == SIZE_MAX) {
        c->err = NNP_ENOMEM;
        return 0;
    }
    c->last_tid = tid;
    c->last_thread = (uint32_t)i;
    c->has_last = true;
    return (uint32_t)i;
}

/* Pushes a row or records the error; returns SIZE_MAX on failure. */
static size_t push(import_ctx_t *c, nnp_table_t *t)
{
    size_t i = nnp__table_push(t);
    if (i == SIZE_MAX)
        c->err = NNP_ENOMEM;
    return i;
}

static void span_open(open_span_t *v, size_t *n, uint64_t id, uint32_t graph, int64_t ts,
                      uint32_t thread)
{
    if (*n < MAX_OPEN)
        v[(*n)++] = (open_span_t){id, graph, ts, thread};
}

/* Removes and returns the most recent open span with this id; false when none. */
static bool span_close(open_span_t *v, size_t *n, uint64_t id, open_span_t *out)
{
    for (size_t i = *n; i-- > 0;) {
        if (v[i].id == id) {
            *out = v[i];
            memmove(&v[i], &v[i + 1], (*n - i - 1) * sizeof(*v));
            (*n)--;
            return true;
        }
    }
    return false;
}

/* thread: index + 1 of the thread that began the span (nnp_spans_t), 0 = not known. */
static void add_span(import_ctx_t *c, nnp_spans_t *t, uint64_t id, uint32_t graph, int64_t start,
                     int64_t end, uint32_t thread)
{
    size_t i = push(c, &t->t);
    if (i == SIZE_MAX)
        return;
    t->id[i] = id;
    t->graph_id[i] = graph;
    t->start_ns[i] = start;
    t->end_ns[i] = end;
    t->thread[i] = thread;
}

static void add_series(import_ctx_t *c, nnp_series_t *t, int64_t ts, uint32_t name, double v)
{
    size_t i = push(c, &t->t);
    if (i == SIZE_MAX)
        return;
    t->ts_ns[i] = ts;
    t->name[i] = name;
    t->value[i] = v;
}

static void on_host(import_ctx_t *c, const nnp_raw_event_t *ev, uint8_t kind)
{
    const nnp_rec_t *r = ev->slots;
    nnp_host_rows_t *h = &c->m->host;
    size_t i = push(c, &h->t);
    if (i == SIZE_MAX)
        return;
    h->ts_ns[i] = (int64_t)ev->ts_ns;
    h->kind[i] = kind;
    h->event[i] = map_str(c, r->name);
    h->module[i] = map_str(c, (uint32_t)r->a);
    h->stage[i] = map_str(c, (uint32_t)(r->a >> 32));
    h->custom_info[i] = map_str(c, (uint32_t)r->b);
    h->level[i] = (uint8_t)(r->b >> 32);
    h->thread[i] = thread_of(c, ev->tid);
}

static NNP_NOINLINE void on_op(import_ctx_t *c, const nnp_raw_event_t *ev)
{
    const nnp_rec_t *r = ev->slots;
    const nnp_rec_op_ext_t *x = (const nnp_rec_op_ext_t *)&r[1];
    nnp_ops_t *o = &c->m->ops;
    size_t i;
    if ((r->flags & NNP_REC_F_FLOPS) && nnp__model_ops_want_flops(c->m) != NNP_OK) {
        c->err = NNP_ENOMEM;
        return;
    }
    if ((r->flags & (NNP_REC_F_SEQ | NNP_REC_F_BACKWARD)) &&
        nnp__model_ops_want_seq(c->m) != NNP_OK) {
        c->err = NNP_ENOMEM;
        return;
    }
    i = push(c, &o->t);
    if (i == SIZE_MAX)
        return;
    o->start_ns[i] = (int64_t)ev->ts_ns;
    o->end_ns[i] = (int64_t)ev->end_ns;
    o->name[i] = map_str(c, r->name);
    o->type[i] = map_str(c, x->type);
    o->graph_id[i] = x->graph_id;
    o->stream_id[i] = x->stream_id;
    o->thread[i] = thread_of(c, ev->tid);
    o->shapes[i] = map_str(c, x->input_shapes);
    o->dtypes[i] = map_str(c, x->input_dtypes);
    o->corr[i] = r->b;
    if (r->flags & NNP_REC_F_FLOPS) {
        const nnp_rec_flops_t *f = (const nnp_rec_flops_t *)&r[2];
        o->flops_matrix[i] = f->matrix;
        o->flops_vector[i] = f->vector;
        if (f->stack) {
            if (nnp__model_ops_want_stack(c->m) != NNP_OK) {
                c->err = NNP_ENOMEM;
                return;
            }
            o->stack[i] = map_str(c, f->stack);
        }
    }
    if (r->flags & NNP_REC_F_SEQ) {
        o->seq_nr[i] = x->sequence_nr;
        o->seq_thread[i] = x->seq_thread;
        o->seq_kind[i] = (r->flags & NNP_REC_F_BACKWARD) ? NNP_SEQ_BACKWARD : NNP_SEQ_FORWARD;
    } else if (r->flags & NNP_REC_F_BACKWARD) {
        o->seq_nr[i] = -1; /* a backward op with no link: no forward op has it */
        o->seq_kind[i] = NNP_SEQ_BACKWARD;
    }
}

static void on_kernel(import_ctx_t *c, const nnp_raw_event_t *ev)
{
    const nnp_rec_t *r = ev->slots;
    const nnp_rec_kernel_ext_t *x = (const nnp_rec_kernel_ext_t *)&r[1];
    nnp_kernels_t *k = &c->m->kernels;
    size_t i = push(c, &k->t);
    if (i == SIZE_MAX)
        return;
    k->start_ns[i] = (int64_t)ev->ts_ns;
    k->end_ns[i] = (int64_t)ev->end_ns;
    k->name[i] = map_str(c, r->name);
    k->type[i] = map_str(c, x->type);
    k->device_id[i] = x->device_id;
    k->stream_id[i] = x->stream_id;
    k->corr[i] = r->b;
    k->launch[i] = x->launch; /* 0 in files written before launch ids (a reserved field) */
    if (r->flags & (NNP_REC_F_LAUNCH | NNP_REC_F_COPY)) {
        nnp_kernel_detail_t *d;
        if (nnp__model_kernels_want_detail(c->m) != NNP_OK) {
            c->err = NNP_ENOMEM;
            return;
        }
        d = &k->detail[i];
        if (r->flags & NNP_REC_F_LAUNCH) {
            const nnp_rec_launch_t *l = (const nnp_rec_launch_t *)&r[2];
            d->has = NNP_KDETAIL_LAUNCH;
            for (int j = 0; j < 3; j++) {
                d->grid[j] = l->grid[j];
                d->block[j] = l->block[j];
            }
            d->registers = l->registers_per_thread;
            d->static_shared = l->static_shared_bytes;
            d->dynamic_shared = l->dynamic_shared_bytes;
        } else {
            const nnp_rec_copy_t *cp = (const nnp_rec_copy_t *)&r[2];
            d->has = NNP_KDETAIL_COPY;
            d->bytes = cp->bytes;
            /* Kinds this reader does not know read as unknown (0). */
            d->copy_kind = cp->copy_kind < NNP_COPY_KIND_COUNT ? cp->copy_kind : 0;
            d->src_kind = cp->src_kind < NNP_MEMORY_KIND_COUNT ? cp->src_kind : 0;
            d->dst_kind = cp->dst_kind < NNP_MEMORY_KIND_COUNT ? cp->dst_kind : 0;
            d->src_device = cp->src_device;
            d->dst_device = cp->dst_device;
            d->value = cp->value;
        }
    }
}

/* NVTX ranges become host rows (a begin and an end on the calling thread, module = the
 * NVTX domain or "NVTX", level 1 = user), so host_info and the timeline show them as any
 * host range; other calls go to the calls table: their correlation id in corr, the id of
 * the device work they queued in launch (0 when none, and in files written before launch
 * ids: model.h). */
static void on_call(import_ctx_t *c, const nnp_raw_event_t *ev)
{
    const nnp_rec_t *r = ev->slots;
    const nnp_rec_call_ext_t *x = (const nnp_rec_call_ext_t *)&r[1];
    uint32_t thread = thread_of(c, x->tid ? x->tid : ev->tid);

    if (x->kind == NNP_CALL_NVTX) {
        nnp_host_rows_t *h = &c->m->host;
        uint32_t module = x->domain ? map_str(c, x->domain) : nnp__model_intern_cstr(c->m, "NVTX");
        for (uint8_t kind = 0; kind < 2; kind++) {
            size_t i = push(c, &h->t);
            if (i == SIZE_MAX)
                return;
            h->ts_ns[i] = (int64_t)(kind == 0 ? ev->ts_ns : ev->end_ns);
            h->kind[i] = kind;
            h->level[i] = 1;
            h->module[i] = module;
            h->event[i] = map_str(c, r->name);
            h->thread[i] = thread;
        }
        return;
    }
    {
        nnp_calls_t *t = &c->m->calls;
        size_t i = push(c, &t->t);
        if (i == SIZE_MAX)
            return;
        t->start_ns[i] = (int64_t)ev->ts_ns;
        t->end_ns[i] = (int64_t)ev->end_ns;
        t->name[i] = map_str(c, r->name);
        t->kind[i] = x->kind < NNP_CALL_KIND_COUNT ? x->kind : NNP_CALL_OTHER;
        t->domain[i] = map_str(c, x->domain);
        t->stream_id[i] = x->stream_id;
        t->thread[i] = thread;
        t->status[i] = x->status;
        t->corr[i] = r->b;
        t->launch[i] = x->launch;
    }
}

static void on_comm(import_ctx_t *c, const nnp_raw_event_t *ev)
{
    const nnp_rec_t *r = ev->slots;
    const nnp_rec_comm_ext_t *x = (const nnp_rec_comm_ext_t *)&r[1];
    nnp_comms_t *t = &c->m->comms;
    size_t i = push(c, &t->t);
    if (i == SIZE_MAX)
        return;
    t->start_ns[i] = (int64_t)ev->ts_ns;
    t->end_ns[i] = (int64_t)ev->end_ns;
    t->name[i] = map_str(c, r->name);
    t->kind[i] = x->kind;
    t->group[i] = map_str(c, x->group);
    t->stream_id[i] = x->stream_id;
    t->thread[i] = thread_of(c, ev->tid);
    t->peer[i] = x->peer;
    t->bytes[i] = r->b;
    t->launch[i] = x->launch;
    if (ev->n_slots > 2) {
        const nnp_rec_comm_detail_t *d = (const nnp_rec_comm_detail_t *)&r[2];
        t->count[i] = d->count;
        t->datatype[i] = map_str(c, d->datatype);
        t->has[i] = (uint8_t)(d->has & (NNP_COMM_HAS_TAG | NNP_COMM_HAS_WAIT));
        t->tag[i] = (d->has & NNP_COMM_HAS_TAG) ? d->tag : 0;
        t->wait_ns[i] = (d->has & NNP_COMM_HAS_WAIT) ? d->wait_ns : 0;
    }
}

/* A group is described again in every window: keep one row per (name, members). */
static void on_comm_group(import_ctx_t *c, const nnp_rec_t *r)
{
    nnp_comm_groups_t *g = &c->m->comm_groups;
    uint32_t name = map_str(c, r->name), members = map_str(c, (uint32_t)r->a);
    size_t i;
    for (i = 0; i < g->t.n; i++) {
        if (g->name[i] == name && g->members[i] == members)
            return;
    }
    i = push(c, &g->t);
    if (i == SIZE_MAX)
        return;
    g->name[i] = name;
    g->members[i] = members;
    g->size[i] = (uint32_t)(r->a >> 32);
    g->my_index[i] = (int32_t)(int64_t)r->b;
}

static NNP_ALWAYS_INLINE void on_mem(import_ctx_t *c, const nnp_raw_event_t *ev, bool alloc)
{
    const nnp_rec_t *r = ev->slots;
    nnp_mem_events_t *t = &c->m->mem;
    size_t i = push(c, &t->t);
    if (i == SIZE_MAX)
        return;
    t->ts_ns[i] = (int64_t)ev->ts_ns;
    t->is_alloc[i] = alloc;
    t->address[i] = r->a;
    t->bytes[i] = r->b;
    t->thread[i] = thread_of(c, ev->tid);
    if (alloc) {
        const nnp_rec_alloc_ext_t *x = (const nnp_rec_alloc_ext_t *)&r[1];
        t->name[i] = map_str(c, r->name);
        t->owner_op[i] = map_str(c, x->owner_op);
        t->device_id[i] = x->device_id;
    }
}

static void on_sys_cpu(import_ctx_t *c, const nnp_raw_event_t *ev)
{
    const nnp_rec_sys_cpu_t *s = (const nnp_rec_sys_cpu_t *)ev->slots;
    nnp_cpu_samples_t *t = &c->m->sys_cpu;
    size_t i = push(c, &t->t);
    if (i == SIZE_MAX)
        return;
    t->ts_ns[i] = (int64_t)ev->ts_ns;
    t->user[i] = s->user;
    t->nice[i] = s->nice;
    t->sys[i] = s->sys;
    t->idle[i] = s->idle;
    t->iowait[i] = s->iowait;
    t->irq[i] = s->irq;
    t->steal[i] = s->steal;
    t->ctxt[i] = s->ctxt;
    t->running[i] = (uint32_t)s->procs_running;
    t->blocked[i] = (uint32_t)s->procs_blocked;
    if (s->ncpu)
        c->m->info.ncpu = (int)s->ncpu;
}

static void on_task_cpu(import_ctx_t *c, int64_t ts, uint64_t tid, uint32_t name, uint64_t ut,
                        uint64_t st)
{
    nnp_task_samples_t *t = &c->m->task_cpu;
    size_t i = push(c, &t->t);
    if (i == SIZE_MAX)
        return;
    t->ts_ns[i] = ts;
    t->tid[i] = tid;
    t->name[i] = name;
    t->utime[i] = ut;
    t->stime[i] = st;
}

static int on_event(void *user, const nnp_raw_event_t *ev)
{
    import_ctx_t *c = user;
    nnp_model_t *m = c->m;
    const nnp_rec_t *r = ev->slots;
    int64_t ts = (int64_t)ev->ts_ns;
    open_span_t o;

    switch (ev->kind) {
    case NNP_REC_RANGE_BEGIN:
        on_host(c, ev, NNP_HOST_ROW_BEGIN);
        break;
    case NNP_REC_RANGE_END:
        on_host(c, ev, NNP_HOST_ROW_END);
        break;
    case NNP_REC_INSTANT:
        on_host(c, ev, NNP_HOST_ROW_INSTANT);
        break;
    case NNP_REC_HOST_MEM:
        add_series(c, &m->host_mem, ts, 0, (double)r->a);
        break;
    case NNP_REC_OP:
        on_op(c, ev);
        break;
    case NNP_REC_KERNEL:
        on_kernel(c, ev);
        break;
    case NNP_REC_CALL:
        on_call(c, ev);
        break;
    case NNP_REC_STEP_BEGIN:
        span_open(c->open_steps, &c->n_steps, r->a, (uint32_t)r->b, ts, thread_of(c, ev->tid) + 1);
        break;
    case NNP_REC_STEP_END:
        if (span_close(c->open_steps, &c->n_steps, r->a, &o))
            add_span(c, &m->steps, o.id, o.graph, o.start_ns, ts, o.thread);
        break;
    case NNP_REC_EPOCH_BEGIN:
        span_open(c->open_epochs, &c->n_epochs, r->a, 0, ts, 0);
        break;
    case NNP_REC_EPOCH_END:
        if (span_close(c->open_epochs, &c->n_epochs, r->a, &o))
            add_span(c, &m->epochs, o.id, 0, o.start_ns, ts, 0);
        break;
    case NNP_REC_FP_START:
    case NNP_REC_BP_END: {
        nnp_marks_t *t = ev->kind == NNP_REC_FP_START ? &m->fp : &m->bp;
        size_t i = push(c, &t->t);
        if (i != SIZE_MAX) {
            t->step_id[i] = r->a;
            t->ts_ns[i] = ts;
        }
        break;
    }
    case NNP_REC_MEM_ALLOC:
        on_mem(c, ev, true);
        break;
    case NNP_REC_MEM_FREE:
        on_mem(c, ev, false);
        break;
    case NNP_REC_COMM:
        on_comm(c, ev);
        break;
    case NNP_REC_COMM_GROUP:
        on_comm_group(c, r);
        break;
    case NNP_REC_PIPE_OP: {
        const nnp_rec_pipe_ext_t *x = (const nnp_rec_pipe_ext_t *)&r[1];
        size_t i = push(c, &m->pipe_ops.t);
        if (i != SIZE_MAX) {
            m->pipe_ops.op_id[i] = (int64_t)r->a;
            m->pipe_ops.parent_id[i] = (int64_t)r->b;
            m->pipe_ops.op_type[i] = map_str(c, r->name);
            m->pipe_ops.num_workers[i] = x->num_workers;
        }
        break;
    }
    case NNP_REC_QUEUE:
    case NNP_REC_DEVICE_QUEUE: {
        size_t i = push(c, &m->queues.t);
        if (i != SIZE_MAX) {
            m->queues.ts_ns[i] = ts;
            m->queues.op_id[i] = ev->kind == NNP_REC_QUEUE ? (int64_t)r->a : -1;
            m->queues.size[i] = (uint32_t)r->b;
            m->queues.capacity[i] = (uint32_t)(r->b >> 32);
        }
        break;
    }
    case NNP_REC_MARK:
    case NNP_REC_MARK_START: {
        size_t i = push(c, &m->markers.t);
        if (i != SIZE_MAX) {
            m->markers.start_ns[i] = ts;
            m->markers.end_ns[i] = ev->kind == NNP_REC_MARK ? ts : NNP_OPEN_END;
            m->markers.message[i] = map_str(c, r->name);
            m->markers.thread[i] = thread_of(c, ev->tid);
            if (ev->kind == NNP_REC_MARK_START)
                span_open(c->open_marks, &c->n_marks, r->a, 0, ts, (uint32_t)i);
        }
        break;
    }
    case NNP_REC_MARK_STOP:
        /* open_span.thread holds the marker row index here. */
        if (span_close(c->open_marks, &c->n_marks, r->a, &o))
            m->markers.end_ns[o.thread] = ts;
        break;
    case NNP_REC_COUNTER: {
        double v;
        memcpy(&v, &r->a, sizeof(v));
        add_series(c, &m->counters, ts, map_str(c, r->name), v);
        break;
    }
    case NNP_REC_SYS_CPU:
        on_sys_cpu(c, ev);
        break;
    case NNP_REC_PROC_CPU:
        on_task_cpu(c, ts, 0, 0, r->a, r->b);
        break;
    case NNP_REC_THREAD_CPU:
        on_task_cpu(c, ts, r->b, map_str(c, r->name), (uint32_t)r->a, r->a >> 32);
        break;
    case NNP_REC_PROC_MEM:
        add_series(c, &m->proc_rss, ts, 0, (double)r->a);
        break;
    default:
        break;
    }
    return c->err;
}

/* MindSpore's host_info rows carry the host memory in use when they were written; our
 * recorder samples it separately (nnp_host_memory). Each host row takes the latest sample
 * at or before its time, so host_memory_{rank}.csv means the same for both sources. Both
 * tables are sorted by time: one merge pass. */
static void attach_host_memory(nnp_model_t *m)
{
    const nnp_series_t *s = &m->host_mem;
    nnp_host_rows_t *h = &m->host;
    size_t j = 0;
    uint64_t last = 0;
    for (size_t i = 0; i < h->t.n && s->t.n > 0; i++) {
        while (j < s->t.n && s->ts_ns[j] <= h->ts_ns[i])
            last = (uint64_t)s->value[j++];
        h->memory_bytes[i] = last;
    }
}

/* Smallest tick of the records whose timestamps are ticks (a first pass, only when the
 * clock points were lost with meta.nnp). */
static int min_tick(void *user, const nnp_raw_event_t *ev)
{
    uint64_t *min = user;
    if (!(ev->slots[0].flags & NNP_REC_F_TS_NS) && ev->ts_ns < *min)
        *min = ev->ts_ns;
    return 0;
}

/* meta.nnp is gone: says what is lost and, when info.json gives the tick rate, adds one
 * clock point so durations stay exact (anchored at the first window's start). */
static int recover_clock(const char *raw_dir, nnp_raw_t *raw, const nnp_raw_clock_info_t *clk)
{
    nnp_clock_point_t p;
    uint64_t first = UINT64_MAX;
    const char *lost = "op, kernel and range names (shown as <string #id>), thread names and the "
                       "loss counts are lost";
    int rc;

    if (clk->ticks_are_ns) {
        NNP_LOG_W("%s: meta.nnp is missing: the records of the data files are read; %s; times "
                  "are exact (the recorder's ticks were ns)",
                  raw_dir, lost);
        return NNP_OK;
    }
    if (clk->tick_rate_hz <= 0) {
        NNP_LOG_W("%s: meta.nnp is missing: the records of the data files are read; %s; the "
                  "clock points are lost and info.json gives no tick rate, so ticks are taken "
                  "as ns (times and durations are not in ns)",
                  raw_dir, lost);
        return NNP_OK;
    }
    rc = nnp__raw_read(raw, min_tick, &first);
    if (rc != NNP_OK)
        return rc;
    memset(&p, 0, sizeof(p));
    p.ticks = first == UINT64_MAX ? 0 : first;
    p.mono_ns = clk->first_window_ns > 0 ? (uint64_t)clk->first_window_ns : 0;
    p.ticks_per_sec = (uint64_t)clk->tick_rate_hz;
    NNP_LOG_W("%s: meta.nnp is missing: the records of the data files are read; %s; the clock "
              "points are lost: ticks are converted at info.json's tick rate (%lld Hz) with the "
              "first record placed at the first window's start, so durations are exact and "
              "absolute times approximate",
              raw_dir, lost, (long long)clk->tick_rate_hz);
    return nnp__raw_add_clock(raw, &p);
}

/* Reads the records of one raw directory into m with process id pid. */
static int import_records(const char *raw_dir, nnp_model_t *m, uint32_t pid,
                          const nnp_raw_clock_info_t *clk)
{
    import_ctx_t *c;
    const nnp_raw_report_t *rep;
    int rc;

    c = nnp__calloc(1, sizeof(*c));
    if (!c)
        return nnp__fail(NNP_ENOMEM, "out of memory importing %s", raw_dir);
    c->m = m;
    c->pid = pid;
    rc = nnp__raw_open(raw_dir, &c->raw);
    if (rc != NNP_OK) {
        nnp__free(c);
        return rc;
    }
    if (nnp__raw_report(c->raw)->meta_missing)
        rc = recover_clock(raw_dir, c->raw, clk);
    /* Thread names from the meta file, before any record refers to the threads. */
    for (uint32_t i = 0; rc == NNP_OK && i < nnp__raw_thread_count(c->raw); i++) {
        uint64_t tid = nnp__raw_thread_tid(c->raw, i);
        uint32_t t = thread_of(c, tid);
        if (c->err == NNP_OK)
            m->threads.name[t] = map_str(c, nnp__raw_thread_name(c->raw, tid));
    }
    if (rc == NNP_OK)
        rc = nnp__raw_read(c->raw, on_event, c);
    if (rc == NNP_OK && c->err != NNP_OK)
        rc = c->err;
    if (rc == NNP_ENOMEM)
        rc = nnp__fail(NNP_ENOMEM, "out of memory importing %s", raw_dir);
    /* Steps and epochs still open when the run ended (crash): kept with an open end. */
    for (size_t i = 0; rc == NNP_OK && i < c->n_steps; i++)
        add_span(c, &m->steps, c->open_steps[i].id, c->open_steps[i].graph,
                 c->open_steps[i].start_ns, NNP_OPEN_END, c->open_steps[i].thread);
    for (size_t i = 0; rc == NNP_OK && i < c->n_epochs; i++)
        add_span(c, &m->epochs, c->open_epochs[i].id, 0, c->open_epochs[i].start_ns, NNP_OPEN_END,
                 0);
    rep = nnp__raw_report(c->raw);
    m->info.events_lost += rep->events_lost;
    m->info.chunks_corrupt += rep->chunks_corrupt;
    m->info.chunks_truncated += rep->chunks_truncated;
    m->info.files_aged_out += rep->data_files_aged;
    for (uint32_t k = 0; k < rep->n_damage && k < NNP_RAW_MAX_DAMAGE; k++) {
        if (rep->meta_missing && k == 0)
            continue; /* said above, with what it means */
        NNP_LOG_W("%s: %s at offset %llu: %s", raw_dir, rep->damage[k].file,
                  (unsigned long long)rep->damage[k].offset, rep->damage[k].msg);
    }
    {
        char lost[LOSS_TEXT_CAP];
        if (nnp__raw_loss_text(rep, lost, sizeof(lost)))
            NNP_LOG_W("%s: %s; results undercount", raw_dir, lost);
    }
    if (rep->chunks_duplicate)
        NNP_LOG_W("%s: skipped %llu duplicate chunk(s) (a sequence number found twice); "
                  "every record is counted once",
                  raw_dir, (unsigned long long)rep->chunks_duplicate);
    nnp__raw_close(c->raw);
    nnp__free(c->str_map);
    nnp__free(c);
    return rc;
}

/* Rows of the tables that say a process worked (model.h: nnp_proc_part_t). */
static size_t work_rows(const nnp_model_t *m)
{
    return m->ops.t.n + m->kernels.t.n + m->host.t.n + m->steps.t.n + m->comms.t.n + m->markers.t.n;
}

/* Imports one raw directory of a group as part p (its pid, its sample rows, its work). */
static int import_part(const char *dir, nnp_model_t *m, const nnp_run_info_t *info,
                       const nnp_raw_clock_info_t *clk, nnp_proc_part_t *p)
{
    size_t work = work_rows(m);
    int rc;
    p->pid = (uint32_t)info->pid;
    p->parent_pid = info->parent_pid > 0 ? (uint32_t)info->parent_pid : 0;
    p->from[NNP_PROC_SYS_CPU] = m->sys_cpu.t.n;
    p->from[NNP_PROC_TASK_CPU] = m->task_cpu.t.n;
    p->from[NNP_PROC_RSS] = m->proc_rss.t.n;
    p->from[NNP_PROC_HOST_MEM] = m->host_mem.t.n;
    rc = import_records(dir, m, p->pid, clk);
    p->to[NNP_PROC_SYS_CPU] = m->sys_cpu.t.n;
    p->to[NNP_PROC_TASK_CPU] = m->task_cpu.t.n;
    p->to[NNP_PROC_RSS] = m->proc_rss.t.n;
    p->to[NNP_PROC_HOST_MEM] = m->host_mem.t.n;
    p->work = work_rows(m) > work;
    return rc;
}

int nnp__import_raw_group(const char *const *dirs, size_t n, nnp_model_t *m)
{
    nnp_raw_clock_info_t clk;
    nnp_proc_part_t *parts;
    int rc;

    if (n == 0)
        return nnp__fail(NNP_EINVAL, "no raw directory to import");
    rc = nnp__raw_info_read(dirs[0], &m->info, &clk);
    if (rc != NNP_OK)
        return rc;
    m->info.source = nnp__strdup(dirs[0]);
    m->info.source_format = nnp__strdup(NNP_RAW_SOURCE_FORMAT);
    parts = nnp__calloc(n, sizeof(*parts));
    if (!m->info.source || !m->info.source_format || !parts) {
        nnp__free(parts);
        return nnp__fail(NNP_ENOMEM, "out of memory importing %s", dirs[0]);
    }
    rc = import_part(dirs[0], m, &m->info, &clk, &parts[0]);
    /* Child processes (CONTRACTS.md section 2): their events join this rank's model with
     * their own pid, so threads of different processes never merge; which of them work
     * for the training process is decided below (model_view.c). */
    for (size_t i = 1; rc == NNP_OK && i < n; i++) {
        nnp_run_info_t child;
        nnp_raw_clock_info_t child_clk;
        memset(&child, 0, sizeof(child));
        rc = nnp__raw_info_read(dirs[i], &child, &child_clk);
        if (rc == NNP_OK)
            rc = import_part(dirs[i], m, &child, &child_clk, &parts[i]);
        nnp__free(child.host);
        nnp__free(child.state);
        nnp__free(child.options_json);
        nnp__free(child.fp_point);
        nnp__free(child.bp_point);
        nnp__free(child.windows);
    }
    if (rc == NNP_OK)
        rc = nnp__model_group_processes(m, parts, n);
    nnp__free(parts);
    if (rc == NNP_OK)
        rc = nnp__model_finish(m);
    if (rc == NNP_OK)
        attach_host_memory(m);
    return rc;
}

int nnp__import_raw(const char *raw_dir, nnp_model_t *m)
{
    return nnp__import_raw_group(&raw_dir, 1, m);
}
