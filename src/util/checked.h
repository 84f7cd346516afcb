/* checked.h - integer arithmetic and double -> integer conversions that report overflow
 * instead of being undefined behaviour, for numbers read from other tools' files (the
 * importers: a JSON number may be 1e300, a CSV cell 9223372036854775807). Each returns
 * false, leaving *out untouched, when the exact result does not fit; callers skip the
 * value with a message. Header-only: they compile to a few instructions. */
#ifndef NNP_UTIL_CHECKED_H
#define NNP_UTIL_CHECKED_H

#include <stdbool.h>
#include <stdint.h>

/* 2^63 as a double (exact): the first value above every int64_t. */
#define NNP_TWO_POW_63 9223372036854775808.0

static inline bool nnp__i64_add(int64_t a, int64_t b, int64_t *out)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return false;
    *out = r;
    return true;
}

static inline bool nnp__i64_mul(int64_t a, int64_t b, int64_t *out)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r))
        return false;
    *out = r;
    return true;
}

/* v truncated toward zero, when it is a number inside the type's range (C11 6.3.1.4: any
 * other conversion is undefined). -2^63 and 2^64 are exact doubles. */
static inline bool nnp__double_to_i64(double v, int64_t *out)
{
    if (!(v >= -NNP_TWO_POW_63 && v < NNP_TWO_POW_63)) /* NaN fails too */
        return false;
    *out = (int64_t)v;
    return true;
}

static inline bool nnp__double_to_u64(double v, uint64_t *out)
{
    if (!(v > -1.0 && v < 2.0 * NNP_TWO_POW_63))
        return false;
    *out = (uint64_t)v;
    return true;
}

#endif /* NNP_UTIL_CHECKED_H */
