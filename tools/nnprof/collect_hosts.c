/* collect_hosts.c - the host list of `nnprof collect`: the seed's cluster JSON
 * ({"rank_size": 16, "cluster": {"10.0.0.1": {"user": "root"}, ...}}; a "passwd" field is
 * refused: passwords sit in files and, passed to sshpass, in every process listing) or a
 * plain file of "[user@]host[:port] [remote folder]" lines. Names are checked so that none
 * can become an ssh or rsync option or shell text on the remote side. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "collect.h"

/* A host file is small; anything larger is not one. */
#define HOSTS_FILE_MAX (16u * 1024u * 1024u)
#define LINE_MAX_LEN   4096
#define PORT_MAX       65535

bool nnp_collect_safe_name(const char *s, bool is_path)
{
    if (!s || !*s || s[0] == '-')
        return false;
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (isalnum(c) || strchr("._-:@%+=,", c))
            continue;
        if (is_path && strchr("/*?[]~", c))
            continue;
        if (!is_path && strchr("[]", c))
            continue; /* [::1] style addresses */
        return false;
    }
    return true;
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    size_t n = 0, cap = 4096;
    if (!f)
        return NULL;
    buf = malloc(cap + 1);
    while (buf) {
        size_t k = fread(buf + n, 1, cap - n, f);
        n += k;
        if (k == 0 || n > HOSTS_FILE_MAX)
            break;
        if (n == cap) {
            char *nb = realloc(buf, cap * 2 + 1);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

static int add_host(const char *file, nnp_collect_hosts_t *h, const char *host, const char *user,
                    int port, const char *src)
{
    nnp_collect_host_t *x;
    if (h->n >= NNP_COLLECT_MAX_HOSTS) {
        nnp_cli_error(file, "more than %d hosts", NNP_COLLECT_MAX_HOSTS);
        return -1;
    }
    if (!nnp_collect_safe_name(host, false) || strlen(host) >= NNP_COLLECT_HOST_MAX) {
        nnp_cli_error(file, "'%s' is not a host name or address nnprof accepts", host);
        return -1;
    }
    if (user && *user &&
        (!nnp_collect_safe_name(user, false) || strchr(user, '@') ||
         strlen(user) >= NNP_COLLECT_USER_MAX)) {
        nnp_cli_error(file, "'%s' is not a user name nnprof accepts (host %s)", user, host);
        return -1;
    }
    if (src && *src && (!nnp_collect_safe_name(src, true) || strlen(src) >= NNP_COLLECT_PATH_MAX)) {
        nnp_cli_error(file,
                      "host %s: '%s' is not a remote folder nnprof accepts (letters, digits, "
                      "/._-, and the wildcards * ? [ ])",
                      host, src);
        return -1;
    }
    for (int i = 0; i < h->n; i++) {
        if (strcmp(h->v[i].host, host) == 0 && h->v[i].port == port) {
            nnp_cli_error(file, "host %s is listed twice", host);
            return -1;
        }
    }
    x = &h->v[h->n++];
    memset(x, 0, sizeof(*x));
    snprintf(x->host, sizeof(x->host), "%s", host);
    if (user)
        snprintf(x->user, sizeof(x->user), "%s", user);
    if (src)
        snprintf(x->src, sizeof(x->src), "%s", src);
    x->port = port;
    x->id = h->n; /* the seed numbers hosts from 1 in list order */
    return 0;
}

/* The seed's cluster account file. */
static int read_json_hosts(const char *file, const cJSON *j, nnp_collect_hosts_t *h)
{
    const cJSON *cluster = cJSON_GetObjectItemCaseSensitive(j, "cluster"), *node;
    if (!cJSON_IsObject(cluster)) {
        nnp_cli_error(file, "no \"cluster\" object of hosts (the seed's format: {\"cluster\": "
                            "{\"<host>\": {\"user\": \"<user>\"}}})");
        return -1;
    }
    cJSON_ArrayForEach(node, cluster)
    {
        const cJSON *user = cJSON_GetObjectItemCaseSensitive(node, "user");
        const cJSON *port = cJSON_GetObjectItemCaseSensitive(node, "port");
        const cJSON *src = cJSON_GetObjectItemCaseSensitive(node, "src");
        int p = 0;
        if (cJSON_GetObjectItemCaseSensitive(node, "passwd")) {
            nnp_cli_error(file,
                          "host %s has a \"passwd\" field: nnprof collect never uses passwords (in "
                          "a file anyone who reads it has them, and sshpass shows them to every "
                          "user in the process list); remove the field and log in with an SSH "
                          "key: ssh-keygen, then ssh-copy-id %s%s%s",
                          node->string ? node->string : "?",
                          cJSON_IsString(user) ? user->valuestring : "",
                          cJSON_IsString(user) ? "@" : "", node->string ? node->string : "HOST");
            return -1;
        }
        if (cJSON_IsNumber(port)) {
            if (port->valuedouble < 1 || port->valuedouble > PORT_MAX) {
                nnp_cli_error(file, "host %s: port %g is not in [1, %d]", node->string,
                              port->valuedouble, PORT_MAX);
                return -1;
            }
            p = (int)port->valuedouble;
        }
        if (!node->string ||
            add_host(file, h, node->string, cJSON_IsString(user) ? user->valuestring : NULL, p,
                     cJSON_IsString(src) ? src->valuestring : NULL) != 0)
            return -1;
    }
    return 0;
}

/* "[user@]host[:port] [src]" per line; '#' starts a comment. */
static int read_plain_hosts(const char *file, char *text, nnp_collect_hosts_t *h)
{
    char *save = NULL, *line;
    int n_line = 0;
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char spec[LINE_MAX_LEN], src[LINE_MAX_LEN] = "", *host = spec, *user = NULL, *colon;
        int port = 0, k;
        char *hash = strchr(line, '#');
        n_line++;
        if (hash)
            *hash = '\0';
        k = sscanf(line, "%4095s %4095s", spec, src);
        if (k < 1)
            continue;
        if (strchr(spec, '@')) {
            user = spec;
            host = strchr(spec, '@');
            *host++ = '\0';
        }
        colon = strrchr(host, ':');
        if (colon && host[0] != '[' && strchr(host, ':') == colon) {
            char *end;
            long v = strtol(colon + 1, &end, 10);
            if (*end || v < 1 || v > PORT_MAX) {
                nnp_cli_error(file, "line %d: '%s' is not a port in [1, %d]", n_line, colon + 1,
                              PORT_MAX);
                return -1;
            }
            *colon = '\0';
            port = (int)v;
        }
        if (add_host(file, h, host, user, port, src) != 0)
            return -1;
    }
    return 0;
}

int nnp_collect_read_hosts(const char *path, nnp_collect_hosts_t *out)
{
    size_t len = 0;
    char *text = read_all(path, &len);
    const char *p;
    int rc;
    memset(out, 0, sizeof(*out));
    if (!text) {
        nnp_cli_error(path, "cannot read the host list");
        return -1;
    }
    out->v = calloc(NNP_COLLECT_MAX_HOSTS, sizeof(*out->v));
    if (!out->v) {
        free(text);
        nnp_cli_error(path, "out of memory");
        return -1;
    }
    for (p = text; *p && isspace((unsigned char)*p); p++)
        ;
    if (*p == '{') {
        cJSON *j = cJSON_ParseWithLength(text, len);
        if (!j) {
            nnp_cli_error(path, "not valid JSON (near byte %ld)",
                          (long)(cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() - text : 0));
            rc = -1;
        } else {
            rc = read_json_hosts(path, j, out);
            cJSON_Delete(j);
        }
    } else {
        rc = read_plain_hosts(path, text, out);
    }
    free(text);
    if (rc == 0 && out->n == 0) {
        nnp_cli_error(path, "no host listed");
        rc = -1;
    }
    if (rc != 0)
        nnp_collect_free_hosts(out);
    return rc;
}

void nnp_collect_free_hosts(nnp_collect_hosts_t *h)
{
    free(h->v);
    memset(h, 0, sizeof(*h));
}
