/* json_extent.h - where one JSON value ends in a byte window, found without parsing it (a
 * byte scanner that tracks string/escape state and bracket depth, with SWAR and SSE2 fast
 * paths). json_stream.c cuts each array element with it, and skips the elements that do not
 * hold a wanted string. Internal to src/read/. */
#ifndef NNP_JSON_EXTENT_H
#define NNP_JSON_EXTENT_H

#include <stdbool.h>
#include <stddef.h>

/* Where the extent scanner stands inside a container or string value; with want set it
 * also notes whether the value holds the JSON string want (or any escape, which could spell
 * it): hit. */
typedef struct nnp_json_extent {
    int depth;
    bool in_str, esc;
    const char *want;
    size_t want_len;
    size_t str_at; /* index (in the scanned block) of the open string's first byte */
    bool hit;
} nnp_json_extent_t;

/* Scans p[0..n) for the end of the value being cut; returns the bytes up to and including
 * its last byte, or n (with *complete false) when it goes on past p + n. */
size_t nnp__json_scan_extent(const unsigned char *p, size_t n, nnp_json_extent_t *x,
                             bool *complete);

#endif
