/* driver.h - what the analysis driver's files share (analyse.c runs the ranks'
 * analyses, analyse_rank.c one rank's,
 * inputs.c finds and groups what to analyse, outputs.c keeps earlier results aside,
 * profiler_info.c describes each analysed rank, op_analyse.c answers operator queries).
 * Analyses themselves include analyse.h only. */
#ifndef NNP_DRIVER_H
#define NNP_DRIVER_H

#include <stdbool.h>
#include <time.h>

#include "analyse/analyse.h"
#include "read/importers.h"

/* Inputs (ranks) one call accepts: far above any single host's rank count. */
#define NNP_MAX_INPUTS 4096
/* Where results of other tools' data go when no -o is given: a folder of ours inside the
 * folder the user named, so their files are never written (docs/CLI.md). */
#define NNP_FOREIGN_OUT_DIR "nnprof_output"

typedef enum nnp_input_kind {
    NNP_INPUT_RAW,
    NNP_INPUT_HOST_INFO_CSV,
    NNP_INPUT_FOREIGN
} nnp_input_kind_t;

/* One rank's input. */
typedef struct nnp_input {
    nnp_input_kind_t kind;
    char *path;                     /* raw dir (the rank's own), CSV file or foreign input;
                                     * owned by the nnp_inputs_t (nnp__inputs_fini) */
    int rank;                       /* -1: only the import can tell (some foreign data) */
    int device_id;                  /* raw: from info.json; -1 unknown */
    const nnp_importer_t *importer; /* NNP_INPUT_FOREIGN */
    int first_child, n_children;    /* raw: its child processes' dirs in children[] */
} nnp_input_t;

/* Everything found under one path. All inputs share one output folder. */
typedef struct nnp_inputs {
    nnp_input_t *v;
    int n, cap;
    char (*children)[NNP_PATH_MAX]; /* raw dirs of child processes, by input */
    int n_children, children_cap;
    int n_unranked;              /* raw dirs left out: rank unknown (logged) */
    bool is_foreign;             /* other tools' data: never written */
    char data_dir[NNP_PATH_MAX]; /* foreign: the folder named (a file's folder) */
    char out_dir[NNP_PATH_MAX];  /* default folder of the *_{rank} files */
} nnp_inputs_t;

/* Finds, groups and ranks every input under path (inputs.c). Errors: unreadable path
 * (naming why), two runs of one rank (naming them), our own results given as data. An
 * empty result (n == 0) is not an error here. Release with nnp__inputs_fini. */
int nnp__inputs_find(const char *path, nnp_inputs_t *in);
void nnp__inputs_fini(nnp_inputs_t *in);
/* When nothing was found at path: the folders below it (3 levels at most; not our own
 * results) that hold data, the first few quoted and joined by ", " into out, then "and N
 * more" (cap bytes, NUL-terminated; cut at a whole name). Returns how many there are; 0
 * with out empty when none. */
int nnp__inputs_suggest(const char *path, char *out, size_t cap);
/* Imports input i into m (initialised, empty), finished and with the input's rank. */
int nnp__input_import(const nnp_inputs_t *in, int i, nnp_model_t *m);
/* True when p names a directory. */
bool nnp__dir_exists(const char *p);

/* Earlier results of one rank (outputs.c): every file the analyses may write for it, in
 * out_dir, out_dir/host_info and rank_dir, is renamed to <name>.old before the rank is
 * analysed again (one generation, as perf keeps perf.data.old), so earlier and new results
 * never mix. NNP_OK, or an error naming the file that could not be moved (nothing written). */
int nnp__outputs_set_aside(const char *out_dir, const char *rank_dir, int rank, int *n_moved);

/* Events a program recorded itself (or through a collector): every row but the samplers'
 * CPU and memory samples, which every session takes (profiler_info.c). */
size_t nnp__model_events(const nnp_model_t *m);

/* Writes profiler_info_{rank}.json for one analysed rank (profiler_info.c). */
int nnp__profiler_info_write(const nnp_actx_t *c, time_t analyse_start, time_t analyse_end);

/* What nnp__analyse_rank tells the caller (through a pipe when it runs in a child
 * process). */
typedef struct nnp_rank_result {
    int rank;     /* the rank analysed, -1 when skipped (--rank) or failed early */
    int n_old;    /* earlier results kept as .old */
    int is_empty; /* no event recorded: only samples */
    int input;    /* the input's index */
    int has_gpu;  /* GPU events HTA analyses (nnp__hta_applies) */
} nnp_rank_result_t;

/* Analyses input idx of ins into out_dir (analyse_rank.c): every analysis of
 * docs/OUTPUTS.md, the first failure returned (logged too when log: a child process whose
 * caller prints nothing). NNP_OK also when the input is not the rank o asks for. */
int nnp__analyse_rank(const nnp_inputs_t *ins, int idx, const char *out_dir,
                      const nnp_analyse_options_t *o, bool log, nnp_rank_result_t *res);
/* The progress bar on stderr (a terminal, not --quiet): what is done, done of total. */
void nnp__analyse_progress(const nnp_analyse_options_t *o, const char *what, int done, int total);

#endif /* NNP_DRIVER_H */
