/*
 * cli_ctl.c - `packetfs ctl MOUNTPOINT/ITEM COMMAND...`: sends command
 * lines to an item's ctl and prints each one's result or reason (SPEC §4,
 * §7).
 *
 * ctl is opened once for reading and writing; each COMMAND is written as
 * one line with one write(2), then the file is read back from offset 0 on
 * the same open file description: a ctl handle that wrote answers with its
 * own results ("LINE: ok" or "LINE: error: WHY"), never with another
 * writer's. Every command is sent, refused or not; the exit status is 1
 * when one was refused or could not be sent.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_int.h"
#include "engine.h"

/* Prints the lines of the answer ans (ctl read back) but the list of
 * verbs: stdout for a success, stderr as "packetfs: ctl: ..." otherwise.
 * Returns the count of lines printed. */
static int print_answer(const char *ans, int failed)
{
	const char *p = ans, *nl;
	size_t len;
	int n = 0;

	while (*p) {
		nl = strchr(p, '\n');
		len = nl ? (size_t)(nl - p) : strlen(p);
		if (len && strncmp(p, "verbs:", 6) != 0) {
			if (failed)
				fprintf(stderr, "packetfs: ctl: %.*s\n", (int)len, p);
			else
				printf("%.*s\n", (int)len, p);
			n++;
		}
		p += len + (nl != NULL);
	}
	return n;
}

/* Whether dir, an item directory on a mount, is an archived one: its
 * parent is a mount's .archive/. */
static int archived(const char *dir)
{
	char real[PATH_MAX], *slash;

	if (!realpath(dir, real) || !(slash = strrchr(real, '/')) || slash == real)
		return 0;
	*slash = '\0';
	slash = strrchr(real, '/');
	return slash && strcmp(slash + 1, ".archive") == 0;
}

/* Sends cmd to the open ctl fd; prints its answer. 0 or 1. */
static int send_line(int fd, const char *path, const char *cmd)
{
	char ans[4096];
	size_t len = strlen(cmd);
	char *line = malloc(len + 2);
	ssize_t w, n;
	int err = 0;

	if (!line)
		return cli_fail("ctl", "%s", strerror(ENOMEM));
	if (memchr(cmd, '\n', len)) {
		free(line);
		return cli_fail("ctl", "'%s': one command per argument, without newlines", cmd);
	}
	memcpy(line, cmd, len);
	line[len] = '\n';
	w = write(fd, line, len + 1);
	if (w < 0)
		err = errno;
	free(line);
	if (w >= 0 && (size_t)w != len + 1)
		err = EIO;
	n = pread(fd, ans, sizeof(ans) - 1, 0);
	if (n < 0 || (err && err != EINVAL && err != EBUSY)) {
		/* No answer of the engine's: say what the system said. */
		return cli_fail("ctl", "%s: %s: %s", path, cmd, strerror(err ? err : errno));
	}
	ans[n] = '\0';
	if (print_answer(ans, err != 0) == 0 && err)
		return cli_fail("ctl", "%s: %s: %s", path, cmd, strerror(err));
	return err ? 1 : 0;
}

int cli_ctl(int argc, char **argv)
{
	char path[PATH_MAX];
	int c, rc, fd, i, failed = 0;

	cli_opts_reset();
	while ((c = cli_next_option("ctl", argc, argv, "+:h", (const struct option[]){ CLI_OPTIONS_END },
				    &rc)) > 0)
		;
	if (c == CLI_OPT_EXIT)
		return rc;
	if (argc - optind < 1)
		return cli_usage_error("ctl", "missing MOUNTPOINT/ITEM");
	if (argc - optind < 2)
		return cli_usage_error("ctl", "missing COMMAND");
	if ((size_t)snprintf(path, sizeof(path), "%s/ctl", argv[optind]) >= sizeof(path))
		return cli_fail("ctl", "%s: %s", argv[optind], strerror(ENAMETOOLONG));
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 && errno == EACCES && archived(argv[optind]))
		return cli_fail("ctl", "%s: %s (the item is archived: its files are read-only, and "
				"it takes no commands)", path, strerror(EACCES));
	if (fd < 0)
		return cli_fail("ctl", "%s: %s", path, strerror(errno));
	for (i = optind + 1; i < argc; i++)
		failed |= send_line(fd, argv[optind], argv[i]);
	/* The close applies nothing: every line ended with its newline. */
	if (close(fd) < 0 && !failed)
		return cli_fail("ctl", "%s: %s", path, strerror(errno));
	return failed;
}
