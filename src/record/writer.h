/* writer.h - the background writer thread: drains every thread buffer into packed (records)
 * or zstd-compressed (meta), checksummed chunks (raw_format.h), rotates data files, ages
 * out the oldest ones under storage_limit, and records clock points, strings, thread names
 * and losses in meta.nnp. One writer per session. All I/O and compression of the recorder
 * happen here. */
#ifndef NNP_WRITER_H
#define NNP_WRITER_H

#include <stdbool.h>
#include <stdint.h>

#include "nnprof/nnprof.h"

/* Names of the files in a raw directory. */
#define NNP_RAW_META_FILE "meta.nnp"
#define NNP_RAW_DATA_FMT  "data_%06u.nnp"
/* Free space kept on the output disk: below it the oldest data ages out (seed 004:
 * "总空间剩余<=20MB"). */
#define NNP_DISK_RESERVE_BYTES (20ull * 1024 * 1024)

typedef struct nnp_writer nnp_writer_t;

/* Creates the raw directory, called on the writer thread before the first file is opened
 * (w: the writer, for its counters). Returns NNP_OK when the directory exists; on failure
 * errno is the failed call's (ENOSPC counts as a full disk) or 0. */
typedef int (*nnp_writer_open_dir_fn)(void *user, const nnp_writer_t *w);

typedef struct nnp_writer_config {
    const char *raw_dir;             /* directory of the files, copied; may not exist yet */
    int period_ms;                   /* drain period */
    uint64_t raw_file_bytes;         /* rotate data files at this size */
    uint64_t storage_limit_bytes;    /* raw data of the run stays under this */
    nnp_writer_open_dir_fn open_dir; /* makes raw_dir exist; NULL when it already does */
    void *open_dir_user;
} nnp_writer_config_t;

/* Starts the thread. Nothing is created on disk until a drain finds records (or losses) to
 * write: then open_dir, meta.nnp and the first data file. */
int nnp__writer_start(const nnp_writer_config_t *cfg, nnp_writer_t **out);
/* Blocks until every record committed before the call (by threads ordered before it) is
 * written. Returns NNP_OK or the writer's sticky I/O error. */
int nnp__writer_flush(nnp_writer_t *w);
/* nnp__writer_flush() that also creates the raw directory and files when nothing was
 * written yet (an empty run, for a caller that hands the directory to the reader). */
int nnp__writer_flush_make(nnp_writer_t *w);
/* Async-signal-safe flush for fatal-signal handlers: asks for a drain and waits at most
 * timeout_ms for it (nanosleep polling). Returns 0 when done, -1 on timeout. */
int nnp__writer_flush_from_signal(nnp_writer_t *w, int timeout_ms);
/* Final drain, closes the files, joins the thread and frees w. NULL is a no-op. */
int nnp__writer_stop(nnp_writer_t *w);
/* Current counters (thread-safe). */
void nnp__writer_stats(const nnp_writer_t *w, nnp_stats_t *out);
/* True once the raw directory and its files exist (thread-safe). */
bool nnp__writer_has_files(const nnp_writer_t *w);
/* In a forked child: releases the child's copy of a writer whose thread stayed in the
 * parent (closes the inherited descriptors, frees the memory; never joins or locks). */
void nnp__writer_forget(nnp_writer_t *w);

#endif /* NNP_WRITER_H */
