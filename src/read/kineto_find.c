/* kineto_find.c - which files are PyTorch profiler traces, and their ranks, for the Kineto
 * importer (import_kineto.c; kineto_find.h): tensorboard_trace_handler's *.pt.trace.json[.gz]
 * in a folder or one level down, or a file named explicitly that is a Chrome-trace object
 * or the legacy profiler's array; the rank from distributedInfo at the file's head, else
 * from the file's name. */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nnprof/nnprof.h"
#include "read/foreign.h"
#include "read/json_stream.h"
#include "read/kineto_find.h"
#include "util/util.h"

/* File names torch.profiler writes (tensorboard_trace_handler: <worker>.<ts>.pt.trace.json). */
#define TRACE_SUFFIX    ".pt.trace.json"
#define TRACE_GZ_SUFFIX ".pt.trace.json.gz"
#define JSON_SUFFIX     ".json"
#define JSON_GZ_SUFFIX  ".json.gz"
/* Trace files in one folder (one per rank and capture): far above any job's rank count. */
#define MAX_FILES 4096
/* A callback's code for "seen enough" when peeking at a file's head. */
#define PEEK_STOP 1

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* ---- the rank of a file without distributedInfo: "rank-3", "rank_3", "rank3" ---- */

int nnp__kin_rank_from_name(const char *path)
{
    const char *base = strrchr(path, '/'), *p;
    base = base ? base + 1 : path;
    for (p = base; (p = strstr(p, "rank")) != NULL; p += strlen("rank")) {
        const char *d = p + strlen("rank");
        if (*d == '-' || *d == '_')
            d++;
        if (isdigit((unsigned char)*d))
            return (int)strtol(d, NULL, 10);
    }
    return -1;
}

/* ---- find() ---- */

/* The top-level members before the event array give the rank; the first event stops. */
static int rank_member(void *user, const char *key, const cJSON *v)
{
    int64_t x;
    if (strcmp(key, "distributedInfo") == 0 && cJSON_IsObject(v) &&
        nnp__foreign_json_int(nnp__foreign_get(v, "rank"), &x) && x >= 0 && x < INT32_MAX)
        *(int *)user = (int)x;
    return NNP_OK;
}

static int stop_at_first(void *user, const cJSON *e, uint64_t index)
{
    (void)user;
    (void)e;
    (void)index;
    return PEEK_STOP;
}

/* A trace's rank for ordering the inputs: distributedInfo.rank when it precedes the events
 * (Kineto writes it first), else the file name's, else -1 (import() decides). */
static int peek_rank(const char *path)
{
    nnp_json_stream_report_t rep;
    int rank = -1;
    nnp__json_stream_doc(path, NULL, stop_at_first, rank_member, &rank, &rep);
    return rank >= 0 ? rank : nnp__kin_rank_from_name(path);
}

static bool is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_trace_name(const char *name)
{
    return ends_with(name, TRACE_SUFFIX) || ends_with(name, TRACE_GZ_SUFFIX);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds dir's *.pt.trace.json[.gz] files, in name order. */
static int add_dir(const char *dir, nnp_foreign_input_t *out, int cap, int n)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char *names[MAX_FILES];
    size_t k = 0;
    if (!d)
        return n;
    while ((e = readdir(d)) != NULL && k < MAX_FILES)
        if (is_trace_name(e->d_name) && (names[k] = nnp__strdup(e->d_name)) != NULL)
            k++;
    closedir(d);
    qsort(names, k, sizeof(char *), cmp_str);
    for (size_t i = 0; i < k; i++) {
        char p[NNP_PATH_MAX];
        if (n < cap && nnp__path_join(p, sizeof(p), dir, names[i]) == NNP_OK && is_file(p) &&
            nnp__strlcpy(out[n].path, p, sizeof(out[n].path))) {
            out[n].rank = peek_rank(p);
            n++;
        }
        nnp__free(names[i]);
    }
    return n;
}

/* The first event of a file named explicitly, to tell a PyTorch trace from other tools'
 * Chrome-trace files: stops the stream at once (PEEK_STOP). */
static int peek_cb(void *user, const cJSON *e, uint64_t index)
{
    (void)index;
    const cJSON *pid = nnp__foreign_get(e, "pid");
    *(bool *)user = cJSON_IsString(pid) && pid->valuestring &&
                    strcmp(pid->valuestring, NNP_KINETO_LEGACY_PID) == 0;
    return PEEK_STOP;
}

/* A file named explicitly: a trace when its name says so; else a .json[.gz] that is a
 * Chrome-trace object (Kineto's layout) or the legacy profiler's array - never another
 * tool's timeline array (msprof, torch_npu), which the importers before this one read. */
static bool looks_like_kineto(const char *path)
{
    nnp_json_stream_report_t rep;
    bool is_legacy = false;
    int rc;
    if (is_trace_name(path))
        return true;
    if (!ends_with(path, JSON_SUFFIX) && !ends_with(path, JSON_GZ_SUFFIX))
        return false;
    rc = nnp__json_stream_doc(path, NULL, peek_cb, NULL, &is_legacy, &rep);
    if (rc != NNP_OK && rc != PEEK_STOP)
        return false;
    return rep.has_array && (rep.object || is_legacy);
}

int nnp__kin_find(const char *dir, nnp_foreign_input_t *out, int cap)
{
    int n = 0;
    DIR *d;
    struct dirent *e;
    if (cap <= 0)
        return 0;
    if (is_file(dir)) {
        if (!looks_like_kineto(dir) || !nnp__strlcpy(out[0].path, dir, sizeof(out[0].path)))
            return 0;
        out[0].rank = peek_rank(dir);
        return 1;
    }
    n = add_dir(dir, out, cap, 0);
    if (n > 0)
        return n;
    /* One level down: tensorboard log folders (log/RUN/NAME.pt.trace.json), or one folder per
     * rank. */
    d = opendir(dir);
    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL && n < cap) {
        char sub[NNP_PATH_MAX];
        if (e->d_name[0] == '.' || nnp__path_join(sub, sizeof(sub), dir, e->d_name) != NNP_OK)
            continue;
        n = add_dir(sub, out, cap, n);
    }
    closedir(d);
    return n;
}
