/* hta_expect.h - HTA's tables of one small three-rank GPU run, worked out by hand
 * (hta_expect.c): checked on the run as Kineto traces (test_import_kineto) and as our own
 * recording (test_hta_raw), which must give the same tables. */
#ifndef NNPT_HTA_EXPECT_H
#define NNPT_HTA_EXPECT_H

/* The run, each rank (µs; the NCCL kernel starts at 1040, 1050, 1045 and lasts 40, 30, 35
 * on ranks 0, 1, 2). Steps: ProfilerStep#1 [1000,1100), #2 [1100,1200), #3 [1200,1300).
 * aten::mm [1009, 1029] ran launch 1. Launch (correlation) -> GPU event:
 *   1 cudaLaunchKernel 1010.2+4.5  -> gemm_a   stream 7   1020.5+30.25
 *   2 cudaLaunchKernel 1015+3      -> ncclKernel_AllReduce_RING_LL_Sum_float stream 20
 *   3 cudaMemcpyAsync  1030+2      -> Memcpy HtoD (Pageable -> Device) stream 7  1060+10
 *   4 cudaLaunchKernel 1105+5      -> gemm_a   stream 7   1111.4+0.3 (sub-µs)
 *   5 cudaLaunchKernel 1120+60     -> relu     stream 7   1190+5
 *   6 cudaLaunchKernel 1210+4      -> gemm_a   stream 7   1220+10 (in the last step)
 *   - a kernel "orphan" with correlation 99 and no launch: stream 7 1300+5
 * Times in a trace are whole ns from a base that is a whole µs. The files under out/hta/
 * must hold exactly the tables HTA computes of it (cmocka asserts). */
void nnpt_check_hta_three_ranks(const char *out);
/* The same but for the stragglers (the one table that compares the ranks' clocks): every
 * table of each rank on its own. */
void nnpt_check_hta_per_rank(const char *out);

#endif
