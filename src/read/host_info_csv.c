/* host_info_csv.c - reads MindSpore's host_info_{rank}.csv into the model's host rows
 * (host_info_csv.h). A byte-level RFC 4180 state machine over a fixed read buffer keeps one
 * record in memory at a time; rows keep their file order, which the seed's start/end pairing
 * depends on. Called by the analyse driver before nnp__model_finish(). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read/host_info_csv.h"
#include "util/util.h"

/* Bytes read from the file per read(2): large enough that syscalls do not dominate. */
#define READ_CHUNK_BYTES 65536
/* Hard cap of one record (STYLE 5, curl dynbuf). MindSpore rows are under 1 KiB; a record
 * this long means a broken file (e.g. an unterminated quote), not data. */
#define MAX_RECORD_BYTES     (1u << 20)
#define INITIAL_RECORD_BYTES 1024u
/* Fields kept per record; the host_info header has 11. Later fields are counted only. */
#define MAX_FIELDS 64
/* Open-addressing table of threads: initial slots (a power of two), grown at 1/2 load. */
#define INITIAL_THREAD_SLOTS 64u
/* One microsecond and one kB in the model's units. */
#define NS_PER_US    1000
#define BYTES_PER_KB 1024u
/* The UTF-8 byte order mark some editors prepend. */
/* host_info_{rank}.csv: the seed's name, and the sub-directories it lives in. */
#define HOST_CSV_PREFIX "host_info_"
#define HOST_CSV_SUFFIX ".csv"

/* The seed's header (MindSpore HostDataHeader), in one list so the enum and the names
 * cannot drift (STYLE 2). */
#define HOST_COLUMNS(XX)                                                                           \
    XX(TID, "tid")                                                                                 \
    XX(PID, "pid")                                                                                 \
    XX(PARENT_PID, "parent_pid")                                                                   \
    XX(MODULE, "module_name")                                                                      \
    XX(EVENT, "event")                                                                             \
    XX(STAGE, "stage")                                                                             \
    XX(LEVEL, "level")                                                                             \
    XX(START_END, "start_end")                                                                     \
    XX(CUSTOM_INFO, "custom_info")                                                                 \
    XX(MEMORY, "memory_usage(kB)")                                                                 \
    XX(TS, "time_stamp(us)")

enum host_col {
#define HOST_COL_ENUM_(id, name) COL_##id,
    HOST_COLUMNS(HOST_COL_ENUM_)
#undef HOST_COL_ENUM_
        N_COLS
};

static const char *const col_names[N_COLS] = {
#define HOST_COL_NAME_(id, name) name,
    HOST_COLUMNS(HOST_COL_NAME_)
#undef HOST_COL_NAME_
};

/* ---- the CSV reader ---- */

enum csv_state { ST_FIELD_START, ST_UNQUOTED, ST_QUOTED, ST_QUOTE_IN_QUOTED };

typedef struct csv_reader {
    int fd;
    const char *path;
    char *chunk;
    size_t chunk_len, chunk_pos;
    bool eof, pending_cr, at_start;
    char *rec; /* the record's fields, each NUL-terminated */
    size_t rec_len, rec_cap;
    size_t field_off[MAX_FIELDS];
    size_t n_fields;   /* fields in the record (only MAX_FIELDS kept) */
    uint64_t line;     /* physical line being read, 1-based */
    uint64_t rec_line; /* line the current record starts on */
    const char *bad;   /* why the record is unusable, NULL when fine */
} csv_reader_t;

/* Next byte with Python's universal newlines applied (CR and CRLF read as LF), as the seed
 * opens the file in text mode before csv.DictReader sees it. -1 at end, -2 on error. */
static int get_byte(csv_reader_t *r)
{
    for (;;) {
        int c;
        if (r->chunk_pos == r->chunk_len) {
            ssize_t n;
            if (r->eof)
                return -1;
            do {
                n = read(r->fd, r->chunk, READ_CHUNK_BYTES);
            } while (n < 0 && errno == EINTR);
            if (n < 0)
                return -2;
            if (n == 0) {
                r->eof = true;
                return -1;
            }
            r->chunk_len = (size_t)n;
            r->chunk_pos = 0;
            /* Skip a UTF-8 BOM at the very start (Excel writes one). */
            if (r->at_start && r->chunk_len >= NNP_UTF8_BOM_LEN &&
                memcmp(r->chunk, NNP_UTF8_BOM, NNP_UTF8_BOM_LEN) == 0)
                r->chunk_pos = NNP_UTF8_BOM_LEN;
            r->at_start = false;
            continue;
        }
        c = (unsigned char)r->chunk[r->chunk_pos++];
        if (r->pending_cr) {
            r->pending_cr = false;
            if (c == '\n')
                continue; /* the LF of a CRLF: the CR already ended the line */
        }
        if (c == '\r') {
            r->pending_cr = true;
            c = '\n';
        }
        if (c == '\n')
            r->line++;
        return c;
    }
}

/* Appends one byte to the record; past MAX_RECORD_BYTES the record is marked bad and the
 * rest of it only parsed. Returns NNP_OK or NNP_ENOMEM. */
static int rec_put(csv_reader_t *r, char c)
{
    if (r->rec_len + 1 >= MAX_RECORD_BYTES) {
        r->bad = "record longer than 1 MiB";
        return NNP_OK;
    }
    if (r->rec_len + 1 >= r->rec_cap) {
        size_t ncap = r->rec_cap ? r->rec_cap * 2 : INITIAL_RECORD_BYTES;
        char *p;
        if (ncap > MAX_RECORD_BYTES)
            ncap = MAX_RECORD_BYTES;
        p = nnp__realloc(r->rec, ncap);
        if (!p)
            return nnp__fail(NNP_ENOMEM, "out of memory reading '%s'", r->path);
        r->rec = p;
        r->rec_cap = ncap;
    }
    r->rec[r->rec_len++] = c;
    return NNP_OK;
}

static int field_end(csv_reader_t *r, size_t start)
{
    int rc = rec_put(r, '\0');
    if (r->n_fields < MAX_FIELDS)
        r->field_off[r->n_fields] = start;
    r->n_fields++;
    return rc;
}

/* Reads the next record. Returns 1 with a record (r->bad set when it is unusable), 0 at
 * the end of the file, or a negative NNP_E* code. Blank lines are skipped, as
 * csv.DictReader does. Follows Python's csv module with its default (lenient) dialect: a
 * quote inside an unquoted field is literal, text after a closing quote is appended. */
static int next_record(csv_reader_t *r)
{
    enum csv_state st = ST_FIELD_START;
    size_t start = 0;
    bool started = false;
    int rc;

    r->rec_len = 0;
    r->n_fields = 0;
    r->bad = NULL;
    r->rec_line = r->line;
    for (;;) {
        int c = get_byte(r);
        if (c == -2)
            return nnp__fail(NNP_EIO, "cannot read '%s' near line %llu: %s", r->path,
                             (unsigned long long)r->line, strerror(errno));
        if (c == -1) {
            if (!started)
                return 0;
            if (st == ST_QUOTED)
                r->bad = "the file ends inside a quoted field";
            rc = field_end(r, start);
            return rc != NNP_OK ? rc : 1;
        }
        if (c == '\0') {
            r->bad = "NUL byte in the record";
            started = true;
            continue;
        }
        if (c == '\n' && !started && st == ST_FIELD_START) {
            r->rec_line = r->line; /* a blank line: the record starts on the next one */
            continue;
        }
        started = true;
        rc = NNP_OK;
        switch (st) {
        case ST_FIELD_START:
            start = r->rec_len;
            if (c == '"') {
                st = ST_QUOTED;
            } else if (c == ',') {
                rc = field_end(r, start);
            } else if (c == '\n') {
                rc = field_end(r, start);
                return rc != NNP_OK ? rc : 1;
            } else {
                rc = rec_put(r, (char)c);
                st = ST_UNQUOTED;
            }
            break;
        case ST_UNQUOTED:
            if (c == ',') {
                rc = field_end(r, start);
                st = ST_FIELD_START;
            } else if (c == '\n') {
                rc = field_end(r, start);
                return rc != NNP_OK ? rc : 1;
            } else {
                rc = rec_put(r, (char)c);
            }
            break;
        case ST_QUOTED:
            if (c == '"')
                st = ST_QUOTE_IN_QUOTED;
            else
                rc = rec_put(r, (char)c);
            break;
        case ST_QUOTE_IN_QUOTED:
            if (c == '"') {
                rc = rec_put(r, '"'); /* "" is one quote */
                st = ST_QUOTED;
            } else if (c == ',') {
                rc = field_end(r, start);
                st = ST_FIELD_START;
            } else if (c == '\n') {
                rc = field_end(r, start);
                return rc != NNP_OK ? rc : 1;
            } else {
                rc = rec_put(r, (char)c);
                st = ST_UNQUOTED;
            }
            break;
        }
        if (rc != NNP_OK)
            return rc;
    }
}

static const char *field(const csv_reader_t *r, size_t i)
{
    return r->rec + r->field_off[i];
}

/* ---- numbers: plain decimal only (what MindSpore writes); no spaces, no '+' ---- */

static bool parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    if (!*s)
        return false;
    for (; *s; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (d > 9 || d > max || v > (max - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

static bool parse_i64(const char *s, int64_t *out)
{
    uint64_t mag;
    bool neg = *s == '-';
    if (!parse_u64(s + neg, neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, &mag))
        return false;
    *out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    return true;
}

/* ---- threads: one model row per (tid, pid, parent_pid), the seed's per-row strings ---- */

typedef struct thread_map {
    uint32_t *slots; /* thread index + 1, 0 = empty */
    size_t cap;
} thread_map_t;

static size_t thread_hash(uint64_t tid, uint32_t pid, uint32_t ppid)
{
    /* splitmix64 finaliser: cheap, and spreads sequential tids over the table. */
    uint64_t h = tid ^ ((uint64_t)pid << 32) ^ ppid;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    return (size_t)(h ^ (h >> 31));
}

static bool thread_is(const nnp_model_t *m, size_t i, uint64_t tid, uint32_t pid, uint32_t ppid)
{
    return m->threads.tid[i] == tid && m->threads.pid[i] == pid && m->threads.parent_pid[i] == ppid;
}

static void thread_map_put(thread_map_t *tm, const nnp_model_t *m, size_t idx)
{
    size_t i = thread_hash(m->threads.tid[idx], m->threads.pid[idx], m->threads.parent_pid[idx]);
    for (i &= tm->cap - 1; tm->slots[i]; i = (i + 1) & (tm->cap - 1))
        ;
    tm->slots[i] = (uint32_t)idx + 1;
}

/* Rebuilds the map over every thread of the model with cap slots. */
static int thread_map_grow(thread_map_t *tm, const nnp_model_t *m, size_t cap)
{
    uint32_t *slots = nnp__calloc(cap, sizeof(uint32_t));
    if (!slots)
        return nnp__fail(NNP_ENOMEM, "out of memory importing host_info threads");
    nnp__free(tm->slots);
    tm->slots = slots;
    tm->cap = cap;
    for (size_t i = 0; i < m->threads.t.n; i++)
        thread_map_put(tm, m, i);
    return NNP_OK;
}

/* The thread row for (tid, pid, ppid), added when new. Not nnp__model_thread(): it keys on
 * tid alone, and the seed keys on the tid and pid strings together. SIZE_MAX on OOM. */
static size_t thread_get(thread_map_t *tm, nnp_model_t *m, uint64_t tid, uint32_t pid,
                         uint32_t ppid)
{
    size_t i = thread_hash(tid, pid, ppid) & (tm->cap - 1), idx;
    for (; tm->slots[i]; i = (i + 1) & (tm->cap - 1)) {
        if (thread_is(m, tm->slots[i] - 1, tid, pid, ppid))
            return tm->slots[i] - 1;
    }
    if ((m->threads.t.n + 1) * 2 > tm->cap && thread_map_grow(tm, m, tm->cap * 2) != NNP_OK)
        return SIZE_MAX;
    idx = nnp__table_push(&m->threads.t);
    if (idx == SIZE_MAX)
        return SIZE_MAX;
    m->threads.tid[idx] = tid;
    m->threads.pid[idx] = pid;
    m->threads.parent_pid[idx] = ppid;
    thread_map_put(tm, m, idx);
    return idx;
}

/* ---- the importer ---- */

typedef struct import {
    const char *path;
    nnp_model_t *m;
    csv_reader_t r;
    size_t col_idx[N_COLS]; /* field index of each column */
    size_t n_needed;        /* fields a row must have: max(col_idx) + 1 */
    thread_map_t threads;
    uint64_t n_rows, n_skipped;
} import_t;

/* Logs one skipped row (the first NNP_HOST_CSV_MAX_WARNINGS of them). */
static void NNP_PRINTF(3, 4) row_warn(import_t *im, uint64_t line, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    if (++im->n_skipped > NNP_HOST_CSV_MAX_WARNINGS)
        return;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    NNP_LOG_W("host_info CSV '%s' line %llu: %s; row skipped", im->path, (unsigned long long)line,
              why);
}

static int read_header(import_t *im)
{
    csv_reader_t *r = &im->r;
    int rc = next_record(r);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return 0;
    if (r->bad)
        return nnp__fail(NNP_ECORRUPT, "host_info CSV '%s' line %llu: bad header: %s", im->path,
                         (unsigned long long)r->rec_line, r->bad);
    for (size_t c = 0; c < N_COLS; c++)
        im->col_idx[c] = SIZE_MAX;
    /* The last of duplicate names wins, as in csv.DictReader's dict(zip(header, row)). */
    for (size_t f = 0; f < r->n_fields && f < MAX_FIELDS; f++) {
        for (size_t c = 0; c < N_COLS; c++) {
            if (strcmp(field(r, f), col_names[c]) == 0)
                im->col_idx[c] = f;
        }
    }
    im->n_needed = 0;
    for (size_t c = 0; c < N_COLS; c++) {
        if (im->col_idx[c] == SIZE_MAX)
            return nnp__fail(NNP_ECORRUPT,
                             "host_info CSV '%s' line %llu: the header has no column '%s'",
                             im->path, (unsigned long long)r->rec_line, col_names[c]);
        if (im->col_idx[c] + 1 > im->n_needed)
            im->n_needed = im->col_idx[c] + 1;
    }
    return 1;
}

/* Parses column c of the current record as an unsigned number <= max. */
static bool col_u64(import_t *im, enum host_col c, uint64_t max, uint64_t *out)
{
    const char *s = field(&im->r, im->col_idx[c]);
    if (parse_u64(s, max, out))
        return true;
    row_warn(im, im->r.rec_line, "column '%s': '%.40s' is not an integer in [0, %llu]",
             col_names[c], s, (unsigned long long)max);
    return false;
}

static bool col_i64(import_t *im, enum host_col c, int64_t min, int64_t max, int64_t *out)
{
    const char *s = field(&im->r, im->col_idx[c]);
    if (parse_i64(s, out) && *out >= min && *out <= max)
        return true;
    row_warn(im, im->r.rec_line, "column '%s': '%.40s' is not an integer in [%lld, %lld]",
             col_names[c], s, (long long)min, (long long)max);
    return false;
}

static uint32_t intern_col(import_t *im, enum host_col c, int *rc)
{
    const char *s = field(&im->r, im->col_idx[c]);
    uint32_t id = nnp__model_intern_cstr(im->m, s);
    if (id == 0 && *s)
        *rc = nnp__fail(NNP_ENOMEM, "out of memory importing '%s'", im->path);
    return id;
}

/* One data record into one host row. Returns NNP_OK (row added or skipped with a warning)
 * or NNP_ENOMEM. */
static int import_row(import_t *im)
{
    csv_reader_t *r = &im->r;
    nnp_model_t *m = im->m;
    uint64_t tid, pid, ppid, level, kind;
    int64_t mem_kb, ts_us;
    size_t th, i;
    int rc = NNP_OK;

    if (r->bad) {
        row_warn(im, r->rec_line, "%s", r->bad);
        return NNP_OK;
    }
    if (r->n_fields < im->n_needed) {
        for (size_t c = 0; c < N_COLS; c++) {
            if (im->col_idx[c] >= r->n_fields) {
                row_warn(im, r->rec_line, "column '%s' is missing (%zu fields, header %zu)",
                         col_names[c], r->n_fields, im->n_needed);
                break;
            }
        }
        return NNP_OK;
    }
    /* Times and sizes must fit the model's ns and bytes after scaling. */
    if (!col_u64(im, COL_TID, UINT64_MAX, &tid) || !col_u64(im, COL_PID, UINT32_MAX, &pid) ||
        !col_u64(im, COL_PARENT_PID, UINT32_MAX, &ppid) ||
        !col_u64(im, COL_LEVEL, UINT8_MAX, &level) ||
        !col_u64(im, COL_START_END, NNP_HOST_ROW_INSTANT, &kind) ||
        !col_i64(im, COL_MEMORY, INT64_MIN, (int64_t)(UINT64_MAX / BYTES_PER_KB), &mem_kb) ||
        !col_i64(im, COL_TS, INT64_MIN / NS_PER_US, INT64_MAX / NS_PER_US, &ts_us))
        return NNP_OK;

    th = thread_get(&im->threads, m, tid, (uint32_t)pid, (uint32_t)ppid);
    if (th == SIZE_MAX)
        return nnp__fail(NNP_ENOMEM, "out of memory importing '%s'", im->path);
    i = nnp__table_push(&m->host.t);
    if (i == SIZE_MAX)
        return nnp__fail(NNP_ENOMEM, "out of memory importing '%s' (line %llu)", im->path,
                         (unsigned long long)r->rec_line);
    m->host.ts_ns[i] = ts_us * NS_PER_US;
    m->host.kind[i] = (uint8_t)kind;
    m->host.level[i] = (uint8_t)level;
    m->host.module[i] = intern_col(im, COL_MODULE, &rc);
    m->host.event[i] = intern_col(im, COL_EVENT, &rc);
    m->host.stage[i] = intern_col(im, COL_STAGE, &rc);
    m->host.custom_info[i] = intern_col(im, COL_CUSTOM_INFO, &rc);
    m->host.thread[i] = (uint32_t)th;
    /* The model has no negative memory: a row the seed would not keep (kB <= 0) is 0,
     * "not recorded", which host_info.c also does not keep. */
    m->host.memory_bytes[i] = mem_kb > 0 ? (uint64_t)mem_kb * BYTES_PER_KB : 0;
    /* The file order, which nnp__model_finish's sort by time would otherwise lose. */
    m->host.seq[i] = (uint32_t)i + 1;
    im->n_rows++;
    return rc;
}

/* Records where the model came from, unless an earlier importer already did. */
static int set_source(import_t *im)
{
    nnp_run_info_t *info = &im->m->info;
    if (!info->source && !(info->source = nnp__strdup(im->path)))
        return nnp__fail(NNP_ENOMEM, "out of memory importing '%s'", im->path);
    if (!info->source_format && !(info->source_format = nnp__strdup(NNP_HOST_INFO_CSV_FORMAT)))
        return nnp__fail(NNP_ENOMEM, "out of memory importing '%s'", im->path);
    return NNP_OK;
}

int nnp__import_host_info_csv(const char *path, nnp_model_t *m)
{
    import_t im;
    size_t slots;
    int rc;

    memset(&im, 0, sizeof(im));
    im.path = path;
    im.m = m;
    im.r.path = path;
    im.r.line = 1;
    im.r.at_start = true;
    im.r.fd = open(path, O_RDONLY | O_CLOEXEC);
    if (im.r.fd < 0)
        return nnp__fail(nnp__from_errno(errno), "cannot open host_info CSV '%s': %s", path,
                         strerror(errno));
    im.r.chunk = nnp__malloc(READ_CHUNK_BYTES);
    if (!im.r.chunk) {
        rc = nnp__fail(NNP_ENOMEM, "out of memory importing '%s'", path);
        goto out;
    }
    rc = read_header(&im);
    if (rc < 0)
        goto out;
    if (rc == 0) {
        /* An empty file is data too: the seed still writes a header-only dataset file. */
        NNP_LOG_W("host_info CSV '%s' is empty", path);
        rc = set_source(&im);
        goto out;
    }
    /* Threads already in the model (another importer's) are found too. */
    slots = INITIAL_THREAD_SLOTS;
    while ((m->threads.t.n + 1) * 2 > slots)
        slots *= 2;
    rc = thread_map_grow(&im.threads, m, slots);
    while (rc == NNP_OK) {
        rc = next_record(&im.r);
        if (rc <= 0)
            break;
        rc = import_row(&im);
    }
    if (rc == NNP_OK)
        rc = set_source(&im);
    if (im.n_skipped > NNP_HOST_CSV_MAX_WARNINGS)
        NNP_LOG_W("host_info CSV '%s': %llu more malformed rows skipped", path,
                  (unsigned long long)(im.n_skipped - NNP_HOST_CSV_MAX_WARNINGS));
    NNP_LOG_I("host_info CSV '%s': %llu rows imported, %llu skipped", path,
              (unsigned long long)im.n_rows, (unsigned long long)im.n_skipped);
out:
    close(im.r.fd);
    nnp__free(im.r.chunk);
    nnp__free(im.r.rec);
    nnp__free(im.threads.slots);
    return rc;
}

/* ---- finding the file ---- */

/* The rank of a "host_info_<digits>.csv" name, or -1. */
static int rank_of(const char *name)
{
    size_t pre = sizeof(HOST_CSV_PREFIX) - 1, suf = sizeof(HOST_CSV_SUFFIX) - 1;
    size_t n = strlen(name);
    char digits[16];
    uint64_t v;
    if (n <= pre + suf || n - pre - suf >= sizeof(digits) ||
        strncmp(name, HOST_CSV_PREFIX, pre) != 0 || strcmp(name + n - suf, HOST_CSV_SUFFIX) != 0)
        return -1;
    memcpy(digits, name + pre, n - pre - suf);
    digits[n - pre - suf] = '\0';
    return parse_u64(digits, INT_MAX, &v) ? (int)v : -1;
}

/* Looks in one directory; true when a wanted file is there. */
static bool find_in(const char *dir, int *rank, char *path, size_t cap)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int best = -1;
    char name[NNP_PATH_MAX], best_name[NNP_PATH_MAX];
    struct stat st;

    if (!d)
        return false;
    while ((e = readdir(d)) != NULL) {
        int r = rank_of(e->d_name);
        if (r < 0 || (*rank >= 0 && r != *rank) || (best >= 0 && r >= best))
            continue;
        if (nnp__path_join(name, sizeof(name), dir, e->d_name) != NNP_OK || stat(name, &st) != 0 ||
            !S_ISREG(st.st_mode))
            continue;
        best = r;
        memcpy(best_name, name, sizeof(name));
    }
    closedir(d);
    if (best < 0 || !nnp__strlcpy(path, best_name, cap))
        return false;
    *rank = best;
    return true;
}

bool nnp__host_info_csv_find(const char *dir, int *rank, char *path, size_t cap)
{
    /* The directory itself, then the seed's two layouts. */
    static const char *const subdirs[] = {"", "host_info", "profiler/host_info"};
    char sub[NNP_PATH_MAX];

    for (size_t i = 0; i < NNP_ARRAY_LEN(subdirs); i++) {
        if (!*subdirs[i]) {
            if (find_in(dir, rank, path, cap))
                return true;
            continue;
        }
        if (nnp__path_join(sub, sizeof(sub), dir, subdirs[i]) == NNP_OK &&
            find_in(sub, rank, path, cap))
            return true;
    }
    return false;
}
