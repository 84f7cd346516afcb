/* test_util.h - helpers shared by the unit tests: temporary directories and capture of
 * the library's log lines (so tests can assert on the exact warnings). */
#ifndef NNP_TEST_UTIL_H
#define NNP_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cmocka.h>

#include "nnprof/nnprof.h"

/* Creates a fresh directory under $TMPDIR (or /tmp); returns a static-lifetime copy the
 * caller frees with free(). Fails the test on error. */
char *nnpt_mkdtemp(void);
/* Removes a directory tree (like rm -rf). */
void nnpt_rm_rf(const char *path);

/* Runs the program argv[0] (a path) with the environment plus env ("NAME=value" sets,
 * "NAME" alone unsets; NULL-terminated, may be NULL), and waits for it at most limit_s
 * seconds, then kills it and every process it started (it leads its own process group).
 * Returns its wait status, or -1 when it had to be killed (a hang) or could not start. */
int nnpt_spawn(const char *const argv[], const char *const env[], int limit_s);
/* Waits for pid at most limit_s seconds, then SIGKILLs it (its process group when it leads
 * one). Returns the wait status, or -1 when it had to be killed. */
int nnpt_wait_bounded(pid_t pid, int limit_s);
/* The PROF_* directories under out/profiler, sorted by name (full paths, malloc'ed; release
 * with nnpt_free_list). *n receives their number (0 when profiler/ does not exist). */
char **nnpt_raw_dirs(const char *out, int *n);
void nnpt_free_list(char **v, int n);
/* dir/name parsed as JSON, or NULL when missing or invalid (release with cJSON_Delete). */
struct cJSON *nnpt_load_json(const char *dir, const char *name);
/* nnp_op_table_ex of a raw directory as parsed JSON (cJSON_Delete it). Fails the test on
 * error. */
struct cJSON *nnpt_op_table(const char *raw, const nnp_analyse_options_t *o, unsigned flags);

/* The state of tests that read one recording: its temporary folder (dir, malloc'ed) and raw
 * directory. nnpt_raw_fx_teardown, a cmocka teardown, removes the folder and frees both. */
typedef struct nnpt_raw_fx {
    char *dir;
    char raw[NNP_PATH_MAX];
} nnpt_raw_fx_t;
int nnpt_raw_fx_teardown(void **state);
/* Starts the recording of a fixture: fx->dir a new temporary folder, o's output_path set to
 * it (the caller set o's other options), the session created into *s and its raw
 * directory copied to fx->raw. Returns nnp_session_create's code (no cmocka assert: it
 * runs in cmocka setups). */
int nnpt_raw_fx_session(nnpt_raw_fx_t *fx, nnp_options_t *o, nnp_session_t **s);
/* Writes text to dir/name (creating dir/name's missing parent folders is not done: dir
 * must exist); returns the path, malloc'ed. Fails the test on error. */
char *nnpt_write_file(const char *dir, const char *name, const char *text);
/* The whole file at path, NUL-terminated and malloc'ed; NULL when it cannot be read. */
char *nnpt_read_text(const char *path);
/* The file dir/name (nnpt_read_text), failing the test when it cannot be read. */
char *nnpt_read_in(const char *dir, const char *name);

/* Analyses in (a folder or file) into out as `nnprof analyse -o out in` does, one rank at a
 * time, quietly; returns nnp__analyse_path's code. */
int nnpt_analyse_to(const char *in, const char *out);

/* Starts capturing log lines at every level (the default sink is replaced). */
void nnpt_log_capture(void);
/* Everything captured since nnpt_log_capture(), one line per message, "LEVEL: msg\n". */
const char *nnpt_log_text(void);
/* Number of captured messages. */
int nnpt_log_count(void);
/* Stops capturing and restores the default sink and level. */
void nnpt_log_release(void);

/* ---- a recorded run: the one fixture tests share to make raw data ----
 * steps steps of ops_per_step "MatMul" ops ("Default/MatMul-op<j>", op_ns each, recorded
 * with ns timestamps so every figure is known exactly): step k spans
 * [NNPT_T0 + k * NNPT_STEP_NS, + NNPT_STEP_NS) and op j starts 1000 + 2000 j ns into it. */
#define NNPT_T0      1000000
#define NNPT_STEP_NS 10000
#define NNPT_OP_NS   1000

typedef struct nnpt_run {
    int rank;           /* rank_id and device_id */
    int rank_size;      /* 0: 1 */
    int steps;          /* 0: none */
    int ops_per_step;   /* 0: 3; < 0: none */
    uint64_t op_ns;     /* 0: NNPT_OP_NS */
    bool ranges;        /* per step: a "train_step" range [0, 9000) holding "forward"
                         * [1000, 4000) and "backward" [5000, 8000) (module "Python") */
    bool tensors;       /* per step: one 4096-byte tensor allocated at 500 and freed at 9500 */
    bool no_step_marks; /* the ops (and ranges, tensors) of each step, no step begin/end */
    int sample_ms;      /* CPU/memory sample interval; 0: none. With steps 0 and this,
                         * the run holds only samples (an uninstrumented program) */
    int flushed_fd;     /* > 0: after recording, flush, write one byte here and wait to be
                         * killed (a crash); 0: destroy the session */
    bool communication; /* profile_communication on (comm records are kept) */
    /* When set, called instead of the steps above to record what a test needs (a cluster
     * rank's steps, ops and communication with known times); arg is the test's. */
    void (*record)(const struct nnpt_run *r, void *arg);
    void *arg;
} nnpt_run_t;

/* Records r under out in this process (one session: call it in a child process when a
 * test needs several). Copies the raw directory's path to raw (cap bytes) when not NULL.
 * Exits the process with a non-zero status on error (it runs in children). */
void nnpt_record(const char *out, const nnpt_run_t *r, char *raw, size_t cap);
/* nnpt_record in a child process; fails the test unless it exits 0. */
void nnpt_record_in_child(const char *out, const nnpt_run_t *r, char *raw, size_t cap);

/* Runs a shell command; returns its exit status (-1 when killed) and, when out is not NULL,
 * its stdout and stderr together (cap bytes, NUL-terminated). */
int nnpt_run_cmd(const char *cmd, char *out, size_t cap);
/* Runs `nnprof <args>` (the CLI of this build) with NNPROF_LOG_LEVEL=warn; args is a
 * printf format (quote paths in it). stdout and stderr together go to out. Returns the
 * exit status. */
int nnpt_cli(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* True when the shared corpus (../shared/corpus beside the clone) is there; else prints a
 * SKIP line. */
bool nnpt_have_corpus(void);
/* Where the corpus is. */
#define NNPT_CORPUS NNP_SOURCE_DIR "/../shared/corpus"

/* Reads a whole file into a malloc'ed, NUL-terminated buffer; NULL when unreadable. */
char *nnpt_read_file(const char *path);

/* ---- model builders (grow these instead of copying them into each test) ---- */
struct nnp_model;
/* A step of graph 1 over [begin, end). */
void nnpt_add_step(struct nnp_model *m, uint64_t id, int64_t begin, int64_t end);
/* A host op; shapes/dtypes may be NULL (not recorded). Returns its row. */
size_t nnpt_add_op(struct nnp_model *m, int64_t start, int64_t end, const char *name,
                   const char *type, const char *shapes, const char *dtypes);
/* A thread of process pid (OS thread id tid); returns its index. */
uint32_t nnpt_add_thread(struct nnp_model *m, uint64_t tid, uint32_t pid);
/* A host row (kind NNP_HOST_ROW_*: a range's begin or end, an instant) of level 1 (user)
 * on thread index th. */
void nnpt_add_host_row(struct nnp_model *m, int64_t ts, uint8_t kind, const char *module,
                       const char *event, const char *stage, uint32_t th);
/* A user marker (a range; an instant when end == start) on thread index th. */
void nnpt_add_marker(struct nnp_model *m, int64_t start, int64_t end, const char *message,
                     uint32_t th);
/* A data-pipeline op registration. */
void nnpt_add_pipe_op(struct nnp_model *m, int64_t id, int64_t parent, const char *type,
                      uint32_t workers);
/* A CPU sample of an OS thread (cumulative utime and stime ticks); name may be NULL. */
void nnpt_add_task_cpu(struct nnp_model *m, int64_t ts, uint64_t tid, const char *name,
                       uint64_t utime, uint64_t stime);
/* A queue sample (op_id -1: the device queue). */
void nnpt_add_queue(struct nnp_model *m, int64_t ts, int64_t op_id, uint32_t size, uint32_t cap);
/* A host call of the CUDA back end (kind NNP_CALL_*) on thread index th, as the raw
 * importer gives it. */
void nnpt_add_call(struct nnp_model *m, int64_t start, int64_t end, const char *name, uint32_t kind,
                   uint32_t th);

/* ---- model checks ---- */
/* What a calls row should hold (model.h): every column but domain. */
typedef struct nnpt_call {
    const char *name;
    nnp_call_kind_t kind;
    int64_t start_ns, end_ns;
    uint64_t launch, corr; /* the links to kernels.launch and ops.corr */
    uint64_t tid;          /* OS thread id of the caller */
    uint32_t stream_id;
    int32_t status;
} nnpt_call_t;
/* Asserts that m has exactly the n calls rows want[0..n-1], in that order. */
void nnpt_check_calls(const struct nnp_model *m, const nnpt_call_t *want, size_t n);

#endif
