/* csv_writer.h - streaming CSV writer (RFC 4180 quoting) into a file descriptor through a
 * 1 MiB buffer (grown only for a composed row longer than that). Fields are appended left
 * to right, nnp__csv_end_row() ends a row; per-event writers may compose a whole row
 * themselves (nnp__csv_row_room). Never holds a whole table in memory. Numbers are
 * formatted without printf (util.h numfmt). */
#ifndef NNP_CSV_WRITER_H
#define NNP_CSV_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nnprof/nnprof.h"

typedef struct nnp_csv {
    int fd;
    char *buf;
    size_t len, cap;
    bool row_started;
    int err; /* first error, NNP_OK while fine */
} nnp_csv_t;

int nnp__csv_init(nnp_csv_t *w, int fd);
/* Flushes and releases the buffer; returns the first error met. fd stays open. */
int nnp__csv_fini(nnp_csv_t *w);
/* A text field, quoted when it holds a comma, quote, CR or LF. */
void nnp__csv_str(nnp_csv_t *w, const char *s);
/* The same for n bytes of s (which may be longer): no strlen. */
void nnp__csv_strn(nnp_csv_t *w, const char *s, size_t n);
/* n bytes the caller knows need no quoting (numbers, fixed names), copied as they are. */
void nnp__csv_raw(nnp_csv_t *w, const char *s, size_t n);
/* v / div with exactly `decimals` digits ("12.345"): nnp__fmt_fixed. */
void nnp__csv_fixed_int(nnp_csv_t *w, int64_t v, uint64_t div, int decimals);
void nnp__csv_int(nnp_csv_t *w, int64_t v);
void nnp__csv_uint(nnp_csv_t *w, uint64_t v);
/* A number with a fixed number of decimals ("%.*f"); non-finite values are written empty. */
void nnp__csv_fixed(nnp_csv_t *w, double v, int decimals);
/* A number in the shortest form that reads back exactly ("%.17g" trimmed). */
void nnp__csv_double(nnp_csv_t *w, double v);
void nnp__csv_empty(nnp_csv_t *w);
void nnp__csv_end_row(nnp_csv_t *w);
/* A whole row composed by the caller (per-event files: one bounds check a row). At the
 * start of a row, room for up to n bytes (flushing, or growing the buffer for a row longer
 * than it): where to write them, or NULL after an error (kept in w) or when a row was
 * started field by field.
 * The caller writes the fields with their commas and the ending "\n", then says where it
 * stopped with nnp__csv_row_done. */
char *nnp__csv_row_room_slow(nnp_csv_t *w, size_t n);
static inline char *nnp__csv_row_room(nnp_csv_t *w, size_t n)
{
    /* Inline while the row fits (an error or a missing buffer leaves no room): a call
     * per row of the per-event files is measurable. */
    if (!w->row_started && w->err == NNP_OK && w->buf && w->len + n <= w->cap)
        return w->buf + w->len;
    return nnp__csv_row_room_slow(w, n);
}
static inline void nnp__csv_row_done(nnp_csv_t *w, const char *end)
{
    w->len = (size_t)(end - w->buf);
}
/* Room a text field of n bytes may take in a composed row: quoted, every byte doubled. */
#define NNP_CSV_FIELD_MAX(n) (2 * (n) + 2)
/* Writes n bytes of s at d as nnp__csv_strn would (quoted when needed; d holds
 * NNP_CSV_FIELD_MAX(n) bytes); returns the length. */
size_t nnp__csv_field_into(char *d, const char *s, size_t n);
/* Whether each string of a table (the model's) needs quotes, found once per string id:
 * per-event files write the same names millions of times. */
typedef struct nnp_csv_quotes {
    uint8_t *kind; /* per id: 0 not known yet, else 1 + needs quotes */
    size_t n;
} nnp_csv_quotes_t;
/* Room for ids 0..n-1 (ids past them are scanned each time). NNP_OK or NNP_ENOMEM. */
int nnp__csv_quotes_init(nnp_csv_quotes_t *q, size_t n);
void nnp__csv_quotes_fini(nnp_csv_quotes_t *q);
/* nnp__csv_strn and nnp__csv_field_into for string id of q's table, whose text is s[0..n)
 * (always the same for one id). */
void nnp__csv_strn_id(nnp_csv_t *w, nnp_csv_quotes_t *q, uint32_t id, const char *s, size_t n);
size_t nnp__csv_field_into_id(char *d, nnp_csv_quotes_t *q, uint32_t id, const char *s, size_t n);
/* A whole header row from a NULL-terminated list. */
void nnp__csv_header(nnp_csv_t *w, const char *const *names);

#endif /* NNP_CSV_WRITER_H */
