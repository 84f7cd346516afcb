/* fuzz_host_info.c - libFuzzer harness for the MindSpore host_info CSV importer
 * (src/read/host_info_csv.c). Byte 0: bit 0 puts two threads in the model first (as when
 * another importer ran before), so the importer's thread map starts from them; the rest
 * is host_info_0.csv. The file is imported into a fresh model, which is finished, checked
 * (harness.h) and freed; the file is removed before the next input. */
#include <stdint.h>

#include "harness.h"
#include "nnprof/nnprof.h"
#include "read/host_info_csv.h"

#define CSV_NAME        "host_info_0.csv"
#define MODE_HAS_THREAD 0x01u
/* The threads put in first: a tid and pid the seed files also use. */
#define SEED_TID 4242u
#define SEED_PID 17u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

NNP_FUZZ_INITIALIZE("host_info", NULL);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const files[] = {CSV_NAME};
    char path[4096];
    nnp_model_t m;
    int rc;

    if (size < 1 || !nnp_fuzz_path(path, sizeof(path), CSV_NAME))
        return 0;
    if (nnp_fuzz_write(CSV_NAME, data + 1, size - 1) != 0 || nnp__model_init(&m) != NNP_OK)
        return 0;
    if ((data[0] & MODE_HAS_THREAD) && (nnp__model_thread(&m, SEED_TID, SEED_PID) == SIZE_MAX ||
                                        nnp__model_thread(&m, SEED_TID + 1, 0) == SIZE_MAX)) {
        nnp__model_fini(&m);
        return 0;
    }
    rc = nnp__import_host_info_csv(path, &m);
    nnp_fuzz_check(rc == NNP_OK || rc == NNP_ECORRUPT || rc == NNP_ENOMEM);
    if (rc == NNP_OK && nnp__model_finish(&m) == NNP_OK)
        nnp_fuzz_check_model(&m);
    nnp__model_fini(&m);
    nnp_fuzz_remove_parts(files, 1, 1u);
    return 0;
}
