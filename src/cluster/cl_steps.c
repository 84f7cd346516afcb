/* cl_steps.c - the cluster's step views, from the spilled step rows: msprof-analyze's
 * cluster_step_trace_time.csv (rank rows, then per stage and step the column-wise maximum
 * over the stage's ranks, as its StepTraceTimeAnalysis does) and its table in
 * cluster_analysis.db; MindInsight's cluster step trace (cluster_step_trace.json: per step
 * and rank the iteration interval, fp+bp, tail and total, step 0 being the average, as its
 * ClusterStepTraceAnalyser serves them); and MindSpore's ascend_cluster_analyse_{mode}_
 * {stages}_{size}_{rank}.csv per rank. Stages come from the data's pipeline layout, else
 * all ranks form one stage (docs/CLUSTER.md). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cl_driver.h"
#include "util/csv_writer.h"
#include "util/json_writer.h"

#define CSV_FILE "cluster_step_trace_time.csv"
#define MI_FILE  "cluster_step_trace.json"
#define NUM_BUF  40
/* MindInsight's step-trace numbers: ms rounded to 4 decimals (cluster_analyser.py). */
#define MI_DECIMALS 4
#define NS_PER_MS   1e6
/* First capacity of a stage's step table (power of two). */
#define STEP_TABLE_MIN 64
#define MODE_DATA      "data-parallel"
#define MODE_PIPELINE  "pipeline-parallel"

/* msprof-analyze's columns after Step, Type, Index: our columns 0..8. */
static const char *const csv_header[] = {"Step",
                                         "Type",
                                         "Index",
                                         "Computing",
                                         "Communication(Not Overlapped)",
                                         "Overlapped",
                                         "Communication",
                                         "Free",
                                         "Stage",
                                         "Bubble",
                                         "Communication(Not Overlapped and Exclude Receive)",
                                         "Preparing",
                                         NULL};
#define N_MPA_COLS 9

/* ---- stages ---- */

static int stage_setup(nnp_cl_data_t *d)
{
    int max_id = 0;
    bool any = false;
    d->stage_of = nnp__calloc((size_t)d->n_ranks + 1, sizeof(int));
    if (!d->stage_of)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    if (d->pp > 0 && d->tp > 0 && d->dp > 0) {
        /* Megatron's rank order: tp fastest, then dp, then pp (msprof-analyze's
         * ParallelStrategyCalculator): the stage is the pp index. */
        for (int i = 0; i < d->n_ranks; i++)
            d->stage_of[i] = d->ranks[i].rank / (d->tp * d->dp) % d->pp;
        d->n_stages = d->pp;
        d->stages_from_pipeline = true;
        return NNP_OK;
    }
    for (int i = 0; i < d->n_ranks; i++) {
        if (d->ranks[i].flags & NNP_CL_RANK_STAGE) {
            any = true;
            if (d->ranks[i].stage_id > max_id)
                max_id = d->ranks[i].stage_id;
        }
    }
    if (!any) {
        d->n_stages = 1; /* all ranks in one stage (no pipeline layout in the data) */
        return NNP_OK;
    }
    /* Stage ids of the data (1-based), compacted in the order of their lowest rank; ranks
     * the data gave none join a last stage of their own. */
    {
        int *map = nnp__calloc((size_t)max_id + 2, sizeof(int));
        int next = 0;
        if (!map)
            return nnp__fail(NNP_ENOMEM, "out of memory");
        for (int i = 0; i < d->n_ranks; i++) {
            int id = d->ranks[i].flags & NNP_CL_RANK_STAGE ? d->ranks[i].stage_id : max_id + 1;
            if (id < 0 || id > max_id + 1)
                id = max_id + 1;
            if (!map[id])
                map[id] = ++next;
            d->stage_of[i] = map[id] - 1;
        }
        d->n_stages = next;
        nnp__free(map);
    }
    d->stages_from_pipeline = d->n_stages > 1;
    return NNP_OK;
}

/* ---- rank rows ---- */

static void parallel_index(const nnp_cl_data_t *d, int rank, char out[3][NUM_BUF])
{
    int tp = rank % d->tp, dp = rank / d->tp % d->dp, pp = rank / (d->tp * d->dp) % d->pp;
    snprintf(out[0], NUM_BUF, "%d", dp);
    snprintf(out[1], NUM_BUF, "%d", pp);
    snprintf(out[2], NUM_BUF, "%d", tp);
}

static bool has_parallel(const nnp_cl_data_t *d)
{
    return d->tp > 0 && d->pp > 0 && d->dp > 0;
}

/* One CSV row and its database row. index is the rank or the stage tuple. */
static int emit_row(nnp_cl_data_t *d, nnp_csv_t *w, uint64_t step, const char *type,
                    const char *index, const int64_t *v, int rank)
{
    char vals[N_MPA_COLS][NUM_BUF], step_s[NUM_BUF] = "", par[3][NUM_BUF];
    const char *row[15];
    size_t n = 0;
    if (step != NNP_CL_NO_STEP)
        snprintf(step_s, sizeof(step_s), "%" PRIu64, step);
    nnp__csv_str(w, step_s);
    nnp__csv_str(w, type);
    nnp__csv_str(w, index);
    row[n++] = step_s;
    row[n++] = type;
    row[n++] = index;
    for (int c = 0; c < N_MPA_COLS; c++) {
        nnp__cl_us(vals[c], sizeof(vals[c]), v[c]);
        nnp__csv_str(w, vals[c]);
        row[n++] = vals[c];
    }
    if (has_parallel(d)) {
        if (rank >= 0) {
            parallel_index(d, rank, par);
            for (int i = 0; i < 3; i++) {
                nnp__csv_str(w, par[i]);
                row[n++] = par[i];
            }
        } else {
            for (int i = 0; i < 3; i++) {
                nnp__csv_str(w, "NA");
                row[n++] = NULL;
            }
        }
    } else {
        for (int i = 0; i < 3; i++)
            row[n++] = NULL;
    }
    nnp__csv_end_row(w);
    return nnp__cl_db_row(d, NNP_CL_T_STEP_TRACE, row, n);
}

/* ---- stage rows: per step, the column-wise max over the stage's ranks ---- */

typedef struct step_max {
    uint64_t step;
    int64_t v[N_MPA_COLS];
} step_max_t;

typedef struct step_table {
    step_max_t *rows; /* first-seen order */
    size_t n, cap;
    uint32_t *slot; /* hash: row index + 1 */
    size_t slot_cap;
} step_table_t;

static step_max_t *table_get(step_table_t *t, uint64_t step, bool *is_new)
{
    size_t k;
    *is_new = false;
    if ((t->n + 1) * 2 > t->slot_cap) {
        size_t ncap = t->slot_cap ? t->slot_cap * 2 : STEP_TABLE_MIN;
        uint32_t *ns = nnp__calloc(ncap, sizeof(*ns));
        if (!ns)
            return NULL;
        for (size_t i = 0; i < t->n; i++) {
            k = (size_t)(t->rows[i].step * 0x9e3779b97f4a7c15ull >> 7) & (ncap - 1);
            while (ns[k])
                k = (k + 1) & (ncap - 1);
            ns[k] = (uint32_t)i + 1;
        }
        nnp__free(t->slot);
        t->slot = ns;
        t->slot_cap = ncap;
    }
    k = (size_t)(step * 0x9e3779b97f4a7c15ull >> 7) & (t->slot_cap - 1);
    while (t->slot[k]) {
        if (t->rows[t->slot[k] - 1].step == step)
            return &t->rows[t->slot[k] - 1];
        k = (k + 1) & (t->slot_cap - 1);
    }
    if (t->n == t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : STEP_TABLE_MIN;
        step_max_t *nr = nnp__realloc(t->rows, ncap * sizeof(*nr));
        if (!nr)
            return NULL;
        t->rows = nr;
        t->cap = ncap;
    }
    t->slot[k] = (uint32_t)t->n + 1;
    t->rows[t->n].step = step;
    *is_new = true;
    return &t->rows[t->n++];
}

static int stage_rows(nnp_cl_data_t *d, nnp_csv_t *w)
{
    int *members = nnp__malloc(((size_t)d->n_ranks + 1) * sizeof(int));
    int rc = members ? NNP_OK : nnp__fail(NNP_ENOMEM, "out of memory");
    for (int s = 0; rc == NNP_OK && s < d->n_stages; s++) {
        step_table_t t = {0};
        size_t n_members = 0;
        char *index = NULL;
        for (int i = 0; i < d->n_ranks; i++)
            if (d->stage_of[i] == s && !(d->ranks[i].flags & NNP_CL_RANK_FAILED))
                members[n_members++] = d->ranks[i].rank;
        for (size_t m = 0; rc == NNP_OK && m < n_members; m++) {
            nnp_cl_cursor_t c;
            const nnp_cl_step_rec_t *r;
            rc = nnp__cl_cursor_open(&c, &d->steps, nnp__cl_spill_find(&d->steps, members[m]),
                                     sizeof(*r));
            while (rc == NNP_OK && (r = nnp__cl_cursor_next(&c, &rc)) != NULL) {
                bool is_new;
                step_max_t *x = table_get(&t, r->step_id, &is_new);
                if (!x) {
                    rc = nnp__fail(NNP_ENOMEM, "out of memory");
                    break;
                }
                for (int k = 0; k < N_MPA_COLS; k++)
                    if (is_new || r->v[k] > x->v[k])
                        x->v[k] = r->v[k];
            }
            nnp__cl_cursor_close(&c);
        }
        if (rc == NNP_OK && t.n > 0)
            rc = nnp__cl_tuple_text(members, n_members, &index);
        for (size_t i = 0; rc == NNP_OK && i < t.n; i++)
            rc = emit_row(d, w, t.rows[i].step, "stage", index, t.rows[i].v, -1);
        nnp__free(index);
        nnp__free(t.rows);
        nnp__free(t.slot);
    }
    nnp__free(members);
    return rc;
}

static int write_csv(nnp_cl_data_t *d)
{
    nnp_outfile_t f;
    nnp_csv_t w;
    int rc = nnp__cl_out_open(d, &f, CSV_FILE);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__csv_init(&w, f.fd);
    if (rc == NNP_OK) {
        for (size_t i = 0; csv_header[i]; i++)
            nnp__csv_str(&w, csv_header[i]);
        if (has_parallel(d)) {
            /* Only when the parallel layout is known, as msprof-analyze. */
            nnp__csv_str(&w, "DP Index");
            nnp__csv_str(&w, "PP Index");
            nnp__csv_str(&w, "TP Index");
        }
        nnp__csv_end_row(&w);
    }
    for (int i = 0; rc == NNP_OK && i < d->n_ranks; i++) {
        nnp_cl_cursor_t c;
        const nnp_cl_step_rec_t *r;
        char index[NUM_BUF];
        if (d->ranks[i].flags & NNP_CL_RANK_FAILED)
            continue;
        snprintf(index, sizeof(index), "%d", d->ranks[i].rank);
        rc = nnp__cl_cursor_open(&c, &d->steps, nnp__cl_spill_find(&d->steps, d->ranks[i].rank),
                                 sizeof(*r));
        while (rc == NNP_OK && (r = nnp__cl_cursor_next(&c, &rc)) != NULL)
            rc = emit_row(d, &w, r->step_id, "rank", index, r->v, r->rank);
        nnp__cl_cursor_close(&c);
    }
    if (rc == NNP_OK)
        rc = stage_rows(d, &w);
    {
        int wrc = nnp__csv_fini(&w);
        if (rc == NNP_OK)
            rc = wrc;
    }
    return nnp__out_commit(&f, rc);
}

/* ---- MindInsight's cluster step trace ---- */

static const char *mode_of(const nnp_cl_data_t *d)
{
    if (d->in->parallel_mode[0])
        return d->in->parallel_mode;
    for (int i = 0; i < d->n_ranks; i++)
        if (d->ranks[i].parallel_mode[0])
            return d->ranks[i].parallel_mode;
    return d->n_stages > 1 ? MODE_PIPELINE : MODE_DATA;
}

static bool is_bottleneck_mode(const char *mode)
{
    return strcmp(mode, MODE_DATA) != 0;
}

static double mi_ms(int64_t ns)
{
    double v = (double)ns / NS_PER_MS, scale = 1e4;
    return nearbyint(v * scale) / scale; /* round half to even, as Python's round() */
}

/* The MindInsight values of a step row: [interval, fp+bp, tail, total] or, outside data
 * parallel, [interval, computation, communication alone, stage, receive alone, collective
 * communication alone]. */
static size_t mi_values(const nnp_cl_step_rec_t *r, bool bottleneck, int64_t *out)
{
    if (!bottleneck) {
        out[0] = r->v[NNP_CL_ITER_INTERVAL];
        out[1] = r->v[NNP_CL_FP_AND_BP];
        out[2] = r->v[NNP_CL_TAIL];
        out[3] = r->v[NNP_CL_TOTAL];
        return 4;
    }
    out[0] = r->v[NNP_CL_ITER_INTERVAL];
    for (int c = 0; c < 5; c++) {
        static const int mpa_equiv[5] = {NNP_CL_COMPUTING, NNP_CL_COMM_NOT_OVERLAPPED, NNP_CL_STAGE,
                                         NNP_CL_BUBBLE, NNP_CL_COMM_NO_EXCL_RECV};
        out[1 + c] = r->known & NNP_CL_BIT(NNP_CL_MS_COMPUTATION + c)
                         ? r->v[NNP_CL_MS_COMPUTATION + c]
                         : r->v[mpa_equiv[c]];
    }
    return 6;
}

/* The average row of a rank: the data's own (MindSpore's '-' / last rows), else the mean. */
static void rank_average(const nnp_cl_rank_t *s, nnp_cl_step_rec_t *avg)
{
    memset(avg, 0, sizeof(*avg));
    avg->rank = s->rank;
    avg->known = s->tot_known;
    for (int c = 0; c < NNP_CL_STEP_NV; c++)
        avg->v[c] = s->n_steps ? s->tot_ns[c] / (int64_t)s->n_steps : 0;
    if (s->flags & NNP_CL_RANK_MI_AVG) {
        avg->v[NNP_CL_ITER_INTERVAL] = s->mi_avg_ns[0];
        avg->v[NNP_CL_FP_AND_BP] = s->mi_avg_ns[1];
        avg->v[NNP_CL_TAIL] = s->mi_avg_ns[2];
        avg->v[NNP_CL_TOTAL] = s->mi_avg_ns[3];
    }
    if (s->flags & NNP_CL_RANK_MS_AVG) {
        for (int c = 0; c < 5; c++)
            avg->v[NNP_CL_MS_COMPUTATION + c] = s->ms_avg_ns[c];
        avg->known |= NNP_CL_MS_MASK;
    }
}

static void mi_entry(nnp_jw_t *w, const nnp_cl_step_rec_t *r, bool bottleneck)
{
    int64_t v[6];
    size_t n = mi_values(r, bottleneck, v);
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, bottleneck ? "step_bottleneck_info" : "step_trace_info");
    nnp__jw_arr_begin(w);
    for (size_t i = 0; i < n; i++)
        nnp__jw_double(w, mi_ms(v[i]));
    nnp__jw_arr_end(w);
    nnp__jw_key(w, "rank_id");
    nnp__jw_int(w, r->rank);
    nnp__jw_key(w, "profiler_dir");
    nnp__jw_str(w, "profiler");
    nnp__jw_obj_end(w);
}

static int cmp_step_rank(const void *a, const void *b, void *ctx)
{
    const nnp_cl_step_rec_t *x = a, *y = b;
    (void)ctx;
    if (x->step_id != y->step_id)
        return x->step_id < y->step_id ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int write_mi(nnp_cl_data_t *d)
{
    const char *mode = mode_of(d);
    bool bottleneck = is_bottleneck_mode(mode);
    nnp_outfile_t f;
    nnp_jw_t w;
    nnp_cl_spill_t sorted;
    nnp_cl_merge_t *m = NULL;
    const nnp_cl_step_rec_t *r;
    uint64_t cur = NNP_CL_NO_STEP;
    uint32_t max_steps = 0;
    bool open = false;
    int rc = nnp__cl_sort_open(&d->steps, &sorted, sizeof(nnp_cl_step_rec_t), NULL, cmp_step_rank,
                               NULL, d->tmp_dir, &m);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__cl_out_open(d, &f, MI_FILE);
    if (rc != NNP_OK) {
        nnp__cl_merge_close(m);
        nnp__cl_spill_fini(&sorted);
        return rc;
    }
    for (int i = 0; i < d->n_ranks; i++)
        if (d->ranks[i].n_steps > max_steps)
            max_steps = d->ranks[i].n_steps;
    rc = nnp__jw_init(&w, f.fd, d->o->pretty, 0);
    if (rc == NNP_OK) {
        nnp__jw_obj_begin(&w);
        nnp__jw_key(&w, "total_step_num");
        nnp__jw_uint(&w, max_steps);
        nnp__jw_key(&w, "stage_num");
        nnp__jw_int(&w, d->n_stages);
        nnp__jw_key(&w, "parallel-mode");
        nnp__jw_str(&w, mode);
        nnp__jw_key(&w, "size");
        nnp__jw_int(&w, d->n_ranks - d->n_failed);
        nnp__jw_key(&w, "steps");
        nnp__jw_arr_begin(&w);
        /* Step 0: the average (MindInsight's step_id 0). */
        nnp__jw_obj_begin(&w);
        nnp__jw_key(&w, "step_id");
        nnp__jw_int(&w, 0);
        nnp__jw_key(&w, "info");
        nnp__jw_arr_begin(&w);
        for (int i = 0; i < d->n_ranks; i++) {
            nnp_cl_step_rec_t avg;
            if (d->ranks[i].flags & NNP_CL_RANK_FAILED)
                continue;
            rank_average(&d->ranks[i], &avg);
            mi_entry(&w, &avg, bottleneck);
        }
        nnp__jw_arr_end(&w);
        nnp__jw_obj_end(&w);
        while (rc == NNP_OK && (r = nnp__cl_merge_next(m, &rc)) != NULL) {
            if (r->step_id == NNP_CL_NO_STEP)
                continue;
            if (!open || r->step_id != cur) {
                if (open) {
                    nnp__jw_arr_end(&w);
                    nnp__jw_obj_end(&w);
                }
                nnp__jw_obj_begin(&w);
                nnp__jw_key(&w, "step_id");
                nnp__jw_uint(&w, r->step_id);
                nnp__jw_key(&w, "info");
                nnp__jw_arr_begin(&w);
                open = true;
                cur = r->step_id;
            }
            mi_entry(&w, r, bottleneck);
        }
        if (open) {
            nnp__jw_arr_end(&w);
            nnp__jw_obj_end(&w);
        }
        nnp__jw_arr_end(&w);
        nnp__jw_obj_end(&w);
        nnp__jw_line_end(&w);
        if (rc == NNP_OK)
            rc = nnp__jw_flush(&w);
    }
    nnp__jw_fini(&w);
    nnp__cl_merge_close(m);
    nnp__cl_spill_fini(&sorted);
    return nnp__out_commit(&f, rc);
}

/* ---- MindSpore's ascend_cluster_analyse_{mode}_{stages}_{size}_{rank}.csv ---- */

static void ms_row(nnp_csv_t *w, const nnp_cl_step_rec_t *r, bool pipeline)
{
    int64_t v[6];
    (void)mi_values(r, true, v);
    for (int c = 1; c <= (pipeline ? 5 : 2); c++)
        nnp__csv_fixed(w, (double)v[c] / NS_PER_MS, MI_DECIMALS);
    nnp__csv_end_row(w);
}

static int write_ascend_files(nnp_cl_data_t *d)
{
    static const char *const dp_cols[] = {"computation_time", "communication_alone_time", NULL};
    static const char *const pp_cols[] = {"computation_time",
                                          "communication_alone_time",
                                          "stage_time",
                                          "receive_alone_time",
                                          "collective_communication_alone_time",
                                          NULL};
    const char *mode = mode_of(d);
    bool pipeline = strcmp(mode, MODE_PIPELINE) == 0;
    int size = d->expected_ranks > d->n_ranks ? d->expected_ranks : d->n_ranks, rc = NNP_OK;
    for (int i = 0; rc == NNP_OK && i < d->n_ranks; i++) {
        const nnp_cl_rank_t *s = &d->ranks[i];
        char name[NNP_NAME_MAX];
        nnp_outfile_t f;
        nnp_csv_t w;
        nnp_cl_cursor_t c;
        const nnp_cl_step_rec_t *r;
        nnp_cl_step_rec_t avg;
        if ((s->flags & NNP_CL_RANK_FAILED) || s->n_steps == 0)
            continue;
        snprintf(name, sizeof(name), "ascend_cluster_analyse_%s_%d_%d_%d.csv", mode, d->n_stages,
                 size, s->rank);
        rc = nnp__cl_out_open(d, &f, name);
        if (rc != NNP_OK)
            break;
        rc = nnp__csv_init(&w, f.fd);
        if (rc == NNP_OK) {
            nnp__csv_header(&w, pipeline ? pp_cols : dp_cols);
            rc = nnp__cl_cursor_open(&c, &d->steps, nnp__cl_spill_find(&d->steps, s->rank),
                                     sizeof(*r));
            while (rc == NNP_OK && (r = nnp__cl_cursor_next(&c, &rc)) != NULL)
                if (r->step_id != NNP_CL_NO_STEP)
                    ms_row(&w, r, pipeline);
            nnp__cl_cursor_close(&c);
            rank_average(s, &avg);
            ms_row(&w, &avg, pipeline); /* MindSpore's last row: the average */
            {
                int wrc = nnp__csv_fini(&w);
                if (rc == NNP_OK)
                    rc = wrc;
            }
        }
        rc = nnp__out_commit(&f, rc);
    }
    return rc;
}

int nnp__cl_write_steps(nnp_cl_data_t *d)
{
    int rc = stage_setup(d);
    if (rc == NNP_OK)
        rc = write_csv(d);
    if (rc == NNP_OK)
        rc = write_mi(d);
    if (rc == NNP_OK)
        rc = write_ascend_files(d);
    return rc;
}
