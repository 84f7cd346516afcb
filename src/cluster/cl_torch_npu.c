/* cl_torch_npu.c - one torch_npu rank folder (*_ascend_pt) as msprof-analyze reads it
 * (formats.md 1.10): ASCEND_PROFILER_OUTPUT/step_trace_time.csv (per step, us),
 * communication.json ({step: {p2p|collective: {op@group: {Communication Time Info,
 * Communication Bandwidth Info}}}}) and communication_matrix.json (links). A folder without
 * step_trace_time.csv is imported from its trace (import_torch_npu.c) and analysed like our
 * own data. The JSON op objects are parsed here for msprof-analyze's cluster files too. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cluster/cluster.h"
#include "read/csv_reader.h"
#include "read/importers.h"

#define OUTPUT_DIR      "ASCEND_PROFILER_OUTPUT"
#define STEP_TRACE_TIME "step_trace_time.csv"
#define COMMUNICATION   "communication.json"
#define COMM_MATRIX     "communication_matrix.json"
#define US_FRAC_DIGITS  3
#define NS_PER_MS       1000000.0
#define NS_PER_US       1000.0
#define BYTES_PER_MB    1000000.0 /* msprof: B -> MB is / 1e6 (formats.md 2.7) */
#define CSV_MAX         (256u * 1024u * 1024u)
#define JSON_MAX        (1024u * 1024u * 1024u)
#define GROUP_SEPARATOR '@'
#define TOTAL_OP_PREFIX "Total Op Info"
#define METADATA        "profiler_metadata.json"
/* msprof-analyze double_hash's primes. */
#define PG_PRIME_HIGH   29u
#define PG_PRIME_LOW    131u
#define STEP_KEY_PREFIX "step"

/* msprof-analyze's step columns, in our column order (NNP_CL_* value indexes). */
static const char *const mpa_cols[NNP_CL_MPA_COLS] = {
    "Computing",  "Communication(Not Overlapped)",
    "Overlapped", "Communication",
    "Free",       "Stage",
    "Bubble",     "Communication(Not Overlapped and Exclude Receive)",
    "Preparing"};

bool nnp__cl_mpa_header(const nnp_csv_reader_t *c, nnp_cl_mpa_cols_t *cols)
{
    cols->step = nnp__csv_col(c, "Step");
    for (size_t i = 0; i < NNP_CL_MPA_COLS; i++)
        cols->v[i] = nnp__csv_col(c, mpa_cols[i]);
    return cols->v[0] >= 0 && cols->v[1] >= 0 && cols->v[4] >= 0;
}

bool nnp__cl_mpa_row(const nnp_csv_reader_t *c, const nnp_cl_mpa_cols_t *cols, const char *path,
                     nnp_cl_step_rec_t *r)
{
    r->step_id = NNP_CL_NO_STEP;
    if (cols->step >= 0 && c->n > (size_t)cols->step && c->f[cols->step][0]) {
        char *end;
        r->step_id = strtoull(c->f[cols->step], &end, 10);
        if (*end)
            r->step_id = NNP_CL_NO_STEP;
    }
    for (size_t i = 0; i < NNP_CL_MPA_COLS; i++) {
        long k = cols->v[i];
        if (k < 0 || c->n <= (size_t)k || !c->f[k][0])
            continue;
        if (!nnp__parse_decimal_ns(c->f[k], US_FRAC_DIGITS, &r->v[i])) {
            NNP_LOG_W("%s:%llu: a value is not a number: row skipped", path,
                      (unsigned long long)c->line);
            return false;
        }
    }
    r->known = NNP_CL_MPA_MASK; /* missing columns read as 0, as msprof-analyze does */
    return true;
}

uint64_t nnp__cl_step_of_key(const char *key)
{
    char *end;
    unsigned long long v;
    size_t n = strlen(STEP_KEY_PREFIX);
    if (strncmp(key, STEP_KEY_PREFIX, n) != 0 || !key[n])
        return NNP_CL_NO_STEP;
    v = strtoull(key + n, &end, 10);
    return *end == '\0' && v != NNP_CL_NO_STEP ? v : NNP_CL_NO_STEP;
}

static int64_t ms_ns(const cJSON *v)
{
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble > 0
               ? (int64_t)llround(v->valuedouble * NS_PER_MS)
               : 0;
}

/* ---- communication.json op objects ---- */

int nnp__cl_comm_from_json(nnp_cl_sink_t *k, const char *step_key, const char *op_key,
                           const cJSON *op, int is_p2p)
{
    const cJSON *ti = cJSON_GetObjectItemCaseSensitive(op, "Communication Time Info");
    const cJSON *bi = cJSON_GetObjectItemCaseSensitive(op, "Communication Bandwidth Info");
    const cJSON *ty, *st;
    const char *at = strrchr(op_key, GROUP_SEPARATOR);
    nnp_cl_comm_rec_t r;
    nnp_cl_bw_t bw[NNP_CL_MAX_BW];
    nnp_cl_pkt_t *dist = NULL;
    uint32_t n_dist = 0;
    int rc;
    if (strncmp(op_key, TOTAL_OP_PREFIX, strlen(TOTAL_OP_PREFIX)) == 0)
        return NNP_OK; /* totals are recomputed */
    if (!cJSON_IsObject(ti))
        return nnp__fail(NNP_ECORRUPT, "op '%s' has no \"Communication Time Info\"", op_key);
    memset(&r, 0, sizeof(r));
    r.rank = k->sum->rank;
    r.step_id = nnp__cl_step_of_key(step_key);
    r.op = nnp__cl_intern(k->strs, op_key, at ? (size_t)(at - op_key) : strlen(op_key));
    r.group = nnp__cl_intern_cstr(k->strs, at ? at + 1 : "default");
    r.op_index = NNP_CL_NO_INDEX;
    if (is_p2p < 0) {
        /* From the key's text: the table may grow under another thread while read. */
        char name[NNP_NAME_MAX];
        size_t len = at ? (size_t)(at - op_key) : strlen(op_key);
        snprintf(name, sizeof(name), "%.*s", (int)(len < sizeof(name) ? len : sizeof(name) - 1),
                 op_key);
        is_p2p = nnp__cl_is_p2p_name(name);
    }
    r.flags = NNP_CL_COMM_GIVEN | (is_p2p ? NNP_CL_COMM_P2P : 0);
    st = cJSON_GetObjectItemCaseSensitive(ti, "Start Timestamp(us)");
    if (cJSON_IsNumber(st) && st->valuedouble > 0) {
        r.start_ns = (int64_t)llround(st->valuedouble * NS_PER_US);
        r.flags |= NNP_CL_COMM_HAS_START;
    }
    r.elapse_ns = ms_ns(cJSON_GetObjectItemCaseSensitive(ti, "Elapse Time(ms)"));
    r.transit_ns = ms_ns(cJSON_GetObjectItemCaseSensitive(ti, "Transit Time(ms)"));
    r.wait_ns = ms_ns(cJSON_GetObjectItemCaseSensitive(ti, "Wait Time(ms)"));
    if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(ti, "Synchronization Time(ms)")))
        r.sync_ns = ms_ns(cJSON_GetObjectItemCaseSensitive(ti, "Synchronization Time(ms)"));
    else
        r.flags |= NNP_CL_COMM_NO_SYNC;
    r.idle_ns = ms_ns(cJSON_GetObjectItemCaseSensitive(ti, "Idle Time(ms)"));
    dist = nnp__calloc(NNP_CL_MAX_DIST, sizeof(*dist));
    if (!dist)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    cJSON_ArrayForEach(ty, bi)
    {
        const cJSON *sd, *e;
        nnp_cl_bw_t *b;
        double mb;
        if (!ty->string || r.n_bw >= NNP_CL_MAX_BW || !cJSON_IsObject(ty))
            continue;
        b = &bw[r.n_bw];
        memset(b, 0, sizeof(*b));
        b->type = nnp__cl_intern_cstr(k->strs, ty->string);
        e = cJSON_GetObjectItemCaseSensitive(ty, "Transit Size(MB)");
        mb = cJSON_IsNumber(e) ? e->valuedouble : 0;
        b->bytes = isfinite(mb) && mb > 0 ? (uint64_t)llround(mb * BYTES_PER_MB) : 0;
        b->time_ns = ms_ns(cJSON_GetObjectItemCaseSensitive(ty, "Transit Time(ms)"));
        e = cJSON_GetObjectItemCaseSensitive(ty, "Large Packet Ratio");
        if (cJSON_IsNumber(e)) {
            b->large_ratio = e->valuedouble;
            b->flags |= NNP_CL_BW_HAS_RATIO;
        }
        sd = cJSON_GetObjectItemCaseSensitive(ty, "Size Distribution");
        cJSON_ArrayForEach(e, sd)
        {
            const cJSON *cnt = cJSON_GetArrayItem(e, 0), *tm = cJSON_GetArrayItem(e, 1);
            double size_mb;
            if (!e->string || n_dist >= NNP_CL_MAX_DIST || !cJSON_IsNumber(cnt))
                continue;
            size_mb = strtod(e->string, NULL);
            dist[n_dist].bw_index = r.n_bw;
            dist[n_dist].count = cnt->valuedouble > 0 ? (uint64_t)llround(cnt->valuedouble) : 0;
            dist[n_dist].size_bytes =
                isfinite(size_mb) && size_mb > 0 ? (uint64_t)llround(size_mb * BYTES_PER_MB) : 0;
            dist[n_dist].time_ns = ms_ns(tm);
            b->packets += dist[n_dist].count;
            n_dist++;
        }
        r.n_bw++;
    }
    r.n_dist = n_dist;
    nnp__cl_add_comm(k, &r, bw, dist);
    nnp__cl_note_group(k, r.group, is_p2p);
    nnp__free(dist);
    rc = k->comms.err;
    return rc;
}

void nnp__cl_double_hash(const char *name, char *out, size_t cap)
{
    /* msprof-analyze cluster_analyse/common_func/utils.py double_hash: two 32-bit
     * polynomial hashes of the characters (primes 29 and 131), high and low words. */
    uint32_t h0 = 0, h1 = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        h0 = h0 * PG_PRIME_HIGH + *p;
        h1 = h1 * PG_PRIME_LOW + *p;
    }
    snprintf(out, cap, "%" PRIu64, ((uint64_t)h0 << 32) | h1);
}

static const nnp_cl_pg_t *pg_of(const nnp_cl_pg_map_t *m, const char *group)
{
    for (size_t i = 0; m && i < m->n; i++)
        if (strcmp(m->v[i].key, group) == 0)
            return &m->v[i];
    return NULL;
}

int nnp__cl_links_from_json(nnp_cl_sink_t *k, const char *step_key, const char *op_key,
                            const cJSON *op, const nnp_cl_pg_map_t *local)
{
    const char *at = strrchr(op_key, GROUP_SEPARATOR);
    const char *group_s = at ? at + 1 : "default";
    const nnp_cl_pg_t *pg = local ? pg_of(local, group_s) : NULL;
    const cJSON *link;
    uint32_t group, name;
    if (strncmp(op_key, TOTAL_OP_PREFIX, strlen(TOTAL_OP_PREFIX)) == 0)
        return NNP_OK;
    name = nnp__cl_intern(k->strs, op_key, at ? (size_t)(at - op_key) : strlen(op_key));
    group = nnp__cl_intern_cstr(k->strs, group_s);
    cJSON_ArrayForEach(link, op)
    {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(link, "Transport Type"),
                    *sz = cJSON_GetObjectItemCaseSensitive(link, "Transit Size(MB)"),
                    *on = cJSON_GetObjectItemCaseSensitive(link, "Op Name");
        nnp_cl_link_rec_t l;
        int src, dst;
        if (!link->string || sscanf(link->string, "%d-%d", &src, &dst) != 2)
            continue;
        memset(&l, 0, sizeof(l));
        l.rank = k->sum->rank;
        l.src = src;
        l.dst = dst;
        l.group = group;
        l.op = name;
        l.op_index = NNP_CL_NO_INDEX;
        l.type = nnp__cl_intern_cstr(k->strs, cJSON_IsString(t) ? t->valuestring : "");
        if (cJSON_IsString(on) && on->valuestring[0])
            l.op_label = nnp__cl_intern_cstr(k->strs, on->valuestring);
        l.step_id = nnp__cl_step_of_key(step_key);
        l.bytes = cJSON_IsNumber(sz) && sz->valuedouble > 0
                      ? (uint64_t)llround(sz->valuedouble * BYTES_PER_MB)
                      : 0;
        l.time_ns = ms_ns(cJSON_GetObjectItemCaseSensitive(link, "Transit Time(ms)"));
        l.flags = local ? NNP_CL_LINK_LOCAL : 0;
        if (pg && src >= 0 && dst >= 0 && (size_t)src < pg->n && (size_t)dst < pg->n) {
            l.src = pg->ranks[src]; /* profiler_metadata.json names the group's ranks */
            l.dst = pg->ranks[dst];
            l.flags = 0;
        }
        l.bw_given = NAN;
        nnp__cl_add_link(k, &l);
    }
    return k->links.err;
}

/* ---- per-rank files ---- */

/* communication.json / communication_matrix.json: {step: {p2p|collective: {op: ...}}}.
 * pgs: non-NULL for the matrix (its link keys are ranks within the group). */
static int read_comm_file(nnp_cl_sink_t *k, const char *path, const nnp_cl_pg_map_t *pgs)
{
    bool matrix = pgs != NULL;
    cJSON *j = nnp__cl_read_json(path, JSON_MAX, true);
    const cJSON *step, *kind, *op;
    int rc = NNP_OK;
    if (!j)
        return NNP_OK;
    cJSON_ArrayForEach(step, j)
    {
        cJSON_ArrayForEach(kind, step)
        {
            int is_p2p = kind->string && strcmp(kind->string, "p2p") == 0          ? 1
                         : kind->string && strcmp(kind->string, "collective") == 0 ? 0
                                                                                   : -1;
            cJSON_ArrayForEach(op, kind)
            {
                if (!op->string || rc != NNP_OK)
                    continue;
                rc = matrix ? nnp__cl_links_from_json(k, step->string, op->string, op, pgs)
                            : nnp__cl_comm_from_json(k, step->string, op->string, op, is_p2p);
                if (rc == NNP_ECORRUPT) {
                    NNP_LOG_W("%s: %s: skipped", path, nnp_last_error());
                    rc = NNP_OK;
                }
            }
        }
    }
    cJSON_Delete(j);
    return rc;
}

static int read_step_trace_time(nnp_cl_sink_t *k, const char *path)
{
    nnp_csv_reader_t c;
    nnp_cl_mpa_cols_t cols;
    int rc = nnp__csv_open(&c, path, CSV_MAX), n;
    if (rc != NNP_OK)
        return rc;
    if (nnp__csv_next(&c) != 1) {
        nnp__csv_close(&c);
        return nnp__fail(NNP_ECORRUPT, "%s: empty file", path);
    }
    if (!nnp__cl_mpa_header(&c, &cols)) {
        nnp__csv_close(&c);
        return nnp__fail(NNP_ECORRUPT,
                         "%s: no Computing / Communication(Not Overlapped) / Free columns", path);
    }
    while ((n = nnp__csv_next(&c)) == 1) {
        nnp_cl_step_rec_t r;
        memset(&r, 0, sizeof(r));
        r.rank = k->sum->rank;
        if (nnp__cl_mpa_row(&c, &cols, path, &r))
            nnp__cl_add_step(k, &r);
    }
    nnp__csv_close(&c);
    return n < 0 ? n : NNP_OK;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void pg_map_fini(nnp_cl_pg_map_t *m)
{
    for (size_t i = 0; i < m->n; i++)
        nnp__free(m->v[i].ranks);
    nnp__free(m->v);
    m->v = NULL;
    m->n = 0;
}

/* profiler_metadata.json "parallel_group_info": {name: {"global_ranks": [...]}}; a missing
 * or bad file leaves the map empty (the links' own local ranks are used then). */
static int read_pg_map(const char *path, nnp_cl_pg_map_t *m)
{
    cJSON *j = access(path, R_OK) == 0 ? nnp__cl_read_json(path, JSON_MAX, true) : NULL;
    const cJSON *info = cJSON_GetObjectItemCaseSensitive(j, "parallel_group_info"), *g;
    size_t cap = (size_t)cJSON_GetArraySize(info);
    int rc = NNP_OK;
    memset(m, 0, sizeof(*m));
    if (cap > 0 && (m->v = nnp__calloc(cap, sizeof(*m->v))) == NULL)
        rc = nnp__fail(NNP_ENOMEM, "out of memory");
    cJSON_ArrayForEach(g, info)
    {
        const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(g, "global_ranks"), *r;
        nnp_cl_pg_t *pg;
        size_t n = (size_t)cJSON_GetArraySize(ranks);
        if (rc != NNP_OK || !g->string || !cJSON_IsArray(ranks) || n == 0 || m->n >= cap)
            continue;
        pg = &m->v[m->n];
        pg->ranks = nnp__calloc(n, sizeof(int));
        if (!pg->ranks) {
            rc = nnp__fail(NNP_ENOMEM, "out of memory");
            break;
        }
        cJSON_ArrayForEach(r, ranks)
        {
            if (!cJSON_IsNumber(r) || r->valuedouble < 0 || r->valuedouble >= NNP_CL_MAX_RANKS ||
                r->valuedouble != (double)(int)r->valuedouble)
                break;
            pg->ranks[pg->n++] = (int)r->valuedouble;
        }
        if (pg->n != n) {
            NNP_LOG_W("%s: group '%s': global_ranks are not all rank numbers: ignored", path,
                      g->string);
            nnp__free(pg->ranks);
            memset(pg, 0, sizeof(*pg));
            continue;
        }
        qsort(pg->ranks, pg->n, sizeof(int), cmp_int); /* msprof-analyze sorts them too */
        nnp__cl_double_hash(g->string, pg->key, sizeof(pg->key));
        m->n++;
    }
    cJSON_Delete(j);
    return rc;
}

int nnp__cl_read_torch_npu_rank(nnp_cl_sink_t *k, const nnp_cl_input_t *x)
{
    char out[NNP_PATH_MAX], p[NNP_PATH_MAX];
    nnp_cl_pg_map_t pgs;
    int rc;
    if (nnp__path_join(out, sizeof(out), x->path, OUTPUT_DIR) != NNP_OK ||
        nnp__path_join(p, sizeof(p), out, STEP_TRACE_TIME) != NNP_OK)
        return nnp__fail(NNP_ETOOLONG, "path too long: %s", x->path);
    if (access(p, R_OK) != 0) {
        /* No analysis of its own: import the trace and analyse it like ours. */
        nnp_cl_input_t y = *x;
        y.path = out;
        rc = nnp__cl_read_model_with(k, &y, &nnp__importer_torch_npu);
        nnp__strlcpy(k->sum->format, "torch_npu", sizeof(k->sum->format));
        return rc;
    }
    k->sum->rank = x->rank;
    k->sum->device_id = x->device_id;
    nnp__strlcpy(k->sum->host, x->host, sizeof(k->sum->host));
    nnp__strlcpy(k->sum->format, "torch_npu", sizeof(k->sum->format));
    rc = read_step_trace_time(k, p);
    if (rc == NNP_OK && nnp__path_join(p, sizeof(p), out, COMMUNICATION) == NNP_OK)
        rc = read_comm_file(k, p, NULL);
    if (rc == NNP_OK && nnp__path_join(p, sizeof(p), x->path, METADATA) == NNP_OK)
        rc = read_pg_map(p, &pgs);
    else
        memset(&pgs, 0, sizeof(pgs));
    if (rc == NNP_OK && nnp__path_join(p, sizeof(p), out, COMM_MATRIX) == NNP_OK)
        rc = read_comm_file(k, p, &pgs);
    pg_map_fini(&pgs);
    return rc;
}
