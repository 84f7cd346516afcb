// torch_internal.h - shared state of the PyTorch shim (src/collect/torch/): the
// configuration the RecordFunction callbacks read, the per-thread state (op stack, module
// scopes, string caches), and the functions each file of the shim offers the others.
// The callbacks read the configuration with relaxed loads: it only changes at window
// boundaries, when the callbacks are re-installed.
#ifndef NNP_TORCH_INTERNAL_H
#define NNP_TORCH_INTERNAL_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "nnprof/nnprof.h"
#include "nnprof_torch.h"
#include "record/ring_abi.h"

// raw_format.h is C11: its layout checks compile as C++'s static_assert.
#define _Static_assert static_assert
#include "format/raw_format.h"
#undef _Static_assert

namespace at
{
struct RecordFunction;
struct ObserverContext;
} // namespace at

namespace nnp_torch
{

// The configuration as the callbacks read it.
struct Config {
    std::atomic<bool> shapes{false};
    std::atomic<bool> memory{false};
    std::atomic<bool> flops{false};
    std::atomic<bool> modules{false};
    std::atomic<bool> auto_steps{false};
    std::atomic<uint32_t> comm_group{0};
};
extern Config g_cfg;

struct Counters {
    std::atomic<uint64_t> windows{0};
    std::atomic<uint64_t> depth_overflow{0};
    std::atomic<uint64_t> unmatched_ends{0};
    std::atomic<uint64_t> flops_errors{0};
    std::atomic<uint64_t> hook_errors{0};
    std::atomic<uint64_t> memory_threads{0};
    std::atomic<uint64_t> stack_nodes_capped{0};
};
extern Counters g_counters;

// What a cached name is, decided once when it enters a thread's cache.
enum NameKind : uint8_t {
    NAME_PLAIN = 0,
    NAME_FLOPS_MATRIX, // torch computes FLOPs for it: convolution, matrix products
    NAME_FLOPS_VECTOR, // torch computes FLOPs for it: element-wise add, mul
    NAME_COMM,         // a collective of a process group ("gloo:all_reduce")
    NAME_OPT_STEP,     // "Optimizer.step#SGD.step": the end of a training iteration
};

// One string a thread has interned: the key (bytes and scope) and what it maps to.
struct NameEntry {
    uint64_t hash;
    char *str; // owned copy of the key bytes (NUL-terminated)
    uint32_t len;
    uint32_t scope; // scope handle the name was combined with, 0 = none
    nnp_str_t id;   // the op's full name ("<scope>/<name>" or the name)
    nnp_str_t type; // the name alone (the op type)
    uint8_t kind;   // NameKind
    uint8_t comm;   // nnp_comm_kind_t when kind == NAME_COMM
};

// What the ops callback needs of a name: returned by value (in two registers).
struct NameIds {
    nnp_str_t id;   // NameEntry::id
    nnp_str_t type; // NameEntry::type
    uint8_t kind;   // NameKind
};

// An open-addressing table of a thread's strings, growing by doubling up to a hard cap;
// past the cap names are interned on every use (slow but correct) and counted.
class NameCache
{
  public:
    NameCache() = default;
    ~NameCache();
    NameCache(const NameCache &) = delete;
    NameCache &operator=(const NameCache &) = delete;
    // The entry of (s, len, scope), created on first use. Never NULL: when the table is
    // full or out of memory, *tmp is filled and returned.
    const NameEntry *get(const char *s, size_t len, uint32_t scope, NameEntry *tmp);
    // The ids of an op name through a small cache, so that a hit costs no hashing of the
    // text. A name that lives in an operator's schema (stable, see torch_ops.cpp) is cached
    // under the schema's address, which the caller reads from the RecordFunction without
    // asking torch for the name: find_stable() is then exact without reading any text.
    // Other names (built for one call: autograd nodes, "autograd::engine::evaluate_function:
    // MmBackward0") are cached in a table of their own by what they hold, not where: the
    // allocator gives the next call's copy of a name another address often enough (each a
    // miss: a hash and a table lookup, ~15 misses a step of the small-op model when they
    // were cached by address), so a bucket is chosen by the length and last 16 bytes,
    // which tell most names apart, and the text is compared on each hit. A slot holds a
    // copy of the ids (no second lookup in the table on a hit). Inline: they run for every
    // op.
    bool find_stable(const void *key, uint32_t scope, NameIds *out) const
    {
        const PtrSlot *b = &ptrs_[bucket(key)];
        for (size_t w = 0; w < kWays; w++) {
            if (b[w].p == key && b[w].scope == scope) {
                *out = NameIds{b[w].id, b[w].type, b[w].kind};
                return true;
            }
        }
        return false;
    }
    // The ids of NUL-terminated s of len bytes, created on first use. stable_key: the schema
    // address of a stable name that find_stable() did not find (it is cached under it),
    // else NULL.
    NameIds get_cstr(const char *s, size_t len, uint32_t scope, const void *stable_key,
                     NameEntry *tmp)
    {
        if (stable_key)
            return get_cstr_miss(s, len, scope, stable_key, tmp);
        uint64_t tail = tail_word(s, len);
        const OwnedSlot *b = &owned_[owned_bucket(s, len, tail) * kOwnedWays];
        for (size_t w = 0; w < kOwnedWays; w++) {
            // An empty slot has str NULL (and len 0, tail 0). Equal lengths: memcmp reads
            // neither text past its end.
            if (b[w].len == len && b[w].tail == tail && b[w].scope == scope && b[w].str &&
                std::memcmp(b[w].str, s, len) == 0)
                return NameIds{b[w].id, b[w].type, b[w].kind};
        }
        return get_cstr_miss(s, len, scope, nullptr, tmp);
    }

    // A cache whose entries the caller fills (not names): the entry of a key of n words,
    // or NULL; put_key() adds one (key -> id, type), unless the table is full.
    // The entry's str holds its own copy of the key, which stays where it is (the table
    // grows by moving entries, not their copies) until the cache is destroyed.
    const NameEntry *find_key(const uint64_t *key, size_t n) const;
    const NameEntry *put_key(const uint64_t *key, size_t n, nnp_str_t id, nnp_str_t type);

  private:
    const NameEntry *find(const char *s, size_t len, uint32_t scope, uint64_t h) const;
    // The entry of hash h for which is_key(entry) holds, or NULL (linear probing).
    template <typename IsKey> const NameEntry *probe(uint64_t h, IsKey is_key) const
    {
        if (!cap_)
            return nullptr;
        for (size_t j = h & (cap_ - 1);; j = (j + 1) & (cap_ - 1)) {
            const NameEntry *e = &tab_[j];
            if (!e->hash)
                return nullptr;
            if (e->hash == h && is_key(*e))
                return e;
        }
    }
    // Copies the key and adds the filled entry; NULL when full or out of memory.
    const NameEntry *keep(const char *s, size_t len, const NameEntry &filled);
    // One schema address of the small cache: the entry's text (its own copy, which stays
    // where it is when the table grows) and ids. 32 bytes.
    struct PtrSlot {
        const void *p;   // the schema's address, NULL = empty
        const char *str; // the cached entry's text
        uint32_t scope;
        nnp_str_t id;
        nnp_str_t type;
        uint8_t kind;
    };
    // A name the RecordFunction owns, by its text (get_cstr). 40 bytes.
    struct OwnedSlot {
        const char *str; // the cached entry's text, NULL = empty
        uint64_t tail;   // tail_word() of the text
        uint32_t len;
        uint32_t scope;
        nnp_str_t id;
        nnp_str_t type;
        uint8_t kind;
    };
    // The last 8 bytes of a text of len bytes (all of a shorter one), as a word.
    static uint64_t tail_word(const char *s, size_t len)
    {
        uint64_t t = 0;
        if (len >= sizeof(t)) {
            std::memcpy(&t, s + len - sizeof(t), sizeof(t));
            return t;
        }
        for (size_t i = 0; i < len; i++)
            t |= uint64_t(uint8_t(s[i])) << (8 * i);
        return t;
    }
    // Buckets of kWays slots (by schema address; kOwnedWays for owned names, by text): a
    // model has ~100-300 op names.
    static constexpr size_t kWays = 4;
    static constexpr size_t kOwnedWays = 8;
    static constexpr size_t kBuckets = 128;
    static size_t bucket(const void *p)
    {
        return bucket_index(p) * kWays;
    }
    // The bucket of an owned name of len bytes whose tail_word() is tail: by its length and
    // its last 16 bytes (the names of autograd nodes share their first bytes and often
    // their last 8, "Backward0").
    static size_t owned_bucket(const char *s, size_t len, uint64_t tail)
    {
        uint64_t before = 0; // the 8 bytes before the tail
        if (len >= 2 * sizeof(before))
            std::memcpy(&before, s + len - 2 * sizeof(before), sizeof(before));
        return bucket_of(tail ^ (before + len));
    }
    static size_t bucket_index(const void *p)
    {
        return bucket_of(uint64_t(reinterpret_cast<uintptr_t>(p)));
    }
    static size_t bucket_of(uint64_t k)
    {
        // Fibonacci hashing: the top bits of k times 2^64 / phi. Every bit of k counts: the
        // schemas' addresses differ in their middle bits, names in their last bytes.
        constexpr uint64_t kPhi = 0x9e3779b97f4a7c15ull;
        constexpr int kBucketBits = 7; // log2(kBuckets)
        static_assert(size_t(1) << kBucketBits == kBuckets, "kBucketBits");
        return size_t((k * kPhi) >> (64 - kBucketBits));
    }
    NameIds get_cstr_miss(const char *s, size_t len, uint32_t scope, const void *stable_key,
                          NameEntry *tmp);
    bool grow();
    NameEntry *tab_ = nullptr;
    size_t cap_ = 0, n_ = 0;
    PtrSlot ptrs_[kBuckets * kWays] = {};
    uint8_t next_way_[kBuckets] = {}; // the way a miss replaces next, round robin
    OwnedSlot owned_[kBuckets * kOwnedWays] = {};
    uint8_t next_owned_[kBuckets] = {};
};

// Interns "<scope path>/<name>" (scope != 0) or name; fills the entry's ids and kind.
void name_entry_fill(NameEntry *e, const char *s, size_t len, uint32_t scope);

// The per-thread state of the callbacks. An op with nothing but its name and autograd link
// (no shapes, FLOPs or module scope: the commonest by far) is kept as the fields of its
// one-slot record (OP_BRIEF, raw_format.h), which the end writes into the thread's ring
// inline (ring_abi.h). An op with shapes but no FLOPs ("shaped": every op under
// record_shapes) is kept as its 2-slot OP record: the first slot's word in the frame, the
// extension slot in ThreadState::exts at the frame's depth, written inline the same way.
// Any other is "full": its record is the nnp_op_t of the same depth (ThreadState::ops),
// for nnp_op_since(). 32 bytes: a frame's address is a shift.
struct Frame {
    const void *fn; // the at::RecordFunction (its address identifies the call)
    uint64_t t0;    // nnp_now() at start
    uint64_t word0; // OP_BRIEF's or OP's first word (kind, slots, flags, name); 0 = a full op
    uint64_t link;  // OP_BRIEF's autograd link word (b); 0 for OP
};

// The shapes and dtypes ids of an op's inputs (nnp_op_t's input_shapes, input_dtypes).
struct InputIds {
    nnp_str_t shapes;
    nnp_str_t dtypes;
};

// The last few inputs an op name met (record_shapes), compared with the op's inputs word
// by word while they are walked, before any key is built or hashed: an op meets the same
// shapes step after step, a few ops (mm in a backward pass, empty) two or three in turn.
// The way tried first is the one that followed the last hit the last time (a cycle of up to
// kMemoWays inputs then hits at the first try).
constexpr size_t kMemoWays = 4;
struct InputsMemo {
    struct Way {
        const char *key;  // the inputs cache's copy of the key (NameCache::find_key), NULL = empty
        uint32_t inputs;  // the number of inputs the key is of
        nnp_str_t shapes; // its shapes and dtypes ids
        nnp_str_t dtypes;
        uint8_t next; // the way that hit after this one, last time
    };
    nnp_str_t name; // the op's name id (NameEntry::id); 0 = empty
    uint8_t last;   // the way that hit last
    uint8_t fill;   // the way a miss replaces next, round robin
    Way ways[kMemoWays];
};
constexpr size_t kMemoSlots = 256; // by op name id: a model has ~100-300 op names

constexpr int kMaxDepth = 64;      // ops nest ~10 deep in practice (autograd + aten layers)
constexpr int kMaxScopes = 128;    // module nesting of very deep networks
constexpr size_t kFmtBytes = 4096; // shapes/dtypes text of one op; longer is cut at a field
constexpr size_t kKeyWords = 256;  // inputs' key of one op; longer ones are not cached

struct ThreadState {
    struct nnp_tbuf *ring = nullptr; // its ring in libnnprof, when ops are written inline
    int depth = 0;
    int scope_depth = 0;
    Frame frames[kMaxDepth];
    nnp_op_t ops[kMaxDepth]; // the record of a full op, at its frame's depth
    // The extension slot of a shaped op (Frame), at its frame's depth.
    nnp_rec_op_ext_t exts[kMaxDepth];
    uint32_t scopes[kMaxScopes];
    NameCache names;  // op names (with their scope)
    NameCache texts;  // shapes and dtypes strings
    NameCache inputs; // inputs' key (kinds, dtypes, sizes) -> shapes and dtypes ids
    InputsMemo memo[kMemoSlots] = {};
    char fmt[kFmtBytes];
    uint64_t key[kKeyWords];
};

// The calling thread's state. initial-exec TLS: the shim is loaded after the program
// started (dlopen), but 9 bytes fit glibc's static TLS surplus, and a hot-path access is
// then one load instead of a __tls_get_addr call. __thread, not thread_local: a pointer
// needs no dynamic initialisation, and an extern thread_local makes every other file
// test for (and call) the variable's TLS init function on each access.
extern __thread ThreadState *t_state __attribute__((tls_model("initial-exec")));
ThreadState *thread_state_slow();

// The calling thread's state, created on first use; NULL while the thread exits or when
// out of memory.
inline ThreadState *thread_state()
{
    ThreadState *s = t_state;
    return __builtin_expect(s != nullptr, 1) ? s : thread_state_slow();
}

// Scope handles: "Net/layer1" <-> small integers (shared by every thread, mutex inside).
uint32_t scope_handle(const char *path);
// Copies the path of a handle into buf (cap bytes); returns its length or 0 if unknown.
size_t scope_path(uint32_t handle, char *buf, size_t cap);

// Window hooks of each part (called by the collector, see torch_shim.cpp).
void ops_install(); // adds the RecordFunction callbacks for the current configuration
void ops_remove();  // removes them
bool ops_installed();
void ops_reinstall(); // removes and adds them again when installed (a new configuration)
void memory_install();
void memory_remove();
void steps_reset(); // auto_steps: forget the previous optimizer step

// auto_steps: an optimizer step ended now (called by the user-scope callback).
void steps_on_optimizer_end();

// User scopes (record_function, optimizer steps, c10d work; torch_user.cpp): their start
// and end, called by the ops callbacks for RecordScope::USER_SCOPE, and the interning of
// their names' constants (once, from ops_install).
std::unique_ptr<at::ObserverContext> on_user_start(const at::RecordFunction &fn);
void on_user_end(at::ObserverContext *ctx);
void user_scopes_init();

// record_shapes: the shapes and dtypes ids of fn's inputs (0 when their text does not fit),
// through the memo of the op's name id and the thread's caches (torch_shapes.cpp).
InputIds fill_shapes(ThreadState *ts, const at::RecordFunction &fn, nnp_str_t name);

// ---- records written into the thread's ring inline (ring_abi.h), by the ops callbacks
// (torch_ops.cpp) and the memory reporter (torch_memory.cpp) ----

// libnnprof's gate word, set by ops_install() and memory_install() before their callbacks
// are added (defined in torch_ops.cpp).
extern std::atomic<const int *> g_gate;

// The gate bits every recording call tests (NNP_GATE_OPS, NNP_GATE_MEMORY, ...).
inline int gate_bits()
{
    return __atomic_load_n(g_gate.load(std::memory_order_relaxed), __ATOMIC_RELAXED);
}

// The time-stamp counter, which nnp_now() returns where a thread has a ring: read inline,
// a call into libnnprof twice per op cost about 14 instructions.
inline uint64_t tsc_ticks()
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#else
    return 0; // not reached: a thread has a ring only with TSC ticks
#endif
}

// The first 8 bytes of a record slot: kind, n_slots, flags, name (raw_format.h's nnp_rec_t,
// little-endian as every raw file is), stored as one word.
static_assert(offsetof(nnp_rec_t, kind) == 0 && offsetof(nnp_rec_t, n_slots) == 1 &&
                  offsetof(nnp_rec_t, flags) == 2 && offsetof(nnp_rec_t, name) == 4 &&
                  offsetof(nnp_rec_t, ts) == 8 && offsetof(nnp_rec_t, a) == 16 &&
                  offsetof(nnp_rec_t, b) == 24,
              "nnp_rec_t as the shim's ring writes write it");
constexpr int kWordFlagsShift = 16, kWordNameShift = 32, kWordSlotsShift = 8;
constexpr uint64_t kWordKindMask = 0xFF;

// The op on top of ts's stack, 0 when none: owner of allocations.
inline nnp_str_t top_op_name(const ThreadState *ts)
{
    int d = ts->depth;
    if (d <= 0)
        return 0;
    uint64_t w = ts->frames[d - 1].word0;
    return w ? nnp_str_t(w >> kWordNameShift) : ts->ops[d - 1].name;
}

// with_stack (torch_stacks.cpp): whether Python stacks are kept (the op callbacks then
// record each op's), and the text id of the calling thread's stack (0 = none; no lock, no
// Python call).
bool stacks_active();
nnp_str_t stacks_current();

// The op running on this thread (top_op_name of its state), 0 when none.
nnp_str_t current_op_name();

} // namespace nnp_torch

#endif // NNP_TORCH_INTERNAL_H
