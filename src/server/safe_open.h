/* safe_open.h - opening files under a root directory without leaving it: every path
 * component is opened with O_NOFOLLOW relative to the one before (openat), and "..", "."
 * and empty components are refused, so neither a crafted name nor a symbolic link planted
 * in the data can make the server read outside the directories it serves. */
#ifndef NNP_SERVER_SAFE_OPEN_H
#define NNP_SERVER_SAFE_OPEN_H

#include <stdbool.h>
#include <stddef.h>

/* True when rel is a relative path of plain components: no "..", no ".", no empty
 * component, no leading '/', no NUL or control character. */
bool nnp__rel_path_ok(const char *rel);

/* Opens root/rel read-only (rel may be "" for root itself, which is then opened as a
 * directory). root must be an absolute directory path the caller trusts (it is resolved
 * once, with links, at start-up). Returns an fd (caller closes) or a negative NNP_E* code
 * with the message set: NNP_EINVAL for a refused rel, NNP_ENOENT, NNP_EIO (a link met). */
int nnp__safe_open(const char *root, const char *rel, bool want_dir);

/* Reads root/rel whole (at most max_bytes) into a new NUL-terminated buffer (*out, freed
 * with nnp__free; *len excludes the NUL). NNP_OK or an error as nnp__safe_open, NNP_E2BIG
 * when larger than max_bytes. */
int nnp__safe_read(const char *root, const char *rel, size_t max_bytes, char **out, size_t *len);

#endif /* NNP_SERVER_SAFE_OPEN_H */
