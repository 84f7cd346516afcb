/* mindspore_hccl.c - MindSpore's communication files (mindspore.h): hccl_raw_{rank}.csv
 * (per step: communication and wait cost, per-link SDMA/RDMA time, size and bandwidth, and
 * the same per op) and the raw hccl_info/<op>/<iteration> traces it is made from, computed
 * by MindSpore 1.x's rules (hccl_parser.py; formats.md 2.7). Both fill the model's
 * comm_costs and comm_links tables in MindSpore's order; hccl_raw.c writes them back with
 * the averages row recomputed. Units: ms, KB, KB/s as MindSpore writes them. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "nnprof/nnprof.h"
#include "read/mindspore.h"
#include "util/util.h"

#define HCCL_INFO_DIR "hccl_info"
/* MindSpore's task and link names (hccl_parser.py CommunicationInfo). */
#define T_RDMA          "RDMA"
#define T_SDMA          "SDMA"
#define T_LOCAL         "LOCAL"
#define TASK_RDMA_SEND  "RDMASend"
#define TASK_REDUCE_IN  "Reduce Inline"
#define TASK_MEMCPY     "Memcpy"
#define TASK_NOTIFY_REC "Notify Record"
#define TASK_NOTIFY_WT  "Notify Wait"
/* A rank of 0xffffffff is the local card: replaced by the peer (formats.md 2.7). */
#define LOCAL_RANK 0xffffffffll
/* µs to ms, B to KB, and ms to s for the bandwidth (KB/s). */
#define PER_1E3         1e3
#define MAX_TRACE_BYTES (256u * 1024u * 1024u)
#define MAX_OPS         4096
#define KEY_LEN         64
#define NAME_LEN        512
/* Step trace columns before the first communication triple (hccl_parser.py: index 9). */
#define STEP_TRACE_FIXED_COLS 9

/* ---- hccl_raw_{rank}.csv ---- */

static int push_cost(nnp_model_t *m, uint64_t step, uint32_t op, double cost, double wait)
{
    size_t i = nnp__table_push(&m->comm_costs.t);
    if (i == SIZE_MAX)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    m->comm_costs.step[i] = step;
    m->comm_costs.op[i] = op;
    m->comm_costs.cost_ms[i] = cost;
    m->comm_costs.wait_ms[i] = wait;
    return NNP_OK;
}

static int push_link(nnp_model_t *m, uint64_t step, uint32_t op, const char *link,
                     const char *transport, const double *v, int n)
{
    size_t i = nnp__table_push(&m->comm_links.t);
    if (i == SIZE_MAX)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    m->comm_links.step[i] = step;
    m->comm_links.op[i] = op;
    m->comm_links.link[i] = nnp__model_intern_cstr(m, link);
    m->comm_links.transport[i] = nnp__model_intern_cstr(m, transport);
    m->comm_links.time_ms[i] = n > 0 ? v[0] : 0;
    m->comm_links.size_kb[i] = n > 1 ? v[1] : 0;
    m->comm_links.bandwidth[i] = n > 2 ? v[2] : 0;
    m->comm_links.wait_ms[i] = n > 3 ? v[3] : NAN;
    return NNP_OK;
}

/* {"src-dst": {"SDMA": [time, size, bw(, wait)]}} in key order. */
static int links_from_json(nnp_model_t *m, uint64_t step, uint32_t op, const cJSON *li)
{
    const cJSON *sd, *tp;
    cJSON_ArrayForEach(sd, li)
    {
        cJSON_ArrayForEach(tp, sd)
        {
            double v[4] = {0, 0, 0, 0};
            int n = 0;
            const cJSON *x;
            if (!cJSON_IsArray(tp))
                continue;
            cJSON_ArrayForEach(x, tp)
            {
                if (n < 4 && cJSON_IsNumber(x))
                    v[n++] = x->valuedouble;
            }
            if (push_link(m, step, op, sd->string ? sd->string : "", tp->string ? tp->string : "",
                          v, n) != NNP_OK)
                return NNP_ENOMEM;
        }
    }
    return NNP_OK;
}

int nnp__ms_import_hccl_raw(const char *path, nnp_model_t *m)
{
    static const char *const need[] = {"step_num", "communication_cost", "wait_cost", "link_info",
                                       "communication_operator_cost"};
    csv_t c;
    long col[NNP_ARRAY_LEN(need)];
    uint64_t rows = 0;
    int rc = nnp__ms_csv_open(&c, path);
    if (rc != NNP_OK)
        return rc;
    for (size_t k = 0; k < NNP_ARRAY_LEN(need); k++)
        if ((col[k] = nnp__csv_col(&c, need[k])) < 0) {
            rc =
                nnp__fail(NNP_ECORRUPT, "'%s' line 1: no column '%s': file skipped", path, need[k]);
            NNP_LOG_W("mindspore import: %s", nnp_last_error());
            goto out;
        }
    while ((rc = nnp__csv_next(&c)) > 0) {
        int64_t step;
        char *e1, *e2;
        double cost, wait;
        cJSON *li, *ops;
        const cJSON *op;
        if ((long)c.n < (long)NNP_ARRAY_LEN(need)) {
            nnp__ms_row_warn(&c, c.line, "%zu fields (truncated?): row skipped", c.n);
            continue;
        }
        if (!nnp__ms_parse_i64(c.f[col[0]], &step) || step < 0)
            continue; /* the "-" averages row: recomputed from the steps (hccl_raw.c) */
        cost = strtod(c.f[col[1]], &e1);
        wait = strtod(c.f[col[2]], &e2);
        li = cJSON_Parse(c.f[col[3]]);
        ops = cJSON_Parse(c.f[col[4]]);
        if (e1 == c.f[col[1]] || e2 == c.f[col[2]] || !cJSON_IsObject(li) || !cJSON_IsObject(ops)) {
            nnp__ms_row_warn(&c, c.line,
                             "a cost is not a number or link_info / "
                             "communication_operator_cost is not JSON: row skipped");
            cJSON_Delete(li);
            cJSON_Delete(ops);
            continue;
        }
        rows++;
        rc = push_cost(m, (uint64_t)step, 0, cost, wait);
        if (rc == NNP_OK)
            rc = links_from_json(m, (uint64_t)step, 0, li);
        /* {"op": ["step", cost, wait, {links}]} */
        cJSON_ArrayForEach(op, ops)
        {
            const cJSON *oc = cJSON_GetArrayItem(op, 1), *ow = cJSON_GetArrayItem(op, 2);
            uint32_t name;
            if (rc != NNP_OK || !op->string || !cJSON_IsNumber(oc) || !cJSON_IsNumber(ow))
                continue;
            name = nnp__model_intern_cstr(m, op->string);
            rc = push_cost(m, (uint64_t)step, name, oc->valuedouble, ow->valuedouble);
            if (rc == NNP_OK)
                rc = links_from_json(m, (uint64_t)step, name, cJSON_GetArrayItem(op, 3));
        }
        cJSON_Delete(li);
        cJSON_Delete(ops);
        if (rc != NNP_OK)
            goto out;
    }
    if (rc < 0)
        rc = nnp__fail(NNP_ENOMEM, "out of memory reading '%s'", path);
    NNP_LOG_I("mindspore import: '%s': %llu steps of communication cost", path,
              (unsigned long long)rows);
    nnp__ms_warn_summary(&c);
out:
    nnp__csv_close(&c);
    return rc;
}

/* ---- hccl_info/<op>/<iteration>: the raw HCCL task traces ---- */

/* One task of a trace (what the rules read of it). */
typedef struct task {
    double dur_us;
    int64_t tid;
    char task[32], transport[16];
    int64_t src, dst;
    bool has_ranks;
    double size_b;
} task_t;

/* One (src-dst, transport) of an op execution's link figures, in first-seen order. */
typedef struct link_val {
    char key[KEY_LEN], transport[16];
    double v[4];
    int n;
} link_val_t;

typedef struct exec_cost {
    double cost, wait;
    link_val_t *links;
    size_t n_links;
} exec_cost_t;

static double task_size(const cJSON *s)
{
    if (cJSON_IsNumber(s))
        return s->valuedouble;
    if (cJSON_IsString(s) && s->valuestring && *s->valuestring)
        return (double)strtoull(s->valuestring, NULL, 16); /* "size" is hex text */
    return 0;
}

static int64_t rank_of(const cJSON *v)
{
    int64_t r = -1;
    if (cJSON_IsNumber(v))
        r = (int64_t)v->valuedouble;
    else if (cJSON_IsString(v) && v->valuestring)
        r = strtoll(v->valuestring, NULL, 0);
    return r;
}

static bool str_eq(const char *a, const char *b)
{
    return strcmp(a, b) == 0;
}

static link_val_t *link_get(exec_cost_t *e, const char *key, const char *transport)
{
    link_val_t *nl;
    for (size_t i = 0; i < e->n_links; i++)
        if (str_eq(e->links[i].key, key) && str_eq(e->links[i].transport, transport))
            return &e->links[i];
    nl = nnp__realloc(e->links, (e->n_links + 1) * sizeof(link_val_t));
    if (!nl)
        return NULL;
    e->links = nl;
    memset(&nl[e->n_links], 0, sizeof(link_val_t));
    nnp__strlcpy(nl[e->n_links].key, key, KEY_LEN);
    nnp__strlcpy(nl[e->n_links].transport, transport, sizeof(nl[0].transport));
    return &nl[e->n_links++];
}

/* A task's "src-dst" link key into key (KEY_LEN bytes); false when it names no ranks. A rank
 * 0xffffffff takes the peer's; LOCAL tasks have src and dst swapped (hccl_parser.py
 * _divide_communication_info_by_src_dst_rank). */
static bool task_key(const task_t *t, char *key)
{
    int64_t s = t->src, d = t->dst;
    bool local = str_eq(t->transport, T_LOCAL);
    if (!t->has_ranks)
        return false;
    if (s == LOCAL_RANK)
        s = d;
    if (d == LOCAL_RANK)
        d = s;
    snprintf(key, KEY_LEN, "%lld-%lld", (long long)(local ? d : s), (long long)(local ? s : d));
    return true;
}

/* RDMA of one thread: RDMASend, RDMASend, Notify Wait triples (hccl_parser.py
 * _calculate_adma_link_info): time = the three durations, wait = the Notify Wait. */
static void rdma_thread(const task_t *const *t, size_t n, double out[4])
{
    double time = 0, size = 0, wait = 0;
    size_t i = 0;
    while (n > 0 && i < n - 1) {
        if (i + 2 < n && str_eq(t[i]->task, TASK_RDMA_SEND) &&
            str_eq(t[i + 1]->task, TASK_RDMA_SEND) && str_eq(t[i + 2]->task, TASK_NOTIFY_WT)) {
            time += t[i]->dur_us + t[i + 1]->dur_us + t[i + 2]->dur_us;
            wait += t[i + 2]->dur_us;
            size += t[i]->size_b + t[i + 1]->size_b;
            i += 2;
        }
        i++;
    }
    out[3] = wait / PER_1E3;
    out[1] = size / PER_1E3;
    out[0] = time / PER_1E3;
    out[2] = out[1] != 0 ? out[1] / (out[0] / PER_1E3) : 0;
}

/* The cost of one set of tasks (all streams, or the main stream): hccl_parser.py
 * _inner_calculate_communication_operator_iter_cost. */
static int exec_cost(const task_t *tasks, const size_t *sel, size_t n, exec_cost_t *out)
{
    const task_t **grp = nnp__calloc(n + 1, sizeof(task_t *));
    char(*keys)[KEY_LEN] = nnp__calloc(n + 1, KEY_LEN);
    double notify = 0, link_wait = 0;
    size_t n_keys = 0;
    int rc = NNP_OK;
    memset(out, 0, sizeof(*out));
    if (!grp || !keys) {
        rc = nnp__fail(NNP_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        if (str_eq(tasks[sel[i]].task, TASK_NOTIFY_WT))
            notify += tasks[sel[i]].dur_us;
    notify /= PER_1E3;
    /* "src-dst" keys in first-seen order. */
    for (size_t i = 0; i < n; i++) {
        char key[KEY_LEN];
        size_t k;
        if (!task_key(&tasks[sel[i]], key))
            continue;
        for (k = 0; k < n_keys && !str_eq(keys[k], key); k++)
            ;
        if (k == n_keys)
            nnp__strlcpy(keys[n_keys++], key, KEY_LEN);
    }
    for (size_t k = 0; k < n_keys && rc == NNP_OK; k++) {
        /* This key's tasks by link type: SDMA and RDMA without Notify Record; LOCAL tasks
         * join RDMA once RDMA has a task (in task order, as MindSpore appends them). */
        size_t n_rdma = 0, n_sdma = 0;
        const task_t **rdma = grp, **sdma = NULL;
        double sdma_time = 0, sdma_size = 0, rv[4] = {0, 0, 0, 0};
        bool have_rdma = false, have_sdma = false, rdma_first = false;
        sdma = nnp__calloc(n + 1, sizeof(task_t *));
        if (!sdma) {
            rc = nnp__fail(NNP_ENOMEM, "out of memory");
            break;
        }
        for (size_t i = 0; i < n; i++) {
            const task_t *t = &tasks[sel[i]];
            char key[KEY_LEN];
            if (!task_key(t, key) || !str_eq(key, keys[k]))
                continue;
            if (str_eq(t->transport, T_RDMA) || str_eq(t->transport, T_SDMA)) {
                if (str_eq(t->task, TASK_NOTIFY_REC))
                    continue;
                if (str_eq(t->transport, T_RDMA)) {
                    rdma_first = rdma_first || !have_sdma;
                    rdma[n_rdma++] = t;
                    have_rdma = true;
                } else {
                    sdma[n_sdma++] = t;
                    have_sdma = true;
                }
            } else if (str_eq(t->transport, T_LOCAL) && have_rdma) {
                rdma[n_rdma++] = t;
            }
        }
        /* The link types in the order the key's dict got them (RDMA or SDMA first). */
        for (int pass = 0; pass < 2; pass++) {
            bool do_rdma = (pass == 0) == rdma_first;
            if (do_rdma && have_rdma) {
                /* Per thread (first-seen order), summed element-wise. */
                link_val_t *lv = link_get(out, keys[k], T_RDMA);
                size_t done = 0;
                if (!lv) {
                    rc = nnp__fail(NNP_ENOMEM, "out of memory");
                    break;
                }
                lv->n = 4;
                while (done < n_rdma) {
                    int64_t tid = INT64_MIN;
                    const task_t **th = sdma + n_sdma; /* scratch after the SDMA list */
                    size_t nt = 0;
                    for (size_t i = 0; i < n_rdma; i++) {
                        if (!rdma[i])
                            continue;
                        if (tid == INT64_MIN)
                            tid = rdma[i]->tid;
                        if (rdma[i]->tid == tid) {
                            th[nt++] = rdma[i];
                            rdma[i] = NULL;
                            done++;
                        }
                    }
                    rdma_thread(th, nt, rv);
                    for (int q = 0; q < 4; q++)
                        lv->v[q] += rv[q];
                }
            } else if (!do_rdma && have_sdma) {
                link_val_t *lv = link_get(out, keys[k], T_SDMA);
                if (!lv) {
                    rc = nnp__fail(NNP_ENOMEM, "out of memory");
                    break;
                }
                sdma_time = sdma_size = 0;
                for (size_t i = 0; i < n_sdma; i++)
                    if (str_eq(sdma[i]->task, TASK_REDUCE_IN) ||
                        str_eq(sdma[i]->task, TASK_MEMCPY)) {
                        sdma_time += sdma[i]->dur_us;
                        sdma_size += sdma[i]->size_b;
                    }
                lv->n = 3;
                lv->v[0] = sdma_time / PER_1E3;
                lv->v[1] = sdma_size / PER_1E3;
                lv->v[2] = lv->v[1] != 0 ? lv->v[1] / (lv->v[0] / PER_1E3) : 0;
            }
        }
        nnp__free(sdma);
    }
    /* Cost = the links' times; the wait cost = Notify Wait less what RDMA counted. */
    for (size_t i = 0; i < out->n_links; i++) {
        out->cost += out->links[i].v[0];
        if (out->links[i].n > 3)
            link_wait += out->links[i].v[3];
    }
    out->wait = notify - link_wait;
done:
    nnp__free(grp);
    nnp__free(keys);
    return rc;
}

/* The tasks of one iteration file ({"traceEvents": [...]}) and the ts of its first. */
static int read_trace(const char *path, task_t **out, size_t *n, double *first_ts)
{
    char *text = NULL;
    size_t len, k = 0;
    cJSON *doc, *evs, *e;
    int rc = nnp__read_file(path, MAX_TRACE_BYTES, &text, &len);
    *out = NULL;
    *n = 0;
    if (rc != NNP_OK)
        return rc;
    doc = cJSON_ParseWithLength(text, len);
    nnp__free(text);
    evs = cJSON_GetObjectItemCaseSensitive(doc, "traceEvents");
    if (!cJSON_IsArray(evs) || cJSON_GetArraySize(evs) == 0) {
        cJSON_Delete(doc);
        return nnp__fail(NNP_ECORRUPT, "'%s': no traceEvents", path);
    }
    *first_ts =
        cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(evs, 0), "ts"))
            ? cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(evs, 0), "ts")->valuedouble
            : 0;
    *out = nnp__calloc((size_t)cJSON_GetArraySize(evs) + 1, sizeof(task_t));
    if (!*out) {
        cJSON_Delete(doc);
        return nnp__fail(NNP_ENOMEM, "out of memory");
    }
    cJSON_ArrayForEach(e, evs)
    {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(e, "args");
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(e, "dur");
        const cJSON *tid = cJSON_GetObjectItemCaseSensitive(e, "tid");
        const cJSON *tt = cJSON_GetObjectItemCaseSensitive(a, "task type");
        const cJSON *tr = cJSON_GetObjectItemCaseSensitive(a, "transport type");
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(a, "src rank");
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(a, "dst rank");
        task_t *t = &(*out)[k++];
        t->dur_us = cJSON_IsNumber(d) ? d->valuedouble : 0;
        t->tid = cJSON_IsNumber(tid) ? (int64_t)tid->valuedouble : 0;
        if (cJSON_IsString(tt))
            nnp__strlcpy(t->task, tt->valuestring, sizeof(t->task));
        if (cJSON_IsString(tr))
            nnp__strlcpy(t->transport, tr->valuestring, sizeof(t->transport));
        t->has_ranks = s && r && !cJSON_IsNull(s) && !cJSON_IsNull(r);
        t->src = rank_of(s);
        t->dst = rank_of(r);
        t->size_b = task_size(cJSON_GetObjectItemCaseSensitive(a, "size"));
    }
    *n = k;
    cJSON_Delete(doc);
    return NNP_OK;
}

/* The step of an iteration from its first task's ts (µs), against the step trace (10 ns
 * ticks / 100 = µs): before the first step -> the first; after the last -> the last. */
static int64_t step_of(const nnp_model_t *m, double ts_us)
{
    const nnp_spans_t *s = &m->steps;
    if (s->t.n == 0)
        return -1;
    if (ts_us < (double)s->start_ns[0] / PER_1E3)
        return (int64_t)s->id[0];
    if ((double)s->end_ns[s->t.n - 1] / PER_1E3 < ts_us)
        return (int64_t)s->id[s->t.n - 1];
    for (size_t i = s->t.n; i-- > 0;)
        if ((double)s->start_ns[i] / PER_1E3 <= ts_us && ts_us < (double)s->end_ns[i] / PER_1E3)
            return (int64_t)s->id[i];
    return -1;
}

/* One op execution: the main stream (the thread with the largest id) gives the cost and
 * wait, all streams the links. */
static int iteration_cost(const char *path, const nnp_model_t *m, int64_t *step, exec_cost_t *out)
{
    task_t *t;
    size_t n, n_main = 0, *all = NULL, *main_sel = NULL;
    double first = 0;
    int64_t main_tid = INT64_MIN;
    exec_cost_t main_cost;
    int rc = read_trace(path, &t, &n, &first);
    if (rc != NNP_OK)
        return rc;
    *step = step_of(m, first);
    all = nnp__calloc(n + 1, sizeof(size_t));
    main_sel = nnp__calloc(n + 1, sizeof(size_t));
    if (!all || !main_sel) {
        rc = nnp__fail(NNP_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        all[i] = i;
        main_tid = t[i].tid > main_tid ? t[i].tid : main_tid;
    }
    for (size_t i = 0; i < n; i++)
        if (t[i].tid == main_tid)
            main_sel[n_main++] = i;
    rc = exec_cost(t, all, n, out);
    if (rc == NNP_OK) {
        rc = exec_cost(t, main_sel, n_main, &main_cost);
        out->cost = main_cost.cost;
        out->wait = main_cost.wait;
        nnp__free(main_cost.links);
    }
out:
    nnp__free(all);
    nnp__free(main_sel);
    nnp__free(t);
    return rc;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the entries of dir that are directories (dirs) or files (!dirs). */
static size_t list(const char *dir, bool dirs, char ***out)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **v = nnp__calloc(MAX_OPS, sizeof(char *));
    size_t n = 0;
    *out = v;
    if (!d || !v) {
        if (d)
            closedir(d);
        return 0;
    }
    while ((e = readdir(d)) != NULL && n < MAX_OPS) {
        char p[NNP_PATH_MAX];
        struct stat st;
        if (e->d_name[0] == '.' || nnp__path_join(p, sizeof(p), dir, e->d_name) != NNP_OK ||
            stat(p, &st) != 0 || (dirs ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)))
            continue;
        if ((v[n] = nnp__strdup(e->d_name)) != NULL)
            n++;
    }
    closedir(d);
    qsort(v, n, sizeof(char *), cmp_name);
    return n;
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        nnp__free(v[i]);
    nnp__free(v);
}

/* The op's name as the step trace names it: hccl dirs "<op>_<k>_..." of one op type,
 * ordered by k, pair with the step trace's communication columns of that type in header
 * order (hccl_parser.py _get_communication_operator_name_mapping_info); no pair: the
 * hccl name. */
static void step_trace_name(const char *dir, int rank, const char *hccl, char *out, size_t cap)
{
    char path[NNP_PATH_MAX], file[NNP_PATH_MAX], type[NAME_LEN], base[NAME_LEN];
    const char *us = strchr(hccl, '_');
    csv_t c;
    size_t want = 0;
    char **ops;
    size_t n_ops;
    nnp__strlcpy(out, hccl, cap);
    if (!us || (size_t)(us - hccl) >= sizeof(type))
        return;
    memcpy(type, hccl, (size_t)(us - hccl));
    type[us - hccl] = '\0';
    /* This dir's position among the dirs of its type (by the number after the type). */
    if (nnp__path_join(path, sizeof(path), dir, HCCL_INFO_DIR) != NNP_OK)
        return;
    n_ops = list(path, true, &ops);
    for (size_t i = 0; i < n_ops; i++) {
        const char *u = strchr(ops[i], '_');
        if (u && (size_t)(u - ops[i]) == strlen(type) && strncmp(ops[i], type, strlen(type)) == 0 &&
            strtol(u + 1, NULL, 10) < strtol(us + 1, NULL, 10))
            want++;
    }
    free_list(ops, n_ops);
    /* The step trace of this rank. */
    snprintf(base, sizeof(base), "step_trace_raw_%d_detail_time.csv", rank);
    if (nnp__path_join(file, sizeof(file), dir, base) != NNP_OK ||
        nnp__ms_csv_open(&c, file) != NNP_OK)
        return;
    for (size_t i = STEP_TRACE_FIXED_COLS, k = 0; i < c.n; i += 3) {
        const char *name = nnp__ms_trim(c.f[i]), *slash = strrchr(name, '/'), *dash;
        char t[NAME_LEN];
        const char *last_us;
        size_t len;
        name = slash ? slash + 1 : name;
        dash = strchr(name, '-');
        len = dash ? (size_t)(dash - name) : strlen(name);
        if (len >= sizeof(t))
            continue;
        memcpy(t, name, len);
        t[len] = '\0';
        last_us = strrchr(t, '_');
        if (strcasecmp(last_us ? last_us + 1 : t, type) != 0)
            continue;
        if (k++ == want) {
            nnp__strlcpy(out, nnp__ms_trim(c.f[i]), cap);
            break;
        }
    }
    nnp__csv_close(&c);
}

/* Per op: its executions merged by step (sums; links summed element-wise). */
typedef struct op_steps {
    uint32_t name;
    int64_t *step;
    exec_cost_t *cost;
    size_t n;
} op_steps_t;

static int merge_into(exec_cost_t *dst, const exec_cost_t *src)
{
    dst->cost += src->cost;
    dst->wait += src->wait;
    for (size_t i = 0; i < src->n_links; i++) {
        link_val_t *l = link_get(dst, src->links[i].key, src->links[i].transport);
        if (!l)
            return nnp__fail(NNP_ENOMEM, "out of memory");
        l->n = src->links[i].n > l->n ? src->links[i].n : l->n;
        for (int q = 0; q < 4; q++)
            l->v[q] += src->links[i].v[q];
    }
    return NNP_OK;
}

static int push_exec(nnp_model_t *m, uint64_t step, uint32_t op, const exec_cost_t *e)
{
    int rc = push_cost(m, step, op, e->cost, e->wait);
    for (size_t i = 0; rc == NNP_OK && i < e->n_links; i++)
        rc = push_link(m, step, op, e->links[i].key, e->links[i].transport, e->links[i].v,
                       e->links[i].n);
    return rc;
}

int nnp__ms_import_hccl_info(const char *dir, nnp_model_t *m)
{
    char root[NNP_PATH_MAX];
    char **ops = NULL;
    size_t n_ops;
    op_steps_t *os = NULL;
    int rc = NNP_OK;
    struct stat st;
    if (nnp__path_join(root, sizeof(root), dir, HCCL_INFO_DIR) != NNP_OK || stat(root, &st) != 0 ||
        !S_ISDIR(st.st_mode))
        return NNP_ENOENT;
    n_ops = list(root, true, &ops);
    os = nnp__calloc(n_ops + 1, sizeof(op_steps_t));
    if (!os) {
        free_list(ops, n_ops);
        return nnp__fail(NNP_ENOMEM, "out of memory");
    }
    for (size_t o = 0; o < n_ops && rc == NNP_OK; o++) {
        char opdir[NNP_PATH_MAX], name[NAME_LEN], **files;
        size_t n_files;
        if (nnp__path_join(opdir, sizeof(opdir), root, ops[o]) != NNP_OK)
            continue;
        step_trace_name(dir, m->info.rank_id, ops[o], name, sizeof(name));
        os[o].name = nnp__model_intern_cstr(m, name);
        n_files = list(opdir, false, &files);
        os[o].step = nnp__calloc(n_files + 1, sizeof(int64_t));
        os[o].cost = nnp__calloc(n_files + 1, sizeof(exec_cost_t));
        if (!os[o].step || !os[o].cost)
            rc = nnp__fail(NNP_ENOMEM, "out of memory");
        for (size_t f = 0; rc == NNP_OK && f < n_files; f++) {
            char path[NNP_PATH_MAX];
            exec_cost_t e;
            int64_t step;
            size_t k;
            if (nnp__path_join(path, sizeof(path), opdir, files[f]) != NNP_OK)
                continue;
            if (iteration_cost(path, m, &step, &e) != NNP_OK || step < 0) {
                NNP_LOG_W("mindspore import: '%s': not an HCCL trace of a known step: skipped",
                          path);
                continue;
            }
            for (k = 0; k < os[o].n && os[o].step[k] != step; k++)
                ;
            if (k == os[o].n) {
                os[o].step[k] = step;
                os[o].n++;
            }
            rc = merge_into(&os[o].cost[k], &e);
            nnp__free(e.links);
        }
        free_list(files, n_files);
    }
    /* Steps in order; each: the step's row (the ops summed), then its ops. */
    for (int64_t last = -1; rc == NNP_OK;) {
        int64_t step = INT64_MAX;
        exec_cost_t total;
        for (size_t o = 0; o < n_ops; o++)
            for (size_t k = 0; k < os[o].n; k++)
                if (os[o].step[k] > last && os[o].step[k] < step)
                    step = os[o].step[k];
        if (step == INT64_MAX)
            break;
        memset(&total, 0, sizeof(total));
        for (size_t o = 0; rc == NNP_OK && o < n_ops; o++)
            for (size_t k = 0; rc == NNP_OK && k < os[o].n; k++)
                if (os[o].step[k] == step)
                    rc = merge_into(&total, &os[o].cost[k]);
        if (rc == NNP_OK)
            rc = push_exec(m, (uint64_t)step, 0, &total);
        nnp__free(total.links);
        for (size_t o = 0; rc == NNP_OK && o < n_ops; o++)
            for (size_t k = 0; rc == NNP_OK && k < os[o].n; k++)
                if (os[o].step[k] == step)
                    rc = push_exec(m, (uint64_t)step, os[o].name, &os[o].cost[k]);
        last = step;
    }
    for (size_t o = 0; o < n_ops; o++) {
        for (size_t k = 0; k < os[o].n; k++)
            nnp__free(os[o].cost[k].links);
        nnp__free(os[o].step);
        nnp__free(os[o].cost);
    }
    nnp__free(os);
    free_list(ops, n_ops);
    return rc;
}
