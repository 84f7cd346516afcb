/* profiler_info.c - profiler_info_{rank}.json: the run and the analysis of one rank
 * (docs/OUTPUTS.md), written last by the analyse driver for every analysed rank. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyse/driver.h"
#include "util/json_writer.h"
#include "util/util.h"

#define TIME_TEXT_CAP 32

static void time_text(time_t t, char *buf)
{
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(buf, TIME_TEXT_CAP, "%Y-%m-%d %H:%M:%S", &tm);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Graph ids kept by a scan before the sort of every row takes over: runs have a handful
 * of graphs, and the scan must not turn quadratic when some run has thousands. */
#define SCAN_IDS_MAX 64

/* Adds id to the distinct ids v[0..*n) unless already there; false when that would make
 * more than SCAN_IDS_MAX. Rows repeat the same id in runs, so the last one is tried first. */
static bool add_id(uint32_t *v, size_t *n, uint32_t id)
{
    if (*n && v[*n - 1] == id)
        return true;
    for (size_t k = 0; k < *n; k++)
        if (v[k] == id)
            return true;
    if (*n == SCAN_IDS_MAX)
        return false;
    v[(*n)++] = id;
    return true;
}

/* Distinct graph ids of the steps and ops, sorted. Returns a count; *out is allocated. */
static size_t graph_ids(const nnp_model_t *m, uint32_t **out)
{
    size_t n = m->steps.t.n + m->ops.t.n, k = 0;
    uint32_t *v = n ? nnp__malloc(n * sizeof(uint32_t)) : NULL;
    bool ok = true;
    *out = v;
    if (!v)
        return 0;
    for (size_t i = 0; i < m->steps.t.n && ok; i++)
        ok = add_id(v, &k, m->steps.graph_id[i]);
    for (size_t i = 0; i < m->ops.t.n && ok; i++)
        ok = add_id(v, &k, m->ops.graph_id[i]);
    if (!ok) { /* many graphs: sort every row's id and keep the distinct ones */
        k = 0;
        for (size_t i = 0; i < m->steps.t.n; i++)
            v[k++] = m->steps.graph_id[i];
        for (size_t i = 0; i < m->ops.t.n; i++)
            v[k++] = m->ops.graph_id[i];
        qsort(v, k, sizeof(uint32_t), cmp_u32);
        n = 0;
        for (size_t i = 0; i < k; i++)
            if (n == 0 || v[n - 1] != v[i])
                v[n++] = v[i];
        return n;
    }
    qsort(v, k, sizeof(uint32_t), cmp_u32);
    return k;
}

size_t nnp__model_events(const nnp_model_t *m)
{
    return m->ops.t.n + m->kernels.t.n + m->host.t.n + m->steps.t.n + m->epochs.t.n + m->fp.t.n +
           m->bp.t.n + m->comms.t.n + m->mem.t.n + m->pipe_ops.t.n + m->queues.t.n +
           m->counters.t.n + m->markers.t.n;
}

int nnp__profiler_info_write(const nnp_actx_t *c, time_t analyse_start, time_t analyse_end)
{
    const nnp_model_t *m = c->m;
    const nnp_run_info_t *in = &m->info;
    char name[64], t0[TIME_TEXT_CAP], t1[TIME_TEXT_CAP];
    nnp_outfile_t f;
    nnp_jw_t w;
    uint32_t *ids;
    size_t n_ids;
    int rc;

    snprintf(name, sizeof(name), "profiler_info_%d.json", c->rank);
    rc = nnp__out_open(&f, c->out_dir, name);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__jw_init(&w, f.fd, c->pretty, 0);
    nnp__jw_obj_begin(&w);
    nnp__jw_key(&w, "context_mode");
    nnp__jw_str(&w, "native");
    nnp__jw_key(&w, "rank_id");
    nnp__jw_int(&w, in->rank_id);
    nnp__jw_key(&w, "rank_size");
    nnp__jw_int(&w, in->rank_size);
    nnp__jw_key(&w, "device_id");
    nnp__jw_int(&w, in->device_id);
    nnp__jw_key(&w, "nnprof_version");
    nnp__jw_str(&w, NNP_VERSION_STRING);
    nnp__jw_key(&w, "mode");
    nnp__jw_str(&w, in->source_format ? in->source_format : "");
    nnp__jw_key(&w, "parallel_mode");
    nnp__jw_str(&w, in->rank_size > 1 ? "data_parallel" : "stand_alone");
    nnp__jw_key(&w, "stage_num");
    nnp__jw_int(&w, 1);
    time_text((time_t)(in->start_wall_us / 1000000), t0);
    nnp__jw_key(&w, "profiling_start_time");
    nnp__jw_str(&w, in->start_wall_us ? t0 : "");
    nnp__jw_key(&w, "profiling_stop_time");
    if (in->n_windows && in->windows[in->n_windows - 1].stop_ns != NNP_OPEN_END) {
        int64_t stop_us = in->windows[in->n_windows - 1].stop_ns / 1000 + in->diff_time_us;
        time_text((time_t)(stop_us / 1000000), t1);
        nnp__jw_str(&w, t1);
    } else {
        nnp__jw_str(&w, "");
    }
    time_text(analyse_start, t0);
    time_text(analyse_end, t1);
    nnp__jw_key(&w, "analyse_start_time");
    nnp__jw_str(&w, t0);
    nnp__jw_key(&w, "analyse_end_time");
    nnp__jw_str(&w, t1);
    nnp__jw_key(&w, "graph_ids");
    nnp__jw_arr_begin(&w);
    n_ids = graph_ids(m, &ids);
    for (size_t i = 0; i < n_ids; i++)
        nnp__jw_uint(&w, ids[i]);
    nnp__free(ids);
    nnp__jw_arr_end(&w);
    nnp__jw_key(&w, "is_heterogeneous");
    nnp__jw_bool(&w, false);
    nnp__jw_key(&w, "diff_time");
    nnp__jw_int(&w, in->diff_time_us);
    nnp__jw_key(&w, "run_state");
    nnp__jw_str(&w, in->state ? in->state : "unknown");
    nnp__jw_key(&w, "events_lost");
    nnp__jw_uint(&w, in->events_lost);
    nnp__jw_key(&w, "chunks_corrupt");
    nnp__jw_uint(&w, in->chunks_corrupt);
    nnp__jw_key(&w, "chunks_truncated");
    nnp__jw_uint(&w, in->chunks_truncated);
    nnp__jw_key(&w, "source");
    nnp__jw_str(&w, in->source ? in->source : "");
    nnp__jw_key(&w, "rank_output_dir");
    nnp__jw_str(&w, c->rank_dir ? c->rank_dir : "");
    nnp__jw_key(&w, "events_recorded");
    nnp__jw_uint(&w, nnp__model_events(m));
    nnp__jw_key(&w, "samples_recorded");
    nnp__jw_uint(&w, m->sys_cpu.t.n + m->task_cpu.t.n + m->proc_rss.t.n + m->host_mem.t.n);
    if (c->all && in->n_worker_pids) {
        /* Processes that worked for the rank's (model_view.c): in its timeline only. */
        nnp__jw_key(&w, "worker_processes");
        nnp__jw_uint(&w, in->n_worker_pids);
        nnp__jw_key(&w, "worker_ops");
        nnp__jw_uint(&w, c->all->ops.t.n - m->ops.t.n);
    }
    nnp__jw_key(&w, "profiling_options");
    nnp__jw_raw(&w, in->options_json ? in->options_json : "{}");
    nnp__jw_obj_end(&w);
    nnp__jw_line_end(&w);
    if (rc == NNP_OK)
        rc = nnp__jw_flush(&w);
    nnp__jw_fini(&w);
    return nnp__out_commit(&f, rc);
}
