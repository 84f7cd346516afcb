/* foreign.c - conventions that importers of other tools' data share (foreign.h): µs times
 * as exact ns, integers that may be strings, keys spelt several ways, a communication op's
 * kind from its name, and which Ascend hardware task types are compute. Used by the CANN
 * msprof, torch_npu and Kineto importers, so that they read and classify alike. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnprof/nnprof.h"
#include "read/foreign.h"
#include "read/json_stream.h"
#include "util/util.h"

/* ns per us: Chrome-trace files write ts/dur in us with up to 3 decimals (formats.md 1.4). */
#define NS_PER_US    1000
#define US_DECIMALS  3
#define NUM_TEXT_MAX 64
/* Shortest round-trip text of a double needs at most 17 significant digits (IEEE 754). */
#define DBL_MIN_DIGITS 15
#define DBL_MAX_DIGITS 17
/* Largest |time| in us accepted from a JSON number: 9e15 us (285 years) holds wall-clock
 * (Kineto, torch_npu: ~1.7e15) and device clocks, and keeps ns within int64. */
#define MAX_US 9e15

/* Microseconds (a JSON number, or a string in newer CANN: formats.md 1.4) to integer ns.
 * The decimal text is converted digit by digit, so "0.005" is 5 ns exactly; a number is
 * first turned back into its shortest round-trip text (what the writer printed), which
 * avoids a second rounding in double arithmetic. Digits past ns round half up. */
bool nnp__foreign_us_text_ns(const char *s, int64_t *out)
{
    return nnp__parse_decimal_ns(s, US_DECIMALS, out);
}

/* %.15g writes no exponent for magnitudes in [1e-4, 1e15) (C11 7.21.6.1, the g style). */
#define G15_MIN 1e-4
#define G15_MAX 1e15

/* A plain decimal text ("-12.345": no exponent) with at most DBL_MIN_DIGITS significant
 * digits, of a value %.15g prints without an exponent. */
static bool short_plain_decimal(const char *s, double v)
{
    int digits = 0;
    bool leading = true;
    if (v != 0.0 && (fabs(v) < G15_MIN || fabs(v) >= G15_MAX))
        return false;
    if (*s == '-')
        s++;
    for (; *s; s++) {
        if (*s == '.')
            continue;
        if (*s < '0' || *s > '9')
            return false;
        if (leading && *s == '0')
            continue;
        leading = false;
        digits++;
    }
    return digits <= DBL_MIN_DIGITS;
}

bool nnp__foreign_json_us_ns(const cJSON *v, int64_t *out)
{
    char buf[NUM_TEXT_MAX];
    if (cJSON_IsString(v) && v->valuestring)
        return nnp__foreign_us_text_ns(v->valuestring, out);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || fabs(v->valuedouble) > MAX_US)
        return false;
    /* The number's own text (json_tree.h keeps it for streamed events) gives the same ns
     * as the shortest round-trip text below when it has at most 15 significant digits and
     * %.15g would not use an exponent: then that text is its value, without printf. */
    if (v->valuestring && short_plain_decimal(v->valuestring, v->valuedouble))
        return nnp__foreign_us_text_ns(v->valuestring, out);
    for (int p = DBL_MIN_DIGITS; p <= DBL_MAX_DIGITS; p++) {
        snprintf(buf, sizeof(buf), "%.*g", p, v->valuedouble);
        if (strtod(buf, NULL) == v->valuedouble || p == DBL_MAX_DIGITS)
            break;
    }
    if (strchr(buf, 'e') || strchr(buf, 'E')) { /* tiny or huge: no exact text to keep */
        *out = llround(v->valuedouble * NS_PER_US);
        return true;
    }
    return nnp__foreign_us_text_ns(buf, out);
}

/* An integer from a number or a decimal string ("N/A" and others are false). */
bool nnp__foreign_json_int(const cJSON *v, int64_t *out)
{
    /* Out-of-range doubles would make the cast undefined: 2^62 is far above any id. */
    if (cJSON_IsNumber(v) && isfinite(v->valuedouble) && fabs(v->valuedouble) < 0x1p62) {
        *out = (int64_t)v->valuedouble;
        return true;
    }
    if (cJSON_IsString(v) && v->valuestring && *v->valuestring) {
        char *end;
        long long x;
        errno = 0;
        x = strtoll(v->valuestring, &end, 10);
        if (*end == '\0' && errno != ERANGE) { /* "99999999999999999999" is not LLONG_MAX */
            *out = x;
            return true;
        }
    }
    return false;
}

const cJSON *nnp__foreign_get(const cJSON *o, const char *key)
{
    if (!o || !key)
        return NULL;
    for (const cJSON *c = o->child; c; c = c->next)
        if (c->string && c->string[0] == key[0] && strcmp(c->string, key) == 0)
            return c;
    return NULL;
}

/* The first of several spellings of a key (versions differ in case: "Stream Id" in the
 * hardware tasks, "stream id" in HCCL tasks). */
const cJSON *nnp__foreign_get_any(const cJSON *o, const char *const *keys)
{
    for (; o && *keys; keys++) {
        const cJSON *v = nnp__foreign_get(o, *keys);
        if (v)
            return v;
    }
    return NULL;
}

/* Compute task types (formats.md 2.3, MSP section_calculator): these are msprof's own
 * "Computing". Every other hardware task (NOTIFY_*, EVENT_*, MEMCPY_ASYNC, REDUCE_ASYNC*,
 * ...) is synchronisation, copying or the data movement of an HCCL op, which msprof counts
 * inside the op's span and not as compute. */
bool nnp__ascend_is_compute_task(const char *t)
{
    /* "Other": older CANN (torch_npu 2023) types AI Core kernels whose type it did not
     * resolve so; its own Overlap Analysis counts them as Computing (the corpus trace_view:
     * the first Computing event is the first "Other" task, to the ns). */
    static const char *const types[] = {
        "AI_CORE", "AI_VECTOR_CORE", "AI_CPU", "FFTS+", "MIX_AIC", "MIX_AIV", "AIV", "Other", NULL};
    for (const char *const *p = types; *p; p++)
        if (strcmp(t, *p) == 0)
            return true;
    return false;
}

/* Kind of a communication op from its name ("Default/AllReduce-op534_0",
 * "hcom_allReduce__123_1", "ncclKernel_AllGather_RING_LL_Sum_float", PyTorch's collective
 * names "all_to_all", "_reduce_scatter_base"), case-insensitively; "reduce" alone is tried
 * last so that allreduce and reducescatter win. */
uint32_t nnp__foreign_comm_kind(const char *name)
{
    static const struct {
        const char *needle;
        nnp_comm_kind_t kind;
    } map[] = {{"allreduce", NNP_COMM_ALLREDUCE},
               {"all_reduce", NNP_COMM_ALLREDUCE},
               {"allgather", NNP_COMM_ALLGATHER},
               {"all_gather", NNP_COMM_ALLGATHER},
               {"reducescatter", NNP_COMM_REDUCESCATTER},
               {"reduce_scatter", NNP_COMM_REDUCESCATTER},
               {"broadcast", NNP_COMM_BROADCAST},
               {"alltoall", NNP_COMM_ALLTOALL},
               {"all_to_all", NNP_COMM_ALLTOALL},
               {"send", NNP_COMM_SEND},
               {"receive", NNP_COMM_RECV},
               {"recv", NNP_COMM_RECV},
               {"barrier", NNP_COMM_BARRIER},
               {"reduce", NNP_COMM_REDUCE}};
    char low[NNP_NAME_MAX];
    size_t n = 0;
    for (; name[n] && n + 1 < sizeof(low); n++)
        low[n] = (char)(name[n] >= 'A' && name[n] <= 'Z' ? name[n] + ('a' - 'A') : name[n]);
    low[n] = '\0';
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strstr(low, map[i].needle))
            return (uint32_t)map[i].kind;
    return NNP_COMM_OTHER;
}

/* ---- flow map: (pid, tid, ts) of a flow's end -> the flow's id ---- */

/* Slots of a new map; it doubles at half full (open addressing, linear probing). */
#define FLOW_INITIAL 1024

uint64_t nnp__flow_key(uint64_t pid, uint64_t tid, int64_t ts_ns)
{
    uint64_t h = pid * 0xD6E8FEB86659FD93ull ^ tid * 0x9E3779B97F4A7C15ull ^
                 (uint64_t)ts_ns * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 31;
    return h ? h : 1; /* 0 marks an empty slot */
}

int nnp__flow_put(nnp_flow_map_t *f, uint64_t key, uint64_t id)
{
    size_t mask, i;
    if ((f->n + 1) * 2 > f->cap) {
        size_t ncap = f->cap ? f->cap * 2 : FLOW_INITIAL;
        nnp_flow_slot_t *nv = nnp__calloc(ncap, sizeof(nnp_flow_slot_t));
        if (!nv)
            return nnp__fail(NNP_ENOMEM, "out of memory indexing flows");
        for (size_t j = 0; j < f->cap; j++) {
            if (!f->v[j].key)
                continue;
            for (i = f->v[j].key & (ncap - 1); nv[i].key; i = (i + 1) & (ncap - 1))
                ;
            nv[i] = f->v[j];
        }
        nnp__free(f->v);
        f->v = nv;
        f->cap = ncap;
    }
    mask = f->cap - 1;
    for (i = key & mask; f->v[i].key && f->v[i].key != key; i = (i + 1) & mask)
        ;
    if (!f->v[i].key)
        f->n++;
    f->v[i].key = key;
    f->v[i].id = id;
    return NNP_OK;
}

uint64_t nnp__flow_get(const nnp_flow_map_t *f, uint64_t key)
{
    size_t mask = f->cap - 1;
    if (!f->cap)
        return 0;
    for (size_t i = key & mask; f->v[i].key; i = (i + 1) & mask)
        if (f->v[i].key == key)
            return f->v[i].id;
    return 0;
}

void nnp__flow_fini(nnp_flow_map_t *f)
{
    nnp__free(f->v);
    memset(f, 0, sizeof(*f));
}

/* ---- what a streamed file met ---- */

void nnp__foreign_log_stream(const char *who, const char *path, const nnp_json_stream_report_t *rep)
{
    if (rep->no_array)
        NNP_LOG_W("%s: '%s': no top-level array or traceEvents array", who, path);
    if (rep->read_error)
        NNP_LOG_W("%s: '%s': %s stream ends early (%s) after %llu bytes of text: the %llu "
                  "events before are imported",
                  who, path, rep->gzip ? "gzip" : "file", rep->error,
                  (unsigned long long)rep->bytes, (unsigned long long)rep->elements);
    else if (rep->truncated)
        NNP_LOG_W("%s: '%s' is truncated: it ends inside the event array after %llu events "
                  "(byte %llu); the events before are imported",
                  who, path, (unsigned long long)rep->elements, (unsigned long long)rep->bytes);
    if (rep->bad_elements)
        NNP_LOG_W("%s: '%s': %llu events are not valid JSON (first at byte %llu): skipped", who,
                  path, (unsigned long long)rep->bad_elements,
                  (unsigned long long)rep->first_bad_offset);
}
