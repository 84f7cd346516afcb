/* fuzz_cluster.c - libFuzzer harness for the cluster analysis's readers (src/cluster/):
 * MindSpore's per-rank files (cl_mindspore.c), torch_npu rank folders (cl_torch_npu.c),
 * msprof-analyze's cluster outputs (cl_mpa.c) and MindInsight's collected layout with its
 * host mapping and hccl.json (cl_inputs.c). Each input is one file of a small valid cluster
 * of two ranks: the first byte picks the layout and which of its files the rest replaces;
 * the whole analysis then runs on it (one thread), writers included, so whatever a damaged
 * file lets through is also written out. */
#include <stdio.h>
#include <string.h>

#include "cluster/cl_driver.h"
#include "harness.h"
#include "nnprof/nnprof.h"
#include "util/util.h"

#define PATH_BUF 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- the valid cluster: every file of every layout ---- */

#define MS_STEP                                                                                    \
    "step_num,start_point,end_point,total,fp_point,bp_point,iteration_interval,fp_and_bp,tail,"    \
    "stream_1_0_AllReduce-op1,stream_1_0_AllReduce-op1_start_point,"                               \
    "stream_1_0_AllReduce-op1_end_point\n"                                                         \
    "1,100000,200000,100000,101000,190000,1000,89000,10000,5000,185000,190000\n"                   \
    "2,200000,300000,100000,201000,290000,1000,89000,10000,5000,285000,290000\n"                   \
    "-,150000,250000,100000,151000,240000,1000,89000,10000,5000,235000,240000\n"
#define MS_HCCL                                                                                    \
    "step_num,communication_cost,wait_cost,link_info,communication_operator_cost\n"                \
    "1,0.05,0.01,\"{\"\"0-1\"\": {\"\"SDMA\"\": [0.02, 1024.0, 51200000.0]}}\","                   \
    "\"{\"\"stream_1_0_AllReduce-op1\"\": [\"\"1\"\", 0.05, 0.01, {\"\"0-1\"\": {\"\"SDMA\"\": "   \
    "[0.02, 1024.0, 51200000.0]}}]}\"\n"                                                           \
    "-,0.05,0.01,\"{\"\"0-1\"\": {\"\"SDMA\"\": [0.02, 1024.0, 51200000.0]}}\","                   \
    "\"{\"\"stream_1_0_AllReduce-op1\"\": [\"\"-\"\", 0.05, 0.01, {\"\"0-1\"\": {\"\"SDMA\"\": "   \
    "[0.02, 1024.0, 51200000.0]}}]}\"\n"
#define MS_FLOPS   "{\"FLOPs\": 100.5, \"FLOPS\": 20.1, \"FLOPS_Utilization\": 0.2}"
#define MS_ANALYSE "computation_time,communication_alone_time\n0.9,0.05\n0.9,0.05\n0.9,0.05\n"
#define NPU_STEPS                                                                                  \
    "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"     \
    "Communication(Not Overlapped and Exclude Receive),Preparing\n"                                \
    "1,1000.000,200.000,50.000,250.000,100.000,0.000,0.000,200.000,0.000\n"                        \
    "2,1000.000,200.000,50.000,250.000,100.000,0.000,0.000,200.000,0.000\n"
#define NPU_OP(key, wait)                                                                          \
    "\"" key "\": {\"Communication Time Info\": {\"Start Timestamp(us)\": 1000.5, "                \
    "\"Elapse Time(ms)\": 0.3, \"Transit Time(ms)\": 0.1, \"Wait Time(ms)\": " wait ", "           \
    "\"Synchronization Time(ms)\": 0.1, \"Idle Time(ms)\": 0}, "                                   \
    "\"Communication Bandwidth Info\": {\"HCCS\": {\"Transit Size(MB)\": 2.0, "                    \
    "\"Transit Time(ms)\": 0.1, \"Bandwidth(GB/s)\": 20, \"Large Packet Ratio\": 1.0, "            \
    "\"Size Distribution\": {\"2.0\": [1, 0.1]}}}}"
#define NPU_COMM                                                                                   \
    "{\"step1\": {\"collective\": {" NPU_OP("hcom_allReduce__1_0@14929306336204",                  \
                                            "0.2") "}, "                                           \
                                                   "\"p2p\": {" NPU_OP(                            \
                                                       "hcom_send__5_0@14431090129344", "0") "}}}"
#define NPU_MATRIX                                                                                 \
    "{\"step1\": {\"collective\": {\"hcom_allReduce__1_0@14929306336204\": {"                      \
    "\"0-0\": {\"Transport Type\": \"LOCAL\", \"Transit Size(MB)\": 0.5, "                         \
    "\"Transit Time(ms)\": 0.01, \"Op Name\": \"hcom_allReduce__1_0\"}, "                          \
    "\"0-1\": {\"Transport Type\": \"HCCS\", \"Transit Size(MB)\": 2.0, "                          \
    "\"Transit Time(ms)\": 0.1, \"Op Name\": \"hcom_allReduce__1_0\"}}, "                          \
    "\"allreduce-top1@14929306336204\": {\"1-0\": {\"Transport Type\": \"HCCS\", "                 \
    "\"Transit Size(MB)\": 2.0, \"Transit Time(ms)\": 0.4}}}, "                                    \
    "\"p2p\": {\"hcom_send__5_0@14431090129344\": {\"0-1\": {\"Transport Type\": \"HCCS\", "       \
    "\"Transit Size(MB)\": 1.0, \"Transit Time(ms)\": 0.05}}}}}"
#define NPU_META                                                                                   \
    "{\"parallel_group_info\": {\"pp\": {\"group_rank\": 0, \"global_ranks\": [1, 0]}}}"
#define MPA_STEPS                                                                                  \
    "Step,Type,Index,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage," \
    "Bubble,Communication(Not Overlapped and Exclude Receive)\n"                                   \
    ",rank,0,1000.5,200.25,50,250.25,100,1300.75,0,200.25\n"                                       \
    ",rank,1,1500.5,100.25,50,150.25,100,1700.75,0,100.25\n"                                       \
    ",stage,\"(0, 1)\",1500.5,200.25,50,250.25,100,1700.75,0,200.25\n"
#define MPA_COMM                                                                                   \
    "{\"(0, 1)\": {\"step\": {\"hcom_broadcast__501_0@g\": {\"0\": {"                              \
    "\"Communication Time Info\": {\"Start Timestamp(us)\": 1695054582608213.0, "                  \
    "\"Elapse Time(ms)\": 121.7, \"Transit Time(ms)\": 0.5, \"Wait Time(ms)\": 100.0, "            \
    "\"Synchronization Time(ms)\": 99.0, \"Idle Time(ms)\": 21.2, \"Wait Time Ratio\": 0.995, "    \
    "\"Synchronization Time Ratio\": 0.995}, \"Communication Bandwidth Info\": {\"HCCS\": {"       \
    "\"Transit Size(MB)\": 4.0, \"Transit Time(ms)\": 0.5, \"Bandwidth(GB/s)\": 8.0, "             \
    "\"Large Packet Ratio\": 1.0, \"Size Distribution\": {\"4.0\": [1, 0.5]}}}}, \"1\": {"         \
    "\"Communication Time Info\": {\"Start Timestamp(us)\": 1695054582708213.0, "                  \
    "\"Elapse Time(ms)\": 21.7, \"Transit Time(ms)\": 0.5, \"Wait Time(ms)\": 0, "                 \
    "\"Idle Time(ms)\": 21.2}, \"Communication Bandwidth Info\": {}}}}}}"
#define MPA_MATRIX                                                                                 \
    "{\"(0, 1)\": {\"step\": {\"hcom_broadcast__501_0@g\": {\"0-1\": {\"Transport Type\": "        \
    "\"HCCS\", \"Transit Size(MB)\": 4.0, \"Transit Time(ms)\": 0.5, \"Bandwidth(GB/s)\": 8.0, "   \
    "\"Op Name\": \"hcom_broadcast__501_0\"}}, \"Total Op Info@g\": {}}}}"
#define MI_MAPPING "127.0.0.2 1\n127.0.0.3 2\n"
#define MI_HCCL                                                                                    \
    "{\"version\": \"1.0\", \"server_count\": \"2\", \"server_list\": ["                           \
    "{\"server_id\": \"127.0.0.2\", \"device\": [{\"device_id\": \"0\", \"device_ip\": "           \
    "\"10.0.0.1\", \"rank_id\": \"0\"}]}, {\"server_id\": \"127.0.0.3\", \"device\": ["            \
    "{\"device_id\": \"0\", \"device_ip\": \"10.0.0.2\", \"rank_id\": \"1\"}]}], "                 \
    "\"status\": \"completed\"}"

typedef struct file {
    const char *path; /* under the case folder */
    const char *text;
} file_t;

typedef struct layout {
    const file_t *files;
    size_t n;
} layout_t;

static const file_t ms_files[] = {
    {"step_trace_raw_0_detail_time.csv", MS_STEP},
    {"hccl_raw_0.csv", MS_HCCL},
    {"flops_summary_0.json", MS_FLOPS},
    {"ascend_cluster_analyse_data-parallel_1_2_0.csv", MS_ANALYSE},
    {"step_trace_raw_1_detail_time.csv", MS_STEP},
    {"hccl_raw_1.csv", MS_HCCL},
    {"flops_summary_1.json", MS_FLOPS},
    {"ascend_cluster_analyse_data-parallel_1_2_1.csv", MS_ANALYSE},
};

static const file_t npu_files[] = {
    {"b_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv", NPU_STEPS},
    {"b_ascend_pt/ASCEND_PROFILER_OUTPUT/communication.json", NPU_COMM},
    {"b_ascend_pt/ASCEND_PROFILER_OUTPUT/communication_matrix.json", NPU_MATRIX},
    {"b_ascend_pt/profiler_metadata.json", NPU_META},
    {"b_ascend_pt/profiler_info_0.json", "{\"config\": {}}"},
    {"a_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv", NPU_STEPS},
    {"a_ascend_pt/ASCEND_PROFILER_OUTPUT/communication.json", NPU_COMM},
    {"a_ascend_pt/ASCEND_PROFILER_OUTPUT/communication_matrix.json", NPU_MATRIX},
    {"a_ascend_pt/profiler_metadata.json", NPU_META},
    {"a_ascend_pt/profiler_info_1.json", "{\"config\": {}}"},
};

static const file_t mpa_files[] = {
    {"cluster_analysis_output/cluster_step_trace_time.csv", MPA_STEPS},
    {"cluster_analysis_output/cluster_communication.json", MPA_COMM},
    {"cluster_analysis_output/cluster_communication_matrix.json", MPA_MATRIX},
};

static const file_t mi_files[] = {
    {"host_ips_mapping.txt", MI_MAPPING},
    {"hccl.json", MI_HCCL},
    {"cluster_profiler/1/profiler/step_trace_raw_0_detail_time.csv", MS_STEP},
    {"cluster_profiler/1/profiler/hccl_raw_0.csv", MS_HCCL},
    {"cluster_profiler/2/profiler/step_trace_raw_1_detail_time.csv", MS_STEP},
    {"cluster_profiler/2/profiler/hccl_raw_1.csv", MS_HCCL},
};

static const layout_t layouts[] = {
    {ms_files, NNP_ARRAY_LEN(ms_files)},
    {npu_files, NNP_ARRAY_LEN(npu_files)},
    {mpa_files, NNP_ARRAY_LEN(mpa_files)},
    {mi_files, NNP_ARRAY_LEN(mi_files)},
};

/* ---- the harness ---- */

/* In the harness's directory: the case the analysis reads, and where it writes. */
#define CASE_DIR "case"
#define OUT_DIR  "out"

NNP_FUZZ_INITIALIZE("cluster", NULL);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char case_dir[PATH_BUF], rel[PATH_BUF];
    const layout_t *lay;
    size_t which;
    nnp_cl_opts_t o;
    nnp_cl_report_t rep;
    nnp_cl_dist_t d;
    static uint8_t sel[NNP_CL_MAX_RANKS];
    if (size < 1 || !nnp_fuzz_dir()[0] || !nnp_fuzz_path(case_dir, sizeof(case_dir), CASE_DIR))
        return 0;
    lay = &layouts[data[0] % NNP_ARRAY_LEN(layouts)];
    which = (size_t)(data[0] / NNP_ARRAY_LEN(layouts)) % lay->n;
    data++;
    size--;
    nnp_fuzz_rmdir(CASE_DIR);
    for (size_t i = 0; i < lay->n; i++) {
        const void *p = i == which ? (const void *)data : lay->files[i].text;
        size_t n = i == which ? size : strlen(lay->files[i].text);
        if ((size_t)snprintf(rel, sizeof(rel), CASE_DIR "/%s", lay->files[i].path) >= sizeof(rel) ||
            nnp_fuzz_write_mkdir(rel, p, n) != 0)
            return 0;
    }
    memset(&o, 0, sizeof(o));
    if (!nnp_fuzz_path(o.out_dir, sizeof(o.out_dir), OUT_DIR))
        return 0;
    o.threads = 1;
    o.quiet = true;
    o.timeline_ranks = sel;
    nnp__cl_dist_local(&d);
    (void)nnp__cluster_run(case_dir, &o, &d, &rep);
    nnp__clear_error();
    return 0;
}
