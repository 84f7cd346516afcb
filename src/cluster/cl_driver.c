/* cl_driver.c - `nnprof cluster`: finds the ranks (cl_inputs.c), reads them on worker
 * threads and, under mpirun, across processes (each process takes every size-th input),
 * keeps one summary per rank and spills the rest (cl_spill.c), gathers everything on
 * process 0 and runs the writers there. The outputs depend only on the data: summaries
 * are sorted by rank, strings ordered by their text, sums exact, so one process with any
 * thread count and K processes write the same bytes. Peak memory: one rank's model per
 * thread, one summary per rank, the writers' bounded merge buffers. */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cluster/cl_driver.h"

/* Worker threads when the machine's CPU count cannot be read. */
#define DEFAULT_THREADS 1
/* Most threads one process starts. */
#define MAX_THREADS     256
#define PROGRESS_WIDTH  30
#define DEFAULT_OUT_DIR "cluster_analysis_output"
#define FOREIGN_OUT_DIR "nnprof_cluster_output"
/* Longest error text that crosses processes. */
#define ERR_CAP 1024
/* Stream count and order in the gather. */
enum { S_STEPS, S_COMMS, S_LINKS, S_ADVICE, S_TIMELINE, S_COUNT };

/* ---- the work of one process ---- */

typedef struct work {
    const nnp_cl_opts_t *o;
    nnp_cl_inputs_t *in;
    nnp_cl_strtab_t *strs;
    nnp_cl_spill_t *spill; /* [S_COUNT] */
    int *todo;             /* input indexes of this process */
    int n_todo;
    _Atomic int next, done;
    pthread_mutex_t mu;
    nnp_cl_rank_t *sums; /* summaries made here, any order */
    size_t n_sums, cap_sums;
    int first_rc;
    const char *scratch_base;
    bool show_progress;
} work_t;

static int add_summary(work_t *w, const nnp_cl_rank_t *s)
{
    int rc = NNP_OK;
    pthread_mutex_lock(&w->mu);
    if (w->n_sums == w->cap_sums) {
        size_t ncap = w->cap_sums ? w->cap_sums * 2 : 64;
        nnp_cl_rank_t *v = nnp__realloc(w->sums, ncap * sizeof(*v));
        if (!v)
            rc = nnp__fail(NNP_ENOMEM, "out of memory");
        else {
            w->sums = v;
            w->cap_sums = ncap;
        }
    }
    if (rc == NNP_OK)
        w->sums[w->n_sums++] = *s;
    pthread_mutex_unlock(&w->mu);
    return rc;
}

/* Spills a finished sink's buffers as its rank's runs and keeps its summary. */
static int flush_sink(work_t *w, nnp_cl_sink_t *k)
{
    nnp_cl_buf_t *b[S_COUNT] = {&k->steps, &k->comms, &k->links, &k->advice, &k->timeline};
    int rc = NNP_OK;
    for (int i = 0; i < S_COUNT && rc == NNP_OK; i++) {
        rc = b[i]->err;
        if (rc == NNP_OK && b[i]->len > 0)
            rc = nnp__cl_spill_add(&w->spill[i], k->sum->rank, b[i]->p, b[i]->len);
        b[i]->len = 0;
    }
    if (rc == NNP_OK)
        rc = add_summary(w, k->sum);
    return rc;
}

static void sink_fini(nnp_cl_sink_t *k)
{
    nnp__cl_buf_fini(&k->steps);
    nnp__cl_buf_fini(&k->comms);
    nnp__cl_buf_fini(&k->links);
    nnp__cl_buf_fini(&k->advice);
    nnp__cl_buf_fini(&k->timeline);
}

/* The sinks of msprof-analyze's outputs, one per rank met. */
typedef struct mpa_ctx {
    work_t *w;
    const nnp_cl_input_t *x;
    nnp_cl_sink_t *sinks;
    nnp_cl_rank_t *sums;
    int *index; /* rank -> sink + 1 */
    int n;
} mpa_ctx_t;

static nnp_cl_sink_t *mpa_sink_for(void *ctx, int rank)
{
    mpa_ctx_t *c = ctx;
    nnp_cl_sink_t *k;
    if (rank < 0 || rank >= NNP_CL_MAX_RANKS)
        return NULL;
    if (c->index[rank])
        return &c->sinks[c->index[rank] - 1];
    k = &c->sinks[c->n];
    memset(k, 0, sizeof(*k));
    k->strs = c->w->strs;
    k->o = c->w->o;
    k->in = c->w->in;
    k->sum = &c->sums[c->n];
    memset(k->sum, 0, sizeof(*k->sum));
    k->sum->rank = rank;
    k->sum->device_id = -1;
    nnp__strlcpy(k->sum->format, "msprof-analyze", sizeof(k->sum->format));
    nnp__strlcpy(k->sum->show, c->x->path, sizeof(k->sum->show));
    c->index[rank] = ++c->n;
    return k;
}

static int read_mpa(work_t *w, const nnp_cl_input_t *x)
{
    mpa_ctx_t c = {w, x, NULL, NULL, NULL, 0};
    int rc;
    c.sinks = nnp__calloc(NNP_CL_MAX_RANKS, sizeof(*c.sinks));
    c.sums = nnp__calloc(NNP_CL_MAX_RANKS, sizeof(*c.sums));
    c.index = nnp__calloc(NNP_CL_MAX_RANKS, sizeof(*c.index));
    if (!c.sinks || !c.sums || !c.index)
        rc = nnp__fail(NNP_ENOMEM, "out of memory");
    else
        rc = nnp__cl_read_mpa_output(x, mpa_sink_for, &c);
    for (int r = 0; rc == NNP_OK && r < NNP_CL_MAX_RANKS; r++)
        if (c.index[r])
            rc = flush_sink(w, &c.sinks[c.index[r] - 1]);
    for (int i = 0; i < c.n; i++)
        sink_fini(&c.sinks[i]);
    nnp__free(c.sinks);
    nnp__free(c.sums);
    nnp__free(c.index);
    return rc;
}

static void progress(work_t *w)
{
    int done = atomic_load(&w->done), fill;
    if (!w->show_progress || w->n_todo <= 0)
        return;
    fill = done * PROGRESS_WIDTH / w->n_todo;
    pthread_mutex_lock(&w->mu);
    fprintf(stderr, "\r[%.*s%*s] %d/%d ranks read", fill, "##############################",
            PROGRESS_WIDTH - fill, "", done, w->n_todo);
    if (done == w->n_todo)
        fputc('\n', stderr);
    fflush(stderr);
    pthread_mutex_unlock(&w->mu);
}

static void *worker(void *arg)
{
    work_t *w = arg;
    char scratch[NNP_PATH_MAX];
    if (snprintf(scratch, sizeof(scratch), "%s/rank_XXXXXX", w->scratch_base) >=
            (int)sizeof(scratch) ||
        !mkdtemp(scratch)) {
        pthread_mutex_lock(&w->mu);
        if (w->first_rc == NNP_OK)
            w->first_rc = nnp__fail(NNP_EIO, "cannot create a folder in '%s': %s", w->scratch_base,
                                    strerror(errno));
        pthread_mutex_unlock(&w->mu);
        return NULL;
    }
    for (;;) {
        int t = atomic_fetch_add(&w->next, 1), rc;
        const nnp_cl_input_t *x;
        nnp_cl_sink_t k;
        nnp_cl_rank_t sum;
        if (t >= w->n_todo)
            break;
        x = &w->in->v[w->todo[t]];
        if (x->kind == NNP_CL_IN_MPA_OUTPUT) {
            rc = read_mpa(w, x);
        } else {
            memset(&k, 0, sizeof(k));
            memset(&sum, 0, sizeof(sum));
            sum.rank = x->rank;
            sum.device_id = -1;
            nnp__strlcpy(sum.show, x->path, sizeof(sum.show));
            k.strs = w->strs;
            k.o = w->o;
            k.in = w->in;
            k.sum = &sum;
            k.scratch = scratch;
            rc = x->kind == NNP_CL_IN_MINDSPORE   ? nnp__cl_read_mindspore_rank(&k, x)
                 : x->kind == NNP_CL_IN_TORCH_NPU ? nnp__cl_read_torch_npu_rank(&k, x)
                                                  : nnp__cl_read_model_rank(&k, x);
            if (rc != NNP_OK && rc != NNP_ENOMEM) {
                /* A rank that cannot be read is named and left out; the others go on. */
                NNP_LOG_E("rank %d: %s", sum.rank, nnp_last_error());
                k.steps.len = k.comms.len = k.links.len = k.advice.len = k.timeline.len = 0;
                sum.flags |= NNP_CL_RANK_FAILED;
                rc = NNP_OK;
            }
            if (rc == NNP_OK)
                rc = flush_sink(w, &k);
            sink_fini(&k);
        }
        if (rc != NNP_OK) {
            pthread_mutex_lock(&w->mu);
            if (w->first_rc == NNP_OK)
                w->first_rc = rc;
            pthread_mutex_unlock(&w->mu);
        }
        atomic_fetch_add(&w->done, 1);
        progress(w);
    }
    (void)rmdir(scratch);
    return NULL;
}

static int run_threads(work_t *w, int threads)
{
    pthread_t tid[MAX_THREADS];
    int started = 0;
    for (int i = 0; i < threads; i++) {
        if (pthread_create(&tid[i], NULL, worker, w) != 0)
            break;
        started++;
    }
    if (started == 0)
        worker(w); /* no thread could start: do the work here */
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    return w->first_rc;
}

/* ---- moving results to process 0 ---- */

static int dist_fail(int rc, const char *what, const char *err)
{
    return nnp__fail(rc, "%s: %s", what, err);
}

static int send_blob(nnp_cl_dist_t *d, const void *p, uint64_t n)
{
    char err[ERR_CAP];
    if (d->send(d->ctx, 0, &n, sizeof(n), err, sizeof(err)) != 0 ||
        (n > 0 && d->send(d->ctx, 0, p, (size_t)n, err, sizeof(err)) != 0))
        return dist_fail(NNP_EIO, "sending results to process 0", err);
    return NNP_OK;
}

static int recv_blob(nnp_cl_dist_t *d, int src, char **p, uint64_t *n)
{
    char err[ERR_CAP];
    *p = NULL;
    if (d->recv(d->ctx, src, n, sizeof(*n), err, sizeof(err)) != 0)
        return dist_fail(NNP_EIO, "receiving results", err);
    if (*n > SIZE_MAX / 2)
        return nnp__fail(NNP_EIO, "process %d sent a size of %llu bytes", src,
                         (unsigned long long)*n);
    *p = nnp__malloc(*n ? (size_t)*n : 1);
    if (!*p)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    if (*n > 0 && d->recv(d->ctx, src, *p, (size_t)*n, err, sizeof(err)) != 0) {
        nnp__free(*p);
        *p = NULL;
        return dist_fail(NNP_EIO, "receiving results", err);
    }
    return NNP_OK;
}

/* A worker process sends its strings, summaries and runs (each run as a blob). */
static int send_results(nnp_cl_dist_t *d, work_t *w)
{
    nnp_cl_buf_t b = {0};
    int rc;
    uint64_t n_strs = w->strs->n;
    for (size_t i = 1; i < w->strs->n; i++)
        nnp__cl_buf_add(&b, w->strs->s[i], w->strs->len[i] + 1);
    rc = b.err;
    if (rc == NNP_OK)
        rc = send_blob(d, &n_strs, sizeof(n_strs));
    if (rc == NNP_OK)
        rc = send_blob(d, b.p, b.len);
    nnp__cl_buf_fini(&b);
    if (rc == NNP_OK)
        rc = send_blob(d, w->sums, w->n_sums * sizeof(*w->sums));
    for (int s = 0; rc == NNP_OK && s < S_COUNT; s++) {
        const nnp_cl_spill_t *sp = &w->spill[s];
        uint64_t n_runs = sp->n_runs;
        rc = send_blob(d, &n_runs, sizeof(n_runs));
        for (size_t r = 0; rc == NNP_OK && r < sp->n_runs; r++) {
            char *buf = nnp__malloc(sp->runs[r].len ? (size_t)sp->runs[r].len : 1);
            int32_t rank = sp->runs[r].rank;
            if (!buf) {
                rc = nnp__fail(NNP_ENOMEM, "out of memory");
                break;
            }
            rc = nnp__cl_spill_read(sp, sp->runs[r].off, buf, (size_t)sp->runs[r].len);
            if (rc == NNP_OK)
                rc = send_blob(d, &rank, sizeof(rank));
            if (rc == NNP_OK)
                rc = send_blob(d, buf, sp->runs[r].len);
            nnp__free(buf);
        }
    }
    return rc;
}

/* Rewrites the string ids of received records into this process's ids. */
static void remap_run(int stream, char *p, size_t n, const uint32_t *map, size_t n_map)
{
#define MAP(x) ((x) < n_map ? map[(x)] : 0u)
    size_t pos = 0;
    while (pos < n) {
        if (stream == S_COMMS) {
            nnp_cl_comm_rec_t h;
            nnp_cl_bw_t bw;
            memcpy(&h, p + pos, sizeof(h));
            if (h.len < sizeof(h) || pos + h.len > n)
                return;
            h.group = MAP(h.group);
            h.op = MAP(h.op);
            memcpy(p + pos, &h, sizeof(h));
            for (uint32_t i = 0; i < h.n_bw; i++) {
                size_t at = pos + sizeof(h) + i * sizeof(bw);
                memcpy(&bw, p + at, sizeof(bw));
                bw.type = MAP(bw.type);
                memcpy(p + at, &bw, sizeof(bw));
            }
            pos += h.len;
        } else if (stream == S_LINKS) {
            nnp_cl_link_rec_t l;
            if (pos + sizeof(l) > n)
                return;
            memcpy(&l, p + pos, sizeof(l));
            l.group = MAP(l.group);
            l.op = MAP(l.op);
            l.op_label = MAP(l.op_label);
            l.type = MAP(l.type);
            memcpy(p + pos, &l, sizeof(l));
            pos += sizeof(l);
        } else if (stream == S_ADVICE) {
            nnp_cl_adv_rec_t a;
            if (pos + sizeof(a) > n)
                return;
            memcpy(&a, p + pos, sizeof(a));
            a.id = MAP(a.id);
            a.title = MAP(a.title);
            memcpy(p + pos, &a, sizeof(a));
            pos += sizeof(a);
        } else {
            return; /* steps and timeline text hold no string ids */
        }
    }
#undef MAP
}

static int recv_results(nnp_cl_dist_t *d, int src, work_t *w)
{
    char *p = NULL, *strs = NULL;
    uint64_t n = 0, n_strs = 0, len = 0;
    uint32_t *map = NULL;
    int rc = recv_blob(d, src, &p, &n);
    if (rc == NNP_OK && n == sizeof(n_strs))
        memcpy(&n_strs, p, sizeof(n_strs));
    nnp__free(p);
    p = NULL;
    if (rc == NNP_OK)
        rc = recv_blob(d, src, &strs, &len);
    if (rc == NNP_OK) {
        size_t pos = 0;
        map = nnp__calloc(n_strs + 1, sizeof(*map));
        if (!map)
            rc = nnp__fail(NNP_ENOMEM, "out of memory");
        for (uint64_t i = 1; rc == NNP_OK && i < n_strs && pos < len; i++) {
            size_t sl = strnlen(strs + pos, (size_t)(len - pos));
            map[i] = nnp__cl_intern(w->strs, strs + pos, sl);
            pos += sl + 1;
        }
    }
    nnp__free(strs);
    if (rc == NNP_OK)
        rc = recv_blob(d, src, &p, &n);
    for (size_t i = 0; rc == NNP_OK && i < n / sizeof(nnp_cl_rank_t); i++) {
        nnp_cl_rank_t s;
        memcpy(&s, p + i * sizeof(s), sizeof(s));
        for (uint32_t g = 0; g < s.n_groups && g < NNP_CL_RANK_GROUPS; g++)
            s.groups[g].name = s.groups[g].name < n_strs ? map[s.groups[g].name] : 0;
        rc = add_summary(w, &s);
    }
    nnp__free(p);
    p = NULL;
    for (int s = 0; rc == NNP_OK && s < S_COUNT; s++) {
        uint64_t n_runs = 0;
        rc = recv_blob(d, src, &p, &n);
        if (rc == NNP_OK && n == sizeof(n_runs))
            memcpy(&n_runs, p, sizeof(n_runs));
        nnp__free(p);
        p = NULL;
        for (uint64_t r = 0; rc == NNP_OK && r < n_runs; r++) {
            int32_t rank = 0;
            rc = recv_blob(d, src, &p, &n);
            if (rc == NNP_OK && n == sizeof(rank))
                memcpy(&rank, p, sizeof(rank));
            nnp__free(p);
            p = NULL;
            if (rc == NNP_OK)
                rc = recv_blob(d, src, &p, &n);
            if (rc == NNP_OK) {
                remap_run(s, p, (size_t)n, map, (size_t)n_strs);
                rc = nnp__cl_spill_add(&w->spill[s], rank, p, (size_t)n);
            }
            nnp__free(p);
            p = NULL;
        }
    }
    nnp__free(map);
    return rc;
}

/* ---- checks on the gathered summaries ---- */

static int cmp_sum(const void *a, const void *b)
{
    const nnp_cl_rank_t *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return strcmp(x->show, y->show);
}

static void list_add(char *buf, size_t cap, int v)
{
    size_t len = strlen(buf);
    if (len < cap)
        snprintf(buf + len, cap - len, "%s%d", len ? ", " : "", v);
}

/* Duplicates only a read could reveal (inputs whose rank the data gave on import). */
static int check_summaries(nnp_cl_data_t *d)
{
    char failed[NNP_NAME_MAX] = "";
    int expected = d->in->rank_size, max_rank = -1;
    for (int i = 0; i < d->n_ranks; i++) {
        const nnp_cl_rank_t *s = &d->ranks[i];
        if (i > 0 && s->rank == d->ranks[i - 1].rank && s->rank >= 0)
            return nnp__fail(NNP_ECONFLICT,
                             "rank %d is in the data twice: '%s' and '%s'; a cluster holds one "
                             "input per rank: move one of them out",
                             s->rank, d->ranks[i - 1].show, s->show);
        if (s->rank_size > expected)
            expected = s->rank_size;
        if (s->rank > max_rank)
            max_rank = s->rank;
        if (s->flags & NNP_CL_RANK_FAILED) {
            d->failed[d->n_failed++] = s->rank;
            list_add(failed, sizeof(failed), s->rank);
        }
    }
    if (max_rank + 1 > expected)
        expected = max_rank + 1;
    d->expected_ranks = expected;
    for (int r = 0, i = 0; r < expected && r < NNP_CL_MAX_RANKS; r++) {
        while (i < d->n_ranks && d->ranks[i].rank < r)
            i++;
        if (i >= d->n_ranks || d->ranks[i].rank != r)
            d->missing[d->n_missing++] = r;
    }
    if (d->n_missing > 0) {
        char list[NNP_NAME_MAX] = "";
        for (int i = 0; i < d->n_missing; i++)
            list_add(list, sizeof(list), d->missing[i]);
        NNP_LOG_W("the data names %d ranks, but %d %s missing: %s%s; the cluster outputs "
                  "cover the ranks found",
                  expected, d->n_missing, d->n_missing == 1 ? "is" : "are", list,
                  strlen(list) + 1 >= sizeof(list) ? "..." : "");
    }
    if (d->n_failed > 0)
        NNP_LOG_E("%d rank%s could not be read and %s left out: %s (see above)", d->n_failed,
                  d->n_failed == 1 ? "" : "s", d->n_failed == 1 ? "is" : "are", failed);
    return NNP_OK;
}

/* ---- the output folder ---- */

static void resolve(const char *path, char *out)
{
    if (!realpath(path, out))
        nnp__strlcpy(out, path, NNP_PATH_MAX);
}

/* The output folder is ours: never a folder the data is read from. */
static int pick_out_dir(const nnp_cl_inputs_t *in, const char *dir, const char *given, char *out,
                        size_t cap)
{
    char ro[NNP_PATH_MAX], rf[NNP_PATH_MAX];
    bool mpa_default = false;
    for (int i = 0; i < in->n; i++)
        mpa_default = mpa_default || in->v[i].kind == NNP_CL_IN_MPA_OUTPUT;
    if (given && given[0]) {
        if (!nnp__strlcpy(out, given, cap))
            return nnp__fail(NNP_ETOOLONG, "path too long: %s", given);
    } else if (nnp__path_join(out, cap, dir, mpa_default ? FOREIGN_OUT_DIR : DEFAULT_OUT_DIR) !=
               NNP_OK) {
        return nnp__fail(NNP_ETOOLONG, "path too long: %s", dir);
    }
    resolve(out, ro);
    for (int i = 0; i < in->n; i++) {
        resolve(in->v[i].path, rf);
        if (strcmp(ro, rf) == 0)
            return nnp__fail(NNP_EINVAL,
                             "output folder '%s' is '%s', which holds data being read: the "
                             "data is never written, choose another folder (-o OUT)",
                             out, in->v[i].path);
    }
    return NNP_OK;
}

/* ---- the run ---- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int write_all(nnp_cl_data_t *d)
{
    int rc = nnp__cl_db_open(d, d->o->out_dir);
    if (rc == NNP_OK)
        rc = nnp__cl_write_steps(d);
    if (rc == NNP_OK)
        rc = nnp__cl_group_keys(d);
    if (rc == NNP_OK)
        rc = nnp__cl_write_comm(d);
    if (rc == NNP_OK)
        rc = nnp__cl_write_matrix(d);
    rc = nnp__cl_db_close(d, rc);
    if (rc == NNP_OK)
        rc = nnp__cl_write_advice(d);
    if (rc == NNP_OK && d->o->timeline)
        rc = nnp__cl_write_timeline(d);
    return rc;
}

/* Process 0: sorts, checks and writes. */
static int finish(work_t *w, nnp_cl_opts_t *o, const char *tmp_dir, nnp_cl_report_t *rep)
{
    nnp_cl_data_t d;
    int rc;
    memset(&d, 0, sizeof(d));
    d.o = o;
    d.in = w->in;
    d.strs = w->strs;
    d.tmp_dir = tmp_dir;
    d.tp = o->tp;
    d.pp = o->pp;
    d.dp = o->dp;
    qsort(w->sums, w->n_sums, sizeof(*w->sums), cmp_sum);
    d.ranks = w->sums;
    d.n_ranks = (int)w->n_sums;
    d.missing = nnp__calloc(NNP_CL_MAX_RANKS, sizeof(int));
    d.failed = nnp__calloc(NNP_CL_MAX_RANKS + 1, sizeof(int));
    if (!d.missing || !d.failed) {
        rc = nnp__fail(NNP_ENOMEM, "out of memory");
        goto out;
    }
    rc = check_summaries(&d);
    if (rc == NNP_OK && d.n_ranks - d.n_failed <= 0)
        rc = nnp__fail(NNP_ENOENT, "no rank of '%s' could be read (see above)", w->in->data_dir);
    if (rc == NNP_OK)
        rc = nnp__cl_strtab_collate(w->strs);
    for (int s = 0; s < S_COUNT; s++)
        nnp__cl_spill_sort_runs(&w->spill[s]);
    d.steps = w->spill[S_STEPS];
    d.comms = w->spill[S_COMMS];
    d.links = w->spill[S_LINKS];
    d.advice = w->spill[S_ADVICE];
    d.timeline = w->spill[S_TIMELINE];
    if (rc == NNP_OK)
        rc = nnp__mkdir_p(o->out_dir, 0700);
    if (rc == NNP_OK) {
        int fd;
        rc = nnp__outdir_open(o->out_dir, &fd);
        if (fd >= 0)
            close(fd);
    }
    if (rc == NNP_OK)
        rc = write_all(&d);
    rep->n_ranks = d.n_ranks - d.n_failed;
    rep->n_missing = d.n_missing;
    rep->n_failed = d.n_failed;
    rep->expected_ranks = d.expected_ranks;
    if (rc == NNP_OK && d.n_failed > 0)
        rc = nnp__fail(NNP_EIO,
                       "%d rank%s could not be read (see above); the outputs cover the "
                       "others",
                       d.n_failed, d.n_failed == 1 ? "" : "s");
out:
    nnp__cl_cluster_data_fini(&d);
    nnp__free(d.missing);
    nnp__free(d.failed);
    return rc;
}

static int make_tmp(char *out, size_t cap)
{
    const char *base = getenv("TMPDIR");
    if (!base || !base[0])
        base = "/tmp";
    if (snprintf(out, cap, "%s/nnprof_cluster_XXXXXX", base) >= (int)cap)
        return nnp__fail(NNP_ETOOLONG, "TMPDIR too long: %s", base);
    if (!mkdtemp(out))
        return nnp__fail(nnp__from_errno(errno), "cannot create a temporary folder in '%s': %s",
                         base, strerror(errno));
    return NNP_OK;
}

/* Tells every process whether every other one is fine (so all stop together). */
static int agree(nnp_cl_dist_t *d, int rc)
{
    int64_t v = rc != NNP_OK;
    char err[ERR_CAP];
    if (d->size <= 1)
        return rc;
    if (d->allreduce_max(d->ctx, &v, 1, err, sizeof(err)) != 0)
        return dist_fail(NNP_EIO, "MPI", err);
    if (rc == NNP_OK && v)
        return nnp__fail(NNP_EIO, "another process failed (its message is above)");
    return rc;
}

static void stats(const work_t *w, const nnp_cl_dist_t *d, int threads, double t0,
                  nnp_cl_report_t *rep)
{
    struct rusage ru;
    rep->wall_s = now_s() - t0;
    rep->threads = threads;
    rep->processes = d->size;
    rep->process = d->rank;
    rep->ranks_here = w->n_todo;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        rep->peak_rss_kb = ru.ru_maxrss;
}

int nnp__cluster_run(const char *dir, nnp_cl_opts_t *o, nnp_cl_dist_t *d, nnp_cl_report_t *rep)
{
    nnp_cl_inputs_t in;
    nnp_cl_strtab_t strs;
    nnp_cl_spill_t spill[S_COUNT];
    work_t w;
    char tmp[NNP_PATH_MAX] = "";
    double t0 = now_s();
    int rc, threads = 0, n_spills = 0;
    bool have_strs = false;

    memset(rep, 0, sizeof(*rep));
    memset(&w, 0, sizeof(w));
    memset(&in, 0, sizeof(in));
    rc = nnp__cl_inputs_find(dir, &in);
    rc = agree(d, rc);
    if (rc == NNP_OK && d->size > 1) {
        /* Every process read the folder itself: they must have found the same inputs. */
        uint64_t dg = nnp__cl_inputs_digest(&in);
        int64_t v[2] = {(int64_t)(dg >> 1), -(int64_t)(dg >> 1)};
        char err[ERR_CAP];
        if (d->allreduce_max(d->ctx, v, 2, err, sizeof(err)) != 0)
            rc = dist_fail(NNP_EIO, "MPI", err);
        else if (v[0] != -v[1])
            rc = nnp__fail(NNP_EINVAL,
                           "the processes found different data in '%s': every "
                           "process must see the same folder (a shared file system)",
                           dir);
    }
    if (rc == NNP_OK)
        rc = pick_out_dir(&in, dir, o->out_dir, o->out_dir, sizeof(o->out_dir));
    if (rc == NNP_OK)
        rc = make_tmp(tmp, sizeof(tmp));
    if (rc == NNP_OK) {
        rc = nnp__cl_strtab_init(&strs);
        have_strs = rc == NNP_OK;
    }
    for (int s = 0; rc == NNP_OK && s < S_COUNT; s++) {
        rc = nnp__cl_spill_init(&spill[s], tmp);
        n_spills += rc == NNP_OK;
    }
    if (rc == NNP_OK) {
        w.o = o;
        w.in = &in;
        w.strs = &strs;
        w.spill = spill;
        w.scratch_base = tmp;
        w.first_rc = NNP_OK;
        w.todo = nnp__calloc((size_t)in.n + 1, sizeof(int));
        if (!w.todo || pthread_mutex_init(&w.mu, NULL) != 0)
            rc = nnp__fail(NNP_ENOMEM, "out of memory");
    }
    if (rc == NNP_OK) {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        for (int i = d->rank; i < in.n; i += d->size)
            w.todo[w.n_todo++] = i;
        threads = o->threads > 0 ? o->threads : ncpu > 0 ? (int)ncpu : DEFAULT_THREADS;
        if (threads > MAX_THREADS)
            threads = MAX_THREADS;
        if (threads > w.n_todo)
            threads = w.n_todo > 0 ? w.n_todo : 1;
        w.show_progress = !o->quiet && isatty(STDERR_FILENO) && d->rank == 0;
        if (w.n_todo > 0)
            rc = run_threads(&w, threads);
    }
    rc = agree(d, rc);
    if (rc == NNP_OK && d->size > 1) {
        if (d->rank == 0) {
            for (int p = 1; rc == NNP_OK && p < d->size; p++)
                rc = recv_results(d, p, &w);
        } else {
            rc = send_results(d, &w);
        }
        rc = agree(d, rc);
    }
    if (rc == NNP_OK && d->rank == 0)
        rc = finish(&w, o, tmp, rep);
    if (d->size > 1) {
        /* Process 0's outcome is everyone's (the others have nothing left to do). */
        int64_t v = rc != NNP_OK;
        char err[ERR_CAP];
        if (d->bcast(d->ctx, &v, sizeof(v), 0, err, sizeof(err)) == 0 && d->rank != 0 && v &&
            rc == NNP_OK)
            rc = nnp__fail(NNP_EIO, "process 0 failed (its message is above)");
    }
    stats(&w, d, threads, t0, rep);
    if (w.todo)
        pthread_mutex_destroy(&w.mu);
    nnp__free(w.todo);
    nnp__free(w.sums);
    for (int s = 0; s < n_spills; s++)
        nnp__cl_spill_fini(&spill[s]);
    if (have_strs)
        nnp__cl_strtab_fini(&strs);
    nnp__cl_inputs_fini(&in);
    if (tmp[0])
        (void)rmdir(tmp);
    return rc;
}

/* One process, no MPI. */
static int local_noop(void *ctx, void *buf, size_t n, int root, char *err, size_t cap)
{
    (void)ctx, (void)buf, (void)n, (void)root, (void)err, (void)cap;
    return 0;
}

void nnp__cl_dist_local(nnp_cl_dist_t *d)
{
    memset(d, 0, sizeof(*d));
    d->version = NNP_CL_DIST_VERSION;
    d->rank = 0;
    d->size = 1;
    d->what = "one process";
    d->bcast = local_noop;
}
