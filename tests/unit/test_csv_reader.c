/* test_csv_reader.c - the importers' CSV reader (src/read/csv_reader.c) over a buffer in
 * memory (nnp__csv_open_mem, the fuzz target's entry): quoted fields holding commas,
 * doubled quotes and newlines, CRLF and blank lines, the line each record starts on, a
 * last record without a newline, header lookup with blanks around names, an empty buffer,
 * and the caller's bytes left untouched (fields are cut in the reader's own copy). */
#include <string.h>

#include "read/csv_reader.h"
#include "test_util.h"

static void test_records_fields_and_lines(void **state)
{
    static const char text[] = "Name, Start \r\n\r\n\"a,b\",\"say \"\"hi\"\"\"\n"
                               "\"multi\nline\",x\nlast,1";
    char copy[sizeof(text)];
    nnp_csv_reader_t r;
    (void)state;
    memcpy(copy, text, sizeof(text));
    assert_int_equal(nnp__csv_open_mem(&r, "mem.csv", copy, sizeof(text) - 1), NNP_OK);
    assert_string_equal(r.path, "mem.csv");

    assert_int_equal(nnp__csv_next(&r), 1);
    assert_int_equal(r.line, 1);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.f[0], "Name");
    assert_string_equal(r.f[1], " Start ");
    assert_int_equal(nnp__csv_col(&r, "Start"), 1);
    assert_int_equal(nnp__csv_col(&r, "Name"), 0);
    assert_int_equal(nnp__csv_col(&r, "Stop"), -1);

    /* The blank line (CRLF) is skipped; lines still count. */
    assert_int_equal(nnp__csv_next(&r), 1);
    assert_int_equal(r.line, 3);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.f[0], "a,b");
    assert_string_equal(r.f[1], "say \"hi\"");

    assert_int_equal(nnp__csv_next(&r), 1);
    assert_int_equal(r.line, 4);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.f[0], "multi\nline");
    assert_string_equal(r.f[1], "x");

    /* A record spanning two lines moves the next one to line 6; no final newline. */
    assert_int_equal(nnp__csv_next(&r), 1);
    assert_int_equal(r.line, 6);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.f[0], "last");
    assert_string_equal(r.f[1], "1");

    assert_int_equal(nnp__csv_next(&r), 0);
    nnp__csv_close(&r);
    assert_memory_equal(copy, text, sizeof(text));
}

static void test_empty_buffer(void **state)
{
    nnp_csv_reader_t r;
    (void)state;
    assert_int_equal(nnp__csv_open_mem(&r, "empty.csv", "", 0), NNP_OK);
    assert_non_null(r.buf);
    assert_int_equal(r.buf[0], '\0');
    assert_int_equal(nnp__csv_next(&r), 0);
    nnp__csv_close(&r);
    assert_int_equal(nnp__csv_open_mem(&r, "blank.csv", "\r\n\n", 3), NNP_OK);
    assert_int_equal(nnp__csv_next(&r), 0);
    nnp__csv_close(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_records_fields_and_lines),
        cmocka_unit_test(test_empty_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
