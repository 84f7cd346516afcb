/* test_util.c - see test_util.h. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"

/* Captured log text is bounded: tests that log more than this are doing something wrong. */
#define CAPTURE_CAP (1 << 20)
static char capture_buf[CAPTURE_CAP];
static size_t capture_len;
static int capture_count;

char *nnpt_mkdtemp(void)
{
    const char *tmp = getenv("TMPDIR");
    char buf[4096];
    snprintf(buf, sizeof(buf), "%s/nnprof-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(buf))
        fail_msg("mkdtemp failed");
    return strdup(buf);
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void nnpt_rm_rf(const char *path)
{
    if (path)
        nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void sink(nnp_log_level_t level, const char *msg, void *user)
{
    static const char *names[] = {"error", "warn", "info", "debug"};
    int n;
    (void)user;
    n = snprintf(capture_buf + capture_len, CAPTURE_CAP - capture_len, "%s: %s\n", names[level],
                 msg);
    if (n > 0 && capture_len + (size_t)n < CAPTURE_CAP)
        capture_len += (size_t)n;
    capture_count++;
}

void nnpt_log_capture(void)
{
    capture_len = 0;
    capture_buf[0] = '\0';
    capture_count = 0;
    nnp_log_set_level(NNP_LOG_DEBUG);
    nnp_log_set_handler(sink, NULL);
}

const char *nnpt_log_text(void)
{
    return capture_buf;
}

int nnpt_log_count(void)
{
    return capture_count;
}

void nnpt_log_release(void)
{
    nnp_log_set_handler(NULL, NULL);
    nnp_log_set_level(NNP_LOG_ERROR);
}

/* How often a bounded wait looks at the child. */
#define WAIT_POLL_NS  (10L * 1000L * 1000L)
#define NS_PER_SEC_L  1000000000L
#define JSON_FILE_CAP (16L << 20)

int nnpt_wait_bounded(pid_t pid, int limit_s)
{
    struct timespec pause = {0, WAIT_POLL_NS};
    long waited_ns = 0;
    int st;
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return st;
        if (r < 0 && errno != EINTR)
            return -1;
        if (waited_ns >= (long)limit_s * NS_PER_SEC_L) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -1;
        }
        nanosleep(&pause, NULL);
        waited_ns += WAIT_POLL_NS;
    }
}

int nnpt_run(const char *const argv[], const char *const env[], int limit_s)
{
    pid_t pid;
    fflush(NULL);
    pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        for (size_t i = 0; env && env[i]; i++) {
            const char *eq = strchr(env[i], '=');
            if (eq) {
                char name[256];
                snprintf(name, sizeof(name), "%.*s", (int)(eq - env[i]), env[i]);
                setenv(name, eq + 1, 1);
            } else {
                unsetenv(env[i]);
            }
        }
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return nnpt_wait_bounded(pid, limit_s);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char **nnpt_raw_dirs(const char *out, int *n)
{
    char prof[4096];
    DIR *d;
    struct dirent *e;
    char **v = NULL;
    int cap = 0;
    *n = 0;
    snprintf(prof, sizeof(prof), "%s/profiler", out);
    d = opendir(prof);
    if (!d)
        return NULL;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "PROF_", 5) != 0)
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            v = realloc(v, (size_t)cap * sizeof(*v));
            assert_non_null(v);
        }
        {
            size_t len = strlen(prof) + strlen(e->d_name) + 2;
            v[*n] = malloc(len);
            assert_non_null(v[*n]);
            snprintf(v[*n], len, "%s/%s", prof, e->d_name);
        }
        (*n)++;
    }
    closedir(d);
    if (*n > 1)
        qsort(v, (size_t)*n, sizeof(*v), cmp_str);
    return v;
}

void nnpt_free_list(char **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

struct cJSON *nnpt_load_json(const char *dir, const char *name)
{
    char path[8192], *text;
    FILE *f;
    long len;
    cJSON *j;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "r");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (len < 0 || len > JSON_FILE_CAP) {
        fclose(f);
        return NULL;
    }
    text = calloc(1, (size_t)len + 1);
    if (text && fread(text, 1, (size_t)len, f) != (size_t)len)
        text[0] = '\0';
    fclose(f);
    j = text ? cJSON_Parse(text) : NULL;
    free(text);
    return j;
}
