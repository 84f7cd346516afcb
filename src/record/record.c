/* record.c - the public recording calls. Each one: a relaxed load of nnp__collecting, the
 * thread's buffer from TLS, a reserve, a few stores, one release store (tbuf.h). No lock,
 * no allocation (after the thread's first event), no syscall, no formatting (STYLE 7); the set-up
 * call nnp_comm_group alone formats and interns, as nnp_intern does. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "record/record.h"
#include "record/strtab.h"
#include "record/tbuf.h"

#define COLLECTING() NNP_LIKELY(atomic_load_explicit(&nnp__collecting, memory_order_relaxed))
/* Each recording entry point starts a cache line: its disabled path (load, test, branch:
 * 17 bytes) then never straddles a 32- or 64-byte boundary, where x86 front ends fetch it
 * more slowly (Intel's JCC erratum mitigation; measured as +0.5 ns per disabled call when
 * the link happened to place the entries at 48 mod 64). */
#define NNP_PROBE __attribute__((aligned(NNP_CACHE_LINE)))
/* A window is open and the options let this kind of data through: one relaxed load. */
#define GATED(bit) NNP_LIKELY(atomic_load_explicit(&nnp__collecting, memory_order_relaxed) & (bit))

/* Per-thread counter for marker range ids; the id is (tid << 32) | counter so ranges
 * started on different threads never collide without a shared atomic. */
static __thread uint32_t tls_mark_seq __attribute__((tls_model("initial-exec")));

static inline void put1(uint8_t kind, uint16_t flags, uint32_t name, uint64_t ts, uint64_t a,
                        uint64_t b)
{
    nnp_tbuf_t *tb = nnp__tbuf_get();
    uint64_t s;
    nnp_rec_t *r;

    if (NNP_UNLIKELY(!tb))
        return;
    s = nnp__tbuf_reserve(tb, 1);
    if (NNP_UNLIKELY(s == UINT64_MAX))
        return;
    r = nnp__tbuf_slot(tb, s);
    r->kind = kind;
    r->n_slots = 1;
    r->flags = flags;
    r->name = name;
    r->ts = ts;
    r->a = a;
    r->b = b;
    nnp__tbuf_commit(tb, s, 1);
}

/* Reserves an n-slot record and fills slot 0; returns the sequence or UINT64_MAX. The
 * caller fills the extension slots through nnp__tbuf_slot(tb, seq + i) and commits. */
static inline uint64_t putn_begin(nnp_tbuf_t *tb, unsigned n, uint8_t kind, uint16_t flags,
                                  uint32_t name, uint64_t ts, uint64_t a, uint64_t b)
{
    uint64_t s = nnp__tbuf_reserve(tb, n);
    nnp_rec_t *r;
    if (NNP_UNLIKELY(s == UINT64_MAX))
        return s;
    r = nnp__tbuf_slot(tb, s);
    r->kind = kind;
    r->n_slots = (uint8_t)n;
    r->flags = flags;
    r->name = name;
    r->ts = ts;
    r->a = a;
    r->b = b;
    return s;
}

static inline uint64_t pack32(uint32_t lo, uint32_t hi)
{
    return (uint64_t)lo | ((uint64_t)hi << 32);
}

nnp_str_t nnp_intern(const char *s)
{
    if (!s || !*s)
        return 0;
    return nnp__strtab_intern(s, strlen(s));
}

uint64_t nnp_now(void)
{
    return nnp__ticks();
}

uint64_t nnp_clock_ns(void)
{
    return nnp__mono_ns();
}

bool nnp_is_collecting(void)
{
    return atomic_load_explicit(&nnp__collecting, memory_order_relaxed) != 0;
}

int nnp_thread_register(const char *name)
{
    nnp_str_t id = nnp_intern(name);
    nnp_tbuf_t *tb;
    /* Outside a window a thread that has not recorded yet gets no buffer now (a worker
     * named while profiling is off must not pay for one): the name waits in TLS until the
     * thread's first event creates the buffer. */
    if (!nnp__tls_buf && !nnp_is_collecting()) {
        nnp__tls_pending_name = id;
        return NNP_OK;
    }
    tb = nnp__tbuf_get();
    if (!tb)
        return nnp__fail(NNP_ENOMEM, "cannot create the thread's event buffer");
    atomic_store(&tb->name, id);
    atomic_store(&tb->sample_cpu, true);
    /* The writer re-emits the THREADS entry so the new name reaches the meta file. */
    atomic_store(&tb->thread_reported, false);
    return NNP_OK;
}

/* ---- host ranges ---- */

static inline void host_tag(uint8_t kind, const nnp_host_tag_t *t, uint16_t flags, uint64_t ts)
{
    put1(kind, flags, t->event, ts, pack32(t->module, t->stage), pack32(t->custom_info, t->level));
}

NNP_PROBE void nnp_range_begin(const nnp_host_tag_t *tag)
{
    if (GATED(NNP_GATE_HOST_RANGES) && tag)
        host_tag(NNP_REC_RANGE_BEGIN, tag, 0, nnp__ticks());
}

NNP_PROBE void nnp_range_end(const nnp_host_tag_t *tag)
{
    if (GATED(NNP_GATE_HOST_RANGES) && tag)
        host_tag(NNP_REC_RANGE_END, tag, 0, nnp__ticks());
}

NNP_PROBE void nnp_instant(const nnp_host_tag_t *tag)
{
    if (GATED(NNP_GATE_HOST_RANGES) && tag)
        host_tag(NNP_REC_INSTANT, tag, 0, nnp__ticks());
}

NNP_PROBE void nnp_range_begin_at(const nnp_host_tag_t *tag, uint64_t ts_ns)
{
    if (GATED(NNP_GATE_HOST_RANGES) && tag)
        host_tag(NNP_REC_RANGE_BEGIN, tag, NNP_REC_F_TS_NS, ts_ns);
}

NNP_PROBE void nnp_range_end_at(const nnp_host_tag_t *tag, uint64_t ts_ns)
{
    if (GATED(NNP_GATE_HOST_RANGES) && tag)
        host_tag(NNP_REC_RANGE_END, tag, NNP_REC_F_TS_NS, ts_ns);
}

NNP_PROBE void nnp_instant_at(const nnp_host_tag_t *tag, uint64_t ts_ns)
{
    if (GATED(NNP_GATE_HOST_RANGES) && tag)
        host_tag(NNP_REC_INSTANT, tag, NNP_REC_F_TS_NS, ts_ns);
}

NNP_PROBE void nnp_host_memory(uint64_t bytes)
{
    if (GATED(NNP_GATE_HOST_MEMORY))
        put1(NNP_REC_HOST_MEM, 0, 0, nnp__ticks(), bytes, 0);
}

NNP_PROBE void nnp_host_memory_at(uint64_t bytes, uint64_t ts_ns)
{
    if (GATED(NNP_GATE_HOST_MEMORY))
        put1(NNP_REC_HOST_MEM, NNP_REC_F_TS_NS, 0, ts_ns, bytes, 0);
}

/* ---- operators ---- */

/* python/nnprof/_options.py's OpStruct mirrors nnp_op_t (LP64). */
_Static_assert(offsetof(nnp_op_t, stack) == 64 && sizeof(nnp_op_t) == 72,
               "nnp_op_t's layout changed: update OpStruct in python/nnprof/_options.py");

/* Fills an op record's first two slots: r (slot 0) and x (the extension slot). */
static inline void op_fill(nnp_rec_t *r, nnp_rec_op_ext_t *x, const nnp_op_t *op, unsigned n,
                           uint16_t flags, uint64_t start, uint64_t end)
{
    bool has_seq = op->has_sequence;
    if (has_seq)
        flags |= op->is_backward ? NNP_REC_F_SEQ | NNP_REC_F_BACKWARD : NNP_REC_F_SEQ;
    else if (op->is_backward)
        flags |= NNP_REC_F_BACKWARD; /* a backward op with no link (AccumulateGrad) */
    r->kind = NNP_REC_OP;
    r->n_slots = (uint8_t)n;
    r->flags = flags;
    r->name = op->name;
    r->ts = start;
    r->a = end;
    r->b = op->correlation_id;
    x->type = op->type;
    x->graph_id = op->graph_id;
    x->stream_id = op->stream_id;
    x->input_shapes = op->input_shapes;
    x->input_dtypes = op->input_dtypes;
    x->seq_thread = has_seq ? op->seq_thread : 0;
    x->sequence_nr = has_seq ? op->sequence_nr : 0;
}

/* Whether an op's record takes a third slot (nnp_rec_flops_t): it has FLOPs or a stack. */
static inline bool op_has_third_slot(const nnp_op_t *op)
{
    return (op->flops_matrix | op->flops_vector | op->stack) != 0;
}

/* Any op record: a third slot when the op has FLOPs or a stack, the thread's first event
 * (its buffer is created here), a full buffer. */
static __attribute__((noinline, cold)) void op_put_slow(const nnp_op_t *op, uint16_t flags,
                                                        uint64_t start, uint64_t end)
{
    nnp_tbuf_t *tb = nnp__tbuf_get();
    bool third = op_has_third_slot(op);
    unsigned n = third ? 3 : 2;
    uint64_t s;

    if (NNP_UNLIKELY(!tb))
        return;
    if (third)
        flags |= NNP_REC_F_FLOPS;
    s = nnp__tbuf_reserve(tb, n);
    if (NNP_UNLIKELY(s == UINT64_MAX))
        return;
    op_fill(nnp__tbuf_slot(tb, s), (nnp_rec_op_ext_t *)nnp__tbuf_slot(tb, s + 1), op, n, flags,
            start, end);
    if (third) {
        nnp_rec_flops_t *f = (nnp_rec_flops_t *)nnp__tbuf_slot(tb, s + 2);
        f->matrix = op->flops_matrix;
        f->vector = op->flops_vector;
        f->stack = op->stack;
        f->reserved32 = 0;
        f->reserved = 0;
    }
    nnp__tbuf_commit(tb, s, n);
}

/* An op record. The common case (the thread has a buffer, the op no third slot) is written
 * here with nothing live across a call, so this costs no register saves; the rest goes to
 * op_put_slow as a tail call. Ops are the most frequent record of a framework (a PyTorch
 * training step has thousands): bench_torch_ir counts this path's instructions. */
static inline void op_put(const nnp_op_t *op, uint16_t flags, uint64_t start, uint64_t end)
{
    nnp_tbuf_t *tb = nnp__tls_buf;
    uint64_t s;
    nnp_rec_t *r;

    if (NNP_UNLIKELY(!tb || op_has_third_slot(op))) {
        op_put_slow(op, flags, start, end);
        return;
    }
    s = nnp__tbuf_reserve(tb, 2);
    if (NNP_UNLIKELY(s == UINT64_MAX))
        return;
    r = nnp__tbuf_slot(tb, s);
    op_fill(r, (nnp_rec_op_ext_t *)nnp__tbuf_slot(tb, s + 1), op, 2, flags, start, end);
    nnp__tbuf_commit(tb, s, 2);
}

NNP_PROBE void nnp_op_since(const nnp_op_t *op, uint64_t start_ticks)
{
    if (GATED(NNP_GATE_OPS) && op)
        op_put(op, 0, start_ticks, nnp__ticks());
}

NNP_PROBE void nnp_op_at(const nnp_op_t *op, uint64_t start_ns, uint64_t end_ns)
{
    if (GATED(NNP_GATE_OPS) && op)
        op_put(op, NNP_REC_F_TS_NS, start_ns, end_ns);
}

/* ---- device kernels ---- */

static void kernel_put(const nnp_kernel_t *k, uint16_t flags, uint64_t start, uint64_t end)
{
    nnp_tbuf_t *tb = nnp__tbuf_get();
    uint64_t s;
    nnp_rec_kernel_ext_t *x;

    if (NNP_UNLIKELY(!tb))
        return;
    s = putn_begin(tb, 2, NNP_REC_KERNEL, flags, k->name, start, end, k->correlation_id);
    if (NNP_UNLIKELY(s == UINT64_MAX))
        return;
    x = (nnp_rec_kernel_ext_t *)nnp__tbuf_slot(tb, s + 1);
    memset(x, 0, sizeof(*x));
    x->type = k->type;
    x->device_id = k->device_id;
    x->stream_id = k->stream_id;
    nnp__tbuf_commit(tb, s, 2);
}

NNP_PROBE void nnp_kernel_since(const nnp_kernel_t *k, uint64_t start_ticks)
{
    if (GATED(NNP_GATE_OPS) && k)
        kernel_put(k, 0, start_ticks, nnp__ticks());
}

NNP_PROBE void nnp_kernel_at(const nnp_kernel_t *k, uint64_t start_ns, uint64_t end_ns)
{
    if (GATED(NNP_GATE_OPS) && k)
        kernel_put(k, NNP_REC_F_TS_NS, start_ns, end_ns);
}

/* ---- steps, epochs, fp/bp ---- */

_Atomic(nnp_step_hook_fn) nnp__rec_step_hook;

static inline void step_hook(uint64_t step_id, bool is_begin)
{
    nnp_step_hook_fn hook = atomic_load_explicit(&nnp__rec_step_hook, memory_order_relaxed);
    if (NNP_UNLIKELY(hook != NULL))
        hook(step_id, is_begin);
}

NNP_PROBE void nnp_step_begin(uint64_t step_id, uint32_t graph_id)
{
    step_hook(step_id, true);
    if (COLLECTING())
        put1(NNP_REC_STEP_BEGIN, 0, 0, nnp__ticks(), step_id, graph_id);
}

NNP_PROBE void nnp_step_end(uint64_t step_id, uint32_t graph_id)
{
    if (COLLECTING())
        put1(NNP_REC_STEP_END, 0, 0, nnp__ticks(), step_id, graph_id);
    step_hook(step_id, false);
}

NNP_PROBE void nnp_step_begin_at(uint64_t step_id, uint32_t graph_id, uint64_t ts_ns)
{
    step_hook(step_id, true);
    if (COLLECTING())
        put1(NNP_REC_STEP_BEGIN, NNP_REC_F_TS_NS, 0, ts_ns, step_id, graph_id);
}

NNP_PROBE void nnp_step_end_at(uint64_t step_id, uint32_t graph_id, uint64_t ts_ns)
{
    if (COLLECTING())
        put1(NNP_REC_STEP_END, NNP_REC_F_TS_NS, 0, ts_ns, step_id, graph_id);
    step_hook(step_id, false);
}

NNP_PROBE void nnp_epoch_begin(uint64_t epoch_id)
{
    if (COLLECTING())
        put1(NNP_REC_EPOCH_BEGIN, 0, 0, nnp__ticks(), epoch_id, 0);
}

NNP_PROBE void nnp_epoch_end(uint64_t epoch_id)
{
    if (COLLECTING())
        put1(NNP_REC_EPOCH_END, 0, 0, nnp__ticks(), epoch_id, 0);
}

NNP_PROBE void nnp_epoch_begin_at(uint64_t epoch_id, uint64_t ts_ns)
{
    if (COLLECTING())
        put1(NNP_REC_EPOCH_BEGIN, NNP_REC_F_TS_NS, 0, ts_ns, epoch_id, 0);
}

NNP_PROBE void nnp_epoch_end_at(uint64_t epoch_id, uint64_t ts_ns)
{
    if (COLLECTING())
        put1(NNP_REC_EPOCH_END, NNP_REC_F_TS_NS, 0, ts_ns, epoch_id, 0);
}

NNP_PROBE void nnp_fp_start(uint64_t step_id)
{
    if (COLLECTING())
        put1(NNP_REC_FP_START, 0, 0, nnp__ticks(), step_id, 0);
}

NNP_PROBE void nnp_bp_end(uint64_t step_id)
{
    if (COLLECTING())
        put1(NNP_REC_BP_END, 0, 0, nnp__ticks(), step_id, 0);
}

NNP_PROBE void nnp_fp_start_at(uint64_t step_id, uint64_t ts_ns)
{
    if (COLLECTING())
        put1(NNP_REC_FP_START, NNP_REC_F_TS_NS, 0, ts_ns, step_id, 0);
}

NNP_PROBE void nnp_bp_end_at(uint64_t step_id, uint64_t ts_ns)
{
    if (COLLECTING())
        put1(NNP_REC_BP_END, NNP_REC_F_TS_NS, 0, ts_ns, step_id, 0);
}

/* ---- tensor memory ---- */

static void alloc_put(const nnp_tensor_t *t, uint16_t flags, uint64_t ts)
{
    nnp_tbuf_t *tb = nnp__tbuf_get();
    uint64_t s;
    nnp_rec_alloc_ext_t *x;

    if (NNP_UNLIKELY(!tb))
        return;
    s = putn_begin(tb, 2, NNP_REC_MEM_ALLOC, flags, t->name, ts, t->address, t->size_bytes);
    if (NNP_UNLIKELY(s == UINT64_MAX))
        return;
    x = (nnp_rec_alloc_ext_t *)nnp__tbuf_slot(tb, s + 1);
    memset(x, 0, sizeof(*x));
    x->owner_op = t->owner_op;
    x->device_id = t->device_id;
    nnp__tbuf_commit(tb, s, 2);
}

NNP_PROBE void nnp_mem_alloc(const nnp_tensor_t *t)
{
    if (GATED(NNP_GATE_MEMORY) && t)
        alloc_put(t, 0, nnp__ticks());
}

NNP_PROBE void nnp_mem_alloc_at(const nnp_tensor_t *t, uint64_t ts_ns)
{
    if (GATED(NNP_GATE_MEMORY) && t)
        alloc_put(t, NNP_REC_F_TS_NS, ts_ns);
}

NNP_PROBE void nnp_mem_free(uint64_t address, uint64_t size_bytes)
{
    if (GATED(NNP_GATE_MEMORY))
        put1(NNP_REC_MEM_FREE, 0, 0, nnp__ticks(), address, size_bytes);
}

NNP_PROBE void nnp_mem_free_at(uint64_t address, uint64_t size_bytes, uint64_t ts_ns)
{
    if (GATED(NNP_GATE_MEMORY))
        put1(NNP_REC_MEM_FREE, NNP_REC_F_TS_NS, 0, ts_ns, address, size_bytes);
}

/* ---- communication ---- */

const char *nnp_comm_kind_name(nnp_comm_kind_t kind)
{
    static const char *const names[] = {
#define NNP_COMM_NAME_(name, text) text,
        NNP_COMM_KIND_MAP(NNP_COMM_NAME_)
#undef NNP_COMM_NAME_
    };
    if ((unsigned)kind >= NNP_ARRAY_LEN(names))
        return names[NNP_COMM_OTHER];
    return names[kind];
}

/* Two slots, or three when the caller set any detail (count, datatype, tag, wait): records
 * of callers that set none stay as small as in format 1. */
static void comm_put(const nnp_comm_t *c, uint16_t flags, uint64_t start, uint64_t end)
{
    nnp_tbuf_t *tb = nnp__tbuf_get();
    bool detail = c->count || c->datatype || c->has_tag || c->has_wait;
    unsigned n = detail ? 3 : 2;
    uint64_t s;
    nnp_rec_comm_ext_t *x;

    if (NNP_UNLIKELY(!tb))
        return;
    if (detail)
        flags |= NNP_REC_F_COMM_DETAIL;
    s = putn_begin(tb, n, NNP_REC_COMM, flags, c->name, start, end, c->size_bytes);
    if (NNP_UNLIKELY(s == UINT64_MAX))
        return;
    x = (nnp_rec_comm_ext_t *)nnp__tbuf_slot(tb, s + 1);
    memset(x, 0, sizeof(*x));
    x->kind = (uint32_t)c->kind;
    x->group = c->group;
    x->peer = c->peer;
    x->stream_id = c->stream_id;
    if (detail) {
        nnp_rec_comm_detail_t *d = (nnp_rec_comm_detail_t *)nnp__tbuf_slot(tb, s + 2);
        d->count = c->count;
        d->wait_ns = c->has_wait ? c->wait_ns : 0;
        d->datatype = c->datatype;
        d->tag = c->has_tag ? c->tag : 0;
        d->has =
            (c->has_tag ? NNP_REC_COMM_HAS_TAG : 0u) | (c->has_wait ? NNP_REC_COMM_HAS_WAIT : 0u);
        d->reserved = 0;
    }
    nnp__tbuf_commit(tb, s, n);
}

NNP_PROBE void nnp_comm_since(const nnp_comm_t *c, uint64_t start_ticks)
{
    if (GATED(NNP_GATE_COMM) && c)
        comm_put(c, 0, start_ticks, nnp__ticks());
}

NNP_PROBE void nnp_comm_at(const nnp_comm_t *c, uint64_t start_ns, uint64_t end_ns)
{
    if (GATED(NNP_GATE_COMM) && c)
        comm_put(c, NNP_REC_F_TS_NS, start_ns, end_ns);
}

/* ---- GPU device activity ---- */

const char *nnp_copy_kind_name(nnp_copy_kind_t kind)
{
    static const char *const names[] = {
#define NNP_COPY_NAME_(name, text) text,
        NNP_COPY_KIND_MAP(NNP_COPY_NAME_)
#undef NNP_COPY_NAME_
    };
    if ((unsigned)kind >= NNP_ARRAY_LEN(names))
        return names[NNP_COPY_UNKNOWN];
    return names[kind];
}

const char *nnp_memory_kind_name(nnp_memory_kind_t kind)
{
    static const char *const names[] = {
#define NNP_MEMORY_NAME_(name, text) text,
        NNP_MEMORY_KIND_MAP(NNP_MEMORY_NAME_)
#undef NNP_MEMORY_NAME_
    };
    if ((unsigned)kind >= NNP_ARRAY_LEN(names))
        return names[NNP_MEMORY_UNKNOWN];
    return names[kind];
}

const char *nnp_call_kind_name(nnp_call_kind_t kind)
{
    static const char *const names[] = {
#define NNP_CALL_NAME_(name, text) text,
        NNP_CALL_KIND_MAP(NNP_CALL_NAME_)
#undef NNP_CALL_NAME_
    };
    if ((unsigned)kind >= NNP_ARRAY_LEN(names))
        return names[NNP_CALL_OTHER];
    return names[kind];
}

/* The raw format keeps block dimensions and registers in 16 bits (raw_format.h). */
static inline uint16_t clamp16(uint32_t v)
{
    return v > UINT16_MAX ? UINT16_MAX : (uint16_t)v;
}

/* Fills a kernel record's two base slots; returns the sequence or UINT64_MAX. */
static uint64_t kernel_begin(nnp_tbuf_t *tb, const nnp_kernel_t *k, unsigned n, uint16_t flags,
                             uint64_t start, uint64_t end)
{
    uint64_t s = putn_begin(tb, n, NNP_REC_KERNEL, flags, k->name, start, end, k->correlation_id);
    nnp_rec_kernel_ext_t *x;
    if (NNP_UNLIKELY(s == UINT64_MAX))
        return s;
    x = (nnp_rec_kernel_ext_t *)nnp__tbuf_slot(tb, s + 1);
    memset(x, 0, sizeof(*x));
    x->type = k->type;
    x->device_id = k->device_id;
    x->stream_id = k->stream_id;
    return s;
}

NNP_PROBE void nnp_kernel_launch_at(const nnp_kernel_t *k, const nnp_kernel_launch_t *l,
                                    uint64_t start_ns, uint64_t end_ns)
{
    nnp_tbuf_t *tb;
    nnp_rec_launch_t *x;
    uint64_t s;

    if (!GATED(NNP_GATE_OPS) || !k)
        return;
    if (!l) {
        kernel_put(k, NNP_REC_F_TS_NS, start_ns, end_ns);
        return;
    }
    tb = nnp__tbuf_get();
    if (NNP_UNLIKELY(!tb))
        return;
    s = kernel_begin(tb, k, 3, NNP_REC_F_TS_NS | NNP_REC_F_LAUNCH, start_ns, end_ns);
    if (NNP_UNLIKELY(s == UINT64_MAX))
        return;
    x = (nnp_rec_launch_t *)nnp__tbuf_slot(tb, s + 2);
    memset(x, 0, sizeof(*x));
    x->grid[0] = l->grid_x;
    x->grid[1] = l->grid_y;
    x->grid[2] = l->grid_z;
    x->block[0] = clamp16(l->block_x);
    x->block[1] = clamp16(l->block_y);
    x->block[2] = clamp16(l->block_z);
    x->registers_per_thread = clamp16(l->registers_per_thread);
    x->static_shared_bytes = l->static_shared_bytes;
    x->dynamic_shared_bytes = l->dynamic_shared_bytes;
    nnp__tbuf_commit(tb, s, 3);
}

NNP_PROBE void nnp_copy_at(const nnp_kernel_t *k, const nnp_copy_t *c, uint64_t start_ns,
                           uint64_t end_ns)
{
    nnp_tbuf_t *tb;
    nnp_rec_copy_t *x;
    uint64_t s;

    if (!GATED(NNP_GATE_OPS) || !k || !c || !(tb = nnp__tbuf_get()))
        return;
    s = kernel_begin(tb, k, 3, NNP_REC_F_TS_NS | NNP_REC_F_COPY, start_ns, end_ns);
    if (NNP_UNLIKELY(s == UINT64_MAX))
        return;
    x = (nnp_rec_copy_t *)nnp__tbuf_slot(tb, s + 2);
    memset(x, 0, sizeof(*x));
    x->bytes = c->size_bytes;
    x->copy_kind = (uint8_t)((unsigned)c->kind < NNP_COPY_KIND_COUNT ? c->kind : NNP_COPY_UNKNOWN);
    x->src_kind =
        (uint8_t)((unsigned)c->src_kind < NNP_MEMORY_KIND_COUNT ? c->src_kind : NNP_MEMORY_UNKNOWN);
    x->dst_kind =
        (uint8_t)((unsigned)c->dst_kind < NNP_MEMORY_KIND_COUNT ? c->dst_kind : NNP_MEMORY_UNKNOWN);
    x->src_device = c->src_device;
    x->dst_device = c->dst_device;
    x->value = c->value;
    nnp__tbuf_commit(tb, s, 3);
}

NNP_PROBE void nnp_comm_kernel_at(const nnp_comm_t *c, uint64_t start_ns, uint64_t end_ns)
{
    if (GATED(NNP_GATE_OPS) && c)
        comm_put(c, NNP_REC_F_TS_NS, start_ns, end_ns);
}

NNP_PROBE void nnp_call_at(const nnp_call_t *c, uint64_t start_ns, uint64_t end_ns)
{
    nnp_tbuf_t *tb;
    nnp_rec_call_ext_t *x;
    uint64_t s;

    if (!c || !GATED(c->kind == NNP_CALL_NVTX ? NNP_GATE_HOST_RANGES : NNP_GATE_OPS) ||
        !(tb = nnp__tbuf_get()))
        return;
    s = putn_begin(tb, 2, NNP_REC_CALL, NNP_REC_F_TS_NS, c->name, start_ns, end_ns,
                   c->correlation_id);
    if (NNP_UNLIKELY(s == UINT64_MAX))
        return;
    x = (nnp_rec_call_ext_t *)nnp__tbuf_slot(tb, s + 1);
    memset(x, 0, sizeof(*x));
    x->tid = c->thread_id;
    x->kind = (uint32_t)((unsigned)c->kind < NNP_CALL_KIND_COUNT ? c->kind : NNP_CALL_OTHER);
    x->domain = c->domain;
    x->stream_id = c->stream_id;
    x->status = c->status;
    nnp__tbuf_commit(tb, s, 2);
}

/* Longest text of one member run "a-b," with two 11-character int32 values. */
#define GROUP_RUN_CHARS 24

/* Writes ranks as runs: "0-3,8,10-11" (consecutive ascending ranks become "a-b"), so the
 * world of a 4096-rank job is "0-4095", not 20 KB. Returns the length written. */
static size_t format_members(const int32_t *ranks, uint32_t n, char *out, size_t cap)
{
    size_t len = 0;
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i;
        int w;
        while (j + 1 < n && ranks[j] != INT32_MAX && ranks[j + 1] == ranks[j] + 1)
            j++;
        if (j > i)
            w = snprintf(out + len, cap - len, "%s%d-%d", len ? "," : "", ranks[i], ranks[j]);
        else
            w = snprintf(out + len, cap - len, "%s%d", len ? "," : "", ranks[i]);
        if (w < 0 || (size_t)w >= cap - len)
            break;
        len += (size_t)w;
        i = j + 1;
    }
    return len;
}

NNP_PROBE void nnp_comm_group(nnp_str_t group, const int32_t *ranks, uint32_t n_ranks,
                              int32_t my_index)
{
    nnp_str_t members = 0;
    if (!GATED(NNP_GATE_COMM) || !group || (n_ranks && !ranks))
        return;
    if (n_ranks > 0 && n_ranks <= NNP_COMM_GROUP_MAX_RANKS) {
        size_t cap = (size_t)n_ranks * GROUP_RUN_CHARS + 1;
        char *text = nnp__malloc(cap);
        if (!text)
            return;
        size_t len = format_members(ranks, n_ranks, text, cap);
        members = len ? nnp__strtab_intern(text, len) : 0;
        nnp__free(text);
    }
    put1(NNP_REC_COMM_GROUP, 0, group, nnp__ticks(), pack32(members, n_ranks),
         (uint64_t)(int64_t)my_index);
}

/* ---- data pipeline ---- */

NNP_PROBE void nnp_pipeline_op(const nnp_pipeline_op_t *op)
{
    nnp_tbuf_t *tb;
    uint64_t s;
    nnp_rec_pipe_ext_t *x;

    if (!GATED(NNP_GATE_PIPELINE) || !op || !(tb = nnp__tbuf_get()))
        return;
    s = putn_begin(tb, 2, NNP_REC_PIPE_OP, 0, op->op_type, nnp__ticks(), (uint64_t)op->op_id,
                   (uint64_t)op->parent_id);
    if (s == UINT64_MAX)
        return;
    x = (nnp_rec_pipe_ext_t *)nnp__tbuf_slot(tb, s + 1);
    memset(x, 0, sizeof(*x));
    x->num_workers = op->num_workers;
    nnp__tbuf_commit(tb, s, 2);
}

NNP_PROBE void nnp_queue_sample(int64_t op_id, uint32_t size, uint32_t capacity)
{
    if (GATED(NNP_GATE_PIPELINE))
        put1(NNP_REC_QUEUE, 0, 0, nnp__ticks(), (uint64_t)op_id, pack32(size, capacity));
}

NNP_PROBE void nnp_device_queue_sample(uint32_t size, uint32_t capacity)
{
    if (GATED(NNP_GATE_PIPELINE))
        put1(NNP_REC_DEVICE_QUEUE, 0, 0, nnp__ticks(), 0, pack32(size, capacity));
}

NNP_PROBE void nnp_queue_sample_at(int64_t op_id, uint32_t size, uint32_t capacity, uint64_t ts_ns)
{
    if (GATED(NNP_GATE_PIPELINE))
        put1(NNP_REC_QUEUE, NNP_REC_F_TS_NS, 0, ts_ns, (uint64_t)op_id, pack32(size, capacity));
}

NNP_PROBE void nnp_device_queue_sample_at(uint32_t size, uint32_t capacity, uint64_t ts_ns)
{
    if (GATED(NNP_GATE_PIPELINE))
        put1(NNP_REC_DEVICE_QUEUE, NNP_REC_F_TS_NS, 0, ts_ns, 0, pack32(size, capacity));
}

/* ---- user markers ---- */

NNP_PROBE void nnp_mark(nnp_str_t message)
{
    if (GATED(NNP_GATE_MSPROFTX))
        put1(NNP_REC_MARK, 0, message, nnp__ticks(), 0, 0);
}

NNP_PROBE void nnp_mark_at(nnp_str_t message, uint64_t ts_ns)
{
    if (GATED(NNP_GATE_MSPROFTX))
        put1(NNP_REC_MARK, NNP_REC_F_TS_NS, message, ts_ns, 0, 0);
}

NNP_PROBE uint64_t nnp_mark_range_start(nnp_str_t message)
{
    nnp_tbuf_t *tb;
    uint64_t id;
    if (!GATED(NNP_GATE_MSPROFTX) || !(tb = nnp__tbuf_get()))
        return 0;
    id = pack32(++tls_mark_seq, (uint32_t)tb->tid);
    put1(NNP_REC_MARK_START, 0, message, nnp__ticks(), id, 0);
    return id;
}

NNP_PROBE void nnp_mark_range_stop(uint64_t range_id)
{
    if (GATED(NNP_GATE_MSPROFTX) && range_id != 0)
        put1(NNP_REC_MARK_STOP, 0, 0, nnp__ticks(), range_id, 0);
}

/* ---- counters ---- */

static uint64_t double_bits(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof(u));
    return u;
}

NNP_PROBE void nnp_counter(nnp_str_t name, double value)
{
    if (COLLECTING())
        put1(NNP_REC_COUNTER, 0, name, nnp__ticks(), double_bits(value), 0);
}

NNP_PROBE void nnp_counter_at(nnp_str_t name, double value, uint64_t ts_ns)
{
    if (COLLECTING())
        put1(NNP_REC_COUNTER, NNP_REC_F_TS_NS, name, ts_ns, double_bits(value), 0);
}

/* ---- internal: used by the samplers, which record on their own thread ---- */

NNP_PROBE void nnp__rec_put_slots(const nnp_rec_t *slots, unsigned n)
{
    nnp_tbuf_t *tb;
    uint64_t s;
    if (!COLLECTING() || n == 0 || n > NNP_REC_MAX_SLOTS || !(tb = nnp__tbuf_get()))
        return;
    s = nnp__tbuf_reserve(tb, n);
    if (s == UINT64_MAX)
        return;
    for (unsigned i = 0; i < n; i++)
        *nnp__tbuf_slot(tb, s + i) = slots[i];
    nnp__tbuf_commit(tb, s, n);
}
