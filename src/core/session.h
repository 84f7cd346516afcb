/* session.h - internal view of the session for the start-up code (autostart.c). */
#ifndef NNP_SESSION_H
#define NNP_SESSION_H

#include "nnprof/nnprof.h"

/* Like nnp_session_create(), for a session the environment asked for: PROFILING_MODE is
 * then the reason for the session, not a conflict. */
int nnp__session_create_from_env(const nnp_options_t *o, nnp_session_t **out);
/* Async-signal-safe: closes the window and flushes within timeout_ms (fatal signals). */
void nnp__session_emergency_flush(nnp_session_t *s, int timeout_ms);

/* Name of the file describing a raw directory. */
#define NNP_INFO_FILE "info.json"
/* Prefix of every raw directory a process writes under <output_path>/profiler. */
#define NNP_RAW_DIR_PREFIX "PROF_"

#endif /* NNP_SESSION_H */
