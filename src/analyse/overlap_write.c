/* overlap_write.c - step_trace_time.csv from the overlap rows (overlap.c): the per-rank
 * file of torch_npu / msprof-analyze, one row per step, times in us. */
#include <stdio.h>

#include "analyse/analyse.h"
#include "util/csv_writer.h"
#include "util/util.h"

/* The per-rank file msprof-analyze and torch_npu users expect (torch_npu
 * TraceStepTimeParser.STEP_TRACE). */
#define OVERLAP_FILE "step_trace_time.csv"
/* Nanoseconds per microsecond: the CSV is in us with exactly 3 decimals, i.e. exact ns. */
#define NS_PER_US   1000
#define US_DECIMALS 3
/* ps per ns: the tick of inputs with sub-ns durations. */
#define PS_PER_NS 1000
/* Decimals of a us with its ps: 3 for the ns, 3 for the ps. */
#define PS_DECIMALS 6

/* Microseconds with exactly three decimals from integer ns (nnp__fmt_fixed: no float
 * rounding), then the sub-ns picoseconds (0..999) when there are any, without trailing
 * zeros: 1.2695 us stays 1.2695, as torch_npu prints it. The CSV and the timeline
 * (chrome_trace.c) print the same digits for the same ns. */
static void csv_us(nnp_csv_t *w, int64_t ns, int16_t ps)
{
    char buf[NNP_FMT_NUM_MAX];
    size_t n;
    if (ps >= PS_PER_NS && ns >= 0) { /* not from our tick conversion: as printf says it */
        int k = snprintf(buf, sizeof(buf), "%lld.%06lld", (long long)(ns / NS_PER_US),
                         (long long)((ns % NS_PER_US) * PS_PER_NS + ps));
        n = k > 0 && (size_t)k < sizeof(buf) ? (size_t)k : 0;
        while (n > 0 && buf[n - 1] == '0')
            n--;
        nnp__csv_raw(w, buf, n);
    } else if (ps > 0 && ns >= 0) {
        /* 0..999999: the ns below the us, then the ps, six digits zero-padded. */
        int64_t frac = (ns % NS_PER_US) * PS_PER_NS + ps;
        n = nnp__fmt_u64(buf, (uint64_t)(ns / NS_PER_US));
        buf[n++] = '.';
        for (int d = PS_DECIMALS - 1; d >= 0; d--) {
            buf[n + (size_t)d] = (char)('0' + frac % 10);
            frac /= 10;
        }
        n += PS_DECIMALS;
        while (buf[n - 1] == '0')
            n--;
        nnp__csv_raw(w, buf, n);
    } else {
        nnp__csv_fixed_int(w, ns, NS_PER_US, US_DECIMALS);
    }
}

static void write_row(nnp_csv_t *w, const nnp_overlap_row_t *r)
{
    if (r->step_id == UINT64_MAX)
        nnp__csv_empty(w); /* torch_npu writes Step None (an empty field) without steps */
    else
        nnp__csv_uint(w, r->step_id);
    csv_us(w, r->computing_ns, r->sub_ps[NNP_OV_COMPUTING]);
    csv_us(w, r->comm_not_overlapped_ns, r->sub_ps[NNP_OV_NOT_OVERLAPPED]);
    csv_us(w, r->overlapped_ns, r->sub_ps[NNP_OV_OVERLAPPED]);
    csv_us(w, r->communication_ns, r->sub_ps[NNP_OV_COMMUNICATION]);
    csv_us(w, r->free_ns, r->sub_ps[NNP_OV_FREE]);
    nnp__csv_end_row(w);
}

int nnp__overlap_write(const nnp_actx_t *c, const nnp_overlap_t *ov)
{
    /* The first six columns of torch_npu's step_trace_time.csv; Stage, Bubble and the
     * receive columns need pipeline-stage data we do not record. */
    static const char *const header[] = {
        "Step", "Computing", "Communication(Not Overlapped)", "Overlapped", "Communication",
        "Free", NULL};
    nnp_outfile_t f;
    nnp_csv_t w;
    int rc;

    if (!c->rank_dir)
        return nnp__fail(NNP_EINVAL, "overlap: no rank output directory");
    rc = nnp__out_open(&f, c->rank_dir, OVERLAP_FILE);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__csv_init(&w, f.fd);
    if (rc != NNP_OK)
        return nnp__out_commit(&f, rc);
    nnp__csv_header(&w, header);
    if (ov->n > 1) {
        /* One row per step and no total row: torch_npu's file has none. */
        for (size_t i = 0; i + 1 < ov->n; i++)
            write_row(&w, &ov->rows[i]);
    } else if (ov->n == 1) {
        const nnp_overlap_row_t *r = &ov->rows[0];
        /* Without steps the whole run is the single row (torch_npu: Step empty). A run
         * with nothing to measure at all gets the header only. */
        if (r->computing_ns || r->communication_ns || r->free_ns)
            write_row(&w, r);
    }
    rc = nnp__csv_fini(&w);
    return nnp__out_commit(&f, rc);
}
