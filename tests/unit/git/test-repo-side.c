/*
 * test-repo-side.c - a measured recipe's checkouts (engine/git/repo_side.c)
 * against real git repositories: the merge-base of a branch that moved on
 * and an item head, a detached worktree of each side that git itself sees
 * as clean and detached, made afresh over an earlier run's leftovers, and
 * bad names, commits and revisions; given to another owner (run_as).
 *
 * Everything lives in a mkdtemp directory under /tmp, which also serves as
 * HOME so the user's git config cannot leak in; it is removed at exit.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "git.h"
#include "git-env.h"
#include "test.h"
#include "util.h"

/* No owner given: the checkout stays the caller's. */
#define NO_OWNER (uid_t)-1, (gid_t)-1

static char root[64] = "/tmp/pfs-repo-side-XXXXXX";

/* The first line git prints for args in repo, into out. */
static void git_out(const char *repo, const char *args, char *out, size_t size)
{
	char cmd[1024];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "git -C %s %s 2>&1", repo, args);
	f = popen(cmd, "r");
	ASSERT(f != NULL);
	if (!fgets(out, (int)size, f))
		out[0] = '\0';
	pclose(f);
	out[strcspn(out, "\n")] = '\0';
}

TEST(sides)
{
	char repo[128], wt_base[128], wt_head[128], base[41], head[41], mb[41], got[256], err[256];
	struct stat st;

	snprintf(repo, sizeof(repo), "%s/repo", root);
	snprintf(wt_base, sizeof(wt_base), "%s/sides/base", root);
	snprintf(wt_head, sizeof(wt_head), "%s/sides/head", root);
	SH("mkdir -p %s/sides && git init -q -b main %s && cd %s && echo v1 >f && "
	   "git add f && git commit -qm one && git checkout -qb item && echo v2 >f && "
	   "echo new >g && git add f g && git commit -qm two && git checkout -q main && "
	   "echo other >h && git add h && git commit -qm three", root, repo, repo);
	git_out(repo, "rev-parse item~1", base, sizeof(base));
	git_out(repo, "rev-parse item", head, sizeof(head));

	/* main moved on after the item branched: the base is where it branched. */
	ASSERT_EQ(repo_merge_base(repo, "main", head, mb), 0);
	ASSERT_STREQ(mb, base);
	ASSERT_EQ(repo_merge_base(repo, "main", "item", mb), 0);
	ASSERT_STREQ(mb, base);
	ASSERT_EQ(repo_merge_base(repo, "nosuch", head, mb), -ENOENT);
	ASSERT_EQ(repo_merge_base("/nonexistent", "main", head, mb), -ENOENT);

	ASSERT_EQ(repo_side_checkout(repo, base, "measure-base", wt_base, NO_OWNER, err, sizeof(err)), 0);
	ASSERT_EQ(repo_side_checkout(repo, head, "measure-head", wt_head, NO_OWNER, err, sizeof(err)), 0);
	SH("grep -qx v1 %s/f && test ! -e %s/g && test ! -e %s/h", wt_base, wt_base, wt_base);
	SH("grep -qx v2 %s/f && grep -qx new %s/g", wt_head, wt_head);
	/* git sees each as a clean, detached checkout of its commit. */
	git_out(wt_base, "rev-parse HEAD", got, sizeof(got));
	ASSERT_STREQ(got, base);
	git_out(wt_head, "status --porcelain", got, sizeof(got));
	ASSERT_STREQ(got, "");
	git_out(wt_head, "symbolic-ref -q HEAD || echo detached", got, sizeof(got));
	ASSERT_STREQ(got, "detached");
	SH("git -C %s worktree list --porcelain | grep -qx 'worktree %s'", repo, wt_head);
	/* The item's branch is not checked out there: it stays free to move. */
	SH("git -C %s branch -f item main", repo);

	/* A second checkout starts afresh: an earlier build is gone. */
	SH("mkdir %s/build && echo stale >%s/build/out && echo edit >>%s/f", wt_base, wt_base, wt_base);
	ASSERT_EQ(repo_side_checkout(repo, base, "measure-base", wt_base, NO_OWNER, err, sizeof(err)), 0);
	ASSERT(stat(wt_base, &st) == 0);
	SH("test ! -e %s/build && grep -qx v1 %s/f", wt_base, wt_base);
	git_out(wt_base, "status --porcelain", got, sizeof(got));
	ASSERT_STREQ(got, "");

	/* Removed: the directory and git's record of it. */
	ASSERT_EQ(repo_side_remove(repo, "measure-base", wt_base), 0);
	ASSERT_EQ(repo_side_remove(repo, "measure-head", wt_head), 0);
	SH("test ! -e %s && test ! -e %s && test ! -e %s/.git/worktrees/measure-base", wt_base,
	   wt_head, repo);
	SH("test \"$(git -C %s worktree list | wc -l)\" = 1", repo);
	ASSERT_EQ(repo_side_remove(repo, "measure-base", wt_base), 0);

	/* Bad input makes nothing. */
	ASSERT_EQ(repo_side_checkout(repo, base, "../x", wt_base, NO_OWNER, err, sizeof(err)), -EINVAL);
	ASSERT_STREQ(err, "bad worktree name or commit id");
	ASSERT_EQ(repo_side_checkout(repo, "main", "measure-base", wt_base, NO_OWNER, err, sizeof(err)),
		  -EINVAL);
	ASSERT_EQ(repo_side_checkout(repo, "0123456789012345678901234567890123456789", "measure-base",
				     wt_base, NO_OWNER, err, sizeof(err)), -ENOENT);
	ASSERT(err[0] != '\0');
	SH("test ! -e %s && test ! -e %s/.git/worktrees/measure-base", wt_base, repo);
}

/* For run_as: the checkout and its administrative directory are the
 * user's (root only: chown). */
TEST(owner)
{
	char repo[128], wt[160], admin[192], head[41];
	struct stat st;

	if (geteuid() != 0)
		return;
	snprintf(repo, sizeof(repo), "%s/own", root);
	snprintf(wt, sizeof(wt), "%s/own-side", root);
	snprintf(admin, sizeof(admin), "%s/.git/worktrees/measure-own", repo);
	SH("git init -q -b main %s && echo v1 >%s/f && mkdir %s/d && echo x >%s/d/g && "
	   "git -C %s add -A && git -C %s commit -qm one", repo, repo, repo, repo, repo, repo);
	git_out(repo, "rev-parse HEAD", head, sizeof(head));
	ASSERT_EQ(repo_side_checkout(repo, head, "measure-own", wt, 65534, 65534, NULL, 0), 0);
	ASSERT(lstat(wt, &st) == 0 && st.st_uid == 65534 && st.st_gid == 65534);
	ASSERT(lstat(admin, &st) == 0 && st.st_uid == 65534);
	SH("test \"$(find %s %s ! -uid 65534 | wc -l)\" = 0", wt, admin);
	/* The repository itself stays its owner's. */
	ASSERT(lstat(repo, &st) == 0 && st.st_uid == 0);
	ASSERT_EQ(repo_side_remove(repo, "measure-own", wt), 0);
}

int main(void)
{
	ASSERT(mkdtemp(root) != NULL);
	test_git_env(root, "");
	RUN(sides);
	RUN(owner);
	return test_rmtree(root);
}
