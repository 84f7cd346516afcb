/* mindspore_util.c - helpers the MindSpore importer's files share (mindspore.h): opening a
 * CSV with its header, row warnings (capped per file) and exact number parsing. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnprof/nnprof.h"
#include "read/mindspore.h"
#include "util/util.h"

/* ---- CSV files (read/csv_reader.h) ---- */

/* Reads path and its header record into c; logs and releases c on failure. */
int nnp__ms_csv_open(nnp_csv_reader_t *c, const char *path)
{
    int rc = nnp__csv_open(c, path, MAX_FILE_BYTES);
    if (rc != NNP_OK) {
        NNP_LOG_W("mindspore import: cannot read '%s': %s", path, nnp_last_error());
        return rc;
    }
    if ((rc = nnp__csv_next(c)) > 0)
        return NNP_OK;
    if (rc == 0)
        rc = nnp__fail(NNP_ECORRUPT, "'%s' is empty: no header line", path);
    NNP_LOG_W("mindspore import: %s", nnp_last_error());
    nnp__csv_close(c);
    return rc;
}

void NNP_PRINTF(3, 4) nnp__ms_row_warn(nnp_csv_reader_t *c, uint64_t line, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    if (++c->warnings > MAX_ROW_WARNINGS)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    NNP_LOG_W("mindspore import: '%s' line %llu: %s", c->path, (unsigned long long)line, msg);
}

void nnp__ms_warn_summary(const nnp_csv_reader_t *c)
{
    if (c->warnings > MAX_ROW_WARNINGS)
        NNP_LOG_W("mindspore import: '%s': %llu more bad rows not logged", c->path,
                  (unsigned long long)(c->warnings - MAX_ROW_WARNINGS));
}

/* ---- numbers ---- */

const char *nnp__ms_trim(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* A plain decimal integer with optional blanks around it. */
bool nnp__ms_parse_i64(const char *s, int64_t *out)
{
    char *end;
    long long v;
    s = nnp__ms_trim(s);
    if (!*s)
        return false;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || end == s || *nnp__ms_trim(end))
        return false;
    *out = v;
    return true;
}

/* A decimal "123.456789" ms (at most 6 decimals are kept, more are truncated) as exact ns,
 * without the rounding a double would bring to 16-digit timestamps. */
bool nnp__ms_parse_ms_ns(const char *s, int64_t *out)
{
    return nnp__parse_decimal_ns(s, MS_NS_DIGITS, out);
}
