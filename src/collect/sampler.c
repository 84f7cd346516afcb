/* sampler.c - see sampler.h. Runs on its own thread (util/ticker.c: all signals blocked, so
 * the host's handlers never run here). Reads /proc with plain read(2) into a stack buffer:
 * no allocation per sample. Values are stored raw (cumulative jiffies); the analyser
 * computes utilisation from consecutive samples. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/sampler.h"
#include "core/clock.h"
#include "record/record.h"
#include "record/tbuf.h"
#include "util/ticker.h"
#include "util/util.h"

/* /proc/stat of a 256-CPU machine is ~20 KiB; we only need the first line and 3 others,
 * which appear after the per-CPU lines, so read up to 64 KiB. */
#define PROC_STAT_CAP  65536
#define PROC_SMALL_CAP 1024

/* Seen in top, ps and perf (15 characters at most). */
#define SAMPLER_THREAD_NAME "nnprof-sampler"

struct nnp_sampler {
    nnp_ticker_t *ticker;         /* its thread; kicked when a window opens */
    char stat_buf[PROC_STAT_CAP]; /* only the ticker's thread uses it */
};

static ssize_t read_proc(const char *path, char *buf, size_t cap)
{
    size_t got = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    while (got + 1 < cap) {
        ssize_t r = read(fd, buf + got, cap - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    return (ssize_t)got;
}

static uint64_t field_after(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    if (!p)
        return 0;
    return strtoull(p + strlen(key), NULL, 10);
}

static void sample_system(nnp_sampler_t *s, uint64_t ts)
{
    nnp_rec_sys_cpu_t r;
    unsigned long long v[8] = {0};

    if (read_proc("/proc/stat", s->stat_buf, sizeof(s->stat_buf)) <= 0)
        return;
    /* "cpu  user nice system idle iowait irq softirq steal ..." */
    if (sscanf(s->stat_buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
               &v[3], &v[4], &v[5], &v[6], &v[7]) < 4)
        return;
    memset(&r, 0, sizeof(r));
    r.kind = NNP_REC_SYS_CPU;
    r.n_slots = 3;
    r.ncpu = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
    r.ts = ts;
    r.user = v[0];
    r.nice = v[1];
    r.sys = v[2];
    r.idle = v[3];
    r.iowait = v[4];
    r.irq = v[5] + v[6];
    r.steal = v[7];
    r.ctxt = field_after(s->stat_buf, "\nctxt ");
    r.procs_running = field_after(s->stat_buf, "\nprocs_running ");
    r.procs_blocked = field_after(s->stat_buf, "\nprocs_blocked ");
    nnp__rec_put_slots((const nnp_rec_t *)&r, 3);
}

/* Parses utime and stime (fields 14 and 15) of a /proc/.../stat line. The command name
 * (field 2) may contain spaces and parentheses, so scan from the last ')'. */
static int parse_stat_times(const char *text, uint64_t *utime, uint64_t *stime)
{
    const char *p = strrchr(text, ')');
    unsigned long long u, st;
    if (!p)
        return -1;
    /* After ')': state(3) ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
     * utime(14) stime(15). */
    if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &u, &st) != 2)
        return -1;
    *utime = u;
    *stime = st;
    return 0;
}

static void sample_process(uint64_t ts)
{
    char buf[PROC_SMALL_CAP];
    uint64_t ut, st;
    unsigned long long size_pages, rss_pages;
    nnp_rec_t r;
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

    memset(&r, 0, sizeof(r));
    r.n_slots = 1;
    r.ts = ts;
    if (read_proc("/proc/self/stat", buf, sizeof(buf)) > 0 &&
        parse_stat_times(buf, &ut, &st) == 0) {
        r.kind = NNP_REC_PROC_CPU;
        r.a = ut;
        r.b = st;
        nnp__rec_put_slots(&r, 1);
    }
    if (read_proc("/proc/self/statm", buf, sizeof(buf)) > 0 &&
        sscanf(buf, "%llu %llu", &size_pages, &rss_pages) == 2) {
        r.kind = NNP_REC_PROC_MEM;
        r.a = rss_pages * page;
        r.b = size_pages * page;
        nnp__rec_put_slots(&r, 1);
    }
}

static void sample_thread(nnp_tbuf_t *b, void *user)
{
    char path[64], buf[PROC_SMALL_CAP];
    uint64_t ut, st;
    nnp_rec_t r;

    if (!atomic_load(&b->sample_cpu) || atomic_load(&b->orphaned))
        return;
    snprintf(path, sizeof(path), "/proc/self/task/%llu/stat", (unsigned long long)b->tid);
    if (read_proc(path, buf, sizeof(buf)) <= 0 || parse_stat_times(buf, &ut, &st) != 0)
        return;
    memset(&r, 0, sizeof(r));
    r.kind = NNP_REC_THREAD_CPU;
    r.n_slots = 1;
    r.name = atomic_load(&b->name);
    r.ts = *(const uint64_t *)user;
    r.a = (ut & UINT32_MAX) | (st << 32);
    r.b = b->tid;
    nnp__rec_put_slots(&r, 1);
}

/* One tick: a sample of everything while a window is open. */
static void sampler_tick(void *arg)
{
    nnp_sampler_t *s = arg;
    if (atomic_load_explicit(&nnp__collecting, memory_order_relaxed)) {
        uint64_t ts = nnp__ticks();
        sample_system(s, ts);
        sample_process(ts);
        nnp__tbuf_for_each(sample_thread, &ts);
    }
}

int nnp__sampler_start(int interval_ms, nnp_sampler_t **out)
{
    nnp_sampler_t *s = nnp__calloc(1, sizeof(*s));
    int rc;

    *out = NULL;
    if (!s)
        return nnp__fail(NNP_ENOMEM, "out of memory creating the sampler");
    rc = nnp__ticker_start(SAMPLER_THREAD_NAME, interval_ms, sampler_tick, s, &s->ticker);
    if (rc != NNP_OK) {
        nnp__free(s);
        return rc;
    }
    *out = s;
    return NNP_OK;
}

void nnp__sampler_stop(nnp_sampler_t *s)
{
    if (!s)
        return;
    nnp__ticker_stop(s->ticker);
    nnp__free(s);
}

void nnp__sampler_kick(nnp_sampler_t *s)
{
    if (s)
        nnp__ticker_kick(s->ticker);
}

void nnp__sampler_forget(nnp_sampler_t *s)
{
    if (!s)
        return;
    nnp__ticker_forget(s->ticker);
    nnp__free(s);
}
