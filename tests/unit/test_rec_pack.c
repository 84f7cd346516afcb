/* test_rec_pack.c - the compact encoding of RECORDS chunks (src/format/rec_pack.c):
 * round trips of realistic and of random slots, the size bound, chunks cut at record
 * boundaries (slots and records counted), a few bytes per event for a range's begin/end,
 * and damaged input (cut short, bytes changed) that decodes to an error or to some records
 * but never writes outside the slots it was given. */
#include <stdlib.h>
#include <string.h>

#include "format/rec_pack.h"
#include "test_util.h"

#define N_SLOTS   20000
#define GUARD     4
#define N_DAMAGED 3000

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Records as the recorder writes them: range pairs, ops with an extension slot, kernels
 * with three slots, counters, now and then a slot that is no record at all. */
static size_t fill_realistic(nnp_rec_t *s, size_t cap, bool with_garbage)
{
    size_t n = 0;
    uint64_t ts = 1000000;
    while (n + NNP_REC_MAX_SLOTS <= cap) {
        unsigned pick = (unsigned)(rnd() % 16);
        ts += 20 + rnd() % 200;
        memset(&s[n], 0, sizeof(s[n]));
        if (pick < 10) { /* a begin/end pair */
            uint32_t name = (uint32_t)(1 + rnd() % 8);
            s[n] = (nnp_rec_t){.kind = NNP_REC_RANGE_BEGIN, .n_slots = 1, .name = name, .ts = ts};
            n++;
            ts += 5 + rnd() % 50;
            s[n] = (nnp_rec_t){.kind = NNP_REC_RANGE_END, .n_slots = 1, .name = name, .ts = ts};
            n++;
        } else if (pick < 12) { /* an op: two slots */
            s[n] = (nnp_rec_t){.kind = NNP_REC_OP,
                               .n_slots = 2,
                               .flags = NNP_REC_F_TS_NS,
                               .name = (uint32_t)(rnd() % 300),
                               .ts = ts,
                               .a = ts + 100 + rnd() % 1000,
                               .b = rnd() % 4};
            memset(&s[n + 1], 0, sizeof(s[n + 1]));
            s[n + 1].ts = rnd() % 3 ? 7 : rnd();
            s[n + 1].a = 1 + rnd() % 5;
            n += 2;
        } else if (pick < 14) { /* three slots, one word random */
            s[n] = (nnp_rec_t){.kind = NNP_REC_KERNEL,
                               .n_slots = 3,
                               .flags = NNP_REC_F_LAUNCH,
                               .name = (uint32_t)rnd(),
                               .ts = ts,
                               .a = rnd(),
                               .b = ts - 3};
            memset(&s[n + 1], 0x11, sizeof(s[n + 1]));
            memset(&s[n + 2], 0, sizeof(s[n + 2]));
            s[n + 2].b = rnd();
            n += 3;
        } else if (pick < 15 || !with_garbage) { /* a counter with a wandering value */
            s[n] = (nnp_rec_t){.kind = NNP_REC_COUNTER,
                               .n_slots = 1,
                               .name = 3,
                               .ts = ts,
                               .a = (uint64_t)(int64_t)(rnd() % 2000 - 1000),
                               .b = 0};
            n++;
        } else { /* no record: a stray kind, n_slots out of range, random bytes */
            uint64_t w[4] = {rnd(), rnd(), rnd(), rnd()};
            memcpy(&s[n], w, sizeof(w));
            if (s[n].n_slots >= 1 && s[n].n_slots <= NNP_REC_MAX_SLOTS)
                s[n].n_slots = 0;
            n++;
        }
    }
    return n;
}

/* Packs in[0..n) and unpacks it again; returns the slots packed (all of them, unless the
 * last record runs past n). */
static size_t roundtrip(const nnp_rec_t *in, size_t n, size_t *packed_bytes)
{
    nnp_pack_state_t *enc = malloc(sizeof(*enc)), *dec = malloc(sizeof(*dec));
    uint8_t *buf = malloc(n * NNP_PACK_SLOT_MAX + 1);
    nnp_rec_t *out = malloc((n + GUARD) * sizeof(*out));
    size_t len, used = SIZE_MAX;
    uint32_t records = 0;
    assert_non_null(enc);
    assert_non_null(dec);
    assert_non_null(buf);
    assert_non_null(out);
    nnp__pack_reset(enc);
    nnp__pack_reset(dec);
    len = nnp__pack_encode(enc, in, n, buf, &used, &records);
    assert_true(used <= n && used + NNP_REC_MAX_SLOTS > n);
    assert_true(len <= used * NNP_PACK_SLOT_MAX);
    assert_true(records <= used);
    memset(out, 0xA5, (n + GUARD) * sizeof(*out));
    assert_int_equal(nnp__pack_decode(dec, buf, len, out, used), 0);
    assert_memory_equal(out, in, used * sizeof(*out));
    for (size_t g = 0; g < (n - used + GUARD) * sizeof(*out); g++)
        assert_int_equal(((uint8_t *)&out[used])[g], 0xA5);
    *packed_bytes = len;
    free(enc);
    free(dec);
    free(buf);
    free(out);
    return used;
}

/* Whole records only, as they come: the records counted, a record cut by the end left out
 * (the writer's next chunk starts with it). */
static void test_cut_at_record_boundary(void **state)
{
    enum { N = 12 };
    nnp_rec_t s[N];
    nnp_pack_state_t *st = malloc(sizeof(*st));
    uint8_t buf[N * NNP_PACK_SLOT_MAX];
    size_t used, len;
    uint32_t records;
    (void)state;
    assert_non_null(st);
    memset(s, 0, sizeof(s));
    /* 1 + 2 + 3 + 1 + 3 slots: records at 0, 1, 3, 6, 7 (7..9), then two range slots. */
    s[0] = (nnp_rec_t){.kind = NNP_REC_RANGE_BEGIN, .n_slots = 1, .name = 1, .ts = 10};
    s[1] = (nnp_rec_t){.kind = NNP_REC_OP, .n_slots = 2, .name = 2, .ts = 11, .a = 20};
    s[3] = (nnp_rec_t){.kind = NNP_REC_KERNEL, .n_slots = 3, .name = 3, .ts = 12, .a = 30};
    s[6] = (nnp_rec_t){.kind = NNP_REC_RANGE_END, .n_slots = 1, .name = 1, .ts = 13};
    s[7] = (nnp_rec_t){.kind = NNP_REC_SYS_CPU, .n_slots = 3, .ts = 14};
    s[10] = (nnp_rec_t){.kind = NNP_REC_COUNTER, .n_slots = 1, .name = 4, .ts = 15};
    s[11] = (nnp_rec_t){.kind = NNP_REC_COUNTER, .n_slots = 1, .name = 4, .ts = 16};
    for (size_t n = 0; n <= N; n++) {
        static const size_t want_used[N + 1] = {0, 1, 1, 3, 3, 3, 6, 7, 7, 7, 10, 11, 12};
        static const uint32_t want_rec[N + 1] = {0, 1, 1, 2, 2, 2, 3, 4, 4, 4, 5, 6, 7};
        nnp__pack_reset(st);
        len = nnp__pack_encode(st, s, n, buf, &used, &records);
        assert_int_equal(used, want_used[n]);
        assert_int_equal(records, want_rec[n]);
        assert_true(len <= used * NNP_PACK_SLOT_MAX);
    }
    /* A slot that is no record (n_slots 0 or over 3) is one raw slot, counted as one. */
    s[6].n_slots = 0;
    s[7].n_slots = 9;
    nnp__pack_reset(st);
    (void)nnp__pack_encode(st, s, N, buf, &used, &records);
    assert_int_equal(used, N);
    assert_int_equal(records, 4 + 5);
    free(st);
}

static void test_realistic(void **state)
{
    nnp_rec_t *s = malloc(N_SLOTS * sizeof(*s));
    size_t n, len;
    (void)state;
    assert_non_null(s);
    n = fill_realistic(s, N_SLOTS, false);
    assert_int_equal(roundtrip(s, n, &len), n);
    /* A fifth of the bytes or less for this mix (mostly range pairs). */
    assert_true(len * 5 <= n * sizeof(nnp_rec_t));
    free(s);
}

static void test_pairs_are_small(void **state)
{
    nnp_rec_t *s = malloc(N_SLOTS * sizeof(*s));
    size_t len;
    uint64_t ts = 123456789;
    (void)state;
    assert_non_null(s);
    for (size_t i = 0; i < N_SLOTS; i += 2) {
        s[i] = (nnp_rec_t){.kind = NNP_REC_RANGE_BEGIN, .n_slots = 1, .name = 7, .ts = ts};
        s[i + 1] = (nnp_rec_t){.kind = NNP_REC_RANGE_END, .n_slots = 1, .name = 7, .ts = ts + 20};
        ts += 45;
    }
    assert_int_equal(roundtrip(s, N_SLOTS, &len), N_SLOTS);
    /* kind, mode and a one-byte delta: 3 bytes per event (the first of each kind more). */
    assert_true(len <= N_SLOTS * 3 + 16);
    free(s);
}

static void test_random_slots(void **state)
{
    nnp_rec_t *s = malloc(N_SLOTS * sizeof(*s));
    size_t len;
    (void)state;
    assert_non_null(s);
    /* Whatever the bytes, the encoding is lossless and within its bound. */
    for (size_t i = 0; i < N_SLOTS; i++) {
        uint64_t w[4] = {rnd(), rnd(), rnd(), rnd()};
        memcpy(&s[i], w, sizeof(w));
        if (i % 3 == 0)
            s[i].n_slots = (uint8_t)(1 + rnd() % 4);
    }
    roundtrip(s, N_SLOTS, &len);
    /* Mixed with records, and an empty chunk. */
    fill_realistic(s, N_SLOTS, true);
    roundtrip(s, N_SLOTS, &len);
    roundtrip(s, 0, &len);
    free(s);
}

static void test_damage(void **state)
{
    enum { N = 600 };
    nnp_rec_t in[N], out[N + GUARD];
    uint8_t buf[N * NNP_PACK_SLOT_MAX], bad[N * NNP_PACK_SLOT_MAX];
    nnp_pack_state_t *st = malloc(sizeof(*st));
    size_t len, used;
    uint32_t records;
    (void)state;
    assert_non_null(st);
    fill_realistic(in, N, true);
    nnp__pack_reset(st);
    len = nnp__pack_encode(st, in, N, buf, &used, &records);
    assert_int_equal(used, N); /* fill_realistic leaves no record cut at the end */
    for (int k = 0; k < N_DAMAGED; k++) {
        size_t cut = len, flips = (size_t)(1 + rnd() % 3);
        memcpy(bad, buf, len);
        if (k % 2) {
            cut = (size_t)(rnd() % len);
            flips = 0;
        }
        for (size_t f = 0; f < flips; f++)
            bad[rnd() % len] ^= (uint8_t)(1u << (rnd() % 8));
        memset(out, 0xA5, sizeof(out));
        nnp__pack_reset(st);
        /* Cut short: never a success. Changed: either outcome, within bounds. */
        if (nnp__pack_decode(st, bad, cut, out, N) == 0)
            assert_true(cut == len);
        for (size_t g = 0; g < GUARD * sizeof(nnp_rec_t); g++)
            assert_int_equal(((uint8_t *)&out[N])[g], 0xA5);
        /* Asking for fewer slots than were packed: the bytes do not fit. */
        nnp__pack_reset(st);
        assert_int_equal(nnp__pack_decode(st, buf, len, out, N / 2 + 1), -1);
    }
    free(st);
}

/* Packed bytes written by hand (docs/FORMAT.md "Packed records"), decoded once near the end
 * of the bytes (every read bound-checked) and once with pad records after them (the decoder
 * then reads without bound checks): the same slots, computed by hand. */

/* An OP record of 2 slots as the hand-written bytes below give it (flags 1, name 300, b
 * 0x1122334455667788), its time ts and a, its extension slot's words ext. */
static void expect_op_2slots(const nnp_rec_t *r, uint64_t ts, uint64_t a, const uint64_t ext[4])
{
    uint64_t w[4];
    assert_int_equal(r[0].kind, NNP_REC_OP);
    assert_int_equal(r[0].n_slots, 2);
    assert_int_equal(r[0].flags, 1);
    assert_int_equal(r[0].name, 300);
    assert_int_equal(r[0].ts, ts);
    assert_int_equal(r[0].a, a);
    assert_int_equal(r[0].b, 0x1122334455667788ull);
    memcpy(w, &r[1], sizeof(w));
    assert_memory_equal(w, ext, sizeof(w));
}
static void test_decode_by_hand(void **state)
{
    enum { PAD_MAX = 60, SLOTS = 5 };
    static const uint8_t head[] = {
        /* OP (kind 5), mode 0xED: 2 slots, flags and name follow, a from the time, b raw. */
        0x05, 0xED, 0x01, 0x00,                         /* flags 1 */
        0xAC, 0x02,                                     /* name 300 */
        0xD0, 0x0F,                                     /* time: zigzag 2000 = +1000 */
        0xAC, 0x02,                                     /* a = time + 150 (zigzag 300) */
        0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, /* b raw */
        /* extension slot: word 1 raw, word 3 a delta (modes 0b01'00'11'00) */
        0x4C, 0x01, 0x00, 0x00, 0x00, 0xDD, 0xCC, 0xBB, 0xAA, 0x05, /* -3 from 0 */
        /* OP again, mode 0x11: 2 slots, a a delta from the previous a, the rest as before. */
        0x05, 0x11, 0x07, /* time -4 */
        0x02,             /* a + 1 */
        0x00,             /* extension slot as before */
        /* RANGE_BEGIN (kind 1), mode 0: the previous one (none: zero), time + 1. */
        0x01, 0x00, 0x02};
    uint8_t buf[sizeof(head) + 3 * PAD_MAX + 16];
    nnp_rec_t out[SLOTS + PAD_MAX + GUARD];
    nnp_pack_state_t *st = malloc(sizeof(*st));
    const uint64_t w1[4] = {0, 0xAABBCCDD00000001ull, 0, (uint64_t)-3};
    (void)state;
    assert_non_null(st);
    for (size_t pad = 0; pad <= PAD_MAX; pad += PAD_MAX) {
        size_t len = sizeof(head);
        memcpy(buf, head, sizeof(head));
        for (size_t j = 0; j < pad; j++, len += 3) { /* RANGE_BEGIN, time + 1 */
            buf[len] = 0x01;
            buf[len + 1] = 0x00;
            buf[len + 2] = 0x02;
        }
        memset(out, 0xA5, sizeof(out));
        nnp__pack_reset(st);
        assert_int_equal(nnp__pack_decode(st, buf, len, out, SLOTS + pad), 0);
        expect_op_2slots(&out[0], 1000, 1150, w1);
        expect_op_2slots(&out[2], 996, 1151, w1);
        for (size_t j = 0; j <= pad; j++) {
            const nnp_rec_t want = {.kind = NNP_REC_RANGE_BEGIN, .n_slots = 1, .ts = 997 + j};
            assert_memory_equal(&out[4 + j], &want, sizeof(want));
        }
        for (size_t g = 0; g < GUARD * sizeof(nnp_rec_t); g++)
            assert_int_equal(((uint8_t *)&out[SLOTS + pad])[g], 0xA5);
        /* A time of 11 varint bytes (RANGE_BEGIN, mode 0), and an extension word "from the
         * time": damage, whether bound-checked or not. */
        memcpy(buf,
               (const uint8_t[]){0x01, 0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                 0x80, 0x00},
               13);
        nnp__pack_reset(st);
        assert_int_equal(nnp__pack_decode(st, buf, len, out, SLOTS + pad), -1);
        memcpy(buf, (const uint8_t[]){0x05, 0x01, 0x02, 0x08}, 4); /* word 1 mode 2 */
        nnp__pack_reset(st);
        assert_int_equal(nnp__pack_decode(st, buf, len, out, SLOTS + pad), -1);
    }
    free(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_realistic),
        cmocka_unit_test(test_pairs_are_small),
        cmocka_unit_test(test_random_slots),
        cmocka_unit_test(test_damage),
        cmocka_unit_test(test_cut_at_record_boundary),
        cmocka_unit_test(test_decode_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
