/* fuzz_cann.c - libFuzzer harness for the CANN msprof importer (src/read/import_cann.c).
 * The input is one or more files (harness.h): each part's first byte picks the file kind
 * from the table below, the rest is its content. One PROF_* directory holds both layouts:
 * device_0/timeline/msprof_*.json (older CANN; two files, so events repeated across files
 * reach the de-duplication) and mindstudio_profiler_output/msprof_*.json (newer), which
 * share device_0's info.json.0 and start_info.0. Each layout with a timeline is imported
 * into a fresh model; an input of info files alone gets a small valid timeline, and one
 * with an info.json.0 also goes through find() (which reads the rank from it). Models are
 * finished, checked and freed, and the files removed afterwards. */
#include <stdint.h>

#include "harness.h"
#include "nnprof/nnprof.h"

#define PROF_DIR "PROF_000001_20230818142704322_FUZZ"
#define DEV_DIR  PROF_DIR "/device_0"
#define TL_DIR   DEV_DIR "/timeline"
#define NEW_DIR  PROF_DIR "/mindstudio_profiler_output"

enum kind { K_TL1, K_TL2, K_INFO, K_START, K_NEW, N_KINDS };
/* Inputs find() may return here: one per layout. */
#define MAX_FOUND 4

static const char *const files[N_KINDS] = {
    [K_TL1] = TL_DIR "/msprof_0_1_1.json",
    [K_TL2] = TL_DIR "/msprof_0_1_2.json",
    [K_INFO] = DEV_DIR "/info.json.0",
    [K_START] = DEV_DIR "/start_info.0",
    [K_NEW] = NEW_DIR "/msprof_20230818142704.json",
};

/* One task, one step and one communication op, from the corpus (mindinsight
 * PROF_000001_20230818142704322, msprof_0_2_1.json), trimmed to the keys read. */
static const char default_timeline[] =
    "[{\"name\":\"process_name\",\"pid\":3,\"tid\":0,\"args\":{\"name\":\"Ascend Hardware\"},"
    "\"ph\":\"M\"},\n"
    "{\"name\":\"thread_name\",\"pid\":3,\"tid\":10036,\"args\":{\"name\":\"Step Trace(Model "
    "ID:2)\"},\"ph\":\"M\"},\n"
    "{\"name\":\"process_name\",\"pid\":1003611,\"tid\":0,\"args\":{\"name\":\"HCCL\"},"
    "\"ph\":\"M\"},\n"
    "{\"name\":\"thread_name\",\"pid\":1003611,\"tid\":70000,\"args\":{\"name\":\"Communication "
    "Kernel\"},\"ph\":\"M\"},\n"
    "{\"name\":\"Iteration 1\",\"pid\":3,\"tid\":10036,\"ts\":56635864652.490005,\"dur\":"
    "47587.81,\"args\":{\"Iteration ID\":1,\"FP Start\":56635864658.62,\"BP End\":"
    "56635868894.72},\"cat\":\"Iteration Time\",\"ph\":\"X\"},\n"
    "{\"name\":\"Default/Cast-op239\",\"pid\":3,\"tid\":2,\"ts\":56635864664.91,\"dur\":23.1,"
    "\"args\":{\"Task Type\":\"AI_CORE\",\"Stream Id\":2},\"ph\":\"X\"},\n"
    "{\"name\":\"Default/AllReduce-op534_0\",\"pid\":1003611,\"tid\":70000,\"ts\":"
    "56635868946.3,\"dur\":41534.3,\"ph\":\"X\"}]\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

NNP_FUZZ_INITIALIZE("cann", TL_DIR, NEW_DIR);

/* find() on the PROF_* directory reads info.json.0 for the rank of each input. */
static void find_inputs(void)
{
    nnp_foreign_input_t found[MAX_FOUND];
    char prof[4096];
    int n;
    if (!nnp_fuzz_path(prof, sizeof(prof), PROF_DIR))
        return;
    n = nnp__importer_cann.find(prof, found, MAX_FOUND);
    nnp_fuzz_check(n >= 0 && n <= MAX_FOUND);
    for (int i = 0; i < n; i++)
        nnp_fuzz_check(found[i].path[0] != '\0' && found[i].rank >= -1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint32_t old_layout = (1u << K_TL1) | (1u << K_TL2), new_layout = 1u << K_NEW;
    uint32_t mask = nnp_fuzz_write_parts(files, N_KINDS, data, size);

    if (!(mask & (old_layout | new_layout)) &&
        nnp_fuzz_write(files[K_TL1], default_timeline, sizeof(default_timeline) - 1) == 0)
        mask |= 1u << K_TL1;
    if (mask & (1u << K_INFO))
        find_inputs();
    if (mask & old_layout)
        nnp_fuzz_import(&nnp__importer_cann, DEV_DIR);
    if (mask & new_layout)
        nnp_fuzz_import(&nnp__importer_cann, NEW_DIR);
    nnp_fuzz_remove_parts(files, N_KINDS, mask);
    return 0;
}
