/* downsample.h - curves cut to a bounded number of points for the pages, keeping every
 * extreme: the series is split into equal runs and each run keeps its minimum and its
 * maximum (in their order), plus the first and last points, so a spike is never averaged
 * away (the same rule as the memory analysis's 2,000-point line, docs/OUTPUTS.md). */
#ifndef NNP_SERVER_DOWNSAMPLE_H
#define NNP_SERVER_DOWNSAMPLE_H

#include <stddef.h>

/* Most points any curve the server sends has (issue 11). */
#define NNP_CURVE_MAX_POINTS 2000

/* Picks at most max_points (>= 4) indexes of y[0..n) as described above, ascending, into
 * keep (room for max_points). NaN values are never chosen as an extreme but may be the
 * first or last point. Returns the number kept (n itself when n <= max_points). */
size_t nnp__downsample(const double *y, size_t n, size_t max_points, size_t *keep);

/* The same over several series sharing one x axis: a point is kept when it is an extreme
 * of any series within its run, so every series keeps its spikes. ys holds n_series
 * pointers to n values each. May return up to n_series * 2 points per run: runs are made
 * so that the total stays <= max_points. */
size_t nnp__downsample_multi(const double *const *ys, size_t n_series, size_t n, size_t max_points,
                             size_t *keep);

#endif /* NNP_SERVER_DOWNSAMPLE_H */
