/* demo_model.c - the demo's network: a 64-128-64-10 MLP classifier trained with SGD on
 * softmax cross-entropy. Every forward, backward and optimizer op is its own function that
 * records itself as a framework would: full scope name (gradients under "Gradients/"), op
 * type, input shapes and dtypes, and matrix/vector FLOPs. Activations and gradients come
 * from the caching allocator (demo_alloc.c) and are freed as soon as nothing needs them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo.h"

/* The op table: enum id, full scope name, op type, input shapes ("B" is the batch size),
 * input dtypes, then the FLOPs as matrix FLOPs per sample, vector FLOPs per sample and
 * vector FLOPs per step (the optimizer's do not depend on the batch). FLOPs follow the
 * usual convention: a multiply-add is 2, a MatMul [M,K]x[K,N] is 2*M*K*N. */
#define I           DEMO_N_IN
#define H1          DEMO_N_H1
#define H2          DEMO_N_H2
#define C           DEMO_N_CLASSES
#define GRAD(scope) "Gradients/Default/network/" scope
/* Softmax per element: max, subtract, exp, sum, divide. */
#define SOFTMAX_FLOPS 5
#define OP_MAP(XX)                                                                                 \
    XX(GETNEXT, "Default/GetNext-op0", "GetNext", "", "", 0, 0, 0)                                 \
    XX(FC1_MATMUL, "Default/network/fc1/MatMul-op1", "MatMul", "B,64;64,128", "float32;float32",   \
       2 * I * H1, 0, 0)                                                                           \
    XX(FC1_BIAS, "Default/network/fc1/BiasAdd-op2", "BiasAdd", "B,128;128", "float32;float32", 0,  \
       H1, 0)                                                                                      \
    XX(RELU1, "Default/network/relu1/ReLU-op3", "ReLU", "B,128", "float32", 0, H1, 0)              \
    XX(FC2_MATMUL, "Default/network/fc2/MatMul-op4", "MatMul", "B,128;128,64", "float32;float32",  \
       2 * H1 * H2, 0, 0)                                                                          \
    XX(FC2_BIAS, "Default/network/fc2/BiasAdd-op5", "BiasAdd", "B,64;64", "float32;float32", 0,    \
       H2, 0)                                                                                      \
    XX(RELU2, "Default/network/relu2/ReLU-op6", "ReLU", "B,64", "float32", 0, H2, 0)               \
    XX(FC3_MATMUL, "Default/network/fc3/MatMul-op7", "MatMul", "B,64;64,10", "float32;float32",    \
       2 * H2 * C, 0, 0)                                                                           \
    XX(FC3_BIAS, "Default/network/fc3/BiasAdd-op8", "BiasAdd", "B,10;10", "float32;float32", 0, C, \
       0)                                                                                          \
    XX(SOFTMAX, "Default/network/loss/Softmax-op9", "Softmax", "B,10", "float32", 0,               \
       SOFTMAX_FLOPS *C, 0)                                                                        \
    XX(LOSS, "Default/network/loss/CrossEntropy-op10", "CrossEntropy", "B,10;B", "float32;int32",  \
       0, 2, 0)                                                                                    \
    XX(LOSS_GRAD, GRAD("loss/gradCrossEntropy/SoftmaxCrossEntropyGrad-op11"),                      \
       "SoftmaxCrossEntropyGrad", "B,10;B", "float32;int32", 0, 2 * C, 0)                          \
    XX(FC3_BIAS_GRAD, GRAD("fc3/gradBiasAdd/BiasAddGrad-op12"), "BiasAddGrad", "B,10", "float32",  \
       0, C, 0)                                                                                    \
    XX(FC3_DW, GRAD("fc3/gradMatMul/MatMul-op13"), "MatMul", "B,64;B,10", "float32;float32",       \
       2 * H2 * C, 0, 0)                                                                           \
    XX(FC3_DX, GRAD("fc3/gradMatMul/MatMul-op14"), "MatMul", "B,10;64,10", "float32;float32",      \
       2 * H2 * C, 0, 0)                                                                           \
    XX(RELU2_GRAD, GRAD("relu2/gradReLU/ReluGrad-op15"), "ReluGrad", "B,64;B,64",                  \
       "float32;float32", 0, H2, 0)                                                                \
    XX(FC2_BIAS_GRAD, GRAD("fc2/gradBiasAdd/BiasAddGrad-op16"), "BiasAddGrad", "B,64", "float32",  \
       0, H2, 0)                                                                                   \
    XX(FC2_DW, GRAD("fc2/gradMatMul/MatMul-op17"), "MatMul", "B,128;B,64", "float32;float32",      \
       2 * H1 * H2, 0, 0)                                                                          \
    XX(FC2_DX, GRAD("fc2/gradMatMul/MatMul-op18"), "MatMul", "B,64;128,64", "float32;float32",     \
       2 * H1 * H2, 0, 0)                                                                          \
    XX(RELU1_GRAD, GRAD("relu1/gradReLU/ReluGrad-op19"), "ReluGrad", "B,128;B,128",                \
       "float32;float32", 0, H1, 0)                                                                \
    XX(FC1_BIAS_GRAD, GRAD("fc1/gradBiasAdd/BiasAddGrad-op20"), "BiasAddGrad", "B,128", "float32", \
       0, H1, 0)                                                                                   \
    XX(FC1_DW, GRAD("fc1/gradMatMul/MatMul-op21"), "MatMul", "B,64;B,128", "float32;float32",      \
       2 * I * H1, 0, 0)                                                                           \
    XX(SGD_W1, "Default/optimizer-SGD/ApplyGradientDescent-op22", "ApplyGradientDescent",          \
       "64,128;1;64,128", "float32;float32;float32", 0, 0, 2 * I * H1)                             \
    XX(SGD_B1, "Default/optimizer-SGD/ApplyGradientDescent-op23", "ApplyGradientDescent",          \
       "128;1;128", "float32;float32;float32", 0, 0, 2 * H1)                                       \
    XX(SGD_W2, "Default/optimizer-SGD/ApplyGradientDescent-op24", "ApplyGradientDescent",          \
       "128,64;1;128,64", "float32;float32;float32", 0, 0, 2 * H1 * H2)                            \
    XX(SGD_B2, "Default/optimizer-SGD/ApplyGradientDescent-op25", "ApplyGradientDescent",          \
       "64;1;64", "float32;float32;float32", 0, 0, 2 * H2)                                         \
    XX(SGD_W3, "Default/optimizer-SGD/ApplyGradientDescent-op26", "ApplyGradientDescent",          \
       "64,10;1;64,10", "float32;float32;float32", 0, 0, 2 * H2 * C)                               \
    XX(SGD_B3, "Default/optimizer-SGD/ApplyGradientDescent-op27", "ApplyGradientDescent",          \
       "10;1;10", "float32;float32;float32", 0, 0, 2 * C)

typedef enum op_id {
#define OP_ENUM_(id, name, type, shapes, dtypes, mat, vec, vec_const) OP_##id,
    OP_MAP(OP_ENUM_)
#undef OP_ENUM_
        OP_COUNT
} op_id_t;

_Static_assert(OP_COUNT == DEMO_OPS_PER_STEP, "DEMO_OPS_PER_STEP must match the op table");

typedef struct op_info {
    const char *name, *type, *shapes, *dtypes;
    uint64_t matrix_per_sample, vector_per_sample, vector_per_step;
} op_info_t;

static const op_info_t op_table[OP_COUNT] = {
#define OP_INFO_(id, name, type, shapes, dtypes, mat, vec, vec_const)                              \
    [OP_##id] = {name, type, shapes, dtypes, mat, vec, vec_const},
    OP_MAP(OP_INFO_)
#undef OP_INFO_
};

/* Parameters, in the order of the flat gradient vector of the all-reduce. */
enum { P_W1, P_B1, P_W2, P_B2, P_W3, P_B3, P_COUNT };

static const struct {
    const char *name;
    size_t n_floats;
    op_id_t user;   /* the forward op that reads it (its owner in the memory records) */
    op_id_t update; /* its optimizer op */
    int fan_in, fan_out;
} params[P_COUNT] = {
    {"fc1.weight", I *H1, OP_FC1_MATMUL, OP_SGD_W1, I, H1},
    {"fc1.bias", H1, OP_FC1_BIAS, OP_SGD_B1, 0, 0},
    {"fc2.weight", H1 *H2, OP_FC2_MATMUL, OP_SGD_W2, H1, H2},
    {"fc2.bias", H2, OP_FC2_BIAS, OP_SGD_B2, 0, 0},
    {"fc3.weight", H2 *C, OP_FC3_MATMUL, OP_SGD_W3, H2, C},
    {"fc3.bias", C, OP_FC3_BIAS, OP_SGD_B3, 0, 0},
};

/* Room for an expanded shape string such as "4096,128;4096,128". */
#define SHAPES_MAX  96
#define OP_NAME_MAX 160
/* Probabilities are clamped before the log so a confident mistake costs a large but
 * finite loss. */
#define PROB_FLOOR  1e-12f
#define KEY_WEIGHTS 0x5000000000000000ull

struct demo_model {
    demo_alloc_t *alloc;
    int batch;
    float learning_rate;
    nnp_op_t ops[OP_COUNT];
    nnp_str_t out_name[OP_COUNT]; /* "<op>:0", the name of its output tensor */
    nnp_str_t labels_name;        /* "Default/GetNext-op0:1" */
    nnp_str_t param_name[P_COUNT], grad_name[P_COUNT];
    float *param[P_COUNT], *grad[P_COUNT];
    /* Tensors that live across ops of a step. */
    float *x, *h1, *h2, *p, *dlogits, *loss;
    int32_t *labels;
};

/* ---- kernels ---- */

/* Kernels take restrict pointers: without them the compiler must assume the output may
 * alias an input, and at -O2 it then leaves the loops scalar. */

/* C[M,N] = A[M,K] B[K,N]; the inner loop runs along rows of B and C, so it vectorises. */
static void mm_nn(const float *restrict a, const float *restrict b, float *restrict c, int m, int k,
                  int n)
{
    for (int i = 0; i < m; i++) {
        float *ci = c + (size_t)i * n;
        memset(ci, 0, (size_t)n * sizeof(float));
        for (int p = 0; p < k; p++) {
            float aip = a[(size_t)i * k + p];
            const float *bp = b + (size_t)p * n;
            for (int j = 0; j < n; j++)
                ci[j] += aip * bp[j];
        }
    }
}

/* C[K,N] = A[M,K]^T G[M,N]: the weight gradient. */
static void mm_tn(const float *restrict a, const float *restrict g, float *restrict c, int m, int k,
                  int n)
{
    memset(c, 0, (size_t)k * n * sizeof(float));
    for (int i = 0; i < m; i++) {
        const float *gi = g + (size_t)i * n;
        for (int p = 0; p < k; p++) {
            float aip = a[(size_t)i * k + p];
            float *cp = c + (size_t)p * n;
            for (int j = 0; j < n; j++)
                cp[j] += aip * gi[j];
        }
    }
}

/* C[M,K] = G[M,N] W[K,N]^T: the input gradient. */
static void mm_nt(const float *restrict g, const float *restrict w, float *restrict c, int m, int k,
                  int n)
{
    for (int i = 0; i < m; i++) {
        const float *gi = g + (size_t)i * n;
        for (int p = 0; p < k; p++) {
            const float *wp = w + (size_t)p * n;
            float s = 0.0f;
            for (int j = 0; j < n; j++)
                s += gi[j] * wp[j];
            c[(size_t)i * k + p] = s;
        }
    }
}

/* out = max(a, 0), branch-free: the signs of activations are random, and a branch per
 * element would mispredict half the time. */
static void relu_kernel(const float *restrict a, float *restrict out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = a[i] > 0.0f ? a[i] : 0.0f;
}

/* da = dh where h > 0, else 0. */
static void relu_grad_kernel(const float *restrict dh, const float *restrict h, float *restrict da,
                             size_t n)
{
    for (size_t i = 0; i < n; i++)
        da[i] = h[i] > 0.0f ? dh[i] : 0.0f;
}

/* out[i, :] = z[i, :] + bias. */
static void bias_add_kernel(const float *restrict z, const float *restrict bias,
                            float *restrict out, int m, int n)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            out[(size_t)i * n + j] = z[(size_t)i * n + j] + bias[j];
}

/* db[n] = sum over rows of g. */
static void bias_grad_kernel(const float *restrict g, float *restrict db, int m, int n)
{
    memset(db, 0, (size_t)n * sizeof(float));
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            db[j] += g[(size_t)i * n + j];
}

/* ---- op helpers ---- */

static float *alloc_out(demo_model_t *m, op_id_t op, size_t n_floats)
{
    return demo_tensor_alloc(m->alloc, n_floats * sizeof(float), m->out_name[op], m->ops[op].name);
}

static void op_done(const demo_model_t *m, op_id_t op, uint64_t start_ticks)
{
    nnp_op_since(&m->ops[op], start_ticks);
}

/* ---- forward ops ---- */

static float *op_matmul(demo_model_t *m, op_id_t op, const float *in, const float *w, int k, int n)
{
    uint64_t t0 = nnp_now();
    float *out = alloc_out(m, op, (size_t)m->batch * n);
    mm_nn(in, w, out, m->batch, k, n);
    op_done(m, op, t0);
    return out;
}

/* out = z + bias; z is consumed (BiasAdd's gradient does not need it). */
static float *op_bias_add(demo_model_t *m, op_id_t op, float *z, const float *bias, int n)
{
    uint64_t t0 = nnp_now();
    float *out = alloc_out(m, op, (size_t)m->batch * n);
    bias_add_kernel(z, bias, out, m->batch, n);
    demo_tensor_free(m->alloc, z);
    op_done(m, op, t0);
    return out;
}

/* out = max(a, 0); a is consumed (ReluGrad uses the output). */
static float *op_relu(demo_model_t *m, op_id_t op, float *a, int n)
{
    uint64_t t0 = nnp_now();
    size_t count = (size_t)m->batch * n;
    float *out = alloc_out(m, op, count);
    relu_kernel(a, out, count);
    demo_tensor_free(m->alloc, a);
    op_done(m, op, t0);
    return out;
}

static float *op_softmax(demo_model_t *m, float *logits)
{
    uint64_t t0 = nnp_now();
    float *p = alloc_out(m, OP_SOFTMAX, (size_t)m->batch * C);
    for (int i = 0; i < m->batch; i++) {
        const float *z = logits + (size_t)i * C;
        float *pi = p + (size_t)i * C, mx = z[0], sum = 0.0f;
        for (int j = 1; j < C; j++)
            mx = z[j] > mx ? z[j] : mx;
        for (int j = 0; j < C; j++) {
            pi[j] = expf(z[j] - mx);
            sum += pi[j];
        }
        for (int j = 0; j < C; j++)
            pi[j] /= sum;
    }
    demo_tensor_free(m->alloc, logits);
    op_done(m, OP_SOFTMAX, t0);
    return p;
}

static float op_cross_entropy(demo_model_t *m)
{
    uint64_t t0 = nnp_now();
    float sum = 0.0f;
    m->loss = alloc_out(m, OP_LOSS, 1);
    for (int i = 0; i < m->batch; i++) {
        float py = m->p[(size_t)i * C + m->labels[i]];
        sum -= logf(py > PROB_FLOOR ? py : PROB_FLOOR);
    }
    m->loss[0] = sum / (float)m->batch;
    op_done(m, OP_LOSS, t0);
    return m->loss[0];
}

/* ---- backward ops ---- */

/* d(loss)/d(logits) = (softmax - onehot) / B: the fused gradient of softmax and
 * cross-entropy, as frameworks compute it (the unfused form divides by p). */
static void op_loss_grad(demo_model_t *m)
{
    uint64_t t0 = nnp_now();
    float inv_b = 1.0f / (float)m->batch;
    m->dlogits = alloc_out(m, OP_LOSS_GRAD, (size_t)m->batch * C);
    for (int i = 0; i < m->batch; i++) {
        for (int j = 0; j < C; j++)
            m->dlogits[(size_t)i * C + j] =
                (m->p[(size_t)i * C + j] - (j == m->labels[i] ? 1.0f : 0.0f)) * inv_b;
    }
    demo_tensor_free(m->alloc, m->p);
    demo_tensor_free(m->alloc, m->labels);
    m->p = NULL;
    m->labels = NULL;
    op_done(m, OP_LOSS_GRAD, t0);
}

/* db[n] = sum over the batch of g[., n]. */
static void op_bias_grad(demo_model_t *m, op_id_t op, int param, const float *g, int n)
{
    uint64_t t0 = nnp_now();
    float *db = demo_tensor_alloc(m->alloc, (size_t)n * sizeof(float), m->grad_name[param],
                                  m->ops[op].name);
    bias_grad_kernel(g, db, m->batch, n);
    m->grad[param] = db;
    op_done(m, op, t0);
}

/* dW[K,N] = in^T g. */
static void op_weight_grad(demo_model_t *m, op_id_t op, int param, const float *in, const float *g,
                           int k, int n)
{
    uint64_t t0 = nnp_now();
    float *dw = demo_tensor_alloc(m->alloc, (size_t)k * n * sizeof(float), m->grad_name[param],
                                  m->ops[op].name);
    mm_tn(in, g, dw, m->batch, k, n);
    m->grad[param] = dw;
    op_done(m, op, t0);
}

/* dX[B,K] = g W^T; g is consumed. */
static float *op_input_grad(demo_model_t *m, op_id_t op, float *g, const float *w, int k, int n)
{
    uint64_t t0 = nnp_now();
    float *dx = alloc_out(m, op, (size_t)m->batch * k);
    mm_nt(g, w, dx, m->batch, k, n);
    demo_tensor_free(m->alloc, g);
    op_done(m, op, t0);
    return dx;
}

/* da = dh where the ReLU passed its input (h > 0); dh and h are consumed. */
static float *op_relu_grad(demo_model_t *m, op_id_t op, float *dh, float *h, int n)
{
    uint64_t t0 = nnp_now();
    size_t count = (size_t)m->batch * n;
    float *da = alloc_out(m, op, count);
    relu_grad_kernel(dh, h, da, count);
    demo_tensor_free(m->alloc, dh);
    demo_tensor_free(m->alloc, h);
    op_done(m, op, t0);
    return da;
}

/* ---- public ---- */

size_t demo_model_param_count(void)
{
    size_t n = 0;
    for (int i = 0; i < P_COUNT; i++)
        n += params[i].n_floats;
    return n;
}

/* Writes pattern with every 'B' replaced by the batch size. */
static void expand_shapes(const char *pattern, int batch, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (const char *c = pattern; *c && len + 1 < cap; c++) {
        int n = *c == 'B' ? snprintf(out + len, cap - len, "%d", batch)
                          : snprintf(out + len, cap - len, "%c", *c);
        if (n < 0 || (size_t)n >= cap - len)
            break;
        len += (size_t)n;
    }
}

static void intern_ops(demo_model_t *m, uint32_t graph_id)
{
    char buf[OP_NAME_MAX];
    for (int i = 0; i < OP_COUNT; i++) {
        const op_info_t *info = &op_table[i];
        nnp_op_t *op = &m->ops[i];
        memset(op, 0, sizeof(*op));
        op->name = nnp_intern(info->name);
        op->type = nnp_intern(info->type);
        op->graph_id = graph_id;
        expand_shapes(info->shapes, m->batch, buf, sizeof(buf));
        op->input_shapes = nnp_intern(buf);
        op->input_dtypes = nnp_intern(info->dtypes);
        op->flops_matrix = info->matrix_per_sample * (uint64_t)m->batch;
        op->flops_vector = info->vector_per_sample * (uint64_t)m->batch + info->vector_per_step;
        snprintf(buf, sizeof(buf), "%s:0", info->name);
        m->out_name[i] = nnp_intern(buf);
    }
    snprintf(buf, sizeof(buf), "%s:1", op_table[OP_GETNEXT].name);
    m->labels_name = nnp_intern(buf);
}

demo_model_t *demo_model_create(const demo_config_t *cfg, int rank, demo_alloc_t *alloc)
{
    demo_model_t *m = demo_xcalloc(1, sizeof(*m));
    uint64_t key;
    char buf[OP_NAME_MAX];

    (void)rank; /* every rank starts from the same weights, as data parallelism needs */
    m->alloc = alloc;
    m->batch = cfg->batch;
    m->learning_rate = cfg->learning_rate;
    intern_ops(m, 0);
    key = demo_hash(KEY_WEIGHTS ^ cfg->seed);
    for (int i = 0; i < P_COUNT; i++) {
        size_t n = params[i].n_floats;
        /* Glorot/Xavier uniform limit sqrt(6 / (fan_in + fan_out)); biases start at 0. */
        float limit =
            params[i].fan_in ? sqrtf(6.0f / (float)(params[i].fan_in + params[i].fan_out)) : 0.0f;
        m->param_name[i] = nnp_intern(params[i].name);
        snprintf(buf, sizeof(buf), "%s.grad", params[i].name);
        m->grad_name[i] = nnp_intern(buf);
        /* Weights are allocated once, before the first step: static memory. */
        m->param[i] = demo_tensor_alloc(alloc, n * sizeof(float), m->param_name[i],
                                        m->ops[params[i].user].name);
        for (size_t j = 0; j < n; j++)
            m->param[i][j] = (2.0f * demo_uniform(key++) - 1.0f) * limit;
    }
    return m;
}

void demo_model_destroy(demo_model_t *m)
{
    if (!m)
        return;
    for (int i = 0; i < P_COUNT; i++)
        demo_tensor_free(m->alloc, m->param[i]);
    free(m);
}

void demo_model_get_next(demo_model_t *m, demo_batch_t *b, uint64_t start_ticks)
{
    size_t n = (size_t)m->batch;
    m->x = alloc_out(m, OP_GETNEXT, n * I);
    m->labels =
        demo_tensor_alloc(m->alloc, n * sizeof(int32_t), m->labels_name, m->ops[OP_GETNEXT].name);
    memcpy(m->x, b->x, n * I * sizeof(float));
    memcpy(m->labels, b->labels, n * sizeof(int32_t));
    free(b);
    op_done(m, OP_GETNEXT, start_ticks);
}

float demo_model_forward(demo_model_t *m)
{
    float *t;
    t = op_matmul(m, OP_FC1_MATMUL, m->x, m->param[P_W1], I, H1);
    t = op_bias_add(m, OP_FC1_BIAS, t, m->param[P_B1], H1);
    m->h1 = op_relu(m, OP_RELU1, t, H1);
    t = op_matmul(m, OP_FC2_MATMUL, m->h1, m->param[P_W2], H1, H2);
    t = op_bias_add(m, OP_FC2_BIAS, t, m->param[P_B2], H2);
    m->h2 = op_relu(m, OP_RELU2, t, H2);
    t = op_matmul(m, OP_FC3_MATMUL, m->h2, m->param[P_W3], H2, C);
    t = op_bias_add(m, OP_FC3_BIAS, t, m->param[P_B3], C);
    m->p = op_softmax(m, t);
    return op_cross_entropy(m);
}

void demo_model_backward(demo_model_t *m)
{
    float *g;
    op_loss_grad(m);
    op_bias_grad(m, OP_FC3_BIAS_GRAD, P_B3, m->dlogits, C);
    op_weight_grad(m, OP_FC3_DW, P_W3, m->h2, m->dlogits, H2, C);
    g = op_input_grad(m, OP_FC3_DX, m->dlogits, m->param[P_W3], H2, C);
    m->dlogits = NULL;
    g = op_relu_grad(m, OP_RELU2_GRAD, g, m->h2, H2);
    m->h2 = NULL;
    op_bias_grad(m, OP_FC2_BIAS_GRAD, P_B2, g, H2);
    op_weight_grad(m, OP_FC2_DW, P_W2, m->h1, g, H1, H2);
    g = op_input_grad(m, OP_FC2_DX, g, m->param[P_W2], H1, H2);
    g = op_relu_grad(m, OP_RELU1_GRAD, g, m->h1, H1);
    m->h1 = NULL;
    op_bias_grad(m, OP_FC1_BIAS_GRAD, P_B1, g, H1);
    op_weight_grad(m, OP_FC1_DW, P_W1, m->x, g, I, H1);
    /* The network input needs no gradient: its last reader is the fc1 weight gradient. */
    demo_tensor_free(m->alloc, g);
    demo_tensor_free(m->alloc, m->x);
    m->x = NULL;
}

void demo_model_grads_pack(const demo_model_t *m, float *flat)
{
    for (int i = 0; i < P_COUNT; i++) {
        memcpy(flat, m->grad[i], params[i].n_floats * sizeof(float));
        flat += params[i].n_floats;
    }
}

void demo_model_grads_unpack(demo_model_t *m, const float *flat)
{
    for (int i = 0; i < P_COUNT; i++) {
        memcpy(m->grad[i], flat, params[i].n_floats * sizeof(float));
        flat += params[i].n_floats;
    }
}

void demo_model_update(demo_model_t *m)
{
    for (int i = 0; i < P_COUNT; i++) {
        uint64_t t0 = nnp_now();
        float *w = m->param[i], *g = m->grad[i];
        for (size_t j = 0; j < params[i].n_floats; j++)
            w[j] -= m->learning_rate * g[j];
        demo_tensor_free(m->alloc, g);
        m->grad[i] = NULL;
        op_done(m, params[i].update, t0);
    }
    demo_tensor_free(m->alloc, m->loss);
    m->loss = NULL;
}

double demo_model_checksum(const demo_model_t *m)
{
    double sum = 0.0;
    for (int i = 0; i < P_COUNT; i++)
        for (size_t j = 0; j < params[i].n_floats; j++)
            sum += m->param[i][j];
    return sum;
}
