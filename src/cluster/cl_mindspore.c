/* cl_mindspore.c - one rank of MindSpore's per-rank files, as MindInsight's cluster pages
 * read them (formats.md 1.1, 1.10, 2.6): step_trace_raw_{rank}_detail_time.csv (step points
 * and communication op spans, 10 ns ticks; the '-' row is what MindInsight shows as the
 * average), ascend_cluster_analyse_{mode}_{stages}_{size}_{rank}.csv (per step computation
 * and exposed communication in ms; its last row is the average), hccl_raw_{rank}.csv (per
 * op costs and link_info per step; '-' row: the links MindInsight's slow-link rule reads)
 * and flops_summary_{rank}.json. msprof-analyze's columns are mapped from these (docs/
 * CLUSTER.md "MindSpore data"). A bad row or cell is logged with file and line and skipped. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cluster/cluster.h"
#include "read/csv_reader.h"

/* 10 ns system-counter ticks (MindInsight PER_MS_SYSCNT = 1e5 per ms). */
#define NS_PER_TICK 10
/* ms decimals down to one ns. */
#define MS_FRAC_DIGITS 6
#define NS_PER_MS      1000000.0
/* MindSpore 1.x hccl_raw sizes are KB (formats.md 2.7). */
#define BYTES_PER_KB 1000.0
/* Files read whole: a rank's step trace of thousands of steps and ops fits. */
#define CSV_MAX  (256u * 1024u * 1024u)
#define JSON_MAX (16u * 1024u * 1024u)
/* The group of MindSpore 1.x communication, which names none. */
#define MS_GROUP "default"
/* Longest file name we build. */
#define NAME_CAP 256
/* Step rows of one file (a rank profiles a few to a few thousand steps). */
#define MAX_STEPS (1u << 20)

/* One step of the step trace, in ns. */
typedef struct ms_step {
    uint64_t id;
    int64_t start, end, total, fp, bp, interval, fp_bp, tail;
    int64_t comm, comm_outside, recv_outside; /* union of comm spans; outside fp..bp */
    bool has_ms;
    int64_t ms[5]; /* ascend_cluster_analyse values of this step */
    uint32_t ms_known;
} ms_step_t;

typedef struct ms_rank {
    ms_step_t *steps;
    size_t n, cap;
} ms_rank_t;

static bool cell_ticks(const char *s, int64_t *ns)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || v < 0 || v > INT64_MAX / NS_PER_TICK)
        return false;
    *ns = v * NS_PER_TICK;
    return true;
}

static ms_step_t *step_of(ms_rank_t *r, uint64_t id)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->steps[i].id == id)
            return &r->steps[i];
    return NULL;
}

/* ---- step_trace_raw_{rank}_detail_time.csv ---- */

typedef struct span {
    int64_t s, e;
    bool recv;
} span_t;

static int cmp_span(const void *a, const void *b)
{
    const span_t *x = a, *y = b;
    return (x->s > y->s) - (x->s < y->s);
}

/* Union length of spans, and the parts outside [fp, bp] (all, and of receives). */
static void comm_times(span_t *v, size_t n, ms_step_t *st)
{
    int64_t cur_s = 0, cur_e = INT64_MIN;
    qsort(v, n, sizeof(*v), cmp_span);
    st->comm = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && v[i].s <= cur_e) {
            if (v[i].e > cur_e)
                cur_e = v[i].e;
            continue;
        }
        if (cur_e > cur_s) {
            int64_t in_s = cur_s > st->fp ? cur_s : st->fp, in_e = cur_e < st->bp ? cur_e : st->bp;
            st->comm += cur_e - cur_s;
            st->comm_outside += (cur_e - cur_s) - (in_e > in_s ? in_e - in_s : 0);
        }
        if (i < n) {
            cur_s = v[i].s;
            cur_e = v[i].e;
        }
    }
    for (size_t i = 0; i < n; i++) {
        int64_t in_s, in_e;
        if (!v[i].recv)
            continue;
        in_s = v[i].s > st->fp ? v[i].s : st->fp;
        in_e = v[i].e < st->bp ? v[i].e : st->bp;
        st->recv_outside += (v[i].e - v[i].s) - (in_e > in_s ? in_e - in_s : 0);
    }
}

static int read_step_trace(const char *path, nnp_cl_rank_t *sum, ms_rank_t *r)
{
    nnp_csv_reader_t c;
    long col[9];
    static const char *const names[9] = {
        "step_num", "start_point",        "end_point", "total", "fp_point",
        "bp_point", "iteration_interval", "fp_and_bp", "tail"};
    long *start_cols = NULL, *end_cols = NULL;
    bool *is_recv = NULL;
    size_t n_tri = 0;
    span_t *spans = NULL;
    int rc = nnp__csv_open(&c, path, CSV_MAX), k;
    if (rc != NNP_OK)
        return rc;
    if ((k = nnp__csv_next(&c)) != 1) {
        nnp__csv_close(&c);
        return nnp__fail(NNP_ECORRUPT, "%s: empty file", path);
    }
    for (int i = 0; i < 9; i++)
        col[i] = nnp__csv_col(&c, names[i]);
    if (col[0] < 0 || col[1] < 0 || col[2] < 0 || col[3] < 0) {
        nnp__csv_close(&c);
        return nnp__fail(NNP_ECORRUPT, "%s: no step_num/start_point/end_point/total columns", path);
    }
    /* Communication ops: each X_start_point with its X_end_point. */
    start_cols = nnp__calloc(c.n + 1, sizeof(long));
    end_cols = nnp__calloc(c.n + 1, sizeof(long));
    is_recv = nnp__calloc(c.n + 1, sizeof(bool));
    spans = nnp__calloc(c.n + 1, sizeof(span_t));
    if (!start_cols || !end_cols || !is_recv || !spans) {
        rc = nnp__fail(NNP_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < c.n; i++) {
        const char *h = c.f[i];
        size_t len = strlen(h), sl = strlen("_start_point");
        char want[NAME_CAP];
        long e;
        if (len <= sl || strcmp(h + len - sl, "_start_point") != 0 || len - sl + 11 > NAME_CAP)
            continue;
        snprintf(want, sizeof(want), "%.*s_end_point", (int)(len - sl), h);
        e = nnp__csv_col(&c, want);
        if (e < 0)
            continue;
        start_cols[n_tri] = (long)i;
        end_cols[n_tri] = e;
        is_recv[n_tri] = strstr(h, "Receive") != NULL || strstr(h, "receive") != NULL;
        n_tri++;
    }
    while ((k = nnp__csv_next(&c)) == 1) {
        ms_step_t st;
        int64_t v[9];
        bool ok = c.n > (size_t)col[3];
        memset(&st, 0, sizeof(st));
        if (ok && strcmp(c.f[col[0]], "-") == 0) {
            /* The row MindInsight shows as the average (its own rounding, taken as is). */
            int64_t a[4];
            if (col[6] >= 0 && col[7] >= 0 && col[8] >= 0 && c.n > (size_t)col[8] &&
                cell_ticks(c.f[col[6]], &a[0]) && cell_ticks(c.f[col[7]], &a[1]) &&
                cell_ticks(c.f[col[8]], &a[2]) && cell_ticks(c.f[col[3]], &a[3])) {
                memcpy(sum->mi_avg_ns, a, sizeof(a));
                sum->flags |= NNP_CL_RANK_MI_AVG;
            }
            continue;
        }
        for (int i = 0; ok && i < 9; i++) {
            v[i] = 0;
            if (col[i] >= 0 && (c.n <= (size_t)col[i] || !cell_ticks(c.f[col[i]], &v[i])))
                ok = false;
        }
        if (!ok || v[0] <= 0 || v[2] <= v[1]) {
            NNP_LOG_W("%s:%llu: not a step row: skipped", path, (unsigned long long)c.line);
            continue;
        }
        if (r->n >= MAX_STEPS)
            break;
        st.id = (uint64_t)(v[0] / NS_PER_TICK);
        st.start = v[1];
        st.end = v[2];
        st.total = v[3];
        st.fp = col[4] >= 0 ? v[4] : v[1];
        st.bp = col[5] >= 0 ? v[5] : v[2];
        st.interval = v[6];
        st.fp_bp = col[7] >= 0 ? v[7] : st.bp - st.fp;
        st.tail = v[8];
        {
            size_t n_sp = 0;
            for (size_t t = 0; t < n_tri; t++) {
                int64_t s, e;
                if (c.n > (size_t)end_cols[t] && cell_ticks(c.f[start_cols[t]], &s) &&
                    cell_ticks(c.f[end_cols[t]], &e) && e > s && s > 0)
                    spans[n_sp++] = (span_t){s, e, is_recv[t]};
            }
            comm_times(spans, n_sp, &st);
        }
        if (r->n == r->cap) {
            size_t ncap = r->cap ? r->cap * 2 : 64;
            ms_step_t *nv = nnp__realloc(r->steps, ncap * sizeof(*nv));
            if (!nv) {
                rc = nnp__fail(NNP_ENOMEM, "out of memory");
                goto out;
            }
            r->steps = nv;
            r->cap = ncap;
        }
        r->steps[r->n++] = st;
    }
    if (k < 0)
        rc = k;
out:
    nnp__free(start_cols);
    nnp__free(end_cols);
    nnp__free(is_recv);
    nnp__free(spans);
    nnp__csv_close(&c);
    return rc;
}

/* ---- ascend_cluster_analyse_{mode}_{stages}_{size}_{rank}.csv ---- */

static int read_cluster_file(const char *dir, int rank, nnp_cl_rank_t *sum, ms_rank_t *r)
{
    static const char *const cols[5][2] = {
        {"computation_time", "computation"},
        {"communication_alone_time", "communication_alone"},
        {"stage_time", "stage"},
        {"receive_alone_time", "receive_alone"},
        {"collective_communication_alone_time", "collective_communication_time"}};
    char name[NAME_CAP], path[NNP_PATH_MAX], mode[NNP_CL_MODE_MAX];
    nnp_csv_reader_t c;
    long col[5];
    int stages = 0, size = 0, k, found = 0;
    int64_t(*rows)[5] = NULL;
    uint32_t *known = NULL;
    size_t n = 0, cap = 0;
    int rc = NNP_OK;
    /* The mode, stages and size are in the name: find the file by its rank suffix. */
    {
        DIR *d = opendir(dir);
        struct dirent *e;
        if (!d)
            return NNP_OK;
        while ((e = readdir(d)) != NULL) {
            int rr;
            if (strncmp(e->d_name, "ascend_cluster_analyse_", 23) == 0 &&
                sscanf(e->d_name + 23, "%23[a-z-]_%d_%d_%d.csv", mode, &stages, &size, &rr) == 4 &&
                rr == rank) {
                nnp__strlcpy(name, e->d_name, sizeof(name));
                found = 1;
                break;
            }
        }
        closedir(d);
    }
    if (!found)
        return NNP_OK;
    nnp__strlcpy(sum->parallel_mode, mode, sizeof(sum->parallel_mode));
    sum->stage_num = stages;
    sum->rank_size = size;
    if (strcmp(mode, "data-parallel") == 0)
        return NNP_OK; /* its columns are the step trace's phases, read from there */
    if (nnp__path_join(path, sizeof(path), dir, name) != NNP_OK)
        return NNP_OK;
    rc = nnp__csv_open(&c, path, CSV_MAX);
    if (rc != NNP_OK)
        return rc;
    if (nnp__csv_next(&c) != 1) {
        nnp__csv_close(&c);
        NNP_LOG_W("%s: empty file: skipped", path);
        return NNP_OK;
    }
    for (int i = 0; i < 5; i++) {
        col[i] = nnp__csv_col(&c, cols[i][0]);
        if (col[i] < 0)
            col[i] = nnp__csv_col(&c, cols[i][1]);
    }
    while ((k = nnp__csv_next(&c)) == 1) {
        int64_t v[5] = {0};
        uint32_t kn = 0;
        for (int i = 0; i < 5; i++) {
            if (col[i] < 0 || c.n <= (size_t)col[i])
                continue;
            if (nnp__parse_decimal_ns(c.f[col[i]], MS_FRAC_DIGITS, &v[i]) && v[i] >= 0)
                kn |= 1u << i;
            else
                NNP_LOG_W("%s:%llu: column %d is not a time in ms: left out", path,
                          (unsigned long long)c.line, i + 1);
        }
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            void *nr = nnp__realloc(rows, ncap * sizeof(*rows));
            uint32_t *nk;
            if (!nr) {
                rc = nnp__fail(NNP_ENOMEM, "out of memory");
                break;
            }
            rows = nr;
            nk = nnp__realloc(known, ncap * sizeof(*nk));
            if (!nk) {
                rc = nnp__fail(NNP_ENOMEM, "out of memory");
                break;
            }
            known = nk;
            cap = ncap;
        }
        memcpy(rows[n], v, sizeof(v));
        known[n++] = kn;
    }
    nnp__csv_close(&c);
    /* MindInsight: line N is step N, the last line the average (one line: both). */
    for (size_t i = 0; rc == NNP_OK && i < n; i++) {
        bool last = i + 1 == n;
        if (!last || n == 1) {
            ms_step_t *st = step_of(r, (uint64_t)(i + 1));
            if (st) {
                st->has_ms = true;
                memcpy(st->ms, rows[i], sizeof(st->ms));
                st->ms_known = known[i];
            }
        }
        if (last) {
            memcpy(sum->ms_avg_ns, rows[i], sizeof(sum->ms_avg_ns));
            sum->flags |= NNP_CL_RANK_MS_AVG;
        }
    }
    nnp__free(rows);
    nnp__free(known);
    return rc;
}

/* ---- step rows for the sink ---- */

static void emit_steps(nnp_cl_sink_t *k, const ms_rank_t *r)
{
    for (size_t i = 0; i < r->n; i++) {
        const ms_step_t *st = &r->steps[i];
        nnp_cl_step_rec_t o;
        int64_t comp, cno, bubble, coll;
        memset(&o, 0, sizeof(o));
        o.rank = k->sum->rank;
        o.step_id = st->id;
        o.v[NNP_CL_ITER_INTERVAL] = st->interval;
        o.v[NNP_CL_FP_AND_BP] = st->fp_bp;
        o.v[NNP_CL_TAIL] = st->tail;
        o.v[NNP_CL_TOTAL] = st->total;
        o.known = NNP_CL_MI_MASK | NNP_CL_MPA_MASK;
        if (st->has_ms && (st->ms_known & 0x3u) == 0x3u) {
            /* MindSpore's own split: computation and exposed communication. */
            comp = st->ms[0];
            cno = st->ms[1];
            bubble = st->ms_known & 0x8u ? st->ms[3] : 0;
            coll = st->ms_known & 0x10u ? st->ms[4] : cno - bubble;
            for (int c = 0; c < 5; c++) {
                if (st->ms_known & (1u << c)) {
                    o.v[NNP_CL_MS_COMPUTATION + c] = st->ms[c];
                    o.known |= NNP_CL_BIT(NNP_CL_MS_COMPUTATION + c);
                }
            }
        } else {
            /* No split in the data: forward and backward compute, the communication outside
             * them is exposed (docs/CLUSTER.md: estimated from the step points). */
            comp = st->fp_bp;
            cno = st->comm_outside;
            bubble = st->recv_outside;
            coll = cno - bubble;
        }
        o.v[NNP_CL_COMPUTING] = comp;
        o.v[NNP_CL_COMM_NOT_OVERLAPPED] = cno;
        o.v[NNP_CL_COMMUNICATION] = st->comm > cno ? st->comm : cno;
        o.v[NNP_CL_OVERLAPPED] = o.v[NNP_CL_COMMUNICATION] - cno;
        o.v[NNP_CL_FREE] = st->total - comp - cno > 0 ? st->total - comp - cno : 0;
        o.v[NNP_CL_BUBBLE] = bubble;
        o.v[NNP_CL_STAGE] = o.v[NNP_CL_FREE] + comp + cno - bubble;
        o.v[NNP_CL_COMM_NO_EXCL_RECV] = coll;
        o.v[NNP_CL_PREPARING] = st->interval;
        nnp__cl_add_step(k, &o);
    }
}

/* ---- hccl_raw_{rank}.csv ---- */

static int64_t ms_to_ns(double ms)
{
    return isfinite(ms) && ms > 0 ? (int64_t)llround(ms * NS_PER_MS) : 0;
}

/* link_info {"src-dst": {"SDMA": [ms, KB, KB/s (, wait)]}} into bandwidth entries and
 * links. flags NNP_CL_LINK_LOCAL: the ranks are the group's. */
static void link_info(nnp_cl_sink_t *k, const cJSON *li, const nnp_cl_comm_rec_t *r,
                      nnp_cl_bw_t *bw, uint32_t *n_bw, bool mi_avg)
{
    const cJSON *pair;
    cJSON_ArrayForEach(pair, li)
    {
        const cJSON *ty;
        int src, dst;
        if (!pair->string || sscanf(pair->string, "%d-%d", &src, &dst) != 2)
            continue;
        cJSON_ArrayForEach(ty, pair)
        {
            const cJSON *t = cJSON_GetArrayItem(ty, 0), *s = cJSON_GetArrayItem(ty, 1),
                        *b = cJSON_GetArrayItem(ty, 2);
            nnp_cl_link_rec_t l;
            uint32_t type;
            if (!ty->string || !cJSON_IsNumber(t) || !cJSON_IsNumber(s))
                continue;
            type = nnp__cl_intern_cstr(k->strs, ty->string);
            memset(&l, 0, sizeof(l));
            l.rank = k->sum->rank;
            l.src = src;
            l.dst = dst;
            l.group = r->group;
            l.op = r->op;
            l.op_index = r->op_index;
            l.type = type;
            l.step_id = r->step_id;
            l.bytes = s->valuedouble > 0 ? (uint64_t)llround(s->valuedouble * BYTES_PER_KB) : 0;
            l.time_ns = ms_to_ns(t->valuedouble);
            l.flags = NNP_CL_LINK_LOCAL | (mi_avg ? NNP_CL_LINK_MI_AVG : 0);
            l.bw_given = cJSON_IsNumber(b) ? b->valuedouble : NAN;
            nnp__cl_add_link(k, &l);
            if (!bw || src == dst)
                continue; /* a rank's local copy is no transfer between ranks */
            for (uint32_t i = 0; i <= *n_bw && i < NNP_CL_MAX_BW; i++) {
                if (i == *n_bw) {
                    memset(&bw[i], 0, sizeof(bw[i]));
                    bw[i].type = type;
                    (*n_bw)++;
                }
                if (bw[i].type == type) {
                    bw[i].bytes += l.bytes;
                    bw[i].time_ns += l.time_ns;
                    bw[i].packets++;
                    break;
                }
            }
        }
    }
}

/* "stream_41_0_AllReduce-op4582" -> "AllReduce-op4582": the stream and task ids differ from
 * rank to rank, the op (its graph's name for it) is what the ranks of a group share. */
static const char *op_name(const char *s)
{
    const char *p = s;
    if (strncmp(p, "stream_", 7) != 0)
        return s;
    p += 7;
    for (int field = 0; field < 2; field++) {
        if (*p < '0' || *p > '9')
            return s;
        while (*p >= '0' && *p <= '9')
            p++;
        if (*p != '_')
            return s;
        p++;
    }
    return *p ? p : s;
}

static int read_hccl(nnp_cl_sink_t *k, const char *dir, int rank)
{
    char name[NAME_CAP], path[NNP_PATH_MAX];
    nnp_csv_reader_t c;
    long c_step, c_links, c_ops;
    uint32_t group = nnp__cl_intern_cstr(k->strs, MS_GROUP);
    int rc, n;
    snprintf(name, sizeof(name), "hccl_raw_%d.csv", rank);
    if (nnp__path_join(path, sizeof(path), dir, name) != NNP_OK)
        return NNP_OK;
    rc = nnp__csv_open(&c, path, CSV_MAX);
    if (rc != NNP_OK) {
        nnp__clear_error();
        return NNP_OK; /* no communication file: the rank had none recorded */
    }
    if (nnp__csv_next(&c) != 1) {
        nnp__csv_close(&c);
        return NNP_OK;
    }
    c_step = nnp__csv_col(&c, "step_num");
    c_links = nnp__csv_col(&c, "link_info");
    c_ops = nnp__csv_col(&c, "communication_operator_cost");
    while ((n = nnp__csv_next(&c)) == 1) {
        bool avg;
        cJSON *ops;
        const cJSON *op;
        if (c_step < 0 || c.n <= (size_t)c_step)
            continue;
        avg = strcmp(c.f[c_step], "-") == 0;
        if (avg) {
            /* The average row's links: MindInsight's slow-link rule reads these. */
            cJSON *li = c_links >= 0 && c.n > (size_t)c_links ? cJSON_Parse(c.f[c_links]) : NULL;
            nnp_cl_comm_rec_t none;
            memset(&none, 0, sizeof(none));
            none.step_id = NNP_CL_NO_STEP;
            none.group = group;
            if (li)
                link_info(k, li, &none, NULL, NULL, true);
            else
                NNP_LOG_W("%s:%llu: link_info is not JSON: skipped", path,
                          (unsigned long long)c.line);
            cJSON_Delete(li);
            continue;
        }
        ops = c_ops >= 0 && c.n > (size_t)c_ops ? cJSON_Parse(c.f[c_ops]) : NULL;
        if (!ops) {
            NNP_LOG_W("%s:%llu: communication_operator_cost is not JSON: skipped", path,
                      (unsigned long long)c.line);
            continue;
        }
        cJSON_ArrayForEach(op, ops)
        {
            /* "op": [step, cost ms, wait ms, link_info] */
            const cJSON *st = cJSON_GetArrayItem(op, 0), *cost = cJSON_GetArrayItem(op, 1),
                        *wait = cJSON_GetArrayItem(op, 2), *li = cJSON_GetArrayItem(op, 3);
            nnp_cl_comm_rec_t r;
            nnp_cl_bw_t bw[NNP_CL_MAX_BW];
            uint32_t n_bw = 0;
            if (!op->string || !cJSON_IsNumber(cost) || !cJSON_IsNumber(wait))
                continue;
            memset(&r, 0, sizeof(r));
            r.rank = k->sum->rank;
            r.step_id = cJSON_IsString(st) ? strtoull(st->valuestring, NULL, 10)
                                           : strtoull(c.f[c_step], NULL, 10);
            r.group = group;
            r.op = nnp__cl_intern_cstr(k->strs, op_name(op->string));
            r.op_index = NNP_CL_NO_INDEX;
            /* hccl_raw's wait_cost is all Notify_Wait time: the part before the first transfer
             * (msprof's synchronisation) is not told apart. */
            r.flags = NNP_CL_COMM_GIVEN | NNP_CL_COMM_NO_SYNC |
                      (nnp__cl_is_p2p_name(op->string) ? NNP_CL_COMM_P2P : 0);
            r.transit_ns = ms_to_ns(cost->valuedouble);
            r.wait_ns = ms_to_ns(wait->valuedouble);
            r.elapse_ns = r.transit_ns + r.wait_ns;
            if (cJSON_IsObject(li))
                link_info(k, li, &r, bw, &n_bw, false);
            r.n_bw = n_bw;
            nnp__cl_add_comm(k, &r, bw, NULL);
            nnp__cl_note_group(k, group, r.flags & NNP_CL_COMM_P2P);
        }
        cJSON_Delete(ops);
    }
    nnp__csv_close(&c);
    return n < 0 ? n : NNP_OK;
}

/* ---- flops_summary_{rank}.json, profiler_info_{rank}.json ---- */

static void read_json_extras(nnp_cl_rank_t *sum, const char *dir, int rank)
{
    char name[NAME_CAP], path[NNP_PATH_MAX], *text = NULL;
    size_t len;
    cJSON *j;
    snprintf(name, sizeof(name), "flops_summary_%d.json", rank);
    if (nnp__path_join(path, sizeof(path), dir, name) == NNP_OK &&
        nnp__read_file(path, JSON_MAX, &text, &len) == NNP_OK) {
        j = cJSON_ParseWithLength(text, len);
        if (cJSON_IsObject(j)) {
            const cJSON *f = cJSON_GetObjectItemCaseSensitive(j, "FLOPs"),
                        *fs = cJSON_GetObjectItemCaseSensitive(j, "FLOPS"),
                        *cf = cJSON_GetObjectItemCaseSensitive(j, "cube_FLOPs"),
                        *vf = cJSON_GetObjectItemCaseSensitive(j, "vec_FLOPs"),
                        *cs = cJSON_GetObjectItemCaseSensitive(j, "cube_FLOPS"),
                        *vs = cJSON_GetObjectItemCaseSensitive(j, "vec_FLOPS");
            /* 1.x: FLOPs/FLOPS; 2.x: cube_ + vec_ (MindInsight adds them). */
            if (cJSON_IsNumber(f) && cJSON_IsNumber(fs)) {
                sum->flops = f->valuedouble;
                sum->flops_per_s = fs->valuedouble;
                sum->flags |= NNP_CL_RANK_FLOPS;
            } else if (cJSON_IsNumber(cf) && cJSON_IsNumber(vf) && cJSON_IsNumber(cs) &&
                       cJSON_IsNumber(vs)) {
                sum->flops = cf->valuedouble + vf->valuedouble;
                sum->flops_per_s = cs->valuedouble + vs->valuedouble;
                sum->flags |= NNP_CL_RANK_FLOPS;
            } else {
                NNP_LOG_W("%s: no FLOPs/FLOPS (or cube_/vec_) numbers: left out", path);
            }
        } else {
            NNP_LOG_W("%s: not a JSON object: left out", path);
        }
        cJSON_Delete(j);
        nnp__free(text);
        text = NULL;
    }
    nnp__clear_error();
    snprintf(name, sizeof(name), "profiler_info_%d.json", rank);
    if (nnp__path_join(path, sizeof(path), dir, name) == NNP_OK &&
        nnp__read_file(path, JSON_MAX, &text, &len) == NNP_OK) {
        j = cJSON_ParseWithLength(text, len);
        if (cJSON_IsObject(j)) {
            const cJSON *rs = cJSON_GetObjectItemCaseSensitive(j, "rank_size"),
                        *pm = cJSON_GetObjectItemCaseSensitive(j, "parallel_mode");
            if (cJSON_IsNumber(rs) && rs->valuedouble >= 1 && rs->valuedouble <= NNP_CL_MAX_RANKS &&
                sum->rank_size == 0)
                sum->rank_size = (int32_t)rs->valuedouble;
            if (cJSON_IsString(pm) && !sum->parallel_mode[0])
                nnp__strlcpy(sum->parallel_mode, pm->valuestring, sizeof(sum->parallel_mode));
        }
        cJSON_Delete(j);
        nnp__free(text);
    }
    nnp__clear_error();
}

int nnp__cl_read_mindspore_rank(nnp_cl_sink_t *k, const nnp_cl_input_t *x)
{
    char name[NAME_CAP], path[NNP_PATH_MAX];
    nnp_cl_rank_t *s = k->sum;
    ms_rank_t r = {0};
    int rc;
    s->rank = x->rank;
    s->device_id = x->device_id;
    if (s->device_id >= 0)
        s->flags |= NNP_CL_RANK_HAS_DEV;
    nnp__strlcpy(s->host, x->host, sizeof(s->host));
    nnp__strlcpy(s->format, "mindspore", sizeof(s->format));
    snprintf(name, sizeof(name), "step_trace_raw_%d_detail_time.csv", x->rank);
    rc = nnp__path_join(path, sizeof(path), x->path, name);
    if (rc == NNP_OK)
        rc = read_step_trace(path, s, &r);
    if (rc == NNP_OK)
        rc = read_cluster_file(x->path, x->rank, s, &r);
    if (rc == NNP_OK) {
        if (s->stage_num > 0 && s->rank_size >= s->stage_num) {
            /* MindInsight: stage of a rank = rank // (rank_size / stage_num) + 1. */
            s->stage_id = (int32_t)(x->rank / (s->rank_size / s->stage_num) + 1);
            s->flags |= NNP_CL_RANK_STAGE;
        }
        emit_steps(k, &r);
        rc = read_hccl(k, x->path, x->rank);
    }
    if (rc == NNP_OK)
        read_json_extras(s, x->path, x->rank);
    nnp__free(r.steps);
    return rc;
}
