/* json_stream.c - see json_stream.h. The text is read into a window (a few MiB at a time);
 * each event is parsed in place by json_tree.c into arena nodes, with no copy and no malloc
 * per node (issue 17: copying every event into a buffer byte by byte and handing it to
 * cJSON was most of an import). An element that does not parse is cut out by a byte scanner
 * that tracks string/escape state and bracket depth (json_extent.c), as before, and counted
 * as bad. Input goes through zlib's gz* reader, which reads a gzip file (Kineto's
 * .pt.trace.json.gz) and a plain one alike, so every caller gets gzip for free. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "nnprof/nnprof.h"
#include "read/json_extent.h"
#include "read/json_stream.h"
#include "read/json_tree.h"
#include "util/util.h"

#define BLOCK_BYTES  (1u << 20)
#define ELEM_INITIAL 4096
/* The window starts at a few blocks; one read fills at most READ_BLOCKS of them. A plain
 * file smaller than that gets a window of its size (importers stream many small files, each
 * twice: 8 MiB per pass was most of their cost), at least WINDOW_MIN bytes. */
#define WINDOW_INITIAL (8u * BLOCK_BYTES)
#define WINDOW_MIN     4096u
/* A gzip file's text is unknown until read: its window is this many times its compressed
 * size (traces compress 10-20x; a window too small only means more, smaller reads). */
#define GZIP_RATIO 16u
/* The window of nnp__json_stream_fd when a read size is given (tests and the fuzz target):
 * tiny, so that its growth is exercised by small inputs. */
#define WINDOW_TINY 16u
#define READ_BLOCKS 4u
/* The member holding the event array of a Chrome-trace object document. */
#define TRACE_EVENTS_KEY "traceEvents"
/* Longest top-level key kept (Kineto's keys are short words); longer ones are skipped. */
#define KEY_MAX 256

/* The window: text offset..offset+len of the (decompressed) document, pos the next byte.
 * It grows (up to an element's limit plus a block) when one value spans refills. */
typedef struct scan {
    gzFile f; /* a gzip file, or NULL */
    int fd;   /* a plain file (read directly: zlib's transparent mode copies twice) */
    unsigned char *win;
    size_t cap, len, pos;
    uint64_t offset; /* offset (in the decompressed text) of win[0] */
    bool eof;        /* the reader has returned everything */
    const char *path;
    nnp_json_stream_report_t *rep;
    /* nnp__json_stream_array_if: parse only the elements holding this string value */
    const char *needle;
    size_t needle_len;
    unsigned read_max; /* most bytes one read adds (READ_BLOCKS blocks unless a caller asks) */
} scan_t;

/* A growing buffer for one value's text, capped at NNP_JSON_STREAM_MAX_ELEM. */
typedef struct vbuf {
    char *p;
    size_t len, cap;
    bool too_big, oom;
} vbuf_t;

/* Reads more text into the window after dropping the bytes before keep (they move to the
 * front). Returns the bytes added, 0 at the end of the input or on a read error (which is
 * reported once). */
static size_t refill(scan_t *s, size_t keep)
{
    size_t need;
    unsigned room;
    int n;
    if (s->eof)
        return 0;
    if (keep > 0) {
        memmove(s->win, s->win + keep, s->len - keep);
        s->offset += keep;
        s->len -= keep;
        s->pos -= keep;
    }
    /* A window smaller than a block (a small file's) reads into whatever room it has. */
    need = s->cap < BLOCK_BYTES ? 1 : BLOCK_BYTES;
    if (s->cap - s->len < need) {
        /* A value longer than the window: room for it, up to the element limit. */
        size_t ncap = s->cap * 2;
        unsigned char *nw;
        if (ncap > NNP_JSON_STREAM_MAX_ELEM + 2 * (size_t)BLOCK_BYTES)
            ncap = NNP_JSON_STREAM_MAX_ELEM + 2 * (size_t)BLOCK_BYTES;
        if (ncap - s->len < need || !(nw = nnp__realloc(s->win, ncap)))
            return 0; /* cannot grow: the caller sees the value as cut short */
        s->win = nw;
        s->cap = ncap;
    }
    room = s->cap - s->len < s->read_max ? (unsigned)(s->cap - s->len) : s->read_max;
    if (s->f) {
        n = gzread(s->f, s->win + s->len, room);
    } else {
        ssize_t r;
        do {
            r = read(s->fd, s->win + s->len, room);
        } while (r < 0 && errno == EINTR);
        if (r < 0 && !s->rep->read_error) {
            s->rep->read_error = 1;
            snprintf(s->rep->error, sizeof(s->rep->error), "%s", strerror(errno));
        }
        if (r <= 0) {
            s->eof = true;
            return 0;
        }
        n = (int)r;
    }
    if (n <= 0) {
        int err = Z_OK;
        const char *msg = gzerror(s->f, &err);
        s->eof = true;
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
        return 0;
    }
    s->len += (size_t)n;
    return (size_t)n;
}

static int next_byte(scan_t *s)
{
    if (s->pos == s->len && refill(s, s->pos) == 0)
        return EOF;
    return s->win[s->pos++];
}

/* Gives back the byte next_byte just returned (it is still in the window). */
static void push_back(scan_t *s, int c)
{
    if (c != EOF)
        s->pos--;
}

/* Offset of the next byte to be read. */
static uint64_t where(const scan_t *s)
{
    return s->offset + s->pos;
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

/* Appends n bytes (a value over the limit keeps none of what follows: it is never
 * parsed). */
static void vbuf_append(vbuf_t *b, const void *p, size_t n)
{
    if (b->too_big || b->oom || n == 0)
        return;
    if (b->len + n > NNP_JSON_STREAM_MAX_ELEM) {
        b->too_big = true;
        return;
    }
    if (b->len + n + 1 > b->cap) {
        size_t ncap = b->cap ? b->cap : ELEM_INITIAL;
        char *np;
        while (ncap < b->len + n + 1)
            ncap *= 2;
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
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

/* Reads one JSON value whose first byte is c into b (b's previous text is dropped): a
 * container or string up to its matching close, a scalar up to the next delimiter (which is
 * pushed back). Returns true when the value is complete, false when the input ended inside
 * it. The text is NUL-terminated when it fits. */
static bool read_value(scan_t *s, int c, vbuf_t *b)
{
    b->len = 0;
    b->too_big = false;
    if (c != '{' && c != '[' && c != '"') {
        /* A scalar: up to the next delimiter. A stray delimiter where a value should start
         * (a '}' in an array) is consumed as an empty, invalid value, so the caller always
         * moves on. */
        if (c == ']' || c == '}' || c == ':')
            goto done;
        while (c != EOF && c != ',' && c != ']' && c != '}' && !is_ws(c)) {
            char ch = (char)c;
            vbuf_append(b, &ch, 1);
            c = next_byte(s);
        }
        if (c == EOF)
            return false;
        push_back(s, c);
        goto done;
    }
    {
        /* A container or a string, scanned in the window (c is the byte before s->pos),
         * the scanned part copied a window at a time. */
        nnp_json_extent_t x = {0, false, false, NULL, 0, 0, false};
        size_t seg = s->pos - 1;
        for (;;) {
            bool complete;
            size_t used = nnp__json_scan_extent(s->win + seg, s->len - seg, &x, &complete);
            vbuf_append(b, s->win + seg, used);
            s->pos = seg + used;
            if (complete)
                goto done;
            if (refill(s, s->len) == 0)
                return false;
            seg = s->pos;
        }
    }
done:
    if (b->p && b->len < b->cap)
        b->p[b->len] = '\0';
    if (b->len == 0)
        b->too_big = true; /* nothing to parse: an invalid element */
    return true;
}

/* Whether text p[0..n) holds the JSON string want (its quoted bytes), or a backslash. */
static bool holds_string(const char *p, size_t n, const char *want, size_t want_len)
{
    const char *q = p, *end = p + n;
    if (memchr(p, '\\', n))
        return true;
    while ((q = memchr(q, '"', (size_t)(end - q))) != NULL) {
        if ((size_t)(end - q) >= want_len + 2 && memcmp(q + 1, want, want_len) == 0 &&
            q[want_len + 1] == '"')
            return true;
        q++;
    }
    return false;
}

/* Parses the cut text of one element (read_value); NULL when it is not JSON. */
static const cJSON *parse_cut(scan_t *s, vbuf_t *b, nnp_jt_t *jt, int *nomem)
{
    const char *stop;
    const cJSON *j;
    int st;
    *nomem = 0;
    if (b->too_big)
        return NULL;
    nnp__jt_reset(jt);
    j = nnp__jt_parse(jt, b->p, b->p + b->len, 1, &stop, &st);
    (void)s;
    *nomem = st == NNP_JT_NOMEM;
    return j;
}

/* Hands one element (its first byte c at window index s->pos - 1) to cb: a container is
 * parsed in place (json_tree.c), the window refilled while it runs past its end; anything
 * else, or a container that does not parse, is cut out as read_value does and parsed from
 * the cut. Returns the callback's code, NNP_ENOMEM or NNP_OK; *ended when the input ended
 * inside the element. */
static int one_element(scan_t *s, int c, nnp_json_elem_cb cb, void *user, vbuf_t *b, nnp_jt_t *jt,
                       uint64_t index, bool *ended)
{
    nnp_json_stream_report_t *rep = s->rep;
    size_t start = s->pos - 1;
    const cJSON *j = NULL;
    int st = NNP_JT_BAD, nomem = 0;
    *ended = false;
    if ((c == '{' || c == '[') && !s->needle) {
        for (;;) {
            const char *stop;
            nnp__jt_reset(jt);
            j = nnp__jt_parse(jt, (const char *)s->win + start, (const char *)s->win + s->len,
                              s->eof, &stop, &st);
            if (st == NNP_JT_OK) {
                s->pos = (size_t)((const unsigned char *)stop - s->win);
                break;
            }
            if (st != NNP_JT_MORE || s->len - start > NNP_JSON_STREAM_MAX_ELEM)
                break; /* invalid, too large, or out of memory: cut out below */
            s->pos = start;
            if (refill(s, start) == 0)
                s->eof = true; /* nothing more will come: the next parse says so */
            start = s->pos;
        }
        if (st == NNP_JT_NOMEM)
            return nnp__fail(NNP_ENOMEM, "out of memory reading '%s'", s->path);
    }
    if (s->needle && (c == '{' || c == '[')) {
        /* A filtered pass: an element inside the window is looked at where it lies. */
        nnp_json_extent_t x = {0, false, false, s->needle, s->needle_len, 0, false};
        bool complete;
        size_t used = nnp__json_scan_extent(s->win + start, s->len - start, &x, &complete);
        if (complete) {
            const unsigned char *p = s->win + start;
            const char *stop;
            s->pos = start + used;
            if (!x.hit) {
                rep->skipped++;
                return NNP_OK;
            }
            nnp__jt_reset(jt);
            j = nnp__jt_parse(jt, (const char *)p, (const char *)p + used, 1, &stop, &st);
            if (st == NNP_JT_NOMEM)
                return nnp__fail(NNP_ENOMEM, "out of memory reading '%s'", s->path);
            if (!j) {
                if (!rep->bad_elements++)
                    rep->first_bad_offset = s->offset + start;
                return NNP_OK;
            }
            rep->elements++;
            return cb(user, j, index);
        }
    }
    if (st != NNP_JT_OK) {
        uint64_t at = s->offset + start;
        s->pos = start + 1;
        if (!read_value(s, c, b)) {
            *ended = true;
            return NNP_OK; /* the file ends inside this element */
        }
        if (b->oom)
            return nnp__fail(NNP_ENOMEM, "out of memory reading '%s'", s->path);
        /* A filtered pass skips what cannot be wanted without checking it. */
        if (s->needle && !b->too_big && !holds_string(b->p, b->len, s->needle, s->needle_len)) {
            rep->skipped++;
            return NNP_OK;
        }
        /* A container that did not parse in place stays bad; the rest parse from the cut. */
        j = (c == '{' || c == '[') && !s->needle ? NULL : parse_cut(s, b, jt, &nomem);
        if (!j && nomem)
            return nnp__fail(NNP_ENOMEM, "out of memory reading '%s'", s->path);
        if (!j) {
            if (!rep->bad_elements++)
                rep->first_bad_offset = at;
            return NNP_OK;
        }
    }
    rep->elements++;
    return cb(user, j, index);
}

/* Streams the elements of the array whose '[' was just read. Returns the callback's stop
 * code, NNP_ENOMEM, or NNP_OK; *closed tells whether the closing ']' was seen. */
static int stream_array(scan_t *s, nnp_json_elem_cb cb, void *user, vbuf_t *b, bool *closed)
{
    uint64_t index = 0;
    nnp_jt_t jt;
    int c, rc = NNP_OK;
    *closed = false;
    nnp__jt_init(&jt);
    while ((c = skip_ws(s)) != EOF) {
        bool ended;
        if (c == ',')
            continue;
        if (c == ']') {
            *closed = true;
            break;
        }
        rc = one_element(s, c, cb, user, b, &jt, index, &ended);
        if (rc != NNP_OK || ended)
            break;
        index++;
    }
    nnp__jt_fini(&jt);
    return rc;
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
            rc = stream_array(s, cb, user, b, &closed);
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

/* Sets up s for the entry points: needle NULL parses every element. */
static void scan_init(scan_t *s, const char *path, const char *needle,
                      nnp_json_stream_report_t *rep)
{
    memset(rep, 0, sizeof(*rep));
    memset(s, 0, sizeof(*s));
    s->rep = rep;
    s->path = path;
    s->needle = needle && *needle ? needle : NULL;
    s->needle_len = s->needle ? strlen(s->needle) : 0;
    s->fd = -1;
    s->read_max = READ_BLOCKS * BLOCK_BYTES;
}

/* The window for a plain file of descriptor fd: its size (plus one byte, so that the end is
 * seen without growing) when it is smaller than WINDOW_INITIAL. */
static size_t window_for(int fd)
{
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0 ||
        (uint64_t)st.st_size >= WINDOW_INITIAL)
        return WINDOW_INITIAL;
    return (size_t)st.st_size + 1 > WINDOW_MIN ? (size_t)st.st_size + 1 : WINDOW_MIN;
}

/* The window for the gzip file at path: GZIP_RATIO times its size, up to WINDOW_INITIAL. */
static size_t window_for_gzip(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0 ||
        (uint64_t)st.st_size >= WINDOW_INITIAL / GZIP_RATIO)
        return WINDOW_INITIAL;
    return (size_t)st.st_size * GZIP_RATIO > WINDOW_MIN ? (size_t)st.st_size * GZIP_RATIO
                                                        : WINDOW_MIN;
}

/* Reads the document of s (its input open) through a window of cap bytes (it grows as
 * needed): allocates the window, streams, frees the window. The input stays open. */
static int stream_body(scan_t *s, size_t cap, const char *array_key, nnp_json_elem_cb cb,
                       nnp_json_member_cb mcb, void *user)
{
    nnp_json_stream_report_t *rep = s->rep;
    vbuf_t b;
    int c, rc = NNP_OK;

    memset(&b, 0, sizeof(b));
    s->cap = cap;
    s->win = nnp__malloc(s->cap);
    if (!s->win)
        return nnp__fail(NNP_ENOMEM, "out of memory reading '%s'", s->path);
    do { /* whitespace and a UTF-8 byte order mark */
        c = next_byte(s);
    } while (is_ws(c) || c == 0xEF || c == 0xBB || c == 0xBF);
    if (c == '[') {
        bool closed;
        rep->has_array = 1;
        rc = stream_array(s, cb, user, &b, &closed);
        if (rc == NNP_OK && !closed)
            rep->truncated = 1;
    } else if (c == '{') {
        rep->object = 1;
        rc = stream_object(s, array_key ? array_key : TRACE_EVENTS_KEY, cb, mcb, user, &b, s->path);
    }
    rep->no_array = !rep->has_array;
    rep->bytes = where(s);
    nnp__free(b.p);
    nnp__free(s->win);
    s->win = NULL;
    return rc;
}

/* The body of the path entry points: needle NULL parses every element. */
static int stream_doc(const char *path, const char *array_key, const char *needle,
                      nnp_json_elem_cb cb, nnp_json_member_cb mcb, void *user,
                      nnp_json_stream_report_t *rep)
{
    scan_t s;
    int rc;

    scan_init(&s, path, needle, rep);
    errno = 0;
    s.f = gzopen(path, "rb");
    if (!s.f) {
        int e = errno ? errno : ENOMEM;
        return nnp__fail(nnp__from_errno(e), "cannot open '%s': %s", path, strerror(e));
    }
    rep->gzip = !gzdirect(s.f);
    if (!rep->gzip) { /* plain text: read it ourselves, straight into the window */
        s.fd = open(path, O_RDONLY | O_CLOEXEC);
        if (s.fd >= 0) {
            gzclose(s.f);
            s.f = NULL;
        }
    }
    rc = stream_body(&s, s.f ? window_for_gzip(path) : window_for(s.fd), array_key, cb, mcb, user);
    if (s.f)
        gzclose(s.f);
    else
        close(s.fd);
    return rc;
}

int nnp__json_stream_fd(int fd, const char *name, const char *array_key, size_t read_max,
                        nnp_json_elem_cb cb, nnp_json_member_cb mcb, void *user,
                        nnp_json_stream_report_t *rep)
{
    scan_t s;
    scan_init(&s, name, NULL, rep);
    s.fd = fd;
    if (read_max >= 1 && read_max < s.read_max)
        s.read_max = (unsigned)read_max;
    return stream_body(&s, read_max ? WINDOW_TINY : window_for(fd), array_key, cb, mcb, user);
}

int nnp__json_stream_doc(const char *path, const char *array_key, nnp_json_elem_cb cb,
                         nnp_json_member_cb mcb, void *user, nnp_json_stream_report_t *rep)
{
    return stream_doc(path, array_key, NULL, cb, mcb, user, rep);
}

int nnp__json_stream_array(const char *path, nnp_json_elem_cb cb, void *user,
                           nnp_json_stream_report_t *rep)
{
    return stream_doc(path, TRACE_EVENTS_KEY, NULL, cb, NULL, user, rep);
}

int nnp__json_stream_array_if(const char *path, const char *needle, nnp_json_elem_cb cb, void *user,
                              nnp_json_stream_report_t *rep)
{
    return stream_doc(path, TRACE_EVENTS_KEY, needle, cb, NULL, user, rep);
}
