/* import_torch_npu.c - importer of torch_npu / msprof-analyze outputs (issues #7, #15): finds
 * the inputs (a *_ascend_pt folder's ASCEND_PROFILER_OUTPUT, one per rank, or the files
 * themselves, or msprof-analyze's cluster_analysis_output), takes the rank from the capture's
 * profiler_info_{rank}.json, and reads trace_view.json (torch_npu_trace.c), kernel_details.csv,
 * step_trace_time.csv, cluster_step_trace_time.csv (torch_npu_tables.c), communication.json
 * and cluster_communication.json (torch_npu_comm.c). A bad file or event is logged (file,
 * event index or line, why); the rest is still imported. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nnprof/nnprof.h"
#include "read/importers.h"
#include "read/torch_npu.h"
#include "util/util.h"

/* torch_npu names a capture folder <worker>_<time>_ascend_pt and writes in it
 * profiler_info_{rank}.json (distributed) or profiler_info.json (torch_npu profiler.py). */
#define CAPTURE_SUFFIX       "_ascend_pt"
#define PROFILER_INFO_PREFIX "profiler_info"
#define JSON_SUFFIX          ".json"
/* Capture folders under one parent: far above any job's rank count. */
#define MAX_CAPTURES 4096

const char *nnp__tnpu_trim(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool dir_has(const char *dir, const char *name)
{
    char p[NNP_PATH_MAX];
    return nnp__path_join(p, sizeof(p), dir, name) == NNP_OK && is_file(p);
}

/* The files this importer reads. */
static const char *const input_names[] = {TRACE_VIEW,    KERNEL_DETAILS,     STEP_TRACE_TIME,
                                          COMMUNICATION, CLUSTER_STEP_TRACE, CLUSTER_COMMUNICATION};

static bool is_input_name(const char *base)
{
    for (size_t i = 0; i < NNP_ARRAY_LEN(input_names); i++)
        if (strcmp(base, input_names[i]) == 0)
            return true;
    return false;
}

/* True when dir holds a file this importer reads. */
static bool has_inputs(const char *dir)
{
    for (size_t i = 0; i < NNP_ARRAY_LEN(input_names); i++)
        if (dir_has(dir, input_names[i]))
            return true;
    return false;
}

/* ---- the rank of a capture: profiler_info_{rank}.json beside ASCEND_PROFILER_OUTPUT ---- */

/* Rank from a profiler_info file name in dir: profiler_info_N.json -> N, profiler_info.json
 * -> 0 (a capture without torch.distributed); -1 when dir has neither. */
static int rank_in(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int rank = -1;
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL) {
        const char *n = e->d_name, *p = n + strlen(PROFILER_INFO_PREFIX);
        char *end;
        long r;
        if (strncmp(n, PROFILER_INFO_PREFIX, strlen(PROFILER_INFO_PREFIX)) != 0)
            continue;
        if (strcmp(p, JSON_SUFFIX) == 0) {
            rank = rank < 0 ? 0 : rank;
            continue;
        }
        if (*p != '_')
            continue;
        r = strtol(p + 1, &end, 10);
        if (end != p + 1 && strcmp(end, JSON_SUFFIX) == 0 && r >= 0 && r < INT32_MAX) {
            rank = (int)r;
            break;
        }
    }
    closedir(d);
    return rank;
}

/* The rank of an input directory: its own profiler_info, else its parent's (the input is
 * <capture>_ascend_pt/ASCEND_PROFILER_OUTPUT). */
static int input_rank(const char *dir)
{
    char parent[NNP_PATH_MAX];
    char *slash;
    int r = rank_in(dir);
    if (r >= 0 || !nnp__strlcpy(parent, dir, sizeof(parent)))
        return r;
    while (strlen(parent) > 1 && parent[strlen(parent) - 1] == '/')
        parent[strlen(parent) - 1] = '\0';
    slash = strrchr(parent, '/');
    if (!slash)
        return rank_in(".");
    *slash = '\0';
    return rank_in(parent[0] ? parent : "/");
}

/* ---- find() ---- */

/* dir/<sub>/cluster_analysis_output for a sub-directory of dir (the second level). */
static bool find_cluster_below(const char *dir, char *out, size_t cap)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    bool found = false;
    if (!d)
        return false;
    while (!found && (e = readdir(d)) != NULL) {
        char sub[NNP_PATH_MAX];
        if (e->d_name[0] == '.' || nnp__path_join(sub, sizeof(sub), dir, e->d_name) != NNP_OK ||
            nnp__path_join(out, cap, sub, CLUSTER_DIR) != NNP_OK)
            continue;
        found = has_inputs(out);
    }
    closedir(d);
    return found;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The capture folders under dir (a multi-rank run: one *_ascend_pt folder per rank), each
 * with an ASCEND_PROFILER_OUTPUT holding inputs, in name order. */
static int find_captures(const char *dir, nnp_foreign_input_t *out, int cap)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t k = 0;
    int n = 0;
    if (!d)
        return 0;
    names = nnp__calloc(MAX_CAPTURES, sizeof(char *));
    while (names && (e = readdir(d)) != NULL && k < MAX_CAPTURES) {
        char sub[NNP_PATH_MAX], outp[NNP_PATH_MAX];
        if (e->d_name[0] == '.' || nnp__path_join(sub, sizeof(sub), dir, e->d_name) != NNP_OK ||
            nnp__path_join(outp, sizeof(outp), sub, PROFILER_OUTPUT) != NNP_OK || !has_inputs(outp))
            continue;
        if ((names[k] = nnp__strdup(outp)) != NULL)
            k++;
    }
    closedir(d);
    if (!names)
        return 0;
    qsort(names, k, sizeof(char *), cmp_str);
    for (size_t i = 0; i < k; i++) {
        if (n < cap && nnp__strlcpy(out[n].path, names[i], sizeof(out[n].path))) {
            out[n].rank = input_rank(names[i]);
            n++;
        }
        nnp__free(names[i]);
    }
    nnp__free(names);
    return n;
}

static int find_one(const char *dir, nnp_foreign_input_t *out)
{
    const char *base = strrchr(dir, '/');
    char sub[NNP_PATH_MAX];
    const char *found = NULL;
    base = base ? base + 1 : dir;
    if (is_file(dir)) {
        if (is_input_name(base))
            found = dir;
    } else if (nnp__path_join(sub, sizeof(sub), dir, PROFILER_OUTPUT) == NNP_OK &&
               has_inputs(sub)) {
        found = sub;
    } else if (has_inputs(dir)) {
        found = dir;
    }
    if (!found || !nnp__strlcpy(out->path, found, sizeof(out->path)))
        return 0;
    out->rank = -1;
    return 1;
}

static int find(const char *dir, nnp_foreign_input_t *out, int cap)
{
    char sub[NNP_PATH_MAX];
    int n;
    if (cap <= 0)
        return 0;
    if (find_one(dir, out) == 1)
        return 1;
    /* A parent folder of several captures: one input per rank. */
    if ((n = find_captures(dir, out, cap)) > 0)
        return n;
    /* msprof-analyze's cluster outputs: dir/cluster_analysis_output, or one level lower. */
    out[0].rank = -1;
    if (nnp__path_join(sub, sizeof(sub), dir, CLUSTER_DIR) == NNP_OK && has_inputs(sub))
        return nnp__strlcpy(out[0].path, sub, sizeof(out[0].path)) ? 1 : 0;
    if (find_cluster_below(dir, sub, sizeof(sub)))
        return nnp__strlcpy(out[0].path, sub, sizeof(out[0].path)) ? 1 : 0;
    return 0;
}

/* ---- import() ---- */

/* Reads the device tasks: from trace_view.json when present (its durations keep sub-ns
 * digits, and kernel_details.csv then only names each task's op type), else from
 * kernel_details.csv. Returns how many of the two files were read, or -1 out of memory. */
static int import_tasks(const char *dir, nnp_model_t *m)
{
    char tvp[NNP_PATH_MAX], kdp[NNP_PATH_MAX];
    nnp_flow_map_t types;
    bool have_tv = nnp__path_join(tvp, sizeof(tvp), dir, TRACE_VIEW) == NNP_OK && is_file(tvp);
    bool have_kd = nnp__path_join(kdp, sizeof(kdp), dir, KERNEL_DETAILS) == NNP_OK && is_file(kdp);
    int n_ok = 0, rc;
    memset(&types, 0, sizeof(types));
    if (have_kd) {
        rc = nnp__tnpu_import_kernel_details(kdp, m, have_tv ? &types : NULL);
        if (rc == NNP_ENOMEM)
            goto oom;
        n_ok += rc == NNP_OK;
    }
    if (have_tv) {
        rc = nnp__tnpu_import_trace_view(tvp, m, types.n ? &types : NULL);
        if (rc == NNP_ENOMEM)
            goto oom;
        n_ok += rc == NNP_OK;
    }
    nnp__flow_fini(&types);
    return n_ok;
oom:
    nnp__flow_fini(&types);
    return -1;
}

static int import(const char *input, nnp_model_t *m)
{
    static const char *const extra[] = {STEP_TRACE_TIME, CLUSTER_STEP_TRACE, COMMUNICATION,
                                        CLUSTER_COMMUNICATION};
    char dir[NNP_PATH_MAX], p[NNP_PATH_MAX];
    int n_ok, rc, rank;
    nnp_foreign_input_t in;

    if (find_one(input, &in) != 1 && find(input, &in, 1) != 1)
        return nnp__fail(NNP_ENOENT, "no torch_npu or msprof-analyze file in '%s'", input);
    if (!nnp__strlcpy(dir, in.path, sizeof(dir)))
        return nnp__fail(NNP_ETOOLONG, "path too long: '%s'", input);
    if (is_file(dir)) {
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        else
            nnp__strlcpy(dir, ".", sizeof(dir));
    }
    rank = input_rank(dir);
    m->info.rank_id = rank >= 0 ? rank : 0;
    if (rank < 0)
        NNP_LOG_I("torch_npu import: no profiler_info_{rank}.json beside '%s': rank 0", dir);
    /* torch_npu measures each step's overlap over the step's device activity. */
    m->info.overlap_device_steps = true;
    if (!m->info.source_format && !(m->info.source_format = nnp__strdup(FORMAT_NAME)))
        return nnp__fail(NNP_ENOMEM, "out of memory");
    if (!m->info.source && !(m->info.source = nnp__strdup(dir)))
        return nnp__fail(NNP_ENOMEM, "out of memory");
    n_ok = import_tasks(dir, m);
    if (n_ok < 0)
        return nnp__fail(NNP_ENOMEM, "out of memory importing '%s'", dir);
    /* The rest after the trace: they fill only what it lacks (comms) or are checked. */
    for (size_t k = 0; k < NNP_ARRAY_LEN(extra); k++) {
        if (nnp__path_join(p, sizeof(p), dir, extra[k]) != NNP_OK || !is_file(p))
            continue;
        if (k == 0)
            rc = nnp__tnpu_import_step_trace_time(p, m);
        else if (k == 1)
            rc = nnp__tnpu_import_cluster_step_trace(p, m);
        else
            rc = nnp__tnpu_import_communication(p, m, m->comms.t.n == 0);
        if (rc == NNP_ENOMEM)
            return rc;
        n_ok += rc == NNP_OK;
    }
    if (n_ok == 0)
        return nnp__fail(NNP_ECORRUPT, "no torch_npu file in '%s' could be read", dir);
    return NNP_OK;
}

const nnp_importer_t nnp__importer_torch_npu = {"torch_npu", find, import};
