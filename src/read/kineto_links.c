/* kineto_links.c - see kineto_links.h. Kineto's generateForwardBackwardLink
 * (profiler_kineto.cpp) starts a "fwdbwd" flow at the last forward op of a (thread,
 * sequence number) and ends it at the backward op whose "Fwd thread id" and "Sequence
 * number" name them: both ends lie at their op's start, on its thread. */
#include <stdlib.h>
#include <string.h>

#include "read/kineto_links.h"
#include "util/util.h"

/* First capacity of the flow ends of a file. */
#define FLOWS_INITIAL 256

int nnp__kin_flow_add(nnp_kin_links_t *l, uint64_t id, uint32_t thread, bool is_end, int64_t ts_ns)
{
    nnp_kin_flow_t *v = nnp__grow(l->v, l->n, &l->cap, sizeof(*v), FLOWS_INITIAL);
    if (!v)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    l->v = v;
    l->v[l->n++] = (nnp_kin_flow_t){id, thread, is_end, ts_ns};
    return NNP_OK;
}

/* By id, the start ("s") before the end. */
static int cmp_flow(const void *pa, const void *pb)
{
    const nnp_kin_flow_t *a = pa, *b = pb;
    if (a->id != b->id)
        return a->id < b->id ? -1 : 1;
    return (int)a->is_end - (int)b->is_end;
}

/* The backward op (with a forward thread id) that starts at ts on thread, among bw
 * (sorted by thread, then start); SIZE_MAX when none. */
static size_t backward_at(const nnp_ops_t *o, const size_t *bw, size_t n, uint32_t thread,
                          int64_t ts)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        size_t j = bw[mid];
        if (o->thread[j] < thread || (o->thread[j] == thread && o->start_ns[j] < ts))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && o->thread[bw[lo]] == thread && o->start_ns[bw[lo]] == ts ? bw[lo] : SIZE_MAX;
}

int nnp__kin_links_resolve(nnp_kin_links_t *l, nnp_model_t *m, size_t first_op)
{
    nnp_ops_t *o = &m->ops;
    size_t n_threads = m->threads.t.n, *bw, n_bw = 0;
    uint32_t *fwd_id;
    if (l->n == 0 || !o->seq_kind || o->t.n <= first_op || n_threads == 0)
        return NNP_OK;
    bw = nnp__malloc((o->t.n - first_op) * sizeof(*bw));
    fwd_id = nnp__calloc(n_threads, sizeof(*fwd_id));
    if (!bw || !fwd_id) {
        nnp__free(bw);
        nnp__free(fwd_id);
        return nnp__fail(NNP_ENOMEM, "out of memory");
    }
    for (size_t i = first_op; i < o->t.n; i++) {
        if (o->seq_kind[i] == NNP_SEQ_BACKWARD && o->seq_thread[i] != 0)
            bw[n_bw++] = i;
    }
    qsort_r(bw, n_bw, sizeof(*bw), nnp__ops_cmp_thread_start, o);
    qsort(l->v, l->n, sizeof(*l->v), cmp_flow);
    /* Each start followed by its end: the start's thread is the end's op's forward thread
     * (the first flow that says so counts). */
    for (size_t k = 0; k + 1 < l->n; k++) {
        const nnp_kin_flow_t *s = &l->v[k], *f = &l->v[k + 1];
        size_t j;
        if (s->is_end || !f->is_end || s->id != f->id || s->thread >= n_threads)
            continue;
        j = backward_at(o, bw, n_bw, f->thread, f->ts_ns);
        if (j != SIZE_MAX && fwd_id[s->thread] == 0)
            fwd_id[s->thread] = o->seq_thread[j];
    }
    for (size_t i = first_op; i < o->t.n; i++) {
        if (o->seq_kind[i] == NNP_SEQ_FORWARD && o->seq_thread[i] == 0 &&
            o->thread[i] < n_threads && fwd_id[o->thread[i]])
            o->seq_thread[i] = fwd_id[o->thread[i]];
    }
    nnp__free(bw);
    nnp__free(fwd_id);
    return NNP_OK;
}

void nnp__kin_links_fini(nnp_kin_links_t *l)
{
    nnp__free(l->v);
    memset(l, 0, sizeof(*l));
}
