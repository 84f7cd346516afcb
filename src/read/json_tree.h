/* json_tree.h - a fast parser of one JSON value into read-only cJSON nodes that live in an
 * arena (json_stream.c parses every trace event with it). The nodes are cJSON's own
 * struct, so importers read them with cJSON's accessors, but they are never malloc'ed one by
 * one and must never be given to cJSON_Delete or modified: the arena owns them until its
 * next reset. One addition: a number node keeps its source text in valuestring (cJSON leaves
 * it NULL for numbers), so times are read as the decimals written (foreign.c). It accepts
 * and rejects what cJSON 1.7 does (numbers through the same strtod
 * when not a plain decimal, the same escapes, the same nesting limit), so switching parsers
 * changes no imported value (issue 17). */
#ifndef NNP_JSON_TREE_H
#define NNP_JSON_TREE_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* Why nnp__jt_parse returned NULL. */
enum { NNP_JT_OK = 0, NNP_JT_MORE = 1, NNP_JT_BAD = 2, NNP_JT_NOMEM = 3 };

typedef struct nnp_jt_block nnp_jt_block_t;

/* The arena: blocks kept across resets, so a stream of events allocates once. */
typedef struct nnp_jt {
    nnp_jt_block_t *head, *cur;
} nnp_jt_t;

void nnp__jt_init(nnp_jt_t *a);
/* Forgets every node (the memory is kept for the next value). */
void nnp__jt_reset(nnp_jt_t *a);
void nnp__jt_fini(nnp_jt_t *a);

/* Parses the JSON value that starts at p (leading whitespace allowed) and ends before end.
 * Returns its root, valid until the next reset, and sets *stop to the byte after it; NULL
 * with *status NNP_JT_MORE when the input ended inside the value (at_eof false: more text
 * may follow), NNP_JT_BAD when it is not JSON as cJSON reads it, NNP_JT_NOMEM. */
const cJSON *nnp__jt_parse(nnp_jt_t *a, const char *p, const char *end, int at_eof,
                           const char **stop, int *status);

#endif /* NNP_JSON_TREE_H */
