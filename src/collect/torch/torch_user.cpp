// torch_user.cpp - the user scopes of the PyTorch shim's RecordFunction callback
// (torch_ops.cpp hands them here): record_function ranges, optimizer steps and
// process-group work. These may end on another thread (c10d work completes on the
// backend's thread), so their state rides in an ObserverContext. Collectives become
// communication records, the rest host ranges (module "torch"), as Kineto shows them as
// user annotations.
#include <ATen/record_function.h>

#include <cstring>
#include <memory>
#include <new>

#include "torch_internal.h"

namespace nnp_torch
{

namespace
{

struct UserCtx : public at::ObserverContext {
    uint64_t t0 = 0;
    bool is_comm = false;
    bool is_opt_step = false;
    nnp_comm_t comm{};
    nnp_host_tag_t tag{};
};

nnp_str_t g_torch_module; // "torch": module of the host ranges of user scopes
nnp_str_t g_run_stage;    // "Run"

} // namespace

void user_scopes_init()
{
    if (!g_torch_module) {
        g_torch_module = nnp_intern("torch");
        g_run_stage = nnp_intern("Run");
    }
}

namespace
{

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

} // namespace

// A user scope's start and end: out of line, on_op_start's common path (ops) then saves
// fewer registers.
__attribute__((noinline)) std::unique_ptr<at::ObserverContext>
on_user_start(const at::RecordFunction &fn)
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
        // c10d hands its work's input tensors to every RecordFunction it starts
        // (ProcessGroup::Work's constructor calls before(title, inputs)), whether or not a
        // callback asked for inputs: those of a user scope are there without boxing every
        // op's inputs for it.
        c->comm.size_bytes = input_bytes(fn);
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

__attribute__((noinline)) void on_user_end(at::ObserverContext *ctx)
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

} // namespace nnp_torch
