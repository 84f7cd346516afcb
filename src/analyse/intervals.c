/* intervals.c - lists of time intervals sorted by start and, once normalised, disjoint
 * (intervals.h): growth, merging, clipping, difference and gaps of two lists as linear
 * sweeps, and the length of a list inside a window from prefix sums. The overlap analysis
 * (overlap.c) builds its computing, communication and free lists with them. Failures are
 * NNP_ENOMEM through nnp__fail; the lists own their arrays (nnp__ivl_fini). */
#include <stdlib.h>
#include <string.h>

#include "analyse/intervals.h"
#include "model/model.h"
#include "util/util.h"

/* First capacity of an interval list; lists double from there. */
#define LIST_INITIAL 64

int nnp__ivl_push(nnp_interval_list_t *l, int64_t start_ns, int64_t end_ns)
{
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : LIST_INITIAL;
        nnp_interval_t *v;
        if (ncap > NNP_MODEL_MAX_ROWS * (size_t)2)
            return nnp__fail(NNP_ENOMEM, "overlap: too many intervals");
        v = nnp__realloc(l->v, ncap * sizeof(*v));
        if (!v)
            return nnp__fail(NNP_ENOMEM, "overlap: out of memory");
        nnp__hint_huge_pages(v, ncap * sizeof(*v)); /* millions of intervals at 10 M events */
        l->v = v;
        l->cap = ncap;
    }
    l->v[l->n].start_ns = start_ns;
    l->v[l->n].end_ns = end_ns;
    l->n++;
    return NNP_OK;
}

void nnp__ivl_fini(nnp_interval_list_t *l)
{
    nnp__free(l->v);
    memset(l, 0, sizeof(*l));
}

static int cmp_start(const void *a, const void *b)
{
    const nnp_interval_t *x = a, *y = b;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return (x->end_ns > y->end_ns) - (x->end_ns < y->end_ns);
}

/* Sorts by start (skipped when the model's order already holds, the usual case) and merges
 * overlapping or touching intervals in place: [0,10] + [10,20] is one busy period. */
void nnp__ivl_normalise(nnp_interval_list_t *l)
{
    size_t out = 0;
    bool sorted = true;
    for (size_t i = 1; i < l->n && sorted; i++)
        sorted = l->v[i - 1].start_ns <= l->v[i].start_ns;
    if (!sorted)
        qsort(l->v, l->n, sizeof(*l->v), cmp_start);
    for (size_t i = 0; i < l->n; i++) {
        if (out > 0 && l->v[i].start_ns <= l->v[out - 1].end_ns) {
            if (l->v[i].end_ns > l->v[out - 1].end_ns)
                l->v[out - 1].end_ns = l->v[i].end_ns;
            continue;
        }
        l->v[out++] = l->v[i];
    }
    l->n = out;
}

/* Keeps the parts of a normalised list inside [lo, hi]; empty results are dropped. */
void nnp__ivl_clip(nnp_interval_list_t *l, int64_t lo, int64_t hi)
{
    size_t out = 0;
    for (size_t i = 0; i < l->n; i++) {
        int64_t s = l->v[i].start_ns > lo ? l->v[i].start_ns : lo;
        int64_t e = l->v[i].end_ns < hi ? l->v[i].end_ns : hi;
        if (s < e)
            l->v[out++] = (nnp_interval_t){s, e};
    }
    l->n = out;
}

/* out = a minus b (both normalised). Two pointers: j only moves forward because a's
 * intervals are disjoint and sorted; each a looks only at the b's that overlap it, so the
 * total work is O(|a| + |b|). */
int nnp__ivl_subtract(const nnp_interval_list_t *a, const nnp_interval_list_t *b,
                      nnp_interval_list_t *out)
{
    size_t j = 0;
    for (size_t i = 0; i < a->n; i++) {
        int64_t cur = a->v[i].start_ns, end = a->v[i].end_ns;
        while (j < b->n && b->v[j].end_ns <= cur)
            j++;
        for (size_t k = j; k < b->n && b->v[k].start_ns < end; k++) {
            if (b->v[k].start_ns > cur) {
                int rc = nnp__ivl_push(out, cur, b->v[k].start_ns);
                if (rc != NNP_OK)
                    return rc;
            }
            if (b->v[k].end_ns > cur)
                cur = b->v[k].end_ns;
        }
        if (cur < end) {
            int rc = nnp__ivl_push(out, cur, end);
            if (rc != NNP_OK)
                return rc;
        }
    }
    return NNP_OK;
}

void nnp__ivl_gaps_begin(nnp_ivl_gaps_t *g, const nnp_interval_list_t *a,
                         const nnp_interval_list_t *b, int64_t lo, int64_t hi)
{
    *g = (nnp_ivl_gaps_t){.a = a, .b = b, .cur = lo, .hi = hi};
}

/* One merge step at a time over the two sorted lists: an interval starting after the busy
 * time so far leaves a gap before it; after both lists, the tail up to hi. */
bool nnp__ivl_gaps_next(nnp_ivl_gaps_t *g, nnp_interval_t *gap)
{
    const nnp_interval_list_t *a = g->a, *b = g->b;
    while (g->i < a->n || g->j < b->n) {
        nnp_interval_t x;
        bool found;
        if (g->j >= b->n || (g->i < a->n && a->v[g->i].start_ns <= b->v[g->j].start_ns))
            x = a->v[g->i++];
        else
            x = b->v[g->j++];
        found = x.start_ns > g->cur;
        if (found)
            *gap = (nnp_interval_t){g->cur, x.start_ns};
        if (x.end_ns > g->cur)
            g->cur = x.end_ns;
        if (found)
            return true;
    }
    if (g->tail_done)
        return false;
    g->tail_done = true;
    if (g->cur >= g->hi)
        return false;
    *gap = (nnp_interval_t){g->cur, g->hi};
    return true;
}

int nnp__ivl_gaps(const nnp_interval_list_t *a, const nnp_interval_list_t *b, int64_t lo,
                  int64_t hi, nnp_interval_list_t *out)
{
    nnp_ivl_gaps_t g;
    nnp_interval_t gap;
    nnp__ivl_gaps_begin(&g, a, b, lo, hi);
    while (nnp__ivl_gaps_next(&g, &gap)) {
        int rc = nnp__ivl_push(out, gap.start_ns, gap.end_ns);
        if (rc != NNP_OK)
            return rc;
    }
    return NNP_OK;
}

/* Gives back a list's spare capacity: the overlap lists live on until the timeline is
 * written. */
void nnp__ivl_shrink(nnp_interval_list_t *l)
{
    nnp_interval_t *v;
    if (l->n == 0 || l->n == l->cap)
        return;
    v = nnp__realloc(l->v, l->n * sizeof(*v));
    if (v) {
        l->v = v;
        l->cap = l->n;
    }
}

/* ---- measuring a list inside a window in O(log n + CUM_STRIDE) ---- */

/* Intervals per prefix-sum entry: a sum for every interval would cost 8 bytes per
 * interval (a list has one per op of a CPU-only run); one per 16 costs 0.5 and at most
 * 2 x 16 interval lengths per measurement. */
#define CUM_STRIDE 16

/* cum[b] = total length of intervals 0..b*CUM_STRIDE-1, so any run of whole intervals
 * costs two lookups and two short sums; only the two edge intervals need clipping. */
int nnp__ivl_prefix_sums(const nnp_interval_list_t *l, int64_t **out)
{
    size_t nb = l->n / CUM_STRIDE + 1;
    int64_t *cum = nnp__malloc(nb * sizeof(*cum)), sum = 0;
    if (!cum)
        return nnp__fail(NNP_ENOMEM, "overlap: out of memory");
    for (size_t i = 0; i < l->n; i++) {
        if (i % CUM_STRIDE == 0)
            cum[i / CUM_STRIDE] = sum;
        sum += l->v[i].end_ns - l->v[i].start_ns;
    }
    if (l->n % CUM_STRIDE == 0)
        cum[l->n / CUM_STRIDE] = sum;
    *out = cum;
    return NNP_OK;
}

/* Total length of intervals 0..x-1. */
static int64_t sum_before(const nnp_interval_list_t *l, const int64_t *cum, size_t x)
{
    int64_t sum = cum[x / CUM_STRIDE];
    for (size_t k = x / CUM_STRIDE * CUM_STRIDE; k < x; k++)
        sum += l->v[k].end_ns - l->v[k].start_ns;
    return sum;
}

/* Whether interval x is past key: by its end (end > key), or by its start (start >= key). */
static bool past(const nnp_interval_list_t *l, size_t x, int64_t key, bool by_end)
{
    return by_end ? l->v[x].end_ns > key : l->v[x].start_ns >= key;
}

/* The first interval past key (l->n when none; past() is false then true along the list,
 * since starts and ends are both sorted): doubling steps from `from` in the direction of
 * the answer, then a binary search between the last two steps. Any `from` gives the same
 * answer; a near one makes it O(log distance). */
static size_t first_past(const nnp_interval_list_t *l, int64_t key, bool by_end, size_t from)
{
    size_t lo, hi, step = 1;
    if (from > l->n)
        from = l->n;
    if (from < l->n && !past(l, from, key, by_end)) { /* the answer is after from */
        lo = from + 1;
        while (from + step < l->n && !past(l, from + step, key, by_end)) {
            lo = from + step + 1;
            step *= 2;
        }
        hi = from + step < l->n ? from + step : l->n;
    } else { /* at from or before it */
        hi = from;
        while (step <= from && past(l, from - step, key, by_end)) {
            hi = from - step;
            step *= 2;
        }
        lo = step <= from ? from - step + 1 : 0;
    }
    while (lo < hi) { /* past() is false before lo and true from hi */
        size_t mid = lo + (hi - lo) / 2;
        if (past(l, mid, key, by_end))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Length of the normalised list inside [lo, hi]. Ends are sorted too (the intervals are
 * disjoint), so both searches are over sorted keys. */
int64_t nnp__ivl_measure(const nnp_interval_list_t *l, const int64_t *cum, int64_t lo, int64_t hi,
                         nnp_ivl_hint_t *h)
{
    size_t i, j;
    int64_t total;
    if (hi <= lo)
        return 0;
    i = first_past(l, lo, true, h->first); /* the first interval ending after lo */
    /* the first starting at or after hi: none before i does (they end by lo < hi) */
    j = first_past(l, hi, false, h->last);
    h->first = i;
    h->last = j;
    if (i >= j)
        return 0;
    total = sum_before(l, cum, j) - sum_before(l, cum, i);
    if (l->v[i].start_ns < lo)
        total -= lo - l->v[i].start_ns;
    if (l->v[j - 1].end_ns > hi)
        total -= l->v[j - 1].end_ns - hi;
    return total;
}

/* First busy instant .. last busy instant of two normalised lists; false when both are
 * empty. */
bool nnp__ivl_busy_span(const nnp_interval_list_t *a, const nnp_interval_list_t *b, int64_t *lo,
                        int64_t *hi)
{
    if (a->n == 0 && b->n == 0)
        return false;
    *lo = INT64_MAX;
    *hi = INT64_MIN;
    if (a->n > 0) {
        *lo = a->v[0].start_ns;
        *hi = a->v[a->n - 1].end_ns;
    }
    if (b->n > 0) {
        if (b->v[0].start_ns < *lo)
            *lo = b->v[0].start_ns;
        if (b->v[b->n - 1].end_ns > *hi)
            *hi = b->v[b->n - 1].end_ns;
    }
    return *hi > *lo;
}

int64_t nnp__ivl_total(const nnp_interval_list_t *l)
{
    int64_t s = 0;
    for (size_t i = 0; i < l->n; i++)
        s += l->v[i].end_ns - l->v[i].start_ns;
    return s;
}
