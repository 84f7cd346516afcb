/* raw_dir.c - where a session's raw directory goes. At create time it is only planned: the
 * path is made absolute (a later chdir() must not move it), named uniquely, and checked to
 * be creatable, so a bad output path is reported at once, naming the path, with nothing
 * made. The writer thread makes it (nnp__raw_dir_make) when the first event is written: a
 * session that records nothing (an exec'd helper, a window never opened) leaves nothing.
 * Also the seed's "old data" warning, which must not fire for ranks starting beside us. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/session_internal.h"
#include "util/util.h"

/* info.json is small; the cap only guards against a runaway file. */
#define INFO_JSON_CAP (16u * 1024u * 1024u)
/* A raw directory this recent, and not finalized, belongs to a rank started with us, not
 * to an old run: ranks of one job start within seconds; ten minutes leaves room for slow
 * launches. */
#define CONCURRENT_START_US (10ull * 60ull * 1000000ull)
#define US_PER_SEC          1000000ull
#define NS_PER_MS           1000000u
#define MS_PER_SEC          1000u
/* Name collisions tried before giving up (same pid and millisecond: a create/destroy loop). */
#define MAX_NAME_ATTEMPTS 100
#define DIR_MODE          0700

/* The deepest existing ancestor of path (path itself included), copied into out. Returns
 * NNP_OK, or an error naming path when an ancestor cannot even be looked at. */
static int existing_ancestor(const char *path, char *out, size_t cap, struct stat *st)
{
    if (!nnp__strlcpy(out, path, cap))
        return nnp__fail(NNP_ETOOLONG, "path too long: %.64s...", path);
    for (;;) {
        char *slash;
        if (stat(out, st) == 0)
            return NNP_OK;
        /* ENOENT: not made yet; ENOTDIR: a file above it, which the walk up will find. */
        if (errno != ENOENT && errno != ENOTDIR)
            return nnp__fail(nnp__from_errno(errno), "cannot create '%s': '%s': %s", path, out,
                             strerror(errno));
        slash = strrchr(out, '/');
        if (!slash)
            return nnp__strlcpy(out, ".", cap) && stat(out, st) == 0
                       ? NNP_OK
                       : nnp__fail(NNP_EPATH, "cannot create '%s'", path);
        if (slash == out)
            slash[1] = '\0'; /* "/" */
        else
            *slash = '\0';
    }
}

/* Checks, creating nothing, that dir exists as a writable directory or can be made. */
static int check_creatable(const char *dir)
{
    char anc[NNP_PATH_MAX];
    struct stat st;
    int rc = existing_ancestor(dir, anc, sizeof(anc), &st);
    if (rc != NNP_OK)
        return rc;
    if (!S_ISDIR(st.st_mode))
        return nnp__fail(NNP_EPATH, "cannot create '%s': '%s' exists and is not a directory", dir,
                         anc);
    /* Effective ids, as mkdir(2) will use them; EROFS (a read-only mount) shows here too. */
    if (faccessat(AT_FDCWD, anc, W_OK | X_OK, AT_EACCESS) != 0)
        return nnp__fail(nnp__from_errno(errno), "cannot create '%s': '%s' is not writable: %s",
                         dir, anc, strerror(errno));
    return NNP_OK;
}

/* When a raw directory was made: its mtime (a rank that just made it has written at most
 * info.json into it since), in wall-clock microseconds; 0 when unknown. */
static uint64_t raw_dir_time_us(const char *profiler_dir, const char *name)
{
    char path[NNP_PATH_MAX];
    struct stat st;
    if (nnp__path_join(path, sizeof(path), profiler_dir, name) != NNP_OK || stat(path, &st) != 0)
        return 0;
    return (uint64_t)st.st_mtim.tv_sec * US_PER_SEC + (uint64_t)st.st_mtim.tv_nsec / 1000u;
}

/* A PROF_* directory of a run going on now (another rank started with us): its info.json
 * is not "finalized" and says it started less than CONCURRENT_START_US ago, or it has no
 * readable info.json yet (a rank between making its directory and writing the file) and
 * was made that recently. */
static bool is_concurrent_run(const char *profiler_dir, const char *name, uint64_t now_us)
{
    char path[NNP_PATH_MAX], *text = NULL;
    cJSON *j;
    bool running = false;
    if (snprintf(path, sizeof(path), "%s/%s/%s", profiler_dir, name, NNP_INFO_FILE) >=
        (int)sizeof(path))
        return false;
    if (nnp__read_file(path, INFO_JSON_CAP, &text, NULL) != NNP_OK) {
        uint64_t t = raw_dir_time_us(profiler_dir, name);
        nnp__clear_error();
        return t != 0 && t + CONCURRENT_START_US >= now_us;
    }
    j = cJSON_Parse(text);
    nnp__free(text);
    if (cJSON_IsObject(j)) {
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "state");
        const cJSON *t0 = cJSON_GetObjectItemCaseSensitive(j, "start_time_us");
        running = cJSON_IsString(st) && strcmp(st->valuestring, "finalized") != 0 &&
                  cJSON_IsNumber(t0) && t0->valuedouble + CONCURRENT_START_US >= (double)now_us;
    }
    cJSON_Delete(j);
    return running;
}

/* True when the profiler directory holds data of an earlier run (the seed's "old data may
 * be rewritten" case): anything but the raw directories of ranks running right now. */
static bool has_old_data(const char *profiler_dir, uint64_t now_us)
{
    DIR *d = opendir(profiler_dir);
    struct dirent *e;
    bool old = false;
    if (!d)
        return false;
    while (!old && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        old = strncmp(e->d_name, NNP_RAW_DIR_PREFIX, strlen(NNP_RAW_DIR_PREFIX)) != 0 ||
              !is_concurrent_run(profiler_dir, e->d_name, now_us);
    }
    closedir(d);
    return old;
}

/* out = path made absolute against the current directory (no symlink is resolved). */
static int absolute(const char *path, char *out, size_t cap)
{
    char cwd[NNP_PATH_MAX];
    if (path[0] == '/')
        return nnp__strlcpy(out, path, cap) ? NNP_OK
                                            : nnp__fail(NNP_ETOOLONG, "path too long: %s", path);
    if (!getcwd(cwd, sizeof(cwd)))
        return nnp__fail(nnp__from_errno(errno),
                         "output_path '%s' is relative and the current "
                         "directory is unknown: %s",
                         path, strerror(errno));
    if (path[0] == '.' && path[1] == '/')
        path += 2;
    else if (path[0] == '.' && path[1] == '\0')
        path = "";
    return nnp__path_join(out, cap, cwd, path);
}

int nnp__raw_dir_plan(nnp_session_t *s)
{
    /* Names this process already gave: a session created in the same millisecond as the
     * previous one (create/destroy loops) gets a suffix even though its predecessor's
     * directory may never have been made. Only the lifecycle lock's holder gets here. */
    static char last_name[NNP_RAW_NAME_CAP];
    static unsigned last_attempt;
    char out[NNP_PATH_MAX], name[NNP_RAW_NAME_CAP], base[NNP_RAW_NAME_CAP];
    struct stat st;
    struct tm tm;
    time_t secs = (time_t)(s->create_wall_ns / NNP_NS_PER_SEC);
    unsigned ms = (unsigned)(s->create_wall_ns / NS_PER_MS % MS_PER_SEC);
    int rc, n;

    rc = absolute(s->opts.output_path, out, sizeof(out));
    if (rc == NNP_OK)
        rc = nnp__path_join(s->profiler_dir, sizeof(s->profiler_dir), out, "profiler");
    if (rc == NNP_OK)
        rc = check_creatable(s->profiler_dir);
    if (rc != NNP_OK)
        return rc;
    if (!s->quiet && stat(s->profiler_dir, &st) == 0 &&
        has_old_data(s->profiler_dir, s->create_wall_ns / 1000))
        NNP_LOG_W("The target dir already exists. There may be some old profiling data, and "
                  "they will be rewritten in the end. (%s)",
                  s->profiler_dir);
    localtime_r(&secs, &tm);
    n = snprintf(base, sizeof(base), "%s%04d%02d%02d%02d%02d%02d%03u_%s_%ld", NNP_RAW_DIR_PREFIX,
                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms,
                 s->host, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof(base))
        return nnp__fail(NNP_ETOOLONG, "raw directory name too long");
    for (unsigned attempt = strcmp(base, last_name) == 0 ? last_attempt + 1 : 0;; attempt++) {
        if (attempt > MAX_NAME_ATTEMPTS)
            return nnp__fail(NNP_EPATH, "no free raw directory name in '%s'", s->profiler_dir);
        if (attempt == 0)
            n = snprintf(name, sizeof(name), "%s", base);
        else
            n = snprintf(name, sizeof(name), "%s_%u", base, attempt);
        if (n < 0 || (size_t)n >= sizeof(name))
            return nnp__fail(NNP_ETOOLONG, "raw directory name too long");
        rc = nnp__path_join(s->raw_dir, sizeof(s->raw_dir), s->profiler_dir, name);
        if (rc != NNP_OK)
            return rc;
        if (lstat(s->raw_dir, &st) != 0) {
            nnp__strlcpy(last_name, base, sizeof(last_name));
            last_attempt = attempt;
            return NNP_OK;
        }
    }
}

uint64_t nnp__raw_dir_free_bytes(const nnp_session_t *s)
{
    char anc[NNP_PATH_MAX];
    struct stat st;
    struct statvfs sv;
    if (existing_ancestor(s->profiler_dir, anc, sizeof(anc), &st) != NNP_OK ||
        statvfs(anc, &sv) != 0) {
        nnp__clear_error();
        return UINT64_MAX;
    }
    return (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
}

/* mkdir -p of dir (mode DIR_MODE). *made_from receives the length of the first prefix of
 * dir this call created (strlen(dir) + 1 when it created nothing), for undo_mkdir(). */
static int mkdir_p(const char *dir, size_t *made_from)
{
    char tmp[NNP_PATH_MAX];
    size_t len = strlen(dir);
    *made_from = len + 1;
    if (!nnp__strlcpy(tmp, dir, sizeof(tmp)))
        return nnp__fail(NNP_ETOOLONG, "path too long: %.64s...", dir);
    for (size_t i = 1; i <= len; i++) {
        if (tmp[i] != '/' && tmp[i] != '\0')
            continue;
        tmp[i] = '\0';
        if (mkdir(tmp, DIR_MODE) == 0) {
            if (*made_from > len)
                *made_from = i;
            (void)chmod(tmp, DIR_MODE); /* whatever the umask took away */
        } else if (errno != EEXIST) {
            return nnp__fail(nnp__from_errno(errno), "cannot create directory '%s': %s", tmp,
                             strerror(errno));
        }
        tmp[i] = dir[i];
    }
    return NNP_OK;
}

/* Removes the directories mkdir_p() made (deepest first): a failure leaves nothing. */
static void undo_mkdir(const char *dir, size_t made_from)
{
    char tmp[NNP_PATH_MAX];
    size_t len;
    if (made_from > strlen(dir) || !nnp__strlcpy(tmp, dir, sizeof(tmp)))
        return;
    for (len = strlen(tmp); len >= made_from; len--) {
        if (tmp[len] == '/' || tmp[len] == '\0') {
            tmp[len] = '\0';
            (void)rmdir(tmp);
        }
        if (len == 0)
            break;
    }
}

int nnp__raw_dir_make(void *session, const nnp_writer_t *w)
{
    nnp_session_t *s = session;
    size_t made_from;
    int rc, err;

    pthread_mutex_lock(&s->lock);
    if (s->dir_made) {
        pthread_mutex_unlock(&s->lock);
        return NNP_OK;
    }
    rc = mkdir_p(s->profiler_dir, &made_from);
    err = errno;
    if (rc == NNP_OK) {
        if (mkdir(s->raw_dir, DIR_MODE) != 0) {
            err = errno;
            rc = nnp__fail(nnp__from_errno(err), "cannot create '%s': %s", s->raw_dir,
                           strerror(err));
        } else {
            (void)chmod(s->raw_dir, DIR_MODE);
            s->dir_made = true;
            rc = nnp__info_write(s, "created", w);
            err = errno;
            if (rc != NNP_OK) {
                s->dir_made = false;
                (void)rmdir(s->raw_dir);
            }
        }
        if (rc != NNP_OK)
            undo_mkdir(s->profiler_dir, made_from);
    }
    pthread_mutex_unlock(&s->lock);
    errno = rc == NNP_OK ? 0 : err; /* for the writer's count of a full disk */
    return rc;
}
