/* test_model_view.c - which processes of a rank train (nnp__model_group_processes) and the
 * view its analyses read (nnp__model_rank_view), model_view.c: a rank's DataLoader
 * workers and a shell's program, their sample rows, and the rows a view keeps, by hand. */
#include <string.h>

#include "model/model.h"
#include "test_util.h"
#include "util/util.h"

/* Sample rows per process in the group tests. */
#define SAMPLES 3

/* Appends SAMPLES rows to each sample table for process pid, values = pid (proc_rss,
 * host_mem), user = pid (sys_cpu), utime = pid (task_cpu), and fills p's ranges. */
static void add_samples(nnp_model_t *m, nnp_proc_part_t *p, uint32_t pid, uint32_t parent,
                        bool work)
{
    p->pid = pid;
    p->parent_pid = parent;
    p->work = work;
    p->from[NNP_PROC_SYS_CPU] = m->sys_cpu.t.n;
    p->from[NNP_PROC_TASK_CPU] = m->task_cpu.t.n;
    p->from[NNP_PROC_RSS] = m->proc_rss.t.n;
    p->from[NNP_PROC_HOST_MEM] = m->host_mem.t.n;
    for (int i = 0; i < SAMPLES; i++) {
        size_t r = nnp__table_push(&m->sys_cpu.t);
        m->sys_cpu.ts_ns[r] = i;
        m->sys_cpu.user[r] = pid;
        r = nnp__table_push(&m->task_cpu.t);
        m->task_cpu.ts_ns[r] = i;
        m->task_cpu.utime[r] = pid;
        r = nnp__table_push(&m->proc_rss.t);
        m->proc_rss.ts_ns[r] = i;
        m->proc_rss.value[r] = pid;
        r = nnp__table_push(&m->host_mem.t);
        m->host_mem.ts_ns[r] = i;
        m->host_mem.value[r] = pid;
    }
    p->to[NNP_PROC_SYS_CPU] = m->sys_cpu.t.n;
    p->to[NNP_PROC_TASK_CPU] = m->task_cpu.t.n;
    p->to[NNP_PROC_RSS] = m->proc_rss.t.n;
    p->to[NNP_PROC_HOST_MEM] = m->host_mem.t.n;
}

/* Every sample row left is process pid's, SAMPLES of each. */
static void assert_samples_of(const nnp_model_t *m, uint32_t pid)
{
    assert_int_equal(m->sys_cpu.t.n, SAMPLES);
    assert_int_equal(m->task_cpu.t.n, SAMPLES);
    assert_int_equal(m->proc_rss.t.n, SAMPLES);
    assert_int_equal(m->host_mem.t.n, SAMPLES);
    for (size_t i = 0; i < SAMPLES; i++) {
        assert_int_equal(m->sys_cpu.ts_ns[i], (int64_t)i);
        assert_int_equal(m->sys_cpu.user[i], pid);
        assert_int_equal(m->task_cpu.utime[i], pid);
        assert_true(m->proc_rss.value[i] == (double)pid);
        assert_true(m->host_mem.value[i] == (double)pid);
    }
}

/* Runs the rule on parts made by add_samples from specs {pid, parent, work}; checks the
 * own pid, the workers (in order) and the samples kept. */
typedef struct spec {
    uint32_t pid, parent;
    bool work;
} spec_t;

static void check_group(const spec_t *s, size_t n, uint32_t own, const uint32_t *workers,
                        size_t n_workers)
{
    nnp_model_t m;
    nnp_proc_part_t parts[8];
    assert_true(n <= 8);
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    m.info.pid = s[0].pid; /* as the first directory's info.json says */
    for (size_t i = 0; i < n; i++)
        add_samples(&m, &parts[i], s[i].pid, s[i].parent, s[i].work);
    assert_int_equal(nnp__model_group_processes(&m, parts, n), NNP_OK);
    assert_int_equal(m.info.pid, own);
    assert_int_equal(m.info.n_worker_pids, n_workers);
    for (size_t i = 0; i < n_workers; i++)
        assert_int_equal(m.info.worker_pids[i], workers[i]);
    assert_samples_of(&m, own);
    /* The tables still take rows after the drop (rows past n zeroed again). */
    assert_int_equal(nnp__table_push(&m.proc_rss.t), SAMPLES);
    assert_true(m.proc_rss.value[SAMPLES] == 0.0);
    nnp__model_fini(&m);
}

/* PyTorch's DataLoader: the training process (10) forked workers 11 and 12, which recorded
 * ops: they are its workers; the samples kept are 10's. */
static void test_dataloader_workers(void **state)
{
    static const spec_t s[] = {{10, 0, true}, {11, 10, true}, {12, 10, true}};
    static const uint32_t w[] = {11, 12};
    (void)state;
    check_group(s, 3, 10, w, 2);
}

/* `nnprof run -- sh train.sh`: the shell (20) recorded samples only, the program it
 * started (21) trains, and 21's forked worker (22) works for it. 21 is the rank's own
 * process (info.pid 21), its samples are kept, the shell's dropped. */
static void test_shell_starts_the_program(void **state)
{
    static const spec_t s[] = {{20, 0, false}, {21, 20, true}, {22, 21, true}};
    static const uint32_t w[] = {22};
    (void)state;
    check_group(s, 3, 21, w, 1);
}

/* Children of a parent that left no directory (it recorded nothing): each is its own, no
 * worker; the first one's samples are kept. A grandchild (33 of 31) works for 31. */
static void test_orphans_are_their_own(void **state)
{
    static const spec_t s[] = {{31, 30, true}, {32, 30, true}, {33, 31, true}};
    static const uint32_t w[] = {33};
    (void)state;
    check_group(s, 3, 31, w, 1);
}

/* Nothing recorded work (samples only): the first process is the rank's, no worker. */
static void test_no_work_keeps_the_first(void **state)
{
    static const spec_t s[] = {{40, 0, false}, {41, 40, false}};
    (void)state;
    check_group(s, 2, 40, NULL, 0);
}

/* Parents that name each other (a pid reused): the chain stops instead of looping, and
 * the rank keeps a process of its own (the first with work), never only workers. */
static void test_parent_cycle_keeps_one_own(void **state)
{
    static const spec_t s[] = {{50, 51, true}, {51, 50, true}};
    static const uint32_t w[] = {51};
    (void)state;
    check_group(s, 2, 50, w, 1);
}

/* One process: nothing is decided, nothing dropped. */
static void test_single_process_untouched(void **state)
{
    nnp_model_t m;
    nnp_proc_part_t p;
    (void)state;
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    m.info.pid = 60;
    add_samples(&m, &p, 60, 0, true);
    assert_int_equal(nnp__model_group_processes(&m, &p, 1), NNP_OK);
    assert_int_equal(m.info.n_worker_pids, 0);
    assert_samples_of(&m, 60);
    nnp__model_fini(&m);
}

/* ---- views ---- */

/* A rank of pid 100 (threads 0 and 2) with a worker of pid 200 (thread 1): ops, host rows,
 * markers, host calls, communication and tensor memory on each. */
static void build_rank(nnp_model_t *m)
{
    static const char *const ops[] = {"own_a", "worker_a", "own_b", "worker_b", "own_c"};
    static const uint32_t op_thread[] = {0, 1, 2, 1, 0};
    assert_int_equal(nnp__model_init(m), NNP_OK);
    m->info.pid = 100;
    assert_int_equal(nnpt_add_thread(m, 100, 100), 0);
    assert_int_equal(nnpt_add_thread(m, 200, 200), 1);
    assert_int_equal(nnpt_add_thread(m, 101, 100), 2);
    assert_int_equal(nnp__model_ops_want_flops(m), NNP_OK);
    for (size_t i = 0; i < 5; i++) {
        size_t r =
            nnpt_add_op(m, (int64_t)(10 * i), (int64_t)(10 * i + 5), ops[i], ops[i], NULL, NULL);
        m->ops.thread[r] = op_thread[i];
        m->ops.flops_matrix[r] = 1000 + i;
    }
    nnpt_add_host_row(m, 1, NNP_HOST_ROW_BEGIN, "torch", "own_range", "Run", 0);
    nnpt_add_host_row(m, 2, NNP_HOST_ROW_BEGIN, "torch", "worker_range", "Run", 1);
    nnpt_add_host_row(m, 3, NNP_HOST_ROW_END, "torch", "worker_range", "Run", 1);
    nnpt_add_host_row(m, 4, NNP_HOST_ROW_END, "torch", "own_range", "Run", 0);
    nnpt_add_marker(m, 5, 6, "worker_mark", 1);
    nnpt_add_marker(m, 7, 8, "own_mark", 2);
    for (uint32_t th = 0; th < 3; th++) {
        size_t r = nnp__table_push(&m->calls.t);
        m->calls.start_ns[r] = th;
        m->calls.thread[r] = th;
        r = nnp__table_push(&m->comms.t);
        m->comms.start_ns[r] = th;
        m->comms.bytes[r] = 100 + th;
        m->comms.thread[r] = th;
        r = nnp__table_push(&m->mem.t);
        m->mem.ts_ns[r] = th;
        m->mem.address[r] = 0x1000; /* the same address in two processes */
        m->mem.thread[r] = th;
    }
    assert_int_equal(nnp__model_finish(m), NNP_OK);
}

static void test_view_without_workers_shares_everything(void **state)
{
    nnp_model_t m, v;
    (void)state;
    build_rank(&m);
    assert_int_equal(nnp__model_rank_view(&m, &v), NNP_OK);
    assert_true(v.ops.start_ns == m.ops.start_ns);
    assert_int_equal(v.ops.t.n, 5);
    assert_true(v.view_of == &m);
    nnp__model_view_fini(&v);
    assert_int_equal(m.ops.t.n, 5); /* the model is untouched */
    nnp__model_fini(&m);
}

static void test_view_leaves_out_the_workers_rows(void **state)
{
    nnp_model_t m, v;
    (void)state;
    build_rank(&m);
    m.info.worker_pids = nnp__calloc(1, sizeof(uint32_t));
    assert_non_null(m.info.worker_pids);
    m.info.worker_pids[m.info.n_worker_pids++] = 200;
    assert_int_equal(nnp__model_rank_view(&m, &v), NNP_OK);
    /* ops 0, 2, 4 in their order, every column (FLOPs too) copied */
    assert_int_equal(v.ops.t.n, 3);
    assert_true(v.ops.start_ns != m.ops.start_ns);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(v.ops.start_ns[i], (int64_t)(20 * i));
        assert_int_equal(v.ops.end_ns[i], (int64_t)(20 * i + 5));
        assert_int_equal(v.ops.flops_matrix[i], 1000 + 2 * i);
        assert_true(v.ops.thread[i] != 1);
    }
    assert_string_equal(nnp__model_str(&v, v.ops.name[1]), "own_b");
    assert_int_equal(v.host.t.n, 2);
    assert_string_equal(nnp__model_str(&v, v.host.event[0]), "own_range");
    assert_int_equal(v.host.kind[1], NNP_HOST_ROW_END);
    assert_int_equal(v.markers.t.n, 1);
    assert_string_equal(nnp__model_str(&v, v.markers.message[0]), "own_mark");
    assert_int_equal(v.calls.t.n, 2);
    assert_int_equal(v.calls.thread[1], 2);
    assert_int_equal(v.comms.t.n, 2);
    assert_int_equal(v.comms.bytes[0], 100);
    assert_int_equal(v.comms.bytes[1], 102);
    assert_int_equal(v.mem.t.n, 2);
    assert_int_equal(v.mem.thread[1], 2);
    /* Shared: threads, steps, strings; the model keeps every row. */
    assert_true(v.threads.pid == m.threads.pid);
    assert_int_equal(m.ops.t.n, 5);
    assert_int_equal(m.host.t.n, 4);
    assert_int_equal(m.mem.t.n, 3);
    nnp__model_view_fini(&v);
    nnp__model_fini(&m);
}

/* Every table of a worker-only kind: the view's tables are empty, not absent. */
static void test_view_of_only_worker_rows_is_empty(void **state)
{
    nnp_model_t m, v;
    (void)state;
    build_rank(&m);
    m.info.worker_pids = nnp__calloc(2, sizeof(uint32_t));
    assert_non_null(m.info.worker_pids);
    m.info.worker_pids[m.info.n_worker_pids++] = 100;
    m.info.worker_pids[m.info.n_worker_pids++] = 200;
    assert_int_equal(nnp__model_rank_view(&m, &v), NNP_OK);
    assert_int_equal(v.ops.t.n, 0);
    assert_int_equal(v.host.t.n, 0);
    assert_int_equal(v.mem.t.n, 0);
    nnp__model_view_fini(&v);
    nnp__model_fini(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dataloader_workers),
        cmocka_unit_test(test_shell_starts_the_program),
        cmocka_unit_test(test_orphans_are_their_own),
        cmocka_unit_test(test_no_work_keeps_the_first),
        cmocka_unit_test(test_parent_cycle_keeps_one_own),
        cmocka_unit_test(test_single_process_untouched),
        cmocka_unit_test(test_view_without_workers_shares_everything),
        cmocka_unit_test(test_view_leaves_out_the_workers_rows),
        cmocka_unit_test(test_view_of_only_worker_rows_is_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
