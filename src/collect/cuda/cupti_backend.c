/* cupti_backend.c - the CUDA back end's glue to CUPTI: libnnprof_cuda.so's entry points
 * (InitializeInjection for CUDA_INJECTION64_PATH; a constructor that points
 * CUDA_INJECTION64_PATH at this library when it is preloaded), the collector registration
 * that enables activity kinds when a window opens and drains them before it closes, the
 * activity buffers, and the correlation hooks.
 *
 * Threads: CUPTI asks for buffers from whichever thread fills one, which may be an
 * application thread inside a CUDA call, and hands back full buffers from its own thread.
 * Both callbacks are lock-free: buffers come from a fixed pool (an atomic bit mask; an
 * empty pool makes CUPTI drop and count records, never wait) and completed buffers go on a
 * lock-free stack. A drain thread of ours decodes and translates them, under g.lock, which
 * is only ever taken by that thread, window hooks and exit: never in an application call.
 * Options as MindSpore's GPU profiler: op_time (kernels, copies, API calls), profile_memory
 * (device allocations), profile_framework (NVTX ranges); NNPROF_CUDA=0 turns it all off. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect/cuda/decode.h"
#include "collect/cuda/nccl_wrap.h"
#include "collect/cuda/translate.h"
#include "nnprof/nnprof.h"
#include "util/util.h"

#define NNP_EXPORT __attribute__((visibility("default")))

/* Activity buffers: 32 x 1 MiB. A kernel record is ~200 bytes, so one buffer holds ~5000
 * records; the drain thread empties a buffer within a wake-up, and 32 in flight cover
 * bursts of 150k launches between wake-ups before CUPTI has to drop (and count). 32 MiB is
 * small next to a GPU job's host memory. At most 64 (one bit each in the mask). */
#define BUFFER_BYTES (1u << 20)
#define BUFFERS      32u
/* CUPTI requires 8-byte aligned activity buffers. */
#define BUFFER_ALIGN 8u
/* The drain thread wakes when a buffer completes, and at least this often. */
#define DRAIN_PERIOD_MS 100
/* Pairs of clock readings taken to measure the CUPTI-to-monotonic offset; the tightest
 * bracket wins (used only when CUPTI cannot take our clock). */
#define CLOCK_PAIRS 5
#define MS_NS       1000000ll

typedef struct kind_want {
    CUpti_ActivityKind kind;
    const char *name;
} kind_want_t;

static struct {
    atomic_bool inited, disabled;
    pthread_mutex_t lock; /* translator, enabled kinds; see the file comment */
    nnp_cu_xlate_t *xlate;
    uint8_t *pool;
    _Atomic uint64_t free_mask; /* bit i set: buffer i is free */
    _Atomic uint32_t ready;     /* stack of completed buffers: index + 1, 0 = empty */
    uint32_t next[BUFFERS];     /* stack links */
    size_t valid[BUFFERS];      /* valid bytes of each completed buffer */
    _Atomic uint64_t denied;    /* buffer requests refused (pool empty) */
    sem_t wake;
    pthread_t drainer;
    atomic_bool stop, has_drainer;
    bool own_clock; /* CUPTI stamps with nnp_clock_ns() */
    CUpti_ActivityKind enabled[16];
    size_t n_enabled;
} g = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ---- activity buffers (lock-free: called inside application CUDA calls) ---- */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    uint64_t m = atomic_load_explicit(&g.free_mask, memory_order_acquire);
    *max_records = 0;
    while (m) {
        unsigned i = (unsigned)__builtin_ctzll(m);
        if (atomic_compare_exchange_weak_explicit(&g.free_mask, &m, m & ~(1ull << i),
                                                  memory_order_acq_rel, memory_order_acquire)) {
            *buffer = g.pool + (size_t)i * BUFFER_BYTES;
            *size = BUFFER_BYTES;
            return;
        }
    }
    /* No buffer: CUPTI drops the records and counts them (cuptiActivityGetNumDropped-
     * Records), which the drain reports. Waiting here would stall the application. */
    atomic_fetch_add_explicit(&g.denied, 1, memory_order_relaxed);
    *buffer = NULL;
    *size = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid)
{
    size_t i;
    uint32_t head;
    (void)ctx;
    (void)stream;
    (void)size;
    if (!buffer || buffer < g.pool || buffer >= g.pool + (size_t)BUFFERS * BUFFER_BYTES)
        return;
    i = (size_t)(buffer - g.pool) / BUFFER_BYTES;
    g.valid[i] = valid;
    head = atomic_load_explicit(&g.ready, memory_order_relaxed);
    do {
        g.next[i] = head;
    } while (!atomic_compare_exchange_weak_explicit(&g.ready, &head, (uint32_t)i + 1,
                                                    memory_order_release, memory_order_relaxed));
    sem_post(&g.wake);
}

/* Translates every completed buffer, oldest first, and gives the buffers back. Caller
 * holds g.lock. */
static void drain_locked(void)
{
    uint32_t order[BUFFERS] = {0}, n = 0;
    uint32_t h = atomic_exchange_explicit(&g.ready, 0, memory_order_acquire);
    size_t dropped = 0;

    for (; h && n < BUFFERS; h = g.next[h - 1])
        order[n++] = h - 1;
    while (n-- > 0) {
        uint32_t i = order[n];
        uint8_t *buf = g.pool + (size_t)i * BUFFER_BYTES;
        CUpti_Activity *rec = NULL;
        while (cuptiActivityGetNextRecord(buf, g.valid[i], &rec) == CUPTI_SUCCESS) {
            nnp_cu_activity_t a;
            nnp__cu_decode(rec, &a);
            nnp__cu_xlate_record(g.xlate, &a);
        }
        atomic_fetch_or_explicit(&g.free_mask, 1ull << i, memory_order_release);
    }
    if (cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped) == CUPTI_SUCCESS && dropped)
        nnp__cu_xlate_dropped(g.xlate, dropped);
}

static void *drain_main(void *arg)
{
    sigset_t all;
    (void)arg;
    /* As the writer and sampler: the application's signal handlers never run here. */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    while (!atomic_load(&g.stop)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += DRAIN_PERIOD_MS * MS_NS;
        if (ts.tv_nsec >= 1000 * MS_NS) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000 * MS_NS;
        }
        while (sem_timedwait(&g.wake, &ts) != 0 && errno == EINTR)
            ;
        pthread_mutex_lock(&g.lock);
        drain_locked();
        pthread_mutex_unlock(&g.lock);
    }
    return NULL;
}

/* ---- clocks ---- */

static uint64_t CUPTIAPI our_timestamp(void)
{
    return nnp_clock_ns();
}

/* Offset from CUPTI's clock to CLOCK_MONOTONIC, from the tightest of a few bracketed
 * readings (when CUPTI would not take our clock as its timestamp source). */
static int64_t measure_offset(void)
{
    int64_t best = 0, best_width = INT64_MAX;
    for (int k = 0; k < CLOCK_PAIRS; k++) {
        uint64_t t0 = nnp_clock_ns(), c = 0, t1;
        if (cuptiGetTimestamp(&c) != CUPTI_SUCCESS)
            return 0;
        t1 = nnp_clock_ns();
        if ((int64_t)(t1 - t0) < best_width) {
            best_width = (int64_t)(t1 - t0);
            best = (int64_t)(t0 + (t1 - t0) / 2) - (int64_t)c;
        }
    }
    return best;
}

/* ---- windows ---- */

static void enable(CUpti_ActivityKind kind, const char *name)
{
    CUptiResult r = cuptiActivityEnable(kind);
    if (r != CUPTI_SUCCESS) {
        const char *why = "?";
        cuptiGetResultString(r, &why);
        NNP_LOG_W("cuda: cannot enable CUPTI %s activity: %s", name, why);
        return;
    }
    if (g.n_enabled < NNP_ARRAY_LEN(g.enabled))
        g.enabled[g.n_enabled++] = kind;
}

/* The buffer pool and the drain thread, made at the first window (a CUDA process that is
 * never profiled pays for neither). Caller holds g.lock. */
static int ensure_buffers(void)
{
    if (g.pool)
        return NNP_OK;
    g.pool = nnp__aligned_alloc(BUFFER_ALIGN, (size_t)BUFFERS * BUFFER_BYTES);
    if (!g.pool)
        return nnp__fail(NNP_ENOMEM, "cuda: no memory for %u activity buffers", BUFFERS);
    atomic_store(&g.free_mask, BUFFERS == 64 ? ~0ull : (1ull << BUFFERS) - 1);
    if (pthread_create(&g.drainer, NULL, drain_main, NULL) == 0)
        atomic_store(&g.has_drainer, true);
    else
        NNP_LOG_W("cuda: no drain thread: buffers are translated when a window closes");
    return NNP_OK;
}

static int window_start(void *user)
{
    static const kind_want_t op_kinds[] = {
        {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL"},
        {CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"},
        {CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2"},
        {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"},
        {CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME"},
        {CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER"},
        {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION"},
        {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "EXTERNAL_CORRELATION"}};
    nnp_options_t o;
    (void)user;

    if (atomic_load(&g.disabled))
        return NNP_OK;
    if (nnp_collect_options(&o) != NNP_OK)
        nnp_options_init(&o);
    pthread_mutex_lock(&g.lock);
    g.n_enabled = 0;
    if (ensure_buffers() != NNP_OK) {
        pthread_mutex_unlock(&g.lock);
        return NNP_ENOMEM;
    }
    if (!g.own_clock)
        nnp__cu_xlate_set_clock(g.xlate, measure_offset());
    if (o.op_time) {
        for (size_t i = 0; i < NNP_ARRAY_LEN(op_kinds); i++)
            enable(op_kinds[i].kind, op_kinds[i].name);
    }
    if (o.profile_memory)
        enable(CUPTI_ACTIVITY_KIND_MEMORY2, "MEMORY2");
    if (o.profile_framework == NNP_FRAMEWORK_ALL || o.profile_framework == NNP_FRAMEWORK_TIME)
        enable(CUPTI_ACTIVITY_KIND_MARKER, "MARKER");
    pthread_mutex_unlock(&g.lock);
    return NNP_OK;
}

/* Stops the kinds, makes CUPTI hand back every buffer (full or not) and translates them
 * while recording is still on. */
static void flush_and_drain(bool disable)
{
    pthread_mutex_lock(&g.lock);
    if (!g.pool) { /* never had a window: nothing was enabled */
        pthread_mutex_unlock(&g.lock);
        return;
    }
    if (disable) {
        for (size_t i = 0; i < g.n_enabled; i++)
            cuptiActivityDisable(g.enabled[i]);
        g.n_enabled = 0;
    }
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    drain_locked();
    nnp__cu_xlate_finish(g.xlate);
    if (atomic_load(&g.denied))
        NNP_LOG_W("cuda: %llu activity buffer requests found the pool of %u x %u KiB empty",
                  (unsigned long long)atomic_exchange(&g.denied, 0), BUFFERS, BUFFER_BYTES / 1024u);
    pthread_mutex_unlock(&g.lock);
}

static void window_stop(void *user)
{
    (void)user;
    if (!atomic_load(&g.disabled))
        flush_and_drain(true);
}

static void session_end(void *user)
{
    (void)user;
}

static const nnp_collector_t g_collector = {"cuda", NULL, window_start, window_stop, session_end};

/* ---- correlation: host ops (CUSTOM0) and NCCL calls (CUSTOM1) ---- */

static void ext_push(uint32_t kind, uint64_t id)
{
    cuptiActivityPushExternalCorrelationId((CUpti_ExternalCorrelationKind)kind, id);
}

static void ext_pop(uint32_t kind)
{
    uint64_t last = 0;
    cuptiActivityPopExternalCorrelationId((CUpti_ExternalCorrelationKind)kind, &last);
}

static void op_push(uint64_t id, void *user)
{
    (void)user;
    ext_push(NNP_CU_EXT_OPS, id);
}

static void op_pop(void *user)
{
    (void)user;
    ext_pop(NNP_CU_EXT_OPS);
}

static const nnp_correlation_hooks_t g_corr_hooks = {op_push, op_pop, NULL};
static const nnp_cu_ext_fns_t g_ext_fns = {ext_push, ext_pop};

/* ---- names ---- */

/* libstdc++'s demangler (C ABI): a malloc'ed string, or NULL when name is not mangled. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static char *demangle(const char *name)
{
    int status = 0;
    char *out;
    if (!name || name[0] != '_' || name[1] != 'Z')
        return NULL;
    out = __cxa_demangle(name, NULL, NULL, &status);
    return status == 0 ? out : NULL;
}

/* ---- start-up and exit ---- */

static void at_exit(void)
{
    if (atomic_load(&g.inited) && !atomic_load(&g.disabled))
        flush_and_drain(false);
    /* The drain thread ends at its next wake-up; nothing waits for it. */
    atomic_store(&g.stop, true);
    if (atomic_load(&g.has_drainer))
        sem_post(&g.wake);
}

/* NVTX calls reach CUPTI (MARKER records) only when NVTX_INJECTION64_PATH names libcupti:
 * the NVTX library reads it at the program's first NVTX call. Set it unless the user chose
 * another NVTX tool. */
static void route_nvtx_to_cupti(void)
{
    Dl_info info;
    if (getenv("NVTX_INJECTION64_PATH"))
        return;
    if (dladdr((void *)(uintptr_t)&cuptiActivityEnable, &info) && info.dli_fname &&
        info.dli_fname[0] == '/')
        setenv("NVTX_INJECTION64_PATH", info.dli_fname, 0);
}

static bool cuda_disabled_by_env(void)
{
    const char *v = getenv("NNPROF_CUDA");
    return v && strcmp(v, "0") == 0;
}

static int init_once(void)
{
    nnp_cu_xlate_config_t cfg = {demangle, nnp__cu_nccl_lookup};
    uint32_t version = 0;
    int rc;

    if (cuda_disabled_by_env()) {
        atomic_store(&g.disabled, true);
        return NNP_OK;
    }
    if (cuptiGetVersion(&version) == CUPTI_SUCCESS && version != CUPTI_API_VERSION)
        NNP_LOG_I("cuda: built with CUPTI API %d, running %u (fields read are common to both)",
                  CUPTI_API_VERSION, version);
    route_nvtx_to_cupti();
    rc = nnp__cu_xlate_create(&cfg, &g.xlate);
    if (rc != NNP_OK)
        return rc;
    if (sem_init(&g.wake, 0, 0) != 0)
        return nnp__fail(NNP_EIO, "cuda: cannot create the drain semaphore");
    /* CUPTI's thread id on Linux is pthread_self() by default (cut to 32 bits in its
     * records), not the OS thread id our recorder and the timeline use: ask for gettid. Seen
     * on an H200 (scripts/gpu-check): calls were on thread 3555201024, the program on 519. */
    if (cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) != CUPTI_SUCCESS)
        NNP_LOG_W("cuda: CUPTI gives pthread ids, not OS thread ids: CUDA calls and NVTX ranges "
                  "will be on threads of their own in the timeline");
    /* Before any kind is enabled (CUPTI's rule): every record then carries our clock. */
    g.own_clock = cuptiActivityRegisterTimestampCallback(our_timestamp) == CUPTI_SUCCESS;
    if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS)
        return nnp__fail(NNP_EIO, "cuda: CUPTI refused the activity buffer callbacks");
    nnp__cu_nccl_set_ext(&g_ext_fns);
    nnp_collector_set_correlation(&g_corr_hooks);
    atexit(at_exit);
    /* Last: if a window is open, its window_start runs now. */
    rc = nnp_collector_register(&g_collector);
    if (rc != NNP_OK)
        NNP_LOG_W("cuda: cannot register the collector: %s", nnp_strerror(rc));
    return NNP_OK;
}

NNP_EXPORT int InitializeInjection(void);

/* Called by the CUDA driver at cuInit when CUDA_INJECTION64_PATH names this library.
 * Returns 1 (the driver's convention for success) even when profiling is off, so the
 * application always runs. */
NNP_EXPORT int InitializeInjection(void)
{
    bool expected = false;
    if (!atomic_compare_exchange_strong(&g.inited, &expected, true))
        return 1;
    if (init_once() != NNP_OK) {
        NNP_LOG_E("cuda: the CUDA back end is off: %s", nnp_last_error());
        atomic_store(&g.disabled, true);
    }
    return 1;
}

/* Preloaded (LD_PRELOAD): have the driver call InitializeInjection at cuInit, unless the
 * user named another injection library. Nothing of CUDA is touched here, so a process
 * that never uses CUDA pays nothing. */
__attribute__((constructor)) static void nnp_cuda_preload(void)
{
    Dl_info info;
    if (cuda_disabled_by_env())
        return;
    route_nvtx_to_cupti();
    if (getenv("CUDA_INJECTION64_PATH"))
        return;
    if (dladdr((void *)(uintptr_t)&InitializeInjection, &info) && info.dli_fname &&
        info.dli_fname[0] == '/')
        setenv("CUDA_INJECTION64_PATH", info.dli_fname, 0);
}
