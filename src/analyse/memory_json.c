/* memory_json.c - the memory analysis's JSON files: memory_usage_summary_{rank}.json
 * (MindSpore 1.x keys plus ours) and memory_usage_details_{rank}.json (the chart line with
 * the op at each point, the peak and its live tensors), from the state memory.c built.
 * Rules: docs/OUTPUTS.md, "Memory". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/memory_internal.h"
#include "util/json_writer.h"

/* MindSpore's summary divides bytes by GIGABYTES = 1024^3 (memory_usage_parser.py). */
#define BYTES_PER_GB (1024.0 * 1024.0 * 1024.0)
/* %.17g always reads back exactly; shorter precisions are tried first. */
#define DOUBLE_MAX_DIGITS 17

/* The shortest decimal that reads back as v (Python's repr), for MindSpore's GB keys. */
static const char *fmt_double(char *b, size_t cap, double v)
{
    for (int p = 1; p <= DOUBLE_MAX_DIGITS; p++) {
        snprintf(b, cap, "%.*g", p, v);
        if (strtod(b, NULL) == v)
            break;
    }
    return b;
}

/* ---- the JSON files ---- */

static int json_open(const nnp_actx_t *c, const char *prefix, nnp_outfile_t *f, nnp_jw_t *w,
                     bool *is_open)
{
    char name[NNP_PATH_MAX];
    int rc;
    snprintf(name, sizeof(name), "%s_%d.json", prefix, c->rank);
    rc = nnp__out_open(f, c->out_dir, name);
    if (rc != NNP_OK)
        return rc;
    *is_open = true;
    return nnp__jw_init(w, f->fd, c->pretty, 0);
}

static void jw_us(nnp_jw_t *w, const char *key, int64_t ns)
{
    char b[NUM_BUF];
    nnp__jw_key(w, key);
    if (ns == NNP_OPEN_END)
        nnp__jw_null(w);
    else
        nnp__jw_raw(w, nnp__mem_fmt_us(b, sizeof(b), ns));
}

/* An op index, null before the first op. */
static void jw_op_index(nnp_jw_t *w, const char *key, size_t op)
{
    nnp__jw_key(w, key);
    if (op == SIZE_MAX)
        nnp__jw_null(w);
    else
        nnp__jw_uint(w, op);
}

static void jw_capacity_bytes(nnp_jw_t *w, uint64_t cap)
{
    nnp__jw_key(w, "capacity_bytes");
    if (cap)
        nnp__jw_uint(w, cap);
    else
        nnp__jw_null(w);
}

/* One listed tensor at the peak. */
static void write_snap(nnp_jw_t *w, const mem_run_t *x, const snap_t *s)
{
    const nnp_model_t *m = x->m;
    int64_t start = m->mem.ts_ns[s->row];
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "name");
    nnp__jw_str(w, nnp__model_str(m, m->mem.name[s->row]));
    nnp__jw_key(w, "size");
    nnp__jw_uint(w, m->mem.bytes[s->row]);
    nnp__jw_key(w, "owner_op");
    nnp__jw_str(w, nnp__model_str(m, m->mem.owner_op[s->row]));
    jw_us(w, "start", start);
    jw_us(w, "end", s->end_ns);
    jw_op_index(w, "start_op_index", nnp__mem_op_at(m, start));
    jw_op_index(w, "end_op_index",
                s->end_ns == NNP_OPEN_END ? SIZE_MAX : nnp__mem_op_at(m, s->end_ns));
    nnp__jw_key(w, "static");
    nnp__jw_bool(w, nnp__mem_is_static(x, start, s->end_ns));
    nnp__jw_obj_end(w);
}

static void write_peak(nnp_jw_t *w, const mem_run_t *x)
{
    const nnp_model_t *m = x->m;
    int64_t t = x->e->ts_ns[x->peak_ev];
    size_t op = nnp__mem_op_at(m, t);
    nnp__jw_key(w, "peak");
    nnp__jw_obj_begin(w);
    jw_us(w, "t", t);
    jw_op_index(w, "op_index", op);
    nnp__jw_key(w, "op");
    nnp__jw_str(w, op == SIZE_MAX ? "" : nnp__model_str(m, m->ops.name[op]));
    nnp__jw_key(w, "allocated");
    nnp__jw_uint(w, x->peak_bytes);
    nnp__jw_key(w, "live_tensors");
    nnp__jw_uint(w, x->live_at_peak);
    nnp__jw_key(w, "breakdown");
    nnp__jw_arr_begin(w);
    for (size_t i = 0; i < x->n_snap; i++)
        write_snap(w, x, &x->snap[i]);
    nnp__jw_arr_end(w);
    nnp__jw_key(w, "others_count");
    nnp__jw_uint(w, x->live_at_peak - x->n_snap);
    nnp__jw_key(w, "others_bytes");
    nnp__jw_uint(w, x->others_bytes);
    nnp__jw_obj_end(w);
}

static void write_details(nnp_jw_t *w, const mem_run_t *x)
{
    nnp__jw_obj_begin(w);
    jw_capacity_bytes(w, x->c->memory_capacity_bytes);
    nnp__jw_key(w, "static_bytes");
    nnp__jw_uint(w, x->static_bytes);
    nnp__jw_key(w, "events");
    nnp__jw_uint(w, x->n);
    write_peak(w, x);
    nnp__jw_key(w, "lines");
    nnp__jw_arr_begin(w);
    for (size_t i = 0; i < x->n_pts; i++) {
        int64_t t = x->e->ts_ns[x->pts[i].ev];
        nnp__jw_obj_begin(w);
        jw_us(w, "t", t);
        size_t op = nnp__mem_op_at(x->m, t);
        jw_op_index(w, "op_index", op);
        nnp__jw_key(w, "op"); /* the op executing then, for the chart's hover */
        nnp__jw_str(w, op == SIZE_MAX ? "" : nnp__model_str(x->m, x->m->ops.name[op]));
        nnp__jw_key(w, "allocated");
        nnp__jw_uint(w, x->pts[i].total);
        nnp__jw_obj_end(w);
    }
    nnp__jw_arr_end(w);
    nnp__jw_obj_end(w);
    nnp__jw_line_end(w);
}

/* MindSpore's five keys (capacity, peak_mem, static_mem in GB = 1024^3 bytes), then ours
 * with units in their names. */
static void write_summary(nnp_jw_t *w, const mem_run_t *x)
{
    char b[NUM_BUF];
    uint64_t cap = x->c->memory_capacity_bytes;
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "capacity");
    if (cap)
        nnp__jw_raw(w, fmt_double(b, sizeof(b), (double)cap / BYTES_PER_GB));
    else
        nnp__jw_null(w);
    nnp__jw_key(w, "allocations");
    nnp__jw_uint(w, x->n_alloc);
    nnp__jw_key(w, "deallocations");
    nnp__jw_uint(w, x->n_free);
    nnp__jw_key(w, "peak_mem");
    nnp__jw_raw(w, fmt_double(b, sizeof(b), (double)x->peak_bytes / BYTES_PER_GB));
    nnp__jw_key(w, "static_mem");
    nnp__jw_raw(w, fmt_double(b, sizeof(b), (double)x->static_bytes / BYTES_PER_GB));
    jw_capacity_bytes(w, cap);
    nnp__jw_key(w, "peak_bytes");
    nnp__jw_uint(w, x->peak_bytes);
    nnp__jw_key(w, "static_bytes");
    nnp__jw_uint(w, x->static_bytes);
    nnp__jw_key(w, "allocations_outside_window");
    nnp__jw_uint(w, x->n_outside);
    nnp__jw_key(w, "never_freed");
    nnp__jw_uint(w, x->n_never_freed);
    nnp__jw_obj_end(w);
    nnp__jw_line_end(w);
}

/* Writes one JSON file; NNP_OK or the first error. The file is committed by the caller. */
static int json_write(const mem_run_t *x, const char *prefix, nnp_outfile_t *f, bool *is_open,
                      void (*body)(nnp_jw_t *, const mem_run_t *))
{
    nnp_jw_t w;
    int rc = json_open(x->c, prefix, f, &w, is_open);
    if (rc == NNP_OK) {
        body(&w, x);
        rc = nnp__jw_flush(&w);
    }
    if (*is_open)
        nnp__jw_fini(&w);
    return rc;
}

int nnp__memory_json_write(const mem_run_t *x, nnp_outfile_t jf[2], bool is_open[2])
{
    int rc = json_write(x, "memory_usage_summary", &jf[0], &is_open[0], write_summary);
    if (rc == NNP_OK)
        rc = json_write(x, "memory_usage_details", &jf[1], &is_open[1], write_details);
    return rc;
}
