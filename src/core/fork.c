/* fork.c - what a forked child inherits (pthread_atfork, the LTTng-UST / Tracy discipline).
 * The child starts with no session and no writer: the parent's writer and sampler threads
 * do not exist in it, so its exit must not wait for them or touch the parent's files, and
 * the records the parent had not yet written stay the parent's. With follow_fork the child
 * opens its own session (own pid, own writer, own raw directory whose info.json names the
 * parent's run), whose windows then follow the parent's (follow.c). Locks are taken before
 * fork() in one order - session, collectors, strings, buffer registry - so the child finds
 * each consistent and can set it up afresh. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "collect/collector.h"
#include "core/session_internal.h"
#include "record/strtab.h"
#include "record/tbuf.h"
#include "util/util.h"

static pthread_once_t install_once = PTHREAD_ONCE_INIT;
/* Set by prepare for the child: the parent's pid (getppid() in the child may already name
 * init when the parent exits at once). */
static pid_t fork_parent_pid;
/* Sessions of an ancestor that a child still holds handles to (its own copy of them): kept
 * reachable until nnp_session_destroy() releases them, a no-op on the parent's files. */
static nnp_session_t *stale;

static void prepare(void)
{
    nnp__session_lock_all();
    nnp__collectors_fork_prepare();
    nnp__strtab_fork_prepare();
    nnp__tbuf_fork_prepare();
    fork_parent_pid = getpid();
}

static void parent(void)
{
    nnp__tbuf_fork_parent();
    nnp__strtab_fork_parent();
    nnp__collectors_fork_parent();
    nnp__session_unlock_all();
}

/* The base name of a path (the parent's raw directory, for the child's info.json). */
static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static void child(void)
{
    nnp_session_t *s, *mine = NULL;
    nnp_session_link_t link;
    nnp_options_t o;

    /* Nothing records until a session of this process opens a window. */
    atomic_store(&nnp__collecting, 0);
    atomic_store(&nnp__writer_wake_fd, -1);
    nnp__tbuf_fork_child();
    nnp__strtab_fork_child();
    nnp__collectors_fork_child();
    s = nnp__session_child_reset();
    if (!s)
        return;
    s->next_stale = stale;
    stale = s;
    /* nnprof's own helpers (the analysis workers) never follow. */
    if (!s->opts.follow_fork || nnp__in_helper_fork())
        return;
    memset(&link, 0, sizeof(link));
    link.parent_pid = fork_parent_pid;
    nnp__strlcpy(link.parent_raw_dir, base_name(s->raw_dir), sizeof(link.parent_raw_dir));
    link.kind = "fork";
    o = s->opts;
    o.start_profile = s->started; /* the child records if the parent was recording */
    /* Threads are started here, before fork() returns in the child: glibc allows it, and a
     * data-loader worker's first records must already have a writer. */
    if (nnp__session_create_owned(&o, s->from_env, true, &link, &mine) != NNP_OK) {
        NNP_LOG_W("follow_fork: child process %ld records nothing: %s", (long)getpid(),
                  nnp_last_error());
        return;
    }
    /* Later windows of the parent open and close the child's (follow.c). */
    if (nnp__follower_start(mine, s->follow_page, o.writer_period_ms, &mine->follower) != NNP_OK)
        NNP_LOG_W("follow_fork: child process %ld records only in the window open at its "
                  "fork: %s",
                  (long)getpid(), nnp_last_error());
}

static void install(void)
{
    if (pthread_atfork(prepare, parent, child) != 0)
        NNP_LOG_W("pthread_atfork failed: a forked child of this process may hang at exit");
}

void nnp__fork_install(void)
{
    pthread_once(&install_once, install);
}

/* At load time too: a child must find the string table's lock consistent even when the
 * parent never created a session. */
__attribute__((constructor)) static void install_at_load(void)
{
    nnp__fork_install();
}

bool nnp__session_is_foreign(const nnp_session_t *s)
{
    return s && s->pid != getpid();
}

void nnp__fork_release(nnp_session_t *s)
{
    for (nnp_session_t **pp = &stale; *pp; pp = &(*pp)->next_stale) {
        if (*pp == s) {
            *pp = s->next_stale;
            pthread_mutex_destroy(&s->lock);
            nnp__free(s->windows);
            nnp__free(s);
            return;
        }
    }
}
