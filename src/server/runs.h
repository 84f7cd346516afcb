/* runs.h - the runs a UI serves: found by scanning the served directory (our raw runs and
 * every layout the importers read), each analysed on demand by `nnprof analyse -o CACHE`
 * in a child process (never over the user's files), then loaded (rundata.h).
 *
 * States: NEW -> ANALYSING (child running) -> LOADING -> READY, or FAILED. A run the user
 * already analysed in place (our raw runs: profiler/profiler_info_*.json) skips ANALYSING.
 * A worker thread reaps the children and loads results; HTTP threads only read. The
 * registry's mutex guards state fields; a run's rank data is immutable once READY. */
#ifndef NNP_SERVER_RUNS_H
#define NNP_SERVER_RUNS_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

#include "server/rundata.h"
#include "util/json_writer.h"

/* Runs one server lists at most, and directories one scan visits at most (a served
 * directory with more is scanned partly, with a warning). */
#define NNP_RUNS_MAX      1024
#define NNP_SCAN_MAX_DIRS 20000
/* Deepest directory level searched below the served directory. */
#define NNP_SCAN_MAX_DEPTH 8
/* Name of the cache folder created inside a run when no --cache is given. */
#define NNP_UI_CACHE_NAME ".nnprof_ui"
/* Ranks loaded per run at most. */
#define NNP_RUN_MAX_RANKS 4096

typedef enum nnp_run_state {
    NNP_RUN_NEW,
    NNP_RUN_ANALYSING,
    NNP_RUN_LOADING,
    NNP_RUN_READY,
    NNP_RUN_FAILED,
} nnp_run_state_t;

typedef struct nnp_run {
    char id[NNP_PATH_MAX];      /* path relative to the served directory, "." for itself */
    char path[NNP_PATH_MAX];    /* absolute real path */
    char kind[32];              /* "nnprof", "cann-msprof", "mindspore", "torch-npu", ... */
    int n_inputs;               /* ranks the scan found (before analysis) */
    char results[NNP_PATH_MAX]; /* where the analysis outputs are, or will be */
    bool in_place;              /* results are the user's own earlier `nnprof analyse` */
    /* Guarded by the registry's mutex. */
    nnp_run_state_t state;
    pid_t pid;
    time_t t_start;
    char error[1024];
    /* Set once when READY, then read-only. */
    nnp_rank_data_t **ranks;
    size_t n_ranks;
} nnp_run_t;

typedef struct nnp_runs_config {
    const char *root;        /* served directory */
    const char *cache_root;  /* NULL: each run's NNP_UI_CACHE_NAME folder */
    const char *analyse_exe; /* the nnprof binary that runs `analyse` */
    bool reanalyse;          /* ignore earlier results and caches */
    bool worker;             /* start the background worker (the server); off: synchronous */
} nnp_runs_config_t;

typedef struct nnp_runs {
    char root[NNP_PATH_MAX];
    char cache_root[NNP_PATH_MAX]; /* "" when none */
    char exe[NNP_PATH_MAX];
    bool reanalyse;
    nnp_run_t *v;
    size_t n;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t worker;
    bool has_worker, stop;
} nnp_runs_t;

/* Resolves root, scans it and (cfg->worker) starts the worker. NNP_OK, or NNP_ENOENT /
 * NNP_EPATH when root is not a readable directory. */
int nnp__runs_init(nnp_runs_t *rs, const nnp_runs_config_t *cfg);
/* Stops the worker, kills analyses still running, frees everything. */
void nnp__runs_fini(nnp_runs_t *rs);
/* The run with exactly this id, or NULL (ids are never joined to paths). */
nnp_run_t *nnp__runs_find(nnp_runs_t *rs, const char *id);
/* Asks for a run's results: starts its analysis when NEW. Returns the state now. */
nnp_run_state_t nnp__runs_want(nnp_runs_t *rs, nnp_run_t *r);
/* Analyses (when needed) and loads a run, waiting for it (no worker: `nnprof report`). */
int nnp__runs_prepare_sync(nnp_runs_t *rs, nnp_run_t *r);
/* The rank's data of a READY run (rank < 0: the lowest), or NULL. */
const nnp_rank_data_t *nnp__run_rank(const nnp_run_t *r, int rank);

/* JSON for /api/runs and /api/status (see docs/UI.md). */
void nnp__runs_list_json(nnp_runs_t *rs, nnp_jw_t *w);
void nnp__run_status_json(nnp_runs_t *rs, nnp_run_t *r, nnp_jw_t *w);

#endif /* NNP_SERVER_RUNS_H */
