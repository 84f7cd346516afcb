/* torch_npu_comm.c - communication.json (per rank) and cluster_communication.json
 * (msprof-analyze, formats.md 1.10) of the torch_npu importer (torch_npu.h): every object
 * holding "Communication Time Info" is one op's timing; they become comms only when the
 * trace gave none. The documents are small (per-op summaries), so they are parsed whole. */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "nnprof/nnprof.h"
#include "read/foreign.h"
#include "read/torch_npu.h"
#include "util/checked.h"
#include "util/util.h"

/* ---- communication.json / cluster_communication.json (formats.md 1.10) ---- */

typedef struct comm_walk {
    nnp_model_t *m;
    const char *path;
    bool add;     /* pass 2: add the ops of rank (or of a per-rank file) to m->comms */
    int rank;     /* the rank whose ops are added; -1: the file is one rank's */
    int lo, hi;   /* ranks seen as keys (cluster layout), lo = INT_MAX when none */
    uint64_t ops; /* timing objects seen */
    uint64_t added, bad;
} comm_walk_t;

static bool all_digits(const char *s)
{
    if (!s || !*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

/* One op: name "opName@group" -> comm op (start, elapse) of the model. */
static int comm_add(comm_walk_t *w, const char *op, const cJSON *info)
{
    nnp_model_t *m = w->m;
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(info, COMM_START_US);
    const cJSON *el = cJSON_GetObjectItemCaseSensitive(info, COMM_ELAPSE_MS);
    const char *at = strchr(op, '@');
    char name[256];
    int64_t ts, el_ns, end;
    size_t i, len = at ? (size_t)(at - op) : strlen(op);
    /* 9223372036854.775807 ms is 2^63 ns once rounded: bounds are checked on the ns. */
    if (!nnp__foreign_json_us_ns(st, &ts) || !cJSON_IsNumber(el) || el->valuedouble < 0 ||
        !nnp__double_to_i64(el->valuedouble * NS_PER_MS + 0.5, &el_ns) ||
        !nnp__i64_add(ts, el_ns, &end)) {
        if (++w->bad <= MAX_ROW_WARNINGS)
            NNP_LOG_W("torch_npu import: '%s' op '%s': '%s' or '%s' missing or out of range: "
                      "skipped",
                      w->path, op, COMM_START_US, COMM_ELAPSE_MS);
        return NNP_OK;
    }
    if (len >= sizeof(name))
        len = sizeof(name) - 1;
    memcpy(name, op, len);
    name[len] = '\0';
    if ((i = nnp__table_push(&m->comms.t)) == SIZE_MAX)
        return nnp__fail(NNP_ENOMEM, "out of memory importing '%s'", w->path);
    m->comms.start_ns[i] = ts;
    m->comms.end_ns[i] = end;
    m->comms.name[i] = nnp__model_intern_cstr(m, name);
    m->comms.kind[i] = (uint32_t)nnp__foreign_comm_kind(name);
    m->comms.group[i] = at ? nnp__model_intern_cstr(m, at + 1) : 0;
    m->comms.peer[i] = -1;
    w->added++;
    return NNP_OK;
}

/* Walks the nesting ({group: {step: {op: {rank: info}}}} in the cluster file, {step:
 * {p2p|collective: {op: info}}} in a rank's) to every object holding the timing info. */
static int comm_walk(comm_walk_t *w, const cJSON *o, const char *key, const char *parent, int depth)
{
    const cJSON *info, *ch;
    if (depth > MAX_JSON_DEPTH || !cJSON_IsObject(o) || !key)
        return NNP_OK;
    if (strncmp(key, "Total Op Info", strlen("Total Op Info")) == 0)
        return NNP_OK; /* the totals, not an op */
    info = cJSON_GetObjectItemCaseSensitive(o, COMM_TIME_INFO);
    if (info) {
        w->ops++;
        if (all_digits(key) && parent) { /* cluster layout: key = rank, parent = op */
            long r = strtol(key, NULL, 10);
            if (r > INT_MAX)
                return NNP_OK;
            w->lo = (int)r < w->lo ? (int)r : w->lo;
            w->hi = (int)r > w->hi ? (int)r : w->hi;
            return w->add && (int)r == w->rank ? comm_add(w, parent, info) : NNP_OK;
        }
        return w->add && w->rank < 0 ? comm_add(w, key, info) : NNP_OK;
    }
    cJSON_ArrayForEach(ch, o)
    {
        int rc = comm_walk(w, ch, ch->string, key, depth + 1);
        if (rc != NNP_OK)
            return rc;
    }
    return NNP_OK;
}

/* Parses a communication.json (the whole document: msprof-analyze writes it per rank or
 * per cluster, small beside the trace). Its ops become comms only when add is set (the
 * trace had none); from a cluster file those of its lowest rank, which becomes rank_id. */
int nnp__tnpu_import_communication(const char *path, nnp_model_t *m, bool add)
{
    comm_walk_t w;
    char *buf = NULL;
    size_t len;
    cJSON *doc, *ch;
    int rc = nnp__read_file(path, MAX_FILE_BYTES, &buf, &len);
    if (rc != NNP_OK) {
        NNP_LOG_W("torch_npu import: cannot read '%s': %s", path, nnp_last_error());
        return rc;
    }
    doc = cJSON_ParseWithLength(buf, len);
    nnp__free(buf);
    if (!cJSON_IsObject(doc)) {
        cJSON_Delete(doc);
        rc = nnp__fail(NNP_ECORRUPT, "'%s' is not a JSON object: file skipped", path);
        NNP_LOG_W("torch_npu import: %s", nnp_last_error());
        return rc;
    }
    memset(&w, 0, sizeof(w));
    w.m = m;
    w.path = path;
    w.lo = INT_MAX;
    w.hi = -1;
    w.rank = -1;
    cJSON_ArrayForEach(ch, doc)
    {
        if ((rc = comm_walk(&w, ch, ch->string, NULL, 1)) != NNP_OK)
            break;
    }
    if (rc == NNP_OK && add) {
        w.add = true;
        w.rank = w.hi >= 0 ? w.lo : -1;
        w.ops = 0;
        cJSON_ArrayForEach(ch, doc)
        {
            if ((rc = comm_walk(&w, ch, ch->string, NULL, 1)) != NNP_OK)
                break;
        }
        if (w.rank >= 0)
            m->info.rank_id = w.rank;
    }
    cJSON_Delete(doc);
    if (rc != NNP_OK)
        return rc;
    if (w.hi >= 0 && w.hi + 1 > m->info.rank_size)
        m->info.rank_size = w.hi + 1;
    if (w.hi >= 0)
        NNP_LOG_I("torch_npu import: '%s': %llu op timings of ranks %d..%d; %llu ops of rank %d "
                  "imported",
                  path, (unsigned long long)w.ops, w.lo, w.hi, (unsigned long long)w.added, w.rank);
    else
        NNP_LOG_I("torch_npu import: '%s': %llu op timings; %llu imported", path,
                  (unsigned long long)w.ops, (unsigned long long)w.added);
    return NNP_OK;
}
