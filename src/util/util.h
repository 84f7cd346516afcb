/* util.h - internal helpers every layer may use: allocation, errors, logging, CRC-32C,
 * files and paths. Nothing here knows about profiling; nothing here includes a higher
 * layer. Internal non-static symbols carry the nnp__ prefix (libuv). */
#ifndef NNP_UTIL_H
#define NNP_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "nnprof/nnprof.h"

#if defined(__GNUC__)
#define NNP_LIKELY(x)    __builtin_expect(!!(x), 1)
#define NNP_UNLIKELY(x)  __builtin_expect(!!(x), 0)
#define NNP_PRINTF(f, a) __attribute__((format(printf, f, a)))
/* For the short helpers of per-field paths that the compiler would otherwise call. */
#define NNP_ALWAYS_INLINE inline __attribute__((always_inline))
#define NNP_NOINLINE      __attribute__((noinline))
#else
#define NNP_LIKELY(x)   (x)
#define NNP_UNLIKELY(x) (x)
#define NNP_PRINTF(f, a)
#define NNP_ALWAYS_INLINE inline
#define NNP_NOINLINE
#endif

#define NNP_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
/* A cache line on every CPU we target; per-thread slots are aligned to it (LMDB). */
#define NNP_CACHE_LINE 64

/* Invariants: active in debug builds only (SQLite ALWAYS/NEVER); never used on input. */
#ifdef NNP_DEBUG
#include <assert.h>
#define NNP_ASSERT(x) assert(x)
#else
#define NNP_ASSERT(x) ((void)0)
#endif

/* ---- allocation (alloc.c): every allocation of the library goes through these ---- */
void *nnp__malloc(size_t n);
void *nnp__calloc(size_t count, size_t n);
void *nnp__realloc(void *p, size_t n);
/* Room for one more element in the array p (n elements of elem bytes in use, *cap
 * allocated): p itself while n < *cap, else a copy with twice the room (initial the first
 * time) and *cap updated; NULL when out of memory (p unchanged, still the caller's). */
void *nnp__grow(void *p, size_t n, size_t *cap, size_t elem, size_t initial);
/* Memory aligned to align (a power of two >= sizeof(void *)); release with nnp__free. */
void *nnp__aligned_alloc(size_t align, size_t n);
void nnp__free(void *p);
/* Asks the kernel to back the whole 2 MiB pages inside [p, p + n) with transparent huge
 * pages (madvise MADV_HUGEPAGE), when n is large enough to hold some; a hint: errors are
 * ignored. For the analyser's big tables (one page fault per 2 MiB instead of per 4 KiB),
 * never for the recorder's memory, which lives in the profiled program. */
void nnp__hint_huge_pages(void *p, size_t n);
/* Makes the whole pages of [p, p + n) present and writable in one call
 * (MADV_POPULATE_WRITE, Linux 5.14), for a range about to be written: one system call
 * instead of a page fault per page. Contents are unchanged. Best effort: nothing happens
 * where the kernel or the headers lack it. */
void nnp__prefault_write(void *p, size_t n);
/* Arrays in anonymous mappings of their own, for big arrays whose unwritten bytes must read
 * as zero: the kernel hands out zeroed pages, so they need no memset. nnp__zmap_resize maps
 * new_bytes (p NULL) or grows or shrinks the mapping p of old_bytes (it may move; bytes
 * past old_bytes read zero); NULL on failure, p then unchanged. Sizes are whole pages
 * (nnp__zmap_bytes rounds up). Free with nnp__zmap_free and the mapping's size. */
size_t nnp__zmap_bytes(size_t n);
void *nnp__zmap_resize(void *p, size_t old_bytes, size_t new_bytes);
void nnp__zmap_free(void *p, size_t bytes);
char *nnp__strdup(const char *s);
/* Test hook: the nth allocation from now (1 = the next) fails; 0 disables. */
void nnp__alloc_fail_at(uint64_t nth);
/* True while a planned failure has not happened yet. */
bool nnp__alloc_fail_pending(void);

/* ---- helper processes (proc.c) ---- */
/* fork() for nnprof's own helper children (analysis workers): the fork handlers see it and
 * never start a follow_fork session in them. Returns what fork() returns. */
pid_t nnp__fork_helper(void);
/* True in the child of nnp__fork_helper() while the fork handlers run. */
bool nnp__in_helper_fork(void);

/* ---- errors (error.c) ---- */
/* Formats the thread's last-error message and returns code (always negative or OK). */
int nnp__fail(int code, const char *fmt, ...) NNP_PRINTF(2, 3);
/* Translates an errno value into an NNP_E* code. */
int nnp__from_errno(int err);
void nnp__clear_error(void);

/* ---- logging (log.c) ---- */
void nnp__log(nnp_log_level_t level, const char *fmt, ...) NNP_PRINTF(2, 3);
bool nnp__log_enabled(nnp_log_level_t level);
#define NNP_LOG_E(...) nnp__log(NNP_LOG_ERROR, __VA_ARGS__)
#define NNP_LOG_W(...) nnp__log(NNP_LOG_WARN, __VA_ARGS__)
#define NNP_LOG_I(...) nnp__log(NNP_LOG_INFO, __VA_ARGS__)
#define NNP_LOG_D(...) nnp__log(NNP_LOG_DEBUG, __VA_ARGS__)

/* ---- CRC-32C (crc32c.c), Castagnoli polynomial as used by iSCSI, ext4, LevelDB ---- */
uint32_t nnp__crc32c(uint32_t crc, const void *data, size_t n);

/* ---- files and paths (fs.c) ---- */
/* Creates dir and its missing parents with mode. Returns NNP_OK or an error. */
int nnp__mkdir_p(const char *dir, mode_t mode);
/* Writes all n bytes, retrying short writes and EINTR. NNP_OK or NNP_EIO. */
int nnp__write_all(int fd, const void *buf, size_t n);
/* Joins a and b with one '/' into out. NNP_ETOOLONG when it does not fit. */
int nnp__path_join(char *out, size_t cap, const char *a, const char *b);
/* Writes data to path atomically (temp file + fsync + rename), mode 0600. */
int nnp__write_file_atomic(const char *path, const void *data, size_t n);
/* The byte order mark some tools start a UTF-8 text file with (Excel, Python's
 * "utf-8-sig"); readers of text skip it. */
#define NNP_UTF8_BOM     "\xEF\xBB\xBF"
#define NNP_UTF8_BOM_LEN 3u
/* Reads a whole text file (at most max_bytes) into a new NUL-terminated buffer, without a
 * leading UTF-8 byte order mark (NNP_UTF8_BOM). */
int nnp__read_file(const char *path, size_t max_bytes, char **out, size_t *out_len);
/* Bytes free for unprivileged users on the file system holding path, or 0 on error. */
uint64_t nnp__fs_free_bytes(const char *path);
/* Returns true if s contains a character the seeds forbid in an output path
 * (\n \f \r \b \t \v \x7f) - PROFILING_OPTIONS "output" rules. */
bool nnp__path_has_forbidden_char(const char *s);

/* ---- output files (outfile.c): created in a checked folder under a random temporary
 * name with O_CREAT|O_EXCL|O_NOFOLLOW (mode 0600), renamed into place on commit, so a
 * reader never sees half a file, a re-run replaces outputs atomically, and a link planted
 * by another user is never written through ---- */
typedef struct nnp_outfile {
    int fd;
    int dirfd;               /* the checked output folder */
    char path[NNP_PATH_MAX]; /* dir/name, for messages */
    char name[NNP_NAME_MAX];
    char tmp_name[NNP_NAME_MAX + 32];
} nnp_outfile_t;

/* Opens dir/name for writing (dir must exist and pass nnp__outdir_check). Returns NNP_OK
 * or an error with a message naming the file or folder. */
int nnp__out_open(nnp_outfile_t *f, const char *dir, const char *name);
/* Closes f; when write_rc is NNP_OK renames it into place, else removes it. Returns
 * write_rc, or the close/rename error. */
int nnp__out_commit(nnp_outfile_t *f, int write_rc);
/* Refuses an output folder (open as dirfd, named dir in messages) owned by another user,
 * or writable by others without the sticky bit: NNP_EPERM with a message; else NNP_OK. */
int nnp__outdir_check(int dirfd, const char *dir);
/* Opens dir (following links) as a directory and checks it (nnp__outdir_check). *dirfd is
 * the descriptor to close, -1 on error. */
int nnp__outdir_open(const char *dir, int *dirfd);
/* Creates a new empty file ".<name>.<random>.tmp" in dirfd with O_CREAT|O_EXCL|O_NOFOLLOW,
 * mode 0600; its name goes to tmp_name (cap bytes). Returns the open descriptor, or a
 * negative NNP_E* code with a message. */
int nnp__tmp_create(int dirfd, const char *name, char *tmp_name, size_t cap);

/* ---- number formatting without printf (numfmt.c; hot in JSON/CSV writers) ---- */
/* Longest text the nnp__fmt_* functions below write, NUL included. */
#define NNP_FMT_NUM_MAX 48
/* Writes the decimal digits of v to buf (at least 21 bytes); returns the length. No NUL. */
size_t nnp__fmt_u64(char *buf, uint64_t v);
size_t nnp__fmt_i64(char *buf, int64_t v);
/* v / div with exactly `decimals` digits after the point ("-12.345"), from integers, so
 * no digit is lost to a double. div must be 10^decimals (decimals 1..18). buf holds at
 * least NNP_FMT_NUM_MAX bytes; the text is NUL-terminated; returns its length. */
size_t nnp__fmt_fixed(char *buf, int64_t v, uint64_t div, int decimals);
/* "whole.mmm" for milli < 1000 (3 decimals), NUL-terminated; buf holds NNP_FMT_NUM_MAX
 * bytes; returns the length. */
size_t nnp__fmt_dec3(char *buf, uint64_t whole, uint32_t milli);
/* A whole double below 10^15 in magnitude (not -0) as %.15g prints it: its integer digits
 * (counters, sizes: most doubles of the outputs). Returns the length (buf holds
 * NNP_FMT_NUM_MAX), 0 when v is not such a number (the caller prints it). No NUL. */
size_t nnp__fmt_whole_double(char *buf, double v);
/* A double that is a decimal of at most 6 decimals and 15 digits, from 1e-4 up to 10^15 in
 * magnitude (42.5, 0.125), as %.15g prints it (and so as the shortest text that reads back
 * as v). Returns the length (buf holds NNP_FMT_NUM_MAX, NUL-terminated), 0 when v is not
 * such a number (the caller prints it). */
size_t nnp__fmt_short_double(char *buf, double v);
/* ns as us with exactly 3 decimals ("1234.567"), from integers so no ns is lost to a
 * double. Returns buf (cap >= NNP_FMT_NUM_MAX). */
const char *nnp__fmt_ns_as_us(char *buf, size_t cap, int64_t ns);

/* ---- short copies and byte scans of the text writers (CSV, JSON): per field ---- */
/* Copies n bytes between regions that do not overlap, without a call for the short
 * fields most rows are made of: two overlapping fixed-size moves cover every length of a
 * size class, reading and writing only [s, s + n) and [d, d + n). */
static inline void nnp__copy_short(char *d, const char *s, size_t n)
{
    if (n >= 8 && n <= 16) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else if (n > 0 && n < 4) {
        d[0] = s[0];
        d[n / 2] = s[n / 2];
        d[n - 1] = s[n - 1];
    } else if (n > 16 && n <= 32) {
        char a[16], b[16];
        memcpy(a, s, 16);
        memcpy(b, s + n - 16, 16);
        memcpy(d, a, 16);
        memcpy(d + n - 16, b, 16);
    } else if (n > 32 && n <= 64) { /* names: "Default/network/layer0/Conv2D-op12" */
        char a[32], b[32];
        memcpy(a, s, 32);
        memcpy(b, s + n - 32, 32);
        memcpy(d, a, 32);
        memcpy(d + n - 32, b, 32);
    } else if (n > 64) {
        memcpy(d, s, n);
    }
}

/* Eight bytes at a time ("Bit Twiddling Hacks": haszero, hasless): each is nonzero exactly
 * when some byte of the word x matches. */
#define NNP_SWAR_ONES  0x0101010101010101ull
#define NNP_SWAR_HIGHS 0x8080808080808080ull
/* Some byte of x equals c. */
static inline uint64_t nnp__swar_eq(uint64_t x, unsigned char c)
{
    uint64_t y = x ^ (NNP_SWAR_ONES * c);
    return (y - NNP_SWAR_ONES) & ~y & NNP_SWAR_HIGHS;
}
/* Some byte of x is below c (c <= 128). */
static inline uint64_t nnp__swar_lt(uint64_t x, unsigned char c)
{
    return (x - NNP_SWAR_ONES * c) & ~x & NNP_SWAR_HIGHS;
}

/* ---- exact decimal times ---- */
/* Parses a decimal time ("123.456", blanks around, optional sign) into integer ns, where
 * frac_digits is the number of decimals down to one ns (3 for us, 6 for ms). Digit by digit,
 * so 16-digit timestamps keep every ns (a double would not); digits past the ns round half
 * up on the first dropped one. False when s is not a number or overflows int64 ns. */
bool nnp__parse_decimal_ns(const char *s, int frac_digits, int64_t *out);

/* ---- bounded string copy: always terminates; returns false when truncated ---- */
bool nnp__strlcpy(char *dst, const char *src, size_t cap);
/* Whether s contains needle, ASCII letters compared without case ("NCCL" in "ncclKernel"). */
bool nnp__contains_ci(const char *s, const char *needle);
/* The fields of s (sep between or after them) that are not empty and that keep(field,
 * length) accepts (NULL: every one), out_sep between them, into out, which has room for
 * strlen(s) + 1 bytes; returns the length written (a stack's frames, "a;b;" -> "a\nb"). */
size_t nnp__fields_rejoin(const char *s, char sep, char out_sep,
                          bool (*keep)(const char *field, size_t len), char *out);

#endif /* NNP_UTIL_H */
