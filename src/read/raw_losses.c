/* raw_losses.c - what a raw directory lost and why. The meta file's LOSS chunks count the
 * events dropped by full thread buffers; events recorded but never written (a full disk,
 * an I/O error) can only be counted in memory, and the recorder writes those counters to
 * info.json at every stop and at destroy. The reader merges both, and `nnprof info`,
 * `nnprof dump` and `nnprof analyse` print the same sentence from it. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "read/json_num.h"
#include "read/raw_reader.h"
#include "util/util.h"

/* info.json is a few KiB; a larger file is not the recorder's. */
#define INFO_JSON_MAX (1u << 20)
/* The largest integer a JSON number (a double) carries exactly: 2^53. */
#define JSON_INT_EXACT_MAX ((int64_t)1 << 53)

/* A counter of info.json's "stats", validated (json_num.h); 0 when absent or refused. */
static uint64_t counter(const cJSON *stats, const char *key, const char *label, const char *path)
{
    int64_t v = 0;
    if (nnp__json_int(stats, key, label, 0, JSON_INT_EXACT_MAX, path, &v) != NNP_JSON_NUM_OK)
        return 0;
    return (uint64_t)v;
}

void nnp__raw_info_losses(const char *dir, nnp_raw_info_losses_t *out)
{
    char path[NNP_PATH_MAX], *text = NULL;
    cJSON *j, *st;
    memset(out, 0, sizeof(*out));
    if (nnp__path_join(path, sizeof(path), dir, "info.json") != NNP_OK ||
        nnp__read_file(path, INFO_JSON_MAX, &text, NULL) != NNP_OK) {
        nnp__clear_error(); /* a missing info.json is another part's to report */
        return;
    }
    j = cJSON_Parse(text);
    nnp__free(text);
    st = cJSON_GetObjectItemCaseSensitive(j, "stats");
    if (cJSON_IsObject(st)) {
        out->events_dropped = counter(st, "events_dropped", "stats.events_dropped", path);
        out->events_unwritten = counter(st, "events_unwritten", "stats.events_unwritten", path);
        out->write_errors = counter(st, "write_errors", "stats.write_errors", path);
        out->disk_full = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(st, "disk_full"));
    }
    cJSON_Delete(j);
}

bool nnp__raw_loss_text(const nnp_raw_report_t *rep, char *buf, size_t cap)
{
    size_t n = 0;
    if (cap > 0)
        buf[0] = '\0';
    if (rep->events_lost == 0 || cap == 0)
        return false;
    n = (size_t)snprintf(buf, cap, "%llu events lost:", (unsigned long long)rep->events_lost);
    if (rep->events_lost_buffer > 0 && n < cap)
        n += (size_t)snprintf(buf + n, cap - n,
                              " %llu dropped because thread buffers were full (raise "
                              "buffer_size_kb or use full_policy \"block\")%s",
                              (unsigned long long)rep->events_lost_buffer,
                              rep->events_lost_write > 0 ? ";" : "");
    if (rep->events_lost_write > 0 && n < cap)
        snprintf(buf + n, cap - n,
                 " %llu recorded but not written because %s (%llu failed "
                 "write%s)",
                 (unsigned long long)rep->events_lost_write,
                 rep->disk_full ? "the disk was full" : "writing failed",
                 (unsigned long long)rep->write_errors, rep->write_errors == 1 ? "" : "s");
    return true;
}
