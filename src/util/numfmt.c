/* numfmt.c - decimal text of integers and of fixed-point values without printf: every
 * row of the analysis outputs carries several numbers, and printf's machinery (format
 * parsing, locale, padding) was most of the CSV writers' time (issue 17: a profile of
 * `nnprof analyse` spent 37 % of its samples in vfprintf). Two digits per division, from a
 * table, as fmt's format_decimal and Redis' ll2string do; the length picked by comparisons
 * rather than counted, as in jeaiii's itoa. */
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

/* The two digits of v < 100 at p. */
static inline void put2(char *p, uint32_t v)
{
    memcpy(p, digit_pairs + 2 * v, 2);
}

/* The digits of v < 10^4, no leading zero, at p; returns their count. A comparison tree
 * instead of a digit count and a loop: most numbers of the outputs are this short. */
static NNP_ALWAYS_INLINE size_t below_1e4(char *p, uint32_t v)
{
    uint32_t hi, lo;
    if (v < 100) {
        if (v < 10) {
            p[0] = (char)('0' + v);
            return 1;
        }
        put2(p, v);
        return 2;
    }
    hi = v / 100;
    lo = v % 100;
    if (hi < 10) {
        p[0] = (char)('0' + hi);
        put2(p + 1, lo);
        return 3;
    }
    put2(p, hi);
    put2(p + 2, lo);
    return 4;
}

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Eight digits in one 64-bit word (SWAR, as in Khuong's and Lemire's itoa): the halves
 * v / 10^4 and v % 10^4 in two 32-bit lanes, each split by 100 into two 16-bit lanes,
 * each of those by 10 into two bytes; the divisions are multiply-shifts that stay exact
 * below 10^4 (x * 10486 >> 20 = x / 100) and 10^2 (x * 103 >> 10 = x / 10), and no lane
 * carries into the next. Returns the digit values 0..9, the first digit in the lowest
 * byte (the first in memory). */
#define SWAR_DIV100_MUL   10486u
#define SWAR_DIV100_SHIFT 20
#define SWAR_DIV10_MUL    103u
#define SWAR_DIV10_SHIFT  10
#define SWAR_LANE32_7BITS 0x0000007F0000007Full
#define SWAR_LANE16_4BITS 0x000F000F000F000Full
#define SWAR_ASCII_ZEROS  0x3030303030303030ull
#define SWAR_DIGITS       8

static inline uint64_t swar8(uint32_t v)
{
    uint64_t a = (uint64_t)(v / 10000) | ((uint64_t)(v % 10000) << 32);
    uint64_t q = ((a * SWAR_DIV100_MUL) >> SWAR_DIV100_SHIFT) & SWAR_LANE32_7BITS;
    uint64_t b = q | ((a - q * 100) << 16);
    uint64_t t = ((b * SWAR_DIV10_MUL) >> SWAR_DIV10_SHIFT) & SWAR_LANE16_4BITS;
    return t | ((b - t * 10) << 8);
}

/* The 8 digits of v < 10^8, zero-padded, at p. */
static inline void digits8(char *p, uint32_t v)
{
    uint64_t w = swar8(v) | SWAR_ASCII_ZEROS;
    memcpy(p, &w, sizeof(w));
}

/* The digits of v < 10^8, no leading zero, at p; returns their count. Numbers of 5 to 8
 * digits (µs timestamps) in one word: the leading zeros are the word's low zero bytes,
 * shifted out. Writes 8 bytes at p (the callers' buffers hold 20 digits). */
static NNP_ALWAYS_INLINE size_t below_1e8(char *p, uint32_t v)
{
    uint64_t d, w;
    unsigned zeros;
    if (v < 10000)
        return below_1e4(p, v);
    d = swar8(v);
    zeros = (unsigned)__builtin_ctzll(d) / 8; /* d != 0: v >= 10^4 */
    w = (d | SWAR_ASCII_ZEROS) >> (8 * zeros);
    memcpy(p, &w, sizeof(w));
    return SWAR_DIGITS - zeros;
}
#else
/* The 4 digits of v < 10^4, zero-padded, at p. */
static inline void digits4(char *p, uint32_t v)
{
    put2(p, v / 100);
    put2(p + 2, v % 100);
}

/* The 8 digits of v < 10^8, zero-padded, at p: independent pairs (no chain of divisions,
 * so the CPU computes them side by side). */
static inline void digits8(char *p, uint32_t v)
{
    digits4(p, v / 10000);
    digits4(p + 4, v % 10000);
}

/* The digits of v < 10^8, no leading zero, at p; returns their count. */
static NNP_ALWAYS_INLINE size_t below_1e8(char *p, uint32_t v)
{
    size_t n;
    if (v < 10000)
        return below_1e4(p, v);
    n = below_1e4(p, v / 10000);
    digits4(p + n, v % 10000);
    return n + 4;
}
#endif

#define TEN_POW_8 100000000u

/* The digits of v >= 10^8: eight at a time from the right, below 10^16 two groups, else
 * three (the highest holds at most 4 digits: 2^64 < 1.9 * 10^19). Out of line: only
 * epoch-based timestamps and large byte counts come here. */
static NNP_NOINLINE size_t u64_digits_big(char *buf, uint64_t v)
{
    uint64_t q = v / TEN_POW_8;
    size_t n;
    if (q < TEN_POW_8) {
        n = below_1e8(buf, (uint32_t)q);
    } else {
        n = below_1e4(buf, (uint32_t)(q / TEN_POW_8));
        digits8(buf + n, (uint32_t)(q % TEN_POW_8));
        n += 8;
    }
    digits8(buf + n, (uint32_t)(v - q * TEN_POW_8));
    return n + 8;
}

/* nnp__fmt_u64, inlined where the fixed-point and KB writers call it per field: most
 * numbers of the outputs (durations, sizes, ids) have under 9 digits. */
static NNP_ALWAYS_INLINE size_t u64_digits(char *buf, uint64_t v)
{
    if (NNP_LIKELY(v < TEN_POW_8))
        return below_1e8(buf, (uint32_t)v);
    return u64_digits_big(buf, v);
}

size_t nnp__fmt_u64(char *buf, uint64_t v)
{
    return u64_digits(buf, v);
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

/* "whole.mmm", NUL-terminated (nnp__fmt_dec3), inlined in the fixed-point writer. */
static NNP_ALWAYS_INLINE size_t dec3(char *buf, uint64_t whole, uint32_t milli)
{
    size_t n = u64_digits(buf, whole);
    /* A digit and a pair, no loop. */
    buf[n] = '.';
    buf[n + 1] = (char)('0' + milli / 100);
    put2(buf + n + 2, milli % 100);
    buf[n + 4] = '\0';
    return n + 4;
}

/* v / div with `decimals` digits, the general case of nnp__fmt_fixed: out of line, so the
 * µs path keeps few registers to save. */
static NNP_NOINLINE size_t fixed_any(char *buf, int64_t v, uint64_t div, int decimals)
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
    if (decimals == US_DECIMALS) /* ms */
        return n + dec3(buf + n, q, (uint32_t)r);
    n += u64_digits(buf + n, q);
    buf[n++] = '.';
    frac_digits(buf + n, r, decimals);
    n += (size_t)decimals;
    buf[n] = '\0';
    return n;
}

size_t nnp__fmt_fixed(char *buf, int64_t v, uint64_t div, int decimals)
{
    /* ns as µs with 3 decimals, non-negative: most numbers of the outputs. */
    if (NNP_LIKELY(div == NS_PER_US && decimals == US_DECIMALS && v >= 0))
        return dec3(buf, (uint64_t)v / NS_PER_US, (uint32_t)((uint64_t)v % NS_PER_US));
    return fixed_any(buf, v, div, decimals);
}

size_t nnp__fmt_dec3(char *buf, uint64_t whole, uint32_t milli)
{
    return dec3(buf, whole, milli);
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

/* Short decimals: a double that is the nearest one to r / 10^k for a whole r below
 * 10^15 and k <= SHORT_DEC_MAX (counter values such as 42.5 or 0.125) prints as that
 * decimal in %.15g, from [1e-4, 1e15) where %g uses no exponent. */
#define SHORT_DEC_MAX   6
#define SHORT_DEC_MIN   1e-4
#define SHORT_DEC_LIMIT 1e15

size_t nnp__fmt_short_double(char *buf, double v)
{
    static const double pow10[SHORT_DEC_MAX + 1] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6};
    static const uint64_t upow10[SHORT_DEC_MAX + 1] = {1, 10, 100, 1000, 10000, 100000, 1000000};
    double a = fabs(v);
    if (!(a >= SHORT_DEC_MIN && a < SHORT_DEC_LIMIT)) /* NaN too */
        return 0;
    for (int k = 1; k <= SHORT_DEC_MAX; k++) {
        double r = nearbyint(a * pow10[k]);
        uint64_t whole, frac;
        size_t n = 0;
        int digits = k;
        if (!(r < SHORT_DEC_LIMIT))
            return 0;
        /* r and 10^k are exact, so the quotient is the double nearest r / 10^k: when it
         * is v, that decimal is v's 15-digit rounding (DBL_DIG), which %.15g prints. */
        if (r / pow10[k] != a)
            continue;
        whole = (uint64_t)r / upow10[k];
        frac = (uint64_t)r % upow10[k];
        if (signbit(v))
            buf[n++] = '-';
        n += u64_digits(buf + n, whole);
        while (digits > 0 && frac % 10 == 0) { /* %g drops trailing zeros */
            frac /= 10;
            digits--;
        }
        if (digits > 0) {
            buf[n++] = '.';
            frac_digits(buf + n, frac, digits);
            n += (size_t)digits;
        }
        buf[n] = '\0';
        return n;
    }
    return 0;
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
