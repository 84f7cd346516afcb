/* raw_format.c - name and slot-count tables of the record kinds and the names of the
 * codecs, generated from the X-macro lists in raw_format.h so they cannot drift. */
#include "format/raw_format.h"

static const char *const kind_names[NNP_REC_KIND_COUNT] = {
#define NNP_REC_NAME_(k, num, slots, text) [num] = text,
    NNP_REC_KIND_MAP(NNP_REC_NAME_)
#undef NNP_REC_NAME_
};

const uint8_t nnp__rec_kind_slots_by_byte[UINT8_MAX + 1] = {
#define NNP_REC_SLOTS_(k, num, slots, text) [num] = slots,
    NNP_REC_KIND_MAP(NNP_REC_SLOTS_)
#undef NNP_REC_SLOTS_
};

const char *nnp__rec_kind_name(unsigned kind)
{
    return kind < NNP_REC_KIND_COUNT ? kind_names[kind] : NULL;
}

static const char *const codecs[NNP_CODEC_COUNT] = {
#define NNP_CODEC_NAME_(c, num, text) [num] = text,
    NNP_CODEC_MAP(NNP_CODEC_NAME_)
#undef NNP_CODEC_NAME_
};

const char *nnp__codec_name(unsigned codec)
{
    return codec < NNP_CODEC_COUNT ? codecs[codec] : NULL;
}
