/* foreign.h - conventions shared by the importers of other tools' data (CANN msprof,
 * torch_npu, Kineto): see foreign.c. Internal to src/read/. */
#ifndef NNP_FOREIGN_H
#define NNP_FOREIGN_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

/* Decimal µs text to exact integer ns ("0.005" is 5 ns; digits past the ns round half up). */
bool nnp__foreign_us_text_ns(const char *s, int64_t *out);
/* Microseconds (a JSON number, or a string as newer CANN and torch_npu write) to integer ns;
 * a number is first turned back into its shortest round-trip text, so no value is rounded
 * twice. False when absent or not a time. */
bool nnp__foreign_json_us_ns(const cJSON *v, int64_t *out);
/* An integer from a number or a decimal string ("N/A" and others are false). */
bool nnp__foreign_json_int(const cJSON *v, int64_t *out);
/* An object's member as cJSON_GetObjectItemCaseSensitive finds it (the first with that exact
 * key, NULL for a NULL or non-object o), comparing first bytes before calling strcmp: an
 * importer looks up several keys of every one of millions of events. */
const cJSON *nnp__foreign_get(const cJSON *o, const char *key);
/* The first of several spellings of a key, NULL when none is present. */
const cJSON *nnp__foreign_get_any(const cJSON *o, const char *const *keys);
/* Kind (nnp_comm_kind_t) of a communication op from its name, case-insensitively. */
uint32_t nnp__foreign_comm_kind(const char *name);
/* Whether an Ascend hardware task type is compute (msprof's "Computing"): the table in
 * docs/IMPORT.md, "Ascend task types". */
bool nnp__ascend_is_compute_task(const char *type);

/* A map from the (pid, tid, ts) where a flow ends (the device task it points at) to the
 * flow's id, for linking tasks to their launches; also any hashed key to a 64-bit value.
 * Zero-initialise; nnp__flow_fini frees. Memory grows with the entries, not the file. */
typedef struct nnp_flow_slot {
    uint64_t key, id;
} nnp_flow_slot_t;

typedef struct nnp_flow_map {
    nnp_flow_slot_t *v;
    size_t cap, n;
} nnp_flow_map_t;

uint64_t nnp__flow_key(uint64_t pid, uint64_t tid, int64_t ts_ns);
/* Sets key's id (replacing an earlier one). NNP_OK or NNP_ENOMEM. */
int nnp__flow_put(nnp_flow_map_t *f, uint64_t key, uint64_t id);
/* key's id, 0 when absent. */
uint64_t nnp__flow_get(const nnp_flow_map_t *f, uint64_t key);
void nnp__flow_fini(nnp_flow_map_t *f);

struct nnp_json_stream_report;
/* Logs what streaming path met (no array, a file or gzip stream cut short, invalid
 * events), each as one warning prefixed by who ("kineto import"). */
void nnp__foreign_log_stream(const char *who, const char *path,
                             const struct nnp_json_stream_report *rep);

#endif /* NNP_FOREIGN_H */
