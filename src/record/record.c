/* record.c - the public recording calls of host activity: ranges, operators, steps, tensor
 * memory, the data pipeline, user markers and counters (device and communication calls:
 * record_device.c). Each one: a relaxed load of nnp__collecting, the thread's buffer from
 * TLS, a reserve, a few stores, one release store (tbuf.h). No lock, no allocation (after
 * the thread's first event), no syscall, no formatting (STYLE 7); nnp_intern interns. */
#include <stddef.h>
#include <string.h>

#include "core/clock.h"
#include "record/record.h"
#include "record/record_internal.h"
#include "record/strtab.h"
#include "record/tbuf.h"

/* Per-thread counter for marker range ids; the id is (tid << 32) | counter so ranges
 * started on different threads never collide without a shared atomic. */
static __thread uint32_t tls_mark_seq __attribute__((tls_model("initial-exec")));

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
