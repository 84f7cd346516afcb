/* cmd_dump.c - `nnprof dump DIR`: every raw record as one JSON object per line, fields
 * named as in docs/FORMAT.md, then a summary line (kind "summary") with what was read,
 * recovered and found damaged. Damage is also listed on stderr. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "read/raw_reader.h"
#include "util/json_writer.h"
#include "util/util.h"

/* Raw directories one dump call accepts (a 64-rank job on one host fits easily). */
#define MAX_DIRS 4096
/* The sentence about lost events (nnp__raw_loss_text) is well under this. */
#define LOSS_TEXT_CAP 512

typedef struct dump_ctx {
    nnp_jw_t jw;
    const nnp_raw_t *raw;
    bool summary_only;
} dump_ctx_t;

static void key_str(dump_ctx_t *c, const char *key, uint32_t id)
{
    const char *s = nnp__raw_str(c->raw, id);
    nnp__jw_key(&c->jw, key);
    if (s)
        nnp__jw_str(&c->jw, s);
    else
        nnp__jw_null(&c->jw); /* id not in the meta file (damaged or cut) */
}

static void key_u(dump_ctx_t *c, const char *key, uint64_t v)
{
    nnp__jw_key(&c->jw, key);
    nnp__jw_uint(&c->jw, v);
}

static void key_i(dump_ctx_t *c, const char *key, int64_t v)
{
    nnp__jw_key(&c->jw, key);
    nnp__jw_int(&c->jw, v);
}

static void host_fields(dump_ctx_t *c, const nnp_rec_t *r)
{
    key_str(c, "event", r->name);
    key_str(c, "module", (uint32_t)r->a);
    key_str(c, "stage", (uint32_t)(r->a >> 32));
    key_str(c, "custom_info", (uint32_t)r->b);
    key_u(c, "level", r->b >> 32);
}

static void kind_fields(dump_ctx_t *c, const nnp_raw_event_t *ev)
{
    const nnp_rec_t *r = ev->slots;
    switch (ev->kind) {
    case NNP_REC_RANGE_BEGIN:
    case NNP_REC_RANGE_END:
    case NNP_REC_INSTANT:
        host_fields(c, r);
        break;
    case NNP_REC_HOST_MEM:
        key_u(c, "bytes", r->a);
        break;
    case NNP_REC_OP: {
        const nnp_rec_op_ext_t *x = (const nnp_rec_op_ext_t *)&r[1];
        key_u(c, "end_ns", ev->end_ns);
        key_str(c, "name", r->name);
        key_str(c, "type", x->type);
        key_u(c, "graph_id", x->graph_id);
        key_u(c, "stream_id", x->stream_id);
        key_u(c, "correlation_id", r->b);
        key_str(c, "input_shapes", x->input_shapes);
        key_str(c, "input_dtypes", x->input_dtypes);
        if (r->flags & NNP_REC_F_FLOPS) {
            const nnp_rec_flops_t *f = (const nnp_rec_flops_t *)&r[2];
            key_u(c, "flops_matrix", f->matrix);
            key_u(c, "flops_vector", f->vector);
            if (f->stack)
                key_str(c, "stack", f->stack);
        }
        if (r->flags & NNP_REC_F_SEQ) {
            key_i(c, "sequence_nr", x->sequence_nr);
            key_u(c, "seq_thread", x->seq_thread);
            key_u(c, "is_backward", (r->flags & NNP_REC_F_BACKWARD) ? 1 : 0);
        } else if (r->flags & NNP_REC_F_BACKWARD) {
            key_u(c, "is_backward", 1);
        }
        break;
    }
    case NNP_REC_KERNEL: {
        const nnp_rec_kernel_ext_t *x = (const nnp_rec_kernel_ext_t *)&r[1];
        key_u(c, "end_ns", ev->end_ns);
        key_str(c, "name", r->name);
        key_str(c, "type", x->type);
        key_u(c, "device_id", x->device_id);
        key_u(c, "stream_id", x->stream_id);
        key_u(c, "correlation_id", r->b);
        key_u(c, "launch_id", x->launch);
        if (r->flags & NNP_REC_F_LAUNCH) {
            const nnp_rec_launch_t *l = (const nnp_rec_launch_t *)&r[2];
            key_u(c, "grid_x", l->grid[0]);
            key_u(c, "grid_y", l->grid[1]);
            key_u(c, "grid_z", l->grid[2]);
            key_u(c, "block_x", l->block[0]);
            key_u(c, "block_y", l->block[1]);
            key_u(c, "block_z", l->block[2]);
            key_u(c, "registers_per_thread", l->registers_per_thread);
            key_u(c, "static_shared_bytes", l->static_shared_bytes);
            key_u(c, "dynamic_shared_bytes", l->dynamic_shared_bytes);
        } else if (r->flags & NNP_REC_F_COPY) {
            const nnp_rec_copy_t *cp = (const nnp_rec_copy_t *)&r[2];
            key_u(c, "bytes", cp->bytes);
            nnp__jw_key(&c->jw, "copy_kind");
            nnp__jw_str(&c->jw, nnp_copy_kind_name((nnp_copy_kind_t)cp->copy_kind));
            nnp__jw_key(&c->jw, "src_kind");
            nnp__jw_str(&c->jw, nnp_memory_kind_name((nnp_memory_kind_t)cp->src_kind));
            nnp__jw_key(&c->jw, "dst_kind");
            nnp__jw_str(&c->jw, nnp_memory_kind_name((nnp_memory_kind_t)cp->dst_kind));
            key_u(c, "src_device", cp->src_device);
            key_u(c, "dst_device", cp->dst_device);
            key_u(c, "value", cp->value);
        }
        break;
    }
    case NNP_REC_CALL: {
        const nnp_rec_call_ext_t *x = (const nnp_rec_call_ext_t *)&r[1];
        key_u(c, "end_ns", ev->end_ns);
        key_str(c, "name", r->name);
        nnp__jw_key(&c->jw, "call_kind");
        nnp__jw_str(&c->jw, nnp_call_kind_name((nnp_call_kind_t)x->kind));
        key_str(c, "domain", x->domain);
        key_u(c, "correlation_id", r->b);
        key_u(c, "thread_id", x->tid);
        key_u(c, "stream_id", x->stream_id);
        key_i(c, "status", x->status);
        key_u(c, "launch_id", x->launch);
        break;
    }
    case NNP_REC_STEP_BEGIN:
    case NNP_REC_STEP_END:
        key_u(c, "step_id", r->a);
        key_u(c, "graph_id", r->b);
        break;
    case NNP_REC_EPOCH_BEGIN:
    case NNP_REC_EPOCH_END:
        key_u(c, "epoch_id", r->a);
        break;
    case NNP_REC_FP_START:
    case NNP_REC_BP_END:
        key_u(c, "step_id", r->a);
        break;
    case NNP_REC_MEM_ALLOC: {
        const nnp_rec_alloc_ext_t *x = (const nnp_rec_alloc_ext_t *)&r[1];
        key_u(c, "address", r->a);
        key_u(c, "bytes", r->b);
        key_str(c, "tensor", r->name);
        key_str(c, "owner_op", x->owner_op);
        key_u(c, "device_id", x->device_id);
        break;
    }
    case NNP_REC_MEM_FREE:
        key_u(c, "address", r->a);
        key_u(c, "bytes", r->b);
        break;
    case NNP_REC_COMM: {
        const nnp_rec_comm_ext_t *x = (const nnp_rec_comm_ext_t *)&r[1];
        key_u(c, "end_ns", ev->end_ns);
        key_str(c, "name", r->name);
        nnp__jw_key(&c->jw, "comm_kind");
        nnp__jw_str(&c->jw, nnp_comm_kind_name((nnp_comm_kind_t)x->kind));
        key_str(c, "group", x->group);
        key_u(c, "bytes", r->b);
        key_i(c, "peer", x->peer);
        key_u(c, "stream_id", x->stream_id);
        if (x->launch) /* device kernels only: host collectives' lines stay as they were */
            key_u(c, "launch_id", x->launch);
        if (ev->n_slots > 2) {
            const nnp_rec_comm_detail_t *d = (const nnp_rec_comm_detail_t *)&r[2];
            key_u(c, "count", d->count);
            key_str(c, "datatype", d->datatype);
            if (d->has & NNP_REC_COMM_HAS_TAG)
                key_i(c, "tag", d->tag);
            if (d->has & NNP_REC_COMM_HAS_WAIT)
                key_u(c, "wait_ns", d->wait_ns);
        }
        break;
    }
    case NNP_REC_COMM_GROUP:
        key_str(c, "group", r->name);
        key_str(c, "members", (uint32_t)r->a);
        key_u(c, "size", r->a >> 32);
        key_i(c, "my_index", (int64_t)r->b);
        break;
    case NNP_REC_PIPE_OP: {
        const nnp_rec_pipe_ext_t *x = (const nnp_rec_pipe_ext_t *)&r[1];
        key_i(c, "op_id", (int64_t)r->a);
        key_str(c, "op_type", r->name);
        key_u(c, "num_workers", x->num_workers);
        key_i(c, "parent_id", (int64_t)r->b);
        break;
    }
    case NNP_REC_QUEUE:
        key_i(c, "op_id", (int64_t)r->a);
        /* fall through */
    case NNP_REC_DEVICE_QUEUE:
        key_u(c, "size", (uint32_t)r->b);
        key_u(c, "capacity", r->b >> 32);
        break;
    case NNP_REC_MARK:
        key_str(c, "message", r->name);
        break;
    case NNP_REC_MARK_START:
        key_str(c, "message", r->name);
        key_u(c, "range_id", r->a);
        break;
    case NNP_REC_MARK_STOP:
        key_u(c, "range_id", r->a);
        break;
    case NNP_REC_COUNTER: {
        double v;
        memcpy(&v, &r->a, sizeof(v));
        key_str(c, "name", r->name);
        nnp__jw_key(&c->jw, "value");
        nnp__jw_double(&c->jw, v);
        break;
    }
    case NNP_REC_SYS_CPU: {
        const nnp_rec_sys_cpu_t *s = (const nnp_rec_sys_cpu_t *)r;
        key_u(c, "ncpu", s->ncpu);
        key_u(c, "user", s->user);
        key_u(c, "nice", s->nice);
        key_u(c, "sys", s->sys);
        key_u(c, "idle", s->idle);
        key_u(c, "iowait", s->iowait);
        key_u(c, "irq", s->irq); /* irq + softirq */
        key_u(c, "steal", s->steal);
        key_u(c, "ctxt", s->ctxt);
        key_u(c, "procs_running", s->procs_running);
        key_u(c, "procs_blocked", s->procs_blocked);
        break;
    }
    case NNP_REC_PROC_CPU:
        key_u(c, "utime", r->a);
        key_u(c, "stime", r->b);
        break;
    case NNP_REC_THREAD_CPU:
        key_str(c, "thread", r->name);
        key_u(c, "thread_tid", r->b);
        key_u(c, "utime", (uint32_t)r->a);
        key_u(c, "stime", r->a >> 32);
        break;
    case NNP_REC_PROC_MEM:
        key_u(c, "rss_bytes", r->a);
        key_u(c, "vm_bytes", r->b);
        break;
    default:
        break;
    }
}

static int on_event(void *user, const nnp_raw_event_t *ev)
{
    dump_ctx_t *c = user;
    if (c->summary_only)
        return 0;
    nnp__jw_obj_begin(&c->jw);
    nnp__jw_key(&c->jw, "kind");
    nnp__jw_str(&c->jw, nnp__rec_kind_name(ev->kind));
    key_u(c, "tid", ev->tid);
    key_u(c, "ts_ns", ev->ts_ns);
    kind_fields(c, ev);
    nnp__jw_obj_end(&c->jw);
    nnp__jw_line_end(&c->jw);
    return c->jw.err;
}

static void summary(dump_ctx_t *c, const char *dir, const nnp_raw_report_t *rep)
{
    nnp__jw_obj_begin(&c->jw);
    nnp__jw_key(&c->jw, "kind");
    nnp__jw_str(&c->jw, "summary");
    nnp__jw_key(&c->jw, "dir");
    nnp__jw_str(&c->jw, dir);
    key_u(c, "records", rep->records);
    key_u(c, "data_files", rep->data_files);
    key_u(c, "chunks_ok", rep->chunks_ok);
    key_u(c, "chunks_corrupt", rep->chunks_corrupt);
    key_u(c, "chunks_truncated", rep->chunks_truncated);
    key_u(c, "chunks_duplicate", rep->chunks_duplicate);
    key_u(c, "format_version", rep->format_version);
    /* How the intact chunks were stored (raw_format.h codecs), e.g. {"zstd":3,"pack":40}. */
    nnp__jw_key(&c->jw, "codecs");
    nnp__jw_obj_begin(&c->jw);
    for (unsigned k = 0; k < NNP_CODEC_COUNT; k++)
        if (rep->chunks_by_codec[k] > 0)
            key_u(c, nnp__codec_name(k), rep->chunks_by_codec[k]);
    nnp__jw_obj_end(&c->jw);
    key_u(c, "bytes_skipped", rep->bytes_skipped);
    key_u(c, "events_lost", rep->events_lost);
    key_u(c, "events_lost_buffer", rep->events_lost_buffer);
    key_u(c, "events_lost_write", rep->events_lost_write);
    key_u(c, "write_errors", rep->write_errors);
    nnp__jw_key(&c->jw, "disk_full");
    nnp__jw_bool(&c->jw, rep->disk_full);
    key_u(c, "data_files_aged_out", rep->data_files_aged);
    key_u(c, "bytes_aged_out", rep->bytes_aged);
    key_u(c, "data_files_missing", rep->data_files_missing);
    nnp__jw_key(&c->jw, "damage");
    nnp__jw_arr_begin(&c->jw);
    for (uint32_t i = 0; i < rep->n_damage && i < NNP_RAW_MAX_DAMAGE; i++) {
        const nnp_raw_damage_t *d = &rep->damage[i];
        nnp__jw_obj_begin(&c->jw);
        nnp__jw_key(&c->jw, "file");
        nnp__jw_str(&c->jw, d->file);
        key_u(c, "offset", d->offset);
        nnp__jw_key(&c->jw, "error");
        nnp__jw_str(&c->jw, d->msg);
        nnp__jw_obj_end(&c->jw);
    }
    nnp__jw_arr_end(&c->jw);
    nnp__jw_obj_end(&c->jw);
    nnp__jw_line_end(&c->jw);
}

static void help(FILE *f)
{
    fprintf(f, "usage: nnprof dump [--summary-only] DIR\n\n"
               "Prints every record of the raw data under DIR as one JSON object per line,\n"
               "then one line {\"kind\":\"summary\",...} per raw directory with the chunks\n"
               "read (by codec), corrupted, truncated and duplicate (skipped), the raw\n"
               "format version, events lost and files aged out.\n"
               "DIR is a raw directory (PROF_*), the profiler/ directory holding them, or\n"
               "the output_path above it. Damage is also listed on stderr.\n\n"
               "  --summary-only   print only the summary lines\n\n"
               "exit: 0 read (even with damage, which the summary names), 1 nothing readable,\n"
               "      2 usage error\n");
}

int nnp_cmd_dump(int argc, char **argv)
{
    static const struct option longopts[] = {{"summary-only", no_argument, NULL, 's'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    dump_ctx_t c;
    char **dirs;
    int opt, n, status = NNP_EXIT_OK;

    memset(&c, 0, sizeof(c));
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (opt == 's') {
            c.summary_only = true;
        } else if (opt == 'h') {
            help(stdout);
            return NNP_EXIT_OK;
        } else {
            help(stderr);
            return NNP_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        nnp_cli_error("dump", "expected exactly one DIR argument");
        help(stderr);
        return NNP_EXIT_USAGE;
    }
    dirs = calloc(MAX_DIRS, sizeof(char *));
    if (!dirs)
        return NNP_EXIT_FAIL;
    n = nnp_cli_find_raw_dirs(argv[optind], dirs, MAX_DIRS);
    if (n <= 0) {
        nnp_cli_error(argv[optind], "no nnprof raw data found (expected a PROF_* directory "
                                    "with meta.nnp, or a directory holding them)");
        free(dirs);
        return NNP_EXIT_FAIL;
    }
    if (nnp__jw_init(&c.jw, STDOUT_FILENO, false, 0) != NNP_OK) {
        free(dirs);
        return NNP_EXIT_FAIL;
    }
    for (int i = 0; i < n; i++) {
        nnp_raw_t *raw;
        const nnp_raw_report_t *rep;
        int rc = nnp__raw_open(dirs[i], &raw);
        if (rc != NNP_OK) {
            nnp_cli_error(dirs[i], "%s", nnp_last_error());
            status = NNP_EXIT_FAIL;
            continue;
        }
        c.raw = raw;
        rc = nnp__raw_read(raw, on_event, &c);
        rep = nnp__raw_report(raw);
        summary(&c, dirs[i], rep);
        for (uint32_t k = 0; k < rep->n_damage && k < NNP_RAW_MAX_DAMAGE; k++)
            nnp_cli_error(dirs[i], "%s at offset %llu: %s", rep->damage[k].file,
                          (unsigned long long)rep->damage[k].offset, rep->damage[k].msg);
        {
            char lost[LOSS_TEXT_CAP];
            if (nnp__raw_loss_text(rep, lost, sizeof(lost)))
                nnp_cli_error(dirs[i], "%s", lost);
        }
        if (rc != NNP_OK) {
            nnp_cli_error(dirs[i], "stopped: %s", nnp_strerror(rc));
            status = NNP_EXIT_FAIL;
        }
        nnp__raw_close(raw);
    }
    if (nnp__jw_flush(&c.jw) != NNP_OK)
        status = NNP_EXIT_FAIL;
    nnp__jw_fini(&c.jw);
    for (int i = 0; i < n; i++)
        free(dirs[i]);
    free(dirs);
    return status;
}
