/* test_util.c - see test_util.h. */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
