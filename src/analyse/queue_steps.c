/* queue_steps.c - the data queues per step (MindInsight's "iteration gap" tab): for each
 * analysed step, the device queue's size when the step fetched its batch and the host
 * queue feeding it at that moment, and which stage made the step wait. Writes
 * minddata_step_queue_{rank}.csv (docs/OUTPUTS.md "Data queues per step") when the run has
 * device-queue samples and steps; otherwise no file (a re-run removes an earlier one). The
 * host queue is sampled on its own schedule, so its size is its latest sample at or before
 * the device fetch.
 *
 * Rules (MindSpore's profiler guide, seed 001, "iteration gap"): a device queue of size 0
 * makes the step wait for data. Then an empty host queue too means data processing is
 * slow ("data_process"); a host queue that still had batches means sending them to the
 * device is slow ("data_transfer"). */
#include <stdio.h>
#include <string.h>

#include "analyse/analyse.h"
#include "util/csv_writer.h"

static const char *const header[] = {"step_num",
                                     "device_queue_size",
                                     "device_queue_capacity",
                                     "host_queue_size",
                                     "host_queue_capacity",
                                     "bottleneck",
                                     NULL};

static bool has_samples(const nnp_model_t *m, int64_t id)
{
    for (size_t i = 0; i < m->queues.t.n; i++) {
        if (m->queues.op_id[i] == id)
            return true;
    }
    return false;
}

/* Lowest op id whose parent is parent. */
static bool lowest_child(const nnp_model_t *m, int64_t parent, int64_t *id)
{
    bool found = false;
    for (size_t i = 0; i < m->pipe_ops.t.n; i++) {
        if (m->pipe_ops.parent_id[i] != parent || (found && m->pipe_ops.op_id[i] >= *id))
            continue;
        *id = m->pipe_ops.op_id[i];
        found = true;
    }
    return found;
}

/* The host queue is the last connector before the device: the root op's output queue
 * (parent -1, lowest id with several roots), or, when the root is the device-queue op
 * itself (MindSpore's DeviceQueueOp, which has no connector of its own), the output queue
 * of its first child: the queue DeviceQueueOp sends from. */
static bool host_queue_op(const nnp_model_t *m, int64_t *id)
{
    int64_t root = 0;
    if (!lowest_child(m, -1, &root))
        return false;
    if (has_samples(m, root) || !lowest_child(m, root, id))
        *id = root;
    return true;
}

int nnp__queue_steps_write(const nnp_actx_t *c, const nnp_step_trace_t *st)
{
    const nnp_model_t *m = c->m;
    const nnp_queue_samples_t *q = &m->queues;
    char name[64];
    nnp_outfile_t f;
    nnp_csv_t w;
    int64_t root = 0;
    bool has_root = host_queue_op(m, &root), has_device = false;
    size_t dev = 0, scan = 0, last_root = SIZE_MAX;
    int rc;

    for (size_t i = 0; i < q->t.n && !has_device; i++)
        has_device = q->op_id[i] == -1;
    if (!has_device || !st->n) {
        nnp__output_remove_stale(c, "minddata_step_queue_", ".csv");
        return NNP_OK;
    }
    snprintf(name, sizeof(name), "minddata_step_queue_%d.csv", c->rank);
    rc = nnp__out_open(&f, c->out_dir, name);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__csv_init(&w, f.fd);
    if (rc != NNP_OK) {
        nnp__csv_fini(&w);
        return nnp__out_commit(&f, rc);
    }
    nnp__csv_header(&w, header);
    /* Samples are in time order and steps in begin order: one forward sweep each. scan
     * passes every sample once; last_root is the latest root sample at or before it. */
    for (size_t s = 0; s < st->n; s++) {
        const nnp_step_row_t *r = &st->rows[s];
        size_t d = SIZE_MAX, h = SIZE_MAX;
        int64_t at;
        while (dev < q->t.n && (q->op_id[dev] != -1 || q->ts_ns[dev] < r->start_point_ns))
            dev++;
        if (dev < q->t.n && q->ts_ns[dev] < r->end_ns)
            d = dev;
        at = d != SIZE_MAX ? q->ts_ns[d] : r->end_ns - 1;
        for (; has_root && scan < q->t.n && q->ts_ns[scan] <= at; scan++) {
            if (q->op_id[scan] == root)
                last_root = scan;
        }
        h = last_root; /* the host queue's latest known size (it is sampled on its own clock) */
        nnp__csv_uint(&w, r->step_id);
        if (d != SIZE_MAX) {
            nnp__csv_uint(&w, q->size[d]);
            nnp__csv_uint(&w, q->capacity[d]);
        } else {
            nnp__csv_empty(&w);
            nnp__csv_empty(&w);
        }
        if (h != SIZE_MAX) {
            nnp__csv_uint(&w, q->size[h]);
            nnp__csv_uint(&w, q->capacity[h]);
        } else {
            nnp__csv_empty(&w);
            nnp__csv_empty(&w);
        }
        if (d == SIZE_MAX || q->size[d] > 0)
            nnp__csv_str(&w, "");
        else if (h == SIZE_MAX)
            nnp__csv_str(&w, "unknown");
        else
            nnp__csv_str(&w, q->size[h] == 0 ? "data_process" : "data_transfer");
        nnp__csv_end_row(&w);
    }
    return nnp__out_commit(&f, nnp__csv_fini(&w));
}
