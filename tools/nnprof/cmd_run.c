/* cmd_run.c - `nnprof run [options] [--] COMMAND [ARGS...]`: profiles a command without
 * changing it, as `msprof --application` and `nsys profile` do. The flags become
 * MS_PROFILER_OPTIONS (checked here first, so a typo stops the run before it starts),
 * libnnprof.so is preloaded (plus libnnprof_mpi.so for MPI programs, CUPTI injection when
 * built), and exec'd children are followed by default so `nnprof run -- sh train.sh`
 * profiles what the script starts. Rank and size come from the launcher's environment in
 * each process (collect/launcher.c). The command's exit status or signal becomes nnprof's;
 * --analyse analyses this rank's data first. docs/CLI.md documents every flag. */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "collect/launcher.h"
#include "collect/step_window.h"
#include "run.h"
#include "util/util.h"

/* Warnings the option parser may give for one command line; more are summarised. */
#define MAX_WARNINGS 16
#define WARNING_CAP  512
/* MindSpore's default output_path, made absolute by nnprof run. */
#define DEFAULT_OUTPUT "./data"
/* --sample-hz bounds: 1 Hz is the library's default period, 1000 Hz its 1 ms floor. */
#define MAX_SAMPLE_HZ 1000
#define MS_PER_SEC    1000

extern char **environ;

typedef enum mpi_mode { MPI_AUTO, MPI_ON, MPI_OFF } mpi_mode_t;

typedef struct run_args {
    cJSON *opts; /* MS_PROFILER_OPTIONS being built */
    mpi_mode_t mpi;
    bool follow_children; /* default on (docs/CLI.md says why) */
    bool analyse;
    const char *steps;
    char **command; /* NULL-terminated, from argv */
} run_args_t;

typedef struct warnings {
    char text[MAX_WARNINGS][WARNING_CAP];
    int n, dropped;
} warnings_t;

static void help(FILE *f)
{
    fprintf(f,
            "usage: nnprof run [options] [--] COMMAND [ARGS...]\n\n"
            "Runs COMMAND with profiling on from its start: libnnprof preloaded, options from\n"
            "the flags (and MS_PROFILER_OPTIONS, which they override), the MPI library\n"
            "interposed for MPI programs. Under mpirun, srun or torchrun every rank writes\n"
            "its own raw directory under OUTPUT/profiler. Exit status: the command's (or\n"
            "its signal); 127/126 when it cannot be started; 2 for a usage error.\n\n"
            "  -o, --output DIR          output_path (default ./data)\n"
            "  --level Level0|Level1|Level2  profiler_level\n"
            "  --memory[=on|off]         profile_memory (default off)\n"
            "  --communication[=on|off]  profile_communication (default on here)\n"
            "  --steps A-B               collect only steps A to B (window opens at the\n"
            "                            begin of step A, closes after step B's end)\n"
            "  --sample-hz N             CPU/memory samples per second (1..%d)\n"
            "  --option KEY=VALUE        any MS_PROFILER_OPTIONS key; also --KEY=VALUE and\n"
            "                            --KEY (true), dashes or underscores: --op-time=off,\n"
            "                            --profile-framework=time, --timeline-limit=100\n"
            "  --options JSON            merge a JSON object of options\n"
            "  --follow-children[=on|off] profile programs the command starts (default on)\n"
            "  --mpi[=auto|on|off]       interpose MPI (default auto: the program links Open\n"
            "                            MPI's libmpi, or Open MPI's mpirun started us)\n"
            "  --analyse                 analyse this rank's data when COMMAND ends\n",
            MAX_SAMPLE_HZ);
}

/* ---- option values ---- */

/* A flag's text as a JSON value: on/true, off/false, numbers, JSON literals, else text. */
static cJSON *value_of(const char *v)
{
    char *end;
    if (strcasecmp(v, "on") == 0 || strcasecmp(v, "true") == 0)
        return cJSON_CreateTrue();
    if (strcasecmp(v, "off") == 0 || strcasecmp(v, "false") == 0)
        return cJSON_CreateFalse();
    if (*v && !isspace((unsigned char)*v)) {
        double d = strtod(v, &end);
        if (*end == '\0')
            return cJSON_CreateNumber(d);
    }
    if (*v == '{' || *v == '[' || *v == '"' || strcmp(v, "null") == 0) {
        cJSON *j = cJSON_Parse(v);
        if (j)
            return j;
    }
    return cJSON_CreateString(v);
}

/* Sets key (dashes read as underscores) to a value. False when out of memory. */
static bool set_opt(cJSON *o, const char *key, cJSON *value)
{
    char name[128];
    size_t i;
    if (!value)
        return false;
    for (i = 0; key[i] && i + 1 < sizeof(name); i++)
        name[i] = key[i] == '-' ? '_' : key[i];
    name[i] = '\0';
    cJSON_DeleteItemFromObjectCaseSensitive(o, name);
    cJSON_AddItemToObject(o, name, value);
    return true;
}

/* "Level1", "level1" or "1" -> "Level1"; NULL otherwise. */
static const char *level_of(const char *v)
{
    static const char *const names[] = {"Level0", "Level1", "Level2"};
    for (int i = 0; i < 3; i++) {
        if (strcasecmp(v, names[i]) == 0 || (v[0] == '0' + i && v[1] == '\0'))
            return names[i];
    }
    return NULL;
}

/* --flag=on|off, or --flag alone (on). */
static int on_off(const char *flag, const char *v, bool *out)
{
    if (!v || strcasecmp(v, "on") == 0 || strcasecmp(v, "true") == 0)
        *out = true;
    else if (strcasecmp(v, "off") == 0 || strcasecmp(v, "false") == 0)
        *out = false;
    else {
        nnp_cli_error(flag, "'%s' is not on or off", v);
        return -1;
    }
    return 0;
}

/* ---- argument parsing ---- */

/* The value of an option: "--x=V" gives V; "--x V" takes the next argument. */
static const char *take(int argc, char **argv, int *i, const char *eq, const char *flag)
{
    if (eq)
        return eq + 1;
    if (*i + 1 >= argc) {
        nnp_cli_error(flag, "needs a value");
        return NULL;
    }
    return argv[++*i];
}

static int parse_one(int argc, char **argv, int *i, run_args_t *a)
{
    const char *arg = argv[*i], *eq = strchr(arg, '='), *v;
    char flag[128];
    bool b;

    snprintf(flag, sizeof(flag), "%.*s", (int)(eq ? eq - arg : (ptrdiff_t)strlen(arg)), arg);
    if (strcmp(flag, "-o") == 0 || strcmp(flag, "--output") == 0) {
        if (!(v = take(argc, argv, i, eq, flag)))
            return -1;
        return set_opt(a->opts, "output_path", cJSON_CreateString(v)) ? 0 : -1;
    }
    if (strcmp(flag, "--level") == 0) {
        const char *lv;
        if (!(v = take(argc, argv, i, eq, flag)))
            return -1;
        if (!(lv = level_of(v))) {
            nnp_cli_error(flag, "'%s' is not Level0, Level1 or Level2", v);
            return -1;
        }
        return set_opt(a->opts, "profiler_level", cJSON_CreateString(lv)) ? 0 : -1;
    }
    if (strcmp(flag, "--memory") == 0 || strcmp(flag, "--communication") == 0) {
        if (on_off(flag, eq ? eq + 1 : NULL, &b) != 0)
            return -1;
        return set_opt(a->opts, flag[2] == 'm' ? "profile_memory" : "profile_communication",
                       cJSON_CreateBool(b))
                   ? 0
                   : -1;
    }
    if (strcmp(flag, "--steps") == 0) {
        uint64_t first, last;
        if (!(v = take(argc, argv, i, eq, flag)))
            return -1;
        if (nnp__step_window_parse(v, &first, &last) != NNP_OK) {
            nnp_cli_error(flag, "'%s' is not a step range A-B (A <= B) or a step N", v);
            return -1;
        }
        a->steps = v;
        return 0;
    }
    if (strcmp(flag, "--sample-hz") == 0) {
        char *end;
        long hz;
        if (!(v = take(argc, argv, i, eq, flag)))
            return -1;
        hz = strtol(v, &end, 10);
        if (end == v || *end || hz < 1 || hz > MAX_SAMPLE_HZ) {
            nnp_cli_error(flag, "'%s' is not a rate in [1, %d] samples a second", v, MAX_SAMPLE_HZ);
            return -1;
        }
        return set_opt(a->opts, "sample_interval_ms", cJSON_CreateNumber(MS_PER_SEC / hz)) ? 0 : -1;
    }
    if (strcmp(flag, "--follow-children") == 0)
        return on_off(flag, eq ? eq + 1 : NULL, &a->follow_children);
    if (strcmp(flag, "--analyse") == 0 || strcmp(flag, "--analyze") == 0) {
        a->analyse = true;
        return eq ? (nnp_cli_error(flag, "takes no value"), -1) : 0;
    }
    if (strcmp(flag, "--mpi") == 0) {
        v = eq ? eq + 1 : "on";
        if (strcmp(v, "auto") == 0)
            a->mpi = MPI_AUTO;
        else if (on_off(flag, v, &b) == 0)
            a->mpi = b ? MPI_ON : MPI_OFF;
        else
            return -1;
        return 0;
    }
    if (strcmp(flag, "--options") == 0) {
        cJSON *j, *item;
        if (!(v = take(argc, argv, i, eq, flag)))
            return -1;
        j = cJSON_Parse(v);
        if (!cJSON_IsObject(j)) {
            cJSON_Delete(j);
            nnp_cli_error(flag, "'%s' is not a JSON object", v);
            return -1;
        }
        while ((item = j->child) != NULL) {
            cJSON_DetachItemViaPointer(j, item);
            if (!set_opt(a->opts, item->string, item))
                break;
        }
        cJSON_Delete(j);
        return 0;
    }
    if (strcmp(flag, "--option") == 0) {
        const char *kv;
        char key[128];
        if (!(v = take(argc, argv, i, eq, flag)))
            return -1;
        kv = strchr(v, '=');
        if (!kv || kv == v || (size_t)(kv - v) >= sizeof(key)) {
            nnp_cli_error(flag, "'%s' is not KEY=VALUE", v);
            return -1;
        }
        snprintf(key, sizeof(key), "%.*s", (int)(kv - v), v);
        return set_opt(a->opts, key, value_of(kv + 1)) ? 0 : -1;
    }
    if (strncmp(flag, "--", 2) == 0 && flag[2] && (size_t)(strlen(flag) - 2) < 120)
        /* Any other long flag names an MS_PROFILER_OPTIONS key: the option parser checks
         * it below and names an unknown one. */
        return set_opt(a->opts, flag + 2, eq ? value_of(eq + 1) : cJSON_CreateTrue()) ? 0 : -1;
    nnp_cli_error(arg, "unknown option (see 'nnprof run --help')");
    return -1;
}

/* Returns 0, 1 for --help, or -1 after printing the usage error. */
static int parse_args(int argc, char **argv, run_args_t *a)
{
    int i;
    for (i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0)
            return 1;
        if (arg[0] != '-' || arg[1] == '\0')
            break;
        if (parse_one(argc, argv, &i, a) != 0)
            return -1;
    }
    if (i >= argc) {
        nnp_cli_error("run", "no command given (nnprof run [options] -- COMMAND [ARGS...])");
        return -1;
    }
    a->command = argv + i;
    return 0;
}

/* ---- checking the options as the library will read them ---- */

static void keep_warning(nnp_log_level_t level, const char *msg, void *user)
{
    warnings_t *w = user;
    if (level > NNP_LOG_WARN)
        return;
    for (int i = 0; i < w->n; i++) {
        if (strncmp(w->text[i], msg, WARNING_CAP - 1) == 0)
            return; /* parsing and validation may say the same thing */
    }
    if (w->n < MAX_WARNINGS)
        snprintf(w->text[w->n++], WARNING_CAP, "%s", msg);
    else
        w->dropped++;
}

/* Whether every option given survived the library's parsing unchanged: a key it does not
 * know, or a value it replaced (wrong type, out of range, needs op_time), is a usage error,
 * followed by the library's own warnings. Other warnings (a level that switches options
 * off) are left to the command's libnnprof to print. resolved: nnp_options_to_json(). */
static bool options_kept(const char *json, const char *resolved)
{
    cJSON *mine = cJSON_Parse(json), *got = cJSON_Parse(resolved), *item;
    bool ok = cJSON_IsObject(mine) && cJSON_IsObject(got);
    bool parsed = ok;
    cJSON_ArrayForEach(item, mine)
    {
        const cJSON *r;
        if (!parsed)
            break;
        if (strcmp(item->string, "start") == 0)
            continue;
        r = cJSON_GetObjectItemCaseSensitive(got, item->string);
        if (!r) {
            nnp_cli_error("run", "--%s: not an option of MS_PROFILER_OPTIONS", item->string);
            ok = false;
        } else if (!cJSON_Compare(item, r, true)) {
            char *v = cJSON_PrintUnformatted(item);
            nnp_cli_error("run", "--%s: %s is not a valid value", item->string, v ? v : "?");
            cJSON_free(v);
            ok = false;
        }
    }
    cJSON_Delete(mine);
    cJSON_Delete(got);
    return ok;
}

/* Parses the options JSON exactly as the command's libnnprof will, so that a run with a
 * mistyped option stops before it starts instead of profiling the wrong thing. */
static int check_options(const char *json, nnp_options_t *o)
{
    warnings_t w = {.n = 0, .dropped = 0};
    nnp_log_level_t prev = NNP_LOG_ERROR;
    char *resolved = NULL;
    int rc, need;
    bool ok;
    /* Every warning is collected here, whatever NNPROF_LOG_LEVEL says for the run. */
    for (int l = NNP_LOG_WARN; l <= NNP_LOG_DEBUG; l++) {
        if (nnp__log_enabled((nnp_log_level_t)l))
            prev = (nnp_log_level_t)l;
    }
    nnp_log_set_level(NNP_LOG_WARN);
    nnp_options_init(o);
    nnp_log_set_handler(keep_warning, &w);
    rc = nnp_options_from_json(o, json, NULL);
    if (rc == NNP_OK)
        rc = nnp_options_validate(o);
    nnp_log_set_handler(NULL, NULL);
    nnp_log_set_level(prev);
    if (rc != NNP_OK) {
        nnp_cli_error("run", "options: %s", nnp_last_error());
        return -1;
    }
    need = nnp_options_to_json(o, NULL, 0);
    if (need < 0 || !(resolved = malloc((size_t)need + 1)))
        return -1;
    nnp_options_to_json(o, resolved, (size_t)need + 1);
    ok = options_kept(json, resolved);
    free(resolved);
    for (int i = 0; i < w.n && !ok; i++)
        nnp_cli_error("run", "%s", w.text[i]);
    if (w.dropped && !ok)
        nnp_cli_error("run", "%d more warnings", w.dropped);
    return ok ? 0 : -1;
}

/* The output folder as an absolute path: every process of the run, whatever folder a script
 * changes to before starting it, writes under the one folder nnprof was asked for (relative
 * to where nnprof runs, as nsys writes its report). */
static int absolute_output(cJSON *opts)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(opts, "output_path");
    const char *path = cJSON_IsString(v) ? v->valuestring : DEFAULT_OUTPUT;
    char cwd[NNP_PATH_MAX], full[NNP_PATH_MAX * 2];
    if (!cJSON_IsString(v) && v)
        return 0; /* not text: the option check below names it */
    if (path[0] == '/' || path[0] == '\0')
        return 0;
    if (!getcwd(cwd, sizeof(cwd))) {
        nnp_cli_error("run", "cannot read the current directory: %s", strerror(errno));
        return -1;
    }
    while (path[0] == '.' && path[1] == '/')
        path += 2;
    snprintf(full, sizeof(full), "%s/%s", cwd, path);
    return set_opt(opts, "output_path", cJSON_CreateString(full)) ? 0 : -1;
}

/* ---- MPI ---- */

/* Whether to preload libnnprof_mpi.so; notes why not where the user would expect it. */
static bool want_mpi(const run_args_t *a, const nnp_run_paths_t *p, const nnp_launcher_t *l)
{
    char exe[NNP_PATH_MAX], needed[256];
    bool quiet = l->rank > 0; /* said once per job: by rank 0 (or a lone process) */
    bool wanted = a->mpi == MPI_ON;
    int links = nnp_run_resolve(a->command[0], exe, sizeof(exe))
                    ? nnp_run_elf_needs(exe, "libmpi.so", needed, sizeof(needed))
                    : -1;

    if (a->mpi == MPI_OFF)
        return false;
    if (links == 1 && strcmp(needed, NNP_RUN_OMPI_SONAME) != 0) {
        if (!quiet)
            nnp_cli_error("run",
                          "note: %s links %s, not Open MPI's %s: its MPI calls are not "
                          "recorded",
                          a->command[0], needed, NNP_RUN_OMPI_SONAME);
        return false;
    }
    if (a->mpi == MPI_AUTO)
        wanted = links == 1 || getenv("OMPI_COMM_WORLD_SIZE") != NULL;
    if (wanted && !p->mpi_lib[0]) {
        if (!quiet)
            nnp_cli_error("run",
                          "note: MPI calls are not recorded: %s is not in %s (nnprof was "
                          "built without Open MPI)",
                          NNP_RUN_MPI_LIB, p->lib_dir);
        return false;
    }
    return wanted;
}

/* ---- the run ---- */

static void analyse(const nnp_options_t *o, const nnp_launcher_t *l)
{
    nnp_analyse_options_t ao;
    int rc;
    nnp_analyse_options_init(&ao);
    ao.quiet = true;
    /* Every rank's nnprof analyses its own rank: ranks on other hosts are not visible. */
    if (l->rank >= 0 && l->size > 1)
        ao.rank = l->rank;
    rc = nnp_offline_analyse(o->output_path, &ao);
    if (rc != NNP_OK)
        nnp_cli_error("run", "analyse %s: %s", o->output_path, nnp_last_error());
    else if (ao.rank >= 0)
        fprintf(stderr, "nnprof: run: analysed rank %d of %s\n", ao.rank, o->output_path);
    else
        fprintf(stderr, "nnprof: run: analysed %s\n", o->output_path);
}

int nnp_cmd_run(int argc, char **argv)
{
    run_args_t a = {.opts = NULL, .mpi = MPI_AUTO, .follow_children = true};
    const char *base = getenv("MS_PROFILER_OPTIONS");
    nnp_run_paths_t p;
    nnp_launcher_t l;
    nnp_options_t o;
    nnp_run_env_t e;
    char why[NNP_PATH_MAX + 256], boot[NNP_PATH_MAX];
    char *json = NULL, **env = NULL;
    int rc, status;

    a.opts = base && *base ? cJSON_Parse(base) : cJSON_CreateObject();
    if (!cJSON_IsObject(a.opts)) {
        nnp_cli_error("run", "MS_PROFILER_OPTIONS in the environment is not a JSON object");
        cJSON_Delete(a.opts);
        return NNP_EXIT_USAGE;
    }
    rc = parse_args(argc, argv, &a);
    if (rc != 0) {
        if (rc > 0)
            help(stdout);
        cJSON_Delete(a.opts);
        return rc > 0 ? NNP_EXIT_OK : NNP_EXIT_USAGE;
    }
    /* Profiling starts with the process; communication is what multi-rank runs are for
     * (unless op_time is off, which it needs). */
    set_opt(a.opts, "start", cJSON_CreateTrue());
    if (!cJSON_GetObjectItemCaseSensitive(a.opts, "profile_communication") &&
        !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(a.opts, "op_time")))
        set_opt(a.opts, "profile_communication", cJSON_CreateTrue());
    if (absolute_output(a.opts) != 0) {
        cJSON_Delete(a.opts);
        return NNP_EXIT_FAIL;
    }
    json = cJSON_PrintUnformatted(a.opts);
    cJSON_Delete(a.opts);
    if (!json || check_options(json, &o) != 0) {
        free(json);
        return json ? NNP_EXIT_USAGE : NNP_EXIT_FAIL;
    }
    if (nnp_run_find_paths(NULL, &p, why, sizeof(why)) != 0) {
        nnp_cli_error("run", "%s", why);
        free(json);
        return NNP_EXIT_FAIL;
    }
    nnp__launcher_read(&l);
    memset(&e, 0, sizeof(e));
    e.ms_options = json;
    e.preload[0] = p.lib;
    e.preload[1] = want_mpi(&a, &p, &l) ? p.mpi_lib : NULL;
    e.follow_children = a.follow_children ? "1" : "0";
    e.python_path[0] = p.python_dir[0] ? p.python_dir : NULL;
    if (p.python_dir[0] && getenv("NNPROF_TORCH") && strcmp(getenv("NNPROF_TORCH"), "1") == 0 &&
        snprintf(boot, sizeof(boot), "%s/nnprof/_boot", p.python_dir) < (int)sizeof(boot)) {
        e.python_path[1] = e.python_path[0];
        e.python_path[0] = boot;
    }
    if (p.cuda_lib[0] && !(getenv("NNPROF_CUDA") && strcmp(getenv("NNPROF_CUDA"), "0") == 0))
        e.cuda_injection = p.cuda_lib;
    e.steps = a.steps;
    env = nnp_run_env_build(environ, &e);
    free(json);
    if (!env) {
        nnp_cli_error("run", "out of memory");
        return NNP_EXIT_FAIL;
    }
    status = nnp_run_command(a.command, env);
    nnp_run_env_free(env);
    if (a.analyse)
        analyse(&o, &l);
    nnp_run_exit_like(status);
}
