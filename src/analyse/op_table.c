/* op_table.c - the operator table of torch.profiler's key_averages(): per op name, the
 * count, inclusive and self time, FLOPs and memory. Self time is an interval's duration
 * less that of the intervals directly nested in it on the same thread (ops and host
 * ranges, as torch counts children of user annotations); collectives run asynchronously
 * and are neither parents nor children. Memory events are charged to the innermost
 * interval open on their thread (self) and to every enclosing one (inclusive), as the
 * legacy profiler does. A PyTorch trace is counted as key_averages() counts the events
 * torch recorded (below: "torch's own traces"). Called by nnp_op_table() and op_self.c
 * (analyse layer, model only). */
#include <stdlib.h>
#include <string.h>

#include "analyse/op_table.h"
#include "model/host_pairs.h"
#include "read/importers.h"
#include "read/raw_import.h"
#include "util/json_writer.h"
#include "util/util.h"

/* An interval of one thread: an op or a matched host range, or a memory event (dur 0,
 * is_mem) placed in the same time order. */
typedef struct item {
    uint32_t thread;
    int64_t start, end;
    size_t group;  /* index into the groups */
    int64_t bytes; /* memory events: +alloc / -free */
    bool is_mem;
    bool merged;   /* folded into its parent (same name, only child) */
    size_t parent; /* enclosing interval, SIZE_MAX for none */
    uint32_t n_children;
    int64_t child_ns;
    int64_t mem, self_mem;
} item_t;

/* The ops torch's key_averages() leaves out of a trace's events, as parents, children and
 * rows (_filter_name in torch/autograd/profiler_util.py): record_function's own entry and
 * exit ops and three autograd helpers. */
static const char *const TORCH_HIDDEN_OPS[] = {
    "profiler::_record_function_enter",
    "profiler::_record_function_enter_new",
    "profiler::_record_function_exit",
    "aten::is_leaf",
    "aten::output_nr",
    "aten::_version",
};
#define N_TORCH_HIDDEN (sizeof(TORCH_HIDDEN_OPS) / sizeof(TORCH_HIDDEN_OPS[0]))

/* The CUDA runtime calls Kineto leaves out of its traces (libkineto
 * CuptiActivityProfiler.cpp, isBlockListedRuntimeCbid: "very frequent and also not very
 * interesting"), so torch's key_averages() never lists them; our CUPTI back end records
 * every call. Named as our back end names them (without CUPTI's _v3020 suffix). */
static const char *const KINETO_SKIPPED_RUNTIME[] = {
    "cudaGetDevice",
    "cudaSetDevice",
    "cudaGetLastError",
    "cudaEventCreate",
    "cudaEventCreateWithFlags",
    "cudaEventDestroy",
};
#define N_KINETO_SKIPPED (sizeof(KINETO_SKIPPED_RUNTIME) / sizeof(KINETO_SKIPPED_RUNTIME[0]))

typedef struct table {
    const nnp_model_t *m;
    bool by_shapes;
    const uint32_t *stacks;          /* by stack: each op's (nnp__op_stacks), else NULL */
    bool torch;                      /* a PyTorch trace: torch's own events counted */
    uint32_t hidden[N_TORCH_HIDDEN]; /* string ids of TORCH_HIDDEN_OPS, 0 = absent */
    bool filter;
    int64_t lo, hi;
    nnp_op_row_t *rows;
    size_t n_rows, cap_rows;
    size_t *index; /* open addressing: row + 1, 0 empty */
    size_t index_cap;
    item_t *items;
    size_t n_items, cap_items;
} table_t;

#define INITIAL_CAP 256
#define NS_PER_US   1000

bool nnp__step_range_bounds(const nnp_model_t *m, uint64_t first, uint64_t last, int64_t *lo,
                            int64_t *hi)
{
    const nnp_spans_t *s = &m->steps;
    bool any = false;
    *lo = INT64_MAX;
    *hi = INT64_MIN;
    for (size_t i = 0; i < s->t.n; i++) {
        if (s->id[i] < first || s->id[i] > last)
            continue;
        any = true;
        if (s->start_ns[i] < *lo)
            *lo = s->start_ns[i];
        if (s->end_ns[i] != NNP_OPEN_END && s->end_ns[i] > *hi)
            *hi = s->end_ns[i];
    }
    if (any && *hi == INT64_MIN)
        *hi = INT64_MAX; /* the last step never ended: up to the end of the data */
    return any;
}

static bool keep(const table_t *t, int64_t start)
{
    return !t->filter || (start >= t->lo && start <= t->hi);
}

static uint64_t key_hash(nnp_op_row_kind_t kind, uint32_t name, uint32_t shapes, uint32_t stack)
{
    uint64_t h = ((uint64_t)name << 32 | shapes) * 0x9e3779b97f4a7c15ull;
    return h ^ ((uint64_t)kind << 32 | stack) * 0xbf58476d1ce4e5b9ull;
}

static int index_grow(table_t *t)
{
    size_t ncap = t->index_cap ? t->index_cap * 2 : INITIAL_CAP * 2;
    size_t *ni = nnp__calloc(ncap, sizeof(size_t));
    if (!ni)
        return NNP_ENOMEM;
    for (size_t r = 0; r < t->n_rows; r++) {
        const nnp_op_row_t *row = &t->rows[r];
        size_t j = (size_t)key_hash(row->kind, row->name, row->shapes, row->stack) & (ncap - 1);
        while (ni[j])
            j = (j + 1) & (ncap - 1);
        ni[j] = r + 1;
    }
    nnp__free(t->index);
    t->index = ni;
    t->index_cap = ncap;
    return NNP_OK;
}

/* The group of (kind, name, shapes, stack), created when new; SIZE_MAX when out of memory. */
static size_t group_of(table_t *t, nnp_op_row_kind_t kind, uint32_t name, uint32_t shapes,
                       uint32_t stack)
{
    size_t j;
    if (!t->by_shapes)
        shapes = 0;
    if ((t->n_rows + 1) * 2 > t->index_cap && index_grow(t) != NNP_OK)
        return SIZE_MAX;
    j = (size_t)key_hash(kind, name, shapes, stack) & (t->index_cap - 1);
    for (; t->index[j]; j = (j + 1) & (t->index_cap - 1)) {
        const nnp_op_row_t *r = &t->rows[t->index[j] - 1];
        if (r->kind == kind && r->name == name && r->shapes == shapes && r->stack == stack)
            return t->index[j] - 1;
    }
    if (t->n_rows == t->cap_rows) {
        size_t ncap = t->cap_rows ? t->cap_rows * 2 : INITIAL_CAP;
        nnp_op_row_t *p = nnp__realloc(t->rows, ncap * sizeof(*p));
        if (!p)
            return SIZE_MAX;
        t->rows = p;
        t->cap_rows = ncap;
    }
    memset(&t->rows[t->n_rows], 0, sizeof(t->rows[0]));
    t->rows[t->n_rows].kind = kind;
    t->rows[t->n_rows].name = name;
    t->rows[t->n_rows].shapes = shapes;
    t->rows[t->n_rows].stack = stack;
    t->rows[t->n_rows].min_ns = INT64_MAX;
    t->index[j] = t->n_rows + 1;
    return t->n_rows++;
}

static item_t *item_push(table_t *t)
{
    if (t->n_items == t->cap_items) {
        size_t ncap = t->cap_items ? t->cap_items * 2 : INITIAL_CAP;
        item_t *p = nnp__realloc(t->items, ncap * sizeof(*p));
        if (!p)
            return NULL;
        t->items = p;
        t->cap_items = ncap;
    }
    memset(&t->items[t->n_items], 0, sizeof(item_t));
    return &t->items[t->n_items++];
}

static int add_interval(table_t *t, nnp_op_row_kind_t kind, uint32_t name, uint32_t shapes,
                        uint32_t stack, uint32_t thread, int64_t start, int64_t end)
{
    size_t g = group_of(t, kind, name, shapes, stack);
    item_t *it = g == SIZE_MAX ? NULL : item_push(t);
    if (!it)
        return nnp__fail(NNP_ENOMEM, "out of memory building the op table");
    it->thread = thread;
    it->start = start;
    it->end = end < start ? start : end;
    it->group = g;
    return NNP_OK;
}

static bool hidden(const table_t *t, uint32_t name)
{
    for (size_t k = 0; t->torch && k < N_TORCH_HIDDEN; k++)
        if (t->hidden[k] && t->hidden[k] == name)
            return true;
    return false;
}

static int add_ops(table_t *t)
{
    const nnp_ops_t *o = &t->m->ops;
    int rc = NNP_OK;
    for (size_t i = 0; i < o->t.n && rc == NNP_OK; i++) {
        uint32_t name = o->type[i] ? o->type[i] : o->name[i];
        if (!keep(t, o->start_ns[i]) || hidden(t, name))
            continue;
        rc = add_interval(t, NNP_ROW_OP, name, o->shapes[i], t->stacks ? t->stacks[i] : 0,
                          o->thread[i], o->start_ns[i], o->end_ns[i]);
        if (rc == NNP_OK && o->flops_matrix)
            t->rows[t->items[t->n_items - 1].group].flops +=
                o->flops_matrix[i] + o->flops_vector[i];
    }
    return rc;
}

/* Host ranges, each end paired with its begin (host_pairs.h: the innermost open range of
 * the same event, module and stage on its thread; a begin never ended is left out, as
 * torch leaves out unfinished ranges). */
static int add_ranges(table_t *t)
{
    const nnp_host_rows_t *h = &t->m->host;
    size_t *begin_of;
    int rc = nnp__host_pairs(h, t->m->threads.t.n, &begin_of);
    for (size_t i = 0; i < h->t.n && rc == NNP_OK; i++) {
        size_t b = begin_of[i];
        if (b != NNP_HOST_NO_PAIR && keep(t, h->ts_ns[b]))
            rc = add_interval(t, NNP_ROW_RANGE, h->event[b], 0, 0, h->thread[b], h->ts_ns[b],
                              h->ts_ns[i]);
    }
    nnp__free(begin_of);
    return rc;
}

/* Steps as ranges "ProfilerStep*" on the thread that began them (torch.profiler records
 * each step of a schedule as a record_function "ProfilerStep#N", which key_averages() lists
 * under that one name). Steps of no known thread or never ended are left out. */
static int add_steps(table_t *t)
{
    const nnp_spans_t *s = &t->m->steps;
    uint32_t key = nnp__model_find(t->m, NNP_TORCH_STEP_KEY);
    int rc = NNP_OK;
    for (size_t i = 0; i < s->t.n && rc == NNP_OK && key; i++) {
        if (s->thread[i] && s->end_ns[i] != NNP_OPEN_END && keep(t, s->start_ns[i]))
            rc = add_interval(t, NNP_ROW_RANGE, key, 0, 0, s->thread[i] - 1, s->start_ns[i],
                              s->end_ns[i]);
    }
    return rc;
}

/* The CUDA runtime and driver calls as CPU events, children of the op that made them, as
 * key_averages() counts a Kineto trace: of a PyTorch trace (add_torch_events) and of our
 * own captures with the CUDA back end; never the calls Kineto does not record (our
 * Kineto export may hold them: read back, it counts as the capture did). */
static int add_cuda_calls(table_t *t)
{
    const nnp_model_t *m = t->m;
    const nnp_calls_t *c = &m->calls;
    uint32_t skip[N_KINETO_SKIPPED];
    int rc = NNP_OK;
    for (size_t k = 0; k < N_KINETO_SKIPPED; k++)
        skip[k] = nnp__model_find(m, KINETO_SKIPPED_RUNTIME[k]);
    for (size_t i = 0; i < c->t.n && rc == NNP_OK; i++) {
        bool skipped = false;
        if ((c->kind[i] != NNP_CALL_CUDA_RUNTIME && c->kind[i] != NNP_CALL_CUDA_DRIVER) ||
            !keep(t, c->start_ns[i]))
            continue;
        for (size_t k = 0; k < N_KINETO_SKIPPED && !skipped; k++)
            skipped = c->kind[i] == NNP_CALL_CUDA_RUNTIME && skip[k] && skip[k] == c->name[i];
        if (!skipped)
            rc = add_interval(t, NNP_ROW_OP, c->name[i], 0, 0, c->thread[i], c->start_ns[i],
                              c->end_ns[i]);
    }
    return rc;
}

/* torch's own traces: key_averages() counts every CPU event torch recorded, not only ops
 * (torch/autograd/profiler.py _parse_kineto_results): record_function ranges (Kineto's
 * user_annotation, our markers of such a trace), the steps (add_steps), and the CUDA
 * runtime and driver calls, which are then the children of the op that made them (an op's
 * self time leaves out its launches). The legacy profiler's traces hold their ranges as
 * ops already. Device events count no CPU time there and are not rows here. */
static int add_torch_events(table_t *t)
{
    const nnp_model_t *m = t->m;
    int rc = NNP_OK;
    for (size_t i = 0; i < m->markers.t.n && rc == NNP_OK; i++) {
        if (m->markers.end_ns[i] != NNP_OPEN_END && keep(t, m->markers.start_ns[i]))
            rc = add_interval(t, NNP_ROW_RANGE, m->markers.message[i], 0, 0, m->markers.thread[i],
                              m->markers.start_ns[i], m->markers.end_ns[i]);
    }
    return rc == NNP_OK ? add_cuda_calls(t) : rc;
}

static int add_memory(table_t *t)
{
    const nnp_mem_events_t *e = &t->m->mem;
    for (size_t i = 0; i < e->t.n; i++) {
        item_t *it;
        if (!keep(t, e->ts_ns[i]))
            continue;
        it = item_push(t);
        if (!it)
            return nnp__fail(NNP_ENOMEM, "out of memory building the op table");
        it->thread = e->thread[i];
        it->start = it->end = e->ts_ns[i];
        it->is_mem = true;
        it->bytes = e->is_alloc[i] ? (int64_t)e->bytes[i] : -(int64_t)e->bytes[i];
    }
    return NNP_OK;
}

/* Thread, then start; at one start the longer interval first (it is the parent), and a
 * memory event after the intervals starting with it (it happens inside them). */
static int cmp_items(const void *pa, const void *pb)
{
    const item_t *a = pa, *b = pb;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    if (a->is_mem != b->is_mem)
        return a->is_mem ? 1 : -1;
    if (a->end != b->end)
        return a->end > b->end ? -1 : 1;
    return 0;
}

/* The enclosing interval of i that is still counted (merged ones hand over). */
static size_t live_parent(const table_t *t, size_t i)
{
    size_t p = t->items[i].parent;
    while (p != SIZE_MAX && t->items[p].merged)
        p = t->items[p].parent;
    return p;
}

/* torch's EventList._remove_dup_nodes (torch/autograd/profiler_util.py): an interval
 * that is the only child of a parent of the same name is folded into it (its children
 * become the parent's), repeatedly, so "aten::sum" calling "aten::sum" counts once, as in
 * torch's key_averages(). */
static void merge_dups(table_t *t)
{
    bool changed = true;
    while (changed) {
        changed = false;
        for (size_t i = 0; i < t->n_items; i++) {
            item_t *it = &t->items[i];
            size_t p;
            if (it->is_mem || it->merged)
                continue;
            p = live_parent(t, i);
            if (p == SIZE_MAX || t->items[p].n_children != 1 ||
                t->rows[t->items[p].group].name != t->rows[it->group].name)
                continue;
            it->merged = true;
            t->items[p].n_children = it->n_children;
            t->items[p].child_ns = it->child_ns;
            t->items[p].self_mem += it->self_mem;
            changed = true;
        }
    }
}

/* One pass per thread with a stack of the open intervals. */
static int nest(table_t *t)
{
    size_t *stack = t->n_items ? nnp__malloc(t->n_items * sizeof(size_t)) : NULL;
    size_t depth = 0;
    if (t->n_items && !stack)
        return nnp__fail(NNP_ENOMEM, "out of memory building the op table");
    if (t->n_items) /* items is NULL when empty: qsort must not see it */
        qsort(t->items, t->n_items, sizeof(item_t), cmp_items);
    for (size_t i = 0; i < t->n_items; i++) {
        item_t *it = &t->items[i];
        if (i > 0 && it->thread != t->items[i - 1].thread)
            depth = 0;
        /* Intervals that ended are closed: an interval starting at another's end is its
         * sibling, a memory event at an interval's end still happened inside it. An
         * interval that ends after an open one is not its child either (torch's
         * EventList._populate_cpu_children: times truncated to whole us make a child
         * overhang its parent by 1 us), and goes to the next enclosing one. */
        while (depth > 0 && (it->is_mem ? t->items[stack[depth - 1]].end < it->start
                                        : t->items[stack[depth - 1]].end <= it->start ||
                                              it->end > t->items[stack[depth - 1]].end))
            depth--;
        if (it->is_mem) {
            if (depth > 0)
                t->items[stack[depth - 1]].self_mem += it->bytes;
            for (size_t k = 0; k < depth; k++)
                t->items[stack[k]].mem += it->bytes;
            continue;
        }
        it->parent = depth > 0 ? stack[depth - 1] : SIZE_MAX;
        if (depth > 0) {
            t->items[stack[depth - 1]].child_ns += it->end - it->start;
            t->items[stack[depth - 1]].n_children++;
        }
        stack[depth++] = i;
    }
    nnp__free(stack);
    merge_dups(t);
    return NNP_OK;
}

static void fold(table_t *t)
{
    for (size_t i = 0; i < t->n_items; i++) {
        const item_t *it = &t->items[i];
        nnp_op_row_t *r;
        int64_t dur, self;
        if (it->is_mem || it->merged)
            continue;
        r = &t->rows[it->group];
        dur = it->end - it->start;
        self = dur - it->child_ns;
        r->count++;
        r->total_ns += dur;
        r->self_ns += self; /* below 0 where children overlap, as torch's self time */
        if (self >= NS_PER_US)
            r->self_us_whole += (uint64_t)(self / NS_PER_US);
        if (dur < r->min_ns)
            r->min_ns = dur;
        if (dur > r->max_ns)
            r->max_ns = dur;
        r->mem_bytes += it->mem;
        r->self_mem_bytes += it->self_mem;
    }
}

static int add_comms(table_t *t)
{
    const nnp_comms_t *c = &t->m->comms;
    for (size_t i = 0; i < c->t.n; i++) {
        size_t g;
        nnp_op_row_t *r;
        int64_t dur = c->end_ns[i] - c->start_ns[i];
        if (!keep(t, c->start_ns[i]))
            continue;
        g = group_of(t, NNP_ROW_COMM, c->name[i], 0, 0);
        if (g == SIZE_MAX)
            return nnp__fail(NNP_ENOMEM, "out of memory building the op table");
        r = &t->rows[g];
        dur = dur > 0 ? dur : 0;
        r->count++;
        r->total_ns += dur;
        r->self_ns += dur;
        if (dur < r->min_ns)
            r->min_ns = dur;
        if (dur > r->max_ns)
            r->max_ns = dur;
    }
    return NNP_OK;
}

static int cmp_rows(const void *pa, const void *pb, void *model)
{
    const nnp_op_row_t *a = pa, *b = pb;
    const nnp_model_t *m = model;
    int c;
    if (a->self_ns != b->self_ns)
        return a->self_ns > b->self_ns ? -1 : 1;
    c = strcmp(nnp__model_str(m, a->name), nnp__model_str(m, b->name));
    if (c)
        return c;
    c = strcmp(nnp__model_str(m, a->shapes), nnp__model_str(m, b->shapes));
    return c ? c : strcmp(nnp__model_str(m, a->stack), nnp__model_str(m, b->stack));
}

int nnp__op_table(const nnp_model_t *m, bool has_steps, uint64_t first, uint64_t last,
                  unsigned flags, nnp_op_row_t **rows, size_t *n_rows)
{
    table_t t;
    uint32_t *stacks = NULL;
    int rc;
    memset(&t, 0, sizeof(t));
    *rows = NULL;
    *n_rows = 0;
    t.m = m;
    t.by_shapes = (flags & NNP_OP_TABLE_BY_SHAPES) != 0;
    if ((flags & NNP_OP_TABLE_BY_STACK) && (rc = nnp__op_stacks(m, &stacks)) != NNP_OK)
        return rc;
    t.stacks = stacks;
    t.filter = has_steps;
    /* No such step: the empty span [INT64_MAX, INT64_MIN] the call leaves keeps nothing. */
    if (has_steps)
        (void)nnp__step_range_bounds(m, first, last, &t.lo, &t.hi);
    t.torch = nnp__is_kineto_model(m);
    for (size_t k = 0; t.torch && k < N_TORCH_HIDDEN; k++)
        t.hidden[k] = nnp__model_find(m, TORCH_HIDDEN_OPS[k]);
    rc = add_ops(&t);
    if (rc == NNP_OK)
        rc = add_ranges(&t);
    if (rc == NNP_OK && (t.torch || (flags & NNP_OP_TABLE_STEPS)))
        rc = add_steps(&t);
    if (rc == NNP_OK)
        rc = t.torch ? add_torch_events(&t) : add_cuda_calls(&t);
    if (rc == NNP_OK)
        rc = add_memory(&t);
    if (rc == NNP_OK)
        rc = nest(&t);
    if (rc == NNP_OK) {
        fold(&t);
        rc = add_comms(&t);
    }
    nnp__free(t.items);
    nnp__free(t.index);
    nnp__free(stacks);
    if (rc != NNP_OK) {
        nnp__free(t.rows);
        return rc;
    }
    for (size_t i = 0; i < t.n_rows; i++) {
        if (t.rows[i].count == 0)
            t.rows[i].min_ns = 0;
    }
    if (t.n_rows)
        qsort_r(t.rows, t.n_rows, sizeof(nnp_op_row_t), cmp_rows, (void *)(uintptr_t)m);
    *rows = t.rows;
    *n_rows = t.n_rows;
    return NNP_OK;
}

/* ---- nnp_op_table(): the table of a raw directory as JSON ---- */

/* Cap of the JSON text (one small object per distinct name and shapes). */
#define TABLE_JSON_CAP (256u * 1024u * 1024u)

static const char *const KIND_NAMES[] = {"op", "range", "comm"};

static void write_row(nnp_jw_t *w, const nnp_model_t *m, const nnp_op_row_t *r, unsigned flags)
{
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "name");
    nnp__jw_str(w, nnp__model_str(m, r->name));
    if (flags & NNP_OP_TABLE_BY_SHAPES) {
        nnp__jw_key(w, "input_shapes");
        nnp__jw_str(w, nnp__model_str(m, r->shapes));
    }
    if (flags & NNP_OP_TABLE_BY_STACK) {
        nnp__jw_key(w, "stack");
        nnp__jw_str(w, nnp__model_str(m, r->stack));
        nnp__jw_key(w, "self_us_whole");
        nnp__jw_uint(w, r->self_us_whole);
    }
    nnp__jw_key(w, "kind");
    nnp__jw_str(w, KIND_NAMES[r->kind]);
    nnp__jw_key(w, "count");
    nnp__jw_uint(w, r->count);
    nnp__jw_key(w, "total_ns");
    nnp__jw_int(w, r->total_ns);
    nnp__jw_key(w, "self_ns");
    nnp__jw_int(w, r->self_ns);
    nnp__jw_key(w, "min_ns");
    nnp__jw_int(w, r->min_ns);
    nnp__jw_key(w, "max_ns");
    nnp__jw_int(w, r->max_ns);
    nnp__jw_key(w, "flops");
    nnp__jw_uint(w, r->flops);
    nnp__jw_key(w, "mem_bytes");
    nnp__jw_int(w, r->mem_bytes);
    nnp__jw_key(w, "self_mem_bytes");
    nnp__jw_int(w, r->self_mem_bytes);
    nnp__jw_obj_end(w);
}

int nnp_op_table_ex(const char *raw_dir, const nnp_analyse_options_t *o, unsigned flags,
                    char **json)
{
    nnp_model_t m, view;
    nnp_op_row_t *rows = NULL;
    size_t n_rows = 0;
    nnp_jw_t w;
    int rc;
    if (!raw_dir || !json)
        return nnp__fail(NNP_EINVAL, "nnp_op_table: NULL argument");
    *json = NULL;
    if (flags & ~(NNP_OP_TABLE_BY_SHAPES | NNP_OP_TABLE_STEPS | NNP_OP_TABLE_BY_STACK))
        return nnp__fail(NNP_EINVAL, "nnp_op_table_ex: unknown flags 0x%x", flags);
    memset(&view, 0, sizeof(view));
    rc = nnp__model_init(&m);
    if (rc != NNP_OK)
        return nnp__fail(rc, "out of memory");
    rc = nnp__import_raw(raw_dir, &m);
    /* The steps' name, for add_steps (the view shares the model's strings). */
    if (rc == NNP_OK && (flags & NNP_OP_TABLE_STEPS) && m.steps.t.n &&
        !nnp__model_intern_cstr(&m, NNP_TORCH_STEP_KEY))
        rc = nnp__fail(NNP_ENOMEM, "out of memory");
    if (rc == NNP_OK) /* what the rank's analyses read (model_view.c) */
        rc = nnp__model_rank_view(&m, &view);
    if (rc == NNP_OK)
        rc = nnp__op_table(&view, o && o->has_steps, o ? o->step_first : 0, o ? o->step_last : 0,
                           flags, &rows, &n_rows);
    if (rc == NNP_OK)
        rc = nnp__jw_init(&w, -1, false, TABLE_JSON_CAP);
    if (rc == NNP_OK) {
        nnp__jw_arr_begin(&w);
        for (size_t i = 0; i < n_rows; i++)
            write_row(&w, &view, &rows[i], flags);
        nnp__jw_arr_end(&w);
        rc = w.err;
        *json = rc == NNP_OK ? nnp__jw_take(&w, NULL) : NULL;
        nnp__jw_fini(&w);
        if (rc == NNP_OK && !*json)
            rc = nnp__fail(NNP_ENOMEM, "out of memory");
    }
    nnp__free(rows);
    nnp__model_view_fini(&view);
    nnp__model_fini(&m);
    return rc;
}

int nnp_op_table(const char *raw_dir, const nnp_analyse_options_t *o, bool by_shapes, char **json)
{
    return nnp_op_table_ex(raw_dir, o, by_shapes ? NNP_OP_TABLE_BY_SHAPES : 0, json);
}
