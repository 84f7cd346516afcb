/* advisor.c - findings and advice (issue #4). nnp__findings_from_core condenses the step
 * trace, the overlap and the op times into nnp_findings_t; the deeper analyses add their
 * parts; nnp__advisor_write, called last by the driver, applies the rules and writes
 * advice_{rank}.json and a readable advice_{rank}.txt. A rule whose data is missing (NAN)
 * never fires. The rules, thresholds and sources: docs/OUTPUTS.md "Advisor". */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "util/json_writer.h"

#define NS_PER_MS 1e6
#define PERCENT   100.0

/* ---- rule thresholds (each is a row of the table in docs/OUTPUTS.md "Advisor") ---- */
/* MindInsight's step_trace-iter_interval proposal fires above 0.5 ms (formats.md 2.5). */
#define ITER_INTERVAL_MS_MAX 0.5
/* MindInsight's minddata_device_queue_rate empty_warning_threshold = 30 (%) and
 * minddata_analyser's 0.3 of batches (formats.md 2.5, 2.4). */
#define DEVICE_QUEUE_EMPTY_PCT_MAX 30.0
/* MindInsight's minddata_cpu_utilization: 100 - average idle > 80 (formats.md 2.5). */
#define CPU_BUSY_PCT_MAX 80.0
/* Our choice, no source has this rule: the tail (bp end to step end) is where gradient
 * all-reduce and the update run (formats.md 2.1), so it "is dominated" by exposed
 * communication when that exceeds half of it, and it matters when it is above 10 % of
 * the step - the share MindInsight's ParallelProposer already flags for communication
 * (comm / (comp + comm) > 0.1, formats.md 2.6). */
#define TAIL_COMM_PCT_MIN 50.0
#define TAIL_STEP_PCT_MIN 10.0
/* Our choice: with less than 10 % of device memory free at the peak, a longer sequence,
 * a larger batch or allocator fragmentation is enough to run out. Fires at >= 90 %. */
#define MEM_PEAK_PCT_MIN 90.0
/* Our choice: tuned large-model training reaches 40-50 % of peak (PaLM reports 46.2 %
 * model FLOPs utilisation, Chowdhery et al. 2022), so under 30 % leaves a large,
 * usually recoverable gap. Fires below 30 %. */
#define FLOPS_PEAK_PCT_MIN 30.0

/* Our choice: a GPU busy under half of the span of its activity spends most of the run
 * waiting for the host (launch overhead, Python, data, synchronization). Fires < 50 %. */
#define GPU_BUSY_PCT_MIN 50.0
/* Our choice: host time blocked in cudaStreamSynchronize & co. above a tenth of the
 * device's active span is time the host could have queued the next work. */
#define GPU_SYNC_PCT_MAX 10.0

/* Decimals of evidence values: ms with 4 (MindInsight's to_millisecond(limit=4)), percents
 * with 2 (its calculate_percent); bytes and FLOP/s are whole numbers. */
#define MS_DECIMALS    4
#define PCT_DECIMALS   2
#define WHOLE_DECIMALS 0

/* Evidence lines per finding (the top-types finding has the most: 2 per type + 1). */
#define MAX_EVIDENCE (2 * NNP_FINDINGS_TOP_TYPES + 2)
/* An evidence value holds at most a findings text (the bottleneck reason). */
#define EVIDENCE_TEXT NNP_FINDINGS_TEXT
/* A suggestion: our text plus, at most, a findings text and a number. */
#define SUGGESTION_TEXT (2 * NNP_FINDINGS_TEXT)
/* advice_{rank}.txt is built in memory: the rules times their largest paragraph. */
#define TXT_PARAGRAPH_MAX (256 + MAX_EVIDENCE * (64 + EVIDENCE_TEXT) + SUGGESTION_TEXT)

/* ---- findings from the core analyses ---- */

void nnp__findings_init(nnp_findings_t *f)
{
    memset(f, 0, sizeof(*f));
    f->avg_step_ms = f->avg_iteration_interval_ms = f->avg_fp_and_bp_ms = NAN;
    f->avg_tail_ms = f->avg_comm_not_overlapped_ms = f->avg_communication_ms = NAN;
    f->avg_data_fetch_ms = NAN;
    for (size_t i = 0; i < NNP_FINDINGS_TOP_TYPES; i++)
        f->top_type_pct[i] = NAN;
    f->device_queue_empty_pct = f->host_queue_empty_pct = NAN;
    f->cpu_busy_pct = f->cpu_iowait_pct = f->process_cpu_pct = NAN;
    f->mem_peak_bytes = f->mem_capacity_bytes = NAN;
    f->achieved_flops_per_s = f->peak_flops_per_s = NAN;
    f->gpu_busy_pct = f->gpu_launch_delay_us = f->gpu_sync_pct = NAN;
}

/* A mean in ms over the values that are known; NAN when none is. */
typedef struct mean {
    int64_t sum_ns;
    size_t n;
} mean_t;

static void mean_add(mean_t *m, int64_t ns, bool known)
{
    if (known) {
        m->sum_ns += ns;
        m->n++;
    }
}

static double mean_ms(const mean_t *m)
{
    return m->n ? (double)m->sum_ns / (double)m->n / NS_PER_MS : NAN;
}

/* Step phase averages over the analysed steps. A phase is known when its points are
 * (analyse.h: fp_ns/bp_ns are -1 when unknown), as the step trace summary averages. */
static void from_steps(nnp_findings_t *f, const nnp_step_trace_t *st)
{
    mean_t step = {0, 0}, interval = {0, 0}, fp_bp = {0, 0}, tail = {0, 0}, fetch = {0, 0};
    for (size_t i = 0; i < st->n; i++) {
        const nnp_step_row_t *r = &st->rows[i];
        bool fp = r->fp_ns != -1, bp = r->bp_ns != -1;
        mean_add(&step, r->total_ns, true);
        mean_add(&interval, r->iteration_interval_ns, fp);
        mean_add(&fp_bp, r->fp_and_bp_ns, fp && bp);
        mean_add(&tail, r->tail_ns, bp);
        mean_add(&fetch, r->fetch_ns, r->fetch_ns != -1);
        f->dataloader_fetch |= r->fetch_ns != -1 && r->fetch_dataloader;
    }
    f->avg_data_fetch_ms = mean_ms(&fetch);
    f->n_steps = st->n;
    f->avg_step_ms = mean_ms(&step);
    f->avg_iteration_interval_ms = mean_ms(&interval);
    f->avg_fp_and_bp_ms = mean_ms(&fp_bp);
    f->avg_tail_ms = mean_ms(&tail);
}

/* Per-step communication averages from the overlap's step rows (the whole-run row,
 * step_id UINT64_MAX, is not a step). */
static void from_overlap(nnp_findings_t *f, const nnp_overlap_t *ov)
{
    mean_t exposed = {0, 0}, comm = {0, 0};
    for (size_t i = 0; i < ov->n; i++) {
        if (ov->rows[i].step_id == UINT64_MAX)
            continue;
        mean_add(&exposed, ov->rows[i].comm_not_overlapped_ns, true);
        mean_add(&comm, ov->rows[i].communication_ns, true);
    }
    f->avg_comm_not_overlapped_ms = mean_ms(&exposed);
    f->avg_communication_ms = mean_ms(&comm);
}

/* Per-type totals of the compute rows (analyse.h: kernels when the run has any, typed by
 * their launching op as in op_statistic, else host ops), indexed by type string id;
 * -1 marks a type never seen. Returns the sum of all, or -1 when out of memory. */
static int64_t type_totals(const nnp_actx_t *c, const nnp_step_trace_t *st, int64_t *tot)
{
    const nnp_model_t *m = c->m;
    nnp_op_index_t corr;
    nnp_launch_index_t launches;
    int64_t all = 0;
    bool filter = c->has_steps;
    nnp_step_spans_t sp;
    if (nnp__step_spans_init(filter ? st : NULL, &sp) != NNP_OK)
        return -1;
    if (nnp__op_index_build(m, &corr) != NNP_OK) {
        nnp__step_spans_fini(&sp);
        return -1;
    }
    if (nnp__launch_index_build(m, &launches) != NNP_OK) {
        nnp__op_index_fini(&corr);
        nnp__step_spans_fini(&sp);
        return -1;
    }
    for (size_t i = 0; i < m->kernels.t.n; i++) {
        const nnp_kernels_t *k = &m->kernels;
        size_t op = nnp__op_index_find(&corr, k->corr[i]);
        uint32_t type = op != SIZE_MAX && m->ops.type[op] ? m->ops.type[op] : k->name[i];
        int64_t d = k->end_ns[i] > k->start_ns[i] ? k->end_ns[i] - k->start_ns[i] : 0;
        if (filter && nnp__kernel_step(&sp, m, &launches, i) == SIZE_MAX)
            continue;
        tot[type] = (tot[type] < 0 ? 0 : tot[type]) + d;
        all += d;
    }
    for (size_t i = 0; m->kernels.t.n == 0 && i < m->ops.t.n; i++) {
        const nnp_ops_t *o = &m->ops;
        int64_t d = o->end_ns[i] > o->start_ns[i] ? o->end_ns[i] - o->start_ns[i] : 0;
        /* An op whose end was never recorded is not counted (as op statistics). */
        if (o->end_ns[i] == NNP_OPEN_END ||
            (filter && nnp__step_spans_find(&sp, o->start_ns[i]) == SIZE_MAX))
            continue;
        tot[o->type[i]] = (tot[o->type[i]] < 0 ? 0 : tot[o->type[i]]) + d;
        all += d;
    }
    nnp__op_index_fini(&corr);
    nnp__launch_index_fini(&launches);
    nnp__step_spans_fini(&sp);
    return all;
}

/* The NNP_FINDINGS_TOP_TYPES types with the most time (ties by name) and their share of
 * all op time. Out of memory leaves them out with a warning: the advice loses one
 * informational finding, no analysis fails for it. */
static void top_types(nnp_findings_t *f, const nnp_actx_t *c, const nnp_step_trace_t *st)
{
    const nnp_model_t *m = c->m;
    int64_t *tot, all;
    if (m->n_strs == 0 || (m->ops.t.n == 0 && m->kernels.t.n == 0))
        return;
    tot = nnp__malloc(m->n_strs * sizeof(int64_t));
    if (!tot) {
        NNP_LOG_W("advisor: out of memory; the top op types are left out");
        return;
    }
    for (size_t id = 0; id < m->n_strs; id++)
        tot[id] = -1;
    all = type_totals(c, st, tot);
    if (all < 0)
        NNP_LOG_W("advisor: out of memory; the top op types are left out");
    for (size_t k = 0; all >= 0 && k < NNP_FINDINGS_TOP_TYPES; k++) {
        size_t best = SIZE_MAX;
        for (size_t id = 0; id < m->n_strs; id++) {
            if (tot[id] < 0)
                continue;
            if (best == SIZE_MAX || tot[id] > tot[best] ||
                (tot[id] == tot[best] &&
                 strcmp(nnp__model_str(m, (uint32_t)id), nnp__model_str(m, (uint32_t)best)) < 0))
                best = id;
        }
        if (best == SIZE_MAX)
            break;
        nnp__strlcpy(f->top_types[k], nnp__model_str(m, (uint32_t)best), NNP_NAME_MAX);
        f->top_type_pct[k] = all > 0 ? (double)tot[best] / (double)all * PERCENT : 0.0;
        f->n_top_types = k + 1;
        tot[best] = -1; /* taken */
    }
    nnp__free(tot);
}

void nnp__findings_from_core(nnp_findings_t *f, const nnp_actx_t *c, const nnp_step_trace_t *st,
                             const nnp_overlap_t *ov)
{
    if (st)
        from_steps(f, st);
    if (ov)
        from_overlap(f, ov);
    /* Under --steps without a step trace nothing is known to be in an analysed step. */
    if (!c->has_steps || st)
        top_types(f, c, st);
}

/* ---- rules ---- */

typedef enum severity { SEV_WARNING, SEV_INFO, SEV_COUNT } severity_t;
static const char *const severity_names[SEV_COUNT] = {"warning", "info"};

typedef struct evidence {
    const char *key; /* with its unit: "_ms", "_pct", "_bytes", "_flops_per_s" */
    bool is_str;
    char val[EVIDENCE_TEXT];
} evidence_t;

typedef struct finding {
    const char *id, *title;
    severity_t sev;
    int rank; /* whose files a suggestion names */
    evidence_t ev[MAX_EVIDENCE];
    size_t n_ev;
    char suggestion[SUGGESTION_TEXT];
} finding_t;

static void ev_num(finding_t *d, const char *key, double v, int decimals)
{
    evidence_t *e = &d->ev[d->n_ev++];
    e->key = key;
    e->is_str = false;
    snprintf(e->val, sizeof(e->val), "%.*f", decimals, v);
}

/* Optional evidence: left out when unknown. */
static void ev_num_opt(finding_t *d, const char *key, double v, int decimals)
{
    if (isfinite(v))
        ev_num(d, key, v, decimals);
}

static void ev_str(finding_t *d, const char *key, const char *s)
{
    evidence_t *e = &d->ev[d->n_ev++];
    e->key = key;
    e->is_str = true;
    nnp__strlcpy(e->val, s, sizeof(e->val));
}

static void suggest(finding_t *d, const char *text)
{
    nnp__strlcpy(d->suggestion, text, sizeof(d->suggestion));
}

/* x as a percentage of of, when both are known and of > 0; else NAN. Multiplying first
 * keeps round inputs exact at a threshold (3e12 of 1e13 is 30, not 30.000000000000004). */
static double pct_of(double x, double of)
{
    return isfinite(x) && isfinite(of) && of > 0 ? x * PERCENT / of : NAN;
}

static bool rule_iteration_interval(const nnp_findings_t *f, finding_t *d)
{
    if (!(isfinite(f->avg_iteration_interval_ms) &&
          f->avg_iteration_interval_ms > ITER_INTERVAL_MS_MAX))
        return false;
    d->title = "Long iteration interval: the step waits before its forward pass";
    ev_num(d, "avg_iteration_interval_ms", f->avg_iteration_interval_ms, MS_DECIMALS);
    ev_num(d, "threshold_ms", ITER_INTERVAL_MS_MAX, MS_DECIMALS);
    ev_num_opt(d, "avg_step_ms", f->avg_step_ms, MS_DECIMALS);
    ev_num(d, "n_steps", (double)f->n_steps, WHOLE_DECIMALS);
    ev_num_opt(d, "avg_data_fetch_ms", f->avg_data_fetch_ms, MS_DECIMALS);
    if (f->dataloader_fetch)
        suggest(d, "The time from the end of one step to the forward pass of the next is "
                   "mostly the DataLoader's fetch of the batch (avg_data_fetch_ms). Raise its "
                   "num_workers (and prefetch_factor), keep the workers alive between epochs "
                   "(persistent_workers=True), make __getitem__ and collate_fn lighter, or "
                   "prepare the data once before training.");
    else
        suggest(d, "The time from the end of one step to the forward pass of the next is "
                   "usually data loading and preprocessing. Check the data pipeline findings, "
                   "raise num_parallel_workers or prefetch of the slow dataset ops, or sink "
                   "the dataset to the device.");
    return true;
}

static bool rule_device_queue_empty(const nnp_findings_t *f, finding_t *d)
{
    if (!(isfinite(f->device_queue_empty_pct) &&
          f->device_queue_empty_pct > DEVICE_QUEUE_EMPTY_PCT_MAX))
        return false;
    d->title = "The device queue is often empty: the device waits for data";
    ev_num(d, "device_queue_empty_pct", f->device_queue_empty_pct, PCT_DECIMALS);
    ev_num(d, "threshold_pct", DEVICE_QUEUE_EMPTY_PCT_MAX, PCT_DECIMALS);
    ev_num_opt(d, "host_queue_empty_pct", f->host_queue_empty_pct, PCT_DECIMALS);
    suggest(d, "The host data pipeline does not keep up with the device. Raise "
               "num_parallel_workers of its slowest op, prefetch more batches, or move heavy "
               "Python transforms out of map.");
    return true;
}

static bool rule_cpu_busy(const nnp_findings_t *f, finding_t *d)
{
    if (!(isfinite(f->cpu_busy_pct) && f->cpu_busy_pct > CPU_BUSY_PCT_MAX))
        return false;
    d->title = "The host CPUs are nearly saturated";
    ev_num(d, "cpu_busy_pct", f->cpu_busy_pct, PCT_DECIMALS);
    ev_num(d, "threshold_pct", CPU_BUSY_PCT_MAX, PCT_DECIMALS);
    ev_num_opt(d, "cpu_iowait_pct", f->cpu_iowait_pct, PCT_DECIMALS);
    ev_num_opt(d, "process_cpu_pct", f->process_cpu_pct, PCT_DECIMALS);
    suggest(d, "Data preprocessing and the framework compete for CPU. Lower the total number "
               "of dataset workers, move augmentation to the device, or give the job more "
               "cores.");
    return true;
}

static bool rule_pipeline_bottleneck(const nnp_findings_t *f, finding_t *d)
{
    if (f->bottleneck_op[0] == '\0')
        return false;
    d->title = "A data pipeline op is the bottleneck";
    ev_str(d, "bottleneck_op", f->bottleneck_op);
    if (f->bottleneck_reason[0])
        ev_str(d, "reason", f->bottleneck_reason);
    if (f->bottleneck_suggestion[0])
        suggest(d, f->bottleneck_suggestion);
    else
        snprintf(d->suggestion, sizeof(d->suggestion),
                 "Raise num_parallel_workers of %s or make its work cheaper.", f->bottleneck_op);
    return true;
}

static bool rule_tail_communication(const nnp_findings_t *f, finding_t *d)
{
    double comm_pct = pct_of(f->avg_comm_not_overlapped_ms, f->avg_tail_ms);
    double tail_pct = pct_of(f->avg_tail_ms, f->avg_step_ms);
    if (!(isfinite(comm_pct) && isfinite(tail_pct) && comm_pct > TAIL_COMM_PCT_MIN &&
          tail_pct > TAIL_STEP_PCT_MIN))
        return false;
    d->title = "The step tail is dominated by communication no computation hides";
    ev_num(d, "avg_comm_not_overlapped_ms", f->avg_comm_not_overlapped_ms, MS_DECIMALS);
    ev_num(d, "avg_tail_ms", f->avg_tail_ms, MS_DECIMALS);
    ev_num(d, "avg_step_ms", f->avg_step_ms, MS_DECIMALS);
    ev_num_opt(d, "avg_communication_ms", f->avg_communication_ms, MS_DECIMALS);
    ev_num(d, "comm_not_overlapped_pct_of_tail", comm_pct, PCT_DECIMALS);
    ev_num(d, "tail_pct_of_step", tail_pct, PCT_DECIMALS);
    ev_num(d, "threshold_pct_of_tail", TAIL_COMM_PCT_MIN, PCT_DECIMALS);
    ev_num(d, "threshold_pct_of_step", TAIL_STEP_PCT_MIN, PCT_DECIMALS);
    suggest(d, "Gradient communication after the backward pass is exposed. Overlap it with "
               "the backward pass (gradient bucketing or fusion), send fewer and larger "
               "messages, or check for a slow link or a slow rank.");
    return true;
}

static const char *const top_type_keys[NNP_FINDINGS_TOP_TYPES] = {"op_type_1", "op_type_2",
                                                                  "op_type_3"};
static const char *const top_pct_keys[NNP_FINDINGS_TOP_TYPES] = {
    "op_type_1_time_pct", "op_type_2_time_pct", "op_type_3_time_pct"};
_Static_assert(NNP_FINDINGS_TOP_TYPES == 3, "one evidence key per top op type");

static bool rule_top_op_types(const nnp_findings_t *f, finding_t *d)
{
    if (f->n_top_types == 0)
        return false;
    d->title = f->top_types_by_self ? "Ops with the most self time" : "Op types with the most time";
    for (size_t k = 0; k < f->n_top_types && k < NNP_FINDINGS_TOP_TYPES; k++) {
        ev_str(d, top_type_keys[k], f->top_types[k]);
        ev_num(d, top_pct_keys[k], f->top_type_pct[k], PCT_DECIMALS);
    }
    if (f->top_types_by_self)
        snprintf(d->suggestion, sizeof(d->suggestion),
                 "Optimise these ops first (fusion, faster kernels, mixed precision). Ops nest "
                 "here, so the shares are of self time (the ops inside left out); "
                 "op_self_time_%d.csv lists every op.",
                 d->rank);
    else
        suggest(d, "Optimise these op types first (fusion, faster kernels, mixed precision); "
                   "op_statistic and op_detail list every type and op.");
    return true;
}

static bool rule_memory_peak(const nnp_findings_t *f, finding_t *d)
{
    double pct = pct_of(f->mem_peak_bytes, f->mem_capacity_bytes);
    if (!(isfinite(pct) && pct >= MEM_PEAK_PCT_MIN))
        return false;
    d->title = "Peak device memory is close to the capacity";
    ev_num(d, "mem_peak_bytes", f->mem_peak_bytes, WHOLE_DECIMALS);
    ev_num(d, "mem_capacity_bytes", f->mem_capacity_bytes, WHOLE_DECIMALS);
    ev_num(d, "peak_pct_of_capacity", pct, PCT_DECIMALS);
    ev_num(d, "threshold_pct", MEM_PEAK_PCT_MIN, PCT_DECIMALS);
    suggest(d, "A larger batch or input, or fragmentation, may run out of memory. Gain "
               "headroom with recomputation, mixed precision or a smaller batch.");
    return true;
}

static bool rule_flops_under_peak(const nnp_findings_t *f, finding_t *d)
{
    double pct = pct_of(f->achieved_flops_per_s, f->peak_flops_per_s);
    if (!(isfinite(pct) && pct < FLOPS_PEAK_PCT_MIN))
        return false;
    d->title = "The ops with FLOPs run far under the device peak";
    ev_num(d, "achieved_flops_per_s", f->achieved_flops_per_s, WHOLE_DECIMALS);
    ev_num(d, "peak_flops_per_s", f->peak_flops_per_s, WHOLE_DECIMALS);
    ev_num(d, "achieved_pct_of_peak", pct, PCT_DECIMALS);
    ev_num(d, "threshold_pct", FLOPS_PEAK_PCT_MIN, PCT_DECIMALS);
    snprintf(d->suggestion, sizeof(d->suggestion),
             "Small or memory-bound ops waste the device. Use larger batches, fused or "
             "mixed-precision kernels, and look at the ops with the lowest GFLOPS in flops_%d.txt.",
             d->rank);
    return true;
}

static bool rule_dynamic_shape(const nnp_findings_t *f, finding_t *d)
{
    if (f->n_dynamic_ops == 0)
        return false;
    d->title = "Op input shapes change between steps";
    ev_num(d, "n_dynamic_ops", (double)f->n_dynamic_ops, WHOLE_DECIMALS);
    snprintf(d->suggestion, sizeof(d->suggestion),
             "Each new shape may compile a new graph or pick new kernels. Pad inputs to a few "
             "fixed sizes (bucketing); dynamic_shape_info_%d.json lists the ops and their shapes "
             "per step.",
             d->rank);
    return true;
}

static bool rule_gpu_idle(const nnp_findings_t *f, finding_t *d)
{
    if (!(isfinite(f->gpu_busy_pct) && f->gpu_busy_pct < GPU_BUSY_PCT_MIN))
        return false;
    d->title = "The GPU is idle for much of the run: it waits for the host";
    ev_num(d, "gpu_busy_pct", f->gpu_busy_pct, PCT_DECIMALS);
    ev_num(d, "threshold_pct", GPU_BUSY_PCT_MIN, PCT_DECIMALS);
    ev_num_opt(d, "avg_launch_delay_us", f->gpu_launch_delay_us, PCT_DECIMALS);
    snprintf(d->suggestion, sizeof(d->suggestion),
             "Many short kernels launched one by one leave the device waiting for the host. "
             "Fuse kernels, use CUDA graphs or larger batches, and check the gaps between "
             "kernels in gpu_timeline_display_%d.json.",
             d->rank);
    return true;
}

static bool rule_gpu_sync(const nnp_findings_t *f, finding_t *d)
{
    if (!(isfinite(f->gpu_sync_pct) && f->gpu_sync_pct > GPU_SYNC_PCT_MAX))
        return false;
    d->title = "The host spends much time waiting in CUDA synchronizations";
    ev_num(d, "sync_pct_of_device_span", f->gpu_sync_pct, PCT_DECIMALS);
    ev_num(d, "threshold_pct", GPU_SYNC_PCT_MAX, PCT_DECIMALS);
    suggest(d, "Each cudaStreamSynchronize, cudaDeviceSynchronize or blocking copy stops the "
               "host from queueing work. Remove synchronizations in the step (.item(), "
               "printing tensors, host reads of device values) or move them out of the loop.");
    return true;
}

static bool rule_gpu_pageable_copies(const nnp_findings_t *f, finding_t *d)
{
    if (f->gpu_pageable_copies == 0)
        return false;
    d->title = "Copies between host and device use pageable host memory";
    ev_num(d, "pageable_copies", (double)f->gpu_pageable_copies, WHOLE_DECIMALS);
    ev_num(d, "pageable_bytes", (double)f->gpu_pageable_bytes, WHOLE_DECIMALS);
    suggest(d, "A copy from or to pageable memory is staged by the driver and cannot overlap "
               "with compute. Allocate host buffers pinned (cudaMallocHost, pin_memory=True).");
    return true;
}

static bool rule_gpu_dropped(const nnp_findings_t *f, finding_t *d)
{
    if (f->gpu_dropped_records == 0)
        return false;
    d->title = "CUPTI dropped device activity records: GPU results undercount";
    ev_num(d, "dropped_records", (double)f->gpu_dropped_records, WHOLE_DECIMALS);
    suggest(d, "The activity buffers filled faster than they were drained. Profile fewer "
               "steps per window (start/stop around the steps of interest).");
    return true;
}

/* The rules in table order (docs/OUTPUTS.md "Advisor"): the order of findings of one
 * severity. */
typedef struct rule {
    const char *id;
    severity_t sev;
    bool (*fire)(const nnp_findings_t *f, finding_t *d);
} rule_t;

static const rule_t rules[] = {
    {"iteration_interval", SEV_WARNING, rule_iteration_interval},
    {"device_queue_empty", SEV_WARNING, rule_device_queue_empty},
    {"cpu_busy", SEV_WARNING, rule_cpu_busy},
    {"pipeline_bottleneck", SEV_WARNING, rule_pipeline_bottleneck},
    {"tail_communication", SEV_WARNING, rule_tail_communication},
    {"top_op_types", SEV_INFO, rule_top_op_types},
    {"memory_peak", SEV_WARNING, rule_memory_peak},
    {"flops_under_peak", SEV_WARNING, rule_flops_under_peak},
    {"dynamic_shape", SEV_INFO, rule_dynamic_shape},
    {"gpu_idle", SEV_WARNING, rule_gpu_idle},
    {"gpu_sync", SEV_WARNING, rule_gpu_sync},
    {"gpu_pageable_copies", SEV_INFO, rule_gpu_pageable_copies},
    {"gpu_dropped_records", SEV_WARNING, rule_gpu_dropped},
};
#define N_RULES NNP_ARRAY_LEN(rules)

/* Applies every rule; the findings come out by severity, then rule order. */
static size_t apply_rules(const nnp_findings_t *f, int rank, finding_t *out, size_t *n_by_sev)
{
    size_t n = 0;
    for (int sev = 0; sev < SEV_COUNT; sev++) {
        n_by_sev[sev] = 0;
        for (size_t r = 0; r < N_RULES; r++) {
            finding_t *d = &out[n];
            if (rules[r].sev != (severity_t)sev)
                continue;
            memset(d, 0, sizeof(*d));
            d->id = rules[r].id;
            d->sev = rules[r].sev;
            d->rank = rank;
            if (rules[r].fire(f, d)) {
                n++;
                n_by_sev[sev]++;
            }
        }
    }
    return n;
}

/* ---- writing ---- */

static int write_json(const nnp_actx_t *c, const finding_t *v, size_t n)
{
    nnp_outfile_t of;
    nnp_jw_t w;
    char name[NNP_PATH_MAX];
    int rc;
    snprintf(name, sizeof(name), "advice_%d.json", c->rank);
    rc = nnp__out_open(&of, c->out_dir, name);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__jw_init(&w, of.fd, c->pretty, 0);
    if (rc == NNP_OK) {
        nnp__jw_obj_begin(&w);
        nnp__jw_key(&w, "findings");
        nnp__jw_arr_begin(&w);
        for (size_t i = 0; i < n; i++) {
            nnp__jw_obj_begin(&w);
            nnp__jw_key(&w, "id");
            nnp__jw_str(&w, v[i].id);
            nnp__jw_key(&w, "severity");
            nnp__jw_str(&w, severity_names[v[i].sev]);
            nnp__jw_key(&w, "title");
            nnp__jw_str(&w, v[i].title);
            nnp__jw_key(&w, "evidence");
            nnp__jw_obj_begin(&w);
            for (size_t e = 0; e < v[i].n_ev; e++) {
                nnp__jw_key(&w, v[i].ev[e].key);
                if (v[i].ev[e].is_str)
                    nnp__jw_str(&w, v[i].ev[e].val);
                else
                    nnp__jw_raw(&w, v[i].ev[e].val);
            }
            nnp__jw_obj_end(&w);
            nnp__jw_key(&w, "suggestion");
            nnp__jw_str(&w, v[i].suggestion);
            nnp__jw_obj_end(&w);
        }
        nnp__jw_arr_end(&w);
        nnp__jw_obj_end(&w);
        nnp__jw_line_end(&w);
        rc = nnp__jw_flush(&w);
    }
    nnp__jw_fini(&w);
    return nnp__out_commit(&of, rc);
}

/* A bounded text buffer; appends past the cap are cut and remembered. */
typedef struct text {
    char *buf;
    size_t len, cap;
    bool cut;
} text_t;

static void text_add(text_t *t, const char *fmt, ...) NNP_PRINTF(2, 3);
static void text_add(text_t *t, const char *fmt, ...)
{
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= t->cap - t->len) {
        t->cut = true;
        t->len = t->cap - 1;
    } else {
        t->len += (size_t)n;
    }
}

/* One paragraph per finding: a heading line, its evidence, its suggestion. */
static void text_findings(text_t *t, int rank, const finding_t *v, size_t n, const size_t *n_by_sev)
{
    if (n == 0) {
        text_add(t,
                 "nnprof advice for rank %d: no findings (no rule fired, or the data its "
                 "rules need was not recorded).\n",
                 rank);
        return;
    }
    text_add(t, "nnprof advice for rank %d: %zu finding%s (%zu warning%s, %zu info).\n", rank, n,
             n == 1 ? "" : "s", n_by_sev[SEV_WARNING], n_by_sev[SEV_WARNING] == 1 ? "" : "s",
             n_by_sev[SEV_INFO]);
    for (size_t i = 0; i < n; i++) {
        text_add(t, "\n%zu. [%s] %s (%s)\n   Evidence: ", i + 1, severity_names[v[i].sev],
                 v[i].title, v[i].id);
        for (size_t e = 0; e < v[i].n_ev; e++)
            text_add(t, v[i].ev[e].is_str ? "%s%s = \"%s\"" : "%s%s = %s", e ? ", " : "",
                     v[i].ev[e].key, v[i].ev[e].val);
        text_add(t, ".\n   Suggestion: %s\n", v[i].suggestion);
    }
}

static int write_txt(const nnp_actx_t *c, const finding_t *v, size_t n, const size_t *n_by_sev)
{
    nnp_outfile_t of;
    char name[NNP_PATH_MAX];
    text_t t = {NULL, 0, (N_RULES + 1) * TXT_PARAGRAPH_MAX, false};
    int rc;
    t.buf = nnp__malloc(t.cap);
    if (!t.buf)
        return nnp__fail(NNP_ENOMEM, "out of memory in the advisor");
    t.buf[0] = '\0';
    text_findings(&t, c->rank, v, n, n_by_sev);
    /* The cap holds every rule's longest paragraph, so a cut is a bug, not input. */
    NNP_ASSERT(!t.cut);
    snprintf(name, sizeof(name), "advice_%d.txt", c->rank);
    rc = nnp__out_open(&of, c->out_dir, name);
    if (rc == NNP_OK)
        rc = nnp__out_commit(&of, nnp__write_all(of.fd, t.buf, t.len));
    nnp__free(t.buf);
    return rc;
}

int nnp__advisor_write(const nnp_actx_t *c, const nnp_findings_t *f)
{
    size_t n_by_sev[SEV_COUNT], n;
    finding_t *v = nnp__calloc(N_RULES, sizeof(finding_t));
    int rc;
    if (!v)
        return nnp__fail(NNP_ENOMEM, "out of memory in the advisor");
    n = apply_rules(f, c->rank, v, n_by_sev);
    rc = write_json(c, v, n);
    if (rc == NNP_OK)
        rc = write_txt(c, v, n, n_by_sev);
    nnp__free(v);
    return rc;
}

size_t nnp__advisor_eval(const nnp_findings_t *f, int rank, nnp_advice_item_t *out, size_t cap)
{
    size_t n_by_sev[SEV_COUNT], n, k = 0;
    finding_t *v = nnp__calloc(N_RULES, sizeof(finding_t));
    if (!v)
        return 0;
    n = apply_rules(f, rank, v, n_by_sev);
    for (size_t i = 0; i < n && k < cap; i++, k++) {
        nnp_advice_item_t *o = &out[k];
        size_t len = 0;
        o->id = v[i].id;
        o->title = v[i].title;
        o->severity = severity_names[v[i].sev];
        o->is_warning = v[i].sev == SEV_WARNING;
        o->evidence[0] = '\0';
        for (size_t e = 0; e < v[i].n_ev && len < sizeof(o->evidence); e++) {
            int w = snprintf(o->evidence + len, sizeof(o->evidence) - len,
                             v[i].ev[e].is_str ? "%s%s = \"%s\"" : "%s%s = %s", e ? ", " : "",
                             v[i].ev[e].key, v[i].ev[e].val);
            len = w < 0 ? len : len + (size_t)w;
        }
        nnp__strlcpy(o->suggestion, v[i].suggestion, sizeof(o->suggestion));
    }
    nnp__free(v);
    return k;
}
