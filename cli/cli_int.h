/*
 * cli_int.h - what the files of the command line share (cli.c: the table,
 * help and these helpers; cli_follow.c: follow; cli_top.c: top;
 * cli_mount.c: mount, umount, new; cli_mtab.c: the mount table;
 * cli_status.c: status; cli_store.c: init, log, check; cli_carry.c:
 * export, import; cli_record.c: record; cli_attest.c: attest, verify). Not for the rest
 * of fs/: cli.h is the contract.
 *
 * Threads: the command line is single-threaded; every function here runs
 * on the main thread (the option parse uses getopt's global state).
 */
#ifndef PACKETFS_CLI_INT_H
#define PACKETFS_CLI_INT_H

#include <getopt.h>
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

/* Ends every command's table of long options: --help (-h), which
 * cli_next_option answers, then the terminator. */
#define CLI_OPTIONS_END { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 }

/* What cli_next_option returns when the command is to end at once. */
#define CLI_OPT_EXIT (-2)

/*
 * The next option of cmd's arguments argv[0..argc-1]: getopt_long with
 * shortopts (starting with ':', holding 'h') and longopts (ending with
 * CLI_OPTIONS_END); cli_opts_reset starts the parse. --help prints cmd's
 * help, and an option getopt does not know, or one missing its value, is
 * reported as a usage error: both return CLI_OPT_EXIT with *status set to
 * the exit status (0 after the help, 2 after the error). Otherwise returns
 * the option's character (optarg: its value), or -1 when the options end
 * (optind: the first operand).
 */
int cli_next_option(const char *cmd, int argc, char **argv, const char *shortopts,
		    const struct option *longopts, int *status);

/* Parses the options of cmd when --help is its only one (starting the
 * parse itself). Returns -1 when the command goes on (optind: the first
 * operand), else the exit status (0 after the help, 2 after a usage error). */
int cli_no_options(const char *cmd, int argc, char **argv);

/* Checks that cmd got from min to max operands (argv[optind..argc-1]).
 * Returns 0 when it did, else 2 after reporting the usage error missing
 * (what lacks, e.g. "missing STORE") when there are fewer, "too many
 * arguments" when there are more. */
int cli_operands(const char *cmd, int argc, int min, int max, const char *missing);

/* Prints the help of cmd on stdout; returns 0. */
int cli_show_help(const char *cmd);

/* The engine's message err, or "what: strerror(-r)" written into buf (len
 * bytes) when err is empty. The result is err or buf. */
const char *cli_why(const char *err, int r, const char *what, char *buf, size_t len);

/* The CLI process as the engine's caller (its uid, gid and pid). */
struct pfs_caller cli_caller(void);

/* read(2) of at most len bytes of fd into data, again when a signal
 * interrupts it. Returns the bytes read (0 at the end of the file) or
 * -errno. */
ssize_t cli_read_some(int fd, void *data, size_t len);

/* Reads the local file src, or stdin for "-", to its end, appending to
 * out (util_read_fd, at most MAX_READ bytes). 0 or -errno; the caller
 * frees out. */
int cli_read_input(const char *src, struct buf *out);

/* Writes data (len bytes) to path as a new or truncated file with mode;
 * close(2)'s result counts (on the mount, it is when the content is
 * committed). Returns 0 or -errno. */
int cli_write_file(const char *path, const char *data, size_t len, mode_t mode);

/* Reads the whole engine file at path (a packet path, "/fix-1/status"),
 * appending to out; the caller frees out. Returns 0 or -errno. */
int cli_engine_read_all(struct engine *e, const char *path, struct buf *out);

/* Opens target read-only into *e for the CLI's readers (the caller closes it
 * with engine_close): a store directory, or a packetfs mount point (live or
 * with its daemon gone), which stands for the store the mount table names
 * as its source. Returns 0, or 1 after reporting as cmd. */
int cli_open_readonly(const char *cmd, const char *target, struct engine **e);

/* Whether dir is the root of a packetfs mount: 1 or 0. */
int cli_is_mount(const char *dir);

/* --- the mount table (cli_mtab.c) --- */

/* The absolute path of path into out (PATH_MAX bytes): realpath(3), or for
 * a dead mount point (ENOTCONN) the real path of its parent and its name.
 * Returns 0 or -errno. */
int cli_mtab_path(const char *path, char *out);

/* Finds the packetfs mount on top at dir (an absolute path, as
 * cli_mtab_path makes it) in the mount table and writes its source, the
 * store, into store (size bytes). Returns 0, -ENOENT when dir is no
 * packetfs mount point, or another -errno. */
int cli_mtab_find(const char *dir, char *store, size_t size);

/* Whether dir (absolute) is a packetfs mount whose daemon is gone (its
 * mount point answers ENOTCONN): 1, with its store written into store
 * (size bytes), or 0. */
int cli_mtab_dead(const char *dir, char *store, size_t size);

/* How long fusermount3 may run (engine_run_program), in milliseconds. */
#define CLI_FUSERMOUNT_TIMEOUT_MS 30000

/* Lazily unmounts dir (umount2 MNT_DETACH; fusermount3 -u -z when not
 * privileged, killed past CLI_FUSERMOUNT_TIMEOUT_MS). Returns 0, -ETIMEDOUT
 * or another negative errno (-EPERM: fusermount3 failed). */
int cli_mtab_detach(const char *dir);

#endif
