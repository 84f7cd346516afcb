/* host_info.c - the seed's host_info analysis (MindSpore profiler.py: _parse_host_info,
 * _extract_timeline_item, _calculate_dataset_execution_time, ExecutionCalculator). Walks the
 * model's host rows in recorded order and writes <out_dir>/host_info/timeline_{rank}.json,
 * host_memory_{rank}.csv and dataset_{rank}.csv byte for byte as the seed's json.dump and
 * csv.writer would (docs/OUTPUTS.md, "host_info outputs"). Called once per rank by the
 * analyse driver. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "analyse/py_text.h"
#include "read/host_info_csv.h"

/* Unmatched-row warnings logged per run before they are only counted (the seed logs
 * every one; a long run would flood the terminal). */
#define MAX_ROW_WARNINGS 20
/* Initial slots of the open-addressing tables (powers of two), grown at 1/2 load. */
#define INITIAL_SLOTS 64u
/* A ts_map compacts its entry list when dead entries outnumber live ones past this. */
#define COMPACT_MIN_ENTRIES 1024u
/* Model units to the seed's: time_stamp(us) and memory_usage(kB). */
#define NS_PER_US    1000
#define BYTES_PER_KB 1024u
/* The only module the seed's dataset statistics look at. */
#define DATASET_MODULE "Dataset"
#define FNV_OFFSET     1469598103934665603ull
#define FNV_PRIME      1099511628211ull
/* The directory, file names and headers the seed writes (profiler.py _host_info_analyse). */
#define HOST_INFO_DIR      "host_info"
#define HOST_INFO_DIR_MODE 0700
#define CSV_EOL            NNP_PY_CSV_EOL

static const char *const memory_header[] = {
    "tid",   "pid",       "parent_pid",  "module_name",      "event",         "stage",
    "level", "start_end", "custom_info", "memory_usage(kB)", "time_stamp(us)"};
static const char *const dataset_header[] = {"Operation", "Stage", "Occurrences", "Avg. time (us)",
                                             "Custom Info"};

/* ---- an insertion-ordered string set: string -> dense id (Python dict keys) ---- */

typedef struct strmap {
    char **keys;
    size_t n, cap;
    uint32_t *slots; /* id + 1, 0 = empty */
    size_t n_slots;
} strmap_t;

static uint64_t hash_str(const char *s, size_t n)
{
    uint64_t h = FNV_OFFSET;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * FNV_PRIME;
    return h;
}

static int strmap_rehash(strmap_t *sm, size_t n_slots)
{
    uint32_t *slots = nnp__calloc(n_slots, sizeof(uint32_t));
    if (!slots)
        return nnp__fail(NNP_ENOMEM, "out of memory in host_info analysis");
    for (size_t id = 0; id < sm->n; id++) {
        size_t i = hash_str(sm->keys[id], strlen(sm->keys[id])) & (n_slots - 1);
        while (slots[i])
            i = (i + 1) & (n_slots - 1);
        slots[i] = (uint32_t)id + 1;
    }
    nnp__free(sm->slots);
    sm->slots = slots;
    sm->n_slots = n_slots;
    return NNP_OK;
}

/* The id of s (len bytes), added when new (*added set). NNP_OK or NNP_ENOMEM. */
static int strmap_id(strmap_t *sm, const char *s, size_t len, uint32_t *id, bool *added)
{
    size_t i;
    char *copy;
    *added = false;
    if ((sm->n + 1) * 2 > sm->n_slots &&
        strmap_rehash(sm, sm->n_slots ? sm->n_slots * 2 : INITIAL_SLOTS) != NNP_OK)
        return NNP_ENOMEM;
    for (i = hash_str(s, len) & (sm->n_slots - 1); sm->slots[i]; i = (i + 1) & (sm->n_slots - 1)) {
        const char *k = sm->keys[sm->slots[i] - 1];
        if (strncmp(k, s, len) == 0 && k[len] == '\0') {
            *id = sm->slots[i] - 1;
            return NNP_OK;
        }
    }
    if (sm->n == sm->cap) {
        size_t ncap = sm->cap ? sm->cap * 2 : INITIAL_SLOTS;
        char **nk = nnp__realloc(sm->keys, ncap * sizeof(char *));
        if (!nk)
            return nnp__fail(NNP_ENOMEM, "out of memory in host_info analysis");
        sm->keys = nk;
        sm->cap = ncap;
    }
    copy = nnp__malloc(len + 1);
    if (!copy)
        return nnp__fail(NNP_ENOMEM, "out of memory in host_info analysis");
    memcpy(copy, s, len);
    copy[len] = '\0';
    sm->keys[sm->n] = copy;
    sm->slots[i] = (uint32_t)sm->n + 1;
    *id = (uint32_t)sm->n++;
    *added = true;
    return NNP_OK;
}

static void strmap_fini(strmap_t *sm)
{
    for (size_t i = 0; i < sm->n; i++)
        nnp__free(sm->keys[i]);
    nnp__free(sm->keys);
    nnp__free(sm->slots);
}

/* ---- the seed's ts_map: event_stage_tid_pid -> start time, a Python dict ----
 * Keyed by (id of "event_stage", tid, pid): tid and pid are digit strings without '_', so
 * the key string splits back into exactly these three parts and equal strings mean equal
 * triples ("a_b"+"c" and "a"+"b_c" share a key, as in the seed). Overwriting keeps a key's
 * place; deleting and adding again moves it to the end (dict order). */

typedef struct ts_entry {
    uint64_t tid;
    int64_t ts_us;
    uint32_t name, pid;
    bool is_alive;
} ts_entry_t;

typedef struct ts_map {
    ts_entry_t *e; /* in insertion order, dead ones until compaction */
    size_t n, cap, n_alive;
    uint32_t *slots; /* entry index + 1, 0 = empty; live entries only */
    size_t n_slots;
} ts_map_t;

static size_t ts_hash(uint32_t name, uint64_t tid, uint32_t pid)
{
    /* splitmix64 finaliser over the three parts. */
    uint64_t h = tid ^ ((uint64_t)name << 32 | pid) * 0x9e3779b97f4a7c15ull;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    return (size_t)(h ^ (h >> 31));
}

static size_t ts_home(const ts_map_t *tm, uint32_t slot_val)
{
    const ts_entry_t *x = &tm->e[slot_val - 1];
    return ts_hash(x->name, x->tid, x->pid) & (tm->n_slots - 1);
}

/* Drops dead entries (keeping order) and rebuilds the slots with n_slots of them. */
static int ts_rebuild(ts_map_t *tm, size_t n_slots)
{
    uint32_t *slots = nnp__calloc(n_slots, sizeof(uint32_t));
    size_t k = 0;
    if (!slots)
        return nnp__fail(NNP_ENOMEM, "out of memory in host_info analysis");
    for (size_t j = 0; j < tm->n; j++) {
        if (tm->e[j].is_alive)
            tm->e[k++] = tm->e[j];
    }
    tm->n = k;
    nnp__free(tm->slots);
    tm->slots = slots;
    tm->n_slots = n_slots;
    for (size_t j = 0; j < tm->n; j++) {
        size_t i = ts_home(tm, (uint32_t)j + 1);
        while (slots[i])
            i = (i + 1) & (n_slots - 1);
        slots[i] = (uint32_t)j + 1;
    }
    return NNP_OK;
}

/* The slot holding the key, or SIZE_MAX. */
static size_t ts_find(const ts_map_t *tm, uint32_t name, uint64_t tid, uint32_t pid)
{
    if (!tm->n_slots)
        return SIZE_MAX;
    for (size_t i = ts_hash(name, tid, pid) & (tm->n_slots - 1); tm->slots[i];
         i = (i + 1) & (tm->n_slots - 1)) {
        const ts_entry_t *x = &tm->e[tm->slots[i] - 1];
        if (x->name == name && x->tid == tid && x->pid == pid)
            return i;
    }
    return SIZE_MAX;
}

/* ts_map[key] = ts_us. NNP_OK or NNP_ENOMEM. */
static int ts_set(ts_map_t *tm, uint32_t name, uint64_t tid, uint32_t pid, int64_t ts_us)
{
    size_t s = ts_find(tm, name, tid, pid), i;
    if (s != SIZE_MAX) {
        tm->e[tm->slots[s] - 1].ts_us = ts_us; /* a second start overwrites the first */
        return NNP_OK;
    }
    if ((tm->n_alive + 1) * 2 > tm->n_slots &&
        ts_rebuild(tm, tm->n_slots ? tm->n_slots * 2 : INITIAL_SLOTS) != NNP_OK)
        return NNP_ENOMEM;
    if (tm->n == tm->cap) {
        size_t ncap = tm->cap ? tm->cap * 2 : INITIAL_SLOTS;
        ts_entry_t *ne = nnp__realloc(tm->e, ncap * sizeof(*ne));
        if (!ne)
            return nnp__fail(NNP_ENOMEM, "out of memory in host_info analysis");
        tm->e = ne;
        tm->cap = ncap;
    }
    tm->e[tm->n] = (ts_entry_t){tid, ts_us, name, pid, true};
    for (i = ts_hash(name, tid, pid) & (tm->n_slots - 1); tm->slots[i];
         i = (i + 1) & (tm->n_slots - 1))
        ;
    tm->slots[i] = (uint32_t)tm->n + 1;
    tm->n++;
    tm->n_alive++;
    return NNP_OK;
}

/* del ts_map[key] for the key in slot s (backward-shift deletion of linear probing). */
static int ts_del(ts_map_t *tm, size_t s)
{
    size_t mask = tm->n_slots - 1, i = s, j = s;
    tm->e[tm->slots[s] - 1].is_alive = false;
    tm->n_alive--;
    for (;;) {
        size_t k;
        j = (j + 1) & mask;
        if (!tm->slots[j])
            break;
        k = ts_home(tm, tm->slots[j]);
        if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
            continue; /* j's entry is still reachable from its home */
        tm->slots[i] = tm->slots[j];
        i = j;
    }
    tm->slots[i] = 0;
    if (tm->n > COMPACT_MIN_ENTRIES && tm->n - tm->n_alive > tm->n_alive)
        return ts_rebuild(tm, tm->n_slots);
    return NNP_OK;
}

static void ts_fini(ts_map_t *tm)
{
    nnp__free(tm->e);
    nnp__free(tm->slots);
}

/* ---- the analysis ---- */

/* The seed's ExecutionCalculator: one per event::stage::custom_info title. */
typedef struct ds_calc {
    uint32_t event, stage, custom_info;
    uint64_t count;
    double avg;
} ds_calc_t;

typedef struct host_an {
    const nnp_actx_t *c;
    const nnp_model_t *m;
    const char *src; /* for messages: the file the rows came from */
    char dir[NNP_PATH_MAX];
    char *scratch; /* key and title strings */
    size_t scratch_cap;
    strmap_t names;  /* "event_stage" */
    strmap_t titles; /* "event::stage::custom_info" -> calcs[id] */
    ds_calc_t *calcs;
    size_t calcs_cap;
    ts_map_t tl_map, ds_map; /* the two passes' ts_maps */
    nnp_obuf_t timeline, memory;
    bool has_events;
    uint64_t n_warned;
} host_an_t;

static void NNP_PRINTF(2, 3) row_warn(host_an_t *a, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    if (++a->n_warned > MAX_ROW_WARNINGS)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    NNP_LOG_W("%s", line);
}

/* scratch = a sep b [sep c]; returns its length or SIZE_MAX on OOM. */
static size_t cat3(host_an_t *a, const char *x, const char *sep, const char *y, const char *z)
{
    size_t lx = strlen(x), ls = strlen(sep), ly = strlen(y), lz = z ? strlen(z) : 0;
    size_t n = lx + ls + ly + (z ? ls + lz : 0);
    if (n + 1 > a->scratch_cap) {
        char *p = nnp__realloc(a->scratch, n + 1);
        if (!p)
            return SIZE_MAX;
        a->scratch = p;
        a->scratch_cap = n + 1;
    }
    memcpy(a->scratch, x, lx);
    memcpy(a->scratch + lx, sep, ls);
    memcpy(a->scratch + lx + ls, y, ly);
    if (z) {
        memcpy(a->scratch + lx + ls + ly, sep, ls);
        memcpy(a->scratch + lx + 2 * ls + ly, z, lz);
    }
    a->scratch[n] = '\0';
    return n;
}

/* floor(ns / 1000): exact for rows imported from the seed's integer microseconds. */
static int64_t us_of(int64_t ns)
{
    int64_t q = ns / NS_PER_US;
    return ns % NS_PER_US < 0 ? q - 1 : q;
}

/* Starts the next element of the timeline array, opening the file on the first one (the
 * seed writes no file when the list stays empty). */
static int timeline_next(host_an_t *a)
{
    char name[64];
    if (!a->timeline.is_open) {
        int rc;
        snprintf(name, sizeof(name), "timeline_%d.json", a->c->rank);
        rc = nnp__py_ob_open(&a->timeline, a->dir, name);
        if (rc != NNP_OK)
            return rc;
        nnp__py_ob_put(&a->timeline, "[", 1);
    } else {
        nnp__py_ob_put(&a->timeline, ", ", 2);
    }
    a->has_events = true;
    return a->timeline.err;
}

/* "pid": "<pid>", "tid": "<tid>": the seed copies the CSV strings. */
static void json_pid_tid(nnp_obuf_t *o, uint32_t pid, uint64_t tid)
{
    nnp__py_ob_puts(o, "\"pid\": \"");
    nnp__py_ob_u64(o, pid);
    nnp__py_ob_puts(o, "\", \"tid\": \"");
    nnp__py_ob_u64(o, tid);
    nnp__py_ob_puts(o, "\"");
}

/* {"name": "e::s", "cat": module, "ts": .., ["dur": .., ]"ph": .., "pid", "tid", "args"} */
static int timeline_event(host_an_t *a, size_t i, int64_t ts_us, const int64_t *dur_us)
{
    const nnp_model_t *m = a->m;
    uint32_t th = m->host.thread[i];
    nnp_obuf_t *o = &a->timeline;
    int rc = timeline_next(a);
    if (rc != NNP_OK)
        return rc;
    nnp__py_ob_puts(o, "{\"name\": \"");
    nnp__py_json_body(o, nnp__model_str(m, m->host.event[i]));
    nnp__py_ob_puts(o, "::");
    nnp__py_json_body(o, nnp__model_str(m, m->host.stage[i]));
    nnp__py_ob_puts(o, "\", \"cat\": ");
    nnp__py_json_str(o, nnp__model_str(m, m->host.module[i]));
    nnp__py_ob_puts(o, ", \"ts\": ");
    nnp__py_ob_i64(o, ts_us);
    if (dur_us) {
        nnp__py_ob_puts(o, ", \"dur\": ");
        nnp__py_ob_i64(o, *dur_us);
    }
    nnp__py_ob_puts(o, dur_us ? ", \"ph\": \"X\", " : ", \"ph\": \"i\", ");
    json_pid_tid(o, m->threads.pid[th], m->threads.tid[th]);
    nnp__py_ob_puts(o, ", \"args\": {\"parent_pid\": \"");
    nnp__py_ob_u64(o, m->threads.parent_pid[th]);
    nnp__py_ob_puts(o, "\"}}");
    return o->err;
}

static int memory_row(host_an_t *a, size_t i, uint64_t mem_kb, int64_t ts_us)
{
    const nnp_model_t *m = a->m;
    uint32_t th = m->host.thread[i];
    nnp_obuf_t *o = &a->memory;
    if (!o->is_open) {
        char name[64];
        int rc;
        snprintf(name, sizeof(name), "host_memory_%d.csv", a->c->rank);
        rc = nnp__py_ob_open(o, a->dir, name);
        if (rc != NNP_OK)
            return rc;
        nnp__py_csv_header(o, memory_header, NNP_ARRAY_LEN(memory_header));
    }
    /* Numbers hold no CSV special characters: written bare, as the CSV had them. */
    nnp__py_ob_u64(o, m->threads.tid[th]);
    nnp__py_ob_put(o, ",", 1);
    nnp__py_ob_u64(o, m->threads.pid[th]);
    nnp__py_ob_put(o, ",", 1);
    nnp__py_ob_u64(o, m->threads.parent_pid[th]);
    nnp__py_csv_field(o, nnp__model_str(m, m->host.module[i]), false);
    nnp__py_csv_field(o, nnp__model_str(m, m->host.event[i]), false);
    nnp__py_csv_field(o, nnp__model_str(m, m->host.stage[i]), false);
    nnp__py_ob_put(o, ",", 1);
    nnp__py_ob_u64(o, m->host.level[i]);
    nnp__py_ob_put(o, ",", 1);
    nnp__py_ob_u64(o, m->host.kind[i]);
    nnp__py_csv_field(o, nnp__model_str(m, m->host.custom_info[i]), false);
    nnp__py_ob_put(o, ",", 1);
    nnp__py_ob_u64(o, mem_kb);
    nnp__py_ob_put(o, ",", 1);
    nnp__py_ob_i64(o, ts_us);
    nnp__py_ob_puts(o, CSV_EOL);
    return o->err;
}

/* The id of "event_stage" for row i (the name part of the seed's ts_map key). */
static int name_id(host_an_t *a, size_t i, uint32_t *id)
{
    const nnp_model_t *m = a->m;
    bool added;
    size_t n = cat3(a, nnp__model_str(m, m->host.event[i]), "_",
                    nnp__model_str(m, m->host.stage[i]), NULL);
    if (n == SIZE_MAX)
        return nnp__fail(NNP_ENOMEM, "out of memory in host_info analysis");
    return strmap_id(&a->names, a->scratch, n, id, &added);
}

static void warn_unmapped(host_an_t *a, size_t i, const char *pass)
{
    const nnp_model_t *m = a->m;
    uint32_t th = m->host.thread[i];
    row_warn(a,
             "host_info %s: can not map the start time for item: %s::%s tid %llu pid %u "
             "start_end %u ts %lld us (%s)",
             pass, nnp__model_str(m, m->host.event[i]), nnp__model_str(m, m->host.stage[i]),
             (unsigned long long)m->threads.tid[th], m->threads.pid[th], m->host.kind[i],
             (long long)us_of(m->host.ts_ns[i]), a->src);
}

/* _extract_timeline_item: a matched end becomes an X event, a begin is remembered (a
 * second begin overwrites), an instant becomes an i event. */
static int timeline_row(host_an_t *a, size_t i, uint32_t name, int64_t ts_us)
{
    const nnp_model_t *m = a->m;
    uint32_t th = m->host.thread[i];
    uint64_t tid = m->threads.tid[th];
    uint32_t pid = m->threads.pid[th];
    uint8_t kind = m->host.kind[i];
    size_t s;

    if (kind == 1 && (s = ts_find(&a->tl_map, name, tid, pid)) != SIZE_MAX) {
        int64_t start = a->tl_map.e[a->tl_map.slots[s] - 1].ts_us;
        int64_t dur = ts_us - start;
        int rc = timeline_event(a, i, start, &dur);
        return rc != NNP_OK ? rc : ts_del(&a->tl_map, s);
    }
    if (kind == 0)
        return ts_set(&a->tl_map, name, tid, pid, ts_us);
    if (kind == 2)
        return timeline_event(a, i, ts_us, NULL);
    warn_unmapped(a, i, "timeline");
    return NNP_OK;
}

/* _calculate_dataset_item: the running mean of matched Dataset durations per title,
 * updated exactly as ExecutionCalculator does (avg += (dur - avg) / count). */
static int dataset_row(host_an_t *a, size_t i, uint32_t name, int64_t ts_us)
{
    const nnp_model_t *m = a->m;
    uint32_t th = m->host.thread[i];
    uint64_t tid = m->threads.tid[th];
    uint32_t pid = m->threads.pid[th];
    uint8_t kind = m->host.kind[i];
    size_t s;

    if (kind == 1 && (s = ts_find(&a->ds_map, name, tid, pid)) != SIZE_MAX) {
        int64_t dur = ts_us - a->ds_map.e[a->ds_map.slots[s] - 1].ts_us;
        uint32_t id;
        bool added;
        ds_calc_t *k;
        size_t n =
            cat3(a, nnp__model_str(m, m->host.event[i]), "::", nnp__model_str(m, m->host.stage[i]),
                 nnp__model_str(m, m->host.custom_info[i]));
        if (n == SIZE_MAX || strmap_id(&a->titles, a->scratch, n, &id, &added) != NNP_OK)
            return nnp__fail(NNP_ENOMEM, "out of memory in host_info analysis");
        if (added) {
            if (id >= a->calcs_cap) {
                size_t ncap = a->calcs_cap ? a->calcs_cap * 2 : INITIAL_SLOTS;
                ds_calc_t *nc = nnp__realloc(a->calcs, ncap * sizeof(*nc));
                if (!nc)
                    return nnp__fail(NNP_ENOMEM, "out of memory in host_info analysis");
                a->calcs = nc;
                a->calcs_cap = ncap;
            }
            a->calcs[id] =
                (ds_calc_t){m->host.event[i], m->host.stage[i], m->host.custom_info[i], 0, 0.0};
        }
        k = &a->calcs[id];
        k->count++;
        /* Python: int dur minus float avg is float(dur) - avg; then / count. The first
         * update (avg the int 0) is dur / 1, also exactly float(dur). */
        k->avg += ((double)dur - k->avg) / (double)k->count;
        return ts_del(&a->ds_map, s);
    }
    if (kind == 0)
        return ts_set(&a->ds_map, name, tid, pid, ts_us);
    if (kind == 2) {
        NNP_LOG_D("host_info dataset: instant event %s::%s, no execution time",
                  nnp__model_str(m, m->host.event[i]), nnp__model_str(m, m->host.stage[i]));
        return NNP_OK;
    }
    warn_unmapped(a, i, "dataset");
    return NNP_OK;
}

/* Logs the starts never ended ("Only start time is record for these items"). */
static void warn_open(host_an_t *a, const ts_map_t *tm, const char *pass)
{
    uint64_t n = 0;
    if (!tm->n_alive)
        return;
    NNP_LOG_W("host_info %s: only start time is recorded for %zu items (%s)", pass, tm->n_alive,
              a->src);
    for (size_t j = 0; j < tm->n; j++) {
        const ts_entry_t *x = &tm->e[j];
        if (!x->is_alive || ++n > MAX_ROW_WARNINGS)
            continue;
        NNP_LOG_W("event_stage_tid_pid: %s_%llu_%u, time: %lld us.", a->names.keys[x->name],
                  (unsigned long long)x->tid, x->pid, (long long)x->ts_us);
    }
}

/* Unmatched starts close the timeline as B events, in ts_map order:
 * {"name": "event_stage", "pid": .., "tid": .., "ph": "B", "ts": ..}. */
static int timeline_open_ends(host_an_t *a)
{
    const ts_map_t *tm = &a->tl_map;
    for (size_t j = 0; j < tm->n; j++) {
        const ts_entry_t *x = &tm->e[j];
        int rc;
        if (!x->is_alive)
            continue;
        rc = timeline_next(a);
        if (rc != NNP_OK)
            return rc;
        nnp__py_ob_puts(&a->timeline, "{\"name\": ");
        nnp__py_json_str(&a->timeline, a->names.keys[x->name]);
        nnp__py_ob_puts(&a->timeline, ", ");
        json_pid_tid(&a->timeline, x->pid, x->tid);
        nnp__py_ob_puts(&a->timeline, ", \"ph\": \"B\", \"ts\": ");
        nnp__py_ob_i64(&a->timeline, x->ts_us);
        nnp__py_ob_puts(&a->timeline, "}");
    }
    return a->timeline.err;
}

static int write_dataset(host_an_t *a)
{
    const nnp_model_t *m = a->m;
    nnp_obuf_t o;
    char name[64], num[40];
    int rc;

    memset(&o, 0, sizeof(o));
    snprintf(name, sizeof(name), "dataset_%d.csv", a->c->rank);
    rc = nnp__py_ob_open(&o, a->dir, name);
    if (rc != NNP_OK) {
        nnp__py_ob_close(&o, false);
        return rc;
    }
    nnp__py_csv_header(&o, dataset_header, NNP_ARRAY_LEN(dataset_header));
    for (size_t id = 0; id < a->titles.n; id++) {
        const ds_calc_t *k = &a->calcs[id];
        nnp__py_csv_field(&o, nnp__model_str(m, k->event), true);
        nnp__py_csv_field(&o, nnp__model_str(m, k->stage), false);
        nnp__py_ob_put(&o, ",", 1);
        nnp__py_ob_u64(&o, k->count);
        nnp__py_float_repr(k->avg, num, sizeof(num));
        nnp__py_csv_field(&o, num, false);
        nnp__py_csv_field(&o, nnp__model_str(m, k->custom_info), false);
        nnp__py_ob_puts(&o, CSV_EOL);
    }
    return nnp__py_ob_close(&o, true);
}

/* The order to walk rows in: the importer's file order when the model keeps it (host.seq),
 * else the table order. *order is NULL for the table order. */
static int row_order(const nnp_model_t *m, uint32_t **order)
{
    *order = NULL;
    /* nnp__model_finish sorted the rows by time; seq (1-based insertion order, 0 = none)
     * puts them back in the order the seed reads the CSV. Seq values are distinct table
     * positions (<= n), so rows are placed by counting; rows without one go first. */
    const nnp_host_rows_t *h = &m->host;
    size_t n = h->t.n, k = 0;
    uint32_t *ord, *at_seq;
    bool any = false;
    for (size_t i = 0; i < n && !any; i++)
        any = h->seq[i] != 0;
    if (!any)
        return NNP_OK;
    ord = nnp__malloc(n * sizeof(uint32_t));
    at_seq = nnp__calloc(n + 1, sizeof(uint32_t));
    if (!ord || !at_seq) {
        nnp__free(ord);
        nnp__free(at_seq);
        return nnp__fail(NNP_ENOMEM, "out of memory in host_info analysis");
    }
    for (size_t i = 0; i < n; i++) {
        if (!h->seq[i])
            ord[k++] = (uint32_t)i;
        else if (h->seq[i] <= n)
            at_seq[h->seq[i]] = (uint32_t)i + 1;
    }
    for (size_t s = 1; s <= n; s++) {
        if (at_seq[s])
            ord[k++] = at_seq[s] - 1;
    }
    nnp__free(at_seq);
    if (k != n) { /* duplicate or out-of-range seq: keep the table order */
        nnp__free(ord);
        return NNP_OK;
    }
    *order = ord;
    return NNP_OK;
}

/* One row through both of the seed's passes. */
static int one_row(host_an_t *a, size_t i, uint32_t dataset_module)
{
    const nnp_model_t *m = a->m;
    int64_t ts_us = us_of(m->host.ts_ns[i]);
    uint64_t mem_kb = m->host.memory_bytes[i] / BYTES_PER_KB;
    bool is_dataset = dataset_module && m->host.module[i] == dataset_module;
    bool is_kept = !(m->host.level[i] == 0 && !a->c->is_developer);
    uint32_t name = 0;
    int rc = NNP_OK;

    /* _calculate_dataset_execution_time: every Dataset row, whatever its level or time. */
    if (is_dataset || (is_kept && ts_us > 0))
        rc = name_id(a, i, &name);
    if (rc == NNP_OK && is_dataset)
        rc = dataset_row(a, i, name, ts_us);
    /* _parse_host_info: level-0 rows only for developers; the timeline wants ts > 0, the
     * memory file memory_usage(kB) > 0. */
    if (rc != NNP_OK || !is_kept)
        return rc;
    if (ts_us > 0)
        rc = timeline_row(a, i, name, ts_us);
    if (rc == NNP_OK && mem_kb > 0)
        rc = memory_row(a, i, mem_kb, ts_us);
    return rc;
}

static bool imported_csv(const nnp_model_t *m)
{
    return m->info.source_format && strcmp(m->info.source_format, NNP_HOST_INFO_CSV_FORMAT) == 0;
}

int nnp__host_info_write(const nnp_actx_t *c)
{
    const nnp_model_t *m = c->m;
    host_an_t a;
    uint32_t *order = NULL;
    uint32_t dataset_module;
    int rc, rc2;

    /* The seed returns early when there is no host_info directory; a run with no host
     * rows is that case, unless an (empty) host_info CSV was imported. */
    if (m->host.t.n == 0 && !imported_csv(m))
        return NNP_OK;
    memset(&a, 0, sizeof(a));
    a.c = c;
    a.m = m;
    a.src = m->info.source ? m->info.source : "the trace model";
    rc = nnp__path_join(a.dir, sizeof(a.dir), c->out_dir, HOST_INFO_DIR);
    if (rc == NNP_OK)
        rc = nnp__mkdir_p(a.dir, HOST_INFO_DIR_MODE);
    if (rc == NNP_OK)
        rc = row_order(m, &order);
    dataset_module = nnp__model_find(m, DATASET_MODULE);
    for (size_t k = 0; rc == NNP_OK && k < m->host.t.n; k++)
        rc = one_row(&a, order ? order[k] : k, dataset_module);
    if (a.n_warned > MAX_ROW_WARNINGS)
        NNP_LOG_W("host_info: %llu more rows whose start time could not be mapped",
                  (unsigned long long)(a.n_warned - MAX_ROW_WARNINGS));

    /* The seed's "No memory_usage is recorded" named neither which memory nor what it
     * means; tensor memory (memory.c) is another record kind and may well be there. */
    if (rc == NNP_OK && !a.memory.is_open)
        NNP_LOG_W("No host memory (memory_usage) is recorded in %s, so host_info/"
                  "host_memory_%d.csv is not written (host memory comes from "
                  "nnp_host_memory() or MindSpore's host_info); %s",
                  a.src, c->rank,
                  m->mem.t.n ? "tensor memory was recorded: see memory_usage_summary_*.json"
                             : "no tensor memory was recorded either");
    rc2 = nnp__py_ob_close(&a.memory, rc == NNP_OK);
    rc = rc != NNP_OK ? rc : rc2;

    if (rc == NNP_OK) {
        warn_open(&a, &a.tl_map, "timeline");
        rc = timeline_open_ends(&a);
    }
    if (rc == NNP_OK && a.has_events)
        nnp__py_ob_puts(&a.timeline, "]");
    if (rc == NNP_OK && !a.has_events)
        NNP_LOG_W("No valid time_stamp is recorded in %s", a.src);
    rc2 = nnp__py_ob_close(&a.timeline, rc == NNP_OK);
    rc = rc != NNP_OK ? rc : rc2;

    if (rc == NNP_OK) {
        warn_open(&a, &a.ds_map, "dataset");
        rc = write_dataset(&a);
    }

    nnp__free(order);
    nnp__free(a.scratch);
    nnp__free(a.calcs);
    strmap_fini(&a.names);
    strmap_fini(&a.titles);
    ts_fini(&a.tl_map);
    ts_fini(&a.ds_map);
    return rc;
}
