/* test_run.c - the rules `nnprof run` applies to the command's environment (run_env.c) and
 * the launcher's rank variables (collect/launcher.c), without starting processes; the end
 * to end runs are tests/run/test_run.py and tests/mpi/test_mpi.py. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/launcher.h"
#include "collect/step_window.h"
#include "run.h"
#include "test_util.h"

static void write_file(const char *path, const void *data, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, n), (ssize_t)n);
    close(fd);
}

static void test_env_preload_pythonpath_and_root_pid(void **state)
{
    char *base[] = {"HOME=/root",
                    "NNPROF_ROOT_PID=42",
                    "LD_PRELOAD=/x/libasan.so",
                    "PYTHONPATH=/a",
                    "MS_PROFILER_OPTIONS={}",
                    "CUDA_INJECTION64_PATH=/mine.so",
                    "NOEQUALS",
                    NULL};
    nnp_run_env_t e;
    char **env;
    (void)state;

    memset(&e, 0, sizeof(e));
    e.ms_options = "{\"start\":true}";
    e.preload[0] = "/lib/libnnprof.so";
    e.preload[1] = "/lib/libnnprof_mpi.so";
    e.follow_children = "1";
    e.python_path[0] = "/src/python/nnprof/_boot";
    e.python_path[1] = "/src/python";
    e.cuda_injection = "/lib/libnnprof_cuda.so";
    e.steps = "3-5";
    env = nnp_run_env_build(base, &e);
    assert_non_null(env);
    assert_string_equal(nnp_run_env_get(env, "HOME"), "/root");
    assert_null(nnp_run_env_get(env, "NNPROF_ROOT_PID"));
    /* The user's preload (a sanitizer runtime must stay first) comes first. */
    assert_string_equal(nnp_run_env_get(env, "LD_PRELOAD"),
                        "/x/libasan.so:/lib/libnnprof.so:/lib/libnnprof_mpi.so");
    assert_string_equal(nnp_run_env_get(env, "PYTHONPATH"),
                        "/src/python/nnprof/_boot:/src/python:/a");
    assert_string_equal(nnp_run_env_get(env, "MS_PROFILER_OPTIONS"), "{\"start\":true}");
    /* An injection the user chose is kept. */
    assert_string_equal(nnp_run_env_get(env, "CUDA_INJECTION64_PATH"), "/mine.so");
    assert_string_equal(nnp_run_env_get(env, "NNPROF_FOLLOW_CHILDREN"), "1");
    assert_string_equal(nnp_run_env_get(env, "NNPROF_STEPS"), "3-5");
    assert_null(nnp_run_env_get(env, "NOEQUALS"));
    nnp_run_env_free(env);
}

static void test_env_nested_run_adds_nothing_twice(void **state)
{
    char *base[] = {"LD_PRELOAD=/lib/libnnprof.so", NULL};
    char *empty[] = {NULL};
    nnp_run_env_t e;
    char **env;
    (void)state;

    memset(&e, 0, sizeof(e));
    e.preload[0] = "/lib/libnnprof.so";
    e.cuda_injection = "/lib/libnnprof_cuda.so";
    env = nnp_run_env_build(base, &e);
    assert_non_null(env);
    assert_string_equal(nnp_run_env_get(env, "LD_PRELOAD"), "/lib/libnnprof.so");
    assert_string_equal(nnp_run_env_get(env, "CUDA_INJECTION64_PATH"), "/lib/libnnprof_cuda.so");
    assert_null(nnp_run_env_get(env, "PYTHONPATH"));
    nnp_run_env_free(env);
    memset(&e, 0, sizeof(e));
    env = nnp_run_env_build(empty, &e);
    assert_non_null(env);
    assert_null(env[0]);
    nnp_run_env_free(env);
}

/* The DT_NEEDED reader on real binaries and on damaged copies: never a crash. */
static void test_elf_needs(void **state)
{
    char found[256], path[4096], *dir = nnpt_mkdtemp();
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    FILE *f;
    unsigned char buf[8192];
    size_t got;
    (void)state;

    assert_true(n > 0);
    self[n] = '\0';
    /* This test links cmocka and not MPI. */
    assert_int_equal(nnp_run_elf_needs(self, "libcmocka.so", found, sizeof(found)), 1);
    assert_true(strncmp(found, "libcmocka.so", 12) == 0);
    assert_int_equal(nnp_run_elf_needs(self, "libmpi.so", found, sizeof(found)), 0);
    assert_string_equal(found, "");
    assert_int_equal(nnp_run_elf_needs("/nonexistent/binary", "libmpi.so", found, sizeof(found)),
                     -1);
    snprintf(path, sizeof(path), "%s/script.sh", dir);
    write_file(path, "#!/bin/sh\necho hi\n", 18);
    assert_int_equal(nnp_run_elf_needs(path, "libmpi.so", found, sizeof(found)), -1);
    /* The first 8 KiB of a real ELF: the header points past the end of the file. */
    f = fopen(self, "rb");
    assert_non_null(f);
    got = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    assert_true(got == sizeof(buf));
    snprintf(path, sizeof(path), "%s/cut.elf", dir);
    for (size_t cut = 16; cut <= sizeof(buf); cut *= 2) {
        write_file(path, buf, cut);
        assert_true(nnp_run_elf_needs(path, "libmpi.so", found, sizeof(found)) <= 0);
    }
    /* Garbage section header offsets and counts. */
    for (int i = 0; i < 64; i++) {
        unsigned char bad[sizeof(buf)];
        memcpy(bad, buf, sizeof(bad));
        bad[0x28 + i % 8] ^= (unsigned char)(0x5a + i); /* e_shoff */
        bad[0x3c] ^= (unsigned char)i;                  /* e_shnum */
        write_file(path, bad, sizeof(bad));
        assert_true(nnp_run_elf_needs(path, "libmpi.so", found, sizeof(found)) <= 0);
    }
    nnpt_rm_rf(dir);
    free(dir);
}

static void test_resolve(void **state)
{
    char out[4096];
    (void)state;
    assert_true(nnp_run_resolve("sh", out, sizeof(out)));
    assert_true(strchr(out, '/') != NULL);
    assert_false(nnp_run_resolve("no-such-command-nnprof", out, sizeof(out)));
    assert_false(nnp_run_resolve("/nonexistent/x", out, sizeof(out)));
    assert_false(nnp_run_resolve("", out, sizeof(out)));
}

static void test_find_paths(void **state)
{
    nnp_run_paths_t p;
    char why[8192], path[4096], *dir = nnpt_mkdtemp();
    (void)state;

    /* NNPROF_LIB_DIR names the only place searched. */
    setenv("NNPROF_LIB_DIR", dir, 1);
    assert_int_equal(nnp_run_find_paths(NNP_BINARY_DIR, &p, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "libnnprof.so not found in NNPROF_LIB_DIR"));
    snprintf(path, sizeof(path), "%s/libnnprof.so", dir);
    write_file(path, "x", 1);
    assert_int_equal(nnp_run_find_paths(NNP_BINARY_DIR, &p, why, sizeof(why)), 0);
    assert_string_equal(p.lib, path);
    assert_string_equal(p.mpi_lib, ""); /* a folder without the MPI library */
    snprintf(path, sizeof(path), "%s/libnnprof_mpi.so", dir);
    write_file(path, "x", 1);
    assert_int_equal(nnp_run_find_paths(NNP_BINARY_DIR, &p, why, sizeof(why)), 0);
    assert_string_equal(p.mpi_lib, path);
    unsetenv("NNPROF_LIB_DIR");
    /* The build tree: the library beside the binary. */
    assert_int_equal(nnp_run_find_paths(NNP_BINARY_DIR, &p, why, sizeof(why)), 0);
    snprintf(path, sizeof(path), "%s/libnnprof.so", NNP_BINARY_DIR);
    assert_string_equal(p.lib, path);
    /* Neither beside nor in ../lib of an empty folder. */
    assert_int_equal(nnp_run_find_paths(dir, &p, why, sizeof(why)), 0); /* dir has the lib */
    nnpt_rm_rf(dir);
    free(dir);
    dir = nnpt_mkdtemp();
    assert_int_equal(nnp_run_find_paths(dir, &p, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "set NNPROF_LIB_DIR"));
    nnpt_rm_rf(dir);
    free(dir);
}

static const char *const launcher_vars[] = {"RANK_ID",
                                            "RANK_SIZE",
                                            "OMPI_COMM_WORLD_RANK",
                                            "OMPI_COMM_WORLD_SIZE",
                                            "PMI_RANK",
                                            "PMI_SIZE",
                                            "RANK",
                                            "WORLD_SIZE",
                                            "SLURM_PROCID",
                                            "SLURM_NTASKS",
                                            "LOCAL_RANK",
                                            "OMPI_COMM_WORLD_LOCAL_RANK",
                                            "DEVICE_ID",
                                            "SLURM_LOCALID",
                                            "MPI_LOCALRANKID"};

static void clear_launcher(void)
{
    for (size_t i = 0; i < sizeof(launcher_vars) / sizeof(launcher_vars[0]); i++)
        unsetenv(launcher_vars[i]);
}

static void test_launcher_order(void **state)
{
    nnp_launcher_t l;
    nnp_options_t o;
    (void)state;

    clear_launcher();
    nnp__launcher_read(&l);
    assert_int_equal(l.rank, -1);
    assert_null(l.from);
    assert_false(l.is_mpi);
    setenv("SLURM_PROCID", "7", 1);
    setenv("SLURM_NTASKS", "16", 1);
    setenv("RANK", "3", 1);
    setenv("WORLD_SIZE", "8", 1);
    nnp__launcher_read(&l);
    /* torchrun's RANK wins over SLURM_PROCID (one srun task runs several workers). */
    assert_int_equal(l.rank, 3);
    assert_int_equal(l.size, 8);
    assert_string_equal(l.from, "RANK");
    setenv("OMPI_COMM_WORLD_RANK", "x1", 1); /* not a number: ignored */
    setenv("PMI_RANK", "2", 1);
    setenv("PMI_SIZE", "4", 1);
    nnp__launcher_read(&l);
    assert_int_equal(l.rank, 2);
    assert_true(l.is_mpi);
    setenv("OMPI_COMM_WORLD_RANK", "1", 1);
    setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
    nnp__launcher_read(&l);
    assert_int_equal(l.rank, 1);
    assert_int_equal(l.local_rank, 1);
    assert_string_equal(l.from, "OMPI_COMM_WORLD_RANK");

    /* Applied where nothing explicit set them. */
    nnp_options_init(&o);
    nnp__launcher_apply(&o, NULL);
    assert_int_equal(o.rank_id, 1);
    assert_int_equal(o.rank_size, 4);
    assert_int_equal(o.device_id, 1);
    nnp_options_init(&o);
    nnp__launcher_apply(&o, "{\"rank_id\": 0, \"device_id\": 0}");
    assert_int_equal(o.rank_id, 0);
    assert_int_equal(o.rank_size, 4);
    assert_int_equal(o.device_id, 0);
    setenv("RANK_ID", "5", 1);
    nnp_options_init(&o);
    nnp__launcher_apply(&o, NULL);
    assert_int_equal(o.rank_id, 0); /* RANK_ID is the options' own (nnp_options_from_env) */
    nnp__launcher_read(&l);
    assert_int_equal(l.rank, 5);
    assert_string_equal(l.from, "RANK_ID");
    clear_launcher();
}

static void test_steps_parse(void **state)
{
    uint64_t a = 0, b = 0;
    (void)state;
    assert_int_equal(nnp__step_window_parse("5-9", &a, &b), NNP_OK);
    assert_true(a == 5 && b == 9);
    assert_int_equal(nnp__step_window_parse("7", &a, &b), NNP_OK);
    assert_true(a == 7 && b == 7);
    static const char *const bad[] = {"", "-3", "9-5", "5-", "a-b", "5-9x", "5--9", " 5", NULL};
    for (int i = 0; bad[i]; i++)
        assert_int_equal(nnp__step_window_parse(bad[i], &a, &b), NNP_EINVAL);
    assert_int_equal(nnp__step_window_parse(NULL, &a, &b), NNP_EINVAL);
    assert_int_equal(nnp__step_window_parse("99999999999999999999999", &a, &b), NNP_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_env_preload_pythonpath_and_root_pid),
        cmocka_unit_test(test_env_nested_run_adds_nothing_twice),
        cmocka_unit_test(test_elf_needs),
        cmocka_unit_test(test_resolve),
        cmocka_unit_test(test_find_paths),
        cmocka_unit_test(test_launcher_order),
        cmocka_unit_test(test_steps_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
