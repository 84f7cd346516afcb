// torch_ops.cpp - the RecordFunction callbacks of the PyTorch shim. Two global callbacks
// are installed while a window is open (ops_install/ops_remove):
//  * ops (every scope but USER_SCOPE: aten ops, autograd nodes, TorchScript): a start
//    pushes a frame on the thread's stack (start ticks, names, shapes, FLOPs, autograd
//    link); the end pops it and records the op with nnp_op_since(). No lock, no
//    allocation once a thread's caches hold the model's names (STYLE 7).
//  * user scopes (record_function, optimizer steps, process-group work): these may end on
//    another thread (c10d work completes on the backend's thread), so their state rides
//    in an ObserverContext. Collectives become communication records, the rest host
//    ranges (module "torch"), as Kineto shows them as user annotations.
#include <ATen/record_function.h>
#include <c10/util/Exception.h>
#include <torch/csrc/profiler/util.h>

#include <atomic>
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
at::CallbackHandle g_user_handle = at::INVALID_CALLBACK_HANDLE;

// ---- shapes and dtypes text ("32,784;784,128" / "float;float"), as nnp_op_t wants ----

// Appends s to the buffer; false when it does not fit.
bool put(char *buf, size_t &n, const char *s, size_t len)
{
    if (n + len >= kFmtBytes)
        return false;
    std::memcpy(buf + n, s, len);
    n += len;
    return true;
}

bool put_int(char *buf, size_t &n, int64_t v)
{
    char tmp[24];
    size_t k = 0;
    uint64_t u = v < 0 ? uint64_t(0) - uint64_t(v) : uint64_t(v);
    do {
        tmp[k++] = char('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        tmp[k++] = '-';
    if (n + k >= kFmtBytes)
        return false;
    while (k)
        buf[n++] = tmp[--k];
    return true;
}

// Text of one input's type, as torch's profiler names it (profiler/util.cpp inputTypes):
// a tensor's dtype ("float"), "Scalar", or the list kind.
const char *input_type(const c10::IValue &v, size_t *len)
{
    const char *s = "";
    if (v.isTensor()) {
        const at::Tensor &t = v.toTensor();
        if (t.defined()) {
            c10::string_view name = t.dtype().name();
            *len = name.size();
            return name.data();
        }
    } else if (v.isScalar()) {
        s = "Scalar";
    } else if (v.isList()) {
        // Every typed list is a list: the typed tests (calls into libtorch) run only for
        // lists, not for None or other inputs. A test is quick when the element type is
        // the one asked for and costly otherwise (a comparison of types): int lists (sizes,
        // dims), by far the most frequent, are tested first.
        if (v.isIntList())
            s = "IntList";
        else if (v.isTensorList())
            s = "TensorList";
        else if (v.isDoubleList())
            s = "DoubleList";
        else if (v.isBoolList())
            s = "BoolList";
        else
            s = "GenericList";
    }
    *len = std::strlen(s);
    return s;
}

// Interns a formatted text through the thread's cache.
nnp_str_t text_id(ThreadState *ts, size_t n)
{
    NameEntry tmp;
    if (n == 0)
        return 0;
    const NameEntry *e = ts->texts.get(ts->fmt, n, 0, &tmp);
    return e->type;
}

// Formats the shapes and dtypes texts of the inputs and interns them.
void format_inputs(ThreadState *ts, c10::ArrayRef<const c10::IValue> in, nnp_op_t *op)
{
    char *b = ts->fmt;
    size_t n = 0;
    bool ok = true;
    // Shapes: one field per input, dims joined by ','; non-tensors leave an empty field
    // (torch's "Input Dims" gives them []).
    for (size_t i = 0; i < in.size() && ok; i++) {
        if (i)
            ok = put(b, n, ";", 1);
        if (in[i].isTensor() && in[i].toTensor().defined()) {
            c10::IntArrayRef sizes = in[i].toTensor().sizes();
            for (size_t d = 0; d < sizes.size() && ok; d++) {
                if (d)
                    ok = put(b, n, ",", 1);
                ok = ok && put_int(b, n, sizes[d]);
            }
        }
    }
    // Inputs all without shape (e.g. a scalar-only op) still say how many there were.
    op->input_shapes = ok ? text_id(ts, n) : 0;
    n = 0;
    ok = true;
    for (size_t i = 0; i < in.size() && ok; i++) {
        size_t len = 0;
        const char *t = input_type(in[i], &len);
        if (i)
            ok = put(b, n, ";", 1);
        ok = ok && put(b, n, t, len);
    }
    op->input_dtypes = ok ? text_id(ts, n) : 0;
}

// What decides the two texts of the inputs, as words: per input a header (kind, number
// of dims), then for a defined tensor the address of its dtype's name (static, one per
// type) and its sizes; for anything else the address of input_type()'s text (a literal).
// Returns the number of words, 0 when they do not fit.
size_t inputs_key(c10::ArrayRef<const c10::IValue> in, uint64_t *key)
{
    constexpr uint64_t kTensor = 1, kOther = 2;
    constexpr int kDimsShift = 8;
    size_t n = 0;
    for (const c10::IValue &v : in) {
        if (v.isTensor() && v.toTensor().defined()) {
            const at::Tensor &t = v.toTensor();
            c10::IntArrayRef sizes = t.sizes();
            if (n + 2 + sizes.size() > kKeyWords)
                return 0;
            key[n++] = kTensor | (uint64_t(sizes.size()) << kDimsShift);
            key[n++] = reinterpret_cast<uintptr_t>(t.dtype().name().data());
            for (int64_t d : sizes)
                key[n++] = uint64_t(d);
        } else {
            size_t len;
            if (n + 2 > kKeyWords)
                return 0;
            key[n++] = kOther;
            key[n++] = reinterpret_cast<uintptr_t>(input_type(v, &len));
        }
    }
    return n;
}

// Shapes and dtypes ids of the op's inputs. An op meets the same few input shapes step
// after step: the texts are formatted and interned once per distinct key (inputs_key),
// later calls only build the key and look it up.
// Not inlined (nor fill_flops): on_op_start's common path then saves fewer registers.
__attribute__((noinline)) void fill_shapes(ThreadState *ts, const at::RecordFunction &fn,
                                           nnp_op_t *op)
{
    c10::ArrayRef<const c10::IValue> in = fn.inputs();
    size_t words = inputs_key(in, ts->key);
    if (words) {
        const NameEntry *e = ts->inputs.find_key(ts->key, words);
        if (e) {
            op->input_shapes = e->id;
            op->input_dtypes = e->type;
            return;
        }
    }
    format_inputs(ts, in, op);
    if (words)
        ts->inputs.put_key(ts->key, words, op->input_shapes, op->input_dtypes);
}

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
// no single offset, every name is compared (kNoOffset).
constexpr long kNoOffset = -1;
std::atomic<long> g_name_word{kNoOffset};
std::once_flag g_probe_once;

long probe_name_word(const std::string &text)
{
    at::RecordFunction rf{at::StepCallbacks{}};
    rf.before(std::string(text));
    const char *s = rf.name();
    if (!s || text != s)
        return kNoOffset;
    const unsigned char *base = reinterpret_cast<const unsigned char *>(&rf);
    long found = kNoOffset;
    int hits = 0;
    for (size_t k = 0; k + sizeof(s) <= sizeof(rf); k += alignof(const char *)) {
        const char *w;
        std::memcpy(&w, base + k, sizeof(w));
        if (w == s) {
            found = long(k);
            hits++;
        }
    }
    return hits == 1 ? found : kNoOffset;
}

void probe_names()
{
    constexpr size_t kHeapName = 48; // past any small-string buffer
    try {
        long heap = probe_name_word(std::string(kHeapName, 'n'));
        long in_place = probe_name_word("n");
        g_name_word.store(heap == in_place ? heap : kNoOffset);
    } catch (const std::exception &) {
        g_name_word.store(kNoOffset);
    }
}

// The word of fn where a name it owns is (see above), or NULL when the probe found none.
// For a name in a schema the word is the schema's address (fn holds a reference to it
// there): stable for as long as the operator is registered.
inline const void *name_word(const at::RecordFunction &fn)
{
    long off = g_name_word.load(std::memory_order_relaxed);
    if (off < 0)
        return nullptr;
    const void *w;
    std::memcpy(&w, reinterpret_cast<const unsigned char *>(&fn) + off, sizeof(w));
    return w;
}

// The ids of fn's name. A schema name found under its schema's address costs no call into
// torch (RecordFunction::name() is not inline); otherwise the name is read, and it is
// stable when it is not the word itself (see above).
inline NameIds op_name_ids(ThreadState *ts, const at::RecordFunction &fn, uint32_t scope)
{
    const void *w = name_word(fn);
    NameIds ids;
    if (w && ts->names.find_stable(w, scope, &ids))
        return ids;
    const char *name = fn.name();
    NameEntry tmp;
    return ts->names.get_cstr(name, scope, w && w != name ? w : nullptr, &tmp);
}

// ---- the ops callback ----

std::unique_ptr<at::ObserverContext> on_op_start(const at::RecordFunction &fn)
{
    // No test of the window here: the callback is installed only while one is open
    // (torch_shim.cpp), and nnp_op_since() tests it again at the end, where an op that
    // started just before the window closed is dropped. Testing twice cost a call into
    // libnnprof per op.
    ThreadState *ts = thread_state();
    if (!ts)
        return nullptr;
    if (ts->depth >= kMaxDepth) {
        g_counters.depth_overflow.fetch_add(1, std::memory_order_relaxed);
        return nullptr;
    }
    uint32_t scope = 0;
    if (ts->scope_depth > 0 && g_cfg.modules.load(std::memory_order_relaxed))
        scope = ts->scopes[ts->scope_depth <= kMaxScopes ? ts->scope_depth - 1 : kMaxScopes - 1];
    NameIds e = op_name_ids(ts, fn, scope);

    Frame &f = ts->frames[ts->depth++];
    f.fn = &fn;
    f.op = nnp_op_t{};
    f.op.name = e.id;
    f.op.type = e.type;
    int64_t seq = fn.seqNr();
    if (seq >= 0) {
        uint64_t fwd = fn.forwardThreadId();
        f.op.has_sequence = true;
        f.op.sequence_nr = seq;
        f.op.is_backward = fwd > 0;
        f.op.seq_thread = uint32_t(fwd > 0 ? fwd : fn.threadId());
    }
    if (fn.needsInputs()) {
        if (g_cfg.shapes.load(std::memory_order_relaxed))
            fill_shapes(ts, fn, &f.op);
        if ((e.kind == NAME_FLOPS_MATRIX || e.kind == NAME_FLOPS_VECTOR) &&
            g_cfg.flops.load(std::memory_order_relaxed))
            fill_flops(fn, e.kind, &f.op);
    }
    // Last, so that the shim's own work above is not counted in the op's time.
    f.t0 = nnp_now();
    return nullptr;
}

void on_op_end(const at::RecordFunction &fn, at::ObserverContext *)
{
    ThreadState *ts = thread_state();
    if (!ts || ts->depth == 0)
        return;
    int k = ts->depth - 1;
    // Ends come in reverse order of starts on one thread; a frame above the matching one
    // belongs to a call whose end will not come here (it never does for the ops scope, but
    // a mismatch must not corrupt the stack): drop such frames.
    if (__builtin_expect(ts->frames[k].fn != &fn, 0)) {
        while (k >= 0 && ts->frames[k].fn != &fn)
            k--;
        if (k < 0) {
            g_counters.unmatched_ends.fetch_add(1, std::memory_order_relaxed);
            return;
        }
    }
    ts->depth = k;
    Frame &f = ts->frames[k];
    nnp_op_since(&f.op, f.t0); // reads the end time itself, as early as it can
}

// ---- the user-scope callback ----

struct UserCtx : public at::ObserverContext {
    uint64_t t0 = 0;
    bool is_comm = false;
    bool is_opt_step = false;
    nnp_comm_t comm{};
    nnp_host_tag_t tag{};
};

nnp_str_t g_torch_module; // "torch": module of the host ranges of user scopes
nnp_str_t g_run_stage;    // "Run"

uint64_t input_bytes(const at::RecordFunction &fn)
{
    uint64_t bytes = 0;
    for (const c10::IValue &v : fn.inputs()) {
        if (v.isTensor()) {
            const at::Tensor &t = v.toTensor();
            if (t.defined())
                bytes += t.nbytes();
        } else if (v.isTensorList()) {
            for (const at::Tensor &t : v.toTensorList().vec()) {
                if (t.defined())
                    bytes += t.nbytes();
            }
        }
    }
    return bytes;
}

std::unique_ptr<at::ObserverContext> on_user_start(const at::RecordFunction &fn)
{
    if (!nnp_is_collecting())
        return nullptr;
    ThreadState *ts = thread_state();
    if (!ts)
        return nullptr;
    const char *name = fn.name();
    NameEntry tmp;
    const NameEntry *e = ts->names.get(name, std::strlen(name), 0, &tmp);
    std::unique_ptr<UserCtx> c(new (std::nothrow) UserCtx());
    if (!c)
        return nullptr;
    if (e->kind == NAME_COMM) {
        c->is_comm = true;
        c->comm.name = e->type;
        c->comm.kind = nnp_comm_kind_t(e->comm);
        c->comm.group = g_cfg.comm_group.load(std::memory_order_relaxed);
        c->comm.size_bytes = fn.needsInputs() ? input_bytes(fn) : 0;
        c->comm.peer = -1;
        c->t0 = nnp_now();
        return c;
    }
    c->is_opt_step = e->kind == NAME_OPT_STEP;
    c->tag.module = g_torch_module;
    c->tag.event = e->type;
    c->tag.stage = g_run_stage;
    c->tag.level = 1; // a user annotation (MindSpore host_info level 1 = user)
    nnp_range_begin(&c->tag);
    return c;
}

void on_user_end(const at::RecordFunction &, at::ObserverContext *ctx)
{
    UserCtx *c = static_cast<UserCtx *>(ctx);
    if (!c)
        return;
    if (c->is_comm) {
        nnp_comm_since(&c->comm, c->t0);
        return;
    }
    nnp_range_end(&c->tag);
    if (c->is_opt_step && g_cfg.auto_steps.load(std::memory_order_relaxed))
        steps_on_optimizer_end();
}

} // namespace

nnp_str_t current_op_name()
{
    ThreadState *ts = thread_state();
    if (!ts || ts->depth == 0)
        return 0;
    return ts->frames[ts->depth - 1].op.name;
}

void ops_install()
{
    std::lock_guard<std::mutex> guard(g_install_lock);
    if (g_ops_handle != at::INVALID_CALLBACK_HANDLE)
        return;
    if (!g_torch_module) {
        g_torch_module = nnp_intern("torch");
        g_run_stage = nnp_intern("Run");
    }
    std::call_once(g_probe_once, probe_names);
    bool inputs = g_cfg.shapes.load() || g_cfg.flops.load();
    std::unordered_set<at::RecordScope, std::hash<at::RecordScope>> op_scopes;
    for (int s = 0; s < int(at::RecordScope::NUM_SCOPES); s++) {
        if (at::RecordScope(s) != at::RecordScope::USER_SCOPE)
            op_scopes.insert(at::RecordScope(s));
    }
    // Inputs are copied for every op only when shapes or FLOPs are asked for: boxing them
    // is the largest cost a callback can add (torch's own record_shapes pays it too).
    g_ops_handle = at::addGlobalCallback(
        at::RecordFunctionCallback(on_op_start, on_op_end).needsInputs(inputs).scopes(op_scopes));
    // User scopes are few; collectives need their input tensors for the message size.
    g_user_handle = at::addGlobalCallback(at::RecordFunctionCallback(on_user_start, on_user_end)
                                              .needsInputs(true)
                                              .scopes({at::RecordScope::USER_SCOPE}));
}

void ops_remove()
{
    std::lock_guard<std::mutex> guard(g_install_lock);
    if (g_ops_handle != at::INVALID_CALLBACK_HANDLE)
        at::removeCallback(g_ops_handle);
    if (g_user_handle != at::INVALID_CALLBACK_HANDLE)
        at::removeCallback(g_user_handle);
    g_ops_handle = g_user_handle = at::INVALID_CALLBACK_HANDLE;
}

bool ops_installed()
{
    std::lock_guard<std::mutex> guard(g_install_lock);
    return g_ops_handle != at::INVALID_CALLBACK_HANDLE;
}

} // namespace nnp_torch
