/* cpu.c - CPU utilisation (issue #4): the machine (/proc/stat), this process and each data
 * pipeline op (its worker threads, named "...(id=<op_id>)..."), from the cumulative
 * counters the sampler records, over time and averaged. Writes MindSpore's
 * minddata_cpu_utilization_{rank}.json plus an "average" block, fills the CPU findings, and
 * gives pipeline.c the per-op CPU its bottleneck rules use (nnp__cpu_op_pct). Definitions:
 * docs/OUTPUTS.md, "CPU utilisation". */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "util/json_writer.h"

#define PERCENT   100.0
#define NS_PER_S  1e9
#define NS_PER_US 1000
/* Utilisation percentages carry 2 decimals, like the rounding of MindSpore's analyser
 * (minddata_analyzer.py rounds every percentage to 2 places). */
#define PCT_DECIMALS 2
/* Times in ms with 3 decimals: whole microseconds, printed from integers. */
#define MS_DECIMALS 3
#define US_PER_MS   1000
/* USER_HZ, the unit of /proc utime/stime, is 100 on every Linux architecture we target;
 * used only when the run did not record sysconf(_SC_CLK_TCK). */
#define DEFAULT_CLOCK_TICKS 100
/* The thread-name convention linking a worker thread to its pipeline op (docs/OUTPUTS.md):
 * nnp_thread_register("MapOp(id=2) worker 0"). */
#define OP_ID_TAG "(id="
/* Value of an average with no data, as MindSpore's summary writes for "no value". */
#define NO_VALUE (-1.0)
/* Room for a formatted number. */
#define NUM_BUF 48

/* ---- the thread -> op link and per-op CPU ---- */

/* The op id in a thread name "...(id=<op_id>)...": false when the name carries none. */
static bool thread_op(const char *name, int64_t *op_id)
{
    for (const char *p = strstr(name, OP_ID_TAG); p; p = strstr(p + 1, OP_ID_TAG)) {
        const char *q = p + strlen(OP_ID_TAG);
        bool neg = *q == '-';
        int64_t v = 0;
        int digits = 0;
        if (neg)
            q++;
        /* At most 18 digits: always fits int64 without overflow checks. */
        for (; *q >= '0' && *q <= '9' && digits < 18; q++, digits++)
            v = v * 10 + (*q - '0');
        if (digits > 0 && *q == ')') {
            *op_id = neg ? -v : v;
            return true;
        }
    }
    return false;
}

static int64_t ticks_per_sec(const nnp_model_t *m)
{
    return m->info.clock_ticks_per_sec > 0 ? m->info.clock_ticks_per_sec : DEFAULT_CLOCK_TICKS;
}

/* CPUs of the machine; 1 when the run did not say (utilisation is then of one CPU). */
static int ncpu_of(const nnp_model_t *m)
{
    return m->info.ncpu > 0 ? m->info.ncpu : 1;
}

/* One consecutive pair of samples of one thread of an op: (a, b] and its tick deltas. */
typedef void (*pair_fn)(void *arg, int64_t a_ns, int64_t b_ns, uint64_t du, uint64_t ds);

typedef struct tid_last {
    uint64_t tid;
    int64_t ts_ns;
    uint64_t utime, stime;
} tid_last_t;

/* Calls fn for every consecutive pair of samples of every thread linked to op_id. A pair
 * whose time does not advance or whose counters go back (a reused tid) only resets the
 * thread's baseline: a new thread's first sample is a baseline, as in MindSpore's
 * sampler (cpu_sampler.cc computes utilisation from the second sample on). */
static int op_pairs(const nnp_model_t *m, int64_t op_id, pair_fn fn, void *arg)
{
    const nnp_task_samples_t *t = &m->task_cpu;
    tid_last_t *last = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < t->t.n; i++) {
        int64_t id;
        size_t k;
        if (t->tid[i] == 0 || !thread_op(nnp__model_str(m, t->name[i]), &id) || id != op_id)
            continue;
        for (k = 0; k < n && last[k].tid != t->tid[i]; k++)
            ;
        if (k == n) {
            if (n == cap) {
                size_t nc = cap ? cap * 2 : 16;
                tid_last_t *nl = nnp__realloc(last, nc * sizeof(*nl));
                if (!nl) {
                    nnp__free(last);
                    return nnp__fail(NNP_ENOMEM, "out of memory in CPU utilisation");
                }
                last = nl;
                cap = nc;
            }
            last[n++].tid = t->tid[i];
        } else if (t->ts_ns[i] > last[k].ts_ns && t->utime[i] >= last[k].utime &&
                   t->stime[i] >= last[k].stime) {
            fn(arg, last[k].ts_ns, t->ts_ns[i], t->utime[i] - last[k].utime,
               t->stime[i] - last[k].stime);
        }
        last[k].ts_ns = t->ts_ns[i];
        last[k].utime = t->utime[i];
        last[k].stime = t->stime[i];
    }
    nnp__free(last);
    return NNP_OK;
}

/* Ticks and sampled spans of one op, for its average. */
typedef struct op_sum {
    uint64_t du, ds;
    nnp_interval_t *spans;
    size_t n, cap;
    bool oom;
} op_sum_t;

static void sum_pair(void *arg, int64_t a, int64_t b, uint64_t du, uint64_t ds)
{
    op_sum_t *s = arg;
    if (s->oom)
        return;
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 64;
        nnp_interval_t *ns = nnp__realloc(s->spans, nc * sizeof(*ns));
        if (!ns) {
            s->oom = true;
            return;
        }
        s->spans = ns;
        s->cap = nc;
    }
    s->spans[s->n++] = (nnp_interval_t){a, b};
    s->du += du;
    s->ds += ds;
}

static int cmp_interval(const void *a, const void *b)
{
    const nnp_interval_t *x = a, *y = b;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return (x->end_ns > y->end_ns) - (x->end_ns < y->end_ns);
}

/* Length of the union of the spans: the wall time during which the op had at least one
 * sampled worker, so workers sampled side by side do not count their time twice. */
static int64_t union_ns(nnp_interval_t *v, size_t n)
{
    int64_t total = 0, s, e;
    if (n == 0)
        return 0;
    qsort(v, n, sizeof(*v), cmp_interval);
    s = v[0].start_ns;
    e = v[0].end_ns;
    for (size_t i = 1; i < n; i++) {
        if (v[i].start_ns > e) {
            total += e - s;
            s = v[i].start_ns;
        }
        if (v[i].end_ns > e)
            e = v[i].end_ns;
    }
    return total + (e - s);
}

/* The op's ticks over its sampled wall time. */
static int op_sum(const nnp_model_t *m, int64_t op_id, op_sum_t *s, int64_t *span_ns)
{
    int rc;
    memset(s, 0, sizeof(*s));
    rc = op_pairs(m, op_id, sum_pair, s);
    if (rc == NNP_OK && s->oom)
        rc = nnp__fail(NNP_ENOMEM, "out of memory in CPU utilisation");
    *span_ns = rc == NNP_OK ? union_ns(s->spans, s->n) : 0;
    nnp__free(s->spans);
    s->spans = NULL;
    return rc;
}

/* Per-op CPU in percent of ONE CPU (the unit of MindSpore's avg_cpu_pct and of its 75% /
 * 20% per-worker thresholds): the ticks (utime + stime) its worker threads used between
 * consecutive samples, over the wall time those samples span. -1 when no worker thread
 * of the op has two samples. */
int nnp__cpu_op_pct(const nnp_model_t *m, int64_t op_id, double *pct)
{
    op_sum_t s = {0, 0, NULL, 0, 0, false};
    int64_t span;
    int rc = op_sum(m, op_id, &s, &span);
    *pct = NO_VALUE;
    if (rc == NNP_OK && span > 0)
        *pct =
            (double)(s.du + s.ds) / (double)ticks_per_sec(m) / ((double)span / NS_PER_S) * PERCENT;
    return rc;
}

/* ---- the sampling rounds and their series ---- */

/* Every distinct sample time of the machine and task series, in order. Entry k > 0 of
 * each per-sample array is the interval (round k-1, round k]. */
typedef struct rounds {
    int64_t *ts;
    size_t n;
} rounds_t;

static int rounds_build(const nnp_model_t *m, rounds_t *r)
{
    const int64_t *a = m->sys_cpu.ts_ns, *b = m->task_cpu.ts_ns;
    size_t na = m->sys_cpu.t.n, nb = m->task_cpu.t.n, i = 0, j = 0;
    r->n = 0;
    r->ts = NULL;
    if (na + nb == 0)
        return NNP_OK;
    r->ts = nnp__malloc((na + nb) * sizeof(int64_t));
    if (!r->ts)
        return nnp__fail(NNP_ENOMEM, "out of memory in CPU utilisation");
    /* Both tables are in time order (nnp__model_finish): a merge without duplicates. */
    while (i < na || j < nb) {
        int64_t v = j >= nb || (i < na && a[i] <= b[j]) ? a[i++] : b[j++];
        if (r->n == 0 || r->ts[r->n - 1] != v)
            r->ts[r->n++] = v;
    }
    return NNP_OK;
}

/* The round index of a sample time (it is always one of the rounds). */
static size_t round_of(const rounds_t *r, int64_t ts)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->ts[mid] < ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Median gap between rounds: the sampling interval as run, not as configured, so it is
 * right for imported data too. Lower median for an even count. */
static int median_gap(const rounds_t *r, int64_t *out)
{
    int64_t *g = nnp__malloc((r->n - 1) * sizeof(int64_t));
    if (!g)
        return nnp__fail(NNP_ENOMEM, "out of memory in CPU utilisation");
    for (size_t k = 1; k < r->n; k++)
        g[k - 1] = r->ts[k] - r->ts[k - 1];
    qsort(g, r->n - 1, sizeof(int64_t), cmp_i64);
    *out = g[(r->n - 2) / 2];
    nnp__free(g);
    return NNP_OK;
}

/* Machine series: user, sys, iowait, idle percent of the total jiffies, runnable
 * processes and context switches, per interval; plus the sums behind the averages. */
enum { DEV_USER, DEV_SYS, DEV_IO, DEV_IDLE, DEV_PCT_COUNT };

typedef struct series {
    size_t n; /* intervals: rounds - 1 */
    double *dev[DEV_PCT_COUNT];
    uint64_t *running, *ctxt;
    double *proc_user, *proc_sys;
    double *op_user, *op_sys; /* the current op's, reused op after op */
    /* averages */
    uint64_t dev_sum[DEV_PCT_COUNT], dev_total, dev_running, dev_ctxt;
    size_t dev_pairs;
    uint64_t proc_du, proc_ds;
    int64_t proc_span_ns;
} series_t;

static void series_fini(series_t *s)
{
    for (int k = 0; k < DEV_PCT_COUNT; k++)
        nnp__free(s->dev[k]);
    nnp__free(s->running);
    nnp__free(s->ctxt);
    nnp__free(s->proc_user);
    nnp__free(s->proc_sys);
    nnp__free(s->op_user);
    nnp__free(s->op_sys);
}

static int series_init(series_t *s, size_t n)
{
    bool ok = true;
    memset(s, 0, sizeof(*s));
    s->n = n;
    for (int k = 0; k < DEV_PCT_COUNT; k++)
        ok = (s->dev[k] = nnp__calloc(n, sizeof(double))) != NULL && ok;
    ok = (s->running = nnp__calloc(n, sizeof(uint64_t))) != NULL && ok;
    ok = (s->ctxt = nnp__calloc(n, sizeof(uint64_t))) != NULL && ok;
    ok = (s->proc_user = nnp__calloc(n, sizeof(double))) != NULL && ok;
    ok = (s->proc_sys = nnp__calloc(n, sizeof(double))) != NULL && ok;
    ok = (s->op_user = nnp__calloc(n, sizeof(double))) != NULL && ok;
    ok = (s->op_sys = nnp__calloc(n, sizeof(double))) != NULL && ok;
    return ok ? NNP_OK : nnp__fail(NNP_ENOMEM, "out of memory in CPU utilisation");
}

/* The jiffies of a /proc/stat sample. All fields count: user, nice, sys, idle, iowait,
 * irq+softirq, steal, the same total the timeline's CPU counter uses (docs/OUTPUTS.md). */
static uint64_t sys_total(const nnp_cpu_samples_t *c, size_t i)
{
    return c->user[i] + c->nice[i] + c->sys[i] + c->idle[i] + c->iowait[i] + c->irq[i] +
           c->steal[i];
}

/* Machine utilisation as MindSpore's SystemCpuInfo computes it (cpu_sampler.cc): the
 * increase of each counter over the increase of the total between consecutive samples,
 * x 100. A pair in which the total does not grow or a counter goes back is skipped. */
static void device_series(const nnp_model_t *m, const rounds_t *r, series_t *s)
{
    const nnp_cpu_samples_t *c = &m->sys_cpu;
    for (size_t i = 1; i < c->t.n; i++) {
        uint64_t d[DEV_PCT_COUNT], tot, t0 = sys_total(c, i - 1), t1 = sys_total(c, i);
        size_t k;
        if (c->ts_ns[i] <= c->ts_ns[i - 1] || t1 <= t0 || c->user[i] < c->user[i - 1] ||
            c->sys[i] < c->sys[i - 1] || c->iowait[i] < c->iowait[i - 1] ||
            c->idle[i] < c->idle[i - 1])
            continue;
        tot = t1 - t0;
        d[DEV_USER] = c->user[i] - c->user[i - 1];
        d[DEV_SYS] = c->sys[i] - c->sys[i - 1];
        d[DEV_IO] = c->iowait[i] - c->iowait[i - 1];
        d[DEV_IDLE] = c->idle[i] - c->idle[i - 1];
        k = round_of(r, c->ts_ns[i]) - 1;
        for (int f = 0; f < DEV_PCT_COUNT; f++) {
            s->dev[f][k] = (double)d[f] / (double)tot * PERCENT;
            s->dev_sum[f] += d[f];
        }
        s->dev_total += tot;
        s->running[k] = c->running[i];
        s->ctxt[k] = c->ctxt[i] >= c->ctxt[i - 1] ? c->ctxt[i] - c->ctxt[i - 1] : 0;
        s->dev_running += c->running[i];
        s->dev_ctxt += s->ctxt[k];
        s->dev_pairs++;
    }
}

/* Ticks of the interval (a, b] as percent of all CPUs: ticks / (seconds x ticks per
 * second x CPUs) x 100. */
static double task_pct(const nnp_model_t *m, uint64_t ticks, int64_t a, int64_t b)
{
    return (double)ticks /
           ((double)(b - a) / NS_PER_S * (double)ticks_per_sec(m) * (double)ncpu_of(m)) * PERCENT;
}

/* The whole process (task rows with tid 0), in percent of all CPUs. */
static void process_series(const nnp_model_t *m, const rounds_t *r, series_t *s)
{
    const nnp_task_samples_t *t = &m->task_cpu;
    size_t prev = SIZE_MAX;
    for (size_t i = 0; i < t->t.n; i++) {
        if (t->tid[i] != 0)
            continue;
        if (prev != SIZE_MAX && t->ts_ns[i] > t->ts_ns[prev] && t->utime[i] >= t->utime[prev] &&
            t->stime[i] >= t->stime[prev]) {
            uint64_t du = t->utime[i] - t->utime[prev], ds = t->stime[i] - t->stime[prev];
            size_t k = round_of(r, t->ts_ns[i]) - 1;
            s->proc_user[k] = task_pct(m, du, t->ts_ns[prev], t->ts_ns[i]);
            s->proc_sys[k] = task_pct(m, ds, t->ts_ns[prev], t->ts_ns[i]);
            s->proc_du += du;
            s->proc_ds += ds;
            s->proc_span_ns += t->ts_ns[i] - t->ts_ns[prev];
        }
        prev = i;
    }
}

/* An op's threads: each pair adds its rate over its own span to the round it ends in, so
 * a thread that missed a round still counts at its true rate. */
typedef struct op_acc {
    const nnp_model_t *m;
    const rounds_t *r;
    series_t *s;
} op_acc_t;

static void acc_pair(void *arg, int64_t a, int64_t b, uint64_t du, uint64_t ds)
{
    op_acc_t *x = arg;
    size_t k = round_of(x->r, b) - 1;
    x->s->op_user[k] += task_pct(x->m, du, a, b);
    x->s->op_sys[k] += task_pct(x->m, ds, a, b);
}

/* ---- writing ---- */

static const char *fmt_pct(char *b, size_t cap, double v)
{
    if (v < 0)
        snprintf(b, cap, "%d", (int)NO_VALUE);
    else
        snprintf(b, cap, "%.*f", PCT_DECIMALS, v);
    return b;
}

/* ns as ms with 3 decimals (whole microseconds, truncated). */
static const char *fmt_ms(char *b, size_t cap, int64_t ns)
{
    int64_t us = ns / NS_PER_US;
    uint64_t a = us < 0 ? (uint64_t)0 - (uint64_t)us : (uint64_t)us;
    snprintf(b, cap, "%s%" PRIu64 ".%0*" PRIu64, us < 0 ? "-" : "", a / US_PER_MS, MS_DECIMALS,
             a % US_PER_MS);
    return b;
}

static void pct_array(nnp_jw_t *w, const char *key, const double *v, size_t n)
{
    char b[NUM_BUF];
    nnp__jw_key(w, key);
    nnp__jw_arr_begin(w);
    for (size_t k = 0; k < n; k++)
        nnp__jw_raw(w, fmt_pct(b, sizeof(b), v[k]));
    nnp__jw_arr_end(w);
}

static void u64_array(nnp_jw_t *w, const char *key, const uint64_t *v, size_t n)
{
    nnp__jw_key(w, key);
    nnp__jw_arr_begin(w);
    for (size_t k = 0; k < n; k++)
        nnp__jw_uint(w, v[k]);
    nnp__jw_arr_end(w);
}

static void pct_key(nnp_jw_t *w, const char *key, double v)
{
    char b[NUM_BUF];
    nnp__jw_key(w, key);
    nnp__jw_raw(w, fmt_pct(b, sizeof(b), v));
}

/* The pipeline ops, by id, each once (an op registered again keeps one entry). */
static int op_ids(const nnp_model_t *m, int64_t **out, size_t *n_out)
{
    size_t n = m->pipe_ops.t.n, k = 0;
    int64_t *v;
    *out = NULL;
    *n_out = 0;
    if (n == 0)
        return NNP_OK;
    v = nnp__malloc(n * sizeof(int64_t));
    if (!v)
        return nnp__fail(NNP_ENOMEM, "out of memory in CPU utilisation");
    memcpy(v, m->pipe_ops.op_id, n * sizeof(int64_t));
    qsort(v, n, sizeof(int64_t), cmp_i64);
    for (size_t i = 0; i < n; i++)
        if (k == 0 || v[k - 1] != v[i])
            v[k++] = v[i];
    *out = v;
    *n_out = k;
    return NNP_OK;
}

/* Averages over the whole run: ratios of summed deltas (time-weighted), -1 without data. */
typedef struct op_avg {
    double user, sys;
} op_avg_t;

static void write_device(nnp_jw_t *w, const series_t *s)
{
    static const char *const keys[DEV_PCT_COUNT] = {"user_utilization", "sys_utilization",
                                                    "io_utilization", "idle_utilization"};
    nnp__jw_key(w, "device_info");
    nnp__jw_obj_begin(w);
    for (int f = 0; f < DEV_PCT_COUNT; f++)
        pct_array(w, keys[f], s->dev[f], s->n);
    u64_array(w, "runable_processes", s->running, s->n);
    u64_array(w, "context_switch_count", s->ctxt, s->n);
    nnp__jw_obj_end(w);
}

static void write_averages(nnp_jw_t *w, const nnp_model_t *m, const series_t *s, const int64_t *ids,
                           const op_avg_t *avg, size_t n_ops)
{
    static const char *const keys[DEV_PCT_COUNT] = {"user_utilization", "sys_utilization",
                                                    "io_utilization", "idle_utilization"};
    char b[NUM_BUF];
    nnp__jw_key(w, "average");
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "device_info");
    nnp__jw_obj_begin(w);
    for (int f = 0; f < DEV_PCT_COUNT; f++)
        pct_key(w, keys[f],
                s->dev_total ? (double)s->dev_sum[f] / (double)s->dev_total * PERCENT : NO_VALUE);
    pct_key(w, "runable_processes",
            s->dev_pairs ? (double)s->dev_running / (double)s->dev_pairs : NO_VALUE);
    pct_key(w, "context_switch_count",
            s->dev_pairs ? (double)s->dev_ctxt / (double)s->dev_pairs : NO_VALUE);
    nnp__jw_obj_end(w);
    nnp__jw_key(w, "process_info");
    nnp__jw_obj_begin(w);
    pct_key(w, "user_utilization",
            s->proc_span_ns ? task_pct(m, s->proc_du, 0, s->proc_span_ns) : NO_VALUE);
    pct_key(w, "sys_utilization",
            s->proc_span_ns ? task_pct(m, s->proc_ds, 0, s->proc_span_ns) : NO_VALUE);
    nnp__jw_obj_end(w);
    nnp__jw_key(w, "op_info");
    nnp__jw_arr_begin(w);
    for (size_t i = 0; i < n_ops; i++) {
        nnp__jw_obj_begin(w);
        nnp__jw_key(w, "op_id");
        nnp__jw_int(w, ids[i]);
        nnp__jw_key(w, "metrics");
        nnp__jw_obj_begin(w);
        nnp__jw_key(w, "user_utilization");
        nnp__jw_raw(w, fmt_pct(b, sizeof(b), avg[i].user));
        nnp__jw_key(w, "sys_utilization");
        nnp__jw_raw(w, fmt_pct(b, sizeof(b), avg[i].sys));
        nnp__jw_obj_end(w);
        nnp__jw_obj_end(w);
    }
    nnp__jw_arr_end(w);
    nnp__jw_obj_end(w);
}

/* One op's per-interval series and average. */
static int op_series(const nnp_model_t *m, const rounds_t *r, series_t *s, int64_t id,
                     op_avg_t *avg)
{
    op_acc_t x = {m, r, s};
    op_sum_t sum = {0, 0, NULL, 0, 0, false};
    int64_t span;
    int rc;
    memset(s->op_user, 0, s->n * sizeof(double));
    memset(s->op_sys, 0, s->n * sizeof(double));
    rc = op_pairs(m, id, acc_pair, &x);
    if (rc == NNP_OK)
        rc = op_sum(m, id, &sum, &span);
    avg->user = avg->sys = NO_VALUE;
    if (rc == NNP_OK && span > 0) {
        avg->user = task_pct(m, sum.du, 0, span);
        avg->sys = task_pct(m, sum.ds, 0, span);
    }
    return rc;
}

static int write_json(const nnp_actx_t *c, const rounds_t *r, series_t *s, int64_t interval_ns,
                      const int64_t *ids, op_avg_t *avg, size_t n_ops)
{
    const nnp_model_t *m = c->m;
    nnp_outfile_t f;
    nnp_jw_t w;
    char name[NNP_PATH_MAX], b[NUM_BUF];
    int rc;
    snprintf(name, sizeof(name), "minddata_cpu_utilization_%d.json", c->rank);
    rc = nnp__out_open(&f, c->out_dir, name);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__jw_init(&w, f.fd, c->pretty, 0);
    if (rc != NNP_OK) {
        nnp__jw_fini(&w);
        return nnp__out_commit(&f, rc);
    }
    nnp__jw_obj_begin(&w);
    nnp__jw_key(&w, "sampling_interval");
    nnp__jw_raw(&w, fmt_ms(b, sizeof(b), interval_ns));
    nnp__jw_key(&w, "cpu_processor_num");
    nnp__jw_int(&w, ncpu_of(m));
    nnp__jw_key(&w, "time_stamp");
    nnp__jw_arr_begin(&w);
    for (size_t k = 1; k < r->n; k++)
        nnp__jw_raw(&w, fmt_ms(b, sizeof(b), r->ts[k]));
    nnp__jw_arr_end(&w);
    write_device(&w, s);
    nnp__jw_key(&w, "process_info");
    nnp__jw_obj_begin(&w);
    pct_array(&w, "user_utilization", s->proc_user, s->n);
    pct_array(&w, "sys_utilization", s->proc_sys, s->n);
    nnp__jw_obj_end(&w);
    nnp__jw_key(&w, "op_info");
    nnp__jw_arr_begin(&w);
    for (size_t i = 0; i < n_ops && rc == NNP_OK; i++) {
        rc = op_series(m, r, s, ids[i], &avg[i]);
        nnp__jw_obj_begin(&w);
        nnp__jw_key(&w, "op_id");
        nnp__jw_int(&w, ids[i]);
        nnp__jw_key(&w, "metrics");
        nnp__jw_obj_begin(&w);
        pct_array(&w, "user_utilization", s->op_user, s->n);
        pct_array(&w, "sys_utilization", s->op_sys, s->n);
        nnp__jw_obj_end(&w);
        nnp__jw_obj_end(&w);
    }
    nnp__jw_arr_end(&w);
    if (rc == NNP_OK)
        write_averages(&w, m, s, ids, avg, n_ops);
    nnp__jw_obj_end(&w);
    nnp__jw_line_end(&w);
    if (rc == NNP_OK)
        rc = nnp__jw_flush(&w);
    nnp__jw_fini(&w);
    return nnp__out_commit(&f, rc);
}

/* The machine and process averages the advisor reads (NAN where there is no data). */
static void fill_findings(const nnp_model_t *m, const series_t *s, nnp_findings_t *f)
{
    f->cpu_busy_pct = f->cpu_iowait_pct = f->process_cpu_pct = NAN;
    if (s->dev_total) {
        double idle = (double)s->dev_sum[DEV_IDLE] / (double)s->dev_total * PERCENT;
        f->cpu_iowait_pct = (double)s->dev_sum[DEV_IO] / (double)s->dev_total * PERCENT;
        f->cpu_busy_pct = PERCENT - idle - f->cpu_iowait_pct;
    }
    if (s->proc_span_ns)
        f->process_cpu_pct = task_pct(m, s->proc_du + s->proc_ds, 0, s->proc_span_ns);
}

/* Writes minddata_cpu_utilization_{rank}.json when the run has at least two sampling
 * rounds (one interval); otherwise writes nothing and leaves the findings as they are. */
int nnp__cpu_write(const nnp_actx_t *c, nnp_findings_t *f)
{
    const nnp_model_t *m = c->m;
    rounds_t r = {NULL, 0};
    series_t s;
    int64_t *ids = NULL, interval_ns = 0;
    op_avg_t *avg = NULL;
    size_t n_ops = 0;
    int rc = rounds_build(m, &r);
    if (rc != NNP_OK || r.n < 2) {
        nnp__free(r.ts);
        return rc;
    }
    rc = series_init(&s, r.n - 1);
    if (rc == NNP_OK)
        rc = median_gap(&r, &interval_ns);
    if (rc == NNP_OK)
        rc = op_ids(m, &ids, &n_ops);
    if (rc == NNP_OK && n_ops) {
        avg = nnp__calloc(n_ops, sizeof(*avg));
        if (!avg)
            rc = nnp__fail(NNP_ENOMEM, "out of memory in CPU utilisation");
    }
    if (rc == NNP_OK) {
        device_series(m, &r, &s);
        process_series(m, &r, &s);
        fill_findings(m, &s, f);
        rc = write_json(c, &r, &s, interval_ns, ids, avg, n_ops);
    }
    nnp__free(avg);
    nnp__free(ids);
    series_fini(&s);
    nnp__free(r.ts);
    return rc;
}
