/* strtab.h - the process-wide string intern table. nnp_intern() maps a string to a stable
 * 32-bit id (1, 2, ...) under a mutex; the writer thread later emits every string not yet
 * written as a STRINGS chunk. Ids outlive sessions, so a new session re-emits all. */
#ifndef NNP_STRTAB_H
#define NNP_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "format/raw_format.h"

/* Hard caps (curl dynbuf "toobig"): a runaway caller interning unique strings per event
 * must not eat the host's memory. 4 M strings / 256 MiB is far above any model's op set. */
#define NNP_STRTAB_MAX_STRINGS NNP_RAW_MAX_STRING_ID
#define NNP_STRTAB_MAX_BYTES   (256u * 1024u * 1024u)
/* Longest string kept; longer ones are truncated (a scope path is rarely > 1 KiB). */
#define NNP_STRTAB_MAX_LEN 65535u

/* Interns s (len bytes, no NUL needed). Returns the id, or 0 when full or out of memory. */
uint32_t nnp__strtab_intern(const char *s, size_t len);
/* Number of strings interned so far; ids are 1..count. */
uint32_t nnp__strtab_count(void);
/* Copies string id into the caller's view: *s points into the table (stable for the
 * process's life), *len its length. Returns 0 on success, -1 for an unknown id. */
int nnp__strtab_get(uint32_t id, const char **s, size_t *len);

/* fork() support (core/fork.c): the table's lock is held across fork() so the child gets
 * it consistent; ids and strings stay valid in the child. */
void nnp__strtab_fork_prepare(void);
void nnp__strtab_fork_parent(void);
void nnp__strtab_fork_child(void);

#endif /* NNP_STRTAB_H */
