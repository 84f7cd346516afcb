/* json_extent.c - the extent scanner of json_stream.c (see json_extent.h): finds the end
 * of the JSON value being cut in a window of text, byte by byte where it must and eight
 * (SWAR) or 64 (SSE2) bytes at a time through plain text; notes on the way whether the
 * value holds a wanted string. Pure: no I/O, no allocation. */
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "read/json_extent.h"

/* Bytes the extent scanner stops at; everything else (most of the text) is one table
 * load and a predictable branch. */
enum { C_PLAIN = 0, C_QUOTE, C_ESC, C_OPEN, C_CLOSE };
static const unsigned char byte_class[256] = {
    ['"'] = C_QUOTE, ['\\'] = C_ESC,  ['{'] = C_OPEN,
    ['['] = C_OPEN,  ['}'] = C_CLOSE, [']'] = C_CLOSE,
};

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Eight bytes at a time (SWAR): most of an event's text is plain, and testing a word for the
 * few bytes the scanner stops at takes a handful of operations where a byte loop takes a
 * load, a table lookup and a branch per byte. */
#define SWAR_ONES  0x0101010101010101ull
#define SWAR_HIGHS 0x8080808080808080ull
#define SWAR_LOWER 0x2020202020202020ull

/* High bit set in each byte of v that is zero; the lowest set bit marks the first one. */
static inline uint64_t zero_bytes(uint64_t v)
{
    return (v - SWAR_ONES) & ~v & SWAR_HIGHS;
}

/* Index of the first byte the scanner must look at in p[i..n) (n when none), for the
 * bytes that matter inside a string ('"', '\\') or outside ('"' and brackets). */
static size_t skip_plain(const unsigned char *p, size_t i, size_t n, bool in_str)
{
    for (; i + sizeof(uint64_t) <= n; i += sizeof(uint64_t)) {
        uint64_t w, m;
        memcpy(&w, p + i, sizeof(w));
        m = zero_bytes(w ^ ('"' * SWAR_ONES));
        if (in_str) {
            m |= zero_bytes(w ^ ('\\' * SWAR_ONES));
        } else {
            uint64_t lw = w | SWAR_LOWER; /* '[' ']' become '{' '}' */
            m |= zero_bytes(lw ^ ('{' * SWAR_ONES)) | zero_bytes(lw ^ ('}' * SWAR_ONES));
        }
        if (m)
            return i + (size_t)__builtin_ctzll(m) / 8;
    }
    return i;
}
#else
static size_t skip_plain(const unsigned char *p, size_t i, size_t n, bool in_str)
{
    (void)p;
    (void)n;
    (void)in_str;
    return i;
}
#endif

#if defined(__SSE2__)
/* 64 bytes at a time with bit masks (simdjson's stage 1, cut down): one bit per byte for
 * quotes and brackets, the in-string state of every byte from a prefix XOR of the quote
 * bits, then only the brackets outside strings are looked at one by one - a few per event,
 * where the byte loop stops at every quote. A block holding a backslash, and a value that is
 * not a container, go to the byte loop (escapes are rare in traces). */
#define BLOCK 64

/* Bit i set where block byte i equals c. */
static inline uint64_t eq_mask(__m128i b0, __m128i b1, __m128i b2, __m128i b3, char c)
{
    __m128i v = _mm_set1_epi8(c);
    return (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(b0, v)) |
           (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(b1, v)) << 16 |
           (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(b2, v)) << 32 |
           (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(b3, v)) << 48;
}

/* Bit i = XOR of bits 0..i: set for the bytes after an odd number of quotes. */
static inline uint64_t prefix_xor(uint64_t m)
{
    for (unsigned k = 1; k < BLOCK; k <<= 1)
        m ^= m << k;
    return m;
}

/* Scans whole blocks of p[*at..n) while inside a container (x->depth > 0); stops at the
 * value's end (returns true, *at past its last byte), at a block with a backslash, or when
 * fewer than BLOCK bytes are left, with x as the byte loop would leave it there (str_at
 * included). Sets x->hit as the byte loop does for strings equal to x->want. */
static bool scan_blocks(const unsigned char *p, size_t *at, size_t n, nnp_json_extent_t *x)
{
    const __m128i lower = _mm_set1_epi8(0x20); /* '[' ']' become '{' '}' */
    size_t i = *at, wl = x->want ? x->want_len : 0;
    bool check = x->want && !x->hit && wl + 2 <= BLOCK;
    if (x->want && wl + 2 > BLOCK)
        return false; /* a needle longer than a block: the byte loop */
    for (; i + BLOCK <= n; i += BLOCK) {
        __m128i b0 = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        __m128i b1 = _mm_loadu_si128((const __m128i *)(const void *)(p + i + 16));
        __m128i b2 = _mm_loadu_si128((const __m128i *)(const void *)(p + i + 32));
        __m128i b3 = _mm_loadu_si128((const __m128i *)(const void *)(p + i + 48));
        uint64_t quote, in_str, brackets, opens, open_q;
        size_t end = BLOCK + 1; /* past the value's end, when it is in this block */
        if (eq_mask(b0, b1, b2, b3, '\\'))
            break;
        quote = eq_mask(b0, b1, b2, b3, '"');
        in_str = prefix_xor(quote) ^ (x->in_str ? ~0ull : 0);
        b0 = _mm_or_si128(b0, lower);
        b1 = _mm_or_si128(b1, lower);
        b2 = _mm_or_si128(b2, lower);
        b3 = _mm_or_si128(b3, lower);
        opens = eq_mask(b0, b1, b2, b3, '{') & ~in_str;
        brackets = opens | (eq_mask(b0, b1, b2, b3, '}') & ~in_str);
        while (brackets) {
            unsigned k = (unsigned)__builtin_ctzll(brackets);
            brackets &= brackets - 1;
            if (opens >> k & 1) {
                x->depth++;
            } else if (--x->depth == 0) {
                end = k + 1u;
                break;
            }
        }
        open_q = quote & in_str;
        if (check) {
            /* A string open at the block's start ends at its first quote; the others are
             * found by their closing quote wl + 1 bytes after the opening one. */
            uint64_t cand = quote & ~in_str & (open_q << (wl + 1));
            if (x->in_str && quote) {
                size_t k = i + (size_t)__builtin_ctzll(quote);
                if (k - x->str_at == wl && memcmp(p + x->str_at, x->want, wl) == 0)
                    x->hit = true;
            }
            if (end < BLOCK)
                cand &= (1ull << end) - 1; /* quotes of this value only */
            while (cand && !x->hit) {
                size_t k = i + (size_t)__builtin_ctzll(cand);
                cand &= cand - 1;
                if (memcmp(p + k - wl, x->want, wl) == 0)
                    x->hit = true;
            }
            check = !x->hit;
        }
        if (end <= BLOCK) {
            *at = i + end;
            return true;
        }
        x->in_str = in_str >> (BLOCK - 1);
        if (x->in_str && open_q) /* the byte after the last opening quote */
            x->str_at = i + (size_t)(BLOCK - __builtin_clzll(open_q));
    }
    *at = i;
    return false;
}
#endif

size_t nnp__json_scan_extent(const unsigned char *p, size_t n, nnp_json_extent_t *x, bool *complete)
{
    size_t i = 0;
#if defined(__SSE2__)
    size_t bytes_until = 0; /* the byte loop's end before blocks are tried again */
#endif
    *complete = false;
    while (i < n) {
        unsigned char k;
#if defined(__SSE2__)
        if (x->depth > 0 && !x->esc && i >= bytes_until) {
            if (scan_blocks(p, &i, n, x)) {
                *complete = true;
                return i;
            }
            bytes_until = i + BLOCK; /* a block with a backslash, or the last bytes */
            if (i >= n)
                break;
        }
#endif
        if (!x->esc)
            i = skip_plain(p, i, n, x->in_str);
        if (i >= n)
            break;
        k = byte_class[p[i++]];
        if (k == C_PLAIN) {
            x->esc = false;
            continue;
        }
        if (x->in_str) {
            if (x->esc)
                x->esc = false;
            else if (k == C_ESC)
                x->esc = x->hit = true;
            else if (k == C_QUOTE) {
                x->in_str = false;
                if (x->want && i - 1 - x->str_at == x->want_len &&
                    memcmp(p + x->str_at, x->want, x->want_len) == 0)
                    x->hit = true;
                if (x->depth == 0) { /* a string value */
                    *complete = true;
                    return i;
                }
            }
        } else if (k == C_QUOTE) {
            x->in_str = true;
            x->str_at = i;
        } else if (k == C_OPEN) {
            x->depth++;
        } else if (k == C_CLOSE && --x->depth == 0) {
            *complete = true;
            return i;
        }
    }
    return i;
}
