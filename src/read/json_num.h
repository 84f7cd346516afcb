/* json_num.h - integers read back from JSON files (our info.json, profiler_info, other
 * tools' info files), validated before use: a JSON number is a double, and converting one
 * out of range (1e300, NaN from a hand edit) to an integer is undefined behaviour. Every
 * reader of such a number goes through nnp__json_int, which checks type, integrality and
 * range, and names the file, key and value when it refuses one. */
#ifndef NNP_JSON_NUM_H
#define NNP_JSON_NUM_H

#include <cjson/cJSON.h>
#include <stdint.h>

/* What nnp__json_int found. */
typedef enum nnp_json_num {
    NNP_JSON_NUM_ABSENT = 0, /* no such key, or null: *out untouched */
    NNP_JSON_NUM_OK = 1,     /* *out set */
    NNP_JSON_NUM_BAD = -1    /* present but not an integer in [lo, hi]: logged, *out untouched */
} nnp_json_num_t;

/* Reads obj[key] as an integer in [lo, hi].
 *   obj   [in]  the object holding key (may be NULL: absent)
 *   label [in]  the key as messages name it ("platform.cpus"); NULL = key
 *   file  [in]  the file, for messages; NULL: refuse bad values without a message
 *   out   [out] the value, set only on NNP_JSON_NUM_OK
 * A bad value is logged as a warning: "<file>: key '<label>' is <value>, not an integer in
 * [lo, hi]: ignored". Thread-safe. */
nnp_json_num_t nnp__json_int(const cJSON *obj, const char *key, const char *label, int64_t lo,
                             int64_t hi, const char *file, int64_t *out);

#endif /* NNP_JSON_NUM_H */
