/* run_env.c - what `nnprof run` puts into the command: where libnnprof.so and its optional
 * back ends are (build tree or install), whether the program links Open MPI (its ELF
 * DT_NEEDED list), and the child's environment (CONTRACTS 4). No process is started here. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"

/* Set by CMake for the CLI: the library directory relative to the binary directory of an
 * install, the build directory, and the source tree's python/ folder. */
#ifndef NNP_BIN_TO_LIBDIR
#define NNP_BIN_TO_LIBDIR "../lib"
#endif
#ifndef NNP_BUILD_DIR
#define NNP_BUILD_DIR ""
#endif
#ifndef NNP_SOURCE_PYTHON_DIR
#define NNP_SOURCE_PYTHON_DIR ""
#endif

/* ELF files larger than this are not read for DT_NEEDED (nobody's executable is 1 GiB of
 * headers; a bogus size must not make us read it). */
#define ELF_MAX_BYTES (1ull << 30)
/* Section headers examined at most: real executables have about 40. */
#define ELF_MAX_SECTIONS 4096u

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool join(char *out, size_t cap, const char *dir, const char *name)
{
    int n = snprintf(out, cap, "%s/%s", dir, name);
    return n > 0 && (size_t)n < cap;
}

/* Directory of the running executable. */
static bool self_dir(char *out, size_t cap)
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    char *slash;
    if (n <= 0)
        return false;
    buf[n] = '\0';
    slash = strrchr(buf, '/');
    if (!slash)
        return false;
    *slash = '\0';
    return snprintf(out, cap, "%s", buf) < (int)cap;
}

static bool same_dir(const char *a, const char *b)
{
    char ra[PATH_MAX], rb[PATH_MAX];
    return *a && *b && realpath(a, ra) && realpath(b, rb) && strcmp(ra, rb) == 0;
}

static void optional(char *out, size_t cap, const char *dir, const char *name)
{
    if (!join(out, cap, dir, name) || !is_file(out))
        out[0] = '\0';
}

int nnp_run_find_paths(const char *exe_dir, nnp_run_paths_t *p, char *why, size_t why_cap)
{
    const char *env = getenv("NNPROF_LIB_DIR");
    char self[NNP_PATH_MAX], cand[NNP_PATH_MAX];

    memset(p, 0, sizeof(*p));
    if (!exe_dir) {
        if (!self_dir(self, sizeof(self))) {
            snprintf(why, why_cap, "cannot read /proc/self/exe");
            return -1;
        }
        exe_dir = self;
    }
    if (env && *env) {
        if (!join(p->lib, sizeof(p->lib), env, NNP_RUN_LIB) || !is_file(p->lib)) {
            snprintf(why, why_cap, "%s not found in NNPROF_LIB_DIR (%s)", NNP_RUN_LIB, env);
            return -1;
        }
        snprintf(p->lib_dir, sizeof(p->lib_dir), "%s", env);
    } else if (join(cand, sizeof(cand), exe_dir, NNP_RUN_LIB) && is_file(cand)) {
        snprintf(p->lib_dir, sizeof(p->lib_dir), "%s", exe_dir); /* build tree */
        snprintf(p->lib, sizeof(p->lib), "%s", cand);
    } else {
        char dir[NNP_PATH_MAX];
        if (!join(dir, sizeof(dir), exe_dir, NNP_BIN_TO_LIBDIR) ||
            !join(p->lib, sizeof(p->lib), dir, NNP_RUN_LIB) || !is_file(p->lib)) {
            snprintf(why, why_cap, "%s not found beside %s nor in %s/%s (set NNPROF_LIB_DIR)",
                     NNP_RUN_LIB, exe_dir, exe_dir, NNP_BIN_TO_LIBDIR);
            return -1;
        }
        snprintf(p->lib_dir, sizeof(p->lib_dir), "%s", dir);
    }
    env = getenv("NNPROF_MPI_LIBRARY");
    if (env && *env)
        snprintf(p->mpi_lib, sizeof(p->mpi_lib), "%s", is_file(env) ? env : "");
    else
        optional(p->mpi_lib, sizeof(p->mpi_lib), p->lib_dir, NNP_RUN_MPI_LIB);
    optional(p->cuda_lib, sizeof(p->cuda_lib), p->lib_dir, NNP_RUN_CUDA_LIB);
    /* The build tree's CLI uses the source tree's Python package; an installed one relies
     * on `pip install ./python` having put it where Python looks. */
    if (same_dir(exe_dir, NNP_BUILD_DIR) && *NNP_SOURCE_PYTHON_DIR &&
        join(cand, sizeof(cand), NNP_SOURCE_PYTHON_DIR, "nnprof/__init__.py") && is_file(cand))
        snprintf(p->python_dir, sizeof(p->python_dir), "%s", NNP_SOURCE_PYTHON_DIR);
    return 0;
}

bool nnp_run_resolve(const char *cmd, char *out, size_t cap)
{
    const char *path = getenv("PATH");
    if (!cmd || !*cmd)
        return false;
    if (strchr(cmd, '/'))
        return snprintf(out, cap, "%s", cmd) < (int)cap && access(out, X_OK) == 0;
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *end = strchr(path, ':');
        size_t len = end ? (size_t)(end - path) : strlen(path);
        int n = snprintf(out, cap, "%.*s%s%s", (int)len, path, len ? "/" : "", cmd);
        if (n > 0 && (size_t)n < cap && is_file(out) && access(out, X_OK) == 0)
            return true;
        path += len + (end ? 1 : 0);
    }
    return false;
}

/* Reads len bytes at off of fd; false on a short read. */
static bool read_at(int fd, uint64_t off, void *buf, size_t len, uint64_t file_size)
{
    if (off > file_size || len > file_size - off)
        return false;
    return pread(fd, buf, len, (off_t)off) == (ssize_t)len;
}

/* DT_NEEDED of a 64-bit little-endian ELF file through its section headers: the
 * SHT_DYNAMIC section and the string table it links to. Every offset is checked against
 * the file size: the file is the user's and may be anything. */
int nnp_run_elf_needs(const char *path, const char *prefix, char *found, size_t found_cap)
{
    Elf64_Ehdr eh;
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -1;
    uint64_t size;

    if (found_cap)
        found[0] = '\0';
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > ELF_MAX_BYTES)
        goto out;
    size = (uint64_t)st.st_size;
    if (!read_at(fd, 0, &eh, sizeof(eh), size) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
        eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum > ELF_MAX_SECTIONS)
        goto out;
    rc = 0;
    for (unsigned i = 0; i < eh.e_shnum && rc == 0; i++) {
        Elf64_Shdr sh, str;
        if (!read_at(fd, eh.e_shoff + (uint64_t)i * sizeof(sh), &sh, sizeof(sh), size))
            break;
        if (sh.sh_type != SHT_DYNAMIC || sh.sh_link >= eh.e_shnum ||
            !read_at(fd, eh.e_shoff + (uint64_t)sh.sh_link * sizeof(str), &str, sizeof(str), size))
            continue;
        for (uint64_t k = 0; k < sh.sh_size / sizeof(Elf64_Dyn); k++) {
            Elf64_Dyn d;
            char name[256];
            ssize_t n;
            if (!read_at(fd, sh.sh_offset + k * sizeof(d), &d, sizeof(d), size) ||
                d.d_tag == DT_NULL)
                break;
            if (d.d_tag != DT_NEEDED || d.d_un.d_val >= str.sh_size ||
                str.sh_offset + d.d_un.d_val >= size)
                continue;
            n = pread(fd, name, sizeof(name) - 1, (off_t)(str.sh_offset + d.d_un.d_val));
            if (n <= 0)
                continue;
            name[n] = '\0';
            if (strncmp(name, prefix, strlen(prefix)) == 0) {
                snprintf(found, found_cap, "%s", name);
                rc = 1;
                break;
            }
        }
    }
out:
    close(fd);
    return rc;
}

/* ---- the child's environment ---- */

typedef struct envv {
    char **v;
    size_t n, cap;
    bool oom;
} envv_t;

static bool name_is(const char *entry, const char *name)
{
    size_t len = strlen(name);
    return strncmp(entry, name, len) == 0 && entry[len] == '=';
}

static ssize_t env_find(const envv_t *e, const char *name)
{
    for (size_t i = 0; i < e->n; i++) {
        if (name_is(e->v[i], name))
            return (ssize_t)i;
    }
    return -1;
}

static void env_put(envv_t *e, const char *name, const char *value)
{
    size_t len = strlen(name) + strlen(value) + 2;
    char *s = malloc(len);
    ssize_t i = env_find(e, name);
    if (!s) {
        e->oom = true;
        return;
    }
    snprintf(s, len, "%s=%s", name, value);
    if (i >= 0) {
        free(e->v[i]);
        e->v[i] = s;
        return;
    }
    if (e->n + 1 >= e->cap) {
        size_t ncap = e->cap ? e->cap * 2 : 64;
        char **nv = realloc(e->v, ncap * sizeof(char *));
        if (!nv) {
            free(s);
            e->oom = true;
            return;
        }
        e->v = nv;
        e->cap = ncap;
    }
    e->v[e->n++] = s;
    e->v[e->n] = NULL;
}

static void env_del(envv_t *e, const char *name)
{
    ssize_t i = env_find(e, name);
    if (i < 0)
        return;
    free(e->v[i]);
    memmove(&e->v[i], &e->v[i + 1], (e->n - (size_t)i) * sizeof(char *));
    e->n--;
}

/* Whether the colon list has item as one of its entries. */
static bool list_has(const char *list, const char *item)
{
    size_t len = strlen(item);
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == len && strncmp(p, item, len) == 0)
            return true;
        p += n + (end ? 1 : 0);
    }
    return false;
}

/* Joins "a:b" with the old value first (append) or last (prepend). */
static void env_list_add(envv_t *e, const char *name, const char *item, bool append)
{
    ssize_t i = env_find(e, name);
    const char *old = i >= 0 ? e->v[i] + strlen(name) + 1 : "";
    size_t len;
    char *val;
    if (!item || !*item || list_has(old, item))
        return;
    len = strlen(old) + strlen(item) + 2;
    val = malloc(len);
    if (!val) {
        e->oom = true;
        return;
    }
    if (!*old)
        snprintf(val, len, "%s", item);
    else if (append)
        snprintf(val, len, "%s:%s", old, item);
    else
        snprintf(val, len, "%s:%s", item, old);
    env_put(e, name, val);
    free(val);
}

char **nnp_run_env_build(char *const *base, const nnp_run_env_t *r)
{
    envv_t e = {0};
    for (size_t i = 0; base && base[i]; i++) {
        const char *eq = strchr(base[i], '=');
        char name[256];
        if (!eq || (size_t)(eq - base[i]) >= sizeof(name))
            continue;
        snprintf(name, sizeof(name), "%.*s", (int)(eq - base[i]), base[i]);
        env_put(&e, name, eq + 1);
    }
    env_del(&e, "NNPROF_ROOT_PID");
    if (r->ms_options)
        env_put(&e, "MS_PROFILER_OPTIONS", r->ms_options);
    /* After the user's own preloads: a sanitizer runtime must stay first. */
    for (int i = 0; i < 2; i++)
        env_list_add(&e, "LD_PRELOAD", r->preload[i], true);
    if (r->follow_children)
        env_put(&e, "NNPROF_FOLLOW_CHILDREN", r->follow_children);
    for (int i = 1; i >= 0; i--)
        env_list_add(&e, "PYTHONPATH", r->python_path[i], false);
    if (r->cuda_injection && env_find(&e, "CUDA_INJECTION64_PATH") < 0)
        env_put(&e, "CUDA_INJECTION64_PATH", r->cuda_injection);
    if (r->steps)
        env_put(&e, "NNPROF_STEPS", r->steps);
    if (!e.v && !e.oom)
        e.v = calloc(1, sizeof(char *)); /* an empty environment */
    if (e.oom || !e.v) {
        if (e.v) {
            e.v[e.n] = NULL;
            nnp_run_env_free(e.v);
        }
        return NULL;
    }
    return e.v;
}

void nnp_run_env_free(char **env)
{
    for (size_t i = 0; env && env[i]; i++)
        free(env[i]);
    free(env);
}

const char *nnp_run_env_get(char *const *env, const char *name)
{
    for (size_t i = 0; env && env[i]; i++) {
        if (name_is(env[i], name))
            return env[i] + strlen(name) + 1;
    }
    return NULL;
}
