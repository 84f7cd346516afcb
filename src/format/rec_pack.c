/* rec_pack.c - see rec_pack.h. Per record: its kind byte, a mode byte, then only the
 * fields that differ from the previous record of that kind: flags (2 bytes), name
 * (varint), the time (zigzag varint delta from the previous record's), a and b (each the
 * same, a delta from its previous value, a delta from this record's time - end times - or
 * 8 raw bytes), then each extension slot as a mode byte (2 bits per 64-bit word: same,
 * delta, raw) and its changed words. A begin/end pair of a range takes about 3 bytes per
 * event instead of 32 (the idea of LTTng's compact header and Tracy's delta timestamps,
 * applied per field). Varints are LEB128, signed deltas zigzag-coded. */
#include <stdbool.h>
#include <string.h>

#include "format/rec_pack.h"
#include "util/util.h"

/* Mode byte of a record: slots (2 bits), then one or two bits per slot-0 field. */
#define M_SLOTS_MASK 0x03u /* n_slots - 1; 3 = one raw slot follows */
#define M_SLOTS_RAW  0x03u
#define M_FLAGS      0x04u /* flags differ: 2 bytes follow */
#define M_NAME       0x08u /* name differs: a varint follows */
#define M_A_SHIFT    4
#define M_B_SHIFT    6
/* How a 64-bit field is written (2 bits). */
enum { F_SAME = 0, F_DELTA = 1, F_FROM_TS = 2, F_RAW = 3 };
#define F_MASK 0x3u
/* Deltas needing more varint bytes than this are written raw (8 bytes). */
#define VARINT_RAW_FROM (1ull << 56)
#define WORDS_PER_SLOT  4
#define VARINT_MAX      10
#define BYTE_BITS       7
#define CONT_BIT        0x80u

void nnp__pack_reset(nnp_pack_state_t *st)
{
    /* The previous records are zeroed when their kind is first met (prev_of): a chunk
     * uses a few kinds of 256, and a reset per chunk must not cost 24 KiB of stores. */
    st->prev_ts = 0;
    memset(st->seen, 0, sizeof(st->seen));
}

/* The previous record of kind (all zero before the chunk's first one). */
static inline nnp_rec_t *prev_of(nnp_pack_state_t *st, uint8_t kind)
{
    uint64_t bit = 1ull << (kind & 63);
    if (!(st->seen[kind >> 6] & bit)) {
        st->seen[kind >> 6] |= bit;
        memset(st->prev[kind], 0, sizeof(st->prev[kind]));
    }
    return st->prev[kind];
}

/* Word 0 (kind, n_slots, flags, name), a and b of two slots are the same: only the time
 * differs, the commonest case by far (a range's begin and end, a counter's samples). */
static inline bool only_ts_differs(const nnp_rec_t *r, const nnp_rec_t *p)
{
    uint64_t w0, p0;
    memcpy(&w0, r, sizeof(w0));
    memcpy(&p0, p, sizeof(p0));
    return w0 == p0 && r->a == p->a && r->b == p->b;
}

/* d is a two's complement difference: all ones when its sign bit is set, else zero, XORed
 * with d shifted left (unsigned arithmetic only: no implementation-defined shift). */
static inline uint64_t zigzag(uint64_t d)
{
    return (d << 1) ^ (0 - (d >> 63));
}

static inline uint64_t unzigzag(uint64_t z)
{
    return (z >> 1) ^ (0 - (z & 1));
}

static inline uint8_t *put_varint(uint8_t *o, uint64_t v)
{
    if (v < CONT_BIT) {
        *o = (uint8_t)v;
        return o + 1;
    }
    while (v >= CONT_BIT) {
        *o++ = (uint8_t)(v | CONT_BIT);
        v >>= BYTE_BITS;
    }
    *o++ = (uint8_t)v;
    return o;
}

static inline uint8_t *put_u64(uint8_t *o, uint64_t v)
{
    memcpy(o, &v, sizeof(v));
    return o + sizeof(v);
}

/* Chooses how to write x, whose previous value is prev, in a record starting at ts. */
static inline unsigned field_mode(uint64_t x, uint64_t prev, uint64_t ts, bool from_ts_ok,
                                  uint64_t *z)
{
    uint64_t d1, d2;
    if (x == prev)
        return F_SAME;
    d1 = zigzag(x - prev);
    d2 = from_ts_ok ? zigzag(x - ts) : UINT64_MAX;
    if (d2 < d1) {
        *z = d2;
        return d2 < VARINT_RAW_FROM ? F_FROM_TS : F_RAW;
    }
    *z = d1;
    return d1 < VARINT_RAW_FROM ? F_DELTA : F_RAW;
}

static inline uint8_t *put_field(uint8_t *o, unsigned mode, uint64_t x, uint64_t z)
{
    if (mode == F_RAW)
        return put_u64(o, x);
    if (mode != F_SAME)
        return put_varint(o, z);
    return o;
}

/* Remembers record r (ns slots) as the previous one of its kind. Slot by slot: a memcpy of
 * a variable length compiles to `rep movsq`, whose start-up cost was 40 % of the
 * encoder's time (perf, bench_writer). */
static inline void keep_prev(nnp_rec_t *prev, const nnp_rec_t *r, unsigned ns)
{
    for (unsigned s = 0; s < ns; s++)
        prev[s] = r[s];
}

/* The four 64-bit words of a slot. */
static inline void slot_words(const nnp_rec_t *r, uint64_t w[WORDS_PER_SLOT])
{
    memcpy(w, r, sizeof(*r));
}

size_t nnp__pack_encode(nnp_pack_state_t *st, const nnp_rec_t *slots, size_t n, uint8_t *out,
                        size_t *n_used, uint32_t *n_records)
{
    uint8_t *o = out;
    size_t i = 0;
    uint32_t records = 0;
    for (; i < n; records++) {
        const nnp_rec_t *r = &slots[i];
        unsigned ns = r->n_slots;
        nnp_rec_t *prev = prev_of(st, r->kind);
        uint64_t za = 0, zb = 0;
        unsigned mode, ma, mb;
        if (ns == 1 && only_ts_differs(r, prev)) {
            /* Mode 0: one slot, every field but the time as before. */
            o[0] = r->kind;
            o[1] = 0;
            o = put_varint(o + 2, zigzag(r->ts - st->prev_ts));
            prev->ts = r->ts;
            st->prev_ts = r->ts;
            i++;
            continue;
        }
        if (ns >= 1 && ns <= NNP_REC_MAX_SLOTS && ns > n - i)
            break; /* a record cut by the end of the slots: the next chunk starts with it */
        if (ns < 1 || ns > NNP_REC_MAX_SLOTS || ns > n - i) {
            /* Not a record: this slot alone, as it is. */
            *o++ = r->kind;
            *o++ = M_SLOTS_RAW;
            memcpy(o, r, sizeof(*r));
            o += sizeof(*r);
            i++;
            continue;
        }
        ma = field_mode(r->a, prev[0].a, r->ts, true, &za);
        mb = field_mode(r->b, prev[0].b, r->ts, true, &zb);
        mode = (ns - 1) | (r->flags != prev[0].flags ? M_FLAGS : 0) |
               (r->name != prev[0].name ? M_NAME : 0) | (ma << M_A_SHIFT) | (mb << M_B_SHIFT);
        *o++ = r->kind;
        *o++ = (uint8_t)mode;
        if (mode & M_FLAGS) {
            memcpy(o, &r->flags, sizeof(r->flags));
            o += sizeof(r->flags);
        }
        if (mode & M_NAME)
            o = put_varint(o, r->name);
        o = put_varint(o, zigzag(r->ts - st->prev_ts));
        o = put_field(o, ma, r->a, za);
        o = put_field(o, mb, r->b, zb);
        for (unsigned s = 1; s < ns; s++) {
            uint64_t w[WORDS_PER_SLOT], p[WORDS_PER_SLOT], z[WORDS_PER_SLOT];
            unsigned m[WORDS_PER_SLOT], ext = 0;
            slot_words(&r[s], w);
            slot_words(&prev[s], p);
            for (unsigned k = 0; k < WORDS_PER_SLOT; k++) {
                m[k] = field_mode(w[k], p[k], 0, false, &z[k]);
                ext |= m[k] << (2 * k);
            }
            *o++ = (uint8_t)ext;
            for (unsigned k = 0; k < WORDS_PER_SLOT; k++)
                o = put_field(o, m[k], w[k], z[k]);
        }
        keep_prev(prev, r, ns);
        st->prev_ts = r->ts;
        i += ns;
    }
    *n_used = i;
    *n_records = records;
    return (size_t)(o - out);
}

/* Most bytes one record can take (a raw slot: 2 + 32 is less): kind, mode, flags, then up
 * to VARINT_MAX bytes for each of name, time, a and b, and for each extension slot its mode
 * byte and four words. Where this many bytes remain, a record is decoded without a bound
 * check per field (the checks were a sixth of the decoder's instructions). */
#define RECORD_MAX_BYTES                                                                           \
    (2u + 2u + 4u * VARINT_MAX + (NNP_REC_MAX_SLOTS - 1u) * (1u + WORDS_PER_SLOT * VARINT_MAX))

/* Reader of the packed bytes; bounds are checked only by the "checked" instances of the
 * helpers below (the end of a chunk), the others rely on RECORD_MAX_BYTES. */
typedef struct reader {
    const uint8_t *p, *end;
    bool bad;
} reader_t;

static uint64_t get_varint_long(reader_t *rd)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < VARINT_MAX * BYTE_BITS; shift += BYTE_BITS) {
        uint8_t b;
        if (rd->p >= rd->end) {
            rd->bad = true;
            return 0;
        }
        b = *rd->p++;
        v |= (uint64_t)(b & ~CONT_BIT) << shift;
        if (!(b & CONT_BIT))
            return v;
    }
    rd->bad = true; /* more than 10 bytes: not a varint we wrote */
    return 0;
}

/* Most varints of a chunk are one or two bytes (deltas of a few ticks, small ids): those
 * inline, longer ones in a loop. checked: the caller has not made sure VARINT_MAX bytes
 * remain. */
static NNP_ALWAYS_INLINE uint64_t get_varint(reader_t *rd, bool checked)
{
    const uint8_t *p = rd->p;
    uint64_t v, b;
    if (checked && rd->end - p < VARINT_MAX)
        return get_varint_long(rd); /* near the end: every byte checked */
    /* VARINT_MAX bytes remain, the longest varint: no bound to check per byte. */
    v = p[0];
    if (NNP_LIKELY(v < CONT_BIT)) {
        rd->p = p + 1;
        return v;
    }
    b = p[1];
    v = (v & ~(uint64_t)CONT_BIT) | (b & ~(uint64_t)CONT_BIT) << BYTE_BITS;
    if (b < CONT_BIT) {
        rd->p = p + 2;
        return v;
    }
    for (unsigned k = 2; k < VARINT_MAX; k++) {
        b = p[k];
        v |= (b & ~(uint64_t)CONT_BIT) << (k * BYTE_BITS);
        if (b < CONT_BIT) {
            rd->p = p + k + 1;
            return v;
        }
    }
    rd->bad = true; /* more than 10 bytes: not a varint we wrote */
    return 0;
}

static NNP_ALWAYS_INLINE void get_bytes(reader_t *rd, void *dst, size_t n, bool checked)
{
    if (checked && (size_t)(rd->end - rd->p) < n) {
        rd->bad = true;
        memset(dst, 0, n);
        return;
    }
    memcpy(dst, rd->p, n);
    rd->p += n;
}

/* A 64-bit field whose previous value is *x, written in mode (F_*), updated in place. */
static NNP_ALWAYS_INLINE void get_field(reader_t *rd, unsigned mode, uint64_t *x, uint64_t ts,
                                        bool checked)
{
    if (mode == F_SAME)
        return;
    if (mode == F_RAW) {
        get_bytes(rd, x, sizeof(*x), checked);
        return;
    }
    *x = (mode == F_FROM_TS ? ts : *x) + unzigzag(get_varint(rd, checked));
}

/* Decodes one record (or raw slot) into out[0..), at most slots_left slots. The fields are
 * decoded into the kind's previous record, in place (most stay as they were), and the
 * record is then copied out whole. Returns the slots written, 0 on damage. checked: fewer
 * than RECORD_MAX_BYTES bytes or NNP_REC_MAX_SLOTS slots may remain. */
static NNP_ALWAYS_INLINE size_t decode_record(nnp_pack_state_t *st, uint64_t *prev_ts, reader_t *rd,
                                              nnp_rec_t *out, size_t slots_left, bool checked)
{
    uint8_t kind, mode;
    unsigned ns;
    nnp_rec_t *prev;
    if (checked && rd->end - rd->p < 2)
        return 0;
    kind = rd->p[0];
    mode = rd->p[1];
    rd->p += 2;
    if ((mode & M_SLOTS_MASK) == M_SLOTS_RAW) {
        get_bytes(rd, out, sizeof(*out), checked);
        return rd->bad ? 0 : 1;
    }
    prev = prev_of(st, kind);
    if (mode == 0 && (!checked || rd->p < rd->end) && *rd->p < CONT_BIT) {
        /* The commonest record (see the encoder): the previous one, a new time. */
        prev->kind = kind;
        prev->n_slots = 1;
        prev->ts = *prev_ts + unzigzag(*rd->p++);
        *prev_ts = prev->ts;
        out[0] = prev[0];
        return 1;
    }
    ns = (mode & M_SLOTS_MASK) + 1u;
    if (checked && ns > slots_left)
        return 0;
    if (mode & M_FLAGS)
        get_bytes(rd, &prev->flags, sizeof(prev->flags), checked);
    if (mode & M_NAME)
        prev->name = (uint32_t)get_varint(rd, checked);
    prev->ts = *prev_ts + unzigzag(get_varint(rd, checked));
    get_field(rd, (mode >> M_A_SHIFT) & F_MASK, &prev->a, prev->ts, checked);
    get_field(rd, (mode >> M_B_SHIFT) & F_MASK, &prev->b, prev->ts, checked);
    for (unsigned s = 1; s < ns; s++) {
        unsigned ext;
        if (checked && rd->p >= rd->end)
            return 0;
        ext = *rd->p++;
        /* Only the words that changed (2 bits each, F_SAME = 0), in order. */
        while (ext != 0) {
            unsigned k = (unsigned)__builtin_ctz(ext) / 2, m = (ext >> (2 * k)) & F_MASK;
            unsigned char *word = (unsigned char *)&prev[s] + k * sizeof(uint64_t);
            uint64_t w;
            if (m == F_FROM_TS)
                return 0; /* never written for extension words */
            ext &= ~(F_MASK << (2 * k));
            memcpy(&w, word, sizeof(w));
            get_field(rd, m, &w, 0, checked);
            memcpy(word, &w, sizeof(w));
        }
    }
    if (rd->bad)
        return 0;
    prev->kind = kind;
    prev->n_slots = (uint8_t)ns;
    *prev_ts = prev->ts;
    _Static_assert(NNP_REC_MAX_SLOTS == 3, "the copy below is unrolled for 3 slots");
    /* Slot by slot, unrolled (ns is 1..NNP_REC_MAX_SLOTS): a loop or a memcpy of variable
     * length cost more than the copies. */
    out[0] = prev[0];
    if (ns > 1) {
        out[1] = prev[1];
        if (ns > 2)
            out[2] = prev[2];
    }
    return ns;
}

int nnp__pack_decode(nnp_pack_state_t *st, const uint8_t *in, size_t n, nnp_rec_t *out,
                     size_t n_slots)
{
    reader_t rd = {in, in + n, false};
    uint64_t prev_ts = st->prev_ts; /* in a register, not stored per record */
    size_t i = 0, got = 1;
    /* Far from the end of the bytes and of the slots: no bound checks. */
    while (n_slots - i >= NNP_REC_MAX_SLOTS && rd.end - rd.p >= (ptrdiff_t)RECORD_MAX_BYTES &&
           got != 0) {
        got = decode_record(st, &prev_ts, &rd, &out[i], n_slots - i, false);
        i += got;
    }
    while (i < n_slots && got != 0) {
        got = decode_record(st, &prev_ts, &rd, &out[i], n_slots - i, true);
        i += got;
    }
    st->prev_ts = prev_ts;
    return got == 0 || rd.bad || rd.p != rd.end ? -1 : 0;
}
