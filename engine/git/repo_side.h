/*
 * repo_side.h - the checkouts of a measured recipe (SPEC §6 "Measured
 * recipes"): the item's base commit (the merge-base of the base branch and
 * the head) and a clean, detached linked worktree of one commit per side,
 * made afresh for each measured batch and removed after it.
 *
 * Errors are negative errno values: -ENOENT (no such repository, revision
 * or commit, or no merge-base), -EEXIST, -ENOMEM, -EIO for other libgit2
 * failures; when err is not NULL libgit2's message (or why) goes there.
 * Blocking (disk, checkout): call off the loop thread or accept the wait.
 * Thread-safe as libgit2 is: each call opens its own repository.
 */
#ifndef PACKETFS_REPO_SIDE_H
#define PACKETFS_REPO_SIDE_H

#include <stddef.h>
#include <sys/types.h>

/* merge-base(base, head) of the repository at path into out (40 hex
 * digits and a NUL); base and head are any revisions (a branch, a commit
 * id). Returns 0, -ENOENT (a revision unknown, or no common ancestor),
 * -ENOMEM, -EIO. */
int repo_merge_base(const char *path, const char *base, const char *head, char out[41]);

/*
 * Makes worktree_path a clean checkout of commit (40 hex digits): a
 * linked worktree of the repository at path whose HEAD is detached at
 * commit, administered in <commondir>/worktrees/<wt_name> (a name of
 * [A-Za-z0-9._-], not "." or ".."). Whatever was at worktree_path and in
 * that administrative directory before is removed first, so untracked
 * files and builds of an earlier run never reach this one. The parent of
 * worktree_path must exist. With an owner other than (uid_t)-1 (the
 * run_as user, SPEC §5) the checkout with everything in it and its
 * administrative directory are then given to owner and group (lchown; the
 * caller must be allowed to chown), so that the user's runs build in it
 * and its git reads it. Returns 0, -EINVAL (a bad wt_name or commit),
 * -ENOENT, -ENOMEM, -EPERM (the chown was refused), -EIO; on an error
 * neither directory is left.
 */
int repo_side_checkout(const char *path, const char *commit, const char *wt_name,
		       const char *worktree_path, uid_t owner, gid_t group, char *err,
		       size_t errlen);

/* Removes the worktree at worktree_path and its administrative directory
 * wt_name (repo_side_checkout's); either may be missing already. Returns
 * 0 or the first -errno of a removal that failed. */
int repo_side_remove(const char *path, const char *wt_name, const char *worktree_path);

#endif
