/* numfmt.c - decimal text of integers and of fixed-point values without printf: every
 * row of the analysis outputs carries several numbers, and printf's machinery (format
 * parsing, locale, padding) was most of the CSV writers' time (issue 17: a profile of
 * `nnprof analyse` spent 37 % of its samples in vfprintf). Two digits per division, from a
 * table, as fmt's format_decimal and Redis' ll2string do. */
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

/* Decimal digits of v (1 for 0). */
static size_t count_digits(uint64_t v)
{
    size_t n = 1;
    for (;;) {
        if (v < 10)
            return n;
        if (v < 100)
            return n + 1;
        if (v < 1000)
            return n + 2;
        if (v < 10000)
            return n + 3;
        v /= 10000;
        n += 4;
    }
}

size_t nnp__fmt_u64(char *buf, uint64_t v)
{
    size_t n = count_digits(v);
    digits_backward(buf + n, v);
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

size_t nnp__fmt_fixed(char *buf, int64_t v, uint64_t div, int decimals)
{
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    uint64_t q = mag / div, r = mag % div;
    size_t n = 0;
    if (v < 0)
        buf[n++] = '-';
    n += nnp__fmt_u64(buf + n, q);
    buf[n++] = '.';
    /* The remainder, zero-padded to `decimals` digits. */
    for (int d = decimals - 1; d >= 0; d--) {
        buf[n + (size_t)d] = (char)('0' + r % 10);
        r /= 10;
    }
    n += (size_t)decimals;
    buf[n] = '\0';
    return n;
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
