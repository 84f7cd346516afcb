/* seq_set.h - a set of chunk sequence numbers (seq_set.c), so the raw reader delivers a
 * chunk found twice (a file copied over itself, a data file restored next to its original;
 * docs/FORMAT.md: sequence numbers are unique per raw directory) once. Open addressing;
 * zero-initialise, nnp__seq_clear frees. Internal to src/read/. */
#ifndef NNP_SEQ_SET_H
#define NNP_SEQ_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct nnp_seq_set {
    uint64_t *slots; /* slot value seq + 1, 0 = empty */
    size_t cap, n;
    bool has_max; /* seq UINT64_MAX, which seq + 1 cannot hold */
} nnp_seq_set_t;

/* Whether seq was added. */
bool nnp__seq_has(const nnp_seq_set_t *set, uint64_t seq);
/* Adds seq (not present). Out of memory, or past the set's cap (2^27 slots), it is not
 * remembered: a later copy would then be delivered again, which loses nothing. */
void nnp__seq_add(nnp_seq_set_t *set, uint64_t seq);
/* Frees the set and empties it. */
void nnp__seq_clear(nnp_seq_set_t *set);

#endif /* NNP_SEQ_SET_H */
