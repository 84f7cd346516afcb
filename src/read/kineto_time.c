/* kineto_time.c - the time base of a PyTorch trace: "baseTimeNanoseconds" read exactly and
 * added to the rows one trace file made (kineto_time.h). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "nnprof/nnprof.h"
#include "read/kineto_time.h"
#include "util/checked.h"

/* Bases above 2^62 ns (year 148,000) are not a clock: refused. */
#define BASE_MAX 0x1p62

void nnp__kin_rows_mark(const nnp_model_t *m, nnp_kin_rows_t *first)
{
    first->ops = m->ops.t.n;
    first->steps = m->steps.t.n;
    first->markers = m->markers.t.n;
    first->calls = m->calls.t.n;
    first->kernels = m->kernels.t.n;
    first->comms = m->comms.t.n;
    first->mem = m->mem.t.n;
}

static bool all_digits(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return false;
    return true;
}

bool nnp__kin_base_parse(const cJSON *v, int64_t *out)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 ||
        v->valuedouble >= BASE_MAX || v->valuedouble != floor(v->valuedouble))
        return false;
    if (v->valuestring && all_digits(v->valuestring)) { /* the text: exact at 19 digits */
        long long x;
        errno = 0;
        x = strtoll(v->valuestring, NULL, 10);
        if (errno == 0) {
            *out = x;
            return true;
        }
    }
    *out = (int64_t)v->valuedouble;
    return true;
}

/* Whether every time in t[from, n) can take base (open ends stay open). */
static bool fits(const int64_t *t, size_t from, size_t n, int64_t base)
{
    int64_t r;
    for (size_t i = from; i < n; i++)
        if (t[i] != NNP_OPEN_END && !nnp__i64_add(t[i], base, &r))
            return false;
    return true;
}

static void shift(int64_t *t, size_t from, size_t n, int64_t base)
{
    for (size_t i = from; i < n; i++)
        if (t[i] != NNP_OPEN_END)
            t[i] += base;
}

int nnp__kin_rows_shift(nnp_model_t *m, const nnp_kin_rows_t *first, int64_t base_ns)
{
    struct {
        int64_t *t;
        size_t from, n;
    } cols[] = {
        {m->ops.start_ns, first->ops, m->ops.t.n},
        {m->ops.end_ns, first->ops, m->ops.t.n},
        {m->steps.start_ns, first->steps, m->steps.t.n},
        {m->steps.end_ns, first->steps, m->steps.t.n},
        {m->markers.start_ns, first->markers, m->markers.t.n},
        {m->markers.end_ns, first->markers, m->markers.t.n},
        {m->calls.start_ns, first->calls, m->calls.t.n},
        {m->calls.end_ns, first->calls, m->calls.t.n},
        {m->kernels.start_ns, first->kernels, m->kernels.t.n},
        {m->kernels.end_ns, first->kernels, m->kernels.t.n},
        {m->comms.start_ns, first->comms, m->comms.t.n},
        {m->comms.end_ns, first->comms, m->comms.t.n},
        {m->mem.ts_ns, first->mem, m->mem.t.n},
    };
    const size_t n_cols = sizeof(cols) / sizeof(cols[0]);
    if (base_ns == 0)
        return NNP_OK;
    for (size_t c = 0; c < n_cols; c++)
        if (!fits(cols[c].t, cols[c].from, cols[c].n, base_ns))
            return NNP_ECORRUPT;
    for (size_t c = 0; c < n_cols; c++)
        shift(cols[c].t, cols[c].from, cols[c].n, base_ns);
    return NNP_OK;
}
