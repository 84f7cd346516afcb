/* kineto_trace.c - export of one rank's run in PyTorch profiler's trace format (Kineto's
 * Chrome-trace JSON, what torch.profiler's export_chrome_trace and tensorboard_trace_handler
 * write), so TensorBoard's profiler plugin, HTA and chrome://tracing open our captures:
 * one object with "traceEvents", "distributedInfo" and "deviceProperties". Ops become
 * "cpu_op" events with Kineto's args, host ranges and steps ("ProfilerStep#N")
 * "user_annotation", tensor memory "[memory]" instants, autograd links "fwdbwd" flows;
 * device activity and the CUDA calls that queued it: kineto_gpu.c. Called by nnp_export_kineto()
 * (the Python API, `nnprof export kineto`); streams the JSON, never holds it. Field names follow
 * Kineto as of PyTorch 1.13 (docs/TORCH.md). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/op_table.h"
#include "export/kineto_internal.h"
#include "export/kineto_trace.h"
#include "model/host_pairs.h"
#include "read/raw_import.h"
#include "util/checked.h"
#include "util/json_writer.h"
#include "util/util.h"

#define NS_PER_S 1000000000LL
/* Kineto (>= PyTorch 2.1) writes each "ts" relative to "baseTimeNanoseconds", the wall clock
 * floored to 7,889,238-second (three-month) intervals since the epoch (libkineto's
 * ChromeTraceBaseTime): every process of a job then shares the base, and a ts stays below
 * 7.9e12 us, exact to the ns in the double that readers (TensorBoard, HTA) parse it into.
 * Microseconds since the epoch would need 19 digits and come back in 0.25 us steps. */
#define KINETO_BASE_INTERVAL_S 7889238LL
/* Kineto's "[memory]" events on a CPU: device type 0 (c10::DeviceType::CPU), id -1. */
#define KINETO_DEVICE_CPU    0
#define KINETO_DEVICE_ID_CPU (-1)
/* Largest process group written out as a rank list ("0-4095" stays a range beyond). */
#define MAX_LISTED_RANKS 4096

/* A complete ("X") event; args stay open for the caller, who closes them and the event
 * with events_end(). */
static void complete_begin(kx_t *x, const char *cat, const char *name, uint64_t pid, uint64_t tid,
                           int64_t start_ns, int64_t end_ns)
{
    event_begin(x, "X", cat, name, pid, tid, start_ns);
    key_dur(x, start_ns, end_ns);
    nnp__jw_key(&x->w, "args");
    nnp__jw_obj_begin(&x->w);
    key_uint(x, "External id", ++x->ext_id);
    key_uint(x, "Ev Idx", x->ev_idx++);
}

static void complete_end(kx_t *x)
{
    nnp__jw_obj_end(&x->w); /* args */
    nnp__jw_obj_end(&x->w); /* event */
}

/* ---- ops ---- */

/* "Input Dims" and "Input type" from our texts: shapes "32,784;784,128;" and dtypes
 * "float;float;Scalar" hold one field per input. A 0-d tensor's shape is empty, so the
 * number of inputs comes from the dtypes when they are there. */
static size_t fields(const char *s)
{
    size_t n = 1;
    for (; *s; s++)
        n += *s == ';';
    return n;
}

static void write_dims(kx_t *x, const char *shapes, size_t n_inputs)
{
    const char *p = shapes;
    nnp__jw_key(&x->w, "Input Dims");
    nnp__jw_arr_begin(&x->w);
    for (size_t i = 0; i < n_inputs; i++) {
        nnp__jw_arr_begin(&x->w);
        while (*p && *p != ';') {
            char *end;
            long long v = strtoll(p, &end, 10);
            if (end == p)
                break; /* not a number: the text is not ours; stop this field */
            nnp__jw_int(&x->w, v);
            p = *end == ',' ? end + 1 : end;
        }
        while (*p && *p != ';')
            p++;
        if (*p == ';')
            p++;
        nnp__jw_arr_end(&x->w);
    }
    nnp__jw_arr_end(&x->w);
}

static void write_types(kx_t *x, const char *dtypes)
{
    const char *p = dtypes;
    nnp__jw_key(&x->w, "Input type");
    nnp__jw_arr_begin(&x->w);
    for (;;) {
        const char *e = strchr(p, ';');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        nnp__jw_strn(&x->w, p, len);
        if (!e)
            break;
        p = e + 1;
    }
    nnp__jw_arr_end(&x->w);
}

/* "Call stack": the Python stack an op was called from (with_stack), as the Kineto of
 * PyTorch 1.8-1.10 wrote it and TensorBoard's plugin reads it (OperatorEvent.callstack):
 * the frames innermost first, each followed by ';' ("model.py(12): forward;train.py(30):
 * step;"). Our text has '\n' between frames. NNP_OK or NNP_ENOMEM. */
static int write_call_stack(kx_t *x, const char *stack)
{
    size_t n = strlen(stack);
    if (n + 1 > x->scratch_cap) {
        char *b = nnp__realloc(x->scratch, n + 1);
        if (!b)
            return nnp__fail(NNP_ENOMEM, "out of memory");
        x->scratch = b;
        x->scratch_cap = n + 1;
    }
    for (size_t k = 0; k < n; k++)
        x->scratch[k] = stack[k] == '\n' ? ';' : stack[k];
    x->scratch[n] = ';';
    nnp__jw_key(&x->w, "Call stack");
    nnp__jw_strn(&x->w, x->scratch, n + 1);
    return NNP_OK;
}

static int write_op(kx_t *x, size_t i)
{
    int rc = NNP_OK;
    const nnp_ops_t *o = &x->m->ops;
    const char *name = str(x, o->name[i]);
    const char *type = o->type[i] ? str(x, o->type[i]) : name;
    uint32_t th = o->thread[i];
    complete_begin(x, "cpu_op", type, thread_pid(x, th), thread_tid(x, th), o->start_ns[i],
                   o->end_ns[i]);
    if (x->op_ext)
        x->op_ext[i] = x->ext_id;
    if (o->seq_kind && o->seq_kind[i] != NNP_SEQ_NONE && o->seq_nr[i] >= 0) {
        key_int(x, "Sequence number", o->seq_nr[i]);
        key_uint(x, "Fwd thread id", o->seq_kind[i] == NNP_SEQ_BACKWARD ? o->seq_thread[i] : 0);
    }
    if (o->dtypes[i] || o->shapes[i]) {
        const char *dt = str(x, o->dtypes[i]);
        const char *sh = str(x, o->shapes[i]);
        write_dims(x, sh, o->dtypes[i] ? fields(dt) : fields(sh));
        if (o->dtypes[i])
            write_types(x, dt);
    }
    if (o->flops_matrix && (o->flops_matrix[i] || o->flops_vector[i]))
        key_uint(x, "flops", o->flops_matrix[i] + o->flops_vector[i]);
    if (o->stack && o->stack[i])
        rc = write_call_stack(x, str(x, o->stack[i]));
    /* With module scopes the name is "<module path>/<op>": Kineto's "Module Hierarchy". */
    if (o->type[i] && o->name[i] != o->type[i]) {
        size_t nl = strlen(name), tl = strlen(type);
        if (nl > tl + 1 && strcmp(name + nl - tl, type) == 0 && name[nl - tl - 1] == '/') {
            nnp__jw_key(&x->w, "Module Hierarchy");
            nnp__jw_strn(&x->w, name, nl - tl - 1);
        }
    }
    complete_end(x);
    return rc;
}

static int write_ops(kx_t *x)
{
    const nnp_ops_t *o = &x->m->ops;
    int rc = NNP_OK;
    for (size_t i = 0; i < o->t.n && rc == NNP_OK; i++) {
        if (keep(x, o->start_ns[i]))
            rc = write_op(x, i);
    }
    return rc;
}

/* ---- autograd links: Kineto's generateForwardBackwardLink ---- */

/* Key of a forward op: its thread's framework id and its sequence number. */
typedef struct fwd_slot {
    uint64_t key; /* 0 = empty */
    size_t op;
} fwd_slot_t;

static uint64_t fwd_key(uint32_t thread, int64_t seq)
{
    /* The thread id in the high bits, as Kineto's getForwardThreadKey; +1 keeps 0 free. */
    return ((uint64_t)thread << 48 | ((uint64_t)seq & 0xffffffffffffull)) + 1;
}

static size_t slot_of(const fwd_slot_t *tab, size_t cap, uint64_t key)
{
    size_t j = (size_t)(key * 0x9e3779b97f4a7c15ull) & (cap - 1);
    while (tab[j].key && tab[j].key != key)
        j = (j + 1) & (cap - 1);
    return j;
}

static void write_flow(kx_t *x, const char *ph, size_t op)
{
    const nnp_ops_t *o = &x->m->ops;
    uint32_t th = o->thread[op];
    event_begin(x, ph, "fwdbwd", "fwdbwd", thread_pid(x, th), thread_tid(x, th), o->start_ns[op]);
    key_uint(x, "id", x->flow_id);
    if (ph[0] == 'f')
        key_str(x, "bp", "e");
    nnp__jw_obj_end(&x->w);
}

static int write_flows(kx_t *x)
{
    const nnp_ops_t *o = &x->m->ops;
    size_t n_fwd = 0, cap = 16;
    fwd_slot_t *tab;
    if (!o->seq_kind)
        return NNP_OK;
    for (size_t i = 0; i < o->t.n; i++)
        n_fwd += o->seq_kind[i] == NNP_SEQ_FORWARD;
    while (cap < n_fwd * 2)
        cap *= 2;
    tab = nnp__calloc(cap, sizeof(*tab));
    if (!tab)
        return nnp__fail(NNP_ENOMEM, "out of memory linking backward ops");
    /* Among forward ops with one key, the latest to start launched the backward node
     * (the sequence number is taken when the autograd node is created). Ops are sorted
     * by start, so the last one seen wins. */
    for (size_t i = 0; i < o->t.n; i++) {
        if (o->seq_kind[i] != NNP_SEQ_FORWARD || !keep(x, o->start_ns[i]))
            continue;
        uint64_t key = fwd_key(o->seq_thread[i], o->seq_nr[i]);
        size_t j = slot_of(tab, cap, key);
        tab[j].key = key;
        tab[j].op = i;
    }
    for (size_t i = 0; i < o->t.n; i++) {
        if (o->seq_kind[i] != NNP_SEQ_BACKWARD || !keep(x, o->start_ns[i]))
            continue;
        size_t j = slot_of(tab, cap, fwd_key(o->seq_thread[i], o->seq_nr[i]));
        if (!tab[j].key)
            continue;
        x->flow_id++;
        write_flow(x, "s", tab[j].op);
        write_flow(x, "f", i);
    }
    nnp__free(tab);
    return NNP_OK;
}

/* ---- host ranges (user annotations) and steps ---- */

/* Host ranges as user_annotation events, in the order they end (host_pairs.h pairs them;
 * ranges never closed stay out, as torch drops unfinished ones). */
static int write_ranges(kx_t *x)
{
    const nnp_host_rows_t *h = &x->m->host;
    size_t n_threads = x->m->threads.t.n + 1, *begin_of;
    int rc = nnp__host_pairs(h, x->m->threads.t.n, &begin_of);
    for (size_t i = 0; i < h->t.n && rc == NNP_OK; i++) {
        size_t b = begin_of[i];
        uint32_t th = h->thread[i] < n_threads ? h->thread[i] : 0;
        if (b == NNP_HOST_NO_PAIR || !keep(x, h->ts_ns[b]))
            continue;
        complete_begin(x, "user_annotation", str(x, h->event[b]), thread_pid(x, th),
                       thread_tid(x, th), h->ts_ns[b], h->ts_ns[i]);
        complete_end(x);
    }
    nnp__free(begin_of);
    return rc;
}

static bool step_selected(const nnp_kineto_opts_t *o, uint64_t id)
{
    return !o->has_steps || (id >= o->step_first && id <= o->step_last);
}

static void write_steps(kx_t *x, const nnp_kineto_opts_t *o)
{
    const nnp_spans_t *s = &x->m->steps;
    char name[NUM_BUF + 16];
    for (size_t i = 0; i < s->t.n; i++) {
        if (!step_selected(o, s->id[i]) || s->end_ns[i] == NNP_OPEN_END)
            continue;
        snprintf(name, sizeof(name), "ProfilerStep#%llu", (unsigned long long)s->id[i]);
        complete_begin(x, "user_annotation", name, x->pid, x->pid, s->start_ns[i], s->end_ns[i]);
        complete_end(x);
    }
}

/* ---- communication ---- */

/* "default_pg(ranks=0-1)" -> name "default_pg", ranks [0, 1] (the group text the torch
 * shim records); another text is the name, with no ranks. */
static void write_group(kx_t *x, const char *group)
{
    const char *open = strstr(group, "(ranks=");
    const char *p;
    size_t listed = 0;
    nnp__jw_key(&x->w, "Process Group Name");
    nnp__jw_strn(&x->w, group, open ? (size_t)(open - group) : strlen(group));
    if (!open)
        return;
    nnp__jw_key(&x->w, "Process Group Ranks");
    nnp__jw_arr_begin(&x->w);
    for (p = open + strlen("(ranks="); *p && *p != ')';) {
        char *end;
        long long a = strtoll(p, &end, 10), b;
        if (end == p)
            break;
        b = a;
        if (*end == '-') {
            p = end + 1;
            b = strtoll(p, &end, 10);
            if (end == p)
                break;
        }
        for (long long r = a; r <= b && listed < MAX_LISTED_RANKS; r++, listed++)
            nnp__jw_int(&x->w, r);
        p = *end == ',' ? end + 1 : end;
    }
    nnp__jw_arr_end(&x->w);
}

static const char *backend_of(const kx_t *x)
{
    static char backend[NUM_BUF];
    const nnp_comms_t *c = &x->m->comms;
    for (size_t i = 0; i < c->t.n; i++) {
        const char *n = str(x, c->name[i]), *colon = strchr(n, ':');
        if (colon && (size_t)(colon - n) < sizeof(backend)) {
            memcpy(backend, n, (size_t)(colon - n));
            backend[colon - n] = '\0';
            return backend;
        }
    }
    return "";
}

static void write_comms(kx_t *x)
{
    const nnp_comms_t *c = &x->m->comms;
    for (size_t i = 0; i < c->t.n; i++) {
        uint32_t th = c->thread[i];
        if (!keep(x, c->start_ns[i]) || nnp__kx_comm_on_device(x, i))
            continue;
        complete_begin(x, "user_annotation", str(x, c->name[i]), thread_pid(x, th),
                       thread_tid(x, th), c->start_ns[i], c->end_ns[i]);
        key_str(x, "Collective name", nnp_comm_kind_name((nnp_comm_kind_t)c->kind[i]));
        key_uint(x, "Bytes", c->bytes[i]);
        if (c->peer[i] >= 0)
            key_int(x, "Peer rank", c->peer[i]);
        if (c->group[i])
            write_group(x, str(x, c->group[i]));
        complete_end(x);
    }
}

/* ---- memory ---- */

static void write_memory(kx_t *x)
{
    const nnp_mem_events_t *e = &x->m->mem;
    int64_t total = 0;
    for (size_t i = 0; i < e->t.n; i++) {
        uint32_t th = e->thread[i];
        int64_t bytes = (int64_t)e->bytes[i];
        total += e->is_alloc[i] ? bytes : -bytes;
        if (!keep(x, e->ts_ns[i]))
            continue;
        event_begin(x, "i", "cpu_instant_event", "[memory]", thread_pid(x, th), thread_tid(x, th),
                    e->ts_ns[i]);
        key_str(x, "s", "t");
        nnp__jw_key(&x->w, "args");
        nnp__jw_obj_begin(&x->w);
        key_int(x, "Device Type", KINETO_DEVICE_CPU);
        key_int(x, "Device Id", KINETO_DEVICE_ID_CPU);
        key_uint(x, "Addr", e->address[i]);
        key_int(x, "Bytes", e->is_alloc[i] ? bytes : -bytes);
        key_int(x, "Total Allocated", total);
        key_int(x, "Total Reserved", 0); /* c10's CPU allocator keeps no pool */
        key_uint(x, "Ev Idx", x->ev_idx++);
        nnp__jw_obj_end(&x->w);
        nnp__jw_obj_end(&x->w);
    }
}

/* ---- metadata ---- */

static void write_thread_names(kx_t *x)
{
    const nnp_threads_t *t = &x->m->threads;
    char label[NNP_NAME_MAX + NUM_BUF + 16];
    write_meta_event(x, "process_name", x->pid, 0, "name", "python");
    write_meta_event(x, "process_labels", x->pid, 0, "labels", "CPU");
    for (size_t i = 0; i < t->t.n; i++) {
        const char *n = t->name[i] ? str(x, t->name[i]) : "";
        uint64_t pid = t->pid[i] ? t->pid[i] : x->pid;
        if (pid != x->pid)
            write_meta_event(x, "process_name", pid, 0, "name", "python");
        snprintf(label, sizeof(label), *n ? "thread %llu (%s)" : "thread %llu",
                 (unsigned long long)t->tid[i], n);
        write_meta_event(x, "thread_name", pid, t->tid[i], "name", label);
    }
}

/* Splices the members of a JSON object given by the caller (torch's add_metadata) into the
 * top level. */
static int write_user_metadata(kx_t *x, const char *json)
{
    cJSON *root, *it;
    if (!json || !*json)
        return NNP_OK;
    root = cJSON_Parse(json);
    if (!root || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return nnp__fail(NNP_EINVAL, "trace metadata is not a JSON object");
    }
    for (it = root->child; it; it = it->next) {
        char *v = cJSON_PrintUnformatted(it);
        if (!v) {
            cJSON_Delete(root);
            return nnp__fail(NNP_ENOMEM, "out of memory writing trace metadata");
        }
        nnp__jw_key(&x->w, it->string ? it->string : "");
        nnp__jw_raw(&x->w, v);
        cJSON_free(v);
    }
    cJSON_Delete(root);
    return NNP_OK;
}

/* The time span of the selected steps, for the filter (an empty span when none). */
static void step_bounds(kx_t *x, const nnp_kineto_opts_t *o)
{
    x->filter = o->has_steps;
    if (x->filter)
        (void)nnp__step_range_bounds(x->m, o->step_first, o->step_last, &x->lo, &x->hi);
}

static int64_t min_time(int64_t lo, const int64_t *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        lo = t[i] < lo ? t[i] : lo;
    return lo;
}

/* The base of the trace: its earliest event's wall clock floored to Kineto's interval, so
 * that no ts is negative (Kineto clamps those to 0); 0 for a run of no events or of times
 * before the epoch's first interval (synthetic and imported runs starting at 0). */
static int64_t trace_base_ns(const kx_t *x)
{
    const nnp_model_t *m = x->m;
    const int64_t interval = KINETO_BASE_INTERVAL_S * NS_PER_S;
    int64_t lo = INT64_MAX, wall;
    lo = min_time(lo, m->ops.start_ns, m->ops.t.n);
    lo = min_time(lo, m->host.ts_ns, m->host.t.n);
    lo = min_time(lo, m->steps.start_ns, m->steps.t.n);
    lo = min_time(lo, m->comms.start_ns, m->comms.t.n);
    lo = min_time(lo, m->mem.ts_ns, m->mem.t.n);
    lo = min_time(lo, m->kernels.start_ns, m->kernels.t.n);
    lo = min_time(lo, m->calls.start_ns, m->calls.t.n);
    if (lo == INT64_MAX || !nnp__i64_add(lo, x->wall_off_ns, &wall) || wall < interval)
        return 0;
    return wall / interval * interval;
}

void nnp__kineto_opts_init(nnp_kineto_opts_t *o)
{
    memset(o, 0, sizeof(*o));
}

int nnp__kineto_write(const nnp_model_t *m, int fd, const nnp_kineto_opts_t *o)
{
    kx_t x;
    int rc;
    memset(&x, 0, sizeof(x));
    x.m = m;
    x.wall_off_ns = m->info.diff_time_us * NS_PER_US;
    x.pid = m->info.pid > 0 ? (uint64_t)m->info.pid : 0;
    x.base_ns = trace_base_ns(&x);
    x.cuda_sync = o->cuda_sync;
    if ((m->kernels.t.n || m->calls.t.n) && m->ops.t.n &&
        !(x.op_ext = nnp__calloc(m->ops.t.n, sizeof(uint64_t))))
        return nnp__fail(NNP_ENOMEM, "out of memory");
    step_bounds(&x, o);
    rc = nnp__kx_gpu_prepare(&x);
    if (rc == NNP_OK)
        rc = nnp__jw_init(&x.w, fd, o->pretty, 0);
    if (rc != NNP_OK) {
        nnp__free(x.op_ext);
        nnp__free(x.lanes);
        return rc;
    }
    nnp__jw_obj_begin(&x.w);
    key_int(&x, "schemaVersion", 1);
    /* Before the events (Kineto writes it after them), so that a streaming reader knows
     * the base of every ts it meets. */
    key_int(&x, "baseTimeNanoseconds", x.base_ns);
    nnp__kx_write_device_properties(&x);
    if (m->info.rank_size > 1 || m->comms.t.n > 0) {
        nnp__jw_key(&x.w, "distributedInfo");
        nnp__jw_obj_begin(&x.w);
        key_str(&x, "backend", backend_of(&x));
        key_int(&x, "rank", m->info.rank_id);
        key_int(&x, "world_size", m->info.rank_size);
        nnp__jw_obj_end(&x.w);
    }
    rc = write_user_metadata(&x, o->metadata_json);
    nnp__jw_key(&x.w, "traceEvents");
    nnp__jw_arr_begin(&x.w);
    if (rc == NNP_OK) {
        write_thread_names(&x);
        nnp__kx_write_gpu_names(&x);
        write_steps(&x, o);
        rc = write_ops(&x);
    }
    if (rc == NNP_OK)
        rc = write_ranges(&x);
    if (rc == NNP_OK) {
        write_comms(&x);
        write_memory(&x);
        rc = write_flows(&x);
    }
    if (rc == NNP_OK)
        rc = nnp__kx_write_gpu(&x);
    nnp__jw_arr_end(&x.w);
    key_str(&x, "displayTimeUnit", "ms");
    nnp__jw_obj_end(&x.w);
    nnp__jw_line_end(&x.w);
    if (rc == NNP_OK)
        rc = nnp__jw_flush(&x.w);
    else
        (void)nnp__jw_flush(&x.w);
    nnp__jw_fini(&x.w);
    nnp__free(x.scratch);
    nnp__free(x.op_ext);
    nnp__free(x.lanes);
    return rc;
}

int nnp_export_kineto(const char *raw_dir, const char *out_path, const nnp_analyse_options_t *ao,
                      const char *metadata_json)
{
    char dir[NNP_PATH_MAX];
    const char *slash, *base;
    nnp_kineto_opts_t o;
    nnp_outfile_t f;
    nnp_model_t m;
    int rc;

    if (!raw_dir || !out_path || !*out_path)
        return nnp__fail(NNP_EINVAL, "nnp_export_kineto: NULL argument");
    slash = strrchr(out_path, '/');
    base = slash ? slash + 1 : out_path;
    if (!*base)
        return nnp__fail(NNP_EPATH, "'%s' names a directory, not a trace file", out_path);
    if (!nnp__strlcpy(dir, out_path, sizeof(dir)))
        return nnp__fail(NNP_ETOOLONG, "path too long: %s", out_path);
    if (slash)
        dir[slash == out_path ? 1 : (size_t)(slash - out_path)] = '\0';
    else
        nnp__strlcpy(dir, ".", sizeof(dir));
    nnp__kineto_opts_init(&o);
    if (ao) {
        o.has_steps = ao->has_steps;
        o.step_first = ao->step_first;
        o.step_last = ao->step_last;
        o.pretty = ao->pretty;
        o.cuda_sync = ao->kineto_cuda_sync;
    }
    o.metadata_json = metadata_json;
    rc = nnp__model_init(&m);
    if (rc != NNP_OK)
        return nnp__fail(rc, "out of memory");
    rc = nnp__import_raw(raw_dir, &m);
    if (rc == NNP_OK)
        rc = nnp__out_open(&f, dir, base);
    if (rc == NNP_OK) {
        rc = nnp__kineto_write(&m, f.fd, &o);
        rc = nnp__out_commit(&f, rc);
    }
    nnp__model_fini(&m);
    return rc;
}
