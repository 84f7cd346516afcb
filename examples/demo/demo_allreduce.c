/* demo_allreduce.c - the data-parallel gradient all-reduce of `demo_train --ranks N`: one
 * anonymous shared mapping made before fork() holds a process-shared barrier, one gradient
 * slot per rank and a result area. The all-reduce is a reduce-scatter (each rank sums its
 * 1/N of the vector over every slot) followed by an all-gather (each rank copies the whole
 * result): real data movement between processes, two barriers per call. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "demo.h"

/* Slots start on their own cache lines so ranks writing neighbouring slots do not share
 * lines (false sharing would cost every rank a miss per store). */
#define SLOT_ALIGN_FLOATS 16

struct demo_comm {
    pthread_barrier_t barrier;
    int ranks;
    size_t n_floats, stride; /* stride: floats from one slot to the next */
    size_t map_bytes;
    float *result; /* n_floats, reduced sums */
    float *slots;  /* ranks x stride */
};

demo_comm_t *demo_comm_create(int ranks, size_t n_floats)
{
    size_t stride = (n_floats + SLOT_ALIGN_FLOATS - 1) / SLOT_ALIGN_FLOATS * SLOT_ALIGN_FLOATS;
    size_t head = (sizeof(demo_comm_t) + 63) / 64 * 64;
    size_t bytes = head + (size_t)(ranks + 1) * stride * sizeof(float);
    pthread_barrierattr_t attr;
    demo_comm_t *c;
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

    if (mem == MAP_FAILED)
        return NULL;
    c = mem;
    c->ranks = ranks;
    c->n_floats = n_floats;
    c->stride = stride;
    c->map_bytes = bytes;
    c->result = (float *)mem + head / sizeof(float);
    c->slots = c->result + stride;
    /* The barrier lives in the shared mapping and is used by several processes. */
    if (pthread_barrierattr_init(&attr) != 0 ||
        pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED) != 0 ||
        pthread_barrier_init(&c->barrier, &attr, (unsigned)ranks) != 0) {
        munmap(mem, bytes);
        return NULL;
    }
    pthread_barrierattr_destroy(&attr);
    return c;
}

float *demo_comm_slot(demo_comm_t *c, int rank)
{
    return c->slots + (size_t)rank * c->stride;
}

void demo_comm_allreduce(demo_comm_t *c, int rank)
{
    size_t chunk = (c->n_floats + (size_t)c->ranks - 1) / (size_t)c->ranks;
    size_t lo = (size_t)rank * chunk, hi = lo + chunk;
    float scale = 1.0f / (float)c->ranks;

    if (hi > c->n_floats)
        hi = c->n_floats;
    /* Every slot is written (the caller packed its gradients) before anyone reads. */
    pthread_barrier_wait(&c->barrier);
    /* Reduce-scatter: this rank owns [lo, hi). Ranks are summed in rank order, so each
     * element has one rounding sequence and every rank ends with bit-identical values. */
    for (size_t i = lo; i < hi; i++) {
        float sum = 0.0f;
        for (int r = 0; r < c->ranks; r++)
            sum += c->slots[(size_t)r * c->stride + i];
        c->result[i] = sum * scale;
    }
    /* Every chunk is reduced before anyone gathers. The next call's first barrier keeps
     * the result intact until every rank has copied it. */
    pthread_barrier_wait(&c->barrier);
    memcpy(demo_comm_slot(c, rank), c->result, c->n_floats * sizeof(float));
}

void demo_comm_destroy(demo_comm_t *c)
{
    if (!c)
        return;
    pthread_barrier_destroy(&c->barrier);
    munmap(c, c->map_bytes);
}
