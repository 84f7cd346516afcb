/* op_stacks.c - the source stack each op counts under, by torch.profiler's rule
 * (torch/autograd/profiler_util.py, EventList._set_backward_stacktraces, torch 1.13): an
 * op has the stack it was called from, unless it is an autograd node (a backward op) or
 * nested in one on its thread: then it has the stack of the first op, outside any backward
 * op, of the node's autograd link (sequence number and forward thread), none when there
 * is none (AccumulateGrad). torch nests its events on whole microseconds, which sometimes
 * leaves an op out of the node it ran in; here nesting is on the recorded times. Called by
 * the op table (op_table.c) when it groups by stack (analyse layer, model only). */
#include <stdlib.h>
#include <string.h>

#include "analyse/op_table.h"
#include "util/util.h"

/* A forward op's link, for the backward ops to find their forward op's stack. */
typedef struct fwd_link {
    int64_t seq;
    uint32_t thread;
    uint32_t stack;
    size_t op; /* the op (ops are sorted by start: the first of a link is the outermost) */
} fwd_link_t;

static int cmp_links(const void *pa, const void *pb)
{
    const fwd_link_t *a = pa, *b = pb;
    if (a->seq != b->seq)
        return a->seq < b->seq ? -1 : 1;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    return a->op < b->op ? -1 : a->op > b->op;
}

/* Op index: none. */
#define NO_OP SIZE_MAX

/* The stack of the forward op of backward op i, 0 when none: the first forward op (by
 * start) of its link. */
static uint32_t forward_stack(const nnp_ops_t *o, const fwd_link_t *links, size_t n, size_t i)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const fwd_link_t *l = &links[mid];
        if (l->seq < o->seq_nr[i] || (l->seq == o->seq_nr[i] && l->thread < o->seq_thread[i]))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < n && links[lo].seq == o->seq_nr[i] && links[lo].thread == o->seq_thread[i])
        return links[lo].stack; /* lo: the first of the link, links sort by op after it */
    return 0;
}

int nnp__op_stacks(const nnp_model_t *m, uint32_t **stacks)
{
    const nnp_ops_t *o = &m->ops;
    size_t n = o->t.n, n_links = 0, depth = 0;
    size_t *order = NULL, *open = NULL, *bw = NULL;
    fwd_link_t *links = NULL;
    uint32_t *out;
    *stacks = NULL;
    if (!o->stack || n == 0)
        return NNP_OK;
    out = nnp__calloc(n, sizeof(*out));
    order = nnp__malloc(n * sizeof(*order));
    open = nnp__malloc(n * sizeof(*open));
    bw = nnp__malloc(n * sizeof(*bw));
    links = nnp__malloc(n * sizeof(*links));
    if (!out || !order || !open || !bw || !links) {
        nnp__free(out);
        out = NULL;
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    qsort_r(order, n, sizeof(*order), nnp__ops_cmp_thread_start, (void *)(uintptr_t)o);
    /* One pass per thread, open holding the ops enclosing the current one: bw[i] is the
     * innermost backward op enclosing op i or op i itself (NO_OP: none). */
    for (size_t k = 0; k < n; k++) {
        size_t i = order[k];
        if (k > 0 && o->thread[i] != o->thread[order[k - 1]])
            depth = 0;
        while (depth > 0 && (o->end_ns[open[depth - 1]] <= o->start_ns[i] ||
                             o->end_ns[i] > o->end_ns[open[depth - 1]]))
            depth--;
        bw[i] = o->seq_kind && o->seq_kind[i] == NNP_SEQ_BACKWARD ? i
                : depth > 0                                       ? bw[open[depth - 1]]
                                                                  : NO_OP;
        open[depth++] = i;
        if (bw[i] == NO_OP && o->seq_kind && o->seq_kind[i] == NNP_SEQ_FORWARD)
            links[n_links++] = (fwd_link_t){o->seq_nr[i], o->seq_thread[i], o->stack[i], i};
    }
    if (n_links)
        qsort(links, n_links, sizeof(*links), cmp_links);
    for (size_t i = 0; i < n; i++)
        out[i] = bw[i] == NO_OP ? o->stack[i] : forward_stack(o, links, n_links, bw[i]);
done:
    nnp__free(order);
    nnp__free(open);
    nnp__free(bw);
    nnp__free(links);
    if (!out)
        return nnp__fail(NNP_ENOMEM, "out of memory resolving op stacks");
    *stacks = out;
    return NNP_OK;
}
