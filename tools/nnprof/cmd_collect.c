/* cmd_collect.c - `nnprof collect`: gathers a cluster's profiling data from its hosts into
 * one folder in the layout of the seed's collection script and MindInsight's cluster pages
 * (shared/seeds/003): DIR/cluster_profiler/<id>/profiler/ per host, DIR/host_ips_mapping.txt
 * ("<host> <id>" per line: the real addresses stay out of the folder names) and the
 * networking file (hccl.json). Copies are rsync over ssh with keys (collect_copy.c); ids of
 * hosts already in host_ips_mapping.txt are kept, so a second run resumes the first. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "collect.h"
#include "util/util.h"

#define MAPPING_FILE "host_ips_mapping.txt"
#define DEFAULT_JOBS 8
#define MAX_JOBS     256
#define PORT_MAX     65535
#define MAPPING_LINE 512
#define HCCL_MAX     (64u * 1024u * 1024u)
/* The seed's defaults: device folders device0.., the profiler's output "./data". */
#define DEFAULT_DEVICE_PREFIX "device"
#define DEFAULT_OUTPUT        "data"

static void help(FILE *f)
{
    fprintf(f,
            "usage: nnprof collect -o DIR [--src PATH]... [--train-dir PATH [--device-prefix P]\n"
            "                      [--output NAME]] [--hccl FILE] [-j N] [-i KEY] [-p PORT]\n"
            "                      [--known-hosts FILE] [--accept-new-host-keys]\n"
            "                      [--no-host-key-check] [--ssh-option OPT]... [--quiet] HOSTS\n\n"
            "Copies every host's profiling data into DIR in the seed's cluster layout:\n"
            "DIR/cluster_profiler/<id>/profiler/, DIR/host_ips_mapping.txt and the networking\n"
            "file; then analyse it with 'nnprof cluster DIR'. HOSTS is the seed's cluster JSON\n"
            "({\"cluster\": {\"<host>\": {\"user\": \"<user>\"}}}; a \"passwd\" field is refused:\n"
            "use SSH keys) or a file of \"[user@]host[:port] [remote folder]\" lines.\n"
            "Copies run over ssh with keys only (BatchMode: never a password prompt) and\n"
            "check host keys against known_hosts unless told otherwise; several hosts at once,\n"
            "with a progress bar. Running it again resumes an interrupted collection.\n\n"
            "  -o, --output-dir DIR     the cluster folder to fill (created 0700)\n"
            "  --src PATH               remote folder to copy (its contents; * ? [ ] allowed),\n"
            "                           any number of times\n"
            "  --train-dir PATH         the seed's layout instead: PATH/<prefix><N>/<output>*/\n"
            "                           profiler*/ of every device N\n"
            "  --device-prefix P        device folder prefix (default device)\n"
            "  --output NAME            the profiler's output_path name (default data)\n"
            "  --hccl FILE              the networking file (hccl.json), copied into DIR\n"
            "  -j, --jobs N             hosts copied at once (default %d)\n"
            "  -i, --identity KEY       ssh private key\n"
            "  -p, --port N             ssh port of hosts that name none\n"
            "  --known-hosts FILE       the known_hosts file to check host keys against\n"
            "  --accept-new-host-keys   trust a host seen for the first time (its key is\n"
            "                           remembered; a changed key is still refused)\n"
            "  --no-host-key-check      do not check host keys at all (unsafe)\n"
            "  --ssh-option OPT         an ssh -o option, any number of times\n"
            "  --quiet                  no progress bar\n\n"
            "exit: 0 every host copied, 1 some host failed (each is named, with why), 2 usage\n",
            DEFAULT_JOBS);
}

/* Keeps the ids of hosts already in host_ips_mapping.txt; new hosts get the next ones. */
static int assign_ids(const char *out_dir, nnp_collect_hosts_t *h)
{
    char path[NNP_PATH_MAX], line[MAPPING_LINE];
    FILE *f;
    int max_id = 0;
    bool *kept = calloc((size_t)h->n + 1, sizeof(bool));
    if (!kept)
        return -1;
    snprintf(path, sizeof(path), "%s/%s", out_dir, MAPPING_FILE);
    f = fopen(path, "r");
    if (f) {
        while (fgets(line, sizeof(line), f)) {
            char host[NNP_COLLECT_HOST_MAX];
            int id;
            if (sscanf(line, "%255s %d", host, &id) != 2 || id < 1)
                continue;
            if (id > max_id)
                max_id = id;
            for (int i = 0; i < h->n; i++) {
                if (strcmp(h->v[i].host, host) == 0 && !kept[i]) {
                    h->v[i].id = id;
                    kept[i] = true;
                }
            }
        }
        fclose(f);
    }
    for (int i = 0; i < h->n; i++)
        if (!kept[i])
            h->v[i].id = ++max_id;
    free(kept);
    return 0;
}

static int write_file(const char *dir, const char *name, const char *data, size_t n)
{
    nnp_outfile_t f;
    int rc = nnp__out_open(&f, dir, name);
    if (rc == NNP_OK)
        rc = nnp__out_commit(&f, nnp__write_all(f.fd, data, n));
    if (rc != NNP_OK)
        nnp_cli_error(name, "%s", nnp_last_error());
    return rc;
}

static int write_mapping(const char *out_dir, const nnp_collect_hosts_t *h)
{
    size_t cap = (size_t)h->n * (NNP_COLLECT_HOST_MAX + 16) + 1, len = 0;
    char *buf = malloc(cap);
    int rc;
    if (!buf)
        return -1;
    for (int i = 0; i < h->n; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s %d\n", h->v[i].host, h->v[i].id);
    rc = write_file(out_dir, MAPPING_FILE, buf, len);
    free(buf);
    return rc;
}

static int copy_hccl(const char *out_dir, const char *file)
{
    char *text = NULL;
    size_t len = 0;
    const char *base = strrchr(file, '/');
    int rc = nnp__read_file(file, HCCL_MAX, &text, &len);
    if (rc != NNP_OK) {
        nnp_cli_error(file, "%s", nnp_last_error());
        return rc;
    }
    rc = write_file(out_dir, base ? base + 1 : file, text, len);
    nnp__free(text);
    return rc;
}

int nnp_cmd_collect(int argc, char **argv)
{
    static const struct option longopts[] = {{"output-dir", required_argument, NULL, 'o'},
                                             {"src", required_argument, NULL, 's'},
                                             {"train-dir", required_argument, NULL, 't'},
                                             {"device-prefix", required_argument, NULL, 'd'},
                                             {"output", required_argument, NULL, 'O'},
                                             {"hccl", required_argument, NULL, 'H'},
                                             {"jobs", required_argument, NULL, 'j'},
                                             {"identity", required_argument, NULL, 'i'},
                                             {"port", required_argument, NULL, 'p'},
                                             {"known-hosts", required_argument, NULL, 'k'},
                                             {"accept-new-host-keys", no_argument, NULL, 'A'},
                                             {"no-host-key-check", no_argument, NULL, 'N'},
                                             {"ssh-option", required_argument, NULL, 'S'},
                                             {"quiet", no_argument, NULL, 'q'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    nnp_collect_opts_t o;
    nnp_collect_hosts_t hosts;
    const char *train = NULL, *prefix = DEFAULT_DEVICE_PREFIX, *output = DEFAULT_OUTPUT;
    const char *hccl = NULL;
    char seed_src[NNP_COLLECT_PATH_MAX];
    int opt, failed, dirfd = -1;

    memset(&o, 0, sizeof(o));
    o.jobs = DEFAULT_JOBS;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "ho:j:i:p:", longopts, NULL)) != -1) {
        char *end;
        long v;
        switch (opt) {
        case 'o':
            o.out_dir = optarg;
            break;
        case 's':
            if (o.n_srcs == NNP_COLLECT_MAX_SRC || !nnp_collect_safe_name(optarg, true)) {
                nnp_cli_error("--src",
                              "'%s' is not a remote folder nnprof accepts (letters, "
                              "digits, /._-~, and the wildcards * ? [ ]; at most %d)",
                              optarg, NNP_COLLECT_MAX_SRC);
                return NNP_EXIT_USAGE;
            }
            o.srcs[o.n_srcs++] = optarg;
            break;
        case 't':
            train = optarg;
            break;
        case 'd':
            prefix = optarg;
            break;
        case 'O':
            output = optarg;
            break;
        case 'H':
            hccl = optarg;
            break;
        case 'j':
        case 'p':
            v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 1 || v > (opt == 'j' ? MAX_JOBS : PORT_MAX)) {
                nnp_cli_error(opt == 'j' ? "--jobs" : "--port", "'%s' is not in [1, %d]", optarg,
                              opt == 'j' ? MAX_JOBS : PORT_MAX);
                return NNP_EXIT_USAGE;
            }
            if (opt == 'j')
                o.jobs = (int)v;
            else
                o.port = (int)v;
            break;
        case 'i':
            o.identity = optarg;
            break;
        case 'k':
            o.known_hosts = optarg;
            break;
        case 'A':
            o.host_key_check = "accept-new";
            break;
        case 'N':
            o.host_key_check = "no";
            break;
        case 'S':
            if (o.n_ssh_opts == NNP_COLLECT_MAX_SSH_OPTS || !*optarg || optarg[0] == '-') {
                nnp_cli_error("--ssh-option", "'%s' is not an ssh -o option (KEY=VALUE)", optarg);
                return NNP_EXIT_USAGE;
            }
            o.ssh_opts[o.n_ssh_opts++] = optarg;
            break;
        case 'q':
            o.quiet = true;
            break;
        case 'h':
            help(stdout);
            return NNP_EXIT_OK;
        default:
            help(stderr);
            return NNP_EXIT_USAGE;
        }
    }
    if (optind != argc - 1 || !o.out_dir) {
        nnp_cli_error("collect", optind != argc - 1 ? "expected exactly one HOSTS file"
                                                    : "-o DIR (the cluster folder) is required");
        help(stderr);
        return NNP_EXIT_USAGE;
    }
    if (train) {
        int n = snprintf(seed_src, sizeof(seed_src), "%s/%s[0-9]*/%s*/profiler*/", train, prefix,
                         output);
        if (n < 0 || (size_t)n >= sizeof(seed_src) || !nnp_collect_safe_name(seed_src, true)) {
            nnp_cli_error("--train-dir",
                          "'%s' (with --device-prefix and --output) is not a "
                          "remote folder nnprof accepts",
                          train);
            return NNP_EXIT_USAGE;
        }
        if (o.n_srcs < NNP_COLLECT_MAX_SRC)
            o.srcs[o.n_srcs++] = seed_src;
    }
    if (nnp_collect_read_hosts(argv[optind], &hosts) != 0)
        return NNP_EXIT_USAGE;
    for (int i = 0; i < hosts.n; i++) {
        if (!hosts.v[i].src[0] && o.n_srcs == 0) {
            nnp_cli_error("collect",
                          "host %s: no remote folder: give --src PATH or --train-dir "
                          "PATH (or a folder after the host in the host file)",
                          hosts.v[i].host);
            nnp_collect_free_hosts(&hosts);
            return NNP_EXIT_USAGE;
        }
    }
    if (nnp__mkdir_p(o.out_dir, 0700) != NNP_OK || nnp__outdir_open(o.out_dir, &dirfd) != NNP_OK) {
        nnp_cli_error(o.out_dir, "%s", nnp_last_error());
        nnp_collect_free_hosts(&hosts);
        return NNP_EXIT_FAIL;
    }
    close(dirfd);
    if (assign_ids(o.out_dir, &hosts) != 0 || write_mapping(o.out_dir, &hosts) != NNP_OK ||
        (hccl && copy_hccl(o.out_dir, hccl) != NNP_OK)) {
        nnp_collect_free_hosts(&hosts);
        return NNP_EXIT_FAIL;
    }
    failed = nnp_collect_copy(&o, &hosts);
    if (failed == 0)
        printf("nnprof: collected %d host%s into %s (cluster_profiler/<id>/profiler, %s); "
               "analyse it with: nnprof cluster %s\n",
               hosts.n, hosts.n == 1 ? "" : "s", o.out_dir, MAPPING_FILE, o.out_dir);
    else if (failed > 0)
        fprintf(stderr,
                "nnprof: collect: %d of %d hosts failed (see above); run the same command again "
                "to resume: what was copied is kept\n",
                failed, hosts.n);
    nnp_collect_free_hosts(&hosts);
    return failed == 0 ? NNP_EXIT_OK : NNP_EXIT_FAIL;
}
