/* fake_nccl.c - stands in for libnccl in test_cuda_nccl: the wrappers of nccl_wrap.c find
 * these through dlsym(RTLD_NEXT), exactly as they find NCCL's. Each call keeps its
 * arguments so the test can check they were forwarded unchanged. */
#include <stddef.h>
#include <stdint.h>

typedef struct fake_nccl_call {
    const char *fn;
    size_t count;
    int datatype, op, root_or_peer;
    const void *comm, *stream;
    int calls;
} fake_nccl_call_t;

fake_nccl_call_t fake_nccl_last;

/* Result every fake returns, so the test sees it passed through: ncclInvalidArgument. */
#define FAKE_RESULT 4

static int note(const char *fn, size_t count, int datatype, int op, int rp, const void *comm,
                const void *stream)
{
    fake_nccl_last.fn = fn;
    fake_nccl_last.count = count;
    fake_nccl_last.datatype = datatype;
    fake_nccl_last.op = op;
    fake_nccl_last.root_or_peer = rp;
    fake_nccl_last.comm = comm;
    fake_nccl_last.stream = stream;
    fake_nccl_last.calls++;
    return FAKE_RESULT;
}

int ncclAllReduce(const void *s, void *r, size_t count, int dt, int op, void *comm, void *st);
int ncclAllReduce(const void *s, void *r, size_t count, int dt, int op, void *comm, void *st)
{
    (void)s;
    (void)r;
    return note("ncclAllReduce", count, dt, op, -1, comm, st);
}

int ncclBroadcast(const void *s, void *r, size_t count, int dt, int root, void *comm, void *st);
int ncclBroadcast(const void *s, void *r, size_t count, int dt, int root, void *comm, void *st)
{
    (void)s;
    (void)r;
    return note("ncclBroadcast", count, dt, 0, root, comm, st);
}

int ncclSend(const void *s, size_t count, int dt, int peer, void *comm, void *st);
int ncclSend(const void *s, size_t count, int dt, int peer, void *comm, void *st)
{
    (void)s;
    return note("ncclSend", count, dt, 0, peer, comm, st);
}

int ncclRecv(void *r, size_t count, int dt, int peer, void *comm, void *st);
int ncclRecv(void *r, size_t count, int dt, int peer, void *comm, void *st)
{
    (void)r;
    return note("ncclRecv", count, dt, 0, peer, comm, st);
}

int ncclGroupStart(void);
int ncclGroupStart(void)
{
    return note("ncclGroupStart", 0, 0, 0, 0, NULL, NULL);
}

int ncclGroupEnd(void);
int ncclGroupEnd(void)
{
    return note("ncclGroupEnd", 0, 0, 0, 0, NULL, NULL);
}
