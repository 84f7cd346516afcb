/* test_util.c - see test_util.h. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analyse/analyse.h"
#include "test_util.h"

/* Captured log text is bounded: tests that log more than this are doing something wrong. */
#define CAPTURE_CAP (1 << 20)
static char capture_buf[CAPTURE_CAP];
static size_t capture_len;
static int capture_count;

char *nnpt_mkdtemp(void)
{
    const char *tmp = getenv("TMPDIR");
    char buf[4096];
    snprintf(buf, sizeof(buf), "%s/nnprof-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(buf))
        fail_msg("mkdtemp failed");
    return strdup(buf);
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void nnpt_rm_rf(const char *path)
{
    if (path)
        nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

char *nnpt_write_file(const char *dir, const char *name, const char *text)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    FILE *f;
    if (!path)
        fail_msg("out of memory");
    snprintf(path, n, "%s/%s", dir, name);
    f = fopen(path, "wb");
    if (!f || fwrite(text, 1, strlen(text), f) != strlen(text) || fclose(f) != 0)
        fail_msg("cannot write %s", path);
    return path;
}

char *nnpt_read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
        !(buf = malloc((size_t)n + 1))) {
        fclose(f);
        return NULL;
    }
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        fclose(f);
        return NULL;
    }
    buf[n] = '\0';
    fclose(f);
    return buf;
}

char *nnpt_read_in(const char *dir, const char *name)
{
    char path[4096];
    char *t;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    t = nnpt_read_text(path);
    if (!t)
        fail_msg("cannot read %s", path);
    return t;
}

static void sink(nnp_log_level_t level, const char *msg, void *user)
{
    static const char *names[] = {"error", "warn", "info", "debug"};
    int n;
    (void)user;
    n = snprintf(capture_buf + capture_len, CAPTURE_CAP - capture_len, "%s: %s\n", names[level],
                 msg);
    if (n > 0 && capture_len + (size_t)n < CAPTURE_CAP)
        capture_len += (size_t)n;
    capture_count++;
}

void nnpt_log_capture(void)
{
    capture_len = 0;
    capture_buf[0] = '\0';
    capture_count = 0;
    nnp_log_set_level(NNP_LOG_DEBUG);
    nnp_log_set_handler(sink, NULL);
}

const char *nnpt_log_text(void)
{
    return capture_buf;
}

int nnpt_log_count(void)
{
    return capture_count;
}

void nnpt_log_release(void)
{
    nnp_log_set_handler(NULL, NULL);
    nnp_log_set_level(NNP_LOG_ERROR);
}

/* ---- recorded runs ---- */

/* Fixed times of the fixture's ranges and tensors inside a step (ns). */
#define RANGE_END_NS    9000
#define FWD_BEGIN_NS    1000
#define FWD_END_NS      4000
#define BWD_BEGIN_NS    5000
#define BWD_END_NS      8000
#define OP_GAP_NS       2000
#define TENSOR_BYTES    4096
#define TENSOR_ALLOC_NS 500
#define TENSOR_FREE_NS  9500
#define DEFAULT_OPS     3
#define SAMPLE_SPAN_MS  3

static void record_steps(const nnpt_run_t *r)
{
    nnp_op_t op = {0};
    nnp_host_tag_t step_tag = {0}, fwd = {0}, bwd = {0};
    int ops = r->ops_per_step ? r->ops_per_step : DEFAULT_OPS; /* < 0: no op */
    uint64_t op_ns = r->op_ns ? r->op_ns : NNPT_OP_NS;
    op.type = nnp_intern("MatMul");
    step_tag.module = fwd.module = bwd.module = nnp_intern("Python");
    step_tag.stage = fwd.stage = bwd.stage = nnp_intern("Run");
    step_tag.level = fwd.level = bwd.level = 1;
    step_tag.event = nnp_intern("train_step");
    fwd.event = nnp_intern("forward");
    bwd.event = nnp_intern("backward");
    for (int k = 0; k < r->steps; k++) {
        uint64_t t = NNPT_T0 + (uint64_t)k * NNPT_STEP_NS;
        if (!r->no_step_marks)
            nnp_step_begin_at((uint64_t)k, 0, t);
        if (r->ranges) {
            nnp_range_begin_at(&step_tag, t);
            nnp_range_begin_at(&fwd, t + FWD_BEGIN_NS);
            nnp_range_end_at(&fwd, t + FWD_END_NS);
            nnp_range_begin_at(&bwd, t + BWD_BEGIN_NS);
            nnp_range_end_at(&bwd, t + BWD_END_NS);
            nnp_range_end_at(&step_tag, t + RANGE_END_NS);
        }
        if (r->tensors) {
            nnp_tensor_t tensor = {0};
            tensor.address = 0x1000 + (uint64_t)k;
            tensor.size_bytes = TENSOR_BYTES;
            tensor.name = nnp_intern("activation");
            nnp_mem_alloc_at(&tensor, t + TENSOR_ALLOC_NS);
            nnp_mem_free_at(tensor.address, TENSOR_BYTES, t + TENSOR_FREE_NS);
        }
        for (int j = 0; j < ops; j++) {
            char name[64];
            uint64_t s = t + FWD_BEGIN_NS + (uint64_t)j * OP_GAP_NS;
            snprintf(name, sizeof(name), "Default/MatMul-op%d", j);
            op.name = nnp_intern(name);
            nnp_op_at(&op, s, s + op_ns);
        }
        if (!r->no_step_marks)
            nnp_step_end_at((uint64_t)k, 0, t + NNPT_STEP_NS);
    }
}

void nnpt_record(const char *out, const nnpt_run_t *r, char *raw, size_t cap)
{
    nnp_options_t o;
    nnp_session_t *s;
    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", out);
    o.sample_interval_ms = r->sample_ms;
    o.rank_id = r->rank;
    o.device_id = r->rank;
    o.rank_size = r->rank_size ? r->rank_size : 1;
    o.profile_memory = r->tensors;
    o.profile_communication = r->communication;
    if (nnp_session_create(&o, &s) != NNP_OK)
        _exit(3);
    if (raw)
        snprintf(raw, cap, "%s", nnp_session_raw_dir(s));
    if (r->record)
        r->record(r, r->arg);
    else
        record_steps(r);
    if (r->sample_ms > 0)
        usleep((useconds_t)r->sample_ms * SAMPLE_SPAN_MS * 1000u);
    if (r->flushed_fd > 0) {
        char ok = 1;
        if (nnp_session_flush(s) != NNP_OK || write(r->flushed_fd, &ok, 1) != 1)
            _exit(4);
        for (;;)
            pause(); /* killed here */
    }
    if (nnp_session_destroy(s) != NNP_OK)
        _exit(5);
}

void nnpt_record_in_child(const char *out, const nnpt_run_t *r, char *raw, size_t cap)
{
    char buf[4096] = "";
    int fds[2], status;
    pid_t p;
    assert_int_equal(pipe(fds), 0);
    p = fork();
    assert_true(p >= 0);
    if (p == 0) {
        close(fds[0]);
        nnpt_record(out, r, buf, sizeof(buf));
        if (write(fds[1], buf, strlen(buf) + 1) < 0)
            _exit(6);
        _exit(0);
    }
    close(fds[1]);
    if (read(fds[0], buf, sizeof(buf) - 1) < 0)
        buf[0] = '\0';
    buf[sizeof(buf) - 1] = '\0';
    close(fds[0]);
    assert_int_equal(waitpid(p, &status, 0), p);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (raw)
        snprintf(raw, cap, "%s", buf);
}

int nnpt_run_cmd(const char *cmd, char *out, size_t cap)
{
    FILE *f;
    size_t n = 0;
    int status;
    char full[8192 + 512];
    snprintf(full, sizeof(full), "{ %s; } 2>&1", cmd);
    f = popen(full, "r");
    if (!f)
        return -1;
    if (out) {
        n = fread(out, 1, cap - 1, f);
        out[n] = '\0';
    }
    while (fgetc(f) != EOF) {
    }
    status = pclose(f);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

char *nnpt_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = calloc(1, (size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

int nnpt_cli(char *out, size_t cap, const char *fmt, ...)
{
    char args[8192], cmd[8192 + 256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof(args), fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof(cmd), "NNPROF_LOG_LEVEL=warn '%s/nnprof' %s", NNP_BINARY_DIR, args);
    return nnpt_run_cmd(cmd, out, cap);
}

bool nnpt_have_corpus(void)
{
    struct stat st;
    if (stat(NNPT_CORPUS "/MANIFEST.md", &st) == 0)
        return true;
    fprintf(stderr, "SKIP: corpus not found at %s\n", NNPT_CORPUS);
    return false;
}

/* How often a bounded wait looks at the child. */
#define WAIT_POLL_NS (10L * 1000L * 1000L)
#define NS_PER_SEC_L 1000000000L

int nnpt_wait_bounded(pid_t pid, int limit_s)
{
    struct timespec pause = {0, WAIT_POLL_NS};
    long waited_ns = 0;
    int st;
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return st;
        if (r < 0 && errno != EINTR)
            return -1;
        if (waited_ns >= (long)limit_s * NS_PER_SEC_L) {
            /* Its process group when it leads one (nnpt_spawn's): a hung grandchild (a
             * forked worker) would otherwise outlive the test. */
            if (kill(-pid, SIGKILL) != 0)
                kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -1;
        }
        nanosleep(&pause, NULL);
        waited_ns += WAIT_POLL_NS;
    }
}

int nnpt_spawn(const char *const argv[], const char *const env[], int limit_s)
{
    pid_t pid;
    fflush(NULL);
    pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        (void)setpgid(0, 0); /* its own group: a hang kills its children too */
        for (size_t i = 0; env && env[i]; i++) {
            const char *eq = strchr(env[i], '=');
            if (eq) {
                char name[256];
                snprintf(name, sizeof(name), "%.*s", (int)(eq - env[i]), env[i]);
                setenv(name, eq + 1, 1);
            } else {
                unsetenv(env[i]);
            }
        }
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return nnpt_wait_bounded(pid, limit_s);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char **nnpt_raw_dirs(const char *out, int *n)
{
    char prof[4096];
    DIR *d;
    struct dirent *e;
    char **v = NULL;
    int cap = 0;
    *n = 0;
    snprintf(prof, sizeof(prof), "%s/profiler", out);
    d = opendir(prof);
    if (!d)
        return NULL;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "PROF_", 5) != 0)
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            v = realloc(v, (size_t)cap * sizeof(*v));
            assert_non_null(v);
        }
        {
            size_t len = strlen(prof) + strlen(e->d_name) + 2;
            v[*n] = malloc(len);
            assert_non_null(v[*n]);
            snprintf(v[*n], len, "%s/%s", prof, e->d_name);
        }
        (*n)++;
    }
    closedir(d);
    if (*n > 1)
        qsort(v, (size_t)*n, sizeof(*v), cmp_str);
    return v;
}

void nnpt_free_list(char **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

struct cJSON *nnpt_op_table(const char *raw, const nnp_analyse_options_t *o, unsigned flags)
{
    char *json = NULL;
    cJSON *root;
    assert_int_equal(nnp_op_table_ex(raw, o, flags, &json), NNP_OK);
    root = cJSON_Parse(json);
    nnp_free(json);
    assert_non_null(root);
    return root;
}

int nnpt_raw_fx_session(nnpt_raw_fx_t *fx, nnp_options_t *o, nnp_session_t **s)
{
    int rc;
    fx->dir = nnpt_mkdtemp();
    snprintf(o->output_path, sizeof(o->output_path), "%s", fx->dir);
    rc = nnp_session_create(o, s);
    if (rc == NNP_OK)
        snprintf(fx->raw, sizeof(fx->raw), "%s", nnp_session_raw_dir(*s));
    return rc;
}

int nnpt_raw_fx_teardown(void **state)
{
    nnpt_raw_fx_t *fx = *state;
    nnpt_rm_rf(fx->dir);
    free(fx->dir);
    free(fx);
    return 0;
}

struct cJSON *nnpt_load_json(const char *dir, const char *name)
{
    char path[8192], *text;
    cJSON *j;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    text = nnpt_read_file(path);
    j = text ? cJSON_Parse(text) : NULL;
    free(text);
    return j;
}
