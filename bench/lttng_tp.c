/* lttng_tp.c - instantiates the LTTng-UST probes and tracepoint definitions of
 * lttng_tp.h, linked into bench_record only when CMake found lttng-ust. The one
 * translation unit that defines them (LTTng's rule: exactly one per provider). */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "lttng_tp.h"
