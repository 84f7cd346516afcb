/* csv_writer.c - see csv_writer.h. Rows end with "\n" (as Python's csv module with
 * lineterminator="\n"; MindSpore's files use that too). The per-field paths copy into the
 * buffer with one bounds check; per-execution files have millions of rows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/csv_writer.h"
#include "util/util.h"

/* 1 MiB: a write(2) per MiB keeps the syscall cost of a GB-sized file (kernel_details,
 * operator_memory of a long run) under 1 % of the copying. */
#define CSV_BUF (1u << 20)

int nnp__csv_init(nnp_csv_t *w, int fd)
{
    memset(w, 0, sizeof(*w));
    w->fd = fd;
    w->cap = CSV_BUF;
    w->buf = nnp__malloc(w->cap);
    if (!w->buf)
        return w->err = nnp__fail(NNP_ENOMEM, "out of memory in CSV writer");
    return NNP_OK;
}

static void flush(nnp_csv_t *w)
{
    if (w->len && w->err == NNP_OK) {
        int rc = nnp__write_all(w->fd, w->buf, w->len);
        if (rc != NNP_OK)
            w->err = rc;
    }
    w->len = 0;
}

static void put_slow(nnp_csv_t *w, const char *s, size_t n)
{
    if (w->err != NNP_OK || !w->buf)
        return;
    if (w->len + n > w->cap)
        flush(w);
    if (n > w->cap) {
        if (nnp__write_all(w->fd, s, n) != NNP_OK)
            w->err = NNP_EIO;
        return;
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
}

/* Fast path: room in the buffer (an error or a missing buffer sets cap to 0). */
static inline void put(nnp_csv_t *w, const char *s, size_t n)
{
    if (NNP_LIKELY(w->len + n <= w->cap && w->err == NNP_OK)) {
        memcpy(w->buf + w->len, s, n);
        w->len += n;
        return;
    }
    put_slow(w, s, n);
}

/* The fast path of a field of at most n bytes: with room for its separator and n bytes
 * (and no error), writes the separator and returns where the field goes; else NULL and
 * nothing is written (the caller takes the general path). */
static inline char *field_fast(nnp_csv_t *w, size_t n)
{
    char *d;
    if (NNP_UNLIKELY(w->len + n + 1 > w->cap || w->err != NNP_OK))
        return NULL;
    d = w->buf + w->len;
    if (w->row_started)
        *d++ = ',';
    w->row_started = true;
    w->len = (size_t)(d - w->buf);
    return d;
}

int nnp__csv_fini(nnp_csv_t *w)
{
    flush(w);
    nnp__free(w->buf);
    w->buf = NULL;
    return w->err;
}

static inline void sep(nnp_csv_t *w)
{
    if (w->row_started)
        put(w, ",", 1);
    w->row_started = true;
}

/* Bytes that make a field need quotes (RFC 4180). */
static inline bool needs_quotes(unsigned char c)
{
    return c == ',' || c == '"' || c == '\r' || c == '\n';
}

static void quoted(nnp_csv_t *w, const char *s, size_t n)
{
    put(w, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"')
            put(w, "\"", 1);
        put(w, s + i, 1);
    }
    put(w, "\"", 1);
}

/* Whether a word of 8 bytes has one that needs quotes. */
static inline bool word_needs_quotes(uint64_t x)
{
    return (nnp__swar_eq(x, ',') | nnp__swar_eq(x, '"') | nnp__swar_eq(x, '\r') |
            nnp__swar_eq(x, '\n')) != 0;
}

/* Whether any of the n bytes of s needs quotes. */
static bool any_needs_quotes(const char *s, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, s + i, 8);
        if (NNP_UNLIKELY(word_needs_quotes(x)))
            return true;
    }
    for (; i < n; i++)
        if (needs_quotes((unsigned char)s[i]))
            return true;
    return false;
}

/* A text field whose need of quotes (q) is known. */
static void strn_known(nnp_csv_t *w, const char *s, size_t n, bool q)
{
    char *d;
    if (NNP_LIKELY(!q) && (d = field_fast(w, n)) != NULL) {
        nnp__copy_short(d, s, n);
        w->len += n;
        return;
    }
    sep(w);
    if (q)
        quoted(w, s, n);
    else
        put(w, s, n);
}

void nnp__csv_strn(nnp_csv_t *w, const char *s, size_t n)
{
    strn_known(w, s, n, any_needs_quotes(s, n));
}

int nnp__csv_quotes_init(nnp_csv_quotes_t *q, size_t n)
{
    q->kind = n ? nnp__calloc(n, 1) : NULL;
    q->n = q->kind ? n : 0;
    if (n && !q->kind)
        return nnp__fail(NNP_ENOMEM, "out of memory in CSV writer");
    return NNP_OK;
}

void nnp__csv_quotes_fini(nnp_csv_quotes_t *q)
{
    nnp__free(q->kind);
    q->kind = NULL;
    q->n = 0;
}

static bool id_needs_quotes(nnp_csv_quotes_t *q, uint32_t id, const char *s, size_t n)
{
    if (id >= q->n)
        return any_needs_quotes(s, n);
    if (!q->kind[id])
        q->kind[id] = (uint8_t)(1 + any_needs_quotes(s, n));
    return q->kind[id] == 2;
}

void nnp__csv_strn_id(nnp_csv_t *w, nnp_csv_quotes_t *q, uint32_t id, const char *s, size_t n)
{
    strn_known(w, s, n, id_needs_quotes(q, id, s, n));
}

void nnp__csv_str(nnp_csv_t *w, const char *s)
{
    if (!s) {
        sep(w);
        return;
    }
    nnp__csv_strn(w, s, strlen(s));
}

void nnp__csv_raw(nnp_csv_t *w, const char *s, size_t n)
{
    char *d = field_fast(w, n);
    if (NNP_LIKELY(d != NULL)) {
        nnp__copy_short(d, s, n);
        w->len += n;
        return;
    }
    sep(w);
    put(w, s, n);
}

/* Room for n more bytes in the buffer (flushing first when needed); false after an
 * error. Numbers are formatted straight into the buffer. */
static inline bool room(nnp_csv_t *w, size_t n)
{
    if (NNP_LIKELY(w->len + n <= w->cap && w->err == NNP_OK))
        return true;
    if (w->err != NNP_OK || !w->buf)
        return false;
    flush(w);
    return w->err == NNP_OK && n <= w->cap;
}

void nnp__csv_fixed_int(nnp_csv_t *w, int64_t v, uint64_t div, int decimals)
{
    char *d = field_fast(w, NNP_FMT_NUM_MAX);
    if (NNP_LIKELY(d != NULL)) {
        w->len += nnp__fmt_fixed(d, v, div, decimals);
        return;
    }
    sep(w);
    if (room(w, NNP_FMT_NUM_MAX))
        w->len += nnp__fmt_fixed(w->buf + w->len, v, div, decimals);
}

void nnp__csv_int(nnp_csv_t *w, int64_t v)
{
    char *d = field_fast(w, NNP_FMT_NUM_MAX);
    if (NNP_LIKELY(d != NULL)) {
        w->len += nnp__fmt_i64(d, v);
        return;
    }
    sep(w);
    if (room(w, NNP_FMT_NUM_MAX))
        w->len += nnp__fmt_i64(w->buf + w->len, v);
}

void nnp__csv_uint(nnp_csv_t *w, uint64_t v)
{
    char *d = field_fast(w, NNP_FMT_NUM_MAX);
    if (NNP_LIKELY(d != NULL)) {
        w->len += nnp__fmt_u64(d, v);
        return;
    }
    sep(w);
    if (room(w, NNP_FMT_NUM_MAX))
        w->len += nnp__fmt_u64(w->buf + w->len, v);
}

void nnp__csv_fixed(nnp_csv_t *w, double v, int decimals)
{
    char b[64];
    int n;
    sep(w);
    if (!isfinite(v))
        return;
    n = snprintf(b, sizeof(b), "%.*f", decimals, v);
    if (n > 0 && (size_t)n < sizeof(b))
        put(w, b, (size_t)n);
}

void nnp__csv_double(nnp_csv_t *w, double v)
{
    char b[64];
    size_t k;
    sep(w);
    if (!isfinite(v))
        return;
    k = nnp__fmt_whole_double(b, v);
    if (k > 0) { /* a whole number: its digits, as %.15g prints it */
        put(w, b, k);
        return;
    }
    /* Shortest of %.15g..%.17g that reads back to the same double. */
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(b, sizeof(b), "%.*g", prec, v);
        if (strtod(b, NULL) == v)
            break;
    }
    put(w, b, strlen(b));
}

void nnp__csv_empty(nnp_csv_t *w)
{
    sep(w);
}

void nnp__csv_end_row(nnp_csv_t *w)
{
    put(w, "\n", 1);
    w->row_started = false;
}

/* A text field at d whose need of quotes (q) is known. */
static size_t field_into_known(char *d, const char *s, size_t n, bool q)
{
    size_t k = 0;
    if (!q) {
        nnp__copy_short(d, s, n);
        return n;
    }
    d[k++] = '"';
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"')
            d[k++] = '"';
        d[k++] = s[i];
    }
    d[k++] = '"';
    return k;
}

size_t nnp__csv_field_into(char *d, const char *s, size_t n)
{
    return field_into_known(d, s, n, any_needs_quotes(s, n));
}

size_t nnp__csv_field_into_id(char *d, nnp_csv_quotes_t *q, uint32_t id, const char *s, size_t n)
{
    return field_into_known(d, s, n, id_needs_quotes(q, id, s, n));
}

char *nnp__csv_row_room_slow(nnp_csv_t *w, size_t n)
{
    if (w->row_started || w->err != NNP_OK || !w->buf)
        return NULL;
    if (w->len + n > w->cap)
        flush(w);
    if (w->err == NNP_OK && n > w->cap) { /* a row longer than the buffer: it grows */
        char *b = nnp__realloc(w->buf, n);
        if (!b) {
            w->err = nnp__fail(NNP_ENOMEM, "out of memory in CSV writer");
            return NULL;
        }
        w->buf = b;
        w->cap = n;
    }
    return w->err == NNP_OK ? w->buf + w->len : NULL;
}

void nnp__csv_header(nnp_csv_t *w, const char *const *names)
{
    for (; *names; names++)
        nnp__csv_str(w, *names);
    nnp__csv_end_row(w);
}
