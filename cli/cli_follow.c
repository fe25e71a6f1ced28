/*
 * cli_follow.c - `packetfs follow MOUNTPOINT/ITEM`: prints the item's logs
 * as they grow (its stage logs in stages/, in their order, then its recipe
 * logs in validation/logs/, each as it starts), with a header line
 * "==> PATH <==" whenever the output moves to another log, like tail -f of
 * several files. It ends once the item neither runs nor is queued, with a
 * last line "==> state: STATE <==".
 *
 * It wakes on inotify events of the item's directory, stages/ and
 * validation/logs/ (the mount sends them as the engine appends to a log,
 * makes one or changes the status), never on a timer. The watches exist
 * before each look at the files, so no change falls between a look and the
 * wait.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "cli.h"
#include "cli_int.h"
#include "engine.h"

/* A log followed: its item-relative path and the bytes printed of it. */
struct followed {
	char path[NAME_MAX + 32];
	off_t off;
};

struct follow {
	const char *dir;           /* the item's directory */
	struct followed *logs;
	size_t n;
	long last;                 /* the log that printed last, -1: none */
};

/* Stage logs by their number, recipe logs by name (their UTC stamp). */
static int cmp_log(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	long nx = strtol(x, NULL, 10), ny = strtol(y, NULL, 10);

	return nx != ny ? (nx < ny ? -1 : 1) : strcmp(x, y);
}

/* Adds the logs of sub ("stages" or "validation/logs") not followed yet,
 * in their order. 0 or -errno. */
static int add_new(struct follow *f, const char *sub)
{
	char path[PATH_MAX], **names = NULL;
	struct dirent *de;
	size_t i, k, len;
	DIR *d;
	int r = 0;

	snprintf(path, sizeof(path), "%s/%s", f->dir, sub);
	d = opendir(path);
	if (d == NULL)
		return errno == ENOENT ? 0 : -errno;
	while (r == 0 && (de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len > 4 && strcmp(de->d_name + len - 4, ".log") == 0)
			r = strv_push(&names, de->d_name);
	}
	closedir(d);
	if (names)
		qsort(names, strv_len(names), sizeof(char *), cmp_log);
	for (i = 0; r == 0 && names && names[i]; i++) {
		char rel[sizeof(f->logs->path)];
		struct followed *grown;

		snprintf(rel, sizeof(rel), "%s/%s", sub, names[i]);
		for (k = 0; k < f->n && strcmp(f->logs[k].path, rel) != 0; k++)
			;
		if (k < f->n)
			continue;
		grown = realloc(f->logs, (f->n + 1) * sizeof(*f->logs));
		if (grown == NULL) {
			r = -ENOMEM;
			break;
		}
		f->logs = grown;
		snprintf(f->logs[f->n].path, sizeof(f->logs->path), "%s", rel);
		f->logs[f->n++].off = 0;
	}
	strv_free(names);
	return r < 0 ? r : 0;
}

/* Prints what each followed log has past what was printed of it. */
static int print_new(struct follow *f)
{
	char path[PATH_MAX], data[65536];
	size_t i;
	ssize_t n;
	int fd;

	for (i = 0; i < f->n; i++) {
		snprintf(path, sizeof(path), "%s/%s", f->dir, f->logs[i].path);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		while ((n = pread(fd, data, sizeof(data), f->logs[i].off)) > 0) {
			if (f->last != (long)i)
				printf("%s==> %s <==\n", f->last >= 0 ? "\n" : "", f->logs[i].path);
			f->last = (long)i;
			fwrite(data, 1, (size_t)n, stdout);
			f->logs[i].off += n;
		}
		close(fd);
	}
	return fflush(stdout) == 0 ? 0 : -errno;
}

/* The item's state ("running", ...) into state. 0 or -errno. */
static int item_state(const char *dir, char *state, size_t size)
{
	struct buf b = { NULL, 0, 0 };
	char path[PATH_MAX];
	const char *p;
	int r;

	snprintf(path, sizeof(path), "%s/status", dir);
	r = util_read_path(path, MAX_READ, &b);
	state[0] = '\0';
	for (p = b.data; r == 0 && p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, "state:", 6) == 0) {
			p += 6;
			while (*p == ' ')
				p++;
			snprintf(state, size, "%.*s", (int)strcspn(p, "\n"), p);
			break;
		}
	}
	buf_free(&b);
	return r;
}

int cli_follow(int argc, char **argv)
{
	static const char *const watched[] = { "", "/stages", "/validation/logs" };
	struct follow f = { NULL, NULL, 0, -1 };
	char path[PATH_MAX], state[64], ev[4096];
	size_t i;
	int r, fd, done = 0;

	if ((r = cli_no_options("follow", argc, argv)) >= 0 ||
	    (r = cli_operands("follow", argc, 1, 1, "missing MOUNTPOINT/ITEM")))
		return r;
	f.dir = argv[optind];
	snprintf(path, sizeof(path), "%s/ctl", f.dir);
	if (access(path, F_OK) != 0)
		return cli_fail("follow", "%s: %s", f.dir,
				errno == ENOENT ? "no item of a packetfs mount" : strerror(errno));
	fd = inotify_init1(IN_CLOEXEC);
	if (fd < 0)
		return cli_fail("follow", "inotify: %s", strerror(errno));
	for (i = 0; i < sizeof(watched) / sizeof(watched[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", f.dir, watched[i]);
		if (inotify_add_watch(fd, path, IN_MODIFY | IN_CREATE | IN_MOVED_TO |
					  IN_CLOSE_WRITE) < 0 && errno != ENOENT) {
			r = cli_fail("follow", "%s: inotify: %s", path, strerror(errno));
			close(fd);
			return r;
		}
	}
	while (!done) {
		/* The state first: the logs read after it hold all a finished
		 * item wrote. */
		r = item_state(f.dir, state, sizeof(state));
		done = r == 0 && strcmp(state, "running") != 0 && strcmp(state, "queued") != 0;
		if (r == 0)
			r = add_new(&f, "stages");
		if (r == 0)
			r = add_new(&f, "validation/logs");
		if (r == 0)
			r = print_new(&f);
		if (r < 0)
			break;
		if (!done && read(fd, ev, sizeof(ev)) < 0 && errno != EINTR) {
			r = -errno;
			break;
		}
	}
	close(fd);
	free(f.logs);
	if (r < 0)
		return cli_fail("follow", "%s: %s", f.dir, strerror(-r));
	printf("%s==> state: %s <==\n", f.last >= 0 ? "\n" : "", state);
	return 0;
}
