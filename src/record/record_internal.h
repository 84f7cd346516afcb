/* record_internal.h - what the files of the public recording calls share (record.c,
 * record_device.c): the gate tests, the probe alignment and the inline record writers over
 * the thread's buffer (tbuf.h). Private to src/record/. */
#ifndef NNP_RECORD_INTERNAL_H
#define NNP_RECORD_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>

#include "record/record.h"
#include "record/tbuf.h"

/* A window is open (any data). */
#define COLLECTING() NNP_LIKELY(atomic_load_explicit(&nnp__collecting, memory_order_relaxed))
/* Each recording entry point starts a cache line: its disabled path (load, test, branch:
 * 17 bytes) then never straddles a 32- or 64-byte boundary, where x86 front ends fetch it
 * more slowly (Intel's JCC erratum mitigation; measured as +0.5 ns per disabled call when
 * the link happened to place the entries at 48 mod 64). */
#define NNP_PROBE __attribute__((aligned(NNP_CACHE_LINE)))
/* A window is open and the options let this kind of data through: one relaxed load. */
#define GATED(bit) NNP_LIKELY(atomic_load_explicit(&nnp__collecting, memory_order_relaxed) & (bit))

static inline void put1(uint8_t kind, uint16_t flags, uint32_t name, uint64_t ts, uint64_t a,
                        uint64_t b)
{
    nnp_tbuf_t *tb = nnp__tbuf_get();
    uint64_t s;
    nnp_rec_t *r;

    if (NNP_UNLIKELY(!tb))
        return;
    s = nnp__tbuf_reserve(tb, 1);
    if (NNP_UNLIKELY(s == UINT64_MAX))
        return;
    r = nnp__tbuf_slot(tb, s);
    r->kind = kind;
    r->n_slots = 1;
    r->flags = flags;
    r->name = name;
    r->ts = ts;
    r->a = a;
    r->b = b;
    nnp__tbuf_commit(tb, s, 1);
}

/* Reserves an n-slot record and fills slot 0; returns the sequence or UINT64_MAX. The
 * caller fills the extension slots through nnp__tbuf_slot(tb, seq + i) and commits. */
static inline uint64_t putn_begin(nnp_tbuf_t *tb, unsigned n, uint8_t kind, uint16_t flags,
                                  uint32_t name, uint64_t ts, uint64_t a, uint64_t b)
{
    uint64_t s = nnp__tbuf_reserve(tb, n);
    nnp_rec_t *r;
    if (NNP_UNLIKELY(s == UINT64_MAX))
        return s;
    r = nnp__tbuf_slot(tb, s);
    r->kind = kind;
    r->n_slots = (uint8_t)n;
    r->flags = flags;
    r->name = name;
    r->ts = ts;
    r->a = a;
    r->b = b;
    return s;
}

static inline uint64_t pack32(uint32_t lo, uint32_t hi)
{
    return (uint64_t)lo | ((uint64_t)hi << 32);
}

#endif /* NNP_RECORD_INTERNAL_H */
