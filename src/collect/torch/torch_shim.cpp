// torch_shim.cpp - the "torch" collector of libnnprof: registration, configuration, the
// window hooks that install and remove the RecordFunction callbacks (torch_ops.cpp) and
// the memory reporter (torch_memory.cpp), automatic steps, and the C interface of
// nnprof_torch.h. Outside windows nothing is installed, so torch runs at full speed.
// Hooks are called by libnnprof from C: no exception may leave them.
#include <cstdlib>
#include <exception>
#include <mutex>

#include "torch_internal.h"

#define NNP_TORCH_API extern "C" __attribute__((visibility("default")))

namespace nnp_torch
{

Config g_cfg;
Counters g_counters;

namespace
{

// Set by the shim's atexit handler: libnnprof's own exit handler (which closes the window
// and ends the session) runs after torch's static objects are destroyed when libnnprof was
// loaded first (LD_PRELOAD), so from then on the hooks must not touch torch.
std::atomic<bool> g_exiting{false};

std::mutex g_steps_lock;
uint64_t g_step = 0;          // steps recorded so far (auto_steps)
uint64_t g_step_start_ns = 0; // end of the previous optimizer step, 0 = none yet

int on_window_start(void *)
{
    if (g_exiting.load())
        return NNP_OK;
    try {
        steps_reset();
        ops_install();
        memory_install();
        g_counters.windows.fetch_add(1, std::memory_order_relaxed);
    } catch (const std::exception &e) {
        g_counters.hook_errors.fetch_add(1, std::memory_order_relaxed);
        return NNP_EINVAL; // libnnprof logs that the collector could not start
    }
    return NNP_OK;
}

void on_window_stop(void *)
{
    if (g_exiting.load())
        return;
    try {
        ops_remove();
        memory_remove();
    } catch (const std::exception &) {
        g_counters.hook_errors.fetch_add(1, std::memory_order_relaxed);
    }
}

void on_session_end(void *user)
{
    on_window_stop(user);
}

nnp_collector_t g_collector = {"torch", nullptr, on_window_start, on_window_stop, on_session_end};
std::once_flag g_init_once;
int g_init_rc = NNP_OK;

// At exit, torch's statics (the callback registry among them) and the main thread's
// thread-local state may already be destroyed, in an order that depends on when each
// was first used: the shim calls nothing of torch any more. Its callbacks stay
// installed and record until libnnprof closes the session (they check nnp_is_collecting).
void on_exit()
{
    g_exiting.store(true);
    nnp__correlation_watch(nullptr);
}

// Correlation hooks appeared or went (the CUDA back end loads at the program's first CUDA
// call, often after the window opened): the ops' callbacks are installed again, for the
// path that gives each op an id (or no longer). Ops already running end as they started.
void on_correlation_changed()
{
    if (g_exiting.load())
        return;
    try {
        ops_reinstall();
    } catch (const std::exception &) {
        g_counters.hook_errors.fetch_add(1, std::memory_order_relaxed);
    }
}

} // namespace

void steps_reset()
{
    std::lock_guard<std::mutex> guard(g_steps_lock);
    g_step_start_ns = 0;
}

// A step is the interval between the ends of two optimizer steps: the first iteration of
// a window (before its first optimizer step ended) is not a step, as a script gives no
// sign of where it began. Each step is recorded whole when it ends (no open steps).
void steps_on_optimizer_end()
{
    uint64_t now = nnp_clock_ns();
    std::lock_guard<std::mutex> guard(g_steps_lock);
    if (g_step_start_ns) {
        g_step++;
        nnp_step_begin_at(g_step, 0, g_step_start_ns);
        nnp_step_end_at(g_step, 0, now);
    }
    g_step_start_ns = now;
}

} // namespace nnp_torch

using namespace nnp_torch;

NNP_TORCH_API void nnp_torch_config_init(nnp_torch_config_t *c)
{
    if (c)
        *c = nnp_torch_config_t{};
}

NNP_TORCH_API int nnp_torch_init(void)
{
    std::call_once(g_init_once, [] {
        std::atexit(on_exit);
        nnp__correlation_watch(on_correlation_changed);
        g_init_rc = nnp_collector_register(&g_collector);
    });
    return g_init_rc;
}

NNP_TORCH_API int nnp_torch_configure(const nnp_torch_config_t *c)
{
    if (!c)
        return NNP_EINVAL;
    bool inputs_before = g_cfg.shapes.load() || g_cfg.flops.load();
    bool memory_before = g_cfg.memory.load();
    g_cfg.shapes.store(c->record_shapes);
    g_cfg.memory.store(c->profile_memory);
    g_cfg.flops.store(c->with_flops);
    g_cfg.modules.store(c->with_modules);
    g_cfg.auto_steps.store(c->auto_steps);
    g_cfg.comm_group.store(c->comm_group);
    // Whether inputs are boxed is fixed when a callback is added: re-add it when that
    // changes inside a window. The memory reporter follows the flag at once.
    try {
        if (inputs_before != (c->record_shapes || c->with_flops))
            ops_reinstall();
        if (ops_installed() && memory_before != c->profile_memory) {
            if (c->profile_memory)
                memory_install();
            else
                memory_remove();
        }
    } catch (const std::exception &) {
        g_counters.hook_errors.fetch_add(1, std::memory_order_relaxed);
        return NNP_EINVAL;
    }
    return NNP_OK;
}

NNP_TORCH_API void nnp_torch_get_config(nnp_torch_config_t *out)
{
    if (!out)
        return;
    out->record_shapes = g_cfg.shapes.load();
    out->profile_memory = g_cfg.memory.load();
    out->with_flops = g_cfg.flops.load();
    out->with_modules = g_cfg.modules.load();
    out->auto_steps = g_cfg.auto_steps.load();
    out->comm_group = g_cfg.comm_group.load();
}

NNP_TORCH_API uint32_t nnp_torch_scope_handle(const char *path)
{
    return scope_handle(path);
}

NNP_TORCH_API void nnp_torch_scope_push(uint32_t scope)
{
    ThreadState *ts = thread_state();
    if (!ts)
        return;
    // Past the limit the depth is still counted, so pops stay balanced; ops there take
    // the deepest recorded scope.
    if (ts->scope_depth < kMaxScopes)
        ts->scopes[ts->scope_depth] = scope;
    ts->scope_depth++;
}

NNP_TORCH_API void nnp_torch_scope_pop(void)
{
    ThreadState *ts = thread_state();
    if (ts && ts->scope_depth > 0)
        ts->scope_depth--;
}

NNP_TORCH_API void nnp_torch_get_stats(nnp_torch_stats_t *out)
{
    if (!out)
        return;
    out->windows = g_counters.windows.load();
    out->depth_overflow = g_counters.depth_overflow.load();
    out->unmatched_ends = g_counters.unmatched_ends.load();
    out->flops_errors = g_counters.flops_errors.load();
    out->hook_errors = g_counters.hook_errors.load();
    out->memory_threads = g_counters.memory_threads.load();
    out->stack_nodes_capped = g_counters.stack_nodes_capped.load();
}

NNP_TORCH_API bool nnp_torch_is_active(void)
{
    return ops_installed();
}
