/* test_cuda_nccl.c - the NCCL wrappers (nccl_wrap.c) against a fake NCCL (fake_nccl.c,
 * found through RTLD_NEXT as the real one would be): arguments and results pass through
 * unchanged, each call is noted with its bytes and pushed/popped as an external
 * correlation, a group becomes one call at its outermost end, nothing is pushed when not
 * profiling, and the ring forgets calls only after it wraps. */
#include <stdlib.h>
#include <string.h>

#include "collect/cuda/nccl_wrap.h"
#include "test_util.h"

typedef struct fake_nccl_call {
    const char *fn;
    size_t count;
    int datatype, op, root_or_peer;
    const void *comm, *stream;
    int calls;
} fake_nccl_call_t;
extern fake_nccl_call_t fake_nccl_last;

int ncclAllReduce(const void *s, void *r, size_t count, int dt, int op, void *comm, void *st);
int ncclBroadcast(const void *s, void *r, size_t count, int dt, int root, void *comm, void *st);
int ncclSend(const void *s, size_t count, int dt, int peer, void *comm, void *st);
int ncclRecv(void *r, size_t count, int dt, int peer, void *comm, void *st);
int ncclGroupStart(void);
int ncclGroupEnd(void);

#define FAKE_RESULT 4
#define NCCL_FLOAT  7 /* ncclFloat32: 4 bytes */
#define NCCL_HALF   6 /* 2 bytes */
#define NCCL_INT8   0

static struct {
    int pushes, pops;
    uint32_t kind;
    uint64_t id;
} g_ext;

static void push(uint32_t kind, uint64_t id)
{
    g_ext.pushes++;
    g_ext.kind = kind;
    g_ext.id = id;
}

static void pop(uint32_t kind)
{
    g_ext.pops++;
    assert_int_equal(kind, NNP_CU_EXT_NCCL);
}

static const nnp_cu_ext_fns_t fns = {push, pop};

static void test_calls_are_noted_and_forwarded(void **state)
{
    nnp_cu_nccl_call_t c;
    int comm, stream;
    (void)state;
    memset(&g_ext, 0, sizeof(g_ext));
    nnp__cu_nccl_set_ext(&fns);

    assert_int_equal(ncclAllReduce(NULL, NULL, 1000, NCCL_FLOAT, 2, &comm, &stream), FAKE_RESULT);
    assert_string_equal(fake_nccl_last.fn, "ncclAllReduce");
    assert_int_equal(fake_nccl_last.count, 1000);
    assert_int_equal(fake_nccl_last.datatype, NCCL_FLOAT);
    assert_int_equal(fake_nccl_last.op, 2);
    assert_ptr_equal(fake_nccl_last.comm, &comm);
    assert_ptr_equal(fake_nccl_last.stream, &stream);
    assert_int_equal(g_ext.pushes, 1);
    assert_int_equal(g_ext.pops, 1);
    assert_int_equal(g_ext.kind, NNP_CU_EXT_NCCL);
    assert_true(nnp__cu_nccl_lookup(g_ext.id, &c));
    assert_int_equal(c.comm_kind, NNP_COMM_ALLREDUCE);
    assert_int_equal(c.bytes, 4000);
    assert_int_equal(c.peer, -1);
    assert_int_equal(c.comm, (uint64_t)(uintptr_t)&comm);

    assert_int_equal(ncclBroadcast(NULL, NULL, 10, NCCL_HALF, 3, &comm, &stream), FAKE_RESULT);
    assert_int_equal(fake_nccl_last.root_or_peer, 3);
    assert_true(nnp__cu_nccl_lookup(g_ext.id, &c));
    assert_int_equal(c.comm_kind, NNP_COMM_BROADCAST);
    assert_int_equal(c.bytes, 20);
    assert_int_equal(c.peer, 3);
    nnp__cu_nccl_set_ext(NULL);
}

static void test_group_is_one_call(void **state)
{
    nnp_cu_nccl_call_t c;
    int comm;
    (void)state;
    memset(&g_ext, 0, sizeof(g_ext));
    nnp__cu_nccl_set_ext(&fns);
    assert_int_equal(ncclGroupStart(), FAKE_RESULT);
    assert_int_equal(ncclGroupStart(), FAKE_RESULT); /* nested */
    assert_int_equal(ncclSend(NULL, 100, NCCL_INT8, 3, &comm, NULL), FAKE_RESULT);
    assert_int_equal(ncclRecv(NULL, 300, NCCL_INT8, 3, &comm, NULL), FAKE_RESULT);
    assert_int_equal(ncclGroupEnd(), FAKE_RESULT);
    assert_int_equal(g_ext.pushes, 0); /* still inside the outer group */
    assert_int_equal(ncclGroupEnd(), FAKE_RESULT);
    assert_string_equal(fake_nccl_last.fn, "ncclGroupEnd");
    assert_int_equal(g_ext.pushes, 1);
    assert_int_equal(g_ext.pops, 1);
    assert_true(nnp__cu_nccl_lookup(g_ext.id, &c));
    assert_int_equal(c.comm_kind, NNP_COMM_OTHER); /* send + recv */
    assert_int_equal(c.bytes, 400);
    assert_int_equal(c.peer, 3);
    nnp__cu_nccl_set_ext(NULL);
}

static void test_not_profiling_only_forwards(void **state)
{
    int before = fake_nccl_last.calls;
    (void)state;
    memset(&g_ext, 0, sizeof(g_ext));
    nnp__cu_nccl_set_ext(NULL);
    assert_int_equal(ncclAllReduce(NULL, NULL, 1, NCCL_FLOAT, 0, NULL, NULL), FAKE_RESULT);
    assert_int_equal(ncclGroupStart(), FAKE_RESULT);
    assert_int_equal(ncclGroupEnd(), FAKE_RESULT);
    assert_int_equal(fake_nccl_last.calls, before + 3);
    assert_int_equal(g_ext.pushes, 0);
}

static void test_ring_and_type_sizes(void **state)
{
    nnp_cu_nccl_call_t in = {NNP_COMM_SEND, 64, 1, 0x10}, out;
    uint64_t first = nnp__cu_nccl_note(&in), last = first;
    (void)state;
    assert_true(first != 0);
    assert_true(nnp__cu_nccl_lookup(first, &out));
    assert_int_equal(out.bytes, 64);
    /* 16384 later calls overwrite its slot. */
    for (int i = 0; i < 16384; i++)
        last = nnp__cu_nccl_note(&in);
    assert_false(nnp__cu_nccl_lookup(first, &out));
    assert_true(nnp__cu_nccl_lookup(last, &out));
    assert_false(nnp__cu_nccl_lookup(0, &out));
    assert_false(nnp__cu_nccl_lookup(last + 1, &out));
    assert_int_equal(nnp__cu_nccl_type_size(0), 1);
    assert_int_equal(nnp__cu_nccl_type_size(7), 4);
    assert_int_equal(nnp__cu_nccl_type_size(8), 8);
    assert_int_equal(nnp__cu_nccl_type_size(9), 2);
    assert_int_equal(nnp__cu_nccl_type_size(12), 0);
    assert_int_equal(nnp__cu_nccl_type_size(-1), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_calls_are_noted_and_forwarded),
        cmocka_unit_test(test_group_is_one_call),
        cmocka_unit_test(test_not_profiling_only_forwards),
        cmocka_unit_test(test_ring_and_type_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
