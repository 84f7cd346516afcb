/* importers.h - importers of other tools' profiling data into the trace model (issue #7):
 * CANN msprof, MindSpore profiler files, msprof-analyze / torch_npu outputs, PyTorch
 * profiler (Kineto) traces. Each importer
 * finds the inputs it reads under a directory (one per rank) and fills a model from one.
 * The analysis driver tries them after our own raw directories. Importers never abort on
 * a bad file: they log which file, line or key and why, and import the rest. */
#ifndef NNP_IMPORTERS_H
#define NNP_IMPORTERS_H

#include <stdbool.h>

#include "model/model.h"
#include "nnprof/nnprof.h"

/* One rank's worth of foreign data, as an importer found it. */
typedef struct nnp_foreign_input {
    char path[NNP_PATH_MAX]; /* what import() is given: a directory or a file */
    int rank;                /* -1 when only import() can tell */
} nnp_foreign_input_t;

typedef struct nnp_importer {
    const char *name; /* "cann-msprof", "mindspore", "torch_npu", "pytorch-kineto" */
    /* Appends the inputs this importer reads under dir (dir itself or below, at most two
     * levels) to out, at most cap; returns how many it added (0 when none), -1 on error. */
    int (*find)(const char *dir, nnp_foreign_input_t *out, int cap);
    /* Fills m (initialised, empty) from one input: times in ns, m->info.rank_id and
     * source_format set. Does NOT call nnp__model_finish (the driver does). Returns NNP_OK
     * (also when some files were bad: logged), or an error when nothing could be read. */
    int (*import)(const char *input, nnp_model_t *m);
} nnp_importer_t;

/* info.source_format of PyTorch profiler traces (import_kineto.c): the analyses that count
 * as torch does test it (op_table.c, hta.c). */
#define NNP_KINETO_SOURCE_FORMAT "pytorch-kineto"
/* Whether m was read from a PyTorch trace (Kineto's or the legacy profiler's). */
bool nnp__is_kineto_model(const nnp_model_t *m);
/* The name torch's key_averages() gives every "ProfilerStep#N" (_rewrite_name in
 * torch/autograd/profiler_util.py); interned by the Kineto importer with its first step. */
#define NNP_TORCH_STEP_KEY "ProfilerStep*"

/* NULL-terminated list, in the order the driver tries them (importers.c). */
extern const nnp_importer_t *const nnp__importers[];

extern const nnp_importer_t nnp__importer_cann;
extern const nnp_importer_t nnp__importer_mindspore;
extern const nnp_importer_t nnp__importer_torch_npu;
extern const nnp_importer_t nnp__importer_kineto;

#endif /* NNP_IMPORTERS_H */
