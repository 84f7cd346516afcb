/* timeline_export.c - see timeline_export.h. Two passes per rank: the first collects the
 * process names (metadata comes last in our traces), the second filters and rewrites. */
#include <stdio.h>
#include <string.h>

#include <unistd.h>

#include "read/json_stream.h"
#include "server/safe_open.h"
#include "server/timeline_export.h"
#include "util/util.h"

/* Processes a summary timeline keeps (docs/OUTPUTS.md "Timeline", MindInsight summary). */
static const char *const summary_procs[] = {"Step Trace", "Overlap Analysis"};
/* Processes known per rank at most; lane tids of split sub-graphs start here. */
#define MAX_PROCS       256
#define GRAPH_TID_BASE  (1LL << 30)
#define MAX_GRAPH_LANES 256

typedef struct proc {
    double pid;
    char name[64];
} proc_t;

typedef struct ex {
    const nnp_tl_choice_t *ch;
    size_t rank_index;
    int rank;
    proc_t procs[MAX_PROCS];
    size_t n_procs;
    nnp_jw_t *w;
    double step_pid;     /* pid of "Step Trace", -1 when none */
    long long cur_graph; /* graph of the last step slice (its phases follow it) */
    long long graphs[MAX_GRAPH_LANES];
    size_t n_graphs;
} ex_t;

static const char *proc_name(const ex_t *x, double pid)
{
    for (size_t i = 0; i < x->n_procs; i++) {
        if (x->procs[i].pid == pid)
            return x->procs[i].name;
    }
    return "";
}

static int collect(void *user, const cJSON *e, uint64_t index)
{
    ex_t *x = user;
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
    const cJSON *pid = cJSON_GetObjectItemCaseSensitive(e, "pid");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
    const cJSON *pname = cJSON_GetObjectItemCaseSensitive(args, "name");
    (void)index;
    if (!cJSON_IsString(ph) || strcmp(ph->valuestring, "M") != 0 || !cJSON_IsString(name) ||
        strcmp(name->valuestring, "process_name") != 0 || !cJSON_IsNumber(pid) ||
        !cJSON_IsString(pname) || x->n_procs >= MAX_PROCS)
        return 0;
    x->procs[x->n_procs].pid = pid->valuedouble;
    nnp__strlcpy(x->procs[x->n_procs].name, pname->valuestring, sizeof(x->procs[0].name));
    if (strcmp(pname->valuestring, "Step Trace") == 0)
        x->step_pid = pid->valuedouble;
    x->n_procs++;
    return 0;
}

static bool keep_proc(const ex_t *x, double pid)
{
    const char *n = proc_name(x, pid);
    if (!x->ch->summary)
        return true;
    for (size_t i = 0; i < NNP_ARRAY_LEN(summary_procs); i++) {
        if (strcmp(n, summary_procs[i]) == 0)
            return true;
    }
    return false;
}

static void note_graph(ex_t *x, long long g)
{
    for (size_t i = 0; i < x->n_graphs; i++) {
        if (x->graphs[i] == g)
            return;
    }
    if (x->n_graphs < MAX_GRAPH_LANES)
        x->graphs[x->n_graphs++] = g;
}

static int rewrite(void *user, const cJSON *e, uint64_t index)
{
    ex_t *x = user;
    const cJSON *pid = cJSON_GetObjectItemCaseSensitive(e, "pid");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
    const cJSON *graph = cJSON_GetObjectItemCaseSensitive(args, "graph_id");
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
    cJSON *c;
    char *text;
    (void)index;
    if (!cJSON_IsNumber(pid) || !keep_proc(x, pid->valuedouble))
        return 0;
    if (x->ch->graph >= 0 && cJSON_IsNumber(graph) && (long long)graph->valuedouble != x->ch->graph)
        return 0;
    c = cJSON_Duplicate(e, 1);
    if (!c)
        return nnp__fail(NNP_ENOMEM, "out of memory exporting the timeline");
    if (x->ch->n_ranks > 1) {
        cJSON *p = cJSON_GetObjectItemCaseSensitive(c, "pid");
        cJSON_SetNumberValue(p, pid->valuedouble + (double)x->rank_index * NNP_TL_RANK_PID_STRIDE);
        if (cJSON_IsString(ph) && strcmp(ph->valuestring, "M") == 0) {
            cJSON *a = cJSON_GetObjectItemCaseSensitive(c, "args");
            cJSON *n = cJSON_GetObjectItemCaseSensitive(a, "name");
            const cJSON *en = cJSON_GetObjectItemCaseSensitive(e, "name");
            cJSON *si = cJSON_GetObjectItemCaseSensitive(a, "sort_index");
            if (cJSON_IsString(en) && strcmp(en->valuestring, "process_name") == 0 &&
                cJSON_IsString(n)) {
                char label[128];
                snprintf(label, sizeof(label), "Rank %d: %s", x->rank, n->valuestring);
                cJSON_SetValuestring(n, label);
            }
            if (cJSON_IsString(en) && strcmp(en->valuestring, "process_sort_index") == 0 &&
                cJSON_IsNumber(si))
                cJSON_SetNumberValue(si, si->valuedouble + (double)x->rank_index * MAX_PROCS);
        }
    }
    if (!x->ch->merge_graphs && pid->valuedouble == x->step_pid && cJSON_IsString(ph) &&
        strcmp(ph->valuestring, "M") != 0) {
        cJSON *tid = cJSON_GetObjectItemCaseSensitive(c, "tid");
        if (cJSON_IsNumber(graph))
            x->cur_graph = (long long)graph->valuedouble;
        if (x->cur_graph >= 0 && cJSON_IsNumber(tid)) {
            cJSON_SetNumberValue(tid, (double)(GRAPH_TID_BASE + x->cur_graph));
            note_graph(x, x->cur_graph);
        }
    }
    text = cJSON_PrintUnformatted(c);
    cJSON_Delete(c);
    if (!text)
        return nnp__fail(NNP_ENOMEM, "out of memory exporting the timeline");
    nnp__jw_raw(x->w, text);
    cJSON_free(text);
    return x->w->err;
}

/* "Graph N" names for the lanes made when sub-graphs are not merged. */
static void graph_lanes(ex_t *x)
{
    for (size_t i = 0; i < x->n_graphs; i++) {
        char name[64];
        nnp__jw_obj_begin(x->w);
        nnp__jw_key(x->w, "name");
        nnp__jw_str(x->w, "thread_name");
        nnp__jw_key(x->w, "ph");
        nnp__jw_str(x->w, "M");
        nnp__jw_key(x->w, "pid");
        nnp__jw_double(x->w, x->step_pid + (double)x->rank_index *
                                               (x->ch->n_ranks > 1 ? NNP_TL_RANK_PID_STRIDE : 0));
        nnp__jw_key(x->w, "tid");
        nnp__jw_int(x->w, GRAPH_TID_BASE + x->graphs[i]);
        nnp__jw_key(x->w, "args");
        nnp__jw_obj_begin(x->w);
        nnp__jw_key(x->w, "name");
        snprintf(name, sizeof(name), "Graph %lld", x->graphs[i]);
        nnp__jw_str(x->w, name);
        nnp__jw_obj_end(x->w);
        nnp__jw_obj_end(x->w);
    }
}

bool nnp__tl_is_plain(const nnp_tl_choice_t *ch)
{
    return ch->n_ranks == 1 && !ch->summary && ch->graph < 0 && ch->merge_graphs;
}

int nnp__timeline_export(const nnp_run_t *r, const nnp_tl_choice_t *ch, int fd)
{
    nnp_jw_t w;
    nnp_json_stream_report_t rep;
    ex_t *x = nnp__calloc(1, sizeof(*x));
    int rc;

    if (!x)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    rc = nnp__jw_init(&w, fd, false, 0);
    nnp__jw_arr_begin(&w);
    for (size_t k = 0; rc == NNP_OK && k < ch->n_ranks; k++) {
        char path[NNP_PATH_MAX];
        const nnp_rank_data_t *d = ch->ranks[k];
        memset(x, 0, sizeof(*x));
        x->ch = ch;
        x->rank_index = k;
        x->rank = d->rank;
        x->w = &w;
        x->step_pid = -1;
        x->cur_graph = -1;
        int tfd;
        if (!d->trace_rel[0] ||
            nnp__path_join(path, sizeof(path), r->results, d->trace_rel) != NNP_OK) {
            rc = nnp__fail(NNP_ENOENT, "rank %d has no timeline", d->rank);
            break;
        }
        /* The stream reader opens by path: check first that no link is on the way. */
        tfd = nnp__safe_open(r->results, d->trace_rel, false);
        if (tfd < 0) {
            rc = tfd;
            break;
        }
        close(tfd);
        rc = nnp__json_stream_array(path, collect, x, &rep);
        if (rc == NNP_OK)
            rc = nnp__json_stream_array(path, rewrite, x, &rep);
        if (rc == NNP_OK)
            graph_lanes(x);
    }
    nnp__jw_arr_end(&w);
    nnp__jw_line_end(&w);
    if (rc == NNP_OK)
        rc = nnp__jw_flush(&w);
    nnp__jw_fini(&w);
    nnp__free(x);
    return rc;
}
