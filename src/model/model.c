/* model.c - tables of the trace model: generic column growth, a string table, and the
 * final stable sort by time that importers call once (model.h). Each table registers its
 * columns at init; the first column of a time-ordered table is its int64 time key. */
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "util/util.h"

#define INITIAL_ROWS 256
/* Rows from which tables grow by 1.25x instead of 2x. */
#define LARGE_TABLE_ROWS (1u << 20)
#define INITIAL_STRS     256
/* Rows zero-filled at a time ahead of pushes: one memset per column per this many rows,
 * where a memset per column per row was a tenth of importing, and only rows about to be
 * used are touched (growing capacity ahead costs no resident memory). */
#define ZERO_BATCH_ROWS 4096
/* Columns from this size on are anonymous mappings of their own (col_resize): the huge
 * page size, from where a column is advised MADV_HUGEPAGE too. */
#define MAP_MIN_BYTES ((size_t)2 << 20)
#define FNV_OFFSET    2166136261u
#define FNV_PRIME     16777619u

static void col(nnp_table_t *t, void *colp, size_t width)
{
    NNP_ASSERT(t->n_cols < NNP_TABLE_MAX_COLS);
    t->cols[t->n_cols] = (void **)colp;
    t->widths[t->n_cols] = width;
    t->n_cols++;
}

#define COL(tab, field) col(&(tab).t, &(tab).field, sizeof(*(tab).field))

/* Frees column i of t, from the heap or its own mapping. */
static void col_free(nnp_table_t *t, unsigned i)
{
    if (t->map_bytes[i])
        nnp__zmap_free(*t->cols[i], t->map_bytes[i]);
    else
        nnp__free(*t->cols[i]);
    *t->cols[i] = NULL;
    t->map_bytes[i] = 0;
}

static void table_fini(nnp_table_t *t)
{
    for (unsigned i = 0; i < t->n_cols; i++)
        col_free(t, i);
    t->n = t->cap = t->zeroed = 0;
}

/* Resizes column i of t to rows rows (t->n of them in use). Below MAP_MIN_BYTES on the
 * heap; from there in a mapping of its own, grown by mremap, whose new pages the kernel
 * zeroes: new rows need no memset (it wrote each byte a second time after the kernel's
 * clear_page, a third of the import's samples). Returns 0, or -1 with the column as it was. */
static int col_resize(nnp_table_t *t, unsigned i, size_t rows)
{
    size_t bytes = rows * t->widths[i], len;
    void *p;
    if (!t->map_bytes[i] && bytes < MAP_MIN_BYTES) {
        if (!(p = nnp__realloc(*t->cols[i], bytes)))
            return -1;
        *t->cols[i] = p;
        return 0;
    }
    len = nnp__zmap_bytes(bytes);
    if (len == t->map_bytes[i])
        return 0;
    if (!(p = nnp__zmap_resize(t->map_bytes[i] ? *t->cols[i] : NULL, t->map_bytes[i], len)))
        return -1;
    if (!t->map_bytes[i]) { /* off the heap: the rows in use move, the rest read zero */
        if (*t->cols[i])
            memcpy(p, *t->cols[i], t->n * t->widths[i]);
        nnp__free(*t->cols[i]);
    }
    *t->cols[i] = p;
    t->map_bytes[i] = len;
    return 0;
}

size_t nnp__table_push_grow(nnp_table_t *t)
{
    if (t->n == t->cap) {
        /* Doubling while small; 1.25x once large, where the slack of doubling would be
         * most of the peak memory (big blocks are mremap'ed by glibc, so growing in
         * smaller steps costs no copies). */
        size_t ncap = !t->cap                     ? INITIAL_ROWS
                      : t->cap < LARGE_TABLE_ROWS ? t->cap * 2
                                                  : t->cap + t->cap / 4;
        if (ncap > NNP_MODEL_MAX_ROWS)
            ncap = NNP_MODEL_MAX_ROWS;
        if (t->n >= ncap)
            return SIZE_MAX;
        for (unsigned i = 0; i < t->n_cols; i++) {
            if (col_resize(t, i, ncap) != 0)
                return SIZE_MAX; /* columns grown so far keep their larger size: harmless */
            nnp__hint_huge_pages(*t->cols[i], ncap * t->widths[i]);
        }
        t->cap = ncap;
    }
    if (t->n >= t->zeroed) {
        size_t end = t->n + ZERO_BATCH_ROWS < t->cap ? t->n + ZERO_BATCH_ROWS : t->cap;
        for (unsigned i = 0; i < t->n_cols; i++) {
            char *at = (char *)*t->cols[i] + t->n * t->widths[i];
            /* The first touch of new rows: faulting their pages in one call halved the
             * import's system time (a fault per 4 KiB page before). A mapped column's
             * rows past n read zero already. */
            nnp__prefault_write(at, (end - t->n) * t->widths[i]);
            if (!t->map_bytes[i])
                memset(at, 0, (end - t->n) * t->widths[i]);
        }
        t->zeroed = end;
    }
    return t->n++;
}

/* Every table of the model with whether it is sorted by its first (time) column. */
typedef struct table_ref {
    nnp_table_t *t;
    bool by_time;
} table_ref_t;

static size_t tables(nnp_model_t *m, table_ref_t *out)
{
    size_t n = 0;
    out[n++] = (table_ref_t){&m->threads.t, false};
    out[n++] = (table_ref_t){&m->ops.t, true};
    out[n++] = (table_ref_t){&m->kernels.t, true};
    out[n++] = (table_ref_t){&m->calls.t, true};
    out[n++] = (table_ref_t){&m->host.t, true};
    out[n++] = (table_ref_t){&m->steps.t, false};
    out[n++] = (table_ref_t){&m->epochs.t, false};
    out[n++] = (table_ref_t){&m->fp.t, false};
    out[n++] = (table_ref_t){&m->bp.t, false};
    out[n++] = (table_ref_t){&m->comms.t, true};
    out[n++] = (table_ref_t){&m->comm_groups.t, false};
    out[n++] = (table_ref_t){&m->mem.t, true};
    out[n++] = (table_ref_t){&m->pipe_ops.t, false};
    out[n++] = (table_ref_t){&m->queues.t, true};
    out[n++] = (table_ref_t){&m->counters.t, true};
    out[n++] = (table_ref_t){&m->host_mem.t, true};
    out[n++] = (table_ref_t){&m->markers.t, true};
    out[n++] = (table_ref_t){&m->sys_cpu.t, true};
    out[n++] = (table_ref_t){&m->task_cpu.t, true};
    out[n++] = (table_ref_t){&m->proc_rss.t, true};
    out[n++] = (table_ref_t){&m->op_totals.t, false};
    out[n++] = (table_ref_t){&m->comm_costs.t, false};
    out[n++] = (table_ref_t){&m->comm_links.t, false};
    return n;
}
#define MAX_TABLES 23

int nnp__model_init(nnp_model_t *m)
{
    memset(m, 0, sizeof(*m));
    COL(m->threads, tid);
    COL(m->threads, name);
    COL(m->threads, pid);
    COL(m->threads, parent_pid);

    COL(m->ops, start_ns);
    COL(m->ops, end_ns);
    COL(m->ops, name);
    COL(m->ops, type);
    COL(m->ops, graph_id);
    COL(m->ops, stream_id);
    COL(m->ops, thread);
    COL(m->ops, shapes);
    COL(m->ops, dtypes);
    COL(m->ops, corr);

    COL(m->kernels, start_ns);
    COL(m->kernels, end_ns);
    COL(m->kernels, name);
    COL(m->kernels, type);
    COL(m->kernels, device_id);
    COL(m->kernels, stream_id);
    COL(m->kernels, corr);
    COL(m->kernels, launch);
    COL(m->kernels, op_type);

    COL(m->op_totals, name);
    COL(m->op_totals, type);
    COL(m->op_totals, core);
    COL(m->op_totals, count);
    COL(m->op_totals, total_ns);
    COL(m->op_totals, percent);

    COL(m->comm_costs, step);
    COL(m->comm_costs, op);
    COL(m->comm_costs, cost_ms);
    COL(m->comm_costs, wait_ms);

    COL(m->comm_links, step);
    COL(m->comm_links, op);
    COL(m->comm_links, link);
    COL(m->comm_links, transport);
    COL(m->comm_links, time_ms);
    COL(m->comm_links, size_kb);
    COL(m->comm_links, bandwidth);
    COL(m->comm_links, wait_ms);

    COL(m->calls, start_ns);
    COL(m->calls, end_ns);
    COL(m->calls, name);
    COL(m->calls, kind);
    COL(m->calls, domain);
    COL(m->calls, stream_id);
    COL(m->calls, thread);
    COL(m->calls, status);
    COL(m->calls, launch);
    COL(m->calls, corr);

    COL(m->host, ts_ns);
    COL(m->host, kind);
    COL(m->host, level);
    COL(m->host, module);
    COL(m->host, event);
    COL(m->host, stage);
    COL(m->host, custom_info);
    COL(m->host, thread);
    COL(m->host, memory_bytes);
    COL(m->host, seq);

    COL(m->steps, id);
    COL(m->steps, graph_id);
    COL(m->steps, start_ns);
    COL(m->steps, end_ns);
    COL(m->steps, thread);
    COL(m->epochs, id);
    COL(m->epochs, graph_id);
    COL(m->epochs, start_ns);
    COL(m->epochs, end_ns);
    COL(m->epochs, thread);

    COL(m->fp, step_id);
    COL(m->fp, ts_ns);
    COL(m->bp, step_id);
    COL(m->bp, ts_ns);

    COL(m->comms, start_ns);
    COL(m->comms, end_ns);
    COL(m->comms, name);
    COL(m->comms, kind);
    COL(m->comms, group);
    COL(m->comms, stream_id);
    COL(m->comms, thread);
    COL(m->comms, peer);
    COL(m->comms, bytes);
    COL(m->comms, count);
    COL(m->comms, datatype);
    COL(m->comms, tag);
    COL(m->comms, wait_ns);
    COL(m->comms, has);
    COL(m->comms, launch);

    COL(m->comm_groups, name);
    COL(m->comm_groups, members);
    COL(m->comm_groups, size);
    COL(m->comm_groups, my_index);

    COL(m->mem, ts_ns);
    COL(m->mem, is_alloc);
    COL(m->mem, address);
    COL(m->mem, bytes);
    COL(m->mem, name);
    COL(m->mem, owner_op);
    COL(m->mem, device_id);
    COL(m->mem, thread);

    COL(m->pipe_ops, op_id);
    COL(m->pipe_ops, parent_id);
    COL(m->pipe_ops, op_type);
    COL(m->pipe_ops, num_workers);

    COL(m->queues, ts_ns);
    COL(m->queues, op_id);
    COL(m->queues, size);
    COL(m->queues, capacity);

    COL(m->counters, ts_ns);
    COL(m->counters, name);
    COL(m->counters, value);
    COL(m->host_mem, ts_ns);
    COL(m->host_mem, name);
    COL(m->host_mem, value);
    COL(m->proc_rss, ts_ns);
    COL(m->proc_rss, name);
    COL(m->proc_rss, value);

    COL(m->markers, start_ns);
    COL(m->markers, end_ns);
    COL(m->markers, message);
    COL(m->markers, thread);

    COL(m->sys_cpu, ts_ns);
    COL(m->sys_cpu, user);
    COL(m->sys_cpu, nice);
    COL(m->sys_cpu, sys);
    COL(m->sys_cpu, idle);
    COL(m->sys_cpu, iowait);
    COL(m->sys_cpu, irq);
    COL(m->sys_cpu, steal);
    COL(m->sys_cpu, ctxt);
    COL(m->sys_cpu, running);
    COL(m->sys_cpu, blocked);

    COL(m->task_cpu, ts_ns);
    COL(m->task_cpu, tid);
    COL(m->task_cpu, name);
    COL(m->task_cpu, utime);
    COL(m->task_cpu, stime);

    m->info.rank_size = 1;
    m->info.clock_ticks_per_sec = 100;
    m->info.ncpu = 1;
    /* String id 0 is "": reserve the slot. */
    if (nnp__model_intern(m, "", 0) != 0 || m->n_strs != 1)
        return NNP_ENOMEM;
    return NNP_OK;
}

int nnp__model_ops_want_flops(nnp_model_t *m)
{
    nnp_table_t *t = &m->ops.t;
    if (m->ops.flops_matrix)
        return NNP_OK;
    /* Allocate at the current capacity and zero the existing rows, then register the
     * columns so they grow with the table. */
    if (t->cap) {
        m->ops.flops_matrix = nnp__calloc(t->cap, sizeof(uint64_t));
        m->ops.flops_vector = nnp__calloc(t->cap, sizeof(uint64_t));
        if (!m->ops.flops_matrix || !m->ops.flops_vector) {
            nnp__free(m->ops.flops_matrix);
            nnp__free(m->ops.flops_vector);
            m->ops.flops_matrix = m->ops.flops_vector = NULL;
            return NNP_ENOMEM;
        }
    }
    COL(m->ops, flops_matrix);
    COL(m->ops, flops_vector);
    return NNP_OK;
}

int nnp__model_kernels_want_detail(nnp_model_t *m)
{
    nnp_table_t *t = &m->kernels.t;
    if (m->kernels.detail)
        return NNP_OK;
    /* As for FLOPs: allocated at the current capacity, existing rows zeroed. */
    if (t->cap) {
        m->kernels.detail = nnp__calloc(t->cap, sizeof(nnp_kernel_detail_t));
        if (!m->kernels.detail)
            return NNP_ENOMEM;
    }
    COL(m->kernels, detail);
    return NNP_OK;
}

/* Adds a zeroed column of width-byte values to t at its current capacity; *colp (the
 * column's field, NULL until now) then grows with the table. */
static int want_zeroed(nnp_table_t *t, void *colp, size_t width)
{
    void **p = (void **)colp;
    if (*p)
        return NNP_OK;
    /* At least one slot, so that a non-NULL pointer marks the column as registered. */
    if (!(*p = nnp__calloc(t->cap ? t->cap : 1, width)))
        return NNP_ENOMEM;
    col(t, colp, width);
    return NNP_OK;
}

int nnp__ops_cmp_thread_start(const void *pa, const void *pb, void *ops)
{
    const nnp_ops_t *o = ops;
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    if (o->thread[a] != o->thread[b])
        return o->thread[a] < o->thread[b] ? -1 : 1;
    if (o->start_ns[a] != o->start_ns[b])
        return o->start_ns[a] < o->start_ns[b] ? -1 : 1;
    if (o->end_ns[a] != o->end_ns[b])
        return o->end_ns[a] > o->end_ns[b] ? -1 : 1;
    return a < b ? -1 : a > b;
}

int nnp__model_ops_want_stack(nnp_model_t *m)
{
    return want_zeroed(&m->ops.t, &m->ops.stack, sizeof(*m->ops.stack));
}

int nnp__model_want_end_ps(nnp_model_t *m)
{
    int rc = want_zeroed(&m->kernels.t, &m->kernels.end_ps, sizeof(uint16_t));
    return rc == NNP_OK ? want_zeroed(&m->comms.t, &m->comms.end_ps, sizeof(uint16_t)) : rc;
}

int nnp__model_ops_want_seq(nnp_model_t *m)
{
    nnp_table_t *t = &m->ops.t;
    if (m->ops.seq_nr)
        return NNP_OK;
    /* As the FLOPs columns: allocated at the current capacity, zero for existing rows. */
    if (t->cap) {
        m->ops.seq_nr = nnp__calloc(t->cap, sizeof(int64_t));
        m->ops.seq_thread = nnp__calloc(t->cap, sizeof(uint32_t));
        m->ops.seq_kind = nnp__calloc(t->cap, sizeof(uint8_t));
        if (!m->ops.seq_nr || !m->ops.seq_thread || !m->ops.seq_kind) {
            nnp__free(m->ops.seq_nr);
            nnp__free(m->ops.seq_thread);
            nnp__free(m->ops.seq_kind);
            m->ops.seq_nr = NULL;
            m->ops.seq_thread = NULL;
            m->ops.seq_kind = NULL;
            return NNP_ENOMEM;
        }
    }
    COL(m->ops, seq_nr);
    COL(m->ops, seq_thread);
    COL(m->ops, seq_kind);
    return NNP_OK;
}

void nnp__model_fini(nnp_model_t *m)
{
    table_ref_t refs[MAX_TABLES];
    size_t n = tables(m, refs);
    for (size_t i = 0; i < n; i++)
        table_fini(refs[i].t);
    for (size_t i = 0; i < m->n_strs; i++)
        nnp__free(m->strs[i]);
    nnp__free(m->strs);
    nnp__free(m->str_len);
    nnp__free(m->str_index);
    nnp__free(m->info.host);
    nnp__free(m->info.options_json);
    nnp__free(m->info.fp_point);
    nnp__free(m->info.bp_point);
    nnp__free(m->info.state);
    nnp__free(m->info.windows);
    nnp__free(m->info.source);
    nnp__free(m->info.source_format);
    nnp__free(m->info.device_name);
    nnp__free(m->info.worker_pids);
    memset(m, 0, sizeof(*m));
}

/* ---- strings ---- */

static uint32_t hash_bytes(const char *s, size_t n)
{
    uint32_t h = FNV_OFFSET;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * FNV_PRIME;
    return h;
}

static int rehash(nnp_model_t *m, size_t ncap)
{
    uint32_t *idx = nnp__calloc(ncap, sizeof(uint32_t));
    if (!idx)
        return -1;
    for (size_t id = 1; id < m->n_strs; id++) {
        size_t i = hash_bytes(m->strs[id], m->str_len[id]) & (ncap - 1);
        while (idx[i])
            i = (i + 1) & (ncap - 1);
        idx[i] = (uint32_t)id;
    }
    nnp__free(m->str_index);
    m->str_index = idx;
    m->index_cap = ncap;
    return 0;
}

static uint32_t lookup(const nnp_model_t *m, const char *s, size_t len, size_t *slot)
{
    size_t i;
    if (!m->index_cap)
        return 0;
    for (i = hash_bytes(s, len) & (m->index_cap - 1); m->str_index[i];
         i = (i + 1) & (m->index_cap - 1)) {
        uint32_t id = m->str_index[i];
        if (m->str_len[id] == len && memcmp(m->strs[id], s, len) == 0)
            return id;
    }
    if (slot)
        *slot = i;
    return 0;
}

uint32_t nnp__model_intern(nnp_model_t *m, const char *s, size_t len)
{
    size_t slot = 0;
    uint32_t id;
    char *copy;

    if (len == 0 && m->n_strs > 0)
        return 0;
    if (m->n_strs > 0) {
        id = lookup(m, s, len, &slot);
        if (id)
            return id;
    }
    if ((m->n_strs + 1) * 2 > m->index_cap) {
        if (rehash(m, m->index_cap ? m->index_cap * 2 : INITIAL_STRS * 2) != 0)
            return 0;
        if (m->n_strs > 0)
            (void)lookup(m, s, len, &slot);
        else
            slot = hash_bytes(s, len) & (m->index_cap - 1);
    }
    if (m->n_strs == m->strs_cap) {
        size_t ncap = m->strs_cap ? m->strs_cap * 2 : INITIAL_STRS;
        char **ns = nnp__realloc(m->strs, ncap * sizeof(char *));
        uint32_t *nl;
        if (!ns)
            return 0;
        m->strs = ns;
        nl = nnp__realloc(m->str_len, ncap * sizeof(uint32_t));
        if (!nl)
            return 0;
        m->str_len = nl;
        m->strs_cap = ncap;
    }
    copy = nnp__malloc(len + 1);
    if (!copy)
        return 0;
    memcpy(copy, s, len);
    copy[len] = '\0';
    id = (uint32_t)m->n_strs++;
    m->strs[id] = copy;
    m->str_len[id] = (uint32_t)len;
    if (id != 0)
        m->str_index[slot] = id;
    return id;
}

uint32_t nnp__model_intern_cstr(nnp_model_t *m, const char *s)
{
    return s ? nnp__model_intern(m, s, strlen(s)) : 0;
}

const char *nnp__model_str(const nnp_model_t *m, uint32_t id)
{
    if (id >= m->n_strs)
        return "";
    return m->strs[id];
}

uint32_t nnp__model_find(const nnp_model_t *m, const char *s)
{
    return s && *s ? lookup(m, s, strlen(s), NULL) : 0;
}

size_t nnp__model_thread(nnp_model_t *m, uint64_t tid, uint32_t pid)
{
    size_t i;
    for (i = 0; i < m->threads.t.n; i++) {
        if (m->threads.tid[i] == tid)
            return i;
    }
    i = nnp__table_push(&m->threads.t);
    if (i == SIZE_MAX)
        return SIZE_MAX;
    m->threads.tid[i] = tid;
    m->threads.pid[i] = pid;
    return i;
}

/* ---- sorting ---- */

static int cmp_index(const void *a, const void *b, void *key)
{
    const int64_t *sort_key = key;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (sort_key[x] != sort_key[y])
        return sort_key[x] < sort_key[y] ? -1 : 1;
    return x < y ? -1 : x > y; /* stable: ties keep their recorded order */
}

static bool is_sorted(const int64_t *k, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        if (k[i] < k[i - 1])
            return false;
    }
    return true;
}

/* Permutes every column of t by perm (perm[i] = old index of new row i). */
static int apply_perm(nnp_table_t *t, const uint32_t *perm)
{
    for (unsigned c = 0; c < t->n_cols; c++) {
        size_t w = t->widths[c];
        char *src = *t->cols[c], *dst;
        if (!src)
            continue;
        dst = nnp__malloc(t->cap * w);
        if (!dst)
            return NNP_ENOMEM;
        nnp__hint_huge_pages(dst, t->cap * w);
        for (size_t i = 0; i < t->n; i++)
            memcpy(dst + i * w, src + (size_t)perm[i] * w, w);
        memset(dst + t->n * w, 0, (t->cap - t->n) * w); /* rows past n stay zero */
        col_free(t, c);
        *t->cols[c] = dst;
    }
    return NNP_OK;
}

/* Gives back the slack of capacity doubling: the model is read-only from here on. */
static void shrink_to_fit(nnp_table_t *t)
{
    if (t->n == t->cap || t->n == 0)
        return;
    for (unsigned c = 0; c < t->n_cols; c++) {
        if (*t->cols[c] && col_resize(t, c, t->n) != 0)
            return; /* keep the larger block: still valid, only less compact */
    }
    t->cap = t->zeroed = t->n;
}

int nnp__model_finish(nnp_model_t *m)
{
    table_ref_t refs[MAX_TABLES];
    size_t n = tables(m, refs);
    for (size_t k = 0; k < n; k++)
        shrink_to_fit(refs[k].t);
    for (size_t k = 0; k < n; k++) {
        nnp_table_t *t = refs[k].t;
        uint32_t *perm;
        int rc;
        if (!refs[k].by_time || t->n < 2 || is_sorted(*(int64_t **)t->cols[0], t->n))
            continue;
        perm = nnp__malloc(t->n * sizeof(uint32_t));
        if (!perm)
            return NNP_ENOMEM;
        for (size_t i = 0; i < t->n; i++)
            perm[i] = (uint32_t)i;
        qsort_r(perm, t->n, sizeof(uint32_t), cmp_index, *(int64_t **)t->cols[0]);
        rc = apply_perm(t, perm);
        nnp__free(perm);
        if (rc != NNP_OK)
            return rc;
    }
    return NNP_OK;
}

size_t nnp__model_rows(const nnp_model_t *m)
{
    table_ref_t refs[MAX_TABLES];
    size_t n = tables((nnp_model_t *)m, refs), rows = 0;
    for (size_t k = 0; k < n; k++)
        rows += refs[k].t->n;
    return rows;
}

size_t nnp__model_bytes(const nnp_model_t *m)
{
    table_ref_t refs[MAX_TABLES];
    size_t n = tables((nnp_model_t *)m, refs), bytes = 0;
    for (size_t k = 0; k < n; k++) {
        const nnp_table_t *t = refs[k].t;
        for (unsigned c = 0; c < t->n_cols; c++)
            bytes += t->cap * t->widths[c];
    }
    for (size_t i = 0; i < m->n_strs; i++)
        bytes += m->str_len[i] + 1 + sizeof(char *) + sizeof(uint32_t);
    bytes += m->index_cap * sizeof(uint32_t);
    return bytes;
}
