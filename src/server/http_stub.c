/* http_stub.c - `nnprof ui` when the build found no libmicrohttpd: every call explains
 * what to install. `nnprof report` does not need it and works. */
#include <string.h>

#include "server/assets.h"
#include "server/server.h"
#include "util/util.h"

void nnp_server_config_init(nnp_server_config_t *c)
{
    memset(c, 0, sizeof(*c));
    c->host = "127.0.0.1";
    c->port = 8080;
}

bool nnp_server_has_assets(void)
{
    return nnp__assets[0].path != NULL;
}

int nnp_server_start(const nnp_server_config_t *c, nnp_server_t **out)
{
    (void)c;
    *out = NULL;
    return nnp__fail(NNP_ENOTSUP, "nnprof was built without libmicrohttpd (install "
                                  "libmicrohttpd-dev, e.g. with scripts/bootstrap, and rebuild)");
}

int nnp_server_port(const nnp_server_t *s)
{
    (void)s;
    return 0;
}

unsigned nnp_server_runs(const nnp_server_t *s)
{
    (void)s;
    return 0;
}

void nnp_server_destroy(nnp_server_t *s)
{
    (void)s;
}
