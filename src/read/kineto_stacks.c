/* kineto_stacks.c - see kineto_stacks.h. torch builds its event tree per thread on the
 * events' times (torch/csrc/profiler/collection.cpp, build_tree: by start, an event is the
 * child of the innermost open event that has not ended), and a KinetoEvent's Python stack
 * is the names of the Python events (calls, C calls, module calls) among its ancestors,
 * innermost first. Here only the python_function events open and close: the ops between
 * them do not change which Python events hold an op. */
#include <stdlib.h>
#include <string.h>

#include "read/kineto_stacks.h"
#include "util/util.h"

/* Between two frames of the model's stack text (model.h, ops.stack). */
#define FRAME_SEP '\n'
/* Between (and after) two frames of a "Call stack" arg. */
#define CALL_STACK_SEP ';'
/* First capacity of the python_function events of a file. */
#define PY_INITIAL 1024

int nnp__kin_call_stack(nnp_model_t *m, size_t i, const char *p)
{
    size_t n = strlen(p), len;
    char *text;
    int rc = NNP_OK;
    if (n == 0)
        return NNP_OK;
    if (nnp__model_ops_want_stack(m) != NNP_OK || !(text = nnp__malloc(n + 1)))
        return nnp__fail(NNP_ENOMEM, "out of memory");
    len = nnp__fields_rejoin(p, CALL_STACK_SEP, FRAME_SEP, NULL, text);
    if (len && !(m->ops.stack[i] = nnp__model_intern_cstr(m, text)))
        rc = nnp__fail(NNP_ENOMEM, "out of memory");
    nnp__free(text);
    return rc;
}

int nnp__kin_py_add(nnp_kin_stacks_t *s, uint32_t thread, uint32_t name, int64_t start_ns,
                    int64_t end_ns)
{
    nnp_kin_py_t *p = nnp__grow(s->py, s->n, &s->cap, sizeof(*p), PY_INITIAL);
    if (!p)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    s->py = p;
    s->py[s->n++] = (nnp_kin_py_t){thread, name, start_ns, end_ns};
    return NNP_OK;
}

/* By thread, then start, the longer first at one start (the caller). */
static int cmp_py(const void *pa, const void *pb)
{
    const nnp_kin_py_t *a = pa, *b = pb;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    if (a->end_ns != b->end_ns)
        return a->end_ns > b->end_ns ? -1 : 1;
    return 0;
}

/* The sweep's state: the Python events open on the current thread, outermost first, and
 * each event's stack text once made (0: not yet). */
typedef struct sweep {
    nnp_model_t *m;
    const nnp_kin_py_t *py;
    size_t *open, depth;
    uint32_t *text;
    char *buf;
    size_t buf_cap;
} sweep_t;

/* Makes the stack texts of the open events that have none: an event's name, then its
 * caller's text. NNP_OK or NNP_ENOMEM. */
static int texts_of_open(sweep_t *w)
{
    for (size_t d = 0; d < w->depth; d++) {
        size_t q = w->open[d];
        const char *name, *caller;
        size_t nl, cl, need;
        if (w->text[q])
            continue;
        name = nnp__model_str(w->m, w->py[q].name);
        caller = d ? nnp__model_str(w->m, w->text[w->open[d - 1]]) : "";
        nl = strlen(name);
        cl = strlen(caller);
        need = nl + 1 + cl + 1;
        if (need > w->buf_cap) {
            char *b = nnp__realloc(w->buf, need);
            if (!b)
                return nnp__fail(NNP_ENOMEM, "out of memory");
            w->buf = b;
            w->buf_cap = need;
        }
        memcpy(w->buf, name, nl);
        if (cl) {
            w->buf[nl] = FRAME_SEP;
            memcpy(w->buf + nl + 1, caller, cl);
            nl += 1 + cl;
        }
        w->buf[nl] = '\0';
        if (!(w->text[q] = nnp__model_intern_cstr(w->m, w->buf)))
            return nnp__fail(NNP_ENOMEM, "out of memory");
    }
    return NNP_OK;
}

/* Assigns the stacks of the ops in idx (sorted by thread, then start). */
static int sweep_ops(sweep_t *w, size_t n_py, const size_t *idx, size_t n_idx)
{
    nnp_ops_t *o = &w->m->ops;
    const nnp_kin_py_t *py = w->py;
    uint32_t thread = UINT32_MAX;
    size_t p = 0;
    int rc = NNP_OK;
    for (size_t k = 0; k < n_idx && rc == NNP_OK; k++) {
        size_t j = idx[k];
        int64_t start = o->start_ns[j];
        if (o->thread[j] != thread) {
            thread = o->thread[j];
            w->depth = 0;
            while (p < n_py && py[p].thread < thread)
                p++;
        }
        /* The Python events that started by then open, each inside the innermost open one
         * that has not ended when it starts. */
        for (; p < n_py && py[p].thread == thread && py[p].start_ns <= start; p++) {
            while (w->depth && py[w->open[w->depth - 1]].end_ns <= py[p].start_ns)
                w->depth--;
            w->open[w->depth++] = p;
        }
        while (w->depth && py[w->open[w->depth - 1]].end_ns <= start)
            w->depth--;
        if (w->depth && (rc = texts_of_open(w)) == NNP_OK)
            o->stack[j] = w->text[w->open[w->depth - 1]];
    }
    return rc;
}

int nnp__kin_py_stacks(nnp_kin_stacks_t *s, nnp_model_t *m, size_t first_op)
{
    nnp_ops_t *o = &m->ops;
    sweep_t w;
    size_t *idx, n_idx = 0;
    int rc;
    if (s->n == 0 || o->t.n <= first_op)
        return NNP_OK;
    if (nnp__model_ops_want_stack(m) != NNP_OK)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    memset(&w, 0, sizeof(w));
    w.m = m;
    w.py = s->py;
    idx = nnp__malloc((o->t.n - first_op) * sizeof(*idx));
    w.open = nnp__malloc(s->n * sizeof(*w.open));
    w.text = nnp__calloc(s->n, sizeof(*w.text));
    rc = idx && w.open && w.text ? NNP_OK : nnp__fail(NNP_ENOMEM, "out of memory");
    if (rc == NNP_OK) {
        /* Ops that have no stack of their own ("Call stack"). */
        for (size_t i = first_op; i < o->t.n; i++) {
            if (!o->stack[i])
                idx[n_idx++] = i;
        }
        qsort(s->py, s->n, sizeof(*s->py), cmp_py);
        qsort_r(idx, n_idx, sizeof(*idx), nnp__ops_cmp_thread_start, o);
        rc = sweep_ops(&w, s->n, idx, n_idx);
    }
    nnp__free(idx);
    nnp__free(w.open);
    nnp__free(w.text);
    nnp__free(w.buf);
    return rc;
}

void nnp__kin_stacks_fini(nnp_kin_stacks_t *s)
{
    nnp__free(s->py);
    memset(s, 0, sizeof(*s));
}
