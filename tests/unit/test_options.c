/* test_options.c - nnp_options_*: every option of both JSON dialects (table-driven, with the
 * exact warning each bad value must produce), the environment variables, validation and its
 * 2048-character limit, the JSON form (snprintf semantics, round trips) and the list of
 * options this platform cannot collect. Seeds: 000 (MindSpore Profiler), 001, 004. */
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#include "core/options_internal.h"

/* ---- field access by offset, so one table can name any field ---- */

#define MAX_SET 6
/* to_json of a struct is far below this; it is only a test buffer. */
#define JSON_BUF 16384

typedef struct field_expect {
    size_t off, size; /* size 0: unused slot */
    long long v;      /* bool, enum, int, size_t, uint64_t fields */
    const char *s;    /* char[] fields */
} field_expect_t;

enum { P_MS, P_MSPROF };
enum { START_UNTOUCHED = -1 };

typedef struct opt_case {
    int parser;
    const char *json;
    int rc;
    int start;       /* expected *start, or START_UNTOUCHED */
    const char *log; /* the exact captured log ("" = nothing logged) */
    field_expect_t set[MAX_SET];
} opt_case_t;

#define F(f) offsetof(nnp_options_t, f), sizeof(((nnp_options_t *)0)->f)
#define I(f, v)                                                                                    \
    {                                                                                              \
        F(f), (long long)(v), NULL                                                                 \
    }
#define S(f, s)                                                                                    \
    {                                                                                              \
        F(f), 0, (s)                                                                               \
    }
#define NONE                                                                                       \
    {                                                                                              \
        0, 0, 0, NULL                                                                              \
    }
#define W(msg)    "warn: " msg "\n"
#define INFO(msg) "info: " msg "\n"
#define MS(json, rc, log, ...)                                                                     \
    {                                                                                              \
        P_MS, json, rc, START_UNTOUCHED, log,                                                      \
        {                                                                                          \
            __VA_ARGS__                                                                            \
        }                                                                                          \
    }
#define MP(json, rc, log, ...)                                                                     \
    {                                                                                              \
        P_MSPROF, json, rc, START_UNTOUCHED, log,                                                  \
        {                                                                                          \
            __VA_ARGS__                                                                            \
        }                                                                                          \
    }
#define MS_START(json, start, log)                                                                 \
    {                                                                                              \
        P_MS, json, NNP_OK, start, log,                                                            \
        {                                                                                          \
            NONE                                                                                   \
        }                                                                                          \
    }

#define BOOL_WARN(key, got, def)                                                                   \
    W("For 'Profiler', the parameter " key " must be bool, but got type " got                      \
      ", it will be set to " def ".")
#define INT_WARN(key, got, def)                                                                    \
    W("For 'Profiler', the parameter " key " must be int, but got type " got                       \
      ", it will be set to " def ".")
#define RANGE_WARN(ctx, key, range, got, def)                                                      \
    W("For '" ctx "', the parameter " key " must be in " range ", but got " got                    \
      ", it will be set to " def ".")
#define CHOICE_WARN(ctx, key, set, got, def)                                                       \
    W("For '" ctx "', the parameter " key " must be one of " set ", but got " got                  \
      ", it will be set to " def ".")
#define ONOFF_WARN(key, got, def)                                                                  \
    CHOICE_WARN("PROFILING_OPTIONS", key, "[\"on\", \"off\"]", got, def)
#define TIMELINE_WARN                                                                              \
    W("[Profiler]The 'timeline_limit' parameter must be greater than 0, it will be set to 500.")
#define LEVEL0_WARN                                                                                \
    W("For 'Profiler', when profiler_level set Level0, data_process will be set to False and "     \
      "aicore_metrics set to -1.")
#define LEVEL1_WARN                                                                                \
    W("For 'Profiler', when profiler_level set Level1, data_process will be set to False.")
#define LEVEL_BAD_WARN(got)                                                                        \
    W("For 'Profiler', the parameter profiler_level must be one of [ProfilerLevel.Level0, "        \
      "ProfilerLevel.Level1, ProfilerLevel.Level2], but got type " got                             \
      ", it will be set to ProfilerLevel.Level0.")
#define FRAMEWORK_WARN(got)                                                                        \
    CHOICE_WARN("Profiler", "profile_framework", "['memory', 'time', 'all', None]", got, "'all'")
#define AICORE_WARN(got)                                                                           \
    RANGE_WARN("Profiler", "aicore_metrics", "[-1, 0, 1, 2, 3, 4, 5, 6]", got, "0")
#define OPTIME_WARN(key)                                                                           \
    W("When op_time is set to False, the parameter '" key "' setting is invalid.")
#define UNKNOWN_WARN(key) W(key " is an invalid param which doesn't work.")
#define STORAGE_WARN(got)                                                                          \
    RANGE_WARN("PROFILING_OPTIONS", "storage_limit", "[200MB, 4294967295MB]", got,                 \
               "\"\" (90% of the free disk space)")
#define TASK_WARN(key, got)                                                                        \
    CHOICE_WARN("PROFILING_OPTIONS", key, "[\"on\", \"off\", \"l0\", \"l1\"]", got, "\"on\"")
#define AIC_WARN(got)                                                                              \
    CHOICE_WARN("PROFILING_OPTIONS", "aic_metrics",                                                \
                "[ArithmeticUtilization, PipeUtilization, Memory, MemoryL0, MemoryUB, "            \
                "ResourceConflictRatio, L2Cache, Custom:<1 to 8 registers in [0x1, 0x6E]>]",       \
                got, "\"PipeUtilization\"")
#define POINT_WARN(key, got)                                                                       \
    W("For 'PROFILING_OPTIONS', the parameter " key " must be a str of at most 255 characters, "   \
      "but got " got ", it will be set to \"\" (detected automatically).")
#define HOSTSYS_TYPE_WARN(key, got)                                                                \
    W("For 'PROFILING_OPTIONS', the parameter " key " must be a str of comma-separated cpu, mem, " \
      "but got type " got ", it will be set to \"\".")
#define HOSTSYS_ITEM_WARN(key, item, got)                                                          \
    W("For 'PROFILING_OPTIONS', the parameter " key " has an invalid item \"" item "\" in " got    \
      ", it is ignored; valid items are cpu, mem.")
#define FREQ_WARN(got) RANGE_WARN("PROFILING_OPTIONS", "host_sys_usage_freq", "[1, 50]", got, "50")
#define HW_INFO(key)                                                                               \
    INFO("For 'PROFILING_OPTIONS', the parameter " key                                             \
         " is accepted but not collected on this platform.")

#define HOST_CPU NNP_HOST_SYS_CPU
#define HOST_MEM NNP_HOST_SYS_MEM
#define HOST_ALL (NNP_HOST_SYS_CPU | NNP_HOST_SYS_MEM)

/* clang-format off */
static const opt_case_t cases[] = {
    /* ---------------- MindSpore keys (seed 000 _parser_kwargs, _parse_parameter_for_ascend) */
    MS("{}", NNP_OK, "", NONE),
    /* start (seed 001 MS_PROFILER_OPTIONS) */
    MS_START("{\"start\": true}", 1, ""),
    MS_START("{\"start\": false}", 0, ""),
    MS_START("{\"start\": \"yes\"}", 0, BOOL_WARN("start", "str (\"yes\")", "False")),
    MS_START("{\"op_time\": true}", START_UNTOUCHED, ""),
    /* start_profile */
    MS("{\"start_profile\": false}", NNP_OK, "", I(start_profile, false)),
    MS("{\"start_profile\": true}", NNP_OK, "", I(start_profile, true)),
    MS("{\"start_profile\": \"no\"}", NNP_OK, BOOL_WARN("start_profile", "str (\"no\")", "True"),
       I(start_profile, true)),
    MS("{\"start_profile\": 1}", NNP_OK, BOOL_WARN("start_profile", "int (1)", "True"),
       I(start_profile, true)),
    /* output_path */
    MS("{\"output_path\": \"/tmp/x\"}", NNP_OK, "", S(output_path, "/tmp/x")),
    MS("{\"output_path\": \"rel/dir with space\"}", NNP_OK, "",
       S(output_path, "rel/dir with space")),
    MS("{\"output_path\": 5}", NNP_OK,
       W("For 'Profiler', the parameter output_path must be str, but got type int (5), it will "
         "be set to \"./data\"."),
       S(output_path, "./data")),
    MS("{\"output_path\": null}", NNP_OK, "", NONE),
    MS("{\"output_path\": \"/tmp/a\\nb\"}", NNP_EPATH, "", NONE),
    MS("{\"output_path\": \"/tmp/a\\tb\"}", NNP_EPATH, "", NONE),
    MS("{\"output_path\": \"/tmp/a\\rb\"}", NNP_EPATH, "", NONE),
    MS("{\"output_path\": \"/tmp/a\\fb\"}", NNP_EPATH, "", NONE),
    MS("{\"output_path\": \"/tmp/a\\bb\"}", NNP_EPATH, "", NONE),
    MS("{\"output_path\": \"/tmp/a\\u000bb\"}", NNP_EPATH, "", NONE),
    MS("{\"output_path\": \"/tmp/a\\u007fb\"}", NNP_EPATH, "", NONE),
    MS("{\"output_path\": \"\"}", NNP_EPATH, "", NONE),
    /* a forbidden path fails the whole document: nothing of it is applied */
    MS("{\"op_time\": false, \"output_path\": \"a\\nb\"}", NNP_EPATH, "", NONE),
    /* op_time and the options that need it (seed 000 ALWAYS_VALID_PARAM) */
    MS("{\"op_time\": false}", NNP_OK, "", I(op_time, false)),
    MS("{\"op_time\": \"yes\"}", NNP_OK, BOOL_WARN("op_time", "str (\"yes\")", "True"),
       I(op_time, true)),
    MS("{\"op_time\": false, \"profile_memory\": true, \"timeline_limit\": 10, \"l2_cache\": true}",
       NNP_OK, OPTIME_WARN("profile_memory") OPTIME_WARN("timeline_limit"),
       I(op_time, false), I(profile_memory, true), I(timeline_limit_mb, 10), I(l2_cache, true)),
    MS("{\"aicore_metrics\": 1, \"host_stack\": false, \"sync_enable\": false, \"op_time\": false}",
       NNP_OK, OPTIME_WARN("aicore_metrics") OPTIME_WARN("host_stack") OPTIME_WARN("sync_enable"),
       I(op_time, false), I(aicore_metrics, 1), I(host_stack, false), I(sync_enable, false)),
    MS("{\"op_time\": false, \"data_simplification\": true, \"profile_communication\": true, "
       "\"data_process\": true}", NNP_OK,
       OPTIME_WARN("data_simplification") OPTIME_WARN("profile_communication"),
       I(op_time, false), I(data_simplification, true), I(profile_communication, true),
       I(data_process, true)),
    MS("{\"op_time\": false, \"start_profile\": true, \"parallel_strategy\": true, "
       "\"hbm_ddr\": true, \"pcie\": true}", NNP_OK, "",
       I(op_time, false), I(start_profile, true), I(parallel_strategy, true), I(hbm_ddr, true),
       I(pcie, true)),
    MS("{\"op_time\": false, \"output_path\": \"/o\", \"profile_framework\": \"time\", "
       "\"profiler_level\": \"Level2\", \"buffer_size_kb\": 64, \"rank_id\": 1}", NNP_OK, "",
       I(op_time, false), S(output_path, "/o"), I(profile_framework, NNP_FRAMEWORK_TIME),
       I(profiler_level, NNP_LEVEL_2), I(buffer_size_kb, 64), I(rank_id, 1)),
    /* profile_memory / profile_communication (default False) */
    MS("{\"profile_memory\": true}", NNP_OK, "", I(profile_memory, true)),
    MS("{\"profile_memory\": \"x\"}", NNP_OK, BOOL_WARN("profile_memory", "str (\"x\")", "False"),
       I(profile_memory, false)),
    MS("{\"profile_communication\": true}", NNP_OK, "", I(profile_communication, true)),
    MS("{\"profile_communication\": [true]}", NNP_OK,
       BOOL_WARN("profile_communication", "list ([true])", "False"),
       I(profile_communication, false)),
    /* parallel_strategy / data_process (default True) */
    MS("{\"parallel_strategy\": false}", NNP_OK, "", I(parallel_strategy, false)),
    MS("{\"parallel_strategy\": 0}", NNP_OK, BOOL_WARN("parallel_strategy", "int (0)", "True"),
       I(parallel_strategy, true)),
    MS("{\"data_process\": false}", NNP_OK, "", I(data_process, false)),
    MS("{\"data_process\": null}", NNP_OK, BOOL_WARN("data_process", "NoneType (null)", "True"),
       I(data_process, true)),
    /* timeline_limit */
    MS("{\"timeline_limit\": 100}", NNP_OK, "", I(timeline_limit_mb, 100)),
    MS("{\"timeline_limit\": 1}", NNP_OK, "", I(timeline_limit_mb, 1)),
    MS("{\"timeline_limit\": 2147483647}", NNP_OK, "", I(timeline_limit_mb, 2147483647)),
    MS("{\"timeline_limit\": \"100\"}", NNP_OK, INT_WARN("timeline_limit", "str (\"100\")", "500"),
       I(timeline_limit_mb, 500)),
    MS("{\"timeline_limit\": true}", NNP_OK, INT_WARN("timeline_limit", "bool (true)", "500"),
       I(timeline_limit_mb, 500)),
    MS("{\"timeline_limit\": 1.5}", NNP_OK, INT_WARN("timeline_limit", "float (1.5)", "500"),
       I(timeline_limit_mb, 500)),
    MS("{\"timeline_limit\": 0}", NNP_OK, TIMELINE_WARN, I(timeline_limit_mb, 500)),
    MS("{\"timeline_limit\": -5}", NNP_OK, TIMELINE_WARN, I(timeline_limit_mb, 500)),
    MS("{\"timeline_limit\": 3000000000}", NNP_OK,
       RANGE_WARN("Profiler", "timeline_limit", "[1, 2147483647]", "3000000000", "500"),
       I(timeline_limit_mb, 500)),
    MS("{\"timeline_limit\": 5, \"timeline_limit\": 6}", NNP_OK, "", I(timeline_limit_mb, 6)),
    /* profile_framework */
    MS("{\"profile_framework\": \"all\"}", NNP_OK, "", I(profile_framework, NNP_FRAMEWORK_ALL)),
    MS("{\"profile_framework\": \"time\"}", NNP_OK, "", I(profile_framework, NNP_FRAMEWORK_TIME)),
    MS("{\"profile_framework\": \"memory\"}", NNP_OK, "",
       I(profile_framework, NNP_FRAMEWORK_MEMORY)),
    MS("{\"profile_framework\": null}", NNP_OK, "", I(profile_framework, NNP_FRAMEWORK_NONE)),
    MS("{\"profile_framework\": \"cpu\"}", NNP_OK, FRAMEWORK_WARN("\"cpu\""),
       I(profile_framework, NNP_FRAMEWORK_ALL)),
    MS("{\"profile_framework\": 1}", NNP_OK, FRAMEWORK_WARN("1"),
       I(profile_framework, NNP_FRAMEWORK_ALL)),
    /* profiler_level and its side effects, applied after every other key */
    MS("{\"profiler_level\": \"Level0\"}", NNP_OK, LEVEL0_WARN,
       I(profiler_level, NNP_LEVEL_0), I(data_process, false), I(aicore_metrics, -1)),
    MS("{\"profiler_level\": \"Level0\", \"data_process\": true, \"aicore_metrics\": 3}", NNP_OK,
       LEVEL0_WARN, I(profiler_level, NNP_LEVEL_0), I(data_process, false),
       I(aicore_metrics, -1)),
    MS("{\"profiler_level\": \"Level1\"}", NNP_OK, LEVEL1_WARN,
       I(profiler_level, NNP_LEVEL_1), I(data_process, false)),
    MS("{\"profiler_level\": \"Level1\", \"aicore_metrics\": 4}", NNP_OK, LEVEL1_WARN,
       I(profiler_level, NNP_LEVEL_1), I(data_process, false), I(aicore_metrics, 4)),
    MS("{\"profiler_level\": \"Level2\"}", NNP_OK, "", I(profiler_level, NNP_LEVEL_2)),
    MS("{\"profiler_level\": null}", NNP_OK, "", I(profiler_level, NNP_LEVEL_UNSET)),
    /* invalid: Level0 without Level0's side effects (the seed's if/elif) */
    MS("{\"profiler_level\": \"Level3\"}", NNP_OK, LEVEL_BAD_WARN("str (\"Level3\")"),
       I(profiler_level, NNP_LEVEL_0)),
    MS("{\"profiler_level\": 0}", NNP_OK, LEVEL_BAD_WARN("int (0)"),
       I(profiler_level, NNP_LEVEL_0)),
    MS("{\"profiler_level\": \"level0\"}", NNP_OK, LEVEL_BAD_WARN("str (\"level0\")"),
       I(profiler_level, NNP_LEVEL_0)),
    /* aicore_metrics: -1..6 (AICORE_METRICS_DICT) */
    MS("{\"aicore_metrics\": -1}", NNP_OK, "", I(aicore_metrics, -1)),
    MS("{\"aicore_metrics\": 0}", NNP_OK, "", I(aicore_metrics, 0)),
    MS("{\"aicore_metrics\": 6}", NNP_OK, "", I(aicore_metrics, 6)),
    MS("{\"aicore_metrics\": 7}", NNP_OK, AICORE_WARN("7"), I(aicore_metrics, 0)),
    MS("{\"aicore_metrics\": -2}", NNP_OK, AICORE_WARN("-2"), I(aicore_metrics, 0)),
    MS("{\"aicore_metrics\": \"1\"}", NNP_OK, INT_WARN("aicore_metrics", "str (\"1\")", "0"),
       I(aicore_metrics, 0)),
    MS("{\"aicore_metrics\": true}", NNP_OK, INT_WARN("aicore_metrics", "bool (true)", "0"),
       I(aicore_metrics, 0)),
    MS("{\"aicore_metrics\": 2.5}", NNP_OK, INT_WARN("aicore_metrics", "float (2.5)", "0"),
       I(aicore_metrics, 0)),
    /* l2_cache / hbm_ddr / pcie (default False) */
    MS("{\"l2_cache\": true}", NNP_OK, "", I(l2_cache, true)),
    MS("{\"l2_cache\": \"on\"}", NNP_OK, BOOL_WARN("l2_cache", "str (\"on\")", "False"),
       I(l2_cache, false)),
    MS("{\"hbm_ddr\": true}", NNP_OK, "", I(hbm_ddr, true)),
    MS("{\"hbm_ddr\": 1}", NNP_OK, BOOL_WARN("hbm_ddr", "int (1)", "False"), I(hbm_ddr, false)),
    MS("{\"pcie\": true}", NNP_OK, "", I(pcie, true)),
    MS("{\"pcie\": {}}", NNP_OK, BOOL_WARN("pcie", "dict ({})", "False"), I(pcie, false)),
    /* sync_enable keeps its own sentence (seed 000 _parse_parameter_for_gpu) */
    MS("{\"sync_enable\": false}", NNP_OK, "", I(sync_enable, false)),
    MS("{\"sync_enable\": \"x\"}", NNP_OK,
       W("The parameter sync_enable is an invalid value (\"x\"), it will be set to True."),
       I(sync_enable, true)),
    /* data_simplification / host_stack (default True) */
    MS("{\"data_simplification\": false}", NNP_OK, "", I(data_simplification, false)),
    MS("{\"data_simplification\": 0}", NNP_OK,
       BOOL_WARN("data_simplification", "int (0)", "True"), I(data_simplification, true)),
    MS("{\"host_stack\": false}", NNP_OK, "", I(host_stack, false)),
    MS("{\"host_stack\": \"false\"}", NNP_OK, BOOL_WARN("host_stack", "str (\"false\")", "True"),
       I(host_stack, true)),
    /* identity */
    MS("{\"rank_id\": 5}", NNP_OK, "", I(rank_id, 5)),
    MS("{\"rank_id\": -1}", NNP_OK,
       RANGE_WARN("Profiler", "rank_id", "[0, 2147483647]", "-1", "0"), I(rank_id, 0)),
    MS("{\"rank_id\": \"5\"}", NNP_OK, INT_WARN("rank_id", "str (\"5\")", "0"), I(rank_id, 0)),
    MS("{\"device_id\": 2}", NNP_OK, "", I(device_id, 2)),
    MS("{\"device_id\": 2147483648}", NNP_OK,
       RANGE_WARN("Profiler", "device_id", "[0, 2147483647]", "2147483648", "0"),
       I(device_id, 0)),
    MS("{\"rank_size\": 4}", NNP_OK, "", I(rank_size, 4)),
    MS("{\"rank_size\": 0}", NNP_OK,
       RANGE_WARN("Profiler", "rank_size", "[1, 2147483647]", "0", "1"), I(rank_size, 1)),
    /* recorder settings */
    MS("{\"buffer_size_kb\": 128}", NNP_OK, "", I(buffer_size_kb, 128)),
    MS("{\"buffer_size_kb\": 1048576}", NNP_OK, "", I(buffer_size_kb, 1048576)),
    MS("{\"buffer_size_kb\": 63}", NNP_OK,
       RANGE_WARN("Profiler", "buffer_size_kb", "[64, 1048576]", "63", "4096"),
       I(buffer_size_kb, 4096)),
    MS("{\"buffer_size_kb\": 1048577}", NNP_OK,
       RANGE_WARN("Profiler", "buffer_size_kb", "[64, 1048576]", "1048577", "4096"),
       I(buffer_size_kb, 4096)),
    MS("{\"buffer_size_kb\": \"big\"}", NNP_OK,
       INT_WARN("buffer_size_kb", "str (\"big\")", "4096"), I(buffer_size_kb, 4096)),
    MS("{\"full_policy\": \"block\"}", NNP_OK, "", I(full_policy, NNP_FULL_BLOCK)),
    MS("{\"full_policy\": \"drop\"}", NNP_OK, "", I(full_policy, NNP_FULL_DROP)),
    MS("{\"full_policy\": \"wait\"}", NNP_OK, "", I(full_policy, NNP_FULL_WAIT)),
    MS("{\"full_policy\": \"spin\"}", NNP_OK,
       CHOICE_WARN("Profiler", "full_policy", "['drop', 'block', 'wait']", "\"spin\"", "'wait'"),
       I(full_policy, NNP_FULL_WAIT)),
    MS("{\"writer_period_ms\": 1}", NNP_OK, "", I(writer_period_ms, 1)),
    MS("{\"writer_period_ms\": 1000}", NNP_OK, "", I(writer_period_ms, 1000)),
    MS("{\"writer_period_ms\": 0}", NNP_OK,
       RANGE_WARN("Profiler", "writer_period_ms", "[1, 1000]", "0", "10"),
       I(writer_period_ms, 10)),
    MS("{\"writer_period_ms\": 1001}", NNP_OK,
       RANGE_WARN("Profiler", "writer_period_ms", "[1, 1000]", "1001", "10"),
       I(writer_period_ms, 10)),
    MS("{\"sample_interval_ms\": 0}", NNP_OK, "", I(sample_interval_ms, 0)),
    MS("{\"sample_interval_ms\": 3600000}", NNP_OK, "", I(sample_interval_ms, 3600000)),
    MS("{\"sample_interval_ms\": 3600001}", NNP_OK,
       RANGE_WARN("Profiler", "sample_interval_ms", "[0, 3600000]", "3600001", "1000"),
       I(sample_interval_ms, 1000)),
    MS("{\"sample_interval_ms\": -1}", NNP_OK,
       RANGE_WARN("Profiler", "sample_interval_ms", "[0, 3600000]", "-1", "1000"),
       I(sample_interval_ms, 1000)),
    MS("{\"raw_file_bytes\": 65536}", NNP_OK, "", I(raw_file_bytes, 65536)),
    MS("{\"raw_file_bytes\": 9007199254740992}", NNP_OK, "",
       I(raw_file_bytes, 9007199254740992LL)),
    MS("{\"raw_file_bytes\": 65535}", NNP_OK,
       RANGE_WARN("Profiler", "raw_file_bytes", "[65536, 9007199254740992]", "65535",
                  "67108864"),
       I(raw_file_bytes, 67108864)),
    MS("{\"raw_file_bytes\": 1e300}", NNP_OK,
       RANGE_WARN("Profiler", "raw_file_bytes", "[65536, 9007199254740992]", "1e+300",
                  "67108864"),
       I(raw_file_bytes, 67108864)),
    MS("{\"storage_limit_bytes\": 1000}", NNP_OK, "", I(storage_limit_bytes, 1000)),
    MS("{\"storage_limit_bytes\": -1}", NNP_OK,
       RANGE_WARN("Profiler", "storage_limit_bytes", "[0, 9007199254740992]", "-1", "0"),
       I(storage_limit_bytes, 0)),
    /* unknown keys: warned and ignored, the rest still applies */
    MS("{\"foo\": 1}", NNP_OK, UNKNOWN_WARN("foo"), NONE),
    MS("{\"ascend_job_id\": \"/x\", \"op_time\": false}", NNP_OK, UNKNOWN_WARN("ascend_job_id"),
       I(op_time, false)),
    MS("{\"fp_point\": \"x\"}", NNP_OK, UNKNOWN_WARN("fp_point"), NONE),
    MS("{\"Op_Time\": false}", NNP_OK, UNKNOWN_WARN("Op_Time"), NONE),
    MS("{\"a\\nb\": 1}", NNP_OK, UNKNOWN_WARN("a\\nb"), NONE),
    /* not an object / not JSON: EINVAL, nothing changes */
    MS("", NNP_EINVAL, "", NONE),
    MS("[1, 2]", NNP_EINVAL, "", NONE),
    MS("\"op_time\"", NNP_EINVAL, "", NONE),
    MS("null", NNP_EINVAL, "", NONE),
    MS("{\"op_time\": false", NNP_EINVAL, "", NONE),
    MS("{\"op_time\": false} x", NNP_EINVAL, "", NONE),
    MS("{op_time: false}", NNP_EINVAL, "", NONE),

    /* ---------------- msprof PROFILING_OPTIONS keys (seed 004) */
    MP("{}", NNP_OK, "", NONE),
    MP("{\"output\": \"/tmp/m\"}", NNP_OK, "", S(output_path, "/tmp/m")),
    MP("{\"output\": \"/tmp/a\\tb\"}", NNP_EPATH, "", NONE),
    MP("{\"output\": \"/tmp/a\\u007f\"}", NNP_EPATH, "", NONE),
    MP("{\"output\": \"\"}", NNP_EPATH, "", NONE),
    MP("{\"output\": 3}", NNP_OK,
       W("For 'PROFILING_OPTIONS', the parameter output must be str, but got type int (3), it "
         "will be set to \"./data\"."),
       S(output_path, "./data")),
    MP("{\"output\": null}", NNP_OK, "", NONE),
    /* storage_limit */
    MP("{\"storage_limit\": \"200MB\"}", NNP_OK, "", I(storage_limit_mb, 200)),
    MP("{\"storage_limit\": \"4294967295MB\"}", NNP_OK, "", I(storage_limit_mb, 4294967295LL)),
    MP("{\"storage_limit\": \"\"}", NNP_OK, "", I(storage_limit_mb, 0)),
    MP("{\"storage_limit\": \"199MB\"}", NNP_OK, STORAGE_WARN("\"199MB\""), I(storage_limit_mb, 0)),
    MP("{\"storage_limit\": \"4294967296MB\"}", NNP_OK, STORAGE_WARN("\"4294967296MB\""),
       I(storage_limit_mb, 0)),
    MP("{\"storage_limit\": \"99999999999999999999999MB\"}", NNP_OK,
       STORAGE_WARN("\"99999999999999999999999MB\""), I(storage_limit_mb, 0)),
    MP("{\"storage_limit\": \"300\"}", NNP_OK, STORAGE_WARN("\"300\""), I(storage_limit_mb, 0)),
    MP("{\"storage_limit\": \"300mb\"}", NNP_OK, STORAGE_WARN("\"300mb\""), I(storage_limit_mb, 0)),
    MP("{\"storage_limit\": \"300MB \"}", NNP_OK, STORAGE_WARN("\"300MB \""),
       I(storage_limit_mb, 0)),
    MP("{\"storage_limit\": \"-300MB\"}", NNP_OK, STORAGE_WARN("\"-300MB\""),
       I(storage_limit_mb, 0)),
    MP("{\"storage_limit\": 300}", NNP_OK, STORAGE_WARN("300"), I(storage_limit_mb, 0)),
    /* training_trace (default on) */
    MP("{\"training_trace\": \"off\"}", NNP_OK, "", I(training_trace, false)),
    MP("{\"training_trace\": \"on\"}", NNP_OK, "", I(training_trace, true)),
    MP("{\"training_trace\": \"yes\"}", NNP_OK, ONOFF_WARN("training_trace", "\"yes\"", "\"on\""),
       I(training_trace, true)),
    MP("{\"training_trace\": true}", NNP_OK, ONOFF_WARN("training_trace", "true", "\"on\""),
       I(training_trace, true)),
    /* task_trace / task_time */
    MP("{\"task_trace\": \"on\"}", NNP_OK, "", I(task_trace, NNP_TASK_TRACE_ON)),
    MP("{\"task_trace\": \"off\"}", NNP_OK, "", I(task_trace, NNP_TASK_TRACE_OFF)),
    MP("{\"task_trace\": \"l0\"}", NNP_OK, "", I(task_trace, NNP_TASK_TRACE_L0)),
    MP("{\"task_trace\": \"l1\"}", NNP_OK, "", I(task_trace, NNP_TASK_TRACE_L1)),
    MP("{\"task_time\": \"l0\"}", NNP_OK, "", I(task_trace, NNP_TASK_TRACE_L0)),
    MP("{\"task_trace\": \"l2\"}", NNP_OK, TASK_WARN("task_trace", "\"l2\""),
       I(task_trace, NNP_TASK_TRACE_ON)),
    MP("{\"task_time\": 1}", NNP_OK, TASK_WARN("task_time", "1"),
       I(task_trace, NNP_TASK_TRACE_ON)),
    /* hccl (default off) */
    MP("{\"hccl\": \"on\"}", NNP_OK, "", I(hccl, true)),
    MP("{\"hccl\": \"ON\"}", NNP_OK, ONOFF_WARN("hccl", "\"ON\"", "\"off\""), I(hccl, false)),
    /* aicpu: anything else than on/off is off */
    MP("{\"aicpu\": \"on\"}", NNP_OK, "", I(aicpu, true)),
    MP("{\"aicpu\": \"off\"}", NNP_OK, "", I(aicpu, false)),
    MP("{\"aicpu\": \"enable\"}", NNP_OK, ONOFF_WARN("aicpu", "\"enable\"", "\"off\""),
       I(aicpu, false)),
    /* fp_point / bp_point */
    MP("{\"fp_point\": \"fp32_vars/conv2d/BatchNorm\"}", NNP_OK, "",
       S(fp_point, "fp32_vars/conv2d/BatchNorm")),
    MP("{\"fp_point\": \"\"}", NNP_OK, "", S(fp_point, "")),
    MP("{\"fp_point\": 5}", NNP_OK, POINT_WARN("fp_point", "5"), S(fp_point, "")),
    MP("{\"bp_point\": \"loss_scale/gradients/AddN_70\"}", NNP_OK, "",
       S(bp_point, "loss_scale/gradients/AddN_70")),
    MP("{\"bp_point\": false}", NNP_OK, POINT_WARN("bp_point", "false"), S(bp_point, "")),
    /* aic_metrics */
    MP("{\"aic_metrics\": \"ArithmeticUtilization\"}", NNP_OK, "",
       S(aic_metrics, "ArithmeticUtilization")),
    MP("{\"aic_metrics\": \"PipeUtilization\"}", NNP_OK, "", S(aic_metrics, "PipeUtilization")),
    MP("{\"aic_metrics\": \"Memory\"}", NNP_OK, "", S(aic_metrics, "Memory")),
    MP("{\"aic_metrics\": \"MemoryL0\"}", NNP_OK, "", S(aic_metrics, "MemoryL0")),
    MP("{\"aic_metrics\": \"MemoryUB\"}", NNP_OK, "", S(aic_metrics, "MemoryUB")),
    MP("{\"aic_metrics\": \"ResourceConflictRatio\"}", NNP_OK, "",
       S(aic_metrics, "ResourceConflictRatio")),
    MP("{\"aic_metrics\": \"L2Cache\"}", NNP_OK, "", S(aic_metrics, "L2Cache")),
    MP("{\"aic_metrics\": \"Custom:0x49,0x8,0x15,0x1b,0x64,0x10\"}", NNP_OK, "",
       S(aic_metrics, "Custom:0x49,0x8,0x15,0x1b,0x64,0x10")),
    MP("{\"aic_metrics\": \"Custom:1,110,0X6e,0x1,2,3,4,5\"}", NNP_OK, "",
       S(aic_metrics, "Custom:1,110,0X6e,0x1,2,3,4,5")),
    MP("{\"aic_metrics\": \"Custom:0x6F\"}", NNP_OK, AIC_WARN("\"Custom:0x6F\""),
       S(aic_metrics, "PipeUtilization")),
    MP("{\"aic_metrics\": \"Custom:111\"}", NNP_OK, AIC_WARN("\"Custom:111\""),
       S(aic_metrics, "PipeUtilization")),
    MP("{\"aic_metrics\": \"Custom:0x0\"}", NNP_OK, AIC_WARN("\"Custom:0x0\""),
       S(aic_metrics, "PipeUtilization")),
    MP("{\"aic_metrics\": \"Custom:\"}", NNP_OK, AIC_WARN("\"Custom:\""),
       S(aic_metrics, "PipeUtilization")),
    MP("{\"aic_metrics\": \"Custom:0x\"}", NNP_OK, AIC_WARN("\"Custom:0x\""),
       S(aic_metrics, "PipeUtilization")),
    MP("{\"aic_metrics\": \"Custom:1,2,3,4,5,6,7,8,9\"}", NNP_OK,
       AIC_WARN("\"Custom:1,2,3,4,5,6,7,8,9\""), S(aic_metrics, "PipeUtilization")),
    MP("{\"aic_metrics\": \"Custom:1,,2\"}", NNP_OK, AIC_WARN("\"Custom:1,,2\""),
       S(aic_metrics, "PipeUtilization")),
    MP("{\"aic_metrics\": \"Custom:1,\"}", NNP_OK, AIC_WARN("\"Custom:1,\""),
       S(aic_metrics, "PipeUtilization")),
    MP("{\"aic_metrics\": \"Custom: 1\"}", NNP_OK, AIC_WARN("\"Custom: 1\""),
       S(aic_metrics, "PipeUtilization")),
    MP("{\"aic_metrics\": \"Custom:-1\"}", NNP_OK, AIC_WARN("\"Custom:-1\""),
       S(aic_metrics, "PipeUtilization")),
    MP("{\"aic_metrics\": \"Custom:0x1g\"}", NNP_OK, AIC_WARN("\"Custom:0x1g\""),
       S(aic_metrics, "PipeUtilization")),
    MP("{\"aic_metrics\": \"pipeutilization\"}", NNP_OK, AIC_WARN("\"pipeutilization\""),
       S(aic_metrics, "PipeUtilization")),
    MP("{\"aic_metrics\": 1}", NNP_OK, AIC_WARN("1"), S(aic_metrics, "PipeUtilization")),
    /* l2 -> l2_cache, msproftx, runtime_api (default off) */
    MP("{\"l2\": \"on\"}", NNP_OK, "", I(l2_cache, true)),
    MP("{\"l2\": \"x\"}", NNP_OK, ONOFF_WARN("l2", "\"x\"", "\"off\""), I(l2_cache, false)),
    MP("{\"msproftx\": \"on\"}", NNP_OK, "", I(msproftx, true)),
    MP("{\"msproftx\": 1}", NNP_OK, ONOFF_WARN("msproftx", "1", "\"off\""), I(msproftx, false)),
    MP("{\"runtime_api\": \"on\"}", NNP_OK, "", I(runtime_api, true)),
    MP("{\"runtime_api\": \"\"}", NNP_OK, ONOFF_WARN("runtime_api", "\"\"", "\"off\""),
       I(runtime_api, false)),
    /* host_sys / host_sys_usage */
    MP("{\"host_sys\": \"cpu\"}", NNP_OK, "", I(host_sys, HOST_CPU)),
    MP("{\"host_sys\": \"mem\"}", NNP_OK, "", I(host_sys, HOST_MEM)),
    MP("{\"host_sys\": \"cpu,mem\"}", NNP_OK, "", I(host_sys, HOST_ALL)),
    MP("{\"host_sys\": \" mem , cpu \"}", NNP_OK, "", I(host_sys, HOST_ALL)),
    MP("{\"host_sys\": \"\"}", NNP_OK, "", I(host_sys, 0)),
    MP("{\"host_sys\": \"cpu,disk\"}", NNP_OK,
       HOSTSYS_ITEM_WARN("host_sys", "disk", "\"cpu,disk\""), I(host_sys, HOST_CPU)),
    MP("{\"host_sys\": \"CPU\"}", NNP_OK, HOSTSYS_ITEM_WARN("host_sys", "CPU", "\"CPU\""),
       I(host_sys, 0)),
    MP("{\"host_sys\": 1}", NNP_OK, HOSTSYS_TYPE_WARN("host_sys", "int (1)"), I(host_sys, 0)),
    MP("{\"host_sys_usage\": \"cpu,mem\"}", NNP_OK, "", I(host_sys_usage, HOST_ALL)),
    MP("{\"host_sys_usage\": \"mem,,\"}", NNP_OK,
       HOSTSYS_ITEM_WARN("host_sys_usage", "", "\"mem,,\"")
       HOSTSYS_ITEM_WARN("host_sys_usage", "", "\"mem,,\""),
       I(host_sys_usage, HOST_MEM)),
    MP("{\"host_sys_usage\": [\"cpu\"]}", NNP_OK,
       HOSTSYS_TYPE_WARN("host_sys_usage", "list ([\"cpu\"])"), I(host_sys_usage, 0)),
    /* host_sys_usage_freq */
    MP("{\"host_sys_usage_freq\": 10}", NNP_OK, "", I(host_sys_usage_freq, 10)),
    MP("{\"host_sys_usage_freq\": 1}", NNP_OK, "", I(host_sys_usage_freq, 1)),
    MP("{\"host_sys_usage_freq\": 50}", NNP_OK, "", I(host_sys_usage_freq, 50)),
    MP("{\"host_sys_usage_freq\": \"20\"}", NNP_OK, "", I(host_sys_usage_freq, 20)),
    MP("{\"host_sys_usage_freq\": 0}", NNP_OK, FREQ_WARN("0"), I(host_sys_usage_freq, 50)),
    MP("{\"host_sys_usage_freq\": 51}", NNP_OK, FREQ_WARN("51"), I(host_sys_usage_freq, 50)),
    MP("{\"host_sys_usage_freq\": 1.5}", NNP_OK, FREQ_WARN("1.5"), I(host_sys_usage_freq, 50)),
    MP("{\"host_sys_usage_freq\": \"x\"}", NNP_OK, FREQ_WARN("\"x\""),
       I(host_sys_usage_freq, 50)),
    MP("{\"host_sys_usage_freq\": \"99999999999999999999\"}", NNP_OK,
       FREQ_WARN("\"99999999999999999999\""), I(host_sys_usage_freq, 50)),
    /* hardware options: accepted, not collected here */
    MP("{\"sys_hardware_mem_freq\": 50}", NNP_OK, HW_INFO("sys_hardware_mem_freq"), NONE),
    MP("{\"llc_profiling\": \"read\"}", NNP_OK, HW_INFO("llc_profiling"), NONE),
    MP("{\"sys_io_sampling_freq\": 10}", NNP_OK, HW_INFO("sys_io_sampling_freq"), NONE),
    MP("{\"sys_interconnection_freq\": 10}", NNP_OK, HW_INFO("sys_interconnection_freq"), NONE),
    MP("{\"dvpp_freq\": 10}", NNP_OK, HW_INFO("dvpp_freq"), NONE),
    MP("{\"instr_profiling_freq\": 300}", NNP_OK, HW_INFO("instr_profiling_freq"), NONE),
    /* unknown keys, including MindSpore's */
    MP("{\"op_time\": false}", NNP_OK, UNKNOWN_WARN("op_time"), NONE),
    MP("{\"bogus\": 1, \"hccl\": \"on\"}", NNP_OK, UNKNOWN_WARN("bogus"), I(hccl, true)),
    /* the seed's example */
    MP("{\"output\":\"/tmp/profiling\",\"training_trace\":\"on\",\"task_trace\":\"on\","
       "\"fp_point\":\"\",\"bp_point\":\"\",\"aic_metrics\":\"PipeUtilization\"}", NNP_OK, "",
       S(output_path, "/tmp/profiling"), I(training_trace, true),
       I(task_trace, NNP_TASK_TRACE_ON), S(fp_point, ""), S(bp_point, ""),
       S(aic_metrics, "PipeUtilization")),
    MP("[]", NNP_EINVAL, "", NONE),
    MP("{\"hccl\": \"on\",}", NNP_EINVAL, "", NONE),
    MP("{\"output\": \"/tmp/a\\nb\", \"hccl\": \"on\"}", NNP_EPATH, "", NONE),
};
/* clang-format on */

static void field_write(nnp_options_t *o, const field_expect_t *f)
{
    char *p = (char *)o + f->off;
    if (f->s) {
        snprintf(p, f->size, "%s", f->s);
        return;
    }
    if (f->size == sizeof(bool)) {
        bool b = f->v != 0;
        memcpy(p, &b, sizeof(b));
    } else if (f->size == sizeof(int32_t)) {
        int32_t x = (int32_t)f->v;
        memcpy(p, &x, sizeof(x));
    } else if (f->size == sizeof(uint64_t)) {
        uint64_t x = (uint64_t)f->v;
        memcpy(p, &x, sizeof(x));
    } else {
        fail_msg("field size %zu not handled", f->size);
    }
}

static long long field_read(const nnp_options_t *o, const field_expect_t *f)
{
    const char *p = (const char *)o + f->off;
    if (f->size == sizeof(bool)) {
        bool b;
        memcpy(&b, p, sizeof(b));
        return b;
    }
    if (f->size == sizeof(int32_t)) {
        int32_t x;
        memcpy(&x, p, sizeof(x));
        return x;
    }
    uint64_t x;
    memcpy(&x, p, sizeof(x));
    return (long long)x;
}

static void to_json_ok(const nnp_options_t *o, char *buf)
{
    int n = nnp_options_to_json(o, buf, JSON_BUF);
    assert_true(n > 0);
    assert_true(n < JSON_BUF);
}

/* Options with every field away from its default (op_time stays on: turning it off would
 * add op_time warnings to every case). Parsing from here shows that a bad value falls back
 * to the default, not merely "stays", and that untouched fields survive. */
static void alt_options(nnp_options_t *o)
{
    assert_int_equal(nnp_options_init(o), NNP_OK);
    snprintf(o->output_path, sizeof(o->output_path), "/alt/out");
    o->start_profile = false;
    o->profile_memory = true;
    o->profile_communication = true;
    o->parallel_strategy = false;
    o->data_process = false;
    o->timeline_limit_mb = 77;
    o->profile_framework = NNP_FRAMEWORK_TIME;
    o->profiler_level = NNP_LEVEL_2;
    o->aicore_metrics = 3;
    o->l2_cache = true;
    o->hbm_ddr = true;
    o->pcie = true;
    o->sync_enable = false;
    o->data_simplification = false;
    o->host_stack = false;
    o->storage_limit_mb = 300;
    o->training_trace = false;
    o->task_trace = NNP_TASK_TRACE_L0;
    o->hccl = true;
    o->aicpu = true;
    snprintf(o->fp_point, sizeof(o->fp_point), "fpA");
    snprintf(o->bp_point, sizeof(o->bp_point), "bpA");
    snprintf(o->aic_metrics, sizeof(o->aic_metrics), "Memory");
    o->msproftx = true;
    o->runtime_api = true;
    o->host_sys = NNP_HOST_SYS_CPU;
    o->host_sys_usage = NNP_HOST_SYS_MEM;
    o->host_sys_usage_freq = 7;
    o->rank_id = 3;
    o->device_id = 4;
    o->rank_size = 8;
    o->buffer_size_kb = 128;
    o->full_policy = NNP_FULL_BLOCK;
    o->writer_period_ms = 20;
    o->sample_interval_ms = 500;
    o->raw_file_bytes = 1u << 20;
    o->storage_limit_bytes = 12345;
}

static void run_case(size_t idx, const opt_case_t *c, bool from_alt)
{
    nnp_options_t o, want;
    char got_json[JSON_BUF], want_json[JSON_BUF];
    bool start = from_alt; /* START_UNTOUCHED must leave this value */
    int rc;

    if (from_alt)
        alt_options(&o);
    else
        assert_int_equal(nnp_options_init(&o), NNP_OK);
    want = o;
    nnpt_log_capture();
    if (c->parser == P_MS)
        rc = nnp_options_from_json(&o, c->json, &start);
    else
        rc = nnp_options_from_msprof_json(&o, c->json);
    if (rc != c->rc)
        fail_msg("case %zu %s (%s base): rc %d, want %d (%s)", idx, c->json,
                 from_alt ? "alt" : "default", rc, c->rc, nnp_last_error());
    if (strcmp(nnpt_log_text(), c->log) != 0)
        fail_msg("case %zu %s: log\n%s\nwant\n%s", idx, c->json, nnpt_log_text(), c->log);
    nnpt_log_release();

    for (size_t i = 0; i < MAX_SET && c->set[i].size; i++) {
        const field_expect_t *f = &c->set[i];
        field_write(&want, f);
        if (f->s && strcmp((const char *)&o + f->off, f->s) != 0)
            fail_msg("case %zu %s: field %zu is '%s', want '%s'", idx, c->json, i,
                     (const char *)&o + f->off, f->s);
        if (!f->s && field_read(&o, f) != f->v)
            fail_msg("case %zu %s: field %zu is %lld, want %lld", idx, c->json, i,
                     field_read(&o, f), f->v);
    }
    /* Every other field must be as before: compare the whole struct via its JSON form. */
    to_json_ok(&o, got_json);
    to_json_ok(&want, want_json);
    if (strcmp(got_json, want_json) != 0)
        fail_msg("case %zu %s (%s base):\n got %s\nwant %s", idx, c->json,
                 from_alt ? "alt" : "default", got_json, want_json);
    if (c->start == START_UNTOUCHED ? start != from_alt : start != (c->start == 1))
        fail_msg("case %zu %s: start is %d", idx, c->json, (int)start);
}

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        run_case(i, &cases[i], false);
        run_case(i, &cases[i], true);
    }
}

/* ---- values too long for a table ---- */

static char *json_with_string(const char *key, const char *prefix, size_t n)
{
    size_t cap = strlen(key) + strlen(prefix) + n + 16;
    char *s = malloc(cap);
    int k;
    assert_non_null(s);
    k = snprintf(s, cap, "{\"%s\": \"%s", key, prefix);
    memset(s + k, 'a', n);
    snprintf(s + k + n, cap - (size_t)k - n, "\"}");
    return s;
}

static void test_long_values(void **state)
{
    nnp_options_t o;
    char *json;
    (void)state;

    /* output_path of NNP_PATH_MAX - 1 characters fits; one more is an EPATH. */
    assert_int_equal(nnp_options_init(&o), NNP_OK);
    json = json_with_string("output_path", "/", NNP_PATH_MAX - 2);
    assert_int_equal(nnp_options_from_json(&o, json, NULL), NNP_OK);
    assert_int_equal(strlen(o.output_path), NNP_PATH_MAX - 1);
    free(json);
    json = json_with_string("output_path", "/", NNP_PATH_MAX - 1);
    assert_int_equal(nnp_options_init(&o), NNP_OK);
    assert_int_equal(nnp_options_from_json(&o, json, NULL), NNP_EPATH);
    assert_string_equal(nnp_last_error(), "output_path is longer than 4095 characters");
    assert_string_equal(o.output_path, "./data");
    free(json);

    /* fp_point: 255 characters fit, 256 are warned about and reset to "" */
    nnpt_log_capture();
    json = json_with_string("fp_point", "", NNP_NAME_MAX - 1);
    assert_int_equal(nnp_options_from_msprof_json(&o, json), NNP_OK);
    assert_int_equal(strlen(o.fp_point), NNP_NAME_MAX - 1);
    assert_int_equal(nnpt_log_count(), 0);
    free(json);
    json = json_with_string("fp_point", "", NNP_NAME_MAX);
    assert_int_equal(nnp_options_from_msprof_json(&o, json), NNP_OK);
    assert_string_equal(o.fp_point, "");
    assert_int_equal(nnpt_log_count(), 1);
    /* the value shown is cut with "..." to keep the line short */
    assert_non_null(strstr(nnpt_log_text(), "warn: For 'PROFILING_OPTIONS', the parameter "
                                            "fp_point must be a str of at most 255 characters, "
                                            "but got \"aaaa"));
    assert_non_null(strstr(nnpt_log_text(), "aaa..., it will be set to \"\" (detected "
                                            "automatically).\n"));
    free(json);
    json = json_with_string("aic_metrics", "Custom:", NNP_NAME_MAX);
    assert_int_equal(nnp_options_from_msprof_json(&o, json), NNP_OK);
    assert_string_equal(o.aic_metrics, "PipeUtilization");
    assert_int_equal(nnpt_log_count(), 2);
    free(json);
    nnpt_log_release();
}

static void test_errors(void **state)
{
    nnp_options_t o;
    bool start = false;
    (void)state;

    assert_int_equal(nnp_options_init(NULL), NNP_EINVAL);
    assert_int_equal(nnp_options_init(&o), NNP_OK);
    assert_int_equal(nnp_options_from_json(NULL, "{}", &start), NNP_EINVAL);
    assert_int_equal(nnp_options_from_json(&o, NULL, &start), NNP_EINVAL);
    assert_int_equal(nnp_options_from_msprof_json(NULL, "{}"), NNP_EINVAL);
    assert_int_equal(nnp_options_from_msprof_json(&o, NULL), NNP_EINVAL);
    assert_int_equal(nnp_options_from_env(NULL, NULL), NNP_EINVAL);
    assert_int_equal(nnp_options_validate(NULL), NNP_EINVAL);

    /* the message says where the parse broke */
    assert_int_equal(nnp_options_from_json(&o, "{\"op_time\": }", &start), NNP_EINVAL);
    assert_string_equal(nnp_last_error(), "options: invalid JSON at offset 12 near '}'");
    assert_int_equal(nnp_options_from_json(&o, "[true]", &start), NNP_EINVAL);
    assert_string_equal(nnp_last_error(), "options: a JSON object is required, got list");
    assert_int_equal(nnp_options_from_msprof_json(&o, "{\"a\": 1} 2"), NNP_EINVAL);
    assert_string_equal(nnp_last_error(), "PROFILING_OPTIONS: invalid JSON at offset 9 near '2'");
    assert_int_equal(nnp_options_from_json(&o, "{\"output_path\": \"/tmp/a\\nb\"}", &start),
                     NNP_EPATH);
    assert_string_equal(nnp_last_error(), "output_path '/tmp/a\\nb' contains a forbidden character "
                                          "(one of \\n \\f \\r \\b \\t \\v \\x7f)");
    assert_int_equal(nnp_options_from_msprof_json(&o, "{\"output\": \"x\\u007f\"}"), NNP_EPATH);
    assert_string_equal(nnp_last_error(), "output 'x\\x7f' contains a forbidden character "
                                          "(one of \\n \\f \\r \\b \\t \\v \\x7f)");
    assert_int_equal(nnp_options_from_json(&o, "{\"output_path\": \"\"}", NULL), NNP_EPATH);
    assert_string_equal(nnp_last_error(), "output_path is empty");
    /* a failed document leaves *start alone too */
    start = false;
    assert_int_equal(
        nnp_options_from_json(&o, "{\"start\": true, \"output_path\": \"\\n\"}", &start),
        NNP_EPATH);
    assert_false(start);
}

/* ---- environment ---- */

static const char *const env_vars[] = {
    "MS_PROFILER_OPTIONS",
    "PROFILING_MODE",
    "PROFILING_OPTIONS",
    "MS_DIAGNOSTIC_DATA_PATH",
    "PROFILING_FP_START",
    "PROFILING_BP_END",
    "RANK_ID",
    "DEVICE_ID",
    "RANK_SIZE",
    "NNPROF_FOLLOW_FORK",
    "NNPROF_FOLLOW_CHILDREN",
};

static int env_setup(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(env_vars) / sizeof(env_vars[0]); i++)
        unsetenv(env_vars[i]);
    nnpt_log_capture();
    return 0;
}

static int env_teardown(void **state)
{
    (void)state;
    nnpt_log_release();
    for (size_t i = 0; i < sizeof(env_vars) / sizeof(env_vars[0]); i++)
        unsetenv(env_vars[i]);
    return 0;
}

/* from_env on fresh defaults; returns its rc and fills *o and *enabled. */
static int from_env(nnp_options_t *o, bool *enabled)
{
    assert_int_equal(nnp_options_init(o), NNP_OK);
    *enabled = true; /* must be overwritten */
    return nnp_options_from_env(o, enabled);
}

static void assert_defaults(const nnp_options_t *o)
{
    nnp_options_t d;
    char a[JSON_BUF], b[JSON_BUF];
    assert_int_equal(nnp_options_init(&d), NNP_OK);
    to_json_ok(o, a);
    to_json_ok(&d, b);
    assert_string_equal(a, b);
}

static void test_env_none(void **state)
{
    nnp_options_t o;
    bool enabled;
    (void)state;
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_false(enabled);
    assert_defaults(&o);
    assert_string_equal(nnpt_log_text(), "");
    /* enabled may be NULL */
    assert_int_equal(nnp_options_from_env(&o, NULL), NNP_OK);
}

static void test_env_ms_profiler_options(void **state)
{
    nnp_options_t o;
    bool enabled;
    (void)state;
    setenv("MS_PROFILER_OPTIONS",
           "{\"start\": true, \"output_path\": \"/tmp/e\", \"profile_memory\": true, "
           "\"aicore_metrics\": 2}",
           1);
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_true(enabled);
    assert_string_equal(o.output_path, "/tmp/e");
    assert_true(o.profile_memory);
    assert_int_equal(o.aicore_metrics, 2);
    assert_string_equal(nnpt_log_text(), "");

    /* start false: options merge, profiling is not enabled */
    setenv("MS_PROFILER_OPTIONS", "{\"start\": false, \"op_time\": false}", 1);
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_false(enabled);
    assert_false(o.op_time);

    /* no "start" at all: not enabled (seed 001: start defaults to false) */
    setenv("MS_PROFILER_OPTIONS", "{\"timeline_limit\": 9}", 1);
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_false(enabled);
    assert_int_equal(o.timeline_limit_mb, 9);

    /* the warnings of from_json come through */
    setenv("MS_PROFILER_OPTIONS", "{\"start\": true, \"op_time\": 3}", 1);
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_true(enabled);
    assert_true(o.op_time);
    assert_string_equal(nnpt_log_text(), BOOL_WARN("op_time", "int (3)", "True"));

    /* an empty variable is as good as unset */
    nnpt_log_capture();
    setenv("MS_PROFILER_OPTIONS", "", 1);
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_false(enabled);
    assert_defaults(&o);
    assert_int_equal(nnpt_log_count(), 0);
}

static void test_env_invalid_json(void **state)
{
    nnp_options_t o;
    bool enabled;
    (void)state;
    setenv("MS_PROFILER_OPTIONS", "{bad", 1);
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_false(enabled);
    assert_defaults(&o);
    assert_string_equal(nnpt_log_text(),
                        W("MS_PROFILER_OPTIONS is not a valid JSON object (options: invalid JSON "
                          "at offset 2 near 'ad'), it is ignored."));
    /* the detail was consumed: no stale last error */
    assert_string_equal(nnp_last_error(), "");

    nnpt_log_capture();
    setenv("MS_PROFILER_OPTIONS", "[1]", 1);
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_string_equal(nnpt_log_text(),
                        W("MS_PROFILER_OPTIONS is not a valid JSON object (options: a JSON object "
                          "is required, got list), it is ignored."));

    /* a forbidden output path is an error, and nothing of the environment applies */
    unsetenv("MS_PROFILER_OPTIONS");
    setenv("RANK_ID", "4", 1);
    setenv("MS_PROFILER_OPTIONS", "{\"start\": true, \"output_path\": \"a\\tb\"}", 1);
    assert_int_equal(nnp_options_init(&o), NNP_OK);
    enabled = true;
    assert_int_equal(nnp_options_from_env(&o, &enabled), NNP_EPATH);
    assert_defaults(&o);
}

static void test_env_profiling_mode(void **state)
{
    nnp_options_t o;
    bool enabled;
    (void)state;
    setenv("PROFILING_MODE", "true", 1);
    setenv("PROFILING_OPTIONS",
           "{\"output\": \"/tmp/p\", \"task_trace\": \"l0\", \"fp_point\": \"fpx\", "
           "\"host_sys\": \"cpu,mem\"}",
           1);
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_true(enabled);
    assert_string_equal(o.output_path, "/tmp/p");
    assert_int_equal(o.task_trace, NNP_TASK_TRACE_L0);
    assert_string_equal(o.fp_point, "fpx");
    assert_int_equal(o.host_sys, NNP_HOST_SYS_CPU | NNP_HOST_SYS_MEM);
    assert_string_equal(nnpt_log_text(), "");

    /* PROFILING_MODE alone enables with defaults */
    unsetenv("PROFILING_OPTIONS");
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_true(enabled);
    assert_defaults(&o);

    /* invalid PROFILING_OPTIONS: warned, ignored, still enabled */
    setenv("PROFILING_OPTIONS", "{\"hccl\": on}", 1);
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_true(enabled);
    assert_defaults(&o);
    assert_string_equal(
        nnpt_log_text(),
        W("PROFILING_OPTIONS is not a valid JSON object (PROFILING_OPTIONS: invalid "
          "JSON at offset 9 near 'on}'), it is ignored."));

    /* PROFILING_MODE other than "true": PROFILING_OPTIONS is not read */
    nnpt_log_capture();
    setenv("PROFILING_MODE", "false", 1);
    setenv("PROFILING_OPTIONS", "{\"hccl\": \"on\"}", 1);
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_false(enabled);
    assert_false(o.hccl);
    assert_string_equal(
        nnpt_log_text(),
        INFO("PROFILING_OPTIONS is ignored because PROFILING_MODE is not \"true\"."));

    /* both dialects at once: msprof applies after MindSpore */
    nnpt_log_capture();
    setenv("PROFILING_MODE", "true", 1);
    setenv("MS_PROFILER_OPTIONS", "{\"l2_cache\": true, \"output_path\": \"/ms\"}", 1);
    setenv("PROFILING_OPTIONS", "{\"l2\": \"off\", \"output\": \"/msprof\"}", 1);
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_true(enabled);
    assert_false(o.l2_cache);
    assert_string_equal(o.output_path, "/msprof");
    /* ... and says so (issue 10: which one wins was not said). */
    assert_string_equal(nnpt_log_text(),
                        W("Both MS_PROFILER_OPTIONS and PROFILING_MODE=true are set: one session "
                          "profiles with both, and PROFILING_OPTIONS wins where both set the "
                          "same thing (output over output_path, l2 over l2_cache), since it is "
                          "read second."));

    /* a forbidden "output" is an error */
    setenv("PROFILING_OPTIONS", "{\"output\": \"/a\\rb\"}", 1);
    assert_int_equal(from_env(&o, &enabled), NNP_EPATH);
}

#define BOTH_PATHS_WARN                                                                            \
    W("Both parameter output_path and environment variable MS_DIAGNOSTIC_DATA_PATH have values "   \
      "set, and the profiling data saving path is the value set in parameter output_path")

static void test_env_diagnostic_path(void **state)
{
    nnp_options_t o;
    bool enabled;
    (void)state;
    setenv("MS_DIAGNOSTIC_DATA_PATH", "/diag", 1);

    /* not env-enabled: ignored */
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_false(enabled);
    assert_string_equal(o.output_path, "./data");

    /* enabled, no path given: the variable is the output path */
    setenv("MS_PROFILER_OPTIONS", "{\"start\": true}", 1);
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_true(enabled);
    assert_string_equal(o.output_path, "/diag");
    assert_string_equal(nnpt_log_text(), "");

    /* output_path null counts as not given (seed 000 _get_output_path) */
    setenv("MS_PROFILER_OPTIONS", "{\"start\": true, \"output_path\": null}", 1);
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_string_equal(o.output_path, "/diag");

    /* both: the explicit path wins, with the seed's warning */
    setenv("MS_PROFILER_OPTIONS", "{\"start\": true, \"output_path\": \"/mine\"}", 1);
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_string_equal(o.output_path, "/mine");
    assert_string_equal(nnpt_log_text(), BOTH_PATHS_WARN);

    /* enabled through PROFILING_MODE: used as well; "output" counts as a given path */
    nnpt_log_capture();
    unsetenv("MS_PROFILER_OPTIONS");
    setenv("PROFILING_MODE", "true", 1);
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_string_equal(o.output_path, "/diag");
    setenv("PROFILING_OPTIONS", "{\"output\": \"/out\"}", 1);
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_string_equal(o.output_path, "/out");
    assert_string_equal(nnpt_log_text(), BOTH_PATHS_WARN);
    unsetenv("PROFILING_OPTIONS");

    /* forbidden characters in the variable */
    setenv("MS_DIAGNOSTIC_DATA_PATH", "/di\nag", 1);
    assert_int_equal(from_env(&o, &enabled), NNP_EPATH);
    assert_string_equal(nnp_last_error(), "MS_DIAGNOSTIC_DATA_PATH '/di\\nag' contains a forbidden "
                                          "character (one of \\n \\f \\r \\b \\t \\v \\x7f)");
    assert_string_equal(o.output_path, "./data");
}

static void test_env_points(void **state)
{
    nnp_options_t o;
    bool enabled;
    char long_name[NNP_NAME_MAX + 1];
    (void)state;
    setenv("PROFILING_FP_START", "fp32_vars/conv2d/BatchNorm", 1);
    setenv("PROFILING_BP_END", "loss_scale/gradients/AddN_70", 1);
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_false(enabled);
    assert_string_equal(o.fp_point, "fp32_vars/conv2d/BatchNorm");
    assert_string_equal(o.bp_point, "loss_scale/gradients/AddN_70");

    /* they override PROFILING_OPTIONS' fp_point / bp_point */
    setenv("PROFILING_MODE", "true", 1);
    setenv("PROFILING_OPTIONS", "{\"fp_point\": \"a\", \"bp_point\": \"b\"}", 1);
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_string_equal(o.fp_point, "fp32_vars/conv2d/BatchNorm");
    assert_string_equal(o.bp_point, "loss_scale/gradients/AddN_70");
    assert_string_equal(nnpt_log_text(), "");

    /* too long: warned, the previous value stays */
    memset(long_name, 'x', NNP_NAME_MAX);
    long_name[NNP_NAME_MAX] = '\0';
    setenv("PROFILING_FP_START", long_name, 1);
    unsetenv("PROFILING_BP_END");
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_string_equal(o.fp_point, "a");
    assert_string_equal(o.bp_point, "b");
    assert_int_equal(nnpt_log_count(), 1);
    assert_non_null(strstr(nnpt_log_text(), "warn: PROFILING_FP_START (\"xxxx"));
    assert_non_null(
        strstr(nnpt_log_text(), "...\") is longer than 255 characters, it is ignored."));
}

/* Values the environment does not accept are named, with the accepted ones (issue 10: they
 * were ignored without a word). */
static void test_env_bad_values_are_named(void **state)
{
    nnp_options_t o;
    bool enabled;
    (void)state;
    setenv("PROFILING_MODE", "maybe", 1);
    setenv("PROFILING_OPTIONS", "{\"hccl\": \"on\"}", 1);
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_false(enabled);
    assert_false(o.hccl);
    assert_string_equal(nnpt_log_text(),
                        W("PROFILING_MODE is \"maybe\": the accepted values are \"true\" "
                          "(profile with PROFILING_OPTIONS) and \"false\"; profiling is not "
                          "enabled by it.") INFO("PROFILING_OPTIONS is ignored because "
                                                 "PROFILING_MODE is not \"true\"."));
    nnpt_log_capture();
    setenv("PROFILING_MODE", "false", 1);
    unsetenv("PROFILING_OPTIONS");
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_false(enabled);
    assert_string_equal(nnpt_log_text(), "");
    unsetenv("PROFILING_MODE");

    /* The child-process switches: 0 or 1, over the JSON keys. */
    setenv("MS_PROFILER_OPTIONS", "{\"follow_fork\": true, \"follow_children\": true}", 1);
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_true(o.follow_fork && o.follow_children);
    setenv("NNPROF_FOLLOW_FORK", "0", 1);
    setenv("NNPROF_FOLLOW_CHILDREN", "yes", 1);
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_false(o.follow_fork);
    assert_true(o.follow_children);
    assert_string_equal(nnpt_log_text(), W("NNPROF_FOLLOW_CHILDREN is \"yes\": the accepted "
                                           "values are 0 and 1; it is ignored."));
    unsetenv("MS_PROFILER_OPTIONS");
    setenv("NNPROF_FOLLOW_FORK", "1", 1);
    setenv("NNPROF_FOLLOW_CHILDREN", "1", 1);
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_true(o.follow_fork && o.follow_children);
    assert_false(enabled); /* they say what to follow, not to profile */
}

static void test_env_ids(void **state)
{
    nnp_options_t o;
    bool enabled;
    (void)state;
    setenv("RANK_ID", "3", 1);
    setenv("DEVICE_ID", "5", 1);
    setenv("RANK_SIZE", "8", 1);
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_false(enabled);
    assert_int_equal(o.rank_id, 3);
    assert_int_equal(o.device_id, 5);
    assert_int_equal(o.rank_size, 8);
    assert_string_equal(nnpt_log_text(), "");

    setenv("RANK_ID", "abc", 1);
    setenv("DEVICE_ID", "-1", 1);
    setenv("RANK_SIZE", "0", 1);
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_int_equal(o.rank_id, 0);
    assert_int_equal(o.device_id, 0);
    assert_int_equal(o.rank_size, 1);
    assert_string_equal(
        nnpt_log_text(),
        W("For 'Profiler', fail to get RANK_ID from environment (\"abc\"), use 0 instead.")
            W("For 'Profiler', fail to get DEVICE_ID from environment (\"-1\"), use 0 instead.") W(
                "For 'Profiler', fail to get RANK_SIZE from environment (\"0\"), use 1 instead."));

    /* a bad value keeps the value already there (here set by MS_PROFILER_OPTIONS) */
    nnpt_log_capture();
    setenv("MS_PROFILER_OPTIONS", "{\"rank_id\": 6, \"device_id\": 7, \"rank_size\": 9}", 1);
    setenv("RANK_ID", "", 1);
    setenv("DEVICE_ID", "2147483648", 1);
    setenv("RANK_SIZE", " 4", 1);
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_int_equal(o.rank_id, 6);
    assert_int_equal(o.device_id, 7);
    assert_int_equal(o.rank_size, 9);
    assert_string_equal(
        nnpt_log_text(),
        W("For 'Profiler', fail to get RANK_ID from environment (\"\"), use 6 instead.") W(
            "For 'Profiler', fail to get DEVICE_ID from environment (\"2147483648\"), use 7 "
            "instead.")
            W("For 'Profiler', fail to get RANK_SIZE from environment (\" 4\"), use 9 instead."));

    /* the variables win over MS_PROFILER_OPTIONS */
    setenv("RANK_ID", "1", 1);
    setenv("DEVICE_ID", "1", 1);
    setenv("RANK_SIZE", "2", 1);
    assert_int_equal(from_env(&o, &enabled), NNP_OK);
    assert_int_equal(o.rank_id, 1);
    assert_int_equal(o.device_id, 1);
    assert_int_equal(o.rank_size, 2);
}

/* ---- validation ---- */

static int log_setup(void **state)
{
    (void)state;
    nnpt_log_capture();
    return 0;
}

static int log_teardown(void **state)
{
    (void)state;
    nnpt_log_release();
    return 0;
}

static void test_validate_defaults(void **state)
{
    nnp_options_t o;
    (void)state;
    assert_int_equal(nnp_options_init(&o), NNP_OK);
    assert_int_equal(nnp_options_validate(&o), NNP_OK);
    assert_defaults(&o);
    assert_int_equal(nnpt_log_count(), 0);
}

static void test_validate_path(void **state)
{
    nnp_options_t o;
    (void)state;
    assert_int_equal(nnp_options_init(&o), NNP_OK);
    snprintf(o.output_path, sizeof(o.output_path), "/tmp/a\vb");
    assert_int_equal(nnp_options_validate(&o), NNP_EPATH);
    assert_string_equal(nnp_last_error(), "output_path '/tmp/a\\vb' contains a forbidden character "
                                          "(one of \\n \\f \\r \\b \\t \\v \\x7f)");
    o.output_path[0] = '\0';
    assert_int_equal(nnp_options_validate(&o), NNP_EPATH);
    assert_string_equal(nnp_last_error(), "output_path is empty");
    memset(o.output_path, 'a', sizeof(o.output_path)); /* no terminator */
    assert_int_equal(nnp_options_validate(&o), NNP_EPATH);
    assert_int_equal(nnp_options_init(&o), NNP_OK);
    memset(o.bp_point, 'b', sizeof(o.bp_point));
    assert_int_equal(nnp_options_validate(&o), NNP_ETOOLONG);
}

/* to_json of defaults with output_path of path_len characters. */
static int json_len_with_path(size_t path_len)
{
    nnp_options_t o;
    assert_int_equal(nnp_options_init(&o), NNP_OK);
    memset(o.output_path, 'p', path_len);
    o.output_path[0] = '/';
    o.output_path[path_len] = '\0';
    return nnp_options_to_json(&o, NULL, 0);
}

static void test_validate_2048(void **state)
{
    nnp_options_t o;
    int base = json_len_with_path(1);
    size_t fit = (size_t)(2048 - base + 1); /* path length giving exactly 2048 characters */
    (void)state;

    assert_int_equal(json_len_with_path(fit), 2048);
    assert_int_equal(nnp_options_init(&o), NNP_OK);
    memset(o.output_path, 'p', fit);
    o.output_path[0] = '/';
    o.output_path[fit] = '\0';
    assert_int_equal(nnp_options_validate(&o), NNP_OK);

    o.output_path[fit] = 'p';
    o.output_path[fit + 1] = '\0';
    assert_int_equal(nnp_options_validate(&o), NNP_ETOOLONG);
    assert_string_equal(nnp_last_error(), "For 'Profiler', the environment parameter length "
                                          "exceeds the limit (2048), please input valid "
                                          "parameters.");
    assert_int_equal(nnpt_log_count(), 0);
}

static void test_validate_clamps(void **state)
{
    nnp_options_t o;
    (void)state;
    assert_int_equal(nnp_options_init(&o), NNP_OK);
    o.buffer_size_kb = 1;
    o.writer_period_ms = 0;
    o.sample_interval_ms = -5;
    o.raw_file_bytes = 100;
    assert_int_equal(nnp_options_validate(&o), NNP_OK);
    assert_int_equal(o.buffer_size_kb, 64);
    assert_int_equal(o.writer_period_ms, 1);
    assert_int_equal(o.sample_interval_ms, 0);
    assert_int_equal(o.raw_file_bytes, 65536);
    assert_string_equal(
        nnpt_log_text(),
        RANGE_WARN("Profiler", "buffer_size_kb", "[64, 1048576]", "1", "64")
            RANGE_WARN("Profiler", "writer_period_ms", "[1, 1000]", "0", "1")
                RANGE_WARN("Profiler", "sample_interval_ms", "[0, 3600000]", "-5", "0") RANGE_WARN(
                    "Profiler", "raw_file_bytes", "[65536, 9007199254740992]", "100", "65536"));

    nnpt_log_capture();
    o.buffer_size_kb = (size_t)-1;
    o.writer_period_ms = 5000;
    o.sample_interval_ms = 4000000;
    o.raw_file_bytes = UINT64_MAX;
    assert_int_equal(nnp_options_validate(&o), NNP_OK);
    assert_int_equal(o.buffer_size_kb, 1048576);
    assert_int_equal(o.writer_period_ms, 1000);
    assert_int_equal(o.sample_interval_ms, 3600000);
    assert_true(o.raw_file_bytes == 9007199254740992ull);
    assert_string_equal(
        nnpt_log_text(),
        RANGE_WARN("Profiler", "buffer_size_kb", "[64, 1048576]", "18446744073709551615", "1048576")
            RANGE_WARN("Profiler", "writer_period_ms", "[1, 1000]", "5000", "1000")
                RANGE_WARN("Profiler", "sample_interval_ms", "[0, 3600000]", "4000000", "3600000")
                    RANGE_WARN("Profiler", "raw_file_bytes", "[65536, 9007199254740992]",
                               "18446744073709551615", "9007199254740992"));
}

static void test_validate_fields_set_in_code(void **state)
{
    nnp_options_t o;
    (void)state;
    assert_int_equal(nnp_options_init(&o), NNP_OK);
    o.timeline_limit_mb = 0;
    o.aicore_metrics = 9;
    o.rank_size = 0;
    o.profile_framework = (nnp_framework_mode_t)7;
    o.profiler_level = (nnp_profiler_level_t)9;
    o.task_trace = (nnp_task_trace_t)5;
    o.full_policy = (nnp_full_policy_t)(NNP_FULL_WAIT + 1);
    o.host_sys = 0x5;
    o.storage_limit_mb = 100;
    o.host_sys_usage_freq = 0;
    snprintf(o.aic_metrics, sizeof(o.aic_metrics), "bogus");
    assert_int_equal(nnp_options_validate(&o), NNP_OK);
    assert_int_equal(o.timeline_limit_mb, 500);
    assert_int_equal(o.aicore_metrics, 0);
    assert_int_equal(o.rank_size, 1);
    assert_int_equal(o.profile_framework, NNP_FRAMEWORK_ALL);
    assert_int_equal(o.profiler_level, NNP_LEVEL_0);
    assert_int_equal(o.task_trace, NNP_TASK_TRACE_ON);
    assert_int_equal(o.full_policy, NNP_FULL_WAIT);
    assert_int_equal(o.host_sys, NNP_HOST_SYS_CPU);
    assert_int_equal(o.storage_limit_mb, 0);
    assert_int_equal(o.host_sys_usage_freq, 50);
    assert_string_equal(o.aic_metrics, "PipeUtilization");
    assert_string_equal(
        nnpt_log_text(),
        TIMELINE_WARN AICORE_WARN("9") RANGE_WARN("Profiler", "rank_size", "[1, 2147483647]", "0",
                                                  "1")
            W("For 'Profiler', the parameter profile_framework has the invalid value 7, it will be "
              "set to 'all'.") W("For 'Profiler', the parameter profiler_level has the invalid "
                                 "value 9, it will be set "
                                 "to ProfilerLevel.Level0.")
                W("For 'PROFILING_OPTIONS', the parameter task_trace has the invalid value 5, it "
                  "will be "
                  "set to \"on\".") W("For 'Profiler', the parameter full_policy has the invalid "
                                      "value 3, it will be set to "
                                      "'wait'.")
                    W("For 'PROFILING_OPTIONS', host_sys/host_sys_usage have unknown bits "
                      "(0x5/0x0), they are "
                      "ignored.")
                        W("For 'PROFILING_OPTIONS', the parameter storage_limit must be in [200MB, "
                          "4294967295MB], but got 100MB, it will be set to \"\" (90% of the free "
                          "disk space).") FREQ_WARN("0") AIC_WARN("\"bogus\""));

    /* storage_limit_mb within range is kept */
    nnpt_log_capture();
    o.storage_limit_mb = 200;
    assert_int_equal(nnp_options_validate(&o), NNP_OK);
    assert_int_equal(o.storage_limit_mb, 200);
    assert_int_equal(nnpt_log_count(), 0);
}

static void test_validate_op_time(void **state)
{
    nnp_options_t o;
    (void)state;
    assert_int_equal(nnp_options_init(&o), NNP_OK);
    o.op_time = false;
    o.profile_memory = true;
    o.profile_communication = true;
    assert_int_equal(nnp_options_validate(&o), NNP_OK);
    assert_string_equal(nnpt_log_text(),
                        OPTIME_WARN("profile_memory") OPTIME_WARN("profile_communication"));
    nnpt_log_capture();
    o.op_time = true;
    assert_int_equal(nnp_options_validate(&o), NNP_OK);
    assert_int_equal(nnpt_log_count(), 0);
}

static void test_validate_host_sys_usage(void **state)
{
    nnp_options_t o;
    (void)state;
    /* host_sys_usage with the default interval: 1000 / 50 Hz = 20 ms */
    assert_int_equal(nnp_options_init(&o), NNP_OK);
    o.host_sys_usage = NNP_HOST_SYS_CPU;
    assert_int_equal(nnp_options_validate(&o), NNP_OK);
    assert_int_equal(o.sample_interval_ms, 20);
    /* 3 Hz: 333 ms */
    assert_int_equal(nnp_options_init(&o), NNP_OK);
    o.host_sys_usage = NNP_HOST_SYS_MEM;
    o.host_sys_usage_freq = 3;
    assert_int_equal(nnp_options_validate(&o), NNP_OK);
    assert_int_equal(o.sample_interval_ms, 333);
    /* an explicit interval wins */
    assert_int_equal(nnp_options_init(&o), NNP_OK);
    o.host_sys_usage = NNP_HOST_SYS_MEM;
    o.sample_interval_ms = 250;
    assert_int_equal(nnp_options_validate(&o), NNP_OK);
    assert_int_equal(o.sample_interval_ms, 250);
    /* without host_sys_usage the frequency does not matter */
    assert_int_equal(nnp_options_init(&o), NNP_OK);
    o.host_sys_usage_freq = 10;
    assert_int_equal(nnp_options_validate(&o), NNP_OK);
    assert_int_equal(o.sample_interval_ms, 1000);
    assert_int_equal(nnpt_log_count(), 0);
}

/* ---- JSON form ---- */

static const char default_json[] =
    "{\"output_path\":\"./data\",\"start_profile\":true,\"op_time\":true,"
    "\"profile_memory\":false,\"profile_communication\":false,\"parallel_strategy\":true,"
    "\"data_process\":true,\"timeline_limit\":500,\"profile_framework\":\"all\","
    "\"profiler_level\":null,\"aicore_metrics\":0,\"l2_cache\":false,\"hbm_ddr\":false,"
    "\"pcie\":false,\"sync_enable\":true,\"data_simplification\":true,\"host_stack\":true,"
    "\"rank_id\":0,\"device_id\":0,\"rank_size\":1,\"buffer_size_kb\":4096,"
    "\"full_policy\":\"wait\",\"writer_period_ms\":10,\"sample_interval_ms\":1000,"
    "\"raw_file_bytes\":67108864,\"storage_limit_bytes\":0,\"follow_fork\":false,"
    "\"follow_children\":false,\"storage_limit\":\"\","
    "\"training_trace\":\"on\",\"task_trace\":\"on\",\"hccl\":\"off\",\"aicpu\":\"off\","
    "\"fp_point\":\"\",\"bp_point\":\"\",\"aic_metrics\":\"PipeUtilization\","
    "\"msproftx\":\"off\",\"runtime_api\":\"off\",\"host_sys\":\"\",\"host_sys_usage\":\"\","
    "\"host_sys_usage_freq\":50}";

static void test_to_json_defaults(void **state)
{
    nnp_options_t o;
    char buf[JSON_BUF];
    (void)state;
    assert_int_equal(nnp_options_init(&o), NNP_OK);
    assert_int_equal(nnp_options_to_json(&o, buf, sizeof(buf)), (int)strlen(default_json));
    assert_string_equal(buf, default_json);
}

static void test_to_json_alt(void **state)
{
    nnp_options_t o;
    char buf[JSON_BUF];
    (void)state;
    alt_options(&o);
    o.profile_framework = NNP_FRAMEWORK_NONE;
    o.profiler_level = NNP_LEVEL_1;
    to_json_ok(&o, buf);
    assert_non_null(strstr(buf, "\"output_path\":\"/alt/out\""));
    assert_non_null(strstr(buf, "\"profile_framework\":null"));
    assert_non_null(strstr(buf, "\"profiler_level\":\"Level1\""));
    assert_non_null(strstr(buf, "\"storage_limit\":\"300MB\""));
    assert_non_null(strstr(buf, "\"task_trace\":\"l0\""));
    assert_non_null(strstr(buf, "\"host_sys\":\"cpu\""));
    assert_non_null(strstr(buf, "\"host_sys_usage\":\"mem\""));
    assert_non_null(strstr(buf, "\"full_policy\":\"block\""));
    o.host_sys = NNP_HOST_SYS_CPU | NNP_HOST_SYS_MEM;
    o.profile_framework = NNP_FRAMEWORK_MEMORY;
    o.profiler_level = (nnp_profiler_level_t)42; /* out of range: null */
    to_json_ok(&o, buf);
    assert_non_null(strstr(buf, "\"host_sys\":\"cpu,mem\""));
    assert_non_null(strstr(buf, "\"profile_framework\":\"memory\""));
    assert_non_null(strstr(buf, "\"profiler_level\":null"));
}

static void test_to_json_snprintf(void **state)
{
    nnp_options_t o;
    char buf[JSON_BUF];
    int n = (int)strlen(default_json);
    (void)state;
    assert_int_equal(nnp_options_init(&o), NNP_OK);
    assert_int_equal(nnp_options_to_json(&o, NULL, 0), n);
    memset(buf, 'X', sizeof(buf));
    assert_int_equal(nnp_options_to_json(&o, buf, 0), n);
    assert_int_equal(buf[0], 'X'); /* cap 0 writes nothing */
    assert_int_equal(nnp_options_to_json(&o, buf, 1), n);
    assert_int_equal(buf[0], '\0');
    assert_int_equal(buf[1], 'X');
    memset(buf, 'X', sizeof(buf));
    assert_int_equal(nnp_options_to_json(&o, buf, 10), n);
    assert_string_equal(buf, "{\"output_");
    assert_int_equal(buf[10], 'X');
    memset(buf, 'X', sizeof(buf));
    assert_int_equal(nnp_options_to_json(&o, buf, (size_t)n), n);
    assert_int_equal(strlen(buf), (size_t)n - 1);
    assert_memory_equal(buf, default_json, (size_t)n - 1);
    assert_int_equal(nnp_options_to_json(&o, buf, (size_t)n + 1), n);
    assert_string_equal(buf, default_json);
    assert_int_equal(buf[n + 1], 'X');
    assert_int_equal(nnp_options_to_json(NULL, buf, sizeof(buf)), NNP_EINVAL);
    assert_int_equal(nnp_options_to_json(&o, NULL, 5), NNP_EINVAL);
}

/* to_json -> from_json gives back every MindSpore (and recorder, identity) field;
 * to_json -> from_msprof_json every msprof field; both together the whole struct. */
static void round_trip(const nnp_options_t *src)
{
    nnp_options_t ms, both;
    char text[JSON_BUF], back[JSON_BUF];
    bool start = false;
    to_json_ok(src, text);

    assert_int_equal(nnp_options_init(&ms), NNP_OK);
    nnpt_log_capture();
    assert_int_equal(nnp_options_from_json(&ms, text, &start), NNP_OK);
    assert_string_equal(ms.output_path, src->output_path);
    assert_int_equal(ms.start_profile, src->start_profile);
    assert_int_equal(ms.op_time, src->op_time);
    assert_int_equal(ms.profile_memory, src->profile_memory);
    assert_int_equal(ms.profile_communication, src->profile_communication);
    assert_int_equal(ms.parallel_strategy, src->parallel_strategy);
    assert_int_equal(ms.data_process, src->data_process);
    assert_int_equal(ms.timeline_limit_mb, src->timeline_limit_mb);
    assert_int_equal(ms.profile_framework, src->profile_framework);
    assert_int_equal(ms.profiler_level, src->profiler_level);
    assert_int_equal(ms.aicore_metrics, src->aicore_metrics);
    assert_int_equal(ms.l2_cache, src->l2_cache);
    assert_int_equal(ms.hbm_ddr, src->hbm_ddr);
    assert_int_equal(ms.pcie, src->pcie);
    assert_int_equal(ms.sync_enable, src->sync_enable);
    assert_int_equal(ms.data_simplification, src->data_simplification);
    assert_int_equal(ms.host_stack, src->host_stack);
    assert_int_equal(ms.rank_id, src->rank_id);
    assert_int_equal(ms.device_id, src->device_id);
    assert_int_equal(ms.rank_size, src->rank_size);
    assert_int_equal(ms.buffer_size_kb, src->buffer_size_kb);
    assert_int_equal(ms.full_policy, src->full_policy);
    assert_int_equal(ms.writer_period_ms, src->writer_period_ms);
    assert_int_equal(ms.sample_interval_ms, src->sample_interval_ms);
    assert_true(ms.raw_file_bytes == src->raw_file_bytes);
    assert_true(ms.storage_limit_bytes == src->storage_limit_bytes);
    /* the 13 msprof keys are not MindSpore's: one warning each (plus Level0/Level1's) */
    assert_int_equal(nnpt_log_count(), 13 + (src->profiler_level == NNP_LEVEL_0 ||
                                             src->profiler_level == NNP_LEVEL_1));
    assert_non_null(strstr(nnpt_log_text(), UNKNOWN_WARN("storage_limit")));

    both = ms;
    assert_int_equal(nnp_options_from_msprof_json(&both, text), NNP_OK);
    to_json_ok(&both, back);
    assert_string_equal(back, text);
    nnpt_log_release();
}

static void test_round_trip(void **state)
{
    nnp_options_t o;
    (void)state;
    assert_int_equal(nnp_options_init(&o), NNP_OK);
    round_trip(&o);
    alt_options(&o);
    round_trip(&o);
    o.profile_framework = NNP_FRAMEWORK_NONE;
    o.profiler_level = NNP_LEVEL_UNSET;
    o.host_sys = NNP_HOST_SYS_CPU | NNP_HOST_SYS_MEM;
    o.storage_limit_mb = 4294967295ull;
    snprintf(o.output_path, sizeof(o.output_path), "/tmp/q\"uote\\back/\x01/\xc3\xa9/");
    snprintf(o.aic_metrics, sizeof(o.aic_metrics), "Custom:0x49,0x8");
    snprintf(o.fp_point, sizeof(o.fp_point), "a \"b\"");
    round_trip(&o);
    /* Level0 as produced by from_json (its side effects applied) round-trips as well */
    assert_int_equal(nnp_options_init(&o), NNP_OK);
    nnpt_log_capture();
    assert_int_equal(nnp_options_from_json(&o, "{\"profiler_level\": \"Level0\"}", NULL), NNP_OK);
    nnpt_log_release();
    round_trip(&o);
}

/* ---- options this platform cannot collect ---- */

static void test_unsupported(void **state)
{
    nnp_options_t o;
    const char *names[NNP_OPTIONS_UNSUPPORTED_MAX];
    (void)state;
    assert_int_equal(nnp_options_init(&o), NNP_OK);
    assert_int_equal(nnp__options_unsupported(&o, names, NNP_OPTIONS_UNSUPPORTED_MAX), 0);
    o.aicore_metrics = -1; /* "collect nothing" loses nothing */
    assert_int_equal(nnp__options_unsupported(&o, NULL, 0), 0);

    alt_options(&o);
    assert_int_equal(nnp__options_unsupported(&o, names, NNP_OPTIONS_UNSUPPORTED_MAX), 7);
    assert_string_equal(names[0], "aicore_metrics");
    assert_string_equal(names[1], "l2_cache");
    assert_string_equal(names[2], "hbm_ddr");
    assert_string_equal(names[3], "pcie");
    assert_string_equal(names[4], "aicpu");
    assert_string_equal(names[5], "runtime_api");
    assert_string_equal(names[6], "aic_metrics");

    /* fewer slots than names: the count is still the total */
    names[2] = "untouched";
    assert_int_equal(nnp__options_unsupported(&o, names, 2), 7);
    assert_string_equal(names[2], "untouched");
    assert_int_equal(nnp__options_unsupported(&o, NULL, 0), 7);

    assert_int_equal(nnp_options_init(&o), NNP_OK);
    o.runtime_api = true;
    assert_int_equal(nnp__options_unsupported(&o, names, NNP_OPTIONS_UNSUPPORTED_MAX), 1);
    assert_string_equal(names[0], "runtime_api");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_long_values),
        cmocka_unit_test(test_errors),
        cmocka_unit_test_setup_teardown(test_env_none, env_setup, env_teardown),
        cmocka_unit_test_setup_teardown(test_env_ms_profiler_options, env_setup, env_teardown),
        cmocka_unit_test_setup_teardown(test_env_invalid_json, env_setup, env_teardown),
        cmocka_unit_test_setup_teardown(test_env_profiling_mode, env_setup, env_teardown),
        cmocka_unit_test_setup_teardown(test_env_diagnostic_path, env_setup, env_teardown),
        cmocka_unit_test_setup_teardown(test_env_points, env_setup, env_teardown),
        cmocka_unit_test_setup_teardown(test_env_ids, env_setup, env_teardown),
        cmocka_unit_test_setup_teardown(test_env_bad_values_are_named, env_setup, env_teardown),
        cmocka_unit_test_setup_teardown(test_validate_defaults, log_setup, log_teardown),
        cmocka_unit_test_setup_teardown(test_validate_path, log_setup, log_teardown),
        cmocka_unit_test_setup_teardown(test_validate_2048, log_setup, log_teardown),
        cmocka_unit_test_setup_teardown(test_validate_clamps, log_setup, log_teardown),
        cmocka_unit_test_setup_teardown(test_validate_fields_set_in_code, log_setup, log_teardown),
        cmocka_unit_test_setup_teardown(test_validate_op_time, log_setup, log_teardown),
        cmocka_unit_test_setup_teardown(test_validate_host_sys_usage, log_setup, log_teardown),
        cmocka_unit_test(test_to_json_defaults),
        cmocka_unit_test(test_to_json_alt),
        cmocka_unit_test(test_to_json_snprintf),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_unsupported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
