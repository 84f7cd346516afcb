/* fixture_model.c - the helpers of test_util.h that use the library's internal symbols:
 * model builders (rows added straight into a model's tables, for tests of analyses that need
 * exact, hand-made inputs) and the in-process analyse driver. A separate object of the
 * nnp_test_util library, so tests that link only the public libnnprof.so do not pull it in;
 * also the analysis tests' shared fixture (fixture_model.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyse/driver.h"
#include "fixture_model.h"
#include "model/model.h"
#include "test_util.h"

/* Room for an output file's path. */
#define NNPT_PATH_CAP 4096

int nnpt_analyse_to(const char *in, const char *out)
{
    nnp_analyse_options_t o;
    nnp_analyse_options_init(&o);
    o.jobs = 1;
    o.quiet = true;
    snprintf(o.output_dir, sizeof(o.output_dir), "%s", out);
    return nnp__analyse_path(in, &o);
}

void nnpt_check_calls(const nnp_model_t *m, const nnpt_call_t *want, size_t n)
{
    assert_int_equal(m->calls.t.n, n);
    for (size_t i = 0; i < n; i++) {
        const nnpt_call_t *e = &want[i];
        assert_string_equal(nnp__model_str(m, m->calls.name[i]), e->name);
        assert_int_equal(m->calls.kind[i], e->kind);
        assert_int_equal(m->calls.start_ns[i], e->start_ns);
        assert_int_equal(m->calls.end_ns[i], e->end_ns);
        assert_int_equal(m->calls.launch[i], e->launch);
        assert_int_equal(m->calls.corr[i], e->corr);
        assert_int_equal(m->threads.tid[m->calls.thread[i]], e->tid);
        assert_int_equal(m->calls.stream_id[i], e->stream_id);
        assert_int_equal(m->calls.status[i], e->status);
    }
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

uint32_t nnpt_add_thread(nnp_model_t *m, uint64_t tid, uint32_t pid)
{
    size_t i = nnp__table_push(&m->threads.t);
    assert_true(i != SIZE_MAX);
    m->threads.tid[i] = tid;
    m->threads.pid[i] = pid;
    return (uint32_t)i;
}

void nnpt_add_host_row(nnp_model_t *m, int64_t ts, uint8_t kind, const char *module,
                       const char *event, const char *stage, uint32_t th)
{
    size_t i = nnp__table_push(&m->host.t);
    assert_true(i != SIZE_MAX);
    m->host.ts_ns[i] = ts;
    m->host.kind[i] = kind;
    m->host.level[i] = 1;
    m->host.module[i] = nnp__model_intern_cstr(m, module);
    m->host.event[i] = nnp__model_intern_cstr(m, event);
    m->host.stage[i] = nnp__model_intern_cstr(m, stage);
    m->host.thread[i] = th;
}

void nnpt_add_marker(nnp_model_t *m, int64_t start, int64_t end, const char *message, uint32_t th)
{
    size_t i = nnp__table_push(&m->markers.t);
    assert_true(i != SIZE_MAX);
    m->markers.start_ns[i] = start;
    m->markers.end_ns[i] = end;
    m->markers.message[i] = nnp__model_intern_cstr(m, message);
    m->markers.thread[i] = th;
}

void nnpt_add_call(nnp_model_t *m, int64_t start, int64_t end, const char *name, uint32_t kind,
                   uint32_t th)
{
    size_t i = nnp__table_push(&m->calls.t);
    assert_true(i != SIZE_MAX);
    m->calls.start_ns[i] = start;
    m->calls.end_ns[i] = end;
    m->calls.name[i] = nnp__model_intern_cstr(m, name);
    m->calls.kind[i] = kind;
    m->calls.thread[i] = th;
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

void nnpt_add_task_cpu(nnp_model_t *m, int64_t ts, uint64_t tid, const char *name, uint64_t utime,
                       uint64_t stime)
{
    size_t i = nnp__table_push(&m->task_cpu.t);
    assert_true(i != SIZE_MAX);
    m->task_cpu.ts_ns[i] = ts;
    m->task_cpu.tid[i] = tid;
    m->task_cpu.name[i] = name ? nnp__model_intern_cstr(m, name) : 0;
    m->task_cpu.utime[i] = utime;
    m->task_cpu.stime[i] = stime;
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

int nnpt_afx_setup(void **state)
{
    nnpt_afx_t *fx = calloc(1, sizeof(*fx));
    if (!fx)
        return -1;
    fx->dir = nnpt_mkdtemp();
    if (!fx->dir || nnp__model_init(&fx->m) != NNP_OK) {
        free(fx->dir);
        free(fx);
        return -1;
    }
    fx->c.m = &fx->m;
    fx->c.out_dir = fx->dir;
    nnp__findings_init(&fx->f);
    *state = fx;
    return 0;
}

int nnpt_afx_teardown(void **state)
{
    nnpt_afx_t *fx = *state;
    nnp__step_trace_fini(&fx->st);
    nnp__model_fini(&fx->m);
    nnpt_rm_rf(fx->dir);
    free(fx->dir);
    free(fx);
    return 0;
}

/* fx->dir/name into path (cap bytes). */
static void out_path(const nnpt_afx_t *fx, const char *name, char *path, size_t cap)
{
    int n = snprintf(path, cap, "%s/%s", fx->dir, name);
    assert_true(n > 0 && (size_t)n < cap);
}

char *nnpt_afx_read(const nnpt_afx_t *fx, const char *name)
{
    char path[NNPT_PATH_CAP], *text;
    out_path(fx, name, path, sizeof(path));
    text = nnpt_read_file(path);
    if (!text)
        fail_msg("missing output %s", name);
    return text;
}

bool nnpt_afx_exists(const nnpt_afx_t *fx, const char *name)
{
    char path[NNPT_PATH_CAP];
    out_path(fx, name, path, sizeof(path));
    return access(path, F_OK) == 0;
}

void nnpt_afx_expect_file(const nnpt_afx_t *fx, const char *name, const char *want)
{
    char *got = nnpt_afx_read(fx, name);
    assert_string_equal(got, want);
    free(got);
}

void nnpt_afx_expect_contains(const nnpt_afx_t *fx, const char *name, const char *part)
{
    char *got = nnpt_afx_read(fx, name);
    if (!strstr(got, part))
        fail_msg("%s lacks %s:\n%s", name, part, got);
    free(got);
}
