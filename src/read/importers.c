/* importers.c - the registry of foreign-format importers (importers.h). */
#include <stddef.h>

#include "read/importers.h"

const nnp_importer_t *const nnp__importers[] = {
    &nnp__importer_cann,
    &nnp__importer_torch_npu,
    &nnp__importer_kineto,
    &nnp__importer_mindspore,
    NULL,
};
