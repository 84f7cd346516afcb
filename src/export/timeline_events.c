/* timeline_events.c - the events of the timeline, source by source (host ops, host
 * ranges, markers, kernels with their launch flows, communication, overlap analysis,
 * counters, queues, CPU), each written from its cursor up to the current step's end, and
 * the slices of each step. Called by chrome_trace.c step by step. */
#include <stdio.h>
#include <string.h>

#include "export/timeline.h"

/* ---- event writing: every event is composed from fragments (json_writer.h) ---- */

#define LIT(tl, lit) NNP_JW_LIT(&(tl)->w, lit)

/* Whether model string id needs JSON escaping, found once per id. */
static bool str_clean(tl_t *tl, uint32_t id)
{
    if (id >= tl->m->n_strs)
        return true;
    if (tl->str_kind[id] == STR_UNKNOWN)
        tl->str_kind[id] =
            nnp__jw_needs_escape(tl->m->strs[id], tl->m->str_len[id]) ? STR_ESCAPE : STR_CLEAN;
    return tl->str_kind[id] == STR_CLEAN;
}

/* The part of model string id from byte `at` as a JSON string. */
static void mstr_from(tl_t *tl, uint32_t id, size_t at)
{
    const char *s = str(tl, id);
    size_t n = nnp__model_strlen(tl->m, id) - at;
    if (str_clean(tl, id))
        nnp__jw_frag_clean_str(&tl->w, s + at, n);
    else
        nnp__jw_frag_str(&tl->w, s + at, n);
}

static void mstr(tl_t *tl, uint32_t id)
{
    mstr_from(tl, id, 0);
}

static void cstr(tl_t *tl, const char *s)
{
    nnp__jw_frag_str(&tl->w, s, strlen(s));
}

/* A name of our own with nothing to escape (a literal, a communication kind, an overlap
 * track): no escape scan. Comms and overlap slices are a third of a timeline's events. */
static void cstr_clean(tl_t *tl, const char *s)
{
    nnp__jw_frag_clean_str(&tl->w, s, strlen(s));
}

/* ,"<key>": before a value; key is a literal without characters to escape. */
#define KEY(tl, key) LIT(tl, ",\"" key "\":")

/* ,"ph":"<ph>" and the lane's pid, tid, ts. A one-letter phase (every caller's) goes in
 * one piece: the key with the letter, the whole head buffer (its length is fixed, so no
 * call), the number. */
#define PH_LIT     ",\"ph\":\"X\""
#define PH_LIT_LEN (sizeof(PH_LIT) - 1)
#define PH_AT      7 /* where the letter goes in PH_LIT */

static void lane_head(tl_t *tl, const char *ph, uint32_t t, int64_t ts_ns)
{
    const track_t *k = &tl->tracks[t];
    char *d;
    nnp__tl_mark_used(tl, t);
    if (ph[0] && !ph[1] &&
        (d = nnp__jw_room(&tl->w, PH_LIT_LEN + TRACK_HEAD_BUF + NNP_FMT_NUM_MAX)) != NULL) {
        memcpy(d, PH_LIT, PH_LIT_LEN);
        d[PH_AT] = ph[0];
        d += PH_LIT_LEN;
        memcpy(d, k->head, TRACK_HEAD_BUF);
        d += k->head_len;
        d += nnp__fmt_fixed(d, ts_ns, NS_PER_US, US_DECIMALS);
        nnp__jw_room_done(&tl->w, d);
        return;
    }
    LIT(tl, ",\"ph\":\"");
    nnp__jw_frag(&tl->w, ph, strlen(ph));
    LIT(tl, "\"");
    nnp__jw_frag(&tl->w, k->head, k->head_len);
    nnp__jw_frag_fixed(&tl->w, ts_ns, NS_PER_US, US_DECIMALS);
}

static void ev_begin(tl_t *tl)
{
    nnp__jw_value_begin(&tl->w);
    LIT(tl, "{\"name\":");
}

void nnp__tl_ev_head(tl_t *tl, const char *name, const char *ph, uint32_t t, int64_t ts_ns)
{
    ev_begin(tl);
    cstr(tl, name);
    lane_head(tl, ph, t, ts_ns);
}

/* The same for a name of our own (cstr_clean). */
static void ev_head_clean(tl_t *tl, const char *name, const char *ph, uint32_t t, int64_t ts_ns)
{
    ev_begin(tl);
    cstr_clean(tl, name);
    lane_head(tl, ph, t, ts_ns);
}

/* The same for a model string name. */
static void ev_head_id(tl_t *tl, uint32_t name, const char *ph, uint32_t t, int64_t ts_ns)
{
    ev_begin(tl);
    mstr(tl, name);
    lane_head(tl, ph, t, ts_ns);
}

/* ,"dur": of a complete ("X") slice. */
static void dur(tl_t *tl, int64_t s, int64_t e)
{
    KEY(tl, "dur");
    nnp__jw_frag_fixed(&tl->w, e - s, NS_PER_US, US_DECIMALS);
}

static void key_u64(tl_t *tl, const char *key_lit, size_t n, uint64_t v)
{
    nnp__jw_frag(&tl->w, key_lit, n);
    nnp__jw_frag_u64(&tl->w, v);
}
#define KEY_U64(tl, key, v) key_u64((tl), ",\"" key "\":", sizeof(",\"" key "\":") - 1, (v))

/* Where the name shown for an op starts: after the last '/' of its scope name, as
 * MindSpore's timeline shows op_name.split('/')[-1] and keeps the full name in args
 * (base_timeline_generator.py); the whole name when it ends with '/'. */
static size_t short_at(tl_t *tl, uint32_t id)
{
    if (id >= tl->m->n_strs)
        return 0;
    if (tl->short_at[id] == SHORT_UNKNOWN) {
        const char *s = tl->m->strs[id], *slash = strrchr(s, '/');
        tl->short_at[id] = slash && slash[1] ? (uint32_t)(slash + 1 - s) : 0;
    }
    return tl->short_at[id];
}

/* timeline_summary counts one op or kernel execution. */
static void count_exec(tl_t *tl, uint32_t name, int64_t dur_ns, bool is_compute)
{
    tl->n_exec++;
    if (is_compute)
        tl->busy_ns += dur_ns;
    if (name < tl->m->n_strs && !tl->seen[name]) {
        const char *s = str(tl, name);
        uint32_t depth = 1;
        tl->seen[name] = 1;
        tl->n_names++;
        for (; *s; s++)
            depth += *s == '/';
        if (depth > tl->max_scope)
            tl->max_scope = depth;
    }
}

/* ---- sources, each written from its cursor up to tl->limit ---- */

static void emit_ops(tl_t *tl, bool emit)
{
    const nnp_ops_t *o = &tl->m->ops;
    bool compute = tl->m->kernels.t.n == 0; /* host ops are the compute of a CPU-only run */
    for (; tl->c_ops < o->t.n && o->start_ns[tl->c_ops] < tl->limit; tl->c_ops++) {
        size_t i = tl->c_ops;
        uint32_t t = tl->op_track[i];
        if (!emit || t == NONE || (tl->c->has_graph && o->graph_id[i] != tl->c->graph_id))
            continue;
        ev_begin(tl);
        mstr_from(tl, o->name[i], short_at(tl, o->name[i]));
        lane_head(tl, "X", t, o->start_ns[i]);
        dur(tl, o->start_ns[i], o->end_ns[i]);
        LIT(tl, ",\"cat\":\"host_op\",\"args\":{\"type\":");
        mstr(tl, o->type[i]);
        KEY(tl, "full_name");
        mstr(tl, o->name[i]);
        KEY_U64(tl, "graph_id", o->graph_id[i]);
        KEY_U64(tl, "stream_id", o->stream_id[i]);
        if (o->shapes[i]) {
            KEY(tl, "shapes");
            mstr(tl, o->shapes[i]);
        }
        if (o->dtypes[i]) {
            KEY(tl, "dtypes");
            mstr(tl, o->dtypes[i]);
        }
        if (o->corr[i])
            KEY_U64(tl, "correlation_id", o->corr[i]);
        if (o->flops_matrix && (o->flops_matrix[i] || o->flops_vector[i])) {
            KEY_U64(tl, "flops_matrix", o->flops_matrix[i]);
            KEY_U64(tl, "flops_vector", o->flops_vector[i]);
        }
        LIT(tl, "}}");
        count_exec(tl, o->name[i], o->end_ns[i] - o->start_ns[i], compute);
    }
}

/* "event::stage" as host_info names a range (stage omitted when empty), cut at cap - 1
 * bytes as snprintf would. */
static void host_name(const tl_t *tl, size_t i, char *buf, size_t cap)
{
    const nnp_host_rows_t *h = &tl->m->host;
    const char *ev = str(tl, h->event[i]), *stage = str(tl, h->stage[i]);
    if (*stage)
        snprintf(buf, cap, "%s::%s", ev, stage);
    else
        snprintf(buf, cap, "%s", ev);
}

bool nnp__tl_host_row_wanted(const tl_t *tl, size_t i)
{
    return tl->c->is_developer || tl->m->host.level[i] != HOST_LEVEL_DEVELOPER;
}

static void host_args(tl_t *tl, size_t i)
{
    const nnp_host_rows_t *h = &tl->m->host;
    KEY(tl, "cat");
    mstr(tl, h->module[i]);
    KEY_U64(tl, "args\":{\"level", h->level[i]);
    if (h->custom_info[i]) {
        KEY(tl, "custom_info");
        mstr(tl, h->custom_info[i]);
    }
    if (h->memory_bytes[i])
        KEY_U64(tl, "memory_bytes", h->memory_bytes[i]);
    LIT(tl, "}");
}

static void emit_host(tl_t *tl, bool emit)
{
    const nnp_host_rows_t *h = &tl->m->host;
    char name[NAME_BUF];
    for (; tl->c_host < h->t.n && h->ts_ns[tl->c_host] < tl->limit; tl->c_host++) {
        size_t i = tl->c_host;
        uint32_t t;
        if (!emit || !nnp__tl_host_row_wanted(tl, i) || h->kind[i] == NNP_HOST_ROW_END)
            continue; /* ends are written with their begin */
        host_name(tl, i, name, sizeof(name));
        if (h->kind[i] == NNP_HOST_ROW_INSTANT) {
            t = nnp__tl_host_base(tl, h->thread[i], LANE_RANGES);
            if (t == NONE)
                return;
            nnp__tl_ev_head(tl, name, "i", t, h->ts_ns[i]);
            LIT(tl, ",\"s\":\"t\"");
        } else if (tl->host_end[i] != NONE) {
            int64_t e = h->ts_ns[tl->host_end[i]];
            t = nnp__tl_host_base(tl, h->thread[i], LANE_RANGES);
            if (t == NONE || (t = nnp__tl_place(tl, t, h->ts_ns[i], e)) == NONE)
                continue;
            nnp__tl_ev_head(tl, name, "X", t, h->ts_ns[i]);
            dur(tl, h->ts_ns[i], e);
        } else {
            /* A begin without an end: a "B" event, open to the end of the trace. All such
             * events of a thread share their own lane, where they nest by construction. */
            t = nnp__tl_host_base(tl, h->thread[i], LANE_OPEN);
            if (t == NONE)
                return;
            nnp__tl_ev_head(tl, name, "B", t, h->ts_ns[i]);
        }
        host_args(tl, i);
        LIT(tl, "}");
    }
}

static void emit_markers(tl_t *tl, bool emit)
{
    const nnp_markers_t *mk = &tl->m->markers;
    for (; tl->c_markers < mk->t.n && mk->start_ns[tl->c_markers] < tl->limit; tl->c_markers++) {
        size_t i = tl->c_markers;
        int64_t s = mk->start_ns[i], e = mk->end_ns[i];
        uint32_t msg = mk->message[i];
        uint32_t t;
        if (!emit)
            continue;
        if (e == NNP_OPEN_END) {
            if ((t = nnp__tl_host_base(tl, mk->thread[i], LANE_OPEN)) == NONE)
                return;
            ev_head_id(tl, msg, "B", t, s);
        } else if (e == s) {
            if ((t = nnp__tl_host_base(tl, mk->thread[i], LANE_MARKERS)) == NONE)
                return;
            ev_head_id(tl, msg, "i", t, s);
            LIT(tl, ",\"s\":\"t\"");
        } else {
            if (e < s || (t = nnp__tl_host_base(tl, mk->thread[i], LANE_MARKERS)) == NONE ||
                (t = nnp__tl_place(tl, t, s, e)) == NONE)
                continue;
            ev_head_id(tl, msg, "X", t, s);
            dur(tl, s, e);
        }
        LIT(tl, ",\"cat\":\"marker\"}");
    }
}

/* A flow arrow from the launching op to kernel row k (Chrome trace format: "s" binds to
 * the slice enclosing its ts, "f" with bp "e" to the enclosing slice at the kernel's
 * start). Each kernel has its own flow id (row + 1), so every "s" has exactly one "f".
 * Written only when the op is in the written part of the timeline. */
static void emit_flow(tl_t *tl, size_t k, uint32_t kt)
{
    const nnp_ops_t *o = &tl->m->ops;
    uint32_t r = nnp__tl_corr_op(tl, tl->m->kernels.corr[k]);
    if (r == NONE || tl->op_track[r] == NONE || o->start_ns[r] < tl->window_lo ||
        o->start_ns[r] >= tl->limit)
        return;
    ev_head_clean(tl, "launch", "s", tl->op_track[r], o->start_ns[r]);
    KEY_U64(tl, "cat\":\"flow\",\"id", (uint64_t)k + 1);
    LIT(tl, "}");
    ev_head_clean(tl, "launch", "f", kt, tl->m->kernels.start_ns[k]);
    KEY_U64(tl, "cat\":\"flow\",\"id", (uint64_t)k + 1);
    LIT(tl, ",\"bp\":\"e\"}");
}

static void emit_kernels(tl_t *tl, bool emit)
{
    const nnp_kernels_t *k = &tl->m->kernels;
    for (; tl->c_kernels < k->t.n && k->start_ns[tl->c_kernels] < tl->limit; tl->c_kernels++) {
        size_t i = tl->c_kernels;
        uint32_t type = k->type[i];
        uint32_t t;
        if (!emit || k->end_ns[i] < k->start_ns[i])
            continue;
        t = nnp__tl_stream_base(tl, k->device_id[i], k->stream_id[i]);
        if (t == NONE || (t = nnp__tl_place(tl, t, k->start_ns[i], k->end_ns[i])) == NONE)
            continue;
        ev_head_id(tl, k->name[i], "X", t, k->start_ns[i]);
        dur(tl, k->start_ns[i], k->end_ns[i]);
        KEY(tl, "cat");
        if (nnp__model_strlen(tl->m, type))
            mstr(tl, type);
        else
            LIT(tl, "\"kernel\"");
        LIT(tl, ",\"args\":{\"type\":");
        mstr(tl, type);
        KEY_U64(tl, "device_id", k->device_id[i]);
        KEY_U64(tl, "stream_id", k->stream_id[i]);
        if (k->corr[i])
            KEY_U64(tl, "correlation_id", k->corr[i]);
        LIT(tl, "}}");
        count_exec(tl, k->name[i], k->end_ns[i] - k->start_ns[i], true);
        if (k->corr[i] && tl->n_corr > 0)
            emit_flow(tl, i, t);
    }
}

static void emit_comms(tl_t *tl, bool emit)
{
    const nnp_comms_t *cm = &tl->m->comms;
    for (; tl->c_comms < cm->t.n && cm->start_ns[tl->c_comms] < tl->limit; tl->c_comms++) {
        size_t i = tl->c_comms;
        const char *kind = nnp_comm_kind_name((nnp_comm_kind_t)cm->kind[i]);
        const char *name = str(tl, cm->name[i]);
        uint32_t t;
        if (!emit || cm->end_ns[i] < cm->start_ns[i])
            continue;
        t = nnp__tl_group_base(tl, cm->group[i]);
        if (t == NONE || (t = nnp__tl_place(tl, t, cm->start_ns[i], cm->end_ns[i])) == NONE)
            continue;
        if (*name)
            ev_head_id(tl, cm->name[i], "X", t, cm->start_ns[i]);
        else
            ev_head_clean(tl, kind, "X", t, cm->start_ns[i]);
        dur(tl, cm->start_ns[i], cm->end_ns[i]);
        LIT(tl, ",\"cat\":\"communication\",\"args\":{\"kind\":");
        cstr_clean(tl, kind);
        KEY_U64(tl, "bytes", cm->bytes[i]);
        KEY(tl, "peer");
        nnp__jw_frag_i64(&tl->w, cm->peer[i]);
        KEY(tl, "group");
        if (nnp__model_strlen(tl->m, cm->group[i]))
            mstr(tl, cm->group[i]);
        else
            LIT(tl, "\"default\"");
        if (cm->count[i])
            KEY_U64(tl, "count", cm->count[i]);
        if (cm->datatype[i]) {
            KEY(tl, "datatype");
            mstr(tl, cm->datatype[i]);
        }
        if (cm->has[i] & NNP_COMM_HAS_TAG) {
            KEY(tl, "tag");
            nnp__jw_frag_i64(&tl->w, cm->tag[i]);
        }
        if (cm->has[i] & NNP_COMM_HAS_WAIT)
            KEY_U64(tl, "wait_ns", cm->wait_ns[i]);
        LIT(tl, "}}");
    }
}

/* One slice of overlap track k. Merged lists are disjoint: nnp__tl_place() never needs an
 * overflow lane here, but it still guards the invariant. */
static void overlap_slice(tl_t *tl, int k, const nnp_interval_t *iv)
{
    uint32_t t = nnp__tl_place(tl, tl->ov_tracks[k], iv->start_ns, iv->end_ns);
    if (t == NONE)
        return;
    ev_head_clean(tl, nnp__overlap_lane_names[k], "X", t, iv->start_ns);
    dur(tl, iv->start_ns, iv->end_ns);
    LIT(tl, "}");
}

static void emit_overlap(tl_t *tl, bool emit)
{
    const nnp_interval_list_t *lists[OV_TRACKS - 1];
    nnp_gap_iter_t *gaps = &tl->free_gaps;
    if (!tl->ov)
        return;
    lists[0] = &tl->ov->computing;
    lists[1] = &tl->ov->communication;
    lists[2] = &tl->ov->comm_not_overlapped;
    for (int k = 0; k < OV_TRACKS - 1; k++) {
        const nnp_interval_list_t *l = lists[k];
        for (; tl->c_ov[k] < l->n && l->v[tl->c_ov[k]].start_ns < tl->limit; tl->c_ov[k]++) {
            if (emit)
                overlap_slice(tl, k, &l->v[tl->c_ov[k]]);
        }
    }
    for (; gaps->has && gaps->gap.start_ns < tl->limit; nnp__overlap_gaps_next(gaps)) {
        if (emit)
            overlap_slice(tl, OV_TRACKS - 1, &gaps->gap);
    }
}

/* A counter sample ("C"): Chrome draws one track per (pid, name), a series per arg. The
 * caller has written the name; this writes up to the opening of args. */
static void counter_head(tl_t *tl, int64_t ts)
{
    tl->procs[tl->host_proc].used = true;
    KEY_U64(tl, "ph\":\"C\",\"pid", tl->procs[tl->host_proc].pid);
    KEY(tl, "ts");
    nnp__jw_frag_fixed(&tl->w, ts, NS_PER_US, US_DECIMALS);
    LIT(tl, ",\"args\":{");
}

static void counter_end(tl_t *tl)
{
    LIT(tl, "}}");
}

static void emit_series(tl_t *tl, const nnp_series_t *s, size_t *cur, const char *fallback,
                        const char *arg, bool emit)
{
    for (; *cur < s->t.n && s->ts_ns[*cur] < tl->limit; (*cur)++) {
        size_t i = *cur;
        if (!emit)
            continue;
        ev_begin(tl);
        if (s->name[i])
            mstr(tl, s->name[i]);
        else
            cstr(tl, fallback);
        counter_head(tl, s->ts_ns[i]);
        cstr(tl, arg);
        LIT(tl, ":");
        nnp__jw_frag_double(&tl->w, s->value[i]);
        counter_end(tl);
    }
}

static void emit_queues(tl_t *tl, bool emit)
{
    const nnp_queue_samples_t *q = &tl->m->queues;
    for (; tl->c_queues < q->t.n && q->ts_ns[tl->c_queues] < tl->limit; tl->c_queues++) {
        size_t i = tl->c_queues;
        if (!emit)
            continue;
        ev_begin(tl);
        if (q->op_id[i] < 0) { /* model.h: op_id -1 is the device queue */
            LIT(tl, "\"device queue\"");
        } else {
            LIT(tl, "\"queue op ");
            nnp__jw_frag_i64(&tl->w, q->op_id[i]);
            LIT(tl, "\"");
        }
        counter_head(tl, q->ts_ns[i]);
        LIT(tl, "\"size\":");
        nnp__jw_frag_u64(&tl->w, q->size[i]);
        KEY_U64(tl, "capacity", q->capacity[i]);
        counter_end(tl);
    }
}

/* key_lit then a percentage with two decimals: more digits only add bytes to every
 * sample (one a second: printf is fine here). */
static void pct(tl_t *tl, const char *key_lit, double v)
{
    char buf[NUM_BUF];
    int n = snprintf(buf, sizeof(buf), "%.2f", v);
    nnp__jw_frag(&tl->w, key_lit, strlen(key_lit));
    nnp__jw_frag(&tl->w, buf, n > 0 && (size_t)n < sizeof(buf) ? (size_t)n : 0);
}

/* CPU utilisation from consecutive cumulative /proc/stat samples: each share is its delta
 * over the delta of all jiffies (proc(5)), written at the later sample's time. */
static void emit_cpu(tl_t *tl, bool emit)
{
    const nnp_cpu_samples_t *c = &tl->m->sys_cpu;
    for (; tl->c_cpu < c->t.n && c->ts_ns[tl->c_cpu] < tl->limit; tl->c_cpu++) {
        size_t i = tl->c_cpu;
        uint64_t total;
        if (!emit || i == 0)
            continue;
        total = (c->user[i] + c->nice[i] + c->sys[i] + c->idle[i] + c->iowait[i] + c->irq[i] +
                 c->steal[i]) -
                (c->user[i - 1] + c->nice[i - 1] + c->sys[i - 1] + c->idle[i - 1] +
                 c->iowait[i - 1] + c->irq[i - 1] + c->steal[i - 1]);
        if (total == 0 || (int64_t)total < 0)
            continue; /* no time passed, or a counter went backwards (a reset) */
        ev_begin(tl);
        LIT(tl, "\"CPU utilisation (%)\"");
        counter_head(tl, c->ts_ns[i]);
        pct(tl, "\"user\":", PERCENT * (double)(c->user[i] - c->user[i - 1]) / (double)total);
        pct(tl, ",\"sys\":", PERCENT * (double)(c->sys[i] - c->sys[i - 1]) / (double)total);
        pct(tl,
            ",\"iowait\":", PERCENT * (double)(c->iowait[i] - c->iowait[i - 1]) / (double)total);
        counter_end(tl);
    }
}

/* Writes (emit) or skips every source's rows that start before limit. */
void nnp__tl_emit_until(tl_t *tl, int64_t limit, bool emit)
{
    /* kind=summary: only the Step Trace (emit_step) and Overlap Analysis processes; the
     * other sources still advance their cursors so steps stay aligned. */
    bool detail = emit && !tl->c->timeline_summary;
    tl->limit = limit;
    emit_ops(tl, detail);
    emit_host(tl, detail);
    emit_markers(tl, detail);
    emit_kernels(tl, detail);
    emit_comms(tl, detail);
    emit_overlap(tl, emit);
    emit_series(tl, &tl->m->counters, &tl->c_counters, "counter", "value", detail);
    emit_series(tl, &tl->m->host_mem, &tl->c_host_mem, "Host memory", "bytes", detail);
    emit_series(tl, &tl->m->proc_rss, &tl->c_rss, "Process RSS", "bytes", detail);
    emit_queues(tl, detail);
    emit_cpu(tl, detail);
}

/* True when some source still has rows (after the last step, before the "post" part). */
bool nnp__tl_rows_left(const tl_t *tl)
{
    const nnp_model_t *m = tl->m;
    bool ov_left = false;
    if (tl->ov)
        ov_left = tl->c_ov[0] < tl->ov->computing.n || tl->c_ov[1] < tl->ov->communication.n ||
                  tl->c_ov[2] < tl->ov->comm_not_overlapped.n || tl->free_gaps.has;
    return ov_left || tl->c_ops < m->ops.t.n || tl->c_host < m->host.t.n ||
           tl->c_markers < m->markers.t.n || tl->c_kernels < m->kernels.t.n ||
           tl->c_comms < m->comms.t.n || tl->c_counters < m->counters.t.n ||
           tl->c_host_mem < m->host_mem.t.n || tl->c_rss < m->proc_rss.t.n ||
           tl->c_queues < m->queues.t.n || tl->c_cpu < m->sys_cpu.t.n;
}

/* The slices of one step on the Step Trace process: the step over [start_point, end] and,
 * when known, fp_and_bp [fp, bp] and tail [bp, end] inside it. nnp__tl_place() sends a phase that
 * would not nest (broken fp/bp data) to an overflow lane instead. */
void nnp__tl_emit_step(tl_t *tl, const nnp_step_row_t *r)
{
    uint32_t t;
    if (r->end_ns < r->start_point_ns || (tl->c->has_graph && r->graph_id != tl->c->graph_id))
        return;
    if ((t = nnp__tl_place(tl, tl->steps_track, r->start_point_ns, r->end_ns)) != NONE) {
        ev_begin(tl);
        LIT(tl, "\"Step ");
        nnp__jw_frag_u64(&tl->w, r->step_id);
        LIT(tl, "\"");
        lane_head(tl, "X", t, r->start_point_ns);
        dur(tl, r->start_point_ns, r->end_ns);
        KEY_U64(tl, "cat\":\"step\",\"args\":{\"step_id", r->step_id);
        KEY_U64(tl, "graph_id", r->graph_id);
        LIT(tl, "}}");
    }
    if (r->fp_ns >= 0 && r->bp_ns >= r->fp_ns &&
        (t = nnp__tl_place(tl, tl->steps_track, r->fp_ns, r->bp_ns)) != NONE) {
        ev_head_clean(tl, "fp_and_bp", "X", t, r->fp_ns);
        dur(tl, r->fp_ns, r->bp_ns);
        LIT(tl, ",\"cat\":\"step\"}");
    }
    if (r->bp_ns >= 0 && r->end_ns >= r->bp_ns &&
        (t = nnp__tl_place(tl, tl->steps_track, r->bp_ns, r->end_ns)) != NONE) {
        ev_head_clean(tl, "tail", "X", t, r->bp_ns);
        dur(tl, r->bp_ns, r->end_ns);
        LIT(tl, ",\"cat\":\"step\"}");
    }
}
