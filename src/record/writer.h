/* writer.h - the background writer thread: drains every thread buffer into zstd-compressed,
 * checksummed chunks (raw_format.h), rotates data files, ages out the oldest ones under
 * storage_limit, and records clock points, strings, thread names and losses in meta.nnp.
 * One writer per session. All I/O and compression of the recorder happen here. */
#ifndef NNP_WRITER_H
#define NNP_WRITER_H

#include <stdint.h>

#include "nnprof/nnprof.h"

/* Names of the files in a raw directory. */
#define NNP_RAW_META_FILE "meta.nnp"
#define NNP_RAW_DATA_FMT  "data_%06u.nnp"
/* Free space kept on the output disk: below it the oldest data ages out (seed 004:
 * "总空间剩余<=20MB"). */
#define NNP_DISK_RESERVE_BYTES (20ull * 1024 * 1024)

typedef struct nnp_writer nnp_writer_t;

typedef struct nnp_writer_config {
    const char *raw_dir;          /* existing directory, copied */
    int period_ms;                /* drain period */
    uint64_t raw_file_bytes;      /* rotate data files at this size */
    uint64_t storage_limit_bytes; /* raw data of the run stays under this */
} nnp_writer_config_t;

/* Opens meta.nnp and the first data file and starts the thread. */
int nnp__writer_start(const nnp_writer_config_t *cfg, nnp_writer_t **out);
/* Blocks until every record committed before the call (by threads ordered before it) is
 * written. Returns NNP_OK or the writer's sticky I/O error. */
int nnp__writer_flush(nnp_writer_t *w);
/* Async-signal-safe flush for fatal-signal handlers: asks for a drain and waits at most
 * timeout_ms for it (nanosleep polling). Returns 0 when done, -1 on timeout. */
int nnp__writer_flush_from_signal(nnp_writer_t *w, int timeout_ms);
/* Final drain, closes the files, joins the thread and frees w. NULL is a no-op. */
int nnp__writer_stop(nnp_writer_t *w);
/* Current counters (thread-safe). */
void nnp__writer_stats(const nnp_writer_t *w, nnp_stats_t *out);

#endif /* NNP_WRITER_H */
