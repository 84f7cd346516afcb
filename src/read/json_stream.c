/* json_stream.c - see json_stream.h. A byte-level scanner tracks string/escape state and
 * bracket depth to cut the array into elements; only element text is buffered. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nnprof/nnprof.h"
#include "read/json_stream.h"
#include "util/util.h"

#define BLOCK_BYTES  (1u << 20)
#define ELEM_INITIAL 4096
/* Bytes scanned for the "traceEvents" key before giving up on an object document. */
#define KEY "\"traceEvents\""

typedef struct scan {
    FILE *f;
    unsigned char *blk;
    size_t len, pos;
    uint64_t offset; /* file offset of blk[0] */
} scan_t;

static int next_byte(scan_t *s)
{
    if (s->pos == s->len) {
        s->offset += s->len;
        s->len = fread(s->blk, 1, BLOCK_BYTES, s->f);
        s->pos = 0;
        if (s->len == 0)
            return EOF;
    }
    return s->blk[s->pos++];
}

static uint64_t where(const scan_t *s)
{
    return s->offset + s->pos;
}

/* Skips to just after the '[' that opens the event array. Returns 0, or -1 when none. */
static int find_array(scan_t *s)
{
    int c;
    size_t matched = 0;
    do {
        c = next_byte(s);
    } while (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0xEF || c == 0xBB ||
             c == 0xBF); /* whitespace and a UTF-8 BOM */
    if (c == '[')
        return 0;
    if (c != '{')
        return -1;
    /* An object document: find the key, then its array. Strings elsewhere cannot hold an
     * unescaped quote, so matching the quoted key text is enough. */
    while ((c = next_byte(s)) != EOF) {
        matched = (unsigned char)c == (unsigned char)KEY[matched] ? matched + 1 : c == '"' ? 1 : 0;
        if (matched == strlen(KEY))
            break;
    }
    while (c != EOF && c != '[')
        c = next_byte(s);
    return c == '[' ? 0 : -1;
}

int nnp__json_stream_array(const char *path, nnp_json_elem_cb cb, void *user,
                           nnp_json_stream_report_t *rep)
{
    scan_t s;
    char *elem = NULL;
    size_t elen = 0, ecap = 0;
    uint64_t index = 0, start = 0;
    int depth = 0, c, rc = NNP_OK;
    bool in_str = false, esc = false, in_elem = false, done = false;

    memset(rep, 0, sizeof(*rep));
    memset(&s, 0, sizeof(s));
    s.f = fopen(path, "rb");
    if (!s.f)
        return nnp__fail(nnp__from_errno(errno), "cannot open '%s': %s", path, strerror(errno));
    s.blk = nnp__malloc(BLOCK_BYTES);
    if (!s.blk) {
        fclose(s.f);
        return nnp__fail(NNP_ENOMEM, "out of memory reading '%s'", path);
    }
    if (find_array(&s) != 0) {
        rep->no_array = 1;
        goto out;
    }
    while (!done && (c = next_byte(&s)) != EOF) {
        if (!in_elem) {
            if (c == ']') {
                done = true;
            } else if (c == '{' || c == '[' || c == '"' || c == '-' || (c >= '0' && c <= '9') ||
                       c == 't' || c == 'f' || c == 'n') {
                in_elem = true;
                start = where(&s) - 1;
                elen = 0;
                depth = 0;
                in_str = esc = false;
            } else {
                continue; /* whitespace and commas between elements */
            }
            if (done)
                break;
        }
        /* Inside an element: buffer the byte (bounded), track strings and depth. */
        if (elen + 2 > ecap && ecap < NNP_JSON_STREAM_MAX_ELEM + 2) {
            size_t ncap = ecap ? ecap * 2 : ELEM_INITIAL;
            char *ne;
            if (ncap > NNP_JSON_STREAM_MAX_ELEM + 2)
                ncap = NNP_JSON_STREAM_MAX_ELEM + 2;
            ne = nnp__realloc(elem, ncap);
            if (!ne) {
                rc = nnp__fail(NNP_ENOMEM, "out of memory reading '%s'", path);
                break;
            }
            elem = ne;
            ecap = ncap;
        }
        if (elen + 2 <= ecap)
            elem[elen++] = (char)c;
        if (in_str) {
            if (esc)
                esc = false;
            else if (c == '\\')
                esc = true;
            else if (c == '"')
                in_str = false;
            if (in_str || depth > 0)
                continue;
        } else if (c == '"') {
            in_str = true;
            continue;
        } else if (c == '{' || c == '[') {
            depth++;
            continue;
        } else if (c == '}' || c == ']') {
            depth--;
            if (depth > 0)
                continue;
        } else if (depth > 0) {
            continue;
        } else {
            /* A scalar element ends at the next ',' / ']' / whitespace: peek by reading. */
            int d = next_byte(&s);
            if (d == EOF) {
                rep->truncated = 1;
                in_elem = false;
                break;
            }
            if (d != ',' && d != ']' && d != ' ' && d != '\n' && d != '\r' && d != '\t') {
                if (elen + 2 <= ecap)
                    elem[elen++] = (char)d;
                continue;
            }
            if (d == ']')
                done = true;
        }
        /* Element complete. */
        in_elem = false;
        if (elen + 2 > ecap || elen > NNP_JSON_STREAM_MAX_ELEM) {
            if (!rep->bad_elements++)
                rep->first_bad_offset = start;
        } else {
            cJSON *j;
            elem[elen] = '\0';
            j = cJSON_ParseWithLength(elem, elen);
            if (!j) {
                if (!rep->bad_elements++)
                    rep->first_bad_offset = start;
            } else {
                rep->elements++;
                rc = cb(user, j, index);
                cJSON_Delete(j);
            }
        }
        index++;
        if (rc != NNP_OK)
            break;
    }
    if (rc == NNP_OK && !done)
        rep->truncated = 1;
out:
    rep->bytes = where(&s);
    nnp__free(elem);
    nnp__free(s.blk);
    fclose(s.f);
    return rc;
}
