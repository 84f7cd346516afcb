/* assets.h - the web UI's files embedded in the binary: generated at build time by
 * web/build.mjs (esbuild bundle of web/src) into assets_gen.c, or an empty list when the
 * build had no node. Each asset's bytes end with a NUL that `len` does not count. */
#ifndef NNP_SERVER_ASSETS_H
#define NNP_SERVER_ASSETS_H

#include <stddef.h>

typedef struct nnp_asset {
    const char *path; /* URL path, e.g. "/app.js"; NULL ends the list */
    const char *mime;
    const unsigned char *data;
    size_t len;
} nnp_asset_t;

/* The embedded assets, ended by an entry whose path is NULL. */
extern const nnp_asset_t nnp__assets[];

/* The asset served at path (exact match), or NULL. */
const nnp_asset_t *nnp__asset_find(const char *path);

#endif /* NNP_SERVER_ASSETS_H */
