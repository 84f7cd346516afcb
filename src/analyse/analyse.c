/* analyse.c - the analysis driver: takes the inputs found under a path (inputs.c), runs
 * each rank's analysis (analyse_rank.c: import, every analysis in order, step trace ->
 * overlap -> op statistics -> timeline -> host info -> ..., profiler_info_{rank}.json) in
 * parallel child processes (the seed's offline_analyse runs one Process per rank), then
 * HTA's analyses across the ranks of PyTorch traces; and the public nnp_analyse*,
 * nnp_offline_analyse and step-list calls. One failing analysis is logged and the others
 * still write their files: results are never lost to one bad step. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analyse/driver.h"
#include "analyse/hta.h"
#include "read/importers.h"
#include "util/util.h"

#define PROFILER_DIR "profiler"
/* Exit status a child uses to say "analysis failed" (its message went to the log). */
#define CHILD_FAILED 1
/* How often run_inputs looks whether a rank's child process ended (2 ms). */
#define CHILD_POLL_NS 2000000L

/* Room for a list of ranks in one message. */
#define LIST_CAP 1024
/* The folders nnp__inputs_suggest names when nothing is found (a few paths). */
#define SUGGEST_CAP 1024

static pid_t async_child = -1;

int nnp_analyse_options_init(nnp_analyse_options_t *o)
{
    if (!o)
        return NNP_EINVAL;
    memset(o, 0, sizeof(*o));
    o->is_developer = true;
    o->rank = -1;
    o->graph_id = -1;
    return NNP_OK;
}

/* ---- step list (seed 000 Profiler.analyse) ---- */

#define STEP_LIST_INTEGERS   "The elements of the parameter step_list must be integers."
#define STEP_LIST_CONTINUOUS "The elements of the parameter step_list must be continuous integers."
#define STEP_LIST_MAX_ITEMS  1000000

static int parse_u64(const char *s, const char *end, uint64_t *out)
{
    uint64_t v = 0;
    if (s == end)
        return -1;
    for (; s < end; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

int nnp_parse_step_list(const char *text, nnp_analyse_options_t *o)
{
    const char *dash, *p;
    uint64_t lo = UINT64_MAX, hi = 0, count = 0;

    if (!text || !o || !*text)
        return nnp__fail(NNP_EINVAL, STEP_LIST_INTEGERS);
    dash = strchr(text, '-');
    if (dash && !strchr(text, ',')) {
        if (parse_u64(text, dash, &lo) || parse_u64(dash + 1, text + strlen(text), &hi))
            return nnp__fail(NNP_EINVAL, STEP_LIST_INTEGERS);
        if (hi < lo)
            return nnp__fail(NNP_EINVAL, STEP_LIST_CONTINUOUS);
    } else {
        /* A list: continuous once sorted means max - min == count - 1 with no repeats;
         * the seed only checks max - min == len - 1 (repeats would then leave a gap). */
        for (p = text;; p++) {
            const char *end = strchr(p, ',');
            uint64_t v;
            if (!end)
                end = p + strlen(p);
            if (parse_u64(p, end, &v))
                return nnp__fail(NNP_EINVAL, STEP_LIST_INTEGERS);
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
            if (++count > STEP_LIST_MAX_ITEMS)
                return nnp__fail(NNP_EINVAL, STEP_LIST_CONTINUOUS);
            p = end;
            if (!*p)
                break;
        }
        if (hi - lo != count - 1)
            return nnp__fail(NNP_EINVAL, STEP_LIST_CONTINUOUS);
    }
    o->has_steps = true;
    o->step_first = lo;
    o->step_last = hi;
    return NNP_OK;
}

/* Where the ranks' results go: the report, and one byte per input (n) set for the inputs
 * with GPU events, which HTA's analyses read again (run_hta). */
typedef struct results {
    nnp_analyse_report_t *rep;
    uint8_t *gpu;
    int n;
} results_t;

/* Adds one rank's result to the report, keeping ranks sorted and distinct. */
static void report_add(results_t *res, const nnp_rank_result_t *r)
{
    nnp_analyse_report_t *rep = res->rep;
    int i;
    if (r->has_gpu && r->input >= 0 && r->input < res->n)
        res->gpu[r->input] = 1;
    rep->n_old += r->n_old;
    rep->n_empty += r->is_empty;
    if (r->rank < 0 || rep->n_ranks >= NNP_REPORT_MAX_RANKS)
        return;
    for (i = rep->n_ranks; i > 0 && rep->ranks[i - 1] > r->rank; i--)
        rep->ranks[i] = rep->ranks[i - 1];
    if (i > 0 && rep->ranks[i - 1] == r->rank) {
        memmove(&rep->ranks[i], &rep->ranks[i + 1], (size_t)(rep->n_ranks - i) * sizeof(int));
        return;
    }
    rep->ranks[i] = r->rank;
    rep->n_ranks++;
}

/* Waits until one of the n children in kids ends and takes it out of kids: those only,
 * never wait() for any child, as a program that analyses in-process (nnp_analyse,
 * nnprof.torch) has children of its own (DataLoader workers, subprocesses) that it waits
 * for itself. Meanwhile it reads the results waiting in the pipe (fd, non-blocking):
 * a child writes its result before it ends, and with more results than the pipe holds
 * (3,276 of 20 bytes in 64 KiB) it would wait on a full pipe for ever. Returns the
 * child's wait status, or -1 when it cannot be waited for. */
static int wait_kid(pid_t *kids, int *n, int fd, results_t *res)
{
    const struct timespec pause = {0, CHILD_POLL_NS};
    for (;;) {
        nnp_rank_result_t one;
        while (read(fd, &one, sizeof(one)) == (ssize_t)sizeof(one))
            report_add(res, &one);
        for (int i = 0; i < *n; i++) {
            int status = 0;
            pid_t r = waitpid(kids[i], &status, WNOHANG);
            if (r == 0 || (r < 0 && errno == EINTR))
                continue;
            kids[i] = kids[--*n];
            return r > 0 ? status : -1;
        }
        nanosleep(&pause, NULL);
    }
}

/* Analyses every input, at most jobs at a time, each in a child process (so one rank's
 * crash or memory cannot take the others down). Children tell their result through a
 * pipe (writes of one small record are atomic). */
static int run_inputs(const nnp_inputs_t *ins, const char *out_dir, const nnp_analyse_options_t *o,
                      results_t *res)
{
    int jobs = o->jobs > 0 ? o->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
    int running = 0, next = 0, done = 0, failed = 0, fds[2];
    pid_t *kids;
    nnp_rank_result_t r;

    if (jobs < 1)
        jobs = 1;
    if (jobs > ins->n)
        jobs = ins->n;
    if (ins->n == 1) {
        int rc = nnp__analyse_rank(ins, 0, out_dir, o, false, &r);
        report_add(res, &r);
        return rc;
    }
    kids = nnp__calloc((size_t)jobs, sizeof(pid_t));
    if (!kids)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    if (pipe(fds) != 0) {
        nnp__free(kids);
        return nnp__fail(NNP_EIO, "pipe: %s", strerror(errno));
    }
    if (fcntl(fds[0], F_SETFL, O_NONBLOCK) != 0) {
        int err = errno;
        close(fds[0]);
        close(fds[1]);
        nnp__free(kids);
        return nnp__fail(NNP_EIO, "pipe: %s", strerror(err));
    }
    while (done < ins->n) {
        int status;
        pid_t pid;
        while (running < jobs && next < ins->n) {
            pid = nnp__fork_helper();
            if (pid < 0) {
                int err = errno;
                close(fds[1]);
                while (running > 0) /* no zombie left behind */
                    (void)wait_kid(kids, &running, fds[0], res);
                close(fds[0]);
                nnp__free(kids);
                return nnp__fail(NNP_EIO, "fork: %s", strerror(err));
            }
            if (pid == 0) {
                nnp_analyse_options_t child = *o;
                int rc;
                close(fds[0]);
                child.quiet = true;
                rc = nnp__analyse_rank(ins, next, out_dir, &child, true, &r);
                if (write(fds[1], &r, sizeof(r)) != (ssize_t)sizeof(r))
                    rc = NNP_EIO;
                _exit(rc == NNP_OK ? 0 : CHILD_FAILED);
            }
            kids[running++] = pid;
            next++;
        }
        status = wait_kid(kids, &running, fds[0], res);
        done++;
        if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            failed++;
        nnp__analyse_progress(o, "ranks analysed", done, ins->n);
    }
    nnp__free(kids);
    close(fds[1]);
    while (read(fds[0], &r, sizeof(r)) == (ssize_t)sizeof(r))
        report_add(res, &r);
    close(fds[0]);
    if (failed)
        return nnp__fail(NNP_EIO, "%d of %d ranks failed to analyse (see the log above)", failed,
                         ins->n);
    return NNP_OK;
}

/* ---- Holistic Trace Analysis's analyses of PyTorch traces, across ranks (hta.h) ---- */

static const nnp_inputs_t *g_sort_inputs; /* qsort has no user pointer */

static int cmp_input_rank(const void *a, const void *b)
{
    int x = g_sort_inputs->v[*(const int *)a].rank, y = g_sort_inputs->v[*(const int *)b].rank;
    return (x > y) - (x < y);
}

/* After the per-rank analyses: the PyTorch (Kineto) inputs again, and our own raw inputs
 * whose analysis found GPU events (gpu[i]), one model at a time in rank order, through
 * HTA's analyses (which compare ranks, so no rank's child can do them alone). Its files go
 * to <out_dir>/hta/. */
static int run_hta(const nnp_inputs_t *ins, const uint8_t *gpu, const char *out_dir,
                   const nnp_analyse_options_t *o)
{
    int *idx = nnp__calloc((size_t)ins->n + 1, sizeof(*idx));
    nnp_hta_t *h = NULL;
    int k = 0, rc = NNP_OK;
    if (!idx)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    for (int i = 0; i < ins->n; i++)
        if ((ins->v[i].kind == NNP_INPUT_FOREIGN && ins->v[i].importer == &nnp__importer_kineto) ||
            (ins->v[i].kind == NNP_INPUT_RAW && gpu[i]))
            idx[k++] = i;
    g_sort_inputs = ins;
    qsort(idx, (size_t)k, sizeof(*idx), cmp_input_rank);
    if (k > 0)
        rc = nnp__hta_create(out_dir, &h);
    for (int i = 0; rc == NNP_OK && i < k; i++) {
        nnp_model_t m;
        int irc = nnp__model_init(&m);
        if (irc == NNP_OK)
            irc = nnp__input_import(ins, idx[i], &m);
        if (irc == NNP_OK && (o->rank < 0 || m.info.rank_id == o->rank) && nnp__hta_applies(&m))
            rc = nnp__hta_add_rank(h, &m);
        else if (irc != NNP_OK)
            NNP_LOG_E("%s: HTA analyses: cannot import: %s", ins->v[idx[i]].path, nnp_last_error());
        nnp__model_fini(&m);
    }
    if (h && rc == NNP_OK)
        rc = nnp__hta_finish(h);
    nnp__hta_destroy(h);
    nnp__free(idx);
    if (rc != NNP_OK)
        NNP_LOG_E("HTA analyses failed: %s", nnp_last_error());
    return rc;
}

/* Resolves path (whose last parts may not exist yet) for comparisons. */
static void resolve(const char *path, char *out)
{
    if (!realpath(path, out))
        nnp__strlcpy(out, path, NNP_PATH_MAX);
}

static bool is_under(const char *dir, const char *top)
{
    size_t n = strlen(top);
    return strncmp(dir, top, n) == 0 && (dir[n] == '\0' || dir[n] == '/');
}

/* Other tools' files are never written: the output folder may be neither the folder named
 * nor a folder the importers read (nor above one where our subfolders would meet it). */
static int check_not_input(const nnp_inputs_t *ins, const char *out_dir)
{
    char ro[NNP_PATH_MAX], rd[NNP_PATH_MAX], rf[NNP_PATH_MAX], folder[NNP_PATH_MAX];
    if (!ins->is_foreign)
        return NNP_OK;
    resolve(out_dir, ro);
    resolve(ins->data_dir, rd);
    if (strcmp(ro, rd) == 0)
        return nnp__fail(NNP_EINVAL,
                         "output folder '%s' is the data folder: other tools' files are never "
                         "written, so results need a folder of their own (default: %s/%s)",
                         out_dir, ins->data_dir, NNP_FOREIGN_OUT_DIR);
    for (int i = 0; i < ins->n; i++) {
        char *slash;
        nnp__strlcpy(folder, ins->v[i].path, sizeof(folder));
        if (!nnp__dir_exists(folder) && (slash = strrchr(folder, '/')) != NULL)
            *slash = '\0';
        resolve(folder, rf);
        if (strcmp(rf, rd) != 0 && is_under(ro, rf))
            return nnp__fail(NNP_EINVAL,
                             "output folder '%s' is inside '%s', which holds data being read: "
                             "choose a folder outside it",
                             out_dir, folder);
        if (is_under(rf, ro) && strcmp(rf, ro) != 0) {
            const char *rest = rf + strlen(ro) + 1;
            if (strncmp(rest, "host_info", strlen("host_info")) == 0 ||
                strncmp(rest, "rank_", strlen("rank_")) == 0)
                return nnp__fail(NNP_EINVAL,
                                 "output folder '%s' would write into '%s', which holds data "
                                 "being read: choose another folder",
                                 out_dir, folder);
        }
    }
    return NNP_OK;
}

/* Keeps the inputs of --rank N; none is an error naming the ranks there are. */
static int filter_rank(nnp_inputs_t *ins, int want)
{
    char have[LIST_CAP] = "";
    int k = 0;
    if (want < 0)
        return NNP_OK;
    for (int i = 0; i < ins->n; i++) {
        size_t len = strlen(have);
        if (len < sizeof(have) && ins->v[i].rank >= 0)
            snprintf(have + len, sizeof(have) - len, "%s%d", len ? ", " : "", ins->v[i].rank);
        if (ins->v[i].rank == want || ins->v[i].rank < 0)
            ins->v[k++] = ins->v[i];
        else
            nnp__free(ins->v[i].path); /* dropped: its path is ours to free */
    }
    ins->n = k; /* the dropped inputs' paths are freed above */
    if (k == 0)
        return nnp__fail(NNP_ENOENT, "--rank %d: no such rank; the data holds rank%s %s", want,
                         strchr(have, ',') ? "s" : "", have);
    return NNP_OK;
}

int nnp__analyse_path_report(const char *path, const nnp_analyse_options_t *o,
                             nnp_analyse_report_t *rep)
{
    nnp_inputs_t ins;
    results_t res = {0};
    const char *out_dir;
    int rc, dirfd = -1;

    memset(rep, 0, sizeof(*rep));
    rc = nnp__inputs_find(path, &ins);
    if (rc == NNP_OK && ins.n == 0 && ins.n_unranked == 0) {
        char below[SUGGEST_CAP];
        int k = nnp__inputs_suggest(path, below, sizeof(below));
        if (k > 0)
            rc = nnp__fail(NNP_ENOENT,
                           "no profiling data found in '%s' itself, but below it in %s: "
                           "analyse %s",
                           path, below, k > 1 ? "one of them (each is one run)" : "that folder");
        else
            rc = nnp__fail(NNP_ENOENT,
                           "no profiling data found in '%s' (expected a PROF_* raw directory, "
                           "a profiler/ directory holding them, other tools' data "
                           "(docs/IMPORT.md) or host_info_{rank}.csv)",
                           path);
    }
    if (rc == NNP_OK)
        rc = filter_rank(&ins, o->rank);
    out_dir = o->output_dir[0] ? o->output_dir : ins.out_dir;
    if (rc == NNP_OK && !nnp__strlcpy(rep->out_dir, out_dir, sizeof(rep->out_dir)))
        rc = nnp__fail(NNP_ETOOLONG, "output path too long: %s", out_dir);
    rep->is_foreign = ins.is_foreign;
    if (rc == NNP_OK)
        rc = check_not_input(&ins, out_dir);
    if (rc == NNP_OK)
        rc = nnp__mkdir_p(out_dir, 0700);
    if (rc == NNP_OK)
        rc = nnp__outdir_open(out_dir, &dirfd);
    if (dirfd >= 0)
        close(dirfd);
    if (rc == NNP_OK && ins.n > 0 && !(res.gpu = nnp__calloc((size_t)ins.n, 1)))
        rc = nnp__fail(NNP_ENOMEM, "out of memory");
    res.rep = rep;
    res.n = ins.n;
    if (rc == NNP_OK && ins.n > 0)
        rc = run_inputs(&ins, out_dir, o, &res);
    if (rc == NNP_OK && ins.n > 0)
        rc = run_hta(&ins, res.gpu, out_dir, o);
    nnp__free(res.gpu);
    if (rc == NNP_OK && o->rank >= 0 && rep->n_ranks == 0)
        rc = nnp__fail(NNP_ENOENT, "--rank %d: no such rank in '%s'", o->rank, path);
    if (rc == NNP_OK && ins.n_unranked > 0)
        rc = nnp__fail(NNP_EINVAL,
                       "%d raw director%s left out: no rank could be given (see the log above)",
                       ins.n_unranked, ins.n_unranked == 1 ? "y was" : "ies were");
    nnp__inputs_fini(&ins);
    return rc;
}

int nnp__analyse_path(const char *path, const nnp_analyse_options_t *o)
{
    nnp_analyse_report_t *rep = nnp__malloc(sizeof(*rep));
    int rc;
    if (!rep)
        return nnp__fail(NNP_ENOMEM, "out of memory");
    rc = nnp__analyse_path_report(path, o, rep);
    nnp__free(rep);
    return rc;
}

int nnp_offline_analyse(const char *path, const nnp_analyse_options_t *o)
{
    nnp_analyse_options_t d;
    char prof[NNP_PATH_MAX];
    if (!o) {
        nnp_analyse_options_init(&d);
        o = &d;
    }
    if (!path || nnp__path_join(prof, sizeof(prof), path, PROFILER_DIR) != NNP_OK ||
        !nnp__dir_exists(prof))
        return nnp__fail(NNP_ENOENT, "There must be a profiler folder in the data path: %s.",
                         path ? path : "(null)");
    return nnp__analyse_path(path, o);
}

int nnp_analyse(nnp_session_t *s, const nnp_analyse_options_t *o)
{
    nnp_analyse_options_t d;
    const char *raw;
    int rc;
    if (!s)
        return nnp__fail(NNP_EINVAL, "session is NULL");
    if (!o) {
        nnp_analyse_options_init(&d);
        o = &d;
    }
    if (nnp_is_collecting()) {
        rc = nnp_session_stop(s);
        if (rc != NNP_OK)
            return rc;
    }
    /* Also makes the raw directory of a session that recorded nothing: an empty run. */
    rc = nnp_session_flush(s);
    if (rc != NNP_OK)
        return rc;
    raw = nnp_session_raw_dir(s);
    if (!o->async)
        return nnp__analyse_path(raw, o);
    if (async_child > 0)
        return nnp__fail(NNP_ESTATE, "an asynchronous analysis is still running; call "
                                     "nnp_analyse_wait() first");
    async_child = nnp__fork_helper();
    if (async_child < 0) {
        async_child = -1;
        return nnp__fail(NNP_EIO, "fork: %s", strerror(errno));
    }
    if (async_child == 0) {
        nnp_analyse_options_t child = *o;
        child.quiet = true;
        _exit(nnp__analyse_path(raw, &child) == NNP_OK ? 0 : CHILD_FAILED);
    }
    return NNP_OK;
}

int nnp_analyse_wait(void)
{
    int status;
    pid_t pid = async_child;
    if (pid <= 0)
        return NNP_OK;
    async_child = -1;
    if (waitpid(pid, &status, 0) < 0)
        return nnp__fail(NNP_EIO, "waitpid: %s", strerror(errno));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return nnp__fail(NNP_EIO, "the asynchronous analysis failed (see the log)");
    return NNP_OK;
}
