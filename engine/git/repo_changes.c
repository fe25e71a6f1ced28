/*
 * repo_changes.c - the paths a change touched (repo_changes.h): a tree
 * diff of merge-base(base, head) and head through libgit2, with git's
 * rename detection. Only trees are compared, and blobs are read only for
 * the added and deleted files rename detection pairs, so a change of a
 * thousand edited files costs a walk of the two trees.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "repo_changes.h"
#include "repo_int.h"

void repo_changes_free(struct repo_change *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].path);
		free(v[i].old_path);
	}
	free(v);
}

/* The trees of merge-base(base, head) and of head. */
static int trees(git_repository *repo, const char *base, const char *head, git_tree **old_tree,
		 git_tree **new_tree)
{
	git_object *b = NULL, *bc = NULL;
	git_commit *h = NULL, *mb = NULL;
	git_oid hid, mid;
	int rc;

	if (strlen(head) != GIT_OID_HEXSZ || git_oid_fromstr(&hid, head) < 0)
		return -ENOENT;
	rc = git_commit_lookup(&h, repo, &hid);
	if (rc == 0)
		rc = git_revparse_single(&b, repo, base);
	if (rc == 0)
		rc = git_object_peel(&bc, b, GIT_OBJECT_COMMIT);
	if (rc == 0)
		rc = git_merge_base(&mid, repo, git_object_id(bc), &hid);
	if (rc == 0)
		rc = git_commit_lookup(&mb, repo, &mid);
	if (rc == 0)
		rc = git_commit_tree(old_tree, mb);
	if (rc == 0)
		rc = git_commit_tree(new_tree, h);
	rc = rc < 0 ? repo__fail(rc, NULL, 0) : 0;
	git_commit_free(mb);
	git_object_free(bc);
	git_object_free(b);
	git_commit_free(h);
	return rc;
}

static char *dup_path(const char *s, int *rc)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		*rc = -ENOMEM;
	return d;
}

int repo_changes(const char *path, const char *base, const char *head, struct repo_change **v,
		 size_t *n)
{
	git_repository *repo = NULL;
	git_tree *old_tree = NULL, *new_tree = NULL;
	git_diff *diff = NULL;
	git_diff_find_options find;
	struct repo_change *out = NULL;
	size_t i, count = 0;
	int rc;

	*v = NULL;
	*n = 0;
	rc = git_repository_open(&repo, path);
	if (rc < 0)
		return repo__fail(rc, NULL, 0);
	rc = trees(repo, base, head, &old_tree, &new_tree);
	if (rc == 0 && (rc = git_diff_tree_to_tree(&diff, repo, old_tree, new_tree, NULL)) < 0)
		rc = repo__fail(rc, NULL, 0);
	git_diff_find_options_init(&find, GIT_DIFF_FIND_OPTIONS_VERSION);
	find.flags = GIT_DIFF_FIND_RENAMES;
	if (rc == 0 && (rc = git_diff_find_similar(diff, &find)) < 0)
		rc = repo__fail(rc, NULL, 0);
	if (rc == 0) {
		count = git_diff_num_deltas(diff);
		out = calloc(count ? count : 1, sizeof(*out));
		if (!out)
			rc = -ENOMEM;
	}
	for (i = 0; rc == 0 && i < count; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);

		switch (d->status) {
		case GIT_DELTA_ADDED:
			out[i].status = 'A';
			break;
		case GIT_DELTA_DELETED:
			out[i].status = 'D';
			break;
		case GIT_DELTA_RENAMED:
			out[i].status = 'R';
			out[i].old_path = dup_path(d->old_file.path, &rc);
			break;
		default:
			out[i].status = 'M';
			break;
		}
		out[i].path = dup_path(d->status == GIT_DELTA_DELETED ? d->old_file.path
								      : d->new_file.path, &rc);
	}
	if (rc == 0) {
		*v = out;
		*n = count;
	} else {
		repo_changes_free(out, count);
	}
	git_diff_free(diff);
	git_tree_free(new_tree);
	git_tree_free(old_tree);
	git_repository_free(repo);
	return rc;
}
