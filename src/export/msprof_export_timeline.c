/* msprof_export_timeline.c - the two files of `nnprof export timeline`: msprof_{ts}.json
 * (CANN host ops, Ascend Hardware kernels, Communication planes, Overlap Analysis lanes)
 * and step_trace_{ts}.json, Chrome-trace JSON as msprof writes it (reference/formats.md
 * section 3). Called by the driver, msprof_export.c, through nnp__msprof_write_timeline. */
#include <stdio.h>
#include <string.h>

#include "export/msprof_export_internal.h"
#include "util/json_writer.h"

/* Chrome-trace pids of the msprof processes (any distinct small ints do). */
enum { PID_CANN = 1, PID_HW, PID_COMM, PID_OVERLAP, PID_STEP };

/* ---- timeline (Chrome trace JSON as msprof writes it: "X" slices in us, "M" names) ---- */
typedef struct tl {
    msprof_ex_t *x;
    const char *kind;
    nnp_outfile_t f;
    nnp_jw_t w;
    bool opened;
    int err;
    char name[NAME_CAP];
} tl_t;

static void tl_open(tl_t *t)
{
    if (t->opened || t->err != NNP_OK)
        return;
    snprintf(t->name, sizeof(t->name), "%s_%s.json", t->kind, t->x->ts);
    t->err = nnp__out_open(&t->f, t->x->out_dir, t->name);
    if (t->err != NNP_OK)
        return;
    t->opened = true;
    t->err = nnp__jw_init(&t->w, t->f.fd, false, 0);
    if (t->err == NNP_OK)
        nnp__jw_arr_begin(&t->w);
}

static void tl_num(tl_t *t, const char *key, int64_t ns)
{
    char b[48];
    nnp__msprof_fmt_us(b, sizeof(b), ns);
    nnp__jw_key(&t->w, key);
    nnp__jw_raw(&t->w, b);
}

static void tl_meta(tl_t *t, const char *what, int pid, uint64_t tid, const char *name)
{
    tl_open(t);
    if (t->err != NNP_OK)
        return;
    nnp__jw_obj_begin(&t->w);
    nnp__jw_key(&t->w, "name");
    nnp__jw_str(&t->w, what);
    nnp__jw_key(&t->w, "ph");
    nnp__jw_str(&t->w, "M");
    nnp__jw_key(&t->w, "pid");
    nnp__jw_int(&t->w, pid);
    nnp__jw_key(&t->w, "tid");
    nnp__jw_uint(&t->w, tid);
    nnp__jw_key(&t->w, "args");
    nnp__jw_obj_begin(&t->w);
    nnp__jw_key(&t->w, "name");
    nnp__jw_str(&t->w, name);
    nnp__jw_obj_end(&t->w);
    nnp__jw_obj_end(&t->w);
}

/* Opens an "X" slice; the caller may add keys (args) and must call nnp__jw_obj_end. */
static bool tl_slice(tl_t *t, const char *name, int pid, uint64_t tid, int64_t s, int64_t e)
{
    tl_open(t);
    if (t->err != NNP_OK)
        return false;
    nnp__jw_obj_begin(&t->w);
    nnp__jw_key(&t->w, "name");
    nnp__jw_str(&t->w, name && *name ? name : NA);
    nnp__jw_key(&t->w, "ph");
    nnp__jw_str(&t->w, "X");
    nnp__jw_key(&t->w, "pid");
    nnp__jw_int(&t->w, pid);
    nnp__jw_key(&t->w, "tid");
    nnp__jw_uint(&t->w, tid);
    tl_num(t, "ts", s + t->x->diff_ns);
    tl_num(t, "dur", e - s);
    return true;
}

static int tl_end(tl_t *t)
{
    int rc = t->err;
    if (!t->opened)
        return rc;
    nnp__jw_arr_end(&t->w);
    nnp__jw_line_end(&t->w);
    if (rc == NNP_OK)
        rc = nnp__jw_flush(&t->w);
    nnp__jw_fini(&t->w);
    rc = nnp__out_commit(&t->f, rc);
    return rc == NNP_OK ? nnp__msprof_record_file(t->x, t->name) : rc;
}

/* Overlap lanes, as msprof's "Overlap Analysis" process names its threads. */
/* One interval of overlap lane k, inside the window: the process and lane names come
 * before a process's and a lane's first slice. */
static void tl_overlap_slice(tl_t *t, size_t k, const nnp_interval_t *iv, bool *any, bool *lane)
{
    if (!nnp__msprof_in_window(t->x, iv->start_ns))
        return;
    if (!*any)
        tl_meta(t, "process_name", PID_OVERLAP, 0, "Overlap Analysis");
    if (!*lane)
        tl_meta(t, "thread_name", PID_OVERLAP, k, nnp__overlap_lane_names[k]);
    *any = *lane = true;
    if (tl_slice(t, nnp__overlap_lane_names[k], PID_OVERLAP, k, iv->start_ns, iv->end_ns))
        nnp__jw_obj_end(&t->w);
}

static void tl_overlap(tl_t *t)
{
    const nnp_interval_list_t *l[] = {&t->x->ov.computing, &t->x->ov.communication,
                                      &t->x->ov.comm_not_overlapped};
    const size_t free_lane = NNP_OVERLAP_LANES - 1;
    nnp_gap_iter_t gaps;
    bool any = false, lane;
    for (size_t k = 0; k < NNP_ARRAY_LEN(l); k++) {
        lane = false;
        for (size_t i = 0; i < l[k]->n; i++)
            tl_overlap_slice(t, k, &l[k]->v[i], &any, &lane);
    }
    lane = false;
    for (nnp__overlap_gaps_begin(&t->x->ov, &gaps); gaps.has; nnp__overlap_gaps_next(&gaps))
        tl_overlap_slice(t, free_lane, &gaps.gap, &any, &lane);
}

/* msprof_{ts}.json: CANN (host ops per host thread), Ascend Hardware (kernels per
 * stream), Communication (one plane per group) and Overlap Analysis. Thread names are
 * written once per thread, before its first slice is closed. */
static int write_msprof_timeline(msprof_ex_t *x)
{
    const nnp_model_t *m = x->m;
    tl_t t = {.x = x, .kind = "msprof"};
    bool seen_p = false;
    char b[NAME_CAP];
    for (size_t i = 0; i < m->ops.t.n; i++) {
        uint32_t th = m->ops.thread[i];
        uint64_t tid = th < m->threads.t.n ? m->threads.tid[th] : 0;
        if (m->ops.end_ns[i] == NNP_OPEN_END || !nnp__msprof_in_window(x, m->ops.start_ns[i]))
            continue;
        if (!seen_p)
            tl_meta(&t, "process_name", PID_CANN, 0, "CANN");
        seen_p = true;
        snprintf(b, sizeof(b), "Thread %llu", (unsigned long long)tid);
        tl_meta(&t, "thread_name", PID_CANN, tid, b);
        if (tl_slice(&t, nnp__model_str(m, m->ops.name[i]), PID_CANN, tid, m->ops.start_ns[i],
                     m->ops.end_ns[i])) {
            nnp__jw_key(&t.w, "args");
            nnp__jw_obj_begin(&t.w);
            nnp__jw_key(&t.w, "OP Type");
            nnp__jw_str(&t.w, nnp__model_str(m, m->ops.type[i]));
            nnp__jw_key(&t.w, "Model ID");
            nnp__jw_uint(&t.w, m->ops.graph_id[i]);
            nnp__jw_obj_end(&t.w);
            nnp__jw_obj_end(&t.w);
        }
    }
    seen_p = false;
    for (size_t i = 0; i < m->kernels.t.n; i++) {
        if (m->kernels.end_ns[i] == NNP_OPEN_END ||
            !nnp__msprof_in_window(x, m->kernels.start_ns[i]))
            continue;
        if (!seen_p)
            tl_meta(&t, "process_name", PID_HW, 0, "Ascend Hardware");
        seen_p = true;
        snprintf(b, sizeof(b), "Stream %u", (unsigned)m->kernels.stream_id[i]);
        tl_meta(&t, "thread_name", PID_HW, m->kernels.stream_id[i], b);
        if (tl_slice(&t, nnp__model_str(m, m->kernels.name[i]), PID_HW, m->kernels.stream_id[i],
                     m->kernels.start_ns[i], m->kernels.end_ns[i]))
            nnp__jw_obj_end(&t.w);
    }
    seen_p = false;
    for (size_t i = 0; i < m->comms.t.n; i++) {
        const char *g = nnp__model_str(m, m->comms.group[i]);
        if (m->comms.end_ns[i] == NNP_OPEN_END || !nnp__msprof_in_window(x, m->comms.start_ns[i]))
            continue;
        if (!seen_p)
            tl_meta(&t, "process_name", PID_COMM, 0, "Communication");
        seen_p = true;
        snprintf(b, sizeof(b), "Plane %s", *g ? g : "0");
        tl_meta(&t, "thread_name", PID_COMM, m->comms.group[i], b);
        if (tl_slice(&t, nnp__model_str(m, m->comms.name[i]), PID_COMM, m->comms.group[i],
                     m->comms.start_ns[i], m->comms.end_ns[i]))
            nnp__jw_obj_end(&t.w);
    }
    tl_overlap(&t);
    return tl_end(&t);
}

/* step_trace_{ts}.json: one "Step Trace" thread per model id, one slice per iteration. */
static int write_step_trace_timeline(msprof_ex_t *x)
{
    tl_t t = {.x = x, .kind = "step_trace"};
    char b[NAME_CAP];
    for (size_t i = 0; i < x->st.n; i++) {
        const nnp_step_row_t *r = &x->st.rows[i];
        uint64_t model = nnp__msprof_is_step_mode(x) ? NNP_MSPROF_STEP_MODEL_ID : r->graph_id;
        if (!x->row_sel[i])
            continue;
        if (!t.opened)
            tl_meta(&t, "process_name", PID_STEP, 0, "Step Trace");
        snprintf(b, sizeof(b), "Model ID:%llu", (unsigned long long)model);
        tl_meta(&t, "thread_name", PID_STEP, model, b);
        snprintf(b, sizeof(b), "Iteration %llu", (unsigned long long)x->iter_id[i]);
        if (tl_slice(&t, b, PID_STEP, model, r->begin_ns, r->end_ns)) {
            nnp__jw_key(&t.w, "args");
            nnp__jw_obj_begin(&t.w);
            nnp__jw_key(&t.w, "Iteration ID");
            nnp__jw_uint(&t.w, x->iter_id[i]);
            nnp__jw_key(&t.w, "Model ID");
            nnp__jw_uint(&t.w, model);
            tl_num(&t, "Iteration Time(us)", r->total_ns);
            tl_num(&t, "FP to BP Time(us)", r->fp_and_bp_ns);
            nnp__jw_obj_end(&t.w);
            nnp__jw_obj_end(&t.w);
        }
    }
    return tl_end(&t);
}

int nnp__msprof_write_timeline(msprof_ex_t *x)
{
    int rc = write_msprof_timeline(x);
    if (rc == NNP_OK)
        rc = write_step_trace_timeline(x);
    return rc;
}
