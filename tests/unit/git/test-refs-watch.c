/*
 * test-refs-watch.c - the change count of a repository's refs
 * (engine/git/refs_watch.c) against real repositories changed by git: the
 * count stays while nothing changes (also across `git add` and `git
 * status`, which write the index) and moves at every change of a ref made
 * before the call: a branch made, moved and deleted; a branch in new
 * directories, and a ref written into directories made since the last
 * count; packed-refs; HEAD; a ref file written in place; a commit in a
 * linked worktree; the repository made anew at the same path; another
 * repository moved to the path, or the path a symbolic link pointed
 * elsewhere. No repository, or a symbolic link among the refs: 0, and no
 * new try within the second. repo_rev_is_ref: which bases the count may
 * stand for.
 *
 * Everything lives in a mkdtemp directory under /tmp, which also serves as
 * HOME so the user's git config cannot leak in; it is removed at exit.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>

#include <linux/magic.h>

#include "git.h"
#include "git-env.h"
#include "test.h"
#include "util.h"

static char root[64] = "/tmp/pfs-refs-watch-XXXXXX";

/* Runs the shell command and checks that w's count moved (and is not 0):
 * the new count into *last. */
#define MOVES(w, last, ...)                                                 \
	do {                                                                \
		uint64_t now_;                                              \
		SH(__VA_ARGS__);                                            \
		now_ = refs_watch_count(w);                                 \
		ASSERT(now_ != 0);                                          \
		ASSERT(now_ != *(last));                                    \
		*(last) = now_;                                             \
	} while (0)

/* Runs the shell command and checks that w's count stayed. */
#define STAYS(w, last, ...)                                                 \
	do {                                                                \
		SH(__VA_ARGS__);                                            \
		ASSERT_EQ((long long)refs_watch_count(w), (long long)*(last)); \
	} while (0)

TEST(refs)
{
	char repo[128];
	struct refs_watch *w = NULL;
	uint64_t n;

	snprintf(repo, sizeof(repo), "%s/repo", root);
	SH("git init -q -b main %s && cd %s && echo v1 >f && git add f && git commit -qm one && "
	   "echo v2 >f && git commit -qam two", repo, repo);
	ASSERT_EQ(refs_watch_open(repo, &w), 0);
	ASSERT_STREQ(refs_watch_path(w), repo);
	n = refs_watch_count(w);
	ASSERT(n != 0);
	ASSERT_EQ((long long)refs_watch_count(w), (long long)n);
	/* The index and the working files are no refs. */
	STAYS(w, &n, "cd %s && echo v3 >f && git add f && git status -s >/dev/null", repo);
	/* Branches: made, moved, deleted. */
	MOVES(w, &n, "git -C %s branch side", repo);
	MOVES(w, &n, "git -C %s update-ref refs/heads/side HEAD~1", repo);
	MOVES(w, &n, "git -C %s branch -D -q side", repo);
	/* New directories: the branch in them, then a move of it. */
	MOVES(w, &n, "git -C %s branch a/b/c", repo);
	MOVES(w, &n, "git -C %s update-ref refs/heads/a/b/c HEAD~1", repo);
	/* A ref written into directories made since the last count; then a
	 * change in the deepest of them. */
	MOVES(w, &n, "mkdir -p %s/.git/refs/remotes/o/deep && git -C %s update-ref "
	      "refs/remotes/o/deep/m HEAD", repo, repo);
	MOVES(w, &n, "git -C %s update-ref refs/remotes/o/deep/m HEAD~1", repo);
	/* packed-refs: packed, then a packed ref moved. */
	MOVES(w, &n, "git -C %s pack-refs --all", repo);
	MOVES(w, &n, "git -C %s update-ref refs/tags/t HEAD && git -C %s pack-refs --all",
	      repo, repo);
	MOVES(w, &n, "git -C %s tag -d t >/dev/null", repo);
	/* HEAD, and a ref written in place without a lock file. */
	MOVES(w, &n, "git -C %s checkout -q -b other", repo);
	MOVES(w, &n, "c=$(git -C %s rev-parse HEAD~1) && echo $c >%s/.git/refs/heads/other", repo,
	      repo);
	STAYS(w, &n, "true");
	refs_watch_close(w);
}

/* A commit in a linked worktree moves a ref of the common directory; the
 * watch is opened on the worktree as on the repository. */
TEST(worktree)
{
	char repo[128], wt[128];
	struct refs_watch *on_wt = NULL, *on_repo = NULL;
	uint64_t a, b;

	snprintf(repo, sizeof(repo), "%s/wtrepo", root);
	snprintf(wt, sizeof(wt), "%s/wt", root);
	SH("git init -q -b main %s && cd %s && echo v1 >f && git add f && git commit -qm one && "
	   "git worktree add -q -b item %s", repo, repo, wt);
	ASSERT_EQ(refs_watch_open(wt, &on_wt), 0);
	ASSERT_EQ(refs_watch_open(repo, &on_repo), 0);
	a = refs_watch_count(on_wt);
	b = refs_watch_count(on_repo);
	ASSERT(a != 0 && b != 0);
	STAYS(on_repo, &b, "cd %s && echo v2 >f && git add f", wt);
	MOVES(on_wt, &a, "cd %s && git commit -qm two", wt);
	ASSERT(refs_watch_count(on_repo) != b);
	refs_watch_close(on_wt);
	refs_watch_close(on_repo);
}

/* The repository removed and made anew at its path; none at all. */
TEST(anew_and_none)
{
	char repo[128], none[128];
	struct refs_watch *w = NULL;
	uint64_t n;

	snprintf(repo, sizeof(repo), "%s/anew", root);
	snprintf(none, sizeof(none), "%s/none", root);
	SH("git init -q -b main %s && cd %s && echo v1 >f && git add f && git commit -qm one",
	   repo, repo);
	ASSERT_EQ(refs_watch_open(repo, &w), 0);
	n = refs_watch_count(w);
	ASSERT(n != 0);
	MOVES(w, &n, "rm -rf %s && git init -q -b main %s && cd %s && echo v1 >f && git add f && "
	      "git commit -qm again", repo, repo, repo);
	/* Watched again: its refs still count. */
	MOVES(w, &n, "git -C %s branch later", repo);
	STAYS(w, &n, "true");
	refs_watch_close(w);

	ASSERT_EQ(refs_watch_open(none, &w), 0);
	ASSERT_EQ((long long)refs_watch_count(w), 0);
	/* Made now, but tried again only a second after the failure. */
	SH("git init -q -b main %s", none);
	ASSERT_EQ((long long)refs_watch_count(w), 0);
	SH("sleep 1.1");
	ASSERT(refs_watch_count(w) != 0);
	refs_watch_close(w);
	refs_watch_close(NULL);
}

/* Another repository at the path: moved there, or through a symbolic
 * link pointed at it. No event on what was watched says so. */
TEST(path_swapped)
{
	char a[128], b[128], link[128];
	struct refs_watch *w = NULL;
	uint64_t n;

	snprintf(a, sizeof(a), "%s/swap-a", root);
	snprintf(b, sizeof(b), "%s/swap-b", root);
	snprintf(link, sizeof(link), "%s/swap-link", root);
	SH("for r in %s %s; do git init -q -b main $r && (cd $r && echo $r >f && git add f && "
	   "git commit -qm one); done && ln -s %s %s", a, b, a, link);
	ASSERT_EQ(refs_watch_open(a, &w), 0);
	n = refs_watch_count(w);
	ASSERT(n != 0);
	MOVES(w, &n, "mv %s %s.old && mv %s %s", a, a, b, a);
	MOVES(w, &n, "git -C %s branch after-swap", a);
	refs_watch_close(w);

	ASSERT_EQ(refs_watch_open(link, &w), 0);
	n = refs_watch_count(w);
	ASSERT(n != 0);
	MOVES(w, &n, "ln -sfn %s.old %s", a, link);
	STAYS(w, &n, "true");
	refs_watch_close(w);
}

/* A symbolic link among the refs: git follows it, inotify would not. */
TEST(links_not_watched)
{
	char repo[128];
	struct refs_watch *w = NULL;

	snprintf(repo, sizeof(repo), "%s/links", root);
	SH("git init -q -b main %s && cd %s && echo v1 >f && git add f && git commit -qm one && "
	   "mkdir -p %s/outside && ln -s %s/outside .git/refs/heads/ext", repo, repo, root, root);
	ASSERT_EQ(refs_watch_open(repo, &w), 0);
	ASSERT_EQ((long long)refs_watch_count(w), 0);
	refs_watch_close(w);
	/* Made after the watch was set up: found at the next count. */
	SH("rm %s/.git/refs/heads/ext", repo);
	ASSERT_EQ(refs_watch_open(repo, &w), 0);
	ASSERT(refs_watch_count(w) != 0);
	SH("ln -s %s/outside %s/.git/refs/tags/ext", root, repo);
	ASSERT_EQ((long long)refs_watch_count(w), 0);
	refs_watch_close(w);
}

/* The bases the count may stand for: names git finds among the refs. */
TEST(rev_is_ref)
{
	char repo[128], path[128], rev[64];
	FILE *f;

	snprintf(repo, sizeof(repo), "%s/revs", root);
	SH("git init -q -b main %s && cd %s && echo v1 >f && git add f && git commit -qm one && "
	   "echo v2 >f && git commit -qam two && git update-ref refs/remotes/origin/main HEAD && "
	   "git tag v1 HEAD~1 && git worktree add -q --detach ../revs-wt", repo, repo);
	ASSERT_EQ(repo_rev_is_ref(repo, "main"), 1);
	ASSERT_EQ(repo_rev_is_ref(repo, "refs/heads/main"), 1);
	ASSERT_EQ(repo_rev_is_ref(repo, "origin/main"), 1);
	ASSERT_EQ(repo_rev_is_ref(repo, "v1"), 1);
	ASSERT_EQ(repo_rev_is_ref(repo, "HEAD"), 1);
	ASSERT_EQ(repo_rev_is_ref(repo, "main@{1}"), 0);
	ASSERT_EQ(repo_rev_is_ref(repo, "main~1"), 0);
	ASSERT_EQ(repo_rev_is_ref(repo, "worktrees/revs-wt/HEAD"), 0);
	ASSERT_EQ(repo_rev_is_ref(repo, "nosuch"), 0);
	SH("git -C %s rev-parse --short=7 HEAD >%s/short", repo, root);
	snprintf(path, sizeof(path), "%s/short", root);
	f = fopen(path, "r");
	ASSERT(f != NULL && fgets(rev, sizeof(rev), f) != NULL);
	fclose(f);
	rev[strcspn(rev, "\n")] = '\0';
	ASSERT_EQ(repo_rev_is_ref(repo, rev), 0);
	ASSERT_EQ(repo_rev_is_ref("/nonexistent", "main"), 0);
}

/* Whether /tmp is on a file system refs_watch watches (refs_watch.c
 * local_fs); on another (overlayfs, NFS) every count is 0 by design. */
static int tmp_is_local(void)
{
	struct statfs fs;

	if (statfs(root, &fs) != 0)
		return 0;
	switch ((unsigned long)fs.f_type) {
	case EXT4_SUPER_MAGIC:
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
	case TMPFS_MAGIC:
	case F2FS_SUPER_MAGIC:
		return 1;
	default:
		return 0;
	}
}

int main(void)
{
	ASSERT(mkdtemp(root) != NULL);
	if (!tmp_is_local()) {
		printf("SKIP: %s is on a file system whose changes inotify may miss\n", root);
		test_rmtree(root);
		return 77;
	}
	test_git_env(root, "");
	RUN(refs);
	RUN(worktree);
	RUN(anew_and_none);
	RUN(path_swapped);
	RUN(links_not_watched);
	RUN(rev_is_ref);
	return test_rmtree(root);
}
