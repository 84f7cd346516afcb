/* host_pairs.c - begin and end host rows paired into ranges (host_pairs.h). Each thread's
 * open begins form a stack linked through the rows themselves (the begin open below each
 * one), so an end costs the depth it searches and the whole pass O(rows) memory. */
#include "model/host_pairs.h"

#include "util/util.h"

static bool same_range(const nnp_host_rows_t *h, size_t a, size_t b)
{
    return h->event[a] == h->event[b] && h->module[a] == h->module[b] && h->stage[a] == h->stage[b];
}

int nnp__host_pairs(const nnp_host_rows_t *h, size_t n_threads, size_t **begin_of)
{
    size_t n = h->t.n, *pair, *below, *top;
    *begin_of = NULL;
    if (n == 0)
        return NNP_OK;
    pair = nnp__malloc(n * sizeof(*pair));
    below = nnp__malloc(n * sizeof(*below));
    top = nnp__malloc((n_threads + 1) * sizeof(*top));
    if (!pair || !below || !top) {
        nnp__free(pair);
        nnp__free(below);
        nnp__free(top);
        return nnp__fail(NNP_ENOMEM, "out of memory pairing host ranges");
    }
    for (size_t t = 0; t <= n_threads; t++)
        top[t] = NNP_HOST_NO_PAIR;
    for (size_t i = 0; i < n; i++) {
        size_t th = h->thread[i] < n_threads ? h->thread[i] : n_threads;
        pair[i] = NNP_HOST_NO_PAIR;
        if (h->kind[i] == NNP_HOST_ROW_BEGIN) {
            below[i] = top[th];
            top[th] = i;
        } else if (h->kind[i] == NNP_HOST_ROW_END) {
            /* The innermost open begin of the same range, unlinked from the stack. */
            size_t *link = &top[th];
            for (size_t b = *link; b != NNP_HOST_NO_PAIR; link = &below[b], b = *link) {
                if (same_range(h, b, i)) {
                    *link = below[b];
                    pair[i] = b;
                    break;
                }
            }
        }
    }
    nnp__free(below);
    nnp__free(top);
    *begin_of = pair;
    return NNP_OK;
}
