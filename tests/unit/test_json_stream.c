/* test_json_stream.c - the streaming JSON array reader: plain arrays and "traceEvents"
 * objects, strings holding brackets and escapes, scalars, a bad element in the middle, a
 * truncated file, no array at all, and stopping from the callback. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/json_stream.h"
#include "test_util.h"

typedef struct got {
    int n;
    char names[16][32];
} got_t;

static int collect(void *user, const cJSON *e, uint64_t index)
{
    got_t *g = user;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
    (void)index;
    if (g->n < 16)
        snprintf(g->names[g->n], sizeof(g->names[0]), "%s",
                 cJSON_IsString(name) ? name->valuestring
                 : cJSON_IsNumber(e)  ? "number"
                 : cJSON_IsString(e)  ? e->valuestring
                                      : "other");
    g->n++;
    return g->n == 99 ? 7 : 0; /* stop code for the "stop" case */
}

static void run(const char *text, got_t *g, nnp_json_stream_report_t *rep, int want_rc)
{
    char *dir = nnpt_mkdtemp(), path[4200];
    FILE *f;
    snprintf(path, sizeof(path), "%s/t.json", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    memset(g, 0, sizeof(*g));
    assert_int_equal(nnp__json_stream_array(path, collect, g, rep), want_rc);
    nnpt_rm_rf(dir);
    free(dir);
}

static void test_arrays_and_strings(void **state)
{
    got_t g;
    nnp_json_stream_report_t r;
    (void)state;
    run("[{\"name\":\"a]\\\"}{\"},\n {\"name\":\"b\",\"args\":{\"x\":[1,{\"y\":\"[\"}]}} , 42, "
        "\"s\"]",
        &g, &r, NNP_OK);
    assert_int_equal(g.n, 4);
    assert_string_equal(g.names[0], "a]\"}{");
    assert_string_equal(g.names[1], "b");
    assert_string_equal(g.names[2], "number");
    assert_string_equal(g.names[3], "s");
    assert_int_equal(r.elements, 4);
    assert_int_equal(r.truncated, 0);

    run("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[{\"name\":\"x\"}],\"other\":[1]}", &g, &r,
        NNP_OK);
    assert_int_equal(g.n, 1);
    assert_string_equal(g.names[0], "x");
}

static void test_damage_is_counted_not_fatal(void **state)
{
    got_t g;
    nnp_json_stream_report_t r;
    (void)state;
    run("[{\"name\":\"a\"}, {\"name\": nope}, {\"name\":\"c\"}]", &g, &r, NNP_OK);
    assert_int_equal(g.n, 2);
    assert_int_equal(r.bad_elements, 1);
    assert_int_equal(r.first_bad_offset, 15);
    run("[{\"name\":\"a\"}, {\"name\":\"b\"", &g, &r, NNP_OK);
    assert_int_equal(g.n, 1);
    assert_int_equal(r.truncated, 1);
    run("\"just a string\"", &g, &r, NNP_OK);
    assert_int_equal(r.no_array, 1);
    run("", &g, &r, NNP_OK);
    assert_int_equal(r.no_array, 1);
}

static void test_callback_stops_and_missing_file(void **state)
{
    got_t g;
    nnp_json_stream_report_t r;
    char big[99 * 16 + 8];
    size_t len = 1;
    (void)state;
    big[0] = '[';
    for (int i = 0; i < 99; i++)
        len += (size_t)snprintf(big + len, sizeof(big) - len, "%s{\"name\":1}", i ? "," : "");
    snprintf(big + len, sizeof(big) - len, "]");
    run(big, &g, &r, 7);
    assert_int_equal(g.n, 99);
    assert_int_equal(nnp__json_stream_array("/nonexistent/x.json", collect, &g, &r), NNP_ENOENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arrays_and_strings),
        cmocka_unit_test(test_damage_is_counted_not_fatal),
        cmocka_unit_test(test_callback_stops_and_missing_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
