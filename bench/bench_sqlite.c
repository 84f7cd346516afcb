/* bench_sqlite.c - SQLite export speed (issue #6, target >= 1 M rows/s) on a synthetic
 * run of N events (default 10 M: steps of OPS_PER_STEP ops, each with a kernel). Prints
 * the export's rows/s and, as the baseline measured in the same run, the import of the
 * same raw data into the model alone, so the insert rate is export minus import.
 * Usage: bench_sqlite [EVENTS] [WORK_DIR]. Prints figures; never fails on targets. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "export/sqlite.h"
#include "model/model.h"
#include "nnprof/nnprof.h"
#include "read/raw_import.h"

#define DEFAULT_EVENTS 10000000ull
/* One step = a step pair + OPS_PER_STEP ops with one kernel each. */
#define OPS_PER_STEP        40
#define OP_TYPES            16
#define OP_NS               2000
#define TARGET_ROWS_PER_SEC 1e6
#define PATH_CAP            4096

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int generate(const char *out, uint64_t n_events)
{
    nnp_options_t o;
    nnp_session_t *s;
    nnp_str_t types[OP_TYPES];
    uint64_t steps = n_events / (2 + 2 * OPS_PER_STEP), t = 1000000, corr = 1;
    char name[64];
    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", out);
    o.sample_interval_ms = 0;
    /* Keep every event: block instead of dropping, big buffers and files. */
    o.full_policy = NNP_FULL_BLOCK;
    o.buffer_size_kb = 65536;
    o.raw_file_bytes = 1ull << 30;
    if (nnp_session_create(&o, &s) != NNP_OK)
        return 1;
    for (int i = 0; i < OP_TYPES; i++) {
        snprintf(name, sizeof(name), "Type%d", i);
        types[i] = nnp_intern(name);
    }
    for (uint64_t k = 0; k < steps; k++) {
        nnp_step_begin_at(k, 0, t);
        for (int j = 0; j < OPS_PER_STEP; j++) {
            nnp_op_t op = {0};
            nnp_kernel_t kn = {0};
            op.type = op.name = types[j % OP_TYPES];
            op.correlation_id = kn.correlation_id = corr++;
            kn.name = op.name;
            nnp_op_at(&op, t + 10, t + OP_NS);
            nnp_kernel_at(&kn, t + 100, t + OP_NS - 100);
            t += OP_NS;
        }
        nnp_step_end_at(k, 0, t + 10);
        t += 100;
    }
    return nnp_session_destroy(s) == NNP_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : DEFAULT_EVENTS, rows = 0;
    char work[PATH_CAP], db[PATH_CAP + 32];
    double t0, t_import, t_export;
    nnp_model_t m;
    int rc;
    snprintf(work, sizeof(work), "%s", argc > 2 ? argv[2] : "/tmp/nnprof-bench-sqlite");
    snprintf(db, sizeof(db), "%s/bench.sqlite", work);
    printf("recording %llu events into %s ...\n", (unsigned long long)n, work);
    if (generate(work, n) != 0) {
        fprintf(stderr, "bench_sqlite: recording failed: %s\n", nnp_last_error());
        return 1;
    }
    /* Baseline: the import alone (the export imports too). */
    t0 = now_s();
    rc = nnp__model_init(&m);
    if (rc == NNP_OK) {
        char raw[PATH_CAP + 64];
        FILE *p;
        snprintf(raw, sizeof(raw), "ls -d %s/profiler/PROF_* | head -1", work);
        p = popen(raw, "r");
        if (p && fgets(raw, sizeof(raw), p))
            raw[strcspn(raw, "\n")] = '\0';
        if (p)
            pclose(p);
        rc = nnp__import_raw(raw, &m);
        nnp__model_fini(&m);
    }
    t_import = now_s() - t0;
    t0 = now_s();
    rc = rc == NNP_OK ? nnp__export_sqlite(work, db, &rows) : rc;
    t_export = now_s() - t0;
    if (rc != NNP_OK) {
        fprintf(stderr, "bench_sqlite: %s\n", nnp_last_error());
        return 1;
    }
    printf("import alone:   %.3f s\n", t_import);
    printf("export:         %.3f s, %llu rows, %.2f M rows/s (target %.1f M)\n", t_export,
           (unsigned long long)rows, (double)rows / t_export / 1e6, TARGET_ROWS_PER_SEC / 1e6);
    if (t_export > t_import)
        printf("insert only:    %.2f M rows/s (export minus import)\n",
               (double)rows / (t_export - t_import) / 1e6);
    return 0;
}
