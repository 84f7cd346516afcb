/* nnpt_proc.h - the step ids nnpt_proc.c records, shared with tests/unit/test_fork.c so
 * the test can tell which process recorded each event. */
#ifndef NNPT_PROC_H
#define NNPT_PROC_H

/* Parent steps are 0 .. 2N-1; a forked child's start here; an exec'd leaf's here; the
 * fork loop's child k records LOOP_BASE + k * LOOP_STRIDE + i. */
#define NNPT_CHILD_BASE  1000000ull
#define NNPT_LEAF_BASE   2000000ull
#define NNPT_LOOP_BASE   3000000ull
#define NNPT_LOOP_STRIDE 1000ull

#endif /* NNPT_PROC_H */
