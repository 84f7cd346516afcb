/* test_json_writer.c - the streaming JSON writer: escaping (RFC 8259), numbers at their
 * limits, commas and nesting, pretty printing, JSON lines, the memory cap, and the fd
 * mode over several buffers: its bytes, its byte count (the timeline's limit) and its
 * write errors. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"
#include "util/json_writer.h"
#include "util/util.h"

/* Generous cap for the memory-mode writer in these small tests. */
#define CAP 4096

static char *finish(nnp_jw_t *w)
{
    char *text = nnp__jw_take(w, NULL);
    assert_non_null(text);
    nnp__jw_fini(w);
    return text;
}

static void test_escapes(void **state)
{
    nnp_jw_t w;
    char *t;
    static const char with_nul[] = {'a', '\0', 'b'};
    (void)state;
    assert_int_equal(nnp__jw_init(&w, -1, false, CAP), 0);
    nnp__jw_arr_begin(&w);
    nnp__jw_str(&w, "q\"b\\n\nr\rt\t\x01\x1f\x7f/é");
    nnp__jw_strn(&w, with_nul, sizeof(with_nul));
    nnp__jw_str(&w, "");
    nnp__jw_str(&w, NULL);
    nnp__jw_arr_end(&w);
    t = finish(&w);
    assert_string_equal(t, "[\"q\\\"b\\\\n\\nr\\rt\\t\\u0001\\u001f\\u007f/é\","
                           "\"a\\u0000b\",\"\",null]");
    nnp__free(t);
}

/* A byte to escape at every position of strings of 1..70 bytes (the scan takes eight bytes
 * at a time, then the tail; the copy moves 4, 8, 16 or 32 bytes twice); bytes >= 0x80 pass as they
 * are. */
static void test_escape_scan(void **state)
{
    static const struct {
        char c;
        const char *esc;
    } special[] = {{'"', "\\\""},       {'\\', "\\\\"},      {'\x01', "\\u0001"},
                   {'\x1f', "\\u001f"}, {'\x7f', "\\u007f"}, {'\n', "\\n"}};
    char s[70], want[128];
    (void)state;
    for (size_t n = 1; n <= sizeof(s); n++) {
        for (size_t at = 0; at < n; at++) {
            for (size_t k = 0; k < NNP_ARRAY_LEN(special); k++) {
                nnp_jw_t w;
                char *t;
                size_t m = 0;
                memset(s, 'a', n);
                s[n - 1 - at] = (char)0xc3; /* UTF-8 bytes pass as they are */
                s[at] = special[k].c;
                assert_true(nnp__jw_needs_escape(s, n));
                assert_int_equal(nnp__jw_init(&w, -1, false, CAP), 0);
                nnp__jw_strn(&w, s, n);
                t = finish(&w);
                want[m++] = '"';
                for (size_t i = 0; i < n; i++) {
                    if (i == at) {
                        memcpy(want + m, special[k].esc, strlen(special[k].esc));
                        m += strlen(special[k].esc);
                    } else {
                        want[m++] = s[i];
                    }
                }
                want[m++] = '"';
                want[m] = '\0';
                assert_string_equal(t, want);
                nnp__free(t);
            }
            memset(s, 'a', n);
            s[at] = (char)0xc3;
            assert_false(nnp__jw_needs_escape(s, n));
            {
                nnp_jw_t w;
                char *t;
                assert_int_equal(nnp__jw_init(&w, -1, false, CAP), 0);
                nnp__jw_strn(&w, s, n); /* nothing to escape: copied whole */
                t = finish(&w);
                want[0] = '"';
                memcpy(want + 1, s, n);
                want[n + 1] = '"';
                want[n + 2] = '\0';
                assert_string_equal(t, want);
                nnp__free(t);
            }
        }
    }
}

static void test_numbers_and_nesting(void **state)
{
    nnp_jw_t w;
    char *t;
    (void)state;
    assert_int_equal(nnp__jw_init(&w, -1, false, CAP), 0);
    nnp__jw_obj_begin(&w);
    nnp__jw_key(&w, "min");
    nnp__jw_int(&w, INT64_MIN);
    nnp__jw_key(&w, "max");
    nnp__jw_uint(&w, UINT64_MAX);
    nnp__jw_key(&w, "zero");
    nnp__jw_int(&w, 0);
    nnp__jw_key(&w, "d");
    nnp__jw_double(&w, 0.5);
    nnp__jw_key(&w, "inf");
    nnp__jw_double(&w, INFINITY);
    /* The shortest text that reads back exactly (%.17g printed 118560.54399999999). */
    nnp__jw_key(&w, "us");
    nnp__jw_double(&w, 118560544 / 1e3);
    nnp__jw_key(&w, "third");
    nnp__jw_double(&w, 1.0 / 3.0);
    nnp__jw_key(&w, "tiny");
    nnp__jw_double(&w, 5e-324);
    nnp__jw_key(&w, "k\"ey");
    nnp__jw_arr_begin(&w);
    nnp__jw_obj_begin(&w);
    nnp__jw_obj_end(&w);
    nnp__jw_arr_begin(&w);
    nnp__jw_arr_end(&w);
    nnp__jw_bool(&w, true);
    nnp__jw_raw(&w, "{\"x\":1}");
    nnp__jw_arr_end(&w);
    nnp__jw_obj_end(&w);
    t = finish(&w);
    assert_string_equal(t, "{\"min\":-9223372036854775808,\"max\":18446744073709551615,"
                           "\"zero\":0,\"d\":0.5,\"inf\":null,\"us\":118560.544,"
                           "\"third\":0.3333333333333333,\"tiny\":4.94065645841247e-324,"
                           "\"k\\\"ey\":[{},[],true,{\"x\":1}]}");
    nnp__free(t);
}

static void test_pretty_and_lines(void **state)
{
    nnp_jw_t w;
    char *t;
    (void)state;
    assert_int_equal(nnp__jw_init(&w, -1, true, CAP), 0);
    nnp__jw_obj_begin(&w);
    nnp__jw_key(&w, "a");
    nnp__jw_arr_begin(&w);
    nnp__jw_int(&w, 1);
    nnp__jw_int(&w, 2);
    nnp__jw_arr_end(&w);
    nnp__jw_obj_end(&w);
    t = finish(&w);
    assert_string_equal(t, "{\n  \"a\": [\n    1,\n    2\n  ]\n}");
    nnp__free(t);

    assert_int_equal(nnp__jw_init(&w, -1, false, CAP), 0);
    for (int i = 0; i < 3; i++) {
        nnp__jw_obj_begin(&w);
        nnp__jw_key(&w, "i");
        nnp__jw_int(&w, i);
        nnp__jw_obj_end(&w);
        nnp__jw_line_end(&w);
    }
    t = finish(&w);
    assert_string_equal(t, "{\"i\":0}\n{\"i\":1}\n{\"i\":2}\n");
    nnp__free(t);
}

static void test_memory_cap_is_an_error(void **state)
{
    nnp_jw_t w;
    (void)state;
    assert_int_equal(nnp__jw_init(&w, -1, false, 16), 0);
    nnp__jw_str(&w, "this string is longer than sixteen bytes");
    assert_int_equal(w.err, NNP_ETOOLONG);
    assert_null(nnp__jw_take(&w, NULL));
    nnp__jw_fini(&w);
}

/* Integers 0..N_INTS-1 then a string longer than the writer's 1 MiB buffer (written
 * past the buffer), then the integers again: several buffers' worth. */
#define N_INTS  300000
#define BIG_STR (3u << 20)
#define DECIMAL 10

/* The document's size, worked out: "[" "]" "\n", N_INTS-1 + N_INTS + 1 commas between the
 * 2 * N_INTS + 1 values, the big string and its quotes, and the integers' digits. */
static size_t doc_size(void)
{
    size_t digits = 0;
    for (uint64_t lo = 1, d = 1; lo < N_INTS; lo *= DECIMAL, d++) {
        uint64_t hi = lo * DECIMAL < N_INTS ? lo * DECIMAL : N_INTS;
        digits += (size_t)(hi - lo) * d;
    }
    digits += 1; /* "0" */
    return 3 + 2 * (size_t)N_INTS + BIG_STR + 2 + 2 * digits;
}

/* The document written through an fd-mode writer into a new file, its byte count checked
 * before and after the flush; returns the file's size, its bytes in *text (owned). */
static size_t write_doc(char **text)
{
    char *big = malloc(BIG_STR + 1);
    FILE *f = tmpfile();
    nnp_jw_t w;
    long size;
    assert_non_null(big);
    assert_non_null(f);
    memset(big, 'x', BIG_STR);
    big[BIG_STR] = '\0';
    assert_int_equal(nnp__jw_init(&w, fileno(f), false, 0), NNP_OK);
    nnp__jw_arr_begin(&w);
    for (int64_t i = 0; i < N_INTS; i++)
        nnp__jw_int(&w, i);
    nnp__jw_str(&w, big);
    for (int64_t i = 0; i < N_INTS; i++)
        nnp__jw_int(&w, i);
    nnp__jw_arr_end(&w);
    nnp__jw_line_end(&w);
    assert_int_equal(nnp__jw_bytes(&w), doc_size());
    assert_int_equal(nnp__jw_flush(&w), NNP_OK);
    assert_int_equal(nnp__jw_bytes(&w), doc_size());
    nnp__jw_fini(&w);
    size = lseek(fileno(f), 0, SEEK_END);
    assert_true(size > 0);
    *text = malloc((size_t)size);
    assert_non_null(*text);
    assert_int_equal(pread(fileno(f), *text, (size_t)size, 0), size);
    fclose(f);
    free(big);
    return (size_t)size;
}

static void test_fd_mode_bytes(void **state)
{
    char *text, *p;
    size_t n;
    (void)state;
    n = write_doc(&text);
    assert_int_equal(n, doc_size());
    /* The layout by hand: the start, the string between the two runs of integers, the
     * end. */
    assert_memory_equal(text, "[0,1,2,", 7);
    p = memchr(text, '"', n);
    assert_non_null(p);
    assert_memory_equal(p - 8, ",299999,\"xxx", 12);
    assert_memory_equal(p + 1 + BIG_STR, "\",0,1,", 6);
    assert_memory_equal(text + n - 8, "299999]\n", 8);
    free(text);
}

/* A failed write (a full disk: /dev/full) is the writer's error, with its message; the
 * first error stays. */
static void test_fd_mode_write_error(void **state)
{
    nnp_jw_t w;
    int fd = open("/dev/full", O_WRONLY);
    (void)state;
    if (fd < 0) {
        print_message("test_json_writer: no /dev/full (%s): the write error is not tried\n",
                      strerror(errno));
        return;
    }
    assert_int_equal(nnp__jw_init(&w, fd, false, 0), NNP_OK);
    nnp__jw_arr_begin(&w);
    for (int64_t i = 0; i < N_INTS; i++)
        nnp__jw_int(&w, i);
    nnp__jw_arr_end(&w);
    assert_int_equal(nnp__jw_flush(&w), NNP_EIO);
    assert_non_null(strstr(nnp_last_error(), "No space left on device"));
    assert_int_equal(nnp__jw_flush(&w), NNP_EIO);
    nnp__jw_fini(&w);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_escape_scan),
        cmocka_unit_test(test_numbers_and_nesting),
        cmocka_unit_test(test_pretty_and_lines),
        cmocka_unit_test(test_memory_cap_is_an_error),
        cmocka_unit_test(test_fd_mode_bytes),
        cmocka_unit_test(test_fd_mode_write_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
