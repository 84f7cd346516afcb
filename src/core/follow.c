/* follow.c - a forked child's collection windows follow its parent's (follow_fork). A
 * session with follow_fork shares one page with the children it will fork (an anonymous
 * MAP_SHARED mapping, made at create, inherited by fork): the parent says there whether a
 * window is open. Each child that follows runs a thread that reads it once a writer period
 * and opens or closes the child's own window to match, so a DataLoader worker forked before
 * the window opens (a schedule's wait and warmup steps, persistent workers) records while
 * its parent does, and stops when it stops. Ownership: the page belongs to the session
 * that made it; a child never unmaps its parent's (its copy of the mapping lives as long as
 * the child). */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core/session_internal.h"
#include "util/util.h"

#define NS_PER_MS  1000000L
#define NS_PER_SEC 1000000000L

struct nnp_follow_page {
    _Atomic uint32_t open; /* 1 while the owner has a window open */
};

struct nnp_follower {
    nnp_session_t *session;        /* the child's own session */
    const nnp_follow_page_t *page; /* its parent's page */
    int period_ms;                 /* how often the page is read */
    pthread_t thread;
    pthread_mutex_t lock; /* guards stop */
    pthread_cond_t cond;  /* signalled when stop is set */
    bool stop;
};

nnp_follow_page_t *nnp__follow_page_new(void)
{
    void *p = mmap(NULL, sizeof(nnp_follow_page_t), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        NNP_LOG_W("follow_fork: no page shared with children (%s): a child records only "
                  "while the window open at its fork lasts",
                  strerror(errno));
        return NULL;
    }
    atomic_store(&((nnp_follow_page_t *)p)->open, 0);
    return p;
}

void nnp__follow_page_set(nnp_follow_page_t *page, bool open)
{
    if (page)
        atomic_store_explicit(&page->open, open ? 1u : 0u, memory_order_release);
}

void nnp__follow_page_free(nnp_follow_page_t *page)
{
    if (page)
        munmap(page, sizeof(*page));
}

/* The deadline one period from now on the condition variable's clock. */
static struct timespec deadline(int period_ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_nsec += (long)period_ms * NS_PER_MS;
    ts.tv_sec += ts.tv_nsec / NS_PER_SEC;
    ts.tv_nsec %= NS_PER_SEC;
    return ts;
}

static void *follow_main(void *arg)
{
    nnp_follower_t *f = arg;
    pthread_setname_np(pthread_self(), "nnprof-follow");
    pthread_mutex_lock(&f->lock);
    while (!f->stop) {
        struct timespec ts = deadline(f->period_ms);
        while (!f->stop && pthread_cond_timedwait(&f->cond, &f->lock, &ts) == 0)
            ;
        if (f->stop)
            break;
        pthread_mutex_unlock(&f->lock);
        nnp__session_follow(f->session,
                            atomic_load_explicit(&f->page->open, memory_order_acquire) != 0);
        pthread_mutex_lock(&f->lock);
    }
    pthread_mutex_unlock(&f->lock);
    return NULL;
}

int nnp__follower_start(nnp_session_t *child, const nnp_follow_page_t *parent, int period_ms,
                        nnp_follower_t **out)
{
    nnp_follower_t *f;
    pthread_condattr_t attr;
    sigset_t all, old;
    int rc;

    *out = NULL;
    if (!parent)
        return NNP_OK;
    f = nnp__calloc(1, sizeof(*f));
    if (!f)
        return nnp__fail(NNP_ENOMEM, "out of memory following the parent's windows");
    f->session = child;
    f->page = parent;
    f->period_ms = period_ms > 0 ? period_ms : 1;
    pthread_mutex_init(&f->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&f->cond, &attr);
    pthread_condattr_destroy(&attr);
    /* As the writer: the host's signals are never delivered to this thread. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&f->thread, NULL, follow_main, f);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        pthread_cond_destroy(&f->cond);
        pthread_mutex_destroy(&f->lock);
        nnp__free(f);
        return nnp__fail(NNP_ENOMEM, "cannot start the thread following the parent's windows: %s",
                         strerror(rc));
    }
    *out = f;
    return NNP_OK;
}

void nnp__follower_stop(nnp_follower_t *f)
{
    if (!f)
        return;
    pthread_mutex_lock(&f->lock);
    f->stop = true;
    pthread_cond_signal(&f->cond);
    pthread_mutex_unlock(&f->lock);
    pthread_join(f->thread, NULL);
    pthread_cond_destroy(&f->cond);
    pthread_mutex_destroy(&f->lock);
    nnp__free(f);
}
