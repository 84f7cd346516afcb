/* cuda_launch.cu - what profiling costs a CUDA program per kernel launch (bench/cuda_launch.sh
 * runs it unprofiled and under nnprof's CUDA back end, alternately, and prints the ratio).
 * Each round launches LAUNCHES empty kernels on one stream and synchronizes; it prints one
 * JSON line per round: the host time per launch of the launch loop alone (what the
 * application's thread pays) and per launch including the wait for the device. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define LAUNCHES 20000
#define ROUNDS   5

__global__ void empty_kernel(void)
{
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(void)
{
    cudaStream_t st;
    if (cudaStreamCreate(&st) != cudaSuccess) {
        fprintf(stderr, "cuda_launch: no CUDA device\n");
        return 2;
    }
    /* Warm-up: module load, first-launch costs, CUPTI's first buffers. */
    for (int i = 0; i < 1000; i++)
        empty_kernel<<<1, 1, 0, st>>>();
    cudaStreamSynchronize(st);
    for (int r = 0; r < ROUNDS; r++) {
        uint64_t t0 = now_ns(), t1, t2;
        for (int i = 0; i < LAUNCHES; i++)
            empty_kernel<<<1, 1, 0, st>>>();
        t1 = now_ns();
        cudaStreamSynchronize(st);
        t2 = now_ns();
        printf("{\"launches\": %d, \"launch_ns_per_launch\": %.1f, \"total_ns_per_launch\": %.1f}\n",
               LAUNCHES, (double)(t1 - t0) / LAUNCHES, (double)(t2 - t0) / LAUNCHES);
    }
    cudaStreamDestroy(st);
    return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
