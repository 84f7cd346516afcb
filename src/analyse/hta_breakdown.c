/* hta_breakdown.c - Holistic Trace Analysis's breakdowns (hta/analyzers/breakdown_analysis.py,
 * cited per function) on a rank's view (hta_internal.h): the temporal breakdown, the idle time
 * per stream, the kernel time by type and the top kernels of each type. Per-rank rows are
 * written as ranks arrive; the kernel-type shares and the top kernels (sorted across ranks)
 * at the end. Column names are HTA's DataFrame columns (docs/OUTPUTS.md, "HTA analyses"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/hta_internal.h"

/* HTA rounds the kernel-type share to 1 decimal, ratios to 2. */
#define TYPE_PCT_DECIMALS 1
#define RATIO_DECIMALS    2
/* Label of a group of kernels past the top ones (_aggr_gpu_kernel_time). */
#define OTHERS "others"

static const char *const ktype_names[HTA_KTYPES] = {"COMPUTATION", "COMMUNICATION", "MEMORY"};

/* ---- temporal breakdown (breakdown_analysis.py get_temporal_breakdown) ---- */

int nnp__hta_temporal(nnp_hta_t *h, const hta_view_t *v)
{
    nnp_csv_t *w = &h->w[HTA_F_TEMPORAL];
    size_t n, nc;
    hta_iv_t *all = nnp__hta_intervals(v, -1, &n), *comp;
    int64_t kernel_time, idle, compute, non_compute;
    if (!all)
        return nnp__fail(NNP_ENOMEM, "HTA: out of memory");
    if (n == 0) {
        nnp__free(all);
        return NNP_OK; /* HTA fails on a rank without GPU events: no row */
    }
    n = nnp__hta_merge(all, n);
    /* kernel time = end of the last merged interval - start of the first. */
    kernel_time = all[n - 1].end - all[0].ts;
    idle = kernel_time - nnp__hta_run_time(all, n);
    nnp__free(all);
    comp = nnp__hta_intervals(v, HTA_COMPUTATION, &nc);
    if (!comp)
        return nnp__fail(NNP_ENOMEM, "HTA: out of memory");
    nc = nnp__hta_merge(comp, nc);
    compute = nnp__hta_run_time(comp, nc);
    nnp__free(comp);
    non_compute = kernel_time - compute - idle;
    nnp__csv_int(w, v->rank);
    nnp__csv_int(w, idle);
    nnp__csv_int(w, compute);
    nnp__csv_int(w, non_compute);
    nnp__csv_int(w, kernel_time);
    nnp__hta_csv_num(
        w, nnp__hta_round(HTA_PERCENT * ((double)idle / (double)kernel_time), HTA_PCT_DECIMALS));
    nnp__hta_csv_num(
        w, nnp__hta_round(HTA_PERCENT * ((double)compute / (double)kernel_time), HTA_PCT_DECIMALS));
    nnp__hta_csv_num(w, nnp__hta_round(HTA_PERCENT * ((double)non_compute / (double)kernel_time),
                                       HTA_PCT_DECIMALS));
    nnp__csv_end_row(w);
    return NNP_OK;
}

/* ---- idle time breakdown (breakdown_analysis.py _analyze_idle_time_for_stream) ---- */

typedef struct by_stream {
    uint32_t stream;
    size_t first; /* first appearance in the view, for the stream order */
} by_stream_t;

static int cmp_first(const void *a, const void *b)
{
    const by_stream_t *x = a, *y = b;
    return (x->first > y->first) - (x->first < y->first);
}

/* The view's streams in order of their first GPU event (gpu_kernels.stream.unique()). */
static by_stream_t *streams_of(const hta_view_t *v, size_t *n)
{
    by_stream_t *s = nnp__malloc((v->nk + 1) * sizeof(by_stream_t));
    *n = 0;
    if (!s)
        return NULL;
    for (size_t i = 0; i < v->nk; i++) {
        size_t j;
        for (j = 0; j < *n && s[j].stream != v->k[i].stream; j++)
            ;
        if (j == *n)
            s[(*n)++] = (by_stream_t){v->k[i].stream, i};
    }
    qsort(s, *n, sizeof(by_stream_t), cmp_first);
    return s;
}

int nnp__hta_idle_breakdown(nnp_hta_t *h, const hta_view_t *v)
{
    static const char *const cats[] = {"host_wait", "kernel_wait", "other"};
    enum { HOST_WAIT, KERNEL_WAIT, OTHER };
    nnp_csv_t *w = &h->w[HTA_F_IDLE];
    size_t n_streams, n;
    by_stream_t *ss = streams_of(v, &n_streams);
    hta_iv_t *iv;
    if (!ss)
        return nnp__fail(NNP_ENOMEM, "HTA: out of memory");
    for (size_t s = 0; s < n_streams; s++) {
        int64_t sum[3] = {0, 0, 0}, total = 0;
        bool seen[3] = {false, false, false};
        iv = nnp__malloc((v->nk + 1) * sizeof(hta_iv_t));
        if (!iv) {
            nnp__free(ss);
            return nnp__fail(NNP_ENOMEM, "HTA: out of memory");
        }
        n = 0;
        for (size_t i = 0; i < v->nk; i++)
            if (v->k[i].stream == ss[s].stream)
                iv[n++] = (hta_iv_t){v->k[i].ts, v->k[i].end, i};
        /* sort_values(by="ts"): the view is in start order already (ties in model order). */
        for (size_t i = 0; i < n; i++) {
            const hta_kernel_t *k = &v->k[iv[i].seq];
            int cat = OTHER;
            int64_t gap;
            if (i == 0) { /* no previous kernel: "other", with no interval (NaN) */
                seen[OTHER] = true;
                continue;
            }
            gap = iv[i].ts - iv[i - 1].end;
            /* Host wait: the runtime call came after the previous kernel had ended. */
            if (k->launch != SIZE_MAX && v->launches[k->launch].ts > iv[i - 1].end)
                cat = HOST_WAIT;
            else if (gap < NNP_HTA_CONSECUTIVE_KERNEL_DELAY)
                cat = KERNEL_WAIT;
            seen[cat] = true;
            sum[cat] += gap;
            total += gap;
        }
        nnp__free(iv);
        for (int c = 0; c < 3; c++) {
            if (!seen[c])
                continue;
            nnp__csv_int(w, v->rank);
            nnp__csv_uint(w, ss[s].stream);
            nnp__csv_str(w, cats[c]);
            nnp__csv_int(w, sum[c]);
            nnp__hta_csv_num(w, nnp__hta_round((double)sum[c] / (double)total, RATIO_DECIMALS));
            nnp__csv_end_row(w);
        }
    }
    nnp__free(ss);
    return NNP_OK;
}

/* ---- kernel type breakdown (breakdown_analysis.py _get_gpu_kernel_type_time) ---- */

/* The label of a running bit mask, types joined in mapping order (Python's & on the
 * running sum, as HTA does it, even when a sum is not a clean mask). */
static void label_of(int running, char *out, size_t cap)
{
    out[0] = '\0';
    for (int t = 0; t < HTA_KTYPES; t++) {
        if (!(running & (1 << t)))
            continue;
        if (out[0])
            strncat(out, " overlapping ", cap - strlen(out) - 1);
        strncat(out, ktype_names[t], cap - strlen(out) - 1);
    }
}

static int label_add(nnp_hta_t *h, const char *label, int64_t d)
{
    for (size_t i = 0; i < h->n_labels; i++)
        if (strcmp(h->labels[i].label, label) == 0) {
            h->labels[i].sum += d;
            return NNP_OK;
        }
    if (h->n_labels == NNP_ARRAY_LEN(h->labels))
        return NNP_OK; /* cannot happen: at most 2^3 - 1 non-empty masks */
    nnp__strlcpy(h->labels[h->n_labels].label, label, HTA_LABEL_MAX);
    h->labels[h->n_labels++].sum = d;
    return NNP_OK;
}

/* Merged intervals of each type become +bit/-bit edges (melted ts rows, then end rows, type
 * by type: ties keep that order); a sweep sums each segment's length under its label.
 * Zero-length segments add nothing and make no label. */
int nnp__hta_kernel_types(nnp_hta_t *h, const hta_view_t *v)
{
    hta_edge_t *e = nnp__malloc((2 * v->nk + 1) * sizeof(hta_edge_t));
    size_t n = 0;
    int running = 0;
    if (!e)
        return nnp__fail(NNP_ENOMEM, "HTA: out of memory");
    for (int t = 0; t < HTA_KTYPES; t++) {
        size_t k;
        hta_iv_t *iv = nnp__hta_intervals(v, t, &k);
        if (!iv) {
            nnp__free(e);
            return nnp__fail(NNP_ENOMEM, "HTA: out of memory");
        }
        k = nnp__hta_merge(iv, k);
        for (size_t i = 0; i < k; i++)
            e[n + i] = (hta_edge_t){iv[i].ts, 1 << t, n + i};
        for (size_t i = 0; i < k; i++)
            e[n + k + i] = (hta_edge_t){iv[i].end, -(1 << t), n + k + i};
        n += 2 * k;
        nnp__free(iv);
    }
    qsort(e, n, sizeof(hta_edge_t), nnp__hta_cmp_edge);
    for (size_t i = 0; i + 1 < n; i++) {
        char label[HTA_LABEL_MAX];
        running += e[i].value;
        if (running <= 0 || e[i + 1].time == e[i].time)
            continue;
        label_of(running, label, sizeof(label));
        if (label[0])
            label_add(h, label, e[i + 1].time - e[i].time);
    }
    nnp__free(e);
    return NNP_OK;
}

/* ---- top kernels (breakdown_analysis.py _aggr_gpu_kernel_time) ---- */

typedef struct kstat {
    uint32_t name;
    const char *s;
    int64_t sum, max, min;
    double mean, std;
    size_t count;
} kstat_t;

static int cmp_sum_desc(const void *a, const void *b)
{
    const kstat_t *x = a, *y = b;
    if (x->sum != y->sum)
        return x->sum > y->sum ? -1 : 1;
    return strcmp(x->s, y->s); /* HTA's sort is not stable: ties by name here */
}

static int push_top(nnp_hta_t *h, const char *name, double sum, double max, double min, double std,
                    double mean, int ktype, int rank)
{
    if (h->n_top == h->cap_top) {
        size_t nc = h->cap_top ? h->cap_top * 2 : 64;
        top_row_t *nt = nnp__realloc(h->top, nc * sizeof(top_row_t));
        if (!nt)
            return nnp__fail(NNP_ENOMEM, "HTA: out of memory");
        h->top = nt;
        h->cap_top = nc;
    }
    h->top[h->n_top] = (top_row_t){nnp__strdup(name), sum, max, min, std, mean, ktype, rank};
    if (!h->top[h->n_top].name)
        return nnp__fail(NNP_ENOMEM, "HTA: out of memory");
    h->n_top++;
    return NNP_OK;
}

int nnp__hta_top_of_type(nnp_hta_t *h, const hta_view_t *v, int type)
{
    kstat_t *st = nnp__calloc(v->nk + 1, sizeof(kstat_t));
    double *vals = nnp__malloc((v->nk + 1) * sizeof(double));
    size_t n = 0;
    int rc = NNP_OK;
    if (!st || !vals) {
        rc = nnp__fail(NNP_ENOMEM, "HTA: out of memory");
        goto out;
    }
    for (size_t i = 0; i < v->nk; i++) { /* groupby(name): sum, max, min, mean */
        const hta_kernel_t *k = &v->k[i];
        int64_t d = k->end - k->ts;
        size_t j;
        if (k->type != type)
            continue;
        for (j = 0; j < n && st[j].name != k->name; j++)
            ;
        if (j == n)
            st[n++] = (kstat_t){k->name, k->text, 0, d, d, 0, 0, 0};
        st[j].sum += d;
        st[j].max = d > st[j].max ? d : st[j].max;
        st[j].min = d < st[j].min ? d : st[j].min;
        st[j].count++;
    }
    for (size_t j = 0; j < n; j++) { /* std per name: a second pass over its kernels */
        size_t c = 0;
        st[j].mean = (double)st[j].sum / (double)st[j].count;
        for (size_t i = 0; i < v->nk; i++)
            if (v->k[i].type == type && v->k[i].name == st[j].name)
                vals[c++] = (double)(v->k[i].end - v->k[i].ts);
        st[j].std = nnp__hta_sample_std(vals, c, st[j].mean);
    }
    qsort(st, n, sizeof(kstat_t), cmp_sum_desc);
    if (n <= NNP_HTA_NUM_KERNELS) {
        for (size_t j = 0; rc == NNP_OK && j < n; j++)
            rc = push_top(h, st[j].s, (double)st[j].sum, (double)st[j].max, (double)st[j].min,
                          st[j].std, st[j].mean, type, v->rank);
    } else {
        /* More than num_kernels: names whose cumulative sum passes the duration_ratio
         * quantile of the cumulative sums, and all past the first num_kernels, become
         * "others"; then every row is regrouped by name over its SUM alone, so a kept
         * kernel's max, min and mean all equal its sum and its stddev is 0. */
        double *cum = vals, q, o_sum = 0, o_max = -INFINITY, o_min = INFINITY, o_mean, o_std;
        size_t n_others = 0, c = 0;
        double *osums = nnp__malloc(n * sizeof(double));
        if (!osums) {
            rc = nnp__fail(NNP_ENOMEM, "HTA: out of memory");
            goto out;
        }
        for (size_t j = 0; j < n; j++)
            cum[j] = (j ? cum[j - 1] : 0) + (double)st[j].sum;
        q = nnp__hta_quantile(cum, n, NNP_HTA_DURATION_RATIO);
        for (size_t j = 0; j < n; j++) {
            if (cum[j] > q || j >= NNP_HTA_NUM_KERNELS) {
                double s = (double)st[j].sum;
                osums[n_others++] = s;
                o_sum += s;
                o_max = s > o_max ? s : o_max;
                o_min = s < o_min ? s : o_min;
                continue;
            }
            rc = push_top(h, st[j].s, (double)st[j].sum, (double)st[j].sum, (double)st[j].sum, 0,
                          (double)st[j].sum, type, v->rank);
            if (rc != NNP_OK)
                break;
            c++;
        }
        if (rc == NNP_OK && n_others) {
            o_mean = o_sum / (double)n_others;
            o_std = nnp__hta_sample_std(osums, n_others, o_mean);
            rc = push_top(h, OTHERS, o_sum, o_max, o_min, o_std, o_mean, type, v->rank);
        }
        nnp__free(osums);
        (void)c;
    }
out:
    nnp__free(st);
    nnp__free(vals);
    return rc;
}

static int cmp_label(const void *a, const void *b)
{
    const label_sum_t *x = a, *y = b;
    if (x->sum != y->sum)
        return x->sum > y->sum ? -1 : 1;
    return strcmp(x->label, y->label);
}

/* all_kernel_df.sort_values(by=["kernel_type", "name", "rank"]). */
static int cmp_top(const void *a, const void *b)
{
    const top_row_t *x = a, *y = b;
    int d = strcmp(ktype_names[x->ktype], ktype_names[y->ktype]);
    if (d)
        return d;
    if ((d = strcmp(x->name, y->name)) != 0)
        return d;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

void nnp__hta_breakdown_write(nnp_hta_t *h)
{
    int64_t total = 0;
    /* Kernel type shares over all ranks, most time first, to one decimal. */
    qsort(h->labels, h->n_labels, sizeof(label_sum_t), cmp_label);
    for (size_t i = 0; i < h->n_labels; i++)
        total += h->labels[i].sum;
    for (size_t i = 0; i < h->n_labels; i++) {
        nnp_csv_t *w = &h->w[HTA_F_KTYPE];
        nnp__csv_str(w, h->labels[i].label);
        nnp__csv_int(w, h->labels[i].sum);
        nnp__hta_csv_num(w, nnp__hta_round(((double)h->labels[i].sum / (double)total) * HTA_PERCENT,
                                           TYPE_PCT_DECIMALS));
        nnp__csv_end_row(w);
    }
    if (h->n_top)
        qsort(h->top, h->n_top, sizeof(top_row_t), cmp_top);
    for (size_t i = 0; i < h->n_top; i++) {
        nnp_csv_t *w = &h->w[HTA_F_KERNELS];
        const top_row_t *r = &h->top[i];
        nnp__csv_str(w, r->name);
        nnp__hta_csv_num(w, r->sum);
        nnp__hta_csv_num(w, r->max);
        nnp__hta_csv_num(w, r->min);
        nnp__hta_csv_num(w, r->std);
        nnp__hta_csv_num(w, r->mean);
        nnp__csv_str(w, ktype_names[r->ktype]);
        nnp__csv_int(w, r->rank);
        nnp__csv_end_row(w);
    }
}
