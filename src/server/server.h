/* server.h - `nnprof ui`: a local, read-only HTTP server of the UI pages (embedded
 * assets) and their JSON API (api.h) over the runs found under a directory (runs.h).
 * Built on libmicrohttpd (http.c), or a stub that explains when the build had none. */
#ifndef NNP_SERVER_SERVER_H
#define NNP_SERVER_SERVER_H

#include <stdbool.h>

#include "nnprof/nnprof.h"

/* Connections served at once; more get 503 until one closes (a browser opens <= 6). */
#define NNP_SERVER_MAX_CONNECTIONS 128
/* Worker threads of the HTTP server. */
#define NNP_SERVER_THREADS 4
/* Bytes of request line + headers one connection may use (MHD answers larger requests
 * with 431/414 and closes). */
#define NNP_SERVER_REQUEST_MAX (16u * 1024u)
/* Seconds an idle connection is kept. */
#define NNP_SERVER_IDLE_TIMEOUT_S 30

typedef struct nnp_server nnp_server_t;

typedef struct nnp_server_config {
    const char *root;        /* served directory */
    const char *host;        /* address to bind, default "127.0.0.1" */
    int port;                /* 0: any free port (see nnp_server_port) */
    const char *cache_root;  /* NULL: a .nnprof_ui folder in each run */
    const char *analyse_exe; /* the nnprof binary that runs `analyse` */
    bool reanalyse;          /* ignore earlier results and caches */
    unsigned max_connections;
    unsigned threads;
} nnp_server_config_t;

void nnp_server_config_init(nnp_server_config_t *c);
/* True when the build embedded the web pages (node was found at build time). */
bool nnp_server_has_assets(void);
/* Scans root, binds and starts serving in background threads. NNP_OK; NNP_ENOTSUP when
 * built without libmicrohttpd; NNP_EIO when the address cannot be bound (message says). */
int nnp_server_start(const nnp_server_config_t *c, nnp_server_t **out);
/* The port actually bound. */
int nnp_server_port(const nnp_server_t *s);
/* Number of runs found. */
unsigned nnp_server_runs(const nnp_server_t *s);
/* Stops serving, ends running analyses, frees everything. NULL is a no-op. */
void nnp_server_destroy(nnp_server_t *s);

/* `nnprof report`: writes one self-contained HTML file (pages' script, style and every
 * page's data inlined; opens from file:// without network) for the runs under dir
 * (analysed into cache_root, or each run's cache, when needed). rank < 0: every rank of
 * up to NNP_REPORT_MAX_RANKS, else that rank only. run_id NULL: every run found. */
#define NNP_REPORT_MAX_RANKS 8
int nnp_report_write(const char *dir, const char *run_id, int rank, const char *cache_root,
                     const char *analyse_exe, const char *out_path);

#endif /* NNP_SERVER_SERVER_H */
