/* fuzz_options.c - libFuzzer harness for the option parsers (src/core/options.c): feeds the
 * input, as a NUL-terminated string, to nnp_options_from_json and nnp_options_from_msprof_json,
 * then validates the result. Besides crashes it checks the parsers' contracts: a failed parse
 * leaves the options untouched, and a valid result survives to_json -> from_json. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/options_internal.h"
#include "nnprof/nnprof.h"

/* Large enough for to_json of any struct (its internal cap is 64 KiB). */
#define JSON_CAP (64 * 1024)
/* A deliberately tiny buffer, to exercise to_json's truncation path. */
#define SMALL_CAP 7

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(nnp_log_level_t level, const char *msg, void *user)
{
    (void)level;
    (void)msg;
    (void)user;
}

/* A contract violation is a crash, so libFuzzer keeps the input. */
static void check(bool ok)
{
    if (!ok)
        __builtin_trap();
}

static char json_a[JSON_CAP], json_b[JSON_CAP];

/* to_json(o) parsed back by both parsers must give the same JSON again. The one exception
 * is an invalid profiler_level: it becomes Level0 without Level0's side effects (the seed's
 * if/elif), which a re-parse of "Level0" then applies. */
static void check_round_trip(const nnp_options_t *o)
{
    nnp_options_t back;
    bool start = false;
    int n;

    if (o->profiler_level == NNP_LEVEL_0 && (o->data_process || o->aicore_metrics != -1))
        return;
    if (o->profiler_level == NNP_LEVEL_1 && o->data_process)
        return;
    n = nnp_options_to_json(o, json_a, sizeof(json_a));
    check(n > 0 && (size_t)n < sizeof(json_a));
    check(nnp_options_init(&back) == NNP_OK);
    check(nnp_options_from_json(&back, json_a, &start) == NNP_OK);
    check(nnp_options_from_msprof_json(&back, json_a) == NNP_OK);
    n = nnp_options_to_json(&back, json_b, sizeof(json_b));
    check(n > 0 && strcmp(json_a, json_b) == 0);
}

static void check_result(nnp_options_t *o, const nnp_options_t *before, int rc)
{
    char small[SMALL_CAP];
    const char *names[NNP_OPTIONS_UNSUPPORTED_MAX];
    int n;

    check(rc == NNP_OK || rc == NNP_EINVAL || rc == NNP_EPATH);
    if (rc != NNP_OK) {
        check(memcmp(o, before, sizeof(*o)) == 0);
        return;
    }
    check(nnp__options_unsupported(o, names, NNP_OPTIONS_UNSUPPORTED_MAX) <=
          NNP_OPTIONS_UNSUPPORTED_MAX);
    n = nnp_options_to_json(o, small, sizeof(small));
    check(n > 0 && strlen(small) == SMALL_CAP - 1);
    rc = nnp_options_validate(o);
    check(rc == NNP_OK || rc == NNP_ETOOLONG);
    if (rc == NNP_OK)
        check_round_trip(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool initialised;
    nnp_options_t o, before;
    bool start = false;
    char *text;
    int rc;

    if (!initialised) {
        nnp_log_set_handler(quiet, NULL);
        initialised = true;
    }
    text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    check(nnp_options_init(&o) == NNP_OK);
    before = o;
    rc = nnp_options_from_json(&o, text, &start);
    check_result(&o, &before, rc);

    check(nnp_options_init(&o) == NNP_OK);
    before = o;
    rc = nnp_options_from_msprof_json(&o, text);
    check_result(&o, &before, rc);

    free(text);
    return 0;
}
