/* kineto_stacks.h - the Python stack of each op of a PyTorch trace (with_stack), for the
 * Kineto importer (import_kineto.c): from an op's "Call stack" arg (PyTorch 1.8-1.10, our
 * export) or from the "python_function" events around it (PyTorch >= 1.13: one event per
 * Python call, C call or module call). Private to src/read/. */
#ifndef NNP_KINETO_STACKS_H
#define NNP_KINETO_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

/* One "python_function" event: a Python call on a thread of the model. */
typedef struct nnp_kin_py {
    uint32_t thread; /* model thread index, as the ops' */
    uint32_t name;   /* model string id: "file.py(12): f", "nn.Module: Linear_0", ... */
    int64_t start_ns, end_ns;
} nnp_kin_py_t;

/* The python_function events of one trace file (owned arrays). */
typedef struct nnp_kin_stacks {
    nnp_kin_py_t *py;
    size_t n, cap;
} nnp_kin_stacks_t;

/* Op i's stack from a "Call stack" text (frames innermost first, each followed by ';'):
 * the model's text has '\n' between frames; empty frames are dropped. NNP_OK or
 * NNP_ENOMEM. */
int nnp__kin_call_stack(nnp_model_t *m, size_t i, const char *text);

/* Keeps one python_function event. NNP_OK or NNP_ENOMEM. */
int nnp__kin_py_add(nnp_kin_stacks_t *s, uint32_t thread, uint32_t name, int64_t start_ns,
                    int64_t end_ns);

/* Gives each op from first_op on that has no stack yet the names of the python_function
 * events around it on its thread, innermost first ('\n' between): torch's KinetoEvent
 * python stack (the Python events among its ancestors in the event tree, which nests on
 * the events' times). NNP_OK or NNP_ENOMEM. */
int nnp__kin_py_stacks(nnp_kin_stacks_t *s, nnp_model_t *m, size_t first_op);

void nnp__kin_stacks_fini(nnp_kin_stacks_t *s);

#endif /* NNP_KINETO_STACKS_H */
