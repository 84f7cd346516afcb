/* test_overlap.c - overlap.c on hand-built models and hand-built step traces (never
 * through step_trace.c): partial, complete and no overlap, gaps, zero-length intervals,
 * per-step clipping, the whole-run row, the compute/communication classification, exact
 * step_trace_time.csv bytes, a brute-force comparison on random data, and OOM handling. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "test_util.h"
#include "util/util.h"

/* Times are written in us in the tests and stored in ns, as the model holds them. */
#define US         1000
#define PATH_BUF   4096
#define CSV_HEADER "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free\n"
/* Random comparison: intervals on a small grid so brute force (one cell per ns) is cheap. */
#define RAND_SEED          0x6f7665726c6170ull
#define RAND_ROUNDS        200
#define RAND_GRID          400
#define RAND_MAX_INTERVALS 12
#define RAND_MAX_STEPS     4
/* Fault injection stops after this many planned failures (the run allocates far fewer). */
#define MAX_FAIL_AT 200

typedef struct fixture {
    nnp_model_t m;
    nnp_actx_t c;
    char *dir;
    nnp_step_trace_t st;
    nnp_step_row_t rows[RAND_MAX_STEPS + 4];
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    assert_int_equal(nnp__model_init(&f->m), NNP_OK);
    f->dir = nnpt_mkdtemp();
    f->c.m = &f->m;
    f->c.out_dir = f->dir;
    f->c.rank_dir = f->dir;
    f->st.rows = f->rows;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    nnp__model_fini(&f->m);
    nnpt_rm_rf(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static void kernel_t(fixture_t *f, int64_t s_us, int64_t e_us, const char *name, const char *type)
{
    size_t i = nnp__table_push(&f->m.kernels.t);
    assert_true(i != SIZE_MAX);
    f->m.kernels.start_ns[i] = s_us * US;
    f->m.kernels.end_ns[i] = e_us * US;
    f->m.kernels.name[i] = nnp__model_intern_cstr(&f->m, name);
    f->m.kernels.type[i] = nnp__model_intern_cstr(&f->m, type);
}

static void kernel(fixture_t *f, int64_t s_us, int64_t e_us)
{
    kernel_t(f, s_us, e_us, "MatMul", "KERNEL");
}

static void op(fixture_t *f, int64_t s_us, int64_t e_us, const char *name)
{
    size_t i = nnp__table_push(&f->m.ops.t);
    assert_true(i != SIZE_MAX);
    f->m.ops.start_ns[i] = s_us * US;
    f->m.ops.end_ns[i] = e_us * US;
    f->m.ops.name[i] = nnp__model_intern_cstr(&f->m, name);
}

static void comm(fixture_t *f, int64_t s_us, int64_t e_us)
{
    size_t i = nnp__table_push(&f->m.comms.t);
    assert_true(i != SIZE_MAX);
    f->m.comms.start_ns[i] = s_us * US;
    f->m.comms.end_ns[i] = e_us * US;
    f->m.comms.kind[i] = NNP_COMM_ALLREDUCE;
}

static void step(fixture_t *f, uint64_t id, int64_t start_us, int64_t end_us)
{
    nnp_step_row_t *r = &f->rows[f->st.n++];
    memset(r, 0, sizeof(*r));
    r->step_id = id;
    r->begin_ns = r->start_point_ns = start_us * US;
    r->end_ns = end_us * US;
    r->fp_ns = r->bp_ns = -1;
}

/* Runs the analysis (after the model's final sort) and writes the CSV. */
static void run(fixture_t *f, nnp_overlap_t *ov)
{
    assert_int_equal(nnp__model_finish(&f->m), NNP_OK);
    assert_int_equal(nnp__overlap_run(&f->c, &f->st, ov), NNP_OK);
    assert_int_equal(nnp__overlap_write(&f->c, ov), NNP_OK);
}

static char *read_csv(fixture_t *f)
{
    char path[PATH_BUF];
    char *text = NULL;
    size_t len = 0;
    snprintf(path, sizeof(path), "%s/step_trace_time.csv", f->dir);
    assert_int_equal(nnp__read_file(path, 1 << 20, &text, &len), NNP_OK);
    return text;
}

static void expect_csv(fixture_t *f, const char *want)
{
    char *text = read_csv(f);
    assert_string_equal(text, want);
    nnp__free(text);
}

static void expect_row(const nnp_overlap_row_t *r, int64_t comp, int64_t comm_us, int64_t not_ov,
                       int64_t free_us)
{
    assert_int_equal(r->computing_ns, comp * US);
    assert_int_equal(r->communication_ns, comm_us * US);
    assert_int_equal(r->comm_not_overlapped_ns, not_ov * US);
    assert_int_equal(r->overlapped_ns, (comm_us - not_ov) * US);
    assert_int_equal(r->free_ns, free_us * US);
}

static void expect_list(const nnp_interval_list_t *l, size_t n, const int64_t *pairs_us)
{
    assert_int_equal(l->n, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(l->v[i].start_ns, pairs_us[2 * i] * US);
        assert_int_equal(l->v[i].end_ns, pairs_us[2 * i + 1] * US);
    }
}

/* The free gaps, read as the timeline reads them (nnp_gap_iter_t), are the n given. */
static void expect_gaps(const nnp_overlap_t *ov, size_t n, const int64_t *pairs_us)
{
    nnp_gap_iter_t it;
    size_t k = 0;
    for (nnp__overlap_gaps_begin(ov, &it); it.has; nnp__overlap_gaps_next(&it), k++) {
        assert_true(k < n);
        assert_int_equal(it.gap.start_ns, pairs_us[2 * k] * US);
        assert_int_equal(it.gap.end_ns, pairs_us[2 * k + 1] * US);
    }
    assert_int_equal(k, n);
}

/* Compute [0,100], communication [50,150]: half of the communication is hidden. */
static void test_partial_overlap(void **state)
{
    fixture_t *f = *state;
    nnp_overlap_t ov;
    kernel(f, 0, 100);
    comm(f, 50, 150);
    run(f, &ov);
    assert_int_equal(ov.n, 1);
    assert_true(ov.rows[0].step_id == UINT64_MAX);
    expect_row(&ov.rows[0], 100, 100, 50, 0);
    expect_csv(f, CSV_HEADER ",100.000,50.000,50.000,100.000,0.000\n");
    {
        static const int64_t not_ov[] = {100, 150};
        expect_list(&ov.comm_not_overlapped, 1, not_ov);
    }
    expect_gaps(&ov, 0, NULL);
    nnp__overlap_fini(&ov);
}

static void test_complete_overlap(void **state)
{
    fixture_t *f = *state;
    nnp_overlap_t ov;
    kernel(f, 0, 100);
    comm(f, 20, 50);
    run(f, &ov);
    expect_row(&ov.rows[0], 100, 30, 0, 0);
    assert_int_equal(ov.comm_not_overlapped.n, 0);
    expect_csv(f, CSV_HEADER ",100.000,0.000,30.000,30.000,0.000\n");
    nnp__overlap_fini(&ov);
}

static void test_no_overlap(void **state)
{
    fixture_t *f = *state;
    nnp_overlap_t ov;
    static const int64_t gap[] = {40, 60};
    kernel(f, 0, 40);
    comm(f, 60, 100);
    run(f, &ov);
    expect_row(&ov.rows[0], 40, 40, 40, 20);
    expect_gaps(&ov, 1, gap);
    expect_csv(f, CSV_HEADER ",40.000,40.000,0.000,40.000,20.000\n");
    nnp__overlap_fini(&ov);
}

/* Communication across compute gaps: only the gaps are exposed. Kernels on two streams
 * overlap each other and merge into one busy period. */
static void test_compute_gaps(void **state)
{
    fixture_t *f = *state;
    nnp_overlap_t ov;
    static const int64_t merged[] = {0, 10, 20, 30, 40, 50};
    static const int64_t exposed[] = {10, 20, 30, 40};
    kernel(f, 20, 30);
    kernel(f, 0, 10);
    kernel(f, 0, 5); /* inside [0,10] on another stream */
    kernel(f, 40, 50);
    kernel(f, 42, 48);
    comm(f, 5, 45);
    run(f, &ov);
    expect_list(&ov.computing, 3, merged);
    expect_list(&ov.comm_not_overlapped, 2, exposed);
    expect_row(&ov.rows[0], 30, 40, 20, 0);
    nnp__overlap_fini(&ov);
}

/* Zero-length records carry no time; touching intervals merge. */
static void test_zero_length_and_touching(void **state)
{
    fixture_t *f = *state;
    nnp_overlap_t ov;
    static const int64_t merged[] = {0, 20};
    kernel(f, 0, 10);
    kernel(f, 10, 20);
    kernel(f, 30, 30);
    comm(f, 25, 25);
    comm(f, 40, 50);
    run(f, &ov);
    expect_list(&ov.computing, 1, merged);
    expect_row(&ov.rows[0], 20, 10, 10, 20);
    nnp__overlap_fini(&ov);
}

/* Two steps; the intervals cross the step boundary and are clipped to each step. */
static void test_per_step_clipping(void **state)
{
    fixture_t *f = *state;
    nnp_overlap_t ov;
    kernel(f, 40, 60);
    comm(f, 45, 70);
    kernel(f, 120, 130); /* after the last step: outside the analysed span */
    step(f, 1, 0, 50);
    step(f, 2, 50, 100);
    run(f, &ov);
    assert_int_equal(ov.n, 3);
    assert_int_equal(ov.rows[0].step_id, 1);
    expect_row(&ov.rows[0], 10, 5, 0, 40);
    assert_int_equal(ov.rows[1].step_id, 2);
    expect_row(&ov.rows[1], 10, 20, 10, 30);
    assert_true(ov.rows[2].step_id == UINT64_MAX); /* the whole span, not in the CSV */
    expect_row(&ov.rows[2], 20, 25, 10, 70);
    expect_csv(f, CSV_HEADER "1,10.000,0.000,5.000,5.000,40.000\n"
                             "2,10.000,10.000,10.000,20.000,30.000\n");
    {
        /* The span is the steps' [0, 100]; busy [40, 70]: a head and a tail gap. */
        static const int64_t gaps[] = {0, 40, 70, 100};
        expect_gaps(&ov, 2, gaps);
    }
    nnp__overlap_fini(&ov);
}

/* Without steps the span is the whole run: first to last busy instant (no free head). */
static void test_whole_run_row(void **state)
{
    fixture_t *f = *state;
    nnp_overlap_t ov;
    kernel(f, 1000, 1001);
    comm(f, 1003, 1004);
    run(f, &ov);
    assert_int_equal(ov.n, 1);
    expect_row(&ov.rows[0], 1, 1, 1, 2);
    expect_csv(f, CSV_HEADER ",1.000,1.000,0.000,1.000,2.000\n");
    nnp__overlap_fini(&ov);
}

/* Sub-microsecond values print exactly: 3 decimals = whole ns. */
static void test_ns_exact(void **state)
{
    fixture_t *f = *state;
    nnp_overlap_t ov;
    size_t i = nnp__table_push(&f->m.kernels.t);
    f->m.kernels.start_ns[i] = 7;
    f->m.kernels.end_ns[i] = 1234567;
    run(f, &ov);
    expect_csv(f, CSV_HEADER ",1234.560,0.000,0.000,0.000,0.000\n");
    nnp__overlap_fini(&ov);
}

/* A CPU-only run: host ops are the compute. With kernels present, ops are ignored. */
static void test_cpu_only_ops(void **state)
{
    fixture_t *f = *state;
    nnp_overlap_t ov;
    op(f, 0, 30, "Default/Conv2D-op1");
    comm(f, 20, 40);
    run(f, &ov);
    expect_row(&ov.rows[0], 30, 20, 10, 0);
    nnp__overlap_fini(&ov);
}

static void test_ops_ignored_with_kernels(void **state)
{
    fixture_t *f = *state;
    nnp_overlap_t ov;
    op(f, 0, 100, "Default/Conv2D-op1");
    kernel(f, 10, 20);
    comm(f, 30, 40);
    run(f, &ov);
    expect_row(&ov.rows[0], 10, 10, 10, 10);
    nnp__overlap_fini(&ov);
}

/* NCCL kernels are communication, memory copies neither (HTA, MSP section 2.3). */
static void test_kernel_classes(void **state)
{
    fixture_t *f = *state;
    nnp_overlap_t ov;
    kernel(f, 0, 10);
    kernel_t(f, 5, 25, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "KERNEL");
    kernel_t(f, 30, 40, "Memcpy HtoD (Pageable -> Device)", "MEMCPY");
    kernel_t(f, 40, 50, "hcom_allReduce_1", "HCCL");
    run(f, &ov);
    /* span [0,50]: compute [0,10]; comm [5,25] + [40,50]; free [25,40] */
    expect_row(&ov.rows[0], 10, 30, 25, 15);
    nnp__overlap_fini(&ov);
}

/* Nothing to measure: the header alone. */
static void test_empty(void **state)
{
    fixture_t *f = *state;
    nnp_overlap_t ov;
    run(f, &ov);
    assert_int_equal(ov.n, 1);
    expect_row(&ov.rows[0], 0, 0, 0, 0);
    expect_csv(f, CSV_HEADER);
    nnp__overlap_fini(&ov);
}

/* --steps that selected no step: no span, no rows but the empty whole-run row. */
static void test_step_filter_without_steps(void **state)
{
    fixture_t *f = *state;
    nnp_overlap_t ov;
    kernel(f, 0, 10);
    f->c.has_steps = true;
    f->c.step_first = f->c.step_last = 99;
    run(f, &ov);
    assert_int_equal(ov.computing.n, 0);
    expect_row(&ov.rows[0], 0, 0, 0, 0);
    expect_csv(f, CSV_HEADER);
    nnp__overlap_fini(&ov);
}

/* A step whose end precedes its start point measures nothing rather than negative time. */
static void test_inverted_step(void **state)
{
    fixture_t *f = *state;
    nnp_overlap_t ov;
    kernel(f, 0, 100);
    step(f, 1, 0, 50);
    step(f, 2, 80, 60);
    run(f, &ov);
    expect_row(&ov.rows[0], 50, 0, 0, 0);
    expect_row(&ov.rows[1], 0, 0, 0, 0);
    nnp__overlap_fini(&ov);
}

/* ---- brute force on random data ---- */

static uint64_t rng_state;

static uint64_t rnd(uint64_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state % n;
}

/* The gaps of [s, e) (µs cells) are the maximal runs of cells neither busy list covers. */
static void expect_gaps_of_cells(const nnp_overlap_t *ov, const uint8_t *comp, const uint8_t *comm,
                                 int64_t s, int64_t e)
{
    static int64_t want[2 * RAND_GRID];
    size_t n = 0;
    for (int64_t x = s; x < e; x++) {
        if (comp[x] || comm[x])
            continue;
        if (n > 0 && want[2 * n - 1] == x) {
            want[2 * n - 1] = x + 1;
        } else {
            want[2 * n] = x;
            want[2 * n + 1] = x + 1;
            n++;
        }
    }
    expect_gaps(ov, n, want);
}

/* Random intervals and steps against one cell per µs: every row's five values and the free
 * gaps. Every other round keeps ps ticks (end_ps columns, all 0), where the gaps are kept
 * as a list; the others make them as they are read: the same gaps either way. */
static void test_random_vs_brute_force(void **state)
{
    (void)state;
    rng_state = RAND_SEED;
    for (int round = 0; round < RAND_ROUNDS; round++) {
        fixture_t *f;
        nnp_overlap_t ov;
        static uint8_t cell_comp[RAND_GRID], cell_comm[RAND_GRID];
        int n_comp = (int)rnd(RAND_MAX_INTERVALS), n_comm = (int)rnd(RAND_MAX_INTERVALS);
        int n_steps = (int)rnd(RAND_MAX_STEPS + 1);
        int64_t lo = RAND_GRID, hi = 0;
        void *st;
        setup(&st);
        f = st;
        if (round % 2)
            assert_int_equal(nnp__model_want_end_ps(&f->m), NNP_OK);
        memset(cell_comp, 0, sizeof(cell_comp));
        memset(cell_comm, 0, sizeof(cell_comm));
        for (int k = 0; k < n_comp + n_comm; k++) {
            int64_t s = (int64_t)rnd(RAND_GRID), e = s + (int64_t)rnd(RAND_GRID / 4);
            if (e > RAND_GRID)
                e = RAND_GRID;
            if (k < n_comp)
                kernel(f, s, e);
            else
                comm(f, s, e);
            for (int64_t x = s; x < e; x++)
                (k < n_comp ? cell_comp : cell_comm)[x] = 1;
            if (e > s) {
                lo = s < lo ? s : lo;
                hi = e > hi ? e : hi;
            }
        }
        {
            int64_t at = (int64_t)rnd(RAND_GRID / 4);
            for (int k = 0; k < n_steps; k++) {
                int64_t end = at + 1 + (int64_t)rnd(RAND_GRID / 2);
                if (end > RAND_GRID)
                    end = RAND_GRID;
                step(f, (uint64_t)k + 1, at, end);
                at = end;
            }
        }
        assert_int_equal(nnp__model_finish(&f->m), NNP_OK);
        assert_int_equal(nnp__overlap_run(&f->c, &f->st, &ov), NNP_OK);
        assert_int_equal(ov.n, (size_t)n_steps + 1);
        for (size_t r = 0; r < ov.n; r++) {
            int64_t s, e, comp = 0, cm = 0, not_ov = 0, fr = 0;
            if (r < (size_t)n_steps) {
                s = f->rows[r].start_point_ns / US;
                e = f->rows[r].end_ns / US;
            } else if (n_steps > 0) {
                s = f->rows[0].start_point_ns / US;
                e = f->rows[n_steps - 1].end_ns / US;
            } else {
                s = lo;
                e = hi > lo ? hi : lo;
            }
            for (int64_t x = s; x < e; x++) {
                comp += cell_comp[x];
                cm += cell_comm[x];
                not_ov += cell_comm[x] && !cell_comp[x];
                fr += !cell_comm[x] && !cell_comp[x];
            }
            expect_row(&ov.rows[r], comp, cm, not_ov, fr);
            if (r == ov.n - 1)
                expect_gaps_of_cells(&ov, cell_comp, cell_comm, s, e);
        }
        nnp__overlap_fini(&ov);
        teardown(&st);
    }
}

/* Every allocation of the analysis may fail: the error comes back, nothing leaks (ASan),
 * and the result is left empty. */
static void test_alloc_failures(void **state)
{
    fixture_t *f = *state;
    nnp_overlap_t ov;
    int rc = NNP_ENOMEM;
    kernel(f, 0, 10);
    kernel(f, 20, 30);
    comm(f, 5, 25);
    step(f, 1, 0, 15);
    step(f, 2, 15, 40);
    assert_int_equal(nnp__model_finish(&f->m), NNP_OK);
    for (uint64_t nth = 1; nth < MAX_FAIL_AT && rc != NNP_OK; nth++) {
        nnp__alloc_fail_at(nth);
        rc = nnp__overlap_run(&f->c, &f->st, &ov);
        nnp__alloc_fail_at(0);
        if (rc != NNP_OK) {
            assert_int_equal(rc, NNP_ENOMEM);
            assert_null(ov.rows);
            assert_null(ov.computing.v);
        }
    }
    assert_int_equal(rc, NNP_OK);
    expect_row(&ov.rows[2], 20, 20, 10, 10);
    nnp__overlap_fini(&ov);
}

/* The CSV cannot be written: an error, not a crash, and no half file. */
static void test_write_error(void **state)
{
    fixture_t *f = *state;
    nnp_overlap_t ov;
    char missing[PATH_BUF];
    kernel(f, 0, 10);
    assert_int_equal(nnp__model_finish(&f->m), NNP_OK);
    assert_int_equal(nnp__overlap_run(&f->c, &f->st, &ov), NNP_OK);
    snprintf(missing, sizeof(missing), "%s/no/such/dir", f->dir);
    f->c.rank_dir = missing;
    assert_true(nnp__overlap_write(&f->c, &ov) < 0);
    f->c.rank_dir = NULL;
    assert_int_equal(nnp__overlap_write(&f->c, &ov), NNP_EINVAL);
    nnp__overlap_fini(&ov);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_partial_overlap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_complete_overlap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_overlap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compute_gaps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_zero_length_and_touching, setup, teardown),
        cmocka_unit_test_setup_teardown(test_per_step_clipping, setup, teardown),
        cmocka_unit_test_setup_teardown(test_whole_run_row, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ns_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpu_only_ops, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ops_ignored_with_kernels, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kernel_classes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_step_filter_without_steps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inverted_step, setup, teardown),
        cmocka_unit_test(test_random_vs_brute_force),
        cmocka_unit_test_setup_teardown(test_alloc_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_error, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
