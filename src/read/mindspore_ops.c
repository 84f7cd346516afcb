/* mindspore_ops.c - MindSpore's operator files (mindspore.h, formats.md 1.3):
 * framework_raw_{rank}.csv (each full op name's type, 1.x and 2.x headers), the AI Core
 * intermediate files aicore_intermediate_{rank}_type.csv / _detail.csv and
 * aicpu_intermediate_{rank}.csv, which are what MindInsight's operator page shows: they
 * become the model's op totals (op statistics lists them). Times are ms in every version. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nnprof/nnprof.h"
#include "read/mindspore.h"
#include "util/util.h"

#define CORE_AICORE "AI_CORE"
#define CORE_AICPU  "AI_CPU"
/* MindSpore names an op "<scope>/<Type>-op<N>": the type is the last scope level before
 * this marker (formats.md 1.3 op names; MindInsight's op pages group by it). */
#define OP_MARK "-op"
/* A percent column whose values are fractions (2.x: 0-1) sums to 1 at most; allow for the
 * rounding of each value to 2 decimals. */
#define FRACTION_SUM_MAX 1.005
#define PERCENT          100.0
#define NAME_MAX_LEN     1024

/* The first column of the header that exists among names, -1 when none. */
static long col_any(const csv_t *c, const char *const *names)
{
    for (; *names; names++) {
        long k = nnp__csv_col(c, *names);
        if (k >= 0)
            return k;
    }
    return -1;
}

static const char *cell(const csv_t *c, long col)
{
    return col >= 0 && (long)c->n > col ? nnp__ms_trim(c->f[col]) : "";
}

/* The type in a MindSpore op name: "Default/net/Mul-op29" -> "Mul". */
static uint32_t type_from_name(nnp_model_t *m, const char *name)
{
    const char *base = strrchr(name, '/'), *mark;
    size_t n;
    base = base ? base + 1 : name;
    mark = strstr(base, OP_MARK);
    n = mark && mark[strlen(OP_MARK)] >= '0' && mark[strlen(OP_MARK)] <= '9' ? (size_t)(mark - base)
                                                                             : strlen(base);
    return nnp__model_intern(m, base, n < NAME_MAX_LEN ? n : NAME_MAX_LEN);
}

static uint32_t type_of(nnp_model_t *m, const nnp_flow_map_t *types, uint32_t name)
{
    uint64_t t = types ? nnp__flow_get(types, nnp__flow_key(0, name, 0)) : 0;
    return t ? (uint32_t)t : type_from_name(m, nnp__model_str(m, name));
}

int nnp__ms_import_framework(const char *path, nnp_model_t *m, nnp_flow_map_t *types)
{
    static const char *const full_cols[] = {"full_op_name", "full_kernel_name", NULL};
    static const char *const type_cols[] = {"op_type", "kernel_type", NULL};
    csv_t c;
    long full, type;
    int rc = nnp__ms_csv_open(&c, path);
    if (rc != NNP_OK)
        return rc;
    /* 2.x names (full_op_name, op_type), then 1.x (full_kernel_name, kernel_type). */
    full = col_any(&c, full_cols);
    type = col_any(&c, type_cols);
    if (full < 0 || type < 0) {
        rc = nnp__fail(NNP_ECORRUPT, "'%s' line 1: no column '%s': file skipped", path,
                       full < 0 ? "full_op_name" : "op_type");
        NNP_LOG_W("mindspore import: %s", nnp_last_error());
        goto out;
    }
    while ((rc = nnp__csv_next(&c)) > 0) {
        uint32_t name, t;
        if ((long)c.n <= (full > type ? full : type)) {
            nnp__ms_row_warn(&c, c.line, "%zu fields (truncated?): row skipped", c.n);
            continue;
        }
        name = nnp__model_intern_cstr(m, cell(&c, full));
        t = nnp__model_intern_cstr(m, cell(&c, type));
        if (name && t && nnp__flow_put(types, nnp__flow_key(0, name, 0), t) != NNP_OK) {
            rc = NNP_ENOMEM;
            goto out;
        }
    }
    if (rc < 0)
        rc = nnp__fail(NNP_ENOMEM, "out of memory reading '%s'", path);
    nnp__ms_warn_summary(&c);
out:
    nnp__csv_close(&c);
    return rc;
}

static int push_total(nnp_model_t *m, uint32_t name, uint32_t type, const char *core,
                      uint64_t count, int64_t total_ns, double percent)
{
    size_t i = nnp__table_push(&m->op_totals.t);
    if (i == SIZE_MAX)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    m->op_totals.name[i] = name;
    m->op_totals.type[i] = type;
    m->op_totals.core[i] = nnp__model_intern_cstr(m, core);
    m->op_totals.count[i] = count;
    m->op_totals.total_ns[i] = total_ns;
    m->op_totals.percent[i] = percent;
    return NNP_OK;
}

/* aicore_intermediate_{rank}_type.csv: per type, total ms, executions, percent. 1.x header
 * kernel_type,total_time,...; older 2.x op_type,execution_time,...; percent is a percent in
 * the corpus files and a 0-1 fraction in 2.x's generator (formats.md 1.3): a column of
 * fractions (summing to 1 at most) is scaled by 100. */
int nnp__ms_import_aicore_type(const char *path, nnp_model_t *m)
{
    static const char *const type_cols[] = {"op_type", "kernel_type", NULL};
    static const char *const time_cols[] = {"total_time", "execution_time", NULL};
    csv_t c;
    long type, total, freq, pct;
    size_t first = m->op_totals.t.n;
    double pct_sum = 0, pct_max = 0;
    int rc = nnp__ms_csv_open(&c, path);
    if (rc != NNP_OK)
        return rc;
    type = col_any(&c, type_cols);
    total = col_any(&c, time_cols);
    freq = nnp__csv_col(&c, "execution_frequency");
    pct = nnp__csv_col(&c, "percent");
    if (type < 0 || total < 0 || freq < 0) {
        rc = nnp__fail(NNP_ECORRUPT,
                       "'%s' line 1: needs op_type (or kernel_type), total_time (or "
                       "execution_time) and execution_frequency: file skipped",
                       path);
        NNP_LOG_W("mindspore import: %s", nnp_last_error());
        goto out;
    }
    while ((rc = nnp__csv_next(&c)) > 0) {
        int64_t ns, n;
        double p = pct >= 0 ? strtod(cell(&c, pct), NULL) : NAN;
        if (!nnp__ms_parse_ms_ns(cell(&c, total), &ns) || !nnp__ms_parse_i64(cell(&c, freq), &n) ||
            ns < 0 || n < 0) {
            nnp__ms_row_warn(&c, c.line, "'%s' or 'execution_frequency' is not a number: skipped",
                             c.f[total < (long)c.n ? total : 0]);
            continue;
        }
        if ((rc = push_total(m, 0, nnp__model_intern_cstr(m, cell(&c, type)), CORE_AICORE,
                             (uint64_t)n, ns, p)) != NNP_OK)
            goto out;
        if (!isnan(p)) {
            pct_sum += p;
            pct_max = p > pct_max ? p : pct_max;
        }
    }
    if (pct >= 0 && pct_max <= 1.0 && pct_sum <= FRACTION_SUM_MAX && pct_sum > 0)
        for (size_t i = first; i < m->op_totals.t.n; i++)
            m->op_totals.percent[i] *= PERCENT;
    nnp__ms_warn_summary(&c);
out:
    nnp__csv_close(&c);
    return rc < 0 ? rc : NNP_OK;
}

/* aicore_intermediate_{rank}_detail.csv: per op. With an execution_frequency column the
 * time is the mean ms of one execution (1.x: mean x frequency = the type's total); without
 * it (older 2.x: full_op_name,execution_time) it is the op's total, one execution. */
int nnp__ms_import_aicore_detail(const char *path, nnp_model_t *m, const nnp_flow_map_t *types)
{
    static const char *const name_cols[] = {"full_op_name", "full_kernel_name", "full_kernel_time",
                                            NULL};
    static const char *const time_cols[] = {"task_duration", "execution_time", NULL};
    csv_t c;
    long name, time, freq;
    int rc = nnp__ms_csv_open(&c, path);
    if (rc != NNP_OK)
        return rc;
    name = col_any(&c, name_cols);
    time = col_any(&c, time_cols);
    freq = nnp__csv_col(&c, "execution_frequency");
    if (name < 0 || time < 0) {
        rc = nnp__fail(NNP_ECORRUPT,
                       "'%s' line 1: needs full_op_name (or full_kernel_name) and "
                       "execution_time (or task_duration): file skipped",
                       path);
        NNP_LOG_W("mindspore import: %s", nnp_last_error());
        goto out;
    }
    while ((rc = nnp__csv_next(&c)) > 0) {
        int64_t ns, n = 1;
        uint32_t id;
        if (!nnp__ms_parse_ms_ns(cell(&c, time), &ns) || ns < 0 ||
            (freq >= 0 && (!nnp__ms_parse_i64(cell(&c, freq), &n) || n < 0)) ||
            (n > 0 && ns > INT64_MAX / n)) {
            nnp__ms_row_warn(&c, c.line, "time or execution_frequency is not a number: skipped");
            continue;
        }
        id = nnp__model_intern_cstr(m, cell(&c, name));
        if ((rc = push_total(m, id, type_of(m, types, id), CORE_AICORE, (uint64_t)n, ns * n,
                             NAN)) != NNP_OK)
            goto out;
    }
    nnp__ms_warn_summary(&c);
out:
    nnp__csv_close(&c);
    return rc < 0 ? rc : NNP_OK;
}

/* aicpu_intermediate_{rank}.csv: one row per execution (serial_number, op_type (1.x
 * kernel_type), total_time ms = run + wait, ...), summed per type in first-seen order. */
int nnp__ms_import_aicpu(const char *path, nnp_model_t *m)
{
    static const char *const type_cols[] = {"op_type", "kernel_type", NULL};
    csv_t c;
    long type, total;
    size_t first = m->op_totals.t.n;
    int rc = nnp__ms_csv_open(&c, path);
    if (rc != NNP_OK)
        return rc;
    type = col_any(&c, type_cols);
    total = nnp__csv_col(&c, "total_time");
    if (type < 0 || total < 0) {
        rc = nnp__fail(NNP_ECORRUPT, "'%s' line 1: needs op_type and total_time: file skipped",
                       path);
        NNP_LOG_W("mindspore import: %s", nnp_last_error());
        goto out;
    }
    while ((rc = nnp__csv_next(&c)) > 0) {
        int64_t ns;
        uint32_t t;
        size_t i;
        if (!nnp__ms_parse_ms_ns(cell(&c, total), &ns) || ns < 0) {
            nnp__ms_row_warn(&c, c.line, "total_time is not a number: skipped");
            continue;
        }
        t = nnp__model_intern_cstr(m, cell(&c, type));
        for (i = first; i < m->op_totals.t.n && m->op_totals.type[i] != t; i++)
            ;
        if (i == m->op_totals.t.n && (rc = push_total(m, 0, t, CORE_AICPU, 0, 0, NAN)) != NNP_OK)
            goto out;
        m->op_totals.count[i]++;
        m->op_totals.total_ns[i] += ns;
    }
    nnp__ms_warn_summary(&c);
out:
    nnp__csv_close(&c);
    return rc < 0 ? rc : NNP_OK;
}

/* Keys of the core map: an op name, or an op type, listed by the intermediate files. */
enum { KEY_NAME = 1, KEY_TYPE = 2 };

int nnp__ms_type_kernels(nnp_model_t *m, const nnp_flow_map_t *types)
{
    const nnp_op_totals_t *o = &m->op_totals;
    nnp_flow_map_t cores;
    int rc = NNP_OK;
    memset(&cores, 0, sizeof(cores));
    for (size_t i = 0; i < o->t.n && rc == NNP_OK; i++)
        rc = nnp__flow_put(&cores,
                           o->name[i] ? nnp__flow_key(KEY_NAME, o->name[i], 0)
                                      : nnp__flow_key(KEY_TYPE, o->type[i], 0),
                           o->core[i]);
    for (size_t k = 0; k < m->kernels.t.n && rc == NNP_OK; k++) {
        uint32_t name = m->kernels.name[k], type = type_of(m, types, name);
        uint64_t core;
        if (!type && name) {
            rc = nnp__fail(NNP_ENOMEM, "out of memory");
            break;
        }
        m->kernels.op_type[k] = type;
        /* The core of an op the intermediate files list (by name, else by type). */
        core = nnp__flow_get(&cores, nnp__flow_key(KEY_NAME, name, 0));
        if (!core)
            core = nnp__flow_get(&cores, nnp__flow_key(KEY_TYPE, type, 0));
        if (core)
            m->kernels.type[k] = (uint32_t)core;
    }
    nnp__flow_fini(&cores);
    return rc;
}
