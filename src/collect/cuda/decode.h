/* decode.h - CUPTI activity records -> the plain records of cu_activity.h. The only part
 * of the back end that knows CUPTI's struct layouts; it needs cupti.h (the CUDA SDK).
 * Used by the CUPTI glue (cupti_backend.c) and by the SDK-only unit tests. */
#ifndef NNP_CU_DECODE_H
#define NNP_CU_DECODE_H

#include <cupti.h>

#include "collect/cuda/cu_activity.h"

/* Fills *out from rec. Kinds the back end does not translate come out as NNP_CU_UNKNOWN
 * with their CUPTI kind number in out->cupti_kind. Strings in *out point into rec (or at
 * CUPTI's static API names) and live as long as rec. Never fails; thread-safe after the
 * first call (API names are cached; the cache is filled under a lock at most once per
 * name). */
void nnp__cu_decode(const CUpti_Activity *rec, nnp_cu_activity_t *out);

/* The API name of a runtime or driver callback id without CUPTI's version suffix
 * ("cudaLaunchKernel_v7000" -> "cudaLaunchKernel"), NULL when CUPTI does not know it. The
 * string is cached for the life of the process. */
const char *nnp__cu_api_name(bool is_driver, uint32_t cbid);

#endif /* NNP_CU_DECODE_H */
