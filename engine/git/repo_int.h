/*
 * repo_int.h - what the files of the git layer share (repo_common.c); not
 * for the layers above, which include git.h.
 */
#ifndef PACKETFS_REPO_INT_H
#define PACKETFS_REPO_INT_H

#include <stddef.h>
#include <sys/types.h>

/*
 * The one translation of a libgit2 return code (code < 0) into a negative
 * errno: -ENOMEM when libgit2 ran out of memory; -ENOSPC or -EDQUOT for a
 * file system write refused as full; -ENOENT for a name, spec, unborn
 * branch or peel that finds nothing; -EEXIST; -EIO otherwise. libgit2's
 * last message goes into err (errlen bytes) when err is not NULL. Any
 * thread (libgit2's last error is per thread).
 */
int repo__fail(int code, char *err, size_t errlen);

/*
 * Makes a linked worktree at worktree_path (a new directory), administered
 * in admin (<commondir>/worktrees/<name>, new too), as `git worktree add`
 * lays it out (gitrepository-layout(5), "worktrees/<id>"): admin/gitdir,
 * admin/commondir and admin/HEAD holding the line head ("ref:
 * refs/heads/BRANCH", or a commit id for a detached one), the worktree's
 * ".git" file pointing back; then checks HEAD out (forced). 0, or a
 * negative errno with the reason in err ("cannot make the worktree: ..."
 * or libgit2's); what was made is left for the caller to remove. Any
 * thread.
 */
int repo__worktree_add(const char *admin, const char *head, const char *worktree_path,
		       char *err, size_t errlen);

/* lchown -R of path to uid and gid (its links not followed, its file
 * system only); a missing path is no error. 0 or the first negative
 * errno. Any thread (one call at a time inside). */
int repo__give_tree(const char *path, uid_t uid, gid_t gid);

#endif
