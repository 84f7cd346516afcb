/* gpu_check.cu - the CUDA program scripts/gpu-check profiles (built with nvcc; compiled,
 * not run, in CI). It does known work on one stream: three kernels with known launch
 * counts and configurations, host-to-device copies from pinned and pageable memory,
 * device-to-host copies, a memory set, three device allocations, NVTX ranges around each
 * phase, and 20 host ops ("Default/net/Saxpy-op1") each linked to the kernel it launches
 * through nnp_correlation_push. The nnprof calls are looked up with dlsym, so the program
 * also runs unprofiled (the benchmark baseline). It writes what it did as JSON to argv[1];
 * scripts/gpu-check compares the profile with that file, never with numbers of its own. */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnprof/nnprof.h"

#define MIB            (1024u * 1024u)
#define N_FLOATS       (1u << 20) /* 4 MiB buffers */
#define FILL_LAUNCHES  10
#define FILL_GRID      64
#define FILL_BLOCK     256
#define SAXPY_LAUNCHES 20
#define SAXPY_GRID     128
#define SAXPY_BLOCK    128
#define RED_LAUNCHES   5
#define RED_GRID       32
#define RED_BLOCK      512
#define RED_SHARED     (RED_BLOCK * sizeof(float))
#define PINNED_COPIES  3 /* 1 MiB each, host to device */
#define DTOH_COPIES    2 /* 1 MiB each */
#define PAGEABLE_BYTES (4u * MIB)
#define MEMSET_BYTES   (256u * 1024u)
#define OP_CORR_BASE   1000u

#define CHECK(call)                                                                                \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "gpu_check: %s: %s\n", #call, cudaGetErrorString(e_));                \
            exit(2);                                                                               \
        }                                                                                          \
    } while (0)

__global__ void fill(float *x, float v, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        x[i] = v;
}

__global__ void saxpy(float a, const float *x, float *y, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = a * x[i] + y[i];
}

__global__ void reduce_sum(const float *x, float *out, int n)
{
    extern __shared__ float part[];
    float s = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        s += x[i];
    part[threadIdx.x] = s;
    __syncthreads();
    for (unsigned w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w)
            part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        atomicAdd(out, part[0]);
}

/* libnnprof's calls when it is loaded (preloaded by nnprof run / gpu-check), else NULL. */
struct nnp_fns {
    nnp_str_t (*intern)(const char *);
    uint64_t (*clock_ns)(void);
    void (*op_at)(const nnp_op_t *, uint64_t, uint64_t);
    void (*push)(uint64_t);
    void (*pop)(void);
};

static nnp_fns find_nnprof(void)
{
    nnp_fns f;
    f.intern = (nnp_str_t(*)(const char *))dlsym(RTLD_DEFAULT, "nnp_intern");
    f.clock_ns = (uint64_t(*)(void))dlsym(RTLD_DEFAULT, "nnp_clock_ns");
    f.op_at = (void (*)(const nnp_op_t *, uint64_t, uint64_t))dlsym(RTLD_DEFAULT, "nnp_op_at");
    f.push = (void (*)(uint64_t))dlsym(RTLD_DEFAULT, "nnp_correlation_push");
    f.pop = (void (*)(void))dlsym(RTLD_DEFAULT, "nnp_correlation_pop");
    if (!f.intern || !f.clock_ns || !f.op_at || !f.push || !f.pop)
        memset(&f, 0, sizeof(f));
    return f;
}

int main(int argc, char **argv)
{
    nnp_fns nf = find_nnprof();
    cudaStream_t st;
    float *x, *y, *small, *sum, *pinned, *pageable;
    FILE *out;
    nnp_op_t op;

    if (argc != 2) {
        fprintf(stderr, "usage: gpu_check EXPECTATIONS.json\n");
        return 64;
    }
    CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CHECK(cudaMalloc(&x, N_FLOATS * sizeof(float)));
    CHECK(cudaMalloc(&y, N_FLOATS * sizeof(float)));
    CHECK(cudaMalloc(&small, MIB));
    sum = small;
    CHECK(cudaMallocHost(&pinned, MIB));
    pageable = (float *)malloc(PAGEABLE_BYTES);
    if (!pageable)
        return 2;
    memset(pinned, 0, MIB);
    memset(pageable, 0, PAGEABLE_BYTES);

    nvtxRangePushA("copy_phase");
    for (int i = 0; i < PINNED_COPIES; i++)
        CHECK(cudaMemcpyAsync(x, pinned, MIB, cudaMemcpyHostToDevice, st));
    CHECK(cudaMemcpyAsync(y, pageable, PAGEABLE_BYTES, cudaMemcpyHostToDevice, st));
    CHECK(cudaMemsetAsync(small, 0, MEMSET_BYTES, st));
    CHECK(cudaStreamSynchronize(st));
    nvtxRangePop();

    nvtxRangePushA("fill_phase");
    for (int i = 0; i < FILL_LAUNCHES; i++)
        fill<<<FILL_GRID, FILL_BLOCK, 0, st>>>(x, 1.0f, N_FLOATS);
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(st));
    nvtxRangePop();

    nvtxRangePushA("saxpy_phase");
    memset(&op, 0, sizeof(op));
    if (nf.intern) {
        op.name = nf.intern("Default/net/Saxpy-op1");
        op.type = nf.intern("Saxpy");
    }
    for (unsigned i = 0; i < SAXPY_LAUNCHES; i++) {
        uint64_t t0 = nf.clock_ns ? nf.clock_ns() : 0;
        if (nf.push)
            nf.push(OP_CORR_BASE + i);
        saxpy<<<SAXPY_GRID, SAXPY_BLOCK, 0, st>>>(2.0f, x, y, N_FLOATS);
        if (nf.pop)
            nf.pop();
        if (nf.op_at) {
            op.correlation_id = OP_CORR_BASE + i;
            nf.op_at(&op, t0, nf.clock_ns());
        }
    }
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(st));
    nvtxRangePop();

    nvtxRangePushA("reduce_phase");
    for (int i = 0; i < RED_LAUNCHES; i++)
        reduce_sum<<<RED_GRID, RED_BLOCK, RED_SHARED, st>>>(y, sum, N_FLOATS);
    CHECK(cudaGetLastError());
    for (int i = 0; i < DTOH_COPIES; i++)
        CHECK(cudaMemcpyAsync(pinned, x, MIB, cudaMemcpyDeviceToHost, st));
    CHECK(cudaStreamSynchronize(st));
    nvtxRangePop();

    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
    CHECK(cudaFree(small));
    CHECK(cudaFreeHost(pinned));
    CHECK(cudaStreamDestroy(st));
    free(pageable);

    out = fopen(argv[1], "w");
    if (!out)
        return 2;
    fprintf(out,
            "{\"profiled\": %s,\n"
            " \"kernels\": {\n"
            "  \"fill\": {\"count\": %d, \"grid\": [%d, 1, 1], \"block\": [%d, 1, 1], "
            "\"dynamic_shared\": 0},\n"
            "  \"saxpy\": {\"count\": %d, \"grid\": [%d, 1, 1], \"block\": [%d, 1, 1], "
            "\"dynamic_shared\": 0},\n"
            "  \"reduce_sum\": {\"count\": %d, \"grid\": [%d, 1, 1], \"block\": [%d, 1, 1], "
            "\"dynamic_shared\": %u}},\n"
            " \"copies\": {\"HtoD\": {\"count\": %d, \"bytes\": %u, \"pageable\": 1},\n"
            "            \"DtoH\": {\"count\": %d, \"bytes\": %u}},\n"
            " \"memset\": {\"count\": 1, \"bytes\": %u},\n"
            " \"device_allocs\": [%u, %u, %u],\n"
            " \"nvtx\": [\"copy_phase\", \"fill_phase\", \"saxpy_phase\", \"reduce_phase\"],\n"
            " \"op\": {\"name\": \"Default/net/Saxpy-op1\", \"count\": %d, \"kernels\": %d,\n"
            "        \"first_correlation_id\": %u}}\n",
            nf.intern ? "true" : "false", FILL_LAUNCHES, FILL_GRID, FILL_BLOCK, SAXPY_LAUNCHES,
            SAXPY_GRID, SAXPY_BLOCK, RED_LAUNCHES, RED_GRID, RED_BLOCK, (unsigned)RED_SHARED,
            PINNED_COPIES + 1, PINNED_COPIES * MIB + PAGEABLE_BYTES, DTOH_COPIES,
            DTOH_COPIES * MIB, MEMSET_BYTES, (unsigned)(N_FLOATS * sizeof(float)),
            (unsigned)(N_FLOATS * sizeof(float)), MIB, SAXPY_LAUNCHES, SAXPY_LAUNCHES,
            OP_CORR_BASE);
    fclose(out);
    return 0;
}
