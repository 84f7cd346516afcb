// torch_memory.cpp - tensor memory of the PyTorch shim: a c10 MemoryReportingInfoBase
// pushed as the PROFILER_STATE debug info of the thread that opens the window (as torch's
// profiler does), so c10's CPU allocator reports every allocation and free of that thread
// and of the threads torch propagates its state to (autograd engine, at::launch).
// Allocations become MEM_ALLOC records owned by the op running at that moment, frees
// MEM_FREE records: written into the thread's ring inline (ring_abi.h), as the ops are,
// with the bytes nnp_mem_alloc/nnp_mem_free write; through those calls when the thread has
// no ring (its ticks are not the TSC, or its first op has not ended yet) or it is full.
#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include "torch_internal.h"

namespace nnp_torch
{

namespace
{

static_assert(offsetof(nnp_rec_alloc_ext_t, owner_op) == 0 &&
                  offsetof(nnp_rec_alloc_ext_t, device_id) == 4 &&
                  sizeof(nnp_rec_alloc_ext_t) == sizeof(nnp_rec_t),
              "nnp_rec_alloc_ext_t as mem_put writes it");
// First words of the records (torch_internal.h's kWord*): flags 0 (ticks), name 0.
constexpr uint64_t kAllocSlots = 2;
constexpr uint64_t kAllocWord0 = uint64_t(NNP_REC_MEM_ALLOC) | kAllocSlots << kWordSlotsShift;
constexpr uint64_t kFreeWord0 = uint64_t(NNP_REC_MEM_FREE) | uint64_t(1) << kWordSlotsShift;

// Writes a MEM_ALLOC (n = 2, slot 1 owner and device) or MEM_FREE (n = 1) record into ring
// b inline: the bytes alloc_put() (record.c) and put1() (record_internal.h) write for the same
// call, with ticks read as nnp_now() reads them (a thread has a ring only when they are the TSC).
// False when the ring has no room without its slow path: the caller then records through libnnprof.
template <uint64_t kSlots>
inline bool mem_put(struct nnp_tbuf *b, uint64_t addr, uint64_t bytes, uint64_t ext0)
{
    unsigned char *p = reinterpret_cast<unsigned char *>(b);
    uint64_t h =
        __atomic_load_n(reinterpret_cast<uint64_t *>(p + NNP_RING_OFF_HEAD), __ATOMIC_RELAXED);
    uint64_t limit;
    std::memcpy(&limit, p + NNP_RING_OFF_LIMIT, sizeof(limit));
    if (__builtin_expect(h + kSlots > limit, 0))
        return false;
    uint64_t mask;
    unsigned char *slots;
    std::memcpy(&slots, p + NNP_RING_OFF_SLOTS, sizeof(slots));
    std::memcpy(&mask, p + NNP_RING_OFF_MASK, sizeof(mask));
    unsigned char *r = slots + (h & mask) * sizeof(nnp_rec_t);
    const uint64_t word0 = kSlots == kAllocSlots ? kAllocWord0 : kFreeWord0;
    const uint64_t ts = tsc_ticks();
    std::memcpy(r, &word0, sizeof(word0));
    std::memcpy(r + offsetof(nnp_rec_t, ts), &ts, sizeof(ts));
    std::memcpy(r + offsetof(nnp_rec_t, a), &addr, sizeof(addr));
    std::memcpy(r + offsetof(nnp_rec_t, b), &bytes, sizeof(bytes));
    if (kSlots == kAllocSlots) {
        unsigned char *x = slots + ((h + 1) & mask) * sizeof(nnp_rec_t);
        const uint64_t zero = 0;
        std::memcpy(x, &ext0, sizeof(ext0));
        std::memcpy(x + 8, &zero, sizeof(zero));
        std::memcpy(x + 16, &zero, sizeof(zero));
        std::memcpy(x + 24, &zero, sizeof(zero));
    }
    __atomic_store_n(reinterpret_cast<uint64_t *>(p + NNP_RING_OFF_HEAD), h + kSlots,
                     __ATOMIC_RELEASE);
    return true;
}

// A report not written inline: through libnnprof's calls (out of line, so that the inline
// path saves no registers).
__attribute__((noinline)) void mem_alloc_call(uint64_t addr, uint64_t bytes, uint32_t dev)
{
    nnp_tensor_t t{};
    t.address = addr;
    t.size_bytes = bytes;
    t.owner_op = current_op_name();
    t.device_id = dev;
    nnp_mem_alloc(&t);
}

class Reporter final : public c10::MemoryReportingInfoBase
{
  public:
    void reportMemoryUsage(void *ptr, int64_t alloc_size, int64_t, int64_t,
                           c10::Device device) override
    {
        uint64_t addr = uint64_t(reinterpret_cast<uintptr_t>(ptr));
        ThreadState *ts = t_state;
        struct nnp_tbuf *b = ts ? ts->ring : nullptr;
        if (alloc_size > 0) {
            uint32_t dev = device.index() > 0 ? uint32_t(device.index()) : 0;
            if (__builtin_expect(b != nullptr, 1)) {
                // nnp_mem_alloc's test: a window open that lets memory through.
                if (!(gate_bits() & NNP_GATE_MEMORY))
                    return;
                uint64_t ext0 = uint64_t(top_op_name(ts)) | uint64_t(dev) << 32;
                if (__builtin_expect(mem_put<kAllocSlots>(b, addr, uint64_t(alloc_size), ext0), 1))
                    return;
            }
            return mem_alloc_call(addr, uint64_t(alloc_size), dev);
        }
        if (alloc_size < 0) {
            if (__builtin_expect(b != nullptr, 1)) {
                if (!(gate_bits() & NNP_GATE_MEMORY))
                    return;
                if (__builtin_expect(mem_put<1>(b, addr, uint64_t(-alloc_size), 0), 1))
                    return;
            }
            return nnp_mem_free(addr, uint64_t(-alloc_size));
        }
    }
    // c10 asks before each report. A window open that lets memory through: what
    // nnp_mem_alloc tests (a report outside it would record nothing).
    bool memoryProfilingEnabled() const override
    {
        return g_cfg.memory.load(std::memory_order_relaxed) && (gate_bits() & NNP_GATE_MEMORY);
    }
};

std::mutex g_lock;
std::thread::id g_thread; // the thread the reporter was pushed on
bool g_pushed = false;

} // namespace

void memory_install()
{
    std::lock_guard<std::mutex> guard(g_lock);
    if (g_pushed || !g_cfg.memory.load())
        return;
    // torch's profiler keeps its state under the same kind: while it runs on this thread,
    // ours cannot be installed (and must not replace it).
    if (c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PROFILER_STATE)) {
        g_counters.memory_threads.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    g_gate.store(nnp__ring_gate(), std::memory_order_relaxed);
    c10::ThreadLocalDebugInfo::_push(c10::DebugInfoKind::PROFILER_STATE,
                                     std::make_shared<Reporter>());
    g_thread = std::this_thread::get_id();
    g_pushed = true;
}

void memory_remove()
{
    std::lock_guard<std::mutex> guard(g_lock);
    if (!g_pushed)
        return;
    // Thread-local state can only be popped on its own thread; a window closed elsewhere
    // leaves the reporter in place, where it reports nothing outside windows.
    if (std::this_thread::get_id() != g_thread)
        return;
    if (dynamic_cast<Reporter *>(
            c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PROFILER_STATE)) == nullptr)
        return; // something pushed above ours and is still there: leave both
    c10::ThreadLocalDebugInfo::_pop(c10::DebugInfoKind::PROFILER_STATE);
    g_pushed = false;
}

} // namespace nnp_torch
