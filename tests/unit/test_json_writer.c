/* test_json_writer.c - the streaming JSON writer: escaping (RFC 8259), numbers at their
 * limits, commas and nesting, pretty printing, JSON lines, and the memory cap. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_escape_scan),
        cmocka_unit_test(test_numbers_and_nesting),
        cmocka_unit_test(test_pretty_and_lines),
        cmocka_unit_test(test_memory_cap_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
