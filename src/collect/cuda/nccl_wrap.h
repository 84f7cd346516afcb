/* nccl_wrap.h - what the NCCL wrappers (nccl_wrap.c) learned of each collective call, for
 * the translator: bytes, kind, peer and communicator, found by the external correlation id
 * the wrapper pushed to CUPTI around the call. Lock-free on both sides. */
#ifndef NNP_CU_NCCL_WRAP_H
#define NNP_CU_NCCL_WRAP_H

#include <stdbool.h>
#include <stdint.h>

#include "collect/cuda/cu_activity.h"

/* Correlation push/pop the wrappers use (set by the CUPTI glue once it is initialised;
 * NULL = not profiling: the wrappers only forward). */
typedef struct nnp_cu_ext_fns {
    void (*push)(uint32_t kind, uint64_t id);
    void (*pop)(uint32_t kind);
} nnp_cu_ext_fns_t;
void nnp__cu_nccl_set_ext(const nnp_cu_ext_fns_t *fns);

/* Stores a call under a fresh id and returns it (never 0). Lock-free; hot-path safe. */
uint64_t nnp__cu_nccl_note(const nnp_cu_nccl_call_t *call);
/* Fills *out with the call stored under id; false when it was never stored or has been
 * overwritten by a much later call (the store is a ring). */
bool nnp__cu_nccl_lookup(uint64_t id, nnp_cu_nccl_call_t *out);
/* Element size in bytes of an NCCL data type (ncclDataType_t), 0 when unknown. */
unsigned nnp__cu_nccl_type_size(int datatype);

#endif /* NNP_CU_NCCL_WRAP_H */
