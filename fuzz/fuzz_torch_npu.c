/* fuzz_torch_npu.c - libFuzzer harness for the torch_npu / msprof-analyze importer
 * (src/read/import_torch_npu.c). The input is one or more files (harness.h): each part's
 * first byte picks the file kind from the table below, the rest is its content; every
 * kind is an input on its own, and together they reach the cross-checks (step ids of
 * step_trace_time.csv against the trace's steps, communication.json only when the trace
 * has no comms). The directory is imported into a fresh model, which is finished,
 * checked and freed; the files are removed afterwards. A new file kind is one more line. */
#include <stdint.h>

#include "harness.h"
#include "nnprof/nnprof.h"

#define DIR_NAME "ASCEND_PROFILER_OUTPUT"

static const char *const files[] = {
    DIR_NAME "/trace_view.json",
    DIR_NAME "/kernel_details.csv",
    DIR_NAME "/step_trace_time.csv",
    DIR_NAME "/communication.json",
    DIR_NAME "/cluster_step_trace_time.csv",
    DIR_NAME "/cluster_communication.json",
};
#define N_FILES (sizeof(files) / sizeof(files[0]))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

NNP_FUZZ_INITIALIZE("torch_npu", DIR_NAME);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint32_t mask = nnp_fuzz_write_parts(files, N_FILES, data, size);
    if (mask)
        nnp_fuzz_import(&nnp__importer_torch_npu, DIR_NAME);
    nnp_fuzz_remove_parts(files, N_FILES, mask);
    return 0;
}
