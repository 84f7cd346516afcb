/* kineto_internal.h - what the two halves of the Kineto export share (kineto_trace.c: the
 * host side and the file; kineto_gpu.c: device activity and the calls that queued it): the
 * writer's state and its small writers. Private to src/export/. */
#ifndef NNP_KINETO_INTERNAL_H
#define NNP_KINETO_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "model/model.h"
#include "util/json_writer.h"
#include "util/util.h"

#define NS_PER_US 1000
/* Digits of an int64 plus sign, point and NUL. */
#define NUM_BUF 32

/* A device and one of its streams that device work ran on: a process and a thread of the
 * trace. */
typedef struct kx_lane {
    uint32_t device, stream;
} kx_lane_t;

typedef struct kx {
    const nnp_model_t *m;
    nnp_jw_t w;
    int64_t wall_off_ns; /* add to a monotonic ns time to get wall-clock ns */
    int64_t base_ns;     /* "baseTimeNanoseconds": wall-clock ns that ts 0 stands for */
    bool filter;         /* only events starting in [lo, hi] */
    bool cuda_sync;      /* synchronizations as "cuda_sync" events (else left out) */
    int64_t lo, hi;
    uint64_t pid;
    uint64_t ext_id; /* Kineto's "External id": one per op/annotation, from 1 */
    uint64_t ev_idx; /* Kineto's "Ev Idx": position of the event */
    uint64_t flow_id;
    char *scratch; /* owned: the text of one "Call stack" */
    size_t scratch_cap;
    uint64_t *op_ext; /* owned, NULL without device work: each op row's "External id" (0:
                       * not written), for the calls and kernels it launched */
    /* Where device work goes (nnp__kx_gpu_prepare): the distinct lanes of the kernels and
     * NCCL kernels, sorted (owned, NULL when none); the device of a run whose kernels all
     * ran on one (else 0: NCCL kernels, which record none, go there) and whether there is
     * one such. */
    kx_lane_t *lanes;
    size_t n_lanes;
    uint32_t device;
    bool one_device;
} kx_t;

/* ---- small writers ---- */

/* Wall-clock microseconds with three decimals, exact to the ns (a double would lose the
 * ns of a 16-digit microsecond timestamp). */
static inline void key_us(kx_t *x, const char *key, int64_t ns)
{
    char digits[NUM_BUF], buf[NUM_BUF];
    bool neg = ns < 0;
    uint64_t mag = neg ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    size_t n = nnp__fmt_u64(digits, mag / NS_PER_US), k = 0;
    uint64_t frac = mag % NS_PER_US;
    if (neg)
        buf[k++] = '-';
    memcpy(buf + k, digits, n);
    k += n;
    buf[k++] = '.';
    buf[k++] = (char)('0' + frac / 100);
    buf[k++] = (char)('0' + frac / 10 % 10);
    buf[k++] = (char)('0' + frac % 10);
    buf[k] = '\0';
    nnp__jw_key(&x->w, key);
    nnp__jw_raw(&x->w, buf);
}

static inline void key_uint(kx_t *x, const char *key, uint64_t v)
{
    nnp__jw_key(&x->w, key);
    nnp__jw_uint(&x->w, v);
}

static inline void key_int(kx_t *x, const char *key, int64_t v)
{
    nnp__jw_key(&x->w, key);
    nnp__jw_int(&x->w, v);
}

static inline void key_str(kx_t *x, const char *key, const char *s)
{
    nnp__jw_key(&x->w, key);
    nnp__jw_str(&x->w, s);
}

static inline const char *str(const kx_t *x, uint32_t id)
{
    return nnp__model_str(x->m, id);
}

static inline bool keep(const kx_t *x, int64_t start_ns)
{
    return !x->filter || (start_ns >= x->lo && start_ns <= x->hi);
}

static inline uint64_t thread_tid(const kx_t *x, uint32_t thread)
{
    return thread < x->m->threads.t.n ? x->m->threads.tid[thread] : x->pid;
}

static inline uint64_t thread_pid(const kx_t *x, uint32_t thread)
{
    return thread < x->m->threads.t.n && x->m->threads.pid[thread] ? x->m->threads.pid[thread]
                                                                   : x->pid;
}

/* "dur" of a span in us; an end before its start is 0. */
static inline void key_dur(kx_t *x, int64_t start_ns, int64_t end_ns)
{
    key_us(x, "dur", end_ns >= start_ns ? end_ns - start_ns : 0);
}

/* Opens an event object with ph, cat, name, pid, tid and ts. */
static inline void event_begin(kx_t *x, const char *ph, const char *cat, const char *name,
                               uint64_t pid, uint64_t tid, int64_t ts_ns)
{
    nnp__jw_obj_begin(&x->w);
    key_str(x, "ph", ph);
    key_str(x, "cat", cat);
    key_str(x, "name", name);
    key_uint(x, "pid", pid);
    key_uint(x, "tid", tid);
    key_us(x, "ts", ts_ns + x->wall_off_ns - x->base_ns);
}

/* A metadata ("M") event: process_name, thread_name, ... with one string arg. */
static inline void write_meta_event(kx_t *x, const char *name, uint64_t pid, uint64_t tid,
                                    const char *arg_key, const char *arg)
{
    nnp__jw_obj_begin(&x->w);
    key_str(x, "name", name);
    key_str(x, "ph", "M");
    key_uint(x, "pid", pid);
    key_uint(x, "tid", tid);
    nnp__jw_key(&x->w, "args");
    nnp__jw_obj_begin(&x->w);
    key_str(x, arg_key, arg);
    nnp__jw_obj_end(&x->w);
    nnp__jw_obj_end(&x->w);
}

/* Whether communication op i ran on a device: an NCCL kernel (the CUDA back end records
 * them as collectives named after the kernel, "ncclDevKernel_AllReduce_..."), which the
 * export writes as a GPU "kernel" event (kineto_gpu.c), as Kineto does; other collectives
 * (gloo, MPI, our API) are host spans, "user_annotation". */
bool nnp__kx_comm_on_device(const kx_t *x, size_t i);

/* Fills x's lanes, device and one_device from the model, once per export, before
 * nnp__kx_write_device_properties. NNP_OK or NNP_ENOMEM. */
int nnp__kx_gpu_prepare(kx_t *x);

/* Device activity ("kernel", "gpu_memcpy", "gpu_memset" on pid = device, tid = stream) and
 * the CUDA calls that queued it ("cuda_runtime", "cuda_driver", "cuda_sync"), linked as
 * Kineto links them: "correlation" (the launch id), "External id" (the op's), an "ac2g" flow
 * from each call to its device work. NNP_OK or NNP_ENOMEM. */
int nnp__kx_write_gpu(kx_t *x);

/* Process and thread names of the devices and streams write_gpu uses. */
void nnp__kx_write_gpu_names(kx_t *x);

/* "deviceProperties": one object per device the run's kernels ran on (id, and the name
 * and memory when the run knows them); [] for a run without device work. */
void nnp__kx_write_device_properties(kx_t *x);

#endif /* NNP_KINETO_INTERNAL_H */
