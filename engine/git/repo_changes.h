/*
 * repo_changes.h - the paths a change touched: merge-base(base, head) ..
 * head, as change.diff holds them, with renames paired (SPEC §6 "Scope"
 * reads them). Any thread, once repo_global_init ran.
 */
#ifndef PACKETFS_REPO_CHANGES_H
#define PACKETFS_REPO_CHANGES_H

#include <stddef.h>

/* One path of the change. */
struct repo_change {
	char status;    /* 'A' added, 'D' deleted, 'M' modified (or type changed), 'R' renamed */
	char *path;     /* the path at head ('D': the path that went) */
	char *old_path; /* 'R': the path before, else NULL */
};

/*
 * The files that commit head (40 hex digits) of the repository at path
 * changes against merge-base(base, head), base any revspec: 0 and *v[*n]
 * in git's path order (renames found as `git diff -M` finds them), to free
 * with repo_changes_free; -ENOENT when the repository, base or head is
 * not there or they share no history, -EIO or -ENOMEM.
 */
int repo_changes(const char *path, const char *base, const char *head, struct repo_change **v,
		 size_t *n);

void repo_changes_free(struct repo_change *v, size_t n);

#endif
