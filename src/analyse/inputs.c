/* inputs.c - what the analyse driver analyses under a path: our raw directories (PROF_*,
 * in the path, its profiler/ folder, or the path itself), else other tools' data through
 * the importers of read/importers.h, else MindSpore's host_info CSV. Each input is one rank
 * with the folder its *_{rank} files go to. */
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

#include "analyse/driver.h"
#include "read/host_info_csv.h"
#include "read/raw_reader.h"
#include "util/util.h"

#define PROFILER_DIR "profiler"

bool nnp__dir_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int add_input(nnp_input_t *v, int *n, nnp_input_kind_t kind, const char *path,
                     const char *out, int rank)
{
    if (*n >= NNP_MAX_INPUTS)
        return nnp__fail(NNP_EINVAL, "more than %d inputs", NNP_MAX_INPUTS);
    v[*n].kind = kind;
    v[*n].rank = rank;
    if (!nnp__strlcpy(v[*n].path, path, NNP_PATH_MAX) ||
        !nnp__strlcpy(v[*n].out_dir, out, NNP_PATH_MAX))
        return nnp__fail(NNP_ETOOLONG, "path too long: %s", path);
    (*n)++;
    return NNP_OK;
}

/* Adds every raw directory directly under dir (outputs go to dir). */
static int scan_raw_dirs(const char *dir, nnp_input_t *v, int *n)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int rc = NNP_OK;
    if (!d)
        return NNP_OK;
    while (rc == NNP_OK && (e = readdir(d)) != NULL) {
        char p[NNP_PATH_MAX];
        if (strncmp(e->d_name, "PROF_", 5) != 0)
            continue;
        if (nnp__path_join(p, sizeof(p), dir, e->d_name) == NNP_OK && nnp__raw_is_dir(p))
            rc = add_input(v, n, NNP_INPUT_RAW, p, dir, 0);
    }
    closedir(d);
    return rc;
}

int nnp__find_inputs(const char *path, nnp_input_t *v, int *n)
{
    char prof[NNP_PATH_MAX], csv[NNP_PATH_MAX], out[NNP_PATH_MAX];
    int rank, rc;

    *n = 0;
    if (nnp__raw_is_dir(path)) {
        /* A raw directory: its outputs go to the profiler directory above it. */
        const char *slash;
        nnp__strlcpy(out, path, sizeof(out));
        while (strlen(out) > 1 && out[strlen(out) - 1] == '/')
            out[strlen(out) - 1] = '\0';
        slash = strrchr(out, '/');
        if (slash)
            out[slash == out ? 1 : slash - out] = '\0';
        else
            nnp__strlcpy(out, ".", sizeof(out));
        return add_input(v, n, NNP_INPUT_RAW, path, out, 0);
    }
    rc = nnp__path_join(prof, sizeof(prof), path, PROFILER_DIR);
    if (rc != NNP_OK)
        return rc;
    if (nnp__dir_exists(prof))
        rc = scan_raw_dirs(prof, v, n);
    if (rc == NNP_OK && *n == 0)
        rc = scan_raw_dirs(path, v, n);
    for (const nnp_importer_t *const *imp = nnp__importers; rc == NNP_OK && *n == 0 && *imp;
         imp++) {
        nnp_foreign_input_t *found = nnp__calloc(NNP_MAX_INPUTS, sizeof(*found));
        int k;
        if (!found)
            return nnp__fail(NNP_ENOMEM, "out of memory");
        k = (*imp)->find(path, found, NNP_MAX_INPUTS);
        for (int i = 0; rc == NNP_OK && i < k; i++) {
            rc = add_input(v, n, NNP_INPUT_FOREIGN, found[i].path, path, found[i].rank);
            if (rc == NNP_OK)
                v[*n - 1].importer = *imp;
        }
        nnp__free(found);
    }
    if (rc == NNP_OK && *n == 0 && nnp__host_info_csv_find(path, &rank, csv, sizeof(csv))) {
        /* MindSpore's layout: <dir>/profiler/host_info/host_info_{rank}.csv -> outputs in
         * <dir>/profiler/host_info/; a CSV directly in <dir> -> outputs in <dir>/host_info. */
        char *slash;
        nnp__strlcpy(out, csv, sizeof(out));
        slash = strrchr(out, '/');
        if (slash)
            *slash = '\0';
        if (strlen(out) >= strlen("host_info") &&
            strcmp(out + strlen(out) - strlen("host_info"), "host_info") == 0 &&
            (slash = strrchr(out, '/')) != NULL)
            *slash = '\0';
        else if (!slash)
            nnp__strlcpy(out, ".", sizeof(out));
        rc = add_input(v, n, NNP_INPUT_HOST_INFO_CSV, csv, out, rank);
    }
    return rc;
}
