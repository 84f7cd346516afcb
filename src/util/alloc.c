/* alloc.c - the one allocation wrapper of the library (curl curlx_malloc, libuv uv__malloc).
 * Gives tests a "fail the Nth allocation" hook. Never called from a recording hot path
 * except on a thread's very first event (its buffer). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util.h"

/* 0 = no failure planned; otherwise the number of allocations left before one fails. */
static _Atomic uint64_t fail_countdown;

static bool should_fail(void)
{
    uint64_t left = atomic_load_explicit(&fail_countdown, memory_order_relaxed);
    while (left != 0) {
        if (atomic_compare_exchange_weak(&fail_countdown, &left, left - 1))
            return left == 1;
    }
    return false;
}

void nnp__alloc_fail_at(uint64_t nth)
{
    atomic_store(&fail_countdown, nth);
}

bool nnp__alloc_fail_pending(void)
{
    return atomic_load(&fail_countdown) != 0;
}

void *nnp__malloc(size_t n)
{
    if (should_fail())
        return NULL;
    return malloc(n ? n : 1);
}

void *nnp__calloc(size_t count, size_t n)
{
    if (should_fail())
        return NULL;
    return calloc(count ? count : 1, n ? n : 1);
}

void *nnp__realloc(void *p, size_t n)
{
    if (should_fail())
        return NULL;
    return realloc(p, n ? n : 1);
}

void *nnp__grow(void *p, size_t n, size_t *cap, size_t elem, size_t initial)
{
    size_t ncap;
    void *np;
    if (n < *cap)
        return p;
    ncap = *cap ? *cap * 2 : initial;
    if (ncap <= n || elem == 0 || ncap > SIZE_MAX / elem)
        return NULL;
    np = nnp__realloc(p, ncap * elem);
    if (np)
        *cap = ncap;
    return np;
}

void nnp__free(void *p)
{
    free(p);
}

/* The transparent huge page size of x86-64 and of arm64 with 4 KiB pages. */
#define HUGE_PAGE_BYTES ((uintptr_t)2 << 20)

void nnp__hint_huge_pages(void *p, size_t n)
{
    /* Every page of the block, not only its whole huge pages: a big block is a mapping
     * of its own, and advising part of it would split it in two, which mremap cannot
     * grow (realloc would then copy it). */
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)p & ~(page - 1);
    uintptr_t end = ((uintptr_t)p + n + page - 1) & ~(page - 1);
    if (p && n >= HUGE_PAGE_BYTES)
        (void)madvise((void *)start, (size_t)(end - start), MADV_HUGEPAGE);
}

size_t nnp__zmap_bytes(size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (n + page - 1) / page * page;
}

void *nnp__zmap_resize(void *p, size_t old_bytes, size_t new_bytes)
{
    void *q;
    if (should_fail())
        return NULL;
    if (!p)
        q = mmap(NULL, new_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    else
        q = mremap(p, old_bytes, new_bytes, MREMAP_MAYMOVE);
    return q == MAP_FAILED ? NULL : q;
}

void nnp__zmap_free(void *p, size_t bytes)
{
    if (p)
        (void)munmap(p, bytes);
}

void nnp__prefault_write(void *p, size_t n)
{
    /* Only the whole pages inside the range: the pages at its edges may already be in use
     * (and are then present), and a range of no whole page is not worth a call. */
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t end = ((uintptr_t)p + n) & ~(page - 1);
#ifdef MADV_POPULATE_WRITE
    if (p && end > start)
        (void)madvise((void *)start, (size_t)(end - start), MADV_POPULATE_WRITE);
#else
    (void)start;
    (void)end;
#endif
}

void *nnp__aligned_alloc(size_t align, size_t n)
{
    void *p = NULL;
    if (should_fail())
        return NULL;
    if (posix_memalign(&p, align, n ? n : 1) != 0)
        return NULL;
    return p;
}

char *nnp__strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = nnp__malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

size_t nnp__fields_rejoin(const char *s, char sep, char out_sep,
                          bool (*keep)(const char *field, size_t len), char *out)
{
    size_t len = 0;
    while (*s) {
        const char *e = strchr(s, sep);
        size_t fl = e ? (size_t)(e - s) : strlen(s);
        if (fl > 0 && (!keep || keep(s, fl))) {
            if (len)
                out[len++] = out_sep;
            memcpy(out + len, s, fl);
            len += fl;
        }
        s += fl + (e != NULL);
    }
    out[len] = '\0';
    return len;
}

bool nnp__contains_ci(const char *s, const char *needle)
{
    size_t n = strlen(needle);
    for (; *s; s++)
        if (strncasecmp(s, needle, n) == 0)
            return true;
    return n == 0;
}

bool nnp__strlcpy(char *dst, const char *src, size_t cap)
{
    size_t n;
    if (cap == 0)
        return false;
    n = strlen(src);
    if (n >= cap) {
        memcpy(dst, src, cap - 1);
        dst[cap - 1] = '\0';
        return false;
    }
    memcpy(dst, src, n + 1);
    return true;
}
