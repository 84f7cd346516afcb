/* synth_run.c - the synthetic run the benchmarks analyse and serve (bench_analyse,
 * bench_ui): N events recorded through the public API with known timestamps: steps of
 * ops (each with a tensor allocation and free), an allreduce, host ranges, a counter, and
 * data-pipeline queue samples. Run it in a child process (one session per process). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnprof/nnprof.h"
#include "synth_run.h"

/* One step = 1 step pair + OPS_PER_STEP ops (each with a tensor alloc and free) + 1
 * allreduce + 2 host rows + 1 counter + 1 connector and 1 device queue sample. */
#define OPS_PER_STEP 40
#define PIPE_OPS     4
#define OP_TYPES     16
#define OP_NS        2000

uint64_t nnp_bench_synth_events_per_step(void)
{
    return 2 + 3 * OPS_PER_STEP + 1 + 2 + 1 + 2;
}

int nnp_bench_synth_run(const char *out, uint64_t n_events)
{
    nnp_options_t o;
    nnp_session_t *s;
    nnp_str_t types[OP_TYPES], names[OPS_PER_STEP], loss;
    nnp_host_tag_t tag = {0};
    nnp_comm_t comm = {0};
    uint64_t steps = n_events / nnp_bench_synth_events_per_step(), t = 1000000;

    nnp_options_init(&o);
    snprintf(o.output_path, sizeof(o.output_path), "%s", out);
    o.sample_interval_ms = 0;
    o.profile_memory = true;
    o.profile_communication = true;
    o.full_policy = NNP_FULL_BLOCK;
    o.buffer_size_kb = 65536;
    o.raw_file_bytes = 1ull << 30;
    if (nnp_session_create(&o, &s) != NNP_OK) {
        fprintf(stderr, "synth_run: %s\n", nnp_last_error());
        return 1;
    }
    for (int i = 0; i < OP_TYPES; i++) {
        char b[32];
        snprintf(b, sizeof(b), "OpType%d", i);
        types[i] = nnp_intern(b);
    }
    for (int i = 0; i < OPS_PER_STEP; i++) {
        char b[96];
        snprintf(b, sizeof(b), "%sDefault/network/layer%d/OpType%d-op%d",
                 i >= 30 ? "Gradients/" : "", i, i % OP_TYPES, i);
        names[i] = nnp_intern(b);
    }
    loss = nnp_intern("loss");
    tag.module = nnp_intern("Dataset");
    tag.event = nnp_intern("GetNext");
    tag.stage = nnp_intern("Run");
    tag.level = 1;
    comm.name = nnp_intern("allreduce-grad");
    comm.kind = NNP_COMM_ALLREDUCE;
    comm.group = nnp_intern("world");
    comm.size_bytes = 1 << 20;
    comm.peer = -1;
    {
        /* Generator -> Map -> Batch -> DeviceQueue, registered once. */
        static const char *const pipe_types[PIPE_OPS] = {"DeviceQueueOp", "BatchOp", "MapOp",
                                                         "GeneratorOp"};
        for (int i = 0; i < PIPE_OPS; i++) {
            nnp_pipeline_op_t p = {i, nnp_intern(pipe_types[i]), i == 2 ? 4u : 1u, i - 1};
            nnp_pipeline_op(&p);
        }
    }
    for (uint64_t k = 0; k < steps; k++) {
        nnp_op_t op = {0};
        nnp_tensor_t tensor = {0};
        nnp_step_begin_at(k, 0, t);
        nnp_queue_sample_at(2, (uint32_t)(k % 8), 16, t);
        nnp_device_queue_sample_at((uint32_t)(k % 3), 2, t + 1);
        nnp_range_begin_at(&tag, t + 10);
        nnp_range_end_at(&tag, t + 500);
        t += 1000;
        for (int i = 0; i < OPS_PER_STEP; i++) {
            op.name = names[i];
            op.type = types[i % OP_TYPES];
            op.correlation_id = k * OPS_PER_STEP + (uint64_t)i + 1;
            op.flops_matrix = (i % 4 == 0) ? 1000000 : 0;
            tensor.address = 0x10000 + (uint64_t)i * 4096;
            tensor.size_bytes = 4096 * (uint64_t)(i + 1);
            tensor.name = names[i];
            tensor.owner_op = names[i];
            nnp_mem_alloc_at(&tensor, t);
            nnp_op_at(&op, t, t + OP_NS);
            nnp_mem_free_at(tensor.address, tensor.size_bytes, t + OP_NS + 50);
            t += OP_NS + 100;
        }
        nnp_comm_at(&comm, t - 20000, t + 5000);
        t += 6000;
        nnp_counter_at(loss, 1.0 / (double)(k + 1), t);
        nnp_step_end_at(k, 0, t);
        t += 500;
    }
    return nnp_session_destroy(s) == NNP_OK ? 0 : 1;
}
