/* raw_format.c - name and slot-count tables of the record kinds and the names of the
 * codecs, generated from the X-macro lists in raw_format.h so they cannot drift. */
#include "format/raw_format.h"

typedef struct kind_info {
    const char *name;
    unsigned slots;
} kind_info_t;

static const kind_info_t kinds[NNP_REC_KIND_COUNT] = {
#define NNP_REC_INFO_(k, num, slots, text) [num] = {text, slots},
    NNP_REC_KIND_MAP(NNP_REC_INFO_)
#undef NNP_REC_INFO_
};

const char *nnp__rec_kind_name(unsigned kind)
{
    return kind < NNP_REC_KIND_COUNT ? kinds[kind].name : NULL;
}

unsigned nnp__rec_kind_slots(unsigned kind)
{
    return kind < NNP_REC_KIND_COUNT ? kinds[kind].slots : 0;
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
