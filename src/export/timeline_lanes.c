/* timeline_lanes.c - where the timeline's slices go: its processes (host, step trace,
 * overlap analysis, communication, one per device), the lanes (pid, tid) of each, and the
 * placement that keeps the slices of a lane properly nested by sending a slice that would
 * overlap partially to an overflow lane. Also the set-up indexes of chrome_trace.c: op lanes
 * placed before streaming (flows name them), host begin/end matching, correlation ids. */
#include <stdlib.h>
#include <string.h>

#include "export/timeline.h"
#include "model/host_pairs.h"

int nnp__tl_oom(tl_t *tl)
{
    if (tl->err == NNP_OK)
        tl->err = nnp__fail(NNP_ENOMEM, "timeline: out of memory");
    return tl->err;
}

/* ---- the map ---- */

static uint64_t mix(uint64_t a, uint64_t b)
{
    /* splitmix64 finaliser over both keys: cheap and good enough for open addressing. */
    uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static size_t hmap_slot(const hmap_t *h, uint64_t a, uint64_t b)
{
    size_t i = (size_t)mix(a, b) & (h->cap - 1);
    while (h->val[i] != NONE && (h->ka[i] != a || h->kb[i] != b))
        i = (i + 1) & (h->cap - 1);
    return i;
}

static uint32_t hmap_get(const hmap_t *h, uint64_t a, uint64_t b)
{
    if (h->cap == 0)
        return NONE;
    return h->val[hmap_slot(h, a, b)];
}

void nnp__tl_hmap_fini(hmap_t *h)
{
    nnp__free(h->ka);
    nnp__free(h->kb);
    nnp__free(h->val);
    memset(h, 0, sizeof(*h));
}

/* Sets (a, b) -> v (v != NONE), growing at half full. */
static int hmap_set(hmap_t *h, uint64_t a, uint64_t b, uint32_t v)
{
    size_t i;
    if ((h->n + 1) * 2 > h->cap) {
        hmap_t g = {0};
        g.cap = h->cap ? h->cap * 2 : HMAP_INITIAL;
        g.ka = nnp__malloc(g.cap * sizeof(*g.ka));
        g.kb = nnp__malloc(g.cap * sizeof(*g.kb));
        g.val = nnp__malloc(g.cap * sizeof(*g.val));
        if (!g.ka || !g.kb || !g.val) {
            nnp__tl_hmap_fini(&g);
            return NNP_ENOMEM;
        }
        memset(g.val, 0xff, g.cap * sizeof(*g.val)); /* every slot NONE */
        for (size_t k = 0; k < h->cap; k++) {
            if (h->val[k] == NONE)
                continue;
            size_t s = hmap_slot(&g, h->ka[k], h->kb[k]);
            g.ka[s] = h->ka[k];
            g.kb[s] = h->kb[k];
            g.val[s] = h->val[k];
            g.n++;
        }
        nnp__tl_hmap_fini(h);
        *h = g;
    }
    i = hmap_slot(h, a, b);
    if (h->val[i] == NONE)
        h->n++;
    h->ka[i] = a;
    h->kb[i] = b;
    h->val[i] = v;
    return NNP_OK;
}

/* ---- processes and lanes ---- */

uint32_t nnp__tl_proc_new(tl_t *tl, uint8_t kind, uint32_t pid, uint32_t device_id)
{
    if (tl->n_procs == tl->cap_procs) {
        size_t ncap = tl->cap_procs ? tl->cap_procs * 2 : PROCS_INITIAL;
        proc_t *p = nnp__realloc(tl->procs, ncap * sizeof(*p));
        if (!p) {
            nnp__tl_oom(tl);
            return NONE;
        }
        tl->procs = p;
        tl->cap_procs = ncap;
    }
    tl->procs[tl->n_procs] = (proc_t){.pid = pid, .kind = kind, .device_id = device_id};
    return (uint32_t)tl->n_procs++;
}

/* Key tag of "tid taken in this process" entries of the lanes map. */
#define KEY_TID_TAKEN UINT64_MAX

/* The tid for a new lane: `want` when it is a usable id not yet taken in the process
 * (two threads with one OS tid would merge their lanes), else a fresh synthetic tid. */
static uint32_t claim_tid(tl_t *tl, uint32_t proc, uint64_t want)
{
    uint64_t key;
    if (want < SYNTH_TID_BASE) {
        key = (uint64_t)proc << 32 | want;
        if (hmap_get(&tl->lanes, key, KEY_TID_TAKEN) == NONE) {
            if (hmap_set(&tl->lanes, key, KEY_TID_TAKEN, 1) != NNP_OK) {
                nnp__tl_oom(tl);
                return NONE;
            }
            return (uint32_t)want;
        }
    }
    return tl->next_tid++;
}

/* A new lane. want_tid: the tid it should have (UINT64_MAX = any synthetic one). */
uint32_t nnp__tl_track_new(tl_t *tl, uint32_t proc, uint8_t kind, uint64_t num, uint32_t name,
                           int64_t sort, uint64_t want_tid, uint32_t level)
{
    track_t *t;
    uint32_t tid = claim_tid(tl, proc, want_tid);
    if (tid == NONE)
        return NONE;
    if (tl->n_tracks == tl->cap_tracks) {
        size_t ncap = tl->cap_tracks ? tl->cap_tracks * 2 : TRACKS_INITIAL;
        track_t *p = nnp__realloc(tl->tracks, ncap * sizeof(*p));
        if (!p) {
            nnp__tl_oom(tl);
            return NONE;
        }
        tl->tracks = p;
        tl->cap_tracks = ncap;
    }
    t = &tl->tracks[tl->n_tracks];
    memset(t, 0, sizeof(*t));
    t->proc = proc;
    t->tid = tid;
    t->kind = kind;
    t->num = num;
    t->name = name;
    t->sort = sort;
    t->level = level;
    t->next = NONE;
    t->last_start = INT64_MIN;
    {
        size_t n = sizeof(",\"pid\":") - 1;
        memset(t->head, 0, sizeof(t->head)); /* lane_head copies all of it */
        memcpy(t->head, ",\"pid\":", n);
        n += nnp__fmt_u64(t->head + n, tl->procs[proc].pid);
        memcpy(t->head + n, ",\"tid\":", sizeof(",\"tid\":") - 1);
        n += sizeof(",\"tid\":") - 1;
        n += nnp__fmt_u64(t->head + n, tid);
        memcpy(t->head + n, ",\"ts\":", sizeof(",\"ts\":") - 1);
        n += sizeof(",\"ts\":") - 1;
        t->head_len = (uint8_t)n;
    }
    return (uint32_t)tl->n_tracks++;
}

/* Offers [s, e] to one lane: it is accepted when it starts no earlier than the lane's last
 * slice and, after closing the slices that ended by s, it fits inside the innermost open
 * one. Accepted slices therefore form a laminar family (each pair disjoint or nested),
 * whatever order later checks sort them in. Returns 1 accepted, 0 refused, <0 error. */
static int lane_offer(track_t *t, int64_t s, int64_t e)
{
    size_t d = t->depth;
    if (s < t->last_start)
        return 0;
    while (d > 0 && t->ends[d - 1] <= s)
        d--;
    if (d > 0 && e > t->ends[d - 1])
        return 0;
    if (d == t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : STACK_INITIAL;
        int64_t *p = nnp__realloc(t->ends, ncap * sizeof(*p));
        if (!p)
            return NNP_ENOMEM;
        t->ends = p;
        t->cap = ncap;
    }
    t->ends[d] = e;
    t->depth = d + 1;
    t->last_start = s;
    return 1;
}

/* The lane of base's chain that takes [s, e], creating overflow lanes on demand. NONE
 * when all MAX_LANES refuse (the slice is dropped and counted) or on error. */
uint32_t nnp__tl_place(tl_t *tl, uint32_t base, int64_t s, int64_t e)
{
    uint32_t t = base;
    for (uint32_t level = 0; t != NONE; level++) {
        int rc = lane_offer(&tl->tracks[t], s, e);
        if (rc < 0) {
            nnp__tl_oom(tl);
            return NONE;
        }
        if (rc == 1)
            return t;
        if (tl->tracks[t].next == NONE) {
            const track_t *b = &tl->tracks[base];
            uint32_t n;
            if (level + 1 >= MAX_LANES) {
                tl->dropped++;
                return NONE;
            }
            n = nnp__tl_track_new(tl, b->proc, b->kind, b->num, b->name, b->sort + level + 1,
                                  UINT64_MAX, level + 1);
            if (n == NONE)
                return NONE;
            tl->tracks[t].next = n; /* re-index: track_new may have moved the array */
        }
        t = tl->tracks[t].next;
    }
    return NONE;
}

/* Base lane of a host thread (ti: index into the threads table) of one HOST_LANES kind. */
uint32_t nnp__tl_host_base(tl_t *tl, uint32_t ti, uint8_t kind)
{
    size_t slot;
    uint32_t t;
    uint64_t os_tid = 0;
    uint32_t name = 0;
    if (ti >= tl->n_host_threads)
        ti = (uint32_t)tl->n_host_threads; /* the "unknown thread" slot */
    slot = (size_t)ti * HOST_LANES + (size_t)(kind - LANE_OPS);
    if (tl->host_base[slot] != NONE)
        return tl->host_base[slot];
    if (ti < tl->n_host_threads) {
        os_tid = tl->m->threads.tid[ti];
        name = tl->m->threads.name[ti];
    }
    /* Lanes of one thread sort together, ops first; overflow lanes follow their base. */
    t = nnp__tl_track_new(tl, tl->host_proc, kind, os_tid, name,
                          ((int64_t)ti * HOST_LANES + (kind - LANE_OPS)) * MAX_LANES,
                          kind == LANE_OPS && ti < tl->n_host_threads ? os_tid : UINT64_MAX, 0);
    tl->host_base[slot] = t;
    return t;
}

static uint32_t device_proc(tl_t *tl, uint32_t device_id)
{
    for (size_t i = 0; i < tl->n_procs; i++)
        if (tl->procs[i].kind == PROC_DEVICE && tl->procs[i].device_id == device_id)
            return (uint32_t)i;
    return nnp__tl_proc_new(tl, PROC_DEVICE, SYNTH_PID_BASE + 1 + (uint32_t)tl->n_procs, device_id);
}

uint32_t nnp__tl_stream_base(tl_t *tl, uint32_t device_id, uint32_t stream_id)
{
    uint64_t key = (uint64_t)device_id << 32 | stream_id;
    uint32_t t = hmap_get(&tl->lanes, key, LANE_STREAM), p;
    if (t != NONE)
        return t;
    p = device_proc(tl, device_id);
    if (p == NONE)
        return NONE;
    t = nnp__tl_track_new(tl, p, LANE_STREAM, stream_id, 0, (int64_t)stream_id * MAX_LANES,
                          stream_id, 0);
    if (t != NONE && hmap_set(&tl->lanes, key, LANE_STREAM, t) != NNP_OK) {
        nnp__tl_oom(tl);
        return NONE;
    }
    return t;
}

uint32_t nnp__tl_group_base(tl_t *tl, uint32_t group)
{
    uint32_t t = hmap_get(&tl->lanes, group, LANE_GROUP);
    if (t != NONE)
        return t;
    /* Groups sort in order of first use; overflow lanes sit right after their group. */
    t = nnp__tl_track_new(tl, tl->comm_proc, LANE_GROUP, group, group,
                          (int64_t)tl->n_tracks * MAX_LANES, UINT64_MAX, 0);
    if (t != NONE && hmap_set(&tl->lanes, group, LANE_GROUP, t) != NNP_OK) {
        nnp__tl_oom(tl);
        return NONE;
    }
    return t;
}

void nnp__tl_mark_used(tl_t *tl, uint32_t t)
{
    tl->tracks[t].used = true;
    tl->procs[tl->tracks[t].proc].used = true;
}

static int cmp_corr(const void *a, const void *b)
{
    const corr_ent_t *x = a, *y = b;
    if (x->corr != y->corr)
        return x->corr < y->corr ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* The op row that launched correlation id corr (the first one if several), or NONE. */
uint32_t nnp__tl_corr_op(const tl_t *tl, uint64_t corr)
{
    size_t a = 0, b = tl->n_corr;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (tl->corr[mid].corr < corr)
            a = mid + 1;
        else
            b = mid;
    }
    return a < tl->n_corr && tl->corr[a].corr == corr ? tl->corr[a].row : NONE;
}

/* ---- set-up: lanes of ops, host range matching, the correlation index ---- */

int nnp__tl_prepare_ops(tl_t *tl)
{
    const nnp_ops_t *o = &tl->m->ops;
    size_t n = 0;
    if (o->t.n == 0)
        return NNP_OK;
    tl->op_track = nnp__malloc(o->t.n * sizeof(*tl->op_track));
    if (!tl->op_track)
        return nnp__tl_oom(tl);
    /* Ops are placed before streaming so a kernel's flow can name its op's lane. */
    for (size_t i = 0; i < o->t.n; i++) {
        uint32_t t = NONE;
        if (o->end_ns[i] >= o->start_ns[i]) {
            t = nnp__tl_host_base(tl, o->thread[i], LANE_OPS);
            if (t != NONE)
                t = nnp__tl_place(tl, t, o->start_ns[i], o->end_ns[i]);
        }
        if (tl->err != NNP_OK)
            return tl->err;
        tl->op_track[i] = t;
        n += o->corr[i] != 0;
    }
    if (n == 0 || tl->m->kernels.t.n == 0)
        return NNP_OK;
    tl->corr = nnp__malloc(n * sizeof(*tl->corr));
    if (!tl->corr)
        return nnp__tl_oom(tl);
    for (size_t i = 0; i < o->t.n; i++)
        if (o->corr[i])
            tl->corr[tl->n_corr++] = (corr_ent_t){o->corr[i], (uint32_t)i};
    qsort(tl->corr, tl->n_corr, sizeof(*tl->corr), cmp_corr);
    return NNP_OK;
}

/* Each host begin row's end (host_pairs.h: the rule every reader of ranges shares). A pair
 * is drawn only when the level filter keeps both its rows. */
int nnp__tl_prepare_host(tl_t *tl)
{
    const nnp_host_rows_t *h = &tl->m->host;
    size_t *begin_of;
    if (h->t.n == 0)
        return NNP_OK;
    tl->host_end = nnp__malloc(h->t.n * sizeof(*tl->host_end));
    if (!tl->host_end || nnp__host_pairs(h, tl->m->threads.t.n, &begin_of) != NNP_OK)
        return nnp__tl_oom(tl);
    memset(tl->host_end, 0xff, h->t.n * sizeof(*tl->host_end));
    for (size_t i = 0; i < h->t.n; i++) {
        size_t b = begin_of[i];
        if (b != NNP_HOST_NO_PAIR && nnp__tl_host_row_wanted(tl, i) &&
            nnp__tl_host_row_wanted(tl, b))
            tl->host_end[b] = (uint32_t)i;
    }
    nnp__free(begin_of);
    return NNP_OK;
}
