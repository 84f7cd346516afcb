/* json_simdjson.h - the C interface of json_simdjson.cpp (simdjson's on-demand API), used
 * by bench_import to compare JSON front ends on the same files in the same run. */
#ifndef NNP_BENCH_JSON_SIMDJSON_H
#define NNP_BENCH_JSON_SIMDJSON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The simdjson kernel the on-demand code was compiled for ("haswell", "fallback", ...). */
const char *json_bench_simdjson_kernel(void);

/* Every event of the Chrome-trace array file path, the whole file in memory: fields
 * folded into *sum, events counted. 0, or -1 when simdjson rejects the document. */
int json_bench_simdjson_doc(const char *path, uint64_t *events, uint64_t *sum);

/* One event at a time: a reusable parser and the text of one event. */
typedef struct json_bench_parser json_bench_parser_t;
json_bench_parser_t *json_bench_parser_new(void);
void json_bench_parser_free(json_bench_parser_t *p);
int json_bench_element(json_bench_parser_t *p, const char *text, size_t n, uint64_t *sum);

#ifdef __cplusplus
}
#endif

#endif /* NNP_BENCH_JSON_SIMDJSON_H */
