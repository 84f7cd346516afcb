/* fuzz_mindspore.c - libFuzzer harness for the MindSpore profiler-files importer
 * (src/read/import_mindspore.c). The input is one or more files (harness.h): each part's
 * first byte picks the file kind from the table below, the rest is its content. An input
 * with neither a step trace nor a timeline (the files that name a rank) gets a small valid
 * timeline, so every other kind is reached alone too. The directory is imported into a
 * fresh model, which is finished, checked and freed; the files are removed afterwards.
 * A new file kind the importer reads is one more line in `files`. */
#include <stdint.h>

#include "harness.h"
#include "nnprof/nnprof.h"

#define DIR_NAME "ms"
/* Kinds 0 and 1 name the rank: without them the importer finds nothing. */
#define KIND_STEP_TRACE 0u
#define KIND_TIMELINE   1u

/* Two device ops of the corpus (mindinsight run_2 output_timeline_data_1.txt), named in
 * framework_raw seeds too, so op typing runs. */
static const char default_timeline[] = "op_name, stream_id, start_time(ms), duration(ms)\n"
                                       "Default/AssignAdd-op142,519,154907895.95956,0.0031\n"
                                       "Default/TransData-op118,519,154907895.96517,0.04664\n";

static const char *const files[] = {
    DIR_NAME "/step_trace_raw_0_detail_time.csv",
    DIR_NAME "/output_timeline_data_0.txt",
    DIR_NAME "/framework_raw_0.csv",
    DIR_NAME "/minddata_pipeline_raw_0.csv",
    DIR_NAME "/profiler_info_0.json",
    DIR_NAME "/host_info_0.csv",
};
#define N_FILES (sizeof(files) / sizeof(files[0]))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

NNP_FUZZ_INITIALIZE("mindspore", DIR_NAME);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint32_t mask = nnp_fuzz_write_parts(files, N_FILES, data, size);
    if (!(mask & ((1u << KIND_STEP_TRACE) | (1u << KIND_TIMELINE))) &&
        nnp_fuzz_write(files[KIND_TIMELINE], default_timeline, sizeof(default_timeline) - 1) == 0)
        mask |= 1u << KIND_TIMELINE;
    nnp_fuzz_import(&nnp__importer_mindspore, DIR_NAME);
    nnp_fuzz_remove_parts(files, N_FILES, mask);
    return 0;
}
