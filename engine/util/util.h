/*
 * util.h - small shared helpers: a growable byte buffer, time stamps in the
 * formats packetfs publishes, SHA-256 (OpenSSL libcrypto), string lists,
 * the daemon's log (log.c), ed25519 signing and DSSE envelopes (sign.c),
 * and a least-recently-used table (lru.h, included here).
 *
 * Everything here is thread-safe (no shared state; an lru table is locked
 * by its owner). Functions that allocate
 * return -ENOMEM on allocation failure and leave their outputs untouched.
 */
#ifndef PACKETFS_UTIL_H
#define PACKETFS_UTIL_H

#include <assert.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lru.h"

/* A growable byte buffer; data is always NUL-terminated (not counted in len)
 * once anything was appended. Zero-initialise or buf_init() before use. */
struct buf {
	char *data;
	size_t len;
	size_t cap;
};

void buf_init(struct buf *b);
/* assert()s the bounds every buffer keeps: len < cap (room for the NUL)
 * once it holds storage, len == cap == 0 before. (Code that shortens a
 * buffer by setting len leaves the NUL to the next append.) */
#define BUF_ASSERT(b) \
	assert((b)->data ? (b)->len < (b)->cap : (b)->len == 0 && (b)->cap == 0)
/* Appends len bytes. Returns 0 or -ENOMEM. */
int buf_append(struct buf *b, const void *data, size_t len);
int buf_puts(struct buf *b, const char *s);
/* printf-style append. Returns 0 or -ENOMEM. */
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Returns the data (caller frees; never NULL: an empty buffer gives "") and
 * resets b to empty, or NULL on -ENOMEM. */
char *buf_steal(struct buf *b);
void buf_free(struct buf *b);

/*
 * Makes room for one more element in an array of n elements, each size
 * bytes: arrayp points to the array's pointer, cap to its capacity in
 * elements. When n == *cap the array is reallocated to twice *cap elements
 * (first when *cap is 0) and *arrayp and *cap are updated. Returns 0, or
 * -ENOMEM with both unchanged. Any thread; the array is the caller's.
 */
int util_grow(void *arrayp, size_t *cap, size_t n, size_t size, size_t first);

/* Wall clock, nanoseconds since the Unix epoch. */
int64_t util_now_ns(void);
/* pthread_cond_timedwait(3) on cond for up to ms milliseconds of the
 * realtime clock; m held by the caller (let go while it waits, as there).
 * 1 when the time ran out, 0 when woken (or woken spuriously). */
int util_cond_wait_ms(pthread_cond_t *cond, pthread_mutex_t *m, long ms);
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
/* Reads fd to its end (read(2) retried on EINTR), appending to out, which
 * then holds at most max bytes (-EFBIG beyond). 0 or -errno (-ENOMEM); out
 * keeps what was read either way and the caller frees it. fd stays open. */
int util_read_fd(int fd, size_t max, struct buf *out);
/* util_read_fd of the file at path; also open(2)'s errors. */
int util_read_path(const char *path, size_t max, struct buf *out);
/* pread(2) of at most len bytes of fd at off into data, again when a
 * signal interrupts it. The bytes read (0 at the end of the file) or
 * -errno. */
ssize_t util_pread(int fd, void *data, size_t len, uint64_t off);
/* Writes all len bytes at data to fd (short writes continued, EINTR
 * retried). 0 or -errno. */
int util_write_all(int fd, const void *data, size_t len);
/* Writes data to path via path.tmp + fsync + rename. Returns 0 or -errno. */
int util_write_file(const char *path, const void *data, size_t len);
/* The process (thread group id) of thread or process pid, read from
 * /proc/PID/status (proc(5), "Tgid:"); 0 when pid is gone or not a thread.
 * Any thread. */
pid_t util_tgid(pid_t pid);
/* mkdir -p; returns 0 or -errno. */
int util_mkdirs(const char *path, int mode);
/* rm -rf path: removes it and, when a directory, everything below it,
 * following no symlink and crossing no mount. 0, or the -errno of the
 * first entry it could not remove (it goes on with the others). */
int util_remove_tree(const char *path);

/* The length (1-4) of the well-formed UTF-8 sequence (RFC 3629) at s, of
 * which at most n (>= 1) bytes may be read, or 0 when the bytes there are
 * none: overlong forms, surrogates and code points past U+10FFFF are not
 * well-formed. Stores the code point in *cp unless cp is NULL. Any thread. */
size_t util_utf8_char(const unsigned char *s, size_t n, uint32_t *cp);

/*
 * Invariants (check.c). The comments of packetfs name the lock that guards
 * a field ("protected by X"), the lock a function expects ("files_lock
 * held") and the thread it runs on ("loop thread only"); assert()s check
 * them where they matter, as SQLite's assert(sqlite3_mutex_held(...)).
 * They are on in the default (debugoptimized) build, in debug builds and
 * in the test suite's builds (meson's b_ndebug=if-release; tests/run.sh
 * sets b_ndebug=false); a release build (--buildtype=release, or
 * -Db_ndebug=true) compiles them out, and these helpers with them. A
 * failed assert aborts the daemon with the file, line and expression.
 */
/* 1 when the calling thread holds m (glibc: the mutex's recorded owner;
 * elsewhere: when any thread holds it), else 0. Any thread; for assert(). */
int util_mutex_held(pthread_mutex_t *m);
/* The thread that owns a resource while it runs (the pipeline's loop
 * thread): that thread enters it when it starts and leaves it when it
 * ends. Zero-initialise: nobody owns it. */
struct util_owner {
	pthread_t thread; /* written by the owner before live is set */
	int live;         /* atomic: the owner thread runs */
};
/* The calling thread owns o from now on / no longer: the owner thread. */
void util_owner_enter(struct util_owner *o);
void util_owner_leave(struct util_owner *o);
/* 1 when the calling thread is o's owner and runs; any thread. */
int util_owner_is_self(const struct util_owner *o);
/* 1 when the calling thread is o's owner, or when no owner runs (before
 * it starts and after it ends, whoever holds the resource may use it);
 * any thread. */
int util_owner_here(const struct util_owner *o);

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

/*
 * Signing (sign.c): ed25519 keys in PEM files and DSSE envelopes (the Dead
 * Simple Signing Envelope, v1), through OpenSSL's libcrypto. A key id is
 * the SHA-256 of the public key's DER SubjectPublicKeyInfo, 64 lowercase
 * hex digits. Any thread.
 */
/* Appends the base64 (standard alphabet, padded) of len bytes to out.
 * 0 or -ENOMEM. */
int util_base64_encode(const void *data, size_t len, struct buf *out);
/* Appends the bytes that the base64 text s[0..len) stands for to out: the
 * standard or the URL alphabet, padded or not. 0, -EINVAL (any other
 * character, a misplaced '=', a length or trailing bits no encoder writes;
 * out may hold part of it) or -ENOMEM. */
int util_base64_decode(const char *s, size_t len, struct buf *out);
/* Makes a new ed25519 key pair: the private key (PKCS#8 PEM, mode 0600) at
 * priv_path, which must not exist, and its public key (PEM, mode 0644) at
 * pub_path, replacing what is there. Neither name ever shows a partial
 * file. 0, -EEXIST (priv_path exists: nothing changed), -ENOMEM or the
 * negative errno of a file operation (nothing left behind). */
int sign_key_make(const char *priv_path, const char *pub_path);
/* Appends the public key (PEM) of the private key at priv_path to pem.
 * 0, -ENOENT (no such file) or fopen's other errors, -EINVAL (not an
 * ed25519 private key in PEM), -ENOMEM. */
int sign_key_public(const char *priv_path, struct buf *pem);
/* The key id of the ed25519 public key in PEM pem[0..len) into hex[65].
 * 0, -EINVAL (no such key), -ENOMEM. */
int sign_keyid(const char *pem, size_t len, char hex[65]);
/* Appends DSSE's pre-authentication encoding of payload (len bytes) of
 * type to out: "DSSEv1 LEN(type) type LEN(payload) payload". 0 or -ENOMEM. */
int dsse_pae(const char *type, const void *payload, size_t len, struct buf *out);
/* Appends the envelope of payload (len bytes) of payloadType type, signed
 * with the private key at priv_path (one signature, with its key id), to
 * out as indented JSON ending in a newline. 0, sign_key_public's errors. */
int dsse_sign(const char *priv_path, const char *type, const void *payload, size_t len,
	      struct buf *out);
/*
 * Checks the envelope env[0..len) against the ed25519 public key in PEM
 * pub_pem[0..publen): 0 when one of its signatures verifies over the PAE
 * of its payloadType and payload; then *type gets the payloadType (caller
 * frees) and payload the decoded payload (appended). -EINVAL: not an
 * envelope (not a JSON object, a member missing or of the wrong type,
 * base64 that does not decode) or not such a key; -EBADMSG: no signature
 * verifies with that key (a changed byte, another key); -ENOMEM. why
 * (whylen bytes) gets the reason of a refusal.
 */
int dsse_verify(const char *env, size_t len, const char *pub_pem, size_t publen, char **type,
		struct buf *payload, char *why, size_t whylen);

#endif
