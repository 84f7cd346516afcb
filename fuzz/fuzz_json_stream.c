/* fuzz_json_stream.c - libFuzzer harness for the streaming JSON array reader
 * (src/read/json_stream.c). Input: byte 0 picks the most bytes one read adds (1..64, so
 * elements, strings and escapes straddle refills of the window), byte 1 the element index
 * at which the callback stops the stream (255: never), the rest is the file. Besides
 * crashes it checks the reader's contracts: the same elements, top-level members and
 * report whatever the read size (the file is read again whole, through the path entry
 * point unless it looks gzip-compressed), the callback's stop code is returned, and the
 * report's counts and offsets stay inside the input. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "nnprof/nnprof.h"
#include "read/json_stream.h"

/* Read sizes tried: 1..MAX_SMALL_BLOCK bytes. */
#define MAX_SMALL_BLOCK 64u
#define INPUT_NAME      "input.json"
/* The first two bytes of a gzip file: the path entry point would decompress it. */
#define GZIP_MAGIC0 0x1fu
#define GZIP_MAGIC1 0x8bu
#define NEVER_STOP  255u
/* The callback's stop code: any non-zero value; this one is easy to recognise. */
#define STOP_CODE 77
/* FNV-1a, 64 bit. */
#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME  0x100000001b3ull

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct seen {
    uint64_t digest; /* every element and member delivered, printed, hashed in order */
    uint64_t n, last_index, members;
    unsigned stop_at;
    bool order_ok; /* indexes strictly increase */
} seen_t;

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * FNV_PRIME;
    return h;
}

static int on_elem(void *user, const cJSON *e, uint64_t index)
{
    seen_t *s = user;
    char *text = cJSON_PrintUnformatted(e);
    if (s->n > 0 && index <= s->last_index)
        s->order_ok = false;
    s->last_index = index;
    s->digest = fnv(s->digest, &index, sizeof(index));
    if (text)
        s->digest = fnv(s->digest, text, strlen(text));
    cJSON_free(text);
    s->n++;
    return index == s->stop_at ? STOP_CODE : 0;
}

static int on_member(void *user, const char *key, const cJSON *v)
{
    seen_t *s = user;
    char *text = cJSON_PrintUnformatted(v);
    s->digest = fnv(s->digest, key, strlen(key) + 1);
    if (text)
        s->digest = fnv(s->digest, text, strlen(text));
    cJSON_free(text);
    s->members++;
    return 0;
}

/* Streams the file through an open descriptor, read_max bytes a read (0: whole blocks);
 * returns the reader's result, *ok false when the file could not be opened. */
static int run_fd(const char *path, size_t read_max, seen_t *s, nnp_json_stream_report_t *rep,
                  bool *ok)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC), rc;
    *ok = fd >= 0;
    if (fd < 0)
        return 0;
    rc = nnp__json_stream_fd(fd, "fuzz-input", NULL, read_max, on_elem, on_member, s, rep);
    close(fd);
    return rc;
}

NNP_FUZZ_INITIALIZE("json_stream", NULL);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nnp_json_stream_report_t small_rep, big_rep;
    seen_t small = {FNV_OFFSET, 0, 0, 0, NEVER_STOP, true};
    seen_t big = {FNV_OFFSET, 0, 0, 0, NEVER_STOP, true};
    char path[4096];
    size_t block;
    bool ok_small, ok_big;
    int rc_small, rc_big;

    if (size < 2)
        return 0;
    block = 1 + data[0] % MAX_SMALL_BLOCK;
    small.stop_at = big.stop_at = data[1];
    data += 2;
    size -= 2;

    if (!nnp_fuzz_path(path, sizeof(path), INPUT_NAME) ||
        nnp_fuzz_write(INPUT_NAME, data, size) != 0)
        return 0;
    rc_small = run_fd(path, block, &small, &small_rep, &ok_small);
    if (size >= 2 && data[0] == GZIP_MAGIC0 && data[1] == GZIP_MAGIC1) {
        rc_big = run_fd(path, 0, &big, &big_rep, &ok_big);
    } else {
        ok_big = true;
        rc_big = nnp__json_stream_doc(path, NULL, on_elem, on_member, &big, &big_rep);
    }
    unlink(path);
    if (!ok_small || !ok_big)
        return 0;

    /* The read size is invisible in the result. */
    nnp_fuzz_check(rc_small == rc_big);
    nnp_fuzz_check(small.n == big.n && small.members == big.members && small.digest == big.digest);
    nnp_fuzz_check(memcmp(&small_rep, &big_rep, sizeof(small_rep)) == 0);

    /* The callback's code comes back, and only when it stopped the stream. */
    nnp_fuzz_check(rc_big == NNP_OK || rc_big == STOP_CODE);
    nnp_fuzz_check((rc_big == STOP_CODE) == (big.n > 0 && big.last_index == big.stop_at));
    nnp_fuzz_check(big.order_ok);

    /* The report stays inside the input. */
    nnp_fuzz_check(big_rep.elements == big.n);
    nnp_fuzz_check(big_rep.bytes <= size);
    nnp_fuzz_check(big_rep.bad_elements == 0 || big_rep.first_bad_offset < size);
    nnp_fuzz_check(!big_rep.no_array || (big_rep.elements == 0 && big_rep.bad_elements == 0));
    return 0;
}
