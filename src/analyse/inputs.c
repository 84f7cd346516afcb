/* inputs.c - what the analyse driver analyses under a path, one input per rank: our raw
 * directories (PROF_*, in the path, its profiler/ folder, or the path itself), else other
 * tools' data through the importers of read/importers.h, else MindSpore's host_info CSV.
 *
 * Raw directories become ranks here: a child process's directory (info.json
 * parent_raw_dir, CONTRACTS.md section 2) joins its parent's rank; a directory whose
 * info.json is lost gets the one rank the others leave free (or its children's); two
 * runs of the same rank are refused by name, so results of different runs never share a
 * file. Each decision that is not plain from the data is logged. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyse/driver.h"
#include "read/host_info_csv.h"
#include "read/raw_import.h"
#include "read/raw_info.h"
#include "read/raw_reader.h"
#include "util/util.h"

#define PROFILER_DIR    "profiler"
#define PROF_PREFIX     "PROF_"
#define PROF_PREFIX_LEN 5
/* Room for a list of names or ranks in one message. */
#define LIST_CAP 1024

bool nnp__dir_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ---- growing arrays ---- */

static int grow(void **v, int *cap, int need, size_t elem)
{
    int ncap;
    void *p;
    if (need <= *cap)
        return NNP_OK;
    if (need > NNP_MAX_INPUTS)
        return nnp__fail(NNP_EINVAL, "more than %d inputs", NNP_MAX_INPUTS);
    ncap = *cap ? *cap * 2 : 16;
    ncap = ncap < need ? need : ncap > NNP_MAX_INPUTS ? NNP_MAX_INPUTS : ncap;
    p = nnp__realloc(*v, (size_t)ncap * elem);
    if (!p)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    *v = p;
    *cap = ncap;
    return NNP_OK;
}

static int add_input(nnp_inputs_t *in, nnp_input_kind_t kind, const char *path, int rank)
{
    nnp_input_t *x;
    int rc = grow((void **)&in->v, &in->cap, in->n + 1, sizeof(nnp_input_t));
    if (rc != NNP_OK)
        return rc;
    x = &in->v[in->n];
    memset(x, 0, sizeof(*x));
    x->kind = kind;
    x->rank = rank;
    x->device_id = -1;
    if (strlen(path) >= NNP_PATH_MAX)
        return nnp__fail(NNP_ETOOLONG, "path too long: %s", path);
    x->path = nnp__strdup(path);
    if (!x->path)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    in->n++;
    return NNP_OK;
}

static int add_child(nnp_inputs_t *in, const char *path)
{
    int rc =
        grow((void **)&in->children, &in->children_cap, in->n_children + 1, sizeof(*in->children));
    if (rc != NNP_OK)
        return rc;
    if (!nnp__strlcpy(in->children[in->n_children], path, NNP_PATH_MAX))
        return nnp__fail(NNP_ETOOLONG, "path too long: %s", path);
    in->n_children++;
    return NNP_OK;
}

void nnp__inputs_fini(nnp_inputs_t *in)
{
    for (int i = 0; i < in->n; i++)
        nnp__free(in->v[i].path);
    nnp__free(in->v);
    nnp__free(in->children);
    memset(in, 0, sizeof(*in));
}

/* ---- our raw directories ---- */

typedef struct raw_set {
    nnp_raw_desc_t *d;
    int n, cap;
    int *root; /* d[i]'s group: the index of its main directory */
} raw_set_t;

/* By directory name (= start time). The name pointers may dangle while the array grows
 * (they point into each element's path), so the name is taken from the path here. */
static const char *base_name(const nnp_raw_desc_t *d)
{
    const char *slash = strrchr(d->path, '/');
    return slash ? slash + 1 : d->path;
}

static int cmp_desc(const void *a, const void *b)
{
    return strcmp(base_name(a), base_name(b));
}

static void set_fini(raw_set_t *s)
{
    for (int i = 0; i < s->n; i++)
        nnp__raw_desc_fini(&s->d[i]);
    nnp__free(s->d);
    nnp__free(s->root);
    memset(s, 0, sizeof(*s));
}

static int add_desc(raw_set_t *s, const char *path)
{
    int rc = grow((void **)&s->d, &s->cap, s->n + 1, sizeof(nnp_raw_desc_t));
    if (rc == NNP_OK) {
        rc = nnp__raw_desc_read(path, &s->d[s->n]);
        if (rc == NNP_OK)
            s->n++;
        else
            nnp__raw_desc_fini(&s->d[s->n]);
    }
    return rc;
}

/* Every raw directory directly under dir, in name (= start time) order. An unreadable
 * folder is an error naming it (never "no data found"). */
static int scan_raw_dirs(const char *dir, raw_set_t *s)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int rc = NNP_OK;
    if (!d)
        return nnp__fail(nnp__from_errno(errno), "cannot read '%s': %s", dir, strerror(errno));
    while (rc == NNP_OK && (e = readdir(d)) != NULL) {
        char p[NNP_PATH_MAX];
        if (strncmp(e->d_name, PROF_PREFIX, PROF_PREFIX_LEN) != 0)
            continue;
        if (nnp__path_join(p, sizeof(p), dir, e->d_name) == NNP_OK && nnp__raw_is_dir(p))
            rc = add_desc(s, p);
    }
    closedir(d);
    if (s->n > 1)
        qsort(s->d, (size_t)s->n, sizeof(*s->d), cmp_desc);
    for (int i = 0; i < s->n; i++) {
        const char *slash = strrchr(s->d[i].path, '/');
        s->d[i].name = slash ? slash + 1 : s->d[i].path;
    }
    return rc;
}

static int find_by_name(const raw_set_t *s, const char *name)
{
    for (int i = 0; i < s->n; i++) {
        if (strcmp(s->d[i].name, name) == 0)
            return i;
    }
    return -1;
}

/* Groups each child with the directory of its parent (the root of its chain); children
 * whose parent left no directory group by the parent's name, the first of them leading. */
static void group_children(raw_set_t *s)
{
    for (int i = 0; i < s->n; i++)
        s->root[i] = i;
    for (int i = 0; i < s->n; i++) {
        int r = i, hops = 0;
        while (s->d[r].parent_raw_dir[0] && hops++ < s->n) {
            int p = find_by_name(s, s->d[r].parent_raw_dir);
            if (p < 0 || p == r)
                break;
            r = p;
        }
        if (r == i && s->d[i].parent_raw_dir[0]) {
            /* Orphan: lead by the first directory naming the same missing parent. */
            for (int k = 0; k < i; k++) {
                if (s->root[k] == k &&
                    strcmp(s->d[k].parent_raw_dir, s->d[i].parent_raw_dir) == 0 &&
                    find_by_name(s, s->d[k].parent_raw_dir) < 0) {
                    r = k;
                    break;
                }
            }
        }
        s->root[i] = r;
    }
}

/* The rank a group's info.json files give: the main directory's, else a child's (children
 * record their parent's rank). -1 when none does. */
static int group_rank(const raw_set_t *s, int g)
{
    if (s->d[g].rank_id >= 0)
        return s->d[g].rank_id;
    for (int i = 0; i < s->n; i++) {
        if (s->root[i] == g && s->d[i].rank_id >= 0)
            return s->d[i].rank_id;
    }
    return -1;
}

/* Appends "name (pid N)" to a comma-separated list in buf. */
static void append(char *buf, size_t cap, const char *name, int pid)
{
    size_t len = strlen(buf);
    if (len < cap)
        snprintf(buf + len, cap - len, "%s%s (pid %d)", len ? ", " : "", name, pid);
}

/* Gives a rank to the groups whose info.json files name none: the only rank in
 * [0, rank_size) no other group has, when there is exactly one such group. Others stay -1
 * and are reported. */
static void infer_ranks(const raw_set_t *s, int *rank)
{
    int size = 0, n_groups = 0, n_unknown = 0, free_rank = -1, n_free = 0;
    for (int g = 0; g < s->n; g++) {
        if (s->root[g] != g)
            continue;
        n_groups++;
        n_unknown += rank[g] < 0;
        if (s->d[g].rank_size > size)
            size = s->d[g].rank_size;
        if (rank[g] >= size)
            size = rank[g] + 1;
    }
    if (n_unknown == 0)
        return;
    if (size < n_groups)
        size = n_groups;
    for (int r = 0; r < size && n_free < 2; r++) {
        bool taken = false;
        for (int g = 0; g < s->n && !taken; g++)
            taken = s->root[g] == g && rank[g] == r;
        if (!taken) {
            free_rank = free_rank < 0 ? r : free_rank;
            n_free++;
        }
    }
    for (int g = 0; g < s->n; g++) {
        if (s->root[g] != g || rank[g] >= 0)
            continue;
        char what[NNP_NAME_MAX + 32];
        if (s->d[g].has_info)
            snprintf(what, sizeof(what), "info.json names no valid rank_id");
        else
            snprintf(what, sizeof(what), "no info.json (%s)", s->d[g].why_no_info);
        if (n_unknown == 1 && n_free == 1) {
            rank[g] = free_rank;
            NNP_LOG_W("%s: %s: analysed as rank %d, the only rank of 0..%d no other raw "
                      "directory has; its device id and options are unknown",
                      s->d[g].path, what, free_rank, size - 1);
        } else {
            NNP_LOG_E("%s: %s and its rank cannot be inferred (%d raw directories without a "
                      "rank, %d free ranks in 0..%d): not analysed; restore its info.json, or "
                      "analyse it alone (nnprof analyse -o OUT %s)",
                      s->d[g].path,
                      s->d[g].has_info ? "info.json names no valid rank_id" : "no info.json",
                      n_unknown, n_free, size - 1, s->d[g].path);
        }
    }
}

/* Refuses two groups with the same rank (two runs written into one folder), naming them. */
static int check_collisions(const raw_set_t *s, const int *rank)
{
    char names[LIST_CAP];
    for (int g = 0; g < s->n; g++) {
        int n_same = 0;
        if (s->root[g] != g || rank[g] < 0)
            continue;
        names[0] = '\0';
        for (int k = g; k < s->n; k++) {
            if (s->root[k] == k && rank[k] == rank[g]) {
                append(names, sizeof(names), s->d[k].name, (int)s->d[k].pid);
                n_same++;
            }
        }
        if (n_same > 1)
            return nnp__fail(NNP_ECONFLICT,
                             "rank %d was recorded by %d runs in one folder: %s; results of "
                             "different runs never share files, so nothing was analysed: analyse "
                             "one run at a time (nnprof analyse -o OUT DIR/PROF_...) or move the "
                             "other runs' directories out of the folder",
                             rank[g], n_same, names);
    }
    return NNP_OK;
}

/* Turns the raw directories into inputs: one per group, children listed with it. */
static int raw_inputs(raw_set_t *s, nnp_inputs_t *in)
{
    int *rank = nnp__calloc((size_t)s->n, sizeof(int));
    int rc = NNP_OK;
    s->root = nnp__calloc((size_t)s->n, sizeof(int));
    if (!rank || !s->root) {
        nnp__free(rank);
        return nnp__fail(NNP_ENOMEM, "out of memory");
    }
    group_children(s);
    for (int g = 0; g < s->n; g++) {
        rank[g] = s->root[g] == g ? group_rank(s, g) : -1;
        if (s->root[g] != g)
            NNP_LOG_I("%s: child process (%s) of %s: analysed with its rank", s->d[g].path,
                      s->d[g].child_kind[0] ? s->d[g].child_kind : "child", s->d[g].parent_raw_dir);
    }
    infer_ranks(s, rank);
    rc = check_collisions(s, rank);
    for (int g = 0; rc == NNP_OK && g < s->n; g++) {
        if (s->root[g] != g)
            continue;
        if (rank[g] < 0) {
            in->n_unranked++;
            continue;
        }
        rc = add_input(in, NNP_INPUT_RAW, s->d[g].path, rank[g]);
        if (rc != NNP_OK)
            break;
        in->v[in->n - 1].device_id = s->d[g].device_id;
        in->v[in->n - 1].first_child = in->n_children;
        for (int k = 0; rc == NNP_OK && k < s->n; k++) {
            if (k != g && s->root[k] == g) {
                rc = add_child(in, s->d[k].path);
                in->v[in->n - 1].n_children++;
            }
        }
    }
    nnp__free(rank);
    return rc;
}

/* ---- the output folder and the data folder ---- */

static void parent_of(const char *path, char *out, size_t cap)
{
    char *slash;
    nnp__strlcpy(out, path, cap);
    while (strlen(out) > 1 && out[strlen(out) - 1] == '/')
        out[strlen(out) - 1] = '\0';
    slash = strrchr(out, '/');
    if (slash)
        out[slash == out ? 1 : slash - out] = '\0';
    else
        nnp__strlcpy(out, ".", cap);
}

/* A raw directory named directly: it, plus its children beside it. */
static int find_one_raw_dir(const char *path, nnp_inputs_t *in)
{
    raw_set_t s;
    char folder[NNP_PATH_MAX];
    nnp_raw_desc_t self;
    int rc;

    memset(&s, 0, sizeof(s));
    parent_of(path, folder, sizeof(folder));
    nnp__strlcpy(in->out_dir, folder, sizeof(in->out_dir));
    rc = nnp__raw_desc_read(path, &self);
    if (rc == NNP_OK)
        rc = add_desc(&s, path);
    if (rc == NNP_OK && nnp__dir_exists(folder)) {
        /* Children of this directory in the same folder join it. */
        raw_set_t all;
        memset(&all, 0, sizeof(all));
        if (scan_raw_dirs(folder, &all) == NNP_OK) {
            for (int i = 0; rc == NNP_OK && i < all.n; i++) {
                if (strcmp(all.d[i].parent_raw_dir, self.name) == 0 &&
                    strcmp(all.d[i].name, self.name) != 0)
                    rc = add_desc(&s, all.d[i].path);
            }
        }
        set_fini(&all);
    }
    for (int i = 0; i < s.n; i++) {
        const char *slash = strrchr(s.d[i].path, '/');
        s.d[i].name = slash ? slash + 1 : s.d[i].path;
    }
    /* The one named is the main directory, whatever its info.json says. */
    if (s.n > 0)
        s.d[0].parent_raw_dir[0] = '\0';
    if (rc == NNP_OK)
        rc = raw_inputs(&s, in);
    nnp__raw_desc_fini(&self);
    set_fini(&s);
    return rc;
}

/* ---- other tools' data ---- */

static int find_foreign(const char *path, nnp_inputs_t *in)
{
    char csv[NNP_PATH_MAX];
    int rank = -1, rc = NNP_OK; /* -1: any rank (nnp__host_info_csv_find reads it) */
    for (const nnp_importer_t *const *imp = nnp__importers; rc == NNP_OK && in->n == 0 && *imp;
         imp++) {
        nnp_foreign_input_t *found = nnp__calloc(NNP_MAX_INPUTS, sizeof(*found));
        int k;
        if (!found)
            return nnp__fail(NNP_ENOMEM, "out of memory");
        k = (*imp)->find(path, found, NNP_MAX_INPUTS);
        for (int i = 0; rc == NNP_OK && i < k; i++) {
            rc = add_input(in, NNP_INPUT_FOREIGN, found[i].path, found[i].rank);
            if (rc == NNP_OK)
                in->v[in->n - 1].importer = *imp;
        }
        nnp__free(found);
    }
    if (rc == NNP_OK && in->n == 0 && nnp__host_info_csv_find(path, &rank, csv, sizeof(csv)))
        rc = add_input(in, NNP_INPUT_HOST_INFO_CSV, csv, rank);
    if (rc == NNP_OK && in->n > 0) {
        /* Other tools' files are never written: results go to a folder of our own. */
        in->is_foreign = true;
        if (nnp__dir_exists(path))
            nnp__strlcpy(in->data_dir, path, sizeof(in->data_dir));
        else
            parent_of(path, in->data_dir, sizeof(in->data_dir));
        rc = nnp__path_join(in->out_dir, sizeof(in->out_dir), in->data_dir, NNP_FOREIGN_OUT_DIR);
    }
    return rc;
}

/* Two foreign inputs of one rank would write the same files: refused by name. Inputs whose
 * rank only the import can tell (-1) are imported as rank 0 when nothing else says (the
 * importers' rule), so they count as 0 here. */
static int check_foreign_collisions(const nnp_inputs_t *in)
{
    for (int i = 0; i < in->n; i++) {
        int ri = in->v[i].rank < 0 ? 0 : in->v[i].rank;
        for (int k = i + 1; k < in->n; k++) {
            int rk = in->v[k].rank < 0 ? 0 : in->v[k].rank;
            if (ri == rk)
                return nnp__fail(NNP_ECONFLICT,
                                 "'%s' and '%s' are both rank %d (a missing rank counts as 0); "
                                 "their results would share files, so nothing was analysed: "
                                 "analyse them one at a time with -o OUT",
                                 in->v[i].path, in->v[k].path, ri);
        }
    }
    return NNP_OK;
}

/* An output folder of ours (profiler_info_*.json written by nnprof) read as other tools'
 * data would analyse our own results: refused. */
static bool holds_our_results(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    bool found = false;
    if (!d)
        return false;
    while (!found && (e = readdir(d)) != NULL) {
        char p[NNP_PATH_MAX], *text = NULL;
        if (strncmp(e->d_name, "profiler_info_", strlen("profiler_info_")) != 0 ||
            nnp__path_join(p, sizeof(p), dir, e->d_name) != NNP_OK ||
            nnp__read_file(p, 1u << 20, &text, NULL) != NNP_OK)
            continue;
        found = strstr(text, "\"nnprof_version\"") != NULL;
        nnp__free(text);
    }
    closedir(d);
    return found;
}

/* ---- the entry point ---- */

static int check_readable(const char *path)
{
    struct stat st;
    DIR *d;
    if (stat(path, &st) != 0)
        return nnp__fail(nnp__from_errno(errno), "cannot read '%s': %s", path, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return NNP_OK; /* a file: the importers say whether they read it */
    d = opendir(path);
    if (!d)
        return nnp__fail(nnp__from_errno(errno), "cannot read '%s': %s", path, strerror(errno));
    closedir(d);
    return NNP_OK;
}

int nnp__inputs_find(const char *path, nnp_inputs_t *in)
{
    char prof[NNP_PATH_MAX];
    raw_set_t s;
    int rc, found;

    memset(in, 0, sizeof(*in));
    rc = check_readable(path);
    if (rc != NNP_OK)
        return rc;
    if (nnp__raw_is_dir(path))
        return find_one_raw_dir(path, in);
    memset(&s, 0, sizeof(s));
    rc = nnp__path_join(prof, sizeof(prof), path, PROFILER_DIR);
    if (rc == NNP_OK && nnp__dir_exists(prof)) {
        rc = scan_raw_dirs(prof, &s);
        nnp__strlcpy(in->out_dir, prof, sizeof(in->out_dir));
    }
    if (rc == NNP_OK && s.n == 0 && nnp__dir_exists(path)) {
        rc = scan_raw_dirs(path, &s);
        nnp__strlcpy(in->out_dir, path, sizeof(in->out_dir));
    }
    if (rc == NNP_OK && s.n > 0)
        rc = raw_inputs(&s, in);
    found = s.n;
    set_fini(&s);
    if (rc != NNP_OK || found > 0)
        return rc;
    in->out_dir[0] = '\0';
    if ((nnp__dir_exists(path) && holds_our_results(path)) ||
        (nnp__dir_exists(prof) && holds_our_results(prof)))
        return nnp__fail(NNP_EINVAL,
                         "'%s' holds nnprof's analysis results (profiler_info_*.json), not "
                         "profiling data: read them with 'nnprof summary %s', or analyse the "
                         "folder the data is in",
                         path, path);
    rc = find_foreign(path, in);
    if (rc == NNP_OK)
        rc = check_foreign_collisions(in);
    return rc;
}

/* ---- nothing found: where the data may be ---- */

/* How deep below the folder named, and how many folders at most, nnp__inputs_suggest looks:
 * a MindInsight train job holds its data two levels down (run/normal_run/profiler). */
#define SUGGEST_DEPTH  3
#define SUGGEST_VISITS 512
/* Folders named at most; the others are counted. */
#define SUGGEST_NAMES 4

/* Whether dir holds data analyse reads (a raw directory, other tools' files, a host_info
 * CSV): the importers' probes only, nothing imported or logged. */
static bool looks_like_data(const char *dir)
{
    nnp_foreign_input_t *found;
    char csv[NNP_PATH_MAX];
    int rank = -1;
    bool yes = nnp__raw_is_dir(dir) || nnp__host_info_csv_find(dir, &rank, csv, sizeof(csv));
    found = yes ? NULL : nnp__calloc(NNP_MAX_INPUTS, sizeof(*found));
    for (const nnp_importer_t *const *imp = nnp__importers; found && !yes && *imp; imp++)
        yes = (*imp)->find(dir, found, NNP_MAX_INPUTS) > 0;
    nnp__free(found);
    return yes;
}

int nnp__inputs_suggest(const char *path, char *out, size_t cap)
{
    /* Breadth first: the folders to look into, as offsets into one growing text. */
    char(*queue)[NNP_PATH_MAX] = nnp__malloc(SUGGEST_VISITS * sizeof(*queue));
    int depth[SUGGEST_VISITS], head = 0, tail = 0, found = 0;
    size_t len = 0;
    if (!queue || cap == 0)
        goto out;
    out[0] = '\0';
    nnp__strlcpy(queue[tail], path, sizeof(queue[tail]));
    depth[tail++] = 0;
    while (head < tail) {
        const char *dir = queue[head];
        int dd = depth[head++];
        DIR *d;
        struct dirent *e;
        if (dd > 0 && holds_our_results(dir))
            continue; /* an earlier analysis's output folder: not data */
        if (dd > 0 && looks_like_data(dir)) {
            /* A raw directory is analysed through the folder that holds it. */
            char shown[NNP_PATH_MAX];
            if (nnp__raw_is_dir(dir))
                parent_of(dir, shown, sizeof(shown));
            else
                nnp__strlcpy(shown, dir, sizeof(shown));
            char quoted[NNP_PATH_MAX + 2];
            snprintf(quoted, sizeof(quoted), "'%s'", shown);
            if (!strstr(out, quoted) && found >= SUGGEST_NAMES) {
                found++;
            } else if (!strstr(out, quoted)) {
                int k = snprintf(out + len, cap - len, "%s%s", found ? ", " : "", quoted);
                if (k < 0 || (size_t)k >= cap - len) {
                    out[len] = '\0'; /* no name cut in half */
                    break;
                }
                len += (size_t)k;
                found++;
            }
            continue;
        }
        if (dd >= SUGGEST_DEPTH || !(d = opendir(dir)))
            continue;
        while ((e = readdir(d)) != NULL && tail < SUGGEST_VISITS) {
            char sub[NNP_PATH_MAX];
            if (e->d_name[0] == '.' || (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN))
                continue;
            if (nnp__path_join(sub, sizeof(sub), dir, e->d_name) != NNP_OK || !nnp__dir_exists(sub))
                continue;
            nnp__strlcpy(queue[tail], sub, sizeof(queue[tail]));
            depth[tail++] = dd + 1;
        }
        closedir(d);
    }
    if (found > SUGGEST_NAMES && len < cap)
        snprintf(out + len, cap - len, " and %d more", found - SUGGEST_NAMES);
out:
    nnp__free(queue);
    return found;
}

/* ---- importing one input ---- */

int nnp__input_import(const nnp_inputs_t *in, int i, nnp_model_t *m)
{
    const nnp_input_t *x = &in->v[i];
    int rc;
    if (x->kind == NNP_INPUT_RAW) {
        const char *dirs[NNP_MAX_INPUTS + 1];
        int n = 0;
        dirs[n++] = x->path;
        for (int k = 0; k < x->n_children && n <= NNP_MAX_INPUTS; k++)
            dirs[n++] = in->children[x->first_child + k];
        rc = nnp__import_raw_group(dirs, (size_t)n, m);
    } else if (x->kind == NNP_INPUT_FOREIGN) {
        rc = x->importer->import(x->path, m);
        if (rc == NNP_OK)
            rc = nnp__model_finish(m);
    } else {
        rc = nnp__import_host_info_csv(x->path, m);
        if (rc == NNP_OK)
            rc = nnp__model_finish(m);
    }
    /* The rank the driver decided (from info.json, inference or the file name) wins. */
    if (rc == NNP_OK && x->rank >= 0)
        m->info.rank_id = x->rank;
    return rc;
}
