/* test_import_cann.c - the CANN msprof importer on the real two-rank corpus (find, task
 * counts, and our overlap against the "Overlap Analysis" events msprof wrote into the same
 * files, to 0.01 us), on damaged copies (truncated, empty, a bad event, no info.json), and
 * end to end through `nnprof analyse -o`. Corpus tests skip when the corpus is absent. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cjson/cJSON.h>

#include "analyse/analyse.h"
#include "read/importers.h"
#include "test_util.h"
#include "util/util.h"

#define CORPUS   NNP_SOURCE_DIR "/../shared/corpus/mindinsight/profiler"
#define PATH_BUF (sizeof(((nnp_foreign_input_t *)0)->path) + 256)
#define CMD_BUF  (3 * PATH_BUF)
#define MAX_IN   8
/* The comparison tolerance the issue asks for: 0.01 us. */
#define TOL_NS 10
/* MANIFEST 1.4: per rank over the 10 iteration files. */
#define N_AI_CORE 1370
#define N_AI_CPU  20
#define N_ITER    10
/* msprof's Overlap Analysis threads (formats.md 1.4): tid 0..3. */
enum { OV_COMPUTING, OV_COMM, OV_NOT_OVERLAPPED, OV_FREE, OV_N };
#define MAX_FILE_BYTES (64u * 1024u * 1024u)

static bool have_corpus(void)
{
    struct stat st;
    return stat(CORPUS, &st) == 0 && S_ISDIR(st.st_mode);
}

#define NEED_CORPUS()                                                                              \
    do {                                                                                           \
        if (!have_corpus()) {                                                                      \
            fprintf(stderr, "corpus not found at %s: skipped\n", CORPUS);                          \
            skip();                                                                                \
        }                                                                                          \
    } while (0)

static int find_inputs(nnp_foreign_input_t *in)
{
    int n = nnp__importer_cann.find(CORPUS, in, MAX_IN);
    assert_int_equal(n, 2);
    if (in[0].rank > in[1].rank) {
        nnp_foreign_input_t t = in[0];
        in[0] = in[1];
        in[1] = t;
    }
    return n;
}

static void test_find(void **state)
{
    nnp_foreign_input_t in[MAX_IN];
    char p[PATH_BUF];
    (void)state;
    NEED_CORPUS();
    find_inputs(in);
    assert_int_equal(in[0].rank, 0);
    assert_int_equal(in[1].rank, 1);
    assert_non_null(strstr(in[0].path, "device_0"));
    assert_non_null(strstr(in[1].path, "device_1"));
    /* The same inputs from the profiler/ parent and from one PROF_ directory. */
    snprintf(p, sizeof(p), "%s/..", CORPUS);
    assert_int_equal(nnp__importer_cann.find(p, in, MAX_IN), 2);
    assert_int_equal(nnp__importer_cann.find(NNP_SOURCE_DIR "/src", in, MAX_IN), 0);
}

static void test_counts(void **state)
{
    nnp_foreign_input_t in[MAX_IN];
    (void)state;
    NEED_CORPUS();
    find_inputs(in);
    for (int r = 0; r < 2; r++) {
        nnp_model_t m;
        size_t n_core = 0, n_cpu = 0;
        assert_int_equal(nnp__model_init(&m), NNP_OK);
        assert_int_equal(nnp__importer_cann.import(in[r].path, &m), NNP_OK);
        assert_int_equal(m.info.rank_id, r);
        assert_int_equal(m.info.device_id, r);
        assert_string_equal(m.info.source_format, "cann-msprof");
        for (size_t i = 0; i < m.kernels.t.n; i++) {
            const char *t = nnp__model_str(&m, m.kernels.type[i]);
            n_core += strcmp(t, "AI_CORE") == 0;
            n_cpu += strcmp(t, "AI_CPU") == 0;
            assert_true(m.kernels.end_ns[i] >= m.kernels.start_ns[i]);
        }
        assert_int_equal(n_core, N_AI_CORE);
        assert_int_equal(n_cpu, N_AI_CPU);
        assert_int_equal(m.kernels.t.n, N_AI_CORE + N_AI_CPU);
        assert_int_equal(m.steps.t.n, N_ITER);
        assert_int_equal(m.fp.t.n, N_ITER);
        assert_int_equal(m.bp.t.n, N_ITER);
        assert_int_equal(m.comms.t.n, N_ITER); /* one AllReduce per iteration */
        for (size_t i = 0; i < m.comms.t.n; i++)
            assert_int_equal(m.comms.kind[i], NNP_COMM_ALLREDUCE);
        /* Exact ns from the decimal text: the first Iteration of rank 0 starts at
         * 56635864652.490005 us in the file, i.e. ...652490 ns. */
        if (r == 0) {
            bool found = false;
            for (size_t i = 0; i < m.steps.t.n; i++)
                if (m.steps.id[i] == 1) {
                    assert_int_equal(m.steps.start_ns[i], 56635864652490LL);
                    assert_int_equal(m.steps.end_ns[i] - m.steps.start_ns[i], 47587810LL);
                    assert_int_equal(m.steps.graph_id[i], 2);
                    found = true;
                }
            assert_true(found);
        }
        nnp__model_fini(&m);
    }
}

/* msprof's own overlap of one file: the summed durations of its Overlap Analysis events
 * per thread (ns, from the decimal text as the importer reads it). */
static void msprof_overlap(const char *path, int64_t sums[OV_N])
{
    char *text;
    size_t len;
    cJSON *j, *e;
    double ov_pid = -1;
    assert_int_equal(nnp__read_file(path, MAX_FILE_BYTES, &text, &len), NNP_OK);
    j = cJSON_Parse(text);
    nnp__free(text);
    assert_non_null(j);
    cJSON_ArrayForEach(e, j)
    {
        const cJSON *a = cJSON_GetObjectItem(e, "args");
        const cJSON *n = cJSON_GetObjectItem(a, "name");
        if (strcmp(cJSON_GetObjectItem(e, "name")->valuestring, "process_name") == 0 &&
            cJSON_IsString(n) && strcmp(n->valuestring, "Overlap Analysis") == 0)
            ov_pid = cJSON_GetObjectItem(e, "pid")->valuedouble;
    }
    assert_true(ov_pid >= 0);
    memset(sums, 0, OV_N * sizeof(*sums));
    cJSON_ArrayForEach(e, j)
    {
        const cJSON *ph = cJSON_GetObjectItem(e, "ph");
        int tid = (int)cJSON_GetObjectItem(e, "tid")->valuedouble;
        char buf[64];
        double dur;
        if (strcmp(ph->valuestring, "X") != 0 ||
            cJSON_GetObjectItem(e, "pid")->valuedouble != ov_pid)
            continue;
        assert_true(tid >= 0 && tid < OV_N);
        /* Shortest round-trip text of the duration, as msprof printed it, to integer ns. */
        dur = cJSON_GetObjectItem(e, "dur")->valuedouble;
        for (int p = 15; p <= 17; p++) {
            snprintf(buf, sizeof(buf), "%.*g", p, dur);
            if (strtod(buf, NULL) == dur)
                break;
        }
        sums[tid] += (int64_t)(strtod(buf, NULL) * 1000.0 + 0.5);
    }
    cJSON_Delete(j);
}

static const nnp_step_row_t *row_of(const nnp_step_trace_t *st, uint64_t id)
{
    for (size_t i = 0; i < st->n; i++)
        if (st->rows[i].step_id == id)
            return &st->rows[i];
    return NULL;
}

/* First start and last end of the merged busy lists inside [lo, hi]. */
static void busy_bounds(const nnp_overlap_t *ov, int64_t lo, int64_t hi, int64_t *first,
                        int64_t *last)
{
    const nnp_interval_list_t *lists[2] = {&ov->computing, &ov->communication};
    *first = INT64_MAX;
    *last = INT64_MIN;
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < lists[k]->n; i++) {
            const nnp_interval_t *v = &lists[k]->v[i];
            if (v->end_ns <= lo || v->start_ns >= hi)
                continue;
            if (v->start_ns < *first)
                *first = v->start_ns;
            if (v->end_ns > *last)
                *last = v->end_ns;
        }
}

#define ASSERT_NEAR(ours, theirs)                                                                  \
    do {                                                                                           \
        int64_t d_ = (int64_t)(ours) - (int64_t)(theirs);                                          \
        if (d_ > TOL_NS || d_ < -TOL_NS)                                                           \
            fail_msg("%s: %lld ns vs msprof %lld ns", #ours, (long long)(ours),                    \
                     (long long)(theirs));                                                         \
    } while (0)

/* Per iteration file N: our step N row (span [start_point, end]: for step 1 its own begin,
 * later the previous Iteration's end) against msprof's sums in msprof_*_N.json. Computing,
 * Communication and Communication(Not Overlapped) compare directly (every task of file N
 * lies inside Iteration N). msprof's Free spans only its first to its last busy instant of
 * the file, so our Free minus the head gap (start_point .. first busy) and the tail gap
 * (last busy .. Iteration end) is compared. The whole-run row is compared with the sums
 * over the files likewise. */
static void test_overlap_vs_msprof(void **state)
{
    nnp_foreign_input_t in[MAX_IN];
    (void)state;
    NEED_CORPUS();
    find_inputs(in);
    for (int r = 0; r < 2; r++) {
        nnp_model_t m;
        nnp_actx_t c;
        nnp_step_trace_t st;
        nnp_overlap_t ov;
        char dir[PATH_BUF], path[2 * PATH_BUF];
        int64_t tot[OV_N] = {0}, head_tail = 0;
        DIR *d;
        struct dirent *de;
        int n_files = 0;
        const nnp_overlap_row_t *all;

        assert_int_equal(nnp__model_init(&m), NNP_OK);
        assert_int_equal(nnp__importer_cann.import(in[r].path, &m), NNP_OK);
        assert_int_equal(nnp__model_finish(&m), NNP_OK);
        memset(&c, 0, sizeof(c));
        c.m = &m;
        assert_int_equal(nnp__step_trace_run(&c, &st), NNP_OK);
        assert_int_equal(st.n, N_ITER);
        assert_int_equal(nnp__overlap_run(&c, &st, &ov), NNP_OK);

        assert_int_equal(nnp__path_join(dir, sizeof(dir), in[r].path, "timeline"), NNP_OK);
        d = opendir(dir);
        assert_non_null(d);
        while ((de = readdir(d)) != NULL) {
            int64_t s[OV_N], first, last;
            const char *us;
            const nnp_step_row_t *row;
            const nnp_overlap_row_t *o;
            uint64_t iter;
            if (strncmp(de->d_name, "msprof_", 7) != 0)
                continue;
            snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
            msprof_overlap(path, s);
            us = strrchr(de->d_name, '_');
            iter = strtoull(us + 1, NULL, 10);
            row = row_of(&st, iter);
            assert_non_null(row);
            o = &ov.rows[row - st.rows];
            assert_int_equal(o->step_id, iter);
            ASSERT_NEAR(o->computing_ns, s[OV_COMPUTING]);
            ASSERT_NEAR(o->communication_ns, s[OV_COMM]);
            ASSERT_NEAR(o->comm_not_overlapped_ns, s[OV_NOT_OVERLAPPED]);
            busy_bounds(&ov, row->start_point_ns, row->end_ns, &first, &last);
            assert_true(first >= row->start_point_ns && last <= row->end_ns);
            ASSERT_NEAR(o->free_ns - (first - row->start_point_ns) - (row->end_ns - last),
                        s[OV_FREE]);
            head_tail += (first - row->start_point_ns) + (row->end_ns - last);
            if (r == 0 && iter == 1)
                fprintf(
                    stderr,
                    "rank 0 iteration 1 (ns): computing %lld/%lld comm %lld/%lld "
                    "not-overlapped %lld/%lld free(excl. head/tail) %lld/%lld\n",
                    (long long)o->computing_ns, (long long)s[OV_COMPUTING],
                    (long long)o->communication_ns, (long long)s[OV_COMM],
                    (long long)o->comm_not_overlapped_ns, (long long)s[OV_NOT_OVERLAPPED],
                    (long long)(o->free_ns - (first - row->start_point_ns) - (row->end_ns - last)),
                    (long long)s[OV_FREE]);
            for (int k = 0; k < OV_N; k++)
                tot[k] += s[k];
            n_files++;
        }
        closedir(d);
        assert_int_equal(n_files, N_ITER);
        all = &ov.rows[ov.n - 1];
        assert_true(all->step_id == UINT64_MAX);
        ASSERT_NEAR(all->computing_ns, tot[OV_COMPUTING]);
        ASSERT_NEAR(all->communication_ns, tot[OV_COMM]);
        ASSERT_NEAR(all->comm_not_overlapped_ns, tot[OV_NOT_OVERLAPPED]);
        ASSERT_NEAR(all->free_ns - head_tail, tot[OV_FREE]);
        fprintf(stderr,
                "rank %d whole run (ns): computing %lld/%lld comm %lld/%lld not-overlapped "
                "%lld/%lld free(excl. head/tail) %lld/%lld\n",
                r, (long long)all->computing_ns, (long long)tot[OV_COMPUTING],
                (long long)all->communication_ns, (long long)tot[OV_COMM],
                (long long)all->comm_not_overlapped_ns, (long long)tot[OV_NOT_OVERLAPPED],
                (long long)(all->free_ns - head_tail), (long long)tot[OV_FREE]);
        nnp__overlap_fini(&ov);
        nnp__step_trace_fini(&st);
        nnp__model_fini(&m);
    }
}

/* ---- damaged inputs ---- */

static char *slurp(const char *path, size_t *len)
{
    char *text = NULL;
    int rc = nnp__read_file(path, MAX_FILE_BYTES, &text, len);
    assert_int_equal(rc, NNP_OK);
    assert_non_null(text);
    return text;
}

static void put(const char *path, const char *a, size_t na, const char *b, size_t nb)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(a, 1, na, f), na);
    if (nb)
        assert_int_equal(fwrite(b, 1, nb, f), nb);
    fclose(f);
}

/* Offset of the first event that starts at or after byte from. */
static size_t event_after(const char *text, size_t from)
{
    const char *p = strstr(text + from, "{\"name\"");
    assert_non_null(p);
    return (size_t)(p - text);
}

static void test_damaged(void **state)
{
    static const char bad[] = "{\"name\": \"Bad\", \"ph\": \"X\", \"pid\": 3, \"tid\": 2, "
                              "\"ts\": \"abc\", \"dur\": 1}, {\"name\": oops}, ";
    char *tmp, dev[PATH_BUF], p[2 * PATH_BUF], src[PATH_BUF];
    char *text;
    size_t len, cut;
    nnp_model_t m;
    const char *log;
    (void)state;
    NEED_CORPUS();
    tmp = nnpt_mkdtemp();
    snprintf(dev, sizeof(dev), "%s/PROF_000001_X", tmp);
    assert_int_equal(nnp__mkdir_p(dev, 0700), NNP_OK);
    snprintf(dev, sizeof(dev), "%s/PROF_000001_X/device_0/timeline", tmp);
    assert_int_equal(nnp__mkdir_p(dev, 0700), NNP_OK);
    snprintf(dev, sizeof(dev), "%s/PROF_000001_X/device_0", tmp);

    /* Iteration 1, cut in the middle of the file. */
    snprintf(src, sizeof(src),
             "%s/PROF_000001_20230818142704322_COJGGGCANRMICFBC/device_0/timeline/"
             "msprof_0_2_1.json",
             CORPUS);
    text = slurp(src, &len);
    snprintf(p, sizeof(p), "%s/timeline/msprof_0_2_1.json", dev);
    put(p, text, len / 2, NULL, 0);
    nnp__free(text);
    /* Iteration 2: empty. */
    snprintf(p, sizeof(p), "%s/timeline/msprof_0_2_2.json", dev);
    put(p, "", 0, NULL, 0);
    /* Iteration 3: a bad key and a bad element before the event after the middle. */
    snprintf(src, sizeof(src),
             "%s/PROF_000001_20230818142704322_COJGGGCANRMICFBC/device_0/timeline/"
             "msprof_0_2_3.json",
             CORPUS);
    text = slurp(src, &len);
    cut = event_after(text, len / 2);
    snprintf(p, sizeof(p), "%s/timeline/msprof_0_2_3.json", dev);
    {
        FILE *f = fopen(p, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(text, 1, cut, f), cut);
        fputs(bad, f);
        fputs(text + cut, f);
        fclose(f);
    }
    nnp__free(text);

    /* find() sees it (rank unknown: no info.json). */
    {
        nnp_foreign_input_t in[MAX_IN];
        assert_int_equal(nnp__importer_cann.find(tmp, in, MAX_IN), 1);
        assert_int_equal(in[0].rank, -1);
    }
    nnpt_log_capture();
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__importer_cann.import(dev, &m), NNP_OK);
    log = nnpt_log_text();
    assert_non_null(strstr(log, "info.json"));
    assert_non_null(strstr(log, "msprof_0_2_1.json: truncated"));
    assert_non_null(strstr(log, "msprof_0_2_2.json: empty file"));
    assert_non_null(strstr(log, "msprof_0_2_3.json: event #"));
    assert_non_null(strstr(log, "('Bad'): key 'ts'"));
    assert_non_null(strstr(log, "msprof_0_2_3.json: 1 events are not valid JSON"));
    nnpt_log_release();
    /* Partial results: iteration 3 whole (minus the bad event), part of iteration 1. */
    assert_int_equal(m.info.rank_id, 0);
    assert_true(m.steps.t.n >= 1);
    assert_true(m.kernels.t.n > N_AI_CORE / N_ITER);
    assert_true(m.kernels.t.n < 2 * (N_AI_CORE + N_AI_CPU) / N_ITER);
    nnp__model_fini(&m);

    /* Nothing readable at all: an error naming the directory, no crash. */
    snprintf(p, sizeof(p), "%s/timeline/msprof_0_2_1.json", dev);
    put(p, "[{\"ph\": \"M\"", strlen("[{\"ph\": \"M\""), NULL, 0);
    snprintf(p, sizeof(p), "%s/timeline/msprof_0_2_3.json", dev);
    put(p, "not json", strlen("not json"), NULL, 0);
    nnpt_log_capture();
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_not_equal(nnp__importer_cann.import(dev, &m), NNP_OK);
    assert_non_null(strstr(nnp_last_error(), "timeline"));
    nnpt_log_release();
    nnp__model_fini(&m);
    nnpt_rm_rf(tmp);
    free(tmp);
}

/* The newer layout, from the format descriptions (no real file in the corpus): string
 * times, process names after the events, a "Group ... Communication" thread, a second
 * slice repeating the first (imported once), and info.json in a device_N sibling. */
static void test_newer_layout(void **state)
{
    static const char events[] =
        "[{\"name\":\"Add\",\"ph\":\"X\",\"pid\":10,\"tid\":5,\"ts\":\"1000.0005\","
        "\"dur\":\"2.5\",\"args\":{\"Task Type\":\"AI_VECTOR_CORE\",\"Stream Id\":5}},"
        "{\"name\":\"Wait\",\"ph\":\"X\",\"pid\":10,\"tid\":5,\"ts\":\"1003\",\"dur\":\"1\","
        "\"args\":{\"Task Type\":\"NOTIFY_WAIT\"}},"
        "{\"name\":\"hcom_allGather__1_1\",\"ph\":\"X\",\"pid\":20,\"tid\":7,"
        "\"ts\":\"1004.25\",\"dur\":3},"
        "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":10,\"args\":{\"name\":\"Ascend "
        "Hardware\"}},"
        "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":20,\"args\":{\"name\":\"HCCL\"}},"
        "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":20,\"tid\":7,\"args\":{\"name\":"
        "\"Group hccl_world_group Communication\"}}]";
    static const char info[] = "{\"rank_id\": 5, \"devices\": \"3\"}";
    char *tmp = nnpt_mkdtemp(), d[PATH_BUF], p[2 * PATH_BUF];
    nnp_foreign_input_t in[MAX_IN];
    nnp_model_t m;
    (void)state;
    snprintf(d, sizeof(d), "%s/PROF_2/mindstudio_profiler_output", tmp);
    assert_int_equal(nnp__mkdir_p(d, 0700), NNP_OK);
    snprintf(p, sizeof(p), "%s/msprof_20240101000000.json", d);
    put(p, events, strlen(events), NULL, 0);
    snprintf(p, sizeof(p), "%s/msprof_slice_1_20240101000000.json", d);
    put(p, events, strlen(events), NULL, 0);
    snprintf(d, sizeof(d), "%s/PROF_2/device_3", tmp);
    assert_int_equal(nnp__mkdir_p(d, 0700), NNP_OK);
    snprintf(p, sizeof(p), "%s/info.json.3", d);
    put(p, info, strlen(info), NULL, 0);

    assert_int_equal(nnp__importer_cann.find(tmp, in, MAX_IN), 1);
    assert_int_equal(in[0].rank, 5);
    assert_non_null(strstr(in[0].path, "mindstudio_profiler_output"));
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__importer_cann.import(in[0].path, &m), NNP_OK);
    assert_int_equal(m.info.rank_id, 5);
    assert_int_equal(m.info.device_id, 3);
    assert_int_equal(m.kernels.t.n, 1); /* NOTIFY_WAIT skipped, the slice's copy too */
    assert_int_equal(m.kernels.start_ns[0], 1000001); /* 1000000.5 ns rounds half up */
    assert_int_equal(m.kernels.end_ns[0], 1000001 + 2500);
    assert_int_equal(m.kernels.stream_id[0], 5);
    assert_int_equal(m.kernels.device_id[0], 3);
    assert_string_equal(nnp__model_str(&m, m.kernels.type[0]), "AI_VECTOR_CORE");
    assert_int_equal(m.comms.t.n, 1);
    assert_int_equal(m.comms.kind[0], NNP_COMM_ALLGATHER);
    assert_int_equal(m.comms.start_ns[0], 1004250);
    assert_int_equal(m.comms.end_ns[0], 1007250);
    assert_string_equal(nnp__model_str(&m, m.comms.group[0]),
                        "Group hccl_world_group Communication");
    nnp__model_fini(&m);
    nnpt_rm_rf(tmp);
    free(tmp);
}

/* ---- end to end ---- */

static bool find_file(const char *dir, const char *name)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    bool found = false;
    if (!d)
        return false;
    while (!found && (e = readdir(d)) != NULL) {
        char p[2 * PATH_BUF];
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (strcmp(e->d_name, name) == 0)
            found = true;
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        if (!found && stat(p, &st) == 0 && S_ISDIR(st.st_mode))
            found = find_file(p, name);
    }
    closedir(d);
    return found;
}

static void test_cli(void **state)
{
    char *out, cmd[CMD_BUF];
    int rc;
    (void)state;
    NEED_CORPUS();
    out = nnpt_mkdtemp();
    snprintf(cmd, sizeof(cmd), "%s/nnprof analyse --quiet -o %s %s 2>/dev/null", NNP_BINARY_DIR,
             out, CORPUS);
    rc = system(cmd);
    assert_true(WIFEXITED(rc));
    assert_int_equal(WEXITSTATUS(rc), 0);
    assert_true(find_file(out, "op_statistic_0.csv"));
    assert_true(find_file(out, "op_statistic_1.csv"));
    nnpt_rm_rf(out);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_overlap_vs_msprof),
        cmocka_unit_test(test_damaged),
        cmocka_unit_test(test_newer_layout),
        cmocka_unit_test(test_cli),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
