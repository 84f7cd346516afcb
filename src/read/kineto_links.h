/* kineto_links.h - the autograd links of a PyTorch trace's forward ops, for the Kineto
 * importer (import_kineto.c), from Kineto's "fwdbwd" flows (kineto_links.c). Private to
 * src/read/. */
#ifndef NNP_KINETO_LINKS_H
#define NNP_KINETO_LINKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

/* One end of a "fwdbwd" flow: "s" on a forward op, "f" on its backward op. */
typedef struct nnp_kin_flow {
    uint64_t id;
    uint32_t thread; /* model thread index */
    bool is_end;     /* "f" */
    int64_t ts_ns;
} nnp_kin_flow_t;

/* The fwdbwd flows of one trace file (owned array). */
typedef struct nnp_kin_links {
    nnp_kin_flow_t *v;
    size_t n, cap;
} nnp_kin_links_t;

/* Keeps one flow end. NNP_OK or NNP_ENOMEM. */
int nnp__kin_flow_add(nnp_kin_links_t *l, uint64_t id, uint32_t thread, bool is_end, int64_t ts_ns);

/* A forward op's event carries its OS thread and "Fwd thread id" 0, while its backward op
 * names the forward op's thread by RecordFunction's thread id ("Fwd thread id"): a flow
 * from a forward op to its backward op tells that the forward op's OS thread is that id,
 * which then becomes the seq_thread of every forward op of the thread from first_op on, as
 * in our own captures (model.h), so ops link by (sequence number, thread) as torch links
 * them (op_stacks.c). NNP_OK or NNP_ENOMEM. */
int nnp__kin_links_resolve(nnp_kin_links_t *l, nnp_model_t *m, size_t first_op);

void nnp__kin_links_fini(nnp_kin_links_t *l);

#endif /* NNP_KINETO_LINKS_H */
