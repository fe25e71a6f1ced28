/*
 * repo.c - the git side of packetfs through libgit2: item branches and their
 * linked worktrees, branch heads, change.diff and the dirty-worktree check
 * (a publish pushes with the git command line: pipe_push.c).
 *
 * Design: every public function opens its own git_repository, does its work
 * and frees every libgit2 object before it returns, so no libgit2 object is
 * ever shared between threads and any thread may call any function (libgit2
 * itself is built thread-safe and initialised once by repo_global_init).
 * One exception: repo_branch_head, repo_resolve and repo_worktree_dirty,
 * the most frequent calls (each run records its head and each recipe run
 * first checks its worktree; each status, evidence.md and change.diff a
 * stat renders names the head and resolves the base) would spend most of
 * their time opening the repository (reading its config files), so each
 * thread keeps a few repositories open for them (kept_repo: thread-specific
 * handles, the least recently used replaced when the thread asks for
 * another path, freed when the thread exits), used by that thread alone;
 * where none can be kept the call opens its own as the others do. A
 * repository kept open still reads each ref from disk at each lookup
 * (packed-refs again when that file changed), looks again for objects it
 * cannot find, and a status reads the index and the .gitignore files
 * again when they changed on disk (libgit2 compares their stamps), so a
 * head moved, a file staged or an ignore rule added elsewhere is seen at
 * once. This is the engine's only cache of libgit2 objects.
 * libgit2 return codes become negative errno values in one place, repo__fail(),
 * which also copies libgit2's last message into the caller's err buffer.
 *
 * Invariants: repo_item_create either leaves both the branch and the
 * worktree in place or neither (existing names are refused before anything
 * is made; when making the worktree fails, what was made and the branch
 * are removed again). change.diff is always merge-base(base, head)..head with full
 * 40-hex index lines and binary patches, so `git apply` takes it on the
 * merge base.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>

#include "repo.h"
#include "repo_int.h"

/* How many paths the dirty-worktree summary names before "and N more". */
#define DIRTY_LIST_MAX 5


static int open_repo(git_repository **repo, const char *path, char *err, size_t errlen)
{
	int rc = git_repository_open(repo, path);

	return rc < 0 ? repo__fail(rc, err, errlen) : 0;
}

/* The commit rev resolves to (any revspec, peeled through tags). */
static int resolve_commit(git_commit **out, git_repository *repo, const char *rev, char *err,
			  size_t errlen)
{
	git_object *obj = NULL, *peeled = NULL;
	int rc;

	rc = git_revparse_single(&obj, repo, rev);
	if (rc < 0)
		return repo__fail(rc, err, errlen);
	rc = git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT);
	git_object_free(obj);
	if (rc < 0)
		return repo__fail(rc, err, errlen);
	*out = (git_commit *)peeled;
	return 0;
}

/* The commit the local branch points to. */
static int branch_commit(git_commit **out, git_repository *repo, const char *branch, char *err,
			 size_t errlen)
{
	git_reference *ref = NULL;
	git_object *obj = NULL;
	int rc = git_branch_lookup(&ref, repo, branch, GIT_BRANCH_LOCAL);

	if (rc == 0) {
		rc = git_reference_peel(&obj, ref, GIT_OBJECT_COMMIT);
		git_reference_free(ref);
	}
	if (rc < 0)
		return repo__fail(rc, err, errlen);
	*out = (git_commit *)obj;
	return 0;
}

/* Opens the repository at path into *repo and resolves the base branch
 * rev in it (resolve_commit) into *commit; the caller frees both. On
 * failure both are NULL and the result is -errno, with the reason in err
 * (errlen bytes; err may be NULL) in git's terms where git has some: a
 * missing repository or base branch, a base that is no commit; else
 * libgit2's message. */
static int open_at(git_repository **repo, git_commit **commit, const char *path,
		   const char *rev, char *err, size_t errlen)
{
	int rc = open_repo(repo, path, err, errlen);

	*commit = NULL;
	if (rc == -ENOENT && err && errlen)
		snprintf(err, errlen, "%s: not a git repository (git -C %s status says the same)", path,
			 path);
	if (rc < 0)
		return rc;
	rc = resolve_commit(commit, *repo, rev, err, errlen);
	if (rc < 0 && err && errlen) {
		git_object *obj = NULL;

		if (git_revparse_single(&obj, *repo, rev) < 0)
			snprintf(err, errlen, "base branch '%s' not found in %s (git branch -a lists those "
				 "it has)", rev, path);
		else if (rc == -ENOENT)
			snprintf(err, errlen, "base '%s' in %s names no commit (git cat-file -t %s says "
				 "what it is)", rev, path, rev);
		git_object_free(obj);
	}
	if (rc < 0) {
		git_repository_free(*repo);
		*repo = NULL;
	}
	return rc;
}

static int path_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

int repo_global_init(void)
{
	if (git_libgit2_init() < 0)
		return -EIO;
	/* The engine opens the configured repository and the worktrees it
	 * made, which belong to the run_as user when there is one (SPEC §5);
	 * libgit2's check that a repository belongs to the current user
	 * (safe.directory) would refuse them to a daemon running as root.
	 * libgit2 runs no hooks or filter programs of a repository's config. */
	return git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0) < 0 ? -EIO : 0;
}

int repo_check(const char *path, const char *base, char *err, size_t errlen)
{
	git_repository *repo = NULL;
	git_commit *commit = NULL;
	int rc = open_at(&repo, &commit, path, base, err, errlen);

	git_commit_free(commit);
	git_repository_free(repo);
	return rc;
}

/* nftw callback of remove_tree: files and (already emptied) directories. */
static int remove_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

/* rm -rf for what a failed worktree creation left behind. */
static void remove_tree(const char *path)
{
	nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * Refuses a worktree whose directory or administrative directory (admin,
 * <commondir>/worktrees/<wt_name>) already exists, before anything is made.
 */
static int refuse_existing(const char *admin, const char *wt_name, const char *worktree_path,
			   char *err, size_t errlen)
{
	if (path_exists(worktree_path)) {
		if (err && errlen > 0)
			snprintf(err, errlen, "worktree path '%s' already exists", worktree_path);
		return -EEXIST;
	}
	if (path_exists(admin)) {
		if (err && errlen > 0)
			snprintf(err, errlen, "worktree '%s' already exists", wt_name);
		return -EEXIST;
	}
	return 0;
}


/* Gives what repo_item_create made for an item to uid and gid (lchown,
 * links not followed): the worktree and everything in it, its
 * administrative directory, and the branch's loose ref and reflog with the
 * directories between them and refs/heads and logs/refs/heads, so that git
 * run as that user works in the worktree (its ownership check, its lock
 * files). 0, or a negative errno with why in err. */
static int give_item(const char *path, const char *branch, const char *wt_name,
		     const char *worktree_path, uid_t uid, gid_t gid, char *err, size_t errlen)
{
	static const char *const under[] = { "refs/heads", "logs/refs/heads" };
	git_repository *repo = NULL;
	char p[PATH_MAX], *slash;
	const char *common;
	size_t i;
	int rc = git_repository_open(&repo, path);

	if (rc < 0)
		return repo__fail(rc, err, errlen);
	common = git_repository_commondir(repo);
	rc = repo__give_tree(worktree_path, uid, gid);
	if (rc == 0) {
		snprintf(p, sizeof(p), "%s/worktrees/%s", common, wt_name);
		rc = repo__give_tree(p, uid, gid);
	}
	/* The branch's ref and reflog, and the directories under refs/heads
	 * and logs/refs/heads that hold them (packetfs/), where git as the
	 * user writes its lock files. */
	for (i = 0; rc == 0 && i < sizeof(under) / sizeof(under[0]); i++) {
		int base;

		base = snprintf(p, sizeof(p), "%s/%s/", common, under[i]);
		if ((size_t)snprintf(p + base, sizeof(p) - (size_t)base, "%s", branch) >=
		    sizeof(p) - (size_t)base) {
			rc = -ENAMETOOLONG;
			break;
		}
		for (;;) {
			if (lchown(p, uid, gid) < 0 && errno != ENOENT) {
				rc = -errno;
				break;
			}
			slash = strrchr(p + base, '/');
			if (!slash)
				break;
			*slash = '\0';
		}
	}
	git_repository_free(repo);
	if (rc && err && errlen)
		snprintf(err, errlen, "cannot give the worktree to uid %d: %s", (int)uid,
			 strerror(-rc));
	return rc;
}

int repo_item_create(const char *path, const char *base, const char *branch, const char *wt_name,
		     const char *worktree_path, uid_t owner, gid_t group, char *err, size_t errlen)
{
	git_repository *repo = NULL;
	git_commit *commit = NULL;
	git_reference *ref = NULL;
	char *admin = NULL, head[PATH_MAX];
	int rc = open_at(&repo, &commit, path, base, err, errlen);

	if (rc < 0)
		return rc;
	if (asprintf(&admin, "%s/worktrees/%s", git_repository_commondir(repo), wt_name) < 0) {
		admin = NULL;
		rc = -ENOMEM;
		goto out_commit;
	}
	rc = refuse_existing(admin, wt_name, worktree_path, err, errlen);
	if (rc < 0)
		goto out_commit;
	rc = git_branch_create(&ref, repo, branch, commit, 0);
	if (rc < 0) {
		rc = repo__fail(rc, err, errlen);
		goto out_commit;
	}
	if (snprintf(head, sizeof(head), "ref: refs/heads/%s", branch) >= (int)sizeof(head))
		rc = -ENAMETOOLONG;
	else
		rc = repo__worktree_add(admin, head, worktree_path, err, errlen);
	if (rc == 0 && owner != (uid_t)-1)
		rc = give_item(path, branch, wt_name, worktree_path, owner, group, err, errlen);
	if (rc < 0) {
		remove_tree(worktree_path);
		remove_tree(admin);
		git_branch_delete(ref);
	}
	git_reference_free(ref);
out_commit:
	free(admin);
	git_commit_free(commit);
	git_repository_free(repo);
	return rc;
}

int repo_item_remove(const char *path, const char *branch, const char *wt_name,
		     const char *worktree_path)
{
	git_repository *repo = NULL;
	git_reference *ref = NULL;
	char *admin = NULL;
	int rc = open_repo(&repo, path, NULL, 0);

	if (rc < 0)
		return rc;
	if (asprintf(&admin, "%s/worktrees/%s", git_repository_commondir(repo), wt_name) < 0) {
		git_repository_free(repo);
		return -ENOMEM;
	}
	remove_tree(worktree_path);
	remove_tree(admin);
	rc = git_branch_lookup(&ref, repo, branch, GIT_BRANCH_LOCAL);
	if (rc == 0)
		rc = git_branch_delete(ref);
	rc = rc < 0 && rc != GIT_ENOTFOUND ? repo__fail(rc, NULL, 0) : 0;
	if (rc == 0 && (path_exists(worktree_path) || path_exists(admin)))
		rc = -EIO;
	git_reference_free(ref);
	free(admin);
	git_repository_free(repo);
	return rc;
}

/* Repositories kept open for repo_branch_head, repo_resolve and
 * repo_worktree_dirty (see the top): up to KEPT_MAX per thread (the
 * configured repository and the worktrees of the items whose recipes it
 * starts), the least recently used closed first, all freed when the thread
 * exits. */
#define KEPT_MAX 8

struct kept_repos {
	struct {
		char *path;
		git_repository *repo;
		uint64_t used; /* clock at the last use; 0: empty */
	} e[KEPT_MAX];
	uint64_t clock;
};

static pthread_key_t kept_key;
static pthread_once_t kept_once = PTHREAD_ONCE_INIT;
static int kept_key_ok;

static void kept_drop(struct kept_repos *k, int i)
{
	git_repository_free(k->e[i].repo);
	free(k->e[i].path);
	k->e[i].repo = NULL;
	k->e[i].path = NULL;
	k->e[i].used = 0;
}

static void kept_free(void *arg)
{
	struct kept_repos *k = arg;
	int i;

	for (i = 0; i < KEPT_MAX; i++)
		kept_drop(k, i);
	free(k);
}

static void kept_key_init(void)
{
	kept_key_ok = pthread_key_create(&kept_key, kept_free) == 0;
}

/* The calling thread's repository kept open at path (opened now when it
 * has none there, in place of its least recently used one), or NULL when
 * none can be kept: then the caller opens its own for the call. */
static git_repository *kept_repo(const char *path)
{
	struct kept_repos *k;
	int i, lru = 0;

	pthread_once(&kept_once, kept_key_init);
	if (!kept_key_ok || !path)
		return NULL;
	k = pthread_getspecific(kept_key);
	if (!k) {
		k = calloc(1, sizeof(*k));
		if (!k || pthread_setspecific(kept_key, k) != 0) {
			free(k);
			return NULL;
		}
	}
	for (i = 0; i < KEPT_MAX; i++) {
		if (k->e[i].used && strcmp(k->e[i].path, path) == 0) {
			k->e[i].used = ++k->clock;
			return k->e[i].repo;
		}
		if (k->e[i].used < k->e[lru].used)
			lru = i;
	}
	kept_drop(k, lru);
	k->e[lru].path = strdup(path);
	if (!k->e[lru].path || git_repository_open(&k->e[lru].repo, path) < 0) {
		kept_drop(k, lru);
		return NULL;
	}
	k->e[lru].used = ++k->clock;
	return k->e[lru].repo;
}

/* Closes the calling thread's repository kept open at path, if any: one
 * that failed may hold what is no longer so (a worktree made again). */
static void kept_forget(const char *path)
{
	struct kept_repos *k = kept_key_ok ? pthread_getspecific(kept_key) : NULL;
	int i;

	for (i = 0; k && i < KEPT_MAX; i++)
		if (k->e[i].used && strcmp(k->e[i].path, path) == 0)
			kept_drop(k, i);
}

/* Looks a name up to a commit in repo: branch_commit or resolve_commit. */
typedef int (*commit_lookup)(git_commit **out, git_repository *repo, const char *name,
			     char *err, size_t errlen);

/* The hex id of the commit lookup finds for name in the repository at path,
 * into out (40 hex digits and a NUL), through this thread's kept handle when
 * it is that repository's. Returns 0 or the negative errno of the lookup. */
static int commit_hex(const char *path, commit_lookup lookup, const char *name, char out[41])
{
	git_repository *kept = kept_repo(path), *repo = kept;
	git_commit *commit = NULL;
	int rc = repo ? 0 : open_repo(&repo, path, NULL, 0);

	if (rc == 0) {
		rc = lookup(&commit, repo, name, NULL, 0);
		if (rc == 0)
			git_oid_tostr(out, 41, git_commit_id(commit));
		git_commit_free(commit);
		if (repo != kept)
			git_repository_free(repo);
	}
	return rc;
}

int repo_branch_head(const char *path, const char *branch, char out[41])
{
	return commit_hex(path, branch_commit, branch, out);
}

int repo_common_dir(const char *path, char *out, size_t size)
{
	git_repository *repo = NULL;
	const char *dir;
	size_t n;
	int rc = open_repo(&repo, path, NULL, 0);

	if (rc)
		return rc;
	dir = git_repository_commondir(repo);
	n = dir ? strlen(dir) : 0;
	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (!dir || n == 0)
		rc = -ENOENT;
	else if (n >= size)
		rc = -ENAMETOOLONG;
	else
		snprintf(out, size, "%.*s", (int)n, dir);
	git_repository_free(repo);
	return rc;
}

int repo_resolve(const char *path, const char *rev, char out[41])
{
	return commit_hex(path, resolve_commit, rev, out);
}

int repo_rev_is_ref(const char *path, const char *rev)
{
	git_repository *kept = kept_repo(path), *repo = kept;
	git_reference *ref = NULL;
	char first[PATH_MAX];
	const char *name, *slash;
	struct stat st;
	int yes = 0;

	if (!repo && git_repository_open(&repo, path) < 0)
		return 0;
	if (git_reference_dwim(&ref, repo, rev) == 0) {
		/* The ref found: one under refs/, or a file of the git
		 * directory itself (HEAD, ORIG_HEAD). */
		name = git_reference_name(ref);
		yes = strncmp(name, "refs/", 5) == 0 || strchr(name, '/') == NULL;
		/* git's first rule reads <gitdir>/<rev>: a name whose first
		 * component names a directory there (worktrees/x/HEAD) may come to
		 * be found below it, where no event would say so. */
		slash = strchr(rev, '/');
		if (yes && slash && strncmp(rev, "refs/", 5) != 0 &&
		    snprintf(first, sizeof(first), "%s%.*s", git_repository_path(repo),
			     (int)(slash - rev), rev) < (int)sizeof(first) &&
		    lstat(first, &st) == 0)
			yes = 0;
	}
	git_reference_free(ref);
	if (repo != kept)
		git_repository_free(repo);
	return yes;
}

/* Whether the worktree repository wt has refname (refs/heads/...) checked
 * out: its HEAD is that symbolic ref. */
static int checked_out(git_repository *wt, const char *refname)
{
	git_reference *head = NULL;
	int yes;

	if (git_reference_lookup(&head, wt, "HEAD") < 0)
		return 0;
	yes = git_reference_type(head) == GIT_REFERENCE_SYMBOLIC &&
	      strcmp(git_reference_symbolic_target(head), refname) == 0;
	git_reference_free(head);
	return yes;
}

int repo_rewind(const char *path, const char *branch, const char *to, const char *wt_name,
		const char *worktree_path, const char *save_ref, uid_t owner, gid_t group,
		char from[41], char *err, size_t errlen)
{
	git_repository *repo = NULL, *wt = NULL;
	git_reference *br = NULL, *saved = NULL, *moved = NULL;
	git_object *target = NULL;
	git_checkout_options co;
	char refname[PATH_MAX];
	const git_oid *now;
	git_oid to_oid;
	int rc;

	from[0] = '\0';
	if ((size_t)snprintf(refname, sizeof(refname), "refs/heads/%s", branch) >= sizeof(refname))
		return -ENAMETOOLONG;
	rc = git_repository_open(&repo, path);
	if (rc == 0)
		rc = git_reference_lookup(&br, repo, refname);
	if (rc == 0)
		rc = git_oid_fromstrn(&to_oid, to, strlen(to)) < 0 || strlen(to) != 40 ? GIT_ENOTFOUND : 0;
	if (rc == 0)
		rc = git_object_lookup(&target, repo, &to_oid, GIT_OBJECT_COMMIT);
	now = rc == 0 ? git_reference_target(br) : NULL;
	if (rc == 0 && !now)
		rc = GIT_ENOTFOUND; /* a symbolic branch ref is none of ours */
	if (rc < 0 || git_oid_equal(now, &to_oid))
		goto out;
	git_oid_tostr(from, 41, now);
	/* Kept first: the commits are never unreachable, not even for a moment. */
	rc = git_reference_create(&saved, repo, save_ref, now, 0, "packetfs: an interrupted run's head");
	/* Compare-and-swap against the head read above. */
	if (rc == 0)
		rc = git_reference_set_target(&moved, br, &to_oid,
					      "packetfs: back to the head the interrupted run started from");
	if (rc == 0 && worktree_path && git_repository_open(&wt, worktree_path) == 0 &&
	    checked_out(wt, refname)) {
		git_object *t = NULL;

		rc = git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
		if (rc == 0) {
			co.checkout_strategy = GIT_CHECKOUT_FORCE;
			rc = git_object_lookup(&t, wt, &to_oid, GIT_OBJECT_COMMIT);
		}
		if (rc == 0)
			rc = git_reset(wt, t, GIT_RESET_HARD, &co);
		git_object_free(t);
	}
	if (rc == 0)
		rc = 1;
out:
	/* libgit2's codes become errno values here; give_item's are already. */
	if (rc < 0)
		rc = repo__fail(rc, err, errlen);
	/* What git rewrote as this process is the run_as user's again. */
	if (rc == 1 && owner != (uid_t)-1 && worktree_path)
		rc = give_item(path, branch, wt_name, worktree_path, owner, group, err, errlen);
	rc = rc == 0 && from[0] ? 1 : rc;
	git_repository_free(wt);
	git_reference_free(moved);
	git_reference_free(saved);
	git_object_free(target);
	git_reference_free(br);
	git_repository_free(repo);
	return rc;
}

int repo_diff(const char *path, const char *base, const char *branch, struct buf *out)
{
	git_diff_options opts;
	git_repository *repo = NULL;
	git_commit *base_c = NULL, *head_c = NULL, *mb_c = NULL;
	git_tree *old_tree = NULL, *new_tree = NULL;
	git_diff *diff = NULL;
	git_buf patch = GIT_BUF_INIT;
	git_oid mb;
	int rc;

	rc = open_at(&repo, &base_c, path, base, NULL, 0);
	if (rc < 0)
		return rc;
	rc = branch_commit(&head_c, repo, branch, NULL, 0);
	if (rc < 0)
		goto out_base;
	rc = git_merge_base(&mb, repo, git_commit_id(base_c), git_commit_id(head_c));
	if (rc < 0) {
		rc = repo__fail(rc, NULL, 0);
		goto out_head;
	}
	rc = git_commit_lookup(&mb_c, repo, &mb);
	if (rc < 0) {
		rc = repo__fail(rc, NULL, 0);
		goto out_head;
	}
	rc = git_commit_tree(&old_tree, mb_c);
	if (rc < 0) {
		rc = repo__fail(rc, NULL, 0);
		goto out_mb;
	}
	rc = git_commit_tree(&new_tree, head_c);
	if (rc < 0) {
		rc = repo__fail(rc, NULL, 0);
		goto out_old;
	}
	/* a/ b/ whatever diff.noprefix and friends say: git apply's default -p1
	 * must accept change.diff. */
	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	opts.flags = GIT_DIFF_SHOW_BINARY;
	opts.id_abbrev = GIT_OID_HEXSZ;
	opts.old_prefix = "a/";
	opts.new_prefix = "b/";
	rc = git_diff_tree_to_tree(&diff, repo, old_tree, new_tree, &opts);
	if (rc < 0) {
		rc = repo__fail(rc, NULL, 0);
		goto out_new;
	}
	rc = git_diff_to_buf(&patch, diff, GIT_DIFF_FORMAT_PATCH);
	if (rc < 0) {
		rc = repo__fail(rc, NULL, 0);
		goto out_diff;
	}
	if (patch.size > 0)
		rc = buf_append(out, patch.ptr, patch.size);
	git_buf_dispose(&patch);
out_diff:
	git_diff_free(diff);
out_new:
	git_tree_free(new_tree);
out_old:
	git_tree_free(old_tree);
out_mb:
	git_commit_free(mb_c);
out_head:
	git_commit_free(head_c);
out_base:
	git_commit_free(base_c);
	git_repository_free(repo);
	return rc;
}

/* Whether a status entry is an uncommitted change (ignored files are not). */
static int is_dirty(const git_status_entry *e)
{
	return e->status != GIT_STATUS_CURRENT && !(e->status & GIT_STATUS_IGNORED);
}

/* The path a status entry is about (the new side when there is one). */
static const char *status_path(const git_status_entry *e)
{
	const git_diff_delta *d = e->index_to_workdir ? e->index_to_workdir : e->head_to_index;

	return d->new_file.path ? d->new_file.path : d->old_file.path;
}

/* The status list of the worktree at path (untracked files included,
 * ignored ones not), through this thread's repository kept open there; a
 * kept one that fails is closed and the worktree opened afresh, once. 0 or
 * a negative errno. *repo is the repository to free after the list (NULL
 * for the kept one). */
static int worktree_status(const char *path, git_status_list **list, git_repository **repo)
{
	git_status_options opts;
	git_repository *r = kept_repo(path);
	int rc;

	*repo = NULL;
	git_status_options_init(&opts, GIT_STATUS_OPTIONS_VERSION);
	opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	opts.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED;
	if (r && git_status_list_new(list, r, &opts) == 0)
		return 0;
	if (r)
		kept_forget(path);
	rc = open_repo(repo, path, NULL, 0);
	if (rc < 0)
		return rc;
	rc = git_status_list_new(list, *repo, &opts);
	if (rc < 0) {
		rc = repo__fail(rc, NULL, 0);
		git_repository_free(*repo);
		*repo = NULL;
	}
	return rc;
}

int repo_worktree_dirty(const char *worktree_path, struct buf *summary)
{
	git_repository *repo = NULL;
	git_status_list *list = NULL;
	size_t i, n, dirty = 0, listed = 0;
	int rc;

	rc = worktree_status(worktree_path, &list, &repo);
	if (rc < 0)
		return rc;
	n = git_status_list_entrycount(list);
	for (i = 0; i < n; i++)
		dirty += is_dirty(git_status_byindex(list, i));
	rc = dirty > 0;
	if (!dirty || !summary)
		goto out_list;
	if (buf_printf(summary, "%zu uncommitted:", dirty) < 0)
		goto nomem;
	for (i = 0; i < n && listed < DIRTY_LIST_MAX; i++) {
		const git_status_entry *e = git_status_byindex(list, i);

		if (!is_dirty(e))
			continue;
		if (buf_printf(summary, "%s %s", listed ? "," : "", status_path(e)) < 0)
			goto nomem;
		listed++;
	}
	if (dirty > listed && buf_printf(summary, " and %zu more", dirty - listed) < 0)
		goto nomem;
	goto out_list;
nomem:
	rc = -ENOMEM;
out_list:
	git_status_list_free(list);
	git_repository_free(repo);
	return rc;
}
