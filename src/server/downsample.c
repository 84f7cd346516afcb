/* downsample.c - see downsample.h. Linear in the number of points; no allocation. */
#include <math.h>
#include <stdint.h>

#include "server/downsample.h"

/* First and last points are always kept: 2 of the budget. */
#define ENDS 2

size_t nnp__downsample_multi(const double *const *ys, size_t n_series, size_t n, size_t max_points,
                             size_t *keep)
{
    size_t runs, k = 0, per_run;

    if (n_series == 0)
        n_series = 1;
    if (n <= max_points || max_points < ENDS + 2 * n_series) {
        size_t m = n <= max_points ? n : max_points;
        for (size_t i = 0; i < m; i++)
            keep[i] = n <= max_points ? i : i * (n - 1) / (m > 1 ? m - 1 : 1);
        return m;
    }
    per_run = 2 * n_series;
    runs = (max_points - ENDS) / per_run;
    keep[k++] = 0;
    for (size_t r = 0; r < runs; r++) {
        size_t lo = 1 + r * (n - 2) / runs, hi = 1 + (r + 1) * (n - 2) / runs;
        size_t picks[64];
        size_t n_picks = 0;
        if (hi <= lo)
            continue;
        for (size_t s = 0; s < n_series && n_picks + 2 <= 64; s++) {
            const double *y = ys[s];
            size_t imin = SIZE_MAX, imax = SIZE_MAX;
            for (size_t i = lo; i < hi; i++) {
                if (isnan(y[i]))
                    continue;
                if (imin == SIZE_MAX || y[i] < y[imin])
                    imin = i;
                if (imax == SIZE_MAX || y[i] > y[imax])
                    imax = i;
            }
            if (imin == SIZE_MAX)
                imin = imax = lo;
            picks[n_picks++] = imin;
            picks[n_picks++] = imax;
        }
        /* Emit the run's picks in ascending order, once each. */
        for (size_t a = 0; a < n_picks; a++) {
            for (size_t b = a + 1; b < n_picks; b++) {
                if (picks[b] < picks[a]) {
                    size_t t = picks[a];
                    picks[a] = picks[b];
                    picks[b] = t;
                }
            }
        }
        for (size_t a = 0; a < n_picks; a++) {
            if (a > 0 && picks[a] == picks[a - 1])
                continue;
            keep[k++] = picks[a];
        }
    }
    keep[k++] = n - 1;
    return k;
}

size_t nnp__downsample(const double *y, size_t n, size_t max_points, size_t *keep)
{
    const double *ys[1] = {y};
    return nnp__downsample_multi(ys, 1, n, max_points, keep);
}
