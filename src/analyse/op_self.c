/* op_self.c - op_self_time_{rank}.csv: when host ops nest (PyTorch: aten::conv2d inside
 * aten::convolution inside an autograd node), op_statistic's totals count a callee's time
 * again in each caller, so its top types repeat one piece of work. This file gives, per op
 * name, the calls and the total and self time (torch.profiler's key_averages() sorted by
 * self time; nnp__op_table in op_table.c does the counting). Written only when some op
 * starts inside another op of its thread; `nnprof summary` shows it instead of
 * op_statistic's top types, and (without kernels) the advisor's top_op_types finding names
 * the ops with the most self time. Called once per rank by the analyse driver; docs/OUTPUTS.md
 * "Op self time". */
#include <stdio.h>
#include <string.h>

#include "analyse/analyse.h"
#include "analyse/op_table.h"
#include "read/importers.h"

#define PERCENT 100.0

/* Whether an op starts before an earlier op of its thread has ended (ops are sorted by
 * start time). */
static int ops_nest(const nnp_model_t *m, bool *nest)
{
    const nnp_ops_t *o = &m->ops;
    int64_t *last_end;
    *nest = false;
    if (o->t.n < 2)
        return NNP_OK;
    last_end = nnp__calloc(m->threads.t.n + 1, sizeof(*last_end));
    if (!last_end)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    for (size_t i = 0; i < m->threads.t.n + 1; i++)
        last_end[i] = INT64_MIN;
    for (size_t i = 0; i < o->t.n && !*nest; i++) {
        /* Ops of no known thread share the last slot. */
        uint32_t t = o->thread[i] < m->threads.t.n ? o->thread[i] : (uint32_t)m->threads.t.n;
        if (o->start_ns[i] < last_end[t])
            *nest = true;
        else
            last_end[t] = o->end_ns[i];
    }
    nnp__free(last_end);
    return NNP_OK;
}

/* The op rows of the table (kind op, at least one call) as time rows, in its order (by
 * self time, largest first, then by name). A PyTorch trace's ranges too (record_function,
 * ProfilerStep*): key_averages() lists them with the ops, as the legacy profiler's traces
 * hold them as ops. */
static int write_ops(const nnp_actx_t *c, const nnp_op_row_t *rows, size_t n_rows)
{
    char name[NNP_NAME_MAX];
    nnp_time_row_t *out = nnp__calloc(n_rows + 1, sizeof(*out));
    bool ranges = nnp__is_kineto_model(c->m);
    size_t n = 0;
    int rc;
    if (!out)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    for (size_t i = 0; i < n_rows; i++) {
        const nnp_op_row_t *r = &rows[i];
        if ((r->kind == NNP_ROW_OP || (ranges && r->kind == NNP_ROW_RANGE)) && r->count > 0)
            out[n++] =
                (nnp_time_row_t){r->name, r->count, r->total_ns, r->self_ns, r->min_ns, r->max_ns};
    }
    snprintf(name, sizeof(name), "op_self_time_%d.csv", c->rank);
    rc = nnp__time_rows_write(c, name, out, NULL, n);
    nnp__free(out);
    return rc;
}

/* The NNP_FINDINGS_TOP_TYPES ops with the most self time (rows are sorted so), and their
 * share of all op self time, for the advisor in place of op_statistic's totals. */
static void top_by_self(nnp_findings_t *f, const nnp_model_t *m, const nnp_op_row_t *rows,
                        size_t n_rows)
{
    int64_t all = 0;
    size_t k = 0;
    for (size_t i = 0; i < n_rows; i++)
        if (rows[i].kind == NNP_ROW_OP)
            all += rows[i].self_ns;
    for (size_t i = 0; i < n_rows && k < NNP_FINDINGS_TOP_TYPES; i++) {
        if (rows[i].kind != NNP_ROW_OP || rows[i].count == 0)
            continue;
        nnp__strlcpy(f->top_types[k], nnp__model_str(m, rows[i].name), NNP_NAME_MAX);
        f->top_type_pct[k] = all > 0 ? (double)rows[i].self_ns * PERCENT / (double)all : 0.0;
        k++;
    }
    f->n_top_types = k;
    f->top_types_by_self = k > 0;
}

int nnp__op_self_write(const nnp_actx_t *c, nnp_findings_t *f)
{
    nnp_op_row_t *rows = NULL;
    size_t n_rows = 0;
    bool nest;
    int rc = ops_nest(c->m, &nest);
    if (rc != NNP_OK || !nest)
        return rc;
    rc = nnp__op_table(c->m, c->has_steps, c->step_first, c->step_last, 0, &rows, &n_rows);
    if (rc == NNP_OK)
        rc = write_ops(c, rows, n_rows);
    /* With kernels the top types are those of the device time, which does not nest. */
    if (rc == NNP_OK && c->m->kernels.t.n == 0)
        top_by_self(f, c->m, rows, n_rows);
    nnp__free(rows);
    return rc;
}
