/* writer_thread.h - finds nnprof's writer thread and reads a thread's CPU time from /proc,
 * for the benchmarks that report the writer's own speed (bench_record, bench_writer). */
#ifndef NNP_BENCH_WRITER_THREAD_H
#define NNP_BENCH_WRITER_THREAD_H

/* The thread id of this process's nnprof writer (it names itself "nnprof-writer"), waiting
 * up to 1 s for a just-started writer to name itself; 0 when none is found. */
long nnp_bench_writer_tid(void);

/* CPU seconds (user + system) of one thread of this process; < 0 when unreadable. */
double nnp_bench_thread_cpu_sec(long tid);

#endif /* NNP_BENCH_WRITER_THREAD_H */
