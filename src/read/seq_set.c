/* seq_set.c - see seq_set.h. */
#include <string.h>

#include "read/seq_set.h"
#include "util/util.h"

/* First size (a power of two), grown at half load, and a hard cap (2^27 slots, 1 GiB: a
 * chunk is >= 48 bytes, so far beyond any run; past it duplicates are no longer detected,
 * and nothing is dropped). */
#define SEQ_SET_INITIAL 256u
#define SEQ_SET_MAX     (1u << 27)

static size_t seq_slot(uint64_t key, size_t cap)
{
    /* splitmix64 finaliser: sequence numbers are dense, the slots should not be. */
    key = (key ^ (key >> 30)) * 0xbf58476d1ce4e5b9ull;
    key = (key ^ (key >> 27)) * 0x94d049bb133111ebull;
    return (size_t)(key ^ (key >> 31)) & (cap - 1);
}

bool nnp__seq_has(const nnp_seq_set_t *set, uint64_t seq)
{
    if (seq == UINT64_MAX)
        return set->has_max;
    if (!set->cap)
        return false;
    for (size_t i = seq_slot(seq + 1, set->cap); set->slots[i]; i = (i + 1) & (set->cap - 1))
        if (set->slots[i] == seq + 1)
            return true;
    return false;
}

void nnp__seq_add(nnp_seq_set_t *set, uint64_t seq)
{
    size_t i;
    if (seq == UINT64_MAX) {
        set->has_max = true;
        return;
    }
    if (2 * (set->n + 1) > set->cap) {
        size_t ncap = set->cap ? set->cap * 2 : SEQ_SET_INITIAL;
        uint64_t *nv;
        if (ncap > SEQ_SET_MAX || !(nv = nnp__calloc(ncap, sizeof(*nv))))
            return;
        for (size_t k = 0; k < set->cap; k++) {
            if (!set->slots[k])
                continue;
            for (i = seq_slot(set->slots[k], ncap); nv[i]; i = (i + 1) & (ncap - 1))
                ;
            nv[i] = set->slots[k];
        }
        nnp__free(set->slots);
        set->slots = nv;
        set->cap = ncap;
    }
    for (i = seq_slot(seq + 1, set->cap); set->slots[i]; i = (i + 1) & (set->cap - 1))
        ;
    set->slots[i] = seq + 1;
    set->n++;
}

void nnp__seq_clear(nnp_seq_set_t *set)
{
    nnp__free(set->slots);
    memset(set, 0, sizeof(*set));
}
