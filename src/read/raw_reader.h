/* raw_reader.h - reads a raw directory (meta.nnp + data_NNNNNN.nnp) written by the recorder.
 * Depends only on the format (format/raw_format.h), never on the recorder. Recovers every
 * complete, intact chunk of files cut at any byte; names damaged chunks (file, offset,
 * reason) in a report instead of failing; delivers a chunk found twice (same sequence
 * number) once; converts ticks to CLOCK_MONOTONIC ns. */
#ifndef NNP_RAW_READER_H
#define NNP_RAW_READER_H

#include <stdbool.h>
#include <stdint.h>

#include "format/raw_format.h"

/* Damage entries kept in the report; later ones are only counted. */
#define NNP_RAW_MAX_DAMAGE 64

typedef struct nnp_raw_damage {
    char file[32];
    uint64_t offset; /* byte offset of the chunk (or of the damage) */
    int code;        /* NNP_ECORRUPT, NNP_ETRUNC, NNP_EVERSION, NNP_EIO */
    char msg[160];
} nnp_raw_damage_t;

typedef struct nnp_raw_report {
    uint32_t data_files;         /* data files read */
    uint32_t data_files_aged;    /* data files deleted by storage_limit (from AGED chunks) */
    uint32_t data_files_missing; /* gaps in the data file sequence not explained by aging */
    uint64_t bytes_aged;
    uint64_t chunks_ok;          /* chunks read intact (meta and data) */
    uint64_t chunks_corrupt;     /* chunks skipped: bad checksum, bad header, bad payload */
    uint64_t chunks_truncated;   /* chunks cut by the end of a file */
    uint64_t chunks_duplicate;   /* intact chunks skipped: their sequence number was read */
    uint64_t bytes_skipped;      /* bytes not read as part of an intact chunk */
    uint64_t records;            /* records delivered */
    uint64_t events_lost;        /* events lost in all: events_lost_buffer + events_lost_write */
    uint64_t events_lost_buffer; /* dropped by full thread buffers: the LOSS chunks, or
                                  * info.json's events_dropped when it counts more (a
                                  * LOSS chunk cannot be written to a full disk) */
    uint64_t events_lost_write;  /* recorded but never written: disk full, I/O error
                                  * (info.json events_unwritten) */
    uint64_t write_errors;       /* failed writes (info.json) */
    bool disk_full;              /* the recorder met a full disk (info.json) */
    uint32_t n_damage;           /* damage entries, all of them (first NNP_RAW_MAX_DAMAGE kept) */
    bool meta_missing;           /* no meta.nnp: strings, threads, clock points unknown */
    uint32_t format_version;     /* highest raw format version of the files read, 0 none */
    uint64_t chunks_by_codec[NNP_CODEC_COUNT]; /* chunks read intact, by codec */
    nnp_raw_damage_t damage[NNP_RAW_MAX_DAMAGE];
} nnp_raw_report_t;

/* One decoded record as delivered to the callback. An OP_BRIEF record (format v4) is
 * delivered as the equal 2-slot OP (kind NNP_REC_OP), so readers handle one op layout. */
typedef struct nnp_raw_event {
    unsigned kind; /* nnp_rec_kind_t */
    unsigned n_slots;
    const nnp_rec_t *slots; /* n_slots slots, valid during the callback only */
    uint64_t tid;
    uint64_t ts_ns;  /* CLOCK_MONOTONIC ns */
    uint64_t end_ns; /* OP/KERNEL/COMM end; ts_ns for other kinds */
} nnp_raw_event_t;

/* Return non-zero from the callback to stop reading (that value is returned). */
typedef int (*nnp_raw_cb)(void *user, const nnp_raw_event_t *ev);

typedef struct nnp_raw nnp_raw_t;

/* Opens a raw directory: reads meta.nnp (strings, threads, clock points, losses, aging)
 * and lists the data files. A missing meta.nnp sets report.meta_missing (and a damage
 * entry): the data files are still read. Returns NNP_OK, NNP_ENOENT (not a raw directory), NNP_EIO
 * or NNP_ENOMEM; *out is released with nnp__raw_close(). Damage in meta.nnp is reported, not fatal.
 */
int nnp__raw_open(const char *dir, nnp_raw_t **out);
void nnp__raw_close(nnp_raw_t *r);

/* Delivers every intact record of the data files, file by file in sequence order, chunk
 * by chunk (so each thread's records come in the order it recorded them). A chunk whose
 * sequence number was read already (in meta.nnp, or earlier in the data files) is skipped,
 * counted in chunks_duplicate and named in the damage list: no record is delivered twice. */
int nnp__raw_read(nnp_raw_t *r, nnp_raw_cb cb, void *user);

/* String by id: "" for 0, NULL for an id absent from the meta file. Owned by r. */
const char *nnp__raw_str(const nnp_raw_t *r, uint32_t id);
/* Thread name id for an OS tid (0 when unnamed or unknown). */
uint32_t nnp__raw_thread_name(const nnp_raw_t *r, uint64_t tid);
/* Number of threads listed in the meta file and the i-th tid. */
uint32_t nnp__raw_thread_count(const nnp_raw_t *r);
uint64_t nnp__raw_thread_tid(const nnp_raw_t *r, uint32_t i);
/* Converts raw ticks to CLOCK_MONOTONIC ns with the run's clock points. */
uint64_t nnp__raw_ticks_to_ns(const nnp_raw_t *r, uint64_t ticks);
const nnp_raw_report_t *nnp__raw_report(const nnp_raw_t *r);
const char *nnp__raw_dir(const nnp_raw_t *r);

/* Adds a clock point (the reader's only way to convert ticks when meta.nnp was lost: the
 * importer derives one from info.json). NNP_OK or NNP_ENOMEM. Call before nnp__raw_read. */
int nnp__raw_add_clock(nnp_raw_t *r, const nnp_clock_point_t *p);
/* Clock points known (from meta.nnp or added). */
uint32_t nnp__raw_clock_count(const nnp_raw_t *r);

/* Loss counters the recorder kept in memory and wrote to info.json (raw_losses.c). All
 * zero when info.json is missing, unreadable, or has no such numbers (older runs). */
typedef struct nnp_raw_info_losses {
    uint64_t events_dropped, events_unwritten, write_errors;
    bool disk_full;
} nnp_raw_info_losses_t;
/* Reads dir/info.json's "stats" counters into *out, each validated (a non-negative integer
 * up to 2^53, disk_full a boolean); anything else counts as absent. */
void nnp__raw_info_losses(const char *dir, nnp_raw_info_losses_t *out);
/* One sentence saying how many events were lost and why, into buf (cap bytes), e.g.
 * "1200 events lost: 200 dropped because thread buffers were full (raise buffer_size_kb
 * or use full_policy \"block\"); 1000 recorded but not written because the disk was full
 * (3 failed writes)". Returns false, with buf "", when nothing was lost. */
bool nnp__raw_loss_text(const nnp_raw_report_t *rep, char *buf, size_t cap);

/* True when dir looks like a raw directory: it has meta.nnp, or data_NNNNNN.nnp files
 * (a raw directory whose meta.nnp was lost still holds every record). */
bool nnp__raw_is_dir(const char *dir);

#endif /* NNP_RAW_READER_H */
