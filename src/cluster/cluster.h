/* cluster.h - what the files of the cluster analysis share (issue 14, docs/CLUSTER.md).
 * The cluster analysis sits above the single-rank analyses: it finds the ranks of a cluster
 * folder (cl_inputs.c), reads each rank once - through the importers and the step trace and
 * overlap of src/analyse/, or from MindSpore's and msprof-analyze's own files - and keeps only
 * a fixed-size summary per rank (nnp_cl_rank_t) plus records spilled to a temporary file per
 * rank (steps, communication ops, links, advisor findings, timeline fragments: cl_spill.c).
 * The writers (cl_steps.c, cl_comm.c, cl_matrix.c, cl_verdicts.c, cl_timeline.c) stream the
 * outputs from the summaries and the spilled records, so memory does not grow with the number
 * of steps or ranks beyond one summary per rank. cl_driver.c runs it all, on threads and, under
 * mpirun, across processes (cl_dist.h); the output never depends on how the work was split:
 * every sum is an integer (ns, bytes) and every order comes from the data, not from ids. */
#ifndef NNP_CLUSTER_H
#define NNP_CLUSTER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyse/driver.h"
#include "nnprof/nnprof.h"
#include "util/util.h"

#include <sqlite3.h>

/* ---- limits ---- */
/* Ranks one cluster analysis takes: the analyse driver's input cap. */
#define NNP_CL_MAX_RANKS NNP_MAX_INPUTS
/* Text kept per rank: host name, data format, and the path shown in messages. */
#define NNP_CL_HOST_MAX   64
#define NNP_CL_FORMAT_MAX 32
#define NNP_CL_SHOW_MAX   256
/* Communication groups one rank takes part in that are remembered (tp, dp, pp, ep, ... and
 * point-to-point pairs of a pipeline stay far below); more are counted and logged. */
#define NNP_CL_RANK_GROUPS 64
/* Parallel mode text ("pipeline-parallel"). */
#define NNP_CL_MODE_MAX 24
/* A process group's key: the decimal text of a 64-bit hash. */
#define NNP_CL_PG_KEY 24
/* Advisor finding texts kept per rank and finding. */
#define NNP_CL_ADV_TEXT 320
/* "No step": communication of a run without steps goes under msprof-analyze's "step". */
#define NNP_CL_NO_STEP UINT64_MAX
/* "No index": the op name is used as the data gives it (already unique per step). */
#define NNP_CL_NO_INDEX UINT32_MAX

/* ---- per-step values of one rank (ns), spilled as nnp_cl_step_rec_t ----
 * msprof-analyze's step_trace_time columns, then MindInsight's step phases, then the
 * columns of MindSpore 1.x ascend_cluster_analyse files when the data has them. */
#define NNP_CL_STEP_COLS(XX)                                                                       \
    XX(COMPUTING)                                                                                  \
    XX(COMM_NOT_OVERLAPPED)                                                                        \
    XX(OVERLAPPED)                                                                                 \
    XX(COMMUNICATION)                                                                              \
    XX(FREE)                                                                                       \
    XX(STAGE)                                                                                      \
    XX(BUBBLE)                                                                                     \
    XX(COMM_NO_EXCL_RECV)                                                                          \
    XX(PREPARING)                                                                                  \
    XX(ITER_INTERVAL)                                                                              \
    XX(FP_AND_BP)                                                                                  \
    XX(TAIL)                                                                                       \
    XX(TOTAL)                                                                                      \
    XX(MS_COMPUTATION)                                                                             \
    XX(MS_COMM_ALONE)                                                                              \
    XX(MS_STAGE)                                                                                   \
    XX(MS_RECEIVE_ALONE)                                                                           \
    XX(MS_COLLECTIVE_ALONE)

typedef enum nnp_cl_col {
#define NNP_CL_COL_ENUM_(name) NNP_CL_##name,
    NNP_CL_STEP_COLS(NNP_CL_COL_ENUM_)
#undef NNP_CL_COL_ENUM_
        NNP_CL_STEP_NV
} nnp_cl_col_t;

/* Bit of a column in a known mask. */
#define NNP_CL_BIT(col) (1u << (col))
/* The msprof-analyze columns (every rank has them once its steps are known). */
#define NNP_CL_MPA_MASK ((1u << NNP_CL_ITER_INTERVAL) - 1u)
/* The MindInsight phases. */
#define NNP_CL_MI_MASK                                                                             \
    (NNP_CL_BIT(NNP_CL_ITER_INTERVAL) | NNP_CL_BIT(NNP_CL_FP_AND_BP) | NNP_CL_BIT(NNP_CL_TAIL) |   \
     NNP_CL_BIT(NNP_CL_TOTAL))
/* The ascend_cluster_analyse columns. */
#define NNP_CL_MS_MASK                                                                             \
    (NNP_CL_BIT(NNP_CL_MS_COMPUTATION) | NNP_CL_BIT(NNP_CL_MS_COMM_ALONE) |                        \
     NNP_CL_BIT(NNP_CL_MS_STAGE) | NNP_CL_BIT(NNP_CL_MS_RECEIVE_ALONE) |                           \
     NNP_CL_BIT(NNP_CL_MS_COLLECTIVE_ALONE))

typedef struct nnp_cl_step_rec {
    int32_t rank;
    uint32_t known; /* NNP_CL_BIT mask of the values the data gave */
    uint64_t step_id;
    int64_t v[NNP_CL_STEP_NV];
} nnp_cl_step_rec_t;

/* ---- communication records ----
 * One op of one rank in one step (msprof's "Communication Time Info" and "Communication
 * Bandwidth Info"), followed by n_bw bandwidth entries and n_dist size-distribution
 * entries. Times are ns, sizes bytes: sums of any order are exact. */
#define NNP_CL_COMM_P2P        0x01u /* point-to-point (send/receive) */
#define NNP_CL_COMM_GIVEN      0x02u /* transit/wait/sync/idle given by the data */
#define NNP_CL_COMM_HAS_WAIT   0x04u /* wait measured on this rank (MPI receive, ...) */
#define NNP_CL_COMM_HAS_START  0x08u /* start_ns is known */
#define NNP_CL_COMM_COLLECTIVE 0x10u /* a collective whose wait is derived from the group */
#define NNP_CL_COMM_NO_SYNC    0x20u /* the data has no synchronisation time (sync_ns unknown) */
/* Largest size-distribution list kept per op (a record stays far below a cursor buffer). */
#define NNP_CL_MAX_DIST 128
/* Bandwidth entries (transport types) per op. */
#define NNP_CL_MAX_BW 8

typedef struct nnp_cl_comm_rec {
    uint32_t len; /* bytes of the record with its entries */
    int32_t rank;
    uint64_t step_id;
    uint32_t group, op; /* string ids (cl_strtab.c) */
    uint32_t op_index;  /* NNP_CL_NO_INDEX: op is the name to show */
    uint32_t flags;     /* NNP_CL_COMM_* */
    uint32_t n_bw, n_dist;
    uint32_t group_key, op_order; /* sort keys, set before merging (cl_comm.c) */
    int64_t start_ns;             /* aligned to the reference rank's clock */
    int64_t elapse_ns, transit_ns, wait_ns, sync_ns, idle_ns;
} nnp_cl_comm_rec_t;

#define NNP_CL_BW_HAS_RATIO 0x1u /* large_ratio given by the data (packets unknown) */
typedef struct nnp_cl_bw {
    uint32_t type; /* string id: "RDMA", "HCCS", "SDMA", "SHM", "NET", ... */
    uint32_t flags;
    uint64_t packets, large_packets;
    uint64_t bytes;
    int64_t time_ns;
    double large_ratio; /* with NNP_CL_BW_HAS_RATIO */
} nnp_cl_bw_t;

typedef struct nnp_cl_pkt {
    uint32_t bw_index; /* the entry of the bandwidth list this size belongs to */
    uint32_t pad;
    uint64_t count;
    uint64_t size_bytes;
    int64_t time_ns;
} nnp_cl_pkt_t;

/* ---- links (the communication matrix) ---- */
#define NNP_CL_LINK_LOCAL  0x1u /* src/dst are ranks inside the group (HCCL), mapped later */
#define NNP_CL_LINK_MI_AVG 0x2u /* hccl_raw's average row: MindInsight's slow-link input */
typedef struct nnp_cl_link_rec {
    int32_t rank; /* the rank that reported it */
    int32_t src, dst;
    uint32_t group, op, op_index, type, flags;
    uint64_t step_id;
    uint64_t bytes;
    int64_t time_ns;
    double bw_given; /* the bandwidth the data states (MindSpore's KB/s), NAN otherwise */
    uint32_t group_key, op_order;
    uint32_t op_label; /* the "Op Name" the entry states (MindSpore's aggregates), 0: op */
} nnp_cl_link_rec_t;

/* What names one op instance in the communication files: group key (the member tuple),
 * step, op (its place among the sorted strings), index, group name. */
typedef struct nnp_cl_inst_key {
    uint32_t group_key;
    uint64_t step_id;
    uint32_t op_order, op_index, group;
} nnp_cl_inst_key_t;
#define NNP_CL_INST_KEY(r)                                                                         \
    ((nnp_cl_inst_key_t){(r)->group_key, (r)->step_id, (r)->op_order, (r)->op_index, (r)->group})
struct nnp_cl_strtab;
/* Orders instance keys; group names by their collation (never by id). */
int nnp__cl_cmp_inst_key(const struct nnp_cl_strtab *s, nnp_cl_inst_key_t x, nnp_cl_inst_key_t y);

/* ---- a single-rank advisor finding ---- */
typedef struct nnp_cl_adv_rec {
    int32_t rank;
    uint32_t id, title; /* string ids */
    uint32_t severity;  /* 0 warning, 1 info (advisor.c) */
    char evidence[NNP_CL_ADV_TEXT];
    char suggestion[2 * NNP_CL_ADV_TEXT];
} nnp_cl_adv_rec_t;

/* ---- per-rank summary: fixed size (it crosses processes as bytes) ---- */
#define NNP_CL_RANK_CLOCK   0x01u /* clock_offset_ns measured (info.json clock_sync) */
#define NNP_CL_RANK_FLOPS   0x02u /* flops / flops_per_s known */
#define NNP_CL_RANK_MI_AVG  0x04u /* mi_avg_ns given by the data (the '-' row) */
#define NNP_CL_RANK_MS_AVG  0x08u /* ms_avg_ns given by the data (last row) */
#define NNP_CL_RANK_FAILED  0x10u /* the rank could not be read (error logged) */
#define NNP_CL_RANK_STAGE   0x20u /* stage_id known from the data */
#define NNP_CL_RANK_HAS_DEV 0x40u /* device_id known */

typedef struct nnp_cl_group_use {
    uint32_t name; /* string id */
    uint32_t is_p2p;
} nnp_cl_group_use_t;

typedef struct nnp_cl_rank {
    int32_t rank, device_id;
    int32_t rank_size; /* what the data says, 0 when it says nothing */
    int32_t stage_id;  /* pipeline stage (1-based, MindSpore's), with NNP_CL_RANK_STAGE */
    uint32_t flags;    /* NNP_CL_RANK_* */
    uint32_t n_steps;  /* step records spilled */
    char host[NNP_CL_HOST_MAX];
    char format[NNP_CL_FORMAT_MAX]; /* "nnprof-raw", "cann-msprof", "mindspore-1.x", ... */
    char show[NNP_CL_SHOW_MAX];     /* the input, for messages */
    char parallel_mode[NNP_CL_MODE_MAX];
    int32_t stage_num; /* MindSpore's, 0 unknown */
    int64_t clock_offset_ns, clock_uncertainty_ns;
    int64_t tot_ns[NNP_CL_STEP_NV]; /* sums over the steps */
    uint32_t tot_known;             /* values every step had */
    int64_t mi_avg_ns[4];           /* iteration interval, fp+bp, tail, total: '-' row */
    int64_t ms_avg_ns[5];           /* ascend_cluster_analyse average row */
    double flops, flops_per_s;      /* MindSpore flops_summary: FLOPs, FLOPS */
    uint64_t n_comm_ops, n_links, n_findings;
    int64_t comm_elapse_ns, comm_wait_ns; /* over its communication ops (wait: measured) */
    uint32_t n_groups, n_groups_dropped;
    nnp_cl_group_use_t groups[NNP_CL_RANK_GROUPS];
} nnp_cl_rank_t;

/* ---- the string table shared by the threads of one process (cl_strtab.c) ---- */
typedef struct nnp_cl_strtab {
    pthread_mutex_t mu;
    char **s; /* ids 1..n; 0 is "" */
    uint32_t *len;
    size_t n, cap;
    uint32_t *index; /* open addressing: id per slot, 0 empty */
    size_t index_cap;
    uint32_t *order; /* after nnp__cl_strtab_collate: sort position of each id */
} nnp_cl_strtab_t;

int nnp__cl_strtab_init(nnp_cl_strtab_t *t);
void nnp__cl_strtab_fini(nnp_cl_strtab_t *t);
/* Thread-safe: the id of s (interned when new); 0 for "" and, with an error, on OOM. */
uint32_t nnp__cl_intern(nnp_cl_strtab_t *t, const char *s, size_t len);
uint32_t nnp__cl_intern_cstr(nnp_cl_strtab_t *t, const char *s);
/* The string of id ("" for 0). Not thread-safe against interning (call after the workers). */
const char *nnp__cl_str(const nnp_cl_strtab_t *t, uint32_t id);
/* Computes order[]: ids ranked by their strings, numbers inside compared as numbers
 * ("op_2" < "op_10"), so orders never depend on which thread interned first. */
int nnp__cl_strtab_collate(nnp_cl_strtab_t *t);
/* strcmp with digit runs compared as numbers. */
int nnp__cl_natcmp(const char *a, const char *b);

/* ---- a growable byte buffer with a hard cap (a rank's run before it is spilled) ---- */
#define NNP_CL_BUF_MAX ((size_t)1 << 32)
typedef struct nnp_cl_buf {
    char *p;
    size_t len, cap;
    int err;
} nnp_cl_buf_t;
void nnp__cl_buf_add(nnp_cl_buf_t *b, const void *data, size_t n);
void nnp__cl_buf_fini(nnp_cl_buf_t *b);

/* ---- spill files: one temporary file per record kind, one run of records per rank ---- */
typedef struct nnp_cl_run {
    int32_t rank;
    uint32_t pad;
    uint64_t off, len;
} nnp_cl_run_t;

typedef struct nnp_cl_spill {
    int fd;
    pthread_mutex_t mu;
    uint64_t end;
    nnp_cl_run_t *runs;
    size_t n_runs, cap;
} nnp_cl_spill_t;

/* Creates an empty spill in dir (a file unlinked at once: nothing is left behind). */
int nnp__cl_spill_init(nnp_cl_spill_t *s, const char *dir);
void nnp__cl_spill_fini(nnp_cl_spill_t *s);
/* Thread-safe: appends one rank's run (n bytes, maybe 0). */
int nnp__cl_spill_add(nnp_cl_spill_t *s, int32_t rank, const void *data, size_t n);
/* Sorts the runs by rank (runs arrive in the order threads finish). */
void nnp__cl_spill_sort_runs(nnp_cl_spill_t *s);
/* Reads n bytes at off. */
int nnp__cl_spill_read(const nnp_cl_spill_t *s, uint64_t off, void *buf, size_t n);
/* The run of rank, NULL when it has none. Runs must be sorted. */
const nnp_cl_run_t *nnp__cl_spill_find(const nnp_cl_spill_t *s, int32_t rank);

/* Variable-length records start with their length (uint32); fixed ones have rec_size. */
typedef int (*nnp_cl_cmp_fn)(const void *a, const void *b, void *ctx);
/* Rewrites every run of src sorted by cmp into dst (empty, same dir). fix, when not NULL,
 * is called on each record first (to set sort keys). rec_size 0: variable-length. */
int nnp__cl_spill_resort(const nnp_cl_spill_t *src, nnp_cl_spill_t *dst, size_t rec_size,
                         void (*fix)(void *rec, void *ctx), nnp_cl_cmp_fn cmp, void *ctx);

/* Sorts n bytes of records (buf is left as is) and appends them as one run. */
int nnp__cl_spill_add_sorted(nnp_cl_spill_t *s, int32_t rank, char *buf, size_t n, size_t rec_size,
                             nnp_cl_cmp_fn cmp, void *ctx);

/* Merges all runs of a spill in cmp order, a bounded number of runs at a time (more runs
 * are merged in rounds into temporary spills), handing each record to the caller. */
typedef struct nnp_cl_merge nnp_cl_merge_t;
int nnp__cl_merge_open(const nnp_cl_spill_t *s, size_t rec_size, nnp_cl_cmp_fn cmp, void *ctx,
                       const char *tmp_dir, nnp_cl_merge_t **out);
/* The next record (valid until the next call), NULL at the end or on error (see rc). */
const void *nnp__cl_merge_next(nnp_cl_merge_t *m, int *rc);
/* A writer's reading side: sorted made (in src's dir) from src re-sorted by cmp (fix as in
 * nnp__cl_spill_resort), and its merge opened into *m. On error both are released. */
int nnp__cl_sort_open(const nnp_cl_spill_t *src, nnp_cl_spill_t *sorted, size_t rec_size,
                      void (*fix)(void *rec, void *ctx), nnp_cl_cmp_fn cmp, void *ctx,
                      const char *tmp_dir, nnp_cl_merge_t **m);
void nnp__cl_merge_close(nnp_cl_merge_t *m);

/* Batches of a merge: the records it hands out one at a time, gathered while same() says
 * they belong with the batch's first record (same returns 0; it must agree with the merge's
 * order, so that a batch is a run of neighbours: one op instance, one step of a group). A
 * batch's records are copied, back to back, into a buffer the batch owns; they stay valid
 * until the next nnp__cl_batch_next. The merge stays the caller's. */
typedef struct nnp_cl_batch {
    nnp_cl_merge_t *m;
    size_t rec_size; /* as the merge's: 0 for variable-length records */
    nnp_cl_cmp_fn same;
    void *ctx;
    nnp_cl_buf_t recs; /* the batch's records, then the next batch's first one */
    nnp_cl_buf_t offs; /* size_t offsets in recs of the batch's records */
    size_t n;          /* records in the batch; 0 at the end of the merge */
    size_t used;       /* bytes of recs the batch's records take */
    bool done;         /* the merge has handed out its last record */
} nnp_cl_batch_t;
void nnp__cl_batch_init(nnp_cl_batch_t *b, nnp_cl_merge_t *m, size_t rec_size, nnp_cl_cmp_fn same,
                        void *ctx);
/* Reads the next batch into b (b->n records, 0 when the merge is over). */
int nnp__cl_batch_next(nnp_cl_batch_t *b);
/* Record i (< b->n) of the batch. */
void *nnp__cl_batch_rec(const nnp_cl_batch_t *b, size_t i);
void nnp__cl_batch_fini(nnp_cl_batch_t *b);

/* Reads a run's records one at a time (a cursor over one run). */
typedef struct nnp_cl_cursor {
    const nnp_cl_spill_t *s;
    uint64_t pos, end;
    size_t rec_size;
    char *buf;
    size_t buf_len, buf_pos, cap;
} nnp_cl_cursor_t;
int nnp__cl_cursor_open(nnp_cl_cursor_t *c, const nnp_cl_spill_t *s, const nnp_cl_run_t *run,
                        size_t rec_size);
/* The next record, NULL at the end (rc NNP_OK) or on error. */
const void *nnp__cl_cursor_next(nnp_cl_cursor_t *c, int *rc);
void nnp__cl_cursor_close(nnp_cl_cursor_t *c);

/* ---- the inputs of a cluster (cl_inputs.c) ---- */
typedef enum nnp_cl_in_kind {
    NNP_CL_IN_MODEL,      /* an input of nnp_inputs_t: our raw data or an importer's */
    NNP_CL_IN_MINDSPORE,  /* MindSpore per-rank files (step_trace_raw_{r}, hccl_raw_{r}, ...) */
    NNP_CL_IN_TORCH_NPU,  /* a torch_npu *_ascend_pt rank folder with its own analysis */
    NNP_CL_IN_MPA_OUTPUT, /* msprof-analyze's cluster_analysis_output (every rank) */
} nnp_cl_in_kind_t;

struct nnp_importer;

typedef struct nnp_cl_input {
    nnp_cl_in_kind_t kind;
    int rank; /* -1: only reading it tells (CANN data without info.json) */
    int device_id;
    int host_id; /* MindInsight collected layout: the cluster_profiler/<id>; 0 none */
    char host[NNP_CL_HOST_MAX];
    char *path; /* the input (owned: one rank's path, not a PATH_MAX array per rank) */
    /* NNP_CL_IN_MODEL: our raw directory (importer NULL) with its child processes' raw
     * directories, or other tools' data read by importer. */
    const struct nnp_importer *importer;
    char **children; /* owned */
    int n_children;
} nnp_cl_input_t;

typedef struct nnp_cl_inputs {
    nnp_cl_input_t *v;
    int n, cap;
    int rank_size;             /* what the data says the cluster has, 0 unknown */
    char layout[NNP_NAME_MAX]; /* how DIR was read, for the report */
    char data_dir[NNP_PATH_MAX];
    /* Pipeline layout (MindSpore files): stage_num ranks per stage block. */
    char parallel_mode[NNP_CL_MODE_MAX];
    int stage_num;
} nnp_cl_inputs_t;

/* Finds every rank under dir, whatever the layout (docs/CLUSTER.md "Inputs"). Errors: an
 * unreadable dir, no data, two inputs of one rank (naming the rank and both). */
int nnp__cl_inputs_find(const char *dir, nnp_cl_inputs_t *in);
void nnp__cl_inputs_fini(nnp_cl_inputs_t *in);
/* A JSON file read whole (at most max bytes); NULL when it cannot be read (no error left
 * set) or is not JSON (logged when warn). */
struct cJSON;
struct cJSON *nnp__cl_read_json(const char *path, size_t max, bool warn);
/* A digest of the inputs (MPI processes check they all found the same). */
uint64_t nnp__cl_inputs_digest(const nnp_cl_inputs_t *in);

/* ---- what reading one rank produces (cl_rank.c, cl_mindspore.c, cl_torch_npu.c) ---- */
typedef struct nnp_cl_opts nnp_cl_opts_t;

typedef struct nnp_cl_sink {
    nnp_cl_strtab_t *strs;
    nnp_cl_buf_t steps, comms, links, advice, timeline;
    nnp_cl_rank_t *sum;
    const nnp_cl_opts_t *o;
    const nnp_cl_inputs_t *in;
    const char *scratch; /* a private empty folder for per-rank files (timeline, advisor) */
} nnp_cl_sink_t;

/* Adds a step row to the sink and the rank's totals. */
void nnp__cl_add_step(nnp_cl_sink_t *k, const nnp_cl_step_rec_t *r);
/* Adds a communication record with its entries (bw/dist may be NULL when 0). */
void nnp__cl_add_comm(nnp_cl_sink_t *k, const nnp_cl_comm_rec_t *r, const nnp_cl_bw_t *bw,
                      const nnp_cl_pkt_t *dist);
void nnp__cl_add_link(nnp_cl_sink_t *k, const nnp_cl_link_rec_t *r);
/* Notes that the rank used group (for communication_group.json and the group keys). */
void nnp__cl_note_group(nnp_cl_sink_t *k, uint32_t group, bool is_p2p);
/* True when a name is a point-to-point op (send/receive in any spelling). */
bool nnp__cl_is_p2p_name(const char *name);

/* Reads input i of in into the sink (its summary is zeroed first). */
int nnp__cl_read_model_rank(nnp_cl_sink_t *k, const nnp_cl_input_t *x);
int nnp__cl_read_mindspore_rank(nnp_cl_sink_t *k, const nnp_cl_input_t *x);
int nnp__cl_read_torch_npu_rank(nnp_cl_sink_t *k, const nnp_cl_input_t *x);
/* Reads one rank through the trace model with an importer (torch_npu data without its own
 * step_trace_time.csv). */
int nnp__cl_read_model_with(nnp_cl_sink_t *k, const nnp_cl_input_t *x, const void *importer);
/* msprof-analyze's outputs hold every rank: sink_for gives the sink of a rank (its summary
 * zeroed and rank set on first use). */
typedef nnp_cl_sink_t *(*nnp_cl_sink_for_fn)(void *ctx, int rank);
int nnp__cl_read_mpa_output(const nnp_cl_input_t *x, nnp_cl_sink_for_fn sink_for, void *ctx);
/* One op object of communication.json / cluster_communication.json ("Communication Time
 * Info", "Communication Bandwidth Info") into a record of rank (cl_torch_npu.c). is_p2p:
 * 1 / 0 when the file says (its p2p / collective level), -1 from the name. */
int nnp__cl_comm_from_json(nnp_cl_sink_t *k, const char *step_key, const char *op_key,
                           const struct cJSON *op, int is_p2p);
/* torch_npu's profiler_metadata.json "parallel_group_info": each process group's global
 * ranks (sorted), keyed as the op keys name groups: msprof-analyze's double_hash of the
 * group's name. */
typedef struct nnp_cl_pg {
    char key[NNP_CL_PG_KEY];
    int *ranks;
    size_t n;
} nnp_cl_pg_t;
typedef struct nnp_cl_pg_map {
    nnp_cl_pg_t *v;
    size_t n;
} nnp_cl_pg_map_t;
/* One op object of communication_matrix.json ("src-dst": {...}) into links. local: NULL
 * when the link keys are global ranks (msprof-analyze's outputs), else they are ranks
 * within the group: mapped here through local's groups, or later through the ranks' links
 * to themselves (cl_matrix.c). */
int nnp__cl_links_from_json(nnp_cl_sink_t *k, const char *step_key, const char *op_key,
                            const struct cJSON *op, const nnp_cl_pg_map_t *local);
/* msprof-analyze's double_hash of a process group's name, as decimal text. */
void nnp__cl_double_hash(const char *name, char *out, size_t cap);
/* msprof-analyze's step columns of a CSV (torch_npu's step_trace_time.csv, its own
 * cluster_step_trace_time.csv): the header's column numbers (-1 when absent). */
#define NNP_CL_MPA_COLS 9
typedef struct nnp_cl_mpa_cols {
    long step;
    long v[NNP_CL_MPA_COLS];
} nnp_cl_mpa_cols_t;
struct nnp_csv_reader;
/* False when Computing, Communication(Not Overlapped) or Free is missing. */
_Static_assert(NNP_CL_MPA_COLS == NNP_CL_ITER_INTERVAL, "msprof-analyze's columns come first");
bool nnp__cl_mpa_header(const struct nnp_csv_reader *c, nnp_cl_mpa_cols_t *cols);
/* The row's step and values (us) into r; false (logged with path and line) when a value is
 * not a number. */
bool nnp__cl_mpa_row(const struct nnp_csv_reader *c, const nnp_cl_mpa_cols_t *cols,
                     const char *path, nnp_cl_step_rec_t *r);
/* "step12" -> 12, "step" or anything else -> NNP_CL_NO_STEP. */
uint64_t nnp__cl_step_of_key(const char *key);

/* ---- what the writers gather for the verdicts (cl_verdicts.c) ---- */
/* One link over the whole run (all steps and ops), for the slow-link rules. */
typedef struct nnp_cl_link_total {
    int32_t src, dst;
    uint32_t type; /* string id */
    uint32_t used; /* slot taken */
    uint64_t bytes, packets, large_packets;
    int64_t time_ns;
} nnp_cl_link_total_t;

/* msprof's wait-ratio rule, over the collective op instances (cl_comm.c). */
typedef struct nnp_cl_wait_stats {
    uint64_t instances; /* collective instances seen on >= 2 ranks */
    uint64_t waiting;   /* max wait ratio above the threshold */
    uint64_t slow_rank; /* ... and that rank's synchronisation ratio too */
    uint64_t slow_link; /* ... but not: inconsistent bandwidths */
    uint64_t no_sync;   /* waiting, but the data has no synchronisation time to tell why */
    uint32_t *blamed;   /* per rank index: instances it made the others wait */
    uint32_t *waited;   /* per rank index: instances it was the most-waiting rank */
    /* the instance with the highest max wait ratio among the slow-rank ones */
    double worst_wait_ratio, worst_sync_ratio, worst_min_ratio;
    int32_t worst_waiting, worst_blamed;
    uint64_t worst_step;
    char worst_op[NNP_NAME_MAX];
} nnp_cl_wait_stats_t;

typedef struct nnp_cl_vin {
    nnp_cl_link_total_t *links; /* open addressing on (src, dst, type) */
    size_t links_cap, n_links;
    nnp_cl_wait_stats_t wait;
    /* msprof-analyze SlowLinkAnalyzer: bandwidth of each (step, rank) per type, in GB/s,
     * as avg/max/min over the (step, rank) entries, RDMA and SDMA as it does */
    struct {
        uint32_t type; /* string id, 0 unused */
        uint64_t n;
        double sum, max, min;
        int32_t max_rank, min_rank;
        uint64_t max_step, min_step;
    } mpa_bw[NNP_CL_MAX_BW];
    nnp_cl_spill_t bw_parts; /* (step, rank, type) partial sums, merged by the verdicts */
    bool has_bw_parts;
    /* MindInsight's slow-link input: the average rows' links of hccl_raw files */
    nnp_cl_link_rec_t *mi_links;
    size_t n_mi_links, cap_mi_links;
    uint64_t links_unmapped; /* group-local links no rank could be found for */
} nnp_cl_vin_t;

/* ---- options and outputs ---- */
#define NNP_CL_TIMELINE_FILE "cluster_timeline.json"

struct nnp_cl_opts {
    char out_dir[NNP_PATH_MAX];
    int threads; /* 0: all cores */
    bool pretty;
    bool quiet;
    bool timeline;
    bool timeline_all;       /* every rank, else the list below */
    uint8_t *timeline_ranks; /* [NNP_CL_MAX_RANKS] selected ranks */
    int tp, pp, dp;          /* parallel layout given by the user, 0 unknown */
};

/* ---- cluster_analysis.db (cl_db.c): msprof-analyze's tables ---- */
typedef enum nnp_cl_table {
    NNP_CL_T_STEP_TRACE,
    NNP_CL_T_COMM_TIME,
    NNP_CL_T_COMM_BANDWIDTH,
    NNP_CL_T_COMM_MATRIX,
    NNP_CL_T_GROUPS,
    NNP_CL_T_BASE_INFO,
    NNP_CL_T_COUNT
} nnp_cl_table_t;

/* The merged cluster data the writers read (the driver fills it on process 0). */
typedef struct nnp_cl_data {
    const nnp_cl_opts_t *o;
    const nnp_cl_inputs_t *in;
    nnp_cl_strtab_t *strs;
    nnp_cl_rank_t *ranks; /* sorted by rank */
    int n_ranks;
    nnp_cl_spill_t steps, comms, links, advice, timeline;
    const char *tmp_dir;
    int *missing; /* ranks the data says exist but no input has */
    int n_missing;
    int *failed; /* ranks whose data could not be read */
    int n_failed;
    int expected_ranks;
    /* stages: rank -> stage index (0-based), and the stage count (cl_steps.c) */
    int *stage_of;
    int n_stages;
    bool stages_from_pipeline; /* MindSpore's layout or pipeline links, not "all ranks" */
    int tp, pp, dp;            /* the parallel layout when known (DP/PP/TP Index columns) */
    /* group keys (cl_comm.c): one per distinct member tuple */
    char **group_keys; /* "(0, 1)" */
    size_t n_group_keys;
    uint32_t *group_key_of; /* per string id x2 (collective, p2p): index in group_keys+1 */
    size_t group_key_of_cap;
    /* what the writers gather for the verdicts (cl_verdicts.c reads it) */
    nnp_cl_vin_t vin;
    sqlite3 *db; /* cluster_analysis.db while it is written (cl_db.c) */
    sqlite3_stmt *db_insert[NNP_CL_T_COUNT];
    char db_tmp[NNP_PATH_MAX], db_final[NNP_PATH_MAX];
} nnp_cl_data_t;

/* Creates the database under a temporary name in out_dir with every table. */
int nnp__cl_db_open(nnp_cl_data_t *d, const char *out_dir);
/* Inserts one row: values as text (NULL = SQL NULL); numbers are stored as numbers when
 * the column is numeric (SQLite's affinity). n must be the table's column count. */
int nnp__cl_db_row(nnp_cl_data_t *d, nnp_cl_table_t t, const char *const *values, size_t n);
/* Commits and renames into place (ok), or removes it. */
int nnp__cl_db_close(nnp_cl_data_t *d, int rc);

/* ---- the writers, in the order the driver calls them ---- */
/* Stages, cluster_step_trace_time.csv, cluster_step_trace.json, ascend_cluster_analyse_*. */
int nnp__cl_write_steps(nnp_cl_data_t *d);
/* Group keys (member tuples), cluster_communication.json, communication_group.json. */
int nnp__cl_group_keys(nnp_cl_data_t *d);
/* The group key (index + 1 into group_keys) of a group name used p2p or not. */
uint32_t nnp__cl_group_key(const nnp_cl_data_t *d, uint32_t group, bool p2p);
/* The index of rank r in d->ranks (sorted by rank), -1 when absent. */
int nnp__cl_rank_index(const nnp_cl_data_t *d, int r);
int nnp__cl_write_comm(nnp_cl_data_t *d);
/* communication_group.json and its table (cl_groups.c); nnp__cl_write_comm calls it. */
int nnp__cl_write_groups(nnp_cl_data_t *d);
/* The {"(0, 1)": {"step1": {...}}} nesting both communication files share, written as the
 * sorted records go by: call nnp__cl_nest_leaves_step before a record (and at the end,
 * end = true) to close the step after its last op, then nnp__cl_nest_enter to open what the
 * record needs; step_s is the open step's key. */
typedef struct nnp_cl_nest {
    uint32_t key;
    uint64_t step;
    bool in_group, in_step;
    char step_s[32];
} nnp_cl_nest_t;
struct nnp_jw;
bool nnp__cl_nest_leaves_step(const nnp_cl_nest_t *n, bool end, uint32_t key, uint64_t step);
/* Closes the open step (its ops and totals written). */
void nnp__cl_nest_close_step(nnp_cl_nest_t *n, struct nnp_jw *w);
/* Closes the group the next record leaves (every group at the end), opens the record's. */
void nnp__cl_nest_enter(nnp_cl_nest_t *n, struct nnp_jw *w, const nnp_cl_data_t *d, bool end,
                        uint32_t key, uint64_t step);
/* cluster_communication_matrix.json. */
int nnp__cl_write_matrix(nnp_cl_data_t *d);
/* cluster_advice.json and cluster_advice.txt. */
int nnp__cl_write_advice(nnp_cl_data_t *d);
/* cluster_timeline.json from the spilled fragments. */
int nnp__cl_write_timeline(nnp_cl_data_t *d);
/* Turns one rank's trace_view.json into a fragment of the merged timeline. */
int nnp__cl_timeline_fragment(const char *trace_path, int rank, int64_t offset_ns,
                              nnp_cl_buf_t *out);
/* The "(0, 1, 2)" text of a sorted rank list (Python's tuple str, msprof-analyze's keys). */
int nnp__cl_tuple_text(const int *ranks, size_t n, char **out);
/* Output file helpers: opens name in the output folder / commits it. */
int nnp__cl_out_open(const nnp_cl_data_t *d, nnp_outfile_t *f, const char *name);
/* v / 10^digits (digits <= 18) as the shortest exact decimal text ("0.1", "12"): ns as ms
 * (6) or us (3), bytes as MB (6). It reads back as the double v / 10^digits. */
const char *nnp__cl_dec(char *buf, size_t cap, int64_t v, int digits);
/* Formats ns as us with exactly 3 decimals, ms with 6 (exact: integers). */
const char *nnp__cl_us(char *buf, size_t cap, int64_t ns);
const char *nnp__cl_ms(char *buf, size_t cap, int64_t ns);

#endif /* NNP_CLUSTER_H */
