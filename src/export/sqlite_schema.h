/* sqlite_schema.h - the SQLite export's schema (docs/SQLITE.md): one SQL table per model
 * table, described column by column (sqlite_schema.c), plus the fixed tables. Used by
 * sqlite.c, which creates and fills them. */
#ifndef NNP_SQLITE_SCHEMA_H
#define NNP_SQLITE_SCHEMA_H

#include <stddef.h>

/* How a model column is stored. Every time is an INTEGER of ns; "open" ends are NULL. */
typedef enum nnp_sql_col_kind {
    C_TS,     /* int64 ns, NNP_OPEN_END -> NULL */
    C_I64,    /* int64 */
    C_U64,    /* uint64, stored as a (two's complement) INTEGER */
    C_U32,    /* uint32 */
    C_I32,    /* int32 */
    C_U8,     /* uint8 */
    C_F64,    /* double -> REAL */
    C_F64I,   /* double holding an integer (bytes) -> INTEGER */
    C_STR,    /* model string id -> StringIds id, 0 -> NULL */
    C_THREAD, /* thread index -> OS tid */
    C_COMM,   /* nnp_comm_kind_t -> StringIds id of its name */
    C_CALL,   /* nnp_call_kind_t -> StringIds id of its name */
    C_CTAG,   /* comms.tag, NULL unless comms.has says it was recorded */
    C_CWAIT,  /* comms.wait_ns, NULL unless comms.has says it was recorded */
} nnp_sql_col_kind_t;

typedef struct nnp_sql_col {
    const char *name;
    nnp_sql_col_kind_t kind;
    size_t off; /* offset of the column pointer inside nnp_model_t */
} nnp_sql_col_t;

#define NNP_SQL_MAX_COLS 16
typedef struct nnp_sql_table {
    const char *name;
    size_t t_off;        /* offset of the nnp_table_t header inside nnp_model_t */
    const char *time_ix; /* column indexed after the load (with rank), NULL = none */
    nnp_sql_col_t cols[NNP_SQL_MAX_COLS];
} nnp_sql_table_t;

/* Number of model tables exported: a list in sqlite_schema.c of another length does not
 * compile (its definition would conflict with this declaration). */
#define NNP_SQLITE_N_TABLES 20

/* One entry per model table, in docs/SQLITE.md's order. */
extern const nnp_sql_table_t nnp__sqlite_tables[NNP_SQLITE_N_TABLES];
/* Tables that are not copies of a model table. */
extern const char *const nnp__sqlite_fixed_schema;

#endif /* NNP_SQLITE_SCHEMA_H */
