/* test_storage.c - storage_limit: when the raw data of a run reaches the limit, the oldest
 * data files are deleted first, a warning says how much aged out, the session's counters
 * and the meta file record it, and the reader treats the gap as aged out, not missing.
 * Uses the exact-byte knob storage_limit_bytes (the msprof option's minimum is 200 MB). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "read/raw_reader.h"
#include "test_util.h"

#define FILE_BYTES  (64u * 1024u)
#define LIMIT_BYTES (256u * 1024u)
#define EVENTS      300000u

typedef struct suffix {
    uint64_t first, n;
    bool contiguous;
} suffix_t;

static int check_suffix(void *user, const nnp_raw_event_t *ev)
{
    suffix_t *s = user;
    if (ev->kind != NNP_REC_STEP_BEGIN)
        return 0;
    if (s->n == 0)
        s->first = ev->slots->a;
    else if (ev->slots->a != s->first + s->n)
        s->contiguous = false;
    s->n++;
    return 0;
}

/* Sum of data file sizes and the lowest data file number present. */
static uint64_t data_bytes(const char *dir, unsigned *lowest)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    uint64_t total = 0;
    *lowest = 0;
    while ((e = readdir(d)) != NULL) {
        char path[8192];
        struct stat st;
        unsigned seq;
        if (sscanf(e->d_name, "data_%u.nnp", &seq) != 1)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        stat(path, &st);
        total += (uint64_t)st.st_size;
        if (*lowest == 0 || seq < *lowest)
            *lowest = seq;
    }
    closedir(d);
    return total;
}

static void test_oldest_data_ages_out_first(void **state)
{
    char *out = nnpt_mkdtemp();
    nnp_options_t o;
    nnp_session_t *s;
    nnp_stats_t st;
    nnp_raw_t *raw;
    suffix_t suf = {0, 0, true};
    char dir[4096];
    unsigned lowest;
    uint64_t on_disk, x = 88172645463325252ull;
    const nnp_raw_report_t *rep;
    (void)state;

    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", out);
    o.raw_file_bytes = FILE_BYTES;
    o.storage_limit_bytes = LIMIT_BYTES;
    o.sample_interval_ms = 0;
    o.full_policy = NNP_FULL_BLOCK;
    nnpt_log_capture();
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    for (uint64_t i = 0; i < EVENTS; i++) {
        /* xorshift payload: incompressible, so the files really fill up. */
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        nnp_step_begin_at(i, (uint32_t)x, x);
    }
    assert_int_equal(nnp_session_stop(s), NNP_OK);
    nnp_session_stats(s, &st);
    snprintf(dir, sizeof(dir), "%s", nnp_session_raw_dir(s));
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    assert_non_null(strstr(nnpt_log_text(), "storage_limit: aged out"));
    nnpt_log_release();

    assert_true(st.files_aged_out > 0);
    assert_true(st.bytes_aged_out > 0);
    on_disk = data_bytes(dir, &lowest);
    /* The oldest files went first: the lowest file left is right after the aged ones. */
    assert_int_equal(lowest, st.files_aged_out + 1);
    /* Under the limit, give or take the file being written when the check ran. */
    assert_true(on_disk <= LIMIT_BYTES + FILE_BYTES);

    assert_int_equal(nnp__raw_open(dir, &raw), NNP_OK);
    assert_int_equal(nnp__raw_read(raw, check_suffix, &suf), NNP_OK);
    rep = nnp__raw_report(raw);
    assert_int_equal(rep->data_files_aged, st.files_aged_out);
    assert_int_equal(rep->bytes_aged, st.bytes_aged_out);
    assert_int_equal(rep->data_files_missing, 0);
    assert_int_equal(rep->chunks_corrupt, 0);
    /* What is left is the newest data: a contiguous run ending at the last event. */
    assert_true(suf.contiguous);
    assert_true(suf.n > 0 && suf.n < EVENTS);
    assert_int_equal(suf.first + suf.n, EVENTS);
    nnp__raw_close(raw);
    nnpt_rm_rf(out);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oldest_data_ages_out_first),
    };
    nnp_log_set_level(NNP_LOG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
