/* demo_alloc.c - the demo's tensor allocator: a caching pool in the manner of PyTorch's
 * caching allocator, reduced to one free list per exact block size (a training step asks
 * for the same shapes every time, so after step one every request is a cache hit). Each
 * tensor alloc/free is reported to nnprof with its name and owner op. Used by the training
 * thread only: no locking. */
#include <stdlib.h>
#include <string.h>

#include "demo.h"

/* Blocks are cache-line aligned (what vector loads and a device allocator want); the
 * header sits in the line before the data, so the data stays aligned. */
#define BLOCK_ALIGN 64
#define NO_CLASS    (-1)

typedef struct block_header {
    size_t size_bytes; /* rounded block size */
    size_t requested;  /* bytes the tensor asked for (what is reported) */
    int cls;           /* size class, or NO_CLASS when the pool had no class left */
    void *next_free;
} block_header_t;

_Static_assert(sizeof(block_header_t) <= BLOCK_ALIGN, "the header must fit in one line");

static block_header_t *header_of(void *p)
{
    return (block_header_t *)((char *)p - BLOCK_ALIGN);
}

void demo_alloc_init(demo_alloc_t *a, bool report, uint32_t device_id)
{
    memset(a, 0, sizeof(*a));
    a->report = report;
    a->device_id = device_id;
}

static int find_class(demo_alloc_t *a, size_t size)
{
    for (int i = 0; i < a->n_classes; i++)
        if (a->classes[i].size_bytes == size)
            return i;
    if (a->n_classes == DEMO_ALLOC_CLASSES)
        return NO_CLASS;
    a->classes[a->n_classes].size_bytes = size;
    a->classes[a->n_classes].free_list = NULL;
    return a->n_classes++;
}

void *demo_tensor_alloc(demo_alloc_t *a, size_t bytes, nnp_str_t name, nnp_str_t owner_op)
{
    size_t size = (bytes + BLOCK_ALIGN - 1) / BLOCK_ALIGN * BLOCK_ALIGN;
    int cls = find_class(a, size);
    void *data = NULL;
    block_header_t *h;

    if (cls != NO_CLASS && a->classes[cls].free_list) {
        data = a->classes[cls].free_list;
        a->classes[cls].free_list = header_of(data)->next_free;
    } else {
        void *raw;
        if (posix_memalign(&raw, BLOCK_ALIGN, BLOCK_ALIGN + size) != 0)
            demo_fatal("out of memory allocating a tensor");
        data = (char *)raw + BLOCK_ALIGN;
        a->reserved_bytes += size;
    }
    h = header_of(data);
    h->size_bytes = size;
    h->requested = bytes;
    h->cls = cls;
    h->next_free = NULL;
    a->in_use_bytes += size;
    if (a->in_use_bytes > a->peak_bytes)
        a->peak_bytes = a->in_use_bytes;
    if (a->report) {
        nnp_tensor_t t;
        t.address = (uint64_t)(uintptr_t)data;
        t.size_bytes = bytes;
        t.name = name;
        t.owner_op = owner_op;
        t.device_id = a->device_id;
        nnp_mem_alloc(&t);
    }
    return data;
}

void demo_tensor_free(demo_alloc_t *a, void *p)
{
    block_header_t *h;
    if (!p)
        return;
    h = header_of(p);
    if (a->report)
        nnp_mem_free((uint64_t)(uintptr_t)p, h->requested);
    a->in_use_bytes -= h->size_bytes;
    if (h->cls == NO_CLASS) {
        a->reserved_bytes -= h->size_bytes;
        free(h);
        return;
    }
    h->next_free = a->classes[h->cls].free_list;
    a->classes[h->cls].free_list = p;
}

void demo_alloc_fini(demo_alloc_t *a)
{
    for (int i = 0; i < a->n_classes; i++) {
        void *p = a->classes[i].free_list;
        while (p) {
            block_header_t *h = header_of(p);
            p = h->next_free;
            a->reserved_bytes -= h->size_bytes;
            free(h);
        }
        a->classes[i].free_list = NULL;
    }
}
