/* test_alloc.c - the helpers of src/util/alloc.c: nnp__grow's capacities, its refusal of a
 * size that would overflow, and that what was stored stays; nnp__fields_rejoin. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "util/util.h"

#define FIRST 4

static void test_grow_doubles(void **state)
{
    size_t cap = 0, n = 0;
    int *v = NULL, *g;
    (void)state;
    for (int i = 0; i < 9; i++) {
        g = nnp__grow(v, n, &cap, sizeof(*v), FIRST);
        assert_non_null(g);
        v = g;
        v[n++] = i * 10;
        /* 4 for the first 4, then 8, then 16. */
        assert_int_equal(cap, i < 4 ? 4 : i < 8 ? 8 : 16);
    }
    for (int i = 0; i < 9; i++)
        assert_int_equal(v[i], i * 10);
    /* Room left: the same array, the same capacity. */
    assert_ptr_equal(nnp__grow(v, n, &cap, sizeof(*v), FIRST), v);
    assert_int_equal(cap, 16);
    nnp__free(v);
}

static void test_grow_refuses_overflow(void **state)
{
    size_t cap = SIZE_MAX / 2 + 1, n = cap;
    char c;
    (void)state;
    /* Twice the capacity does not fit in a size_t: refused, nothing changed. */
    assert_null(nnp__grow(&c, n, &cap, 1, FIRST));
    assert_int_equal(cap, SIZE_MAX / 2 + 1);
    cap = 0;
    assert_null(nnp__grow(NULL, 0, &cap, SIZE_MAX / 2, FIRST));
    assert_int_equal(cap, 0);
}

/* Keeps the fields that do not start with 'x'. */
static bool no_x(const char *field, size_t len)
{
    return len > 0 && field[0] != 'x';
}

/* Case-insensitive containment (NCCL kernels, HCCL tasks by name). */
static void test_contains_ci(void **state)
{
    (void)state;
    assert_true(nnp__contains_ci("ncclDevKernel_AllReduce", "NCCL"));
    assert_true(nnp__contains_ci("_Z39NCCLkernel", "nccl"));
    assert_true(nnp__contains_ci("hcom_allReduce", "hcom"));
    assert_true(nnp__contains_ci("x", ""));
    assert_false(nnp__contains_ci("ncl", "nccl"));
    assert_false(nnp__contains_ci("", "nccl"));
    assert_false(nnp__contains_ci("nc@l", "nc`l")); /* '@' is no letter: no case to fold */
}

static void test_fields_rejoin(void **state)
{
    char out[64];
    (void)state;
    /* A Call stack (';' after each frame) into the model's text. */
    assert_int_equal(nnp__fields_rejoin("m.py(3): f;t.py(9): <module>;", ';', '\n', NULL, out),
                     strlen("m.py(3): f\nt.py(9): <module>"));
    assert_string_equal(out, "m.py(3): f\nt.py(9): <module>");
    /* Empty fields dropped; a filter; nothing kept: "". */
    nnp__fields_rejoin(";;a;;b;", ';', ',', NULL, out);
    assert_string_equal(out, "a,b");
    nnp__fields_rejoin("a\nx1\nb\nx2", '\n', ';', no_x, out);
    assert_string_equal(out, "a;b");
    assert_int_equal(nnp__fields_rejoin("x\n\nx", '\n', ';', no_x, out), 0);
    assert_string_equal(out, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grow_doubles),
        cmocka_unit_test(test_grow_refuses_overflow),
        cmocka_unit_test(test_fields_rejoin),
        cmocka_unit_test(test_contains_ci),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
