/*
 * repo_bundle.c - an item branch carried between repositories as a git
 * bundle (repo.h: repo_bundle_create, repo_bundle_fetch), for `packetfs
 * export` and `import`.
 *
 * Design: libgit2 (1.5) neither writes nor reads bundles, so both ends run
 * the git command line in the repository, as a user would: `git bundle
 * create`, then `git bundle list-heads`, `verify` and `unbundle` (which
 * stores the bundle's objects and moves no ref). git runs synchronously
 * (capture_exec of exec.h: stdin /dev/null, stdout and stderr into one
 * pipe, its own process group, killed past GIT_TIMEOUT_MS, 10 minutes), with
 * the environment of a publish's push (push_env: no GIT_DIR and the like,
 * untranslated messages, no prompt). libgit2 answers the rest: heads,
 * parents and merge bases.
 *
 * Ownership: git refuses a repository that belongs to another user than
 * the caller (safe.directory; libgit2's check is off, repo.c). The caller
 * says whether it vouches for the repository (trust: git then runs with
 * -c safe.directory=PATH); without that, a refusal names the owner, since
 * git's words ("Need a repository to create a bundle") do not.
 *
 * What a bundle holds: base..head, base being the merge base of the
 * configured base and the branch head, so that an importer needs no more
 * than a clone of the same project; when the head is that merge base (the
 * branch has no commit of its own), head's parents stand for base, as git
 * makes no empty bundle; with no merge base (or a root head), the whole
 * branch.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <git2.h>

#include "exec.h"
#include "push.h"
#include "repo.h"
#include "repo_int.h"

extern char **environ;

/* The most of git's output kept (the rest is read and dropped). */
#define GIT_OUTPUT_MAX (256 * 1024)
/* How long one git command may run: a bundle of a big branch takes long,
 * a git that waits for something that never comes longer. */
#define GIT_TIMEOUT_MS (10 * 60 * 1000)

/*
 * Runs git with args (NULL-terminated, after "git") in the repository dir,
 * through capture_exec (exec.h: stdin /dev/null, its own process group),
 * its stdout and stderr into out (NUL-terminated; at most GIT_OUTPUT_MAX
 * bytes kept). trust: git runs with -c safe.directory=dir, so that its
 * check that the repository belongs to the caller does not refuse it.
 * Returns git's exit status (0 success; 128 + N for signal N), or a
 * negative errno when it could not be run (-ENOENT: no git) or did not end
 * within GIT_TIMEOUT_MS (-ETIMEDOUT: its process group was killed).
 */
static int run_git(const char *dir, int trust, const char *const *args, struct buf *out)
{
	struct capture c = { 0 };
	char *argv[20], **env, *safe = NULL;
	size_t i, k = 1;
	int rc;

	argv[0] = (char *)"git";
	if (trust) {
		if (asprintf(&safe, "safe.directory=%s", dir) < 0)
			return -ENOMEM;
		argv[k++] = (char *)"-c";
		argv[k++] = safe;
	}
	for (i = 0; args[i] && k + 1 < sizeof(argv) / sizeof(argv[0]); i++)
		argv[k++] = (char *)args[i];
	argv[k] = NULL;
	env = push_env(environ);
	if (!env) {
		free(safe);
		return -ENOMEM;
	}
	c.argv = argv;
	c.env = env;
	c.cwd = dir;
	c.err = PROC_OUT_STDOUT;
	c.timeout_ms = GIT_TIMEOUT_MS;
	c.max = GIT_OUTPUT_MAX;
	rc = capture_exec(&c);
	strv_free(env);
	free(safe);
	if (rc == 0 && buf_append(out, c.out, c.len))
		rc = -ENOMEM;
	free(c.out);
	if (rc)
		return rc;
	if (!out->data && buf_puts(out, ""))
		return -ENOMEM;
	return WIFEXITED(c.status) ? WEXITSTATUS(c.status) : 128 + WTERMSIG(c.status);
}

/* Why git could not run (rc, a negative errno of run_git) into err. */
static void git_not_run(int rc, char *err, size_t errlen)
{
	if (!err || !errlen)
		return;
	if (rc == -ETIMEDOUT)
		snprintf(err, errlen, "git: no end within %d s (killed)", GIT_TIMEOUT_MS / 1000);
	else
		snprintf(err, errlen, "git: %s", strerror(-rc));
}

/* git's output as one line into err: its lines joined by "; ", each
 * without git's "error: " or "fatal: " prefix. */
static void git_says(const char *what, const struct buf *out, char *err, size_t errlen)
{
	const char *s = out->data ? out->data : "";
	size_t len = 0;
	int first = 1;

	if (!err || !errlen)
		return;
	len = (size_t)snprintf(err, errlen, "%s: ", what);
	while (*s && len + 1 < errlen) {
		size_t n = strcspn(s, "\n");

		if (strncmp(s, "error: ", 7) == 0 || strncmp(s, "fatal: ", 7) == 0) {
			s += 7;
			n -= 7;
		}
		while (n && (s[n - 1] == ' ' || s[n - 1] == '\r'))
			n--;
		if (n) {
			len += (size_t)snprintf(err + len, errlen - len, "%s%.*s", first ? "" : "; ",
						(int)n, s);
			first = 0;
		}
		s += strcspn(s, "\n");
		s += *s == '\n';
		if (len >= errlen)
			break;
	}
}

/* When the repository at path, or its .git, belongs to another user than
 * the caller (whom git's safe.directory check then refuses, unless the
 * caller's own configuration names it): 1, that user's uid in *uid. */
static int foreign_owner(const char *path, uid_t *uid)
{
	char dotgit[PATH_MAX];
	struct stat st;

	if (stat(path, &st) == 0 && st.st_uid != geteuid()) {
		*uid = st.st_uid;
		return 1;
	}
	snprintf(dotgit, sizeof(dotgit), "%s/.git", path);
	if (stat(dotgit, &st) == 0 && st.st_uid != geteuid()) {
		*uid = st.st_uid;
		return 1;
	}
	return 0;
}

/* What failed git (what: "git bundle create", ...) said, into err: when
 * the repository belongs to another user and git was not told to trust it,
 * that cause first (git's own words, "Need a repository" or "dubious
 * ownership", do not name it). */
static void git_failed(const char *what, const char *path, int trust, const struct buf *out,
		       char *err, size_t errlen)
{
	char head[PATH_MAX + 256];
	uid_t uid;

	if (!trust && foreign_owner(path, &uid)) {
		snprintf(head, sizeof(head), "%s: repository %s is owned by uid %u, not by the "
			 "caller (git's safe.directory check)", what, path, (unsigned)uid);
		git_says(head, out, err, errlen);
	} else {
		git_says(what, out, err, errlen);
	}
}

/* A libgit2 failure as a negative errno, its message into err. */
static int git2_fail(int code, const char *what, char *err, size_t errlen)
{
	char why[512];
	int rc = repo__fail(code, why, sizeof(why));

	if (err && errlen)
		snprintf(err, errlen, "%s: %s", what, why);
	return rc;
}

/* The commit rev resolves to in repo (peeled). 0 or git2_fail's errno. */
static int commit_of(git_repository *repo, const char *rev, git_commit **out, char *err,
		     size_t errlen)
{
	git_object *obj = NULL, *peeled = NULL;
	int rc = git_revparse_single(&obj, repo, rev);

	if (rc == 0) {
		rc = git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT);
		git_object_free(obj);
	}
	if (rc < 0)
		return git2_fail(rc, rev, err, errlen);
	*out = (git_commit *)peeled;
	return 0;
}

int repo_bundle_create(const char *path, int trust, const char *branch, const char *base,
		       const char *file, char base_out[41], char head_out[41], char *err,
		       size_t errlen)
{
	char ref[256], nots[8][42];
	const char *args[16];
	git_repository *repo = NULL;
	git_commit *head = NULL, *b = NULL;
	struct buf out = { NULL, 0, 0 };
	git_oid mb;
	size_t na = 0, i, np = 0;
	int rc;

	base_out[0] = head_out[0] = '\0';
	snprintf(ref, sizeof(ref), "refs/heads/%s", branch);
	rc = git_repository_open(&repo, path);
	if (rc < 0)
		return git2_fail(rc, path, err, errlen);
	rc = commit_of(repo, ref, &head, err, errlen);
	if (rc)
		goto out;
	git_oid_tostr(head_out, 41, git_commit_id(head));
	/* The configured base may be gone or unrelated: then no merge base. */
	if (commit_of(repo, base, &b, NULL, 0) == 0 &&
	    git_merge_base(&mb, repo, git_commit_id(b), git_commit_id(head)) == 0)
		git_oid_tostr(base_out, 41, &mb);
	if (base_out[0] && strcmp(base_out, head_out) != 0) {
		snprintf(nots[np++], sizeof(nots[0]), "^%s", base_out);
	} else if (base_out[0]) {
		for (i = 0; i < git_commit_parentcount(head) && np < 8; i++)
			snprintf(nots[np++], sizeof(nots[0]), "^%s",
				 git_oid_tostr_s(git_commit_parent_id(head, (unsigned)i)));
	}
	args[na++] = "bundle";
	args[na++] = "create";
	args[na++] = "-q";
	args[na++] = file;
	args[na++] = ref;
	for (i = 0; i < np; i++)
		args[na++] = nots[i];
	args[na] = NULL;
	rc = run_git(path, trust, args, &out);
	if (rc > 0) {
		git_failed("git bundle create", path, trust, &out, err, errlen);
		rc = -EIO;
	} else if (rc < 0) {
		git_not_run(rc, err, errlen);
	}
out:
	git_commit_free(head);
	git_commit_free(b);
	git_repository_free(repo);
	buf_free(&out);
	return rc;
}

int repo_bundle_fetch(const char *path, int trust, const char *file, const char *head,
		      const char *base, char *err, size_t errlen)
{
	const char *list[] = { "bundle", "list-heads", file, NULL };
	const char *verify[] = { "bundle", "verify", file, NULL };
	const char *unbundle[] = { "bundle", "unbundle", file, NULL };
	struct buf out = { NULL, 0, 0 };
	git_repository *repo = NULL;
	git_commit *h = NULL, *b = NULL;
	const char *s;
	git_oid mb;
	int rc, found = 0;

	rc = run_git(path, trust, list, &out);
	if (rc > 0) {
		uid_t uid;

		if (!trust && foreign_owner(path, &uid)) {
			git_failed("git bundle list-heads", path, trust, &out, err, errlen);
			rc = -EACCES;
		} else {
			git_says("not a git bundle", &out, err, errlen);
			rc = -EINVAL;
		}
		goto out;
	}
	for (s = out.data; rc == 0 && s && *s; s += strcspn(s, "\n"), s += *s == '\n')
		if (strncmp(s, head, 40) == 0 && s[40] == ' ')
			found = 1;
	if (rc == 0 && !found) {
		if (err && errlen)
			snprintf(err, errlen, "the bundle does not hold the head %.12s", head);
		rc = -ENOENT;
		goto out;
	}
	out.len = 0;
	if (rc == 0)
		rc = run_git(path, trust, verify, &out);
	if (rc > 0) {
		/* git names the commits it lacks: the bundle starts from history
		 * this repository does not have. */
		if (strstr(out.data, "prerequisite"))
			git_says("the bundle needs commits the repository lacks (another project, or "
				 "a base not fetched yet)", &out, err, errlen);
		else
			git_failed("git bundle verify", path, trust, &out, err, errlen);
		rc = strstr(out.data, "prerequisite") ? -EXDEV : -EINVAL;
		goto out;
	}
	out.len = 0;
	if (rc == 0)
		rc = run_git(path, trust, unbundle, &out);
	if (rc > 0) {
		git_failed("git bundle unbundle", path, trust, &out, err, errlen);
		rc = -EIO;
		goto out;
	}
	if (rc < 0) {
		git_not_run(rc, err, errlen);
		goto out;
	}
	rc = git_repository_open(&repo, path);
	if (rc < 0) {
		rc = git2_fail(rc, path, err, errlen);
		goto out;
	}
	rc = commit_of(repo, head, &h, err, errlen);
	if (rc == 0)
		rc = commit_of(repo, base, &b, err, errlen);
	if (rc == 0 && git_merge_base(&mb, repo, git_commit_id(b), git_commit_id(h)) < 0) {
		if (err && errlen)
			snprintf(err, errlen, "the bundle's history has nothing in common with %s (a "
				 "bundle of another project)", base);
		rc = -EXDEV;
	}
out:
	git_commit_free(h);
	git_commit_free(b);
	git_repository_free(repo);
	buf_free(&out);
	return rc;
}
