/* fs.c - small file-system helpers: mkdir -p, full writes, atomic replace, whole-file
 * reads, free space. errno is translated to NNP_E* codes here, at the boundary. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "util.h"

int nnp__write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return nnp__fail(NNP_EIO, "write failed: %s", strerror(errno));
        }
        p += w;
        n -= (size_t)w;
    }
    return NNP_OK;
}

int nnp__mkdir_p(const char *dir, mode_t mode)
{
    char tmp[NNP_PATH_MAX];
    struct stat st;
    size_t len;

    if (!nnp__strlcpy(tmp, dir, sizeof(tmp)))
        return nnp__fail(NNP_ETOOLONG, "path too long: %.64s...", dir);
    len = strlen(tmp);
    while (len > 1 && tmp[len - 1] == '/')
        tmp[--len] = '\0';
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, mode) != 0 && errno != EEXIST)
            return nnp__fail(nnp__from_errno(errno), "cannot create directory '%s': %s", tmp,
                             strerror(errno));
        if (stat(tmp, &st) == 0 && !S_ISDIR(st.st_mode))
            return nnp__fail(NNP_EPATH, "'%s' exists and is not a directory", tmp);
        *p = '/';
    }
    if (mkdir(tmp, mode) != 0 && errno != EEXIST)
        return nnp__fail(nnp__from_errno(errno), "cannot create directory '%s': %s", tmp,
                         strerror(errno));
    if (stat(tmp, &st) == 0 && !S_ISDIR(st.st_mode))
        return nnp__fail(NNP_EPATH, "'%s' exists and is not a directory", tmp);
    return NNP_OK;
}

int nnp__path_join(char *out, size_t cap, const char *a, const char *b)
{
    size_t la = strlen(a);
    bool slash = la > 0 && a[la - 1] != '/';
    int n = snprintf(out, cap, "%s%s%s", a, slash ? "/" : "", b);
    if (n < 0 || (size_t)n >= cap)
        return nnp__fail(NNP_ETOOLONG, "path too long: %s/%s", a, b);
    return NNP_OK;
}

int nnp__write_file_atomic(const char *path, const void *data, size_t n)
{
    char dir[NNP_PATH_MAX], tmp[NNP_NAME_MAX + 32];
    const char *base;
    char *slash;
    int dirfd, fd, rc;

    /* The temporary file is created with O_EXCL|O_NOFOLLOW under a random name in the
     * target's folder (outfile.c), so a planted link is never written through. */
    if (!nnp__strlcpy(dir, path, sizeof(dir)))
        return nnp__fail(NNP_ETOOLONG, "path too long: %s", path);
    slash = strrchr(dir, '/');
    if (slash) {
        *slash = '\0';
        base = path + (slash - dir) + 1;
        if (slash == dir)
            nnp__strlcpy(dir, "/", sizeof(dir));
    } else {
        nnp__strlcpy(dir, ".", sizeof(dir));
        base = path;
    }
    dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0)
        return nnp__fail(nnp__from_errno(errno), "cannot open '%s': %s", dir, strerror(errno));
    fd = nnp__tmp_create(dirfd, base, tmp, sizeof(tmp));
    if (fd < 0) {
        close(dirfd);
        return fd;
    }
    rc = nnp__write_all(fd, data, n);
    if (rc == NNP_OK && fsync(fd) != 0)
        rc = nnp__fail(NNP_EIO, "fsync '%s': %s", path, strerror(errno));
    if (close(fd) != 0 && rc == NNP_OK)
        rc = nnp__fail(NNP_EIO, "close '%s': %s", path, strerror(errno));
    if (rc == NNP_OK && renameat(dirfd, tmp, dirfd, base) != 0)
        rc = nnp__fail(nnp__from_errno(errno), "rename to '%s': %s", path, strerror(errno));
    if (rc != NNP_OK)
        (void)unlinkat(dirfd, tmp, 0);
    close(dirfd);
    return rc;
}

int nnp__read_file(const char *path, size_t max_bytes, char **out, size_t *out_len)
{
    struct stat st;
    char *buf;
    size_t got = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return nnp__fail(nnp__from_errno(errno), "cannot open '%s': %s", path, strerror(errno));
    if (fstat(fd, &st) != 0 || (size_t)st.st_size > max_bytes) {
        close(fd);
        return nnp__fail(NNP_ETOOLONG, "'%s' is larger than %zu bytes", path, max_bytes);
    }
    buf = nnp__malloc((size_t)st.st_size + 1);
    if (!buf) {
        close(fd);
        return nnp__fail(NNP_ENOMEM, "out of memory reading '%s'", path);
    }
    while (got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (got >= NNP_UTF8_BOM_LEN && memcmp(buf, NNP_UTF8_BOM, NNP_UTF8_BOM_LEN) == 0) {
        got -= NNP_UTF8_BOM_LEN;
        memmove(buf, buf + NNP_UTF8_BOM_LEN, got);
    }
    buf[got] = '\0';
    *out = buf;
    if (out_len)
        *out_len = got;
    return NNP_OK;
}

uint64_t nnp__fs_free_bytes(const char *path)
{
    struct statvfs sv;
    if (statvfs(path, &sv) != 0)
        return 0;
    return (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
}

bool nnp__path_has_forbidden_char(const char *s)
{
    /* The characters PROFILING_OPTIONS forbids in "output" (seed 004). */
    return strpbrk(s, "\n\f\r\b\t\v\x7f") != NULL;
}
