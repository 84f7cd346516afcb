// torch_ops.cpp - the RecordFunction callbacks of the PyTorch shim. One global callback
// (every scope) is installed while a window is open (ops_install/ops_remove); torch pays
// its per-callback machinery (scope test, thread-local state switches) once per op, not
// once per callback. It handles two kinds of RecordFunction:
//  * ops (every scope but USER_SCOPE: aten ops, autograd nodes, TorchScript): a start
//    pushes a frame on the thread's stack (start ticks, names, shapes, FLOPs, autograd
//    link); the end pops it and records the op with nnp_op_since(). No lock, no
//    allocation once a thread's caches hold the model's names (STYLE 7).
//  * user scopes (record_function, optimizer steps, process-group work): handed to
//    torch_user.cpp.
#include <ATen/record_function.h>
#include <c10/util/Exception.h>
#include <torch/csrc/profiler/util.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include "torch_internal.h"

namespace nnp_torch
{

namespace
{

std::mutex g_install_lock;
at::CallbackHandle g_ops_handle = at::INVALID_CALLBACK_HANDLE;

// The op's FLOPs by torch's formulas (computeFlops). Not inlined (nor fill_shapes,
// torch_shapes.cpp): on_op_start's common path then saves fewer registers.
__attribute__((noinline)) void fill_flops(const at::RecordFunction &fn, uint8_t kind, nnp_op_t *op)
{
    try {
        auto args = torch::profiler::impl::saveExtraArgs(fn);
        if (args.empty())
            return;
        uint64_t f = torch::profiler::impl::computeFlops(std::string(fn.name()), args);
        if (kind == NAME_FLOPS_MATRIX)
            op->flops_matrix = f;
        else
            op->flops_vector = f;
    } catch (const std::exception &) {
        g_counters.flops_errors.fetch_add(1, std::memory_order_relaxed);
    }
}

// ---- which op names are stable ----
// fn.name() points either into the operator's schema (dispatcher ops: the same string as
// long as the operator is registered) or into a std::string the RecordFunction owns
// (autograd nodes, ranges named at run time), freed when the call ends, whose address the
// allocator soon gives to another name. The name cache must compare the text of the
// latter on every hit, not of the former. A RecordFunction that owns its name holds that
// string's data pointer, at an offset in the object found once by a probe: on
// RecordFunctions without callbacks given a long (heap) and a short (in-place) name, the
// one word equal to name() must be at the same offset for both. A schema name is never at
// that word (the word then points to the schema object, not into it). If the probe finds
// no single offset, every name is compared (kNoOffset). The name a RecordFunction owns is
// a std::string, whose length the word after its data pointer holds (libstdc++): when the
// probe finds it there too for both names, the length of an owned name is read from that
// word instead of strlen() (g_name_len_word).
constexpr long kNoOffset = -1;
std::atomic<long> g_name_word{kNoOffset};
std::atomic<bool> g_name_len_word{false};
std::once_flag g_probe_once;

// The RecordFunction is built in zeroed memory: words it leaves uninitialised (padding,
// inline storage of its small vectors) then never hold a stale copy of the name's address
// from an earlier probe on the same stack, which made the probe fail at random (it found
// two words) and every name be compared on every op.
// The offset of the word of text in a RecordFunction named text, or kNoOffset;
// *len_next: the word after it holds text's length.
long probe_name_word(const std::string &text, bool *len_next)
{
    struct Probe {
        alignas(at::RecordFunction) unsigned char mem[sizeof(at::RecordFunction)];
        at::RecordFunction *rf;
        Probe()
        {
            std::memset(mem, 0, sizeof(mem));
            rf = new (mem) at::RecordFunction(at::StepCallbacks{});
        }
        ~Probe()
        {
            rf->~RecordFunction();
        }
        Probe(const Probe &) = delete;
        Probe &operator=(const Probe &) = delete;
    } p;
    *len_next = false;
    p.rf->before(std::string(text));
    const char *s = p.rf->name();
    if (!s || text != s)
        return kNoOffset;
    long found = kNoOffset;
    int hits = 0;
    for (size_t k = 0; k + sizeof(s) <= sizeof(p.mem); k += alignof(const char *)) {
        const char *w;
        std::memcpy(&w, p.mem + k, sizeof(w));
        if (w == s) {
            found = long(k);
            hits++;
        }
    }
    if (hits != 1)
        return kNoOffset;
    size_t n;
    if (size_t(found) + sizeof(s) + sizeof(n) <= sizeof(p.mem)) {
        std::memcpy(&n, p.mem + found + sizeof(s), sizeof(n));
        *len_next = n == text.size();
    }
    return found;
}

void probe_names()
{
    constexpr size_t kHeapName = 48; // past any small-string buffer
    try {
        bool heap_len = false, in_place_len = false;
        long heap = probe_name_word(std::string(kHeapName, 'n'), &heap_len);
        long in_place = probe_name_word("n", &in_place_len);
        g_name_word.store(heap == in_place ? heap : kNoOffset);
        g_name_len_word.store(heap == in_place && heap != kNoOffset && heap_len && in_place_len);
    } catch (const std::exception &) {
        g_name_word.store(kNoOffset);
        g_name_len_word.store(false);
    }
}

// The word of fn where a name it owns is (see above), or NULL when the probe found none.
// For a name in a schema the word is the schema's address (fn holds a reference to it
// there): stable for as long as the operator is registered.
// name_word() where the probe found the word (on_op_start is installed only then).
inline const void *name_word_probed(const at::RecordFunction &fn)
{
    const void *w;
    std::memcpy(&w,
                reinterpret_cast<const unsigned char *>(&fn) +
                    g_name_word.load(std::memory_order_relaxed),
                sizeof(w));
    return w;
}

inline const void *name_word(const at::RecordFunction &fn)
{
    return g_name_word.load(std::memory_order_relaxed) < 0 ? nullptr : name_word_probed(fn);
}

// The length of the name fn owns, from the word after name_word() (where the probe found
// it there: g_name_len_word).
inline size_t owned_name_len(const at::RecordFunction &fn)
{
    size_t len;
    std::memcpy(&len,
                reinterpret_cast<const unsigned char *>(&fn) +
                    g_name_word.load(std::memory_order_relaxed) + sizeof(const void *),
                sizeof(len));
    return len;
}

// The ids of fn's name. A schema name found under its schema's address costs no call into
// torch (RecordFunction::name() is not inline); otherwise the name is read, and it is
// stable when it is not the word itself (see above).
// stable_missed: the caller looked the word up under this scope already, in vain.
__attribute__((always_inline)) inline NameIds
op_name_ids(ThreadState *ts, const at::RecordFunction &fn, uint32_t scope, bool stable_missed)
{
    const void *w = name_word(fn);
    NameIds ids;
    if (w && !stable_missed && ts->names.find_stable(w, scope, &ids))
        return ids;
    const char *name = fn.name();
    NameEntry tmp;
    if (w && w != name)
        return ts->names.get_cstr(name, std::strlen(name), scope, w, &tmp);
    // An owned name (w == name) has its length in the word after w (see above).
    size_t len = w && g_name_len_word.load(std::memory_order_relaxed) ? owned_name_len(fn)
                                                                      : std::strlen(name);
    return ts->names.get_cstr(name, len, scope, nullptr, &tmp);
}

// ---- the ops callback ----

// Set by ops_install() before the callback is added: whether libnnprof's ticks are the TSC
// (ring_abi.h). Elsewhere it stays false.
std::atomic<bool> g_tsc{false};

inline uint64_t now_ticks()
{
    return g_tsc.load(std::memory_order_relaxed) ? tsc_ticks() : nnp_now();
}

// The first word of an OP_BRIEF slot (kWord* in torch_internal.h).
inline uint64_t brief_word0(uint64_t flags, nnp_str_t name)
{
    return uint64_t(NNP_REC_OP_BRIEF) | uint64_t(1) << kWordSlotsShift | flags << kWordFlagsShift |
           uint64_t(name) << kWordNameShift;
}
// The first word of a shaped op's 2-slot OP record, as nnp_op_since() writes it for the
// equal nnp_op_t: ticks (no NNP_REC_F_TS_NS), no FLOPs slot, correlation id 0.
constexpr int kOpSlots = 2;
inline uint64_t op_word0(uint64_t flags, nnp_str_t name)
{
    return uint64_t(NNP_REC_OP) | uint64_t(kOpSlots) << kWordSlotsShift | flags << kWordFlagsShift |
           uint64_t(name) << kWordNameShift;
}

// Writes f as an OP_BRIEF record at sequence h of ring b (the protocol of ring_abi.h).
inline void ring_write_brief(unsigned char *p, uint64_t h, const Frame &f, uint64_t end)
{
    uint64_t mask;
    unsigned char *slots;
    std::memcpy(&slots, p + NNP_RING_OFF_SLOTS, sizeof(slots));
    std::memcpy(&mask, p + NNP_RING_OFF_MASK, sizeof(mask));
    unsigned char *r = slots + (h & mask) * sizeof(nnp_rec_t);
    std::memcpy(r, &f.word0, sizeof(uint64_t));
    std::memcpy(r + offsetof(nnp_rec_t, ts), &f.t0, sizeof(uint64_t));
    std::memcpy(r + offsetof(nnp_rec_t, a), &end, sizeof(uint64_t));
    std::memcpy(r + offsetof(nnp_rec_t, b), &f.link, sizeof(uint64_t));
    __atomic_store_n(reinterpret_cast<uint64_t *>(p + NNP_RING_OFF_HEAD), h + 1, __ATOMIC_RELEASE);
}

// A full ring: libnnprof kicks its writer, waits or drops (and counts) by the policy.
// f: the popped frame, which nothing on this thread writes again before this returns.
__attribute__((noinline)) void ring_put_brief_slow(struct nnp_tbuf *b, const Frame &f, uint64_t end)
{
    uint64_t h = nnp__ring_reserve_slow(b, 1);
    if (h != UINT64_MAX)
        ring_write_brief(reinterpret_cast<unsigned char *>(b), h, f, end);
}

// Writes a shaped op (f and its extension slot x) as a 2-slot OP record at sequence h of
// ring b: the bytes nnp_op_since() writes for the equal nnp_op_t. Each slot at its own
// index (the second may wrap to the ring's first slot).
inline void ring_write_op(unsigned char *p, uint64_t h, const Frame &f, const nnp_rec_op_ext_t &x,
                          uint64_t end)
{
    static_assert(sizeof(nnp_rec_op_ext_t) == sizeof(nnp_rec_t), "an extension is one slot");
    uint64_t mask;
    unsigned char *slots;
    std::memcpy(&slots, p + NNP_RING_OFF_SLOTS, sizeof(slots));
    std::memcpy(&mask, p + NNP_RING_OFF_MASK, sizeof(mask));
    unsigned char *r = slots + (h & mask) * sizeof(nnp_rec_t);
    const uint64_t correlation = 0;
    std::memcpy(r, &f.word0, sizeof(uint64_t));
    std::memcpy(r + offsetof(nnp_rec_t, ts), &f.t0, sizeof(uint64_t));
    std::memcpy(r + offsetof(nnp_rec_t, a), &end, sizeof(uint64_t));
    std::memcpy(r + offsetof(nnp_rec_t, b), &correlation, sizeof(uint64_t));
    std::memcpy(slots + ((h + 1) & mask) * sizeof(nnp_rec_t), &x, sizeof(x));
    __atomic_store_n(reinterpret_cast<uint64_t *>(p + NNP_RING_OFF_HEAD), h + kOpSlots,
                     __ATOMIC_RELEASE);
}

__attribute__((noinline)) void ring_put_op_slow(struct nnp_tbuf *b, const Frame &f,
                                                const nnp_rec_op_ext_t &x, uint64_t end)
{
    uint64_t h = nnp__ring_reserve_slow(b, kOpSlots);
    if (h != UINT64_MAX)
        ring_write_op(reinterpret_cast<unsigned char *>(b), h, f, x, end);
}

// The start of a shaped op (record_shapes, no FLOPs) at depth, frame f (f.fn set; f.t0 is
// the caller's): the OP record's fields, as op_fill() (record.c) makes them of the
// nnp_op_t the full path would fill. The link is read after the inputs' call, so that
// fewer values live across it.
__attribute__((always_inline)) inline void
shaped_start(ThreadState *ts, const at::RecordFunction &fn, Frame &f, int depth, NameIds e)
{
    InputIds in = fill_shapes(ts, fn, e.id);
    nnp_rec_op_ext_t &x = ts->exts[depth];
    x.type = e.type;
    x.graph_id = 0;
    x.stream_id = 0;
    x.input_shapes = in.shapes;
    x.input_dtypes = in.dtypes;
    uint64_t flags = 0;
    int64_t seq = fn.seqNr();
    if (seq >= 0) {
        uint64_t fwd = fn.forwardThreadId();
        flags = fwd > 0 ? NNP_REC_F_SEQ | NNP_REC_F_BACKWARD : NNP_REC_F_SEQ;
        x.seq_thread = uint32_t(fwd > 0 ? fwd : fn.threadId());
        x.sequence_nr = seq;
    } else {
        x.seq_thread = 0;
        x.sequence_nr = 0;
    }
    f.word0 = op_word0(flags, e.id);
    f.link = 0;
}

// Correlation ids of ops while a device back end takes them (g_corr_mode): Kineto's link
// of an op to the kernels it launches (CUPTI external correlation). One counter for the
// process, tagged with bit 62 so that they never meet the ids a program passes to
// nnp_correlation_push itself nor the CUDA back end's own (bit 63).
constexpr uint64_t kCorrTag = uint64_t(1) << 62;
std::atomic<bool> g_corr_mode{false};
std::atomic<uint64_t> g_next_corr{1};

// The start of any op (op_start_slow: one the fast path of on_op_start does not take): a
// name not in the address cache, a module scope, shapes or FLOPs, a link too large for OP_BRIEF, a
// full stack, a thread without a ring (ticks that are not the TSC). stable_missed: on_op_start
// found no cached name under the word of fn at scope 0 (the scope here: it saw no module scope), so
// that lookup is not made twice. kInputs: the callback wants inputs (on_op_start_inputs,
// installed when shapes or FLOPs are); without, the code for them is left out (the plain
// callback is installed only when neither is asked for, and the configuration changes only
// when the callbacks are re-installed), so that op_start_slow stays as small as it was.
template <bool kInputs>
__attribute__((always_inline)) inline void op_start_any(const at::RecordFunction &fn,
                                                        bool stable_missed)
{
    ThreadState *ts = thread_state();
    if (!ts)
        return;
    if (ts->depth >= kMaxDepth) {
        g_counters.depth_overflow.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    uint32_t scope = 0;
    if (ts->scope_depth > 0 && g_cfg.modules.load(std::memory_order_relaxed))
        scope = ts->scopes[ts->scope_depth <= kMaxScopes ? ts->scope_depth - 1 : kMaxScopes - 1];
    NameIds e = op_name_ids(ts, fn, scope, stable_missed);

    int depth = ts->depth++;
    Frame &f = ts->frames[depth];
    f.fn = &fn;
    int64_t seq = fn.seqNr();
    uint64_t fwd = 0, thread = 0;
    if (seq >= 0) {
        fwd = fn.forwardThreadId();
        thread = fwd > 0 ? fwd : fn.threadId();
    }
    // with_stack: an op with a stack is full (its third slot holds the stack).
    nnp_str_t stack = stacks_active() ? stacks_current() : 0;
    // Brief: the name is the type (no module scope), no inputs (shapes, FLOPs), the link
    // fits OP_BRIEF's word, and the thread has a ring (on_op_end writes a brief op only
    // there, without testing for one; a full op gives nnp_op_since() the same record).
    // With correlation ids, every op is full: OP_BRIEF and the shaped OP carry none.
    bool corr = g_corr_mode.load(std::memory_order_relaxed);
    bool is_full =
        e.id != e.type || fn.needsInputs() || !ts->ring || stack || corr ||
        (seq >= 0 && (uint64_t(seq) > NNP_REC_BRIEF_SEQ_MAX || thread > NNP_REC_BRIEF_THREAD_MAX));
    if (!is_full) {
        uint64_t flags = seq < 0 ? 0 : fwd > 0 ? NNP_REC_F_SEQ | NNP_REC_F_BACKWARD : NNP_REC_F_SEQ;
        f.word0 = brief_word0(flags, e.id);
        f.link = seq < 0 ? 0 : uint64_t(seq) | thread << NNP_REC_BRIEF_THREAD_SHIFT;
    } else if (kInputs && !stack && !corr && fn.needsInputs() &&
               g_cfg.shapes.load(std::memory_order_relaxed) &&
               !((e.kind == NAME_FLOPS_MATRIX || e.kind == NAME_FLOPS_VECTOR) &&
                 g_cfg.flops.load(std::memory_order_relaxed))) {
        shaped_start(ts, fn, f, depth, e);
    } else {
        nnp_op_t &op = ts->ops[depth];
        f.word0 = 0;
        op = nnp_op_t{};
        op.name = e.id;
        op.type = e.type;
        op.stack = stack;
        if (seq >= 0) {
            op.has_sequence = true;
            op.sequence_nr = seq;
            op.is_backward = fwd > 0;
            op.seq_thread = uint32_t(thread);
        } else if (stack && fn.scope() == at::RecordScope::BACKWARD_FUNCTION) {
            // An autograd node with no link (AccumulateGrad): with stacks it must still be
            // known as one, for its ops count under no stack, as in torch.profiler.
            op.is_backward = true;
        }
        if (kInputs && fn.needsInputs()) {
            if (g_cfg.shapes.load(std::memory_order_relaxed)) {
                InputIds in = fill_shapes(ts, fn, e.id);
                op.input_shapes = in.shapes;
                op.input_dtypes = in.dtypes;
            }
            if ((e.kind == NAME_FLOPS_MATRIX || e.kind == NAME_FLOPS_VECTOR) &&
                g_cfg.flops.load(std::memory_order_relaxed))
                fill_flops(fn, e.kind, &op);
        }
    }
    // The device work it launches carries its id (the end pops it: op_end_call).
    if (corr) {
        nnp_op_t &op = ts->ops[depth];
        op.correlation_id = kCorrTag | g_next_corr.fetch_add(1, std::memory_order_relaxed);
        nnp_correlation_push(op.correlation_id);
    }
    // Last, so that the shim's own work above is not counted in the op's time.
    f.t0 = now_ticks();
}

__attribute__((noinline)) void op_start_slow(const at::RecordFunction &fn, bool stable_missed)
{
    op_start_any<false>(fn, stable_missed);
}

__attribute__((noinline)) void op_start_slow_inputs(const at::RecordFunction &fn,
                                                    bool stable_missed)
{
    op_start_any<true>(fn, stable_missed);
}

// The start callback while inputs are wanted (record_shapes, with_flops). The commonest op
// (a name cached under its schema's address, no module scope, shapes wanted, no FLOPs, TSC
// ticks) is shaped, started here as on_op_start starts a brief one; any other goes to
// op_start_slow_inputs.
// The start callbacks while stacks are kept (with_stack) or ops get correlation ids (a
// device back end takes them): every op takes the slow path, which reads the thread's
// stack and gives the op its id.
std::unique_ptr<at::ObserverContext> on_op_start_stacks(const at::RecordFunction &fn)
{
    if (fn.scope() == at::RecordScope::USER_SCOPE)
        return on_user_start(fn);
    op_start_slow(fn, false);
    return nullptr;
}

std::unique_ptr<at::ObserverContext> on_op_start_stacks_inputs(const at::RecordFunction &fn)
{
    if (fn.scope() == at::RecordScope::USER_SCOPE)
        return on_user_start(fn);
    op_start_slow_inputs(fn, false);
    return nullptr;
}

std::unique_ptr<at::ObserverContext> on_op_start_inputs(const at::RecordFunction &fn)
{
    if (__builtin_expect(fn.scope() == at::RecordScope::USER_SCOPE, 0))
        return on_user_start(fn);
    ThreadState *ts = t_state;
    NameIds e;
    const void *w;
    int depth;
    if (__builtin_expect(!ts || (depth = ts->depth) >= kMaxDepth || ts->scope_depth > 0 ||
                             !ts->ring || !g_cfg.shapes.load(std::memory_order_relaxed) ||
                             !(w = name_word(fn)),
                         0)) {
        op_start_slow_inputs(fn, false);
        return nullptr;
    }
    if (__builtin_expect(!ts->names.find_stable(w, 0, &e), 0)) {
        op_start_slow_inputs(fn, true);
        return nullptr;
    }
    if (__builtin_expect((e.kind == NAME_FLOPS_MATRIX || e.kind == NAME_FLOPS_VECTOR) &&
                             g_cfg.flops.load(std::memory_order_relaxed),
                         0)) {
        op_start_slow_inputs(fn, false);
        return nullptr;
    }
    ts->depth = depth + 1;
    Frame &f = ts->frames[depth];
    f.fn = &fn;
    shaped_start(ts, fn, f, depth, e);
    // Last, so that the shim's own work above is not counted in the op's time.
    f.t0 = tsc_ticks();
    return nullptr;
}

// The rest of a brief op's start (on_op_start's and op_start_owned's) at depth, of name id
// (no module scope: the id is the type): its autograd link, the frame, the ticks. False,
// nothing done, when the link does not fit OP_BRIEF's word.
__attribute__((always_inline)) inline bool
brief_start(ThreadState *ts, const at::RecordFunction &fn, int depth, nnp_str_t id)
{
    int64_t seq = fn.seqNr();
    uint64_t flags = 0, link = 0;
    if (seq >= 0) {
        uint64_t fwd = fn.forwardThreadId();
        uint64_t thread = fwd > 0 ? fwd : fn.threadId();
        // The link fits OP_BRIEF's word: seq below 2^48, thread below 2^16.
        if (__builtin_expect(((uint64_t(seq) >> NNP_REC_BRIEF_THREAD_SHIFT) |
                              (thread >> (64 - NNP_REC_BRIEF_THREAD_SHIFT))) != 0,
                             0))
            return false;
        flags = fwd > 0 ? NNP_REC_F_SEQ | NNP_REC_F_BACKWARD : NNP_REC_F_SEQ;
        link = uint64_t(seq) | thread << NNP_REC_BRIEF_THREAD_SHIFT;
    }
    ts->depth = depth + 1;
    Frame &f = ts->frames[depth];
    f.fn = &fn;
    f.word0 = brief_word0(flags, id);
    f.link = link;
    // Last, so that the shim's own work above is not counted in the op's time.
    f.t0 = tsc_ticks();
    return true;
}

// on_op_start's path for a name not cached under the word w of fn (at scope 0): mostly a
// name fn owns (autograd nodes, ~20 % of the ops), started here as a brief op without
// op_start_slow's tests again (on_op_start made them) and with its length read from fn
// (g_name_len_word); a schema's first call, a table full, or a link too large go on to
// op_start_slow.
__attribute__((noinline)) void op_start_owned(const at::RecordFunction &fn, ThreadState *ts,
                                              int depth, const void *w)
{
    const char *name = fn.name();
    if (__builtin_expect(name != w || !g_name_len_word.load(std::memory_order_relaxed), 0))
        return op_start_slow(fn, true);
    NameEntry tmp;
    NameIds e = ts->names.get_cstr(name, owned_name_len(fn), 0, nullptr, &tmp);
    if (__builtin_expect(e.id != e.type || !brief_start(ts, fn, depth, e.id), 0))
        op_start_slow(fn, false);
}

// The start of an op. The commonest one (a name cached under its schema's address, no
// module scope, no inputs wanted, a link that fits, TSC ticks) is written here without a
// call, so that this costs few register saves; any other goes to op_start_slow, which does
// the same and more. No test of the window: the callback is installed only while one is
// open (torch_shim.cpp), and the end tests it again, where an op that started just before
// the window closed is dropped.
std::unique_ptr<at::ObserverContext> on_op_start(const at::RecordFunction &fn)
{
    if (__builtin_expect(fn.scope() == at::RecordScope::USER_SCOPE, 0))
        return on_user_start(fn);
    ThreadState *ts = t_state;
    NameIds e;
    const void *w;
    int depth;
    // With no scope (0) a cached name's id is its type: the op is brief unless its link
    // does not fit. A thread has a ring (ts->ring) only when the ticks are the TSC.
    if (__builtin_expect(!ts || (depth = ts->depth) >= kMaxDepth || ts->scope_depth > 0 ||
                             fn.needsInputs() || !ts->ring || !(w = name_word_probed(fn)),
                         0)) {
        op_start_slow(fn, false);
        return nullptr;
    }
    // Not found: a name the RecordFunction owns (autograd nodes), or a schema's first call.
    if (__builtin_expect(!ts->names.find_stable(w, 0, &e), 0)) {
        op_start_owned(fn, ts, depth, w);
        return nullptr;
    }
    if (__builtin_expect(!brief_start(ts, fn, depth, e.id), 0))
        op_start_slow(fn, false);
    return nullptr;
}

// The start callback when the probe found no word of the name (kNoOffset): every op is
// started by op_start_slow, which compares every name.
std::unique_ptr<at::ObserverContext> on_op_start_unprobed(const at::RecordFunction &fn)
{
    if (__builtin_expect(fn.scope() == at::RecordScope::USER_SCOPE, 0))
        return on_user_start(fn);
    op_start_slow(fn, false);
    return nullptr;
}

// The end of an op not written inline: a full op; a shaped op of a thread without a ring
// (its first event creates it; none when the ticks are not the TSC), or a brief op ending
// in on_op_end_inputs (the callbacks were re-installed), through nnp_op_since() as the
// equal full op.
__attribute__((noinline)) void op_end_call(ThreadState *ts, int depth)
{
    const Frame &f = ts->frames[depth];
    nnp_op_t &op = ts->ops[depth];
    if (f.word0) {
        uint64_t flags = (f.word0 >> kWordFlagsShift) & 0xFFFFu;
        op = nnp_op_t{};
        op.name = nnp_str_t(f.word0 >> kWordNameShift);
        op.type = op.name;
        if (flags & NNP_REC_F_SEQ) {
            op.has_sequence = true;
            op.is_backward = (flags & NNP_REC_F_BACKWARD) != 0;
            op.sequence_nr = int64_t(f.link & NNP_REC_BRIEF_SEQ_MAX);
            op.seq_thread = uint32_t(f.link >> NNP_REC_BRIEF_THREAD_SHIFT);
        }
        if ((f.word0 & kWordKindMask) == NNP_REC_OP) {
            const nnp_rec_op_ext_t &x = ts->exts[depth];
            op.type = x.type;
            op.input_shapes = x.input_shapes;
            op.input_dtypes = x.input_dtypes;
            op.sequence_nr = x.sequence_nr;
            op.seq_thread = x.seq_thread;
        }
    }
    nnp_op_since(&op, f.t0); // reads the end time itself, as early as it can
    // A full op's id was pushed at its start (only full ops have one; nnp_op_t{} else).
    if (f.word0 == 0 && op.correlation_id)
        nnp_correlation_pop();
    // The inline paths read the TSC themselves: a thread takes them (has a ring) only when
    // that is the recorder's clock.
    if (!ts->ring && g_tsc.load(std::memory_order_relaxed))
        ts->ring = nnp__ring_thread();
}

// Pops the frame of fn from the thread's stack into *depth; false when it has none. Ends
// come in reverse order of starts on one thread; a frame above the matching one belongs to
// a call whose end will not come here (it never does for the ops scope, but a mismatch
// must not corrupt the stack): such frames are dropped.
__attribute__((always_inline)) inline bool pop_frame(ThreadState *ts, const at::RecordFunction &fn,
                                                     int *depth)
{
    if (!ts || ts->depth == 0)
        return false;
    int k = ts->depth - 1;
    if (__builtin_expect(ts->frames[k].fn != &fn, 0)) {
        while (k >= 0 && ts->frames[k].fn != &fn)
            k--;
        if (k < 0) {
            g_counters.unmatched_ends.fetch_add(1, std::memory_order_relaxed);
            return false;
        }
    }
    ts->depth = k;
    *depth = k;
    return true;
}

// The test nnp_op_since() makes: a window open that lets ops through.
inline bool ops_gate_open()
{
    return (gate_bits() & NNP_GATE_OPS) != 0;
}

// The end of an op. kShaped false (on_op_end): a brief op of a thread with a ring is written
// here inline as its one-slot OP_BRIEF record; kShaped true (on_op_end_inputs, installed
// while inputs are wanted): a shaped op as its 2-slot OP record. Only tail calls (no
// register saves); the rest goes to op_end_call.
template <bool kShaped>
__attribute__((always_inline)) inline void op_end(const at::RecordFunction &fn,
                                                  at::ObserverContext *ctx)
{
    constexpr uint64_t kKind = kShaped ? NNP_REC_OP : NNP_REC_OP_BRIEF;
    constexpr uint64_t kSlots = kShaped ? kOpSlots : 1;
    if (__builtin_expect(fn.scope() == at::RecordScope::USER_SCOPE, 0))
        return on_user_end(ctx);
    ThreadState *ts = t_state;
    int k;
    if (!pop_frame(ts, fn, &k))
        return;
    const Frame &f = ts->frames[k];
    struct nnp_tbuf *b = ts->ring;
    // A brief op started only on a thread with a ring (op_start_any), which keeps it; a
    // shaped one may have started without.
    if (__builtin_expect((f.word0 & kWordKindMask) != kKind || (kShaped && !b), 0))
        return op_end_call(ts, k);
    uint64_t end = tsc_ticks();
    if (__builtin_expect(!ops_gate_open(), 0))
        return;
    unsigned char *p = reinterpret_cast<unsigned char *>(b);
    uint64_t h =
        __atomic_load_n(reinterpret_cast<uint64_t *>(p + NNP_RING_OFF_HEAD), __ATOMIC_RELAXED);
    uint64_t limit;
    std::memcpy(&limit, p + NNP_RING_OFF_LIMIT, sizeof(limit));
    if constexpr (kShaped) {
        if (__builtin_expect(h + kSlots > limit, 0))
            return ring_put_op_slow(b, f, ts->exts[k], end);
        ring_write_op(p, h, f, ts->exts[k], end);
    } else {
        if (__builtin_expect(h + kSlots > limit, 0))
            return ring_put_brief_slow(b, f, end);
        ring_write_brief(p, h, f, end);
    }
}

void on_op_end(const at::RecordFunction &fn, at::ObserverContext *ctx)
{
    return op_end<false>(fn, ctx);
}

void on_op_end_inputs(const at::RecordFunction &fn, at::ObserverContext *ctx)
{
    return op_end<true>(fn, ctx);
}

} // namespace

std::atomic<const int *> g_gate{nullptr};

nnp_str_t current_op_name()
{
    ThreadState *ts = thread_state();
    return ts ? top_op_name(ts) : 0;
}

namespace
{

// ops_install's work, under g_install_lock.
void install_locked()
{
    if (g_ops_handle != at::INVALID_CALLBACK_HANDLE)
        return;
    user_scopes_init();
    std::call_once(g_probe_once, probe_names);
    g_gate.store(nnp__ring_gate(), std::memory_order_relaxed);
    g_tsc.store(nnp__ring_ticks_are_tsc(), std::memory_order_relaxed);
    bool inputs = g_cfg.shapes.load() || g_cfg.flops.load();
    // A device back end that links ops to their kernels (the CUDA one) is there when the
    // window opens: every op then takes the path that gives it an id.
    bool corr = nnp__correlation_active();
    g_corr_mode.store(corr, std::memory_order_relaxed);
    at::RecordFunctionCallback::StartCallback start =
        stacks_active() || corr ? (inputs ? on_op_start_stacks_inputs : on_op_start_stacks)
        : inputs                ? on_op_start_inputs
        : g_name_word.load() != kNoOffset ? on_op_start
                                          : on_op_start_unprobed;
    // Inputs are copied for every op only when shapes or FLOPs are asked for: boxing them
    // is the largest cost a callback can add (torch's own record_shapes pays it too).
    // Collectives' inputs (their byte counts) come without it (on_user_start).
    g_ops_handle = at::addGlobalCallback(
        at::RecordFunctionCallback(start, inputs ? on_op_end_inputs : on_op_end)
            .needsInputs(inputs));
}

// ops_remove's work, under g_install_lock.
void remove_locked()
{
    if (g_ops_handle != at::INVALID_CALLBACK_HANDLE)
        at::removeCallback(g_ops_handle);
    g_ops_handle = at::INVALID_CALLBACK_HANDLE;
}

} // namespace

void ops_install()
{
    std::lock_guard<std::mutex> guard(g_install_lock);
    install_locked();
}

void ops_remove()
{
    std::lock_guard<std::mutex> guard(g_install_lock);
    remove_locked();
}

bool ops_installed()
{
    std::lock_guard<std::mutex> guard(g_install_lock);
    return g_ops_handle != at::INVALID_CALLBACK_HANDLE;
}

void ops_reinstall()
{
    // One hold of the lock: a window closing on another thread between the test and the
    // install would otherwise get its callbacks back.
    std::lock_guard<std::mutex> guard(g_install_lock);
    if (g_ops_handle != at::INVALID_CALLBACK_HANDLE) {
        remove_locked();
        install_locked();
    }
}

} // namespace nnp_torch
