/* sqlite.h - SQLite export of a run (issue #6): records, strings, ranks, steps and the
 * analysis results in one database (docs/SQLITE.md). Used by `nnprof export sqlite`. */
#ifndef NNP_EXPORT_SQLITE_H
#define NNP_EXPORT_SQLITE_H

#include <stdint.h>

/* Database name used when no path is given: inside the exported directory. */
#define NNP_SQLITE_DEFAULT_NAME "nnprof.db"

/* Exports every rank found under dir (our raw directories) into db_path (NULL or "":
 * dir/NNP_SQLITE_DEFAULT_NAME), created mode 0600 and replaced atomically. rows_out (may be NULL)
 * receives the rows inserted. Returns NNP_OK or an error with a message naming the file and the
 * reason. */
int nnp__export_sqlite(const char *dir, const char *db_path, uint64_t *rows_out);

#endif /* NNP_EXPORT_SQLITE_H */
