/* decimal.c - nnp__parse_decimal_ns: a time written as decimal text ("123.456", "5e-05")
 * into integer ns, digit by digit, so that 16-digit timestamps keep every ns (a double
 * would not). The one parser every importer uses for times written as text (CSV cells,
 * JSON strings); Python's str() of a float writes the exponent form below 1e-4
 * (MindSpore's aicore_intermediate_*_detail.csv: "5e-05" ms). */
#include <stdbool.h>
#include <stdint.h>

#include "util.h"

/* Significant digits kept: an int64 ns has at most 19, the 20th decides the rounding. */
#define KEPT_DIGITS 24
/* Exponents beyond this are saturated: any of them makes a value that overflows int64 ns
 * (or rounds to 0), whatever the digits. */
#define EXPONENT_MAX 100000L
/* Digits of the largest int64 (9,223,372,036,854,775,807). */
#define INT64_DIGITS 19

static const char *skip_blanks(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* The optional exponent at *s ("e-05", "E+3"): true with *s past it, or when there is none;
 * false for an "e" without digits. */
static bool parse_exponent(const char **s, long *exp)
{
    const char *p = *s;
    bool neg = false, any = false;
    *exp = 0;
    if (*p != 'e' && *p != 'E')
        return true;
    p++;
    if (*p == '-' || *p == '+')
        neg = *p++ == '-';
    for (; *p >= '0' && *p <= '9'; p++, any = true)
        if (*exp < EXPONENT_MAX)
            *exp = *exp * 10 + (*p - '0');
    if (neg)
        *exp = -*exp;
    *s = p;
    return any;
}

bool nnp__parse_decimal_ns(const char *s, int frac_digits, int64_t *out)
{
    char dig[KEPT_DIGITS]; /* significant digits, the first non-zero one first */
    int n = 0;
    long point = 0, exp, whole; /* the value is 0.dig x 10^point */
    bool neg = false, any = false;
    int64_t ns = 0;
    s = skip_blanks(s);
    if (*s == '-' || *s == '+')
        neg = *s++ == '-';
    for (; *s >= '0' && *s <= '9'; s++, any = true) {
        if (n == 0 && *s == '0')
            continue; /* leading zeros */
        if (n < KEPT_DIGITS)
            dig[n++] = *s;
        point++;
    }
    if (*s == '.') {
        for (s++; *s >= '0' && *s <= '9'; s++, any = true) {
            if (n == 0 && *s == '0')
                point--; /* 0.00ddd: the value is 0.ddd x 10^-2 */
            else if (n < KEPT_DIGITS)
                dig[n++] = *s;
        }
    }
    if (!any || !parse_exponent(&s, &exp) || *skip_blanks(s) != '\0')
        return false;
    if (n == 0) { /* zero, whatever its exponent */
        *out = 0;
        return true;
    }
    /* The digits before the ns point, then the first one after it rounds half up. */
    whole = point + exp + frac_digits;
    if (whole > INT64_DIGITS)
        return false;
    for (long k = 0; k < whole; k++) {
        int d = k < n ? dig[k] - '0' : 0;
        if (ns > (INT64_MAX - d) / 10)
            return false;
        ns = ns * 10 + d;
    }
    if (whole >= 0 && whole < n && dig[whole] >= '5') {
        if (ns == INT64_MAX)
            return false;
        ns++;
    }
    *out = neg ? -ns : ns;
    return true;
}
