/* kineto_gpu.c - device activity in the Kineto export (kineto_internal.h): kernels, copies
 * and memory sets as libkineto writes its CUPTI activities ("kernel", "gpu_memcpy",
 * "gpu_memset" on pid = device, tid = stream, with "device", "stream", "correlation" and
 * "External id"), the CUDA calls that queued them ("cuda_runtime", "cuda_driver") on their
 * host thread, blocking waits as Kineto writes CUPTI's synchronizations ("cuda_sync" on the
 * device and stream; only when asked, as Kineto's enable_cuda_sync_events: HTA takes a
 * stream's events for GPU work), and an "ac2g" flow from each call to its device work.
 * "correlation" is the launch id both sides carry (model.h: CUPTI's correlation id in our
 * captures), which HTA joins on; "External id" is the op's that ran the call, which TensorBoard and
 * HTA use to give an op its kernels. Names of copies and sets are Kineto's ("Memcpy HtoD (Pageable
 * -> Device)", "Memset (Device)": analyse/kineto_names.c, which HTA's view of our captures
 * shares), which HTA's kernel types read ("memcpy", "memset" in the name). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "analyse/kineto_names.h"
#include "export/kineto_internal.h"

/* The dtype an NCCL kernel's size is written in when it is known in bytes only. */
#define BYTE_DTYPE "Byte"

/* A label "GPU 4294967295" / "stream 4294967295". */
#define LABEL_MAX 32

bool nnp__kx_comm_on_device(const kx_t *x, size_t i)
{
    return nnp__is_nccl_kernel(str(x, x->m->comms.name[i]));
}

/* The "External id" of the op that ran under corr, 0 when none was written. */
static uint64_t op_external_id(const kx_t *x, const nnp_op_index_t *ops, uint64_t corr)
{
    size_t op = x->op_ext ? nnp__op_index_find(ops, corr) : SIZE_MAX;
    return op == SIZE_MAX ? 0 : x->op_ext[op];
}

/* An NCCL kernel as Kineto writes it: a "kernel" on the device and its stream, with the
 * collective's args as PyTorch gives them ("Collective name", "In msg nelems" and "dtype",
 * "Process Group Name"). Our record has the size in bytes: "In msg nelems" counts bytes of
 * dtype "Byte", which gives readers (our importer, TensorBoard) the same bytes. Its launch
 * (call row l, SIZE_MAX none) gives "correlation" and the op's "External id", as for any
 * kernel: HTA keeps only GPU events linked to a launch once a trace has two steps. */
static void write_nccl(kx_t *x, const nnp_op_index_t *ops, size_t i, size_t l)
{
    const nnp_comms_t *c = &x->m->comms;
    uint64_t ext = l == SIZE_MAX ? 0 : op_external_id(x, ops, x->m->calls.corr[l]);
    event_begin(x, "X", "kernel", str(x, c->name[i]), x->device, c->stream_id[i], c->start_ns[i]);
    key_dur(x, c->start_ns[i], c->end_ns[i]);
    nnp__jw_key(&x->w, "args");
    nnp__jw_obj_begin(&x->w);
    if (ext)
        key_uint(x, "External id", ext);
    key_uint(x, "device", x->device);
    key_uint(x, "stream", c->stream_id[i]);
    if (c->launch[i])
        key_uint(x, "correlation", c->launch[i]);
    key_str(x, "Collective name", nnp_comm_kind_name((nnp_comm_kind_t)c->kind[i]));
    if (c->bytes[i]) {
        key_uint(x, "In msg nelems", c->bytes[i]);
        key_str(x, "dtype", BYTE_DTYPE);
    }
    if (c->group[i])
        key_str(x, "Process Group Name", str(x, c->group[i]));
    nnp__jw_obj_end(&x->w);
    nnp__jw_obj_end(&x->w);
}

static void write_dim3(kx_t *x, const char *key, const uint32_t v[3])
{
    nnp__jw_key(&x->w, key);
    nnp__jw_arr_begin(&x->w);
    for (int j = 0; j < 3; j++)
        nnp__jw_uint(&x->w, v[j]);
    nnp__jw_arr_end(&x->w);
}

static void write_activity(kx_t *x, const nnp_op_index_t *ops, size_t i)
{
    const nnp_kernels_t *k = &x->m->kernels;
    const nnp_kernel_detail_t *d = k->detail ? &k->detail[i] : NULL;
    int64_t dur = k->end_ns[i] >= k->start_ns[i] ? k->end_ns[i] - k->start_ns[i] : 0;
    uint64_t ext = op_external_id(x, ops, k->corr[i]);
    char buf[NNP_KINETO_NAME_MAX];
    const char *name, *cat = nnp__kineto_activity(x->m, i, buf, &name);
    event_begin(x, "X", cat, name, k->device_id[i], k->stream_id[i], k->start_ns[i]);
    key_us(x, "dur", dur);
    nnp__jw_key(&x->w, "args");
    nnp__jw_obj_begin(&x->w);
    if (ext)
        key_uint(x, "External id", ext);
    key_uint(x, "device", k->device_id[i]);
    key_uint(x, "stream", k->stream_id[i]);
    if (k->launch[i])
        key_uint(x, "correlation", k->launch[i]);
    if (d && (d->has & NNP_KDETAIL_LAUNCH)) {
        key_uint(x, "registers per thread", d->registers);
        key_uint(x, "shared memory", (uint64_t)d->static_shared + d->dynamic_shared);
        write_dim3(x, "grid", d->grid);
        write_dim3(x, "block", d->block);
    } else if (d && (d->has & NNP_KDETAIL_COPY)) {
        key_uint(x, "bytes", d->bytes);
        /* Kineto's bandwidth: bytes per ns are GB/s. */
        nnp__jw_key(&x->w, "memory bandwidth (GB/s)");
        nnp__jw_double(&x->w, dur > 0 ? (double)d->bytes / (double)dur : 0.0);
    }
    nnp__jw_obj_end(&x->w);
    nnp__jw_obj_end(&x->w);
}

static const char *call_cat(uint32_t kind)
{
    switch (kind) {
    case NNP_CALL_CUDA_RUNTIME:
        return "cuda_runtime";
    case NNP_CALL_CUDA_DRIVER:
        return "cuda_driver";
    case NNP_CALL_SYNC:
        return "cuda_sync";
    default:
        return NULL; /* other calls (and NVTX, host rows already) have no Kineto category */
    }
}

static void write_call(kx_t *x, const nnp_op_index_t *ops, size_t i, const char *cat)
{
    const nnp_calls_t *c = &x->m->calls;
    uint32_t th = c->thread[i];
    uint64_t ext = op_external_id(x, ops, c->corr[i]);
    event_begin(x, "X", cat, str(x, c->name[i]), thread_pid(x, th), thread_tid(x, th),
                c->start_ns[i]);
    key_dur(x, c->start_ns[i], c->end_ns[i]);
    nnp__jw_key(&x->w, "args");
    nnp__jw_obj_begin(&x->w);
    if (ext)
        key_uint(x, "External id", ext);
    if (c->launch[i])
        key_uint(x, "correlation", c->launch[i]);
    nnp__jw_obj_end(&x->w);
    nnp__jw_obj_end(&x->w);
}

/* libkineto's syncTypeString of a synchronization the CUDA back end named by its CUDA call
 * (translate.c); another name is kept. */
static const char *sync_name(const char *ours)
{
    static const char *const map[][2] = {{"cudaEventSynchronize", "Event Sync"},
                                         {"cudaStreamWaitEvent", "Stream Wait Event"},
                                         {"cudaStreamSynchronize", "Stream Sync"},
                                         {"cudaDeviceSynchronize", "Context Sync"},
                                         {"cudaSynchronize", "Unknown"}};
    for (size_t k = 0; k < sizeof(map) / sizeof(map[0]); k++)
        if (strcmp(ours, map[k][0]) == 0)
            return map[k][1];
    return ours;
}

/* A synchronization as Kineto writes CUPTI's: "cuda_sync" on the device (pid) and the
 * stream waited for (tid), named by its kind, its API call's id as "correlation". */
static void write_sync(kx_t *x, size_t i, uint32_t device)
{
    const nnp_calls_t *c = &x->m->calls;
    const char *name = sync_name(str(x, c->name[i]));
    event_begin(x, "X", "cuda_sync", name, device, c->stream_id[i], c->start_ns[i]);
    key_dur(x, c->start_ns[i], c->end_ns[i]);
    nnp__jw_key(&x->w, "args");
    nnp__jw_obj_begin(&x->w);
    key_str(x, "cuda_sync_kind", name);
    key_uint(x, "stream", c->stream_id[i]);
    if (c->launch[i])
        key_uint(x, "correlation", c->launch[i]);
    key_uint(x, "device", device);
    nnp__jw_obj_end(&x->w);
    nnp__jw_obj_end(&x->w);
}

/* One end of an ac2g flow: "s" at the call, "f" (binding to the enclosing slice) at the
 * device work, the launch id as its id. */
static void write_ac2g(kx_t *x, const char *ph, uint64_t id, uint64_t pid, uint64_t tid,
                       int64_t ts_ns)
{
    event_begin(x, ph, "ac2g", "ac2g", pid, tid, ts_ns);
    key_uint(x, "id", id);
    if (ph[0] == 'f')
        key_str(x, "bp", "e");
    nnp__jw_obj_end(&x->w);
}

/* The ac2g flow from the call that queued device work (calls row l, SIZE_MAX none; launch
 * its launch id) to that work, when the call is one Kineto writes and lies in the exported
 * window. */
static void write_flow(kx_t *x, size_t l, uint64_t launch, uint64_t device, uint64_t stream,
                       int64_t ts_ns)
{
    const nnp_calls_t *c = &x->m->calls;
    if (l == SIZE_MAX || !call_cat(c->kind[l]) || !keep(x, c->start_ns[l]))
        return;
    write_ac2g(x, "s", launch, thread_pid(x, c->thread[l]), thread_tid(x, c->thread[l]),
               c->start_ns[l]);
    write_ac2g(x, "f", launch, device, stream, ts_ns);
}

int nnp__kx_write_gpu(kx_t *x)
{
    const nnp_model_t *m = x->m;
    const nnp_kernels_t *k = &m->kernels;
    const nnp_calls_t *c = &m->calls;
    nnp_op_index_t ops;
    nnp_launch_index_t launches;
    int rc;
    if (k->t.n == 0 && c->t.n == 0 && m->comms.t.n == 0)
        return NNP_OK;
    rc = nnp__op_index_build(m, &ops);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__launch_index_build(m, &launches);
    if (rc != NNP_OK) {
        nnp__op_index_fini(&ops);
        return rc;
    }
    for (size_t i = 0; i < c->t.n; i++) {
        const char *cat = call_cat(c->kind[i]);
        if (!cat || !keep(x, c->start_ns[i]) || (c->kind[i] == NNP_CALL_SYNC && !x->cuda_sync))
            continue;
        if (c->kind[i] == NNP_CALL_SYNC && x->one_device)
            write_sync(x, i, x->device);
        else
            write_call(x, &ops, i, cat);
    }
    for (size_t i = 0; i < k->t.n; i++) {
        if (!keep(x, k->start_ns[i]))
            continue;
        write_activity(x, &ops, i);
        write_flow(x, nnp__launch_index_find(&launches, k->launch[i]), k->launch[i],
                   k->device_id[i], k->stream_id[i], k->start_ns[i]);
    }
    for (size_t i = 0; i < m->comms.t.n; i++) {
        const nnp_comms_t *cm = &m->comms;
        size_t l;
        if (!keep(x, cm->start_ns[i]) || !nnp__kx_comm_on_device(x, i))
            continue;
        l = nnp__launch_index_find(&launches, cm->launch[i]);
        write_nccl(x, &ops, i, l);
        write_flow(x, l, cm->launch[i], x->device, cm->stream_id[i], cm->start_ns[i]);
    }
    nnp__launch_index_fini(&launches);
    nnp__op_index_fini(&ops);
    return NNP_OK;
}

/* ---- lanes, names and device properties ---- */

static int cmp_lane(const void *a, const void *b)
{
    const kx_lane_t *p = a, *q = b;
    if (p->device != q->device)
        return p->device < q->device ? -1 : 1;
    return (p->stream > q->stream) - (p->stream < q->stream);
}

int nnp__kx_gpu_prepare(kx_t *x)
{
    const nnp_kernels_t *k = &x->m->kernels;
    const nnp_comms_t *c = &x->m->comms;
    size_t m = 0, u = 0;
    kx_lane_t *v;
    /* The device of a run whose kernels all ran on one (a rank's usual case): where its
     * synchronizations go, which record no device, and its NCCL kernels. */
    x->one_device = k->t.n > 0;
    for (size_t i = 1; i < k->t.n && x->one_device; i++)
        x->one_device = k->device_id[i] == k->device_id[0];
    x->device = x->one_device ? k->device_id[0] : 0;
    if (k->t.n + c->t.n == 0)
        return NNP_OK;
    v = nnp__malloc((k->t.n + c->t.n) * sizeof(kx_lane_t));
    if (!v)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    for (size_t i = 0; i < k->t.n; i++)
        v[m++] = (kx_lane_t){k->device_id[i], k->stream_id[i]};
    for (size_t i = 0; i < c->t.n; i++)
        if (nnp__kx_comm_on_device(x, i))
            v[m++] = (kx_lane_t){x->device, c->stream_id[i]};
    qsort(v, m, sizeof(kx_lane_t), cmp_lane);
    for (size_t i = 0; i < m; i++)
        if (u == 0 || cmp_lane(&v[u - 1], &v[i]) != 0)
            v[u++] = v[i];
    x->lanes = v;
    x->n_lanes = u;
    return NNP_OK;
}

void nnp__kx_write_gpu_names(kx_t *x)
{
    const kx_lane_t *v = x->lanes;
    char label[LABEL_MAX];
    for (size_t i = 0; i < x->n_lanes; i++) {
        if (i == 0 || v[i].device != v[i - 1].device) {
            snprintf(label, sizeof(label), "GPU %u", v[i].device);
            write_meta_event(x, "process_name", v[i].device, 0, "name", label);
            write_meta_event(x, "process_labels", v[i].device, 0, "labels", label);
        }
        snprintf(label, sizeof(label), "stream %u", v[i].stream);
        write_meta_event(x, "thread_name", v[i].device, v[i].stream, "name", label);
    }
}

void nnp__kx_write_device_properties(kx_t *x)
{
    const nnp_run_info_t *in = &x->m->info;
    const kx_lane_t *v = x->lanes;
    nnp__jw_key(&x->w, "deviceProperties");
    nnp__jw_arr_begin(&x->w);
    for (size_t i = 0; i < x->n_lanes; i++) {
        if (i > 0 && v[i].device == v[i - 1].device)
            continue;
        nnp__jw_obj_begin(&x->w);
        key_uint(x, "id", v[i].device);
        if (in->device_name)
            key_str(x, "name", in->device_name);
        if (in->device_memory_bytes)
            key_uint(x, "totalGlobalMem", in->device_memory_bytes);
        nnp__jw_obj_end(&x->w);
    }
    nnp__jw_arr_end(&x->w);
}
