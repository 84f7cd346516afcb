/* hta_expect.c - HTA's tables of the three-rank run of hta_expect.h, every value worked out
 * by hand in the comments from HTA's rules (docs/OUTPUTS.md, "HTA analyses"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hta_expect.h"
#include "test_util.h"

/* Every HTA table of the three ranks, worked out by hand (HTA rounds starts up and ends
 * down to the µs; the last profiler step and the launch-less kernel are filtered out):
 * rank 0 GPU events [1021,1050] gemm s7, [1040,1080] nccl s20, [1060,1070] memcpy s7,
 * [1112,1111] gemm s7 (sub-µs: negative), [1190,1195] relu s7. */
void nnpt_check_hta_per_rank(const char *out)
{
    char dir[4200], *t;
    snprintf(dir, sizeof(dir), "%s/hta", out);
    /* Merged: [1021,1080] [1112,1111] [1190,1195]: kernel time 1195-1021 = 174, run time
     * 59-1+5 = 63, idle 111; compute [1021,1050]+[1112,1111]+[1190,1195] = 33; the rest
     * 30. 111/174 = 63.79%, 33/174 = 18.97%, 30/174 = 17.24%. Ranks 1, 2: the same. */
    t = nnpt_read_in(dir, "temporal_breakdown.csv");
    assert_string_equal(t, "rank,idle_time(ns),compute_time(ns),non_compute_time(ns),"
                           "kernel_time(ns),idle_time_pctg,compute_time_pctg,"
                           "non_compute_time_pctg\n"
                           "0,111,33,30,174,63.79,18.97,17.24\n"
                           "1,111,33,30,174,63.79,18.97,17.24\n"
                           "2,111,33,30,174,63.79,18.97,17.24\n");
    free(t);
    /* Stream 7: memcpy 1060-1050 = 10 < 30 and its launch (1030) before 1050: kernel wait;
     * gemm 1112-1070 = 42, launch 1105 > 1070: host wait; relu 1190-1111 = 79, launch
     * 1120 > 1111: host wait. 121/131 = 0.92, 10/131 = 0.08. Stream 20: one kernel. */
    t = nnpt_read_in(dir, "idle_time_breakdown.csv");
    assert_string_equal(t, "rank,stream,idle_category,idle_time,idle_time_ratio\n"
                           "0,7,host_wait,121,0.92\n0,7,kernel_wait,10,0.08\n0,7,other,0,0\n"
                           "0,20,other,0,\n"
                           "1,7,host_wait,121,0.92\n1,7,kernel_wait,10,0.08\n1,7,other,0,0\n"
                           "1,20,other,0,\n"
                           "2,7,host_wait,121,0.92\n2,7,kernel_wait,10,0.08\n2,7,other,0,0\n"
                           "2,20,other,0,\n");
    free(t);
    /* Rank 0: comp alone 1021-1040 + 1190-1195 = 24, comp+comm 1040-1050 = 10, comm alone
     * 1050-1060 + 1070-1080 = 20, comm+memory 10. Rank 1 (nccl 1050-1080): 34, 0, 20, 10.
     * Rank 2 (1045-1080): 29, 5, 20, 10. Sums 87, 15, 60, 30 of 192: 45.3, 7.8, 31.2 (31.25
     * rounds to even), 15.6. */
    t = nnpt_read_in(dir, "kernel_type_breakdown.csv");
    assert_string_equal(t, "kernel_type,sum,percentage\n"
                           "COMPUTATION,87,45.3\n"
                           "COMMUNICATION,60,31.2\n"
                           "COMMUNICATION overlapping MEMORY,30,15.6\n"
                           "COMPUTATION overlapping COMMUNICATION,15,7.8\n");
    free(t);
    /* gemm_a: 29 and -1: sum 28, mean 14, sample std sqrt(450) = 21.213203435596427. */
    t = nnpt_read_in(dir, "kernel_breakdown.csv");
    assert_string_equal(t, "name,sum (ns),max (ns),min (ns),stddev,mean (ns),kernel_type,rank\n"
                           "ncclKernel_AllReduce_RING_LL_Sum_float,40,40,40,0,40,COMMUNICATION,0\n"
                           "ncclKernel_AllReduce_RING_LL_Sum_float,30,30,30,0,30,COMMUNICATION,1\n"
                           "ncclKernel_AllReduce_RING_LL_Sum_float,35,35,35,0,35,COMMUNICATION,2\n"
                           "gemm_a,28,29,-1,21.213203435596427,14,COMPUTATION,0\n"
                           "gemm_a,28,29,-1,21.213203435596427,14,COMPUTATION,1\n"
                           "gemm_a,28,29,-1,21.213203435596427,14,COMPUTATION,2\n"
                           "relu,5,5,5,0,5,COMPUTATION,0\nrelu,5,5,5,0,5,COMPUTATION,1\n"
                           "relu,5,5,5,0,5,COMPUTATION,2\n"
                           "Memcpy HtoD (Pageable -> Device),10,10,10,0,10,MEMORY,0\n"
                           "Memcpy HtoD (Pageable -> Device),10,10,10,0,10,MEMORY,1\n"
                           "Memcpy HtoD (Pageable -> Device),10,10,10,0,10,MEMORY,2\n");
    free(t);
    /* Overlap / merged comm: 10/40 = 25%, 0/30, 5/35 = 14.29%. */
    t = nnpt_read_in(dir, "comm_comp_overlap.csv");
    assert_string_equal(t, "rank,comp_comm_overlap_pctg\n0,25\n1,0\n2,14.29\n");
    free(t);
    /* cpu = floor(end) - ceil(ts); delay = gpu ts - cpu ts + cpu duration (HTA's code):
     * 1: 1014-1011 = 3, 29, 1021-1011+3 = 13; 2: 3, 40, 1040-1015+3 = 28; 3: 2, 10, 32;
     * 4: 5, -1, 12; 5: 60, 5, 130. The launch in the last step (6) is filtered out. */
    t = nnpt_read_in(dir, "cuda_kernel_launch_stats.csv");
    assert_non_null(strstr(t, "rank,correlation,cpu_duration,gpu_duration,launch_delay\n"
                              "0,1,3,29,13\n0,2,3,40,28\n0,3,2,10,32\n0,4,5,-1,12\n0,5,60,5,130\n"
                              "1,1,3,29,13\n"));
    free(t);
    /* Short: cpu <= 50 and gpu < cpu: launch 4; runtime > 50: 5; delay > 100: 5. */
    t = nnpt_read_in(dir, "cuda_kernel_launch_summary.csv");
    assert_string_equal(t, "rank,launches,short_gpu_kernels,runtime_outliers,"
                           "launch_delay_outliers\n0,5,1,1,1\n1,5,1,1,1\n2,5,1,1,1\n");
    free(t);
    /* Stream 7 queue: +1 1011, -1 1021, +1 1030, -1 1060, +1 1105, -1 1112, +1 1120, -1
     * 1190: 1,0,1,0,1,0,1,0: mean 0.5, std sqrt(2/7), quartiles 0, 0.5, 1. Stream 20: 1,0. */
    t = nnpt_read_in(dir, "queue_length_summary.csv");
    assert_non_null(strstr(t, "rank,stream,count,mean,std,min,25%,50%,75%,max\n"
                              "0,7,8,0.5,0.5345224838248488,0,0,0.5,1,1\n"
                              "0,20,2,0.5,0.7071067811865476,0,0.25,0.5,0.75,1\n"));
    free(t);
}

void nnpt_check_hta_three_ranks(const char *out)
{
    char dir[4200], *t;
    nnpt_check_hta_per_rank(out);
    snprintf(dir, sizeof(dir), "%s/hta", out);
    /* Iterations 1 and 2 (step 3 is left out) span 1000..1200: 100 µs each. The NCCL
     * kernels start 0.40, 0.50, 0.45 iterations in; the two latest (ranks 1, 2) are the
     * potential stragglers. */
    t = nnpt_read_in(dir, "straggler_metric.csv");
    assert_string_equal(t, "rank,iteration,stream,name,normalized_start_time,is_straggler\n"
                           "0,1,20,ncclKernel_AllReduce_RING_LL_Sum_float,0.4,No\n"
                           "1,1,20,ncclKernel_AllReduce_RING_LL_Sum_float,0.5,Yes\n"
                           "2,1,20,ncclKernel_AllReduce_RING_LL_Sum_float,0.45,Yes\n");
    free(t);
    t = nnpt_read_in(dir, "stragglers.csv");
    assert_string_equal(t, "rank,straggler_count,potential_straggler\n1,1,Yes\n2,1,Yes\n0,0,No\n");
    free(t);
}
