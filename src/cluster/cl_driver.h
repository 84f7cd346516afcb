/* cl_driver.h - the entry point of the cluster analysis for the CLI (tools/nnprof/
 * cmd_cluster.c): options, the report of what was done, and the one-process back end. */
#ifndef NNP_CL_DRIVER_H
#define NNP_CL_DRIVER_H

#include "cluster/cl_dist.h"
#include "cluster/cluster.h"

typedef struct nnp_cl_report {
    int n_ranks;        /* ranks read */
    int n_missing;      /* ranks the data names that no input holds */
    int n_failed;       /* ranks that could not be read */
    int expected_ranks; /* what the data says the cluster has */
    /* this process */
    int process, processes, threads, ranks_here;
    double wall_s;
    long peak_rss_kb;
} nnp_cl_report_t;

/* Analyses the cluster under dir and writes its outputs into o->out_dir (set to the
 * default, dir/cluster_analysis_output, when empty). d spreads the work (nnp__cl_dist_local
 * for one process). Every process calls it; process 0 writes. Returns NNP_OK, or an error
 * with a message (on process 0 the one to print). */
int nnp__cluster_run(const char *dir, nnp_cl_opts_t *o, nnp_cl_dist_t *d, nnp_cl_report_t *rep);
/* Fills d for one process. */
void nnp__cl_dist_local(nnp_cl_dist_t *d);
/* Releases what the writers allocated in d (not the spills, which the driver owns). */
void nnp__cl_cluster_data_fini(nnp_cl_data_t *d);

#endif /* NNP_CL_DRIVER_H */
