/* collector.c - registry of collector back ends (nnp_collector_t): MPI, CUDA and framework
 * shims register at load time, the session calls their hooks when windows open and close.
 * A mutex guards the registry; hooks run under it, which serialises them (they are called
 * at window boundaries, never on a hot path). A back end registered while a window is open
 * gets its window_start at once, so load order does not matter. The correlation hooks
 * (nnp_correlation_push/pop) are one atomic pointer: the application calls them on its
 * hot path, so they take no lock; one watcher (the torch shim) is told when they appear
 * or go. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "collect/collector.h"
#include "nnprof/nnprof.h"
#include "record/ring_abi.h"
#include "util/util.h"

/* Enough for every back end nnprof ships (MPI, CUDA, torch) and a few of the user's. */
#define MAX_COLLECTORS 16

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static const nnp_collector_t *g_collectors[MAX_COLLECTORS];
static size_t g_count;
static bool g_window_open;

static void run_start(const nnp_collector_t *c)
{
    if (c->window_start && c->window_start(c->user) != NNP_OK)
        NNP_LOG_W("collector '%s' could not start: %s", c->name ? c->name : "?", nnp_last_error());
}

int nnp_collector_register(const nnp_collector_t *c)
{
    int rc = NNP_OK;
    if (!c)
        return nnp__fail(NNP_EINVAL, "nnp_collector_register: collector is NULL");
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < g_count; i++) {
        if (g_collectors[i] == c) {
            rc = nnp__fail(NNP_EINVAL, "collector '%s' is already registered",
                           c->name ? c->name : "?");
            goto out;
        }
    }
    if (g_count == MAX_COLLECTORS) {
        rc = nnp__fail(NNP_ENOMEM, "too many collectors (at most %d)", MAX_COLLECTORS);
        goto out;
    }
    g_collectors[g_count++] = c;
    if (g_window_open)
        run_start(c);
out:
    pthread_mutex_unlock(&g_lock);
    return rc;
}

void nnp_collector_unregister(const nnp_collector_t *c)
{
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < g_count; i++) {
        if (g_collectors[i] == c) {
            g_collectors[i] = g_collectors[--g_count];
            break;
        }
    }
    pthread_mutex_unlock(&g_lock);
}

void nnp__collectors_window_start(void)
{
    pthread_mutex_lock(&g_lock);
    g_window_open = true;
    for (size_t i = 0; i < g_count; i++)
        run_start(g_collectors[i]);
    pthread_mutex_unlock(&g_lock);
}

void nnp__collectors_window_stop(void)
{
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < g_count; i++) {
        if (g_collectors[i]->window_stop)
            g_collectors[i]->window_stop(g_collectors[i]->user);
    }
    g_window_open = false;
    pthread_mutex_unlock(&g_lock);
}

void nnp__collectors_session_end(void)
{
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < g_count; i++) {
        if (g_collectors[i]->session_end)
            g_collectors[i]->session_end(g_collectors[i]->user);
    }
    pthread_mutex_unlock(&g_lock);
}

size_t nnp__collectors_names(const char **names, size_t cap)
{
    size_t n;
    pthread_mutex_lock(&g_lock);
    n = g_count;
    for (size_t i = 0; i < g_count && i < cap; i++)
        names[i] = g_collectors[i]->name ? g_collectors[i]->name : "?";
    pthread_mutex_unlock(&g_lock);
    return n;
}

void nnp__collectors_fork_prepare(void)
{
    pthread_mutex_lock(&g_lock);
}

void nnp__collectors_fork_parent(void)
{
    pthread_mutex_unlock(&g_lock);
}

void nnp__collectors_fork_child(void)
{
    pthread_mutex_unlock(&g_lock); /* taken by this thread in the prepare handler */
    g_window_open = false;
}

/* ---- correlation hooks: the device back end links host ops to the work they launch ---- */

static _Atomic(const nnp_correlation_hooks_t *) g_corr;

typedef void (*corr_watch_fn)(void);
static _Atomic(corr_watch_fn) g_corr_watch;

void nnp_collector_set_correlation(const nnp_correlation_hooks_t *h)
{
    const nnp_correlation_hooks_t *old = atomic_exchange_explicit(&g_corr, h, memory_order_acq_rel);
    corr_watch_fn w = atomic_load_explicit(&g_corr_watch, memory_order_acquire);
    /* Only a change between none and some: a back end replacing its hooks changes no
     * path of the ops. */
    if (w && (old == NULL) != (h == NULL))
        w();
}

void nnp__correlation_watch(void (*changed)(void))
{
    atomic_store_explicit(&g_corr_watch, changed, memory_order_release);
}

bool nnp__correlation_active(void)
{
    return atomic_load_explicit(&g_corr, memory_order_acquire) != NULL;
}

void nnp_correlation_push(uint64_t correlation_id)
{
    const nnp_correlation_hooks_t *h = atomic_load_explicit(&g_corr, memory_order_acquire);
    if (NNP_UNLIKELY(h != NULL) && h->push)
        h->push(correlation_id, h->user);
}

void nnp_correlation_pop(void)
{
    const nnp_correlation_hooks_t *h = atomic_load_explicit(&g_corr, memory_order_acquire);
    if (NNP_UNLIKELY(h != NULL) && h->pop)
        h->pop(h->user);
}
