/* kineto_names.c - how Kineto names device activity (kineto_names.h), after libkineto's
 * CuptiActivity.cpp: memcpyName ("Memcpy <kind> (<src> -> <dst>)" with memoryKindString),
 * the memset's name ("Memset (<memory kind>)"), and NCCL's kernel names. */
#include <stdio.h>
#include <string.h>

#include "analyse/kineto_names.h"
#include "util/util.h"

#define NCCL_KERNEL     "ncclKernel"
#define NCCL_DEV_KERNEL "ncclDevKernel"

/* libkineto's memoryKindString: CUPTI's memory kinds, in nnp_memory_kind_t's order. */
static const char *const memory_kinds[NNP_MEMORY_KIND_COUNT] = {
    "Unknown", "Pageable", "Pinned",        "Device",
    "Array",   "Managed",  "Device Static", "Managed Static"};

static const char *memory_kind(uint8_t k)
{
    return k < NNP_MEMORY_KIND_COUNT ? memory_kinds[k] : memory_kinds[0];
}

static const char *copy_kind(uint8_t k)
{
    return k == NNP_COPY_UNKNOWN ? "Unknown" : nnp_copy_kind_name((nnp_copy_kind_t)k);
}

const char *nnp__kineto_activity(const nnp_model_t *m, size_t i, char *buf, const char **name)
{
    const nnp_kernels_t *k = &m->kernels;
    const nnp_kernel_detail_t *d =
        k->detail && (k->detail[i].has & NNP_KDETAIL_COPY) ? &k->detail[i] : NULL;
    const char *type = nnp__model_str(m, k->type[i]);
    *name = nnp__model_str(m, k->name[i]);
    if (d && d->copy_kind == NNP_COPY_MEMSET) {
        snprintf(buf, NNP_KINETO_NAME_MAX, "Memset (%s)", memory_kind(d->dst_kind));
        *name = buf;
        return "gpu_memset";
    }
    if (d) {
        snprintf(buf, NNP_KINETO_NAME_MAX, "Memcpy %s (%s -> %s)", copy_kind(d->copy_kind),
                 memory_kind(d->src_kind), memory_kind(d->dst_kind));
        *name = buf;
        return "gpu_memcpy";
    }
    if (nnp__contains_ci(type, "memset"))
        return "gpu_memset";
    if (nnp__contains_ci(type, "memcpy"))
        return "gpu_memcpy";
    return "kernel";
}

bool nnp__is_nccl_kernel(const char *name)
{
    const char *p = name;
    if (p[0] == '_' && p[1] == 'Z')
        for (p += 2; *p >= '0' && *p <= '9'; p++)
            ;
    return strncmp(p, NCCL_KERNEL, strlen(NCCL_KERNEL)) == 0 ||
           strncmp(p, NCCL_DEV_KERNEL, strlen(NCCL_DEV_KERNEL)) == 0;
}
