/* import_torch_npu.c - importer (issue #7). STUB until implemented: finds nothing. */
#include "nnprof/nnprof.h"
#include "read/importers.h"

static int find(const char *dir, nnp_foreign_input_t *out, int cap)
{
    (void)dir;
    (void)out;
    (void)cap;
    return 0;
}

static int import(const char *input, nnp_model_t *m)
{
    (void)input;
    (void)m;
    return NNP_ENOTSUP;
}

const nnp_importer_t nnp__importer_torch_npu = {"torch_npu", find, import};
