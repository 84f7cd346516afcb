/* step_window.h - collection limited to a range of steps (`nnprof run --steps A-B`, the
 * environment variable NNPROF_STEPS). */
#ifndef NNP_STEP_WINDOW_H
#define NNP_STEP_WINDOW_H

#include <stdint.h>

#include "nnprof/nnprof.h"

/* Parses "A-B" (A <= B) or "N" into *first and *last. Returns NNP_OK or NNP_EINVAL. */
int nnp__step_window_parse(const char *text, uint64_t *first, uint64_t *last);

/* Makes s collect steps first..last only: the window opens at the begin of the first step
 * in the range and closes after the end of a step >= last (once). s must have been created
 * with its window closed and must outlive the arming (the environment's session does). */
void nnp__step_window_arm(nnp_session_t *s, uint64_t first, uint64_t last);

#endif /* NNP_STEP_WINDOW_H */
