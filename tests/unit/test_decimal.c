/* test_decimal.c - nnp__parse_decimal_ns (src/util/decimal.c): exact decimal times (us, ms),
 * plain or with an exponent, into integer ns, the one parser every importer uses for times
 * written as text. */
#include <stdint.h>

#include "test_util.h"
#include "util/util.h"

typedef struct dcase {
    const char *text;
    int digits;
    bool ok;
    int64_t ns;
} dcase_t;

static void test_decimal_cases(void **state)
{
    static const dcase_t cases[] = {
        {"1.5", 3, true, 1500},
        {"0.0005", 3, true, 1}, /* half a ns rounds up */
        {"0.0004", 3, true, 0},
        {"-2.25", 3, true, -2250},
        {"+3", 3, true, 3000},
        {" 7 \t", 3, true, 7000},
        {"1699999999999999.999", 3, true, 1699999999999999999},
        {"12.3456789", 6, true, 12345679},
        {"42.", 3, true, 42000},
        {".5", 3, true, 500},
        {"", 3, false, 0},
        {"abc", 3, false, 0},
        {"1e3", 3, true, 1000000},
        /* Python's str() of small floats (MindSpore's aicore_intermediate_*_detail.csv) */
        {"5e-05", 6, true, 50},
        {"1.25E-3", 3, true, 1}, /* 1.25 ns: rounds down */
        {"1.5e-3", 3, true, 2},  /* 1.5 ns: half up */
        {"7.1e+2", 3, true, 710000},
        {"-2.5e-1", 3, true, -250},
        {"0.000e5", 3, true, 0},
        {"00012.0", 3, true, 12000},
        {"0.0012345678", 6, true, 1235}, /* 1234.5678 ns */
        {"9.223372036854775807e15", 3, true, INT64_MAX},
        {"9.223372036854775808e15", 3, false, 0}, /* one ns past int64 */
        {"1e99999999", 3, false, 0},
        {"1e-99999999", 3, true, 0},
        {"1e", 3, false, 0},
        {"e5", 3, false, 0},
        {"1e+", 3, false, 0},
        {"1e5x", 3, false, 0},
        {"1.2.3", 3, false, 0},
        {"-", 3, false, 0},
        {"99999999999999999999", 3, false, 0}, /* overflows int64 ns */
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t v = -1;
        bool ok = nnp__parse_decimal_ns(cases[i].text, cases[i].digits, &v);
        if (ok != cases[i].ok)
            fail_msg("'%s': ok %d, expected %d", cases[i].text, ok, cases[i].ok);
        if (ok && v != cases[i].ns)
            fail_msg("'%s': %lld ns, expected %lld", cases[i].text, (long long)v,
                     (long long)cases[i].ns);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decimal_cases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
