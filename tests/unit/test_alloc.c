/* test_alloc.c - the allocation helpers (src/util/alloc.c): nnp__grow's capacities, its
 * refusal of a size that would overflow, and that what was stored stays. */
#include <stdint.h>
#include <stdlib.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grow_doubles),
        cmocka_unit_test(test_grow_refuses_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
