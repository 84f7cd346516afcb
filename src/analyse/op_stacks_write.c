/* op_stacks_write.c - op_stacks_{rank}.csv: the op self time table (op_self_time_{rank}.csv,
 * torch.profiler's key_averages()) with a row per op name and source stack, as
 * key_averages(group_by_stack_n) groups it with every frame: the stack each op counts under
 * (op_stacks.c: torch's rule for autograd nodes), without the frames torch leaves out of
 * every stack (profiler_util.py _filter_stack_entry), rows whose stacks then match summed.
 * Written when some op has a stack (with_stack; a PyTorch trace's "Call stack"), else no
 * file (a re-run removes one). Called once per rank by the analyse driver; docs/OUTPUTS.md
 * "Op stacks". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "analyse/op_table.h"
#include "read/importers.h"

/* Frames torch drops from every stack: both parts in the frame's text (torch 1.13,
 * torch/autograd/profiler_util.py _filter_stack_entry; python/nnprof/_torch_table.py). */
static const struct {
    const char *file, *func;
} FILTERED_FRAMES[] = {
    {"autograd/__init__", "_make_grads"},
    {"autograd/__init__", "backward"},
    {"torch/tensor", "backward"},
    {"_internal/common_utils", "prof_callable"},
    {"_internal/common_utils", "prof_func_call"},
    {"_internal/common_utils", "prof_meth_call"},
};

/* Between two frames of a "Source Location" cell (the frames innermost first), and of the
 * model's stack text (model.h, ops.stack). */
#define FRAME_SEP       ';'
#define MODEL_FRAME_SEP '\n'

typedef struct stack_row {
    nnp_time_row_t t;
    char *source; /* owned: the frames kept, FRAME_SEP between; "" when none */
} stack_row_t;

static const nnp_model_t *sort_model; /* qsort has no context (C11); one writer at a time */

/* Whether needle occurs in the n bytes at s. */
static bool contains(const char *s, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++) {
        if (memcmp(s + i, needle, k) == 0)
            return true;
    }
    return false;
}

/* Whether torch keeps the frame (n bytes at frame) in its stacks. */
static bool kept(const char *frame, size_t n)
{
    for (size_t k = 0; k < NNP_ARRAY_LEN(FILTERED_FRAMES); k++) {
        if (contains(frame, n, FILTERED_FRAMES[k].file) &&
            contains(frame, n, FILTERED_FRAMES[k].func))
            return false;
    }
    return true;
}

/* The kept frames of a stack text ('\n' between frames), FRAME_SEP between; NULL when out
 * of memory. */
static char *source_of(const char *stack)
{
    char *out = nnp__malloc(strlen(stack) + 1);
    if (out)
        nnp__fields_rejoin(stack, MODEL_FRAME_SEP, FRAME_SEP, kept, out);
    return out;
}

static int cmp_key(const void *pa, const void *pb)
{
    const stack_row_t *a = pa, *b = pb;
    int c = strcmp(nnp__model_str(sort_model, a->t.name), nnp__model_str(sort_model, b->t.name));
    return c ? c : strcmp(a->source, b->source);
}

/* Most self time first, then by name and source (op_table.c's order). */
static int cmp_self(const void *pa, const void *pb)
{
    const stack_row_t *a = pa, *b = pb;
    if (a->t.self_ns != b->t.self_ns)
        return a->t.self_ns > b->t.self_ns ? -1 : 1;
    return cmp_key(pa, pb);
}

/* Sums rows of one name and source into the first; returns the number left. */
static size_t merge(stack_row_t *r, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        stack_row_t *m = w ? &r[w - 1] : NULL;
        if (m && cmp_key(m, &r[i]) == 0) {
            m->t.calls += r[i].t.calls;
            m->t.total_ns += r[i].t.total_ns;
            m->t.self_ns += r[i].t.self_ns;
            m->t.min_ns = r[i].t.min_ns < m->t.min_ns ? r[i].t.min_ns : m->t.min_ns;
            m->t.max_ns = r[i].t.max_ns > m->t.max_ns ? r[i].t.max_ns : m->t.max_ns;
            nnp__free(r[i].source);
            continue;
        }
        r[w++] = r[i];
    }
    return w;
}

static bool has_stacks(const nnp_model_t *m)
{
    if (!m->ops.stack)
        return false;
    for (size_t i = 0; i < m->ops.t.n; i++) {
        if (m->ops.stack[i])
            return true;
    }
    return false;
}

static int write_rows(const nnp_actx_t *c, stack_row_t *r, size_t n)
{
    char name[NNP_NAME_MAX];
    nnp_time_row_t *t = nnp__calloc(n + 1, sizeof(*t));
    const char **src = nnp__calloc(n + 1, sizeof(*src));
    int rc = NNP_OK;
    if (!t || !src)
        rc = nnp__fail(NNP_ENOMEM, "out of memory (op stacks)");
    for (size_t i = 0; rc == NNP_OK && i < n; i++) {
        t[i] = r[i].t;
        src[i] = r[i].source;
    }
    snprintf(name, sizeof(name), "op_stacks_%d.csv", c->rank);
    if (rc == NNP_OK)
        rc = nnp__time_rows_write(c, name, t, src, n);
    nnp__free(t);
    nnp__free(src);
    return rc;
}

int nnp__op_stacks_write(const nnp_actx_t *c)
{
    nnp_op_row_t *rows = NULL;
    stack_row_t *r = NULL;
    size_t n_rows = 0, n = 0;
    bool ranges = nnp__is_kineto_model(c->m);
    int rc;
    if (!has_stacks(c->m)) {
        nnp__output_remove_stale(c, "op_stacks_", ".csv");
        return NNP_OK;
    }
    rc = nnp__op_table(c->m, c->has_steps, c->step_first, c->step_last, NNP_OP_TABLE_BY_STACK,
                       &rows, &n_rows);
    if (rc == NNP_OK && !(r = nnp__calloc(n_rows + 1, sizeof(*r))))
        rc = nnp__fail(NNP_ENOMEM, "out of memory (op stacks)");
    /* The rows of op_self_time_{rank}.csv (op_self.c), by name and stack. */
    for (size_t i = 0; rc == NNP_OK && i < n_rows; i++) {
        const nnp_op_row_t *o = &rows[i];
        if (!((o->kind == NNP_ROW_OP || (ranges && o->kind == NNP_ROW_RANGE)) && o->count > 0))
            continue;
        r[n].t = (nnp_time_row_t){o->name, o->count, o->total_ns, o->self_ns, o->min_ns, o->max_ns};
        if (!(r[n].source = source_of(nnp__model_str(c->m, o->stack))))
            rc = nnp__fail(NNP_ENOMEM, "out of memory (op stacks)");
        else
            n++;
    }
    if (rc == NNP_OK) {
        sort_model = c->m;
        qsort(r, n, sizeof(*r), cmp_key);
        n = merge(r, n);
        qsort(r, n, sizeof(*r), cmp_self);
        rc = write_rows(c, r, n);
    }
    for (size_t i = 0; i < n; i++)
        nnp__free(r[i].source);
    nnp__free(r);
    nnp__free(rows);
    return rc;
}
