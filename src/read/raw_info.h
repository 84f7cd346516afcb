/* raw_info.h - what a raw directory's info.json says (docs/FORMAT.md "info.json keys"),
 * read with every number validated (json_num.h): the run description the importer puts in
 * the model, and a small descriptor the analyse driver uses to group directories into
 * ranks (child processes with their parent, CONTRACTS.md section 2) before importing. */
#ifndef NNP_RAW_INFO_H
#define NNP_RAW_INFO_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"
#include "nnprof/nnprof.h"

/* The file every raw directory holds beside its data. */
#define NNP_RAW_INFO_FILE "info.json"
/* Room for child_kind ("fork", "exec"). */
#define NNP_CHILD_KIND_CAP 16

/* One raw directory as the driver sees it before importing. */
typedef struct nnp_raw_desc {
    char path[NNP_PATH_MAX];
    const char *name;   /* basename, inside path */
    bool has_info;      /* info.json was read as a JSON object */
    bool has_meta;      /* meta.nnp exists */
    int rank_id;        /* -1 when info.json does not give a valid one */
    int device_id;      /* -1 when unknown */
    int rank_size;      /* 0 when unknown */
    int64_t pid;        /* info.json's, else the number ending the directory name, else -1 */
    int64_t parent_pid; /* -1 unless a child */
    char parent_raw_dir[NNP_NAME_MAX]; /* basename of the parent's raw dir, "" unless a child */
    char child_kind[NNP_CHILD_KIND_CAP];
    char why_no_info[NNP_NAME_MAX]; /* why info.json is unusable, "" when has_info */
} nnp_raw_desc_t;

/* Reads dir's info.json into d (quietly: the importer reports bad values). Returns NNP_OK
 * (also when info.json is missing or bad: has_info false, why_no_info says why) or
 * NNP_ETOOLONG. */
int nnp__raw_desc_read(const char *dir, nnp_raw_desc_t *d);

/* How the recorder's ticks relate to ns when meta.nnp (which holds the clock points) is
 * lost: info.json's platform keys. */
typedef struct nnp_raw_clock_info {
    bool ticks_are_ns;       /* tick_source "monotonic" */
    int64_t tick_rate_hz;    /* 0 when unknown */
    int64_t first_window_ns; /* start_mono_ns of the first window, -1 when unknown */
} nnp_raw_clock_info_t;

/* Fills info (strings owned by the model: released by nnp__model_fini) and clk from
 * raw_dir/info.json. A missing or unreadable file, or a bad value, is logged (file, key,
 * value) and defaulted. Returns NNP_OK or NNP_ENOMEM. */
int nnp__raw_info_read(const char *raw_dir, nnp_run_info_t *info, nnp_raw_clock_info_t *clk);

#endif /* NNP_RAW_INFO_H */
