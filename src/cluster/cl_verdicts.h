/* cl_verdicts.h - what the cluster rules share with the advice writer: a verdict with the
 * evidence that decided it, the helpers that fill one (cl_verdicts.c), and the rules of each
 * reference tool (cl_rules_mpa.c, cl_rules_mindinsight.c, cl_rules_msprof.c), which
 * cl_verdicts.c runs and writes into cluster_advice.json/.txt. Internal to src/cluster/. */
#ifndef NNP_CL_VERDICTS_H
#define NNP_CL_VERDICTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster/cluster.h"
#include "util/util.h"

#define NS_PER_MS 1e6
#define NS_PER_US 1e3

/* ---- a verdict with its evidence ---- */
#define EV_MAX    40
#define EV_KEY    64
#define EV_VAL    1024
#define TEXT_CAP  1024
#define RANKS_MAX 16
/* Slow links listed per verdict (the worst first). */

typedef enum ev_kind { EV_NUM, EV_STR, EV_RAW } ev_kind_t;

typedef struct ev {
    char key[EV_KEY];
    ev_kind_t kind;
    char val[EV_VAL];
} ev_t;

typedef struct verdict {
    const char *id, *kind, *source, *rule;
    bool checked, fired;
    int ranks[RANKS_MAX];
    int n_ranks;
    ev_t ev[EV_MAX];
    int n_ev;
    char summary[TEXT_CAP], suggestion[TEXT_CAP], why_unchecked[TEXT_CAP];
} verdict_t;

/* ---- filling a verdict (cl_verdicts.c) ---- */

/* The shortest text that reads back as v ("null" when not finite). */
void nnp__cl_num_text(char *buf, size_t cap, double v);
/* Evidence entries: a number, an integer, a string, and raw JSON built with
 * nnp__cl_ev_append (NULL when the verdict has EV_MAX entries; appending to NULL is a no-op). */
void nnp__cl_ev_num(verdict_t *v, const char *key, double x);
void nnp__cl_ev_int(verdict_t *v, const char *key, int64_t x);
void nnp__cl_ev_str(verdict_t *v, const char *key, const char *s);
ev_t *nnp__cl_ev_raw(verdict_t *v, const char *key);
void nnp__cl_ev_append(ev_t *e, const char *fmt, ...) NNP_PRINTF(2, 3);
/* Names rank among the verdict's ranks (once, at most RANKS_MAX). */
void nnp__cl_blame(verdict_t *v, int rank);
/* x rounded to 1/scale (Python's round(x, digits) with scale = 10^digits). */
double nnp__cl_round_to(double x, double scale);

/* ---- the rules: each sets v's id, source and rule, then checks it or says why not ---- */

/* msprof-analyze SlowRankAnalyzer and SlowLinkAnalyzer (cl_rules_mpa.c). */
int nnp__cl_mpa_slow_rank(const nnp_cl_data_t *d, verdict_t *v);
void nnp__cl_mpa_slow_link(const nnp_cl_data_t *d, verdict_t *v);
/* MindInsight ParallelProposer (cl_rules_mindinsight.c); mode is the parallel mode. */
void nnp__cl_mi_step_interval(const nnp_cl_data_t *d, verdict_t *v);
void nnp__cl_mi_flops(const nnp_cl_data_t *d, verdict_t *v);
int nnp__cl_mi_slow_link(const nnp_cl_data_t *d, verdict_t *v);
void nnp__cl_mi_communication(const nnp_cl_data_t *d, const char *mode, verdict_t *v,
                              verdict_t *between, verdict_t *within);
void nnp__cl_mi_stage_flops(const nnp_cl_data_t *d, const char *mode, verdict_t *v);
/* msprof SlowRankCalculator's wait ratios and SlowLinkCalculator's cause of a slow link
 * (cl_rules_msprof.c). */
void nnp__cl_msp_wait(const nnp_cl_data_t *d, verdict_t *v);
const char *nnp__cl_msp_link_cause(const char *type, double large_ratio);

#endif /* NNP_CL_VERDICTS_H */
