/* clock_sync.c - keeps the clock alignment of this process as a back end measured it
 * (nnp_clock_sync_set: the MPI library's ping-pong with rank 0) and writes it into
 * info.json as "clock_sync" (CONTRACTS 3, docs/FORMAT.md). Process-wide, not per session:
 * MPI_Init may run before a session is created from code, and the report must still reach
 * that session's info.json. A mutex guards the copy; it is touched twice per run. */
#include <pthread.h>
#include <string.h>

#include "core/clock_sync.h"
#include "nnprof/nnprof.h"
#include "util/util.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static bool g_is_set;
static nnp_clock_sync_t g_sync;
static char g_method[NNP_CLOCK_SYNC_METHOD_MAX];
static char g_note[NNP_CLOCK_SYNC_NOTE_MAX];

int nnp_clock_sync_set(const nnp_clock_sync_t *cs)
{
    if (!cs || !cs->method || !cs->method[0])
        return nnp__fail(NNP_EINVAL, "nnp_clock_sync_set: a method is required");
    pthread_mutex_lock(&g_lock);
    g_sync = *cs;
    nnp__strlcpy(g_method, cs->method, sizeof(g_method));
    nnp__strlcpy(g_note, cs->note ? cs->note : "", sizeof(g_note));
    g_is_set = true;
    pthread_mutex_unlock(&g_lock);
    return nnp__session_info_refresh();
}

void nnp__clock_sync_write(nnp_jw_t *w)
{
    pthread_mutex_lock(&g_lock);
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "method");
    nnp__jw_str(w, g_is_set ? g_method : "none");
    nnp__jw_key(w, "reference_rank");
    nnp__jw_int(w, g_is_set ? g_sync.reference_rank : 0);
    nnp__jw_key(w, "offset_ns");
    nnp__jw_int(w, g_is_set ? g_sync.offset_ns : 0);
    nnp__jw_key(w, "uncertainty_ns");
    nnp__jw_int(w, g_is_set ? g_sync.uncertainty_ns : 0);
    nnp__jw_key(w, "drift_ns");
    if (g_is_set && g_sync.has_drift)
        nnp__jw_int(w, g_sync.drift_ns);
    else
        nnp__jw_null(w);
    nnp__jw_key(w, "note");
    nnp__jw_str(w, g_is_set ? g_note
                            : "not measured: no MPI communicator (single process, or the "
                              "program does not use MPI); this rank's clock is taken as is");
    nnp__jw_obj_end(w);
    pthread_mutex_unlock(&g_lock);
}
