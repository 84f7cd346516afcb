/* cl_sink.c - what the readers of one rank (cl_rank.c, cl_mindspore.c, cl_torch_npu.c,
 * cl_mpa.c) hand over: step rows, communication records, links and the groups the rank
 * used, appended to the rank's buffers (spilled by the driver when the rank is done) and
 * summed into its fixed-size summary. One sink belongs to one thread at a time. */
#include <ctype.h>
#include <string.h>

#include "cluster/cluster.h"

void nnp__cl_add_step(nnp_cl_sink_t *k, const nnp_cl_step_rec_t *r)
{
    nnp_cl_rank_t *s = k->sum;
    nnp__cl_buf_add(&k->steps, r, sizeof(*r));
    if (s->n_steps == 0)
        s->tot_known = r->known;
    else
        s->tot_known &= r->known;
    for (int c = 0; c < NNP_CL_STEP_NV; c++)
        if (r->known & NNP_CL_BIT(c))
            s->tot_ns[c] += r->v[c];
    s->n_steps++;
}

void nnp__cl_add_comm(nnp_cl_sink_t *k, const nnp_cl_comm_rec_t *r, const nnp_cl_bw_t *bw,
                      const nnp_cl_pkt_t *dist)
{
    nnp_cl_comm_rec_t h = *r;
    uint32_t n_bw = r->n_bw > NNP_CL_MAX_BW ? NNP_CL_MAX_BW : r->n_bw;
    uint32_t n_dist = r->n_dist > NNP_CL_MAX_DIST ? NNP_CL_MAX_DIST : r->n_dist;
    h.n_bw = n_bw;
    h.n_dist = n_dist;
    h.len = (uint32_t)(sizeof(h) + n_bw * sizeof(nnp_cl_bw_t) + n_dist * sizeof(nnp_cl_pkt_t));
    nnp__cl_buf_add(&k->comms, &h, sizeof(h));
    if (n_bw)
        nnp__cl_buf_add(&k->comms, bw, n_bw * sizeof(*bw));
    if (n_dist)
        nnp__cl_buf_add(&k->comms, dist, n_dist * sizeof(*dist));
    k->sum->n_comm_ops++;
    k->sum->comm_elapse_ns += r->elapse_ns;
    if (r->flags & (NNP_CL_COMM_HAS_WAIT | NNP_CL_COMM_GIVEN))
        k->sum->comm_wait_ns += r->wait_ns;
}

void nnp__cl_add_link(nnp_cl_sink_t *k, const nnp_cl_link_rec_t *r)
{
    nnp__cl_buf_add(&k->links, r, sizeof(*r));
    k->sum->n_links++;
}

void nnp__cl_note_group(nnp_cl_sink_t *k, uint32_t group, bool is_p2p)
{
    nnp_cl_rank_t *s = k->sum;
    for (uint32_t i = 0; i < s->n_groups; i++)
        if (s->groups[i].name == group && s->groups[i].is_p2p == (uint32_t)is_p2p)
            return;
    if (s->n_groups == NNP_CL_RANK_GROUPS) {
        if (s->n_groups_dropped++ == 0)
            NNP_LOG_W("rank %d: more than %d communication groups: the others are left out of "
                      "communication_group.json",
                      s->rank, NNP_CL_RANK_GROUPS);
        return;
    }
    s->groups[s->n_groups].name = group;
    s->groups[s->n_groups].is_p2p = is_p2p;
    s->n_groups++;
}

/* Case-insensitive substring. */
static bool has(const char *s, const char *needle)
{
    size_t n = strlen(needle);
    for (; *s; s++) {
        size_t i = 0;
        while (i < n && s[i] && tolower((unsigned char)s[i]) == needle[i])
            i++;
        if (i == n)
            return true;
    }
    return false;
}

bool nnp__cl_is_p2p_name(const char *name)
{
    /* hcom_send / hcom_receive (HCCL), MPI_Send / MPI_Recv / MPI_Isend..., nccl Send/Recv,
     * MindSpore's Send-op / Receive-op. "sendrecv" and "recv" both count. */
    return has(name, "send") || has(name, "recv") || has(name, "receive");
}
