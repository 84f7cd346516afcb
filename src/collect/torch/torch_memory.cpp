// torch_memory.cpp - tensor memory of the PyTorch shim: a c10 MemoryReportingInfoBase
// pushed as the PROFILER_STATE debug info of the thread that opens the window (as torch's
// profiler does), so c10's CPU allocator reports every allocation and free of that thread
// and of the threads torch propagates its state to (autograd engine, at::launch).
// Allocations become nnp_mem_alloc records owned by the op running at that moment.
#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#include <memory>
#include <mutex>
#include <thread>

#include "torch_internal.h"

namespace nnp_torch
{

namespace
{

class Reporter final : public c10::MemoryReportingInfoBase
{
  public:
    void reportMemoryUsage(void *ptr, int64_t alloc_size, int64_t, int64_t,
                           c10::Device device) override
    {
        uint64_t addr = uint64_t(reinterpret_cast<uintptr_t>(ptr));
        if (alloc_size > 0) {
            nnp_tensor_t t{};
            t.address = addr;
            t.size_bytes = uint64_t(alloc_size);
            t.owner_op = current_op_name();
            t.device_id = device.index() > 0 ? uint32_t(device.index()) : 0;
            nnp_mem_alloc(&t);
        } else if (alloc_size < 0) {
            nnp_mem_free(addr, uint64_t(-alloc_size));
        }
    }
    bool memoryProfilingEnabled() const override
    {
        return g_cfg.memory.load(std::memory_order_relaxed) && nnp_is_collecting();
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
