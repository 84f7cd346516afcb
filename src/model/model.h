/* model.h - the in-memory trace model every analysis reads: one table per record kind,
 * stored column by column (struct of arrays), with strings interned into the model's own
 * string table and every time in CLOCK_MONOTONIC nanoseconds. Importers (our raw format
 * today, msprof/MindSpore files later) fill it; analyses only read it. Nothing here knows
 * about the raw format. Tables are sorted by start time once the importer finishes
 * (nnp__model_finish), so analyses may rely on that order.
 *
 * Memory: an op row costs 52 bytes (68 with FLOPs columns, +13 with autograd links, each
 * allocated only when some op has them), well under the 64 B/event budget of issue #3 for
 * typical runs. */
#ifndef NNP_MODEL_H
#define NNP_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Hard cap of rows per table (curl dynbuf "toobig"): 2^31 keeps indexes in uint32. */
#define NNP_MODEL_MAX_ROWS (1u << 31)
/* "No value" for 32-bit string/index columns that are optional. */
#define NNP_NONE 0u
/* end_ns of a host range whose end was never recorded. */
#define NNP_OPEN_END INT64_MIN

/* A table is a row count, a capacity, and a list of column pointers the generic growth
 * code reallocates together. Each concrete table below starts with this header. */
#define NNP_TABLE_MAX_COLS 16
typedef struct nnp_table {
    size_t n, cap;
    size_t zeroed; /* rows n..zeroed-1 are zero-filled, ready to push */
    unsigned n_cols;
    void **cols[NNP_TABLE_MAX_COLS];
    size_t widths[NNP_TABLE_MAX_COLS];
    /* 0: the column is on the heap; else the size of the anonymous mapping it has to
     * itself (columns of 2 MiB and more, model.c), whose rows past n read zero. */
    size_t map_bytes[NNP_TABLE_MAX_COLS];
} nnp_table_t;

/* Threads seen in the run. Other tables refer to them by index (the "thread" column). */
typedef struct nnp_threads {
    nnp_table_t t;
    uint64_t *tid;  /* OS thread id */
    uint32_t *name; /* string id, 0 = unnamed */
    uint32_t *pid;
    uint32_t *parent_pid; /* 0 when unknown (MindSpore host_info has it) */
} nnp_threads_t;

/* Host-side framework operators (what the framework launched, on which host thread). */
typedef struct nnp_ops {
    nnp_table_t t;
    int64_t *start_ns, *end_ns;
    uint32_t *name; /* full scope name, e.g. "Gradients/Default/.../MatMul-op5" */
    uint32_t *type; /* op type, e.g. "MatMul" */
    uint32_t *graph_id, *stream_id;
    uint32_t *thread;                      /* index into threads */
    uint32_t *shapes, *dtypes;             /* strings, 0 = not recorded */
    uint64_t *corr;                        /* correlation id, 0 = none */
    uint64_t *flops_matrix, *flops_vector; /* NULL unless some op has FLOPs */
    /* Autograd links (nnp_op_t.sequence_nr), NULL unless some op has one: seq_kind is
     * NNP_SEQ_NONE, _FORWARD or _BACKWARD; seq_thread is the framework thread id of the
     * op (forward) or of its forward op (backward). */
    int64_t *seq_nr;
    uint32_t *seq_thread;
    uint8_t *seq_kind;
    /* The op's source stack (string, nnp_op_t.stack: frames innermost first, '\n' between
     * them), NULL unless some op has one; 0 = none. */
    uint32_t *stack;
} nnp_ops_t;

/* What a GPU back end knows of a kernel, copy or memory set beyond its name and time. */
#define NNP_KDETAIL_LAUNCH 0x1u /* grid, block, registers, shared memory are set */
#define NNP_KDETAIL_COPY   0x2u /* bytes, copy and memory kinds, devices (and value) are set */
typedef struct nnp_kernel_detail {
    uint64_t bytes; /* copies and memory sets */
    uint32_t grid[3], block[3];
    uint32_t registers, static_shared, dynamic_shared;
    uint32_t src_device, dst_device, value;
    uint8_t has;                /* NNP_KDETAIL_* */
    uint8_t copy_kind;          /* nnp_copy_kind_t */
    uint8_t src_kind, dst_kind; /* nnp_memory_kind_t */
} nnp_kernel_detail_t;
enum { NNP_SEQ_NONE = 0, NNP_SEQ_FORWARD = 1, NNP_SEQ_BACKWARD = 2 };

/* Device kernels / tasks (or CPU kernels measured per op). */
typedef struct nnp_kernels {
    nnp_table_t t;
    int64_t *start_ns, *end_ns;
    uint32_t *name, *type; /* kernel name; task type, e.g. "KERNEL", "AI_CORE", "MEMCPY" */
    uint32_t *device_id, *stream_id;
    uint64_t *corr;              /* the launching op's correlation id */
    nnp_kernel_detail_t *detail; /* NULL unless some kernel has launch or copy details */
    uint64_t *launch;            /* calls.launch of the host call that queued it, 0 = none */
    uint32_t *op_type;           /* the op type the tool gives the kernel itself (torch_npu
                                  * kernel_details "Type"), 0 = none */
    uint16_t *end_ps; /* NULL unless some kernel has it: picoseconds past end_ns (0..999),
                       * for tools whose durations keep sub-ns digits (torch_npu) */
} nnp_kernels_t;

/* Host API calls that queue device work or wait for it, on the thread that made them. One
 * table for every source: the CUDA back end (runtime and driver API calls, blocking
 * synchronizations: nnp_call_at), Kineto's "cuda_runtime" / "cuda_driver" events and
 * torch_npu's host-to-device task flows (HTA calls these runtime events). NVTX ranges,
 * which nnp_call_at also takes, become host rows instead. Columns a source does not give
 * stay zero: kind is then NNP_CALL_OTHER, domain and stream_id 0, status 0 (success).
 *
 * Two links, both 0 = none:
 *   launch  call -> its device work: kernels.launch == calls.launch for the kernels, copies
 *           and memory sets the call queued (Kineto's CUDA correlation id, the torch_npu
 *           flow id). One call per id: where a trace repeats an id, lookups take the
 *           first row (nnp__launch_index_build).
 *   corr    call -> op, as kernels.corr: the correlation id of the host op the call ran
 *           in (ops.corr; Kineto's "External id").
 * The CUDA back end's records carry both: in corr the op's id when CUPTI external
 * correlation named one, else the call's own CUPTI correlation id tagged with bit 63
 * (NNP_CU_CORR_TAG, no op has it), the same in its kernels' corr; in launch CUPTI's
 * correlation id itself, on the call and on the kernels, copies and memory sets it queued
 * (a synchronization: the id of the call that waited).
 * Raw files written before launch ids leave launch 0: their calls reach their device work
 * through corr alone. */
typedef struct nnp_calls {
    nnp_table_t t;
    int64_t *start_ns, *end_ns;
    uint32_t *name;      /* "cudaLaunchKernel", "cudaStreamSynchronize", "HostToDevice" */
    uint32_t *kind;      /* nnp_call_kind_t */
    uint32_t *domain;    /* string id, 0 = none */
    uint32_t *stream_id; /* synchronizations: the stream waited for, else 0 */
    uint32_t *thread;    /* index into threads */
    int32_t *status;     /* the call's return code, 0 = success or not recorded */
    uint64_t *launch;    /* link to kernels.launch (above) */
    uint64_t *corr;      /* link to ops.corr (above) */
} nnp_calls_t;

/* Per-op-type and per-op totals a tool wrote without a timeline (MindSpore's
 * aicore_intermediate and aicpu_intermediate files): what its operator page shows, and what
 * op statistics then lists. */
typedef struct nnp_op_totals {
    nnp_table_t t;
    uint32_t *name; /* full op name; 0 for a per-type row */
    uint32_t *type, *core;
    uint64_t *count;
    int64_t *total_ns;
    double *percent; /* the tool's own share (%), NAN when it gave none */
} nnp_op_totals_t;

/* Communication cost per step as MindSpore's hccl_raw_{rank}.csv gives it (formats.md 1.10,
 * 2.7): per step, for the step (op 0) and for each communication op, the cost and wait in
 * ms, and per link ("src-dst", SDMA/RDMA) its time (ms), size (KB) and bandwidth (KB/s),
 * plus wait (ms) for RDMA. Rows keep their file order (JSON key order); values are doubles
 * because MindSpore's are, and its averages row is recomputed from them (hccl_raw.c). */
typedef struct nnp_comm_costs {
    nnp_table_t t;
    uint64_t *step;
    uint32_t *op; /* op name, 0 = the step's own row */
    double *cost_ms, *wait_ms;
} nnp_comm_costs_t;

typedef struct nnp_comm_links {
    nnp_table_t t;
    uint64_t *step;
    uint32_t *op;        /* 0 = the step's own row */
    uint32_t *link;      /* "src-dst" */
    uint32_t *transport; /* "SDMA", "RDMA" */
    double *time_ms, *size_kb, *bandwidth;
    double *wait_ms; /* NAN when the link has no wait figure (SDMA) */
} nnp_comm_links_t;

/* Host ranges and instants as recorded rows, in the semantics of MindSpore's host_info
 * CSV (one row per begin, end or instant), so host_info analysis can follow the seed
 * exactly. kind: NNP_HOST_ROW_* (the CSV's start_end column: 0 begin, 1 end, 2 instant).
 * The final sort is stable, so rows of one thread keep their recorded order whenever that
 * thread's timestamps do not go backwards (true of MindSpore's files and of our recorder). */
enum { NNP_HOST_ROW_BEGIN = 0, NNP_HOST_ROW_END = 1, NNP_HOST_ROW_INSTANT = 2 };
typedef struct nnp_host_rows {
    nnp_table_t t;
    int64_t *ts_ns;
    uint8_t *kind;
    uint8_t *level; /* 0 framework developer, 1 user */
    uint32_t *module, *event, *stage, *custom_info;
    uint32_t *thread;
    uint64_t *memory_bytes; /* host memory in use at this row, 0 = not recorded */
    uint32_t *seq;          /* 1-based insertion order (a CSV's row order), 0 = none: the final
                             * sort by time would reorder rows of different threads in a file
                             * not in time order, and host_info follows the file order */
} nnp_host_rows_t;

/* Steps and epochs, from matched begin/end records. end_ns may be NNP_OPEN_END. */
typedef struct nnp_spans {
    nnp_table_t t;
    uint64_t *id;
    uint32_t *graph_id; /* steps: graph/model id; epochs: 0 */
    int64_t *start_ns, *end_ns;
    uint32_t *thread; /* index into threads + 1 of the thread that began the step (our
                       * step records; PyTorch traces' "ProfilerStep#N" ranges); 0 when not
                       * known (other tools' steps, epochs) */
} nnp_spans_t;

/* Point marks: fp_start / bp_end per step. */
typedef struct nnp_marks {
    nnp_table_t t;
    uint64_t *step_id;
    int64_t *ts_ns;
} nnp_marks_t;

/* Communication ops. kind is nnp_comm_kind_t. The detail columns are zero when not
 * recorded: count 0 and datatype 0 unknown; tag and wait_ns are valid only where their
 * NNP_COMM_HAS_* bit is set in has (a zero-filled row from any importer has none). */
#define NNP_COMM_HAS_TAG  0x1u
#define NNP_COMM_HAS_WAIT 0x2u
typedef struct nnp_comms {
    nnp_table_t t;
    int64_t *start_ns, *end_ns;
    uint32_t *name, *kind, *group, *stream_id, *thread;
    int32_t *peer;
    uint64_t *bytes;
    uint64_t *count;    /* elements, 0 = unknown */
    uint32_t *datatype; /* string id, 0 = unknown */
    int32_t *tag;       /* when has & NNP_COMM_HAS_TAG */
    uint64_t *wait_ns;  /* when has & NNP_COMM_HAS_WAIT */
    uint8_t *has;
    uint16_t *end_ps; /* as kernels.end_ps */
    uint64_t *launch; /* a device kernel's: calls.launch of the call that queued it, 0 none */
} nnp_comms_t;

/* Communicator groups: name (as comms.group) and member global ranks as text ("0-3,8",
 * docs/FORMAT.md), one row per distinct (name, members) pair. */
typedef struct nnp_comm_groups {
    nnp_table_t t;
    uint32_t *name, *members; /* string ids */
    uint32_t *size;           /* number of members */
    int32_t *my_index;        /* this rank's place in the group, -1 unknown */
} nnp_comm_groups_t;

/* Tensor memory events (is_alloc 1 = allocation, 0 = free). */
typedef struct nnp_mem_events {
    nnp_table_t t;
    int64_t *ts_ns;
    uint8_t *is_alloc;
    uint64_t *address, *bytes;
    uint32_t *name, *owner_op, *device_id;
    uint32_t *thread; /* index into threads; 0 also when the importer does not know it */
} nnp_mem_events_t;

/* Data pipeline ops (registration) and queue samples (op_id -1 = device queue). */
typedef struct nnp_pipe_ops {
    nnp_table_t t;
    int64_t *op_id, *parent_id;
    uint32_t *op_type, *num_workers;
} nnp_pipe_ops_t;

typedef struct nnp_queue_samples {
    nnp_table_t t;
    int64_t *ts_ns;
    int64_t *op_id; /* -1: the device queue */
    uint32_t *size, *capacity;
} nnp_queue_samples_t;

/* Generic time series: counters (name, value), host memory. */
typedef struct nnp_series {
    nnp_table_t t;
    int64_t *ts_ns;
    uint32_t *name; /* counter name (0 for unnamed series) */
    double *value;
} nnp_series_t;

/* User markers: instants have end_ns == start_ns; unfinished ranges NNP_OPEN_END. */
typedef struct nnp_markers {
    nnp_table_t t;
    int64_t *start_ns, *end_ns;
    uint32_t *message, *thread;
} nnp_markers_t;

/* CPU and memory samples (cumulative counters as read from /proc). */
typedef struct nnp_cpu_samples {
    nnp_table_t t;
    int64_t *ts_ns;
    uint64_t *user, *nice, *sys, *idle, *iowait, *irq, *steal, *ctxt;
    uint32_t *running, *blocked;
} nnp_cpu_samples_t;

typedef struct nnp_task_samples {
    nnp_table_t t;
    int64_t *ts_ns;
    uint64_t *tid;           /* 0 = the whole process */
    uint32_t *name;          /* thread name */
    uint64_t *utime, *stime; /* clock ticks */
} nnp_task_samples_t;

/* Phases of a step trace averages row: total, iteration_interval, fp_and_bp, tail. */
#define NNP_STEP_AVERAGES 4

/* A collection window of the session. */
typedef struct nnp_window {
    int64_t start_ns, stop_ns; /* stop_ns NNP_OPEN_END when the run crashed inside it */
} nnp_window_t;

/* What we know of the run as a whole. Strings are owned by the model. */
typedef struct nnp_run_info {
    int rank_id, device_id, rank_size;
    char *host;
    int64_t pid;
    int64_t parent_pid;          /* a child process's run: its parent's pid; else 0 */
    int64_t start_wall_us;       /* wall clock at session creation */
    int64_t diff_time_us;        /* wall - monotonic, us (MindSpore diff_time) */
    char *options_json;          /* options as resolved ("{}" when unknown) */
    char *fp_point, *bp_point;   /* user overrides, "" = auto */
    char *state;                 /* info.json state, "unknown" if absent */
    int64_t clock_ticks_per_sec; /* for CPU samples (sysconf(_SC_CLK_TCK)) */
    int ncpu;
    uint64_t timeline_limit_bytes;
    nnp_window_t *windows;
    size_t n_windows;
    /* What the importer met. */
    uint64_t events_lost, chunks_corrupt, chunks_truncated, files_aged_out;
    char *source;             /* the directory or file imported */
    char *source_format;      /* "nnprof-raw", "mindspore-host-info", ... */
    bool step_avg_skip_first; /* MindSpore 1.x data: step-trace averages leave out step 1
                               * (formats.md 1.1); set by the importer */
    /* info.json "clock_sync" (docs/MPI.md): add clock_offset_ns to this rank's times to get
     * the reference rank's, within clock_uncertainty_ns. false: not measured (method
     * "none", absent, or values out of range). For the cluster analysis. */
    bool has_clock_sync;
    int64_t clock_offset_ns, clock_uncertainty_ns;
    /* The step trace's own averages row, when the imported file has one (MindSpore "-"
     * row): total, iteration_interval, fp_and_bp (or fp), tail in ns; bit i of
     * step_averages_known says value i was given. MindInsight's summary reads that row. */
    int64_t step_averages_ns[NNP_STEP_AVERAGES];
    unsigned step_averages_known;
    char *device_name;            /* the accelerator's name, NULL when unknown (Kineto) */
    uint64_t device_memory_bytes; /* its memory, 0 when unknown (Kineto deviceProperties) */
    bool overlap_device_steps;    /* the tool measures each step's overlap over its device
                                   * activity (torch_npu, Kineto): see overlap.c */
    /* Processes that worked for the rank's training process (model_view.c): their rows
     * are in the model (the timeline shows them), never in its views. */
    uint32_t *worker_pids;
    size_t n_worker_pids;
} nnp_run_info_t;

typedef struct nnp_model {
    /* String table: ids 1..n; 0 is "". */
    char **strs;
    uint32_t *str_len;
    size_t n_strs, strs_cap;
    uint32_t *str_index; /* open-addressing hash -> id */
    size_t index_cap;

    nnp_run_info_t info;
    nnp_threads_t threads;
    nnp_ops_t ops;
    nnp_kernels_t kernels;
    nnp_calls_t calls;
    nnp_host_rows_t host;
    nnp_spans_t steps, epochs;
    nnp_marks_t fp, bp;
    nnp_comms_t comms;
    nnp_comm_groups_t comm_groups;
    nnp_mem_events_t mem;
    nnp_pipe_ops_t pipe_ops;
    nnp_queue_samples_t queues;
    nnp_series_t counters, host_mem;
    nnp_markers_t markers;
    nnp_cpu_samples_t sys_cpu;
    nnp_task_samples_t task_cpu;
    nnp_series_t proc_rss; /* value = RSS bytes */
    nnp_op_totals_t op_totals;
    nnp_comm_costs_t comm_costs;
    nnp_comm_links_t comm_links;
    /* A view (nnp__model_rank_view): the model it was made from, whose strings and tables
     * it shares except those of the bits of view_owned (model_view.c), which are its own. */
    const struct nnp_model *view_of;
    unsigned view_owned;
} nnp_model_t;

/* Initialises an empty model (caller-allocated). Returns NNP_OK or NNP_ENOMEM. */
int nnp__model_init(nnp_model_t *m);
void nnp__model_fini(nnp_model_t *m);

/* Interns a string (len bytes) into the model: returns its id (0 for len 0), or 0 and
 * sets *err when out of memory. */
uint32_t nnp__model_intern(nnp_model_t *m, const char *s, size_t len);
uint32_t nnp__model_intern_cstr(nnp_model_t *m, const char *s);
/* The string of an id ("" for 0 or an unknown id). Valid for the model's life. */
const char *nnp__model_str(const nnp_model_t *m, uint32_t id);
/* Length of an id's string (0 for 0 or an unknown id): writers of per-row files use it to
 * skip a strlen per field. */
static inline size_t nnp__model_strlen(const nnp_model_t *m, uint32_t id)
{
    return id < m->n_strs ? m->str_len[id] : 0;
}
/* Looks a string up without interning it: its id, or 0 when absent. */
uint32_t nnp__model_find(const nnp_model_t *m, const char *s);

/* Appends one zero-filled row; returns its index or SIZE_MAX when out of memory or over
 * NNP_MODEL_MAX_ROWS. Works on any table above through its nnp_table_t header:
 *   size_t i = nnp__table_push(&m->ops.t); m->ops.start_ns[i] = ...; */
size_t nnp__table_push_grow(nnp_table_t *t);
static inline size_t nnp__table_push(nnp_table_t *t)
{
    /* The common case inline (a row zero-filled ahead, hence within capacity); growth and
     * zero-filling the next batch out of line (a call per row: ~20 instructions). */
    if (t->n < t->zeroed)
        return t->n++;
    return nnp__table_push_grow(t);
}
/* Thread index for an OS tid, adding the thread when new (name 0). SIZE_MAX on OOM. */
size_t nnp__model_thread(nnp_model_t *m, uint64_t tid, uint32_t pid);
/* Makes sure ops has FLOPs columns. Returns NNP_OK or NNP_ENOMEM. */
int nnp__model_ops_want_flops(nnp_model_t *m);
/* qsort_r comparator of op indices (size_t) into ops (the nnp_ops_t *): by thread, then
 * start, the longer first at one start (a parent before its child), then index. */
int nnp__ops_cmp_thread_start(const void *a, const void *b, void *ops);
/* Makes ops.stack exist (zero-filled); NNP_OK or NNP_ENOMEM. */
int nnp__model_ops_want_stack(nnp_model_t *m);
/* Makes sure kernels has the detail column (zero for rows added before). NNP_OK or
 * NNP_ENOMEM. */
int nnp__model_kernels_want_detail(nnp_model_t *m);
/* Makes sure kernels and comms have their end_ps columns (zero for rows so far). Returns
 * NNP_OK or NNP_ENOMEM. */
int nnp__model_want_end_ps(nnp_model_t *m);
/* Makes sure ops has the autograd link columns (seq_*). Returns NNP_OK or NNP_ENOMEM. */
int nnp__model_ops_want_seq(nnp_model_t *m);
/* Sorts every table by start time (stable) and builds nothing else; call once after
 * importing. Returns NNP_OK or NNP_ENOMEM. */
int nnp__model_finish(nnp_model_t *m);
/* Rows of all tables together (for reports and benchmarks). */
size_t nnp__model_rows(const nnp_model_t *m);
/* Heap bytes the model holds (columns and strings). */
size_t nnp__model_bytes(const nnp_model_t *m);

/* ---- the rank's processes (model_view.c) ---- */

/* The process-level sample tables: rows a process's sampler or nnp_host_memory() wrote
 * about that process (or, sys_cpu, about the machine as it saw it). */
enum {
    NNP_PROC_SYS_CPU,
    NNP_PROC_TASK_CPU,
    NNP_PROC_RSS,
    NNP_PROC_HOST_MEM,
    NNP_PROC_SAMPLE_TABLES
};

/* One process's part of a model imported from a rank's raw directory and its child
 * processes' (follow_fork, follow_children), in import order: its pid, its parent's (0
 * unknown), whether it recorded work (ops, kernels, host ranges, steps, communication,
 * markers), and its rows [from, to) of each sample table before nnp__model_finish. */
typedef struct nnp_proc_part {
    uint32_t pid, parent_pid;
    bool work;
    size_t from[NNP_PROC_SAMPLE_TABLES], to[NNP_PROC_SAMPLE_TABLES];
} nnp_proc_part_t;

/* Decides which processes of an imported group train and which work for them, before
 * nnp__model_finish. A process is a worker when one of its ancestors in the group
 * recorded work (a DataLoader worker forked by the training process; but a program a
 * shell started is not, as the shell recorded none). The first process with work that is
 * not a worker is the rank's own: info.pid becomes its pid, and the sample rows of every
 * other process are dropped (samples of different processes in one series would mix
 * their counters). Workers' pids go to info.worker_pids. NNP_OK or NNP_ENOMEM. */
int nnp__model_group_processes(nnp_model_t *m, const nnp_proc_part_t *parts, size_t n);

/* Makes view: what the rank's analyses read. The model's rows without those of its
 * worker processes (ops, host rows, markers, host calls, communication, tensor memory),
 * sharing everything else with m, which must outlive it and not change. With no worker
 * the view shares every table. Release it with nnp__model_view_fini, never
 * nnp__model_fini. NNP_OK or NNP_ENOMEM (view then needs no release). */
int nnp__model_rank_view(const nnp_model_t *m, nnp_model_t *view);
void nnp__model_view_fini(nnp_model_t *view);

#endif /* NNP_MODEL_H */
