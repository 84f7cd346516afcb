/* cl_strtab.c - the string table the threads of one cluster analysis share: group names,
 * op names and transport types of the spilled records are ids into it. Interning takes a
 * mutex (a rank interns a few dozen distinct strings, not one per event). Ids depend on
 * which thread came first, so nothing is ever ordered by id: nnp__cl_strtab_collate gives
 * each id its place in the sorted list of strings, and the writers sort by that. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cluster.h"

/* First capacities; both double from there. */
#define STRS_INITIAL  256
#define INDEX_INITIAL 512
/* Hard cap of distinct strings (ids stay far inside uint32). */
#define STRS_MAX (1u << 28)

int nnp__cl_strtab_init(nnp_cl_strtab_t *t)
{
    memset(t, 0, sizeof(*t));
    if (pthread_mutex_init(&t->mu, NULL) != 0)
        return nnp__fail(NNP_ENOMEM, "cannot create a mutex");
    t->cap = STRS_INITIAL;
    t->s = nnp__calloc(t->cap, sizeof(*t->s));
    t->len = nnp__calloc(t->cap, sizeof(*t->len));
    t->index_cap = INDEX_INITIAL;
    t->index = nnp__calloc(t->index_cap, sizeof(*t->index));
    if (!t->s || !t->len || !t->index) {
        nnp__cl_strtab_fini(t);
        return nnp__fail(NNP_ENOMEM, "out of memory");
    }
    t->n = 1; /* id 0 is "" */
    return NNP_OK;
}

void nnp__cl_strtab_fini(nnp_cl_strtab_t *t)
{
    if (t->s) {
        for (size_t i = 1; i < t->n; i++)
            nnp__free(t->s[i]);
    }
    nnp__free(t->s);
    nnp__free(t->len);
    nnp__free(t->index);
    nnp__free(t->order);
    pthread_mutex_destroy(&t->mu);
    memset(t, 0, sizeof(*t));
}

static uint64_t hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a 64 */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

static int rehash(nnp_cl_strtab_t *t)
{
    size_t ncap = t->index_cap * 2;
    uint32_t *ni = nnp__calloc(ncap, sizeof(*ni));
    if (!ni)
        return NNP_ENOMEM;
    for (size_t id = 1; id < t->n; id++) {
        size_t k = (size_t)hash(t->s[id], t->len[id]) & (ncap - 1);
        while (ni[k])
            k = (k + 1) & (ncap - 1);
        ni[k] = (uint32_t)id;
    }
    nnp__free(t->index);
    t->index = ni;
    t->index_cap = ncap;
    return NNP_OK;
}

static uint32_t intern_locked(nnp_cl_strtab_t *t, const char *s, size_t len)
{
    size_t k = (size_t)hash(s, len) & (t->index_cap - 1);
    char *copy;
    while (t->index[k]) {
        uint32_t id = t->index[k];
        if (t->len[id] == len && memcmp(t->s[id], s, len) == 0)
            return id;
        k = (k + 1) & (t->index_cap - 1);
    }
    if (t->n >= STRS_MAX)
        return 0;
    if (t->n == t->cap) {
        size_t ncap = t->cap * 2;
        char **ns = nnp__realloc(t->s, ncap * sizeof(*ns));
        uint32_t *nl;
        if (!ns)
            return 0;
        t->s = ns;
        nl = nnp__realloc(t->len, ncap * sizeof(*nl));
        if (!nl)
            return 0;
        t->len = nl;
        t->cap = ncap;
    }
    copy = nnp__malloc(len + 1);
    if (!copy)
        return 0;
    memcpy(copy, s, len);
    copy[len] = '\0';
    t->s[t->n] = copy;
    t->len[t->n] = (uint32_t)len;
    t->index[k] = (uint32_t)t->n;
    t->n++;
    /* Keep the table at most half full: probes stay short. */
    if (t->n * 2 > t->index_cap && rehash(t) != NNP_OK)
        return 0;
    return (uint32_t)(t->n - 1);
}

uint32_t nnp__cl_intern(nnp_cl_strtab_t *t, const char *s, size_t len)
{
    uint32_t id;
    if (!s || len == 0)
        return 0;
    pthread_mutex_lock(&t->mu);
    id = intern_locked(t, s, len);
    pthread_mutex_unlock(&t->mu);
    if (id == 0)
        nnp__fail(NNP_ENOMEM, "out of memory in the cluster string table");
    return id;
}

uint32_t nnp__cl_intern_cstr(nnp_cl_strtab_t *t, const char *s)
{
    return s ? nnp__cl_intern(t, s, strlen(s)) : 0;
}

const char *nnp__cl_str(const nnp_cl_strtab_t *t, uint32_t id)
{
    return id > 0 && id < t->n ? t->s[id] : "";
}

/* Digit runs compare by value (leading zeros ignored, then by length), the rest bytewise. */
int nnp__cl_natcmp(const char *a, const char *b)
{
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            const char *ea = a, *eb = b;
            size_t la, lb;
            while (*a == '0' && isdigit((unsigned char)a[1]))
                a++;
            while (*b == '0' && isdigit((unsigned char)b[1]))
                b++;
            ea = a;
            eb = b;
            while (isdigit((unsigned char)*ea))
                ea++;
            while (isdigit((unsigned char)*eb))
                eb++;
            la = (size_t)(ea - a);
            lb = (size_t)(eb - b);
            if (la != lb)
                return la < lb ? -1 : 1;
            for (size_t i = 0; i < la; i++) {
                if (a[i] != b[i])
                    return (unsigned char)a[i] < (unsigned char)b[i] ? -1 : 1;
            }
            a = ea;
            b = eb;
            continue;
        }
        if (*a != *b)
            return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        a++;
        b++;
    }
    return (*a != '\0') - (*b != '\0');
}

static int cmp_ids(const void *x, const void *y, void *ctx)
{
    const nnp_cl_strtab_t *t = ctx;
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    int c = nnp__cl_natcmp(t->s[a], t->s[b]);
    /* Equal under natcmp but different bytes ("a01" / "a1"): bytes decide. */
    return c ? c : strcmp(t->s[a], t->s[b]);
}

int nnp__cl_strtab_collate(nnp_cl_strtab_t *t)
{
    uint32_t *ids = nnp__malloc(t->n * sizeof(*ids));
    nnp__free(t->order);
    t->order = nnp__calloc(t->n, sizeof(*t->order));
    if (!ids || !t->order) {
        nnp__free(ids);
        return nnp__fail(NNP_ENOMEM, "out of memory");
    }
    for (size_t i = 1; i < t->n; i++)
        ids[i - 1] = (uint32_t)i;
    qsort_r(ids, t->n - 1, sizeof(*ids), cmp_ids, t);
    for (size_t i = 0; i + 1 < t->n; i++)
        t->order[ids[i]] = (uint32_t)(i + 1);
    nnp__free(ids);
    return NNP_OK;
}
