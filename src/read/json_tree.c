/* json_tree.c - see json_tree.h. A recursive-descent parser that mirrors cJSON 1.7's
 * parse_value/parse_string/parse_number rules one for one, but takes its nodes and strings
 * from a bump arena: cJSON's malloc per node and per string was most of the import time
 * of a large Chrome trace (issue 17). Plain decimals (the timestamps and ids of every event)
 * are converted exactly without strtod: a mantissa below 2^53 divided by a power of ten
 * below 10^23 is one correctly rounded IEEE operation (Clinger's fast path), so the result
 * is the double strtod gives; anything else goes through strtod as cJSON does. */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "read/json_tree.h"
#include "util/util.h"

/* Arena block: large enough for a typical event many times over. */
#define BLOCK_BYTES (64u * 1024u)
/* Number texts up to this long are copied on the stack for strtod, longer ones into the
 * arena (cJSON reads numbers of any length). */
#define NUMBER_SMALL 63
/* Clinger's fast path: exact below 2^53, powers of ten exact up to 10^22. */
#define EXACT_MANTISSA_MAX (1ull << 53)
#define EXACT_POW10_MAX    22
#define HEX_DIGITS         4
/* UTF-16 surrogate ranges (RFC 8259 section 7). */
#define HIGH_SURROGATE_MIN 0xD800u
#define HIGH_SURROGATE_MAX 0xDBFFu
#define LOW_SURROGATE_MIN  0xDC00u
#define LOW_SURROGATE_MAX  0xDFFFu
#define UNICODE_MAX        0x10FFFFu

struct nnp_jt_block {
    nnp_jt_block_t *next;
    size_t cap, used;
    _Alignas(max_align_t) unsigned char data[];
};

void nnp__jt_init(nnp_jt_t *a)
{
    a->head = a->cur = NULL;
}

void nnp__jt_reset(nnp_jt_t *a)
{
    for (nnp_jt_block_t *b = a->head; b; b = b->next)
        b->used = 0;
    a->cur = a->head;
}

void nnp__jt_fini(nnp_jt_t *a)
{
    nnp_jt_block_t *b = a->head;
    while (b) {
        nnp_jt_block_t *next = b->next;
        nnp__free(b);
        b = next;
    }
    a->head = a->cur = NULL;
}

/* Out-of-line part of arena_alloc: moves to the next kept block, or makes one. */
static void *arena_alloc_slow(nnp_jt_t *a, size_t n)
{
    nnp_jt_block_t *b = a->cur;
    while (b && b->used + n > b->cap) {
        if (!b->next)
            break;
        b = b->next; /* a reset left later blocks empty */
        a->cur = b;
    }
    if (!b || b->used + n > b->cap) {
        size_t cap = n > BLOCK_BYTES ? n : BLOCK_BYTES;
        nnp_jt_block_t *nb = nnp__malloc(sizeof(*nb) + cap);
        if (!nb)
            return NULL;
        nb->cap = cap;
        nb->used = 0;
        /* Inserted after the current block, so every kept block stays reachable. */
        if (b) {
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = a->head;
            a->head = nb;
        }
        a->cur = b = nb;
    }
    b->used += n;
    return b->data + b->used - n;
}

/* n bytes aligned for any object, NULL when out of memory. */
static inline void *arena_alloc(nnp_jt_t *a, size_t n)
{
    nnp_jt_block_t *b = a->cur;
    n = (n + _Alignof(max_align_t) - 1) & ~(_Alignof(max_align_t) - 1);
    if (NNP_LIKELY(b && b->used + n <= b->cap)) {
        b->used += n;
        return b->data + b->used - n;
    }
    return arena_alloc_slow(a, n);
}

typedef struct parser {
    nnp_jt_t *a;
    const char *p, *end;
    bool at_eof;
    int status; /* NNP_JT_* of the first failure */
} parser_t;

/* Fails with "need more input" when the text stopped early and more may follow. */
static void *short_input(parser_t *ps)
{
    if (ps->status == NNP_JT_OK)
        ps->status = ps->at_eof ? NNP_JT_BAD : NNP_JT_MORE;
    return NULL;
}

static void *bad(parser_t *ps)
{
    if (ps->status == NNP_JT_OK)
        ps->status = NNP_JT_BAD;
    return NULL;
}

static cJSON *new_node(parser_t *ps, int type)
{
    cJSON *n = arena_alloc(ps->a, sizeof(cJSON));
    if (!n) {
        if (ps->status == NNP_JT_OK)
            ps->status = NNP_JT_NOMEM;
        return NULL;
    }
    memset(n, 0, sizeof(*n));
    n->type = type;
    return n;
}

/* cJSON's whitespace: every byte up to and including the space. */
static void skip_ws(parser_t *ps)
{
    while (ps->p < ps->end && (unsigned char)*ps->p <= ' ')
        ps->p++;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Four hex digits at s as cJSON's parse_hex4 reads them: 0 when one is not a hex digit
 * (cJSON then decodes "\u12g4" as U+0000, so this parser does too). */
static long hex4(const char *s)
{
    long v = 0;
    for (int i = 0; i < HEX_DIGITS; i++) {
        int d = hex_value(s[i]);
        if (d < 0)
            return 0;
        v = v * 16 + d;
    }
    return v;
}

/* Decodes the \u escape at s (s[0..1] = "\u"; end bounds the input) into out as UTF-8, as
 * cJSON's utf16_literal_to_utf8: a high surrogate must be followed by "\u" and a low one.
 * Returns the escape's length in the input (6 or 12) and the bytes written in *n_out, or 0
 * when invalid. */
static size_t utf16_escape(const char *s, const char *end, char *out, size_t *n_out)
{
    long first, second;
    unsigned long cp;
    size_t len = 6;
    if (end - s < 6)
        return 0;
    first = hex4(s + 2);
    if (first >= LOW_SURROGATE_MIN && first <= LOW_SURROGATE_MAX)
        return 0;
    if (first >= HIGH_SURROGATE_MIN && first <= HIGH_SURROGATE_MAX) {
        if (end - s < 12 || s[6] != '\\' || s[7] != 'u')
            return 0;
        second = hex4(s + 8);
        if (second < LOW_SURROGATE_MIN || second > LOW_SURROGATE_MAX)
            return 0;
        cp = 0x10000ul +
             ((((unsigned long)first & 0x3FFul) << 10) | ((unsigned long)second & 0x3FFul));
        len = 12;
    } else {
        cp = (unsigned long)first;
    }
    if (cp < 0x80) {
        out[0] = (char)cp;
        *n_out = 1;
    } else if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        *n_out = 2;
    } else if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        *n_out = 3;
    } else if (cp <= UNICODE_MAX) {
        out[0] = (char)(0xF0 | (cp >> 18));
        out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[3] = (char)(0x80 | (cp & 0x3F));
        *n_out = 4;
    } else {
        return 0;
    }
    return len;
}

/* The string whose opening quote is at ps->p, decoded into the arena (NUL-terminated). */
static char *parse_string(parser_t *ps)
{
    const char *s = ps->p + 1, *q = s;
    bool has_escape = false;
    char *out, *o;
    /* The closing quote: the first '"' not preceded by an escaping backslash (cJSON skips
     * the byte after every backslash). */
    while (q < ps->end && *q != '"') {
        if (*q == '\\') {
            has_escape = true;
            q++;
        }
        q++;
    }
    if (q >= ps->end)
        return short_input(ps);
    out = arena_alloc(ps->a, (size_t)(q - s) + 1);
    if (!out) {
        if (ps->status == NNP_JT_OK)
            ps->status = NNP_JT_NOMEM;
        return NULL;
    }
    if (!has_escape) {
        memcpy(out, s, (size_t)(q - s));
        out[q - s] = '\0';
        ps->p = q + 1;
        return out;
    }
    for (o = out; s < q;) {
        if (*s != '\\') {
            *o++ = *s++;
            continue;
        }
        /* No length check before s[1]: at q - 1 it is the closing quote, which cJSON then
         * decodes as an escaped quote (a \u escape may end on the scanner's escaping
         * backslash); s[1] is always inside the input. */
        switch (s[1]) {
        case 'b':
            *o++ = '\b';
            break;
        case 'f':
            *o++ = '\f';
            break;
        case 'n':
            *o++ = '\n';
            break;
        case 'r':
            *o++ = '\r';
            break;
        case 't':
            *o++ = '\t';
            break;
        case '"':
        case '\\':
        case '/':
            *o++ = s[1];
            break;
        case 'u': {
            size_t n_out, len = utf16_escape(s, q, o, &n_out);
            if (len == 0)
                return bad(ps);
            o += n_out;
            s += len;
            continue;
        }
        default:
            return bad(ps);
        }
        s += 2;
    }
    *o = '\0';
    ps->p = q + 1;
    return out;
}

static bool is_number_char(char c)
{
    return (c >= '0' && c <= '9') || c == '+' || c == '-' || c == 'e' || c == 'E' || c == '.';
}

static const double pow10_exact[EXACT_POW10_MAX + 1] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* A plain decimal "-?d+(.d+)?" spanning the whole token t[0..n): its exact double when
 * Clinger's fast path applies. */
static bool fast_decimal(const char *t, size_t n, double *out)
{
    uint64_t m = 0;
    size_t i = 0, frac = 0;
    bool neg = false, dot = false;
    if (i < n && t[i] == '-') {
        neg = true;
        i++;
    }
    if (i == n || t[i] < '0' || t[i] > '9')
        return false;
    for (; i < n; i++) {
        char c = t[i];
        if (c >= '0' && c <= '9') {
            if (m >= EXACT_MANTISSA_MAX / 10)
                return false;
            m = m * 10 + (uint64_t)(c - '0');
            frac += dot;
        } else if (c == '.' && !dot && i + 1 < n) {
            dot = true;
        } else {
            return false;
        }
    }
    if (frac > EXACT_POW10_MAX || m >= EXACT_MANTISSA_MAX)
        return false;
    *out = (double)m / pow10_exact[frac];
    if (neg)
        *out = -*out;
    return true;
}

/* cJSON's parse_number (1.7.15 as Debian 12 ships it, with its fix for long numbers):
 * every number character, then strtod, which may use fewer; the input moves on by what
 * strtod used. */
static cJSON *parse_number(parser_t *ps)
{
    char small[NUMBER_SMALL + 1], *tok = small;
    size_t n = 0;
    char *after;
    double v;
    cJSON *node;
    while (ps->p + n < ps->end && is_number_char(ps->p[n]))
        n++;
    if (ps->p + n >= ps->end && !ps->at_eof)
        return short_input(ps); /* the number may go on in the next block */
    if (n > NUMBER_SMALL && !(tok = arena_alloc(ps->a, n + 1))) {
        if (ps->status == NNP_JT_OK)
            ps->status = NNP_JT_NOMEM;
        return NULL;
    }
    memcpy(tok, ps->p, n);
    tok[n] = '\0';
    if (fast_decimal(tok, n, &v)) {
        after = tok + n;
    } else {
        v = strtod(tok, &after);
        if (after == tok)
            return bad(ps);
    }
    node = new_node(ps, cJSON_Number);
    if (!node)
        return NULL;
    /* The number's text (what strtod read): importers of times read it exactly
     * (foreign.c); cJSON leaves valuestring NULL for numbers and never reads it. */
    node->valuestring = arena_alloc(ps->a, (size_t)(after - tok) + 1);
    if (!node->valuestring) {
        if (ps->status == NNP_JT_OK)
            ps->status = NNP_JT_NOMEM;
        return NULL;
    }
    memcpy(node->valuestring, tok, (size_t)(after - tok));
    node->valuestring[after - tok] = '\0';
    node->valuedouble = v;
    if (v >= INT_MAX)
        node->valueint = INT_MAX;
    else if (v <= (double)INT_MIN)
        node->valueint = INT_MIN;
    else
        node->valueint = (int)v;
    ps->p += after - tok;
    return node;
}

static cJSON *parse_value(parser_t *ps, int depth);

/* The elements of an array or the members of an object (its opening byte at ps->p). */
static cJSON *parse_container(parser_t *ps, int depth, bool is_object)
{
    char close = is_object ? '}' : ']';
    cJSON *node, *head = NULL, *last = NULL;
    if (depth >= CJSON_NESTING_LIMIT)
        return bad(ps);
    node = new_node(ps, is_object ? cJSON_Object : cJSON_Array);
    if (!node)
        return NULL;
    ps->p++;
    skip_ws(ps);
    if (ps->p >= ps->end)
        return short_input(ps);
    if (*ps->p == close) {
        ps->p++;
        return node;
    }
    for (;;) {
        cJSON *item;
        char *key = NULL;
        skip_ws(ps);
        if (is_object) {
            if (ps->p >= ps->end)
                return short_input(ps);
            if (*ps->p != '"')
                return bad(ps);
            key = parse_string(ps);
            if (!key)
                return NULL;
            skip_ws(ps);
            if (ps->p >= ps->end)
                return short_input(ps);
            if (*ps->p != ':')
                return bad(ps);
            ps->p++;
            skip_ws(ps);
        }
        item = parse_value(ps, depth + 1);
        if (!item)
            return NULL;
        item->string = key;
        if (last) {
            last->next = item;
            item->prev = last;
        } else {
            head = item;
        }
        last = item;
        skip_ws(ps);
        if (ps->p >= ps->end)
            return short_input(ps);
        if (*ps->p == ',') {
            ps->p++;
            continue;
        }
        if (*ps->p != close)
            return bad(ps);
        ps->p++;
        break;
    }
    head->prev = last; /* cJSON keeps the last element there */
    node->child = head;
    return node;
}

/* A literal when the input holds it whole; NULL (with the status) otherwise. */
static cJSON *literal(parser_t *ps, const char *word, size_t n, int type)
{
    cJSON *node;
    if ((size_t)(ps->end - ps->p) < n) {
        if (memcmp(ps->p, word, (size_t)(ps->end - ps->p)) == 0)
            return short_input(ps);
        return bad(ps);
    }
    if (memcmp(ps->p, word, n) != 0)
        return bad(ps);
    node = new_node(ps, type);
    if (node && type == cJSON_True)
        node->valueint = 1;
    ps->p += n;
    return node;
}

static cJSON *parse_value(parser_t *ps, int depth)
{
    if (ps->p >= ps->end)
        return short_input(ps);
    switch (*ps->p) {
    case '{':
        return parse_container(ps, depth, true);
    case '[':
        return parse_container(ps, depth, false);
    case '"': {
        cJSON *node;
        char *s = parse_string(ps);
        if (!s)
            return NULL;
        node = new_node(ps, cJSON_String);
        if (node)
            node->valuestring = s;
        return node;
    }
    case 'n':
        return literal(ps, "null", 4, cJSON_NULL);
    case 'f':
        return literal(ps, "false", 5, cJSON_False);
    case 't':
        return literal(ps, "true", 4, cJSON_True);
    default:
        if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9'))
            return parse_number(ps);
        return bad(ps);
    }
}

const cJSON *nnp__jt_parse(nnp_jt_t *a, const char *p, const char *end, int at_eof,
                           const char **stop, int *status)
{
    parser_t ps = {a, p, end, at_eof != 0, NNP_JT_OK};
    cJSON *root;
    skip_ws(&ps);
    root = parse_value(&ps, 0);
    *status = root ? NNP_JT_OK : ps.status;
    if (root)
        *stop = ps.p;
    return root;
}
