/* model_view.c - which processes of a rank train, and the view of the model its analyses
 * read (model.h). A rank's raw data may hold child processes beside the one that trains:
 * follow_fork's DataLoader workers, follow_children's programs that a shell script starts.
 * The workers' ops are not the step's compute and their time runs beside it, so the
 * rank's analyses (step trace, overlap, op statistics, memory, FLOPs...) read a view
 * without them, as torch.profiler counts only the training process; the timeline reads
 * the whole model, where each process has lanes of its own. */
#include <string.h>

#include "model/model.h"
#include "util/util.h"

/* The tables a view filters by thread: bit VIEW_x of view_owned. */
enum { VIEW_OPS, VIEW_HOST, VIEW_MARKERS, VIEW_CALLS, VIEW_COMMS, VIEW_MEM, VIEW_TABLES };

/* Table k of m and its thread column. */
static nnp_table_t *view_table(nnp_model_t *m, int k, const uint32_t **thread)
{
    switch (k) {
    case VIEW_OPS:
        *thread = m->ops.thread;
        return &m->ops.t;
    case VIEW_HOST:
        *thread = m->host.thread;
        return &m->host.t;
    case VIEW_MARKERS:
        *thread = m->markers.thread;
        return &m->markers.t;
    case VIEW_CALLS:
        *thread = m->calls.thread;
        return &m->calls.t;
    case VIEW_COMMS:
        *thread = m->comms.thread;
        return &m->comms.t;
    default:
        *thread = m->mem.thread;
        return &m->mem.t;
    }
}

static nnp_table_t *sample_table(nnp_model_t *m, int k)
{
    switch (k) {
    case NNP_PROC_SYS_CPU:
        return &m->sys_cpu.t;
    case NNP_PROC_TASK_CPU:
        return &m->task_cpu.t;
    case NNP_PROC_RSS:
        return &m->proc_rss.t;
    default:
        return &m->host_mem.t;
    }
}

/* ---- the processes of a group ---- */

static size_t part_of(const nnp_proc_part_t *p, size_t n, uint32_t pid)
{
    for (size_t i = 0; pid && i < n; i++)
        if (p[i].pid == pid)
            return i;
    return SIZE_MAX;
}

/* Whether an ancestor of process i in the group recorded work (at most n hops: a pid
 * reused along the chain cannot loop). */
static bool ancestor_works(const nnp_proc_part_t *p, size_t n, size_t i)
{
    uint32_t pid = p[i].parent_pid;
    for (size_t hops = 0; hops < n; hops++) {
        size_t j = part_of(p, n, pid);
        if (j == SIZE_MAX || j == i)
            return false;
        if (p[j].work)
            return true;
        pid = p[j].parent_pid;
    }
    return false;
}

/* Keeps only rows [from, to) of t (before nnp__model_finish: a process's rows are
 * contiguous); the rows after the new end are zeroed again, as pushes expect. */
static void keep_range(nnp_table_t *t, size_t from, size_t to)
{
    size_t kept = to > from && to <= t->n ? to - from : 0;
    for (unsigned c = 0; c < t->n_cols; c++) {
        char *base = *t->cols[c];
        size_t w = t->widths[c];
        if (!base)
            continue;
        if (kept && from)
            memmove(base, base + from * w, kept * w);
        memset(base + kept * w, 0, (t->n - kept) * w);
    }
    t->n = kept;
}

int nnp__model_group_processes(nnp_model_t *m, const nnp_proc_part_t *p, size_t n)
{
    size_t own = SIZE_MAX, n_workers = 0;
    bool *worker;
    if (n < 2)
        return NNP_OK;
    worker = nnp__calloc(n, sizeof(*worker));
    if (!worker)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        worker[i] = ancestor_works(p, n, i);
        if (own == SIZE_MAX && p[i].work && !worker[i])
            own = i;
    }
    /* Every process with work a worker (parents naming each other: a pid reused): the
     * first of them is the rank's all the same, so that its analyses have data. */
    for (size_t i = 0; own == SIZE_MAX && i < n; i++)
        if (p[i].work)
            own = i;
    if (own == SIZE_MAX)
        own = 0;
    worker[own] = false;
    for (size_t i = 0; i < n; i++)
        n_workers += worker[i];
    if (n_workers) {
        m->info.worker_pids = nnp__calloc(n_workers, sizeof(uint32_t));
        if (!m->info.worker_pids) {
            nnp__free(worker);
            return nnp__fail(NNP_ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < n; i++)
            if (worker[i])
                m->info.worker_pids[m->info.n_worker_pids++] = p[i].pid;
    }
    if (p[own].pid)
        m->info.pid = p[own].pid;
    for (int k = 0; k < NNP_PROC_SAMPLE_TABLES; k++)
        keep_range(sample_table(m, k), p[own].from[k], p[own].to[k]);
    nnp__free(worker);
    return NNP_OK;
}

/* ---- views ---- */

static bool is_worker(const nnp_run_info_t *in, uint32_t pid)
{
    for (size_t i = 0; i < in->n_worker_pids; i++)
        if (in->worker_pids[i] == pid)
            return true;
    return false;
}

/* Table k of view: the rows of m's whose thread is own (own_thread per thread index; an
 * index past the threads table is kept). Its columns become the view's. */
static int filter(nnp_model_t *view, const nnp_model_t *m, int k, const bool *own_thread)
{
    const uint32_t *thread, *unused;
    const nnp_table_t *src = view_table((nnp_model_t *)m, k, &thread);
    nnp_table_t *dst = view_table(view, k, &unused);
    size_t n = 0, n_threads = m->threads.t.n;
    for (size_t i = 0; i < src->n; i++)
        n += thread[i] >= n_threads || own_thread[thread[i]];
    for (unsigned c = 0; c < src->n_cols; c++) {
        /* The same field of the view's table: its columns must never be m's. */
        dst->cols[c] = (void **)((char *)dst + ((const char *)src->cols[c] - (const char *)src));
        *dst->cols[c] = NULL;
        dst->map_bytes[c] = 0;
    }
    dst->n = dst->cap = dst->zeroed = 0;
    view->view_owned |= 1u << k;
    for (unsigned c = 0; c < src->n_cols; c++) {
        const char *from = *src->cols[c];
        size_t w = src->widths[c], j = 0;
        char *to;
        if (!from)
            continue; /* an optional column no row has */
        to = nnp__calloc(n ? n : 1, w);
        if (!to)
            return nnp__fail(NNP_ENOMEM, "out of memory");
        *dst->cols[c] = to;
        for (size_t i = 0; i < src->n; i++)
            if (thread[i] >= n_threads || own_thread[thread[i]])
                memcpy(to + w * j++, from + w * i, w);
    }
    dst->n = dst->cap = dst->zeroed = n;
    return NNP_OK;
}

int nnp__model_rank_view(const nnp_model_t *m, nnp_model_t *view)
{
    bool *own_thread;
    int rc = NNP_OK;
    *view = *m;
    view->view_of = m;
    view->view_owned = 0;
    if (m->info.n_worker_pids == 0 || m->threads.t.n == 0)
        return NNP_OK;
    own_thread = nnp__calloc(m->threads.t.n, sizeof(*own_thread));
    if (!own_thread) {
        memset(view, 0, sizeof(*view));
        return nnp__fail(NNP_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < m->threads.t.n; i++)
        own_thread[i] = !is_worker(&m->info, m->threads.pid[i]);
    for (int k = 0; k < VIEW_TABLES && rc == NNP_OK; k++)
        rc = filter(view, m, k, own_thread);
    nnp__free(own_thread);
    if (rc != NNP_OK)
        nnp__model_view_fini(view);
    return rc;
}

void nnp__model_view_fini(nnp_model_t *view)
{
    for (int k = 0; k < VIEW_TABLES; k++) {
        const uint32_t *thread;
        nnp_table_t *t = view_table(view, k, &thread);
        if (!(view->view_owned & (1u << k)))
            continue;
        for (unsigned c = 0; c < t->n_cols; c++)
            nnp__free(*t->cols[c]);
    }
    memset(view, 0, sizeof(*view));
}
