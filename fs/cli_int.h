/*
 * cli_int.h - what the files of the command line share (cli.c: the table,
 * help and these helpers; cli_mount.c: mount, umount, new; cli_status.c:
 * status; cli_store.c: init, log, check, export, import). Not for the rest
 * of fs/: cli.h is the contract.
 *
 * Threads: the command line is single-threaded; every function here runs
 * on the main thread (the option parse uses getopt's global state).
 */
#ifndef PACKETFS_CLI_INT_H
#define PACKETFS_CLI_INT_H

#include <stddef.h>
#include <sys/types.h>

#include "engine.h"

/* What an item name must match, for error messages. */
#define NAME_RULE "use [a-z0-9][a-z0-9._-]{0,63}"
/* The most the CLI reads of one file (a brief, a pipeline, a view). */
#define MAX_READ (256u << 20)

/* Prints "packetfs: cmd: ..." on stderr and returns 1. */
int cli_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints "packetfs: cmd: why" and the usage line of cmd; returns 2. */
int cli_usage_error(const char *cmd, const char *why);

/* Reports getopt's complaint about argv[optind - 1] (c: what getopt_long
 * returned, ':' or '?') as a usage error of cmd; returns 2. */
int cli_bad_option(const char *cmd, char **argv, int c);

/* Starts a getopt_long parse of a command's arguments. */
void cli_opts_reset(void);

/* Prints the help of cmd on stdout; returns 0. */
int cli_show_help(const char *cmd);

/* The engine's message err, or "what: strerror(-r)" written into buf (len
 * bytes) when err is empty. The result is err or buf. */
const char *cli_why(const char *err, int r, const char *what, char *buf, size_t len);

/* The CLI process as the engine's caller (its uid, gid and pid). */
struct pfs_caller cli_caller(void);

/* Reads fd to its end, appending to out (at most MAX_READ bytes in all).
 * Returns 0 or -errno (-EFBIG past MAX_READ, -ENOMEM); out keeps what was
 * read either way and the caller frees it. fd stays open. */
int cli_read_fd(int fd, struct buf *out);

/* Writes data (len bytes) to path as a new or truncated file with mode;
 * close(2)'s result counts (on the mount, it is when the content is
 * committed). Returns 0 or -errno. */
int cli_write_file(const char *path, const char *data, size_t len, mode_t mode);

/* Reads the whole engine file at path (a packet path, "/fix-1/status"),
 * appending to out; the caller frees out. Returns 0 or -errno. */
int cli_engine_read_all(struct engine *e, const char *path, struct buf *out);

/* Opens store read-only into *e for the CLI's readers (the caller closes it
 * with engine_close). Returns 0, or 1 after reporting as cmd. */
int cli_open_readonly(const char *cmd, const char *store, struct engine **e);

/* Whether dir is the root of a packetfs mount: 1 or 0. */
int cli_is_mount(const char *dir);

#endif
