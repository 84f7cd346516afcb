/* writer_thread.c - see writer_thread.h. Linux only: /proc/self/task/<tid>/{comm,stat}. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "writer_thread.h"

/* The name the writer thread gives itself (src/record/writer.c). */
#define WRITER_NAME     "nnprof-writer"
#define WRITER_NAME_LEN (sizeof(WRITER_NAME) - 1)
/* Tries, 1 ms apart, to find the writer after its session started it. */
#define NAME_TRIES 1000
#define NS_PER_MS  1000000L
/* /proc/<pid>/task/<tid>/stat: utime is field 14, stime 15 (proc(5)). */
#define STAT_UTIME_FIELD 14
#define DECIMAL          10

static long find_once(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    long found = 0;
    if (!d)
        return 0;
    while (!found && (e = readdir(d)) != NULL) {
        char path[64], name[32] = "";
        long tid = strtol(e->d_name, NULL, DECIMAL);
        FILE *f;
        if (tid <= 0)
            continue;
        snprintf(path, sizeof(path), "/proc/self/task/%ld/comm", tid);
        f = fopen(path, "re");
        if (f && fgets(name, sizeof(name), f) && strncmp(name, WRITER_NAME, WRITER_NAME_LEN) == 0)
            found = tid;
        if (f)
            fclose(f);
    }
    closedir(d);
    return found;
}

long nnp_bench_writer_tid(void)
{
    for (int i = 0; i < NAME_TRIES; i++) {
        struct timespec ms = {0, NS_PER_MS};
        long tid = find_once();
        if (tid != 0)
            return tid;
        nanosleep(&ms, NULL);
    }
    return 0;
}

double nnp_bench_thread_cpu_sec(long tid)
{
    char path[64], buf[1024];
    unsigned long long ut, st;
    size_t n;
    char *p;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/self/task/%ld/stat", tid);
    f = tid > 0 ? fopen(path, "re") : NULL;
    if (!f)
        return -1;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    p = strrchr(buf, ')'); /* the name may hold spaces: fields count from its end */
    if (!p || p[1] == '\0')
        return -1;
    p += 2; /* field 3, the state */
    for (int field = 3; field < STAT_UTIME_FIELD; field++) {
        p = strchr(p, ' ');
        if (!p)
            return -1;
        p++;
    }
    ut = strtoull(p, &p, DECIMAL);
    st = strtoull(p, &p, DECIMAL);
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}
