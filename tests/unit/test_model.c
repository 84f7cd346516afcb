/* test_model.c - the trace model (string table, column growth, stable time sort, FLOPs
 * columns added late) and the raw importer: a session recorded through the public API
 * comes back as model rows with the right values, matched steps, and named threads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "read/raw_import.h"
#include "test_util.h"
#include "util/util.h"

static void test_strings_intern_and_find(void **state)
{
    nnp_model_t m;
    uint32_t a, b;
    (void)state;
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__model_intern_cstr(&m, ""), 0);
    a = nnp__model_intern_cstr(&m, "MatMul");
    b = nnp__model_intern_cstr(&m, "ReLU");
    assert_true(a != 0 && b != 0 && a != b);
    assert_int_equal(nnp__model_intern_cstr(&m, "MatMul"), a);
    assert_string_equal(nnp__model_str(&m, b), "ReLU");
    assert_string_equal(nnp__model_str(&m, 0), "");
    assert_string_equal(nnp__model_str(&m, 999999), "");
    assert_int_equal(nnp__model_find(&m, "ReLU"), b);
    assert_int_equal(nnp__model_find(&m, "Absent"), 0);
    /* Enough strings to force several rehashes. */
    for (int i = 0; i < 5000; i++) {
        char buf[32];
        snprintf(buf, sizeof(buf), "op-%d", i);
        assert_true(nnp__model_intern_cstr(&m, buf) != 0);
    }
    assert_int_equal(nnp__model_find(&m, "MatMul"), a);
    assert_string_equal(nnp__model_str(&m, nnp__model_find(&m, "op-4321")), "op-4321");
    nnp__model_fini(&m);
}

static void test_finish_sorts_stably_by_time(void **state)
{
    nnp_model_t m;
    /* (start, name) pushed out of order; equal starts must keep push order. */
    const int64_t starts[] = {30, 10, 20, 10, 5};
    const char *names[] = {"d", "b", "c", "b2", "a"};
    const char *want[] = {"a", "b", "b2", "c", "d"};
    (void)state;
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    for (size_t i = 0; i < 5; i++) {
        size_t r = nnp__table_push(&m.ops.t);
        assert_true(r == i);
        m.ops.start_ns[r] = starts[i];
        m.ops.end_ns[r] = starts[i] + 1;
        m.ops.name[r] = nnp__model_intern_cstr(&m, names[i]);
        if (i == 2) {
            /* FLOPs columns appear after rows exist: earlier rows read 0. */
            assert_int_equal(nnp__model_ops_want_flops(&m), NNP_OK);
            m.ops.flops_matrix[r] = 77;
        }
    }
    assert_int_equal(nnp__model_finish(&m), NNP_OK);
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(nnp__model_str(&m, m.ops.name[i]), want[i]);
    assert_int_equal(m.ops.flops_matrix[3], 77); /* "c" */
    assert_int_equal(m.ops.flops_matrix[0] + m.ops.flops_matrix[1] + m.ops.flops_matrix[4], 0);
    assert_int_equal(nnp__model_rows(&m), 5);
    nnp__model_fini(&m);
}

static void test_import_raw_run(void **state)
{
    char *out = nnpt_mkdtemp();
    nnp_options_t o;
    nnp_session_t *s;
    nnp_model_t m;
    nnp_op_t op = {0};
    nnp_host_tag_t tag = {0};
    nnp_comm_t comm = {0};
    char raw[4096];
    (void)state;

    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", out);
    o.sample_interval_ms = 0;
    o.rank_id = 4;
    o.profile_communication = true;
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    assert_int_equal(nnp_thread_register("trainer"), NNP_OK);
    op.name = nnp_intern("Default/Conv2D-op1");
    op.type = nnp_intern("Conv2D");
    op.stream_id = 2;
    op.flops_matrix = 1000;
    tag.module = nnp_intern("Dataset");
    tag.event = nnp_intern("GetNext");
    tag.stage = nnp_intern("Run");
    comm.name = nnp_intern("allreduce-1");
    comm.kind = NNP_COMM_ALLREDUCE;
    comm.group = nnp_intern("world");
    comm.size_bytes = 4096;
    comm.peer = -1;
    /* Explicit timestamps so every value is known. Steps 1 and 2; step 3 never ends. */
    nnp_host_memory_at(2048, 1050); /* the host rows at 1100 and 1200 carry it */
    nnp_step_begin_at(1, 0, 1000);
    nnp_range_begin_at(&tag, 1100);
    nnp_range_end_at(&tag, 1200);
    nnp_op_at(&op, 1300, 1800);
    nnp_comm_at(&comm, 1850, 1950);
    {
        /* Format 2: a detailed op and its group, described twice (kept once). */
        static const int32_t members[] = {0, 4};
        nnp_comm_t send = comm;
        send.kind = NNP_COMM_SEND;
        send.group = nnp_intern("pair");
        send.peer = 0;
        send.count = 1024;
        send.datatype = nnp_intern("MPI_FLOAT");
        send.tag = 9;
        send.has_tag = true;
        send.wait_ns = 30;
        send.has_wait = true;
        nnp_comm_at(&send, 1900, 1990);
        nnp_comm_group(send.group, members, 2, 1);
        nnp_comm_group(send.group, members, 2, 1);
    }
    nnp_step_end_at(1, 0, 2000);
    nnp_step_begin_at(2, 0, 2000);
    nnp_op_at(&op, 2100, 2600);
    nnp_step_end_at(2, 0, 3000);
    nnp_step_begin_at(3, 0, 3000);
    snprintf(raw, sizeof(raw), "%s", nnp_session_raw_dir(s));
    assert_int_equal(nnp_session_destroy(s), NNP_OK);

    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__import_raw(raw, &m), NNP_OK);
    assert_int_equal(m.info.rank_id, 4);
    assert_string_equal(m.info.state, "finalized");
    assert_string_equal(m.info.source_format, "nnprof-raw");
    assert_int_equal(m.ops.t.n, 2);
    assert_int_equal(m.ops.start_ns[0], 1300);
    assert_int_equal(m.ops.end_ns[0], 1800);
    assert_string_equal(nnp__model_str(&m, m.ops.name[0]), "Default/Conv2D-op1");
    assert_string_equal(nnp__model_str(&m, m.ops.type[1]), "Conv2D");
    assert_int_equal(m.ops.stream_id[0], 2);
    assert_non_null(m.ops.flops_matrix);
    assert_int_equal(m.ops.flops_matrix[1], 1000);
    assert_string_equal(nnp__model_str(&m, m.threads.name[m.ops.thread[0]]), "trainer");
    assert_int_equal(m.steps.t.n, 3);
    assert_int_equal(m.steps.id[0], 1);
    assert_int_equal(m.steps.start_ns[0], 1000);
    assert_int_equal(m.steps.end_ns[0], 2000);
    assert_int_equal(m.steps.end_ns[1], 3000);
    assert_int_equal(m.steps.id[2], 3);
    assert_true(m.steps.end_ns[2] == NNP_OPEN_END);
    assert_int_equal(m.host.t.n, 2);
    assert_int_equal(m.host.kind[0], 0);
    assert_int_equal(m.host.kind[1], 1);
    assert_string_equal(nnp__model_str(&m, m.host.module[0]), "Dataset");
    assert_string_equal(nnp__model_str(&m, m.host.event[1]), "GetNext");
    assert_int_equal(m.host.memory_bytes[0], 2048);
    assert_int_equal(m.host.memory_bytes[1], 2048);
    assert_int_equal(m.comms.t.n, 2);
    assert_int_equal(m.comms.kind[0], NNP_COMM_ALLREDUCE);
    assert_int_equal(m.comms.bytes[0], 4096);
    assert_int_equal(m.comms.peer[0], -1);
    assert_string_equal(nnp__model_str(&m, m.comms.group[0]), "world");
    assert_int_equal(m.comms.has[0], 0); /* a format-1 style record: no details */
    assert_int_equal(m.comms.count[0], 0);
    assert_int_equal(m.comms.kind[1], NNP_COMM_SEND);
    assert_int_equal(m.comms.count[1], 1024);
    assert_string_equal(nnp__model_str(&m, m.comms.datatype[1]), "MPI_FLOAT");
    assert_int_equal(m.comms.has[1], NNP_COMM_HAS_TAG | NNP_COMM_HAS_WAIT);
    assert_int_equal(m.comms.tag[1], 9);
    assert_int_equal(m.comms.wait_ns[1], 30);
    assert_int_equal(m.comm_groups.t.n, 1);
    assert_string_equal(nnp__model_str(&m, m.comm_groups.name[0]), "pair");
    assert_string_equal(nnp__model_str(&m, m.comm_groups.members[0]), "0,4");
    assert_int_equal(m.comm_groups.size[0], 2);
    assert_int_equal(m.comm_groups.my_index[0], 1);
    assert_int_equal(m.info.n_windows, 1);
    assert_true(m.info.windows[0].stop_ns != NNP_OPEN_END);
    nnp__model_fini(&m);
    nnpt_rm_rf(out);
    free(out);
}

/* info.json "clock_sync": "none" until a back end reports; a report rewrites info.json at
 * once (a crash later keeps it); the importer keeps exact values and refuses absurd ones. */
static void test_clock_sync_in_info(void **state)
{
    char *out = nnpt_mkdtemp(), raw[4096], path[4200], *text = NULL;
    nnp_options_t o;
    nnp_session_t *s;
    nnp_model_t m;
    nnp_clock_sync_t cs = {"mpi_pingpong", 0, -1234, 56, true, 7, "test"};
    FILE *f;
    (void)state;

    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", out);
    o.sample_interval_ms = 0;
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    nnp_step_begin(1, 0);
    /* The raw directory and info.json are made when the first event is written. */
    assert_int_equal(nnp_session_flush(s), NNP_OK);
    snprintf(raw, sizeof(raw), "%s", nnp_session_raw_dir(s));
    snprintf(path, sizeof(path), "%s/info.json", raw);
    assert_int_equal(nnp__read_file(path, 1 << 20, &text, NULL), NNP_OK);
    assert_non_null(strstr(text, "\"method\": \"none\""));
    nnp__free(text);
    assert_int_equal(nnp_clock_sync_set(&cs), NNP_OK);
    assert_int_equal(nnp__read_file(path, 1 << 20, &text, NULL), NNP_OK);
    assert_non_null(strstr(text, "\"offset_ns\": -1234"));
    assert_non_null(strstr(text, "\"drift_ns\": 7"));
    nnp__free(text);
    assert_int_equal(nnp_clock_sync_set(NULL), NNP_EINVAL);
    assert_int_equal(nnp_session_destroy(s), NNP_OK);

    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__import_raw(raw, &m), NNP_OK);
    assert_true(m.info.has_clock_sync);
    assert_int_equal(m.info.clock_offset_ns, -1234);
    assert_int_equal(m.info.clock_uncertainty_ns, 56);
    nnp__model_fini(&m);

    /* A value no clock can have: not applied. */
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"rank_id\": 0, \"clock_sync\": {\"method\": \"mpi_pingpong\", "
          "\"offset_ns\": 1e300, \"uncertainty_ns\": 5}}",
          f);
    fclose(f);
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__import_raw(raw, &m), NNP_OK);
    assert_false(m.info.has_clock_sync);
    assert_int_equal(m.info.clock_offset_ns, 0);
    nnp__model_fini(&m);
    nnpt_rm_rf(out);
    free(out);
}

/* Many short strings (PyTorch's input shapes, one per distinct shape): meta.nnp's
 * compressed chunks hold them in ~3 bytes each, and every one is read back. The reader
 * once bounded ids by meta.nnp's size / 8 and lost every string past id ~1,100 (3,000
 * shapes: a 9 KB meta.nnp). */
static void test_many_short_strings_read_back(void **state)
{
    enum { N_SHAPES = 3000 };
    char *out = nnpt_mkdtemp();
    nnp_options_t o;
    nnp_session_t *s;
    nnp_model_t m;
    nnp_op_t op = {0};
    char raw[4096], want[32];
    (void)state;

    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", out);
    o.sample_interval_ms = 0;
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    op.name = nnp_intern("aten::conv2d");
    op.type = op.name;
    for (int i = 0; i < N_SHAPES; i++) {
        snprintf(want, sizeof(want), "%d,3,32,32", i);
        op.input_shapes = nnp_intern(want);
        nnp_op_at(&op, 1000 + (uint64_t)i * 10, 1005 + (uint64_t)i * 10);
    }
    snprintf(raw, sizeof(raw), "%s", nnp_session_raw_dir(s));
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__import_raw(raw, &m), NNP_OK);
    assert_int_equal(m.info.chunks_corrupt, 0);
    assert_int_equal(m.ops.t.n, N_SHAPES);
    for (size_t i = 0; i < N_SHAPES; i++) {
        snprintf(want, sizeof(want), "%zu,3,32,32", i);
        assert_string_equal(nnp__model_str(&m, m.ops.shapes[i]), want);
        assert_string_equal(nnp__model_str(&m, m.ops.name[i]), "aten::conv2d");
    }
    nnp__model_fini(&m);
    nnpt_rm_rf(out);
    free(out);
}

static void test_import_of_a_non_raw_dir_fails_cleanly(void **state)
{
    char *dir = nnpt_mkdtemp();
    nnp_model_t m;
    (void)state;
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    nnpt_log_capture();
    assert_int_equal(nnp__import_raw(dir, &m), NNP_ENOENT);
    nnpt_log_release();
    assert_non_null(strstr(nnp_last_error(), "is not an nnprof raw directory"));
    nnp__model_fini(&m);
    nnpt_rm_rf(dir);
    free(dir);
}

/* Tables past 2 MiB a column (those columns get mappings of their own, model.c): rows keep
 * their values across growth, rows never written read zero (no memset there), a column
 * added late (FLOPs) reads zero before it, and the final sort and shrink work on them. */
static void test_big_tables_grow_zero_filled(void **state)
{
    /* 600 k rows: int64 columns of 4.8 MB, uint32 ones of 2.4 MB, past 2 MiB both. */
    enum { ROWS = 600000, FLOPS_FROM = 400000 };
    nnp_model_t m;
    (void)state;
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    for (size_t i = 0; i < ROWS; i++) {
        size_t r = nnp__table_push(&m.ops.t);
        assert_true(r == i);
        /* Times descending by pairs, so the final sort permutes every row. */
        m.ops.start_ns[r] = (int64_t)(ROWS - i / 2);
        m.ops.end_ns[r] = (int64_t)i;
        if (i == FLOPS_FROM)
            assert_int_equal(nnp__model_ops_want_flops(&m), NNP_OK);
        if (i >= FLOPS_FROM)
            m.ops.flops_matrix[r] = 1;
    }
    for (size_t i = 0; i < ROWS; i++) {
        if (m.ops.end_ns[i] != (int64_t)i || m.ops.name[i] != 0 || m.ops.corr[i] != 0 ||
            m.ops.flops_vector[i] != 0 || m.ops.flops_matrix[i] != (i >= FLOPS_FROM))
            fail_msg("row %zu before the sort", i);
    }
    assert_int_equal(nnp__model_finish(&m), NNP_OK);
    /* Sorted by start (stable): row k holds pair ROWS / 2 - 1 - k / 2, first then second. */
    for (size_t k = 0; k < ROWS; k++) {
        size_t i = (ROWS / 2 - 1 - k / 2) * 2 + k % 2;
        if (m.ops.start_ns[k] != (int64_t)(ROWS - i / 2) || m.ops.end_ns[k] != (int64_t)i ||
            m.ops.corr[k] != 0 || m.ops.flops_matrix[k] != (i >= FLOPS_FROM))
            fail_msg("row %zu after the sort", k);
    }
    assert_int_equal(nnp__model_rows(&m), ROWS);
    nnp__model_fini(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strings_intern_and_find),
        cmocka_unit_test(test_finish_sorts_stably_by_time),
        cmocka_unit_test(test_big_tables_grow_zero_filled),
        cmocka_unit_test(test_import_raw_run),
        cmocka_unit_test(test_clock_sync_in_info),
        cmocka_unit_test(test_import_of_a_non_raw_dir_fails_cleanly),
        cmocka_unit_test(test_many_short_strings_read_back),
    };
    nnp_log_set_level(NNP_LOG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
