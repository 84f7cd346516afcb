/* pipeline.c - data pipeline analysis (issue #4): the ops graph, queue usage of every
 * connector, empty/full frequency of the host and device queues, per-op CPU (cpu.c), and
 * the bottleneck verdict of MindSpore's BottleneckAnalyzer and MindInsight's device-queue
 * rule with the suggestions of the seed's tutorial. Writes minddata_pipeline_raw_{rank}.csv
 * and minddata_pipeline_summary_{rank}.json/.csv and fills the pipeline findings. Called
 * once per rank by the analyse driver. Rules and units: docs/OUTPUTS.md, "Data pipeline". */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "util/csv_writer.h"
#include "util/json_writer.h"

#define PERCENT 100.0
/* MindSpore's "no value" in the summary (minddata_analyzer.py: queue metrics of an op
 * without a queue, per_push_queue_time without a device trace, ...). */
#define NO_VALUE (-1.0)
/* Percentages and sizes are rounded to 2 decimals before the rules compare them, as
 * minddata_analyzer.py does, so a printed value never contradicts a verdict. */
#define PCT_SCALE    100.0
#define PCT_DECIMALS 2
/* Times in ms with 3 decimals: minddata_analyzer.py rounds per_batch_time to 3. */
#define NS_PER_US   1000
#define US_PER_MS   1000
#define MS_DECIMALS 3
/* MindSpore BottleneckAnalyzer thresholds (minddata_analyzer.py, formats.md 2.4). */
#define CPU_PER_WORKER_HIGH_PCT 75.0 /* above: the op wants more workers */
#define CPU_PER_WORKER_LOW_PCT  20.0 /* below, with > 1 worker: more workers won't help */
#define LEAF_QUEUE_LOW_PCT      50.0 /* leaf output queue used below this: I/O bound */
#define DEVICE_INPUT_EMPTY_PCT  60.0 /* DeviceQueue input empty above this: host too slow */
#define QUEUE_GAP_PCT           50.0 /* input minus output usage above this: child outpaces */
#define IN_QUEUE_LOW_PCT        10.0 /* input queue used below this: starved */
/* MindInsight (minddata_analyser.py, DEVICE_QUEUE_EMPTY_WARNING_THRESHOLD 0.3): the device
 * queue empty in more than 30% of batches is a data_process warning. */
#define DEVICE_EMPTY_WARNING_PCT 30
/* A trailing "Op" is dropped from op types for op_names, as MindSpore's op_type[0:-2]. */
#define OP_SUFFIX "Op"
/* Text of one analysis message, and of the op labels "Map(id=2)". */
#define TEXT_MAX  NNP_FINDINGS_TEXT
#define LABEL_MAX (NNP_NAME_MAX + 32)
/* Hard cap of one output_queue_size cell (curl dynbuf "toobig"); a longer list ends with
 * "...]" so one queue sampled for days cannot exhaust memory. */
#define LIST_MAX_BYTES (64u << 20)
#define NUM_BUF        48
/* The raw CSV's queue columns: size list, average size, length, usage rate. */
#define RAW_QUEUE_COLS 4

/* Ops MindSpore's analyzer skips: they run on one thread, so worker advice is moot. */
static const char *const SINGLE_THREADED[] = {"Barrier", "Concat", "EpochCtrl", "Rename", "Repeat",
                                              "Shuffle", "Skip",   "Take",      "Zip"};

/* One pipeline op with what the analysis found for it. Percentages are -1 when unknown. */
typedef struct pop {
    int64_t id, parent;
    const char *type;        /* e.g. "MapOp" (the model's string) */
    char name[NNP_NAME_MAX]; /* "Map": MindSpore's op_names */
    char label[LABEL_MAX];   /* "Map(id=2)": MindSpore's pipeline_ops */
    uint32_t workers;
    size_t kid0, n_kids; /* children: kids[kid0 .. kid0 + n_kids), by id */
    size_t q0, qn;       /* connector samples: qrows[q0 .. q0 + qn), in time order */
    uint32_t capacity;   /* largest capacity sampled: the queue's length */
    size_t empty, full;
    uint64_t size_sum;
    int64_t interval_ns; /* median gap between samples, -1 with fewer than 2 */
    double avg_size, usage_pct, empty_pct, full_pct;
    double cpu_pct, cpu_per_worker; /* percent of one CPU */
    char cpu_msg[TEXT_MAX], queue_msg[TEXT_MAX];
} pop_t;

typedef struct pipe {
    const nnp_model_t *m;
    pop_t *ops; /* by id */
    size_t n;
    size_t *kids, *qrows, *order; /* order: the raw CSV's rows, breadth first from roots */
    /* the device queue (op_id -1) and all connectors pooled (the "host" queues) */
    size_t dq_n, dq_empty, dq_full, host_n, host_empty;
    int64_t dq_first_ns, dq_last_ns;
    char mi_msg[TEXT_MAX];
    size_t bottleneck; /* op index, SIZE_MAX when none */
    char reason[TEXT_MAX], advice[TEXT_MAX];
} pipe_t;

/* Records the message and returns NNP_ENOMEM (a constant, which static analysers follow). */
static int oom(void)
{
    (void)nnp__fail(NNP_ENOMEM, "out of memory in data pipeline analysis");
    return NNP_ENOMEM;
}

/* snprintf for messages: a label near NNP_NAME_MAX may cut a message at TEXT_MAX, which
 * is fine for text meant for people (and keeps -Wformat-truncation quiet). */
static void textf(char *dst, size_t cap, const char *fmt, ...) NNP_PRINTF(3, 4);
static void textf(char *dst, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, cap, fmt, ap);
    va_end(ap);
}

static double round2(double v)
{
    return v < 0 ? v : round(v * PCT_SCALE) / PCT_SCALE;
}

/* A percentage or size as written: 2 decimals, or MindSpore's -1 for "none". */
static const char *fmt_num(char *b, size_t cap, double v)
{
    if (v < 0)
        snprintf(b, cap, "%d", (int)NO_VALUE);
    else
        snprintf(b, cap, "%.*f", PCT_DECIMALS, v);
    return b;
}

/* ns as ms with 3 decimals (whole microseconds, truncated); -1 for none. */
static const char *fmt_ms(char *b, size_t cap, int64_t ns)
{
    if (ns < 0) {
        snprintf(b, cap, "%d", (int)NO_VALUE);
        return b;
    }
    snprintf(b, cap, "%" PRId64 ".%0*" PRId64, ns / NS_PER_US / US_PER_MS, MS_DECIMALS,
             ns / NS_PER_US % US_PER_MS);
    return b;
}

/* ---- a bounded growable text buffer ---- */
typedef struct dbuf {
    char *p;
    size_t len, cap;
    bool full; /* LIST_MAX_BYTES reached: further text dropped */
} dbuf_t;

/* Appends s. Unless forced, text that would pass LIST_MAX_BYTES is dropped and the buffer
 * marked full; forced text (a list's short closing) always goes in. */
static int dbuf_put(dbuf_t *d, const char *s, bool force)
{
    size_t n = strlen(s);
    if (!force && (d->full || d->len + n + 1 > LIST_MAX_BYTES)) {
        d->full = true;
        return NNP_OK;
    }
    if (d->len + n + 1 > d->cap) {
        size_t nc = d->cap ? d->cap : 256;
        char *np;
        while (nc < d->len + n + 1)
            nc *= 2;
        np = nnp__realloc(d->p, nc);
        if (!np)
            return oom();
        d->p = np;
        d->cap = nc;
    }
    memcpy(d->p + d->len, s, n + 1);
    d->len += n;
    return NNP_OK;
}

static void dbuf_reset(dbuf_t *d)
{
    d->len = 0;
    d->full = false;
}

/* ---- building the graph ---- */

/* The op index of an id (ops are sorted by id), SIZE_MAX when not registered. */
static size_t find_op(const pipe_t *p, int64_t id)
{
    size_t lo = 0, hi = p->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->ops[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->n && p->ops[lo].id == id ? lo : SIZE_MAX;
}

typedef struct reg {
    int64_t id;
    size_t row;
} reg_t;

/* By id, then by registration row, so the last registration of an id sorts last. */
static int cmp_reg(const void *a, const void *b)
{
    const reg_t *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* MindSpore's op name (type without a trailing "Op") and label "Name(id=N)". */
static void op_names(pop_t *o)
{
    size_t n = strlen(o->type), sl = strlen(OP_SUFFIX);
    if (n > sl && strcmp(o->type + n - sl, OP_SUFFIX) == 0)
        n -= sl;
    if (n >= sizeof(o->name))
        n = sizeof(o->name) - 1;
    memcpy(o->name, o->type, n);
    o->name[n] = '\0';
    textf(o->label, sizeof(o->label), "%s(id=%" PRId64 ")", o->name, o->id);
}

/* One op per id, by id. An op registered again keeps its last registration: MindSpore's
 * autotune changes num_workers during a run, and the latest value is the one in force. */
static int collect_ops(pipe_t *p)
{
    const nnp_pipe_ops_t *t = &p->m->pipe_ops;
    size_t distinct = 0;
    reg_t *r = nnp__malloc((t->t.n ? t->t.n : 1) * sizeof(reg_t));
    if (!r)
        return oom();
    for (size_t i = 0; i < t->t.n; i++)
        r[i] = (reg_t){t->op_id[i], i};
    qsort(r, t->t.n, sizeof(reg_t), cmp_reg);
    for (size_t i = 0; i < t->t.n; i++)
        distinct += i + 1 == t->t.n || r[i + 1].id != r[i].id;
    /* Sized by distinct ids (a pipeline registered every epoch has many rows), and
     * allocated even for none (device-queue samples only): never NULL after. */
    p->ops = nnp__calloc(distinct ? distinct : 1, sizeof(pop_t));
    if (!p->ops) {
        nnp__free(r);
        return oom();
    }
    for (size_t i = 0; i < t->t.n; i++) {
        pop_t *o;
        size_t row = r[i].row;
        if (i + 1 < t->t.n && r[i + 1].id == r[i].id)
            continue;
        o = &p->ops[p->n++];
        o->id = r[i].id;
        o->parent = t->parent_id[row];
        o->type = nnp__model_str(p->m, t->op_type[row]);
        o->workers = t->num_workers[row];
        op_names(o);
    }
    nnp__free(r);
    return NNP_OK;
}

/* Children of every op, grouped by parent and by id within a parent (counting sort). */
static int link_children(pipe_t *p)
{
    size_t *par = nnp__malloc((p->n ? p->n : 1) * sizeof(size_t));
    p->kids = nnp__malloc((p->n ? p->n : 1) * sizeof(size_t));
    if (!par || !p->kids) {
        nnp__free(par);
        return oom();
    }
    for (size_t i = 0; i < p->n; i++) {
        par[i] = find_op(p, p->ops[i].parent);
        if (par[i] != SIZE_MAX)
            p->ops[par[i]].n_kids++;
    }
    for (size_t i = 0, at = 0; i < p->n; i++) {
        p->ops[i].kid0 = at;
        at += p->ops[i].n_kids;
        p->ops[i].n_kids = 0;
    }
    for (size_t i = 0; i < p->n; i++)
        if (par[i] != SIZE_MAX) {
            pop_t *o = &p->ops[par[i]];
            p->kids[o->kid0 + o->n_kids++] = i;
        }
    nnp__free(par);
    return NNP_OK;
}

/* Rows of the raw CSV: breadth first from each root (parent -1 or not registered), roots
 * by id, as MindSpore's parser walks from op 0; ops caught in a parent cycle follow. */
static int bfs_order(pipe_t *p)
{
    bool *seen = nnp__calloc(p->n ? p->n : 1, sizeof(bool));
    size_t n = 0;
    p->order = nnp__malloc((p->n ? p->n : 1) * sizeof(size_t));
    if (!seen || !p->order) {
        nnp__free(seen);
        return oom();
    }
    for (int pass = 0; pass < 2; pass++) {
        for (size_t s = 0; s < p->n; s++) {
            size_t head = n;
            bool root = p->ops[s].parent == -1 || find_op(p, p->ops[s].parent) == SIZE_MAX;
            if (seen[s] || (pass == 0 && !root))
                continue;
            seen[s] = true;
            p->order[n++] = s;
            while (head < n) {
                const pop_t *o = &p->ops[p->order[head++]];
                for (size_t k = 0; k < o->n_kids; k++) {
                    size_t c = p->kids[o->kid0 + k];
                    if (!seen[c]) {
                        seen[c] = true;
                        p->order[n++] = c;
                    }
                }
            }
        }
    }
    nnp__free(seen);
    return NNP_OK;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Queue statistics. MindSpore's definitions (minddata_analyzer.py): average size over the
 * samples; usage = 100 x average / length; empty frequency = 100 x samples of size 0 /
 * samples. Full means size >= capacity (MindInsight counts size == capacity). */
static int queue_stats(pipe_t *p)
{
    const nnp_queue_samples_t *q = &p->m->queues;
    size_t *at = NULL;
    int64_t *gaps = NULL;
    int rc = NNP_OK;
    p->qrows = nnp__malloc((q->t.n ? q->t.n : 1) * sizeof(size_t));
    at = nnp__malloc((q->t.n ? q->t.n : 1) * sizeof(size_t));
    gaps = nnp__malloc((q->t.n ? q->t.n : 1) * sizeof(int64_t));
    if (!p->qrows || !at || !gaps) {
        rc = oom();
        goto out;
    }
    for (size_t i = 0; i < q->t.n; i++) {
        bool empty = q->size[i] == 0, full = q->capacity[i] && q->size[i] >= q->capacity[i];
        at[i] = SIZE_MAX;
        if (q->op_id[i] == -1) {
            if (p->dq_n++ == 0)
                p->dq_first_ns = q->ts_ns[i];
            p->dq_last_ns = q->ts_ns[i];
            p->dq_empty += empty;
            p->dq_full += full;
            continue;
        }
        p->host_n++;
        p->host_empty += empty;
        at[i] = find_op(p, q->op_id[i]);
        if (at[i] != SIZE_MAX) {
            pop_t *o = &p->ops[at[i]];
            o->qn++;
            o->size_sum += q->size[i];
            o->empty += empty;
            o->full += full;
            if (q->capacity[i] > o->capacity)
                o->capacity = q->capacity[i];
        }
    }
    for (size_t i = 0, s = 0; i < p->n; i++) {
        p->ops[i].q0 = s;
        s += p->ops[i].qn;
        p->ops[i].qn = 0;
    }
    for (size_t i = 0; i < q->t.n; i++)
        if (at[i] != SIZE_MAX) {
            pop_t *o = &p->ops[at[i]];
            p->qrows[o->q0 + o->qn++] = i;
        }
    for (size_t i = 0; i < p->n; i++) {
        pop_t *o = &p->ops[i];
        o->avg_size = o->usage_pct = o->empty_pct = o->full_pct = NO_VALUE;
        o->interval_ns = -1;
        if (o->qn == 0)
            continue;
        o->avg_size = round2((double)o->size_sum / (double)o->qn);
        if (o->capacity)
            o->usage_pct = round2(PERCENT * o->avg_size / o->capacity);
        o->empty_pct = round2(PERCENT * (double)o->empty / (double)o->qn);
        o->full_pct = round2(PERCENT * (double)o->full / (double)o->qn);
        if (o->qn < 2)
            continue;
        for (size_t k = 1; k < o->qn; k++)
            gaps[k - 1] = q->ts_ns[p->qrows[o->q0 + k]] - q->ts_ns[p->qrows[o->q0 + k - 1]];
        qsort(gaps, o->qn - 1, sizeof(int64_t), cmp_i64);
        o->interval_ns = gaps[(o->qn - 2) / 2];
    }
out:
    nnp__free(at);
    nnp__free(gaps);
    return rc;
}

/* avg_cpu_pct and avg_cpu_pct_per_worker (minddata_analyzer.py _compute_composite_info). */
static int cpu_stats(pipe_t *p)
{
    for (size_t i = 0; i < p->n; i++) {
        pop_t *o = &p->ops[i];
        int rc = nnp__cpu_op_pct(p->m, o->id, &o->cpu_pct);
        if (rc != NNP_OK)
            return rc;
        o->cpu_pct = round2(o->cpu_pct);
        o->cpu_per_worker =
            o->cpu_pct >= 0 && o->workers ? round2(o->cpu_pct / o->workers) : NO_VALUE;
    }
    return NNP_OK;
}

/* ---- the rules ---- */

static bool is_single_threaded(const pop_t *o)
{
    for (size_t k = 0; k < NNP_ARRAY_LEN(SINGLE_THREADED); k++)
        if (strcmp(o->name, SINGLE_THREADED[k]) == 0)
            return true;
    return false;
}

/* MindSpore 1.x names the op that feeds the device DeviceQueueOp, 2.x DataQueueOp. */
static bool is_device_queue(const pop_t *o)
{
    return strcmp(o->name, "DeviceQueue") == 0 || strcmp(o->name, "DataQueue") == 0;
}

/* The op whose output queue is op i's input: down the first child until an op with a
 * queue (MindSpore's __get_non_inline_child_recur). SIZE_MAX when none. The step bound
 * keeps a cycle of parents from looping. */
static size_t input_of(const pipe_t *p, size_t i)
{
    for (size_t steps = 0; p->ops[i].n_kids && steps < p->n; steps++) {
        i = p->kids[p->ops[i].kid0];
        if (p->ops[i].qn)
            return i;
    }
    return SIZE_MAX;
}

/* MindSpore's analyze_cpu_usage for one op. An op without CPU data gets no verdict
 * (MindSpore's -1 would pass as "below 20%"). */
static void cpu_rule(pop_t *o)
{
    if (o->cpu_per_worker < 0)
        return;
    if (o->cpu_per_worker > CPU_PER_WORKER_HIGH_PCT)
        textf(o->cpu_msg, sizeof(o->cpu_msg),
              "%s uses %.2f%% CPU per worker (above %.0f%%): setting num_parallel_workers "
              "above %" PRIu32 " may bring extra performance.",
              o->label, o->cpu_per_worker, CPU_PER_WORKER_HIGH_PCT, o->workers);
    else if (o->cpu_per_worker < CPU_PER_WORKER_LOW_PCT && o->workers > 1)
        textf(o->cpu_msg, sizeof(o->cpu_msg),
              "%s uses %.2f%% CPU per worker (below %.0f%%): num_parallel_workers=%" PRIu32
              " may not help much at this CPU usage per worker.",
              o->label, o->cpu_per_worker, CPU_PER_WORKER_LOW_PCT, o->workers);
}

/* MindSpore's analyze_queue_usage for one op (Batch is not judged by its queues). */
static void queue_rule(pipe_t *p, size_t i)
{
    pop_t *o = &p->ops[i];
    size_t in = input_of(p, i);
    double out_q = o->usage_pct;
    if (strcmp(o->name, "Batch") == 0)
        return;
    if (in == SIZE_MAX && out_q >= 0) {
        if (out_q < LEAF_QUEUE_LOW_PCT)
            textf(o->queue_msg, sizeof(o->queue_msg),
                  "Leaf op %s uses %.2f%% of its output queue (below %.0f%%): setting "
                  "num_parallel_workers above %" PRIu32 " may speed up its I/O.",
                  o->label, out_q, LEAF_QUEUE_LOW_PCT, o->workers);
    } else if (is_device_queue(o) && in != SIZE_MAX) {
        if (p->ops[in].empty_pct > DEVICE_INPUT_EMPTY_PCT)
            textf(o->queue_msg, sizeof(o->queue_msg),
                  "The input queue of %s is empty %.2f%% of the time (above %.0f%%): the "
                  "host pipeline cannot keep up with the device, which waits whenever that "
                  "queue is empty.",
                  o->label, p->ops[in].empty_pct, DEVICE_INPUT_EMPTY_PCT);
    } else if (in != SIZE_MAX && out_q >= 0) {
        double in_q = p->ops[in].usage_pct;
        if (in_q >= 0 && in_q - out_q > QUEUE_GAP_PCT)
            textf(o->queue_msg, sizeof(o->queue_msg),
                  "The input queue of %s is %.2f%% used but its output queue only %.2f%% (a "
                  "gap above %.0f points): its child %s produces faster than %s consumes; if "
                  "%s has low CPU usage, try a larger prefetch_size or more workers.",
                  o->label, in_q, out_q, QUEUE_GAP_PCT, p->ops[in].label, o->label, o->label);
    }
}

/* The seed's tutorial advice for a bottleneck op (seed 001, "数据准备性能分析"). */
static void advise(pipe_t *p, const pop_t *o, bool high_cpu)
{
    if (strcmp(o->name, "Generator") == 0)
        textf(p->advice, sizeof(p->advice),
              "Increase num_parallel_workers of the GeneratorOp, and try replacing it with "
              "MindRecordDataset.");
    else if (strcmp(o->name, "Map") == 0)
        textf(p->advice, sizeof(p->advice),
              "Increase num_parallel_workers of the MapOp; if it maps a Python function, "
              "optimise that script.");
    else if (strcmp(o->name, "Batch") == 0)
        textf(p->advice, sizeof(p->advice), "Adjust prefetch_size.");
    else if (o->n_kids == 0)
        textf(p->advice, sizeof(p->advice),
              "Increase num_parallel_workers of the dataset load op.");
    else if (high_cpu)
        textf(p->advice, sizeof(p->advice), "Increase num_parallel_workers above %" PRIu32 ".",
              o->workers);
    else
        textf(p->advice, sizeof(p->advice), "Try increasing prefetch_size.");
}

/* MindSpore's analyze_bottleneck: an op with CPU per worker above 75%, or below 20% with
 * a starved input queue (< 10%) or output usage 50 points above its input's. MindSpore
 * scans from the highest id and keeps the last match, so the match with the LOWEST id
 * (nearest the root) wins: scanning up and stopping at the first match is the same. */
static void bottleneck_rule(pipe_t *p)
{
    p->bottleneck = SIZE_MAX;
    for (size_t i = 0; i < p->n; i++) {
        const pop_t *o = &p->ops[i];
        double w = o->cpu_per_worker;
        if (is_single_threaded(o) || is_device_queue(o) || w < 0)
            continue;
        if (w > CPU_PER_WORKER_HIGH_PCT) {
            textf(p->reason, sizeof(p->reason),
                  "%s has a high CPU usage per worker of %.2f%% (above %.0f%%).", o->label, w,
                  CPU_PER_WORKER_HIGH_PCT);
            advise(p, o, true);
        } else if (w < CPU_PER_WORKER_LOW_PCT) {
            size_t in = input_of(p, i);
            double in_q = in != SIZE_MAX ? p->ops[in].usage_pct : NO_VALUE;
            char out_q[NUM_BUF];
            if (in_q < 0 || !(in_q < IN_QUEUE_LOW_PCT || o->usage_pct - in_q > QUEUE_GAP_PCT))
                continue;
            textf(p->reason, sizeof(p->reason),
                  "%s has a low CPU usage per worker of %.2f%% (below %.0f%%) and abnormal "
                  "queue usage (input %.2f%%, output %s%%).",
                  o->label, w, CPU_PER_WORKER_LOW_PCT, in_q,
                  fmt_num(out_q, sizeof(out_q), o->usage_pct));
            advise(p, o, false);
        } else {
            continue;
        }
        p->bottleneck = i;
        return;
    }
}

/* MindInsight's queue summary rule on the device queue (analyse_queue_summary). */
static void device_queue_rule(pipe_t *p)
{
    if (p->dq_n == 0 || p->dq_empty * PERCENT <= (double)p->dq_n * DEVICE_EMPTY_WARNING_PCT)
        return;
    textf(p->mi_msg, sizeof(p->mi_msg),
          "The device queue was empty in %.2f%% of batches (%zu of %zu, above %d%%): data "
          "processing on the host is slower than the device (MindInsight data_process "
          "warning).",
          round2(PERCENT * (double)p->dq_empty / (double)p->dq_n), p->dq_empty, p->dq_n,
          DEVICE_EMPTY_WARNING_PCT);
}

static void analyse(pipe_t *p)
{
    for (size_t i = 0; i < p->n; i++) {
        if (is_single_threaded(&p->ops[i]))
            continue;
        cpu_rule(&p->ops[i]);
        queue_rule(p, i);
    }
    bottleneck_rule(p);
    device_queue_rule(p);
}

/* ---- writing ---- */

/* "[a, b, c]" as Python prints a list (MindSpore writes its lists with csv.writer). */
static int list_children(const pipe_t *p, const pop_t *o, dbuf_t *d)
{
    char b[NUM_BUF];
    int rc;
    dbuf_reset(d);
    rc = dbuf_put(d, "[", true);
    for (size_t k = 0; k < o->n_kids && rc == NNP_OK; k++) {
        snprintf(b, sizeof(b), "%s%" PRId64, k ? ", " : "", p->ops[p->kids[o->kid0 + k]].id);
        rc = dbuf_put(d, b, false);
    }
    return rc == NNP_OK ? dbuf_put(d, d->full ? ", ...]" : "]", true) : rc;
}

/* The op's queue sizes in time order, "...]" closing a list cut at LIST_MAX_BYTES. */
static int list_sizes(const pipe_t *p, const pop_t *o, dbuf_t *d)
{
    char b[NUM_BUF];
    int rc;
    dbuf_reset(d);
    rc = dbuf_put(d, "[", true);
    for (size_t k = 0; k < o->qn && rc == NNP_OK && !d->full; k++) {
        snprintf(b, sizeof(b), "%s%" PRIu32, k ? ", " : "", p->m->queues.size[p->qrows[o->q0 + k]]);
        rc = dbuf_put(d, b, false);
    }
    return rc == NNP_OK ? dbuf_put(d, d->full ? ", ...]" : "]", true) : rc;
}

/* Opens <out_dir>/<prefix>_<rank>.<ext>. */
static int open_out(const nnp_actx_t *c, const char *prefix, const char *ext, nnp_outfile_t *f)
{
    char name[NNP_PATH_MAX];
    snprintf(name, sizeof(name), "%s_%d.%s", prefix, c->rank, ext);
    return nnp__out_open(f, c->out_dir, name);
}

/* minddata_pipeline_raw_{rank}.csv: MindSpore's columns (minddata_pipeline_parser.py),
 * one row per op; every op is kept, with empty queue cells when it has no queue. */
static int write_raw(const nnp_actx_t *c, const pipe_t *p)
{
    static const char *const header[] = {"op_id",
                                         "op_type",
                                         "num_workers",
                                         "output_queue_size",
                                         "output_queue_average_size",
                                         "output_queue_length",
                                         "output_queue_usage_rate",
                                         "sample_interval",
                                         "parent_id",
                                         "children_id",
                                         NULL};
    nnp_outfile_t f;
    nnp_csv_t w;
    dbuf_t d = {NULL, 0, 0, false};
    char b[NUM_BUF];
    int rc = open_out(c, "minddata_pipeline_raw", "csv", &f);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__csv_init(&w, f.fd);
    if (rc == NNP_OK)
        nnp__csv_header(&w, header);
    for (size_t r = 0; r < p->n && rc == NNP_OK; r++) {
        const pop_t *o = &p->ops[p->order[r]];
        double avg = o->qn ? (double)o->size_sum / (double)o->qn : 0;
        nnp__csv_int(&w, o->id);
        nnp__csv_str(&w, o->type);
        nnp__csv_uint(&w, o->workers);
        if (o->qn && (rc = list_sizes(p, o, &d)) == NNP_OK) {
            nnp__csv_str(&w, d.p);
            nnp__csv_double(&w, avg);
            nnp__csv_uint(&w, o->capacity);
            if (o->capacity)
                nnp__csv_double(&w, avg / o->capacity);
            else
                nnp__csv_empty(&w);
        } else {
            for (int k = 0; k < RAW_QUEUE_COLS; k++)
                nnp__csv_empty(&w);
        }
        if (o->interval_ns >= 0)
            nnp__csv_str(&w, fmt_ms(b, sizeof(b), o->interval_ns));
        else
            nnp__csv_empty(&w);
        if (o->parent == -1)
            nnp__csv_empty(&w);
        else
            nnp__csv_int(&w, o->parent);
        if (o->n_kids && rc == NNP_OK && (rc = list_children(p, o, &d)) == NNP_OK)
            nnp__csv_str(&w, d.p);
        else
            nnp__csv_empty(&w);
        nnp__csv_end_row(&w);
    }
    nnp__free(d.p);
    rc = rc == NNP_OK ? nnp__csv_fini(&w) : (nnp__csv_fini(&w), rc);
    return nnp__out_commit(&f, rc);
}

/* The summary as "key: [values]" (JSON) or rows "key,values..." (CSV), from one walk. */
typedef struct out {
    nnp_jw_t *jw;
    nnp_csv_t *csv;
} out_t;

static void out_key(out_t *o, const char *key)
{
    if (o->jw) {
        nnp__jw_key(o->jw, key);
        nnp__jw_arr_begin(o->jw);
    } else {
        nnp__csv_str(o->csv, key);
    }
}

static void out_end(out_t *o)
{
    if (o->jw)
        nnp__jw_arr_end(o->jw);
    else
        nnp__csv_end_row(o->csv);
}

static void out_int(out_t *o, int64_t v)
{
    if (o->jw)
        nnp__jw_int(o->jw, v);
    else
        nnp__csv_int(o->csv, v);
}

static void out_str(out_t *o, const char *s)
{
    if (o->jw)
        nnp__jw_str(o->jw, s);
    else
        nnp__csv_str(o->csv, s);
}

static void out_num(out_t *o, const char *num)
{
    if (o->jw)
        nnp__jw_raw(o->jw, num);
    else
        nnp__csv_str(o->csv, num);
}

/* One key with one value per op (field picked by which). A selector rather than a
 * function pointer per field keeps the six per-op number rows in one loop, and the JSON and
 * CSV forms cannot disagree on what a row holds. */
enum {
    F_AVG_SIZE,
    F_USAGE,
    F_EMPTY,
    F_FULL,
    F_CPU,
    F_CPU_WORKER,
};

static void out_ops_num(out_t *o, const pipe_t *p, const char *key, int which)
{
    char b[NUM_BUF];
    out_key(o, key);
    for (size_t i = 0; i < p->n; i++) {
        const pop_t *x = &p->ops[i];
        double v = which == F_AVG_SIZE ? x->avg_size
                   : which == F_USAGE  ? x->usage_pct
                   : which == F_EMPTY  ? x->empty_pct
                   : which == F_FULL   ? x->full_pct
                   : which == F_CPU    ? x->cpu_pct
                                       : x->cpu_per_worker;
        out_num(o, fmt_num(b, sizeof(b), v));
    }
    out_end(o);
}

/* A key with a single value: MindSpore writes run-wide figures as lists of one
 * (per_batch_time: [12.5]), so a reader can treat every key alike. */
static void out_one_num(out_t *o, const char *key, const char *num)
{
    out_key(o, key);
    out_num(o, num);
    out_end(o);
}

static void out_one_str(out_t *o, const char *key, const char *s)
{
    out_key(o, key);
    out_str(o, s);
    out_end(o);
}

/* children_ids: nested lists in JSON; in CSV each op's list is one "[1, 2]" cell, the
 * text Python's csv.writer gives a list. */
static int out_children(out_t *o, const pipe_t *p)
{
    dbuf_t d = {NULL, 0, 0, false};
    int rc = NNP_OK;
    out_key(o, "children_ids");
    for (size_t i = 0; i < p->n && rc == NNP_OK; i++) {
        const pop_t *x = &p->ops[i];
        if (o->jw) {
            nnp__jw_arr_begin(o->jw);
            for (size_t k = 0; k < x->n_kids; k++)
                nnp__jw_int(o->jw, p->ops[p->kids[x->kid0 + k]].id);
            nnp__jw_arr_end(o->jw);
            continue;
        }
        rc = list_children(p, x, &d);
        if (rc == NNP_OK)
            nnp__csv_str(o->csv, d.p);
    }
    out_end(o);
    nnp__free(d.p);
    return rc;
}

/* A frequency in percent (2 decimals), -1 when nothing was sampled. */
static double pct_of(size_t part, size_t whole)
{
    return whole ? round2(PERCENT * (double)part / (double)whole) : NO_VALUE;
}

/* MindSpore's summary keys in its order, then nnprof's additions (docs/OUTPUTS.md). */
static int write_summary(out_t *o, const pipe_t *p)
{
    char b[NUM_BUF];
    int rc;
    out_key(o, "pipeline_ops");
    for (size_t i = 0; i < p->n; i++)
        out_str(o, p->ops[i].label);
    out_end(o);
    out_key(o, "op_names");
    for (size_t i = 0; i < p->n; i++)
        out_str(o, p->ops[i].name);
    out_end(o);
    out_key(o, "op_ids");
    for (size_t i = 0; i < p->n; i++)
        out_int(o, p->ops[i].id);
    out_end(o);
    out_key(o, "num_workers");
    for (size_t i = 0; i < p->n; i++)
        out_int(o, p->ops[i].workers);
    out_end(o);
    out_ops_num(o, p, "queue_average_size", F_AVG_SIZE);
    out_ops_num(o, p, "queue_utilization_pct", F_USAGE);
    out_ops_num(o, p, "queue_empty_freq_pct", F_EMPTY);
    rc = out_children(o, p);
    out_key(o, "parent_id");
    for (size_t i = 0; i < p->n; i++)
        out_int(o, p->ops[i].parent);
    out_end(o);
    out_ops_num(o, p, "avg_cpu_pct", F_CPU);
    /* No per-batch pipeline or push times are recorded: MindSpore's -1. */
    out_one_num(o, "per_pipeline_time", fmt_ms(b, sizeof(b), -1));
    out_one_num(o, "per_push_queue_time", fmt_ms(b, sizeof(b), -1));
    out_one_num(
        o, "per_batch_time",
        fmt_ms(b, sizeof(b),
               p->dq_n > 1 ? (p->dq_last_ns - p->dq_first_ns) / (int64_t)(p->dq_n - 1) : -1));
    out_ops_num(o, p, "avg_cpu_pct_per_worker", F_CPU_WORKER);
    out_key(o, "cpu_analysis_details");
    for (size_t i = 0; i < p->n; i++)
        if (p->ops[i].cpu_msg[0])
            out_str(o, p->ops[i].cpu_msg);
    out_end(o);
    out_key(o, "queue_analysis_details");
    for (size_t i = 0; i < p->n; i++)
        if (p->ops[i].queue_msg[0])
            out_str(o, p->ops[i].queue_msg);
    if (p->mi_msg[0])
        out_str(o, p->mi_msg);
    out_end(o);
    if (p->bottleneck != SIZE_MAX) {
        char s[2 * TEXT_MAX];
        textf(s, sizeof(s), "%s %s", p->reason, p->advice);
        out_one_str(o, "bottleneck_warning", p->ops[p->bottleneck].label);
        out_one_str(o, "bottleneck_suggestion", s);
    } else {
        out_one_str(o, "bottleneck_warning", "");
        out_one_str(o, "bottleneck_suggestion", "");
    }
    /* nnprof additions */
    out_ops_num(o, p, "queue_full_freq_pct", F_FULL);
    snprintf(b, sizeof(b), "%zu", p->dq_n);
    out_one_num(o, "device_queue_batches", b);
    out_one_num(o, "device_queue_empty_freq_pct",
                fmt_num(b, sizeof(b), pct_of(p->dq_empty, p->dq_n)));
    out_one_num(o, "device_queue_full_freq_pct",
                fmt_num(b, sizeof(b), pct_of(p->dq_full, p->dq_n)));
    out_one_num(o, "host_queue_empty_freq_pct",
                fmt_num(b, sizeof(b), pct_of(p->host_empty, p->host_n)));
    out_one_str(o, "data_process_status", p->dq_n == 0 ? "" : p->mi_msg[0] ? "warning" : "normal");
    return rc;
}

/* minddata_pipeline_summary_{rank}.json: one object, compact unless --pretty. */
static int write_summary_json(const nnp_actx_t *c, const pipe_t *p)
{
    nnp_outfile_t f;
    nnp_jw_t w;
    out_t o = {&w, NULL};
    int rc = open_out(c, "minddata_pipeline_summary", "json", &f);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__jw_init(&w, f.fd, c->pretty, 0);
    if (rc == NNP_OK) {
        nnp__jw_obj_begin(&w);
        rc = write_summary(&o, p);
        nnp__jw_obj_end(&w);
        nnp__jw_line_end(&w);
    }
    if (rc == NNP_OK)
        rc = nnp__jw_flush(&w);
    nnp__jw_fini(&w);
    return nnp__out_commit(&f, rc);
}

/* The CSV form MindSpore writes next to the JSON (_save_as_csv_file): key, then values. */
static int write_summary_csv(const nnp_actx_t *c, const pipe_t *p)
{
    nnp_outfile_t f;
    nnp_csv_t w;
    out_t o = {NULL, &w};
    int rc = open_out(c, "minddata_pipeline_summary", "csv", &f);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__csv_init(&w, f.fd);
    if (rc == NNP_OK)
        rc = write_summary(&o, p);
    rc = rc == NNP_OK ? nnp__csv_fini(&w) : (nnp__csv_fini(&w), rc);
    return nnp__out_commit(&f, rc);
}

/* The advisor's part: frequencies unrounded (its thresholds compare them), NAN where
 * nothing was sampled; the bottleneck strings "" when no op was found. */
static void fill_findings(const pipe_t *p, nnp_findings_t *f)
{
    f->device_queue_empty_pct = p->dq_n ? PERCENT * (double)p->dq_empty / (double)p->dq_n : NAN;
    f->host_queue_empty_pct = p->host_n ? PERCENT * (double)p->host_empty / (double)p->host_n : NAN;
    f->bottleneck_op[0] = f->bottleneck_reason[0] = f->bottleneck_suggestion[0] = '\0';
    if (p->bottleneck == SIZE_MAX)
        return;
    /* The full op type, as worker threads are named ("MapOp(id=2)"). */
    textf(f->bottleneck_op, sizeof(f->bottleneck_op), "%s(id=%" PRId64 ")",
          p->ops[p->bottleneck].type, p->ops[p->bottleneck].id);
    nnp__strlcpy(f->bottleneck_reason, p->reason, sizeof(f->bottleneck_reason));
    nnp__strlcpy(f->bottleneck_suggestion, p->advice, sizeof(f->bottleneck_suggestion));
}

/* Writes the three files when the run registered a pipeline op or sampled a queue;
 * otherwise writes nothing and leaves the findings as they are. */
int nnp__pipeline_write(const nnp_actx_t *c, nnp_findings_t *f)
{
    pipe_t p;
    int rc;
    memset(&p, 0, sizeof(p));
    p.m = c->m;
    if (c->m->pipe_ops.t.n == 0 && c->m->queues.t.n == 0)
        return NNP_OK;
    /* Build (ops, graph, row order), measure (queues, CPU), judge, then write. The
     * findings are filled before writing: they do not depend on the files. */
    rc = collect_ops(&p);
    if (rc == NNP_OK)
        rc = link_children(&p);
    if (rc == NNP_OK)
        rc = bfs_order(&p);
    if (rc == NNP_OK)
        rc = queue_stats(&p);
    if (rc == NNP_OK)
        rc = cpu_stats(&p);
    if (rc == NNP_OK) {
        analyse(&p);
        fill_findings(&p, f);
        rc = write_raw(c, &p);
    }
    if (rc == NNP_OK)
        rc = write_summary_json(c, &p);
    if (rc == NNP_OK)
        rc = write_summary_csv(c, &p);
    nnp__free(p.ops);
    nnp__free(p.kids);
    nnp__free(p.qrows);
    nnp__free(p.order);
    return rc;
}
