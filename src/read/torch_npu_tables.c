/* torch_npu_tables.c - the CSV files of torch_npu / msprof-analyze (torch_npu.h):
 * kernel_details.csv (one kernel per row), step_trace_time.csv (per-step totals, a
 * cross-check only: no timestamps) and cluster_step_trace_time.csv (rank_size). A bad row
 * is logged (file, line, column) and skipped. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "nnprof/nnprof.h"
#include "read/csv_reader.h"
#include "read/foreign.h"
#include "read/torch_npu.h"
#include "util/checked.h"
#include "util/util.h"

/* ---- kernel_details.csv: one kernel per row (a simple RFC 4180 reader) ---- */

typedef nnp_csv_reader_t csv_t;

/* Reads path's header into c; col[k] = the index of need[k]. Logs and fails on a miss. */
int nnp__tnpu_csv_open(csv_t *c, const char *path, const char *const *need, long *col, size_t n)
{
    int rc;
    rc = nnp__csv_open(c, path, MAX_FILE_BYTES);
    if (rc != NNP_OK) {
        NNP_LOG_W("torch_npu import: cannot read '%s': %s", path, nnp_last_error());
        return rc;
    }
    if ((rc = nnp__csv_next(c)) <= 0) {
        rc = rc == 0 ? nnp__fail(NNP_ECORRUPT, "'%s' is empty: no header line", path)
                     : nnp__fail(NNP_ENOMEM, "out of memory reading '%s'", path);
        NNP_LOG_W("torch_npu import: %s", nnp_last_error());
        return rc;
    }
    for (size_t k = 0; k < n; k++)
        if ((col[k] = nnp__csv_col(c, need[k])) < 0) {
            rc =
                nnp__fail(NNP_ECORRUPT, "'%s' line 1: no column '%s': file skipped", path, need[k]);
            NNP_LOG_W("torch_npu import: %s", nnp_last_error());
            return rc;
        }
    return NNP_OK;
}

/* The cell of column col in the current row, "" when the row is short or col absent. */
static const char *cell(const csv_t *c, long col)
{
    return col >= 0 && (long)c->n > col ? nnp__tnpu_trim(c->f[col]) : "";
}

/* One kernel_details row: its task (Accelerator Core) decides what it is, as for the
 * trace's hardware tasks (foreign.h's Ascend table): compute -> a kernel; HCCL -> the
 * communication op (kernel_details lists HCCL ops at op level, stream N/A); any other core
 * (DSA_SQE, ...) is not compute in msprof's Overlap Analysis: skipped. A file without the
 * Accelerator Core column (older) keeps every row as a kernel. */
static int kd_row(nnp_model_t *m, const csv_t *c, const long *col, long type, long core,
                  long stream, int64_t ts, int64_t end, uint64_t *skipped)
{
    const char *name = cell(c, col[0]), *acc = cell(c, core);
    int64_t st;
    size_t i;
    if (core >= 0 && strcmp(acc, HCCL_CORE) == 0) {
        if ((i = nnp__table_push(&m->comms.t)) == SIZE_MAX)
            return NNP_ENOMEM;
        m->comms.start_ns[i] = ts;
        m->comms.end_ns[i] = end;
        m->comms.name[i] = nnp__model_intern_cstr(m, name);
        m->comms.kind[i] = nnp__foreign_comm_kind(name);
        m->comms.peer[i] = -1;
        return NNP_OK;
    }
    if (core >= 0 && !nnp__ascend_is_compute_task(acc)) {
        (*skipped)++;
        return NNP_OK;
    }
    if ((i = nnp__table_push(&m->kernels.t)) == SIZE_MAX)
        return NNP_ENOMEM;
    m->kernels.start_ns[i] = ts;
    m->kernels.end_ns[i] = end;
    m->kernels.name[i] = nnp__model_intern_cstr(m, name);
    m->kernels.type[i] = *acc ? nnp__model_intern_cstr(m, acc) : 0;
    m->kernels.op_type[i] = *cell(c, type) ? nnp__model_intern_cstr(m, cell(c, type)) : 0;
    if (nnp__foreign_us_text_ns(cell(c, stream), &st) && st >= 0 && st / NS_PER_US <= UINT32_MAX)
        m->kernels.stream_id[i] = (uint32_t)(st / NS_PER_US);
    return NNP_OK;
}

int nnp__tnpu_import_kernel_details(const char *path, nnp_model_t *m, nnp_flow_map_t *types)
{
    static const char *const need[] = {"Name", "Start Time(us)", "Duration(us)"};
    csv_t c;
    long col[NNP_ARRAY_LEN(need)], type, core, stream;
    uint64_t warnings = 0, skipped = 0, rows = 0;
    int rc = nnp__tnpu_csv_open(&c, path, need, col, NNP_ARRAY_LEN(need));
    if (rc != NNP_OK)
        goto out;
    type = nnp__csv_col(&c, "Type");
    core = nnp__csv_col(&c, "Accelerator Core");
    stream = nnp__csv_col(&c, "Stream ID");
    while ((rc = nnp__csv_next(&c)) > 0) {
        int64_t ts, dur, end, st;
        if (!nnp__foreign_us_text_ns(cell(&c, col[1]), &ts) ||
            !nnp__foreign_us_text_ns(cell(&c, col[2]), &dur) || dur < 0 ||
            !nnp__i64_add(ts, dur, &end)) {
            if (++warnings <= MAX_ROW_WARNINGS)
                NNP_LOG_W("torch_npu import: '%s' line %llu: missing or non-numeric "
                          "'Start Time(us)' or 'Duration(us)': row skipped",
                          path, (unsigned long long)c.line);
            continue;
        }
        rows++;
        if (types) {
            /* trace_view.json supplies the tasks (at full precision): keep only the op type
             * of each, keyed by (stream, start). */
            uint32_t op = *cell(&c, type) ? nnp__model_intern_cstr(m, cell(&c, type)) : 0;
            if (op && nnp__foreign_us_text_ns(cell(&c, stream), &st) && st >= 0 &&
                nnp__flow_put(types, nnp__flow_key(0, (uint64_t)(st / NS_PER_US), ts),
                              (uint64_t)op << 32) != NNP_OK) {
                rc = NNP_ENOMEM;
                goto out;
            }
            continue;
        }
        if (kd_row(m, &c, col, type, core, stream, ts, end, &skipped) != NNP_OK) {
            rc = nnp__fail(NNP_ENOMEM, "out of memory importing '%s'", path);
            goto out;
        }
    }
    if (rc < 0)
        rc = nnp__fail(NNP_ENOMEM, "out of memory reading '%s'", path);
    if (warnings > MAX_ROW_WARNINGS)
        NNP_LOG_W("torch_npu import: '%s': %llu more bad rows not logged", path,
                  (unsigned long long)(warnings - MAX_ROW_WARNINGS));
    if (skipped)
        NNP_LOG_I("torch_npu import: '%s': %llu rows of %llu are neither compute nor HCCL "
                  "(e.g. DSA_SQE): skipped",
                  path, (unsigned long long)skipped, (unsigned long long)rows);
out:
    nnp__csv_close(&c);
    return rc == NNP_ENOMEM ? nnp__fail(NNP_ENOMEM, "out of memory importing '%s'", path) : rc;
}

/* ---- step_trace_time.csv: per-step totals, cross-checked (they carry no timestamps) ---- */

static bool has_step(const nnp_model_t *m, uint64_t id)
{
    for (size_t i = 0; i < m->steps.t.n; i++)
        if (m->steps.id[i] == id)
            return true;
    return false;
}

/* torch_npu's step_trace_time.csv holds msprof-analyze's per-step Computing /
 * Communication / Free totals (µs) but no start or end, so it cannot make steps. nnprof
 * recomputes those columns from the kernels and comms (overlap.c); here the rows are
 * counted, their step ids checked against the trace's ProfilerStep#N, and both logged. */
int nnp__tnpu_import_step_trace_time(const char *path, const nnp_model_t *m)
{
    static const char *const need[] = {"Step", "Computing"};
    csv_t c;
    long col[NNP_ARRAY_LEN(need)];
    uint64_t rows = 0, unmatched = 0, bad = 0;
    double computing_us = 0; /* a sum for the log line only: a double cannot overflow */
    int more, rc = nnp__tnpu_csv_open(&c, path, need, col, NNP_ARRAY_LEN(need));
    if (rc != NNP_OK) {
        nnp__csv_close(&c);
        return rc;
    }
    while ((more = nnp__csv_next(&c)) > 0) {
        const char *step;
        int64_t ns;
        char *end;
        unsigned long long id;
        if ((long)c.n <= col[0] || (long)c.n <= col[1] ||
            !nnp__foreign_us_text_ns(c.f[col[1]], &ns)) {
            if (++bad <= MAX_ROW_WARNINGS)
                NNP_LOG_W("torch_npu import: '%s' line %llu: missing or non-numeric "
                          "'Computing': row skipped",
                          path, (unsigned long long)c.line);
            continue;
        }
        rows++;
        computing_us += (double)ns / NS_PER_US;
        step = nnp__tnpu_trim(c.f[col[0]]);
        if (!*step)
            continue; /* one row for the whole run when torch_npu saw no steps */
        errno = 0;
        id = strtoull(step, &end, 10);
        if (errno || *nnp__tnpu_trim(end) || (m->steps.t.n && !has_step(m, id)))
            unmatched++;
    }
    nnp__csv_close(&c);
    if (more < 0)
        return nnp__fail(NNP_ENOMEM, "out of memory reading '%s'", path);
    NNP_LOG_I("torch_npu import: '%s': %llu step rows (%llu bad), Computing %.3f us in all; a "
              "cross-check only (no timestamps: nnprof recomputes these columns)",
              path, (unsigned long long)rows, (unsigned long long)bad, computing_us);
    if (unmatched)
        NNP_LOG_W("torch_npu import: '%s': %llu step ids are not among the trace's %zu "
                  "ProfilerStep#N steps",
                  path, (unsigned long long)unmatched, m->steps.t.n);
    return NNP_OK;
}

/* ---- cluster_step_trace_time.csv: one row per rank and per stage (formats.md 1.10) ---- */

/* Counts the rank and stage rows, and sets info.rank_size from the highest rank Index. */
int nnp__tnpu_import_cluster_step_trace(const char *path, nnp_model_t *m)
{
    static const char *const need[] = {"Type", "Index", "Computing"};
    csv_t c;
    long col[NNP_ARRAY_LEN(need)];
    uint64_t n_rank = 0, n_stage = 0, bad = 0;
    long lo = LONG_MAX, hi = -1;
    int more, rc = nnp__tnpu_csv_open(&c, path, need, col, NNP_ARRAY_LEN(need));
    if (rc != NNP_OK) {
        nnp__csv_close(&c);
        return rc;
    }
    while ((more = nnp__csv_next(&c)) > 0) {
        const char *type;
        char *end;
        long r;
        if ((long)c.n <= col[0] || (long)c.n <= col[1]) {
            bad++;
            continue;
        }
        type = nnp__tnpu_trim(c.f[col[0]]);
        if (strcmp(type, "stage") == 0) {
            n_stage++;
            continue;
        }
        errno = 0;
        r = strtol(nnp__tnpu_trim(c.f[col[1]]), &end, 10);
        if (strcmp(type, "rank") != 0 || errno || *nnp__tnpu_trim(end) || r < 0 ||
            r > INT_MAX - 1) {
            if (++bad <= MAX_ROW_WARNINGS)
                NNP_LOG_W("torch_npu import: '%s' line %llu: 'Type' is not rank/stage or "
                          "'Index' is not a rank: row skipped",
                          path, (unsigned long long)c.line);
            continue;
        }
        n_rank++;
        lo = r < lo ? r : lo;
        hi = r > hi ? r : hi;
    }
    nnp__csv_close(&c);
    if (more < 0)
        return nnp__fail(NNP_ENOMEM, "out of memory reading '%s'", path);
    if (hi >= 0 && hi + 1 > m->info.rank_size)
        m->info.rank_size = (int)(hi + 1);
    NNP_LOG_I("torch_npu import: '%s': %llu rank rows (ranks %ld..%ld), %llu stage rows, %llu "
              "bad rows; used for rank_size only (per-rank totals, no timestamps)",
              path, (unsigned long long)n_rank, n_rank ? lo : -1L, hi, (unsigned long long)n_stage,
              (unsigned long long)bad);
    return NNP_OK;
}
