/* strtab.c - open-addressing hash (FNV-1a, linear probing) from string to id plus an
 * id-indexed array of entries. Entries are allocated once and never moved or freed, so
 * pointers handed out by nnp__strtab_get() stay valid for the process's life. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "record/strtab.h"
#include "util/util.h"

#define INITIAL_SLOTS 1024u
#define FNV_OFFSET    2166136261u
#define FNV_PRIME     16777619u

typedef struct entry {
    uint32_t len;
    uint32_t hash;
    char text[]; /* NUL-terminated copy */
} entry_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t *slots; /* hash slot -> id, 0 = empty */
static uint32_t n_slots;
static entry_t **entries; /* id - 1 -> entry */
static uint32_t entries_cap;
static _Atomic uint32_t count;
static size_t total_bytes;

static uint32_t hash_bytes(const char *s, size_t n)
{
    uint32_t h = FNV_OFFSET;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * FNV_PRIME;
    return h;
}

/* Doubles the hash index; keeps the load factor under 1/2. */
static int grow_index(void)
{
    uint32_t n = n_slots ? n_slots * 2 : INITIAL_SLOTS;
    uint32_t *ns = nnp__calloc(n, sizeof(*ns));
    uint32_t c = atomic_load_explicit(&count, memory_order_relaxed);
    if (!ns)
        return -1;
    for (uint32_t id = 1; id <= c; id++) {
        uint32_t i = entries[id - 1]->hash & (n - 1);
        while (ns[i])
            i = (i + 1) & (n - 1);
        ns[i] = id;
    }
    nnp__free(slots);
    slots = ns;
    n_slots = n;
    return 0;
}

uint32_t nnp__strtab_intern(const char *s, size_t len)
{
    uint32_t h, i, id = 0, c;
    entry_t *e;

    if (len > NNP_STRTAB_MAX_LEN)
        len = NNP_STRTAB_MAX_LEN;
    h = hash_bytes(s, len);
    pthread_mutex_lock(&lock);
    c = atomic_load_explicit(&count, memory_order_relaxed);
    if ((c + 1) * 2 > n_slots && grow_index() != 0)
        goto out;
    for (i = h & (n_slots - 1); slots[i]; i = (i + 1) & (n_slots - 1)) {
        e = entries[slots[i] - 1];
        if (e->hash == h && e->len == len && memcmp(e->text, s, len) == 0) {
            id = slots[i];
            goto out;
        }
    }
    if (c >= NNP_STRTAB_MAX_STRINGS || total_bytes + len > NNP_STRTAB_MAX_BYTES)
        goto out;
    if (c == entries_cap) {
        uint32_t ncap = entries_cap ? entries_cap * 2 : INITIAL_SLOTS;
        entry_t **ne = nnp__realloc(entries, ncap * sizeof(*ne));
        if (!ne)
            goto out;
        entries = ne;
        entries_cap = ncap;
    }
    e = nnp__malloc(sizeof(*e) + len + 1);
    if (!e)
        goto out;
    e->len = (uint32_t)len;
    e->hash = h;
    memcpy(e->text, s, len);
    e->text[len] = '\0';
    entries[c] = e;
    total_bytes += len;
    id = c + 1;
    slots[i] = id;
    /* Release: a reader that sees the new count also sees the entry. */
    atomic_store_explicit(&count, c + 1, memory_order_release);
out:
    pthread_mutex_unlock(&lock);
    return id;
}

uint32_t nnp__strtab_count(void)
{
    return atomic_load_explicit(&count, memory_order_acquire);
}

int nnp__strtab_get(uint32_t id, const char **s, size_t *len)
{
    entry_t *e;
    if (id == 0 || id > nnp__strtab_count())
        return -1;
    /* entries may be reallocated by a concurrent intern: read the pointer under lock. */
    pthread_mutex_lock(&lock);
    e = entries[id - 1];
    pthread_mutex_unlock(&lock);
    *s = e->text;
    *len = e->len;
    return 0;
}

void nnp__strtab_fork_prepare(void)
{
    pthread_mutex_lock(&lock);
}

void nnp__strtab_fork_parent(void)
{
    pthread_mutex_unlock(&lock);
}

void nnp__strtab_fork_child(void)
{
    /* Held by the thread that forked, which is the child's only thread. */
    pthread_mutex_unlock(&lock);
}
