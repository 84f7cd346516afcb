/* kineto_trace.h - PyTorch profiler (Kineto) trace export of a model (kineto_trace.c),
 * behind nnp_export_kineto() and `nnprof export kineto`. */
#ifndef NNP_KINETO_TRACE_H
#define NNP_KINETO_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"

typedef struct nnp_kineto_opts {
    bool has_steps; /* only events starting within steps step_first..step_last */
    uint64_t step_first, step_last;
    bool pretty;
    bool cuda_sync;            /* synchronizations as "cuda_sync" events (nnp_analyse_options_t's
                                * kineto_cuda_sync) */
    const char *metadata_json; /* a JSON object whose members go to the top level, or NULL;
                                * borrowed for the call */
} nnp_kineto_opts_t;

void nnp__kineto_opts_init(nnp_kineto_opts_t *o);

/* Streams the model as a Kineto trace to fd (the caller keeps fd). Returns NNP_OK,
 * NNP_EINVAL (metadata_json not a JSON object), NNP_ENOMEM or NNP_EIO. */
int nnp__kineto_write(const nnp_model_t *m, int fd, const nnp_kineto_opts_t *o);

#endif /* NNP_KINETO_TRACE_H */
