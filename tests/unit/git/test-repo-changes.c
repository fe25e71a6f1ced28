/*
 * test-repo-changes.c - the paths a change touched (engine/git/repo_changes.c)
 * against real git repositories: added, deleted, modified and
 * mode-changed files, a rename paired as git diff -M pairs it, the merge
 * base against a base that moved on, a change of nothing, and missing
 * repositories, bases and heads.
 *
 * Everything lives in a mkdtemp directory under /tmp, which also serves as
 * HOME so the user's git config cannot leak in; it is removed at exit.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "git-env.h"
#include "git.h"
#include "test.h"
#include "util.h"

static char root[64] = "/tmp/pfs-repo-changes-XXXXXX";

/* The head of branch in repo into out[41]. */
static void head_of(const char *repo, const char *branch, char out[41])
{
	char cmd[512];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "git -C %s rev-parse %s", repo, branch);
	f = popen(cmd, "r");
	ASSERT(f != NULL);
	ASSERT(fgets(out, 41, f) != NULL);
	pclose(f);
	ASSERT_EQ(strlen(out), 40);
}

/* The changes as "S path[<-old]" joined by ", ". */
static void expect(const char *repo, const char *base, const char *head, const char *want)
{
	struct repo_change *v;
	struct buf got;
	size_t n, i;

	ASSERT_EQ(repo_changes(repo, base, head, &v, &n), 0);
	buf_init(&got);
	for (i = 0; i < n; i++)
		ASSERT_EQ(buf_printf(&got, "%s%c %s%s%s", i ? ", " : "", v[i].status, v[i].path,
				     v[i].old_path ? "<-" : "", v[i].old_path ? v[i].old_path : ""), 0);
	ASSERT_STREQ(got.data ? got.data : "", want);
	buf_free(&got);
	repo_changes_free(v, n);
}

TEST(changes)
{
	char repo[128], head[41];

	snprintf(repo, sizeof(repo), "%s/r", root);
	SH("git init -q -b main %s && cd %s && mkdir -p docs/old && "
	   "echo keep >a.txt && echo gone >b.txt && echo mode >run.sh && "
	   "echo 'a diagram with enough text in it to be found renamed' >docs/old/x.svg && "
	   "git add -A && git commit -q -m one && git checkout -q -b item && "
	   "echo more >>a.txt && git rm -q b.txt && echo new >c.txt && chmod +x run.sh && "
	   "git mv docs/old/x.svg x.svg && git add -A && git commit -q -m two && "
	   "git checkout -q main && echo later >d.txt && git add d.txt && git commit -q -m three",
	   repo, repo);
	head_of(repo, "item", head);
	/* Against main, which moved on: only the item's own changes (d.txt is not one). */
	expect(repo, "main", head, "M a.txt, D b.txt, A c.txt, M run.sh, R x.svg<-docs/old/x.svg");
	/* A head at its base changes nothing. */
	head_of(repo, "main", head);
	expect(repo, "main", head, "");
}

TEST(missing)
{
	char repo[128], missing[128], head[41];
	struct repo_change *v;
	size_t n;

	snprintf(repo, sizeof(repo), "%s/r", root);
	snprintf(missing, sizeof(missing), "%s/none", root);
	head_of(repo, "item", head);
	ASSERT_EQ(repo_changes(missing, "main", head, &v, &n), -ENOENT);
	ASSERT(v == NULL && n == 0);
	ASSERT_EQ(repo_changes(repo, "no-such-base", head, &v, &n), -ENOENT);
	ASSERT_EQ(repo_changes(repo, "main", "0123456789012345678901234567890123456789", &v, &n),
		  -ENOENT);
	ASSERT_EQ(repo_changes(repo, "main", "not-hex", &v, &n), -ENOENT);
}

static void cleanup(void)
{
	test_rmtree(root);
}

int main(void)
{
	ASSERT(mkdtemp(root) != NULL);
	atexit(cleanup);
	test_git_env(root, "");
	RUN(changes);
	RUN(missing);
	return 0;
}
