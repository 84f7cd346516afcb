/* kineto_time.h - the time base of a PyTorch trace, for the Kineto importer
 * (import_kineto.c; kineto_time.c). Kineto >= PyTorch 2.1 writes every "ts" relative to
 * the top-level "baseTimeNanoseconds" (the wall clock floored to three-month intervals,
 * libkineto's ChromeTraceBaseTime), and writes that member after the events; older Kineto
 * writes wall-clock microseconds and no base. The importer reads each event's ts as it
 * comes and, at the end of the file, adds the base to the rows the file made, so that every
 * trace's times are wall-clock ns whatever its writer, and ranks whose bases differ (a job
 * across an interval's end) still line up. Private to src/read/. */
#ifndef NNP_KINETO_TIME_H
#define NNP_KINETO_TIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "model/model.h"

/* The first row of each timed table that one trace file adds. */
typedef struct nnp_kin_rows {
    size_t ops, steps, markers, calls, kernels, comms, mem;
} nnp_kin_rows_t;

/* Notes where m's timed tables end now (before a file's events are added). */
void nnp__kin_rows_mark(const nnp_model_t *m, nnp_kin_rows_t *first);

/* "baseTimeNanoseconds" as an exact int64 (its text when json_tree.h kept it: 19 digits are
 * more than a double holds). false when v is not a whole number in [0, 2^62). */
bool nnp__kin_base_parse(const cJSON *v, int64_t *out);

/* Adds base_ns to every time of the rows from first on. NNP_OK, or NNP_ECORRUPT (nothing
 * changed) when a time would leave int64. */
int nnp__kin_rows_shift(nnp_model_t *m, const nnp_kin_rows_t *first, int64_t base_ns);

#endif /* NNP_KINETO_TIME_H */
