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
#include "read/raw_reader.h"
#include "util/util.h"

/* info.json is a few KiB; the cap only guards against a hostile file. */
/* The sentence about lost events (nnp__raw_loss_text) is well under this. */
#define LOSS_TEXT_CAP 512
#define INFO_JSON_MAX (16u * 1024u * 1024u)
#define MB            (1024ull * 1024ull)
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
    int err;
} import_ctx_t;

static uint32_t map_str(import_ctx_t *c, uint32_t raw_id)
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
        c->str_map = nm;
        c->str_map_cap = ncap;
    }
    if (c->str_map[raw_id])
        return c->str_map[raw_id] - 1;
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

static uint32_t thread_of(import_ctx_t *c, uint64_t tid)
{
    size_t i = nnp__model_thread(c->m, tid, c->pid);
    if (i == SIZE_MAX) {
        c->err = NNP_ENOMEM;
        return 0;
    }
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

static void add_span(import_ctx_t *c, nnp_spans_t *t, uint64_t id, uint32_t graph, int64_t start,
                     int64_t end)
{
    size_t i = push(c, &t->t);
    if (i == SIZE_MAX)
        return;
    t->id[i] = id;
    t->graph_id[i] = graph;
    t->start_ns[i] = start;
    t->end_ns[i] = end;
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

static void on_op(import_ctx_t *c, const nnp_raw_event_t *ev)
{
    const nnp_rec_t *r = ev->slots;
    const nnp_rec_op_ext_t *x = (const nnp_rec_op_ext_t *)&r[1];
    nnp_ops_t *o = &c->m->ops;
    size_t i;
    if ((r->flags & NNP_REC_F_FLOPS) && nnp__model_ops_want_flops(c->m) != NNP_OK) {
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
}

static void on_mem(import_ctx_t *c, const nnp_raw_event_t *ev, bool alloc)
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
        on_host(c, ev, 0);
        break;
    case NNP_REC_RANGE_END:
        on_host(c, ev, 1);
        break;
    case NNP_REC_INSTANT:
        on_host(c, ev, 2);
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
    case NNP_REC_STEP_BEGIN:
        span_open(c->open_steps, &c->n_steps, r->a, (uint32_t)r->b, ts, 0);
        break;
    case NNP_REC_STEP_END:
        if (span_close(c->open_steps, &c->n_steps, r->a, &o))
            add_span(c, &m->steps, o.id, o.graph, o.start_ns, ts);
        break;
    case NNP_REC_EPOCH_BEGIN:
        span_open(c->open_epochs, &c->n_epochs, r->a, 0, ts, 0);
        break;
    case NNP_REC_EPOCH_END:
        if (span_close(c->open_epochs, &c->n_epochs, r->a, &o))
            add_span(c, &m->epochs, o.id, 0, o.start_ns, ts);
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

/* ---- info.json ---- */

static int64_t num(const cJSON *o, const char *key, int64_t dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : dflt;
}

static char *dup_str(const cJSON *o, const char *key, const char *dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return nnp__strdup(cJSON_IsString(v) ? v->valuestring : dflt);
}

static int read_info(const char *raw_dir, nnp_run_info_t *info)
{
    char path[NNP_PATH_MAX], *text = NULL;
    cJSON *j, *opts, *plat, *wins;
    int rc;

    rc = nnp__path_join(path, sizeof(path), raw_dir, "info.json");
    if (rc == NNP_OK)
        rc = nnp__read_file(path, INFO_JSON_MAX, &text, NULL);
    if (rc != NNP_OK) {
        NNP_LOG_W("%s: %s; rank and options unknown", path, nnp_last_error());
        info->options_json = nnp__strdup("{}");
        info->state = nnp__strdup("unknown");
        info->fp_point = nnp__strdup("");
        info->bp_point = nnp__strdup("");
        return info->options_json && info->state ? NNP_OK : NNP_ENOMEM;
    }
    j = cJSON_Parse(text);
    nnp__free(text);
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        NNP_LOG_W("%s is not a JSON object; rank and options unknown", path);
        info->options_json = nnp__strdup("{}");
        info->state = nnp__strdup("unknown");
        info->fp_point = nnp__strdup("");
        info->bp_point = nnp__strdup("");
        return info->options_json && info->state ? NNP_OK : NNP_ENOMEM;
    }
    info->rank_id = (int)num(j, "rank_id", 0);
    info->device_id = (int)num(j, "device_id", 0);
    info->rank_size = (int)num(j, "rank_size", 1);
    info->pid = num(j, "pid", 0);
    info->start_wall_us = num(j, "start_time_us", 0);
    info->diff_time_us = num(j, "diff_time", 0);
    info->host = dup_str(j, "host", "");
    info->state = dup_str(j, "state", "unknown");
    plat = cJSON_GetObjectItemCaseSensitive(j, "platform");
    info->clock_ticks_per_sec = num(plat, "clock_ticks_per_sec", 100);
    info->ncpu = (int)num(plat, "cpus", 1);
    opts = cJSON_GetObjectItemCaseSensitive(j, "options");
    info->options_json = cJSON_IsObject(opts) ? cJSON_PrintUnformatted(opts) : NULL;
    if (info->options_json) {
        /* cJSON allocates with malloc: move it to our allocator. */
        char *copy = nnp__strdup(info->options_json);
        cJSON_free(info->options_json);
        info->options_json = copy;
    } else {
        info->options_json = nnp__strdup("{}");
    }
    info->fp_point = dup_str(opts, "fp_point", "");
    info->bp_point = dup_str(opts, "bp_point", "");
    info->timeline_limit_bytes = (uint64_t)num(opts, "timeline_limit", 500) * MB;
    wins = cJSON_GetObjectItemCaseSensitive(j, "windows");
    if (cJSON_IsArray(wins) && cJSON_GetArraySize(wins) > 0) {
        int n = cJSON_GetArraySize(wins);
        info->windows = nnp__calloc((size_t)n, sizeof(nnp_window_t));
        if (info->windows) {
            const cJSON *w;
            cJSON_ArrayForEach(w, wins)
            {
                nnp_window_t *dst = &info->windows[info->n_windows++];
                dst->start_ns = num(w, "start_mono_ns", 0);
                dst->stop_ns = num(w, "stop_mono_ns", NNP_OPEN_END);
            }
        }
    }
    cJSON_Delete(j);
    if (!info->host || !info->state || !info->options_json || !info->fp_point || !info->bp_point)
        return nnp__fail(NNP_ENOMEM, "out of memory reading %s", path);
    return NNP_OK;
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

int nnp__import_raw(const char *raw_dir, nnp_model_t *m)
{
    import_ctx_t *c;
    const nnp_raw_report_t *rep;
    int rc;

    rc = read_info(raw_dir, &m->info);
    if (rc != NNP_OK)
        return rc;
    m->info.source = nnp__strdup(raw_dir);
    m->info.source_format = nnp__strdup("nnprof-raw");
    c = nnp__calloc(1, sizeof(*c));
    if (!c || !m->info.source || !m->info.source_format) {
        nnp__free(c);
        return nnp__fail(NNP_ENOMEM, "out of memory importing %s", raw_dir);
    }
    c->m = m;
    c->pid = (uint32_t)m->info.pid;
    rc = nnp__raw_open(raw_dir, &c->raw);
    if (rc != NNP_OK) {
        nnp__free(c);
        return rc;
    }
    /* Thread names from the meta file, before any record refers to the threads. */
    for (uint32_t i = 0; i < nnp__raw_thread_count(c->raw); i++) {
        uint64_t tid = nnp__raw_thread_tid(c->raw, i);
        uint32_t t = thread_of(c, tid);
        if (c->err == NNP_OK)
            m->threads.name[t] = map_str(c, nnp__raw_thread_name(c->raw, tid));
    }
    rc = nnp__raw_read(c->raw, on_event, c);
    if (rc == NNP_OK && c->err != NNP_OK)
        rc = c->err;
    if (rc == NNP_ENOMEM)
        rc = nnp__fail(NNP_ENOMEM, "out of memory importing %s", raw_dir);
    /* Steps and epochs still open when the run ended (crash): kept with an open end. */
    for (size_t i = 0; rc == NNP_OK && i < c->n_steps; i++)
        add_span(c, &m->steps, c->open_steps[i].id, c->open_steps[i].graph,
                 c->open_steps[i].start_ns, NNP_OPEN_END);
    for (size_t i = 0; rc == NNP_OK && i < c->n_epochs; i++)
        add_span(c, &m->epochs, c->open_epochs[i].id, 0, c->open_epochs[i].start_ns, NNP_OPEN_END);
    rep = nnp__raw_report(c->raw);
    m->info.events_lost = rep->events_lost;
    m->info.chunks_corrupt = rep->chunks_corrupt;
    m->info.chunks_truncated = rep->chunks_truncated;
    m->info.files_aged_out = rep->data_files_aged;
    for (uint32_t k = 0; k < rep->n_damage && k < NNP_RAW_MAX_DAMAGE; k++)
        NNP_LOG_W("%s: %s at offset %llu: %s", raw_dir, rep->damage[k].file,
                  (unsigned long long)rep->damage[k].offset, rep->damage[k].msg);
    {
        char lost[LOSS_TEXT_CAP];
        if (nnp__raw_loss_text(rep, lost, sizeof(lost)))
            NNP_LOG_W("%s: %s; results undercount", raw_dir, lost);
    }
    nnp__raw_close(c->raw);
    nnp__free(c->str_map);
    nnp__free(c);
    if (rc == NNP_OK)
        rc = nnp__model_finish(m);
    if (rc == NNP_OK)
        attach_host_memory(m);
    return rc;
}
