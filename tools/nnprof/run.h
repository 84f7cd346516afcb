/* run.h - the parts of `nnprof run` (cmd_run.c: flags and the whole flow): run_env.c finds
 * the libraries and builds the child's environment, run_proc.c starts the command, forwards
 * signals and hands its exit status on. Kept apart so tests/unit/test_run.c can check the
 * environment rules without starting processes. */
#ifndef NNP_RUN_H
#define NNP_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "nnprof/nnprof.h"

/* Open MPI 3.x to 5.x's libmpi SONAME: the ABI libnnprof_mpi.so is built against. MPICH and
 * Intel MPI use libmpi.so.12, a different ABI our wrappers must not be loaded into. */
#define NNP_RUN_OMPI_SONAME "libmpi.so.40"
#define NNP_RUN_LIB         "libnnprof.so"
#define NNP_RUN_MPI_LIB     "libnnprof_mpi.so"
#define NNP_RUN_CUDA_LIB    "libnnprof_cuda.so"

/* Where the pieces `nnprof run` loads into the command are. "" = not found. */
typedef struct nnp_run_paths {
    char lib_dir[NNP_PATH_MAX];    /* holds libnnprof.so */
    char lib[NNP_PATH_MAX];        /* libnnprof.so */
    char mpi_lib[NNP_PATH_MAX];    /* libnnprof_mpi.so, or NNPROF_MPI_LIBRARY */
    char cuda_lib[NNP_PATH_MAX];   /* libnnprof_cuda.so beside libnnprof.so */
    char python_dir[NNP_PATH_MAX]; /* the source tree's python/ when run from the build tree */
} nnp_run_paths_t;

/* Finds libnnprof.so: in $NNPROF_LIB_DIR when set (only there), else beside the nnprof
 * executable (build tree), else in the install's library directory relative to it. Fills
 * the optional libraries when they exist. Returns 0, or -1 with *why naming what was
 * searched. exe_dir: the directory of the nnprof executable (NULL: /proc/self/exe's). */
int nnp_run_find_paths(const char *exe_dir, nnp_run_paths_t *p, char *why, size_t why_cap);

/* Resolves a command name as execvp would (PATH search when it has no '/'). Returns true
 * and the path in out when an executable file was found. */
bool nnp_run_resolve(const char *cmd, char *out, size_t cap);

/* Whether the ELF file at path lists a DT_NEEDED library whose name starts with prefix;
 * the first such name goes to found. Returns 1 yes, 0 no, -1 not a readable ELF file. */
int nnp_run_elf_needs(const char *path, const char *prefix, char *found, size_t found_cap);

/* What the child's environment gets, beyond the parent's. NULL fields change nothing. */
typedef struct nnp_run_env {
    const char *ms_options;      /* MS_PROFILER_OPTIONS */
    const char *preload[2];      /* appended to LD_PRELOAD unless already in it */
    const char *follow_children; /* NNPROF_FOLLOW_CHILDREN ("1" / "0") */
    const char *python_path[2];  /* prepended to PYTHONPATH, first one first */
    const char *cuda_injection;  /* CUDA_INJECTION64_PATH, only when unset */
    const char *steps;           /* NNPROF_STEPS ("A-B") */
} nnp_run_env_t;

/* Builds the child's environment: a copy of base with e applied and NNPROF_ROOT_PID removed
 * (the command is a new root, CONTRACTS 2). Returns a NULL-terminated array of malloc'ed
 * strings (release with nnp_run_env_free) or NULL when out of memory. */
char **nnp_run_env_build(char *const *base, const nnp_run_env_t *e);
void nnp_run_env_free(char **env);
/* The value of name in env, or NULL. */
const char *nnp_run_env_get(char *const *env, const char *name);

/* Starts argv[0] (PATH search) with env, forwards SIGINT, SIGTERM, SIGHUP, SIGQUIT,
 * SIGUSR1, SIGUSR2 and SIGALRM sent to nnprof to it, and waits for it. Returns its wait
 * status; when the command cannot be started, prints why and returns the shell's code as an
 * exit status (127 not found, 126 not executable). */
int nnp_run_command(char **argv, char **env);

/* Ends nnprof the way the command ended: the same exit status, or the same signal (without
 * a second core dump). Does not return. */
_Noreturn void nnp_run_exit_like(int wait_status);

#endif /* NNP_RUN_H */
