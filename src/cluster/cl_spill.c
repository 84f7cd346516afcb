/* cl_spill.c - where the cluster analysis keeps what it cannot hold in memory: one
 * temporary file per record kind, holding one run of records per rank (appended by the
 * worker threads as ranks finish), re-sorted run by run and merged k ways. The merge takes
 * at most MERGE_FAN_IN runs at a time, merging larger sets in rounds into temporary
 * spills, so its memory is MERGE_FAN_IN cursor buffers whatever the rank count (the
 * external merge sort of databases). Temporary files are unlinked as soon as they are
 * created: a crash leaves nothing behind. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster/cluster.h"

/* Runs merged at once: 64 cursors of CURSOR_BUF bytes = 1 MiB, and 1,024 ranks take two
 * rounds. */
#define MERGE_FAN_IN 64
/* A cursor's read buffer; every record is far smaller (NNP_CL_MAX_DIST bounds the largest). */
#define CURSOR_BUF (16u * 1024u)
/* A merge round writes its output in pieces of this size. */
#define ROUND_FLUSH (256u * 1024u)
/* First capacity of a run list and of a growable buffer. */
#define RUNS_INITIAL 64
#define BUF_INITIAL  4096

/* ---- growable buffers ---- */

void nnp__cl_buf_add(nnp_cl_buf_t *b, const void *data, size_t n)
{
    if (b->err || n == 0)
        return;
    if (b->len + n > b->cap) {
        size_t ncap = b->cap ? b->cap : BUF_INITIAL;
        char *p;
        while (ncap < b->len + n)
            ncap *= 2;
        if (ncap > NNP_CL_BUF_MAX) {
            b->err = nnp__fail(NNP_ENOMEM, "one rank's records exceed %zu bytes",
                               (size_t)NNP_CL_BUF_MAX);
            return;
        }
        p = nnp__realloc(b->p, ncap);
        if (!p) {
            b->err = nnp__fail(NNP_ENOMEM, "out of memory");
            return;
        }
        b->p = p;
        b->cap = ncap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

void nnp__cl_buf_fini(nnp_cl_buf_t *b)
{
    nnp__free(b->p);
    memset(b, 0, sizeof(*b));
}

/* ---- spills ---- */

int nnp__cl_spill_init(nnp_cl_spill_t *s, const char *dir)
{
    char path[NNP_PATH_MAX];
    memset(s, 0, sizeof(*s));
    s->fd = -1;
    if (snprintf(path, sizeof(path), "%s/.nnprof_cluster_XXXXXX", dir) >= (int)sizeof(path))
        return nnp__fail(NNP_ETOOLONG, "path too long: %s", dir);
    s->fd = mkostemp(path, O_CLOEXEC);
    if (s->fd < 0)
        return nnp__fail(nnp__from_errno(errno), "cannot create a temporary file in '%s': %s", dir,
                         strerror(errno));
    (void)unlink(path);
    if (pthread_mutex_init(&s->mu, NULL) != 0) {
        close(s->fd);
        s->fd = -1;
        return nnp__fail(NNP_ENOMEM, "cannot create a mutex");
    }
    return NNP_OK;
}

void nnp__cl_spill_fini(nnp_cl_spill_t *s)
{
    if (s->fd >= 0) {
        close(s->fd);
        pthread_mutex_destroy(&s->mu);
    }
    nnp__free(s->runs);
    memset(s, 0, sizeof(*s));
    s->fd = -1;
}

static int pwrite_all(int fd, const char *p, size_t n, uint64_t off)
{
    while (n > 0) {
        ssize_t k = pwrite(fd, p, n, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return nnp__fail(nnp__from_errno(k < 0 ? errno : ENOSPC),
                             "cannot write a temporary file: %s", strerror(k < 0 ? errno : ENOSPC));
        p += k;
        n -= (size_t)k;
        off += (uint64_t)k;
    }
    return NNP_OK;
}

int nnp__cl_spill_add(nnp_cl_spill_t *s, int32_t rank, const void *data, size_t n)
{
    uint64_t off;
    int rc = NNP_OK;
    pthread_mutex_lock(&s->mu);
    if (s->n_runs == s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : RUNS_INITIAL;
        nnp_cl_run_t *r = nnp__realloc(s->runs, ncap * sizeof(*r));
        if (!r) {
            pthread_mutex_unlock(&s->mu);
            return nnp__fail(NNP_ENOMEM, "out of memory");
        }
        s->runs = r;
        s->cap = ncap;
    }
    off = s->end;
    s->end += n;
    s->runs[s->n_runs++] = (nnp_cl_run_t){.rank = rank, .off = off, .len = n};
    pthread_mutex_unlock(&s->mu);
    /* The range is ours alone: write it without the lock. */
    if (n > 0)
        rc = pwrite_all(s->fd, data, n, off);
    return rc;
}

static int cmp_runs(const void *a, const void *b)
{
    const nnp_cl_run_t *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->off > y->off) - (x->off < y->off);
}

void nnp__cl_spill_sort_runs(nnp_cl_spill_t *s)
{
    if (s->n_runs > 1)
        qsort(s->runs, s->n_runs, sizeof(*s->runs), cmp_runs);
}

const nnp_cl_run_t *nnp__cl_spill_find(const nnp_cl_spill_t *s, int32_t rank)
{
    size_t lo = 0, hi = s->n_runs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->runs[mid].rank < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n_runs && s->runs[lo].rank == rank ? &s->runs[lo] : NULL;
}

int nnp__cl_spill_read(const nnp_cl_spill_t *s, uint64_t off, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        ssize_t k = pread(s->fd, p, n, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return nnp__fail(NNP_EIO, "cannot read a temporary file: %s",
                             k < 0 ? strerror(errno) : "short read");
        p += k;
        n -= (size_t)k;
        off += (uint64_t)k;
    }
    return NNP_OK;
}

/* ---- cursors ---- */

int nnp__cl_cursor_open(nnp_cl_cursor_t *c, const nnp_cl_spill_t *s, const nnp_cl_run_t *run,
                        size_t rec_size)
{
    memset(c, 0, sizeof(*c));
    c->s = s;
    c->rec_size = rec_size;
    if (run) {
        c->pos = run->off;
        c->end = run->off + run->len;
    }
    c->cap = CURSOR_BUF;
    c->buf = nnp__malloc(c->cap);
    return c->buf ? NNP_OK : nnp__fail(NNP_ENOMEM, "out of memory");
}

void nnp__cl_cursor_close(nnp_cl_cursor_t *c)
{
    nnp__free(c->buf);
    memset(c, 0, sizeof(*c));
}

/* Makes at least need bytes available at buf_pos (fewer only at the end of the run). */
static int fill(nnp_cl_cursor_t *c, size_t need)
{
    size_t have = c->buf_len - c->buf_pos, want;
    if (have >= need)
        return NNP_OK;
    if (need > c->cap) {
        char *nb = nnp__malloc(need);
        if (!nb)
            return nnp__fail(NNP_ENOMEM, "out of memory");
        memcpy(nb, c->buf + c->buf_pos, have);
        nnp__free(c->buf);
        c->buf = nb;
        c->cap = need;
    } else {
        memmove(c->buf, c->buf + c->buf_pos, have);
    }
    c->buf_pos = 0;
    c->buf_len = have;
    want = c->cap - have;
    if (want > c->end - c->pos)
        want = (size_t)(c->end - c->pos);
    if (want > 0) {
        int rc = nnp__cl_spill_read(c->s, c->pos, c->buf + have, want);
        if (rc != NNP_OK)
            return rc;
        c->pos += want;
        c->buf_len += want;
    }
    return NNP_OK;
}

const void *nnp__cl_cursor_next(nnp_cl_cursor_t *c, int *rc)
{
    size_t size = c->rec_size;
    const char *rec;
    *rc = NNP_OK;
    if (c->buf_pos == c->buf_len && c->pos == c->end)
        return NULL;
    if (size == 0) {
        uint32_t len;
        if ((*rc = fill(c, sizeof(uint32_t))) != NNP_OK)
            return NULL;
        if (c->buf_len - c->buf_pos < sizeof(uint32_t)) {
            *rc = nnp__fail(NNP_EIO, "a temporary file ends inside a record");
            return NULL;
        }
        memcpy(&len, c->buf + c->buf_pos, sizeof(len));
        if (len < sizeof(uint32_t)) {
            *rc = nnp__fail(NNP_EIO, "a temporary file holds a damaged record");
            return NULL;
        }
        size = len;
    }
    if ((*rc = fill(c, size)) != NNP_OK)
        return NULL;
    if (c->buf_len - c->buf_pos < size) {
        *rc = nnp__fail(NNP_EIO, "a temporary file ends inside a record");
        return NULL;
    }
    rec = c->buf + c->buf_pos;
    c->buf_pos += size;
    return rec;
}

/* ---- re-sorting each run ---- */

static size_t rec_len(const void *rec, size_t rec_size)
{
    uint32_t len;
    if (rec_size)
        return rec_size;
    memcpy(&len, rec, sizeof(len));
    return len;
}

typedef struct sort_ctx {
    nnp_cl_cmp_fn cmp;
    void *ctx;
} sort_ctx_t;

static int cmp_ptrs(const void *a, const void *b, void *ctx)
{
    const sort_ctx_t *s = ctx;
    int c = s->cmp(*(void *const *)a, *(void *const *)b, s->ctx);
    if (c)
        return c;
    /* Equal keys keep their order (qsort is not stable). */
    return (*(char *const *)a > *(char *const *)b) - (*(char *const *)a < *(char *const *)b);
}

/* Sorts the records of one run held in buf (n bytes) into out. */
static int sort_run(char *buf, size_t n, size_t rec_size, void (*fix)(void *rec, void *ctx),
                    nnp_cl_cmp_fn cmp, void *ctx, nnp_cl_buf_t *out)
{
    size_t count = 0, pos = 0, k = 0;
    char **ptrs;
    sort_ctx_t sc = {cmp, ctx};
    while (pos < n) {
        size_t len = rec_len(buf + pos, rec_size);
        if (len == 0 || pos + len > n)
            return nnp__fail(NNP_EIO, "a temporary file holds a damaged run");
        pos += len;
        count++;
    }
    ptrs = nnp__malloc((count ? count : 1) * sizeof(*ptrs));
    if (!ptrs)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    for (pos = 0; pos < n; pos += rec_len(buf + pos, rec_size)) {
        ptrs[k++] = buf + pos;
        if (fix)
            fix(buf + pos, ctx);
    }
    qsort_r(ptrs, count, sizeof(*ptrs), cmp_ptrs, &sc);
    out->len = 0;
    for (size_t i = 0; i < count; i++)
        nnp__cl_buf_add(out, ptrs[i], rec_len(ptrs[i], rec_size));
    nnp__free(ptrs);
    return out->err;
}

int nnp__cl_spill_add_sorted(nnp_cl_spill_t *s, int32_t rank, char *buf, size_t n, size_t rec_size,
                             nnp_cl_cmp_fn cmp, void *ctx)
{
    nnp_cl_buf_t out = {0};
    int rc = sort_run(buf, n, rec_size, NULL, cmp, ctx, &out);
    if (rc == NNP_OK)
        rc = nnp__cl_spill_add(s, rank, out.p, out.len);
    nnp__cl_buf_fini(&out);
    return rc;
}

int nnp__cl_spill_resort(const nnp_cl_spill_t *src, nnp_cl_spill_t *dst, size_t rec_size,
                         void (*fix)(void *rec, void *ctx), nnp_cl_cmp_fn cmp, void *ctx)
{
    nnp_cl_buf_t out = {0};
    char *buf = NULL;
    size_t buf_cap = 0;
    int rc = NNP_OK;
    for (size_t i = 0; rc == NNP_OK && i < src->n_runs; i++) {
        const nnp_cl_run_t *r = &src->runs[i];
        if (r->len > buf_cap) {
            char *nb = nnp__realloc(buf, (size_t)r->len);
            if (!nb) {
                rc = nnp__fail(NNP_ENOMEM, "out of memory");
                break;
            }
            buf = nb;
            buf_cap = (size_t)r->len;
        }
        rc = nnp__cl_spill_read(src, r->off, buf, (size_t)r->len);
        if (rc == NNP_OK)
            rc = sort_run(buf, (size_t)r->len, rec_size, fix, cmp, ctx, &out);
        if (rc == NNP_OK)
            rc = nnp__cl_spill_add(dst, r->rank, out.p, out.len);
    }
    nnp__free(buf);
    nnp__cl_buf_fini(&out);
    return rc;
}

/* ---- k-way merge ---- */

struct nnp_cl_merge {
    size_t rec_size;
    nnp_cl_cmp_fn cmp;
    void *ctx;
    nnp_cl_spill_t round; /* a spill of merged groups, when there were too many runs */
    bool has_round;
    nnp_cl_cursor_t cur[MERGE_FAN_IN];
    const void *head[MERGE_FAN_IN];
    size_t n_cur;
    size_t *heap; /* cursor indexes, min-heap on head */
    size_t n_heap;
    size_t last; /* the cursor whose record was handed out last */
    bool started;
    char *hold; /* a copy of the record handed out (the cursor moves on) */
    size_t hold_cap;
};

static bool less(const nnp_cl_merge_t *m, size_t a, size_t b)
{
    int c = m->cmp(m->head[a], m->head[b], m->ctx);
    /* Ties: the lower cursor (the earlier run, lower rank) first, so merges are stable. */
    return c < 0 || (c == 0 && a < b);
}

static void sift_down(nnp_cl_merge_t *m, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, best = i, t;
        if (l < m->n_heap && less(m, m->heap[l], m->heap[best]))
            best = l;
        if (r < m->n_heap && less(m, m->heap[r], m->heap[best]))
            best = r;
        if (best == i)
            return;
        t = m->heap[i];
        m->heap[i] = m->heap[best];
        m->heap[best] = t;
        i = best;
    }
}

/* Opens cursors on runs [first, first + n) of s and builds the heap. */
static int start_group(nnp_cl_merge_t *m, const nnp_cl_spill_t *s, size_t first, size_t n)
{
    int rc = NNP_OK;
    m->n_cur = 0;
    m->n_heap = 0;
    for (size_t i = 0; i < n && rc == NNP_OK; i++) {
        rc = nnp__cl_cursor_open(&m->cur[i], s, &s->runs[first + i], m->rec_size);
        if (rc != NNP_OK)
            break;
        m->n_cur++;
        m->head[i] = nnp__cl_cursor_next(&m->cur[i], &rc);
        if (m->head[i])
            m->heap[m->n_heap++] = i;
    }
    for (size_t i = m->n_heap; i-- > 0;)
        sift_down(m, i);
    m->started = false;
    return rc;
}

static void close_group(nnp_cl_merge_t *m)
{
    for (size_t i = 0; i < m->n_cur; i++)
        nnp__cl_cursor_close(&m->cur[i]);
    m->n_cur = 0;
    m->n_heap = 0;
}

/* Moves the cursor handed out last to its next record. */
static int advance(nnp_cl_merge_t *m)
{
    int rc = NNP_OK;
    if (!m->started) {
        m->started = true;
        return NNP_OK;
    }
    if (m->n_heap == 0)
        return NNP_OK;
    m->head[m->heap[0]] = nnp__cl_cursor_next(&m->cur[m->heap[0]], &rc);
    if (rc != NNP_OK)
        return rc;
    if (!m->head[m->heap[0]])
        m->heap[0] = m->heap[--m->n_heap];
    if (m->n_heap > 0)
        sift_down(m, 0);
    return NNP_OK;
}

static const void *take(nnp_cl_merge_t *m, int *rc)
{
    const void *rec;
    size_t len;
    *rc = advance(m);
    if (*rc != NNP_OK || m->n_heap == 0)
        return NULL;
    rec = m->head[m->heap[0]];
    len = rec_len(rec, m->rec_size);
    if (len > m->hold_cap) {
        char *h = nnp__realloc(m->hold, len);
        if (!h) {
            *rc = nnp__fail(NNP_ENOMEM, "out of memory");
            return NULL;
        }
        m->hold = h;
        m->hold_cap = len;
    }
    memcpy(m->hold, rec, len);
    return m->hold;
}

int nnp__cl_merge_open(const nnp_cl_spill_t *s, size_t rec_size, nnp_cl_cmp_fn cmp, void *ctx,
                       const char *tmp_dir, nnp_cl_merge_t **out)
{
    nnp_cl_merge_t *m = nnp__calloc(1, sizeof(*m));
    const nnp_cl_spill_t *src = s;
    nnp_cl_spill_t tmp;
    int rc = NNP_OK;
    *out = NULL;
    if (!m)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    m->rec_size = rec_size;
    m->cmp = cmp;
    m->ctx = ctx;
    m->heap = nnp__calloc(MERGE_FAN_IN, sizeof(*m->heap));
    if (!m->heap) {
        nnp__free(m);
        return nnp__fail(NNP_ENOMEM, "out of memory");
    }
    /* Rounds: merge groups of MERGE_FAN_IN runs into one run each until few are left. */
    while (rc == NNP_OK && src->n_runs > MERGE_FAN_IN) {
        rc = nnp__cl_spill_init(&tmp, tmp_dir);
        for (size_t g = 0; rc == NNP_OK && g < src->n_runs; g += MERGE_FAN_IN) {
            size_t n = src->n_runs - g < MERGE_FAN_IN ? src->n_runs - g : MERGE_FAN_IN;
            nnp_cl_buf_t merged = {0};
            const void *rec;
            /* A merged group is written in pieces: one run built from several appends. */
            uint64_t first_off = tmp.end;
            rc = start_group(m, src, g, n);
            while (rc == NNP_OK && (rec = take(m, &rc)) != NULL) {
                nnp__cl_buf_add(&merged, rec, rec_len(rec, rec_size));
                if (merged.err)
                    rc = merged.err;
                else if (merged.len >= ROUND_FLUSH) {
                    rc = pwrite_all(tmp.fd, merged.p, merged.len, tmp.end);
                    tmp.end += merged.len;
                    merged.len = 0;
                }
            }
            if (rc == NNP_OK && merged.len > 0) {
                rc = pwrite_all(tmp.fd, merged.p, merged.len, tmp.end);
                tmp.end += merged.len;
            }
            nnp__cl_buf_fini(&merged);
            close_group(m);
            if (rc == NNP_OK) {
                uint64_t end = tmp.end;
                tmp.end = first_off; /* spill_add appends at end: record the range only */
                rc = nnp__cl_spill_add(&tmp, (int32_t)(g / MERGE_FAN_IN), NULL, 0);
                if (rc == NNP_OK)
                    tmp.runs[tmp.n_runs - 1].len = end - first_off;
                tmp.end = end;
            }
        }
        if (m->has_round)
            nnp__cl_spill_fini(&m->round);
        m->round = tmp;
        m->has_round = true;
        src = &m->round;
    }
    if (rc == NNP_OK)
        rc = start_group(m, src, 0, src->n_runs);
    if (rc != NNP_OK) {
        nnp__cl_merge_close(m);
        return rc;
    }
    *out = m;
    return NNP_OK;
}

const void *nnp__cl_merge_next(nnp_cl_merge_t *m, int *rc)
{
    return take(m, rc);
}

void nnp__cl_merge_close(nnp_cl_merge_t *m)
{
    if (!m)
        return;
    close_group(m);
    if (m->has_round)
        nnp__cl_spill_fini(&m->round);
    nnp__free(m->heap);
    nnp__free(m->hold);
    nnp__free(m);
}

/* ---- batches of equal keys ---- */

void nnp__cl_batch_init(nnp_cl_batch_t *b, nnp_cl_merge_t *m, size_t rec_size, nnp_cl_cmp_fn same,
                        void *ctx)
{
    memset(b, 0, sizeof(*b));
    b->m = m;
    b->rec_size = rec_size;
    b->same = same;
    b->ctx = ctx;
}

/* The last batch read one record past its end (the first that did not belong): it becomes
 * the first of this one. */
int nnp__cl_batch_next(nnp_cl_batch_t *b)
{
    size_t ahead = b->recs.len - b->used;
    int rc = NNP_OK;
    b->offs.len = 0;
    b->n = 0;
    if (ahead > 0) {
        size_t zero = 0;
        memmove(b->recs.p, b->recs.p + b->used, ahead);
        nnp__cl_buf_add(&b->offs, &zero, sizeof(zero));
        b->n = 1;
    }
    b->recs.len = b->used = ahead;
    while (!b->done && b->recs.err == NNP_OK && b->offs.err == NNP_OK) {
        const void *rec = nnp__cl_merge_next(b->m, &rc);
        size_t at = b->recs.len;
        if (rc != NNP_OK)
            return rc;
        if (!rec) {
            b->done = true;
            break;
        }
        nnp__cl_buf_add(&b->recs, rec, rec_len(rec, b->rec_size));
        if (b->recs.err != NNP_OK)
            break;
        if (b->n > 0 && b->same(b->recs.p, b->recs.p + at, b->ctx) != 0)
            break; /* the next batch's first record, kept past b->used */
        nnp__cl_buf_add(&b->offs, &at, sizeof(at));
        b->n++;
        b->used = b->recs.len;
    }
    return b->recs.err != NNP_OK ? b->recs.err : b->offs.err;
}

void *nnp__cl_batch_rec(const nnp_cl_batch_t *b, size_t i)
{
    size_t off;
    memcpy(&off, b->offs.p + i * sizeof(off), sizeof(off));
    return b->recs.p + off;
}

void nnp__cl_batch_fini(nnp_cl_batch_t *b)
{
    nnp__cl_buf_fini(&b->recs);
    nnp__cl_buf_fini(&b->offs);
}

int nnp__cl_sort_open(const nnp_cl_spill_t *src, nnp_cl_spill_t *sorted, size_t rec_size,
                      void (*fix)(void *rec, void *ctx), nnp_cl_cmp_fn cmp, void *ctx,
                      const char *tmp_dir, nnp_cl_merge_t **m)
{
    int rc = nnp__cl_spill_init(sorted, tmp_dir);
    *m = NULL;
    if (rc != NNP_OK)
        return rc;
    rc = nnp__cl_spill_resort(src, sorted, rec_size, fix, cmp, ctx);
    if (rc == NNP_OK)
        rc = nnp__cl_merge_open(sorted, rec_size, cmp, ctx, tmp_dir, m);
    if (rc != NNP_OK) {
        nnp__cl_merge_close(*m);
        *m = NULL;
        nnp__cl_spill_fini(sorted);
    }
    return rc;
}
