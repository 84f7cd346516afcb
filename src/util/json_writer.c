/* json_writer.c - see json_writer.h. Strings are escaped per RFC 8259; bytes >= 0x80 pass
 * through (input is UTF-8), control characters become \u00XX. Non-finite doubles have no
 * JSON spelling and are written as null. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_writer.h"
#include "util.h"

/* fd mode flushes in 1 MiB writes: a syscall per MiB is < 1 % of writing a GB-sized
 * timeline, and the buffer stays in L2/L3. */
#define JW_FD_BUF      (1u << 20)
#define JW_MEM_INITIAL 1024
/* %.15g is exact for 15-digit decimals, %.17g for every double. */
#define SHORTEST_DIGITS   15
#define ROUND_TRIP_DIGITS 17

int nnp__jw_init(nnp_jw_t *w, int fd, bool pretty, size_t mem_cap)
{
    memset(w, 0, sizeof(*w));
    w->fd = fd;
    w->pretty = pretty;
    w->mem_cap = mem_cap;
    w->cap = fd >= 0 ? JW_FD_BUF : JW_MEM_INITIAL;
    if (fd < 0 && w->cap > mem_cap + 1)
        w->cap = mem_cap + 1; /* the cap holds from the first byte, not only on growth */
    w->buf = nnp__malloc(w->cap);
    w->first[0] = true;
    if (!w->buf)
        return w->err = nnp__fail(NNP_ENOMEM, "out of memory in JSON writer");
    return NNP_OK;
}

int nnp__jw_flush(nnp_jw_t *w)
{
    if (w->fd >= 0 && w->len > 0 && w->err == NNP_OK) {
        int rc = nnp__write_all(w->fd, w->buf, w->len);
        if (rc != NNP_OK)
            w->err = rc;
        w->flushed += w->len;
    }
    if (w->fd >= 0)
        w->len = 0;
    return w->err;
}

char *nnp__jw_take(nnp_jw_t *w, size_t *len)
{
    char *b = w->buf;
    if (w->err != NNP_OK || w->fd >= 0) {
        return NULL;
    }
    b[w->len] = '\0';
    if (len)
        *len = w->len;
    w->buf = NULL;
    w->len = w->cap = 0;
    return b;
}

void nnp__jw_fini(nnp_jw_t *w)
{
    nnp__free(w->buf);
    w->buf = NULL;
}

static void put_slow(nnp_jw_t *w, const char *s, size_t n)
{
    if (w->err != NNP_OK)
        return;
    if (w->len + n + 1 > w->cap) {
        if (w->fd >= 0) {
            nnp__jw_flush(w);
            if (n + 1 > w->cap) {
                if (nnp__write_all(w->fd, s, n) != NNP_OK)
                    w->err = NNP_EIO;
                w->flushed += n;
                return;
            }
        } else {
            size_t ncap = w->cap;
            char *nb;
            while (w->len + n + 1 > ncap)
                ncap *= 2;
            if (ncap > w->mem_cap + 1) {
                w->err = nnp__fail(NNP_ETOOLONG, "JSON output exceeds %zu bytes", w->mem_cap);
                return;
            }
            nb = nnp__realloc(w->buf, ncap);
            if (!nb) {
                w->err = nnp__fail(NNP_ENOMEM, "out of memory in JSON writer");
                return;
            }
            w->buf = nb;
            w->cap = ncap;
        }
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
}

/* Fast paths: most tokens are a few bytes and the buffer has room. */
static inline void put(nnp_jw_t *w, const char *s, size_t n)
{
    if (NNP_LIKELY(w->len + n + 1 <= w->cap && w->err == NNP_OK)) {
        nnp__copy_short(w->buf + w->len, s, n);
        w->len += n;
        return;
    }
    put_slow(w, s, n);
}

static inline void put_char(nnp_jw_t *w, char c)
{
    if (NNP_LIKELY(w->len + 2 <= w->cap && w->err == NNP_OK)) {
        w->buf[w->len++] = c;
        return;
    }
    put_slow(w, &c, 1);
}

static void puts_(nnp_jw_t *w, const char *s)
{
    put(w, s, strlen(s));
}

static void newline(nnp_jw_t *w)
{
    static const char spaces[] = "                                                                ";
    int indent = w->depth * 2;
    put(w, "\n", 1);
    while (indent > 0) {
        int k = indent < (int)sizeof(spaces) - 1 ? indent : (int)sizeof(spaces) - 1;
        put(w, spaces, (size_t)k);
        indent -= k;
    }
}

/* Writes the separator a new value or key needs at the current position. */
static void before_value(nnp_jw_t *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (!w->first[w->depth])
        put(w, ",", 1);
    w->first[w->depth] = false;
    if (w->pretty && w->depth > 0)
        newline(w);
}

static void open_(nnp_jw_t *w, char c)
{
    before_value(w);
    put(w, &c, 1);
    if (w->depth + 1 >= NNP_JW_MAX_DEPTH) {
        if (w->err == NNP_OK)
            w->err = nnp__fail(NNP_EINVAL, "JSON nesting deeper than %d", NNP_JW_MAX_DEPTH);
        return;
    }
    w->depth++;
    w->first[w->depth] = true;
}

static void close_(nnp_jw_t *w, char c)
{
    bool empty;
    if (w->depth == 0)
        return;
    empty = w->first[w->depth];
    w->depth--;
    if (w->pretty && !empty)
        newline(w);
    put(w, &c, 1);
}

void nnp__jw_obj_begin(nnp_jw_t *w)
{
    open_(w, '{');
}
void nnp__jw_obj_end(nnp_jw_t *w)
{
    close_(w, '}');
}
void nnp__jw_arr_begin(nnp_jw_t *w)
{
    open_(w, '[');
}
void nnp__jw_arr_end(nnp_jw_t *w)
{
    close_(w, ']');
}

/* Bytes that need escaping in a JSON string: controls, '"', '\\' and DEL. */
static bool needs_escape(unsigned char c)
{
    return c < 0x20 || c == '"' || c == '\\' || c == 0x7f;
}

/* Whether a word of 8 bytes has one that needs escaping. */
static inline bool word_needs_escape(uint64_t x)
{
    return (nnp__swar_lt(x, 0x20) | nnp__swar_eq(x, '"') | nnp__swar_eq(x, '\\') |
            nnp__swar_eq(x, 0x7f)) != 0;
}

/* Writes the escape sequence of one byte for which needs_escape() is true. */
static void escape_one(nnp_jw_t *w, unsigned char c)
{
    static const char hex[] = "0123456789abcdef";
    char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xF]};
    switch (c) {
    case '"':
        put(w, "\\\"", 2);
        break;
    case '\\':
        put(w, "\\\\", 2);
        break;
    case '\n':
        put(w, "\\n", 2);
        break;
    case '\r':
        put(w, "\\r", 2);
        break;
    case '\t':
        put(w, "\\t", 2);
        break;
    default:
        put(w, u, sizeof(u));
        break;
    }
}

/* A string of n bytes (may hold NULs), quoted and escaped: safe runs are copied whole. */
static void escaped(nnp_jw_t *w, const char *s, size_t n)
{
    size_t run = 0;
    if (!nnp__jw_needs_escape(s, n) && NNP_LIKELY(w->len + n + 3 <= w->cap && w->err == NNP_OK)) {
        char *d = w->buf + w->len; /* the common case: nothing to escape, room for it */
        d[0] = '"';
        nnp__copy_short(d + 1, s, n);
        d[n + 1] = '"';
        w->len += n + 2;
        return;
    }
    put_char(w, '"');
    for (size_t i = 0; i < n; i++) {
        if (NNP_LIKELY(!needs_escape((unsigned char)s[i])))
            continue;
        put(w, s + run, i - run);
        escape_one(w, (unsigned char)s[i]);
        run = i + 1;
    }
    put(w, s + run, n - run);
    put_char(w, '"');
}

/* The same for a NUL-terminated string, in one pass (no separate strlen). */
static void escaped_cstr(nnp_jw_t *w, const char *s)
{
    put_char(w, '"');
    for (;;) {
        const char *run = s;
        while (*s && !needs_escape((unsigned char)*s))
            s++;
        put(w, run, (size_t)(s - run));
        if (!*s)
            break;
        escape_one(w, (unsigned char)*s++);
    }
    put_char(w, '"');
}

void nnp__jw_key(nnp_jw_t *w, const char *key)
{
    before_value(w);
    escaped_cstr(w, key);
    put(w, w->pretty ? ": " : ":", w->pretty ? 2 : 1);
    w->after_key = true;
}

void nnp__jw_strn(nnp_jw_t *w, const char *s, size_t n)
{
    before_value(w);
    escaped(w, s, n);
}

void nnp__jw_str(nnp_jw_t *w, const char *s)
{
    if (!s) {
        nnp__jw_null(w);
        return;
    }
    before_value(w);
    escaped_cstr(w, s);
}

void nnp__jw_int(nnp_jw_t *w, int64_t v)
{
    char b[32];
    size_t n = nnp__fmt_i64(b, v);
    before_value(w);
    put(w, b, n);
}

void nnp__jw_uint(nnp_jw_t *w, uint64_t v)
{
    char b[32];
    size_t n = nnp__fmt_u64(b, v);
    before_value(w);
    put(w, b, n);
}

/* The shortest of %.15g..%.17g that reads back as v: exact, without the noise digits of
 * %.17g (118560.544 rather than 118560.54399999999). Returns the length (b holds NNP_FMT_NUM_MAX).
 */
static size_t fmt_double(char *b, size_t cap, double v)
{
    int n;
    size_t k;
    if (cap >= NNP_FMT_NUM_MAX && (k = nnp__fmt_whole_double(b, v)) > 0)
        return k; /* a whole number: its digits, as %.15g prints it */
    if (cap >= NNP_FMT_NUM_MAX && (k = nnp__fmt_short_double(b, v)) > 0)
        return k; /* a short decimal, as %.15g prints it */
    for (int prec = SHORTEST_DIGITS;; prec++) {
        n = snprintf(b, cap, "%.*g", prec, v);
        if (prec >= ROUND_TRIP_DIGITS || strtod(b, NULL) == v)
            break;
    }
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

void nnp__jw_double(nnp_jw_t *w, double v)
{
    char b[NNP_FMT_NUM_MAX];
    size_t n;
    if (!isfinite(v)) {
        nnp__jw_null(w);
        return;
    }
    n = fmt_double(b, sizeof(b), v);
    before_value(w);
    put(w, b, n);
}

void nnp__jw_bool(nnp_jw_t *w, bool v)
{
    before_value(w);
    puts_(w, v ? "true" : "false");
}

void nnp__jw_null(nnp_jw_t *w)
{
    before_value(w);
    puts_(w, "null");
}

void nnp__jw_raw(nnp_jw_t *w, const char *json)
{
    before_value(w);
    puts_(w, json);
}

/* ---- fragments ---- */

void nnp__jw_value_begin(nnp_jw_t *w)
{
    before_value(w);
}

void nnp__jw_put_slow(nnp_jw_t *w, const char *s, size_t n)
{
    put_slow(w, s, n);
}

void nnp__jw_frag_str(nnp_jw_t *w, const char *s, size_t n)
{
    escaped(w, s, n);
}

void nnp__jw_frag_clean_str(nnp_jw_t *w, const char *s, size_t n)
{
    if (NNP_LIKELY(w->len + n + 3 <= w->cap && w->err == NNP_OK)) {
        char *d = w->buf + w->len;
        d[0] = '"';
        nnp__copy_short(d + 1, s, n);
        d[n + 1] = '"';
        w->len += n + 2;
        return;
    }
    put_char(w, '"');
    put(w, s, n);
    put_char(w, '"');
}

/* Room for a formatted number at the end of the buffer: numbers are written straight
 * into it. False in memory mode when the cap is reached, or after an error. */
static bool num_room(nnp_jw_t *w)
{
    if (NNP_LIKELY(w->len + NNP_FMT_NUM_MAX + 1 <= w->cap && w->err == NNP_OK))
        return true;
    if (w->err != NNP_OK)
        return false;
    if (w->fd >= 0) {
        nnp__jw_flush(w);
        return w->err == NNP_OK && w->len + NNP_FMT_NUM_MAX + 1 <= w->cap;
    }
    return false;
}

void nnp__jw_frag_u64(nnp_jw_t *w, uint64_t v)
{
    char b[NNP_FMT_NUM_MAX];
    if (num_room(w)) {
        w->len += nnp__fmt_u64(w->buf + w->len, v);
        return;
    }
    put(w, b, nnp__fmt_u64(b, v));
}

void nnp__jw_frag_i64(nnp_jw_t *w, int64_t v)
{
    char b[NNP_FMT_NUM_MAX];
    if (num_room(w)) {
        w->len += nnp__fmt_i64(w->buf + w->len, v);
        return;
    }
    put(w, b, nnp__fmt_i64(b, v));
}

void nnp__jw_frag_fixed(nnp_jw_t *w, int64_t v, uint64_t div, int decimals)
{
    char b[NNP_FMT_NUM_MAX];
    if (num_room(w)) {
        w->len += nnp__fmt_fixed(w->buf + w->len, v, div, decimals);
        return;
    }
    put(w, b, nnp__fmt_fixed(b, v, div, decimals));
}

void nnp__jw_frag_double(nnp_jw_t *w, double v)
{
    char b[NNP_FMT_NUM_MAX];
    if (!isfinite(v)) {
        puts_(w, "null");
        return;
    }
    put(w, b, fmt_double(b, sizeof(b), v));
}

bool nnp__jw_needs_escape(const char *s, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, s + i, 8);
        if (word_needs_escape(x))
            return true;
    }
    for (; i < n; i++)
        if (needs_escape((unsigned char)s[i]))
            return true;
    return false;
}

void nnp__jw_line_end(nnp_jw_t *w)
{
    put(w, "\n", 1);
    if (w->depth == 0)
        w->first[0] = true;
}
