/* host_ranges.c - host_ranges_{rank}.csv: one row per host range name (nnp_range_begin/end,
 * Python record_function, MindSpore host_info begin/end rows) with its calls and total,
 * self, average, min and max time, the table torch.profiler's key_averages() prints.
 * Begin and end rows pair by the rule every reader of ranges shares (host_pairs.h: an end
 * closes the innermost open range of the same event, module and stage on its thread; ranges
 * opened inside it stay open); a range's self time is its time minus that of the ranges and
 * host ops directly inside it on its thread (as torch counts a record_function's self time:
 * every event inside is its child). Ranges never ended (a crash) and ends without a begin
 * are left out and counted in one log line. Called once per rank by the analyse driver;
 * docs/OUTPUTS.md "Host ranges". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "model/host_pairs.h"

typedef struct open_range {
    size_t row;       /* the begin row */
    int64_t child_ns; /* time of the ranges directly inside, so far */
} open_range_t;

typedef struct stack {
    open_range_t *v;
    size_t n, cap;
    int64_t op_end; /* end of the thread's latest op not inside another op */
} range_stack_t;

typedef struct ranges {
    const nnp_model_t *m;
    range_stack_t *stacks; /* one per thread index */
    nnp_time_row_t *rows;  /* by name, grown on first sight */
    size_t n_rows, rows_cap;
    uint32_t *row_of; /* model string id -> rows index + 1 (0 = none yet) */
    size_t *begin_of; /* host_pairs.h: each end row's begin row */
    uint64_t unmatched_ends;
} ranges_t;

static int push(range_stack_t *s, size_t row)
{
    if (s->n == s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 16;
        open_range_t *nv = nnp__realloc(s->v, ncap * sizeof(*nv));
        if (!nv)
            return nnp__fail(NNP_ENOMEM, "out of memory");
        s->v = nv;
        s->cap = ncap;
    }
    s->v[s->n++] = (open_range_t){row, 0};
    return NNP_OK;
}

static int add(ranges_t *r, uint32_t name, int64_t dur, int64_t self)
{
    nnp_time_row_t *s;
    if (!r->row_of[name]) {
        if (r->n_rows == r->rows_cap) {
            size_t ncap = r->rows_cap ? r->rows_cap * 2 : 16;
            nnp_time_row_t *nv = nnp__realloc(r->rows, ncap * sizeof(*nv));
            if (!nv)
                return nnp__fail(NNP_ENOMEM, "out of memory");
            r->rows = nv;
            r->rows_cap = ncap;
        }
        r->rows[r->n_rows] = (nnp_time_row_t){name, 0, 0, 0, INT64_MAX, INT64_MIN};
        r->row_of[name] = (uint32_t)++r->n_rows;
    }
    s = &r->rows[r->row_of[name] - 1];
    s->calls++;
    s->total_ns += dur;
    s->self_ns += self;
    s->min_ns = dur < s->min_ns ? dur : s->min_ns;
    s->max_ns = dur > s->max_ns ? dur : s->max_ns;
    return NNP_OK;
}

/* An end row: takes the range it closes off its thread's stack (ranges opened inside it
 * and still open stay, now inside the range below it) and charges its time to that range. */
static int on_end(ranges_t *r, size_t i)
{
    const nnp_host_rows_t *h = &r->m->host;
    range_stack_t *s = &r->stacks[h->thread[i]];
    size_t b = r->begin_of[i], k = s->n;
    open_range_t closed;
    int64_t dur;
    while (k > 0 && s->v[k - 1].row != b)
        k--;
    if (b == NNP_HOST_NO_PAIR || k == 0) {
        r->unmatched_ends++;
        return NNP_OK;
    }
    closed = s->v[k - 1];
    memmove(&s->v[k - 1], &s->v[k], (s->n - k) * sizeof(*s->v));
    s->n--;
    dur = h->ts_ns[i] - h->ts_ns[b];
    if (dur < 0)
        dur = 0;
    if (k > 1)
        s->v[k - 2].child_ns += dur;
    /* An op that started inside and ended after the range counts no more than the range. */
    return add(r, h->event[i], dur, closed.child_ns < dur ? dur - closed.child_ns : 0);
}

/* Op j: when it is inside no other op of its thread, a child of the thread's innermost
 * open range (ops start-sorted; an op starting before the thread's latest outer op ended
 * is inside that one). Ops never ended are nobody's child. */
static void on_op(ranges_t *r, size_t j)
{
    const nnp_ops_t *o = &r->m->ops;
    range_stack_t *s;
    if (o->thread[j] >= r->m->threads.t.n || o->end_ns[j] == NNP_OPEN_END ||
        o->end_ns[j] < o->start_ns[j])
        return;
    s = &r->stacks[o->thread[j]];
    if (o->start_ns[j] < s->op_end)
        return;
    s->op_end = o->end_ns[j];
    if (s->n > 0)
        s->v[s->n - 1].child_ns += o->end_ns[j] - o->start_ns[j];
}

static int cmp_rows(const void *a, const void *b, void *m)
{
    const nnp_time_row_t *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    return strcmp(nnp__model_str(m, x->name), nnp__model_str(m, y->name));
}

int nnp__host_ranges_write(const nnp_actx_t *c)
{
    const nnp_model_t *m = c->m;
    const nnp_host_rows_t *h = &m->host;
    ranges_t r;
    uint64_t open = 0;
    int rc = NNP_OK;

    if (h->t.n == 0)
        return NNP_OK;
    memset(&r, 0, sizeof(r));
    r.m = m;
    r.stacks = nnp__calloc(m->threads.t.n + 1, sizeof(*r.stacks));
    r.row_of = nnp__calloc(m->n_strs + 1, sizeof(uint32_t));
    if (!r.stacks || !r.row_of)
        rc = nnp__fail(NNP_ENOMEM, "out of memory");
    if (rc == NNP_OK)
        rc = nnp__host_pairs(h, m->threads.t.n, &r.begin_of);
    for (size_t t = 0; r.stacks && t <= m->threads.t.n; t++)
        r.stacks[t].op_end = INT64_MIN;
    /* Rows are sorted by time (stable), so each thread's rows come in recorded order; ops
     * by start. An op goes after the rows of its start time: a range ending then does not
     * hold it, one beginning then does. */
    for (size_t i = 0, j = 0; rc == NNP_OK && i < h->t.n; i++) {
        for (; j < m->ops.t.n && m->ops.start_ns[j] < h->ts_ns[i]; j++)
            on_op(&r, j);
        if (h->thread[i] >= m->threads.t.n)
            continue;
        if (h->kind[i] == NNP_HOST_ROW_BEGIN)
            rc = push(&r.stacks[h->thread[i]], i);
        else if (h->kind[i] == NNP_HOST_ROW_END)
            rc = on_end(&r, i);
    }
    for (size_t t = 0; r.stacks && t <= m->threads.t.n; t++) {
        open += r.stacks[t].n;
        nnp__free(r.stacks[t].v);
    }
    if (rc == NNP_OK && (open || r.unmatched_ends))
        NNP_LOG_I("host ranges: %llu never ended and %llu ends without a begin left out",
                  (unsigned long long)open, (unsigned long long)r.unmatched_ends);
    if (rc == NNP_OK && r.n_rows > 0) {
        qsort_r(r.rows, r.n_rows, sizeof(*r.rows), cmp_rows, (void *)m);
        char name[NNP_NAME_MAX];
        snprintf(name, sizeof(name), "host_ranges_%d.csv", c->rank);
        rc = nnp__time_rows_write(c, name, r.rows, NULL, r.n_rows);
    }
    nnp__free(r.stacks);
    nnp__free(r.row_of);
    nnp__free(r.begin_of);
    nnp__free(r.rows);
    return rc;
}
