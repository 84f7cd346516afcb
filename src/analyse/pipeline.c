/* pipeline.c - data pipeline analysis (issue #4): the ops graph, queue usage of every
 * connector, empty/full frequency of the host and device queues, per-op CPU (cpu.c), and
 * the bottleneck verdict of MindSpore's BottleneckAnalyzer and MindInsight's device-queue
 * rule with the suggestions of the seed's tutorial. Writes minddata_pipeline_raw_{rank}.csv
 * and minddata_pipeline_summary_{rank}.json/.csv and fills the pipeline findings. Called
 * once per rank by the analyse driver. Rules and units: docs/OUTPUTS.md, "Data pipeline".
 * The files are written by pipeline_write.c. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/pipeline_internal.h"

/* Percentages and sizes are rounded to 2 decimals before the rules compare them, as
 * minddata_analyzer.py does, so a printed value never contradicts a verdict. */
#define PCT_SCALE    100.0
#define PCT_DECIMALS 2
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

/* Ops MindSpore's analyzer skips: they run on one thread, so worker advice is moot. */
static const char *const SINGLE_THREADED[] = {"Barrier", "Concat", "EpochCtrl", "Rename", "Repeat",
                                              "Shuffle", "Skip",   "Take",      "Zip"};

/* Records the message and returns NNP_ENOMEM (a constant, which static analysers follow). */
int nnp__pipe_oom(void)
{
    (void)nnp__fail(NNP_ENOMEM, "out of memory in data pipeline analysis");
    return NNP_ENOMEM;
}

/* snprintf for messages: a label near NNP_NAME_MAX may cut a message at TEXT_MAX, which
 * is fine for text meant for people (and keeps -Wformat-truncation quiet). */
void nnp__pipe_textf(char *dst, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, cap, fmt, ap);
    va_end(ap);
}

double nnp__pipe_round2(double v)
{
    return v < 0 ? v : round(v * PCT_SCALE) / PCT_SCALE;
}

/* A percentage or size as written: 2 decimals, or MindSpore's -1 for "none". */
const char *nnp__pipe_fmt_num(char *b, size_t cap, double v)
{
    if (v < 0)
        snprintf(b, cap, "%d", (int)NO_VALUE);
    else
        snprintf(b, cap, "%.*f", PCT_DECIMALS, v);
    return b;
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
    nnp__pipe_textf(o->label, sizeof(o->label), "%s(id=%" PRId64 ")", o->name, o->id);
}

/* One op per id, by id. An op registered again keeps its last registration: MindSpore's
 * autotune changes num_workers during a run, and the latest value is the one in force. */
static int collect_ops(pipe_t *p)
{
    const nnp_pipe_ops_t *t = &p->m->pipe_ops;
    size_t distinct = 0;
    reg_t *r = nnp__malloc((t->t.n ? t->t.n : 1) * sizeof(reg_t));
    if (!r)
        return nnp__pipe_oom();
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
        return nnp__pipe_oom();
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
        return nnp__pipe_oom();
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
        return nnp__pipe_oom();
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
        rc = nnp__pipe_oom();
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
        o->avg_size = nnp__pipe_round2((double)o->size_sum / (double)o->qn);
        if (o->capacity)
            o->usage_pct = nnp__pipe_round2(PERCENT * o->avg_size / o->capacity);
        o->empty_pct = nnp__pipe_round2(PERCENT * (double)o->empty / (double)o->qn);
        o->full_pct = nnp__pipe_round2(PERCENT * (double)o->full / (double)o->qn);
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
        o->cpu_pct = nnp__pipe_round2(o->cpu_pct);
        o->cpu_per_worker =
            o->cpu_pct >= 0 && o->workers ? nnp__pipe_round2(o->cpu_pct / o->workers) : NO_VALUE;
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
        nnp__pipe_textf(
            o->cpu_msg, sizeof(o->cpu_msg),
            "%s uses %.2f%% CPU per worker (above %.0f%%): setting num_parallel_workers "
            "above %" PRIu32 " may bring extra performance.",
            o->label, o->cpu_per_worker, CPU_PER_WORKER_HIGH_PCT, o->workers);
    else if (o->cpu_per_worker < CPU_PER_WORKER_LOW_PCT && o->workers > 1)
        nnp__pipe_textf(
            o->cpu_msg, sizeof(o->cpu_msg),
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
            nnp__pipe_textf(o->queue_msg, sizeof(o->queue_msg),
                            "Leaf op %s uses %.2f%% of its output queue (below %.0f%%): setting "
                            "num_parallel_workers above %" PRIu32 " may speed up its I/O.",
                            o->label, out_q, LEAF_QUEUE_LOW_PCT, o->workers);
    } else if (is_device_queue(o) && in != SIZE_MAX) {
        if (p->ops[in].empty_pct > DEVICE_INPUT_EMPTY_PCT)
            nnp__pipe_textf(
                o->queue_msg, sizeof(o->queue_msg),
                "The input queue of %s is empty %.2f%% of the time (above %.0f%%): the "
                "host pipeline cannot keep up with the device, which waits whenever that "
                "queue is empty.",
                o->label, p->ops[in].empty_pct, DEVICE_INPUT_EMPTY_PCT);
    } else if (in != SIZE_MAX && out_q >= 0) {
        double in_q = p->ops[in].usage_pct;
        if (in_q >= 0 && in_q - out_q > QUEUE_GAP_PCT)
            nnp__pipe_textf(
                o->queue_msg, sizeof(o->queue_msg),
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
        nnp__pipe_textf(
            p->advice, sizeof(p->advice),
            "Increase num_parallel_workers of the GeneratorOp, and try replacing it with "
            "MindRecordDataset.");
    else if (strcmp(o->name, "Map") == 0)
        nnp__pipe_textf(p->advice, sizeof(p->advice),
                        "Increase num_parallel_workers of the MapOp; if it maps a Python function, "
                        "optimise that script.");
    else if (strcmp(o->name, "Batch") == 0)
        nnp__pipe_textf(p->advice, sizeof(p->advice), "Adjust prefetch_size.");
    else if (o->n_kids == 0)
        nnp__pipe_textf(p->advice, sizeof(p->advice),
                        "Increase num_parallel_workers of the dataset load op.");
    else if (high_cpu)
        nnp__pipe_textf(p->advice, sizeof(p->advice),
                        "Increase num_parallel_workers above %" PRIu32 ".", o->workers);
    else
        nnp__pipe_textf(p->advice, sizeof(p->advice), "Try increasing prefetch_size.");
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
            nnp__pipe_textf(p->reason, sizeof(p->reason),
                            "%s has a high CPU usage per worker of %.2f%% (above %.0f%%).",
                            o->label, w, CPU_PER_WORKER_HIGH_PCT);
            advise(p, o, true);
        } else if (w < CPU_PER_WORKER_LOW_PCT) {
            size_t in = input_of(p, i);
            double in_q = in != SIZE_MAX ? p->ops[in].usage_pct : NO_VALUE;
            char out_q[NUM_BUF];
            if (in_q < 0 || !(in_q < IN_QUEUE_LOW_PCT || o->usage_pct - in_q > QUEUE_GAP_PCT))
                continue;
            nnp__pipe_textf(
                p->reason, sizeof(p->reason),
                "%s has a low CPU usage per worker of %.2f%% (below %.0f%%) and abnormal "
                "queue usage (input %.2f%%, output %s%%).",
                o->label, w, CPU_PER_WORKER_LOW_PCT, in_q,
                nnp__pipe_fmt_num(out_q, sizeof(out_q), o->usage_pct));
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
    nnp__pipe_textf(
        p->mi_msg, sizeof(p->mi_msg),
        "The device queue was empty in %.2f%% of batches (%zu of %zu, above %d%%): data "
        "processing on the host is slower than the device (MindInsight data_process "
        "warning).",
        nnp__pipe_round2(PERCENT * (double)p->dq_empty / (double)p->dq_n), p->dq_empty, p->dq_n,
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
    nnp__pipe_textf(f->bottleneck_op, sizeof(f->bottleneck_op), "%s(id=%" PRId64 ")",
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
        rc = nnp__pipe_write_files(c, &p);
    }
    nnp__free(p.ops);
    nnp__free(p.kids);
    nnp__free(p.qrows);
    nnp__free(p.order);
    return rc;
}
