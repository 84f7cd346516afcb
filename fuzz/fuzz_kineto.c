/* fuzz_kineto.c - libFuzzer harness for the PyTorch profiler (Kineto) importer
 * (src/read/import_kineto.c) and HTA's analyses on what it imports (src/analyse/hta*.c).
 * The first input byte picks the mode: whether the rest is written gzip-compressed (so
 * mutations reach the JSON scanner through zlib), written as is under a .gz name (zlib's
 * damaged-stream paths), or as a plain trace; and whether HTA's analyses run on the model.
 * The file goes to the harness's directory (fuzz/harness.h: RAM-backed unless TMPDIR says
 * otherwise); an imported model is checked against the importers' contract, and its
 * operator table (src/analyse/op_table.c: key_averages()' rules for torch's traces) is
 * built. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "analyse/hta.h"
#include "analyse/op_table.h"
#include "harness.h"
#include "model/model.h"
#include "nnprof/nnprof.h"
#include "read/importers.h"
#include "util/util.h"

#define MODE_GZIP    0x01u /* gzip-compress the input before writing it */
#define MODE_GZ_NAME 0x02u /* name the file .gz (zlib reads a plain file directly) */
#define MODE_HTA     0x04u /* run HTA's analyses on the imported model */
#define PATH_BUF     4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every value read from the model is folded in here, so no read is optimised away. */
static volatile uint64_t sink;

NNP_FUZZ_INITIALIZE("kineto", NULL);

static int write_input(const char *path, const uint8_t *data, size_t size, bool gzip)
{
    if (gzip) {
        gzFile z = gzopen(path, "wb");
        int ok;
        if (!z)
            return -1;
        ok = size == 0 || gzwrite(z, data, (unsigned)size) == (int)size;
        return gzclose(z) == Z_OK && ok ? 0 : -1;
    } else {
        FILE *f = fopen(path, "wb");
        size_t done;
        if (!f)
            return -1;
        done = size ? fwrite(data, 1, size, f) : 0;
        return fclose(f) == 0 && done == size ? 0 : -1;
    }
}

/* key_averages()' table of the trace: ops, annotations, steps and launches nested. */
static void run_op_table(const nnp_model_t *m)
{
    nnp_op_row_t *rows = NULL;
    size_t n = 0;
    if (nnp__op_table(m, false, 0, 0, 0, &rows, &n) != NNP_OK)
        return;
    for (size_t i = 0; i < n; i++)
        sink += rows[i].count + (uint64_t)rows[i].self_ns;
    nnp__free(rows);
}

static void run_hta(const nnp_model_t *m)
{
    char out[PATH_BUF];
    nnp_hta_t *h = NULL;
    if (!nnp_fuzz_path(out, sizeof(out), "out") || !nnp__hta_applies(m) ||
        nnp__hta_create(out, &h) != NNP_OK)
        return;
    if (nnp__hta_add_rank(h, m) == NNP_OK)
        (void)nnp__hta_finish(h);
    nnp__hta_destroy(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[PATH_BUF];
    nnp_model_t m;
    unsigned mode;
    if (size < 1)
        return 0;
    mode = data[0];
    data++;
    size--;
    if (!nnp_fuzz_path(path, sizeof(path),
                       mode & (MODE_GZIP | MODE_GZ_NAME) ? "in.pt.trace.json.gz"
                                                         : "in.pt.trace.json") ||
        write_input(path, data, size, (mode & MODE_GZIP) != 0) != 0)
        return 0;
    if (nnp__model_init(&m) != NNP_OK)
        return 0;
    if (nnp__importer_kineto.import(path, &m) == NNP_OK && nnp__model_finish(&m) == NNP_OK) {
        nnp_fuzz_check_model(&m);
        sink += nnp__model_rows(&m) + (uint64_t)m.info.rank_id;
        for (size_t i = 0; i < m.kernels.t.n; i++)
            sink += (uint64_t)(m.kernels.end_ns[i] - m.kernels.start_ns[i]) + m.kernels.launch[i];
        run_op_table(&m);
        if (mode & MODE_HTA)
            run_hta(&m);
    }
    nnp__model_fini(&m);
    unlink(path);
    return 0;
}
