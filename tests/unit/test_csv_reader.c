/* test_csv_reader.c - the importers' CSV reader (src/read/csv_reader.c) over a buffer in
 * memory (nnp__csv_open_mem, the fuzz target's entry): quoted fields holding commas,
 * doubled quotes and newlines, CRLF and blank lines, the line each record starts on, a
 * last record without a newline, header lookup with blanks around names, an empty buffer,
 * the caller's bytes left untouched (fields are cut in the reader's own copy), and a UTF-8
 * byte order mark skipped in a buffer and in a file (nnp__read_file). */
#include <string.h>

#include <stdlib.h>

#include "read/csv_reader.h"
#include "test_util.h"
#include "util/util.h"

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

/* Excel and Python's "utf-8-sig" start a file with a BOM: the first header is still found,
 * from memory and from a file; a BOM alone is an empty file. */
static void test_bom_skipped(void **state)
{
    static const char text[] = "\xEF\xBB\xBFStep Id,Name\n3,conv\n";
    char *dir = nnpt_mkdtemp(), *path = nnpt_write_file(dir, "k.csv", text), *buf;
    size_t len;
    nnp_csv_reader_t r;
    (void)state;
    for (int from_file = 0; from_file < 2; from_file++) {
        if (from_file)
            assert_int_equal(nnp__csv_open(&r, path, 1024), NNP_OK);
        else
            assert_int_equal(nnp__csv_open_mem(&r, "k.csv", text, sizeof(text) - 1), NNP_OK);
        assert_int_equal(nnp__csv_next(&r), 1);
        assert_string_equal(r.f[0], "Step Id");
        assert_int_equal(nnp__csv_col(&r, "Step Id"), 0);
        assert_int_equal(nnp__csv_next(&r), 1);
        assert_string_equal(r.f[1], "conv");
        nnp__csv_close(&r);
    }
    assert_int_equal(nnp__read_file(path, 1024, &buf, &len), NNP_OK);
    assert_int_equal(len, sizeof(text) - 1 - 3);
    assert_string_equal(buf, "Step Id,Name\n3,conv\n");
    nnp__free(buf);
    free(path);
    path = nnpt_write_file(dir, "bom_only.csv", "\xEF\xBB\xBF");
    assert_int_equal(nnp__csv_open(&r, path, 1024), NNP_OK);
    assert_int_equal(nnp__csv_next(&r), 0);
    nnp__csv_close(&r);
    free(path);
    nnpt_rm_rf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_records_fields_and_lines),
        cmocka_unit_test(test_empty_buffer),
        cmocka_unit_test(test_bom_skipped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
