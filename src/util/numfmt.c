/* numfmt.c - decimal text of integers and of fixed-point values without printf: every
 * row of the analysis outputs carries several numbers, and printf's machinery (format
 * parsing, locale, padding) was most of the CSV writers' time (issue 17: a profile of
 * `nnprof analyse` spent 37 % of its samples in vfprintf). Two digits per division, from a
 * table, as fmt's format_decimal and Redis' ll2string do. */
#include <math.h>
#include <string.h>

#include "util.h"

/* "00" "01" ... "99": the two digits of every value below 100. */
static const char digit_pairs[] = "00010203040506070809"
                                  "10111213141516171819"
                                  "20212223242526272829"
                                  "30313233343536373839"
                                  "40414243444546474849"
                                  "50515253545556575859"
                                  "60616263646566676869"
                                  "70717273747576777879"
                                  "80818283848586878889"
                                  "90919293949596979899";

#define NS_PER_US   1000u
#define NS_PER_MS   1000000u
#define US_DECIMALS 3

/* Writes the digits of v right-aligned so that the last one is at end[-1]; returns the
 * first written position. */
static char *digits_backward(char *end, uint64_t v)
{
    while (v >= 100) {
        unsigned k = (unsigned)(v % 100) * 2;
        v /= 100;
        *--end = digit_pairs[k + 1];
        *--end = digit_pairs[k];
    }
    if (v >= 10) {
        unsigned k = (unsigned)v * 2;
        *--end = digit_pairs[k + 1];
        *--end = digit_pairs[k];
    } else {
        *--end = (char)('0' + v);
    }
    return end;
}

/* 10^k for k = 0..19 (every power of ten a uint64_t holds). */
static const uint64_t pow10_tab[] = {1ull,
                                     10ull,
                                     100ull,
                                     1000ull,
                                     10000ull,
                                     100000ull,
                                     1000000ull,
                                     10000000ull,
                                     100000000ull,
                                     1000000000ull,
                                     10000000000ull,
                                     100000000000ull,
                                     1000000000000ull,
                                     10000000000000ull,
                                     100000000000000ull,
                                     1000000000000000ull,
                                     10000000000000000ull,
                                     100000000000000000ull,
                                     1000000000000000000ull,
                                     10000000000000000000ull};

/* 1233 / 4096 is just above log10(2): bits * 1233 >> 12 is floor(log10(2^bits)), the
 * digit count of the smallest value with one more bit, less one (Bit Twiddling Hacks,
 * "integer log base 10"). */
#define LOG10_2_NUM   1233u
#define LOG10_2_SHIFT 12
#define U64_BITS      64

/* Decimal digits of v (1 for 0), without a loop: from the bit length, corrected by one
 * comparison with a power of ten. */
static size_t count_digits(uint64_t v)
{
    uint64_t x = v | 1; /* 0 has one digit, as 1 has */
    unsigned bits = U64_BITS - (unsigned)__builtin_clzll(x);
    unsigned t = bits * LOG10_2_NUM >> LOG10_2_SHIFT;
    return (size_t)t + (x >= pow10_tab[t] ? 1 : 0);
}

/* The 8 digits of v < 10^8, zero-padded, at p: four independent pairs (no chain of
 * divisions, so the CPU computes them side by side). */
static inline void digits8(char *p, uint32_t v)
{
    uint32_t hi = v / 10000, lo = v % 10000;
    memcpy(p, digit_pairs + 2 * (hi / 100), 2);
    memcpy(p + 2, digit_pairs + 2 * (hi % 100), 2);
    memcpy(p + 4, digit_pairs + 2 * (lo / 100), 2);
    memcpy(p + 6, digit_pairs + 2 * (lo % 100), 2);
}

#define TEN_POW_8 100000000u

size_t nnp__fmt_u64(char *buf, uint64_t v)
{
    size_t n = count_digits(v);
    char *end = buf + n;
    /* Eight digits at a time from the right while more than eight remain. */
    while (v >= TEN_POW_8) {
        uint64_t q = v / TEN_POW_8;
        end -= 8;
        digits8(end, (uint32_t)(v - q * TEN_POW_8));
        v = q;
    }
    digits_backward(end, v);
    return n;
}

size_t nnp__fmt_i64(char *buf, int64_t v)
{
    if (v < 0) {
        buf[0] = '-';
        /* -(v + 1) + 1 avoids overflow for INT64_MIN. */
        return 1 + nnp__fmt_u64(buf + 1, (uint64_t)(-(v + 1)) + 1);
    }
    return nnp__fmt_u64(buf, (uint64_t)v);
}

/* The `decimals` digits of r (< 10^decimals), zero-padded, at p; a pair at a time. */
static void frac_digits(char *p, uint64_t r, int decimals)
{
    char *end = p + decimals;
    while (end - p >= 2) {
        unsigned k = (unsigned)(r % 100) * 2;
        r /= 100;
        *--end = digit_pairs[k + 1];
        *--end = digit_pairs[k];
    }
    if (end > p)
        *--end = (char)('0' + r);
}

size_t nnp__fmt_fixed(char *buf, int64_t v, uint64_t div, int decimals)
{
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    uint64_t q, r;
    size_t n = 0;
    /* The divisions by the two divisors the outputs use (ns as us, ns as ms) are by
     * constants, so the compiler turns them into multiplications. */
    if (div == NS_PER_US) {
        q = mag / NS_PER_US;
        r = mag % NS_PER_US;
    } else if (div == NS_PER_MS) {
        q = mag / NS_PER_MS;
        r = mag % NS_PER_MS;
    } else {
        q = mag / div;
        r = mag % div;
    }
    if (v < 0)
        buf[n++] = '-';
    n += nnp__fmt_u64(buf + n, q);
    buf[n++] = '.';
    frac_digits(buf + n, r, decimals);
    n += (size_t)decimals;
    buf[n] = '\0';
    return n;
}

/* Below this magnitude a whole double prints without an exponent in %.15g (its exponent
 * is under the precision) and every whole value is exact. */
#define WHOLE_DOUBLE_LIMIT 1e15

size_t nnp__fmt_whole_double(char *buf, double v)
{
    int64_t k;
    if (!(fabs(v) < WHOLE_DOUBLE_LIMIT)) /* NaN too */
        return 0;
    k = (int64_t)v;
    if ((double)k != v || (k == 0 && signbit(v)))
        return 0;
    return nnp__fmt_i64(buf, k);
}

const char *nnp__fmt_ns_as_us(char *buf, size_t cap, int64_t ns)
{
    char tmp[NNP_FMT_NUM_MAX];
    size_t n = nnp__fmt_fixed(tmp, ns, NS_PER_US, US_DECIMALS);
    if (cap == 0)
        return buf;
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, tmp, n);
    buf[n] = '\0';
    return buf;
}
