/* test_collector.c - the collector back-end registry: hooks run at window start/stop and
 * session end in that order, a back end registered inside an open window starts at once,
 * events a back end records from window_stop (buffered device activity) reach the raw
 * data, info.json lists the back ends, and bad registrations are refused. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/raw_reader.h"
#include "test_util.h"

typedef struct fake {
    int starts, stops, ends;
    char order[16];
    size_t n_order;
    uint64_t t0_ns; /* when the window opened: the drained event is stamped then */
} fake_t;

static void note(fake_t *f, char c)
{
    if (f->n_order + 1 < sizeof(f->order))
        f->order[f->n_order++] = c;
}

static int fake_start(void *user)
{
    fake_t *f = user;
    f->starts++;
    f->t0_ns = nnp_clock_ns();
    note(f, 's');
    return NNP_OK;
}

/* Like a CUPTI back end: records, with its own timestamps, what it buffered in the window. */
static void fake_stop(void *user)
{
    fake_t *f = user;
    nnp_kernel_t k;
    memset(&k, 0, sizeof(k));
    k.name = nnp_intern("drained_kernel");
    k.type = nnp_intern("FakeKernel");
    nnp_kernel_at(&k, f->t0_ns, f->t0_ns + 1000);
    f->stops++;
    note(f, 'p');
}

static void fake_end(void *user)
{
    fake_t *f = user;
    f->ends++;
    note(f, 'e');
}

static nnp_session_t *make(const char *out, bool start)
{
    nnp_options_t o;
    nnp_session_t *s = NULL;
    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", out);
    o.start_profile = start;
    o.sample_interval_ms = 0;
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    return s;
}

static int count_drained(void *user, const nnp_raw_event_t *ev)
{
    int *n = user;
    if (ev->kind == NNP_REC_KERNEL && ev->end_ns - ev->ts_ns == 1000)
        (*n)++;
    return 0;
}

static void test_hooks_run_in_order_and_drained_events_are_kept(void **state)
{
    char *out = nnpt_mkdtemp();
    fake_t f;
    nnp_collector_t c = {"fake", &f, fake_start, fake_stop, fake_end};
    nnp_session_t *s;
    nnp_raw_t *raw;
    char raw_dir[4096];
    int drained = 0;
    (void)state;

    memset(&f, 0, sizeof(f));
    assert_int_equal(nnp_collector_register(&c), NNP_OK);
    s = make(out, false);
    assert_int_equal(f.starts, 0);
    assert_int_equal(nnp_session_start(s), NNP_OK);
    assert_int_equal(nnp_session_stop(s), NNP_OK);
    assert_int_equal(nnp_session_start(s), NNP_OK);
    snprintf(raw_dir, sizeof(raw_dir), "%s", nnp_session_raw_dir(s));
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    nnp_collector_unregister(&c);
    assert_string_equal(f.order, "spspe");

    assert_int_equal(nnp__raw_open(raw_dir, &raw), NNP_OK);
    assert_int_equal(nnp__raw_read(raw, count_drained, &drained), 0);
    nnp__raw_close(raw);
    assert_int_equal(drained, 2); /* one per window: recording was still on in window_stop */
    nnpt_rm_rf(out);
    free(out);
}

static void test_late_registration_starts_at_once_and_info_lists_it(void **state)
{
    char *out = nnpt_mkdtemp();
    fake_t f;
    nnp_collector_t c = {"late", &f, fake_start, NULL, NULL};
    nnp_session_t *s = make(out, true);
    char path[4096], text[65536];
    size_t n;
    FILE *fp;
    cJSON *info, *list;
    (void)state;

    memset(&f, 0, sizeof(f));
    assert_int_equal(nnp_collector_register(&c), NNP_OK);
    assert_int_equal(f.starts, 1);
    nnp_step_begin(1, 0); /* a session that records nothing leaves no info.json */
    assert_int_equal(nnp_session_stop(s), NNP_OK); /* NULL hooks are skipped */
    snprintf(path, sizeof(path), "%s/info.json", nnp_session_raw_dir(s));
    fp = fopen(path, "r");
    assert_non_null(fp);
    n = fread(text, 1, sizeof(text) - 1, fp);
    fclose(fp);
    text[n] = '\0';
    info = cJSON_Parse(text);
    assert_non_null(info);
    list = cJSON_GetObjectItem(info, "collectors");
    assert_true(cJSON_IsArray(list));
    assert_int_equal(cJSON_GetArraySize(list), 1);
    assert_string_equal(cJSON_GetArrayItem(list, 0)->valuestring, "late");
    cJSON_Delete(info);
    nnp_collector_unregister(&c);
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    assert_int_equal(f.starts, 1);
    nnpt_rm_rf(out);
    free(out);
}

static void test_bad_registrations_are_refused(void **state)
{
    nnp_collector_t many[17];
    (void)state;
    assert_int_equal(nnp_collector_register(NULL), NNP_EINVAL);
    memset(many, 0, sizeof(many));
    for (int i = 0; i < 16; i++)
        assert_int_equal(nnp_collector_register(&many[i]), NNP_OK);
    assert_int_equal(nnp_collector_register(&many[0]), NNP_EINVAL);
    assert_int_equal(nnp_collector_register(&many[16]), NNP_ENOMEM);
    assert_non_null(strstr(nnp_last_error(), "at most 16"));
    for (int i = 0; i < 16; i++)
        nnp_collector_unregister(&many[i]);
    nnp_collector_unregister(&many[16]); /* unknown: ignored */
    assert_int_equal(nnp_collector_register(&many[16]), NNP_OK);
    nnp_collector_unregister(&many[16]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hooks_run_in_order_and_drained_events_are_kept),
        cmocka_unit_test(test_late_registration_starts_at_once_and_info_lists_it),
        cmocka_unit_test(test_bad_registrations_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
