/* test_demo.c - the training demo end to end (issue #5): demo_train runs 2 epochs under the
 * profiler, then `nnprof analyse` / `nnprof dump` must agree with the demo's structure (op
 * counts = steps x ops per step, exactly the steps run, loss fell, pipeline/memory/host
 * records present). A 2-rank run leaves a raw directory per rank with one all-reduce per
 * step and equal weights on both ranks. Runs the binaries in NNP_BINARY_DIR. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "test_util.h"

#define DEMO NNP_BINARY_DIR "/examples/demo_train"
#define CLI  NNP_BINARY_DIR "/nnprof"

/* The run: 512 samples in batches of 16 = 32 steps per epoch per rank. */
#define SAMPLES       512
#define BATCH         16
#define EPOCHS        2
#define STEPS         (SAMPLES / BATCH * EPOCHS)
#define OPS_PER_STEP  28
#define PARAM_TENSORS 6
#define PARAM_FLOATS  (64 * 128 + 128 + 128 * 64 + 64 + 64 * 10 + 10)
/* Tensors allocated per step: GetNext's 2 outputs, 10 more in the forward pass, 11 in the
 * backward pass (demo_model.c frees each when its last reader is done). */
#define ALLOCS_PER_STEP 23
/* Host ranges per step: fetch, forward, backward, update and the level-0 allocator stats
 * on the training thread, plus one per batch in BatchOp and in DeviceQueueOp; a
 * multi-rank run adds the all-reduce. */
#define RANGES_PER_STEP 7
/* Connectors sampled once per batch: GeneratorOp, MapOp and BatchOp outputs. */
#define QUEUES_PER_STEP 3
#define PIPELINE_OPS    4

#define OUT_CAP   (1 << 20)
#define CMD_CAP   9000
#define MAX_NAMES 64

/* The demo's ops per step, by type: an independent statement of demo_model.c's op table. */
static const struct {
    const char *type;
    int per_step;
} expected_ops[] = {
    {"GetNext", 1},
    {"MatMul", 8},
    {"BiasAdd", 3},
    {"ReLU", 2},
    {"Softmax", 1},
    {"CrossEntropy", 1},
    {"SoftmaxCrossEntropyGrad", 1},
    {"BiasAddGrad", 3},
    {"ReluGrad", 2},
    {"ApplyGradientDescent", 6},
};

typedef struct tally {
    char name[MAX_NAMES][96];
    long n[MAX_NAMES];
    int count;
} tally_t;

static void tally_add(tally_t *t, const char *name, long n)
{
    for (int i = 0; i < t->count; i++) {
        if (strcmp(t->name[i], name) == 0) {
            t->n[i] += n;
            return;
        }
    }
    assert_true(t->count < MAX_NAMES);
    snprintf(t->name[t->count], sizeof(t->name[0]), "%s", name);
    t->n[t->count++] = n;
}

static long tally_get(const tally_t *t, const char *name)
{
    for (int i = 0; i < t->count; i++)
        if (strcmp(t->name[i], name) == 0)
            return t->n[i];
    return 0;
}

/* Runs cmd through the shell; returns its stdout (caller frees) and its exit status. */
static char *run_capture(const char *cmd, int *status)
{
    FILE *p = popen(cmd, "r");
    char *out = calloc(1, OUT_CAP);
    size_t len = 0, n;
    int st;
    assert_non_null(p);
    assert_non_null(out);
    while ((n = fread(out + len, 1, OUT_CAP - 1 - len, p)) > 0)
        len += n;
    st = pclose(p);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return out;
}

/* The number after the first `key` in text, or fails. */
static double number_after(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    if (!p)
        fail_msg("'%s' not in the demo's output:\n%s", key, text);
    return strtod(p + strlen(key), NULL);
}

/* Copies the rest of the line after `key` into out. */
static void line_after(const char *text, const char *key, char *out, size_t cap)
{
    const char *p = strstr(text, key);
    size_t n;
    if (!p)
        fail_msg("'%s' not in the demo's output:\n%s", key, text);
    p += strlen(key);
    n = strcspn(p, "\n");
    assert_true(n < cap);
    memcpy(out, p, n);
    out[n] = '\0';
}

/* "loss A -> B (...); epoch mean C -> D": the loss fell, per step and per epoch. The
 * demo's first line is its banner, so the summary line always follows a newline. */
static void assert_loss_fell(const char *out, const char *prefix)
{
    char key[64];
    const char *p;
    double first, last, first_mean, last_mean;
    /* At the start of a line: epoch lines hold "mean loss" too. */
    snprintf(key, sizeof(key), "\n%sloss ", prefix);
    p = strstr(out, key);
    assert_non_null(p);
    assert_int_equal(sscanf(p + strlen(key), "%lf -> %lf", &first, &last), 2);
    p = strstr(p, "epoch mean ");
    assert_non_null(p);
    assert_int_equal(sscanf(p, "epoch mean %lf -> %lf", &first_mean, &last_mean), 2);
    assert_true(last < first);
    /* Without learning the means would stay near ln(10) = 2.30 within a few percent. */
    assert_true(last_mean < first_mean * 0.9);
}

/* Reads "name,core,count,..." rows of an op_statistic / op_detail CSV into a tally. */
static void read_counts(const char *path, int count_column, tally_t *t)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    memset(t, 0, sizeof(*t));
    assert_non_null(f);
    assert_non_null(fgets(line, sizeof(line), f)); /* header */
    while (fgets(line, sizeof(line), f)) {
        char *field = line, *comma;
        char name[96];
        comma = strchr(field, ',');
        assert_non_null(comma);
        snprintf(name, sizeof(name), "%.*s", (int)(comma - field), field);
        for (int c = 0; c < count_column; c++) {
            field = comma + 1;
            comma = strchr(field, ',');
            assert_non_null(comma);
        }
        tally_add(t, name, strtol(field, NULL, 10));
    }
    fclose(f);
}

typedef struct dump_result {
    tally_t kinds, op_types;
    long comm_allreduce_world, comm_bytes_ok, events_lost;
} dump_result_t;

/* `nnprof dump DIR`: records by kind, op records by type, and the comm records' details. */
static void dump_counts(const char *dir, dump_result_t *d)
{
    char cmd[CMD_CAP];
    char *line = NULL;
    size_t cap = 0;
    FILE *p;
    int st;
    memset(d, 0, sizeof(*d));
    snprintf(cmd, sizeof(cmd), "%s dump '%s'", CLI, dir);
    /* Streamed line by line: a run's dump is megabytes of JSON lines. */
    p = popen(cmd, "r");
    assert_non_null(p);
    while (getline(&line, &cap, p) > 0) {
        cJSON *j = cJSON_Parse(line);
        const char *kind;
        assert_non_null(j);
        kind = cJSON_GetObjectItem(j, "kind")->valuestring;
        tally_add(&d->kinds, kind, 1);
        if (strcmp(kind, "summary") == 0)
            d->events_lost += (long)cJSON_GetObjectItem(j, "events_lost")->valuedouble;
        if (strcmp(kind, "op") == 0)
            tally_add(&d->op_types, cJSON_GetObjectItem(j, "type")->valuestring, 1);
        if (strcmp(kind, "comm") == 0) {
            d->comm_allreduce_world +=
                strcmp(cJSON_GetObjectItem(j, "comm_kind")->valuestring, "allreduce") == 0 &&
                strcmp(cJSON_GetObjectItem(j, "group")->valuestring, "world") == 0;
            d->comm_bytes_ok +=
                cJSON_GetObjectItem(j, "bytes")->valuedouble == (double)PARAM_FLOATS * 4;
        }
        cJSON_Delete(j);
    }
    free(line);
    st = pclose(p);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* The step trace of `rank` holds exactly steps 1..steps, each with fp and bp known. */
static void assert_step_trace(const char *out, int rank, int steps)
{
    char path[CMD_CAP], line[1024];
    FILE *f;
    int expect = 1, columns = 0;
    snprintf(path, sizeof(path), "%s/profiler/step_trace_raw_%d_detail_time.csv", out, rank);
    f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(line, sizeof(line), f));
    assert_non_null(strstr(line, "step_num,start_point,end_point,total,fp_point,bp_point"));
    /* Runs with communication add columns per communication op name. */
    for (char *c = line; *c; c++)
        columns += *c == ',';
    while (fgets(line, sizeof(line), f)) {
        int commas = 0;
        if (line[0] == '-')
            break; /* the averages row ends the steps */
        assert_int_equal(strtol(line, NULL, 10), expect);
        /* No empty cell: fp and bp were found in every step. */
        assert_null(strstr(line, ",,"));
        for (char *c = line; *c; c++)
            commas += *c == ',';
        assert_int_equal(commas, columns);
        expect++;
    }
    fclose(f);
    assert_int_equal(expect - 1, steps);

    snprintf(path, sizeof(path), "%s/profiler/step_trace_point_info_%d.json", out, rank);
    {
        FILE *pf = fopen(path, "r");
        char text[1024] = "";
        cJSON *j;
        assert_non_null(pf);
        assert_true(fread(text, 1, sizeof(text) - 1, pf) > 0);
        fclose(pf);
        j = cJSON_Parse(text);
        assert_non_null(j);
        /* fp: the first op after GetNext; bp: the last gradient op (before the all-reduce). */
        assert_string_equal(cJSON_GetObjectItem(j, "fp_start")->valuestring,
                            "Default/network/fc1/MatMul-op1");
        assert_string_equal(cJSON_GetObjectItem(j, "bp_end")->valuestring,
                            "Gradients/Default/network/fc1/gradMatMul/MatMul-op21");
        cJSON_Delete(j);
    }
}

/* op_statistic and op_detail of `rank` against the expected table and the raw records. */
static void assert_op_stats(const char *out, int rank, int steps, const dump_result_t *d)
{
    char path[CMD_CAP];
    tally_t stat, detail;
    int sum = 0;

    snprintf(path, sizeof(path), "%s/profiler/op_statistic_%d.csv", out, rank);
    read_counts(path, 2, &stat);
    assert_int_equal(stat.count, (int)(sizeof(expected_ops) / sizeof(expected_ops[0])));
    for (size_t i = 0; i < sizeof(expected_ops) / sizeof(expected_ops[0]); i++) {
        long want = (long)expected_ops[i].per_step * steps;
        assert_int_equal(tally_get(&stat, expected_ops[i].type), want);
        assert_int_equal(tally_get(&d->op_types, expected_ops[i].type), want);
        sum += expected_ops[i].per_step;
    }
    assert_int_equal(sum, OPS_PER_STEP);
    assert_int_equal(d->op_types.count, stat.count);

    /* Every op by full name ran exactly once per step. */
    snprintf(path, sizeof(path), "%s/profiler/op_detail_%d.csv", out, rank);
    read_counts(path, 3, &detail);
    assert_int_equal(detail.count, OPS_PER_STEP);
    for (int i = 0; i < detail.count; i++)
        assert_int_equal(detail.n[i], steps);
}

static void run_analyse(const char *out)
{
    char cmd[CMD_CAP];
    snprintf(cmd, sizeof(cmd), "%s analyse --quiet '%s' >/dev/null", CLI, out);
    assert_int_equal(system(cmd), 0);
}

static void test_demo_two_epochs_profiled(void **state)
{
    char *out_dir = nnpt_mkdtemp();
    char cmd[CMD_CAP], raw[CMD_CAP];
    int status;
    char *out;
    dump_result_t d;
    (void)state;

    snprintf(cmd, sizeof(cmd),
             "%s --epochs %d --samples %d --batch %d --workers 2 --output '%s' --seed 7", DEMO,
             EPOCHS, SAMPLES, BATCH, out_dir);
    out = run_capture(cmd, &status);
    assert_int_equal(status, 0);
    assert_non_null(strstr(out, "epoch 2/2: mean loss"));
    assert_loss_fell(out, "");
    line_after(out, "raw data: ", raw, sizeof(raw));
    free(out);

    dump_counts(raw, &d);
    assert_int_equal(tally_get(&d.kinds, "step_begin"), STEPS);
    assert_int_equal(tally_get(&d.kinds, "step_end"), STEPS);
    assert_int_equal(tally_get(&d.kinds, "epoch_begin"), EPOCHS);
    assert_int_equal(tally_get(&d.kinds, "epoch_end"), EPOCHS);
    assert_int_equal(tally_get(&d.kinds, "op"), (long)STEPS * OPS_PER_STEP);
    assert_int_equal(tally_get(&d.kinds, "mem_alloc"),
                     (long)STEPS * ALLOCS_PER_STEP + PARAM_TENSORS);
    assert_int_equal(tally_get(&d.kinds, "mem_free"),
                     (long)STEPS * ALLOCS_PER_STEP + PARAM_TENSORS);
    assert_int_equal(tally_get(&d.kinds, "range_begin"), (long)STEPS * RANGES_PER_STEP);
    assert_int_equal(tally_get(&d.kinds, "range_end"), (long)STEPS * RANGES_PER_STEP);
    assert_int_equal(tally_get(&d.kinds, "pipeline_op"), PIPELINE_OPS);
    assert_int_equal(tally_get(&d.kinds, "queue"), (long)STEPS * QUEUES_PER_STEP);
    assert_int_equal(tally_get(&d.kinds, "device_queue"), STEPS);
    assert_int_equal(tally_get(&d.kinds, "comm"), 0);
    assert_int_equal(d.events_lost, 0);

    run_analyse(out_dir);
    assert_op_stats(out_dir, 0, STEPS, &d);
    assert_step_trace(out_dir, 0, STEPS);
    nnpt_rm_rf(out_dir);
    free(out_dir);
}

/* --ranks 2: two processes, two raw directories, one all-reduce per step on each, and the
 * same weights at the end (the all-reduce really averaged the gradients). */
static void test_demo_two_ranks(void **state)
{
    char *out_dir = nnpt_mkdtemp();
    char cmd[CMD_CAP], raw[2][CMD_CAP], key[64];
    int status, steps = SAMPLES / 2 / BATCH * EPOCHS;
    double checksum[2];
    char *out;
    (void)state;

    snprintf(cmd, sizeof(cmd),
             "NNPROF_LOG_LEVEL=warn %s --ranks 2 --epochs %d --samples %d --batch %d "
             "--workers 1 --output '%s' 2>&1",
             DEMO, EPOCHS, SAMPLES, BATCH, out_dir);
    out = run_capture(cmd, &status);
    assert_int_equal(status, 0);
    /* A fresh output folder holds no old data: neither rank may warn that it does because
     * it saw the other's raw directory (issue 10). */
    assert_null(strstr(out, "The target dir already exists"));
    for (int r = 0; r < 2; r++) {
        snprintf(key, sizeof(key), "[rank %d] ", r);
        assert_loss_fell(out, key);
        snprintf(key, sizeof(key), "[rank %d] raw data: ", r);
        line_after(out, key, raw[r], sizeof(raw[r]));
        snprintf(key, sizeof(key), "[rank %d] weights checksum ", r);
        checksum[r] = number_after(out, key);
    }
    free(out);
    assert_string_not_equal(raw[0], raw[1]);
    assert_true(checksum[0] == checksum[1]);

    run_analyse(out_dir);
    for (int r = 0; r < 2; r++) {
        dump_result_t d;
        dump_counts(raw[r], &d);
        assert_int_equal(tally_get(&d.kinds, "step_begin"), steps);
        assert_int_equal(tally_get(&d.kinds, "comm"), steps);
        assert_int_equal(d.comm_allreduce_world, steps);
        assert_int_equal(d.comm_bytes_ok, steps);
        assert_int_equal(tally_get(&d.kinds, "range_begin"), (long)steps * (RANGES_PER_STEP + 1));
        assert_int_equal(tally_get(&d.kinds, "op"), (long)steps * OPS_PER_STEP);
        assert_int_equal(d.events_lost, 0);
        /* Each rank's outputs carry its own rank number. */
        assert_op_stats(out_dir, r, steps, &d);
        assert_step_trace(out_dir, r, steps);
    }
    nnpt_rm_rf(out_dir);
    free(out_dir);
}

/* --no-profile writes nothing; --profile-level ops records ops and steps only; --ab-block
 * records only the open blocks; bad flags are usage errors. */
static void test_demo_levels_and_flags(void **state)
{
    char *out_dir = nnpt_mkdtemp();
    char cmd[CMD_CAP], path[CMD_CAP], raw[CMD_CAP];
    struct stat st;
    int status;
    char *out;
    dump_result_t d;
    (void)state;

    snprintf(cmd, sizeof(cmd), "%s --no-profile --steps 10 --samples 256 --output '%s'", DEMO,
             out_dir);
    out = run_capture(cmd, &status);
    assert_int_equal(status, 0);
    assert_null(strstr(out, "raw data: "));
    free(out);
    snprintf(path, sizeof(path), "%s/profiler", out_dir);
    assert_int_not_equal(stat(path, &st), 0);

    snprintf(cmd, sizeof(cmd),
             "%s --profile-level ops --steps 10 --samples 256 --batch 16 --output '%s'", DEMO,
             out_dir);
    out = run_capture(cmd, &status);
    assert_int_equal(status, 0);
    line_after(out, "raw data: ", raw, sizeof(raw));
    free(out);
    dump_counts(raw, &d);
    assert_int_equal(tally_get(&d.kinds, "op"), 10 * OPS_PER_STEP);
    assert_int_equal(tally_get(&d.kinds, "step_begin"), 10);
    assert_int_equal(tally_get(&d.kinds, "mem_alloc"), 0);
    assert_int_equal(tally_get(&d.kinds, "range_begin"), 0);
    assert_int_equal(tally_get(&d.kinds, "queue"), 0);
    assert_int_equal(tally_get(&d.kinds, "sys_cpu"), 0);

    /* --ab-block 4 over 16 steps: blocks 1 and 3 (steps 5-8, 13-16) are profiled. */
    snprintf(cmd, sizeof(cmd),
             "%s --profile-level ops --ab-block 4 --steps 16 --samples 256 --batch 16 "
             "--output '%s'",
             DEMO, out_dir);
    out = run_capture(cmd, &status);
    assert_int_equal(status, 0);
    assert_non_null(strstr(out, "A/B blocks of 4 steps: "));
    assert_non_null(strstr(out, "profiled (8 steps)"));
    line_after(out, "raw data: ", raw, sizeof(raw));
    free(out);
    dump_counts(raw, &d);
    assert_int_equal(tally_get(&d.kinds, "op"), 8 * OPS_PER_STEP);
    assert_int_equal(tally_get(&d.kinds, "step_begin"), 8);

    snprintf(cmd, sizeof(cmd), "%s --batch 0 2>/dev/null", DEMO);
    free(run_capture(cmd, &status));
    assert_int_equal(status, 2);
    snprintf(cmd, sizeof(cmd), "%s --bogus 2>/dev/null", DEMO);
    free(run_capture(cmd, &status));
    assert_int_equal(status, 2);
    snprintf(cmd, sizeof(cmd), "%s --samples 8 --batch 16 2>/dev/null", DEMO);
    free(run_capture(cmd, &status));
    assert_int_equal(status, 2);
    nnpt_rm_rf(out_dir);
    free(out_dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_demo_two_epochs_profiled),
        cmocka_unit_test(test_demo_two_ranks),
        cmocka_unit_test(test_demo_levels_and_flags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
