/* fuzz_http.c - the `nnprof ui` server (src/server/, on libmicrohttpd) fed raw HTTP
 * requests over a real loopback socket, as a browser or an attacker would send them: the
 * request line, headers, path (encoded or not, `..`, links), query arguments of every page.
 * Served: one analysed run of ours; beside the served directory, a file no answer may
 * contain, reachable from inside only through symbolic links. Each input is a request's
 * head; the harness ends it with an empty line, as clients do (libmicrohttpd keeps a
 * connection whose request is unfinished until its idle timeout, half-closed or not, so
 * an unfinished one would only make the fuzzer wait). Contract, per input: what the
 * server answers starts with an HTTP status line (or it closes without a word); no answer
 * carries the planted secret unless the request did; and the server still answers a plain
 * request within ALIVE_WAIT_S (it runs in this process: a crash in it is this input's
 * crash). */
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

#include "harness.h"
#include "nnprof/nnprof.h"
#include "server/server.h"

/* Planted outside the served directory. */
#define SECRET "NNP-FUZZ-SECRET-93c1"
/* How long the harness waits for the answer to an input (one whose head asks for a body,
 * Content-Length or chunked, waits for that body: it is given up, not failed). */
#define ANSWER_WAIT_S 1
/* Longest the plain request after each input may go unanswered: more is a hang. */
#define ALIVE_WAIT_S 10
/* The empty line that ends a request's head. */
#define HEAD_END "\r\n\r\n"
/* Bytes of an answer kept to check (the rest is read and dropped; the secret is short and
 * a file read through a link would start with it). */
#define ANSWER_KEEP (1u << 20)
/* Inputs larger than this are not sent (the server refuses requests over 16 KiB). */
#define REQUEST_MAX (64u * 1024u)
/* The served run: steps of two ops each. */
#define RUN_STEPS    4
#define STEP_NS      20000
#define READY_WAIT_S 60

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static nnp_server_t *g_server;
static int g_port;
static char g_answer[ANSWER_KEEP];

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Records a small run into dir through the public API, then analyses it in place, so the
 * server loads it without starting an analysis of its own. */
static int make_run(const char *dir)
{
    nnp_options_t o;
    nnp_analyse_options_t ao;
    nnp_session_t *s;
    nnp_op_t op;
    uint64_t base;

    if (nnp_options_init(&o) != NNP_OK)
        return -1;
    snprintf(o.output_path, sizeof(o.output_path), "%s", dir);
    if (nnp_session_create(&o, &s) != NNP_OK)
        return -1;
    base = nnp_clock_ns();
    memset(&op, 0, sizeof(op));
    for (uint64_t step = 1; step <= RUN_STEPS; step++) {
        uint64_t t0 = base + step * STEP_NS;
        nnp_step_begin_at(step, 0, t0);
        op.name = nnp_intern("Default/net/Conv2D-op1");
        op.type = nnp_intern("Conv2D");
        op.input_shapes = nnp_intern(step % 2 ? "8,3,32,32;16,3,3,3" : "4,3,32,32;16,3,3,3");
        nnp_op_at(&op, t0 + STEP_NS / 10, t0 + STEP_NS / 4);
        op.name = nnp_intern("Default/net/AllReduce-op2");
        op.type = nnp_intern("AllReduce");
        op.input_shapes = 0;
        nnp_op_at(&op, t0 + STEP_NS / 4, t0 + STEP_NS / 3);
        nnp_step_end_at(step, 0, t0 + STEP_NS / 2);
    }
    if (nnp_session_destroy(s) != NNP_OK || nnp_analyse_options_init(&ao) != NNP_OK)
        return -1;
    ao.quiet = true;
    ao.jobs = 1;
    return nnp_offline_analyse(dir, &ao) == NNP_OK ? 0 : -1;
}

/* Sends req (n bytes) then tail on a new connection, ends the sending side, and reads the
 * answer until the server closes. *kept_out: the bytes of the answer kept in g_answer (0
 * when none came). Returns *kept_out; -1 when the server could not be reached; -2 when it
 * had not closed after wait_s. */
static long exchange(const void *req, size_t n, const char *tail, double wait_s, size_t *kept_out)
{
    struct sockaddr_in a;
    struct pollfd pfd;
    double deadline = mono_s() + wait_s;
    size_t kept = 0, sent = 0;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    *kept_out = 0;
    if (fd < 0)
        return -1;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)g_port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(fd);
        return -1;
    }
    /* A server that answers before reading everything may close early: EPIPE/ECONNRESET
     * end the sending, not the input. */
    while (sent < n) {
        ssize_t k = send(fd, (const char *)req + sent, n - sent, MSG_NOSIGNAL);
        if (k <= 0)
            break;
        sent += (size_t)k;
    }
    if (sent == n && tail)
        (void)!send(fd, tail, strlen(tail), MSG_NOSIGNAL);
    shutdown(fd, SHUT_WR);
    pfd.fd = fd;
    pfd.events = POLLIN;
    for (;;) {
        char buf[16384];
        double left = deadline - mono_s();
        ssize_t k;
        int ready;
        if (left <= 0) {
            close(fd);
            *kept_out = kept;
            return -2;
        }
        /* libFuzzer's timer signal (-timeout) interrupts the wait: wait again. */
        ready = poll(&pfd, 1, (int)(left * 1000) + 1);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready == 0)
            continue; /* the deadline check above ends it */
        if (ready < 0) {
            close(fd);
            return -1;
        }
        k = recv(fd, buf, sizeof(buf), 0);
        if (k == 0 || (k < 0 && errno == ECONNRESET))
            break;
        if (k < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            break;
        }
        if (kept < ANSWER_KEEP) {
            size_t take = (size_t)k < ANSWER_KEEP - kept ? (size_t)k : ANSWER_KEEP - kept;
            memcpy(g_answer + kept, buf, take);
            kept += take;
        }
    }
    close(fd);
    *kept_out = kept;
    return (long)kept;
}

/* GETs path until it answers 200 (the run is loaded) or READY_WAIT_S pass. */
static int wait_ready(const char *path)
{
    char req[512];
    double end = mono_s() + READY_WAIT_S;
    snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", path);
    while (mono_s() < end) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        size_t kept;
        long n = exchange(req, strlen(req), NULL, ALIVE_WAIT_S, &kept);
        if (n > 12 && memcmp(g_answer, "HTTP/1.1 200", 12) == 0)
            return 0;
        nanosleep(&ts, NULL);
    }
    return -1;
}

static int write_text(const char *rel, const char *text)
{
    return nnp_fuzz_write(rel, text, strlen(text));
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char root[4096], run[4096], cache[4096], p[4096], target[4096];
    nnp_server_config_t cfg;
    (void)argc;
    (void)argv;
    if (nnp_fuzz_setup("http") != 0 || nnp_fuzz_mkdir("root") != 0 ||
        nnp_fuzz_mkdir("outside") != 0 || write_text("outside/secret.txt", SECRET "\n") != 0 ||
        !nnp_fuzz_path(root, sizeof(root), "root") ||
        !nnp_fuzz_path(run, sizeof(run), "root/run1") ||
        !nnp_fuzz_path(cache, sizeof(cache), "cache") ||
        !nnp_fuzz_path(p, sizeof(p), "root/link_out") ||
        !nnp_fuzz_path(target, sizeof(target), "outside")) {
        fprintf(stderr, "fuzz_http: cannot prepare the served directory\n");
        exit(1);
    }
    if (symlink(target, p) != 0 || make_run(run) != 0) {
        fprintf(stderr, "fuzz_http: cannot record and analyse the served run\n");
        exit(1);
    }
    if (!nnp_fuzz_path(p, sizeof(p), "root/secret_link.txt") ||
        !nnp_fuzz_path(target, sizeof(target), "outside/secret.txt") || symlink(target, p) != 0) {
        fprintf(stderr, "fuzz_http: cannot plant the link to the secret\n");
        exit(1);
    }
    nnp_server_config_init(&cfg);
    cfg.root = root;
    cfg.port = 0;
    cfg.cache_root = cache;
    cfg.analyse_exe = "/bin/false"; /* the run is analysed already; nothing else must be */
    if (nnp_server_start(&cfg, &g_server) != NNP_OK) {
        fprintf(stderr, "fuzz_http: the server did not start: %s\n", nnp_last_error());
        exit(1);
    }
    g_port = nnp_server_port(g_server);
    if (wait_ready("/api/overview?run=run1") != 0) {
        fprintf(stderr, "fuzz_http: the served run did not load within %d s\n", READY_WAIT_S);
        exit(1);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char alive[] = "GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    size_t kept;
    long n;
    if (size > REQUEST_MAX)
        return 0;
    n = exchange(data, size, HEAD_END, ANSWER_WAIT_S, &kept);
    nnp_fuzz_check(n != -1);
    /* What came starts with a status line, and never carries the secret. */
    nnp_fuzz_check(kept == 0 || (kept >= 9 && memcmp(g_answer, "HTTP/1.", 7) == 0));
    /* An answer may repeat what the request said (an error naming a bad argument): the
     * secret counts only when the request did not carry it (libFuzzer learns the string
     * from this very comparison and inserts it). */
    if (!memmem(data, size, SECRET, strlen(SECRET)))
        nnp_fuzz_check(!memmem(g_answer, kept, SECRET, strlen(SECRET)));
    /* Still serving. */
    n = exchange(alive, strlen(alive), NULL, ALIVE_WAIT_S, &kept);
    nnp_fuzz_check(n > 12 && memcmp(g_answer, "HTTP/1.1 200", 12) == 0);
    return 0;
}
