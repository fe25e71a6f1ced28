/*
 * test-repo.c - unit tests of engine/git/repo.c against real git repositories.
 *
 * Covers: repo_check and repo_resolve (bare and non-bare repositories, a
 * missing repository, a missing base, a base that is no commit);
 * repo_item_create (branch checked out in a linked worktree that the git
 * command line accepts, for bare and non-bare repositories; -EEXIST for an
 * existing branch, worktree name or path, with nothing left behind;
 * cleanup after a failed worktree add); repo_branch_head (also heads moved
 * by git after a first look: new commits, packed refs, gc, a new branch, a
 * repository made anew at the same path); repo_diff
 * (merge-base against an advanced base, text, binary, new, deleted and
 * mode-changed files, 40-hex index lines, `git apply --check` and a full
 * `git apply --index` on a checkout of the merge base giving the branch's
 * tree, prefix settings in repository and global config ignored,
 * an empty diff, appending, missing inputs); repo_worktree_dirty (clean,
 * untracked, modified, staged, ignored, the five-path summary); and the
 * functions called from several threads at once.
 *
 * Everything lives in a mkdtemp directory under /tmp, which also serves as
 * HOME so the user's git config cannot leak in; it is removed at exit, also
 * after a failed assertion.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "repo.h"
#include "git-env.h"
#include "test.h"
#include "util.h"

/* repo_item_create's owner and group that leave what it makes as it is made. */
#define SAME_OWNER (uid_t)-1, (gid_t)-1

static char root[64];

/* stdout of a command that must succeed, without the trailing newline; caller frees. */
static char *out_of(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *out_of(const char *fmt, ...)
{
	struct buf b = { 0 };
	char cmd[4096], chunk[4096];
	va_list ap;
	size_t n;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	f = popen(cmd, "r");
	ASSERT(f != NULL);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		ASSERT_EQ(buf_append(&b, chunk, n), 0);
	if (pclose(f) != 0)
		FAIL_AT("command failed: %s", cmd);
	while (b.len > 0 && b.data[b.len - 1] == '\n')
		b.data[--b.len] = '\0';
	return buf_steal(&b);
}

static int exists(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int exists(const char *fmt, ...)
{
	char path[1024];
	struct stat st;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	return lstat(path, &st) == 0;
}

/* Deterministic bytes with NULs, so git sees a binary file. */
static void write_binary(const char *path, size_t len, unsigned seed)
{
	unsigned char *p = malloc(len);
	size_t i;

	ASSERT(p != NULL);
	for (i = 0; i < len; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (i % 7 == 0) ? 0 : (unsigned char)(seed >> 16);
	}
	ASSERT_EQ(util_write_file(path, p, len), 0);
	free(p);
}

static void write_text(const char *path, const char *text)
{
	ASSERT_EQ(util_write_file(path, text, strlen(text)), 0);
}

/*
 * A non-bare repository <root>/<name> on main with a.txt (20 lines),
 * old.txt, keep.txt and bin.dat (binary), one commit.
 */
static void make_repo(const char *name)
{
	char path[512];
	struct buf b = { 0 };
	int i;

	SH("git init -q -b main %s/%s", root, name);
	for (i = 1; i <= 20; i++)
		ASSERT_EQ(buf_printf(&b, "line %d\n", i), 0);
	snprintf(path, sizeof(path), "%s/%s/a.txt", root, name);
	write_text(path, b.data);
	buf_free(&b);
	snprintf(path, sizeof(path), "%s/%s/old.txt", root, name);
	write_text(path, "to be deleted\n");
	snprintf(path, sizeof(path), "%s/%s/keep.txt", root, name);
	write_text(path, "keep\n");
	snprintf(path, sizeof(path), "%s/%s/bin.dat", root, name);
	write_binary(path, 4096, 1);
	SH("cd %s/%s && git add -A && git commit -q -m base", root, name);
}

/* The item "item" of the repository repo: its branch packetfs/item made
 * from main and checked out in the worktree <root>/<name>-wts/item, whose
 * path goes into wt (512 bytes). */
static void make_item(const char *repo, const char *name, char *wt)
{
	char err[256];

	SH("mkdir %s/%s-wts", root, name);
	snprintf(wt, 512, "%s/%s-wts/item", root, name);
	ASSERT_EQ(repo_item_create(repo, "main", "packetfs/item", "item", wt, SAME_OWNER,
				   err, sizeof(err)), 0);
}

/* make_repo(name), its path into repo and its item into wt (make_item);
 * both buffers are 512 bytes. */
static void make_repo_item(const char *name, char *repo, char *wt)
{
	make_repo(name);
	snprintf(repo, 512, "%s/%s", root, name);
	make_item(repo, name, wt);
}

/*
 * Commits, in worktree wt, a text edit, a new file, a deleted file, a binary
 * edit, a new binary file and a mode change.
 */
static void commit_changes(const char *wt)
{
	char path[512];

	SH("sed -i 's/^line 10$/line ten/' %s/a.txt", wt);
	snprintf(path, sizeof(path), "%s/new.txt", wt);
	write_text(path, "a new file\n");
	snprintf(path, sizeof(path), "%s/bin.dat", wt);
	write_binary(path, 4096, 2);
	snprintf(path, sizeof(path), "%s/newbin.dat", wt);
	write_binary(path, 1000, 3);
	SH("cd %s && git rm -q old.txt && chmod +x keep.txt && git add -A && "
	   "git commit -q -m change", wt);
}

static int is_hex40(const char *s)
{
	int i;

	for (i = 0; i < 40; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* Every "index " line is "index <40 hex>..<40 hex>[ mode]"; returns how many. */
static int check_index_lines(const char *diff)
{
	const char *l = diff;
	int n = 0;

	while (l && *l) {
		if (strncmp(l, "index ", 6) == 0) {
			const char *ids = l + 6;

			if (!is_hex40(ids) || strncmp(ids + 40, "..", 2) != 0 || !is_hex40(ids + 42) ||
			    (ids[82] != '\n' && ids[82] != ' '))
				FAIL_AT("short index line: %.100s", l);
			n++;
		}
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	return n;
}

/*
 * Checks out merge base mb of repo into <root>/<chk>, checks that diff
 * applies there with `git apply --check -p<strip>`, applies it to the index
 * and checks the resulting tree is the tree of want_commit.
 */
static void apply_on(const char *repo, const char *mb, const struct buf *diff, int strip,
		     const char *chk, const char *want_commit)
{
	char path[512];
	char *tree, *want;

	snprintf(path, sizeof(path), "%s/%s.diff", root, chk);
	ASSERT_EQ(util_write_file(path, diff->data, diff->len), 0);
	SH("git clone -q --no-checkout %s %s/%s && git -C %s/%s checkout -q --detach %s", repo,
	   root, chk, root, chk, mb);
	SH("git -C %s/%s apply --check -p%d %s", root, chk, strip, path);
	SH("git -C %s/%s apply --index -p%d %s", root, chk, strip, path);
	tree = out_of("git -C %s/%s write-tree", root, chk);
	want = out_of("git -C %s rev-parse '%s^{tree}'", repo, want_commit);
	ASSERT_STREQ(tree, want);
	free(tree);
	free(want);
}

TEST(check_and_resolve)
{
	char repo[512], bare[512], id[41], err[256];
	char *want;

	make_repo("cr");
	snprintf(repo, sizeof(repo), "%s/cr", root);
	snprintf(bare, sizeof(bare), "%s/cr.git", root);
	SH("git clone -q --bare %s %s", repo, bare);

	ASSERT_EQ(repo_check(repo, "main", err, sizeof(err)), 0);
	ASSERT_EQ(repo_check(bare, "main", err, sizeof(err)), 0);
	ASSERT_EQ(repo_check(repo, "HEAD", NULL, 0), 0);

	want = out_of("git -C %s rev-parse main", repo);
	ASSERT_EQ(repo_resolve(repo, "main", id), 0);
	ASSERT_STREQ(id, want);
	ASSERT_EQ(repo_resolve(bare, "main", id), 0);
	ASSERT_STREQ(id, want);
	SH("git -C %s tag -a -m t v1 main", repo);
	ASSERT_EQ(repo_resolve(repo, "v1", id), 0);
	ASSERT_STREQ(id, want);
	free(want);

	err[0] = '\0';
	ASSERT_EQ(repo_check(repo, "nosuch", err, sizeof(err)), -ENOENT);
	ASSERT_CONTAINS(err, "base branch 'nosuch' not found in ");
	ASSERT_CONTAINS(err, " (git branch -a lists those it has)");
	ASSERT(strstr(err, "revspec") == NULL);
	ASSERT_EQ(repo_check(repo, "main^{tree}", err, sizeof(err)), -ENOENT);
	ASSERT_CONTAINS(err, "base 'main^{tree}' in ");
	ASSERT_CONTAINS(err, " names no commit");
	ASSERT_EQ(repo_check(repo, "main~5", err, sizeof(err)), -ENOENT);
	ASSERT_EQ(repo_resolve(repo, "nosuch", id), -ENOENT);

	err[0] = '\0';
	snprintf(repo, sizeof(repo), "%s/missing", root);
	ASSERT_EQ(repo_check(repo, "main", err, sizeof(err)), -ENOENT);
	ASSERT_CONTAINS(err, "missing: not a git repository");
	ASSERT_EQ(repo_resolve(repo, "main", id), -ENOENT);
	SH("mkdir %s/notrepo", root);
	snprintf(repo, sizeof(repo), "%s/notrepo", root);
	ASSERT_EQ(repo_check(repo, "main", err, sizeof(err)), -ENOENT);
}

/* Creates an item in repo (bare or not) and checks it with the git command line. */
static void create_and_verify(const char *repo, const char *name)
{
	char wt[512], br[128], id[41], err[256];
	char *s, *want;

	snprintf(wt, sizeof(wt), "%s/wts-%s/%s", root, name, name);
	snprintf(br, sizeof(br), "packetfs/%s", name);
	SH("mkdir -p %s/wts-%s", root, name);
	ASSERT_EQ(repo_item_create(repo, "main", br, name, wt, SAME_OWNER, err, sizeof(err)), 0);

	s = out_of("git -C %s rev-parse --abbrev-ref HEAD", wt);
	ASSERT_STREQ(s, br);
	free(s);
	s = out_of("git -C %s status --porcelain", wt);
	ASSERT_STREQ(s, "");
	free(s);
	ASSERT(exists("%s/a.txt", wt));
	ASSERT(exists("%s/bin.dat", wt));
	s = out_of("git -C %s worktree list --porcelain", repo);
	ASSERT_CONTAINS(s, wt);
	ASSERT_CONTAINS(s, "branch refs/heads/packetfs/");
	free(s);
	s = out_of("git -C %s rev-parse --git-common-dir", wt);
	want = out_of("cd %s && git rev-parse --path-format=absolute --git-common-dir", repo);
	ASSERT_STREQ(s, want);
	free(s);
	ASSERT(exists("%s/worktrees/%s", want, name));
	free(want);

	want = out_of("git -C %s rev-parse main", repo);
	ASSERT_EQ(repo_branch_head(repo, br, id), 0);
	ASSERT_STREQ(id, want);
	free(want);
	ASSERT_EQ(repo_worktree_dirty(wt, NULL), 0);

	/* A commit in the worktree moves the branch head. */
	SH("cd %s && echo more >> a.txt && git commit -q -am more", wt);
	want = out_of("git -C %s rev-parse HEAD", wt);
	ASSERT_EQ(repo_branch_head(repo, br, id), 0);
	ASSERT_STREQ(id, want);
	ASSERT_EQ(repo_branch_head(wt, br, id), 0);
	ASSERT_STREQ(id, want);
	free(want);
}

TEST(item_create_nonbare)
{
	char repo[512];

	make_repo("ic");
	snprintf(repo, sizeof(repo), "%s/ic", root);
	create_and_verify(repo, "fix-1");
}

TEST(item_create_bare)
{
	char repo[512];

	make_repo("icb-src");
	snprintf(repo, sizeof(repo), "%s/icb.git", root);
	SH("git clone -q --bare %s/icb-src %s", root, repo);
	create_and_verify(repo, "fix-2");
}

/* repo_item_create of branch and worktree name at wt from base fails
 * with want, and the branch is not made. */
static void create_refused(const char *repo, const char *base, const char *branch,
			   const char *name, const char *wt, int want)
{
	char err[256], id[41];

	ASSERT_EQ(repo_item_create(repo, base, branch, name, wt, SAME_OWNER, err, sizeof(err)),
		  want);
	ASSERT_EQ(repo_branch_head(repo, branch, id), -ENOENT);
}

TEST(item_create_refusals)
{
	char repo[512], wt[512], err[256], id[41];

	make_repo("ir");
	snprintf(repo, sizeof(repo), "%s/ir", root);
	SH("mkdir %s/ir-wts", root);
	snprintf(wt, sizeof(wt), "%s/ir-wts/one", root);
	ASSERT_EQ(repo_item_create(repo, "main", "packetfs/one", "one", wt, SAME_OWNER,
				   err, sizeof(err)), 0);
	SH("cd %s && echo x > x.txt && git add x.txt && git commit -q -m x", wt);

	/* The same branch again, with a fresh name and path. */
	snprintf(wt, sizeof(wt), "%s/ir-wts/one-b", root);
	err[0] = '\0';
	ASSERT_EQ(repo_item_create(repo, "main", "packetfs/one", "one-b", wt, SAME_OWNER,
				   err, sizeof(err)),
		  -EEXIST);
	ASSERT(err[0] != '\0');
	ASSERT(!exists("%s", wt));
	ASSERT(!exists("%s/.git/worktrees/one-b", repo));
	ASSERT(exists("%s/ir-wts/one/x.txt", root));

	/* The same worktree name with a new branch: the branch is not made. */
	create_refused(repo, "main", "packetfs/two", "one", wt, -EEXIST);
	ASSERT(!exists("%s", wt));

	/* An existing worktree path. */
	snprintf(wt, sizeof(wt), "%s/ir-wts/one", root);
	create_refused(repo, "main", "packetfs/two", "two", wt, -EEXIST);
	ASSERT(!exists("%s/.git/worktrees/two", repo));

	/* A base that does not resolve. */
	snprintf(wt, sizeof(wt), "%s/ir-wts/three", root);
	create_refused(repo, "nosuch", "packetfs/three", "three", wt, -ENOENT);
	ASSERT(!exists("%s", wt));

	/* A missing repository. */
	snprintf(wt, sizeof(wt), "%s/ir-wts/four", root);
	ASSERT_EQ(repo_item_create("/nonexistent/packetfs-repo", "main", "packetfs/four", "four",
				   wt, SAME_OWNER, err, sizeof(err)), -ENOENT);

	/* git_worktree_add fails half-way (the parent is a file): nothing is left. */
	write_text(wt, "a file\n");
	snprintf(wt, sizeof(wt), "%s/ir-wts/four/sub", root);
	err[0] = '\0';
	ASSERT(repo_item_create(repo, "main", "packetfs/four", "four", wt, SAME_OWNER,
				err, sizeof(err)) < 0);
	ASSERT(err[0] != '\0');
	ASSERT_EQ(repo_branch_head(repo, "packetfs/four", id), -ENOENT);
	ASSERT(!exists("%s/.git/worktrees/four", repo));
	ASSERT_EQ(test_sh("git -C %s worktree list --porcelain | grep -q four", repo), 1);

	/* The git command line still sees a consistent repository. */
	SH("git -C %s fsck --no-dangling --no-progress", repo);
}

/* The full diff check on a repository where main moved on after branching. */
TEST(diff_merge_base)
{
	char repo[512], wt[512], head[41];
	struct buf d = { 0 };
	char *mb, *s;

	make_repo_item("d", repo, wt);
	mb = out_of("git -C %s rev-parse main", repo);
	commit_changes(wt);
	/* main advances: the diff must still be against the merge base. */
	SH("cd %s && echo upstream > main.txt && sed -i 's/^line 2$/line two/' a.txt && "
	   "git add -A && git commit -q -m upstream", repo);

	ASSERT_EQ(repo_diff(repo, "main", "packetfs/item", &d), 0);
	ASSERT(d.len > 0);
	ASSERT_CONTAINS(d.data, "diff --git a/a.txt b/a.txt\n");
	ASSERT_CONTAINS(d.data, "-line 10\n+line ten\n");
	ASSERT_CONTAINS(d.data, "diff --git a/new.txt b/new.txt\nnew file mode 100644\n");
	ASSERT_CONTAINS(d.data, "diff --git a/old.txt b/old.txt\ndeleted file mode 100644\n");
	ASSERT_CONTAINS(d.data, "diff --git a/keep.txt b/keep.txt\nold mode 100644\n"
				"new mode 100755\n");
	ASSERT_CONTAINS(d.data, "diff --git a/bin.dat b/bin.dat\n");
	ASSERT_CONTAINS(d.data, "GIT binary patch\n");
	ASSERT_CONTAINS(d.data, "diff --git a/newbin.dat b/newbin.dat\n");
	ASSERT(strstr(d.data, "main.txt") == NULL);
	ASSERT(strstr(d.data, "line two") == NULL);
	ASSERT(strstr(d.data, "Binary files") == NULL);
	ASSERT_EQ(check_index_lines(d.data), 5);

	/* git itself reports the same set of files. */
	s = out_of("git -C %s diff --name-only %s packetfs/item | tr '\\n' ' '", repo, mb);
	ASSERT_STREQ(s, "a.txt bin.dat keep.txt new.txt newbin.dat old.txt ");
	free(s);

	apply_on(repo, mb, &d, 1, "d-chk", "packetfs/item");

	buf_free(&d);

	/* The branch against itself, or a base that already contains it: nothing. */
	ASSERT_EQ(repo_diff(repo, "packetfs/item", "packetfs/item", &d), 0);
	ASSERT_EQ(d.len, 0);
	ASSERT_EQ(repo_branch_head(repo, "packetfs/item", head), 0);
	ASSERT_EQ(repo_diff(repo, head, "packetfs/item", &d), 0);
	ASSERT_EQ(d.len, 0);
	free(mb);
}

TEST(diff_bare_and_appending)
{
	char repo[512], wt[512];
	struct buf d = { 0 };
	char *mb;

	make_repo("db-src");
	snprintf(repo, sizeof(repo), "%s/db.git", root);
	SH("git clone -q --bare %s/db-src %s", root, repo);
	make_item(repo, "db", wt);

	/* No commits on the branch: an empty diff appends nothing. */
	ASSERT_EQ(buf_puts(&d, "before\n"), 0);
	ASSERT_EQ(repo_diff(repo, "main", "packetfs/item", &d), 0);
	ASSERT_STREQ(d.data, "before\n");

	commit_changes(wt);
	ASSERT_EQ(repo_diff(repo, "main", "packetfs/item", &d), 0);
	ASSERT(strncmp(d.data, "before\ndiff --git a/", 20) == 0);
	buf_free(&d);
	ASSERT_EQ(repo_diff(repo, "main", "packetfs/item", &d), 0);
	ASSERT_EQ(check_index_lines(d.data), 5);
	mb = out_of("git -C %s rev-parse main", repo);
	apply_on(repo, mb, &d, 1, "db-chk", "packetfs/item");
	free(mb);
	buf_free(&d);

	ASSERT_EQ(repo_diff(repo, "main", "packetfs/nosuch", &d), -ENOENT);
	ASSERT_EQ(repo_diff(repo, "nosuch", "packetfs/item", &d), -ENOENT);
	ASSERT_EQ(repo_diff("/nonexistent/packetfs-repo", "main", "packetfs/item", &d), -ENOENT);
	ASSERT_EQ(d.len, 0);

	/* Unrelated histories have no merge base. */
	SH("cd %s && git checkout -q --orphan lonely && git commit -q -m lonely", wt);
	ASSERT_EQ(repo_diff(repo, "main", "lonely", &d), -ENOENT);
	ASSERT_EQ(d.len, 0);
}

TEST(diff_prefix_config)
{
	char repo[512], wt[512];
	struct buf d = { 0 };
	char *mb;

	make_repo_item("dp", repo, wt);
	mb = out_of("git -C %s rev-parse main", repo);
	commit_changes(wt);

	/* Prefix settings in the repository or the user's global config do not
	 * change change.diff: it always applies with git apply's default -p1. */
	SH("git -C %s config diff.noprefix true", repo);
	SH("git config --global diff.mnemonicPrefix true");
	SH("git -C %s config diff.srcPrefix old/ && git -C %s config diff.dstPrefix new/", repo,
	   repo);
	ASSERT_EQ(repo_diff(repo, "main", "packetfs/item", &d), 0);
	ASSERT_CONTAINS(d.data, "diff --git a/a.txt b/a.txt\n");
	ASSERT_CONTAINS(d.data, "\n--- a/a.txt\n+++ b/a.txt\n");
	ASSERT(strstr(d.data, "old/") == NULL);
	ASSERT_EQ(check_index_lines(d.data), 5);
	apply_on(repo, mb, &d, 1, "dp-chk1", "packetfs/item");
	buf_free(&d);
	SH("git config --global --unset diff.mnemonicPrefix");
	SH("git -C %s config --unset diff.noprefix && git -C %s config --unset diff.srcPrefix && "
	   "git -C %s config --unset diff.dstPrefix", repo, repo, repo);

	ASSERT_EQ(repo_diff(repo, "main", "packetfs/item", &d), 0);
	ASSERT_CONTAINS(d.data, "diff --git a/a.txt b/a.txt\n");
	ASSERT_CONTAINS(d.data, "\n--- a/a.txt\n+++ b/a.txt\n");
	buf_free(&d);
	free(mb);
}

TEST(worktree_dirty)
{
	char repo[512], wt[512];
	struct buf s = { 0 };
	int i;

	make_repo_item("wd", repo, wt);

	ASSERT_EQ(repo_worktree_dirty(wt, &s), 0);
	ASSERT_EQ(s.len, 0);

	/* Ignored files do not count. */
	SH("mkdir -p %s/.git/info && echo '*.log' >> %s/.git/info/exclude && touch %s/run.log",
	   repo, repo, wt);
	ASSERT_EQ(repo_worktree_dirty(wt, &s), 0);

	SH("echo notes > %s/notes.txt", wt);
	ASSERT_EQ(repo_worktree_dirty(wt, &s), 1);
	ASSERT_STREQ(s.data, "1 uncommitted: notes.txt");
	buf_free(&s);

	SH("echo changed >> %s/a.txt", wt);
	ASSERT_EQ(repo_worktree_dirty(wt, &s), 1);
	ASSERT_STREQ(s.data, "2 uncommitted: a.txt, notes.txt");
	buf_free(&s);
	ASSERT_EQ(repo_worktree_dirty(wt, NULL), 1);

	SH("cd %s && git checkout -q a.txt && rm notes.txt && echo staged >> keep.txt && "
	   "git add keep.txt", wt);
	ASSERT_EQ(repo_worktree_dirty(wt, &s), 1);
	ASSERT_STREQ(s.data, "1 uncommitted: keep.txt");
	buf_free(&s);

	SH("cd %s && git rm -q --cached old.txt", wt);
	for (i = 0; i < 5; i++)
		SH("echo %d > %s/u%d.txt", i, wt, i);
	ASSERT_EQ(repo_worktree_dirty(wt, &s), 1);
	ASSERT_STREQ(s.data, "7 uncommitted: keep.txt, old.txt, u0.txt, u1.txt, u2.txt "
			     "and 2 more");
	buf_free(&s);

	SH("cd %s && git add -A && git commit -q -m all", wt);
	ASSERT_EQ(repo_worktree_dirty(wt, &s), 0);
	ASSERT_EQ(s.len, 0);

	snprintf(wt, sizeof(wt), "%s/wd-wts/missing", root);
	ASSERT_EQ(repo_worktree_dirty(wt, &s), -ENOENT);
}

/* The worktree's repository stays open on this thread between checks: what
 * changes on disk in between is seen all the same, also a worktree made
 * again at the same path. */
TEST(worktree_dirty_kept)
{
	char repo[512], wt[512], err[256];
	struct buf s = { 0 };

	make_repo_item("wk", repo, wt);
	ASSERT_EQ(repo_worktree_dirty(wt, NULL), 0);

	/* A rule of a .gitignore committed meanwhile hides the file. */
	SH("echo out > %s/build.out", wt);
	ASSERT_EQ(repo_worktree_dirty(wt, NULL), 1);
	SH("cd %s && echo '*.out' > .gitignore && git add .gitignore && git commit -q -m ign", wt);
	ASSERT_EQ(repo_worktree_dirty(wt, NULL), 0);
	/* A tracked file changed and changed back: as git says. */
	SH("echo x >> %s/a.txt", wt);
	ASSERT_EQ(repo_worktree_dirty(wt, NULL), 1);
	SH("cd %s && git checkout -q a.txt", wt);
	ASSERT_EQ(repo_worktree_dirty(wt, NULL), 0);

	/* The item removed and made again: a new index, a new HEAD. */
	ASSERT_EQ(repo_item_remove(repo, "packetfs/item", "item", wt), 0);
	ASSERT_EQ(repo_worktree_dirty(wt, NULL), -ENOENT);
	ASSERT_EQ(repo_item_create(repo, "main", "packetfs/item", "item", wt, SAME_OWNER, err,
				   sizeof(err)), 0);
	/* main has no .gitignore: an index kept from before would say it was deleted. */
	ASSERT_EQ(repo_worktree_dirty(wt, &s), 0);
	ASSERT_EQ(s.len, 0);
	SH("echo n > %s/n.txt", wt);
	ASSERT_EQ(repo_worktree_dirty(wt, &s), 1);
	ASSERT_STREQ(s.data, "1 uncommitted: n.txt");
	buf_free(&s);
}

struct worker {
	const char *repo;
	const char *head;
	size_t diff_len;
	int failures;
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	char id[41];
	int i;

	for (i = 0; i < 10; i++) {
		struct buf d = { 0 };

		if (repo_branch_head(w->repo, "packetfs/item", id) != 0 || strcmp(id, w->head))
			w->failures++;
		if (repo_diff(w->repo, "main", "packetfs/item", &d) != 0 || d.len != w->diff_len)
			w->failures++;
		if (repo_check(w->repo, "main", NULL, 0) != 0)
			w->failures++;
		buf_free(&d);
	}
	return NULL;
}

/* repo_branch_head after each of GIT's changes to repo: what git says. */
static void expect_head(const char *repo, const char *branch)
{
	char id[41], *want = out_of("git -C %s rev-parse refs/heads/%s", repo, branch);

	ASSERT_EQ(repo_branch_head(repo, branch, id), 0);
	ASSERT_STREQ(id, want);
	free(want);
}

TEST(branch_head_follows_git)
{
	char repo[512], wt[512], id[41];
	int i;

	make_repo_item("h", repo, wt);
	/* Looked at once (the repository may stay open), then moved by git:
	 * every look sees the head as git left it. */
	for (i = 0; i < 3; i++) {
		expect_head(repo, "packetfs/item");
		SH("cd %s && echo %d >> a.txt && git commit -q -am c%d", wt, i, i);
	}
	expect_head(repo, "packetfs/item");
	SH("git -C %s pack-refs --all", repo);
	expect_head(repo, "packetfs/item");
	SH("cd %s && echo packed >> a.txt && git commit -q -am packed", wt);
	expect_head(repo, "packetfs/item");
	SH("git -C %s gc -q --prune=now", repo);
	expect_head(repo, "packetfs/item");
	SH("cd %s && echo gc >> a.txt && git commit -q -am after-gc", wt);
	expect_head(repo, "packetfs/item");
	ASSERT_EQ(repo_branch_head(repo, "packetfs/later", id), -ENOENT);
	SH("git -C %s branch packetfs/later main", repo);
	expect_head(repo, "packetfs/later");
	SH("git -C %s branch -D -q packetfs/later", repo);
	ASSERT_EQ(repo_branch_head(repo, "packetfs/later", id), -ENOENT);

	/* The repository removed and made anew at the same path. */
	SH("rm -rf %s %s/h-wts", repo, root);
	ASSERT_EQ(repo_branch_head(repo, "main", id), -ENOENT);
	make_repo("h");
	SH("cd %s && echo new > new.txt && git add new.txt && git commit -q -m new", repo);
	expect_head(repo, "main");
}

TEST(threads)
{
	char repo[512], wt[512], head[41];
	struct worker w[4];
	pthread_t t[4];
	struct buf d = { 0 };
	int i;

	make_repo_item("t", repo, wt);
	commit_changes(wt);
	ASSERT_EQ(repo_branch_head(repo, "packetfs/item", head), 0);
	ASSERT_EQ(repo_diff(repo, "main", "packetfs/item", &d), 0);
	for (i = 0; i < 4; i++) {
		w[i] = (struct worker){ .repo = repo, .head = head, .diff_len = d.len };
		ASSERT_EQ(pthread_create(&t[i], NULL, worker_run, &w[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(pthread_join(t[i], NULL), 0);
		ASSERT_EQ(w[i].failures, 0);
	}
	buf_free(&d);
}

/* Removes the test directory, also when an assertion exits early. */
static void cleanup(void)
{
	if (test_sh("rm -rf %s", root) != 0)
		fprintf(stderr, "test-repo: could not remove %s\n", root);
}

int main(void)
{
	snprintf(root, sizeof(root), "/tmp/packetfs-test-repo-XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	atexit(cleanup);
	/* An isolated git environment: HOME is the test directory. */
	test_git_env(root, "[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n");

	RUN(check_and_resolve);
	RUN(item_create_nonbare);
	RUN(item_create_bare);
	RUN(item_create_refusals);
	RUN(diff_merge_base);
	RUN(diff_bare_and_appending);
	RUN(diff_prefix_config);
	RUN(worktree_dirty);
	RUN(worktree_dirty_kept);
	RUN(branch_head_follows_git);
	RUN(threads);
	return 0;
}
