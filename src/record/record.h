/* record.h - internal recording entry points for collectors inside the library (samplers,
 * future MPI/CUDA back ends) that build whole records themselves. */
#ifndef NNP_RECORD_H
#define NNP_RECORD_H

#include "format/raw_format.h"

/* Copies n (1..NNP_REC_MAX_SLOTS) prepared slots into the calling thread's buffer when a
 * window is open; slot 0's n_slots must equal n. Same cost rules as the public calls. */
void nnp__rec_put_slots(const nnp_rec_t *slots, unsigned n);

#endif /* NNP_RECORD_H */
