/* collect.h - what the files of `nnprof collect` share (cmd_collect.c: options and the
 * cluster folder; collect_hosts.c: the host list; collect_copy.c: the copies). The seed's
 * collection script (shared/seeds/003, MindInsight's cluster guide) copies each host's data
 * with sshpass and passwords from a JSON file; this does the same job with SSH keys only. */
#ifndef NNP_COLLECT_H
#define NNP_COLLECT_H

#include <stdbool.h>
#include <stddef.h>

/* Hosts one collection takes, and the text kept per host. */
#define NNP_COLLECT_MAX_HOSTS 4096
#define NNP_COLLECT_HOST_MAX  256
#define NNP_COLLECT_USER_MAX  64
#define NNP_COLLECT_PATH_MAX  1024
/* Remote folders copied per host (--src given several times). */
#define NNP_COLLECT_MAX_SRC      64
#define NNP_COLLECT_MAX_SSH_OPTS 32

typedef struct nnp_collect_host {
    char host[NNP_COLLECT_HOST_MAX];
    char user[NNP_COLLECT_USER_MAX]; /* "" = ssh's default */
    int port;                        /* 0 = the --port default, else ssh's */
    char src[NNP_COLLECT_PATH_MAX];  /* per-host source folder, "" = the common ones */
    int id;                          /* cluster_profiler/<id> */
} nnp_collect_host_t;

typedef struct nnp_collect_hosts {
    nnp_collect_host_t *v;
    int n;
} nnp_collect_hosts_t;

/* Reads the host list: the seed's cluster JSON ({"cluster": {"<host>": {"user": ...}}}),
 * whose "passwd" fields are refused, or a plain file of "[user@]host[:port] [src]" lines.
 * On error prints "nnprof: <file>: <why>" and returns non-zero. */
int nnp_collect_read_hosts(const char *path, nnp_collect_hosts_t *out);
void nnp_collect_free_hosts(nnp_collect_hosts_t *h);
/* True when s is safe as an ssh host, user or remote path (no option-like start, no shell
 * or quote characters; remote paths may hold the wildcards * ? [ ]). */
bool nnp_collect_safe_name(const char *s, bool is_path);

typedef struct nnp_collect_opts {
    const char *out_dir;
    const char *srcs[NNP_COLLECT_MAX_SRC];
    int n_srcs;
    const char *identity;
    const char *known_hosts;
    const char *ssh_opts[NNP_COLLECT_MAX_SSH_OPTS];
    int n_ssh_opts;
    const char *host_key_check; /* "yes" (default), "accept-new" or "no" */
    int port;
    int jobs;
    bool quiet;
} nnp_collect_opts_t;

/* Copies every host's sources into out_dir/cluster_profiler/<id>/profiler/, jobs at a
 * time, with a progress bar on a terminal. Returns the number of hosts that failed (each
 * named on stderr with rsync's message), -1 when nothing could start. */
int nnp_collect_copy(const nnp_collect_opts_t *o, const nnp_collect_hosts_t *h);

#endif /* NNP_COLLECT_H */
