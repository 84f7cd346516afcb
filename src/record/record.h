/* record.h - internal recording entry points for collectors inside the library (samplers,
 * future MPI/CUDA back ends) that build whole records themselves. */
#ifndef NNP_RECORD_H
#define NNP_RECORD_H

#include <stdatomic.h>
#include <stdbool.h>

#include "format/raw_format.h"

/* Copies n (1..NNP_REC_MAX_SLOTS) prepared slots into the calling thread's buffer when a
 * window is open; slot 0's n_slots must equal n. Same cost rules as the public calls. */
void nnp__rec_put_slots(const nnp_rec_t *slots, unsigned n);

/* Called by every step begin/end call (begin: before it is recorded, end: after) while set;
 * the collection layer sets it to open and close windows at given steps (step_window.c),
 * so the recorder never calls up into the layers above it. NULL (default): one relaxed
 * load per step call. */
typedef void (*nnp_step_hook_fn)(uint64_t step_id, bool is_begin);
extern _Atomic(nnp_step_hook_fn) nnp__rec_step_hook;

#endif /* NNP_RECORD_H */
