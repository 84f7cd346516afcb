/* decode.c - CUPTI activity records -> cu_activity.h records (decode.h).
 *
 * CUPTI versions its record structs (CUpti_ActivityKernel4 ... Kernel10) but keeps the
 * leading fields of each kind in place across versions, and the library writes the newest
 * version it knows. We read only those leading fields, through the versions CUDA 11.8
 * (Debian's libcupti-dev, CUPTI_API_VERSION 18) declares as current; newer SDKs still
 * declare them (cupti_activity_deprecated.h), so this compiles against either. The offsets
 * we rely on are checked below against the oldest version that has the fields. */
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "collect/cuda/decode.h"
#include "nnprof/nnprof.h"
#include "util/util.h"

typedef CUpti_ActivityKernel8 kernel_rec_t;
typedef CUpti_ActivityMemcpy5 memcpy_rec_t;
typedef CUpti_ActivityMemcpyPtoP4 peer_rec_t;
typedef CUpti_ActivityMemset4 memset_rec_t;
typedef CUpti_ActivityMemory3 memory_rec_t;

/* The fields read are where CUDA 9's CUpti_ActivityKernel4 had them: a library writing
 * any later version is read correctly. */
#define SAME_OFFSET(a, b, f) _Static_assert(offsetof(a, f) == offsetof(b, f), #f " moved")
SAME_OFFSET(kernel_rec_t, CUpti_ActivityKernel4, start);
SAME_OFFSET(kernel_rec_t, CUpti_ActivityKernel4, streamId);
SAME_OFFSET(kernel_rec_t, CUpti_ActivityKernel4, gridX);
SAME_OFFSET(kernel_rec_t, CUpti_ActivityKernel4, blockZ);
SAME_OFFSET(kernel_rec_t, CUpti_ActivityKernel4, dynamicSharedMemory);
SAME_OFFSET(kernel_rec_t, CUpti_ActivityKernel4, correlationId);
SAME_OFFSET(kernel_rec_t, CUpti_ActivityKernel4, name);
SAME_OFFSET(memcpy_rec_t, CUpti_ActivityMemcpy, correlationId);
SAME_OFFSET(memset_rec_t, CUpti_ActivityMemset, correlationId);
SAME_OFFSET(memory_rec_t, CUpti_ActivityMemory2, streamId);

/* Our enums mirror CUPTI's numbering (cu_activity.h, nnprof.h); compared as ints. */
#define SAME_VALUE(a, b) _Static_assert((int)(a) == (int)(b), #a " differs from " #b)
SAME_VALUE(CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, NNP_COPY_PTOP);
SAME_VALUE(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, NNP_COPY_HTOD);
SAME_VALUE(CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, NNP_MEMORY_MANAGED);
SAME_VALUE(CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, NNP_MEMORY_DEVICE);
SAME_VALUE(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, NNP_CU_SYNC_CONTEXT);
SAME_VALUE(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, NNP_CU_MEM_RELEASE);
SAME_VALUE(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, NNP_CU_EXT_OPS);
SAME_VALUE(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, NNP_CU_EXT_NCCL);

/* Callback ids per domain are below this in every CUDA release so far (11.8: ~700 runtime,
 * ~800 driver); larger ids are named by number. */
#define MAX_CBID 4096

static pthread_mutex_t g_names_lock = PTHREAD_MUTEX_INITIALIZER;
static char *g_names[2][MAX_CBID]; /* [is_driver][cbid], our stripped copies */

const char *nnp__cu_api_name(bool is_driver, uint32_t cbid)
{
    const char *name = NULL;
    char *copy;
    size_t n;

    if (cbid >= MAX_CBID)
        return NULL;
    pthread_mutex_lock(&g_names_lock);
    copy = g_names[is_driver][cbid];
    if (!copy &&
        cuptiGetCallbackName(is_driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API,
                             cbid, &name) == CUPTI_SUCCESS &&
        name) {
        /* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": the suffix is CUPTI's version of
         * the entry point, not what the user called. "cuMemAlloc_v2" keeps its _v2 (the
         * driver's real symbol) since only suffixes of 4+ digits are versions. */
        n = strlen(name);
        {
            const char *v = strrchr(name, '_');
            if (v && v[1] == 'v' && strlen(v + 2) >= 4 &&
                strspn(v + 2, "0123456789") == strlen(v + 2))
                n = (size_t)(v - name);
        }
        copy = nnp__malloc(n + 1);
        if (copy) {
            memcpy(copy, name, n);
            copy[n] = '\0';
            g_names[is_driver][cbid] = copy;
        }
    }
    pthread_mutex_unlock(&g_names_lock);
    return copy;
}

static void kernel(const kernel_rec_t *k, nnp_cu_kernel_t *o)
{
    o->name = k->name;
    o->start = k->start;
    o->end = k->end;
    o->device_id = k->deviceId;
    o->context_id = k->contextId;
    o->stream_id = k->streamId;
    o->correlation_id = k->correlationId;
    o->grid[0] = k->gridX;
    o->grid[1] = k->gridY;
    o->grid[2] = k->gridZ;
    o->block[0] = k->blockX;
    o->block[1] = k->blockY;
    o->block[2] = k->blockZ;
    o->registers = k->registersPerThread;
    o->static_shared = k->staticSharedMemory;
    o->dynamic_shared = k->dynamicSharedMemory;
}

static void memcpy_one(const memcpy_rec_t *m, nnp_cu_memcpy_t *o)
{
    o->bytes = m->bytes;
    o->start = m->start;
    o->end = m->end;
    o->device_id = m->deviceId;
    o->context_id = m->contextId;
    o->stream_id = m->streamId;
    o->correlation_id = m->correlationId;
    o->src_device = o->dst_device = m->deviceId;
    o->copy_kind = m->copyKind;
    o->src_kind = m->srcKind;
    o->dst_kind = m->dstKind;
}

static void memcpy_peer(const peer_rec_t *m, nnp_cu_memcpy_t *o)
{
    o->bytes = m->bytes;
    o->start = m->start;
    o->end = m->end;
    o->device_id = m->deviceId;
    o->context_id = m->contextId;
    o->stream_id = m->streamId;
    o->correlation_id = m->correlationId;
    o->src_device = m->srcDeviceId;
    o->dst_device = m->dstDeviceId;
    o->copy_kind = m->copyKind;
    o->src_kind = m->srcKind;
    o->dst_kind = m->dstKind;
    o->is_peer = true;
}

static void memset_one(const memset_rec_t *m, nnp_cu_memset_t *o)
{
    o->bytes = m->bytes;
    o->start = m->start;
    o->end = m->end;
    o->device_id = m->deviceId;
    o->context_id = m->contextId;
    o->stream_id = m->streamId;
    o->correlation_id = m->correlationId;
    o->value = m->value;
    o->memory_kind = (uint8_t)m->memoryKind;
}

static void api(const CUpti_ActivityAPI *a, bool is_driver, nnp_cu_api_t *o)
{
    o->is_driver = is_driver;
    o->cbid = a->cbid;
    o->name = nnp__cu_api_name(is_driver, a->cbid);
    o->start = a->start;
    o->end = a->end;
    o->process_id = a->processId;
    o->thread_id = a->threadId;
    o->correlation_id = a->correlationId;
    o->return_value = a->returnValue;
}

static void sync_one(const CUpti_ActivitySynchronization *s, nnp_cu_sync_t *o)
{
    o->type = (uint32_t)s->type;
    o->start = s->start;
    o->end = s->end;
    o->correlation_id = s->correlationId;
    o->context_id = s->contextId;
    o->stream_id = s->streamId;
    o->event_id = s->cudaEventId;
}

static void memory(const memory_rec_t *m, nnp_cu_memory_t *o)
{
    o->operation = (uint32_t)m->memoryOperationType;
    o->memory_kind = (uint32_t)m->memoryKind;
    o->correlation_id = m->correlationId;
    o->address = m->address;
    o->bytes = m->bytes;
    o->timestamp = m->timestamp;
    o->process_id = m->processId;
    o->device_id = m->deviceId;
    o->context_id = m->contextId;
    o->stream_id = m->streamId;
}

static void marker(const CUpti_ActivityMarker2 *m, nnp_cu_marker_t *o)
{
    if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS)
        o->flags |= NNP_CU_MARKER_INSTANT;
    if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START)
        o->flags |= NNP_CU_MARKER_START;
    if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END)
        o->flags |= NNP_CU_MARKER_END;
    o->timestamp = m->timestamp;
    o->id = m->id;
    if (m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD)
        o->thread_id = m->objectId.pt.threadId;
    o->name = m->name;
    o->domain = m->domain;
}

void nnp__cu_decode(const CUpti_Activity *rec, nnp_cu_activity_t *out)
{
    memset(out, 0, sizeof(*out));
    out->cupti_kind = (uint32_t)rec->kind;
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        out->kind = NNP_CU_KERNEL;
        kernel((const kernel_rec_t *)rec, &out->u.kernel);
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        out->kind = NNP_CU_MEMCPY;
        memcpy_one((const memcpy_rec_t *)rec, &out->u.memcpy);
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
        out->kind = NNP_CU_MEMCPY;
        memcpy_peer((const peer_rec_t *)rec, &out->u.memcpy);
        break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
        out->kind = NNP_CU_MEMSET;
        memset_one((const memset_rec_t *)rec, &out->u.memset);
        break;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
        out->kind = NNP_CU_API;
        api((const CUpti_ActivityAPI *)rec, rec->kind == CUPTI_ACTIVITY_KIND_DRIVER, &out->u.api);
        break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        out->kind = NNP_CU_SYNC;
        sync_one((const CUpti_ActivitySynchronization *)rec, &out->u.sync);
        break;
    case CUPTI_ACTIVITY_KIND_MEMORY2:
        out->kind = NNP_CU_MEMORY;
        memory((const memory_rec_t *)rec, &out->u.memory);
        break;
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const CUpti_ActivityExternalCorrelation *e = (const CUpti_ActivityExternalCorrelation *)rec;
        out->kind = NNP_CU_EXTCORR;
        out->u.extcorr.external_kind = (uint32_t)e->externalKind;
        out->u.extcorr.external_id = e->externalId;
        out->u.extcorr.correlation_id = e->correlationId;
        break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER:
        out->kind = NNP_CU_MARKER;
        marker((const CUpti_ActivityMarker2 *)rec, &out->u.marker);
        break;
    default:
        out->kind = NNP_CU_UNKNOWN;
        break;
    }
}
