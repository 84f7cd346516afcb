/* raw_import.h - importer of our own raw directories (PROF_*) into the trace model. */
#ifndef NNP_RAW_IMPORT_H
#define NNP_RAW_IMPORT_H

#include "model/model.h"

/* Reads raw_dir (info.json, meta.nnp, data files) into m, which must be initialised and
 * empty. Damage in the raw files is logged and counted in m->info, not fatal. Returns
 * NNP_OK, NNP_ENOENT (not a raw directory) or NNP_ENOMEM. Sorts the tables at the end. */
int nnp__import_raw(const char *raw_dir, nnp_model_t *m);

#endif /* NNP_RAW_IMPORT_H */
