/* import_kineto.c - importer of PyTorch profiler traces (issue #15): Kineto's
 * *.pt.trace.json[.gz] (torch.profiler export_chrome_trace / tensorboard_trace_handler, and
 * Nsight-derived Kineto JSON) and the legacy autograd profiler's array of "CPU functions".
 * The file is streamed one event at a time (json_stream.h, gzip through zlib), so memory is
 * the model's, never the document's. Mapping of events to tables: docs/IMPORT.md, "PyTorch /
 * Kineto traces". A bad event is logged (file, event index, key, why) and skipped. Which
 * files are traces, and their ranks: kineto_find.c. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnprof/nnprof.h"
#include "read/foreign.h"
#include "read/importers.h"
#include "read/json_stream.h"
#include "read/kineto_find.h"
#include "read/kineto_links.h"
#include "read/kineto_stacks.h"
#include "read/kineto_time.h"
#include "util/checked.h"
#include "util/util.h"

/* Steps as torch.profiler's schedule names them. */
#define STEP_PREFIX "ProfilerStep#"
/* Kineto's event categories (libkineto ActivityType names, as the JSON spells them). */
#define CAT_CPU_OP          "cpu_op"
#define CAT_USER_ANNOTATION "user_annotation"
#define CAT_RUNTIME         "cuda_runtime"
#define CAT_DRIVER          "cuda_driver"
#define CAT_KERNEL          "kernel"
#define CAT_MEMCPY          "gpu_memcpy"
#define CAT_MEMSET          "gpu_memset"
#define CAT_FLOW            "ac2g"
#define CAT_INSTANT         "cpu_instant_event"
#define CAT_PYTHON          "python_function"
#define CAT_FWDBWD          "fwdbwd"
/* The autograd node that accumulates a leaf's gradient (torch/csrc/autograd/functions/
 * accumulate_grad.h), as RecordFunction names it; MSVC builds prefix "struct ". */
#define ACCUMULATE_GRAD "torch::autograd::AccumulateGrad"
#define STRUCT_PREFIX   "struct "
#define MEMORY_EVENT    "[memory]"
/* Kernel type strings in the model (what overlap.c and HTA's rules read). */
#define TYPE_KERNEL "KERNEL"
#define TYPE_MEMCPY "MEMCPY"
#define TYPE_MEMSET "MEMSET"
/* Collective kernels of NCCL ("ncclKernel_...", "ncclDevKernel_...") are communication. */
#define NCCL_TAG "nccl"
/* Bad events logged one by one per file; the rest are counted in one line. */
#define MAX_EVENT_WARNINGS 20
/* Kernels without a "correlation" arg remembered for the flows, first capacity. */
#define UNLINKED_INITIAL 256
/* Bytes of one element of the dtypes PyTorch names in NCCL kernel args ("Float", ...). */
#define DTYPE_MAX_BYTES 8

typedef struct kin {
    nnp_model_t *m;
    const char *path;
    uint64_t bad, warnings;
    uint64_t n_ops, n_steps, n_markers, n_launches, n_kernels, n_comms, n_mem, n_skipped;
    uint64_t n_python;
    nnp_kin_stacks_t py;    /* python_function events: the ops' stacks (with_stack) */
    nnp_kin_links_t fwdbwd; /* fwdbwd flows: the forward ops' thread ids */
    nnp_flow_map_t flows;   /* ac2g flow ends (pid, tid, ts) -> correlation id */
    size_t *unlinked;       /* kernel rows without a correlation arg */
    size_t n_unlinked, unlinked_cap;
    uint64_t *unlinked_key;
    bool have_rank;
    bool has_base;   /* the file has "baseTimeNanoseconds" (Kineto >= PyTorch 2.1) */
    int64_t base_ns; /* ... its value: what ts 0 stands for */
    int rc;          /* first hard error (out of memory) */
} kin_t;

/* ---- small helpers ---- */

static const cJSON *get(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

static bool str_is(const cJSON *v, const char *s)
{
    return cJSON_IsString(v) && v->valuestring && strcmp(v->valuestring, s) == 0;
}

/* A non-negative integer from a number or a numeric string; a string that is not a number
 * (Kineto writes thread names such as "stream 7 " in some versions) gives its digits. */
static bool json_u64(const cJSON *v, uint64_t *out)
{
    int64_t x;
    if (nnp__foreign_json_int(v, &x) && x >= 0) {
        *out = (uint64_t)x;
        return true;
    }
    if (cJSON_IsString(v) && v->valuestring) {
        const char *p = v->valuestring;
        while (*p && !isdigit((unsigned char)*p))
            p++;
        if (*p) {
            *out = strtoull(p, NULL, 10);
            return true;
        }
    }
    return false;
}

static void NNP_PRINTF(4, 5)
    bad_event(kin_t *k, uint64_t index, const char *name, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    k->bad++;
    if (++k->warnings > MAX_EVENT_WARNINGS)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    NNP_LOG_W("kineto import: '%s' event #%llu ('%s'): %s: skipped", k->path,
              (unsigned long long)index, name ? name : "", msg);
}

static int oom(kin_t *k)
{
    k->rc = nnp__fail(NNP_ENOMEM, "out of memory importing '%s'", k->path);
    return k->rc;
}

/* Thread index of an event's (pid, tid); pids may be strings ("CPU functions"). */
static size_t thread_of(kin_t *k, const cJSON *e)
{
    uint64_t pid = 0, tid = 0;
    json_u64(get(e, "pid"), &pid);
    json_u64(get(e, "tid"), &tid);
    return nnp__model_thread(k->m, tid, (uint32_t)pid);
}

/* Bytes per element of a PyTorch dtype name as NCCL kernel args spell it ("Float",
 * "BFloat16", "Long", ...); 0 when unknown. */
static uint64_t dtype_bytes(const char *t)
{
    static const struct {
        const char *name;
        uint64_t bytes;
    } map[] = {{"Double", 8}, {"Long", 8},          {"ComplexFloat", 8}, {"Float", 4}, {"Int", 4},
               {"Half", 2},   {"BFloat16", 2},      {"Short", 2},        {"Byte", 1},  {"Char", 1},
               {"Bool", 1},   {"Float8_e4m3fn", 1}, {"Float8_e5m2", 1}};
    for (size_t i = 0; i < NNP_ARRAY_LEN(map); i++)
        if (strcmp(t, map[i].name) == 0)
            return map[i].bytes <= DTYPE_MAX_BYTES ? map[i].bytes : 0;
    return 0;
}

/* ---- flows (ac2g): the link of a GPU event that carries no "correlation" arg ---- */

static int remember_unlinked(kin_t *k, size_t row, uint64_t key)
{
    if (k->n_unlinked == k->unlinked_cap) {
        size_t ncap = k->unlinked_cap ? k->unlinked_cap * 2 : UNLINKED_INITIAL;
        size_t *nr = nnp__realloc(k->unlinked, ncap * sizeof(size_t));
        uint64_t *nk;
        if (!nr)
            return oom(k);
        k->unlinked = nr;
        nk = nnp__realloc(k->unlinked_key, ncap * sizeof(uint64_t));
        if (!nk)
            return oom(k);
        k->unlinked_key = nk;
        k->unlinked_cap = ncap;
    }
    k->unlinked[k->n_unlinked] = row;
    k->unlinked_key[k->n_unlinked++] = key;
    return NNP_OK;
}

/* ---- top-level members: distributedInfo, deviceProperties ---- */

static int member_cb(void *user, const char *key, const cJSON *v)
{
    kin_t *k = user;
    nnp_run_info_t *in = &k->m->info;
    int64_t x;
    if (strcmp(key, "distributedInfo") == 0 && cJSON_IsObject(v)) {
        if (nnp__foreign_json_int(get(v, "rank"), &x) && x >= 0 && x < INT32_MAX) {
            in->rank_id = (int)x;
            k->have_rank = true;
        }
        if (nnp__foreign_json_int(get(v, "world_size"), &x) && x > 0 && x < INT32_MAX)
            in->rank_size = (int)x;
        NNP_LOG_I("kineto import: '%s': rank %d of %d (backend %s)", k->path, in->rank_id,
                  in->rank_size,
                  cJSON_IsString(get(v, "backend")) ? get(v, "backend")->valuestring : "?");
    } else if (strcmp(key, "baseTimeNanoseconds") == 0) {
        k->has_base = nnp__kin_base_parse(v, &k->base_ns);
        if (!k->has_base)
            NNP_LOG_W("kineto import: '%s': 'baseTimeNanoseconds' is not a whole number of ns "
                      "in [0, 2^62): ts read as written",
                      k->path);
    } else if (strcmp(key, "deviceProperties") == 0 && cJSON_IsArray(v)) {
        const cJSON *d = cJSON_GetArrayItem(v, 0);
        int64_t mem;
        if (cJSON_IsObject(d) && nnp__foreign_json_int(get(d, "totalGlobalMem"), &mem) && mem > 0 &&
            !in->device_memory_bytes)
            in->device_memory_bytes = (uint64_t)mem;
        if (cJSON_IsObject(d) && cJSON_IsString(get(d, "name")) && !in->device_name &&
            !(in->device_name = nnp__strdup(get(d, "name")->valuestring)))
            return oom(k);
    }
    return NNP_OK;
}

/* ---- events ---- */

/* "ProfilerStep#N": a step (HTA and torch.profiler's schedule name them so), with the
 * thread of its range (key_averages() counts it there, as "ProfilerStep*"). */
static int add_step(kin_t *k, const cJSON *e, const char *name, int64_t ts, int64_t dur,
                    uint64_t index)
{
    char *end;
    unsigned long long id = strtoull(name + strlen(STEP_PREFIX), &end, 10);
    size_t th, i;
    if (end == name + strlen(STEP_PREFIX) || *end) {
        bad_event(k, index, name, "step name has no number");
        return NNP_OK;
    }
    th = thread_of(k, e);
    if (th == SIZE_MAX || (i = nnp__table_push(&k->m->steps.t)) == SIZE_MAX ||
        (k->n_steps == 0 && !nnp__model_intern_cstr(k->m, NNP_TORCH_STEP_KEY)))
        return oom(k);
    k->m->steps.id[i] = id;
    k->m->steps.start_ns[i] = ts;
    k->m->steps.end_ns[i] = ts + dur;
    k->m->steps.thread[i] = (uint32_t)th + 1;
    k->n_steps++;
    return NNP_OK;
}

/* Autograd's link of op i: "Sequence number" (>= 0 for an op that made an autograd node,
 * or the node run in the backward pass) and "Fwd thread id" (> 0 for a backward op: the
 * framework's id of its forward op's thread). Kineto writes no forward op's own thread
 * id: 0. */
static int add_op_seq(kin_t *k, const cJSON *args, size_t i)
{
    nnp_model_t *m = k->m;
    int64_t seq;
    uint64_t fwd = 0;
    if (!nnp__foreign_json_int(get(args, "Sequence number"), &seq) || seq < 0)
        return NNP_OK;
    if (nnp__model_ops_want_seq(m) != NNP_OK)
        return oom(k);
    if (!json_u64(get(args, "Fwd thread id"), &fwd) || fwd > UINT32_MAX)
        fwd = 0;
    m->ops.seq_nr[i] = seq;
    m->ops.seq_thread[i] = (uint32_t)fwd;
    m->ops.seq_kind[i] = fwd > 0 ? NNP_SEQ_BACKWARD : NNP_SEQ_FORWARD;
    return NNP_OK;
}

/* AccumulateGrad runs as a backward function (torch's RecordScope::BACKWARD_FUNCTION,
 * which a trace does not write) with no forward op: no sequence number, no forward thread.
 * Marked as our captures mark it (a backward op with no link, raw_import.c), so what runs
 * in it counts under no stack, as torch counts it (op_stacks.c). Windows prefixes "struct ". */
static int mark_accumulate_grad(kin_t *k, const char *name, size_t i)
{
    nnp_model_t *m = k->m;
    if (strcmp(name, ACCUMULATE_GRAD) != 0 &&
        !(strncmp(name, STRUCT_PREFIX, strlen(STRUCT_PREFIX)) == 0 &&
          strcmp(name + strlen(STRUCT_PREFIX), ACCUMULATE_GRAD) == 0))
        return NNP_OK;
    if (m->ops.seq_kind && m->ops.seq_kind[i] == NNP_SEQ_BACKWARD)
        return NNP_OK;
    if (nnp__model_ops_want_seq(m) != NNP_OK)
        return oom(k);
    m->ops.seq_nr[i] = -1;
    m->ops.seq_thread[i] = 0;
    m->ops.seq_kind[i] = NNP_SEQ_BACKWARD;
    return NNP_OK;
}

/* cpu_op (and the legacy profiler's CPU functions): a host op; its type is its name, as
 * torch.profiler's key_averages groups by name. */
static int add_op(kin_t *k, const cJSON *e, const char *name, int64_t ts, int64_t dur)
{
    nnp_model_t *m = k->m;
    const cJSON *args = get(e, "args");
    size_t th = thread_of(k, e), i;
    uint64_t ext = 0;
    if (th == SIZE_MAX || (i = nnp__table_push(&m->ops.t)) == SIZE_MAX)
        return oom(k);
    m->ops.start_ns[i] = ts;
    m->ops.end_ns[i] = ts + dur;
    m->ops.name[i] = nnp__model_intern_cstr(m, name);
    m->ops.type[i] = m->ops.name[i];
    m->ops.thread[i] = (uint32_t)th;
    if (json_u64(get(args, "External id"), &ext))
        m->ops.corr[i] = ext;
    /* record_shapes: kept as the JSON text Kineto wrote (dynamic_shape.c compares them). */
    if (cJSON_IsArray(get(args, "Input Dims"))) {
        char *s = cJSON_PrintUnformatted(get(args, "Input Dims"));
        if (!s)
            return oom(k);
        m->ops.shapes[i] = nnp__model_intern_cstr(m, s);
        cJSON_free(s);
    }
    if (cJSON_IsArray(get(args, "Input type"))) {
        char *s = cJSON_PrintUnformatted(get(args, "Input type"));
        if (!s)
            return oom(k);
        m->ops.dtypes[i] = nnp__model_intern_cstr(m, s);
        cJSON_free(s);
    }
    if (cJSON_IsString(get(args, "Call stack")) &&
        nnp__kin_call_stack(m, i, get(args, "Call stack")->valuestring) != NNP_OK)
        return oom(k);
    k->n_ops++;
    if (add_op_seq(k, args, i) != NNP_OK)
        return k->rc;
    return mark_accumulate_grad(k, name, i);
}

/* user_annotation (record_function ranges): user markers. */
static int add_marker(kin_t *k, const cJSON *e, const char *name, int64_t ts, int64_t dur)
{
    nnp_model_t *m = k->m;
    size_t th = thread_of(k, e), i;
    if (th == SIZE_MAX || (i = nnp__table_push(&m->markers.t)) == SIZE_MAX)
        return oom(k);
    m->markers.start_ns[i] = ts;
    m->markers.end_ns[i] = ts + dur;
    m->markers.message[i] = nnp__model_intern_cstr(m, name);
    m->markers.thread[i] = (uint32_t)th;
    k->n_markers++;
    return NNP_OK;
}

/* cuda_runtime / cuda_driver: a call that launches device work, linked to its kernels by
 * args.correlation (calls.launch) and to its op by args["External id"] (calls.corr). */
static int add_launch(kin_t *k, const cJSON *e, const char *name, int64_t ts, int64_t dur,
                      nnp_call_kind_t kind)
{
    nnp_model_t *m = k->m;
    const cJSON *args = get(e, "args");
    uint64_t corr = 0, ext = 0;
    size_t th, i;
    if (!json_u64(get(args, "correlation"), &corr) || corr == 0) {
        /* Runtime calls that launch nothing (cudaDeviceSynchronize) carry no correlation in
         * some versions; they are not launches. */
        k->n_skipped++;
        return NNP_OK;
    }
    json_u64(get(args, "External id"), &ext);
    th = thread_of(k, e);
    if (th == SIZE_MAX || (i = nnp__table_push(&m->calls.t)) == SIZE_MAX)
        return oom(k);
    m->calls.start_ns[i] = ts;
    m->calls.end_ns[i] = ts + dur;
    m->calls.name[i] = nnp__model_intern_cstr(m, name);
    m->calls.kind[i] = kind;
    m->calls.thread[i] = (uint32_t)th;
    m->calls.launch[i] = corr;
    m->calls.corr[i] = ext;
    k->n_launches++;
    return NNP_OK;
}

/* An NCCL kernel's communication op: kind from args["Collective name"] (PyTorch >= 2.1)
 * else the kernel name; bytes = In msg nelems x dtype size; group = Process Group Name. */
static int add_nccl_comm(kin_t *k, const cJSON *args, const char *name, int64_t ts, int64_t dur,
                         uint32_t stream, uint64_t launch)
{
    nnp_model_t *m = k->m;
    const cJSON *coll = get(args, "Collective name");
    const cJSON *dtype = get(args, "dtype");
    const cJSON *group = get(args, "Process Group Name");
    int64_t nelems;
    size_t i;
    if ((i = nnp__table_push(&m->comms.t)) == SIZE_MAX)
        return oom(k);
    m->comms.start_ns[i] = ts;
    m->comms.end_ns[i] = ts + dur;
    m->comms.name[i] = nnp__model_intern_cstr(m, name);
    m->comms.kind[i] = nnp__foreign_comm_kind(cJSON_IsString(coll) ? coll->valuestring : name);
    m->comms.stream_id[i] = stream;
    m->comms.launch[i] = launch; /* 0 when its kernel is linked by a flow instead */
    m->comms.peer[i] = -1;
    if (cJSON_IsString(group))
        m->comms.group[i] = nnp__model_intern_cstr(m, group->valuestring);
    if (cJSON_IsString(dtype) && nnp__foreign_json_int(get(args, "In msg nelems"), &nelems) &&
        nelems > 0)
        m->comms.bytes[i] = (uint64_t)nelems * dtype_bytes(dtype->valuestring);
    k->n_comms++;
    return NNP_OK;
}

/* kernel / gpu_memcpy / gpu_memset: a device kernel (type KERNEL, MEMCPY or MEMSET). */
static int add_kernel(kin_t *k, const cJSON *e, const char *name, const char *type, int64_t ts,
                      int64_t dur)
{
    nnp_model_t *m = k->m;
    const cJSON *args = get(e, "args");
    uint64_t v = 0, pid = 0, tid = 0;
    size_t i;
    if ((i = nnp__table_push(&m->kernels.t)) == SIZE_MAX)
        return oom(k);
    m->kernels.start_ns[i] = ts;
    m->kernels.end_ns[i] = ts + dur;
    m->kernels.name[i] = nnp__model_intern_cstr(m, name);
    m->kernels.type[i] = nnp__model_intern_cstr(m, type);
    if (json_u64(get(args, "stream"), &v) || json_u64(get(e, "tid"), &v))
        m->kernels.stream_id[i] = (uint32_t)v;
    if (json_u64(get(args, "device"), &v) || json_u64(get(e, "pid"), &v))
        m->kernels.device_id[i] = (uint32_t)v;
    if (json_u64(get(args, "External id"), &v))
        m->kernels.corr[i] = v;
    if (json_u64(get(args, "correlation"), &v) && v) {
        m->kernels.launch[i] = v;
    } else {
        json_u64(get(e, "pid"), &pid);
        json_u64(get(e, "tid"), &tid);
        if (remember_unlinked(k, i, nnp__flow_key(pid, tid, ts)) != NNP_OK)
            return k->rc;
    }
    k->n_kernels++;
    if (strcmp(type, TYPE_KERNEL) == 0 && nnp__contains_ci(name, NCCL_TAG))
        return add_nccl_comm(k, args, name, ts, dur, m->kernels.stream_id[i], m->kernels.launch[i]);
    return NNP_OK;
}

/* "[memory]" instants (profile_memory=True): allocations (Bytes > 0) and frees. */
static int add_memory(kin_t *k, const cJSON *e, int64_t ts)
{
    nnp_model_t *m = k->m;
    const cJSON *args = get(e, "args");
    int64_t bytes, dev;
    uint64_t addr = 0;
    size_t i;
    if (!nnp__foreign_json_int(get(args, "Bytes"), &bytes) || bytes == 0)
        return NNP_OK;
    if ((i = nnp__table_push(&m->mem.t)) == SIZE_MAX)
        return oom(k);
    json_u64(get(args, "Addr"), &addr);
    m->mem.ts_ns[i] = ts;
    m->mem.is_alloc[i] = bytes > 0;
    m->mem.address[i] = addr;
    m->mem.bytes[i] = bytes > 0 ? (uint64_t)bytes : (uint64_t)0 - (uint64_t)bytes;
    /* Device Id -1 is host memory; the model keeps device ids unsigned. */
    m->mem.device_id[i] = nnp__foreign_json_int(get(args, "Device Id"), &dev) && dev >= 0
                              ? (uint32_t)dev
                              : UINT32_MAX;
    k->n_mem++;
    return NNP_OK;
}

/* python_function: kept until the end of the file, when each op gets the names of those
 * around it as its stack (kineto_stacks.c); not rows of their own (key_averages has none). */
static int add_python(kin_t *k, const cJSON *e, const char *name, int64_t ts, int64_t dur)
{
    size_t th = thread_of(k, e);
    uint32_t id;
    if (th == SIZE_MAX || !(id = nnp__model_intern_cstr(k->m, name)) ||
        nnp__kin_py_add(&k->py, (uint32_t)th, id, ts, ts + dur) != NNP_OK)
        return oom(k);
    k->n_python++;
    return NNP_OK;
}

static int event_cb(void *user, const cJSON *e, uint64_t index)
{
    kin_t *k = user;
    const cJSON *ph = get(e, "ph"), *cat = get(e, "cat"), *name = get(e, "name");
    const char *c = cJSON_IsString(cat) ? cat->valuestring : NULL;
    const char *n;
    int64_t ts, dur, end;

    if (!cJSON_IsString(ph))
        return NNP_OK;
    if (strcmp(ph->valuestring, "f") == 0 && c && strcmp(c, CAT_FLOW) == 0) {
        uint64_t id, pid = 0, tid = 0;
        json_u64(get(e, "pid"), &pid);
        if (json_u64(get(e, "id"), &id) && json_u64(get(e, "tid"), &tid) &&
            nnp__foreign_json_us_ns(get(e, "ts"), &ts) &&
            nnp__flow_put(&k->flows, nnp__flow_key(pid, tid, ts), id) != NNP_OK)
            return k->rc = NNP_ENOMEM;
        return NNP_OK;
    }
    if ((strcmp(ph->valuestring, "s") == 0 || strcmp(ph->valuestring, "f") == 0) && c &&
        strcmp(c, CAT_FWDBWD) == 0) {
        uint64_t id;
        size_t th = thread_of(k, e);
        if (json_u64(get(e, "id"), &id) && nnp__foreign_json_us_ns(get(e, "ts"), &ts) &&
            (th == SIZE_MAX || nnp__kin_flow_add(&k->fwdbwd, id, (uint32_t)th,
                                                 ph->valuestring[0] == 'f', ts) != NNP_OK))
            return oom(k);
        return NNP_OK;
    }
    if (strcmp(ph->valuestring, "i") == 0 || strcmp(ph->valuestring, "I") == 0) {
        if (str_is(name, MEMORY_EVENT) && nnp__foreign_json_us_ns(get(e, "ts"), &ts))
            return add_memory(k, e, ts);
        return NNP_OK;
    }
    if (strcmp(ph->valuestring, "X") != 0)
        return NNP_OK;
    n = cJSON_IsString(name) && name->valuestring ? name->valuestring : NULL;
    if (!n) {
        bad_event(k, index, "", "no 'name'");
        return NNP_OK;
    }
    if (!nnp__foreign_json_us_ns(get(e, "ts"), &ts)) {
        bad_event(k, index, n, "key 'ts' missing or not a time in us");
        return NNP_OK;
    }
    /* Every row below ends at ts + dur: an end past int64 ns is a bad event. */
    if (!nnp__foreign_json_us_ns(get(e, "dur"), &dur) || dur < 0 || !nnp__i64_add(ts, dur, &end)) {
        bad_event(k, index, n, "key 'dur' missing, negative, too large or not a time in us");
        return NNP_OK;
    }
    if (!c) {
        /* The legacy profiler: every X event of "CPU functions" is a host op. */
        if (!str_is(get(e, "pid"), NNP_KINETO_LEGACY_PID)) {
            k->n_skipped++;
            return NNP_OK;
        }
        c = CAT_CPU_OP;
    }
    if (strncmp(n, STEP_PREFIX, strlen(STEP_PREFIX)) == 0 &&
        (strcmp(c, CAT_CPU_OP) == 0 || strcmp(c, CAT_USER_ANNOTATION) == 0))
        return add_step(k, e, n, ts, dur, index);
    if (strcmp(c, CAT_CPU_OP) == 0)
        return add_op(k, e, n, ts, dur);
    if (strcmp(c, CAT_USER_ANNOTATION) == 0)
        return add_marker(k, e, n, ts, dur);
    if (strcmp(c, CAT_RUNTIME) == 0)
        return add_launch(k, e, n, ts, dur, NNP_CALL_CUDA_RUNTIME);
    if (strcmp(c, CAT_DRIVER) == 0)
        return add_launch(k, e, n, ts, dur, NNP_CALL_CUDA_DRIVER);
    if (strcmp(c, CAT_KERNEL) == 0)
        return add_kernel(k, e, n, TYPE_KERNEL, ts, dur);
    if (strcmp(c, CAT_MEMCPY) == 0)
        return add_kernel(k, e, n, TYPE_MEMCPY, ts, dur);
    if (strcmp(c, CAT_MEMSET) == 0)
        return add_kernel(k, e, n, TYPE_MEMSET, ts, dur);
    if (strcmp(c, CAT_PYTHON) == 0)
        return add_python(k, e, n, ts, dur);
    /* gpu_user_annotation, cuda_sync, Trace spans, ...: not modelled. */
    k->n_skipped++;
    return NNP_OK;
}

/* GPU events without a "correlation" arg take the id of the ac2g flow ending on them. */
static void link_by_flows(kin_t *k)
{
    for (size_t j = 0; j < k->n_unlinked; j++) {
        uint64_t id = nnp__flow_get(&k->flows, k->unlinked_key[j]);
        if (id)
            k->m->kernels.launch[k->unlinked[j]] = id;
    }
}

static void report(const kin_t *k, const nnp_json_stream_report_t *rep)
{
    nnp__foreign_log_stream("kineto import", k->path, rep);
    if (k->warnings > MAX_EVENT_WARNINGS)
        NNP_LOG_W("kineto import: '%s': %llu more bad events not logged", k->path,
                  (unsigned long long)(k->warnings - MAX_EVENT_WARNINGS));
    NNP_LOG_I("kineto import: '%s': %llu ops, %llu steps, %llu annotations, %llu launches, %llu "
              "GPU events (%llu NCCL), %llu memory events, %llu Python calls (stacks); %llu "
              "events not modelled",
              k->path, (unsigned long long)k->n_ops, (unsigned long long)k->n_steps,
              (unsigned long long)k->n_markers, (unsigned long long)k->n_launches,
              (unsigned long long)k->n_kernels, (unsigned long long)k->n_comms,
              (unsigned long long)k->n_mem, (unsigned long long)k->n_python,
              (unsigned long long)k->n_skipped);
}

/* ---- import() ---- */

static int import(const char *input, nnp_model_t *m)
{
    kin_t k;
    nnp_json_stream_report_t rep;
    int rc, rank = nnp__kin_rank_from_name(input);
    nnp_kin_rows_t first;

    memset(&k, 0, sizeof(k));
    k.m = m;
    k.path = input;
    if (!m->info.source_format && !(m->info.source_format = nnp__strdup(NNP_KINETO_SOURCE_FORMAT)))
        return nnp__fail(NNP_ENOMEM, "out of memory");
    if (!m->info.source && !(m->info.source = nnp__strdup(input)))
        return nnp__fail(NNP_ENOMEM, "out of memory");
    /* Kernels run asynchronously: a step's device work is what its host range launched. */
    m->info.overlap_device_steps = true;
    nnp__kin_rows_mark(m, &first);
    rc = nnp__json_stream_doc(input, NULL, event_cb, member_cb, &k, &rep);
    link_by_flows(&k);
    if (k.rc == NNP_OK && (nnp__kin_links_resolve(&k.fwdbwd, m, first.ops) != NNP_OK ||
                           nnp__kin_py_stacks(&k.py, m, first.ops) != NNP_OK))
        k.rc = NNP_ENOMEM;
    /* Last: the links and stacks above compare the file's own ts. */
    if (k.rc == NNP_OK && k.has_base && nnp__kin_rows_shift(m, &first, k.base_ns) != NNP_OK)
        NNP_LOG_W("kineto import: '%s': 'baseTimeNanoseconds' %lld puts times past 2^63 ns: "
                  "ts read as written",
                  input, (long long)k.base_ns);
    nnp__kin_links_fini(&k.fwdbwd);
    nnp__kin_stacks_fini(&k.py);
    nnp__flow_fini(&k.flows);
    nnp__free(k.unlinked);
    nnp__free(k.unlinked_key);
    if (k.rc != NNP_OK)
        return k.rc;
    if (rc != NNP_OK) {
        NNP_LOG_W("kineto import: cannot read '%s': %s", input, nnp_last_error());
        return rc;
    }
    if (!k.have_rank)
        m->info.rank_id = rank >= 0 ? rank : 0;
    report(&k, &rep);
    if (rep.no_array)
        return nnp__fail(NNP_ECORRUPT, "'%s' holds no trace event array", input);
    if (k.n_ops + k.n_steps + k.n_markers + k.n_launches + k.n_kernels + k.n_mem == 0)
        return nnp__fail(NNP_ECORRUPT, "'%s': no PyTorch profiler event could be read", input);
    return NNP_OK;
}

bool nnp__is_kineto_model(const nnp_model_t *m)
{
    return m->info.source_format && strcmp(m->info.source_format, NNP_KINETO_SOURCE_FORMAT) == 0;
}

const nnp_importer_t nnp__importer_kineto = {NNP_KINETO_SOURCE_FORMAT, nnp__kin_find, import};
