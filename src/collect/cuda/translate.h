/* translate.h - turns CUPTI activity records (as cu_activity.h's plain structs) into
 * nnprof recording calls: kernels with their launch configuration, copies and memory sets,
 * NCCL kernels as communication, runtime/driver calls and synchronizations on the calling
 * thread, device allocations, NVTX ranges as host ranges; it links kernels to our host ops
 * through CUPTI's external correlation records and converts CUPTI's timestamps to our clock.
 *
 * It knows nothing of CUPTI itself, so unit tests feed it hand-built records on any
 * machine. Not thread-safe: the CUPTI glue (cupti_backend.c) serialises every call on one
 * translator. Records are recorded only inside a collection window (the recording calls
 * check that), which is why the glue drains CUPTI's buffers before a window closes. */
#ifndef NNP_CU_TRANSLATE_H
#define NNP_CU_TRANSLATE_H

#include <stdbool.h>
#include <stdint.h>

#include "collect/cuda/cu_activity.h"

/* A kernel correlated with no host op keeps CUPTI's correlation id with this bit set, so
 * it still links to its runtime call but can never collide with an op's own id. */
#define NNP_CU_CORR_TAG (1ull << 63)

typedef struct nnp_cu_xlate_config {
    /* A demangled copy of a kernel name, released with free(); NULL keeps the name. May be
     * NULL (names are kept as CUPTI gives them). */
    char *(*demangle)(const char *name);
    /* Fills *out with the NCCL call of an external id; false when unknown. May be NULL. */
    bool (*nccl_call)(uint64_t external_id, nnp_cu_nccl_call_t *out);
} nnp_cu_xlate_config_t;

/* What the translator met, cumulative over its life. Nothing is dropped silently: each
 * record not translated is counted here, and nnp__cu_xlate_finish() logs and records them
 * (as counters named cupti_*_records in the raw data). */
typedef struct nnp_cu_counts {
    uint64_t translated[NNP_CU_KIND_COUNT]; /* per kind; [NNP_CU_UNKNOWN] = kinds we skip */
    uint64_t bad;                           /* no timestamp, or end before start: skipped */
    uint64_t cupti_dropped;     /* records CUPTI itself dropped (no buffer to write to) */
    uint64_t nccl_kernels;      /* kernels recorded as communication */
    uint64_t memory_skipped;    /* allocations of host memory (pinned, pageable): not device */
    uint64_t marker_unmatched;  /* NVTX ends without a start, starts never ended, overflow */
    uint64_t sync_without_api;  /* synchronizations whose calling thread stayed unknown */
    uint32_t last_unknown_kind; /* CUPTI kind number of the last unknown record */
} nnp_cu_counts_t;

typedef struct nnp_cu_xlate nnp_cu_xlate_t;

/* Creates a translator (cfg copied; NULL = no demangling, no NCCL sizes). Returns NNP_OK
 * and *out (released with nnp__cu_xlate_destroy), or NNP_ENOMEM. */
int nnp__cu_xlate_create(const nnp_cu_xlate_config_t *cfg, nnp_cu_xlate_t **out);
/* Releases x (NULL is a no-op). NVTX ranges still open are counted, not recorded. */
void nnp__cu_xlate_destroy(nnp_cu_xlate_t *x);
/* CUPTI timestamp + offset_ns = CLOCK_MONOTONIC ns (0 when CUPTI uses our clock). */
void nnp__cu_xlate_set_clock(nnp_cu_xlate_t *x, int64_t offset_ns);
/* Translates one record and records it. Any field may be wrong: bad times are counted and
 * skipped, unknown kinds counted, names may be NULL. */
void nnp__cu_xlate_record(nnp_cu_xlate_t *x, const nnp_cu_activity_t *a);
/* Adds records CUPTI reported dropped (cuptiActivityGetNumDroppedRecords). */
void nnp__cu_xlate_dropped(nnp_cu_xlate_t *x, uint64_t n);
/* End of a window's drain: records synchronizations still waiting for their API record
 * (on the recording thread), logs what was dropped or skipped since the last call, and
 * records the cumulative counts as counters. */
void nnp__cu_xlate_finish(nnp_cu_xlate_t *x);
/* The counts so far (owned by x). */
const nnp_cu_counts_t *nnp__cu_xlate_counts(const nnp_cu_xlate_t *x);

/* Communication kind of an NCCL kernel from its name ("ncclDevKernel_AllReduce_Sum_f32_
 * RING_LL(...)", mangled or not), or -1 when the name is not an NCCL kernel. */
int nnp__cu_nccl_kind(const char *kernel_name);

#endif /* NNP_CU_TRANSLATE_H */
