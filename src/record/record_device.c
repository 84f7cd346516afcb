/* record_device.c - the public recording calls of device and communication activity:
 * kernels, copies and memsets, runtime and driver calls (the CUDA back end's, or a
 * caller's), collectives and their groups. The same rules as record.c's (a gate load, the
 * thread's buffer, a reserve, stores, one release store); nnp_comm_group alone formats and
 * interns, once per group. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "record/record.h"
#include "record/record_internal.h"
#include "record/strtab.h"
#include "record/tbuf.h"

/* ---- device kernels ---- */

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
    x->launch = k->launch_id;
    return s;
}

static void kernel_put(const nnp_kernel_t *k, uint16_t flags, uint64_t start, uint64_t end)
{
    nnp_tbuf_t *tb = nnp__tbuf_get();
    uint64_t s;

    if (NNP_UNLIKELY(!tb))
        return;
    s = kernel_begin(tb, k, 2, flags, start, end);
    if (NNP_UNLIKELY(s == UINT64_MAX))
        return;
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
    x->launch = c->launch_id;
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
    x->launch = c->launch_id;
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
