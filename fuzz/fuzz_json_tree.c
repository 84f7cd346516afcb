/* fuzz_json_tree.c - differential libFuzzer harness for the arena JSON parser
 * (src/read/json_tree.c): every input is parsed by it and by cJSON_ParseWithLength, and
 * the two must agree on accepting it and, when they do, on the tree (numbers bit for bit);
 * every proper prefix of an accepted container must ask for more input. A disagreement
 * aborts, so libFuzzer keeps the input. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "read/json_tree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same_tree(const cJSON *a, const cJSON *b)
{
    for (; a && b; a = a->next, b = b->next) {
        if ((a->type & 0xFF) != (b->type & 0xFF) || (a->string == NULL) != (b->string == NULL) ||
            (a->string && strcmp(a->string, b->string) != 0))
            return false;
        if (cJSON_IsString(a) && strcmp(a->valuestring, b->valuestring) != 0)
            return false;
        if (cJSON_IsNumber(a) && (memcmp(&a->valuedouble, &b->valuedouble, sizeof(double)) != 0 ||
                                  a->valueint != b->valueint))
            return false;
        if (!same_tree(a->child, b->child))
            return false;
    }
    return a == NULL && b == NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static nnp_jt_t jt;
    static bool ready;
    const char *text = (const char *)data, *stop;
    const cJSON *got;
    cJSON *ref;
    int st;
    if (!ready) {
        nnp__jt_init(&jt);
        ready = true;
    }
    nnp__jt_reset(&jt);
    got = nnp__jt_parse(&jt, text, text + size, 1, &stop, &st);
    ref = cJSON_ParseWithLength(text, size);
    if ((got != NULL) != (ref != NULL) || (ref && !same_tree(ref, got)))
        abort();
    cJSON_Delete(ref);
    /* A container cut anywhere asks for more input when more may come. */
    if (got && (cJSON_IsObject(got) || cJSON_IsArray(got)) && stop > text + 1) {
        size_t cut = size % (size_t)(stop - text);
        if (cut > 0) {
            nnp__jt_reset(&jt);
            if (nnp__jt_parse(&jt, text, text + cut, 0, &stop, &st) == NULL && st == NNP_JT_BAD) {
                /* a prefix of an accepted value can only be cut short, unless it already
                 * holds a complete value (a number followed by more text, ...) */
                size_t k = 0;
                while (k < cut && (unsigned char)text[k] <= ' ')
                    k++;
                if (k < cut && (text[k] == '{' || text[k] == '['))
                    abort();
            }
        }
    }
    return 0;
}
