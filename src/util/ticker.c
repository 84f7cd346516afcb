/* ticker.c - see ticker.h. The period is kept on CLOCK_MONOTONIC deadlines, so a slow fn
 * does not make the calls drift, and a kick restarts it. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "nnprof/nnprof.h"
#include "util/ticker.h"
#include "util/util.h"

#define MS_PER_SEC  1000
#define NS_PER_MS   1000000L
#define NS_PER_SEC  1000000000L
#define NAME_MAX_CH 16 /* pthread_setname_np's limit, with the terminator */

struct nnp_ticker {
    pthread_t thread;
    int period_ms;
    nnp_tick_fn fn;
    void *arg;
    char name[NAME_MAX_CH];
    pthread_mutex_t lock; /* guards stop and kick */
    pthread_cond_t cond;  /* signalled when either is set */
    bool stop;
    bool kick;
};

static void *ticker_main(void *arg)
{
    nnp_ticker_t *t = arg;
    struct timespec deadline;

    pthread_setname_np(pthread_self(), t->name);
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    pthread_mutex_lock(&t->lock);
    while (!t->stop) {
        pthread_mutex_unlock(&t->lock);
        t->fn(t->arg);
        pthread_mutex_lock(&t->lock);
        if (t->kick) {
            clock_gettime(CLOCK_MONOTONIC, &deadline);
            t->kick = false;
        }
        deadline.tv_sec += t->period_ms / MS_PER_SEC;
        deadline.tv_nsec += (long)(t->period_ms % MS_PER_SEC) * NS_PER_MS;
        if (deadline.tv_nsec >= NS_PER_SEC) {
            deadline.tv_sec++;
            deadline.tv_nsec -= NS_PER_SEC;
        }
        while (!t->stop && !t->kick &&
               pthread_cond_timedwait(&t->cond, &t->lock, &deadline) != ETIMEDOUT)
            ;
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

int nnp__ticker_start(const char *name, int period_ms, nnp_tick_fn fn, void *arg,
                      nnp_ticker_t **out)
{
    nnp_ticker_t *t = nnp__calloc(1, sizeof(*t));
    pthread_condattr_t ca;
    sigset_t all, old;
    int rc;

    *out = NULL;
    if (!t)
        return nnp__fail(NNP_ENOMEM, "out of memory starting the %s thread", name);
    t->period_ms = period_ms > 0 ? period_ms : 1;
    t->fn = fn;
    t->arg = arg;
    nnp__strlcpy(t->name, name, sizeof(t->name));
    pthread_mutex_init(&t->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&t->cond, &ca);
    pthread_condattr_destroy(&ca);
    /* The host's SIGINT/SIGTERM handlers flush through the writer: never run them here. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&t->thread, NULL, ticker_main, t);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        pthread_mutex_destroy(&t->lock);
        pthread_cond_destroy(&t->cond);
        nnp__free(t);
        return nnp__fail(NNP_ENOMEM, "cannot start the %s thread: %s", name, strerror(rc));
    }
    *out = t;
    return NNP_OK;
}

/* Sets the flag (stop or kick) and wakes the thread. */
static void signal_flag(nnp_ticker_t *t, bool *flag)
{
    pthread_mutex_lock(&t->lock);
    *flag = true;
    pthread_cond_signal(&t->cond);
    pthread_mutex_unlock(&t->lock);
}

void nnp__ticker_kick(nnp_ticker_t *t)
{
    if (t)
        signal_flag(t, &t->kick);
}

void nnp__ticker_stop(nnp_ticker_t *t)
{
    if (!t)
        return;
    signal_flag(t, &t->stop);
    pthread_join(t->thread, NULL);
    pthread_mutex_destroy(&t->lock);
    pthread_cond_destroy(&t->cond);
    nnp__free(t);
}

void nnp__ticker_forget(nnp_ticker_t *t)
{
    nnp__free(t);
}
