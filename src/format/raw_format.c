/* raw_format.c - name and slot-count tables of the record kinds, generated from the one
 * X-macro list in raw_format.h so they cannot drift. */
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
