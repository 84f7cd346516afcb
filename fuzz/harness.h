/* harness.h - what the fuzz targets share (fuzz/harness.c): their LLVMFuzzerInitialize
 * (NNP_FUZZ_INITIALIZE); a private temporary directory per fuzzer process, made once with
 * the target's folders and removed at exit; one input cut into several files; quiet
 * logging that still formats every message; and checks that trap, so libFuzzer keeps the
 * input that broke a contract. Linked into every fuzz_*. */
#ifndef NNP_FUZZ_HARNESS_H
#define NNP_FUZZ_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "read/importers.h"

/* Parts of one input are separated by these bytes (NULs make them impossible in the JSON
 * and CSV files the targets read, and the dictionaries carry them). The first byte of
 * each part picks the file it goes to; the rest is the file's content. */
#define NNP_FUZZ_SEP     "\0--nnp-file--\0"
#define NNP_FUZZ_SEP_LEN 14u
/* Files one input may hold: enough for every file kind an importer reads together. */
#define NNP_FUZZ_MAX_PARTS 8u

typedef struct nnp_fuzz_part {
    unsigned kind; /* the part's first byte */
    const uint8_t *data;
    size_t size;
} nnp_fuzz_part_t;

/* Creates the process's directory under $TMPDIR (else /dev/shm when present, else /tmp)
 * named after target, and makes the library log every message, at every level, into a
 * sink that drops it. Returns 0, or -1 with a message on stderr. Call once, from
 * LLVMFuzzerInitialize. */
int nnp_fuzz_setup(const char *target);
/* nnp_fuzz_setup(target), then each folder of dirs (NULL-terminated) made in the directory.
 * Returns 0, or -1 with a message on stderr. */
int nnp_fuzz_init(const char *target, const char *const *dirs);
/* Defines the target's LLVMFuzzerInitialize: nnp_fuzz_init(target, the folders listed),
 * NULL for none: NNP_FUZZ_INITIALIZE("csv", NULL); NNP_FUZZ_INITIALIZE("cann", A, B);. */
#define NNP_FUZZ_INITIALIZE(target, ...)                                                           \
    int LLVMFuzzerInitialize(int *argc, char ***argv);                                             \
    int LLVMFuzzerInitialize(int *argc, char ***argv)                                              \
    {                                                                                              \
        static const char *const nnp_fuzz_dirs_[] = {__VA_ARGS__, NULL};                           \
        (void)argc;                                                                                \
        (void)argv;                                                                                \
        return nnp_fuzz_init((target), nnp_fuzz_dirs_);                                            \
    }                                                                                              \
    struct nnp_fuzz_initialize_ /* makes the use end with a semicolon */
/* The directory made by nnp_fuzz_setup. */
const char *nnp_fuzz_dir(void);
/* dir/rel into out; false when it does not fit. */
bool nnp_fuzz_path(char *out, size_t cap, const char *rel);
/* Creates dir/rel and its parents. 0 or -1. */
int nnp_fuzz_mkdir(const char *rel);
/* Writes n bytes to dir/rel (created or truncated). 0 or -1. */
int nnp_fuzz_write(const char *rel, const void *buf, size_t n);
/* nnp_fuzz_write, the folders of rel made first. 0 or -1. */
int nnp_fuzz_write_mkdir(const char *rel, const void *buf, size_t n);
/* Removes dir/rel and everything below it (nothing when it does not exist). */
void nnp_fuzz_rmdir(const char *rel);

/* Cuts data into at most cap parts at NNP_FUZZ_SEP; empty parts are left out. Returns
 * the number of parts. */
size_t nnp_fuzz_split(const uint8_t *data, size_t size, nnp_fuzz_part_t *parts, size_t cap);
/* Writes each part of data to files[kind % n_files] (relative to the directory; a later
 * part of the same kind replaces an earlier one). Returns the mask of kinds written
 * (bit k: files[k]); 0 when nothing could be written. n_files <= 32. */
uint32_t nnp_fuzz_write_parts(const char *const *files, size_t n_files, const uint8_t *data,
                              size_t size);
/* Removes the files of mask (as returned above), so no state outlives one input. */
void nnp_fuzz_remove_parts(const char *const *files, size_t n_files, uint32_t mask);

/* Imports dir/rel with imp into a fresh model. The result must be NNP_OK or an import
 * error (NNP_ECORRUPT, NNP_ENOENT, NNP_EINVAL, NNP_ETOOLONG, NNP_ENOMEM); a model imported
 * is finished and checked (nnp_fuzz_check_model). Everything is freed. */
void nnp_fuzz_import(const nnp_importer_t *imp, const char *rel);

/* Traps unless ok: a broken contract is a crash libFuzzer records. */
void nnp_fuzz_check(bool ok);
/* The importers' contract on the model they fill, checked after nnp__model_finish: every
 * span ends at or after its start (or is open), every string id is in the table. */
void nnp_fuzz_check_model(const nnp_model_t *m);

#endif /* NNP_FUZZ_HARNESS_H */
