/* test_json_stream.c - the streaming JSON array reader: plain arrays and "traceEvents"
 * objects, strings holding brackets and escapes, scalars, a bad element in the middle, a
 * truncated file, no array at all, and stopping from the callback; the other top-level
 * members of an object, gzip files, and a gzip stream cut mid-way; an open descriptor read
 * a few bytes at a time. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "read/json_stream.h"
#include "test_util.h"
#include <unistd.h>

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

typedef struct members {
    int n, n_elems;
    char keys[8][32];
    double rank;
} members_t;

static int member(void *user, const char *key, const cJSON *v)
{
    members_t *g = user;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(v, "rank");
    if (g->n < 8)
        snprintf(g->keys[g->n], sizeof(g->keys[0]), "%s", key);
    g->n++;
    if (cJSON_IsNumber(r))
        g->rank = r->valuedouble;
    return 0;
}

static int count_elem(void *user, const cJSON *e, uint64_t index)
{
    (void)e;
    (void)index;
    ((members_t *)user)->n_elems++;
    return 0;
}

static void test_object_members(void **state)
{
    char *dir = nnpt_mkdtemp(), path[4200];
    members_t g;
    nnp_json_stream_report_t r;
    FILE *f;
    (void)state;
    snprintf(path, sizeof(path), "%s/k.json", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    /* Kineto's layout: metadata before and after the events; a key inside an event that
     * spells "traceEvents" must not be taken for the array. */
    fputs("{\"schemaVersion\": 1, \"distributedInfo\": {\"rank\": 3, \"x\": \"}]\"},\n"
          "\"note\": {\"traceEvents\": 5}, \"traceEvents\": [{\"a\":1}, {\"b\":[2]}],\n"
          "\"baseTimeNanoseconds\": 1700000000000000000}",
          f);
    fclose(f);
    memset(&g, 0, sizeof(g));
    assert_int_equal(nnp__json_stream_doc(path, NULL, count_elem, member, &g, &r), NNP_OK);
    assert_int_equal(g.n, 4);
    assert_int_equal(g.n_elems, 2);
    assert_string_equal(g.keys[0], "schemaVersion");
    assert_string_equal(g.keys[1], "distributedInfo");
    assert_string_equal(g.keys[2], "note");
    assert_string_equal(g.keys[3], "baseTimeNanoseconds");
    assert_true(g.rank == 3.0);
    assert_int_equal(r.elements, 2);
    assert_int_equal(r.truncated, 0);
    assert_int_equal(r.no_array, 0);
    assert_int_equal(r.gzip, 0);
    nnpt_rm_rf(dir);
    free(dir);
}

/* Writes text gzip-compressed to path, keeping only the first keep bytes of the .gz file
 * (keep 0: all of it). */
static void write_gz(const char *path, const char *text, long keep)
{
    gzFile z = gzopen(path, "wb");
    assert_non_null(z);
    assert_int_equal(gzputs(z, text), (int)strlen(text));
    assert_int_equal(gzclose(z), Z_OK);
    if (keep > 0)
        assert_int_equal(truncate(path, keep), 0);
}

static void test_gzip_and_cut_gzip(void **state)
{
    char *dir = nnpt_mkdtemp(), path[4200], text[64 * 1024];
    size_t len;
    members_t g;
    nnp_json_stream_report_t r;
    (void)state;
    snprintf(path, sizeof(path), "%s/t.json.gz", dir);
    len = (size_t)snprintf(text, sizeof(text), "{\"traceEvents\": [");
    /* Varied names so the compressed stream is long enough to cut in the middle. */
    for (int i = 0; i < 2000; i++)
        len += (size_t)snprintf(text + len, sizeof(text) - len, "%s{\"name\":\"e%d_%d\"}",
                                i ? "," : "", i, i * 7919 % 1000);
    snprintf(text + len, sizeof(text) - len, "]}");
    write_gz(path, text, 0);
    memset(&g, 0, sizeof(g));
    assert_int_equal(nnp__json_stream_array(path, count_elem, &g, &r), NNP_OK);
    assert_int_equal(r.elements, 2000);
    assert_int_equal(g.n_elems, 2000);
    assert_int_equal(r.gzip, 1);
    assert_int_equal(r.read_error, 0);
    assert_int_equal(r.truncated, 0);

    /* Cut the .gz file in half: the events before the cut arrive, then a message. */
    write_gz(path, text, 6000);
    memset(&g, 0, sizeof(g));
    assert_int_equal(nnp__json_stream_array(path, count_elem, &g, &r), NNP_OK);
    assert_true(r.elements > 0 && r.elements < 2000);
    assert_int_equal(g.n_elems, (int)r.elements);
    assert_int_equal(r.truncated, 1);
    assert_int_equal(r.read_error, 1);
    assert_string_equal(r.error, "unexpected end of file");
    nnpt_rm_rf(dir);
    free(dir);
}

/* A gzip file whose text is far larger than its window (16x its compressed size): many
 * refills, and one element longer than the window, which grows for it. */
static void test_gzip_larger_than_window(void **state)
{
    enum { N = 4000, BIG = 64 * 1024 };
    size_t cap = (size_t)N * 40 + BIG + 64, len;
    char *dir = nnpt_mkdtemp(), path[4200], *text = malloc(cap);
    members_t g;
    nnp_json_stream_report_t r;
    (void)state;
    assert_non_null(text);
    snprintf(path, sizeof(path), "%s/t.json.gz", dir);
    len = (size_t)snprintf(text, cap, "[{\"name\":\"");
    memset(text + len, 'x', BIG); /* compresses to almost nothing */
    len += BIG;
    len += (size_t)snprintf(text + len, cap - len, "\"}");
    for (int i = 0; i < N; i++)
        len += (size_t)snprintf(text + len, cap - len, ",{\"name\":\"e\",\"ph\":\"X\"}");
    snprintf(text + len, cap - len, "]");
    write_gz(path, text, 0);
    memset(&g, 0, sizeof(g));
    assert_int_equal(nnp__json_stream_array(path, count_elem, &g, &r), NNP_OK);
    assert_int_equal(r.elements, N + 1);
    assert_int_equal(g.n_elems, N + 1);
    assert_int_equal(r.bad_elements, 0);
    assert_int_equal(r.truncated, 0);
    assert_int_equal(r.gzip, 1);
    assert_int_equal(r.bytes, strlen(text));
    free(text);
    nnpt_rm_rf(dir);
    free(dir);
}

/* An open descriptor read a few bytes at a time gives what the whole file gives: the same
 * elements, members and report (elements, strings and escapes straddle the reads). */
static void test_fd_small_reads(void **state)
{
    static const char text[] = "\xEF\xBB\xBF{\"meta\": {\"rank\": 2, \"s\": \"}]\\\"\"}, "
                               "\"traceEvents\": [{\"name\":\"a]\\\"}{\"},"
                               " {\"name\": nope}, 42, \"s\", "
                               "{\"name\":\"b\",\"args\":{\"x\":[1,{\"y\":\"[\"}]}}], \"tail\": 7}";
    char *dir = nnpt_mkdtemp(), path[4200];
    nnp_json_stream_report_t whole, part;
    members_t gw, gp;
    FILE *f;
    int fd;
    (void)state;
    snprintf(path, sizeof(path), "%s/t.json", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    memset(&gw, 0, sizeof(gw));
    assert_int_equal(nnp__json_stream_doc(path, NULL, count_elem, member, &gw, &whole), NNP_OK);
    assert_int_equal(gw.n_elems, 4);
    assert_int_equal(gw.n, 2);
    assert_true(gw.rank == 2.0);
    assert_int_equal(whole.bad_elements, 1);
    for (size_t read_max = 1; read_max <= 7; read_max++) {
        fd = open(path, O_RDONLY);
        assert_true(fd >= 0);
        memset(&gp, 0, sizeof(gp));
        assert_int_equal(
            nnp__json_stream_fd(fd, "t.json", NULL, read_max, count_elem, member, &gp, &part),
            NNP_OK);
        assert_int_equal(close(fd), 0);
        assert_int_equal(gp.n_elems, gw.n_elems);
        assert_int_equal(gp.n, gw.n);
        assert_true(gp.rank == gw.rank);
        assert_memory_equal(&part, &whole, sizeof(whole));
    }
    nnpt_rm_rf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arrays_and_strings),
        cmocka_unit_test(test_damage_is_counted_not_fatal),
        cmocka_unit_test(test_callback_stops_and_missing_file),
        cmocka_unit_test(test_object_members),
        cmocka_unit_test(test_gzip_and_cut_gzip),
        cmocka_unit_test(test_gzip_larger_than_window),
        cmocka_unit_test(test_fd_small_reads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
