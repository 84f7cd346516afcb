/* error.c - error codes to text, and the per-thread "last error" detail (SQLite errmsg,
 * made per-thread). nnp__fail() both records a message and returns the code. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "util.h"

/* Long enough for a path plus a sentence; longer details are truncated. */
#define ERRMSG_CAP (NNP_PATH_MAX + 512)

/* The buffer is allocated on a thread's first error, not declared thread-local: the
 * recorder's initial-exec TLS marks the whole library STATIC_TLS, so every thread-local
 * byte must fit the small static TLS reserve glibc keeps for dlopen (Python's ctypes); a
 * 4.6 KiB array did not. Freed at thread exit through a key destructor. */
static _Thread_local char *last_error;
static pthread_key_t error_key;
static pthread_once_t error_once = PTHREAD_ONCE_INIT;

static void error_free(void *p)
{
    free(p);
}

static void error_key_init(void)
{
    pthread_key_create(&error_key, error_free);
}

/* The calling thread's buffer, or NULL when it cannot be allocated (the code is still
 * returned; only the detail is lost). Plain malloc: fault-injection tests fail nnp__malloc
 * on purpose and still expect the message of the error that followed. */
static char *error_buf(void)
{
    if (!last_error) {
        pthread_once(&error_once, error_key_init);
        last_error = calloc(1, ERRMSG_CAP);
        if (last_error)
            pthread_setspecific(error_key, last_error);
    }
    return last_error;
}

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
    return last_error ? last_error : "";
}

void nnp__clear_error(void)
{
    if (last_error)
        last_error[0] = '\0';
}

int nnp__fail(int code, const char *fmt, ...)
{
    va_list ap;
    char *buf = error_buf();
    if (!buf)
        return code;
    va_start(ap, fmt);
    vsnprintf(buf, ERRMSG_CAP, fmt, ap);
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
