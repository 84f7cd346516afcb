/* clock_sync.h - the clock alignment a back end reported (nnp_clock_sync_set), kept for
 * info.json. session.c writes it; clock_sync.c owns it. */
#ifndef NNP_CLOCK_SYNC_H
#define NNP_CLOCK_SYNC_H

#include "util/json_writer.h"

/* Writes the "clock_sync" object's value (docs/FORMAT.md): the last report, or method
 * "none" with offset 0 and a note when nothing was reported. Thread-safe. */
void nnp__clock_sync_write(nnp_jw_t *w);

/* Rewrites the current session's info.json with its last state (session.c); NNP_OK when
 * there is no session. */
int nnp__session_info_refresh(void);

#endif /* NNP_CLOCK_SYNC_H */
