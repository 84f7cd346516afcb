/* test_diskfull.c - recording onto a disk that fills up, for real: a small tmpfs is mounted
 * (root only; the tests skip, saying why, where mount(2) is refused) and partly filled
 * with ballast. Every event is accounted for (written, or counted as unwritten), info.json
 * still reaches "finalized" with the counters although the disk is full, the reader and
 * `nnprof info`, `dump` and `analyse` name the loss; and with less than 20 MB free, aging
 * deletes no more than the shortfall and says so. Runs under TSan in .ci/run. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "read/raw_reader.h"
#include "test_util.h"

#define CLI NNP_BINARY_DIR "/nnprof"
#define MiB (1024ull * 1024ull)
#define KiB 1024ull
/* Bytes of ballast written at a time. */
#define BALLAST_CHUNK (256u * 1024u)
#define OUT_CAP       (1 << 20)

static char *mnt;

/* Mounts a tmpfs of size bytes on a fresh directory. false (and mnt NULL) when refused. */
static bool mount_small_disk(uint64_t size)
{
    char opts[64];
    mnt = nnpt_mkdtemp();
    snprintf(opts, sizeof(opts), "size=%llu,mode=0700", (unsigned long long)size);
    if (mount("nnprof-test", mnt, "tmpfs", 0, opts) != 0) {
        fprintf(stderr,
                "test_diskfull: cannot mount a %llu-byte tmpfs on %s (%s): this test "
                "needs root (CAP_SYS_ADMIN); skipped\n",
                (unsigned long long)size, mnt, strerror(errno));
        nnpt_rm_rf(mnt);
        free(mnt);
        mnt = NULL;
        return false;
    }
    return true;
}

static int unmount_disk(void **state)
{
    (void)state;
    if (mnt) {
        umount2(mnt, MNT_DETACH);
        rmdir(mnt);
        free(mnt);
        mnt = NULL;
    }
    return 0;
}

static uint64_t free_bytes(const char *path)
{
    struct statvfs sv;
    assert_int_equal(statvfs(path, &sv), 0);
    return (uint64_t)sv.f_bavail * sv.f_frsize;
}

/* Fills the disk until only about leave bytes are free. */
static void ballast(uint64_t leave)
{
    char path[4200];
    static char block[BALLAST_CHUNK];
    int fd;
    snprintf(path, sizeof(path), "%s/ballast", mnt);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    memset(block, 0x5a, sizeof(block));
    while (free_bytes(mnt) > leave + sizeof(block))
        assert_int_equal(write(fd, block, sizeof(block)), (ssize_t)sizeof(block));
    close(fd);
}

/* Steps with incompressible payloads (xorshift), so the files really grow. */
static void record_steps(uint64_t n)
{
    uint64_t x = 88172645463325252ull;
    for (uint64_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        nnp_step_begin_at(i, (uint32_t)x, x);
    }
}

static int ignore(void *user, const nnp_raw_event_t *ev)
{
    (void)user;
    (void)ev;
    return 0;
}

static uint64_t stat_of(const cJSON *info, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(info, "stats"), key);
    assert_true(cJSON_IsNumber(v));
    return (uint64_t)v->valuedouble;
}

/* The disk fills in the middle of the run: nothing is silent. */
static void test_disk_full_is_counted_and_reported(void **state)
{
    enum { N = 200000 };
    char raw_dir[4096], want[256];
    char *analysed = nnpt_mkdtemp(), *text = malloc(OUT_CAP);
    nnp_options_t o;
    nnp_session_t *s;
    nnp_stats_t st;
    nnp_raw_t *raw;
    const nnp_raw_report_t *rep;
    cJSON *info;
    int rc;
    (void)state;

    assert_non_null(text);
    if (!mount_small_disk(8 * MiB)) {
        free(analysed);
        free(text);
        skip();
    }
    ballast(512 * KiB);
    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s/out", mnt);
    o.sample_interval_ms = 0;
    o.full_policy = NNP_FULL_BLOCK; /* no buffer drops: every loss is the disk's */
    o.writer_period_ms = 5;
    o.storage_limit_bytes = 1024 * MiB;
    nnpt_log_capture();
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    record_steps(N);
    rc = nnp_session_stop(s);
    assert_int_equal(rc, NNP_EIO);
    assert_non_null(strstr(nnp_last_error(), "writing the raw data in"));
    assert_int_equal(nnp_session_stats(s, &st), NNP_OK);
    snprintf(raw_dir, sizeof(raw_dir), "%s", nnp_session_raw_dir(s));
    assert_int_equal(nnp_session_destroy(s), NNP_EIO);
    assert_non_null(strstr(nnpt_log_text(), "is full (No space left on device): events are "
                                            "being lost"));
    nnpt_log_release();

    assert_true(st.disk_full);
    assert_true(st.events_unwritten > 0 && st.write_errors > 0 && st.events_recorded > 0);
    assert_int_equal(st.events_dropped, 0);
    assert_int_equal(st.events_recorded + st.events_unwritten, N);

    /* info.json reached the end of the run with the counters, on the full disk. */
    info = nnpt_load_json(raw_dir, "info.json");
    assert_non_null(info);
    assert_string_equal(cJSON_GetObjectItem(info, "state")->valuestring, "finalized");
    assert_int_equal(stat_of(info, "events_recorded"), st.events_recorded);
    assert_int_equal(stat_of(info, "events_unwritten"), st.events_unwritten);
    assert_int_equal(stat_of(info, "write_errors"), st.write_errors);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(info, "stats"), "disk_full")));
    cJSON_Delete(info);

    /* What was written reads back whole (a chunk cut by the full disk was cut back). */
    assert_int_equal(nnp__raw_open(raw_dir, &raw), NNP_OK);
    assert_int_equal(nnp__raw_read(raw, ignore, NULL), NNP_OK);
    rep = nnp__raw_report(raw);
    assert_int_equal(rep->records, st.events_recorded);
    assert_int_equal(rep->chunks_corrupt, 0);
    assert_int_equal(rep->chunks_truncated, 0);
    assert_int_equal(rep->events_lost, st.events_unwritten);
    assert_int_equal(rep->events_lost_write, st.events_unwritten);
    assert_true(rep->disk_full);
    nnp__raw_close(raw);

    /* The three commands say how many events were lost and why. */
    snprintf(want, sizeof(want),
             "%llu events lost: %llu recorded but not written because the disk was full",
             (unsigned long long)st.events_unwritten, (unsigned long long)st.events_unwritten);
    assert_int_equal(nnpt_cli(text, OUT_CAP, "info '%s'", raw_dir), 0);
    assert_non_null(strstr(text, "LOST: "));
    assert_non_null(strstr(text, want));
    assert_int_equal(nnpt_cli(text, OUT_CAP, "dump --summary-only '%s'", raw_dir), 0);
    assert_non_null(strstr(text, want));
    assert_non_null(strstr(text, "\"disk_full\":true"));
    nnpt_cli(text, OUT_CAP, "analyse --quiet -o '%s' '%s'", analysed, raw_dir);
    assert_non_null(strstr(text, want));
    free(text);
    nnpt_rm_rf(analysed);
    free(analysed);
}

/* Seed 004 ages the oldest data out when the disk has 20 MB or less free. Here 21 MB are
 * free: once the run has written about 1 MB, aging must keep 20 MB free by deleting the
 * oldest files, and no more than that, and say which rule it applied. */
static void test_aging_under_20mb_deletes_only_the_shortfall(void **state)
{
    enum { N = 200000 }; /* ~6.4 MB of incompressible records */
    const uint64_t file_bytes = 256 * KiB, reserve = 20 * MiB, start_free = 21 * MiB;
    char raw_dir[4096];
    nnp_options_t o;
    nnp_session_t *s;
    nnp_stats_t st;
    uint64_t left_on_disk;
    (void)state;

    if (!mount_small_disk(28 * MiB))
        skip();
    ballast(start_free);
    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s/out", mnt);
    o.sample_interval_ms = 0;
    o.full_policy = NNP_FULL_BLOCK;
    o.raw_file_bytes = file_bytes;
    o.storage_limit_bytes = 1024 * MiB; /* far away: only the 20 MB rule ages */
    nnpt_log_capture();
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    record_steps(N);
    assert_int_equal(nnp_session_stop(s), NNP_OK);
    assert_int_equal(nnp_session_stats(s, &st), NNP_OK);
    snprintf(raw_dir, sizeof(raw_dir), "%s", nnp_session_raw_dir(s));
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
    assert_non_null(strstr(nnpt_log_text(), "under the 20 MB to keep free: aged out"));
    assert_non_null(strstr(nnpt_log_text(), "no more than that shortfall needs"));
    nnpt_log_release();

    assert_int_equal(st.events_unwritten, 0);
    assert_int_equal(st.events_recorded, N);
    assert_true(st.files_aged_out > 0);
    /* What stays is what the 20 MB left room for: at least the 1 MB margin minus the file
     * being written when the check ran, and the disk is back at about 20 MB free. */
    left_on_disk = st.bytes_written - st.bytes_aged_out;
    assert_true(left_on_disk + file_bytes >= start_free - reserve);
    assert_true(free_bytes(mnt) + 2 * file_bytes >= reserve);
    {
        nnp_raw_t *raw;
        assert_int_equal(nnp__raw_open(raw_dir, &raw), NNP_OK);
        assert_int_equal(nnp__raw_read(raw, ignore, NULL), NNP_OK);
        assert_int_equal(nnp__raw_report(raw)->data_files_aged, st.files_aged_out);
        assert_int_equal(nnp__raw_report(raw)->data_files_missing, 0);
        nnp__raw_close(raw);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_disk_full_is_counted_and_reported, unmount_disk),
        cmocka_unit_test_teardown(test_aging_under_20mb_deletes_only_the_shortfall, unmount_disk),
    };
    nnp_log_set_level(NNP_LOG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
