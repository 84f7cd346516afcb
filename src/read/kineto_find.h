/* kineto_find.h - which files are PyTorch profiler traces, and their ranks, for the Kineto
 * importer (import_kineto.c; kineto_find.c). Private to src/read/. */
#ifndef NNP_KINETO_FIND_H
#define NNP_KINETO_FIND_H

#include "read/importers.h"

/* The legacy autograd profiler (PyTorch built without Kineto, e.g. Debian's 1.13) writes
 * X events without a category under this pid. */
#define NNP_KINETO_LEGACY_PID "CPU functions"

/* The importer's find(): up to cap traces in dir (a file, a folder of traces, or a folder
 * of such folders), in name order, each with its rank (-1: import() decides). Returns how
 * many. */
int nnp__kin_find(const char *dir, nnp_foreign_input_t *out, int cap);

/* The number after "rank" in a file's name ("rank-3", "rank_3", "rank3"), else -1. */
int nnp__kin_rank_from_name(const char *path);

#endif /* NNP_KINETO_FIND_H */
