/* csv_reader.h - an RFC 4180 reader over a file read whole, for the importers of other
 * tools' CSV files. Fields are cut in place (NUL-terminated inside the buffer), so a record
 * costs no allocation beyond the field-pointer array. Line numbers are kept for messages. */
#ifndef NNP_CSV_READER_H
#define NNP_CSV_READER_H

#include <stddef.h>
#include <stdint.h>

typedef struct nnp_csv_reader {
    const char *path; /* borrowed: must outlive the reader */
    char *buf;        /* the whole file */
    size_t len, pos;
    uint64_t line; /* line the current record starts on, 1-based */
    uint64_t next_line;
    char **f; /* fields of the current record */
    size_t n, cap;
    uint64_t warnings; /* bad rows the importer reported for this file */
} nnp_csv_reader_t;

/* Reads path (at most max_bytes) into r. NNP_OK or the error of nnp__read_file. */
int nnp__csv_open(nnp_csv_reader_t *r, const char *path, size_t max_bytes);
/* Reads a copy of the len bytes at data into r (the fuzz target's entry: no file);
 * name (borrowed) stands for the path in messages. NNP_OK or NNP_ENOMEM. */
int nnp__csv_open_mem(nnp_csv_reader_t *r, const char *name, const void *data, size_t len);
void nnp__csv_close(nnp_csv_reader_t *r);
/* Next record: 1, 0 at the end, NNP_ENOMEM. Blank lines are skipped; "" inside quotes is
 * one quote; a quoted field may hold commas and newlines. */
int nnp__csv_next(nnp_csv_reader_t *r);
/* Column of name in the current record (the header), blanks around ignored; -1 if none. */
long nnp__csv_col(const nnp_csv_reader_t *r, const char *name);

#endif /* NNP_CSV_READER_H */
