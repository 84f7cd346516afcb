/* csv_reader.c - see csv_reader.h. */
#include <stdbool.h>
#include <string.h>

#include "nnprof/nnprof.h"
#include "read/csv_reader.h"
#include "util/util.h"

#define INITIAL_FIELDS 16

int nnp__csv_open(nnp_csv_reader_t *r, const char *path, size_t max_bytes)
{
    memset(r, 0, sizeof(*r));
    r->path = path;
    r->next_line = 1;
    return nnp__read_file(path, max_bytes, &r->buf, &r->len);
}

int nnp__csv_open_mem(nnp_csv_reader_t *r, const char *name, const void *data, size_t len)
{
    memset(r, 0, sizeof(*r));
    r->path = name;
    r->next_line = 1;
    /* Without a leading BOM, as nnp__read_file gives a file. */
    if (len >= NNP_UTF8_BOM_LEN && memcmp(data, NNP_UTF8_BOM, NNP_UTF8_BOM_LEN) == 0) {
        data = (const char *)data + NNP_UTF8_BOM_LEN;
        len -= NNP_UTF8_BOM_LEN;
    }
    /* NUL-terminated like nnp__read_file's buffer: a last field ends inside it. */
    r->buf = len < SIZE_MAX ? nnp__malloc(len + 1) : NULL;
    if (!r->buf)
        return nnp__fail(NNP_ENOMEM, "out of memory reading '%s'", name);
    if (len)
        memcpy(r->buf, data, len);
    r->buf[len] = '\0';
    r->len = len;
    return NNP_OK;
}

void nnp__csv_close(nnp_csv_reader_t *r)
{
    nnp__free(r->buf);
    nnp__free(r->f);
    memset(r, 0, sizeof(*r));
}

static int push(nnp_csv_reader_t *r, char *field)
{
    if (r->n == r->cap) {
        size_t ncap = r->cap ? r->cap * 2 : INITIAL_FIELDS;
        char **p = nnp__realloc(r->f, ncap * sizeof(*p));
        if (!p)
            return nnp__fail(NNP_ENOMEM, "out of memory reading '%s'", r->path);
        r->f = p;
        r->cap = ncap;
    }
    r->f[r->n++] = field;
    return NNP_OK;
}

int nnp__csv_next(nnp_csv_reader_t *r)
{
    char *out;
    bool quoted = false;
    int rc;
    while (r->pos < r->len && (r->buf[r->pos] == '\n' || r->buf[r->pos] == '\r')) {
        r->next_line += r->buf[r->pos] == '\n';
        r->pos++;
    }
    if (r->pos >= r->len)
        return 0;
    r->n = 0;
    r->line = r->next_line;
    out = r->buf + r->pos;
    if ((rc = push(r, out)) != NNP_OK)
        return rc;
    while (r->pos < r->len) {
        char ch = r->buf[r->pos++];
        if (quoted) {
            if (ch == '"' && r->pos < r->len && r->buf[r->pos] == '"') {
                *out++ = '"';
                r->pos++;
            } else if (ch == '"') {
                quoted = false;
            } else {
                r->next_line += ch == '\n';
                *out++ = ch;
            }
        } else if (ch == '"') {
            quoted = true;
        } else if (ch == ',') {
            *out++ = '\0'; /* a field never grows: the terminator fits where the comma was */
            if ((rc = push(r, out)) != NNP_OK)
                return rc;
        } else if (ch == '\n' || ch == '\r') {
            r->next_line += ch == '\n';
            break;
        } else {
            *out++ = ch;
        }
    }
    *out = '\0';
    return 1;
}

long nnp__csv_col(const nnp_csv_reader_t *r, const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < r->n; i++) {
        const char *s = r->f[i];
        size_t n;
        while (*s == ' ' || *s == '\t')
            s++;
        n = strlen(s);
        while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
            n--;
        if (n == len && memcmp(s, name, len) == 0)
            return (long)i;
    }
    return -1;
}
