/*
 * cli_mount.c - the commands that work on a mount: `packetfs mount` (the
 * store's daemon: fs_mount(), fs.c), `packetfs umount` (fusermount3 -u,
 * then a wait for the daemon to end) and `packetfs new` (an item made on
 * the mount with mkdir and a write of its brief.md, as any program could).
 *
 * mount checks the options (those mount(8) and mount.fuse3 pass included)
 * and replaces a dead mount at the mount point. umount finds the daemon of
 * a mount through the mount table (cli_mtab.c: the mount's source is its
 * store) and the daemon pid the store records; when fusermount3 refuses
 * (processes still use the mount), it asks that daemon to stop with
 * SIGTERM.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "cli.h"
#include "cli_int.h"
#include "engine.h"
#include "fs.h"

/* --- mount, umount ---------------------------------------------------- */

/* The mount options packetfs takes: mount(8)'s flags that libfuse applies,
 * libfuse's own, and the daemon's: log=FILE, its log, max_idle_threads=N
 * and max_threads=N, its idle and most FUSE workers, whose values fs.c
 * checks, and io_uring, FUSE over io_uring (a trailing '=' takes a value). */
static const char *const mount_options[] = {
	"rw", "dev", "nodev", "suid", "nosuid", "exec", "noexec", "async", "sync", "dirsync",
	"atime", "noatime", "diratime", "nodiratime", "relatime", "norelatime", "strictatime",
	"nostrictatime", "lazytime", "nolazytime", "allow_other", "allow_root",
	"default_permissions", "auto_unmount", "max_read=", "max_readahead=", "max_background=",
	"congestion_threshold=", "max_idle_threads=", "max_threads=", "log=", "io_uring", NULL,
};

/* Those mount(8) and fstab use for themselves, which the mount drops. */
static const char *const mount_ignored[] = {
	"defaults", "auto", "noauto", "user", "nouser", "users", "owner", "group", "_netdev",
	"nofail", "x-", "comment=", NULL,
};

/* Whether option opt (len bytes) is one of list. */
static int option_in(const char *opt, size_t len, const char *const *list)
{
	for (; *list; list++) {
		size_t n = strlen(*list);
		char last = (*list)[n - 1];

		if ((last == '=' || last == '-') ? len > n && strncmp(opt, *list, n) == 0
						 : len == n && strncmp(opt, *list, n) == 0)
			return 1;
	}
	return 0;
}

/*
 * Checks the comma-separated mount options opts and appends to out those the
 * mount takes (mount_options), leaving out mount(8)'s own (mount_ignored).
 * Returns 0, 1 after reporting an option it refuses ("packetfs: mount: OPT:
 * why"), or -ENOMEM.
 */
static int check_options(const char *opts, struct buf *out)
{
	const char *p = opts, *end;

	for (; *p; p = *end ? end + 1 : end) {
		size_t len;
		const char *why = NULL;

		end = strchrnul(p, ',');
		len = (size_t)(end - p);
		if (len == 0 || option_in(p, len, mount_ignored))
			continue;
		if (len == 2 && strncmp(p, "ro", 2) == 0)
			why = "a store is mounted read-write (its pipeline writes through the mount)";
		else if ((len > 7 && strncmp(p, "fsname=", 7) == 0) ||
			 (len > 8 && strncmp(p, "subtype=", 8) == 0))
			why = "set by packetfs (the store, and packetfs)";
		else if (!option_in(p, len, mount_options))
			why = "unknown mount option (see packetfs(1))";
		if (why) {
			cli_fail("mount", "%.*s: %s", (int)len, p, why);
			return 1;
		}
		if ((out->len && buf_puts(out, ",") < 0) || buf_append(out, p, len) < 0)
			return -ENOMEM;
	}
	return 0;
}

/*
 * Makes the mount point mnt (absolute) ready for a new mount: a packetfs
 * mount whose daemon is gone is unmounted lazily (the mount replaces it
 * instead of stacking on it); a live one is refused. Returns 0, or 1 after
 * reporting.
 */
static int clear_mountpoint(const char *arg, const char *mnt)
{
	char store[PATH_MAX];
	struct stat st;
	int r;

	if (cli_mtab_dead(mnt, store, sizeof(store))) {
		r = cli_mtab_detach(mnt);
		if (r < 0)
			return cli_fail("mount", "%s: cannot unmount the dead mount of %s: %s", arg,
					store, strerror(-r));
		fprintf(stderr, "packetfs: mount: %s: replaced the dead mount of %s\n", arg, store);
	} else if (cli_mtab_find(mnt, store, sizeof(store)) == 0) {
		return cli_fail("mount", "%s: already mounted (store %s); packetfs umount it first",
				arg, store);
	}
	if (stat(mnt, &st) < 0)
		return cli_fail("mount", "%s: %s", arg, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return cli_fail("mount", "%s: %s", arg, strerror(ENOTDIR));
	return 0;
}

int cli_mount(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "options", required_argument, NULL, 'o' },
		CLI_OPTIONS_END,
	};
	struct fs_mount_options o = { NULL, NULL, NULL, 0 };
	struct buf opts = { NULL, 0, 0 };
	char *store = NULL, mnt[PATH_MAX];
	int c, r, rc = 1;

	cli_opts_reset();
	while ((c = cli_next_option("mount", argc, argv, ":fo:h", longopts, &rc)) > 0) {
		if (c == 'f') {
			o.foreground = 1;
		} else if (c == 'o') {
			r = check_options(optarg, &opts);
			if (r != 0) {
				buf_free(&opts);
				return r > 0 ? r : cli_fail("mount", "%s", strerror(-r));
			}
		}
	}
	if (c == CLI_OPT_EXIT ||
	    (rc = cli_operands("mount", argc, 2, 2, "missing STORE or MOUNTPOINT"))) {
		buf_free(&opts);
		return rc;
	}
	rc = 1;
	store = realpath(argv[optind], NULL);
	if (store == NULL) {
		cli_fail("mount", "%s: %s", argv[optind], strerror(errno));
		goto out;
	}
	r = cli_mtab_path(argv[optind + 1], mnt);
	if (r < 0) {
		cli_fail("mount", "%s: %s", argv[optind + 1], strerror(-r));
		goto out;
	}
	if (clear_mountpoint(argv[optind + 1], mnt) != 0)
		goto out;
	o.store = store;
	o.mountpoint = mnt;
	o.options = opts.len ? opts.data : NULL;
	rc = fs_mount(&o);
out:
	buf_free(&opts);
	free(store);
	return rc;
}

/* The daemon serving the packetfs mount of store, or 0 when unknown. */
static pid_t mount_daemon(const char *store)
{
	char err[512], comm[32] = "", path[64];
	struct engine_options eo = { store, NULL, 1 };
	struct engine *e;
	pid_t pid;
	FILE *f;

	if (engine_open(&eo, &e, err, sizeof(err)))
		return 0;
	pid = engine_daemon_pid(e);
	engine_close(e);
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = pid > 0 ? fopen(path, "re") : NULL;
	if (f) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
	}
	return strncmp(comm, "packetfs", 8) == 0 ? pid : 0;
}

/* Whether process pid still runs (a zombie nobody reaped does not). */
static int alive(pid_t pid)
{
	char path[64], buf[256], *p;
	FILE *f;
	int zombie = 0;

	if (kill(pid, 0) != 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (f) {
		p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		zombie = p && p[1] == ' ' && p[2] == 'Z';
		fclose(f);
	}
	return !zombie;
}

/* Runs fusermount3 -u on dir (engine_run_program: its messages silenced
 * when quiet, killed past CLI_FUSERMOUNT_TIMEOUT_MS); its exit status, or
 * 127 when it cannot run or did not end (said on stderr unless quiet). */
static int fusermount_u(const char *dir, int quiet)
{
	char *argv[] = { "fusermount3", "-u", "--", (char *)dir, NULL };
	int r;

	fflush(NULL);
	r = engine_run_program(argv, CLI_FUSERMOUNT_TIMEOUT_MS, quiet);
	if (r >= 0)
		return r;
	if (!quiet && r == -ETIMEDOUT)
		cli_fail("umount", "fusermount3: no end within %d s (killed)",
			 CLI_FUSERMOUNT_TIMEOUT_MS / 1000);
	else if (!quiet)
		cli_fail("umount", "fusermount3: %s", strerror(-r));
	return 127;
}

/*
 * Unmounts, then waits for the daemon to finish (it records whatever still
 * ran as interrupted), so that the store can be mounted again at once.
 * When processes still use the mount (a running stage has its cwd there),
 * fusermount3 refuses; the daemon is then asked to stop with SIGTERM, and
 * it detaches the mount and ends those processes itself. A mount whose
 * daemon is gone is unmounted lazily; there is nothing to wait for.
 */
int cli_umount(int argc, char **argv)
{
	char dir[PATH_MAX], store[PATH_MAX];
	int r, waited;
	pid_t daemon = 0;

	if ((r = cli_no_options("umount", argc, argv)) >= 0 ||
	    (r = cli_operands("umount", argc, 1, 1, "missing MOUNTPOINT")))
		return r;
	r = cli_mtab_path(argv[optind], dir);
	if (r < 0)
		return cli_fail("umount", "%s: %s", argv[optind], strerror(-r));
	if (cli_mtab_dead(dir, store, sizeof(store))) {
		r = cli_mtab_detach(dir);
		if (r < 0)
			return cli_fail("umount", "%s: cannot unmount the dead mount of %s: %s",
					argv[optind], store, strerror(-r));
		return 0;
	}
	if (cli_mtab_find(dir, store, sizeof(store)) == 0)
		daemon = mount_daemon(store);
	r = fusermount_u(dir, daemon > 0);
	if (r != 0 && daemon > 0 && kill(daemon, SIGTERM) == 0)
		r = 0;
	if (r != 0) {
		if (r != 127)
			cli_fail("umount", "%s: fusermount3 -u failed", argv[optind]);
		return 1;
	}
	for (waited = 0; daemon > 0 && alive(daemon) && waited < 600; waited++)
		usleep(100000);
	if (daemon > 0 && alive(daemon))
		return cli_fail("umount", "%s: unmounted, but the daemon (pid %d) is still running",
				argv[optind], (int)daemon);
	return 0;
}

/* --- new --------------------------------------------------------------- */

int cli_new(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "brief", required_argument, NULL, 'b' },
		CLI_OPTIONS_END,
	};
	struct buf brief = { NULL, 0, 0 };
	const char *src = NULL, *mnt, *name;
	char *dir = NULL, *file = NULL;
	int c, r, rc = 1;

	cli_opts_reset();
	while ((c = cli_next_option("new", argc, argv, ":b:h", longopts, &r)) == 'b')
		src = optarg;
	if (c == CLI_OPT_EXIT ||
	    (r = cli_operands("new", argc, 2, 2, "missing MOUNTPOINT or NAME")))
		return r;
	mnt = argv[optind];
	name = argv[optind + 1];
	if (!cli_is_mount(mnt))
		return cli_fail("new", "%s: not a packetfs mount", mnt);
	if (name[0] == '\0' || strchr(name, '/'))
		return cli_fail("new", "%s: invalid item name (" NAME_RULE ")", name);
	/* Read the brief before the item exists, so a bad source leaves
	 * nothing behind. */
	if (src) {
		r = cli_read_input(src, &brief);
		if (r < 0)
			return cli_fail("new", "%s: %s", strcmp(src, "-") ? src : "stdin",
					strerror(-r));
	}
	if (asprintf(&dir, "%s/%s", mnt, name) < 0 || asprintf(&file, "%s/brief.md", dir) < 0) {
		cli_fail("new", "%s", strerror(ENOMEM));
		goto out;
	}
	if (mkdir(dir, 0777) < 0) {
		if (errno == EINVAL)
			cli_fail("new", "%s: invalid item name (" NAME_RULE ")", name);
		else if (errno == EEXIST)
			cli_fail("new", "%s: item exists", name);
		else
			cli_fail("new", "%s: %s", name, strerror(errno));
		goto out;
	}
	if (src) {
		r = cli_write_file(file, brief.data ? brief.data : "", brief.len, 0666);
		if (r < 0) {
			cli_fail("new", "%s/brief.md: %s", name, strerror(-r));
			goto out;
		}
	}
	rc = 0;
out:
	buf_free(&brief);
	free(dir);
	free(file);
	return rc;
}
