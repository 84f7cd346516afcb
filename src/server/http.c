/* http.c - the UI's HTTP server on libmicrohttpd (Debian's libmicrohttpd12).
 *
 * Why libmicrohttpd rather than civetweb: it is only an HTTP engine (no file server, CGI,
 * Lua or WebSocket to switch off), has the limits we need as options (connections,
 * per-connection memory for the request line and headers, idle timeout), answers
 * malformed and oversized requests itself with 400/413/414/431, is fuzzed by OSS-Fuzz and
 * used by systemd-journal-remote. Nothing is served from disk by URL: the pages are
 * embedded (assets.h) and the API names runs by id (runs.h), so no URL can reach a file.
 *
 * Rules: GET and HEAD only (405 otherwise); the Host header must name the bound address
 * when bound to loopback (DNS-rebinding defence); NNP_SERVER_MAX_CONNECTIONS at once, more
 * get 503; every answer carries no-sniff / CSP / frame headers. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/api.h"
#include "server/assets.h"
#include "server/safe_open.h"
#include "server/server.h"
#include "server/timeline_export.h"
#include "util/util.h"

/* Connections MHD itself accepts beyond ours, so that the extra ones get a clean 503 from
 * us rather than a closed socket. */
#define CONNECTION_MARGIN 64
#define JSON_MAX_BYTES    (512u * 1024u * 1024u)
#define HOST_CAP          300
#define RANKS_ARG_CAP     64

struct nnp_server {
    struct MHD_Daemon *d;
    nnp_runs_t runs;
    int port;
    bool loopback;
    unsigned max_connections;
    _Atomic unsigned active;
};

static const char csp[] = "default-src 'self'; img-src 'self' data:; style-src 'self' "
                          "'unsafe-inline'; script-src 'self'; object-src 'none'; "
                          "frame-ancestors 'none'";

void nnp_server_config_init(nnp_server_config_t *c)
{
    memset(c, 0, sizeof(*c));
    c->host = "127.0.0.1";
    c->port = 8080;
    c->max_connections = NNP_SERVER_MAX_CONNECTIONS;
    c->threads = NNP_SERVER_THREADS;
}

bool nnp_server_has_assets(void)
{
    return nnp__assets[0].path != NULL;
}

static void headers(struct MHD_Response *r, const char *type, bool no_store)
{
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Content-Security-Policy", csp);
    MHD_add_response_header(r, "X-Frame-Options", "DENY");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    if (no_store)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
}

static void free_cb(void *p)
{
    nnp__free(p);
}

static enum MHD_Result send_buffer(struct MHD_Connection *c, unsigned status, const char *type,
                                   char *body, size_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback(len, body, free_cb);
    enum MHD_Result ret;
    if (!r) {
        nnp__free(body);
        return MHD_NO;
    }
    headers(r, type, true);
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *msg)
{
    nnp_jw_t w;
    char *text;
    size_t len = 0;
    if (nnp__jw_init(&w, -1, false, 1u << 16) != NNP_OK)
        return MHD_NO;
    nnp__jw_obj_begin(&w);
    nnp__jw_key(&w, "error");
    nnp__jw_str(&w, msg);
    nnp__jw_obj_end(&w);
    text = nnp__jw_take(&w, &len);
    nnp__jw_fini(&w);
    if (!text)
        return MHD_NO;
    return send_buffer(c, status, "application/json", text, len);
}

static enum MHD_Result send_asset(struct MHD_Connection *c, const nnp_asset_t *a)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(a->len, (void *)a->data, MHD_RESPMEM_PERSISTENT);
    enum MHD_Result ret;
    if (!r)
        return MHD_NO;
    headers(r, a->mime, false);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

static const char *get_arg(void *ctx, const char *key)
{
    return MHD_lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, key);
}

/* Loopback servers answer only requests naming them: a page on another site cannot
 * reach us through a DNS name rebound to 127.0.0.1. */
static bool host_ok(const nnp_server_t *s, struct MHD_Connection *c)
{
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    char want[HOST_CAP];
    static const char *const names[] = {"127.0.0.1", "localhost", "[::1]"};
    if (!s->loopback)
        return true;
    if (!h)
        return false;
    for (size_t i = 0; i < NNP_ARRAY_LEN(names); i++) {
        snprintf(want, sizeof(want), "%s:%d", names[i], s->port);
        if (strcmp(h, want) == 0 || strcmp(h, names[i]) == 0)
            return true;
    }
    return false;
}

/* ranks=0,2 -> the run's rank data; empty or absent: every rank. */
static int parse_ranks(const nnp_run_t *r, const char *s, nnp_tl_choice_t *ch)
{
    ch->n_ranks = 0;
    if (!s || !*s || strcmp(s, "all") == 0) {
        for (size_t i = 0; i < r->n_ranks && i < NNP_ARRAY_LEN(ch->ranks); i++)
            ch->ranks[ch->n_ranks++] = r->ranks[i];
        return NNP_OK;
    }
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        const nnp_rank_data_t *d;
        if (end == s || v < 0 || v > INT32_MAX || (*end && *end != ','))
            return nnp__fail(NNP_EINVAL, "ranks: expected a list like 0,1");
        d = nnp__run_rank(r, (int)v);
        if (!d)
            return nnp__fail(NNP_ENOENT, "ranks: this run has no rank %ld", v);
        if (ch->n_ranks >= NNP_ARRAY_LEN(ch->ranks))
            return nnp__fail(NNP_EINVAL, "ranks: at most %zu", NNP_ARRAY_LEN(ch->ranks));
        ch->ranks[ch->n_ranks++] = d;
        s = *end ? end + 1 : end;
    }
    return NNP_OK;
}

/* GET /api/timeline_download?run=ID&ranks=0,1&kind=summary|detail&graph=N&merge=1|0 */
static enum MHD_Result timeline_download(nnp_server_t *s, struct MHD_Connection *c)
{
    nnp_run_t *r = nnp__runs_find(&s->runs, get_arg(c, "run"));
    const char *kind = get_arg(c, "kind"), *graph = get_arg(c, "graph");
    const char *merge = get_arg(c, "merge");
    nnp_tl_choice_t ch;
    struct MHD_Response *resp;
    struct stat st;
    char disp[NNP_PATH_MAX], tmp[NNP_PATH_MAX];
    enum MHD_Result ret;
    int fd, rc;

    if (!r)
        return send_error(c, MHD_HTTP_NOT_FOUND, "no such run");
    if (nnp__runs_want(&s->runs, r) != NNP_RUN_READY)
        return send_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "the run is not analysed yet");
    memset(&ch, 0, sizeof(ch));
    ch.summary = !kind || strcmp(kind, "detail") != 0; /* MindInsight's default: summary */
    ch.merge_graphs = !merge || strcmp(merge, "0") != 0;
    ch.graph = -1;
    if (graph && *graph && strcmp(graph, "all") != 0) {
        char *end;
        ch.graph = strtoll(graph, &end, 10);
        if (*end || ch.graph < 0)
            return send_error(c, MHD_HTTP_BAD_REQUEST, "graph: expected a graph id or 'all'");
    }
    if (kind && strcmp(kind, "detail") != 0 && strcmp(kind, "summary") != 0)
        return send_error(c, MHD_HTTP_BAD_REQUEST, "kind: expected summary or detail");
    rc = parse_ranks(r, get_arg(c, "ranks"), &ch);
    if (rc != NNP_OK)
        return send_error(c, rc == NNP_ENOENT ? MHD_HTTP_NOT_FOUND : MHD_HTTP_BAD_REQUEST,
                          nnp_last_error());
    if (ch.n_ranks == 0 || !ch.ranks[0]->trace_rel[0])
        return send_error(c, MHD_HTTP_NOT_FOUND, "this run has no timeline");
    if (nnp__tl_is_plain(&ch)) {
        fd = nnp__safe_open(r->results, ch.ranks[0]->trace_rel, false);
        if (fd < 0)
            return send_error(c, MHD_HTTP_NOT_FOUND, nnp_last_error());
    } else {
        /* Written to an unlinked file in the run's results, streamed from there. */
        if (nnp__path_join(tmp, sizeof(tmp), r->results, ".timeline_XXXXXX") != NNP_OK)
            return send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "results path too long");
        fd = mkstemp(tmp);
        if (fd < 0)
            return send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, strerror(errno));
        unlink(tmp);
        rc = nnp__timeline_export(r, &ch, fd);
        if (rc != NNP_OK) {
            close(fd);
            return send_error(c,
                              rc == NNP_ENOENT || rc == NNP_EPATH ? MHD_HTTP_NOT_FOUND
                                                                  : MHD_HTTP_INTERNAL_SERVER_ERROR,
                              nnp_last_error());
        }
    }
    if (fstat(fd, &st) != 0 || !(resp = MHD_create_response_from_fd((size_t)st.st_size, fd))) {
        close(fd);
        return MHD_NO;
    }
    headers(resp, "application/json", true);
    snprintf(disp, sizeof(disp), "attachment; filename=\"nnprof_timeline_%s_%s.json\"",
             ch.summary ? "summary" : "detail", ch.n_ranks > 1 ? "ranks" : "rank");
    MHD_add_response_header(resp, "Content-Disposition", disp);
    ret = MHD_queue_response(c, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result api(nnp_server_t *s, struct MHD_Connection *c, const char *page)
{
    nnp_api_args_t a = {get_arg, c};
    nnp_jw_t w;
    char *text;
    size_t len = 0;
    int status = 0;

    if (strcmp(page, "timeline_download") == 0)
        return timeline_download(s, c);
    if (nnp__jw_init(&w, -1, false, JSON_MAX_BYTES) != NNP_OK)
        return MHD_NO;
    nnp__api_handle(&s->runs, page, &a, &w, &status);
    nnp__jw_line_end(&w);
    if (w.err != NNP_OK) {
        nnp__jw_fini(&w);
        return send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "answer too large");
    }
    text = nnp__jw_take(&w, &len);
    nnp__jw_fini(&w);
    if (!text)
        return MHD_NO;
    return send_buffer(c, (unsigned)status, "application/json", text, len);
}

/* How many connections were open when c arrived (itself included): the first
 * max_connections at any moment are served, later ones told to retry, whatever order the
 * threads take their requests in. */
static uintptr_t ticket(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? (uintptr_t)ci->socket_context : 0;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    nnp_server_t *s = cls;
    const nnp_asset_t *a;
    (void)version;
    (void)upload;
    (void)upload_size;
    (void)con_cls;

    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED,
                          "read-only server: only GET and HEAD are allowed");
    if (ticket(c) > s->max_connections)
        return send_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "too many connections; retry");
    if (!host_ok(s, c))
        return send_error(c, MHD_HTTP_FORBIDDEN, "Host header does not name this server");
    if (strncmp(url, "/api/", 5) == 0)
        return api(s, c, url + 5);
    a = nnp__asset_find(url);
    if (a)
        return send_asset(c, a);
    if (strcmp(url, "/") == 0)
        return send_error(c, MHD_HTTP_SERVICE_UNAVAILABLE,
                          "nnprof was built without the web pages (node was not found at "
                          "build time: run scripts/bootstrap and rebuild); the JSON API "
                          "under /api/ works");
    return send_error(c, MHD_HTTP_NOT_FOUND, "not found");
}

static void notify(void *cls, struct MHD_Connection *c, void **socket_ctx,
                   enum MHD_ConnectionNotificationCode code)
{
    nnp_server_t *s = cls;
    (void)c;
    if (code == MHD_CONNECTION_NOTIFY_STARTED)
        *socket_ctx = (void *)(uintptr_t)(atomic_fetch_add(&s->active, 1) + 1);
    else
        atomic_fetch_sub(&s->active, 1);
}

/* URL and argument unescaping as MHD's own, except that a %XX decoding to a control
 * character (%00 above all) becomes DEL instead: a NUL would silently cut the path or value
 * short ("/%00/etc/passwd" would read as "/"); DEL matches no route and no run id. */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
    char *out = s;
    (void)cls;
    (void)c;
    for (const char *p = s; *p; p++) {
        unsigned v;
        if (*p == '%' && sscanf(p + 1, "%2x", &v) == 1 && isxdigit((unsigned char)p[1]) &&
            isxdigit((unsigned char)p[2])) {
            *out++ = v < 0x20 || v == 0x7f ? (char)0x7f : (char)v;
            p += 2;
        } else {
            *out++ = *p;
        }
    }
    *out = '\0';
    return (size_t)(out - s);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    char msg[512];
    (void)cls;
    vsnprintf(msg, sizeof(msg), fmt, ap);
    msg[strcspn(msg, "\n")] = '\0';
    NNP_LOG_I("ui: http: %s", msg);
}

int nnp_server_start(const nnp_server_config_t *cfg, nnp_server_t **out)
{
    nnp_server_t *s;
    nnp_runs_config_t rc_cfg;
    struct sockaddr_in a4;
    struct sockaddr_in6 a6;
    struct sockaddr *sa;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
    const char *host = cfg->host ? cfg->host : "127.0.0.1";
    const union MHD_DaemonInfo *info;
    int rc;

    *out = NULL;
    if (cfg->port < 0 || cfg->port > 65535)
        return nnp__fail(NNP_EINVAL, "port %d is not in [0, 65535]", cfg->port);
    memset(&a4, 0, sizeof(a4));
    memset(&a6, 0, sizeof(a6));
    if (strcmp(host, "localhost") == 0)
        host = "127.0.0.1";
    if (inet_pton(AF_INET, host, &a4.sin_addr) == 1) {
        a4.sin_family = AF_INET;
        a4.sin_port = htons((uint16_t)cfg->port);
        sa = (struct sockaddr *)&a4;
    } else if (inet_pton(AF_INET6, host, &a6.sin6_addr) == 1) {
        a6.sin6_family = AF_INET6;
        a6.sin6_port = htons((uint16_t)cfg->port);
        sa = (struct sockaddr *)&a6;
        flags |= MHD_USE_IPv6;
    } else {
        return nnp__fail(NNP_EINVAL, "'%s' is not an IPv4 or IPv6 address", host);
    }
    s = nnp__calloc(1, sizeof(*s));
    if (!s)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    s->loopback = sa->sa_family == AF_INET ? (ntohl(a4.sin_addr.s_addr) >> 24) == 127
                                           : IN6_IS_ADDR_LOOPBACK(&a6.sin6_addr);
    s->max_connections = cfg->max_connections ? cfg->max_connections : NNP_SERVER_MAX_CONNECTIONS;
    memset(&rc_cfg, 0, sizeof(rc_cfg));
    rc_cfg.root = cfg->root;
    rc_cfg.cache_root = cfg->cache_root;
    rc_cfg.analyse_exe = cfg->analyse_exe;
    rc_cfg.reanalyse = cfg->reanalyse;
    rc_cfg.worker = true;
    rc = nnp__runs_init(&s->runs, &rc_cfg);
    if (rc != NNP_OK) {
        nnp__free(s);
        return rc;
    }
    s->d = MHD_start_daemon(
        flags, (uint16_t)cfg->port, NULL, NULL, handle, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
        MHD_OPTION_SOCK_ADDR, sa, MHD_OPTION_THREAD_POOL_SIZE,
        (unsigned)(cfg->threads ? cfg->threads : NNP_SERVER_THREADS), MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)(s->max_connections + CONNECTION_MARGIN), MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)NNP_SERVER_REQUEST_MAX, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)NNP_SERVER_IDLE_TIMEOUT_S, MHD_OPTION_NOTIFY_CONNECTION, notify, s,
        MHD_OPTION_UNESCAPE_CALLBACK, unescape, s, MHD_OPTION_END);
    if (!s->d) {
        nnp__runs_fini(&s->runs);
        nnp__free(s);
        return nnp__fail(NNP_EIO,
                         "cannot listen on %s port %d (in use, or not an address of "
                         "this machine)",
                         host, cfg->port);
    }
    info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : cfg->port;
    *out = s;
    return NNP_OK;
}

int nnp_server_port(const nnp_server_t *s)
{
    return s->port;
}

unsigned nnp_server_runs(const nnp_server_t *s)
{
    return (unsigned)s->runs.n;
}

void nnp_server_destroy(nnp_server_t *s)
{
    if (!s)
        return;
    MHD_stop_daemon(s->d);
    nnp__runs_fini(&s->runs);
    nnp__free(s);
}
