/*
 * cli.c - the commands of the packetfs command line: their table, with
 * the usage and help texts (cli.h), and the helpers they share (cli_int.h:
 * errors, option parsing, reading and writing whole files).
 *
 * Each command parses its own options (getopt_long, options and operands
 * in any order), then works either on a store through the engine or on a
 * mount through ordinary file operations:
 *
 *   init, log, check, export   the store, through the engine (log, check
 *                              and export open it read-only, so they also
 *                              work while it is mounted; given a mount
 *                              point, they open the store it shows)
 *   import, gc                 the store read-write: refused while mounted
 *   mount                      fs_mount() (fs.c)
 *   umount                     fusermount3 -u (a dead mount: umount2
 *                              MNT_DETACH, cli_mtab.c)
 *   new                        the mount: mkdir and a write of brief.md
 *   status                     either: a mount point is read through the
 *                              mount, a store through a read-only engine
 *   record                     the mount: the item's validation/record and
 *                              the run's log (cli_record.c)
 *   attest, verify             the store read-only; verify needs none
 *                              (cli_attest.c)
 *
 * The commands live in files of their own:
 *
 *   cli_store.c   init, log, check, gc
 *   cli_carry.c   export, import
 *   cli_mount.c   mount, umount, new
 *   cli_mtab.c    the mount table (libmount), dead mounts
 *   cli_status.c  status
 *   cli_record.c  record
 *   cli_top.c     top (with top_model.c, top_render.c, top_watch.c)
 *   cli_attest.c  attest, verify
 *
 * Errors go to stderr as "packetfs: <command>: <why>"; usage errors also
 * print the command's usage line and exit 2.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_int.h"
#include "engine.h"

int cli_fail(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "packetfs: %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

int cli_usage_error(const char *cmd, const char *why)
{
	const struct cli_command *c = cli_find(cmd);

	fprintf(stderr, "packetfs: %s: %s\n", cmd, why);
	if (c)
		fprintf(stderr, "usage: packetfs %s %s\n", c->name, c->usage);
	return 2;
}

int cli_bad_option(const char *cmd, char **argv, int c)
{
	char why[256];

	if (c == ':')
		snprintf(why, sizeof(why), "option '%s' needs a value", argv[optind - 1]);
	else if (optopt)
		snprintf(why, sizeof(why), "unknown option '-%c'", optopt);
	else
		snprintf(why, sizeof(why), "unknown option '%s'", argv[optind - 1]);
	return cli_usage_error(cmd, why);
}

void cli_opts_reset(void)
{
	optind = 0;
	opterr = 0;
}

int cli_next_option(const char *cmd, int argc, char **argv, const char *shortopts,
		    const struct option *longopts, int *status)
{
	int c = getopt_long(argc, argv, shortopts, longopts, NULL);

	if (c == 'h')
		*status = cli_show_help(cmd);
	else if (c == ':' || c == '?')
		*status = cli_bad_option(cmd, argv, c);
	else
		return c;
	return CLI_OPT_EXIT;
}

int cli_no_options(const char *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_OPTIONS_END,
	};
	int status = -1;

	/* With --help alone, the first option ends the command either way. */
	cli_opts_reset();
	cli_next_option(cmd, argc, argv, ":h", longopts, &status);
	return status;
}

int cli_operands(const char *cmd, int argc, int min, int max, const char *missing)
{
	if (argc - optind < min)
		return cli_usage_error(cmd, missing);
	if (argc - optind > max)
		return cli_usage_error(cmd, "too many arguments");
	return 0;
}

int cli_show_help(const char *cmd)
{
	cli_print_help(stdout, cli_find(cmd));
	return 0;
}

const char *cli_why(const char *err, int r, const char *what, char *buf, size_t len)
{
	if (err[0])
		return err;
	snprintf(buf, len, "%s: %s", what, strerror(-r));
	return buf;
}

struct pfs_caller cli_caller(void)
{
	struct pfs_caller who = { getuid(), getgid(), getpid() };

	return who;
}

ssize_t cli_read_some(int fd, void *data, size_t len)
{
	ssize_t n;

	do
		n = read(fd, data, len);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

int cli_read_input(const char *src, struct buf *out)
{
	return strcmp(src, "-") == 0 ? util_read_fd(STDIN_FILENO, MAX_READ, out)
				     : util_read_path(src, MAX_READ, out);
}

int cli_write_file(const char *path, const char *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	int r;

	if (fd < 0)
		return -errno;
	r = util_write_all(fd, data, len);
	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}

int cli_engine_read_all(struct engine *e, const char *path, struct buf *out)
{
	struct pfs_caller who = cli_caller();
	struct pfs_file *f;
	char chunk[65536];
	uint64_t off = 0;
	int r = engine_file_open(e, path, O_RDONLY, 0, &who, &f);

	if (r < 0)
		return r;
	for (;;) {
		ssize_t n = engine_file_read(f, chunk, sizeof(chunk), off);

		if (n <= 0) {
			r = (int)n;
			break;
		}
		if (buf_append(out, chunk, (size_t)n) < 0) {
			r = -ENOMEM;
			break;
		}
		off += (uint64_t)n;
	}
	engine_file_release(f);
	return r;
}

int cli_open_readonly(const char *cmd, const char *target, struct engine **e)
{
	struct engine_options eo = { target, NULL, 1 };
	char err[1024] = "", tmp[PATH_MAX + 64], path[PATH_MAX], store[PATH_MAX];
	int r;

	/* A packetfs mount point (live or dead) names the store it shows. */
	if (cli_mtab_path(target, path) == 0 && cli_mtab_find(path, store, sizeof(store)) == 0 &&
	    store[0] == '/')
		eo.store = store;
	r = engine_open(&eo, e, err, sizeof(err));
	if (r < 0)
		return cli_fail(cmd, "%s", cli_why(err, r, eo.store, tmp, sizeof(tmp)));
	return 0;
}

int cli_is_mount(const char *dir)
{
	char path[PATH_MAX];
	struct stat st;

	if (snprintf(path, sizeof(path), "%s/.packetfs/version", dir) >= (int)sizeof(path))
		return 0;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* --- the table --------------------------------------------------------- */

const struct cli_command cli_commands[] = {
	{ "init", cli_init, "STORE --repo REPO [--pipeline FILE]",
	  "create a store for a git repository",
	  "Creates the directory STORE holding the SQLite store of packets and the\n"
	  "worktrees of items, for the git repository REPO (bare or not).\n"
	  "\n"
	  "  --repo REPO        the git repository items branch from (required)\n"
	  "  --pipeline FILE    the pipeline configuration (JSON); default: the\n"
	  "                     built-in pipeline for REPO\n"
	  "\n"
	  "Also makes the store's ed25519 signing key pair (STORE/signing.key, mode\n"
	  "0600; STORE/signing.pub) and prints the public key (PEM), which `packetfs\n"
	  "verify --key` takes.\n" },
	{ "mount", cli_mount, "STORE MOUNTPOINT [-f] [-o OPTIONS]", "mount a store",
	  "Mounts the store at MOUNTPOINT and runs its pipeline in the background.\n"
	  "Returns once the mount answers; the daemon lives until `packetfs umount`.\n"
	  "A mount at MOUNTPOINT whose daemon died is replaced. `packetfs STORE\n"
	  "MOUNTPOINT -o OPTIONS` is the same (the form mount.fuse3 runs for\n"
	  "`mount -t fuse.packetfs` and fstab lines).\n"
	  "\n"
	  "  -f, --foreground   stay in the foreground (stop with Ctrl-C or SIGTERM)\n"
	  "  -o OPTIONS         mount options, comma-separated (e.g. allow_other,nodev;\n"
	  "                     see packetfs(1))\n" },
	{ "umount", cli_umount, "MOUNTPOINT", "unmount a store",
	  "Unmounts MOUNTPOINT (fusermount3 -u); the daemon then stops, recording\n"
	  "whatever was still running as interrupted. A mount whose daemon died is\n"
	  "unmounted lazily.\n" },
	{ "new", cli_new, "MOUNTPOINT NAME [--brief FILE|-]", "create a work item",
	  "Creates the item NAME on the mount (like mkdir MOUNTPOINT/NAME) and\n"
	  "writes its brief.md.\n"
	  "\n"
	  "  --brief FILE       the request, from FILE, or from stdin for '-'\n" },
	{ "status", cli_status, "STORE|MOUNTPOINT [ITEM] [--json]", "show items and their state",
	  "Shows the status of ITEM, or a table of the items: state, stage, what\n"
	  "runs and for how long, evidence and the last error, fitted to the\n"
	  "terminal's width ($COLUMNS, else 80, when stdout is no terminal). Reads\n"
	  "a mount point through the mount, or a store directly.\n"
	  "\n"
	  "  --json             the status as JSON (an array without ITEM)\n" },
	{ "log", cli_log, "STORE|MOUNTPOINT ITEM [PATH]", "revisions and events of an item",
	  "Lists the revisions of ITEM's documents (or of PATH only), then the\n"
	  "item's events. A mount point stands for the store it shows.\n" },
	{ "check", cli_check, "STORE|MOUNTPOINT", "check the integrity of a store",
	  "Checks the SQLite database, every log against its checksum and every\n"
	  "registry line against the runs recorded. Exits 1 if problems are found.\n"
	  "A mount point stands for the store it shows.\n" },
	{ "gc", cli_gc, "STORE [--older-than DAYS]", "reclaim space under the retention rules",
	  "Deletes the history of documents deleted more than DAYS days ago\n"
	  "(default 30; 0: every deleted document) and of temporary files that are\n"
	  "no document now (.NAME.swp, 4913, #NAME#, NAME~, sedXXXXXX,\n"
	  "NAME.tmp.PID.HEX), whatever their age, then compacts the database\n"
	  "(WAL checkpoint, VACUUM) and prints what it reclaimed. Documents, runs,\n"
	  "logs and the registry are never touched. The store must not be\n"
	  "mounted.\n" },
	{ "export", cli_export, "STORE|MOUNTPOINT ITEM DIR", "copy a packet out as plain files",
	  "Copies every file of ITEM (live or archived) into DIR, which must be\n"
	  "new or empty; the worktree link and .history are left out. Its logs,\n"
	  "registry and branch (a git bundle) go with it, with a manifest\n"
	  "(.packetfs/export.json). All or nothing: written beside DIR, renamed\n"
	  "into place when whole. A mount point stands for the store it shows.\n" },
	{ "import", cli_import, "STORE DIR [NAME]", "make an item of an export",
	  "Creates the item NAME (default: the item's name in the export, else\n"
	  "the last component of DIR) of the export DIR: its branch, runs, logs\n"
	  "and registry, checked first, then its files, and prints what it\n"
	  "imported. A folder that is not a whole export (no manifest, a missing\n"
	  "or empty bundle, hashes that do not match) is refused. The store must\n"
	  "not be mounted: on a mount, use `packetfs new` and cp instead.\n" },
	{ "record", cli_record, "[-C ITEM_DIR] RECIPE [--gpus N] [--timeout S] -- COMMAND [ARG...]",
	  "run a command as a recorded run of a recipe",
	  "Asks the engine to run COMMAND as a run of the catalog recipe RECIPE for\n"
	  "the item, exactly as it runs the recipe itself (cwd the item's worktree,\n"
	  "its own process group, GPUs from the pool, the recipe's timeout, the\n"
	  "executor, a log and a registry line with source engine, the command and\n"
	  "recorded_by). Prints the command's output as it comes (the log without\n"
	  "the engine's header and footer lines, which stay in the log) and exits\n"
	  "with the command's exit status, 128+N for signal N; 1 with a message\n"
	  "when the run has neither (blocked, interrupted). SIGINT, SIGTERM and\n"
	  "SIGHUP cancel the run; its end is still awaited. The run number and log\n"
	  "of the latest request are then in ITEM_DIR/validation/record.\n"
	  "$PACKET_RUN_CREDENTIAL (a stage run's) goes with the request and names\n"
	  "the stage in recorded_by; one that names no active stage run of the item\n"
	  "is refused (docs/recorder.md).\n"
	  "\n"
	  "  -C ITEM_DIR        the item directory on the mount; default: the one\n"
	  "                     at or above the current directory, else $PACKET_DIR\n"
	  "  --gpus N           GPUs to grant (default: the recipe's \"# gpus\")\n"
	  "  --timeout S        seconds before it is stopped, 0 for none (default:\n"
	  "                     the recipe's \"# timeout\")\n" },
	{ "ctl", cli_ctl, "MOUNTPOINT/ITEM COMMAND...", "send ctl commands to an item",
	  "Writes each COMMAND (one argument per line, e.g. hold or 'run plan') to\n"
	  "the item's ctl and prints its result, or its reason on stderr when it is\n"
	  "refused. Every command is sent; exits 1 when one was refused.\n" },
	{ "follow", cli_follow, "MOUNTPOINT/ITEM", "print an item's logs as it runs",
	  "Prints the item's stage logs, then each recipe's log as it starts, as\n"
	  "they grow, with a line \"==> PATH <==\" wherever the output moves to\n"
	  "another log; ends when the item neither runs nor is queued, with a line\n"
	  "\"==> state: STATE <==\". Woken by inotify on the item's files.\n" },
	{ "top", cli_top, "MOUNTPOINT [--once]", "live view of every item (terminal UI)",
	  "Shows every item of the mount, one row each: state, stage, what runs\n"
	  "and for how long, evidence (validated/named) and the last error, under a\n"
	  "line counting the items in each state. Kept current by the mount's own\n"
	  "change notifications (inotify and MNT/events). Keys: Up/Down or k/j,\n"
	  "PgUp/PgDn, Home/End select an item; a approves it, c cancels what runs\n"
	  "for it, r reruns its failed recipes (the ctl commands approve, cancel,\n"
	  "rerun failed; the result or refusal shows in the last line); ? help;\n"
	  "q quits. stdout must be a terminal.\n"
	  "\n"
	  "  --once             print one frame as text (every item) and exit\n" },
	{ "attest", cli_attest, "STORE|MOUNTPOINT ITEM", "print a signed test-result attestation",
	  "Prints a DSSE envelope (JSON) holding an in-toto Statement v1 about\n"
	  "ITEM's head commit with a test-result v0.1 predicate: PASSED, WARNED\n"
	  "or FAILED, and the recipes the plan names, judged by their latest engine\n"
	  "run at the head (as evidence.md counts them; external claims never\n"
	  "count). Signed with the store's ed25519 key (STORE/signing.key; its\n"
	  "public key is STORE/signing.pub), made now for a store that has none.\n"
	  "A mount point stands for the store it shows.\n" },
	{ "verify", cli_verify, "FILE --key PUBKEY [--subject COMMIT] [--require-pass]",
	  "check an attestation",
	  "Checks that the DSSE envelope in FILE ('-': stdin) is signed by the\n"
	  "ed25519 public key PUBKEY (PEM) and holds an in-toto test-result\n"
	  "Statement, then prints what it attests: item, subject, commit, result\n"
	  "and passed/named recipes. Exits 1 with the reason when it does not.\n"
	  "A valid attestation of a WARNED or FAILED result exits 0 unless\n"
	  "--require-pass is given.\n"
	  "\n"
	  "  --key PUBKEY       the public key (PEM), e.g. STORE/signing.pub\n"
	  "  --subject COMMIT   also require the attestation to be about COMMIT\n"
	  "                     (a full id, or a prefix of at least 7 hex digits)\n"
	  "  --require-pass     also require the result PASSED (exit 1 otherwise)\n" },
	{ NULL, NULL, NULL, NULL, NULL },
};

const struct cli_command *cli_find(const char *name)
{
	const struct cli_command *c;

	for (c = cli_commands; c->name; c++) {
		if (strcmp(c->name, name) == 0)
			return c;
	}
	return NULL;
}

void cli_print_help(FILE *f, const struct cli_command *c)
{
	fprintf(f, "usage: packetfs %s %s\n\n%s", c->name, c->usage, c->help);
}
