/* nnprof_torch.h - the C interface of the PyTorch shim (libnnprof_torch.so), called by the
 * Python package (python/nnprof/torch.py, through ctypes) and usable from C/C++ programs
 * that embed libtorch. The shim registers a global at::RecordFunction callback while a
 * collection window is open and records every op through libnnprof's public recording
 * calls (docs/TORCH.md). Everything here is set-up time: none of it is a hot path.
 */
#ifndef NNPROF_TORCH_H
#define NNPROF_TORCH_H

#include <stdbool.h>
#include <stdint.h>

#include "nnprof/nnprof.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the shim records while a window is open. Plain data; fill with
 * nnp_torch_config_init() and change fields. */
typedef struct nnp_torch_config {
    bool record_shapes;   /* input shapes and dtypes of every op (torch's record_shapes) */
    bool profile_memory;  /* c10 allocations and frees of the window's thread */
    bool with_flops;      /* FLOPs of the ops torch computes them for (needs inputs) */
    bool with_modules;    /* op names carry the module path pushed by nnp_torch_scope_push */
    bool auto_steps;      /* each interval between two optimizer steps is a step */
    nnp_str_t comm_group; /* group of collectives (e.g. "default_pg(ranks=0-1)"), 0 = none */
} nnp_torch_config_t;

/* Counters of anomalies, for tests and reports. */
typedef struct nnp_torch_stats {
    uint64_t windows;            /* windows during which the callbacks were installed */
    uint64_t depth_overflow;     /* ops not recorded: nesting deeper than the shim's stack */
    uint64_t unmatched_ends;     /* end callbacks without their start (window opened between) */
    uint64_t flops_errors;       /* ops whose FLOPs torch could not compute */
    uint64_t hook_errors;        /* torch exceptions met in a window hook (logged) */
    uint64_t memory_threads;     /* windows whose memory reporter could not be installed */
    uint64_t stack_nodes_capped; /* with_stack: frames past the stack tree's size, which
                                  * share their caller's stack */
} nnp_torch_stats_t;

/* Fills *c with the defaults: everything off, no group. */
void nnp_torch_config_init(nnp_torch_config_t *c);

/* Registers the shim as the "torch" collector of libnnprof (once; later calls return
 * NNP_OK). If a window is open, recording starts at once. Returns NNP_OK or the error of
 * nnp_collector_register(). */
int nnp_torch_init(void);

/* Replaces the configuration. It takes effect at the next window start (a change while a
 * window is open re-installs the callbacks at once). Returns NNP_OK or NNP_EINVAL. */
int nnp_torch_configure(const nnp_torch_config_t *c);

/* Copies the current configuration into *out. */
void nnp_torch_get_config(nnp_torch_config_t *out);

/* Module path of the calling thread, for with_modules. nnp_torch_scope_handle() turns a
 * path ("Net/layer1/0/conv1", copied) into a small handle once (it takes a lock; cache
 * it); push the handle when a module's forward starts and pop when it ends. Ops started
 * meanwhile on this thread are named "<path>/<op name>" (their type stays the op name).
 * Nesting beyond the shim's limit is counted so pops stay balanced. Handle 0 = no path. */
uint32_t nnp_torch_scope_handle(const char *path);
void nnp_torch_scope_push(uint32_t handle);
void nnp_torch_scope_pop(void);

/* Fills *out with the counters so far. */
void nnp_torch_get_stats(nnp_torch_stats_t *out);

/* Whether the shim's callbacks are installed right now (a window is open). */
bool nnp_torch_is_active(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NNPROF_TORCH_H */
