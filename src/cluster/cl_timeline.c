/* cl_timeline.c - the merged multi-rank timeline (cluster_timeline.json), as MindInsight's
 * msprof_timeline_analyser merges ranks (formats.md 1.4): each rank's timeline (written by
 * chrome_trace.c into the worker's scratch folder) is rewritten event by event - every
 * process becomes "<name> Rank{r}" with pid int(f"{kind}{rank}") (kinds: 1 Step Trace,
 * 2 host, 4 device, 5 communication, 7 Overlap Analysis, 8-9 others), timestamps move by the
 * rank's clock offset (info.json clock_sync) so all ranks share rank 0's clock, and flow ids
 * get the rank in their high bits. Numbers are rewritten as text (ts keeps every ns). The
 * fragments are spilled per rank and joined in rank order. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cl_driver.h"

#define OUT_FILE NNP_CL_TIMELINE_FILE
/* Read block of the per-rank file, and the largest event kept (an event is < 1 KiB; args of
 * a big op can be larger). */
#define READ_BLOCK (64u * 1024u)
#define EVENT_MAX  (16u * 1024u * 1024u)
/* Processes one rank may have, and the pid kinds (MindInsight's indexes). */
#define MAX_PROCS     64
#define KIND_STEPS    1
#define KIND_HOST     2
#define KIND_DEVICE   4
#define KIND_COMM     5
#define KIND_OVERLAP  7
#define KIND_OTHER    8
#define KIND_LAST     9
#define SORT_PER_RANK 100
#define NUM_BUF       48
#define NAME_BUF      512

typedef struct proc {
    int64_t pid;
    int kind;
    char name[NAME_BUF];
} proc_t;

typedef struct tl {
    proc_t procs[MAX_PROCS];
    int n_procs;
    int rank;
    int64_t offset_ns;
    int64_t pow10; /* 10^digits(rank): pid = kind * pow10 + rank */
    nnp_cl_buf_t *out;
    bool first;
} tl_t;

/* ---- a minimal JSON scanner over one element's text ---- */

static const char *ws(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    return p;
}

static const char *skip_string(const char *p, const char *e)
{
    p++; /* opening quote */
    while (p < e && *p != '"') {
        if (*p == '\\' && p + 1 < e)
            p++;
        p++;
    }
    return p < e ? p + 1 : e;
}

static const char *skip_value(const char *p, const char *e)
{
    int depth = 0;
    p = ws(p, e);
    if (p < e && *p == '"')
        return skip_string(p, e);
    while (p < e) {
        if (*p == '"') {
            p = skip_string(p, e);
            continue;
        }
        if (*p == '{' || *p == '[')
            depth++;
        else if (*p == '}' || *p == ']') {
            if (depth == 0)
                return p;
            if (--depth == 0)
                return p + 1;
        } else if (*p == ',' && depth == 0)
            return p;
        p++;
    }
    return e;
}

/* A member of the object [p, e): key and value spans. */
typedef struct member {
    const char *key;
    size_t key_len;
    const char *val, *val_end;
} member_t;

/* Up to cap top-level members of an object's text; returns how many. */
static int members(const char *p, const char *e, member_t *m, int cap)
{
    int n = 0;
    p = ws(p, e);
    if (p >= e || *p != '{')
        return 0;
    p++;
    while (p < e && n < cap) {
        const char *k;
        p = ws(p, e);
        if (p >= e || *p == '}')
            break;
        if (*p != '"')
            return n;
        k = p + 1;
        p = skip_string(p, e);
        m[n].key = k;
        m[n].key_len = (size_t)(p - 1 - k);
        p = ws(p, e);
        if (p >= e || *p != ':')
            return n;
        p = ws(p + 1, e);
        m[n].val = p;
        p = skip_value(p, e);
        m[n].val_end = p;
        n++;
        p = ws(p, e);
        if (p < e && *p == ',')
            p++;
    }
    return n;
}

static const member_t *find(const member_t *m, int n, const char *key)
{
    size_t len = strlen(key);
    for (int i = 0; i < n; i++)
        if (m[i].key_len == len && memcmp(m[i].key, key, len) == 0)
            return &m[i];
    return NULL;
}

static bool str_is(const member_t *m, const char *s)
{
    size_t len = strlen(s);
    return m && m->val_end - m->val == (ptrdiff_t)len + 2 && m->val[0] == '"' &&
           memcmp(m->val + 1, s, len) == 0;
}

static bool int_of(const member_t *m, int64_t *v)
{
    char buf[NUM_BUF], *end;
    size_t len;
    if (!m)
        return false;
    len = (size_t)(m->val_end - m->val);
    if (len == 0 || len >= sizeof(buf))
        return false;
    memcpy(buf, m->val, len);
    buf[len] = '\0';
    *v = strtoll(buf, &end, 10);
    return end != buf && *ws(end, end + strlen(end)) == '\0';
}

/* ---- reading the per-rank file element by element ---- */

typedef int (*elem_fn)(tl_t *t, const char *p, size_t n);

static int each_element(const char *path, tl_t *t, elem_fn fn)
{
    FILE *f = fopen(path, "rb");
    char *blk = NULL;
    nnp_cl_buf_t el = {0};
    int depth = 0, rc = NNP_OK;
    bool in_str = false, esc = false, skipping = false;
    size_t got;
    if (!f)
        return nnp__fail(NNP_EIO, "cannot read %s", path);
    blk = nnp__malloc(READ_BLOCK);
    if (!blk) {
        fclose(f);
        return nnp__fail(NNP_ENOMEM, "out of memory");
    }
    while (rc == NNP_OK && (got = fread(blk, 1, READ_BLOCK, f)) > 0) {
        for (size_t i = 0; rc == NNP_OK && i < got; i++) {
            char c = blk[i];
            if (depth >= 2 && !skipping) {
                nnp__cl_buf_add(&el, &c, 1);
                if (el.len > EVENT_MAX) {
                    skipping = true; /* an event too large to keep: left out */
                    el.len = 0;
                }
            }
            if (in_str) {
                if (esc)
                    esc = false;
                else if (c == '\\')
                    esc = true;
                else if (c == '"')
                    in_str = false;
                continue;
            }
            if (c == '"') {
                in_str = true;
            } else if (c == '[' || c == '{') {
                if (++depth == 2 && !skipping) {
                    el.len = 0;
                    nnp__cl_buf_add(&el, &c, 1);
                }
            } else if (c == ']' || c == '}') {
                if (depth-- == 2) {
                    if (!skipping && el.err == NNP_OK)
                        rc = fn(t, el.p, el.len);
                    skipping = false;
                    el.len = 0;
                }
            }
        }
    }
    if (rc == NNP_OK && el.err)
        rc = el.err;
    nnp__cl_buf_fini(&el);
    nnp__free(blk);
    fclose(f);
    return rc;
}

/* ---- first pass: process names ---- */

static int kind_of(tl_t *t, const char *name)
{
    if (strcmp(name, "Step Trace") == 0)
        return KIND_STEPS;
    if (strcmp(name, "Host") == 0)
        return KIND_HOST;
    if (strcmp(name, "Communication") == 0)
        return KIND_COMM;
    if (strcmp(name, "Overlap Analysis") == 0)
        return KIND_OVERLAP;
    if (strncmp(name, "Device", 6) == 0) {
        for (int i = 0; i < t->n_procs; i++)
            if (t->procs[i].kind == KIND_DEVICE)
                goto other;
        return KIND_DEVICE;
    }
other:
    for (int k = KIND_OTHER; k <= KIND_LAST; k++) {
        bool used = false;
        for (int i = 0; i < t->n_procs; i++)
            used = used || t->procs[i].kind == k;
        if (!used)
            return k;
    }
    return KIND_LAST; /* more processes than kinds: they share the last pid */
}

static int collect(tl_t *t, const char *p, size_t n)
{
    member_t m[16], a[8];
    int k = members(p, p + n, m, 16), ka;
    const member_t *name = find(m, k, "name"), *pid = find(m, k, "pid"), *args = find(m, k, "args");
    const member_t *an;
    int64_t v;
    if (!str_is(name, "process_name") || !int_of(pid, &v) || !args || t->n_procs >= MAX_PROCS)
        return NNP_OK;
    ka = members(args->val, args->val_end, a, 8);
    an = find(a, ka, "name");
    if (!an || an->val[0] != '"')
        return NNP_OK;
    t->procs[t->n_procs].pid = v;
    snprintf(t->procs[t->n_procs].name, NAME_BUF, "%.*s", (int)(an->val_end - an->val - 2),
             an->val + 1);
    t->procs[t->n_procs].kind = kind_of(t, t->procs[t->n_procs].name);
    t->n_procs++;
    return NNP_OK;
}

/* ---- second pass: rewriting ---- */

static int64_t new_pid(const tl_t *t, int64_t pid)
{
    for (int i = 0; i < t->n_procs; i++)
        if (t->procs[i].pid == pid)
            return t->procs[i].kind * t->pow10 + t->rank;
    return KIND_LAST * t->pow10 + t->rank;
}

static const proc_t *proc_of(const tl_t *t, int64_t pid)
{
    for (int i = 0; i < t->n_procs; i++)
        if (t->procs[i].pid == pid)
            return &t->procs[i];
    return NULL;
}

static void put(tl_t *t, const char *s, size_t n)
{
    nnp__cl_buf_add(t->out, s, n);
}

static void puts_(tl_t *t, const char *s)
{
    put(t, s, strlen(s));
}

static int rewrite(tl_t *t, const char *p, size_t n)
{
    member_t m[24];
    int k = members(p, p + n, m, 24);
    const member_t *name = find(m, k, "name"), *pid = find(m, k, "pid");
    int64_t pv = 0;
    bool is_pname = str_is(name, "process_name"), is_psort = str_is(name, "process_sort_index");
    char buf[NAME_BUF + NUM_BUF];
    if (k == 0)
        return NNP_OK;
    (void)int_of(pid, &pv);
    puts_(t, t->first ? "\n" : ",\n");
    t->first = false;
    put(t, "{", 1);
    for (int i = 0; i < k; i++) {
        const member_t *x = &m[i];
        int64_t v;
        if (i)
            put(t, ",", 1);
        put(t, x->key - 1, x->key_len + 2);
        put(t, ":", 1);
        if (x->key_len == 3 && memcmp(x->key, "pid", 3) == 0 && int_of(x, &v)) {
            snprintf(buf, sizeof(buf), "%" PRId64, new_pid(t, v));
            puts_(t, buf);
        } else if (x->key_len == 2 && memcmp(x->key, "ts", 2) == 0) {
            char num[NUM_BUF];
            int64_t ns;
            size_t len = (size_t)(x->val_end - x->val);
            if (len < sizeof(num)) {
                memcpy(num, x->val, len);
                num[len] = '\0';
            } else {
                num[0] = '\0';
            }
            if (num[0] && nnp__parse_decimal_ns(num, 3, &ns))
                puts_(t, nnp__fmt_ns_as_us(buf, sizeof(buf), ns + t->offset_ns));
            else
                put(t, x->val, len);
        } else if (x->key_len == 2 && memcmp(x->key, "id", 2) == 0 && int_of(x, &v) && v >= 0 &&
                   v < ((int64_t)1 << 32)) {
            /* Flow ids are per rank: the rank goes above them. */
            snprintf(buf, sizeof(buf), "%" PRId64, ((int64_t)t->rank << 32) | v);
            puts_(t, buf);
        } else if (x->key_len == 4 && memcmp(x->key, "args", 4) == 0 && (is_pname || is_psort)) {
            const proc_t *pr = proc_of(t, pv);
            member_t a[8];
            int ka = members(x->val, x->val_end, a, 8);
            int64_t sort = 0;
            if (is_pname) {
                /* "<name> Rank{r}" (MindInsight), the name escaped as it was. */
                const member_t *an = find(a, ka, "name");
                put(t, "{\"name\":", 8);
                if (an && an->val[0] == '"') {
                    put(t, an->val, (size_t)(an->val_end - an->val - 1));
                    snprintf(buf, sizeof(buf), " Rank%d\"", t->rank);
                    puts_(t, buf);
                } else {
                    snprintf(buf, sizeof(buf), "\"%s Rank%d\"", pr ? pr->name : "process", t->rank);
                    puts_(t, buf);
                }
                put(t, "}", 1);
            } else {
                (void)int_of(find(a, ka, "sort_index"), &sort);
                snprintf(buf, sizeof(buf), "{\"sort_index\":%" PRId64 "}",
                         (int64_t)t->rank * SORT_PER_RANK + sort);
                puts_(t, buf);
            }
        } else {
            put(t, x->val, (size_t)(x->val_end - x->val));
        }
    }
    put(t, "}", 1);
    return t->out->err;
}

int nnp__cl_timeline_fragment(const char *trace_path, int rank, int64_t offset_ns,
                              nnp_cl_buf_t *out)
{
    tl_t *t = nnp__calloc(1, sizeof(*t));
    int rc;
    if (!t)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    t->rank = rank;
    t->offset_ns = offset_ns;
    t->out = out;
    t->first = true;
    t->pow10 = 1;
    for (int r = rank; r > 0; r /= 10)
        t->pow10 *= 10;
    if (rank == 0)
        t->pow10 = 10;
    rc = each_element(trace_path, t, collect);
    if (rc == NNP_OK)
        rc = each_element(trace_path, t, rewrite);
    nnp__free(t);
    return rc;
}

int nnp__cl_write_timeline(nnp_cl_data_t *d)
{
    nnp_outfile_t f;
    char *buf = NULL;
    size_t cap = 0;
    bool first = true;
    int rc = nnp__cl_out_open(d, &f, OUT_FILE);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__write_all(f.fd, "[", 1);
    /* Runs are sorted by rank: the fragments join in rank order. */
    for (size_t i = 0; rc == NNP_OK && i < d->timeline.n_runs; i++) {
        const nnp_cl_run_t *r = &d->timeline.runs[i];
        if (r->len == 0)
            continue;
        if (r->len > cap) {
            char *nb = nnp__realloc(buf, (size_t)r->len);
            if (!nb) {
                rc = nnp__fail(NNP_ENOMEM, "out of memory");
                break;
            }
            buf = nb;
            cap = (size_t)r->len;
        }
        rc = nnp__cl_spill_read(&d->timeline, r->off, buf, (size_t)r->len);
        /* Each fragment starts with "\n"; the ones after the first need a comma. */
        if (rc == NNP_OK && !first)
            rc = nnp__write_all(f.fd, ",", 1);
        if (rc == NNP_OK)
            rc = nnp__write_all(f.fd, buf, (size_t)r->len);
        first = false;
    }
    if (rc == NNP_OK)
        rc = nnp__write_all(f.fd, "\n]\n", 3);
    nnp__free(buf);
    return nnp__out_commit(&f, rc);
}
