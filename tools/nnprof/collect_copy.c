/* collect_copy.c - the copies of `nnprof collect`: one rsync over ssh per host, jobs at a
 * time, with a progress bar (hosts done and bytes moved, from rsync's --info=progress2)
 * when stderr is a terminal. ssh runs with BatchMode (a password prompt is never waited
 * for) and checks host keys unless told otherwise; rsync keeps partly copied files
 * (--partial-dir), so running the same collection again resumes it and skips what is
 * already there. Children are started with fork/exec and an argument vector: no shell. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "collect.h"
#include "util/util.h"

/* Most hosts copied at once. */
#define MAX_JOBS 256
/* Text kept of a child's stderr for its error message, and of its progress line. */
#define ERR_KEEP       2048
#define LINE_KEEP      256
#define ARGV_MAX       (32 + NNP_COLLECT_MAX_SRC)
#define SSH_CMD        4096
#define PROGRESS_WIDTH 30
#define POLL_MS        200
#define PARTIAL_DIR    ".nnprof-partial"

typedef struct job {
    pid_t pid;
    int out_fd, err_fd;
    const nnp_collect_host_t *h;
    char err[ERR_KEEP];
    size_t err_len;
    char line[LINE_KEEP];
    size_t line_len;
    unsigned long long bytes;
} job_t;

/* rsync -e takes a command line split at spaces, single quotes keeping one argument. */
static bool quote_add(char *cmd, size_t cap, const char *arg)
{
    size_t len = strlen(cmd);
    int n;
    if (strchr(arg, '\'') || strchr(arg, '"') || strchr(arg, '\\'))
        return false;
    n = snprintf(cmd + len, cap - len, " '%s'", arg);
    return n > 0 && (size_t)n < cap - len;
}

static bool ssh_command(const nnp_collect_opts_t *o, const nnp_collect_host_t *h, char *cmd,
                        size_t cap)
{
    char opt[NNP_COLLECT_PATH_MAX + 64];
    int port = h->port ? h->port : o->port;
    snprintf(cmd, cap, "ssh");
    /* BatchMode: fail instead of asking for a password or passphrase. */
    if (!quote_add(cmd, cap, "-oBatchMode=yes"))
        return false;
    snprintf(opt, sizeof(opt), "-oStrictHostKeyChecking=%s",
             o->host_key_check ? o->host_key_check : "yes");
    if (!quote_add(cmd, cap, opt))
        return false;
    if (o->host_key_check && strcmp(o->host_key_check, "no") == 0 &&
        !quote_add(cmd, cap, "-oUserKnownHostsFile=/dev/null"))
        return false;
    if (o->known_hosts) {
        snprintf(opt, sizeof(opt), "-oUserKnownHostsFile=%s", o->known_hosts);
        if (!quote_add(cmd, cap, opt))
            return false;
    }
    if (o->identity && (!quote_add(cmd, cap, "-i") || !quote_add(cmd, cap, o->identity)))
        return false;
    if (port) {
        snprintf(opt, sizeof(opt), "%d", port);
        if (!quote_add(cmd, cap, "-p") || !quote_add(cmd, cap, opt))
            return false;
    }
    for (int i = 0; i < o->n_ssh_opts; i++) {
        snprintf(opt, sizeof(opt), "-o%s", o->ssh_opts[i]);
        if (!quote_add(cmd, cap, opt))
            return false;
    }
    return true;
}

static int start(const nnp_collect_opts_t *o, job_t *j)
{
    char ssh[SSH_CMD], dest[NNP_COLLECT_PATH_MAX + 64];
    char srcs[NNP_COLLECT_MAX_SRC][NNP_COLLECT_PATH_MAX + NNP_COLLECT_HOST_MAX + 80];
    const char *argv[ARGV_MAX];
    int n = 0, out[2], err[2], n_src = 0;
    const nnp_collect_host_t *h = j->h;
    if (!ssh_command(o, h, ssh, sizeof(ssh))) {
        nnp_cli_error("collect", "an ssh option, key or known_hosts path holds a quote or "
                                 "backslash");
        return -1;
    }
    snprintf(dest, sizeof(dest), "%s/cluster_profiler/%d/profiler/", o->out_dir, h->id);
    argv[n++] = "rsync";
    argv[n++] = "--recursive";
    argv[n++] = "--links";
    argv[n++] = "--times";
    argv[n++] = "--partial";
    argv[n++] = "--partial-dir=" PARTIAL_DIR;
    argv[n++] = "--info=progress2";
    argv[n++] = "--no-inc-recursive";
    argv[n++] = "--chmod=Du=rwx,Dgo=,Fu=rw,Fgo="; /* copies are the user's own, 0700/0600 */
    argv[n++] = "-e";
    argv[n++] = ssh;
    for (int i = 0; i < (h->src[0] ? 1 : o->n_srcs); i++) {
        snprintf(srcs[n_src], sizeof(srcs[n_src]), "%s%s%s:%s", h->user, h->user[0] ? "@" : "",
                 h->host, h->src[0] ? h->src : o->srcs[i]);
        argv[n++] = srcs[n_src++];
    }
    argv[n++] = dest;
    argv[n] = NULL;
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
        nnp_cli_error("collect", "pipe: %s", strerror(errno));
        return -1;
    }
    j->pid = fork();
    if (j->pid < 0) {
        nnp_cli_error("collect", "fork: %s", strerror(errno));
        return -1;
    }
    if (j->pid == 0) {
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0)
            dup2(null, STDIN_FILENO);
        dup2(out[1], STDOUT_FILENO);
        dup2(err[1], STDERR_FILENO);
        execvp(argv[0], (char *const *)argv);
        fprintf(stderr, "cannot run rsync: %s\n", strerror(errno));
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    j->out_fd = out[0];
    j->err_fd = err[0];
    (void)fcntl(j->out_fd, F_SETFL, O_NONBLOCK);
    (void)fcntl(j->err_fd, F_SETFL, O_NONBLOCK);
    return 0;
}

/* The bytes moved so far: the first number of rsync's last progress2 line. */
static void parse_progress(job_t *j)
{
    unsigned long long v = 0;
    const char *p = j->line;
    bool any = false;
    while (*p == ' ')
        p++;
    for (; *p && *p != ' '; p++) {
        if (*p >= '0' && *p <= '9') {
            v = v * 10 + (unsigned long long)(*p - '0');
            any = true;
        } else if (*p != ',' && *p != '.') {
            return;
        }
    }
    if (any)
        j->bytes = v;
}

static void drain(job_t *j)
{
    char buf[4096];
    ssize_t k;
    while (j->out_fd >= 0 && (k = read(j->out_fd, buf, sizeof(buf))) > 0) {
        for (ssize_t i = 0; i < k; i++) {
            if (buf[i] == '\r' || buf[i] == '\n') {
                j->line[j->line_len] = '\0';
                parse_progress(j);
                j->line_len = 0;
            } else if (j->line_len + 1 < sizeof(j->line)) {
                j->line[j->line_len++] = buf[i];
            }
        }
    }
    while (j->err_fd >= 0 && (k = read(j->err_fd, buf, sizeof(buf))) > 0) {
        for (ssize_t i = 0; i < k; i++) {
            if (j->err_len + 1 >= sizeof(j->err)) /* keep the latest text */
                memmove(j->err, j->err + sizeof(j->err) / 2, j->err_len -= sizeof(j->err) / 2);
            j->err[j->err_len++] = buf[i];
        }
        j->err[j->err_len] = '\0';
    }
}

static void bar(const nnp_collect_opts_t *o, int done, int total, unsigned long long bytes)
{
    int fill = total ? done * PROGRESS_WIDTH / total : 0;
    if (o->quiet || !isatty(STDERR_FILENO))
        return;
    fprintf(stderr, "\r[%.*s%*s] %d/%d hosts, %.1f MB copied", fill,
            "##############################", PROGRESS_WIDTH - fill, "", done, total,
            (double)bytes / 1e6);
    if (done == total)
        fputc('\n', stderr);
    fflush(stderr);
}

/* Why a copy failed, in the user's terms, from rsync's and ssh's words. */
static const char *hint(const job_t *j)
{
    if (strstr(j->err, "Host key verification failed") ||
        strstr(j->err, "REMOTE HOST IDENTIFICATION HAS CHANGED"))
        return "the host's key is not in known_hosts (or changed): check it with 'ssh <host>' "
               "and accept it, or pass --accept-new-host-keys to trust hosts seen the first time";
    if (strstr(j->err, "Permission denied"))
        return "key login refused: install your public key on the host (ssh-copy-id), or name "
               "the key with --identity";
    if (strstr(j->err, "Connection refused") || strstr(j->err, "No route to host") ||
        strstr(j->err, "Could not resolve"))
        return "the host cannot be reached over ssh (address, port or sshd)";
    if (strstr(j->err, "No such file or directory"))
        return "a source folder does not exist on that host (--src / --train-dir)";
    if (strstr(j->err, "cannot run rsync"))
        return "rsync is not installed here (scripts/bootstrap installs it)";
    if (strstr(j->err, "command not found"))
        return "rsync is not installed on that host";
    return NULL;
}

static int finish(job_t *j, int status)
{
    const char *why;
    int code;
    drain(j);
    close(j->out_fd);
    close(j->err_fd);
    j->out_fd = j->err_fd = -1;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    /* The last line rsync or ssh wrote says the most. */
    while (j->err_len > 0 && (j->err[j->err_len - 1] == '\n' || j->err[j->err_len - 1] == '\r'))
        j->err[--j->err_len] = '\0';
    why = hint(j);
    fprintf(stderr, "nnprof: collect: host %s (id %d): rsync %s %d%s%s%s%s\n", j->h->host, j->h->id,
            code < 0 ? "killed by signal" : "exited with", code < 0 ? WTERMSIG(status) : code,
            j->err_len ? ": " : "",
            j->err_len ? (strrchr(j->err, '\n') ? strrchr(j->err, '\n') + 1 : j->err) : "",
            why ? "; " : "", why ? why : "");
    return 1;
}

int nnp_collect_copy(const nnp_collect_opts_t *o, const nnp_collect_hosts_t *h)
{
    int jobs = o->jobs > 0 ? o->jobs : 1, next = 0, done = 0, failed = 0, running = 0;
    unsigned long long done_bytes = 0;
    job_t *slot;
    if (jobs > MAX_JOBS)
        jobs = MAX_JOBS;
    slot = calloc((size_t)jobs, sizeof(*slot));
    if (!slot) {
        nnp_cli_error("collect", "out of memory");
        return -1;
    }
    for (int i = 0; i < h->n; i++) {
        char dir[NNP_COLLECT_PATH_MAX + 64];
        snprintf(dir, sizeof(dir), "%s/cluster_profiler/%d/profiler", o->out_dir, h->v[i].id);
        if (nnp__mkdir_p(dir, 0700) != NNP_OK) {
            nnp_cli_error(dir, "%s", nnp_last_error());
            free(slot);
            return -1;
        }
    }
    bar(o, 0, h->n, 0);
    while (done < h->n) {
        struct pollfd fds[2 * MAX_JOBS];
        int nf = 0, status;
        unsigned long long bytes = done_bytes;
        pid_t pid;
        for (int s = 0; s < jobs && next < h->n; s++) {
            if (slot[s].pid > 0)
                continue;
            memset(&slot[s], 0, sizeof(slot[s]));
            slot[s].h = &h->v[next++];
            if (start(o, &slot[s]) != 0) {
                slot[s].pid = 0;
                failed++;
                done++;
                continue;
            }
            running++;
        }
        if (running == 0)
            continue;
        for (int s = 0; s < jobs; s++) {
            if (slot[s].pid <= 0)
                continue;
            fds[nf++] = (struct pollfd){.fd = slot[s].out_fd, .events = POLLIN};
            fds[nf++] = (struct pollfd){.fd = slot[s].err_fd, .events = POLLIN};
        }
        (void)poll(fds, (nfds_t)nf, POLL_MS);
        for (int s = 0; s < jobs; s++) {
            if (slot[s].pid <= 0)
                continue;
            drain(&slot[s]);
            pid = waitpid(slot[s].pid, &status, WNOHANG);
            if (pid == slot[s].pid) {
                failed += finish(&slot[s], status);
                slot[s].pid = 0;
                running--;
                done++;
                done_bytes += slot[s].bytes;
            }
            bytes += slot[s].bytes;
        }
        bar(o, done, h->n, bytes);
    }
    free(slot);
    return failed;
}
