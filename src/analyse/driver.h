/* driver.h - what the analysis driver's files share (analyse.c runs the analyses,
 * inputs.c finds what to analyse, profiler_info.c describes each analysed rank,
 * op_analyse.c answers operator queries). Analyses themselves include analyse.h only. */
#ifndef NNP_DRIVER_H
#define NNP_DRIVER_H

#include <time.h>

#include "analyse/analyse.h"
#include "read/importers.h"

/* Inputs one call accepts: far above any single host's rank count. */
#define NNP_MAX_INPUTS 4096

typedef enum nnp_input_kind {
    NNP_INPUT_RAW,
    NNP_INPUT_HOST_INFO_CSV,
    NNP_INPUT_FOREIGN
} nnp_input_kind_t;

typedef struct nnp_input {
    nnp_input_kind_t kind;
    char path[NNP_PATH_MAX];        /* raw dir or CSV file */
    char out_dir[NNP_PATH_MAX];     /* where the *_{rank} files go */
    int rank;                       /* from the CSV name; raw dirs read it from info.json */
    const nnp_importer_t *importer; /* NNP_INPUT_FOREIGN */
} nnp_input_t;

/* Finds every input under path (inputs.c): fills v (room for NNP_MAX_INPUTS) and *n. */
int nnp__find_inputs(const char *path, nnp_input_t *v, int *n);
/* True when p names a directory. */
bool nnp__dir_exists(const char *p);

/* Writes profiler_info_{rank}.json for one analysed rank (profiler_info.c). */
int nnp__profiler_info_write(const nnp_actx_t *c, time_t analyse_start, time_t analyse_end);

#endif /* NNP_DRIVER_H */
