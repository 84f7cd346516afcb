/* session_internal.h - the session object shared by the files of the session: session.c
 * (lifecycle), raw_dir.c (where the raw directory goes and its lazy creation), info_json.c
 * (info.json), fork.c (what a forked child inherits) and follow.c (a child's windows
 * following its parent's). Locking: life_lock (session.c)
 * serialises create/start/stop/destroy and fork(); s->lock guards the window list and
 * info.json writes, which the writer thread also makes when it creates the directory. */
#ifndef NNP_SESSION_INTERNAL_H
#define NNP_SESSION_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/sampler.h"
#include "core/session.h"
#include "record/writer.h"

#define NNP_HOST_NAME_CAP 256
/* A raw directory's base name: PROF_ + 17 digits + _host + _pid + a suffix. */
#define NNP_RAW_NAME_CAP (NNP_HOST_NAME_CAP + 64)

typedef struct nnp_follow_page nnp_follow_page_t;
typedef struct nnp_follower nnp_follower_t;

typedef struct nnp_window {
    uint64_t start_wall_ns, start_mono_ns;
    uint64_t stop_wall_ns, stop_mono_ns;
} nnp_window_rec_t;

struct nnp_session {
    nnp_options_t opts;
    char profiler_dir[NNP_PATH_MAX]; /* absolute: a later chdir() does not move it */
    char raw_dir[NNP_PATH_MAX];      /* absolute, named at create, made on the first write */
    char host[NNP_HOST_NAME_CAP];
    pid_t pid; /* the process that created it; in a forked child it is another's */
    nnp_writer_t *writer;
    nnp_sampler_t *sampler;
    bool from_env;
    bool quiet;              /* a forked child's copy: the parent already said every warning */
    int gates;               /* NNP_GATE_* bits of the options, published when a window opens */
    nnp_session_link_t link; /* the parent run, for a child's info.json */
    uint64_t create_wall_ns, create_mono_ns;
    nnp_follow_page_t *follow_page; /* shared with the children it forks (follow_fork), owned */
    nnp_follower_t *follower;       /* a child's thread following its parent's page, owned */

    pthread_mutex_t lock; /* guards the fields below */
    bool started;
    nnp_window_rec_t *windows;
    uint32_t n_windows, windows_cap;
    uint64_t windows_total;
    bool dir_made;     /* the raw directory exists (made by the writer thread) */
    const char *state; /* the state info.json was last written with (a literal), or NULL */

    struct nnp_session *next_stale; /* fork.c: a parent's sessions a child still holds */
};

/* ---- raw_dir.c ---- */

/* Fills s->profiler_dir and s->raw_dir (absolute, unique in this process) and checks, without
 * creating anything, that the directory can be made: the path names the cause otherwise.
 * Warns about old data in an existing profiler directory unless s->quiet. */
int nnp__raw_dir_plan(nnp_session_t *s);
/* Free bytes on the file system that will hold s->profiler_dir (its deepest existing
 * ancestor); 0 when unknown. */
uint64_t nnp__raw_dir_free_bytes(const nnp_session_t *s);
/* The writer's open_dir callback: makes <output>/profiler (0700) and the raw directory
 * (0700), removing what it made if a later step fails, then writes info.json. */
int nnp__raw_dir_make(void *session, const nnp_writer_t *w);

/* ---- info_json.c ---- */

/* Rewrites <raw_dir>/info.json (state: "created", "stopped" or "finalized"). Caller holds
 * s->lock. The text is built in memory and written atomically; when the disk is full it is
 * written over the old file in place (no new block needed) and retried a few times. On
 * failure errno is the failed write's (ENOSPC for a full disk) or 0. */
int nnp__info_write(nnp_session_t *s, const char *state, const nnp_writer_t *w);

/* ---- session.c ---- */

/* Locks taken around fork() (fork.c), in this order, so the child finds them consistent. */
void nnp__session_lock_all(void);
void nnp__session_unlock_all(void);
/* The current session (NULL if none) and whether the library owns it. Only under
 * nnp__session_lock_all(). */
nnp_session_t *nnp__session_get(void);
/* In a forked child, under the locks: forgets the parent's session (its writer and sampler
 * live in the parent) and releases the locks. Returns that session (NULL if none) for
 * fork.c to keep or replace. */
nnp_session_t *nnp__session_child_reset(void);
/* Creates a session owned by the library (environment, follow_fork, follow_children). */
int nnp__session_create_owned(const nnp_options_t *o, bool from_env, bool quiet,
                              const nnp_session_link_t *link, nnp_session_t **out);

/* Opens (open) or closes the window of s, a forked child's session, to match its parent's;
 * nothing when it already matches, or when life_lock is taken (the next period tries
 * again: session destroy holds it while it stops the follower). session.c. */
void nnp__session_follow(nnp_session_t *s, bool open);

/* ---- follow.c ---- */

/* A page to share with the children a session forks; NULL (logged) when none can be
 * mapped: children then record only while the window open at their fork lasts. */
nnp_follow_page_t *nnp__follow_page_new(void);
/* Says on the page whether the owner's window is open. NULL is a no-op. */
void nnp__follow_page_set(nnp_follow_page_t *page, bool open);
/* Unmaps the owner's page (children keep their copies). NULL is a no-op. */
void nnp__follow_page_free(nnp_follow_page_t *page);
/* Starts child's thread that reads parent's page once every period_ms and makes child's
 * window follow it. parent NULL: nothing started, *out NULL. */
int nnp__follower_start(nnp_session_t *child, const nnp_follow_page_t *parent, int period_ms,
                        nnp_follower_t **out);
/* Stops and joins the thread and frees f. NULL is a no-op. */
void nnp__follower_stop(nnp_follower_t *f);

/* ---- fork.c ---- */

/* Installs the pthread_atfork handlers once (idempotent, thread-safe). */
void nnp__fork_install(void);
/* True for a session that belongs to another process (a forked child's copy). */
bool nnp__session_is_foreign(const nnp_session_t *s);
/* Releases a foreign session's child-side memory (fork.c keeps it reachable until then). */
void nnp__fork_release(nnp_session_t *s);

#endif /* NNP_SESSION_INTERNAL_H */
