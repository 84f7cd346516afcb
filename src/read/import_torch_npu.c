/* import_torch_npu.c - importer of torch_npu / msprof-analyze outputs (issue #7):
 * trace_view.json (Chrome trace: Python cpu_op -> ops, ProfilerStep#N -> steps, Ascend
 * Hardware tasks -> kernels, HCCL -> comms), kernel_details.csv (-> kernels),
 * step_trace_time.csv (cross-checked against the steps), communication.json (-> comms when
 * the trace has none) and the cluster outputs cluster_step_trace_time.csv /
 * cluster_communication.json (parsed and reported; rank_size). A bad file or event is
 * logged (file, event index or line, why); the rest is still imported. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nnprof/nnprof.h"
#include "read/importers.h"
#include "read/json_stream.h"
#include "read/torch_npu.h"
#include "util/util.h"

typedef enum proc_kind { PK_OTHER, PK_PYTHON, PK_HARDWARE, PK_HCCL } proc_kind_t;

typedef struct tv {
    nnp_model_t *m;
    const char *path;
    bool skip_tasks; /* kernel_details.csv supplies the kernels */
    int64_t pid[MAX_PROCS];
    proc_kind_t kind[MAX_PROCS];
    size_t n_procs;
    uint64_t bad, warnings;
    int rc;
} tv_t;

const char *nnp__tnpu_trim(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* "123.456" µs as exact ns (decimals past the ns truncated); blanks around allowed. */
bool nnp__tnpu_parse_us_ns(const char *s, int64_t *out)
{
    return nnp__parse_decimal_ns(s, US_NS_DIGITS, out);
}

/* A time member (string or number, µs) as ns. A number is first turned back into its
 * shortest round-trip text (what the writer printed) and parsed as decimal text, because
 * a µs timestamp of 16 digits times 1000 is not exact in a double (off by up to 8 ns). */
bool nnp__tnpu_json_us_ns(const cJSON *v, int64_t *out)
{
    char text[DOUBLE_TEXT_CAP];
    if (cJSON_IsString(v))
        return nnp__tnpu_parse_us_ns(v->valuestring, out);
    if (!cJSON_IsNumber(v) || !(v->valuedouble > -9e15 && v->valuedouble < 9e15))
        return false;
    for (int digits = DOUBLE_MIN_DIGITS; digits <= DOUBLE_MAX_DIGITS; digits++) {
        snprintf(text, sizeof(text), "%.*g", digits, v->valuedouble);
        if (strtod(text, NULL) == v->valuedouble)
            break;
    }
    if (strchr(text, 'e') || strchr(text, 'E')) /* tiny values: plain fixed notation */
        snprintf(text, sizeof(text), "%.3f", v->valuedouble);
    return nnp__tnpu_parse_us_ns(text, out);
}

static bool json_u32(const cJSON *v, uint32_t *out)
{
    int64_t ns;
    if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= UINT32_MAX) {
        *out = (uint32_t)v->valuedouble;
        return true;
    }
    if (cJSON_IsString(v) && nnp__tnpu_parse_us_ns(v->valuestring, &ns) && ns >= 0 &&
        ns / NS_PER_US <= UINT32_MAX) {
        *out = (uint32_t)(ns / NS_PER_US);
        return true;
    }
    return false;
}

static void NNP_PRINTF(3, 4) ev_warn(tv_t *t, uint64_t index, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    t->bad++;
    if (++t->warnings > MAX_ROW_WARNINGS)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    NNP_LOG_W("torch_npu import: '%s' event %llu: %s", t->path, (unsigned long long)index, msg);
}

/* Pass 1: process names from the "M" process_name events. */
static int meta_cb(void *user, const cJSON *e, uint64_t index)
{
    tv_t *t = user;
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
    const cJSON *pid = cJSON_GetObjectItemCaseSensitive(e, "pid");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
    const cJSON *pname = cJSON_GetObjectItemCaseSensitive(args, "name");
    const char *s;
    (void)index;
    if (!cJSON_IsString(ph) || strcmp(ph->valuestring, "M") != 0 || !cJSON_IsString(name) ||
        strcmp(name->valuestring, "process_name") != 0 || !cJSON_IsNumber(pid) ||
        !cJSON_IsString(pname) || t->n_procs == MAX_PROCS)
        return 0;
    s = pname->valuestring;
    t->pid[t->n_procs] = (int64_t)pid->valuedouble;
    t->kind[t->n_procs] = strcmp(s, PROC_PYTHON) == 0                     ? PK_PYTHON
                          : strcmp(s, PROC_HARDWARE) == 0                 ? PK_HARDWARE
                          : strncmp(s, PROC_HCCL, strlen(PROC_HCCL)) == 0 ? PK_HCCL
                                                                          : PK_OTHER;
    t->n_procs++;
    return 0;
}

static proc_kind_t proc_of(const tv_t *t, int64_t pid)
{
    for (size_t i = 0; i < t->n_procs; i++)
        if (t->pid[i] == pid)
            return t->kind[i];
    return PK_OTHER;
}

nnp_comm_kind_t nnp__tnpu_comm_kind(const char *name)
{
    static const struct {
        const char *tag;
        nnp_comm_kind_t kind;
    } tags[] = {{"allreduce", NNP_COMM_ALLREDUCE},
                {"allgather", NNP_COMM_ALLGATHER},
                {"reducescatter", NNP_COMM_REDUCESCATTER},
                {"broadcast", NNP_COMM_BROADCAST},
                {"alltoall", NNP_COMM_ALLTOALL},
                {"send", NNP_COMM_SEND},
                {"receive", NNP_COMM_RECV},
                {"recv", NNP_COMM_RECV}};
    char low[128];
    size_t n = 0;
    for (; name[n] && n + 1 < sizeof(low); n++)
        low[n] = (char)(name[n] >= 'A' && name[n] <= 'Z' ? name[n] - 'A' + 'a' : name[n]);
    low[n] = '\0';
    for (size_t i = 0; i < NNP_ARRAY_LEN(tags); i++)
        if (strstr(low, tags[i].tag))
            return tags[i].kind;
    return NNP_COMM_OTHER;
}

/* Pass 2: the "X" events of the processes we know. */
static int event_cb(void *user, const cJSON *e, uint64_t index)
{
    tv_t *t = user;
    nnp_model_t *m = t->m;
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
    const cJSON *pid = cJSON_GetObjectItemCaseSensitive(e, "pid");
    const cJSON *tid = cJSON_GetObjectItemCaseSensitive(e, "tid");
    const cJSON *cat = cJSON_GetObjectItemCaseSensitive(e, "cat");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
    int64_t ts, dur;
    proc_kind_t pk;
    size_t i;
    uint32_t stream = 0;

    if (!cJSON_IsString(ph) || strcmp(ph->valuestring, "X") != 0)
        return 0;
    if (!cJSON_IsNumber(pid))
        return 0;
    pk = proc_of(t, (int64_t)pid->valuedouble);
    if (pk == PK_OTHER)
        return 0;
    if (!cJSON_IsString(name) ||
        !nnp__tnpu_json_us_ns(cJSON_GetObjectItemCaseSensitive(e, "ts"), &ts) ||
        !nnp__tnpu_json_us_ns(cJSON_GetObjectItemCaseSensitive(e, "dur"), &dur) || dur < 0) {
        ev_warn(t, index, "an X event without a name, or with a bad 'ts' or 'dur': skipped");
        return 0;
    }
    if (pk == PK_PYTHON) {
        uint64_t os_tid =
            cJSON_IsNumber(tid) && tid->valuedouble >= 0 ? (uint64_t)tid->valuedouble : 0;
        size_t th;
        if (!cJSON_IsString(cat) || strcmp(cat->valuestring, CAT_CPU_OP) != 0)
            return 0;
        if (strncmp(name->valuestring, STEP_PREFIX, strlen(STEP_PREFIX)) == 0) {
            char *end;
            unsigned long long id;
            errno = 0;
            id = strtoull(name->valuestring + strlen(STEP_PREFIX), &end, 10);
            if (errno || *end) {
                ev_warn(t, index, "step name '%s' has no number: skipped", name->valuestring);
                return 0;
            }
            if ((i = nnp__table_push(&m->steps.t)) == SIZE_MAX)
                goto oom;
            m->steps.id[i] = id;
            m->steps.start_ns[i] = ts;
            m->steps.end_ns[i] = ts + dur;
            return 0;
        }
        th = nnp__model_thread(m, os_tid, (uint32_t)pid->valuedouble);
        if (th == SIZE_MAX || (i = nnp__table_push(&m->ops.t)) == SIZE_MAX)
            goto oom;
        m->ops.start_ns[i] = ts;
        m->ops.end_ns[i] = ts + dur;
        m->ops.name[i] = nnp__model_intern_cstr(m, name->valuestring);
        m->ops.type[i] = m->ops.name[i];
        m->ops.thread[i] = (uint32_t)th;
        return 0;
    }
    json_u32(cJSON_GetObjectItemCaseSensitive(args, "Stream Id"), &stream);
    if (pk == PK_HARDWARE) {
        const cJSON *tt = cJSON_GetObjectItemCaseSensitive(args, "Task Type");
        if (t->skip_tasks)
            return 0;
        if ((i = nnp__table_push(&m->kernels.t)) == SIZE_MAX)
            goto oom;
        m->kernels.start_ns[i] = ts;
        m->kernels.end_ns[i] = ts + dur;
        m->kernels.name[i] = nnp__model_intern_cstr(m, name->valuestring);
        m->kernels.type[i] = cJSON_IsString(tt) ? nnp__model_intern_cstr(m, tt->valuestring) : 0;
        m->kernels.stream_id[i] = stream;
        return 0;
    }
    /* HCCL: the op-level events (the "Communication Kernel" thread carries one per op;
     * per-plane tasks carry a notify_id and are left out). */
    if (cJSON_GetObjectItemCaseSensitive(args, "notify_id"))
        return 0;
    if ((i = nnp__table_push(&m->comms.t)) == SIZE_MAX)
        goto oom;
    m->comms.start_ns[i] = ts;
    m->comms.end_ns[i] = ts + dur;
    m->comms.name[i] = nnp__model_intern_cstr(m, name->valuestring);
    m->comms.kind[i] = (uint32_t)nnp__tnpu_comm_kind(name->valuestring);
    m->comms.stream_id[i] = stream;
    m->comms.peer[i] = -1;
    return 0;
oom:
    t->rc = nnp__fail(NNP_ENOMEM, "out of memory importing '%s'", t->path);
    return t->rc;
}

/* Reports what the stream met: a truncated file or bad elements are logged. */
static void stream_report(const tv_t *t, const nnp_json_stream_report_t *rep)
{
    if (rep->no_array)
        NNP_LOG_W("torch_npu import: '%s': no top-level array or traceEvents array", t->path);
    if (rep->truncated)
        NNP_LOG_W("torch_npu import: '%s' is truncated: it ends inside the event array after "
                  "%llu events (byte %llu); the events before are imported",
                  t->path, (unsigned long long)rep->elements, (unsigned long long)rep->bytes);
    if (rep->bad_elements)
        NNP_LOG_W("torch_npu import: '%s': %llu events are not valid JSON (first at byte %llu): "
                  "skipped",
                  t->path, (unsigned long long)rep->bad_elements,
                  (unsigned long long)rep->first_bad_offset);
    if (t->warnings > MAX_ROW_WARNINGS)
        NNP_LOG_W("torch_npu import: '%s': %llu more bad events not logged", t->path,
                  (unsigned long long)(t->warnings - MAX_ROW_WARNINGS));
}

static int import_trace_view(const char *path, nnp_model_t *m, bool skip_tasks)
{
    tv_t t;
    nnp_json_stream_report_t rep;
    int rc;
    memset(&t, 0, sizeof(t));
    t.m = m;
    t.path = path;
    t.skip_tasks = skip_tasks;
    rc = nnp__json_stream_array(path, meta_cb, &t, &rep);
    if (rc == NNP_OK)
        rc = nnp__json_stream_array(path, event_cb, &t, &rep);
    if (t.rc != NNP_OK)
        return t.rc;
    if (rc != NNP_OK) {
        NNP_LOG_W("torch_npu import: cannot read '%s': %s", path, nnp_last_error());
        return rc;
    }
    stream_report(&t, &rep);
    if (rep.no_array)
        return nnp__fail(NNP_ECORRUPT, "'%s' holds no event array", path);
    return NNP_OK;
}

/* ---- finding and importing ---- */

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool dir_has(const char *dir, const char *name)
{
    char p[NNP_PATH_MAX];
    return nnp__path_join(p, sizeof(p), dir, name) == NNP_OK && is_file(p);
}

/* The files this importer reads. */
static const char *const input_names[] = {TRACE_VIEW,    KERNEL_DETAILS,     STEP_TRACE_TIME,
                                          COMMUNICATION, CLUSTER_STEP_TRACE, CLUSTER_COMMUNICATION};

static bool is_input_name(const char *base)
{
    for (size_t i = 0; i < NNP_ARRAY_LEN(input_names); i++)
        if (strcmp(base, input_names[i]) == 0)
            return true;
    return false;
}

/* True when dir holds a file this importer reads. */
static bool has_inputs(const char *dir)
{
    for (size_t i = 0; i < NNP_ARRAY_LEN(input_names); i++)
        if (dir_has(dir, input_names[i]))
            return true;
    return false;
}

/* dir/<sub>/cluster_analysis_output for a sub-directory of dir (the second level). */
static bool find_cluster_below(const char *dir, char *out, size_t cap)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    bool found = false;
    if (!d)
        return false;
    while (!found && (e = readdir(d)) != NULL) {
        char sub[NNP_PATH_MAX];
        if (e->d_name[0] == '.' || nnp__path_join(sub, sizeof(sub), dir, e->d_name) != NNP_OK ||
            nnp__path_join(out, cap, sub, CLUSTER_DIR) != NNP_OK)
            continue;
        found = has_inputs(out);
    }
    closedir(d);
    return found;
}

static int find(const char *dir, nnp_foreign_input_t *out, int cap)
{
    const char *base = strrchr(dir, '/');
    char sub[NNP_PATH_MAX];
    base = base ? base + 1 : dir;
    if (cap <= 0)
        return 0;
    out[0].rank = -1;
    if (is_file(dir)) {
        if (!is_input_name(base))
            return 0;
        return nnp__strlcpy(out[0].path, dir, sizeof(out[0].path)) ? 1 : 0;
    }
    if (nnp__path_join(sub, sizeof(sub), dir, PROFILER_OUTPUT) == NNP_OK && has_inputs(sub))
        return nnp__strlcpy(out[0].path, sub, sizeof(out[0].path)) ? 1 : 0;
    if (has_inputs(dir))
        return nnp__strlcpy(out[0].path, dir, sizeof(out[0].path)) ? 1 : 0;
    /* msprof-analyze's cluster outputs: dir/cluster_analysis_output, or one level lower. */
    if (nnp__path_join(sub, sizeof(sub), dir, CLUSTER_DIR) == NNP_OK && has_inputs(sub))
        return nnp__strlcpy(out[0].path, sub, sizeof(out[0].path)) ? 1 : 0;
    if (find_cluster_below(dir, sub, sizeof(sub)))
        return nnp__strlcpy(out[0].path, sub, sizeof(out[0].path)) ? 1 : 0;
    return 0;
}

static int import(const char *input, nnp_model_t *m)
{
    static const char *const extra[] = {STEP_TRACE_TIME, CLUSTER_STEP_TRACE, COMMUNICATION,
                                        CLUSTER_COMMUNICATION};
    char dir[NNP_PATH_MAX], tvp[NNP_PATH_MAX], kdp[NNP_PATH_MAX], p[NNP_PATH_MAX];
    bool have_tv, have_kd;
    int n_ok = 0, rc;
    nnp_foreign_input_t in;

    if (find(input, &in, 1) != 1)
        return nnp__fail(NNP_ENOENT, "no torch_npu or msprof-analyze file in '%s'", input);
    if (!nnp__strlcpy(dir, in.path, sizeof(dir)))
        return nnp__fail(NNP_ETOOLONG, "path too long: '%s'", input);
    if (is_file(dir)) {
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        else
            nnp__strlcpy(dir, ".", sizeof(dir));
    }
    have_tv = nnp__path_join(tvp, sizeof(tvp), dir, TRACE_VIEW) == NNP_OK && is_file(tvp);
    have_kd = nnp__path_join(kdp, sizeof(kdp), dir, KERNEL_DETAILS) == NNP_OK && is_file(kdp);
    m->info.rank_id = 0; /* torch_npu names no rank in these files */
    if (!m->info.source_format && !(m->info.source_format = nnp__strdup(FORMAT_NAME)))
        return nnp__fail(NNP_ENOMEM, "out of memory");
    if (!m->info.source && !(m->info.source = nnp__strdup(dir)))
        return nnp__fail(NNP_ENOMEM, "out of memory");
    /* Both files list the same device tasks: kernel_details.csv has their op types, so it
     * supplies the kernels when present and trace_view.json's task events are left out. */
    if (have_kd) {
        rc = nnp__tnpu_import_kernel_details(kdp, m);
        if (rc == NNP_ENOMEM)
            return rc;
        n_ok += rc == NNP_OK;
        have_kd = rc == NNP_OK;
    }
    if (have_tv) {
        rc = import_trace_view(tvp, m, have_kd);
        if (rc == NNP_ENOMEM)
            return rc;
        n_ok += rc == NNP_OK;
    }
    /* The rest after the trace: they fill only what it lacks (comms) or are checked. */
    for (size_t k = 0; k < NNP_ARRAY_LEN(extra); k++) {
        if (nnp__path_join(p, sizeof(p), dir, extra[k]) != NNP_OK || !is_file(p))
            continue;
        if (k == 0)
            rc = nnp__tnpu_import_step_trace_time(p, m);
        else if (k == 1)
            rc = nnp__tnpu_import_cluster_step_trace(p, m);
        else
            rc = nnp__tnpu_import_communication(p, m, m->comms.t.n == 0);
        if (rc == NNP_ENOMEM)
            return rc;
        n_ok += rc == NNP_OK;
    }
    if (n_ok == 0)
        return nnp__fail(NNP_ECORRUPT, "no torch_npu file in '%s' could be read", dir);
    return NNP_OK;
}

const nnp_importer_t nnp__importer_torch_npu = {"torch_npu", find, import};
