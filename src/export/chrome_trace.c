/* chrome_trace.c - the timeline: trace_view.json (a Chrome trace event array) in the rank
 * directory and timeline_summary_{rank}.json in the output directory. Called by the
 * analyse driver after step_trace.c and overlap.c. Events are streamed through the JSON
 * writer step by step, never held as a document; this file drives them (set-up, step
 * buckets, truncation at timeline_limit, metadata), timeline_events.c writes them and
 * timeline_lanes.c places them (timeline.h). Rules for users (processes, units,
 * truncation): docs/OUTPUTS.md, "Timeline". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/timeline.h"

#define TL_FILE "trace_view.json"
/* 1.x MindSpore name, kept by 2.x tooling (formats.md 1.4). */
#define TL_SUMMARY_FMT      "timeline_summary_%d.json"
#define TL_SUMMARY_NAME_BUF 64

/* Bytes of trace_view.json so far: what reached the file plus what is buffered. */
static uint64_t bytes_written(const tl_t *tl)
{
    return nnp__jw_bytes(&tl->w);
}
static int tl_init(tl_t *tl, const nnp_actx_t *c, const nnp_step_trace_t *st,
                   const nnp_overlap_t *ov)
{
    const nnp_model_t *m = c->all ? c->all : c->m; /* each process in lanes of its own */
    int64_t pid = m->info.pid;
    size_t slots;
    memset(tl, 0, sizeof(*tl));
    tl->c = c;
    tl->m = m;
    tl->st = st;
    tl->ov = ov;
    if (ov)
        nnp__overlap_gaps_begin(ov, &tl->free_gaps);
    tl->next_tid = SYNTH_TID_BASE;
    tl->window_lo = INT64_MIN;
    /* Host = the run's pid; the other processes are synthetic (SYNTH_PID_BASE). */
    tl->host_proc = nnp__tl_proc_new(
        tl, PROC_HOST, pid >= 0 && pid < SYNTH_PID_BASE ? (uint32_t)pid : SYNTH_PID_BASE, 0);
    tl->steps_proc = nnp__tl_proc_new(tl, PROC_STEPS, SYNTH_PID_BASE + 1, 0);
    tl->overlap_proc = nnp__tl_proc_new(tl, PROC_OVERLAP, SYNTH_PID_BASE + 2, 0);
    tl->comm_proc = nnp__tl_proc_new(tl, PROC_COMM, SYNTH_PID_BASE + 3, 0);
    if (tl->err != NNP_OK)
        return tl->err;
    tl->procs[tl->host_proc].used = true; /* counters live there, even with no thread */
    tl->steps_track = nnp__tl_track_new(tl, tl->steps_proc, LANE_STEPS, 0, 0, 0, 0, 0);
    for (int k = 0; k < OV_TRACKS; k++)
        tl->ov_tracks[k] = nnp__tl_track_new(tl, tl->overlap_proc, LANE_OVERLAP, (uint64_t)k, 0,
                                             (int64_t)k * MAX_LANES, (uint64_t)k, 0);
    if (tl->err != NNP_OK)
        return tl->err;
    if (ov) /* CANN writes the four threads even when a list is empty */
        for (int k = 0; k < OV_TRACKS; k++)
            nnp__tl_mark_used(tl, tl->ov_tracks[k]);

    tl->n_host_threads = m->threads.t.n;
    slots = (tl->n_host_threads + 1) * HOST_LANES;
    tl->host_base = nnp__malloc(slots * sizeof(*tl->host_base));
    tl->seen = nnp__calloc(m->n_strs ? m->n_strs : 1, 1);
    tl->str_kind = nnp__calloc(m->n_strs ? m->n_strs : 1, 1);
    tl->short_at = nnp__malloc((m->n_strs ? m->n_strs : 1) * sizeof(*tl->short_at));
    if (!tl->host_base || !tl->seen || !tl->str_kind || !tl->short_at)
        return nnp__tl_oom(tl);
    memset(tl->host_base, 0xff, slots * sizeof(*tl->host_base));
    memset(tl->short_at, 0xff, (m->n_strs ? m->n_strs : 1) * sizeof(*tl->short_at));
    if (nnp__tl_prepare_ops(tl) != NNP_OK || nnp__tl_prepare_host(tl) != NNP_OK)
        return tl->err;
    return NNP_OK;
}

static void tl_fini(tl_t *tl)
{
    for (size_t i = 0; i < tl->n_tracks; i++)
        nnp__free(tl->tracks[i].ends);
    nnp__free(tl->tracks);
    nnp__free(tl->procs);
    nnp__tl_hmap_fini(&tl->lanes);
    nnp__free(tl->host_base);
    nnp__free(tl->op_track);
    nnp__free(tl->host_end);
    nnp__free(tl->corr);
    nnp__free(tl->seen);
    nnp__free(tl->str_kind);
    nnp__free(tl->short_at);
}

/* ---- metadata ---- */

static void track_name(const tl_t *tl, const track_t *t, char *buf, size_t cap)
{
    char base[NAME_BUF - NUM_BUF]; /* room left for the " (overlap N)" suffix */
    const char *thread = t->name ? str(tl, t->name) : NULL;
    char unnamed[NUM_BUF + 8];
    snprintf(unnamed, sizeof(unnamed), "Thread %llu", (unsigned long long)t->num);
    if (!thread || !*thread)
        thread = unnamed;
    switch (t->kind) {
    case LANE_STEPS:
        snprintf(base, sizeof(base), "Steps");
        break;
    case LANE_OVERLAP:
        snprintf(base, sizeof(base), "%s", nnp__overlap_lane_names[t->num % OV_TRACKS]);
        break;
    case LANE_OPS:
        snprintf(base, sizeof(base), "%s", thread);
        break;
    case LANE_RANGES:
        snprintf(base, sizeof(base), "%s host ranges", thread);
        break;
    case LANE_MARKERS:
        snprintf(base, sizeof(base), "%s markers", thread);
        break;
    case LANE_OPEN:
        snprintf(base, sizeof(base), "%s unfinished ranges", thread);
        break;
    case LANE_STREAM:
        snprintf(base, sizeof(base), "Stream %llu", (unsigned long long)t->num);
        break;
    default: /* LANE_GROUP */
        snprintf(base, sizeof(base), "%s", t->name ? str(tl, t->name) : "default");
        break;
    }
    if (t->level == 0)
        snprintf(buf, cap, "%s", base);
    else if (t->level == 1)
        snprintf(buf, cap, "%s (overlap)", base);
    else
        snprintf(buf, cap, "%s (overlap %u)", base, t->level);
}

static void meta(tl_t *tl, const char *what, uint32_t pid, const uint32_t *tid, const char *key,
                 const char *sval, int64_t ival)
{
    nnp__jw_obj_begin(&tl->w);
    key_str(tl, "name", what);
    key_str(tl, "ph", "M");
    key_uint(tl, "pid", pid);
    if (tid)
        key_uint(tl, "tid", *tid);
    nnp__jw_key(&tl->w, "args");
    nnp__jw_obj_begin(&tl->w);
    if (sval)
        key_str(tl, key, sval);
    else
        key_int(tl, key, ival);
    nnp__jw_obj_end(&tl->w);
    nnp__jw_obj_end(&tl->w);
}

/* process_name / process_sort_index for every process with events, thread_name /
 * thread_sort_index for every lane with events. Order: Step Trace, Host, devices,
 * Communication, Overlap Analysis (CANN's order of msprof_*.json processes). */
static void write_metadata(tl_t *tl)
{
    char name[NAME_BUF];
    int64_t n_dev = 0;
    for (size_t i = 0; i < tl->n_procs; i++)
        n_dev += tl->procs[i].kind == PROC_DEVICE;
    for (size_t i = 0, dev = 0; i < tl->n_procs; i++) {
        const proc_t *p = &tl->procs[i];
        int64_t sort = 0;
        if (!p->used)
            continue;
        switch (p->kind) {
        case PROC_STEPS:
            snprintf(name, sizeof(name), "Step Trace");
            sort = 0;
            break;
        case PROC_HOST:
            snprintf(name, sizeof(name), "Host");
            sort = 1;
            break;
        case PROC_DEVICE:
            snprintf(name, sizeof(name), "Device %u", p->device_id);
            sort = 2 + (int64_t)dev++;
            break;
        case PROC_COMM:
            snprintf(name, sizeof(name), "Communication");
            sort = 2 + n_dev;
            break;
        default:
            snprintf(name, sizeof(name), "Overlap Analysis");
            sort = 3 + n_dev;
            break;
        }
        meta(tl, "process_name", p->pid, NULL, "name", name, 0);
        meta(tl, "process_sort_index", p->pid, NULL, "sort_index", NULL, sort);
    }
    for (size_t i = 0; i < tl->n_tracks; i++) {
        const track_t *t = &tl->tracks[i];
        uint32_t pid = tl->procs[t->proc].pid;
        if (!t->used)
            continue;
        track_name(tl, t, name, sizeof(name));
        meta(tl, "thread_name", pid, &t->tid, "name", name, 0);
        meta(tl, "thread_sort_index", pid, &t->tid, "sort_index", NULL, t->sort);
    }
}

/* The visible end of a truncated timeline: a global instant on the Step Trace process. */
static void write_truncation(tl_t *tl, const nnp_step_row_t *last, size_t omitted)
{
    char msg[NAME_BUF];
    double mb = (double)tl->c->timeline_limit_bytes / BYTES_PER_MB;
    /* omitted == 0: the cut falls after the last step, before events recorded later. */
    snprintf(msg, sizeof(msg), "nnprof: timeline truncated at step %llu (timeline_limit %g MB); %s",
             (unsigned long long)last->step_id, mb,
             omitted ? "later steps omitted" : "events after the last step omitted");
    NNP_LOG_W("%s (%zu steps omitted)", msg, omitted);
    nnp__tl_ev_head(tl, msg, "i", tl->steps_track, last->end_ns);
    NNP_JW_LIT(&tl->w, ",\"s\":\"g\",\"cat\":\"nnprof\",\"args\":{\"last_step\":");
    nnp__jw_frag_u64(&tl->w, last->step_id);
    NNP_JW_LIT(&tl->w, ",\"omitted_steps\":");
    nnp__jw_frag_u64(&tl->w, omitted);
    NNP_JW_LIT(&tl->w, ",\"timeline_limit_bytes\":");
    nnp__jw_frag_u64(&tl->w, tl->c->timeline_limit_bytes);
    NNP_JW_LIT(&tl->w, "}}");
}

/* Events in step order: before the first step, each step (its slices, then every event
 * starting inside it), after the last step. With --steps only the selected steps are
 * written. The limit is checked at each step boundary, so a step is never cut. */
static void write_events(tl_t *tl)
{
    const nnp_step_trace_t *st = tl->st;
    size_t n = st ? st->n : 0;
    uint64_t limit = tl->c->timeline_limit_bytes;
    int64_t bound;
    if (n == 0) {
        if (!tl->c->has_steps) /* --steps that matched nothing: nothing to write */
            nnp__tl_emit_until(tl, INT64_MAX, true);
        if (limit && bytes_written(tl) > limit)
            NNP_LOG_W("timeline is over timeline_limit (%g MB) but the run has no steps to "
                      "cut at: written in full",
                      (double)limit / BYTES_PER_MB);
        return;
    }
    bound = st->rows[0].start_point_ns;
    if (tl->c->has_steps)
        tl->window_lo = bound;
    nnp__tl_emit_until(tl, bound, !tl->c->has_steps);
    for (size_t k = 0; k < n; k++) {
        const nnp_step_row_t *r = &st->rows[k];
        /* Bucket k ends where step k+1 starts (its start_point, kept monotonic). */
        int64_t next = k + 1 < n ? st->rows[k + 1].start_point_ns : r->end_ns;
        bool more;
        if (next < bound)
            next = bound;
        bound = next;
        nnp__tl_emit_step(tl, r);
        nnp__tl_emit_until(tl, bound, true);
        if (!limit || bytes_written(tl) <= limit)
            continue;
        more = k + 1 < n || (!tl->c->has_steps && nnp__tl_rows_left(tl));
        if (more) {
            write_truncation(tl, r, n - 1 - k);
            return;
        }
    }
    if (!tl->c->has_steps)
        nnp__tl_emit_until(tl, INT64_MAX, true);
}

/* ---- timeline_summary_{rank}.json ---- */

static int write_summary(tl_t *tl)
{
    char name[TL_SUMMARY_NAME_BUF], num[NUM_BUF];
    nnp_outfile_t f;
    nnp_jw_t w;
    uint64_t streams = 0;
    bool by_stream = tl->m->kernels.t.n > 0;
    int rc;
    /* Streams: device streams with kernels; a CPU-only run counts its threads with ops. */
    for (size_t i = 0; i < tl->n_tracks; i++) {
        const track_t *t = &tl->tracks[i];
        streams += t->used && t->level == 0 && t->kind == (by_stream ? LANE_STREAM : LANE_OPS);
    }
    snprintf(name, sizeof(name), TL_SUMMARY_FMT, tl->c->rank);
    rc = nnp__out_open(&f, tl->c->out_dir, name);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__jw_init(&w, f.fd, tl->c->pretty, 0);
    if (rc == NNP_OK) {
        nnp__jw_obj_begin(&w);
        nnp__jw_key(&w, "total_time");
        nnp__fmt_fixed(num, tl->busy_ns, NS_PER_MS, MS_DECIMALS);
        nnp__jw_raw(&w, num);
        nnp__jw_key(&w, "num_of_streams");
        nnp__jw_uint(&w, streams);
        nnp__jw_key(&w, "num_of_ops");
        nnp__jw_uint(&w, tl->n_names);
        nnp__jw_key(&w, "op_exe_times");
        nnp__jw_uint(&w, tl->n_exec);
        nnp__jw_key(&w, "max_scope_name_num");
        nnp__jw_uint(&w, tl->max_scope);
        nnp__jw_obj_end(&w);
        nnp__jw_line_end(&w);
        rc = nnp__jw_flush(&w);
    }
    nnp__jw_fini(&w);
    return nnp__out_commit(&f, rc);
}

int nnp__timeline_write(const nnp_actx_t *c, const nnp_step_trace_t *st, const nnp_overlap_t *ov)
{
    nnp_outfile_t f;
    tl_t tl;
    int rc;
    if (!c->rank_dir || !c->out_dir)
        return nnp__fail(NNP_EINVAL, "timeline: no output directory");
    rc = tl_init(&tl, c, st, ov);
    if (rc != NNP_OK)
        goto out;
    rc = nnp__out_open(&f, c->rank_dir, TL_FILE);
    if (rc != NNP_OK)
        goto out;
    rc = nnp__jw_init(&tl.w, f.fd, c->pretty, 0);
    if (rc == NNP_OK) {
        nnp__jw_arr_begin(&tl.w);
        write_events(&tl);
        write_metadata(&tl);
        nnp__jw_arr_end(&tl.w);
        nnp__jw_line_end(&tl.w);
        rc = tl.err != NNP_OK ? tl.err : nnp__jw_flush(&tl.w);
    }
    nnp__jw_fini(&tl.w);
    rc = nnp__out_commit(&f, rc);
    if (rc == NNP_OK && tl.dropped > 0)
        NNP_LOG_W("timeline: %llu slices dropped: more than %d overlapping lanes on one thread",
                  (unsigned long long)tl.dropped, MAX_LANES);
    if (rc == NNP_OK)
        rc = write_summary(&tl);
out:
    tl_fini(&tl);
    return rc;
}
