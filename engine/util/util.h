/*
 * util.h - small shared helpers: a growable byte buffer, time stamps in the
 * formats packetfs publishes, SHA-256 (OpenSSL libcrypto), and string lists.
 *
 * Everything here is thread-safe (no shared state). Functions that allocate
 * return -ENOMEM on allocation failure and leave their outputs untouched.
 */
#ifndef PACKETFS_UTIL_H
#define PACKETFS_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* A growable byte buffer; data is always NUL-terminated (not counted in len)
 * once anything was appended. Zero-initialise or buf_init() before use. */
struct buf {
	char *data;
	size_t len;
	size_t cap;
};

void buf_init(struct buf *b);
/* Appends len bytes. Returns 0 or -ENOMEM. */
int buf_append(struct buf *b, const void *data, size_t len);
int buf_puts(struct buf *b, const char *s);
/* printf-style append. Returns 0 or -ENOMEM. */
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Returns the data (caller frees; never NULL: an empty buffer gives "") and
 * resets b to empty, or NULL on -ENOMEM. */
char *buf_steal(struct buf *b);
void buf_free(struct buf *b);

/* Wall clock, nanoseconds since the Unix epoch. */
int64_t util_now_ns(void);
/* RFC 3339 UTC with seconds, e.g. "2026-11-29T16:02:11Z", into out[32]. */
void util_rfc3339(int64_t ns, char out[32]);
/* The same with ':' replaced by '-' for file names: "2026-11-29T16-02-11Z". */
void util_stamp_file(int64_t ns, char out[32]);

/* SHA-256 of len bytes as 64 lowercase hex digits + NUL into hex[65]. */
void util_sha256_hex(const void *data, size_t len, char hex[65]);
/* Incremental SHA-256 (wraps EVP_MD_CTX); sha_new returns NULL on ENOMEM. */
struct util_sha;
struct util_sha *util_sha_new(void);
void util_sha_update(struct util_sha *s, const void *data, size_t len);
/* Writes the digest and frees s. */
void util_sha_final(struct util_sha *s, char hex[65]);

/* NULL-terminated string vectors (argv, env, name lists). */
void strv_free(char **v);
size_t strv_len(char *const *v);
/* Appends a copy of s; *v may be NULL. Returns 0 or -ENOMEM. */
int strv_push(char ***v, const char *s);
/* Copy of v (NULL gives NULL). */
char **strv_dup(char *const *v);
/* Joins with sep, shell-quoting words that need it when quote != 0; caller frees. */
char *strv_join(char *const *v, const char *sep, int quote);

/* Reads a whole file into *out (NUL-terminated, caller frees), at most max
 * bytes (-EFBIG beyond). Returns 0 or a negative errno. */
int util_read_file(const char *path, size_t max, char **out, size_t *len);
/* Writes data to path via path.tmp + fsync + rename. Returns 0 or -errno. */
int util_write_file(const char *path, const void *data, size_t len);
/* mkdir -p; returns 0 or -errno. */
int util_mkdirs(const char *path, int mode);

/*
 * The daemon's log (log.c). Lines go to stderr as "packetfs: MESSAGE" until
 * util_log_to_syslog() or util_log_to_file() says otherwise: syslog(3) under
 * the ident "packetfs" (LOG_PID, LOG_DAEMON), or a file opened for append,
 * one line per message: "RFC3339-TIME packetfs[PID]: LEVEL: MESSAGE".
 * Choose the sink once, from the main thread, before other threads log;
 * util_log may then be called from any thread (one write(2) per line).
 */
/* Opens path (O_APPEND|O_CREAT, mode 0640, close-on-exec) as the log.
 * Returns 0 or -errno (the sink is unchanged). */
int util_log_to_file(const char *path);
/* Logs to syslog from now on. */
void util_log_to_syslog(void);
/* Logs one message (no trailing newline needed) at a syslog(3) priority
 * (LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO). */
void util_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
