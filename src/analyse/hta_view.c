/* hta_view.c - a rank's trace as Holistic Trace Analysis sees it (hta_internal.h): every
 * time rounded as HTA's parser does (start up, end down, to the µs: hta/common/
 * trace_parser.py), GPU events classified by name (hta/utils/utils.py get_kernel_type),
 * the last profiler step left out (trace.py _filter_irrelevant_gpu_kernels) and each GPU
 * event given the iteration of the runtime call that launched it (trace.py add_iteration).
 * Built once per rank from the model; the analyses in hta.c read only this view. */
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "analyse/hta_internal.h"
#include "read/importers.h"

#define NS_PER_US 1000
/* HTA's kernel classes by name (get_kernel_type): these substrings, case-sensitive. */
#define COMM_TAG   "ncclKernel"
#define MEMCPY_TAG "Memcpy"
#define MEMSET_TAG "Memset"

int64_t nnp__hta_up(const hta_view_t *v, int64_t ns)
{
    int64_t q = ns / NS_PER_US;
    return q + (ns % NS_PER_US > 0) + v->shift_us;
}

int64_t nnp__hta_down(const hta_view_t *v, int64_t ns)
{
    int64_t q = ns / NS_PER_US;
    return q - (ns % NS_PER_US < 0) + v->shift_us;
}

int nnp__hta_ktype(const char *name)
{
    if (strstr(name, COMM_TAG))
        return HTA_COMMUNICATION;
    if (strstr(name, MEMCPY_TAG) || strstr(name, MEMSET_TAG))
        return HTA_MEMORY;
    return HTA_COMPUTATION;
}

/* HTA's add_iteration loops over every step and keeps the last match. */
int64_t nnp__hta_iteration(const hta_view_t *v, int64_t t)
{
    int64_t it = -1;
    for (size_t s = 0; s < v->n_steps; s++)
        if (v->steps[s].ts <= t && t < v->steps[s].end)
            it = (int64_t)v->steps[s].id;
    return it;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Distinct step names: HTA filters only when the trace has two or more. */
static size_t distinct_steps(const nnp_model_t *m)
{
    uint64_t *ids;
    size_t n = 0;
    if (m->steps.t.n < 2)
        return m->steps.t.n;
    ids = nnp__malloc(m->steps.t.n * sizeof(uint64_t));
    if (!ids)
        return m->steps.t.n; /* the count only gates the filter: assume distinct */
    memcpy(ids, m->steps.id, m->steps.t.n * sizeof(uint64_t));
    qsort(ids, m->steps.t.n, sizeof(uint64_t), cmp_u64);
    for (size_t i = 0; i < m->steps.t.n; i++)
        n += i == 0 || ids[i] != ids[i - 1];
    nnp__free(ids);
    return n;
}

/* One GPU event of the view, unless the filter leaves it out (launch: calls row or
 * SIZE_MAX). */
static void add_event(hta_view_t *v, int64_t start_ns, int64_t end_ns, uint32_t stream,
                      uint32_t name, const char *text, size_t launch)
{
    hta_kernel_t *k;
    /* With the filter, only GPU events whose launch is a kept CPU event remain (an inner
     * merge on the correlation id). */
    if (v->filtered && (launch == SIZE_MAX || !v->launches[launch].kept))
        return;
    k = &v->k[v->nk];
    k->ns = start_ns;
    k->seq = v->nk++;
    k->ts = nnp__hta_up(v, start_ns);
    k->end = nnp__hta_down(v, end_ns);
    k->stream = stream;
    k->name = name;
    k->text = text;
    k->type = (uint8_t)nnp__hta_ktype(text);
    k->launch = launch;
    k->iter = launch != SIZE_MAX ? v->launches[launch].iter : -1;
}

/* The id of text among the view's own names, added when new (an error past HTA_OWN_MAX,
 * which no name of kineto_names.c reaches). */
static int own_name(hta_view_t *v, const char *text, uint32_t *id)
{
    size_t j;
    for (j = 0; j < v->n_names && strcmp(v->names[j], text) != 0; j++)
        ;
    if (j == v->n_names) {
        if (!v->names && !(v->names = nnp__calloc(HTA_OWN_MAX, sizeof(*v->names))))
            return nnp__fail(NNP_ENOMEM, "HTA: out of memory");
        if (j == HTA_OWN_MAX)
            return nnp__fail(NNP_EINVAL, "HTA: more than %d names of copies", HTA_OWN_MAX);
        nnp__strlcpy(v->names[j], text, NNP_KINETO_NAME_MAX);
        v->n_names++;
    }
    *id = HTA_OWN_NAME - (uint32_t)j;
    return NNP_OK;
}

/* The GPU events: a Kineto trace's kernels, copies and sets as named in the file; those of
 * our own capture under the names its Kineto export gives them, and its NCCL kernels
 * (collectives, which a Kineto trace also has as kernels). */
static int add_kernels(hta_view_t *v, const nnp_model_t *m, const nnp_launch_index_t *lx)
{
    bool ours = !nnp__is_kineto_model(m);
    for (size_t i = 0; i < m->kernels.t.n; i++) {
        char buf[NNP_KINETO_NAME_MAX];
        const char *text = nnp__model_str(m, m->kernels.name[i]);
        uint32_t id = m->kernels.name[i];
        if (ours) {
            nnp__kineto_activity(m, i, buf, &text);
            if (text == buf) {
                int rc = own_name(v, buf, &id);
                if (rc != NNP_OK)
                    return rc;
                text = v->names[HTA_OWN_NAME - id];
            }
        }
        add_event(v, m->kernels.start_ns[i], m->kernels.end_ns[i], m->kernels.stream_id[i], id,
                  text, nnp__launch_index_find(lx, m->kernels.launch[i]));
    }
    for (size_t i = 0; ours && i < m->comms.t.n; i++) {
        const char *text = nnp__model_str(m, m->comms.name[i]);
        if (nnp__is_nccl_kernel(text))
            add_event(v, m->comms.start_ns[i], m->comms.end_ns[i], m->comms.stream_id[i],
                      m->comms.name[i], text, nnp__launch_index_find(lx, m->comms.launch[i]));
    }
    return NNP_OK;
}

static int cmp_event(const void *a, const void *b)
{
    const hta_kernel_t *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns < y->ns ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

int nnp__hta_view_build(const nnp_model_t *m, hta_view_t *v)
{
    nnp_launch_index_t lx;
    int rc;
    memset(v, 0, sizeof(*v));
    v->m = m;
    v->rank = m->info.rank_id;
    /* Our captures' times are the monotonic clock; their Kineto export writes the wall
     * clock (monotonic + diff_time, a whole µs), which is how HTA lines ranks up. */
    v->shift_us = nnp__is_kineto_model(m) ? 0 : m->info.diff_time_us;
    v->last_start = INT64_MAX;
    v->steps = nnp__calloc(m->steps.t.n + 1, sizeof(hta_step_t));
    v->launches = nnp__calloc(m->calls.t.n + 1, sizeof(hta_launch_t));
    v->k = nnp__calloc(m->kernels.t.n + m->comms.t.n + 1, sizeof(hta_kernel_t));
    if (!v->steps || !v->launches || !v->k) {
        nnp__hta_view_fini(v);
        return nnp__fail(NNP_ENOMEM, "HTA: out of memory");
    }
    for (size_t i = 0; i < m->steps.t.n; i++) {
        hta_step_t *s = &v->steps[v->n_steps++];
        s->id = m->steps.id[i];
        s->ts = nnp__hta_up(v, m->steps.start_ns[i]);
        s->end = m->steps.end_ns[i] == NNP_OPEN_END ? s->ts : nnp__hta_down(v, m->steps.end_ns[i]);
    }
    v->filtered = distinct_steps(m) >= 2;
    for (size_t i = 0; v->filtered && i < v->n_steps; i++)
        v->last_start = i == 0 || v->steps[i].ts > v->last_start ? v->steps[i].ts : v->last_start;
    for (size_t i = 0; i < m->calls.t.n; i++) {
        hta_launch_t *l = &v->launches[i];
        l->ts = nnp__hta_up(v, m->calls.start_ns[i]);
        l->end = nnp__hta_down(v, m->calls.end_ns[i]);
        l->kept = !v->filtered || l->ts < v->last_start;
        l->iter = nnp__hta_iteration(v, l->ts);
    }
    v->n_launches = m->calls.t.n;
    rc = nnp__launch_index_build(m, &lx);
    if (rc != NNP_OK) {
        nnp__hta_view_fini(v);
        return rc;
    }
    rc = add_kernels(v, m, &lx);
    nnp__launch_index_fini(&lx);
    if (rc != NNP_OK) {
        nnp__hta_view_fini(v);
        return rc;
    }
    qsort(v->k, v->nk, sizeof(hta_kernel_t), cmp_event);
    return NNP_OK;
}

void nnp__hta_view_fini(hta_view_t *v)
{
    nnp__free(v->steps);
    nnp__free(v->launches);
    nnp__free(v->k);
    nnp__free(v->names);
    memset(v, 0, sizeof(*v));
}

/* ---- HTA's merge_kernel_intervals, literally ---- */

static int cmp_iv(const void *a, const void *b)
{
    const hta_iv_t *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq); /* stable: ties keep their order */
}

size_t nnp__hta_merge(hta_iv_t *iv, size_t n)
{
    size_t g = 0;
    int64_t cummax = INT64_MIN;
    qsort(iv, n, sizeof(hta_iv_t), cmp_iv);
    for (size_t i = 0; i < n; i++) {
        int64_t end = iv[i].end;
        /* A new group when ts > the largest end of every earlier row (not only those of
         * this group): a sub-µs kernel's end rounds below its start, and HTA keeps the
         * negative interval as a group of its own. */
        if (i == 0 || iv[i].ts > cummax) {
            iv[g++] = iv[i];
        } else if (end > iv[g - 1].end) {
            iv[g - 1].end = end;
        }
        cummax = i == 0 || end > cummax ? end : cummax;
    }
    return g;
}

int64_t nnp__hta_run_time(const hta_iv_t *iv, size_t n)
{
    int64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += iv[i].end - iv[i].ts;
    return s;
}

/* The GPU events of the view (all types when type < 0) as intervals. */
hta_iv_t *nnp__hta_intervals(const hta_view_t *v, int type, size_t *n)
{
    hta_iv_t *iv = nnp__malloc((v->nk + 1) * sizeof(hta_iv_t));
    *n = 0;
    if (!iv)
        return NULL;
    for (size_t i = 0; i < v->nk; i++)
        if (type < 0 || v->k[i].type == type)
            iv[(*n)++] = (hta_iv_t){v->k[i].ts, v->k[i].end, i};
    return iv;
}
