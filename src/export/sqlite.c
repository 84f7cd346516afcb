/* sqlite.c - `nnprof export sqlite`: every rank of a run in one SQLite database, in the
 * spirit of Nsight Systems' export (docs/SQLITE.md is the schema). Each rank is imported
 * into the model, its tables are bulk-inserted through prepared statements in one
 * transaction, strings go into one StringIds table shared by all ranks, and the analysis
 * results (op statistics, step trace, overlap) become tables too. The file is written
 * under a temporary name and renamed, so a reader never sees half a database. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyse/analyse.h"
#include "export/sqlite.h"
#include "export/sqlite_schema.h"
#include "model/model.h"
#include "nnprof/nnprof.h"
#include "read/raw_import.h"
#include "read/raw_reader.h"
#include "util/util.h"

/* Raw directories (ranks) one export takes: a 64-rank job on one host fits easily. */
#define MAX_DIRS 4096
/* Longest SQL statement we build from a table description. */
#define SQL_CAP 2048
/* Rows per multi-row INSERT of a model table: one sqlite3_step (one VDBE run, one open of
 * the table's cursor) per batch instead of per row. 32 rows x 13 columns stay far below
 * SQLite's 32766 parameters; going from 1 to 32 rows per statement halved the insert time
 * of bench_sqlite, 64 measured no better. */
#define ROWS_PER_INSERT 32
/* Longest multi-row INSERT: ROWS_PER_INSERT groups of at most (NNP_SQL_MAX_COLS + 1) "?,". */
#define BATCH_SQL_CAP 8192
/* First size of the op statistics hash (power of two): runs have few op types, and the
 * table doubles past half full. */
#define STAT_HASH_MIN 256
/* Page cache for the bulk load (negative = KiB, SQLite's convention): 64 MiB keeps the
 * b-tree pages of the tables being appended to in memory. */
#define BULK_CACHE_KIB "-65536"
/* Core types of op statistics (docs/OUTPUTS.md "Operator statistics"). */
#define CORE_HOST_NAME   "HOST_CPU"
#define CORE_KERNEL_NAME "KERNEL"
#define PERCENT          100.0

/* Export state: the database, one prepared insert per table, and the string table all
 * ranks share (a model used only for interning, so equal strings of two ranks get one
 * id). */
typedef struct exp {
    sqlite3 *db;
    sqlite3_stmt *ins[NNP_SQLITE_N_TABLES];       /* one row */
    sqlite3_stmt *ins_batch[NNP_SQLITE_N_TABLES]; /* ROWS_PER_INSERT rows */
    sqlite3_stmt *ins_rank, *ins_window, *ins_stat, *ins_step, *ins_overlap;
    nnp_model_t strings;
    uint32_t *map; /* this rank's model string id -> shared id */
    uint64_t rows;
    const char *path; /* for messages */
} exp_t;

static int db_fail(exp_t *e, const char *what)
{
    return nnp__fail(NNP_EIO, "%s: %s: %s", e->path, what, sqlite3_errmsg(e->db));
}

static int exec(exp_t *e, const char *sql)
{
    return sqlite3_exec(e->db, sql, NULL, NULL, NULL) == SQLITE_OK ? NNP_OK : db_fail(e, sql);
}

static int prepare(exp_t *e, const char *sql, sqlite3_stmt **st)
{
    return sqlite3_prepare_v2(e->db, sql, -1, st, NULL) == SQLITE_OK ? NNP_OK : db_fail(e, sql);
}

/* Runs a bound insert of n_rows rows and resets it for the next ones. Bindings stay in
 * place (no sqlite3_clear_bindings): every insert binds all of its parameters again. */
static int step_rows(exp_t *e, sqlite3_stmt *st, uint64_t n_rows)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return db_fail(e, "insert");
    e->rows += n_rows;
    return NNP_OK;
}

static int step_insert(exp_t *e, sqlite3_stmt *st)
{
    return step_rows(e, st, 1);
}

static size_t n_cols(const nnp_sql_table_t *t)
{
    size_t n = 0;
    while (n < NNP_SQL_MAX_COLS && t->cols[n].name)
        n++;
    return n;
}

/* The multi-row INSERT of a table of nc columns (plus rank): VALUES(?,..),(?,..),... */
static int prepare_batch(exp_t *e, const nnp_sql_table_t *t, size_t nc, sqlite3_stmt **st)
{
    char sql[BATCH_SQL_CAP];
    size_t a = (size_t)snprintf(sql, sizeof(sql), "INSERT INTO %s VALUES", t->name);
    for (size_t r = 0; r < ROWS_PER_INSERT && a < sizeof(sql); r++) {
        a += (size_t)snprintf(sql + a, sizeof(sql) - a, "%s(?", r ? "," : "");
        for (size_t c = 0; c < nc && a < sizeof(sql); c++)
            a += (size_t)snprintf(sql + a, sizeof(sql) - a, ",?");
        if (a < sizeof(sql))
            a += (size_t)snprintf(sql + a, sizeof(sql) - a, ")");
    }
    if (a >= sizeof(sql))
        return nnp__fail(NNP_ETOOLONG, "SQL for table %s too long", t->name);
    return prepare(e, sql, st);
}

/* CREATE TABLE and the prepared INSERTs (one row, a batch) of one model table. */
static int create_table(exp_t *e, size_t ti)
{
    const nnp_sql_table_t *t = &nnp__sqlite_tables[ti];
    char create[SQL_CAP], insert[SQL_CAP];
    size_t nc = n_cols(t), a, b;
    int rc;
    a = (size_t)snprintf(create, sizeof(create), "CREATE TABLE %s(rank INTEGER NOT NULL", t->name);
    b = (size_t)snprintf(insert, sizeof(insert), "INSERT INTO %s VALUES(?", t->name);
    for (size_t c = 0; c < nc && a < sizeof(create) && b < sizeof(insert); c++) {
        a += (size_t)snprintf(create + a, sizeof(create) - a, ", %s %s", t->cols[c].name,
                              t->cols[c].kind == C_F64 ? "REAL" : "INTEGER");
        b += (size_t)snprintf(insert + b, sizeof(insert) - b, ",?");
    }
    if (a + 2 >= sizeof(create) || b + 2 >= sizeof(insert))
        return nnp__fail(NNP_ETOOLONG, "SQL for table %s too long", t->name);
    memcpy(create + a, ");", 3);
    memcpy(insert + b, ")", 2);
    if (exec(e, create) != NNP_OK)
        return NNP_EIO;
    rc = prepare(e, insert, &e->ins[ti]);
    return rc == NNP_OK ? prepare_batch(e, t, nc, &e->ins_batch[ti]) : rc;
}

static int create_schema(exp_t *e)
{
    int rc = exec(e, nnp__sqlite_fixed_schema);
    for (size_t i = 0; rc == NNP_OK && i < NNP_SQLITE_N_TABLES; i++)
        rc = create_table(e, i);
    if (rc == NNP_OK)
        rc = prepare(e, "INSERT INTO Ranks VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &e->ins_rank);
    if (rc == NNP_OK)
        rc = prepare(e, "INSERT INTO Windows VALUES(?,?,?)", &e->ins_window);
    if (rc == NNP_OK)
        rc = prepare(e, "INSERT INTO OpStatistics VALUES(?,?,?,?,?,?,?,?,?,?)", &e->ins_stat);
    if (rc == NNP_OK)
        rc = prepare(e, "INSERT INTO StepTrace VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &e->ins_step);
    if (rc == NNP_OK)
        rc = prepare(e, "INSERT INTO Overlap VALUES(?,?,?,?,?,?,?)", &e->ins_overlap);
    return rc;
}

/* ---- strings ---- */

/* Maps every string of the rank's model to the shared table. */
static int map_strings(exp_t *e, const nnp_model_t *m)
{
    nnp__free(e->map);
    e->map = nnp__calloc(m->n_strs ? m->n_strs : 1, sizeof(uint32_t));
    if (!e->map)
        return nnp__fail(NNP_ENOMEM, "out of memory exporting strings");
    for (size_t id = 1; id < m->n_strs; id++) {
        e->map[id] = nnp__model_intern(&e->strings, m->strs[id], m->str_len[id]);
        if (e->map[id] == 0 && m->str_len[id] > 0)
            return nnp__fail(NNP_ENOMEM, "out of memory exporting strings");
    }
    return NNP_OK;
}

static uint32_t shared_str(exp_t *e, const char *s)
{
    return nnp__model_intern_cstr(&e->strings, s);
}

/* Binds a string id (already shared), NULL for 0 (none). */
static void bind_sid(sqlite3_stmt *st, int k, uint32_t sid)
{
    if (sid)
        sqlite3_bind_int64(st, k, sid);
    else
        sqlite3_bind_null(st, k);
}

static void bind_ts(sqlite3_stmt *st, int k, int64_t ns)
{
    if (ns == NNP_OPEN_END)
        sqlite3_bind_null(st, k);
    else
        sqlite3_bind_int64(st, k, ns);
}

/* ---- model tables ---- */

static void bind_col(exp_t *e, const nnp_model_t *m, sqlite3_stmt *st, int k,
                     const nnp_sql_col_t *c, size_t i)
{
    const void *p = *(void *const *)((const char *)m + c->off);
    if (!p) { /* optional column the model did not allocate (FLOPs) */
        sqlite3_bind_null(st, k);
        return;
    }
    switch (c->kind) {
    case C_TS:
        bind_ts(st, k, ((const int64_t *)p)[i]);
        break;
    case C_I64:
        sqlite3_bind_int64(st, k, ((const int64_t *)p)[i]);
        break;
    case C_U64:
        sqlite3_bind_int64(st, k, (sqlite3_int64)((const uint64_t *)p)[i]);
        break;
    case C_U32:
        sqlite3_bind_int64(st, k, ((const uint32_t *)p)[i]);
        break;
    case C_I32:
        sqlite3_bind_int64(st, k, ((const int32_t *)p)[i]);
        break;
    case C_U8:
        sqlite3_bind_int64(st, k, ((const uint8_t *)p)[i]);
        break;
    case C_F64:
        sqlite3_bind_double(st, k, ((const double *)p)[i]);
        break;
    case C_F64I:
        sqlite3_bind_int64(st, k, (sqlite3_int64)((const double *)p)[i]);
        break;
    case C_STR: {
        uint32_t id = ((const uint32_t *)p)[i];
        bind_sid(st, k, id < m->n_strs ? e->map[id] : 0);
        break;
    }
    case C_THREAD: {
        uint32_t t = ((const uint32_t *)p)[i];
        if (t < m->threads.t.n)
            sqlite3_bind_int64(st, k, (sqlite3_int64)m->threads.tid[t]);
        else
            sqlite3_bind_null(st, k);
        break;
    }
    case C_COMM:
        bind_sid(st, k,
                 shared_str(e, nnp_comm_kind_name((nnp_comm_kind_t)((const uint32_t *)p)[i])));
        break;
    case C_CALL:
        bind_sid(st, k,
                 shared_str(e, nnp_call_kind_name((nnp_call_kind_t)((const uint32_t *)p)[i])));
        break;
    case C_CTAG:
        if (m->comms.has[i] & NNP_COMM_HAS_TAG)
            sqlite3_bind_int64(st, k, ((const int32_t *)p)[i]);
        else
            sqlite3_bind_null(st, k);
        break;
    case C_CWAIT:
        if (m->comms.has[i] & NNP_COMM_HAS_WAIT)
            sqlite3_bind_int64(st, k, (sqlite3_int64)((const uint64_t *)p)[i]);
        else
            sqlite3_bind_null(st, k);
        break;
    }
}

/* Binds row i of the model table as the row starting at parameter k (its rank). */
static void bind_row(exp_t *e, const nnp_model_t *m, const nnp_sql_table_t *t, size_t nc,
                     sqlite3_stmt *st, int k, size_t i)
{
    sqlite3_bind_int64(st, k, m->info.rank_id);
    for (size_t c = 0; c < nc; c++)
        bind_col(e, m, st, k + 1 + (int)c, &t->cols[c], i);
}

/* Whole batches through the multi-row INSERT, the remainder row by row. */
static int insert_table(exp_t *e, const nnp_model_t *m, size_t ti)
{
    const nnp_sql_table_t *t = &nnp__sqlite_tables[ti];
    const nnp_table_t *h = (const nnp_table_t *)((const char *)m + t->t_off);
    size_t nc = n_cols(t), i = 0;
    int row_params = (int)nc + 1;
    for (; i + ROWS_PER_INSERT <= h->n; i += ROWS_PER_INSERT) {
        for (int r = 0; r < ROWS_PER_INSERT; r++)
            bind_row(e, m, t, nc, e->ins_batch[ti], 1 + r * row_params, i + (size_t)r);
        if (step_rows(e, e->ins_batch[ti], ROWS_PER_INSERT) != NNP_OK)
            return NNP_EIO;
    }
    for (; i < h->n; i++) {
        bind_row(e, m, t, nc, e->ins[ti], 1, i);
        if (step_insert(e, e->ins[ti]) != NNP_OK)
            return NNP_EIO;
    }
    return NNP_OK;
}

static int insert_rank(exp_t *e, const nnp_model_t *m)
{
    const nnp_run_info_t *in = &m->info;
    sqlite3_stmt *st = e->ins_rank;
    int rc;
    sqlite3_bind_int64(st, 1, in->rank_id);
    sqlite3_bind_int64(st, 2, in->device_id);
    sqlite3_bind_int64(st, 3, in->rank_size);
    sqlite3_bind_text(st, 4, in->host ? in->host : "", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, in->pid);
    sqlite3_bind_text(st, 6, in->state ? in->state : "", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 7, in->start_wall_us);
    sqlite3_bind_int64(st, 8, in->diff_time_us);
    sqlite3_bind_int64(st, 9, in->clock_ticks_per_sec);
    sqlite3_bind_int64(st, 10, in->ncpu);
    sqlite3_bind_text(st, 11, in->options_json ? in->options_json : "{}", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 12, in->source ? in->source : "", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 13, (sqlite3_int64)in->events_lost);
    sqlite3_bind_int64(st, 14, (sqlite3_int64)in->chunks_corrupt);
    sqlite3_bind_int64(st, 15, (sqlite3_int64)in->chunks_truncated);
    sqlite3_bind_int64(st, 16, (sqlite3_int64)in->files_aged_out);
    rc = step_insert(e, st);
    for (size_t i = 0; rc == NNP_OK && i < in->n_windows; i++) {
        sqlite3_bind_int64(e->ins_window, 1, in->rank_id);
        bind_ts(e->ins_window, 2, in->windows[i].start_ns);
        bind_ts(e->ins_window, 3, in->windows[i].stop_ns);
        rc = step_insert(e, e->ins_window);
    }
    return rc;
}

/* ---- op statistics: the rules of docs/OUTPUTS.md "Operator statistics" (no --steps
 * filter), computed here from the model so the export needs no CSV files. Durations are
 * summed per (side, type, core) in a hash table, one pass over ops and kernels; only the
 * few groups are sorted ---- */

typedef struct stat_group {
    uint32_t type, core; /* shared string ids */
    uint8_t is_device;
    bool used;
    uint64_t count;
    int64_t total_ns, min_ns, max_ns;
} stat_group_t;

typedef struct stat_hash {
    stat_group_t *v;
    size_t cap, n; /* cap: a power of two */
} stat_hash_t;

/* Rows come out by side, then type id, then core id. */
static int cmp_group(const void *a, const void *b)
{
    const stat_group_t *x = a, *y = b;
    if (x->is_device != y->is_device)
        return x->is_device < y->is_device ? -1 : 1;
    if (x->type != y->type)
        return x->type < y->type ? -1 : 1;
    return (x->core > y->core) - (x->core < y->core);
}

static size_t group_slot(const stat_group_t *v, size_t cap, uint32_t type, uint32_t core,
                         uint8_t is_device)
{
    /* Multiplicative hashing (Knuth): ids are small dense integers. */
    uint64_t h = ((uint64_t)type * 0x9E3779B97F4A7C15ull) ^
                 ((uint64_t)core * 0xC2B2AE3D27D4EB4Full) ^ is_device;
    size_t i = (size_t)(h >> 32) & (cap - 1);
    while (v[i].used && (v[i].type != type || v[i].core != core || v[i].is_device != is_device))
        i = (i + 1) & (cap - 1);
    return i;
}

static int stat_grow(stat_hash_t *h)
{
    size_t cap = h->cap ? h->cap * 2 : STAT_HASH_MIN;
    stat_group_t *v = nnp__calloc(cap, sizeof(stat_group_t));
    if (!v)
        return nnp__fail(NNP_ENOMEM, "out of memory in op statistics");
    for (size_t i = 0; i < h->cap; i++)
        if (h->v[i].used)
            v[group_slot(v, cap, h->v[i].type, h->v[i].core, h->v[i].is_device)] = h->v[i];
    nnp__free(h->v);
    h->v = v;
    h->cap = cap;
    return NNP_OK;
}

static int stat_add(stat_hash_t *h, uint32_t type, uint32_t core, uint8_t is_device, int64_t dur_ns)
{
    stat_group_t *g;
    if (2 * (h->n + 1) > h->cap && stat_grow(h) != NNP_OK)
        return NNP_ENOMEM;
    g = &h->v[group_slot(h->v, h->cap, type, core, is_device)];
    if (!g->used) {
        *g = (stat_group_t){type, core, is_device, true, 0, 0, dur_ns, dur_ns};
        h->n++;
    }
    g->count++;
    g->total_ns += dur_ns;
    g->min_ns = dur_ns < g->min_ns ? dur_ns : g->min_ns;
    g->max_ns = dur_ns > g->max_ns ? dur_ns : g->max_ns;
    return NNP_OK;
}

/* Host ops (HOST_CPU, open ones skipped) and kernels (core = task type or KERNEL, op type =
 * the launching op's type, else the kernel's name; the launching op found as op_stats.c
 * finds it, through nnp__op_index). */
static int stat_collect(exp_t *e, const nnp_model_t *m, stat_hash_t *h)
{
    const nnp_ops_t *o = &m->ops;
    const nnp_kernels_t *k = &m->kernels;
    nnp_op_index_t ix;
    uint32_t host = shared_str(e, CORE_HOST_NAME), kern = shared_str(e, CORE_KERNEL_NAME);
    int rc = NNP_OK;
    if (!host || !kern)
        return nnp__fail(NNP_ENOMEM, "out of memory in op statistics");
    for (size_t i = 0; rc == NNP_OK && i < o->t.n; i++) {
        if (o->end_ns[i] == NNP_OPEN_END)
            continue;
        rc = stat_add(h, e->map[o->type[i]], host, 0,
                      o->end_ns[i] > o->start_ns[i] ? o->end_ns[i] - o->start_ns[i] : 0);
    }
    if (rc == NNP_OK)
        rc = nnp__op_index_build(m, &ix);
    if (rc != NNP_OK)
        return rc;
    for (size_t i = 0; rc == NNP_OK && i < k->t.n; i++) {
        size_t op = nnp__op_index_find(&ix, k->corr[i]);
        uint32_t type = op != SIZE_MAX && o->type[op] ? o->type[op] : k->name[i];
        rc = stat_add(h, e->map[type], k->type[i] ? e->map[k->type[i]] : kern, 1,
                      k->end_ns[i] > k->start_ns[i] ? k->end_ns[i] - k->start_ns[i] : 0);
    }
    nnp__op_index_fini(&ix);
    return rc;
}

static int insert_op_stats(exp_t *e, const nnp_model_t *m)
{
    stat_hash_t h = {NULL, 0, 0};
    int64_t side_total[2] = {0, 0};
    size_t n = 0;
    int rc;
    if (m->ops.t.n + m->kernels.t.n == 0)
        return NNP_OK;
    rc = stat_collect(e, m, &h);
    /* Compact the groups to the front of the table, then sort them. */
    for (size_t i = 0; rc == NNP_OK && i < h.cap; i++)
        if (h.v[i].used)
            h.v[n++] = h.v[i];
    qsort(h.v, n, sizeof(stat_group_t), cmp_group);
    for (size_t i = 0; i < n; i++)
        side_total[h.v[i].is_device] += h.v[i].total_ns;
    for (size_t i = 0; rc == NNP_OK && i < n; i++) {
        const stat_group_t *g = &h.v[i];
        sqlite3_stmt *st = e->ins_stat;
        sqlite3_bind_int64(st, 1, m->info.rank_id);
        bind_sid(st, 2, g->type);
        bind_sid(st, 3, g->core);
        sqlite3_bind_int64(st, 4, g->is_device);
        sqlite3_bind_int64(st, 5, (sqlite3_int64)g->count);
        sqlite3_bind_int64(st, 6, g->total_ns);
        /* Mean rounded half up to the ns, as op_statistic's Avg Time. */
        sqlite3_bind_int64(st, 7,
                           (sqlite3_int64)(((uint64_t)g->total_ns + g->count / 2) / g->count));
        sqlite3_bind_int64(st, 8, g->min_ns);
        sqlite3_bind_int64(st, 9, g->max_ns);
        sqlite3_bind_double(st, 10,
                            side_total[g->is_device] > 0
                                ? (double)g->total_ns / (double)side_total[g->is_device] * PERCENT
                                : 0.0);
        rc = step_insert(e, st);
    }
    nnp__free(h.v);
    return rc;
}

/* ---- step trace and overlap, from the analyses themselves ---- */

static void bind_opt_ns(sqlite3_stmt *st, int k, int64_t ns)
{
    if (ns < 0)
        sqlite3_bind_null(st, k); /* -1: unknown */
    else
        sqlite3_bind_int64(st, k, ns);
}

static void bind_known(sqlite3_stmt *st, int k, int64_t ns, bool known)
{
    if (known)
        sqlite3_bind_int64(st, k, ns);
    else
        sqlite3_bind_null(st, k);
}

static int insert_analysis(exp_t *e, const nnp_model_t *m)
{
    nnp_actx_t c;
    nnp_step_trace_t st;
    nnp_overlap_t ov;
    int rc;
    memset(&c, 0, sizeof(c));
    memset(&st, 0, sizeof(st));
    memset(&ov, 0, sizeof(ov));
    c.m = m;
    c.rank = m->info.rank_id;
    c.timeline_limit_bytes = m->info.timeline_limit_bytes;
    rc = nnp__step_trace_run(&c, &st);
    if (rc == NNP_OK)
        rc = nnp__overlap_run(&c, &st, &ov);
    for (size_t i = 0; rc == NNP_OK && i < st.n; i++) {
        const nnp_step_row_t *r = &st.rows[i];
        sqlite3_stmt *s = e->ins_step;
        sqlite3_bind_int64(s, 1, m->info.rank_id);
        sqlite3_bind_int64(s, 2, (sqlite3_int64)r->step_id);
        sqlite3_bind_int64(s, 3, r->graph_id);
        bind_ts(s, 4, r->begin_ns);
        bind_ts(s, 5, r->end_ns);
        bind_ts(s, 6, r->start_point_ns);
        bind_opt_ns(s, 7, r->fp_ns);
        bind_opt_ns(s, 8, r->bp_ns);
        bind_sid(s, 9, r->fp_op < m->n_strs ? e->map[r->fp_op] : 0);
        bind_sid(s, 10, r->bp_op < m->n_strs ? e->map[r->bp_op] : 0);
        /* A phase that needs an unknown point is NULL, as its CSV cell is empty
         * (step_trace.c); a known phase may be negative (a mark before the previous
         * step's end), so known-ness comes from the points, not from the value. */
        bind_known(s, 11, r->iteration_interval_ns, r->fp_ns >= 0);
        bind_known(s, 12, r->fp_and_bp_ns, r->fp_ns >= 0 && r->bp_ns >= 0);
        bind_known(s, 13, r->tail_ns, r->bp_ns >= 0);
        sqlite3_bind_int64(s, 14, r->total_ns);
        rc = step_insert(e, s);
    }
    for (size_t i = 0; rc == NNP_OK && i < ov.n; i++) {
        const nnp_overlap_row_t *r = &ov.rows[i];
        sqlite3_stmt *s = e->ins_overlap;
        sqlite3_bind_int64(s, 1, m->info.rank_id);
        if (r->step_id == UINT64_MAX) /* the whole-run row */
            sqlite3_bind_null(s, 2);
        else
            sqlite3_bind_int64(s, 2, (sqlite3_int64)r->step_id);
        sqlite3_bind_int64(s, 3, r->computing_ns);
        sqlite3_bind_int64(s, 4, r->communication_ns);
        sqlite3_bind_int64(s, 5, r->comm_not_overlapped_ns);
        sqlite3_bind_int64(s, 6, r->overlapped_ns);
        sqlite3_bind_int64(s, 7, r->free_ns);
        rc = step_insert(e, s);
    }
    nnp__overlap_fini(&ov);
    nnp__step_trace_fini(&st);
    return rc;
}

static int export_rank(exp_t *e, const char *raw_dir)
{
    nnp_model_t m;
    int rc = nnp__model_init(&m);
    if (rc != NNP_OK)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    rc = nnp__import_raw(raw_dir, &m);
    if (rc == NNP_OK)
        rc = map_strings(e, &m);
    if (rc == NNP_OK)
        rc = insert_rank(e, &m);
    for (size_t i = 0; rc == NNP_OK && i < NNP_SQLITE_N_TABLES; i++)
        rc = insert_table(e, &m, i);
    if (rc == NNP_OK)
        rc = insert_op_stats(e, &m);
    if (rc == NNP_OK)
        rc = insert_analysis(e, &m);
    nnp__model_fini(&m);
    return rc;
}

static int insert_strings(exp_t *e)
{
    sqlite3_stmt *st;
    int rc = prepare(e, "INSERT INTO StringIds VALUES(?,?)", &st);
    for (size_t id = 1; rc == NNP_OK && id < e->strings.n_strs; id++) {
        sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
        sqlite3_bind_text(st, 2, e->strings.strs[id], (int)e->strings.str_len[id], SQLITE_STATIC);
        rc = step_insert(e, st);
    }
    sqlite3_finalize(st);
    return rc;
}

/* Indexes after the bulk insert: building each once is far cheaper than updating it on
 * every row (SQLite FAQ "insert speed"). */
static int create_indexes(exp_t *e)
{
    char sql[SQL_CAP];
    int rc = exec(e, "CREATE INDEX StringIds_value ON StringIds(value);"
                     "CREATE INDEX Ops_type ON Ops(rank, type);"
                     "CREATE INDEX Ops_corr ON Ops(rank, correlation_id);"
                     "CREATE INDEX Kernels_corr ON Kernels(rank, correlation_id);"
                     "CREATE INDEX Kernels_launch ON Kernels(rank, launch_id);"
                     "CREATE INDEX Calls_launch ON Calls(rank, launch_id);"
                     "CREATE INDEX Steps_id ON Steps(rank, step_id);");
    for (size_t i = 0; rc == NNP_OK && i < NNP_SQLITE_N_TABLES; i++) {
        if (!nnp__sqlite_tables[i].time_ix)
            continue;
        snprintf(sql, sizeof(sql), "CREATE INDEX %s_time ON %s(rank, %s);",
                 nnp__sqlite_tables[i].name, nnp__sqlite_tables[i].name,
                 nnp__sqlite_tables[i].time_ix);
        rc = exec(e, sql);
    }
    return rc;
}

/* ---- discovery: dir itself, its PROF_* children, else <dir>/profiler/PROF_* (the same
 * places as the CLI's raw_dirs.c, which the library cannot include) ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int scan(const char *dir, char **out, int cap)
{
    DIR *d = opendir(dir);
    struct dirent *ent;
    int n = 0;
    if (!d)
        return 0;
    while ((ent = readdir(d)) != NULL && n < cap) {
        char path[NNP_PATH_MAX];
        if (strncmp(ent->d_name, "PROF_", 5) != 0 ||
            nnp__path_join(path, sizeof(path), dir, ent->d_name) != NNP_OK)
            continue;
        if (nnp__raw_is_dir(path) && (out[n] = nnp__strdup(path)) != NULL)
            n++;
    }
    closedir(d);
    qsort(out, (size_t)n, sizeof(char *), cmp_str);
    return n;
}

static int find_raw_dirs(const char *dir, char **out, int cap)
{
    char sub[NNP_PATH_MAX];
    int n;
    if (nnp__raw_is_dir(dir)) {
        out[0] = nnp__strdup(dir);
        return out[0] ? 1 : 0;
    }
    n = scan(dir, out, cap);
    if (n == 0 && nnp__path_join(sub, sizeof(sub), dir, "profiler") == NNP_OK)
        n = scan(sub, out, cap);
    return n;
}

/* ---- the export ---- */

static int export_all(exp_t *e, char **dirs, int n)
{
    /* No journal and no syncs while loading: the file is a temporary one renamed only
     * after a clean finish, so a crash leaves nothing a reader could open. */
    int rc = exec(e, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                     "PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=" BULK_CACHE_KIB ";"
                     /* 64 KiB pages: fewer page splits per appended row (measured ~5%). */
                     "PRAGMA page_size=65536;");
    if (rc == NNP_OK)
        rc = exec(e, "BEGIN");
    if (rc == NNP_OK)
        rc = create_schema(e);
    for (int i = 0; rc == NNP_OK && i < n; i++) {
        rc = export_rank(e, dirs[i]);
        if (rc != NNP_OK && rc != NNP_EIO && rc != NNP_ENOMEM) {
            char why[NNP_PATH_MAX];
            /* Copied: the message is formatted into the buffer it comes from. */
            nnp__strlcpy(why, nnp_last_error(), sizeof(why));
            rc = nnp__fail(rc, "%s: %s", dirs[i], why);
        }
    }
    if (rc == NNP_OK)
        rc = insert_strings(e);
    if (rc == NNP_OK)
        rc = create_indexes(e);
    if (rc == NNP_OK)
        rc = exec(e, "COMMIT");
    return rc;
}

int nnp__export_sqlite(const char *dir, const char *db_path, uint64_t *rows_out)
{
    char def[NNP_PATH_MAX], tmp[NNP_PATH_MAX], db_dir[NNP_PATH_MAX], tmp_name[NNP_NAME_MAX + 32];
    const char *db_name;
    char **dirs;
    exp_t e;
    int n, rc, dirfd = -1, fd;

    if (rows_out)
        *rows_out = 0;
    if (!dir || !dir[0])
        return nnp__fail(NNP_EINVAL, "no directory to export");
    if (!db_path || !db_path[0]) {
        rc = nnp__path_join(def, sizeof(def), dir, NNP_SQLITE_DEFAULT_NAME);
        if (rc != NNP_OK)
            return rc;
        db_path = def;
    }
    dirs = nnp__calloc(MAX_DIRS, sizeof(char *));
    if (!dirs)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    n = find_raw_dirs(dir, dirs, MAX_DIRS);
    if (n <= 0) {
        nnp__free(dirs);
        return nnp__fail(NNP_ENOENT, "%s: no nnprof raw data found", dir);
    }
    /* The database is created like every output (util.h): an empty 0600 file made with
     * O_EXCL|O_NOFOLLOW under a random name in a checked folder, filled by SQLite, renamed
     * into place. */
    db_name = strrchr(db_path, '/');
    db_name = db_name ? db_name + 1 : db_path;
    if (snprintf(db_dir, sizeof(db_dir), "%.*s", (int)(db_name - db_path), db_path) >=
        (int)sizeof(db_dir))
        db_dir[0] = '\0';
    if (!db_dir[0])
        nnp__strlcpy(db_dir, ".", sizeof(db_dir));
    rc = nnp__outdir_open(db_dir, &dirfd);
    fd = rc == NNP_OK ? nnp__tmp_create(dirfd, db_name, tmp_name, sizeof(tmp_name)) : rc;
    if (fd >= 0) {
        close(fd);
        rc = nnp__path_join(tmp, sizeof(tmp), db_dir, tmp_name);
    } else {
        rc = fd;
    }
    if (rc != NNP_OK) {
        if (dirfd >= 0) {
            if (fd >= 0)
                (void)unlinkat(dirfd, tmp_name, 0);
            close(dirfd);
        }
        for (int i = 0; i < n; i++)
            nnp__free(dirs[i]);
        nnp__free(dirs);
        return rc;
    }
    memset(&e, 0, sizeof(e));
    e.path = db_path;
    rc = nnp__model_init(&e.strings);
    if (rc != NNP_OK)
        rc = nnp__fail(NNP_ENOMEM, "out of memory");
    /* NOMUTEX: the connection never leaves this thread, so the per-call mutex of SQLite's
     * serialized mode (taken by every bind) buys nothing. */
    if (rc == NNP_OK &&
        sqlite3_open_v2(tmp, &e.db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
                        NULL) != SQLITE_OK)
        rc = db_fail(&e, "cannot create the database");
    if (rc == NNP_OK)
        rc = export_all(&e, dirs, n);
    for (size_t i = 0; i < NNP_SQLITE_N_TABLES; i++) {
        sqlite3_finalize(e.ins[i]);
        sqlite3_finalize(e.ins_batch[i]);
    }
    sqlite3_finalize(e.ins_rank);
    sqlite3_finalize(e.ins_window);
    sqlite3_finalize(e.ins_stat);
    sqlite3_finalize(e.ins_step);
    sqlite3_finalize(e.ins_overlap);
    if (e.db && sqlite3_close(e.db) != SQLITE_OK && rc == NNP_OK)
        rc = nnp__fail(NNP_EIO, "%s: cannot close the database", db_path);
    if (rc == NNP_OK && renameat(dirfd, tmp_name, dirfd, db_name) != 0)
        rc = nnp__fail(nnp__from_errno(errno), "cannot rename %s to %s: %s", tmp, db_path,
                       strerror(errno));
    if (rc != NNP_OK)
        (void)unlinkat(dirfd, tmp_name, 0);
    else if (rows_out)
        *rows_out = e.rows;
    close(dirfd);
    nnp__free(e.map);
    nnp__model_fini(&e.strings);
    for (int i = 0; i < n; i++)
        nnp__free(dirs[i]);
    nnp__free(dirs);
    return rc;
}
