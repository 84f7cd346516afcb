/* ascend.h - helpers shared by the importers of Ascend tools' data (CANN msprof,
 * torch_npu): see ascend.c. Internal to src/read/. */
#ifndef NNP_ASCEND_H
#define NNP_ASCEND_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

/* Decimal µs text to exact integer ns ("0.005" is 5 ns). */
bool nnp__ascend_us_text_ns(const char *s, int64_t *out);
/* Microseconds (a JSON number, or a string in newer CANN) to integer ns; a number is first
 * turned back into its shortest round-trip text, so no value is rounded twice. */
bool nnp__ascend_json_us_ns(const cJSON *v, int64_t *out);
/* An integer from a number or a decimal string ("N/A" and others are false). */
bool nnp__ascend_json_int(const cJSON *v, int64_t *out);
/* The first of several spellings of a key, NULL when none is present. */
const cJSON *nnp__ascend_get_any(const cJSON *o, const char *const *keys);
/* Whether a hardware task type is compute (msprof's "Computing"). */
bool nnp__ascend_is_compute_task(const char *type);
/* Kind (nnp_comm_kind_t) of a communication op from its name, case-insensitively. */
uint32_t nnp__ascend_comm_kind(const char *name);

#endif /* NNP_ASCEND_H */
