/* raw_dirs.c - locating raw directories from what a user types: a PROF_* directory, the
 * profiler/ directory holding them, or the output_path above it. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "read/raw_reader.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int scan(const char *dir, char **out, int cap)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL && n < cap) {
        char path[4096];
        if (strncmp(e->d_name, "PROF_", 5) != 0)
            continue;
        if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path))
            continue;
        if (nnp__raw_is_dir(path))
            out[n++] = strdup(path);
    }
    closedir(d);
    qsort(out, (size_t)n, sizeof(char *), cmp_str);
    return n;
}

int nnp_cli_find_raw_dirs(const char *path, char **out, int cap)
{
    char sub[4096];
    int n;
    if (nnp__raw_is_dir(path)) {
        out[0] = strdup(path);
        return 1;
    }
    n = scan(path, out, cap);
    if (n > 0)
        return n;
    if (snprintf(sub, sizeof(sub), "%s/profiler", path) < (int)sizeof(sub))
        n = scan(sub, out, cap);
    return n;
}
