/* cl_rank.c - one rank of the cluster read through the trace model: our raw directories
 * (with the MPI library's communication records) and every importer's data (CANN, ...).
 * The rank is imported, the single-rank step trace and overlap run on it (src/analyse/),
 * and what the cluster needs is kept: per step the msprof-analyze and MindInsight phases,
 * per communication op its times and bytes (records), the point-to-point links, the
 * advisor's findings, and on request a fragment of the merged timeline. The model is freed
 * before the next rank: memory holds one rank at a time per thread. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster/cluster.h"
#include "read/importers.h"
#include "read/raw_import.h"

/* msprof's large-packet threshold of RDMA, 0.5 MB (formats.md 2.7), used for MPI traffic
 * too: MPI libraries switch from eager to bandwidth-bound rendezvous transfers well below
 * it, so a message above it is "large" for either transport. */
#define LARGE_PACKET_BYTES 500000u
/* Transport types of MPI / API communication: same host (shared memory) or not. */
#define TYPE_SHM "SHM"
#define TYPE_NET "NET"
/* The group of communication recorded without one. */
#define DEFAULT_GROUP "default"
/* Advisor findings kept per rank (the advisor has 13 rules). */
#define ADV_MAX 32
/* First size of the op-index hash (power of two). */
#define INDEX_MIN 64

/* ---- where ranks run ---- */

/* The host of rank r from the inputs (sorted by rank), NULL when unknown. */
static const char *host_of(const nnp_cl_inputs_t *in, int r)
{
    int lo = 0, hi = in->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (in->v[mid].rank < r)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < in->n && in->v[lo].rank == r && in->v[lo].host[0] ? in->v[lo].host : NULL;
}

/* True when every input runs on one host (then collectives never leave it). */
static bool one_host(const nnp_cl_inputs_t *in)
{
    for (int i = 1; i < in->n; i++)
        if (strcmp(in->v[i].host, in->v[0].host) != 0)
            return false;
    return in->n > 0 && in->v[0].host[0];
}

/* True when every member of a "0-3,8" list runs on host. */
static bool members_on_host(const nnp_cl_inputs_t *in, const char *members, const char *host)
{
    const char *p = members;
    if (!*p)
        return false;
    while (*p) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p)
            return false;
        p = end;
        if (*p == '-') {
            b = strtol(p + 1, &end, 10);
            if (end == p + 1)
                return false;
            p = end;
        }
        for (long r = a; r <= b; r++) {
            const char *h = host_of(in, (int)r);
            if (!h || strcmp(h, host) != 0)
                return false;
        }
        if (*p == ',')
            p++;
        else if (*p)
            return false;
    }
    return true;
}

/* The transport of each collective group of a rank, decided once: a group of 1,024 members
 * would otherwise be walked for every op of every step. */
#define GROUP_CACHE 64
typedef struct type_cache {
    uint32_t group[GROUP_CACHE];
    const char *type[GROUP_CACHE];
    int n;
    int one_host; /* -1 unknown, else whether every input runs on one host */
} type_cache_t;

/* SHM or NET for an op of this rank: its peer's host, else its group's members'. */
static const char *transport(const nnp_cl_sink_t *k, const nnp_model_t *m, size_t i,
                             type_cache_t *tc)
{
    const char *me = host_of(k->in, k->sum->rank), *type = NULL;
    int32_t peer = m->comms.peer[i];
    if (!me)
        return TYPE_NET;
    if (peer >= 0) {
        const char *h = host_of(k->in, peer);
        return h && strcmp(h, me) == 0 ? TYPE_SHM : TYPE_NET;
    }
    for (int c = 0; c < tc->n; c++)
        if (tc->group[c] == m->comms.group[i])
            return tc->type[c];
    for (size_t g = 0; g < m->comm_groups.t.n && !type; g++) {
        if (m->comm_groups.name[g] == m->comms.group[i])
            type = members_on_host(k->in, nnp__model_str(m, m->comm_groups.members[g]), me)
                       ? TYPE_SHM
                       : TYPE_NET;
    }
    if (!type) {
        if (tc->one_host < 0)
            tc->one_host = one_host(k->in);
        type = tc->one_host ? TYPE_SHM : TYPE_NET;
    }
    if (tc->n < GROUP_CACHE) {
        tc->group[tc->n] = m->comms.group[i];
        tc->type[tc->n++] = type;
    }
    return type;
}

/* ---- per-step values ---- */

/* Length of the part of sorted, disjoint intervals inside [lo, hi). */
static int64_t measure(const nnp_interval_t *v, size_t n, int64_t lo, int64_t hi)
{
    size_t a = 0, b = n;
    int64_t sum = 0;
    while (a < b) { /* first interval ending after lo */
        size_t mid = (a + b) / 2;
        if (v[mid].end_ns <= lo)
            a = mid + 1;
        else
            b = mid;
    }
    for (size_t i = a; i < n && v[i].start_ns < hi; i++) {
        int64_t s = v[i].start_ns > lo ? v[i].start_ns : lo,
                e = v[i].end_ns < hi ? v[i].end_ns : hi;
        if (e > s)
            sum += e - s;
    }
    return sum;
}

/* The first busy instant in [lo, hi) of sorted, disjoint intervals, hi when none. */
static int64_t first_busy(const nnp_interval_list_t *l, int64_t lo, int64_t hi)
{
    for (size_t i = 0; i < l->n; i++) {
        if (l->v[i].end_ns <= lo)
            continue;
        if (l->v[i].start_ns >= hi)
            break;
        return l->v[i].start_ns > lo ? l->v[i].start_ns : lo;
    }
    return hi;
}

static int cmp_iv(const void *a, const void *b)
{
    const nnp_interval_t *x = a, *y = b;
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

/* Receive ops merged: msprof-analyze's Bubble (the time a stage waits for its input). */
static int receive_intervals(const nnp_model_t *m, nnp_interval_t **out, size_t *n_out)
{
    size_t n = 0, k = 0;
    nnp_interval_t *v;
    for (size_t i = 0; i < m->comms.t.n; i++)
        n += m->comms.kind[i] == NNP_COMM_RECV && m->comms.end_ns[i] > m->comms.start_ns[i];
    *out = NULL;
    *n_out = 0;
    if (n == 0)
        return NNP_OK;
    v = nnp__malloc(n * sizeof(*v));
    if (!v)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    for (size_t i = 0; i < m->comms.t.n; i++)
        if (m->comms.kind[i] == NNP_COMM_RECV && m->comms.end_ns[i] > m->comms.start_ns[i])
            v[k++] = (nnp_interval_t){m->comms.start_ns[i], m->comms.end_ns[i]};
    qsort(v, k, sizeof(*v), cmp_iv);
    n = 0;
    for (size_t i = 0; i < k; i++) {
        if (n > 0 && v[i].start_ns <= v[n - 1].end_ns) {
            if (v[i].end_ns > v[n - 1].end_ns)
                v[n - 1].end_ns = v[i].end_ns;
        } else {
            v[n++] = v[i];
        }
    }
    *out = v;
    *n_out = n;
    return NNP_OK;
}

/* One step row (or, with st_row NULL, the whole run as one row without a step). */
static void step_row(nnp_cl_sink_t *k, const nnp_overlap_t *ov, const nnp_overlap_row_t *o,
                     const nnp_step_row_t *st_row, int64_t lo, int64_t hi,
                     const nnp_interval_t *recv, size_t n_recv)
{
    nnp_cl_step_rec_t r;
    int64_t busy;
    memset(&r, 0, sizeof(r));
    r.rank = k->sum->rank;
    r.step_id = st_row ? st_row->step_id : NNP_CL_NO_STEP;
    r.v[NNP_CL_COMPUTING] = o->computing_ns;
    r.v[NNP_CL_COMM_NOT_OVERLAPPED] = o->comm_not_overlapped_ns;
    r.v[NNP_CL_OVERLAPPED] = o->overlapped_ns;
    r.v[NNP_CL_COMMUNICATION] = o->communication_ns;
    r.v[NNP_CL_FREE] = o->free_ns;
    /* msprof-analyze's adapter: Bubble = receive time, Stage = Free + Computing +
     * Communication(Not Overlapped) - Bubble, and the not-overlapped part without it. */
    r.v[NNP_CL_BUBBLE] = measure(recv, n_recv, lo, hi);
    r.v[NNP_CL_STAGE] =
        o->free_ns + o->computing_ns + o->comm_not_overlapped_ns - r.v[NNP_CL_BUBBLE];
    r.v[NNP_CL_COMM_NO_EXCL_RECV] = o->comm_not_overlapped_ns - r.v[NNP_CL_BUBBLE];
    /* Preparing: from the step's start to its first compute or communication (torch_npu). */
    busy = first_busy(&ov->computing, lo, hi);
    {
        int64_t c = first_busy(&ov->communication, lo, hi);
        busy = c < busy ? c : busy;
    }
    r.v[NNP_CL_PREPARING] = busy - lo;
    r.known = NNP_CL_MPA_MASK;
    if (st_row) {
        r.v[NNP_CL_TOTAL] = st_row->total_ns;
        r.known |= NNP_CL_BIT(NNP_CL_TOTAL);
        if (st_row->fp_ns != -1) {
            r.v[NNP_CL_ITER_INTERVAL] = st_row->iteration_interval_ns;
            r.known |= NNP_CL_BIT(NNP_CL_ITER_INTERVAL);
        }
        if (st_row->fp_ns != -1 && st_row->bp_ns != -1) {
            r.v[NNP_CL_FP_AND_BP] = st_row->fp_and_bp_ns;
            r.known |= NNP_CL_BIT(NNP_CL_FP_AND_BP);
        }
        if (st_row->bp_ns != -1) {
            r.v[NNP_CL_TAIL] = st_row->tail_ns;
            r.known |= NNP_CL_BIT(NNP_CL_TAIL);
        }
    }
    nnp__cl_add_step(k, &r);
}

static int steps(nnp_cl_sink_t *k, const nnp_model_t *m, const nnp_step_trace_t *st,
                 const nnp_overlap_t *ov)
{
    nnp_interval_t *recv;
    size_t n_recv;
    int rc = receive_intervals(m, &recv, &n_recv);
    if (rc != NNP_OK)
        return rc;
    if (st->n > 0) {
        for (size_t i = 0; i < st->n && i < ov->n; i++)
            step_row(k, ov, &ov->rows[i], &st->rows[i], st->rows[i].start_point_ns,
                     st->rows[i].end_ns, recv, n_recv);
    } else if (ov->n > 0 && (ov->computing.n > 0 || ov->communication.n > 0)) {
        /* No steps: the analysed span is one row, under msprof-analyze's empty Step. */
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        if (ov->computing.n) {
            lo = ov->computing.v[0].start_ns;
            hi = ov->computing.v[ov->computing.n - 1].end_ns;
        }
        if (ov->communication.n) {
            lo = ov->communication.v[0].start_ns < lo ? ov->communication.v[0].start_ns : lo;
            if (ov->communication.v[ov->communication.n - 1].end_ns > hi)
                hi = ov->communication.v[ov->communication.n - 1].end_ns;
        }
        step_row(k, ov, &ov->rows[ov->n - 1], NULL, lo, hi, recv, n_recv);
    }
    nnp__free(recv);
    return NNP_OK;
}

/* ---- communication ---- */

/* Per (step, group, name) counters: the op index that tells an op's k-th occurrence in a
 * step, the same on every rank (collectives of a group run in one order everywhere). */
typedef struct op_count {
    uint64_t step;
    uint32_t group, name, count;
    bool used;
} op_count_t;

typedef struct op_index {
    op_count_t *v;
    size_t cap;
} op_index_t;

static uint32_t next_index(op_index_t *ix, uint64_t step, uint32_t group, uint32_t name)
{
    uint64_t h = (step * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)group << 32) ^ name;
    size_t k = (size_t)(h ^ (h >> 29)) & (ix->cap - 1);
    while (ix->v[k].used) {
        op_count_t *c = &ix->v[k];
        if (c->step == step && c->group == group && c->name == name)
            return c->count++;
        k = (k + 1) & (ix->cap - 1);
    }
    ix->v[k] = (op_count_t){.step = step, .group = group, .name = name, .count = 1, .used = true};
    return 0;
}

static int comms(nnp_cl_sink_t *k, const nnp_model_t *m, const nnp_step_trace_t *st)
{
    nnp_step_spans_t spans;
    op_index_t ix = {0};
    type_cache_t tc = {.n = 0, .one_host = -1};
    bool typed = strcmp(k->sum->format, "nnprof-raw") == 0;
    int64_t offset = k->sum->flags & NNP_CL_RANK_CLOCK ? k->sum->clock_offset_ns : 0;
    uint32_t dflt = nnp__cl_intern_cstr(k->strs, DEFAULT_GROUP);
    int rc = nnp__step_spans_init(st, &spans);
    if (rc != NNP_OK)
        return rc;
    ix.cap = INDEX_MIN;
    while (ix.cap < m->comms.t.n * 2)
        ix.cap *= 2;
    ix.v = nnp__calloc(ix.cap, sizeof(*ix.v));
    if (!ix.v) {
        nnp__step_spans_fini(&spans);
        return nnp__fail(NNP_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < m->comms.t.n && rc == NNP_OK; i++) {
        nnp_cl_comm_rec_t r;
        nnp_cl_bw_t bw;
        nnp_cl_pkt_t dist;
        const char *name = nnp__model_str(m, m->comms.name[i]);
        const char *group = nnp__model_str(m, m->comms.group[i]);
        int64_t s = m->comms.start_ns[i], e = m->comms.end_ns[i];
        uint32_t kind = m->comms.kind[i];
        size_t si = SIZE_MAX;
        bool p2p = kind == NNP_COMM_SEND || kind == NNP_COMM_RECV || nnp__cl_is_p2p_name(name);
        if (e == NNP_OPEN_END || e < s)
            continue; /* an op whose end was never recorded has no duration */
        if (st->n > 0) {
            si = nnp__step_spans_find(&spans, s);
            if (si == SIZE_MAX)
                continue; /* outside every analysed step: no step to file it under */
        }
        memset(&r, 0, sizeof(r));
        r.rank = k->sum->rank;
        r.step_id = si == SIZE_MAX ? NNP_CL_NO_STEP : st->rows[si].step_id;
        r.group = group[0] ? nnp__cl_intern_cstr(k->strs, group) : dflt;
        r.op = nnp__cl_intern_cstr(k->strs, name[0] ? name : nnp_comm_kind_name(kind));
        r.op_index = next_index(&ix, r.step_id, r.group, r.op);
        r.flags = NNP_CL_COMM_HAS_START | (p2p ? NNP_CL_COMM_P2P : NNP_CL_COMM_COLLECTIVE);
        r.start_ns = s + offset;
        r.elapse_ns = e - s;
        if (m->comms.has[i] & NNP_COMM_HAS_WAIT) {
            int64_t w = (int64_t)m->comms.wait_ns[i];
            r.flags |= NNP_CL_COMM_HAS_WAIT;
            r.flags &= ~NNP_CL_COMM_COLLECTIVE;
            r.wait_ns = w > r.elapse_ns ? r.elapse_ns : w;
            r.sync_ns = r.wait_ns; /* the wait before any data moved */
            r.transit_ns = r.elapse_ns - r.wait_ns;
        } else if (p2p) {
            r.transit_ns = r.elapse_ns; /* a send: no wait measured */
        }
        if (typed && m->comms.bytes[i] > 0) {
            memset(&bw, 0, sizeof(bw));
            bw.type = nnp__cl_intern_cstr(k->strs, transport(k, m, i, &tc));
            bw.packets = 1;
            bw.large_packets = m->comms.bytes[i] > LARGE_PACKET_BYTES;
            bw.bytes = m->comms.bytes[i];
            bw.time_ns = r.transit_ns; /* collectives: set when the wait is known */
            memset(&dist, 0, sizeof(dist));
            dist.count = 1;
            dist.size_bytes = bw.bytes;
            dist.time_ns = bw.time_ns;
            r.n_bw = 1;
            r.n_dist = 1;
        }
        nnp__cl_add_comm(k, &r, &bw, &dist);
        nnp__cl_note_group(k, r.group, p2p);
        /* The receiver reports a point-to-point link: its time is the transfer's (a send
         * may return before the data arrives). */
        if (typed && kind == NNP_COMM_RECV && m->comms.peer[i] >= 0 && m->comms.bytes[i] > 0) {
            nnp_cl_link_rec_t l;
            memset(&l, 0, sizeof(l));
            l.rank = r.rank;
            l.src = m->comms.peer[i];
            l.dst = r.rank;
            l.group = r.group;
            l.op = r.op;
            l.op_index = r.op_index;
            l.type = bw.type;
            l.step_id = r.step_id;
            l.bytes = m->comms.bytes[i];
            l.time_ns = r.transit_ns;
            nnp__cl_add_link(k, &l);
        }
        if (k->comms.err)
            rc = k->comms.err;
    }
    nnp__free(ix.v);
    nnp__step_spans_fini(&spans);
    return rc;
}

/* ---- advisor and timeline (files written in the thread's scratch folder) ---- */

/* Empties the scratch folder (it holds only files the analyses just wrote there). */
static void clear_scratch(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        char p[NNP_PATH_MAX];
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            nnp__path_join(p, sizeof(p), dir, e->d_name) != NNP_OK)
            continue;
        if (unlink(p) != 0) {
            clear_scratch(p);
            (void)rmdir(p);
        }
    }
    closedir(d);
}

static void advice(nnp_cl_sink_t *k, const nnp_actx_t *c, const nnp_step_trace_t *st,
                   const nnp_overlap_t *ov)
{
    nnp_findings_t f;
    nnp_advice_item_t *items = nnp__calloc(ADV_MAX, sizeof(*items));
    size_t n;
    if (!items)
        return;
    nnp__findings_init(&f);
    nnp__findings_from_core(&f, c, st, ov);
    /* The deeper analyses fill their parts of the findings; their files go to scratch. A
     * failing one only leaves its part unknown (its rules then never fire). */
    (void)nnp__memory_write(c, st, &f);
    (void)nnp__pipeline_write(c, &f);
    (void)nnp__cpu_write(c, &f);
    (void)nnp__flops_write(c, st, &f);
    (void)nnp__dynamic_shape_write(c, st, &f);
    if (nnp__gpu_present(c->m))
        (void)nnp__gpu_write(c, st, &f);
    nnp__clear_error();
    if (isfinite(f.achieved_flops_per_s) && f.achieved_flops_per_s > 0 && c->m->ops.flops_matrix) {
        /* MindInsight's FLOPS rules compare the achieved rate, and the FLOPs per stage. */
        double total = 0;
        for (size_t i = 0; i < c->m->ops.t.n; i++)
            total += (double)c->m->ops.flops_matrix[i] + (double)c->m->ops.flops_vector[i];
        k->sum->flops = total;
        k->sum->flops_per_s = f.achieved_flops_per_s;
        k->sum->flags |= NNP_CL_RANK_FLOPS;
    }
    n = nnp__advisor_eval(&f, c->rank, items, ADV_MAX);
    for (size_t i = 0; i < n; i++) {
        nnp_cl_adv_rec_t a;
        memset(&a, 0, sizeof(a));
        a.rank = c->rank;
        a.id = nnp__cl_intern_cstr(k->strs, items[i].id);
        a.title = nnp__cl_intern_cstr(k->strs, items[i].title);
        a.severity = items[i].is_warning ? 0 : 1;
        nnp__strlcpy(a.evidence, items[i].evidence, sizeof(a.evidence));
        nnp__strlcpy(a.suggestion, items[i].suggestion, sizeof(a.suggestion));
        nnp__cl_buf_add(&k->advice, &a, sizeof(a));
        k->sum->n_findings++;
    }
    nnp__free(items);
    clear_scratch(k->scratch);
}

static bool timeline_wanted(const nnp_cl_opts_t *o, int rank)
{
    if (!o->timeline)
        return false;
    return o->timeline_all ||
           (o->timeline_ranks && rank >= 0 && rank < NNP_CL_MAX_RANKS && o->timeline_ranks[rank]);
}

static int timeline(nnp_cl_sink_t *k, const nnp_actx_t *c, const nnp_step_trace_t *st,
                    const nnp_overlap_t *ov)
{
    char p[NNP_PATH_MAX];
    int rc = nnp__timeline_write(c, st, ov);
    if (rc == NNP_OK)
        rc = nnp__path_join(p, sizeof(p), k->scratch, "trace_view.json");
    if (rc == NNP_OK)
        rc = nnp__cl_timeline_fragment(
            p, k->sum->rank, k->sum->flags & NNP_CL_RANK_CLOCK ? k->sum->clock_offset_ns : 0,
            &k->timeline);
    clear_scratch(k->scratch);
    return rc;
}

/* ---- one rank ---- */

static int read_model(nnp_cl_sink_t *k, const nnp_cl_input_t *x, const nnp_importer_t *imp)
{
    nnp_cl_rank_t *s = k->sum;
    nnp_model_t m, view;
    nnp_actx_t c;
    nnp_step_trace_t st;
    nnp_overlap_t ov;
    int rc;

    memset(&st, 0, sizeof(st));
    memset(&ov, 0, sizeof(ov));
    rc = nnp__model_init(&m);
    if (rc != NNP_OK)
        return rc;
    if (!imp)
        imp = x->importer;
    if (imp) {
        rc = imp->import(x->path, &m);
        if (rc == NNP_OK)
            rc = nnp__model_finish(&m);
    } else {
        /* Our raw directory with its child processes' (as nnp__input_import does). */
        const char **dirs = nnp__calloc((size_t)x->n_children + 1, sizeof(char *));
        rc = dirs ? NNP_OK : nnp__fail(NNP_ENOMEM, "out of memory");
        if (rc == NNP_OK) {
            dirs[0] = x->path;
            for (int ch = 0; ch < x->n_children; ch++)
                dirs[ch + 1] = x->children[ch];
            rc = nnp__import_raw_group(dirs, (size_t)x->n_children + 1, &m);
        }
        nnp__free(dirs);
    }
    if (rc == NNP_OK && x->rank >= 0)
        m.info.rank_id = x->rank; /* the rank the inputs found wins, as in the driver */
    if (rc != NNP_OK) {
        char msg[NNP_PATH_MAX + NNP_NAME_MAX];
        nnp__strlcpy(msg, nnp_last_error(), sizeof(msg));
        nnp__model_fini(&m);
        return nnp__fail(rc, "%s: cannot read: %s", x->path, msg);
    }
    s->rank = m.info.rank_id;
    s->device_id = m.info.device_id;
    if (s->device_id >= 0)
        s->flags |= NNP_CL_RANK_HAS_DEV;
    s->rank_size = m.info.rank_size > 0 ? m.info.rank_size : 0;
    nnp__strlcpy(s->host, x->host[0] ? x->host : (m.info.host ? m.info.host : ""), sizeof(s->host));
    nnp__strlcpy(s->format, m.info.source_format ? m.info.source_format : "unknown",
                 sizeof(s->format));
    if (m.info.has_clock_sync) {
        s->flags |= NNP_CL_RANK_CLOCK;
        s->clock_offset_ns = m.info.clock_offset_ns;
        s->clock_uncertainty_ns = m.info.clock_uncertainty_ns;
    }
    rc = nnp__model_rank_view(&m, &view);
    if (rc != NNP_OK) {
        nnp__model_fini(&m);
        return rc;
    }
    memset(&c, 0, sizeof(c));
    c.m = &view; /* without the processes that work for the rank's (model_view.c) */
    c.all = &m;
    c.rank = s->rank;
    c.out_dir = k->scratch;
    c.rank_dir = k->scratch;
    c.is_developer = true;
    c.timeline_limit_bytes = m.info.timeline_limit_bytes;
    rc = nnp__step_trace_run(&c, &st);
    if (rc == NNP_OK)
        rc = nnp__overlap_run(&c, &st, &ov);
    if (rc == NNP_OK)
        rc = steps(k, &view, &st, &ov);
    if (rc == NNP_OK)
        rc = comms(k, &view, &st);
    if (rc == NNP_OK)
        advice(k, &c, &st, &ov);
    if (rc == NNP_OK && timeline_wanted(k->o, s->rank))
        rc = timeline(k, &c, &st, &ov);
    nnp__overlap_fini(&ov);
    nnp__step_trace_fini(&st);
    nnp__model_view_fini(&view);
    nnp__model_fini(&m);
    return rc;
}

int nnp__cl_read_model_rank(nnp_cl_sink_t *k, const nnp_cl_input_t *x)
{
    return read_model(k, x, NULL);
}

int nnp__cl_read_model_with(nnp_cl_sink_t *k, const nnp_cl_input_t *x, const void *importer)
{
    return read_model(k, x, importer);
}
