/* op_self.c - op_self_time_{rank}.csv: when host ops nest (PyTorch: aten::conv2d inside
 * aten::convolution inside an autograd node), op_statistic's totals count a callee's time
 * again in each caller, so its top types repeat one piece of work. This file gives, per op
 * name, the calls and the total and self time (torch.profiler's key_averages() sorted by
 * self time; nnp__op_table in op_table.c does the counting). Written only when some op
 * starts inside another op of its thread; `nnprof summary` shows it instead of
 * op_statistic's top types. Called once per rank by the analyse driver; docs/OUTPUTS.md
 * "Op self time". */
#include <stdio.h>
#include <string.h>

#include "analyse/analyse.h"
#include "analyse/op_table.h"
#include "util/csv_writer.h"

/* Room for one formatted time. */
#define NUM_BUF 32
#define PERCENT 100.0
/* Self Time(%) decimals, as op_statistic's Ratio(%) and host_ranges'. */
#define PCT_DECIMALS 2

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

static int write_csv(const nnp_actx_t *c, const nnp_op_row_t *rows, size_t n_rows)
{
    static const char *const header[] = {"Name",          "Calls",        "Total Time(us)",
                                         "Self Time(us)", "Avg Time(us)", "Min Time(us)",
                                         "Max Time(us)",  "Self Time(%)", NULL};
    char name[NNP_NAME_MAX], b[NUM_BUF];
    int64_t all = 0;
    nnp_outfile_t f;
    nnp_csv_t w;
    int rc;

    for (size_t i = 0; i < n_rows; i++)
        if (rows[i].kind == NNP_ROW_OP)
            all += rows[i].self_ns;
    snprintf(name, sizeof(name), "op_self_time_%d.csv", c->rank);
    rc = nnp__out_open(&f, c->out_dir, name);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__csv_init(&w, f.fd);
    if (rc == NNP_OK) {
        nnp__csv_header(&w, header);
        for (size_t i = 0; i < n_rows; i++) {
            const nnp_op_row_t *s = &rows[i];
            if (s->kind != NNP_ROW_OP || s->count == 0)
                continue;
            nnp__csv_str(&w, nnp__model_str(c->m, s->name));
            nnp__csv_uint(&w, s->count);
            nnp__csv_str(&w, nnp__fmt_ns_as_us(b, sizeof(b), s->total_ns));
            nnp__csv_str(&w, nnp__fmt_ns_as_us(b, sizeof(b), s->self_ns));
            /* The mean rounded half up to the ns, so its 3 decimals are exact. */
            nnp__csv_str(&w, nnp__fmt_ns_as_us(
                                 b, sizeof(b),
                                 (int64_t)(((uint64_t)s->total_ns + s->count / 2) / s->count)));
            nnp__csv_str(&w, nnp__fmt_ns_as_us(b, sizeof(b), s->min_ns));
            nnp__csv_str(&w, nnp__fmt_ns_as_us(b, sizeof(b), s->max_ns));
            /* Share of all op self time: the shares add up to 100. */
            nnp__csv_fixed(&w, all > 0 ? (double)s->self_ns * PERCENT / (double)all : 0.0,
                           PCT_DECIMALS);
            nnp__csv_end_row(&w);
        }
    }
    {
        int rc_fini = nnp__csv_fini(&w);
        if (rc == NNP_OK)
            rc = rc_fini;
    }
    return nnp__out_commit(&f, rc);
}

int nnp__op_self_write(const nnp_actx_t *c)
{
    nnp_op_row_t *rows = NULL;
    size_t n_rows = 0;
    bool nest;
    int rc = ops_nest(c->m, &nest);
    if (rc != NNP_OK || !nest)
        return rc;
    rc = nnp__op_table(c->m, c->has_steps, c->step_first, c->step_last, false, &rows, &n_rows);
    if (rc == NNP_OK)
        rc = write_csv(c, rows, n_rows);
    nnp__free(rows);
    return rc;
}
