/* test_recorder.c - the recorder end to end: threads record through the public API, the
 * writer drains, the reader gives back exactly what was recorded (count, per-thread order,
 * payloads). Also the drop policy's accounting and collection windows. Assertions run
 * after the threads are joined (cmocka is not thread-safe). Runs under TSan in .ci/run. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format/raw_format.h"
#include "read/raw_reader.h"
#include "record/ring_abi.h"
#include "record/tbuf.h"
#include "test_util.h"
#include "util/util.h"

#define N_THREADS         8
#define EVENTS_PER_THREAD 1000000u
/* Every OP_EVERY-th event is a 3-slot op record, the rest 1-slot counters, so records
 * of different sizes wrap around the ring. */
#define OP_EVERY 4u

static nnp_session_t *open_session(const char *dir, nnp_full_policy_t policy, size_t buf_kb,
                                   int period_ms)
{
    nnp_options_t o;
    nnp_session_t *s = NULL;
    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", dir);
    o.full_policy = policy;
    o.buffer_size_kb = buf_kb;
    o.writer_period_ms = period_ms;
    o.sample_interval_ms = 0;
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    assert_non_null(s);
    return s;
}

typedef struct worker {
    pthread_t th;
    uint32_t index;
    nnp_str_t name;
    uint32_t n;
} worker_t;

static void *work(void *arg)
{
    worker_t *w = arg;
    for (uint32_t i = 0; i < w->n; i++) {
        if (i % OP_EVERY == 0) {
            nnp_op_t op;
            memset(&op, 0, sizeof(op));
            op.name = w->name;
            op.type = w->name;
            op.graph_id = w->index;
            op.correlation_id = i;
            op.flops_matrix = (uint64_t)i + 1;
            op.flops_vector = w->index;
            nnp_op_at(&op, i, (uint64_t)i + 1);
        } else {
            nnp_counter_at(w->name, (double)i, i);
        }
    }
    return NULL;
}

/* Per-thread read-back state, keyed by the worker index found in the payload. */
typedef struct check {
    uint64_t tid[N_THREADS];
    uint32_t next[N_THREADS];
    nnp_str_t names[N_THREADS];
    uint64_t total, bad, other;
} check_t;

static int index_of_name(const check_t *c, uint32_t name)
{
    for (int i = 0; i < N_THREADS; i++) {
        if (c->names[i] == name)
            return i;
    }
    return -1;
}

static int on_event(void *user, const nnp_raw_event_t *ev)
{
    check_t *c = user;
    const nnp_rec_t *r = ev->slots;
    int t = index_of_name(c, r->name);
    uint32_t i;
    double v;

    if (ev->kind != NNP_REC_OP && ev->kind != NNP_REC_COUNTER) {
        c->other++;
        return 0;
    }
    if (t < 0) {
        c->bad++;
        return 0;
    }
    if (c->tid[t] == 0)
        c->tid[t] = ev->tid;
    i = c->next[t]++;
    c->total++;
    if (ev->tid != c->tid[t] || ev->ts_ns != i)
        c->bad++;
    if (i % OP_EVERY == 0) {
        const nnp_rec_op_ext_t *x = (const nnp_rec_op_ext_t *)&r[1];
        const nnp_rec_flops_t *f = (const nnp_rec_flops_t *)&r[2];
        if (ev->kind != NNP_REC_OP || ev->n_slots != 3 || ev->end_ns != (uint64_t)i + 1 ||
            r->b != i || x->graph_id != (uint32_t)t || f->matrix != (uint64_t)i + 1 ||
            f->vector != (uint64_t)t)
            c->bad++;
    } else {
        memcpy(&v, &r->a, sizeof(v));
        if (ev->kind != NNP_REC_COUNTER || v != (double)i)
            c->bad++;
    }
    return 0;
}

static void test_eight_threads_exact(void **state)
{
    char *dir = nnpt_mkdtemp();
    worker_t w[N_THREADS];
    nnp_session_t *s = open_session(dir, NNP_FULL_BLOCK, 1024, 5);
    nnp_stats_t st;
    nnp_raw_t *raw;
    check_t c;
    char raw_dir[4096];
    (void)state;

    memset(&c, 0, sizeof(c));
    for (uint32_t t = 0; t < N_THREADS; t++) {
        char name[32];
        snprintf(name, sizeof(name), "worker-%u", t);
        w[t].index = t;
        w[t].name = c.names[t] = nnp_intern(name);
        w[t].n = EVENTS_PER_THREAD;
        assert_int_equal(pthread_create(&w[t].th, NULL, work, &w[t]), 0);
    }
    for (int t = 0; t < N_THREADS; t++)
        pthread_join(w[t].th, NULL);
    assert_int_equal(nnp_session_stop(s), NNP_OK);
    assert_int_equal(nnp_session_stats(s, &st), NNP_OK);
    snprintf(raw_dir, sizeof(raw_dir), "%s", nnp_session_raw_dir(s));
    assert_int_equal(nnp_session_destroy(s), NNP_OK);

    assert_int_equal(st.events_dropped, 0);
    assert_int_equal(st.events_recorded, (uint64_t)N_THREADS * EVENTS_PER_THREAD);

    assert_int_equal(nnp__raw_open(raw_dir, &raw), NNP_OK);
    assert_int_equal(nnp__raw_read(raw, on_event, &c), NNP_OK);
    assert_int_equal(c.total, (uint64_t)N_THREADS * EVENTS_PER_THREAD);
    assert_int_equal(c.bad, 0);
    for (int t = 0; t < N_THREADS; t++) {
        assert_int_equal(c.next[t], EVENTS_PER_THREAD);
        for (int u = 0; u < t; u++)
            assert_true(c.tid[t] != c.tid[u]);
    }
    assert_int_equal(nnp__raw_report(raw)->chunks_corrupt, 0);
    assert_int_equal(nnp__raw_report(raw)->chunks_truncated, 0);
    assert_int_equal(nnp__raw_report(raw)->events_lost, 0);
    nnp__raw_close(raw);
    nnpt_rm_rf(dir);
    free(dir);
}

/* ---- a back end writing the ring inline (ring_abi.h, the PyTorch shim's ops) ---- */

#define BRIEF_OPS 3

typedef struct brief_seen {
    uint32_t n;
    unsigned n_slots[BRIEF_OPS];
    uint64_t ts_ns[BRIEF_OPS], end_ns[BRIEF_OPS];
    nnp_rec_t op[BRIEF_OPS][2];
} brief_seen_t;

static int keep_ops(void *user, const nnp_raw_event_t *ev)
{
    brief_seen_t *c = user;
    if (ev->kind != NNP_REC_OP || c->n >= BRIEF_OPS)
        return 0;
    c->n_slots[c->n] = ev->n_slots;
    c->ts_ns[c->n] = ev->ts_ns;
    c->end_ns[c->n] = ev->end_ns;
    memcpy(c->op[c->n], ev->slots, sizeof(c->op[c->n]));
    c->n++;
    return 0;
}

/* One OP_BRIEF record written the way ring_abi.h says (times in ns: flag TS_NS). */
static void put_brief(struct nnp_tbuf *b, uint16_t flags, uint32_t name, uint64_t start_ns,
                      uint64_t end_ns, uint64_t link)
{
    unsigned char *p = (unsigned char *)b;
    uint64_t *head = (uint64_t *)(p + NNP_RING_OFF_HEAD);
    uint64_t h = __atomic_load_n(head, __ATOMIC_RELAXED), limit, mask;
    nnp_rec_t *slots, *r;
    memcpy(&limit, p + NNP_RING_OFF_LIMIT, sizeof(limit));
    if (h + 1 > limit)
        h = nnp__ring_reserve_slow(b, 1);
    assert_true(h != UINT64_MAX);
    memcpy(&slots, p + NNP_RING_OFF_SLOTS, sizeof(slots));
    memcpy(&mask, p + NNP_RING_OFF_MASK, sizeof(mask));
    r = &slots[h & mask];
    r->kind = NNP_REC_OP_BRIEF;
    r->n_slots = 1;
    r->flags = (uint16_t)(flags | NNP_REC_F_TS_NS);
    r->name = name;
    r->ts = start_ns;
    r->a = end_ns;
    r->b = link;
    __atomic_store_n(head, h + 1, __ATOMIC_RELEASE);
}

/* OP_BRIEF records (format v4) come back from the reader as the equal 2-slot OP: type =
 * name, the autograd link unpacked from b, every other field 0. */
static void test_ring_abi_brief_ops_read_as_ops(void **state)
{
    char *dir = nnpt_mkdtemp();
    nnp_session_t *s = open_session(dir, NNP_FULL_DROP, 1024, 5);
    nnp_str_t name = nnp_intern("aten::mm");
    const uint16_t want_flags[BRIEF_OPS] = {0, NNP_REC_F_SEQ, NNP_REC_F_SEQ | NNP_REC_F_BACKWARD};
    /* No link; sequence 7 of thread 3; the largest link that fits (2^48 - 1, 65535). */
    const int64_t want_seq[BRIEF_OPS] = {0, 7, (int64_t)NNP_REC_BRIEF_SEQ_MAX};
    const uint32_t want_thread[BRIEF_OPS] = {0, 3, NNP_REC_BRIEF_THREAD_MAX};
    const uint64_t start[BRIEF_OPS] = {100, 300, 500}, end[BRIEF_OPS] = {250, 400, 900};
    struct nnp_tbuf *b;
    brief_seen_t seen;
    nnp_raw_t *raw;
    char raw_dir[4096];
    (void)state;

    assert_true(__atomic_load_n(nnp__ring_gate(), __ATOMIC_RELAXED) & NNP_GATE_OPS);
    b = nnp__ring_thread();
    assert_non_null(b);
    for (int i = 0; i < BRIEF_OPS; i++)
        put_brief(b, want_flags[i], name, start[i], end[i],
                  (uint64_t)want_seq[i] | (uint64_t)want_thread[i] << NNP_REC_BRIEF_THREAD_SHIFT);
    assert_int_equal(nnp_session_stop(s), NNP_OK);
    snprintf(raw_dir, sizeof(raw_dir), "%s", nnp_session_raw_dir(s));
    assert_int_equal(nnp_session_destroy(s), NNP_OK);

    memset(&seen, 0, sizeof(seen));
    assert_int_equal(nnp__raw_open(raw_dir, &raw), NNP_OK);
    assert_int_equal(nnp__raw_read(raw, keep_ops, &seen), NNP_OK);
    assert_int_equal(nnp__raw_report(raw)->chunks_corrupt, 0);
    assert_int_equal(nnp__raw_report(raw)->format_version, 4);
    nnp__raw_close(raw);
    assert_int_equal(seen.n, BRIEF_OPS);
    for (int i = 0; i < BRIEF_OPS; i++) {
        const nnp_rec_t *r = seen.op[i];
        const nnp_rec_op_ext_t *x = (const nnp_rec_op_ext_t *)&r[1];
        assert_int_equal(seen.n_slots[i], 2);
        assert_int_equal(r->kind, NNP_REC_OP);
        assert_int_equal(r->n_slots, 2);
        assert_int_equal(r->flags, want_flags[i] | NNP_REC_F_TS_NS);
        assert_int_equal(r->name, name);
        assert_int_equal(seen.ts_ns[i], start[i]);
        assert_int_equal(seen.end_ns[i], end[i]);
        assert_int_equal(r->b, 0); /* correlation id */
        assert_int_equal(x->type, name);
        assert_int_equal(x->graph_id, 0);
        assert_int_equal(x->stream_id, 0);
        assert_int_equal(x->input_shapes, 0);
        assert_int_equal(x->input_dtypes, 0);
        assert_int_equal(x->sequence_nr, want_seq[i]);
        assert_int_equal(x->seq_thread, want_thread[i]);
    }
    nnpt_rm_rf(dir);
    free(dir);
}

/* Counts records of one kind and the LOSS total. */
typedef struct counter {
    uint64_t n;
    uint64_t last_a;
    bool ordered;
} counter_t;

static int count_counters(void *user, const nnp_raw_event_t *ev)
{
    counter_t *c = user;
    if (ev->kind == NNP_REC_STEP_BEGIN) {
        if (c->n > 0 && ev->slots->a <= c->last_a)
            c->ordered = false;
        c->last_a = ev->slots->a;
        c->n++;
    }
    return 0;
}

/* Monotonic seconds, for the bounds of the full-buffer tests (never tight ones). */
static double mono_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU seconds of the calling thread. */
static double thread_cpu_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A tiny buffer and a stalled writer (the registry lock held, as a fork() does, so its
 * next drain waits for it): events are dropped, and recorded + dropped must equal what the
 * thread tried to record, with the loss visible to the reader. */
static void check_full_policy_losses(nnp_full_policy_t policy, double *loop_s, double *cpu_s)
{
    enum { N = 200000 };
    char *dir = nnpt_mkdtemp();
    nnp_session_t *s = open_session(dir, policy, 64, 1000);
    nnp_stats_t st;
    nnp_raw_t *raw;
    counter_t c = {0, 0, true};
    char raw_dir[4096];
    double t0;

    nnpt_log_capture();
    nnp_step_begin(0, 0); /* the thread's buffer exists before the writer is stalled */
    nnp__tbuf_fork_prepare();
    t0 = mono_sec();
    *cpu_s = thread_cpu_sec();
    for (uint64_t i = 1; i < N; i++)
        nnp_step_begin(i, 0);
    *loop_s = mono_sec() - t0;
    *cpu_s = thread_cpu_sec() - *cpu_s;
    nnp__tbuf_fork_parent();
    assert_int_equal(nnp_session_stop(s), NNP_OK);
    nnp_session_stats(s, &st);
    snprintf(raw_dir, sizeof(raw_dir), "%s", nnp_session_raw_dir(s));
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    assert_true(st.events_dropped > 0);
    assert_int_equal(st.events_recorded + st.events_dropped, N);
    assert_non_null(strstr(nnpt_log_text(), "events dropped"));
    nnpt_log_release();

    assert_int_equal(nnp__raw_open(raw_dir, &raw), NNP_OK);
    assert_int_equal(nnp__raw_read(raw, count_counters, &c), NNP_OK);
    assert_int_equal(c.n, st.events_recorded);
    assert_true(c.ordered);
    assert_int_equal(nnp__raw_report(raw)->events_lost, st.events_dropped);
    nnp__raw_close(raw);
    nnpt_rm_rf(dir);
    free(dir);
}

static void test_drop_policy_counts_every_loss(void **state)
{
    double loop_s, cpu_s;
    (void)state;
    check_full_policy_losses(NNP_FULL_DROP, &loop_s, &cpu_s);
}

/* The default policy waits for a writer that makes no progress at most 1 s (tbuf.c
 * FULL_WAIT_NS), then drops until the writer moves again: the stalled writer costs the
 * thread one wait, not one per event (200,000 waits would take 200,000 s). The wait naps
 * after its first ms: the thread does not burn the CPU the writer may need (spinning, its
 * CPU time was the whole second). */
static void test_wait_policy_drops_when_the_writer_stalls(void **state)
{
    double loop_s, cpu_s;
    (void)state;
    check_full_policy_losses(NNP_FULL_WAIT, &loop_s, &cpu_s);
    assert_true(loop_s >= 0.99);
    assert_true(loop_s < 5.0);
    if (cpu_s >= 0.5 * loop_s)
        fail_msg("the waiting thread used %.3f s of CPU in %.3f s", cpu_s, loop_s);
}

/* A thread whose buffer passes half full wakes the writer at once, instead of the writer
 * sleeping out its period (here 5 s): a fast thread is drained before its buffer fills. */
static void test_half_full_buffer_wakes_the_writer(void **state)
{
    char *dir = nnpt_mkdtemp();
    nnp_session_t *s = open_session(dir, NNP_FULL_DROP, 64, 5000);
    uint64_t half = 64 * 1024 / sizeof(nnp_rec_t) / 2, n = half + half / 2;
    nnp_stats_t st;
    double t0;
    (void)state;

    for (uint64_t i = 0; i < n; i++)
        nnp_step_begin(i, 0);
    t0 = mono_sec();
    do {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
        nnp_session_stats(s, &st);
    } while (st.events_recorded < half && mono_sec() - t0 < 2.5);
    /* Drained before half the period went by: only the thread's kick can have woken it. */
    assert_true(st.events_recorded >= half);
    assert_int_equal(st.events_dropped, 0);
    assert_int_equal(nnp_session_stop(s), NNP_OK);
    nnp_session_stats(s, &st);
    assert_int_equal(st.events_recorded, n);
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    nnpt_rm_rf(dir);
    free(dir);
}

/* The writer drains without allocating (STYLE 7: its packing state, output buffer and zstd
 * workspace are made when it starts; a fork() must never catch it inside malloc): with the
 * next allocation anywhere set to fail, draining several chunks' worth of 1- and 3-slot
 * records allocates nothing, and every record reads back. */
static void test_writer_drains_without_allocating(void **state)
{
    /* ~60,000 slots (an op of 3 slots every OP_EVERY records): several 8192-slot chunks. */
    enum { N = 40000 };
    char *dir = nnpt_mkdtemp();
    nnp_session_t *s = open_session(dir, NNP_FULL_DROP, 4096, 1000);
    worker_t w;
    check_t c;
    nnp_raw_t *raw;
    nnp_stats_t st;
    char raw_dir[4096];
    (void)state;

    memset(&w, 0, sizeof(w));
    memset(&c, 0, sizeof(c));
    w.name = nnp_intern("writer-no-alloc");
    w.n = N;
    c.names[0] = w.name;
    /* This thread's buffer and the raw directory's files exist before the test proper. */
    nnp_step_begin(0, 0);
    assert_int_equal(nnp_session_flush(s), NNP_OK);
    nnp__alloc_fail_at(1);
    work(&w);
    assert_int_equal(nnp_session_flush(s), NNP_OK);
    assert_true(nnp__alloc_fail_pending()); /* nothing allocated while recording or draining */
    nnp__alloc_fail_at(0);
    nnp_session_stats(s, &st);
    snprintf(raw_dir, sizeof(raw_dir), "%s", nnp_session_raw_dir(s));
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    assert_int_equal(st.events_dropped, 0);
    assert_int_equal(st.events_recorded, N + 1);

    assert_int_equal(nnp__raw_open(raw_dir, &raw), NNP_OK);
    assert_int_equal(nnp__raw_read(raw, on_event, &c), NNP_OK);
    assert_int_equal(c.total, N);
    assert_int_equal(c.bad, 0);
    assert_int_equal(c.other, 1); /* the step */
    assert_int_equal(nnp__raw_report(raw)->chunks_corrupt, 0);
    nnp__raw_close(raw);
    nnpt_rm_rf(dir);
    free(dir);
}

static int collect_steps(void *user, const nnp_raw_event_t *ev)
{
    uint64_t *v = user;
    if (ev->kind == NNP_REC_STEP_BEGIN && v[0] < 1000)
        v[1 + v[0]++] = ev->slots->a;
    return 0;
}

/* Only events inside start/stop windows are recorded; several windows in one session. */
static void test_windows_record_only_inside(void **state)
{
    char *dir = nnpt_mkdtemp();
    nnp_options_t o;
    nnp_session_t *s;
    nnp_raw_t *raw;
    uint64_t got[1001] = {0};
    char raw_dir[4096];
    (void)state;

    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", dir);
    o.start_profile = false;
    o.sample_interval_ms = 0;
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    assert_false(nnp_is_collecting());
    for (uint64_t step = 0; step < 300; step++) {
        if (step == 100 || step == 250)
            assert_int_equal(nnp_session_start(s), NNP_OK);
        if (step == 200 || step == 260)
            assert_int_equal(nnp_session_stop(s), NNP_OK);
        nnp_step_begin(step, 1);
    }
    snprintf(raw_dir, sizeof(raw_dir), "%s", nnp_session_raw_dir(s));
    assert_int_equal(nnp_session_destroy(s), NNP_OK);

    assert_int_equal(nnp__raw_open(raw_dir, &raw), NNP_OK);
    assert_int_equal(nnp__raw_read(raw, collect_steps, got), NNP_OK);
    assert_int_equal(got[0], 110);
    for (uint64_t i = 0; i < 100; i++)
        assert_int_equal(got[1 + i], 100 + i);
    for (uint64_t i = 0; i < 10; i++)
        assert_int_equal(got[101 + i], 250 + i);
    nnp__raw_close(raw);
    nnpt_rm_rf(dir);
    free(dir);
}

typedef struct kinds_seen {
    uint64_t count[NNP_REC_KIND_COUNT];
    const nnp_raw_t *raw;
    char last_event[64], last_module[64], thread_name[64];
    char group_members[64], comm_datatype[64];
    uint64_t group_size, comm_count, comm_wait_ns;
    int64_t group_index;
    int32_t comm_tag;
    unsigned comm_slots;
} kinds_seen_t;

static int see_kinds(void *user, const nnp_raw_event_t *ev)
{
    kinds_seen_t *k = user;
    k->count[ev->kind]++;
    if (ev->kind == NNP_REC_RANGE_END) {
        snprintf(k->last_event, sizeof(k->last_event), "%s", nnp__raw_str(k->raw, ev->slots->name));
        snprintf(k->last_module, sizeof(k->last_module), "%s",
                 nnp__raw_str(k->raw, (uint32_t)ev->slots->a));
        snprintf(k->thread_name, sizeof(k->thread_name), "%s",
                 nnp__raw_str(k->raw, nnp__raw_thread_name(k->raw, ev->tid)));
    }
    if (ev->kind == NNP_REC_COMM_GROUP) {
        snprintf(k->group_members, sizeof(k->group_members), "%s",
                 nnp__raw_str(k->raw, (uint32_t)ev->slots->a));
        k->group_size = ev->slots->a >> 32;
        k->group_index = (int64_t)ev->slots->b;
    }
    if (ev->kind == NNP_REC_COMM) {
        const nnp_rec_comm_detail_t *d = (const nnp_rec_comm_detail_t *)&ev->slots[2];
        k->comm_slots = ev->n_slots;
        if (ev->n_slots == 3) {
            snprintf(k->comm_datatype, sizeof(k->comm_datatype), "%s",
                     nnp__raw_str(k->raw, d->datatype));
            k->comm_count = d->count;
            k->comm_tag = (d->has & NNP_REC_COMM_HAS_TAG) ? d->tag : -99;
            k->comm_wait_ns = (d->has & NNP_REC_COMM_HAS_WAIT) ? d->wait_ns : 99;
        }
    }
    return 0;
}

/* Every public recording call produces its record kind, strings resolve, and the sampler
 * records machine, process and thread samples. */
static void test_every_record_kind(void **state)
{
    char *dir = nnpt_mkdtemp();
    nnp_options_t o;
    nnp_session_t *s;
    nnp_raw_t *raw;
    kinds_seen_t k;
    char raw_dir[4096];
    nnp_host_tag_t tag = {0};
    nnp_op_t op = {0};
    nnp_kernel_t kern = {0};
    nnp_tensor_t t = {0};
    nnp_comm_t comm = {0};
    nnp_pipeline_op_t pop = {0};
    uint64_t t0, range;
    (void)state;

    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", dir);
    o.sample_interval_ms = 20;
    o.msproftx = true;
    o.profile_memory = true;
    o.profile_communication = true;
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    assert_int_equal(nnp_thread_register("main-loop"), NNP_OK);
    tag.module = nnp_intern("Dataset");
    tag.event = nnp_intern("GetNext");
    tag.stage = nnp_intern("Run");
    tag.level = 1;
    nnp_range_begin(&tag);
    nnp_range_end(&tag);
    nnp_instant(&tag);
    nnp_host_memory(1234);
    t0 = nnp_now();
    op.name = nnp_intern("Default/MatMul-op1");
    op.type = nnp_intern("MatMul");
    nnp_op_since(&op, t0);
    kern.name = nnp_intern("gemm_kernel");
    nnp_kernel_at(&kern, 10, 20);
    nnp_step_begin(1, 0);
    nnp_step_end(1, 0);
    nnp_epoch_begin(0);
    nnp_epoch_end(0);
    nnp_fp_start(1);
    nnp_bp_end(1);
    t.address = 0x1000;
    t.size_bytes = 64;
    nnp_mem_alloc(&t);
    nnp_mem_free(0x1000, 64);
    comm.kind = NNP_COMM_SEND;
    comm.peer = 3;
    comm.count = 256;
    comm.datatype = nnp_intern("MPI_FLOAT");
    comm.tag = 7;
    comm.has_tag = true;
    comm.wait_ns = 0; /* measured as zero: recorded, unlike "not measured" */
    comm.has_wait = true;
    nnp_comm_since(&comm, nnp_now());
    {
        /* Runs of consecutive ranks are written "a-b". */
        static const int32_t members[] = {0, 1, 2, 3, 5, 7, 8};
        nnp_comm_group(nnp_intern("world"), members, 7, 4);
    }
    pop.op_id = 1;
    pop.parent_id = -1;
    nnp_pipeline_op(&pop);
    nnp_queue_sample(1, 3, 16);
    nnp_device_queue_sample(0, 2);
    nnp_mark(nnp_intern("hello"));
    range = nnp_mark_range_start(nnp_intern("range"));
    assert_true(range != 0);
    nnp_mark_range_stop(range);
    nnp_counter(nnp_intern("loss"), 0.5);
    {
        nnp_call_t call = {0};
        call.name = nnp_intern("cudaLaunchKernel");
        call.kind = NNP_CALL_CUDA_RUNTIME;
        nnp_call_at(&call, 30, 40);
    }
    {
        /* Let the sampler take at least two samples (20 ms interval). */
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    snprintf(raw_dir, sizeof(raw_dir), "%s", nnp_session_raw_dir(s));
    assert_int_equal(nnp_session_destroy(s), NNP_OK);

    memset(&k, 0, sizeof(k));
    assert_int_equal(nnp__raw_open(raw_dir, &raw), NNP_OK);
    k.raw = raw;
    assert_int_equal(nnp__raw_read(raw, see_kinds, &k), NNP_OK);
    for (unsigned kind = NNP_REC_RANGE_BEGIN; kind < NNP_REC_KIND_COUNT; kind++) {
        if (kind == NNP_REC_OP_BRIEF) /* read as OP: test_ring_abi_brief_ops_read_as_ops */
            assert_int_equal(k.count[kind], 0);
        else if (kind == NNP_REC_THREAD_CPU || kind == NNP_REC_SYS_CPU ||
                 kind == NNP_REC_PROC_CPU || kind == NNP_REC_PROC_MEM)
            assert_true(k.count[kind] >= 1);
        else
            assert_int_equal(k.count[kind], 1);
    }
    assert_string_equal(k.last_event, "GetNext");
    assert_string_equal(k.last_module, "Dataset");
    assert_string_equal(k.thread_name, "main-loop");
    assert_string_equal(k.group_members, "0-3,5,7-8");
    assert_int_equal(k.group_size, 7);
    assert_int_equal(k.group_index, 4);
    assert_int_equal(k.comm_slots, 3);
    assert_string_equal(k.comm_datatype, "MPI_FLOAT");
    assert_int_equal(k.comm_count, 256);
    assert_int_equal(k.comm_tag, 7);
    assert_int_equal(k.comm_wait_ns, 0);
    nnp__raw_close(raw);
    nnpt_rm_rf(dir);
    free(dir);
}

typedef struct at_check {
    unsigned kinds[8];
    uint64_t ts[8];
    int n;
} at_check_t;

static int collect_at(void *user, const nnp_raw_event_t *ev)
{
    at_check_t *a = user;
    if (a->n < 8) {
        a->kinds[a->n] = ev->kind;
        a->ts[a->n] = ev->ts_ns;
        a->n++;
    }
    return 0;
}

/* The explicit-timestamp variants keep the given ns exactly. */
static void test_explicit_timestamp_variants(void **state)
{
    char *dir = nnpt_mkdtemp();
    nnp_options_t o;
    nnp_session_t *s;
    nnp_raw_t *raw;
    at_check_t a;
    char raw_dir[4096];
    const unsigned want[] = {NNP_REC_EPOCH_BEGIN, NNP_REC_QUEUE, NNP_REC_DEVICE_QUEUE, NNP_REC_MARK,
                             NNP_REC_EPOCH_END};
    (void)state;

    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", dir);
    o.sample_interval_ms = 0;
    o.msproftx = true;
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    nnp_epoch_begin_at(3, 100);
    nnp_queue_sample_at(7, 5, 16, 200);
    nnp_device_queue_sample_at(1, 2, 300);
    nnp_mark_at(nnp_intern("m"), 400);
    nnp_epoch_end_at(3, 500);
    snprintf(raw_dir, sizeof(raw_dir), "%s", nnp_session_raw_dir(s));
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    memset(&a, 0, sizeof(a));
    assert_int_equal(nnp__raw_open(raw_dir, &raw), NNP_OK);
    assert_int_equal(nnp__raw_read(raw, collect_at, &a), NNP_OK);
    nnp__raw_close(raw);
    assert_int_equal(a.n, 5);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(a.kinds[i], want[i]);
        assert_int_equal(a.ts[i], (uint64_t)(i + 1) * 100);
    }
    nnpt_rm_rf(dir);
    free(dir);
}

/* ---- sessions one after another while a thread keeps recording (issue 10) ---- */

typedef struct spinner {
    pthread_t th;
    _Atomic bool stop;
    _Atomic uint64_t loops;
} spinner_t;

static void *spin(void *arg)
{
    spinner_t *sp = arg;
    nnp_host_tag_t tag = {0};
    nnp_op_t op = {0};
    tag.event = nnp_intern("spin-range");
    op.name = op.type = nnp_intern("SpinOp");
    while (!atomic_load(&sp->stop)) {
        nnp_range_begin(&tag);
        nnp_op_since(&op, nnp_now());
        nnp_range_end(&tag);
        atomic_fetch_add(&sp->loops, 1);
    }
    return NULL;
}

/* Waits until the spinner has looped n more times (it runs whatever the session does). */
static void wait_loops(spinner_t *sp, uint64_t n)
{
    uint64_t target = atomic_load(&sp->loops) + n;
    struct timespec ts = {0, 1000000};
    while (atomic_load(&sp->loops) < target)
        nanosleep(&ts, NULL);
}

static int count_kinds(void *user, const nnp_raw_event_t *ev)
{
    uint64_t *per_kind = user;
    if (ev->kind < NNP_REC_KIND_COUNT)
        per_kind[ev->kind]++;
    return 0;
}

/* A second session with other gates and another buffer size starts while a thread of the
 * first still records: applying its configuration must not race with that thread (TSan),
 * and the second run holds nothing its gates exclude, not even events of the first run
 * that its writer never drained. */
static void test_second_session_while_threads_record(void **state)
{
    char *dir = nnpt_mkdtemp();
    spinner_t sp;
    nnp_options_t o;
    nnp_session_t *s;
    nnp_raw_t *raw;
    char raw_dir[4096];
    uint64_t first[NNP_REC_KIND_COUNT] = {0}, second[NNP_REC_KIND_COUNT] = {0};
    (void)state;

    atomic_init(&sp.stop, false);
    atomic_init(&sp.loops, 0);
    s = open_session(dir, NNP_FULL_DROP, 4096, 5);
    assert_int_equal(pthread_create(&sp.th, NULL, spin, &sp), 0);
    wait_loops(&sp, 1000);
    snprintf(raw_dir, sizeof(raw_dir), "%s", nnp_session_raw_dir(s));
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    assert_int_equal(nnp__raw_open(raw_dir, &raw), NNP_OK);
    assert_int_equal(nnp__raw_read(raw, count_kinds, first), NNP_OK);
    nnp__raw_close(raw);

    for (int round = 0; round < 3; round++) {
        nnp_options_init(&o);
        snprintf(o.output_path, sizeof(o.output_path), "%s", dir);
        o.sample_interval_ms = 0;
        o.op_time = false;
        o.profile_framework = NNP_FRAMEWORK_NONE;
        o.buffer_size_kb = 128 << round;
        o.full_policy = round == 1 ? NNP_FULL_BLOCK : NNP_FULL_DROP;
        o.writer_period_ms = 1;
        assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
        wait_loops(&sp, 1000);
        nnp_step_begin((uint64_t)round, 0);
        snprintf(raw_dir, sizeof(raw_dir), "%s", nnp_session_raw_dir(s));
        assert_int_equal(nnp_session_destroy(s), NNP_OK);
        assert_int_equal(nnp__raw_open(raw_dir, &raw), NNP_OK);
        assert_int_equal(nnp__raw_read(raw, count_kinds, second), NNP_OK);
        nnp__raw_close(raw);
    }
    atomic_store(&sp.stop, true);
    pthread_join(sp.th, NULL);

    assert_true(first[NNP_REC_RANGE_BEGIN] > 0 && first[NNP_REC_OP] > 0);
    assert_int_equal(second[NNP_REC_RANGE_BEGIN], 0);
    assert_int_equal(second[NNP_REC_RANGE_END], 0);
    assert_int_equal(second[NNP_REC_OP], 0);
    assert_int_equal(second[NNP_REC_STEP_BEGIN], 3);
    nnpt_rm_rf(dir);
    free(dir);
}

/* Every window starts with a sample of the machine and the process, however long the
 * sampling period: a short run (an MPI rank that only initialises, a helper) still says
 * what the machine was doing, and its raw directory exists. */
static void test_window_starts_with_a_sample(void **state)
{
    char *dir = nnpt_mkdtemp();
    nnp_options_t o;
    nnp_session_t *s;
    nnp_raw_t *raw;
    char raw_dir[4096];
    uint64_t kinds[NNP_REC_KIND_COUNT] = {0};
    (void)state;

    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", dir);
    o.sample_interval_ms = 60000; /* a minute: only the window's first sample can be seen */
    o.start_profile = false;
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    for (int w = 0; w < 2; w++) {
        /* Wait (60 s at most: the machine may be busy) until the window's first sample is
         * on disk: 3 records (machine, process CPU, process memory) per window. */
        nnp_stats_t st;
        struct timespec pause = {0, 10 * 1000 * 1000};
        assert_int_equal(nnp_session_start(s), NNP_OK);
        for (int i = 0; i < 6000; i++) {
            assert_int_equal(nnp_session_flush(s), NNP_OK);
            nnp_session_stats(s, &st);
            if (st.events_recorded >= 3u * (unsigned)(w + 1))
                break;
            nanosleep(&pause, NULL);
        }
        assert_int_equal(nnp_session_stop(s), NNP_OK);
    }
    snprintf(raw_dir, sizeof(raw_dir), "%s", nnp_session_raw_dir(s));
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    assert_int_equal(nnp__raw_open(raw_dir, &raw), NNP_OK);
    assert_int_equal(nnp__raw_read(raw, count_kinds, kinds), NNP_OK);
    nnp__raw_close(raw);
    assert_int_equal(kinds[NNP_REC_SYS_CPU], 2);
    assert_int_equal(kinds[NNP_REC_PROC_CPU], 2);
    assert_int_equal(kinds[NNP_REC_PROC_MEM], 2);
    nnpt_rm_rf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_record_kind),
        cmocka_unit_test(test_explicit_timestamp_variants),
        cmocka_unit_test(test_windows_record_only_inside),
        cmocka_unit_test(test_drop_policy_counts_every_loss),
        cmocka_unit_test(test_wait_policy_drops_when_the_writer_stalls),
        cmocka_unit_test(test_half_full_buffer_wakes_the_writer),
        cmocka_unit_test(test_eight_threads_exact),
        cmocka_unit_test(test_ring_abi_brief_ops_read_as_ops),
        cmocka_unit_test(test_second_session_while_threads_record),
        cmocka_unit_test(test_window_starts_with_a_sample),
        cmocka_unit_test(test_writer_drains_without_allocating),
    };
    nnp_log_set_level(NNP_LOG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
