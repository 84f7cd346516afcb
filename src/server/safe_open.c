/* safe_open.c - see safe_open.h. The walk opens one component at a time with
 * O_NOFOLLOW, so a link anywhere below the root fails with ELOOP/ENOTDIR instead of being
 * followed (the openat2 RESOLVE_BENEATH idea, portable to Debian 12's kernels and libc). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/safe_open.h"
#include "util/util.h"

bool nnp__rel_path_ok(const char *rel)
{
    const char *p = rel;
    if (!rel || rel[0] == '/')
        return false;
    if (!*rel)
        return true;
    for (;;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return false;
        for (size_t i = 0; i < n; i++) {
            if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
                return false;
        }
        if (!slash)
            return true;
        p = slash + 1;
    }
}

int nnp__safe_open(const char *root, const char *rel, bool want_dir)
{
    char comp[NNP_PATH_MAX];
    const char *p = rel;
    int dfd, fd;

    if (!nnp__rel_path_ok(rel))
        return nnp__fail(NNP_EINVAL, "refused path '%s'", rel ? rel : "(null)");
    dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return nnp__fail(nnp__from_errno(errno), "%s: %s", root, strerror(errno));
    if (!*rel)
        return dfd;
    for (;;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        bool last = !slash;
        int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC;
        if (n >= sizeof(comp)) {
            close(dfd);
            return nnp__fail(NNP_ETOOLONG, "path component too long in '%s'", rel);
        }
        memcpy(comp, p, n);
        comp[n] = '\0';
        if (!last || want_dir)
            flags |= O_DIRECTORY;
        else
            flags |= O_NONBLOCK; /* a FIFO planted in the data must not block the server */
        fd = openat(dfd, comp, flags);
        close(dfd);
        if (fd < 0) {
            int e = errno;
            if (e == ELOOP || e == ENOTDIR)
                return nnp__fail(NNP_EPATH, "'%s': a link or non-directory on the way", rel);
            return nnp__fail(nnp__from_errno(e), "'%s': %s", rel, strerror(e));
        }
        if (last)
            break;
        dfd = fd;
        p = slash + 1;
    }
    if (!want_dir) {
        struct stat st;
        if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            close(fd);
            return nnp__fail(NNP_EPATH, "'%s' is not a regular file", rel);
        }
        /* Back to blocking reads now that it is known to be a regular file. */
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    }
    return fd;
}

int nnp__safe_read(const char *root, const char *rel, size_t max_bytes, char **out, size_t *len)
{
    struct stat st;
    char *buf;
    size_t got = 0;
    int fd = nnp__safe_open(root, rel, false);

    *out = NULL;
    if (len)
        *len = 0;
    if (fd < 0)
        return fd;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return nnp__fail(NNP_EIO, "%s: %s", rel, strerror(errno));
    }
    if ((uint64_t)st.st_size > max_bytes) {
        close(fd);
        return nnp__fail(NNP_ETOOLONG, "%s: larger than %zu bytes", rel, max_bytes);
    }
    buf = nnp__malloc((size_t)st.st_size + 1);
    if (!buf) {
        close(fd);
        return nnp__fail(NNP_ENOMEM, "out of memory reading %s", rel);
    }
    while (got < (size_t)st.st_size) {
        ssize_t k = read(fd, buf + got, (size_t)st.st_size - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break; /* the file shrank: keep what was read */
        got += (size_t)k;
    }
    close(fd);
    buf[got] = '\0';
    *out = buf;
    if (len)
        *len = got;
    return NNP_OK;
}
