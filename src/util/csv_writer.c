/* csv_writer.c - see csv_writer.h. Rows end with "\n" (as Python's csv module with
 * lineterminator="\n"; MindSpore's files use that too). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/csv_writer.h"
#include "util/util.h"

#define CSV_BUF 65536

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

static void put(nnp_csv_t *w, const char *s, size_t n)
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

int nnp__csv_fini(nnp_csv_t *w)
{
    flush(w);
    nnp__free(w->buf);
    w->buf = NULL;
    return w->err;
}

static void sep(nnp_csv_t *w)
{
    if (w->row_started)
        put(w, ",", 1);
    w->row_started = true;
}

void nnp__csv_str(nnp_csv_t *w, const char *s)
{
    size_t n;
    sep(w);
    if (!s)
        return;
    n = strlen(s);
    if (strpbrk(s, ",\"\r\n") == NULL) {
        put(w, s, n);
        return;
    }
    put(w, "\"", 1);
    for (const char *p = s; *p; p++) {
        if (*p == '"')
            put(w, "\"", 1);
        put(w, p, 1);
    }
    put(w, "\"", 1);
}

void nnp__csv_int(nnp_csv_t *w, int64_t v)
{
    char b[32];
    size_t n = nnp__fmt_i64(b, v);
    sep(w);
    put(w, b, n);
}

void nnp__csv_uint(nnp_csv_t *w, uint64_t v)
{
    char b[32];
    size_t n = nnp__fmt_u64(b, v);
    sep(w);
    put(w, b, n);
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
    sep(w);
    if (!isfinite(v))
        return;
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

void nnp__csv_header(nnp_csv_t *w, const char *const *names)
{
    for (; *names; names++)
        nnp__csv_str(w, *names);
    nnp__csv_end_row(w);
}
