/* py_text.h - output text as Python's json.dump (ensure_ascii) and csv.writer
 * (QUOTE_MINIMAL) write it, through a buffered output file: host_info.c reproduces the
 * MindSpore seed's files byte for byte with these (py_text.c). */
#ifndef NNP_PY_TEXT_H
#define NNP_PY_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

/* csv.writer's default lineterminator; the seed keeps it. */
#define NNP_PY_CSV_EOL "\r\n"

/* A buffered output file (nnp__out_open underneath). Zero-initialise before opening. */
typedef struct nnp_obuf {
    nnp_outfile_t f;
    bool is_open;
    char *buf;
    size_t len;
    int err;
} nnp_obuf_t;

/* Opens dir/name; NNP_OK or an error (also kept in o->err). */
int nnp__py_ob_open(nnp_obuf_t *o, const char *dir, const char *name);
void nnp__py_ob_put(nnp_obuf_t *o, const char *s, size_t n);
void nnp__py_ob_puts(nnp_obuf_t *o, const char *s);
void nnp__py_ob_i64(nnp_obuf_t *o, int64_t v);
void nnp__py_ob_u64(nnp_obuf_t *o, uint64_t v);
/* Closes the file: renamed into place when keep and nothing failed, removed otherwise.
 * Returns the first error (NNP_OK when discarded on purpose). */
int nnp__py_ob_close(nnp_obuf_t *o, bool keep);

/* json.dump's escaping of str (ensure_ascii), without / with the quotes. */
void nnp__py_json_body(nnp_obuf_t *o, const char *str);
void nnp__py_json_str(nnp_obuf_t *o, const char *s);
/* One CSV field: quoted when it holds a comma, quote, CR or LF, quotes doubled. */
void nnp__py_csv_field(nnp_obuf_t *o, const char *s, bool first);
/* A header row of n names, ended by NNP_PY_CSV_EOL. */
void nnp__py_csv_header(nnp_obuf_t *o, const char *const *names, size_t n);
/* Python's repr(x) (str() of a float, what csv.writer writes) into out (cap >= 32). */
void nnp__py_float_repr(double x, char *out, size_t cap);

#endif /* NNP_PY_TEXT_H */
