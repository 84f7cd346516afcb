/* json_stream.h - streams the elements of a big JSON array one at a time: a Chrome-trace
 * file (a top-level array, or an object whose "traceEvents" member is the array, the other
 * top-level members handed over one by one). The file may be gzip-compressed. It is read in
 * blocks; each element is parsed alone (json_tree.h: read-only cJSON nodes in an arena that
 * the next element reuses), so memory is bounded by the largest element, never the
 * document. Damage is counted and located, not fatal. */
#ifndef NNP_JSON_STREAM_H
#define NNP_JSON_STREAM_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

/* Largest single element accepted (a Chrome-trace event is < 1 KiB; args can be large). */
#define NNP_JSON_STREAM_MAX_ELEM (16u * 1024u * 1024u)

typedef struct nnp_json_stream_report {
    uint64_t elements;     /* delivered to the callback */
    uint64_t skipped;      /* nnp__json_stream_array_if: without the string, not parsed */
    uint64_t bad_elements; /* skipped: not valid JSON, or too large */
    uint64_t first_bad_offset;
    uint64_t bytes;       /* bytes read */
    int truncated;        /* the file ended inside the array */
    int no_array;         /* no top-level array / traceEvents array found */
    int has_array;        /* the array was found (the complement of no_array) */
    int object;           /* the document is an object (else an array, or nothing usable) */
    int doc_truncated;    /* the object document ends, or breaks, after its array */
    uint64_t bad_members; /* top-level members that are not valid JSON (skipped) */
    int gzip;             /* the file is gzip-compressed */
    int read_error;       /* reading stopped early: a gzip stream cut short or damaged */
    char error[128];      /* why, when read_error (zlib's or the system's message) */
} nnp_json_stream_report_t;

/* Return non-zero from the callback to stop (that value is returned). elem is valid only
 * during the call and read-only: never give it to cJSON_Delete or change it (copy it with
 * cJSON_Duplicate to keep it). index counts elements from 0, bad ones included. */
typedef int (*nnp_json_elem_cb)(void *user, const cJSON *elem, uint64_t index);

/* A top-level member of an object document other than the event array (e.g. Kineto's
 * "distributedInfo"); value is valid only during the call. Non-zero stops the read. */
typedef int (*nnp_json_member_cb)(void *user, const char *key, const cJSON *value);

/* Streams path (plain or gzip): the elements of a top-level array, or of the top-level
 * member array_key (NULL: "traceEvents") of an object, to cb; every other top-level member
 * of an object to mcb (may be NULL), in file order. Returns as nnp__json_stream_array. */
int nnp__json_stream_doc(const char *path, const char *array_key, nnp_json_elem_cb cb,
                         nnp_json_member_cb mcb, void *user, nnp_json_stream_report_t *rep);

/* Streams path. Returns NNP_OK (also for a truncated file or bad elements: see *rep),
 * NNP_ENOENT/NNP_EIO when the file cannot be read, or the callback's non-zero value. */
int nnp__json_stream_array(const char *path, nnp_json_elem_cb cb, void *user,
                           nnp_json_stream_report_t *rep);

/* The same, but an element that holds neither the JSON string value (as "value" with
 * its quotes, anywhere in it) nor a backslash (which could escape those bytes) is stepped
 * over without being parsed or checked (counted in rep->skipped): a pre-pass that wants
 * only some events (metadata, "ph":"M": value "M") then costs a scan of the text, not a
 * parse. */
int nnp__json_stream_array_if(const char *path, const char *needle, nnp_json_elem_cb cb, void *user,
                              nnp_json_stream_report_t *rep);

/* As nnp__json_stream_doc over the plain (not gzip) text of an open file descriptor fd
 * (not closed here), each read adding at most read_max bytes (0: the usual blocks; else the
 * window also starts tiny and grows); name is used in messages only. The result does not
 * depend on read_max: the fuzz target (fuzz/fuzz_json_stream.c) checks that with reads of a
 * few bytes against whole ones. */
int nnp__json_stream_fd(int fd, const char *name, const char *array_key, size_t read_max,
                        nnp_json_elem_cb cb, nnp_json_member_cb mcb, void *user,
                        nnp_json_stream_report_t *rep);

#endif /* NNP_JSON_STREAM_H */
