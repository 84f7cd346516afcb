/* nnprof.h - the public API of libnnprof, the nnprof collection library.
 *
 * This header is the contract (libuv style): everything a program needs to configure a
 * profiling session, open and close collection windows, and record events. It is
 * self-contained and compiles as C11 and C++ (tests/compile proves both).
 *
 * Threading: configuration and session calls (nnp_options_*, nnp_session_*) may be called
 * from any thread but not concurrently on the same object. Recording calls (nnp_range_*,
 * nnp_op*, ...) are thread-safe, lock-free and allocation-free after a thread's first event,
 * and are meant for hot paths: when no session is collecting they cost one relaxed atomic
 * load and a branch.
 */
#ifndef NNPROF_H
#define NNPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nnprof_version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(NNP_BUILDING_LIBRARY) && defined(__GNUC__)
#define NNP_API __attribute__((visibility("default")))
#else
#define NNP_API
#endif

#if defined(__GNUC__) && !defined(__cplusplus)
#define NNP_NODISCARD __attribute__((warn_unused_result))
#else
#define NNP_NODISCARD
#endif

/* ---------------------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------------------- */

/* X-macro list: one place for every error code, its number and its description, so the
 * enum and nnp_strerror() cannot drift apart. */
#define NNP_ERRNO_MAP(XX)                                                                          \
    XX(OK, 0, "success")                                                                           \
    XX(EINVAL, -1, "invalid argument")                                                             \
    XX(ENOMEM, -2, "out of memory")                                                                \
    XX(EIO, -3, "input/output error")                                                              \
    XX(ESTATE, -4, "operation not allowed in the current state")                                   \
    XX(EBUSY, -5, "another profiling session is active in this process")                           \
    XX(ECONFLICT, -6, "profiling is already enabled by the environment")                           \
    XX(ENOENT, -7, "no such file or directory")                                                    \
    XX(ECORRUPT, -8, "data is corrupted")                                                          \
    XX(ETRUNC, -9, "data is truncated")                                                            \
    XX(ETOOLONG, -10, "value too long")                                                            \
    XX(EPATH, -11, "invalid path")                                                                 \
    XX(EVERSION, -12, "unsupported format version")                                                \
    XX(ENOTSUP, -13, "not supported on this platform")                                             \
    XX(EPERM, -14, "permission denied")

typedef enum nnp_errno {
#define NNP_ERRNO_ENUM_(name, num, text) NNP_##name = (num),
    NNP_ERRNO_MAP(NNP_ERRNO_ENUM_)
#undef NNP_ERRNO_ENUM_
} nnp_errno_t;

/* Returns a static, never-NULL description of an error code ("unknown error" for codes
 * this version does not know). Thread-safe. */
NNP_API const char *nnp_strerror(int code);

/* Returns the detail message of the last failed nnprof call on the calling thread, or ""
 * when there is none. Owned by the library; valid until the next nnprof call on this
 * thread. Thread-safe (the buffer is thread-local). */
NNP_API const char *nnp_last_error(void);

/* ---------------------------------------------------------------------------------------
 * Version
 * ------------------------------------------------------------------------------------- */

/* Returns NNP_VERSION_STRING of the library actually loaded (may differ from the header). */
NNP_API const char *nnp_version(void);

/* ---------------------------------------------------------------------------------------
 * Logging
 * ------------------------------------------------------------------------------------- */

typedef enum nnp_log_level {
    NNP_LOG_ERROR = 0,
    NNP_LOG_WARN = 1,
    NNP_LOG_INFO = 2,
    NNP_LOG_DEBUG = 3
} nnp_log_level_t;

/* A log sink. msg is one line without a trailing newline, valid only during the call. */
typedef void (*nnp_log_fn)(nnp_log_level_t level, const char *msg, void *user);

/* Sets the minimum level that is emitted. The initial level comes from NNPROF_LOG_LEVEL
 * (error|warn|info|debug, default warn). Thread-safe. */
NNP_API void nnp_log_set_level(nnp_log_level_t level);

/* Replaces the sink (default: "[nnprof] LEVEL: msg" on stderr). fn == NULL restores the
 * default. The sink is called from whichever thread logs, never from a recording call.
 * Not to be called while another thread may be logging. */
NNP_API void nnp_log_set_handler(nnp_log_fn fn, void *user);

/* ---------------------------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------------------------- */

/* Maximum length of a path or a point name kept in nnp_options_t, terminator included. */
#define NNP_PATH_MAX 4096
#define NNP_NAME_MAX 256

/* MindSpore's profile_framework: which host-side data the framework collects. */
typedef enum nnp_framework_mode {
    NNP_FRAMEWORK_ALL = 0, /* "all" (default) */
    NNP_FRAMEWORK_TIME,    /* "time" */
    NNP_FRAMEWORK_MEMORY,  /* "memory" */
    NNP_FRAMEWORK_NONE     /* null */
} nnp_framework_mode_t;

/* MindSpore's profiler_level. */
typedef enum nnp_profiler_level {
    NNP_LEVEL_UNSET = 0, /* not given (default) */
    NNP_LEVEL_0,         /* "Level0": data_process off, aicore_metrics -1 */
    NNP_LEVEL_1,         /* "Level1": data_process off */
    NNP_LEVEL_2          /* "Level2" */
} nnp_profiler_level_t;

/* msprof's task_trace / task_time switch. */
typedef enum nnp_task_trace {
    NNP_TASK_TRACE_ON = 0, /* "on" (default, same as l1) */
    NNP_TASK_TRACE_OFF,    /* "off" */
    NNP_TASK_TRACE_L0,     /* "l0": timings only */
    NNP_TASK_TRACE_L1      /* "l1": timings and op basic info */
} nnp_task_trace_t;

/* What happens when a thread records faster than the writer drains its buffer. */
typedef enum nnp_full_policy {
    NNP_FULL_DROP = 0, /* drop the event and count it at once: never slow the host */
    NNP_FULL_BLOCK,    /* spin-yield until the writer frees room (exact, may stall) */
    NNP_FULL_WAIT      /* default: yield to the writer while it frees room, for at most
                          1 s per event; once a wait runs out (the writer is stalled),
                          drop until the writer makes progress again */
} nnp_full_policy_t;

/* Bits of host_sys / host_sys_usage. */
#define NNP_HOST_SYS_CPU 0x1u
#define NNP_HOST_SYS_MEM 0x2u

/* Every option of a session. Fill with nnp_options_init() first, then set fields in code,
 * or merge a JSON string (nnp_options_from_json) or the environment (nnp_options_from_env).
 * Plain data: copy it freely; it owns no pointer. */
typedef struct nnp_options {
    /* -- MindSpore Profiler options (seed 000 Profiler.__init__ / _parser_kwargs) -- */
    char output_path[NNP_PATH_MAX]; /* default "./data"; results go to <output_path>/profiler */
    bool start_profile;             /* default true: nnp_session_create() also starts */
    bool op_time;                   /* default true */
    bool profile_memory;            /* default false; needs op_time */
    bool profile_communication;     /* default false; needs op_time */
    bool parallel_strategy;         /* default true */
    bool data_process;              /* default true */
    int timeline_limit_mb;          /* default 500, > 0 */
    nnp_framework_mode_t profile_framework;
    nnp_profiler_level_t profiler_level;
    int aicore_metrics;       /* -1..6, default 0; not collected on this platform */
    bool l2_cache;            /* default false; not collected on this platform */
    bool hbm_ddr;             /* default false; not collected on this platform */
    bool pcie;                /* default false; not collected on this platform */
    bool sync_enable;         /* default true */
    bool data_simplification; /* default true */
    bool host_stack;          /* default true */

    /* -- msprof PROFILING_OPTIONS (seed 004) -- */
    uint64_t storage_limit_mb;      /* 0 = default (90 % of free space); else [200, 4294967295] */
    bool training_trace;            /* default on when op_time */
    nnp_task_trace_t task_trace;    /* default on */
    bool hccl;                      /* default off */
    bool aicpu;                     /* default off */
    char fp_point[NNP_NAME_MAX];    /* "" = detect automatically; PROFILING_FP_START overrides */
    char bp_point[NNP_NAME_MAX];    /* "" = detect automatically; PROFILING_BP_END overrides */
    char aic_metrics[NNP_NAME_MAX]; /* default "PipeUtilization"; not collected here */
    bool msproftx;                  /* default off: user markers are recorded only when on */
    bool runtime_api;               /* default off */
    unsigned host_sys;              /* NNP_HOST_SYS_* bits, default 0 */
    unsigned host_sys_usage;        /* NNP_HOST_SYS_* bits, default 0 */
    int host_sys_usage_freq;        /* Hz, [1, 50], default 50 (used when host_sys_usage set) */

    /* -- Process identity (RANK_ID, DEVICE_ID, RANK_SIZE) -- */
    int rank_id;   /* default 0 */
    int device_id; /* default 0 */
    int rank_size; /* default 1 */

    /* -- nnprof recorder settings -- */
    size_t buffer_size_kb;         /* per-thread ring buffer, default 4096 KiB, min 64 */
    nnp_full_policy_t full_policy; /* default NNP_FULL_WAIT */
    int writer_period_ms;          /* longest wait between drains (ms), default 10 */
    int sample_interval_ms;        /* CPU/memory sampler period, default 1000; 0 = off */
    uint64_t raw_file_bytes;       /* rotate data files at this size, default 64 MiB */
    uint64_t storage_limit_bytes;  /* exact byte limit (tests, embedding); 0 = use _mb */

    /* -- Child processes (default false; docs/ARCHITECTURE.md "Child processes") -- */
    bool follow_fork;     /* a forked child records into its own raw directory (own pid and
                           * writer; info.json names the parent's run); else it records
                           * nothing. NNPROF_FOLLOW_FORK=1 */
    bool follow_children; /* an exec'd descendant that the environment would profile
                           * (LD_PRELOAD + MS_PROFILER_OPTIONS) starts its own session; else
                           * only the first process does. NNPROF_FOLLOW_CHILDREN=1 */
} nnp_options_t;

/* Fills *o with every default listed above. Always returns NNP_OK for a non-NULL o. */
NNP_API int nnp_options_init(nnp_options_t *o);

/* Merges a JSON object of MindSpore-style options (keys as Profiler.__init__ and
 * MS_PROFILER_OPTIONS: "output_path", "op_time", "profile_memory", ...; "start" is read
 * into *start when start != NULL) into *o.
 * Bad values follow the seed: wrong type or out-of-range -> a warning naming the option,
 * the value and the default used; unknown key -> warning, ignored; an option that needs
 * op_time while op_time is false -> warning.
 * Returns NNP_OK, NNP_EINVAL when json is not a JSON object (o unchanged), or NNP_EPATH
 * for an output_path with forbidden characters. */
NNP_API NNP_NODISCARD int nnp_options_from_json(nnp_options_t *o, const char *json, bool *start);

/* Merges msprof-style PROFILING_OPTIONS JSON (keys "output", "storage_limit", "task_trace",
 * "fp_point", "host_sys", ...) into *o, with the same warning rules.
 * Returns NNP_OK, NNP_EINVAL (not a JSON object) or NNP_EPATH. */
NNP_API NNP_NODISCARD int nnp_options_from_msprof_json(nnp_options_t *o, const char *json);

/* Merges the environment into *o: MS_PROFILER_OPTIONS, PROFILING_MODE + PROFILING_OPTIONS,
 * MS_DIAGNOSTIC_DATA_PATH, PROFILING_FP_START, PROFILING_BP_END, RANK_ID, DEVICE_ID,
 * RANK_SIZE. *enabled (may be NULL) is set when the environment asks to profile the
 * process without code changes ("start": true, or PROFILING_MODE=true).
 * Returns NNP_OK or an error of nnp_options_from_json(). */
NNP_API NNP_NODISCARD int nnp_options_from_env(nnp_options_t *o, bool *enabled);

/* Checks *o as a whole: output path characters, the 2048-character limit of the options
 * serialised as JSON (seed: "the environment parameter length exceeds the limit (2048)"),
 * and clamps out-of-range recorder settings with a warning.
 * Returns NNP_OK, NNP_EPATH or NNP_ETOOLONG. */
NNP_API NNP_NODISCARD int nnp_options_validate(nnp_options_t *o);

/* Writes the options as a JSON object into buf (always terminated when cap > 0).
 * Returns the length the full text needs (excluding the terminator), like snprintf,
 * or a negative NNP_E* code. */
NNP_API int nnp_options_to_json(const nnp_options_t *o, char *buf, size_t cap);

/* ---------------------------------------------------------------------------------------
 * Session lifecycle
 * ------------------------------------------------------------------------------------- */

typedef struct nnp_session nnp_session_t;

/* Creates the process's profiling session: validates the options, names this process's
 * raw directory <output_path>/profiler/PROF_<start>_<host>_<pid>/ (an existing profiler/
 * with data of an earlier run gets the seed's "old data may be rewritten" warning), checks
 * that it can be made, starts the writer and sampler threads, and starts collecting when
 * o->start_profile. Nothing is created on disk yet: the writer makes profiler/ and the raw
 * directory (mode 0700) when the first event is written, so a session that records nothing
 * leaves nothing behind. A relative output_path is taken against the current directory now.
 * o == NULL means defaults merged with the environment.
 * Only one session may exist per process. A forked child has none (its copy of the parent's
 * handle refuses start/stop; destroy releases it), unless o->follow_fork gives it its own.
 * Returns NNP_OK and *out (owned by the caller, released with nnp_session_destroy), or
 * NNP_EBUSY (a session exists), NNP_ECONFLICT (PROFILING_MODE is set in the environment),
 * NNP_EPATH (a file stands where a directory must go), NNP_EPERM (a directory that cannot
 * be written, or a read-only file system) - both messages name the path -, NNP_ETOOLONG,
 * NNP_EIO, NNP_ENOMEM. */
NNP_API NNP_NODISCARD int nnp_session_create(const nnp_options_t *o, nnp_session_t **out);

/* Opens a collection window. Returns NNP_ESTATE if already started ("The profiler has
 * already started"). Any number of windows may follow each other. */
NNP_API NNP_NODISCARD int nnp_session_start(nnp_session_t *s);

/* Closes the current window and flushes its events to disk. Returns NNP_ESTATE if not
 * started ("The profiler has not started"). */
NNP_API NNP_NODISCARD int nnp_session_stop(nnp_session_t *s);

/* Blocks until every event recorded before the call is written to disk (the writer may
 * still hold the file open). Makes the raw directory if nothing was recorded yet (an empty
 * run), so nnp_session_raw_dir() names a readable run afterwards.
 * Returns NNP_OK or NNP_EIO (the log names the first failed write). */
NNP_API NNP_NODISCARD int nnp_session_flush(nnp_session_t *s);

/* Stops (if started), flushes, writes info.json and releases the session. NULL is a no-op.
 * Returns NNP_OK, or the first write error met (the session is released in any case). */
NNP_API int nnp_session_destroy(nnp_session_t *s);

/* Returns the raw directory of this process (owned by s, valid until destroy). It exists
 * once an event was written or nnp_session_flush() was called. */
NNP_API const char *nnp_session_raw_dir(const nnp_session_t *s);

/* Returns the session the library started itself, or NULL: the one the environment started
 * at load time, or a follow_fork child's own session. Async-signal-safe. */
NNP_API nnp_session_t *nnp_session_current(void);

/* Counters of a session, for reports and tests. */
typedef struct nnp_stats {
    uint64_t events_recorded; /* records written to disk */
    uint64_t events_dropped;  /* records lost because a thread buffer was full */
    uint64_t bytes_raw;       /* uncompressed record bytes written */
    uint64_t bytes_written;   /* bytes of chunk files written (compressed) */
    uint64_t chunks_written;
    uint64_t files_aged_out; /* data files deleted by storage_limit */
    uint64_t bytes_aged_out;
    uint32_t threads;          /* threads that recorded at least one event */
    uint64_t events_unwritten; /* records lost because writing them failed (disk full, I/O
                                * error, raw directory not creatable) */
    uint64_t write_errors;     /* failed writes (each may lose a chunk of records) */
    bool disk_full;            /* a write failed with ENOSPC or EDQUOT */
} nnp_stats_t;

/* Fills *out with the session's counters so far. Thread-safe. */
NNP_API int nnp_session_stats(const nnp_session_t *s, nnp_stats_t *out);

/* ---------------------------------------------------------------------------------------
 * Analysis: raw data -> the result files MindSpore/MindInsight/msprof users know
 * (docs/OUTPUTS.md). Per rank: *_{rank} files in <output_path>/profiler/, and
 * trace_view.json + step_trace_time.csv in <raw dir>/ASCEND_PROFILER_OUTPUT/.
 * ------------------------------------------------------------------------------------- */

typedef struct nnp_analyse_options {
    bool pretty;    /* indent JSON outputs (default false) */
    bool has_steps; /* analyse only steps step_first..step_last (step_list) */
    uint64_t step_first, step_last;
    int jobs;              /* ranks analysed in parallel by nnp_offline_analyse, 0 = cores */
    bool async;            /* nnp_analyse: analyse in a child process (mode="async") */
    bool is_developer;     /* keep level-0 host_info rows (default true, as the seed) */
    bool quiet;            /* no progress bar even on a terminal */
    bool timeline_summary; /* trace_view.json "summary" kind: Step Trace + Overlap only
                            * (default false: "detail", everything) */
    int rank;              /* analyse only this rank, -1 (default) = every rank */
    bool kineto_cuda_sync; /* nnp_export_kineto: CUDA synchronizations as "cuda_sync"
                            * events too (Kineto's enable_cuda_sync_events). Default false,
                            * as Kineto's: HTA counts those on a stream as GPU work */
    int64_t graph_id;      /* timeline: only ops and steps of this graph, -1 = all */
    double peak_flops;     /* device peak FLOP/s for the achieved fraction, 0 = unknown */
    uint64_t memory_capacity_bytes; /* device memory capacity, 0 = unknown */
    char output_dir[NNP_PATH_MAX];  /* "" (default): outputs beside our raw data (the
                                     * profiler/ directory), other tools' data into
                                     * <path>/nnprof_output (never beside their files); else
                                     * every output goes here, each rank's trace_view.json
                                     * in rank_<r>/ASCEND_PROFILER_OUTPUT. Earlier results
                                     * are kept as <name>.old (docs/CLI.md) */
} nnp_analyse_options_t;

/* Fills *o with the defaults above. */
NNP_API int nnp_analyse_options_init(nnp_analyse_options_t *o);

/* Parses a step list as MindSpore's step_list: "A-B", or "A,B,C" that must be
 * continuous integers once sorted ("5", "3-7", "7,5,6"). Sets has_steps/step_first/
 * step_last. Errors: NNP_EINVAL with the seed's texts ("The elements of the parameter
 * step_list must be integers." / "... must be continuous integers."). */
NNP_API NNP_NODISCARD int nnp_parse_step_list(const char *text, nnp_analyse_options_t *o);

/* Stops the session if started, flushes, and analyses its raw data (sync), or starts the
 * analysis in a child process and returns at once (o->async; then nnp_analyse_wait()).
 * o == NULL means defaults. Returns NNP_OK or the first error (results of the analyses
 * that succeeded are still written). */
NNP_API NNP_NODISCARD int nnp_analyse(nnp_session_t *s, const nnp_analyse_options_t *o);

/* Waits for an asynchronous nnp_analyse() and returns its result (NNP_OK when none). */
NNP_API int nnp_analyse_wait(void);

/* Offline analysis (the seed's offline_analyse) of data left by a run, crashed or not:
 * path must hold a profiler/ directory; every raw directory under it (one per rank) is
 * analysed, o->jobs at a time in child processes. A directory holding MindSpore's
 * host_info_{rank}.csv is analysed too. Two runs of one rank in the folder, a rank or step
 * filter that matches nothing, or an unsafe output folder are errors that write nothing
 * (docs/CLI.md "nnprof analyse"). Returns NNP_OK, NNP_ENOENT ("There must be a profiler
 * folder in the data path: <path>.") or the first analysis error. */
NNP_API NNP_NODISCARD int nnp_offline_analyse(const char *path, const nnp_analyse_options_t *o);

/* Statistics of named operators (the seed's Profiler.op_analyse): path is a raw
 * directory or an output path holding one per rank; device_id selects the rank's data
 * (-1 = the lowest rank). Times are given with the ns the data has. names are full op names or op
 * types. On success *json is a JSON array, one object per name in order: {"op_name", "count",
 * "total_time_us", "avg_time_us", "min_time_us", "max_time_us"} (count 0 when not found), owned by
 * the caller and released with nnp_free(). Errors: NNP_EINVAL for no names or an empty one
 * ("For 'Profiler.op_analyse()', the parameter op_name cannot be "", '' or []."),
 * NNP_ENOENT when no data is found. */
NNP_API NNP_NODISCARD int nnp_op_analyse(const char *path, const char *const *names, size_t n_names,
                                         int device_id, char **json);

/* Writes the data of one raw directory (a PROF_* directory) in PyTorch profiler's trace
 * format (Kineto's Chrome-trace JSON: "traceEvents", "distributedInfo",
 * "deviceProperties"; ops as "cpu_op" with "Input Dims", "Input type", "Sequence number",
 * steps as "ProfilerStep#N", autograd links as "fwdbwd" flows; docs/TORCH.md), so
 * TensorBoard's profiler plugin, HTA and chrome://tracing open it.
 *   raw_dir       [in] the raw directory, read only
 *   out_path      [in] the file to write (replaced atomically; plain JSON, mode 0600)
 *   o             [in] may be NULL; has_steps/step_first/step_last keep the events starting
 *                      within those steps, pretty indents
 *   metadata_json [in] NULL or a JSON object whose members are added at the top level
 *                      (torch's add_metadata)
 * Returns NNP_OK, NNP_EINVAL, NNP_ENOENT (no such raw directory), NNP_EPATH, NNP_EIO or
 * NNP_ENOMEM. Not for hot paths; thread-safe. */
NNP_API NNP_NODISCARD int nnp_export_kineto(const char *raw_dir, const char *out_path,
                                            const nnp_analyse_options_t *o,
                                            const char *metadata_json);

/* Operator table of one raw directory, as torch.profiler's key_averages(): one object per
 * op name (per name and input shapes when by_shapes), over host ops, host ranges and
 * communication ops: {"name", "input_shapes" (by_shapes), "count", "total_ns", "self_ns",
 * "min_ns", "max_ns", "flops", "mem_bytes", "self_mem_bytes", "kind"} where kind is "op",
 * "range" or "comm", sorted by self time (largest first). Self time is the time not
 * covered by ops or ranges nested in it on the same thread; memory is what was allocated
 * minus freed during the op on its thread (with or without nested ops).
 *   o [in] may be NULL; has_steps/step_first/step_last keep what starts within those steps
 * On success *json is owned by the caller and released with nnp_free(). Returns NNP_OK,
 * NNP_EINVAL, NNP_ENOENT or NNP_ENOMEM. Thread-safe. */
NNP_API NNP_NODISCARD int nnp_op_table(const char *raw_dir, const nnp_analyse_options_t *o,
                                       bool by_shapes, char **json);

/* Flags of nnp_op_table_ex. */
#define NNP_OP_TABLE_BY_SHAPES 0x1u /* one object per op name and input shapes */
#define NNP_OP_TABLE_STEPS                                                                         \
    0x2u /* each step also a range "ProfilerStep*" on the thread that                              \
          * began it, as torch.profiler lists its steps when it has                                \
          * a schedule (its parent of the step's top-level ops) */
/* One object per op name and source stack (nnp_op_t.stack; a backward op counts under its
 * forward op's stack, as torch.profiler's with_stack): each object gets "stack" (frames
 * innermost first, '\n' between them; "" for none) and "self_us_whole" (torch's
 * export_stacks() value: the calls' self times in whole microseconds, summed). */
#define NNP_OP_TABLE_BY_STACK 0x4u

/* nnp_op_table with flags (NNP_OP_TABLE_*; other bits: NNP_EINVAL). A PyTorch trace's steps
 * are ranges whatever the flags (docs/OUTPUTS.md "Op self time"). */
NNP_API NNP_NODISCARD int nnp_op_table_ex(const char *raw_dir, const nnp_analyse_options_t *o,
                                          unsigned flags, char **json);

/* Releases memory the library handed out (nnp_op_analyse's JSON). NULL is a no-op. */
NNP_API void nnp_free(void *p);

/* ---------------------------------------------------------------------------------------
 * Recording
 *
 * Strings are referenced by id. nnp_intern() turns a string into an id once (it takes a
 * lock and may allocate: call it at set-up, not per event); ids stay valid for the life
 * of the process and across sessions. Id 0 means "no string".
 *
 * Timestamps: calls without a time argument read the clock themselves. nnp_now() returns
 * the recorder's raw tick counter (TSC when invariant, else CLOCK_MONOTONIC ns) for
 * *_since() calls; *_at() calls take nanoseconds of CLOCK_MONOTONIC (nnp_clock_ns()), for
 * events measured elsewhere (device kernels) or replayed.
 * Every recording call is a no-op outside a collection window.
 * ------------------------------------------------------------------------------------- */

typedef uint32_t nnp_str_t;

/* Interns s (copied) and returns its id, or 0 for NULL/"" or on allocation failure. */
NNP_API nnp_str_t nnp_intern(const char *s);

/* Raw ticks for *_since() calls. Hot-path safe. */
NNP_API uint64_t nnp_now(void);

/* CLOCK_MONOTONIC in nanoseconds: the time base of every *_at() call. */
NNP_API uint64_t nnp_clock_ns(void);

/* True while a collection window is open. One relaxed atomic load. */
NNP_API bool nnp_is_collecting(void);

/* Names the calling thread in the timeline and adds it to per-thread CPU sampling.
 * Data-pipeline worker threads link themselves to their pipeline op by a name holding
 * "(id=<op_id>)", e.g. "MapOp(id=2) worker 0": the analyser sums their CPU per op. */
NNP_API int nnp_thread_register(const char *name);

/* -- Host ranges and instants (MindSpore host_info: module, event, stage, level) -- */
typedef struct nnp_host_tag {
    nnp_str_t module;      /* e.g. "Dataset", "Graph" */
    nnp_str_t event;       /* e.g. "GetNext" */
    nnp_str_t stage;       /* e.g. "Compile" */
    nnp_str_t custom_info; /* free text, 0 if none */
    uint8_t level;         /* 0 = framework developer, 1 = user */
} nnp_host_tag_t;

NNP_API void nnp_range_begin(const nnp_host_tag_t *tag);
NNP_API void nnp_range_end(const nnp_host_tag_t *tag);
NNP_API void nnp_instant(const nnp_host_tag_t *tag);
NNP_API void nnp_range_begin_at(const nnp_host_tag_t *tag, uint64_t ts_ns);
NNP_API void nnp_range_end_at(const nnp_host_tag_t *tag, uint64_t ts_ns);
NNP_API void nnp_instant_at(const nnp_host_tag_t *tag, uint64_t ts_ns);

/* Host memory in use by the framework (host_info memory column), in bytes. */
NNP_API void nnp_host_memory(uint64_t bytes);
NNP_API void nnp_host_memory_at(uint64_t bytes, uint64_t ts_ns);

/* -- Operators -- */
typedef struct nnp_op {
    nnp_str_t name; /* full scope name, e.g. "Default/network/Conv2D-op1" */
    nnp_str_t type; /* op type, e.g. "Conv2D" */
    uint32_t graph_id;
    uint32_t stream_id;      /* stream or queue the op ran on */
    uint64_t correlation_id; /* links device kernels to this op; 0 = none */
    nnp_str_t input_shapes;  /* e.g. "32,784;784,128", 0 = not recorded */
    nnp_str_t input_dtypes;  /* e.g. "float32;float32", 0 = not recorded */
    uint64_t flops_matrix;   /* cube/matrix FLOPs, 0 = unknown */
    uint64_t flops_vector;   /* vector FLOPs, 0 = unknown */
    /* Autograd link of framework ops (PyTorch's sequence number; Kineto draws its "fwdbwd"
     * flows from it). A forward op carries its own thread's framework id in seq_thread, a
     * backward op (is_backward) the framework id of the thread its forward op ran on; a
     * backward op is linked to the forward op with the same sequence_nr and seq_thread.
     * Zero-filled (has_sequence false) means no link; is_backward alone marks a backward
     * op with no link (PyTorch's AccumulateGrad). */
    int64_t sequence_nr;
    uint32_t seq_thread;
    bool has_sequence;
    bool is_backward;
    /* The source stack the op was called from (nnprof.torch's with_stack: Python frames
     * as torch.profiler names them, "file.py(12): forward"), innermost frame first,
     * frames separated by '\n'. 0 = not recorded. */
    nnp_str_t stack;
} nnp_op_t;

/* Records an op that ran from start_ticks (nnp_now()) until now. */
NNP_API void nnp_op_since(const nnp_op_t *op, uint64_t start_ticks);
NNP_API void nnp_op_at(const nnp_op_t *op, uint64_t start_ns, uint64_t end_ns);

/* -- Device kernels / tasks -- */
typedef struct nnp_kernel {
    nnp_str_t name;
    nnp_str_t type; /* task type, e.g. "KERNEL", "MEMCPY" */
    uint32_t device_id;
    uint32_t stream_id;
    uint64_t correlation_id; /* the launching op's correlation_id */
    /* The host call that queued it: the launch_id of that nnp_call_t (CUDA: CUPTI's
     * correlation id of the runtime or driver call), so exports link the two as Kineto's
     * "correlation" and its "ac2g" flows do. 0 = unknown. Added after version 0.1's
     * layout: callers that zero the struct ({0}, memset) are unaffected. */
    uint64_t launch_id;
} nnp_kernel_t;

NNP_API void nnp_kernel_since(const nnp_kernel_t *k, uint64_t start_ticks);
NNP_API void nnp_kernel_at(const nnp_kernel_t *k, uint64_t start_ns, uint64_t end_ns);

/* -- Steps, epochs, fp/bp points -- */
NNP_API void nnp_step_begin(uint64_t step_id, uint32_t graph_id);
NNP_API void nnp_step_end(uint64_t step_id, uint32_t graph_id);
NNP_API void nnp_step_begin_at(uint64_t step_id, uint32_t graph_id, uint64_t ts_ns);
NNP_API void nnp_step_end_at(uint64_t step_id, uint32_t graph_id, uint64_t ts_ns);
NNP_API void nnp_epoch_begin(uint64_t epoch_id);
NNP_API void nnp_epoch_end(uint64_t epoch_id);
NNP_API void nnp_epoch_begin_at(uint64_t epoch_id, uint64_t ts_ns);
NNP_API void nnp_epoch_end_at(uint64_t epoch_id, uint64_t ts_ns);
NNP_API void nnp_fp_start(uint64_t step_id);
NNP_API void nnp_bp_end(uint64_t step_id);
NNP_API void nnp_fp_start_at(uint64_t step_id, uint64_t ts_ns);
NNP_API void nnp_bp_end_at(uint64_t step_id, uint64_t ts_ns);

/* -- Tensor memory -- */
typedef struct nnp_tensor {
    uint64_t address;
    uint64_t size_bytes;
    nnp_str_t name;     /* tensor name, 0 if unknown */
    nnp_str_t owner_op; /* full name of the op that allocated it, 0 if unknown */
    uint32_t device_id;
} nnp_tensor_t;

NNP_API void nnp_mem_alloc(const nnp_tensor_t *t);
NNP_API void nnp_mem_free(uint64_t address, uint64_t size_bytes);
NNP_API void nnp_mem_alloc_at(const nnp_tensor_t *t, uint64_t ts_ns);
NNP_API void nnp_mem_free_at(uint64_t address, uint64_t size_bytes, uint64_t ts_ns);

/* -- Communication -- */
#define NNP_COMM_KIND_MAP(XX)                                                                      \
    XX(OTHER, "other")                                                                             \
    XX(ALLREDUCE, "allreduce")                                                                     \
    XX(ALLGATHER, "allgather")                                                                     \
    XX(REDUCESCATTER, "reducescatter")                                                             \
    XX(BROADCAST, "broadcast")                                                                     \
    XX(REDUCE, "reduce")                                                                           \
    XX(ALLTOALL, "alltoall")                                                                       \
    XX(SEND, "send")                                                                               \
    XX(RECV, "recv")                                                                               \
    XX(BARRIER, "barrier")                                                                         \
    XX(GATHER, "gather")                                                                           \
    XX(SCATTER, "scatter")

typedef enum nnp_comm_kind {
#define NNP_COMM_ENUM_(name, text) NNP_COMM_##name,
    NNP_COMM_KIND_MAP(NNP_COMM_ENUM_)
#undef NNP_COMM_ENUM_
        NNP_COMM_KIND_COUNT
} nnp_comm_kind_t;

/* Returns the lower-case name of a kind ("allreduce"), or "other" when out of range. */
NNP_API const char *nnp_comm_kind_name(nnp_comm_kind_t kind);

/* One communication operation. Zero-initialise it ({0}) and set what you know: the detail
 * fields after stream_id (count, datatype, tag, wait) are recorded only when set, so code
 * written before they existed records what it always did. */
typedef struct nnp_comm {
    nnp_str_t name; /* op name, e.g. "hcom_allReduce_1" */
    nnp_comm_kind_t kind;
    nnp_str_t group; /* communicator group, e.g. "world" (describe it: nnp_comm_group) */
    uint64_t size_bytes;
    int32_t peer; /* peer rank (send/recv) or root (broadcast/reduce); -1 none */
    uint32_t stream_id;
    /* -- details (since 0.2, raw format 2) -- */
    uint64_t count;     /* elements, 0 = not recorded */
    nnp_str_t datatype; /* element type, e.g. "MPI_FLOAT" or "float32", 0 = not recorded */
    int32_t tag;        /* message tag (point-to-point), when has_tag */
    bool has_tag;
    bool has_wait;
    uint64_t wait_ns; /* the part of the op spent blocked before data moved (msprof's
                       * "Wait Time"), when has_wait; 0 <= wait_ns <= the op's duration */
    /* A collective's device kernel (nnp_comm_kernel_at): the launch_id of the host call
     * that queued it, as nnp_kernel_t.launch_id (CUDA: CUPTI's correlation id of the NCCL
     * kernel's launch). 0 = unknown or a host-side op. Added after version 0.2's layout:
     * callers that zero the struct ({0}, memset) are unaffected. */
    uint64_t launch_id;
} nnp_comm_t;

NNP_API void nnp_comm_since(const nnp_comm_t *c, uint64_t start_ticks);
NNP_API void nnp_comm_at(const nnp_comm_t *c, uint64_t start_ns, uint64_t end_ns);

/* -- GPU device activity (recorded by the CUDA back end, src/collect/cuda/, from CUPTI;
 * any back end measuring a device may use them). Times are CLOCK_MONOTONIC ns. -- */

/* Launch configuration and resources of a device kernel; 0 = unknown. */
typedef struct nnp_kernel_launch {
    uint32_t grid_x, grid_y, grid_z;    /* blocks in the grid */
    uint32_t block_x, block_y, block_z; /* threads in a block (at most 65535 each kept) */
    uint32_t registers_per_thread;      /* at most 65535 kept */
    uint32_t static_shared_bytes;       /* shared memory the kernel declares */
    uint32_t dynamic_shared_bytes;      /* shared memory given at launch */
} nnp_kernel_launch_t;

/* Direction of a device copy (CUPTI's CUpti_ActivityMemcpyKind, in its order) and
 * MEMSET for a device memory set. */
#define NNP_COPY_KIND_MAP(XX)                                                                      \
    XX(UNKNOWN, "unknown")                                                                         \
    XX(HTOD, "HtoD")                                                                               \
    XX(DTOH, "DtoH")                                                                               \
    XX(HTOA, "HtoA")                                                                               \
    XX(ATOH, "AtoH")                                                                               \
    XX(ATOA, "AtoA")                                                                               \
    XX(ATOD, "AtoD")                                                                               \
    XX(DTOA, "DtoA")                                                                               \
    XX(DTOD, "DtoD")                                                                               \
    XX(HTOH, "HtoH")                                                                               \
    XX(PTOP, "PtoP")                                                                               \
    XX(MEMSET, "Memset")

typedef enum nnp_copy_kind {
#define NNP_COPY_ENUM_(name, text) NNP_COPY_##name,
    NNP_COPY_KIND_MAP(NNP_COPY_ENUM_)
#undef NNP_COPY_ENUM_
        NNP_COPY_KIND_COUNT
} nnp_copy_kind_t;

/* Kind of memory at either end of a copy (CUPTI's CUpti_ActivityMemoryKind, in its
 * order): pageable host memory makes host-to-device copies synchronous and slow. */
#define NNP_MEMORY_KIND_MAP(XX)                                                                    \
    XX(UNKNOWN, "unknown")                                                                         \
    XX(PAGEABLE, "pageable")                                                                       \
    XX(PINNED, "pinned")                                                                           \
    XX(DEVICE, "device")                                                                           \
    XX(ARRAY, "array")                                                                             \
    XX(MANAGED, "managed")                                                                         \
    XX(DEVICE_STATIC, "device_static")                                                             \
    XX(MANAGED_STATIC, "managed_static")

typedef enum nnp_memory_kind {
#define NNP_MEMORY_ENUM_(name, text) NNP_MEMORY_##name,
    NNP_MEMORY_KIND_MAP(NNP_MEMORY_ENUM_)
#undef NNP_MEMORY_ENUM_
        NNP_MEMORY_KIND_COUNT
} nnp_memory_kind_t;

/* Names of the kinds above ("HtoD", "pageable"); "unknown" when out of range. */
NNP_API const char *nnp_copy_kind_name(nnp_copy_kind_t kind);
NNP_API const char *nnp_memory_kind_name(nnp_memory_kind_t kind);

/* A copy or memory set done by a device. */
typedef struct nnp_copy {
    uint64_t size_bytes;
    nnp_copy_kind_t kind;
    nnp_memory_kind_t src_kind; /* UNKNOWN for a memory set */
    nnp_memory_kind_t dst_kind;
    uint32_t src_device, dst_device; /* device ids at both ends (peer copies) */
    uint32_t value;                  /* memory set: the value written */
} nnp_copy_t;

/* A kernel with its launch configuration (l may be NULL: same as nnp_kernel_at). */
NNP_API void nnp_kernel_launch_at(const nnp_kernel_t *k, const nnp_kernel_launch_t *l,
                                  uint64_t start_ns, uint64_t end_ns);
/* A device copy or memory set; k names it (name "MemcpyHtoD", type "cuMemcpy", stream,
 * device, correlation id), c says what moved. */
NNP_API void nnp_copy_at(const nnp_kernel_t *k, const nnp_copy_t *c, uint64_t start_ns,
                         uint64_t end_ns);
/* A communication kernel a device ran (NCCL). Unlike nnp_comm_at(), which the
 * profile_communication option gates like HCCL data on Ascend, it is device activity and
 * is recorded whenever op_time is on, as MindSpore's GPU profiler records NCCL kernels. */
NNP_API void nnp_comm_kernel_at(const nnp_comm_t *c, uint64_t start_ns, uint64_t end_ns);

/* A host-side call measured by a back end, on the thread that made it: a CUDA runtime or
 * driver API call (its correlation id is the one of the device work it launched, which
 * gives the launch delay), a blocking synchronization, or an NVTX range (read back as a
 * host range: module = domain, or "NVTX"; event = name). */
#define NNP_CALL_KIND_MAP(XX)                                                                      \
    XX(OTHER, "other")                                                                             \
    XX(CUDA_RUNTIME, "cuda_runtime")                                                               \
    XX(CUDA_DRIVER, "cuda_driver")                                                                 \
    XX(SYNC, "synchronization")                                                                    \
    XX(NVTX, "nvtx")

typedef enum nnp_call_kind {
#define NNP_CALL_ENUM_(name, text) NNP_CALL_##name,
    NNP_CALL_KIND_MAP(NNP_CALL_ENUM_)
#undef NNP_CALL_ENUM_
        NNP_CALL_KIND_COUNT
} nnp_call_kind_t;

/* Name of a call kind ("cuda_runtime"), or "other" when out of range. */
NNP_API const char *nnp_call_kind_name(nnp_call_kind_t kind);

typedef struct nnp_call {
    nnp_str_t name; /* "cudaLaunchKernel", "cudaStreamSynchronize", an NVTX message */
    nnp_call_kind_t kind;
    nnp_str_t domain;        /* NVTX domain, 0 = none */
    uint64_t correlation_id; /* device work launched by the call (kernel correlation id) */
    uint64_t thread_id;      /* OS thread id of the caller; 0 = the recording thread */
    uint32_t stream_id;      /* synchronization: the stream waited for, else 0 */
    int32_t status;          /* the call's return code, 0 = success */
    uint64_t launch_id;      /* the id the device work it queues carries in
                              * nnp_kernel_t.launch_id (CUDA: CUPTI's correlation id, given
                              * to every runtime and driver call as Kineto gives each its
                              * "correlation"; a synchronization has the id of the call
                              * that waited); 0 = none (NVTX, calls of other sources) */
} nnp_call_t;

/* Records a call. CUDA calls and synchronizations are gated by op_time, NVTX ranges like
 * every host range (profile_framework). */
NNP_API void nnp_call_at(const nnp_call_t *c, uint64_t start_ns, uint64_t end_ns);

/* Links the device work the calling thread launches from now on to a host op: kernels
 * launched between push and the matching pop carry correlation_id (which the op records
 * in nnp_op_t.correlation_id), so op statistics hold the device time of each op. Pairs
 * nest. Forwarded to the back end that measures the device (CUPTI external correlation);
 * without one they cost one atomic load. Hot-path safe: no lock, no allocation. */
NNP_API void nnp_correlation_push(uint64_t correlation_id);
NNP_API void nnp_correlation_pop(void);
/* Describes a communicator group: `group` (the string id used in nnp_comm_t.group) has the
 * n_ranks members ranks[] (global ranks, in the group's rank order), and this process is
 * member my_index (-1: unknown). Groups are named and matched across ranks by these
 * members, as HCCL and NCCL groups are. Call it once per group and collection window,
 * before or after the group's ops; repeats are harmless. Not for hot paths: it formats the
 * member list and interns it (a lock and an allocation). A no-op outside a collection
 * window or without profile_communication. n_ranks above NNP_COMM_GROUP_MAX_RANKS records
 * the size with an empty member list. */
#define NNP_COMM_GROUP_MAX_RANKS 65536
NNP_API void nnp_comm_group(nnp_str_t group, const int32_t *ranks, uint32_t n_ranks,
                            int32_t my_index);

/* -- Data pipeline -- */
typedef struct nnp_pipeline_op {
    int64_t op_id;
    nnp_str_t op_type; /* e.g. "GeneratorOp", "MapOp", "BatchOp", "DeviceQueueOp" */
    uint32_t num_workers;
    int64_t parent_id; /* -1 for the root */
} nnp_pipeline_op_t;

/* Registers a pipeline op (once per op, any time during the run). */
NNP_API void nnp_pipeline_op(const nnp_pipeline_op_t *op);
/* Output connector (queue) of op_id: current size and capacity. */
NNP_API void nnp_queue_sample(int64_t op_id, uint32_t size, uint32_t capacity);
/* Device (host-to-device) queue: size and capacity at the moment a batch is fetched. */
NNP_API void nnp_device_queue_sample(uint32_t size, uint32_t capacity);
NNP_API void nnp_queue_sample_at(int64_t op_id, uint32_t size, uint32_t capacity, uint64_t ts_ns);
NNP_API void nnp_device_queue_sample_at(uint32_t size, uint32_t capacity, uint64_t ts_ns);

/* -- User markers (msproftx analog; recorded only when the msproftx option is on) -- */
NNP_API void nnp_mark(nnp_str_t message);
/* Starts a marker range that may be stopped on any thread; returns its id (0 if off). */
NNP_API uint64_t nnp_mark_range_start(nnp_str_t message);
NNP_API void nnp_mark_range_stop(uint64_t range_id);
NNP_API void nnp_mark_at(nnp_str_t message, uint64_t ts_ns);

/* -- Counters -- */
NNP_API void nnp_counter(nnp_str_t name, double value);
NNP_API void nnp_counter_at(nnp_str_t name, double value, uint64_t ts_ns);

/* ---------------------------------------------------------------------------------------
 * Collector back ends (MPI through PMPI, CUDA through CUPTI, framework shims). A back end is
 * usually its own shared object that records through the calls above; it registers here to
 * learn when collection windows open and close, so it can enable its source and drain what
 * it buffered (device activity arrives after the fact) before the window's data is flushed.
 * ------------------------------------------------------------------------------------- */

/* One back end. The struct and its name must stay valid until nnp_collector_unregister().
 * Every hook may be NULL. Hooks run on the thread that calls nnp_session_start/stop/destroy,
 * never concurrently with each other, and never on a hot path. */
typedef struct nnp_collector {
    const char *name; /* short name for logs and info.json: "mpi", "cuda", "torch" */
    void *user;       /* passed back to every hook */
    /* A window opened: recording is already enabled. Return NNP_OK or an NNP_E* code (the
     * window stays open; the failure is logged with nnp_last_error()). */
    int (*window_start)(void *user);
    /* A window is closing: recording is still enabled, so events buffered by the source
     * (with their own timestamps, through the *_at calls) can be recorded now. */
    void (*window_stop)(void *user);
    /* The session is being destroyed (after the last window_stop). */
    void (*session_end)(void *user);
} nnp_collector_t;

/* Registers a back end (at most 16). If a window is open, its window_start runs at once.
 * Thread-safe. Returns NNP_OK, NNP_EINVAL (NULL or already registered) or NNP_ENOMEM
 * (registry full). */
NNP_API int nnp_collector_register(const nnp_collector_t *c);
/* Removes a back end registered before; unknown pointers are ignored. Thread-safe. */
NNP_API void nnp_collector_unregister(const nnp_collector_t *c);

/* Where nnp_correlation_push/pop go: the back end that measures a device installs its own
 * (the struct must stay valid until replaced); NULL removes them. At most one set is
 * active; the last call wins. push and pop run on the application's threads, on its hot
 * path: they must not lock or allocate. Thread-safe. */
typedef struct nnp_correlation_hooks {
    void (*push)(uint64_t correlation_id, void *user);
    void (*pop)(void *user);
    void *user;
} nnp_correlation_hooks_t;

NNP_API void nnp_collector_set_correlation(const nnp_correlation_hooks_t *h);

/* Copies the options of this process's session (created in code or from the environment)
 * into *out, so a back end can enable only what they ask for (op_time, profile_memory, ...).
 * Meant for the hooks above. Returns NNP_OK, NNP_EINVAL (out is NULL) or NNP_ESTATE when
 * no session exists. */
NNP_API int nnp_collect_options(nnp_options_t *out);

/* ---------------------------------------------------------------------------------------
 * Clock alignment across processes. A back end that exchanges messages with the other ranks
 * (the MPI one) measures how this process's CLOCK_MONOTONIC relates to a reference rank's
 * and reports it here; info.json keeps the last report under "clock_sync" (docs/FORMAT.md)
 * for the cluster analysis. Without a report info.json says method "none", offset 0.
 * ------------------------------------------------------------------------------------- */

/* Longest method and note kept (terminator included); longer ones are cut. */
#define NNP_CLOCK_SYNC_METHOD_MAX 32
#define NNP_CLOCK_SYNC_NOTE_MAX   256

typedef struct nnp_clock_sync {
    const char *method;     /* e.g. "mpi_pingpong" (copied) */
    int reference_rank;     /* the rank whose clock is the reference */
    int64_t offset_ns;      /* add to this process's CLOCK_MONOTONIC ns to get the reference
                             * rank's */
    int64_t uncertainty_ns; /* the true offset lies within offset_ns +- uncertainty_ns */
    bool has_drift;         /* measured again later: drift_ns is valid */
    int64_t drift_ns;       /* the later offset minus the first one */
    const char *note;       /* how it was measured, may be NULL (copied) */
} nnp_clock_sync_t;

/* Records the clock alignment of this process (replacing an earlier report) and, when a
 * session exists, rewrites its info.json at once so a run that crashes later keeps it.
 * Call it from the thread that creates and stops the session, never concurrently with
 * session calls. Returns NNP_OK, NNP_EINVAL (NULL cs or method), or the error of the
 * info.json rewrite. */
NNP_API int nnp_clock_sync_set(const nnp_clock_sync_t *cs);

/* ---------------------------------------------------------------------------------------
 * Instrumentation macros. With NNP_ENABLE defined they call the functions above; without
 * it they compile to nothing (arguments are not evaluated), so instrumented code can ship
 * in builds that must not depend on the library (Tracy, minitrace).
 * ------------------------------------------------------------------------------------- */
#ifdef NNP_ENABLE
#define NNP_NOW()                     nnp_now()
#define NNP_RANGE_BEGIN(tag)          nnp_range_begin(tag)
#define NNP_RANGE_END(tag)            nnp_range_end(tag)
#define NNP_OP_SINCE(op, start_ticks) nnp_op_since((op), (start_ticks))
#define NNP_STEP_BEGIN(step, graph)   nnp_step_begin((step), (graph))
#define NNP_STEP_END(step, graph)     nnp_step_end((step), (graph))
#define NNP_COUNTER(name, value)      nnp_counter((name), (value))
#else
#define NNP_NOW()                     ((uint64_t)0)
#define NNP_RANGE_BEGIN(tag)          ((void)0)
#define NNP_RANGE_END(tag)            ((void)0)
#define NNP_OP_SINCE(op, start_ticks) ((void)0)
#define NNP_STEP_BEGIN(step, graph)   ((void)0)
#define NNP_STEP_END(step, graph)     ((void)0)
#define NNP_COUNTER(name, value)      ((void)0)
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NNPROF_H */
