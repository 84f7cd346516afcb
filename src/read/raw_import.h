/* raw_import.h - importer of our own raw directories (PROF_*) into the trace model. */
#ifndef NNP_RAW_IMPORT_H
#define NNP_RAW_IMPORT_H

#include "model/model.h"

/* info.source_format of a model read from our raw directories. */
#define NNP_RAW_SOURCE_FORMAT "nnprof-raw"

/* Reads raw_dir (info.json, meta.nnp, data files) into m, which must be initialised and
 * empty. Damage in the raw files is logged and counted in m->info, not fatal. Returns
 * NNP_OK, NNP_ENOENT (not a raw directory) or NNP_ENOMEM. Sorts the tables at the end. */
int nnp__import_raw(const char *raw_dir, nnp_model_t *m);

/* Like nnp__import_raw for one rank recorded by several processes: dirs[0] is the rank's
 * own raw directory (its info.json describes the run), dirs[1..n-1] those of its child
 * processes (CONTRACTS.md section 2), whose events join the model with their own pid and
 * thread ids. */
int nnp__import_raw_group(const char *const *dirs, size_t n, nnp_model_t *m);

#endif /* NNP_RAW_IMPORT_H */
