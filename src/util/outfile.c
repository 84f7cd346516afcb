/* outfile.c - how every output file is created: in a checked folder (ours, not writable by
 * others unless sticky), under a random temporary name opened with O_CREAT|O_EXCL|O_NOFOLLOW
 * relative to the folder's descriptor, then renamed into place. A link planted at any name
 * by another user is never followed: O_EXCL|O_NOFOLLOW refuses the temporary name, and
 * rename(2) replaces a link at the final name instead of writing through it (the rules of
 * mkstemp(3) and of CERT FIO21-C). Folder checks: docs/CLI.md "Output folders". */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/* Tries at a free temporary name: with 64 random bits a clash is a planted file, so a few
 * tries separate bad luck from someone occupying names on purpose. */
#define TMP_TRIES 16
/* Hex digits of the random part of a temporary name (64 bits). */
#define RAND_HEX 16

/* 64 unpredictable bits: getrandom, else a mix of time, pid and a counter (a planted link
 * then only costs a retry, never a write through it). */
static uint64_t random_bits(void)
{
    static _Atomic uint64_t counter;
    uint64_t v;
    struct timespec ts;
    if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v))
        return v;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    v = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 16);
    return v ^ (++counter * 0x9E3779B97F4A7C15ull);
}

int nnp__outdir_check(int dirfd, const char *dir)
{
    struct stat st;
    if (fstat(dirfd, &st) != 0)
        return nnp__fail(nnp__from_errno(errno), "cannot stat output folder '%s': %s", dir,
                         strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return nnp__fail(NNP_EPATH, "output folder '%s' is not a directory", dir);
    if (st.st_uid != geteuid())
        return nnp__fail(NNP_EPERM,
                         "output folder '%s' belongs to another user (uid %u; this process runs "
                         "as uid %u): refusing to write there, as a link planted by its owner "
                         "could redirect the files; choose a folder of your own with -o",
                         dir, (unsigned)st.st_uid, (unsigned)geteuid());
    if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
        return nnp__fail(NNP_EPERM,
                         "output folder '%s' is writable by every user without the sticky bit "
                         "(mode %04o): refusing to write there, as any user could replace the "
                         "files; chmod o-w or +t it, or choose another folder with -o",
                         dir, (unsigned)(st.st_mode & 07777));
    return NNP_OK;
}

int nnp__outdir_open(const char *dir, int *dirfd)
{
    struct stat st;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc;
    *dirfd = -1;
    if (fd < 0) {
        int err = errno;
        if (err == ENOTDIR && stat(dir, &st) == 0)
            return nnp__fail(NNP_EPATH, "output folder '%s' exists and is not a directory", dir);
        return nnp__fail(nnp__from_errno(err), "cannot open output folder '%s': %s", dir,
                         strerror(err));
    }
    rc = nnp__outdir_check(fd, dir);
    if (rc != NNP_OK) {
        close(fd);
        return rc;
    }
    *dirfd = fd;
    return NNP_OK;
}

int nnp__tmp_create(int dirfd, const char *name, char *tmp_name, size_t cap)
{
    for (int k = 0; k < TMP_TRIES; k++) {
        uint64_t r = random_bits();
        int fd,
            n = snprintf(tmp_name, cap, ".%s.%0*llx.tmp", name, RAND_HEX, (unsigned long long)r);
        if (n < 0 || (size_t)n >= cap)
            return nnp__fail(NNP_ETOOLONG, "file name too long: %s", name);
        fd = openat(dirfd, tmp_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0)
            return fd;
        if (errno != EEXIST && errno != ELOOP)
            return nnp__fail(nnp__from_errno(errno), "cannot create '%s': %s", tmp_name,
                             strerror(errno));
    }
    return nnp__fail(NNP_EIO, "cannot create a temporary file for '%s': %d random names taken",
                     name, TMP_TRIES);
}

int nnp__out_open(nnp_outfile_t *f, const char *dir, const char *name)
{
    int rc;
    f->fd = -1;
    f->dirfd = -1;
    rc = nnp__path_join(f->path, sizeof(f->path), dir, name);
    if (rc == NNP_OK && !nnp__strlcpy(f->name, name, sizeof(f->name)))
        rc = nnp__fail(NNP_ETOOLONG, "file name too long: %s", name);
    if (rc == NNP_OK)
        rc = nnp__outdir_open(dir, &f->dirfd);
    if (rc != NNP_OK)
        return rc;
    f->fd = nnp__tmp_create(f->dirfd, name, f->tmp_name, sizeof(f->tmp_name));
    if (f->fd < 0) {
        char why[NNP_NAME_MAX + 64];
        /* Copied: the message is formatted into the buffer it comes from. */
        nnp__strlcpy(why, nnp_last_error(), sizeof(why));
        rc = f->fd;
        close(f->dirfd);
        f->dirfd = -1;
        return nnp__fail(rc, "cannot create output file '%s': %s", f->path, why);
    }
    return NNP_OK;
}

int nnp__out_commit(nnp_outfile_t *f, int write_rc)
{
    int rc = write_rc;
    if (f->fd >= 0 && close(f->fd) != 0 && rc == NNP_OK)
        rc = nnp__fail(NNP_EIO, "close '%s': %s", f->path, strerror(errno));
    f->fd = -1;
    if (f->dirfd < 0)
        return rc;
    /* renameat replaces whatever is at the final name, a planted link included, and never
     * follows it. */
    if (rc == NNP_OK && renameat(f->dirfd, f->tmp_name, f->dirfd, f->name) != 0)
        rc = nnp__fail(nnp__from_errno(errno), "rename to '%s': %s", f->path, strerror(errno));
    if (rc != NNP_OK)
        (void)unlinkat(f->dirfd, f->tmp_name, 0);
    close(f->dirfd);
    f->dirfd = -1;
    return rc;
}
