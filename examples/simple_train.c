/* simple_train.c - a small instrumented training loop: a 2-layer perceptron fitted with
 * SGD on data it generates, recording its ops, steps, tensor memory and host ranges the
 * way a framework would. Profiling comes from the environment (MS_PROFILER_OPTIONS) when
 * set, else from --output DIR through the C API. Used by the README's first command and
 * by the crash tests (--forever runs until killed). The full demo replaces it (issue 5). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nnprof/nnprof.h>

#define N_IN            32
#define N_HIDDEN        64
#define N_OUT           1
#define BATCH           16
#define LEARNING_RATE   0.05f
#define DEFAULT_STEPS   200
#define STEPS_PER_EPOCH 50

typedef struct ids {
    nnp_str_t matmul, relu, loss, fwd1, fwd2, act, mse, bwd1, shapes1, shapes2;
    nnp_str_t mod, ev_step, stage, tensor;
} ids_t;

static float w1[N_IN][N_HIDDEN], w2[N_HIDDEN];
static float x[BATCH][N_IN], y[BATCH], h[BATCH][N_HIDDEN], out[BATCH];

static float frand(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return (float)((*seed >> 8) & 0xFFFF) / 65536.0f - 0.5f;
}

static void record_op(nnp_str_t name, nnp_str_t type, nnp_str_t shapes, uint64_t flops, uint64_t t0,
                      uint64_t corr)
{
    nnp_op_t op;
    memset(&op, 0, sizeof(op));
    op.name = name;
    op.type = type;
    op.input_shapes = shapes;
    op.flops_matrix = flops;
    op.correlation_id = corr;
    nnp_op_since(&op, t0);
}

/* One SGD step on a fresh batch; returns the batch loss. */
static float train_step(const ids_t *id, unsigned *seed, uint64_t step)
{
    float loss = 0.0f, g_out[BATCH];
    uint64_t t0;
    nnp_tensor_t t;

    /* The target is a fixed smooth function of the inputs, so the loss can fall. */
    for (int b = 0; b < BATCH; b++) {
        float s = 0.0f;
        for (int i = 0; i < N_IN; i++) {
            x[b][i] = frand(seed);
            s += x[b][i] * (float)((i % 3) - 1);
        }
        y[b] = tanhf(s);
    }
    memset(&t, 0, sizeof(t));
    t.address = (uint64_t)(uintptr_t)h;
    t.size_bytes = sizeof(h);
    t.name = id->tensor;
    t.owner_op = id->fwd1;
    nnp_mem_alloc(&t);

    t0 = nnp_now();
    for (int b = 0; b < BATCH; b++) {
        for (int j = 0; j < N_HIDDEN; j++) {
            float s = 0.0f;
            for (int i = 0; i < N_IN; i++)
                s += x[b][i] * w1[i][j];
            h[b][j] = s;
        }
    }
    record_op(id->fwd1, id->matmul, id->shapes1, 2ull * BATCH * N_IN * N_HIDDEN, t0, step * 8);
    t0 = nnp_now();
    for (int b = 0; b < BATCH; b++)
        for (int j = 0; j < N_HIDDEN; j++)
            h[b][j] = h[b][j] > 0.0f ? h[b][j] : 0.0f;
    record_op(id->act, id->relu, 0, 0, t0, step * 8 + 1);
    t0 = nnp_now();
    for (int b = 0; b < BATCH; b++) {
        float s = 0.0f;
        for (int j = 0; j < N_HIDDEN; j++)
            s += h[b][j] * w2[j];
        out[b] = s;
    }
    record_op(id->fwd2, id->matmul, id->shapes2, 2ull * BATCH * N_HIDDEN, t0, step * 8 + 2);
    t0 = nnp_now();
    for (int b = 0; b < BATCH; b++) {
        float d = out[b] - y[b];
        loss += d * d / BATCH;
        g_out[b] = 2.0f * d / BATCH;
    }
    record_op(id->mse, id->loss, 0, 0, t0, step * 8 + 3);

    /* Backward and update (the Gradients scope, then the optimizer). */
    t0 = nnp_now();
    for (int j = 0; j < N_HIDDEN; j++) {
        float g = 0.0f;
        for (int b = 0; b < BATCH; b++)
            g += g_out[b] * h[b][j];
        for (int b = 0; b < BATCH; b++) {
            float gh = h[b][j] > 0.0f ? g_out[b] * w2[j] : 0.0f;
            for (int i = 0; i < N_IN; i++)
                w1[i][j] -= LEARNING_RATE * gh * x[b][i];
        }
        w2[j] -= LEARNING_RATE * g;
    }
    record_op(id->bwd1, id->matmul, id->shapes1, 4ull * BATCH * N_IN * N_HIDDEN, t0, step * 8 + 4);
    nnp_bp_end(step);
    nnp_mem_free(t.address, t.size_bytes);
    return loss;
}

int main(int argc, char **argv)
{
    const char *output = NULL;
    long steps = DEFAULT_STEPS;
    bool forever = false;
    nnp_session_t *own = NULL;
    unsigned seed = 42;
    float first = 0.0f, last = 0.0f;
    ids_t id;
    nnp_host_tag_t tag;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--output") == 0 && i + 1 < argc) {
            output = argv[++i];
        } else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
            steps = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--forever") == 0) {
            forever = true;
        } else {
            fprintf(stderr, "usage: simple_train [--output DIR] [--steps N] [--forever]\n");
            return 2;
        }
    }
    if (!nnp_session_current() && output) {
        nnp_options_t o;
        int rc;
        nnp_options_init(&o);
        snprintf(o.output_path, sizeof(o.output_path), "%s", output);
        rc = nnp_session_create(&o, &own);
        if (rc != NNP_OK) {
            fprintf(stderr, "simple_train: profiling: %s (%s)\n", nnp_last_error(),
                    nnp_strerror(rc));
            return 1;
        }
    }
    nnp_thread_register("train");
    id.matmul = nnp_intern("MatMul");
    id.relu = nnp_intern("ReLU");
    id.loss = nnp_intern("MSELoss");
    id.fwd1 = nnp_intern("Default/network/dense1/MatMul-op1");
    id.act = nnp_intern("Default/network/relu/ReLU-op2");
    id.fwd2 = nnp_intern("Default/network/dense2/MatMul-op3");
    id.mse = nnp_intern("Default/loss/MSELoss-op4");
    id.bwd1 = nnp_intern("Gradients/Default/network/MatMul-grad-op5");
    id.shapes1 = nnp_intern("16,32;32,64");
    id.shapes2 = nnp_intern("16,64;64,1");
    id.tensor = nnp_intern("hidden_activation");
    id.mod = nnp_intern("Train");
    id.ev_step = nnp_intern("Step");
    id.stage = nnp_intern("Run");
    memset(&tag, 0, sizeof(tag));
    tag.module = id.mod;
    tag.event = id.ev_step;
    tag.stage = id.stage;
    tag.level = 1;

    for (int i = 0; i < N_IN; i++)
        for (int j = 0; j < N_HIDDEN; j++)
            w1[i][j] = frand(&seed) * 0.3f;
    for (int j = 0; j < N_HIDDEN; j++)
        w2[j] = frand(&seed) * 0.3f;

    for (long s = 0; forever || s < steps; s++) {
        float loss;
        if (s % STEPS_PER_EPOCH == 0)
            nnp_epoch_begin((uint64_t)(s / STEPS_PER_EPOCH));
        nnp_step_begin((uint64_t)s, 0);
        nnp_range_begin(&tag);
        nnp_fp_start((uint64_t)s);
        loss = train_step(&id, &seed, (uint64_t)s);
        nnp_range_end(&tag);
        nnp_step_end((uint64_t)s, 0);
        nnp_counter(id.loss, loss);
        if (s % STEPS_PER_EPOCH == STEPS_PER_EPOCH - 1)
            nnp_epoch_end((uint64_t)(s / STEPS_PER_EPOCH));
        if (s == 0)
            first = loss;
        last = loss;
    }
    printf("simple_train: %ld steps, loss %.4f -> %.4f\n", steps, first, last);
    if (own) {
        printf("raw data: %s\n", nnp_session_raw_dir(own));
        return nnp_session_destroy(own) == NNP_OK ? 0 : 1;
    }
    return 0;
}
