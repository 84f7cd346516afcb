/* error.c - error codes to text, and the per-thread "last error" detail (SQLite errmsg,
 * made per-thread). nnp__fail() both records a message and returns the code. */
#include <errno.h>
#include <stdio.h>

#include "util.h"

/* Long enough for a path plus a sentence; longer details are truncated. */
#define ERRMSG_CAP (NNP_PATH_MAX + 512)

static _Thread_local char last_error[ERRMSG_CAP];

const char *nnp_strerror(int code)
{
    switch (code) {
#define NNP_STRERROR_CASE_(name, num, text)                                                        \
    case NNP_##name:                                                                               \
        return text;
        NNP_ERRNO_MAP(NNP_STRERROR_CASE_)
#undef NNP_STRERROR_CASE_
    default:
        return "unknown error";
    }
}

const char *nnp_last_error(void)
{
    return last_error;
}

void nnp__clear_error(void)
{
    last_error[0] = '\0';
}

int nnp__fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof(last_error), fmt, ap);
    va_end(ap);
    return code;
}

int nnp__from_errno(int err)
{
    switch (err) {
    case 0:
        return NNP_OK;
    case ENOMEM:
        return NNP_ENOMEM;
    case ENOENT:
    case ENOTDIR:
        return NNP_ENOENT;
    case EACCES:
    case EPERM:
    case EROFS:
        return NNP_EPERM;
    case ENAMETOOLONG:
        return NNP_ETOOLONG;
    case EINVAL:
        return NNP_EINVAL;
    default:
        return NNP_EIO;
    }
}
