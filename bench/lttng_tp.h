/* lttng_tp.h - LTTng-UST tracepoint provider "nnprof_bench" for bench_record: two events
 * with the payload of an nnprof host range (event, module, stage, custom_info ids and the
 * level), so the LTTng and nnprof figures compare the same work. Read several times by
 * <lttng/tracepoint-event.h> (the multi-read guard below is LTTng's idiom, not a bug). */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER nnprof_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./lttng_tp.h"

#if !defined(NNP_BENCH_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define NNP_BENCH_LTTNG_TP_H

#include <stdint.h>

#include <lttng/tracepoint.h>

/* One class, two events: begin and end of a range, as nnp_range_begin/nnp_range_end.
 * clang-format would stair-step the field list, which is one list, so it is left alone. */
// clang-format off
// cppcheck-suppress unknownMacro
LTTNG_UST_TRACEPOINT_EVENT_CLASS(nnprof_bench, range_class,
    LTTNG_UST_TP_ARGS(uint32_t, event, uint32_t, module, uint32_t, stage,
                      uint32_t, custom_info, uint8_t, level),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint32_t, event, event)
        lttng_ust_field_integer(uint32_t, module, module)
        lttng_ust_field_integer(uint32_t, stage, stage)
        lttng_ust_field_integer(uint32_t, custom_info, custom_info)
        lttng_ust_field_integer(uint8_t, level, level)))

LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(nnprof_bench, range_class, nnprof_bench, range_begin,
    LTTNG_UST_TP_ARGS(uint32_t, event, uint32_t, module, uint32_t, stage,
                      uint32_t, custom_info, uint8_t, level))

LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(nnprof_bench, range_class, nnprof_bench, range_end,
    LTTNG_UST_TP_ARGS(uint32_t, event, uint32_t, module, uint32_t, stage,
                      uint32_t, custom_info, uint8_t, level))
// clang-format on

#endif /* NNP_BENCH_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
