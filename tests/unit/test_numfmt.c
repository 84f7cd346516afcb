/* test_numfmt.c - number text without printf (src/util/numfmt.c) and the CSV writer's
 * per-field paths that use it: every value checked against what snprintf prints for it,
 * across digit-count boundaries, signs and the extremes; quoting of fields near the CSV
 * buffer's end. */
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"
#include "util/csv_writer.h"
#include "util/util.h"

/* Values around every power of ten, and the extremes. */
static size_t boundary_values(uint64_t *v, size_t cap)
{
    size_t n = 0;
    uint64_t p = 1;
    v[n++] = 0;
    v[n++] = UINT64_MAX;
    v[n++] = (uint64_t)INT64_MAX;
    for (int k = 0; k < 20 && n + 3 <= cap; k++) {
        v[n++] = p - 1;
        v[n++] = p;
        v[n++] = p + 1;
        if (p > UINT64_MAX / 10)
            break;
        p *= 10;
    }
    return n;
}

static void test_u64_i64(void **state)
{
    uint64_t v[80];
    size_t n = boundary_values(v, 80);
    (void)state;
    for (size_t i = 0; i < n; i++) {
        char got[NNP_FMT_NUM_MAX], want[NNP_FMT_NUM_MAX];
        size_t len = nnp__fmt_u64(got, v[i]);
        got[len] = '\0';
        snprintf(want, sizeof(want), "%" PRIu64, v[i]);
        assert_string_equal(got, want);
        if (v[i] <= (uint64_t)INT64_MAX) {
            int64_t s = (int64_t)v[i];
            len = nnp__fmt_i64(got, -s);
            got[len] = '\0';
            snprintf(want, sizeof(want), "%" PRId64, -s);
            assert_string_equal(got, want);
        }
    }
    {
        char got[NNP_FMT_NUM_MAX];
        size_t len = nnp__fmt_i64(got, INT64_MIN);
        got[len] = '\0';
        assert_string_equal(got, "-9223372036854775808");
    }
}

static void test_fixed(void **state)
{
    static const struct {
        int64_t v;
        uint64_t div;
        int decimals;
        const char *want;
    } cases[] = {
        {0, 1000, 3, "0.000"},
        {1, 1000, 3, "0.001"},
        {999, 1000, 3, "0.999"},
        {1000, 1000, 3, "1.000"},
        {-1, 1000, 3, "-0.001"},
        {-123456789, 1000, 3, "-123456.789"},
        {1699999999999999999, 1000, 3, "1699999999999999.999"},
        {INT64_MIN, 1000, 3, "-9223372036854775.808"},
        {5, 1000000, 6, "0.000005"},
        {123456789, 1000000, 6, "123.456789"},
        {7, 10, 1, "0.7"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char got[NNP_FMT_NUM_MAX];
        size_t len = nnp__fmt_fixed(got, cases[i].v, cases[i].div, cases[i].decimals);
        assert_string_equal(got, cases[i].want);
        assert_int_equal(len, strlen(cases[i].want));
    }
    {
        char b[NNP_FMT_NUM_MAX];
        assert_string_equal(nnp__fmt_ns_as_us(b, sizeof(b), -1500), "-1.500");
        /* Cut to the buffer, NUL-terminated. */
        assert_string_equal(nnp__fmt_ns_as_us(b, 4, 123456), "123");
    }
}

/* Values of every length (1 to 20 digits), the digits pseudo-random (an LCG), and their
 * µs text from ns (3 decimals), each against snprintf: the formatter picks the length by
 * comparisons, so every length and every split into groups of 4 and 8 is visited. */
static void test_every_length(void **state)
{
    uint64_t x = 88172645463325252ull;
    (void)state;
    for (int i = 0; i < 200000; i++) {
        char got[NNP_FMT_NUM_MAX], want[NNP_FMT_NUM_MAX];
        unsigned digits = 1 + (unsigned)(i % 20);
        uint64_t v, lim = 1;
        size_t len;
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        for (unsigned k = 1; k < digits; k++)
            lim *= 10;
        v = digits == 20 ? x : x % (lim * 10 - lim) + lim - (digits == 1); /* 0..9 too */
        len = nnp__fmt_u64(got, v);
        got[len] = '\0';
        snprintf(want, sizeof(want), "%" PRIu64, v);
        assert_string_equal(got, want);
        {
            int64_t ns = (int64_t)(v >> 1) * ((i & 1) ? -1 : 1);
            uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
            len = nnp__fmt_fixed(got, ns, 1000, 3);
            snprintf(want, sizeof(want), "%s%" PRIu64 ".%03u", ns < 0 ? "-" : "", mag / 1000,
                     (unsigned)(mag % 1000));
            assert_string_equal(got, want);
            assert_int_equal(len, strlen(want));
        }
    }
}

/* Whole doubles print as %.15g does; others (fractions, -0, 10^15 and beyond, NaN) are
 * left to the caller (0). */
static void test_whole_double(void **state)
{
    static const double whole[] = {
        0.0, 1.0, -1.0, 42.0, 1e14, -123456789012345.0, 999999999999999.0, 4294967296.0};
    static const double not_whole[] = {-0.0, 0.5, -2.25, 1e15, -1e15, 1e300, 1e-300};
    char got[NNP_FMT_NUM_MAX], want[NNP_FMT_NUM_MAX];
    (void)state;
    for (size_t i = 0; i < NNP_ARRAY_LEN(whole); i++) {
        size_t n = nnp__fmt_whole_double(got, whole[i]);
        assert_true(n > 0);
        got[n] = '\0';
        snprintf(want, sizeof(want), "%.15g", whole[i]);
        assert_string_equal(got, want);
    }
    for (size_t i = 0; i < NNP_ARRAY_LEN(not_whole); i++)
        assert_int_equal(nnp__fmt_whole_double(got, not_whole[i]), 0);
    assert_int_equal(nnp__fmt_whole_double(got, NAN), 0);
    assert_int_equal(nnp__fmt_whole_double(got, INFINITY), 0);
}

/* Doubles that are short decimals print as the decimal (what %.15g prints, written out
 * here by hand); the others are left to the caller (0). */
static void test_short_double(void **state)
{
    static const struct {
        double v;
        const char *text;
    } shorts[] = {{42.5, "42.5"},         {0.125, "0.125"},           {-3.75, "-3.75"},
                  {0.1, "0.1"},           {0.0001, "0.0001"},         {1234.000001, "1234.000001"},
                  {99999.99, "99999.99"}, {12345678.9, "12345678.9"}, {-0.000123, "-0.000123"}};
    /* 1/3 needs 16 digits; 1e-5 prints with an exponent; 7 decimals; 16 digits. */
    static const double others[] = {1.0 / 3.0, 1e-5, 0.1234567, 123456789012345.6, 0.0, -0.0};
    char got[NNP_FMT_NUM_MAX], want[NNP_FMT_NUM_MAX];
    (void)state;
    for (size_t i = 0; i < NNP_ARRAY_LEN(shorts); i++) {
        size_t n = nnp__fmt_short_double(got, shorts[i].v);
        assert_int_equal(n, strlen(shorts[i].text));
        assert_string_equal(got, shorts[i].text);
        snprintf(want, sizeof(want), "%.15g", shorts[i].v);
        assert_string_equal(got, want);
    }
    for (size_t i = 0; i < NNP_ARRAY_LEN(others); i++)
        assert_int_equal(nnp__fmt_short_double(got, others[i]), 0);
    assert_int_equal(nnp__fmt_short_double(got, NAN), 0);
    assert_int_equal(nnp__fmt_short_double(got, INFINITY), 0);
}

/* Five to eight digits come out of one word (numfmt.c's SWAR path): every digit position
 * with a zero, a nine and a leading digit after zeros. */
static void test_eight_digits(void **state)
{
    static const struct {
        uint64_t v;
        const char *text;
    } cases[] = {{10000, "10000"},
                 {12345678, "12345678"},
                 {90000001, "90000001"},
                 {99999999, "99999999"},
                 {10203040, "10203040"},
                 {100000000, "100000000"},
                 {1234567890123456ull, "1234567890123456"},
                 {10000000000000001ull, "10000000000000001"}};
    char got[NNP_FMT_NUM_MAX];
    (void)state;
    for (size_t i = 0; i < NNP_ARRAY_LEN(cases); i++) {
        size_t n = nnp__fmt_u64(got, cases[i].v);
        got[n] = '\0';
        assert_string_equal(got, cases[i].text);
    }
    assert_int_equal(nnp__fmt_fixed(got, 1764200000123456789ll, 1000, 3), 20);
    assert_string_equal(got, "1764200000123456.789");
}

/* Writes rows through the CSV writer into a file and reads it back. */
static char *csv_roundtrip(void (*fill)(nnp_csv_t *w), size_t *len)
{
    char *dir = nnpt_mkdtemp(), path[NNP_PATH_MAX];
    nnp_csv_t w;
    char *text = NULL;
    int fd;
    snprintf(path, sizeof(path), "%s/out.csv", dir);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    assert_int_equal(nnp__csv_init(&w, fd), NNP_OK);
    fill(&w);
    assert_int_equal(nnp__csv_fini(&w), NNP_OK);
    close(fd);
    assert_int_equal(nnp__read_file(path, 64u << 20, &text, len), NNP_OK);
    nnpt_rm_rf(dir);
    free(dir);
    return text;
}

static void fill_fields(nnp_csv_t *w)
{
    nnp__csv_strn(w, "plain", 5);
    nnp__csv_strn(w, "a,b", 3);
    nnp__csv_strn(w, "say \"hi\"", 8);
    nnp__csv_strn(w, "cut here", 3); /* n shorter than the string */
    nnp__csv_raw(w, "12.5", 4);
    nnp__csv_fixed_int(w, -2500, 1000, 3);
    nnp__csv_uint(w, UINT64_MAX);
    nnp__csv_int(w, INT64_MIN);
    nnp__csv_empty(w);
    nnp__csv_end_row(w);
}

static void test_csv_fields(void **state)
{
    size_t len;
    char *text = csv_roundtrip(fill_fields, &len);
    (void)state;
    assert_string_equal(text, "plain,\"a,b\",\"say \"\"hi\"\"\",cut,12.5,-2.500,"
                              "18446744073709551615,-9223372036854775808,\n");
    nnp__free(text);
}

/* Enough rows to cross the 1 MiB buffer many times, with quoted fields and numbers at
 * every offset relative to a flush. */
#define MANY_ROWS 200000

static void fill_many(nnp_csv_t *w)
{
    for (uint64_t i = 0; i < MANY_ROWS; i++) {
        nnp__csv_uint(w, i);
        nnp__csv_strn(w, i % 7 ? "name" : "na,me", i % 7 ? 4 : 5);
        nnp__csv_fixed_int(w, (int64_t)i * 1001, 1000, 3);
        nnp__csv_end_row(w);
    }
}

static void test_csv_many_rows(void **state)
{
    size_t len, off = 0;
    char *text = csv_roundtrip(fill_many, &len);
    (void)state;
    for (uint64_t i = 0; i < MANY_ROWS; i++) {
        char want[96];
        int64_t v = (int64_t)i * 1001;
        int k = snprintf(want, sizeof(want), "%" PRIu64 ",%s,%" PRId64 ".%03" PRId64 "\n", i,
                         i % 7 ? "name" : "\"na,me\"", v / 1000, v % 1000);
        assert_true(off + (size_t)k <= len);
        assert_memory_equal(text + off, want, (size_t)k);
        off += (size_t)k;
    }
    assert_int_equal(off, len);
    nnp__free(text);
}

/* A byte that needs quotes at every position of fields of 1..70 bytes (the scan takes
 * eight bytes at a time, then the tail; the copy moves 4, 8, 16 or 32 bytes twice), and bytes >=
 * 0x80 that need none. */
#define SCAN_MAX 70

static void fill_scan(nnp_csv_t *w)
{
    static const char special[] = {',', '"', '\r', '\n'};
    char f[SCAN_MAX];
    for (size_t n = 1; n <= SCAN_MAX; n++) {
        memset(f, 'a', n);
        f[n / 2] = (char)0xc3; /* UTF-8 bytes pass as they are */
        nnp__csv_strn(w, f, n);
        for (size_t at = 0; at < n; at++) {
            for (size_t k = 0; k < sizeof(special); k++) {
                memset(f, 'a', n);
                f[at] = special[k];
                nnp__csv_strn(w, f, n);
            }
        }
        nnp__csv_end_row(w);
    }
}

static void test_csv_quote_scan(void **state)
{
    static const char special[] = {',', '"', '\r', '\n'};
    size_t len, off = 0;
    char *text = csv_roundtrip(fill_scan, &len);
    (void)state;
    for (size_t n = 1; n <= SCAN_MAX; n++) {
        char want[2 * SCAN_MAX + 3];
        size_t k = 0;
        memset(want, 'a', n);
        want[n / 2] = (char)0xc3;
        assert_memory_equal(text + off, want, n);
        off += n;
        for (size_t at = 0; at < n; at++) {
            for (size_t q = 0; q < sizeof(special); q++) {
                k = 0;
                want[k++] = ',';
                want[k++] = '"';
                for (size_t i = 0; i < n; i++) {
                    char c = i == at ? special[q] : 'a';
                    want[k++] = c;
                    if (c == '"')
                        want[k++] = '"';
                }
                want[k++] = '"';
                assert_true(off + k <= len);
                assert_memory_equal(text + off, want, k);
                off += k;
            }
        }
        assert_int_equal(text[off], '\n');
        off++;
    }
    assert_int_equal(off, len);
    nnp__free(text);
}

/* Composed rows: a field quoted as nnp__csv_strn would, and a row longer than the
 * writer's 1 MiB buffer (it grows) between ordinary rows. */
#define LONG_ROW (3u << 20)

static void fill_composed(nnp_csv_t *w)
{
    char *p;
    nnp__csv_uint(w, 1);
    assert_null(nnp__csv_row_room(w, 8)); /* not at a row's start */
    nnp__csv_end_row(w);
    p = nnp__csv_row_room(w, NNP_CSV_FIELD_MAX(5) + 2);
    assert_non_null(p);
    p += nnp__csv_field_into(p, "a,\"b", 4);
    *p++ = ',';
    p += nnp__csv_field_into(p, "plain", 5);
    *p++ = '\n';
    nnp__csv_row_done(w, p);
    p = nnp__csv_row_room(w, LONG_ROW + 1);
    assert_non_null(p);
    memset(p, 'x', LONG_ROW);
    p[LONG_ROW] = '\n';
    nnp__csv_row_done(w, p + LONG_ROW + 1);
    nnp__csv_uint(w, 2);
    nnp__csv_end_row(w);
}

static void test_csv_composed_rows(void **state)
{
    size_t len;
    char *text = csv_roundtrip(fill_composed, &len);
    static const char head[] = "1\n\"a,\"\"b\",plain\n";
    (void)state;
    assert_int_equal(len, sizeof(head) - 1 + LONG_ROW + 1 + 2);
    assert_memory_equal(text, head, sizeof(head) - 1);
    for (size_t i = 0; i < LONG_ROW; i++)
        if (text[sizeof(head) - 1 + i] != 'x')
            fail_msg("byte %zu of the long row is not 'x'", i);
    assert_memory_equal(text + len - 3, "\n2\n", 3);
    nnp__free(text);
}

/* Fields of a string table: whether a string needs quotes is found once per id, ids past
 * the table are scanned each time, and an empty table scans every string. */
static void fill_ids(nnp_csv_t *w)
{
    nnp_csv_quotes_t q, none = {NULL, 0};
    char *p;
    assert_int_equal(nnp__csv_quotes_init(&q, 4), NNP_OK);
    for (int k = 0; k < 2; k++) {
        nnp__csv_strn_id(w, &q, 1, "a,b", 3);
        nnp__csv_strn_id(w, &q, 2, "plain", 5);
        nnp__csv_strn_id(w, &q, 9, "x\"y", 3);
        nnp__csv_strn_id(w, &none, 1, "a,b", 3);
        nnp__csv_end_row(w);
    }
    p = nnp__csv_row_room(w, 64);
    assert_non_null(p);
    p += nnp__csv_field_into_id(p, &q, 1, "a,b", 3);
    *p++ = ',';
    p += nnp__csv_field_into_id(p, &q, 2, "plain", 5);
    *p++ = '\n';
    nnp__csv_row_done(w, p);
    nnp__csv_quotes_fini(&q);
}

static void test_csv_string_ids(void **state)
{
    size_t len;
    char *text = csv_roundtrip(fill_ids, &len);
    (void)state;
    assert_string_equal(text, "\"a,b\",plain,\"x\"\"y\",\"a,b\"\n"
                              "\"a,b\",plain,\"x\"\"y\",\"a,b\"\n"
                              "\"a,b\",plain\n");
    nnp__free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_u64_i64),        cmocka_unit_test(test_every_length),
        cmocka_unit_test(test_fixed),          cmocka_unit_test(test_whole_double),
        cmocka_unit_test(test_csv_quote_scan), cmocka_unit_test(test_csv_fields),
        cmocka_unit_test(test_csv_many_rows),  cmocka_unit_test(test_csv_composed_rows),
        cmocka_unit_test(test_csv_string_ids), cmocka_unit_test(test_short_double),
        cmocka_unit_test(test_eight_digits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
