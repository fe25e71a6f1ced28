/*
 * cli_mtab.c - what the command line knows of the system's mounts: the
 * packetfs mount at a directory (read from the mount table with libmount),
 * whether its daemon is gone, and the lazy unmount that clears a dead one.
 *
 * A mount whose daemon died (kill -9, a crash) stays in the mount table,
 * and every system call on it fails with ENOTCONN, stat(2) and realpath(3)
 * of the mount point included. So these functions name a mount point by an
 * absolute path made without looking into it (cli_mtab_path).
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <libmount.h>

#include "cli_int.h"

int cli_mtab_path(const char *path, char *out)
{
	char copy[PATH_MAX], parent[PATH_MAX], *base;
	size_t len;

	if (realpath(path, out))
		return 0;
	if (errno != ENOTCONN)
		return -errno;
	/* A dead mount point: the real path of its parent, then its name. */
	len = strlen(path);
	if (len >= sizeof(copy))
		return -ENAMETOOLONG;
	memcpy(copy, path, len + 1);
	while (len > 1 && copy[len - 1] == '/')
		copy[--len] = '\0';
	base = strrchr(copy, '/');
	if (base == NULL) {
		if (!realpath(".", parent))
			return -errno;
		base = copy;
	} else {
		*base++ = '\0';
		if (!realpath(copy[0] ? copy : "/", parent))
			return -errno;
	}
	if (strcmp(base, ".") == 0 || strcmp(base, "..") == 0 || base[0] == '\0')
		return -ENOTCONN;
	if (snprintf(out, PATH_MAX, "%s%s%s", parent, strcmp(parent, "/") ? "/" : "", base) >=
	    PATH_MAX)
		return -ENAMETOOLONG;
	return 0;
}

int cli_mtab_find(const char *dir, char *store, size_t size)
{
	struct libmnt_table *tb = mnt_new_table();
	struct libmnt_fs *fs;
	int r;

	if (tb == NULL)
		return -ENOMEM;
	r = mnt_table_parse_mtab(tb, NULL);
	if (r < 0) {
		mnt_unref_table(tb);
		return r;
	}
	/* The last entry at dir is the mount on top, the one dir shows. */
	fs = mnt_table_find_target(tb, dir, MNT_ITER_BACKWARD);
	if (fs == NULL || !mnt_fs_get_fstype(fs) ||
	    strcmp(mnt_fs_get_fstype(fs), "fuse.packetfs") != 0) {
		r = -ENOENT;
	} else {
		snprintf(store, size, "%s", mnt_fs_get_source(fs) ? mnt_fs_get_source(fs) : "");
		r = 0;
	}
	mnt_unref_table(tb);
	return r;
}

int cli_mtab_dead(const char *dir, char *store, size_t size)
{
	struct statfs sf;

	if (cli_mtab_find(dir, store, size) != 0)
		return 0;
	/* statfs(2) always asks the daemon; stat(2) may be answered from the
	 * kernel's cache of the root's attributes even after the daemon died. */
	return statfs(dir, &sf) < 0 && errno == ENOTCONN;
}

int cli_mtab_detach(const char *dir)
{
	char *argv[] = { "fusermount3", "-u", "-z", "--", (char *)dir, NULL };
	int r;

	if (umount2(dir, MNT_DETACH) == 0)
		return 0;
	if (errno != EPERM)
		return -errno;
	/* Not privileged: fusermount3 unmounts the user's own FUSE mounts. */
	r = engine_run_program(argv, CLI_FUSERMOUNT_TIMEOUT_MS, 1);
	return r == 0 ? 0 : r == -ETIMEDOUT ? r : -EPERM;
}
