/* rec_pack.h - the compact encoding of a RECORDS chunk (raw format v3, codec
 * NNP_CODEC_PACK): the same 32-byte slots, each field written only as far as it differs
 * from the previous record of its kind (time as a delta from the previous record, end times
 * from the record's own start, ids from the previous id), in a few bytes instead of 32.
 * Shared by the writer (encode, src/record/) and the reader (decode, src/read/), which
 * include nothing of each other. Layout, byte by byte: docs/FORMAT.md "Packed records". */
#ifndef NNP_REC_PACK_H
#define NNP_REC_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "format/raw_format.h"

/* Most bytes one slot can take when packed (a record's header, every field raw): the
 * encoder's output never exceeds n_slots times this. */
#define NNP_PACK_SLOT_MAX 40u

/* The previous record of each kind, for one chunk (an encoder or a decoder starts every
 * chunk from zero: a chunk decodes alone, so a damaged one loses only itself). */
typedef struct nnp_pack_state {
    uint64_t prev_ts;
    uint64_t seen[4]; /* kinds met in this chunk (bits); prev of the others reads as zero */
    nnp_rec_t prev[256][NNP_REC_MAX_SLOTS];
} nnp_pack_state_t;

void nnp__pack_reset(nnp_pack_state_t *st);

/* Packs the whole records at the start of slots[0..n) into out, which holds at least
 * n * NNP_PACK_SLOT_MAX bytes, stopping before a record whose slots run past n (the
 * writer cuts its chunks so, without a pass of its own over the slots). *n_used is the
 * slots packed, *n_records the records among them (a slot that is no record, n_slots
 * outside 1..NNP_REC_MAX_SLOTS, is kept raw and counts as one). Returns the bytes
 * written. Lossless: the packed bytes unpack to exactly slots[0..*n_used). */
size_t nnp__pack_encode(nnp_pack_state_t *st, const nnp_rec_t *slots, size_t n, uint8_t *out,
                        size_t *n_used, uint32_t *n_records);

/* Unpacks in[0..n) into exactly n_slots slots. Returns 0, or -1 when the bytes are not a
 * packing of n_slots slots (damage: nothing outside out[0..n_slots) is written). */
int nnp__pack_decode(nnp_pack_state_t *st, const uint8_t *in, size_t n, nnp_rec_t *out,
                     size_t n_slots);

#endif /* NNP_REC_PACK_H */
