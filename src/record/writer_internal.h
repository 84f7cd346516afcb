/* writer_internal.h - the writer's state, shared by writer.c (the thread: draining, flush,
 * start/stop) and writer_files.c (the files: chunks, rotation, aging, failed writes). The
 * writer thread owns every field not marked otherwise; other threads touch only atomics.
 * Internal to src/record/writer*.c. */
#ifndef NNP_WRITER_INTERNAL_H
#define NNP_WRITER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
/* ZSTD_initStaticCCtx (zstd >= 1.3, exported by the shared library): the writer compresses
 * in one workspace allocated at start, so its thread never calls malloc while draining. A
 * context zstd manages itself resizes its workspace now and then (measured: 29 mallocs in
 * 3000 compressions of mixed sizes), and a fork() that lands in such a malloc leaves the
 * child an allocator lock it can never take where the allocator is not fork-safe (ASan's
 * before LLVM 17, some custom allocators): the child then hangs at exit. */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "core/clock.h"
#include "format/raw_format.h"
#include "format/rec_pack.h"
#include "record/writer.h"
#include "util/util.h"

/* Largest batch of slots per RECORDS chunk (256 KiB raw): small enough that one damaged
 * chunk loses little, large enough that what each chunk costs (its header, a packing state
 * started afresh, two write calls) is spread over thousands of records. */
#define CHUNK_MAX_SLOTS 8192u
/* zstd level 1 for the meta chunks (strings, threads, clock points): ~500 MB/s per core.
 * RECORDS chunks are packed instead (NNP_CODEC_PACK, docs/FORMAT.md "Packed records"): zstd
 * level 1 drained ~14 M events per writer CPU-second, packing several times that (bench/
 * README.md). */
#define ZSTD_LEVEL 1
/* A clock point every second bounds tick-to-ns interpolation error to TSC drift over 1 s. */
#define CLOCK_PERIOD_NS NNP_NS_PER_SEC
/* Drops are logged at most once per LOSS_LOG_PERIOD_NS (and once more at the end). */
#define LOSS_LOG_PERIOD_NS NNP_NS_PER_SEC
/* Most bytes a packed chunk of the largest batch takes (rec_pack.h's bound per slot). */
#define PBUF_BYTES ((CHUNK_MAX_SLOTS + NNP_REC_MAX_SLOTS) * NNP_PACK_SLOT_MAX)
/* Buffer fill is measured in parts of FILL_SCALE; the writer sleeps no longer than it takes
 * the fastest-filling buffer, at the rate it filled since the previous drain, to reach
 * FILL_WAKE of FILL_SCALE (a quarter): a buffer sized for the default period then keeps
 * up with a thread recording many times the rate it was sized for. */
#define FILL_SCALE 1024u
#define FILL_WAKE  256u
#define NS_PER_MS  1000000ull
/* Free disk space is checked at most this often (statvfs is a syscall). */
#define DISK_CHECK_PERIOD_NS (NNP_NS_PER_SEC / 4)
/* Upper bound of data files tracked for aging; the oldest entries are the ones removed. */
#define MAX_TRACKED_FILES 65536u
#define SIGNAL_POLL_NS    1000000L
/* Bytes reserved in the scratch buffer for one STRINGS/THREADS/LOSS chunk at a time. */
#define META_BATCH_BYTES (1u << 20)
/* A raw directory that could not be created is tried again at most this often: the cause
 * (permissions, a full disk) rarely goes away within a drain period. */
#define OPEN_RETRY_NS NNP_NS_PER_SEC

struct nnp_writer {
    char dir[NNP_PATH_MAX];
    int period_ms;
    uint64_t raw_file_bytes;
    uint64_t limit_bytes;
    nnp_writer_open_dir_fn open_dir;
    void *open_dir_user;

    pthread_t thread;
    int wake_fd; /* eventfd: flush request or stop */
    _Atomic uint64_t flush_req;
    _Atomic uint64_t flush_done;
    _Atomic bool stop;
    _Atomic bool make_files; /* nnp__writer_flush_make(): create the files even if empty */
    pthread_mutex_t lock;
    pthread_cond_t done_cond;

    /* writer-owned */
    int meta_fd, data_fd;
    uint32_t data_seq;   /* current data file number, from 1 */
    uint64_t data_bytes; /* size of the current data file */
    uint64_t meta_bytes;
    uint64_t *file_bytes; /* sizes of data files oldest_seq..data_seq */
    uint32_t oldest_seq;
    uint64_t total_data_bytes; /* sum of live data files */
    uint64_t chunk_seq;
    uint32_t strings_emitted;
    uint64_t last_clock_ns, last_disk_ns;
    uint64_t orphan_reported;
    uint64_t loss_logged_ns; /* when drops were last logged (0: never) */
    uint64_t loss_logged;    /* the drop total that log gave */
    ZSTD_CCtx *zctx;         /* static: lives in zwork */
    void *zwork;             /* the compression context's whole workspace */
    nnp_rec_t *scratch;      /* CHUNK_MAX_SLOTS + NNP_REC_MAX_SLOTS slots */
    /* The slots being packed: in the ring itself, or in scratch when they wrap around its
     * end. Ring slots are safe to read until tail moves past them. */
    const nnp_rec_t *slots_in;
    void *zbuf;
    size_t zbuf_cap;
    nnp_pack_state_t *pack;  /* the packer's previous records, reset per chunk (24 KiB) */
    uint8_t *pbuf;           /* packed RECORDS payload: PBUF_BYTES */
    unsigned char *meta_buf; /* META_BATCH_BYTES */
    bool io_failed_logged, disk_full_logged;
    bool busy;             /* last drain found a buffer over half full */
    uint32_t fill_max;     /* fullest buffer of the last drain, in FILL_SCALE parts */
    bool files_open;       /* the raw directory and meta.nnp exist (created on first data) */
    bool aging;            /* inside enforce_storage(): a failed AGED write must not recurse */
    uint64_t next_open_ns; /* earliest retry of a failed directory or data file creation */
    nnp_clock_point_t start_clock; /* the first CLOCK point, written when files open */

    /* counters (written by the writer, read by anyone) */
    _Atomic uint64_t events_recorded, events_dropped, bytes_raw, bytes_written, chunks;
    _Atomic uint64_t events_unwritten, write_errors;
    _Atomic uint64_t files_aged, bytes_aged;
    _Atomic uint32_t threads;
    _Atomic bool disk_full, has_files;
    _Atomic int io_error; /* sticky first error */
};

/* ---- writer_files.c ---- */

/* Counts a failed write (err: its errno, 0 when none) and logs the first one; a full disk
 * (ENOSPC, EDQUOT) sets disk_full and is logged once on its own. */
void nnp__wr_io_error(nnp_writer_t *w, int code, const char *what, int err);
/* Creates dir/name with the raw file header; on failure errno says why. */
int nnp__wr_open_file(nnp_writer_t *w, const char *name, uint32_t kind, uint32_t seq, int *fd_out);
/* Packs the first n_slots slots of slots_in into pbuf, whole records only:
 * *n_used slots (<= n_slots, >= 1), *n_records records. Returns the packed bytes. */
uint32_t nnp__wr_pack(nnp_writer_t *w, size_t n_slots, size_t *n_used, uint32_t *n_records);
/* Writes the RECORDS chunk nnp__wr_pack() made (the first n_slots slots of slots_in) to the
 * current data file, aging out old data and trying once more when the disk is full.
 * Returns the bytes written, 0 when the chunk was lost. */
uint64_t nnp__wr_records(nnp_writer_t *w, uint32_t packed_bytes, size_t n_slots, uint32_t count,
                         uint64_t tid);
/* Writes one meta chunk to fd (size_before: the file's size), aging out old data and trying
 * once more when the disk is full. Returns the bytes written, 0 when the chunk was lost. */
uint64_t nnp__wr_chunk(nnp_writer_t *w, int fd, uint64_t size_before, uint16_t type,
                       const void *payload, uint32_t raw_bytes, uint32_t count, uint64_t tid);
/* A chunk of meta.nnp (nothing while it is not open). */
void nnp__wr_meta(nnp_writer_t *w, uint16_t type, const void *p, uint32_t n, uint32_t count);
/* Seed 004's aging; returns the number of data files deleted. */
uint64_t nnp__wr_enforce_storage(nnp_writer_t *w, bool check_disk);
/* Closes the current data file and opens the next. */
int nnp__wr_rotate(nnp_writer_t *w);
/* Accounts n bytes written to the current data file: rotation and aging checks. */
void nnp__wr_account(nnp_writer_t *w, uint64_t n);

#endif /* NNP_WRITER_INTERNAL_H */
