/* test_decimal.c - nnp__parse_decimal_ns: exact decimal times (us, ms) into integer ns, the
 * one parser every importer uses for times written as text. */
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
        {"1e3", 3, false, 0},
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
