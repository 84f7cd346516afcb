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
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "core/session_internal.h"
#include "util/ticker.h"
#include "util/util.h"

/* Seen in top, ps and perf (15 characters at most). */
#define FOLLOW_THREAD_NAME "nnprof-follow"

struct nnp_follow_page {
    _Atomic uint32_t open; /* 1 while the owner has a window open */
};

struct nnp_follower {
    nnp_session_t *session;        /* the child's own session */
    const nnp_follow_page_t *page; /* its parent's page */
    nnp_ticker_t *ticker;          /* reads the page once a period */
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

static void follow_tick(void *arg)
{
    nnp_follower_t *f = arg;
    nnp__session_follow(f->session,
                        atomic_load_explicit(&f->page->open, memory_order_acquire) != 0);
}

int nnp__follower_start(nnp_session_t *child, const nnp_follow_page_t *parent, int period_ms,
                        nnp_follower_t **out)
{
    nnp_follower_t *f;
    int rc;

    *out = NULL;
    if (!parent)
        return NNP_OK;
    f = nnp__calloc(1, sizeof(*f));
    if (!f)
        return nnp__fail(NNP_ENOMEM, "out of memory following the parent's windows");
    f->session = child;
    f->page = parent;
    rc = nnp__ticker_start(FOLLOW_THREAD_NAME, period_ms, follow_tick, f, &f->ticker);
    if (rc != NNP_OK) {
        nnp__free(f);
        return rc;
    }
    *out = f;
    return NNP_OK;
}

void nnp__follower_stop(nnp_follower_t *f)
{
    if (!f)
        return;
    nnp__ticker_stop(f->ticker);
    nnp__free(f);
}
