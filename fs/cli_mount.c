/*
 * cli_mount.c - the commands that work on a mount: `packetfs mount` (the
 * store's daemon: fs_mount(), fs.c), `packetfs umount` (fusermount3 -u,
 * then a wait for the daemon to end) and `packetfs new` (an item made on
 * the mount with mkdir and a write of its brief.md, as any program could).
 *
 * umount finds the daemon of a mount through /proc/self/mountinfo (the
 * mount's source is its store) and the daemon pid the store records; when
 * fusermount3 refuses (processes still use the mount), it asks that daemon
 * to stop with SIGTERM.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cli_int.h"
#include "engine.h"
#include "fs.h"

/* --- mount, umount ---------------------------------------------------- */

int cli_mount(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "options", required_argument, NULL, 'o' },
		CLI_OPTIONS_END,
	};
	struct fs_mount_options o = { NULL, NULL, NULL, 0 };
	struct buf opts = { NULL, 0, 0 };
	char *store = NULL, *mnt = NULL;
	struct stat st;
	int c, rc = 1;

	cli_opts_reset();
	while ((c = cli_next_option("mount", argc, argv, ":fo:h", longopts, &rc)) > 0) {
		if (c == 'f') {
			o.foreground = 1;
		} else if (c == 'o') {
			if ((opts.len && buf_puts(&opts, ",") < 0) || buf_puts(&opts, optarg) < 0) {
				buf_free(&opts);
				return cli_fail("mount", "%s", strerror(ENOMEM));
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
	mnt = realpath(argv[optind + 1], NULL);
	if (mnt == NULL || stat(mnt, &st) < 0) {
		cli_fail("mount", "%s: %s", argv[optind + 1], strerror(errno));
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		cli_fail("mount", "%s: %s", argv[optind + 1], strerror(ENOTDIR));
		goto out;
	}
	o.store = store;
	o.mountpoint = mnt;
	o.options = opts.len ? opts.data : NULL;
	rc = fs_mount(&o);
out:
	buf_free(&opts);
	free(store);
	free(mnt);
	return rc;
}

/* Undoes the octal escapes of /proc/self/mountinfo fields in place. */
static void unescape_octal(char *s)
{
	char *r = s, *w = s;

	while (*r) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 4;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
}

/* The source of the packetfs mount at dir (its store, see fs.c), from
 * /proc/self/mountinfo, into out. 0 or -ENOENT. */
static int mount_source(const char *dir, char *out, size_t size)
{
	char *line = NULL, *f[12], *save, *dash;
	size_t cap = 0;
	int rc = -ENOENT, n;
	FILE *mi = fopen("/proc/self/mountinfo", "re");

	if (!mi)
		return -errno;
	while (rc && getline(&line, &cap, mi) > 0) {
		dash = strstr(line, " - ");
		if (!dash)
			continue;
		*dash = '\0';
		n = 0;
		for (f[n] = strtok_r(line, " ", &save); f[n] && n < 5; f[++n] = strtok_r(NULL, " ", &save))
			;
		if (n < 5)
			continue;
		unescape_octal(f[4]);
		if (strcmp(f[4], dir) != 0)
			continue;
		f[0] = strtok_r(dash + 3, " ", &save);
		f[1] = strtok_r(NULL, " ", &save);
		if (f[0] && f[1] && strcmp(f[0], "fuse.packetfs") == 0) {
			unescape_octal(f[1]);
			snprintf(out, size, "%s", f[1]);
			rc = 0;
		}
	}
	free(line);
	fclose(mi);
	return rc;
}

/* The daemon serving the packetfs mount at dir, or 0 when unknown. */
static pid_t mount_daemon(const char *dir)
{
	char store[PATH_MAX], err[512], comm[32] = "", path[64];
	struct engine_options eo = { store, NULL, 1 };
	struct engine *e;
	pid_t pid;
	FILE *f;

	if (mount_source(dir, store, sizeof(store)) || engine_open(&eo, &e, err, sizeof(err)))
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

/* Runs fusermount3 -u on dir (its messages silenced when quiet); its exit
 * status, or 127 when it cannot run. */
static int fusermount_u(const char *dir, int quiet)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return 127;
	if (pid == 0) {
		int null = quiet ? open("/dev/null", O_WRONLY) : -1;

		if (null >= 0)
			dup2(null, STDERR_FILENO);
		execlp("fusermount3", "fusermount3", "-u", "--", dir, (char *)NULL);
		cli_fail("umount", "fusermount3: %s", strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 127;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 127;
}

/*
 * Unmounts, then waits for the daemon to finish (it records whatever still
 * ran as interrupted), so that the store can be mounted again at once.
 * When processes still use the mount (a running stage has its cwd there),
 * fusermount3 refuses; the daemon is then asked to stop with SIGTERM, and
 * it detaches the mount and ends those processes itself.
 */
int cli_umount(int argc, char **argv)
{
	char dir[PATH_MAX];
	int r, waited;
	pid_t daemon;

	if ((r = cli_no_options("umount", argc, argv)) >= 0 ||
	    (r = cli_operands("umount", argc, 1, 1, "missing MOUNTPOINT")))
		return r;
	if (!realpath(argv[optind], dir))
		return cli_fail("umount", "%s: %s", argv[optind], strerror(errno));
	daemon = mount_daemon(dir);
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

/* Reads the brief: a file, or stdin for "-". */
static int read_brief(const char *src, struct buf *out)
{
	return strcmp(src, "-") == 0 ? cli_read_fd(STDIN_FILENO, out) : cli_read_file(src, out);
}

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
		r = read_brief(src, &brief);
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
