/* json_stream.c - see json_stream.h. A byte-level scanner tracks string/escape state and
 * bracket depth to cut a document into values; only one value's text is buffered at a time.
 * Input goes through zlib's gz* reader, which reads a gzip file (Kineto's .pt.trace.json.gz)
 * and a plain one alike, so every caller gets gzip for free. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "nnprof/nnprof.h"
#include "read/json_stream.h"
#include "util/util.h"

#define BLOCK_BYTES  (1u << 20)
#define ELEM_INITIAL 4096
/* The member holding the event array of a Chrome-trace object document. */
#define TRACE_EVENTS_KEY "traceEvents"
/* Longest top-level key kept (Kineto's keys are short words); longer ones are skipped. */
#define KEY_MAX 256
#define NO_BYTE (-2)

typedef struct scan {
    gzFile f;
    unsigned char *blk;
    size_t len, pos;
    uint64_t offset; /* offset (in the decompressed text) of blk[0] */
    int back;        /* one pushed-back byte, NO_BYTE when none */
    const char *path;
    nnp_json_stream_report_t *rep;
} scan_t;

/* A growing buffer for one value's text, capped at NNP_JSON_STREAM_MAX_ELEM. */
typedef struct vbuf {
    char *p;
    size_t len, cap;
    bool too_big, oom;
} vbuf_t;

static int next_byte(scan_t *s)
{
    int n;
    if (s->back != NO_BYTE) {
        int c = s->back;
        s->back = NO_BYTE;
        return c;
    }
    if (s->pos == s->len) {
        s->offset += s->len;
        s->pos = s->len = 0;
        n = gzread(s->f, s->blk, BLOCK_BYTES);
        if (n <= 0) {
            int err = Z_OK;
            const char *msg = gzerror(s->f, &err);
            /* A gzip stream cut short or damaged: report it once (partial results stay). */
            if ((n < 0 || (err != Z_OK && err != Z_STREAM_END)) && !s->rep->read_error) {
                size_t plen = strlen(s->path);
                s->rep->read_error = 1;
                /* zlib prefixes its message with "<path>: "; callers name the file. */
                if (msg && strncmp(msg, s->path, plen) == 0 && strncmp(msg + plen, ": ", 2) == 0)
                    msg += plen + 2;
                snprintf(s->rep->error, sizeof(s->rep->error), "%s",
                         err == Z_ERRNO ? strerror(errno)
                         : msg          ? msg
                                        : "read error");
            }
            return EOF;
        }
        s->len = (size_t)n;
    }
    return s->blk[s->pos++];
}

static void push_back(scan_t *s, int c)
{
    if (c != EOF)
        s->back = c;
}

/* Offset of the next byte to be read. */
static uint64_t where(const scan_t *s)
{
    return s->offset + s->pos - (s->back != NO_BYTE);
}

static bool is_ws(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int skip_ws(scan_t *s)
{
    int c;
    do {
        c = next_byte(s);
    } while (is_ws(c));
    return c;
}

static void vbuf_add(vbuf_t *b, int c)
{
    if (b->too_big || b->oom)
        return;
    if (b->len + 2 > b->cap) {
        size_t ncap = b->cap ? b->cap * 2 : ELEM_INITIAL;
        char *np;
        if (b->len + 2 > NNP_JSON_STREAM_MAX_ELEM + 2) {
            b->too_big = true;
            return;
        }
        if (ncap > NNP_JSON_STREAM_MAX_ELEM + 2)
            ncap = NNP_JSON_STREAM_MAX_ELEM + 2;
        np = nnp__realloc(b->p, ncap);
        if (!np) {
            b->oom = true;
            return;
        }
        b->p = np;
        b->cap = ncap;
    }
    b->p[b->len++] = (char)c;
}

/* Reads one JSON value whose first byte is c into b (b's previous text is dropped): a
 * container or string up to its matching close, a scalar up to the next delimiter (which is
 * pushed back). Returns true when the value is complete, false when the input ended inside
 * it. The text is NUL-terminated when it fits. */
static bool read_value(scan_t *s, int c, vbuf_t *b)
{
    int depth = 0;
    bool in_str = false, esc = false;
    b->len = 0;
    b->too_big = false;
    if (c != '{' && c != '[' && c != '"') {
        /* A scalar: up to the next delimiter. A stray delimiter where a value should start
         * (a '}' in an array) is consumed as an empty, invalid value, so the caller always
         * moves on. */
        if (c == ']' || c == '}' || c == ':')
            goto done;
        while (c != EOF && c != ',' && c != ']' && c != '}' && !is_ws(c)) {
            vbuf_add(b, c);
            c = next_byte(s);
        }
        if (c == EOF)
            return false;
        push_back(s, c);
        goto done;
    }
    for (; c != EOF; c = next_byte(s)) {
        vbuf_add(b, c);
        if (in_str) {
            if (esc)
                esc = false;
            else if (c == '\\')
                esc = true;
            else if (c == '"') {
                in_str = false;
                if (depth == 0)
                    goto done; /* a string value */
            }
        } else if (c == '"') {
            in_str = true;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if ((c == '}' || c == ']') && --depth == 0) {
            goto done;
        }
    }
    return false;
done:
    if (b->p && b->len < b->cap)
        b->p[b->len] = '\0';
    if (b->len == 0)
        b->too_big = true; /* nothing to parse: an invalid element */
    return true;
}

/* Streams the elements of the array whose '[' was just read. Returns the callback's stop
 * code, NNP_ENOMEM, or NNP_OK; *closed tells whether the closing ']' was seen. */
static int stream_array(scan_t *s, nnp_json_elem_cb cb, void *user, vbuf_t *b, const char *path,
                        bool *closed)
{
    nnp_json_stream_report_t *rep = s->rep;
    uint64_t index = 0;
    int c;
    *closed = false;
    while ((c = skip_ws(s)) != EOF) {
        uint64_t start;
        cJSON *j;
        int rc;
        if (c == ',')
            continue;
        if (c == ']') {
            *closed = true;
            return NNP_OK;
        }
        start = where(s) - 1;
        if (!read_value(s, c, b))
            return NNP_OK; /* the file ends inside this element */
        if (b->oom)
            return nnp__fail(NNP_ENOMEM, "out of memory reading '%s'", path);
        j = b->too_big ? NULL : cJSON_ParseWithLength(b->p, b->len);
        if (!j) {
            if (!rep->bad_elements++)
                rep->first_bad_offset = start;
        } else {
            rep->elements++;
            rc = cb(user, j, index);
            cJSON_Delete(j);
            if (rc != NNP_OK)
                return rc;
        }
        index++;
    }
    return NNP_OK;
}

/* Reads a string whose opening quote was just read into key (cut at cap - 1 bytes; *cut
 * says so). Escapes are kept as written: top-level keys of trace files have none. */
static bool read_key(scan_t *s, char *key, size_t cap, bool *cut)
{
    size_t n = 0;
    bool esc = false;
    int c;
    *cut = false;
    while ((c = next_byte(s)) != EOF) {
        if (!esc && c == '"') {
            key[n] = '\0';
            return true;
        }
        esc = !esc && c == '\\';
        if (n + 1 < cap)
            key[n++] = (char)c;
        else
            *cut = true;
    }
    return false;
}

/* The members of an object document whose '{' was just read: array_key's array is streamed,
 * every other member is handed to mcb (when set) one at a time. */
static int stream_object(scan_t *s, const char *array_key, nnp_json_elem_cb cb,
                         nnp_json_member_cb mcb, void *user, vbuf_t *b, const char *path)
{
    nnp_json_stream_report_t *rep = s->rep;
    char key[KEY_MAX];
    int c, rc;
    for (;;) {
        bool cut;
        c = skip_ws(s);
        if (c == '}')
            return NNP_OK;
        if (c == ',')
            continue;
        if (c != '"' || !read_key(s, key, sizeof(key), &cut) || skip_ws(s) != ':')
            break; /* not an object we can walk: stop, reporting what we have */
        c = skip_ws(s);
        if (c == EOF)
            break;
        if (!cut && c == '[' && !rep->has_array && strcmp(key, array_key) == 0) {
            bool closed;
            rep->has_array = 1;
            rc = stream_array(s, cb, user, b, path, &closed);
            if (rc != NNP_OK)
                return rc;
            if (!closed) {
                rep->truncated = 1;
                return NNP_OK;
            }
            continue;
        }
        if (!read_value(s, c, b))
            break;
        if (b->oom)
            return nnp__fail(NNP_ENOMEM, "out of memory reading '%s'", path);
        if (mcb && !cut && !b->too_big) {
            cJSON *j = cJSON_ParseWithLength(b->p, b->len);
            if (j) {
                rc = mcb(user, key, j);
                cJSON_Delete(j);
                if (rc != NNP_OK)
                    return rc;
            } else {
                rep->bad_members++;
            }
        }
    }
    if (rep->has_array)
        rep->doc_truncated = 1; /* damage after the event array: its events are all read */
    return NNP_OK;
}

int nnp__json_stream_doc(const char *path, const char *array_key, nnp_json_elem_cb cb,
                         nnp_json_member_cb mcb, void *user, nnp_json_stream_report_t *rep)
{
    scan_t s;
    vbuf_t b;
    int c, rc = NNP_OK;

    memset(rep, 0, sizeof(*rep));
    memset(&s, 0, sizeof(s));
    memset(&b, 0, sizeof(b));
    s.back = NO_BYTE;
    s.rep = rep;
    s.path = path;
    errno = 0;
    s.f = gzopen(path, "rb");
    if (!s.f) {
        int e = errno ? errno : ENOMEM;
        return nnp__fail(nnp__from_errno(e), "cannot open '%s': %s", path, strerror(e));
    }
    s.blk = nnp__malloc(BLOCK_BYTES);
    if (!s.blk) {
        gzclose(s.f);
        return nnp__fail(NNP_ENOMEM, "out of memory reading '%s'", path);
    }
    rep->gzip = !gzdirect(s.f);
    do { /* whitespace and a UTF-8 byte order mark */
        c = next_byte(&s);
    } while (is_ws(c) || c == 0xEF || c == 0xBB || c == 0xBF);
    if (c == '[') {
        bool closed;
        rep->has_array = 1;
        rc = stream_array(&s, cb, user, &b, path, &closed);
        if (rc == NNP_OK && !closed)
            rep->truncated = 1;
    } else if (c == '{') {
        rep->object = 1;
        rc = stream_object(&s, array_key ? array_key : TRACE_EVENTS_KEY, cb, mcb, user, &b, path);
    }
    rep->no_array = !rep->has_array;
    rep->bytes = where(&s);
    nnp__free(b.p);
    nnp__free(s.blk);
    gzclose(s.f);
    return rc;
}

int nnp__json_stream_array(const char *path, nnp_json_elem_cb cb, void *user,
                           nnp_json_stream_report_t *rep)
{
    return nnp__json_stream_doc(path, TRACE_EVENTS_KEY, cb, NULL, user, rep);
}
