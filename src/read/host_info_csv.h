/* host_info_csv.h - importer of MindSpore's own host_info_{rank}.csv (written by the
 * framework's C++ profiler, HostDataHeader in debug/profiler/profiling.cc) into the trace
 * model's host rows, so `nnprof analyse DIR` can run host_info.c on a directory that holds
 * only that file. A streaming RFC 4180 reader: one record in memory at a time. */
#ifndef NNP_HOST_INFO_CSV_H
#define NNP_HOST_INFO_CSV_H

#include <stdbool.h>
#include <stddef.h>

#include "model/model.h"

/* The value the importer stores in m->info.source_format (when it was NULL). host_info.c
 * uses it to tell "an empty host_info CSV was imported" (the seed still writes a header-only
 * dataset file) from "this run has no host data" (nothing is written). */
#define NNP_HOST_INFO_CSV_FORMAT "mindspore-host-info"

/* Appends every row of the CSV at path to m->host, in file order (the seed's semantics
 * depend on it), with:
 *   ts_ns = time_stamp(us) * 1000, memory_bytes = memory_usage(kB) * 1024 (0 when <= 0),
 *   kind = start_end (0 begin, 1 end, 2 instant), level, module/event/stage/custom_info
 *   interned, thread = a threads row for (tid, pid, parent_pid).
 * Columns are found by header name, in any order. A row with a missing or non-numeric value
 * is skipped with a warning naming the file, line and column (the seed logs and goes on);
 * the first NNP_HOST_CSV_MAX_WARNINGS are logged, the rest counted in one summary line.
 * Sets m->info.source / source_format when they are NULL. Call nnp__model_finish() after.
 * Returns NNP_OK; NNP_ENOENT / NNP_EIO when the file cannot be read; NNP_ECORRUPT when the
 * header lacks a column or the file ends inside a quoted header; NNP_ENOMEM. Every message
 * (nnp_last_error) names the file and line. Not thread-safe on one model. */
int nnp__import_host_info_csv(const char *path, nnp_model_t *m);

/* Malformed-row warnings logged per file before they are only counted. */
#define NNP_HOST_CSV_MAX_WARNINGS 20

/* Finds host_info_{rank}.csv in dir, dir/host_info or dir/profiler/host_info (the seed's
 * layouts: <output_path>/host_info during a run, <path>/profiler/host_info offline), in
 * that order. *rank on entry: the rank wanted, or < 0 for the lowest rank present; on
 * success it holds the rank found. path (cap bytes) receives the file's path. Returns true
 * when a regular file was found; false (path unspecified) otherwise. */
bool nnp__host_info_csv_find(const char *dir, int *rank, char *path, size_t cap);

#endif /* NNP_HOST_INFO_CSV_H */
