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
 *                              work while it is mounted)
 *   import                     the store read-write: refused while mounted
 *   mount                      fs_mount() (fs.c)
 *   umount                     fusermount3 -u
 *   new                        the mount: mkdir and a write of brief.md
 *   status                     either: a mount point is read through the
 *                              mount, a store through a read-only engine
 *   record                     the mount: the item's validation/record and
 *                              the run's log (cli_record.c)
 *
 * The commands live in files of their own:
 *
 *   cli_mount.c   mount, umount, new
 *   cli_status.c  status
 *   cli_record.c  record
 *   cli.c         init, log, check, export, import
 *
 * Errors go to stderr as "packetfs: <command>: <why>"; usage errors also
 * print the command's usage line and exit 2.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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

/* path made absolute against the current directory (it need not exist).
 * Caller frees; NULL on ENOMEM. */
static char *absolute(const char *path)
{
	char cwd[PATH_MAX];
	char *out;

	if (path[0] == '/')
		return strdup(path);
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return NULL;
	if (asprintf(&out, "%s/%s", cwd, path) < 0)
		return NULL;
	return out;
}

struct pfs_caller cli_caller(void)
{
	struct pfs_caller who = { getuid(), getgid(), getpid() };

	return who;
}

int cli_read_fd(int fd, struct buf *out)
{
	char chunk[65536];

	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		if (out->len + (size_t)n > MAX_READ)
			return -EFBIG;
		if (buf_append(out, chunk, (size_t)n) < 0)
			return -ENOMEM;
	}
}

/* Writes all of data to fd. Returns 0 or -errno. */
static int write_all(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

int cli_write_file(const char *path, const char *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	int r;

	if (fd < 0)
		return -errno;
	r = write_all(fd, data, len);
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

int cli_open_readonly(const char *cmd, const char *store, struct engine **e)
{
	struct engine_options eo = { store, NULL, 1 };
	char err[1024] = "", tmp[PATH_MAX + 64];
	int r = engine_open(&eo, e, err, sizeof(err));

	if (r < 0)
		return cli_fail(cmd, "%s", cli_why(err, r, store, tmp, sizeof(tmp)));
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

/* --- init ------------------------------------------------------------ */

int cli_init(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "repo", required_argument, NULL, 'r' },
		{ "pipeline", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *repo = NULL, *pipeline = NULL;
	char *store = NULL, *repo_abs = NULL, *json = NULL;
	char err[1024] = "", tmp[PATH_MAX + 64];
	size_t len;
	int c, r, rc = 1;

	cli_opts_reset();
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (c == 'r')
			repo = optarg;
		else if (c == 'p')
			pipeline = optarg;
		else if (c == 'h')
			return cli_show_help("init");
		else
			return cli_bad_option("init", argv, c);
	}
	if (argc - optind != 1)
		return cli_usage_error("init", argc - optind ? "too many arguments" :
							       "missing STORE");
	if (repo == NULL)
		return cli_usage_error("init", "missing --repo REPO");
	repo_abs = realpath(repo, NULL);
	if (repo_abs == NULL)
		return cli_fail("init", "%s: %s", repo, strerror(errno));
	if (pipeline) {
		r = util_read_file(pipeline, MAX_READ, &json, &len);
		if (r < 0) {
			cli_fail("init", "%s: %s", pipeline, strerror(-r));
			goto out;
		}
	}
	store = absolute(argv[optind]);
	if (store == NULL) {
		cli_fail("init", "%s: %s", argv[optind], strerror(errno ? errno : ENOMEM));
		goto out;
	}
	r = engine_init_store(store, repo_abs, json, err, sizeof(err));
	if (r < 0) {
		cli_fail("init", "%s", cli_why(err, r, store, tmp, sizeof(tmp)));
		goto out;
	}
	rc = 0;
out:
	free(store);
	free(json);
	free(repo_abs);
	return rc;
}

/* --- log, check ----------------------------------------------------------- */

int cli_log(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct buf out = { NULL, 0, 0 };
	struct engine *e;
	const char *item, *path;
	int c, r;

	cli_opts_reset();
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (c == 'h')
			return cli_show_help("log");
		return cli_bad_option("log", argv, c);
	}
	if (argc - optind < 2 || argc - optind > 3)
		return cli_usage_error("log", argc - optind < 2 ? "missing STORE or ITEM" :
								  "too many arguments");
	item = argv[optind + 1];
	path = argc - optind == 3 ? argv[optind + 2] : NULL;
	if (cli_open_readonly("log", argv[optind], &e) != 0)
		return 1;
	r = engine_log(e, item, path, &out);
	engine_close(e);
	if (r == -ENOENT && path)
		r = cli_fail("log", "%s: no such item or document %s", item, path);
	else if (r == -ENOENT)
		r = cli_fail("log", "%s: no such item", item);
	else if (r < 0)
		r = cli_fail("log", "%s: %s", item, strerror(-r));
	else
		fwrite(out.data ? out.data : "", 1, out.len, stdout);
	buf_free(&out);
	return r;
}

int cli_check(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct buf out = { NULL, 0, 0 };
	struct engine *e;
	int c, r;

	cli_opts_reset();
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (c == 'h')
			return cli_show_help("check");
		return cli_bad_option("check", argv, c);
	}
	if (argc - optind != 1)
		return cli_usage_error("check", argc - optind ? "too many arguments" :
								"missing STORE");
	if (cli_open_readonly("check", argv[optind], &e) != 0)
		return 1;
	r = engine_check(e, &out);
	engine_close(e);
	if (r < 0) {
		buf_free(&out);
		return cli_fail("check", "%s: %s", argv[optind], strerror(-r));
	}
	fwrite(out.data ? out.data : "", 1, out.len, stdout);
	buf_free(&out);
	return r == 0 ? 0 : 1;
}

/* --- export ------------------------------------------------------------- */

static int collect_all(void *arg, const char *name, const struct pfs_stat *st)
{
	char *entry;
	int r;

	/* One string per entry: a type letter, then the name. */
	if (asprintf(&entry, "%c%s", S_ISDIR(st->mode) ? 'd' : S_ISREG(st->mode) ? 'f' : 'l',
		     name) < 0)
		return 1;
	r = strv_push(arg, entry);
	free(entry);
	return r < 0;
}

/* Copies the engine file at path to the local file dst. */
static int export_file(struct engine *e, const char *path, const char *dst)
{
	struct buf b = { NULL, 0, 0 };
	struct pfs_stat st;
	int r = engine_getattr(e, path, &st);

	if (r == 0)
		r = cli_engine_read_all(e, path, &b);
	if (r == 0)
		r = cli_write_file(dst, b.data ? b.data : "", b.len, (st.mode & 0777) | 0600);
	buf_free(&b);
	return r;
}

/* Copies the engine directory src (a packet path) into the local dst,
 * recursively; depth 0 is the item itself, whose .history is left out. */
static int export_dir(struct engine *e, const char *src, const char *dst, int depth)
{
	char **entries = NULL;
	size_t i;
	int r = engine_readdir(e, src, collect_all, &entries);

	if (r > 0)
		r = -ENOMEM;
	if (r < 0)
		return cli_fail("export", "%s: %s", src, strerror(-r));
	r = util_mkdirs(dst, 0777);
	if (r < 0) {
		strv_free(entries);
		return cli_fail("export", "%s: %s", dst, strerror(-r));
	}
	for (i = 0; entries && entries[i] && r == 0; i++) {
		const char *name = entries[i] + 1;
		char *from = NULL, *to = NULL;

		if (entries[i][0] == 'l' || (depth == 0 && strcmp(name, ".history") == 0))
			continue;
		if (asprintf(&from, "%s/%s", src, name) < 0 ||
		    asprintf(&to, "%s/%s", dst, name) < 0) {
			free(from);
			strv_free(entries);
			return cli_fail("export", "%s", strerror(ENOMEM));
		}
		if (entries[i][0] == 'd') {
			r = export_dir(e, from, to, depth + 1);
		} else {
			r = export_file(e, from, to);
			if (r < 0)
				r = cli_fail("export", "%s: %s", from, strerror(-r));
		}
		free(from);
		free(to);
	}
	strv_free(entries);
	return r;
}

int cli_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct pfs_stat st;
	struct engine *e;
	const char *item;
	char src[PATH_MAX];
	int c, r;

	cli_opts_reset();
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (c == 'h')
			return cli_show_help("export");
		return cli_bad_option("export", argv, c);
	}
	if (argc - optind != 3)
		return cli_usage_error("export", argc - optind < 3 ? "missing STORE, ITEM or DIR" :
								     "too many arguments");
	item = argv[optind + 1];
	if (item[0] == '\0' || item[0] == '.' || strchr(item, '/'))
		return cli_fail("export", "%s: no such item", item);
	if (cli_open_readonly("export", argv[optind], &e) != 0)
		return 1;
	/* A live item, else an archived one. */
	snprintf(src, sizeof(src), "/%s", item);
	r = engine_getattr(e, src, &st);
	if (r == -ENOENT) {
		snprintf(src, sizeof(src), "/.archive/%s", item);
		r = engine_getattr(e, src, &st);
	}
	if (r == 0 && !S_ISDIR(st.mode))
		r = -ENOENT;
	if (r < 0)
		r = cli_fail("export", "%s: %s", item,
			     r == -ENOENT ? "no such item" : strerror(-r));
	else
		r = export_dir(e, src, argv[optind + 2], 0);
	engine_close(e);
	return r;
}

/* --- import -------------------------------------------------------------- */

/* Packet paths the engine generates: an import never writes them. A name
 * ending in '/' covers a directory. */
static const char *const generated[] = {
	"ctl", "status", "status.json", "events", "change.diff", "stages/", "validation/logs/",
	"validation/evidence.md", "validation/registry.jsonl", "validation/record", ".history/",
	"worktree", NULL,
};

static int is_generated(const char *rel, int dir)
{
	size_t i, rl = strlen(rel);

	for (i = 0; generated[i]; i++) {
		size_t gl = strlen(generated[i]);

		if (generated[i][gl - 1] == '/') {
			if (dir && rl == gl - 1 && strncmp(rel, generated[i], rl) == 0)
				return 1;
		} else if (!dir && strcmp(rel, generated[i]) == 0) {
			return 1;
		}
	}
	return 0;
}

/* Copies the local file src into the engine document path. */
static int import_file(struct engine *e, const char *src, const char *path, mode_t mode)
{
	struct pfs_caller who = cli_caller();
	struct buf b = { NULL, 0, 0 };
	struct pfs_file *f;
	size_t off = 0;
	int fd, r;

	fd = open(src, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = cli_read_fd(fd, &b);
	close(fd);
	if (r < 0)
		goto out;
	r = engine_file_open(e, path, O_CREAT | O_WRONLY | O_TRUNC, mode & 0777, &who, &f);
	if (r < 0)
		goto out;
	while (off < b.len) {
		ssize_t n = engine_file_write(f, b.data + off, b.len - off, off, &who);

		if (n < 0) {
			r = (int)n;
			break;
		}
		off += (size_t)n;
	}
	if (r == 0)
		r = engine_file_flush(f, &who);
	engine_file_release(f);
out:
	buf_free(&b);
	return r;
}

/* Imports the local directory dir (rel: its path in the item, "" at the
 * top) into the item at base ("/name"). */
static int import_dir(struct engine *e, const char *dir, const char *base, const char *rel)
{
	struct pfs_caller who = cli_caller();
	struct dirent **names;
	int n, i, r = 0;

	n = scandir(dir, &names, NULL, alphasort);
	if (n < 0)
		return cli_fail("import", "%s: %s", dir, strerror(errno));
	for (i = 0; i < n; i++) {
		const char *name = names[i]->d_name;
		char *src = NULL, *sub = NULL, *path = NULL;
		struct stat st;

		if (r != 0 || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			goto next;
		if (asprintf(&src, "%s/%s", dir, name) < 0 ||
		    asprintf(&sub, "%s%s%s", rel, rel[0] ? "/" : "", name) < 0 ||
		    asprintf(&path, "%s/%s", base, sub) < 0) {
			r = cli_fail("import", "%s", strerror(ENOMEM));
			goto next;
		}
		if (lstat(src, &st) < 0) {
			r = cli_fail("import", "%s: %s", src, strerror(errno));
			goto next;
		}
		if (is_generated(sub, S_ISDIR(st.st_mode))) {
			fprintf(stderr, "packetfs: import: %s: skipped (generated by packetfs)\n",
				sub);
			goto next;
		}
		if (S_ISDIR(st.st_mode)) {
			r = engine_mkdir(e, path, st.st_mode & 0777, &who);
			if (r == -EEXIST)
				r = 0;
			if (r < 0)
				r = cli_fail("import", "%s: %s", sub, strerror(-r));
			else
				r = import_dir(e, src, base, sub);
		} else if (S_ISREG(st.st_mode)) {
			r = import_file(e, src, path, st.st_mode);
			if (r < 0)
				r = cli_fail("import", "%s: %s", sub, strerror(-r));
		} else {
			fprintf(stderr, "packetfs: import: %s: skipped (not a regular file)\n",
				sub);
		}
next:
		free(src);
		free(sub);
		free(path);
		free(names[i]);
	}
	free(names);
	return r;
}

/* The last component of path, trailing slashes ignored, into out. */
static void base_name(const char *path, char *out, size_t len)
{
	size_t end = strlen(path), start;

	while (end > 1 && path[end - 1] == '/')
		end--;
	start = end;
	while (start > 0 && path[start - 1] != '/')
		start--;
	snprintf(out, len, "%.*s", (int)(end - start), path + start);
}

int cli_import(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct pfs_caller who = cli_caller();
	struct engine_options eo = { NULL, NULL, 0 };
	char name[NAME_MAX + 1], item[NAME_MAX + 2], err[1024] = "", tmp[PATH_MAX + 64];
	struct engine *e;
	const char *dir;
	struct stat st;
	int c, r;

	cli_opts_reset();
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (c == 'h')
			return cli_show_help("import");
		return cli_bad_option("import", argv, c);
	}
	if (argc - optind < 2 || argc - optind > 3)
		return cli_usage_error("import", argc - optind < 2 ? "missing STORE or DIR" :
								     "too many arguments");
	dir = argv[optind + 1];
	if (stat(dir, &st) < 0)
		return cli_fail("import", "%s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return cli_fail("import", "%s: %s", dir, strerror(ENOTDIR));
	if (argc - optind == 3)
		snprintf(name, sizeof(name), "%s", argv[optind + 2]);
	else
		base_name(dir, name, sizeof(name));
	if (name[0] == '\0' || strchr(name, '/'))
		return cli_fail("import", "%s: invalid item name (" NAME_RULE ")", name);
	eo.store = argv[optind];
	r = engine_open(&eo, &e, err, sizeof(err));
	if (r == -EBUSY)
		return cli_fail("import",
				"%s (the store is mounted: use `packetfs new` and copy the files "
				"onto the mount)",
				cli_why(err, r, eo.store, tmp, sizeof(tmp)));
	if (r < 0)
		return cli_fail("import", "%s", cli_why(err, r, eo.store, tmp, sizeof(tmp)));
	snprintf(item, sizeof(item), "/%s", name);
	r = engine_mkdir(e, item, 0777, &who);
	if (r == -EINVAL)
		r = cli_fail("import", "%s: invalid item name (" NAME_RULE ")", name);
	else if (r == -EEXIST)
		r = cli_fail("import", "%s: item exists", name);
	else if (r < 0)
		r = cli_fail("import", "%s: %s", name, strerror(-r));
	else
		r = import_dir(e, dir, item, "");
	engine_close(e);
	return r;
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
	  "                     built-in pipeline for REPO\n" },
	{ "mount", cli_mount, "STORE MOUNTPOINT [-f] [-o OPTIONS]", "mount a store",
	  "Mounts the store at MOUNTPOINT and runs its pipeline in the background.\n"
	  "Returns once the mount is up; the daemon lives until `packetfs umount`.\n"
	  "\n"
	  "  -f, --foreground   stay in the foreground (stop with Ctrl-C)\n"
	  "  -o OPTIONS         FUSE mount options, comma-separated (e.g. allow_other)\n" },
	{ "umount", cli_umount, "MOUNTPOINT", "unmount a store",
	  "Unmounts MOUNTPOINT (fusermount3 -u); the daemon then stops, recording\n"
	  "whatever was still running as interrupted.\n" },
	{ "new", cli_new, "MOUNTPOINT NAME [--brief FILE|-]", "create a work item",
	  "Creates the item NAME on the mount (like mkdir MOUNTPOINT/NAME) and\n"
	  "writes its brief.md.\n"
	  "\n"
	  "  --brief FILE       the request, from FILE, or from stdin for '-'\n" },
	{ "status", cli_status, "STORE|MOUNTPOINT [ITEM] [--json]", "show items and their state",
	  "Shows the status of ITEM, or one line per item (state, stage,\n"
	  "evidence). Reads a mount point through the mount, or a store directly.\n"
	  "\n"
	  "  --json             the status as JSON (an array without ITEM)\n" },
	{ "log", cli_log, "STORE ITEM [PATH]", "revisions and events of an item",
	  "Lists the revisions of ITEM's documents (or of PATH only), then the\n"
	  "item's events.\n" },
	{ "check", cli_check, "STORE", "check the integrity of a store",
	  "Checks the SQLite database, every log against its checksum and every\n"
	  "registry line against the runs recorded. Exits 1 if problems are found.\n" },
	{ "export", cli_export, "STORE ITEM DIR", "copy a packet out as plain files",
	  "Copies every file of ITEM (live or archived) into DIR, created if\n"
	  "needed; the worktree link and .history are left out.\n" },
	{ "import", cli_import, "STORE DIR [NAME]", "make an item of a packet folder",
	  "Creates the item NAME (default: the last component of DIR) and copies\n"
	  "every file of DIR into it. Files packetfs generates (status, events,\n"
	  "change.diff, stages/, validation logs, registry, evidence) are skipped\n"
	  "with a warning. The store must not be mounted: on a mount, use\n"
	  "`packetfs new` and cp instead.\n" },
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
	  "\n"
	  "  -C ITEM_DIR        the item directory on the mount; default: the one\n"
	  "                     at or above the current directory, else $PACKET_DIR\n"
	  "  --gpus N           GPUs to grant (default: the recipe's \"# gpus\")\n"
	  "  --timeout S        seconds before it is stopped, 0 for none (default:\n"
	  "                     the recipe's \"# timeout\")\n" },
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
