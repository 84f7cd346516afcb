/* translate.c - CUPTI activity records (cu_activity.h) -> nnprof recording calls. See
 * translate.h for the contract. State: a direct-mapped table keyed by CUPTI correlation id
 * (what the external correlation and API records said about it), a cache of interned
 * kernel names, and the NVTX ranges still open. All bounded; no lock (the caller holds
 * one); runs on the back end's drain thread, never inside the application's CUDA calls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/cuda/translate.h"
#include "nnprof/nnprof.h"
#include "util/util.h"

/* Correlation slots: CUPTI's ids increase by one per API call, so slot (id % N) is reused
 * only N calls later. A kernel completes long before 32768 further CUDA calls are made in
 * any real program; a later collision only costs that kernel its op link. */
#define CORR_SLOTS 32768u
/* NVTX ranges open at once (nesting depth times threads): far above real use. */
#define MARKER_SLOTS 4096u
/* Interned kernel names cached; past this, names are interned without the cache. */
#define NAME_CACHE_MAX (1u << 20)
#define NAME_CACHE_MIN 1024u
#define FNV_OFFSET     1469598103934665603ull
#define FNV_PRIME      1099511628211ull
/* Room for a kernel name cut at its parameter list ("ncclDevKernel_AllReduce_..."). */
#define SHORT_NAME_CAP 256

typedef struct corr_slot {
    uint32_t corr; /* 0 = empty (CUPTI's ids start at 1) */
    bool has_ext_ops, has_ext_nccl, has_api, has_sync;
    uint32_t api_tid;
    uint64_t ext_ops, ext_nccl;
    nnp_cu_sync_t sync; /* waiting for the API record that names its thread */
} corr_slot_t;

typedef struct marker_slot {
    bool used;
    uint32_t id, tid;
    nnp_str_t name, domain;
    uint64_t start;
} marker_slot_t;

typedef struct name_entry {
    uint64_t hash;
    char *key; /* the name as CUPTI gave it (our copy) */
    nnp_str_t id;
} name_entry_t;

struct nnp_cu_xlate {
    nnp_cu_xlate_config_t cfg;
    int64_t offset_ns;
    corr_slot_t *corr;
    marker_slot_t markers[MARKER_SLOTS];
    name_entry_t *names;
    size_t n_names, names_cap;
    nnp_cu_counts_t counts;
    nnp_cu_counts_t reported; /* counts at the last finish, to log only what is new */
    bool warned_kind[64];     /* unknown CUPTI kinds already named in the log */
    /* Names interned once. */
    nnp_str_t s_kernel_type, s_memcpy_type, s_memset_type, s_memset_name, s_nccl_group;
    nnp_str_t s_dropped, s_unknown, s_bad;
};

/* MindSpore's names for copies (gpu_profiling.cc), in nnp_copy_kind_t order. */
static const char *const copy_names[NNP_COPY_KIND_COUNT] = {
    "MemcpyUnknown", "MemcpyH2D", "MemcpyD2H", "MemcpyH2A", "MemcpyA2H", "MemcpyA2A",
    "MemcpyA2D",     "MemcpyD2A", "MemcpyD2D", "MemcpyH2H", "MemcpyP2P", "MemorySet"};

static const char *const sync_names[] = {"cudaSynchronize", "cudaEventSynchronize",
                                         "cudaStreamWaitEvent", "cudaStreamSynchronize",
                                         "cudaDeviceSynchronize"};

int nnp__cu_xlate_create(const nnp_cu_xlate_config_t *cfg, nnp_cu_xlate_t **out)
{
    nnp_cu_xlate_t *x = nnp__calloc(1, sizeof(*x));
    if (!x || !(x->corr = nnp__calloc(CORR_SLOTS, sizeof(corr_slot_t)))) {
        nnp__free(x);
        return nnp__fail(NNP_ENOMEM, "out of memory for the CUPTI translator");
    }
    if (cfg)
        x->cfg = *cfg;
    x->s_kernel_type = nnp_intern("cuLaunchKernel");
    x->s_memcpy_type = nnp_intern("cuMemcpy");
    x->s_memset_type = nnp_intern("cuMemset");
    x->s_memset_name = nnp_intern(copy_names[NNP_COPY_MEMSET]);
    x->s_nccl_group = nnp_intern("nccl");
    x->s_dropped = nnp_intern("cupti_dropped_records");
    x->s_unknown = nnp_intern("cupti_unknown_records");
    x->s_bad = nnp_intern("cupti_bad_records");
    *out = x;
    return NNP_OK;
}

void nnp__cu_xlate_destroy(nnp_cu_xlate_t *x)
{
    if (!x)
        return;
    for (size_t i = 0; i < MARKER_SLOTS; i++)
        x->counts.marker_unmatched += x->markers[i].used;
    for (size_t i = 0; i < x->names_cap; i++)
        nnp__free(x->names[i].key);
    nnp__free(x->names);
    nnp__free(x->corr);
    nnp__free(x);
}

void nnp__cu_xlate_set_clock(nnp_cu_xlate_t *x, int64_t offset_ns)
{
    x->offset_ns = offset_ns;
}

const nnp_cu_counts_t *nnp__cu_xlate_counts(const nnp_cu_xlate_t *x)
{
    return &x->counts;
}

void nnp__cu_xlate_dropped(nnp_cu_xlate_t *x, uint64_t n)
{
    x->counts.cupti_dropped += n;
}

/* ---- helpers ---- */

static uint64_t to_ns(const nnp_cu_xlate_t *x, uint64_t cupti_ts)
{
    return (uint64_t)((int64_t)cupti_ts + x->offset_ns);
}

/* A span CUPTI measured: both ends known and in order. */
static bool span_ok(nnp_cu_xlate_t *x, uint64_t start, uint64_t end)
{
    if (start == 0 || end == 0 || end < start) {
        x->counts.bad++;
        return false;
    }
    return true;
}

static corr_slot_t *slot_of(nnp_cu_xlate_t *x, uint32_t corr, bool create)
{
    corr_slot_t *s = &x->corr[corr % CORR_SLOTS];
    if (s->corr == corr && corr != 0)
        return s;
    if (!create || corr == 0)
        return NULL;
    if (s->corr != 0 && s->has_sync && !s->has_api) {
        /* The slot is taken over while its synchronization still waits: record it now. */
        nnp_call_t c = {0};
        c.kind = NNP_CALL_SYNC;
        c.name =
            nnp_intern(sync_names[s->sync.type < NNP_ARRAY_LEN(sync_names) ? s->sync.type : 0]);
        c.stream_id = s->sync.stream_id;
        c.correlation_id = NNP_CU_CORR_TAG | s->corr;
        c.launch_id = s->corr;
        nnp_call_at(&c, to_ns(x, s->sync.start), to_ns(x, s->sync.end));
        x->counts.sync_without_api++;
    }
    memset(s, 0, sizeof(*s));
    s->corr = corr;
    return s;
}

/* The id kernels and calls of CUPTI correlation corr carry: the host op's when an external
 * correlation record named one, else CUPTI's own, tagged. */
static uint64_t link_id(nnp_cu_xlate_t *x, uint32_t corr)
{
    const corr_slot_t *s = slot_of(x, corr, false);
    if (s && s->has_ext_ops)
        return s->ext_ops;
    return corr ? NNP_CU_CORR_TAG | corr : 0;
}

static uint64_t fnv(const char *s)
{
    uint64_t h = FNV_OFFSET;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * FNV_PRIME;
    return h;
}

static int names_grow(nnp_cu_xlate_t *x)
{
    size_t ncap = x->names_cap ? x->names_cap * 2 : NAME_CACHE_MIN;
    name_entry_t *nv = nnp__calloc(ncap, sizeof(*nv));
    if (!nv)
        return NNP_ENOMEM;
    for (size_t i = 0; i < x->names_cap; i++) {
        size_t j;
        if (!x->names[i].key)
            continue;
        for (j = x->names[i].hash & (ncap - 1); nv[j].key; j = (j + 1) & (ncap - 1))
            ;
        nv[j] = x->names[i];
    }
    nnp__free(x->names);
    x->names = nv;
    x->names_cap = ncap;
    return NNP_OK;
}

/* Interns a kernel name demangled (when the config can), caching by CUPTI's name so each
 * kernel is demangled and interned once. */
static nnp_str_t kernel_name(nnp_cu_xlate_t *x, const char *raw)
{
    uint64_t h;
    size_t i;
    char *dem;
    nnp_str_t id;

    if (!raw || !*raw)
        return nnp_intern("<unnamed kernel>");
    h = fnv(raw);
    if (x->names_cap) {
        for (i = h & (x->names_cap - 1); x->names[i].key; i = (i + 1) & (x->names_cap - 1)) {
            if (x->names[i].hash == h && strcmp(x->names[i].key, raw) == 0)
                return x->names[i].id;
        }
    }
    dem = x->cfg.demangle ? x->cfg.demangle(raw) : NULL;
    id = nnp_intern(dem ? dem : raw);
    free(dem); /* the demangler's memory (malloc, as __cxa_demangle) */
    /* Keep the load under one half; stop caching at the cap (still correct, slower). */
    if ((x->n_names + 1) * 2 > x->names_cap &&
        (x->names_cap >= NAME_CACHE_MAX || names_grow(x) != NNP_OK))
        return id;
    for (i = h & (x->names_cap - 1); x->names[i].key; i = (i + 1) & (x->names_cap - 1))
        ;
    x->names[i].key = nnp__strdup(raw);
    if (x->names[i].key) {
        x->names[i].hash = h;
        x->names[i].id = id;
        x->n_names++;
    }
    return id;
}

/* ---- NCCL ---- */

/* NCCL kernel names: "ncclKernel_AllReduce_RING_LL_Sum_float" (NCCL 2.x) or
 * "ncclDevKernel_AllReduce_Sum_f32_RING_LL" (2.19+), possibly mangled
 * ("_Z39ncclDevKernel_..."). Longer names first: "ReduceScatter" holds "Reduce". */
int nnp__cu_nccl_kind(const char *name)
{
    static const struct {
        const char *word;
        int kind;
    } words[] = {{"AllReduce", NNP_COMM_ALLREDUCE}, {"ReduceScatter", NNP_COMM_REDUCESCATTER},
                 {"AllGather", NNP_COMM_ALLGATHER}, {"Broadcast", NNP_COMM_BROADCAST},
                 {"AllToAll", NNP_COMM_ALLTOALL},   {"SendRecv", NNP_COMM_OTHER},
                 {"Send", NNP_COMM_SEND},           {"Recv", NNP_COMM_RECV},
                 {"Reduce", NNP_COMM_REDUCE}};
    const char *p = name;
    if (!p)
        return -1;
    if (p[0] == '_' && p[1] == 'Z') {
        for (p += 2; *p >= '0' && *p <= '9'; p++)
            ;
    }
    if (strncmp(p, "nccl", 4) != 0)
        return -1;
    for (size_t i = 0; i < NNP_ARRAY_LEN(words); i++) {
        if (strstr(p, words[i].word))
            return words[i].kind;
    }
    return NNP_COMM_OTHER;
}

static void record_nccl(nnp_cu_xlate_t *x, const nnp_cu_kernel_t *k, int kind)
{
    const corr_slot_t *s = slot_of(x, k->correlation_id, false);
    nnp_cu_nccl_call_t call;
    nnp_comm_t c = {0};
    char short_name[SHORT_NAME_CAP];
    const char *raw = k->name ? k->name : "nccl";
    char *dem = x->cfg.demangle ? x->cfg.demangle(raw) : NULL;
    const char *full = dem ? dem : raw;
    size_t n = strcspn(full, "(");

    /* The name up to its parameter list: the timeline and op statistics show one name per
     * NCCL kernel, not its signature. */
    if (n >= sizeof(short_name))
        n = sizeof(short_name) - 1;
    memcpy(short_name, full, n);
    short_name[n] = '\0';
    free(dem);
    c.name = nnp_intern(short_name);
    c.kind = (nnp_comm_kind_t)kind;
    c.group = x->s_nccl_group;
    c.peer = -1;
    c.stream_id = k->stream_id;
    c.launch_id = k->correlation_id; /* CUPTI's own: the call that launched it */
    if (s && s->has_ext_nccl && x->cfg.nccl_call && x->cfg.nccl_call(s->ext_nccl, &call)) {
        char group[48];
        c.kind = (nnp_comm_kind_t)call.comm_kind;
        c.size_bytes = call.bytes;
        c.peer = call.peer;
        snprintf(group, sizeof(group), "nccl_comm_%llx", (unsigned long long)call.comm);
        c.group = nnp_intern(group);
    }
    nnp_comm_kernel_at(&c, to_ns(x, k->start), to_ns(x, k->end));
    x->counts.nccl_kernels++;
}

/* ---- one record per kind ---- */

static void on_kernel(nnp_cu_xlate_t *x, const nnp_cu_kernel_t *k)
{
    nnp_kernel_t kr = {0};
    nnp_kernel_launch_t l;
    int nccl;

    if (!span_ok(x, k->start, k->end))
        return;
    nccl = nnp__cu_nccl_kind(k->name);
    if (nccl >= 0) {
        record_nccl(x, k, nccl);
        return;
    }
    kr.name = kernel_name(x, k->name);
    kr.type = x->s_kernel_type;
    kr.device_id = k->device_id;
    kr.stream_id = k->stream_id;
    kr.correlation_id = link_id(x, k->correlation_id);
    kr.launch_id = k->correlation_id; /* CUPTI's own: the API call that queued it */
    /* CUPTI's dimensions are signed ints; negative ones are damage and read as unknown. */
    l.grid_x = k->grid[0] > 0 ? (uint32_t)k->grid[0] : 0;
    l.grid_y = k->grid[1] > 0 ? (uint32_t)k->grid[1] : 0;
    l.grid_z = k->grid[2] > 0 ? (uint32_t)k->grid[2] : 0;
    l.block_x = k->block[0] > 0 ? (uint32_t)k->block[0] : 0;
    l.block_y = k->block[1] > 0 ? (uint32_t)k->block[1] : 0;
    l.block_z = k->block[2] > 0 ? (uint32_t)k->block[2] : 0;
    l.registers_per_thread = k->registers;
    l.static_shared_bytes = k->static_shared > 0 ? (uint32_t)k->static_shared : 0;
    l.dynamic_shared_bytes = k->dynamic_shared > 0 ? (uint32_t)k->dynamic_shared : 0;
    nnp_kernel_launch_at(&kr, &l, to_ns(x, k->start), to_ns(x, k->end));
}

static void on_memcpy(nnp_cu_xlate_t *x, const nnp_cu_memcpy_t *m)
{
    nnp_kernel_t k = {0};
    nnp_copy_t c = {0};
    unsigned kind = m->is_peer ? NNP_COPY_PTOP : m->copy_kind;

    if (!span_ok(x, m->start, m->end))
        return;
    if (kind >= NNP_COPY_MEMSET)
        kind = NNP_COPY_UNKNOWN;
    k.name = nnp_intern(copy_names[kind]);
    k.type = x->s_memcpy_type;
    k.device_id = m->device_id;
    k.stream_id = m->stream_id;
    k.correlation_id = link_id(x, m->correlation_id);
    k.launch_id = m->correlation_id;
    c.size_bytes = m->bytes;
    c.kind = (nnp_copy_kind_t)kind;
    c.src_kind =
        m->src_kind < NNP_MEMORY_KIND_COUNT ? (nnp_memory_kind_t)m->src_kind : NNP_MEMORY_UNKNOWN;
    c.dst_kind =
        m->dst_kind < NNP_MEMORY_KIND_COUNT ? (nnp_memory_kind_t)m->dst_kind : NNP_MEMORY_UNKNOWN;
    c.src_device = m->is_peer ? m->src_device : m->device_id;
    c.dst_device = m->is_peer ? m->dst_device : m->device_id;
    nnp_copy_at(&k, &c, to_ns(x, m->start), to_ns(x, m->end));
}

static void on_memset(nnp_cu_xlate_t *x, const nnp_cu_memset_t *m)
{
    nnp_kernel_t k = {0};
    nnp_copy_t c = {0};

    if (!span_ok(x, m->start, m->end))
        return;
    k.name = x->s_memset_name;
    k.type = x->s_memset_type;
    k.device_id = m->device_id;
    k.stream_id = m->stream_id;
    k.correlation_id = link_id(x, m->correlation_id);
    k.launch_id = m->correlation_id;
    c.size_bytes = m->bytes;
    c.kind = NNP_COPY_MEMSET;
    c.dst_kind = m->memory_kind < NNP_MEMORY_KIND_COUNT ? (nnp_memory_kind_t)m->memory_kind
                                                        : NNP_MEMORY_UNKNOWN;
    c.src_device = c.dst_device = m->device_id;
    c.value = m->value;
    nnp_copy_at(&k, &c, to_ns(x, m->start), to_ns(x, m->end));
}

static void record_sync(nnp_cu_xlate_t *x, const nnp_cu_sync_t *sy, uint32_t tid)
{
    nnp_call_t c = {0};
    c.kind = NNP_CALL_SYNC;
    c.name = nnp_intern(sync_names[sy->type < NNP_ARRAY_LEN(sync_names) ? sy->type : 0]);
    c.stream_id = sy->stream_id;
    c.thread_id = tid;
    c.correlation_id = link_id(x, sy->correlation_id);
    c.launch_id = sy->correlation_id; /* the API call that waited, as Kineto's cuda_sync */
    nnp_call_at(&c, to_ns(x, sy->start), to_ns(x, sy->end));
}

static void on_api(nnp_cu_xlate_t *x, const nnp_cu_api_t *a)
{
    nnp_call_t c = {0};
    corr_slot_t *s;
    char unknown[32];

    if (!span_ok(x, a->start, a->end))
        return;
    if (a->name && *a->name) {
        c.name = nnp_intern(a->name);
    } else {
        snprintf(unknown, sizeof(unknown), "%s_cbid_%u", a->is_driver ? "cu" : "cuda", a->cbid);
        c.name = nnp_intern(unknown);
    }
    c.kind = a->is_driver ? NNP_CALL_CUDA_DRIVER : NNP_CALL_CUDA_RUNTIME;
    c.thread_id = a->thread_id;
    c.status = (int32_t)a->return_value;
    c.correlation_id = link_id(x, a->correlation_id);
    c.launch_id = a->correlation_id; /* what its kernels, copies and sets carry */
    nnp_call_at(&c, to_ns(x, a->start), to_ns(x, a->end));
    /* A synchronization that arrived first was waiting for this call's thread. */
    s = slot_of(x, a->correlation_id, true);
    if (!s)
        return;
    s->has_api = true;
    s->api_tid = a->thread_id;
    if (s->has_sync) {
        s->has_sync = false;
        record_sync(x, &s->sync, a->thread_id);
    }
}

static void on_sync(nnp_cu_xlate_t *x, const nnp_cu_sync_t *sy)
{
    corr_slot_t *s;
    if (!span_ok(x, sy->start, sy->end))
        return;
    s = slot_of(x, sy->correlation_id, true);
    if (!s) {
        record_sync(x, sy, 0);
        x->counts.sync_without_api++;
    } else if (s->has_api) {
        record_sync(x, sy, s->api_tid);
    } else {
        s->sync = *sy;
        s->has_sync = true;
    }
}

static void on_memory(nnp_cu_xlate_t *x, const nnp_cu_memory_t *m)
{
    uint64_t ts;
    if (m->timestamp == 0) {
        x->counts.bad++;
        return;
    }
    /* Device memory only: pinned and pageable host allocations are not what the memory
     * analyses (device capacity, peak) are about. */
    if (m->memory_kind != NNP_MEMORY_DEVICE && m->memory_kind != NNP_MEMORY_MANAGED) {
        x->counts.memory_skipped++;
        return;
    }
    ts = to_ns(x, m->timestamp);
    if (m->operation == NNP_CU_MEM_ALLOC) {
        nnp_tensor_t t = {0};
        t.address = m->address;
        t.size_bytes = m->bytes;
        t.device_id = m->device_id;
        nnp_mem_alloc_at(&t, ts);
    } else if (m->operation == NNP_CU_MEM_RELEASE) {
        nnp_mem_free_at(m->address, m->bytes, ts);
    } else {
        x->counts.bad++;
    }
}

static void on_extcorr(nnp_cu_xlate_t *x, const nnp_cu_extcorr_t *e)
{
    corr_slot_t *s = slot_of(x, e->correlation_id, true);
    if (!s)
        return;
    if (e->external_kind == NNP_CU_EXT_OPS) {
        s->has_ext_ops = true;
        s->ext_ops = e->external_id;
    } else if (e->external_kind == NNP_CU_EXT_NCCL) {
        s->has_ext_nccl = true;
        s->ext_nccl = e->external_id;
    }
}

static marker_slot_t *marker_find(nnp_cu_xlate_t *x, uint32_t id, bool create)
{
    size_t start = id % MARKER_SLOTS;
    for (size_t k = 0; k < MARKER_SLOTS; k++) {
        marker_slot_t *m = &x->markers[(start + k) % MARKER_SLOTS];
        if (m->used && m->id == id)
            return m;
        if (!m->used && create) {
            m->used = true;
            m->id = id;
            return m;
        }
    }
    return NULL;
}

static void on_marker(nnp_cu_xlate_t *x, const nnp_cu_marker_t *mk)
{
    nnp_call_t c = {0};
    marker_slot_t *m;

    if (mk->timestamp == 0) {
        x->counts.bad++;
        return;
    }
    c.kind = NNP_CALL_NVTX;
    if (mk->flags & NNP_CU_MARKER_INSTANT) {
        c.name = nnp_intern(mk->name ? mk->name : "");
        c.domain = mk->domain ? nnp_intern(mk->domain) : 0;
        c.thread_id = mk->thread_id;
        nnp_call_at(&c, to_ns(x, mk->timestamp), to_ns(x, mk->timestamp));
    } else if (mk->flags & NNP_CU_MARKER_START) {
        m = marker_find(x, mk->id, true);
        if (!m) {
            x->counts.marker_unmatched++;
            return;
        }
        m->name = nnp_intern(mk->name ? mk->name : "");
        m->domain = mk->domain ? nnp_intern(mk->domain) : 0;
        m->tid = mk->thread_id;
        m->start = mk->timestamp;
    } else if (mk->flags & NNP_CU_MARKER_END) {
        m = marker_find(x, mk->id, false);
        if (!m || mk->timestamp < m->start) {
            x->counts.marker_unmatched++;
            if (m)
                m->used = false;
            return;
        }
        c.name = m->name;
        c.domain = m->domain;
        c.thread_id = m->tid;
        nnp_call_at(&c, to_ns(x, m->start), to_ns(x, mk->timestamp));
        m->used = false;
    }
}

void nnp__cu_xlate_record(nnp_cu_xlate_t *x, const nnp_cu_activity_t *a)
{
    if (!x || !a)
        return;
    switch (a->kind) {
    case NNP_CU_KERNEL:
        on_kernel(x, &a->u.kernel);
        break;
    case NNP_CU_MEMCPY:
        on_memcpy(x, &a->u.memcpy);
        break;
    case NNP_CU_MEMSET:
        on_memset(x, &a->u.memset);
        break;
    case NNP_CU_API:
        on_api(x, &a->u.api);
        break;
    case NNP_CU_SYNC:
        on_sync(x, &a->u.sync);
        break;
    case NNP_CU_MEMORY:
        on_memory(x, &a->u.memory);
        break;
    case NNP_CU_EXTCORR:
        on_extcorr(x, &a->u.extcorr);
        break;
    case NNP_CU_MARKER:
        on_marker(x, &a->u.marker);
        break;
    default:
        x->counts.translated[NNP_CU_UNKNOWN]++;
        x->counts.last_unknown_kind = a->cupti_kind;
        if (a->cupti_kind < NNP_ARRAY_LEN(x->warned_kind) && !x->warned_kind[a->cupti_kind]) {
            x->warned_kind[a->cupti_kind] = true;
            NNP_LOG_W("cuda: CUPTI activity kind %u is not translated; its records are "
                      "counted as cupti_unknown_records",
                      a->cupti_kind);
        }
        return;
    }
    x->counts.translated[a->kind]++;
}

void nnp__cu_xlate_finish(nnp_cu_xlate_t *x)
{
    nnp_cu_counts_t *c = &x->counts, *r = &x->reported;
    uint64_t now = nnp_clock_ns();

    for (size_t i = 0; i < CORR_SLOTS; i++) {
        corr_slot_t *s = &x->corr[i];
        if (s->corr && s->has_sync && !s->has_api) {
            s->has_sync = false;
            record_sync(x, &s->sync, 0);
            c->sync_without_api++;
        }
    }
    if (c->cupti_dropped > r->cupti_dropped)
        NNP_LOG_W("cuda: CUPTI dropped %llu activity records (no free buffer): device "
                  "activity undercounts",
                  (unsigned long long)(c->cupti_dropped - r->cupti_dropped));
    if (c->bad > r->bad)
        NNP_LOG_W("cuda: %llu CUPTI records had impossible times and were skipped",
                  (unsigned long long)(c->bad - r->bad));
    if (c->sync_without_api > r->sync_without_api)
        NNP_LOG_I("cuda: %llu synchronizations without their API record: thread unknown",
                  (unsigned long long)(c->sync_without_api - r->sync_without_api));
    /* Cumulative counts in the raw data, so the analysis can report them. */
    nnp_counter_at(x->s_dropped, (double)c->cupti_dropped, now);
    nnp_counter_at(x->s_unknown, (double)c->translated[NNP_CU_UNKNOWN], now);
    nnp_counter_at(x->s_bad, (double)c->bad, now);
    *r = *c;
}
