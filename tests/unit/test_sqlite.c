/* test_sqlite.c - the SQLite export (issue #6): a run recorded with known counts per
 * record kind is exported; every table's row count must equal the raw records of its kind
 * (counted with the raw reader), strings must resolve, the analysis tables must equal the
 * CSV files of `nnprof analyse` cell for cell (OpStatistics: op_statistic_{rank}.csv;
 * StepTrace: step_trace_raw_{rank}_detail_time.csv; Overlap: step_trace_time.csv), the
 * example queries of docs/SQLITE.md must return the expected rows, a second export must
 * replace the file, and two ranks recorded into one output path share one database. */
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "export/sqlite.h"
#include "read/raw_reader.h"
#include "test_util.h"

#define STEPS        10
#define STEP_NS      100000
#define T0_NS        1000000
#define OPS_PER_STEP 3
/* Steps of the second rank of the two-rank run: unlike rank 0's, so the per-rank row
 * counts tell the ranks apart. */
#define STEPS_RANK1 6
/* The communication op of a step starts inside the step's last kernel (op 2: kernel
 * [t+21100, t+21800)), so OVERLAP_NS of it is hidden behind compute. */
#define COMM_START_NS 21500
#define COMM_NS       15000
#define OVERLAP_NS    300
/* Output units of the analysis CSVs: step trace in ms with 6 decimals, overlap in us with
 * 3 decimals, both formatted from integer ns (docs/OUTPUTS.md). */
#define NS_PER_MS   1000000
#define MS_DECIMALS 6
#define NS_PER_US   1000
#define US_DECIMALS 3
#define CELL_CAP    64
#define LINE_CAP    8192
#define MAX_FIELDS  64

/* Launch ids of the kernels and their calls: this plus the op's correlation id. */
#define LAUNCH_BASE 100000

/* Records n_steps steps as rank `rank`: 3 ops (MatMul, Add, MatMul) with one kernel each
 * and the call that launched it (its launch id on both),
 * an allreduce overlapping the last kernel, an alloc and a free, fp/bp marks, a counter, a
 * mark and a host range per step. No cmocka asserts: it also runs in forked children. */
static int record_rank(const char *out, int rank, uint64_t n_steps)
{
    static const char *const types[OPS_PER_STEP] = {"MatMul", "Add", "MatMul"};
    nnp_options_t o;
    nnp_session_t *s;
    nnp_host_tag_t tag = {0};
    nnp_comm_t comm = {0};
    nnp_tensor_t ten = {0};
    nnp_call_t call = {0};
    int rc;
    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", out);
    o.sample_interval_ms = 0;
    o.rank_id = rank;
    o.device_id = rank;
    o.profile_memory = true;
    o.profile_communication = true;
    o.msproftx = true; /* marks are recorded only with msproftx */
    rc = nnp_session_create(&o, &s);
    if (rc != NNP_OK)
        return rc;
    tag.module = nnp_intern("Dataset");
    tag.event = nnp_intern("GetNext");
    tag.level = 1;
    comm.name = nnp_intern("hcom_allReduce");
    comm.kind = NNP_COMM_ALLREDUCE;
    comm.group = nnp_intern("world");
    comm.size_bytes = 4096;
    comm.peer = -1;
    comm.launch_id = 7; /* as an NCCL kernel's: the column carries it */
    ten.size_bytes = 1024;
    ten.name = nnp_intern("tensor");
    call.name = nnp_intern("cudaLaunchKernel");
    call.kind = NNP_CALL_CUDA_RUNTIME;
    nnp_epoch_begin_at(0, T0_NS - 10);
    for (uint64_t k = 0; k < n_steps; k++) {
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
            kn.launch_id = LAUNCH_BASE + op.correlation_id;
            call.correlation_id = op.correlation_id;
            call.launch_id = kn.launch_id;
            nnp_call_at(&call, (uint64_t)a + 10, (uint64_t)a + 50);
            nnp_kernel_at(&kn, (uint64_t)a + 100, (uint64_t)a + 600 + 100 * (uint64_t)j);
        }
        nnp_bp_end_at(k, (uint64_t)t + 40000);
        nnp_comm_at(&comm, (uint64_t)t + COMM_START_NS, (uint64_t)t + COMM_START_NS + COMM_NS);
        ten.address = 0x1000 + k;
        nnp_mem_alloc_at(&ten, (uint64_t)t + 2000);
        nnp_mem_free_at(ten.address, ten.size_bytes, (uint64_t)t + 70000);
        nnp_counter_at(nnp_intern("loss"), 1.0 / (double)(k + 1), (uint64_t)t + 80000);
        nnp_mark_at(nnp_intern("hello"), (uint64_t)t + 90000);
        nnp_step_end_at(k, 0, (uint64_t)(t + STEP_NS - 1));
    }
    nnp_epoch_end_at(0, T0_NS + n_steps * STEP_NS);
    return nnp_session_destroy(s);
}

static void record_run(const char *out)
{
    assert_int_equal(record_rank(out, 0, STEPS), NNP_OK);
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
    assert_int_equal(table_rows(db, "Calls"), c[NNP_REC_CALL]);
    assert_int_equal(c[NNP_REC_CALL], c[NNP_REC_KERNEL]);
    /* Each kernel joins its one launch call, which began before it, in its op. */
    assert_int_equal(query_int(db, "SELECT COUNT(*) FROM Kernels k JOIN Calls c ON c.rank = "
                                   "k.rank AND c.launch_id = k.launch_id JOIN StringIds n ON "
                                   "n.id = c.kind WHERE n.value = 'cuda_runtime' AND c.start_ns "
                                   "< k.start_ns AND c.correlation_id = k.correlation_id"),
                     c[NNP_REC_KERNEL]);
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
    assert_int_equal(query_int(db, "SELECT COUNT(*) FROM Comms WHERE launch_id = 7"), STEPS);
    assert_int_equal(query_int(db, "SELECT COUNT(*) FROM HostRows h JOIN StringIds e"
                                   " ON e.id = h.event WHERE e.value = 'GetNext'"),
                     STEPS * 2);
    /* Every id used anywhere exists (no dangling id). */
    assert_int_equal(query_int(db, "SELECT COUNT(*) FROM Ops WHERE name NOT IN"
                                   " (SELECT id FROM StringIds)"),
                     0);
}

/* Runs `nnprof analyse` on the output path: the CSV files the tables are compared with. */
static void analyse(const char *out)
{
    char cmd[8192];
    snprintf(cmd, sizeof(cmd), "%s/nnprof analyse --quiet %s >/dev/null 2>&1", NNP_BINARY_DIR, out);
    assert_int_equal(system(cmd), 0);
}

/* OpStatistics rows of a rank equal op_statistic_{rank}.csv: type, core, count, total and
 * avg (us). */
static void check_op_stats(sqlite3 *db, const char *out, int rank)
{
    char path[4096], line[1024], count_sql[128];
    FILE *f;
    int rows = 0;
    snprintf(path, sizeof(path), "%s/profiler/op_statistic_%d.csv", out, rank);
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
                 " WHERE s.rank = %d AND t.value = '%s' AND c.value = '%s'",
                 rank, type, core);
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
    snprintf(count_sql, sizeof(count_sql), "SELECT COUNT(*) FROM OpStatistics WHERE rank = %d",
             rank);
    assert_int_equal(query_int(db, count_sql), rows);
}

/* ---- StepTrace and Overlap against their CSV files, cell for cell ---- */

/* ns as the analyses print them: v / unit with exactly `decimals` digits, from integers
 * (step_trace.c fmt_scaled, overlap.c fmt_us); NULL (unknown) is an empty cell. */
static void fmt_cell(char *b, size_t cap, sqlite3_stmt *st, int col, int64_t unit, int decimals)
{
    int64_t v;
    uint64_t a;
    if (sqlite3_column_type(st, col) == SQLITE_NULL) {
        b[0] = '\0';
        return;
    }
    v = sqlite3_column_int64(st, col);
    a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    snprintf(b, cap, "%s%" PRIu64 ".%0*" PRIu64, v < 0 ? "-" : "", a / (uint64_t)unit, decimals,
             a % (uint64_t)unit);
}

/* Splits a CSV line (no quoted fields in these files) in place; returns the field count. */
static int split_csv(char *line, char **f, int cap)
{
    int n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    for (char *p = line; n < cap;) {
        char *c = strchr(p, ',');
        f[n++] = p;
        if (!c)
            break;
        *c = '\0';
        p = c + 1;
    }
    return n;
}

/* The StepTrace expression printed in a column of the step trace CSV; NULL for the
 * communication columns, which are no StepTrace column. The inference `fp` column is the
 * step end minus fp (docs/OUTPUTS.md "Inference mode"). */
static const char *step_expr(const char *csv_col)
{
    static const char *const map[][2] = {
        {"start_point", "start_point_ns"},
        {"end_point", "end_ns"},
        {"total", "total_ns"},
        {"fp_point", "fp_ns"},
        {"bp_point", "bp_ns"},
        {"iteration_interval", "iteration_interval_ns"},
        {"fp_and_bp", "fp_and_bp_ns"},
        {"tail", "tail_ns"},
        {"fp", "end_ns - fp_ns"},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(csv_col, map[i][0]) == 0)
            return map[i][1];
    return NULL;
}

static bool is_point(const char *csv_col)
{
    return strstr(csv_col, "_point") != NULL;
}

/* Every row of step_trace_raw_{rank}_detail_time.csv equals the StepTrace row of the same
 * position, every StepTrace column printed in ms; the averages row equals the mean of the
 * table's known values, computed as step_trace.c computes it (sum / n, 6 decimals). */
static void check_step_trace(sqlite3 *db, const char *out, int rank, long long n_steps)
{
    char path[4096], head[LINE_CAP], line[LINE_CAP], sql[LINE_CAP], cell[CELL_CAP];
    char *hf[MAX_FIELDS], *f[MAX_FIELDS];
    const char *expr[MAX_FIELDS];
    int nh, nf, n_cols = 0, used = 0;
    long long rows = 0;
    sqlite3_stmt *st;
    FILE *fp;
    snprintf(path, sizeof(path), "%s/profiler/step_trace_raw_%d_detail_time.csv", out, rank);
    fp = fopen(path, "r");
    assert_non_null(fp);
    assert_non_null(fgets(head, sizeof(head), fp));
    nh = split_csv(head, hf, MAX_FIELDS);
    assert_string_equal(hf[0], "step_num");
    /* The SELECT: step_id, then one expression per StepTrace column of the CSV. */
    used = snprintf(sql, sizeof(sql), "SELECT step_id");
    for (int c = 1; c < nh; c++) {
        expr[c] = step_expr(hf[c]);
        if (expr[c]) {
            used += snprintf(sql + used, sizeof(sql) - (size_t)used, ", %s", expr[c]);
            n_cols++;
        }
    }
    /* Training header: 8 StepTrace columns; inference: 6 (docs/OUTPUTS.md). */
    assert_true(n_cols == 8 || n_cols == 6);
    snprintf(sql + used, sizeof(sql) - (size_t)used,
             " FROM StepTrace WHERE rank = %d ORDER BY rowid", rank);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    while (fgets(line, sizeof(line), fp)) {
        int k = 1;
        nf = split_csv(line, f, MAX_FIELDS);
        assert_int_equal(nf, nh);
        if (strcmp(f[0], "-") == 0)
            break; /* the averages row, checked below */
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        snprintf(cell, sizeof(cell), "%lld", (long long)sqlite3_column_int64(st, 0));
        assert_string_equal(f[0], cell);
        for (int c = 1; c < nh; c++) {
            if (!expr[c])
                continue;
            fmt_cell(cell, sizeof(cell), st, k++, NS_PER_MS, MS_DECIMALS);
            assert_string_equal(f[c], cell);
        }
        rows++;
    }
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    assert_int_equal(rows, n_steps);
    /* The averages row (written when there are rows): points empty, phases the mean. */
    assert_int_equal(strcmp(f[0], "-"), 0);
    for (int c = 1; c < nh; c++) {
        long long sum, n;
        if (!expr[c])
            continue;
        if (is_point(hf[c])) {
            assert_string_equal(f[c], "");
            continue;
        }
        /* COUNT and SUM skip NULLs: the mean of the known values, as step_trace.c. */
        snprintf(sql, sizeof(sql), "SELECT COUNT(%s) FROM StepTrace WHERE rank = %d", expr[c],
                 rank);
        n = query_int(db, sql);
        snprintf(sql, sizeof(sql), "SELECT SUM(%s) FROM StepTrace WHERE rank = %d", expr[c], rank);
        sum = query_int(db, sql);
        if (n == 0) {
            assert_string_equal(f[c], "");
            continue;
        }
        snprintf(cell, sizeof(cell), "%.*f", MS_DECIMALS, (double)sum / (double)n / NS_PER_MS);
        assert_string_equal(f[c], cell);
    }
    assert_null(fgets(line, sizeof(line), fp)); /* nothing after the averages row */
    fclose(fp);
}

/* Every row of <raw dir>/ASCEND_PROFILER_OUTPUT/step_trace_time.csv equals the Overlap row
 * of its step, in us; the whole-run row (step_id NULL) is not written when there are
 * steps. */
static void check_overlap(sqlite3 *db, int rank, long long n_steps)
{
    char sql[512], path[8192], line[LINE_CAP], cell[CELL_CAP];
    char *f[MAX_FIELDS];
    const unsigned char *raw;
    long long rows = 0;
    sqlite3_stmt *st;
    FILE *fp;
    /* The rank's raw directory, as the export recorded it. */
    snprintf(sql, sizeof(sql), "SELECT source FROM Ranks WHERE rank = %d", rank);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    raw = sqlite3_column_text(st, 0);
    assert_non_null(raw);
    snprintf(path, sizeof(path), "%s/ASCEND_PROFILER_OUTPUT/step_trace_time.csv",
             (const char *)raw);
    sqlite3_finalize(st);
    fp = fopen(path, "r");
    assert_non_null(fp);
    assert_non_null(fgets(line, sizeof(line), fp));
    assert_string_equal(line, "Step,Computing,Communication(Not Overlapped),Overlapped,"
                              "Communication,Free\n");
    snprintf(sql, sizeof(sql),
             "SELECT step_id, computing_ns, comm_not_overlapped_ns, overlapped_ns,"
             " communication_ns, free_ns FROM Overlap WHERE rank = %d AND step_id IS NOT NULL"
             " ORDER BY rowid",
             rank);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    while (fgets(line, sizeof(line), fp)) {
        assert_int_equal(split_csv(line, f, MAX_FIELDS), 6);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        snprintf(cell, sizeof(cell), "%lld", (long long)sqlite3_column_int64(st, 0));
        assert_string_equal(f[0], cell);
        for (int c = 1; c < 6; c++) {
            fmt_cell(cell, sizeof(cell), st, c, NS_PER_US, US_DECIMALS);
            assert_string_equal(f[c], cell);
        }
        rows++;
    }
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    fclose(fp);
    assert_int_equal(rows, n_steps);
    /* Plus the whole-run row. */
    snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM Overlap WHERE rank = %d AND step_id IS NULL",
             rank);
    assert_int_equal(query_int(db, sql), 1);
}

/* All three analysis tables of a rank against `nnprof analyse`'s files. */
static void check_analysis_tables(sqlite3 *db, const char *out, int rank, long long n_steps)
{
    check_op_stats(db, out, rank);
    check_step_trace(db, out, rank, n_steps);
    check_overlap(db, rank, n_steps);
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
    /* 5. Launch delays: every kernel's call began 90 ns before it (a + 10, a + 100). */
    assert_int_equal(
        sqlite3_prepare_v2(db,
                           "SELECT kn.value AS kernel, k.start_ns - c.start_ns AS launch_delay_ns"
                           " FROM Kernels k JOIN Calls c ON c.rank = k.rank AND c.launch_id ="
                           " k.launch_id JOIN StringIds kn ON kn.id = k.name WHERE k.launch_id != 0"
                           " ORDER BY launch_delay_ns DESC",
                           -1, &st, NULL),
        SQLITE_OK);
    for (int j = 0; j < STEPS * OPS_PER_STEP; j++) {
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_string_equal((const char *)sqlite3_column_text(st, 0), "kern");
        assert_int_equal(sqlite3_column_int64(st, 1), 90);
    }
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    /* Overlap: one row per step plus the whole run (step_id NULL). */
    assert_int_equal(table_rows(db, "Overlap"), STEPS + 1);
    assert_int_equal(query_int(db, "SELECT communication_ns FROM Overlap WHERE step_id = 0"),
                     COMM_NS);
    /* Non-trivial overlap: the allreduce starts inside the last kernel of the step. */
    assert_int_equal(query_int(db, "SELECT overlapped_ns FROM Overlap WHERE step_id = 0"),
                     OVERLAP_NS);
    assert_int_equal(query_int(db, "SELECT comm_not_overlapped_ns FROM Overlap WHERE step_id = 0"),
                     COMM_NS - OVERLAP_NS);
}

static void test_export(void **state)
{
    char *out = nnpt_mkdtemp();
    char raw[4096], db_path[8192], cmd[16384];
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
    analyse(out);
    check_analysis_tables(db, out, 0, STEPS);
    check_doc_queries(db);
    sqlite3_close(db);
    /* A second export (from the raw directory itself) replaces the file in place. */
    assert_int_equal(nnp__export_sqlite(raw, db_path, &rows2), NNP_OK);
    assert_int_equal(rows2, rows);
    assert_int_equal(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(table_rows(db, "Ops"), STEPS * OPS_PER_STEP);
    assert_int_equal(table_rows(db, "Ranks"), 1);
    sqlite3_close(db);
    /* Default path: <dir>/nnprof.db (docs/CLI.md, docs/SQLITE.md), mode 0600 like every
     * other output whatever the umask. */
    {
        struct stat st;
        mode_t old = umask(022);
        assert_int_equal(nnp__export_sqlite(raw, NULL, NULL), NNP_OK);
        umask(old);
        snprintf(db_path, sizeof(db_path), "%s/nnprof.db", raw);
        assert_int_equal(stat(db_path, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
        assert_int_equal(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
        assert_int_equal(table_rows(db, "Kernels"), STEPS * OPS_PER_STEP);
        sqlite3_close(db);
        /* The CLI's default is the same file. */
        unlink(db_path);
        snprintf(cmd, sizeof(cmd), "'%s/nnprof' export sqlite -dir '%s' >/dev/null", NNP_BINARY_DIR,
                 raw);
        assert_int_equal(system(cmd), 0);
        assert_int_equal(stat(db_path, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
    }
    nnpt_rm_rf(out);
    free(out);
}

/* Per-rank row counts of the two-rank run. */
static void check_rank_rows(sqlite3 *db, int rank, long long n_steps)
{
    static const struct {
        const char *table;
        long long per_step; /* rows per step; the extra row is Overlap's whole run */
        long long extra;
    } want[] = {
        {"Ops", OPS_PER_STEP, 0}, {"Kernels", OPS_PER_STEP, 0},
        {"Steps", 1, 0},          {"Comms", 1, 0},
        {"MemEvents", 2, 0},      {"Markers", 1, 0},
        {"StepTrace", 1, 0},      {"Overlap", 1, 1},
        {"FpMarks", 1, 0},        {"BpMarks", 1, 0},
        {"Counters", 1, 0},       {"Ranks", 0, 1},
    };
    char sql[256];
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM %s WHERE rank = %d", want[i].table, rank);
        assert_int_equal(query_int(db, sql), want[i].per_step * n_steps + want[i].extra);
    }
}

/* Two processes record ranks 0 and 1 into one output path; one export holds both, each
 * row tagged with its rank, and each rank's analysis tables equal its own CSV files. */
static void test_two_ranks(void **state)
{
    static const long long steps[2] = {STEPS, STEPS_RANK1};
    char *out = nnpt_mkdtemp();
    char db_path[4096];
    uint64_t rows = 0;
    sqlite3 *db;
    (void)state;
    for (int rank = 0; rank < 2; rank++) {
        int status;
        pid_t p = fork();
        assert_true(p >= 0);
        if (p == 0)
            _exit(record_rank(out, rank, (uint64_t)steps[rank]) == NNP_OK ? 0 : 1);
        assert_int_equal(waitpid(p, &status, 0), p);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    snprintf(db_path, sizeof(db_path), "%s/run.db", out);
    assert_int_equal(nnp__export_sqlite(out, db_path, &rows), NNP_OK);
    assert_int_equal(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(table_rows(db, "Ranks"), 2);
    assert_int_equal(query_int(db, "SELECT COUNT(DISTINCT rank) FROM Ops"), 2);
    assert_int_equal(query_int(db, "SELECT MIN(rank) + 10 * MAX(rank) FROM Ranks"), 10);
    assert_int_equal(query_int(db, "SELECT COUNT(*) FROM Ranks WHERE device = rank"), 2);
    for (int rank = 0; rank < 2; rank++)
        check_rank_rows(db, rank, steps[rank]);
    /* Strings are shared: both ranks' MatMul ops point at one id. */
    assert_int_equal(query_int(db, "SELECT COUNT(DISTINCT o.type) FROM Ops o JOIN StringIds t"
                                   " ON t.id = o.type WHERE t.value = 'MatMul'"),
                     1);
    analyse(out);
    for (int rank = 0; rank < 2; rank++)
        check_analysis_tables(db, out, rank, steps[rank]);
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
        cmocka_unit_test(test_two_ranks),
        cmocka_unit_test(test_no_data),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
