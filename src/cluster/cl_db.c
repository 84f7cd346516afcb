/* cl_db.c - cluster_analysis.db, msprof-analyze's database output with the same tables
 * as its files (column names as its tables_config, formats.md 1.10), plus the small
 * helpers every cluster writer uses (output files, exact time text, rank tuples). The
 * database is written under a temporary name in a checked folder, in one transaction,
 * and renamed into place, like every output of ours. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster/cl_driver.h"

#define DB_NAME "cluster_analysis.db"
#define SQL_CAP 2048
/* Columns of the widest table. */
#define MAX_COLS 16

typedef struct table_def {
    const char *name;
    const char *cols[MAX_COLS]; /* "name TYPE", NULL-terminated */
} table_def_t;

/* msprof-analyze's tables (tables_config.py), in nnp_cl_table_t order. A group's member tuple
 * (the JSON files' key) is in CommunicationGroupMapping only: on every row it would make the
 * file grow with the square of the rank count. */
static const table_def_t tables[NNP_CL_T_COUNT] = {
    {"ClusterStepTraceTime",
     {"step TEXT", "type TEXT", "\"index\" TEXT", "computing NUMERIC",
      "communication_not_overlapped NUMERIC", "overlapped NUMERIC", "communication NUMERIC",
      "free NUMERIC", "stage NUMERIC", "bubble NUMERIC",
      "communication_not_overlapped_and_exclude_receive NUMERIC", "preparing NUMERIC",
      "dp_index INTEGER", "pp_index INTEGER", "tp_index INTEGER", NULL}},
    {"ClusterCommunicationTime",
     {"step TEXT", "rank_id INTEGER", "hccl_op_name TEXT", "group_name TEXT",
      "start_timestamp NUMERIC", "elapsed_time NUMERIC", "transit_time NUMERIC",
      "wait_time NUMERIC", "synchronization_time NUMERIC", "idle_time NUMERIC",
      "synchronization_time_ratio NUMERIC", "wait_time_ratio NUMERIC", NULL}},
    {"ClusterCommunicationBandwidth",
     {"step TEXT", "rank_id INTEGER", "hccl_op_name TEXT", "group_name TEXT", "band_type TEXT",
      "transit_size NUMERIC", "transit_time NUMERIC", "bandwidth NUMERIC",
      "large_packet_ratio NUMERIC", "package_size NUMERIC", "count NUMERIC",
      "total_duration NUMERIC", NULL}},
    {"ClusterCommunicationMatrix",
     {"step TEXT", "hccl_op_name TEXT", "group_name TEXT", "src_rank TEXT", "dst_rank TEXT",
      "transit_size NUMERIC", "transit_time NUMERIC", "bandwidth NUMERIC", "transport_type TEXT",
      "op_name TEXT", NULL}},
    {"CommunicationGroupMapping",
     {"type TEXT", "rank_set TEXT", "group_name TEXT", "group_id TEXT", "pg_name TEXT", NULL}},
    {"ClusterBaseInfo", {"key TEXT", "value TEXT", NULL}},
};

static size_t n_cols(nnp_cl_table_t t)
{
    size_t n = 0;
    while (n < MAX_COLS && tables[t].cols[n])
        n++;
    return n;
}

static int db_fail(nnp_cl_data_t *d, const char *what)
{
    return nnp__fail(NNP_EIO, "%s: %s: %s", d->db_final, what, sqlite3_errmsg(d->db));
}

static int exec(nnp_cl_data_t *d, const char *sql)
{
    return sqlite3_exec(d->db, sql, NULL, NULL, NULL) == SQLITE_OK ? NNP_OK : db_fail(d, sql);
}

int nnp__cl_db_open(nnp_cl_data_t *d, const char *out_dir)
{
    char tmp_name[NNP_NAME_MAX + 32], sql[SQL_CAP];
    int dirfd = -1, fd, rc;
    memset(d->db_insert, 0, sizeof(d->db_insert));
    rc = nnp__path_join(d->db_final, sizeof(d->db_final), out_dir, DB_NAME);
    if (rc == NNP_OK)
        rc = nnp__outdir_open(out_dir, &dirfd);
    /* Created with O_EXCL|O_NOFOLLOW under a random name (outfile.c), then opened by SQLite. */
    fd = rc == NNP_OK ? nnp__tmp_create(dirfd, DB_NAME, tmp_name, sizeof(tmp_name)) : rc;
    if (dirfd >= 0)
        close(dirfd);
    if (fd < 0)
        return fd;
    close(fd);
    rc = nnp__path_join(d->db_tmp, sizeof(d->db_tmp), out_dir, tmp_name);
    if (rc != NNP_OK)
        return rc;
    if (sqlite3_open_v2(d->db_tmp, &d->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL) !=
        SQLITE_OK) {
        rc = db_fail(d, "cannot open");
        sqlite3_close(d->db);
        d->db = NULL;
        (void)unlink(d->db_tmp);
        return rc;
    }
    /* A temporary file renamed only when complete: no journal or sync is needed. */
    rc = exec(d, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN");
    for (int t = 0; rc == NNP_OK && t < NNP_CL_T_COUNT; t++) {
        size_t n = n_cols((nnp_cl_table_t)t), len;
        len = (size_t)snprintf(sql, sizeof(sql), "CREATE TABLE %s (", tables[t].name);
        for (size_t c = 0; c < n && len < sizeof(sql); c++)
            len += (size_t)snprintf(sql + len, sizeof(sql) - len, "%s%s", c ? ", " : "",
                                    tables[t].cols[c]);
        if (len < sizeof(sql))
            snprintf(sql + len, sizeof(sql) - len, ")");
        rc = exec(d, sql);
        if (rc != NNP_OK)
            break;
        len = (size_t)snprintf(sql, sizeof(sql), "INSERT INTO %s VALUES (", tables[t].name);
        for (size_t c = 0; c < n && len < sizeof(sql); c++)
            len += (size_t)snprintf(sql + len, sizeof(sql) - len, "%s?", c ? ", " : "");
        if (len < sizeof(sql))
            snprintf(sql + len, sizeof(sql) - len, ")");
        if (sqlite3_prepare_v2(d->db, sql, -1, &d->db_insert[t], NULL) != SQLITE_OK)
            rc = db_fail(d, sql);
    }
    if (rc != NNP_OK)
        return nnp__cl_db_close(d, rc);
    return NNP_OK;
}

int nnp__cl_db_row(nnp_cl_data_t *d, nnp_cl_table_t t, const char *const *values, size_t n)
{
    sqlite3_stmt *st = d->db_insert[t];
    if (!d->db || !st)
        return NNP_OK;
    if (n != n_cols(t))
        return nnp__fail(NNP_EINVAL, "%s: %zu values for %zu columns", tables[t].name, n,
                         n_cols(t));
    for (size_t c = 0; c < n; c++) {
        int ok = values[c] ? sqlite3_bind_text(st, (int)c + 1, values[c], -1, SQLITE_TRANSIENT)
                           : sqlite3_bind_null(st, (int)c + 1);
        if (ok != SQLITE_OK)
            return db_fail(d, "bind");
    }
    if (sqlite3_step(st) != SQLITE_DONE) {
        sqlite3_reset(st);
        return db_fail(d, tables[t].name);
    }
    sqlite3_reset(st);
    return NNP_OK;
}

int nnp__cl_db_close(nnp_cl_data_t *d, int rc)
{
    for (int t = 0; t < NNP_CL_T_COUNT; t++) {
        sqlite3_finalize(d->db_insert[t]);
        d->db_insert[t] = NULL;
    }
    if (!d->db)
        return rc;
    if (rc == NNP_OK)
        rc = exec(d, "COMMIT");
    if (sqlite3_close(d->db) != SQLITE_OK && rc == NNP_OK)
        rc = nnp__fail(NNP_EIO, "%s: cannot close", d->db_final);
    d->db = NULL;
    if (rc == NNP_OK && rename(d->db_tmp, d->db_final) != 0)
        rc = nnp__fail(nnp__from_errno(errno), "cannot rename %s to %s: %s", d->db_tmp, d->db_final,
                       strerror(errno));
    if (rc != NNP_OK)
        (void)unlink(d->db_tmp);
    return rc;
}

/* ---- helpers of every writer ---- */

int nnp__cl_out_open(const nnp_cl_data_t *d, nnp_outfile_t *f, const char *name)
{
    return nnp__out_open(f, d->o->out_dir, name);
}

const char *nnp__cl_us(char *buf, size_t cap, int64_t ns)
{
    return nnp__fmt_ns_as_us(buf, cap, ns);
}

const char *nnp__cl_ms(char *buf, size_t cap, int64_t ns)
{
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    snprintf(buf, cap, "%s%" PRIu64 ".%06" PRIu64, ns < 0 ? "-" : "", a / 1000000u, a % 1000000u);
    return buf;
}

const char *nnp__cl_dec(char *buf, size_t cap, int64_t v, int digits)
{
    /* v / 10^digits as exact decimal text, trailing zeros dropped ("0.1", "12", "0.00001"):
     * the same number a double division would give, without printf and a round trip. */
    uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, scale = 1, ip, fp;
    char frac[24];
    int n = digits;
    for (int i = 0; i < digits; i++)
        scale *= 10;
    ip = a / scale;
    fp = a % scale;
    if (fp == 0) {
        snprintf(buf, cap, "%s%" PRIu64, v < 0 ? "-" : "", ip);
        return buf;
    }
    while (fp % 10 == 0) {
        fp /= 10;
        n--;
    }
    snprintf(frac, sizeof(frac), "%0*" PRIu64, n, fp);
    snprintf(buf, cap, "%s%" PRIu64 ".%s", v < 0 ? "-" : "", ip, frac);
    return buf;
}

int nnp__cl_tuple_text(const int *ranks, size_t n, char **out)
{
    nnp_cl_buf_t b = {0};
    char num[24];
    nnp__cl_buf_add(&b, "(", 1);
    for (size_t i = 0; i < n; i++) {
        int k = snprintf(num, sizeof(num), "%s%d", i ? ", " : "", ranks[i]);
        nnp__cl_buf_add(&b, num, (size_t)k);
    }
    /* Python writes a one-element tuple with a trailing comma: "(3,)". */
    nnp__cl_buf_add(&b, n == 1 ? ",)" : ")", n == 1 ? 3 : 2);
    if (b.err) {
        nnp__cl_buf_fini(&b);
        return NNP_ENOMEM;
    }
    *out = b.p;
    return NNP_OK;
}

void nnp__cl_cluster_data_fini(nnp_cl_data_t *d)
{
    for (size_t i = 0; i < d->n_group_keys; i++)
        nnp__free(d->group_keys[i]);
    nnp__free(d->group_keys);
    nnp__free(d->group_key_of);
    nnp__free(d->stage_of);
    nnp__free(d->vin.links);
    nnp__free(d->vin.mi_links);
    d->vin.mi_links = NULL;
    nnp__free(d->vin.wait.blamed);
    nnp__free(d->vin.wait.waited);
    if (d->vin.has_bw_parts)
        nnp__cl_spill_fini(&d->vin.bw_parts);
    d->group_keys = NULL;
    d->n_group_keys = 0;
    d->group_key_of = NULL;
    d->stage_of = NULL;
    d->vin.links = NULL;
}
