/* hccl_raw.c - hccl_raw_{rank}.csv, MindSpore's per-step communication cost file
 * (formats.md 1.10, 2.7), from the model's comm_costs / comm_links tables (the MindSpore
 * importer fills them from hccl_raw or the raw hccl_info traces): one row per step, then the
 * "-" averages row recomputed as MindSpore's hccl_parser.py does (sums in row order divided
 * by the count; links averaged element-wise). Numbers are written as Python prints them
 * (repr) and the JSON cells as json.dumps does, so MindSpore's own file reads back equal. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse.h"
#include "util/csv_writer.h"
#include "util/util.h"

#define FILE_FMT "hccl_raw_%d.csv"
/* Python's repr: at most 17 significant digits; fixed notation for 1e-4 <= |x| < 1e16. */
#define REPR_MAX_DIGITS 17
#define REPR_FIXED_MIN  (-4)
#define REPR_FIXED_MAX  16
#define NUM_TEXT        64
#define SB_INITIAL      256
#define LINK_VALUES     4

/* ---- a growing string ---- */

typedef struct sb {
    char *p;
    size_t len, cap;
    bool oom;
} sb_t;

static void sb_add(sb_t *s, const char *t, size_t n)
{
    if (s->oom)
        return;
    if (s->len + n + 1 > s->cap) {
        size_t nc = s->cap ? s->cap : SB_INITIAL;
        char *np;
        while (nc < s->len + n + 1)
            nc *= 2;
        np = nnp__realloc(s->p, nc);
        if (!np) {
            s->oom = true;
            return;
        }
        s->p = np;
        s->cap = nc;
    }
    memcpy(s->p + s->len, t, n);
    s->len += n;
    s->p[s->len] = '\0';
}

static void sb_str(sb_t *s, const char *t)
{
    sb_add(s, t, strlen(t));
}

/* repr(float) of Python 3: the shortest digits that read back, in its notation. */
static void py_repr(char *out, size_t cap, double v)
{
    char buf[NUM_TEXT], digits[NUM_TEXT];
    int exp = 0, nd = 0;
    const char *e;
    if (!isfinite(v)) {
        snprintf(out, cap, "%s", isnan(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity");
        return;
    }
    if (v == 0) {
        snprintf(out, cap, "%s", signbit(v) ? "-0.0" : "0.0");
        return;
    }
    for (int p = 1; p <= REPR_MAX_DIGITS; p++) {
        snprintf(buf, sizeof(buf), "%.*e", p - 1, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    /* buf: [-]d.ddde[+-]xx -> digits and exponent */
    for (const char *q = buf; *q && *q != 'e'; q++)
        if (*q >= '0' && *q <= '9')
            digits[nd++] = *q;
    digits[nd] = '\0';
    while (nd > 1 && digits[nd - 1] == '0')
        digits[--nd] = '\0';
    e = strchr(buf, 'e');
    exp = e ? (int)strtol(e + 1, NULL, 10) : 0;
    if (exp >= REPR_FIXED_MIN && exp < REPR_FIXED_MAX) {
        size_t k = 0;
        char t[NUM_TEXT * 2];
        if (v < 0)
            t[k++] = '-';
        if (exp < 0) {
            t[k++] = '0';
            t[k++] = '.';
            for (int z = 0; z < -exp - 1; z++)
                t[k++] = '0';
            for (int i = 0; i < nd; i++)
                t[k++] = digits[i];
        } else {
            for (int i = 0; i <= exp; i++)
                t[k++] = i < nd ? digits[i] : '0';
            t[k++] = '.';
            if (nd > exp + 1)
                for (int i = exp + 1; i < nd; i++)
                    t[k++] = digits[i];
            else
                t[k++] = '0';
        }
        t[k] = '\0';
        snprintf(out, cap, "%s", t);
        return;
    }
    {
        char mant[NUM_TEXT + 4];
        size_t k = 0;
        if (v < 0)
            mant[k++] = '-';
        mant[k++] = digits[0];
        if (nd > 1) {
            mant[k++] = '.';
            for (int i = 1; i < nd; i++)
                mant[k++] = digits[i];
        }
        mant[k] = '\0';
        snprintf(out, cap, "%se%c%02d", mant, exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    }
}

static void sb_num(sb_t *s, double v)
{
    char b[NUM_TEXT];
    py_repr(b, sizeof(b), v);
    sb_str(s, b);
}

/* json.dumps of a string: the names here are plain ASCII; quote and backslash escaped. */
static void sb_json_str(sb_t *s, const char *t)
{
    sb_add(s, "\"", 1);
    for (; *t; t++) {
        if (*t == '"' || *t == '\\')
            sb_add(s, "\\", 1);
        sb_add(s, t, 1);
    }
    sb_add(s, "\"", 1);
}

/* ---- the tables ---- */

/* One link's values: 3 (SDMA) or 4 (RDMA: + wait). */
static int link_n(const nnp_comm_links_t *l, size_t i)
{
    return isnan(l->wait_ms[i]) ? LINK_VALUES - 1 : LINK_VALUES;
}

static double link_v(const nnp_comm_links_t *l, size_t i, int q)
{
    return q == 0   ? l->time_ms[i]
           : q == 1 ? l->size_kb[i]
           : q == 2 ? l->bandwidth[i]
                    : l->wait_ms[i];
}

/* {"src-dst": {"SDMA": [..]}, ...} of the links of (step, op), or their element-wise mean
 * over every row of op when avg (step ignored). Keys in first-seen order. */
static void json_links(sb_t *s, const nnp_model_t *m, uint64_t step, uint32_t op, bool avg)
{
    const nnp_comm_links_t *l = &m->comm_links;
    bool first_key = true;
    sb_add(s, "{", 1);
    for (size_t i = 0; i < l->t.n; i++) {
        bool seen = false, first_tp = true;
        if (l->op[i] != op || (!avg && l->step[i] != step))
            continue;
        for (size_t j = 0; j < i && !seen; j++)
            seen = l->op[j] == op && (avg || l->step[j] == step) && l->link[j] == l->link[i];
        if (seen)
            continue; /* this key was written with its first row */
        if (!first_key)
            sb_str(s, ", ");
        first_key = false;
        sb_json_str(s, nnp__model_str(m, l->link[i]));
        sb_str(s, ": {");
        for (size_t j = i; j < l->t.n; j++) {
            bool tp_seen = false;
            double sum[LINK_VALUES] = {0, 0, 0, 0};
            size_t n = 0;
            int nv = link_n(l, j);
            if (l->op[j] != op || (!avg && l->step[j] != step) || l->link[j] != l->link[i])
                continue;
            for (size_t k = i; k < j && !tp_seen; k++)
                tp_seen = l->op[k] == op && (avg || l->step[k] == step) &&
                          l->link[k] == l->link[i] && l->transport[k] == l->transport[j];
            if (tp_seen)
                continue;
            for (size_t k = j; k < l->t.n; k++)
                if (l->op[k] == op && (avg || l->step[k] == step) && l->link[k] == l->link[i] &&
                    l->transport[k] == l->transport[j]) {
                    for (int q = 0; q < nv; q++)
                        sum[q] += link_v(l, k, q);
                    n++;
                    if (!avg)
                        break;
                }
            if (!first_tp)
                sb_str(s, ", ");
            first_tp = false;
            sb_json_str(s, nnp__model_str(m, l->transport[j]));
            sb_str(s, ": [");
            for (int q = 0; q < nv; q++) {
                if (q)
                    sb_str(s, ", ");
                sb_num(s, avg ? sum[q] / (double)n : sum[q]);
            }
            sb_str(s, "]");
        }
        sb_str(s, "}");
    }
    sb_add(s, "}", 1);
}

/* Whether (step, op) has links. MindSpore's cost is a sum over the links starting from the
 * integer 0, so an entry without links has the cost 0, an int that Python prints "0". */
static bool has_links(const nnp_model_t *m, uint64_t step, uint32_t op)
{
    const nnp_comm_links_t *l = &m->comm_links;
    for (size_t i = 0; i < l->t.n; i++)
        if (l->op[i] == op && l->step[i] == step)
            return true;
    return false;
}

static void sb_cost(sb_t *s, const nnp_model_t *m, uint64_t step, uint32_t op, double v)
{
    if (v == 0 && !has_links(m, step, op))
        sb_str(s, "0");
    else
        sb_num(s, v);
}

/* {"op": ["step", cost, wait, {links}]} of a step's ops, or of every op's averages
 * (["-", mean cost, mean wait, {mean links}]) when avg. */
static void json_ops(sb_t *s, const nnp_model_t *m, uint64_t step, bool avg)
{
    const nnp_comm_costs_t *c = &m->comm_costs;
    bool first = true;
    sb_add(s, "{", 1);
    for (size_t i = 0; i < c->t.n; i++) {
        char b[NUM_TEXT];
        bool seen = false;
        double cost = 0, wait = 0;
        size_t n = 0;
        if (!c->op[i] || (!avg && c->step[i] != step))
            continue;
        for (size_t j = 0; j < i && !seen && avg; j++)
            seen = c->op[j] == c->op[i];
        if (seen)
            continue;
        for (size_t j = i; j < c->t.n; j++)
            if (c->op[j] == c->op[i] && (avg || c->step[j] == step)) {
                cost += c->cost_ms[j];
                wait += c->wait_ms[j];
                n++;
                if (!avg)
                    break;
            }
        if (!first)
            sb_str(s, ", ");
        first = false;
        sb_json_str(s, nnp__model_str(m, c->op[i]));
        sb_str(s, ": [");
        snprintf(b, sizeof(b), "%llu", (unsigned long long)step);
        sb_json_str(s, avg ? "-" : b);
        sb_str(s, ", ");
        if (avg)
            sb_num(s, cost / (double)n);
        else
            sb_cost(s, m, step, c->op[i], cost);
        sb_str(s, ", ");
        sb_num(s, avg ? wait / (double)n : wait);
        sb_str(s, ", ");
        json_links(s, m, step, c->op[i], avg);
        sb_str(s, "]");
    }
    sb_add(s, "}", 1);
}

int nnp__hccl_raw_write(const nnp_actx_t *c)
{
    static const char *const header[] = {"step_num",  "communication_cost",          "wait_cost",
                                         "link_info", "communication_operator_cost", NULL};
    const nnp_model_t *m = c->m;
    const nnp_comm_costs_t *cc = &m->comm_costs;
    char name[NNP_PATH_MAX], b[NUM_TEXT];
    double cost = 0, wait = 0;
    size_t n_steps = 0;
    nnp_outfile_t f;
    nnp_csv_t w;
    sb_t s;
    int rc;
    if (cc->t.n == 0)
        return NNP_OK; /* no per-link communication data: MindSpore writes no file either */
    snprintf(name, sizeof(name), FILE_FMT, c->rank);
    rc = nnp__out_open(&f, c->out_dir, name);
    if (rc != NNP_OK)
        return rc;
    rc = nnp__csv_init(&w, f.fd);
    if (rc != NNP_OK)
        return nnp__out_commit(&f, rc);
    memset(&s, 0, sizeof(s));
    nnp__csv_header(&w, header);
    for (size_t i = 0; i < cc->t.n; i++) {
        if (cc->op[i])
            continue;
        n_steps++;
        cost += cc->cost_ms[i];
        wait += cc->wait_ms[i];
        nnp__csv_uint(&w, cc->step[i]);
        if (cc->cost_ms[i] == 0 && !has_links(m, cc->step[i], 0))
            snprintf(b, sizeof(b), "0");
        else
            py_repr(b, sizeof(b), cc->cost_ms[i]);
        nnp__csv_str(&w, b);
        py_repr(b, sizeof(b), cc->wait_ms[i]);
        nnp__csv_str(&w, b);
        s.len = 0;
        json_links(&s, m, cc->step[i], 0, false);
        nnp__csv_str(&w, s.p ? s.p : "{}");
        s.len = 0;
        json_ops(&s, m, cc->step[i], false);
        nnp__csv_str(&w, s.p ? s.p : "{}");
        nnp__csv_end_row(&w);
    }
    if (n_steps) {
        nnp__csv_str(&w, "-");
        py_repr(b, sizeof(b), cost / (double)n_steps);
        nnp__csv_str(&w, b);
        py_repr(b, sizeof(b), wait / (double)n_steps);
        nnp__csv_str(&w, b);
        s.len = 0;
        json_links(&s, m, 0, 0, true);
        nnp__csv_str(&w, s.p ? s.p : "{}");
        s.len = 0;
        json_ops(&s, m, 0, true);
        nnp__csv_str(&w, s.p ? s.p : "{}");
        nnp__csv_end_row(&w);
    }
    rc = s.oom ? nnp__fail(NNP_ENOMEM, "hccl_raw: out of memory") : NNP_OK;
    nnp__free(s.p);
    {
        int wrc = nnp__csv_fini(&w);
        rc = rc != NNP_OK ? rc : wrc;
    }
    return nnp__out_commit(&f, rc);
}
