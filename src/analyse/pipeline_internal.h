/* pipeline_internal.h - what the data pipeline analysis's two files share: pipeline.c
 * builds the ops graph, measures the queues and CPU, runs the rules and fills the findings;
 * pipeline_write.c writes minddata_pipeline_raw and minddata_pipeline_summary (.json,
 * .csv) from that state. Internal to src/analyse/pipeline*.c. */
#ifndef NNP_PIPELINE_INTERNAL_H
#define NNP_PIPELINE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyse/analyse.h"

#define PERCENT 100.0
/* MindSpore's "no value" in the summary (minddata_analyzer.py: queue metrics of an op
 * without a queue, per_push_queue_time without a device trace, ...). */
#define NO_VALUE (-1.0)
/* Text of one analysis message, and of the op labels "Map(id=2)". */
#define TEXT_MAX  NNP_FINDINGS_TEXT
#define LABEL_MAX (NNP_NAME_MAX + 32)
#define NUM_BUF   48

/* One pipeline op with what the analysis found for it. Percentages are -1 when unknown. */
typedef struct pop {
    int64_t id, parent;
    const char *type;        /* e.g. "MapOp" (the model's string) */
    char name[NNP_NAME_MAX]; /* "Map": MindSpore's op_names */
    char label[LABEL_MAX];   /* "Map(id=2)": MindSpore's pipeline_ops */
    uint32_t workers;
    size_t kid0, n_kids; /* children: kids[kid0 .. kid0 + n_kids), by id */
    size_t q0, qn;       /* connector samples: qrows[q0 .. q0 + qn), in time order */
    uint32_t capacity;   /* largest capacity sampled: the queue's length */
    size_t empty, full;
    uint64_t size_sum;
    int64_t interval_ns; /* median gap between samples, -1 with fewer than 2 */
    double avg_size, usage_pct, empty_pct, full_pct;
    double cpu_pct, cpu_per_worker; /* percent of one CPU */
    char cpu_msg[TEXT_MAX], queue_msg[TEXT_MAX];
} pop_t;

typedef struct pipe {
    const nnp_model_t *m;
    pop_t *ops; /* by id */
    size_t n;
    size_t *kids, *qrows, *order; /* order: the raw CSV's rows, breadth first from roots */
    /* the device queue (op_id -1) and all connectors pooled (the "host" queues) */
    size_t dq_n, dq_empty, dq_full, host_n, host_empty;
    int64_t dq_first_ns, dq_last_ns;
    char mi_msg[TEXT_MAX];
    size_t bottleneck; /* op index, SIZE_MAX when none */
    char reason[TEXT_MAX], advice[TEXT_MAX];
} pipe_t;

/* Records the message and returns NNP_ENOMEM. */
int nnp__pipe_oom(void);
/* snprintf for messages (a cut at cap is fine for text meant for people). */
void nnp__pipe_textf(char *dst, size_t cap, const char *fmt, ...) NNP_PRINTF(3, 4);
/* v rounded to 2 decimals, as minddata_analyzer.py; negative ("none") as is. */
double nnp__pipe_round2(double v);
/* A percentage or size as written: 2 decimals, or MindSpore's -1 for "none". */
const char *nnp__pipe_fmt_num(char *b, size_t cap, double v);

/* Writes minddata_pipeline_raw_{rank}.csv and minddata_pipeline_summary_{rank}.json/.csv
 * (pipeline_write.c). */
int nnp__pipe_write_files(const nnp_actx_t *c, const pipe_t *p);

#endif
