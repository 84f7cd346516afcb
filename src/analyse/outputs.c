/* outputs.c - every file the analyses write for one rank (docs/OUTPUTS.md "Where files
 * go"), and keeping an earlier analysis's files aside as <name>.old before a rank is
 * analysed again: analyses without data write nothing, so without this an earlier run's
 * memory or FLOPs file would sit beside the new results as if it were one of them.
 * tests/unit/test_outputs.c checks that an analysis writes no file missing from this list. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyse/driver.h"
#include "util/util.h"

/* Suffix of a kept earlier result. */
#define OLD_SUFFIX ".old"

typedef enum where { IN_OUT_DIR, IN_HOST_INFO, IN_RANK_DIR } where_t;

typedef struct output_name {
    where_t where;
    const char *before, *after; /* name = before + rank + after; after NULL: no rank */
} output_name_t;

static const output_name_t outputs[] = {
    {IN_OUT_DIR, "op_statistic_", ".csv"},
    {IN_OUT_DIR, "op_detail_", ".csv"},
    {IN_OUT_DIR, "kernel_details_", ".csv"},
    {IN_OUT_DIR, "op_statistic_top20_", ".json"},
    {IN_OUT_DIR, "step_trace_raw_", "_detail_time.csv"},
    {IN_OUT_DIR, "step_trace_point_info_", ".json"},
    {IN_OUT_DIR, "step_trace_summary_", ".json"},
    {IN_OUT_DIR, "timeline_summary_", ".json"},
    {IN_OUT_DIR, "host_ranges_", ".csv"},
    {IN_OUT_DIR, "op_self_time_", ".csv"},
    {IN_OUT_DIR, "op_stacks_", ".csv"},
    {IN_OUT_DIR, "memory_usage_summary_", ".json"},
    {IN_OUT_DIR, "memory_usage_details_", ".json"},
    {IN_OUT_DIR, "memory_record_", ".csv"},
    {IN_OUT_DIR, "operator_memory_", ".csv"},
    {IN_OUT_DIR, "minddata_pipeline_raw_", ".csv"},
    {IN_OUT_DIR, "minddata_pipeline_summary_", ".json"},
    {IN_OUT_DIR, "minddata_pipeline_summary_", ".csv"},
    {IN_OUT_DIR, "minddata_cpu_utilization_", ".json"},
    {IN_OUT_DIR, "flops_", ".txt"},
    {IN_OUT_DIR, "flops_summary_", ".json"},
    {IN_OUT_DIR, "dynamic_shape_info_", ".json"},
    {IN_OUT_DIR, "advice_", ".json"},
    {IN_OUT_DIR, "advice_", ".txt"},
    {IN_OUT_DIR, "profiler_info_", ".json"},
    {IN_OUT_DIR, "gpu_op_detail_info_", ".csv"},
    {IN_OUT_DIR, "gpu_op_type_info_", ".csv"},
    {IN_OUT_DIR, "gpu_activity_data_", ".csv"},
    {IN_OUT_DIR, "gpu_timeline_display_", ".json"},
    {IN_OUT_DIR, "gpu_timeline_summary_", ".json"},
    {IN_OUT_DIR, "minddata_step_queue_", ".csv"},
    {IN_OUT_DIR, "op_shapes_", ".csv"},
    {IN_OUT_DIR, "hccl_raw_", ".csv"},
    {IN_HOST_INFO, "timeline_", ".json"},
    {IN_HOST_INFO, "host_memory_", ".csv"},
    {IN_HOST_INFO, "dataset_", ".csv"},
    {IN_RANK_DIR, "trace_view.json", NULL},
    {IN_RANK_DIR, "step_trace_time.csv", NULL},
};

void nnp__output_remove_stale(const nnp_actx_t *c, const char *before, const char *after)
{
    char name[NNP_NAME_MAX], path[NNP_PATH_MAX];
    int n = snprintf(name, sizeof(name), "%s%d%s", before, c->rank, after);
    if (n > 0 && (size_t)n < sizeof(name) &&
        nnp__path_join(path, sizeof(path), c->out_dir, name) == NNP_OK)
        (void)unlink(path);
}

/* Renames dir/name to dir/name.old when it is a regular file (a link or anything else at
 * an output name was not written by us: left alone). *moved tells whether it did. */
static int set_aside(const char *dir, const char *name, bool *moved)
{
    char path[NNP_PATH_MAX], old[NNP_NAME_MAX + sizeof(OLD_SUFFIX)];
    struct stat st;
    int dirfd, rc = NNP_OK;

    *moved = false;
    if (nnp__path_join(path, sizeof(path), dir, name) != NNP_OK)
        return nnp__fail(NNP_ETOOLONG, "path too long: %s/%s", dir, name);
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return NNP_OK;
    snprintf(old, sizeof(old), "%s%s", name, OLD_SUFFIX);
    dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    /* The previous .old goes first: a rename that replaces a file makes ext4 write out
     * the renamed file's pages at once (its auto_da_alloc rule for replace-by-rename),
     * hundreds of MB of results just written, where nothing needs them on disk sooner. A
     * directory there is not removed (unlinkat fails) and the rename reports it. */
    if (dirfd >= 0)
        (void)unlinkat(dirfd, old, 0);
    if (dirfd < 0 || renameat(dirfd, name, dirfd, old) != 0)
        rc = nnp__fail(nnp__from_errno(errno),
                       "cannot keep the earlier result '%s' as '%s' (%s): this rank is not "
                       "analysed, so earlier and new results do not mix",
                       path, old, strerror(errno));
    else
        *moved = true;
    if (dirfd >= 0)
        close(dirfd);
    return rc;
}

/* Puts dir/name.old back as dir/name (undoing set_aside after a later one failed). */
static void restore(const char *dir, const char *name)
{
    char old[NNP_NAME_MAX + sizeof(OLD_SUFFIX)];
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    snprintf(old, sizeof(old), "%s%s", name, OLD_SUFFIX);
    if (dirfd >= 0) {
        (void)renameat(dirfd, old, dirfd, name);
        close(dirfd);
    }
}

static const char *dir_of(const output_name_t *o, const char *out_dir, const char *host_dir,
                          const char *rank_dir)
{
    return o->where == IN_OUT_DIR ? out_dir : o->where == IN_HOST_INFO ? host_dir : rank_dir;
}

static void name_of(const output_name_t *o, int rank, char *name, size_t cap)
{
    if (o->after)
        snprintf(name, cap, "%s%d%s", o->before, rank, o->after);
    else
        nnp__strlcpy(name, o->before, cap);
}

int nnp__outputs_set_aside(const char *out_dir, const char *rank_dir, int rank, int *n_moved)
{
    char host_dir[NNP_PATH_MAX], name[NNP_NAME_MAX];
    bool moved[NNP_ARRAY_LEN(outputs)] = {false};
    size_t i;
    int rc = nnp__path_join(host_dir, sizeof(host_dir), out_dir, "host_info");

    *n_moved = 0;
    for (i = 0; rc == NNP_OK && i < NNP_ARRAY_LEN(outputs); i++) {
        name_of(&outputs[i], rank, name, sizeof(name));
        rc = set_aside(dir_of(&outputs[i], out_dir, host_dir, rank_dir), name, &moved[i]);
        *n_moved += moved[i];
    }
    if (rc == NNP_OK)
        return NNP_OK;
    /* One could not move: the earlier results go back whole (and nothing is analysed). */
    for (size_t k = 0; k < i; k++) {
        if (!moved[k])
            continue;
        name_of(&outputs[k], rank, name, sizeof(name));
        restore(dir_of(&outputs[k], out_dir, host_dir, rank_dir), name);
    }
    *n_moved = 0;
    return rc;
}
