/* collector.h - the session's side of the collector back-end registry (collector.c): it
 * tells every registered back end (nnp_collector_t, public header) when a window opens or
 * closes and when the session ends. Called by core/session.c only. */
#ifndef NNP_COLLECTOR_H
#define NNP_COLLECTOR_H

#include <stddef.h>

/* Runs each back end's window_start; marks the window open for later registrations. */
void nnp__collectors_window_start(void);
/* Runs each back end's window_stop (recording must still be enabled). */
void nnp__collectors_window_stop(void);
/* Runs each back end's session_end. */
void nnp__collectors_session_end(void);
/* Writes the names of the registered back ends, at most cap of them; returns how many are
 * registered (may exceed cap). The names stay valid while their back ends are registered. */
size_t nnp__collectors_names(const char **names, size_t cap);

/* fork() support (core/fork.c): the registry's lock is held across fork(); in the child no
 * window is open (back ends stay registered). */
void nnp__collectors_fork_prepare(void);
void nnp__collectors_fork_parent(void);
void nnp__collectors_fork_child(void);

#endif /* NNP_COLLECTOR_H */
