/* test_json_tree.c - the arena JSON parser (src/read/json_tree.c) against cJSON itself:
 * every input of a list of edge cases, and thousands of mutations of real trace events,
 * must be accepted or rejected as cJSON_ParseWithLength does, with the same tree (numbers
 * compared bit for bit); a valid value cut short asks for more input unless at the end;
 * numbers keep their text; and json_stream's filtered pass (nnp__json_stream_array_if)
 * delivers exactly the elements holding the string. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "read/json_stream.h"
#include "read/json_tree.h"
#include "test_util.h"
#include "util/util.h"

/* Same tree: types, keys, strings, numbers (bit for bit), order. */
static bool same_tree(const cJSON *a, const cJSON *b)
{
    for (; a && b; a = a->next, b = b->next) {
        if ((a->type & 0xFF) != (b->type & 0xFF))
            return false;
        if ((a->string == NULL) != (b->string == NULL) ||
            (a->string && strcmp(a->string, b->string) != 0))
            return false;
        if (cJSON_IsString(a) && strcmp(a->valuestring, b->valuestring) != 0)
            return false;
        if (cJSON_IsNumber(a) && (memcmp(&a->valuedouble, &b->valuedouble, sizeof(double)) != 0 ||
                                  a->valueint != b->valueint))
            return false;
        if (!same_tree(a->child, b->child))
            return false;
    }
    return a == NULL && b == NULL;
}

/* Parses text with both and checks they agree; returns whether cJSON accepted it. */
static bool agree(nnp_jt_t *jt, const char *text, size_t n)
{
    cJSON *ref = cJSON_ParseWithLength(text, n);
    const char *stop;
    int st;
    const cJSON *got;
    nnp__jt_reset(jt);
    got = nnp__jt_parse(jt, text, text + n, 1, &stop, &st);
    if ((ref != NULL) != (got != NULL)) {
        print_error("disagree on '%.*s': cJSON %s, json_tree %s (status %d)\n", (int)n, text,
                    ref ? "accepts" : "rejects", got ? "accepts" : "rejects", st);
        fail();
    }
    if (ref && !same_tree(ref, got)) {
        print_error("different trees for '%.*s'\n", (int)n, text);
        fail();
    }
    cJSON_Delete(ref);
    return got != NULL;
}

static void test_edge_cases(void **state)
{
    static const char *const cases[] = {
        "{}",
        "[]",
        "{\"a\":1}",
        "[1,2,3]",
        "{\"a\":{\"b\":[true,false,null]}}",
        "[0, -0, 1.5, -2.25, 1e3, 1E-3, 1.5e+2, 00012, 1., 12345678901234567890, 0.1, 0.3]",
        "[9007199254740993, 123456789.123456789, 4.9e-324, 1.7976931348623157e308, 1e400]",
        "[1.2.3]",
        "[1e]",
        "[-]",
        "[--1]",
        "[+1]",
        "[.5]",
        "[1,]",
        "{\"a\":1,}",
        "[,1]",
        "{\"a\" 1}",
        "{a:1}",
        "{\"a\":}",
        "[\"\\u00e9\\u20ac\\ud83d\\ude00\"]",
        "[\"\\ud83d\"]",
        "[\"\\ude00\"]",
        "[\"\\ud83d\\u0041\"]",
        "[\"\\x\"]",
        "[\"\\u12g4\"]",
        "[\"a\\\\b\\\"c\\/d\\b\\f\\n\\r\\t\"]",
        "[\"\\u0000x\"]",
        "[\"raw\x01control\"]",
        "\x01\x02[1]",
        "[true, tru]",
        "[nul]",
        "[falsey]",
        "{\"a\":1,\"a\":2}",
        "{\"ts\":\"1000000.000\",\"dur\":12.345,\"ph\":\"X\",\"args\":{\"Task Id\":4294967295}}",
        "[2147483647, 2147483648, -2147483648, -2147483649, 1e300]",
        "\"just a string\"",
        "42",
        "-7.5x",
        "7777777777777777777777777777777777777777777777777777777777777777777777z",
        "\"90\\ud81\\\\\"", /* a \\u escape ending on the scanner's escaping backslash */
        "[0.00000000000000000000000000000000000000000000000000000000000000000000001e69]",
        "true",
        "null",
        "[1 2]",
        "{\"a\":1 \"b\":2}",
        "[[[]]]",
        "{\"\":\"\"}",
    };
    nnp_jt_t jt;
    (void)state;
    nnp__jt_init(&jt);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        agree(&jt, cases[i], strlen(cases[i]));
    nnp__jt_fini(&jt);
}

/* cJSON's nesting limit: 1000 levels parse, 1001 do not. */
static void test_nesting_limit(void **state)
{
    enum { LEVELS = 1001 };
    char *text = malloc(2 * LEVELS + 1);
    nnp_jt_t jt;
    (void)state;
    assert_non_null(text);
    nnp__jt_init(&jt);
    for (int depth = CJSON_NESTING_LIMIT; depth <= LEVELS; depth++) {
        for (int i = 0; i < depth; i++) {
            text[i] = '[';
            text[2 * depth - 1 - i] = ']';
        }
        assert_int_equal(agree(&jt, text, 2 * (size_t)depth), depth <= CJSON_NESTING_LIMIT);
    }
    nnp__jt_fini(&jt);
    free(text);
}

/* A trace event of each importer's kind, mutated many times (a fixed seed): bytes changed,
 * dropped and doubled; every mutant must be read as cJSON reads it. */
static void test_mutations(void **state)
{
    static const char *const seeds[] = {
        "{\"name\":\"Default/network-Net/Conv2D-op7\",\"pid\":3,\"tid\":2,\"ts\":\"1000012.345\","
        "\"dur\":12.345,\"ph\":\"X\",\"args\":{\"Model Id\":1,\"Task Type\":\"AI_CORE\","
        "\"Stream Id\":2,\"Task Id\":7,\"Batch Id\":0,\"Subtask Id\":4294967295}}",
        "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":5,\"tid\":1,\"args\":{\"name\":"
        "\"Communication Kernel\"}}",
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"void at::native::\\\"k\\\"<float>(\\u00e9)\","
        "\"pid\":0,\"tid\":7,\"ts\":1700000000123456.789,\"dur\":-1e-3,\"args\":{\"grid\":[1,"
        "2,3],\"ok\":true,\"n\":null}}",
    };
    const char alphabet[] = "{}[]\":,.-+eE0123456789\\utrfalsn \x01";
    unsigned seed = 12345;
    nnp_jt_t jt;
    int accepted = 0, total = 0;
    (void)state;
    nnp__jt_init(&jt);
    for (size_t k = 0; k < sizeof(seeds) / sizeof(seeds[0]); k++) {
        size_t n0 = strlen(seeds[k]);
        for (int round = 0; round < 6000; round++) {
            char buf[1024];
            size_t n = n0;
            memcpy(buf, seeds[k], n0);
            for (int edits = 1 + (int)(rand_r(&seed) % 3); edits > 0 && n > 1; edits--) {
                size_t at = (size_t)rand_r(&seed) % n;
                switch (rand_r(&seed) % 3) {
                case 0: /* change a byte */
                    buf[at] = alphabet[(size_t)rand_r(&seed) % (sizeof(alphabet) - 1)];
                    break;
                case 1: /* drop a byte */
                    memmove(buf + at, buf + at + 1, n - at - 1);
                    n--;
                    break;
                default: /* double a byte */
                    if (n + 1 < sizeof(buf)) {
                        memmove(buf + at + 1, buf + at, n - at);
                        n++;
                    }
                    break;
                }
            }
            accepted += agree(&jt, buf, n);
            total++;
        }
    }
    /* The mutations must reach both sides of the decision. */
    assert_true(accepted > 0 && accepted < total);
    nnp__jt_fini(&jt);
}

/* Every proper prefix of a valid container asks for more input, never fails, when more
 * may come; at the end of the input it is bad. */
static void test_cut_short(void **state)
{
    const char *text = "{\"a\":[1.5,\"x\\\"y\",true,null,{\"b\":-12e3}],\"c\":\"\\u00e9\"}";
    size_t n = strlen(text);
    nnp_jt_t jt;
    (void)state;
    nnp__jt_init(&jt);
    for (size_t cut = 1; cut < n; cut++) {
        const char *stop;
        int st;
        nnp__jt_reset(&jt);
        assert_null(nnp__jt_parse(&jt, text, text + cut, 0, &stop, &st));
        assert_int_equal(st, NNP_JT_MORE);
        nnp__jt_reset(&jt);
        assert_null(nnp__jt_parse(&jt, text, text + cut, 1, &stop, &st));
        assert_int_equal(st, NNP_JT_BAD);
    }
    nnp__jt_fini(&jt);
}

/* Numbers keep their text (what strtod read). */
static void test_number_text(void **state)
{
    const char *text = "[12.345,-0.0010,7,1e3]";
    const char *stop;
    const cJSON *v, *e;
    int st;
    nnp_jt_t jt;
    (void)state;
    nnp__jt_init(&jt);
    v = nnp__jt_parse(&jt, text, text + strlen(text), 1, &stop, &st);
    assert_non_null(v);
    e = v->child;
    assert_string_equal(e->valuestring, "12.345");
    assert_string_equal(e->next->valuestring, "-0.0010");
    assert_string_equal(e->next->next->valuestring, "7");
    assert_string_equal(e->next->next->next->valuestring, "1e3");
    assert_true(e->next->next->next->valuedouble == 1000.0);
    nnp__jt_fini(&jt);
}

static int count_cb(void *user, const cJSON *elem, uint64_t index)
{
    int *n = user;
    (void)index;
    assert_true(cJSON_IsObject(elem));
    (*n)++;
    return 0;
}

/* nnp__json_stream_array_if: only elements holding the string "M" (or an escape) are
 * parsed; the others are skipped unchecked, bad ones included. */
static void test_stream_filter(void **state)
{
    char *dir = nnpt_mkdtemp(), path[NNP_PATH_MAX];
    const char *doc = "[{\"ph\":\"M\",\"name\":\"process_name\"},\n"
                      "{\"ph\":\"X\",\"name\":\"M\"},\n"  /* "M" as a value: parsed */
                      "{\"ph\":\"X\",\"name\":\"MM\"},\n" /* no "M" string: skipped */
                      "{\"ph\":\"\\u004d\"},\n"           /* an escape: parsed */
                      "{\"ph\":\"X\", broken},\n"         /* bad but skipped */
                      "{\"ph\": \"M\", broken}]";         /* bad and parsed */
    nnp_json_stream_report_t rep;
    int n = 0, fd;
    (void)state;
    snprintf(path, sizeof(path), "%s/t.json", dir);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, doc, strlen(doc)), (ssize_t)strlen(doc));
    close(fd);
    assert_int_equal(nnp__json_stream_array_if(path, "M", count_cb, &n, &rep), NNP_OK);
    assert_int_equal(n, 3);
    assert_int_equal(rep.elements, 3);
    assert_int_equal(rep.skipped, 2);
    assert_int_equal(rep.bad_elements, 1);
    n = 0;
    assert_int_equal(nnp__json_stream_array(path, count_cb, &n, &rep), NNP_OK);
    assert_int_equal(n, 4);
    assert_int_equal(rep.bad_elements, 2);
    nnpt_rm_rf(dir);
    free(dir);
}

/* Random elements for the filter: strings of letters, brackets and 'M' of every length
 * around the 64-byte blocks of the extent scanner, nested containers, escapes now and then,
 * random spacing so every alignment occurs. */
#define FILTER_ELEMS 4000
#define FILTER_FILES 8

static uint64_t rng(void)
{
    static uint64_t x = 0x2545F4914F6CDD1Dull; /* a fixed seed: the same text every run */
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
}

typedef struct gen {
    char *p;
    size_t len, cap;
    bool want; /* the element holds the string "M" or an escape */
} gen_t;

static void gen_put(gen_t *g, const char *s, size_t n)
{
    if (g->len + n + 1 > g->cap) {
        g->cap = (g->len + n + 1) * 2;
        g->p = realloc(g->p, g->cap);
        assert_non_null(g->p);
    }
    memcpy(g->p + g->len, s, n);
    g->len += n;
}

static void gen_string(gen_t *g)
{
    static const char alphabet[] = "abM{}[]:,  xyz";
    unsigned pick = (unsigned)(rng() % 8), len;
    gen_put(g, "\"", 1);
    if (pick == 0) {
        gen_put(g, "M", 1);
        g->want = true;
    } else if (pick == 1 && rng() % 8 == 0) {
        bool quote = rng() % 2;
        gen_put(g, quote ? "a\\\"M" : "\\u004d", quote ? 4 : 6);
        g->want = true;
    } else {
        len = (unsigned)(rng() % (pick < 4 ? 4 : 90));
        for (unsigned i = 0; i < len; i++)
            gen_put(g, &alphabet[rng() % (sizeof(alphabet) - 1)], 1);
        if (len == 1 && g->p[g->len - 1] == 'M')
            g->want = true;
    }
    gen_put(g, "\"", 1);
}

static void gen_value(gen_t *g, int depth)
{
    unsigned pick = (unsigned)(rng() % 6);
    unsigned n;
    if (rng() % 3 == 0)
        gen_put(g, "   ", (size_t)(rng() % 4));
    if (depth < 4 && pick == 0) {
        n = (unsigned)(rng() % 5);
        gen_put(g, "[", 1);
        for (unsigned i = 0; i < n; i++) {
            if (i)
                gen_put(g, ",", 1);
            gen_value(g, depth + 1);
        }
        gen_put(g, "]", 1);
    } else if (depth < 4 && pick == 1) {
        n = (unsigned)(rng() % 6);
        gen_put(g, "{", 1);
        for (unsigned i = 0; i < n; i++) {
            if (i)
                gen_put(g, ",", 1);
            gen_string(g);
            gen_put(g, ":", 1);
            gen_value(g, depth + 1);
        }
        gen_put(g, "}", 1);
    } else if (pick == 2) {
        gen_put(g, "12345.678", 1 + (size_t)(rng() % 9));
    } else {
        gen_string(g);
    }
}

static int index_cb(void *user, const cJSON *elem, uint64_t index)
{
    uint8_t *seen = user;
    (void)elem;
    assert_true(index < FILTER_ELEMS);
    seen[index]++;
    return 0;
}

/* The filtered pass against the generator's own account of which elements hold "M". */
static void filter_random_once(void)
{
    char *dir = nnpt_mkdtemp(), path[NNP_PATH_MAX];
    gen_t g = {0};
    uint8_t want[FILTER_ELEMS], seen[FILTER_ELEMS];
    nnp_json_stream_report_t rep;
    uint64_t n_want = 0;
    int fd;
    gen_put(&g, "[", 1);
    for (int i = 0; i < FILTER_ELEMS; i++) {
        unsigned n = (unsigned)(rng() % 12);
        if (i)
            gen_put(&g, ",\n", 1 + (size_t)(rng() % 2));
        g.want = false;
        gen_put(&g, "{", 1);
        for (unsigned k = 0; k < n; k++) {
            if (k)
                gen_put(&g, ",", 1);
            gen_string(&g);
            gen_put(&g, ":", 1);
            gen_value(&g, 1);
        }
        gen_put(&g, "}", 1);
        want[i] = g.want;
        n_want += g.want;
    }
    gen_put(&g, "]", 1);
    snprintf(path, sizeof(path), "%s/t.json", dir);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, g.p, g.len), (ssize_t)g.len);
    close(fd);
    memset(seen, 0, sizeof(seen));
    assert_int_equal(nnp__json_stream_array_if(path, "M", index_cb, seen, &rep), NNP_OK);
    for (int i = 0; i < FILTER_ELEMS; i++)
        assert_int_equal(seen[i], want[i]);
    assert_int_equal(rep.elements, n_want);
    assert_int_equal(rep.skipped, FILTER_ELEMS - n_want);
    assert_int_equal(rep.bad_elements, 0);
    free(g.p);
    nnpt_rm_rf(dir);
    free(dir);
}

static void test_stream_filter_random(void **state)
{
    (void)state;
    for (int k = 0; k < FILTER_FILES; k++)
        filter_random_once();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edge_cases),
        cmocka_unit_test(test_nesting_limit),
        cmocka_unit_test(test_mutations),
        cmocka_unit_test(test_cut_short),
        cmocka_unit_test(test_number_text),
        cmocka_unit_test(test_stream_filter),
        cmocka_unit_test(test_stream_filter_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
