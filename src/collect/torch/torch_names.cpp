// torch_names.cpp - strings of the PyTorch shim: each thread's cache from op names,
// shapes and dtypes texts to libnnprof string ids (so the hot path interns nothing after
// a name's first use), the module scope table, and the per-thread state.
// nnp_intern() takes a lock; the caches make it a once-per-string-per-thread cost.
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "torch_internal.h"

namespace nnp_torch
{

namespace
{

// First table size, and the cap past which new strings are no longer cached: 2^16
// distinct op names or shape texts per thread is far beyond a real model's (a ResNet-50
// training step has ~150 distinct op names and ~400 shape texts).
constexpr size_t kCacheInitial = 256;
constexpr size_t kCacheMax = size_t(1) << 16;

// Mixing constants of splitmix64 (Steele et al.), a fast hash with good avalanche.
constexpr uint64_t kMix1 = 0xbf58476d1ce4e5b9ull;
constexpr uint64_t kMix2 = 0x94d049bb133111ebull;
constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ull;

uint64_t hash_bytes(const char *s, size_t n, uint32_t scope)
{
    uint64_t h = (n + (uint64_t(scope) << 32)) * kGolden;
    while (n >= 8) {
        uint64_t v;
        std::memcpy(&v, s, 8);
        h = (h ^ v) * kMix1;
        h ^= h >> 31;
        s += 8;
        n -= 8;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) // the last 0-7 bytes
        v |= uint64_t(uint8_t(s[i])) << (8 * i);
    h = (h ^ v) * kMix2;
    h ^= h >> 29;
    return h | 1; // 0 marks an empty slot
}

// Hash of a key of 64-bit words (find_key/put_key: input kinds, dtype addresses, sizes;
// a few words per op with record_shapes): one xor-multiply per word, then splitmix64's
// finish, which brings the high bits (where a multiply carries every input bit) down to
// the low bits the table indexes by. About half of hash_bytes' work per word.
uint64_t hash_words(const uint64_t *key, size_t n)
{
    uint64_t h = n * kGolden;
    for (size_t i = 0; i < n; i++)
        h = (h ^ key[i]) * kMix1;
    h ^= h >> 31;
    h *= kMix2;
    h ^= h >> 29;
    return h | 1; // 0 marks an empty slot
}

bool has_prefix(const char *s, size_t len, const char *p)
{
    size_t n = std::strlen(p);
    return len >= n && std::memcmp(s, p, n) == 0;
}

// Ops torch's profiler computes FLOPs for (torch/csrc/profiler/util.cpp, saveExtraArgs
// and computeFlops of 1.13): matrix products and convolution, element-wise add and mul.
const char *const kFlopsMatrix[] = {"aten::conv2d", "aten::mm", "aten::addmm", "aten::bmm",
                                    "aten::baddbmm"};
const char *const kFlopsVector[] = {"aten::mul", "aten::mul_", "aten::add", "aten::add_"};

bool name_in(const char *s, size_t len, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (std::strlen(list[i]) == len && std::memcmp(list[i], s, len) == 0)
            return true;
    }
    return false;
}

// Collective names of c10d's process groups: "<backend>:<collective>" (ProcessGroupGloo
// work titles such as "gloo:all_reduce"; NCCL and MPI use the same form).
struct CommName {
    const char *suffix;
    nnp_comm_kind_t kind;
};
const CommName kCommNames[] = {
    {"all_reduce", NNP_COMM_ALLREDUCE},
    {"allreduce", NNP_COMM_ALLREDUCE},
    {"all_gather", NNP_COMM_ALLGATHER},
    {"allgather", NNP_COMM_ALLGATHER},
    {"reduce_scatter", NNP_COMM_REDUCESCATTER},
    {"broadcast", NNP_COMM_BROADCAST},
    {"reduce", NNP_COMM_REDUCE},
    {"all_to_all", NNP_COMM_ALLTOALL},
    {"alltoall", NNP_COMM_ALLTOALL},
    {"send", NNP_COMM_SEND},
    {"recv", NNP_COMM_RECV},
    {"barrier", NNP_COMM_BARRIER},
};
const char *const kCommPrefixes[] = {"gloo:", "nccl:", "mpi:", "ucc:"};

bool comm_kind(const char *s, size_t len, nnp_comm_kind_t *kind)
{
    for (const char *p : kCommPrefixes) {
        if (!has_prefix(s, len, p))
            continue;
        const char *rest = s + std::strlen(p);
        size_t n = len - std::strlen(p);
        *kind = NNP_COMM_OTHER;
        for (const CommName &c : kCommNames) {
            if (has_prefix(rest, n, c.suffix)) {
                *kind = c.kind;
                break;
            }
        }
        return true;
    }
    return false;
}

// Scope handles: index + 1 into a vector of paths; handles are never reused.
std::mutex g_scope_lock;
std::vector<std::string> *g_scopes; // leaked at exit on purpose: callbacks may still run

} // namespace

uint32_t scope_handle(const char *path)
{
    std::lock_guard<std::mutex> guard(g_scope_lock);
    if (!path || !*path)
        return 0;
    if (!g_scopes)
        g_scopes = new std::vector<std::string>();
    // Paths are few (one per module of the model); a linear search at set-up is fine
    // because Python caches the handle of each module.
    for (size_t i = 0; i < g_scopes->size(); i++) {
        if ((*g_scopes)[i] == path)
            return uint32_t(i + 1);
    }
    g_scopes->emplace_back(path);
    return uint32_t(g_scopes->size());
}

size_t scope_path(uint32_t handle, char *buf, size_t cap)
{
    std::lock_guard<std::mutex> guard(g_scope_lock);
    if (!g_scopes || handle == 0 || handle > g_scopes->size() || cap == 0)
        return 0;
    const std::string &s = (*g_scopes)[handle - 1];
    size_t n = s.size() < cap - 1 ? s.size() : cap - 1;
    std::memcpy(buf, s.data(), n);
    buf[n] = '\0';
    return n;
}

void name_entry_fill(NameEntry *e, const char *s, size_t len, uint32_t scope)
{
    std::string key(s, len);
    nnp_comm_kind_t ck = NNP_COMM_OTHER;
    e->type = nnp_intern(key.c_str());
    e->id = e->type;
    if (scope) {
        char path[1024];
        size_t n = scope_path(scope, path, sizeof(path));
        if (n) {
            std::string full(path, n);
            full += '/';
            full += key;
            e->id = nnp_intern(full.c_str());
        }
    }
    e->kind = NAME_PLAIN;
    e->comm = 0;
    if (name_in(s, len, kFlopsMatrix, sizeof(kFlopsMatrix) / sizeof(kFlopsMatrix[0])))
        e->kind = NAME_FLOPS_MATRIX;
    else if (name_in(s, len, kFlopsVector, sizeof(kFlopsVector) / sizeof(kFlopsVector[0])))
        e->kind = NAME_FLOPS_VECTOR;
    else if (comm_kind(s, len, &ck)) {
        e->kind = NAME_COMM;
        e->comm = uint8_t(ck);
    } else if (has_prefix(s, len, "Optimizer.step#"))
        e->kind = NAME_OPT_STEP;
}

NameCache::~NameCache()
{
    for (size_t i = 0; i < cap_; i++)
        std::free(tab_[i].str);
    std::free(tab_);
}

bool NameCache::grow()
{
    size_t ncap = cap_ ? cap_ * 2 : kCacheInitial;
    if (ncap > kCacheMax)
        return false;
    NameEntry *nt = static_cast<NameEntry *>(std::calloc(ncap, sizeof(NameEntry)));
    if (!nt)
        return false;
    for (size_t i = 0; i < cap_; i++) {
        if (!tab_[i].hash)
            continue;
        size_t j = tab_[i].hash & (ncap - 1);
        while (nt[j].hash)
            j = (j + 1) & (ncap - 1);
        nt[j] = tab_[i];
    }
    std::free(tab_);
    tab_ = nt;
    cap_ = ncap;
    // The address slots stay valid: they hold copies of the ids and the entries' texts,
    // which do not move.
    return true;
}

NameIds NameCache::get_cstr_miss(const char *s, size_t len, uint32_t scope, const void *stable_key,
                                 NameEntry *tmp)
{
    const NameEntry *e = get(s, len, scope, tmp);
    if (e != tmp && stable_key) {
        size_t b = bucket_index(stable_key);
        size_t w = next_way_[b];
        next_way_[b] = uint8_t((w + 1) % kWays);
        ptrs_[b * kWays + w] = PtrSlot{stable_key, e->str, scope, e->id, e->type, e->kind};
    } else if (e != tmp) {
        uint64_t tail = tail_word(s, len);
        size_t b = owned_bucket(s, len, tail);
        size_t w = next_owned_[b];
        next_owned_[b] = uint8_t((w + 1) % kOwnedWays);
        owned_[b * kOwnedWays + w] =
            OwnedSlot{e->str, tail, uint32_t(len), scope, e->id, e->type, e->kind};
    }
    return NameIds{e->id, e->type, e->kind};
}

const NameEntry *NameCache::find(const char *s, size_t len, uint32_t scope, uint64_t h) const
{
    return probe(h, [&](const NameEntry &e) {
        return e.len == len && e.scope == scope && std::memcmp(e.str, s, len) == 0;
    });
}

const NameEntry *NameCache::keep(const char *s, size_t len, const NameEntry &filled)
{
    // Load factor at most 1/2.
    if ((n_ + 1) * 2 > cap_ && !grow())
        return nullptr;
    char *copy = static_cast<char *>(std::malloc(len + 1));
    if (!copy)
        return nullptr;
    std::memcpy(copy, s, len);
    copy[len] = '\0';
    size_t j = filled.hash & (cap_ - 1);
    while (tab_[j].hash)
        j = (j + 1) & (cap_ - 1);
    tab_[j] = filled;
    tab_[j].str = copy;
    n_++;
    return &tab_[j];
}

const NameEntry *NameCache::get(const char *s, size_t len, uint32_t scope, NameEntry *tmp)
{
    uint64_t h = hash_bytes(s, len, scope);
    const NameEntry *e = find(s, len, scope, h);
    if (e)
        return e;
    // A miss: intern, then keep it.
    name_entry_fill(tmp, s, len, scope);
    tmp->hash = h;
    tmp->len = uint32_t(len);
    tmp->scope = scope;
    tmp->str = nullptr;
    e = keep(s, len, *tmp);
    return e ? e : tmp;
}

const NameEntry *NameCache::find_key(const uint64_t *key, size_t n) const
{
    size_t len = n * sizeof(uint64_t);
    // Compared word by word inline, without a memcmp call (and the register saves it
    // costs): this runs for every op when shapes are recorded.
    return probe(hash_words(key, n), [&](const NameEntry &e) {
        if (e.len != len)
            return false;
        for (size_t i = 0; i < n; i++) {
            uint64_t w;
            std::memcpy(&w, e.str + i * sizeof(w), sizeof(w)); // e.str: any alignment
            if (w != key[i])
                return false;
        }
        return true;
    });
}

const NameEntry *NameCache::put_key(const uint64_t *key, size_t n, nnp_str_t id, nnp_str_t type)
{
    NameEntry e{};
    e.hash = hash_words(key, n);
    e.len = uint32_t(n * sizeof(uint64_t));
    e.id = id;
    e.type = type;
    // Full or out of memory: not cached (NULL), looked up again next time.
    return keep(reinterpret_cast<const char *>(key), e.len, e);
}

namespace
{

// The owner object, touched only when a thread's state is created, frees it at thread
// exit; t_exited then stops a late callback from creating another.
thread_local bool t_exited;

struct StateOwner {
    ThreadState *p = nullptr;
    ~StateOwner()
    {
        t_state = nullptr;
        t_exited = true;
        delete p;
    }
};
thread_local StateOwner t_owner;

} // namespace

__thread ThreadState *t_state __attribute__((tls_model("initial-exec")));

ThreadState *thread_state_slow()
{
    ThreadState *s;
    if (t_exited)
        return nullptr;
    s = new (std::nothrow) ThreadState();
    if (!s)
        return nullptr;
    t_owner.p = s;
    t_state = s;
    return s;
}

} // namespace nnp_torch
