/* import_cann.c - importer of CANN msprof collections (issue #7): PROF_XXX/device_N/timeline/
 * msprof_*.json (older CANN, one file per iteration) or PROF_XXX/mindstudio_profiler_output/
 * msprof_*.json (newer), plus device_N/info.json.N for rank and device. Each timeline file is
 * streamed one event at a time (json_stream.h); a bad file, line or key is logged with its
 * place and skipped, never fatal. Mapping of tasks to tables: docs/IMPORT-cann.md. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "nnprof/nnprof.h"
#include "read/foreign.h"
#include "read/importers.h"
#include "read/json_stream.h"
#include "util/checked.h"
#include "util/util.h"

/* What find() and import() look for (formats.md 3, "Layout"). */
#define PROF_PREFIX    "PROF_"
#define DEVICE_PREFIX  "device_"
#define TIMELINE_DIR   "timeline"
#define NEW_OUTPUT_DIR "mindstudio_profiler_output"
#define PROFILER_DIR   "profiler"
#define MSPROF_PREFIX  "msprof_"
#define INFO_PREFIX    "info.json"
#define START_PREFIX   "start_info"
#define JSON_SUFFIX    ".json"
#define SOURCE_FORMAT  "cann-msprof"
/* info.json and start_info are one small object each; a bigger one is not ours. */
#define INFO_MAX_BYTES (4u * 1024u * 1024u)
/* Timeline files in one directory: 10 per run in the corpus; sliced newer runs have a few
 * dozen. Beyond this the rest are ignored with a warning. */
#define MAX_FILES 4096
/* Distinct (pid, tid) pairs remembered per file: msprof writes a few dozen. */
#define MAX_THREADS 1024
/* ns per us: msprof writes ts/dur in us with up to 3 decimals (formats.md 1.4). */
#define NS_PER_US 1000
/* The de-duplication set starts here and doubles at half full (open addressing). */
#define SEEN_INITIAL 1024
/* "Step Trace(Model ID:2)": the graph id follows this text in the thread name. */
#define MODEL_ID_KEY "Model ID:"

/* What a process of the timeline holds, from its process_name (formats.md 1.4 table).
 * "Task Scheduler" is the older CANN name of the hardware task process. */
typedef enum proc_kind { PROC_OTHER = 0, PROC_HW, PROC_HCCL, PROC_HOST, PROC_OVERLAP } proc_kind_t;

typedef struct thread_meta {
    double pid, tid;
    int kind;     /* proc_kind_t of the process (pid rows only, tid ignored) */
    char *name;   /* thread_name, NULL for process rows */
    bool is_proc; /* a process_name row */
} thread_meta_t;

/* One import. */
typedef struct cann {
    nnp_model_t *m;
    const char *file; /* the file being read, for messages */
    thread_meta_t meta[MAX_THREADS];
    size_t n_meta;
    uint64_t *seen; /* de-duplication set of earlier files' event hashes, 0 = empty slot */
    size_t seen_cap, n_seen;
    uint64_t *pending; /* this file's event hashes, added to seen when the file ends */
    size_t n_pending, pending_cap;
    bool remember; /* a later file follows: this file's events must be remembered */
    uint32_t device_id;
    uint64_t n_bad_events; /* of this file */
    uint64_t n_kernels, n_comms, n_steps, n_skipped_tasks, n_dups;
    int rc; /* first hard error (out of memory) */
} cann_t;

/* ---- small helpers ---- */

static bool starts_with(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static bool ends_with(const char *s, const char *p)
{
    size_t n = strlen(s), k = strlen(p);
    return n >= k && strcmp(s + n - k, p) == 0;
}

static bool is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        nnp__free(v[i]);
    nnp__free(v);
}

/* Names in dir starting with prefix (and ending with suffix, when given), sorted so the
 * import is deterministic. *out is NULL and 0 returned when the directory cannot be read. */
static size_t list_dir(const char *dir, const char *prefix, const char *suffix, char ***out)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **v = NULL;
    size_t n = 0;
    *out = NULL;
    if (!d)
        return 0;
    v = nnp__calloc(MAX_FILES, sizeof(*v));
    while (v && (e = readdir(d)) != NULL) {
        if (!starts_with(e->d_name, prefix) || (suffix && !ends_with(e->d_name, suffix)))
            continue;
        if (n == MAX_FILES) {
            NNP_LOG_W("cann: %s: more than %d entries named %s*: the rest are ignored", dir,
                      MAX_FILES, prefix);
            break;
        }
        if ((v[n] = nnp__strdup(e->d_name)) != NULL)
            n++;
    }
    closedir(d);
    if (n > 1)
        qsort(v, n, sizeof(*v), cmp_str);
    *out = v;
    return n;
}

static bool has_msprof(const char *dir)
{
    char **v;
    size_t n = list_dir(dir, MSPROF_PREFIX, JSON_SUFFIX, &v);
    free_names(v, n);
    return n > 0;
}

/* ---- find() ---- */

static int add_found(nnp_foreign_input_t *out, int cap, int *n, const char *path, int rank)
{
    if (*n >= cap)
        return NNP_OK;
    if (!nnp__strlcpy(out[*n].path, path, sizeof(out[*n].path))) {
        NNP_LOG_W("cann: path too long, skipped: %s", path);
        return NNP_OK;
    }
    out[*n].rank = rank;
    (*n)++;
    return NNP_OK;
}

static int read_rank(const char *dev_dir);

/* One PROF_* directory: the newer single output directory when it has timelines, else one
 * input per device_N/timeline with msprof files. */
static void scan_prof(const char *prof, nnp_foreign_input_t *out, int cap, int *n)
{
    char p[NNP_PATH_MAX], q[NNP_PATH_MAX];
    char **devs;
    size_t n_devs = list_dir(prof, DEVICE_PREFIX, NULL, &devs);
    if (nnp__path_join(p, sizeof(p), prof, NEW_OUTPUT_DIR) == NNP_OK && has_msprof(p)) {
        int rank = -1;
        for (size_t i = 0; i < n_devs && rank < 0; i++)
            if (nnp__path_join(q, sizeof(q), prof, devs[i]) == NNP_OK)
                rank = read_rank(q);
        add_found(out, cap, n, p, rank);
        free_names(devs, n_devs);
        return;
    }
    for (size_t i = 0; i < n_devs; i++) {
        if (nnp__path_join(p, sizeof(p), prof, devs[i]) != NNP_OK ||
            nnp__path_join(q, sizeof(q), p, TIMELINE_DIR) != NNP_OK || !has_msprof(q))
            continue;
        add_found(out, cap, n, p, read_rank(p));
    }
    free_names(devs, n_devs);
}

static void scan_parent(const char *dir, nnp_foreign_input_t *out, int cap, int *n)
{
    char p[NNP_PATH_MAX];
    char **v;
    size_t k = list_dir(dir, PROF_PREFIX, NULL, &v);
    for (size_t i = 0; i < k; i++)
        if (nnp__path_join(p, sizeof(p), dir, v[i]) == NNP_OK && is_dir(p))
            scan_prof(p, out, cap, n);
    free_names(v, k);
}

/* dir itself when it is a PROF_* directory, else its PROF_* children, else those of
 * dir/profiler (MindSpore's output_path layout). */
static int find(const char *dir, nnp_foreign_input_t *out, int cap)
{
    char p[NNP_PATH_MAX];
    const char *base = strrchr(dir, '/');
    int n = 0;
    base = base ? base + 1 : dir;
    if (!is_dir(dir))
        return 0;
    if (starts_with(base, PROF_PREFIX))
        scan_prof(dir, out, cap, &n);
    if (n == 0)
        scan_parent(dir, out, cap, &n);
    if (n == 0 && nnp__path_join(p, sizeof(p), dir, PROFILER_DIR) == NNP_OK && is_dir(p))
        scan_parent(p, out, cap, &n);
    return n;
}

/* ---- info.json, start_info ---- */

/* Parses the first file named prefix* in dir; NULL (logged when present but bad). */
static cJSON *read_small_json(const char *dir, const char *prefix, char *path, size_t cap)
{
    char **v;
    size_t n = list_dir(dir, prefix, NULL, &v);
    cJSON *j = NULL;
    char *text = NULL;
    size_t len = 0;
    size_t i = 0;
    while (i < n && ends_with(v[i], ".done")) /* "filesize:NNN" markers, not JSON */
        i++;
    if (i == n || nnp__path_join(path, cap, dir, v[i]) != NNP_OK) {
        free_names(v, n);
        return NULL;
    }
    free_names(v, n);
    if (nnp__read_file(path, INFO_MAX_BYTES, &text, &len) != NNP_OK) {
        NNP_LOG_W("cann: %s: cannot read: %s", path, nnp_last_error());
        return NULL;
    }
    j = cJSON_ParseWithLength(text, len);
    if (!cJSON_IsObject(j)) {
        NNP_LOG_W("cann: %s: not a JSON object (near byte %ld)", path,
                  j ? 0L : (long)(cJSON_GetErrorPtr() - text));
        cJSON_Delete(j);
        j = NULL;
    }
    nnp__free(text);
    return j;
}

/* rank_id of dev_dir/info.json.N, or -1 (silently: import() says why). */
static int read_rank(const char *dev_dir)
{
    char path[NNP_PATH_MAX];
    cJSON *j = read_small_json(dev_dir, INFO_PREFIX, path, sizeof(path));
    int64_t r = -1;
    if (j && !nnp__foreign_json_int(nnp__foreign_get(j, "rank_id"), &r))
        r = -1;
    cJSON_Delete(j);
    return r >= 0 && r <= INT32_MAX ? (int)r : -1;
}

/* The number after "device_" in a path component, or -1. */
static int device_from_path(const char *dir)
{
    const char *s = strstr(dir, DEVICE_PREFIX);
    char *end;
    long v;
    if (!s)
        return -1;
    v = strtol(s + strlen(DEVICE_PREFIX), &end, 10);
    return end != s + strlen(DEVICE_PREFIX) && v >= 0 && v <= INT32_MAX ? (int)v : -1;
}

/* Rank and device from info.json.N ("rank_id", "devices"), the wall-clock offset from
 * start_info (formats.md 2.8: collectionTimeBegin us - clockMonotonicRaw ns / 1000). Every
 * missing piece is logged and defaulted: rank 0, device from the directory name. */
static void read_info(cann_t *x, const char *dev_dir)
{
    char path[NNP_PATH_MAX];
    nnp_run_info_t *info = &x->m->info;
    cJSON *j = read_small_json(dev_dir, INFO_PREFIX, path, sizeof(path));
    int64_t v;
    int dev = device_from_path(dev_dir);
    info->rank_id = 0;
    if (!j) {
        NNP_LOG_W("cann: %s: no readable info.json*: rank unknown, using 0", dev_dir);
    } else {
        if (nnp__foreign_json_int(nnp__foreign_get(j, "rank_id"), &v) && v >= 0 && v <= INT32_MAX)
            info->rank_id = (int)v;
        else
            NNP_LOG_W("cann: %s: key 'rank_id' missing or not a number: using 0", path);
        if (nnp__foreign_json_int(nnp__foreign_get(j, "devices"), &v) && v >= 0 && v <= INT32_MAX)
            dev = (int)v;
    }
    cJSON_Delete(j);
    info->device_id = dev >= 0 ? dev : 0;
    x->device_id = (uint32_t)info->device_id;
    j = read_small_json(dev_dir, START_PREFIX, path, sizeof(path));
    if (j) {
        int64_t begin_us, raw_ns, diff_us;
        /* raw_ns / NS_PER_US is never INT64_MIN, so its negation is defined. */
        if (nnp__foreign_json_int(nnp__foreign_get(j, "collectionTimeBegin"), &begin_us) &&
            nnp__foreign_json_int(nnp__foreign_get(j, "clockMonotonicRaw"), &raw_ns) &&
            nnp__i64_add(begin_us, -(raw_ns / NS_PER_US), &diff_us)) {
            info->start_wall_us = begin_us;
            info->diff_time_us = diff_us;
        } else {
            NNP_LOG_W("cann: %s: collectionTimeBegin or clockMonotonicRaw missing or out of "
                      "range: no wall-clock offset",
                      path);
        }
    }
    cJSON_Delete(j);
}

/* ---- pass 1: process and thread names ---- */

static int proc_kind(const char *name)
{
    if (strcmp(name, "Ascend Hardware") == 0 || strcmp(name, "Task Scheduler") == 0)
        return PROC_HW;
    if (starts_with(name, "HCCL") || strcmp(name, "Communication") == 0)
        return PROC_HCCL;
    if (starts_with(name, "Overlap Analysis"))
        return PROC_OVERLAP;
    if (strcmp(name, "CANN") == 0 || strcmp(name, "AscendCL") == 0 ||
        strcmp(name, "Runtime") == 0 || strcmp(name, "GE") == 0 || strcmp(name, "Python") == 0)
        return PROC_HOST;
    return PROC_OTHER;
}

static thread_meta_t *meta_find(cann_t *x, double pid, double tid, bool is_proc)
{
    for (size_t i = 0; i < x->n_meta; i++)
        if (x->meta[i].is_proc == is_proc && x->meta[i].pid == pid &&
            (is_proc || x->meta[i].tid == tid))
            return &x->meta[i];
    return NULL;
}

static int meta_cb(void *user, const cJSON *e, uint64_t index)
{
    cann_t *x = user;
    const cJSON *ph = nnp__foreign_get(e, "ph");
    const cJSON *name = nnp__foreign_get(e, "name");
    const cJSON *args = nnp__foreign_get(e, "args");
    const cJSON *val = nnp__foreign_get(args, "name");
    const cJSON *pid = nnp__foreign_get(e, "pid");
    const cJSON *tid = nnp__foreign_get(e, "tid");
    bool is_proc;
    thread_meta_t *t;
    (void)index;
    if (!cJSON_IsString(ph) || strcmp(ph->valuestring, "M") != 0 || !cJSON_IsString(name) ||
        !cJSON_IsString(val) || !cJSON_IsNumber(pid))
        return 0;
    is_proc = strcmp(name->valuestring, "process_name") == 0;
    if (!is_proc && strcmp(name->valuestring, "thread_name") != 0)
        return 0;
    if (meta_find(x, pid->valuedouble, cJSON_IsNumber(tid) ? tid->valuedouble : 0, is_proc))
        return 0; /* msprof repeats the metadata of a process per section */
    if (x->n_meta == MAX_THREADS)
        return 0;
    t = &x->meta[x->n_meta];
    memset(t, 0, sizeof(*t));
    t->pid = pid->valuedouble;
    t->tid = cJSON_IsNumber(tid) ? tid->valuedouble : 0;
    t->is_proc = is_proc;
    if (is_proc) {
        t->kind = proc_kind(val->valuestring);
    } else if (!(t->name = nnp__strdup(val->valuestring))) {
        x->rc = nnp__fail(NNP_ENOMEM, "out of memory importing %s", x->file);
        return x->rc;
    }
    x->n_meta++;
    return 0;
}

static void meta_clear(cann_t *x)
{
    for (size_t i = 0; i < x->n_meta; i++)
        nnp__free(x->meta[i].name);
    x->n_meta = 0;
}

/* ---- de-duplication: an event seen in an earlier file (overlapping exports) ---- */

/* splitmix64 finaliser: a well-mixed 64-bit hash of the event's identity. */
static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

/* Adds key to the set of earlier files' events. false when out of memory (the key is then
 * not remembered: a later duplicate is kept rather than an event lost). */
static bool set_put(cann_t *x, uint64_t key)
{
    size_t mask, i;
    if (2 * (x->n_seen + 1) > x->seen_cap) {
        size_t ncap = x->seen_cap ? x->seen_cap * 2 : SEEN_INITIAL;
        uint64_t *nv = nnp__calloc(ncap, sizeof(*nv));
        if (!nv)
            return false;
        for (size_t k = 0; k < x->seen_cap; k++) {
            if (!x->seen[k])
                continue;
            for (i = x->seen[k] & (ncap - 1); nv[i]; i = (i + 1) & (ncap - 1))
                ;
            nv[i] = x->seen[k];
        }
        nnp__free(x->seen);
        x->seen = nv;
        x->seen_cap = ncap;
    }
    mask = x->seen_cap - 1;
    for (i = key & mask; x->seen[i]; i = (i + 1) & mask)
        if (x->seen[i] == key)
            return true;
    x->seen[i] = key;
    x->n_seen++;
    return true;
}

/* True when key is the hash of an event of an earlier file; else the key is kept for the
 * files after this one (none when this is the last: a single-file import does no lookup,
 * where one random probe per event into a table of millions was a sixth of its time). A
 * 64-bit hash collision would drop one event: at a million events the odds are about 1
 * in 3e7. */
static bool seen_before(cann_t *x, uint64_t key)
{
    if (key == 0)
        key = 1;
    if (x->n_seen) {
        size_t mask = x->seen_cap - 1;
        for (size_t i = key & mask; x->seen[i]; i = (i + 1) & mask)
            if (x->seen[i] == key)
                return true;
    }
    if (!x->remember)
        return false;
    if (x->n_pending == x->pending_cap) {
        size_t ncap = x->pending_cap ? x->pending_cap * 2 : SEEN_INITIAL;
        uint64_t *nv = nnp__realloc(x->pending, ncap * sizeof(*nv));
        if (!nv)
            return false; /* no memory to remember: keep the event rather than lose it */
        x->pending = nv;
        x->pending_cap = ncap;
    }
    x->pending[x->n_pending++] = key;
    return false;
}

/* The file ended: its events join the set later files are checked against. */
static void remember_file(cann_t *x)
{
    for (size_t i = 0; i < x->n_pending; i++)
        if (!set_put(x, x->pending[i]))
            break;
    x->n_pending = 0;
}

/* ---- pass 2: events ---- */

/* Logs the first bad event of a file in full, then counts the rest (one line per file). */
static void bad_event(cann_t *x, uint64_t index, const char *name, const char *why)
{
    if (x->n_bad_events++ == 0)
        NNP_LOG_W("cann: %s: event #%llu ('%s'): %s: skipped", x->file, (unsigned long long)index,
                  name, why);
}

static int add_kernel(cann_t *x, const cJSON *args, const thread_meta_t *t, const char *name,
                      const char *type, int64_t s, int64_t end)
{
    static const char *const stream_keys[] = {"Stream Id", "stream id", "Stream ID", NULL};
    nnp_model_t *m = x->m;
    int64_t stream = -1;
    uint32_t name_id = nnp__model_intern_cstr(m, name), type_id = nnp__model_intern_cstr(m, type);
    size_t i;
    if (!nnp__foreign_json_int(nnp__foreign_get_any(args, stream_keys), &stream) && t && t->name &&
        starts_with(t->name, "Stream "))
        stream = strtol(t->name + strlen("Stream "), NULL, 10);
    if (stream < 0 || stream > UINT32_MAX)
        stream = 0;
    if (seen_before(x,
                    mix(mix(mix(mix(1, (uint64_t)s), (uint64_t)end), (uint64_t)stream), name_id))) {
        x->n_dups++;
        return NNP_OK;
    }
    if ((i = nnp__table_push(&m->kernels.t)) == SIZE_MAX || (*name && !name_id) || !type_id)
        return nnp__fail(NNP_ENOMEM, "out of memory importing %s", x->file);
    m->kernels.start_ns[i] = s;
    m->kernels.end_ns[i] = end;
    m->kernels.name[i] = name_id;
    m->kernels.type[i] = type_id;
    m->kernels.device_id[i] = x->device_id;
    m->kernels.stream_id[i] = (uint32_t)stream;
    x->n_kernels++;
    return NNP_OK;
}

static int add_comm(cann_t *x, const cJSON *args, const thread_meta_t *t, const char *name,
                    int64_t s, int64_t end)
{
    static const char *const group_keys[] = {"group", "Group", "group_name", "Group Name", NULL};
    nnp_model_t *m = x->m;
    const cJSON *g = nnp__foreign_get_any(args, group_keys);
    uint32_t name_id = nnp__model_intern_cstr(m, name), group_id = 0;
    size_t i;
    /* Newer CANN names the op-level thread after the group ("Group <name> Communication");
     * the older "Communication Kernel" thread names no group. */
    if (cJSON_IsString(g))
        group_id = nnp__model_intern_cstr(m, g->valuestring);
    else if (t && t->name && starts_with(t->name, "Group "))
        group_id = nnp__model_intern_cstr(m, t->name);
    if (seen_before(x, mix(mix(mix(2, (uint64_t)s), (uint64_t)end), name_id))) {
        x->n_dups++;
        return NNP_OK;
    }
    if ((i = nnp__table_push(&m->comms.t)) == SIZE_MAX || (*name && !name_id))
        return nnp__fail(NNP_ENOMEM, "out of memory importing %s", x->file);
    m->comms.start_ns[i] = s;
    m->comms.end_ns[i] = end;
    m->comms.name[i] = name_id;
    m->comms.kind[i] = nnp__foreign_comm_kind(name);
    m->comms.group[i] = group_id;
    m->comms.peer[i] = -1;
    x->n_comms++;
    return NNP_OK;
}

static int add_mark(cann_t *x, nnp_marks_t *mk, uint64_t id, const cJSON *v)
{
    int64_t ts;
    size_t i;
    if (!v || !nnp__foreign_json_us_ns(v, &ts) || ts <= 0)
        return NNP_OK; /* inference steps have no BP End: not an error */
    if ((i = nnp__table_push(&mk->t)) == SIZE_MAX)
        return nnp__fail(NNP_ENOMEM, "out of memory importing %s", x->file);
    mk->step_id[i] = id;
    mk->ts_ns[i] = ts;
    return NNP_OK;
}

/* "Iteration N" of a Step Trace thread (cat "Iteration Time"): the step span, and FP Start
 * / BP End from its args as fp/bp marks. The graph is the thread's "Model ID:M". */
static int add_step(cann_t *x, const cJSON *args, const thread_meta_t *t, const char *name,
                    int64_t s, int64_t end)
{
    static const char *const id_keys[] = {"Iteration ID", "iteration_id", NULL};
    nnp_model_t *m = x->m;
    int64_t id = -1, graph = 0;
    const char *mid = t && t->name ? strstr(t->name, MODEL_ID_KEY) : NULL;
    size_t i;
    if (!nnp__foreign_json_int(nnp__foreign_get_any(args, id_keys), &id))
        id = strtoll(name + strlen("Iteration "), NULL, 10);
    if (id <= 0)
        return NNP_OK;
    if (mid)
        graph = strtoll(mid + strlen(MODEL_ID_KEY), NULL, 10);
    if (graph < 0 || graph > UINT32_MAX)
        graph = 0;
    if (seen_before(x, mix(mix(3, (uint64_t)id), (uint64_t)graph))) {
        x->n_dups++;
        return NNP_OK;
    }
    if ((i = nnp__table_push(&m->steps.t)) == SIZE_MAX)
        return nnp__fail(NNP_ENOMEM, "out of memory importing %s", x->file);
    m->steps.id[i] = (uint64_t)id;
    m->steps.graph_id[i] = (uint32_t)graph;
    m->steps.start_ns[i] = s;
    m->steps.end_ns[i] = end;
    x->n_steps++;
    if (add_mark(x, &m->fp, (uint64_t)id, nnp__foreign_get(args, "FP Start")) != NNP_OK)
        return NNP_ENOMEM;
    return add_mark(x, &m->bp, (uint64_t)id, nnp__foreign_get(args, "BP End"));
}

static bool is_step_thread(const thread_meta_t *t)
{
    return t && t->name && starts_with(t->name, "Step Trace");
}

/* Is an HCCL-process thread the op-level one? Older CANN: "Communication Kernel"; newer:
 * "Group <g> Communication". The "Plane N" threads hold the ops' small tasks. */
static bool is_comm_op_thread(const thread_meta_t *t)
{
    return t && t->name && !starts_with(t->name, "Plane") && strstr(t->name, "Communication");
}

static int event_cb(void *user, const cJSON *e, uint64_t index)
{
    static const char *const type_keys[] = {"Task Type", "task type", "Task type", NULL};
    cann_t *x = user;
    const cJSON *ph = nnp__foreign_get(e, "ph");
    const cJSON *jn = nnp__foreign_get(e, "name");
    const cJSON *pid = nnp__foreign_get(e, "pid");
    const cJSON *tid = nnp__foreign_get(e, "tid");
    const cJSON *args = nnp__foreign_get(e, "args");
    const cJSON *type;
    const thread_meta_t *proc, *t;
    const char *name;
    int64_t s, dur, end;
    int kind, rc = NNP_OK;

    if (!cJSON_IsObject(e)) {
        bad_event(x, index, "", "not a JSON object");
        return 0;
    }
    if (!cJSON_IsString(ph) || strcmp(ph->valuestring, "X") != 0)
        return 0; /* metadata, flows, instants: nothing we import */
    name = cJSON_IsString(jn) ? jn->valuestring : "";
    if (!cJSON_IsNumber(pid)) {
        bad_event(x, index, name, "key 'pid' missing or not a number");
        return 0;
    }
    if (!nnp__foreign_json_us_ns(nnp__foreign_get(e, "ts"), &s)) {
        bad_event(x, index, name, "key 'ts' missing or not a time in us");
        return 0;
    }
    if (!nnp__foreign_json_us_ns(nnp__foreign_get(e, "dur"), &dur) || dur < 0 ||
        !nnp__i64_add(s, dur, &end)) {
        bad_event(x, index, name, "key 'dur' missing, negative, too large or not a time in us");
        return 0;
    }
    proc = meta_find(x, pid->valuedouble, 0, true);
    t = meta_find(x, pid->valuedouble, cJSON_IsNumber(tid) ? tid->valuedouble : 0, false);
    kind = proc ? proc->kind : PROC_OTHER;
    type = nnp__foreign_get_any(args, type_keys);
    if (kind == PROC_OTHER && cJSON_IsString(type) &&
        nnp__ascend_is_compute_task(type->valuestring))
        kind = PROC_HW; /* no process_name (a cut file): a task is a task */
    if (kind == PROC_HW && is_step_thread(t)) {
        if (starts_with(name, "Iteration ") && !starts_with(name, "Iteration Refresh"))
            rc = add_step(x, args, t, name, s, end);
    } else if (kind == PROC_HW && cJSON_IsString(type)) {
        if (nnp__ascend_is_compute_task(type->valuestring))
            rc = add_kernel(x, args, t, name, type->valuestring, s, end);
        else
            x->n_skipped_tasks++;
    } else if (kind == PROC_HCCL && is_comm_op_thread(t)) {
        rc = add_comm(x, args, t, name, s, end);
    }
    /* CANN host API events and msprof's own Overlap Analysis are not imported: see
     * docs/IMPORT-cann.md. */
    if (rc != NNP_OK)
        x->rc = rc;
    return rc;
}

/* The string value every metadata event holds ("ph": "M"). */
#define META_PH "M"

/* Streams one file twice: names first (a process_name may follow its events), then events.
 * Damage is logged here with the file's name; only out-of-memory stops the import. */
static int read_file(cann_t *x, const char *path)
{
    nnp_json_stream_report_t rep;
    int rc;
    x->file = path;
    x->n_bad_events = 0;
    memset(&rep, 0, sizeof(rep));
    /* The names pass parses only the elements that can be metadata (they hold the string
     * "M"): the events pass then reads the file once more in full. */
    rc = nnp__json_stream_array_if(path, META_PH, meta_cb, x, &rep);
    if (rc == NNP_OK && !rep.no_array)
        rc = nnp__json_stream_array(path, event_cb, x, &rep);
    meta_clear(x);
    if (x->rc != NNP_OK)
        return x->rc;
    if (rc != NNP_OK) {
        NNP_LOG_W("cann: %s: cannot read: %s: skipped", path, nnp_last_error());
        return NNP_OK;
    }
    if (rep.no_array)
        NNP_LOG_W("cann: %s: %s: skipped", path,
                  rep.bytes == 0 ? "empty file" : "no JSON array of trace events found");
    if (rep.truncated)
        NNP_LOG_W("cann: %s: truncated after byte %llu (the event array never closes): "
                  "kept the %llu complete events",
                  path, (unsigned long long)rep.bytes, (unsigned long long)rep.elements);
    if (rep.bad_elements)
        NNP_LOG_W("cann: %s: %llu events are not valid JSON (first at byte %llu): skipped", path,
                  (unsigned long long)rep.bad_elements, (unsigned long long)rep.first_bad_offset);
    if (x->n_bad_events > 1)
        NNP_LOG_W("cann: %s: %llu events skipped in all for bad keys", path,
                  (unsigned long long)x->n_bad_events);
    return NNP_OK;
}

/* input: a device_N directory (older layout: timeline/msprof_*.json) or a
 * mindstudio_profiler_output directory (newer: msprof_*.json, info in ../device_*). */
static int import(const char *input, nnp_model_t *m)
{
    char json_dir[NNP_PATH_MAX], info_dir[NNP_PATH_MAX], path[NNP_PATH_MAX];
    char **files = NULL;
    size_t n_files = 0;
    cann_t *x = nnp__calloc(1, sizeof(*x));
    int rc = NNP_OK;

    if (!x)
        return nnp__fail(NNP_ENOMEM, "out of memory importing %s", input);
    x->m = m;
    nnp__strlcpy(info_dir, input, sizeof(info_dir));
    if (ends_with(input, NEW_OUTPUT_DIR)) {
        char **devs;
        size_t n_devs;
        char *slash;
        nnp__strlcpy(json_dir, input, sizeof(json_dir));
        nnp__strlcpy(path, input, sizeof(path));
        slash = strrchr(path, '/');
        if (slash)
            *slash = '\0';
        n_devs = list_dir(path, DEVICE_PREFIX, NULL, &devs);
        if (n_devs == 0 || nnp__path_join(info_dir, sizeof(info_dir), path, devs[0]) != NNP_OK)
            nnp__strlcpy(info_dir, path, sizeof(info_dir));
        free_names(devs, n_devs);
    } else if (nnp__path_join(json_dir, sizeof(json_dir), input, TIMELINE_DIR) != NNP_OK) {
        rc = nnp__fail(NNP_ETOOLONG, "cann: path too long: %s", input);
        goto out;
    }
    read_info(x, info_dir);

    n_files = list_dir(json_dir, MSPROF_PREFIX, JSON_SUFFIX, &files);
    if (n_files == 0) {
        rc = nnp__fail(NNP_ENOENT, "cann: %s: no msprof_*.json timeline files", json_dir);
        goto out;
    }
    for (size_t i = 0; i < n_files && rc == NNP_OK; i++) {
        if (nnp__path_join(path, sizeof(path), json_dir, files[i]) != NNP_OK) {
            NNP_LOG_W("cann: path too long, skipped: %s/%s", json_dir, files[i]);
            continue;
        }
        x->remember = i + 1 < n_files;
        rc = read_file(x, path);
        remember_file(x);
    }
    if (rc != NNP_OK)
        goto out;
    if (x->n_kernels + x->n_comms + x->n_steps == 0) {
        rc = nnp__fail(NNP_EINVAL, "cann: %s: no task, communication or step could be read",
                       json_dir);
        goto out;
    }
    NNP_LOG_I("cann: %s: %llu kernels, %llu communication ops, %llu steps (%llu non-compute "
              "tasks and %llu duplicates skipped)",
              input, (unsigned long long)x->n_kernels, (unsigned long long)x->n_comms,
              (unsigned long long)x->n_steps, (unsigned long long)x->n_skipped_tasks,
              (unsigned long long)x->n_dups);
    if (!m->info.source && !(m->info.source = nnp__strdup(input)))
        rc = nnp__fail(NNP_ENOMEM, "out of memory importing %s", input);
    if (rc == NNP_OK && !m->info.source_format &&
        !(m->info.source_format = nnp__strdup(SOURCE_FORMAT)))
        rc = nnp__fail(NNP_ENOMEM, "out of memory importing %s", input);
out:
    free_names(files, n_files);
    meta_clear(x);
    nnp__free(x->seen);
    nnp__free(x->pending);
    nnp__free(x);
    return rc;
}

const nnp_importer_t nnp__importer_cann = {SOURCE_FORMAT, find, import};
