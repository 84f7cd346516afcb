/* json_writer.h - streaming JSON writer: appends tokens to a buffer that is flushed to a
 * file descriptor when full (1 MiB writes), or kept in memory. Never builds a DOM (a trace
 * can be GBs). Commas and nesting are tracked here so callers only say what comes next;
 * hot writers compose whole values from fragments instead. */
#ifndef NNP_JSON_WRITER_H
#define NNP_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util.h"

/* Deepest nesting supported; deeper calls set the error (our outputs nest < 8). */
#define NNP_JW_MAX_DEPTH 32

typedef struct nnp_jw {
    int fd; /* -1: memory mode, buffer grows up to mem_cap */
    char *buf;
    size_t len, cap;
    uint64_t flushed; /* fd mode: bytes written to fd so far (nnp__jw_bytes) */
    size_t mem_cap;   /* hard cap of memory mode */
    int depth;
    bool first[NNP_JW_MAX_DEPTH]; /* no element written yet at this depth */
    bool after_key;
    bool pretty;
    int err; /* first error, NNP_OK while fine */
} nnp_jw_t;

/* fd >= 0: stream to fd (caller keeps ownership of fd). fd < 0: keep output in memory,
 * at most mem_cap bytes. Returns NNP_OK or NNP_ENOMEM. */
int nnp__jw_init(nnp_jw_t *w, int fd, bool pretty, size_t mem_cap);
/* Flushes what is buffered (fd mode). Returns the first error of the writer's life. */
int nnp__jw_flush(nnp_jw_t *w);
/* fd mode: bytes written so far, buffered ones included (the output's size once flushed):
 * no lseek per call. */
static inline uint64_t nnp__jw_bytes(const nnp_jw_t *w)
{
    return w->flushed + w->len;
}
/* Memory mode: hands the NUL-terminated text over (*len excludes the NUL); w is reset. */
char *nnp__jw_take(nnp_jw_t *w, size_t *len);
void nnp__jw_fini(nnp_jw_t *w);

void nnp__jw_obj_begin(nnp_jw_t *w);
void nnp__jw_obj_end(nnp_jw_t *w);
void nnp__jw_arr_begin(nnp_jw_t *w);
void nnp__jw_arr_end(nnp_jw_t *w);
void nnp__jw_key(nnp_jw_t *w, const char *key);
void nnp__jw_str(nnp_jw_t *w, const char *s);
void nnp__jw_strn(nnp_jw_t *w, const char *s, size_t n);
void nnp__jw_int(nnp_jw_t *w, int64_t v);
void nnp__jw_uint(nnp_jw_t *w, uint64_t v);
void nnp__jw_double(nnp_jw_t *w, double v);
void nnp__jw_bool(nnp_jw_t *w, bool v);
void nnp__jw_null(nnp_jw_t *w);
/* Ends a top-level value with '\n' (JSON lines): the next value starts a new document. */
void nnp__jw_line_end(nnp_jw_t *w);
/* Appends pre-formatted JSON text as one value (caller guarantees validity). */
void nnp__jw_raw(nnp_jw_t *w, const char *json);

/* ---- fragments: a value the caller composes itself (per-event writers: the timeline) ----
 * nnp__jw_value_begin writes the separator the current position needs (and, pretty, the
 * newline and indent); the caller then appends the value's text with nnp__jw_frag*, which
 * write exactly what they are given, and must leave one complete JSON value before the
 * next call of any other function. A compact object per value, also when pretty. */
void nnp__jw_value_begin(nnp_jw_t *w);
/* Out-of-line part of nnp__jw_frag (flush, or an error). */
void nnp__jw_put_slow(nnp_jw_t *w, const char *s, size_t n);
/* n bytes of JSON text, as they are. */
static inline void nnp__jw_frag(nnp_jw_t *w, const char *s, size_t n)
{
    if (NNP_LIKELY(w->len + n + 1 <= w->cap && w->err == NNP_OK)) {
        nnp__copy_short(w->buf + w->len, s, n);
        w->len += n;
        return;
    }
    nnp__jw_put_slow(w, s, n);
}
/* Room for up to n bytes of JSON text at the end of the buffer: where to write them, or
 * NULL (no room without a flush, or an error). The caller writes at most n bytes there
 * and then says where it stopped with nnp__jw_room_done. Composes a fixed-layout piece
 * with one bounds check. */
static inline char *nnp__jw_room(nnp_jw_t *w, size_t n)
{
    if (NNP_LIKELY(w->len + n + 1 <= w->cap && w->err == NNP_OK))
        return w->buf + w->len;
    return NULL;
}
static inline void nnp__jw_room_done(nnp_jw_t *w, const char *end)
{
    w->len = (size_t)(end - w->buf);
}
/* A string literal as JSON text: NNP_JW_LIT(w, ",\"ph\":\"X\""). */
#define NNP_JW_LIT(w, lit) nnp__jw_frag((w), (lit), sizeof(lit) - 1)
/* n bytes of s as a quoted JSON string, escaped as nnp__jw_strn does. */
void nnp__jw_frag_str(nnp_jw_t *w, const char *s, size_t n);
/* n bytes the caller knows need no escaping, quoted. */
void nnp__jw_frag_clean_str(nnp_jw_t *w, const char *s, size_t n);
/* Integers and v / div with `decimals` digits (nnp__fmt_fixed), as JSON numbers. */
void nnp__jw_frag_u64(nnp_jw_t *w, uint64_t v);
void nnp__jw_frag_i64(nnp_jw_t *w, int64_t v);
void nnp__jw_frag_fixed(nnp_jw_t *w, int64_t v, uint64_t div, int decimals);
/* A double as nnp__jw_double writes it (null when not finite). */
void nnp__jw_frag_double(nnp_jw_t *w, double v);
/* True when s[0..n) has a byte JSON strings must escape. */
bool nnp__jw_needs_escape(const char *s, size_t n);

#endif /* NNP_JSON_WRITER_H */
