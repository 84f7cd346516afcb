/* cu_activity.h - the CUPTI activity records the CUDA back end understands, as plain C
 * structs of our own, so nothing here needs the CUDA SDK. decode.c fills them from CUPTI's
 * records (it is the only file that knows CUPTI's layouts); translate.c turns them into
 * nnprof recording calls; unit tests build them by hand on machines without the SDK.
 * Enumerated fields keep CUPTI's numbering (decode.c checks that at compile time). */
#ifndef NNP_CU_ACTIVITY_H
#define NNP_CU_ACTIVITY_H

#include <stdbool.h>
#include <stdint.h>

typedef enum nnp_cu_kind {
    NNP_CU_UNKNOWN = 0, /* a CUPTI kind the back end does not translate */
    NNP_CU_KERNEL,      /* CONCURRENT_KERNEL (or KERNEL) */
    NNP_CU_MEMCPY,      /* MEMCPY, and MEMCPY2 (peer copies) with is_peer */
    NNP_CU_MEMSET,      /* MEMSET */
    NNP_CU_API,         /* RUNTIME or DRIVER */
    NNP_CU_SYNC,        /* SYNCHRONIZATION */
    NNP_CU_MEMORY,      /* MEMORY2: device allocations and releases */
    NNP_CU_EXTCORR,     /* EXTERNAL_CORRELATION */
    NNP_CU_MARKER,      /* MARKER: NVTX ranges and marks */
    NNP_CU_KIND_COUNT
} nnp_cu_kind_t;

/* External correlation kinds the back end pushes (CUPTI_EXTERNAL_CORRELATION_KIND_*). */
#define NNP_CU_EXT_OPS  3u /* CUSTOM0: nnp_correlation_push(), our host ops */
#define NNP_CU_EXT_NCCL 4u /* CUSTOM1: a call the NCCL wrappers saw (nccl_wrap.c) */

/* Synchronization types (CUpti_ActivitySynchronizationType). */
enum {
    NNP_CU_SYNC_UNKNOWN = 0,
    NNP_CU_SYNC_EVENT = 1,       /* cudaEventSynchronize */
    NNP_CU_SYNC_STREAM_WAIT = 2, /* cudaStreamWaitEvent */
    NNP_CU_SYNC_STREAM = 3,      /* cudaStreamSynchronize */
    NNP_CU_SYNC_CONTEXT = 4      /* cudaDeviceSynchronize / cuCtxSynchronize */
};

/* Memory operations (CUpti_ActivityMemoryOperationType). */
enum { NNP_CU_MEM_ALLOC = 1, NNP_CU_MEM_RELEASE = 2 };

/* Marker flags (CUpti_ActivityFlag, MARKER part). */
#define NNP_CU_MARKER_INSTANT 0x1u
#define NNP_CU_MARKER_START   0x2u
#define NNP_CU_MARKER_END     0x4u

/* Times are CUPTI timestamps in ns; 0 means CUPTI did not know. Strings are CUPTI's and
 * valid only while the record is being translated. */
typedef struct nnp_cu_kernel {
    const char *name; /* as CUPTI gives it (usually mangled) */
    uint64_t start, end;
    uint32_t device_id, context_id, stream_id, correlation_id;
    int32_t grid[3], block[3];
    uint32_t registers; /* per thread */
    int32_t static_shared, dynamic_shared;
} nnp_cu_kernel_t;

typedef struct nnp_cu_memcpy {
    uint64_t bytes, start, end;
    uint32_t device_id, context_id, stream_id, correlation_id;
    uint32_t src_device, dst_device; /* peer copies; else both device_id */
    uint8_t copy_kind;               /* CUpti_ActivityMemcpyKind == nnp_copy_kind_t */
    uint8_t src_kind, dst_kind;      /* CUpti_ActivityMemoryKind == nnp_memory_kind_t */
    bool is_peer;                    /* from MEMCPY2 */
} nnp_cu_memcpy_t;

typedef struct nnp_cu_memset {
    uint64_t bytes, start, end;
    uint32_t device_id, context_id, stream_id, correlation_id;
    uint32_t value;
    uint8_t memory_kind;
} nnp_cu_memset_t;

typedef struct nnp_cu_api {
    const char *name; /* "cudaLaunchKernel" (decode.c asks CUPTI), NULL when unknown */
    bool is_driver;
    uint32_t cbid;
    uint64_t start, end;
    uint32_t process_id, thread_id, correlation_id, return_value;
} nnp_cu_api_t;

typedef struct nnp_cu_sync {
    uint32_t type; /* NNP_CU_SYNC_* */
    uint64_t start, end;
    uint32_t correlation_id, context_id, stream_id, event_id;
} nnp_cu_sync_t;

typedef struct nnp_cu_memory {
    uint32_t operation;   /* NNP_CU_MEM_ALLOC or NNP_CU_MEM_RELEASE */
    uint32_t memory_kind; /* CUpti_ActivityMemoryKind == nnp_memory_kind_t */
    uint32_t correlation_id;
    uint64_t address, bytes, timestamp;
    uint32_t process_id, device_id, context_id, stream_id;
} nnp_cu_memory_t;

typedef struct nnp_cu_extcorr {
    uint32_t external_kind; /* NNP_CU_EXT_* for ours; others are ignored */
    uint64_t external_id;
    uint32_t correlation_id;
} nnp_cu_extcorr_t;

typedef struct nnp_cu_marker {
    uint32_t flags; /* NNP_CU_MARKER_* */
    uint64_t timestamp;
    uint32_t id;        /* pairs a START with its END */
    uint32_t thread_id; /* the thread that opened it (0 when CUPTI gave none) */
    const char *name;   /* set on START and INSTANT */
    const char *domain; /* NULL: the default domain */
} nnp_cu_marker_t;

typedef struct nnp_cu_activity {
    nnp_cu_kind_t kind;
    uint32_t cupti_kind; /* CUPTI's own kind number, for reports of unknown kinds */
    union {
        nnp_cu_kernel_t kernel;
        nnp_cu_memcpy_t memcpy;
        nnp_cu_memset_t memset;
        nnp_cu_api_t api;
        nnp_cu_sync_t sync;
        nnp_cu_memory_t memory;
        nnp_cu_extcorr_t extcorr;
        nnp_cu_marker_t marker;
    } u;
} nnp_cu_activity_t;

/* What the NCCL wrappers learned of one call (nccl_wrap.c), found by its external id. */
typedef struct nnp_cu_nccl_call {
    uint32_t comm_kind; /* nnp_comm_kind_t */
    uint64_t bytes;     /* count x element size as passed to the call (sum over a group) */
    int32_t peer;       /* send/recv peer, broadcast/reduce root, -1 none */
    uint64_t comm;      /* the communicator's address, names the group */
} nnp_cu_nccl_call_t;

#endif /* NNP_CU_ACTIVITY_H */
