/* test_host_info.c - the host_info CSV importer and the host_info analysis against the seed
 * (MindSpore profiler.py _parse_host_info, _calculate_dataset_execution_time). Each case
 * writes a small host_info_0.csv, imports it, runs nnp__host_info_write and compares the
 * three outputs byte for byte with expectations worked out by hand from the seed's code:
 * json.dump's ", " / ": " separators and key order, csv.writer's "\r\n" and quoting, and
 * repr() of the running-mean floats. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyse/analyse.h"
#include "model/model.h"
#include "read/host_info_csv.h"
#include "test_util.h"
#include "util/util.h"

#define HEADER                                                                                     \
    "tid,pid,parent_pid,module_name,event,stage,level,start_end,custom_info,memory_usage(kB),"     \
    "time_stamp(us)"
#define MEM_HEADER HEADER "\r\n"
#define DS_HEADER  "Operation,Stage,Occurrences,Avg. time (us),Custom Info\r\n"

/* One event as json.dump writes the seed's dicts (key order as the seed builds them). */
#define XEV(name, cat, ts, dur, pid, tid, ppid)                                                    \
    "{\"name\": \"" name "\", \"cat\": \"" cat "\", \"ts\": " #ts ", \"dur\": " #dur               \
    ", \"ph\": \"X\", \"pid\": \"" #pid "\", \"tid\": \"" #tid                                     \
    "\", \"args\": {\"parent_pid\": \"" #ppid "\"}}"
#define IEV(name, cat, ts, pid, tid, ppid)                                                         \
    "{\"name\": \"" name "\", \"cat\": \"" cat "\", \"ts\": " #ts                                  \
    ", \"ph\": \"i\", \"pid\": \"" #pid "\", \"tid\": \"" #tid                                     \
    "\", \"args\": {\"parent_pid\": \"" #ppid "\"}}"
#define BEV(name, pid, tid, ts)                                                                    \
    "{\"name\": \"" name "\", \"pid\": \"" #pid "\", \"tid\": \"" #tid "\", \"ph\": \"B\", "       \
    "\"ts\": " #ts "}"

/* Rows for every rule: nested ranges, an instant, a begin overwritten by a second begin,
 * level-0 rows, memory rows, Dataset rows with several occurrences and custom infos, a ts 0
 * begin, an unmatched begin and end, a negative time, keys that collide through '_' and
 * titles that collide through "::", a negative and a huge duration. Line numbers in the
 * comments are the file's. */
static const char CSV_A[] =
    HEADER "\n"
           "11,100,1,Graph,Compile,Total,1,0,,0,1000\n"       /* 2 begin outer */
           "11,100,1,Graph,Compile,Parse,1,0,,0,1100\n"       /* 3 begin inner */
           "11,100,1,Graph,Compile,Parse,1,1,,0,1300\n"       /* 4 end inner: X 1100+200 */
           "11,100,1,Graph,Mark,Step,1,2,note,2048,1350\n"    /* 5 instant, memory */
           "12,100,1,Dataset,GetNext,Batch,1,0,b1,0,1400\n"   /* 6 begin */
           "12,100,1,Dataset,GetNext,Batch,1,0,b1,0,1450\n"   /* 7 begin again: overwrites */
           "12,100,1,Dataset,GetNext,Batch,1,1,b1,512,1500\n" /* 8 end: X 1450+50, memory */
           "11,100,1,Graph,Compile,Total,1,1,,0,2000\n"       /* 9 end outer: X 1000+1000 */
           "11,100,1,Runtime,Launch,Kernel,0,0,,0,2100\n"     /* 10 level 0 */
           "11,100,1,Runtime,Launch,Kernel,0,1,,4096,2150\n"  /* 11 level 0, memory */
           "12,100,1,Dataset,GetNext,Batch,1,0,b1,0,2200\n"   /* 12 */
           "12,100,1,Dataset,GetNext,Batch,1,1,b2,0,2300\n"   /* 13 title ...::b2 */
           "12,100,1,Dataset,GetNext,Batch,1,0,,0,0\n"        /* 14 ts 0: dataset only */
           "12,100,1,Dataset,GetNext,Batch,1,1,,1024,5\n" /* 15 dataset dur 5; timeline: no start */
           "13,100,1,Dataset,Map,Op,1,0,,0,3000\n"        /* 16 */
           "13,100,1,Dataset,Map,Op,1,1,,0,3100\n"        /* 17 dur 100 */
           "13,100,1,Dataset,Map,Op,1,0,,0,3200\n"        /* 18 */
           "13,100,1,Dataset,Map,Op,1,1,,0,3300\n"        /* 19 dur 100 */
           "13,100,1,Dataset,Map,Op,1,0,,0,3400\n"        /* 20 */
           "13,100,1,Dataset,Map,Op,1,1,,0,3501\n"        /* 21 dur 101 */
           "14,200,100,Dataset,Open,Never,0,0,,0,3600\n"  /* 22 level 0, never ended */
           "11,100,1,Graph,Wait,Sync,1,0,,0,3700\n"       /* 23 never ended: B */
           "11,100,1,Graph,Dangling,End,1,1,,0,3800\n"    /* 24 end without begin */
           "11,100,1,Graph,Zero,Mem,1,2,,0,-7\n"          /* 25 ts < 0: nothing */
           "15,100,1,Graph,a_b,c,1,0,,0,4000\n"           /* 26 key a_b_c_15_100 */
           "15,100,1,Other,a,b_c,1,1,,0,4100\n"           /* 27 same key: X a::b_c */
           "16,100,1,Dataset,Neg,Dur,1,0,,0,5000\n"       /* 28 */
           "16,100,1,Dataset,Neg,Dur,1,1,,0,4990\n"       /* 29 dur -10 */
           "16,100,1,Dataset,Half,H,1,0,,0,6000\n"        /* 30 */
           "16,100,1,Dataset,Half,H,1,1,,0,6000\n"        /* 31 dur 0 */
           "16,100,1,Dataset,Half,H,1,0,,0,6010\n"        /* 32 */
           "16,100,1,Dataset,Half,H,1,1,,0,6011\n"        /* 33 dur 1: mean 0.5 */
           "17,100,1,Dataset,x::y,z,1,0,,0,7000\n"        /* 34 title x::y::z:: */
           "17,100,1,Dataset,x::y,z,1,1,,0,7010\n"        /* 35 dur 10 */
           "17,100,1,Dataset,x,y::z,1,0,,0,7020\n"        /* 36 same title */
           "17,100,1,Dataset,x,y::z,1,1,,0,7050\n"        /* 37 dur 30: mean 20 */
           "18,100,1,Dataset,Big,Span,1,0,,0,-9000000000000000\n" /* 38 */
           "18,100,1,Dataset,Big,Span,1,1,,0,9000000000000000\n"; /* 39 dur 1.8e16 */

/* is_developer false: rows 10, 11 and 22 (level 0) are dropped from timeline and memory. */
static const char TIMELINE_A[] =
    "[" XEV("Compile::Parse", "Graph", 1100, 200, 100, 11, 1) ", " IEV("Mark::Step", "Graph", 1350, 100, 11, 1) ", " XEV(
        "GetNext::Batch", "Dataset",
        1450, 50, 100, 12,
        1) ", " XEV("Compile::Total", "Graph", 1000, 1000, 100, 11,
                    1) ", " XEV("GetNext::Batch", "Dataset", 2200, 100, 100, 12,
                                1) ", " XEV("Map::Op", "Dataset", 3000, 100, 100, 13,
                                            1) ", " XEV("Map::Op", "Dataset", 3200, 100, 100, 13,
                                                        1) ", " XEV("Map::Op", "Dataset", 3400, 101,
                                                                    100, 13,
                                                                    1) ", " XEV("a::b_c", "Other",
                                                                                4000, 100, 100, 15,
                                                                                1) ", " XEV("Neg::"
                                                                                            "Dur",
                                                                                            "Datase"
                                                                                            "t",
                                                                                            5000,
                                                                                            -10,
                                                                                            100, 16,
                                                                                            1) ","
                                                                                               " " XEV("Half::H", "Dataset", 6000, 0, 100, 16, 1) ", " XEV(
                                                                                                   "Half::H",
                                                                                                   "Dataset",
                                                                                                   6010,
                                                                                                   1,
                                                                                                   100,
                                                                                                   16,
                                                                                                   1) ", " XEV("x::y::z",
                                                                                                               "Dataset",
                                                                                                               7000,
                                                                                                               10,
                                                                                                               100,
                                                                                                               17,
                                                                                                               1) ", " XEV("x::y::z",
                                                                                                                           "Dataset",
                                                                                                                           7020,
                                                                                                                           30,
                                                                                                                           100,
                                                                                                                           17,
                                                                                                                           1) ", " BEV("Wait_Sync",
                                                                                                                                       100,
                                                                                                                                       11,
                                                                                                                                       3700) "]";

static const char MEMORY_A[] = MEM_HEADER "11,100,1,Graph,Mark,Step,1,2,note,2048,1350\r\n"
                                          "12,100,1,Dataset,GetNext,Batch,1,1,b1,512,1500\r\n"
                                          "12,100,1,Dataset,GetNext,Batch,1,1,,1024,5\r\n";

/* Every Dataset row counts, whatever its level or time. Means as ExecutionCalculator:
 * Map::Op 100, 100, 100 + (101 - 100) / 3 = 100.33333333333333. */
static const char DATASET_A[] = DS_HEADER "GetNext,Batch,1,50.0,b1\r\n"
                                          "GetNext,Batch,1,100.0,b2\r\n"
                                          "GetNext,Batch,1,5.0,\r\n"
                                          "Map,Op,3,100.33333333333333,\r\n"
                                          "Neg,Dur,1,-10.0,\r\n"
                                          "Half,H,2,0.5,\r\n"
                                          "x::y,z,2,20.0,\r\n"
                                          "Big,Span,1,1.8e+16,\r\n";

/* is_developer true: Launch::Kernel (rows 10-11) after Compile::Total, row 11's memory,
 * and Open_Never (row 22) ahead of Wait_Sync: B events follow ts_map insertion order. */
static const char TIMELINE_A_DEV[] =
    "[" XEV("Compile::Parse", "Graph", 1100, 200, 100, 11,
            1) ", " IEV("Mark::Step", "Graph", 1350, 100, 11, 1) ", " XEV("GetNext::Batch",
                                                                          "Dataset", 1450, 50, 100, 12, 1) ", " XEV("Compile::Total", "Graph", 1000, 1000, 100, 11, 1) ", " XEV("Launch::Kernel", "Runtime", 2100, 50, 100, 11, 1) ", " XEV("GetNext::Batch", "Dataset", 2200, 100, 100, 12, 1) ", " XEV("Map::Op",
                                                                                                                                                                                                                                                                                                         "Dataset",
                                                                                                                                                                                                                                                                                                         3000,
                                                                                                                                                                                                                                                                                                         100,
                                                                                                                                                                                                                                                                                                         100,
                                                                                                                                                                                                                                                                                                         13,
                                                                                                                                                                                                                                                                                                         1) ", " XEV("Map::Op",
                                                                                                                                                                                                                                                                                                                     "Dataset", 3200, 100, 100, 13, 1) ", " XEV("Map::Op",
                                                                                                                                                                                                                                                                                                                                                                "Dataset", 3400, 101, 100, 13, 1) ", " XEV("a::b_c",
                                                                                                                                                                                                                                                                                                                                                                                                           "Other", 4000, 100, 100, 15,
                                                                                                                                                                                                                                                                                                                                                                                                           1) ", " XEV("Neg::Dur",
                                                                                                                                                                                                                                                                                                                                                                                                                       "Dataset",
                                                                                                                                                                                                                                                                                                                                                                                                                       5000,
                                                                                                                                                                                                                                                                                                                                                                                                                       -10, 100, 16, 1) ", " XEV("Half::H",
                                                                                                                                                                                                                                                                                                                                                                                                                                                 "Dataset",
                                                                                                                                                                                                                                                                                                                                                                                                                                                 6000,
                                                                                                                                                                                                                                                                                                                                                                                                                                                 0,
                                                                                                                                                                                                                                                                                                                                                                                                                                                 100,
                                                                                                                                                                                                                                                                                                                                                                                                                                                 16,
                                                                                                                                                                                                                                                                                                                                                                                                                                                 1) ", " XEV("Half::H",
                                                                                                                                                                                                                                                                                                                                                                                                                                                             "Dataset",
                                                                                                                                                                                                                                                                                                                                                                                                                                                             6010,
                                                                                                                                                                                                                                                                                                                                                                                                                                                             1,
                                                                                                                                                                                                                                                                                                                                                                                                                                                             100,
                                                                                                                                                                                                                                                                                                                                                                                                                                                             16,
                                                                                                                                                                                                                                                                                                                                                                                                                                                             1) ", " XEV("x::y::z",
                                                                                                                                                                                                                                                                                                                                                                                                                                                                         "Dataset",
                                                                                                                                                                                                                                                                                                                                                                                                                                                                         7000,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                         10,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                         100,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                         17,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                         1) ", " XEV("x::y::z",
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                     "Dataset", 7020, 30, 100, 17,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                     1) ", " BEV("Open_Never", 200, 14,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                 3600) ", " BEV("Wait_Sync",
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                100,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                11,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                3700) "]";

static const char MEMORY_A_DEV[] = MEM_HEADER "11,100,1,Graph,Mark,Step,1,2,note,2048,1350\r\n"
                                              "12,100,1,Dataset,GetNext,Batch,1,1,b1,512,1500\r\n"
                                              "11,100,1,Runtime,Launch,Kernel,0,1,,4096,2150\r\n"
                                              "12,100,1,Dataset,GetNext,Batch,1,1,,1024,5\r\n";

/* CRLF rows, quoted fields (comma, doubled quote, a CRLF inside quotes), UTF-8, extra
 * fields, a blank line, and malformed rows (lines 6-9 and an unterminated quote at 13). */
static const char CSV_B[] =
    HEADER "\r\n"
           "21,300,1,Dataset,\"Read, \"\"fast\"\"\",Load,1,0,\"a,b\",0,100\r\n"            /* 2 */
           "21,300,1,Dataset,\"Read, \"\"fast\"\"\",Load,1,1,\"line1\r\nline2\",8,150\r\n" /* 3-4 */
           "21,300,1,Graph,Caf\xc3\xa9,\xc3\x9c,1,2,,0,160\r\n"                            /* 5 */
           "21,300,1,Graph,bad,row,1,0,,0,abc\r\n"                                         /* 6 */
           "21,300,1,Graph,short,row\r\n"                                                  /* 7 */
           "x21,300,1,Graph,t,id,1,0,,0,165\r\n"                                           /* 8 */
           "21,300,1,Graph,kind,bad,1,3,,0,170\r\n"                                        /* 9 */
           "21,300,1,Graph,Extra,Fields,1,2,,0,180,extra1,extra2\r\n"                      /* 10 */
           "\r\n"                                                                          /* 11 */
           "21,300,1,Graph,\"emoji\xf0\x9f\x98\x80\",\"tab\there\",1,2,,0,190\r\n"         /* 12 */
           "21,300,1,Graph,Unterminated,\"x,1,2,,0,200";                                   /* 13 */

static const char TIMELINE_B[] =
    "[" XEV("Read, \\\"fast\\\"::Load", "Dataset", 100, 50, 300, 21, 1) ", " IEV(
        "Caf\\u00e9::\\u00dc", "Graph", 160, 300, 21,
        1) ", " IEV("Extra::Fields", "Graph", 180, 300, 21,
                    1) ", " IEV("emoji\\ud83d\\ude00::tab\\there", "Graph", 190, 300, 21, 1) "]";

/* The CRLF inside quotes reads as "\n" (the seed opens the CSV in text mode). */
static const char MEMORY_B[] =
    MEM_HEADER "21,300,1,Dataset,\"Read, \"\"fast\"\"\",Load,1,1,\"line1\nline2\",8,150\r\n";

static const char DATASET_B[] = DS_HEADER "\"Read, \"\"fast\"\"\",Load,1,50.0,\"line1\nline2\"\r\n";

/* Rows out of time order across threads: the seed's outputs follow the file. */
static const char CSV_ORDER[] = HEADER "\n"
                                       "31,400,1,Graph,A,S,1,0,,10,500\n"
                                       "32,400,1,Dataset,B,S,1,0,,20,100\n"
                                       "32,400,1,Dataset,B,S,1,1,,0,200\n"
                                       "31,400,1,Graph,A,S,1,1,,0,600\n"
                                       "33,400,1,Dataset,C,S,1,0,,0,50\n"
                                       "33,400,1,Dataset,C,S,1,1,,0,60\n";

static const char TIMELINE_ORDER[] = "[" XEV("B::S", "Dataset", 100, 100, 400, 32, 1) ", " XEV(
    "A::S", "Graph", 500, 100, 400, 31, 1) ", " XEV("C::S", "Dataset", 50, 10, 400, 33, 1) "]";
static const char MEMORY_ORDER[] = MEM_HEADER "31,400,1,Graph,A,S,1,0,,10,500\r\n"
                                              "32,400,1,Dataset,B,S,1,0,,20,100\r\n";
static const char DATASET_ORDER[] = DS_HEADER "B,S,1,100.0,\r\nC,S,1,10.0,\r\n";

/* ---- helpers ---- */

/* snprintf that fails the test on truncation (and so keeps -Wformat-truncation quiet). */
#define FMT(buf, ...) assert_true(snprintf((buf), sizeof(buf), __VA_ARGS__) < (int)sizeof(buf))

typedef struct fixture {
    char *dir;
    char csv[NNP_PATH_MAX];
    char out[NNP_PATH_MAX];
    char host[NNP_PATH_MAX]; /* out/host_info */
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    f->dir = nnpt_mkdtemp();
    FMT(f->csv, "%s/host_info_0.csv", f->dir);
    FMT(f->out, "%s/out", f->dir);
    FMT(f->host, "%s/out/host_info", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    nnpt_log_release();
    nnpt_rm_rf(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static void write_text(const char *path, const char *text, size_t n)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(text, 1, n, fp), n);
    assert_int_equal(fclose(fp), 0);
}

static void write_str(const char *path, const char *text)
{
    write_text(path, text, strlen(text));
}

/* The whole file, or NULL when it does not exist. Caller frees. */
static char *read_text(const char *path)
{
    FILE *fp = fopen(path, "rb");
    char *buf;
    long n;
    if (!fp)
        return NULL;
    assert_int_equal(fseek(fp, 0, SEEK_END), 0);
    n = ftell(fp);
    rewind(fp);
    buf = malloc((size_t)n + 1);
    assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
    buf[n] = '\0';
    fclose(fp);
    return buf;
}

/* Compares dir/name with expected byte for byte; expected NULL: the file must not exist. */
static void expect_file(const char *dir, const char *name, const char *expected)
{
    char path[NNP_PATH_MAX];
    char *got;
    FMT(path, "%s/%s", dir, name);
    got = read_text(path);
    if (!expected) {
        if (got)
            fail_msg("%s should not exist, holds:\n%s", name, got);
        return;
    }
    if (!got)
        fail_msg("%s was not written", name);
    if (strcmp(got, expected) != 0)
        fail_msg("%s differs.\n--- got ---\n%s\n--- expected ---\n%s", name, got, expected);
    free(got);
}

/* Imports text as host_info_0.csv and writes the analysis; returns the write's code. */
static int run_text(fixture_t *f, const char *text, size_t n, bool dev, bool finish)
{
    nnp_model_t m;
    nnp_actx_t c;
    int rc;
    write_text(f->csv, text, n);
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    rc = nnp__import_host_info_csv(f->csv, &m);
    if (rc == NNP_OK && finish)
        rc = nnp__model_finish(&m);
    if (rc == NNP_OK) {
        memset(&c, 0, sizeof(c));
        c.m = &m;
        c.out_dir = f->out;
        c.rank = 0;
        c.is_developer = dev;
        rc = nnp__host_info_write(&c);
    }
    nnp__model_fini(&m);
    return rc;
}

static int run(fixture_t *f, const char *text, bool dev, bool finish)
{
    return run_text(f, text, strlen(text), dev, finish);
}

static void expect_outputs(fixture_t *f, const char *timeline, const char *memory,
                           const char *dataset)
{
    expect_file(f->host, "timeline_0.json", timeline);
    expect_file(f->host, "host_memory_0.csv", memory);
    expect_file(f->host, "dataset_0.csv", dataset);
}

static void expect_log(const char *needle)
{
    if (!strstr(nnpt_log_text(), needle))
        fail_msg("log lacks \"%s\"; it holds:\n%s", needle, nnpt_log_text());
}

/* ---- tests ---- */

static void test_seed_rules_user(void **state)
{
    fixture_t *f = *state;
    struct stat st;
    nnpt_log_capture();
    assert_int_equal(run(f, CSV_A, false, false), NNP_OK);
    expect_outputs(f, TIMELINE_A, MEMORY_A, DATASET_A);
    /* The directory is private, the files 0600, as the seed makes them. */
    assert_int_equal(stat(f->host, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(stat(f->csv, &st), 0);
    /* The seed's warnings: ends without a start (rows 15, 24, 39), starts never ended. */
    expect_log("can not map the start time for item: Dangling::End tid 11 pid 100");
    expect_log("can not map the start time for item: GetNext::Batch tid 12 pid 100 start_end 1 "
               "ts 5 us");
    expect_log("event_stage_tid_pid: Wait_Sync_11_100, time: 3700 us.");
    expect_log("event_stage_tid_pid: Open_Never_14_200, time: 3600 us.");
}

static void test_seed_rules_developer(void **state)
{
    fixture_t *f = *state;
    assert_int_equal(run(f, CSV_A, true, false), NNP_OK);
    expect_outputs(f, TIMELINE_A_DEV, MEMORY_A_DEV, DATASET_A);
}

/* nnp__model_finish (a stable sort by time) changes nothing for a file in time order. */
static void test_after_finish(void **state)
{
    fixture_t *f = *state;
    assert_int_equal(run_text(f, CSV_B, sizeof(CSV_B) - 1, false, true), NNP_OK);
    expect_outputs(f, TIMELINE_B, MEMORY_B, DATASET_B);
}

/* Files out of time order (CSV_A has negative, zero and backward times; CSV_ORDER mixes
 * threads) keep the seed's outputs through the sort only when the model keeps the file
 * order (host.seq, model.h). */
static void test_file_order_survives_finish(void **state)
{
    fixture_t *f = *state;
    assert_int_equal(run(f, CSV_ORDER, false, true), NNP_OK);
    expect_outputs(f, TIMELINE_ORDER, MEMORY_ORDER, DATASET_ORDER);
    assert_int_equal(run(f, CSV_A, false, true), NNP_OK);
    expect_outputs(f, TIMELINE_A, MEMORY_A, DATASET_A);
}

static void test_file_order(void **state)
{
    fixture_t *f = *state;
    assert_int_equal(run(f, CSV_ORDER, false, false), NNP_OK);
    expect_outputs(f, TIMELINE_ORDER, MEMORY_ORDER, DATASET_ORDER);
}

static void test_quoting_utf8_and_bad_rows(void **state)
{
    fixture_t *f = *state;
    char want[NNP_PATH_MAX + 64];
    nnpt_log_capture();
    assert_int_equal(run_text(f, CSV_B, sizeof(CSV_B) - 1, false, false), NNP_OK);
    expect_outputs(f, TIMELINE_B, MEMORY_B, DATASET_B);
    FMT(want,
        "host_info CSV '%s' line 6: column 'time_stamp(us)': 'abc' is "
        "not an integer",
        f->csv);
    expect_log(want);
    expect_log("line 7: column 'level' is missing (6 fields, header 11); row skipped");
    expect_log("line 8: column 'tid': 'x21' is not an integer");
    expect_log("line 9: column 'start_end': '3' is not an integer in [0, 2]; row skipped");
    expect_log("line 13: the file ends inside a quoted field; row skipped");
}

static void test_bom_and_column_order(void **state)
{
    fixture_t *f = *state;
    /* Columns in another order are found by name; a UTF-8 BOM is skipped. */
    static const char csv[] =
        "\xEF\xBB\xBFtime_stamp(us),memory_usage(kB),custom_info,start_end,level,stage,event,"
        "module_name,parent_pid,pid,tid\n"
        "10,0,,0,1,S,E,M,7,8,9\n"
        "25,3,ci,1,1,S,E,M,7,8,9\n";
    assert_int_equal(run(f, csv, false, false), NNP_OK);
    expect_outputs(f, "[" XEV("E::S", "M", 10, 15, 8, 9, 7) "]",
                   MEM_HEADER "9,8,7,M,E,S,1,1,ci,3,25\r\n", DS_HEADER);
}

static void test_empty_inputs(void **state)
{
    fixture_t *f = *state;
    /* An empty file and a header-only one: the seed writes only the dataset header. */
    nnpt_log_capture();
    assert_int_equal(run(f, "", false, false), NNP_OK);
    expect_outputs(f, NULL, NULL, DS_HEADER);
    expect_log("is empty");
    /* Which memory is missing, and what that means (issue 10). */
    expect_log("No host memory (memory_usage) is recorded in ");
    expect_log("so host_info/host_memory_0.csv is not written (host memory comes from "
               "nnp_host_memory() or MindSpore's host_info); no tensor memory was recorded "
               "either");
    expect_log("No valid time_stamp is recorded in");
    nnpt_rm_rf(f->out);
    assert_int_equal(run(f, HEADER "\r\n", false, false), NNP_OK);
    expect_outputs(f, NULL, NULL, DS_HEADER);
}

static void test_no_host_rows(void **state)
{
    fixture_t *f = *state;
    nnp_model_t m;
    nnp_actx_t c;
    struct stat st;
    /* A run without host data: no host_info directory at all (the seed returns early). */
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    memset(&c, 0, sizeof(c));
    c.m = &m;
    c.out_dir = f->out;
    assert_int_equal(nnp__host_info_write(&c), NNP_OK);
    assert_int_equal(stat(f->host, &st), -1);
    nnp__model_fini(&m);
}

static void test_import_errors(void **state)
{
    fixture_t *f = *state;
    char want[NNP_PATH_MAX + 64];
    nnp_model_t m;

    assert_int_equal(nnp__model_init(&m), NNP_OK);
    write_str(f->csv, "tid,pid,parent_pid,module_name,event,stage,start_end,custom_info,"
                      "memory_usage(kB),time_stamp(us)\n1,2,3,M,E,S,0,,0,5\n");
    assert_int_equal(nnp__import_host_info_csv(f->csv, &m), NNP_ECORRUPT);
    FMT(want, "host_info CSV '%s' line 1: the header has no column 'level'", f->csv);
    assert_string_equal(nnp_last_error(), want);
    assert_int_equal(m.host.t.n, 0);

    write_str(f->csv, "\"tid,pid\n");
    assert_int_equal(nnp__import_host_info_csv(f->csv, &m), NNP_ECORRUPT);
    FMT(want, "host_info CSV '%s' line 1: bad header: the file ends inside a quoted field", f->csv);
    assert_string_equal(nnp_last_error(), want);

    FMT(want, "%s/missing.csv", f->dir);
    assert_int_equal(nnp__import_host_info_csv(want, &m), NNP_ENOENT);
    assert_non_null(strstr(nnp_last_error(), want));
    nnp__model_fini(&m);
}

static void test_import_model_rows(void **state)
{
    fixture_t *f = *state;
    nnp_model_t m;
    uint32_t th;
    write_text(f->csv, CSV_A, sizeof(CSV_A) - 1);
    assert_int_equal(nnp__model_init(&m), NNP_OK);
    assert_int_equal(nnp__import_host_info_csv(f->csv, &m), NNP_OK);
    assert_int_equal(m.host.t.n, 38);
    /* Row 22: 14,200,100,Dataset,Open,Never,0,0,,0,3600 */
    assert_int_equal(m.host.ts_ns[20], 3600000);
    assert_int_equal(m.host.kind[20], 0);
    assert_int_equal(m.host.level[20], 0);
    assert_string_equal(nnp__model_str(&m, m.host.module[20]), "Dataset");
    th = m.host.thread[20];
    assert_int_equal(m.threads.tid[th], 14);
    assert_int_equal(m.threads.pid[th], 200);
    assert_int_equal(m.threads.parent_pid[th], 100);
    /* Row 5: 2048 kB. Row 38: -9e15 us. */
    assert_int_equal(m.host.memory_bytes[3], 2048 * 1024);
    assert_true(m.host.ts_ns[36] == -9000000000000000000LL);
    assert_string_equal(m.info.source_format, NNP_HOST_INFO_CSV_FORMAT);
    assert_string_equal(m.info.source, f->csv);
    /* Eight (tid, pid, parent_pid) triples. */
    assert_int_equal(m.threads.t.n, 8);
    nnp__model_fini(&m);
}

/* Growth of every table, deletion and compaction of the ts_map, B order after re-begins:
 * N keys begun; all but every 7th ended; key 0 begun again (keeps its place), key 1 begun
 * again (goes last). Expected text built from those rules. */
#define STRESS_N 3000
static void append(char **buf, size_t *len, size_t *cap, const char *s)
{
    size_t n = strlen(s);
    if (*len + n + 1 > *cap) {
        *cap = (*len + n + 1) * 2;
        *buf = realloc(*buf, *cap);
    }
    memcpy(*buf + *len, s, n + 1);
    *len += n;
}

static void test_many_keys(void **state)
{
    fixture_t *f = *state;
    char *csv = NULL, *tl = NULL, line[256];
    size_t cl = 0, cc = 0, tlen = 0, tcap = 0;
    append(&csv, &cl, &cc, HEADER "\n");
    for (int k = 0; k < STRESS_N; k++) {
        FMT(line, "%d,1,0,M,E,S,1,0,,0,%d\n", 1000 + k, 10 + k);
        append(&csv, &cl, &cc, line);
    }
    append(&tl, &tlen, &tcap, "[");
    for (int k = 0; k < STRESS_N; k++) {
        if (k % 7 == 0)
            continue;
        FMT(line, "%d,1,0,M,E,S,1,1,,0,%d\n", 1000 + k, 100000 + k);
        append(&csv, &cl, &cc, line);
        FMT(line,
            "%s{\"name\": \"E::S\", \"cat\": \"M\", \"ts\": %d, \"dur\": 99990, \"ph\": "
            "\"X\", \"pid\": \"1\", \"tid\": \"%d\", \"args\": {\"parent_pid\": \"0\"}}",
            tlen > 1 ? ", " : "", 10 + k, 1000 + k);
        append(&tl, &tlen, &tcap, line);
    }
    append(&csv, &cl, &cc, "1000,1,0,M,E,S,1,0,,0,200000\n1001,1,0,M,E,S,1,0,,0,200001\n");
    for (int k = 0; k < STRESS_N; k += 7) {
        FMT(line,
            ", {\"name\": \"E_S\", \"pid\": \"1\", \"tid\": \"%d\", \"ph\": \"B\", \"ts\": %d}",
            1000 + k, k == 0 ? 200000 : 10 + k);
        append(&tl, &tlen, &tcap, line);
    }
    append(&tl, &tlen, &tcap,
           ", {\"name\": \"E_S\", \"pid\": \"1\", \"tid\": \"1001\", \"ph\": \"B\", \"ts\": "
           "200001}]");
    assert_int_equal(run(f, csv, false, false), NNP_OK);
    expect_outputs(f, tl, NULL, DS_HEADER);
    free(csv);
    free(tl);
}

/* Fail each allocation in turn: the import and the analysis return NNP_ENOMEM and leak
 * nothing (ASan), or succeed with the full outputs. */
static void test_alloc_failures(void **state)
{
    fixture_t *f = *state;
    write_text(f->csv, CSV_A, sizeof(CSV_A) - 1);
    for (uint64_t nth = 1;; nth++) {
        nnp_model_t m;
        nnp_actx_t c;
        int rc;
        bool done;
        nnp__alloc_fail_at(nth);
        rc = nnp__model_init(&m);
        if (rc == NNP_OK)
            rc = nnp__import_host_info_csv(f->csv, &m);
        if (rc == NNP_OK) {
            memset(&c, 0, sizeof(c));
            c.m = &m;
            c.out_dir = f->out;
            rc = nnp__host_info_write(&c);
        }
        done = nnp__alloc_fail_pending(); /* the run needed fewer than nth */
        nnp__alloc_fail_at(0);
        nnp__model_fini(&m);
        if (rc != NNP_OK && rc != NNP_ENOMEM)
            fail_msg("allocation %llu: unexpected code %d", (unsigned long long)nth, rc);
        if (done) {
            assert_int_equal(rc, NNP_OK);
            expect_outputs(f, TIMELINE_A, MEMORY_A, DATASET_A);
            break;
        }
        assert_int_equal(rc, NNP_ENOMEM);
    }
}

static void touch(const char *dir, const char *name)
{
    char path[NNP_PATH_MAX];
    FMT(path, "%s/%s", dir, name);
    write_str(path, HEADER "\n");
}

static void test_find(void **state)
{
    fixture_t *f = *state;
    char d[NNP_PATH_MAX], sub[NNP_PATH_MAX], path[NNP_PATH_MAX], want[NNP_PATH_MAX];
    int rank;

    FMT(d, "%s/find", f->dir);
    assert_int_equal(nnp__mkdir_p(d, 0700), NNP_OK);
    rank = -1;
    assert_false(nnp__host_info_csv_find(d, &rank, path, sizeof(path)));

    /* Names that are not host_info_<digits>.csv, and a directory, are not taken. */
    touch(d, "host_info_x.csv");
    touch(d, "host_info_.csv");
    touch(d, "host_info_1.json");
    touch(d, "xhost_info_1.csv");
    FMT(sub, "%s/host_info_2.csv", d);
    assert_int_equal(nnp__mkdir_p(sub, 0700), NNP_OK);
    assert_false(nnp__host_info_csv_find(d, &rank, path, sizeof(path)));

    /* The seed's offline layout: <dir>/profiler/host_info. */
    FMT(sub, "%s/profiler/host_info", d);
    assert_int_equal(nnp__mkdir_p(sub, 0700), NNP_OK);
    touch(sub, "host_info_4.csv");
    assert_true(nnp__host_info_csv_find(d, &rank, path, sizeof(path)));
    assert_int_equal(rank, 4);
    FMT(want, "%s/host_info_4.csv", sub);
    assert_string_equal(path, want);

    /* <dir>/host_info (the profiler directory itself) comes first. */
    FMT(sub, "%s/host_info", d);
    assert_int_equal(nnp__mkdir_p(sub, 0700), NNP_OK);
    touch(sub, "host_info_5.csv");
    rank = -1;
    assert_true(nnp__host_info_csv_find(d, &rank, path, sizeof(path)));
    assert_int_equal(rank, 5);

    /* Files in the directory itself come first; the lowest rank unless one is asked for. */
    touch(d, "host_info_3.csv");
    touch(d, "host_info_1.csv");
    rank = -1;
    assert_true(nnp__host_info_csv_find(d, &rank, path, sizeof(path)));
    assert_int_equal(rank, 1);
    FMT(want, "%s/host_info_1.csv", d);
    assert_string_equal(path, want);
    rank = 3;
    assert_true(nnp__host_info_csv_find(d, &rank, path, sizeof(path)));
    assert_int_equal(rank, 3);
    rank = 4; /* not in the directory: found in profiler/host_info */
    assert_true(nnp__host_info_csv_find(d, &rank, path, sizeof(path)));
    assert_int_equal(rank, 4);
    rank = 9;
    assert_false(nnp__host_info_csv_find(d, &rank, path, sizeof(path)));
    /* A path that does not fit is not returned. */
    rank = -1;
    assert_false(nnp__host_info_csv_find(d, &rank, path, 8));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_seed_rules_user, setup, teardown),
        cmocka_unit_test_setup_teardown(test_seed_rules_developer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_after_finish, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_order_survives_finish, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quoting_utf8_and_bad_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bom_and_column_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_inputs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_host_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_import_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_import_model_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alloc_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_find, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
