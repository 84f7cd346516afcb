/* demo_main.c - `demo_train`: flags, the per-rank profiling session, the training loop
 * (steps, epochs, host ranges around fetch/forward/backward/all-reduce/update) and the
 * data-parallel launcher that forks one process per rank. Prints the loss per epoch, the
 * median step time and the --ab-block on/off comparison (both read by
 * bench/bench_overhead.c), and where the raw data went. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "demo.h"

/* Defaults: under a second of training on two cores (~175 us a step). 8192 samples /
 * batch 32 = 256 steps per epoch, 16 epochs; two map workers. */
#define DEFAULT_SAMPLES       8192
#define DEFAULT_BATCH         32
#define DEFAULT_EPOCHS        16
#define DEFAULT_WORKERS       2
#define DEFAULT_SEED          42u
#define DEFAULT_LEARNING_RATE 0.05f
/* Limits keep the derived sizes in range: sample indices are 32-bit, each step keeps its
 * time (8 bytes) for the median, ranks share one mapping, threads are per worker. */
#define MAX_SAMPLES (1L << 24)
#define MAX_BATCH   4096L
#define MAX_WORKERS 64L
#define MAX_RANKS   64L
#define MAX_STEPS   10000000L
#define MAX_EPOCHS  1000000L
/* The CPU/memory sampler period with --profile-level all: 20 samples a second, enough to
 * see per-thread CPU of the pipeline in a one-second run. */
#define SAMPLE_INTERVAL_MS 50
#define GRAPH_ID           0
#define NS_PER_US          1000.0

typedef struct train_tags {
    nnp_host_tag_t fetch, forward, backward, allreduce, update, stats;
    nnp_comm_t comm;
    nnp_str_t loss_counter;
} train_tags_t;

_Noreturn void demo_fatal(const char *what)
{
    fprintf(stderr, "demo_train: %s\n", what);
    fflush(NULL);
    _exit(1);
}

void *demo_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p)
        demo_fatal("out of memory");
    return p;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: demo_train [options]\n\n"
            "Trains a 64-128-64-10 MLP with SGD on generated data, instrumented with nnprof.\n\n"
            "  --epochs E             epochs to train (default %d)\n"
            "  --steps N              steps per rank instead of whole epochs\n"
            "  --batch B              samples per step per rank (default %d)\n"
            "  --samples N            dataset size (default %d)\n"
            "  --workers W            map worker threads (default %d)\n"
            "  --ranks R              data-parallel processes with a gradient all-reduce "
            "(default 1)\n"
            "  --mpi                  one MPI process per rank instead (run it with mpirun;\n"
            "                         the all-reduce is MPI_Allreduce, recorded by nnprof run)\n"
            "  --lr F                 learning rate (default %.2f)\n"
            "  --seed S               data and weight seed (default %u)\n"
            "  --output DIR           profiler output_path (default ./data)\n"
            "  --profile-level L      ops: ops, steps and communication only;\n"
            "                         all: also memory, pipeline, host ranges, CPU (default)\n"
            "  --no-profile           no profiling session (the overhead baseline)\n"
            "  --ab-block K           measure the overhead in this process: alternate K-step\n"
            "                         blocks with the collection window closed and open\n",
            DEFAULT_EPOCHS, DEFAULT_BATCH, DEFAULT_SAMPLES, DEFAULT_WORKERS,
            (double)DEFAULT_LEARNING_RATE, DEFAULT_SEED);
}

/* Parses a whole decimal integer in [lo, hi]; false (with a message) otherwise. */
static bool parse_long(const char *flag, const char *text, long lo, long hi, long *out)
{
    char *end;
    long v;
    errno = 0;
    v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "demo_train: %s: '%s' is not an integer in [%ld, %ld]\n", flag, text, lo,
                hi);
        return false;
    }
    *out = v;
    return true;
}

/* mpi_size > 0: started with --mpi, MPI_COMM_WORLD has this many ranks. */
static bool parse_args(int argc, char **argv, demo_config_t *c, int mpi_size)
{
    bool ranks_given = false;
    long epochs = DEFAULT_EPOCHS, steps = 0, v;

    memset(c, 0, sizeof(*c));
    c->batch = DEFAULT_BATCH;
    c->samples = DEFAULT_SAMPLES;
    c->workers = DEFAULT_WORKERS;
    c->ranks = 1;
    c->seed = DEFAULT_SEED;
    c->learning_rate = DEFAULT_LEARNING_RATE;
    c->level = DEMO_PROF_ALL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = true;
        if (strcmp(a, "--no-profile") == 0) {
            c->level = DEMO_PROF_OFF;
            continue;
        }
        if (strcmp(a, "--mpi") == 0) {
            c->mpi = true;
            continue;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(0);
        }
        if (!val) {
            usage(stderr);
            return false;
        }
        i++;
        if (strcmp(a, "--epochs") == 0) {
            ok = parse_long(a, val, 1, MAX_EPOCHS, &epochs);
        } else if (strcmp(a, "--steps") == 0) {
            ok = parse_long(a, val, 1, MAX_STEPS, &steps);
        } else if (strcmp(a, "--batch") == 0) {
            ok = parse_long(a, val, 1, MAX_BATCH, &v);
            c->batch = (int)v;
        } else if (strcmp(a, "--samples") == 0) {
            ok = parse_long(a, val, 1, MAX_SAMPLES, &v);
            c->samples = (int)v;
        } else if (strcmp(a, "--workers") == 0) {
            ok = parse_long(a, val, 1, MAX_WORKERS, &v);
            c->workers = (int)v;
        } else if (strcmp(a, "--ranks") == 0) {
            ok = parse_long(a, val, 1, MAX_RANKS, &v);
            c->ranks = (int)v;
            ranks_given = true;
        } else if (strcmp(a, "--seed") == 0) {
            ok = parse_long(a, val, 0, (long)UINT32_MAX, &v);
            c->seed = (unsigned)v;
        } else if (strcmp(a, "--lr") == 0) {
            char *end;
            c->learning_rate = strtof(val, &end);
            ok = end != val && *end == '\0' && c->learning_rate > 0.0f;
            if (!ok)
                fprintf(stderr, "demo_train: --lr: '%s' is not a positive number\n", val);
        } else if (strcmp(a, "--ab-block") == 0) {
            ok = parse_long(a, val, 1, MAX_STEPS, &c->ab_block);
        } else if (strcmp(a, "--output") == 0) {
            c->output = val;
        } else if (strcmp(a, "--profile-level") == 0) {
            if (strcmp(val, "ops") == 0) {
                c->level = DEMO_PROF_OPS;
            } else if (strcmp(val, "all") == 0) {
                c->level = DEMO_PROF_ALL;
            } else {
                fprintf(stderr, "demo_train: --profile-level: expected ops or all\n");
                ok = false;
            }
        } else {
            usage(stderr);
            return false;
        }
        if (!ok)
            return false;
    }
    if (c->mpi) {
        if (ranks_given) {
            fprintf(stderr, "demo_train: --mpi takes the ranks from mpirun, not --ranks\n");
            return false;
        }
        if (c->ab_block) {
            fprintf(stderr, "demo_train: --ab-block runs in one process, not with --mpi\n");
            return false;
        }
        c->ranks = mpi_size;
    }
    /* Each rank reads every ranks-th sample; an incomplete last batch is dropped
     * (MindSpore's drop_remainder=True), so every step has the same shapes. */
    c->steps_per_epoch = (long)c->samples / c->ranks / c->batch;
    if (c->steps_per_epoch < 1) {
        fprintf(stderr, "demo_train: --samples %d is less than one batch per rank (%d x %d)\n",
                c->samples, c->ranks, c->batch);
        return false;
    }
    c->total_steps = steps ? steps : epochs * c->steps_per_epoch;
    if (c->total_steps > MAX_STEPS) {
        fprintf(stderr, "demo_train: %ld steps is more than the limit of %ld\n", c->total_steps,
                MAX_STEPS);
        return false;
    }
    c->epochs = (int)((c->total_steps + c->steps_per_epoch - 1) / c->steps_per_epoch);
    if (c->ab_block && c->level == DEMO_PROF_OFF) {
        fprintf(stderr, "demo_train: --ab-block needs profiling (not --no-profile)\n");
        return false;
    }
    return true;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void make_tags(train_tags_t *t)
{
    nnp_str_t train = nnp_intern("Train"), run = nnp_intern("Run");
    memset(t, 0, sizeof(*t));
    /* The fetch belongs to the dataset, as MindSpore's host_info files it. */
    t->fetch.module = nnp_intern("Dataset");
    t->fetch.event = nnp_intern("GetNext");
    t->fetch.stage = nnp_intern("Fetch");
    t->fetch.level = 1;
    t->forward = (nnp_host_tag_t){train, nnp_intern("Forward"), run, 0, 1};
    t->backward = (nnp_host_tag_t){train, nnp_intern("Backward"), run, 0, 1};
    t->allreduce = (nnp_host_tag_t){train, nnp_intern("AllReduce"), run, 0, 1};
    t->update = (nnp_host_tag_t){train, nnp_intern("Update"), run, 0, 1};
    /* A framework-developer detail (level 0): the allocator's bookkeeping per step. */
    t->stats = (nnp_host_tag_t){train, nnp_intern("Allocator"), nnp_intern("Stats"), 0, 0};
    t->comm.name = nnp_intern("allreduce_grads");
    t->comm.kind = NNP_COMM_ALLREDUCE;
    t->comm.group = nnp_intern("world");
    t->comm.size_bytes = demo_model_param_count() * sizeof(float);
    t->comm.peer = -1;
    t->loss_counter = nnp_intern("loss");
}

static int open_session(const demo_config_t *c, int rank, nnp_session_t **out)
{
    nnp_options_t o;
    int rc;

    nnp_options_init(&o);
    if (c->output)
        snprintf(o.output_path, sizeof(o.output_path), "%s", c->output);
    o.rank_id = rank;
    o.device_id = rank;
    o.rank_size = c->ranks;
    o.profile_communication = c->ranks > 1;
    /* A/B runs open and close the window themselves, starting closed. */
    o.start_profile = c->ab_block == 0;
    if (c->level == DEMO_PROF_ALL) {
        o.profile_memory = true;
        o.data_process = true;
        o.profile_framework = NNP_FRAMEWORK_ALL;
        o.host_sys_usage = NNP_HOST_SYS_CPU | NNP_HOST_SYS_MEM;
        o.sample_interval_ms = SAMPLE_INTERVAL_MS;
    } else {
        /* Op-level collection: the op timings, nothing sampled in the background. */
        o.profile_memory = false;
        o.data_process = false;
        o.profile_framework = NNP_FRAMEWORK_NONE;
        o.sample_interval_ms = 0;
    }
    rc = nnp_session_create(&o, out);
    if (rc != NNP_OK)
        fprintf(stderr, "demo_train: rank %d: profiling: %s (%s)\n", rank, nnp_last_error(),
                nnp_strerror(rc));
    return rc;
}

/* Gradients go through this rank's shared slot: pack, reduce, unpack. With --mpi (comm NULL)
 * they go through mpi_buf and MPI_Allreduce, which the MPI library of `nnprof run` records
 * itself, so the demo does not record it a second time. */
static void allreduce(demo_model_t *m, demo_comm_t *comm, float *mpi_buf, int rank,
                      const train_tags_t *t, bool all)
{
    float *slot = comm ? demo_comm_slot(comm, rank) : mpi_buf;
    uint64_t t0;
    if (all)
        nnp_range_begin(&t->allreduce);
    demo_model_grads_pack(m, slot);
    if (comm) {
        t0 = nnp_now();
        demo_comm_allreduce(comm, rank);
        nnp_comm_since(&t->comm, t0);
    } else {
        demo_mpi_allreduce_mean(mpi_buf, demo_model_param_count());
    }
    demo_model_grads_unpack(m, slot);
    if (all)
        nnp_range_end(&t->allreduce);
}

typedef struct run_result {
    float first_loss, last_loss, first_epoch_mean, last_epoch_mean;
    uint64_t median_step_ns;
    /* --ab-block: median step time with the window open and closed, and their counts. */
    uint64_t median_on_ns, median_off_ns;
    long n_on, n_off;
} run_result_t;

/* Sorts v[0..n) and returns its median (0 when empty). */
static uint64_t median_ns(uint64_t *v, long n)
{
    if (n == 0)
        return 0;
    qsort(v, (size_t)n, sizeof(uint64_t), cmp_u64);
    return v[n / 2];
}

/* --ab-block: at the first step of each block, opens (odd blocks) or closes (even blocks)
 * the collection window; returns whether this step is profiled. Closing flushes, so no
 * writer work from an open block runs into the next closed one: a closed block measures
 * the instrumented program with profiling off, in the same process as the open blocks
 * (same memory layout, same CPU frequency) - what separate runs cannot give. */
static bool ab_toggle(const demo_config_t *c, nnp_session_t *ab, long s, bool on)
{
    bool want;
    if (s % c->ab_block != 0)
        return on;
    want = (s / c->ab_block) % 2 == 1;
    if (want != on && (want ? nnp_session_start(ab) : nnp_session_stop(ab)) != NNP_OK)
        demo_fatal("cannot open or close the collection window");
    return want;
}

/* The training loop of one rank. */
static void train(const demo_config_t *c, int rank, demo_comm_t *comm, demo_model_t *m,
                  demo_alloc_t *alloc, nnp_session_t *ab, const char *prefix, run_result_t *res)
{
    bool all = c->level == DEMO_PROF_ALL, on = false;
    uint64_t *step_ns = demo_xcalloc((size_t)c->total_steps, sizeof(uint64_t));
    uint64_t *on_ns = demo_xcalloc((size_t)c->total_steps, sizeof(uint64_t));
    uint64_t *off_ns = demo_xcalloc((size_t)c->total_steps, sizeof(uint64_t));
    float *mpi_buf = c->mpi ? demo_xcalloc(demo_model_param_count(), sizeof(float)) : NULL;
    demo_pipeline_t *pipe;
    train_tags_t t;
    double epoch_sum = 0.0;
    long epoch_steps = 0;

    make_tags(&t);
    pipe = demo_pipeline_start(c, rank);
    for (long s = 0; s < c->total_steps; s++) {
        uint64_t step = (uint64_t)s + 1, epoch = (uint64_t)(s / c->steps_per_epoch) + 1;
        uint64_t begin_ns, t0;
        uint32_t q_size, q_cap;
        demo_batch_t *batch;
        float loss;

        if (ab)
            on = ab_toggle(c, ab, s, on);
        begin_ns = mono_ns();
        if (s % c->steps_per_epoch == 0)
            nnp_epoch_begin(epoch);
        nnp_step_begin(step, GRAPH_ID);
        if (all)
            nnp_range_begin(&t.fetch);
        t0 = nnp_now();
        batch = demo_pipeline_next(pipe, &q_size, &q_cap);
        if (all)
            nnp_device_queue_sample(q_size, q_cap);
        demo_model_get_next(m, batch, t0);
        if (all) {
            nnp_range_end(&t.fetch);
            nnp_range_begin(&t.forward);
        }
        loss = demo_model_forward(m);
        if (all) {
            nnp_range_end(&t.forward);
            nnp_range_begin(&t.backward);
        }
        demo_model_backward(m);
        if (all)
            nnp_range_end(&t.backward);
        if (comm || mpi_buf)
            allreduce(m, comm, mpi_buf, rank, &t, all);
        if (all)
            nnp_range_begin(&t.update);
        demo_model_update(m);
        if (all) {
            nnp_range_end(&t.update);
            nnp_range_begin(&t.stats);
            nnp_host_memory(alloc->reserved_bytes);
            nnp_counter(t.loss_counter, (double)loss);
            nnp_range_end(&t.stats);
        }
        nnp_step_end(step, GRAPH_ID);
        step_ns[s] = mono_ns() - begin_ns;
        if (ab && on)
            on_ns[res->n_on++] = step_ns[s];
        else if (ab)
            off_ns[res->n_off++] = step_ns[s];

        if (s == 0)
            res->first_loss = loss;
        res->last_loss = loss;
        epoch_sum += loss;
        epoch_steps++;
        if (s % c->steps_per_epoch == c->steps_per_epoch - 1 || s == c->total_steps - 1) {
            float mean = (float)(epoch_sum / (double)epoch_steps);
            nnp_epoch_end(epoch);
            if (epoch == 1)
                res->first_epoch_mean = mean;
            res->last_epoch_mean = mean;
            printf("%sepoch %llu/%d: mean loss %.4f over %ld steps\n", prefix,
                   (unsigned long long)epoch, c->epochs, (double)mean, epoch_steps);
            epoch_sum = 0.0;
            epoch_steps = 0;
        }
    }
    demo_pipeline_stop(pipe);
    res->median_step_ns = median_ns(step_ns, c->total_steps);
    res->median_on_ns = median_ns(on_ns, res->n_on);
    res->median_off_ns = median_ns(off_ns, res->n_off);
    free(step_ns);
    free(on_ns);
    free(off_ns);
    free(mpi_buf);
}

/* One rank from start to end: session, model, training, summary. Returns an exit status. */
static int run_rank(const demo_config_t *cfg, int rank, demo_comm_t *comm)
{
    demo_config_t c = *cfg;
    nnp_session_t *own = NULL;
    demo_alloc_t alloc;
    demo_model_t *m;
    run_result_t res;
    char prefix[32] = "";
    int status = 0;

    memset(&res, 0, sizeof(res));
    if (c.ranks > 1)
        snprintf(prefix, sizeof(prefix), "[rank %d] ", rank);
    if (nnp_session_current()) {
        /* Profiling was started by the environment (MS_PROFILER_OPTIONS / PROFILING_MODE):
         * record everything into that session. */
        c.level = DEMO_PROF_ALL;
    } else if (c.level != DEMO_PROF_OFF && open_session(&c, rank, &own) != NNP_OK) {
        return 1;
    }
    if (c.level != DEMO_PROF_OFF)
        (void)nnp_thread_register("Train");
    demo_alloc_init(&alloc, c.level == DEMO_PROF_ALL, (uint32_t)rank);
    m = demo_model_create(&c, rank, &alloc);
    train(&c, rank, comm, m, &alloc, c.ab_block ? own : NULL, prefix, &res);
    printf("%sloss %.4f -> %.4f (first step -> last step); epoch mean %.4f -> %.4f\n", prefix,
           (double)res.first_loss, (double)res.last_loss, (double)res.first_epoch_mean,
           (double)res.last_epoch_mean);
    printf("%sstep time: median %.2f us over %ld steps, %d ops/step (%.2f us per op)\n", prefix,
           (double)res.median_step_ns / NS_PER_US, c.total_steps, DEMO_OPS_PER_STEP,
           (double)res.median_step_ns / NS_PER_US / DEMO_OPS_PER_STEP);
    if (res.n_on > 0 && res.n_off > 0)
        printf("%sA/B blocks of %ld steps: median step %.2f us profiled (%ld steps), %.2f us "
               "not profiled (%ld steps): overhead %+.2f%%\n",
               prefix, c.ab_block, (double)res.median_on_ns / NS_PER_US, res.n_on,
               (double)res.median_off_ns / NS_PER_US, res.n_off,
               ((double)res.median_on_ns / (double)res.median_off_ns - 1.0) * 100.0);
    printf("%sweights checksum %.6f, tensor memory peak %llu bytes\n", prefix,
           demo_model_checksum(m), (unsigned long long)alloc.peak_bytes);
    demo_model_destroy(m);
    demo_alloc_fini(&alloc);
    if (own) {
        printf("%sraw data: %s\n", prefix, nnp_session_raw_dir(own));
        if (nnp_session_destroy(own) != NNP_OK) {
            fprintf(stderr, "demo_train: rank %d: writing the profile: %s\n", rank,
                    nnp_last_error());
            status = 1;
        }
    }
    return status;
}

/* Forks one process per rank around a shared all-reduce segment; if a rank fails the
 * others would wait at its barrier for ever, so they are killed. */
static int run_ranks(const demo_config_t *c)
{
    pid_t pids[MAX_RANKS];
    bool reaped[MAX_RANKS] = {false};
    demo_comm_t *comm;
    int left = c->ranks, status = 0;

    if (nnp_session_current()) {
        fprintf(stderr, "demo_train: --ranks needs profiling from flags, not from the "
                        "environment (each rank opens its own session)\n");
        return 2;
    }
    comm = demo_comm_create(c->ranks, demo_model_param_count());
    if (!comm)
        demo_fatal("cannot map the all-reduce segment");
    fflush(NULL); /* children must not inherit buffered output */
    for (int r = 0; r < c->ranks; r++) {
        pids[r] = fork();
        if (pids[r] < 0) {
            perror("demo_train: fork");
            for (int k = 0; k < r; k++)
                kill(pids[k], SIGKILL);
            left = r;
            status = 1;
            break;
        }
        if (pids[r] == 0) {
            int rc = run_rank(c, r, comm);
            fflush(NULL);
            _exit(rc);
        }
    }
    while (left > 0) {
        int st;
        pid_t p = wait(&st);
        if (p < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        left--;
        for (int r = 0; r < c->ranks; r++)
            reaped[r] = reaped[r] || pids[r] == p;
        if ((!WIFEXITED(st) || WEXITSTATUS(st) != 0) && status == 0) {
            status = 1;
            fprintf(stderr, "demo_train: a rank failed; stopping the others\n");
            for (int r = 0; r < c->ranks; r++)
                if (!reaped[r])
                    kill(pids[r], SIGKILL);
        }
    }
    demo_comm_destroy(comm);
    return status;
}

int main(int argc, char **argv)
{
    demo_config_t c;
    int status, mpi_rank = 0, mpi_size = 0;

    /* Whole lines, so the ranks' output interleaves by line. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* MPI starts before the flags are read: --mpi takes the number of ranks from it. */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mpi") == 0) {
            if (!demo_mpi_init(&argc, &argv, &mpi_rank, &mpi_size))
                return 2;
            break;
        }
    }
    if (!parse_args(argc, argv, &c, mpi_size)) {
        if (mpi_size)
            demo_mpi_finalize();
        return 2;
    }
    if (mpi_rank == 0)
        printf("demo_train: %d %srank(s), %ld steps per rank (%d epoch(s) of %ld), batch %d, "
               "%d map workers, profiling %s\n",
               c.ranks, c.mpi ? "MPI " : "", c.total_steps, c.epochs, c.steps_per_epoch, c.batch,
               c.workers,
               c.level == DEMO_PROF_OFF   ? "off"
               : c.level == DEMO_PROF_OPS ? "ops"
                                          : "all");
    if (c.mpi) {
        status = run_rank(&c, mpi_rank, NULL);
        demo_mpi_finalize();
        return status;
    }
    status = c.ranks > 1 ? run_ranks(&c) : run_rank(&c, 0, NULL);
    if (status == 0 && c.level != DEMO_PROF_OFF && !nnp_session_current())
        printf("analyse with: nnprof analyse %s\n", c.output ? c.output : "./data");
    return status;
}
