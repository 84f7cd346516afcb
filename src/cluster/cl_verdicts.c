/* cl_verdicts.c - cluster_advice.json and cluster_advice.txt: every cluster rule of the
 * reference tools (cl_rules_mpa.c, cl_rules_mindinsight.c, cl_rules_msprof.c) evaluated on
 * the gathered data, each with the numbers that decided it (formats.md 2.6), the cluster's
 * summary, and the single-rank advisor's findings counted over ranks; and the evidence
 * helpers the rules fill their verdicts with (cl_verdicts.h). Rules whose data is absent are
 * listed as not checked, so "no finding" never hides "no data". docs/CLUSTER.md lists them. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cl_driver.h"
#include "cluster/cl_verdicts.h"
#include "util/json_writer.h"

#define JSON_FILE "cluster_advice.json"
#define TXT_FILE  "cluster_advice.txt"

/* ---- filling a verdict (cl_verdicts.h) ---- */

void nnp__cl_num_text(char *buf, size_t cap, double v)
{
    if (!isfinite(v)) {
        snprintf(buf, cap, "null");
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
}

static ev_t *ev_add(verdict_t *v, const char *key, ev_kind_t kind)
{
    ev_t *e;
    if (v->n_ev >= EV_MAX)
        return NULL;
    e = &v->ev[v->n_ev++];
    snprintf(e->key, sizeof(e->key), "%s", key);
    e->kind = kind;
    e->val[0] = '\0';
    return e;
}

void nnp__cl_ev_num(verdict_t *v, const char *key, double x)
{
    ev_t *e = ev_add(v, key, EV_NUM);
    if (e)
        nnp__cl_num_text(e->val, sizeof(e->val), x);
}

void nnp__cl_ev_int(verdict_t *v, const char *key, int64_t x)
{
    ev_t *e = ev_add(v, key, EV_NUM);
    if (e)
        snprintf(e->val, sizeof(e->val), "%" PRId64, x);
}

void nnp__cl_ev_str(verdict_t *v, const char *key, const char *s)
{
    ev_t *e = ev_add(v, key, EV_STR);
    if (e)
        nnp__strlcpy(e->val, s, sizeof(e->val));
}

ev_t *nnp__cl_ev_raw(verdict_t *v, const char *key)
{
    return ev_add(v, key, EV_RAW);
}

void nnp__cl_ev_append(ev_t *e, const char *fmt, ...)
{
    size_t len;
    va_list ap;
    if (!e)
        return;
    len = strlen(e->val);
    if (len + 1 >= sizeof(e->val))
        return;
    va_start(ap, fmt);
    vsnprintf(e->val + len, sizeof(e->val) - len, fmt, ap);
    va_end(ap);
}

void nnp__cl_blame(verdict_t *v, int rank)
{
    for (int i = 0; i < v->n_ranks; i++)
        if (v->ranks[i] == rank)
            return;
    if (v->n_ranks < RANKS_MAX)
        v->ranks[v->n_ranks++] = rank;
}

double nnp__cl_round_to(double x, double scale)
{
    return nearbyint(x * scale) / scale;
}

/* ---- the single-rank advisor over ranks ---- */

static int cmp_adv(const void *a, const void *b, void *ctx)
{
    const nnp_cl_adv_rec_t *x = a, *y = b;
    const nnp_cl_strtab_t *s = ctx;
    if (x->severity != y->severity)
        return x->severity < y->severity ? -1 : 1;
    if (x->id != y->id)
        return s->order[x->id] < s->order[y->id] ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* Ranks as "0-3,8" runs. */
static void runs_add(char *buf, size_t cap, int *last, int *first, int rank, bool flush)
{
    size_t len = strlen(buf);
    if (!flush && *last >= 0 && rank == *last + 1) {
        *last = rank;
        return;
    }
    if (*first >= 0 && len < cap) {
        if (*first == *last)
            snprintf(buf + len, cap - len, "%s%d", len ? "," : "", *first);
        else
            snprintf(buf + len, cap - len, "%s%d-%d", len ? "," : "", *first, *last);
    }
    *first = *last = flush ? -1 : rank;
}

typedef struct adv_group {
    nnp_cl_adv_rec_t first;
    uint64_t count;
    char ranks[EV_VAL];
    int run_first, run_last;
} adv_group_t;

/* ---- writing ---- */

typedef struct text {
    char *buf;
    size_t len, cap;
} text_t;

static void text_add(text_t *t, const char *fmt, ...) NNP_PRINTF(2, 3);
static void text_add(text_t *t, const char *fmt, ...)
{
    va_list ap;
    int n;
    if (t->len + TEXT_CAP * 4 > t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 65536;
        char *nb = nnp__realloc(t->buf, ncap);
        if (!nb)
            return;
        t->buf = nb;
        t->cap = ncap;
    }
    va_start(ap, fmt);
    n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->len += (size_t)n < t->cap - t->len ? (size_t)n : t->cap - t->len - 1;
}

static void write_verdict(nnp_jw_t *w, text_t *t, const verdict_t *v, int index)
{
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "id");
    nnp__jw_str(w, v->id);
    nnp__jw_key(w, "kind");
    nnp__jw_str(w, v->kind);
    nnp__jw_key(w, "source");
    nnp__jw_str(w, v->source);
    nnp__jw_key(w, "rule");
    nnp__jw_str(w, v->rule);
    nnp__jw_key(w, "checked");
    nnp__jw_bool(w, v->checked);
    nnp__jw_key(w, "fired");
    nnp__jw_bool(w, v->fired);
    nnp__jw_key(w, "ranks");
    nnp__jw_arr_begin(w);
    for (int i = 0; i < v->n_ranks; i++)
        nnp__jw_int(w, v->ranks[i]);
    nnp__jw_arr_end(w);
    nnp__jw_key(w, "evidence");
    nnp__jw_obj_begin(w);
    for (int i = 0; i < v->n_ev; i++) {
        nnp__jw_key(w, v->ev[i].key);
        if (v->ev[i].kind == EV_STR)
            nnp__jw_str(w, v->ev[i].val);
        else
            nnp__jw_raw(w, v->ev[i].val);
    }
    nnp__jw_obj_end(w);
    nnp__jw_key(w, "summary");
    nnp__jw_str(w, v->checked ? v->summary : "");
    nnp__jw_key(w, "suggestion");
    nnp__jw_str(w, v->suggestion);
    if (!v->checked) {
        nnp__jw_key(w, "not_checked_because");
        nnp__jw_str(w, v->why_unchecked);
    }
    nnp__jw_obj_end(w);

    text_add(t, "\n%d. [%s] %s\n   Source: %s\n   Rule: %s\n", index,
             !v->checked ? "not checked"
             : v->fired  ? "FOUND"
                         : "ok",
             v->id, v->source, v->rule);
    if (!v->checked) {
        text_add(t, "   Not checked: %s.\n", v->why_unchecked);
        return;
    }
    text_add(t, "   %s\n   Evidence: ", v->summary);
    for (int i = 0; i < v->n_ev; i++)
        text_add(t, v->ev[i].kind == EV_STR ? "%s%s = \"%s\"" : "%s%s = %s", i ? ", " : "",
                 v->ev[i].key, v->ev[i].val);
    text_add(t, ".\n");
    if (v->suggestion[0])
        text_add(t, "   Suggestion: %s\n", v->suggestion);
}

static int write_advisor(const nnp_cl_data_t *d, nnp_jw_t *w, text_t *t)
{
    nnp_cl_spill_t sorted;
    nnp_cl_merge_t *m = NULL;
    const nnp_cl_adv_rec_t *r;
    adv_group_t g;
    bool have = false;
    int rc = nnp__cl_sort_open(&d->advice, &sorted, sizeof(nnp_cl_adv_rec_t), NULL, cmp_adv,
                               d->strs, d->tmp_dir, &m),
        n_groups = 0;
    if (rc != NNP_OK)
        return rc;
    nnp__jw_key(w, "advisor");
    nnp__jw_arr_begin(w);
    text_add(t, "\nThe single-rank advisor, over ranks (nnprof analyse's rules):\n");
    memset(&g, 0, sizeof(g));
    for (;;) {
        bool end;
        if (rc != NNP_OK)
            break;
        r = nnp__cl_merge_next(m, &rc);
        if (rc != NNP_OK)
            break;
        end = r == NULL;
        if (have && (end || r->id != g.first.id)) {
            runs_add(g.ranks, sizeof(g.ranks), &g.run_last, &g.run_first, 0, true);
            nnp__jw_obj_begin(w);
            nnp__jw_key(w, "id");
            nnp__jw_str(w, nnp__cl_str(d->strs, g.first.id));
            nnp__jw_key(w, "severity");
            nnp__jw_str(w, g.first.severity == 0 ? "warning" : "info");
            nnp__jw_key(w, "title");
            nnp__jw_str(w, nnp__cl_str(d->strs, g.first.title));
            nnp__jw_key(w, "n_ranks");
            nnp__jw_uint(w, g.count);
            nnp__jw_key(w, "ranks");
            nnp__jw_str(w, g.ranks);
            nnp__jw_key(w, "example");
            nnp__jw_obj_begin(w);
            nnp__jw_key(w, "rank");
            nnp__jw_int(w, g.first.rank);
            nnp__jw_key(w, "evidence");
            nnp__jw_str(w, g.first.evidence);
            nnp__jw_key(w, "suggestion");
            nnp__jw_str(w, g.first.suggestion);
            nnp__jw_obj_end(w);
            nnp__jw_obj_end(w);
            text_add(t, "- [%s] %s (%s): %llu rank%s (%s). Rank %d: %s. %s\n",
                     g.first.severity == 0 ? "warning" : "info",
                     nnp__cl_str(d->strs, g.first.title), nnp__cl_str(d->strs, g.first.id),
                     (unsigned long long)g.count, g.count == 1 ? "" : "s", g.ranks, g.first.rank,
                     g.first.evidence, g.first.suggestion);
            have = false;
            n_groups++;
        }
        if (end)
            break;
        if (!have) {
            memset(&g, 0, sizeof(g));
            g.first = *r;
            g.run_first = g.run_last = -1;
            have = true;
        }
        g.count++;
        runs_add(g.ranks, sizeof(g.ranks), &g.run_last, &g.run_first, r->rank, false);
    }
    if (n_groups == 0)
        text_add(t, "- no finding on any rank.\n");
    nnp__jw_arr_end(w);
    nnp__cl_merge_close(m);
    nnp__cl_spill_fini(&sorted);
    return rc;
}

static void write_cluster(const nnp_cl_data_t *d, nnp_jw_t *w, text_t *t, const char *mode)
{
    int with_clock = 0;
    int64_t max_off = 0, max_unc = 0;
    uint64_t steps = 0;
    nnp__jw_key(w, "cluster");
    nnp__jw_obj_begin(w);
    nnp__jw_key(w, "layout");
    nnp__jw_str(w, d->in->layout);
    nnp__jw_key(w, "ranks_found");
    nnp__jw_int(w, d->n_ranks - d->n_failed);
    nnp__jw_key(w, "ranks_expected");
    nnp__jw_int(w, d->expected_ranks);
    nnp__jw_key(w, "missing_ranks");
    nnp__jw_arr_begin(w);
    for (int i = 0; i < d->n_missing; i++)
        nnp__jw_int(w, d->missing[i]);
    nnp__jw_arr_end(w);
    nnp__jw_key(w, "failed_ranks");
    nnp__jw_arr_begin(w);
    for (int i = 0; i < d->n_failed; i++)
        nnp__jw_int(w, d->failed[i]);
    nnp__jw_arr_end(w);
    nnp__jw_key(w, "parallel_mode");
    nnp__jw_str(w, mode);
    nnp__jw_key(w, "stages");
    nnp__jw_int(w, d->n_stages);
    nnp__jw_key(w, "ranks");
    nnp__jw_arr_begin(w);
    for (int i = 0; i < d->n_ranks; i++) {
        const nnp_cl_rank_t *s = &d->ranks[i];
        steps += s->n_steps;
        nnp__jw_obj_begin(w);
        nnp__jw_key(w, "rank");
        nnp__jw_int(w, s->rank);
        nnp__jw_key(w, "host");
        nnp__jw_str(w, s->host);
        nnp__jw_key(w, "device_id");
        if (s->flags & NNP_CL_RANK_HAS_DEV)
            nnp__jw_int(w, s->device_id);
        else
            nnp__jw_null(w);
        nnp__jw_key(w, "format");
        nnp__jw_str(w, s->format);
        nnp__jw_key(w, "source");
        nnp__jw_str(w, s->show);
        nnp__jw_key(w, "steps");
        nnp__jw_uint(w, s->n_steps);
        nnp__jw_key(w, "stage");
        nnp__jw_int(w, d->stage_of ? d->stage_of[i] : 0);
        nnp__jw_key(w, "read");
        nnp__jw_bool(w, !(s->flags & NNP_CL_RANK_FAILED));
        nnp__jw_key(w, "clock_offset_ns");
        if (s->flags & NNP_CL_RANK_CLOCK) {
            nnp__jw_int(w, s->clock_offset_ns);
            with_clock++;
            if (llabs(s->clock_offset_ns) > max_off)
                max_off = llabs(s->clock_offset_ns);
            if (s->clock_uncertainty_ns > max_unc)
                max_unc = s->clock_uncertainty_ns;
        } else {
            nnp__jw_null(w);
        }
        nnp__jw_key(w, "clock_uncertainty_ns");
        if (s->flags & NNP_CL_RANK_CLOCK)
            nnp__jw_int(w, s->clock_uncertainty_ns);
        else
            nnp__jw_null(w);
        nnp__jw_obj_end(w);
    }
    nnp__jw_arr_end(w);
    nnp__jw_obj_end(w);
    text_add(t, "nnprof cluster advice: %d rank%s read (%s), %d expected", d->n_ranks - d->n_failed,
             d->n_ranks - d->n_failed == 1 ? "" : "s", d->in->layout, d->expected_ranks);
    if (d->n_missing) {
        text_add(t, "; missing ranks:");
        for (int i = 0; i < d->n_missing; i++)
            text_add(t, "%s %d", i ? "," : "", d->missing[i]);
    }
    if (d->n_failed) {
        text_add(t, "; unreadable ranks:");
        for (int i = 0; i < d->n_failed; i++)
            text_add(t, "%s %d", i ? "," : "", d->failed[i]);
    }
    text_add(t, ".\n%llu step rows, %s, %d stage%s.", (unsigned long long)steps, mode, d->n_stages,
             d->n_stages == 1 ? "" : "s");
    if (with_clock)
        text_add(t,
                 " Clocks aligned on %d ranks (largest offset %lld ns, uncertainty up to %lld "
                 "ns).",
                 with_clock, (long long)max_off, (long long)max_unc);
    text_add(t, "\n");
}

int nnp__cl_write_advice(nnp_cl_data_t *d)
{
    verdict_t *v = nnp__calloc(10, sizeof(*v));
    nnp_outfile_t f;
    nnp_jw_t w;
    text_t t = {0};
    const char *mode = "data-parallel";
    int rc, n = 0, fired = 0, checked = 0;
    if (!v)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    if (d->in->parallel_mode[0])
        mode = d->in->parallel_mode;
    else {
        for (int i = 0; i < d->n_ranks; i++)
            if (d->ranks[i].parallel_mode[0]) {
                mode = d->ranks[i].parallel_mode;
                break;
            }
        if (strcmp(mode, "data-parallel") == 0 && d->n_stages > 1)
            mode = "pipeline-parallel";
    }
    rc = nnp__cl_mpa_slow_rank(d, &v[n++]);
    nnp__cl_mi_step_interval(d, &v[n++]);
    nnp__cl_mi_flops(d, &v[n++]);
    nnp__cl_msp_wait(d, &v[n++]);
    if (rc == NNP_OK)
        rc = nnp__cl_mi_slow_link(d, &v[n++]);
    nnp__cl_mpa_slow_link(d, &v[n++]);
    nnp__cl_mi_communication(d, mode, &v[n], &v[n + 1], &v[n + 2]);
    n += 3;
    nnp__cl_mi_stage_flops(d, mode, &v[n++]);
    if (rc == NNP_OK)
        rc = nnp__cl_out_open(d, &f, JSON_FILE);
    if (rc != NNP_OK) {
        nnp__free(v);
        return rc;
    }
    rc = nnp__jw_init(&w, f.fd, d->o->pretty, 0);
    if (rc == NNP_OK) {
        nnp__jw_obj_begin(&w);
        write_cluster(d, &w, &t, mode);
        for (int i = 0; i < n; i++) {
            fired += v[i].checked && v[i].fired;
            checked += v[i].checked;
        }
        nnp__jw_key(&w, "n_fired");
        nnp__jw_int(&w, fired);
        nnp__jw_key(&w, "verdicts");
        nnp__jw_arr_begin(&w);
        text_add(&t, "\n%d of %d cluster rules found something (%d checked):\n", fired, n, checked);
        for (int i = 0; i < n; i++)
            write_verdict(&w, &t, &v[i], i + 1);
        nnp__jw_arr_end(&w);
        rc = write_advisor(d, &w, &t);
        nnp__jw_obj_end(&w);
        nnp__jw_line_end(&w);
        if (rc == NNP_OK)
            rc = nnp__jw_flush(&w);
    }
    nnp__jw_fini(&w);
    rc = nnp__out_commit(&f, rc);
    if (rc == NNP_OK && t.buf) {
        rc = nnp__cl_out_open(d, &f, TXT_FILE);
        if (rc == NNP_OK)
            rc = nnp__out_commit(&f, nnp__write_all(f.fd, t.buf, t.len));
    }
    nnp__free(t.buf);
    nnp__free(v);
    return rc;
}
