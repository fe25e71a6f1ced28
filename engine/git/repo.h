/*
 * repo.h - the git side of packetfs, through libgit2: item branches and
 * worktrees, the branch head, change.diff and the dirty-worktree check.
 *
 * Every function opens its own git_repository and frees it before
 * returning (repo_branch_head, repo_resolve and repo_worktree_dirty use the
 * calling thread's own ones kept open), so any thread may call any function
 * at any time (libgit2 objects are never used by two threads at once). repo_global_init() must have
 * been called once, after any fork(). Errors: negative errno values
 * (-ENOENT for a missing repository, branch or base, -EEXIST for an existing
 * branch or worktree, -EIO for other libgit2 failures); when err is not NULL
 * the libgit2 message is written there.
 */
#ifndef PACKETFS_REPO_H
#define PACKETFS_REPO_H

#include <stddef.h>
#include <sys/types.h>
#include "util.h"

/* git_libgit2_init(); returns 0 or -EIO. */
int repo_global_init(void);

/* Checks that path is a git repository (bare or not) where base resolves
 * to a commit. Returns 0, -ENOENT, or -EIO. */
int repo_check(const char *path, const char *base, char *err, size_t errlen);

/*
 * Creates branch (e.g. "packetfs/fix-1") at the commit base resolves to and
 * a linked worktree named wt_name at worktree_path with the branch checked
 * out (git_worktree_add). The parent directory of worktree_path must exist.
 * With an owner other than (uid_t)-1 (the run_as user, SPEC §5), the
 * worktree and everything in it, its administrative directory
 * (<commondir>/worktrees/<wt_name>), and the branch's loose ref and reflog
 * with the directories under refs/heads and logs/refs/heads that hold
 * them, are then given to owner and group (lchown; the caller must be
 * allowed to chown), so that git run as that user works in the worktree.
 * Returns 0, -EEXIST when the branch or worktree already exists, -ENOENT
 * when base does not resolve, -EPERM when the chown was refused, -ENOSPC
 * (or -EDQUOT) when the file system has no room for them, -EIO otherwise;
 * on an error neither the branch nor the worktree is left.
 */
int repo_item_create(const char *path, const char *base, const char *branch, const char *wt_name,
		     const char *worktree_path, uid_t owner, gid_t group, char *err,
		     size_t errlen);

/*
 * Undoes repo_item_create of an item the store could not record: removes
 * the worktree at worktree_path, its administrative directory wt_name and
 * branch. Returns 0 (also when some of them did not exist), -ENOSPC when
 * git could not rewrite its references for want of space, or -EIO when
 * something stays behind. Any thread.
 */
int repo_item_remove(const char *path, const char *branch, const char *wt_name,
		     const char *worktree_path);

/* The commit id (40 hex + NUL) the branch points to, as it is on disk now
 * (the repository may be one kept open: see repo.c). 0 or -ENOENT/-EIO. */
int repo_branch_head(const char *path, const char *branch, char out[41]);

/* The repository's common git directory (where refs/heads and packed-refs
 * live, also for a path inside a linked worktree) into out, without a
 * trailing slash. 0, -ENAMETOOLONG, -ENOENT or -EIO. Any thread. */
int repo_common_dir(const char *path, char *out, size_t size);

/* The commit id base resolves to (a branch name or any revspec), as it is
 * on disk now (the repository may be one kept open: see repo.c). 0 or
 * -ENOENT/-EIO. */
int repo_resolve(const char *path, const char *rev, char out[41]);

/*
 * Whether rev, as repo_resolve looks it up in the repository at path now,
 * is a ref name found by git's rules (git_reference_dwim) under refs/ or as
 * a file of the git directory, so that what it resolves to changes only
 * with the refs a refs_watch watches: 1 or 0 (not such a name: a reflog's
 * @{n}, an abbreviated commit id, `main~2`, a name under another directory
 * of the git directory, one not found, no repository). Through the calling
 * thread's kept repository. Any thread.
 */
int repo_rev_is_ref(const char *path, const char *rev);

/*
 * Returns branch (e.g. "packetfs/fix-1") to commit to (40 hex digits), for
 * a run that moved it and was cut off. When the branch points elsewhere,
 * that commit is first kept under the new ref save_ref (a full name such as
 * "refs/packetfs/interrupted/fix-1/3") and written into from (40 hex); then
 * the branch is set to `to` (compare-and-swap against the head just read;
 * its reflog says why), and the worktree at worktree_path (NULL: none),
 * when it has the branch checked out, is reset hard to it: index and
 * tracked files as at `to`, uncommitted changes to tracked files dropped,
 * untracked and ignored files left as they are. With an owner other than
 * (uid_t)-1 (run_as), the worktree, its administrative directory wt_name
 * and the branch's ref and reflog are then given to owner and group, as
 * repo_item_create does. Returns 1 when it moved the
 * branch, 0 when the branch was at `to` already (nothing done, from ""),
 * -EEXIST when save_ref exists (nothing done), -ENOENT (no such branch, or
 * `to` is no commit), -EPERM (the chown was refused), -EIO (also when the
 * branch moved meanwhile) with libgit2's message in err. A reset of the worktree that fails after the
 * branch moved returns its error with from and save_ref set. Any thread.
 */
int repo_rewind(const char *path, const char *branch, const char *to, const char *wt_name,
		const char *worktree_path, const char *save_ref, uid_t owner, gid_t group,
		char from[41], char *err, size_t errlen);

/*
 * Appends change.diff to out: the patch of merge-base(base, branch) ..
 * branch head, in git's format (diff --git), full 40-hex index lines,
 * binary changes as git binary patches, and a/ b/ prefixes whatever the
 * user's git config says (diff.noprefix, diff.mnemonicPrefix and
 * diff.srcPrefix/dstPrefix are ignored, so that git apply -p1 works).
 * `git apply --check` of it on the merge base succeeds. An empty diff
 * appends nothing. Returns 0, -ENOENT, -EIO or -ENOMEM.
 */
int repo_diff(const char *path, const char *base, const char *branch, struct buf *out);

/*
 * Checks the worktree for uncommitted changes (modified, staged, or
 * untracked files not ignored), as it is on disk now (the repository may be
 * one kept open: see repo.c). Returns 0 when clean, 1 when dirty (with a
 * short summary like "2 uncommitted: src/a.c, notes.txt" appended to
 * summary when not NULL), or a negative errno.
 */
int repo_worktree_dirty(const char *worktree_path, struct buf *summary);

/*
 * An item branch as a git bundle (repo_bundle.c; run with the git command
 * line, which must be on PATH: libgit2 has no bundles). Both wait for git,
 * each git command at most 10 minutes (then its process group is killed
 * and they return -ETIMEDOUT, err "git: no end within 600 s (killed)");
 * any thread, though they are meant for the CLI. trust != 0 runs git with
 * -c safe.directory=path (the caller vouches for the repository, whoever
 * owns it); with 0, git refuses a repository of another user, and err
 * names that cause ("repository PATH is owned by uid N, not by the caller
 * (git's safe.directory check): ...").
 *
 * repo_bundle_create writes to file a bundle of branch (e.g.
 * "packetfs/fix-1") holding its commits from the merge base of base (a
 * revspec) and its head, or the whole branch when they have none; the
 * merge base goes into base_out ("" for none) and the head into head_out
 * (40 hex digits each). 0, -ENOENT (no such branch), -EIO (git failed; its
 * message in err), or another negative errno.
 *
 * repo_bundle_fetch checks the bundle at file against the repository at
 * path and stores its objects there, moving no ref: the bundle must hold
 * head (a commit id, as one of its ref tips), the repository every commit
 * it starts from, and head must share history with base. 0; -EINVAL (not
 * a bundle git reads), -ENOENT (head is not in it), -EXDEV (it needs
 * commits the repository lacks, or its history has nothing in common with
 * base), -EACCES (git refused the repository: another user's), -EIO, or
 * another negative errno; the reason in err.
 */
int repo_bundle_create(const char *path, int trust, const char *branch, const char *base,
		       const char *file, char base_out[41], char head_out[41], char *err,
		       size_t errlen);
int repo_bundle_fetch(const char *path, int trust, const char *file, const char *head,
		      const char *base, char *err, size_t errlen);

#endif
