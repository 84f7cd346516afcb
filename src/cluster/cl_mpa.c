/* cl_mpa.c - msprof-analyze's own cluster outputs as input (the data its advisor reads):
 * cluster_step_trace_time.csv (rank rows; stage rows give the stages), and, when present,
 * cluster_communication.json ({group: {step: {op@group: {rank: ...}}}}) and
 * cluster_communication_matrix.json. Every rank of the cluster is in these files, so one
 * input gives every rank's summary (through sink_for). Our verdicts then run on them as
 * msprof-analyze's advisor does (formats.md 2.6). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cluster/cluster.h"
#include "read/csv_reader.h"

#define STEP_FILE   "cluster_step_trace_time.csv"
#define COMM_FILE   "cluster_communication.json"
#define MATRIX_FILE "cluster_communication_matrix.json"
#define CSV_MAX     (256u * 1024u * 1024u)
#define JSON_MAX    (1024u * 1024u * 1024u)

/* The ranks of a stage row's Index, "(0, 1, 2)": each rank found gets stage_id. */
static void stage_members(const char *index, int stage_id, nnp_cl_sink_for_fn sink_for, void *ctx)
{
    const char *p = index;
    while (*p) {
        char *end;
        long r;
        if (!isdigit((unsigned char)*p)) {
            p++;
            continue;
        }
        r = strtol(p, &end, 10);
        p = end;
        if (r >= 0 && r < NNP_CL_MAX_RANKS) {
            nnp_cl_sink_t *k = sink_for(ctx, (int)r);
            if (k && !(k->sum->flags & NNP_CL_RANK_STAGE)) {
                k->sum->stage_id = stage_id;
                k->sum->flags |= NNP_CL_RANK_STAGE;
            }
        }
    }
}

static int read_steps(const char *path, nnp_cl_sink_for_fn sink_for, void *ctx)
{
    nnp_csv_reader_t c;
    nnp_cl_mpa_cols_t cols;
    long c_type, c_index;
    int rc = nnp__csv_open(&c, path, CSV_MAX), n, n_stages = 0;
    if (rc != NNP_OK)
        return rc;
    if (nnp__csv_next(&c) != 1) {
        nnp__csv_close(&c);
        return nnp__fail(NNP_ECORRUPT, "%s: empty file", path);
    }
    c_type = nnp__csv_col(&c, "Type");
    c_index = nnp__csv_col(&c, "Index");
    if (!nnp__cl_mpa_header(&c, &cols) || c_type < 0 || c_index < 0) {
        nnp__csv_close(&c);
        return nnp__fail(NNP_ECORRUPT,
                         "%s: not msprof-analyze's cluster_step_trace_time.csv (no Type, Index, "
                         "Computing, Communication(Not Overlapped) or Free column)",
                         path);
    }
    while ((n = nnp__csv_next(&c)) == 1) {
        nnp_cl_step_rec_t r;
        nnp_cl_sink_t *k;
        char *end;
        long rank;
        if (c.n <= (size_t)c_index || c.n <= (size_t)c_type)
            continue;
        if (strcmp(c.f[c_type], "stage") == 0) {
            stage_members(c.f[c_index], ++n_stages, sink_for, ctx);
            continue;
        }
        if (strcmp(c.f[c_type], "rank") != 0)
            continue;
        rank = strtol(c.f[c_index], &end, 10);
        if (*end || end == c.f[c_index] || rank < 0 || rank >= NNP_CL_MAX_RANKS) {
            NNP_LOG_W("%s:%llu: Index '%s' is not a rank: row skipped", path,
                      (unsigned long long)c.line, c.f[c_index]);
            continue;
        }
        memset(&r, 0, sizeof(r));
        r.rank = (int32_t)rank;
        if (!nnp__cl_mpa_row(&c, &cols, path, &r))
            continue;
        k = sink_for(ctx, (int)rank);
        if (!k) {
            rc = NNP_ENOMEM;
            break;
        }
        nnp__cl_add_step(k, &r);
    }
    nnp__csv_close(&c);
    if (rc == NNP_OK && n < 0)
        rc = n;
    return rc;
}

/* {group: {step: {op: {rank: {...}}}}} (communication) or {group: {step: {op: {link}}}}. */
static int read_comm(const char *path, bool matrix, nnp_cl_sink_for_fn sink_for, void *ctx)
{
    cJSON *j = nnp__cl_read_json(path, JSON_MAX, true);
    const cJSON *group, *step, *op, *rk;
    int rc = NNP_OK;
    if (!j)
        return NNP_OK;
    cJSON_ArrayForEach(group, j)
    {
        cJSON_ArrayForEach(step, group)
        {
            cJSON_ArrayForEach(op, step)
            {
                if (!op->string || rc != NNP_OK)
                    continue;
                if (matrix) {
                    /* Global ranks already; the link's source reports it. */
                    const cJSON *link;
                    cJSON_ArrayForEach(link, op)
                    {
                        int src, dst;
                        nnp_cl_sink_t *k;
                        cJSON *one;
                        if (!link->string || sscanf(link->string, "%d-%d", &src, &dst) != 2 ||
                            src < 0 || src >= NNP_CL_MAX_RANKS || !(k = sink_for(ctx, src)))
                            continue;
                        one = cJSON_CreateObject();
                        if (!one) {
                            rc = NNP_ENOMEM;
                            break;
                        }
                        cJSON_AddItemReferenceToObject(one, link->string, (cJSON *)link);
                        rc = nnp__cl_links_from_json(k, step->string, op->string, one, NULL);
                        cJSON_Delete(one);
                    }
                    continue;
                }
                cJSON_ArrayForEach(rk, op)
                {
                    char *end;
                    long r = rk->string ? strtol(rk->string, &end, 10) : -1;
                    nnp_cl_sink_t *k;
                    if (!rk->string || *end || r < 0 || r >= NNP_CL_MAX_RANKS ||
                        !(k = sink_for(ctx, (int)r)))
                        continue;
                    rc = nnp__cl_comm_from_json(k, step->string, op->string, rk, -1);
                    if (rc == NNP_ECORRUPT) {
                        NNP_LOG_W("%s: %s: skipped", path, nnp_last_error());
                        rc = NNP_OK;
                    }
                }
            }
        }
    }
    cJSON_Delete(j);
    return rc;
}

int nnp__cl_read_mpa_output(const nnp_cl_input_t *x, nnp_cl_sink_for_fn sink_for, void *ctx)
{
    char p[NNP_PATH_MAX];
    int rc = nnp__path_join(p, sizeof(p), x->path, STEP_FILE);
    if (rc == NNP_OK)
        rc = read_steps(p, sink_for, ctx);
    if (rc == NNP_OK && nnp__path_join(p, sizeof(p), x->path, COMM_FILE) == NNP_OK)
        rc = read_comm(p, false, sink_for, ctx);
    if (rc == NNP_OK && nnp__path_join(p, sizeof(p), x->path, MATRIX_FILE) == NNP_OK)
        rc = read_comm(p, true, sink_for, ctx);
    return rc;
}
