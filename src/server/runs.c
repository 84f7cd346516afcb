/* runs.c - the run registry (see runs.h): scanning, the analysis child processes, their
 * progress, and loading the results. Paths from requests never reach this file: requests
 * name a run by its id, which is looked up in the list the scan made. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "read/host_info_csv.h"
#include "read/importers.h"
#include "read/raw_reader.h"
#include "server/runs.h"
#include "util/util.h"

extern char **environ;

/* How often the worker checks its children (ms): the page polls at 500 ms. */
#define WORKER_PERIOD_MS 100
/* Inputs one importer may report for one directory. */
#define FIND_CAP 4096
/* Bytes of the analysis log quoted in a failure message. */
#define LOG_TAIL_BYTES 600
/* Files each rank's analysis writes, in the order it writes them: progress counts them. */
static const char *const stage_files[] = {"step_trace_summary_", "op_statistic_top20_",
                                          "timeline_summary_", "advice_", "profiler_info_"};
static const char *const stage_names[] = {"step trace",      "operators", "timeline",
                                          "deeper analyses", "advisor",   "finishing"};

/* snprintf for messages and paths whose truncation is harmless or checked later. */
static void fmt_into(char *buf, size_t cap, const char *fmt, ...) NNP_PRINTF(3, 4);
static void fmt_into(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    int k;
    va_start(ap, fmt);
    k = vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
    if (k < 0 && cap)
        buf[0] = '\0';
}

/* ---- scanning ---- */

typedef struct scan {
    nnp_runs_t *rs;
    char **claimed; /* input paths already part of a run */
    size_t n_claimed, cap_claimed;
    size_t dirs;
    nnp_foreign_input_t *found;
} scan_t;

static bool is_claimed(const scan_t *s, const char *p)
{
    for (size_t i = 0; i < s->n_claimed; i++) {
        if (strcmp(s->claimed[i], p) == 0)
            return true;
    }
    return false;
}

static int claim(scan_t *s, const char *p)
{
    if (s->n_claimed == s->cap_claimed) {
        size_t ncap = s->cap_claimed ? s->cap_claimed * 2 : 64;
        char **v = nnp__realloc(s->claimed, ncap * sizeof(char *));
        if (!v)
            return nnp__fail(NNP_ENOMEM, "out of memory scanning");
        s->claimed = v;
        s->cap_claimed = ncap;
    }
    s->claimed[s->n_claimed] = nnp__strdup(p);
    if (!s->claimed[s->n_claimed])
        return nnp__fail(NNP_ENOMEM, "out of memory scanning");
    s->n_claimed++;
    return NNP_OK;
}

/* Raw directories (PROF_* with meta.nnp) directly in dir, into s->found. */
static int raw_children(scan_t *s, const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d)
        return 0;
    while (n < FIND_CAP && (e = readdir(d)) != NULL) {
        char p[NNP_PATH_MAX];
        if (strncmp(e->d_name, "PROF_", 5) != 0 ||
            nnp__path_join(p, sizeof(p), dir, e->d_name) != NNP_OK || !nnp__raw_is_dir(p))
            continue;
        nnp__strlcpy(s->found[n].path, p, sizeof(s->found[n].path));
        s->found[n].rank = -1;
        n++;
    }
    closedir(d);
    return n;
}

static bool has_profiler_info(const char *dir)
{
    int ranks[1];
    return nnp__results_ranks(dir, ranks, 1) > 0;
}

/* Fills r->results: the user's own analysis, the --cache folder, or the run's cache. */
static void place_results(nnp_runs_t *rs, nnp_run_t *r, const char *outputs_dir)
{
    if (outputs_dir && !rs->reanalyse && has_profiler_info(outputs_dir)) {
        nnp__strlcpy(r->results, outputs_dir, sizeof(r->results));
        r->in_place = true;
        return;
    }
    if (rs->cache_root[0]) {
        /* One folder per run: its id made file-name safe, plus a hash of its real path so
         * two ids that map to one name cannot share a cache. */
        char key[NNP_PATH_MAX];
        size_t k = 0;
        uint32_t h = 2166136261u; /* FNV-1a offset basis */
        for (const char *p = r->path; *p; p++)
            h = (h ^ (unsigned char)*p) * 16777619u; /* FNV-1a prime */
        for (const char *p = r->id; *p && k + 1 < 200; p++) {
            char ch = *p;
            key[k++] = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                               (ch >= '0' && ch <= '9') || ch == '-' || ch == '_'
                           ? ch
                           : '_';
        }
        key[k] = '\0';
        fmt_into(r->results, sizeof(r->results), "%s/%s-%08x", rs->cache_root, key, h);
    } else {
        fmt_into(r->results, sizeof(r->results), "%s/%s", r->path, NNP_UI_CACHE_NAME);
    }
}

static int add_run(scan_t *s, const char *dir, const char *kind, int n_inputs,
                   const char *outputs_dir)
{
    nnp_runs_t *rs = s->rs;
    nnp_run_t *r;
    size_t root_len = strlen(rs->root);
    if (rs->n >= NNP_RUNS_MAX) {
        NNP_LOG_W("ui: more than %d runs under %s: the rest are not listed", NNP_RUNS_MAX,
                  rs->root);
        return NNP_OK;
    }
    r = &rs->v[rs->n];
    memset(r, 0, sizeof(*r));
    nnp__strlcpy(r->path, dir, sizeof(r->path));
    if (strcmp(dir, rs->root) == 0)
        nnp__strlcpy(r->id, ".", sizeof(r->id));
    else
        nnp__strlcpy(r->id, dir + root_len + (rs->root[root_len - 1] == '/' ? 0 : 1),
                     sizeof(r->id));
    nnp__strlcpy(r->kind, kind, sizeof(r->kind));
    r->n_inputs = n_inputs;
    r->pid = -1;
    place_results(rs, r, outputs_dir);
    rs->n++;
    return NNP_OK;
}

/* Is dir a run? Tries what the analysis driver tries, in its order. New inputs make a
 * run; inputs another run already holds (a parent found them) do not. */
static int detect(scan_t *s, const char *dir)
{
    char prof[NNP_PATH_MAX], csv[NNP_PATH_MAX];
    const char *kind = NULL, *outputs = NULL;
    int n = 0, rank = -1, fresh = 0, rc = NNP_OK;

    if (nnp__raw_is_dir(dir)) {
        nnp__strlcpy(s->found[0].path, dir, sizeof(s->found[0].path));
        n = 1;
        kind = "nnprof";
    }
    if (!n && nnp__path_join(prof, sizeof(prof), dir, "profiler") == NNP_OK &&
        (n = raw_children(s, prof)) > 0) {
        kind = "nnprof";
        outputs = prof;
    }
    if (!n && (n = raw_children(s, dir)) > 0) {
        kind = "nnprof";
        outputs = dir;
    }
    for (const nnp_importer_t *const *imp = nnp__importers; !n && *imp; imp++) {
        n = (*imp)->find(dir, s->found, FIND_CAP);
        if (n > 0)
            kind = (*imp)->name;
        else
            n = 0;
    }
    if (!n && nnp__host_info_csv_find(dir, &rank, csv, sizeof(csv))) {
        nnp__strlcpy(s->found[0].path, csv, sizeof(s->found[0].path));
        n = 1;
        kind = "mindspore-host-info";
    }
    for (int i = 0; i < n; i++)
        fresh += !is_claimed(s, s->found[i].path);
    if (!n || !fresh)
        return n ? 1 : 0; /* 1: part of a run already listed */
    for (int i = 0; rc == NNP_OK && i < n; i++)
        rc = claim(s, s->found[i].path);
    if (rc == NNP_OK)
        rc = add_run(s, dir, kind, n, outputs);
    return rc == NNP_OK ? 2 : rc;
}

static int walk(scan_t *s, const char *dir, int depth)
{
    DIR *d;
    struct dirent *e;
    int rc;

    if (++s->dirs > NNP_SCAN_MAX_DIRS) {
        if (s->dirs == NNP_SCAN_MAX_DIRS + 1)
            NNP_LOG_W("ui: more than %d directories under %s: the scan stopped there",
                      NNP_SCAN_MAX_DIRS, s->rs->root);
        return NNP_OK;
    }
    rc = detect(s, dir);
    if (rc < 0)
        return rc;
    if (depth >= NNP_SCAN_MAX_DEPTH || !(d = opendir(dir)))
        return NNP_OK;
    rc = NNP_OK;
    while (rc == NNP_OK && (e = readdir(d)) != NULL) {
        char p[NNP_PATH_MAX];
        struct stat st;
        /* Hidden folders (our caches among them) and links are never entered: a link
         * could lead out of the served directory. */
        if (e->d_name[0] == '.' || nnp__path_join(p, sizeof(p), dir, e->d_name) != NNP_OK ||
            lstat(p, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        rc = walk(s, p, depth + 1);
    }
    closedir(d);
    return rc;
}

static int cmp_run(const void *a, const void *b)
{
    return strcmp(((const nnp_run_t *)a)->id, ((const nnp_run_t *)b)->id);
}

/* ---- analysis child ---- */

static int spawn_analysis(nnp_runs_t *rs, nnp_run_t *r)
{
    char log[NNP_PATH_MAX];
    char *argv[] = {rs->exe, "analyse", "--quiet", "-o", r->results, r->path, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none, dfl;
    int rc;

    rc = nnp__mkdir_p(r->results, 0700);
    if (rc != NNP_OK)
        return rc;
    if (nnp__path_join(log, sizeof(log), r->results, "analyse.log") != NNP_OK)
        return nnp__fail(NNP_ETOOLONG, "cache path too long: %s", r->results);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
    /* `nnprof ui` blocks SIGINT/SIGTERM in every thread (it waits for them with sigwait):
     * the child must not inherit that mask, or it could never be stopped. */
    posix_spawnattr_init(&attr);
    sigemptyset(&none);
    sigemptyset(&dfl);
    sigaddset(&dfl, SIGINT);
    sigaddset(&dfl, SIGTERM);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &dfl);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    r->t_start = time(NULL);
    rc = posix_spawn(&r->pid, rs->exe, &fa, &attr, argv, environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        r->pid = -1;
        return nnp__fail(NNP_EIO, "cannot start '%s analyse': %s", rs->exe, strerror(rc));
    }
    NNP_LOG_I("ui: analysing %s into %s (pid %d)", r->path, r->results, (int)r->pid);
    return NNP_OK;
}

/* The last bytes of the analysis log, for a failure message. */
static void log_tail(const nnp_run_t *r, char *out, size_t cap)
{
    char p[NNP_PATH_MAX], *text = NULL;
    size_t len = 0;
    out[0] = '\0';
    if (nnp__path_join(p, sizeof(p), r->results, "analyse.log") != NNP_OK ||
        nnp__read_file(p, 1u << 24, &text, &len) != NNP_OK)
        return;
    nnp__strlcpy(out, len > LOG_TAIL_BYTES ? text + len - LOG_TAIL_BYTES : text, cap);
    nnp__free(text);
}

/* Loads every rank of r's results (no lock held: r is LOADING, only the worker or the
 * synchronous caller touches it). */
static int load_run(nnp_run_t *r, char *err, size_t cap)
{
    int *ranks = nnp__calloc(NNP_RUN_MAX_RANKS, sizeof(int));
    nnp_rank_data_t **v;
    int n, rc = NNP_OK;

    if (!ranks)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    n = nnp__results_ranks(r->results, ranks, NNP_RUN_MAX_RANKS);
    if (n <= 0) {
        char tail[LOG_TAIL_BYTES + 1];
        log_tail(r, tail, sizeof(tail));
        fmt_into(err, cap, "the analysis wrote no results into %s%s%s", r->results,
                 tail[0] ? "; its log ends: " : "", tail);
        nnp__free(ranks);
        return NNP_ENOENT;
    }
    v = nnp__calloc((size_t)n, sizeof(*v));
    for (int i = 0; v && rc == NNP_OK && i < n; i++)
        rc = nnp__rank_data_load(r->results, ranks[i], &v[i]);
    if (!v || rc != NNP_OK) {
        fmt_into(err, cap, "cannot load the results in %s: %s", r->results,
                 v ? nnp_last_error() : "out of memory");
        for (int i = 0; v && i < n; i++)
            nnp__rank_data_free(v[i]);
        nnp__free(v);
        nnp__free(ranks);
        return rc != NNP_OK ? rc : NNP_ENOMEM;
    }
    r->ranks = v;
    r->n_ranks = (size_t)n;
    nnp__free(ranks);
    return NNP_OK;
}

/* After the child ended: its status decides the message; partial results still load. */
static void finish_analysis(nnp_run_t *r, int status, char *err, size_t cap)
{
    err[0] = '\0';
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char tail[LOG_TAIL_BYTES + 1];
        log_tail(r, tail, sizeof(tail));
        fmt_into(err, cap, "nnprof analyse %s (see %s/analyse.log)%s%s",
                 WIFEXITED(status) ? "reported errors" : "was killed", r->results,
                 tail[0] ? ": " : "", tail);
    }
}

static void *worker_main(void *arg)
{
    nnp_runs_t *rs = arg;
    char err[sizeof(((nnp_run_t *)0)->error)];

    pthread_mutex_lock(&rs->mu);
    while (!rs->stop) {
        struct timespec ts;
        for (size_t i = 0; i < rs->n && !rs->stop; i++) {
            nnp_run_t *r = &rs->v[i];
            int status = 0, rc;
            if (r->state == NNP_RUN_ANALYSING && r->pid > 0) {
                if (waitpid(r->pid, &status, WNOHANG) != r->pid)
                    continue;
                r->pid = -1;
                finish_analysis(r, status, r->error, sizeof(r->error));
                r->state = NNP_RUN_LOADING;
            }
            if (r->state != NNP_RUN_LOADING)
                continue;
            pthread_mutex_unlock(&rs->mu);
            rc = load_run(r, err, sizeof(err));
            pthread_mutex_lock(&rs->mu);
            if (rc == NNP_OK) {
                r->state = NNP_RUN_READY;
            } else {
                nnp__strlcpy(r->error, err, sizeof(r->error));
                r->state = NNP_RUN_FAILED;
            }
        }
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += WORKER_PERIOD_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&rs->cv, &rs->mu, &ts);
    }
    pthread_mutex_unlock(&rs->mu);
    return NULL;
}

/* ---- public ---- */

int nnp__runs_init(nnp_runs_t *rs, const nnp_runs_config_t *cfg)
{
    scan_t s;
    char real[PATH_MAX];
    int rc;

    memset(rs, 0, sizeof(*rs));
    if (!realpath(cfg->root, real))
        return nnp__fail(NNP_ENOENT, "%s: %s", cfg->root, strerror(errno));
    if (!nnp__strlcpy(rs->root, real, sizeof(rs->root)))
        return nnp__fail(NNP_ETOOLONG, "path too long: %s", real);
    if (cfg->cache_root) {
        rc = nnp__mkdir_p(cfg->cache_root, 0700);
        if (rc != NNP_OK)
            return rc;
        if (!realpath(cfg->cache_root, real))
            return nnp__fail(NNP_ENOENT, "%s: %s", cfg->cache_root, strerror(errno));
        nnp__strlcpy(rs->cache_root, real, sizeof(rs->cache_root));
    }
    nnp__strlcpy(rs->exe, cfg->analyse_exe ? cfg->analyse_exe : "nnprof", sizeof(rs->exe));
    rs->reanalyse = cfg->reanalyse;
    rs->v = nnp__calloc(NNP_RUNS_MAX, sizeof(nnp_run_t));
    memset(&s, 0, sizeof(s));
    s.rs = rs;
    s.found = nnp__calloc(FIND_CAP, sizeof(nnp_foreign_input_t));
    if (!rs->v || !s.found) {
        nnp__free(rs->v);
        nnp__free(s.found);
        return nnp__fail(NNP_ENOMEM, "out of memory");
    }
    rc = walk(&s, rs->root, 0);
    for (size_t i = 0; i < s.n_claimed; i++)
        nnp__free(s.claimed[i]);
    nnp__free(s.claimed);
    nnp__free(s.found);
    if (rc != NNP_OK) {
        nnp__free(rs->v);
        return rc;
    }
    qsort(rs->v, rs->n, sizeof(nnp_run_t), cmp_run);
    pthread_mutex_init(&rs->mu, NULL);
    pthread_cond_init(&rs->cv, NULL);
    if (cfg->worker) {
        if (pthread_create(&rs->worker, NULL, worker_main, rs) != 0) {
            pthread_cond_destroy(&rs->cv);
            pthread_mutex_destroy(&rs->mu);
            nnp__free(rs->v);
            return nnp__fail(NNP_EIO, "cannot start the UI worker thread");
        }
        rs->has_worker = true;
    }
    return NNP_OK;
}

void nnp__runs_fini(nnp_runs_t *rs)
{
    if (!rs->v)
        return;
    pthread_mutex_lock(&rs->mu);
    rs->stop = true;
    pthread_cond_signal(&rs->cv);
    pthread_mutex_unlock(&rs->mu);
    if (rs->has_worker)
        pthread_join(rs->worker, NULL);
    for (size_t i = 0; i < rs->n; i++) {
        nnp_run_t *r = &rs->v[i];
        if (r->pid > 0) {
            /* An analysis still running is stopped; its partial outputs stay in the cache
             * and the next start analyses again (no profiler_info yet, or a stale one). */
            kill(r->pid, SIGTERM);
            waitpid(r->pid, NULL, 0);
        }
        for (size_t k = 0; k < r->n_ranks; k++)
            nnp__rank_data_free(r->ranks[k]);
        nnp__free(r->ranks);
    }
    pthread_cond_destroy(&rs->cv);
    pthread_mutex_destroy(&rs->mu);
    nnp__free(rs->v);
    memset(rs, 0, sizeof(*rs));
}

nnp_run_t *nnp__runs_find(nnp_runs_t *rs, const char *id)
{
    if (!id)
        return NULL;
    for (size_t i = 0; i < rs->n; i++) {
        if (strcmp(rs->v[i].id, id) == 0)
            return &rs->v[i];
    }
    return NULL;
}

/* Called with the mutex held. */
static void start_locked(nnp_runs_t *rs, nnp_run_t *r)
{
    if (r->state != NNP_RUN_NEW)
        return;
    if (r->in_place || (!rs->reanalyse && has_profiler_info(r->results))) {
        r->state = NNP_RUN_LOADING;
    } else if (spawn_analysis(rs, r) == NNP_OK) {
        r->state = NNP_RUN_ANALYSING;
    } else {
        nnp__strlcpy(r->error, nnp_last_error(), sizeof(r->error));
        r->state = NNP_RUN_FAILED;
    }
    pthread_cond_signal(&rs->cv);
}

nnp_run_state_t nnp__runs_want(nnp_runs_t *rs, nnp_run_t *r)
{
    nnp_run_state_t st;
    pthread_mutex_lock(&rs->mu);
    start_locked(rs, r);
    st = r->state;
    pthread_mutex_unlock(&rs->mu);
    return st;
}

int nnp__runs_prepare_sync(nnp_runs_t *rs, nnp_run_t *r)
{
    int rc;
    pthread_mutex_lock(&rs->mu);
    start_locked(rs, r);
    pthread_mutex_unlock(&rs->mu);
    if (r->state == NNP_RUN_ANALYSING) {
        int status = 0;
        while (waitpid(r->pid, &status, 0) < 0 && errno == EINTR)
            ;
        r->pid = -1;
        finish_analysis(r, status, r->error, sizeof(r->error));
        if (r->error[0])
            NNP_LOG_W("%s", r->error);
        r->state = NNP_RUN_LOADING;
    }
    if (r->state == NNP_RUN_FAILED)
        return nnp__fail(NNP_EIO, "%s", r->error);
    rc = load_run(r, r->error, sizeof(r->error));
    r->state = rc == NNP_OK ? NNP_RUN_READY : NNP_RUN_FAILED;
    return rc == NNP_OK ? NNP_OK : nnp__fail(rc, "%s", r->error);
}

const nnp_rank_data_t *nnp__run_rank(const nnp_run_t *r, int rank)
{
    if (!r->n_ranks)
        return NULL;
    if (rank < 0)
        return r->ranks[0];
    for (size_t i = 0; i < r->n_ranks; i++) {
        if (r->ranks[i]->rank == rank)
            return r->ranks[i];
    }
    return NULL;
}

static const char *state_name(nnp_run_state_t s)
{
    static const char *const names[] = {"new", "analysing", "loading", "ready", "failed"};
    return names[s];
}

/* Progress of an analysis: stage files written since it started, over what all ranks
 * will write. */
static void progress(const nnp_run_t *r, int *done, int *total)
{
    DIR *d = opendir(r->results);
    struct dirent *e;
    *done = 0;
    *total = r->n_inputs * (int)NNP_ARRAY_LEN(stage_files);
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        char p[NNP_PATH_MAX];
        struct stat st;
        if (len < 5 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        for (size_t i = 0; i < NNP_ARRAY_LEN(stage_files); i++) {
            if (strncmp(e->d_name, stage_files[i], strlen(stage_files[i])) == 0 &&
                nnp__path_join(p, sizeof(p), r->results, e->d_name) == NNP_OK &&
                stat(p, &st) == 0 && st.st_mtime >= r->t_start)
                (*done)++;
        }
    }
    closedir(d);
    if (*done > *total)
        *done = *total;
}

static void ranks_json(const nnp_run_t *r, nnp_jw_t *w)
{
    nnp__jw_key(w, "ranks");
    nnp__jw_arr_begin(w);
    if (r->state == NNP_RUN_READY) {
        for (size_t i = 0; i < r->n_ranks; i++)
            nnp__jw_int(w, r->ranks[i]->rank);
    }
    nnp__jw_arr_end(w);
}

/* Called with the mutex held. */
static void run_json(const nnp_run_t *r, nnp_jw_t *w)
{
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "id");
    nnp__jw_str(w, r->id);
    nnp__jw_key(w, "path");
    nnp__jw_str(w, r->path);
    nnp__jw_key(w, "kind");
    nnp__jw_str(w, r->kind);
    nnp__jw_key(w, "inputs");
    nnp__jw_int(w, r->n_inputs);
    nnp__jw_key(w, "cluster");
    nnp__jw_bool(w, r->n_inputs > 1);
    nnp__jw_key(w, "state");
    nnp__jw_str(w, state_name(r->state));
    nnp__jw_key(w, "results");
    nnp__jw_str(w, r->results);
    nnp__jw_key(w, "analysed_in_place");
    nnp__jw_bool(w, r->in_place);
    ranks_json(r, w);
    nnp__jw_obj_end(w);
}

void nnp__runs_list_json(nnp_runs_t *rs, nnp_jw_t *w)
{
    pthread_mutex_lock(&rs->mu);
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "root");
    nnp__jw_str(w, rs->root);
    nnp__jw_key(w, "runs");
    nnp__jw_arr_begin(w);
    for (size_t i = 0; i < rs->n; i++)
        run_json(&rs->v[i], w);
    nnp__jw_arr_end(w);
    nnp__jw_obj_end(w);
    pthread_mutex_unlock(&rs->mu);
}

void nnp__run_status_json(nnp_runs_t *rs, nnp_run_t *r, nnp_jw_t *w)
{
    int done = 0, total = 0;
    pthread_mutex_lock(&rs->mu);
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "id");
    nnp__jw_str(w, r->id);
    nnp__jw_key(w, "state");
    nnp__jw_str(w, state_name(r->state));
    if (r->state == NNP_RUN_ANALYSING)
        progress(r, &done, &total);
    else if (r->state >= NNP_RUN_LOADING)
        done = total = 1;
    nnp__jw_key(w, "progress");
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "done");
    nnp__jw_int(w, done);
    nnp__jw_key(w, "total");
    nnp__jw_int(w, total);
    nnp__jw_key(w, "stage");
    nnp__jw_str(w,
                r->state == NNP_RUN_ANALYSING
                    ? stage_names[total ? done * ((int)NNP_ARRAY_LEN(stage_names) - 1) / total : 0]
                : r->state == NNP_RUN_LOADING ? "loading results"
                                              : "");
    nnp__jw_obj_end(w);
    nnp__jw_key(w, "error");
    nnp__jw_str(w, r->error);
    ranks_json(r, w);
    nnp__jw_obj_end(w);
    pthread_mutex_unlock(&rs->mu);
}
