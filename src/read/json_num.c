/* json_num.c - see json_num.h. The range check happens on the double, before any
 * conversion, so no value reaches an integer type unless it fits. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "read/json_num.h"
#include "util/util.h"

/* Room for a value in a message: %.17g of any double, or a short quoted string. */
#define VALUE_TEXT_CAP 64
#define STRING_SHOWN   40
/* %.15g is exact for any 15-digit decimal; %.17g for any double. */
#define SHORTEST_DIGITS   15
#define ROUND_TRIP_DIGITS 17

static void describe(const cJSON *v, char *buf, size_t cap)
{
    if (cJSON_IsNumber(v)) {
        /* The shortest text that reads back as the value: what the file most likely says. */
        for (int prec = SHORTEST_DIGITS; prec <= ROUND_TRIP_DIGITS; prec++) {
            snprintf(buf, cap, "%.*g", prec, v->valuedouble);
            if (strtod(buf, NULL) == v->valuedouble)
                break;
        }
    } else if (cJSON_IsString(v))
        snprintf(buf, cap, "the string \"%.*s\"", STRING_SHOWN, v->valuestring);
    else if (cJSON_IsBool(v))
        snprintf(buf, cap, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else if (cJSON_IsArray(v))
        snprintf(buf, cap, "an array");
    else
        snprintf(buf, cap, "an object");
}

nnp_json_num_t nnp__json_int(const cJSON *obj, const char *key, const char *label, int64_t lo,
                             int64_t hi, const char *file, int64_t *out)
{
    const cJSON *v = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    char text[VALUE_TEXT_CAP];
    double d;

    if (!v || cJSON_IsNull(v))
        return NNP_JSON_NUM_ABSENT;
    d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    /* Compared as doubles: lo and hi convert exactly enough (|bounds| <= 2^63 round to
     * representable doubles, and a value equal to a rounded bound is rechecked below). */
    if (isfinite(d) && d == floor(d) && d >= (double)lo && d <= (double)hi) {
        /* (double)INT64_MAX rounds up to 2^63, which does not fit int64: refuse it. */
        if (d < 9223372036854775808.0) {
            *out = (int64_t)d;
            if (*out >= lo && *out <= hi)
                return NNP_JSON_NUM_OK;
        }
    }
    if (!file)
        return NNP_JSON_NUM_BAD;
    describe(v, text, sizeof(text));
    NNP_LOG_W("%s: key '%s' is %s, not an integer in [%lld, %lld]: ignored", file,
              label ? label : key, text, (long long)lo, (long long)hi);
    return NNP_JSON_NUM_BAD;
}
