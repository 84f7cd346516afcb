/* cl_inputs.c - the ranks of a cluster folder, whatever its layout (docs/CLUSTER.md
 * "Inputs"): our run folder (one raw directory per rank), MindInsight's collected layout
 * (cluster_profiler/<id>/profiler/ per host, host_ips_mapping.txt, the networking file
 * hccl.json), folders of CANN PROF_* or torch_npu *_ascend_pt rank folders, MindSpore's
 * per-rank files (step_trace_raw_{rank}..., hccl_raw_{rank}, ascend_cluster_analyse_*), and
 * msprof-analyze's own cluster outputs. Ranks always come from the data (info.json,
 * profiler_info_{rank}.json, file names, hccl.json), never from the order of folders; two
 * inputs of one rank are refused naming both. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "cluster/cluster.h"
#include "read/importers.h"

#define CLUSTER_PROFILER_DIR "cluster_profiler"
#define HOST_MAPPING_FILE    "host_ips_mapping.txt"
#define PROFILER_DIR         "profiler"
#define MPA_OUTPUT_DIR       "cluster_analysis_output"
#define MPA_STEP_FILE        "cluster_step_trace_time.csv"
#define ASCEND_OUTPUT_DIR    "ASCEND_PROFILER_OUTPUT"
#define ASCEND_PT_SUFFIX     "_ascend_pt"
#define STEP_TRACE_PREFIX    "step_trace_raw_"
#define STEP_TRACE_SUFFIX    "_detail_time.csv"
#define PROFILER_INFO_PREFIX "profiler_info_"
#define INFO_JSON            "info.json"
/* Small JSON files read whole: info.json, profiler_info, hccl.json of a large cluster. */
#define SMALL_JSON_MAX (16u * 1024u * 1024u)
/* First capacity of the input list. */
#define INPUTS_INITIAL 64
/* Longest line of host_ips_mapping.txt we accept. */
#define MAPPING_LINE 512
/* Room for the rank list of a message. */
#define LIST_CAP 1024

/* ---- small helpers ---- */

static bool is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The non-negative integer s spells entirely (up to end), or -1. */
static int parse_rank(const char *s, const char *end)
{
    long v = 0;
    if (s == end)
        return -1;
    for (const char *p = s; p < end; p++) {
        if (!isdigit((unsigned char)*p) || v > NNP_CL_MAX_RANKS * 1000L)
            return -1;
        v = v * 10 + (*p - '0');
    }
    return v <= INT32_MAX ? (int)v : -1;
}

cJSON *nnp__cl_read_json(const char *path, size_t max, bool warn)
{
    char *text = NULL;
    size_t len = 0;
    cJSON *j;
    if (nnp__read_file(path, max, &text, &len) != NNP_OK) {
        nnp__clear_error();
        return NULL;
    }
    j = cJSON_ParseWithLength(text, len);
    if (!j && warn)
        NNP_LOG_W("%s: not valid JSON: skipped", path);
    nnp__free(text);
    return j;
}

/* A JSON integer, or a string holding one (hccl.json writes "rank_id": "3"). */
static bool json_int(const cJSON *v, long *out)
{
    char *end;
    if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= INT32_MAX &&
        v->valuedouble == (double)(long)v->valuedouble) {
        *out = (long)v->valuedouble;
        return true;
    }
    if (cJSON_IsString(v) && v->valuestring[0]) {
        long x = strtol(v->valuestring, &end, 10);
        if (*end == '\0' && x >= 0 && x <= INT32_MAX) {
            *out = x;
            return true;
        }
    }
    return false;
}

/* Sorted names of the entries of dir (free with free_names). */
static size_t list_names(const char *dir, char ***out)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **v = NULL;
    size_t n = 0, cap = 0;
    *out = NULL;
    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL) {
        char **nv;
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : INPUTS_INITIAL;
            nv = nnp__realloc(v, cap * sizeof(*v));
            if (!nv)
                break;
            v = nv;
        }
        v[n] = nnp__strdup(e->d_name);
        if (v[n])
            n++;
    }
    closedir(d);
    for (size_t i = 1; i < n; i++) {
        for (size_t k = i; k > 0 && strcmp(v[k - 1], v[k]) > 0; k--) {
            char *t = v[k];
            v[k] = v[k - 1];
            v[k - 1] = t;
        }
    }
    *out = v;
    return n;
}

static void free_names(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        nnp__free(v[i]);
    nnp__free(v);
}

/* ---- the input list ---- */

static nnp_cl_input_t *add(nnp_cl_inputs_t *in, nnp_cl_in_kind_t kind, const char *path, int rank)
{
    nnp_cl_input_t *x;
    if (in->n >= NNP_CL_MAX_RANKS) {
        nnp__fail(NNP_EINVAL, "more than %d ranks", NNP_CL_MAX_RANKS);
        return NULL;
    }
    if (in->n == in->cap) {
        int ncap = in->cap ? in->cap * 2 : INPUTS_INITIAL;
        nnp_cl_input_t *v = nnp__realloc(in->v, (size_t)ncap * sizeof(*v));
        if (!v) {
            nnp__fail(NNP_ENOMEM, "out of memory");
            return NULL;
        }
        in->v = v;
        in->cap = ncap;
    }
    x = &in->v[in->n];
    memset(x, 0, sizeof(*x));
    x->kind = kind;
    x->rank = rank;
    x->device_id = -1;
    x->path = nnp__strdup(path);
    if (!x->path) {
        nnp__fail(NNP_ENOMEM, "out of memory");
        return NULL;
    }
    in->n++;
    return x;
}

void nnp__cl_inputs_fini(nnp_cl_inputs_t *in)
{
    for (int i = 0; i < in->n; i++) {
        for (int k = 0; k < in->v[i].n_children; k++)
            nnp__free(in->v[i].children[k]);
        nnp__free(in->v[i].children);
        nnp__free(in->v[i].path);
    }
    nnp__free(in->v);
    memset(in, 0, sizeof(*in));
}

/* Copies the child-process directories of a raw input (the analyse driver's grouping). */
static int copy_children(nnp_cl_input_t *x, const nnp_inputs_t *set, const nnp_input_t *r)
{
    if (r->n_children <= 0)
        return NNP_OK;
    x->children = nnp__calloc((size_t)r->n_children, sizeof(char *));
    if (!x->children)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    for (int k = 0; k < r->n_children; k++) {
        x->children[k] = nnp__strdup(set->children[r->first_child + k]);
        if (!x->children[k])
            return nnp__fail(NNP_ENOMEM, "out of memory");
        x->n_children++;
    }
    return NNP_OK;
}

static void note_size(nnp_cl_inputs_t *in, long size)
{
    if (size > in->rank_size && size <= NNP_CL_MAX_RANKS)
        in->rank_size = (int)size;
}

/* ---- our raw data ---- */

/* host and rank_size of a raw directory's info.json (the analyse driver's inputs keep
 * neither). */
static void raw_host(nnp_cl_inputs_t *in, const char *raw_dir, nnp_cl_input_t *x)
{
    char p[NNP_PATH_MAX];
    cJSON *j;
    long v;
    if (nnp__path_join(p, sizeof(p), raw_dir, INFO_JSON) != NNP_OK ||
        !(j = nnp__cl_read_json(p, SMALL_JSON_MAX, false)))
        return;
    if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "host")))
        nnp__strlcpy(x->host, cJSON_GetObjectItemCaseSensitive(j, "host")->valuestring,
                     sizeof(x->host));
    if (json_int(cJSON_GetObjectItemCaseSensitive(j, "rank_size"), &v))
        note_size(in, v);
    cJSON_Delete(j);
}

/* Our raw directories under dir (dir/profiler/PROF_*, dir/PROF_*, or dir itself): the
 * analyse driver's finder groups child processes and refuses two runs of one rank. */
static int scan_raw(nnp_cl_inputs_t *in, const char *dir, int host_id, bool *found)
{
    nnp_inputs_t set;
    int rc = nnp__inputs_find(dir, &set);
    *found = false;
    if (rc != NNP_OK) {
        /* Our own results named as data, or nothing readable: other layouts may still fit,
         * except for a rank collision, which is an answer. */
        if (rc == NNP_ECONFLICT)
            return rc;
        nnp__clear_error();
        return NNP_OK;
    }
    if (set.is_foreign || (set.n == 0 && set.n_unranked == 0)) {
        nnp__inputs_fini(&set);
        return NNP_OK;
    }
    *found = true;
    if (set.n_unranked > 0)
        NNP_LOG_E("%s: %d raw director%s without a rank left out (see above)", dir, set.n_unranked,
                  set.n_unranked == 1 ? "y" : "ies");
    /* Our own compact copy: the driver's list holds a PATH_MAX array per rank. */
    for (int i = 0; rc == NNP_OK && i < set.n; i++) {
        const nnp_input_t *r = &set.v[i];
        nnp_cl_input_t *x = add(in, NNP_CL_IN_MODEL, r->path, r->rank);
        if (!x) {
            rc = NNP_ENOMEM;
            break;
        }
        x->device_id = r->device_id;
        x->host_id = host_id;
        rc = copy_children(x, &set, r);
        raw_host(in, r->path, x);
    }
    nnp__inputs_fini(&set);
    return rc;
}

/* ---- other tools' data ---- */

/* MindSpore's per-rank files in dir: one input per step_trace_raw_{rank} (the rank is in
 * the name), plus the rank size of ascend_cluster_analyse_{mode}_{stages}_{size}_{rank}. */
static int scan_mindspore(nnp_cl_inputs_t *in, const char *dir, int host_id, bool *found)
{
    char **names;
    size_t n = list_names(dir, &names);
    int rc = NNP_OK;
    *found = false;
    for (size_t i = 0; rc == NNP_OK && i < n; i++) {
        const char *s = names[i];
        if (strncmp(s, STEP_TRACE_PREFIX, strlen(STEP_TRACE_PREFIX)) == 0 &&
            ends_with(s, STEP_TRACE_SUFFIX)) {
            const char *r0 = s + strlen(STEP_TRACE_PREFIX);
            int rank = parse_rank(r0, s + strlen(s) - strlen(STEP_TRACE_SUFFIX));
            nnp_cl_input_t *x;
            if (rank < 0)
                continue;
            x = add(in, NNP_CL_IN_MINDSPORE, dir, rank);
            if (!x)
                rc = NNP_ENOMEM;
            else
                x->host_id = host_id;
            *found = true;
        } else if (strncmp(s, "ascend_cluster_analyse_", 23) == 0 && ends_with(s, ".csv")) {
            /* ascend_cluster_analyse_{mode}_{stage_num}_{rank_size}_{rank}.csv */
            char mode[NNP_CL_MODE_MAX];
            int stages, size, rank;
            if (sscanf(s + 23, "%23[a-z-]_%d_%d_%d.csv", mode, &stages, &size, &rank) == 4 &&
                stages > 0 && size > 0) {
                note_size(in, size);
                nnp__strlcpy(in->parallel_mode, mode, sizeof(in->parallel_mode));
                in->stage_num = stages;
            }
        }
    }
    free_names(names, n);
    return rc;
}

/* The rank a torch_npu rank folder names: profiler_info_{rank}.json, else the rank_id of
 * profiler_info.json / profiler_metadata.json; -1 when none does. */
static int torch_npu_rank(nnp_cl_inputs_t *in, const char *dir)
{
    char **names;
    size_t n = list_names(dir, &names);
    int rank = -1;
    for (size_t i = 0; rank < 0 && i < n; i++) {
        const char *s = names[i];
        if (strncmp(s, PROFILER_INFO_PREFIX, strlen(PROFILER_INFO_PREFIX)) == 0 &&
            ends_with(s, ".json"))
            rank = parse_rank(s + strlen(PROFILER_INFO_PREFIX), s + strlen(s) - strlen(".json"));
    }
    for (size_t i = 0; i < n; i++) {
        char p[NNP_PATH_MAX];
        cJSON *j;
        long v;
        if ((strncmp(names[i], "profiler_info", 13) != 0 &&
             strcmp(names[i], "profiler_metadata.json") != 0) ||
            !ends_with(names[i], ".json") ||
            nnp__path_join(p, sizeof(p), dir, names[i]) != NNP_OK ||
            !(j = nnp__cl_read_json(p, SMALL_JSON_MAX, false)))
            continue;
        if (rank < 0 && json_int(cJSON_GetObjectItemCaseSensitive(j, "rank_id"), &v))
            rank = (int)v;
        if (json_int(cJSON_GetObjectItemCaseSensitive(j, "rank_size"), &v) ||
            json_int(cJSON_GetObjectItemCaseSensitive(j, "world_size"), &v))
            note_size(in, v);
        cJSON_Delete(j);
    }
    free_names(names, n);
    return rank;
}

static bool is_ascend_pt(const char *dir)
{
    char p[NNP_PATH_MAX];
    return nnp__path_join(p, sizeof(p), dir, ASCEND_OUTPUT_DIR) == NNP_OK && is_dir(p);
}

/* torch_npu rank folders: dir itself, or its sub-folders (*_ascend_pt, or any holding
 * ASCEND_PROFILER_OUTPUT). */
static int scan_torch_npu(nnp_cl_inputs_t *in, const char *dir, int host_id, bool *found)
{
    char **names;
    size_t n;
    int rc = NNP_OK;
    *found = false;
    if (is_ascend_pt(dir)) {
        nnp_cl_input_t *x = add(in, NNP_CL_IN_TORCH_NPU, dir, torch_npu_rank(in, dir));
        *found = true;
        if (!x)
            return NNP_ENOMEM;
        x->host_id = host_id;
        return NNP_OK;
    }
    n = list_names(dir, &names);
    for (size_t i = 0; rc == NNP_OK && i < n; i++) {
        char p[NNP_PATH_MAX];
        nnp_cl_input_t *x;
        if (nnp__path_join(p, sizeof(p), dir, names[i]) != NNP_OK || !is_ascend_pt(p))
            continue;
        x = add(in, NNP_CL_IN_TORCH_NPU, p, torch_npu_rank(in, p));
        if (!x)
            rc = NNP_ENOMEM;
        else
            x->host_id = host_id;
        *found = true;
    }
    free_names(names, n);
    return rc;
}

/* CANN PROF_* collections: the CANN importer finds one input per device. */
static int scan_cann(nnp_cl_inputs_t *in, const char *dir, int host_id, bool *found)
{
    nnp_foreign_input_t *f = nnp__calloc(NNP_MAX_INPUTS, sizeof(*f));
    int k, rc = NNP_OK;
    *found = false;
    if (!f)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    k = nnp__importer_cann.find(dir, f, NNP_MAX_INPUTS);
    for (int i = 0; rc == NNP_OK && i < k; i++) {
        nnp_cl_input_t *x = add(in, NNP_CL_IN_MODEL, f[i].path, f[i].rank);
        const char *d;
        if (!x) {
            rc = NNP_ENOMEM;
            break;
        }
        x->importer = &nnp__importer_cann;
        x->host_id = host_id;
        /* device_N in the path: hccl.json can then name the rank when info.json does not. */
        if ((d = strstr(x->path, "device_")) != NULL)
            x->device_id = parse_rank(d + 7, d + 7 + strspn(d + 7, "0123456789"));
    }
    *found = k > 0;
    nnp__free(f);
    return rc;
}

/* msprof-analyze's cluster outputs: dir itself or dir/cluster_analysis_output. */
static int scan_mpa(nnp_cl_inputs_t *in, const char *dir, bool *found)
{
    char p[NNP_PATH_MAX], sub[NNP_PATH_MAX];
    *found = false;
    if (nnp__path_join(p, sizeof(p), dir, MPA_STEP_FILE) == NNP_OK && is_file(p)) {
        *found = add(in, NNP_CL_IN_MPA_OUTPUT, dir, -1) != NULL;
        return *found ? NNP_OK : NNP_ENOMEM;
    }
    if (nnp__path_join(sub, sizeof(sub), dir, MPA_OUTPUT_DIR) == NNP_OK &&
        nnp__path_join(p, sizeof(p), sub, MPA_STEP_FILE) == NNP_OK && is_file(p)) {
        *found = add(in, NNP_CL_IN_MPA_OUTPUT, sub, -1) != NULL;
        return *found ? NNP_OK : NNP_ENOMEM;
    }
    return NNP_OK;
}

/* One host's (or the whole cluster's) folder: the first layout that fits. */
static int scan_folder(nnp_cl_inputs_t *in, const char *dir, int host_id, bool *found)
{
    char prof[NNP_PATH_MAX];
    int rc = scan_raw(in, dir, host_id, found);
    if (rc != NNP_OK || *found)
        return rc;
    rc = scan_torch_npu(in, dir, host_id, found);
    if (rc != NNP_OK || *found)
        return rc;
    rc = scan_mindspore(in, dir, host_id, found);
    if (rc == NNP_OK && !*found &&
        nnp__path_join(prof, sizeof(prof), dir, PROFILER_DIR) == NNP_OK && is_dir(prof))
        rc = scan_mindspore(in, prof, host_id, found);
    if (rc != NNP_OK || *found)
        return rc;
    rc = scan_cann(in, dir, host_id, found);
    if (rc != NNP_OK || *found)
        return rc;
    return scan_mpa(in, dir, found);
}

/* ---- MindInsight's collected layout and the networking file ---- */

/* host_ips_mapping.txt: "<host> <id>" per line; the host of id, "" when absent. */
static void mapping_host(const char *dir, int id, char *host, size_t cap)
{
    char p[NNP_PATH_MAX], line[MAPPING_LINE];
    FILE *f;
    host[0] = '\0';
    if (nnp__path_join(p, sizeof(p), dir, HOST_MAPPING_FILE) != NNP_OK || !(f = fopen(p, "r")))
        return;
    while (fgets(line, sizeof(line), f)) {
        char h[NNP_CL_HOST_MAX];
        int k;
        if (sscanf(line, "%63s %d", h, &k) == 2 && k == id) {
            nnp__strlcpy(host, h, cap);
            break;
        }
    }
    fclose(f);
}

/* hccl.json (any JSON of dir with a server_list): fills host and device of inputs whose
 * rank it lists, and the rank of inputs that have none but a known host and device. */
static void apply_hccl_json(nnp_cl_inputs_t *in, const char *dir)
{
    char **names;
    size_t n = list_names(dir, &names);
    for (size_t i = 0; i < n; i++) {
        char p[NNP_PATH_MAX];
        const cJSON *servers, *srv;
        cJSON *j;
        int count = 0;
        if (!ends_with(names[i], ".json") ||
            nnp__path_join(p, sizeof(p), dir, names[i]) != NNP_OK || !is_file(p) ||
            !(j = nnp__cl_read_json(p, SMALL_JSON_MAX, false)))
            continue;
        servers = cJSON_GetObjectItemCaseSensitive(j, "server_list");
        cJSON_ArrayForEach(srv, servers)
        {
            const cJSON *sid = cJSON_GetObjectItemCaseSensitive(srv, "server_id"), *dev;
            cJSON_ArrayForEach(dev, cJSON_GetObjectItemCaseSensitive(srv, "device"))
            {
                long rank, device;
                if (!json_int(cJSON_GetObjectItemCaseSensitive(dev, "rank_id"), &rank) ||
                    !json_int(cJSON_GetObjectItemCaseSensitive(dev, "device_id"), &device))
                    continue;
                count++;
                for (int k = 0; k < in->n; k++) {
                    nnp_cl_input_t *x = &in->v[k];
                    bool same_host =
                        cJSON_IsString(sid) && x->host[0] && strcmp(x->host, sid->valuestring) == 0;
                    if (x->rank < 0 && same_host && x->device_id == device) {
                        x->rank = (int)rank;
                        NNP_LOG_I("%s: rank %ld from %s (host %s, device %ld)", x->path, rank,
                                  names[i], x->host, device);
                    }
                    if (x->rank == rank) {
                        if (x->device_id < 0)
                            x->device_id = (int)device;
                        if (!x->host[0] && cJSON_IsString(sid))
                            nnp__strlcpy(x->host, sid->valuestring, sizeof(x->host));
                    }
                }
            }
        }
        if (count > 0) {
            note_size(in, count);
            NNP_LOG_I("%s: networking file with %d ranks", p, count);
        }
        cJSON_Delete(j);
    }
    free_names(names, n);
}

/* run/cluster_profiler/<id>/profiler/ (or <id>/ itself) per host. */
static int scan_collected(nnp_cl_inputs_t *in, const char *dir, bool *found)
{
    char cp[NNP_PATH_MAX], **names;
    size_t n;
    int rc = NNP_OK;
    *found = false;
    if (nnp__path_join(cp, sizeof(cp), dir, CLUSTER_PROFILER_DIR) != NNP_OK || !is_dir(cp))
        return NNP_OK;
    n = list_names(cp, &names);
    for (size_t i = 0; rc == NNP_OK && i < n; i++) {
        char host_dir[NNP_PATH_MAX], prof[NNP_PATH_MAX], host[NNP_CL_HOST_MAX];
        int id = parse_rank(names[i], names[i] + strlen(names[i]));
        int first = in->n;
        bool f = false;
        if (nnp__path_join(host_dir, sizeof(host_dir), cp, names[i]) != NNP_OK || !is_dir(host_dir))
            continue;
        if (nnp__path_join(prof, sizeof(prof), host_dir, PROFILER_DIR) == NNP_OK && is_dir(prof))
            rc = scan_folder(in, prof, id > 0 ? id : 0, &f);
        if (rc == NNP_OK && !f)
            rc = scan_folder(in, host_dir, id > 0 ? id : 0, &f);
        if (!f) {
            NNP_LOG_W("%s: no profiling data found for this host", host_dir);
            continue;
        }
        *found = true;
        mapping_host(dir, id, host, sizeof(host));
        for (int k = first; k < in->n; k++)
            if (!in->v[k].host[0])
                nnp__strlcpy(in->v[k].host, host[0] ? host : names[i], sizeof(in->v[k].host));
    }
    free_names(names, n);
    return rc;
}

/* ---- checks ---- */

static int cmp_inputs(const void *a, const void *b)
{
    const nnp_cl_input_t *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return strcmp(x->path, y->path);
}

/* Two inputs of one rank are refused: their results would be one rank's. */
static int check_duplicates(const nnp_cl_inputs_t *in)
{
    for (int i = 1; i < in->n; i++) {
        const nnp_cl_input_t *a = &in->v[i - 1], *b = &in->v[i];
        if (a->rank >= 0 && a->rank == b->rank)
            return nnp__fail(NNP_ECONFLICT,
                             "rank %d is in the data twice: '%s' and '%s'; a cluster holds one "
                             "input per rank: move one of them out, or analyse them apart",
                             a->rank, a->path, b->path);
    }
    return NNP_OK;
}

/* Inputs that no data gave a rank are refused by path (never numbered by folder order). */
static int check_unranked(const nnp_cl_inputs_t *in)
{
    char list[LIST_CAP] = "";
    int n = 0;
    for (int i = 0; i < in->n; i++) {
        size_t len = strlen(list);
        if (in->v[i].rank >= 0 || in->v[i].kind == NNP_CL_IN_MPA_OUTPUT ||
            in->v[i].kind == NNP_CL_IN_MODEL)
            continue; /* model inputs without a rank are resolved when read (CANN import) */
        if (len < sizeof(list) &&
            snprintf(list + len, sizeof(list) - len, "%s'%s'", n ? ", " : "", in->v[i].path) < 0)
            break;
        n++;
    }
    if (n == 0)
        return NNP_OK;
    return nnp__fail(NNP_EINVAL,
                     "%d rank folder%s name%s no rank (no profiler_info_{rank}.json, rank_id or "
                     "networking file entry): %s; ranks are taken from the data, never from the "
                     "order of folders",
                     n, n == 1 ? "" : "s", n == 1 ? "s" : "", list);
}

/* ---- entry points ---- */

int nnp__cl_inputs_find(const char *dir, nnp_cl_inputs_t *in)
{
    bool found = false;
    int rc;
    memset(in, 0, sizeof(*in));
    if (!is_dir(dir)) {
        struct stat st;
        if (stat(dir, &st) != 0)
            return nnp__fail(nnp__from_errno(errno), "cannot read '%s': %s", dir, strerror(errno));
        return nnp__fail(NNP_EINVAL, "'%s' is not a folder: name the cluster's folder", dir);
    }
    nnp__strlcpy(in->data_dir, dir, sizeof(in->data_dir));
    rc = scan_collected(in, dir, &found);
    if (rc == NNP_OK && found)
        snprintf(in->layout, sizeof(in->layout), "MindInsight collected layout (%s/)",
                 CLUSTER_PROFILER_DIR);
    if (rc == NNP_OK && !found) {
        rc = scan_folder(in, dir, 0, &found);
        if (rc == NNP_OK && found)
            snprintf(in->layout, sizeof(in->layout), "one folder");
    }
    if (rc == NNP_OK && !found) {
        /* A folder of rank folders of any kind: each sub-folder is scanned alone. */
        char **names;
        size_t n = list_names(dir, &names);
        for (size_t i = 0; rc == NNP_OK && i < n; i++) {
            char sub[NNP_PATH_MAX];
            bool f = false;
            if (nnp__path_join(sub, sizeof(sub), dir, names[i]) != NNP_OK || !is_dir(sub))
                continue;
            rc = scan_folder(in, sub, 0, &f);
            found = found || f;
        }
        free_names(names, n);
        if (rc == NNP_OK && found)
            snprintf(in->layout, sizeof(in->layout), "a folder of rank folders");
    }
    if (rc == NNP_OK && !found)
        rc = nnp__fail(NNP_ENOENT,
                       "no cluster data found in '%s' (expected our run folder with one raw "
                       "directory per rank, MindInsight's cluster_profiler/ layout, CANN PROF_* "
                       "or torch_npu *_ascend_pt rank folders, MindSpore's per-rank files, or "
                       "msprof-analyze's cluster_analysis_output; docs/CLUSTER.md)",
                       dir);
    if (rc == NNP_OK)
        apply_hccl_json(in, dir);
    if (rc == NNP_OK)
        rc = check_unranked(in);
    if (rc == NNP_OK) {
        qsort(in->v, (size_t)in->n, sizeof(*in->v), cmp_inputs);
        rc = check_duplicates(in);
    }
    if (rc != NNP_OK) {
        char msg[NNP_PATH_MAX * 2 + NNP_NAME_MAX];
        nnp__strlcpy(msg, nnp_last_error(), sizeof(msg));
        nnp__cl_inputs_fini(in);
        return nnp__fail(rc, "%s", msg);
    }
    return NNP_OK;
}

uint64_t nnp__cl_inputs_digest(const nnp_cl_inputs_t *in)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a 64 over kinds, ranks and paths */
    for (int i = 0; i < in->n; i++) {
        const nnp_cl_input_t *x = &in->v[i];
        const char *p = x->path;
        h = (h ^ (uint64_t)x->kind) * 1099511628211ull;
        h = (h ^ (uint64_t)(uint32_t)x->rank) * 1099511628211ull;
        for (; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ull;
    }
    return h;
}
