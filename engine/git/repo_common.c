/*
 * repo_common.c - what the git layer's files share (repo_int.h): the one
 * translation of libgit2's return codes into negative errno values, the
 * making of a linked worktree's files, and giving a tree to a user.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>

#include "repo_int.h"

/* See repo_int.h. */
int repo__fail(int code, char *err, size_t errlen)
{
	const git_error *e = git_error_last();

	if (err && errlen > 0)
		snprintf(err, errlen, "%s", e && e->message ? e->message : "libgit2 failure");
	if (e && e->klass == GIT_ERROR_NOMEMORY)
		return -ENOMEM;
	/* libgit2 reports a refused write of the file system as an OS error
	 * whose message ends in strerror(errno); a full disk is ENOSPC (or
	 * EDQUOT), never EIO. */
	if (e && e->klass == GIT_ERROR_OS && e->message) {
		if (strstr(e->message, strerror(ENOSPC)))
			return -ENOSPC;
		if (strstr(e->message, strerror(EDQUOT)))
			return -EDQUOT;
	}
	switch (code) {
	case GIT_ENOTFOUND:
	case GIT_EINVALIDSPEC:
	case GIT_EUNBORNBRANCH:
	case GIT_EPEEL:
		return -ENOENT;
	case GIT_EEXISTS:
		return -EEXIST;
	default:
		return -EIO;
	}
}

/* Writes the new file dir/name (mode 0644) holding fmt with arg in it.
 * 0 or a negative errno. */
static int write_new_file(const char *dir, const char *name, const char *fmt, const char *arg)
{
	char path[PATH_MAX];
	FILE *f;
	int rc = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "wx");
	if (!f)
		return -errno;
	errno = 0;
	if (fprintf(f, fmt, arg) < 0 || fflush(f) != 0)
		rc = errno ? -errno : -EIO;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	return rc;
}

/* See repo_int.h. git_worktree_add would do the same, but first asks whether
 * the branch is checked out in any worktree, opening every one of them:
 * making an item then grows linear in the number of items (250 ms each at
 * 600). */
int repo__worktree_add(const char *admin, const char *head, const char *worktree_path,
		       char *err, size_t errlen)
{
	git_checkout_options co;
	git_repository *wt = NULL;
	char parent[PATH_MAX];
	const char *slash = strrchr(admin, '/');
	int rc = 0;

	/* <commondir>/worktrees is made with the first worktree. */
	snprintf(parent, sizeof(parent), "%.*s", slash ? (int)(slash - admin) : 0, admin);
	if ((mkdir(parent, 0755) < 0 && errno != EEXIST) || mkdir(admin, 0755) < 0 ||
	    mkdir(worktree_path, 0755) < 0)
		rc = -errno;
	if (rc == 0)
		rc = write_new_file(admin, "gitdir", "%s/.git\n", worktree_path);
	if (rc == 0)
		rc = write_new_file(admin, "commondir", "%s\n", "../..");
	if (rc == 0)
		rc = write_new_file(admin, "HEAD", "%s\n", head);
	if (rc == 0)
		rc = write_new_file(worktree_path, ".git", "gitdir: %s\n", admin);
	if (rc < 0) {
		if (err && errlen > 0)
			snprintf(err, errlen, "cannot make the worktree: %s", strerror(-rc));
		return rc;
	}
	rc = git_repository_open(&wt, worktree_path);
	if (rc == 0)
		rc = git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	if (rc == 0) {
		co.checkout_strategy = GIT_CHECKOUT_FORCE;
		rc = git_checkout_head(wt, &co);
	}
	git_repository_free(wt);
	return rc < 0 ? repo__fail(rc, err, errlen) : 0;
}

/* The owner nftw's callbacks give entries to (give_entry): one call
 * at a time, under give_lock. */
static pthread_mutex_t give_lock = PTHREAD_MUTEX_INITIALIZER;
static uid_t give_uid;
static gid_t give_gid;
static int give_err;

static int give_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	if (lchown(path, give_uid, give_gid) < 0 && !give_err)
		give_err = -errno;
	return 0;
}

/* See repo_int.h. */
int repo__give_tree(const char *path, uid_t uid, gid_t gid)
{
	int rc;

	pthread_mutex_lock(&give_lock);
	give_uid = uid;
	give_gid = gid;
	give_err = 0;
	if (nftw(path, give_entry, 16, FTW_PHYS | FTW_MOUNT) < 0 && errno != ENOENT && !give_err)
		give_err = -errno;
	rc = give_err;
	pthread_mutex_unlock(&give_lock);
	return rc;
}
