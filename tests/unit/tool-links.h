/*
 * tool-links.h - a directory of links to system tools, the PATH of the
 * scripts that the runenv tests run (test-runenv.c, test-runenv-local.c):
 * only the tools named are found there. Header-only, as test.h; each
 * function fails the test (exit 1) on an error. One thread only.
 */
#ifndef PACKETFS_TEST_TOOL_LINKS_H
#define PACKETFS_TEST_TOOL_LINKS_H

#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

/* Makes the directory dir (0755) and links into it each of tools (a NULL
 * ends them) that is executable in /usr/bin, /bin, /usr/sbin or /sbin, the
 * first found; a tool found nowhere is left out. */
static inline void tool_links_make(const char *dir, const char *const *tools)
{
	static const char *const dirs[] = {"/usr/bin", "/bin", "/usr/sbin", "/sbin", NULL};
	char src[PATH_MAX + 64], dst[PATH_MAX + 64];
	size_t i, d;

	ASSERT_EQ(mkdir(dir, 0755), 0);
	for (i = 0; tools[i]; i++)
		for (d = 0; dirs[d]; d++) {
			snprintf(src, sizeof(src), "%s/%s", dirs[d], tools[i]);
			if (access(src, X_OK) != 0)
				continue;
			snprintf(dst, sizeof(dst), "%s/%s", dir, tools[i]);
			ASSERT_EQ(symlink(src, dst), 0);
			break;
		}
}

/* Removes the links tool_links_make made in dir, then dir. */
static inline void tool_links_remove(const char *dir, const char *const *tools)
{
	char path[PATH_MAX + 64];
	size_t i;

	for (i = 0; tools[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, tools[i]);
		unlink(path);
	}
	rmdir(dir);
}

#endif
