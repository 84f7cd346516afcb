/* cmd_query.c - `nnprof query op NAME... -d DIR`: statistics of named operators (full op
 * names or op types), the CLI face of nnp_op_analyse(). Prints a table, or JSON. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "nnprof/nnprof.h"

static void help(FILE *f)
{
    fprintf(f, "usage: nnprof query op NAME... -d DIR [--device N] [--json]\n\n"
               "Statistics of the named operators (full scope names or op types) in the\n"
               "profiling data under DIR: count and total/avg/min/max time in us.\n\n"
               "  -d, --dir DIR   a raw directory (PROF_*) or the output_path above it\n"
               "  --device N      the device (rank) whose data to use (default: the first)\n"
               "  --json          print JSON instead of a table\n\n"
               "exit: 0 ok, 1 no data or unreadable, 2 usage error (no or empty NAME)\n");
}

static int print_table(const char *json)
{
    cJSON *arr = cJSON_Parse(json), *row;
    if (!cJSON_IsArray(arr)) {
        cJSON_Delete(arr);
        return NNP_EXIT_FAIL;
    }
    printf("%-48s %8s %14s %12s %12s %12s\n", "op", "count", "total(us)", "avg(us)", "min(us)",
           "max(us)");
    cJSON_ArrayForEach(row, arr)
    {
        printf("%-48s %8.0f %14.3f %12.3f %12.3f %12.3f\n",
               cJSON_GetObjectItem(row, "op_name")->valuestring,
               cJSON_GetObjectItem(row, "count")->valuedouble,
               cJSON_GetObjectItem(row, "total_time_us")->valuedouble,
               cJSON_GetObjectItem(row, "avg_time_us")->valuedouble,
               cJSON_GetObjectItem(row, "min_time_us")->valuedouble,
               cJSON_GetObjectItem(row, "max_time_us")->valuedouble);
    }
    cJSON_Delete(arr);
    return NNP_EXIT_OK;
}

int nnp_cmd_query(int argc, char **argv)
{
    static const struct option longopts[] = {{"dir", required_argument, NULL, 'd'},
                                             {"device", required_argument, NULL, 'D'},
                                             {"json", no_argument, NULL, 'j'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *dir = NULL;
    int device = -1, opt, rc, status;
    bool as_json = false;
    char *json = NULL;

    optind = 1;
    while ((opt = getopt_long(argc, argv, "d:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'd':
            dir = optarg;
            break;
        case 'D': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0' || v < 0 || v > INT32_MAX) {
                nnp_cli_error("--device", "'%s' is not a device id (an integer >= 0)", optarg);
                return NNP_EXIT_USAGE;
            }
            device = (int)v;
            break;
        }
        case 'j':
            as_json = true;
            break;
        case 'h':
            help(stdout);
            return NNP_EXIT_OK;
        default:
            help(stderr);
            return NNP_EXIT_USAGE;
        }
    }
    if (optind >= argc || strcmp(argv[optind], "op") != 0) {
        nnp_cli_error("query", "expected 'op' (the only query so far)");
        help(stderr);
        return NNP_EXIT_USAGE;
    }
    if (!dir) {
        nnp_cli_error("query", "-d DIR is required");
        return NNP_EXIT_USAGE;
    }
    optind++;
    rc = nnp_op_analyse(dir, (const char *const *)&argv[optind], (size_t)(argc - optind), device,
                        &json);
    if (rc == NNP_EINVAL) {
        nnp_cli_error("query op", "%s", nnp_last_error());
        return NNP_EXIT_USAGE;
    }
    if (rc != NNP_OK) {
        nnp_cli_error(dir, "%s", nnp_last_error());
        return NNP_EXIT_FAIL;
    }
    if (as_json) {
        printf("%s\n", json);
        status = NNP_EXIT_OK;
    } else {
        status = print_table(json);
    }
    nnp_free(json);
    return status;
}
