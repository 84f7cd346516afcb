/* harness.c - see harness.h. Everything here runs in the fuzzer process only; the one
 * piece of global state, the directory's name, is set once and never changes, and the
 * files of one input are removed before the next, so runs cannot influence each other. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "nnprof/nnprof.h"
#include "util/util.h"

#define PATH_BUF 4096
/* File descriptors nftw may keep open while removing the directory. */
#define NFTW_FDS 16
/* RAM-backed, so the targets' file writes cost no disk I/O. */
#define SHM_DIR "/dev/shm"

static char base_dir[PATH_BUF];

static void drop_log(nnp_log_level_t level, const char *msg, void *user)
{
    (void)level;
    (void)msg;
    (void)user;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void remove_dir(void)
{
    if (base_dir[0])
        nftw(base_dir, rm_one, NFTW_FDS, FTW_DEPTH | FTW_PHYS);
}

void nnp_fuzz_rmdir(const char *rel)
{
    char path[PATH_BUF];
    struct stat st;
    if (base_dir[0] && nnp_fuzz_path(path, sizeof(path), rel) && lstat(path, &st) == 0)
        nftw(path, rm_one, NFTW_FDS, FTW_DEPTH | FTW_PHYS);
}

int nnp_fuzz_setup(const char *target)
{
    const char *tmp = getenv("TMPDIR");
    struct stat st;

    if (!tmp || !*tmp)
        tmp = stat(SHM_DIR, &st) == 0 && S_ISDIR(st.st_mode) && access(SHM_DIR, W_OK) == 0 ? SHM_DIR
                                                                                           : "/tmp";
    snprintf(base_dir, sizeof(base_dir), "%s/nnprof-%s-XXXXXX", tmp, target);
    if (!mkdtemp(base_dir)) {
        fprintf(stderr, "%s: cannot create a directory under %s: %s\n", target, tmp,
                strerror(errno));
        base_dir[0] = '\0';
        return -1;
    }
    atexit(remove_dir);
    /* Every message is formatted (its format and arguments are fuzzed too), then dropped. */
    nnp_log_set_handler(drop_log, NULL);
    nnp_log_set_level(NNP_LOG_DEBUG);
    return 0;
}

int nnp_fuzz_init(const char *target, const char *const *dirs)
{
    if (nnp_fuzz_setup(target) != 0)
        return -1;
    for (; *dirs; dirs++)
        if (nnp_fuzz_mkdir(*dirs) != 0) {
            fprintf(stderr, "%s: cannot create %s/%s\n", target, base_dir, *dirs);
            return -1;
        }
    return 0;
}

const char *nnp_fuzz_dir(void)
{
    return base_dir;
}

bool nnp_fuzz_path(char *out, size_t cap, const char *rel)
{
    return nnp__path_join(out, cap, base_dir, rel) == NNP_OK;
}

int nnp_fuzz_mkdir(const char *rel)
{
    char path[PATH_BUF];
    if (!nnp_fuzz_path(path, sizeof(path), rel))
        return -1;
    return nnp__mkdir_p(path, 0700) == NNP_OK ? 0 : -1;
}

int nnp_fuzz_write(const char *rel, const void *buf, size_t n)
{
    char path[PATH_BUF];
    int fd, rc;
    if (!nnp_fuzz_path(path, sizeof(path), rel))
        return -1;
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    rc = n ? nnp__write_all(fd, buf, n) : NNP_OK;
    return close(fd) == 0 && rc == NNP_OK ? 0 : -1;
}

int nnp_fuzz_write_mkdir(const char *rel, const void *buf, size_t n)
{
    char dir[PATH_BUF];
    const char *slash = strrchr(rel, '/');
    if (slash) {
        if ((size_t)(slash - rel) >= sizeof(dir))
            return -1;
        memcpy(dir, rel, (size_t)(slash - rel));
        dir[slash - rel] = '\0';
        if (nnp_fuzz_mkdir(dir) != 0)
            return -1;
    }
    return nnp_fuzz_write(rel, buf, n);
}

size_t nnp_fuzz_split(const uint8_t *data, size_t size, nnp_fuzz_part_t *parts, size_t cap)
{
    size_t n = 0;
    while (size > 0 && n < cap) {
        const uint8_t *sep = memmem(data, size, NNP_FUZZ_SEP, NNP_FUZZ_SEP_LEN);
        size_t len = sep ? (size_t)(sep - data) : size;
        if (len > 0) {
            parts[n].kind = data[0];
            parts[n].data = data + 1;
            parts[n].size = len - 1;
            n++;
        }
        if (!sep)
            break;
        data = sep + NNP_FUZZ_SEP_LEN;
        size -= len + NNP_FUZZ_SEP_LEN;
    }
    return n;
}

uint32_t nnp_fuzz_write_parts(const char *const *files, size_t n_files, const uint8_t *data,
                              size_t size)
{
    nnp_fuzz_part_t parts[NNP_FUZZ_MAX_PARTS];
    size_t n = nnp_fuzz_split(data, size, parts, NNP_FUZZ_MAX_PARTS);
    uint32_t mask = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned k = parts[i].kind % (unsigned)n_files;
        if (nnp_fuzz_write(files[k], parts[i].data, parts[i].size) == 0)
            mask |= 1u << k;
    }
    return mask;
}

void nnp_fuzz_remove_parts(const char *const *files, size_t n_files, uint32_t mask)
{
    char path[PATH_BUF];
    for (size_t k = 0; k < n_files; k++)
        if ((mask & (1u << k)) && nnp_fuzz_path(path, sizeof(path), files[k]))
            unlink(path);
}

void nnp_fuzz_check(bool ok)
{
    if (!ok)
        __builtin_trap();
}

static void check_spans(const int64_t *start, const int64_t *end, size_t n)
{
    for (size_t i = 0; i < n; i++)
        nnp_fuzz_check(end[i] == NNP_OPEN_END || end[i] >= start[i]);
}

static void check_ids(const nnp_model_t *m, const uint32_t *ids, size_t n)
{
    for (size_t i = 0; ids && i < n; i++)
        nnp_fuzz_check(ids[i] <= m->n_strs);
}

void nnp_fuzz_check_model(const nnp_model_t *m)
{
    check_spans(m->ops.start_ns, m->ops.end_ns, m->ops.t.n);
    check_spans(m->kernels.start_ns, m->kernels.end_ns, m->kernels.t.n);
    check_spans(m->comms.start_ns, m->comms.end_ns, m->comms.t.n);
    check_spans(m->steps.start_ns, m->steps.end_ns, m->steps.t.n);
    check_spans(m->epochs.start_ns, m->epochs.end_ns, m->epochs.t.n);
    check_ids(m, m->ops.name, m->ops.t.n);
    check_ids(m, m->ops.type, m->ops.t.n);
    check_ids(m, m->kernels.name, m->kernels.t.n);
    check_ids(m, m->kernels.type, m->kernels.t.n);
    check_ids(m, m->comms.name, m->comms.t.n);
    check_ids(m, m->comms.group, m->comms.t.n);
    check_ids(m, m->pipe_ops.op_type, m->pipe_ops.t.n);
    check_ids(m, m->host.module, m->host.t.n);
    check_ids(m, m->host.event, m->host.t.n);
    for (size_t i = 0; i < m->host.t.n; i++)
        nnp_fuzz_check(m->host.thread[i] < m->threads.t.n);
    for (size_t i = 0; i < m->steps.t.n; i++) /* index + 1, 0 = not known */
        nnp_fuzz_check(m->steps.thread[i] <= m->threads.t.n);
}

void nnp_fuzz_import(const nnp_importer_t *imp, const char *rel)
{
    char input[PATH_BUF];
    nnp_model_t m;
    int rc;
    if (!nnp_fuzz_path(input, sizeof(input), rel) || nnp__model_init(&m) != NNP_OK)
        return;
    rc = imp->import(input, &m);
    nnp_fuzz_check(rc == NNP_OK || rc == NNP_ECORRUPT || rc == NNP_ENOENT || rc == NNP_EINVAL ||
                   rc == NNP_ETOOLONG || rc == NNP_ENOMEM);
    if (rc == NNP_OK && nnp__model_finish(&m) == NNP_OK)
        nnp_fuzz_check_model(&m);
    nnp__model_fini(&m);
}
