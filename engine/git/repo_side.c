/*
 * repo_side.c - a measured recipe's base commit and its detached
 * checkouts (see repo_side.h).
 *
 * Design: the linked worktree is laid out as `git worktree add --detach`
 * lays it out (gitrepository-layout(5), "worktrees/<id>"): admin/gitdir,
 * admin/commondir and admin/HEAD (the commit id: a detached HEAD), the
 * worktree's ".git" file pointing back; then a forced checkout of HEAD
 * fills it. A checkout is always made afresh into an empty directory,
 * which is what makes it clean: nothing that a run at the other side or
 * at an earlier batch built can be in it. For run_as both are then
 * given to that user (repo__give_tree).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <git2.h>

#include "repo_int.h"
#include "repo_side.h"
#include "util.h"

/* The commit id rev names in repo, into *out. */
static int commit_of(git_repository *repo, const char *rev, git_oid *out)
{
	git_object *obj = NULL, *c = NULL;
	int rc = git_revparse_single(&obj, repo, rev);

	if (rc == 0)
		rc = git_object_peel(&c, obj, GIT_OBJECT_COMMIT);
	if (rc == 0)
		git_oid_cpy(out, git_object_id(c));
	git_object_free(c);
	git_object_free(obj);
	return rc;
}

int repo_merge_base(const char *path, const char *base, const char *head, char out[41])
{
	git_repository *repo = NULL;
	git_oid b, h, mb;
	int rc = git_repository_open(&repo, path);

	if (rc == 0)
		rc = commit_of(repo, base, &b);
	if (rc == 0)
		rc = commit_of(repo, head, &h);
	if (rc == 0)
		rc = git_merge_base(&mb, repo, &b, &h);
	if (rc == 0)
		git_oid_tostr(out, 41, &mb);
	git_repository_free(repo);
	return rc < 0 ? repo__fail(rc, NULL, 0) : 0;
}

static int name_ok(const char *s)
{
	size_t n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-");

	return n > 0 && s[n] == '\0' && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

/* The administrative directory of wt_name in the repository at path. */
static int admin_dir(const char *path, const char *wt_name, char *out, size_t size)
{
	git_repository *repo = NULL;
	const char *common;
	int rc = git_repository_open(&repo, path);

	if (rc < 0)
		return repo__fail(rc, NULL, 0);
	common = git_repository_commondir(repo);
	rc = snprintf(out, size, "%s%sworktrees/%s", common,
		      common[strlen(common) - 1] == '/' ? "" : "/", wt_name);
	git_repository_free(repo);
	return rc < 0 || (size_t)rc >= size ? -ENAMETOOLONG : 0;
}

int repo_side_checkout(const char *path, const char *commit, const char *wt_name,
		       const char *worktree_path, uid_t owner, gid_t group, char *err,
		       size_t errlen)
{
	char admin[PATH_MAX];
	git_repository *repo = NULL;
	git_oid oid;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (!name_ok(wt_name) || strlen(commit) != 40 || git_oid_fromstr(&oid, commit) < 0) {
		if (err && errlen)
			snprintf(err, errlen, "bad worktree name or commit id");
		return -EINVAL;
	}
	rc = admin_dir(path, wt_name, admin, sizeof(admin));
	if (rc)
		return rc;
	/* The commit must be there before anything is made. */
	rc = git_repository_open(&repo, path);
	if (rc == 0) {
		git_commit *c = NULL;

		rc = git_commit_lookup(&c, repo, &oid);
		git_commit_free(c);
	}
	git_repository_free(repo);
	if (rc < 0)
		return repo__fail(rc, err, errlen);
	repo_side_remove(path, wt_name, worktree_path);
	rc = repo__worktree_add(admin, commit, worktree_path, err, errlen);
	if (rc == 0 && owner != (uid_t)-1) {
		rc = repo__give_tree(worktree_path, owner, group);
		if (rc == 0)
			rc = repo__give_tree(admin, owner, group);
		if (rc && err && errlen)
			snprintf(err, errlen, "cannot give the checkout to uid %u: %s", (unsigned)owner,
				 strerror(-rc));
	}
	if (rc)
		repo_side_remove(path, wt_name, worktree_path);
	return rc;
}

int repo_side_remove(const char *path, const char *wt_name, const char *worktree_path)
{
	char admin[PATH_MAX];
	int rc = 0, r;

	if (name_ok(wt_name) && admin_dir(path, wt_name, admin, sizeof(admin)) == 0) {
		r = util_remove_tree(admin);
		if (r && r != -ENOENT)
			rc = r;
	}
	r = util_remove_tree(worktree_path);
	if (r && r != -ENOENT && !rc)
		rc = r;
	return rc;
}
