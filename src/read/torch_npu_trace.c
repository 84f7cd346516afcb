/* torch_npu_trace.c - trace_view.json of torch_npu (torch_npu.h), streamed twice: pass 1
 * takes process and thread names and the HostToDevice flows (a task's launch), pass 2 the
 * events. Python cpu_op -> ops (ProfilerStep#N -> steps); "Ascend Hardware" tasks of a
 * compute type -> kernels (the other task types are parts of HCCL ops or synchronisation:
 * counted and skipped, as the CANN importer does); HCCL op-level events -> comms. Durations
 * keep their sub-ns digits (kernels.end_ps), as torch_npu's own totals do. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnprof/nnprof.h"
#include "read/foreign.h"
#include "read/json_stream.h"
#include "read/torch_npu.h"
#include "util/checked.h"
#include "util/util.h"

/* Thread names remembered in pass 1 (the HCCL process has a handful: planes and groups). */
#define MAX_THREADS 1024
/* "Group <name> Communication": the HCCL thread of one communicator's op-level events. */
#define GROUP_PREFIX  "Group "
#define GROUP_SUFFIX  " Communication"
#define FLOW_CAT      "HostToDevice"
#define LAUNCH_NAME   "HostToDevice"
#define PS_PER_NS     1000
#define US_PS_DIGITS  6
#define NUM_TEXT_MAX  64
#define DBL_MAX_DIGIT 17

typedef enum proc_kind { PK_OTHER, PK_PYTHON, PK_HARDWARE, PK_HCCL } proc_kind_t;

typedef struct thread_name {
    int64_t pid, tid;
    uint32_t group; /* model string id of the communicator group, 0 = none */
} thread_name_t;

typedef struct tv {
    nnp_model_t *m;
    const char *path;
    const nnp_flow_map_t *kd; /* (stream, start) -> kernel_details op type, or NULL */
    int64_t pid[MAX_PROCS];
    proc_kind_t kind[MAX_PROCS];
    size_t n_procs;
    thread_name_t threads[MAX_THREADS];
    size_t n_threads;
    nnp_flow_map_t flows; /* HostToDevice flow ends (pid, tid, ts) -> flow id */
    uint64_t bad, warnings, n_skipped_tasks, n_kernels, n_comms, n_typed;
    int rc;
} tv_t;

static const cJSON *get(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

static bool str_is(const cJSON *v, const char *s)
{
    return cJSON_IsString(v) && v->valuestring && strcmp(v->valuestring, s) == 0;
}

static bool json_i64(const cJSON *v, int64_t *out)
{
    return nnp__foreign_json_int(v, out);
}

/* The model's pid is 32-bit: a larger or negative one (not an OS pid) is unknown (0). */
static uint32_t model_pid(int64_t pid)
{
    return pid >= 0 && pid <= UINT32_MAX ? (uint32_t)pid : 0;
}

static int oom(tv_t *t)
{
    t->rc = nnp__fail(NNP_ENOMEM, "out of memory importing '%s'", t->path);
    return t->rc;
}

static void NNP_PRINTF(3, 4) ev_warn(tv_t *t, uint64_t index, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    t->bad++;
    if (++t->warnings > MAX_ROW_WARNINGS)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    NNP_LOG_W("torch_npu import: '%s' event %llu: %s", t->path, (unsigned long long)index, msg);
}

/* A duration in µs as ps, keeping the sub-ns digits torch_npu writes ("dur": 1.2695). */
static bool json_us_ps(const cJSON *v, int64_t *out)
{
    char text[NUM_TEXT_MAX];
    int64_t ns;
    if (cJSON_IsString(v) && v->valuestring)
        return nnp__parse_decimal_ns(v->valuestring, US_PS_DIGITS, out);
    if (!cJSON_IsNumber(v))
        return false;
    for (int p = 1; p <= DBL_MAX_DIGIT; p++) { /* the shortest text that reads back */
        snprintf(text, sizeof(text), "%.*g", p, v->valuedouble);
        if (strtod(text, NULL) == v->valuedouble)
            break;
    }
    if (!strchr(text, 'e') && !strchr(text, 'E') && nnp__parse_decimal_ns(text, US_PS_DIGITS, out))
        return true;
    if (!nnp__foreign_json_us_ns(v, &ns) || ns > INT64_MAX / PS_PER_NS || ns < 0)
        return false;
    *out = ns * PS_PER_NS;
    return true;
}

/* ---- pass 1: names and flows ---- */

/* "Group 7 Communication" -> "7"; other names give 0. */
static uint32_t group_of(nnp_model_t *m, const char *name)
{
    size_t n = strlen(name), p = strlen(GROUP_PREFIX), s = strlen(GROUP_SUFFIX);
    if (n <= p + s || strncmp(name, GROUP_PREFIX, p) != 0 || strcmp(name + n - s, GROUP_SUFFIX))
        return 0;
    return nnp__model_intern(m, name + p, n - p - s);
}

static int meta_cb(void *user, const cJSON *e, uint64_t index)
{
    tv_t *t = user;
    const cJSON *ph = get(e, "ph"), *name = get(e, "name"), *args = get(e, "args");
    const cJSON *aname = get(args, "name");
    int64_t pid = 0, tid = 0, ts;
    (void)index;
    if (!cJSON_IsString(ph))
        return NNP_OK;
    json_i64(get(e, "pid"), &pid);
    json_i64(get(e, "tid"), &tid);
    if (strcmp(ph->valuestring, "M") == 0 && str_is(name, "process_name") &&
        cJSON_IsString(aname) && t->n_procs < MAX_PROCS) {
        const char *s = aname->valuestring;
        t->pid[t->n_procs] = pid;
        t->kind[t->n_procs] = strcmp(s, PROC_PYTHON) == 0                     ? PK_PYTHON
                              : strcmp(s, PROC_HARDWARE) == 0                 ? PK_HARDWARE
                              : strncmp(s, PROC_HCCL, strlen(PROC_HCCL)) == 0 ? PK_HCCL
                                                                              : PK_OTHER;
        t->n_procs++;
    } else if (strcmp(ph->valuestring, "M") == 0 && str_is(name, "thread_name") &&
               cJSON_IsString(aname) && t->n_threads < MAX_THREADS) {
        uint32_t g = group_of(t->m, aname->valuestring);
        if (g)
            t->threads[t->n_threads++] = (thread_name_t){pid, tid, g};
    } else if (strcmp(ph->valuestring, "s") == 0 && str_is(get(e, "cat"), FLOW_CAT)) {
        /* A task's launch: the host API call the flow starts on, a calls row whose launch
         * id the task's kernel gets in pass 2 (kind OTHER: the flow names no API). */
        nnp_model_t *m = t->m;
        int64_t id;
        size_t i, th;
        if (!json_i64(get(e, "id"), &id) || id <= 0 || !nnp__foreign_json_us_ns(get(e, "ts"), &ts))
            return NNP_OK;
        th = nnp__model_thread(m, (uint64_t)tid, model_pid(pid));
        if (th == SIZE_MAX || (i = nnp__table_push(&m->calls.t)) == SIZE_MAX)
            return oom(t);
        m->calls.start_ns[i] = m->calls.end_ns[i] = ts;
        m->calls.name[i] = nnp__model_intern_cstr(m, LAUNCH_NAME);
        m->calls.thread[i] = (uint32_t)th;
        m->calls.launch[i] = (uint64_t)id;
    } else if (strcmp(ph->valuestring, "f") == 0 && str_is(get(e, "cat"), FLOW_CAT)) {
        int64_t id;
        if (json_i64(get(e, "id"), &id) && id > 0 && nnp__foreign_json_us_ns(get(e, "ts"), &ts) &&
            nnp__flow_put(&t->flows, nnp__flow_key((uint64_t)pid, (uint64_t)tid, ts),
                          (uint64_t)id) != NNP_OK)
            return oom(t);
    }
    return NNP_OK;
}

static proc_kind_t proc_of(const tv_t *t, int64_t pid)
{
    for (size_t i = 0; i < t->n_procs; i++)
        if (t->pid[i] == pid)
            return t->kind[i];
    return PK_OTHER;
}

static uint32_t thread_group(const tv_t *t, int64_t pid, int64_t tid)
{
    for (size_t i = 0; i < t->n_threads; i++)
        if (t->threads[i].pid == pid && t->threads[i].tid == tid)
            return t->threads[i].group;
    return 0;
}

/* ---- pass 2: events ---- */

/* Bytes of one element of an HCCL data type ("FP16", "INT8", "BFP16", ...); 0 unknown. */
static uint64_t hccl_dtype_bytes(const char *t)
{
    static const struct {
        const char *name;
        uint64_t bytes;
    } map[] = {{"INT8", 1},  {"UINT8", 1},  {"HIF8", 1}, {"FP8E4M3", 1}, {"FP8E5M2", 1},
               {"INT16", 2}, {"UINT16", 2}, {"FP16", 2}, {"BFP16", 2},   {"BF16", 2},
               {"INT32", 4}, {"UINT32", 4}, {"FP32", 4}, {"INT64", 8},   {"UINT64", 8},
               {"FP64", 8},  {"INT128", 16}};
    for (size_t i = 0; i < NNP_ARRAY_LEN(map); i++)
        if (strcasecmp(t, map[i].name) == 0)
            return map[i].bytes;
    return 0;
}

static int add_step(tv_t *t, const char *name, int64_t ts, int64_t dur, uint64_t index)
{
    nnp_model_t *m = t->m;
    char *end;
    unsigned long long id = strtoull(name + strlen(STEP_PREFIX), &end, 10);
    size_t i;
    if (end == name + strlen(STEP_PREFIX) || *end) {
        ev_warn(t, index, "step name '%s' has no number: skipped", name);
        return NNP_OK;
    }
    if ((i = nnp__table_push(&m->steps.t)) == SIZE_MAX)
        return oom(t);
    m->steps.id[i] = id;
    m->steps.start_ns[i] = ts;
    m->steps.end_ns[i] = ts + dur;
    return NNP_OK;
}

static int add_op(tv_t *t, const char *name, int64_t pid, int64_t tid, int64_t ts, int64_t dur)
{
    nnp_model_t *m = t->m;
    size_t th = nnp__model_thread(m, tid >= 0 ? (uint64_t)tid : 0, model_pid(pid)), i;
    if (th == SIZE_MAX || (i = nnp__table_push(&m->ops.t)) == SIZE_MAX)
        return oom(t);
    m->ops.start_ns[i] = ts;
    m->ops.end_ns[i] = ts + dur;
    m->ops.name[i] = nnp__model_intern_cstr(m, name);
    m->ops.type[i] = m->ops.name[i];
    m->ops.thread[i] = (uint32_t)th;
    return NNP_OK;
}

/* Sets a row's end from its start and a duration in ps, keeping the ps beyond the ns. */
static int set_end(tv_t *t, int64_t ts, int64_t dur_ps, int64_t *end_ns, uint16_t **end_ps,
                   size_t i)
{
    *end_ns = ts + dur_ps / PS_PER_NS;
    if (dur_ps % PS_PER_NS) {
        if (nnp__model_want_end_ps(t->m) != NNP_OK)
            return oom(t);
        (*end_ps)[i] = (uint16_t)(dur_ps % PS_PER_NS);
    }
    return NNP_OK;
}

/* An "Ascend Hardware" task: a kernel when its type is compute (foreign.h's Ascend table). */
static int add_task(tv_t *t, const cJSON *e, const char *name, int64_t pid, int64_t tid, int64_t ts,
                    int64_t dur_ps)
{
    nnp_model_t *m = t->m;
    const cJSON *args = get(e, "args"), *tt = get(args, "Task Type");
    int64_t stream = tid;
    size_t i;
    if (!cJSON_IsString(tt) || !nnp__ascend_is_compute_task(tt->valuestring)) {
        t->n_skipped_tasks++;
        return NNP_OK;
    }
    json_i64(get(args, "Stream Id"), &stream);
    if ((i = nnp__table_push(&m->kernels.t)) == SIZE_MAX)
        return oom(t);
    m->kernels.start_ns[i] = ts;
    if (set_end(t, ts, dur_ps, &m->kernels.end_ns[i], &m->kernels.end_ps, i) != NNP_OK)
        return t->rc;
    m->kernels.name[i] = nnp__model_intern_cstr(m, name);
    m->kernels.type[i] = nnp__model_intern_cstr(m, tt->valuestring);
    m->kernels.stream_id[i] = stream >= 0 && stream <= UINT32_MAX ? (uint32_t)stream : 0;
    m->kernels.launch[i] =
        nnp__flow_get(&t->flows, nnp__flow_key((uint64_t)pid, (uint64_t)tid, ts));
    if (t->kd) {
        uint64_t v = nnp__flow_get(t->kd, nnp__flow_key(0, m->kernels.stream_id[i], ts));
        m->kernels.op_type[i] = (uint32_t)(v >> 32);
        t->n_typed += v != 0;
    }
    t->n_kernels++;
    return NNP_OK;
}

/* An HCCL op-level event (the "Communication Kernel" / "Group <g> Communication" threads;
 * per-plane tasks carry a notify_id and make up the op: left out). */
static int add_comm(tv_t *t, const cJSON *e, const char *name, int64_t pid, int64_t tid, int64_t ts,
                    int64_t dur_ps)
{
    nnp_model_t *m = t->m;
    const cJSON *args = get(e, "args"), *g = get(args, "group"), *dt = get(args, "data_type");
    int64_t stream = 0, count;
    size_t i;
    if (get(args, "notify_id"))
        return NNP_OK;
    if ((i = nnp__table_push(&m->comms.t)) == SIZE_MAX)
        return oom(t);
    m->comms.start_ns[i] = ts;
    if (set_end(t, ts, dur_ps, &m->comms.end_ns[i], &m->comms.end_ps, i) != NNP_OK)
        return t->rc;
    m->comms.name[i] = nnp__model_intern_cstr(m, name);
    m->comms.kind[i] = nnp__foreign_comm_kind(name);
    if (json_i64(nnp__foreign_get_any(args, (const char *const[]){"Stream Id", "stream id", NULL}),
                 &stream) &&
        stream >= 0 && stream <= UINT32_MAX)
        m->comms.stream_id[i] = (uint32_t)stream;
    m->comms.group[i] =
        cJSON_IsString(g) ? nnp__model_intern_cstr(m, g->valuestring) : thread_group(t, pid, tid);
    m->comms.peer[i] = -1;
    /* Message size = count x the data type's size, when the event names both. */
    if (cJSON_IsString(dt) && json_i64(get(args, "count"), &count) && count > 0)
        m->comms.bytes[i] = (uint64_t)count * hccl_dtype_bytes(dt->valuestring);
    t->n_comms++;
    return NNP_OK;
}

static int event_cb(void *user, const cJSON *e, uint64_t index)
{
    tv_t *t = user;
    const cJSON *ph = get(e, "ph"), *name = get(e, "name"), *cat = get(e, "cat");
    int64_t pid, tid = 0, ts, dur_ps, end;
    proc_kind_t pk;

    if (!str_is(ph, "X") || !json_i64(get(e, "pid"), &pid))
        return NNP_OK;
    pk = proc_of(t, pid);
    if (pk == PK_OTHER)
        return NNP_OK;
    json_i64(get(e, "tid"), &tid);
    if (!cJSON_IsString(name) || !nnp__foreign_json_us_ns(get(e, "ts"), &ts) ||
        !json_us_ps(get(e, "dur"), &dur_ps) || dur_ps < 0 ||
        !nnp__i64_add(ts, dur_ps / PS_PER_NS, &end)) {
        ev_warn(t, index, "an X event without a name, or with a bad 'ts' or 'dur': skipped");
        return NNP_OK;
    }
    if (pk == PK_PYTHON) {
        if (!str_is(cat, CAT_CPU_OP))
            return NNP_OK;
        if (strncmp(name->valuestring, STEP_PREFIX, strlen(STEP_PREFIX)) == 0)
            return add_step(t, name->valuestring, ts, dur_ps / PS_PER_NS, index);
        return add_op(t, name->valuestring, pid, tid, ts, dur_ps / PS_PER_NS);
    }
    if (pk == PK_HARDWARE)
        return add_task(t, e, name->valuestring, pid, tid, ts, dur_ps);
    return add_comm(t, e, name->valuestring, pid, tid, ts, dur_ps);
}

/* Reports what the stream met: a truncated file or bad elements are logged. */
static void stream_report(const tv_t *t, const nnp_json_stream_report_t *rep)
{
    nnp__foreign_log_stream("torch_npu import", t->path, rep);
    if (t->warnings > MAX_ROW_WARNINGS)
        NNP_LOG_W("torch_npu import: '%s': %llu more bad events not logged", t->path,
                  (unsigned long long)(t->warnings - MAX_ROW_WARNINGS));
    NNP_LOG_I("torch_npu import: '%s': %llu compute tasks (%llu typed by kernel_details.csv), "
              "%llu other tasks skipped (HCCL parts, synchronisation), %llu communication ops",
              t->path, (unsigned long long)t->n_kernels, (unsigned long long)t->n_typed,
              (unsigned long long)t->n_skipped_tasks, (unsigned long long)t->n_comms);
}

int nnp__tnpu_import_trace_view(const char *path, nnp_model_t *m, const nnp_flow_map_t *kd)
{
    tv_t *t = nnp__calloc(1, sizeof(tv_t));
    nnp_json_stream_report_t rep;
    int rc;
    if (!t)
        return nnp__fail(NNP_ENOMEM, "out of memory importing '%s'", path);
    t->m = m;
    t->path = path;
    t->kd = kd;
    rc = nnp__json_stream_array(path, meta_cb, t, &rep);
    if (rc == NNP_OK && t->rc == NNP_OK)
        rc = nnp__json_stream_array(path, event_cb, t, &rep);
    nnp__flow_fini(&t->flows);
    if (t->rc != NNP_OK || rc != NNP_OK) {
        rc = t->rc != NNP_OK ? t->rc : rc;
        if (rc != NNP_ENOMEM)
            NNP_LOG_W("torch_npu import: cannot read '%s': %s", path, nnp_last_error());
        nnp__free(t);
        return rc;
    }
    stream_report(t, &rep);
    nnp__free(t);
    if (rep.no_array)
        return nnp__fail(NNP_ECORRUPT, "'%s' holds no event array", path);
    return NNP_OK;
}
