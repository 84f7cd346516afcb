/* demo_pipeline.c - the demo's data pipeline, shaped and numbered like a MindSpore dataset:
 * GeneratorOp(3) -> MapOp(2, N workers) -> BatchOp(1) -> DeviceQueueOp(0) -> GetNext, each
 * stage on its own threads, joined by bounded queues. Threads are named "<Op>(id=N) worker
 * K" so the analyser charges their CPU to the op; the batch op samples every connector once
 * per batch. Samples keep their order: sample k goes through map worker k mod N. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo.h"

/* MindSpore's defaults: op_connector_size 16 (dataset.config.set_op_connector_size) and
 * prefetch_size 16 for the device queue. */
#define CONNECTOR_CAPACITY    16
#define DEVICE_QUEUE_CAPACITY 16

/* Pipeline op ids as MindSpore numbers them: the root (the device queue) is 0. */
#define OP_ID_DEVICE_QUEUE 0
#define OP_ID_BATCH        1
#define OP_ID_MAP          2
#define OP_ID_GENERATOR    3

/* The synthetic dataset: DEMO_N_CLASSES Gaussian blobs. Centres have unit-normal
 * coordinates (about 11 apart in 64-D), samples add noise of SAMPLE_NOISE standard
 * deviations, about 3 along the line between two centres: the classes overlap a little,
 * so the loss falls quickly at first, then keeps falling over many epochs. The generator
 * emits 8-bit "pixels" around RAW_MEAN, which the map op normalises back with the
 * arithmetic of MindSpore's Normalize(mean, std). */
#define SAMPLE_NOISE 3.0f
#define RAW_MEAN     128.0f
#define RAW_SCALE    12.0f
#define RAW_MAX      255.0f
/* Standard deviation of the raw values: RAW_SCALE * sqrt(1 + SAMPLE_NOISE^2). */
#define RAW_STD 37.9f

/* Hash-key spaces, so the centres, labels, noise and shuffles draw unrelated numbers. */
#define KEY_CENTRE  0x1000000000000000ull
#define KEY_LABEL   0x2000000000000000ull
#define KEY_NOISE   0x3000000000000000ull
#define KEY_SHUFFLE 0x4000000000000000ull

#define THREAD_NAME_MAX 64

typedef struct sample {
    uint64_t seq;
    int32_t label;
    float x[DEMO_N_IN];
} sample_t;

typedef struct map_worker {
    demo_pipeline_t *p;
    int index;
    pthread_t thread;
} map_worker_t;

struct demo_pipeline {
    demo_config_t cfg;
    int rank;
    uint64_t n_batches, n_samples;
    bool profile_all;
    demo_queue_t *map_in;  /* [workers]: generator -> map worker k */
    demo_queue_t *map_out; /* [workers]: map worker k -> batch */
    demo_queue_t batch_out;
    demo_queue_t device;
    pthread_t generator, batcher, device_op;
    map_worker_t *workers;
    float centres[DEMO_N_CLASSES][DEMO_N_IN];
    nnp_host_tag_t tag_batch, tag_push;
};

/* ---- bounded queue ---- */

void demo_queue_init(demo_queue_t *q, uint32_t capacity)
{
    memset(q, 0, sizeof(*q));
    q->items = demo_xcalloc(capacity, sizeof(void *));
    q->capacity = capacity;
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->not_empty, NULL);
    pthread_cond_init(&q->not_full, NULL);
}

void demo_queue_fini(demo_queue_t *q)
{
    pthread_mutex_destroy(&q->lock);
    pthread_cond_destroy(&q->not_empty);
    pthread_cond_destroy(&q->not_full);
    free(q->items);
}

void demo_queue_push(demo_queue_t *q, void *item)
{
    pthread_mutex_lock(&q->lock);
    while (q->count == q->capacity)
        pthread_cond_wait(&q->not_full, &q->lock);
    q->items[(q->head + q->count) % q->capacity] = item;
    q->count++;
    pthread_cond_signal(&q->not_empty);
    pthread_mutex_unlock(&q->lock);
}

void *demo_queue_pop(demo_queue_t *q, uint32_t *size_before)
{
    void *item;
    pthread_mutex_lock(&q->lock);
    if (size_before)
        *size_before = q->count;
    while (q->count == 0)
        pthread_cond_wait(&q->not_empty, &q->lock);
    item = q->items[q->head];
    q->head = (q->head + 1) % q->capacity;
    q->count--;
    /* Wake a producer blocked on a full queue only once half of it has drained: it then
     * refills in a burst instead of waking once per item, which on a small machine would
     * cost a context switch per sample. One producer per queue, so no wake-up is lost:
     * the count falls through capacity/2 on its way to empty. */
    if (q->count <= q->capacity / 2)
        pthread_cond_signal(&q->not_full);
    pthread_mutex_unlock(&q->lock);
    return item;
}

uint32_t demo_queue_size(demo_queue_t *q)
{
    uint32_t n;
    pthread_mutex_lock(&q->lock);
    n = q->count;
    pthread_mutex_unlock(&q->lock);
    return n;
}

/* ---- stages ---- */

static void name_thread(const demo_pipeline_t *p, const char *op, int op_id, int worker)
{
    char name[THREAD_NAME_MAX];
    if (!p->profile_all)
        return;
    snprintf(name, sizeof(name), "%s(id=%d) worker %d", op, op_id, worker);
    (void)nnp_thread_register(name);
}

/* The base key of one kind of random number for this seed: keys are base + counter, and
 * hashed bases put the kinds far apart in the key space. */
static uint64_t key_base(const demo_pipeline_t *p, uint64_t kind)
{
    return demo_hash(kind ^ p->cfg.seed);
}

/* Standard normal from two hashed uniforms (Box-Muller); the 1e-7 keeps logf finite. */
static float gaussian(uint64_t key)
{
    float u1 = demo_uniform(key) + 1e-7f, u2 = demo_uniform(demo_hash(key));
    return sqrtf(-2.0f * logf(u1)) * cosf(6.2831853f * u2);
}

/* Dataset index -> raw sample, the same on every rank and thread. */
static void make_sample(const demo_pipeline_t *p, uint64_t index, sample_t *s)
{
    uint64_t noise = key_base(p, KEY_NOISE) + index * DEMO_N_IN;
    s->label = (int32_t)(demo_hash(key_base(p, KEY_LABEL) + index) % DEMO_N_CLASSES);
    for (int k = 0; k < DEMO_N_IN; k++) {
        float v = p->centres[s->label][k] + SAMPLE_NOISE * gaussian(noise + (uint64_t)k);
        float raw = roundf(RAW_MEAN + RAW_SCALE * v);
        s->x[k] = raw < 0.0f ? 0.0f : raw > RAW_MAX ? RAW_MAX : raw;
    }
}

/* Fisher-Yates shuffle of the dataset for one epoch (the same order on every rank, each
 * taking every ranks-th sample, as a DistributedSampler does). */
static void shuffle(const demo_pipeline_t *p, uint32_t *perm, uint64_t epoch)
{
    uint32_t n = (uint32_t)p->cfg.samples;
    for (uint32_t i = 0; i < n; i++)
        perm[i] = i;
    for (uint32_t i = n - 1; i > 0; i--) {
        uint64_t key = key_base(p, KEY_SHUFFLE) + epoch * (uint64_t)n + i;
        uint32_t j = (uint32_t)(demo_hash(key) % (i + 1u)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

static void *generator_main(void *arg)
{
    demo_pipeline_t *p = arg;
    uint64_t per_epoch = (uint64_t)p->cfg.steps_per_epoch * (uint64_t)p->cfg.batch;
    uint32_t *perm = demo_xcalloc((size_t)p->cfg.samples, sizeof(uint32_t));

    name_thread(p, "GeneratorOp", OP_ID_GENERATOR, 0);
    for (uint64_t seq = 0; seq < p->n_samples; seq++) {
        uint64_t pos = seq % per_epoch;
        sample_t *s = demo_xcalloc(1, sizeof(*s));
        if (pos == 0)
            shuffle(p, perm, seq / per_epoch);
        s->seq = seq;
        make_sample(p, perm[pos * (uint64_t)p->cfg.ranks + (uint64_t)p->rank], s);
        demo_queue_push(&p->map_in[seq % (uint64_t)p->cfg.workers], s);
    }
    free(perm);
    return NULL;
}

static void *map_main(void *arg)
{
    map_worker_t *w = arg;
    demo_pipeline_t *p = w->p;
    uint64_t stride = (uint64_t)p->cfg.workers;

    name_thread(p, "MapOp", OP_ID_MAP, w->index);
    for (uint64_t seq = (uint64_t)w->index; seq < p->n_samples; seq += stride) {
        sample_t *s = demo_queue_pop(&p->map_in[w->index], NULL);
        /* Normalize(mean, std), as a vision map op would apply to pixels. */
        for (int k = 0; k < DEMO_N_IN; k++)
            s->x[k] = (s->x[k] - RAW_MEAN) / RAW_STD;
        demo_queue_push(&p->map_out[w->index], s);
    }
    return NULL;
}

/* Sizes and capacities of the connectors that feed the batch op and of its own output,
 * sampled once per batch (MindSpore samples every connector once per sampling period). */
static void sample_connectors(demo_pipeline_t *p)
{
    uint32_t in = 0, out = 0, cap = (uint32_t)p->cfg.workers * CONNECTOR_CAPACITY;
    for (int k = 0; k < p->cfg.workers; k++) {
        in += demo_queue_size(&p->map_in[k]);
        out += demo_queue_size(&p->map_out[k]);
    }
    nnp_queue_sample(OP_ID_GENERATOR, in, cap);
    nnp_queue_sample(OP_ID_MAP, out, cap);
    nnp_queue_sample(OP_ID_BATCH, demo_queue_size(&p->batch_out), CONNECTOR_CAPACITY);
}

static void *batch_main(void *arg)
{
    demo_pipeline_t *p = arg;
    size_t n = (size_t)p->cfg.batch;

    name_thread(p, "BatchOp", OP_ID_BATCH, 0);
    for (uint64_t b = 0; b < p->n_batches; b++) {
        /* One block: header, labels, then the features (4-byte aligned after int32s). */
        demo_batch_t *batch =
            demo_xcalloc(1, sizeof(*batch) + n * sizeof(int32_t) + n * DEMO_N_IN * sizeof(float));
        char *payload = (char *)(batch + 1);

        if (p->profile_all)
            nnp_range_begin(&p->tag_batch);
        batch->index = b;
        batch->size = (int)n;
        batch->labels = (void *)payload;
        batch->x = (void *)(payload + n * sizeof(int32_t));
        for (size_t i = 0; i < n; i++) {
            uint64_t seq = b * n + i;
            sample_t *s = demo_queue_pop(&p->map_out[seq % (uint64_t)p->cfg.workers], NULL);
            batch->labels[i] = s->label;
            memcpy(batch->x + i * DEMO_N_IN, s->x, sizeof(s->x));
            free(s);
        }
        demo_queue_push(&p->batch_out, batch);
        if (p->profile_all) {
            nnp_range_end(&p->tag_batch);
            sample_connectors(p);
        }
    }
    return NULL;
}

static void *device_queue_main(void *arg)
{
    demo_pipeline_t *p = arg;

    name_thread(p, "DeviceQueueOp", OP_ID_DEVICE_QUEUE, 0);
    for (uint64_t b = 0; b < p->n_batches; b++) {
        demo_batch_t *batch = demo_queue_pop(&p->batch_out, NULL);
        if (p->profile_all)
            nnp_range_begin(&p->tag_push);
        demo_queue_push(&p->device, batch);
        if (p->profile_all)
            nnp_range_end(&p->tag_push);
    }
    return NULL;
}

/* ---- lifecycle ---- */

static void register_ops(const demo_pipeline_t *p)
{
    const nnp_pipeline_op_t ops[] = {
        {OP_ID_DEVICE_QUEUE, nnp_intern("DeviceQueueOp"), 1, -1},
        {OP_ID_BATCH, nnp_intern("BatchOp"), 1, OP_ID_DEVICE_QUEUE},
        {OP_ID_MAP, nnp_intern("MapOp"), (uint32_t)p->cfg.workers, OP_ID_BATCH},
        {OP_ID_GENERATOR, nnp_intern("GeneratorOp"), 1, OP_ID_MAP},
    };
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        nnp_pipeline_op(&ops[i]);
}

static void start_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
    if (pthread_create(t, NULL, fn, arg) != 0)
        demo_fatal("cannot start a pipeline thread");
}

demo_pipeline_t *demo_pipeline_start(const demo_config_t *cfg, int rank)
{
    demo_pipeline_t *p = demo_xcalloc(1, sizeof(*p));
    int w;

    p->cfg = *cfg;
    p->rank = rank;
    p->n_batches = (uint64_t)cfg->total_steps;
    p->n_samples = p->n_batches * (uint64_t)cfg->batch;
    p->profile_all = cfg->level == DEMO_PROF_ALL;
    w = cfg->workers;
    for (int c = 0; c < DEMO_N_CLASSES; c++)
        for (int k = 0; k < DEMO_N_IN; k++)
            p->centres[c][k] = gaussian(key_base(p, KEY_CENTRE) + (uint64_t)(c * DEMO_N_IN + k));
    p->map_in = demo_xcalloc((size_t)w, sizeof(demo_queue_t));
    p->map_out = demo_xcalloc((size_t)w, sizeof(demo_queue_t));
    p->workers = demo_xcalloc((size_t)w, sizeof(map_worker_t));
    for (int k = 0; k < w; k++) {
        demo_queue_init(&p->map_in[k], CONNECTOR_CAPACITY);
        demo_queue_init(&p->map_out[k], CONNECTOR_CAPACITY);
    }
    demo_queue_init(&p->batch_out, CONNECTOR_CAPACITY);
    demo_queue_init(&p->device, DEVICE_QUEUE_CAPACITY);
    p->tag_batch.module = nnp_intern("Dataset");
    p->tag_batch.event = nnp_intern("BatchOp");
    p->tag_batch.stage = nnp_intern("Batch");
    p->tag_batch.level = 1;
    p->tag_push = p->tag_batch;
    p->tag_push.event = nnp_intern("DeviceQueueOp");
    p->tag_push.stage = nnp_intern("Push");
    if (p->profile_all)
        register_ops(p);

    start_thread(&p->generator, generator_main, p);
    for (int k = 0; k < w; k++) {
        p->workers[k].p = p;
        p->workers[k].index = k;
        start_thread(&p->workers[k].thread, map_main, &p->workers[k]);
    }
    start_thread(&p->batcher, batch_main, p);
    start_thread(&p->device_op, device_queue_main, p);
    return p;
}

demo_batch_t *demo_pipeline_next(demo_pipeline_t *p, uint32_t *queue_size, uint32_t *queue_capacity)
{
    *queue_capacity = DEVICE_QUEUE_CAPACITY;
    return demo_queue_pop(&p->device, queue_size);
}

void demo_pipeline_stop(demo_pipeline_t *p)
{
    if (!p)
        return;
    pthread_join(p->generator, NULL);
    for (int k = 0; k < p->cfg.workers; k++)
        pthread_join(p->workers[k].thread, NULL);
    pthread_join(p->batcher, NULL);
    pthread_join(p->device_op, NULL);
    for (int k = 0; k < p->cfg.workers; k++) {
        demo_queue_fini(&p->map_in[k]);
        demo_queue_fini(&p->map_out[k]);
    }
    demo_queue_fini(&p->batch_out);
    demo_queue_fini(&p->device);
    free(p->map_in);
    free(p->map_out);
    free(p->workers);
    free(p);
}
