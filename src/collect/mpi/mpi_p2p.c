/* mpi_p2p.c - point-to-point wrappers (MPI_Send and its modes, MPI_Recv, MPI_Sendrecv,
 * their non-blocking forms) and the completion calls (MPI_Wait*, MPI_Test*,
 * MPI_Request_free), plus the recording helpers every wrapper uses. A recorded op carries
 * bytes, count, datatype, communicator group, the peer's MPI_COMM_WORLD rank and the tag;
 * receives take source, tag and size from the status (a status the caller ignores is
 * replaced by a local one). The wait part: the time in the completion call of a
 * non-blocking op, and for MPI_Recv the time until a matching message arrived (a matched
 * probe, MPI_Mprobe + MPI_Mrecv, which MPI-3 defines to behave as MPI_Recv; off with
 * NNPROF_MPI_RECV_WAIT=0). docs/MPI.md lists what each call records. */
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

/* Requests of one completion call handled on the stack; larger arrays take one malloc. */
#define STACK_REQUESTS 64

/* ---- recording helpers ---- */

static void fill(nnp_comm_t *c, const nnp_mpi_rec_t *r)
{
    nnp_mpi_comm_t *ci = nnp__mpi_comm(r->comm);
    nnp_str_t type = 0;
    int size = 0;

    memset(c, 0, sizeof(*c));
    c->name = nnp__mpi_names[r->op];
    c->kind = r->kind;
    c->peer = -1;
    if (ci) {
        nnp__mpi_describe(ci);
        c->group = ci->group;
        c->peer = nnp__mpi_global(ci, r->peer);
    }
    nnp__mpi_type(r->type, &type, &size);
    c->datatype = type;
    c->count = r->count;
    c->size_bytes = r->count * (uint64_t)(size > 0 ? size : 0);
    c->tag = r->tag;
    c->has_tag = r->has_tag;
}

void nnp__mpi_record_since(const nnp_mpi_rec_t *r, uint64_t start_ticks)
{
    nnp_comm_t c;
    fill(&c, r);
    nnp_comm_since(&c, start_ticks);
}

void nnp__mpi_record_at(const nnp_mpi_rec_t *r, uint64_t start_ns, uint64_t end_ns, bool has_wait,
                        uint64_t wait_ns)
{
    nnp_comm_t c;
    fill(&c, r);
    c.has_wait = has_wait;
    c.wait_ns = wait_ns;
    nnp_comm_at(&c, start_ns, end_ns);
}

void nnp__mpi_started(int rc, const MPI_Request *req, const nnp_mpi_rec_t *r, uint64_t start_ns)
{
    if (rc == MPI_SUCCESS)
        nnp__mpi_pending_add(*req, r, start_ns);
}

uint64_t nnp__mpi_sum(const int *counts, int n)
{
    uint64_t s = 0;
    for (int i = 0; counts && i < n; i++)
        s += counts[i] > 0 ? (uint64_t)counts[i] : 0;
    return s;
}

int nnp__mpi_peers(MPI_Comm comm)
{
    const nnp_mpi_comm_t *c = nnp__mpi_comm(comm);
    return c && c->size > 0 ? c->size : 1;
}

bool nnp__mpi_is_root(MPI_Comm comm, int root)
{
    const nnp_mpi_comm_t *c;
    if (root == MPI_ROOT)
        return true;
    c = nnp__mpi_comm(comm);
    return c && !c->is_inter && c->my_index == root;
}

static nnp_mpi_rec_t rec(nnp_mpi_op_t op, nnp_comm_kind_t kind, MPI_Comm comm, MPI_Datatype type,
                         uint64_t count, int peer, int tag)
{
    nnp_mpi_rec_t r = {op, kind, comm, type, count, peer, tag, true};
    return r;
}

/* ---- blocking sends ---- */

#define SEND_WRAPPER(fn, pfn, op)                                                                  \
    int fn(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)          \
    {                                                                                              \
        uint64_t t0;                                                                               \
        int rc;                                                                                    \
        nnp_mpi_rec_t r;                                                                           \
        if (!nnp__mpi_active())                                                                    \
            return pfn(buf, count, dt, dest, tag, comm);                                           \
        t0 = nnp_now();                                                                            \
        nnp__mpi_depth++;                                                                          \
        rc = pfn(buf, count, dt, dest, tag, comm);                                                 \
        nnp__mpi_depth--;                                                                          \
        if (rc == MPI_SUCCESS) {                                                                   \
            r = rec(op, NNP_COMM_SEND, comm, dt, (uint64_t)count, dest, tag);                      \
            nnp__mpi_record_since(&r, t0);                                                         \
        }                                                                                          \
        return rc;                                                                                 \
    }

SEND_WRAPPER(MPI_Send, PMPI_Send, NNP_MPI_OP_SEND)
SEND_WRAPPER(MPI_Ssend, PMPI_Ssend, NNP_MPI_OP_SSEND)
SEND_WRAPPER(MPI_Bsend, PMPI_Bsend, NNP_MPI_OP_BSEND)
SEND_WRAPPER(MPI_Rsend, PMPI_Rsend, NNP_MPI_OP_RSEND)

/* ---- blocking receive ---- */

static int recv_wait_mode = -1; /* -1 not read yet, 0 off, 1 on */

static bool recv_wait_on(void)
{
    if (NNP_MPI_UNLIKELY(recv_wait_mode < 0)) {
        const char *v = getenv("NNPROF_MPI_RECV_WAIT");
        recv_wait_mode = !(v && strcmp(v, "0") == 0);
    }
    return recv_wait_mode == 1;
}

/* Fills r's peer, tag and count from a receive's status. */
static void from_status(nnp_mpi_rec_t *r, const MPI_Status *st)
{
    int bytes = 0, size = 0;
    nnp_str_t name;
    r->peer = st->MPI_SOURCE;
    r->tag = st->MPI_TAG;
    nnp__mpi_type(r->type, &name, &size);
    if (size > 0 && PMPI_Get_count(st, MPI_BYTE, &bytes) == MPI_SUCCESS && bytes != MPI_UNDEFINED)
        r->count = (uint64_t)bytes / (uint64_t)size;
    else
        r->count = 0;
}

int MPI_Recv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    MPI_Status local = {0}, *st = status == MPI_STATUS_IGNORE ? &local : status;
    uint64_t t0, t1, t2;
    nnp_mpi_rec_t r;
    bool has_wait = false;
    int rc;

    if (!nnp__mpi_active())
        return PMPI_Recv(buf, count, dt, source, tag, comm, status);
    nnp__mpi_depth++;
    t0 = nnp_clock_ns();
    if (recv_wait_on() && source != MPI_PROC_NULL) {
        MPI_Message msg;
        rc = PMPI_Mprobe(source, tag, comm, &msg, st);
        t1 = nnp_clock_ns();
        if (rc == MPI_SUCCESS)
            rc = PMPI_Mrecv(buf, count, dt, &msg, st);
        has_wait = true;
    } else {
        rc = PMPI_Recv(buf, count, dt, source, tag, comm, st);
        t1 = t0;
    }
    t2 = nnp_clock_ns();
    nnp__mpi_depth--;
    if (rc == MPI_SUCCESS) {
        r = rec(NNP_MPI_OP_RECV, NNP_COMM_RECV, comm, dt, 0, source, tag);
        from_status(&r, st);
        nnp__mpi_record_at(&r, t0, t2, has_wait, t1 - t0);
    }
    return rc;
}

/* ---- send-receive: one send and one receive record over the same time ---- */

static void sendrecv_done(nnp_mpi_op_t op, MPI_Comm comm, MPI_Datatype stype, int scount, int dest,
                          int stag, MPI_Datatype rtype, const MPI_Status *st, uint64_t t0,
                          uint64_t t1)
{
    nnp_mpi_rec_t s = rec(op, NNP_COMM_SEND, comm, stype, (uint64_t)scount, dest, stag);
    nnp_mpi_rec_t r = rec(op, NNP_COMM_RECV, comm, rtype, 0, -1, 0);
    from_status(&r, st);
    nnp__mpi_record_at(&s, t0, t1, false, 0);
    nnp__mpi_record_at(&r, t0, t1, false, 0);
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status *status)
{
    MPI_Status local = {0}, *st = status == MPI_STATUS_IGNORE ? &local : status;
    uint64_t t0;
    int rc;
    if (!nnp__mpi_active())
        return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                             recvtype, source, recvtag, comm, status);
    t0 = nnp_clock_ns();
    nnp__mpi_depth++;
    rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                       source, recvtag, comm, st);
    nnp__mpi_depth--;
    if (rc == MPI_SUCCESS)
        sendrecv_done(NNP_MPI_OP_SENDRECV, comm, sendtype, sendcount, dest, sendtag, recvtype, st,
                      t0, nnp_clock_ns());
    return rc;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int sendtag, int source,
                         int recvtag, MPI_Comm comm, MPI_Status *status)
{
    MPI_Status local = {0}, *st = status == MPI_STATUS_IGNORE ? &local : status;
    uint64_t t0;
    int rc;
    if (!nnp__mpi_active())
        return PMPI_Sendrecv_replace(buf, count, dt, dest, sendtag, source, recvtag, comm, status);
    t0 = nnp_clock_ns();
    nnp__mpi_depth++;
    rc = PMPI_Sendrecv_replace(buf, count, dt, dest, sendtag, source, recvtag, comm, st);
    nnp__mpi_depth--;
    if (rc == MPI_SUCCESS)
        sendrecv_done(NNP_MPI_OP_SENDRECV_REPLACE, comm, dt, count, dest, sendtag, dt, st, t0,
                      nnp_clock_ns());
    return rc;
}

/* ---- non-blocking sends and receive ---- */

#define ISEND_WRAPPER(fn, pfn, op)                                                                 \
    int fn(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,          \
           MPI_Request *req)                                                                       \
    {                                                                                              \
        uint64_t t0;                                                                               \
        int rc;                                                                                    \
        nnp_mpi_rec_t r;                                                                           \
        if (!nnp__mpi_active())                                                                    \
            return pfn(buf, count, dt, dest, tag, comm, req);                                      \
        t0 = nnp_clock_ns();                                                                       \
        nnp__mpi_depth++;                                                                          \
        rc = pfn(buf, count, dt, dest, tag, comm, req);                                            \
        nnp__mpi_depth--;                                                                          \
        r = rec(op, NNP_COMM_SEND, comm, dt, (uint64_t)count, dest, tag);                          \
        nnp__mpi_started(rc, req, &r, t0);                                                         \
        return rc;                                                                                 \
    }

ISEND_WRAPPER(MPI_Isend, PMPI_Isend, NNP_MPI_OP_ISEND)
ISEND_WRAPPER(MPI_Issend, PMPI_Issend, NNP_MPI_OP_ISSEND)
ISEND_WRAPPER(MPI_Ibsend, PMPI_Ibsend, NNP_MPI_OP_IBSEND)
ISEND_WRAPPER(MPI_Irsend, PMPI_Irsend, NNP_MPI_OP_IRSEND)

int MPI_Irecv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    uint64_t t0;
    int rc;
    nnp_mpi_rec_t r;
    if (!nnp__mpi_active())
        return PMPI_Irecv(buf, count, dt, source, tag, comm, req);
    t0 = nnp_clock_ns();
    nnp__mpi_depth++;
    rc = PMPI_Irecv(buf, count, dt, source, tag, comm, req);
    nnp__mpi_depth--;
    r = rec(NNP_MPI_OP_IRECV, NNP_COMM_RECV, comm, dt, (uint64_t)count, source, tag);
    nnp__mpi_started(rc, req, &r, t0);
    return rc;
}

/* ---- completion ---- */

static inline bool tracking(void)
{
    return atomic_load_explicit(&nnp__mpi_pending_live, memory_order_relaxed) != 0 &&
           nnp__mpi_depth == 0;
}

int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
    MPI_Status local = {0}, *st = status == MPI_STATUS_IGNORE ? &local : status;
    uint64_t t0;
    int slot, rc;
    if (!tracking() || (slot = nnp__mpi_pending_find(*req)) < 0)
        return PMPI_Wait(req, status);
    t0 = nnp_clock_ns();
    nnp__mpi_depth++;
    rc = PMPI_Wait(req, st);
    nnp__mpi_depth--;
    if (rc == MPI_SUCCESS) {
        uint64_t t1 = nnp_clock_ns();
        nnp__mpi_pending_done(slot, st, t1, t1 - t0);
    } else {
        nnp__mpi_pending_drop(slot);
    }
    return rc;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
    MPI_Status local = {0}, *st = status == MPI_STATUS_IGNORE ? &local : status;
    uint64_t t0;
    int slot, rc;
    if (!tracking() || (slot = nnp__mpi_pending_find(*req)) < 0)
        return PMPI_Test(req, flag, status);
    t0 = nnp_clock_ns();
    nnp__mpi_depth++;
    rc = PMPI_Test(req, flag, st);
    nnp__mpi_depth--;
    if (rc != MPI_SUCCESS) {
        nnp__mpi_pending_drop(slot);
    } else if (*flag) {
        uint64_t t1 = nnp_clock_ns();
        nnp__mpi_pending_done(slot, st, t1, t1 - t0);
    }
    return rc;
}

/* State of one multi-request completion call: the tracked slot of each request, taken
 * before MPI frees the handles, and statuses when the caller ignores them. */
typedef struct multi {
    int n;
    int stack_slots[STACK_REQUESTS];
    MPI_Status stack_st[STACK_REQUESTS];
    int *slots;
    MPI_Status *st, *user_st;
    bool any;
    uint64_t t0;
} multi_t;

/* Looks the requests up; false when none is tracked (or memory is short): the caller then
 * just forwards the call. */
static bool multi_begin(multi_t *m, int n, const MPI_Request *reqs, MPI_Status *statuses)
{
    m->n = n;
    m->any = false;
    m->slots = n <= STACK_REQUESTS ? m->stack_slots : malloc((size_t)n * sizeof(int));
    m->user_st = statuses;
    m->st = statuses;
    if (!m->slots)
        return false;
    for (int i = 0; i < n; i++) {
        m->slots[i] = nnp__mpi_pending_find(reqs[i]);
        m->any = m->any || m->slots[i] >= 0;
    }
    if (m->any && statuses == MPI_STATUSES_IGNORE) {
        m->st = n <= STACK_REQUESTS ? m->stack_st : malloc((size_t)n * sizeof(MPI_Status));
        m->any = m->st != NULL;
    }
    if (!m->any && m->slots != m->stack_slots)
        free(m->slots);
    m->t0 = nnp_clock_ns();
    return m->any;
}

/* Request i of the call completed (status valid) or, with ok false, failed. */
static void multi_done(multi_t *m, int i, bool ok, uint64_t t1)
{
    if (i < 0 || i >= m->n || m->slots[i] < 0)
        return;
    if (ok)
        nnp__mpi_pending_done(m->slots[i], &m->st[i], t1, t1 - m->t0);
    else
        nnp__mpi_pending_drop(m->slots[i]);
    m->slots[i] = -1;
}

static void multi_end(multi_t *m)
{
    if (m->slots != m->stack_slots)
        free(m->slots);
    if (m->st != m->user_st && m->st != m->stack_st)
        free(m->st);
}

int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    multi_t m;
    int rc;
    if (!tracking() || count <= 0 || !multi_begin(&m, count, reqs, statuses))
        return PMPI_Waitall(count, reqs, statuses);
    nnp__mpi_depth++;
    rc = PMPI_Waitall(count, reqs, m.st);
    nnp__mpi_depth--;
    {
        uint64_t t1 = nnp_clock_ns();
        for (int i = 0; i < count; i++)
            multi_done(&m, i, rc == MPI_SUCCESS, t1);
    }
    multi_end(&m);
    return rc;
}

int MPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    multi_t m;
    int rc;
    if (!tracking() || count <= 0 || !multi_begin(&m, count, reqs, statuses))
        return PMPI_Testall(count, reqs, flag, statuses);
    nnp__mpi_depth++;
    rc = PMPI_Testall(count, reqs, flag, m.st);
    nnp__mpi_depth--;
    if (rc != MPI_SUCCESS || *flag) {
        uint64_t t1 = nnp_clock_ns();
        for (int i = 0; i < count; i++)
            multi_done(&m, i, rc == MPI_SUCCESS, t1);
    }
    multi_end(&m);
    return rc;
}

int MPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
    MPI_Status local = {0}, *st = status == MPI_STATUS_IGNORE ? &local : status;
    multi_t m;
    int rc;
    if (!tracking() || count <= 0 || !multi_begin(&m, count, reqs, MPI_STATUSES_IGNORE))
        return PMPI_Waitany(count, reqs, index, status);
    nnp__mpi_depth++;
    rc = PMPI_Waitany(count, reqs, index, st);
    nnp__mpi_depth--;
    if (rc == MPI_SUCCESS && *index != MPI_UNDEFINED && *index >= 0 && *index < count) {
        m.st[*index] = *st;
        multi_done(&m, *index, true, nnp_clock_ns());
    }
    multi_end(&m);
    return rc;
}

int MPI_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    MPI_Status local = {0}, *st = status == MPI_STATUS_IGNORE ? &local : status;
    multi_t m;
    int rc;
    if (!tracking() || count <= 0 || !multi_begin(&m, count, reqs, MPI_STATUSES_IGNORE))
        return PMPI_Testany(count, reqs, index, flag, status);
    nnp__mpi_depth++;
    rc = PMPI_Testany(count, reqs, index, flag, st);
    nnp__mpi_depth--;
    if (rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED && *index >= 0 && *index < count) {
        m.st[*index] = *st;
        multi_done(&m, *index, true, nnp_clock_ns());
    }
    multi_end(&m);
    return rc;
}

/* Waitsome/Testsome: statuses[k] belongs to request indices[k]. */
static void some_done(multi_t *m, int rc, int outcount, const int *indices)
{
    uint64_t t1 = nnp_clock_ns();
    if (rc != MPI_SUCCESS || outcount == MPI_UNDEFINED)
        return;
    for (int k = 0; k < outcount; k++) {
        int i = indices[k];
        if (i >= 0 && i < m->n && m->slots[i] >= 0) {
            nnp__mpi_pending_done(m->slots[i], &m->st[k], t1, t1 - m->t0);
            m->slots[i] = -1;
        }
    }
}

int MPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    multi_t m;
    int rc;
    if (!tracking() || incount <= 0 || !multi_begin(&m, incount, reqs, statuses))
        return PMPI_Waitsome(incount, reqs, outcount, indices, statuses);
    nnp__mpi_depth++;
    rc = PMPI_Waitsome(incount, reqs, outcount, indices, m.st);
    nnp__mpi_depth--;
    some_done(&m, rc, *outcount, indices);
    multi_end(&m);
    return rc;
}

int MPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    multi_t m;
    int rc;
    if (!tracking() || incount <= 0 || !multi_begin(&m, incount, reqs, statuses))
        return PMPI_Testsome(incount, reqs, outcount, indices, statuses);
    nnp__mpi_depth++;
    rc = PMPI_Testsome(incount, reqs, outcount, indices, m.st);
    nnp__mpi_depth--;
    some_done(&m, rc, *outcount, indices);
    multi_end(&m);
    return rc;
}

int MPI_Request_free(MPI_Request *req)
{
    int slot = tracking() ? nnp__mpi_pending_find(*req) : -1;
    int rc = PMPI_Request_free(req);
    if (slot >= 0 && rc == MPI_SUCCESS)
        nnp__mpi_pending_drop(slot);
    return rc;
}
