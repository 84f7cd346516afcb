/* test_sqlite.c - the SQLite export (issue #6): a run recorded with known counts per
 * record kind is exported; every table's row count must equal the raw records of its kind
 * (counted with the raw reader), strings must resolve, OpStatistics must equal the
 * op_statistic_{rank}.csv of `nnprof analyse`, the example queries of docs/SQLITE.md must
 * return the expected rows, and a second export must replace the file. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/sqlite.h"
#include "read/raw_reader.h"
#include "test_util.h"

#define STEPS        10
#define STEP_NS      100000
#define T0_NS        1000000
#define OPS_PER_STEP 3

/* Records STEPS steps: 3 ops (MatMul, Add, MatMul) with one kernel each, an allreduce,
 * an alloc and a free, fp/bp marks, a counter, a mark and a host range per step. */
static void record_run(const char *out)
{
    static const char *const types[OPS_PER_STEP] = {"MatMul", "Add", "MatMul"};
    nnp_options_t o;
    nnp_session_t *s;
    nnp_host_tag_t tag = {0};
    nnp_comm_t comm = {0};
    nnp_tensor_t ten = {0};
    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", out);
    o.sample_interval_ms = 0;
    o.profile_memory = true;
    o.profile_communication = true;
    o.msproftx = true; /* marks are recorded only with msproftx */
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    tag.module = nnp_intern("Dataset");
    tag.event = nnp_intern("GetNext");
    tag.level = 1;
    comm.name = nnp_intern("hcom_allReduce");
    comm.kind = NNP_COMM_ALLREDUCE;
    comm.group = nnp_intern("world");
    comm.size_bytes = 4096;
    comm.peer = -1;
    ten.size_bytes = 1024;
    ten.name = nnp_intern("tensor");
    nnp_epoch_begin_at(0, T0_NS - 10);
    for (uint64_t k = 0; k < STEPS; k++) {
        int64_t t = T0_NS + (int64_t)k * STEP_NS;
        nnp_step_begin_at(k, 0, (uint64_t)t);
        nnp_range_begin_at(&tag, (uint64_t)t + 100);
        nnp_range_end_at(&tag, (uint64_t)t + 500);
        nnp_fp_start_at(k, (uint64_t)t + 1000);
        for (int j = 0; j < OPS_PER_STEP; j++) {
            char name[64];
            nnp_op_t op = {0};
            nnp_kernel_t kn = {0};
            int64_t a = t + 1000 + j * 10000;
            snprintf(name, sizeof(name), "Default/%s-op%d", types[j], j);
            op.name = nnp_intern(name);
            op.type = nnp_intern(types[j]);
            op.correlation_id = k * OPS_PER_STEP + (uint64_t)j + 1;
            nnp_op_at(&op, (uint64_t)a, (uint64_t)a + 1000 * (uint64_t)(j + 1));
            kn.name = nnp_intern("kern");
            kn.correlation_id = op.correlation_id;
            nnp_kernel_at(&kn, (uint64_t)a + 100, (uint64_t)a + 600 + 100 * (uint64_t)j);
        }
        nnp_bp_end_at(k, (uint64_t)t + 40000);
        nnp_comm_at(&comm, (uint64_t)t + 45000, (uint64_t)t + 60000);
        ten.address = 0x1000 + k;
        nnp_mem_alloc_at(&ten, (uint64_t)t + 2000);
        nnp_mem_free_at(ten.address, ten.size_bytes, (uint64_t)t + 70000);
        nnp_counter_at(nnp_intern("loss"), 1.0 / (double)(k + 1), (uint64_t)t + 80000);
        nnp_mark_at(nnp_intern("hello"), (uint64_t)t + 90000);
        nnp_step_end_at(k, 0, (uint64_t)(t + STEP_NS - 1));
    }
    nnp_epoch_end_at(0, T0_NS + STEPS * STEP_NS);
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
}

static int count_kind(void *user, const nnp_raw_event_t *ev)
{
    uint64_t *counts = user;
    if (ev->kind < NNP_REC_KIND_COUNT)
        counts[ev->kind]++;
    return 0;
}

static long long query_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    long long v = -1;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static long long table_rows(sqlite3 *db, const char *table)
{
    char sql[128];
    snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM %s", table);
    return query_int(db, sql);
}

/* Finds the single raw directory <out>/profiler/PROF_* of the run. */
static void raw_dir_of(const char *out, char *raw, size_t cap)
{
    char cmd[4096];
    FILE *p;
    snprintf(cmd, sizeof(cmd), "ls -d %s/profiler/PROF_*", out);
    p = popen(cmd, "r");
    assert_non_null(p);
    assert_non_null(fgets(raw, (int)cap, p));
    raw[strcspn(raw, "\n")] = '\0';
    pclose(p);
}

static void check_counts(sqlite3 *db, const char *raw)
{
    uint64_t c[NNP_REC_KIND_COUNT] = {0};
    nnp_raw_t *r;
    assert_int_equal(nnp__raw_open(raw, &r), NNP_OK);
    assert_int_equal(nnp__raw_read(r, count_kind, c), NNP_OK);
    nnp__raw_close(r);
    /* The recorded counts themselves, so a reader bug cannot hide an export bug. */
    assert_int_equal(c[NNP_REC_OP], STEPS * OPS_PER_STEP);
    assert_int_equal(c[NNP_REC_COMM], STEPS);
    assert_int_equal(c[NNP_REC_MEM_ALLOC], STEPS);
    assert_int_equal(c[NNP_REC_MARK], STEPS);
    assert_int_equal(table_rows(db, "Ops"), c[NNP_REC_OP]);
    assert_int_equal(table_rows(db, "Kernels"), c[NNP_REC_KERNEL]);
    assert_int_equal(table_rows(db, "HostRows"),
                     c[NNP_REC_RANGE_BEGIN] + c[NNP_REC_RANGE_END] + c[NNP_REC_INSTANT]);
    assert_int_equal(table_rows(db, "HostMemory"), c[NNP_REC_HOST_MEM]);
    assert_int_equal(table_rows(db, "Steps"), c[NNP_REC_STEP_BEGIN]);
    assert_int_equal(table_rows(db, "Steps"), STEPS);
    assert_int_equal(table_rows(db, "Epochs"), c[NNP_REC_EPOCH_BEGIN]);
    assert_int_equal(table_rows(db, "FpMarks"), c[NNP_REC_FP_START]);
    assert_int_equal(table_rows(db, "BpMarks"), c[NNP_REC_BP_END]);
    assert_int_equal(table_rows(db, "Comms"), c[NNP_REC_COMM]);
    assert_int_equal(table_rows(db, "MemEvents"), c[NNP_REC_MEM_ALLOC] + c[NNP_REC_MEM_FREE]);
    assert_int_equal(table_rows(db, "PipelineOps"), c[NNP_REC_PIPE_OP]);
    assert_int_equal(table_rows(db, "QueueSamples"), c[NNP_REC_QUEUE] + c[NNP_REC_DEVICE_QUEUE]);
    assert_int_equal(table_rows(db, "Counters"), c[NNP_REC_COUNTER]);
    assert_int_equal(table_rows(db, "Markers"), c[NNP_REC_MARK] + c[NNP_REC_MARK_START]);
    assert_int_equal(table_rows(db, "CpuSamples"), c[NNP_REC_SYS_CPU]);
    assert_int_equal(table_rows(db, "TaskCpu"), c[NNP_REC_PROC_CPU] + c[NNP_REC_THREAD_CPU]);
    assert_int_equal(table_rows(db, "ProcessRss"), c[NNP_REC_PROC_MEM]);
    assert_int_equal(table_rows(db, "Ranks"), 1);
    assert_int_equal(query_int(db, "SELECT events_lost + chunks_corrupt FROM Ranks"), 0);
}

/* Every string column resolves; names come back as recorded. */
static void check_strings(sqlite3 *db)
{
    assert_int_equal(query_int(db, "SELECT COUNT(*) FROM Ops o JOIN StringIds n ON n.id = o.name"
                                   " JOIN StringIds t ON t.id = o.type"),
                     STEPS * OPS_PER_STEP);
    assert_int_equal(query_int(db, "SELECT COUNT(*) FROM Ops o JOIN StringIds t ON t.id = o.type"
                                   " WHERE t.value = 'MatMul'"),
                     STEPS * 2);
    assert_int_equal(query_int(db, "SELECT COUNT(*) FROM Comms c JOIN StringIds k ON k.id = c.kind"
                                   " JOIN StringIds g ON g.id = c.grp"
                                   " WHERE k.value = 'allreduce' AND g.value = 'world'"),
                     STEPS);
    assert_int_equal(query_int(db, "SELECT COUNT(*) FROM HostRows h JOIN StringIds e"
                                   " ON e.id = h.event WHERE e.value = 'GetNext'"),
                     STEPS * 2);
    /* Every id used anywhere exists (no dangling id). */
    assert_int_equal(query_int(db, "SELECT COUNT(*) FROM Ops WHERE name NOT IN"
                                   " (SELECT id FROM StringIds)"),
                     0);
}

/* OpStatistics rows equal op_statistic_0.csv: type, core, count, total and avg (us). */
static void check_op_stats(sqlite3 *db, const char *out)
{
    char path[4096], line[1024], cmd[8192];
    FILE *f;
    int rows = 0;
    snprintf(cmd, sizeof(cmd), "%s/nnprof analyse --quiet %s >/dev/null 2>&1", NNP_BINARY_DIR, out);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof(path), "%s/profiler/op_statistic_0.csv", out);
    f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(line, sizeof(line), f)); /* header */
    while (fgets(line, sizeof(line), f)) {
        char type[256], core[256], sql[1024];
        double total_us, avg_us;
        long long count;
        sqlite3_stmt *st;
        assert_int_equal(
            sscanf(line, "%255[^,],%255[^,],%lld,%lf,%lf", type, core, &count, &total_us, &avg_us),
            5);
        snprintf(sql, sizeof(sql),
                 "SELECT s.count, s.total_ns, s.avg_ns FROM OpStatistics s"
                 " JOIN StringIds t ON t.id = s.op_type JOIN StringIds c ON c.id = s.core_type"
                 " WHERE t.value = '%s' AND c.value = '%s'",
                 type, core);
        assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_int_equal(sqlite3_column_int64(st, 0), count);
        assert_int_equal(sqlite3_column_int64(st, 1), (long long)(total_us * 1000.0 + 0.5));
        assert_int_equal(sqlite3_column_int64(st, 2), (long long)(avg_us * 1000.0 + 0.5));
        assert_int_equal(sqlite3_step(st), SQLITE_DONE);
        sqlite3_finalize(st);
        rows++;
    }
    fclose(f);
    assert_true(rows >= 2);
    assert_int_equal(table_rows(db, "OpStatistics"), rows);
}

/* The example queries of docs/SQLITE.md (kept verbatim there). */
static void check_doc_queries(sqlite3 *db)
{
    sqlite3_stmt *st;
    /* 1. Top op types by total time. MatMul: 20 ops of 1 and 3 us; Add: 10 of 2 us. */
    assert_int_equal(
        sqlite3_prepare_v2(db,
                           "SELECT t.value AS op_type, SUM(o.end_ns - o.start_ns) AS total_ns,"
                           " COUNT(*) AS calls FROM Ops o JOIN StringIds t ON t.id = o.type"
                           " GROUP BY o.rank, o.type ORDER BY total_ns DESC LIMIT 10",
                           -1, &st, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "MatMul");
    assert_int_equal(sqlite3_column_int64(st, 1), STEPS * 4000);
    assert_int_equal(sqlite3_column_int64(st, 2), STEPS * 2);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "Add");
    assert_int_equal(sqlite3_column_int64(st, 1), STEPS * 2000);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    /* 2. Per-step phases. */
    assert_int_equal(
        sqlite3_prepare_v2(db,
                           "SELECT step_id, iteration_interval_ns, fp_and_bp_ns, tail_ns,"
                           " total_ns FROM StepTrace WHERE rank = 0 ORDER BY step_id",
                           -1, &st, NULL),
        SQLITE_OK);
    for (int k = 0; k < STEPS; k++) {
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_int_equal(sqlite3_column_int64(st, 0), k);
        assert_int_equal(sqlite3_column_int64(st, 2), 39000); /* fp at +1000, bp at +40000 */
    }
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    /* 3. Ops of one step. */
    assert_int_equal(
        sqlite3_prepare_v2(db,
                           "SELECT n.value, o.start_ns, o.end_ns - o.start_ns FROM Ops o"
                           " JOIN Steps s ON s.rank = o.rank AND o.start_ns >= s.start_ns"
                           " AND o.start_ns < s.end_ns JOIN StringIds n ON n.id = o.name"
                           " WHERE s.rank = 0 AND s.step_id = 3 ORDER BY o.start_ns",
                           -1, &st, NULL),
        SQLITE_OK);
    for (int j = 0; j < OPS_PER_STEP; j++) {
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_int_equal(sqlite3_column_int64(st, 1), T0_NS + 3 * STEP_NS + 1000 + j * 10000);
        assert_int_equal(sqlite3_column_int64(st, 2), 1000 * (j + 1));
    }
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "Default/MatMul-op2");
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    /* Overlap: one row per step plus the whole run (step_id NULL). */
    assert_int_equal(table_rows(db, "Overlap"), STEPS + 1);
    assert_int_equal(query_int(db, "SELECT communication_ns FROM Overlap WHERE step_id = 0"),
                     15000);
}

static void test_export(void **state)
{
    char *out = nnpt_mkdtemp();
    char raw[4096], db_path[8192];
    uint64_t rows = 0, rows2 = 0;
    sqlite3 *db;
    (void)state;
    record_run(out);
    raw_dir_of(out, raw, sizeof(raw));
    snprintf(db_path, sizeof(db_path), "%s/run.db", out);
    assert_int_equal(nnp__export_sqlite(out, db_path, &rows), NNP_OK);
    assert_true(rows > STEPS * OPS_PER_STEP);
    assert_int_equal(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    check_counts(db, raw);
    check_strings(db);
    check_op_stats(db, out);
    check_doc_queries(db);
    sqlite3_close(db);
    /* A second export (from the raw directory itself) replaces the file in place. */
    assert_int_equal(nnp__export_sqlite(raw, db_path, &rows2), NNP_OK);
    assert_int_equal(rows2, rows);
    assert_int_equal(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(table_rows(db, "Ops"), STEPS * OPS_PER_STEP);
    assert_int_equal(table_rows(db, "Ranks"), 1);
    sqlite3_close(db);
    /* Default path: <dir>/nnprof.sqlite. */
    assert_int_equal(nnp__export_sqlite(raw, NULL, NULL), NNP_OK);
    snprintf(db_path, sizeof(db_path), "%s/nnprof.sqlite", raw);
    assert_int_equal(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(table_rows(db, "Kernels"), STEPS * OPS_PER_STEP);
    sqlite3_close(db);
    nnpt_rm_rf(out);
    free(out);
}

static void test_no_data(void **state)
{
    char *out = nnpt_mkdtemp();
    char db_path[4096];
    FILE *f;
    (void)state;
    snprintf(db_path, sizeof(db_path), "%s/x.db", out);
    assert_int_equal(nnp__export_sqlite(out, db_path, NULL), NNP_ENOENT);
    f = fopen(db_path, "r");
    assert_null(f); /* nothing left behind */
    nnpt_rm_rf(out);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_export),
        cmocka_unit_test(test_no_data),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
