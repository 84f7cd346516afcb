/* session.h - internal view of the session for the start-up code (autostart.c) and the
 * child-process rules (CONTRACTS.md section 2): how a child's raw directory names its
 * parent's run. */
#ifndef NNP_SESSION_H
#define NNP_SESSION_H

#include <sys/types.h>

#include "nnprof/nnprof.h"

/* Name of the file describing a raw directory. */
#define NNP_INFO_FILE "info.json"
/* Prefix of every raw directory a process writes under <output_path>/profiler. */
#define NNP_RAW_DIR_PREFIX "PROF_"

/* Environment variables of the child-process rules. NNPROF_ROOT_PID: the pid of the first
 * process that autostarted (a process that finds another pid there is a descendant).
 * NNPROF_PARENT_PID / NNPROF_PARENT_RAW_DIR: the nearest ancestor with a session, and the
 * base name of its raw directory, for an exec'd child's info.json. */
#define NNP_ENV_ROOT_PID       "NNPROF_ROOT_PID"
#define NNP_ENV_PARENT_PID     "NNPROF_PARENT_PID"
#define NNP_ENV_PARENT_RAW_DIR "NNPROF_PARENT_RAW_DIR"
/* The ancestor's rank_id: an exec'd child whose own rank differs (a launcher's worker) is a
 * rank of its own, not a part of the ancestor's. */
#define NNP_ENV_PARENT_RANK "NNPROF_PARENT_RANK"

/* What a child's session records about its parent's run (info.json "parent_pid",
 * "parent_raw_dir", "child_kind"). kind NULL: not a child. */
typedef struct nnp_session_link {
    pid_t parent_pid;
    char parent_raw_dir[NNP_NAME_MAX]; /* base name; may name a directory never made */
    const char *kind;                  /* "fork" or "exec" (static strings) */
} nnp_session_link_t;

/* Like nnp_session_create(), for a session the environment asked for: PROFILING_MODE is
 * then the reason for the session, not a conflict. link (may be NULL) names the parent run
 * of an exec'd child. The library owns the session: nnp_session_current() returns it and
 * the exit hook destroys it. */
int nnp__session_create_from_env(const nnp_options_t *o, const nnp_session_link_t *link,
                                 nnp_session_t **out);
/* Async-signal-safe: closes the window and flushes within timeout_ms (fatal signals). */
void nnp__session_emergency_flush(nnp_session_t *s, int timeout_ms);
/* Destroys the session the library owns, if any (the exit hook). */
void nnp__session_destroy_owned(void);

#endif /* NNP_SESSION_H */
