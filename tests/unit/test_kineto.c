/* test_kineto.c - the PyTorch-facing outputs of a recorded run, end to end through the
 * public API (record -> raw files -> reader -> model): nnp_op_table (key_averages' self
 * times, same-name merge, memory per op, step filter, steps as "ProfilerStep*") and
 * nnp_export_kineto (Kineto's fields, autograd flows, steps, memory, collectives, metadata). Every
 * time is given with the *_at calls, so the expected figures are exact; they are worked out beside
 * the recording (T is the run's base time in ns). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "model/model.h"
#include "read/importers.h"
#include "test_util.h"
#include "util/util.h"

#define MAX_FILE (4u << 20)
/* libkineto's ChromeTraceBaseTime interval (7,889,238 s) in ns. */
#define KINETO_INTERVAL_NS (7889238LL * 1000000000LL)
/* The recording is this recent (wall clock) when the test reads it back. */
#define RECENT_NS (600LL * 1000000000LL)

typedef nnpt_raw_fx_t fixture_t;

/* Python stacks as the shim records them: frames innermost first, '\n' between. */
#define STACK_FWD "model.py(12): forward\ntrain.py(30): step\ntrain.py(40): <module>"
#define STACK_SUM "train.py(31): step\ntrain.py(40): <module>"

static nnp_op_t op(const char *name, const char *shapes, const char *dtypes)
{
    nnp_op_t o;
    memset(&o, 0, sizeof(o));
    o.name = nnp_intern(name);
    o.type = o.name;
    o.input_shapes = nnp_intern(shapes);
    o.input_dtypes = nnp_intern(dtypes);
    return o;
}

/* The run (times relative to T, in ns):
 *   step 1 [0, 10000], step 2 [10000, 20000]
 *   range "train" [500, 9000]                       self 8500 - 4000 - 1000 = 3500
 *     aten::linear [1000, 5000] seq 7 forward       self 4000 - 2500 = 1500
 *       aten::addmm [1500, 4000] seq 7 forward, 128 FLOPs      self 2500
 *         alloc 0x1000 256 B at 2000, free at 3000  (addmm: +256 -256)
 *       alloc 0x2000 512 B at 4500                   (linear's own)
 *     aten::sum [5000, 6000] with its only child aten::sum [5100, 5900]: counted once
 *   AddmmBackward0 [11000, 12000] backward of seq 7 on thread 1: linked to aten::addmm
 *   stacks (with_stack): linear and addmm STACK_FWD, sum STACK_SUM, the backward none
 *   gloo:all_reduce [12000, 15000] 4000 B, group default_pg(ranks=0-1)            */
static int setup(void **state)
{
    fixture_t *fx = calloc(1, sizeof(*fx));
    nnp_options_t o;
    nnp_session_t *s;
    nnp_host_tag_t train;
    nnp_tensor_t t;
    nnp_comm_t c;
    nnp_op_t linear, addmm, sum, bwd;
    uint64_t T;
    if (!fx)
        return -1;
    nnp_options_init(&o);
    o.profile_memory = true;
    o.profile_communication = true;
    o.sample_interval_ms = 0;
    o.rank_id = 1;
    o.rank_size = 2;
    if (nnpt_raw_fx_session(fx, &o, &s) != NNP_OK)
        return -1;
    T = nnp_clock_ns();

    nnp_step_begin_at(1, 0, T);
    nnp_step_end_at(1, 0, T + 10000);
    nnp_step_begin_at(2, 0, T + 10000);
    nnp_step_end_at(2, 0, T + 20000);

    memset(&train, 0, sizeof(train));
    train.module = nnp_intern("torch");
    train.event = nnp_intern("train");
    train.stage = nnp_intern("Run");
    train.level = 1;
    nnp_range_begin_at(&train, T + 500);
    nnp_range_end_at(&train, T + 9000);

    linear = op("aten::linear", "4,8;2,8;2", "float;float;float");
    linear.has_sequence = true;
    linear.sequence_nr = 7;
    linear.seq_thread = 1;
    linear.stack = nnp_intern(STACK_FWD);
    nnp_op_at(&linear, T + 1000, T + 5000);
    addmm = op("aten::addmm", "2;4,8;8,2;;", "float;float;float;Scalar;Scalar");
    addmm.flops_matrix = 128;
    addmm.has_sequence = true;
    addmm.sequence_nr = 7;
    addmm.seq_thread = 1;
    addmm.stack = linear.stack;
    nnp_op_at(&addmm, T + 1500, T + 4000);
    sum = op("aten::sum", NULL, NULL);
    sum.stack = nnp_intern(STACK_SUM);
    nnp_op_at(&sum, T + 5000, T + 6000);
    nnp_op_at(&sum, T + 5100, T + 5900);
    bwd = op("AddmmBackward0", NULL, NULL);
    bwd.has_sequence = true;
    bwd.is_backward = true;
    bwd.sequence_nr = 7;
    bwd.seq_thread = 1;
    nnp_op_at(&bwd, T + 11000, T + 12000);

    memset(&t, 0, sizeof(t));
    t.address = 0x1000;
    t.size_bytes = 256;
    nnp_mem_alloc_at(&t, T + 2000);
    nnp_mem_free_at(0x1000, 256, T + 3000);
    t.address = 0x2000;
    t.size_bytes = 512;
    nnp_mem_alloc_at(&t, T + 4500);

    memset(&c, 0, sizeof(c));
    c.name = nnp_intern("gloo:all_reduce");
    c.kind = NNP_COMM_ALLREDUCE;
    c.group = nnp_intern("default_pg(ranks=0-1)");
    c.size_bytes = 4000;
    c.peer = -1;
    nnp_comm_at(&c, T + 12000, T + 15000);
    if (nnp_session_destroy(s) != NNP_OK)
        return -1;
    *state = fx;
    return 0;
}

static cJSON *table(const fixture_t *fx, const nnp_analyse_options_t *o, bool by_shapes)
{
    return nnpt_op_table(fx->raw, o, by_shapes ? NNP_OP_TABLE_BY_SHAPES : 0);
}

static void expect_row(const cJSON *row, const char *name, const char *kind, int count, int total,
                       int self)
{
    assert_string_equal(cJSON_GetObjectItem(row, "name")->valuestring, name);
    assert_string_equal(cJSON_GetObjectItem(row, "kind")->valuestring, kind);
    assert_int_equal(cJSON_GetObjectItem(row, "count")->valueint, count);
    assert_int_equal(cJSON_GetObjectItem(row, "total_ns")->valueint, total);
    assert_int_equal(cJSON_GetObjectItem(row, "self_ns")->valueint, self);
}

static int field(const cJSON *row, const char *key)
{
    return cJSON_GetObjectItem(row, key)->valueint;
}

/* Sorted by self time; ties by name ("AddmmBackward0" < "aten::sum": 'A' < 'a'). */
static void test_op_table_self_times(void **state)
{
    fixture_t *fx = *state;
    cJSON *t = table(fx, NULL, false);
    assert_int_equal(cJSON_GetArraySize(t), 6);
    expect_row(cJSON_GetArrayItem(t, 0), "train", "range", 1, 8500, 3500);
    expect_row(cJSON_GetArrayItem(t, 1), "gloo:all_reduce", "comm", 1, 3000, 3000);
    expect_row(cJSON_GetArrayItem(t, 2), "aten::addmm", "op", 1, 2500, 2500);
    expect_row(cJSON_GetArrayItem(t, 3), "aten::linear", "op", 1, 4000, 1500);
    expect_row(cJSON_GetArrayItem(t, 4), "AddmmBackward0", "op", 1, 1000, 1000);
    expect_row(cJSON_GetArrayItem(t, 5), "aten::sum", "op", 1, 1000, 1000);
    assert_int_equal(field(cJSON_GetArrayItem(t, 2), "flops"), 128);
    /* Memory: addmm allocates and frees 256 B; linear keeps 512 B; train holds both. */
    assert_int_equal(field(cJSON_GetArrayItem(t, 2), "mem_bytes"), 0);
    assert_int_equal(field(cJSON_GetArrayItem(t, 3), "self_mem_bytes"), 512);
    assert_int_equal(field(cJSON_GetArrayItem(t, 3), "mem_bytes"), 512);
    assert_int_equal(field(cJSON_GetArrayItem(t, 0), "mem_bytes"), 512);
    assert_int_equal(field(cJSON_GetArrayItem(t, 0), "self_mem_bytes"), 0);
    cJSON_Delete(t);
}

static void test_op_table_steps_and_shapes(void **state)
{
    fixture_t *fx = *state;
    nnp_analyse_options_t o;
    cJSON *t;
    nnp_analyse_options_init(&o);
    assert_int_equal(nnp_parse_step_list("2", &o), NNP_OK);
    t = table(fx, &o, false);
    assert_int_equal(cJSON_GetArraySize(t), 2);
    expect_row(cJSON_GetArrayItem(t, 0), "gloo:all_reduce", "comm", 1, 3000, 3000);
    expect_row(cJSON_GetArrayItem(t, 1), "AddmmBackward0", "op", 1, 1000, 1000);
    cJSON_Delete(t);
    t = table(fx, NULL, true);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(t, 2), "input_shapes")->valuestring,
                        "2;4,8;8,2;;");
    cJSON_Delete(t);
}

/* With NNP_OP_TABLE_STEPS each step is a range "ProfilerStep*" on the thread that began it
 * (as torch.profiler lists its steps under a schedule): step 1 [0, 10000] holds "train"
 * [500, 9000], self 10000 - 8500 = 1500; step 2 [10000, 20000] holds AddmmBackward0
 * [11000, 12000], self 9000 (the collective, asynchronous, is nobody's child): 2 calls,
 * total 20000, self 10500. The other rows do not change. Unknown flags are refused. */
static void test_op_table_with_steps(void **state)
{
    fixture_t *fx = *state;
    char *json = NULL, *plain = NULL;
    cJSON *t = nnpt_op_table(fx->raw, NULL, NNP_OP_TABLE_STEPS);
    assert_int_equal(cJSON_GetArraySize(t), 7);
    expect_row(cJSON_GetArrayItem(t, 0), "ProfilerStep*", "range", 2, 20000, 10500);
    expect_row(cJSON_GetArrayItem(t, 1), "train", "range", 1, 8500, 3500);
    expect_row(cJSON_GetArrayItem(t, 4), "aten::linear", "op", 1, 4000, 1500);
    cJSON_Delete(t);
    assert_int_equal(nnp_op_table_ex(fx->raw, NULL, 0x8u, &json), NNP_EINVAL);
    assert_null(json);
    /* nnp_op_table is nnp_op_table_ex without NNP_OP_TABLE_STEPS: the same text. */
    assert_int_equal(nnp_op_table(fx->raw, NULL, true, &plain), NNP_OK);
    assert_int_equal(nnp_op_table_ex(fx->raw, NULL, NNP_OP_TABLE_BY_SHAPES, &json), NNP_OK);
    assert_string_equal(plain, json);
    nnp_free(plain);
    nnp_free(json);
}

static char *export_text(const fixture_t *fx, const nnp_analyse_options_t *o, const char *meta)
{
    char path[NNP_PATH_MAX], *text = NULL;
    snprintf(path, sizeof(path), "%s/w.pt.trace.json", fx->dir);
    assert_int_equal(nnp_export_kineto(fx->raw, path, o, meta), NNP_OK);
    assert_int_equal(nnp__read_file(path, MAX_FILE, &text, NULL), NNP_OK);
    return text;
}

static const cJSON *event(const cJSON *events, const char *name, const char *ph)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, events)
    {
        const cJSON *n = cJSON_GetObjectItem(e, "name"), *p = cJSON_GetObjectItem(e, "ph");
        if (n && p && strcmp(n->valuestring, name) == 0 && strcmp(p->valuestring, ph) == 0)
            return e;
    }
    return NULL;
}

static int count(const cJSON *events, const char *name)
{
    const cJSON *e;
    int n = 0;
    cJSON_ArrayForEach(e, events)
    {
        const cJSON *nm = cJSON_GetObjectItem(e, "name");
        n += nm && strcmp(nm->valuestring, name) == 0;
    }
    return n;
}

static const cJSON *arg(const cJSON *e, const char *key)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), key);
}

static void test_kineto_export(void **state)
{
    fixture_t *fx = *state;
    char *text = export_text(fx, NULL, "{\"run\": \"unit\", \"n\": [1, 2]}");
    cJSON *root = cJSON_Parse(text), *ev;
    const cJSON *addmm, *bwd, *s, *f, *mem, *dist;
    char *dims;
    assert_non_null(root);
    assert_int_equal(cJSON_GetObjectItem(root, "schemaVersion")->valueint, 1);
    assert_true(cJSON_IsArray(cJSON_GetObjectItem(root, "deviceProperties")));
    assert_string_equal(cJSON_GetObjectItem(root, "run")->valuestring, "unit");
    dist = cJSON_GetObjectItem(root, "distributedInfo");
    assert_string_equal(cJSON_GetObjectItem(dist, "backend")->valuestring, "gloo");
    assert_int_equal(cJSON_GetObjectItem(dist, "rank")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItem(dist, "world_size")->valueint, 2);
    ev = cJSON_GetObjectItem(root, "traceEvents");

    addmm = event(ev, "aten::addmm", "X");
    assert_non_null(addmm);
    assert_string_equal(cJSON_GetObjectItem(addmm, "cat")->valuestring, "cpu_op");
    dims = cJSON_PrintUnformatted(arg(addmm, "Input Dims"));
    assert_string_equal(dims, "[[2],[4,8],[8,2],[],[]]");
    cJSON_free(dims);
    dims = cJSON_PrintUnformatted(arg(addmm, "Input type"));
    assert_string_equal(dims, "[\"float\",\"float\",\"float\",\"Scalar\",\"Scalar\"]");
    cJSON_free(dims);
    assert_int_equal(arg(addmm, "flops")->valueint, 128);
    assert_int_equal(arg(addmm, "Sequence number")->valueint, 7);
    assert_int_equal(arg(addmm, "Fwd thread id")->valueint, 0);
    bwd = event(ev, "AddmmBackward0", "X");
    assert_int_equal(arg(bwd, "Fwd thread id")->valueint, 1);
    /* with_stack: "Call stack", frames innermost first, each followed by ';'. */
    assert_string_equal(arg(addmm, "Call stack")->valuestring,
                        "model.py(12): forward;train.py(30): step;train.py(40): <module>;");
    assert_string_equal(arg(event(ev, "aten::linear", "X"), "Call stack")->valuestring,
                        "model.py(12): forward;train.py(30): step;train.py(40): <module>;");
    assert_string_equal(arg(event(ev, "aten::sum", "X"), "Call stack")->valuestring,
                        "train.py(31): step;train.py(40): <module>;");
    assert_null(arg(bwd, "Call stack"));
    /* Durations in us, exact to the ns. */
    assert_non_null(strstr(text, "\"dur\":2.500"));
    assert_non_null(strstr(text, "\"dur\":8.500"));

    /* One fwdbwd pair: from aten::addmm (the later forward op of seq 7) to the backward. */
    assert_int_equal(count(ev, "fwdbwd"), 2);
    s = event(ev, "fwdbwd", "s");
    f = event(ev, "fwdbwd", "f");
    assert_int_equal(cJSON_GetObjectItem(s, "id")->valueint,
                     cJSON_GetObjectItem(f, "id")->valueint);
    assert_true(cJSON_GetObjectItem(s, "ts")->valuedouble ==
                cJSON_GetObjectItem(addmm, "ts")->valuedouble);
    assert_true(cJSON_GetObjectItem(f, "ts")->valuedouble ==
                cJSON_GetObjectItem(bwd, "ts")->valuedouble);
    assert_string_equal(cJSON_GetObjectItem(f, "bp")->valuestring, "e");

    /* Steps, ranges, collectives, memory. */
    assert_non_null(event(ev, "ProfilerStep#1", "X"));
    assert_non_null(event(ev, "ProfilerStep#2", "X"));
    assert_string_equal(cJSON_GetObjectItem(event(ev, "train", "X"), "cat")->valuestring,
                        "user_annotation");
    assert_int_equal(arg(event(ev, "gloo:all_reduce", "X"), "Bytes")->valueint, 4000);
    dims = cJSON_PrintUnformatted(arg(event(ev, "gloo:all_reduce", "X"), "Process Group Ranks"));
    assert_string_equal(dims, "[0,1]");
    cJSON_free(dims);
    assert_int_equal(count(ev, "[memory]"), 3);
    mem = event(ev, "[memory]", "i");
    assert_int_equal(arg(mem, "Bytes")->valueint, 256);
    assert_int_equal(arg(mem, "Total Allocated")->valueint, 256);
    assert_int_equal(arg(mem, "Device Id")->valueint, -1);
    assert_int_equal(count(ev, "aten::sum"), 2); /* the trace keeps every call */
    cJSON_Delete(root);
    free(text);
}

/* The number after "key": in text from `from` on, as the exact integer of its digits with
 * the decimal point dropped (ts "12.345" us -> 12345 ns; the base's ns as written). */
static int64_t digits_after(const char *from, const char *key)
{
    const char *p = strstr(from, key);
    int64_t v = 0;
    assert_non_null(p);
    for (p += strlen(key); *p == '.' || (*p >= '0' && *p <= '9'); p++)
        if (*p != '.')
            v = v * 10 + (*p - '0');
    return v;
}

/* Times as Kineto >= 2.1 writes them: "baseTimeNanoseconds" (the wall clock floored to
 * libkineto's interval, at most the first event's) and each ts the microseconds after it,
 * small enough to stay exact in a double; the importer adds the base back: the steps and
 * ops come back at the wall-clock ns they were recorded at (their distances exact). */
static void test_kineto_export_time_base(void **state)
{
    fixture_t *fx = *state;
    char *text = export_text(fx, NULL, NULL), path[NNP_PATH_MAX];
    struct timespec now;
    int64_t base, step_ts, addmm_ts, now_ns;
    nnp_model_t m;
    size_t addmm = SIZE_MAX;
    base = digits_after(text, "\"baseTimeNanoseconds\":");
    step_ts = digits_after(strstr(text, "\"name\":\"ProfilerStep#1\""), "\"ts\":");
    addmm_ts = digits_after(strstr(text, "\"name\":\"aten::addmm\""), "\"ts\":");
    assert_true(base > 0);
    assert_int_equal(base % KINETO_INTERVAL_NS, 0);
    assert_true(step_ts < KINETO_INTERVAL_NS); /* ns here: us below 7.9e12 */
    assert_int_equal(addmm_ts - step_ts, 1500);
    clock_gettime(CLOCK_REALTIME, &now);
    now_ns = (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec;
    assert_true(base + step_ts <= now_ns && base + step_ts > now_ns - RECENT_NS);

    snprintf(path, sizeof(path), "%s/w.pt.trace.json", fx->dir);
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__importer_kineto.import(path, &m), NNP_OK);
    assert_int_equal(nnp__model_finish(&m), NNP_OK);
    assert_int_equal(m.steps.t.n, 2);
    assert_int_equal(m.steps.start_ns[0], base + step_ts);
    assert_int_equal(m.steps.end_ns[1] - m.steps.start_ns[0], 20000);
    for (size_t i = 0; i < m.ops.t.n; i++)
        if (strcmp(nnp__model_str(&m, m.ops.name[i]), "aten::addmm") == 0)
            addmm = i;
    assert_true(addmm != SIZE_MAX);
    assert_int_equal(m.ops.start_ns[addmm], base + addmm_ts);
    assert_int_equal(m.ops.end_ns[addmm] - m.ops.start_ns[addmm], 2500);
    nnp__model_fini(&m);
    free(text);
}

static void test_kineto_export_steps_and_errors(void **state)
{
    fixture_t *fx = *state;
    nnp_analyse_options_t o;
    char path[NNP_PATH_MAX], *text;
    cJSON *root, *ev;
    nnp_analyse_options_init(&o);
    assert_int_equal(nnp_parse_step_list("2", &o), NNP_OK);
    text = export_text(fx, &o, NULL);
    root = cJSON_Parse(text);
    ev = cJSON_GetObjectItem(root, "traceEvents");
    assert_null(event(ev, "aten::linear", "X"));
    assert_null(event(ev, "ProfilerStep#1", "X"));
    assert_non_null(event(ev, "ProfilerStep#2", "X"));
    assert_non_null(event(ev, "AddmmBackward0", "X"));
    assert_int_equal(count(ev, "fwdbwd"), 0); /* its forward op is not in the steps */
    cJSON_Delete(root);
    free(text);

    snprintf(path, sizeof(path), "%s/bad.json", fx->dir);
    assert_int_equal(nnp_export_kineto(fx->raw, path, NULL, "[1, 2]"), NNP_EINVAL);
    assert_int_equal(nnp__read_file(path, MAX_FILE, &text, NULL), NNP_ENOENT);
    snprintf(path, sizeof(path), "%s/", fx->dir);
    assert_int_equal(nnp_export_kineto(fx->raw, path, NULL, NULL), NNP_EPATH);
    snprintf(path, sizeof(path), "%s/none.json", fx->dir);
    assert_int_not_equal(nnp_export_kineto("/nonexistent/PROF_x", path, NULL, NULL), NNP_OK);
}

/* `nnprof export kineto`: one file per raw directory, a named .json file, refusals. */
static int export_cli(const fixture_t *fx, const char *args)
{
    char cmd[4 * NNP_PATH_MAX];
    int st;
    snprintf(cmd, sizeof(cmd), "%s/nnprof export kineto -dir %s %s >/dev/null 2>&1", NNP_BINARY_DIR,
             fx->raw, args);
    st = system(cmd);
    return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_cli_export_kineto(void **state)
{
    fixture_t *fx = *state;
    char args[NNP_PATH_MAX + 64], path[2 * NNP_PATH_MAX], *text = NULL;
    const char *base = strrchr(fx->raw, '/') + 1;
    /* PROF_<time>_<host>_<pid> -> <host>_<pid>.pt.trace.json in ASCEND_PROFILER_OUTPUT/ */
    const char *worker = strchr(base + strlen("PROF_"), '_') + 1;
    assert_int_equal(export_cli(fx, ""), 0);
    snprintf(path, sizeof(path), "%s/ASCEND_PROFILER_OUTPUT/%s.pt.trace.json", fx->raw, worker);
    assert_int_equal(nnp__read_file(path, MAX_FILE, &text, NULL), NNP_OK);
    assert_non_null(strstr(text, "\"ProfilerStep#2\""));
    free(text);
    snprintf(args, sizeof(args), "--steps 2 -o %s/one.json", fx->dir);
    assert_int_equal(export_cli(fx, args), 0);
    snprintf(path, sizeof(path), "%s/one.json", fx->dir);
    assert_int_equal(nnp__read_file(path, MAX_FILE, &text, NULL), NNP_OK);
    assert_null(strstr(text, "\"ProfilerStep#1\""));
    free(text);
    snprintf(args, sizeof(args), "-o %s/one.json.gz", fx->dir);
    assert_int_equal(export_cli(fx, args), 2);
    assert_int_equal(export_cli(fx, "--steps 3,5"), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_op_table_self_times, setup, nnpt_raw_fx_teardown),
        cmocka_unit_test_setup_teardown(test_op_table_steps_and_shapes, setup,
                                        nnpt_raw_fx_teardown),
        cmocka_unit_test_setup_teardown(test_op_table_with_steps, setup, nnpt_raw_fx_teardown),
        cmocka_unit_test_setup_teardown(test_kineto_export, setup, nnpt_raw_fx_teardown),
        cmocka_unit_test_setup_teardown(test_kineto_export_time_base, setup, nnpt_raw_fx_teardown),
        cmocka_unit_test_setup_teardown(test_kineto_export_steps_and_errors, setup,
                                        nnpt_raw_fx_teardown),
        cmocka_unit_test_setup_teardown(test_cli_export_kineto, setup, nnpt_raw_fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
