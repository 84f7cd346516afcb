/* demo.h - shared declarations of the training demo (issue #5): configuration, the bounded
 * queue, the data pipeline, the tensor allocator, the model and the shared-memory all-reduce.
 * Every part instruments itself through the public API only (nnprof/nnprof.h), the way a
 * framework would; nothing here includes the library's internal headers. */
#ifndef DEMO_H
#define DEMO_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nnprof/nnprof.h>

/* The network: a 64 -> 128 -> 64 -> 10 MLP classifier. Wide enough that a step is a few
 * hundred microseconds of real arithmetic, small enough to train in about a second. */
#define DEMO_N_IN      64
#define DEMO_N_H1      128
#define DEMO_N_H2      64
#define DEMO_N_CLASSES 10
/* Ops recorded by the training thread per step: GetNext, forward (8 + Softmax + loss),
 * backward (11) and one optimizer update per parameter (6). tests/unit/test_demo.c holds
 * the same figure per op type. */
#define DEMO_OPS_PER_STEP 28

/* What the demo records. OPS: ops, steps, epochs and communication (op-level collection).
 * ALL: also tensor memory, the data pipeline, host ranges and the CPU/memory sampler. */
typedef enum demo_prof_level { DEMO_PROF_OFF = 0, DEMO_PROF_OPS, DEMO_PROF_ALL } demo_prof_level_t;

typedef struct demo_config {
    long steps_per_epoch; /* derived: samples / ranks / batch */
    long total_steps;     /* steps per rank: --steps, else epochs * steps_per_epoch */
    int epochs;           /* derived from total_steps when --steps is given */
    int batch;            /* samples per step per rank */
    int workers;          /* MapOp worker threads */
    int ranks;            /* data-parallel processes */
    int samples;          /* dataset size (all ranks together) */
    unsigned seed;
    float learning_rate;
    const char *output;      /* profiler output_path; NULL = "./data" */
    demo_prof_level_t level; /* DEMO_PROF_OFF = --no-profile */
    long ab_block;           /* > 0: alternate blocks of this many steps with collection off
                              * and on, in one process (--ab-block) */
    bool mpi;                /* --mpi: one MPI process per rank, MPI_Allreduce of gradients */
} demo_config_t;

/* ---- bounded single-producer single-consumer queue (mutex + condition variables) ---- */

typedef struct demo_queue {
    pthread_mutex_t lock;
    pthread_cond_t not_empty, not_full;
    void **items;
    uint32_t capacity, head, count;
} demo_queue_t;

void demo_queue_init(demo_queue_t *q, uint32_t capacity);
void demo_queue_fini(demo_queue_t *q);
/* Blocks while the queue is full. */
void demo_queue_push(demo_queue_t *q, void *item);
/* Blocks while the queue is empty; *size_before (may be NULL) gets the size seen at the pop. */
void *demo_queue_pop(demo_queue_t *q, uint32_t *size_before);
uint32_t demo_queue_size(demo_queue_t *q);

/* ---- data pipeline: GeneratorOp -> MapOp (workers) -> BatchOp -> DeviceQueueOp ---- */

typedef struct demo_batch {
    uint64_t index; /* batch number on this rank, from 0 */
    int size;
    int32_t *labels; /* size labels */
    float *x;        /* size x DEMO_N_IN normalised features */
} demo_batch_t;

typedef struct demo_pipeline demo_pipeline_t;

/* Starts the pipeline threads of `rank`; they produce exactly cfg->total_steps batches.
 * Exits the process (demo_fatal) when a thread cannot start. */
demo_pipeline_t *demo_pipeline_start(const demo_config_t *cfg, int rank);
/* Pops the next batch from the device queue (blocking); *queue_size / *queue_capacity get
 * the device queue's state at the fetch. The batch is one malloc'd block, now the caller's
 * (demo_model_get_next frees it). */
demo_batch_t *demo_pipeline_next(demo_pipeline_t *p, uint32_t *queue_size,
                                 uint32_t *queue_capacity);
/* Joins every thread (all batches must have been fetched) and frees the pipeline. */
void demo_pipeline_stop(demo_pipeline_t *p);

/* ---- tensor allocator: a caching pool (one free list per block size) ---- */

#define DEMO_ALLOC_CLASSES 32

typedef struct demo_alloc_class {
    size_t size_bytes;
    void *free_list; /* blocks of this size not in use */
} demo_alloc_class_t;

typedef struct demo_alloc {
    demo_alloc_class_t classes[DEMO_ALLOC_CLASSES];
    int n_classes;
    bool report; /* record alloc/free with nnp_mem_alloc/nnp_mem_free */
    uint32_t device_id;
    uint64_t in_use_bytes, peak_bytes, reserved_bytes;
} demo_alloc_t;

void demo_alloc_init(demo_alloc_t *a, bool report, uint32_t device_id);
/* Returns a 64-byte aligned block of `bytes` (never NULL: out of memory ends the process
 * through demo_fatal); name/owner_op are interned strings for the memory records. */
void *demo_tensor_alloc(demo_alloc_t *a, size_t bytes, nnp_str_t name, nnp_str_t owner_op);
void demo_tensor_free(demo_alloc_t *a, void *p);
/* Releases the cached blocks (every tensor must have been freed). */
void demo_alloc_fini(demo_alloc_t *a);

/* ---- model ---- */

typedef struct demo_model demo_model_t;

demo_model_t *demo_model_create(const demo_config_t *cfg, int rank, demo_alloc_t *alloc);
void demo_model_destroy(demo_model_t *m);
/* Number of float parameters (the all-reduce length). */
size_t demo_model_param_count(void);
/* The GetNext op: copies the fetched batch into the model's input tensor. */
void demo_model_get_next(demo_model_t *m, demo_batch_t *b, uint64_t start_ticks);
/* Forward pass and loss; returns the batch's mean cross-entropy. */
float demo_model_forward(demo_model_t *m);
/* Backward pass: gradients of every parameter. */
void demo_model_backward(demo_model_t *m);
/* Copies the gradients into flat (param_count floats) and back, for the all-reduce. */
void demo_model_grads_pack(const demo_model_t *m, float *flat);
void demo_model_grads_unpack(demo_model_t *m, const float *flat);
/* SGD update of every parameter; frees the gradients and the step's remaining tensors. */
void demo_model_update(demo_model_t *m);
/* Sum of every weight: equal on every rank when the all-reduce is right. */
double demo_model_checksum(const demo_model_t *m);

/* ---- data-parallel all-reduce through shared memory (created before fork) ---- */

typedef struct demo_comm demo_comm_t;

/* Maps the segment shared by `ranks` processes; call before fork(). NULL on failure. */
demo_comm_t *demo_comm_create(int ranks, size_t n_floats);
/* This rank's slot in the segment: the rank packs its gradients straight into it. */
float *demo_comm_slot(demo_comm_t *c, int rank);
/* Replaces every rank's slot with the mean of all slots; every rank must call it. */
void demo_comm_allreduce(demo_comm_t *c, int rank);
/* Unmaps the segment (the parent, after every rank has exited). */
void demo_comm_destroy(demo_comm_t *c);

/* ---- data-parallel all-reduce over MPI (--mpi; demo_mpi.c, or demo_mpi_none.c when the
 * build found no MPI) ---- */

/* MPI_Init; *rank and *size of MPI_COMM_WORLD. False (with a message) when the demo was
 * built without MPI or MPI cannot start. */
bool demo_mpi_init(int *argc, char ***argv, int *rank, int *size);
/* Replaces v[0..n) on every rank with the mean over the ranks (MPI_Allreduce, MPI_SUM). */
void demo_mpi_allreduce_mean(float *v, size_t n);
void demo_mpi_finalize(void);

/* ---- helpers ---- */

/* SplitMix64's finaliser (Steele et al., "Fast splittable pseudorandom number generators",
 * 2014): a stateless hash, so sample i of the dataset is the same whichever thread or rank
 * makes it, and a run is reproducible from --seed alone. */
static inline uint64_t demo_hash(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Uniform in [0, 1) from the top 24 bits of a hash (a float's whole mantissa). */
static inline float demo_uniform(uint64_t key)
{
    return (float)(demo_hash(key) >> 40) * (1.0f / 16777216.0f);
}

/* Prints "demo_train: <what>" and exits with status 1: the demo has no way to go on after
 * a thread, a mapping or the profiler failed to start. */
_Noreturn void demo_fatal(const char *what);
/* calloc() that never returns NULL: it ends the process through demo_fatal() instead. */
void *demo_xcalloc(size_t n, size_t size);

#endif
