/* test_timeline.c - trace_view.json and timeline_summary_{rank}.json (chrome_trace.c) on a
 * hand-built model with a hand-built step trace (never through step_trace.c). The output is
 * parsed with cJSON and checked as a viewer would see it: metadata names, the Overlap
 * Analysis threads, proper nesting of the slices of EVERY tid, paired flows, counters, the
 * step-boundary truncation and its marker, pretty vs compact, allocation failures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "analyse/analyse.h"
#include "test_util.h"
#include "util/util.h"

#define US       1000
#define PATH_BUF 4096
#define MAX_FILE (64u << 20)
#define N_STEPS  3
/* Step k spans [k * STEP_US, (k + 1) * STEP_US) us; events sit at offsets inside it. */
#define STEP_US       1000
#define DEV_MAIN      0u
#define DEV_NCCL      1u
#define STREAM_A      7u
#define STREAM_B      8u
#define OS_TID_MAIN   101u
#define OS_TID_LOADER 102u
#define RUN_PID       4242
/* Flows per step: kernel A (corr k*10+1) twice, kernel B (corr k*10+2) once. */
#define FLOWS_PER_STEP 3
#define MAX_SLICES     4096
#define MAX_FAIL_AT    4000

typedef struct fixture {
    nnp_model_t m;
    nnp_actx_t c;
    char *dir;
    nnp_step_trace_t st;
    nnp_step_row_t rows[N_STEPS];
    nnp_overlap_t ov;
    bool has_ov;
    uint32_t th_main, th_loader;
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    assert_int_equal(nnp__model_init(&f->m), NNP_OK);
    f->dir = nnpt_mkdtemp();
    f->c.m = &f->m;
    f->c.out_dir = f->dir;
    f->c.rank_dir = f->dir;
    f->st.rows = f->rows;
    f->m.info.pid = RUN_PID;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    if (f->has_ov)
        nnp__overlap_fini(&f->ov);
    nnp__model_fini(&f->m);
    nnpt_rm_rf(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* ---- building the model ---- */

static uint32_t S(fixture_t *f, const char *s)
{
    return nnp__model_intern_cstr(&f->m, s);
}

static size_t op(fixture_t *f, uint32_t th, int64_t s_us, int64_t e_us, const char *name,
                 uint64_t corr)
{
    size_t i = nnp__table_push(&f->m.ops.t);
    assert_true(i != SIZE_MAX);
    f->m.ops.start_ns[i] = s_us * US;
    f->m.ops.end_ns[i] = e_us * US;
    f->m.ops.name[i] = S(f, name);
    f->m.ops.type[i] = S(f, strrchr(name, '/') ? strrchr(name, '/') + 1 : name);
    f->m.ops.thread[i] = th;
    f->m.ops.corr[i] = corr;
    f->m.ops.graph_id[i] = 1;
    return i;
}

static void kernel(fixture_t *f, uint32_t dev, uint32_t stream, int64_t s_us, int64_t e_us,
                   const char *name, uint64_t corr)
{
    size_t i = nnp__table_push(&f->m.kernels.t);
    assert_true(i != SIZE_MAX);
    f->m.kernels.start_ns[i] = s_us * US;
    f->m.kernels.end_ns[i] = e_us * US;
    f->m.kernels.name[i] = S(f, name);
    f->m.kernels.type[i] = S(f, "KERNEL");
    f->m.kernels.device_id[i] = dev;
    f->m.kernels.stream_id[i] = stream;
    f->m.kernels.corr[i] = corr;
}

static void host(fixture_t *f, uint32_t th, int64_t ts_us, uint8_t kind, const char *event,
                 const char *stage, uint8_t level)
{
    size_t i = nnp__table_push(&f->m.host.t);
    assert_true(i != SIZE_MAX);
    f->m.host.ts_ns[i] = ts_us * US;
    f->m.host.kind[i] = kind;
    f->m.host.level[i] = level;
    f->m.host.module[i] = S(f, "fw");
    f->m.host.event[i] = S(f, event);
    f->m.host.stage[i] = S(f, stage);
    f->m.host.thread[i] = th;
}

static void comm(fixture_t *f, int64_t s_us, int64_t e_us, const char *group, int kind,
                 int32_t peer)
{
    size_t i = nnp__table_push(&f->m.comms.t);
    assert_true(i != SIZE_MAX);
    f->m.comms.start_ns[i] = s_us * US;
    f->m.comms.end_ns[i] = e_us * US;
    f->m.comms.group[i] = S(f, group);
    f->m.comms.kind[i] = (uint32_t)kind;
    f->m.comms.peer[i] = peer;
    f->m.comms.bytes[i] = 1024;
}

static void series(fixture_t *f, nnp_series_t *s, int64_t ts_us, const char *name, double v)
{
    size_t i = nnp__table_push(&s->t);
    assert_true(i != SIZE_MAX);
    s->ts_ns[i] = ts_us * US;
    s->name[i] = name ? S(f, name) : 0;
    s->value[i] = v;
}

static void marker(fixture_t *f, int64_t s_ns, int64_t e_ns, const char *msg)
{
    size_t i = nnp__table_push(&f->m.markers.t);
    assert_true(i != SIZE_MAX);
    f->m.markers.start_ns[i] = s_ns;
    f->m.markers.end_ns[i] = e_ns;
    f->m.markers.message[i] = S(f, msg);
    f->m.markers.thread[i] = f->th_main;
}

static void cpu_sample(fixture_t *f, int64_t ts_us, uint64_t user, uint64_t sys, uint64_t idle)
{
    size_t i = nnp__table_push(&f->m.sys_cpu.t);
    assert_true(i != SIZE_MAX);
    f->m.sys_cpu.ts_ns[i] = ts_us * US;
    f->m.sys_cpu.user[i] = user;
    f->m.sys_cpu.sys[i] = sys;
    f->m.sys_cpu.idle[i] = idle;
}

/* The reference run: three steps of host ops (one pair partially overlapping), kernels
 * on two devices (one stream with partially overlapping kernels), host ranges (matched,
 * unmatched, partially overlapping, developer level), communication, every counter kind,
 * user markers, and events before the first and after the last step. */
static void build(fixture_t *f)
{
    nnp_model_t *m = &f->m;
    size_t t;
    t = nnp__model_thread(m, OS_TID_MAIN, RUN_PID);
    m->threads.name[t] = S(f, "main");
    f->th_main = (uint32_t)t;
    f->th_loader = (uint32_t)nnp__model_thread(m, OS_TID_LOADER, RUN_PID);

    op(f, f->th_main, 500, 600, "Init-op0", 0);                  /* before step 1 */
    kernel(f, DEV_MAIN, STREAM_A, 4100, 4200, "late_kernel", 0); /* after step 3 */
    for (int k = 1; k <= N_STEPS; k++) {
        int64_t b = (int64_t)k * STEP_US;
        uint64_t corr = (uint64_t)k * 10;
        nnp_step_row_t *r = &f->rows[f->st.n++];
        memset(r, 0, sizeof(*r));
        r->step_id = (uint64_t)k;
        r->graph_id = 1;
        r->begin_ns = r->start_point_ns = b * US;
        r->end_ns = (b + STEP_US) * US;
        r->fp_ns = k < N_STEPS ? (b + 100) * US : -1; /* the last step: no fp/bp */
        r->bp_ns = k < N_STEPS ? (b + 800) * US : -1;

        op(f, f->th_main, b + 100, b + 500, "Default/net/Conv2D-op1", corr + 1);
        op(f, f->th_main, b + 200, b + 300, "Default/net/ReLU-op2", corr + 2);
        op(f, f->th_main, b + 400, b + 600, "Default/net/Add-op3", 0); /* crosses op1 */
        op(f, f->th_loader, b + 50, b + 900, "Default/GetNext-op0", 0);

        kernel(f, DEV_MAIN, STREAM_A, b + 150, b + 450, "conv_kernel", corr + 1);
        kernel(f, DEV_MAIN, STREAM_A, b + 460, b + 470, "relu_kernel", corr + 2);
        kernel(f, DEV_MAIN, STREAM_A, b + 480, b + 490, "conv_tail_kernel", corr + 1);
        kernel(f, DEV_MAIN, STREAM_B, b + 300, b + 700, "kb1", 0);
        kernel(f, DEV_MAIN, STREAM_B, b + 600, b + 800, "kb2", 0); /* crosses kb1 */
        kernel(f, DEV_NCCL, 0, b + 700, b + 950, "ncclKernel_AllReduce", 0);

        host(f, f->th_main, b + 10, 0, "Forward", "Stage", 1);
        host(f, f->th_main, b + 950, 1, "Forward", "Stage", 1);
        host(f, f->th_main, b + 30, 2, "Mark", "", 1);
        host(f, f->th_main, b + 40, 0, "X", "a", 1);
        host(f, f->th_main, b + 60, 0, "Y", "b", 1);
        host(f, f->th_main, b + 70, 1, "X", "a", 1); /* X and Y cross */
        host(f, f->th_main, b + 80, 1, "Y", "b", 1);
        host(f, f->th_main, b + 90, 0, "Dev", "x", 0);
        host(f, f->th_main, b + 95, 1, "Dev", "x", 0);
        if (k == 2)
            host(f, f->th_main, b + 20, 0, "Data", "", 1); /* never ends */

        comm(f, b + 600, b + 850, "world", NNP_COMM_ALLREDUCE, -1);
        comm(f, b + 650, b + 700, "", NNP_COMM_SEND, 1);

        series(f, &m->counters, b + 999, "loss", 1.0 / k);
        series(f, &m->host_mem, b + 10, NULL, 1e6 * k);
        series(f, &m->proc_rss, b + 10, NULL, 2e6 * k);
        {
            size_t i = nnp__table_push(&m->queues.t);
            m->queues.ts_ns[i] = (b + 5) * US;
            m->queues.op_id[i] = k == 1 ? 3 : -1;
            m->queues.size[i] = 2;
            m->queues.capacity[i] = 4;
        }
        cpu_sample(f, b, 100 * (uint64_t)k, 50 * (uint64_t)k, 850 * (uint64_t)k);
        marker(f, (b + 5) * US, (b + 5) * US, "epoch marker");
        marker(f, (b + 6) * US, (b + 7) * US, "user range");
        if (k == N_STEPS)
            marker(f, (b + 8) * US, NNP_OPEN_END, "open marker");
    }
    /* One op with sub-microsecond times, to check the exact ts text. */
    {
        size_t i = op(f, f->th_loader, 1900, 1901, "Exact-op", 0);
        m->ops.start_ns[i] = 1900123;
        m->ops.end_ns[i] = 1900456;
    }
    assert_int_equal(nnp__model_finish(m), NNP_OK);
    assert_int_equal(nnp__overlap_run(&f->c, &f->st, &f->ov), NNP_OK);
    f->has_ov = true;
}

/* ---- reading the output ---- */

static char *slurp(fixture_t *f, const char *name)
{
    char path[PATH_BUF];
    char *text = NULL;
    size_t len = 0;
    snprintf(path, sizeof(path), "%s/%s", f->dir, name);
    assert_int_equal(nnp__read_file(path, MAX_FILE, &text, &len), NNP_OK);
    return text;
}

static cJSON *load(fixture_t *f)
{
    char *text = slurp(f, "trace_view.json");
    cJSON *root = cJSON_Parse(text);
    nnp__free(text);
    assert_non_null(root);
    assert_true(cJSON_IsArray(root));
    return root;
}

static const char *sget(const cJSON *e, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double nget(const cJSON *e, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

static bool is_ph(const cJSON *e, const char *ph)
{
    const char *p = sget(e, "ph");
    return p && strcmp(p, ph) == 0;
}

static int64_t ns_of(const cJSON *e, const char *key)
{
    return llround(nget(e, key) * US);
}

/* pid of the process with this process_name, or -1. */
static double pid_of(const cJSON *root, const char *name)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, root)
    {
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
        if (is_ph(e, "M") && strcmp(sget(e, "name"), "process_name") == 0 &&
            strcmp(sget(args, "name"), name) == 0)
            return nget(e, "pid");
    }
    return -1;
}

/* The thread_name of (pid, tid), or NULL. */
static const char *thread_name(const cJSON *root, double pid, double tid)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, root)
    {
        if (is_ph(e, "M") && strcmp(sget(e, "name"), "thread_name") == 0 && nget(e, "pid") == pid &&
            nget(e, "tid") == tid)
            return sget(cJSON_GetObjectItemCaseSensitive(e, "args"), "name");
    }
    return NULL;
}

static bool has_thread_named(const cJSON *root, const char *name)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, root)
    {
        if (is_ph(e, "M") && strcmp(sget(e, "name"), "thread_name") == 0 &&
            strcmp(sget(cJSON_GetObjectItemCaseSensitive(e, "args"), "name"), name) == 0)
            return true;
    }
    return false;
}

static int count_named(const cJSON *root, const char *ph, const char *name)
{
    const cJSON *e;
    int n = 0;
    cJSON_ArrayForEach(e, root)
    {
        n += is_ph(e, ph) && sget(e, "name") && strcmp(sget(e, "name"), name) == 0;
    }
    return n;
}

static const cJSON *find_named(const cJSON *root, const char *ph, const char *name)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, root)
    {
        if (is_ph(e, ph) && sget(e, "name") && strcmp(sget(e, "name"), name) == 0)
            return e;
    }
    return NULL;
}

/* ---- the nesting checker ---- */

typedef struct slice {
    double pid, tid;
    int64_t s, e; /* B events: e = INT64_MAX (open to the end of the trace) */
} slice_t;

static int cmp_slice(const void *a, const void *b)
{
    const slice_t *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->s != y->s)
        return x->s < y->s ? -1 : 1;
    return (x->e < y->e) - (x->e > y->e); /* the longer first: a parent before its child */
}

/* Every slice on a (pid, tid) is inside or disjoint from every other (a laminar family):
 * sorted by start (parents first), each slice must end by the end of the innermost slice
 * still open at its start. Returns the number of slices checked. */
static size_t check_nesting(const cJSON *root)
{
    static slice_t v[MAX_SLICES];
    int64_t stack[MAX_SLICES];
    size_t n = 0, depth = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, root)
    {
        if (!is_ph(e, "X") && !is_ph(e, "B"))
            continue;
        assert_true(n < MAX_SLICES);
        v[n].pid = nget(e, "pid");
        v[n].tid = nget(e, "tid");
        v[n].s = ns_of(e, "ts");
        v[n].e = is_ph(e, "X") ? v[n].s + ns_of(e, "dur") : INT64_MAX;
        assert_true(v[n].e >= v[n].s);
        n++;
    }
    qsort(v, n, sizeof(*v), cmp_slice);
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || v[i].pid != v[i - 1].pid || v[i].tid != v[i - 1].tid)
            depth = 0;
        while (depth > 0 && stack[depth - 1] <= v[i].s)
            depth--;
        if (depth > 0 && v[i].e > stack[depth - 1])
            fail_msg("pid %.0f tid %.0f: slice [%lld, %lld] crosses its parent ending at %lld",
                     v[i].pid, v[i].tid, (long long)v[i].s, (long long)v[i].e,
                     (long long)stack[depth - 1]);
        stack[depth++] = v[i].e;
    }
    return n;
}

/* A flow end binds to a slice of its own (pid, tid) that encloses its ts. */
static bool bound_to_slice(const cJSON *root, const cJSON *flow)
{
    const cJSON *e;
    int64_t ts = ns_of(flow, "ts");
    cJSON_ArrayForEach(e, root)
    {
        if (is_ph(e, "X") && nget(e, "pid") == nget(flow, "pid") &&
            nget(e, "tid") == nget(flow, "tid") && ns_of(e, "ts") <= ts &&
            ts <= ns_of(e, "ts") + ns_of(e, "dur"))
            return true;
    }
    return false;
}

/* Every flow id has exactly one "s" and one "f" (bp "e"), each bound to a slice. Returns
 * the number of flows. */
static int check_flows(const cJSON *root)
{
    const cJSON *e, *g;
    int flows = 0;
    cJSON_ArrayForEach(e, root)
    {
        int n_s = 0, n_f = 0;
        double id;
        if (!is_ph(e, "s"))
            continue;
        id = nget(e, "id");
        cJSON_ArrayForEach(g, root)
        {
            if ((is_ph(g, "s") || is_ph(g, "f")) && nget(g, "id") == id) {
                n_s += is_ph(g, "s");
                n_f += is_ph(g, "f");
                if (is_ph(g, "f"))
                    assert_string_equal(sget(g, "bp"), "e");
                assert_true(bound_to_slice(root, g));
            }
        }
        assert_int_equal(n_s, 1);
        assert_int_equal(n_f, 1);
        flows++;
    }
    cJSON_ArrayForEach(e, root)
    {
        if (is_ph(e, "f")) { /* and no "f" without its "s" */
            bool found = false;
            cJSON_ArrayForEach(g, root)
            {
                found |= is_ph(g, "s") && nget(g, "id") == nget(e, "id");
            }
            assert_true(found);
        }
    }
    return flows;
}

/* Events that are not metadata and start before ts_us. */
static int count_before(const cJSON *root, int64_t ts_us)
{
    const cJSON *e;
    int n = 0;
    cJSON_ArrayForEach(e, root)
    {
        n += !is_ph(e, "M") && ns_of(e, "ts") < ts_us * US;
    }
    return n;
}

static void write_timeline(fixture_t *f)
{
    assert_int_equal(nnp__timeline_write(&f->c, &f->st, &f->ov), NNP_OK);
}

/* ---- tests ---- */

static void test_processes_and_threads(void **state)
{
    fixture_t *f = *state;
    cJSON *root;
    double ov_pid, host_pid;
    build(f);
    write_timeline(f);
    root = load(f);
    assert_true(pid_of(root, "Step Trace") >= 0);
    assert_true(pid_of(root, "Device 0") >= 0);
    assert_true(pid_of(root, "Device 1") >= 0);
    assert_true(pid_of(root, "Communication") >= 0);
    host_pid = pid_of(root, "Host");
    assert_true(host_pid == RUN_PID);
    ov_pid = pid_of(root, "Overlap Analysis");
    assert_true(ov_pid >= 0);
    assert_string_equal(thread_name(root, ov_pid, 0), "Computing");
    assert_string_equal(thread_name(root, ov_pid, 1), "Communication");
    assert_string_equal(thread_name(root, ov_pid, 2), "Communication(Not Overlapped)");
    assert_string_equal(thread_name(root, ov_pid, 3), "Free");
    /* Host threads keep their OS tids; a nameless thread is "Thread <tid>". */
    assert_string_equal(thread_name(root, host_pid, OS_TID_MAIN), "main");
    assert_string_equal(thread_name(root, host_pid, OS_TID_LOADER), "Thread 102");
    assert_string_equal(thread_name(root, pid_of(root, "Device 0"), STREAM_A), "Stream 7");
    assert_true(has_thread_named(root, "world"));
    assert_true(has_thread_named(root, "default"));
    assert_true(has_thread_named(root, "main host ranges"));
    assert_true(has_thread_named(root, "main markers"));
    assert_true(has_thread_named(root, "main unfinished ranges"));
    assert_int_equal(count_named(root, "M", "process_sort_index"), 6);
    cJSON_Delete(root);
}

/* Partially overlapping slices go to overflow lanes; every tid nests properly. */
static void test_nesting_and_overflow_lanes(void **state)
{
    fixture_t *f = *state;
    cJSON *root;
    build(f);
    write_timeline(f);
    root = load(f);
    assert_true(check_nesting(root) > 50);
    assert_true(has_thread_named(root, "main (overlap)"));
    assert_true(has_thread_named(root, "Stream 8 (overlap)"));
    assert_true(has_thread_named(root, "main host ranges (overlap)"));
    assert_false(has_thread_named(root, "Stream 7 (overlap)"));
    assert_false(has_thread_named(root, "Steps (overlap)")); /* fp/bp nest in the step */
    cJSON_Delete(root);
}

static void test_steps_and_phases(void **state)
{
    fixture_t *f = *state;
    cJSON *root;
    const cJSON *s1, *fb;
    build(f);
    write_timeline(f);
    root = load(f);
    for (int k = 1; k <= N_STEPS; k++) {
        char name[32];
        snprintf(name, sizeof(name), "Step %d", k);
        assert_int_equal(count_named(root, "X", name), 1);
    }
    assert_int_equal(count_named(root, "X", "fp_and_bp"), N_STEPS - 1);
    assert_int_equal(count_named(root, "X", "tail"), N_STEPS - 1);
    s1 = find_named(root, "X", "Step 1");
    fb = find_named(root, "X", "fp_and_bp");
    assert_true(nget(s1, "tid") == nget(fb, "tid"));
    assert_int_equal(ns_of(s1, "ts"), STEP_US * US);
    assert_int_equal(ns_of(s1, "dur"), STEP_US * US);
    assert_int_equal(ns_of(fb, "ts"), (STEP_US + 100) * US);
    assert_int_equal(ns_of(fb, "dur"), 700 * US);
    cJSON_Delete(root);
}

/* Broken fp/bp (fp before the step's start point) cannot nest: the phase moves to a
 * second Step Trace lane instead of crossing the step. */
static void test_broken_phase_moves_lane(void **state)
{
    fixture_t *f = *state;
    cJSON *root;
    build(f);
    f->rows[1].fp_ns = f->rows[0].end_ns - 50 * US; /* step 2's fp inside step 1 */
    write_timeline(f);
    root = load(f);
    check_nesting(root);
    assert_true(has_thread_named(root, "Steps (overlap)"));
    cJSON_Delete(root);
}

static void test_op_and_range_events(void **state)
{
    fixture_t *f = *state;
    cJSON *root;
    const cJSON *e, *args;
    char *text;
    build(f);
    write_timeline(f);
    root = load(f);
    /* Ops: the last scope component names the slice, args keep the rest. */
    e = find_named(root, "X", "Conv2D-op1");
    assert_non_null(e);
    args = cJSON_GetObjectItemCaseSensitive(e, "args");
    assert_string_equal(sget(args, "full_name"), "Default/net/Conv2D-op1");
    assert_string_equal(sget(args, "type"), "Conv2D-op1");
    assert_int_equal(count_named(root, "X", "Conv2D-op1"), N_STEPS);
    /* Host ranges: matched pairs are X "event::stage" with the module as cat; the
     * unmatched begin is a B event; developer rows are hidden from users. */
    e = find_named(root, "X", "Forward::Stage");
    assert_non_null(e);
    assert_string_equal(sget(e, "cat"), "fw");
    assert_int_equal(ns_of(e, "dur"), 940 * US);
    assert_int_equal(count_named(root, "X", "Forward::Stage"), N_STEPS);
    assert_int_equal(count_named(root, "B", "Data"), 1);
    assert_int_equal(count_named(root, "i", "Mark"), N_STEPS);
    assert_int_equal(count_named(root, "X", "Dev::x"), 0);
    /* Markers: instant, range, open range. */
    assert_int_equal(count_named(root, "i", "epoch marker"), N_STEPS);
    assert_int_equal(count_named(root, "X", "user range"), N_STEPS);
    assert_int_equal(count_named(root, "B", "open marker"), 1);
    /* Communication args. */
    e = find_named(root, "X", "allreduce");
    assert_non_null(e);
    args = cJSON_GetObjectItemCaseSensitive(e, "args");
    assert_string_equal(sget(args, "kind"), "allreduce");
    assert_true(nget(args, "bytes") == 1024);
    assert_true(nget(args, "peer") == -1);
    assert_non_null(find_named(root, "X", "send"));
    /* Events outside every step are written before and after. */
    assert_int_equal(count_named(root, "X", "Init-op0"), 1);
    assert_int_equal(count_named(root, "X", "late_kernel"), 1);
    cJSON_Delete(root);
    /* Timestamps: absolute monotonic us with exactly 3 decimals (ns exact). */
    text = slurp(f, "trace_view.json");
    assert_non_null(strstr(text, "\"ts\":1900.123,\"dur\":0.333"));
    nnp__free(text);
}

static void test_developer_rows(void **state)
{
    fixture_t *f = *state;
    cJSON *root;
    build(f);
    f->c.is_developer = true;
    write_timeline(f);
    root = load(f);
    assert_int_equal(count_named(root, "X", "Dev::x"), N_STEPS);
    check_nesting(root);
    cJSON_Delete(root);
}

static void test_flows(void **state)
{
    fixture_t *f = *state;
    cJSON *root;
    build(f);
    write_timeline(f);
    root = load(f);
    assert_int_equal(check_flows(root), N_STEPS * FLOWS_PER_STEP);
    cJSON_Delete(root);
}

static void test_counters(void **state)
{
    fixture_t *f = *state;
    cJSON *root;
    const cJSON *e, *args;
    build(f);
    write_timeline(f);
    root = load(f);
    assert_int_equal(count_named(root, "C", "loss"), N_STEPS);
    assert_int_equal(count_named(root, "C", "Host memory"), N_STEPS);
    assert_int_equal(count_named(root, "C", "Process RSS"), N_STEPS);
    assert_int_equal(count_named(root, "C", "queue op 3"), 1);
    assert_int_equal(count_named(root, "C", "device queue"), N_STEPS - 1);
    /* CPU: one value per pair of consecutive samples: 100 user, 50 sys, 850 idle per
     * interval -> 10 % user, 5 % sys. */
    assert_int_equal(count_named(root, "C", "CPU utilisation (%)"), N_STEPS - 1);
    e = find_named(root, "C", "CPU utilisation (%)");
    args = cJSON_GetObjectItemCaseSensitive(e, "args");
    assert_true(fabs(nget(args, "user") - 10.0) < 1e-9);
    assert_true(fabs(nget(args, "sys") - 5.0) < 1e-9);
    assert_true(fabs(nget(args, "iowait")) < 1e-9);
    e = find_named(root, "C", "device queue");
    args = cJSON_GetObjectItemCaseSensitive(e, "args");
    assert_true(nget(args, "size") == 2 && nget(args, "capacity") == 4);
    cJSON_Delete(root);
}

/* The overlap process mirrors the merged lists of overlap.c, one X per interval. */
static void test_overlap_slices(void **state)
{
    fixture_t *f = *state;
    cJSON *root;
    nnp_gap_iter_t it;
    size_t gaps = 0;
    build(f);
    for (nnp__overlap_gaps_begin(&f->ov, &it); it.has; nnp__overlap_gaps_next(&it))
        gaps++;
    write_timeline(f);
    root = load(f);
    assert_int_equal(count_named(root, "X", "Computing"), (int)f->ov.computing.n);
    assert_int_equal(count_named(root, "X", "Communication"), (int)f->ov.communication.n);
    assert_int_equal(count_named(root, "X", "Communication(Not Overlapped)"),
                     (int)f->ov.comm_not_overlapped.n);
    assert_int_equal(count_named(root, "X", "Free"), (int)gaps);
    assert_true(f->ov.computing.n > 0 && f->ov.comm_not_overlapped.n > 0 && gaps > 0);
    cJSON_Delete(root);
}

/* A limit smaller than the first step: the timeline stops after step 1 (never inside it),
 * names the cut with a global instant and logs the same warning. */
static void test_limit_cuts_at_step_boundary(void **state)
{
    fixture_t *f = *state;
    cJSON *full, *cut;
    const cJSON *mk;
    char want[256];
    build(f);
    write_timeline(f);
    full = load(f);
    f->c.timeline_limit_bytes = 1;
    nnpt_log_capture();
    write_timeline(f);
    cut = load(f);
    snprintf(want, sizeof(want),
             "nnprof: timeline truncated at step 1 (timeline_limit %g MB); later steps omitted",
             1.0 / (1024.0 * 1024.0));
    assert_non_null(strstr(nnpt_log_text(), want));
    nnpt_log_release();
    mk = find_named(cut, "i", want);
    assert_non_null(mk);
    assert_string_equal(sget(mk, "s"), "g");
    assert_true(nget(mk, "pid") == pid_of(cut, "Step Trace"));
    /* Step 1 is whole: every event starting before step 2 is there (+ the marker); no
     * later step and nothing later. */
    assert_int_equal(count_named(cut, "X", "Step 1"), 1);
    assert_int_equal(count_named(cut, "X", "Step 2"), 0);
    assert_int_equal(count_before(cut, 2 * STEP_US), count_before(full, 2 * STEP_US));
    assert_int_equal(count_before(cut, INT64_MAX / US / 2), count_before(full, 2 * STEP_US) + 1);
    check_nesting(cut);
    check_flows(cut);
    assert_non_null(thread_name(cut, pid_of(cut, "Overlap Analysis"), 3));
    cJSON_Delete(full);
    cJSON_Delete(cut);
}

/* Over the limit after the last step with events still to come: those are cut, and the
 * marker says so rather than claiming later steps. */
static void test_limit_after_last_step(void **state)
{
    fixture_t *f = *state;
    cJSON *root;
    build(f);
    f->st.n = 1;
    f->c.timeline_limit_bytes = 1;
    nnpt_log_capture();
    write_timeline(f);
    assert_non_null(strstr(nnpt_log_text(), "events after the last step omitted"));
    nnpt_log_release();
    root = load(f);
    assert_int_equal(count_named(root, "X", "Step 1"), 1);
    assert_int_equal(count_named(root, "X", "late_kernel"), 0);
    assert_int_equal(count_before(root, INT64_MAX / US / 2), count_before(root, 2 * STEP_US) + 1);
    cJSON_Delete(root);
}

/* A limit the output stays under: no marker, no warning. */
static void test_limit_not_reached(void **state)
{
    fixture_t *f = *state;
    cJSON *root;
    char *text;
    build(f);
    f->c.timeline_limit_bytes = MAX_FILE;
    nnpt_log_capture();
    write_timeline(f);
    assert_int_equal(nnpt_log_count(), 0);
    nnpt_log_release();
    root = load(f);
    assert_int_equal(count_named(root, "X", "Step 3"), 1);
    cJSON_Delete(root);
    text = slurp(f, "trace_view.json");
    assert_null(strstr(text, "truncated"));
    nnp__free(text);
}

/* Without steps there is no boundary to cut at: written in full, with a warning. */
static void test_limit_without_steps(void **state)
{
    fixture_t *f = *state;
    cJSON *root;
    build(f);
    f->st.n = 0;
    f->c.timeline_limit_bytes = 1;
    nnpt_log_capture();
    write_timeline(f);
    assert_non_null(strstr(nnpt_log_text(), "no steps to cut at"));
    nnpt_log_release();
    root = load(f);
    assert_int_equal(count_named(root, "X", "Conv2D-op1"), N_STEPS);
    assert_int_equal(count_named(root, "X", "Step 1"), 0);
    assert_true(pid_of(root, "Step Trace") < 0);
    check_nesting(root);
    cJSON_Delete(root);
}

/* --steps 2-2: the step trace holds step 2 only, and only its events are written. */
static void test_step_filter(void **state)
{
    fixture_t *f = *state;
    cJSON *root;
    build(f);
    f->rows[0] = f->rows[1];
    f->st.n = 1;
    f->c.has_steps = true;
    f->c.step_first = f->c.step_last = 2;
    write_timeline(f);
    root = load(f);
    assert_int_equal(count_named(root, "X", "Step 2"), 1);
    assert_int_equal(count_named(root, "X", "Step 1") + count_named(root, "X", "Step 3"), 0);
    assert_int_equal(count_named(root, "X", "Init-op0"), 0);
    assert_int_equal(count_named(root, "X", "late_kernel"), 0);
    assert_int_equal(count_named(root, "X", "Conv2D-op1"), 1);
    assert_int_equal(count_before(root, 2 * STEP_US), 0);
    assert_int_equal(check_flows(root), FLOWS_PER_STEP);
    cJSON_Delete(root);
}

/* Pretty and compact outputs hold the same events; pretty puts each event on its own
 * line (docs/OUTPUTS.md). */
static void test_pretty_and_compact(void **state)
{
    fixture_t *f = *state;
    cJSON *compact, *pretty;
    char *text;
    build(f);
    write_timeline(f);
    compact = load(f);
    f->c.pretty = true;
    write_timeline(f);
    text = slurp(f, "trace_view.json");
    assert_non_null(strstr(text, "[\n  {\"name\":"));
    assert_non_null(strstr(text, "},\n  {\"name\":"));
    assert_null(strstr(text, "},{"));
    nnp__free(text);
    pretty = load(f);
    assert_int_equal(cJSON_GetArraySize(compact), cJSON_GetArraySize(pretty));
    assert_true(cJSON_Compare(compact, pretty, true));
    check_nesting(pretty);
    cJSON_Delete(compact);
    cJSON_Delete(pretty);
}

static void test_summary(void **state)
{
    fixture_t *f = *state;
    char *text;
    cJSON *s;
    build(f);
    f->c.rank = 3;
    write_timeline(f);
    text = slurp(f, "timeline_summary_3.json");
    s = cJSON_Parse(text);
    nnp__free(text);
    assert_non_null(s);
    /* Kernels per step: 300 + 10 + 10 + 400 + 200 + 250 us = 1.17 ms; plus late 0.1 ms. */
    assert_true(fabs(nget(s, "total_time") - (N_STEPS * 1.17 + 0.1)) < 1e-9);
    assert_true(nget(s, "num_of_streams") == 3); /* dev0 streams 7 and 8, dev1 stream 0 */
    /* ops: 1 + 4 per step + 1; kernels: 1 + 6 per step */
    assert_true(nget(s, "op_exe_times") == 2 + 4 * N_STEPS + 1 + 6 * N_STEPS);
    /* names: Init, Conv2D, ReLU, Add, GetNext, Exact + late, conv, relu, conv_tail, kb1,
     * kb2, nccl */
    assert_true(nget(s, "num_of_ops") == 13);
    assert_true(nget(s, "max_scope_name_num") == 3);
    cJSON_Delete(s);
}

/* An empty model still gives a valid file: metadata only. */
static void test_empty_model(void **state)
{
    fixture_t *f = *state;
    cJSON *root;
    assert_int_equal(nnp__model_finish(&f->m), NNP_OK);
    assert_int_equal(nnp__timeline_write(&f->c, NULL, NULL), NNP_OK);
    root = load(f);
    assert_true(pid_of(root, "Host") == RUN_PID);
    assert_true(pid_of(root, "Overlap Analysis") < 0);
    cJSON_Delete(root);
}

static void test_write_errors(void **state)
{
    fixture_t *f = *state;
    char missing[PATH_BUF];
    build(f);
    snprintf(missing, sizeof(missing), "%s/no/such/dir", f->dir);
    f->c.rank_dir = missing;
    assert_true(nnp__timeline_write(&f->c, &f->st, &f->ov) < 0);
    f->c.rank_dir = f->dir;
    f->c.out_dir = missing;
    assert_true(nnp__timeline_write(&f->c, &f->st, &f->ov) < 0);
    f->c.out_dir = NULL;
    assert_int_equal(nnp__timeline_write(&f->c, &f->st, &f->ov), NNP_EINVAL);
}

/* Every allocation may fail: an error comes back (never a crash or a leak under ASan) and
 * no temporary file stays behind. */
static void test_alloc_failures(void **state)
{
    fixture_t *f = *state;
    int rc = NNP_ENOMEM;
    uint64_t nth;
    cJSON *root;
    build(f);
    for (nth = 1; nth < MAX_FAIL_AT && rc != NNP_OK; nth++) {
        nnp__alloc_fail_at(nth);
        rc = nnp__timeline_write(&f->c, &f->st, &f->ov);
        nnp__alloc_fail_at(0);
        if (rc != NNP_OK)
            assert_int_equal(rc, NNP_ENOMEM);
    }
    assert_int_equal(rc, NNP_OK);
    assert_true(nth > 2);
    root = load(f);
    check_nesting(root);
    cJSON_Delete(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_processes_and_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nesting_and_overflow_lanes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_steps_and_phases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_broken_phase_moves_lane, setup, teardown),
        cmocka_unit_test_setup_teardown(test_op_and_range_events, setup, teardown),
        cmocka_unit_test_setup_teardown(test_developer_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_counters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_overlap_slices, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limit_cuts_at_step_boundary, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limit_after_last_step, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limit_not_reached, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limit_without_steps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_step_filter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pretty_and_compact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_summary, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_model, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alloc_failures, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
