/* test_cuda_injection.c - libnnprof_cuda.so's entry point as the CUDA driver calls it
 * (dlopen + InitializeInjection) inside a profiled process: it always returns 1 so the
 * application runs, also where CUPTI cannot work (no GPU or driver: the back end logs that
 * it is off), is idempotent, keeps correlation pushes harmless, and leaves the session's
 * windows and files intact; NNPROF_CUDA=0 turns it off before CUPTI is touched. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

typedef int (*init_fn)(void);

static init_fn load(void)
{
    void *h = dlopen(NNP_CUDA_LIBRARY, RTLD_NOW | RTLD_GLOBAL);
    void *sym;
    init_fn f;
    if (!h)
        fail_msg("dlopen %s: %s", NNP_CUDA_LIBRARY, dlerror());
    sym = dlsym(h, "InitializeInjection");
    memcpy(&f, &sym, sizeof(f)); /* POSIX: dlsym's object pointer is the function's */
    return sym ? f : NULL;
}

static void run(bool disabled)
{
    char *out = nnpt_mkdtemp();
    nnp_options_t o;
    nnp_session_t *s;
    init_fn init;

    if (disabled)
        setenv("NNPROF_CUDA", "0", 1);
    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", out);
    o.sample_interval_ms = 0;
    o.profile_memory = true;
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    init = load();
    assert_non_null(init);
    assert_int_equal(init(), 1);
    assert_int_equal(init(), 1); /* the driver may call it once per context: idempotent */
    nnp_correlation_push(5);
    nnp_correlation_pop();
    assert_int_equal(nnp_session_stop(s), NNP_OK);
    assert_int_equal(nnp_session_start(s), NNP_OK);
    nnp_counter(nnp_intern("still_recording"), 1.0);
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    nnpt_rm_rf(out);
    free(out);
}

static void test_injection(void **state)
{
    (void)state;
    run(getenv("NNP_TEST_CUDA_DISABLED") != NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_injection)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
