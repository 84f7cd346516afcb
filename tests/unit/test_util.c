/* test_util.c - see test_util.h. */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyse/analyse.h"
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

char *nnpt_write_file(const char *dir, const char *name, const char *text)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    FILE *f;
    if (!path)
        fail_msg("out of memory");
    snprintf(path, n, "%s/%s", dir, name);
    f = fopen(path, "wb");
    if (!f || fwrite(text, 1, strlen(text), f) != strlen(text) || fclose(f) != 0)
        fail_msg("cannot write %s", path);
    return path;
}

char *nnpt_read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
        !(buf = malloc((size_t)n + 1))) {
        fclose(f);
        return NULL;
    }
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        fclose(f);
        return NULL;
    }
    buf[n] = '\0';
    fclose(f);
    return buf;
}

char *nnpt_read_in(const char *dir, const char *name)
{
    char path[4096];
    char *t;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    t = nnpt_read_text(path);
    if (!t)
        fail_msg("cannot read %s", path);
    return t;
}

int nnpt_analyse_to(const char *in, const char *out)
{
    nnp_analyse_options_t o;
    nnp_analyse_options_init(&o);
    o.jobs = 1;
    o.quiet = true;
    snprintf(o.output_dir, sizeof(o.output_dir), "%s", out);
    return nnp__analyse_path(in, &o);
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
