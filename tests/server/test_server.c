/* test_server.c - the `nnprof ui` server over real loopback sockets (issue 11): analysis
 * on demand; path traversal (.., encoded, absolute-form, links out of the served
 * directory, a link planted among the results); oversized and malformed requests; every
 * non-GET method; a foreign Host header; 200 concurrent connections. Each bad request must
 * be answered or closed cleanly, leak nothing from outside, and leave the server serving. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "server/server.h"
#include "test_util.h"

#define SECRET         "TOPSECRET-4f1e"
#define CONCURRENT     200
#define IO_TIMEOUT_S   60
#define ANALYSE_WAIT_S 240
#define RESP_CAP       (4u << 20)

typedef struct fixture {
    char *tmp; /* holds root/, outside/, cache/ */
    char root[512], outside[512], cache[512];
    nnp_server_t *s;
    int port;
} fixture_t;

static fixture_t fx_g;

/* Start-to-start distance of the recorded steps (each lasts 10 us). */
#define STEP_SPACING_NS 20000

/* Records a small run (3 steps of 2 ops) into dir with the public API. MatMul's input
 * shapes change at step 3 (a dynamic-shape op). */
static void record_run(const char *dir)
{
    nnp_options_t o;
    nnp_session_t *s;
    nnp_op_t op = {0};
    uint64_t base;
    assert_int_equal(nnp_options_init(&o), NNP_OK);
    snprintf(o.output_path, sizeof(o.output_path), "%s", dir);
    assert_int_equal(nnp_session_create(&o, &s), NNP_OK);
    base = nnp_clock_ns();
    for (uint64_t step = 1; step <= 3; step++) {
        /* Steps 20 us apart, each 10 us long: explicit times, so they never overlap however
         * fast this loop runs (one clock read per step let step k+1 start inside step k). */
        uint64_t t0 = base + step * STEP_SPACING_NS;
        nnp_step_begin_at(step, 0, t0);
        op.name = nnp_intern("Default/net/MatMul-op1");
        op.type = nnp_intern("MatMul");
        op.input_shapes = nnp_intern(step < 3 ? "32,64;64,128" : "16,64;64,128");
        op.input_dtypes = nnp_intern("float32;float32");
        nnp_op_at(&op, t0 + 1000, t0 + 5000);
        op.name = nnp_intern("Default/net/ReLU-op2");
        op.type = nnp_intern("ReLU");
        op.input_shapes = op.input_dtypes = 0;
        nnp_op_at(&op, t0 + 6000, t0 + 7000);
        /* An op inside ReLU: ops nest, so the analysis writes op_self_time_0.csv. */
        op.name = nnp_intern("Default/net/ReLU-op2/Mul-op3");
        op.type = nnp_intern("Mul");
        nnp_op_at(&op, t0 + 6200, t0 + 6700);
        nnp_step_end_at(step, 0, t0 + 10000);
    }
    assert_int_equal(nnp_session_destroy(s), NNP_OK);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int group_setup(void **state)
{
    fixture_t *fx = &fx_g;
    nnp_server_config_t cfg;
    char p[4096];
    fx->tmp = nnpt_mkdtemp();
    assert_true(strlen(fx->tmp) < 400);
    snprintf(fx->root, sizeof(fx->root), "%s/root", fx->tmp);
    snprintf(fx->outside, sizeof(fx->outside), "%s/outside", fx->tmp);
    snprintf(fx->cache, sizeof(fx->cache), "%s/cache", fx->tmp);
    mkdir(fx->root, 0700);
    mkdir(fx->outside, 0700);
    /* The served run, and a file and a run outside the served directory. */
    snprintf(p, sizeof(p), "%s/run1", fx->root);
    record_run(p);
    snprintf(p, sizeof(p), "%s/secret.txt", fx->outside);
    write_file(p, SECRET "\n");
    snprintf(p, sizeof(p), "%s/link_out", fx->root);
    assert_int_equal(symlink(fx->outside, p), 0);
    {
        char target[4096];
        snprintf(p, sizeof(p), "%s/secret_link.txt", fx->root);
        snprintf(target, sizeof(target), "%s/secret.txt", fx->outside);
        assert_int_equal(symlink(target, p), 0);
    }
    nnp_server_config_init(&cfg);
    cfg.root = fx->root;
    cfg.port = 0;
    cfg.cache_root = fx->cache;
    cfg.analyse_exe = NNP_BINARY_DIR "/nnprof";
    assert_int_equal(nnp_server_start(&cfg, &fx->s), NNP_OK);
    fx->port = nnp_server_port(fx->s);
    assert_true(fx->port > 0);
    *state = fx;
    return 0;
}

static int group_teardown(void **state)
{
    fixture_t *fx = *state;
    nnp_server_destroy(fx->s);
    nnpt_rm_rf(fx->tmp);
    free(fx->tmp);
    return 0;
}

static int connect_to(int port)
{
    struct sockaddr_in a;
    struct timeval tv = {IO_TIMEOUT_S, 0};
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
}

/* Sends all of req (errors ignored: the server may close early on a bad request). */
static void send_all(int fd, const char *req, size_t n)
{
    while (n > 0) {
        ssize_t k = send(fd, req, n, MSG_NOSIGNAL);
        if (k <= 0)
            return;
        req += k;
        n -= (size_t)k;
    }
}

/* Reads until the peer closes (requests say Connection: close). Returns the status code,
 * 0 when the server closed without answering; *body (malloc'ed) gets the whole response. */
static int read_response(int fd, char **body)
{
    char *buf = malloc(RESP_CAP + 1);
    size_t len = 0;
    int status = 0;
    assert_non_null(buf);
    for (;;) {
        ssize_t k = recv(fd, buf + len, RESP_CAP - len, 0);
        if (k <= 0)
            break;
        len += (size_t)k;
        if (len == RESP_CAP)
            break;
    }
    buf[len] = '\0';
    if (len > 12 && strncmp(buf, "HTTP/1.", 7) == 0)
        status = (int)strtol(buf + 9, NULL, 10);
    *body = buf;
    return status;
}

static int raw(const fixture_t *fx, const char *req, size_t n, char **body)
{
    int fd = connect_to(fx->port), st;
    send_all(fd, req, n);
    /* End of request: a server waiting for more of a cut request sees EOF at once. */
    shutdown(fd, SHUT_WR);
    st = read_response(fd, body);
    close(fd);
    return st;
}

static int get(const fixture_t *fx, const char *target, char **body)
{
    char req[4096];
    int n = snprintf(req, sizeof(req),
                     "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n", target,
                     fx->port);
    return raw(fx, req, (size_t)n, body);
}

/* The server still answers a good request. */
static void still_serving(const fixture_t *fx)
{
    char *body;
    assert_int_equal(get(fx, "/api/runs", &body), 200);
    assert_non_null(strstr(body, "\"id\":\"run1\""));
    free(body);
}

static void test_runs_listed_without_links(void **state)
{
    fixture_t *fx = *state;
    char *body;
    assert_int_equal(get(fx, "/api/runs", &body), 200);
    assert_non_null(strstr(body, "\"id\":\"run1\""));
    assert_null(strstr(body, "link_out"));
    assert_non_null(strstr(body, "application/json"));
    assert_non_null(strstr(body, "X-Content-Type-Options: nosniff"));
    free(body);
}

static void test_analysis_on_demand(void **state)
{
    fixture_t *fx = *state;
    char *body;
    time_t t0 = time(NULL);
    int st = get(fx, "/api/overview?run=run1", &body);
    if (st != 202 && st != 200)
        fail_msg("first overview: %d %s", st, body);
    free(body);
    while ((st = get(fx, "/api/overview?run=run1", &body)) == 202) {
        assert_non_null(strstr(body, "\"progress\""));
        free(body);
        assert_true(time(NULL) - t0 < ANALYSE_WAIT_S);
        usleep(200000);
    }
    assert_int_equal(st, 200);
    assert_non_null(strstr(body, "\"ranks\":[0]"));
    free(body);
    /* The results went to the cache, not into the run. */
    {
        char p[2048];
        struct stat sb;
        snprintf(p, sizeof(p), "%s/run1/.nnprof_ui", fx->root);
        assert_int_not_equal(stat(p, &sb), 0);
    }
    assert_int_equal(get(fx, "/api/operators?run=run1&rank=0", &body), 200);
    assert_non_null(strstr(body, "\"type\":\"MatMul\""));
    /* Self times over 3 steps: MatMul 3 x 4 us, ReLU 3 x (1 - 0.5) us, Mul 3 x 0.5 us, of 15
     * us in all; ties by name. */
    assert_non_null(strstr(body,
                           "\"self_times\":[{\"name\":\"MatMul\",\"count\":3,\"total_us\":12.000,"
                           "\"self_us\":12.000,\"avg_us\":4.000,\"min_us\":4.000,\"max_us\":4.000,"
                           "\"self_pct\":80.00},{\"name\":\"Mul\",\"count\":3,\"total_us\":1.500,"
                           "\"self_us\":1.500,\"avg_us\":0.500,\"min_us\":0.500,\"max_us\":0.500,"
                           "\"self_pct\":10.00},{\"name\":\"ReLU\",\"count\":3,\"total_us\":3.000,"
                           "\"self_us\":1.500,\"avg_us\":1.000,\"min_us\":1.000,\"max_us\":1.000,"
                           "\"self_pct\":10.00}]"));
    /* op_shapes: the two variants of MatMul, the commoner first. */
    assert_non_null(strstr(body, "\"shapes\":[{\"shapes\":\"32,64;64,128\",\"dtypes\":"
                                 "\"float32;float32\",\"count\":2},{\"shapes\":\"16,64;64,128\""));
    free(body);
    assert_int_equal(get(fx, "/api/dynamic_shape?run=run1&step=3", &body), 200);
    assert_non_null(strstr(body, "\"available\":true"));
    assert_non_null(strstr(body, "\"shapes_at_step\":\"16,64;64,128\""));
    assert_non_null(strstr(body, "\"op_curves\":{\"Default/net/MatMul-op1\":{\"x\":[1,2,3]"));
    free(body);
    assert_int_equal(get(fx, "/api/operators?run=run1&rank=7", &body), 404);
    free(body);
    assert_int_equal(get(fx, "/api/step_trace?run=run1&rank=x", &body), 400);
    free(body);
    /* Timeline: the detail file as written, and a summary holding only its two processes. */
    assert_int_equal(get(fx, "/api/timeline_download?run=run1&kind=detail", &body), 200);
    assert_non_null(strstr(body, "Default/net/MatMul-op1"));
    free(body);
    assert_int_equal(get(fx, "/api/timeline_download?run=run1&kind=summary", &body), 200);
    assert_null(strstr(body, "MatMul"));
    assert_non_null(strstr(body, "Step Trace"));
    free(body);
}

static void test_traversal(void **state)
{
    fixture_t *fx = *state;
    static const char *const targets[] = {
        "/../../../../etc/passwd",
        "/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
        "/api/../../outside/secret.txt",
        "//etc/passwd",
        "/secret_link.txt",
        "/link_out/secret.txt",
        "/api/overview?run=../outside",
        "/api/overview?run=%2F..%2Foutside",
        "/api/overview?run=link_out",
        "/api/timeline_download?run=..%2F..%2Fetc",
        "/api/compare?a=run1&b=../outside",
        "/app.js/../../../etc/passwd",
        "/%00/etc/passwd",
    };
    for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
        char *body;
        int st = get(fx, targets[i], &body);
        if (st != 404 && st != 400)
            fail_msg("%s: status %d", targets[i], st);
        assert_null(strstr(body, SECRET));
        assert_null(strstr(body, "root:x:"));
        free(body);
    }
    /* Absolute-form request target. */
    {
        char req[512], *body;
        int n = snprintf(req, sizeof(req),
                         "GET http://127.0.0.1:%d/../outside/secret.txt HTTP/1.1\r\nHost: "
                         "127.0.0.1:%d\r\nConnection: close\r\n\r\n",
                         fx->port, fx->port);
        int st = raw(fx, req, (size_t)n, &body);
        assert_true(st == 404 || st == 400 || st == 0);
        assert_null(strstr(body, SECRET));
        free(body);
    }
    still_serving(fx);
}

/* A link planted among the results (pointing outside) is refused, not followed. */
static void test_link_in_results(void **state)
{
    fixture_t *fx = *state;
    char results[2048], p[2600], q[2048], *body;
    /* Find the run's cache folder: cache/run1-<hash>/. */
    FILE *ls;
    snprintf(p, sizeof(p), "ls -d %s/run1-*", fx->cache);
    ls = popen(p, "r");
    assert_non_null(ls);
    assert_non_null(fgets(results, sizeof(results), ls));
    pclose(ls);
    results[strcspn(results, "\n")] = '\0';
    snprintf(p, sizeof(p), "%s/rank_0/ASCEND_PROFILER_OUTPUT/trace_view.json", results);
    assert_int_equal(unlink(p), 0);
    snprintf(q, sizeof(q), "%s/secret.txt", fx->outside);
    assert_int_equal(symlink(q, p), 0);
    assert_int_equal(get(fx, "/api/timeline_download?run=run1&kind=detail", &body), 404);
    assert_null(strstr(body, SECRET));
    free(body);
    assert_int_equal(get(fx, "/api/timeline_download?run=run1&kind=summary", &body), 404);
    assert_null(strstr(body, SECRET));
    free(body);
    still_serving(fx);
}

static void test_methods(void **state)
{
    fixture_t *fx = *state;
    static const char *const methods[] = {"POST",    "PUT",   "DELETE",  "PATCH",
                                          "OPTIONS", "TRACE", "CONNECT", "PROPFIND"};
    for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
        char req[512], *body;
        int n = snprintf(req, sizeof(req),
                         "%s /api/runs HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: 5\r\n"
                         "Connection: close\r\n\r\nhello",
                         methods[i], fx->port);
        int st = raw(fx, req, (size_t)n, &body);
        if (st != 405 && !(st == 400 && strcmp(methods[i], "CONNECT") == 0))
            fail_msg("%s: status %d", methods[i], st);
        if (st == 405)
            assert_non_null(strstr(body, "Allow: GET, HEAD"));
        free(body);
    }
    /* HEAD is allowed and has no body. */
    {
        char req[512], *body;
        int n = snprintf(
            req, sizeof(req),
            "HEAD /api/runs HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n", fx->port);
        assert_int_equal(raw(fx, req, (size_t)n, &body), 200);
        assert_null(strstr(body, "\"runs\""));
        free(body);
    }
    still_serving(fx);
}

static void test_oversized_and_malformed(void **state)
{
    fixture_t *fx = *state;
    size_t big = 256u * 1024u;
    char *req = malloc(big + 256), *body;
    int n, st;
    assert_non_null(req);
    /* A 256 KiB header. */
    n = snprintf(req, 256, "GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Big: ", fx->port);
    memset(req + n, 'a', big);
    memcpy(req + n + big, "\r\nConnection: close\r\n\r\n", 24);
    st = raw(fx, req, (size_t)n + big + 23, &body);
    assert_true(st == 0 || st == 400 || st == 413 || st == 431);
    free(body);
    /* A 256 KiB URL. */
    memcpy(req, "GET /", 5);
    memset(req + 5, 'b', big);
    n = snprintf(req + 5 + big, 250, " HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n",
                 fx->port);
    st = raw(fx, req, 5 + big + (size_t)n, &body);
    assert_true(st == 0 || st == 400 || st == 414 || st == 431);
    free(body);
    free(req);
    {
        static const char *const bad[] = {
            "GARBAGE\r\n\r\n",
            "GET\r\n\r\n",
            "GET / HTTP/9.9\r\nHost: x\r\n\r\n",
            "GET /api/runs HTTP/1.1\r\n\r\n", /* HTTP/1.1 without Host */
            "GET /api/runs HTTP/1.1\r\nHost: a\r\nHost: b\r\nContent-Length: -1\r\n\r\n",
            "GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header Without Colon\r\n\r\n",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            st = raw(fx, bad[i], strlen(bad[i]), &body);
            if (st != 0 && (st < 400 || st > 505))
                fail_msg("bad request %zu: status %d", i, st);
            free(body);
        }
    }
    /* A client that connects and says nothing, one that stops mid-request and one that
     * speaks TLS: the server holds each until its idle timeout (30 s) or our close, and
     * serves others meanwhile. */
    {
        static const char tls_hello[] = "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03";
        int idle = connect_to(fx->port), half = connect_to(fx->port), tls = connect_to(fx->port);
        send_all(half, "GET /api/ru", 11);
        send_all(tls, tls_hello, sizeof(tls_hello) - 1);
        shutdown(tls, SHUT_WR);
        still_serving(fx);
        close(idle);
        close(half);
        close(tls);
    }
    still_serving(fx);
}

static void test_foreign_host(void **state)
{
    fixture_t *fx = *state;
    char *body;
    const char req[] =
        "GET /api/runs HTTP/1.1\r\nHost: attacker.example\r\nConnection: close\r\n\r\n";
    assert_int_equal(raw(fx, req, sizeof(req) - 1, &body), 403);
    assert_null(strstr(body, "run1"));
    free(body);
}

/* 200 connections at once: every one gets a whole answer (200, or 503 past the limit),
 * none hangs or is dropped, and the server serves on. */
static void test_concurrent(void **state)
{
    fixture_t *fx = *state;
    int fds[CONCURRENT], ok = 0, busy = 0;
    char req[256];
    int n = snprintf(req, sizeof(req),
                     "GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n",
                     fx->port);
    for (int i = 0; i < CONCURRENT; i++)
        fds[i] = connect_to(fx->port);
    for (int i = 0; i < CONCURRENT; i++)
        send_all(fds[i], req, (size_t)n);
    for (int i = 0; i < CONCURRENT; i++) {
        char *body;
        int st = read_response(fds[i], &body);
        if (st == 200 && strstr(body, "\"id\":\"run1\""))
            ok++;
        else if (st == 503 && strstr(body, "too many connections"))
            busy++;
        else
            fail_msg("connection %d: status %d", i, st);
        free(body);
        close(fds[i]);
    }
    assert_int_equal(ok + busy, CONCURRENT);
    /* Connections are numbered as the server accepts them (it accepts lazily, while
     * earlier ones close, and connections of earlier tests may still be counted), so
     * between about NNP_SERVER_MAX_CONNECTIONS and all 200 are served: never fewer than
     * half the limit. */
    assert_true(ok >= NNP_SERVER_MAX_CONNECTIONS / 2);
    print_message("200 concurrent connections: %d served, %d told to retry (503)\n", ok, busy);
    still_serving(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runs_listed_without_links),
        cmocka_unit_test(test_analysis_on_demand),
        cmocka_unit_test(test_traversal),
        cmocka_unit_test(test_link_in_results),
        cmocka_unit_test(test_methods),
        cmocka_unit_test(test_oversized_and_malformed),
        cmocka_unit_test(test_foreign_host),
        cmocka_unit_test(test_concurrent),
    };
    if (!getenv("NNPROF_LOG_LEVEL"))
        nnp_log_set_level(NNP_LOG_ERROR);
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
