/* time_rows.c - the key_averages-style CSV of host_ranges_{rank}.csv,
 * op_self_time_{rank}.csv and op_stacks_{rank}.csv: one row per name (and source stack)
 * with its calls and total, self, average, min and max time, and its share of the self time
 * of all rows (docs/OUTPUTS.md "Host ranges", "Op self time", "Op stacks"). Writes the rows
 * in the order given; the callers count and sort. */
#include <stdio.h>

#include "analyse/analyse.h"
#include "util/csv_writer.h"

/* Room for one formatted time. */
#define NUM_BUF 32
#define PERCENT 100.0
/* Self Time(%) decimals, as op_statistic's Ratio(%). */
#define PCT_DECIMALS 2

int nnp__time_rows_write(const nnp_actx_t *c, const char *file_name, const nnp_time_row_t *rows,
                         const char *const *sources, size_t n_rows)
{
    static const char *const header[] = {"Name",          "Calls",        "Total Time(us)",
                                         "Self Time(us)", "Avg Time(us)", "Min Time(us)",
                                         "Max Time(us)",  "Self Time(%)", NULL};
    static const char *const header_src[] = {
        "Name",         "Source Location", "Calls",        "Total Time(us)", "Self Time(us)",
        "Avg Time(us)", "Min Time(us)",    "Max Time(us)", "Self Time(%)",   NULL};
    char b[NUM_BUF];
    int64_t all = 0;
    nnp_outfile_t f;
    nnp_csv_t w;
    int rc;

    for (size_t i = 0; i < n_rows; i++)
        all += rows[i].self_ns;
    rc = nnp__out_open(&f, c->out_dir, file_name);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__csv_init(&w, f.fd);
    if (rc == NNP_OK) {
        nnp__csv_header(&w, sources ? header_src : header);
        for (size_t i = 0; i < n_rows; i++) {
            const nnp_time_row_t *s = &rows[i];
            nnp__csv_str(&w, nnp__model_str(c->m, s->name));
            if (sources)
                nnp__csv_str(&w, sources[i]);
            nnp__csv_uint(&w, s->calls);
            nnp__csv_str(&w, nnp__fmt_ns_as_us(b, sizeof(b), s->total_ns));
            nnp__csv_str(&w, nnp__fmt_ns_as_us(b, sizeof(b), s->self_ns));
            /* The mean rounded half up to the ns, so its 3 decimals are exact. */
            nnp__csv_str(&w, nnp__fmt_ns_as_us(
                                 b, sizeof(b),
                                 (int64_t)(((uint64_t)s->total_ns + s->calls / 2) / s->calls)));
            nnp__csv_str(&w, nnp__fmt_ns_as_us(b, sizeof(b), s->min_ns));
            nnp__csv_str(&w, nnp__fmt_ns_as_us(b, sizeof(b), s->max_ns));
            /* Share of all rows' self time: the shares of nested names add up to 100. */
            nnp__csv_fixed(&w, all > 0 ? (double)s->self_ns * PERCENT / (double)all : 0.0,
                           PCT_DECIMALS);
            nnp__csv_end_row(&w);
        }
    }
    {
        int rc_fini = nnp__csv_fini(&w);
        if (rc == NNP_OK)
            rc = rc_fini;
    }
    return nnp__out_commit(&f, rc);
}
