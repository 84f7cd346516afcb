/* py_text.c - see py_text.h: Python-compatible JSON and CSV text (json.dump with
 * ensure_ascii, csv.writer QUOTE_MINIMAL, repr(float)) over a buffered output file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/py_text.h"

/* Output buffer per file: big enough that write(2) calls do not dominate. */
#define OUT_BUF_BYTES 65536
/* Python's repr(float): digits tried up to the 17 that identify any double; fixed notation
 * while -4 < decpt <= 16 (CPython float_repr_style 'short', format_float_short). */
#define MAX_DOUBLE_DIGITS 17
#define REPR_EXP_LOW      (-4)
#define REPR_EXP_HIGH     16

/* ---- buffered output file ---- */

int nnp__py_ob_open(nnp_obuf_t *o, const char *dir, const char *name)
{
    int rc = nnp__out_open(&o->f, dir, name);
    if (rc != NNP_OK)
        return rc;
    o->is_open = true;
    o->buf = nnp__malloc(OUT_BUF_BYTES);
    if (!o->buf)
        o->err = nnp__fail(NNP_ENOMEM, "out of memory writing '%s'", o->f.path);
    return o->err;
}

static void ob_flush(nnp_obuf_t *o)
{
    if (o->len && o->err == NNP_OK)
        o->err = nnp__write_all(o->f.fd, o->buf, o->len);
    o->len = 0;
}

void nnp__py_ob_put(nnp_obuf_t *o, const char *s, size_t n)
{
    while (n && o->err == NNP_OK) {
        size_t k = OUT_BUF_BYTES - o->len;
        if (k > n)
            k = n;
        memcpy(o->buf + o->len, s, k);
        o->len += k;
        s += k;
        n -= k;
        if (o->len == OUT_BUF_BYTES)
            ob_flush(o);
    }
}

void nnp__py_ob_puts(nnp_obuf_t *o, const char *s)
{
    nnp__py_ob_put(o, s, strlen(s));
}

/* Integers as "%lld" / "%llu" print them, without printf (numfmt.c): rows per event. */
void nnp__py_ob_i64(nnp_obuf_t *o, int64_t v)
{
    char b[NNP_FMT_NUM_MAX];
    nnp__py_ob_put(o, b, nnp__fmt_i64(b, v));
}

void nnp__py_ob_u64(nnp_obuf_t *o, uint64_t v)
{
    char b[NNP_FMT_NUM_MAX];
    nnp__py_ob_put(o, b, nnp__fmt_u64(b, v));
}

/* Closes the file: renamed into place when keep and nothing failed, removed otherwise.
 * Returns the first error (NNP_OK when discarded on purpose). */
int nnp__py_ob_close(nnp_obuf_t *o, bool keep)
{
    int rc;
    if (!o->is_open)
        return NNP_OK;
    ob_flush(o);
    rc = o->err;
    /* A non-OK code makes nnp__out_commit remove the temporary file. */
    rc = nnp__out_commit(&o->f, rc == NNP_OK && !keep ? NNP_EINVAL : rc);
    nnp__free(o->buf);
    o->buf = NULL;
    o->is_open = false;
    return keep ? rc : o->err;
}

/* ---- Python-compatible text: json.dump (ensure_ascii) and csv.writer (QUOTE_MINIMAL) ---- */

/* Decodes one UTF-8 sequence at s (n bytes left): its code point and length, or -1 when
 * invalid (overlong forms, surrogates and values past U+10FFFF are invalid, as in Python). */
static long utf8_decode(const unsigned char *s, size_t n, size_t *len)
{
    unsigned char c = s[0];
    size_t k;
    long cp, min;
    if (c < 0xC2 || c > 0xF4)
        return -1;
    k = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    cp = c & (0x7F >> k);
    min = k == 2 ? 0x80 : k == 3 ? 0x800 : 0x10000;
    if (n < k)
        return -1;
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return -1;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return -1;
    *len = k;
    return cp;
}

/* json.encoder's ESCAPE_DCT short forms; everything else outside ' '..'~' is \u-escaped. */
static const char json_esc_chars[] = "\"\\\b\f\n\r\t";
static const char *const json_short_esc[] = {"\\\"", "\\\\", "\\b", "\\f", "\\n", "\\r", "\\t"};

/* The body of a JSON string as json.dumps(ensure_ascii=True) writes it: \" \\ \b \f \n \r
 * \t, other characters outside ' '..'~' as \u00xx / \uxxxx / surrogate pairs. Bytes that
 * are not UTF-8 (the seed's reader would stop on them) become U+FFFD. */
void nnp__py_json_body(nnp_obuf_t *o, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t n = strlen(str);
    char b[32]; /* a surrogate pair: two 6-character escapes, with room for any long */
    while (n) {
        unsigned char c = *s;
        size_t len = 1;
        long cp = c;
        const char *esc;
        if (c >= ' ' && c <= '~' && c != '"' && c != '\\') {
            size_t run = 1;
            while (run < n && s[run] >= ' ' && s[run] <= '~' && s[run] != '"' && s[run] != '\\')
                run++;
            nnp__py_ob_put(o, (const char *)s, run);
            s += run;
            n -= run;
            continue;
        }
        esc = c ? strchr(json_esc_chars, c) : NULL;
        if (esc) {
            nnp__py_ob_puts(o, json_short_esc[esc - json_esc_chars]);
        } else {
            if (c >= 0x80) {
                cp = utf8_decode(s, n, &len);
                if (cp < 0) {
                    cp = 0xFFFD;
                    len = 1;
                }
            }
            if (cp >= 0x10000) {
                long v = cp - 0x10000;
                snprintf(b, sizeof(b), "\\u%04lx\\u%04lx", 0xD800 + (v >> 10),
                         0xDC00 + (v & 0x3FF));
            } else {
                snprintf(b, sizeof(b), "\\u%04lx", cp);
            }
            nnp__py_ob_puts(o, b);
        }
        s += len;
        n -= len;
    }
}

void nnp__py_json_str(nnp_obuf_t *o, const char *s)
{
    nnp__py_ob_put(o, "\"", 1);
    nnp__py_json_body(o, s);
    nnp__py_ob_put(o, "\"", 1);
}

/* One CSV field: quoted when it holds a comma, quote, CR or LF, quotes doubled. */
void nnp__py_csv_field(nnp_obuf_t *o, const char *s, bool first)
{
    if (!first)
        nnp__py_ob_put(o, ",", 1);
    if (!strpbrk(s, ",\"\r\n")) {
        nnp__py_ob_puts(o, s);
        return;
    }
    nnp__py_ob_put(o, "\"", 1);
    for (const char *q; (q = strchr(s, '"')) != NULL; s = q + 1) {
        nnp__py_ob_put(o, s, (size_t)(q - s + 1));
        nnp__py_ob_put(o, "\"", 1); /* a quote is doubled */
    }
    nnp__py_ob_puts(o, s);
    nnp__py_ob_put(o, "\"", 1);
}

void nnp__py_csv_header(nnp_obuf_t *o, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        nnp__py_csv_field(o, names[i], i == 0);
    nnp__py_ob_puts(o, NNP_PY_CSV_EOL);
}

/* The value of N * 10^q when it reads back as x: its digits (no trailing zeros) and the
 * exponent of the first digit. */
static bool try_digits(double x, uint64_t mant, int q, char *digits, int *sci_exp)
{
    char b[48];
    int nd;
    if (mant == 0)
        return false;
    snprintf(b, sizeof(b), "%llue%d", (unsigned long long)mant, q);
    if (strtod(b, NULL) != x)
        return false;
    nd = snprintf(digits, MAX_DOUBLE_DIGITS + 3, "%llu", (unsigned long long)mant);
    *sci_exp = q + nd - 1;
    while (nd > 1 && digits[nd - 1] == '0')
        digits[--nd] = '\0';
    return true;
}

/* The shortest digit string that reads back as x (> 0, finite), and the nearest to x of
 * those (David Gay's mode 0, which CPython's repr uses). At each length the correctly
 * rounded string is the nearest; when it does not read back, only a neighbour can. */
static void shortest_digits(double x, char *digits, int *sci_exp)
{
    char b[48];
    for (int p = 1; p <= MAX_DOUBLE_DIGITS; p++) {
        uint64_t mant = 0, pow = 1;
        int e;
        char *ep;
        snprintf(b, sizeof(b), "%.*e", p - 1, x);
        for (const char *s = b; *s && *s != 'e'; s++) {
            if (*s >= '0' && *s <= '9')
                mant = mant * 10 + (uint64_t)(*s - '0');
        }
        ep = strchr(b, 'e');
        e = (int)strtol(ep + 1, NULL, 10);
        for (int i = 1; i < p; i++)
            pow *= 10;
        if (try_digits(x, mant, e - p + 1, digits, sci_exp) ||
            try_digits(x, mant + 1, e - p + 1, digits, sci_exp))
            return;
        /* Below a power of ten the next lower p-digit value is 99..9 one decade down. */
        if (mant == pow ? try_digits(x, pow * 10 - 1, e - p, digits, sci_exp)
                        : try_digits(x, mant - 1, e - p + 1, digits, sci_exp))
            return;
    }
    /* 17 digits always read back; not reached. */
    snprintf(digits, MAX_DOUBLE_DIGITS + 3, "0");
    *sci_exp = 0;
}

/* Python's repr(x) (str() of a float, what csv.writer writes) into out (cap >= 32). */
void nnp__py_float_repr(double x, char *out, size_t cap)
{
    char digits[MAX_DOUBLE_DIGITS + 3], b[MAX_DOUBLE_DIGITS * 2 + 16];
    int sci_exp, decpt, nd;
    size_t n = 0;

    if (isnan(x) || isinf(x) || x == 0) {
        snprintf(out, cap, "%s%s", signbit(x) ? "-" : "",
                 isnan(x)   ? "nan"
                 : isinf(x) ? "inf"
                            : "0.0");
        return;
    }
    if (x < 0)
        b[n++] = '-';
    shortest_digits(fabs(x), digits, &sci_exp);
    nd = (int)strlen(digits);
    decpt = sci_exp + 1; /* digits d1d2.. stand for 0.d1d2.. * 10^decpt */
    if (decpt <= REPR_EXP_LOW || decpt > REPR_EXP_HIGH) {
        /* 1e+16, 1.5e-05: the exponent has a sign and at least two digits. */
        b[n++] = digits[0];
        if (nd > 1) {
            b[n++] = '.';
            for (int i = 1; i < nd; i++)
                b[n++] = digits[i];
        }
        snprintf(b + n, sizeof(b) - n, "e%c%02d", sci_exp < 0 ? '-' : '+', abs(sci_exp));
    } else {
        /* 0.001, 12.5, 100.0: fixed notation, always with a fractional part. */
        if (decpt <= 0) {
            b[n++] = '0';
            b[n++] = '.';
            for (int i = 0; i < -decpt; i++)
                b[n++] = '0';
        }
        for (int i = 0; i < nd || i < decpt; i++) {
            if (i == decpt && decpt > 0)
                b[n++] = '.';
            b[n++] = i < nd ? digits[i] : '0';
        }
        if (decpt >= nd) {
            b[n++] = '.';
            b[n++] = '0';
        }
        b[n] = '\0';
    }
    nnp__strlcpy(out, b, cap);
}
