/* ticker.h - a thread that calls one function once a period, for the library's periodic
 * work (the sampler, a followed child's window): started, kicked and stopped by its owner,
 * deaf to the host's signals. */
#ifndef NNP_TICKER_H
#define NNP_TICKER_H

typedef struct nnp_ticker nnp_ticker_t;
typedef void (*nnp_tick_fn)(void *arg);

/* Starts the thread, named name (15 characters at most, seen in top and perf): fn(arg) at
 * once, then once every period_ms (>= 1). fn runs without the ticker's lock. */
int nnp__ticker_start(const char *name, int period_ms, nnp_tick_fn fn, void *arg,
                      nnp_ticker_t **out);
/* fn now rather than at the end of the period, which restarts from then. NULL: no-op. */
void nnp__ticker_kick(nnp_ticker_t *t);
/* Stops and joins the thread (after the fn call in progress) and frees t. NULL: no-op. */
void nnp__ticker_stop(nnp_ticker_t *t);
/* In a forked child: frees the child's copy of a ticker whose thread stayed in the parent
 * (never joins or locks). NULL is a no-op. */
void nnp__ticker_forget(nnp_ticker_t *t);

#endif /* NNP_TICKER_H */
