/* options_internal.h - what the rest of the library needs from src/core/options.c beyond
 * the public nnp_options_* API: the list of options this platform accepts but cannot
 * collect. The session calls it once at start-up to warn the user and to record the
 * list in info.json, so a trace never silently lacks data the user asked for. */
#ifndef NNP_OPTIONS_INTERNAL_H
#define NNP_OPTIONS_INTERNAL_H

#include <stddef.h>

#include "nnprof/nnprof.h"

/* Most names nnp__options_unsupported() can return: a caller passing an array this big
 * always receives the complete list. */
#define NNP_OPTIONS_UNSUPPORTED_MAX 8

/* Lists the options of *o that are set away from their default but need Ascend hardware
 * this platform (plain CPU) lacks, so nothing will be collected for them: aicore_metrics
 * (!= 0), l2_cache, hbm_ddr, pcie, aicpu, runtime_api and aic_metrics (!= "PipeUtilization").
 *   o      [in]  the options, normally after nnp_options_validate().
 *   names  [out] receives up to cap option names (MindSpore or msprof key spelling); the
 *                strings are static and never freed. May be NULL when cap is 0.
 *   cap    [in]  capacity of names.
 * Returns the number of unsupported options, which may exceed cap (then only the first cap
 * are stored), like snprintf. Thread-safe; never allocates; not for hot paths. */
size_t nnp__options_unsupported(const nnp_options_t *o, const char *names[], size_t cap);

#endif /* NNP_OPTIONS_INTERNAL_H */
