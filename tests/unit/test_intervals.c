/* test_intervals.c - intervals.c on hand-made lists, every expected list worked out here:
 * normalising unsorted, nested and touching intervals, clipping, a minus b, the gaps of two
 * lists with head and tail, the length inside windows (prefix sums across their stride,
 * hints from either side), the busy span, and a failed growth leaving the list intact. */
#include <stdlib.h>
#include <string.h>

#include "analyse/intervals.h"
#include "test_util.h"
#include "util/util.h"

/* More intervals than one prefix-sum stride (16), so sums cross entries. */
#define LONG_LIST 40
/* Intervals [10k, 10k + 4) of LONG_LIST: 4 long, 6 apart. */
#define LONG_STEP 10
#define LONG_LEN  4

/* A list of n intervals given as start, end pairs (in the order given). */
static nnp_interval_list_t make(size_t n, const int64_t *pairs)
{
    nnp_interval_list_t l = {0};
    for (size_t i = 0; i < n; i++)
        assert_int_equal(nnp__ivl_push(&l, pairs[2 * i], pairs[2 * i + 1]), NNP_OK);
    return l;
}

static void expect(const nnp_interval_list_t *l, size_t n, const int64_t *pairs)
{
    assert_int_equal(l->n, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(l->v[i].start_ns, pairs[2 * i]);
        assert_int_equal(l->v[i].end_ns, pairs[2 * i + 1]);
    }
}

/* Unsorted input; [5,8] inside [0,10]; [10,12] touches it; [20,25] and [24,30] overlap;
 * [40,40] is empty but kept (clipping drops empty intervals, normalising does not). */
static void test_normalise(void **state)
{
    static const int64_t in[] = {20, 25, 0, 10, 40, 40, 5, 8, 24, 30, 10, 12};
    static const int64_t want[] = {0, 12, 20, 30, 40, 40};
    nnp_interval_list_t l = make(6, in);
    (void)state;
    nnp__ivl_normalise(&l);
    expect(&l, 3, want);
    nnp__ivl_fini(&l);
    assert_null(l.v);
    assert_int_equal(l.n, 0);
}

/* Clip to [5, 25]: [0,10] -> [5,10]; [12,14] whole; [20,30] -> [20,25]; [32,35] and
 * [40,41] are outside. */
static void test_clip(void **state)
{
    static const int64_t in[] = {0, 10, 12, 14, 20, 30, 32, 35, 40, 41};
    static const int64_t want[] = {5, 10, 12, 14, 20, 25};
    nnp_interval_list_t l = make(5, in);
    (void)state;
    nnp__ivl_clip(&l, 5, 25);
    expect(&l, 3, want);
    nnp__ivl_fini(&l);
}

/* a = [0,100], [200,300]; b = [10,20], [50,250], [290,400]:
 * a minus b = [0,10], [20,50], [250,290]. */
static void test_subtract(void **state)
{
    static const int64_t a_in[] = {0, 100, 200, 300};
    static const int64_t b_in[] = {10, 20, 50, 250, 290, 400};
    static const int64_t want[] = {0, 10, 20, 50, 250, 290};
    nnp_interval_list_t a = make(2, a_in), b = make(3, b_in), out = {0};
    (void)state;
    assert_int_equal(nnp__ivl_subtract(&a, &b, &out), NNP_OK);
    expect(&out, 3, want);
    nnp__ivl_fini(&out);
    assert_int_equal(nnp__ivl_subtract(&b, &a, &out), NNP_OK); /* b minus a */
    {
        static const int64_t want_ba[] = {100, 200, 300, 400};
        expect(&out, 2, want_ba);
    }
    nnp__ivl_fini(&a);
    nnp__ivl_fini(&b);
    nnp__ivl_fini(&out);
}

/* Span [0, 100]; a = [10,20], [40,50]; b = [15,30], [50,60]: busy [10,30], [40,60] (b's
 * [50,60] touches a's [40,50]: no gap between them); gaps [0,10], [30,40], [60,100]. */
static void test_gaps(void **state)
{
    static const int64_t a_in[] = {10, 20, 40, 50};
    static const int64_t b_in[] = {15, 30, 50, 60};
    static const int64_t want[] = {0, 10, 30, 40, 60, 100};
    nnp_interval_list_t a = make(2, a_in), b = make(2, b_in), out = {0};
    (void)state;
    assert_int_equal(nnp__ivl_gaps(&a, &b, 0, 100, &out), NNP_OK);
    expect(&out, 3, want);
    nnp__ivl_fini(&out);
    /* Busy from the span's start to its end: no head, no tail. */
    assert_int_equal(nnp__ivl_gaps(&a, &b, 10, 60, &out), NNP_OK);
    {
        static const int64_t inner[] = {30, 40};
        expect(&out, 1, inner);
    }
    nnp__ivl_fini(&out);
    /* Nothing busy: the whole span is one gap. */
    {
        nnp_interval_list_t none = {0};
        static const int64_t whole[] = {5, 9};
        assert_int_equal(nnp__ivl_gaps(&none, &none, 5, 9, &out), NNP_OK);
        expect(&out, 1, whole);
    }
    nnp__ivl_fini(&out);
    nnp__ivl_fini(&a);
    nnp__ivl_fini(&b);
}

/* LONG_LIST intervals [10k, 10k + 4), k = 0..39: a window holds 4 per whole interval
 * plus its clipped edges. [0, 400): all 40, 160. [3, 12): [3,4) and [10,12), 3.
 * [105, 333): [100,104) ends before it; [110,114) .. [320,324) are whole (22: 88);
 * [330,334) is cut to [330,333) (3): 91. [104, 110): nothing. */
static void test_measure(void **state)
{
    nnp_interval_list_t l = {0};
    int64_t *cum = NULL;
    nnp_ivl_hint_t h = {0, 0};
    (void)state;
    for (int64_t k = 0; k < LONG_LIST; k++)
        assert_int_equal(nnp__ivl_push(&l, LONG_STEP * k, LONG_STEP * k + LONG_LEN), NNP_OK);
    assert_int_equal(nnp__ivl_prefix_sums(&l, &cum), NNP_OK);
    assert_int_equal(nnp__ivl_total(&l), LONG_LIST * LONG_LEN);
    assert_int_equal(nnp__ivl_measure(&l, cum, 0, 400, &h), 160);
    assert_int_equal(nnp__ivl_measure(&l, cum, 3, 12, &h), 3);
    assert_int_equal(nnp__ivl_measure(&l, cum, 105, 333, &h), 91);
    assert_int_equal(nnp__ivl_measure(&l, cum, 104, 110, &h), 0);
    /* The same windows from a hint past the answer (searches walk back) and from far. */
    h = (nnp_ivl_hint_t){LONG_LIST, LONG_LIST};
    assert_int_equal(nnp__ivl_measure(&l, cum, 3, 12, &h), 3);
    h = (nnp_ivl_hint_t){0, 0};
    assert_int_equal(nnp__ivl_measure(&l, cum, 105, 333, &h), 91);
    /* An empty or inverted window measures nothing. */
    assert_int_equal(nnp__ivl_measure(&l, cum, 50, 50, &h), 0);
    assert_int_equal(nnp__ivl_measure(&l, cum, 60, 50, &h), 0);
    nnp__free(cum);
    nnp__ivl_fini(&l);
}

static void test_busy_span(void **state)
{
    static const int64_t a_in[] = {10, 20, 40, 50};
    static const int64_t b_in[] = {5, 8, 30, 45};
    nnp_interval_list_t a = make(2, a_in), b = make(2, b_in), none = {0};
    int64_t lo = 0, hi = 0;
    (void)state;
    assert_true(nnp__ivl_busy_span(&a, &b, &lo, &hi));
    assert_int_equal(lo, 5);
    assert_int_equal(hi, 50);
    assert_true(nnp__ivl_busy_span(&none, &a, &lo, &hi));
    assert_int_equal(lo, 10);
    assert_int_equal(hi, 50);
    assert_false(nnp__ivl_busy_span(&none, &none, &lo, &hi));
    nnp__ivl_fini(&a);
    nnp__ivl_fini(&b);
}

/* A growth that fails returns NNP_ENOMEM and leaves the list as it was. */
static void test_push_fails(void **state)
{
    static const int64_t in[] = {1, 2};
    nnp_interval_list_t l = {0};
    (void)state;
    nnp__alloc_fail_at(1);
    assert_int_equal(nnp__ivl_push(&l, 1, 2), NNP_ENOMEM);
    assert_int_equal(l.n, 0);
    assert_null(l.v);
    nnp__alloc_fail_at(0);
    assert_int_equal(nnp__ivl_push(&l, 1, 2), NNP_OK);
    expect(&l, 1, in);
    nnp__ivl_fini(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_normalise),  cmocka_unit_test(test_clip),
        cmocka_unit_test(test_subtract),   cmocka_unit_test(test_gaps),
        cmocka_unit_test(test_measure),    cmocka_unit_test(test_busy_span),
        cmocka_unit_test(test_push_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
