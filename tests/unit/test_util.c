/* test_util.c - see test_util.h. */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/model.h"
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

void nnpt_add_step(nnp_model_t *m, uint64_t id, int64_t begin, int64_t end)
{
    size_t i = nnp__table_push(&m->steps.t);
    assert_true(i != SIZE_MAX);
    m->steps.id[i] = id;
    m->steps.graph_id[i] = 1;
    m->steps.start_ns[i] = begin;
    m->steps.end_ns[i] = end;
}

size_t nnpt_add_op(nnp_model_t *m, int64_t start, int64_t end, const char *name, const char *type,
                   const char *shapes, const char *dtypes)
{
    size_t i = nnp__table_push(&m->ops.t);
    assert_true(i != SIZE_MAX);
    m->ops.start_ns[i] = start;
    m->ops.end_ns[i] = end;
    m->ops.name[i] = nnp__model_intern_cstr(m, name);
    m->ops.type[i] = nnp__model_intern_cstr(m, type);
    m->ops.shapes[i] = shapes ? nnp__model_intern_cstr(m, shapes) : NNP_NONE;
    m->ops.dtypes[i] = dtypes ? nnp__model_intern_cstr(m, dtypes) : NNP_NONE;
    return i;
}

void nnpt_add_pipe_op(nnp_model_t *m, int64_t id, int64_t parent, const char *type,
                      uint32_t workers)
{
    size_t i = nnp__table_push(&m->pipe_ops.t);
    assert_true(i != SIZE_MAX);
    m->pipe_ops.op_id[i] = id;
    m->pipe_ops.parent_id[i] = parent;
    m->pipe_ops.op_type[i] = nnp__model_intern_cstr(m, type);
    m->pipe_ops.num_workers[i] = workers;
}

void nnpt_add_queue(nnp_model_t *m, int64_t ts, int64_t op_id, uint32_t size, uint32_t cap)
{
    size_t i = nnp__table_push(&m->queues.t);
    assert_true(i != SIZE_MAX);
    m->queues.ts_ns[i] = ts;
    m->queues.op_id[i] = op_id;
    m->queues.size[i] = size;
    m->queues.capacity[i] = cap;
}
