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
#include "read/torch_npu.h"
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

int nnp__tnpu_import_kernel_details(const char *path, nnp_model_t *m)
{
    static const char *const need[] = {"Name", "Start Time(us)", "Duration(us)"};
    csv_t c;
    long col[NNP_ARRAY_LEN(need)], type, core, stream;
    uint64_t warnings = 0;
    int rc = nnp__tnpu_csv_open(&c, path, need, col, NNP_ARRAY_LEN(need));
    if (rc != NNP_OK)
        goto out;
    type = nnp__csv_col(&c, "Type");
    core = nnp__csv_col(&c, "Accelerator Core");
    stream = nnp__csv_col(&c, "Stream ID");
    while ((rc = nnp__csv_next(&c)) > 0) {
        int64_t ts, dur, st;
        size_t i;
        long need_n = col[1] > col[2] ? col[1] : col[2];
        need_n = need_n > col[0] ? need_n : col[0];
        if ((long)c.n <= need_n || !nnp__tnpu_parse_us_ns(c.f[col[1]], &ts) ||
            !nnp__tnpu_parse_us_ns(c.f[col[2]], &dur) || dur < 0) {
            if (++warnings <= MAX_ROW_WARNINGS)
                NNP_LOG_W("torch_npu import: '%s' line %llu: missing or non-numeric "
                          "'Start Time(us)' or 'Duration(us)': row skipped",
                          path, (unsigned long long)c.line);
            continue;
        }
        if ((i = nnp__table_push(&m->kernels.t)) == SIZE_MAX) {
            rc = nnp__fail(NNP_ENOMEM, "out of memory importing '%s'", path);
            goto out;
        }
        m->kernels.start_ns[i] = ts;
        m->kernels.end_ns[i] = ts + dur;
        m->kernels.name[i] = nnp__model_intern_cstr(m, nnp__tnpu_trim(c.f[col[0]]));
        /* The op type is the kernel's type here; the core type when it is absent. */
        if (type >= 0 && (long)c.n > type && *nnp__tnpu_trim(c.f[type]))
            m->kernels.type[i] = nnp__model_intern_cstr(m, nnp__tnpu_trim(c.f[type]));
        else if (core >= 0 && (long)c.n > core)
            m->kernels.type[i] = nnp__model_intern_cstr(m, nnp__tnpu_trim(c.f[core]));
        if (stream >= 0 && (long)c.n > stream && nnp__tnpu_parse_us_ns(c.f[stream], &st) &&
            st >= 0 && st / NS_PER_US <= UINT32_MAX)
            m->kernels.stream_id[i] = (uint32_t)(st / NS_PER_US);
    }
    if (rc < 0)
        rc = nnp__fail(NNP_ENOMEM, "out of memory reading '%s'", path);
    if (warnings > MAX_ROW_WARNINGS)
        NNP_LOG_W("torch_npu import: '%s': %llu more bad rows not logged", path,
                  (unsigned long long)(warnings - MAX_ROW_WARNINGS));
out:
    nnp__csv_close(&c);
    return rc;
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
    int64_t computing_ns = 0;
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
            !nnp__tnpu_parse_us_ns(c.f[col[1]], &ns)) {
            if (++bad <= MAX_ROW_WARNINGS)
                NNP_LOG_W("torch_npu import: '%s' line %llu: missing or non-numeric "
                          "'Computing': row skipped",
                          path, (unsigned long long)c.line);
            continue;
        }
        rows++;
        computing_ns += ns;
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
              path, (unsigned long long)rows, (unsigned long long)bad,
              (double)computing_ns / NS_PER_US);
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
