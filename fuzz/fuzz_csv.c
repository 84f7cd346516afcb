/* fuzz_csv.c - libFuzzer harness for the importers' in-memory CSV reader
 * (src/read/csv_reader.c). The input is the file. Besides crashes it checks the reader's
 * contracts: every field lies inside the buffer and ends before the next one starts, no
 * field is longer than the bytes it came from, records start on non-decreasing lines,
 * and a header name is found by nnp__csv_col at its own column or an earlier equal one. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "nnprof/nnprof.h"
#include "read/csv_reader.h"

/* Records read per input before stopping: far more than any seed holds. */
#define MAX_RECORDS 100000u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

NNP_FUZZ_INITIALIZE("csv", NULL);

static void check_record(const nnp_csv_reader_t *r, const char *prev_end)
{
    const char *end = r->buf + r->len + 1; /* the buffer ends after its NUL */
    nnp_fuzz_check(r->n >= 1 && r->n <= r->cap);
    for (size_t i = 0; i < r->n; i++) {
        const char *f = r->f[i];
        size_t len;
        nnp_fuzz_check(f >= r->buf && f < end && f >= prev_end);
        len = strnlen(f, (size_t)(end - f));
        nnp_fuzz_check(f + len < end);              /* NUL-terminated inside the buffer */
        nnp_fuzz_check(f + len <= r->buf + r->pos); /* cut in place, behind the reader */
        prev_end = f + len + 1;
        if (i + 1 < r->n)
            nnp_fuzz_check(r->f[i + 1] >= prev_end);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nnp_csv_reader_t r;
    uint64_t line = 0;
    int rc;

    if (nnp__csv_open_mem(&r, "fuzz-input", data, size) != NNP_OK)
        return 0;
    for (unsigned k = 0; k < MAX_RECORDS && (rc = nnp__csv_next(&r)) > 0; k++) {
        nnp_fuzz_check(r.line >= line && r.line >= 1 && r.next_line >= r.line);
        line = r.line;
        check_record(&r, r.buf);
        /* Lookups of this record's own names, as the importers do with a header. */
        for (size_t i = 0; i < r.n && i < 4; i++) {
            char name[64];
            const char *s = r.f[i];
            size_t len;
            long col;
            while (*s == ' ' || *s == '\t')
                s++;
            len = strlen(s);
            while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
                len--;
            if (len >= sizeof(name))
                continue;
            memcpy(name, s, len);
            name[len] = '\0';
            col = nnp__csv_col(&r, name);
            nnp_fuzz_check(col >= 0 && (size_t)col <= i);
        }
    }
    nnp__csv_close(&r);
    return 0;
}
