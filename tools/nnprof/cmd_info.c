/* cmd_info.c - `nnprof info DIR`: what a run holds, per raw directory (rank): rank,
 * device, host, pid, state, time span, windows, steps, records per kind, chunks
 * ok/corrupt/truncated, events lost, files aged out and the options, as text or as one
 * JSON document (--json). Reads the raw files only (no analysis, no model). */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/driver.h"
#include "cli.h"
#include "format/raw_format.h"
#include "model/model.h"
#include "read/importers.h"
#include "read/raw_reader.h"
#include "util/util.h"

/* Raw directories one call takes (a 64-rank job on one host fits easily). */
#define MAX_DIRS 4096
/* info.json is small; a larger file is not ours. */
#define INFO_JSON_MAX (1u << 20)
#define NS_PER_S      1e9
/* The sentence about lost events (nnp__raw_loss_text) is well under this. */
#define LOSS_TEXT_CAP 512
/* Room for the folders nnp__inputs_suggest names when nothing is found. */
#define SUGGEST_CAP 1024
#define NS_PER_US   1e3

/* What the records of one raw directory add up to. */
typedef struct info_scan {
    uint64_t per_kind[NNP_REC_KIND_COUNT];
    uint64_t first_ns, last_ns; /* span of every record (ends included) */
    uint64_t steps, first_step, last_step;
} info_scan_t;

static int on_event(void *user, const nnp_raw_event_t *ev)
{
    info_scan_t *s = user;
    uint64_t end = ev->end_ns > ev->ts_ns ? ev->end_ns : ev->ts_ns;
    if (ev->kind < NNP_REC_KIND_COUNT)
        s->per_kind[ev->kind]++;
    if (s->first_ns == 0 || ev->ts_ns < s->first_ns)
        s->first_ns = ev->ts_ns;
    if (end > s->last_ns)
        s->last_ns = end;
    if (ev->kind == NNP_REC_STEP_BEGIN) {
        uint64_t id = ev->slots[0].a;
        if (s->steps == 0 || id < s->first_step)
            s->first_step = id;
        if (s->steps == 0 || id > s->last_step)
            s->last_step = id;
        s->steps++;
    }
    return 0;
}

/* info.json as the recorder wrote it, or NULL when missing or unreadable. */
static cJSON *load_info(const char *raw)
{
    char path[NNP_PATH_MAX], *text = NULL;
    cJSON *j;
    if (nnp__path_join(path, sizeof(path), raw, "info.json") != NNP_OK ||
        nnp__read_file(path, INFO_JSON_MAX, &text, NULL) != NNP_OK)
        return NULL;
    j = cJSON_Parse(text);
    nnp__free(text);
    return j;
}

static void copy_item(cJSON *dst, const char *key, const cJSON *info, const char *src_key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(info, src_key);
    cJSON_AddItemToObject(dst, key, v ? cJSON_Duplicate(v, true) : cJSON_CreateNull());
}

/* One rank's object (docs/CLI.md `nnprof info`). NULL when the directory cannot be read
 * (message printed). */
static cJSON *rank_info(const char *raw)
{
    info_scan_t s;
    nnp_raw_t *r;
    const nnp_raw_report_t *rep;
    cJSON *o, *info, *recs, *wins;
    int rc;

    memset(&s, 0, sizeof(s));
    rc = nnp__raw_open(raw, &r);
    if (rc != NNP_OK) {
        nnp_cli_error(raw, "%s", nnp_last_error());
        return NULL;
    }
    rc = nnp__raw_read(r, on_event, &s);
    if (rc != NNP_OK)
        nnp_cli_error(raw, "stopped: %s", nnp_strerror(rc));
    rep = nnp__raw_report(r);
    info = load_info(raw);
    o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "dir", raw);
    copy_item(o, "rank", info, "rank_id");
    copy_item(o, "device", info, "device_id");
    copy_item(o, "host", info, "host");
    copy_item(o, "pid", info, "pid");
    copy_item(o, "state", info, "state");
    cJSON_AddNumberToObject(o, "first_ns", (double)s.first_ns);
    cJSON_AddNumberToObject(o, "last_ns", (double)s.last_ns);
    cJSON_AddNumberToObject(o, "duration_ns", (double)(s.last_ns - s.first_ns));
    wins = cJSON_GetObjectItemCaseSensitive(info, "windows");
    cJSON_AddNumberToObject(o, "windows", cJSON_IsArray(wins) ? cJSON_GetArraySize(wins) : 0);
    cJSON_AddNumberToObject(o, "steps", (double)s.steps);
    if (s.steps) {
        cJSON_AddNumberToObject(o, "first_step", (double)s.first_step);
        cJSON_AddNumberToObject(o, "last_step", (double)s.last_step);
    } else {
        cJSON_AddNullToObject(o, "first_step");
        cJSON_AddNullToObject(o, "last_step");
    }
    cJSON_AddNumberToObject(o, "records", (double)rep->records);
    recs = cJSON_AddObjectToObject(o, "records_per_kind");
    for (unsigned k = 1; k < NNP_REC_KIND_COUNT; k++)
        if (s.per_kind[k])
            cJSON_AddNumberToObject(recs, nnp__rec_kind_name(k), (double)s.per_kind[k]);
    cJSON_AddNumberToObject(o, "data_files", rep->data_files);
    cJSON_AddNumberToObject(o, "chunks_ok", (double)rep->chunks_ok);
    cJSON_AddNumberToObject(o, "chunks_corrupt", (double)rep->chunks_corrupt);
    cJSON_AddNumberToObject(o, "chunks_truncated", (double)rep->chunks_truncated);
    cJSON_AddNumberToObject(o, "chunks_duplicate", (double)rep->chunks_duplicate);
    cJSON_AddNumberToObject(o, "events_lost", (double)rep->events_lost);
    cJSON_AddNumberToObject(o, "events_lost_buffer", (double)rep->events_lost_buffer);
    cJSON_AddNumberToObject(o, "events_lost_write", (double)rep->events_lost_write);
    cJSON_AddNumberToObject(o, "write_errors", (double)rep->write_errors);
    cJSON_AddBoolToObject(o, "disk_full", rep->disk_full);
    {
        char lost[LOSS_TEXT_CAP];
        if (nnp__raw_loss_text(rep, lost, sizeof(lost)))
            cJSON_AddStringToObject(o, "loss", lost);
        else
            cJSON_AddNullToObject(o, "loss");
    }
    cJSON_AddNumberToObject(o, "files_aged_out", rep->data_files_aged);
    cJSON_AddNumberToObject(o, "files_missing", rep->data_files_missing);
    copy_item(o, "options", info, "options");
    cJSON_Delete(info);
    nnp__raw_close(r);
    return o;
}

static const char *text_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "?";
}

static double num_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static void print_text(const cJSON *o)
{
    const cJSON *it, *opts, *kinds;
    char *opt_text;
    printf("== rank %.0f  device %.0f  host %s  pid %.0f  state %s\n   %s\n", num_of(o, "rank"),
           num_of(o, "device"), text_of(o, "host"), num_of(o, "pid"), text_of(o, "state"),
           text_of(o, "dir"));
    printf("time span: %.0f .. %.0f ns (%.6f s), %.0f window(s)\n", num_of(o, "first_ns"),
           num_of(o, "last_ns"), num_of(o, "duration_ns") / NS_PER_S, num_of(o, "windows"));
    if (num_of(o, "steps") > 0)
        printf("steps: %.0f (ids %.0f..%.0f)\n", num_of(o, "steps"), num_of(o, "first_step"),
               num_of(o, "last_step"));
    else
        printf("steps: none\n");
    printf("records: %.0f\n", num_of(o, "records"));
    /* An explicit loop: cppcheck cannot expand cJSON_ArrayForEach over a call. */
    kinds = cJSON_GetObjectItemCaseSensitive(o, "records_per_kind");
    for (it = kinds ? kinds->child : NULL; it; it = it->next)
        printf("  %-14s %.0f\n", it->string, it->valuedouble);
    printf("chunks: %.0f ok, %.0f corrupt, %.0f truncated, %.0f duplicate (skipped); events lost "
           "%.0f; files aged out %.0f, missing %.0f\n",
           num_of(o, "chunks_ok"), num_of(o, "chunks_corrupt"), num_of(o, "chunks_truncated"),
           num_of(o, "chunks_duplicate"), num_of(o, "events_lost"), num_of(o, "files_aged_out"),
           num_of(o, "files_missing"));
    if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "loss")))
        printf("LOST: %s\n", text_of(o, "loss"));
    opts = cJSON_GetObjectItemCaseSensitive(o, "options");
    opt_text = cJSON_PrintUnformatted(opts);
    printf("options: %s\n\n", opt_text ? opt_text : "unknown");
    cJSON_free(opt_text);
}

/* Other tools' data (docs/IMPORT.md): what each importer finds under dir, imported into a
 * model to count what it holds. Returns the number of inputs described, -1 on error. */
static int foreign_info(const char *dir, bool json, cJSON *ranks)
{
    nnp_foreign_input_t *found = calloc(MAX_DIRS, sizeof(*found));
    int described = 0;
    if (!found)
        return -1;
    for (const nnp_importer_t *const *imp = nnp__importers; *imp && described == 0; imp++) {
        int k = (*imp)->find(dir, found, MAX_DIRS);
        for (int i = 0; i < k; i++) {
            nnp_model_t m;
            cJSON *o;
            int64_t t0 = INT64_MAX, t1 = INT64_MIN;
            if (nnp__model_init(&m) != NNP_OK)
                break;
            if ((*imp)->import(found[i].path, &m) != NNP_OK || nnp__model_finish(&m) != NNP_OK) {
                nnp_cli_error(found[i].path, "%s", nnp_last_error());
                nnp__model_fini(&m);
                continue;
            }
            for (size_t r = 0; r < m.ops.t.n; r++) {
                t0 = m.ops.start_ns[r] < t0 ? m.ops.start_ns[r] : t0;
                t1 = m.ops.end_ns[r] > t1 ? m.ops.end_ns[r] : t1;
            }
            for (size_t r = 0; r < m.kernels.t.n; r++) {
                t0 = m.kernels.start_ns[r] < t0 ? m.kernels.start_ns[r] : t0;
                t1 = m.kernels.end_ns[r] > t1 ? m.kernels.end_ns[r] : t1;
            }
            o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "dir", found[i].path);
            cJSON_AddStringToObject(o, "format", (*imp)->name);
            cJSON_AddNumberToObject(o, "rank", m.info.rank_id);
            cJSON_AddNumberToObject(o, "steps", (double)m.steps.t.n);
            cJSON_AddNumberToObject(o, "ops", (double)m.ops.t.n);
            cJSON_AddNumberToObject(o, "kernels", (double)m.kernels.t.n);
            cJSON_AddNumberToObject(o, "communication_ops", (double)m.comms.t.n);
            cJSON_AddNumberToObject(o, "host_rows", (double)m.host.t.n);
            cJSON_AddNumberToObject(o, "pipeline_ops", (double)m.pipe_ops.t.n);
            cJSON_AddNumberToObject(o, "span_us", t1 > t0 ? (double)(t1 - t0) / NS_PER_US : 0.0);
            if (json) {
                cJSON_AddItemToArray(ranks, o);
            } else {
                printf("== %s (%s)\n  rank %d; steps %zu; ops %zu; kernels %zu; "
                       "communication ops %zu; host rows %zu; pipeline ops %zu; span %.3f us\n\n",
                       found[i].path, (*imp)->name, m.info.rank_id, m.steps.t.n, m.ops.t.n,
                       m.kernels.t.n, m.comms.t.n, m.host.t.n, m.pipe_ops.t.n,
                       t1 > t0 ? (double)(t1 - t0) / NS_PER_US : 0.0);
                cJSON_Delete(o);
            }
            nnp__model_fini(&m);
            described++;
        }
    }
    free(found);
    return described;
}

static void help(FILE *f)
{
    fprintf(f, "usage: nnprof info [--json] DIR\n\n"
               "Summarises the raw data under DIR (a PROF_* directory, the profiler/\n"
               "directory holding them, or the output_path above it), per rank: device,\n"
               "host, pid, state, time span, windows, steps, records per kind, chunks\n"
               "ok/corrupt/truncated/duplicate, events lost, files aged out, and the\n"
               "options.\n\n"
               "  --json   one JSON document {\"ranks\":[...]} instead of text\n\n"
               "exit: 0 ok (even with damage, which the output counts), 1 no readable\n"
               "      raw data, 2 usage error\n");
}

int nnp_cmd_info(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    bool json = false;
    char **dirs;
    cJSON *doc, *ranks;
    int opt, n, status = NNP_EXIT_OK, good = 0;

    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (opt == 'j') {
            json = true;
        } else if (opt == 'h') {
            help(stdout);
            return NNP_EXIT_OK;
        } else {
            help(stderr);
            return NNP_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        nnp_cli_error("info", "expected exactly one DIR argument");
        return NNP_EXIT_USAGE;
    }
    dirs = calloc(MAX_DIRS, sizeof(char *));
    if (!dirs)
        return NNP_EXIT_FAIL;
    n = nnp_cli_find_raw_dirs(argv[optind], dirs, MAX_DIRS);
    doc = cJSON_CreateObject();
    ranks = cJSON_AddArrayToObject(doc, "ranks");
    if (n <= 0) {
        /* Not our raw data: maybe another tool's (CANN, MindSpore, torch_npu). */
        int k = foreign_info(argv[optind], json, ranks);
        free(dirs);
        if (k <= 0) {
            char below[SUGGEST_CAP];
            int n_below = nnp__inputs_suggest(argv[optind], below, sizeof(below));
            if (n_below > 0)
                nnp_cli_error(argv[optind], "no profiling data found here, but below it in %s: %s",
                              below, n_below > 1 ? "name one of them" : "name that folder");
            else
                nnp_cli_error(argv[optind], "no profiling data found (expected nnprof raw data, "
                                            "a PROF_* directory holding meta.nnp, or data of "
                                            "CANN msprof, MindSpore or torch_npu)");
            cJSON_Delete(doc);
            return NNP_EXIT_FAIL;
        }
        if (json) {
            char *text = cJSON_PrintUnformatted(doc);
            if (text)
                printf("%s\n", text);
            cJSON_free(text);
        }
        cJSON_Delete(doc);
        return NNP_EXIT_OK;
    }
    for (int i = 0; i < n; i++) {
        cJSON *o = rank_info(dirs[i]);
        if (o) {
            good++;
            if (json)
                cJSON_AddItemToArray(ranks, o);
            else {
                print_text(o);
                cJSON_Delete(o);
            }
        }
        free(dirs[i]);
    }
    free(dirs);
    if (json) {
        char *text = cJSON_PrintUnformatted(doc);
        if (text)
            printf("%s\n", text);
        cJSON_free(text);
    }
    cJSON_Delete(doc);
    if (good < n)
        status = NNP_EXIT_FAIL;
    return status;
}
